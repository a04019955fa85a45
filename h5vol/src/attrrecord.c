/* Attributes of enum and compound types: their entries in `_libzarr_hdf5.attribute_types` and their JSON
 * values (docs/hdf5-netcdf.md, "The reserved attribute"). A type name (int8 ... float64, bool) stays a
 * string; an enum is recorded as {"enum": {"base": "<integer type>", "members": {"<name>": value, ...}}}
 * (the record of enum datasets) and its values are the base integers; a compound as
 * {"compound": [["<field>", <field type>], ...]} in field order, a field type being a type name or such a
 * record, and each value a JSON object {"<field>": value, ...}. In memory such a type is the packed,
 * native-order type the record describes; HDF5 converts between it and the application's type
 * (compound fields by name, enum values by member name). */
#define _POSIX_C_SOURCE 200809L
#include "zvol.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first reason of a failure, pushed onto HDF5's error stack only by zh5_record_flush: every HDF5 call
   made after a push (closing the types built on the way) clears the stack again. */
static _Thread_local char deferred[1024];

static void fail(const char *fmt, ...)
{
    if (deferred[0])
        return;   /* the innermost reason counts */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(deferred, sizeof deferred, fmt, ap);
    va_end(ap);
}

void zh5_record_flush(int failed)
{
    if (failed && deferred[0])
        zh5_err(H5E_ATTR, H5E_BADVALUE, "%s", deferred);
    deferred[0] = '\0';
}

int zh5_is_struct_type(hid_t type)
{
    H5T_class_t cls = H5Tget_class(type);
    return cls == H5T_COMPOUND || (cls == H5T_ENUM && !zh5_is_h5py_bool(type));
}

/* The record of a field or element type: a name (numbers, bool) or an enum/compound record. */
static zj *field_record(hid_t type, const char *where)
{
    H5T_class_t cls = H5Tget_class(type);
    zarr_data_type zt;
    int big;
    if (cls == H5T_INTEGER || cls == H5T_FLOAT || (cls == H5T_ENUM && zh5_is_h5py_bool(type))) {
        const char *name = zh5_attr_type_name(type);
        if (!name || zh5_type_to_zarr(type, &zt, &big) < 0) {
            fail("%s: the number type (%zu bytes) has no recorded name", where,
                    H5Tget_size(type));
            return NULL;
        }
        return zj_new_string(name, strlen(name));
    }
    if (zh5_is_struct_type(type))
        return zh5_struct_record(type, where);
    static const char *const classes[] = {"H5T_INTEGER", "H5T_FLOAT", "H5T_TIME", "H5T_STRING", "H5T_BITFIELD",
                                          "H5T_OPAQUE", "H5T_COMPOUND", "H5T_REFERENCE", "H5T_ENUM", "H5T_VLEN",
                                          "H5T_ARRAY"};
    fail("%s: of HDF5 type class %s, which a compound attribute cannot hold (numbers, booleans, enums and "
         "compounds of them it can)", where, cls >= 0 && cls <= H5T_ARRAY ? classes[cls] : "unknown");
    return NULL;
}

zj *zh5_struct_record(hid_t type, const char *where)
{
    zj *rec = zj_new(ZJ_OBJECT), *body = NULL;
    if (!rec)
        return NULL;
    if (H5Tget_class(type) == H5T_ENUM) {
        hid_t base = H5Tget_super(type);
        zarr_data_type zt;
        int big, ok = base >= 0 && zh5_type_to_zarr(base, &zt, &big) == 0;
        if (base >= 0)
            H5Tclose(base);
        if (!ok) {
            fail("%s: the enum's base type has no Zarr equivalent", where);
            zj_free(rec);
            return NULL;
        }
        body = zh5_enum_record(type);
        if (!body || zj_set(rec, "enum", body) < 0) {
            zj_free(body);
            zj_free(rec);
            return NULL;
        }
        return rec;
    }
    int n = H5Tget_nmembers(type);
    if (n <= 0 || !(body = zj_new(ZJ_ARRAY)) || zj_set(rec, "compound", body) < 0) {
        if (n <= 0)
            fail("%s: a compound without fields", where);
        zj_free(rec);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        char *name = H5Tget_member_name(type, (unsigned)i), sub[600];
        hid_t mt = H5Tget_member_type(type, (unsigned)i);
        snprintf(sub, sizeof sub, "%s, field \"%s\"", where, name ? name : "?");
        zj *pair = zj_new(ZJ_ARRAY), *fname = name ? zj_new_string(name, strlen(name)) : NULL;
        zj *ftype = mt >= 0 && fname ? field_record(mt, sub) : NULL;
        int ok = pair && fname && ftype && zj_push(pair, fname) == 0;
        if (ok)
            fname = NULL;
        ok = ok && zj_push(pair, ftype) == 0;
        if (ok)
            ftype = NULL;
        ok = ok && zj_push(body, pair) == 0;
        if (ok)
            pair = NULL;
        zj_free(pair);
        zj_free(fname);
        zj_free(ftype);
        if (name)
            H5free_memory(name);
        if (mt >= 0)
            H5Tclose(mt);
        if (!ok) {
            zj_free(rec);
            return NULL;
        }
    }
    return rec;
}

