/* zarrdump: prints a Zarr hierarchy in CDL, the notation ncdump prints for netCDF files, or as JSON
 * (--json). A plain C program over libzarr's C API; see USAGE for the options and docs/hdf5-netcdf.md
 * ("zarrdump") for the rules that turn Zarr into CDL. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zarr.h>

#define MAX_RANK 64

/* The help text, in parts (C99 compilers need not take string literals over 4095 characters). */
static const char *const USAGE[] = {
    "NAME\n"
    "    zarrdump - print a Zarr hierarchy as CDL (as ncdump prints netCDF) or as JSON\n"
    "\n"
    "SYNOPSIS\n"
    "    zarrdump [-h | -c] [-v NAME[,NAME...]] [-d REGION] [-s] [--no-count] PATH\n"
    "    zarrdump --json [-v NAME[,NAME...]] [-d REGION] [--no-count] PATH\n"
    "    zarrdump --help | --version\n"
    "\n"
    "DESCRIPTION\n"
    "    PATH is the directory of a Zarr array or group (Zarr v2 or v3; a file:// URI works too).\n"
    "    zarrdump prints it in CDL, as ncdump prints a netCDF-4 file: for each group (subgroups in\n"
    "    name order, as 'group: NAME { ... }') its dimensions, its arrays as variables with their\n"
    "    types, dimensions and attributes, the group's attributes, then the arrays' values.\n"
    "    Dimensions come from the arrays' dimension names (Zarr v3 dimension_names, Zarr v2\n"
    "    _ARRAY_DIMENSIONS); an unnamed dimension is _Anonymous_Dim_N (N its size), as netCDF-C\n"
    "    names it. A dimension is declared in the outermost group whose arrays use it, with the\n"
    "    size they give it, as UNLIMITED where the _libzarr_hdf5 attribute (written by h5tozarr)\n"
    "    records it so. Types are CDL's (byte short int int64 ubyte ushort uint uint64 float\n"
    "    double string; fixed-length strings are string, 1-byte ones char, a row of the last\n"
    "    dimension printing as one string); other Zarr types keep their Zarr names (bool,\n"
    "    float16, complex64, ...). The named types a group's _libzarr_hdf5 records (netCDF-4's\n"
    "    enum and compound types, from h5tozarr) print in a 'types:' section, and the variables\n"
    "    of such a type are declared with its name. Attributes are typed by _libzarr_hdf5's\n"
    "    attribute_types when present; otherwise a JSON integer is int (uint, int64 or uint64 when\n"
    "    int cannot hold it), a number with a fraction or an exponent double, a string char text,\n"
    "    true/false ubyte, and anything else (objects, lists of strings, null) its JSON text.\n"
    "    Values carry ncdump's type suffixes (b s UB US U LL ULL, f for float) and non-finite\n"
    "    floats print as NaN, Infinity, -Infinity (NaNf, Infinityf for float). The attributes\n"
    "    _libzarr_hdf5 and _ARRAY_DIMENSIONS are not shown; the Zarr fill value shows as the\n"
    "    attribute _FillValue unless the array has one (a structured one by field). Values print with %.7g (float) or %.15g\n"
    "    (double), strings quoted, structured elements as {1, 2.5, \"ab\"} (as ncdump prints\n"
    "    compounds), one line per run along the last dimension, wrapped at 80 columns. Unlike\n"
    "    ncdump, values equal to the fill value print as themselves, not as _ (every Zarr array\n"
    "    has a fill value, often 0). An HDF5 enum's names (_libzarr_hdf5.enum) show in a comment\n"
    "    under its variable.\n"
    "\n",
    "OPTIONS\n"
    "    -h  Header only: no values.\n"
    "    -c  Values of the coordinate variables only (arrays named as one of their dimensions).\n"
    "    -v, --variable NAME[,NAME...]\n"
    "        Values of these arrays only (paths relative to PATH, e.g. 'sub/temp'; with -c: of\n"
    "        these and the coordinate variables). Every NAME must be an array: an unknown NAME is\n"
    "        an error (exit 1) and nothing is printed. With --json only these arrays are shown.\n"
    "    -d, --data REGION\n"
    "        Values of REGION only, for each array of the region's rank (others are noted and\n"
    "        skipped). REGION is one selection per dimension, separated by commas: I (one\n"
    "        index), START:STOP, START:STOP:STEP, with START and STOP optional (':' is the whole\n"
    "        dimension). STOP is exclusive and clipped to the shape; indices are 0-based, C order.\n"
    "        In CDL each line of values ends with a comment giving its indices, e.g. // [1, 0:4].\n"
    "    -s  Also print how each array is stored, as ncdump -s does, in virtual attributes:\n"
    "        _ChunkSizes (the inner chunks of a sharded array), _ShardSizes, _Codecs (Zarr v3) or\n"
    "        _Filters and _Compressor (Zarr v2) as compact JSON, _StoredChunks (chunks, or shards,\n"
    "        stored of the grid's total), and the root's _ZarrFormat (the Zarr format).\n"
    "    --json\n"
    "        Print one JSON document instead of CDL: for a group {\"node_type\": \"group\", \"path\",\n"
    "        \"zarr_format\", \"attributes\", \"children\": [...]}; for an array {\"node_type\":\n"
    "        \"array\", \"path\", \"zarr_format\", \"shape\", \"data_type\", \"chunk_shape\",\n"
    "        \"shard_shape\" (null unless sharded), \"grid_shape\", \"chunks_total\", \"chunks_stored\",\n"
    "        \"dimension_names\", \"codecs\" (v3) or \"filters\" and \"compressor\" (v2), \"fill_value\",\n"
    "        \"attributes\"} plus, with -d or -v, \"data\": {\"start\", \"count\", \"step\", \"values\"}\n"
    "        (values flat in C order; NaN and infinities as the strings \"NaN\", \"Infinity\",\n"
    "        \"-Infinity\"; complex values as [re, im]; strings as strings; structured elements as\n"
    "        objects; bytes and raw values as hex strings). Codecs, fill values and attributes are shown as stored.\n"
    "    --no-count\n"
    "        Do not count stored chunks (one existence check per chunk): \"chunks_stored\" is null,\n"
    "        and -s prints no _StoredChunks.\n"
    "    --help\n"
    "        Print this help. --version prints libzarr's version.\n"
    "\n",
    "EXIT STATUS\n"
    "    0 success; 1 a libzarr error, such as a chunk that does not decode (its status name and\n"
    "    message go to stderr, that array's values are left out and the rest is printed), an\n"
    "    unknown -v NAME, or a REGION that is malformed or outside an array; 2 bad usage.\n"
    "\n"
    "EXAMPLES\n"
    "    zarrdump -h data.zarr                 header: dimensions, variables, attributes\n"
    "    zarrdump -v temp data.zarr            header and the values of temp\n"
    "    zarrdump -v temp -d 0,0:4,: data.zarr values of temp[0, 0:4, :]\n"
    "    zarrdump --json data.zarr | jq .      for scripts\n",
    NULL};

static int opt_json, opt_count = 1, opt_header, opt_coord, opt_storage;
static char **opt_vars;
static size_t opt_nvars;
static const char *opt_region;
static int failed;
static FILE *out; /* where output goes: stdout, or a buffer holding one array's values */

/* ------------------------------------------------------------------------------------------ */
/* errors and output                                                                          */

static int report(const char *what, const char *path, zarr_status s) {
    fflush(stdout);
    fprintf(stderr, "zarrdump: %s %s: %s: %s\n", what, path, zarr_status_name(s), zarr_last_error());
    failed = 1;
    return 1;
}

static void oom(void) {
    fprintf(stderr, "zarrdump: out of memory\n");
    exit(1);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom();
    return p;
}

static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

static void indent(int level) {
    int i;
    for (i = 0; i < level; i++) fputs("  ", out);
}

/* A growing string. */
struct sbuf {
    char *s;
    size_t n, cap;
};

