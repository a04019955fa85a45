/* zarrtoh5: the dimension model. From the arrays' dimension names (v3 `dimension_names`, v2
 * `_ARRAY_DIMENSIONS`), their `_libzarr_hdf5.unlimited_dimensions` and the groups'
 * `_libzarr_hdf5.dimensions` records, decides which netCDF dimensions exist, in which group each is
 * defined (netCDF scoping: a dimension defined in a group is visible in its subgroups), its size (from
 * the arrays that use it, from the record only when none does), whether it is unlimited, and which array
 * is its coordinate variable. No HDF5 here: zarrtoh5.c turns the result into dimension scales.
 * Included once, by zarrtoh5.c, after h5zcommon.h. */
#ifndef ZARR_ZARRTOH5_DIMS_H
#define ZARR_ZARRTOH5_DIMS_H

#define ZH_MAX_RANK 32

typedef struct {
    char *path;   /* "/" or "/a/b" */
    int parent;   /* index of the parent group; -1 for the root */
} zh_group;

typedef struct {
    char *path;                   /* the Zarr path, for messages ("/a/temp") */
    char *name;                   /* the dataset's name in its group */
    int group;                    /* index into the groups */
    size_t rank;
    uint64_t shape[ZH_MAX_RANK];
    char *dimname[ZH_MAX_RANK];   /* NULL: unnamed */
    int unlimited[ZH_MAX_RANK];   /* listed in _libzarr_hdf5.unlimited_dimensions */
    int dim[ZH_MAX_RANK];         /* index into the dimensions; -1: none */
} zh_array;

typedef struct {
    int group;            /* where it is defined */
    char *name;
    uint64_t size;
    int size_array;       /* the array that gave the size; -1: from a group's record */
    int sized;            /* size known */
    int unlimited;
    int coord;            /* the coordinate variable (an array index); -1: none */
    int phony;            /* made up for an unnamed dimension of a partly named array */
} zh_dim;

typedef struct {
    zh_group *groups;
    size_t ngroups;
    zh_array *arrays;
    size_t narrays;
    zh_dim *dims;
    size_t ndims;
} zh_model;

static int zh_add_group(zh_model *m, const char *path, int parent) {
    m->groups = xrealloc(m->groups, (m->ngroups + 1) * sizeof *m->groups);
    m->groups[m->ngroups].path = xstrdup(path);
    m->groups[m->ngroups].parent = parent;
    return (int)m->ngroups++;
}

static zh_array *zh_add_array(zh_model *m) {
    m->arrays = xrealloc(m->arrays, (m->narrays + 1) * sizeof *m->arrays);
    zh_array *a = &m->arrays[m->narrays++];
    memset(a, 0, sizeof *a);
    for (size_t d = 0; d < ZH_MAX_RANK; d++) a->dim[d] = -1;
    return a;
}

/* The dimension `name` defined in group `g` itself; -1 if none. */
static int zh_dim_in(const zh_model *m, int g, const char *name) {
    for (size_t k = 0; k < m->ndims; k++)
        if (m->dims[k].group == g && !strcmp(m->dims[k].name, name)) return (int)k;
    return -1;
}

/* The dimension `name` visible from group `g` (its own or an ancestor's, nearest first); -1 if none. */
static int zh_dim_visible(const zh_model *m, int g, const char *name) {
    for (; g >= 0; g = m->groups[g].parent) {
        int k = zh_dim_in(m, g, name);
        if (k >= 0) return k;
    }
    return -1;
}

static int zh_define(zh_model *m, int g, const char *name) {
    int k = zh_dim_in(m, g, name);
    if (k >= 0) return k;
    m->dims = xrealloc(m->dims, (m->ndims + 1) * sizeof *m->dims);
    zh_dim *d = &m->dims[m->ndims];
    memset(d, 0, sizeof *d);
    d->group = g;
    d->name = xstrdup(name);
    d->size_array = -1;
    d->coord = -1;
    return (int)m->ndims++;
}

/* A dimension name HDF5 can hold as a dataset name. */
static int zh_usable_name(const char *s) { return s && *s && !strchr(s, '/') && strcmp(s, "."); }

/* A group's `_libzarr_hdf5.dimensions` record: {"name": {"size": N, "unlimited": bool}}. An entry without
 * a usable name or a size is left out with a message (`path`: the group's). */
