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
#include <stdio.h>
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

/* HDF5's global variable `name` as `caller` sees it. A program that links HDF5 and uses the variable holds
   the copy HDF5 itself uses (a copy relocation), which the global scope finds first; a library that loaded
   its own HDF5 (h5py's) finds it among its dependencies. */
static void *host_var(const void *caller, const char *name)
{
    void *handle = caller_handle(caller), *v = handle ? dlsym(handle, name) : NULL;
    return v ? v : dlsym(RTLD_DEFAULT, name);
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

/* ---- object references and dimension scales ----
 * HDF5 makes and follows its old object references (hobj_ref_t) for native files only, and its H5DS library
 * (dimension scales) uses its new references (H5R_ref_t) for every other connector. For Zarr files these
 * answer the old calls -- the reference is an object's address as H5Oget_info1 reports it, the first 8 bytes
 * of its token, and dereferencing opens the object by that token (the connector finds the node) -- and
 * have H5DS use them, so that h5py (whose references are the old kind) and H5DS agree on the connector's
 * DIMENSION_LIST and REFERENCE_LIST (h5vol/src/dims.c). The connector shows those attributes only when this
 * symbol is in the process. */
V1_EXPORT const int zarr_h5vol_v1api_references = 1;

/* H5DS's (libhdf5_hl) choice of reference kind; declared here, as this library takes hdf5.h only. */
herr_t H5DSwith_new_ref(hid_t obj_id, hbool_t *with_new_ref);

V1_EXPORT herr_t H5DSwith_new_ref(hid_t obj_id, hbool_t *with_new_ref)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5DSwith_new_ref, obj_id, obj_id, with_new_ref);
    if (!with_new_ref)
        return -1;
    *with_new_ref = 0;
    return 0;
}

/* The object an old reference names, opened in the file of `loc_id`; negative when none. */
static hid_t open_ref(const void *c, hid_t loc_id, const void *ref)
{
    __typeof__(&H5Oopen_by_token) open = HOST(c, H5Oopen_by_token);
    H5O_token_t token;
    if (!open || !ref)
        return -1;
    memset(&token, 0, sizeof token);
    memcpy(token.__data, ref, sizeof(hobj_ref_t));
    return open(loc_id, token);
}

V1_EXPORT herr_t H5Rcreate(void *ref, hid_t loc_id, const char *name, H5R_type_t ref_type, hid_t space_id)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Rcreate, loc_id, ref, loc_id, name, ref_type, space_id);
    __typeof__(&H5Oget_info_by_name3) get = HOST(c, H5Oget_info_by_name3);
    H5O_info2_t info;
    if (ref_type != H5R_OBJECT || !ref || !get || get(loc_id, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
        return -1;   /* region references: Zarr has no dataset regions to name */
    hobj_ref_t addr = token_addr(&info.token);
    memcpy(ref, &addr, sizeof addr);
    return 0;
}

V1_EXPORT hid_t H5Rdereference2(hid_t obj_id, hid_t oapl_id, H5R_type_t ref_type, const void *ref)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Rdereference2, obj_id, obj_id, oapl_id, ref_type, ref);
    return ref_type == H5R_OBJECT ? open_ref(c, obj_id, ref) : -1;
}

V1_EXPORT herr_t H5Rget_obj_type2(hid_t id, H5R_type_t ref_type, const void *ref, H5O_type_t *obj_type)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Rget_obj_type2, id, id, ref_type, ref, obj_type);
    __typeof__(&H5Oget_info3) get = HOST(c, H5Oget_info3);
    __typeof__(&H5Oclose) close = HOST(c, H5Oclose);
    H5O_info2_t info;
    hid_t obj = ref_type == H5R_OBJECT ? open_ref(c, id, ref) : -1;
    herr_t ret = obj >= 0 && get && obj_type && get(obj, &info, H5O_INFO_BASIC) >= 0 ? 0 : -1;
    if (ret == 0)
        *obj_type = info.type;
    if (obj >= 0 && close)
        close(obj);
    return ret;
}

V1_EXPORT ssize_t H5Rget_name(hid_t loc_id, H5R_type_t ref_type, const void *ref, char *name, size_t size)
{
    const void *c = CALLER;
    OTHERWISE_NATIVE(H5Rget_name, loc_id, loc_id, ref_type, ref, name, size);
    __typeof__(&H5Iget_name) get = HOST(c, H5Iget_name);
    __typeof__(&H5Oclose) close = HOST(c, H5Oclose);
    hid_t obj = ref_type == H5R_OBJECT ? open_ref(c, loc_id, ref) : -1;
    ssize_t n = obj >= 0 && get ? get(obj, name, size) : -1;
    if (obj >= 0 && close)
        close(obj);
    return n;
}

/* ---- native HDF5 files beside Zarr ones ----
 * With HDF5_VOL_CONNECTOR=zarr every file HDF5 opens goes to the Zarr connector, native HDF5 files (.h5, .nc)
 * included, which it cannot read. These open them with HDF5's native connector instead, so that one process
 * reads both:
 *   H5Fopen: a file whose content is HDF5 -- its 8-byte signature at offset 0, 512, 1024, 2048, ... (where
 *            HDF5 looks for a superblock) -- opens natively;
 *   H5Fcreate: a name that exists as such a file, or (a new name) ends in .h5, .hdf5, .he5, .hdf, .nc, .nc4 or
 *            .cdf, is created natively; every other name becomes a Zarr hierarchy.
 * Only when the access property list would use the Zarr connector; a list naming another connector is kept. */
