/* h5tozarr --virtual: kerchunk references (version 1) into an HDF5 file's chunks instead of a copy of them
 * (docs/reference-stores.md, "h5tozarr --virtual"; docs/hdf5-netcdf.md for the netCDF conventions, which
 * are the same as h5tozarr's --format 2 output). Every array is Zarr v2 with the HDF5 file's own bytes:
 *  - the data type in the file's byte order (">i4" for a big-endian integer);
 *  - the HDF5 filter pipeline as numcodecs filters in the same order (shuffle -> shuffle, deflate -> zlib,
 *    Fletcher-32 -> fletcher32), compressor null; any other filter (N-bit, scale-offset, SZIP, plugins)
 *    has no reference form;
 *  - a chunked dataset: one reference [target, offset, length] per stored chunk (H5Dget_chunk_info, or
 *    H5Dchunk_iter where HDF5 has it); chunks never written have none and read as the fill value;
 *  - a contiguous dataset: one reference, or pieces along its first dimension (VIRTUAL_SPLIT);
 *  - a compact dataset and variable-length strings (up to VIRTUAL_INLINE bytes): the bytes copied into the
 *    references (inline base64), which the output says;
 *  - fill_value: HDF5's fill value when it is explicit (a netCDF _FillValue, one the HDF5 writer set) or
 *    when a chunk is not stored (what HDF5 reads there); otherwise null.
 * What references cannot express is named through unsupported() (refused, or left out with
 * --skip-unsupported). This header is included once by h5tozarr.c, after the functions it uses. */
#ifndef ZARR_H5Z_VIRTUAL_H
#define ZARR_H5Z_VIRTUAL_H

/* A contiguous dataset larger than this is split along its first dimension into pieces of at most this
 * size (the largest that divides the first dimension evenly); when such pieces would be smaller than
 * VIRTUAL_SPLIT_MIN (a prime first dimension, say), it is one reference. */
#define VIRTUAL_SPLIT ((uint64_t)8 << 20)
#define VIRTUAL_SPLIT_MIN ((uint64_t)256 << 10)
/* The most bytes of a compact dataset or of variable-length strings copied into the references. */
#define VIRTUAL_INLINE ((size_t)1 << 20)

/* One entry of the reference set: a metadata document (text), inline bytes (data, n) or a byte range
 * [target, off, len]. Kept in order of creation: groups and arrays as the file lists them. */
typedef struct {
    char *key;
    char *text;         /* a metadata document; NULL otherwise */
    unsigned char *data; /* inline bytes; NULL otherwise */
    size_t n;
    uint64_t off, len;  /* a range of the target */
} vref;

static vref *g_vrefs = NULL;
static size_t g_nvrefs = 0, g_vcap = 0;
static const char *g_vtarget = NULL; /* the URL every range refers to */

static vref *vref_add(const char *prefix, const char *name) {
    if (g_nvrefs == g_vcap) {
        g_vcap = g_vcap ? g_vcap * 2 : 256;
        g_vrefs = xrealloc(g_vrefs, g_vcap * sizeof *g_vrefs);
    }
    vref *r = &g_vrefs[g_nvrefs++];
    memset(r, 0, sizeof *r);
    r->key = xmalloc(strlen(prefix) + strlen(name) + 2);
    sprintf(r->key, "%s%s%s", prefix, *prefix ? "/" : "", name);
    return r;
}

static void vref_text(const char *prefix, const char *name, const char *text) { vref_add(prefix, name)->text = xstrdup(text); }

/* Drops the entries from `n` on (a dataset left out after its first entries were made). */
static void vref_truncate(size_t n) {
    for (size_t k = n; k < g_nvrefs; k++) {
        free(g_vrefs[k].key);
        free(g_vrefs[k].text);
        free(g_vrefs[k].data);
    }
    g_nvrefs = n;
}

/* The key of a path ("/grp/temp" -> "grp/temp", "/" -> ""). */
static const char *vkey(const char *path) { return path[0] == '/' ? path + 1 : path; }

/* The v2 dtype of an HDF5 file type in its own byte order ("<f4", ">i2", "|b1", "|S8", "<c16"), or 0 with
 * the reason in err. Enums other than h5py's boolean: their base integer. */
