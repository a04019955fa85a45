/* Files: an HDF5 file is a Zarr hierarchy, named by the location of its root group (a directory path,
 * or any location libzarr opens: file://, s3://, http(s)://, memory://, zip://). */
#define _XOPEN_SOURCE 700
#include "zvol.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned long next_fileno = 1;

void zh5_file_release(zh5_file *file)
{
    if (!file || --file->refs > 0)
        return;
    if (file->root)
        zarr_group_close(file->root);
    zarr_store_options_free(file->options);
    zh5_dims_forget(file);
    free(file->location);
    free(file);
}

zh5_file *zh5_file_new(const char *name, unsigned intent, zarr_group *root)
{
    zh5_file *file = calloc(1, sizeof *file);
    if (file)
        file->next_phony = -1;   /* dims.c: not looked up yet */
    if (!file || !(file->location = strdup(name))) {
        free(file);
        zh5_err(H5E_FILE, H5E_CANTALLOC, "out of memory");
        return NULL;
    }
    file->intent = intent;
    file->root = root;
    file->fileno = next_fileno++;
    return file;
}

/* libzarr store options from the settings (NULL when none; -1 in *failed on a bad JSON, pushed). */
static zarr_store_options *store_options(const zh5_info *info, int *failed)
{
    zarr_store_options *o = NULL;
    *failed = 0;
    if (!info || !info->store_options)
        return NULL;
    zarr_status st = zarr_store_options_create(&o);
    if (st == ZARR_OK)
        st = zarr_store_options_set_json(o, info->store_options);
    if (st != ZARR_OK) {
        zh5_zerr(H5E_FILE, H5E_BADVALUE, st, "store_options in the connector settings");
        zarr_store_options_free(o);
        *failed = 1;
        return NULL;
    }
    return o;
}

static void *file_object(zh5_file *file)
{
    zh5_obj *obj = zh5_obj_new(ZH5_FILE, file, "");
    if (obj)
        file->file_obj = obj;
    if (!obj) {
        file->refs = 1;
        zh5_file_release(file);
    }
    return obj;
}

