/* The HDF5 types of attributes, kept as the project's tools keep them: the reserved attribute
 * `_libzarr_hdf5` of a node holds `attribute_types`, {"<attribute>": "<type>"} with a Zarr v3 data type
 * name (int8 ... uint64, float16/32/64, bool), "string" (variable-length) or "char" (fixed-length
 * string), or for enums and compounds a record object (attrrecord.c); see docs/hdf5-netcdf.md. h5tozarr writes it, zarrtoh5 and the connector read it back, so
 * an int16 attribute stays int16 whichever way it travels. The reserved attribute itself is not an
 * HDF5 attribute. */
#define _POSIX_C_SOURCE 200809L
#include "zvol.h"

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
