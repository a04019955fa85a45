/* HDF5 enum datasets (other than h5py's booleans), kept as the project's tools keep them: the array
 * holds the base integers, its reserved attribute `_libzarr_hdf5` holds
 * "enum": {"base": "<integer type>", "members": {"<name>": value, ...}} (docs/hdf5-netcdf.md). h5tozarr
 * writes that record, zarrtoh5 and the connector make the HDF5 enum from it again. */
#define _POSIX_C_SOURCE 200809L
#include "zvol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int zh5_is_enum(hid_t type)
{
    return H5Tget_class(type) == H5T_ENUM && !zh5_is_h5py_bool(type);
}

/* The value of member i of an enum as an int64/uint64 (its base's sign); <0 on error. */
static herr_t member_value(hid_t en, unsigned i, int64_t *value, int is_signed)
{
    unsigned char buf[16] = {0};
    hid_t base = H5Tget_super(en), wide = zh5_type_native(is_signed ? ZARR_INT64 : ZARR_UINT64, 8);
    herr_t ret = base >= 0 && wide >= 0 && H5Tget_member_value(en, i, buf) >= 0 ? zh5_convert(base, wide, 1, buf) : -1;
    if (ret >= 0)
        memcpy(value, buf, 8);
    if (base >= 0)
        H5Tclose(base);
    if (wide >= 0)
        H5Tclose(wide);
    return ret;
}

/* A new enum over `base` with the members of `en`; -1 (error pushed) on failure. */
hid_t zh5_enum_rebase(hid_t en, hid_t base)
{
    int n = H5Tget_nmembers(en), is_signed = H5Tget_sign(base) == H5T_SGN_2;
    hid_t out = n >= 0 ? H5Tenum_create(base) : H5I_INVALID_HID;
    hid_t wide = zh5_type_native(is_signed ? ZARR_INT64 : ZARR_UINT64, 8);
    for (int i = 0; out >= 0 && i < n; i++) {
        unsigned char buf[16] = {0};
        int64_t v = 0;
        char *name = H5Tget_member_name(en, (unsigned)i);
        int ok = name && member_value(en, (unsigned)i, &v, is_signed) >= 0;
        memcpy(buf, &v, 8);
        ok = ok && zh5_convert(wide, base, 1, buf) >= 0 && H5Tenum_insert(out, name, buf) >= 0;
        if (name)
            H5free_memory(name);
        if (!ok) {
            H5Tclose(out);
            out = H5I_INVALID_HID;
        }
    }
    if (wide >= 0)
        H5Tclose(wide);
    if (out < 0)
        zh5_err(H5E_DATATYPE, H5E_CANTCREATE, "cannot rebuild the enum type over its stored integer type");
    return out;
}

zj *zh5_enum_record(hid_t en)
{
    hid_t base = H5Tget_super(en);
    const char *base_name = base >= 0 ? zh5_attr_type_name(base) : NULL;
    int is_signed = base >= 0 && H5Tget_sign(base) == H5T_SGN_2, n = H5Tget_nmembers(en);
    zj *rec = zj_new(ZJ_OBJECT), *members = zj_new(ZJ_OBJECT), *bname = NULL;
    int ok = rec && members && base_name && n >= 0 && (bname = zj_new_string(base_name, strlen(base_name))) &&
             zj_set(rec, "base", bname) == 0;
    if (!ok)
        zj_free(bname);
    for (int i = 0; ok && i < n; i++) {
        int64_t v;
        char text[32], *name = H5Tget_member_name(en, (unsigned)i);
        zj *num = NULL;
        ok = name && member_value(en, (unsigned)i, &v, is_signed) >= 0;
        if (ok) {
            if (is_signed)
                snprintf(text, sizeof text, "%lld", (long long)v);
            else
                snprintf(text, sizeof text, "%llu", (unsigned long long)(uint64_t)v);
            ok = (num = zj_new_number_text(text)) && zj_set(members, name, num) == 0;
            if (!ok)
                zj_free(num);
        }
        if (name)
            H5free_memory(name);
    }
    if (base >= 0)
        H5Tclose(base);
    if (ok && zj_set(rec, "members", members) == 0)
        return rec;
    if (!ok)
        zj_free(members);
    zj_free(rec);
    return NULL;
}