static void sb_add(struct sbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        char *g;
        b->cap = (b->n + n + 1) * 2;
        g = realloc(b->s, b->cap);
        if (!g) oom();
        b->s = g;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

static void sb_puts(struct sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void sb_printf(struct sbuf *b, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) sb_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
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

/* Iterates over the members of the JSON object at *p (first call: *p at '{'); returns 0 at the end.
 * key is the member name's opening quote, value its value and *vlen the value's length. */
static int next_member(const char **p, const char **key, const char **value, size_t *vlen) {
    const char *q = skip_ws(*p), *ve;
    if (*q == '{') q = skip_ws(q + 1);
    if (*q != '"') return 0;
    *key = q;
    q = skip_ws(skip_string(q));
    if (*q != ':') return 0;
    *value = skip_ws(q + 1);
    ve = skip_value(*value);
    *vlen = (size_t)(ve - *value);
    q = skip_ws(ve);
    if (*q == ',') q++;
    *p = q;
    return 1;
}

/* Iterates over the elements of a JSON array (first call: *p just after its '['); returns 0 at the end. */
static int next_element(const char **p, const char **value, size_t *vlen) {
    const char *q = skip_ws(*p), *ve;
    if (!*q || *q == ']') return 0;
    *value = q;
    ve = skip_value(q);
    *vlen = (size_t)(ve - q);
    q = skip_ws(ve);
    if (*q == ',') q++;
    *p = q;
    return 1;
}

static void put_utf8(struct sbuf *b, unsigned long c) {
    char u[4];
    size_t n;
    if (c < 0x80) u[0] = (char)c, n = 1;
    else if (c < 0x800) u[0] = (char)(0xc0 | c >> 6), u[1] = (char)(0x80 | (c & 0x3f)), n = 2;
    else if (c < 0x10000)
        u[0] = (char)(0xe0 | c >> 12), u[1] = (char)(0x80 | ((c >> 6) & 0x3f)), u[2] = (char)(0x80 | (c & 0x3f)), n = 3;
    else
        u[0] = (char)(0xf0 | c >> 18), u[1] = (char)(0x80 | ((c >> 12) & 0x3f)), u[2] = (char)(0x80 | ((c >> 6) & 0x3f)),
        u[3] = (char)(0x80 | (c & 0x3f)), n = 4;
    sb_add(b, u, n);
}

/* The text of the JSON string at q (its opening quote), unescaped, as a NUL-terminated UTF-8 string
 * to free(); its length (which may include NULs) in *n when n is not NULL. */
static char *json_text(const char *q, size_t *n) {
    struct sbuf b = {0};
    const char *p = q + 1;
    sb_add(&b, "", 0);
    while (*p && *p != '"') {
        if (*p != '\\') {
            const char *e = p;
            while (*e && *e != '"' && *e != '\\') e++;
            sb_add(&b, p, (size_t)(e - p));
            p = e;
            continue;
        }
        p++;
        switch (*p) {
            case 'b': sb_add(&b, "\b", 1); break;
            case 'f': sb_add(&b, "\f", 1); break;
            case 'n': sb_add(&b, "\n", 1); break;
            case 'r': sb_add(&b, "\r", 1); break;
            case 't': sb_add(&b, "\t", 1); break;
            case 'u': {
                unsigned long c = strtoul((char[5]){p[1], p[2], p[3], p[4], 0}, NULL, 16);
                p += 4;
                if (c >= 0xd800 && c < 0xdc00 && p[1] == '\\' && p[2] == 'u') {
                    unsigned long lo = strtoul((char[5]){p[3], p[4], p[5], p[6], 0}, NULL, 16);
                    if (lo >= 0xdc00 && lo < 0xe000) {
                        c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
                        p += 6;
                    }
                }
                put_utf8(&b, c);
                break;
            }
            case 0: p--; break;
            default: sb_add(&b, p, 1); break; /* \" \\ \/ */
        }
        p++;
    }
    if (n) *n = b.n;
    return b.s;
}

/* 1 when the JSON string at q is `s`. */
static int json_is(const char *q, const char *s) {
    char *t = json_text(q, NULL);
    int eq = strcmp(t, s) == 0;
    free(t);
    return eq;
}

/* The value of member `key` of the JSON object `doc`: its start, and its length in *len. NULL when
 * absent or when doc is not an object. */
static const char *member(const char *doc, const char *key, size_t *len) {
    const char *p, *k, *v;
    size_t vl;
    if (!doc || *skip_ws(doc) != '{') return NULL;
    p = doc;
    while (next_member(&p, &k, &v, &vl))
        if (json_is(k, key)) {
            *len = vl;
            return v;
        }
    return NULL;
}

/* The record `_libzarr_hdf5` of the attributes `attrs` as the text of a JSON object (caller frees),
 * whether stored as a string holding that text (as h5tozarr writes it) or as the object itself (as
 * earlier versions did); NULL when there is none. */
static char *hdf5_record(const char *attrs) {
    size_t l;
    const char *h = member(attrs, "_libzarr_hdf5", &l);
    char *c;
    if (!h) return NULL;
    if (*h == '"') {
        c = json_text(h, NULL);
        if (*skip_ws(c) == '{') return c;
        free(c);
        return NULL;
    }
    c = xmalloc(l + 1);
    memcpy(c, h, l);
    c[l] = 0;
    return c;
}

/* Prints JSON text without the whitespace outside strings. */
static void put_compact(struct sbuf *b, const char *v, size_t len) {
    size_t i;
    int in_str = 0;
    for (i = 0; i < len; i++) {
        char c = v[i];
        if (in_str) {
            sb_add(b, &c, 1);
            if (c == '\\' && i + 1 < len) sb_add(b, &v[++i], 1);
            else if (c == '"') in_str = 0;
        } else if (c == '"') {
            in_str = 1;
            sb_add(b, &c, 1);
        } else if (c != ' ' && c != '\n' && c != '\t' && c != '\r') {
            sb_add(b, &c, 1);
        }
    }
}

static void put_member(const char *doc, const char *key, const char *fallback) {
    size_t len = 0;
    const char *v = member(doc, key, &len);
    struct sbuf b = {0};
    if (v) put_compact(&b, v, len);
    fputs(v && b.s ? b.s : fallback, out);
    free(b.s);
}

static void json_quote(struct sbuf *b, const char *s, size_t n) {
    size_t i;
    sb_add(b, "\"", 1);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') sb_printf(b, "\\%c", c);
        else if (c == '\n') sb_puts(b, "\\n");
        else if (c == '\t') sb_puts(b, "\\t");
        else if (c < 0x20) sb_printf(b, "\\u%04x", c);
        else sb_add(b, (const char *)&c, 1);
    }
    sb_add(b, "\"", 1);
}

static void put_json_string(const char *s, size_t n) {
    struct sbuf b = {0};
    json_quote(&b, s, n);
    fwrite(b.s, 1, b.n, out);
    free(b.s);
}

/* A string in CDL's quoting (as ncdump quotes text): escapes for quotes, backslashes and control
 * characters; other bytes (UTF-8 included) as they are. */
static void cdl_string(struct sbuf *b, const char *s, size_t n) {
    size_t i;
    sb_add(b, "\"", 1);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
            case '\b': sb_puts(b, "\\b"); break;
            case '\f': sb_puts(b, "\\f"); break;
            case '\n': sb_puts(b, "\\n"); break;
            case '\r': sb_puts(b, "\\r"); break;
            case '\t': sb_puts(b, "\\t"); break;
            case '\v': sb_puts(b, "\\v"); break;
            case '\\': sb_puts(b, "\\\\"); break;
            case '\'': sb_puts(b, "\\'"); break;
            case '"': sb_puts(b, "\\\""); break;
            default:
                if (c < 0x20 || c == 0x7f) sb_printf(b, "\\%03o", c);
                else sb_add(b, (const char *)&c, 1);
        }
    }
    sb_add(b, "\"", 1);
}

/* A name as CDL writes it (as ncdump does): characters other than letters, digits, '_', '.', '@', '+',
 * '-' and non-ASCII bytes are escaped with a backslash, and so is a leading digit. The result lives
 * in one of four rotating buffers (enough for one output line). */
static const char *nm(const char *name) {
    static struct sbuf ring[4];
    static int next;
    struct sbuf *b = &ring[next++ & 3];
    const unsigned char *p;
    b->n = 0;
    sb_add(b, "", 0);
    for (p = (const unsigned char *)name; *p; p++) {
        int plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || *p == '.' ||
                    *p == '@' || *p == '+' || *p == '-' || *p >= 0x80 || (*p >= '0' && *p <= '9' && p != (const unsigned char *)name);
        if (!plain) sb_add(b, "\\", 1);
        sb_add(b, (const char *)p, 1);
    }
    return b->s;
}

static void put_dims(const uint64_t *v, size_t n) {
    size_t i;
    fputc('[', out);
    for (i = 0; i < n; i++) fprintf(out, "%s%llu", i ? ", " : "", (unsigned long long)v[i]);
    fputc(']', out);
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
    if (t == ZARR_RAW) fprintf(out, "r%llu", (unsigned long long)size * 8);
    else if ((size_t)t < sizeof DTYPE_NAMES / sizeof DTYPE_NAMES[0]) fputs(DTYPE_NAMES[t], out);
    else fprintf(out, "zarr_data_type %d", (int)t);
}

/* The CDL name of a Zarr data type; types CDL lacks keep their Zarr names. */
static void put_cdl_type(zarr_data_type t, size_t size) {
    switch (t) {
        case ZARR_INT8: fputs("byte", out); break;
        case ZARR_INT16: fputs("short", out); break;
        case ZARR_INT32: fputs("int", out); break;
        case ZARR_INT64: fputs("int64", out); break;
        case ZARR_UINT8: fputs("ubyte", out); break;
        case ZARR_UINT16: fputs("ushort", out); break;
        case ZARR_UINT32: fputs("uint", out); break;
        case ZARR_UINT64: fputs("uint64", out); break;
        case ZARR_FLOAT32: fputs("float", out); break;
        case ZARR_FLOAT64: fputs("double", out); break;
        case ZARR_STRING: case ZARR_FIXED_UTF32: case ZARR_NULL_TERMINATED_BYTES: fputs("string", out); break;
        default: put_dtype(t, size);
    }
}

/* How values of a type are read for printing: the buffer type and a printer kind. */
enum kind { K_INT, K_UINT, K_BOOL, K_FLOAT, K_COMPLEX, K_VLEN, K_FIXSTR, K_UTF32, K_OPAQUE };

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
        case ZARR_NULL_TERMINATED_BYTES: *buffer_type = t; return K_FIXSTR;
        case ZARR_FIXED_UTF32: *buffer_type = t; return K_UTF32;
        default: *buffer_type = t; return K_OPAQUE; /* raw, struct, complex of small floats: bytes */
    }
}

/* ------------------------------------------------------------------------------------------ */
/* numbers as ncdump prints them                                                              */

/* Removes trailing zeros after the decimal point of a %#g result (keeping the point: "1." stays),
 * before any exponent or suffix. */
static void trim_zeros(char *s) {
    char *p = s, *dot = NULL, *end, *z;
    if (*p == '-') p++;
    for (; (*p >= '0' && *p <= '9') || *p == '.'; p++)
        if (*p == '.') dot = p;
    if (!dot) return;
    end = z = p;
    while (z > dot + 1 && z[-1] == '0') z--;
    memmove(z, end, strlen(end) + 1);
}

/* A float value: `single` for float32 (7 digits, NaNf), else float64 (15 digits, NaN). `attr` uses
 * the attribute form (%#g with trailing zeros trimmed: 1.f, 0.5f, 273.15), else the data form (%g). */
static void fmt_float(struct sbuf *b, double x, int single, int attr) {
    char tmp[64];
    if (isnan(x)) {
        sb_puts(b, single ? "NaNf" : "NaN");
        return;
    }
    if (isinf(x)) {
        sb_puts(b, x < 0 ? (single ? "-Infinityf" : "-Infinity") : (single ? "Infinityf" : "Infinity"));
        return;
    }
    if (attr) {
        snprintf(tmp, sizeof tmp, single ? "%#.7g" : "%#.15g", single ? (double)(float)x : x);
        trim_zeros(tmp);
        sb_puts(b, tmp);
        if (single) sb_puts(b, "f");
    } else {
        snprintf(tmp, sizeof tmp, single ? "%.7g" : "%.15g", x);
        sb_puts(b, tmp);
    }
}

/* float16 and bfloat16 bits as a double (for fill values). */
static double half_to_double(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0x1f) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp(m, -24);
    else v = ldexp(m | 0x400, e - 25);
    return h & 0x8000 ? -v : v;
}

/* ------------------------------------------------------------------------------------------ */
/* attributes in CDL                                                                          */

/* The attribute types CDL prints: the Zarr type names attribute_types uses, their CDL type and suffix,
 * and their value class (i signed, u unsigned, f float32, d float64, S string, C char). */
