/* Attributes: the members of a node's Zarr attributes (a JSON object). A JSON number array or
 * scalar reads as int64 (all integers) or float64, true/false as h5py's boolean, text as a
 * variable-length UTF-8 string; nested rectangular arrays give their shape. Anything else (null,
 * objects, mixed arrays) reads as a string holding its JSON text. Written attributes become JSON
 * values of the same shape: integers, floats (NaN and infinities as NaN / Infinity / -Infinity),
 * booleans, strings. */
#define _POSIX_C_SOURCE 200809L
#include "zvol.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


enum leaf { LEAF_INT, LEAF_FLOAT, LEAF_BOOL, LEAF_STRING, LEAF_JSON };

/* ---- reading and writing a node's attribute object ---- */

/* The node's attributes; for an array also its data type (*array_type, when not NULL; -1 for a group). */
static zj *load_attrs_of(zh5_file *file, const char *path, int kind, int *array_type)
{
    char *json = NULL, err[256];
    zarr_status st;
    if (array_type)
        *array_type = -1;
    if (kind == ZARR_NODE_ARRAY) {
        zarr_array *a = zh5_open_array(file, path);
        if (!a)
            return NULL;
        st = zarr_array_attributes(a, &json);
        zarr_data_type dt;
        size_t esize;
        if (array_type && zarr_array_data_type(a, &dt, &esize) == ZARR_OK)
            *array_type = (int)dt;
        zarr_close(a);
    } else {
        zarr_group *g = zh5_open_group(file, path);
        if (!g)
            return NULL;
        st = zarr_group_attributes(g, &json);
        zarr_group_close(g);
    }
    if (st != ZARR_OK) {
        zh5_zerr(H5E_ATTR, H5E_CANTGET, st, "reading the attributes");
        return NULL;
    }
    zj *doc = zj_parse(json, err, sizeof err);
    zarr_string_free(json);
    if (!doc || doc->kind != ZJ_OBJECT) {
        zh5_err(H5E_ATTR, H5E_BADVALUE, "the attributes of \"/%s\" are not a JSON object (%s)", path, err);
        zj_free(doc);
        return NULL;
    }
    if (zh5_record_load(doc) < 0) {   /* the record as the object it holds (stored as a string) */
        zh5_err(H5E_ATTR, H5E_CANTALLOC, "out of memory reading the attributes of \"/%s\"", path);
        zj_free(doc);
        return NULL;
    }
    return doc;
}

static zj *load_attrs(zh5_file *file, const char *path, int kind)
{
    return load_attrs_of(file, path, kind, NULL);
}

/* Makes a loaded attribute object read as its types say, for reading only (never stored back): an array's
   `_FillValue` without a recorded type takes the array's numeric data type (as xarray and netCDF read it,
   and zarrtoh5), and numeric attributes held as text (xarray's base64 `_FillValue`, Zarr v3's "NaN",
   "0x..." forms) become the numbers they encode (zh5_attr_decode_numbers). 0, or -1 when out of memory. */
static int as_read(zj *attrs, int array_type)
{
    const char *fill_type = array_type >= 0 ? zh5_attr_numeric_name((zarr_data_type)array_type) : NULL;
    if (fill_type && zj_get(attrs, "_FillValue") && !zh5_attr_recorded(attrs, "_FillValue") &&
        zh5_attr_record_type(attrs, "_FillValue", fill_type) < 0)
        return -1;
    for (size_t i = 0; i < attrs->count; i++)
        if (strcmp(attrs->keys[i], ZH5_RESERVED_ATTR) != 0 &&
            zh5_attr_decode_numbers(attrs->items[i], zh5_attr_recorded_type(attrs, attrs->keys[i])) < 0)
            return -1;
    return 0;
}

/* The node's attributes as they read (as_read); NULL on failure (error pushed). */
static zj *load_attrs_read(zh5_file *file, const char *path, int kind)
{
    int array_type;
    zj *attrs = load_attrs_of(file, path, kind, &array_type);
    if (attrs && (as_read(attrs, array_type) < 0 || zh5_dims_add(file, path, kind, attrs) < 0)) {
        zh5_err(H5E_ATTR, H5E_CANTALLOC, "out of memory reading the attributes of \"/%s\"", path);
        zj_free(attrs);
        return NULL;
    }
    return attrs;
}

static herr_t store_attrs(zh5_file *file, const char *path, int kind, zj *attrs)
{
    zarr_status st;
    char *json = zh5_record_dump(attrs);   /* the record as a string holding its JSON text */
    if (!json) {
        zh5_err(H5E_ATTR, H5E_CANTALLOC, "out of memory");
        return -1;
    }
    if (file->intent != H5F_ACC_RDWR) {
        zh5_err(H5E_ATTR, H5E_WRITEERROR, "%s was opened read-only: cannot change the attributes of \"/%s\"",
                file->location, path);
        free(json);
        return -1;
    }
    if (kind == ZARR_NODE_ARRAY) {
        zarr_array *a = zh5_open_array(file, path);
        zarr_data_type dt;
        size_t esize;
        int format = 3;
        if (a && zarr_array_data_type(a, &dt, &esize) == ZARR_OK && zarr_array_zarr_format(a, &format) == ZARR_OK &&
            (zj_get(attrs, "_FillValue") || zj_get(attrs, "missing_value"))) {
            /* `_FillValue` and `missing_value` as xarray reads them (ncattrs.c) */
            free(json);
            json = zh5_nc_array_forms(attrs, format, dt) < 0 ? NULL : zh5_record_dump(attrs);
            if (!json) {
                zh5_err(H5E_ATTR, H5E_CANTALLOC, "out of memory");
                zarr_close(a);
                return -1;
            }
        }
        st = a ? zarr_array_set_attributes(a, json) : ZARR_ERR_NOT_FOUND;
        zarr_close(a);
    } else {
        zarr_group *g = zh5_open_group(file, path);
        st = g ? zarr_group_set_attributes(g, json) : ZARR_ERR_NOT_FOUND;
        zarr_group_close(g);
    }
    free(json);
    if (st != ZARR_OK) {
        zh5_zerr(H5E_ATTR, H5E_WRITEERROR, st, "storing the attributes");
        return -1;
    }
    return 0;
}

