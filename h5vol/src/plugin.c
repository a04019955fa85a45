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

/* Dispatch: an object of a native HDF5 file (zh5_native, native.c) goes to the native connector, every
   other to the Zarr callbacks. N(obj) is true for a native object. */
#define N(o) zh5n_is(o)

static void *d_attr_create(void *o, const H5VL_loc_params_t *l, const char *n, hid_t t, hid_t s, hid_t acpl,
                           hid_t aapl, hid_t x, void **r)
{
    return N(o) ? zh5n_attr_create(o, l, n, t, s, acpl, aapl, x, r) : zh5_attr_create(o, l, n, t, s, acpl, aapl, x, r);
}
static void *d_attr_open(void *o, const H5VL_loc_params_t *l, const char *n, hid_t aapl, hid_t x, void **r)
{
    return N(o) ? zh5n_attr_open(o, l, n, aapl, x, r) : zh5_attr_open(o, l, n, aapl, x, r);
}
static herr_t d_attr_read(void *o, hid_t t, void *b, hid_t x, void **r)
{
    return N(o) ? zh5n_attr_read(o, t, b, x, r) : zh5_attr_read(o, t, b, x, r);
}
static herr_t d_attr_write(void *o, hid_t t, const void *b, hid_t x, void **r)
{
    return N(o) ? zh5n_attr_write(o, t, b, x, r) : zh5_attr_write(o, t, b, x, r);
}
static herr_t d_attr_get(void *o, H5VL_attr_get_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_attr_get(o, a, x, r) : zh5_attr_get(o, a, x, r);
}
static herr_t d_attr_specific(void *o, const H5VL_loc_params_t *l, H5VL_attr_specific_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_attr_specific(o, l, a, x, r) : zh5_attr_specific(o, l, a, x, r);
}
static herr_t d_attr_optional(void *o, H5VL_optional_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_attr_optional(o, a, x, r) : zh5_no_optional(o, a, x, r);
}
static herr_t d_attr_close(void *o, hid_t x, void **r)
{
    return N(o) ? zh5n_attr_close(o, x, r) : zh5_attr_close(o, x, r);
}

static void *d_dataset_create(void *o, const H5VL_loc_params_t *l, const char *n, hid_t lcpl, hid_t t, hid_t s,
                              hid_t dcpl, hid_t dapl, hid_t x, void **r)
{
    return N(o) ? zh5n_dataset_create(o, l, n, lcpl, t, s, dcpl, dapl, x, r)
                : zh5_dataset_create(o, l, n, lcpl, t, s, dcpl, dapl, x, r);
}
static void *d_dataset_open(void *o, const H5VL_loc_params_t *l, const char *n, hid_t dapl, hid_t x, void **r)
{
    return N(o) ? zh5n_dataset_open(o, l, n, dapl, x, r) : zh5_dataset_open(o, l, n, dapl, x, r);
}
/* A list of datasets goes whole to one side when all are of one kind, else one dataset at a time. */
static herr_t d_dataset_read(size_t c, void *d[], hid_t mt[], hid_t ms[], hid_t fs[], hid_t x, void *b[], void **r)
{
    size_t nat = 0;
    for (size_t i = 0; i < c; i++)
        nat += N(d[i]) ? 1 : 0;
    if (nat == 0)
        return zh5_dataset_read(c, d, mt, ms, fs, x, b, r);
    if (nat == c)
        return zh5n_dataset_read(c, d, mt, ms, fs, x, b, r);
    for (size_t i = 0; i < c; i++)
        if (d_dataset_read(1, &d[i], &mt[i], &ms[i], &fs[i], x, &b[i], r) < 0)
            return -1;
    return 0;
}
static herr_t d_dataset_write(size_t c, void *d[], hid_t mt[], hid_t ms[], hid_t fs[], hid_t x, const void *b[],
                              void **r)
{
    size_t nat = 0;
    for (size_t i = 0; i < c; i++)
        nat += N(d[i]) ? 1 : 0;
    if (nat == 0)
        return zh5_dataset_write(c, d, mt, ms, fs, x, b, r);
    if (nat == c)
        return zh5n_dataset_write(c, d, mt, ms, fs, x, b, r);
    for (size_t i = 0; i < c; i++)
        if (d_dataset_write(1, &d[i], &mt[i], &ms[i], &fs[i], x, &b[i], r) < 0)
            return -1;
    return 0;
}
static herr_t d_dataset_get(void *o, H5VL_dataset_get_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_dataset_get(o, a, x, r) : zh5_dataset_get(o, a, x, r);
}
static herr_t d_dataset_specific(void *o, H5VL_dataset_specific_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_dataset_specific(o, a, x, r) : zh5_dataset_specific(o, a, x, r);
}
static herr_t d_dataset_optional(void *o, H5VL_optional_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_dataset_optional(o, a, x, r) : zh5_no_optional(o, a, x, r);
}
static herr_t d_dataset_close(void *o, hid_t x, void **r)
{
    return N(o) ? zh5n_dataset_close(o, x, r) : zh5_dataset_close(o, x, r);
}