/* A local directory path (no URI scheme, or file://) for `location`, or NULL. */
static const char *local_path(const char *location)
{
    if (strncmp(location, "file://", 7) == 0)
        return location + 7;
    return strstr(location, "://") ? NULL : location;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* H5F_ACC_TRUNC on an existing hierarchy: a local Zarr hierarchy is deleted; anything else is refused. */
static int truncate_existing(const char *name)
{
    const char *dir = local_path(name);
    char probe[4096];
    struct stat st;
    int is_zarr = 0;
    if (!dir) {
        zh5_err(H5E_FILE, H5E_CANTDELETEFILE,
                "H5F_ACC_TRUNC: %s already holds a Zarr hierarchy and only local hierarchies are truncated", name);
        return -1;
    }
    static const char *markers[] = {"zarr.json", ".zgroup", ".zarray"};
    for (int i = 0; i < 3; i++) {
        snprintf(probe, sizeof probe, "%s/%s", dir, markers[i]);
        if (stat(probe, &st) == 0)
            is_zarr = 1;
    }
    if (!is_zarr) {
        zh5_err(H5E_FILE, H5E_CANTDELETEFILE,
                "H5F_ACC_TRUNC: %s exists and is not the root of a Zarr hierarchy; it is left alone", name);
        return -1;
    }
    if (nftw(dir, remove_entry, 32, FTW_DEPTH | FTW_PHYS) != 0) {
        zh5_err(H5E_FILE, H5E_CANTDELETEFILE, "H5F_ACC_TRUNC: cannot delete the hierarchy %s", name);
        return -1;
    }
    return 0;
}

/* Whether something is stored at the location: 1 yes, 0 no, -1 error (pushed). */
static int location_exists(const char *name, const zarr_store_options *options)
{
    const char *dir = local_path(name);
    struct stat st;
    if (dir)
        return stat(dir, &st) == 0;
    zarr_group *g = NULL;
    zarr_status s = zarr_group_open_with_options(name, options, ZARR_READ, &g);
    if (s == ZARR_OK) {
        zarr_group_close(g);
        return 1;
    }
    return 0;
}

/* The file object of the hierarchy H5Fcreate (creating) or H5Fopen just asked libzarr for (st: its
   answer, root: the group); takes root and options; NULL (error pushed) on failure. */
static void *file_from(const char *name, int creating, unsigned intent, zarr_status st, zarr_group *root,
                       zarr_store_options *options)
{
    zh5_file *file = NULL;
    const char *dir = local_path(name);
    struct stat sb;
    if (st == ZARR_ERR_NOT_FOUND && !creating && dir && stat(dir, &sb) != 0 && errno == ENOENT) {
        /* Nothing at a local path: said with the errno, as HDF5's file drivers say it, which h5py turns into
           FileNotFoundError (h5py.File(name, "a") then creates the hierarchy). */
        zh5_err(H5E_FILE, H5E_CANTOPENFILE, "cannot open %s: there is no such file or directory (errno = %d)", name,
                ENOENT);
    } else if (st != ZARR_OK) {
        char what[4200];
        if (creating)
            snprintf(what, sizeof what, "cannot create the Zarr hierarchy %s", name);
        else
            snprintf(what, sizeof what, "cannot open %s as a Zarr hierarchy", name);
        zh5_zerr(H5E_FILE, creating ? H5E_CANTCREATE : H5E_CANTOPENFILE, st, what);
    } else if (!(file = zh5_file_new(name, intent, root))) {
        zarr_group_close(root);
    }
    if (!file) {
        zarr_store_options_free(options);
        return NULL;
    }
    file->options = options;
    return file_object(file);
}

/* zip:// locations are read-only in libzarr: a write intent is refused by name (1), not left to fail later. */
static int refuse_zip_write(const char *name, const char *call)
{
    if (strncmp(name, "zip://", 6) != 0)
        return 0;
    zh5_err(H5E_FILE, H5E_CANTOPENFILE, "%s: %s is a zip file, which libzarr opens read-only (use H5F_ACC_RDONLY)",
            call, name);
    return 1;
}

void *zh5_file_create(const char *name, unsigned flags, hid_t fcpl, hid_t fapl, hid_t dxpl, void **req)
{
    zarr_group *root = NULL;
    int failed;
    (void)fcpl;
    (void)dxpl;
    (void)req;
    if (refuse_zip_write(name, "H5Fcreate"))
        return NULL;
    /* An existing HDF5 file, or a new name of an HDF5 file's extension: a native HDF5 file (native.c). */
    if (zh5n_is_hdf5_file(name) || (zh5n_is_hdf5_name(name) && !location_exists(name, NULL)))
        return zh5n_file_create(name, flags, fcpl, fapl, dxpl, req);
    zh5_info *info = zh5_info_of(fapl);
    int format = info ? info->zarr_format : 3;
    zarr_store_options *options = store_options(info, &failed);
    zh5_info_free(info);
    if (failed)
        return NULL;
    int exists = location_exists(name, options);
    if (exists && (flags & H5F_ACC_EXCL)) {
        zh5_err(H5E_FILE, H5E_FILEEXISTS, "H5F_ACC_EXCL: %s already exists", name);
        zarr_store_options_free(options);
        return NULL;
    }
    if (exists && truncate_existing(name) < 0) {
        zarr_store_options_free(options);
        return NULL;
    }
    zarr_status st = zarr_group_create_with_options(name, options, NULL, format, &root);
    return file_from(name, 1, H5F_ACC_RDWR, st, root, options);
}

void *zh5_file_open(const char *name, unsigned flags, hid_t fapl, hid_t dxpl, void **req)
{
    zarr_group *root = NULL;
    unsigned intent = (flags & H5F_ACC_RDWR) ? H5F_ACC_RDWR : H5F_ACC_RDONLY;
    int failed;
    (void)dxpl;
    (void)req;
    if (intent == H5F_ACC_RDWR && refuse_zip_write(name, "H5Fopen"))
        return NULL;
    /* A file whose content is HDF5: opened by HDF5's native connector (native.c). */
    if (zh5n_is_hdf5_file(name))
        return zh5n_file_open(name, flags, fapl, dxpl, req);
    zh5_info *info = zh5_info_of(fapl);
    zarr_store_options *options = store_options(info, &failed);
    zh5_info_free(info);
    if (failed)
        return NULL;
    zarr_status st =
        zarr_group_open_with_options(name, options, intent == H5F_ACC_RDWR ? ZARR_READ_WRITE : ZARR_READ, &root);
    return file_from(name, 0, intent, st, root, options);
}

/* Open objects of a file (H5Fget_obj_count / H5Fget_obj_ids, which h5py calls on close): the
   identifiers of this connector whose object belongs to the file. */
typedef struct {
    const zh5_file *file;
    size_t count, max;
    hid_t *ids;
} obj_scan;

static herr_t scan_id(hid_t id, void *data)
{
    obj_scan *scan = data;
    char name[sizeof ZH5_CONNECTOR_NAME + 1] = "";
    hbool_t native = 0;
    if (H5VLget_connector_name(id, name, sizeof name) < 0 || strcmp(name, ZH5_CONNECTOR_NAME) != 0)
        return 0;
    if (H5VLobject_is_native(id, &native) < 0 || native)
        return 0;   /* an object of a native HDF5 file (native.c) */
    const zh5_obj *obj = H5VLobject(id);
    if (obj && obj->file == scan->file) {
        if (scan->ids && scan->count < scan->max)
            scan->ids[scan->count] = id;
        scan->count++;
    }
    return 0;
}

static herr_t scan_objects(const zh5_file *file, unsigned types, obj_scan *scan)
{
    static const struct {
        unsigned flag;
        H5I_type_t type;
    } kinds[] = {{H5F_OBJ_FILE, H5I_FILE},
                 {H5F_OBJ_DATASET, H5I_DATASET},
                 {H5F_OBJ_GROUP, H5I_GROUP},
                 {H5F_OBJ_DATATYPE, H5I_DATATYPE},
                 {H5F_OBJ_ATTR, H5I_ATTR}};
    scan->file = file;
    scan->count = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if ((types & kinds[k].flag) && H5Iiterate(kinds[k].type, scan_id, scan) < 0)
            return -1;
    return 0;
}

herr_t zh5_file_get(void *o, H5VL_file_get_args_t *args, hid_t dxpl, void **req)
{
    zh5_obj *obj = o;
    (void)dxpl;
    (void)req;
    switch (args->op_type) {
    case H5VL_FILE_GET_CONT_INFO:
        args->args.get_cont_info.info->feature_flags = 0;
        args->args.get_cont_info.info->token_size = sizeof(H5O_token_t);
        args->args.get_cont_info.info->blob_id_size = 0;
        return 0;
    case H5VL_FILE_GET_FAPL:
        args->args.get_fapl.fapl_id = H5Pcreate(H5P_FILE_ACCESS);
        return args->args.get_fapl.fapl_id < 0 ? -1 : 0;
    case H5VL_FILE_GET_FCPL:
        args->args.get_fcpl.fcpl_id = H5Pcreate(H5P_FILE_CREATE);
        return args->args.get_fcpl.fcpl_id < 0 ? -1 : 0;
    case H5VL_FILE_GET_FILENO:
        *args->args.get_fileno.fileno = obj->file->fileno;
        return 0;
    case H5VL_FILE_GET_INTENT:
        *args->args.get_intent.flags = obj->file->intent;
        return 0;
    case H5VL_FILE_GET_NAME: {
        H5VL_file_get_name_args_t *a = &args->args.get_name;
        size_t len = strlen(obj->file->location);
        if (a->buf && a->buf_size) {
            size_t n = len < a->buf_size - 1 ? len : a->buf_size - 1;
            memcpy(a->buf, obj->file->location, n);
            a->buf[n] = '\0';
        }
        *a->file_name_len = len;
        return 0;
    }
    case H5VL_FILE_GET_OBJ_COUNT: {
        obj_scan scan = {NULL, 0, 0, NULL};
        if (scan_objects(obj->file, args->args.get_obj_count.types, &scan) < 0)
            return -1;
        *args->args.get_obj_count.count = scan.count;
        return 0;
    }
    case H5VL_FILE_GET_OBJ_IDS: {
        H5VL_file_get_obj_ids_args_t *a = &args->args.get_obj_ids;
        obj_scan scan = {NULL, 0, a->max_objs, a->oid_list};
        if (scan_objects(obj->file, a->types, &scan) < 0)
            return -1;
        *a->count = scan.count < a->max_objs ? scan.count : a->max_objs;
        return 0;
    }
    default:
        zh5_err(H5E_FILE, H5E_UNSUPPORTED, "this file query (%d) is not supported", (int)args->op_type);
        return -1;
    }
}

herr_t zh5_file_specific(void *o, H5VL_file_specific_args_t *args, hid_t dxpl, void **req)
{
    zh5_obj *obj = o;
    (void)dxpl;
    (void)req;
    switch (args->op_type) {
    case H5VL_FILE_FLUSH:
        return 0;   /* libzarr stores every write before returning */
    case H5VL_FILE_REOPEN: {
        zh5_obj *again = zh5_obj_new(ZH5_FILE, obj->file, "");
        *args->args.reopen.file = again;
        return again ? 0 : -1;
    }
    case H5VL_FILE_IS_ACCESSIBLE: {
        zarr_group *g = NULL;
        int failed;
        zh5_info *info = zh5_info_of(args->args.is_accessible.fapl_id);
        zarr_store_options *options = store_options(info, &failed);
        zh5_info_free(info);
        zarr_status st = failed ? ZARR_ERR_INVALID_ARGUMENT
                                : zarr_group_open_with_options(args->args.is_accessible.filename, options, ZARR_READ, &g);
        zarr_store_options_free(options);
        *args->args.is_accessible.accessible = st == ZARR_OK;
        zarr_group_close(g);
        return 0;
    }
    case H5VL_FILE_IS_EQUAL:
        *args->args.is_equal.same_file = obj->file == ((zh5_obj *)args->args.is_equal.obj2)->file;
        return 0;
    case H5VL_FILE_DELETE:
    default:
        zh5_err(H5E_FILE, H5E_UNSUPPORTED, "this file operation (%d) is not supported", (int)args->op_type);
        return -1;
    }
}

herr_t zh5_file_close(void *obj, hid_t dxpl, void **req)
{
    (void)dxpl;
    (void)req;
    zh5_obj_free(obj);
    return 0;
}
