/* Links: every member of a Zarr group is a hard link to an array or a group (no soft or external
 * links); iteration is in name order, the order libzarr lists members in. */
#include "zvol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The object token of a node: a hash of its path (tokens are not addresses here). */
void zh5_token(const char *path, H5O_token_t *token)
{
    uint64_t h1 = 1469598103934665603ULL, h2 = 1099511628211ULL * 31;
    memset(token, 0, sizeof *token);
    for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
        h1 = (h1 ^ *c) * 1099511628211ULL;
        h2 = (h2 ^ *c) * 6364136223846793005ULL + 1;
    }
    memcpy(token->__data, &h1, 8);
    memcpy(token->__data + 8, &h2, 8);
}

/* Whether `path`'s token is `token`: all 16 bytes, or only the first 8 when the rest are zero (the token
   HDF5's old object references (hobj_ref_t) carry: libzarr_h5vol_v1api makes them of a token's first 8
   bytes, as H5Oget_info1 reports addresses). */
static int token_is(const char *path, const H5O_token_t *token)
{
    H5O_token_t t;
    static const unsigned char zero[8] = {0};
    zh5_token(path, &t);
    if (memcmp(token->__data + 8, zero, 8) == 0)
        return memcmp(t.__data, token->__data, 8) == 0;
    return memcmp(t.__data, token->__data, sizeof t.__data) == 0;
}

/* Searches the hierarchy below `path` (a group) for the node whose token is `token`; 1 with *found set
   (malloc'd), 0 when none, -1 on error (pushed). */
static int find_token(zh5_file *file, const char *path, const H5O_token_t *token, char **found)
{
    char **names = NULL;
    zarr_node_type *kinds = NULL;
    size_t count = 0;
    int ret = 0;
    if (zh5_list(file, path, &names, &kinds, &count) < 0)
        return -1;
    for (size_t i = 0; i < count && ret == 0; i++) {
        size_t len = strlen(path) + strlen(names[i]) + 2;
        char *child = malloc(len);
        if (!child) {
            ret = -1;
            break;
        }
        snprintf(child, len, "%s%s%s", path, path[0] ? "/" : "", names[i]);
        if (token_is(child, token)) {
            *found = child;
            ret = 1;
            break;
        }
        if (kinds[i] == ZARR_NODE_GROUP)
            ret = find_token(file, child, token, found);
        free(child);
    }
    zh5_list_free(names, kinds, count);
    return ret;
}

char *zh5_token_path(zh5_file *file, const H5O_token_t *token)
{
    char *found = NULL;
    if (token_is("", token))
        return calloc(1, 1);   /* the root: "" */
    int r = find_token(file, "", token, &found);
    if (r == 0)
        zh5_err(H5E_OHDR, H5E_NOTFOUND, "no object of %s has this token (object reference)", file->location);
    return r > 0 ? found : NULL;
}

static void link_info(const char *path, H5L_info2_t *info)
{
    memset(info, 0, sizeof *info);
    info->type = H5L_TYPE_HARD;
    info->corder_valid = 0;
    info->cset = H5T_CSET_UTF8;
    zh5_token(path, &info->u.token);
}

herr_t zh5_link_get(void *o, const H5VL_loc_params_t *loc, H5VL_link_get_args_t *args, hid_t dxpl, void **req)
{
    zh5_obj *obj = o;
    char *path = zh5_loc_path(obj, loc);
    herr_t ret = -1;
    (void)dxpl;
    (void)req;
    if (!path)
        return -1;
    int kind = zh5_node_type(obj->file, path);
    if (kind == 0)
        zh5_err(H5E_LINK, H5E_NOTFOUND, "no object \"/%s\" in %s", path, obj->file->location);
    if (kind <= 0)
        goto done;
    switch (args->op_type) {
    case H5VL_LINK_GET_INFO:
        link_info(path, args->args.get_info.linfo);
        ret = 0;
        break;
    case H5VL_LINK_GET_NAME: {
        const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
        size_t len = strlen(base);
        if (args->args.get_name.name && args->args.get_name.name_size) {
            size_t n = len < args->args.get_name.name_size - 1 ? len : args->args.get_name.name_size - 1;
            memcpy(args->args.get_name.name, base, n);
            args->args.get_name.name[n] = '\0';
        }
        *args->args.get_name.name_len = len;
        ret = 0;
        break;
    }
    default:
        zh5_err(H5E_LINK, H5E_UNSUPPORTED, "\"/%s\" is a hard link: it has no link value", path);
    }
done:
    free(path);
    return ret;
}

