/* libzarr_h5vol_v1api: HDF5's deprecated v1 link and object calls for Zarr files, preloaded.
 *
 * HDF5 1.14 refuses its deprecated calls H5Literate1, H5Lvisit1, H5Lget_info1, H5Oget_info1, H5Ovisit1
 * (and their _by_name/_by_idx forms) for every object that is not in a native HDF5 file, in the
 * library, before a VOL connector is asked: their results carry file addresses, which only the native
 * format has. h5py 3.12 is built on exactly these calls (list(group), keys(), items(), visit(),
 * visititems(), `'a/b' in group`, get(getclass=True), get(getlink=True)), so no connector can serve
 * them. Preloaded (LD_PRELOAD), this library defines those names: for an object of the Zarr connector
 * it makes the current call (H5Literate2, H5Lget_info2, H5Oget_info3, H5Ovisit3, ...) and converts the
 * result to the v1 structures (the "address" is the first 8 bytes of the object's token: the
 * connector's tokens are hashes of the node's path, so equal addresses mean the same node); for any
 * other object it calls the library's own v1 function unchanged.
 *
 * Which HDF5: a process may hold several (h5py's wheel carries its own, privately loaded). Each call
 * is forwarded to the library its caller resolves HDF5's names in: dladdr() of the return address
 * names the calling object, dlopen(RTLD_NOLOAD) + dlsym() search it and its dependencies; a caller in
 * the global scope (a C program linking libhdf5) reaches it through dlsym(RTLD_NEXT). The library
 * links no HDF5 and is inert in processes without one. */
#define _GNU_SOURCE
#include <hdf5.h>

/* The calls this library answers are those of HDF5 1.14 and 2.x (HDF5 before 1.14 has no VOL connectors). */
#if H5_VERS_MAJOR < 1 || (H5_VERS_MAJOR == 1 && H5_VERS_MINOR < 14)
#error "libzarr_h5vol_v1api needs the headers of HDF5 >= 1.14 (1.14 or 2.x); these are older (docs/h5vol.md)"
#endif

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#define V1_EXPORT __attribute__((visibility("default")))

/* dlopen handles of the callers seen so far, by the base address of the calling object. */
#define MAX_CALLERS 32
static struct {
    const void *base;
    void *handle;
} callers[MAX_CALLERS];
static size_t ncallers;
static pthread_mutex_t callers_lock = PTHREAD_MUTEX_INITIALIZER;

static void *caller_handle(const void *caller)
{
    Dl_info info;
    void *handle = NULL;
    if (!caller || !dladdr(caller, &info) || !info.dli_fname || !info.dli_fbase)
        return NULL;
    pthread_mutex_lock(&callers_lock);
    for (size_t i = 0; i < ncallers; i++)
        if (callers[i].base == info.dli_fbase)
            handle = callers[i].handle;
    if (!handle && (handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD))) {
        /* The caller stays loaded while it calls; the extra reference is kept for the cache. */
        if (ncallers < MAX_CALLERS) {
            callers[ncallers].base = info.dli_fbase;
            callers[ncallers].handle = handle;
            ncallers++;
        }
    }
    pthread_mutex_unlock(&callers_lock);
    return handle;
}

/* HDF5's function `name` as `caller` sees it (never this library's own `self`); NULL when none. */
static void *host_fn(const void *caller, const char *name, const void *self)
{
    void *handle = caller_handle(caller), *f = handle ? dlsym(handle, name) : NULL;
    if (!f || f == self)
        f = dlsym(RTLD_NEXT, name);
    return f == self ? NULL : f;
}

#define HOST(caller, fn) ((__typeof__(&fn))host_fn(caller, #fn, NULL))
#define REAL(caller, fn) ((__typeof__(&fn))host_fn(caller, #fn, (const void *)&fn))
#define CALLER __builtin_return_address(0)
/* For an object `id` that is not the Zarr connector's: HDF5's own `fn` with the call's arguments. */
#define OTHERWISE_NATIVE(fn, id, ...)                                                                 \
    do {                                                                                              \
        if (!is_zarr(c, id)) {                                                                        \
            __typeof__(&fn) real_ = REAL(c, fn);                                                      \
            return real_ ? real_(__VA_ARGS__) : -1;                                                   \
        }                                                                                             \
    } while (0)

