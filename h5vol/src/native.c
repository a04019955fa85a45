/* Native HDF5 files beside Zarr: with HDF5_VOL_CONNECTOR=zarr every file comes to this connector; a file
 * whose content is HDF5 (its signature) is opened by HDF5's native connector instead, and every call on
 * its objects is forwarded to that connector, as HDF5's pass-through connectors forward theirs. HDF5 asks
 * the terminal connector of an object whether it is native (introspect with H5VL_GET_CONN_LVL_TERM), and
 * unwraps it (get_object) for its native-only calls, so the deprecated v1 calls (H5Literate1,
 * H5Oget_info1, ...) and old object references work on such files as on any native file.
 *
 * A native object is a zh5_native (kind ZH5_NATIVE) holding the native connector's object; plugin.c sends
 * each callback here when its object is one. */
#include "zvol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* HDF5's native connector (an identifier of the library that loaded the plugin; kept for the process). */
static hid_t native_id(void)
{
    static hid_t id = H5I_INVALID_HID;
    if (id < 0)
        id = H5VLget_connector_id_by_name("native");
    return id;
}

int zh5n_is(const void *obj)
{
    return obj && ((const zh5_native *)obj)->kind == ZH5_NATIVE;
}

void *zh5n_under(void *obj)
{
    return zh5n_is(obj) ? ((zh5_native *)obj)->under : obj;
}

/* The wrapper of a native object (NULL stays NULL). */
static void *wrap(void *under)
{
    if (!under)
        return NULL;
    zh5_native *n = malloc(sizeof *n);
    if (!n) {
        zh5_err(H5E_VOL, H5E_CANTALLOC, "out of memory");
        return NULL;
    }
    n->kind = ZH5_NATIVE;
    n->under = under;
    return n;
}

#define U(o) (((zh5_native *)(o))->under)
#define NID native_id()

int zh5n_is_hdf5_file(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char buf[8];
    struct stat sb;
    int yes = 0;
    if (path && strncmp(path, "file://", 7) == 0)
        path += 7;
    if (!path || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    for (long off = 0; f && !yes && off < (long)sb.st_size; off = off ? off * 2 : 512)
        yes = fseek(f, off, SEEK_SET) == 0 && fread(buf, 1, sizeof buf, f) == sizeof buf &&
              memcmp(buf, sig, sizeof sig) == 0;
    if (f)
        fclose(f);
    return yes;
}

int zh5n_is_hdf5_name(const char *name)
{
    static const char *exts[] = {".h5", ".hdf5", ".he5", ".hdf", ".nc", ".nc4", ".cdf"};
    size_t n = strlen(name);
    if (strstr(name, "://"))
        return 0;
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t e = strlen(exts[i]);
        if (n > e && strcmp(name + n - e, exts[i]) == 0)
            return 1;
    }
    return 0;
}

/* A copy of fapl set to the native connector; -1 (pushed). */
static hid_t native_fapl(hid_t fapl)
{
    hid_t nid = NID;
    hid_t copy = H5Pcopy(fapl);
    if (nid < 0 || copy < 0 || H5Pset_vol(copy, nid, NULL) < 0) {
        if (copy >= 0)
            H5Pclose(copy);
        zh5_err(H5E_FILE, H5E_CANTSET, "cannot set HDF5's native connector on a file access list");
        return -1;
    }
    return copy;
}

void *zh5n_file_create(const char *name, unsigned flags, hid_t fcpl, hid_t fapl, hid_t dxpl, void **req)
{
    hid_t fa = native_fapl(fapl);
    if (fa < 0)
        return NULL;
    void *under = H5VLfile_create(name, flags, fcpl, fa, dxpl, req);
    H5Pclose(fa);
    return wrap(under);
}

void *zh5n_file_open(const char *name, unsigned flags, hid_t fapl, hid_t dxpl, void **req)
{
    hid_t fa = native_fapl(fapl);
    if (fa < 0)
        return NULL;
    void *under = H5VLfile_open(name, flags, fa, dxpl, req);
    H5Pclose(fa);
    return wrap(under);
}