static void zh_add_record(zh_model *m, int g, const jv *rec, const char *path) {
    if (!rec || rec->t != J_OBJ) return;
    for (size_t k = 0; k < rec->n; k++) {
        const jv *size = jv_get(&rec->items[k], "size"), *unl = jv_get(&rec->items[k], "unlimited");
        if (!zh_usable_name(rec->keys[k]) || !size || size->t != J_NUM || !size->is_int || size->i < 0) {
            fprintf(stderr, "%s: %s: _libzarr_hdf5.dimensions: entry '%s' has no usable name or size: left out\n",
                    g_prog, path, rec->keys[k]);
            continue;
        }
        int i = zh_define(m, g, rec->keys[k]); /* before taking the address: it may move the table */
        zh_dim *d = &m->dims[i];
        d->size = (uint64_t)size->i;
        d->sized = 1;
        if (unl && unl->t == J_BOOL && unl->i) d->unlimited = 1;
    }
}

/* Resolves every array's named dimensions (call after all groups, records and arrays are added; arrays
 * in pre-order, parents before children). Dies naming both arrays when one dimension gets two sizes. */
static void zh_resolve(zh_model *m) {
    /* coordinate variables define their dimension in their own group */
    for (size_t i = 0; i < m->narrays; i++) {
        zh_array *a = &m->arrays[i];
        if (a->rank == 1 && a->dimname[0] && !strcmp(a->dimname[0], a->name)) {
            int k = zh_define(m, a->group, a->name);
            if (m->dims[k].coord < 0) m->dims[k].coord = (int)i;
        }
    }
    /* names netCDF-C makes up for dimensions without a scale (phony_dim_N, as h5tozarr writes them for a
     * plain HDF5 file): an array named by such names only, none of them a dimension with a coordinate
     * variable or a record, gets no dimension scales, as it had none (netCDF-C names it again) */
    for (size_t i = 0; i < m->narrays; i++) {
        zh_array *a = &m->arrays[i];
        int phony = a->rank > 0;
        for (size_t d = 0; phony && d < a->rank; d++) {
            const char *n = a->dimname[d];
            phony = n && !strncmp(n, "phony_dim_", 10) && n[10] && strspn(n + 10, "0123456789") == strlen(n + 10) &&
                    zh_dim_visible(m, a->group, n) < 0;
        }
        for (size_t d = 0; phony && d < a->rank; d++) {
            free(a->dimname[d]);
            a->dimname[d] = NULL;
        }
    }
    /* netCDF-C cannot read a dataset with scales on some dimensions only: a partly named array's unnamed
     * dimensions get phony_dim_K, shared by size within its group as netCDF-C shares them */
    for (size_t i = 0; i < m->narrays; i++) {
        zh_array *a = &m->arrays[i];
        int named = 0;
        for (size_t d = 0; d < a->rank; d++) named |= a->dimname[d] != NULL;
        for (size_t d = 0; named && d < a->rank; d++) {
            if (a->dimname[d]) continue;
            int k = -1, count = 0;
            for (size_t j = 0; j < m->ndims; j++)
                if (m->dims[j].group == a->group && m->dims[j].phony) {
                    count++;
                    if (m->dims[j].size == a->shape[d]) k = (int)j;
                }
            if (k < 0) {
                char name[40];
                do snprintf(name, sizeof name, "phony_dim_%d", count++);
                while (zh_dim_visible(m, a->group, name) >= 0);
                k = zh_define(m, a->group, name);
                m->dims[k].phony = 1;
                m->dims[k].size = a->shape[d];
            }
            a->dimname[d] = xstrdup(m->dims[k].name);
        }
    }
    for (size_t i = 0; i < m->narrays; i++) {
        zh_array *a = &m->arrays[i];
        for (size_t d = 0; d < a->rank; d++) {
            if (!a->dimname[d]) continue;
            int k = zh_dim_visible(m, a->group, a->dimname[d]);
            if (k < 0) k = zh_define(m, a->group, a->dimname[d]);
            zh_dim *dm = &m->dims[k];
            if (dm->size_array >= 0 && dm->size != a->shape[d])
                die("dimension '%s' has size %llu in %s but %llu in %s: one dimension name cannot have two "
                    "sizes", dm->name, (unsigned long long)dm->size, m->arrays[dm->size_array].path,
                    (unsigned long long)a->shape[d], a->path);
            if (dm->size_array < 0) {
                dm->size = a->shape[d];
                dm->size_array = (int)i;
                dm->sized = 1;
            }
            if (a->unlimited[d]) dm->unlimited = 1;
            a->dim[d] = k;
        }
    }
    /* every user of an unlimited dimension is unlimited along it (as in netCDF) */
    for (size_t i = 0; i < m->narrays; i++)
        for (size_t d = 0; d < m->arrays[i].rank; d++)
            if (m->arrays[i].dim[d] >= 0 && m->dims[m->arrays[i].dim[d]].unlimited) m->arrays[i].unlimited[d] = 1;
}

#endif