/* The owner's path and kind for a location; -1 on error. */
static int owner_of(zh5_obj *obj, const H5VL_loc_params_t *loc, char **path)
{
    if (obj->kind == ZH5_ATTR) {
        *path = strdup(obj->path);
        return obj->owner_kind == ZH5_DATASET ? ZARR_NODE_ARRAY : ZARR_NODE_GROUP;
    }
    /* by index: the name designates the owner, the index one of its attributes (attr_at_index) */
    if (loc && loc->type == H5VL_OBJECT_BY_IDX)
        *path = zh5_join(obj, loc->loc_data.loc_by_idx.name);
    else
        *path = zh5_loc_path(obj, loc);
    if (!*path)
        return -1;
    int kind = zh5_node_type(obj->file, *path);
    if (kind == 0)
        zh5_err(H5E_ATTR, H5E_NOTFOUND, "no object \"/%s\" in %s", *path, obj->file->location);
    if (kind <= 0) {
        free(*path);
        *path = NULL;
        return -1;
    }
    return kind;
}

int zh5_attr_count(zh5_file *file, const char *path, zarr_node_type kind)
{
    zj *attrs = load_attrs_read(file, path, (int)kind);
    int n = attrs ? (int)attrs->count - (zj_get(attrs, ZH5_RESERVED_ATTR) != NULL) : -1;
    zj_free(attrs);
    return n;
}

/* ---- JSON values <-> HDF5 types and spaces ---- */

static hid_t string_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

/* The shape of a rectangular nest of arrays and the kind of its leaves; LEAF_JSON when irregular. */
static enum leaf shape_of(const zj *v, int *rank, hsize_t *dims)
{
    *rank = 0;
    const zj *cur = v;
    while (cur->kind == ZJ_ARRAY) {
        if (*rank >= ZH5_MAX_RANK)
            return LEAF_JSON;
        dims[(*rank)++] = cur->count;
        if (cur->count == 0)
            return *rank == 1 ? LEAF_FLOAT : LEAF_JSON;
        cur = cur->items[0];
    }
    /* check every leaf has the same depth and a compatible kind */
    enum leaf kind;
    switch (cur->kind) {
    case ZJ_NUMBER: kind = zj_is_integer(cur) ? LEAF_INT : LEAF_FLOAT; break;
    case ZJ_BOOL: kind = LEAF_BOOL; break;
    case ZJ_STRING: kind = LEAF_STRING; break;
    default: return LEAF_JSON;
    }
    /* walk all leaves */
    size_t total = 1;
    for (int d = 0; d < *rank; d++)
        total *= dims[d];
    for (size_t i = 0; i < total; i++) {
        const zj *e = v;
        size_t rem = i, stride = total;
        for (int d = 0; d < *rank; d++) {
            stride /= dims[d];
            size_t k = rem / stride;
            rem %= stride;
            if (e->kind != ZJ_ARRAY || e->count != dims[d])
                return LEAF_JSON;
            e = e->items[k];
        }
        if (e->kind == ZJ_ARRAY)
            return LEAF_JSON;
        if (kind == LEAF_INT || kind == LEAF_FLOAT) {
            if (e->kind != ZJ_NUMBER)
                return LEAF_JSON;
            if (!zj_is_integer(e))
                kind = LEAF_FLOAT;
        } else if ((kind == LEAF_BOOL && e->kind != ZJ_BOOL) || (kind == LEAF_STRING && e->kind != ZJ_STRING)) {
            return LEAF_JSON;
        }
    }
    return kind;
}

/* Leaf i (C order) of a rectangular nest. */
static const zj *leaf_at(const zj *v, int rank, const hsize_t *dims, size_t i, size_t total)
{
    size_t rem = i, stride = total;
    for (int d = 0; d < rank; d++) {
        stride /= dims[d];
        v = v->items[rem / stride];
        rem %= stride;
    }
    return v;
}

/* The longest string among the leaves (at least 1). */
static size_t longest(const zj *v, int rank, const hsize_t *dims)
{
    size_t total = 1, most = 1;
    for (int d = 0; d < rank; d++)
        total *= dims[d];
    for (size_t i = 0; i < total; i++) {
        const zj *e = rank ? leaf_at(v, rank, dims, i, total) : v;
        if (e->len > most)
            most = e->len;
    }
    return most;
}

