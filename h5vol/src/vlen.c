/* Variable-length string datasets: Zarr `string` arrays (ZARR_STRING) as HDF5 variable-length UTF-8
 * strings, whose memory form is one NUL-terminated char * per element (malloc'd on read: the
 * application frees them, e.g. with H5Treclaim). libzarr reads and writes such arrays by regions:
 * a selection goes through its bounding box, whose positions HDF5 orders (H5Dgather over an index
 * box); points one by one. Other memory types (h5py's Python objects) are converted by H5Tconvert. */
#include "zvol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZH5_MAX_VLEN_BOX ((uint64_t)1 << 28)

static void free_strings(char **s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        free(s[i]);
}

static zarr_status read_box(zh5_obj *ds, const uint64_t *start, const uint64_t *count, size_t n, char **out)
{
    zarr_vlen *v = NULL;
    const uint64_t *off = NULL;
    const uint8_t *data = NULL;
    size_t m = 0;
    zarr_status st = zarr_read_region_vlen(ds->array, start, count, &v);
    if (st != ZARR_OK)
        return st;
    zarr_vlen_view(v, &off, &data, &m);
    if (m != n) {
        zarr_vlen_free(v);
        return ZARR_ERR_INTERNAL;
    }
    for (size_t i = 0; i < n; i++) {
        size_t len = (size_t)(off[i + 1] - off[i]);
        if (!(out[i] = malloc(len + 1))) {
            free_strings(out, i);
            zarr_vlen_free(v);
            return ZARR_ERR_INTERNAL;
        }
        if (len)
            memcpy(out[i], data + off[i], len);
        out[i][len] = '\0';
    }
    zarr_vlen_free(v);
    return ZARR_OK;
}

static zarr_status write_box(zh5_obj *ds, const uint64_t *start, const uint64_t *count, char *const *s, size_t n)
{
    uint64_t *off = malloc((n + 1) * sizeof *off);
    size_t total = 0;
    if (!off)
        return ZARR_ERR_INTERNAL;
    for (size_t i = 0; i < n; i++) {
        off[i] = total;
        total += s[i] ? strlen(s[i]) : 0;
    }
    off[n] = total;
    uint8_t *data = malloc(total ? total : 1);
    if (!data) {
        free(off);
        return ZARR_ERR_INTERNAL;
    }
    for (size_t i = 0; i < n; i++)
        if (s[i])
            memcpy(data + off[i], s[i], (size_t)(off[i + 1] - off[i]));
    zarr_status st = zarr_write_region_vlen(ds->array, start, count, off, data, total);
    free(data);
    free(off);
    return st;
}

/* The bounding box of the file selection and the box positions of its elements in selection order. */
static herr_t box_positions(zh5_obj *ds, hid_t fspace, const uint64_t *shape, size_t n, uint64_t *start,
                            uint64_t *count, size_t *nbox, uint64_t **pos)
{
    int rank = ds->rank;
    hsize_t lo[ZH5_MAX_RANK], hi[ZH5_MAX_RANK];
    int all = fspace == H5S_ALL || H5Sget_select_type(fspace) == H5S_SEL_ALL;
    uint64_t total = 1;
    if (all) {
        for (int d = 0; d < rank; d++) {
            lo[d] = 0;
            hi[d] = shape[d] - 1;
        }
    } else if (H5Sget_select_bounds(fspace, lo, hi) < 0) {
        return -1;
    }
    for (int d = 0; d < rank; d++) {
        start[d] = lo[d];
        count[d] = hi[d] - lo[d] + 1;
        total *= count[d];
    }
    if (total > ZH5_MAX_VLEN_BOX) {
        zh5_err(H5E_DATASPACE, H5E_UNSUPPORTED, "the selection's bounding box (%llu strings) is too large",
                (unsigned long long)total);
        return -1;
    }
    *nbox = (size_t)total;
    *pos = malloc((n ? n : 1) * sizeof **pos);
    if (!*pos)
        return -1;
    if (all || (size_t)total == n) {   /* the whole box, in C order */
        for (size_t i = 0; i < n; i++)
            (*pos)[i] = i;
        return 0;
    }
    uint64_t *index = malloc((size_t)total * sizeof *index);
    hid_t bspace = index ? zh5_box_space(fspace, rank, lo, hi) : H5I_INVALID_HID;
    herr_t ret = -1;
    if (bspace >= 0) {
        for (size_t i = 0; i < (size_t)total; i++)
            index[i] = i;
        ret = H5Dgather(bspace, index, H5T_NATIVE_UINT64, n * sizeof(uint64_t), *pos, NULL, NULL);
        H5Sclose(bspace);
    }
    free(index);
    if (ret < 0) {
        free(*pos);
        *pos = NULL;
        zh5_err(H5E_DATASPACE, H5E_CANTINIT, "cannot map the selection onto its bounding box");
    }
    return ret;
}

