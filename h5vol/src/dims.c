/* Dimension scales (HDF5's H5DS API: h5py's Dataset.dims, netCDF-4's dimensions) as Zarr dimension names.
 *
 * Zarr keeps a dimension as a name: an array's dimension names (v3 `dimension_names`, v2 the attribute
 * `_ARRAY_DIMENSIONS`), and the dimension's coordinate array is the 1-D array of that name in the same group,
 * its own dimension named as itself (xarray's and netCDF's convention). HDF5 keeps the same relation in
 * attributes (the H5DS specification): a dimension scale carries CLASS = "DIMENSION_SCALE" and
 * REFERENCE_LIST (the datasets and dimensions it is attached to), a dataset DIMENSION_LIST (the scales of
 * each dimension, as object references).
 *
 * These attributes are not stored: reading computes them from the dimension names (zh5_dims_add, for a
 * copy of the attributes that is never stored back; a coordinate array also gets NAME, its own name, as
 * netCDF-4 writes it), and writing them sets the names: CLASS written on a 1-D array (H5DSset_scale) names
 * its dimension after the array (NAME written as its own name is then not stored either), DIMENSION_LIST written on an array
 * (H5DSattach_scale, H5DSdetach_scale) names each dimension after the scale attached to it (the last one,
 * as netCDF takes it) and unnames a dimension whose scale was detached. REFERENCE_LIST follows from the
 * other arrays' names, so writing it stores nothing.
 *
 * The references are HDF5's old object references (hobj_ref_t, the first 8 bytes of a node's token), the
 * kind h5py reads and netCDF-C writes. HDF5 makes and dereferences them only for its native files
 * (H5Rcreate, H5Rdereference2), and its H5DS library uses the new kind (H5R_ref_t) for other connectors:
 * libzarr_h5vol_v1api (preloaded) answers both for Zarr files. Without it the attributes are not shown,
 * so that H5DS never reads old references as new ones. */
#define _POSIX_C_SOURCE 200809L
#include "zvol.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIMLIST "DIMENSION_LIST"
#define REFLIST "REFERENCE_LIST"
#define CLASS "CLASS"
#define SCALE "DIMENSION_SCALE"
/* the records of the computed attributes (in the read copy only) */
#define REC_DIMLIST "_dimension_list"
#define REC_REFLIST "_reference_list"
#define REC_STRING "_dimension_scale_string"   /* CLASS and NAME: NUL-terminated fixed-length strings */
#define NAME "NAME"

/* REFERENCE_LIST's element, as H5DS lays it out (ds_list_t). */
typedef struct {
    hobj_ref_t ref;
    unsigned int dim_idx;
} ref_entry;

int zh5_dims_enabled(void)
{
    static int enabled = -1;
    if (enabled < 0) {
        void *self = dlopen(NULL, RTLD_LAZY);
        enabled = self && dlsym(self, "zarr_h5vol_v1api_references") != NULL;
        if (self)
            dlclose(self);
    }
    return enabled;
}

static hobj_ref_t ref_of(const char *path)
{
    H5O_token_t t;
    hobj_ref_t addr;
    zh5_token(path, &t);
    memcpy(&addr, t.__data, sizeof addr);
    return addr == HADDR_UNDEF ? addr - 1 : addr;   /* as the shim's H5Rcreate makes it (token_addr) */
}

static char *parent_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, path, n);
        p[n] = '\0';
    }
    return p;
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static char *child_of(const char *group, const char *name)
{
    size_t len = strlen(group) + strlen(name) + 2;
    char *p = malloc(len);
    if (p)
        snprintf(p, len, "%s%s%s", group, group[0] ? "/" : "", name);
    return p;
}

/* The dimension names of an open array (n = its rank, at most ZH5_MAX_RANK; NULL entries unnamed), v3's
   from its metadata, v2's from `_ARRAY_DIMENSIONS`; 0, or -1. Free with free_names. */