static const struct atype {
    const char *zarr, *suffix;
    char cls;
    int64_t min;
    uint64_t max;
} ATYPES[] = {{"int8", "b", 'i', INT8_MIN, INT8_MAX},        {"int16", "s", 'i', INT16_MIN, INT16_MAX},
              {"int32", "", 'i', INT32_MIN, INT32_MAX},      {"int64", "LL", 'i', INT64_MIN, INT64_MAX},
              {"uint8", "UB", 'u', 0, UINT8_MAX},            {"uint16", "US", 'u', 0, UINT16_MAX},
              {"uint32", "U", 'u', 0, UINT32_MAX},           {"uint64", "ULL", 'u', 0, UINT64_MAX},
              {"bool", "UB", 'u', 0, 1},                     {"float16", "", 'f', 0, 0},
              {"float32", "", 'f', 0, 0},                    {"float64", "", 'd', 0, 0},
              {"string", "", 'S', 0, 0},                     {"char", "", 'C', 0, 0}};

static const struct atype *atype_named(const char *name) {
    size_t i;
    for (i = 0; i < sizeof ATYPES / sizeof ATYPES[0]; i++)
        if (strcmp(ATYPES[i].zarr, name) == 0) return &ATYPES[i];
    return NULL;
}

/* The scalar values of a JSON attribute value: the value itself, or a list's elements (nested lists
 * flattened, `nested` then set). */
struct elems {
    const char **v;
    size_t n, cap;
    int nested;
};

static void flatten(struct elems *e, const char *v, int depth) {
    const char *p = v, *x;
    size_t xl;
    if (*v != '[') {
        if (e->n == e->cap) {
            e->cap = e->cap ? 2 * e->cap : 8;
            e->v = realloc(e->v, e->cap * sizeof *e->v);
            if (!e->v) oom();
        }
        e->v[e->n++] = v;
        return;
    }
    if (depth) e->nested = 1;
    p = v + 1;
    while (next_element(&p, &x, &xl)) flatten(e, x, depth + 1);
}

/* Decodes base64 text (standard alphabet, '=' padding) into dst (room for max bytes); returns the byte
 * count, or -1 when it is not base64 or longer than max. */
static int base64_decode(const char *s, unsigned char *dst, int max) {
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned long acc = 0;
    int bits = 0, n = 0, pad = 0;
    for (; *s; s++) {
        const char *c = strchr(A, *s);
        if (*s == '=') {
            pad++;
            continue;
        }
        if (!c || pad) return -1;
        acc = (acc << 6 | (unsigned long)(c - A)) & 0xffffff;
        if ((bits += 6) >= 8) {
            bits -= 8;
            if (n == max) return -1;
            dst[n++] = (unsigned char)(acc >> bits);
        }
    }
    return n;
}

/* A JSON scalar as a double: numbers, bare NaN/Infinity/-Infinity and the strings "NaN", "Infinity",
 * "-Infinity" (how some writers store them), true/false, and base64 text of a little-endian float64
 * (how xarray writes a float _FillValue in Zarr v3). Returns 0 when it is none of these. */
static int elem_double(const char *v, double *x) {
    if (*v == '"') {
        char *t = json_text(v, NULL);
        unsigned char b[8];
        int ok = 1;
        if (!strcmp(t, "NaN")) *x = NAN;
        else if (!strcmp(t, "Infinity")) *x = INFINITY;
        else if (!strcmp(t, "-Infinity")) *x = -INFINITY;
        else if (base64_decode(t, b, 8) == 8) {
            uint64_t w = 0;
            int i;
            for (i = 7; i >= 0; i--) w = w << 8 | b[i];
            memcpy(x, &w, 8);
        } else ok = 0;
        free(t);
        return ok;
    }
    if (!strncmp(v, "NaN", 3)) *x = NAN;
    else if (!strncmp(v, "Infinity", 8)) *x = INFINITY;
    else if (!strncmp(v, "-Infinity", 9)) *x = -INFINITY;
    else if (!strncmp(v, "true", 4)) *x = 1;
    else if (!strncmp(v, "false", 5)) *x = 0;
    else if (*v == '-' || (*v >= '0' && *v <= '9')) *x = strtod(v, NULL);
    else return 0;
    return 1;
}

static int is_number(const char *v) { return *v == '-' ? v[1] >= '0' && v[1] <= '9' : *v >= '0' && *v <= '9'; }

/* 1 for a JSON number written without fraction or exponent. */
static int is_integer(const char *v) {
    const char *e = skip_value(v);
    if (!is_number(v)) return 0;
    for (; v < e; v++)
        if (*v == '.' || *v == 'e' || *v == 'E') return 0;
    return 1;
}

/* A JSON scalar as an integer of class 'i' or 'u' in [min, max]: integers, integral numbers,
 * true/false. Returns 0 when it is not one. */
static int elem_int(const char *v, char cls, int64_t min, uint64_t max, int64_t *i, uint64_t *u) {
    if (!strncmp(v, "true", 4) || !strncmp(v, "false", 5)) {
        *i = *v == 't';
        *u = (uint64_t)*i;
        return 1;
    }
    if (!is_number(v)) return 0;
    errno = 0;
    if (is_integer(v)) {
        if (*v == '-') {
            *i = strtoll(v, NULL, 10);
            if (errno || cls == 'u' || *i < min) return 0;
            *u = 0;
        } else {
            *u = strtoull(v, NULL, 10);
            if (errno || *u > max) return 0;
            *i = (int64_t)*u;
        }
        return 1;
    } else {
        double d = strtod(v, NULL);
        if (d != floor(d) || d < (double)min || d > (double)max) return 0;
        if (d < 0) *i = (int64_t)d, *u = 0;
        else *u = (uint64_t)d, *i = (int64_t)*u;
        return 1;
    }
}

/* The values of attribute value `v` (length vl) in CDL, typed `ty` (NULL: inferred as netCDF-C infers
 * the type of a JSON attribute). Sets *string_type when the attribute is a CDL string (the line is then
 * prefixed with "string"). Returns 0 when `ty` cannot hold the value (the caller infers instead). */
static int cdl_values(struct sbuf *b, const char *v, size_t vl, const struct atype *ty, int *string_type) {
    struct elems e = {0};
    size_t i;
    int ok = 1;
    *string_type = 0;
    flatten(&e, v, 0);
    if (!ty) { /* infer */
        int all_num = e.n > 0, all_int = e.n > 0, all_bool = e.n > 0, all_str = e.n > 0;
        for (i = 0; i < e.n; i++) {
            const char *x = e.v[i];
            int num = is_number(x) || !strncmp(x, "NaN", 3) || !strncmp(x, "Infinity", 8) || !strncmp(x, "-Infinity", 9);
            all_num &= num;
            all_int &= is_integer(x);
            all_bool &= !strncmp(x, "true", 4) || !strncmp(x, "false", 5);
            all_str &= *x == '"';
        }
        if ((all_str && e.n == 1 && *v == '"') || (*v == '[' && e.n == 0)) ty = atype_named("char");
        else if (all_bool && !e.nested) ty = atype_named("uint8");
        else if (all_num && !e.nested && !all_int) ty = atype_named("float64");
        else if (all_num && !e.nested) {
            static const char *ladder[] = {"int32", "uint32", "int64", "uint64"};
            size_t k;
            for (k = 0; k < 4 && !ty; k++) {
                const struct atype *t = atype_named(ladder[k]);
                int64_t ii;
                uint64_t uu;
                for (i = 0; i < e.n && elem_int(e.v[i], t->cls, t->min, t->max, &ii, &uu); i++) {
                }
                if (i == e.n) ty = t;
            }
        }
        if (!ty) { /* its JSON text, as text */
            struct sbuf j = {0};
            put_compact(&j, v, vl);
            cdl_string(b, j.s ? j.s : "", j.n);
            free(j.s);
            free(e.v);
            return 1;
        }
    }
    if (e.n == 0) { /* an empty list: shown as ncdump shows an empty attribute */
        sb_puts(b, "\"\"");
        free(e.v);
        return ty->cls == 'S' || ty->cls == 'C';
    }
    for (i = 0; i < e.n && ok; i++) {
        const char *x = e.v[i];
        int64_t ii;
        uint64_t uu;
        double d;
        if (i) sb_puts(b, ", ");
        switch (ty->cls) {
            case 'i':
            case 'u':
                if ((ok = elem_int(x, ty->cls, ty->min, ty->max, &ii, &uu)) != 0) {
                    if (ty->cls == 'i') sb_printf(b, "%lld%s", (long long)ii, ty->suffix);
                    else sb_printf(b, "%llu%s", (unsigned long long)uu, ty->suffix);
                }
                break;
            case 'f':
            case 'd':
                if ((ok = elem_double(x, &d)) != 0) fmt_float(b, d, ty->cls == 'f', 1);
                break;
            default: /* S, C */
                if ((ok = *x == '"') != 0) {
                    size_t n;
                    char *s = json_text(x, &n);
                    cdl_string(b, s, n);
                    free(s);
                }
                if (ty->cls == 'C' && e.n > 1) *string_type = 1; /* several texts: a string list */
        }
    }
    if (ty->cls == 'S') *string_type = 1;
    free(e.v);
    return ok;
}

/* Prints one attribute line: `<tabs>[string ]VAR:NAME = VALUES ;`. */
static void put_attr(int level, const char *var, const char *name, const char *v, size_t vl, const char *type) {
    struct sbuf b = {0};
    int string_type = 0;
    const struct atype *ty = type ? atype_named(type) : NULL;
    if (!cdl_values(&b, v, vl, ty, &string_type)) {
        b.n = 0;
        if (!cdl_values(&b, v, vl, NULL, &string_type)) b.n = 0;
    }
    indent(level);
    fprintf(out, "\t\t%s%s:%s = %s ;\n", string_type ? "string " : "", nm(var), nm(name), b.s ? b.s : "\"\"");
    free(b.s);
}

/* Prints a node's attributes (the JSON object `attrs`) except _libzarr_hdf5 and _ARRAY_DIMENSIONS,
 * typed by _libzarr_hdf5's attribute_types where it names them; an untyped _FillValue takes the array's
 * type `fill_type` (NULL: infer). Sets *has_fill when one is _FillValue. */
