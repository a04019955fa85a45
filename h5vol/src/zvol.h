/* Internal declarations of the Zarr VOL connector (libzarr_h5vol). */
#ifndef ZH5_ZVOL_H
#define ZH5_ZVOL_H

#include "h5api.h"
#include "json.h"
#include <zarr.h>

#define ZH5_CONNECTOR_NAME "zarr"
/* The connector's value: not (yet) registered with The HDF Group; chosen far from the values of the
   registered connectors (0-255 are HDF5's own, the registered ones lie in 512-600). */
#define ZH5_CONNECTOR_VALUE ((H5VL_class_value_t)32026)
#define ZH5_CONNECTOR_VERSION 1

/* The connector's settings (info.c). */
typedef struct zh5_info {
    int zarr_format;        /* of new hierarchies: 2 or 3 */
    char *store_options;    /* libzarr store options as a JSON object, or NULL */
} zh5_info;
void *zh5_info_copy(const void *info);
herr_t zh5_info_free(void *info);
herr_t zh5_info_cmp(int *cmp, const void *a, const void *b);
herr_t zh5_info_to_str(const void *info, char **str);
herr_t zh5_info_from_str(const char *str, void **info);
/* The settings a file access property list carries (a copy; zh5_info_free it); defaults when none. */
zh5_info *zh5_info_of(hid_t fapl);

/* The open hierarchy behind one H5Fcreate/H5Fopen, shared (counted) by every object opened in it. */
typedef struct zh5_file {
    int refs;
    char *location;       /* as given to H5Fopen: a path or a libzarr location */
    unsigned intent;      /* H5F_ACC_RDONLY or H5F_ACC_RDWR */
    zarr_group *root;
    unsigned long fileno;
    struct zh5_obj *file_obj;   /* the file object HDF5 knows (H5Iget_file_id), or NULL */
    zarr_store_options *options; /* from the connector settings, or NULL */
    struct zh5_detached *detached; /* dims.c: scales detached whose REFERENCE_LIST H5DS has yet to rewrite */
    int next_phony;       /* dims.c: the next phony_dim_N number; -1 until looked up */
} zh5_file;

typedef enum { ZH5_FILE, ZH5_GROUP, ZH5_DATASET, ZH5_ATTR, ZH5_NATIVE } zh5_kind;

/* An object of a native HDF5 file (native.c): HDF5's native connector's object, every call forwarded. Its
   first member is the kind, as a zh5_obj's, so a callback tells the two apart. */
typedef struct zh5_native {
    zh5_kind kind;   /* ZH5_NATIVE */
    void *under;     /* the native connector's object */
} zh5_native;

/* Every object the connector hands to HDF5. `path` is the node's path below the root ("" for the
   root, "a/b" below it); an attribute keeps its owner's path and kind. */
typedef struct zh5_obj {
    zh5_kind kind;
    zh5_file *file;
    char *path;
    zarr_group *group;   /* ZH5_FILE (the root), ZH5_GROUP */
    zarr_array *array;   /* ZH5_DATASET */
    /* ZH5_DATASET: the HDF5 view of the array */
    int rank;
    uint64_t unlimited;  /* bit d: dimension d is unlimited (the record's unlimited_dimensions) */
    zarr_data_type ztype;
    size_t esize;
    hid_t file_type;     /* the type as stored (with its byte order) */
    hid_t mem_native;    /* the same type in native byte order: libzarr's buffer layout */
    /* ZH5_ATTR */
    char *attr_name;
    zh5_kind owner_kind;
    hid_t attr_type, attr_space;
    int attr_computed;   /* a dimension-scale attribute computed from dimension names (dims.c), not stored */
    /* ZH5_DATASET made by H5Dcreate_anon and not linked yet (anon.c), else NULL */
    struct zh5_anon *anon;
} zh5_obj;

/* error.c: pushes an entry onto HDF5's default error stack; zh5_zerr adds libzarr's message. */
#define zh5_err(maj, min, ...) zh5_push(__func__, __LINE__, maj, min, __VA_ARGS__)
void zh5_push(const char *func, unsigned line, hid_t maj, hid_t min, const char *fmt, ...);
#define zh5_zerr(maj, min, status, what) zh5_push_zarr(__func__, __LINE__, maj, min, status, what)
void zh5_push_zarr(const char *func, unsigned line, hid_t maj, hid_t min, zarr_status status, const char *what);
hid_t zh5_minor_of(zarr_status status, hid_t fallback);

