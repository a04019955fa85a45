/* The HDF5 types of attributes, kept as the project's tools keep them: the reserved attribute
 * `_libzarr_hdf5` of a node holds `attribute_types`, {"<attribute>": "<type>"} with a Zarr v3 data type
 * name (int8 ... uint64, float16/32/64, bool), "string" (variable-length) or "char" (fixed-length
 * string), or for enums and compounds a record object (attrrecord.c); see docs/hdf5-netcdf.md. h5tozarr writes it, zarrtoh5 and the connector read it back, so
 * an int16 attribute stays int16 whichever way it travels. The record is stored as a string holding its
 * JSON text (older stores: the object itself, read as well); in memory it is the object
 * (zh5_record_load / zh5_record_dump). The reserved attribute itself is not an
 * HDF5 attribute. A numeric attribute whose value is text (xarray's base64 `_FillValue`, Zarr v3's
 * "NaN" / "0x..." forms) reads as the number it encodes (zh5_attr_decode_numbers). */
#define _POSIX_C_SOURCE 200809L
#include "zvol.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    zarr_data_type type;
    size_t size;
} numeric[] = {
    {"int8", ZARR_INT8, 1},       {"int16", ZARR_INT16, 2},     {"int32", ZARR_INT32, 4},
    {"int64", ZARR_INT64, 8},     {"uint8", ZARR_UINT8, 1},     {"uint16", ZARR_UINT16, 2},
    {"uint32", ZARR_UINT32, 4},   {"uint64", ZARR_UINT64, 8},   {"float16", ZARR_FLOAT16, 2},
    {"float32", ZARR_FLOAT32, 4}, {"float64", ZARR_FLOAT64, 8},
};

const char *zh5_attr_type_name(hid_t type)
{
    H5T_class_t cls = H5Tget_class(type);
    size_t size = H5Tget_size(type);
    int is_float = cls == H5T_FLOAT, is_signed = cls == H5T_INTEGER && H5Tget_sign(type) == H5T_SGN_2;
    if (cls == H5T_STRING)
        return H5Tis_variable_str(type) > 0 ? "string" : "char";
    if (cls == H5T_ENUM)   /* attributes take h5py's booleans only (zh5_attr_create checks) */
        return "bool";
    if (cls != H5T_INTEGER && cls != H5T_FLOAT)
        return NULL;
    for (size_t i = 0; i < sizeof numeric / sizeof *numeric; i++) {
        int f = numeric[i].type == ZARR_FLOAT16 || numeric[i].type == ZARR_FLOAT32 || numeric[i].type == ZARR_FLOAT64;
        int sgn = numeric[i].name[0] == 'i';
        if (numeric[i].size == size && f == is_float && (is_float || sgn == is_signed))
            return numeric[i].name;
    }
    return NULL;
}

const char *zh5_attr_numeric_name(zarr_data_type type)
{
    for (size_t i = 0; i < sizeof numeric / sizeof *numeric; i++)
        if (numeric[i].type == type)
            return numeric[i].name;
    return NULL;
}

int zh5_attr_numeric_type(const char *tname, zarr_data_type *type, size_t *size)
{
    for (size_t i = 0; tname && i < sizeof numeric / sizeof *numeric; i++)
        if (strcmp(numeric[i].name, tname) == 0) {
            *type = numeric[i].type;
            *size = numeric[i].size;
            return 1;
        }
    return 0;
}

int zh5_record_load(zj *attrs)
{
    zj *reserved = attrs && attrs->kind == ZJ_OBJECT ? zj_get(attrs, ZH5_RESERVED_ATTR) : NULL;
    char err[64];
    if (!reserved || reserved->kind == ZJ_OBJECT)   /* none, or an object (older stores) */
        return reserved ? zh5_nc_show(attrs) : 0;
    if (reserved->kind != ZJ_STRING)
        return 0;
    zj *rec = zj_parse(reserved->text, err, sizeof err);
    if (!rec)   /* not JSON text (or no memory for it: then the record reads as absent, like a foreign one) */
        return 0;
    if (rec->kind != ZJ_OBJECT) {
        zj_free(rec);
        return 0;
    }
    if (zj_set(attrs, ZH5_RESERVED_ATTR, rec) < 0) {
        zj_free(rec);
        return -1;
    }
    return zh5_nc_show(attrs);   /* netCDF's internal attributes kept in the record (ncattrs.c) */
}

static char *dump_record_string(zj *attrs)
{
    for (size_t i = 0; attrs && attrs->kind == ZJ_OBJECT && i < attrs->count; i++) {
        zj *rec = attrs->items[i];
        if (strcmp(attrs->keys[i], ZH5_RESERVED_ATTR) != 0 || rec->kind != ZJ_OBJECT)
            continue;
        char *text = zj_dump(rec), *out = NULL;
        zj *str = text ? zj_new_string(text, strlen(text)) : NULL;
        free(text);
        if (!str)
            return NULL;
        attrs->items[i] = str;   /* lent for the dump, then the object is put back */
        out = zj_dump(attrs);
        attrs->items[i] = rec;
        zj_free(str);
        return out;
    }
    return zj_dump(attrs);
}