static void put_attrs(int level, const char *var, const char *attrs, int *has_fill, const char *fill_type) {
    size_t tl = 0, vl;
    char *h = hdf5_record(attrs);
    const char *types = h ? member(h, "attribute_types", &tl) : NULL;
    const char *p = attrs, *k, *v;
    if (has_fill) *has_fill = 0;
    while (next_member(&p, &k, &v, &vl)) {
        char *name = json_text(k, NULL), *type = NULL;
        size_t l;
        const char *t;
        if (!strcmp(name, "_libzarr_hdf5") || !strcmp(name, "_ARRAY_DIMENSIONS")) {
            free(name);
            continue;
        }
        if (has_fill && !strcmp(name, "_FillValue")) *has_fill = 1;
        if (types && (t = member(types, name, &l)) != NULL && *t == '"') type = json_text(t, NULL);
        else if (fill_type && !strcmp(name, "_FillValue")) type = xstrdup(fill_type);
        put_attr(level, var, name, v, vl, type);
        free(type);
        free(name);
    }
    free(h);
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

/* An array's fill value as a number. */
struct fill {
    int has;
    double d;
    int64_t i;
    uint64_t u;
};

static int col; /* CDL: the output column, for wrapping at 80 columns as ncdump does */

/* Prints one value of a row, after a comma when it is not the row's first (`more`); a value that would
 * pass column 78 (with its comma) starts a continuation line. */
static void lput(const char *s, size_t n, int level, int more) {
    if (more && col + (int)n + 3 > 78) {
        fputs(",\n", out);
        indent(level);
        fputs("    ", out);
        col = 2 * level + 4;
    } else if (more) {
        fputs(", ", out);
        col += 2;
    }
    fwrite(s, 1, n, out);
    col += (int)n;
}

static void put_float(struct sbuf *b, double x) { /* JSON */
    if (isnan(x)) sb_puts(b, "\"NaN\"");
    else if (isinf(x)) sb_puts(b, x > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    else sb_printf(b, "%.17g", x);
}

static void put_hex(struct sbuf *b, const unsigned char *p, size_t n) {
    size_t i;
    if (opt_json) {
        sb_add(b, "\"", 1);
        for (i = 0; i < n; i++) sb_printf(b, "%02x", p[i]);
        sb_add(b, "\"", 1);
    } else {
        sb_puts(b, "0X");
        for (i = 0; i < n; i++) sb_printf(b, "%02X", p[i]);
    }
}

static void put_text(struct sbuf *b, const char *s, size_t n) {
    if (opt_json) json_quote(b, s, n);
    else cdl_string(b, s, n);
}

static void put_elem(struct sbuf *b, enum kind k, zarr_data_type t, size_t esize, const unsigned char *buf, size_t i,
                     zarr_array *a);

/* The Zarr v2 "dtype" of the array whose values are being printed (NULL for v3): libzarr reads a
 * structured field |S<n> as raw bytes, which this shows as the string it is. */
static const char *cur_v2_dtype;

static int v2_field_is_string(size_t f) {
    const char *p = cur_v2_dtype, *x, *y;
    size_t l, i;
    if (!p || *p++ != '[') return 0;
    for (i = 0; next_element(&p, &x, &l); i++)
        if (i == f) {
            const char *q = x + 1;
            return *x == '[' && next_element(&q, &y, &l) && next_element(&q, &y, &l) && !strncmp(y, "\"|S", 3);
        }
    return 0;
}

/* The size of one value of a field type whose values print as numbers; 0 for the others. */
static size_t scalar_size(zarr_data_type t) {
    switch (t) {
        case ZARR_BOOL: case ZARR_INT8: case ZARR_UINT8: return 1;
        case ZARR_INT16: case ZARR_UINT16: return 2;
        case ZARR_INT32: case ZARR_UINT32: case ZARR_FLOAT32: return 4;
        case ZARR_INT64: case ZARR_UINT64: case ZARR_FLOAT64: return 8;
        default: return 0;
    }
}

/* One structured element at p: {f1, f2, ...} in CDL (as ncdump prints a compound), an object in JSON. A
 * subarray field is a list of its items; fields of other types (nested structs, raw) are hex. */
static void put_struct(struct sbuf *b, zarr_array *a, const unsigned char *p, size_t esize) {
    size_t nf = 0, f;
    if (zarr_array_num_fields(a, &nf) != ZARR_OK || nf == 0) {
        put_hex(b, p, esize);
        return;
    }
    sb_puts(b, "{");
    for (f = 0; f < nf; f++) {
        const char *name = NULL;
        zarr_data_type ft;
        size_t off = 0, size = 0, ss, n, j;
        if (zarr_array_field(a, f, &name, &ft, &off, &size) != ZARR_OK || off + size > esize) break;
        if (f) sb_puts(b, ", ");
        if (opt_json) {
            json_quote(b, name, strlen(name));
            sb_puts(b, ": ");
        }
        ss = scalar_size(ft);
        n = ss ? size / ss : 1;
        if (n != 1) sb_puts(b, "[");
        for (j = 0; j < n; j++) {
            const unsigned char *q = p + off + j * ss;
            union {
                int8_t i8; int16_t i16; int32_t i32; int64_t i64; uint8_t u8; uint16_t u16; uint32_t u32;
                uint64_t u64; float f32; double f64;
            } x;
            if (j) sb_puts(b, ", ");
            if (ss) memcpy(&x, q, ss);
            switch (ft) {
                case ZARR_BOOL: sb_puts(b, x.u8 ? "true" : "false"); break;
                case ZARR_INT8: sb_printf(b, "%d", x.i8); break;
                case ZARR_INT16: sb_printf(b, "%d", x.i16); break;
                case ZARR_INT32: sb_printf(b, "%ld", (long)x.i32); break;
                case ZARR_INT64: sb_printf(b, "%lld", (long long)x.i64); break;
                case ZARR_UINT8: sb_printf(b, "%u", x.u8); break;
                case ZARR_UINT16: sb_printf(b, "%u", x.u16); break;
                case ZARR_UINT32: sb_printf(b, "%lu", (unsigned long)x.u32); break;
                case ZARR_UINT64: sb_printf(b, "%llu", (unsigned long long)x.u64); break;
                case ZARR_FLOAT32:
                    if (opt_json) put_float(b, x.f32);
                    else fmt_float(b, x.f32, 1, 0);
                    break;
                case ZARR_FLOAT64:
                    if (opt_json) put_float(b, x.f64);
                    else fmt_float(b, x.f64, 0, 0);
                    break;
                case ZARR_NULL_TERMINATED_BYTES: put_elem(b, K_FIXSTR, ft, size, p + off, 0, a); break;
                case ZARR_FIXED_UTF32: put_elem(b, K_UTF32, ft, size, p + off, 0, a); break;
                default:
                    if (ft == ZARR_RAW && v2_field_is_string(f)) put_elem(b, K_FIXSTR, ft, size, p + off, 0, a);
                    else put_hex(b, p + off, size);
            }
        }
        if (n != 1) sb_puts(b, "]");
    }
    sb_puts(b, "}");
}

/* One element of a row buffer, as text. */
static void put_elem(struct sbuf *b, enum kind k, zarr_data_type t, size_t esize, const unsigned char *buf, size_t i,
                     zarr_array *a) {
    switch (k) {
        case K_BOOL:
            sb_puts(b, buf[i] ? "true" : "false");
            break;
        case K_INT: {
            sb_printf(b, "%lld", (long long)((const int64_t *)(const void *)buf)[i]);
            break;
        }
        case K_UINT: {
            sb_printf(b, "%llu", (unsigned long long)((const uint64_t *)(const void *)buf)[i]);
            break;
        }
        case K_FLOAT: {
            double x = ((const double *)(const void *)buf)[i];
            if (opt_json) put_float(b, x);
            else if (t == ZARR_FLOAT64 || t == ZARR_FLOAT32 || !isfinite(x)) fmt_float(b, x, t == ZARR_FLOAT32, 0);
            else sb_printf(b, "%.7g", x);
            break;
        }
        case K_COMPLEX: {
            const double *c = (const double *)(const void *)buf + 2 * i;
            if (opt_json) {
                sb_puts(b, "[");
                put_float(b, c[0]);
                sb_puts(b, ", ");
                put_float(b, c[1]);
                sb_puts(b, "]");
            } else {
                sb_puts(b, "(");
                fmt_float(b, c[0], t == ZARR_COMPLEX64, 0);
                sb_puts(b, ", ");
                fmt_float(b, c[1], t == ZARR_COMPLEX64, 0);
                sb_puts(b, ")");
            }
            break;
        }
        case K_FIXSTR: {
            const char *s = (const char *)buf + i * esize;
            size_t n = esize;
            while (n && !s[n - 1]) n--;
            put_text(b, s, n);
            break;
        }
        case K_UTF32: {
            struct sbuf u = {0};
            size_t n = esize / 4, j;
            const unsigned char *p = buf + i * esize;
            uint32_t c;
            while (n) {
                memcpy(&c, p + 4 * (n - 1), 4);
                if (c) break;
                n--;
            }
            sb_add(&u, "", 0);
            for (j = 0; j < n; j++) {
                memcpy(&c, p + 4 * j, 4);
                put_utf8(&u, c);
            }
            put_text(b, u.s, u.n);
            free(u.s);
            break;
        }
        case K_OPAQUE:
            if (t == ZARR_STRUCT) put_struct(b, a, buf + i * esize, esize);
            else put_hex(b, buf + i * esize, esize);
            break;
        case K_VLEN: break; /* read separately */
    }
}

/* Prints the values of region r of array a (to `out`, which the caller buffers): for --json a flat
 * list; in CDL the rows of `name = ... ;` (the caller printed "name ="), each row annotated with its
 * indices when `annotate`. Returns 0, or 1 after reporting a read error. */
static int print_values(zarr_array *a, const char *path, zarr_data_type t, size_t esize, int fixbytes,
                        const struct region *r, int level, int annotate) {
    zarr_data_type bt = t;
    enum kind k = fixbytes ? K_FIXSTR : kind_of(t, &bt);
    size_t rank = r->rank, d, elem = 8, nrows = 1, row;
    uint64_t idx[MAX_RANK], cnt[MAX_RANK], last = rank ? r->count[rank - 1] : 1;
    unsigned char *buf;
    int first = 1;
    zarr_status s;
    struct sbuf e = {0}, note = {0};
    /* CDL char (1-byte fixed-length strings: netCDF's char arrays): a row of the last dimension is one
     * string, as ncdump prints char data */
    int chars = !opt_json && k == K_FIXSTR && esize == 1 && rank > 0;

    if (fixbytes) bt = t;
    if (k == K_COMPLEX) elem = 16;
    else if (k == K_FIXSTR || k == K_UTF32 || k == K_OPAQUE) elem = esize;
    else if (k == K_BOOL) elem = 1;
    for (d = 0; d + 1 < rank; d++) nrows *= (size_t)r->count[d];
    for (d = 0; d < rank; d++)
        if (r->count[d] == 0) nrows = 0;
    buf = xmalloc((size_t)(last ? last : 1) * elem);
    if (opt_json) fputc('[', out);
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
        if (annotate) {
            note.n = 0;
            sb_puts(&note, " // [");
            for (d = 0; d < rank; d++) {
                if (d) sb_puts(&note, ", ");
                if (d + 1 < rank) sb_printf(&note, "%llu", (unsigned long long)idx[d]);
                else if (r->step[d] == 1)
                    sb_printf(&note, "%llu:%llu", (unsigned long long)idx[d], (unsigned long long)(idx[d] + last));
                else
                    sb_printf(&note, "%llu:%llu:%llu", (unsigned long long)idx[d],
                              (unsigned long long)(idx[d] + (last ? last - 1 : 0) * r->step[d] + 1),
                              (unsigned long long)r->step[d]);
            }
            sb_puts(&note, "]");
        }
        if (chars) {
            size_t n = (size_t)last;
            if ((s = zarr_read_hyperslab(a, idx, cnt, r->step, NULL, bt, buf, (size_t)(last ? last : 1))) != ZARR_OK) {
                free(buf), free(e.s), free(note.s);
                return report("reading", path, s);
            }
            while (n && !buf[n - 1]) n--;
            e.n = 0;
            sb_add(&e, "", 0);
            put_text(&e, (const char *)buf, n);
            lput(e.s, e.n, level, 0);
        }
        for (i = 0; i < (chars ? 0 : last); i++) {
            e.n = 0;
            sb_add(&e, "", 0);
            if (k == K_VLEN) {
                /* one element per call along a stepped dimension (vlen reads take dense regions) */
                zarr_vlen *v = NULL;
                const uint64_t *off;
                const uint8_t *data;
                size_t n = 0;
                uint64_t one[MAX_RANK], ones[MAX_RANK];
                memcpy(one, idx, rank * sizeof one[0]);
                if (rank) one[rank - 1] = idx[rank - 1] + i * r->step[rank - 1];
                for (d = 0; d < rank; d++) ones[d] = 1;
                if ((s = zarr_read_region_vlen(a, one, ones, &v)) != ZARR_OK) {
                    free(buf), free(e.s), free(note.s);
                    return report("reading", path, s);
                }
                zarr_vlen_view(v, &off, &data, &n);
                if (t == ZARR_STRING) put_text(&e, (const char *)data + off[0], (size_t)(off[1] - off[0]));
                else if (opt_json) put_hex(&e, data + off[0], (size_t)(off[1] - off[0]));
                else put_hex(&e, data + off[0], (size_t)(off[1] - off[0]));
                zarr_vlen_free(v);
            } else {
                if (i == 0 &&
                    (s = zarr_read_hyperslab(a, idx, cnt, r->step, NULL, bt, buf, (size_t)(last ? last : 1) * elem)) !=
                        ZARR_OK) {
                    free(buf), free(e.s), free(note.s);
                    return report("reading", path, s);
                }
                put_elem(&e, k, t, esize, buf, i, a);
            }
            if (opt_json) {
                if (!first) fputs(", ", out);
                fputs(e.s, out);
            } else {
                lput(e.s, e.n, level, i > 0);
            }
            first = 0;
        }
        if (!opt_json) {
            int lastrow = row + 1 == nrows;
            fputs(lastrow ? " ;" : ",", out);
            if (annotate) fputs(note.s, out);
            fputc('\n', out);
            if (!lastrow) {
                indent(level);
                fputs("  ", out);
            }
            col = 2 * level + 2;
        }
    }
    if (opt_json) fputc(']', out);
    free(buf);
    free(e.s);
    free(note.s);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* arrays                                                                                     */

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

/* What zarrdump needs of one array. */
struct var {
    char *name, *rel, *path;
    zarr_array *a;
    size_t rank, esize;
    uint64_t shape[MAX_RANK], chunks[MAX_RANK], inner[MAX_RANK], grid[MAX_RANK], total;
    char *dims[MAX_RANK]; /* dimension names; NULL where unnamed */
    int unlimited[MAX_RANK];
    zarr_data_type t;
    int fmt, sharded;
    int fixbytes; /* Zarr v2 |S<n> (libzarr's raw type r<8n>): shown as NUL-padded strings */
    char *meta, *attrs;
    long long stored; /* -2: not counted, -1: error */
};

static void free_var(struct var *v) {
    size_t d;
    for (d = 0; d < v->rank && d < MAX_RANK; d++) free(v->dims[d]);
    zarr_string_free(v->meta);
    zarr_string_free(v->attrs);
    if (v->a) zarr_close(v->a);
    free(v->name), free(v->rel), free(v->path);
}

/* Fills v from array a (taking ownership of a); returns 0, or 1 after reporting an error. */
static int load_var(struct var *v, zarr_array *a, const char *name, const char *rel, const char *path) {
    zarr_status s;
    size_t d, l;
    const char *p, *x;
    char *rec;
    memset(v, 0, sizeof *v);
    v->a = a;
    v->name = xstrdup(name), v->rel = xstrdup(rel), v->path = xstrdup(path);
    if ((s = zarr_array_rank(a, &v->rank)) != ZARR_OK || (v->rank > MAX_RANK && (s = ZARR_ERR_UNSUPPORTED)) ||
        (s = zarr_array_shape(a, v->shape, v->rank)) != ZARR_OK ||
        (s = zarr_array_chunk_shape(a, v->chunks, v->rank)) != ZARR_OK ||
        (s = zarr_array_inner_chunk_shape(a, v->inner, v->rank)) != ZARR_OK ||
        (s = zarr_array_grid_shape(a, v->grid, v->rank)) != ZARR_OK ||
        (s = zarr_array_is_sharded(a, &v->sharded)) != ZARR_OK ||
        (s = zarr_array_data_type(a, &v->t, &v->esize)) != ZARR_OK ||
        (s = zarr_array_zarr_format(a, &v->fmt)) != ZARR_OK || (s = zarr_array_metadata(a, &v->meta)) != ZARR_OK ||
        (s = zarr_array_attributes(a, &v->attrs)) != ZARR_OK) {
        if (v->rank > MAX_RANK) v->rank = 0;
        return report("inspecting", path, s);
    }
    if (v->fmt == 2 && v->t == ZARR_RAW && (p = member(v->meta, "dtype", &l)) != NULL && !strncmp(p, "\"|S", 3))
        v->fixbytes = 1;
    v->total = 1;
    for (d = 0; d < v->rank; d++) {
        v->total *= v->grid[d];
        char *n = NULL;
        if (v->fmt == 3 && zarr_array_dimension_name(a, d, &n) == ZARR_OK && n) {
            v->dims[d] = xstrdup(n);
            zarr_string_free(n);
        }
    }
    if (v->fmt == 2 && (p = member(v->attrs, "_ARRAY_DIMENSIONS", &l)) != NULL && *p++ == '[') {
        for (d = 0; d < v->rank && next_element(&p, &x, &l); d++)
            if (*x == '"') v->dims[d] = json_text(x, NULL);
    }
    if ((rec = hdf5_record(v->attrs)) != NULL && (p = member(rec, "unlimited_dimensions", &l)) != NULL &&
        *p++ == '[') {
        while (next_element(&p, &x, &l)) {
            long k = strtol(x, NULL, 10);
            if (k >= 0 && (size_t)k < v->rank) v->unlimited[k] = 1;
        }
    }
    free(rec);
    /* counted only where it is shown (one existence check per chunk) */
    v->stored = opt_count && (opt_json || opt_storage) ? count_stored(a, v->grid, v->rank, v->total) : -2;
    return 0;
}

/* The fill value of v as a number (f->has 0 for v2's null and for types that are not numbers). */
static void get_fill(const struct var *v, struct fill *f) {
    unsigned char b[16];
    size_t l;
    const char *m = member(v->meta, "fill_value", &l);
    memset(f, 0, sizeof *f);
    if (!m || !strncmp(m, "null", 4) || v->esize > sizeof b || zarr_array_fill_value(v->a, b, v->esize) != ZARR_OK)
        return;
    f->has = 1;
    switch (v->t) {
        case ZARR_BOOL: case ZARR_UINT8: f->u = b[0]; break;
        case ZARR_INT8: f->i = (int8_t)b[0]; break;
        case ZARR_INT16: { int16_t x; memcpy(&x, b, 2); f->i = x; break; }
        case ZARR_INT32: { int32_t x; memcpy(&x, b, 4); f->i = x; break; }
        case ZARR_INT64: case ZARR_DATETIME64: case ZARR_TIMEDELTA64: memcpy(&f->i, b, 8); break;
        case ZARR_UINT16: { uint16_t x; memcpy(&x, b, 2); f->u = x; break; }
        case ZARR_UINT32: { uint32_t x; memcpy(&x, b, 4); f->u = x; break; }
        case ZARR_UINT64: memcpy(&f->u, b, 8); break;
        case ZARR_FLOAT16: { uint16_t x; memcpy(&x, b, 2); f->d = half_to_double(x); break; }
        case ZARR_BFLOAT16: { uint16_t x; float y; uint32_t w; memcpy(&x, b, 2); w = (uint32_t)x << 16; memcpy(&y, &w, 4); f->d = y; break; }
        case ZARR_FLOAT32: { float x; memcpy(&x, b, 4); f->d = x; break; }
        case ZARR_FLOAT64: memcpy(&f->d, b, 8); break;
        default: f->has = 0;
    }
}

/* Prints v's fill value as the attribute _FillValue, typed as the array. */
static void put_fill_attr(int level, const struct var *v) {
    struct fill f;
    struct sbuf j = {0};
    size_t l;
    const char *m = member(v->meta, "fill_value", &l);
    const char *type = (size_t)v->t < sizeof DTYPE_NAMES / sizeof DTYPE_NAMES[0] ? DTYPE_NAMES[v->t] : NULL;
    if (!m || !strncmp(m, "null", 4)) return;
    get_fill(v, &f);
    if (f.has) {
        switch (v->t) {
            case ZARR_FLOAT16: case ZARR_BFLOAT16: case ZARR_FLOAT32: case ZARR_FLOAT64:
                if (isnan(f.d)) sb_puts(&j, "NaN");
                else if (isinf(f.d)) sb_puts(&j, f.d < 0 ? "-Infinity" : "Infinity");
                else sb_printf(&j, "%.17g", f.d);
                if (v->t != ZARR_FLOAT64) type = "float32";
                break;
            case ZARR_BOOL: case ZARR_UINT8: case ZARR_UINT16: case ZARR_UINT32: case ZARR_UINT64:
                sb_printf(&j, "%llu", (unsigned long long)f.u);
                break;
            case ZARR_DATETIME64: case ZARR_TIMEDELTA64: type = "int64"; /* fall through */
            default: sb_printf(&j, "%lld", (long long)f.i);
        }
    } else if (v->t == ZARR_STRING && *m == '"') {
        put_compact(&j, m, l);
        type = "string";
    } else if (v->t == ZARR_NULL_TERMINATED_BYTES || v->t == ZARR_FIXED_UTF32 || v->fixbytes) {
        unsigned char *b = xmalloc(v->esize);
        struct sbuf e = {0};
        if (zarr_array_fill_value(v->a, b, v->esize) == ZARR_OK) {
            int saved = opt_json;
            opt_json = 1; /* as a JSON string */
            put_elem(&e, v->t == ZARR_FIXED_UTF32 ? K_UTF32 : K_FIXSTR, v->t, v->esize, b, 0, v->a);
            opt_json = saved;
            sb_puts(&j, e.s);
        }
        free(e.s);
        free(b);
        type = v->esize == 1 ? "char" : "string";
    } else if (v->t == ZARR_STRUCT) {   /* by field, as ncdump prints a compound: {1, 2.5, "name"} */
        unsigned char *b = xmalloc(v->esize);
        int ok = zarr_array_fill_value(v->a, b, v->esize) == ZARR_OK;
        size_t dl;
        const char *saved = cur_v2_dtype;
        cur_v2_dtype = v->fmt == 2 ? member(v->meta, "dtype", &dl) : NULL;   /* v2 |S<n> fields as text */
        if (ok) put_struct(&j, v->a, b, v->esize);
        cur_v2_dtype = saved;
        free(b);
        if (ok && j.s) {
            indent(level);
            fprintf(out, "\t\t%s:_FillValue = %s ;\n", nm(v->name), j.s);
        }
        free(j.s);
        return;
    } else {
        put_compact(&j, m, l);
        type = NULL;
    }
    if (j.s) put_attr(level, v->name, "_FillValue", j.s, j.n, type);
    free(j.s);
}

/* ------------------------------------------------------------------------------------------ */
/* dimensions                                                                                 */

struct dim {
    char *name, *user; /* user: the first array giving the size, NULL for the group's record */
    uint64_t size;
    int unlimited;
};

struct scope {
    struct dim *d;
    size_t n;
    const struct scope *parent;
    struct sbuf notes; /* CDL comments about conflicting sizes */
};

static struct dim *scope_find(const struct scope *s, const char *name) {
    size_t i;
    for (i = 0; i < s->n; i++)
        if (!strcmp(s->d[i].name, name)) return &s->d[i];
    return NULL;
}

static struct dim *scope_add(struct scope *s, const char *name, uint64_t size, int unlimited, const char *user) {
    struct dim *g = realloc(s->d, (s->n + 1) * sizeof *s->d);
    if (!g) oom();
    s->d = g;
    g = &s->d[s->n++];
    g->name = xstrdup(name);
    g->user = user ? xstrdup(user) : NULL;
    g->size = size;
    g->unlimited = unlimited;
    return g;
}

static void scope_free(struct scope *s) {
    size_t i;
    for (i = 0; i < s->n; i++) free(s->d[i].name), free(s->d[i].user);
    free(s->d);
    free(s->notes.s);
}

/* The name of dimension d of v (its name, or _Anonymous_Dim_N). */
static const char *dim_name(const struct var *v, size_t d, char *tmp, size_t tmplen) {
    if (v->dims[d]) return v->dims[d];
    snprintf(tmp, tmplen, "_Anonymous_Dim_%llu", (unsigned long long)v->shape[d]);
    return tmp;
}

/* Declares in s the dimensions of the group's record (group_attrs' _libzarr_hdf5.dimensions) and those
 * the arrays use that no enclosing scope declares with the same size. */
static void scope_build(struct scope *s, const char *group_attrs, const struct var *vars, size_t nvars) {
    size_t l, vl, i, d;
    char *h = hdf5_record(group_attrs);
    const char *rec = h ? member(h, "dimensions", &l) : NULL;
    const char *p = rec, *k, *v;
    while (rec && next_member(&p, &k, &v, &vl)) {
        char *name = json_text(k, NULL);
        const char *x = member(v, "size", &l), *u = member(v, "unlimited", &l);
        if (x && is_number(x) && !scope_find(s, name))
            scope_add(s, name, strtoull(x, NULL, 10), u && !strncmp(u, "true", 4), NULL);
        free(name);
    }
    for (i = 0; i < nvars; i++)
        for (d = 0; d < vars[i].rank; d++) {
            char tmp[64];
            const char *name = dim_name(&vars[i], d, tmp, sizeof tmp);
            struct dim *g = scope_find(s, name);
            const struct scope *up;
            const struct dim *a = NULL;
            if (g) {
                if (!g->user) { /* the record's size: the arrays' current size wins */
                    g->size = vars[i].shape[d];
                    g->user = xstrdup(vars[i].name);
                } else if (g->size != vars[i].shape[d]) {
                    sb_printf(&s->notes, "\t// dimension %s: size %llu in ", nm(name), (unsigned long long)vars[i].shape[d]);
                    sb_puts(&s->notes, vars[i].name);
                    sb_printf(&s->notes, ", %llu in ", (unsigned long long)g->size);
                    sb_puts(&s->notes, g->user);
                    sb_puts(&s->notes, "\n");
                }
                g->unlimited |= vars[i].unlimited[d];
                continue;
            }
            for (up = s->parent; up && !a; up = up->parent) a = scope_find(up, name);
            if (a && a->size == vars[i].shape[d]) continue;
            scope_add(s, name, vars[i].shape[d], vars[i].unlimited[d], vars[i].name);
        }
    free(h);
}

/* ------------------------------------------------------------------------------------------ */
/* CDL                                                                                        */

static int is_coordinate(const struct var *v) {
    size_t d;
    for (d = 0; d < v->rank; d++)
        if (v->dims[d] && !strcmp(v->dims[d], v->name)) return 1;
    return 0;
}

static int wants_values(const struct var *v) {
    if (opt_header) return 0;
    if (!opt_nvars && !opt_coord) return 1;
    return (opt_nvars && selected(v->rel)) || (opt_coord && is_coordinate(v));
}

static void put_sizes(int level, const char *var, const char *att, const uint64_t *v, size_t n) {
    size_t d;
    indent(level);
    fprintf(out, "\t\t%s:%s = ", nm(var), att);
    for (d = 0; d < n; d++) fprintf(out, "%s%llu", d ? ", " : "", (unsigned long long)v[d]);
    fputs(" ;\n", out);
}

static void put_json_attr(int level, const char *var, const char *att, const char *meta, const char *key) {
    size_t l = 0;
    const char *m = member(meta, key, &l);
    struct sbuf j = {0}, c = {0};
    if (m) put_compact(&j, m, l);
    else sb_puts(&j, "null");
    cdl_string(&c, j.s, j.n);
    indent(level);
    fprintf(out, "\t\t%s:%s = %s ;\n", nm(var), att, c.s);
    free(j.s);
    free(c.s);
}

/* For an array holding an HDF5 enum's integers (_libzarr_hdf5.enum), a comment naming the members:
 * `// enum: RED = 0, GREEN = 1`. */
static void put_enum_note(int level, const struct var *v) {
    size_t l, vl;
    char *h = hdf5_record(v->attrs);
    const char *e = h ? member(h, "enum", &l) : NULL;
    const char *m = e ? member(e, "members", &l) : NULL, *p = m, *k, *x;
    int first = 1;
    if (!m || *m != '{') {
        free(h);
        return;
    }
    indent(level);
    fputs("\t\t// enum:", out);
    while (next_member(&p, &k, &x, &vl)) {
        char *name = json_text(k, NULL);
        struct sbuf n = {0};
        put_compact(&n, x, vl);
        fprintf(out, "%s %s = %s", first ? "" : ",", name, n.s ? n.s : "");
        first = 0;
        free(n.s);
        free(name);
    }
    fputc('\n', out);
    free(h);
}

/* 1-byte fixed-length strings (v2 |S1, v3 null_terminated_bytes of 1 byte): netCDF's char arrays, which
 * NCZarr also reads as char. */
static int is_char(const struct var *v) {
    return v->esize == 1 && (v->fixbytes || v->t == ZARR_NULL_TERMINATED_BYTES);
}

/* The name of the named type of v (its record's `named_type`, the last component of the path; caller
 * frees), or NULL. */
static char *named_type_of(const struct var *v) {
    size_t l;
    char *h = hdf5_record(v->attrs), *name = NULL;
    const char *p = h ? member(h, "named_type", &l) : NULL;
    if (p && *p == '"') {
        char *path = json_text(p, NULL), *slash = strrchr(path, '/');
        name = xstrdup(slash ? slash + 1 : path);
        free(path);
    }
    free(h);
    return name;
}

static void cdl_declare(int level, const struct var *v) {
    size_t d;
    int has_fill = 0;
    char *named = named_type_of(v);
    indent(level);
    fputc('\t', out);
    if (named && *named) fputs(nm(named), out);
    else if (is_char(v)) fputs("char", out);
    else if (v->fixbytes) fputs("string", out);
    else put_cdl_type(v->t, v->esize);
    free(named);
    fprintf(out, " %s", nm(v->name));
    for (d = 0; d < v->rank; d++) {
        char tmp[64];
        fprintf(out, "%s%s", d ? ", " : "(", nm(dim_name(v, d, tmp, sizeof tmp)));
    }
    fputs(v->rank ? ") ;\n" : " ;\n", out);
    put_attrs(level, v->name, v->attrs, &has_fill,
              (size_t)v->t < sizeof DTYPE_NAMES / sizeof DTYPE_NAMES[0] ? DTYPE_NAMES[v->t] : NULL);
    if (!has_fill) put_fill_attr(level, v);
    put_enum_note(level, v);
    if (opt_storage) {
        if (v->rank) put_sizes(level, v->name, "_ChunkSizes", v->sharded ? v->inner : v->chunks, v->rank);
        if (v->sharded) put_sizes(level, v->name, "_ShardSizes", v->chunks, v->rank);
        if (v->fmt == 3) put_json_attr(level, v->name, "_Codecs", v->meta, "codecs");
        else {
            put_json_attr(level, v->name, "_Filters", v->meta, "filters");
            put_json_attr(level, v->name, "_Compressor", v->meta, "compressor");
        }
        if (v->stored >= 0) {
            indent(level);
            fprintf(out, "\t\t%s:_StoredChunks = %lld ; // %s, of %llu in the grid\n", nm(v->name), v->stored,
                    v->sharded ? "shards" : "chunks", (unsigned long long)v->total);
        }
    }
}

/* Prints `name = values ;` for v, or a note; the values are buffered so that a read error leaves no
 * half-printed line. */
static void cdl_values_of(int level, const struct var *v) {
    struct region r;
    size_t d, dl;
    int rc;
    char *mb = NULL;
    size_t ml = 0;
    FILE *m;
    if (opt_region && region_rank(opt_region) != v->rank) {
        fputc('\n', out);
        indent(level);
        fprintf(out, " // %s: not shown (the region has %llu dimensions, the array %llu)\n", v->name,
                (unsigned long long)region_rank(opt_region), (unsigned long long)v->rank);
        return;
    }
    if ((rc = opt_region ? parse_region(opt_region, v->shape, v->rank, &r) : 0) != 0) {
        fflush(stdout);
        fprintf(stderr, "zarrdump: %s: region '%s' %s\n", v->path, opt_region,
                rc == -2 ? "has an index outside the shape" : "is malformed (see --help)");
        failed = 1;
        return;
    }
    if (!opt_region) {
        r.rank = v->rank;
        for (d = 0; d < v->rank; d++) r.start[d] = 0, r.count[d] = v->shape[d], r.step[d] = 1;
    }
    for (d = 0; d < r.rank; d++)
        if (r.count[d] == 0) return; /* nothing to show */
    if (!(m = open_memstream(&mb, &ml))) oom();
    out = m;
    fputc('\n', out);
    indent(level);
    fprintf(out, " %s =", nm(v->name));
    if (r.rank <= 1) {
        fputc(' ', out);
        col = 2 * level + (int)strlen(v->name) + 4;
    } else {
        fputc('\n', out);
        indent(level);
        fputs("  ", out);
        col = 2 * level + 2;
    }
    cur_v2_dtype = v->fmt == 2 ? member(v->meta, "dtype", &dl) : NULL;
    rc = print_values(v->a, v->path, v->t, v->esize, v->fixbytes, &r, level, opt_region != NULL);
    fclose(m);
    out = stdout;
    if (rc == 0) fwrite(mb, 1, ml, out);
    free(mb);
}

static int attrs_visible(const char *attrs) {
    const char *p = attrs, *k, *v;
    size_t vl;
    while (next_member(&p, &k, &v, &vl))
        if (!json_is(k, "_libzarr_hdf5") && !json_is(k, "_ARRAY_DIMENSIONS")) return 1;
    return 0;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const struct var *)a)->name, ((const struct var *)b)->name);
}