/* object.c: objects, paths and node lookups */
zh5_obj *zh5_obj_new(zh5_kind kind, zh5_file *file, const char *path);
void zh5_obj_free(zh5_obj *obj);
/* The path of `name` relative to the object's node ("/x" is from the root); malloc'd, NULL on a bad name. */
char *zh5_join(const zh5_obj *obj, const char *name);
/* The path of member `name` of the node a VOL location designates; malloc'd, NULL (pushed) on failure. */
char *zh5_member_path(const zh5_obj *obj, const H5VL_loc_params_t *loc, const char *name);
/* 0 when a new node at `path` has a group for parent, or lcpl creates intermediate groups; -1 (error
   pushed under `maj`, naming the `what` called `name`) when not. */
int zh5_parent_ready(zh5_file *file, char *path, hid_t lcpl, hid_t maj, const char *what, const char *name);
/* The path of the node a VOL location designates (by self or by name); malloc'd. */
char *zh5_loc_path(const zh5_obj *obj, const H5VL_loc_params_t *loc);
/* What is at `path`: ZARR_NODE_GROUP, ZARR_NODE_ARRAY, 0 when nothing, -1 on error (pushed). */
int zh5_node_type(zh5_file *file, const char *path);
zarr_group *zh5_open_group(zh5_file *file, const char *path);   /* NULL: error pushed */
zarr_array *zh5_open_array(zh5_file *file, const char *path);   /* NULL: error pushed */
/* The sorted child names of the group at `path` (with their kinds); -1 on error (pushed). */
int zh5_list(zh5_file *file, const char *path, char ***names, zarr_node_type **kinds, size_t *count);
void zh5_list_free(char **names, zarr_node_type *kinds, size_t count);
/* anon.c: anonymous datasets (H5Dcreate_anon), kept in a scratch hierarchy in memory until a hard link
   names them: then created at the link's path with the values copied, the object moved onto it. */
void *zh5_dataset_create_anon(zh5_obj *obj, hid_t lcpl, hid_t type, hid_t space, hid_t dcpl, hid_t dxpl, void **req);
herr_t zh5_dataset_link_anon(zh5_obj *ds, zh5_obj *at, const H5VL_loc_params_t *loc, hid_t lcpl, hid_t dxpl,
                             void **req);
/* Deletes the scratch node of a dataset never linked (zh5_obj_free). */
void zh5_anon_drop(zh5_obj *ds);
/* file.c: a file record for the hierarchy `root` at `name` (no references yet), NULL (pushed). */
zh5_file *zh5_file_new(const char *name, unsigned intent, zarr_group *root);

/* link.c: the token standing for the node at path; an identifier for a new group object at path. */
void zh5_token(const char *path, H5O_token_t *token);
/* The path of the node whose token is `token` (all 16 bytes, or the first 8 when the rest are zero: an old
   object reference's), searched through the hierarchy; malloc'd, NULL (pushed) when none. */
char *zh5_token_path(zh5_file *file, const H5O_token_t *token);
hid_t zh5_register_group(zh5_file *file, const char *path);

/* types.c: HDF5 datatype <-> Zarr data type */
/* The Zarr type for an HDF5 type; -1 (error pushed naming the type) when none fits. big_endian out. */
int zh5_type_to_zarr(hid_t type, zarr_data_type *ztype, int *big_endian);
/* The HDF5 type of a Zarr type (big_endian: the stored order); a new id, or -1 (error pushed). */
hid_t zh5_type_from_zarr(zarr_data_type ztype, size_t esize, int big_endian);
hid_t zh5_type_native(zarr_data_type ztype, size_t esize);
/* Converts n elements in place from src to dst (buf holds max of both sizes * n); <0 on error. */
herr_t zh5_convert(hid_t src, hid_t dst, size_t n, void *buf);

