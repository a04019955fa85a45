/* h5tozarr: converts an HDF5 file (netCDF-4 included) into a Zarr hierarchy (groups, datasets, attributes,
 * dimension names), chunk by chunk. See usage() for the rules and docs/hdf5-netcdf.md ("Conventions") for
 * what is recorded where. */
#define _XOPEN_SOURCE 700
#include <signal.h>
#include <sys/stat.h>
#include "h5zcommon.h"
#include "h5z_output.h"
#include "h5z_dimscales.h"
#include "h5tozarr_named_types.h"

static const char *USAGE_HEAD =
    "usage: h5tozarr [options] FILE.h5 OUT.zarr\n"
    "       h5tozarr --virtual [options] FILE.h5 OUT.json|OUT.parq|icechunk://REPO[!/NODE][?branch=B]\n"
    "\n"
    "Converts every group, dataset and attribute of an HDF5 file (netCDF-4 files included) into a new Zarr\n"
    "hierarchy at OUT.zarr, whose parent directory must exist. The output is written under a temporary\n"
    "name next to OUT.zarr and renamed into place at the end: after a failure or an interruption (SIGINT,\n"
    "SIGTERM, SIGHUP) nothing is left behind; what a run killed by SIGKILL left (.h5tozarr-tmp-HOST-PID-\n"
    "OUT.zarr) the next run for OUT.zarr on that host removes.\n"
    "\n"
    "options:\n"
    "  --format 2|3        Zarr format of the output (default 3)\n";
/* then the --codec line, which lists libzarr's compressors (usage()) */
static const char *USAGE_TAIL =
    "                      (blosc with byte shuffle, none for 1-byte and variable-length elements);\n"
    "                      LVL: the codec's level (default: libzarr's for that codec). Without --codec:\n"
    "                      from the HDF5 filters, deflate -> gzip at the same level, deflate + shuffle ->\n"
    "                      blosc-zlib with shuffle at the same level, no filter -> none, any other filter\n"
    "                      -> gzip level 5\n"
    "  --shard S0,S1,...   (format 3) store each array in shards of this shape, the HDF5 chunks becoming\n"
    "                      the inner chunks; a shard dimension is rounded up to a multiple of the chunk\n"
    "                      and, for arrays of another rank, sharding is left out\n"
    "  --struct-type T     (format 3) the data type of compounds: structured (default; zarr-python 3.1\n"
    "                      reads and writes it, 3.4 reads it) or struct (the zarr-extensions name that\n"
    "                      zarr-python 3.4 writes; 3.1 cannot read it, and then cannot list the group)\n"
    "  --skip-unsupported  leave out what has no Zarr form (a message names each); without it, that is\n"
    "                      an error (exit status 2) and nothing is written\n"
    "  --overwrite         replace OUT.zarr if it is a Zarr hierarchy (a directory with zarr.json, .zgroup\n"
    "                      or .zarray); atomically: it stays intact if the conversion fails. Never the\n"
    "                      input, a directory holding it, a link, another directory or another file\n";
static const char *USAGE_VIRTUAL =
    "  --virtual           write kerchunk references (version 1) to OUT instead of a copy: a Zarr v2\n"
    "                      hierarchy whose chunks are byte ranges of FILE.h5 (HDF5's filters as numcodecs\n"
    "                      zlib / shuffle / fletcher32; compact datasets and small variable-length\n"
    "                      strings copied in; docs/reference-stores.md). OUT.json: kerchunk JSON;\n"
    "                      OUT.parq or .parquet: the Parquet layout (a directory). --overwrite then\n"
    "                      replaces only a kerchunk JSON file / a Parquet reference directory\n"
    "  --parquet           (--virtual) the Parquet layout whatever OUT's name\n"
    "  --record-size N     (--parquet) references a Parquet record file (default 10000)\n"
    "  --target-url URL    (--virtual) the URL the references name (default: FILE.h5's absolute path),\n"
    "                      e.g. where the file will be served (https://..., s3://...)\n"
    "  icechunk://REPO     (--virtual) OUT as an Icechunk repository on the local filesystem (created if\n"
    "                      it does not exist; branch main or ?branch=B; a node !/NODE): the arrays as\n"
    "                      Zarr v3 whose chunks are virtual chunk references into FILE.h5, committed as\n"
    "                      one snapshot. The repository gets a virtual chunk container for FILE.h5's\n"
    "                      directory (file:///DIR/); readers authorize it (docs/icechunk.md). The node\n"
    "                      must be empty; --overwrite replaces it in the commit\n"
    "  --message TEXT      (icechunk://) the commit message (default: h5tozarr --virtual FILE.h5)\n"
    "  -q, --quiet         no progress line (it is shown only when stderr is a terminal)\n"
    "  --version           the versions of libzarr and HDF5 and how --virtual lists chunks\n"
    "  -h, --help          this text\n"
    "\n";
/* then what is converted (one literal would pass the 4095 characters C99 compilers must take) */
static const char *USAGE_CONVERTED =
    "What is converted:\n"
    "  groups     recursively, with their attributes. Soft and external links have no Zarr form (see\n"
    "             --skip-unsupported). Named (committed) enum, compound and number types (netCDF-4's\n"
    "             user-defined types) are recorded in the group's _libzarr_hdf5.named_types, and the\n"
    "             datasets and attributes of such a type name it (named_type); other named types have\n"
    "             no Zarr form.\n"
    "  datasets   integers of 1, 2, 4, 8 bytes (signed, unsigned), floats of 2, 4 and 8 bytes, h5py's\n"
    "             boolean enum; either byte order, stored little-endian; fixed-length strings as Zarr\n"
    "             null_terminated_bytes (v2: |S<n>), NUL-padded; variable-length strings as Zarr string\n"
    "             (v2: |O with vlen-utf8; fill value \"\"; counted as 8 bytes an element in the rule below);\n"
    "             h5py's complex numbers (a compound {r, i} of two floats) as complex64 / complex128;\n"
    "             other enums as their base integer (the names in _libzarr_hdf5.enum); other compounds as\n"
    "             Zarr structured (or struct, --struct-type; v2: a structured dtype), nested compounds\n"
    "             too, array members in --format 2 only. Shape; fill value (an explicit one: a netCDF\n"
    "             _FillValue, a fill value the HDF5 writer set; else v2 null, v3 HDF5's default or 0);\n"
    "             chunk shape (the HDF5 chunk dimensions; a contiguous or compact dataset gets its shape\n"
    "             with the leading dimensions halved until a chunk holds at most 1 MiB). References,\n"
    "             opaque, bitfield, time and variable-length sequence types have no Zarr form: they are\n"
    "             named in the error (see --skip-unsupported).\n"
    "  dimensions HDF5 dimension scales (netCDF-4 dimensions) become dimension names (v3 dimension_names,\n"
    "             v2 _ARRAY_DIMENSIONS); a netCDF dimension without a variable is not an array; along an\n"
    "             unlimited dimension an array has the dimension's length (as netCDF reads it). Unlimited\n"
    "             dimensions and each group's dimensions are recorded in the attribute _libzarr_hdf5.\n"
    "  attributes as JSON with their HDF5 types recorded in _libzarr_hdf5.attribute_types: integers,\n"
    "             floats (NaN and infinities as the bare tokens NaN, Infinity, -Infinity), strings (fixed or\n"
    "             variable length), booleans, enums (their base integers; the members recorded) and\n"
    "             compounds of these (JSON objects by field; h5py's complex numbers too); a scalar as a JSON\n"
    "             scalar, an array as (nested) JSON arrays\n"
    "             (in a netCDF-4 file a one-element attribute is a scalar); an empty (null-space) attribute\n"
    "             as null. netCDF's and HDF5's internal attributes (CLASS, NAME, REFERENCE_LIST,\n"
    "             DIMENSION_LIST, _Netcdf4Coordinates, _Netcdf4Dimid, _NCProperties, _nc3_strict,\n"
    "             _IsNetcdf4) are not copied.\n"
    "  data       copied one Zarr chunk (or shard) at a time: memory use is bounded by one chunk.\n"
    "\n"
    "exit status: 0 done (with --skip-unsupported, also when something was left out); 1 error (bad input,\n"
    "an existing output, a failed read or write); 2 something has no Zarr form (without\n"
    "--skip-unsupported). After 1 or 2 nothing is written.\n";

static int g_format = 3;
static const char *g_codec = NULL; /* NULL: from the HDF5 filters */
static int g_level = ZARR_LEVEL_DEFAULT;
static uint64_t g_shard[32];
static size_t g_shard_rank = 0;
static int g_quiet = 0;
static int g_skip_unsupported = 0;
static int g_struct = 0;        /* --struct-type struct: compounds as v3 `struct` (else `structured`) */
static int g_netcdf = 0;        /* the file is netCDF-4 (the root group has _NCProperties) */
static char *g_tmp_out = NULL;  /* the output being written, removed when the conversion fails */
static int g_virtual = 0;       /* --virtual: references into the input (h5z_virtual.h) */
static int g_vparquet = 0;      /* --virtual in the Parquet layout (--parquet, or OUT ending in .parq) */
static int g_vicechunk = 0;     /* --virtual into an Icechunk repository (OUT icechunk://...) */
static uint64_t g_vrecord = 0;  /* --record-size (0: libzarr's default, 10000) */

static void remove_tmp_out(void) {
    if (g_tmp_out) rm_tree(g_tmp_out);
}

