/* HDF5 dimension scales as h5tozarr reads them (docs/hdf5-netcdf.md, "Conventions"): which scale each
 * dimension of a dataset is attached to (the DIMENSION_LIST attribute, as netCDF-4 and h5py write it), a
 * scale's name (the base name of its dataset), its length (the largest extent among the datasets that
 * use it, as netCDF counts an unlimited dimension) and whether it is unlimited. Include after
 * h5zcommon.h; every function is static. */
#ifndef ZARR_H5Z_DIMSCALES_H
#define ZARR_H5Z_DIMSCALES_H

#include "h5zcommon.h"

/* The text netCDF-4 puts in the NAME attribute of a dimension that has no variable. */
#define DS_NETCDF_DIM_ONLY "This is a netCDF dimension but not a netCDF variable"
/* The prefix netCDF-4 gives a dimension's dataset whose name is taken by another variable. */
#define DS_NETCDF_NON_COORD "_nc4_non_coord_"

typedef struct {
    unsigned long fileno;
    haddr_t addr;       /* the scale dataset's object address: its identity */
    char *name;         /* the dimension name */
    char *group;        /* the path of the group that holds the scale ("/" for the root) */
    uint64_t length;    /* the largest extent along the dimension among the scale and its users */
    int unlimited;      /* the scale or a dataset using it has H5S_UNLIMITED there */
    int dim_only;       /* a netCDF dimension without a variable: not converted to an array */
} dimscale;

static dimscale **g_ds = NULL; /* each entry allocated once: pointers to them stay valid */
static size_t g_nds = 0;

/* The text of a string attribute `name` of `obj` (caller frees), or NULL when absent or not a string. */
static char *ds_string_attr(hid_t obj, const char *name) {
    if (H5Aexists(obj, name) <= 0) return NULL;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) return NULL;
    hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
    char *out = NULL;
    if (t >= 0 && sp >= 0 && H5Tget_class(t) == H5T_STRING && H5Sget_simple_extent_npoints(sp) == 1) {
        if (H5Tis_variable_str(t) > 0) {
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, H5T_VARIABLE);
            char *s = NULL;
            if (H5Aread(a, mt, &s) >= 0 && s) {
                out = xstrdup(s);
                H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, &s);
            }
            H5Tclose(mt);
        } else {
            size_t n = H5Tget_size(t);
            if (n > 0 && n < (1u << 20)) {
                out = xmalloc(n + 1);
                if (H5Aread(a, t, out) < 0) { free(out); out = NULL; }
                else out[n] = 0;
            }
        }
    }
    if (t >= 0) H5Tclose(t);
    if (sp >= 0) H5Sclose(sp);
    H5Aclose(a);
    return out;
}

/* Whether the dataset is a dimension scale (its CLASS attribute is "DIMENSION_SCALE"). */
static int ds_is_scale(hid_t ds) {
    char *c = ds_string_attr(ds, "CLASS");
    int yes = c && !strcmp(c, "DIMENSION_SCALE");
    free(c);
    return yes;
}

/* The entry of the object `obj` (created, with its name and group from its path, when new). */
static dimscale *ds_entry(hid_t obj) {
    H5O_info_t oi;
    if (H5Oget_info(obj, &oi) < 0) return NULL;
    for (size_t k = 0; k < g_nds; k++)
        if (g_ds[k]->addr == oi.addr && g_ds[k]->fileno == oi.fileno) return g_ds[k];
    ssize_t n = H5Iget_name(obj, NULL, 0);
    if (n <= 0) return NULL;
    char *path = xmalloc((size_t)n + 1);
    H5Iget_name(obj, path, (size_t)n + 1);
    g_ds = xrealloc(g_ds, (g_nds + 1) * sizeof *g_ds);
    dimscale *e = g_ds[g_nds++] = xmalloc(sizeof *e);
    memset(e, 0, sizeof *e);
    e->fileno = oi.fileno;
    e->addr = oi.addr;
    char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    if (!strncmp(base, DS_NETCDF_NON_COORD, strlen(DS_NETCDF_NON_COORD)) && base[strlen(DS_NETCDF_NON_COORD)])
        base += strlen(DS_NETCDF_NON_COORD);
    e->name = xstrdup(base);
    if (slash == path || !slash) e->group = xstrdup("/");
    else { *slash = 0; e->group = xstrdup(path); }
    free(path);
    hid_t sp = H5Dget_space(obj);
    if (sp >= 0 && H5Sget_simple_extent_ndims(sp) >= 1) {
        hsize_t d[H5S_MAX_RANK], m[H5S_MAX_RANK];
        H5Sget_simple_extent_dims(sp, d, m);
        e->length = d[0];
        e->unlimited = m[0] == H5S_UNLIMITED;
    }
    if (sp >= 0) H5Sclose(sp);
    char *nm = ds_string_attr(obj, "NAME");
    e->dim_only = nm && !strncmp(nm, DS_NETCDF_DIM_ONLY, strlen(DS_NETCDF_DIM_ONLY));
    free(nm);
    return e;
}