/* The attribute's HDF5 type and space from its JSON value and recorded type (attrs: the owner's). */
static herr_t describe(zh5_obj *attr, const zj *attrs, const zj *value)
{
    hsize_t dims[ZH5_MAX_RANK];
    int rank;
    zarr_data_type zt;
    size_t zsize;
    const char *tname = zh5_attr_recorded_type(attrs, attr->attr_name);
    const zj *rec = zh5_attr_recorded(attrs, attr->attr_name);
    char where[400];
    snprintf(where, sizeof where, "attribute \"%s\" of \"/%s\"", attr->attr_name, attr->path);
    if (zh5_dims_is_computed(rec)) {   /* DIMENSION_LIST, REFERENCE_LIST, CLASS of dimension scales (dims.c) */
        attr->attr_computed = 1;
        return zh5_dims_describe(rec, value, &attr->attr_type, &attr->attr_space);
    }
    if (value->kind == ZJ_NULL) {   /* a null dataspace of the recorded type (float64 without one) */
        if (tname && strcmp(tname, "string") == 0)
            attr->attr_type = string_type();
        else if (tname && strcmp(tname, "char") == 0)
            attr->attr_type = H5Tcopy(H5T_C_S1);
        else
            attr->attr_type = rec ? zh5_record_native_type(rec, where) : H5Tcopy(H5T_NATIVE_DOUBLE);
        attr->attr_space = H5Screate(H5S_NULL);
        return attr->attr_type < 0 || attr->attr_space < 0 ? -1 : 0;
    }
    if (rec && rec->kind == ZJ_OBJECT) {   /* an enum or a compound */
        if (zh5_record_shape(value, &rank, dims) < 0) {
            zh5_err(H5E_ATTR, H5E_BADVALUE, "%s: the value is not a rectangular nest of arrays", where);
            return -1;
        }
        attr->attr_type = zh5_record_native_type(rec, where);
        attr->attr_space = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, NULL);
        return attr->attr_type < 0 || attr->attr_space < 0 ? -1 : 0;
    }
    enum leaf kind = shape_of(value, &rank, dims);
    if (kind == LEAF_JSON)
        rank = 0;
    if ((kind == LEAF_INT || kind == LEAF_FLOAT) && zh5_attr_numeric_type(tname, &zt, &zsize))
        attr->attr_type = zh5_type_native(zt, zsize);   /* int16 stays int16, float32 float32 */
    else if (kind == LEAF_STRING && tname && strcmp(tname, "char") == 0) {
        attr->attr_type = H5Tcopy(H5T_C_S1);   /* fixed-length text (netCDF's NC_CHAR) */
        if (attr->attr_type >= 0 && (H5Tset_size(attr->attr_type, longest(value, rank, dims)) < 0 ||
                                     H5Tset_strpad(attr->attr_type, H5T_STR_NULLPAD) < 0 ||
                                     H5Tset_cset(attr->attr_type, H5T_CSET_UTF8) < 0)) {
            H5Tclose(attr->attr_type);
            attr->attr_type = H5I_INVALID_HID;
        }
    } else
        switch (kind) {
        case LEAF_INT: attr->attr_type = H5Tcopy(H5T_NATIVE_INT64); break;
        case LEAF_FLOAT: attr->attr_type = H5Tcopy(H5T_NATIVE_DOUBLE); break;
        case LEAF_BOOL: attr->attr_type = zh5_type_from_zarr(ZARR_BOOL, 1, 0); break;
        default: attr->attr_type = string_type(); break;
        }
    attr->attr_space = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, NULL);
    return attr->attr_type < 0 || attr->attr_space < 0 ? -1 : 0;
}

/* The attribute names of the owner, sorted (HDF5's name index). */
static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **sorted_names(const zj *attrs, size_t *count)
{
    char **names = malloc((attrs->count ? attrs->count : 1) * sizeof *names);
    size_t n = 0;
    if (!names)
        return NULL;
    for (size_t i = 0; i < attrs->count; i++)
        if (strcmp(attrs->keys[i], ZH5_RESERVED_ATTR) != 0)   /* the types record is not an attribute */
            names[n++] = attrs->keys[i];
    qsort(names, n, sizeof *names, cmp_names);
    *count = n;
    return names;
}

/* The attribute `name`'s value; NULL when absent (the reserved record counts as absent). */
static const zj *attr_value(const zj *attrs, const char *name)
{
    return name && strcmp(name, ZH5_RESERVED_ATTR) != 0 ? zj_get(attrs, name) : NULL;
}

/* ---- callbacks ---- */

static zh5_obj *attr_object(zh5_obj *obj, const char *owner, int kind, const char *name)
{
    zh5_obj *attr = zh5_obj_new(ZH5_ATTR, obj->file, owner);
    if (!attr)
        return NULL;
    attr->owner_kind = kind == ZARR_NODE_ARRAY ? ZH5_DATASET : ZH5_GROUP;
    if (!(attr->attr_name = strdup(name))) {
        zh5_obj_free(attr);
        return NULL;
    }
    return attr;
}

void *zh5_attr_open(void *o, const H5VL_loc_params_t *loc, const char *name, hid_t aapl, hid_t dxpl, void **req)
{
    zh5_obj *obj = o, *attr = NULL;
    char *owner = NULL;
    (void)aapl;
    (void)dxpl;
    (void)req;
    int kind = owner_of(obj, loc, &owner);
    if (kind < 0)
        return NULL;
    zj *attrs = load_attrs_read(obj->file, owner, kind);
    char **names = NULL;
    size_t count = 0;
    if (attrs && loc && loc->type == H5VL_OBJECT_BY_IDX) {   /* H5Aopen_by_idx: name order */
        hsize_t n = loc->loc_data.loc_by_idx.n;
        name = NULL;
        if ((names = sorted_names(attrs, &count)) && n < count)
            name = names[loc->loc_data.loc_by_idx.order == H5_ITER_DEC ? count - 1 - n : n];
        if (!name)
            zh5_err(H5E_ATTR, H5E_BADRANGE, "\"/%s\" has no attribute %llu", owner, (unsigned long long)n);
    }
    const zj *value = attr_value(attrs, name);
    if (attrs && name && !value)
        zh5_err(H5E_ATTR, H5E_NOTFOUND, "\"/%s\" has no attribute \"%s\"", owner, name);
    if (value && (attr = attr_object(obj, owner, kind, name)) && describe(attr, attrs, value) < 0) {
        zh5_obj_free(attr);
        attr = NULL;
    }
    free(names);
    zj_free(attrs);
    free(owner);
    zh5_record_flush(attr == NULL);
    return attr;
}