/* SIGINT, SIGTERM, SIGHUP: the unfinished output is removed, then the signal ends the process. */
static void on_signal(int sig) {
    remove_tmp_out();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Something at `path` has no Zarr form: left out with a message under --skip-unsupported; otherwise an
 * error (exit status 2) and the unfinished output is removed. */
static void unsupported(const char *path, const char *msg) {
    if (g_skip_unsupported) {
        fprintf(stderr, "h5tozarr: %s: skipped: %s\n", path, msg);
        return;
    }
    fprintf(stderr, "h5tozarr: %s: %s (--skip-unsupported leaves it out)\n", path, msg);
    fflush(NULL);
    remove_tmp_out();
    _exit(2);
}

/* ---- the compressor: libzarr's codec registry, through the spec API ------------------------------ */
/* "none, zstd, gzip, blosc-lz4, ...": every name zarr_array_spec_set_compressor() takes (caller frees). */
static char *codec_names(void) {
    sbuf b = {0};
    sb_puts(&b, "none");
    const char *n = NULL;
    for (size_t k = 0; zarr_array_spec_compressor_name(k, &n) == ZARR_OK; k++) sb_printf(&b, ", %s", n);
    return b.p;
}

static void usage(FILE *f) {
    fputs(USAGE_HEAD, f);
    char *names = codec_names();
    const char *lead = "  --codec NAME[:LVL]  compressor for every array, one of libzarr's: ";
    fputs(lead, f);
    size_t col = strlen(lead);
    for (char *p = names; *p;) { /* the names, wrapped under the option's text */
        size_t n = strcspn(p, ",");
        if (p != names) {
            if (col + n + 3 > 104) { fprintf(f, ",\n%22s", ""); col = 22; }
            else { fputs(", ", f); col += 2; }
        }
        fprintf(f, "%.*s", (int)n, p);
        col += n;
        p += n + (p[n] ? 2 : 0);
    }
    fputc('\n', f);
    free(names);
    fputs(USAGE_TAIL, f);
    fputs(USAGE_VIRTUAL, f);
    fputs(USAGE_CONVERTED, f);
}

/* --codec NAME[:LEVEL]: the name and level are checked by libzarr's spec API; an unknown name is an
 * error that lists the valid ones. */
static void set_codec(const char *v) {
    static char name[64];
    const char *colon = strchr(v, ':');
    size_t n = colon ? (size_t)(colon - v) : strlen(v);
    char *names = codec_names();
    if (n >= sizeof name) die("--codec: unknown codec '%s' (%s)", v, names);
    memcpy(name, v, n);
    name[n] = 0;
    if (colon) {
        char *e;
        errno = 0;
        long l = strtol(colon + 1, &e, 10);
        if (e == colon + 1 || *e || errno || l <= INT32_MIN || l > INT32_MAX) die("--codec: bad level '%s'", colon + 1);
        g_level = (int)l;
    }
    int known = !strcmp(name, "none");
    const char *k = NULL;
    for (size_t i = 0; !known && zarr_array_spec_compressor_name(i, &k) == ZARR_OK; i++) known = !strcmp(name, k);
    if (!known) die("--codec: unknown codec '%s' (%s)", name, names);
    free(names);
    zarr_array_spec *probe = NULL;
    zcheck(zarr_array_spec_new(ZARR_UINT8, 0, NULL, &probe), "checking the codec", "--codec");
    if (zarr_array_spec_set_compressor(probe, name, g_level) != ZARR_OK) die("--codec %s: %s", v, zarr_last_error());
    zarr_array_spec_free(probe);
    g_codec = name;
}

static const char *class_name(hid_t t) {
    static const char *const classes[] = {"integer", "float", "time", "string", "bitfield", "opaque",
                                          "compound", "reference", "enum", "variable-length sequence", "array"};
    int cls = (int)H5Tget_class(t);
    if (cls == H5T_STRING && H5Tis_variable_str(t) > 0) return "variable-length string";
    return cls >= 0 && cls <= 10 ? classes[cls] : "unknown";
}

/* The base64 of n bytes (no quotes). */
static void base64_raw(sbuf *b, const unsigned char *v, size_t n) {
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t w = (uint32_t)v[i] << 16 | (i + 1 < n ? (uint32_t)v[i + 1] << 8 : 0) | (i + 2 < n ? v[i + 2] : 0);
        char q[4] = {tab[w >> 18], tab[(w >> 12) & 63], i + 1 < n ? tab[(w >> 6) & 63] : '=', i + 2 < n ? tab[w & 63] : '='};
        sb_put(b, q, 4);
    }
}

/* A JSON string of the base64 of n bytes. */
static void base64(sbuf *b, const unsigned char *v, size_t n) {
    sb_puts(b, "\"");
    base64_raw(b, v, n);
    sb_puts(b, "\"");
}

/* ---- attributes -> JSON ------------------------------------------------------------------------- */
typedef struct {
    sbuf *out;    /* the attribute members written so far */
    sbuf *types;  /* the attribute_types members written so far */
    const char *path;
    int fill_b64; /* a Zarr v3 float array: _FillValue as xarray writes it (base64 of a little-endian float64) */
} attr_ctx;

static int is_h5py_bool(hid_t t) {
    if (H5Tget_class(t) != H5T_ENUM || H5Tget_size(t) != 1 || H5Tget_nmembers(t) != 2) return 0;
    char *a = H5Tget_member_name(t, 0), *b = H5Tget_member_name(t, 1);
    int ok = a && b && !strcmp(a, "FALSE") && !strcmp(b, "TRUE");
    H5free_memory(a);
    H5free_memory(b);
    return ok;
}

/* netCDF's and HDF5's bookkeeping attributes, which are not copied. */
static int is_internal_attr(const char *name) {
    static const char *const names[] = {"CLASS", "NAME", "REFERENCE_LIST", "DIMENSION_LIST", "_Netcdf4Coordinates",
                                        "_Netcdf4Dimid", "_NCProperties", "_nc3_strict", "_IsNetcdf4"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (!strcmp(name, names[k])) return 1;
    return 0;
}

/* Zarr v3 name of an HDF5 integer or float type ("int16", "float32", ...), or NULL. */
static const char *number_type_name(hid_t t) {
    size_t size = H5Tget_size(t);
    if (H5Tget_class(t) == H5T_INTEGER) {
        int s = H5Tget_sign(t) == H5T_SGN_2;
        switch (size) {
        case 1: return s ? "int8" : "uint8";
        case 2: return s ? "int16" : "uint16";
        case 4: return s ? "int32" : "uint32";
        case 8: return s ? "int64" : "uint64";
        default: return NULL;
        }
    }
    if (H5Tget_class(t) == H5T_FLOAT) return size == 2 ? "float16" : size == 4 ? "float32" : size == 8 ? "float64" : NULL;
    return NULL;
}

/* An attribute's float as JSON: the shortest decimal that reads back to the same value of its own width
 * (`bits` 32: the same float32), NaN and the infinities as the bare tokens NaN, Infinity, -Infinity. */
static void sb_attr_double(sbuf *b, double v, int bits) {
    if (isnan(v)) { sb_puts(b, "NaN"); return; }
    if (isinf(v)) { sb_puts(b, v > 0 ? "Infinity" : "-Infinity"); return; }
    if (bits != 32) { sb_json_double(b, v); return; }
    char tmp[40];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtof(tmp, NULL) == (float)v) break;
    }
    if (!strpbrk(tmp, ".eEn")) strcat(tmp, ".0");
    sb_puts(b, tmp);
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
static void emit_f64(sbuf *b, const void *buf, size_t k) { sb_attr_double(b, ((const double *)buf)[k], 64); }
static void emit_f32(sbuf *b, const void *buf, size_t k) { sb_attr_double(b, ((const double *)buf)[k], 32); }
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

/* The attribute_types record of an enum (not h5py's boolean) or compound attribute type, as the connector
 * writes it (docs/hdf5-netcdf.md): {"enum": {"base": "<integer type>", "members": {...}}} or
 * {"compound": [["<field>", <type name or record>], ...]}. 0 with the reason in msg when a field has no
 * such form. */
static int record_json(sbuf *b, hid_t t, char *msg, size_t msz) {
    H5T_class_t cls = H5Tget_class(t);
    if ((cls == H5T_INTEGER || cls == H5T_FLOAT) && number_type_name(t)) {
        sb_printf(b, "\"%s\"", number_type_name(t));
        return 1;
    }
    if (cls == H5T_ENUM && is_h5py_bool(t)) {
        sb_puts(b, "\"bool\"");
        return 1;
    }
    if (cls == H5T_ENUM) {
        hid_t base = H5Tget_super(t);
        const char *bname = number_type_name(base);
        int sgn = H5Tget_sign(base) == H5T_SGN_2, n = H5Tget_nmembers(t), ok = bname != NULL;
        if (ok) sb_printf(b, "{\"enum\":{\"base\":\"%s\",\"members\":{", bname);
        for (int i = 0; ok && i < n; i++) {
            unsigned char raw[16] = {0};
            char *mname = H5Tget_member_name(t, (unsigned)i);
            ok = mname && H5Tget_member_value(t, (unsigned)i, raw) >= 0 &&
                 H5Tconvert(base, sgn ? H5T_NATIVE_LLONG : H5T_NATIVE_ULLONG, 1, raw, NULL, H5P_DEFAULT) >= 0;
            if (ok) {
                if (i) sb_puts(b, ",");
                sb_json_str(b, mname, strlen(mname));
                if (sgn) sb_printf(b, ":%lld", *(long long *)raw);
                else sb_printf(b, ":%llu", *(unsigned long long *)raw);
            }
            H5free_memory(mname);
        }
        H5Tclose(base);
        if (ok) sb_puts(b, "}}}");
        else snprintf(msg, msz, "an enum whose base type is not an integer type of 8-64 bits");
        return ok;
    }
    if (cls == H5T_COMPOUND && H5Tget_nmembers(t) > 0) {
        int n = H5Tget_nmembers(t), ok = 1;
        sb_puts(b, "{\"compound\":[");
        for (int i = 0; ok && i < n; i++) {
            char *mname = H5Tget_member_name(t, (unsigned)i);
            hid_t mt = H5Tget_member_type(t, (unsigned)i);
            if (i) sb_puts(b, ",");
            sb_puts(b, "[");
            sb_json_str(b, mname, strlen(mname));
            sb_puts(b, ",");
            ok = record_json(b, mt, msg, msz);
            sb_puts(b, "]");
            H5free_memory(mname);
            H5Tclose(mt);
        }
        sb_puts(b, "]}");
        return ok;
    }
    snprintf(msg, msz, "a field of type %s (%zu bytes), which an attribute record cannot describe", class_name(t),
             H5Tget_size(t));
    return 0;
}