static int names_of(zarr_array *a, char **names, int *n)
{
    size_t rank = 0;
    int format = 3;
    if (zarr_array_rank(a, &rank) != ZARR_OK || rank > ZH5_MAX_RANK)
        return -1;
    *n = (int)rank;
    for (size_t d = 0; d < rank; d++)
        names[d] = NULL;
    zarr_array_zarr_format(a, &format);
    if (format == 3) {
        for (size_t d = 0; d < rank; d++) {
            char *s = NULL;
            if (zarr_array_dimension_name(a, d, &s) == ZARR_OK && s) {
                names[d] = strdup(s);
                zarr_string_free(s);
            }
        }
        return 0;
    }
    char *json = NULL, err[128];
    if (zarr_array_attributes(a, &json) != ZARR_OK)
        return -1;
    zj *attrs = zj_parse(json, err, sizeof err);
    zarr_string_free(json);
    zj *dims = attrs ? zj_get(attrs, "_ARRAY_DIMENSIONS") : NULL;
    if (dims && dims->kind == ZJ_ARRAY && dims->count == rank)
        for (size_t d = 0; d < rank; d++)
            if (dims->items[d]->kind == ZJ_STRING)
                names[d] = strdup(dims->items[d]->text);
    zj_free(attrs);
    return 0;
}

static void free_names(char **names, int n)
{
    for (int d = 0; d < n; d++)
        free(names[d]);
}

/* Whether `path` is a coordinate array: 1-D, its dimension named as itself. `len` (when not NULL)
   receives its length. */
static int is_coordinate(zh5_file *file, const char *path, uint64_t *len)
{
    zarr_array *a = NULL;
    char *names[ZH5_MAX_RANK];
    int n = 0, yes = 0;
    if (zarr_group_open_array(file->root, path, &a) != ZARR_OK)
        return 0;
    if (names_of(a, names, &n) == 0) {
        yes = n == 1 && names[0] && strcmp(names[0], base_of(path)) == 0;
        if (yes && len)
            zarr_array_shape(a, len, 1);
        free_names(names, n);
    }
    zarr_close(a);
    return yes;
}

/* The coordinate array a dimension named `name` of the array at `path` refers to, as netCDF scopes
   dimensions: the nearest one of that name in the array's group or its ancestors (`len`: its length must be
   that, unless UINT64_MAX); malloc'd path, or NULL when none. */
static char *scale_for(zh5_file *file, const char *path, const char *name, uint64_t len)
{
    char *group = parent_of(path);
    while (group) {
        char *scale = child_of(group, name);
        uint64_t l = 0;
        if (scale && strcmp(scale, path) != 0 && is_coordinate(file, scale, &l) && (len == UINT64_MAX || l == len)) {
            free(group);
            return scale;
        }
        free(scale);
        if (!group[0])
            break;
        char *up = parent_of(group);
        free(group);
        group = up;
    }
    free(group);
    return NULL;
}

/* ---- detaches in progress ----
 * H5DSdetach_scale rewrites the dataset's DIMENSION_LIST first, then reads the scale's REFERENCE_LIST,
 * expects the entry of the detached dimension still there, and rewrites that list without it (deleting it
 * first). As REFERENCE_LIST follows from the names, the entry a detach removed is kept in it, as pending,
 * until H5DS deletes the scale's REFERENCE_LIST (or the file closes). */
struct zh5_detached {
    char *scale, *array;
    int dim;
    struct zh5_detached *next;
};

static void detached_push(zh5_file *file, const char *scale, const char *array, int dim)
{
    struct zh5_detached *p = calloc(1, sizeof *p);
    if (!p || !(p->scale = strdup(scale)) || !(p->array = strdup(array))) {
        if (p)
            free(p->scale);
        free(p);
        return;   /* out of memory: a later H5DSdetach_scale of this scale fails, naming nothing lost */
    }
    p->dim = dim;
    p->next = file->detached;
    file->detached = p;
}

static void detached_drop(zh5_file *file, const char *scale)
{
    struct zh5_detached **pp = &file->detached;
    while (*pp) {
        struct zh5_detached *p = *pp;
        if (!scale || strcmp(p->scale, scale) == 0) {
            *pp = p->next;
            free(p->scale);
            free(p->array);
            free(p);
        } else {
            pp = &p->next;
        }
    }
}