static int is_hdf5_content(const char *name)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char buf[8];
    FILE *f = name ? fopen(name, "rb") : NULL;
    int yes = 0;
    if (!f)
        return 0;
    for (long off = 0; !yes && off >= 0 && off < (1L << 40); off = off ? off * 2 : 512) {
        if (fseek(f, off, SEEK_SET) != 0 || fread(buf, 1, sizeof buf, f) != sizeof buf)
            break;
        yes = memcmp(buf, sig, sizeof sig) == 0;
    }
    fclose(f);
    return yes;
}

static int has_hdf5_extension(const char *name)
{
    static const char *const ext[] = {".h5", ".hdf5", ".he5", ".hdf", ".nc", ".nc4", ".cdf"};
    size_t n = name ? strlen(name) : 0;
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        size_t e = strlen(ext[i]);
        if (n > e && strcmp(name + n - e, ext[i]) == 0)
            return 1;
    }
    return 0;
}

/* A copy of the access list `fapl` set to HDF5's native connector when it would use the Zarr connector;
   H5I_INVALID_HID when it would not (or on failure: the call then goes as it was). */
static hid_t native_fapl(const void *c, hid_t fapl)
{
    __typeof__(&H5Pget_vol_id) get_vol = HOST(c, H5Pget_vol_id);
    __typeof__(&H5VLcmp_connector_cls) cmp_cls = HOST(c, H5VLcmp_connector_cls);
    __typeof__(&H5VLget_connector_id_by_name) by_name = HOST(c, H5VLget_connector_id_by_name);
    __typeof__(&H5VLclose) vclose = HOST(c, H5VLclose);
    __typeof__(&H5Pcopy) copy = HOST(c, H5Pcopy);
    __typeof__(&H5Pcreate) create = HOST(c, H5Pcreate);
    __typeof__(&H5Pset_vol) set_vol = HOST(c, H5Pset_vol);
    __typeof__(&H5Pclose) pclose = HOST(c, H5Pclose);
    __typeof__(&H5Eget_auto2) get_auto = HOST(c, H5Eget_auto2);
    __typeof__(&H5Eset_auto2) set_auto = HOST(c, H5Eset_auto2);
    __typeof__(&H5open) open_lib = HOST(c, H5open);
    if (!get_vol || !cmp_cls || !by_name || !vclose || !copy || !create || !set_vol || !pclose || !get_auto ||
        !set_auto || !open_lib)
        return H5I_INVALID_HID;
    H5E_auto2_t func = NULL;
    void *data = NULL;
    hid_t vol = H5I_INVALID_HID, native = H5I_INVALID_HID, zarr = H5I_INVALID_HID, out = H5I_INVALID_HID;
    open_lib();
    get_auto(H5E_DEFAULT, &func, &data);
    set_auto(H5E_DEFAULT, NULL, NULL);
    if (fapl == H5P_DEFAULT) {   /* the caller's HDF5's class of access lists (a global: H5open() set it) */
        const hid_t *cls = (const hid_t *)host_var(c, "H5P_CLS_FILE_ACCESS_ID_g");
        out = cls ? create(*cls) : H5I_INVALID_HID;
    } else
        out = copy(fapl);
    int cmp = 1;
    if (out >= 0 && get_vol(out, &vol) >= 0 && (zarr = by_name("zarr")) >= 0 && cmp_cls(&cmp, vol, zarr) >= 0 &&
        cmp == 0 && (native = by_name("native")) >= 0 && set_vol(out, native, NULL) >= 0) {
        /* out is the native copy */
    } else if (out >= 0) {
        pclose(out);
        out = H5I_INVALID_HID;
    }
    if (vol >= 0)
        vclose(vol);
    if (native >= 0)
        vclose(native);
    if (zarr >= 0)
        vclose(zarr);
    set_auto(H5E_DEFAULT, func, data);
    return out;
}

V1_EXPORT hid_t H5Fopen(const char *filename, unsigned flags, hid_t fapl_id)
{
    const void *c = CALLER;
    __typeof__(&H5Fopen) real = REAL(c, H5Fopen);
    __typeof__(&H5Pclose) pclose = HOST(c, H5Pclose);
    hid_t native = is_hdf5_content(filename) ? native_fapl(c, fapl_id) : H5I_INVALID_HID;
    if (!real)
        return -1;
    if (native < 0)
        return real(filename, flags, fapl_id);
    hid_t id = real(filename, flags, native);
    if (pclose)
        pclose(native);
    return id;
}

V1_EXPORT hid_t H5Fcreate(const char *filename, unsigned flags, hid_t fcpl_id, hid_t fapl_id)
{
    const void *c = CALLER;
    __typeof__(&H5Fcreate) real = REAL(c, H5Fcreate);
    __typeof__(&H5Pclose) pclose = HOST(c, H5Pclose);
    int hdf5 = is_hdf5_content(filename) || has_hdf5_extension(filename);
    hid_t native = hdf5 ? native_fapl(c, fapl_id) : H5I_INVALID_HID;
    if (!real)
        return -1;
    if (native < 0)
        return real(filename, flags, fcpl_id, fapl_id);
    hid_t id = real(filename, flags, fcpl_id, native);
    if (pclose)
        pclose(native);
    return id;
}