/* The JSON value for n elements of a type (native numeric twin or string) laid out in buf. */
static zj *leaf_value(hid_t type, const unsigned char *buf, size_t i, int *err)
{
    H5T_class_t cls = H5Tget_class(type);
    size_t size = H5Tget_size(type);
    char text[64];
    if (cls == H5T_STRING) {
        if (H5Tis_variable_str(type) > 0) {
            const char *s;
            memcpy(&s, buf + i * sizeof(char *), sizeof s);
            return zj_new_string(s ? s : "", s ? strlen(s) : 0);
        }
        const char *s = (const char *)buf + i * size;
        size_t n = 0;
        while (n < size && s[n])
            n++;
        if (H5Tget_strpad(type) == H5T_STR_SPACEPAD)
            while (n > 0 && s[n - 1] == ' ')
                n--;
        return zj_new_string(s, n);
    }
    if (cls == H5T_ENUM)
        return zj_new_bool(buf[i] != 0);
    if (cls == H5T_FLOAT) {
        double v;
        /* the shortest decimal that reads back to the same value (0.1, not 0.100000001 for a float32) */
        if (size == 4) {
            float f;
            memcpy(&f, buf + i * 4, 4);
            v = f;
            for (int p = 6; p <= 9; p++) {
                snprintf(text, sizeof text, "%.*g", p, v);
                if ((float)strtod(text, NULL) == f)
                    break;
            }
        } else {
            memcpy(&v, buf + i * 8, 8);
            for (int p = 15; p <= 17; p++) {
                snprintf(text, sizeof text, "%.*g", p, v);
                if (strtod(text, NULL) == v)
                    break;
            }
        }
        if (isnan(v))
            strcpy(text, "NaN");
        else if (isinf(v))
            strcpy(text, v > 0 ? "Infinity" : "-Infinity");
        else if (!strpbrk(text, ".eEn"))
            strcat(text, ".0");
        return zj_new_number_text(text);
    }
    if (cls == H5T_INTEGER) {   /* 64 bits wide (value_type) */
        if (H5Tget_sign(type) == H5T_SGN_2) {
            int64_t v;
            memcpy(&v, buf + i * 8, 8);
            snprintf(text, sizeof text, "%lld", (long long)v);
        } else {
            uint64_t v;
            memcpy(&v, buf + i * 8, 8);
            snprintf(text, sizeof text, "%llu", (unsigned long long)v);
        }
        return zj_new_number_text(text);
    }
    *err = 1;
    return NULL;
}

static zj *nest_level(hid_t type, const hsize_t *dims, int rank, int d, const unsigned char *buf, size_t *i,
                      int *err)
{
    if (d == rank)
        return leaf_value(type, buf, (*i)++, err);
    zj *a = zj_new(ZJ_ARRAY);
    for (hsize_t k = 0; a && k < dims[d]; k++) {
        zj *item = nest_level(type, dims, rank, d + 1, buf, i, err);
        if (!item || zj_push(a, item) < 0) {
            zj_free(item);
            zj_free(a);
            *err = 1;
            return NULL;
        }
    }
    return a;
}

/* Nested JSON arrays of the space's shape over the elements of buf (a scalar for a scalar space). */
static zj *nest(hid_t type, hid_t space, const unsigned char *buf)
{
    hsize_t dims[ZH5_MAX_RANK];
    int rank = H5Sget_simple_extent_ndims(space), err = 0;
    size_t i = 0;
    if (rank < 0 || rank > ZH5_MAX_RANK)
        return NULL;
    H5Sget_simple_extent_dims(space, dims, NULL);
    zj *v = nest_level(type, dims, rank, 0, buf, &i, &err);
    if (err) {
        zj_free(v);
        return NULL;
    }
    return v;
}

/* The type the attribute's values are encoded from: integers as native 64-bit integers of their sign,
   floats in native order (float16 as float32), booleans as h5py's, strings as is. */
static hid_t value_type(hid_t attr_type)
{
    zarr_data_type zt;
    int big;
    if (H5Tget_class(attr_type) == H5T_STRING)
        return H5Tcopy(attr_type);
    if (zh5_type_to_zarr(attr_type, &zt, &big) < 0)
        return H5I_INVALID_HID;
    if (zt == ZARR_FLOAT16)   /* encoded from float32, which holds every float16 exactly */
        return zh5_type_native(ZARR_FLOAT32, 4);
    if (H5Tget_class(attr_type) == H5T_INTEGER)   /* encoded from 64-bit integers of its sign */
        return zh5_type_native(H5Tget_sign(attr_type) == H5T_SGN_2 ? ZARR_INT64 : ZARR_UINT64, 8);
    return zh5_type_native(zt, H5Tget_size(attr_type));
}

static herr_t check_type(hid_t type, const char *name)
{
    zarr_data_type zt;
    int big;
    if (H5Tget_class(type) == H5T_STRING)
        return 0;
    if (zh5_is_struct_type(type)) {   /* compounds (complex numbers too) and enums: a record (attrrecord.c) */
        char where[400];
        snprintf(where, sizeof where, "attribute \"%s\"", name);
        zj *rec = zh5_struct_record(type, where);
        zj_free(rec);
        return rec ? 0 : -1;
    }
    if (zh5_type_to_zarr(type, &zt, &big) < 0)
        return -1;
    if (zt == ZARR_COMPLEX64 || zt == ZARR_COMPLEX128) {
        zh5_err(H5E_ATTR, H5E_UNSUPPORTED, "complex attributes have no JSON equivalent");
        return -1;
    }
    return 0;
}

