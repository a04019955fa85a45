/* The connector class and HDF5's plugin entry points: HDF5 finds libzarr_h5vol in HDF5_PLUGIN_PATH
 * and, with HDF5_VOL_CONNECTOR=zarr, uses it for every file it opens or creates. */
#include "zvol.h"

#include <string.h>

static herr_t zh5_init(hid_t vipl)
{
    (void)vipl;
    return 0;
}

static herr_t zh5_term(void)
{
    return 0;
}

static herr_t zh5_get_conn_cls(void *obj, H5VL_get_conn_lvl_t lvl, const H5VL_class_t **cls);

static herr_t zh5_get_cap_flags(const void *info, uint64_t *flags);

/* Optional (native-only) operations: only the 'post open' step HDF5 runs after every H5Fopen. */
static herr_t zh5_opt_query(void *obj, H5VL_subclass_t cls, int opt_type, uint64_t *flags)
{
    (void)obj;
    *flags = (cls == H5VL_SUBCLS_FILE && opt_type == H5VL_NATIVE_FILE_POST_OPEN) ? H5VL_OPT_QUERY_SUPPORTED : 0;
    return 0;
}

static herr_t zh5_file_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req)
{
    (void)obj;
    (void)dxpl;
    (void)req;
    if (args->op_type == H5VL_NATIVE_FILE_POST_OPEN)
        return 0;
    zh5_err(H5E_FILE, H5E_UNSUPPORTED, "this HDF5-file-specific operation (%d) does not apply to Zarr",
            args->op_type);
    return -1;
}

static herr_t zh5_no_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req)
{
    (void)obj;
    (void)dxpl;
    (void)req;
    zh5_err(H5E_VOL, H5E_UNSUPPORTED, "this HDF5-file-specific operation (%d) does not apply to Zarr",
            args->op_type);
    return -1;
}

static const H5VL_class_t zh5_class = {
    .version = H5VL_VERSION,
    .value = ZH5_CONNECTOR_VALUE,
    .name = ZH5_CONNECTOR_NAME,
    .conn_version = ZH5_CONNECTOR_VERSION,
    .cap_flags = H5VL_CAP_FLAG_FILE_BASIC | H5VL_CAP_FLAG_GROUP_BASIC | H5VL_CAP_FLAG_DATASET_BASIC |
                 H5VL_CAP_FLAG_DATASET_MORE | H5VL_CAP_FLAG_ATTR_BASIC | H5VL_CAP_FLAG_ATTR_MORE |
                 H5VL_CAP_FLAG_LINK_BASIC | H5VL_CAP_FLAG_OBJECT_BASIC | H5VL_CAP_FLAG_ITERATE |
                 H5VL_CAP_FLAG_BY_IDX | H5VL_CAP_FLAG_GET_PLIST | H5VL_CAP_FLAG_FLUSH_REFRESH |
                 H5VL_CAP_FLAG_FILTERS | H5VL_CAP_FLAG_FILL_VALUES,
    .initialize = zh5_init,
    .terminate = zh5_term,
    .info_cls = {sizeof(zh5_info), zh5_info_copy, zh5_info_cmp, zh5_info_free, zh5_info_to_str, zh5_info_from_str},
    .attr_cls = {zh5_attr_create, zh5_attr_open, zh5_attr_read, zh5_attr_write, zh5_attr_get, zh5_attr_specific,
                 zh5_no_optional, zh5_attr_close},
    .dataset_cls = {zh5_dataset_create, zh5_dataset_open, zh5_dataset_read, zh5_dataset_write, zh5_dataset_get,
                    zh5_dataset_specific, zh5_no_optional, zh5_dataset_close},
    .file_cls = {zh5_file_create, zh5_file_open, zh5_file_get, zh5_file_specific, zh5_file_optional,
                 zh5_file_close},
    .group_cls = {zh5_group_create, zh5_group_open, zh5_group_get, zh5_group_specific, zh5_no_optional,
                  zh5_group_close},
    .link_cls = {zh5_link_create, zh5_link_copy, zh5_link_move, zh5_link_get, zh5_link_specific, NULL},
    .object_cls = {zh5_object_open, zh5_object_copy, zh5_object_get, zh5_object_specific, NULL},
    .introspect_cls = {zh5_get_conn_cls, zh5_get_cap_flags, zh5_opt_query},
};

static herr_t zh5_get_conn_cls(void *obj, H5VL_get_conn_lvl_t lvl, const H5VL_class_t **cls)
{
    (void)obj;
    (void)lvl;
    *cls = &zh5_class;
    return 0;
}

static herr_t zh5_get_cap_flags(const void *info, uint64_t *flags)
{
    (void)info;
    *flags = zh5_class.cap_flags;
    return 0;
}

__attribute__((visibility("default"))) H5PL_type_t H5PLget_plugin_type(void)
{
    return H5PL_TYPE_VOL;
}

__attribute__((visibility("default"))) const void *H5PLget_plugin_info(void)
{
    /* The caller is the HDF5 library loading the plugin: its functions are the ones to call. */
    if (!zh5_api_resolve(__builtin_return_address(0)))
        return NULL;
    return &zh5_class;
}