char *zh5_record_dump(zj *attrs)
{
    zj *copy = attrs && attrs->kind == ZJ_OBJECT ? zj_copy(attrs) : NULL;
    if (!copy)
        return attrs && attrs->kind == ZJ_OBJECT ? NULL : zj_dump(attrs);
    char *out = zh5_nc_hide(copy) < 0 ? NULL : dump_record_string(copy);   /* ncattrs.c */
    zj_free(copy);
    return out;
}

static zj *types_of(const zj *attrs)
{
    zj *reserved = zj_get(attrs, ZH5_RESERVED_ATTR);
    zj *types = reserved && reserved->kind == ZJ_OBJECT ? zj_get(reserved, "attribute_types") : NULL;
    return types && types->kind == ZJ_OBJECT ? types : NULL;
}

const char *zh5_attr_recorded_type(const zj *attrs, const char *name)
{
    const zj *t = types_of(attrs) ? zj_get(types_of(attrs), name) : NULL;
    return t && t->kind == ZJ_STRING ? t->text : NULL;
}

const zj *zh5_attr_recorded(const zj *attrs, const char *name)
{
    return types_of(attrs) ? zj_get(types_of(attrs), name) : NULL;
}

int zh5_attr_rename_record(zj *attrs, const char *from, const char *to)
{
    zj *types = types_of(attrs);
    for (size_t i = 0; types && i < types->count; i++)
        if (strcmp(types->keys[i], from) == 0) {
            char *k = strdup(to);
            if (!k)
                return -1;
            zj_remove(types, to);
            for (size_t j = 0; j < types->count; j++)   /* zj_remove may have moved it */
                if (strcmp(types->keys[j], from) == 0) {
                    free(types->keys[j]);
                    types->keys[j] = k;
                    return 0;
                }
            free(k);
            return -1;
        }
    return zh5_attr_record(attrs, to, NULL);
}

int zh5_attr_record_type(zj *attrs, const char *name, const char *tname)
{
    zj *rec = tname ? zj_new_string(tname, strlen(tname)) : NULL;
    if (tname && !rec)
        return -1;
    return zh5_attr_record(attrs, name, rec);
}

int zh5_attr_record(zj *attrs, const char *name, zj *rec)
{
    zj *reserved = zj_get(attrs, ZH5_RESERVED_ATTR), *types;
    if (!rec) {   /* forget the name's type; drop what is left empty */
        if (!(types = types_of(attrs)))
            return 0;
        zj_remove(types, name);
        if (types->count == 0)
            zj_remove(reserved, "attribute_types");
        if (reserved->count == 0)
            zj_remove(attrs, ZH5_RESERVED_ATTR);
        return 0;
    }
    if (reserved && reserved->kind != ZJ_OBJECT) {
        zj_free(rec);
        return 0;   /* not the project's record: left alone */
    }
    if (!reserved) {
        if (!(reserved = zj_new(ZJ_OBJECT)) || zj_set(attrs, ZH5_RESERVED_ATTR, reserved) < 0) {
            zj_free(reserved);
            zj_free(rec);
            return -1;
        }
    }
    if (!(types = types_of(attrs))) {
        if (!(types = zj_new(ZJ_OBJECT)) || zj_set(reserved, "attribute_types", types) < 0) {
            zj_free(types);
            zj_free(rec);
            return -1;
        }
    }
    if (zj_set(types, name, rec) < 0) {
        zj_free(rec);
        return -1;
    }
    return 0;
}

/* ---- numbers written as text ----
 * A numeric attribute may hold its value as a JSON string: xarray (and h5tozarr after it) writes a float
 * `_FillValue` of a Zarr v3 array as the base64 of a little-endian float64, and Zarr v3's own fill-value
 * forms are "NaN", "Infinity", "-Infinity" and "0x" + the big-endian hex of the value's bits. */

