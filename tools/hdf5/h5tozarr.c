/* h5tozarr: converts an HDF5 file into a Zarr hierarchy (groups, datasets, attributes), chunk by chunk.
 * See usage() for the rules. */
#define _POSIX_C_SOURCE 200809L
#include "h5zcommon.h"

static const char *USAGE =
    "usage: h5tozarr [options] FILE.h5 OUT.zarr\n"
    "\n"
    "Converts every group, dataset and attribute of an HDF5 file into a new Zarr hierarchy at OUT.zarr.\n"
    "\n"
    "options:\n"
    "  --format 2|3        Zarr format of the output (default 3)\n"
    "  --codec NAME[:LVL]  compressor for every array: none, gzip, zstd, blosc-lz4, blosc-zstd, blosc-zlib\n"
    "                      (blosc with byte shuffle). Default: from the HDF5 filters, deflate -> gzip at\n"
    "                      the same level, deflate + shuffle -> blosc-zlib with shuffle at the same level,\n"
    "                      no filter -> none, any other filter -> gzip level 5\n"
    "  --shard S0,S1,...   (format 3) store each array in shards of this shape, the HDF5 chunks becoming\n"
    "                      the inner chunks; a shard dimension is rounded up to a multiple of the chunk\n"
    "                      and, for arrays of another rank, sharding is left out\n"
    "  -q, --quiet         no progress line (it is shown only when stderr is a terminal)\n"
    "  -h, --help          this text\n"
    "\n"
    "What is converted:\n"
    "  groups     recursively, with their attributes; soft and external links are skipped (warning)\n"
    "  datasets   integers of 1, 2, 4, 8 bytes (signed, unsigned), floats of 4 and 8 bytes, h5py's boolean\n"
    "             enum; either byte order, stored little-endian; fixed-length strings as Zarr\n"
    "             null_terminated_bytes (v2: |S<n>), NUL-padded; variable-length strings as Zarr string\n"
    "             (v2: |O with vlen-utf8; fill value \"\"; counted as 8 bytes an element in the rule below);\n"
    "             h5py's complex numbers (a compound {r, i} of two floats) as complex64 / complex128. Shape, fill value (0 when undefined),\n"
    "             chunk shape (the HDF5 chunk dimensions; a contiguous or compact dataset gets its shape\n"
    "             with the leading dimensions halved until a chunk holds at most 1 MiB). Other types\n"
    "             (compounds, references, ...) are skipped with a message and make the exit status 2.\n"
    "  attributes as JSON: integers, floats (NaN and infinities as the strings \"NaN\", \"Infinity\",\n"
    "             \"-Infinity\"), strings (fixed or variable length), booleans; arrays as (nested) JSON\n"
    "             arrays; an empty (null-space) attribute as null. Others are skipped with a warning.\n"
    "  data       copied one Zarr chunk (or shard) at a time: memory use is bounded by one chunk.\n"
    "\n"
    "exit status: 0 done; 1 error (nothing more written); 2 done, but something was skipped.\n";

static int g_format = 3;
static const char *g_codec = NULL; /* NULL: from the HDF5 filters */
static int g_level = -1;
static uint64_t g_shard[32];
static size_t g_shard_rank = 0;
static int g_quiet = 0;
static int g_skipped = 0;

static void warn(const char *path, const char *msg) {
    fprintf(stderr, "h5tozarr: %s: %s\n", path, msg);
    g_skipped = 1;
}

/* ---- attributes -> JSON ------------------------------------------------------------------------- */
typedef struct {
    sbuf *out;
    int first;
    const char *path;
} attr_ctx;

static int is_h5py_bool(hid_t t) {
    if (H5Tget_class(t) != H5T_ENUM || H5Tget_size(t) != 1 || H5Tget_nmembers(t) != 2) return 0;
    char *a = H5Tget_member_name(t, 0), *b = H5Tget_member_name(t, 1);
    int ok = a && b && !strcmp(a, "FALSE") && !strcmp(b, "TRUE");
    H5free_memory(a);
    H5free_memory(b);
    return ok;
}

