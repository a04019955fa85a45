/* zarrdump: prints a Zarr hierarchy's structure (and optionally values), as ncdump -h / h5dump do for
 * netCDF and HDF5 files. A plain C program over libzarr's C API; see usage() for the options. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zarr.h>

#define MAX_RANK 64

static const char *USAGE =
    "NAME\n"
    "    zarrdump - print the structure and values of a Zarr hierarchy\n"
    "\n"
    "SYNOPSIS\n"
    "    zarrdump [--json] [-v NAME[,NAME...]] [-d REGION] [--no-count] PATH\n"
    "    zarrdump -h | --help | --version\n"
    "\n"
    "DESCRIPTION\n"
    "    PATH is the directory of a Zarr array or group (Zarr v2 or v3; a file:// URI works too).\n"
    "    For a group, zarrdump prints its attributes and walks its children depth-first in name\n"
    "    order. For each array it prints the shape, dimension names, data type, chunk shape (for a\n"
    "    sharded array: the shard shape and the inner chunk shape), the chunk grid, how many chunks\n"
    "    (shards) are stored, the codecs (Zarr v2: filters and compressor), the fill value and the\n"
    "    attributes. Codecs, fill values and attributes are shown as compact JSON, as stored.\n"
    "\n"
    "OPTIONS\n"
    "    -d, --data REGION\n"
    "        Also print the values of REGION of each array of the region's rank (others are noted\n"
    "        and skipped). REGION is one selection per dimension, separated by commas: I (one\n"
    "        index), START:STOP, START:STOP:STEP, with START and STOP optional (':' is the whole\n"
    "        dimension). STOP is exclusive and clipped to the shape; indices are 0-based, C order.\n"
    "        Values are printed one line per run along the last dimension, prefixed by the index.\n"
    "    -v, --variable NAME[,NAME...]\n"
    "        Dump only these arrays (paths relative to PATH, e.g. 'sub/temp'). Without -d, their\n"
    "        values are printed in full.\n"
    "    --json\n"
    "        Print one JSON document instead of text: for a group {\"node_type\": \"group\", \"path\",\n"
    "        \"zarr_format\", \"attributes\", \"children\": [...]}; for an array {\"node_type\":\n"
    "        \"array\", \"path\", \"zarr_format\", \"shape\", \"data_type\", \"chunk_shape\",\n"
    "        \"shard_shape\" (null unless sharded), \"grid_shape\", \"chunks_total\", \"chunks_stored\",\n"
    "        \"dimension_names\", \"codecs\" (v3) or \"filters\" and \"compressor\" (v2), \"fill_value\",\n"
    "        \"attributes\"} plus, with -d, \"data\": {\"start\", \"count\", \"step\", \"values\"} (values\n"
    "        flat in C order; NaN and infinities as the strings \"NaN\", \"Infinity\", \"-Infinity\";\n"
    "        complex values as [re, im]; strings as strings; bytes as hex strings).\n"
    "    --no-count\n"
    "        Do not count stored chunks (one existence check per chunk): \"chunks_stored\" is null.\n"
    "    -h, --help\n"
    "        Print this help. --version prints libzarr's version.\n"
    "\n"
    "EXIT STATUS\n"
    "    0 success; 1 a libzarr error (its status name and message go to stderr) or a REGION that is\n"
    "    malformed or outside an array; 2 bad usage.\n"
    "\n"
    "EXAMPLES\n"
    "    zarrdump data.zarr                    structure of a hierarchy\n"
    "    zarrdump -v temp -d 0,0:4,: data.zarr values of temp[0, 0:4, :]\n"
    "    zarrdump --json data.zarr | jq .      for scripts\n";

static int opt_json, opt_count = 1;
static char **opt_vars;
static size_t opt_nvars;
static const char *opt_region;
static int failed;

/* ------------------------------------------------------------------------------------------ */
/* errors                                                                                     */

static int report(const char *what, const char *path, zarr_status s) {
    fprintf(stderr, "zarrdump: %s %s: %s: %s\n", what, path, zarr_status_name(s), zarr_last_error());
    failed = 1;
    return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* minimal JSON scanning of the metadata documents libzarr returns                            */

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}

static const char *skip_string(const char *p) { /* p at the opening quote */
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1]) p++;
    return *p ? p + 1 : p;
}