/* Whether the type is h5py's boolean (an int8 enum FALSE = 0, TRUE = 1). */
int zh5_is_h5py_bool(hid_t type);
/* enum.c: HDF5 enums (but h5py's booleans) as the base integers + `_libzarr_hdf5.enum`. */
int zh5_is_enum(hid_t type);
/* A new enum over `base` with the members of the enum `en`; -1 (error pushed). */
hid_t zh5_enum_rebase(hid_t en, hid_t base);
/* Records the enum `en` in the array's `_libzarr_hdf5.enum`; <0 (error pushed naming path). */
herr_t zh5_enum_record_on(zarr_array *array, hid_t en, const char *path);
/* Makes a dataset's integer types the recorded enum, when its array has the record; <0 on a bad record. */
herr_t zh5_enum_apply(zh5_obj *ds);
/* The record {"base": "<integer type>", "members": {"<name>": value, ...}} of the enum `en`; NULL on error. */
zj *zh5_enum_record(hid_t en);
/* An enum over `base` from a record's members; -1 (error pushed naming `path`) when they are not usable. */
hid_t zh5_enum_from_members(const zj *members, hid_t base, const char *path);

/* select.c: selections */
#define ZH5_MAX_RANK 32
/* The largest bounding box an irregular selection may be read through (bytes). */
#define ZH5_MAX_BOX ((uint64_t)1 << 31)
typedef struct {
    uint64_t start[ZH5_MAX_RANK], count[ZH5_MAX_RANK], step[ZH5_MAX_RANK];
} zh5_slab;
/* 1 when the file selection is one strided selection (filled in), 0 when not, -1 on error. */
int zh5_file_slab(hid_t fspace, int rank, const uint64_t *shape, zh5_slab *s);
/* A copy of fspace's selection moved into the bounding box lo..hi, over a box-sized extent. */
hid_t zh5_box_space(hid_t fspace, int rank, const hsize_t *lo, const hsize_t *hi);
typedef struct {
    const void *buf;
    size_t size;
} zh5_scatter_src;
herr_t zh5_scatter_cb(const void **src, size_t *used, void *data);
/* vlen.c: reads and writes of variable-length string datasets (n selected elements; packed: the
   memory selection is all of the memory space, in order). */
herr_t zh5_vlen_read(zh5_obj *ds, hid_t mtype, hid_t mspace, hid_t fspace, const uint64_t *shape, size_t n,
                     int packed, void *buf);
herr_t zh5_vlen_write(zh5_obj *ds, hid_t mtype, hid_t mspace, hid_t fspace, const uint64_t *shape, size_t n,
                      int packed, const void *buf);

/* The VOL callbacks, by class. */
void *zh5_file_create(const char *name, unsigned flags, hid_t fcpl, hid_t fapl, hid_t dxpl, void **req);
void *zh5_file_open(const char *name, unsigned flags, hid_t fapl, hid_t dxpl, void **req);
herr_t zh5_file_get(void *obj, H5VL_file_get_args_t *args, hid_t dxpl, void **req);
herr_t zh5_file_specific(void *obj, H5VL_file_specific_args_t *args, hid_t dxpl, void **req);
herr_t zh5_file_close(void *obj, hid_t dxpl, void **req);
void zh5_file_release(zh5_file *file);

void *zh5_group_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl, hid_t gcpl,
                       hid_t gapl, hid_t dxpl, void **req);
void *zh5_group_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t gapl, hid_t dxpl,
                     void **req);
herr_t zh5_group_get(void *obj, H5VL_group_get_args_t *args, hid_t dxpl, void **req);
herr_t zh5_group_specific(void *obj, H5VL_group_specific_args_t *args, hid_t dxpl, void **req);
herr_t zh5_group_close(void *obj, hid_t dxpl, void **req);

herr_t zh5_link_create(H5VL_link_create_args_t *args, void *obj, const H5VL_loc_params_t *loc, hid_t lcpl,
                       hid_t lapl, hid_t dxpl, void **req);
herr_t zh5_link_copy(void *src, const H5VL_loc_params_t *loc1, void *dst, const H5VL_loc_params_t *loc2, hid_t lcpl,
                     hid_t lapl, hid_t dxpl, void **req);
herr_t zh5_link_move(void *src, const H5VL_loc_params_t *loc1, void *dst, const H5VL_loc_params_t *loc2, hid_t lcpl,
                     hid_t lapl, hid_t dxpl, void **req);