void *zh5_attr_create(void *o, const H5VL_loc_params_t *loc, const char *name, hid_t type, hid_t space,
                      hid_t acpl, hid_t aapl, hid_t dxpl, void **req)
{
    zh5_obj *obj = o, *attr = NULL;
    char *owner = NULL;
    (void)acpl;
    (void)aapl;
    (void)dxpl;
    (void)req;
    if (zh5_dims_is_written(name)) {   /* DIMENSION_LIST, REFERENCE_LIST: kept as dimension names (dims.c) */
        int kind = owner_of(obj, loc, &owner);
        if (kind == ZARR_NODE_ARRAY && (attr = attr_object(obj, owner, kind, name))) {
            attr->attr_computed = 1;
            attr->attr_type = H5Tcopy(type);
            attr->attr_space = H5Scopy(space);
        } else if (kind == ZARR_NODE_GROUP) {
            zh5_err(H5E_ATTR, H5E_UNSUPPORTED, "\"/%s\" is a group: only datasets have dimension scales (%s)", owner,
                    name);
        }
        free(owner);
        return attr;
    }
    if (check_type(type, name) < 0) {
        zh5_record_flush(1);
        return NULL;
    }
    if (strcmp(name, ZH5_RESERVED_ATTR) == 0) {
        zh5_err(H5E_ATTR, H5E_BADVALUE,
                "the attribute name \"%s\" is reserved: it records the HDF5 types of the other attributes", name);
        return NULL;
    }
    int kind = owner_of(obj, loc, &owner);
    if (kind < 0)
        return NULL;
    zj *attrs = load_attrs(obj->file, owner, kind);
    if (!attrs)
        goto done;
    if (zj_get(attrs, name)) {
        zh5_err(H5E_ATTR, H5E_EXISTS, "\"/%s\" already has an attribute \"%s\"", owner, name);
        goto done;
    }
    if (!(attr = attr_object(obj, owner, kind, name)))
        goto done;
    attr->attr_type = H5Tcopy(type);
    attr->attr_space = H5Scopy(space);
    /* the value until the first write: zeros (empty strings); null for a null dataspace, as h5tozarr
       writes it, with the type recorded */
    char where[400];
    snprintf(where, sizeof where, "attribute \"%s\"", name);
    zj *rec = zh5_is_struct_type(type) ? zh5_struct_record(type, where) : NULL;
    const char *tname = rec ? NULL : zh5_attr_type_name(type);
    if (!rec && tname)
        rec = zj_new_string(tname, strlen(tname));
    hssize_t n = H5Sget_simple_extent_npoints(space);
    hid_t vt = rec && rec->kind == ZJ_OBJECT ? zh5_record_native_type(rec, where) : value_type(type);
    size_t vsize = vt >= 0 ? H5Tget_size(vt) : 0;
    unsigned char *zeros = calloc(n > 0 ? (size_t)n : 1, vsize ? vsize : 1);
    if (H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0) {
        for (hssize_t i = 0; zeros && i < n; i++) {
            static const char empty[] = "";
            const char *p = empty;
            memcpy(zeros + (size_t)i * sizeof(char *), &p, sizeof p);
        }
    }
    zj *value = H5Sget_simple_extent_type(space) == H5S_NULL ? zj_new(ZJ_NULL)
                : !zeros || vt < 0 ? NULL
                : rec && rec->kind == ZJ_OBJECT ? zh5_record_nest(rec, vt, space, zeros)
                                                 : nest(vt, space, zeros);
    free(zeros);
    if (vt >= 0)
        H5Tclose(vt);
    int set = value && zj_set(attrs, name, value) == 0;
    if (!set)
        zj_free(value);
    int recorded = set && zh5_attr_record(attrs, name, rec) == 0;
    if (!set)
        zj_free(rec);
    rec = NULL;
    if (!recorded || store_attrs(obj->file, owner, kind, attrs) < 0) {
        zh5_obj_free(attr);
        attr = NULL;
    }
    zj_free(rec);
done:
    zj_free(attrs);
    free(owner);
    zh5_record_flush(attr == NULL);
    return attr;
}

/* Whether a string attribute's value, as written from buf in mem_type, is `scale`. */
static int is_string_value(hid_t mem_type, const void *buf, hid_t space, const char *scale)
{
    if (H5Tget_class(mem_type) != H5T_STRING || H5Sget_simple_extent_npoints(space) != 1)
        return 0;
    if (H5Tis_variable_str(mem_type) > 0) {
        const char *s = *(const char *const *)buf;
        return s && strcmp(s, scale) == 0;
    }
    size_t size = H5Tget_size(mem_type), n = strlen(scale);
    return size >= n && memcmp(buf, scale, n) == 0 && (size == n || ((const char *)buf)[n] == '\0');
}

herr_t zh5_attr_write(void *a, hid_t mem_type, const void *buf, hid_t dxpl, void **req)
{
    zh5_obj *attr = a;
    (void)dxpl;
    (void)req;
    if (attr->attr_computed) {   /* dims.c: DIMENSION_LIST names the dimensions; the others follow from them */
        if (strcmp(attr->attr_name, "DIMENSION_LIST") != 0)
            return 0;
        char where[400];
        snprintf(where, sizeof where, "attribute \"%s\" of \"/%s\"", attr->attr_name, attr->path);
        return zh5_dims_write_list(attr->file, attr->path, mem_type, buf, where);
    }
    int class_scale = strcmp(attr->attr_name, "CLASS") == 0 && is_string_value(mem_type, buf, attr->attr_space,
                                                                                  "DIMENSION_SCALE");
    int own_name = strcmp(attr->attr_name, "NAME") == 0 &&
                   is_string_value(mem_type, buf, attr->attr_space, strrchr(attr->path, '/') ?
                                   strrchr(attr->path, '/') + 1 : attr->path);
    if (attr->owner_kind == ZH5_DATASET && (class_scale || own_name) && zh5_dims_enabled()) {
        /* H5DSset_scale: a 1-D array names its dimension after itself (CLASS); its NAME is then computed */
        int made = class_scale ? zh5_dims_make_scale(attr->file, attr->path)
                               : zh5_dims_is_scale(attr->file, attr->path);
        if (made < 0)
            return -1;
        if (made > 0) {   /* the attribute H5Acreate stored gives way to the computed one */
            zj *attrs = load_attrs(attr->file, attr->path, ZARR_NODE_ARRAY);
            herr_t ret = -1;
            if (attrs) {
                zj_remove(attrs, attr->attr_name);
                if (zh5_attr_record_type(attrs, attr->attr_name, NULL) == 0)
                    ret = store_attrs(attr->file, attr->path, ZARR_NODE_ARRAY, attrs);
            }
            zj_free(attrs);
            if (ret == 0)
                attr->attr_computed = 1;
            return ret;
        }
    }
    hssize_t n = H5Sget_simple_extent_npoints(attr->attr_space);
    if (n == 0 || H5Sget_simple_extent_type(attr->attr_space) == H5S_NULL)
        return 0;   /* nothing to store: the value stays as it is (null for a null dataspace) */
    char where[400];
    snprintf(where, sizeof where, "attribute \"%s\"", attr->attr_name);
    zj *rec = zh5_is_struct_type(attr->attr_type) ? zh5_struct_record(attr->attr_type, where) : NULL;
    if (zh5_is_struct_type(attr->attr_type) && !rec) {
        zh5_record_flush(1);
        return -1;
    }
    hid_t vt = rec ? zh5_record_native_type(rec, where) : value_type(attr->attr_type);
    if (vt < 0 || n < 0) {
        zj_free(rec);
        zh5_record_flush(1);
        return -1;
    }
    size_t msize = H5Tget_size(mem_type), vsize = H5Tget_size(vt), big = msize > vsize ? msize : vsize;
    unsigned char *tmp = malloc((n ? (size_t)n : 1) * big);
    herr_t ret = -1;
    zj *attrs = NULL, *value = NULL;
    if (!tmp)
        goto done;
    memcpy(tmp, buf, (size_t)n * msize);
    if (rec) {
        if (zh5_convert(mem_type, vt, (size_t)n, tmp) < 0)
            goto done;
    } else if (H5Tget_class(vt) == H5T_STRING) {
        if (H5Tget_class(mem_type) != H5T_STRING) {
            zh5_err(H5E_ATTR, H5E_BADTYPE, "attribute \"%s\" holds strings: the memory type must be a string type",
                    attr->attr_name);
            goto done;
        }
        H5Tclose(vt);
        vt = H5Tcopy(mem_type);   /* strings are taken as the memory gives them */
    } else if (zh5_convert(mem_type, vt, (size_t)n, tmp) < 0) {
        goto done;
    }
    int kind = attr->owner_kind == ZH5_DATASET ? ZARR_NODE_ARRAY : ZARR_NODE_GROUP;
    if (!(value = rec ? zh5_record_nest(rec, vt, attr->attr_space, tmp) : nest(vt, attr->attr_space, tmp))) {
        zh5_err(H5E_ATTR, H5E_CANTCONVERT, "cannot encode attribute \"%s\" as JSON", attr->attr_name);
        goto done;
    }
    if (!(attrs = load_attrs(attr->file, attr->path, kind)))
        goto done;
    if (zj_set(attrs, attr->attr_name, value) == 0) {
        value = NULL;
        ret = store_attrs(attr->file, attr->path, kind, attrs);
    }
done:
    zj_free(rec);
    zj_free(value);
    zj_free(attrs);
    free(tmp);
    if (vt >= 0)
        H5Tclose(vt);
    zh5_record_flush(ret < 0);
    return ret;
}

