/* Connector objects and node paths: every object names its node by the path below the hierarchy's
 * root ("" is the root, "a/b" a node below it) and opens libzarr handles through the root group. */
#define _POSIX_C_SOURCE 200809L
#include "zvol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

zh5_obj *zh5_obj_new(zh5_kind kind, zh5_file *file, const char *path)
{
    zh5_obj *obj = calloc(1, sizeof *obj);
    if (!obj || !(obj->path = strdup(path ? path : ""))) {
        free(obj);
        zh5_err(H5E_VOL, H5E_CANTALLOC, "out of memory");
        return NULL;
    }
    obj->kind = kind;
    obj->file = file;
    obj->file_type = obj->mem_native = obj->attr_type = obj->attr_space = H5I_INVALID_HID;
    file->refs++;
    return obj;
}

void zh5_obj_free(zh5_obj *obj)
{
    if (!obj)
        return;
    zh5_anon_drop(obj);
    if (obj->group)
        zarr_group_close(obj->group);
    if (obj->array)
        zarr_close(obj->array);
    if (obj->file_type >= 0)
        H5Tclose(obj->file_type);
    if (obj->mem_native >= 0)
        H5Tclose(obj->mem_native);
    if (obj->attr_type >= 0)
        H5Tclose(obj->attr_type);
    if (obj->attr_space >= 0)
        H5Sclose(obj->attr_space);
    free(obj->attr_name);
    free(obj->path);
    if (obj->file->file_obj == obj)
        obj->file->file_obj = NULL;
    zh5_file_release(obj->file);
    free(obj);
}

char *zh5_join(const zh5_obj *obj, const char *name)
{
    const char *base = (name && name[0] == '/') ? "" : obj->path;
    size_t cap = strlen(base) + (name ? strlen(name) : 0) + 2;
    char *out = malloc(cap), *o = out;
    if (!out) {
        zh5_err(H5E_VOL, H5E_CANTALLOC, "out of memory");
        return NULL;
    }
    *o = '\0';
    for (int part = 0; part < 2; part++) {
        const char *s = part == 0 ? base : (name ? name : "");
        while (*s) {
            while (*s == '/')
                s++;
            const char *e = s;
            while (*e && *e != '/')
                e++;
            size_t n = (size_t)(e - s);
            if (n == 2 && s[0] == '.' && s[1] == '.') {
                zh5_err(H5E_SYM, H5E_BADVALUE, "'..' in the object name \"%s\" is not supported", name);
                free(out);
                return NULL;
            }
            if (n > 0 && !(n == 1 && s[0] == '.')) {
                if (o != out)
                    *o++ = '/';
                memcpy(o, s, n);
                o += n;
                *o = '\0';
            }
            s = e;
        }
    }
    return out;
}

char *zh5_member_path(const zh5_obj *obj, const H5VL_loc_params_t *loc, const char *name)
{
    char *base = zh5_loc_path(obj, loc), *path;
    zh5_obj at = {0};
    if (!base)
        return NULL;
    at.path = base;
    path = zh5_join(&at, name);
    free(base);
    return path;
}

int zh5_parent_ready(zh5_file *file, char *path, hid_t lcpl, hid_t maj, const char *what, const char *name)
{
    unsigned intermediate = 0;
    char *slash = strrchr(path, '/');
    if (lcpl != H5P_DEFAULT && H5Pget_create_intermediate_group(lcpl, &intermediate) < 0)
        intermediate = 0;
    if (intermediate || !slash)
        return 0;
    *slash = '\0';
    int kind = zh5_node_type(file, path);
    if (kind >= 0 && kind != ZARR_NODE_GROUP)
        zh5_err(maj, H5E_NOTFOUND, "cannot create the %s \"%s\": \"/%s\" is not a group", what, name, path);
    *slash = '/';
    return kind == ZARR_NODE_GROUP ? 0 : -1;
}

void zh5_list_free(char **names, zarr_node_type *kinds, size_t count)
{
    for (size_t i = 0; names && i < count; i++)
        free(names[i]);
    free(names);
    free(kinds);
}

