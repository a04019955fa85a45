/* H5Dread / H5Dwrite: HDF5 selections onto libzarr's strided reads and writes.
 *
 * The file selection: everything, or a regular hyperslab whose blocks line up into one strided
 * selection (block 1, a single block, or blocks that touch) goes to zarr_read_hyperslab /
 * zarr_write_hyperslab directly (a box, steps all 1: zarr_read_region / zarr_write_region, as libzarr's own
 * whole reads); points are read or written one by one; any other selection (unions
 * of hyperslabs, irregular blocks) through its bounding box, gathered and scattered by HDF5 in the
 * selection's order. The memory side: a memory space selecting all of it, in the stored type's
 * native twin, gets libzarr's bytes directly; other memory types are converted by H5Tconvert (HDF5's
 * conversion rules), other memory selections scattered or gathered by H5Dscatter / H5Dgather. */
#include "zvol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef zh5_slab slab;

/* 1 when the file selection is one strided selection (filled into s), 0 when not, -1 on error. */
int zh5_file_slab(hid_t fspace, int rank, const uint64_t *shape, slab *s)
{
    for (int d = 0; d < rank; d++) {
        s->start[d] = 0;
        s->count[d] = shape[d];
        s->step[d] = 1;
    }
    if (fspace == H5S_ALL || H5Sget_select_type(fspace) == H5S_SEL_ALL)
        return 1;
    if (H5Sget_select_type(fspace) != H5S_SEL_HYPERSLABS || H5Sis_regular_hyperslab(fspace) <= 0)
        return 0;
    hsize_t start[ZH5_MAX_RANK], stride[ZH5_MAX_RANK], count[ZH5_MAX_RANK], block[ZH5_MAX_RANK];
    if (H5Sget_regular_hyperslab(fspace, start, stride, count, block) < 0)
        return -1;
    for (int d = 0; d < rank; d++) {
        s->start[d] = start[d];
        if (block[d] == 1) {
            s->count[d] = count[d];
            s->step[d] = stride[d] ? stride[d] : 1;
        } else if (count[d] == 1 || stride[d] == block[d]) {
            s->count[d] = count[d] * block[d];
            s->step[d] = 1;
        } else {
            return 0;
        }
    }
    return 1;
}

herr_t zh5_scatter_cb(const void **src, size_t *used, void *data)
{
    zh5_scatter_src *s = data;
    *src = s->buf;
    *used = s->size;
    return 0;
}

/* A copy of fspace's selection moved into the bounding box lo..hi, over a box-sized extent. */
hid_t zh5_box_space(hid_t fspace, int rank, const hsize_t *lo, const hsize_t *hi)
{
    hsize_t dims[ZH5_MAX_RANK];
    hssize_t off[ZH5_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        dims[d] = hi[d] - lo[d] + 1;
        off[d] = (hssize_t)lo[d];
    }
    hid_t box = H5Screate_simple(rank, dims, NULL);
    if (box < 0)
        return box;
    if (H5Sselect_copy(box, fspace) < 0 || H5Sselect_adjust(box, off) < 0) {
        H5Sclose(box);
        return H5I_INVALID_HID;
    }
    return box;
}

typedef struct {
    uint64_t linear;   /* the element's C-order index in the array */
    size_t at;         /* its place in the staging buffer */
} placed;

static int by_linear(const void *a, const void *b)
{
    uint64_t x = ((const placed *)a)->linear, y = ((const placed *)b)->linear;
    return x < y ? -1 : x > y;
}

/* A union of hyperslabs, block by block: HDF5 orders such a selection by C-order position, so each
   element's place in the packed buffer is the rank of its position among the selected ones. The blocks
   HDF5 lists are disjoint. */