static int virtual_dtype(hid_t t, char *out, size_t outsz, char *err, size_t errlen) {
    H5T_class_t cls = H5Tget_class(t);
    size_t size = H5Tget_size(t);
    if (cls == H5T_ENUM && is_h5py_bool(t)) { snprintf(out, outsz, "|b1"); return 1; }
    if (cls == H5T_ENUM) {
        hid_t base = H5Tget_super(t);
        int ok = virtual_dtype(base, out, outsz, err, errlen);
        H5Tclose(base);
        return ok;
    }
    if ((cls == H5T_INTEGER && (size == 1 || size == 2 || size == 4 || size == 8)) ||
        (cls == H5T_FLOAT && (size == 2 || size == 4 || size == 8))) {
        char order = size == 1 ? '|' : H5Tget_order(t) == H5T_ORDER_BE ? '>' : '<';
        char kind = cls == H5T_FLOAT ? 'f' : H5Tget_sign(t) == H5T_SGN_2 ? 'i' : 'u';
        snprintf(out, outsz, "%c%c%zu", order, kind, size);
        return 1;
    }
    if (cls == H5T_STRING && H5Tis_variable_str(t) <= 0) { snprintf(out, outsz, "|S%zu", size); return 1; }
    if (cls == H5T_COMPOUND && is_h5py_complex(t)) {
        hid_t r = H5Tget_member_type(t, 0), i = H5Tget_member_type(t, 1);
        H5T_order_t o = H5Tget_order(r);
        int same = o == H5Tget_order(i);
        H5Tclose(r);
        H5Tclose(i);
        if (same) { snprintf(out, outsz, "%cc%zu", o == H5T_ORDER_BE ? '>' : '<', size); return 1; }
    }
    snprintf(err, errlen, "a dataset of type %s (%zu bytes) has no reference form (--virtual references the "
             "file's bytes: numbers, booleans, fixed-length strings and complex numbers)", class_name(t), size);
    return 0;
}

/* The numcodecs filters of the dataset's HDF5 filter pipeline (a JSON list, or "null" when there is
 * none), or 0 with the filter named in err. */
static int virtual_filters(hid_t dcpl, size_t esize, sbuf *b, char *err, size_t errlen) {
    int nf = H5Pget_nfilters(dcpl);
    if (nf <= 0) { sb_puts(b, "null"); return 1; }
    sb_puts(b, "[");
    int fletcher = 0; /* Fletcher-32 came before: its 4-byte checksum is in what the next filters see */
    for (int i = 0; i < nf; i++) {
        unsigned flags, cd[8] = {0};
        size_t ncd = 8;
        char fname[64] = "";
        H5Z_filter_t f = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof fname, fname, NULL);
        if (i) sb_puts(b, ",");
        if (f == H5Z_FILTER_DEFLATE) sb_printf(b, "{\"id\":\"zlib\",\"level\":%u}", ncd ? cd[0] : 6u);
        else if (f == H5Z_FILTER_SHUFFLE && fletcher && esize > 1 && 4 % esize != 0) {
            /* HDF5's shuffle keeps the bytes past the last whole element in place; numcodecs' shuffle
             * refuses a buffer that is not whole elements */
            snprintf(err, errlen, "Fletcher-32 before shuffle of %zu-byte elements (netCDF-C's filter order): the "
                     "4-byte checksum is not a whole element, which HDF5's shuffle keeps in place and numcodecs' "
                     "shuffle refuses", esize);
            return 0;
        }
        else if (f == H5Z_FILTER_SHUFFLE) sb_printf(b, "{\"id\":\"shuffle\",\"elementsize\":%zu}", esize);
        else if (f == H5Z_FILTER_FLETCHER32) { sb_puts(b, "{\"id\":\"fletcher32\"}"); fletcher = 1; }
        else {
            const char *name = f == H5Z_FILTER_SZIP ? "SZIP" : f == H5Z_FILTER_NBIT ? "N-bit"
                             : f == H5Z_FILTER_SCALEOFFSET ? "scale-offset" : fname[0] ? fname : "unnamed";
            snprintf(err, errlen, "the HDF5 filter %s (id %d) has no numcodecs form that references can name "
                     "(--virtual maps deflate, shuffle and Fletcher-32)", name, (int)f);
            return 0;
        }
    }
    sb_puts(b, "]");
    return 1;
}

/* The chunk key of grid position `idx` ("0.3.1"; "0" for a scalar). */
static void chunk_key(char *out, size_t outsz, int rank, const uint64_t *idx) {
    size_t n = 0;
    out[0] = 0;
    if (rank == 0) { snprintf(out, outsz, "0"); return; }
    for (int d = 0; d < rank && n < outsz; d++) n += (size_t)snprintf(out + n, outsz - n, "%s%llu", d ? "." : "", (unsigned long long)idx[d]);
}

