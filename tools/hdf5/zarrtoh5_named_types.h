/* zarrtoh5: the named (committed) HDF5 datatypes that h5tozarr recorded (docs/hdf5-netcdf.md, "Named
 * types"): a group's `_libzarr_hdf5.named_types` ({"<name>": <enum, compound or number-type record>})
 * are committed in that HDF5 group, and a dataset or an attribute whose record names one
 * (`"named_type": "<path>"`) is created with it, so that netCDF-4 shows the types by their names
 * (cloud_t, not _AnonymousEnum1). Included once by zarrtoh5.c. */
#ifndef ZARR_ZARRTOH5_NAMED_TYPES_H
#define ZARR_ZARRTOH5_NAMED_TYPES_H

static hid_t record_type(const jv *rec, char *msg, size_t msz);

/* Commits the named types of the record `types` (the group's `named_types`, may be NULL) in the HDF5
 * group `hg` at `path`; a record no type can be made of is named on stderr and left out. */
static void commit_named_types(hid_t hg, const jv *types, const char *path) {
    if (!types || types->t != J_OBJ) return;
    for (size_t k = 0; k < types->n; k++) {
        char msg[512];
        const char *name = types->keys[k];
        hid_t t = zh_usable_name(name) ? record_type(&types->items[k], msg, sizeof msg) : -1;
        if (t < 0) {
            fprintf(stderr, "zarrtoh5: %s: named type '%s': %s: left out\n", path, name,
                    zh_usable_name(name) ? msg : "not a usable HDF5 name");
            continue;
        }
        if (H5Tcommit2(hg, name, t, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) < 0)
            die("%s: committing the named type '%s' failed (is the name taken?)", path, name);
        H5Tclose(t);
    }
}

/* The committed type that the record `rec` (an array's record, or an attribute's type record) names in
 * its `named_type`, opened from `loc`, when it exists and is of the class `cls`; else -1 (the caller
 * keeps its anonymous type). */
static hid_t open_named_type(hid_t loc, const jv *rec, H5T_class_t cls) {
    const jv *nt = jv_get(rec, "named_type");
    if (!nt || nt->t != J_STR || nt->s[0] != '/') return -1;
    hid_t t = H5Topen2(loc, nt->s, H5P_DEFAULT);
    if (t >= 0 && H5Tget_class(t) != cls) {
        H5Tclose(t);
        t = -1;
    }
    return t;
}

#endif