/* Named datatypes exist only in native files (Zarr has none). */
static int zarr_no_named_types(void)
{
    zh5_err(H5E_DATATYPE, H5E_UNSUPPORTED, "named (committed) datatypes are not supported in Zarr hierarchies");
    return -1;
}
static void *d_datatype_commit(void *o, const H5VL_loc_params_t *l, const char *n, hid_t t, hid_t lcpl, hid_t tcpl,
                               hid_t tapl, hid_t x, void **r)
{
    if (N(o))
        return zh5n_datatype_commit(o, l, n, t, lcpl, tcpl, tapl, x, r);
    zarr_no_named_types();
    return NULL;
}
static void *d_datatype_open(void *o, const H5VL_loc_params_t *l, const char *n, hid_t tapl, hid_t x, void **r)
{
    if (N(o))
        return zh5n_datatype_open(o, l, n, tapl, x, r);
    zarr_no_named_types();
    return NULL;
}
static herr_t d_datatype_get(void *o, H5VL_datatype_get_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_datatype_get(o, a, x, r) : zarr_no_named_types();
}
static herr_t d_datatype_specific(void *o, H5VL_datatype_specific_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_datatype_specific(o, a, x, r) : zarr_no_named_types();
}
static herr_t d_datatype_optional(void *o, H5VL_optional_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_datatype_optional(o, a, x, r) : zarr_no_named_types();
}
static herr_t d_datatype_close(void *o, hid_t x, void **r)
{
    return N(o) ? zh5n_datatype_close(o, x, r) : zarr_no_named_types();
}

static herr_t d_file_get(void *o, H5VL_file_get_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_file_get(o, a, x, r) : zh5_file_get(o, a, x, r);
}
static herr_t d_file_specific(void *o, H5VL_file_specific_args_t *a, hid_t x, void **r)
{
    if (N(o))
        return zh5n_file_specific(o, a, x, r);
    if (a->op_type == H5VL_FILE_IS_EQUAL && N(a->args.is_equal.obj2)) {
        *a->args.is_equal.same_file = 0;
        return 0;
    }
    if (!o && a->op_type == H5VL_FILE_IS_ACCESSIBLE && zh5n_is_hdf5_file(a->args.is_accessible.filename)) {
        *a->args.is_accessible.accessible = 1;
        return 0;
    }
    if (!o && a->op_type == H5VL_FILE_DELETE && zh5n_is_hdf5_file(a->args.del.filename))
        return zh5n_file_delete(a, x, r);
    return zh5_file_specific(o, a, x, r);
}
static herr_t d_file_optional(void *o, H5VL_optional_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_file_optional(o, a, x, r) : zh5_file_optional(o, a, x, r);
}
static herr_t d_file_close(void *o, hid_t x, void **r)
{
    return N(o) ? zh5n_file_close(o, x, r) : zh5_file_close(o, x, r);
}

static void *d_group_create(void *o, const H5VL_loc_params_t *l, const char *n, hid_t lcpl, hid_t gcpl, hid_t gapl,
                            hid_t x, void **r)
{
    return N(o) ? zh5n_group_create(o, l, n, lcpl, gcpl, gapl, x, r) : zh5_group_create(o, l, n, lcpl, gcpl, gapl, x, r);
}
static void *d_group_open(void *o, const H5VL_loc_params_t *l, const char *n, hid_t gapl, hid_t x, void **r)
{
    return N(o) ? zh5n_group_open(o, l, n, gapl, x, r) : zh5_group_open(o, l, n, gapl, x, r);
}
static herr_t d_group_get(void *o, H5VL_group_get_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_group_get(o, a, x, r) : zh5_group_get(o, a, x, r);
}
static herr_t d_group_specific(void *o, H5VL_group_specific_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_group_specific(o, a, x, r) : zh5_group_specific(o, a, x, r);
}
static herr_t d_group_optional(void *o, H5VL_optional_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_group_optional(o, a, x, r) : zh5_no_optional(o, a, x, r);
}
static herr_t d_group_close(void *o, hid_t x, void **r)
{
    return N(o) ? zh5n_group_close(o, x, r) : zh5_group_close(o, x, r);
}