static int b64_digit(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Standard base64 (padded) of at most 8 bytes into out; the byte count, or 0 when not such text. */
static size_t b64_decode8(const char *s, size_t len, unsigned char out[8])
{
    size_t n = 0;
    if (len == 0 || len % 4 != 0 || len > 12)
        return 0;
    for (size_t i = 0; i < len; i += 4) {
        int d[4];
        for (int k = 0; k < 4; k++) {
            char c = s[i + (size_t)k];
            d[k] = c == '=' && i + 4 == len && k >= 2 ? -2 : b64_digit(c);
            if (d[k] == -1 || (k == 2 && d[k] == -2 && s[i + 3] != '='))
                return 0;
        }
        unsigned v = (unsigned)d[0] << 18 | (unsigned)d[1] << 12 | (unsigned)(d[2] < 0 ? 0 : d[2]) << 6 |
                     (unsigned)(d[3] < 0 ? 0 : d[3]);
        unsigned char bytes[3] = {(unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v};
        int m = d[2] < 0 ? 1 : d[3] < 0 ? 2 : 3;
        for (int k = 0; k < m; k++) {
            if (n == 8)
                return 0;
            out[n++] = bytes[k];
        }
    }
    return n;
}

/* The value of n little-endian (big = 0) or big-endian bytes as `type` (size n), as JSON number text. */
static int number_text(zarr_data_type type, const unsigned char *b, size_t n, int big, char *text, size_t size)
{
    uint64_t bits = 0;
    for (size_t i = 0; i < n; i++)
        bits |= (uint64_t)b[big ? i : n - 1 - i] << (8 * (n - 1 - i));
    double v;
    switch (type) {
    case ZARR_FLOAT16: {   /* IEEE half: sign, 5 exponent bits, 10 fraction bits */
        unsigned e = (unsigned)(bits >> 10) & 31, f = (unsigned)bits & 1023;
        v = e == 31 ? (f ? NAN : INFINITY) : e == 0 ? ldexp(f, -24) : ldexp(f + 1024, (int)e - 25);
        if (bits & 0x8000)
            v = -v;
        break;
    }
    case ZARR_FLOAT32: {
        uint32_t u = (uint32_t)bits;
        float f;
        memcpy(&f, &u, 4);
        v = f;
        break;
    }
    case ZARR_FLOAT64: memcpy(&v, &bits, 8); break;
    case ZARR_INT8: case ZARR_INT16: case ZARR_INT32: case ZARR_INT64: {
        int64_t s = n < 8 && (bits >> (8 * n - 1)) & 1 ? (int64_t)(bits | ~(uint64_t)0 << (8 * n)) : (int64_t)bits;
        snprintf(text, size, "%lld", (long long)s);
        return 0;
    }
    default: snprintf(text, size, "%llu", (unsigned long long)bits); return 0;
    }
    if (isnan(v))
        snprintf(text, size, "NaN");
    else if (isinf(v))
        snprintf(text, size, v < 0 ? "-Infinity" : "Infinity");
    else
        snprintf(text, size, "%.17g", v);
    return 0;
}

/* The number a string leaf encodes for a numeric type, as JSON number text; 0 when it encodes one. */
static int decode_text(const zj *s, zarr_data_type type, size_t size, char *text, size_t tsize)
{
    int is_float = type == ZARR_FLOAT16 || type == ZARR_FLOAT32 || type == ZARR_FLOAT64;
    unsigned char b[8];
    if (is_float && (strcmp(s->text, "NaN") == 0 || strcmp(s->text, "Infinity") == 0 ||
                     strcmp(s->text, "-Infinity") == 0)) {
        snprintf(text, tsize, "%s", s->text);
        return 0;
    }
    if (is_float && s->len == 2 + 2 * size && s->text[0] == '0' && (s->text[1] == 'x' || s->text[1] == 'X')) {
        for (size_t i = 0; i < size; i++) {
            char hex[3] = {s->text[2 + 2 * i], s->text[3 + 2 * i], 0}, *end;
            if (!isxdigit((unsigned char)hex[0]) || !isxdigit((unsigned char)hex[1]))
                return -1;
            b[i] = (unsigned char)strtoul(hex, &end, 16);
        }
        return number_text(type, b, size, 1, text, tsize);
    }
    size_t n = b64_decode8(s->text, s->len, b);
    if (n == size)   /* the value's own little-endian bytes */
        return number_text(type, b, n, 0, text, tsize);
    if (n == 8 && is_float)   /* xarray's: a little-endian float64 (converted to the type on reading) */
        return number_text(ZARR_FLOAT64, b, 8, 0, text, tsize);
    return -1;
}

int zh5_attr_decode_numbers(zj *value, const char *tname)
{
    zarr_data_type type;
    size_t size;
    char text[64];
    if (!value || !zh5_attr_numeric_type(tname, &type, &size))
        return 0;
    if (value->kind == ZJ_ARRAY) {
        for (size_t i = 0; i < value->count; i++)
            if (zh5_attr_decode_numbers(value->items[i], tname) < 0)
                return -1;
        return 0;
    }
    if (value->kind != ZJ_STRING || decode_text(value, type, size, text, sizeof text) < 0)
        return 0;
    char *copy = strdup(text);
    if (!copy)
        return -1;
    free(value->text);
    value->text = copy;
    value->len = 0;
    value->kind = ZJ_NUMBER;
    return 0;
}
