/* Groups: HDF5 groups are Zarr groups. */
#include "zvol.h"

#include <stdlib.h>
#include <string.h>

void *zh5_group_create(void *o, const H5VL_loc_params_t *loc, const char *name, hid_t lcpl, hid_t gcpl,
                       hid_t gapl, hid_t dxpl, void **req)
{
    zh5_obj *obj = o, *out = NULL;
    zarr_group *g = NULL;
    char *path = zh5_member_path(obj, loc, name);
    (void)gcpl;
    (void)gapl;
    (void)dxpl;
    (void)req;
    if (!path || zh5_parent_ready(obj->file, path, lcpl, H5E_SYM, "group", name) < 0)
        goto done;
    zarr_status st = zarr_group_create_group(obj->file->root, path, NULL, &g);
    if (st != ZARR_OK) {
        char what[1200];
        snprintf(what, sizeof what, "cannot create the group \"/%s\"", path);
        zh5_zerr(H5E_SYM, H5E_CANTCREATE, st, what);
        goto done;
    }
    if ((out = zh5_obj_new(ZH5_GROUP, obj->file, path)))
        out->group = g;
    else
        zarr_group_close(g);
done:
    free(path);
    return out;
}

void *zh5_group_open(void *o, const H5VL_loc_params_t *loc, const char *name, hid_t gapl, hid_t dxpl,
                     void **req)
{
    zh5_obj *obj = o, *out = NULL;
    char *path = zh5_member_path(obj, loc, name);
    (void)gapl;
    (void)dxpl;
    (void)req;
    if (path) {
        zarr_group *g = zh5_open_group(obj->file, path);
        if (g && (out = zh5_obj_new(ZH5_GROUP, obj->file, path)))
            out->group = g;
        else if (g)
            zarr_group_close(g);
    }
    free(path);
    return out;
}

herr_t zh5_group_get(void *o, H5VL_group_get_args_t *args, hid_t dxpl, void **req)
{
    zh5_obj *obj = o;
    (void)dxpl;
    (void)req;
    if (args->op_type == H5VL_GROUP_GET_GCPL) {
        args->args.get_gcpl.gcpl_id = H5Pcreate(H5P_GROUP_CREATE);
        return args->args.get_gcpl.gcpl_id < 0 ? -1 : 0;
    }
    if (args->op_type == H5VL_GROUP_GET_INFO) {
        char *path = zh5_loc_path(obj, &args->args.get_info.loc_params), **names = NULL;
        zarr_node_type *kinds = NULL;
        size_t count = 0;
        if (!path || zh5_list(obj->file, path, &names, &kinds, &count) < 0) {
            free(path);
            return -1;
        }
        H5G_info_t *info = args->args.get_info.ginfo;
        info->storage_type = H5G_STORAGE_TYPE_DENSE;
        info->nlinks = count;
        info->max_corder = 0;
        info->mounted = 0;
        zh5_list_free(names, kinds, count);
        free(path);
        return 0;
    }
    zh5_err(H5E_SYM, H5E_UNSUPPORTED, "this group query (%d) is not supported", (int)args->op_type);
    return -1;
}

herr_t zh5_group_specific(void *o, H5VL_group_specific_args_t *args, hid_t dxpl, void **req)
{
    (void)o;
    (void)dxpl;
    (void)req;
    if (args->op_type == H5VL_GROUP_FLUSH || args->op_type == H5VL_GROUP_REFRESH)
        return 0;
    zh5_err(H5E_SYM, H5E_UNSUPPORTED, "mounting files is not supported by the Zarr connector");
    return -1;
}

herr_t zh5_group_close(void *obj, hid_t dxpl, void **req)
{
    (void)dxpl;
    (void)req;
    zh5_obj_free(obj);
    return 0;
}