/* Whether the object `id` lives in a file of the Zarr connector (1), or elsewhere (0). */
static int is_zarr(const void *caller, hid_t id)
{
    __typeof__(&H5VLget_connector_name) name_of = HOST(caller, H5VLget_connector_name);
    __typeof__(&H5Eget_auto2) get_auto = HOST(caller, H5Eget_auto2);
    __typeof__(&H5Eset_auto2) set_auto = HOST(caller, H5Eset_auto2);
    char name[8] = "";
    H5E_auto2_t func = NULL;
    void *data = NULL;
    ssize_t n;
    if (!name_of || !get_auto || !set_auto)   /* an HDF5 without VOL (1.10): nothing is Zarr */
        return 0;
    /* An invalid identifier is the real call's to report. */
    get_auto(H5E_DEFAULT, &func, &data);
    set_auto(H5E_DEFAULT, NULL, NULL);
    n = name_of(id, name, sizeof name);
    set_auto(H5E_DEFAULT, func, data);
    return n == 4 && strcmp(name, "zarr") == 0;
}

static haddr_t token_addr(const H5O_token_t *token)
{
    haddr_t addr;
    memcpy(&addr, token->__data, sizeof addr);
    return addr == HADDR_UNDEF ? addr - 1 : addr;
}

static void link_info1(const H5L_info2_t *in, H5L_info1_t *out)
{
    memset(out, 0, sizeof *out);
    out->type = in->type;
    out->corder_valid = in->corder_valid;
    out->corder = in->corder;
    out->cset = in->cset;
    if (in->type == H5L_TYPE_HARD)
        out->u.address = token_addr(&in->u.token);
    else
        out->u.val_size = in->u.val_size;
}

static void object_info1(const H5O_info2_t *in, H5O_info1_t *out)
{
    memset(out, 0, sizeof *out);   /* header and storage sizes: none */
    out->fileno = in->fileno;
    out->addr = token_addr(&in->token);
    out->type = in->type;
    out->rc = in->rc;
    out->atime = in->atime;
    out->mtime = in->mtime;
    out->ctime = in->ctime;
    out->btime = in->btime;
    out->num_attrs = in->num_attrs;
}

/* ---- links ---- */

typedef struct {
    H5L_iterate1_t op;
    void *data;
} link_shim;

static herr_t link_cb(hid_t group, const char *name, const H5L_info2_t *info, void *data)
{
    const link_shim *s = data;
    H5L_info1_t info1;
    link_info1(info, &info1);
    return s->op(group, name, &info1, s->data);
}

V1_EXPORT herr_t H5Literate1(hid_t grp_id, H5_index_t idx_type, H5_iter_order_t order, hsize_t *idx,
                             H5L_iterate1_t op, void *op_data)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Literate1, grp_id, grp_id, idx_type, order, idx, op, op_data);
    __typeof__(&H5Literate2) it = HOST(c, H5Literate2);
    link_shim s = {op, op_data};
    return it && op ? it(grp_id, idx_type, order, idx, link_cb, &s) : -1;
}

V1_EXPORT herr_t H5Literate_by_name1(hid_t loc_id, const char *group_name, H5_index_t idx_type,
                                     H5_iter_order_t order, hsize_t *idx, H5L_iterate1_t op, void *op_data,
                                     hid_t lapl_id)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Literate_by_name1, loc_id, loc_id, group_name, idx_type, order, idx, op, op_data, lapl_id);
    __typeof__(&H5Literate_by_name2) it = HOST(c, H5Literate_by_name2);
    link_shim s = {op, op_data};
    return it && op ? it(loc_id, group_name, idx_type, order, idx, link_cb, &s, lapl_id) : -1;
}

V1_EXPORT herr_t H5Lvisit1(hid_t grp_id, H5_index_t idx_type, H5_iter_order_t order, H5L_iterate1_t op,
                           void *op_data)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Lvisit1, grp_id, grp_id, idx_type, order, op, op_data);
    __typeof__(&H5Lvisit2) visit = HOST(c, H5Lvisit2);
    link_shim s = {op, op_data};
    return visit && op ? visit(grp_id, idx_type, order, link_cb, &s) : -1;
}

V1_EXPORT herr_t H5Lvisit_by_name1(hid_t loc_id, const char *group_name, H5_index_t idx_type,
                                   H5_iter_order_t order, H5L_iterate1_t op, void *op_data, hid_t lapl_id)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Lvisit_by_name1, loc_id, loc_id, group_name, idx_type, order, op, op_data, lapl_id);
    __typeof__(&H5Lvisit_by_name2) visit = HOST(c, H5Lvisit_by_name2);
    link_shim s = {op, op_data};
    return visit && op ? visit(loc_id, group_name, idx_type, order, link_cb, &s, lapl_id) : -1;
}