/* Links and objects between a native file and a Zarr hierarchy: refused, naming both sides. */
static int crosses(const void *a, const void *b)
{
    if (!a || !b || N(a) == N(b))
        return 0;
    zh5_err(H5E_LINK, H5E_UNSUPPORTED, "links, moves and copies between a native HDF5 file and a Zarr hierarchy "
                                       "are not supported");
    return 1;
}
static herr_t d_link_create(H5VL_link_create_args_t *a, void *o, const H5VL_loc_params_t *l, hid_t lcpl, hid_t lapl,
                            hid_t x, void **r)
{
    void *cur = a->op_type == H5VL_LINK_CREATE_HARD ? a->args.hard.curr_obj : NULL;
    if (crosses(o, cur))
        return -1;
    return N(o ? o : cur) ? zh5n_link_create(a, o, l, lcpl, lapl, x, r) : zh5_link_create(a, o, l, lcpl, lapl, x, r);
}
static herr_t d_link_copy(void *s, const H5VL_loc_params_t *l1, void *d, const H5VL_loc_params_t *l2, hid_t lcpl,
                          hid_t lapl, hid_t x, void **r)
{
    if (crosses(s, d))
        return -1;
    return N(s ? s : d) ? zh5n_link_copy(s, l1, d, l2, lcpl, lapl, x, r) : zh5_link_copy(s, l1, d, l2, lcpl, lapl, x, r);
}
static herr_t d_link_move(void *s, const H5VL_loc_params_t *l1, void *d, const H5VL_loc_params_t *l2, hid_t lcpl,
                          hid_t lapl, hid_t x, void **r)
{
    if (crosses(s, d))
        return -1;
    return N(s ? s : d) ? zh5n_link_move(s, l1, d, l2, lcpl, lapl, x, r) : zh5_link_move(s, l1, d, l2, lcpl, lapl, x, r);
}
static herr_t d_link_get(void *o, const H5VL_loc_params_t *l, H5VL_link_get_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_link_get(o, l, a, x, r) : zh5_link_get(o, l, a, x, r);
}
static herr_t d_link_specific(void *o, const H5VL_loc_params_t *l, H5VL_link_specific_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_link_specific(o, l, a, x, r) : zh5_link_specific(o, l, a, x, r);
}
static herr_t d_link_optional(void *o, const H5VL_loc_params_t *l, H5VL_optional_args_t *a, hid_t x, void **r)
{
    if (N(o))
        return zh5n_link_optional(o, l, a, x, r);
    return zh5_no_optional(o, a, x, r);
}

static void *d_object_open(void *o, const H5VL_loc_params_t *l, H5I_type_t *t, hid_t x, void **r)
{
    return N(o) ? zh5n_object_open(o, l, t, x, r) : zh5_object_open(o, l, t, x, r);
}
static herr_t d_object_copy(void *s, const H5VL_loc_params_t *l1, const char *sn, void *d,
                            const H5VL_loc_params_t *l2, const char *dn, hid_t ocpypl, hid_t lcpl, hid_t x, void **r)
{
    if (crosses(s, d))
        return -1;
    return N(s) ? zh5n_object_copy(s, l1, sn, d, l2, dn, ocpypl, lcpl, x, r)
                : zh5_object_copy(s, l1, sn, d, l2, dn, ocpypl, lcpl, x, r);
}
static herr_t d_object_get(void *o, const H5VL_loc_params_t *l, H5VL_object_get_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_object_get(o, l, a, x, r) : zh5_object_get(o, l, a, x, r);
}
static herr_t d_object_specific(void *o, const H5VL_loc_params_t *l, H5VL_object_specific_args_t *a, hid_t x,
                                void **r)
{
    return N(o) ? zh5n_object_specific(o, l, a, x, r) : zh5_object_specific(o, l, a, x, r);
}
static herr_t d_object_optional(void *o, const H5VL_loc_params_t *l, H5VL_optional_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_object_optional(o, l, a, x, r) : zh5_no_optional(o, a, x, r);
}

static herr_t d_opt_query(void *o, H5VL_subclass_t c, int t, uint64_t *f)
{
    return N(o) ? zh5n_opt_query(o, c, t, f) : zh5_opt_query(o, c, t, f);
}