void zh5_dims_forget(zh5_file *file)
{
    detached_drop(file, NULL);
}

/* ---- reading: the computed attributes ---- */

static int add(zj *attrs, const char *name, zj *value, const char *rec)
{
    if (!value || zj_set(attrs, name, value) < 0) {
        zj_free(value);
        return -1;
    }
    return zh5_attr_record_type(attrs, name, rec);
}

/* DIMENSION_LIST of the array at path: [[<path of the scale>] or [] per dimension]; NULL when no dimension
   has a coordinate array. */
static zj *dimension_list(zh5_file *file, const char *path, char **names, int n, const uint64_t *shape)
{
    zj *list = zj_new(ZJ_ARRAY);
    int any = 0;
    for (int d = 0; list && d < n; d++) {
        zj *scales = zj_new(ZJ_ARRAY);
        char *scale = names[d] ? scale_for(file, path, names[d], shape[d]) : NULL;
        if (scale) {
            if (scales)
                zj_push(scales, zj_new_string(scale, strlen(scale)));
            any = 1;
        }
        free(scale);
        if (!scales || zj_push(list, scales) < 0) {
            zj_free(scales);
            zj_free(list);
            list = NULL;
        }
    }
    if (!any) {
        zj_free(list);
        return NULL;
    }
    return list;
}

/* Appends to *list the [<array>, <dimension>] entries of the arrays in `group` and its subgroups (those
   without their own coordinate array of that name: netCDF's scoping) that name a dimension `base` of
   length len, the coordinate array at `scale` excepted. */
static void collect_refs(zh5_file *file, const char *scale, const char *group, const char *base, uint64_t len,
                         zj **list, int depth)
{
    char **members = NULL;
    zarr_node_type *kinds = NULL;
    size_t count = 0;
    if (depth > 64 || zh5_list(file, group, &members, &kinds, &count) < 0)
        return;
    for (size_t i = 0; i < count; i++) {
        char *member = child_of(group, members[i]);
        zarr_array *a = NULL;
        if (member && kinds[i] == ZARR_NODE_GROUP) {
            char *own = child_of(member, base);   /* a coordinate array of its own shadows this one */
            if (own && !is_coordinate(file, own, NULL))
                collect_refs(file, scale, member, base, len, list, depth + 1);
            free(own);
        }
        if (!member || kinds[i] != ZARR_NODE_ARRAY || strcmp(member, scale) == 0 ||
            zarr_group_open_array(file->root, member, &a) != ZARR_OK) {
            free(member);
            continue;
        }
        char *names[ZH5_MAX_RANK];
        uint64_t shape[ZH5_MAX_RANK];
        int n = 0;
        if (names_of(a, names, &n) == 0) {
            zarr_array_shape(a, shape, (size_t)n);
            for (int d = 0; d < n; d++) {
                if (!names[d] || strcmp(names[d], base) != 0 || shape[d] != len)
                    continue;
                char num[16];
                snprintf(num, sizeof num, "%d", d);
                zj *entry = zj_new(ZJ_ARRAY);
                if (!*list)
                    *list = zj_new(ZJ_ARRAY);
                if (entry && *list) {
                    zj_push(entry, zj_new_string(member, strlen(member)));
                    zj_push(entry, zj_new_number_text(num));
                    zj_push(*list, entry);
                } else {
                    zj_free(entry);
                }
            }
            free_names(names, n);
        }
        zarr_close(a);
        free(member);
    }
    zh5_list_free(members, kinds, count);
}

/* REFERENCE_LIST of the coordinate array at path: [[<path of an array>, <dimension>], ...] over the arrays of
   its group and subgroups that name a dimension after it; NULL when none does. */