herr_t zh5n_file_get(void *obj, H5VL_file_get_args_t *args, hid_t dxpl, void **req)
{
    return H5VLfile_get(U(obj), NID, args, dxpl, req);
}

herr_t zh5n_file_specific(void *obj, H5VL_file_specific_args_t *args, hid_t dxpl, void **req)
{
    if (args->op_type == H5VL_FILE_IS_EQUAL) {
        void *other = args->args.is_equal.obj2;
        if (!zh5n_is(other)) {
            *args->args.is_equal.same_file = 0;
            return 0;
        }
        args->args.is_equal.obj2 = U(other);
        herr_t r = H5VLfile_specific(U(obj), NID, args, dxpl, req);
        args->args.is_equal.obj2 = other;
        return r;
    }
    herr_t r = H5VLfile_specific(U(obj), NID, args, dxpl, req);
    if (r >= 0 && args->op_type == H5VL_FILE_REOPEN) {
        void **out = (void **)args->args.reopen.file;
        if (!(*out = wrap(*out)))
            return -1;
    }
    return r;
}

herr_t zh5n_file_delete(H5VL_file_specific_args_t *args, hid_t dxpl, void **req)
{
    hid_t given = args->args.del.fapl_id, fa = native_fapl(given);
    if (fa < 0)
        return -1;
    args->args.del.fapl_id = fa;
    herr_t r = H5VLfile_specific(NULL, NID, args, dxpl, req);
    args->args.del.fapl_id = given;
    H5Pclose(fa);
    return r;
}

herr_t zh5n_file_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req)
{
    return H5VLfile_optional(U(obj), NID, args, dxpl, req);
}

herr_t zh5n_file_close(void *obj, hid_t dxpl, void **req)
{
    herr_t r = H5VLfile_close(U(obj), NID, dxpl, req);
    if (r >= 0)
        free(obj);
    return r;
}

void *zh5n_group_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl, hid_t gcpl,
                        hid_t gapl, hid_t dxpl, void **req)
{
    return wrap(H5VLgroup_create(U(obj), loc, NID, name, lcpl, gcpl, gapl, dxpl, req));
}

void *zh5n_group_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t gapl, hid_t dxpl,
                      void **req)
{
    return wrap(H5VLgroup_open(U(obj), loc, NID, name, gapl, dxpl, req));
}

herr_t zh5n_group_get(void *obj, H5VL_group_get_args_t *args, hid_t dxpl, void **req)
{
    return H5VLgroup_get(U(obj), NID, args, dxpl, req);
}

herr_t zh5n_group_specific(void *obj, H5VL_group_specific_args_t *args, hid_t dxpl, void **req)
{
    return H5VLgroup_specific(U(obj), NID, args, dxpl, req);
}

herr_t zh5n_group_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req)
{
    return H5VLgroup_optional(U(obj), NID, args, dxpl, req);
}

herr_t zh5n_group_close(void *obj, hid_t dxpl, void **req)
{
    herr_t r = H5VLgroup_close(U(obj), NID, dxpl, req);
    if (r >= 0)
        free(obj);
    return r;
}

void *zh5n_dataset_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl, hid_t type,
                          hid_t space, hid_t dcpl, hid_t dapl, hid_t dxpl, void **req)
{
    return wrap(H5VLdataset_create(U(obj), loc, NID, name, lcpl, type, space, dcpl, dapl, dxpl, req));
}

void *zh5n_dataset_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t dapl, hid_t dxpl,
                        void **req)
{
    return wrap(H5VLdataset_open(U(obj), loc, NID, name, dapl, dxpl, req));
}