hid_t zh5_record_native_type(const zj *rec, const char *where)
{
    zarr_data_type zt;
    size_t size;
    if (rec && rec->kind == ZJ_STRING) {
        if (strcmp(rec->text, "bool") == 0)
            return zh5_type_native(ZARR_BOOL, 1);
        if (zh5_attr_numeric_type(rec->text, &zt, &size))
            return zh5_type_native(zt, size);
        fail("%s: \"%s\" is not a type a compound field or enum base can have", where,
                rec->text);
        return H5I_INVALID_HID;
    }
    const zj *en = rec && rec->kind == ZJ_OBJECT ? zj_get(rec, "enum") : NULL;
    const zj *fields = rec && rec->kind == ZJ_OBJECT ? zj_get(rec, "compound") : NULL;
    if (en && en->kind == ZJ_OBJECT) {
        const zj *base = zj_get(en, "base"), *members = zj_get(en, "members");
        if (!base || base->kind != ZJ_STRING || !zh5_attr_numeric_type(base->text, &zt, &size) ||
            zt == ZARR_FLOAT16 || zt == ZARR_FLOAT32 || zt == ZARR_FLOAT64 || !members || members->kind != ZJ_OBJECT ||
            members->count == 0) {
            fail("%s: the enum record needs an integer \"base\" and \"members\"", where);
            return H5I_INVALID_HID;
        }
        hid_t b = zh5_type_native(zt, size);
        hid_t t = b >= 0 ? zh5_enum_from_members(members, b, where) : H5I_INVALID_HID;
        if (b >= 0)
            H5Tclose(b);
        return t;
    }
    if (!fields || fields->kind != ZJ_ARRAY || fields->count == 0) {
        fail("%s: the recorded type is neither a type name, an enum nor a compound record",
                where);
        return H5I_INVALID_HID;
    }
    hid_t *types = calloc(fields->count, sizeof *types);
    size_t total = 0;
    hid_t out = H5I_INVALID_HID;
    if (!types)
        return H5I_INVALID_HID;
    size_t k = 0;
    for (; k < fields->count; k++) {
        const zj *f = fields->items[k];
        if (f->kind != ZJ_ARRAY || f->count != 2 || f->items[0]->kind != ZJ_STRING) {
            fail("%s: compound field %zu is not [name, type]", where, k);
            break;
        }
        char sub[600];
        snprintf(sub, sizeof sub, "%s, field \"%s\"", where, f->items[0]->text);
        if ((types[k] = zh5_record_native_type(f->items[1], sub)) < 0)
            break;
        total += H5Tget_size(types[k]);
    }
    if (k == fields->count && (out = H5Tcreate(H5T_COMPOUND, total)) >= 0) {
        size_t off = 0;
        for (size_t i = 0; i < fields->count && out >= 0; i++) {
            if (H5Tinsert(out, fields->items[i]->items[0]->text, off, types[i]) < 0) {
                fail("%s: the compound field \"%s\" cannot be added (a repeated name?)",
                        where, fields->items[i]->items[0]->text);
                H5Tclose(out);
                out = H5I_INVALID_HID;
            } else {
                off += H5Tget_size(types[i]);
            }
        }
    }
    for (size_t i = 0; i < k && i < fields->count; i++)
        if (types[i] > 0)
            H5Tclose(types[i]);
    free(types);
    return out;
}