static zj *reference_list(zh5_file *file, const char *path, uint64_t len)
{
    char *group = parent_of(path);
    zj *list = NULL;
    if (!group)
        return NULL;
    collect_refs(file, path, group, base_of(path), len, &list, 0);
    for (struct zh5_detached *p = file->detached; p; p = p->next) {   /* detaches in progress */
        char num[16];
        zj *entry = strcmp(p->scale, path) == 0 ? zj_new(ZJ_ARRAY) : NULL;
        if (!entry)
            continue;
        snprintf(num, sizeof num, "%d", p->dim);
        if (!list)
            list = zj_new(ZJ_ARRAY);
        zj_push(entry, zj_new_string(p->array, strlen(p->array)));
        zj_push(entry, zj_new_number_text(num));
        if (!list || zj_push(list, entry) < 0)
            zj_free(entry);
    }
    free(group);
    return list;
}

int zh5_dims_add(zh5_file *file, const char *path, int kind, zj *attrs)
{
    if (kind != ZARR_NODE_ARRAY || !zh5_dims_enabled())
        return 0;
    zarr_array *a = NULL;
    if (zarr_group_open_array(file->root, path, &a) != ZARR_OK)
        return 0;
    char *names[ZH5_MAX_RANK];
    uint64_t shape[ZH5_MAX_RANK];
    int n = 0, ret = 0;
    if (names_of(a, names, &n) < 0) {
        zarr_close(a);
        return 0;
    }
    zarr_array_shape(a, shape, (size_t)n);
    int format = 3;
    zarr_array_zarr_format(a, &format);
    zarr_close(a);
    if (format == 2)   /* Zarr v2's dimension names: shown as the dimension scales below instead */
        zj_remove(attrs, "_ARRAY_DIMENSIONS");
    int coordinate = n == 1 && names[0] && strcmp(names[0], base_of(path)) == 0;
    if (coordinate) {
        if (!zj_get(attrs, CLASS) && add(attrs, CLASS, zj_new_string(SCALE, strlen(SCALE)), REC_STRING) < 0)
            ret = -1;
        if (!zj_get(attrs, NAME) && add(attrs, NAME, zj_new_string(base_of(path), strlen(base_of(path))), REC_STRING) < 0)
            ret = -1;
        zj *refs = zj_get(attrs, REFLIST) ? NULL : reference_list(file, path, shape[0]);
        if (refs && add(attrs, REFLIST, refs, REC_REFLIST) < 0)
            ret = -1;
    } else if (!zj_get(attrs, DIMLIST)) {
        zj *list = dimension_list(file, path, names, n, shape);
        if (list && add(attrs, DIMLIST, list, REC_DIMLIST) < 0)
            ret = -1;
    }
    free_names(names, n);
    return ret;
}

int zh5_dims_is_computed(const zj *rec)
{
    return rec && rec->kind == ZJ_STRING &&
           (strcmp(rec->text, REC_DIMLIST) == 0 || strcmp(rec->text, REC_REFLIST) == 0 ||
            strcmp(rec->text, REC_STRING) == 0);
}

static hid_t reflist_type(void)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(ref_entry));
    if (t >= 0 && (H5Tinsert(t, "dataset", HOFFSET(ref_entry, ref), H5T_STD_REF_OBJ) < 0 ||
                   H5Tinsert(t, "dimension", HOFFSET(ref_entry, dim_idx), H5T_NATIVE_UINT) < 0)) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    return t;
}

int zh5_dims_describe(const zj *rec, const zj *value, hid_t *type, hid_t *space)
{
    hsize_t n = value->kind == ZJ_ARRAY ? value->count : 0;
    if (strcmp(rec->text, REC_STRING) == 0) {   /* a NUL-terminated string, as H5DSis_scale requires */
        *type = H5Tcopy(H5T_C_S1);
        if (*type >= 0 && (H5Tset_size(*type, value->len + 1) < 0 || H5Tset_strpad(*type, H5T_STR_NULLTERM) < 0)) {
            H5Tclose(*type);
            *type = H5I_INVALID_HID;
        }
        *space = H5Screate(H5S_SCALAR);
    } else {
        *type = strcmp(rec->text, REC_DIMLIST) == 0 ? H5Tvlen_create(H5T_STD_REF_OBJ) : reflist_type();
        *space = H5Screate_simple(1, &n, NULL);
    }
    return *type < 0 || *space < 0 ? -1 : 0;
}