static void vref_range(const char *key_prefix, int rank, const uint64_t *idx, uint64_t off, uint64_t len) {
    char k[H5S_MAX_RANK * 21 + 2];
    chunk_key(k, sizeof k, rank, idx);
    vref *r = vref_add(key_prefix, k);
    r->off = off;
    r->len = len;
}

static void vref_inline(const char *key_prefix, int rank, unsigned char *data, size_t n) {
    uint64_t zero[H5S_MAX_RANK] = {0};
    char k[H5S_MAX_RANK * 21 + 2];
    chunk_key(k, sizeof k, rank, zero);
    vref *r = vref_add(key_prefix, k);
    r->data = data;
    r->n = n;
}

#if H5_VERSION_GE(1, 14, 0)
#define VIRTUAL_CHUNK_ITER 1
#define VIRTUAL_CHUNK_LISTING "H5Dchunk_iter"
#else
#define VIRTUAL_CHUNK_LISTING "H5Dget_chunk_info"
#endif

typedef struct {
    const char *path, *key;
    int rank;
    const uint64_t *chunk, *grid;
    uint64_t stored;
    int refused; /* a chunk has no reference form (left out under --skip-unsupported) */
} chunk_ctx;

/* One stored chunk at element offset `offset`: a reference (when inside the Zarr chunk grid). */
static int chunk_seen(chunk_ctx *c, const hsize_t *offset, unsigned mask, haddr_t addr, hsize_t size) {
    if (mask) {
        char msg[256];
        snprintf(msg, sizeof msg, "a chunk was stored with HDF5 filters skipped (filter mask 0x%x), which "
                 "references cannot express", mask);
        c->refused = 1;
        unsupported(c->path, msg);
        return -1;
    }
    uint64_t idx[H5S_MAX_RANK];
    for (int d = 0; d < c->rank; d++) {
        idx[d] = offset[d] / c->chunk[d];
        if (idx[d] >= c->grid[d]) return 0; /* beyond the extent */
    }
    if (addr == HADDR_UNDEF || size == 0) return 0;
    vref_range(c->key, c->rank, idx, (uint64_t)addr, (uint64_t)size);
    c->stored++;
    return 0;
}

#ifdef VIRTUAL_CHUNK_ITER
static int chunk_iter_cb(const hsize_t *offset, unsigned mask, haddr_t addr, hsize_t size, void *data) {
    return chunk_seen(data, offset, mask, addr, size) < 0 ? H5_ITER_STOP : H5_ITER_CONT;
}
#endif

/* Every stored chunk of a chunked dataset as a reference; returns how many. */
static uint64_t virtual_chunks(hid_t ds, hid_t sp, chunk_ctx *c) {
#ifdef VIRTUAL_CHUNK_ITER
    (void)sp;
    if (H5Dchunk_iter(ds, H5P_DEFAULT, chunk_iter_cb, c) < 0) die("%s: HDF5 cannot list the chunks", c->path);
#else
    hsize_t n = 0;
    if (H5Dget_num_chunks(ds, sp, &n) < 0) die("%s: HDF5 cannot count the chunks", c->path);
    for (hsize_t i = 0; i < n; i++) {
        hsize_t offset[H5S_MAX_RANK];
        unsigned mask = 0;
        haddr_t addr = HADDR_UNDEF;
        hsize_t size = 0;
        if (H5Dget_chunk_info(ds, sp, i, offset, &mask, &addr, &size) < 0)
            die("%s: HDF5 cannot describe chunk %llu", c->path, (unsigned long long)i);
        if (chunk_seen(c, offset, mask, addr, size) < 0) break;
    }
#endif
    return c->stored;
}

/* numcodecs' vlen-utf8 encoding of n strings (NULL: ""): a little-endian uint32 count, then each string's
 * uint32 length and bytes. 0 when it would exceed `limit`. */
static int vlen_utf8(char **strs, size_t n, size_t limit, unsigned char **out, size_t *outn) {
    size_t total = 4;
    for (size_t k = 0; k < n; k++) {
        total += 4 + (strs[k] ? strlen(strs[k]) : 0);
        if (total > limit) return 0;
    }
    unsigned char *b = xmalloc(total), *p = b;
    uint32_t cnt = (uint32_t)n;
    for (int i = 0; i < 4; i++) *p++ = (unsigned char)(cnt >> (8 * i));
    for (size_t k = 0; k < n; k++) {
        uint32_t len = (uint32_t)(strs[k] ? strlen(strs[k]) : 0);
        for (int i = 0; i < 4; i++) *p++ = (unsigned char)(len >> (8 * i));
        if (len) memcpy(p, strs[k], len);
        p += len;
    }
    *out = b;
    *outn = total;
    return 1;
}