/* Writes elements [0, n) of a flat buffer as nested JSON arrays of `dims`. `emit` writes element k. */
typedef void (*emit_fn)(sbuf *, const void *, size_t);
static void nested(sbuf *b, int rank, const hsize_t *dims, const void *buf, size_t *k, emit_fn emit) {
    if (rank == 0) { emit(b, buf, (*k)++); return; }
    sb_puts(b, "[");
    for (hsize_t i = 0; i < dims[0]; i++) {
        if (i) sb_puts(b, ",");
        nested(b, rank - 1, dims + 1, buf, k, emit);
    }
    sb_puts(b, "]");
}
static void emit_i64(sbuf *b, const void *buf, size_t k) { sb_printf(b, "%lld", ((const long long *)buf)[k]); }
static void emit_u64(sbuf *b, const void *buf, size_t k) { sb_printf(b, "%llu", ((const unsigned long long *)buf)[k]); }
static void emit_f64(sbuf *b, const void *buf, size_t k) { sb_json_double(b, ((const double *)buf)[k]); }
static void emit_bool(sbuf *b, const void *buf, size_t k) { sb_puts(b, ((const unsigned char *)buf)[k] ? "true" : "false"); }
static void emit_vstr(sbuf *b, const void *buf, size_t k) {
    const char *s = ((char *const *)buf)[k];
    sb_json_str(b, s ? s : "", s ? strlen(s) : 0);
}
static size_t g_fixed_len;
static H5T_str_t g_fixed_pad;
static void emit_fstr(sbuf *b, const void *buf, size_t k) {
    const char *s = (const char *)buf + k * g_fixed_len;
    size_t n = 0;
    while (n < g_fixed_len && s[n]) n++;
    if (g_fixed_pad == H5T_STR_SPACEPAD)
        while (n && s[n - 1] == ' ') n--;
    sb_json_str(b, s, n);
}

static herr_t attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
    (void)info;
    attr_ctx *c = data;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
    H5S_class_t scls = H5Sget_simple_extent_type(sp);
    int rank = H5Sget_simple_extent_ndims(sp);
    hsize_t dims[H5S_MAX_RANK];
    H5Sget_simple_extent_dims(sp, dims, NULL);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    H5T_class_t cls = H5Tget_class(t);
    sbuf v = {0};
    char msg[512];
    int bad = a < 0 || t < 0 || sp < 0;
    if (bad) {
        /* reported below */
    } else if (scls == H5S_NULL) {
        sb_puts(&v, "null");
    } else if (n < 0 || n > (1 << 26)) {
        snprintf(msg, sizeof msg, "attribute '%s' skipped: too large", name);
        warn(c->path, msg);
    } else {
        size_t k = 0;
        if (cls == H5T_INTEGER) {
            int sgn = H5Tget_sign(t) == H5T_SGN_2;
            void *buf = xmalloc((size_t)n * 8);
            if (H5Aread(a, sgn ? H5T_NATIVE_LLONG : H5T_NATIVE_ULLONG, buf) < 0) bad = 1;
            if (!bad) nested(&v, rank, dims, buf, &k, sgn ? emit_i64 : emit_u64);
            free(buf);
        } else if (cls == H5T_FLOAT) {
            void *buf = xmalloc((size_t)n * 8);
            if (H5Aread(a, H5T_NATIVE_DOUBLE, buf) < 0) bad = 1;
            if (!bad) nested(&v, rank, dims, buf, &k, emit_f64);
            free(buf);
        } else if (is_h5py_bool(t)) {
            hid_t mt = H5Tget_native_type(t, H5T_DIR_ASCEND);
            void *buf = xmalloc((size_t)n);
            if (H5Aread(a, mt, buf) < 0) bad = 1;
            H5Tclose(mt);
            if (!bad) nested(&v, rank, dims, buf, &k, emit_bool);
            free(buf);
        } else if (cls == H5T_STRING && H5Tis_variable_str(t) > 0) {
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, H5T_VARIABLE);
            H5Tset_cset(mt, H5Tget_cset(t));
            char **buf = xmalloc((size_t)n * sizeof(char *));
            if (H5Aread(a, mt, buf) < 0) bad = 1;
            if (!bad) nested(&v, rank, dims, buf, &k, emit_vstr);
            if (!bad) H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
            H5Tclose(mt);
            free(buf);
        } else if (cls == H5T_STRING) {
            g_fixed_len = H5Tget_size(t);
            g_fixed_pad = H5Tget_strpad(t);
            if (g_fixed_len == 0 || (uint64_t)n * g_fixed_len > (1u << 28)) { bad = 1; goto done; }
            void *buf = xmalloc((size_t)n * g_fixed_len);
            if (H5Aread(a, t, buf) < 0) bad = 1;
            if (!bad) nested(&v, rank, dims, buf, &k, emit_fstr);
            free(buf);
        } else {
            snprintf(msg, sizeof msg, "attribute '%s' skipped: its HDF5 type class (%d) has no JSON form", name, (int)cls);
            warn(c->path, msg);
        }
    }