static herr_t blocks_io(zh5_obj *ds, hid_t fspace, const uint64_t *shape, size_t npoints, void *packed, int write)
{
    int rank = ds->rank;
    size_t es = ds->esize;
    hssize_t nblocks = H5Sget_select_hyper_nblocks(fspace);
    if (nblocks < 0)
        return -1;
    hsize_t *corners = malloc((size_t)nblocks * 2 * (size_t)rank * sizeof *corners);
    placed *order = malloc((npoints ? npoints : 1) * sizeof *order);
    unsigned char *staging = malloc((npoints ? npoints : 1) * es);
    herr_t ret = -1;
    zarr_status st = ZARR_OK;
    if (!corners || !order || !staging || H5Sget_select_hyper_blocklist(fspace, 0, (hsize_t)nblocks, corners) < 0)
        goto done;
    /* each element's array position, in block order */
    size_t k = 0;
    for (hssize_t b = 0; b < nblocks; b++) {
        const hsize_t *lo = corners + (size_t)b * 2 * (size_t)rank, *hi = lo + rank;
        uint64_t idx[ZH5_MAX_RANK], n = 1;
        for (int d = 0; d < rank; d++) {
            idx[d] = lo[d];
            n *= hi[d] - lo[d] + 1;
        }
        for (uint64_t e = 0; e < n && k < npoints; e++, k++) {
            uint64_t lin = 0;
            for (int d = 0; d < rank; d++)
                lin = lin * shape[d] + idx[d];
            order[k].linear = lin;
            order[k].at = k;
            for (int d = rank - 1; d >= 0 && ++idx[d] > hi[d]; d--)
                idx[d] = lo[d];
        }
    }
    if (k != npoints) {
        zh5_err(H5E_DATASPACE, H5E_BADVALUE, "the selection's blocks hold %zu elements, not %zu", k, npoints);
        goto done;
    }
    /* rank[at] = the element's place in selection order */
    qsort(order, npoints, sizeof *order, by_linear);
    size_t *place = malloc((npoints ? npoints : 1) * sizeof *place);
    if (!place)
        goto done;
    for (size_t i = 0; i < npoints; i++)
        place[order[i].at] = i;
    if (write)
        for (size_t i = 0; i < npoints; i++)
            memcpy(staging + i * es, (unsigned char *)packed + place[i] * es, es);
    size_t offset = 0;
    for (hssize_t b = 0; b < nblocks && st == ZARR_OK; b++) {
        const hsize_t *lo = corners + (size_t)b * 2 * (size_t)rank, *hi = lo + rank;
        uint64_t start[ZH5_MAX_RANK], count[ZH5_MAX_RANK], n = 1;
        for (int d = 0; d < rank; d++) {
            start[d] = lo[d];
            count[d] = hi[d] - lo[d] + 1;
            n *= count[d];
        }
        st = write ? zarr_write_region(ds->array, start, count, staging + offset * es, (size_t)n * es)
                   : zarr_read_region(ds->array, start, count, staging + offset * es, (size_t)n * es);
        offset += (size_t)n;
    }
    if (st == ZARR_OK && !write)
        for (size_t i = 0; i < npoints; i++)
            memcpy((unsigned char *)packed + place[i] * es, staging + i * es, es);
    free(place);
    if (st != ZARR_OK) {
        char what[1200];
        snprintf(what, sizeof what, "%s the dataset \"/%s\" of %s", write ? "writing" : "reading", ds->path,
                 ds->file->location);
        zh5_zerr(H5E_DATASET, write ? H5E_WRITEERROR : H5E_READERROR, st, what);
        goto done;
    }
    ret = 0;
done:
    free(corners);
    free(order);
    free(staging);
    return ret;
}

static int unit_steps(const slab *s, int rank)
{
    for (int d = 0; d < rank; d++)
        if (s->step[d] != 1)
            return 0;
    return 1;
}

/* Reads (write = 0) or writes (write = 1) the file selection's elements, packed in selection order, in
   the native type, from or into `packed`. */