int zh5_dims_read(const zj *rec, const zj *value, hid_t mem_type, void *buf, const char *where)
{
    if (strcmp(rec->text, REC_STRING) == 0) {
        const char *text = value->text;
        size_t size = H5Tget_size(mem_type), len = value->len;
        if (H5Tget_class(mem_type) != H5T_STRING) {
            zh5_err(H5E_ATTR, H5E_BADTYPE, "%s holds a string: read it with a string type", where);
            return -1;
        }
        if (H5Tis_variable_str(mem_type) > 0) {
            char *copy = strdup(text);
            if (!copy)
                return -1;
            memcpy(buf, &copy, sizeof copy);
            return 0;
        }
        memset(buf, 0, size);
        memcpy(buf, text, len < size ? len : size);
        if (H5Tget_strpad(mem_type) == H5T_STR_NULLTERM && size > 0)
            ((char *)buf)[len < size ? len : size - 1] = '\0';
        return 0;
    }
    if (strcmp(rec->text, REC_DIMLIST) == 0) {   /* hvl_t per dimension, of hobj_ref_t */
        hid_t super = H5Tget_class(mem_type) == H5T_VLEN ? H5Tget_super(mem_type) : H5I_INVALID_HID;
        int ok = super >= 0 && H5Tget_class(super) == H5T_REFERENCE && H5Tequal(super, H5T_STD_REF_OBJ) > 0;
        if (super >= 0)
            H5Tclose(super);
        if (!ok) {
            zh5_err(H5E_ATTR, H5E_BADTYPE, "%s holds object references: read it as a vlen of H5T_STD_REF_OBJ", where);
            return -1;
        }
        hvl_t *out = buf;
        for (size_t d = 0; d < value->count; d++) {
            const zj *scales = value->items[d];
            out[d].len = scales->count;
            out[d].p = scales->count ? malloc(scales->count * sizeof(hobj_ref_t)) : NULL;
            if (scales->count && !out[d].p) {
                zh5_err(H5E_ATTR, H5E_CANTALLOC, "out of memory");
                return -1;
            }
            for (size_t k = 0; k < scales->count; k++)
                ((hobj_ref_t *)out[d].p)[k] = ref_of(scales->items[k]->text);
        }
        return 0;
    }
    /* REFERENCE_LIST: a compound with the members "dataset" (an object reference) and "dimension" */
    int di = H5Tget_class(mem_type) == H5T_COMPOUND ? H5Tget_member_index(mem_type, "dataset") : -1;
    int ii = H5Tget_class(mem_type) == H5T_COMPOUND ? H5Tget_member_index(mem_type, "dimension") : -1;
    hid_t dt = di >= 0 ? H5Tget_member_type(mem_type, (unsigned)di) : H5I_INVALID_HID;
    hid_t it = ii >= 0 ? H5Tget_member_type(mem_type, (unsigned)ii) : H5I_INVALID_HID;
    int ok = dt >= 0 && it >= 0 && H5Tequal(dt, H5T_STD_REF_OBJ) > 0 && H5Tget_class(it) == H5T_INTEGER;
    size_t size = H5Tget_size(mem_type), doff = ok ? H5Tget_member_offset(mem_type, (unsigned)di) : 0,
           ioff = ok ? H5Tget_member_offset(mem_type, (unsigned)ii) : 0, isize = ok ? H5Tget_size(it) : 0;
    int ret = ok ? 0 : -1;
    if (!ok)
        zh5_err(H5E_ATTR, H5E_BADTYPE, "%s: read it as a compound of \"dataset\" (H5T_STD_REF_OBJ) and \"dimension\"",
                where);
    for (size_t k = 0; ok && k < value->count; k++) {
        unsigned char *elem = (unsigned char *)buf + k * size, tmp[16] = {0};
        hobj_ref_t ref = ref_of(value->items[k]->items[0]->text);
        unsigned int dim = (unsigned int)zj_number(value->items[k]->items[1]);
        memcpy(elem + doff, &ref, sizeof ref);
        memcpy(tmp, &dim, sizeof dim);
        if (isize > sizeof tmp || zh5_convert(H5T_NATIVE_UINT, it, 1, tmp) < 0) {
            ret = -1;
            break;
        }
        memcpy(elem + ioff, tmp, isize);
    }
    if (dt >= 0)
        H5Tclose(dt);
    if (it >= 0)
        H5Tclose(it);
    return ret;
}