done:
    if (bad) {
        snprintf(msg, sizeof msg, "attribute '%s' skipped: HDF5 could not read it (or it is too large)", name);
        warn(c->path, msg);
    } else if (v.n) {
        if (!c->first) sb_puts(c->out, ",");
        c->first = 0;
        sb_json_str(c->out, name, strlen(name));
        sb_puts(c->out, ":");
        sb_puts(c->out, v.p);
    }
    free(v.p);
    if (sp >= 0) H5Sclose(sp);
    if (t >= 0) H5Tclose(t);
    if (a >= 0) H5Aclose(a);
    return 0;
}

/* The attributes of an HDF5 object as a JSON object text (caller frees). */
static char *attrs_json(hid_t obj, const char *path) {
    sbuf b = {0};
    sb_puts(&b, "{");
    attr_ctx c = {&b, 1, path};
    hsize_t idx = 0;
    if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, attr_cb, &c) < 0) die("%s: reading attributes failed", path);
    sb_puts(&b, "}");
    return b.p;
}

/* ---- datasets ----------------------------------------------------------------------------------- */
typedef struct {
    hid_t mem;             /* memory type for H5Dread */
    zarr_data_type ztype;  /* the same layout in libzarr's terms */
    const char *v3, *v2;   /* Zarr data type names */
    size_t size;
    int is_float, is_signed;
    int is_bytes;          /* fixed-length string: Zarr null_terminated_bytes / |S<size> */
    int is_vstr;           /* variable-length string: Zarr string / v2 |O with vlen-utf8 */
    int is_complex;        /* h5py's complex: a compound {r, i} of two floats */
} dtype_map;

static int map_type(hid_t t, dtype_map *m) {
    size_t size = H5Tget_size(t);
    memset(m, 0, sizeof *m);
    m->size = size;
    switch (H5Tget_class(t)) {
    case H5T_INTEGER: {
        int s = H5Tget_sign(t) == H5T_SGN_2;
        m->is_signed = s;
        switch (size) {
        case 1: m->mem = s ? H5T_NATIVE_INT8 : H5T_NATIVE_UINT8; m->ztype = s ? ZARR_INT8 : ZARR_UINT8; m->v3 = s ? "int8" : "uint8"; m->v2 = s ? "|i1" : "|u1"; return 1;
        case 2: m->mem = s ? H5T_NATIVE_INT16 : H5T_NATIVE_UINT16; m->ztype = s ? ZARR_INT16 : ZARR_UINT16; m->v3 = s ? "int16" : "uint16"; m->v2 = s ? "<i2" : "<u2"; return 1;
        case 4: m->mem = s ? H5T_NATIVE_INT32 : H5T_NATIVE_UINT32; m->ztype = s ? ZARR_INT32 : ZARR_UINT32; m->v3 = s ? "int32" : "uint32"; m->v2 = s ? "<i4" : "<u4"; return 1;
        case 8: m->mem = s ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64; m->ztype = s ? ZARR_INT64 : ZARR_UINT64; m->v3 = s ? "int64" : "uint64"; m->v2 = s ? "<i8" : "<u8"; return 1;
        default: return 0;
        }
    }
    case H5T_FLOAT:
        m->is_float = 1;
        if (size == 4) { m->mem = H5T_NATIVE_FLOAT; m->ztype = ZARR_FLOAT32; m->v3 = "float32"; m->v2 = "<f4"; return 1; }
        if (size == 8) { m->mem = H5T_NATIVE_DOUBLE; m->ztype = ZARR_FLOAT64; m->v3 = "float64"; m->v2 = "<f8"; return 1; }
        return 0;
    case H5T_STRING:
        if (H5Tis_variable_str(t) > 0) {
            m->is_vstr = 1;
            m->size = sizeof(char *);
            m->mem = -1; /* a variable-length C string type, set by the caller */
            m->ztype = ZARR_STRING;
            return 1;
        }
        m->is_bytes = 1;
        m->mem = -1; /* the file's string type, NUL-padded, set by the caller */
        m->ztype = ZARR_NULL_TERMINATED_BYTES;
        return 1;
    case H5T_COMPOUND: {
        if (H5Tget_nmembers(t) != 2) return 0;
        int ok = 1;
        for (unsigned k = 0; k < 2; k++) {
            char *nm = H5Tget_member_name(t, k);
            hid_t mt = H5Tget_member_type(t, k);
            ok = ok && nm && !strcmp(nm, k ? "i" : "r") && H5Tget_class(mt) == H5T_FLOAT && H5Tget_size(mt) * 2 == size &&
                 (size == 8 || size == 16);
            H5free_memory(nm);
            H5Tclose(mt);
        }
        if (!ok) return 0;
        m->is_complex = 1;
        m->mem = -1; /* a native compound, made by the caller */
        m->ztype = size == 8 ? ZARR_COMPLEX64 : ZARR_COMPLEX128;
        m->v3 = size == 8 ? "complex64" : "complex128";
        m->v2 = size == 8 ? "<c8" : "<c16";
        return 1;
    }
    case H5T_ENUM:
        if (!is_h5py_bool(t)) return 0;
        m->mem = -1; /* the enum's own native type, set by the caller */
        m->ztype = ZARR_BOOL; m->v3 = "bool"; m->v2 = "|b1";
        return 1;
    default:
        return 0;
    }
}