static const char *skip_value(const char *p) {
    int depth = 0;
    p = skip_ws(p);
    if (*p == '"') return skip_string(p);
    if (*p != '{' && *p != '[') {
        while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n') p++;
        return p;
    }
    for (; *p; p++) {
        if (*p == '"') {
            p = skip_string(p) - 1;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            if (--depth == 0) return p + 1;
        }
    }
    return p;
}

/* The value of top-level member `key` of the JSON object `doc`: its start, and its length in *len.
 * NULL when absent. */
static const char *member(const char *doc, const char *key, size_t *len) {
    const char *p = skip_ws(doc);
    size_t klen = strlen(key);
    if (*p != '{') return NULL;
    p = skip_ws(p + 1);
    while (*p == '"') {
        const char *k = p + 1, *kend = skip_string(p) - 1, *v, *vend;
        p = skip_ws(kend + 1);
        if (*p != ':') return NULL;
        v = skip_ws(p + 1);
        vend = skip_value(v);
        if ((size_t)(kend - k) == klen && strncmp(k, key, klen) == 0) {
            *len = (size_t)(vend - v);
            return v;
        }
        p = skip_ws(vend);
        if (*p != ',') return NULL;
        p = skip_ws(p + 1);
    }
    return NULL;
}

/* Prints JSON text without the whitespace outside strings. */
static void put_compact(const char *v, size_t len) {
    size_t i;
    int in_str = 0;
    for (i = 0; i < len; i++) {
        char c = v[i];
        if (in_str) {
            putchar(c);
            if (c == '\\' && i + 1 < len) putchar(v[++i]);
            else if (c == '"') in_str = 0;
        } else if (c == '"') {
            in_str = 1;
            putchar(c);
        } else if (c != ' ' && c != '\n' && c != '\t' && c != '\r') {
            putchar(c);
        }
    }
}

static void put_member(const char *doc, const char *key, const char *fallback) {
    size_t len = 0;
    const char *v = member(doc, key, &len);
    if (v) put_compact(v, len);
    else fputs(fallback, stdout);
}

static void put_json_string(const char *s, size_t n) {
    size_t i;
    putchar('"');
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c == '\n') fputs("\\n", stdout);
        else if (c == '\t') fputs("\\t", stdout);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void put_dims(const uint64_t *v, size_t n) {
    size_t i;
    putchar('[');
    for (i = 0; i < n; i++) printf("%s%llu", i ? ", " : "", (unsigned long long)v[i]);
    putchar(']');
}

static void indent(int level) {
    int i;
    for (i = 0; i < level; i++) fputs("  ", stdout);
}

/* ------------------------------------------------------------------------------------------ */
/* data types                                                                                 */

static const char *DTYPE_NAMES[] = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
    "float64", "complex64", "complex128", "raw", "struct", "string", "bytes", "numpy.datetime64",
    "numpy.timedelta64", "fixed_length_utf32", "null_terminated_bytes", "bfloat16", "complex_float16",
    "complex_bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "complex_float8_e3m4",
    "complex_float8_e4m3", "complex_float8_e4m3b11fnuz", "complex_float8_e4m3fnuz", "complex_float8_e5m2",
    "complex_float8_e5m2fnuz", "complex_float8_e8m0fnu", "complex_float6_e2m3fn", "complex_float6_e3m2fn",
    "complex_float4_e2m1fn", "int2", "int4", "uint2", "uint4"};

static void put_dtype(zarr_data_type t, size_t size) {
    if (t == ZARR_RAW) printf("r%llu", (unsigned long long)size * 8);
    else if ((size_t)t < sizeof DTYPE_NAMES / sizeof DTYPE_NAMES[0]) fputs(DTYPE_NAMES[t], stdout);
    else printf("zarr_data_type %d", (int)t);
}

/* How values of a type are read for printing: the buffer type and a printer kind. */
enum kind { K_INT, K_UINT, K_BOOL, K_FLOAT, K_COMPLEX, K_VLEN, K_NONE };

