/* zarrtoh5: converts a Zarr hierarchy (v2 or v3) into a new HDF5 file, chunk by chunk. See usage(). */
#define _POSIX_C_SOURCE 200809L
#include "h5zcommon.h"

static const char *USAGE =
    "usage: zarrtoh5 [options] IN.zarr FILE.h5\n"
    "\n"
    "Converts a Zarr group (v2 or v3), its subgroups, arrays and attributes into a new HDF5 file (which\n"
    "must not exist). A single Zarr array becomes the dataset named after IN.zarr (without \".zarr\").\n"
    "\n"
    "options:\n"
    "  -q, --quiet   no progress line (it is shown only when stderr is a terminal)\n"
    "  -h, --help    this text\n"
    "\n"
    "What is converted:\n"
    "  arrays      bool (as h5py's boolean enum), int8..int64, uint8..uint64, float32, float64, stored\n"
    "              little-endian, complex64 / complex128 (as h5py's compound {r, i}), null_terminated_bytes / |S<n> (as NUL-padded fixed-length strings), string\n"
    "              (as UTF-8 variable-length strings; a NUL inside a string ends it); shape; fill value; chunks (the inner chunks of a sharded array; a chunk\n"
    "              dimension larger than the array is cut to it). Compression: gzip or zlib -> deflate at\n"
    "              the same level; blosc -> deflate at its clevel, with the HDF5 shuffle filter when blosc\n"
    "              shuffles; a numcodecs shuffle filter -> shuffle; any other compressor (zstd, lz4, ...)\n"
    "              -> deflate level 6; none -> no filter. Other data types are skipped with a message\n"
    "              (exit status 2). A rank-0 array becomes a scalar (contiguous) dataset.\n"
    "  attributes  JSON integers -> int64 (uint64 above its range); other numbers -> float64; strings -> UTF-8 variable-length\n"
    "              strings; true/false -> h5py's boolean enum; (nested) rectangular arrays of one of these\n"
    "              kinds -> an attribute of that shape (integers mixed with floats -> float64; [] -> an\n"
    "              empty float64 array); null -> an empty (null-space) attribute; anything else (objects,\n"
    "              mixed arrays) -> a string attribute holding its JSON text.\n"
    "  data        copied one Zarr chunk (or shard) at a time: memory use is bounded by one chunk.\n"
    "\n"
    "exit status: 0 done; 1 error; 2 done, but something was skipped.\n";

static int g_quiet = 0;
static int g_skipped = 0;

static void warn(const char *path, const char *msg) {
    fprintf(stderr, "zarrtoh5: %s: %s\n", path, msg);
    g_skipped = 1;
}

/* h5py's boolean type: an int8 enum {FALSE = 0, TRUE = 1} (caller closes). */
static hid_t bool_type(void) {
    hid_t t = H5Tenum_create(H5T_NATIVE_INT8);
    signed char v = 0;
    H5Tenum_insert(t, "FALSE", &v);
    v = 1;
    H5Tenum_insert(t, "TRUE", &v);
    return t;
}

static hid_t vstr_type(void) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

/* ---- JSON attributes -> HDF5 attributes ------------------------------------------------------------ */
enum { K_NONE, K_INT, K_UINT, K_FLT, K_STR, K_BOOL };
static int g_negative; /* shape_of saw a negative integer */

