/* h5tozarr: named (committed) HDF5 datatypes, such as netCDF-4's user-defined enum and compound types
 * (docs/hdf5-netcdf.md, "Named types"). Zarr has no named types: each is recorded in its group's
 * `_libzarr_hdf5.named_types` ({"<name>": <record>}, the record as attribute_types writes an enum or a
 * compound), and a dataset or attribute of a named type gets `"named_type": "<path of the type>"` (in
 * the array's record, or beside the attribute's type record), so that zarrtoh5 commits the types again
 * and uses them. A named type without such a record (a variable-length, opaque or string-holding type)
 * is named as having no Zarr form (--skip-unsupported leaves it out). Included once by h5tozarr.c. */
#ifndef ZARR_H5TOZARR_NAMED_TYPES_H
#define ZARR_H5TOZARR_NAMED_TYPES_H

static int record_json(sbuf *b, hid_t t, char *msg, size_t msz);
static void unsupported(const char *path, const char *msg);

/* The named types seen so far (a group's before its datasets): path, group, the open type. */
typedef struct {
    char *path, *group;
    hid_t type;
} named_type;
static named_type *g_named = NULL;
static size_t g_nnamed = 0;

/* Whether the object at `obj` lies in the group `group` or below it (where netCDF-4 sees its types). */
static int in_scope(const char *group, const char *obj) {
    size_t n = strlen(group);
    return !strcmp(group, "/") || (!strncmp(obj, group, n) && (obj[n] == '/' || obj[n] == 0));
}

/* The path of the named type of a dataset's or attribute's type `t` on the object at `obj` (caller
 * frees), or NULL: a committed type's own path; netCDF-C stores its variables with a copy of the
 * type, not the committed one, and finds the name as it does: the nearest named type in scope that
 * HDF5 finds equal (H5Tequal). Only enums and compounds are looked up (a number type is not named). */
static char *named_type_path(hid_t t, const char *obj) {
    if (H5Tcommitted(t) > 0) {
        ssize_t n = H5Iget_name(t, NULL, 0);
        if (n > 0) {
            char *p = xmalloc((size_t)n + 1);
            H5Iget_name(t, p, (size_t)n + 1);
            return p;
        }
    }
    H5T_class_t cls = H5Tget_class(t);
    if (cls != H5T_ENUM && cls != H5T_COMPOUND) return NULL;
    const named_type *best = NULL;
    for (size_t k = 0; k < g_nnamed; k++) {
        const named_type *e = &g_named[k];
        if (!in_scope(e->group, obj) || (best && strlen(best->group) >= strlen(e->group))) continue;
        if (H5Tequal(t, e->type) > 0) best = e;
    }
    return best ? xstrdup(best->path) : NULL;
}

/* `,"named_type":"<path>"` (JSON object members) for a type of a named type, appended to `b` (`comma`:
 * after other members); nothing otherwise. */
static void named_type_member(sbuf *b, hid_t t, const char *obj, int comma) {
    char *p = named_type_path(t, obj);
    if (!p) return;
    if (comma) sb_puts(b, ",");
    sb_puts(b, "\"named_type\":");
    sb_json_str(b, p, strlen(p));
    free(p);
}

typedef struct {
    sbuf *out;
    const char *path;
    int any;
} named_ctx;

static herr_t named_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
    named_ctx *c = data;
    H5O_info_t oi;
    if (info->type != H5L_TYPE_HARD || H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0 ||
        oi.type != H5O_TYPE_NAMED_DATATYPE)
        return 0;
    char *child = xmalloc(strlen(c->path) + strlen(name) + 2);
    sprintf(child, "%s%s%s", c->path, strcmp(c->path, "/") ? "/" : "", name);
    hid_t t = H5Topen2(g, name, H5P_DEFAULT);
    if (t < 0) die("%s: HDF5 cannot open the named datatype", child);
    sbuf rec = {0};
    char why[400], msg[512];
    if (record_json(&rec, t, why, sizeof why)) { /* an enum, a compound, a number type */
        sb_puts(c->out, c->any ? "," : "\"named_types\":{");
        c->any = 1;
        sb_json_str(c->out, name, strlen(name));
        sb_puts(c->out, ":");
        sb_puts(c->out, rec.p);
        g_named = xrealloc(g_named, (g_nnamed + 1) * sizeof *g_named);
        g_named[g_nnamed].path = xstrdup(child);
        g_named[g_nnamed].group = xstrdup(c->path);
        g_named[g_nnamed++].type = H5Tcopy(t);
    } else {
        snprintf(msg, sizeof msg, "a named datatype with no Zarr form: %s", why);
        unsupported(child, msg);
    }
    free(rec.p);
    H5Tclose(t);
    free(child);
    return 0;
}

/* The `named_types` record of the group `g` at `path` (JSON object members, caller frees; "" when it
 * holds no named type). */
static char *named_types_json(hid_t g, const char *path) {
    sbuf b = {0};
    sb_puts(&b, "");
    named_ctx c = {&b, path, 0};
    hsize_t idx = 0;
    if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, named_cb, &c) < 0) die("%s: listing the group failed", path);
    if (c.any) sb_puts(&b, "}");
    return b.p;
}

#endif