herr_t zh5_object_copy(void *src, const H5VL_loc_params_t *loc1, const char *src_name, void *dst,
                       const H5VL_loc_params_t *loc2, const char *dst_name, hid_t ocpypl, hid_t lcpl, hid_t dxpl,
                       void **req);
herr_t zh5_link_get(void *obj, const H5VL_loc_params_t *loc, H5VL_link_get_args_t *args, hid_t dxpl, void **req);
herr_t zh5_link_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_link_specific_args_t *args, hid_t dxpl,
                         void **req);
void *zh5_object_open(void *obj, const H5VL_loc_params_t *loc, H5I_type_t *opened_type, hid_t dxpl, void **req);
herr_t zh5_object_get(void *obj, const H5VL_loc_params_t *loc, H5VL_object_get_args_t *args, hid_t dxpl,
                      void **req);
herr_t zh5_object_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_object_specific_args_t *args,
                           hid_t dxpl, void **req);

void *zh5_dataset_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl, hid_t type,
                         hid_t space, hid_t dcpl, hid_t dapl, hid_t dxpl, void **req);
void *zh5_dataset_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t dapl, hid_t dxpl,
                       void **req);
herr_t zh5_dataset_read(size_t count, void *dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[],
                        hid_t dxpl, void *buf[], void **req);
herr_t zh5_dataset_write(size_t count, void *dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[],
                         hid_t dxpl, const void *buf[], void **req);
herr_t zh5_dataset_get(void *obj, H5VL_dataset_get_args_t *args, hid_t dxpl, void **req);
herr_t zh5_dataset_specific(void *obj, H5VL_dataset_specific_args_t *args, hid_t dxpl, void **req);
herr_t zh5_dataset_close(void *obj, hid_t dxpl, void **req);
/* dataset.c: the dataset object for an open array (takes the array handle); NULL: error pushed. */
zh5_obj *zh5_dataset_wrap(zh5_file *file, const char *path, zarr_array *array);

void *zh5_attr_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t type, hid_t space,
                      hid_t acpl, hid_t aapl, hid_t dxpl, void **req);
void *zh5_attr_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t aapl, hid_t dxpl,
                    void **req);
herr_t zh5_attr_read(void *attr, hid_t mem_type, void *buf, hid_t dxpl, void **req);
herr_t zh5_attr_write(void *attr, hid_t mem_type, const void *buf, hid_t dxpl, void **req);
herr_t zh5_attr_get(void *obj, H5VL_attr_get_args_t *args, hid_t dxpl, void **req);
herr_t zh5_attr_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_attr_specific_args_t *args, hid_t dxpl,
                         void **req);
herr_t zh5_attr_close(void *attr, hid_t dxpl, void **req);
/* attrtypes.c: the attribute types recorded in the reserved attribute `_libzarr_hdf5` (attribute_types). */
#define ZH5_RESERVED_ATTR "_libzarr_hdf5"
/* The record as stored is a JSON string holding the record object's text (h5tozarr and the connector write
   it so since 0.4: xarray writes a string attribute to netCDF, an object it refuses); older stores hold the
   object itself. zh5_record_load turns a string that holds a JSON object into that object in `attrs` (any
   other string stays: not the project's record); 0, or -1 when out of memory. */
int zh5_record_load(zj *attrs);
/* The attributes object as JSON text to store (malloc'd; NULL when out of memory), an object record written
   as the string holding its text; `attrs` is the same after the call. */
char *zh5_record_dump(zj *attrs);
/* ncattrs.c: netCDF-4's and HDF5's internal attributes (_Netcdf4Dimid, _NCProperties, CLASS, NAME, ...) kept
   in the record as `hdf5_attributes`, not as plain Zarr attributes. zh5_nc_internal: 1 for such a name.
   zh5_nc_show moves them from the loaded record object into `attrs` (as HDF5 sees them), zh5_nc_hide
   from `attrs` into the record (as stored); 0, or -1 when out of memory. zh5_nc_array_forms writes an
   array's `_FillValue` and `missing_value` as xarray reads them (one value; a Zarr v3 float array's
   `_FillValue` as base64 of the float64; floats as the exact float64); 0, or -1 when out of memory. */