/* Whether `v` is a rectangular nest of leaves of one kind; fills rank, dims, kind. */
static int shape_of(const jv *v, int depth, int *rank, hsize_t *dims, int *dims_set, int *kind) {
    if (v->t == J_ARR) {
        if (depth >= 32 || (*rank >= 0 && depth >= *rank)) return 0;
        if (dims_set[depth] && dims[depth] != v->n) return 0;
        dims[depth] = v->n;
        dims_set[depth] = 1;
        if (v->n == 0) {
            if (*rank < 0) *rank = depth + 1;
            return *rank == depth + 1;
        }
        for (size_t k = 0; k < v->n; k++)
            if (!shape_of(&v->items[k], depth + 1, rank, dims, dims_set, kind)) return 0;
        return 1;
    }
    if (*rank < 0) *rank = depth;
    if (*rank != depth) return 0;
    int k = v->t == J_NUM ? (v->is_int ? K_INT : v->is_uint ? K_UINT : K_FLT)
          : v->t == J_STR ? K_STR : v->t == J_BOOL ? K_BOOL : -1;
    if (k < 0) return 0;
    if (k == K_INT && v->i < 0) g_negative = 1;
    int num = k == K_INT || k == K_UINT || k == K_FLT, was_num = *kind == K_INT || *kind == K_UINT || *kind == K_FLT;
    if (*kind == K_NONE || *kind == k) *kind = k;
    else if (num && was_num) *kind = (*kind == K_FLT || k == K_FLT || g_negative) ? K_FLT : K_UINT;
    else return 0;
    return 1;
}

static void flatten(const jv *v, int kind, unsigned char *buf, size_t *k) {
    if (v->t == J_ARR) {
        for (size_t i = 0; i < v->n; i++) flatten(&v->items[i], kind, buf, k);
        return;
    }
    switch (kind) {
    case K_INT: ((int64_t *)buf)[*k] = v->i; break;
    case K_UINT: ((uint64_t *)buf)[*k] = v->is_uint ? v->u : (uint64_t)v->i; break;
    case K_FLT: ((double *)buf)[*k] = v->d; break;
    case K_BOOL: ((signed char *)buf)[*k] = (signed char)v->i; break;
    case K_STR: ((const char **)buf)[*k] = v->s; break;
    default: break;
    }
    (*k)++;
}

static void write_attr(hid_t obj, const char *name, const jv *v, const char *path) {
    int rank = -1, kind = K_NONE, dims_set[32] = {0};
    hsize_t dims[32];
    hid_t ft, mt, sp;
    void *buf = NULL;
    const char *text = NULL;
    char msg[512];
    if (v->t == J_NULL) {
        ft = H5Tcopy(H5T_IEEE_F64LE);
        mt = H5Tcopy(ft);
        sp = H5Screate(H5S_NULL);
    } else if ((g_negative = 0, shape_of(v, 0, &rank, dims, dims_set, &kind))) {
        hssize_t n = 1;
        for (int d = 0; d < rank; d++) n *= (hssize_t)dims[d];
        buf = xmalloc((size_t)n * 8);
        size_t k = 0;
        if (kind == K_NONE) kind = K_FLT; /* [] */
        flatten(v, kind, buf, &k);
        switch (kind) {
        case K_INT: ft = H5Tcopy(H5T_STD_I64LE); mt = H5Tcopy(H5T_NATIVE_INT64); break;
        case K_UINT: ft = H5Tcopy(H5T_STD_U64LE); mt = H5Tcopy(H5T_NATIVE_UINT64); break;
        case K_FLT: ft = H5Tcopy(H5T_IEEE_F64LE); mt = H5Tcopy(H5T_NATIVE_DOUBLE); break;
        case K_BOOL: ft = bool_type(); mt = bool_type(); break;
        default: ft = vstr_type(); mt = vstr_type(); break;
        }
        sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    } else {
        /* objects and mixed arrays: their JSON text as a string */
        ft = vstr_type();
        mt = vstr_type();
        sp = H5Screate(H5S_SCALAR);
        buf = xmalloc(v->raw_len + 1);
        memcpy(buf, v->raw, v->raw_len);
        ((char *)buf)[v->raw_len] = 0;
        text = buf;
        buf = xmalloc(sizeof(char *));
        memcpy(buf, &text, sizeof(char *));
    }
    hid_t a = H5Acreate2(obj, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0 || (buf && H5Awrite(a, mt, buf) < 0)) {
        snprintf(msg, sizeof msg, "attribute '%s' could not be written to HDF5: skipped", name);
        warn(path, msg);
    }
    if (a >= 0) H5Aclose(a);
    free(buf);
    free((void *)text);
    H5Tclose(ft);
    H5Tclose(mt);
    H5Sclose(sp);
}