/* The fill value as JSON, from `size` bytes in the memory type of `m`. */
static void fill_json(sbuf *b, const dtype_map *m, const unsigned char *v) {
    if (m->is_vstr) { /* HDF5 keeps no fill value for variable-length strings that h5py sets: "" */
        sb_puts(b, "\"\"");
        return;
    }
    if (m->is_complex) { /* [real, imaginary] */
        double re, im;
        if (m->size == 8) { float f[2]; memcpy(f, v, 8); re = f[0]; im = f[1]; }
        else { double d[2]; memcpy(d, v, 16); re = d[0]; im = d[1]; }
        sb_puts(b, "[");
        sb_json_double(b, re);
        sb_puts(b, ",");
        sb_json_double(b, im);
        sb_puts(b, "]");
        return;
    }
    if (m->is_bytes) { /* base64, as Zarr writes fill values of byte strings */
        static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        sb_puts(b, "\"");
        for (size_t i = 0; i < m->size; i += 3) {
            uint32_t w = (uint32_t)v[i] << 16 | (i + 1 < m->size ? (uint32_t)v[i + 1] << 8 : 0) |
                         (i + 2 < m->size ? v[i + 2] : 0);
            char q[4] = {tab[w >> 18], tab[(w >> 12) & 63], i + 1 < m->size ? tab[(w >> 6) & 63] : '=',
                         i + 2 < m->size ? tab[w & 63] : '='};
            sb_put(b, q, 4);
        }
        sb_puts(b, "\"");
        return;
    }
    if (m->ztype == ZARR_BOOL) { sb_puts(b, v[0] ? "true" : "false"); return; }
    if (m->is_float) {
        double d;
        if (m->size == 4) { float f; memcpy(&f, v, 4); d = f; } else memcpy(&d, v, 8);
        sb_json_double(b, d);
        return;
    }
    if (m->is_signed) {
        int64_t x = 0;
        if (m->size == 1) { int8_t y; memcpy(&y, v, 1); x = y; }
        if (m->size == 2) { int16_t y; memcpy(&y, v, 2); x = y; }
        if (m->size == 4) { int32_t y; memcpy(&y, v, 4); x = y; }
        if (m->size == 8) memcpy(&x, v, 8);
        sb_printf(b, "%lld", (long long)x);
    } else {
        uint64_t x = 0;
        if (m->size == 1) { uint8_t y; memcpy(&y, v, 1); x = y; }
        if (m->size == 2) { uint16_t y; memcpy(&y, v, 2); x = y; }
        if (m->size == 4) { uint32_t y; memcpy(&y, v, 4); x = y; }
        if (m->size == 8) memcpy(&x, v, 8);
        sb_printf(b, "%llu", (unsigned long long)x);
    }
}