int zh5_nc_internal(const char *name);
int zh5_nc_show(zj *attrs);
int zh5_nc_hide(zj *attrs);
int zh5_nc_array_forms(zj *attrs, int zarr_format, zarr_data_type array_type);
/* The recorded name of an HDF5 type (int8 ... float64, bool, string, char); NULL when none. */
const char *zh5_attr_type_name(hid_t type);
/* 1 (type and size set) when tname names a numeric type, else 0. */
int zh5_attr_numeric_type(const char *tname, zarr_data_type *type, size_t *size);
/* The recorded name of a numeric Zarr data type (int8 ... float64); NULL for other types. */
const char *zh5_attr_numeric_name(zarr_data_type type);
/* The type recorded for attribute `name` in the attributes object, or NULL. */
const char *zh5_attr_recorded_type(const zj *attrs, const char *name);
/* Records tname for `name` (NULL: forgets it); 0, or -1 when out of memory. */
int zh5_attr_record_type(zj *attrs, const char *name, const char *tname);
/* The record of attribute `name` (a type name or an enum/compound record, attrrecord.c), or NULL. */
const zj *zh5_attr_recorded(const zj *attrs, const char *name);
/* Records `rec` (taken over; NULL: forgets the name's record); 0, or -1 when out of memory. */
int zh5_attr_record(zj *attrs, const char *name, zj *rec);
/* Moves the record of attribute `from` to `to` (nothing when there is none); 0, or -1. */
int zh5_attr_rename_record(zj *attrs, const char *from, const char *to);
/* Replaces, in the value of an attribute recorded as numeric type tname, every string leaf that encodes a
   number of that type by the number: "NaN", "Infinity", "-Infinity" and "0x" + hex bits (Zarr v3's forms,
   floats), base64 of the value's little-endian bytes, or for floats base64 of a little-endian float64
   (xarray's `_FillValue`). Other strings stay. 0, or -1 when out of memory. */
int zh5_attr_decode_numbers(zj *value, const char *tname);
/* dims.c: dimension scales (H5DS) as Zarr dimension names; the attributes DIMENSION_LIST, REFERENCE_LIST and
   CLASS computed from them, and their writes turned into names. */
/* Whether the computed attributes are shown: libzarr_h5vol_v1api is loaded (it answers the references). */
int zh5_dims_enabled(void);
/* Adds the computed attributes of the node at path to `attrs` (a copy for reading, never stored), with their
   records; 0, or -1 when out of memory. */
int zh5_dims_add(zh5_file *file, const char *path, int kind, zj *attrs);
/* Whether an attribute record is that of a computed attribute. */
int zh5_dims_is_computed(const zj *rec);
/* The HDF5 type and space of a computed attribute; 0, or -1. */
int zh5_dims_describe(const zj *rec, const zj *value, hid_t *type, hid_t *space);
/* Reads a computed attribute into buf as mem_type; 0, or -1 (pushed, naming `where`). */
int zh5_dims_read(const zj *rec, const zj *value, hid_t mem_type, void *buf, const char *where);
/* Whether attribute `name` of an array is a computed one that writing turns into dimension names. */
int zh5_dims_is_written(const char *name);
/* CLASS = "DIMENSION_SCALE" written on the array at path: a 1-D array's dimension named after it (1), or
   nothing for other ranks (0, the attribute stored as any other); -1 (pushed). */
int zh5_dims_make_scale(zh5_file *file, const char *path);
/* Names every dimension of the array just created at path netCDF's phony_dim_N (shared by length within
   its group) until a scale is attached; 0, or -1 (pushed). */
int zh5_dims_on_create(zh5_file *file, const char *path, int rank);
/* After a resize of the array at path (old_shape: before): a phony-named dimension whose length changed is
   named again (shared by its new length); 0, or -1 (pushed). */
int zh5_dims_on_resize(zh5_file *file, const char *path, const uint64_t *old_shape);
/* Whether the array at path is a coordinate array (1-D, its dimension named after it). */
int zh5_dims_is_scale(zh5_file *file, const char *path);
/* DIMENSION_LIST written on the array at path (hvl_t of hobj_ref_t per dimension): its names; 0, or -1. */
int zh5_dims_write_list(zh5_file *file, const char *path, hid_t mem_type, const void *buf, const char *where);
/* A computed attribute deleted (H5DSdetach_scale's last detach): 0, or -1. */
int zh5_dims_delete(zh5_file *file, const char *path, const char *name);
/* Forgets the file's pending detaches (when it closes). */
void zh5_dims_forget(zh5_file *file);
/* attrrecord.c: enum and compound attributes (attribute_types entries {"enum": ...}, {"compound": ...}) */
/* Their failures keep their reason until this pushes it (failed != 0) onto HDF5's error stack, after the
   caller's last HDF5 call (each clears the stack); it forgets the reason either way. */