/* Calls op for the members of the group at `path` (and below, when recursive); names relative to top. */
static herr_t iterate(zh5_obj *obj, hid_t group_id, const char *path, const char *prefix,
                      const H5VL_link_iterate_args_t *it, hsize_t *idx)
{
    char **names = NULL;
    zarr_node_type *kinds = NULL;
    size_t count = 0;
    herr_t ret = 0;
    if (zh5_list(obj->file, path, &names, &kinds, &count) < 0)
        return -1;
    for (size_t k = idx ? (size_t)*idx : 0; k < count && ret == 0; k++) {
        size_t i = it->order == H5_ITER_DEC ? count - 1 - k : k;
        size_t plen = strlen(path), rlen = strlen(prefix), nlen = strlen(names[i]);
        char *child = malloc(plen + nlen + 2), *rel = malloc(rlen + nlen + 2);
        if (!child || !rel) {
            free(child);
            free(rel);
            zh5_err(H5E_LINK, H5E_CANTALLOC, "out of memory");
            ret = -1;
            break;
        }
        snprintf(child, plen + nlen + 2, "%s%s%s", path, plen ? "/" : "", names[i]);
        snprintf(rel, rlen + nlen + 2, "%s%s%s", prefix, rlen ? "/" : "", names[i]);
        H5L_info2_t info;
        link_info(child, &info);
        ret = it->op(group_id, rel, &info, it->op_data);
        if (idx)
            *idx = k + 1;
        if (ret == 0 && it->recursive && kinds[i] == ZARR_NODE_GROUP)
            ret = iterate(obj, group_id, child, rel, it, NULL);
        free(child);
        free(rel);
    }
    zh5_list_free(names, kinds, count);
    return ret;
}

/* An HDF5 identifier for a group object handed to an iteration callback (closed after it). */
hid_t zh5_register_group(zh5_file *file, const char *path)
{
    zh5_obj *g = zh5_obj_new(ZH5_GROUP, file, path);
    if (!g)
        return H5I_INVALID_HID;
    if (!(g->group = zh5_open_group(file, path))) {
        zh5_obj_free(g);
        return H5I_INVALID_HID;
    }
    hid_t id = H5VLwrap_register(g, H5I_GROUP);
    if (id < 0)
        zh5_obj_free(g);
    return id;
}

herr_t zh5_link_specific(void *o, const H5VL_loc_params_t *loc, H5VL_link_specific_args_t *args, hid_t dxpl,
                         void **req)
{
    zh5_obj *obj = o;
    char *path = zh5_loc_path(obj, loc);
    herr_t ret = -1;
    (void)dxpl;
    (void)req;
    if (!path)
        return -1;
    switch (args->op_type) {
    case H5VL_LINK_EXISTS: {
        int kind = zh5_node_type(obj->file, path);
        if (kind >= 0) {
            *args->args.exists.exists = kind > 0;
            ret = 0;
        }
        break;
    }
    case H5VL_LINK_ITER: {
        hid_t gid = zh5_register_group(obj->file, path);
        if (gid < 0)
            break;
        ret = iterate(obj, gid, path, "", &args->args.iterate, args->args.iterate.idx_p);
        H5Idec_ref(gid);
        break;
    }
    case H5VL_LINK_DELETE: {
        /* H5Ldelete and H5Ldelete_by_idx (the path found by index): the node and everything below it,
           through the root group (whose consolidated metadata libzarr keeps in step). */
        if (!*path) {
            zh5_err(H5E_LINK, H5E_BADVALUE, "cannot delete the root group of %s", obj->file->location);
            break;
        }
        zarr_status st = zarr_group_delete_member(obj->file->root, path);
        if (st == ZARR_OK) {
            ret = 0;
        } else {
            char what[512];
            snprintf(what, sizeof what, "cannot delete \"/%s\" of %s", path, obj->file->location);
            zh5_zerr(H5E_LINK, H5E_WRITEERROR, st, what);
        }
        break;
    }
    default:
        zh5_err(H5E_LINK, H5E_UNSUPPORTED, "link operation %d on \"/%s\" is not supported by the Zarr connector",
                (int)args->op_type, path);
    }
    free(path);
    return ret;
}

/* Zarr has no links: a node has one name, its path. Creating a soft, external, user-defined or second
   hard link, and copying one, are refused naming what was asked; moving (renaming) one within a file
   renames the node (zh5_link_move). A hard link to an anonymous dataset gives it its one name (anon.c). */