/* The scales attached to each dimension of `ds` (out[d] NULL where none), from its DIMENSION_LIST.
 * Returns 0 when the dataset has no (readable) DIMENSION_LIST. A dimension scale's own first dimension
 * is itself. */
static int ds_attached(hid_t ds, int rank, dimscale **out) {
    for (int d = 0; d < rank; d++) out[d] = NULL;
    int found = 0;
    if (rank >= 1 && ds_is_scale(ds)) { out[0] = ds_entry(ds); found = out[0] != NULL; }
    if (H5Aexists(ds, "DIMENSION_LIST") <= 0) return found;
    hid_t a = H5Aopen(ds, "DIMENSION_LIST", H5P_DEFAULT);
    hid_t sp = H5Aget_space(a), t = H5Aget_type(a);
    if (a < 0 || sp < 0 || t < 0 || H5Tget_class(t) != H5T_VLEN || H5Sget_simple_extent_npoints(sp) != rank) {
        if (t >= 0) H5Tclose(t);
        if (sp >= 0) H5Sclose(sp);
        if (a >= 0) H5Aclose(a);
        return found;
    }
    hid_t mt = H5Tvlen_create(H5T_STD_REF_OBJ);
    hvl_t *v = xmalloc((size_t)rank * sizeof *v);
    if (H5Aread(a, mt, v) >= 0) {
        for (int d = 0; d < rank; d++) {
            if (out[d] || v[d].len < 1 || !v[d].p) continue;
            hobj_ref_t ref = ((hobj_ref_t *)v[d].p)[0];
            hid_t s = H5Rdereference2(ds, H5P_DEFAULT, H5R_OBJECT, &ref);
            if (s < 0) continue;
            out[d] = ds_entry(s);
            found |= out[d] != NULL;
            H5Oclose(s);
        }
        H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, v);
    }
    free(v);
    H5Tclose(mt);
    H5Tclose(t);
    H5Sclose(sp);
    H5Aclose(a);
    return found;
}

static void ds_scan_group(hid_t g, int depth);

static herr_t ds_link_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
    int depth = *(int *)data;
    if (info->type != H5L_TYPE_HARD) return 0;
    H5O_info_t oi;
    if (H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0) return 0;
    if (oi.type == H5O_TYPE_GROUP && depth < 256) {
        hid_t sub = H5Gopen2(g, name, H5P_DEFAULT);
        if (sub >= 0) {
            ds_scan_group(sub, depth + 1);
            H5Gclose(sub);
        }
        return 0;
    }
    if (oi.type != H5O_TYPE_DATASET) return 0;
    hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
    if (ds < 0) return 0;
    hid_t sp = H5Dget_space(ds);
    int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (rank >= 1) {
        hsize_t d[H5S_MAX_RANK], m[H5S_MAX_RANK];
        H5Sget_simple_extent_dims(sp, d, m);
        dimscale *att[H5S_MAX_RANK];
        ds_attached(ds, rank, att);
        for (int k = 0; k < rank; k++) {
            if (!att[k]) continue;
            if (d[k] > att[k]->length) att[k]->length = d[k];
            if (m[k] == H5S_UNLIMITED) att[k]->unlimited = 1;
        }
    }
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(ds);
    return 0;
}

static void ds_scan_group(hid_t g, int depth) {
    hsize_t idx = 0;
    if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, ds_link_cb, &depth) < 0) die("listing an HDF5 group failed");
}

/* Finds every dimension scale of the file and the length of each (the first pass of h5tozarr). */
static void ds_scan(hid_t root) { ds_scan_group(root, 0); }

/* netCDF-C's names for dimensions without a dimension scale (docs/hdf5-netcdf.md, "Dimension names"), as
 * it makes them when it opens a plain HDF5 file (libhdf5/hdf5open.c): per group, a dataset's dimension
 * without a scale takes the first dimension of that group — its scales first, then the phony ones made
 * so far — with the same length and the same unlimited flag that the dataset does not use already;
 * otherwise a new `phony_dim_N` of the group, N the file's next dimension id (after the scales). Groups
 * are visited children first, members in creation order where the group tracks it, else in name order,
 * as netCDF-C does. ds_phony_scan computes the names of every dataset (after ds_scan); ds_names_of gives
 * a dataset's. */
typedef struct {
    char *name;
    uint64_t length;
    int unlimited;
} phony_dim;

typedef struct {
    unsigned long fileno;
    haddr_t addr;
    int rank;
    char **names;
} ds_named;

static ds_named *g_dsnamed = NULL;
static size_t g_ndsnamed = 0;
static size_t g_next_dimid = 0;

typedef struct {
    const char *group;      /* the group's path */
    phony_dim *dims;        /* the group's dimensions: its scales, then phony ones */
    size_t ndims;
    int depth;
} phony_scan;

static void ds_phony_group(hid_t g, const char *path, int depth);