/* One element of the native type `t` (H5Tget_native_type of an enum or compound attribute type) as JSON:
 * numbers, true/false for h5py's booleans, an enum's base integer, a compound as an object by field. */
static void record_value(sbuf *b, hid_t t, const unsigned char *p) {
    H5T_class_t cls = H5Tget_class(t);
    size_t size = H5Tget_size(t);
    if (cls == H5T_COMPOUND) {
        int n = H5Tget_nmembers(t);
        sb_puts(b, "{");
        for (int i = 0; i < n; i++) {
            char *mname = H5Tget_member_name(t, (unsigned)i);
            hid_t mt = H5Tget_member_type(t, (unsigned)i);
            if (i) sb_puts(b, ",");
            sb_json_str(b, mname, strlen(mname));
            sb_puts(b, ":");
            record_value(b, mt, p + H5Tget_member_offset(t, (unsigned)i));
            H5free_memory(mname);
            H5Tclose(mt);
        }
        sb_puts(b, "}");
    } else if (cls == H5T_ENUM && is_h5py_bool(t)) {
        sb_puts(b, p[0] ? "true" : "false");
    } else if (cls == H5T_ENUM) {
        hid_t base = H5Tget_super(t);
        record_value(b, base, p);
        H5Tclose(base);
    } else if (cls == H5T_FLOAT) {
        double d = 0;
        if (size == sizeof(float)) { float f; memcpy(&f, p, sizeof f); d = f; }
        else memcpy(&d, p, sizeof d);
        sb_attr_double(b, d, size == sizeof(float) ? 32 : 64);
    } else if (H5Tget_sign(t) == H5T_SGN_2) {
        long long v = size == 1 ? *(const signed char *)p : 0;
        if (size == 2) { int16_t x; memcpy(&x, p, 2); v = x; }
        if (size == 4) { int32_t x; memcpy(&x, p, 4); v = x; }
        if (size == 8) { int64_t x; memcpy(&x, p, 8); v = x; }
        sb_printf(b, "%lld", v);
    } else {
        unsigned long long v = size == 1 ? *p : 0;
        if (size == 2) { uint16_t x; memcpy(&x, p, 2); v = x; }
        if (size == 4) { uint32_t x; memcpy(&x, p, 4); v = x; }
        if (size == 8) { uint64_t x; memcpy(&x, p, 8); v = x; }
        sb_printf(b, "%llu", v);
    }
}
static hid_t g_rec_type;
static void emit_rec(sbuf *b, const void *buf, size_t k) {
    record_value(b, g_rec_type, (const unsigned char *)buf + k * H5Tget_size(g_rec_type));
}

static herr_t attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
    (void)info;
    attr_ctx *c = data;
    if (is_internal_attr(name)) return 0;
    char msg[512];
    /* a record in an HDF5 file (xarray's to_netcdf of a converted store carries it there): this
     * conversion writes its own */
    if (!strcmp(name, "_libzarr_hdf5")) return 0;
    if (g_format == 2 && !strcmp(name, "_ARRAY_DIMENSIONS")) {
        snprintf(msg, sizeof msg, "attribute '%s': the name is reserved for what h5tozarr records", name);
        unsupported(c->path, msg);
        return 0;
    }
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
    if (a < 0 || t < 0 || sp < 0) die("%s: attribute '%s': HDF5 cannot read it", c->path, name);
    H5S_class_t scls = H5Sget_simple_extent_type(sp);
    int rank = H5Sget_simple_extent_ndims(sp);
    hsize_t dims[H5S_MAX_RANK];
    H5Sget_simple_extent_dims(sp, dims, NULL);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    /* netCDF has no scalar attributes: it writes a single value as a one-element list */
    if (g_netcdf && rank == 1 && dims[0] == 1) rank = 0;
    H5T_class_t cls = H5Tget_class(t);
    sbuf v = {0};
    const char *tname = NULL;
    sbuf rec = {0};   /* the record of an enum or compound type */
    int bad = 0;
    if (cls == H5T_INTEGER || cls == H5T_FLOAT) tname = number_type_name(t);
    else if (is_h5py_bool(t)) tname = "bool";
    else if (cls == H5T_STRING) tname = H5Tis_variable_str(t) > 0 ? "string" : "char";
    else if (cls == H5T_ENUM || cls == H5T_COMPOUND) {
        char why[400];
        if (record_json(&rec, t, why, sizeof why)) tname = rec.p;
        else snprintf(msg, sizeof msg, "attribute '%s': %s", name, why);
    }
    if (!tname && rec.n) {
        unsupported(c->path, msg);
    } else if (!tname) {
        snprintf(msg, sizeof msg, "attribute '%s' of type %s (%zu bytes) is not supported", name, class_name(t), H5Tget_size(t));
        unsupported(c->path, msg);
    } else if (scls == H5S_NULL) {
        sb_puts(&v, "null");
    } else if (n < 0 || n > (1 << 26)) {
        die("%s: attribute '%s' is too large (%lld elements)", c->path, name, (long long)n);
    } else {
        size_t k = 0;
        if (c->fill_b64 && rank == 0 && (cls == H5T_INTEGER || cls == H5T_FLOAT) && !strcmp(name, "_FillValue")) {
            double d;
            unsigned char le[8];
            if (H5Aread(a, H5T_NATIVE_DOUBLE, &d) < 0) bad = 1;
            uint64_t bits;
            memcpy(&bits, &d, 8);
            for (int i = 0; i < 8; i++) le[i] = (unsigned char)(bits >> (8 * i));
            if (!bad) base64(&v, le, 8);
        } else if (cls == H5T_INTEGER) {
            int sgn = H5Tget_sign(t) == H5T_SGN_2;
            void *buf = xmalloc((size_t)n * 8);
            if (H5Aread(a, sgn ? H5T_NATIVE_LLONG : H5T_NATIVE_ULLONG, buf) < 0) bad = 1;
            if (!bad) nested(&v, rank, dims, buf, &k, sgn ? emit_i64 : emit_u64);
            free(buf);
        } else if (cls == H5T_FLOAT) {
            void *buf = xmalloc((size_t)n * 8);
            if (H5Aread(a, H5T_NATIVE_DOUBLE, buf) < 0) bad = 1;
            /* _FillValue and missing_value as the float64 of their value, as the fill value is written:
             * equal values are then equal JSON numbers (xarray sees one fill value, not two) */
            int exact = H5Tget_size(t) == 8 || !strcmp(name, "_FillValue") || !strcmp(name, "missing_value");
            if (!bad) nested(&v, rank, dims, buf, &k, exact ? emit_f64 : emit_f32);
            free(buf);
        } else if (rec.n) {
            hid_t mt = H5Tget_native_type(t, H5T_DIR_ASCEND);
            void *buf = xmalloc((size_t)n * H5Tget_size(mt) + 1);
            if (H5Aread(a, mt, buf) < 0) bad = 1;
            g_rec_type = mt;
            if (!bad) nested(&v, rank, dims, buf, &k, emit_rec);
            H5Tclose(mt);
            free(buf);
        } else if (cls == H5T_ENUM) {
            hid_t mt = H5Tget_native_type(t, H5T_DIR_ASCEND);
            void *buf = xmalloc((size_t)n);
            if (H5Aread(a, mt, buf) < 0) bad = 1;
            H5Tclose(mt);
            if (!bad) nested(&v, rank, dims, buf, &k, emit_bool);
            free(buf);
        } else if (H5Tis_variable_str(t) > 0) {
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, H5T_VARIABLE);
            H5Tset_cset(mt, H5Tget_cset(t));
            char **buf = xmalloc((size_t)n * sizeof(char *));
            if (H5Aread(a, mt, buf) < 0) bad = 1;
            if (!bad) nested(&v, rank, dims, buf, &k, emit_vstr);
            if (!bad) H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
            H5Tclose(mt);
            free(buf);
        } else {
            g_fixed_len = H5Tget_size(t);
            g_fixed_pad = H5Tget_strpad(t);
            if (g_fixed_len == 0 || (uint64_t)n * g_fixed_len > (1u << 28)) die("%s: attribute '%s' is too large", c->path, name);
            void *buf = xmalloc((size_t)n * g_fixed_len);
            if (H5Aread(a, t, buf) < 0) bad = 1;
            if (!bad) nested(&v, rank, dims, buf, &k, emit_fstr);
            free(buf);
        }
    }
    if (bad) die("%s: attribute '%s': HDF5 could not read it", c->path, name);
    if (v.n) {
        if (c->out->n) sb_puts(c->out, ",");
        sb_json_str(c->out, name, strlen(name));
        sb_puts(c->out, ":");
        sb_puts(c->out, v.p);
        if (c->types->n) sb_puts(c->types, ",");
        sb_json_str(c->types, name, strlen(name));
        if (rec.n && rec.p[0] == '{') { /* an enum or compound record, with the type's name when it has one */
            sb_puts(c->types, ":");
            sb_put(c->types, rec.p, rec.n - 1);
            named_type_member(c->types, t, c->path, 1);
            sb_puts(c->types, "}");
        } else if (rec.n) {
            sb_puts(c->types, ":");
            sb_puts(c->types, rec.p);
        } else {
            sb_printf(c->types, ":\"%s\"", tname);
        }
    }
    free(rec.p);
    free(v.p);
    H5Sclose(sp);
    H5Tclose(t);
    H5Aclose(a);
    return 0;
}