void zh5_record_flush(int failed);
/* Whether the type is recorded as such a record: a compound, or an enum other than h5py's booleans. */
int zh5_is_struct_type(hid_t type);
/* The record of such a type; NULL (error pushed, naming `where`) when a field has no JSON equivalent. */
zj *zh5_struct_record(hid_t type, const char *where);
/* The packed native HDF5 type a record (a number/bool name or an enum/compound record) describes; -1. */
hid_t zh5_record_native_type(const zj *rec, const char *where);
/* The shape of a nest of JSON arrays whose leaves are not arrays; -1 when not rectangular. */
int zh5_record_shape(const zj *value, int *rank, hsize_t *dims);
/* The elements of buf (native type described by rec) as nested JSON arrays of the space's shape. */
zj *zh5_record_nest(const zj *rec, hid_t native, hid_t space, const unsigned char *buf);
/* The leaves of `value` (of shape rank/dims) into buf in the native type; <0 (error pushed). */
herr_t zh5_record_unnest(const zj *rec, hid_t native, const zj *value, int rank, const hsize_t *dims,
                         unsigned char *buf, const char *where);
/* attr.c: the number of attributes of the node at path (kind: its kind); -1 on error. */
int zh5_attr_count(zh5_file *file, const char *path, zarr_node_type kind);

/* native.c: native HDF5 files passed through to HDF5's native connector. */
int zh5n_is(const void *obj);              /* whether obj is a zh5_native */
void *zh5n_under(void *obj);               /* the native object of a zh5_native, else obj */
int zh5n_is_hdf5_file(const char *path);   /* a regular file with HDF5's signature at 0, 512, 1024, ... */
int zh5n_is_hdf5_name(const char *name);   /* a local name ending .h5, .hdf5, .he5, .hdf, .nc, .nc4, .cdf */
void *zh5n_file_create(const char *name, unsigned flags, hid_t fcpl, hid_t fapl, hid_t dxpl, void **req);
void *zh5n_file_open(const char *name, unsigned flags, hid_t fapl, hid_t dxpl, void **req);
herr_t zh5n_file_get(void *obj, H5VL_file_get_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_file_specific(void *obj, H5VL_file_specific_args_t *args, hid_t dxpl, void **req);
/* H5Fdelete of a native HDF5 file (args->op_type H5VL_FILE_DELETE). */
herr_t zh5n_file_delete(H5VL_file_specific_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_file_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_file_close(void *obj, hid_t dxpl, void **req);
void *zh5n_group_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl, hid_t gcpl,
                        hid_t gapl, hid_t dxpl, void **req);
void *zh5n_group_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t gapl, hid_t dxpl,
                      void **req);
herr_t zh5n_group_get(void *obj, H5VL_group_get_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_group_specific(void *obj, H5VL_group_specific_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_group_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_group_close(void *obj, hid_t dxpl, void **req);
void *zh5n_dataset_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl, hid_t type,
                          hid_t space, hid_t dcpl, hid_t dapl, hid_t dxpl, void **req);
void *zh5n_dataset_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t dapl, hid_t dxpl,
                        void **req);
herr_t zh5n_dataset_read(size_t count, void *dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[],
                         hid_t dxpl, void *buf[], void **req);
herr_t zh5n_dataset_write(size_t count, void *dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[],
                          hid_t dxpl, const void *buf[], void **req);
herr_t zh5n_dataset_get(void *obj, H5VL_dataset_get_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_dataset_specific(void *obj, H5VL_dataset_specific_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_dataset_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_dataset_close(void *obj, hid_t dxpl, void **req);
void *zh5n_attr_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t type, hid_t space,
                       hid_t acpl, hid_t aapl, hid_t dxpl, void **req);
void *zh5n_attr_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t aapl, hid_t dxpl,
                     void **req);
