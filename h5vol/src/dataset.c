/* Datasets: HDF5 datasets are Zarr arrays. Creation maps the dataspace, the datatype and the dataset
 * creation property list (chunks, deflate/zstd/blosc/shuffle, fill value) onto libzarr's array spec;
 * H5Dget_create_plist reports them back. Reads and writes are in select.c. */
#include "zvol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZH5_FILTER_ZSTD 32015
#define ZH5_FILTER_BLOSC 32001

/* The `bytes` codec's endian in a v3 codec list (searching inside sharding too): 1 big, 0 otherwise. */
static int codecs_big_endian(const zj *codecs)
{
    for (size_t i = 0; codecs && codecs->kind == ZJ_ARRAY && i < codecs->count; i++) {
        const zj *c = codecs->items[i], *name = zj_get(c, "name"), *conf = zj_get(c, "configuration");
        if (name && name->kind == ZJ_STRING && strcmp(name->text, "bytes") == 0) {
            const zj *e = zj_get(conf, "endian");
            return e && e->kind == ZJ_STRING && strcmp(e->text, "big") == 0;
        }
        if (zj_get(conf, "codecs") && codecs_big_endian(zj_get(conf, "codecs")))
            return 1;
    }
    return 0;
}

static zj *array_metadata(zarr_array *a)
{
    char *json = NULL, err[256];
    if (zarr_array_metadata(a, &json) != ZARR_OK)
        return NULL;
    zj *doc = zj_parse(json, err, sizeof err);
    zarr_string_free(json);
    return doc;
}

/* The size of one item of a numeric Zarr type (0 for others). */
static size_t item_size(zarr_data_type t)
{
    switch (t) {
    case ZARR_BOOL: case ZARR_INT8: case ZARR_UINT8: return 1;
    case ZARR_INT16: case ZARR_UINT16: case ZARR_FLOAT16: return 2;
    case ZARR_INT32: case ZARR_UINT32: case ZARR_FLOAT32: return 4;
    case ZARR_INT64: case ZARR_UINT64: case ZARR_FLOAT64: case ZARR_COMPLEX64: return 8;
    case ZARR_COMPLEX128: return 16;
    default: return 0;
    }
}

/* A structured data type (Zarr v2 structured dtypes, v3 `structured`/`struct`) as an HDF5 compound of
   its fields at their packed offsets, in libzarr's native-endian buffer layout; a field holding a
   subarray becomes an HDF5 array type (1-D, its item count), raw bytes an opaque type. Nested
   structures are not mapped (-1). */
static hid_t struct_type(zarr_array *array, size_t esize)
{
    size_t nfields = 0;
    if (zarr_array_num_fields(array, &nfields) != ZARR_OK || nfields == 0)
        return H5I_INVALID_HID;
    hid_t t = H5Tcreate(H5T_COMPOUND, esize);
    for (size_t i = 0; t >= 0 && i < nfields; i++) {
        const char *name = NULL;
        zarr_data_type ft;
        size_t offset = 0, size = 0, item;
        hid_t member = H5I_INVALID_HID;
        if (zarr_array_field(array, i, &name, &ft, &offset, &size) != ZARR_OK)
            item = 0;
        else if (ft == ZARR_RAW && size)   /* raw bytes (libzarr reports some subarrays so): opaque */
            member = H5Tcreate(H5T_OPAQUE, size);
        else if ((item = item_size(ft)) && size % item == 0 && (member = zh5_type_native(ft, item)) >= 0 &&
                 size > item) {
            hsize_t count = size / item;
            hid_t arr = H5Tarray_create2(member, 1, &count);
            H5Tclose(member);
            member = arr;
        }
        if (member < 0 || H5Tinsert(t, name, offset, member) < 0) {
            H5Tclose(t);
            t = H5I_INVALID_HID;
        }
        if (member >= 0)
            H5Tclose(member);
    }
    return t;
}

/* ---- unlimited dimensions ----
 * HDF5's maximum dimensions: Zarr can resize any dimension, but netCDF and h5netcdf read a dimension as
 * unlimited from its maximum, so only the dimensions created with H5S_UNLIMITED are reported so; they are
 * recorded as h5tozarr records them, in `_libzarr_hdf5.unlimited_dimensions` (docs/hdf5-netcdf.md). */