static enum kind kind_of(zarr_data_type t, zarr_data_type *buffer_type) {
    switch (t) {
        case ZARR_BOOL: *buffer_type = ZARR_UINT8; return K_BOOL;
        case ZARR_INT8: case ZARR_INT16: case ZARR_INT32: case ZARR_INT64: case ZARR_INT2: case ZARR_INT4:
            *buffer_type = ZARR_INT64; return K_INT;
        case ZARR_UINT8: case ZARR_UINT16: case ZARR_UINT32: case ZARR_UINT64: case ZARR_UINT2: case ZARR_UINT4:
            *buffer_type = ZARR_UINT64; return K_UINT;
        case ZARR_FLOAT16: case ZARR_FLOAT32: case ZARR_FLOAT64: case ZARR_BFLOAT16: case ZARR_FLOAT8_E3M4:
        case ZARR_FLOAT8_E4M3: case ZARR_FLOAT8_E4M3B11FNUZ: case ZARR_FLOAT8_E4M3FNUZ: case ZARR_FLOAT8_E5M2:
        case ZARR_FLOAT8_E5M2FNUZ: case ZARR_FLOAT8_E8M0FNU: case ZARR_FLOAT6_E2M3FN: case ZARR_FLOAT6_E3M2FN:
        case ZARR_FLOAT4_E2M1FN:
            *buffer_type = ZARR_FLOAT64; return K_FLOAT;
        case ZARR_COMPLEX64: case ZARR_COMPLEX128: *buffer_type = ZARR_COMPLEX128; return K_COMPLEX;
        case ZARR_DATETIME64: case ZARR_TIMEDELTA64: *buffer_type = t; return K_INT; /* int64 counts */
        case ZARR_STRING: case ZARR_BYTES: *buffer_type = t; return K_VLEN;
        default: *buffer_type = t; return K_NONE;
    }
}

static void put_float(double x) {
    if (isnan(x)) fputs(opt_json ? "\"NaN\"" : "NaN", stdout);
    else if (isinf(x)) fputs(x > 0 ? (opt_json ? "\"Infinity\"" : "Infinity") : (opt_json ? "\"-Infinity\"" : "-Infinity"), stdout);
    else printf("%.17g", x);
}

/* ------------------------------------------------------------------------------------------ */
/* regions                                                                                    */

struct region {
    size_t rank;
    uint64_t start[MAX_RANK], count[MAX_RANK], step[MAX_RANK];
};

static int parse_u64(const char **p, uint64_t *v) {
    char *end;
    unsigned long long x;
    if (**p < '0' || **p > '9') return 0;
    errno = 0;
    x = strtoull(*p, &end, 10);
    if (errno) return -1;
    *p = end;
    *v = (uint64_t)x;
    return 1;
}

/* Parses REGION against `shape`; returns 0 on success, else prints why. */
static int parse_region(const char *text, const uint64_t *shape, size_t rank, struct region *r) {
    const char *p = text;
    size_t d = 0;
    r->rank = rank;
    for (;;) {
        uint64_t a = 0, b = 0, s = 1;
        int has_a, has_b = 0, colon = 0;
        if (d >= rank) return -1;
        has_a = parse_u64(&p, &a);
        if (has_a < 0) return -1;
        if (*p == ':') {
            colon = 1;
            p++;
            has_b = parse_u64(&p, &b);
            if (has_b < 0) return -1;
            if (*p == ':') {
                p++;
                if (parse_u64(&p, &s) != 1 || s == 0) return -1;
            }
        }
        if (!colon) {
            if (!has_a || a >= shape[d]) return -2;
            b = a + 1;
        } else {
            if (!has_b || b > shape[d]) b = shape[d];
            if (a > b) a = b;
        }
        r->start[d] = a;
        r->step[d] = s;
        r->count[d] = (b - a + s - 1) / s;
        d++;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p) return -1;
        break;
    }
    return d == rank ? 0 : -1;
}

/* Number of comma-separated selections in REGION. */
static size_t region_rank(const char *text) {
    size_t n = 1;
    for (; *text; text++) n += *text == ',';
    return n;
}

/* ------------------------------------------------------------------------------------------ */
/* values                                                                                     */