/* The native objects of count datasets (all native: plugin.c sends mixed lists one by one). */
static void **unwrap_all(size_t count, void *dset[])
{
    void **under = malloc((count ? count : 1) * sizeof *under);
    if (!under) {
        zh5_err(H5E_DATASET, H5E_CANTALLOC, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < count; i++)
        under[i] = U(dset[i]);
    return under;
}

herr_t zh5n_dataset_read(size_t count, void *dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[],
                         hid_t dxpl, void *buf[], void **req)
{
    void **under = unwrap_all(count, dset);
    if (!under)
        return -1;
    herr_t r = H5VLdataset_read(count, under, NID, mem_type, mem_space, file_space, dxpl, buf, req);
    free(under);
    return r;
}

herr_t zh5n_dataset_write(size_t count, void *dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[],
                          hid_t dxpl, const void *buf[], void **req)
{
    void **under = unwrap_all(count, dset);
    if (!under)
        return -1;
    herr_t r = H5VLdataset_write(count, under, NID, mem_type, mem_space, file_space, dxpl, buf, req);
    free(under);
    return r;
}

herr_t zh5n_dataset_get(void *obj, H5VL_dataset_get_args_t *args, hid_t dxpl, void **req)
{
    return H5VLdataset_get(U(obj), NID, args, dxpl, req);
}

herr_t zh5n_dataset_specific(void *obj, H5VL_dataset_specific_args_t *args, hid_t dxpl, void **req)
{
    return H5VLdataset_specific(U(obj), NID, args, dxpl, req);
}

herr_t zh5n_dataset_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req)
{
    return H5VLdataset_optional(U(obj), NID, args, dxpl, req);
}

herr_t zh5n_dataset_close(void *obj, hid_t dxpl, void **req)
{
    herr_t r = H5VLdataset_close(U(obj), NID, dxpl, req);
    if (r >= 0)
        free(obj);
    return r;
}

void *zh5n_attr_create(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t type, hid_t space,
                       hid_t acpl, hid_t aapl, hid_t dxpl, void **req)
{
    return wrap(H5VLattr_create(U(obj), loc, NID, name, type, space, acpl, aapl, dxpl, req));
}

void *zh5n_attr_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t aapl, hid_t dxpl,
                     void **req)
{
    return wrap(H5VLattr_open(U(obj), loc, NID, name, aapl, dxpl, req));
}

herr_t zh5n_attr_read(void *obj, hid_t mem_type, void *buf, hid_t dxpl, void **req)
{
    return H5VLattr_read(U(obj), NID, mem_type, buf, dxpl, req);
}

herr_t zh5n_attr_write(void *obj, hid_t mem_type, const void *buf, hid_t dxpl, void **req)
{
    return H5VLattr_write(U(obj), NID, mem_type, buf, dxpl, req);
}

herr_t zh5n_attr_get(void *obj, H5VL_attr_get_args_t *args, hid_t dxpl, void **req)
{
    return H5VLattr_get(U(obj), NID, args, dxpl, req);
}

herr_t zh5n_attr_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_attr_specific_args_t *args, hid_t dxpl,
                          void **req)
{
    return H5VLattr_specific(U(obj), loc, NID, args, dxpl, req);
}

herr_t zh5n_attr_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req)
{
    return H5VLattr_optional(U(obj), NID, args, dxpl, req);
}

herr_t zh5n_attr_close(void *obj, hid_t dxpl, void **req)
{
    herr_t r = H5VLattr_close(U(obj), NID, dxpl, req);
    if (r >= 0)
        free(obj);
    return r;
}

void *zh5n_datatype_commit(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t type, hid_t lcpl,
                           hid_t tcpl, hid_t tapl, hid_t dxpl, void **req)
{
    return wrap(H5VLdatatype_commit(U(obj), loc, NID, name, type, lcpl, tcpl, tapl, dxpl, req));
}

void *zh5n_datatype_open(void *obj, const H5VL_loc_params_t *loc, const char *name, hid_t tapl, hid_t dxpl,
                         void **req)
{
    return wrap(H5VLdatatype_open(U(obj), loc, NID, name, tapl, dxpl, req));
}

herr_t zh5n_datatype_get(void *obj, H5VL_datatype_get_args_t *args, hid_t dxpl, void **req)
{
    return H5VLdatatype_get(U(obj), NID, args, dxpl, req);
}