/* Bit d set for each index of the record's unlimited_dimensions. */
static uint64_t unlimited_of(zarr_array *array)
{
    char *json = NULL, err[64];
    uint64_t mask = 0;
    if (zarr_array_attributes(array, &json) != ZARR_OK)
        return 0;
    zj *attrs = zj_parse(json, err, sizeof err);
    zarr_string_free(json);
    if (attrs && attrs->kind == ZJ_OBJECT && zh5_record_load(attrs) == 0) {
        zj *rec = zj_get(attrs, ZH5_RESERVED_ATTR);
        zj *list = rec && rec->kind == ZJ_OBJECT ? zj_get(rec, "unlimited_dimensions") : NULL;
        for (size_t i = 0; list && list->kind == ZJ_ARRAY && i < list->count; i++) {
            double d = zj_is_integer(list->items[i]) ? zj_number(list->items[i]) : -1;
            if (d >= 0 && d < ZH5_MAX_RANK)
                mask |= (uint64_t)1 << (int)d;
        }
    }
    zj_free(attrs);
    return mask;
}

/* Records the dimensions of mask as unlimited_dimensions on a new array; 0, or -1 (pushed). */
static int record_unlimited(zarr_array *array, uint64_t mask, int rank, const char *path)
{
    char *json = NULL, err[64];
    zarr_status st = zarr_array_attributes(array, &json);
    zj *attrs = st == ZARR_OK ? zj_parse(json, err, sizeof err) : NULL, *rec, *list = zj_new(ZJ_ARRAY);
    int ret = -1;
    if (json)
        zarr_string_free(json);
    json = NULL;
    for (int d = 0; list && d < rank; d++) {
        char num[16];
        snprintf(num, sizeof num, "%d", d);
        if ((mask >> d & 1) && zj_push(list, zj_new_number_text(num)) < 0)
            goto done;
    }
    if (!list || !attrs || attrs->kind != ZJ_OBJECT || zh5_record_load(attrs) < 0)
        goto done;
    if (!(rec = zj_get(attrs, ZH5_RESERVED_ATTR))) {
        if (!(rec = zj_new(ZJ_OBJECT)) || zj_set(attrs, ZH5_RESERVED_ATTR, rec) < 0) {
            zj_free(rec);
            goto done;
        }
    }
    if (rec->kind != ZJ_OBJECT || zj_set(rec, "unlimited_dimensions", list) < 0)
        goto done;
    list = NULL;
    if (!(json = zh5_record_dump(attrs)))
        goto done;
    st = zarr_array_set_attributes(array, json);
    free(json);
    ret = st == ZARR_OK ? 0 : -1;
done:
    if (ret < 0)
        zh5_zerr(H5E_DATASET, H5E_CANTCREATE, st == ZARR_OK ? ZARR_ERR_IO : st, path);
    zj_free(list);
    zj_free(attrs);
    return ret;
}

zh5_obj *zh5_dataset_wrap(zh5_file *file, const char *path, zarr_array *array)
{
    size_t rank = 0;
    zh5_obj *obj = zh5_obj_new(ZH5_DATASET, file, path);
    if (!obj) {
        zarr_close(array);
        return NULL;
    }
    obj->array = array;
    obj->unlimited = unlimited_of(array);
    zarr_array_rank(array, &rank);
    if (rank > ZH5_MAX_RANK) {
        zh5_err(H5E_DATASET, H5E_UNSUPPORTED, "\"/%s\" has %zu dimensions, more than %d", path, rank, ZH5_MAX_RANK);
        zh5_obj_free(obj);
        return NULL;
    }
    obj->rank = (int)rank;
    zarr_array_data_type(array, &obj->ztype, &obj->esize);
    if (obj->ztype == ZARR_STRING)
        obj->esize = sizeof(char *);   /* the memory layout: one pointer per element */
    zj *meta = array_metadata(array);
    int big = 0;
    const char *type_name = "?";
    if (meta) {
        const zj *fmt = zj_get(meta, "zarr_format"), *dt;
        if (fmt && fmt->kind == ZJ_NUMBER && strcmp(fmt->text, "2") == 0) {
            dt = zj_get(meta, "dtype");
            big = dt && dt->kind == ZJ_STRING && dt->text[0] == '>';
        } else {
            dt = zj_get(meta, "data_type");
            big = codecs_big_endian(zj_get(meta, "codecs"));
        }
        if (dt && dt->kind == ZJ_OBJECT)   /* a data type with parameters: {"name": ..., "configuration": ...} */
            dt = zj_get(dt, "name");
        if (dt && dt->kind == ZJ_STRING)
            type_name = dt->text;
    }
    if (obj->ztype == ZARR_STRUCT) {
        obj->file_type = struct_type(array, obj->esize);
        obj->mem_native = obj->file_type >= 0 ? H5Tcopy(obj->file_type) : H5I_INVALID_HID;
    } else {
        obj->file_type = zh5_type_from_zarr(obj->ztype, obj->esize, big);
        obj->mem_native = zh5_type_native(obj->ztype, obj->esize);
    }
    if (obj->file_type >= 0 && obj->mem_native >= 0 && zh5_enum_apply(obj) < 0) {
        zj_free(meta);
        zh5_obj_free(obj);
        return NULL;
    }
    if (obj->file_type < 0 || obj->mem_native < 0) {
        zh5_err(H5E_DATATYPE, H5E_UNSUPPORTED,
                "the data type \"%s\" of \"/%s\" has no HDF5 equivalent in this connector yet (it maps bool, "
                "integers, float16/32/64, complex64/128, strings, structures of numbers)",
                type_name, path);
        zj_free(meta);
        zh5_obj_free(obj);
        return NULL;
    }
    zj_free(meta);
    return obj;
}