/* Blobs (variable-length data HDF5 stores in a native file's heap): native files only. */
static int zarr_no_blobs(void)
{
    zh5_err(H5E_VOL, H5E_UNSUPPORTED, "HDF5 blob storage does not apply to Zarr hierarchies");
    return -1;
}
static herr_t d_blob_put(void *o, const void *b, size_t s, void *id, void *c)
{
    return N(o) ? zh5n_blob_put(o, b, s, id, c) : zarr_no_blobs();
}
static herr_t d_blob_get(void *o, const void *id, void *b, size_t s, void *c)
{
    return N(o) ? zh5n_blob_get(o, id, b, s, c) : zarr_no_blobs();
}
static herr_t d_blob_specific(void *o, void *id, H5VL_blob_specific_args_t *a)
{
    return N(o) ? zh5n_blob_specific(o, id, a) : zarr_no_blobs();
}
static herr_t d_blob_optional(void *o, void *id, H5VL_optional_args_t *a)
{
    return N(o) ? zh5n_blob_optional(o, id, a) : zarr_no_blobs();
}

/* Tokens: a Zarr token is 16 bytes compared as such (what HDF5 does for a connector without this callback). */
static herr_t d_token_cmp(void *o, const H5O_token_t *t1, const H5O_token_t *t2, int *cmp)
{
    if (N(o))
        return zh5n_token_cmp(o, t1, t2, cmp);
    *cmp = memcmp(t1, t2, sizeof *t1);
    return 0;
}
static herr_t d_token_to_str(void *o, H5I_type_t t, const H5O_token_t *tok, char **s)
{
    if (N(o))
        return zh5n_token_to_str(o, t, tok, s);
    *s = NULL;
    return 0;
}
static herr_t d_token_from_str(void *o, H5I_type_t t, const char *s, H5O_token_t *tok)
{
    if (N(o))
        return zh5n_token_from_str(o, t, s, tok);
    memset(tok, 0xff, sizeof *tok);   /* HDF5's H5O_TOKEN_UNDEF */
    return 0;
}
static herr_t d_optional(void *o, H5VL_optional_args_t *a, hid_t x, void **r)
{
    return N(o) ? zh5n_optional(o, a, x, r) : zh5_no_optional(o, a, x, r);
}

/* H5Fopen/H5Fcreate: native HDF5 files to the native connector (file.c decides). */
static void *d_file_create(const char *n, unsigned f, hid_t fcpl, hid_t fapl, hid_t x, void **r)
{
    return zh5_file_create(n, f, fcpl, fapl, x, r);
}
static void *d_file_open(const char *n, unsigned f, hid_t fapl, hid_t x, void **r)
{
    return zh5_file_open(n, f, fapl, x, r);
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
    .wrap_cls = {zh5n_get_object, zh5n_get_wrap_ctx, zh5n_wrap_object, zh5n_unwrap_object, zh5n_free_wrap_ctx},
    .attr_cls = {d_attr_create, d_attr_open, d_attr_read, d_attr_write, d_attr_get, d_attr_specific,
                 d_attr_optional, d_attr_close},
    .dataset_cls = {d_dataset_create, d_dataset_open, d_dataset_read, d_dataset_write, d_dataset_get,
                    d_dataset_specific, d_dataset_optional, d_dataset_close},
    .datatype_cls = {d_datatype_commit, d_datatype_open, d_datatype_get, d_datatype_specific, d_datatype_optional,
                     d_datatype_close},
    .file_cls = {d_file_create, d_file_open, d_file_get, d_file_specific, d_file_optional, d_file_close},
    .group_cls = {d_group_create, d_group_open, d_group_get, d_group_specific, d_group_optional, d_group_close},
    .link_cls = {d_link_create, d_link_copy, d_link_move, d_link_get, d_link_specific, d_link_optional},
    .object_cls = {d_object_open, d_object_copy, d_object_get, d_object_specific, d_object_optional},
    .introspect_cls = {zh5_get_conn_cls, zh5_get_cap_flags, d_opt_query},
    .blob_cls = {d_blob_put, d_blob_get, d_blob_specific, d_blob_optional},
    .token_cls = {d_token_cmp, d_token_to_str, d_token_from_str},
    .optional = d_optional,
};

static herr_t zh5_get_conn_cls(void *obj, H5VL_get_conn_lvl_t lvl, const H5VL_class_t **cls)
{
    /* A native file's objects: the terminal connector is HDF5's native one, so that HDF5 allows its
       native-only calls (v1 link/object calls, old references) on them. */
    if (lvl == H5VL_GET_CONN_LVL_TERM && zh5n_is(obj))
        return zh5n_get_conn_cls(obj, lvl, cls);
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