/* One dataset as references: its .zarray and .zattrs, then its chunks. */
static void virtual_dataset(hid_t ds, const char *path) {
    hid_t ft = H5Dget_type(ds), sp = H5Dget_space(ds), dcpl = H5Dget_create_plist(ds);
    if (ft < 0 || sp < 0 || dcpl < 0) die("%s: HDF5 cannot read the dataset's description", path);
    if (ds_is_scale(ds)) {
        dimscale *self = ds_entry(ds);
        if (self && self->dim_only) { H5Tclose(ft); H5Sclose(sp); H5Pclose(dcpl); return; }
    }
    const char *key = vkey(path);
    char err[512], dtype[32];
    dtype_map m;
    int vstr = H5Tget_class(ft) == H5T_STRING && H5Tis_variable_str(ft) > 0;
    H5D_layout_t layout = H5Pget_layout(dcpl);
    hid_t mem = -1;
    int ok = 1;
    if (H5Sget_simple_extent_type(sp) == H5S_NULL) {
        snprintf(err, sizeof err, "a dataset with an empty (null) dataspace has no Zarr form");
        ok = 0;
    } else if (!vstr && !virtual_dtype(ft, dtype, sizeof dtype, err, sizeof err)) {
        ok = 0;
    } else if ((mem = map_type(ft, &m, NULL, err, sizeof err)) < 0) {
        ok = 0;
    } else if (layout == H5D_VIRTUAL) {
        snprintf(err, sizeof err, "an HDF5 virtual dataset (its data lies in other datasets) has no reference form");
        ok = 0;
    } else if (H5Pget_external_count(dcpl) > 0) {
        snprintf(err, sizeof err, "a dataset stored in external raw files has no reference form here");
        ok = 0;
    }
    size_t esize = H5Tget_size(ft);
    sbuf filters = {0};
    if (ok && !vstr && !virtual_filters(dcpl, esize, &filters, err, sizeof err)) ok = 0;
    if (!ok) {
        unsupported(path, err);
        free(filters.p);
        if (mem >= 0) { H5Tclose(mem); free(m.v3json); free(m.v2json); }
        H5Tclose(ft); H5Sclose(sp); H5Pclose(dcpl);
        return;
    }
    int rank = H5Sget_simple_extent_ndims(sp);
    hsize_t hd[H5S_MAX_RANK], hmax[H5S_MAX_RANK], hc[H5S_MAX_RANK];
    H5Sget_simple_extent_dims(sp, hd, hmax);
    uint64_t shape[H5S_MAX_RANK], chunk[H5S_MAX_RANK], grid[H5S_MAX_RANK], total = 1;
    char *names[H5S_MAX_RANK];
    sbuf dn = {0}, extra = {0};
    int named = dataset_dims(ds, rank, hd, hmax, shape, names, &dn, &extra);
    if (m.is_enum) {
        if (extra.n) sb_puts(&extra, ",");
        enum_json(&extra, &m, mem);
    }
    named_type_member(&extra, ft, path, extra.n > 0);

    /* the chunk shape and the references */
    hssize_t npoints = H5Sget_simple_extent_npoints(sp);
    uint64_t nbytes = (uint64_t)(npoints < 0 ? 0 : npoints) * esize, stored = 0;
    unsigned char *inl = NULL; /* bytes copied into the references */
    size_t inl_n = 0;
    const char *inline_why = NULL;
    if (vstr || layout == H5D_COMPACT) {
        for (int d = 0; d < rank; d++) chunk[d] = shape[d] ? shape[d] : 1;
    } else if (layout == H5D_CHUNKED) {
        H5Pget_chunk(dcpl, rank, hc);
        for (int d = 0; d < rank; d++) chunk[d] = hc[d];
    } else { /* contiguous: pieces along the first dimension that divide it */
        for (int d = 0; d < rank; d++) chunk[d] = shape[d] ? shape[d] : 1;
        if (rank > 0 && nbytes > VIRTUAL_SPLIT && shape[0] > 1) {
            uint64_t row = nbytes / shape[0], most = VIRTUAL_SPLIT / row, best = 0;
            for (uint64_t r = most; r >= 1 && !best; r--)
                if (shape[0] % r == 0) best = r;
            if (best && best * row >= VIRTUAL_SPLIT_MIN) chunk[0] = best;
        }
    }
    for (int d = 0; d < rank; d++) {
        grid[d] = (shape[d] + chunk[d] - 1) / chunk[d];
        total *= grid[d];
    }
    if (vstr) {
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, H5T_VARIABLE);
        H5Tset_cset(st, H5Tget_cset(ft));
        size_t n = (size_t)(npoints < 0 ? 0 : npoints);
        char **strs = xmalloc((n ? n : 1) * sizeof *strs);
        if (n && H5Dread(ds, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, strs) < 0) die("%s: HDF5 could not read the strings", path);
        int fits = vlen_utf8(strs, n, VIRTUAL_INLINE, &inl, &inl_n);
        if (n) H5Dvlen_reclaim(st, sp, H5P_DEFAULT, strs);
        free(strs);
        H5Tclose(st);
        if (!fits) {
            snprintf(err, sizeof err, "variable-length strings of more than %zu bytes, which --virtual does not copy "
                     "into the references", VIRTUAL_INLINE);
            unsupported(path, err);
            goto done;
        }
        inline_why = "variable-length strings";
    } else if (layout == H5D_COMPACT) {
        if (nbytes > VIRTUAL_INLINE) die("%s: a compact dataset of %llu bytes", path, (unsigned long long)nbytes);
        inl = xmalloc((size_t)nbytes);
        hid_t raw = H5Tcopy(ft); /* the file's bytes as they are */
        if (nbytes && H5Dread(ds, raw, H5S_ALL, H5S_ALL, H5P_DEFAULT, inl) < 0) die("%s: HDF5 could not read the data", path);
        H5Tclose(raw);
        inl_n = (size_t)nbytes;
        inline_why = "a compact dataset (its data lies in the object header)";
    }
    /* .zarray first (a reader meets the array before its chunks), then .zattrs, then the chunks */
    size_t first = g_nvrefs;
    size_t zarray_at = (size_t)(vref_add(key, ".zarray") - g_vrefs);
    size_t zattrs_at = (size_t)(vref_add(key, ".zattrs") - g_vrefs);
    if (inl) { /* one chunk, the whole array */
        if (total) {
            vref_inline(key, rank, inl, inl_n);
            stored = 1;
            fprintf(stderr, "h5tozarr: %s: copied into the references (%s, %zu bytes)\n", path, inline_why, inl_n);
        } else {
            free(inl);
        }
        inl = NULL;
    }

    if (layout == H5D_CHUNKED) {
        chunk_ctx c = {path, key, rank, chunk, grid, 0, 0};
        stored = virtual_chunks(ds, sp, &c);
        if (c.refused) { /* left out (--skip-unsupported): none of its entries */
            vref_truncate(first);
            goto done;
        }
    } else if (layout == H5D_CONTIGUOUS && !vstr) {
        haddr_t addr = H5Dget_offset(ds);
        if (addr != HADDR_UNDEF && nbytes) {
            uint64_t piece = nbytes, idx[H5S_MAX_RANK] = {0};
            if (rank > 0) piece = nbytes / shape[0] * chunk[0];
            for (uint64_t k = 0; k < (rank > 0 ? grid[0] : 1); k++) {
                idx[0] = k;
                vref_range(key, rank, idx, (uint64_t)addr + k * piece, piece);
            }
            stored = rank > 0 ? grid[0] : 1;
        }
    }

    /* the fill value: HDF5's, where it is explicit or a chunk is not stored (HDF5 reads it there) */
    unsigned char *fill = xmalloc(m.size);
    memset(fill, 0, m.size);
    H5D_fill_value_t fdef;
    H5Pfill_value_defined(dcpl, &fdef);
    if (!vstr && fdef != H5D_FILL_VALUE_UNDEFINED && H5Pget_fill_value(dcpl, mem, fill) < 0) memset(fill, 0, m.size);
    int explicit_fill = g_netcdf ? H5Aexists(ds, "_FillValue") > 0 : fdef == H5D_FILL_VALUE_USER_DEFINED;
    sbuf za = {0};
    sb_puts(&za, "{\"zarr_format\":2,\"shape\":[");
    for (int d = 0; d < rank; d++) sb_printf(&za, "%s%llu", d ? "," : "", (unsigned long long)shape[d]);
    sb_puts(&za, "],\"chunks\":[");
    for (int d = 0; d < rank; d++) sb_printf(&za, "%s%llu", d ? "," : "", (unsigned long long)chunk[d]);
    sb_printf(&za, "],\"dtype\":\"%s\",\"compressor\":null,\"fill_value\":", vstr ? "|O" : dtype);
    if (vstr || (!explicit_fill && stored >= total)) sb_puts(&za, "null");
    else fill_json(&za, &m, mem, fill);
    sb_puts(&za, ",\"filters\":");
    sb_puts(&za, vstr ? "[{\"id\":\"vlen-utf8\"}]" : filters.p);
    sb_puts(&za, ",\"order\":\"C\",\"dimension_separator\":\".\"}");
    g_vrefs[zarray_at].text = za.p;
    g_vrefs[zattrs_at].text = attrs_json(ds, path, named ? dn.p : NULL, extra.p, 0);
    free(fill);