/* The attributes of an HDF5 object as a JSON object text (caller frees): its own attributes, then
 * `_ARRAY_DIMENSIONS` when `dimnames` (a JSON list) is given, then `_libzarr_hdf5`, a string holding
 * the JSON text of the record: the attribute types and `extra` (JSON object members, may be empty). */
static char *attrs_json(hid_t obj, const char *path, const char *dimnames, const char *extra, int fill_b64) {
    sbuf out = {0}, types = {0};
    sb_puts(&out, "");
    sb_puts(&types, "");
    attr_ctx c = {&out, &types, path, fill_b64};
    hsize_t idx = 0;
    if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, attr_cb, &c) < 0) die("%s: reading attributes failed", path);
    sbuf b = {0};
    sb_puts(&b, "{");
    sb_puts(&b, out.p);
    if (dimnames) {
        if (out.n) sb_puts(&b, ",");
        sb_puts(&b, "\"_ARRAY_DIMENSIONS\":");
        sb_puts(&b, dimnames);
    }
    if (types.n || (extra && *extra)) {
        /* the record: JSON text in a string, which xarray and netCDF take as a text attribute (an
         * object would stop xarray's to_netcdf) */
        sbuf rec = {0};
        sb_puts(&rec, "{");
        if (types.n) sb_printf(&rec, "\"attribute_types\":{%s}", types.p);
        if (extra && *extra) {
            if (types.n) sb_puts(&rec, ",");
            sb_puts(&rec, extra);
        }
        sb_puts(&rec, "}");
        if (out.n || dimnames) sb_puts(&b, ",");
        sb_puts(&b, "\"_libzarr_hdf5\":");
        sb_json_str(&b, rec.p, rec.n);
        free(rec.p);
    }
    sb_puts(&b, "}");
    free(out.p);
    free(types.p);
    return b.p;
}

static char *group_dims_json(const char *path);

/* The record members of the group `g` at `path` (caller frees): its `dimensions` and `named_types`. */
static char *group_record(hid_t g, const char *path) {
    char *dims = group_dims_json(path), *types = named_types_json(g, path);
    sbuf b = {0};
    sb_puts(&b, dims);
    if (*dims && *types) sb_puts(&b, ",");
    sb_puts(&b, types);
    free(dims);
    free(types);
    return b.p;
}

/* The `dimensions` record of the group at `path` (JSON object members, caller frees; "" when none). */
static char *group_dims_json(const char *path) {
    sbuf b = {0};
    sb_puts(&b, "");
    int any = 0;
    for (size_t k = 0; k < g_nds; k++) {
        if (strcmp(g_ds[k]->group, path)) continue;
        sb_puts(&b, any ? "," : "\"dimensions\":{");
        any = 1;
        sb_json_str(&b, g_ds[k]->name, strlen(g_ds[k]->name));
        sb_printf(&b, ":{\"size\":%llu,\"unlimited\":%s}", (unsigned long long)g_ds[k]->length,
                  g_ds[k]->unlimited ? "true" : "false");
    }
    if (any) sb_puts(&b, "}");
    return b.p;
}

/* ---- datasets ----------------------------------------------------------------------------------- */
typedef struct {
    zarr_data_type ztype;  /* the memory layout in libzarr's terms */
    const char *v3, *v2;   /* Zarr data type names (scalar types) */
    size_t size;           /* bytes an element in memory */
    int is_float, is_signed;
    int is_bytes;          /* fixed-length string: Zarr null_terminated_bytes / |S<size> */
    int is_vstr;           /* variable-length string: Zarr string / v2 |O with vlen-utf8 */
    int is_complex;        /* h5py's complex: a compound {r, i} of two floats */
    int is_enum;           /* an enum other than h5py's boolean, stored as its base integer */
    int is_struct;         /* a compound: Zarr struct, v2 structured */
    char *v3json, *v2json; /* is_struct: the data type as Zarr v3 and v2 JSON */
} dtype_map;

/* An IEEE half-precision float in the machine's byte order (HDF5 1.10 has no predefined one). */
static hid_t half_type(void) {
    hid_t t = H5Tcopy(H5T_NATIVE_FLOAT);
    H5Tset_fields(t, 15, 10, 5, 0, 10);
    H5Tset_size(t, 2);
    H5Tset_precision(t, 16);
    H5Tset_ebias(t, 15);
    return t;
}

static double half_to_double(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

static int is_h5py_complex(hid_t t) {
    size_t size = H5Tget_size(t);
    if (H5Tget_class(t) != H5T_COMPOUND || H5Tget_nmembers(t) != 2 || (size != 8 && size != 16)) return 0;
    int ok = 1;
    for (unsigned k = 0; k < 2; k++) {
        char *nm = H5Tget_member_name(t, k);
        hid_t mt = H5Tget_member_type(t, k);
        ok = ok && nm && !strcmp(nm, k ? "i" : "r") && H5Tget_class(mt) == H5T_FLOAT && H5Tget_size(mt) * 2 == size &&
             H5Tget_member_offset(t, k) == k * size / 2;
        H5free_memory(nm);
        H5Tclose(mt);
    }
    return ok;
}

static hid_t struct_type(hid_t ft, const char *prefix, dtype_map *m, char *err, size_t errlen);

/* Maps the file type `t` to Zarr: fills `m` and returns the memory type to read it with (caller closes),
 * or -1 with the reason in `err` ("dataset of type opaque is not supported"). `member` names a compound
 * member ("p.x") when `t` is one, NULL for a dataset. */
static hid_t map_type(hid_t t, dtype_map *m, const char *member, char *err, size_t errlen) {
    size_t size = H5Tget_size(t);
    memset(m, 0, sizeof *m);
    m->size = size;
    switch (H5Tget_class(t)) {
    case H5T_INTEGER: {
        int s = H5Tget_sign(t) == H5T_SGN_2;
        m->is_signed = s;
        switch (size) {
        case 1: m->ztype = s ? ZARR_INT8 : ZARR_UINT8; m->v3 = s ? "int8" : "uint8"; m->v2 = s ? "|i1" : "|u1"; return H5Tcopy(s ? H5T_NATIVE_INT8 : H5T_NATIVE_UINT8);
        case 2: m->ztype = s ? ZARR_INT16 : ZARR_UINT16; m->v3 = s ? "int16" : "uint16"; m->v2 = s ? "<i2" : "<u2"; return H5Tcopy(s ? H5T_NATIVE_INT16 : H5T_NATIVE_UINT16);
        case 4: m->ztype = s ? ZARR_INT32 : ZARR_UINT32; m->v3 = s ? "int32" : "uint32"; m->v2 = s ? "<i4" : "<u4"; return H5Tcopy(s ? H5T_NATIVE_INT32 : H5T_NATIVE_UINT32);
        case 8: m->ztype = s ? ZARR_INT64 : ZARR_UINT64; m->v3 = s ? "int64" : "uint64"; m->v2 = s ? "<i8" : "<u8"; return H5Tcopy(s ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64);
        default: break;
        }
        break;
    }
    case H5T_FLOAT:
        m->is_float = 1;
        if (size == 2) { m->ztype = ZARR_FLOAT16; m->v3 = "float16"; m->v2 = "<f2"; return half_type(); }
        if (size == 4) { m->ztype = ZARR_FLOAT32; m->v3 = "float32"; m->v2 = "<f4"; return H5Tcopy(H5T_NATIVE_FLOAT); }
        if (size == 8) { m->ztype = ZARR_FLOAT64; m->v3 = "float64"; m->v2 = "<f8"; return H5Tcopy(H5T_NATIVE_DOUBLE); }
        break;
    case H5T_STRING:
        if (H5Tis_variable_str(t) > 0) {
            if (member) break; /* a struct field has a fixed size */
            m->is_vstr = 1;
            m->size = sizeof(char *);
            m->ztype = ZARR_STRING;
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, H5T_VARIABLE);
            H5Tset_cset(mt, H5Tget_cset(t));
            return mt;
        } else {
            m->is_bytes = 1;
            m->ztype = ZARR_NULL_TERMINATED_BYTES;
            hid_t mt = H5Tcopy(t);
            H5Tset_strpad(mt, H5T_STR_NULLPAD);
            return mt;
        }
    case H5T_COMPOUND:
        if (is_h5py_complex(t)) {
            m->is_complex = 1;
            m->ztype = size == 8 ? ZARR_COMPLEX64 : ZARR_COMPLEX128;
            m->v3 = size == 8 ? "complex64" : "complex128";
            m->v2 = size == 8 ? "<c8" : "<c16";
            hid_t part = size == 8 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
            hid_t mt = H5Tcreate(H5T_COMPOUND, size);
            H5Tinsert(mt, "r", 0, part);
            H5Tinsert(mt, "i", size / 2, part);
            return mt;
        }
        return struct_type(t, member, m, err, errlen);
    case H5T_ENUM: {
        hid_t mt = H5Tget_native_type(t, H5T_DIR_ASCEND);
        if (is_h5py_bool(t)) { m->ztype = ZARR_BOOL; m->v3 = "bool"; m->v2 = "|b1"; return mt; }
        if (member) { H5Tclose(mt); break; } /* the names would be lost */
        hid_t base = H5Tget_super(t);
        dtype_map bm;
        hid_t bt = map_type(base, &bm, member, err, errlen);
        H5Tclose(base);
        if (bt < 0) { H5Tclose(mt); return -1; }
        H5Tclose(bt);
        *m = bm;
        m->is_enum = 1;
        return mt;
    }
    default:
        break;
    }
    if (member)
        snprintf(err, errlen, "compound member '%s' of type %s (%zu bytes) is not supported", member, class_name(t), size);
    else
        snprintf(err, errlen, "dataset of type %s (%zu bytes) is not supported", class_name(t), size);
    return -1;
}