V1_EXPORT herr_t H5Lget_info1(hid_t loc_id, const char *name, H5L_info1_t *linfo, hid_t lapl_id)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Lget_info1, loc_id, loc_id, name, linfo, lapl_id);
    __typeof__(&H5Lget_info2) get = HOST(c, H5Lget_info2);
    H5L_info2_t info;
    if (!get || get(loc_id, name, &info, lapl_id) < 0)
        return -1;
    if (linfo)
        link_info1(&info, linfo);
    return 0;
}

V1_EXPORT herr_t H5Lget_info_by_idx1(hid_t loc_id, const char *group_name, H5_index_t idx_type,
                                     H5_iter_order_t order, hsize_t n, H5L_info1_t *linfo, hid_t lapl_id)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Lget_info_by_idx1, loc_id, loc_id, group_name, idx_type, order, n, linfo, lapl_id);
    __typeof__(&H5Lget_info_by_idx2) get = HOST(c, H5Lget_info_by_idx2);
    H5L_info2_t info;
    if (!get || get(loc_id, group_name, idx_type, order, n, &info, lapl_id) < 0)
        return -1;
    if (linfo)
        link_info1(&info, linfo);
    return 0;
}

/* ---- objects ---- */

V1_EXPORT herr_t H5Oget_info1(hid_t loc_id, H5O_info1_t *oinfo)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Oget_info1, loc_id, loc_id, oinfo);
    __typeof__(&H5Oget_info3) get = HOST(c, H5Oget_info3);
    H5O_info2_t info;
    if (!get || !oinfo || get(loc_id, &info, H5O_INFO_ALL) < 0)
        return -1;
    object_info1(&info, oinfo);
    return 0;
}

V1_EXPORT herr_t H5Oget_info_by_name1(hid_t loc_id, const char *name, H5O_info1_t *oinfo, hid_t lapl_id)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Oget_info_by_name1, loc_id, loc_id, name, oinfo, lapl_id);
    __typeof__(&H5Oget_info_by_name3) get = HOST(c, H5Oget_info_by_name3);
    H5O_info2_t info;
    if (!get || !oinfo || get(loc_id, name, &info, H5O_INFO_ALL, lapl_id) < 0)
        return -1;
    object_info1(&info, oinfo);
    return 0;
}

V1_EXPORT herr_t H5Oget_info_by_idx1(hid_t loc_id, const char *group_name, H5_index_t idx_type,
                                     H5_iter_order_t order, hsize_t n, H5O_info1_t *oinfo, hid_t lapl_id)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Oget_info_by_idx1, loc_id, loc_id, group_name, idx_type, order, n, oinfo, lapl_id);
    __typeof__(&H5Oget_info_by_idx3) get = HOST(c, H5Oget_info_by_idx3);
    H5O_info2_t info;
    if (!get || !oinfo || get(loc_id, group_name, idx_type, order, n, &info, H5O_INFO_ALL, lapl_id) < 0)
        return -1;
    object_info1(&info, oinfo);
    return 0;
}

typedef struct {
    H5O_iterate1_t op;
    void *data;
} object_shim;

static herr_t object_cb(hid_t obj, const char *name, const H5O_info2_t *info, void *data)
{
    const object_shim *s = data;
    H5O_info1_t info1;
    object_info1(info, &info1);
    return s->op(obj, name, &info1, s->data);
}

V1_EXPORT herr_t H5Ovisit1(hid_t obj_id, H5_index_t idx_type, H5_iter_order_t order, H5O_iterate1_t op,
                           void *op_data)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Ovisit1, obj_id, obj_id, idx_type, order, op, op_data);
    __typeof__(&H5Ovisit3) visit = HOST(c, H5Ovisit3);
    object_shim s = {op, op_data};
    return visit && op ? visit(obj_id, idx_type, order, object_cb, &s, H5O_INFO_ALL) : -1;
}

V1_EXPORT herr_t H5Ovisit_by_name1(hid_t loc_id, const char *obj_name, H5_index_t idx_type, H5_iter_order_t order,
                                   H5O_iterate1_t op, void *op_data, hid_t lapl_id)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Ovisit_by_name1, loc_id, loc_id, obj_name, idx_type, order, op, op_data, lapl_id);
    __typeof__(&H5Ovisit_by_name3) visit = HOST(c, H5Ovisit_by_name3);
    object_shim s = {op, op_data};
    return visit && op ? visit(loc_id, obj_name, idx_type, order, object_cb, &s, H5O_INFO_ALL, lapl_id) : -1;
}