herr_t zh5_attr_read(void *a, hid_t mem_type, void *buf, hid_t dxpl, void **req)
{
    zh5_obj *attr = a;
    int kind = attr->owner_kind == ZH5_DATASET ? ZARR_NODE_ARRAY : ZARR_NODE_GROUP;
    (void)dxpl;
    (void)req;
    zj *attrs = load_attrs_read(attr->file, attr->path, kind);
    const zj *value = attr_value(attrs, attr->attr_name);
    herr_t ret = -1;
    if (!value) {
        if (attrs)
            zh5_err(H5E_ATTR, H5E_NOTFOUND, "the attribute \"%s\" of \"/%s\" is gone", attr->attr_name, attr->path);
        zj_free(attrs);
        return -1;
    }
    hsize_t dims[ZH5_MAX_RANK];
    int rank;
    const zj *rec = zh5_attr_recorded(attrs, attr->attr_name);
    if (zh5_dims_is_computed(rec)) {   /* dims.c */
        char where[400];
        snprintf(where, sizeof where, "attribute \"%s\" of \"/%s\"", attr->attr_name, attr->path);
        ret = zh5_dims_read(rec, value, mem_type, buf, where);
        zj_free(attrs);
        return ret;
    }
    if (value->kind == ZJ_NULL) {   /* a null dataspace: no elements */
        zj_free(attrs);
        return 0;
    }
    if (rec && rec->kind == ZJ_OBJECT) {   /* an enum or a compound: its native type, then HDF5's conversion */
        char where[400];
        snprintf(where, sizeof where, "attribute \"%s\" of \"/%s\"", attr->attr_name, attr->path);
        hid_t nt = zh5_record_shape(value, &rank, dims) == 0 ? zh5_record_native_type(rec, where) : H5I_INVALID_HID;
        size_t count = 1;
        for (int d = 0; d < rank; d++)
            count *= dims[d];
        size_t nsize = nt >= 0 ? H5Tget_size(nt) : 0, msz = H5Tget_size(mem_type);
        unsigned char *tmp = nt >= 0 ? calloc(count ? count : 1, nsize > msz ? nsize : msz) : NULL;
        if (nt >= 0 && tmp && zh5_record_unnest(rec, nt, value, rank, dims, tmp, where) == 0 &&
            zh5_convert(nt, mem_type, count, tmp) == 0) {
            memcpy(buf, tmp, count * msz);
            ret = 0;
        }
        free(tmp);
        if (nt >= 0)
            H5Tclose(nt);
        zj_free(attrs);
        zh5_record_flush(ret < 0);
        return ret;
    }
    enum leaf leaf = shape_of(value, &rank, dims);
    size_t total = 1;
    if (leaf == LEAF_JSON)
        rank = 0;
    for (int d = 0; d < rank; d++)
        total *= dims[d];
    size_t msize = H5Tget_size(mem_type);
    if (leaf == LEAF_STRING || leaf == LEAF_JSON) {
        if (H5Tget_class(mem_type) != H5T_STRING) {
            zh5_err(H5E_ATTR, H5E_BADTYPE, "attribute \"%s\" holds strings: read it with a string type",
                    attr->attr_name);
            goto done;
        }
        int vlen = H5Tis_variable_str(mem_type) > 0;
        for (size_t i = 0; i < total; i++) {
            const zj *e = rank ? leaf_at(value, rank, dims, i, total) : value;
            char *text = e->kind == ZJ_STRING ? NULL : zj_dump(e);
            const char *s = text ? text : e->text;
            size_t len = text ? strlen(text) : e->len;
            if (vlen) {
                char *copy = malloc(len + 1);
                if (!copy) {
                    free(text);
                    goto done;
                }
                memcpy(copy, s, len);
                copy[len] = '\0';
                memcpy((char *)buf + i * sizeof(char *), &copy, sizeof copy);
            } else {
                char *dst = (char *)buf + i * msize;
                size_t n = len < msize ? len : msize;
                memset(dst, H5Tget_strpad(mem_type) == H5T_STR_SPACEPAD ? ' ' : '\0', msize);
                memcpy(dst, s, n);
                if (H5Tget_strpad(mem_type) == H5T_STR_NULLTERM && msize > 0)
                    dst[n < msize ? n : msize - 1] = '\0';
            }
            free(text);
        }
        ret = 0;
        goto done;
    }
    /* numbers and booleans: the native twin of the attribute's type, then HDF5's conversion */
    const char *tname = zh5_attr_recorded_type(attrs, attr->attr_name);
    int unsigned64 = leaf == LEAF_INT && tname && strcmp(tname, "uint64") == 0;
    hid_t vt = unsigned64 ? H5Tcopy(H5T_NATIVE_UINT64)
               : leaf == LEAF_INT ? H5Tcopy(H5T_NATIVE_INT64)
               : leaf == LEAF_FLOAT ? H5Tcopy(H5T_NATIVE_DOUBLE)
                                    : zh5_type_from_zarr(ZARR_BOOL, 1, 0);
    size_t vsize = H5Tget_size(vt), big = msize > vsize ? msize : vsize;
    unsigned char *tmp = malloc((total ? total : 1) * big);
    if (!tmp) {
        H5Tclose(vt);
        goto done;
    }
    for (size_t i = 0; i < total; i++) {
        const zj *e = rank ? leaf_at(value, rank, dims, i, total) : value;
        if (unsigned64) {
            uint64_t v = strtoull(e->text, NULL, 10);
            memcpy(tmp + i * 8, &v, 8);
        } else if (leaf == LEAF_INT) {
            int64_t v = strtoll(e->text, NULL, 10);
            memcpy(tmp + i * 8, &v, 8);
        } else if (leaf == LEAF_FLOAT) {
            double v = zj_number(e);
            memcpy(tmp + i * 8, &v, 8);
        } else {
            tmp[i] = (unsigned char)(e->boolean != 0);
        }
    }
    if (zh5_convert(vt, mem_type, total, tmp) == 0) {
        memcpy(buf, tmp, total * msize);
        ret = 0;
    }
    H5Tclose(vt);
    free(tmp);
done:
    zj_free(attrs);
    return ret;
}