/* A compound as a packed native compound (libzarr's struct layout): builds its v3 and v2 JSON in `m`. */
static hid_t struct_type(hid_t ft, const char *prefix, dtype_map *m, char *err, size_t errlen) {
    int n = H5Tget_nmembers(ft);
    if (n <= 0) {
        snprintf(err, errlen, "%s%s%scompound without members is not supported", prefix ? "compound member '" : "",
                 prefix ? prefix : "", prefix ? "': a " : "a ");
        return -1;
    }
    hid_t *mts = xmalloc((size_t)n * sizeof *mts);
    char **names = xmalloc((size_t)n * sizeof *names);
    sbuf v3 = {0}, v2 = {0};
    sb_printf(&v3, "{\"name\":\"%s\",\"configuration\":{\"fields\":[", g_struct ? "struct" : "structured");
    sb_puts(&v2, "[");
    size_t total = 0;
    int ok = 1, k;
    for (k = 0; k < n; k++) {
        names[k] = H5Tget_member_name(ft, (unsigned)k);
        char *mpath = xmalloc(strlen(prefix ? prefix : "") + strlen(names[k]) + 2);
        sprintf(mpath, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", names[k]);
        hid_t ftm = H5Tget_member_type(ft, (unsigned)k);
        dtype_map mm;
        memset(&mm, 0, sizeof mm);
        hid_t mt = -1;
        sbuf f2 = {0};
        if (H5Tget_class(ftm) == H5T_ARRAY) {
            int nd = H5Tget_array_ndims(ftm);
            hsize_t ad[H5S_MAX_RANK];
            H5Tget_array_dims2(ftm, ad);
            if (g_format == 3) {
                snprintf(err, errlen, "compound member '%s' is an array, which a Zarr v3 struct cannot hold; "
                         "--format 2 keeps it", mpath);
            } else {
                hid_t base = H5Tget_super(ftm);
                hid_t bt = map_type(base, &mm, mpath, err, errlen);
                H5Tclose(base);
                if (bt >= 0) {
                    mt = H5Tarray_create2(bt, (unsigned)nd, ad);
                    H5Tclose(bt);
                    if (mm.is_struct) sb_puts(&f2, mm.v2json);
                    else if (mm.is_bytes) sb_printf(&f2, "\"|S%zu\"", mm.size);
                    else sb_printf(&f2, "\"%s\"", mm.v2);
                    sb_puts(&f2, ",[");
                    for (int d = 0; d < nd; d++) sb_printf(&f2, "%s%llu", d ? "," : "", (unsigned long long)ad[d]);
                    sb_puts(&f2, "]");
                    mm.size = H5Tget_size(mt);
                }
            }
        } else {
            mt = map_type(ftm, &mm, mpath, err, errlen);
            if (mt >= 0) {
                if (mm.is_struct) sb_puts(&f2, mm.v2json);
                else if (mm.is_bytes) sb_printf(&f2, "\"|S%zu\"", mm.size);
                else sb_printf(&f2, "\"%s\"", mm.v2);
            }
        }
        H5Tclose(ftm);
        free(mpath);
        mts[k] = mt;
        if (mt < 0) { free(f2.p); free(mm.v3json); free(mm.v2json); ok = 0; k++; break; }
        if (k) { sb_puts(&v3, ","); sb_puts(&v2, ","); }
        /* struct: {"name": N, "data_type": T}; structured: [N, T] */
        sb_puts(&v3, g_struct ? "{\"name\":" : "[");
        sb_json_str(&v3, names[k], strlen(names[k]));
        sb_puts(&v3, g_struct ? ",\"data_type\":" : ",");
        if (mm.is_struct) sb_puts(&v3, mm.v3json);
        else if (mm.is_bytes) sb_printf(&v3, "{\"name\":\"null_terminated_bytes\",\"configuration\":{\"length_bytes\":%zu}}", mm.size);
        else sb_printf(&v3, "\"%s\"", mm.v3);
        sb_puts(&v3, g_struct ? "}" : "]");
        sb_puts(&v2, "[");
        sb_json_str(&v2, names[k], strlen(names[k]));
        sb_puts(&v2, ",");
        sb_puts(&v2, f2.p);
        sb_puts(&v2, "]");
        free(f2.p);
        free(mm.v3json);
        free(mm.v2json);
        total += H5Tget_size(mt);
    }
    hid_t out = -1;
    if (ok) {
        out = H5Tcreate(H5T_COMPOUND, total);
        size_t off = 0;
        for (int j = 0; j < n; j++) {
            H5Tinsert(out, names[j], off, mts[j]);
            off += H5Tget_size(mts[j]);
        }
        sb_puts(&v3, "]}}");
        sb_puts(&v2, "]");
        m->is_struct = 1;
        m->ztype = ZARR_STRUCT;
        m->size = total;
        m->v3json = v3.p;
        m->v2json = v2.p;
    } else {
        free(v3.p);
        free(v2.p);
    }
    for (int j = 0; j < k; j++) {
        if (mts[j] >= 0) H5Tclose(mts[j]);
        H5free_memory(names[j]);
    }
    free(mts);
    free(names);
    return out;
}

static void fill_json(sbuf *b, const dtype_map *m, hid_t mem, const unsigned char *v);

/* A struct fill value as a v3 object {field: value}, walking the packed memory type. */
static void struct_fill_json(sbuf *b, hid_t mem, const unsigned char *v) {
    int n = H5Tget_nmembers(mem);
    sb_puts(b, "{");
    for (int k = 0; k < n; k++) {
        char *nm = H5Tget_member_name(mem, (unsigned)k);
        hid_t mt = H5Tget_member_type(mem, (unsigned)k);
        size_t off = H5Tget_member_offset(mem, (unsigned)k);
        if (k) sb_puts(b, ",");
        sb_json_str(b, nm, strlen(nm));
        sb_puts(b, ":");
        dtype_map mm;
        char err[16];
        hid_t t = map_type(mt, &mm, nm, err, sizeof err); /* a native type maps to itself */
        fill_json(b, &mm, mt, v + off);
        if (t >= 0) H5Tclose(t);
        free(mm.v3json);
        free(mm.v2json);
        H5Tclose(mt);
        H5free_memory(nm);
    }
    sb_puts(b, "}");
}

/* The fill value as JSON, from `m->size` bytes in the memory type `mem` of `m`. */
static void fill_json(sbuf *b, const dtype_map *m, hid_t mem, const unsigned char *v) {
    if (m->is_vstr) { /* HDF5 keeps no fill value for variable-length strings that h5py sets: "" */
        sb_puts(b, "\"\"");
        return;
    }
    if (m->is_struct) {
        /* v2 and v3 structured: base64 of the element's bytes; v3 struct: an object by field */
        if (g_format == 2 || !g_struct) base64(b, v, m->size);
        else struct_fill_json(b, mem, v);
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
    if (m->is_bytes) { base64(b, v, m->size); return; } /* as Zarr writes fill values of byte strings */
    if (m->ztype == ZARR_BOOL) { sb_puts(b, v[0] ? "true" : "false"); return; }
    if (m->is_float) {
        double d;
        if (m->size == 2) { uint16_t h; memcpy(&h, v, 2); d = half_to_double(h); }
        else if (m->size == 4) { float f; memcpy(&f, v, 4); d = f; }
        else memcpy(&d, v, 8);
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

/* The `enum` record of an enum dataset: {"base": "<int type>", "members": {"<name>": value, ...}}, read
 * from the native enum type `mem`. */
static void enum_json(sbuf *b, const dtype_map *m, hid_t mem) {
    sb_printf(b, "\"enum\":{\"base\":\"%s\",\"members\":{", m->v3);
    int n = H5Tget_nmembers(mem);
    for (int k = 0; k < n; k++) {
        char *nm = H5Tget_member_name(mem, (unsigned)k);
        unsigned char val[8] = {0};
        H5Tget_member_value(mem, (unsigned)k, val);
        if (k) sb_puts(b, ",");
        sb_json_str(b, nm, strlen(nm));
        sb_puts(b, ":");
        dtype_map im = *m;
        im.is_enum = 0;
        fill_json(b, &im, mem, val);
        H5free_memory(nm);
    }
    sb_puts(b, "}}");
}

/* The compressor from --codec or the dataset's filters: a name and level of zarr_array_spec_set_compressor(). */
static void pick_codec(hid_t dcpl, const char *path, const char **name, int *level) {
    if (g_codec) {
        *name = g_codec;
        *level = g_level;
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

/* The spec API's stand-in for a type it cannot describe (it takes no type with parameters): uint8 for a
 * fixed-length string (its `bytes` codec has no byte order, as null_terminated_bytes and |S<n> want),
 * for a struct an unsigned integer whose size divides the element where one does (the `bytes` codec
 * with a byte order, blosc's typesize that size). */
static zarr_data_type stand_in(const dtype_map *m) {
    if (m->is_bytes) return ZARR_UINT8;
    return m->size % 8 == 0 ? ZARR_UINT64 : m->size % 4 == 0 ? ZARR_UINT32 : ZARR_UINT16;
}

/* The metadata document libzarr writes for `spec`, edited: with `stand_in` (a spec made with stand_in())
 * its data type is replaced by the dataset's (v3 `data_type`, v2 `dtype`); its `fill_value` is the
 * dataset's, or null with `null_fill` (v2 only: no fill value). Everything else (chunk grid, key
 * encoding, codecs, dimension names) stays libzarr's. Caller frees. */
static char *edited_document(const zarr_array_spec *spec, const dtype_map *m, hid_t mem, const unsigned char *fill,
                             const char *path, int stand_in, int null_fill) {
    char *doc = NULL;
    zcheck(zarr_array_spec_to_json(spec, &doc), "describing the array", path);
    sbuf dt = {0}, fv = {0};
    if (m->is_struct) sb_puts(&dt, g_format == 3 ? m->v3json : m->v2json);
    else if (g_format == 3) sb_printf(&dt, "{\"name\":\"null_terminated_bytes\",\"configuration\":{\"length_bytes\":%zu}}", m->size);
    else sb_printf(&dt, "\"|S%zu\"", m->size);
    if (null_fill) sb_puts(&fv, "null");
    else fill_json(&fv, m, mem, fill);
    const char *type_key = g_format == 3 ? "data_type" : "dtype";
    jv o;
    jv_parse(doc, &o, path);
    sbuf b = {0};
    sb_puts(&b, "{");
    int replaced = 0;
    for (size_t k = 0; o.t == J_OBJ && k < o.n; k++) {
        if (k) sb_puts(&b, ",");
        sb_json_str(&b, o.keys[k], strlen(o.keys[k]));
        sb_puts(&b, ":");
        if (!strcmp(o.keys[k], type_key) && stand_in) { sb_puts(&b, dt.p); replaced++; }
        else if (!strcmp(o.keys[k], "fill_value")) { sb_puts(&b, fv.p); replaced++; }
        else sb_put(&b, o.items[k].raw, o.items[k].raw_len);
    }
    sb_puts(&b, "}");
    if (replaced != 1 + (stand_in != 0)) die("%s: libzarr's array document has no %s and fill_value", path, type_key);
    jv_free(&o);
    zarr_string_free(doc);
    free(dt.p);
    free(fv.p);
    return b.p;
}

/* The dimensions of a dataset of rank `rank` and HDF5 extent `hd` / `hmax`: `shape` (along an unlimited
 * dimension the dimension's length, as netCDF reads it); whether it has dimension names (returned), then
 * each name in `names` (caller frees), the JSON list in `dn`; `extra` gets the record's
 * `unlimited_dimensions` member (or stays ""). */
static int dataset_dims(hid_t ds, int rank, const hsize_t *hd, const hsize_t *hmax, uint64_t *shape, char **names,
                        sbuf *dn, sbuf *extra) {
    /* dimension names, and the length of unlimited dimensions (as netCDF reads them) */
    dimscale *att[H5S_MAX_RANK];
    /* every dataset is named as netCDF-C names it (phony_dim_N where it has no scale, ds_phony_scan); a
     * scalar gets an empty list (xarray wants _ARRAY_DIMENSIONS on every v2 array) */
    char **dsnames = rank > 0 ? ds_names_of(ds) : NULL;
    if (rank > 0) ds_attached(ds, rank, att);
    else for (int d = 0; d < H5S_MAX_RANK; d++) att[d] = NULL;
    int named = rank == 0 || dsnames != NULL;
    sb_puts(extra, "");
    for (int d = 0; d < rank; d++) {
        shape[d] = hd[d];
        if (att[d] && hmax[d] == H5S_UNLIMITED && att[d]->length > shape[d]) shape[d] = att[d]->length;
    }
    if (named) {
        sb_puts(dn, "[");
        for (int d = 0; d < rank; d++) {
            names[d] = xstrdup(dsnames[d]);
            if (d) sb_puts(dn, ",");
            sb_json_str(dn, names[d], strlen(names[d]));
        }
        sb_puts(dn, "]");
    }
    int any_unlimited = 0;
    for (int d = 0; d < rank; d++) {
        if (hmax[d] != H5S_UNLIMITED) continue;
        sb_printf(extra, "%s%d", any_unlimited ? "," : "\"unlimited_dimensions\":[", d);
        any_unlimited = 1;
    }
    if (any_unlimited) sb_puts(extra, "]");
    return named;
}

static void convert_dataset(hid_t ds, zarr_group *zg, const char *name, const char *path) {
    hid_t ft = H5Dget_type(ds), sp = H5Dget_space(ds), dcpl = H5Dget_create_plist(ds);
    if (ft < 0 || sp < 0 || dcpl < 0) die("%s: HDF5 cannot read the dataset's description", path);
    if (ds_is_scale(ds)) {
        dimscale *self = ds_entry(ds);
        if (self && self->dim_only) { /* a netCDF dimension without a variable: its size is recorded */
            H5Tclose(ft); H5Sclose(sp); H5Pclose(dcpl);
            return;
        }
    }
    dtype_map m;
    char err[512];
    hid_t mem = map_type(ft, &m, NULL, err, sizeof err);
    if (mem < 0 || H5Sget_simple_extent_type(sp) == H5S_NULL) {
        unsupported(path, mem < 0 ? err : "a dataset with an empty (null) dataspace has no Zarr form");
        if (mem >= 0) H5Tclose(mem);
        H5Tclose(ft); H5Sclose(sp); H5Pclose(dcpl);
        return;
    }
    if (m.is_bytes && g_format == 2) m.ztype = ZARR_RAW; /* libzarr reads a v2 |S<n> as r<8n> */
    int rank = H5Sget_simple_extent_ndims(sp);
    hsize_t hd[H5S_MAX_RANK], hmax[H5S_MAX_RANK], hc[H5S_MAX_RANK];
    H5Sget_simple_extent_dims(sp, hd, hmax);

    uint64_t shape[H5S_MAX_RANK], chunk[H5S_MAX_RANK], outer[H5S_MAX_RANK];
    char *names[H5S_MAX_RANK]; /* named: each dimension's name (v3 dimension_names, v2 _ARRAY_DIMENSIONS) */
    sbuf dn = {0}, extra = {0};
    int named = dataset_dims(ds, rank, hd, hmax, shape, names, &dn, &extra);
    if (m.is_enum) {
        if (extra.n) sb_puts(&extra, ",");
        enum_json(&extra, &m, mem);
    }
    named_type_member(&extra, ft, path, extra.n > 0);

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
    /* Explicit: a netCDF variable with a _FillValue attribute (netCDF-C gives every other variable its
     * default fill in HDF5), or an HDF5 fill value the writer set. Zarr v2 gets no fill value (null)
     * where there is none explicit, so that readers that mask the v2 fill value (xarray) mask nothing
     * the HDF5 readers do not; Zarr v3 keeps the fill value (xarray masks by the attribute only). */
    int explicit_fill = g_netcdf ? H5Aexists(ds, "_FillValue") > 0 : fdef == H5D_FILL_VALUE_USER_DEFINED;
    int null_fill = g_format == 2 && !explicit_fill;
    /* zarrtoh5 gives a null fill netCDF's default fill (what netCDF-C writes without _FillValue); a plain
     * HDF5 dataset that had HDF5's default fill is recorded so, to come back with it */
    if (null_fill && !g_netcdf && fdef != H5D_FILL_VALUE_USER_DEFINED) {
        if (extra.n) sb_puts(&extra, ",");
        sb_puts(&extra, "\"hdf5_fill\":\"default\"");
    }

    const char *cname;
    int level;
    pick_codec(dcpl, path, &cname, &level);

    char *attrs = attrs_json(ds, path, named && g_format == 2 ? dn.p : NULL, extra.p, g_format == 3 && m.is_float);
    /* The array is described through libzarr's spec API: chunks, shards, the compressor (the codec
     * registry's), fill value, dimension names, attributes. The spec API makes no array of a type with
     * parameters (struct, null_terminated_bytes, v2 |S<n>): such an array's spec has a stand-in type and
     * the document libzarr writes for it gets the real data type and fill value (edited_document()). */
    int direct = !m.is_struct && !m.is_bytes;
    zarr_array_spec *spec = NULL;
    zcheck(zarr_array_spec_new(direct ? m.ztype : stand_in(&m), (size_t)rank, shape, &spec), "describing the array", path);
    zcheck(zarr_array_spec_set_zarr_format(spec, g_format), "describing the array", path);
    if (rank) zcheck(zarr_array_spec_set_chunks(spec, chunk, (size_t)rank), "the chunk shape", path);
    if (sharded) zcheck(zarr_array_spec_set_shards(spec, outer, (size_t)rank), "the shard shape", path);
    zcheck(zarr_array_spec_set_compressor(spec, cname, level), "the compressor", path);
    /* blosc shuffles bytes by element: nothing to shuffle in 1-byte or variable-length elements */
    if (m.is_vstr || m.size == 1) zcheck(zarr_array_spec_set_shuffle(spec, ZARR_SHUFFLE_NONE), "the shuffle", path);
    if (named && g_format == 3)
        zcheck(zarr_array_spec_set_dimension_names(spec, (const char *const *)names, (size_t)rank), "dimension names", path);
    zarr_array *za = NULL;
    if (direct && !null_fill) {
        /* variable-length strings keep the spec's fill value "" (HDF5 keeps none that h5py sets) */
        if (!m.is_vstr) zcheck(zarr_array_spec_set_fill_value(spec, fill, m.size), "the fill value", path);
        zcheck(zarr_array_spec_set_attributes(spec, attrs), "the attributes", path);
        zcheck(zarr_group_create_array_from_spec(zg, name, spec, &za), "creating the array", path);
    } else {
        char *md = edited_document(spec, &m, mem, fill, path, !direct, null_fill);
        zcheck(zarr_group_create_array(zg, name, md, &za), "creating the array", path);
        free(md);
        zcheck(zarr_array_set_attributes(za, attrs), "writing attributes", path);
    }
    zarr_array_spec_free(spec);
    free(attrs);
    free(dn.p);
    free(extra.p);
    for (int d = 0; named && d < rank; d++) free(names[d]);

    /* the data, one Zarr chunk (shard) at a time, over the HDF5 extent; beyond it (along an unlimited
     * dimension another dataset extended), the HDF5 fill value, which netCDF reads there: written where
     * the Zarr array has no fill value (null), else left to the Zarr fill value */
    uint64_t have[H5S_MAX_RANK], walk_to[H5S_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        have[d] = hd[d];
        walk_to[d] = null_fill ? shape[d] : hd[d];
    }
    chunk_walk walk;
    chunk_walk_init(&walk, za, (size_t)rank, walk_to, path);
    uint64_t start[H5S_MAX_RANK], count[H5S_MAX_RANK], idx = 0;
    void *buf = NULL;
    size_t cap = 0;
    while (chunk_walk_next(&walk, start, count)) {
        size_t nbytes = box_bytes((size_t)rank, count, m.size, path);
        if (nbytes > cap) { free(buf); buf = xmalloc(nbytes); cap = nbytes; }
        hid_t msp = rank ? H5Screate_simple(rank, (const hsize_t *)count, NULL) : H5Screate(H5S_SCALAR);
        int inside = 1, empty = 0; /* the region within the HDF5 extent; none of it */
        hsize_t hs[H5S_MAX_RANK], hn[H5S_MAX_RANK], zero[H5S_MAX_RANK] = {0};
        for (int d = 0; d < rank; d++) {
            hs[d] = start[d];
            hn[d] = start[d] >= have[d] ? 0 : count[d] < have[d] - start[d] ? count[d] : have[d] - start[d];
            inside &= hn[d] == count[d];
            empty |= hn[d] == 0;
        }
        if (!inside) { /* the fill value, then what the extent holds */
            static const char *const empty_str = "";
            for (size_t e = 0; e < nbytes / m.size; e++) {
                if (m.is_vstr) memcpy((char *)buf + e * m.size, &empty_str, sizeof empty_str);
                else memcpy((char *)buf + e * m.size, fill, m.size);
            }
            if (!empty) H5Sselect_hyperslab(msp, H5S_SELECT_SET, zero, NULL, hn, NULL);
            else H5Sselect_none(msp);
        }
        if (rank && !empty) H5Sselect_hyperslab(sp, H5S_SELECT_SET, hs, NULL, hn, NULL);
        if (!empty && H5Dread(ds, mem, msp, sp, H5P_DEFAULT, buf) < 0)
            die("%s: HDF5 could not read the data (a damaged or truncated file?)", path);
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
            if (!empty) H5Dvlen_reclaim(mem, msp, H5P_DEFAULT, buf); /* what HDF5 allocated: the selection */
            zcheck(zarr_write_region_vlen(za, start, count, offsets, data, total_len), "writing", path);
            free(offsets);
            free(data);
        } else {
            zcheck(zarr_write_hyperslab(za, start, count, NULL, NULL, m.ztype, buf, nbytes), "writing", path);
        }
        H5Sclose(msp);
        if (!g_quiet) progress(path, ++idx, walk.total);
    }
    free(buf);
    zcheck(zarr_close(za), "closing", path);
    free(fill);
    free(m.v3json);
    free(m.v2json);
    H5Tclose(mem);
    H5Tclose(ft);
    H5Sclose(sp);
    H5Pclose(dcpl);
}

#include "h5z_virtual.h"

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
        unsupported(child, info->type == H5L_TYPE_SOFT ? "a soft link has no Zarr form" : "an external link has no Zarr form");
    } else {
        H5O_info_t oi;
        if (H5Oget_info_by_name(g, name, &oi, H5P_DEFAULT) < 0) die("%s: HDF5 cannot inspect it", child);
        if (oi.type == H5O_TYPE_GROUP) {
            hid_t sub = H5Gopen2(g, name, H5P_DEFAULT);
            if (sub < 0) die("%s: HDF5 cannot open the group", child);
            if (g_virtual) {
                virtual_group(sub, child);
                convert_group(sub, NULL, child);
                H5Gclose(sub);
                free(child);
                return 0;
            }
            char *dims = group_record(sub, child);
            char *attrs = attrs_json(sub, child, NULL, dims, 0);
            zarr_group *zs = NULL;
            zcheck(zarr_group_create_group(c->zg, name, attrs, &zs), "creating the group", child);
            free(attrs);
            free(dims);
            convert_group(sub, zs, child);
            zarr_group_close(zs);
            H5Gclose(sub);
        } else if (oi.type == H5O_TYPE_DATASET) {
            hid_t ds = H5Dopen2(g, name, H5P_DEFAULT);
            if (ds < 0) die("%s: HDF5 cannot open the dataset", child);
            if (g_virtual) virtual_dataset(ds, child);
            else convert_dataset(ds, c->zg, name, child);
            H5Dclose(ds);
        } /* a named datatype: in the group's record (group_record()) */
    }
    free(child);
    return 0;
}

static void convert_group(hid_t g, zarr_group *zg, const char *path) {
    group_ctx c = {zg, path};
    hsize_t idx = 0;
    if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, link_cb, &c) < 0) die("%s: listing the group failed", path);
}

/* The innermost message of HDF5's error stack (why H5Fopen failed), e.g. "truncated file: eof = ...". */
static char g_h5err[256];
static herr_t h5err_cb(unsigned n, const H5E_error2_t *e, void *data) {
    (void)data;
    if (n == 0 && e->desc) snprintf(g_h5err, sizeof g_h5err, "%s", e->desc);
    return 0;
}

/* --virtual: the references into place. JSON: written to `tmp` and renamed over `out` (a file replaces
 * a file in one rename). Parquet: the JSON written inside the directory `tmp`, converted by libzarr into
 * the Parquet layout beside it, removed; then `tmp` renamed into place, an old output (--overwrite)
 * moved aside first and removed last. */
static void virtual_write(const char *out, const char *tmp, const char *old, int exists) {
    char *json = g_vparquet ? xmalloc(strlen(tmp) + 16) : xstrdup(tmp);
    if (g_vparquet) {
        if (mkdir(tmp, 0777) != 0) die("%s: %s", tmp, strerror(errno));
        sprintf(json, "%s/.refs.json", tmp);
    }
    FILE *jf = fopen(json, "wx");
    if (!jf) die("%s: %s", json, strerror(errno));
    int wrote = write_refs_json(jf);
    wrote = fflush(jf) == 0 && wrote && fsync(fileno(jf)) == 0;
    if (fclose(jf) != 0 || !wrote) die("%s: writing the references failed: %s", out, strerror(errno));
    if (g_vparquet) {
        zcheck(zarr_references_write_parquet(json, tmp, g_vrecord), "writing the Parquet references", out);
        if (unlink(json) != 0) die("%s: %s", json, strerror(errno));
    }
    free(json);
    sigset_t block, prev;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &prev);
    if (g_vparquet && exists && rename(out, old) != 0) die("%s: cannot move the old output aside: %s", out, strerror(errno));
    if (rename(tmp, out) != 0) {
        int e = errno;
        if (g_vparquet && exists) rename(old, out);
        die("%s: cannot rename the references into place: %s", out, strerror(e));
    }
    g_tmp_out = NULL;
    sigprocmask(SIG_SETMASK, &prev, NULL);
    if (g_vparquet && exists) rm_tree(old);
}