void *zh5_dataset_open(void *o, const H5VL_loc_params_t *loc, const char *name, hid_t dapl, hid_t dxpl,
                       void **req)
{
    zh5_obj *obj = o, *out = NULL;
    char *path = zh5_member_path(obj, loc, name);
    (void)dapl;
    (void)dxpl;
    (void)req;
    if (path) {
        zarr_array *a = zh5_open_array(obj->file, path);
        if (a)
            out = zh5_dataset_wrap(obj->file, path, a);
    }
    free(path);
    return out;
}

/* The dcpl's filters onto the spec; -1 (pushed) for a filter without a Zarr equivalent. */
static int spec_filters(zarr_array_spec *spec, hid_t dcpl)
{
    int n = H5Pget_nfilters(dcpl), shuffle = 0, compressed = 0;
    for (int i = 0; i < n; i++) {
        unsigned flags = 0, cd[8] = {0}, fconfig = 0;
        size_t ncd = 8;
        char fname[64] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof fname, fname, &fconfig);
        zarr_status st = ZARR_OK;
        if (id == H5Z_FILTER_DEFLATE) {
            st = zarr_array_spec_set_compressor(spec, "gzip", ncd ? (int)cd[0] : ZARR_LEVEL_DEFAULT);
            compressed = 1;
        } else if (id == H5Z_FILTER_SHUFFLE) {
            shuffle = 1;
        } else if (id == ZH5_FILTER_ZSTD) {
            st = zarr_array_spec_set_compressor(spec, "zstd", ncd ? (int)cd[0] : ZARR_LEVEL_DEFAULT);
            compressed = 1;
        } else if (id == ZH5_FILTER_BLOSC) {
            static const char *names[] = {"blosc-blosclz", "blosc-lz4", "blosc-lz4hc", NULL, "blosc-zlib",
                                          "blosc-zstd"};
            unsigned code = ncd > 6 ? cd[6] : 0;
            if (code > 5 || !names[code]) {
                zh5_err(H5E_PLINE, H5E_UNSUPPORTED, "blosc compressor code %u is not supported", code);
                return -1;
            }
            st = zarr_array_spec_set_compressor(spec, names[code], ncd > 4 ? (int)cd[4] : ZARR_LEVEL_DEFAULT);
            if (st == ZARR_OK)
                st = zarr_array_spec_set_shuffle(spec, ncd > 5 ? (int)cd[5] : ZARR_SHUFFLE_BYTE);
            compressed = 1;
        } else {
            zh5_err(H5E_PLINE, H5E_UNSUPPORTED,
                    "the filter %d (\"%s\") has no Zarr equivalent in this connector (deflate, shuffle, zstd and "
                    "blosc do)",
                    (int)id, fname);
            return -1;
        }
        if (st != ZARR_OK) {
            zh5_zerr(H5E_PLINE, H5E_CANTSET, st, "setting the compressor");
            return -1;
        }
    }
    if (!compressed && zarr_array_spec_set_compressor(spec, "none", 0) != ZARR_OK)
        return -1;
    if (shuffle && zarr_array_spec_set_shuffle(spec, ZARR_SHUFFLE_BYTE) != ZARR_OK)
        return -1;
    return 0;
}