/* ---- writing: the dimension names ---- */

int zh5_dims_is_written(const char *name)
{
    return zh5_dims_enabled() && (strcmp(name, DIMLIST) == 0 || strcmp(name, REFLIST) == 0);
}

/* ---- names for dimensions without a scale ----
 * netCDF-C calls a dimension without a dimension scale `phony_dim_N`, shared by length within a group
 * (docs/hdf5-netcdf.md, "Dimension names"); xarray needs a name for every dimension. An array the connector
 * creates, and a dimension whose scale is detached, is named so: the `phony_dim_K` of the same length that
 * another array of its group uses (and this one does not use already), else a new one, K one more than
 * the largest phony number in the hierarchy (found once per open file). Real dimensions (coordinate
 * arrays) are not taken, so HDF5 programs see no scale attached that they did not attach. */

static int phony_number(const char *name)
{
    if (!name || strncmp(name, "phony_dim_", 10) != 0 || !name[10] || strlen(name + 10) > 9 ||
        strspn(name + 10, "0123456789") != strlen(name + 10))
        return -1;
    return atoi(name + 10);
}

/* The largest phony number used in `group` and below it (-1: none). */
static int max_phony(zh5_file *file, const char *group, int depth)
{
    char **members = NULL;
    zarr_node_type *kinds = NULL;
    size_t count = 0;
    int most = -1;
    if (depth > 64 || zh5_list(file, group, &members, &kinds, &count) < 0)
        return -1;
    for (size_t i = 0; i < count; i++) {
        char *member = child_of(group, members[i]);
        zarr_array *a = NULL;
        if (member && kinds[i] == ZARR_NODE_GROUP) {
            int m = max_phony(file, member, depth + 1);
            most = m > most ? m : most;
        } else if (member && zarr_group_open_array(file->root, member, &a) == ZARR_OK) {
            char *names[ZH5_MAX_RANK];
            int n = 0;
            if (names_of(a, names, &n) == 0) {
                for (int d = 0; d < n; d++)
                    most = phony_number(names[d]) > most ? phony_number(names[d]) : most;
                free_names(names, n);
            }
            zarr_close(a);
        }
        free(member);
    }
    zh5_list_free(members, kinds, count);
    return most;
}

/* Fills the NULL entries of names (the array at path, of that shape) with phony names; 0, or -1. */
static int phony_names(zh5_file *file, const char *path, char **names, int n, const uint64_t *shape)
{
    int missing = 0;
    for (int d = 0; d < n; d++)
        missing |= names[d] == NULL;
    if (!missing)
        return 0;
    char *group = parent_of(path), **members = NULL;
    zarr_node_type *kinds = NULL;
    size_t count = 0;
    if (!group || zh5_list(file, group, &members, &kinds, &count) < 0) {
        free(group);
        return -1;
    }
    /* the phony dimensions of the group: name and length */
    char *pname[256];
    uint64_t plen[256];
    int np = 0;
    for (size_t i = 0; i < count && np < 256; i++) {
        char *member = kinds[i] == ZARR_NODE_ARRAY ? child_of(group, members[i]) : NULL;
        zarr_array *a = NULL;
        if (member && strcmp(member, path) != 0 && zarr_group_open_array(file->root, member, &a) == ZARR_OK) {
            char *mn[ZH5_MAX_RANK];
            uint64_t ms[ZH5_MAX_RANK];
            int mr = 0;
            if (names_of(a, mn, &mr) == 0) {
                zarr_array_shape(a, ms, (size_t)mr);
                for (int d = 0; d < mr && np < 256; d++) {
                    int known = phony_number(mn[d]) < 0;
                    for (int k = 0; !known && k < np; k++)
                        known = strcmp(pname[k], mn[d]) == 0;
                    if (!known) {
                        pname[np] = mn[d];
                        plen[np++] = ms[d];
                        mn[d] = NULL;   /* kept */
                    }
                }
                free_names(mn, mr);
            }
            zarr_close(a);
        }
        free(member);
    }
    zh5_list_free(members, kinds, count);
    free(group);
    int ret = 0;
    for (int d = 0; d < n && ret == 0; d++) {
        if (names[d])
            continue;
        for (int k = 0; k < np && !names[d]; k++) {
            int used = plen[k] != shape[d];
            for (int e = 0; !used && e < n; e++)
                used = names[e] && strcmp(names[e], pname[k]) == 0;
            if (!used && !(names[d] = strdup(pname[k])))
                ret = -1;
        }
        if (names[d] || ret < 0)
            continue;
        if (file->next_phony < 0)
            file->next_phony = max_phony(file, "", 0) + 1;
        char buf[32];
        snprintf(buf, sizeof buf, "phony_dim_%d", file->next_phony++);
        if (!(names[d] = strdup(buf)))
            ret = -1;
    }
    for (int k = 0; k < np; k++)
        free(pname[k]);
    return ret;
}