static void write_attrs(hid_t obj, char *json, const char *path) {
    jv o;
    jv_parse(json, &o, path);
    if (o.t != J_OBJ) die("%s: attributes are not a JSON object", path);
    for (size_t k = 0; k < o.n; k++) write_attr(obj, o.keys[k], &o.items[k], path);
    jv_free(&o);
    zarr_string_free(json);
}

/* ---- arrays -> datasets --------------------------------------------------------------------------- */
/* The HDF5 deflate level and shuffle flag for the array's compressor (-1: none). */
static void pick_filters(const jv *md, int *level, int *shuffle) {
    *level = -1;
    *shuffle = 0;
    const jv *codecs = jv_get(md, "codecs");
    if (codecs && codecs->t == J_ARR) { /* v3 */
        for (size_t k = 0; k < codecs->n; k++) {
            const jv *c = &codecs->items[k], *name = jv_get(c, "name"), *cfg = jv_get(c, "configuration");
            if (!name || name->t != J_STR) continue;
            if (!strcmp(name->s, "sharding_indexed")) {
                const jv *inner = jv_get(cfg, "codecs");
                if (inner) {
                    jv wrap = {0};
                    wrap.t = J_OBJ;
                    wrap.n = 1;
                    char *key = "codecs";
                    wrap.keys = &key;
                    wrap.items = (jv *)inner;
                    pick_filters(&wrap, level, shuffle);
                }
            } else if (!strcmp(name->s, "gzip")) {
                const jv *l = jv_get(cfg, "level");
                *level = l && l->t == J_NUM ? (int)l->i : 6;
            } else if (!strcmp(name->s, "blosc")) {
                const jv *l = jv_get(cfg, "clevel"), *s = jv_get(cfg, "shuffle");
                *level = l && l->t == J_NUM ? (int)l->i : 5;
                *shuffle = s && s->t == J_STR && strcmp(s->s, "noshuffle");
            } else if (strcmp(name->s, "bytes") && strcmp(name->s, "crc32c") && strcmp(name->s, "transpose") &&
                       strcmp(name->s, "vlen-utf8") && strcmp(name->s, "vlen-bytes")) {
                *level = 6;
            }
        }
        return;
    }
    const jv *comp = jv_get(md, "compressor"), *filters = jv_get(md, "filters"); /* v2 */
    if (comp && comp->t == J_OBJ) {
        const jv *id = jv_get(comp, "id");
        const char *s = id && id->t == J_STR ? id->s : "";
        if (!strcmp(s, "gzip") || !strcmp(s, "zlib")) {
            const jv *l = jv_get(comp, "level");
            *level = l && l->t == J_NUM ? (int)l->i : 6;
        } else if (!strcmp(s, "blosc")) {
            const jv *l = jv_get(comp, "clevel"), *sh = jv_get(comp, "shuffle");
            *level = l && l->t == J_NUM ? (int)l->i : 5;
            *shuffle = sh && sh->t == J_NUM && sh->i != 0;
        } else {
            *level = 6;
        }
    }
    if (filters && filters->t == J_ARR)
        for (size_t k = 0; k < filters->n; k++) {
            const jv *id = jv_get(&filters->items[k], "id");
            if (id && id->t == J_STR && !strcmp(id->s, "shuffle")) *shuffle = 1;
        }
    if (*level > 9) *level = 9;
}