static herr_t file_io(zh5_obj *ds, hid_t fspace, const uint64_t *shape, size_t npoints, void *packed, int write)
{
    int rank = ds->rank;
    slab s;
    zarr_status st = ZARR_OK;
    int kind = rank == 0 ? 1 : zh5_file_slab(fspace, rank, shape, &s);
    if (kind < 0)
        return -1;
    if (rank == 0) {   /* a scalar: the region of rank 0 (no start or count to read: zh5_file_slab set none) */
        static const uint64_t none[1] = {0};
        st = write ? zarr_write_region(ds->array, none, none, packed, ds->esize)
                   : zarr_read_region(ds->array, none, none, packed, ds->esize);
    } else if (kind == 1 && unit_steps(&s, rank)) {   /* a box (the whole array too): libzarr's region calls */
        st = write ? zarr_write_region(ds->array, s.start, s.count, packed, npoints * ds->esize)
                   : zarr_read_region(ds->array, s.start, s.count, packed, npoints * ds->esize);
    } else if (kind == 1) {
        st = write ? zarr_write_hyperslab(ds->array, s.start, s.count, s.step, NULL, ds->ztype, packed,
                                          npoints * ds->esize)
                   : zarr_read_hyperslab(ds->array, s.start, s.count, s.step, NULL, ds->ztype, packed,
                                         npoints * ds->esize);
    } else if (H5Sget_select_type(fspace) == H5S_SEL_POINTS) {
        hsize_t *coords = malloc(npoints * (size_t)rank * sizeof *coords);
        uint64_t start[ZH5_MAX_RANK], one[ZH5_MAX_RANK];
        if (!coords || H5Sget_select_elem_pointlist(fspace, 0, npoints, coords) < 0) {
            free(coords);
            zh5_err(H5E_DATASPACE, H5E_CANTGET, "cannot list the selected points");
            return -1;
        }
        for (size_t i = 0; i < npoints && st == ZARR_OK; i++) {
            unsigned char *elem = (unsigned char *)packed + i * ds->esize;
            for (int d = 0; d < rank; d++) {
                start[d] = coords[i * (size_t)rank + (size_t)d];
                one[d] = 1;
            }
            st = write ? zarr_write_region(ds->array, start, one, elem, ds->esize)
                       : zarr_read_region(ds->array, start, one, elem, ds->esize);
        }
        free(coords);
    } else {
        hsize_t lo[ZH5_MAX_RANK], hi[ZH5_MAX_RANK];
        uint64_t start[ZH5_MAX_RANK], count[ZH5_MAX_RANK], nbox = 1;
        if (H5Sget_select_bounds(fspace, lo, hi) < 0)
            return -1;
        for (int d = 0; d < rank; d++) {
            start[d] = lo[d];
            count[d] = hi[d] - lo[d] + 1;
            nbox *= count[d];
        }
        /* a sparse union of hyperslabs (h5py's index lists): block by block instead of the whole box */
        if (nbox / 4 > npoints && H5Sget_select_type(fspace) == H5S_SEL_HYPERSLABS)
            return blocks_io(ds, fspace, shape, npoints, packed, write);
        if (nbox > ZH5_MAX_BOX / ds->esize) {
            zh5_err(H5E_DATASPACE, H5E_UNSUPPORTED,
                    "the selection's bounding box (%llu elements) is too large for an irregular selection",
                    (unsigned long long)nbox);
            return -1;
        }
        size_t boxbytes = (size_t)nbox * ds->esize;
        void *box = malloc(boxbytes ? boxbytes : 1);
        hid_t bspace = box ? zh5_box_space(fspace, rank, lo, hi) : H5I_INVALID_HID;
        if (bspace < 0) {
            free(box);
            zh5_err(H5E_DATASPACE, H5E_CANTINIT, "cannot map the selection onto its bounding box");
            return -1;
        }
        st = zarr_read_region(ds->array, start, count, box, boxbytes);
        if (st == ZARR_OK && !write) {
            if (H5Dgather(bspace, box, ds->mem_native, npoints * ds->esize, packed, NULL, NULL) < 0)
                st = ZARR_ERR_INTERNAL;
        } else if (st == ZARR_OK) {
            zh5_scatter_src src = {packed, npoints * ds->esize};
            if (H5Dscatter(zh5_scatter_cb, &src, ds->mem_native, bspace, box) < 0)
                st = ZARR_ERR_INTERNAL;
            else
                st = zarr_write_region(ds->array, start, count, box, boxbytes);
        }
        H5Sclose(bspace);
        free(box);
    }
    if (st != ZARR_OK) {
        char what[1200];
        snprintf(what, sizeof what, "%s the dataset \"/%s\" of %s", write ? "writing" : "reading", ds->path,
                 ds->file->location);
        zh5_zerr(H5E_DATASET, write ? H5E_WRITEERROR : H5E_READERROR, st, what);
        return -1;
    }
    return 0;
}

