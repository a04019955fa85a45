/* The HDF5 API as the connector sees it: hdf5.h and the VOL headers, plus the lists of HDF5
 * functions and global identifiers that h5api.c forwards to the HDF5 library that loaded the plugin.
 * A function or identifier the connector uses must be listed here (the link fails otherwise, as the
 * plugin has no link-time dependency on HDF5). */
#ifndef ZH5_H5API_H
#define ZH5_H5API_H

#include <hdf5.h>

/* HDF5 before 1.14 (Debian 12's libhdf5-dev is 1.10) has no VOL connector interface to build against:
   refused here, before its missing VOL headers would give a less clear error. */
#if H5_VERS_MAJOR < 1 || (H5_VERS_MAJOR == 1 && H5_VERS_MINOR < 14)
#error "the Zarr VOL connector needs the headers of HDF5 >= 1.14 (1.14 or 2.x); these are older: pass -DZARR_H5VOL_HDF5_DIR=<dir of an HDF5 1.14/2.x hdf5-config.cmake>, or let CMake build HDF5 1.14 (docs/h5vol.md)"
#endif

#include <H5PLextern.h>
#include <H5VLconnector.h>
#include <H5VLconnector_passthru.h>
#include <H5VLnative.h>

/* The VOL interface version 3 (H5VL_VERSION): HDF5 1.14 and 2.x. The structures, callbacks and functions the
   connector uses are the same in both (docs/h5vol.md lists what 2.x changed), so one build serves both. */
#if (H5_VERS_MAJOR == 1 && H5_VERS_MINOR < 14) || H5VL_VERSION != 3
#error "the Zarr VOL connector needs the headers of HDF5 1.14 or 2.x (VOL interface version 3)"
#endif