static void json_dims(sbuf *b, size_t rank, const uint64_t *v) {
    sb_puts(b, "[");
    for (size_t d = 0; d < rank; d++) sb_printf(b, "%s%llu", d ? "," : "", (unsigned long long)v[d]);
    sb_puts(b, "]");
}

/* The compressor from --codec or the dataset's filters: name ("none", "gzip", "zstd", "blosc-*") and level. */
static void pick_codec(hid_t dcpl, const char *path, const char **name, int *level) {
    if (g_codec) {
        *name = g_codec;
        *level = g_level >= 0 ? g_level : (!strcmp(g_codec, "zstd") ? 3 : 5);
        return;
    }
    int nf = H5Pget_nfilters(dcpl), deflate = -1, shuffle = 0, other = 0;
    for (int i = 0; i < nf; i++) {
        unsigned flags, cd[8];
        size_t ncd = 8;
        char fname[64];
        H5Z_filter_t f = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof fname, fname, NULL);
        if (f == H5Z_FILTER_DEFLATE) deflate = ncd ? (int)cd[0] : 6;
        else if (f == H5Z_FILTER_SHUFFLE) shuffle = 1;
        else if (f == H5Z_FILTER_FLETCHER32) continue;
        else other = 1;
    }
    if (other) {
        fprintf(stderr, "h5tozarr: %s: an HDF5 filter other than deflate/shuffle/fletcher32: stored with gzip level 5\n", path);
        *name = "gzip";
        *level = 5;
    } else if (deflate >= 0) {
        *name = shuffle ? "blosc-zlib" : "gzip";
        *level = deflate;
    } else {
        *name = "none";
        *level = 0;
    }
}

static void codec_json(sbuf *b, const char *name, int level, size_t typesize, int v2) {
    if (!strcmp(name, "none")) { sb_puts(b, v2 ? "null" : ""); return; }
    if (!strcmp(name, "gzip")) {
        sb_printf(b, v2 ? "{\"id\":\"gzip\",\"level\":%d}" : "{\"name\":\"gzip\",\"configuration\":{\"level\":%d}}", level);
    } else if (!strcmp(name, "zstd")) {
        sb_printf(b, v2 ? "{\"id\":\"zstd\",\"level\":%d}" : "{\"name\":\"zstd\",\"configuration\":{\"level\":%d,\"checksum\":false}}", level);
    } else {
        const char *cname = name + strlen("blosc-");
        if (v2)
            sb_printf(b, "{\"id\":\"blosc\",\"cname\":\"%s\",\"clevel\":%d,\"shuffle\":%d,\"blocksize\":0}", cname, level,
                      typesize > 1 ? 1 : 0);
        else
            sb_printf(b, "{\"name\":\"blosc\",\"configuration\":{\"cname\":\"%s\",\"clevel\":%d,\"shuffle\":\"%s\","
                         "\"typesize\":%zu,\"blocksize\":0}}", cname, level, typesize > 1 ? "shuffle" : "noshuffle", typesize);
    }
}