/* Makes an array document big-endian: a v3 `bytes` codec's endian, a v2 `dtype`'s byte order; returns the new
   text (malloc'd) or NULL. */
static char *make_big_endian(const char *json)
{
    char err[256];
    zj *doc = zj_parse(json, err, sizeof err), *codecs = zj_get(doc, "codecs"), *dtype = zj_get(doc, "dtype");
    char *out = NULL;
    if (dtype && dtype->kind == ZJ_STRING && dtype->text[0] == '<') {   /* v2: the typestr's byte order */
        dtype->text[0] = '>';
        out = zj_dump(doc);
    }
    for (size_t i = 0; codecs && codecs->kind == ZJ_ARRAY && i < codecs->count; i++) {
        zj *c = codecs->items[i], *name = zj_get(c, "name");
        if (name && name->kind == ZJ_STRING && strcmp(name->text, "bytes") == 0) {
            zj *conf = zj_get(c, "configuration");
            if (!conf) {
                conf = zj_new(ZJ_OBJECT);
                zj_set(c, "configuration", conf);
            }
            zj_set(conf, "endian", zj_new_string("big", 3));
            out = zj_dump(doc);
        }
    }
    zj_free(doc);
    return out;
}

/* A v2 array document with `fill_value: null`: HDF5's default fill value, which no reader should take as a
   missing-value marker (xarray masks a v2 fill_value; netCDF shows no _FillValue); malloc'd text or NULL. */
static char *null_fill(const char *json)
{
    char err[256], *out = NULL;
    zj *doc = zj_parse(json, err, sizeof err), *none = zj_new(ZJ_NULL);
    if (doc && none && zj_set(doc, "fill_value", none) == 0) {
        none = NULL;
        out = zj_dump(doc);
    }
    zj_free(none);
    zj_free(doc);
    return out;
}

/* Rewrites a document made for uint8 elements into one of `null_terminated_bytes` of n bytes with the
   given fill value (base64, as the type's fill values are written); malloc'd text or NULL. */
static char *fixed_bytes_doc(const char *json, size_t n, const unsigned char *fill)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char err[256], num[32];
    zj *doc = zj_parse(json, err, sizeof err);
    char *enc = malloc(4 * ((n + 2) / 3) + 1), *out = NULL;
    if (doc && enc) {
        size_t o = 0;
        for (size_t i = 0; i < n; i += 3) {
            unsigned v = (unsigned)fill[i] << 16 | (i + 1 < n ? (unsigned)fill[i + 1] << 8 : 0) |
                         (i + 2 < n ? fill[i + 2] : 0);
            enc[o++] = b64[(v >> 18) & 63];
            enc[o++] = b64[(v >> 12) & 63];
            enc[o++] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
            enc[o++] = i + 2 < n ? b64[v & 63] : '=';
        }
        enc[o] = '\0';
        zj *dt = zj_new(ZJ_OBJECT), *conf = zj_new(ZJ_OBJECT);
        snprintf(num, sizeof num, "%zu", n);
        if (dt && conf && zj_set(dt, "name", zj_new_string("null_terminated_bytes", 21)) == 0 &&
            zj_set(conf, "length_bytes", zj_new_number_text(num)) == 0 && zj_set(dt, "configuration", conf) == 0) {
            conf = NULL;
            if (zj_set(doc, "data_type", dt) == 0) {
                dt = NULL;
                if (zj_set(doc, "fill_value", zj_new_string(enc, o)) == 0)
                    out = zj_dump(doc);
            }
        }
        zj_free(dt);
        zj_free(conf);
    }
    free(enc);
    zj_free(doc);
    return out;
}