/* The coordinates of the n points of a point selection (malloc'd), or NULL. */
static hsize_t *point_list(const zh5_obj *ds, hid_t fspace, size_t n)
{
    hsize_t *coords = malloc((n ? n : 1) * (size_t)ds->rank * sizeof *coords);
    if (coords && H5Sget_select_elem_pointlist(fspace, 0, n, coords) < 0) {
        free(coords);
        coords = NULL;
    }
    return coords;
}

/* Point i of a point list as a one-element box. */
static void point_box(const zh5_obj *ds, const hsize_t *coords, size_t i, uint64_t *start, uint64_t *count)
{
    for (int d = 0; d < ds->rank; d++) {
        start[d] = coords[i * (size_t)ds->rank + (size_t)d];
        count[d] = 1;
    }
}

/* The selected strings, packed in selection order (owned by the caller). */
static herr_t file_read(zh5_obj *ds, hid_t fspace, const uint64_t *shape, size_t n, char **packed)
{
    uint64_t start[ZH5_MAX_RANK] = {0}, count[ZH5_MAX_RANK] = {0}, *pos = NULL;
    size_t nbox = 0;
    zarr_status st = ZARR_OK;
    if (ds->rank == 0) {
        st = read_box(ds, start, count, 1, packed);
    } else if (fspace != H5S_ALL && H5Sget_select_type(fspace) == H5S_SEL_POINTS) {
        hsize_t *coords = point_list(ds, fspace, n);
        if (!coords)
            return -1;
        for (size_t i = 0; i < n && st == ZARR_OK; i++) {
            point_box(ds, coords, i, start, count);
            st = read_box(ds, start, count, 1, packed + i);
            if (st != ZARR_OK)
                free_strings(packed, i);
        }
        free(coords);
    } else {
        if (box_positions(ds, fspace, shape, n, start, count, &nbox, &pos) < 0)
            return -1;
        char **box = malloc(nbox * sizeof *box);
        st = box ? read_box(ds, start, count, nbox, box) : ZARR_ERR_INTERNAL;
        if (st == ZARR_OK) {
            for (size_t i = 0; i < n; i++) {
                packed[i] = box[pos[i]];
                box[pos[i]] = NULL;
            }
            free_strings(box, nbox);
        }
        free(box);
        free(pos);
    }
    if (st != ZARR_OK) {
        zh5_zerr(H5E_DATASET, H5E_READERROR, st, "reading strings");
        return -1;
    }
    return 0;
}