/* X(return type, name, (parameters), (arguments)) */
#define ZH5_FUNCS(X)                                                                                   \
    X(herr_t, H5free_memory, (void *a), (a))                                                           \
    X(void *, H5allocate_memory, (size_t a, hbool_t b), (a, b))                                        \
    X(herr_t, H5Pget_vol_info, (hid_t a, void **b), (a, b))                                                           \
    X(hid_t, H5Pcreate, (hid_t a), (a))                                                                \
    X(herr_t, H5Pclose, (hid_t a), (a))                                                                \
    X(hid_t, H5Pcopy, (hid_t a), (a))                                                                  \
    X(int, H5Pget_chunk, (hid_t a, int b, hsize_t *c), (a, b, c))                                      \
    X(herr_t, H5Pset_chunk, (hid_t a, int b, const hsize_t *c), (a, b, c))                             \
    X(H5D_layout_t, H5Pget_layout, (hid_t a), (a))                                                     \
    X(int, H5Pget_nfilters, (hid_t a), (a))                                                            \
    X(H5Z_filter_t, H5Pget_filter2,                                                                    \
      (hid_t a, unsigned b, unsigned *c, size_t *d, unsigned *e, size_t f, char *g, unsigned *h),      \
      (a, b, c, d, e, f, g, h))                                                                        \
    X(herr_t, H5Pset_deflate, (hid_t a, unsigned b), (a, b))                                           \
    X(herr_t, H5Pset_shuffle, (hid_t a), (a))                                                          \
    X(herr_t, H5Pset_filter, (hid_t a, H5Z_filter_t b, unsigned c, size_t d, const unsigned *e),       \
      (a, b, c, d, e))                                                                                 \
    X(herr_t, H5Pfill_value_defined, (hid_t a, H5D_fill_value_t *b), (a, b))                           \
    X(herr_t, H5Pget_fill_value, (hid_t a, hid_t b, void *c), (a, b, c))                               \
    X(herr_t, H5Pset_fill_value, (hid_t a, hid_t b, const void *c), (a, b, c))                         \
    X(herr_t, H5Pget_create_intermediate_group, (hid_t a, unsigned *b), (a, b))                        \
    X(hid_t, H5Tcopy, (hid_t a), (a))                                                                  \
    X(herr_t, H5Tclose, (hid_t a), (a))                                                                \
    X(H5T_class_t, H5Tget_class, (hid_t a), (a))                                                       \
    X(size_t, H5Tget_size, (hid_t a), (a))                                                             \
    X(herr_t, H5Tset_size, (hid_t a, size_t b), (a, b))                                                \
    X(H5T_sign_t, H5Tget_sign, (hid_t a), (a))                                                         \
    X(H5T_order_t, H5Tget_order, (hid_t a), (a))                                                       \
    X(herr_t, H5Tset_order, (hid_t a, H5T_order_t b), (a, b))                                          \
    X(size_t, H5Tget_precision, (hid_t a), (a))                                                        \
    X(int, H5Tget_offset, (hid_t a), (a))                                                              \
    X(herr_t, H5Tget_fields, (hid_t a, size_t *b, size_t *c, size_t *d, size_t *e, size_t *f),         \
      (a, b, c, d, e, f))                                                                              \
    X(herr_t, H5Tset_fields, (hid_t a, size_t b, size_t c, size_t d, size_t e, size_t f),              \
      (a, b, c, d, e, f))                                                                              \
    X(size_t, H5Tget_ebias, (hid_t a), (a))                                                            \
    X(herr_t, H5Tset_ebias, (hid_t a, size_t b), (a, b))                                               \
    X(htri_t, H5Tequal, (hid_t a, hid_t b), (a, b))                                                    \
    X(herr_t, H5Tconvert, (hid_t a, hid_t b, size_t c, void *d, void *e, hid_t f), (a, b, c, d, e, f)) \
    X(hid_t, H5Tget_super, (hid_t a), (a))                                                             \
    X(hid_t, H5Tvlen_create, (hid_t a), (a))                                                           \
    X(int, H5Tget_member_index, (hid_t a, const char *b), (a, b))                                      \
    X(int, H5Tget_nmembers, (hid_t a), (a))                                                            \
    X(char *, H5Tget_member_name, (hid_t a, unsigned b), (a, b))                                       \
    X(herr_t, H5Tget_member_value, (hid_t a, unsigned b, void *c), (a, b, c))                          \
    X(hid_t, H5Tenum_create, (hid_t a), (a))                                                           \
    X(hid_t, H5Tcreate, (H5T_class_t a, size_t b), (a, b))                                             \
    X(herr_t, H5Tinsert, (hid_t a, const char *b, size_t c, hid_t d), (a, b, c, d))                    \
    X(hid_t, H5Tget_member_type, (hid_t a, unsigned b), (a, b))                                        \
    X(size_t, H5Tget_member_offset, (hid_t a, unsigned b), (a, b))                                     \
    X(hid_t, H5Tarray_create2, (hid_t a, unsigned b, const hsize_t *c), (a, b, c))                                                           \
    X(herr_t, H5Tenum_insert, (hid_t a, const char *b, const void *c), (a, b, c))                      \
    X(htri_t, H5Tis_variable_str, (hid_t a), (a))                                                      \
    X(herr_t, H5Tset_cset, (hid_t a, H5T_cset_t b), (a, b))                                            \
    X(H5T_str_t, H5Tget_strpad, (hid_t a), (a))                                                        \
    X(herr_t, H5Tset_strpad, (hid_t a, H5T_str_t b), (a, b))                                                        \
    X(hid_t, H5Screate, (H5S_class_t a), (a))                                                          \
    X(hid_t, H5Screate_simple, (int a, const hsize_t *b, const hsize_t *c), (a, b, c))                 \
    X(hid_t, H5Scopy, (hid_t a), (a))                                                                  \
    X(herr_t, H5Sclose, (hid_t a), (a))                                                                \
    X(H5S_class_t, H5Sget_simple_extent_type, (hid_t a), (a))                                          \
    X(int, H5Sget_simple_extent_ndims, (hid_t a), (a))                                                 \
    X(int, H5Sget_simple_extent_dims, (hid_t a, hsize_t *b, hsize_t *c), (a, b, c))                    \
    X(hssize_t, H5Sget_simple_extent_npoints, (hid_t a), (a))                                          \
    X(hssize_t, H5Sget_select_npoints, (hid_t a), (a))                                                 \
    X(H5S_sel_type, H5Sget_select_type, (hid_t a), (a))                                               \
    X(htri_t, H5Sselect_valid, (hid_t a), (a))                                                         \
    X(htri_t, H5Sis_regular_hyperslab, (hid_t a), (a))                                                 \
    X(htri_t, H5Sget_regular_hyperslab, (hid_t a, hsize_t *b, hsize_t *c, hsize_t *d, hsize_t *e),     \
      (a, b, c, d, e))                                                                                 \
    X(herr_t, H5Sget_select_bounds, (hid_t a, hsize_t *b, hsize_t *c), (a, b, c))                      \
    X(hssize_t, H5Sget_select_hyper_nblocks, (hid_t a), (a))                                           \
    X(herr_t, H5Sget_select_hyper_blocklist, (hid_t a, hsize_t b, hsize_t c, hsize_t *d), (a, b, c, d))                      \
    X(herr_t, H5Sget_select_elem_pointlist, (hid_t a, hsize_t b, hsize_t c, hsize_t *d), (a, b, c, d)) \
    X(herr_t, H5Sselect_copy, (hid_t a, hid_t b), (a, b))                                              \
    X(herr_t, H5Sselect_adjust, (hid_t a, const hssize_t *b), (a, b))                                  \
    X(herr_t, H5Dgather, (hid_t a, const void *b, hid_t c, size_t d, void *e, H5D_gather_func_t f, void *g), \
      (a, b, c, d, e, f, g))                                                                           \
    X(herr_t, H5Dscatter, (H5D_scatter_func_t a, void *b, hid_t c, hid_t d, void *e), (a, b, c, d, e)) \
    X(hid_t, H5VLwrap_register, (void *a, H5I_type_t b), (a, b))                                       \
    X(int, H5Idec_ref, (hid_t a), (a))                                                                 \
    X(herr_t, H5Iiterate, (H5I_type_t a, H5I_iterate_func_t b, void *c), (a, b, c))                    \
    X(void *, H5VLobject, (hid_t a), (a))                                                              \
    X(ssize_t, H5VLget_connector_name, (hid_t a, char *b, size_t c), (a, b, c))                        \
    X(hid_t, H5VLget_connector_id_by_name, (const char *a), (a))                                       \
    X(herr_t, H5Pset_vol, (hid_t a, hid_t b, const void *c), (a, b, c))                                \
    X(herr_t, H5VLobject_is_native, (hid_t a, hbool_t *b), (a, b))                                     \
    X(void *, H5VLget_object, (void *a, hid_t b), (a, b))                                              \
    X(herr_t, H5VLget_wrap_ctx, (void *a, hid_t b, void **c), (a, b, c))                               \
    X(void *, H5VLwrap_object, (void *a, H5I_type_t b, hid_t c, void *d), (a, b, c, d))                \
    X(void *, H5VLunwrap_object, (void *a, hid_t b), (a, b))                                           \
    X(herr_t, H5VLfree_wrap_ctx, (void *a, hid_t b), (a, b))                                           \
    X(void *, H5VLattr_create, (void *a, const H5VL_loc_params_t *b, hid_t c, const char *d, hid_t e, hid_t f, \
      hid_t g, hid_t h, hid_t i, void **j), (a, b, c, d, e, f, g, h, i, j))                             \
    X(void *, H5VLattr_open, (void *a, const H5VL_loc_params_t *b, hid_t c, const char *d, hid_t e, hid_t f, \
      void **g), (a, b, c, d, e, f, g))                                                                \
    X(herr_t, H5VLattr_read, (void *a, hid_t b, hid_t c, void *d, hid_t e, void **f), (a, b, c, d, e, f)) \
    X(herr_t, H5VLattr_write, (void *a, hid_t b, hid_t c, const void *d, hid_t e, void **f), (a, b, c, d, e, f)) \
    X(herr_t, H5VLattr_get, (void *a, hid_t b, H5VL_attr_get_args_t *c, hid_t d, void **e), (a, b, c, d, e)) \
    X(herr_t, H5VLattr_specific, (void *a, const H5VL_loc_params_t *b, hid_t c, H5VL_attr_specific_args_t *d, \
      hid_t e, void **f), (a, b, c, d, e, f))                                                          \
    X(herr_t, H5VLattr_optional, (void *a, hid_t b, H5VL_optional_args_t *c, hid_t d, void **e), (a, b, c, d, e)) \
    X(herr_t, H5VLattr_close, (void *a, hid_t b, hid_t c, void **d), (a, b, c, d))                     \
    X(void *, H5VLdataset_create, (void *a, const H5VL_loc_params_t *b, hid_t c, const char *d, hid_t e, \
      hid_t f, hid_t g, hid_t h, hid_t i, hid_t j, void **k), (a, b, c, d, e, f, g, h, i, j, k))       \
    X(void *, H5VLdataset_open, (void *a, const H5VL_loc_params_t *b, hid_t c, const char *d, hid_t e, \
      hid_t f, void **g), (a, b, c, d, e, f, g))                                                       \
    X(herr_t, H5VLdataset_read, (size_t a, void *b[], hid_t c, hid_t d[], hid_t e[], hid_t f[], hid_t g, \
      void *h[], void **i), (a, b, c, d, e, f, g, h, i))                                               \
    X(herr_t, H5VLdataset_write, (size_t a, void *b[], hid_t c, hid_t d[], hid_t e[], hid_t f[], hid_t g, \
      const void *h[], void **i), (a, b, c, d, e, f, g, h, i))                                         \
    X(herr_t, H5VLdataset_get, (void *a, hid_t b, H5VL_dataset_get_args_t *c, hid_t d, void **e), (a, b, c, d, e)) \
    X(herr_t, H5VLdataset_specific, (void *a, hid_t b, H5VL_dataset_specific_args_t *c, hid_t d, void **e), \
      (a, b, c, d, e))                                                                                 \
    X(herr_t, H5VLdataset_optional, (void *a, hid_t b, H5VL_optional_args_t *c, hid_t d, void **e), (a, b, c, d, e)) \
    X(herr_t, H5VLdataset_close, (void *a, hid_t b, hid_t c, void **d), (a, b, c, d))                  \
    X(void *, H5VLdatatype_commit, (void *a, const H5VL_loc_params_t *b, hid_t c, const char *d, hid_t e, \
      hid_t f, hid_t g, hid_t h, hid_t i, void **j), (a, b, c, d, e, f, g, h, i, j))                   \
    X(void *, H5VLdatatype_open, (void *a, const H5VL_loc_params_t *b, hid_t c, const char *d, hid_t e, \
      hid_t f, void **g), (a, b, c, d, e, f, g))                                                       \
    X(herr_t, H5VLdatatype_get, (void *a, hid_t b, H5VL_datatype_get_args_t *c, hid_t d, void **e), (a, b, c, d, e)) \
    X(herr_t, H5VLdatatype_specific, (void *a, hid_t b, H5VL_datatype_specific_args_t *c, hid_t d, void **e), \
      (a, b, c, d, e))                                                                                 \
    X(herr_t, H5VLdatatype_optional, (void *a, hid_t b, H5VL_optional_args_t *c, hid_t d, void **e), (a, b, c, d, e)) \
    X(herr_t, H5VLdatatype_close, (void *a, hid_t b, hid_t c, void **d), (a, b, c, d))                 \
    X(void *, H5VLfile_create, (const char *a, unsigned b, hid_t c, hid_t d, hid_t e, void **f), (a, b, c, d, e, f)) \
    X(void *, H5VLfile_open, (const char *a, unsigned b, hid_t c, hid_t d, void **e), (a, b, c, d, e)) \
    X(herr_t, H5VLfile_get, (void *a, hid_t b, H5VL_file_get_args_t *c, hid_t d, void **e), (a, b, c, d, e)) \
    X(herr_t, H5VLfile_specific, (void *a, hid_t b, H5VL_file_specific_args_t *c, hid_t d, void **e), \
      (a, b, c, d, e))                                                                                 \
    X(herr_t, H5VLfile_optional, (void *a, hid_t b, H5VL_optional_args_t *c, hid_t d, void **e), (a, b, c, d, e)) \
    X(herr_t, H5VLfile_close, (void *a, hid_t b, hid_t c, void **d), (a, b, c, d))                     \
    X(void *, H5VLgroup_create, (void *a, const H5VL_loc_params_t *b, hid_t c, const char *d, hid_t e, \
      hid_t f, hid_t g, hid_t h, void **i), (a, b, c, d, e, f, g, h, i))                               \
    X(void *, H5VLgroup_open, (void *a, const H5VL_loc_params_t *b, hid_t c, const char *d, hid_t e, \
      hid_t f, void **g), (a, b, c, d, e, f, g))                                                       \
    X(herr_t, H5VLgroup_get, (void *a, hid_t b, H5VL_group_get_args_t *c, hid_t d, void **e), (a, b, c, d, e)) \
    X(herr_t, H5VLgroup_specific, (void *a, hid_t b, H5VL_group_specific_args_t *c, hid_t d, void **e), \
      (a, b, c, d, e))                                                                                 \
    X(herr_t, H5VLgroup_optional, (void *a, hid_t b, H5VL_optional_args_t *c, hid_t d, void **e), (a, b, c, d, e)) \
    X(herr_t, H5VLgroup_close, (void *a, hid_t b, hid_t c, void **d), (a, b, c, d))                    \
    X(herr_t, H5VLlink_create, (H5VL_link_create_args_t *a, void *b, const H5VL_loc_params_t *c, hid_t d, \
      hid_t e, hid_t f, hid_t g, void **h), (a, b, c, d, e, f, g, h))                                  \
    X(herr_t, H5VLlink_copy, (void *a, const H5VL_loc_params_t *b, void *c, const H5VL_loc_params_t *d, \
      hid_t e, hid_t f, hid_t g, hid_t h, void **i), (a, b, c, d, e, f, g, h, i))                      \
    X(herr_t, H5VLlink_move, (void *a, const H5VL_loc_params_t *b, void *c, const H5VL_loc_params_t *d, \
      hid_t e, hid_t f, hid_t g, hid_t h, void **i), (a, b, c, d, e, f, g, h, i))                      \
    X(herr_t, H5VLlink_get, (void *a, const H5VL_loc_params_t *b, hid_t c, H5VL_link_get_args_t *d, \
      hid_t e, void **f), (a, b, c, d, e, f))                                                          \
    X(herr_t, H5VLlink_specific, (void *a, const H5VL_loc_params_t *b, hid_t c, H5VL_link_specific_args_t *d, \
      hid_t e, void **f), (a, b, c, d, e, f))                                                          \
    X(herr_t, H5VLlink_optional, (void *a, const H5VL_loc_params_t *b, hid_t c, H5VL_optional_args_t *d, \
      hid_t e, void **f), (a, b, c, d, e, f))                                                          \
    X(void *, H5VLobject_open, (void *a, const H5VL_loc_params_t *b, hid_t c, H5I_type_t *d, hid_t e, \
      void **f), (a, b, c, d, e, f))                                                                   \
    X(herr_t, H5VLobject_copy, (void *a, const H5VL_loc_params_t *b, const char *c, void *d,           \
      const H5VL_loc_params_t *e, const char *f, hid_t g, hid_t h, hid_t i, hid_t j, void **k),        \
      (a, b, c, d, e, f, g, h, i, j, k))                                                               \
    X(herr_t, H5VLobject_get, (void *a, const H5VL_loc_params_t *b, hid_t c, H5VL_object_get_args_t *d, \
      hid_t e, void **f), (a, b, c, d, e, f))                                                          \
    X(herr_t, H5VLobject_specific, (void *a, const H5VL_loc_params_t *b, hid_t c,                      \
      H5VL_object_specific_args_t *d, hid_t e, void **f), (a, b, c, d, e, f))                          \
    X(herr_t, H5VLobject_optional, (void *a, const H5VL_loc_params_t *b, hid_t c, H5VL_optional_args_t *d, \
      hid_t e, void **f), (a, b, c, d, e, f))                                                          \
    X(herr_t, H5VLintrospect_get_conn_cls, (void *a, hid_t b, H5VL_get_conn_lvl_t c, const H5VL_class_t **d), \
      (a, b, c, d))                                                                                    \
    X(herr_t, H5VLintrospect_opt_query, (void *a, hid_t b, H5VL_subclass_t c, int d, uint64_t *e),     \
      (a, b, c, d, e))                                                                                 \
    X(herr_t, H5VLblob_put, (void *a, hid_t b, const void *c, size_t d, void *e, void *f), (a, b, c, d, e, f)) \
    X(herr_t, H5VLblob_get, (void *a, hid_t b, const void *c, void *d, size_t e, void *f), (a, b, c, d, e, f)) \
    X(herr_t, H5VLblob_specific, (void *a, hid_t b, void *c, H5VL_blob_specific_args_t *d), (a, b, c, d)) \
    X(herr_t, H5VLblob_optional, (void *a, hid_t b, void *c, H5VL_optional_args_t *d), (a, b, c, d))  \
    X(herr_t, H5VLtoken_cmp, (void *a, hid_t b, const H5O_token_t *c, const H5O_token_t *d, int *e),   \
      (a, b, c, d, e))                                                                                 \
    X(herr_t, H5VLtoken_to_str, (void *a, H5I_type_t b, hid_t c, const H5O_token_t *d, char **e),      \
      (a, b, c, d, e))                                                                                 \
    X(herr_t, H5VLtoken_from_str, (void *a, H5I_type_t b, hid_t c, const char *d, H5O_token_t *e),     \
      (a, b, c, d, e))                                                                                 \
    X(herr_t, H5VLoptional, (void *a, hid_t b, H5VL_optional_args_t *c, hid_t d, void **e), (a, b, c, d, e))