/* The CDL name of a number type as attribute_types and named_types records write it ("int32" -> "int"). */
static const char *cdl_type_name(const char *zarr_name) {
    static const char *const map[][2] = {{"int8", "byte"},     {"int16", "short"},   {"int32", "int"},
                                         {"int64", "int64"},   {"uint8", "ubyte"},   {"uint16", "ushort"},
                                         {"uint32", "uint"},   {"uint64", "uint64"}, {"float32", "float"},
                                         {"float64", "double"}};
    size_t k;
    for (k = 0; k < sizeof map / sizeof map[0]; k++)
        if (!strcmp(zarr_name, map[k][0])) return map[k][1];
    return zarr_name;
}

/* Prints the `types:` section of a group whose record has `named_types` (as h5tozarr writes netCDF-4's
 * user-defined types), as ncdump prints it: `ubyte enum cloud_t {clear = 0, cumulus = 1} ;` and
 * `compound station_t { int id ; ... }; // station_t`. A field of an unnamed enum or compound type shows
 * as `enum` or `compound`, a named number type as a comment. */
static void put_types(int level, const char *group_attrs) {
    size_t l, vl, fl;
    char *h = hdf5_record(group_attrs);
    const char *types = h ? member(h, "named_types", &l) : NULL, *p = types, *k, *v;
    if (!types || *types != '{' || *skip_ws(types + 1) == '}') {
        free(h);
        return;
    }
    indent(level);
    fputs("types:\n", out);
    while (next_member(&p, &k, &v, &vl)) {
        char *name = json_text(k, NULL);
        const char *en = member(v, "enum", &l), *cmp = member(v, "compound", &l);
        indent(level);
        if (en) {
            const char *base = member(en, "base", &l), *m = member(en, "members", &l), *q = m, *mk, *mv;
            char *b = base && *base == '"' ? json_text(base, NULL) : xstrdup("int");
            int first = 1;
            fprintf(out, "  %s enum %s {", cdl_type_name(b), nm(name));
            while (m && *m == '{' && next_member(&q, &mk, &mv, &fl)) {
                char *mname = json_text(mk, NULL);
                fprintf(out, "%s%s = %.*s", first ? "" : ", ", nm(mname), (int)fl, mv);
                first = 0;
                free(mname);
            }
            fputs("} ;\n", out);
            free(b);
        } else if (cmp && *cmp == '[') {
            const char *q = cmp + 1, *f;
            fprintf(out, "  compound %s {\n", nm(name));
            while (next_element(&q, &f, &fl)) {
                const char *fq = f + 1, *fname = NULL, *ftype = NULL;
                size_t tl = 0;
                if (*f == '[' && next_element(&fq, &fname, &tl) && next_element(&fq, &ftype, &tl) && *fname == '"') {
                    char *fn = json_text(fname, NULL), *tn = *ftype == '"' ? json_text(ftype, NULL) : NULL;
                    const char *shown = tn ? cdl_type_name(tn) : member(ftype, "enum", &l) ? "enum" : "compound";
                    indent(level);
                    fprintf(out, "    %s %s ;\n", shown, nm(fn));
                    free(fn);
                    free(tn);
                }
            }
            indent(level);
            fprintf(out, "  }; // %s\n", nm(name));
        } else if (*v == '"') {
            char *tn = json_text(v, NULL);
            fprintf(out, "  // %s: a named %s type\n", nm(name), cdl_type_name(tn));
            free(tn);
        }
        free(name);
    }
    free(h);
}