void *zh5_dataset_create(void *o, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl, hid_t type,
                         hid_t space, hid_t dcpl, hid_t dapl, hid_t dxpl, void **req)
{
    zh5_obj *obj = o, *out = NULL;
    zarr_data_type ztype;
    int big = 0, rank;
    uint64_t shape[ZH5_MAX_RANK], chunks[ZH5_MAX_RANK];
    hsize_t dims[ZH5_MAX_RANK], cdims[ZH5_MAX_RANK];
    zarr_array_spec *spec = NULL;
    zarr_array *arr = NULL;
    char *path = NULL, *doc = NULL, *big_doc = NULL;
    hid_t enum_base = H5I_INVALID_HID;
    (void)dapl;
    (void)dxpl;
    (void)req;
    if (!name)   /* H5Dcreate_anon, and h5py's group[name] = data (then H5Olink) */
        return zh5_dataset_create_anon(obj, lcpl, type, space, dcpl, dxpl, req);
    if (!(path = zh5_member_path(obj, loc, name)))
        return NULL;
    /* an HDF5 enum is stored as its base integers, its members recorded beside them (enum.c) */
    int is_enum = zh5_is_enum(type);
    if (is_enum && (enum_base = H5Tget_super(type)) < 0)
        goto done;
    if (zh5_type_to_zarr(is_enum ? enum_base : type, &ztype, &big) < 0)
        goto done;
    H5S_class_t sclass = H5Sget_simple_extent_type(space);
    if (sclass == H5S_NULL) {
        zh5_err(H5E_DATASPACE, H5E_UNSUPPORTED, "a null dataspace (h5py's Empty) has no Zarr equivalent");
        goto done;
    }
    rank = H5Sget_simple_extent_ndims(space);
    if (rank < 0 || rank > ZH5_MAX_RANK) {
        zh5_err(H5E_DATASPACE, H5E_BADRANGE, "the dataspace's rank %d is not supported", rank);
        goto done;
    }
    hsize_t maxdims[ZH5_MAX_RANK];
    uint64_t unlimited = 0;
    H5Sget_simple_extent_dims(space, dims, maxdims);
    for (int d = 0; d < rank; d++)
        if (maxdims[d] == H5S_UNLIMITED)
            unlimited |= (uint64_t)1 << d;
    for (int d = 0; d < rank; d++)
        shape[d] = dims[d];
    if (zh5_parent_ready(obj->file, path, lcpl, H5E_DATASET, "dataset", name) < 0)
        goto done;
    /* fixed-length bytes: a spec of bytes whose document then names the real type (fixed_bytes_doc) */
    int fixed = ztype == ZARR_NULL_TERMINATED_BYTES;
    zarr_status st = zarr_array_spec_new(fixed ? ZARR_UINT8 : ztype, (size_t)rank, shape, &spec);
    if (st != ZARR_OK) {
        zh5_zerr(H5E_DATASET, H5E_CANTCREATE, st, "array spec");
        goto done;
    }
    if (rank > 0 && H5Pget_layout(dcpl) == H5D_CHUNKED) {
        if (H5Pget_chunk(dcpl, rank, cdims) != rank)
            goto done;
        for (int d = 0; d < rank; d++)
            chunks[d] = cdims[d];
        if ((st = zarr_array_spec_set_chunks(spec, chunks, (size_t)rank)) != ZARR_OK) {
            zh5_zerr(H5E_DATASET, H5E_CANTCREATE, st, "chunk shape");
            goto done;
        }
    }
    if (spec_filters(spec, dcpl) < 0)
        goto done;
    H5D_fill_value_t fill_status;
    if (ztype == ZARR_STRING && H5Pfill_value_defined(dcpl, &fill_status) >= 0 &&
        fill_status == H5D_FILL_VALUE_USER_DEFINED) {
        char *text = NULL;
        hid_t native = zh5_type_native(ZARR_STRING, 0);
        herr_t got = native >= 0 ? H5Pget_fill_value(dcpl, native, &text) : -1;
        if (native >= 0)
            H5Tclose(native);
        st = got < 0 ? ZARR_ERR_INVALID_ARGUMENT
                     : zarr_array_spec_set_fill_value(spec, text ? text : "", text ? strlen(text) : 0);
        if (text)
            H5free_memory(text);
        if (st != ZARR_OK) {
            zh5_zerr(H5E_DATASET, H5E_CANTCREATE, st, "fill value");
            goto done;
        }
    } else if (fixed) {
        /* the fill value goes into the document below */
    } else if (H5Pfill_value_defined(dcpl, &fill_status) >= 0 && fill_status == H5D_FILL_VALUE_USER_DEFINED) {
        unsigned char value[16] = {0};
        size_t esize = H5Tget_size(type);
        hid_t native = zh5_type_native(ztype, esize);
        if (is_enum && native >= 0) {   /* the fill value as the enum over the native integers */
            hid_t native_enum = zh5_enum_rebase(type, native);
            H5Tclose(native);
            native = native_enum;
        }
        if (native < 0 || H5Pget_fill_value(dcpl, native, value) < 0) {
            if (native >= 0)
                H5Tclose(native);
            zh5_err(H5E_DATASET, H5E_CANTGET, "cannot read the fill value of the creation property list");
            goto done;
        }
        H5Tclose(native);
        if ((st = zarr_array_spec_set_fill_value(spec, value, esize)) != ZARR_OK) {
            zh5_zerr(H5E_DATASET, H5E_CANTCREATE, st, "fill value");
            goto done;
        }
    }
    int group_format = 3, user_fill = H5Pfill_value_defined(dcpl, &fill_status) >= 0 &&
                                       fill_status == H5D_FILL_VALUE_USER_DEFINED;
    zarr_group_zarr_format(obj->file->root, &group_format);
    if (fixed) {
        int format = 3;
        size_t n = H5Tget_size(type);
        unsigned char *fill = calloc(n, 1);
        hid_t native = zh5_type_native(ztype, n);
        if (fill && native >= 0 && H5Pfill_value_defined(dcpl, &fill_status) >= 0 &&
            fill_status == H5D_FILL_VALUE_USER_DEFINED)
            H5Pget_fill_value(dcpl, native, fill);
        if (native >= 0)
            H5Tclose(native);
        zarr_group_zarr_format(obj->file->root, &format);
        if (!fill || format != 3 || (st = zarr_array_spec_to_json(spec, &doc)) != ZARR_OK ||
            !(big_doc = fixed_bytes_doc(doc, n, fill))) {
            free(fill);
            zh5_err(H5E_DATASET, H5E_UNSUPPORTED, "fixed-length string datasets are created in Zarr v3 hierarchies only");
            goto done;
        }
        free(fill);
        st = zarr_group_create_array(obj->file->root, path, big_doc, &arr);
    } else if (big || (group_format == 2 && !user_fill && ztype != ZARR_STRING)) {
        /* the document of the group's format (from a spec, a new array takes the group's), big-endian and,
           in v2 without a fill value set, with none (null) */
        char *text = NULL;
        if ((st = zarr_array_spec_set_zarr_format(spec, group_format)) != ZARR_OK ||
            (st = zarr_array_spec_to_json(spec, &doc)) != ZARR_OK || (big && !(big_doc = make_big_endian(doc)))) {
            zh5_err(H5E_DATASET, H5E_UNSUPPORTED, "cannot make a big-endian dataset of this type");
            goto done;
        }
        if (group_format == 2 && !user_fill) {
            if (!(text = null_fill(big_doc ? big_doc : doc))) {
                zh5_err(H5E_DATASET, H5E_CANTALLOC, "out of memory");
                goto done;
            }
            free(big_doc);
            big_doc = text;
        }
        st = zarr_group_create_array(obj->file->root, path, big_doc ? big_doc : doc, &arr);
    } else {
        st = zarr_group_create_array_from_spec(obj->file->root, path, spec, &arr);
    }
    if (st != ZARR_OK) {
        char what[1200];
        snprintf(what, sizeof what, "cannot create the dataset \"/%s\"", path);
        zh5_zerr(H5E_DATASET, H5E_CANTCREATE, st, what);
        goto done;
    }
    if (is_enum && zh5_enum_record_on(arr, type, path) < 0) {
        zarr_close(arr);
        goto done;
    }
    if (unlimited && record_unlimited(arr, unlimited, rank, path) < 0) {
        zarr_close(arr);
        goto done;
    }
    /* every dimension named (netCDF's phony_dim_N until a scale is attached), so that xarray opens it */
    if (zh5_dims_on_create(obj->file, path, rank) < 0) {
        zarr_close(arr);
        goto done;
    }
    if ((out = zh5_dataset_wrap(obj->file, path, arr)))
        out->unlimited = unlimited;
done:
    if (enum_base >= 0)
        H5Tclose(enum_base);
    zarr_array_spec_free(spec);
    if (doc)
        zarr_string_free(doc);
    free(big_doc);
    free(path);
    return out;
}