static hid_t register_owner(zh5_obj *obj, const char *path, int kind)
{
    if (kind == ZARR_NODE_GROUP)
        return zh5_register_group(obj->file, path);
    zarr_array *a = zh5_open_array(obj->file, path);
    zh5_obj *ds = a ? zh5_dataset_wrap(obj->file, path, a) : NULL;
    if (!ds)
        return H5I_INVALID_HID;
    hid_t id = H5VLwrap_register(ds, H5I_DATASET);
    if (id < 0)
        zh5_obj_free(ds);
    return id;
}

static void attr_info(hid_t type, hid_t space, H5A_info_t *info)
{
    memset(info, 0, sizeof *info);
    info->corder_valid = 0;
    info->cset = H5T_CSET_UTF8;
    hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : 0;
    info->data_size = (hsize_t)(n > 0 ? n : 0) * (type >= 0 ? H5Tget_size(type) : 0);
}

herr_t zh5_attr_get(void *o, H5VL_attr_get_args_t *args, hid_t dxpl, void **req)
{
    zh5_obj *obj = o;
    (void)dxpl;
    (void)req;
    switch (args->op_type) {
    case H5VL_ATTR_GET_SPACE:
        return (args->args.get_space.space_id = H5Scopy(obj->attr_space)) < 0 ? -1 : 0;
    case H5VL_ATTR_GET_TYPE:
        return (args->args.get_type.type_id = H5Tcopy(obj->attr_type)) < 0 ? -1 : 0;
    case H5VL_ATTR_GET_ACPL:
        return (args->args.get_acpl.acpl_id = H5Pcreate(H5P_ATTRIBUTE_CREATE)) < 0 ? -1 : 0;
    case H5VL_ATTR_GET_STORAGE_SIZE: {
        H5A_info_t info;
        attr_info(obj->attr_type, obj->attr_space, &info);
        *args->args.get_storage_size.data_size = info.data_size;
        return 0;
    }
    case H5VL_ATTR_GET_NAME:
    case H5VL_ATTR_GET_INFO: {
        const H5VL_loc_params_t *loc = args->op_type == H5VL_ATTR_GET_NAME ? &args->args.get_name.loc_params
                                                                           : &args->args.get_info.loc_params;
        zh5_obj *found = NULL;
        const char *name = NULL;
        char *owner = NULL;
        herr_t ret = -1;
        if (loc->type == H5VL_OBJECT_BY_SELF && obj->kind == ZH5_ATTR && args->op_type == H5VL_ATTR_GET_NAME) {
            name = obj->attr_name;
            found = obj;
        } else {
            int kind = owner_of(obj, loc, &owner);
            if (kind < 0)
                return -1;
            zj *attrs = load_attrs_read(obj->file, owner, kind);
            size_t count = 0;
            char **names = attrs ? sorted_names(attrs, &count) : NULL;
            if (names) {
                if (loc->type == H5VL_OBJECT_BY_IDX || args->op_type == H5VL_ATTR_GET_NAME) {
                    hsize_t n = loc->loc_data.loc_by_idx.n;
                    if (n < count)
                        name = names[loc->loc_data.loc_by_idx.order == H5_ITER_DEC ? count - 1 - n : n];
                } else {
                    name = args->args.get_info.attr_name;
                    if (!name && obj->kind == ZH5_ATTR)
                        name = obj->attr_name;
                }
                if (attr_value(attrs, name) && (found = attr_object(obj, owner, kind, name)) &&
                    describe(found, attrs, attr_value(attrs, name)) < 0) {
                    zh5_obj_free(found);
                    found = NULL;
                }
                if (!found)
                    zh5_err(H5E_ATTR, H5E_NOTFOUND, "no such attribute of \"/%s\"", owner);
            }
            free(names);
            zj_free(attrs);
        }
        if (found) {
            if (args->op_type == H5VL_ATTR_GET_NAME) {
                H5VL_attr_get_name_args_t *g = &args->args.get_name;
                size_t len = strlen(found->attr_name);
                if (g->buf && g->buf_size) {
                    size_t n = len < g->buf_size - 1 ? len : g->buf_size - 1;
                    memcpy(g->buf, found->attr_name, n);
                    g->buf[n] = '\0';
                }
                if (g->attr_name_len)
                    *g->attr_name_len = len;
            } else {
                attr_info(found->attr_type, found->attr_space, args->args.get_info.ainfo);
            }
            ret = 0;
            if (found != obj)
                zh5_obj_free(found);
        }
        free(owner);
        return ret;
    }
    default:
        zh5_err(H5E_ATTR, H5E_UNSUPPORTED, "this attribute query (%d) is not supported", (int)args->op_type);
        return -1;
    }
}