/* Prints a group (g) or a lone array (lone, when PATH is an array) in CDL. */
static void cdl_node(zarr_group *g, struct var *lone, const char *path, const char *rel, const char *name, int level,
                     const struct scope *parent) {
    char *attrs = NULL;
    int fmt = 0;
    zarr_node_list *list = NULL;
    size_t n = 0, i, nvars = 0, ngroups = 0;
    struct var *vars = NULL;
    char **groups = NULL;
    struct scope s = {0};
    zarr_status st;
    int any_values = 0;

    if (g) {
        if ((st = zarr_group_zarr_format(g, &fmt)) != ZARR_OK || (st = zarr_group_attributes(g, &attrs)) != ZARR_OK ||
            (st = zarr_group_list(g, &list)) != ZARR_OK || (st = zarr_node_list_size(list, &n)) != ZARR_OK) {
            report("inspecting", path, st);
            zarr_string_free(attrs);
            zarr_node_list_free(list);
            return;
        }
        vars = xmalloc(n * sizeof *vars);
        groups = xmalloc(n * sizeof *groups);
        for (i = 0; i < n; i++) {
            const char *cname = NULL;
            zarr_node_type type;
            char *crel, *cpath;
            if (zarr_node_list_get(list, i, &cname, &type) != ZARR_OK) continue;
            crel = xmalloc(strlen(rel) + strlen(cname) + 2);
            cpath = xmalloc(strlen(path) + strlen(cname) + 2);
            sprintf(crel, "%s%s%s", rel, *rel ? "/" : "", cname);
            sprintf(cpath, "%s/%s", path, cname);
            if (type == ZARR_NODE_ARRAY) {
                zarr_array *a = NULL;
                if ((st = zarr_group_open_array(g, cname, &a)) != ZARR_OK) report("opening", cpath, st);
                else if (load_var(&vars[nvars], a, cname, crel, cpath) != 0) free_var(&vars[nvars]);
                else nvars++;
            } else {
                groups[ngroups++] = xstrdup(cname);
            }
            free(crel);
            free(cpath);
        }
        qsort(vars, nvars, sizeof *vars, by_name);
    } else {
        vars = lone;
        nvars = 1;
        fmt = lone->fmt;
    }
    s.parent = parent;
    scope_build(&s, attrs, vars, nvars);

    indent(level - (level > 0));
    if (level == 0) fprintf(out, "netcdf %s {\n", nm(name));
    else fprintf(out, "group: %s {\n", nm(name));
    if (attrs) put_types(level, attrs);
    if (s.n) {
        indent(level);
        fputs("dimensions:\n", out);
        for (i = 0; i < s.n; i++) {
            indent(level);
            if (s.d[i].unlimited)
                fprintf(out, "\t%s = UNLIMITED ; // (%llu currently)\n", nm(s.d[i].name), (unsigned long long)s.d[i].size);
            else fprintf(out, "\t%s = %llu ;\n", nm(s.d[i].name), (unsigned long long)s.d[i].size);
        }
        if (s.notes.s) {
            indent(level);
            fputs(s.notes.s, out);
        }
    }
    if (nvars) {
        indent(level);
        fputs("variables:\n", out);
        for (i = 0; i < nvars; i++) cdl_declare(level, &vars[i]);
    }
    if ((attrs && attrs_visible(attrs)) || (opt_storage && level == 0)) {
        fputc('\n', out);
        indent(level);
        fputs(level ? "// group attributes:\n" : "// global attributes:\n", out);
        if (attrs) put_attrs(level, "", attrs, NULL, NULL);
        if (opt_storage && level == 0) {
            indent(level);
            fprintf(out, "\t\t:_ZarrFormat = %d ;\n", fmt);
        }
    }
    for (i = 0; i < nvars; i++) any_values |= wants_values(&vars[i]);
    if (any_values) {
        indent(level);
        fputs("data:\n", out);
        for (i = 0; i < nvars; i++)
            if (wants_values(&vars[i])) cdl_values_of(level, &vars[i]);
    }
    for (i = 0; i < ngroups; i++) {
        zarr_group *c = NULL;
        char *crel = xmalloc(strlen(rel) + strlen(groups[i]) + 2), *cpath = xmalloc(strlen(path) + strlen(groups[i]) + 2);
        sprintf(crel, "%s%s%s", rel, *rel ? "/" : "", groups[i]);
        sprintf(cpath, "%s/%s", path, groups[i]);
        fputc('\n', out);
        if ((st = zarr_group_open_group(g, groups[i], &c)) != ZARR_OK) {
            report("opening", cpath, st);
        } else {
            cdl_node(c, NULL, cpath, crel, groups[i], level + 1, &s);
            zarr_group_close(c);
        }
        free(crel), free(cpath), free(groups[i]);
    }
    indent(level);
    if (level == 0) fputs("}\n", out);
    else fprintf(out, "} // group %s\n", nm(name));
    if (g) {
        for (i = 0; i < nvars; i++) free_var(&vars[i]);
        free(vars);
    }
    free(groups);
    scope_free(&s);
    zarr_string_free(attrs);
    zarr_node_list_free(list);
}