done:
    free(filters.p);
    free(dn.p);
    free(extra.p);
    for (int d = 0; named && d < rank; d++) free(names[d]);
    free(m.v3json);
    free(m.v2json);
    H5Tclose(mem);
    H5Tclose(ft);
    H5Sclose(sp);
    H5Pclose(dcpl);
}

/* A group as references: .zgroup and .zattrs (with the group's record, as h5tozarr writes it). */
static void virtual_group(hid_t g, const char *path) {
    const char *key = vkey(path);
    char *dims = group_record(g, path);
    char *attrs = attrs_json(g, path, NULL, dims, 0);
    vref_text(key, ".zgroup", "{\"zarr_format\":2}");
    vref_text(key, ".zattrs", attrs);
    free(attrs);
    free(dims);
}

/* The reference set as kerchunk JSON, version 1: {"version":1,"refs":{key: text | "base64:..." |
 * [url, offset, length]}}, written to the open file `f`. 0 on a write error. */
static int write_refs_json(FILE *f) {
    sbuf b = {0}, url = {0};
    sb_json_str(&url, g_vtarget, strlen(g_vtarget));
    if (fputs("{\"version\":1,\"refs\":{", f) < 0) return 0;
    for (size_t k = 0; k < g_nvrefs; k++) {
        const vref *r = &g_vrefs[k];
        b.n = 0;
        sb_puts(&b, k ? ",\n" : "\n");
        sb_json_str(&b, r->key, strlen(r->key));
        sb_puts(&b, ":");
        if (r->text) {
            sb_json_str(&b, r->text, strlen(r->text));
        } else if (r->data) {
            sb_puts(&b, "\"base64:");
            base64_raw(&b, r->data, r->n);
            sb_puts(&b, "\"");
        } else {
            sb_printf(&b, "[%s,%llu,%llu]", url.p, (unsigned long long)r->off, (unsigned long long)r->len);
        }
        if (fwrite(b.p, 1, b.n, f) != b.n) { free(b.p); free(url.p); return 0; }
    }
    free(b.p);
    free(url.p);
    return fputs("\n}}\n", f) >= 0;
}