/* The compression of the stored array onto an HDF5 dcpl, as HDF5 would report it. */
static void dcpl_filters(hid_t dcpl, const zj *codecs, int v2, const zj *meta, size_t esize)
{
    if (v2) {
        const zj *filters = zj_get(meta, "filters"), *comp = zj_get(meta, "compressor");
        for (size_t i = 0; filters && filters->kind == ZJ_ARRAY && i < filters->count; i++) {
            const zj *id = zj_get(filters->items[i], "id");
            if (id && id->kind == ZJ_STRING && strcmp(id->text, "shuffle") == 0)
                H5Pset_shuffle(dcpl);
        }
        const zj *id = zj_get(comp, "id");
        if (id && id->kind == ZJ_STRING) {
            const zj *level = zj_get(comp, "level");
            unsigned lv = level ? (unsigned)zj_number(level) : 0;
            if (strcmp(id->text, "gzip") == 0 || strcmp(id->text, "zlib") == 0)
                H5Pset_deflate(dcpl, lv);
            else if (strcmp(id->text, "zstd") == 0)
                H5Pset_filter(dcpl, ZH5_FILTER_ZSTD, H5Z_FLAG_OPTIONAL, 1, &lv);
            else if (strcmp(id->text, "blosc") == 0) {
                const zj *cl = zj_get(comp, "clevel"), *sh = zj_get(comp, "shuffle"), *cn = zj_get(comp, "cname");
                unsigned cd[7] = {2, 2, (unsigned)esize, 0, cl ? (unsigned)zj_number(cl) : 5,
                                  sh ? (unsigned)zj_number(sh) : 1, 0};
                static const char *names[] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};
                for (unsigned k = 0; cn && cn->kind == ZJ_STRING && k < 6; k++)
                    if (strcmp(cn->text, names[k]) == 0)
                        cd[6] = k;
                H5Pset_filter(dcpl, ZH5_FILTER_BLOSC, H5Z_FLAG_OPTIONAL, 7, cd);
            }
        }
        return;
    }
    for (size_t i = 0; codecs && codecs->kind == ZJ_ARRAY && i < codecs->count; i++) {
        const zj *c = codecs->items[i], *name = zj_get(c, "name"), *conf = zj_get(c, "configuration");
        if (!name || name->kind != ZJ_STRING)
            continue;
        if (strcmp(name->text, "sharding_indexed") == 0) {
            dcpl_filters(dcpl, zj_get(conf, "codecs"), 0, meta, esize);
            continue;
        }
        const zj *level = zj_get(conf, "level");
        unsigned lv = level ? (unsigned)zj_number(level) : 0;
        if (strcmp(name->text, "gzip") == 0)
            H5Pset_deflate(dcpl, lv);
        else if (strcmp(name->text, "zstd") == 0)
            H5Pset_filter(dcpl, ZH5_FILTER_ZSTD, H5Z_FLAG_OPTIONAL, 1, &lv);
        else if (strcmp(name->text, "numcodecs.shuffle") == 0)
            H5Pset_shuffle(dcpl);
        else if (strcmp(name->text, "blosc") == 0) {
            const zj *cl = zj_get(conf, "clevel"), *sh = zj_get(conf, "shuffle"), *cn = zj_get(conf, "cname");
            unsigned shuffle = 1;
            if (sh && sh->kind == ZJ_STRING)
                shuffle = strcmp(sh->text, "noshuffle") == 0 ? 0 : strcmp(sh->text, "bitshuffle") == 0 ? 2 : 1;
            unsigned cd[7] = {2, 2, (unsigned)esize, 0, cl ? (unsigned)zj_number(cl) : 5, shuffle, 0};
            static const char *names[] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};
            for (unsigned k = 0; cn && cn->kind == ZJ_STRING && k < 6; k++)
                if (strcmp(cn->text, names[k]) == 0)
                    cd[6] = k;
            H5Pset_filter(dcpl, ZH5_FILTER_BLOSC, H5Z_FLAG_OPTIONAL, 7, cd);
        }
    }
}