static herr_t ds_phony_groups_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
    phony_scan *ps = data;
    H5O_info_t oi;
    if (info->type != H5L_TYPE_HARD || H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0) return 0;
    if (oi.type != H5O_TYPE_GROUP || ps->depth >= 256) return 0;
    hid_t sub = H5Gopen2(g, name, H5P_DEFAULT);
    if (sub < 0) return 0;
    size_t n = strlen(ps->group) + strlen(name) + 2;
    char *p = xmalloc(n);
    snprintf(p, n, "%s%s%s", ps->group, strcmp(ps->group, "/") ? "/" : "", name);
    ds_phony_group(sub, p, ps->depth + 1);
    free(p);
    H5Gclose(sub);
    return 0;
}

static herr_t ds_phony_datasets_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
    phony_scan *ps = data;
    H5O_info_t oi;
    if (info->type != H5L_TYPE_HARD || H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0) return 0;
    if (oi.type != H5O_TYPE_DATASET) return 0;
    for (size_t k = 0; k < g_ndsnamed; k++)   /* a second link to the same dataset */
        if (g_dsnamed[k].addr == oi.addr && g_dsnamed[k].fileno == oi.fileno) return 0;
    hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
    if (ds < 0) return 0;
    hid_t sp = H5Dget_space(ds);
    int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (rank >= 1 && rank <= H5S_MAX_RANK) {
        hsize_t d[H5S_MAX_RANK], m[H5S_MAX_RANK];
        H5Sget_simple_extent_dims(sp, d, m);
        dimscale *att[H5S_MAX_RANK];
        ds_attached(ds, rank, att);
        ds_named *e;
        g_dsnamed = xrealloc(g_dsnamed, (g_ndsnamed + 1) * sizeof *g_dsnamed);
        e = &g_dsnamed[g_ndsnamed++];
        e->fileno = oi.fileno;
        e->addr = oi.addr;
        e->rank = rank;
        e->names = xmalloc((size_t)rank * sizeof *e->names);
        for (int k = 0; k < rank; k++) {
            if (att[k]) {
                e->names[k] = xstrdup(att[k]->name);
                continue;
            }
            int unlimited = m[k] == H5S_UNLIMITED;
            const char *pick = NULL;
            for (size_t j = 0; j < ps->ndims && !pick; j++) {
                if (ps->dims[j].length != d[k] || ps->dims[j].unlimited != unlimited) continue;
                int used = 0;
                for (int u = 0; u < k; u++) used |= !strcmp(e->names[u], ps->dims[j].name);
                if (!used) pick = ps->dims[j].name;
            }
            if (!pick) {
                char buf[48];
                snprintf(buf, sizeof buf, "phony_dim_%zu", g_next_dimid++);
                ps->dims = xrealloc(ps->dims, (ps->ndims + 1) * sizeof *ps->dims);
                ps->dims[ps->ndims].name = xstrdup(buf);
                ps->dims[ps->ndims].length = d[k];
                ps->dims[ps->ndims].unlimited = unlimited;
                pick = ps->dims[ps->ndims++].name;
            }
            e->names[k] = xstrdup(pick);
        }
    }
    if (sp >= 0) H5Sclose(sp);
    H5Dclose(ds);
    return 0;
}

/* Iterates g's links in creation order where the group tracks it, else in name order. */
static void ds_iterate(hid_t g, H5L_iterate_t cb, void *data) {
    hid_t gcpl = H5Gget_create_plist(g);
    unsigned flags = 0;
    if (gcpl >= 0) {
        H5Pget_link_creation_order(gcpl, &flags);
        H5Pclose(gcpl);
    }
    hsize_t idx = 0;
    H5Literate(g, (flags & H5P_CRT_ORDER_TRACKED) ? H5_INDEX_CRT_ORDER : H5_INDEX_NAME, H5_ITER_INC, &idx, cb, data);
}

static void ds_phony_group(hid_t g, const char *path, int depth) {
    phony_scan ps = {path, NULL, 0, depth};
    ds_iterate(g, ds_phony_groups_cb, &ps);   /* children first, as netCDF-C numbers them */
    for (size_t k = 0; k < g_nds; k++)
        if (!strcmp(g_ds[k]->group, path)) {
            ps.dims = xrealloc(ps.dims, (ps.ndims + 1) * sizeof *ps.dims);
            ps.dims[ps.ndims].name = xstrdup(g_ds[k]->name);
            ps.dims[ps.ndims].length = g_ds[k]->length;
            ps.dims[ps.ndims++].unlimited = g_ds[k]->unlimited;
        }
    ds_iterate(g, ds_phony_datasets_cb, &ps);
    for (size_t k = 0; k < ps.ndims; k++) free(ps.dims[k].name);
    free(ps.dims);
}

static void ds_phony_scan(hid_t root) {
    g_next_dimid = g_nds;
    ds_phony_group(root, "/", 0);
}

/* The dimension names of dataset `ds` (rank entries, owned by the table), or NULL when it has none. */
static char **ds_names_of(hid_t ds) {
    H5O_info_t oi;
    if (H5Oget_info(ds, &oi) < 0) return NULL;
    for (size_t k = 0; k < g_ndsnamed; k++)
        if (g_dsnamed[k].addr == oi.addr && g_dsnamed[k].fileno == oi.fileno) return g_dsnamed[k].names;
    return NULL;
}

#endif
