/* Anonymous datasets (H5Dcreate_anon), which h5py's group[name] = data makes before naming them with
 * H5Olink. A Zarr array exists only at a path, so the dataset is first made in a scratch hierarchy of
 * its own in memory (memory://), the creation's datatype, dataspace and properties kept; what the
 * application writes before linking goes there. The hard link (H5Olink, H5Lcreate_hard) then creates
 * the array at the link's path in the file the dataset was created for, with the same creation
 * arguments, copies the values into it and moves the dataset object (the identifier the application
 * holds) onto it. A dataset closed without a link is dropped, its scratch node deleted. */
#include "zvol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct zh5_anon {
    zh5_file *home;   /* the file the dataset was created for (a reference held) */
    hid_t type, space, dcpl;
};

static unsigned long next_scratch = 1;

static void anon_free(struct zh5_anon *a)
{
    if (!a)
        return;
    if (a->type >= 0)
        H5Tclose(a->type);
    if (a->space >= 0)
        H5Sclose(a->space);
    if (a->dcpl >= 0)
        H5Pclose(a->dcpl);
    zh5_file_release(a->home);
    free(a);
}

void *zh5_dataset_create_anon(zh5_obj *obj, hid_t lcpl, hid_t type, hid_t space, hid_t dcpl, hid_t dxpl, void **req)
{
    char location[96];
    int format = 3;
    zarr_group *root = NULL;
    zh5_file *scratch;
    zh5_obj *scratch_root, *ds;
    struct zh5_anon *a;
    H5VL_loc_params_t self;
    if (obj->file->intent != H5F_ACC_RDWR) {
        zh5_err(H5E_DATASET, H5E_WRITEERROR, "cannot create an anonymous dataset: %s is open read-only",
                obj->file->location);
        return NULL;
    }
    zarr_group_zarr_format(obj->file->root, &format);
    snprintf(location, sizeof location, "memory://libzarr-h5vol-anonymous-%ld-%lu", (long)getpid(), next_scratch++);
    zarr_status st = zarr_group_create_with_options(location, NULL, NULL, format, &root);
    if (st != ZARR_OK) {
        zh5_zerr(H5E_DATASET, H5E_CANTCREATE, st, "the scratch hierarchy of an anonymous dataset");
        return NULL;
    }
    if (!(scratch = zh5_file_new(location, H5F_ACC_RDWR, root))) {
        zarr_group_close(root);
        return NULL;
    }
    if (!(scratch_root = zh5_obj_new(ZH5_FILE, scratch, ""))) {
        scratch->refs = 1;
        zh5_file_release(scratch);
        return NULL;
    }
    memset(&self, 0, sizeof self);
    self.type = H5VL_OBJECT_BY_SELF;
    self.obj_type = H5I_FILE;
    ds = zh5_dataset_create(scratch_root, &self, "anonymous", lcpl, type, space, dcpl, H5P_DEFAULT, dxpl, req);
    zh5_obj_free(scratch_root);   /* the scratch file lives on with the dataset */
    if (!ds)
        return NULL;
    if (!(a = calloc(1, sizeof *a))) {
        zh5_err(H5E_DATASET, H5E_CANTALLOC, "out of memory");
        zh5_obj_free(ds);
        return NULL;
    }
    a->home = obj->file;
    a->home->refs++;
    a->type = H5Tcopy(type);
    a->space = H5Scopy(space);
    a->dcpl = H5Pcopy(dcpl);
    ds->anon = a;
    if (a->type < 0 || a->space < 0 || a->dcpl < 0) {
        zh5_err(H5E_DATASET, H5E_CANTCREATE, "cannot keep the creation arguments of an anonymous dataset");
        zh5_obj_free(ds);
        return NULL;
    }
    return ds;
}

void zh5_anon_drop(zh5_obj *ds)
{
    if (!ds->anon)
        return;
    zarr_group_delete_member(ds->file->root, ds->path);   /* frees the scratch values */
    anon_free(ds->anon);
    ds->anon = NULL;
}