/* A number of the native integer or float type `t` at elem as JSON text. */
static zj *number_json(hid_t t, const unsigned char *elem)
{
    unsigned char tmp[16] = {0};
    char text[64];
    size_t size = H5Tget_size(t);
    memcpy(tmp, elem, size);
    if (H5Tget_class(t) == H5T_FLOAT) {
        hid_t d = H5Tcopy(H5T_NATIVE_DOUBLE);
        double v;
        herr_t st = zh5_convert(t, d, 1, tmp);
        H5Tclose(d);
        if (st < 0)
            return NULL;
        memcpy(&v, tmp, sizeof v);
        if (isnan(v))
            return zj_new_number_text("NaN");
        if (isinf(v))
            return zj_new_number_text(v > 0 ? "Infinity" : "-Infinity");
        for (int p = size < 8 ? 1 : 15; p <= 17; p++) {   /* the shortest decimal that reads back */
            snprintf(text, sizeof text, "%.*g", p, v);
            if (size < 8 ? strtof(text, NULL) == (float)v : strtod(text, NULL) == v)
                break;
        }
        if (!strpbrk(text, ".eEn"))
            strcat(text, ".0");
        return zj_new_number_text(text);
    }
    int is_signed = H5Tget_sign(t) == H5T_SGN_2;
    hid_t wide = zh5_type_native(is_signed ? ZARR_INT64 : ZARR_UINT64, 8);
    herr_t st = wide >= 0 ? zh5_convert(t, wide, 1, tmp) : -1;
    if (wide >= 0)
        H5Tclose(wide);
    if (st < 0)
        return NULL;
    if (is_signed) {
        int64_t v;
        memcpy(&v, tmp, 8);
        snprintf(text, sizeof text, "%lld", (long long)v);
    } else {
        uint64_t v;
        memcpy(&v, tmp, 8);
        snprintf(text, sizeof text, "%llu", (unsigned long long)v);
    }
    return zj_new_number_text(text);
}

/* One element of the native type t (described by rec) at elem as JSON. */
static zj *encode(const zj *rec, hid_t t, const unsigned char *elem)
{
    H5T_class_t cls = H5Tget_class(t);
    if (cls == H5T_ENUM && rec->kind == ZJ_STRING)   /* bool */
        return zj_new_bool(elem[0] != 0);
    if (cls == H5T_ENUM) {
        hid_t base = H5Tget_super(t);
        zj *v = base >= 0 ? number_json(base, elem) : NULL;
        if (base >= 0)
            H5Tclose(base);
        return v;
    }
    if (cls != H5T_COMPOUND)
        return number_json(t, elem);
    const zj *fields = zj_get(rec, "compound");
    zj *obj = zj_new(ZJ_OBJECT);
    for (unsigned i = 0; obj && i < fields->count; i++) {
        hid_t mt = H5Tget_member_type(t, i);
        zj *v = mt >= 0 ? encode(fields->items[i]->items[1], mt, elem + H5Tget_member_offset(t, i)) : NULL;
        if (mt >= 0)
            H5Tclose(mt);
        if (!v || zj_set(obj, fields->items[i]->items[0]->text, v) < 0) {
            zj_free(v);
            zj_free(obj);
            obj = NULL;
        }
    }
    return obj;
}

/* A JSON number into the native integer or float type t at elem; <0 (error pushed) when it does not fit. */
static herr_t number_from_json(hid_t t, const zj *v, unsigned char *elem, const char *where)
{
    unsigned char tmp[16] = {0};
    hid_t src;
    if (v->kind != ZJ_NUMBER || (H5Tget_class(t) != H5T_FLOAT && !zj_is_integer(v))) {
        fail("%s: expected %s, found JSON of kind %d", where,
                H5Tget_class(t) == H5T_FLOAT ? "a number" : "an integer", (int)v->kind);
        return -1;
    }
    if (H5Tget_class(t) == H5T_FLOAT) {
        double d = zj_number(v);
        memcpy(tmp, &d, sizeof d);
        src = H5Tcopy(H5T_NATIVE_DOUBLE);
    } else if (v->text[0] == '-') {
        int64_t x = strtoll(v->text, NULL, 10);
        memcpy(tmp, &x, 8);
        src = zh5_type_native(ZARR_INT64, 8);
    } else {
        uint64_t x = strtoull(v->text, NULL, 10);
        memcpy(tmp, &x, 8);
        src = zh5_type_native(ZARR_UINT64, 8);
    }
    herr_t st = src >= 0 ? zh5_convert(src, t, 1, tmp) : -1;
    if (src >= 0)
        H5Tclose(src);
    if (st >= 0)
        memcpy(elem, tmp, H5Tget_size(t));
    return st;
}