/* The number of selected elements and whether the memory side is packed (all of it selected). */
static herr_t plan(zh5_obj *ds, hid_t mspace, hid_t *fspace, uint64_t *shape, size_t *npoints, int *packed)
{
    if (ds->rank > 0 && zarr_array_shape(ds->array, shape, (size_t)ds->rank) != ZARR_OK) {
        zh5_zerr(H5E_DATASET, H5E_CANTGET, ZARR_ERR_INVALID_HANDLE, "shape");
        return -1;
    }
    hssize_t n;
    if (*fspace == H5S_ALL) {
        n = 1;
        for (int d = 0; d < ds->rank; d++)
            n *= (hssize_t)shape[d];
    } else {
        n = H5Sget_select_npoints(*fspace);
        if (H5Sselect_valid(*fspace) <= 0) {
            zh5_err(H5E_DATASPACE, H5E_BADRANGE, "the selection lies outside the extent of \"/%s\"", ds->path);
            return -1;
        }
    }
    if (n < 0)
        return -1;
    *npoints = (size_t)n;
    if (mspace == H5S_ALL)
        *packed = *fspace == H5S_ALL || H5Sget_select_type(*fspace) == H5S_SEL_ALL;
    else
        *packed = H5Sget_select_type(mspace) == H5S_SEL_ALL;
    if (mspace != H5S_ALL && (hssize_t)H5Sget_select_npoints(mspace) != n) {
        zh5_err(H5E_DATASPACE, H5E_BADVALUE, "the memory selection has %lld elements, the file selection %lld",
                (long long)H5Sget_select_npoints(mspace), (long long)n);
        return -1;
    }
    return 0;
}

/* Whether libzarr may convert the stored values to the memory type `mtype` itself: a native-order integer or
   float type that holds every value of the stored type exactly (a wider integer of a sign that fits, float32
   for integers of up to 16 bits, float64 for up to 32, a wider float), so that its conversion and HDF5's
   give the same values. The memory type's Zarr type in *mz. */
static int lossless_read_type(const zh5_obj *ds, hid_t mtype, zarr_data_type *mz)
{
    H5T_class_t cls = H5Tget_class(mtype);
    int big;
    if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || H5Tget_order(mtype) != H5Tget_order(H5T_NATIVE_INT))
        return 0;
    if (zh5_type_to_zarr(mtype, mz, &big) < 0)
        return 0;   /* its error entry goes with the next HDF5 call (H5Tconvert's path is taken) */
    static const struct { zarr_data_type t; int is_float, is_signed, bits; } info[] = {
        {ZARR_INT8, 0, 1, 8},    {ZARR_INT16, 0, 1, 16},  {ZARR_INT32, 0, 1, 32},  {ZARR_INT64, 0, 1, 64},
        {ZARR_UINT8, 0, 0, 8},   {ZARR_UINT16, 0, 0, 16}, {ZARR_UINT32, 0, 0, 32}, {ZARR_UINT64, 0, 0, 64},
        {ZARR_FLOAT16, 1, 1, 16}, {ZARR_FLOAT32, 1, 1, 32}, {ZARR_FLOAT64, 1, 1, 64},
    };
    int s = -1, m = -1;
    for (int i = 0; i < (int)(sizeof info / sizeof *info); i++) {
        if (info[i].t == ds->ztype)
            s = i;
        if (info[i].t == *mz)
            m = i;
    }
    if (s < 0 || m < 0 || s == m)
        return 0;
    if (info[m].is_float && info[s].is_float)
        return info[m].bits > info[s].bits;
    if (info[m].is_float)   /* mantissas of 11, 24 and 53 bits */
        return info[s].bits <= (info[m].bits == 16 ? 8 : info[m].bits == 32 ? 16 : 32);
    if (info[s].is_float)
        return 0;
    return info[m].is_signed == info[s].is_signed ? info[m].bits > info[s].bits
                                                  : info[m].is_signed && info[m].bits > info[s].bits;
}

/* One dataset's read (writing 0) or write (1). Straight between buf and libzarr when the memory
   selection is packed and the memory type is the stored one; otherwise through a packed buffer that
   HDF5 converts and scatters (read), or gathers and converts (write). A write only reads buf. */