herr_t zh5n_datatype_specific(void *obj, H5VL_datatype_specific_args_t *args, hid_t dxpl, void **req)
{
    return H5VLdatatype_specific(U(obj), NID, args, dxpl, req);
}

herr_t zh5n_datatype_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req)
{
    return H5VLdatatype_optional(U(obj), NID, args, dxpl, req);
}

herr_t zh5n_datatype_close(void *obj, hid_t dxpl, void **req)
{
    herr_t r = H5VLdatatype_close(U(obj), NID, dxpl, req);
    if (r >= 0)
        free(obj);
    return r;
}

herr_t zh5n_link_create(H5VL_link_create_args_t *args, void *obj, const H5VL_loc_params_t *loc, hid_t lcpl,
                        hid_t lapl, hid_t dxpl, void **req)
{
    void *cur = NULL;
    if (args->op_type == H5VL_LINK_CREATE_HARD) {
        cur = args->args.hard.curr_obj;
        if (cur)
            args->args.hard.curr_obj = U(cur);
    }
    herr_t r = H5VLlink_create(args, obj ? U(obj) : NULL, loc, NID, lcpl, lapl, dxpl, req);
    if (cur)
        args->args.hard.curr_obj = cur;
    return r;
}

herr_t zh5n_link_copy(void *src, const H5VL_loc_params_t *loc1, void *dst, const H5VL_loc_params_t *loc2,
                      hid_t lcpl, hid_t lapl, hid_t dxpl, void **req)
{
    return H5VLlink_copy(src ? U(src) : NULL, loc1, dst ? U(dst) : NULL, loc2, NID, lcpl, lapl, dxpl, req);
}

herr_t zh5n_link_move(void *src, const H5VL_loc_params_t *loc1, void *dst, const H5VL_loc_params_t *loc2,
                      hid_t lcpl, hid_t lapl, hid_t dxpl, void **req)
{
    return H5VLlink_move(src ? U(src) : NULL, loc1, dst ? U(dst) : NULL, loc2, NID, lcpl, lapl, dxpl, req);
}

herr_t zh5n_link_get(void *obj, const H5VL_loc_params_t *loc, H5VL_link_get_args_t *args, hid_t dxpl, void **req)
{
    return H5VLlink_get(U(obj), loc, NID, args, dxpl, req);
}

herr_t zh5n_link_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_link_specific_args_t *args, hid_t dxpl,
                          void **req)
{
    return H5VLlink_specific(U(obj), loc, NID, args, dxpl, req);
}

herr_t zh5n_link_optional(void *obj, const H5VL_loc_params_t *loc, H5VL_optional_args_t *args, hid_t dxpl,
                          void **req)
{
    return H5VLlink_optional(U(obj), loc, NID, args, dxpl, req);
}

void *zh5n_object_open(void *obj, const H5VL_loc_params_t *loc, H5I_type_t *opened_type, hid_t dxpl, void **req)
{
    return wrap(H5VLobject_open(U(obj), loc, NID, opened_type, dxpl, req));
}

herr_t zh5n_object_copy(void *src, const H5VL_loc_params_t *loc1, const char *src_name, void *dst,
                        const H5VL_loc_params_t *loc2, const char *dst_name, hid_t ocpypl, hid_t lcpl, hid_t dxpl,
                        void **req)
{
    return H5VLobject_copy(U(src), loc1, src_name, U(dst), loc2, dst_name, NID, ocpypl, lcpl, dxpl, req);
}

herr_t zh5n_object_get(void *obj, const H5VL_loc_params_t *loc, H5VL_object_get_args_t *args, hid_t dxpl,
                       void **req)
{
    return H5VLobject_get(U(obj), loc, NID, args, dxpl, req);
}

herr_t zh5n_object_specific(void *obj, const H5VL_loc_params_t *loc, H5VL_object_specific_args_t *args,
                            hid_t dxpl, void **req)
{
    return H5VLobject_specific(U(obj), loc, NID, args, dxpl, req);
}