static void convert_dataset(hid_t ds, zarr_group *zg, const char *name, const char *path) {
    hid_t ft = H5Dget_type(ds), sp = H5Dget_space(ds), dcpl = H5Dget_create_plist(ds);
    dtype_map m;
    if (!map_type(ft, &m)) {
        static const char *const classes[] = {"integer", "float", "time", "string", "bitfield", "opaque",
                                              "compound", "reference", "enum", "variable-length", "array"};
        int cls = (int)H5Tget_class(ft);
        char msg[256];
        snprintf(msg, sizeof msg, "dataset skipped: its HDF5 type (%s of %zu bytes) is not supported "
                 "(integers, floats and h5py booleans are)", cls >= 0 && cls <= 10 ? classes[cls] : "?", H5Tget_size(ft));
        warn(path, msg);
        H5Tclose(ft); H5Sclose(sp); H5Pclose(dcpl);
        return;
    }
    hid_t mem = m.mem;
    int own_mem = 0;
    if (m.ztype == ZARR_BOOL) { mem = H5Tget_native_type(ft, H5T_DIR_ASCEND); own_mem = 1; }
    if (m.is_bytes) {
        mem = H5Tcopy(ft);
        H5Tset_strpad(mem, H5T_STR_NULLPAD);
        own_mem = 1;
        if (g_format == 2) m.ztype = ZARR_RAW; /* libzarr reads a v2 |S<n> as r<8n> */
    }
    if (m.is_complex) {
        hid_t part = m.size == 8 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
        mem = H5Tcreate(H5T_COMPOUND, m.size);
        H5Tinsert(mem, "r", 0, part);
        H5Tinsert(mem, "i", m.size / 2, part);
        own_mem = 1;
    }
    if (m.is_vstr) {
        mem = H5Tcopy(H5T_C_S1);
        H5Tset_size(mem, H5T_VARIABLE);
        H5Tset_cset(mem, H5Tget_cset(ft));
        own_mem = 1;
    }
    if (H5Sget_simple_extent_type(sp) == H5S_NULL) {
        warn(path, "dataset skipped: an empty (null) dataspace has no Zarr form");
        goto out;
    }
    int rank = H5Sget_simple_extent_ndims(sp);
    hsize_t hd[H5S_MAX_RANK], hc[H5S_MAX_RANK];
    H5Sget_simple_extent_dims(sp, hd, NULL);
    uint64_t shape[H5S_MAX_RANK], chunk[H5S_MAX_RANK], outer[H5S_MAX_RANK];
    for (int d = 0; d < rank; d++) shape[d] = hd[d];
    if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
        H5Pget_chunk(dcpl, rank, hc);
        for (int d = 0; d < rank; d++) chunk[d] = hc[d];
    } else {
        /* the documented rule: the whole shape, leading dimensions halved until at most 1 MiB */
        uint64_t bytes = m.size;
        for (int d = 0; d < rank; d++) { chunk[d] = shape[d] ? shape[d] : 1; bytes *= chunk[d]; }
        for (int d = 0; d < rank && bytes > (1u << 20); d++)
            while (chunk[d] > 1 && bytes > (1u << 20)) {
                bytes = bytes / chunk[d] * ((chunk[d] + 1) / 2);
                chunk[d] = (chunk[d] + 1) / 2;
            }
    }
    int sharded = g_format == 3 && g_shard_rank == (size_t)rank && rank > 0;
    for (int d = 0; d < rank; d++)
        outer[d] = sharded ? (g_shard[d] + chunk[d] - 1) / chunk[d] * chunk[d] : chunk[d];

    /* fill value in the memory type */
    unsigned char *fill = xmalloc(m.size);
    memset(fill, 0, m.size);
    H5D_fill_value_t fdef;
    H5Pfill_value_defined(dcpl, &fdef);
    if (!m.is_vstr && fdef != H5D_FILL_VALUE_UNDEFINED && H5Pget_fill_value(dcpl, mem, fill) < 0) memset(fill, 0, m.size);

    const char *cname;
    int level;
    pick_codec(dcpl, path, &cname, &level);

    sbuf md = {0};
    if (g_format == 3) {
        sb_puts(&md, "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":");
        json_dims(&md, (size_t)rank, shape);
        if (m.is_vstr)
            sb_puts(&md, ",\"data_type\":\"string\"");
        else if (m.is_bytes)
            sb_printf(&md, ",\"data_type\":{\"name\":\"null_terminated_bytes\",\"configuration\":{\"length_bytes\":%zu}}", m.size);
        else
            sb_printf(&md, ",\"data_type\":\"%s\"", m.v3);
        sb_puts(&md, ",\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":");
        json_dims(&md, (size_t)rank, rank ? outer : chunk);
        sb_puts(&md, "}},\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},\"fill_value\":");
        fill_json(&md, &m, fill);
        sb_puts(&md, ",\"codecs\":[");
        sbuf inner = {0};
        sb_puts(&inner, m.is_vstr ? "{\"name\":\"vlen-utf8\"}" : m.is_bytes ? "{\"name\":\"bytes\"}"
                                  : "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}");
        if (strcmp(cname, "none")) { sb_puts(&inner, ","); codec_json(&inner, cname, level, m.size, 0); }
        if (sharded) {
            sb_puts(&md, "{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":");
            json_dims(&md, (size_t)rank, chunk);
            sb_printf(&md, ",\"codecs\":[%s],\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
                           "{\"name\":\"crc32c\"}],\"index_location\":\"end\"}}", inner.p);
        } else {
            sb_puts(&md, inner.p);
        }
        free(inner.p);
        sb_puts(&md, "]}");
    } else {
        sb_puts(&md, "{\"zarr_format\":2,\"shape\":");
        json_dims(&md, (size_t)rank, shape);
        sb_puts(&md, ",\"chunks\":");
        json_dims(&md, (size_t)rank, chunk);
        if (m.is_vstr) sb_puts(&md, ",\"dtype\":\"|O\",\"fill_value\":");
        else if (m.is_bytes) sb_printf(&md, ",\"dtype\":\"|S%zu\",\"fill_value\":", m.size);
        else sb_printf(&md, ",\"dtype\":\"%s\",\"fill_value\":", m.v2);
        fill_json(&md, &m, fill);
        sb_printf(&md, ",\"order\":\"C\",\"filters\":%s,\"dimension_separator\":\".\",\"compressor\":",
                  m.is_vstr ? "[{\"id\":\"vlen-utf8\"}]" : "null");
        codec_json(&md, cname, level, m.size, 1);
        sb_puts(&md, "}");
    }
    zarr_array *za = NULL;
    zcheck(zarr_group_create_array(zg, name, md.p, &za), "creating the array", path);
    free(md.p);
    char *attrs = attrs_json(ds, path);
    zcheck(zarr_array_set_attributes(za, attrs), "writing attributes", path);
    free(attrs);

    /* the data, one Zarr chunk (shard) at a time */
    uint64_t total = rank ? grid_count((size_t)rank, shape, outer) : 1;
    uint64_t start[H5S_MAX_RANK], count[H5S_MAX_RANK];
    void *buf = NULL;
    size_t cap = 0;
    for (uint64_t idx = 0; idx < total; idx++) {
        if (rank) grid_box((size_t)rank, shape, outer, idx, start, count);
        size_t nbytes = box_bytes((size_t)rank, count, m.size, path);
        if (nbytes > cap) { free(buf); buf = xmalloc(nbytes); cap = nbytes; }
        hid_t msp = rank ? H5Screate_simple(rank, (const hsize_t *)count, NULL) : H5Screate(H5S_SCALAR);
        if (rank) {
            hsize_t hs[H5S_MAX_RANK], hn[H5S_MAX_RANK];
            for (int d = 0; d < rank; d++) { hs[d] = start[d]; hn[d] = count[d]; }
            H5Sselect_hyperslab(sp, H5S_SELECT_SET, hs, NULL, hn, NULL);
        }
        if (H5Dread(ds, mem, msp, sp, H5P_DEFAULT, buf) < 0) die("%s: H5Dread failed", path);
        if (m.is_vstr) {
            size_t n = nbytes / sizeof(char *), total_len = 0;
            char **strs = buf;
            uint64_t *offsets = xmalloc((n + 1) * sizeof *offsets);
            for (size_t k = 0; k < n; k++) total_len += strs[k] ? strlen(strs[k]) : 0;
            unsigned char *data = xmalloc(total_len);
            offsets[0] = 0;
            for (size_t k = 0; k < n; k++) {
                size_t len = strs[k] ? strlen(strs[k]) : 0;
                if (len) memcpy(data + offsets[k], strs[k], len);
                offsets[k + 1] = offsets[k] + len;
            }
            H5Dvlen_reclaim(mem, msp, H5P_DEFAULT, buf);
            zcheck(zarr_write_region_vlen(za, start, count, offsets, data, total_len), "writing", path);
            free(offsets);
            free(data);
        } else {
            zcheck(zarr_write_hyperslab(za, start, count, NULL, NULL, m.ztype, buf, nbytes), "writing", path);
        }
        H5Sclose(msp);
        if (!g_quiet) progress(path, idx + 1, total);
    }
    free(buf);
    zcheck(zarr_close(za), "closing", path);
    free(fill);
out:
    if (own_mem) H5Tclose(mem);
    H5Tclose(ft);
    H5Sclose(sp);
    H5Pclose(dcpl);
}

/* ---- groups ------------------------------------------------------------------------------------- */
typedef struct {
    zarr_group *zg;
    const char *path;
} group_ctx;

static void convert_group(hid_t g, zarr_group *zg, const char *path);

static herr_t link_cb(hid_t g, const char *name, const H5L_info_t *info, void *data) {
    group_ctx *c = data;
    char *child = xmalloc(strlen(c->path) + strlen(name) + 2);
    sprintf(child, "%s%s%s", c->path, strcmp(c->path, "/") ? "/" : "", name);
    if (info->type != H5L_TYPE_HARD) {
        warn(child, "soft or external link skipped");
    } else {
        H5O_info_t oi;
        if (H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0) die("%s: cannot inspect", child);
        if (oi.type == H5O_TYPE_GROUP) {
            hid_t sub = H5Gopen2(g, name, H5P_DEFAULT);
            char *attrs = attrs_json(sub, child);
            zarr_group *zs = NULL;
            zcheck(zarr_group_create_group(c->zg, name, attrs, &zs), "creating the group", child);
            free(attrs);
            convert_group(sub, zs, child);
            zarr_group_close(zs);
            H5Gclose(sub);
        } else if (oi.type == H5O_TYPE_DATASET) {
            hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
            convert_dataset(ds, c->zg, name, child);
            H5Dclose(ds);
        } else {
            warn(child, "named datatype skipped");
        }
    }
    free(child);
    return 0;
}

static void convert_group(hid_t g, zarr_group *zg, const char *path) {
    group_ctx c = {zg, path};
    hsize_t idx = 0;
    if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, link_cb, &c) < 0) die("%s: listing the group failed", path);
}