/* ------------------------------------------------------------------------------------------ */
/* JSON                                                                                       */

static void json_array(struct var *v) {
    size_t d;
    int any = 0;
    fputs("{\"node_type\": \"array\", \"path\": ", out);
    put_json_string(v->rel, strlen(v->rel));
    fprintf(out, ", \"zarr_format\": %d, \"shape\": ", v->fmt);
    put_dims(v->shape, v->rank);
    fputs(", \"data_type\": \"", out);
    put_dtype(v->t, v->esize);
    fputs("\", \"chunk_shape\": ", out);
    put_dims(v->sharded ? v->inner : v->chunks, v->rank);
    fputs(", \"shard_shape\": ", out);
    if (v->sharded) put_dims(v->chunks, v->rank);
    else fputs("null", out);
    fputs(", \"grid_shape\": ", out);
    put_dims(v->grid, v->rank);
    fprintf(out, ", \"chunks_total\": %llu, \"chunks_stored\": ", (unsigned long long)v->total);
    if (v->stored >= 0) fprintf(out, "%lld", v->stored);
    else fputs("null", out);
    fputs(", \"dimension_names\": ", out);
    for (d = 0; d < v->rank; d++) any |= v->dims[d] != NULL;
    if (!any || v->fmt != 3) { /* as stored: v2 keeps _ARRAY_DIMENSIONS in its attributes */
        fputs("null", out);
    } else {
        fputc('[', out);
        for (d = 0; d < v->rank; d++) {
            if (d) fputs(", ", out);
            if (v->dims[d]) put_json_string(v->dims[d], strlen(v->dims[d]));
            else fputs("null", out);
        }
        fputc(']', out);
    }
    if (v->fmt == 3) {
        fputs(", \"codecs\": ", out);
        put_member(v->meta, "codecs", "null");
    } else {
        fputs(", \"filters\": ", out);
        put_member(v->meta, "filters", "null");
        fputs(", \"compressor\": ", out);
        put_member(v->meta, "compressor", "null");
    }
    fputs(", \"fill_value\": ", out);
    put_member(v->meta, "fill_value", "null");
    fputs(", \"attributes\": ", out);
    fputs(v->attrs, out);

    if ((opt_region || opt_nvars) && (!*v->rel || selected(v->rel))) {
        struct region r;
        int rc;
        if (opt_region && region_rank(opt_region) != v->rank) {
            fputs(", \"data\": null", out);
        } else if ((rc = opt_region ? parse_region(opt_region, v->shape, v->rank, &r) : 0) != 0) {
            fflush(stdout);
            fprintf(stderr, "zarrdump: %s: region '%s' %s\n", v->path, opt_region,
                    rc == -2 ? "has an index outside the shape" : "is malformed (see --help)");
            failed = 1;
            fputs(", \"data\": null", out);
        } else {
            char *mb = NULL;
            size_t ml = 0, dl;
            FILE *m;
            if (!opt_region) {
                r.rank = v->rank;
                for (d = 0; d < v->rank; d++) r.start[d] = 0, r.count[d] = v->shape[d], r.step[d] = 1;
            }
            fputs(", \"data\": {\"start\": ", out);
            put_dims(r.start, v->rank);
            fputs(", \"count\": ", out);
            put_dims(r.count, v->rank);
            fputs(", \"step\": ", out);
            put_dims(r.step, v->rank);
            fputs(", \"values\": ", out);
            if (!(m = open_memstream(&mb, &ml))) oom();
            out = m;
            cur_v2_dtype = v->fmt == 2 ? member(v->meta, "dtype", &dl) : NULL;
            rc = print_values(v->a, v->path, v->t, v->esize, v->fixbytes, &r, 0, 0);
            fclose(m);
            out = stdout;
            if (rc == 0) fwrite(mb, 1, ml, out);
            else fputs("null", out);
            free(mb);
            fputc('}', out);
        }
    }
    fputc('}', out);
}