/* Stores the packed strings (borrowed) at the selected elements. */
static herr_t file_write(zh5_obj *ds, hid_t fspace, const uint64_t *shape, size_t n, char *const *packed)
{
    uint64_t start[ZH5_MAX_RANK] = {0}, count[ZH5_MAX_RANK] = {0}, *pos = NULL;
    size_t nbox = 0;
    zarr_status st = ZARR_OK;
    if (ds->rank == 0) {
        st = write_box(ds, start, count, packed, 1);
    } else if (fspace != H5S_ALL && H5Sget_select_type(fspace) == H5S_SEL_POINTS) {
        hsize_t *coords = point_list(ds, fspace, n);
        if (!coords)
            return -1;
        for (size_t i = 0; i < n && st == ZARR_OK; i++) {
            point_box(ds, coords, i, start, count);
            st = write_box(ds, start, count, packed + i, 1);
        }
        free(coords);
    } else {
        if (box_positions(ds, fspace, shape, n, start, count, &nbox, &pos) < 0)
            return -1;
        if (nbox == n) {
            st = write_box(ds, start, count, packed, n);
        } else {
            /* read, replace the selected elements, write back */
            char **box = malloc(nbox * sizeof *box);
            unsigned char *mine = calloc(nbox, 1);
            st = box && mine ? read_box(ds, start, count, nbox, box) : ZARR_ERR_INTERNAL;
            if (st == ZARR_OK) {
                for (size_t i = 0; i < nbox; i++)
                    mine[i] = 1;
                for (size_t i = 0; i < n; i++) {
                    if (mine[pos[i]])
                        free(box[pos[i]]);
                    mine[pos[i]] = 0;
                    box[pos[i]] = packed[i];
                }
                st = write_box(ds, start, count, box, nbox);
                for (size_t i = 0; i < nbox; i++)
                    if (mine[i])
                        free(box[i]);
            }
            free(mine);
            free(box);
        }
        free(pos);
    }
    if (st != ZARR_OK) {
        char what[1200];
        snprintf(what, sizeof what, "writing strings to \"/%s\"", ds->path);
        zh5_zerr(H5E_DATASET, H5E_WRITEERROR, st, what);
        return -1;
    }
    return 0;
}

static int is_vlen_string(hid_t type)
{
    return H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0;
}

herr_t zh5_vlen_read(zh5_obj *ds, hid_t mtype, hid_t mspace, hid_t fspace, const uint64_t *shape, size_t n,
                     int packed, void *buf)
{
    size_t msize = H5Tget_size(mtype), big = msize > sizeof(char *) ? msize : sizeof(char *);
    int direct = is_vlen_string(mtype);
    unsigned char *tmp = malloc(n * big);
    char **strings = malloc(n * sizeof *strings);
    herr_t ret = -1;
    if (!tmp || !strings || file_read(ds, fspace, shape, n, strings) < 0) {
        free(tmp);
        free(strings);
        return -1;
    }
    memcpy(tmp, strings, n * sizeof *strings);
    if (!direct && zh5_convert(ds->mem_native, mtype, n, tmp) < 0) {
        free_strings(strings, n);
        goto done;
    }
    if (!direct)
        free_strings(strings, n);   /* converted into the memory type's own values */
    if (packed) {
        memcpy(buf, tmp, n * msize);
        ret = 0;
    } else {
        zh5_scatter_src src = {tmp, n * msize};
        ret = H5Dscatter(zh5_scatter_cb, &src, mtype, mspace, buf);
        if (ret < 0 && direct)
            free_strings(strings, n);
    }
done:
    free(strings);
    free(tmp);
    return ret;
}

herr_t zh5_vlen_write(zh5_obj *ds, hid_t mtype, hid_t mspace, hid_t fspace, const uint64_t *shape, size_t n,
                      int packed, const void *buf)
{
    size_t msize = H5Tget_size(mtype), big = msize > sizeof(char *) ? msize : sizeof(char *);
    int direct = is_vlen_string(mtype);
    herr_t ret = -1;
    if (ds->file->intent != H5F_ACC_RDWR) {
        zh5_err(H5E_DATASET, H5E_WRITEERROR, "%s was opened read-only: cannot write \"/%s\"", ds->file->location,
                ds->path);
        return -1;
    }
    unsigned char *tmp = malloc(n * big);
    if (!tmp)
        return -1;
    if (packed)
        memcpy(tmp, buf, n * msize);
    else if (H5Dgather(mspace, buf, mtype, n * msize, tmp, NULL, NULL) < 0)
        goto done;
    if (!direct && zh5_convert(mtype, ds->mem_native, n, tmp) < 0)
        goto done;
    ret = file_write(ds, fspace, shape, n, (char *const *)tmp);
    if (!direct)
        free_strings((char **)tmp, n);   /* made by the conversion */
done:
    free(tmp);
    return ret;
}
