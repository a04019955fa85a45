/* netCDF-4's conventions in the stored attributes, so that a hierarchy netCDF-style HDF5 code (h5netcdf,
 * netCDF-C's layout) wrote through the connector reads in xarray and zarr-python as netCDF shows it:
 *
 * - netCDF-4's and HDF5's internal attributes (_Netcdf4Dimid, _Netcdf4Coordinates, _NCProperties,
 *   _nc3_strict, _IsNetcdf4, _SuperblockVersion, and the dimension-scale bookkeeping CLASS, NAME,
 *   REFERENCE_LIST, DIMENSION_LIST where they are stored at all) are not plain Zarr attributes: they live
 *   in the record `_libzarr_hdf5` as `hdf5_attributes` ({"<name>": <value>}, their types in
 *   `attribute_types` as for any attribute), and the connector shows them to HDF5 as attributes again
 *   (zh5_nc_show, called as the record is loaded; zh5_nc_hide, as it is stored). netCDF-C hides the same
 *   names from its users (its reserved attributes); h5tozarr drops them.
 * - An array's `_FillValue` is stored as xarray writes it: one value, not a list of one (h5netcdf writes
 *   numeric attributes with shape (1,); netCDF reads a one-element attribute as its value, so do
 *   `missing_value`, `scale_factor`, `add_offset`, `valid_min` and `valid_max`), and in a Zarr v3 float array as the base64 of the little-endian float64, the form
 *   xarray's Zarr backend reads; a float `_FillValue` and `missing_value` are written as the exact float64
 *   of their value (a float32 1e20 as 1.0000000200408773e+20), so that equal ones are one fill value to
 *   xarray, as h5tozarr writes them (zh5_nc_array_forms). Their recorded types keep what HDF5 reads. */
#define _POSIX_C_SOURCE 200809L
#include "zvol.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIDDEN "hdf5_attributes"

int zh5_nc_internal(const char *name)
{
    static const char *const names[] = {"_Netcdf4Dimid", "_Netcdf4Coordinates", "_NCProperties", "_nc3_strict",
                                        "_IsNetcdf4",    "_SuperblockVersion",  "CLASS",         "NAME",
                                        "REFERENCE_LIST", "DIMENSION_LIST"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    return 0;
}

int zh5_nc_show(zj *attrs)
{
    zj *rec = zj_get(attrs, ZH5_RESERVED_ATTR);
    zj *hidden = rec && rec->kind == ZJ_OBJECT ? zj_get(rec, HIDDEN) : NULL;
    if (!hidden)
        return 0;
    if (hidden->kind == ZJ_OBJECT)
        for (size_t i = 0; i < hidden->count; i++) {
            if (zj_get(attrs, hidden->keys[i]))   /* a plain attribute of that name (older stores) wins */
                continue;
            zj *v = zj_copy(hidden->items[i]);
            if (!v || zj_set(attrs, hidden->keys[i], v) < 0) {
                zj_free(v);
                return -1;
            }
        }
    zj_remove(rec, HIDDEN);
    return 0;
}

int zh5_nc_hide(zj *attrs)
{
    zj *rec = zj_get(attrs, ZH5_RESERVED_ATTR), *hidden = NULL;
    if (rec && rec->kind != ZJ_OBJECT)
        return 0;   /* not the project's record: nothing is moved into it */
    for (size_t i = 0; i < attrs->count;) {
        if (!zh5_nc_internal(attrs->keys[i])) {
            i++;
            continue;
        }
        if (!rec) {
            if (!(rec = zj_new(ZJ_OBJECT)) || zj_set(attrs, ZH5_RESERVED_ATTR, rec) < 0) {
                zj_free(rec);
                return -1;
            }
        }
        if (!hidden) {
            if (!(hidden = zj_new(ZJ_OBJECT)) || zj_set(rec, HIDDEN, hidden) < 0) {
                zj_free(hidden);
                return -1;
            }
        }
        zj *v = zj_copy(attrs->items[i]);
        if (!v || zj_set(hidden, attrs->keys[i], v) < 0) {
            zj_free(v);
            return -1;
        }
        zj_remove(attrs, attrs->keys[i]);   /* the next member moved to i */
    }
    return 0;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The number of a JSON value (a number, or one in a list of one); 1, or 0 when it is not one. */
static int number_of(const zj *v, double *out)
{
    if (v && v->kind == ZJ_ARRAY && v->count == 1)
        v = v->items[0];
    if (!v || v->kind != ZJ_NUMBER)
        return 0;
    *out = zj_number(v);
    return 1;
}

/* value as the shortest decimal that reads back to the same float64 (NaN and infinities by name). */
static zj *float64_json(double value)
{
    char text[40];
    if (isnan(value))
        return zj_new_number_text("NaN");
    if (isinf(value))
        return zj_new_number_text(value > 0 ? "Infinity" : "-Infinity");
    for (int p = 15; p <= 17; p++) {
        snprintf(text, sizeof text, "%.*g", p, value);
        if (strtod(text, NULL) == value)
            break;
    }
    if (!strpbrk(text, ".eEn"))
        strcat(text, ".0");
    return zj_new_number_text(text);
}

/* xarray's form of a Zarr v3 float `_FillValue`: standard base64 of the little-endian float64. */
static zj *float64_base64(double value)
{
    unsigned char b[9] = {0};
    char text[13];
    uint64_t bits;
    memcpy(&bits, &value, 8);
    for (int k = 0; k < 8; k++)
        b[k] = (unsigned char)(bits >> (8 * k));
    for (int i = 0, o = 0; i < 9; i += 3, o += 4) {
        unsigned v = (unsigned)b[i] << 16 | (unsigned)b[i + 1] << 8 | b[i + 2];
        text[o] = b64[v >> 18 & 63];
        text[o + 1] = b64[v >> 12 & 63];
        text[o + 2] = i + 1 < 8 ? b64[v >> 6 & 63] : '=';
        text[o + 3] = i + 2 < 8 ? b64[v & 63] : '=';
    }
    text[12] = '\0';
    return zj_new_string(text, 12);
}

static int is_float_name(const char *t)
{
    return t && (strcmp(t, "float16") == 0 || strcmp(t, "float32") == 0 || strcmp(t, "float64") == 0);
}

int zh5_nc_array_forms(zj *attrs, int zarr_format, zarr_data_type array_type)
{
    /* CF's attributes that xarray reads as one value: netCDF reads a one-element attribute as that value */
    static const char *const names[] = {"_FillValue", "missing_value", "scale_factor", "add_offset",
                                        "valid_min",  "valid_max"};
    const char *atype = zh5_attr_numeric_name(array_type);
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        zj *v = zj_get(attrs, names[k]);
        const char *t = zh5_attr_recorded_type(attrs, names[k]);
        double value;
        if (!v || !number_of(v, &value))
            continue;
        if (!t && k == 0)   /* an unrecorded `_FillValue` has the array's type (as xarray and netCDF read it) */
            t = atype;
        if (t && strcmp(t, "float32") == 0)
            value = (double)(float)value;   /* the float32's exact float64, as h5tozarr writes it */
        int fill = k < 2 && is_float_name(t) && strcmp(t, "float16") != 0;
        zj *out = NULL;
        if (k == 0 && zarr_format == 3 && is_float_name(atype))
            out = float64_base64(value);
        else if (fill)
            out = float64_json(value);
        else if (v->kind == ZJ_ARRAY)
            out = zj_copy(v->items[0]);
        else
            continue;
        if (!out || zj_set(attrs, names[k], out) < 0) {
            zj_free(out);
            return -1;
        }
    }
    return 0;
}