static hid_t dataset_dcpl(zh5_obj *obj)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    uint64_t chunks[ZH5_MAX_RANK];
    hsize_t cdims[ZH5_MAX_RANK];
    unsigned char fill[16];
    if (dcpl < 0)
        return dcpl;
    if (obj->rank > 0 && zarr_array_inner_chunk_shape(obj->array, chunks, (size_t)obj->rank) == ZARR_OK) {
        for (int d = 0; d < obj->rank; d++)
            cdims[d] = chunks[d];
        H5Pset_chunk(dcpl, obj->rank, cdims);
    }
    if (obj->ztype == ZARR_STRING) {
        const uint8_t *value = NULL;
        size_t size = 0;
        char *text;
        if (zarr_array_fill_value_vlen(obj->array, &value, &size) == ZARR_OK && (text = malloc(size + 1))) {
            if (size)
                memcpy(text, value, size);
            text[size] = '\0';
            H5Pset_fill_value(dcpl, obj->mem_native, &text);
            free(text);
        }
    } else {
        unsigned char *value = obj->esize <= sizeof fill ? fill : malloc(obj->esize);
        if (value && zarr_array_fill_value(obj->array, value, obj->esize) == ZARR_OK)
            H5Pset_fill_value(dcpl, obj->mem_native, value);
        if (value != fill)
            free(value);
    }
    zj *meta = array_metadata(obj->array);
    if (meta) {
        const zj *fmt = zj_get(meta, "zarr_format");
        int v2 = fmt && fmt->kind == ZJ_NUMBER && strcmp(fmt->text, "2") == 0;
        if (obj->rank > 0)
            dcpl_filters(dcpl, zj_get(meta, "codecs"), v2, meta, obj->esize);
        zj_free(meta);
    }
    return dcpl;
}