int zh5_list(zh5_file *file, const char *path, char ***names_out, zarr_node_type **kinds_out, size_t *count_out)
{
    zarr_group *g = zh5_open_group(file, path);
    zarr_node_list *list = NULL;
    size_t n = 0;
    if (!g)
        return -1;
    zarr_status st = zarr_group_list(g, &list);
    zarr_group_close(g);
    if (st != ZARR_OK) {
        zh5_zerr(H5E_SYM, H5E_CANTGET, st, "listing the group's members");
        return -1;
    }
    zarr_node_list_size(list, &n);
    char **names = calloc(n ? n : 1, sizeof *names);
    zarr_node_type *kinds = calloc(n ? n : 1, sizeof *kinds);
    if (!names || !kinds) {
        free(names);
        free(kinds);
        zarr_node_list_free(list);
        zh5_err(H5E_SYM, H5E_CANTALLOC, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = NULL;
        zarr_node_list_get(list, i, &name, &kinds[i]);
        if (!(names[i] = strdup(name ? name : ""))) {
            zh5_list_free(names, kinds, i);
            zarr_node_list_free(list);
            zh5_err(H5E_SYM, H5E_CANTALLOC, "out of memory");
            return -1;
        }
    }
    zarr_node_list_free(list);
    *names_out = names;
    *kinds_out = kinds;
    *count_out = n;
    return 0;
}

char *zh5_loc_path(const zh5_obj *obj, const H5VL_loc_params_t *loc)
{
    if (!loc || loc->type == H5VL_OBJECT_BY_SELF)
        return zh5_join(obj, ".");
    if (loc->type == H5VL_OBJECT_BY_NAME)
        return zh5_join(obj, loc->loc_data.loc_by_name.name);
    if (loc->type == H5VL_OBJECT_BY_IDX) {
        char *group = zh5_join(obj, loc->loc_data.loc_by_idx.name), **names = NULL, *out = NULL;
        zarr_node_type *kinds = NULL;
        size_t count = 0;
        hsize_t n = loc->loc_data.loc_by_idx.n;
        if (!group || zh5_list(obj->file, group, &names, &kinds, &count) < 0) {
            free(group);
            return NULL;
        }
        if (n >= count) {
            zh5_err(H5E_SYM, H5E_BADRANGE, "index %llu is past the %zu members of \"/%s\"", (unsigned long long)n,
                    count, group);
        } else {
            size_t i = loc->loc_data.loc_by_idx.order == H5_ITER_DEC ? count - 1 - (size_t)n : (size_t)n;
            zh5_obj tmp = {0};
            tmp.path = group;
            out = zh5_join(&tmp, names[i]);
        }
        zh5_list_free(names, kinds, count);
        free(group);
        return out;
    }
    if (loc->type == H5VL_OBJECT_BY_TOKEN)   /* H5Oopen_by_token, dereferenced object references */
        return zh5_token_path(obj->file, loc->loc_data.loc_by_token.token);
    zh5_err(H5E_SYM, H5E_UNSUPPORTED, "this kind of object location (%d) is not supported by the Zarr connector",
            (int)loc->type);
    return NULL;
}

zarr_group *zh5_open_group(zh5_file *file, const char *path)
{
    zarr_group *g = NULL;
    zarr_status st;
    if (path[0] == '\0')
        st = zarr_group_open_with_options(file->location, file->options,
                                          file->intent == H5F_ACC_RDWR ? ZARR_READ_WRITE : ZARR_READ, &g);
    else
        st = zarr_group_open_group(file->root, path, &g);
    if (st != ZARR_OK) {
        char what[1024];
        snprintf(what, sizeof what, "cannot open the group \"/%s\" of %s", path, file->location);
        zh5_zerr(H5E_SYM, H5E_CANTOPENOBJ, st, what);
        return NULL;
    }
    return g;
}

zarr_array *zh5_open_array(zh5_file *file, const char *path)
{
    zarr_array *a = NULL;
    zarr_status st = zarr_group_open_array(file->root, path, &a);
    if (st != ZARR_OK) {
        char what[1024];
        snprintf(what, sizeof what, "cannot open the dataset \"/%s\" of %s", path, file->location);
        zh5_zerr(H5E_DATASET, H5E_CANTOPENOBJ, st, what);
        return NULL;
    }
    return a;
}

int zh5_node_type(zh5_file *file, const char *path)
{
    zarr_group *g = NULL;
    zarr_array *a = NULL;
    zarr_status st;
    if (path[0] == '\0')
        return ZARR_NODE_GROUP;
    st = zarr_group_open_group(file->root, path, &g);
    if (st == ZARR_OK) {
        zarr_group_close(g);
        return ZARR_NODE_GROUP;
    }
    if (st != ZARR_ERR_NOT_FOUND) {
        zh5_zerr(H5E_SYM, H5E_CANTGET, st, path);
        return -1;
    }
    st = zarr_group_open_array(file->root, path, &a);
    if (st == ZARR_OK) {
        zarr_close(a);
        return ZARR_NODE_ARRAY;
    }
    if (st != ZARR_ERR_NOT_FOUND) {
        zh5_zerr(H5E_SYM, H5E_CANTGET, st, path);
        return -1;
    }
    return 0;
}