#define ZH5_VARS(V)                                                                                    \
    V(H5E_ERR_CLS_g) V(H5E_VOL_g) V(H5E_FILE_g) V(H5E_SYM_g) V(H5E_DATASET_g) V(H5E_ATTR_g)           \
    V(H5E_DATATYPE_g) V(H5E_DATASPACE_g) V(H5E_LINK_g) V(H5E_OHDR_g) V(H5E_PLINE_g)                   \
    V(H5E_NOTFOUND_g) V(H5E_EXISTS_g) V(H5E_FILEEXISTS_g) V(H5E_WRITEERROR_g) V(H5E_READERROR_g)      \
    V(H5E_BADRANGE_g) V(H5E_UNSUPPORTED_g) V(H5E_BADVALUE_g) V(H5E_BADTYPE_g) V(H5E_CANTGET_g)        \
    V(H5E_CANTSET_g) V(H5E_CANTALLOC_g) V(H5E_CANTCREATE_g) V(H5E_CANTOPENFILE_g)                     \
    V(H5E_CANTOPENOBJ_g) V(H5E_CANTCONVERT_g) V(H5E_CANTINIT_g) V(H5E_CANTDELETEFILE_g)               \
    V(H5T_NATIVE_SCHAR_g) V(H5T_NATIVE_INT_g) V(H5T_NATIVE_INT64_g) V(H5T_NATIVE_UINT64_g) V(H5T_NATIVE_DOUBLE_g)            \
    V(H5T_STD_I8LE_g) V(H5T_STD_I16LE_g) V(H5T_STD_I32LE_g) V(H5T_STD_I64LE_g)                        \
    V(H5T_STD_U8LE_g) V(H5T_STD_U16LE_g) V(H5T_STD_U32LE_g) V(H5T_STD_U64LE_g)                        \
    V(H5T_IEEE_F32LE_g) V(H5T_IEEE_F64LE_g) V(H5T_C_S1_g) V(H5T_STD_REF_OBJ_g) V(H5T_NATIVE_UINT_g)       \
    V(H5P_CLS_FILE_ACCESS_ID_g) V(H5P_CLS_FILE_CREATE_ID_g) V(H5P_CLS_GROUP_CREATE_ID_g)              \
    V(H5P_CLS_DATASET_CREATE_ID_g) V(H5P_CLS_DATASET_ACCESS_ID_g) V(H5P_CLS_ATTRIBUTE_CREATE_ID_g)

/* Finds the HDF5 library whose code is at `caller` (else the process's) and binds the lists above
   to it; 1 on success. */
int zh5_api_resolve(const void *caller);

#endif