/* Every value of `from` into `to` (same shape and data type). */
static int copy_values(zh5_obj *from, zh5_obj *to)
{
    uint64_t start[ZH5_MAX_RANK] = {0}, count[ZH5_MAX_RANK] = {0};
    size_t esize = 0, n = 1;
    zarr_data_type dt;
    zarr_status st = zarr_array_shape(from->array, count, (size_t)from->rank);
    if (st == ZARR_OK)
        st = zarr_array_data_type(from->array, &dt, &esize);
    for (int d = 0; st == ZARR_OK && d < from->rank; d++)
        n = count[d] && n > SIZE_MAX / count[d] ? 0 : n * (size_t)count[d];
    if (st == ZARR_OK && dt == ZARR_STRING) {
        zarr_vlen *v = NULL;
        const uint64_t *offsets = NULL;
        const uint8_t *data = NULL;
        size_t m = 0;
        st = zarr_read_region_vlen(from->array, start, count, &v);
        if (st == ZARR_OK)
            st = zarr_vlen_view(v, &offsets, &data, &m);
        if (st == ZARR_OK)
            st = zarr_write_region_vlen(to->array, start, count, offsets, data, (size_t)offsets[m]);
        zarr_vlen_free(v);
    } else if (st == ZARR_OK && n > 0) {
        void *buf = esize && n <= SIZE_MAX / esize ? malloc(n * esize) : NULL;
        if (!buf) {
            zh5_err(H5E_DATASET, H5E_CANTALLOC, "no memory to copy the anonymous dataset's %zu values to \"/%s\"", n,
                    to->path);
            return -1;
        }
        st = zarr_read_region(from->array, start, count, buf, n * esize);
        if (st == ZARR_OK)
            st = zarr_write_region(to->array, start, count, buf, n * esize);
        free(buf);
    }
    if (st != ZARR_OK) {
        char what[1200];
        snprintf(what, sizeof what, "cannot copy the anonymous dataset's values to \"/%s\"", to->path);
        zh5_zerr(H5E_DATASET, H5E_WRITEERROR, st, what);
        return -1;
    }
    return 0;
}

herr_t zh5_dataset_link_anon(zh5_obj *ds, zh5_obj *at, const H5VL_loc_params_t *loc, hid_t lcpl, hid_t dxpl,
                             void **req)
{
    struct zh5_anon *a = ds->anon;
    H5VL_loc_params_t self;
    zh5_obj *real;
    if (loc->type != H5VL_OBJECT_BY_NAME || at->file != a->home) {
        zh5_err(H5E_LINK, H5E_UNSUPPORTED, "an anonymous dataset is linked by name, in the file it was created for (%s)",
                a->home->location);
        return -1;
    }
    memset(&self, 0, sizeof self);
    self.type = H5VL_OBJECT_BY_SELF;
    self.obj_type = loc->obj_type;
    real = zh5_dataset_create(at, &self, loc->loc_data.loc_by_name.name, lcpl, a->type, a->space, a->dcpl,
                              H5P_DEFAULT, dxpl, req);
    if (!real)
        return -1;
    if (copy_values(ds, real) < 0) {
        zarr_group_delete_member(real->file->root, real->path);
        zh5_obj_free(real);
        return -1;
    }
    /* the dataset object moves onto the new array; `real` takes the scratch one away */
    zh5_anon_drop(ds);
    zh5_obj swap = *ds;
    ds->file = real->file;
    ds->path = real->path;
    ds->array = real->array;
    ds->file_type = real->file_type;
    ds->mem_native = real->mem_native;
    real->file = swap.file;
    real->path = swap.path;
    real->array = swap.array;
    real->file_type = swap.file_type;
    real->mem_native = swap.mem_native;
    zh5_obj_free(real);
    return 0;
}