int main(int argc, char **argv) {
    g_prog = "h5tozarr";
    const char *pos[2];
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(USAGE, stdout); return 0; }
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) g_quiet = 1;
        else if (!strcmp(a, "--format") && i + 1 < argc) {
            g_format = atoi(argv[++i]);
            if (g_format != 2 && g_format != 3) die("--format must be 2 or 3");
        } else if (!strcmp(a, "--codec") && i + 1 < argc) {
            static char name[32];
            const char *v = argv[++i], *colon = strchr(v, ':');
            size_t n = colon ? (size_t)(colon - v) : strlen(v);
            if (n >= sizeof name) die("--codec: unknown codec '%s'", v);
            memcpy(name, v, n);
            name[n] = 0;
            if (strcmp(name, "none") && strcmp(name, "gzip") && strcmp(name, "zstd") && strcmp(name, "blosc-lz4") &&
                strcmp(name, "blosc-zstd") && strcmp(name, "blosc-zlib"))
                die("--codec: unknown codec '%s' (none, gzip, zstd, blosc-lz4, blosc-zstd, blosc-zlib)", name);
            g_codec = name;
            if (colon) {
                char *e;
                long l = strtol(colon + 1, &e, 10);
                if (*e || l < 0 || l > 22) die("--codec: bad level '%s'", colon + 1);
                g_level = (int)l;
            }
        } else if (!strcmp(a, "--shard") && i + 1 < argc) {
            const char *p = argv[++i];
            while (*p) {
                char *e;
                unsigned long long v = strtoull(p, &e, 10);
                if (e == p || v == 0 || g_shard_rank == 32) die("--shard: expected positive integers separated by commas");
                g_shard[g_shard_rank++] = v;
                p = *e == ',' ? e + 1 : e;
                if (*e && *e != ',') die("--shard: expected positive integers separated by commas");
            }
        } else if (a[0] == '-' && a[1]) die("unknown option '%s' (see --help)", a);
        else if (npos < 2) pos[npos++] = a;
        else die("too many arguments (see --help)");
    }
    if (npos != 2) { fputs(USAGE, stderr); return 1; }
    if (g_shard_rank && g_format != 3) die("--shard needs --format 3");

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(pos[0], H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) die("%s: cannot open as an HDF5 file", pos[0]);
    hid_t root = H5Gopen2(f, "/", H5P_DEFAULT);
    char *attrs = attrs_json(root, "/");
    zarr_group *zg = NULL;
    zcheck(zarr_group_create_ex(pos[1], attrs, g_format, &zg), "creating the Zarr group", pos[1]);
    free(attrs);
    convert_group(root, zg, "/");
    zarr_group_close(zg);
    H5Gclose(root);
    H5Fclose(f);
    return g_skipped ? 2 : 0;
}