herr_t zh5_enum_record_on(zarr_array *array, hid_t en, const char *path)
{
    char *json = NULL, err[256];
    zarr_status st = zarr_array_attributes(array, &json);
    zj *attrs = st == ZARR_OK ? zj_parse(json, err, sizeof err) : NULL, *reserved, *rec = NULL;
    herr_t ret = -1;
    if (json)
        zarr_string_free(json);
    json = NULL;
    if (!attrs || attrs->kind != ZJ_OBJECT || zh5_record_load(attrs) < 0)
        goto done;
    if (!(reserved = zj_get(attrs, ZH5_RESERVED_ATTR))) {
        if (!(reserved = zj_new(ZJ_OBJECT)) || zj_set(attrs, ZH5_RESERVED_ATTR, reserved) < 0) {
            zj_free(reserved);
            goto done;
        }
    }
    if (reserved->kind != ZJ_OBJECT || !(rec = zh5_enum_record(en)) || zj_set(reserved, "enum", rec) < 0) {
        zj_free(rec);
        goto done;
    }
    if (!(json = zh5_record_dump(attrs)))   /* the record as a string holding its JSON text */
        goto done;
    st = zarr_array_set_attributes(array, json);
    free(json);
    if (st == ZARR_OK)
        ret = 0;
done:
    if (ret < 0)
        zh5_zerr(H5E_DATASET, H5E_CANTCREATE, st, path);
    zj_free(attrs);
    return ret;
}

hid_t zh5_enum_from_members(const zj *members, hid_t base, const char *path)
{
    int is_signed = H5Tget_sign(base) == H5T_SGN_2;
    hid_t out = H5Tenum_create(base), wide = zh5_type_native(is_signed ? ZARR_INT64 : ZARR_UINT64, 8);
    for (size_t i = 0; out >= 0 && i < members->count; i++) {
        const zj *v = members->items[i];
        unsigned char buf[16] = {0};
        if (v->kind != ZJ_NUMBER || !zj_is_integer(v)) {
            zh5_err(H5E_DATATYPE, H5E_BADVALUE, "\"/%s\": the enum member \"%s\" has no integer value", path,
                    members->keys[i]);
            H5Tclose(out);
            out = H5I_INVALID_HID;
            break;
        }
        if (is_signed) {
            int64_t x = strtoll(v->text, NULL, 10);
            memcpy(buf, &x, 8);
        } else {
            uint64_t x = strtoull(v->text, NULL, 10);
            memcpy(buf, &x, 8);
        }
        if (zh5_convert(wide, base, 1, buf) < 0 || H5Tenum_insert(out, members->keys[i], buf) < 0) {
            zh5_err(H5E_DATATYPE, H5E_CANTCREATE,
                    "\"/%s\": the enum member \"%s\" cannot be added (a repeated value, or one outside the base type?)",
                    path, members->keys[i]);
            H5Tclose(out);
            out = H5I_INVALID_HID;
        }
    }
    if (wide >= 0)
        H5Tclose(wide);
    return out;
}

herr_t zh5_enum_apply(zh5_obj *ds)
{
    char *json = NULL, err[256];
    herr_t ret = 0;
    if (H5Tget_class(ds->file_type) != H5T_INTEGER)
        return 0;
    if (zarr_array_attributes(ds->array, &json) != ZARR_OK)
        return 0;   /* no attributes to read: a plain integer array */
    zj *attrs = zj_parse(json, err, sizeof err);
    zarr_string_free(json);
    if (attrs && attrs->kind == ZJ_OBJECT && zh5_record_load(attrs) < 0) {
        zh5_err(H5E_DATATYPE, H5E_CANTALLOC, "\"/%s\": out of memory reading _libzarr_hdf5", ds->path);
        zj_free(attrs);
        return -1;
    }
    const zj *reserved = attrs && attrs->kind == ZJ_OBJECT ? zj_get(attrs, ZH5_RESERVED_ATTR) : NULL;
    const zj *rec = reserved && reserved->kind == ZJ_OBJECT ? zj_get(reserved, "enum") : NULL;
    const zj *members = rec && rec->kind == ZJ_OBJECT ? zj_get(rec, "members") : NULL;
    if (rec && (!members || members->kind != ZJ_OBJECT || members->count == 0)) {
        zh5_err(H5E_DATATYPE, H5E_BADVALUE, "\"/%s\": _libzarr_hdf5.enum has no \"members\" object", ds->path);
        ret = -1;
    } else if (members) {
        hid_t file_enum = zh5_enum_from_members(members, ds->file_type, ds->path);
        hid_t mem_enum = file_enum >= 0 ? zh5_enum_from_members(members, ds->mem_native, ds->path) : H5I_INVALID_HID;
        if (mem_enum < 0) {
            if (file_enum >= 0)
                H5Tclose(file_enum);
            ret = -1;
        } else {
            H5Tclose(ds->file_type);
            H5Tclose(ds->mem_native);
            ds->file_type = file_enum;
            ds->mem_native = mem_enum;
        }
    }
    zj_free(attrs);
    return ret;
}