static hid_t dataset_space(zh5_obj *obj)
{
    uint64_t shape[ZH5_MAX_RANK];
    hsize_t dims[ZH5_MAX_RANK], maxdims[ZH5_MAX_RANK];
    if (obj->rank == 0)
        return H5Screate(H5S_SCALAR);
    if (zarr_array_shape(obj->array, shape, (size_t)obj->rank) != ZARR_OK) {
        zh5_zerr(H5E_DATASET, H5E_CANTGET, ZARR_ERR_INVALID_HANDLE, "shape");
        return H5I_INVALID_HID;
    }
    for (int d = 0; d < obj->rank; d++) {
        dims[d] = shape[d];
        maxdims[d] = obj->unlimited >> d & 1 ? H5S_UNLIMITED : dims[d];   /* unlimited where recorded */
    }
    return H5Screate_simple(obj->rank, dims, maxdims);
}

herr_t zh5_dataset_get(void *o, H5VL_dataset_get_args_t *args, hid_t dxpl, void **req)
{
    zh5_obj *obj = o;
    (void)dxpl;
    (void)req;
    switch (args->op_type) {
    case H5VL_DATASET_GET_SPACE:
        return (args->args.get_space.space_id = dataset_space(obj)) < 0 ? -1 : 0;
    case H5VL_DATASET_GET_TYPE:
        return (args->args.get_type.type_id = H5Tcopy(obj->file_type)) < 0 ? -1 : 0;
    case H5VL_DATASET_GET_DCPL:
        return (args->args.get_dcpl.dcpl_id = dataset_dcpl(obj)) < 0 ? -1 : 0;
    case H5VL_DATASET_GET_DAPL:
        return (args->args.get_dapl.dapl_id = H5Pcreate(H5P_DATASET_ACCESS)) < 0 ? -1 : 0;
    case H5VL_DATASET_GET_SPACE_STATUS:
        *args->args.get_space_status.status = H5D_SPACE_STATUS_ALLOCATED;
        return 0;
    case H5VL_DATASET_GET_STORAGE_SIZE:
        *args->args.get_storage_size.storage_size = 0;
        return 0;
    default:
        zh5_err(H5E_DATASET, H5E_UNSUPPORTED, "this dataset query (%d) is not supported", (int)args->op_type);
        return -1;
    }
}

herr_t zh5_dataset_specific(void *o, H5VL_dataset_specific_args_t *args, hid_t dxpl, void **req)
{
    zh5_obj *obj = o;
    (void)dxpl;
    (void)req;
    if (args->op_type == H5VL_DATASET_SET_EXTENT) {
        uint64_t shape[ZH5_MAX_RANK], old[ZH5_MAX_RANK];
        for (int d = 0; d < obj->rank; d++)
            shape[d] = args->args.set_extent.size[d];
        if (zarr_array_shape(obj->array, old, (size_t)obj->rank) != ZARR_OK)
            memcpy(old, shape, sizeof old);
        zarr_status st = zarr_array_resize(obj->array, shape, (size_t)obj->rank);
        if (st != ZARR_OK) {
            char what[1200];
            snprintf(what, sizeof what, "cannot resize the dataset \"/%s\"", obj->path);
            zh5_zerr(H5E_DATASET, H5E_CANTSET, st, what);
            return -1;
        }
        /* a phony dimension shared with another array by its old length is named for the new one */
        return zh5_dims_on_resize(obj->file, obj->path, old) < 0 ? -1 : 0;
    }
    return 0;   /* flush, refresh: libzarr stores every write before returning */
}

herr_t zh5_dataset_close(void *obj, hid_t dxpl, void **req)
{
    (void)dxpl;
    (void)req;
    zh5_obj_free(obj);
    return 0;
}