static herr_t decode(const zj *rec, hid_t t, const zj *v, unsigned char *elem, const char *where)
{
    H5T_class_t cls = H5Tget_class(t);
    if (cls == H5T_ENUM && rec->kind == ZJ_STRING) {   /* bool */
        if (v->kind != ZJ_BOOL && v->kind != ZJ_NUMBER) {
            fail("%s: expected true or false", where);
            return -1;
        }
        elem[0] = (unsigned char)(v->kind == ZJ_BOOL ? v->boolean != 0 : zj_number(v) != 0);
        return 0;
    }
    if (cls == H5T_ENUM) {
        hid_t base = H5Tget_super(t);
        herr_t st = base >= 0 ? number_from_json(base, v, elem, where) : -1;
        if (base >= 0)
            H5Tclose(base);
        return st;
    }
    if (cls != H5T_COMPOUND)
        return number_from_json(t, v, elem, where);
    const zj *fields = zj_get(rec, "compound");
    if (v->kind != ZJ_OBJECT) {
        fail("%s: a compound value must be a JSON object", where);
        return -1;
    }
    for (unsigned i = 0; i < fields->count; i++) {
        const char *name = fields->items[i]->items[0]->text;
        const zj *fv = zj_get(v, name);
        char sub[600];
        snprintf(sub, sizeof sub, "%s, field \"%s\"", where, name);
        if (!fv) {
            fail("%s: missing", sub);
            return -1;
        }
        hid_t mt = H5Tget_member_type(t, i);
        herr_t st = mt >= 0 ? decode(fields->items[i]->items[1], mt, fv, elem + H5Tget_member_offset(t, i), sub) : -1;
        if (mt >= 0)
            H5Tclose(mt);
        if (st < 0)
            return -1;
    }
    return 0;
}

int zh5_record_shape(const zj *value, int *rank, hsize_t *dims)
{
    *rank = 0;
    for (const zj *cur = value; cur->kind == ZJ_ARRAY; cur = cur->items[0]) {
        if (*rank >= ZH5_MAX_RANK)
            return -1;
        dims[(*rank)++] = cur->count;
        if (cur->count == 0)
            break;
    }
    size_t total = 1;
    for (int d = 0; d < *rank; d++)
        total *= dims[d];
    for (size_t i = 0; i < total; i++) {   /* rectangular, every leaf at the same depth and no array */
        const zj *e = value;
        size_t rem = i, stride = total;
        for (int d = 0; d < *rank; d++) {
            stride /= dims[d];
            if (e->kind != ZJ_ARRAY || e->count != dims[d])
                return -1;
            e = e->items[rem / stride];
            rem %= stride;
        }
        if (e->kind == ZJ_ARRAY)
            return -1;
    }
    return 0;
}

static zj *nest_level(const zj *rec, hid_t t, const hsize_t *dims, int rank, int d, const unsigned char *buf,
                      size_t *i)
{
    if (d == rank) {
        const unsigned char *elem = buf + (*i)++ * H5Tget_size(t);
        return encode(rec, t, elem);
    }
    zj *a = zj_new(ZJ_ARRAY);
    for (hsize_t k = 0; a && k < dims[d]; k++) {
        zj *item = nest_level(rec, t, dims, rank, d + 1, buf, i);
        if (!item || zj_push(a, item) < 0) {
            zj_free(item);
            zj_free(a);
            a = NULL;
        }
    }
    return a;
}

zj *zh5_record_nest(const zj *rec, hid_t native, hid_t space, const unsigned char *buf)
{
    hsize_t dims[ZH5_MAX_RANK];
    int rank = H5Sget_simple_extent_ndims(space);
    size_t i = 0;
    if (rank < 0 || rank > ZH5_MAX_RANK)
        return NULL;
    H5Sget_simple_extent_dims(space, dims, NULL);
    return nest_level(rec, native, dims, rank, 0, buf, &i);
}

herr_t zh5_record_unnest(const zj *rec, hid_t native, const zj *value, int rank, const hsize_t *dims,
                         unsigned char *buf, const char *where)
{
    size_t total = 1, esize = H5Tget_size(native);
    for (int d = 0; d < rank; d++)
        total *= dims[d];
    for (size_t i = 0; i < total; i++) {
        const zj *e = value;
        size_t rem = i, stride = total;
        for (int d = 0; d < rank; d++) {
            stride /= dims[d];
            e = e->items[rem / stride];
            rem %= stride;
        }
        char sub[600];
        snprintf(sub, sizeof sub, "%s, element %zu", where, i);
        if (decode(rec, native, e, buf + i * esize, sub) < 0)
            return -1;
    }
    return 0;
}