herr_t zh5n_object_optional(void *obj, const H5VL_loc_params_t *loc, H5VL_optional_args_t *args, hid_t dxpl,
                            void **req)
{
    return H5VLobject_optional(U(obj), loc, NID, args, dxpl, req);
}

herr_t zh5n_get_conn_cls(void *obj, H5VL_get_conn_lvl_t lvl, const H5VL_class_t **cls)
{
    return H5VLintrospect_get_conn_cls(U(obj), NID, lvl, cls);
}

herr_t zh5n_opt_query(void *obj, H5VL_subclass_t cls, int opt_type, uint64_t *flags)
{
    return H5VLintrospect_opt_query(U(obj), NID, cls, opt_type, flags);
}

herr_t zh5n_blob_put(void *obj, const void *buf, size_t size, void *blob_id, void *ctx)
{
    return H5VLblob_put(U(obj), NID, buf, size, blob_id, ctx);
}

herr_t zh5n_blob_get(void *obj, const void *blob_id, void *buf, size_t size, void *ctx)
{
    return H5VLblob_get(U(obj), NID, blob_id, buf, size, ctx);
}

herr_t zh5n_blob_specific(void *obj, void *blob_id, H5VL_blob_specific_args_t *args)
{
    return H5VLblob_specific(U(obj), NID, blob_id, args);
}

herr_t zh5n_blob_optional(void *obj, void *blob_id, H5VL_optional_args_t *args)
{
    return H5VLblob_optional(U(obj), NID, blob_id, args);
}

herr_t zh5n_token_cmp(void *obj, const H5O_token_t *t1, const H5O_token_t *t2, int *cmp)
{
    return H5VLtoken_cmp(U(obj), NID, t1, t2, cmp);
}

herr_t zh5n_token_to_str(void *obj, H5I_type_t type, const H5O_token_t *token, char **str)
{
    return H5VLtoken_to_str(U(obj), type, NID, token, str);
}

herr_t zh5n_token_from_str(void *obj, H5I_type_t type, const char *str, H5O_token_t *token)
{
    return H5VLtoken_from_str(U(obj), type, NID, str, token);
}

herr_t zh5n_optional(void *obj, H5VL_optional_args_t *args, hid_t dxpl, void **req)
{
    return H5VLoptional(U(obj), NID, args, dxpl, req);
}

/* Wrapping: the context HDF5 keeps while it runs a call on an object, used to wrap the objects the
   native connector hands to callbacks (H5Literate's group, ...). NULL under: a Zarr object's call. */
typedef struct {
    void *under;   /* the native connector's wrap context, when the object is native */
    int native;
} wrap_ctx;

void *zh5n_get_object(const void *obj)
{
    return zh5n_is(obj) ? H5VLget_object(((const zh5_native *)obj)->under, NID) : (void *)obj;
}

herr_t zh5n_get_wrap_ctx(const void *obj, void **ctx)
{
    wrap_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        zh5_err(H5E_VOL, H5E_CANTALLOC, "out of memory");
        return -1;
    }
    if (zh5n_is(obj)) {
        c->native = 1;
        if (H5VLget_wrap_ctx(((const zh5_native *)obj)->under, NID, &c->under) < 0) {
            free(c);
            return -1;
        }
    }
    *ctx = c;
    return 0;
}

void *zh5n_wrap_object(void *obj, H5I_type_t type, void *ctx)
{
    wrap_ctx *c = ctx;
    if (!c || !c->native)
        return obj;   /* a Zarr object: HDF5 registers it as it is */
    void *under = H5VLwrap_object(obj, type, NID, c->under);
    return under ? wrap(under) : NULL;
}

void *zh5n_unwrap_object(void *obj)
{
    if (!zh5n_is(obj))
        return obj;
    void *under = H5VLunwrap_object(U(obj), NID);
    if (under)
        free(obj);
    return under;
}

herr_t zh5n_free_wrap_ctx(void *ctx)
{
    wrap_ctx *c = ctx;
    herr_t r = 0;
    if (c && c->native && c->under)
        r = H5VLfree_wrap_ctx(c->under, NID);
    free(c);
    return r;
}