static void convert_array(zarr_array *za, hid_t parent, const char *name, const char *path) {
    size_t rank, esize;
    zarr_data_type zt;
    zcheck(zarr_array_rank(za, &rank), "rank", path);
    zcheck(zarr_array_data_type(za, &zt, &esize), "data type", path);
    char *mdtext = NULL;
    zcheck(zarr_array_metadata(za, &mdtext), "metadata", path);
    jv md;
    jv_parse(mdtext, &md, path);
    int level, shuffle;
    pick_filters(&md, &level, &shuffle);
    const jv *v2dtype = jv_get(&md, "dtype");
    /* libzarr reads a v2 |S<n> array as r<8n>: a fixed-length string all the same */
    if (zt == ZARR_RAW && v2dtype && v2dtype->t == J_STR && ((v2dtype->s[0] == '|' && v2dtype->s[1] == 'S') || v2dtype->s[0] == 'S'))
        zt = ZARR_NULL_TERMINATED_BYTES;
    jv_free(&md);
    zarr_string_free(mdtext);
    zarr_data_type buffer_type = zt;
    if (zt == ZARR_NULL_TERMINATED_BYTES) zarr_array_data_type(za, &buffer_type, NULL);
    hid_t ft, mt;
    switch (zt) {
    case ZARR_BOOL: ft = bool_type(); mt = bool_type(); break;
    case ZARR_INT8: ft = H5Tcopy(H5T_STD_I8LE); mt = H5Tcopy(H5T_NATIVE_INT8); break;
    case ZARR_INT16: ft = H5Tcopy(H5T_STD_I16LE); mt = H5Tcopy(H5T_NATIVE_INT16); break;
    case ZARR_INT32: ft = H5Tcopy(H5T_STD_I32LE); mt = H5Tcopy(H5T_NATIVE_INT32); break;
    case ZARR_INT64: ft = H5Tcopy(H5T_STD_I64LE); mt = H5Tcopy(H5T_NATIVE_INT64); break;
    case ZARR_UINT8: ft = H5Tcopy(H5T_STD_U8LE); mt = H5Tcopy(H5T_NATIVE_UINT8); break;
    case ZARR_UINT16: ft = H5Tcopy(H5T_STD_U16LE); mt = H5Tcopy(H5T_NATIVE_UINT16); break;
    case ZARR_UINT32: ft = H5Tcopy(H5T_STD_U32LE); mt = H5Tcopy(H5T_NATIVE_UINT32); break;
    case ZARR_UINT64: ft = H5Tcopy(H5T_STD_U64LE); mt = H5Tcopy(H5T_NATIVE_UINT64); break;
    case ZARR_FLOAT32: ft = H5Tcopy(H5T_IEEE_F32LE); mt = H5Tcopy(H5T_NATIVE_FLOAT); break;
    case ZARR_FLOAT64: ft = H5Tcopy(H5T_IEEE_F64LE); mt = H5Tcopy(H5T_NATIVE_DOUBLE); break;
    case ZARR_COMPLEX64:
    case ZARR_COMPLEX128: { /* h5py's complex: a compound {r, i} */
        int c64 = zt == ZARR_COMPLEX64;
        ft = H5Tcreate(H5T_COMPOUND, esize);
        H5Tinsert(ft, "r", 0, c64 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
        H5Tinsert(ft, "i", esize / 2, c64 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
        mt = H5Tcreate(H5T_COMPOUND, esize);
        H5Tinsert(mt, "r", 0, c64 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE);
        H5Tinsert(mt, "i", esize / 2, c64 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE);
        break;
    }
    case ZARR_STRING:
        ft = vstr_type();
        mt = vstr_type();
        esize = sizeof(char *);
        break;
    case ZARR_NULL_TERMINATED_BYTES:
        ft = H5Tcopy(H5T_C_S1);
        H5Tset_size(ft, esize);
        H5Tset_strpad(ft, H5T_STR_NULLPAD);
        mt = H5Tcopy(ft);
        break;
    default: {
        char msg[128];
        snprintf(msg, sizeof msg, "array skipped: its data type (libzarr type %d) has no HDF5 counterpart here", (int)zt);
        warn(path, msg);
        return;
    }
    }
    if (rank > 32) die("%s: rank %zu exceeds HDF5's 32", path, rank);
    uint64_t shape[32], outer[32], inner[32];
    zcheck(zarr_array_shape(za, shape, rank), "shape", path);
    zcheck(zarr_array_chunk_shape(za, outer, rank), "chunk shape", path);
    int sharded = 0;
    zcheck(zarr_array_is_sharded(za, &sharded), "sharding", path);
    if (sharded) zcheck(zarr_array_inner_chunk_shape(za, inner, rank), "inner chunk shape", path);
    else memcpy(inner, outer, sizeof outer);

    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t dims[32], maxdims[32], hchunk[32];
    uint64_t cbytes = esize;
    for (size_t d = 0; d < rank; d++) {
        dims[d] = shape[d];
        maxdims[d] = shape[d] ? shape[d] : H5S_UNLIMITED;
        hchunk[d] = shape[d] == 0 || inner[d] < shape[d] ? inner[d] : shape[d]; /* 0: maxdims unlimited */
        cbytes *= hchunk[d];
    }
    for (size_t d = 0; d < rank && cbytes >= (1ull << 32) - 1; d++) /* HDF5's chunk limit: 4 GiB */
        while (hchunk[d] > 1 && cbytes >= (1ull << 32) - 1) {
            cbytes = cbytes / hchunk[d] * ((hchunk[d] + 1) / 2);
            hchunk[d] = (hchunk[d] + 1) / 2;
        }
    if (zt == ZARR_STRING) {
        const uint8_t *fv;
        size_t fn;
        zcheck(zarr_array_fill_value_vlen(za, &fv, &fn), "fill value", path);
        char *fs = xmalloc(fn + 1);
        if (fn) memcpy(fs, fv, fn);
        fs[fn] = 0;
        H5Pset_fill_value(dcpl, mt, &fs);
        free(fs);
    } else {
        unsigned char *fill = xmalloc(esize);
        zcheck(zarr_array_fill_value(za, fill, esize), "fill value", path);
        H5Pset_fill_value(dcpl, mt, fill);
        free(fill);
    }
    if (rank) {
        H5Pset_chunk(dcpl, (int)rank, hchunk);
        if (shuffle && esize > 1) H5Pset_shuffle(dcpl);
        if (level >= 0) H5Pset_deflate(dcpl, (unsigned)level);
    }
    hid_t sp = rank ? H5Screate_simple((int)rank, dims, maxdims) : H5Screate(H5S_SCALAR);
    hid_t ds = H5Dcreate2(parent, name, ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (ds < 0) die("%s: creating the HDF5 dataset failed", path);
    char *attrs = NULL;
    zcheck(zarr_array_attributes(za, &attrs), "attributes", path);
    write_attrs(ds, attrs, path);

    uint64_t total = rank ? grid_count(rank, shape, outer) : 1;
    uint64_t start[32], count[32];
    void *buf = NULL;
    size_t cap = 0;
    for (uint64_t idx = 0; idx < total; idx++) {
        if (rank) grid_box(rank, shape, outer, idx, start, count);
        size_t nbytes = box_bytes(rank, count, esize, path);
        if (nbytes > cap) { free(buf); buf = xmalloc(nbytes); cap = nbytes; }
        zarr_vlen *vl = NULL;
        char *text = NULL;
        if (zt == ZARR_STRING) { /* NUL-terminated copies (a NUL inside a string ends it in HDF5) */
            const uint64_t *off;
            const uint8_t *data;
            size_t n;
            zcheck(zarr_read_region_vlen(za, start, count, &vl), "reading", path);
            zcheck(zarr_vlen_view(vl, &off, &data, &n), "reading", path);
            text = xmalloc((size_t)(off[n] - off[0]) + n);
            char *p = text;
            for (size_t k = 0; k < n; k++) {
                size_t len = (size_t)(off[k + 1] - off[k]);
                if (len) memcpy(p, data + off[k], len);
                p[len] = 0;
                ((char **)buf)[k] = p;
                p += len + 1;
            }
        } else {
            zcheck(zarr_read_hyperslab(za, start, count, NULL, NULL, buffer_type, buf, nbytes), "reading", path);
        }
        hid_t msp = rank ? H5Screate_simple((int)rank, (const hsize_t *)count, NULL) : H5Screate(H5S_SCALAR);
        if (rank) {
            hsize_t hs[32], hn[32];
            for (size_t d = 0; d < rank; d++) { hs[d] = start[d]; hn[d] = count[d]; }
            H5Sselect_hyperslab(sp, H5S_SELECT_SET, hs, NULL, hn, NULL);
        }
        if (H5Dwrite(ds, mt, msp, sp, H5P_DEFAULT, buf) < 0) die("%s: H5Dwrite failed", path);
        free(text);
        zarr_vlen_free(vl);
        H5Sclose(msp);
        if (!g_quiet) progress(path, idx + 1, total);
    }
    free(buf);
    H5Dclose(ds);
    H5Sclose(sp);
    H5Pclose(dcpl);
    H5Tclose(ft);
    H5Tclose(mt);
}

/* ---- groups ------------------------------------------------------------------------------------- */
static void convert_group(zarr_group *zg, hid_t hg, const char *path) {
    zarr_node_list *list = NULL;
    size_t n = 0;
    zcheck(zarr_group_list(zg, &list), "listing the group", path);
    zcheck(zarr_node_list_size(list, &n), "listing the group", path);
    for (size_t k = 0; k < n; k++) {
        const char *name;
        zarr_node_type nt;
        zcheck(zarr_node_list_get(list, k, &name, &nt), "listing the group", path);
        char *child = xmalloc(strlen(path) + strlen(name) + 2);
        sprintf(child, "%s%s%s", path, strcmp(path, "/") ? "/" : "", name);
        if (nt == ZARR_NODE_GROUP) {
            zarr_group *zs = NULL;
            zcheck(zarr_group_open_group(zg, name, &zs), "opening the group", child);
            hid_t hs = H5Gcreate2(hg, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            if (hs < 0) die("%s: creating the HDF5 group failed", child);
            char *attrs = NULL;
            zcheck(zarr_group_attributes(zs, &attrs), "attributes", child);
            write_attrs(hs, attrs, child);
            convert_group(zs, hs, child);
            H5Gclose(hs);
            zarr_group_close(zs);
        } else {
            zarr_array *za = NULL;
            zcheck(zarr_group_open_array(zg, name, &za), "opening the array", child);
            convert_array(za, hg, name, child);
            zarr_close(za);
        }
        free(child);
    }
    zarr_node_list_free(list);
}

int main(int argc, char **argv) {
    g_prog = "zarrtoh5";
    const char *pos[2];
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(USAGE, stdout); return 0; }
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) g_quiet = 1;
        else if (a[0] == '-' && a[1]) die("unknown option '%s' (see --help)", a);
        else if (npos < 2) pos[npos++] = a;
        else die("too many arguments (see --help)");
    }
    if (npos != 2) { fputs(USAGE, stderr); return 1; }
    zarr_node_type nt;
    zcheck(zarr_node_type_at(pos[0], &nt), "opening", pos[0]);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fcreate(pos[1], H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) die("%s: cannot create the HDF5 file (does it exist already?)", pos[1]);
    hid_t root = H5Gopen2(f, "/", H5P_DEFAULT);
    if (nt == ZARR_NODE_GROUP) {
        zarr_group *zg = NULL;
        zcheck(zarr_group_open(pos[0], ZARR_READ, &zg), "opening the group", pos[0]);
        char *attrs = NULL;
        zcheck(zarr_group_attributes(zg, &attrs), "attributes", "/");
        write_attrs(root, attrs, "/");
        convert_group(zg, root, "/");
        zarr_group_close(zg);
    } else {
        /* a lone array: the dataset named after the input's last path element, without ".zarr" */
        char *base = xstrdup(pos[0]);
        size_t n = strlen(base);
        while (n > 1 && base[n - 1] == '/') base[--n] = 0;
        char *name = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
        n = strlen(name);
        if (n > 5 && !strcmp(name + n - 5, ".zarr")) name[n - 5] = 0;
        zarr_array *za = NULL;
        zcheck(zarr_open(pos[0], ZARR_READ, &za), "opening the array", pos[0]);
        convert_array(za, root, name, name);
        zarr_close(za);
        free(base);
    }
    H5Gclose(root);
    if (H5Fclose(f) < 0) die("%s: closing the HDF5 file failed", pos[1]);
    return g_skipped ? 2 : 0;
}