/* Whether `path` is a kerchunk JSON reference file, which --overwrite may replace: a regular file whose
 * JSON object starts with the member "version" or "refs". */
static int is_reference_json(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char head[64];
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = 0;
    const char *p = head;
    while (isspace((unsigned char)*p)) p++;
    if (*p++ != '{') return 0;
    while (isspace((unsigned char)*p)) p++;
    return !strncmp(p, "\"version\"", 9) || !strncmp(p, "\"refs\"", 6);
}

/* Whether `path` is a directory in the Parquet layout, which --overwrite may replace: one with a
 * `.zmetadata` file and no `.zgroup`, `.zarray` or `zarr.json` (which a Zarr hierarchy would have). */
static int is_reference_parquet(const char *path) {
    static const char *const zarr_docs[] = {".zgroup", ".zarray", "zarr.json"};
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    char *p = xmalloc(strlen(path) + 16);
    sprintf(p, "%s/.zmetadata", path);
    int ok = lstat(p, &st) == 0 && S_ISREG(st.st_mode);
    for (size_t k = 0; ok && k < sizeof zarr_docs / sizeof *zarr_docs; k++) {
        sprintf(p, "%s/%s", path, zarr_docs[k]);
        ok = lstat(p, &st) != 0;
    }
    free(p);
    return ok;
}

#endif
