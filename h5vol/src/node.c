/* Objects (H5O): opening a node by path, its type, name and info, existence and visits. */
#include "zvol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *zh5_object_open(void *o, const H5VL_loc_params_t *loc, H5I_type_t *opened_type, hid_t dxpl, void **req)
{
    zh5_obj *obj = o, *out = NULL;
    char *path = zh5_loc_path(obj, loc);
    (void)dxpl;
    (void)req;
    if (!path)
        return NULL;
    int kind = zh5_node_type(obj->file, path);
    if (kind == 0)
        zh5_err(H5E_OHDR, H5E_NOTFOUND, "no object \"/%s\" in %s", path, obj->file->location);
    if (kind == ZARR_NODE_GROUP) {
        zarr_group *g = zh5_open_group(obj->file, path);
        if (g && (out = zh5_obj_new(ZH5_GROUP, obj->file, path)))
            out->group = g;
        else if (g)
            zarr_group_close(g);
        *opened_type = H5I_GROUP;
    } else if (kind == ZARR_NODE_ARRAY) {
        zarr_array *a = zh5_open_array(obj->file, path);
        if (a)
            out = zh5_dataset_wrap(obj->file, path, a);
        *opened_type = H5I_DATASET;
    }
    free(path);
    return out;
}

static void object_info(zh5_obj *obj, const char *path, int kind, unsigned fields, H5O_info2_t *info)
{
    memset(info, 0, sizeof *info);
    info->fileno = obj->file->fileno;
    zh5_token(path, &info->token);
    info->type = kind == ZARR_NODE_GROUP ? H5O_TYPE_GROUP : H5O_TYPE_DATASET;
    info->rc = 1;
    if (fields & H5O_INFO_NUM_ATTRS) {
        int n = zh5_attr_count(obj->file, path, (zarr_node_type)kind);
        info->num_attrs = n > 0 ? (hsize_t)n : 0;
    }
}

herr_t zh5_object_get(void *o, const H5VL_loc_params_t *loc, H5VL_object_get_args_t *args, hid_t dxpl,
                      void **req)
{
    zh5_obj *obj = o;
    herr_t ret = -1;
    (void)dxpl;
    (void)req;
    if (args->op_type == H5VL_OBJECT_GET_FILE) {
        if (!obj->file->file_obj)
            obj->file->file_obj = zh5_obj_new(ZH5_FILE, obj->file, "");
        *args->args.get_file.file = obj->file->file_obj;
        return obj->file->file_obj ? 0 : -1;
    }
    char *path = zh5_loc_path(obj, loc);
    if (!path)
        return -1;
    int kind = zh5_node_type(obj->file, path);
    if (kind == 0)
        zh5_err(H5E_OHDR, H5E_NOTFOUND, "no object \"/%s\" in %s", path, obj->file->location);
    if (kind <= 0)
        goto done;
    switch (args->op_type) {
    case H5VL_OBJECT_GET_NAME: {
        size_t len = strlen(path) + 1;
        if (args->args.get_name.buf && args->args.get_name.buf_size)
            snprintf(args->args.get_name.buf, args->args.get_name.buf_size, "/%s", path);
        if (args->args.get_name.name_len)
            *args->args.get_name.name_len = len;
        ret = 0;
        break;
    }
    case H5VL_OBJECT_GET_TYPE:
        *args->args.get_type.obj_type = kind == ZARR_NODE_GROUP ? H5O_TYPE_GROUP : H5O_TYPE_DATASET;
        ret = 0;
        break;
    case H5VL_OBJECT_GET_INFO:
        object_info(obj, path, kind, args->args.get_info.fields, args->args.get_info.oinfo);
        ret = 0;
        break;
    default:
        zh5_err(H5E_OHDR, H5E_UNSUPPORTED, "this object query (%d) is not supported", (int)args->op_type);
    }
done:
    free(path);
    return ret;
}

/* H5Ovisit: the object itself ("."), then every member below it, depth first in name order. */
static herr_t visit(zh5_obj *obj, hid_t id, const char *path, const char *rel, int kind,
                    const H5VL_object_visit_args_t *v)
{
    H5O_info2_t info;
    object_info(obj, path, kind, v->fields, &info);
    herr_t ret = v->op(id, rel, &info, v->op_data);
    if (ret != 0 || kind != ZARR_NODE_GROUP)
        return ret;
    char **names = NULL;
    zarr_node_type *kinds = NULL;
    size_t count = 0;
    if (zh5_list(obj->file, path, &names, &kinds, &count) < 0)
        return -1;
    for (size_t k = 0; k < count && ret == 0; k++) {
        size_t i = v->order == H5_ITER_DEC ? count - 1 - k : k;
        size_t n = strlen(path) + strlen(rel) + strlen(names[i]) + 4;
        char *child = malloc(n), *crel = malloc(n);
        if (!child || !crel) {
            free(child);
            free(crel);
            zh5_err(H5E_OHDR, H5E_CANTALLOC, "out of memory");
            ret = -1;
            break;
        }
        snprintf(child, n, "%s%s%s", path, *path ? "/" : "", names[i]);
        snprintf(crel, n, "%s%s", strcmp(rel, ".") == 0 ? "" : rel, strcmp(rel, ".") == 0 ? "" : "/");
        strncat(crel, names[i], n - strlen(crel) - 1);
        ret = visit(obj, id, child, crel, (int)kinds[i], v);
        free(child);
        free(crel);
    }
    zh5_list_free(names, kinds, count);
    return ret;
}

herr_t zh5_object_specific(void *o, const H5VL_loc_params_t *loc, H5VL_object_specific_args_t *args,
                           hid_t dxpl, void **req)
{
    zh5_obj *obj = o;
    herr_t ret = -1;
    (void)dxpl;
    (void)req;
    if (args->op_type == H5VL_OBJECT_FLUSH || args->op_type == H5VL_OBJECT_REFRESH)
        return 0;
    char *path = zh5_loc_path(obj, loc);
    if (!path)
        return -1;
    int kind = zh5_node_type(obj->file, path);
    if (kind < 0)
        goto done;
    switch (args->op_type) {
    case H5VL_OBJECT_EXISTS:
        *args->args.exists.exists = kind > 0;
        ret = 0;
        break;
    case H5VL_OBJECT_LOOKUP:
        if (kind == 0) {
            zh5_err(H5E_OHDR, H5E_NOTFOUND, "no object \"/%s\" in %s", path, obj->file->location);
            break;
        }
        zh5_token(path, args->args.lookup.token_ptr);
        ret = 0;
        break;
    case H5VL_OBJECT_VISIT: {
        if (kind == 0) {
            zh5_err(H5E_OHDR, H5E_NOTFOUND, "no object \"/%s\" in %s", path, obj->file->location);
            break;
        }
        hid_t id = kind == ZARR_NODE_GROUP ? zh5_register_group(obj->file, path) : H5I_INVALID_HID;
        if (kind == ZARR_NODE_GROUP && id < 0)
            break;
        ret = visit(obj, id, path, ".", kind, &args->args.visit);
        if (id >= 0)
            H5Idec_ref(id);
        break;
    }
    default:
        zh5_err(H5E_OHDR, H5E_UNSUPPORTED, "this object operation (%d) is not supported", (int)args->op_type);
    }
done:
    free(path);
    return ret;
}