/* --version: libzarr's, the HDF5 library's (and the headers' it was built with), and the HDF5 call that
 * --virtual lists a dataset's chunks with (h5z_virtual.h: H5Dchunk_iter from HDF5 1.14 on). */
static void print_version(void) {
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    printf("h5tozarr (libzarr %s); HDF5 %u.%u.%u (built with %d.%d.%d); --virtual lists chunks with %s\n",
           zarr_version(), maj, min, rel, H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE, VIRTUAL_CHUNK_LISTING);
}

/* --virtual into an Icechunk repository (docs/icechunk.md, "h5tozarr --virtual into a repository"): the
 * reference set is written to a temporary JSON file, then libzarr writes it into the branch as Zarr v3 nodes
 * whose chunks are virtual chunk references and commits it as one snapshot
 * (zarr_icechunk_import_references). The repository gets a virtual chunk container for the directory of
 * the references' target (FILE.h5's directory as file:///DIR/, or --target-url's) unless it has one; a
 * repository that does not exist is created, and removed again when the run fails. */
static char *g_vi_created = NULL; /* the repository directory this run created */

static void virtual_icechunk_cleanup(void) {
    remove_tmp_out();
    if (g_vi_created) rm_tree(g_vi_created);
}

/* `s` with the bytes a URL path cannot hold percent-encoded (the rule of libzarr's target_url). */
static void url_path(sbuf *b, const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalnum(*p) || strchr("/-._~+,=@:", *p)) sb_printf(b, "%c", *p);
        else sb_printf(b, "%%%02X", *p);
    }
}