static void json_group(zarr_group *g, const char *path, const char *rel) {
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
        fputs("null", out);
        return;
    }
    fputs("{\"node_type\": \"group\", \"path\": ", out);
    put_json_string(rel, strlen(rel));
    fprintf(out, ", \"zarr_format\": %d, \"attributes\": %s, \"children\": [", fmt, attrs);
    zarr_string_free(attrs);
    for (i = 0; i < n; i++) {
        const char *name = NULL;
        zarr_node_type type;
        char *child_rel, *child_path;
        if (zarr_node_list_get(list, i, &name, &type) != ZARR_OK) continue;
        child_rel = xmalloc(strlen(rel) + strlen(name) + 2);
        child_path = xmalloc(strlen(path) + strlen(name) + 2);
        sprintf(child_rel, "%s%s%s", rel, *rel ? "/" : "", name);
        sprintf(child_path, "%s/%s", path, name);
        if (type == ZARR_NODE_ARRAY) {
            zarr_array *a = NULL;
            struct var v;
            if (selected(child_rel)) {
                if ((s = zarr_group_open_array(g, name, &a)) != ZARR_OK) {
                    report("opening", child_path, s);
                } else if (load_var(&v, a, name, child_rel, child_path) == 0) {
                    if (!first) fputs(", ", out);
                    first = 0;
                    json_array(&v);
                    free_var(&v);
                } else {
                    free_var(&v);
                }
            }
        } else {
            zarr_group *c = NULL;
            if ((s = zarr_group_open_group(g, name, &c)) != ZARR_OK) {
                report("opening", child_path, s);
            } else {
                if (!first) fputs(", ", out);
                first = 0;
                json_group(c, child_path, child_rel);
                zarr_group_close(c);
            }
        }
        free(child_rel);
        free(child_path);
    }
    zarr_node_list_free(list);
    fputs("]}", out);
}

/* ------------------------------------------------------------------------------------------ */
/* main                                                                                       */

static int usage_error(const char *msg) {
    fprintf(stderr, "zarrdump: %s (zarrdump --help for usage)\n", msg);
    return 2;
}

/* The dataset name CDL's first line shows: PATH's last component without its extension. */
static char *base_name(const char *path) {
    char *s = xstrdup(path), *b, *dot;
    size_t n = strlen(s);
    while (n > 1 && s[n - 1] == '/') s[--n] = 0;
    b = strrchr(s, '/');
    b = b ? b + 1 : s;
    if ((dot = strrchr(b, '.')) != NULL && dot != b) *dot = 0;
    memmove(s, b, strlen(b) + 1);
    return s;
}

/* Checks every -v NAME names an array under PATH (a group) or is PATH's own name (an array). */
static int check_vars(const char *path, const char *shown, zarr_node_type type) {
    size_t i;
    for (i = 0; i < opt_nvars; i++) {
        const char *name = opt_vars[i];
        zarr_node_type t;
        int ok;
        while (*name == '/') name++;
        opt_vars[i] = (char *)name;
        if (type == ZARR_NODE_ARRAY) {
            char *b = base_name(shown), *full = xstrdup(shown), *dot;
            size_t n = strlen(full);
            while (n > 1 && full[n - 1] == '/') full[--n] = 0;
            dot = strrchr(full, '/');
            ok = !strcmp(name, dot ? dot + 1 : full) || !strcmp(name, b);
            free(b), free(full);
        } else {
            char *p = xmalloc(strlen(path) + strlen(name) + 2);
            sprintf(p, "%s/%s", path, name);
            ok = *name && zarr_node_type_at(p, &t) == ZARR_OK && t == ZARR_NODE_ARRAY;
            free(p);
        }
        if (!ok) {
            fprintf(stderr, "zarrdump: -v %s: no array '%s' in %s\n", opt_vars[i], name, shown);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *path = NULL;
    char *shown = NULL;
    zarr_node_type type;
    zarr_status s;
    int i;
    char *vars = NULL;

    out = stdout;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help")) {
            const char *const *u;
            for (u = USAGE; *u; u++) fputs(*u, stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("zarrdump (libzarr %s)\n", zarr_version());
            return 0;
        } else if (!strcmp(a, "-h")) {
            opt_header = 1;
        } else if (!strcmp(a, "-c")) {
            opt_coord = 1;
        } else if (!strcmp(a, "-s")) {
            opt_storage = 1;
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
            free(opt_vars);
            opt_vars = NULL;
            opt_nvars = 0;
            vars = xstrdup(argv[i]);
            for (p = vars; (tok = strtok(p, ",")) != NULL; p = NULL) {
                char **grown = realloc(opt_vars, (opt_nvars + 1) * sizeof *opt_vars);
                if (!grown) return 1;
                opt_vars = grown;
                opt_vars[opt_nvars++] = tok;
            }
            if (!opt_nvars) return usage_error("-v needs a NAME");
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
    if (opt_header && (opt_coord || opt_nvars || opt_region) && !opt_json)
        return usage_error("-h prints no values: it does not go with -c, -v or -d");
    /* What is printed of PATH: a URL's password and signature parameters masked by ***. */
    if (zarr_location_redacted(path, &shown) != ZARR_OK) return report("reading", "PATH", ZARR_ERR_INVALID_ARGUMENT);
    if ((s = zarr_node_type_at(path, &type)) != ZARR_OK) return report("reading", shown, s);
    if (check_vars(path, shown, type)) return 1;
    if (type == ZARR_NODE_ARRAY) {
        zarr_array *a = NULL;
        struct var v;
        char *name = base_name(shown);
        if ((s = zarr_open(path, ZARR_READ, &a)) != ZARR_OK) return report("opening", shown, s);
        if (load_var(&v, a, name, "", path) == 0) {
            if (opt_json) json_array(&v);
            else {
                if (opt_nvars) { /* the array's own name selects it */
                    free(v.rel);
                    v.rel = xstrdup(opt_vars[0]);
                }
                cdl_node(NULL, &v, path, "", name, 0, NULL);
            }
        }
        free_var(&v);
        free(name);
    } else {
        zarr_group *g = NULL;
        char *name = base_name(shown);
        if ((s = zarr_group_open(path, ZARR_READ, &g)) != ZARR_OK) return report("opening", shown, s);
        if (opt_json) json_group(g, path, "");
        else cdl_node(g, NULL, path, "", name, 0, NULL);
        zarr_group_close(g);
        free(name);
    }
    zarr_string_free(shown);
    if (opt_json) putchar('\n');
    free(opt_vars);
    free(vars);
    return failed;
}