static herr_t transfer(zh5_obj *ds, hid_t mtype, hid_t mspace, hid_t fspace, void *buf, int writing)
{
    uint64_t shape[ZH5_MAX_RANK];
    size_t n;
    int packed;
    if (writing && ds->file->intent != H5F_ACC_RDWR) {
        zh5_err(H5E_DATASET, H5E_WRITEERROR, "%s was opened read-only: cannot write \"/%s\"", ds->file->location,
                ds->path);
        return -1;
    }
    if (plan(ds, mspace, &fspace, shape, &n, &packed) < 0)
        return -1;
    if (n == 0)
        return 0;
    hid_t mem_sel = mspace == H5S_ALL ? fspace : mspace;
    if (ds->ztype == ZARR_STRING)
        return writing ? zh5_vlen_write(ds, mtype, mem_sel, fspace, shape, n, packed, buf)
                       : zh5_vlen_read(ds, mtype, mem_sel, fspace, shape, n, packed, buf);
    size_t msize = H5Tget_size(mtype), big = msize > ds->esize ? msize : ds->esize;
    int same = H5Tequal(mtype, ds->mem_native) > 0;
    if (packed && same)
        return file_io(ds, fspace, shape, n, buf, writing);
    /* a read of one strided selection into a memory type libzarr converts to without loss: straight into
       buf, converted by libzarr while it copies out of the chunks (no staging buffer, no H5Tconvert) */
    zarr_data_type mz;
    slab s;
    if (!writing && packed && ds->rank > 0 && lossless_read_type(ds, mtype, &mz) &&
        zh5_file_slab(fspace, ds->rank, shape, &s) == 1) {
        zarr_status st = zarr_read_hyperslab(ds->array, s.start, s.count, s.step, NULL, mz, buf, n * msize);
        if (st != ZARR_OK) {
            char what[1200];
            snprintf(what, sizeof what, "reading the dataset \"/%s\" of %s", ds->path, ds->file->location);
            zh5_zerr(H5E_DATASET, H5E_READERROR, st, what);
            return -1;
        }
        return 0;
    }
    void *tmp = malloc(n * big);
    if (!tmp) {
        zh5_err(H5E_DATASET, H5E_CANTALLOC, "out of memory for %zu elements", n);
        return -1;
    }
    herr_t ret = 0;
    if (writing) {
        if (packed)
            memcpy(tmp, buf, n * msize);
        else if (H5Dgather(mem_sel, buf, mtype, n * msize, tmp, NULL, NULL) < 0)
            ret = -1;
        if (ret == 0 && !same)
            ret = zh5_convert(mtype, ds->mem_native, n, tmp);
        if (ret == 0)
            ret = file_io(ds, fspace, shape, n, tmp, 1);
    } else {
        ret = file_io(ds, fspace, shape, n, tmp, 0);
        if (ret == 0 && !same)
            ret = zh5_convert(ds->mem_native, mtype, n, tmp);
        if (ret == 0 && packed) {
            memcpy(buf, tmp, n * msize);
        } else if (ret == 0) {
            zh5_scatter_src src = {tmp, n * msize};
            ret = H5Dscatter(zh5_scatter_cb, &src, mtype, mem_sel, buf);
        }
    }
    free(tmp);
    return ret;
}

herr_t zh5_dataset_read(size_t count, void *dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[],
                        hid_t dxpl, void *buf[], void **req)
{
    (void)dxpl;
    (void)req;
    for (size_t i = 0; i < count; i++)
        if (transfer(dset[i], mem_type[i], mem_space[i], file_space[i], buf[i], 0) < 0)
            return -1;
    return 0;
}

herr_t zh5_dataset_write(size_t count, void *dset[], hid_t mem_type[], hid_t mem_space[], hid_t file_space[],
                         hid_t dxpl, const void *buf[], void **req)
{
    (void)dxpl;
    (void)req;
    for (size_t i = 0; i < count; i++)
        if (transfer(dset[i], mem_type[i], mem_space[i], file_space[i], (void *)buf[i], 1) < 0)   /* only read */
            return -1;
    return 0;
}