static int virtual_icechunk(const char *input, const char *location, const char *message, int overwrite) {
    /* the container: the directory of the target URL */
    sbuf url = {0};
    if (strstr(g_vtarget, "://")) sb_puts(&url, g_vtarget);
    else { sb_puts(&url, "file://"); url_path(&url, g_vtarget); }
    char *slash = strrchr(url.p, '/');
    if (!slash) die("%s: the target URL has no directory", url.p);
    slash[1] = 0;
    g_die_cleanup = virtual_icechunk_cleanup;
    int added = 0;
    zarr_status st = zarr_icechunk_add_virtual_container(location, NULL, url.p, &added);
    if (st == ZARR_ERR_NOT_FOUND) { /* no repository there: create one (in a new or empty directory) */
        size_t n = strcspn(location, "?");
        const char *bang = strstr(location, "!/");
        if (bang && (size_t)(bang - location) < n) n = (size_t)(bang - location);
        char *repo = xmalloc(n + 1);
        memcpy(repo, location, n);
        repo[n] = 0;
        struct stat rs;
        int existed = stat(repo + 11, &rs) == 0;
        zcheck(zarr_icechunk_create_repository(repo, NULL), "creating the Icechunk repository", repo);
        if (!existed && !strchr(repo, '%') && strncmp(repo + 11, "file:", 5)) g_vi_created = xstrdup(repo + 11);
        free(repo);
        st = zarr_icechunk_add_virtual_container(location, NULL, url.p, &added);
    }
    zcheck(st, "adding the virtual chunk container", url.p);
    if (added && !g_quiet) fprintf(stderr, "h5tozarr: %s: virtual chunk container %s added (readers authorize it)\n", location, url.p);

    /* the references as JSON in a temporary file */
    const char *dir = getenv("TMPDIR");
    char *json = xmalloc(strlen(dir && *dir ? dir : "/tmp") + 32);
    sprintf(json, "%s/h5tozarr-refs-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(json);
    if (fd < 0) die("%s: %s", json, strerror(errno));
    g_tmp_out = json;
    FILE *jf = fdopen(fd, "w");
    if (!jf) die("%s: %s", json, strerror(errno));
    int wrote = write_refs_json(jf);
    wrote = fflush(jf) == 0 && wrote;
    if (fclose(jf) != 0 || !wrote) die("%s: writing the references failed: %s", json, strerror(errno));

    sbuf msg = {0};
    if (message) sb_puts(&msg, message);
    else sb_printf(&msg, "h5tozarr --virtual %s", input);
    char *snapshot = NULL;
    zcheck(zarr_icechunk_import_references(json, location, NULL, msg.p, overwrite ? 1 : 0, &snapshot),
           "writing the references into the repository", location);
    g_tmp_out = NULL;
    g_vi_created = NULL;
    if (unlink(json) != 0) fprintf(stderr, "h5tozarr: warning: %s: %s\n", json, strerror(errno));
    if (!g_quiet) fprintf(stderr, "h5tozarr: %s: %zu keys, committed as snapshot %s\n", location, g_nvrefs, snapshot);
    zarr_string_free(snapshot);
    free(json);
    free(msg.p);
    free(url.p);
    return 0;
}

int main(int argc, char **argv) {
    g_prog = "h5tozarr";
    const char *pos[2];
    int npos = 0, overwrite = 0, format_given = 0;
    const char *message = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else if (!strcmp(a, "--version")) { print_version(); return 0; }
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) g_quiet = 1;
        else if (!strcmp(a, "--skip-unsupported")) g_skip_unsupported = 1;
        else if (!strcmp(a, "--overwrite")) overwrite = 1;
        else if (!strcmp(a, "--virtual")) g_virtual = 1;
        else if (!strcmp(a, "--parquet")) g_vparquet = 1;
        else if (!strcmp(a, "--record-size") && i + 1 < argc) {
            char *e;
            errno = 0;
            unsigned long long v = strtoull(argv[++i], &e, 10);
            if (*e || e == argv[i] || errno || v == 0 || v > 100000000ull) die("--record-size must be an integer in 1..100000000");
            g_vrecord = v;
        }
        else if (!strcmp(a, "--target-url") && i + 1 < argc) g_vtarget = argv[++i];
        else if (!strcmp(a, "--message") && i + 1 < argc) message = argv[++i];
        else if (!strcmp(a, "--format") && i + 1 < argc) {
            format_given = 1;
            g_format = atoi(argv[++i]);
            if (g_format != 2 && g_format != 3) die("--format must be 2 or 3");
        } else if (!strcmp(a, "--struct-type") && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "struct") && strcmp(v, "structured")) die("--struct-type must be struct or structured");
            g_struct = !strcmp(v, "struct");
        } else if (!strcmp(a, "--codec") && i + 1 < argc) {
            set_codec(argv[++i]);
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
    if (npos != 2) { usage(stderr); return 1; }
    if (g_shard_rank && g_format != 3 && !g_virtual) die("--shard needs --format 3");
    if ((g_vtarget || g_vparquet || g_vrecord) && !g_virtual) die("--target-url, --parquet and --record-size need --virtual");
    if (!g_virtual && !strncmp(pos[1], "icechunk://", 11))
        die("%s: h5tozarr writes into Icechunk repositories with --virtual (references into FILE.h5's chunks)", pos[1]);
    if (message && !(g_virtual && !strncmp(pos[1], "icechunk://", 11))) die("--message applies to --virtual into an icechunk:// output");
    if (g_virtual) {
        if ((format_given && g_format != 2) || g_codec || g_shard_rank || g_struct)
            die("--virtual references the file's own chunks as Zarr v2: --format 3, --codec, --shard and "
                "--struct-type do not apply");
        g_format = 2;
        g_vicechunk = !strncmp(pos[1], "icechunk://", 11);
        if (g_vicechunk && (g_vparquet || g_vrecord)) die("--parquet and --record-size do not apply to an icechunk:// output");
        const char *dot = g_vicechunk ? NULL : strrchr(pos[1], '.');
        if (dot && (!strcmp(dot, ".parq") || !strcmp(dot, ".parquet"))) g_vparquet = 1;
        if (!g_vicechunk && !g_vparquet && !(dot && !strcmp(dot, ".json")))
            die("%s: --virtual writes kerchunk references to a name ending in .json (JSON) or .parq / .parquet "
                "(the Parquet layout, also --parquet)", pos[1]);
        if (g_vrecord && !g_vparquet) die("--record-size applies to the Parquet layout only");
    }

    /* the output: the refusals of h5z_output.h (never the input, --overwrite replaces only a Zarr
     * hierarchy, the parent must exist); written under a temporary sibling name */
    struct stat in_st;
    if (stat(pos[0], &in_st) != 0) die("%s: %s", pos[0], strerror(errno));
    if (S_ISDIR(in_st.st_mode)) die("%s: is a directory, not an HDF5 file", pos[0]);
    out_path op;
    memset(&op, 0, sizeof op);
    int exists = 0;
    char *out = NULL, *tmp = NULL, *old = NULL;
    if (!g_vicechunk) {
        out_path_init(&op, pos[1]);
        remove_stale(&op, "h5tozarr");
        exists = g_virtual && g_vparquet
                     ? check_output(pos[0], &op, overwrite, is_reference_parquet, "a Parquet reference directory",
                                    "not a Parquet reference directory (.zmetadata, no .zgroup, .zarray or zarr.json)")
                 : g_virtual ? check_output(pos[0], &op, overwrite, is_reference_json, "a kerchunk JSON reference file",
                                          "not a kerchunk JSON reference file (an object starting with \"version\" or \"refs\")")
                           : check_output(pos[0], &op, overwrite, is_zarr_hierarchy, "a Zarr hierarchy",
                                          "not a Zarr hierarchy (no zarr.json, .zgroup or .zarray at its root)");
        out = op.path;
        tmp = temp_name(&op, "h5tozarr", "tmp");
        old = temp_name(&op, "h5tozarr", "old");
    }

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(pos[0], H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5err_cb, NULL);
        if (H5Fis_hdf5(pos[0]) <= 0) die("%s: not an HDF5 file (%s)", pos[0], g_h5err[0] ? g_h5err : "no HDF5 signature");
        die("%s: HDF5 cannot open it, a damaged or truncated file? (%s)", pos[0], g_h5err[0] ? g_h5err : "no detail");
    }
    hid_t root = H5Gopen2(f, "/", H5P_DEFAULT);
    if (root < 0) die("%s: HDF5 cannot open the root group", pos[0]);
    g_netcdf = H5Aexists(root, "_NCProperties") > 0;
    ds_scan(root);
    ds_phony_scan(root);

    g_tmp_out = tmp;
    g_die_cleanup = remove_tmp_out;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    if (g_virtual) {
        char *target = g_vtarget ? NULL : realpath(pos[0], NULL);
        if (!g_vtarget && !target) die("%s: %s", pos[0], strerror(errno));
        if (!g_vtarget) g_vtarget = target;
        virtual_group(root, "/");
        convert_group(root, NULL, "/");
        H5Gclose(root);
        if (H5Fclose(f) < 0) die("%s: closing the HDF5 file failed", pos[0]);
        if (g_vicechunk) {
            int rc = virtual_icechunk(pos[0], pos[1], message, overwrite);
            free(target);
            return rc;
        }
        virtual_write(out, tmp, old, exists);
        if (!g_quiet) fprintf(stderr, "h5tozarr: %s: %zu keys\n", out, g_nvrefs);
        free(target);
        free(tmp);
        free(old);
        out_path_free(&op);
        return 0;
    }
    char *dims = group_record(root, "/");
    char *attrs = attrs_json(root, "/", NULL, dims, 0);
    zarr_group *zg = NULL;
    zcheck(zarr_group_create_ex(tmp, attrs, g_format, &zg), "creating the Zarr group", out);
    free(attrs);
    free(dims);
    convert_group(root, zg, "/");
    /* consolidated metadata, as zarr-python writes it (xarray opens the hierarchy from it) */
    zcheck(zarr_group_consolidate(zg), "consolidating the metadata", out);
    zarr_group_close(zg);
    H5Gclose(root);
    if (H5Fclose(f) < 0) die("%s: closing the HDF5 file failed", pos[0]);

    /* into place: the old output (--overwrite) is moved aside first and removed last; no signal between */
    sigset_t block, prev;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &prev);
    if (exists && rename(out, old) != 0) die("%s: cannot move the old output aside: %s", out, strerror(errno));
    if (rename(tmp, out) != 0) {
        int e = errno;
        if (exists) rename(old, out);
        die("%s: cannot rename the new output into place: %s", out, strerror(e));
    }
    g_tmp_out = NULL;
    sigprocmask(SIG_SETMASK, &prev, NULL);
    if (exists) rm_tree(old);
    free(tmp);
    free(old);
    out_path_free(&op);
    return 0;
}