herr_t zh5_attr_specific(void *o, const H5VL_loc_params_t *loc, H5VL_attr_specific_args_t *args, hid_t dxpl,
                         void **req)
{
    zh5_obj *obj = o;
    char *owner = NULL;
    herr_t ret = -1;
    (void)dxpl;
    (void)req;
    int kind = owner_of(obj, loc, &owner);
    if (kind < 0)
        return -1;
    zj *attrs = load_attrs(obj->file, owner, kind);
    size_t count = 0;
    char **names = attrs ? sorted_names(attrs, &count) : NULL;
    if (!names)
        goto done;
    switch (args->op_type) {
    case H5VL_ATTR_EXISTS: {   /* the computed attributes (dims.c) exist too */
        zj *typed = load_attrs_read(obj->file, owner, kind);
        if (typed) {
            *args->args.exists.exists = attr_value(typed, args->args.exists.name) != NULL;
            ret = 0;
        }
        zj_free(typed);
        break;
    }
    case H5VL_ATTR_DELETE:
    case H5VL_ATTR_DELETE_BY_IDX: {
        char *name = NULL;
        if (args->op_type == H5VL_ATTR_DELETE) {
            name = strdup(args->args.del.name);
        } else {
            hsize_t n = args->args.delete_by_idx.n;
            if (n < count)
                name = strdup(names[args->args.delete_by_idx.order == H5_ITER_DEC ? count - 1 - n : n]);
        }
        if (name && !attr_value(attrs, name) && kind == ZARR_NODE_ARRAY) {   /* a computed one (dims.c)? */
            zj *typed = load_attrs_read(obj->file, owner, kind);
            if (typed && attr_value(typed, name) && zh5_dims_is_computed(zh5_attr_recorded(typed, name))) {
                ret = zh5_dims_delete(obj->file, owner, name);
                zj_free(typed);
                free(name);
                break;
            }
            zj_free(typed);
        }
        if (!attr_value(attrs, name) || !zj_remove(attrs, name))
            zh5_err(H5E_ATTR, H5E_NOTFOUND, "\"/%s\" has no attribute \"%s\"", owner, name ? name : "(by index)");
        else if (zh5_attr_record_type(attrs, name, NULL) == 0)
            ret = store_attrs(obj->file, owner, kind, attrs);
        free(name);
        break;
    }
    case H5VL_ATTR_RENAME: {
        const char *from = args->args.rename.old_name, *to = args->args.rename.new_name;
        const zj *value = attr_value(attrs, from);
        if (!value) {
            zh5_err(H5E_ATTR, H5E_NOTFOUND, "\"/%s\" has no attribute \"%s\"", owner, from);
        } else if (strcmp(to, ZH5_RESERVED_ATTR) == 0) {
            zh5_err(H5E_ATTR, H5E_BADVALUE, "the attribute name \"%s\" is reserved", to);
        } else if (zj_get(attrs, to)) {
            zh5_err(H5E_ATTR, H5E_EXISTS, "\"/%s\" already has an attribute \"%s\"", owner, to);
        } else {
            for (size_t i = 0; i < attrs->count; i++)
                if (strcmp(attrs->keys[i], from) == 0) {
                    char *k = strdup(to);
                    if (k) {
                        free(attrs->keys[i]);
                        attrs->keys[i] = k;
                        if (zh5_attr_rename_record(attrs, from, to) == 0)   /* its type goes with it */
                            ret = store_attrs(obj->file, owner, kind, attrs);
                    }
                    break;
                }
        }
        break;
    }
    case H5VL_ATTR_ITER: {
        H5VL_attr_iterate_args_t *it = &args->args.iterate;
        zj *typed = load_attrs_read(obj->file, owner, kind);   /* the types as they read (as_read) */
        size_t tcount = 0;   /* the names as they read: the computed ones too */
        char **tnames = typed ? sorted_names(typed, &tcount) : NULL;
        hid_t id = tnames ? register_owner(obj, owner, kind) : H5I_INVALID_HID;
        if (id < 0) {
            free(tnames);
            zj_free(typed);
            break;
        }
        ret = 0;
        for (size_t k = it->idx ? (size_t)*it->idx : 0; k < tcount && ret == 0; k++) {
            const char *name = tnames[it->order == H5_ITER_DEC ? tcount - 1 - k : k];
            zh5_obj *tmp = attr_object(obj, owner, kind, name);
            H5A_info_t info;
            if (!tmp || describe(tmp, typed, attr_value(typed, name)) < 0) {
                zh5_obj_free(tmp);
                ret = -1;
                break;
            }
            attr_info(tmp->attr_type, tmp->attr_space, &info);
            zh5_obj_free(tmp);
            ret = it->op(id, name, &info, it->op_data);
            if (it->idx)
                *it->idx = k + 1;
        }
        H5Idec_ref(id);
        free(tnames);
        zj_free(typed);
        break;
    }
    default:
        zh5_err(H5E_ATTR, H5E_UNSUPPORTED, "this attribute operation (%d) is not supported", (int)args->op_type);
    }
done:
    free(names);
    zj_free(attrs);
    free(owner);
    return ret;
}

herr_t zh5_attr_close(void *attr, hid_t dxpl, void **req)
{
    (void)dxpl;
    (void)req;
    zh5_obj_free(attr);
    return 0;
}