herr_t zh5n_attr_read(void *obj, hid_t mem_type, void *buf, hid_t dxpl, void **req);
herr_t zh5n_attr_write(void *obj, hid_t mem_type, const void *buf, hid_t dxpl, void **req);
herr_t zh5n_attr_get(void *obj, H5VL_attr_get_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_attr_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_attr_specific_args_t *args, hid_t dxpl,
                          void **req);
herr_t zh5n_attr_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_attr_close(void *obj, hid_t dxpl, void **req);
void *zh5n_datatype_commit(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t type, hid_t lcpl,
                           hid_t tcpl, hid_t tapl, hid_t dxpl, void **req);
void *zh5n_datatype_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t tapl, hid_t dxpl,
                         void **req);
herr_t zh5n_datatype_get(void *obj, H5VL_datatype_get_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_datatype_specific(void *obj, H5VL_datatype_specific_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_datatype_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_datatype_close(void *obj, hid_t dxpl, void **req);
herr_t zh5n_link_create(H5VL_link_create_args_t *args, void *obj, const H5VL_loc_params_t *loc, hid_t lcpl,
                        hid_t lapl, hid_t dxpl, void **req);
herr_t zh5n_link_copy(void *src, const H5VL_loc_params_t *loc1, void *dst, const H5VL_loc_params_t *loc2,
                      hid_t lcpl, hid_t lapl, hid_t dxpl, void **req);
herr_t zh5n_link_move(void *src, const H5VL_loc_params_t *loc1, void *dst, const H5VL_loc_params_t *loc2,
                      hid_t lcpl, hid_t lapl, hid_t dxpl, void **req);
herr_t zh5n_link_get(void *obj, const H5VL_loc_params_t *loc, H5VL_link_get_args_t *args, hid_t dxpl, void **req);
herr_t zh5n_link_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_link_specific_args_t *args, hid_t dxpl,
                          void **req);
herr_t zh5n_link_optional(void *obj, const H5VL_loc_params_t *loc, H5VL_optional_args_t *args, hid_t dxpl,
                          void **req);
void *zh5n_object_open(void *obj, const H5VL_loc_params_t *loc, H5I_type_t *opened_type, hid_t dxpl, void **req);
herr_t zh5n_object_copy(void *src, const H5VL_loc_params_t *loc1, const char *src_name, void *dst,
                        const H5VL_loc_params_t *loc2, const char *dst_name, hid_t ocpypl, hid_t lcpl, hid_t dxpl,
                        void **req);
herr_t zh5n_object_get(void *obj, const H5VL_loc_params_t *loc, H5VL_object_get_args_t *args, hid_t dxpl,
                       void **req);
herr_t zh5n_object_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_object_specific_args_t *args,
                            hid_t dxpl, void **req);
herr_t zh5n_object_optional(void *obj, const H5VL_loc_params_t *loc, H5VL_optional_args_t *args, hid_t dxpl,
                            void **req);
herr_t zh5n_get_conn_cls(void *obj, H5VL_get_conn_lvl_t lvl, const H5VL_class_t **cls);
herr_t zh5n_opt_query(void *obj, H5VL_subclass_t cls, int opt_type, uint64_t *flags);
herr_t zh5n_blob_put(void *obj, const void *buf, size_t size, void *blob_id, void *ctx);
herr_t zh5n_blob_get(void *obj, const void *blob_id, void *buf, size_t size, void *ctx);
herr_t zh5n_blob_specific(void *obj, void *blob_id, H5VL_blob_specific_args_t *args);
herr_t zh5n_blob_optional(void *obj, void *blob_id, H5VL_optional_args_t *args);
herr_t zh5n_token_cmp(void *obj, const H5O_token_t *t1, const H5O_token_t *t2, int *cmp);
herr_t zh5n_token_to_str(void *obj, H5I_type_t type, const H5O_token_t *token, char **str);
herr_t zh5n_token_from_str(void *obj, H5I_type_t type, const char *str, H5O_token_t *token);
herr_t zh5n_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req);
void *zh5n_get_object(const void *obj);
herr_t zh5n_get_wrap_ctx(const void *obj, void **ctx);
void *zh5n_wrap_object(void *obj, H5I_type_t type, void *ctx);
void *zh5n_unwrap_object(void *obj);
herr_t zh5n_free_wrap_ctx(void *ctx);

#endif