/* Names the dimensions of the array at path (NULL entries: a phony name, phony_names); 0, or -1 (pushed). */
static int set_names(zh5_file *file, const char *path, char **names, int n)
{
    zarr_array *a = zh5_open_array(file, path);
    uint64_t shape[ZH5_MAX_RANK];
    const char *list[ZH5_MAX_RANK];
    if (!a)
        return -1;
    zarr_array_shape(a, shape, (size_t)n);
    if (phony_names(file, path, names, n, shape) < 0) {
        zarr_close(a);
        zh5_err(H5E_ATTR, H5E_CANTALLOC, "naming the dimensions of \"/%s\" in %s", path, file->location);
        return -1;
    }
    for (int d = 0; d < n; d++)
        list[d] = names[d];
    zarr_status st = zarr_array_set_dimension_names(a, list, (size_t)n);
    zarr_close(a);
    if (st != ZARR_OK) {
        char what[1200];
        snprintf(what, sizeof what, "naming the dimensions of \"/%s\" in %s", path, file->location);
        zh5_zerr(H5E_ATTR, H5E_WRITEERROR, st, what);
        return -1;
    }
    return 0;
}

int zh5_dims_on_resize(zh5_file *file, const char *path, const uint64_t *old_shape)
{
    zarr_array *a = zh5_open_array(file, path);
    char *names[ZH5_MAX_RANK];
    uint64_t shape[ZH5_MAX_RANK];
    int n = 0, renamed = 0, ret = 0;
    if (!a)
        return -1;
    if (names_of(a, names, &n) < 0 || zarr_array_shape(a, shape, (size_t)n) != ZARR_OK) {
        zarr_close(a);
        return 0;
    }
    zarr_close(a);
    for (int d = 0; d < n; d++)
        if (shape[d] != old_shape[d] && phony_number(names[d]) >= 0) {   /* a phony name of the old length */
            free(names[d]);
            names[d] = NULL;
            renamed = 1;
        }
    if (renamed)
        ret = set_names(file, path, names, n);
    free_names(names, n);
    return ret;
}

int zh5_dims_on_create(zh5_file *file, const char *path, int rank)
{
    char *names[ZH5_MAX_RANK];
    for (int d = 0; d < rank; d++)
        names[d] = NULL;
    if (rank == 0) {   /* Zarr v2: `_ARRAY_DIMENSIONS` [] (xarray wants it on every v2 array) */
        zarr_array *a = zh5_open_array(file, path);
        int format = 3, ret = 0;
        char *json = NULL, err[64], *out = NULL;
        if (!a)
            return -1;
        zarr_array_zarr_format(a, &format);
        if (format == 2 && zarr_array_attributes(a, &json) == ZARR_OK) {
            zj *attrs = zj_parse(json, err, sizeof err), *empty = zj_new(ZJ_ARRAY);
            if (attrs && attrs->kind == ZJ_OBJECT && empty && zj_set(attrs, "_ARRAY_DIMENSIONS", empty) == 0) {
                empty = NULL;
                out = zj_dump(attrs);
            }
            zarr_status st = out ? zarr_array_set_attributes(a, out) : ZARR_ERR_IO;
            if (st != ZARR_OK) {
                zh5_zerr(H5E_DATASET, H5E_WRITEERROR, st, "naming the dimensions of a scalar");
                ret = -1;
            }
            zj_free(empty);
            zj_free(attrs);
            free(out);
            zarr_string_free(json);
        }
        zarr_close(a);
        return ret;
    }
    int ret = set_names(file, path, names, rank);
    free_names(names, rank);
    return ret;
}