herr_t zh5_link_create(H5VL_link_create_args_t *args, void *o, const H5VL_loc_params_t *loc, hid_t lcpl,
                       hid_t lapl, hid_t dxpl, void **req)
{
    zh5_obj *obj = o ? o : (args->op_type == H5VL_LINK_CREATE_HARD ? args->args.hard.curr_obj : NULL);
    char *path = obj ? zh5_loc_path(obj, loc) : NULL;
    const char *name = path ? path : "?", *where = obj ? obj->file->location : "the file";
    (void)lcpl;
    (void)lapl;
    (void)dxpl;
    (void)req;
    switch (args->op_type) {
    case H5VL_LINK_CREATE_SOFT:
        zh5_err(H5E_LINK, H5E_UNSUPPORTED,
                "cannot create the soft link \"/%s\" -> \"%s\" in %s: Zarr hierarchies have no soft links", name,
                args->args.soft.target ? args->args.soft.target : "", where);
        break;
    case H5VL_LINK_CREATE_HARD:
        if (args->args.hard.curr_obj && ((zh5_obj *)args->args.hard.curr_obj)->anon && o) {
            free(path);   /* naming an anonymous dataset (anon.c) */
            return zh5_dataset_link_anon(args->args.hard.curr_obj, o, loc, lcpl, dxpl, req);
        }
        zh5_err(H5E_LINK, H5E_UNSUPPORTED,
                "cannot create the hard link \"/%s\" in %s: a Zarr node has exactly one name (its path)", name,
                where);
        break;
    default:
        zh5_err(H5E_LINK, H5E_UNSUPPORTED, "cannot create the %s link \"/%s\" in %s: Zarr hierarchies have no %s links",
                args->args.ud.type == H5L_TYPE_EXTERNAL ? "external" : "user-defined", name, where,
                args->args.ud.type == H5L_TYPE_EXTERNAL ? "external" : "user-defined");
    }
    free(path);
    return -1;
}

herr_t zh5_link_copy(void *src, const H5VL_loc_params_t *loc1, void *dst, const H5VL_loc_params_t *loc2, hid_t lcpl,
                     hid_t lapl, hid_t dxpl, void **req)
{
    zh5_obj *s = src, *d = dst ? dst : src;
    char *from = s ? zh5_loc_path(s, loc1) : NULL, *to = d ? zh5_loc_path(d, loc2) : NULL;
    (void)lcpl;
    (void)lapl;
    (void)dxpl;
    (void)req;
    zh5_err(H5E_LINK, H5E_UNSUPPORTED,
            "cannot copy the link \"/%s\" to \"/%s\" in %s: a Zarr node has exactly one name (its path)",
            from ? from : "?", to ? to : "?", s ? s->file->location : "the file");
    free(from);
    free(to);
    return -1;
}

/* H5Lmove (and H5Gmove, h5py's Group.move): renames the node and everything below it, through the root
   group (libzarr keeps the consolidated metadata of both sides in step); the destination's parent group
   must exist and the destination must not. Handles open on the moved node keep its old path. Moving
   between files is refused. */
herr_t zh5_link_move(void *src, const H5VL_loc_params_t *loc1, void *dst, const H5VL_loc_params_t *loc2, hid_t lcpl,
                     hid_t lapl, hid_t dxpl, void **req)
{
    zh5_obj *s = src ? src : dst, *d = dst ? dst : src;
    char *from = NULL, *to = NULL;
    herr_t ret = -1;
    (void)lcpl;
    (void)lapl;
    (void)dxpl;
    (void)req;
    if (!s || !d) {
        zh5_err(H5E_LINK, H5E_BADVALUE, "moving a link needs a source and a destination location");
        return -1;
    }
    if (!(from = zh5_loc_path(s, loc1)) || !(to = zh5_loc_path(d, loc2)))
        goto done;
    if (s->file != d->file) {
        zh5_err(H5E_LINK, H5E_UNSUPPORTED, "cannot move \"/%s\" of %s to \"/%s\" of %s: moving between files is not supported",
                from, s->file->location, to, d->file->location);
        goto done;
    }
    if (!*from || !*to) {
        zh5_err(H5E_LINK, H5E_BADVALUE, "cannot move \"/%s\" to \"/%s\" in %s: the root group has no link to move",
                from, to, s->file->location);
        goto done;
    }
    zarr_status st = zarr_group_move_member(s->file->root, from, to);
    if (st == ZARR_OK) {
        ret = 0;
    } else {
        char what[1200];
        snprintf(what, sizeof what, "cannot move \"/%s\" to \"/%s\" in %s", from, to, s->file->location);
        zh5_zerr(H5E_LINK, H5E_WRITEERROR, st, what);
    }
done:
    free(from);
    free(to);
    return ret;
}

herr_t zh5_object_copy(void *src, const H5VL_loc_params_t *loc1, const char *src_name, void *dst,
                       const H5VL_loc_params_t *loc2, const char *dst_name, hid_t ocpypl, hid_t lcpl, hid_t dxpl,
                       void **req)
{
    zh5_obj *s = src, *d = dst ? dst : src;
    char *from = NULL, *to = NULL;
    (void)loc1;
    (void)loc2;
    (void)ocpypl;
    (void)lcpl;
    (void)dxpl;
    (void)req;
    if (s)
        from = zh5_join(s, src_name);
    if (d)
        to = zh5_join(d, dst_name);
    zh5_err(H5E_OHDR, H5E_UNSUPPORTED,
            "cannot copy the object \"/%s\" to \"/%s\" in %s: copying a Zarr node is not in libzarr's C API yet",
            from ? from : "?", to ? to : "?", s ? s->file->location : "the file");
    free(from);
    free(to);
    return -1;
}