static int print_values(zarr_array *a, const char *path, zarr_data_type t, const struct region *r, int level) {
    zarr_data_type bt;
    enum kind k = kind_of(t, &bt);
    size_t rank = r->rank, d, elem = 8, nrows = 1, row;
    uint64_t idx[MAX_RANK], cnt[MAX_RANK], last = rank ? r->count[rank - 1] : 1;
    unsigned char *buf;
    int first = 1;
    zarr_status s;

    if (k == K_NONE) {
        if (!opt_json) {
            indent(level);
            printf("values: (not printable: use the C API for this data type)\n");
        } else {
            fputs("null", stdout);
        }
        return 0;
    }
    if (k == K_COMPLEX) elem = 16;
    for (d = 0; d + 1 < rank; d++) nrows *= (size_t)r->count[d];
    for (d = 0; d < rank; d++) if (r->count[d] == 0) nrows = 0;
    buf = malloc((size_t)(last ? last : 1) * elem);
    if (!buf) {
        fprintf(stderr, "zarrdump: out of memory\n");
        exit(1);
    }
    if (opt_json) putchar('[');
    for (row = 0; row < nrows; row++) {
        size_t rem = row, i;
        for (d = rank; d-- > 1;) {
            size_t dd = d - 1;
            idx[dd] = r->start[dd] + (rem % r->count[dd]) * r->step[dd];
            rem /= r->count[dd];
            cnt[dd] = 1;
        }
        if (rank) {
            idx[rank - 1] = r->start[rank - 1];
            cnt[rank - 1] = last;
        }
        if (!opt_json) {
            indent(level);
            putchar('[');
            for (d = 0; d < rank; d++) {
                if (d) fputs(", ", stdout);
                if (d + 1 < rank) printf("%llu", (unsigned long long)idx[d]);
                else if (r->step[d] == 1) printf("%llu:%llu", (unsigned long long)idx[d], (unsigned long long)(idx[d] + last));
                else printf("%llu:%llu:%llu", (unsigned long long)idx[d], (unsigned long long)(idx[d] + (last ? last - 1 : 0) * r->step[d] + 1), (unsigned long long)r->step[d]);
            }
            fputs("] ", stdout);
        }
        if (k == K_VLEN) {
            zarr_vlen *v = NULL;
            const uint64_t *off;
            const uint8_t *data;
            size_t n = 0, j;
            uint64_t one[MAX_RANK];
            for (j = 0; j < last; j++) {
                /* vlen reads take dense regions: one element at a time along a stepped dimension */
                memcpy(one, idx, rank * sizeof one[0]);
                if (rank) one[rank - 1] = idx[rank - 1] + j * r->step[rank - 1];
                for (d = 0; d < rank; d++) cnt[d] = 1;
                if ((s = zarr_read_region_vlen(a, one, cnt, &v)) != ZARR_OK) {
                    free(buf);
                    return report("reading", path, s);
                }
                zarr_vlen_view(v, &off, &data, &n);
                if (!first) fputs(opt_json ? ", " : ", ", stdout);
                first = 0;
                if (t == ZARR_STRING) {
                    put_json_string((const char *)data + off[0], (size_t)(off[1] - off[0]));
                } else {
                    uint64_t b;
                    putchar('"');
                    for (b = off[0]; b < off[1]; b++) printf("%02x", data[b]);
                    putchar('"');
                }
                zarr_vlen_free(v);
            }
        } else {
            if ((s = zarr_read_hyperslab(a, idx, cnt, r->step, NULL, bt, buf, (size_t)(last ? last : 1) * elem)) != ZARR_OK) {
                free(buf);
                if (opt_json) putchar(']');
                return report("reading", path, s);
            }
            for (i = 0; i < last; i++) {
                if (!first) fputs(", ", stdout);
                first = 0;
                switch (k) {
                    case K_BOOL: fputs(buf[i] ? "true" : "false", stdout); break;
                    case K_INT: printf("%lld", (long long)((int64_t *)(void *)buf)[i]); break;
                    case K_UINT: printf("%llu", (unsigned long long)((uint64_t *)(void *)buf)[i]); break;
                    case K_FLOAT: put_float(((double *)(void *)buf)[i]); break;
                    case K_COMPLEX:
                        putchar('[');
                        put_float(((double *)(void *)buf)[2 * i]);
                        fputs(", ", stdout);
                        put_float(((double *)(void *)buf)[2 * i + 1]);
                        putchar(']');
                        break;
                    default: break;
                }
            }
        }
        if (!opt_json) {
            putchar('\n');
            first = 1;
        }
    }
    if (opt_json) putchar(']');
    free(buf);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* arrays and groups                                                                          */

static int selected(const char *rel) {
    size_t i;
    if (!opt_nvars) return 1;
    for (i = 0; i < opt_nvars; i++)
        if (strcmp(opt_vars[i], rel) == 0) return 1;
    return 0;
}

/* Counts stored chunks; returns -1 on error. */
static long long count_stored(zarr_array *a, const uint64_t *grid, size_t rank, uint64_t total) {
    uint64_t idx[MAX_RANK] = {0}, n;
    long long stored = 0;
    size_t d;
    for (n = 0; n < total; n++) {
        int is = 0;
        if (zarr_array_chunk_is_stored(a, idx, &is) != ZARR_OK) return -1;
        stored += is;
        for (d = rank; d-- > 0;) {
            if (++idx[d] < grid[d]) break;
            idx[d] = 0;
        }
    }
    return stored;
}

static void dump_array(zarr_array *a, const char *path, const char *rel, int level) {
    size_t rank = 0, esize = 0, d;
    uint64_t shape[MAX_RANK], chunks[MAX_RANK], inner[MAX_RANK], grid[MAX_RANK], total = 1;
    zarr_data_type t;
    int sharded = 0, fmt = 0;
    char *meta = NULL, *attrs = NULL;
    long long stored = -2;
    zarr_status s;
    struct region r;
    int want_values = opt_region || opt_nvars;

    if ((s = zarr_array_rank(a, &rank)) != ZARR_OK || (rank > MAX_RANK && (s = ZARR_ERR_UNSUPPORTED)) ||
        (s = zarr_array_shape(a, shape, rank)) != ZARR_OK || (s = zarr_array_chunk_shape(a, chunks, rank)) != ZARR_OK ||
        (s = zarr_array_inner_chunk_shape(a, inner, rank)) != ZARR_OK ||
        (s = zarr_array_grid_shape(a, grid, rank)) != ZARR_OK || (s = zarr_array_is_sharded(a, &sharded)) != ZARR_OK ||
        (s = zarr_array_data_type(a, &t, &esize)) != ZARR_OK || (s = zarr_array_zarr_format(a, &fmt)) != ZARR_OK ||
        (s = zarr_array_metadata(a, &meta)) != ZARR_OK || (s = zarr_array_attributes(a, &attrs)) != ZARR_OK) {
        report("inspecting", path, s);
        zarr_string_free(meta);
        return;
    }
    for (d = 0; d < rank; d++) total *= grid[d];
    if (opt_count) stored = count_stored(a, grid, rank, total);

    if (opt_json) {
        printf("{\"node_type\": \"array\", \"path\": ");
        put_json_string(rel, strlen(rel));
        printf(", \"zarr_format\": %d, \"shape\": ", fmt);
        put_dims(shape, rank);
        fputs(", \"data_type\": \"", stdout);
        put_dtype(t, esize);
        fputs("\", \"chunk_shape\": ", stdout);
        put_dims(sharded ? inner : chunks, rank);
        fputs(", \"shard_shape\": ", stdout);
        if (sharded) put_dims(chunks, rank);
        else fputs("null", stdout);
        fputs(", \"grid_shape\": ", stdout);
        put_dims(grid, rank);
        printf(", \"chunks_total\": %llu, \"chunks_stored\": ", (unsigned long long)total);
        if (stored >= 0) printf("%lld", stored);
        else fputs("null", stdout);
        fputs(", \"dimension_names\": ", stdout);
    } else {
        indent(level);
        printf("array %s\n", *rel ? rel : "/");
        indent(level + 1);
        fputs("shape: ", stdout);
        put_dims(shape, rank);
        putchar('\n');
    }
    /* dimension names */
    {
        int any = 0;
        char *names[MAX_RANK];
        for (d = 0; d < rank; d++) {
            names[d] = NULL;
            zarr_array_dimension_name(a, d, &names[d]);
            any |= names[d] != NULL;
        }
        if (opt_json) {
            if (!any) fputs("null", stdout);
            else {
                putchar('[');
                for (d = 0; d < rank; d++) {
                    if (d) fputs(", ", stdout);
                    if (names[d]) put_json_string(names[d], strlen(names[d]));
                    else fputs("null", stdout);
                }
                putchar(']');
            }
        } else if (any) {
            indent(level + 1);
            fputs("dimension names: [", stdout);
            for (d = 0; d < rank; d++) printf("%s%s", d ? ", " : "", names[d] ? names[d] : "-");
            fputs("]\n", stdout);
        }
        for (d = 0; d < rank; d++) zarr_string_free(names[d]);
    }
    if (opt_json) {
        if (fmt == 3) {
            fputs(", \"codecs\": ", stdout);
            put_member(meta, "codecs", "null");
        } else {
            fputs(", \"filters\": ", stdout);
            put_member(meta, "filters", "null");
            fputs(", \"compressor\": ", stdout);
            put_member(meta, "compressor", "null");
        }
        fputs(", \"fill_value\": ", stdout);
        put_member(meta, "fill_value", "null");
        fputs(", \"attributes\": ", stdout);
        fputs(attrs, stdout);
    } else {
        indent(level + 1);
        fputs("data type: ", stdout);
        put_dtype(t, esize);
        printf("  (Zarr v%d)\n", fmt);
        indent(level + 1);
        if (sharded) {
            fputs("shards: ", stdout);
            put_dims(chunks, rank);
            fputs("  inner chunks: ", stdout);
            put_dims(inner, rank);
        } else {
            fputs("chunks: ", stdout);
            put_dims(chunks, rank);
        }
        fputs("  grid: ", stdout);
        put_dims(grid, rank);
        putchar('\n');
        indent(level + 1);
        if (stored >= 0) printf("stored %s: %lld of %llu\n", sharded ? "shards" : "chunks", stored, (unsigned long long)total);
        else printf("stored %s: not counted (%llu in the grid)\n", sharded ? "shards" : "chunks", (unsigned long long)total);
        indent(level + 1);
        if (fmt == 3) {
            fputs("codecs: ", stdout);
            put_member(meta, "codecs", "null");
        } else {
            fputs("filters: ", stdout);
            put_member(meta, "filters", "null");
            putchar('\n');
            indent(level + 1);
            fputs("compressor: ", stdout);
            put_member(meta, "compressor", "null");
        }
        putchar('\n');
        indent(level + 1);
        fputs("fill value: ", stdout);
        put_member(meta, "fill_value", "null");
        putchar('\n');
        if (strcmp(attrs, "{}") != 0) {
            indent(level + 1);
            printf("attributes: %s\n", attrs);
        }
    }
    zarr_string_free(meta);
    zarr_string_free(attrs);

    /* values */
    if (want_values && (!*rel || selected(rel))) {
        int rc;
        if (opt_region && region_rank(opt_region) != rank) {
            if (opt_json) fputs(", \"data\": null", stdout);
            else {
                indent(level + 1);
                printf("values: (region has %llu dimensions, the array %llu)\n",
                       (unsigned long long)region_rank(opt_region), (unsigned long long)rank);
            }
        } else if ((rc = opt_region ? parse_region(opt_region, shape, rank, &r) : 0) != 0) {
            fprintf(stderr, "zarrdump: %s: region '%s' %s\n", path, opt_region,
                    rc == -2 ? "has an index outside the shape" : "is malformed (see --help)");
            failed = 1;
            if (opt_json) fputs(", \"data\": null", stdout);
        } else {
            if (!opt_region) {
                r.rank = rank;
                for (d = 0; d < rank; d++) {
                    r.start[d] = 0;
                    r.count[d] = shape[d];
                    r.step[d] = 1;
                }
            }
            if (opt_json) {
                fputs(", \"data\": {\"start\": ", stdout);
                put_dims(r.start, rank);
                fputs(", \"count\": ", stdout);
                put_dims(r.count, rank);
                fputs(", \"step\": ", stdout);
                put_dims(r.step, rank);
                fputs(", \"values\": ", stdout);
                print_values(a, path, t, &r, level + 2);
                putchar('}');
            } else {
                indent(level + 1);
                fputs("values:\n", stdout);
                print_values(a, path, t, &r, level + 2);
            }
        }
    }
    if (opt_json) putchar('}');
}

static void dump_group(zarr_group *g, const char *path, const char *rel, int level) {
    char *attrs = NULL;
    int fmt = 0, first = 1;
    zarr_node_list *list = NULL;
    size_t n = 0, i;
    zarr_status s;

    if ((s = zarr_group_zarr_format(g, &fmt)) != ZARR_OK || (s = zarr_group_attributes(g, &attrs)) != ZARR_OK ||
        (s = zarr_group_list(g, &list)) != ZARR_OK || (s = zarr_node_list_size(list, &n)) != ZARR_OK) {
        report("inspecting", path, s);
        zarr_string_free(attrs);
        zarr_node_list_free(list);
        return;
    }
    if (opt_json) {
        fputs("{\"node_type\": \"group\", \"path\": ", stdout);
        put_json_string(rel, strlen(rel));
        printf(", \"zarr_format\": %d, \"attributes\": %s, \"children\": [", fmt, attrs);
    } else if (!opt_nvars) {
        indent(level);
        printf("group %s  (Zarr v%d)\n", *rel ? rel : "/", fmt);
        if (strcmp(attrs, "{}") != 0) {
            indent(level + 1);
            printf("attributes: %s\n", attrs);
        }
    }
    zarr_string_free(attrs);
    for (i = 0; i < n; i++) {
        const char *name = NULL;
        zarr_node_type type;
        char *child_rel, *child_path;
        if (zarr_node_list_get(list, i, &name, &type) != ZARR_OK) continue;
        child_rel = malloc(strlen(rel) + strlen(name) + 2);
        child_path = malloc(strlen(path) + strlen(name) + 2);
        if (!child_rel || !child_path) exit(1);
        sprintf(child_rel, "%s%s%s", rel, *rel ? "/" : "", name);
        sprintf(child_path, "%s/%s", path, name);
        if (type == ZARR_NODE_ARRAY) {
            zarr_array *a = NULL;
            if (selected(child_rel)) {
                if ((s = zarr_group_open_array(g, name, &a)) != ZARR_OK) {
                    report("opening", child_path, s);
                } else {
                    if (opt_json && !first) fputs(", ", stdout);
                    first = 0;
                    dump_array(a, child_path, child_rel, opt_nvars ? 0 : level + 1);
                    zarr_close(a);
                }
            }
        } else {
            zarr_group *c = NULL;
            if ((s = zarr_group_open_group(g, name, &c)) != ZARR_OK) {
                report("opening", child_path, s);
            } else {
                if (opt_json && !first) fputs(", ", stdout);
                first = 0;
                dump_group(c, child_path, child_rel, level + 1);
                zarr_group_close(c);
            }
        }
        free(child_rel);
        free(child_path);
    }
    zarr_node_list_free(list);
    if (opt_json) fputs("]}", stdout);
}

static int usage_error(const char *msg) {
    fprintf(stderr, "zarrdump: %s (zarrdump --help for usage)\n", msg);
    return 2;
}

int main(int argc, char **argv) {
    const char *path = NULL;
    char *shown = NULL;
    zarr_node_type type;
    zarr_status s;
    int i;
    char *vars = NULL;

    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(USAGE, stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("zarrdump (libzarr %s)\n", zarr_version());
            return 0;
        } else if (!strcmp(a, "--json")) {
            opt_json = 1;
        } else if (!strcmp(a, "--no-count")) {
            opt_count = 0;
        } else if (!strcmp(a, "-d") || !strcmp(a, "--data")) {
            if (++i >= argc) return usage_error("-d needs a REGION");
            opt_region = argv[i];
        } else if (!strcmp(a, "-v") || !strcmp(a, "--variable")) {
            char *p, *tok;
            if (++i >= argc) return usage_error("-v needs a NAME");
            free(vars);
            vars = strdup(argv[i]);
            if (!vars) return 1;
            for (p = vars; (tok = strtok(p, ",")) != NULL; p = NULL) {
                char **grown = realloc(opt_vars, (opt_nvars + 1) * sizeof *opt_vars);
                if (!grown) return 1;
                opt_vars = grown;
                opt_vars[opt_nvars++] = tok;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "zarrdump: unknown option %s (zarrdump --help for usage)\n", a);
            return 2;
        } else if (path) {
            return usage_error("one PATH only");
        } else {
            path = a;
        }
    }
    if (!path) return usage_error("no PATH given");
    /* What is printed of PATH: a URL's password and signature parameters masked by ***. */
    if (zarr_location_redacted(path, &shown) != ZARR_OK) return report("reading", "PATH", ZARR_ERR_INVALID_ARGUMENT);
    if ((s = zarr_node_type_at(path, &type)) != ZARR_OK) return report("reading", shown, s);
    if (type == ZARR_NODE_ARRAY) {
        zarr_array *a = NULL;
        if ((s = zarr_open(path, ZARR_READ, &a)) != ZARR_OK) return report("opening", shown, s);
        dump_array(a, shown, "", 0);
        zarr_close(a);
    } else {
        zarr_group *g = NULL;
        if ((s = zarr_group_open(path, ZARR_READ, &g)) != ZARR_OK) return report("opening", shown, s);
        dump_group(g, shown, "", 0);
        zarr_group_close(g);
    }
    zarr_string_free(shown);
    if (opt_json) putchar('\n');
    free(opt_vars);
    free(vars);
    return failed;
}