int zh5_dims_is_scale(zh5_file *file, const char *path)
{
    return is_coordinate(file, path, NULL);
}

int zh5_dims_make_scale(zh5_file *file, const char *path)
{
    zarr_array *a = zh5_open_array(file, path);
    size_t rank = 0;
    if (!a)
        return -1;
    zarr_array_rank(a, &rank);
    zarr_close(a);
    if (rank != 1)
        return 0;   /* not a Zarr coordinate: CLASS is stored as an attribute like any other */
    char *name = strdup(base_of(path));
    int ret = name ? set_names(file, path, &name, 1) : -1;
    free(name);
    return ret < 0 ? -1 : 1;
}

int zh5_dims_write_list(zh5_file *file, const char *path, hid_t mem_type, const void *buf, const char *where)
{
    hid_t super = H5Tget_class(mem_type) == H5T_VLEN ? H5Tget_super(mem_type) : H5I_INVALID_HID;
    int ok = super >= 0 && H5Tequal(super, H5T_STD_REF_OBJ) > 0;
    if (super >= 0)
        H5Tclose(super);
    if (!ok) {
        zh5_err(H5E_ATTR, H5E_BADTYPE,
                "%s: write it as a vlen of H5T_STD_REF_OBJ (old object references; H5DS makes them with "
                "libzarr_h5vol_v1api preloaded)", where);
        return -1;
    }
    zarr_array *a = zh5_open_array(file, path);
    if (!a)
        return -1;
    char *names[ZH5_MAX_RANK];
    int n = 0, ret = -1;
    if (names_of(a, names, &n) < 0) {
        zarr_close(a);
        return -1;
    }
    zarr_close(a);
    char *group = parent_of(path);
    const hvl_t *list = buf;
    for (int d = 0; group && d < n; d++) {
        char *was = names[d] ? scale_for(file, path, names[d], UINT64_MAX) : NULL;   /* attached before, if any */
        if (list[d].len > 0) {   /* the last scale attached names the dimension, as netCDF takes it */
            H5O_token_t token;
            memset(&token, 0, sizeof token);
            memcpy(token.__data, &((const hobj_ref_t *)list[d].p)[list[d].len - 1], sizeof(hobj_ref_t));
            char *scale = zh5_token_path(file, &token);
            if (!scale) {
                free(was);
                goto done;
            }
            free(names[d]);
            names[d] = strdup(base_of(scale));
            if (was && strcmp(was, scale) != 0)
                detached_push(file, was, path, d);
            free(scale);
        } else if (was) {   /* detached: unnamed, as the name was its scale's */
            free(names[d]);
            names[d] = NULL;
            detached_push(file, was, path, d);
        }
        free(was);
    }
    ret = group ? set_names(file, path, names, n) : -1;
done:
    free(group);
    free_names(names, n);
    return ret;
}

int zh5_dims_delete(zh5_file *file, const char *path, const char *name)
{
    if (strcmp(name, DIMLIST) == 0) {   /* every scale detached */
        hvl_t none[ZH5_MAX_RANK];
        hid_t t = H5Tvlen_create(H5T_STD_REF_OBJ);
        memset(none, 0, sizeof none);
        int ret = t >= 0 ? zh5_dims_write_list(file, path, t, none, "DIMENSION_LIST") : -1;
        if (t >= 0)
            H5Tclose(t);
        return ret;
    }
    if (strcmp(name, REFLIST) == 0)   /* H5DS rewrites it without the detached entries */
        detached_drop(file, path);
    return 0;   /* REFERENCE_LIST and a computed CLASS follow from the names */
}
