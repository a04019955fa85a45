/* zarrtoh5: converts a Zarr hierarchy (v2 or v3) into a new HDF5 file, chunk by chunk, with netCDF-4's
 * dimensions (dimension scales), unlimited dimensions and typed attributes. See usage() and the
 * conventions in docs/hdf5-netcdf.md. */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include "h5zcommon.h"
#include "h5z_output.h"
#include <hdf5_hl.h>
#include "zarrtoh5_dims.h"
#include "zarrtoh5_named_types.h"

static const char *USAGE =
    "usage: zarrtoh5 [options] IN.zarr FILE.h5\n"
    "\n"
    "Converts a Zarr group (v2 or v3), its subgroups, arrays and attributes into a new HDF5 file that\n"
    "netCDF-4 reads with the same dimensions. A single Zarr array becomes the dataset named after IN.zarr\n"
    "(without \".zarr\"). FILE.h5's directory must exist. The file is written under a temporary name beside\n"
    "FILE.h5 and renamed into place at the end: a failed conversion leaves nothing behind (what a run\n"
    "killed by SIGKILL left, .zarrtoh5-tmp-HOST-PID-FILE.h5, the next run for FILE.h5 on that host removes).\n"
    "\n"
    "options:\n"
    "  --overwrite         replace FILE.h5 if it is an HDF5 file (atomically: it stays intact if the\n"
    "                      conversion fails); never the input, a link or a file that is not HDF5.\n"
    "                      Without it an existing FILE.h5 is refused\n"
    "  --skip-unsupported  skip arrays whose data type has no HDF5 counterpart (each is named on stderr);\n"
    "                      without it such an array is an error (exit status 2) and nothing is written\n"
    "  -q, --quiet         no progress line (it is shown only when stderr is a terminal)\n"
    "  -h, --help          this text\n"
    "\n";
/* The second half of the usage text (one literal would pass the 4095 characters C99 compilers must take). */
static const char *USAGE_CONVERTED =
    "What is converted (docs/hdf5-netcdf.md has the conventions):\n"
    "  arrays      bool (as h5py's boolean enum), int8..int64, uint8..uint64, float16, float32, float64,\n"
    "              stored little-endian; complex64 / complex128 (as h5py's compound {r, i}); structured\n"
    "              types (as compounds: their fields packed, subarray fields as 1-D HDF5 arrays; nested\n"
    "              structures are refused); integers with `_libzarr_hdf5.enum` (as that HDF5 enum);\n"
    "              null_terminated_bytes / |S<n> (as NUL-padded fixed-length strings); string and\n"
    "              fixed_length_utf32 / <U<n> (as UTF-8 variable-length strings; a NUL inside a string ends\n"
    "              it); r<N> (as an N/8-byte opaque type); shape; fill value; chunks (the inner chunks of a\n"
    "              sharded array; a chunk larger than a fixed dimension is cut to it, along an unlimited\n"
    "              dimension it stays). Compression: gzip\n"
    "              or zlib -> deflate at the same level; blosc -> deflate at its clevel, with the HDF5\n"
    "              shuffle filter when blosc shuffles; a numcodecs shuffle filter -> shuffle; any other\n"
    "              compressor (zstd, lz4, ...) -> deflate level 6; none -> no filter. A rank-0 array becomes\n"
    "              a scalar (contiguous) dataset. Other data types are refused by name.\n"
    "  dimensions  v3 dimension_names / v2 _ARRAY_DIMENSIONS become HDF5 dimension scales, attached as\n"
    "              netCDF-4 attaches them: a 1-D array named like its dimension is the scale (a coordinate\n"
    "              variable); any other dimension gets a netCDF dimension-only dataset. A dimension is\n"
    "              defined in the group of its coordinate variable or its `_libzarr_hdf5.dimensions` record,\n"
    "              else in the nearest group that uses it, and is visible in subgroups (netCDF scoping).\n"
    "              Its size is the arrays' (an error when two arrays disagree); a recorded dimension no\n"
    "              array uses keeps its recorded size. `_libzarr_hdf5.unlimited_dimensions` makes the\n"
    "              dimension unlimited (maximum size H5S_UNLIMITED) in every dataset that uses it.\n"
    "  attributes  with `_libzarr_hdf5.attribute_types`: that type (int16 stays int16, float32 stays\n"
    "              float32; \"char\" -> a fixed-length string, \"string\" -> variable-length; an\n"
    "              {\"enum\": ...} record -> that enum; a {\"compound\": ...} record -> that compound, each\n"
    "              element a JSON object by field). Without it:\n"
    "              JSON integers -> int64 (uint64 above its range); other numbers (also NaN, Infinity)\n"
    "              -> float64; strings -> UTF-8 variable-length strings; true/false -> h5py's boolean enum;\n"
    "              an array's _FillValue -> the array's data type (xarray's base64 form of a float fill\n"
    "              value is decoded). A JSON scalar -> a scalar attribute, a (nested) rectangular list ->\n"
    "              an attribute of that shape ([] -> an empty one); null -> an empty (null-space)\n"
    "              attribute; objects and mixed lists -> a string holding their JSON text.\n"
    "              _libzarr_hdf5 and _ARRAY_DIMENSIONS are read, never written.\n"
    "  data        copied one Zarr chunk (or shard) at a time: memory use is bounded by one chunk.\n"
    "\n"
    "exit status: 0 done; 1 error (nothing written); 2 an array has an unsupported data type (nothing\n"
    "written; see --skip-unsupported); 128+N the conversion was ended by signal N (nothing written).\n";

static int g_quiet = 0;
static int g_skip_unsupported = 0;
static int g_refused = 0;

static const char DIM_WITHOUT_VARIABLE[] = "This is a netCDF dimension but not a netCDF variable.";

/* ---- types ------------------------------------------------------------------------------------------ */
static const char *const TYPE_NAMES[] = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
    "float64", "complex64", "complex128", "raw bytes", "struct", "string", "bytes", "datetime64",
    "timedelta64", "fixed_length_utf32", "null_terminated_bytes", "bfloat16", "complex_float16",
    "complex_bfloat16", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu"};

static const char *type_name(zarr_data_type t) {
    return (size_t)t < sizeof TYPE_NAMES / sizeof *TYPE_NAMES ? TYPE_NAMES[t] : "a data type unknown here";
}

/* The numeric or bool type named `s` (as in attribute_types); -1 if it is not one. */
static int numeric_type_by_name(const char *s) {
    for (int t = ZARR_BOOL; t <= ZARR_FLOAT64; t++)
        if (!strcmp(s, TYPE_NAMES[t])) return t;
    return -1;
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

/* IEEE half precision (as h5py defines it), little-endian or native order. */
static hid_t f16_type(int native) {
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(t, 15, 10, 5, 0, 10);
    H5Tset_size(t, 2);
    H5Tset_ebias(t, 15);
    if (native) H5Tset_order(t, H5Tget_order(H5T_NATIVE_FLOAT));
    return t;
}

/* File (little-endian) and memory (native) types of one element of a plain type: bool, integers,
 * floats, complex. 0 when `zt` is not one of those. */
static int plain_types(zarr_data_type zt, hid_t *ft, hid_t *mt) {
    switch (zt) {
    case ZARR_BOOL: *ft = bool_type(); *mt = bool_type(); return 1;
    case ZARR_INT8: *ft = H5Tcopy(H5T_STD_I8LE); *mt = H5Tcopy(H5T_NATIVE_INT8); return 1;
    case ZARR_INT16: *ft = H5Tcopy(H5T_STD_I16LE); *mt = H5Tcopy(H5T_NATIVE_INT16); return 1;
    case ZARR_INT32: *ft = H5Tcopy(H5T_STD_I32LE); *mt = H5Tcopy(H5T_NATIVE_INT32); return 1;
    case ZARR_INT64: *ft = H5Tcopy(H5T_STD_I64LE); *mt = H5Tcopy(H5T_NATIVE_INT64); return 1;
    case ZARR_UINT8: *ft = H5Tcopy(H5T_STD_U8LE); *mt = H5Tcopy(H5T_NATIVE_UINT8); return 1;
    case ZARR_UINT16: *ft = H5Tcopy(H5T_STD_U16LE); *mt = H5Tcopy(H5T_NATIVE_UINT16); return 1;
    case ZARR_UINT32: *ft = H5Tcopy(H5T_STD_U32LE); *mt = H5Tcopy(H5T_NATIVE_UINT32); return 1;
    case ZARR_UINT64: *ft = H5Tcopy(H5T_STD_U64LE); *mt = H5Tcopy(H5T_NATIVE_UINT64); return 1;
    case ZARR_FLOAT16: *ft = f16_type(0); *mt = f16_type(1); return 1;
    case ZARR_FLOAT32: *ft = H5Tcopy(H5T_IEEE_F32LE); *mt = H5Tcopy(H5T_NATIVE_FLOAT); return 1;
    case ZARR_FLOAT64: *ft = H5Tcopy(H5T_IEEE_F64LE); *mt = H5Tcopy(H5T_NATIVE_DOUBLE); return 1;
    case ZARR_COMPLEX64:
    case ZARR_COMPLEX128: { /* h5py's complex: a compound {r, i} */
        int c64 = zt == ZARR_COMPLEX64;
        size_t esize = c64 ? 8 : 16;
        *ft = H5Tcreate(H5T_COMPOUND, esize);
        H5Tinsert(*ft, "r", 0, c64 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
        H5Tinsert(*ft, "i", esize / 2, c64 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
        *mt = H5Tcreate(H5T_COMPOUND, esize);
        H5Tinsert(*mt, "r", 0, c64 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE);
        H5Tinsert(*mt, "i", esize / 2, c64 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE);
        return 1;
    }
    default: return 0;
    }
}

static int is_integer(zarr_data_type t) { return t >= ZARR_INT8 && t <= ZARR_UINT64; }

/* Stores v into *dst as integer type t (native order). */
static void store_int(void *dst, zarr_data_type t, int64_t v) {
    switch (t) {
    case ZARR_INT8: *(int8_t *)dst = (int8_t)v; break;
    case ZARR_INT16: *(int16_t *)dst = (int16_t)v; break;
    case ZARR_INT32: *(int32_t *)dst = (int32_t)v; break;
    case ZARR_UINT8: *(uint8_t *)dst = (uint8_t)v; break;
    case ZARR_UINT16: *(uint16_t *)dst = (uint16_t)v; break;
    case ZARR_UINT32: *(uint32_t *)dst = (uint32_t)v; break;
    case ZARR_UINT64: *(uint64_t *)dst = (uint64_t)v; break;
    default: *(int64_t *)dst = v; break;
    }
}

/* ---- JSON attributes -> HDF5 attributes ------------------------------------------------------------ */
enum { K_NONE, K_INT, K_UINT, K_FLT, K_STR, K_BOOL };
static int g_negative;  /* shape_of saw a negative integer */
static int g_strfloat;  /* shape_of takes the strings "NaN", "Infinity", "-Infinity" as floats */

/* "NaN", "Infinity", "-Infinity" (Zarr's fill-value spelling) as a double. */
static int nonfinite_str(const jv *v, double *d) {
    if (v->t != J_STR) return 0;
    if (!strcmp(v->s, "NaN")) *d = NAN;
    else if (!strcmp(v->s, "Infinity")) *d = INFINITY;
    else if (!strcmp(v->s, "-Infinity")) *d = -INFINITY;
    else return 0;
    return 1;
}

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
    double d;
    int k = v->t == J_NUM ? (v->is_int ? K_INT : v->is_uint ? K_UINT : K_FLT)
          : v->t == J_STR ? (g_strfloat && nonfinite_str(v, &d) ? K_FLT : K_STR) : v->t == J_BOOL ? K_BOOL : -1;
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
    double d = v->d;
    switch (kind) {
    case K_INT: ((int64_t *)buf)[*k] = v->is_int ? v->i : v->is_uint ? (int64_t)v->u : (int64_t)v->d; break;
    case K_UINT: ((uint64_t *)buf)[*k] = v->is_uint ? v->u : v->is_int ? (uint64_t)v->i : (uint64_t)v->d; break;
    case K_FLT:
        if (v->t == J_STR) nonfinite_str(v, &d);
        ((double *)buf)[*k] = d;
        break;
    case K_BOOL: ((signed char *)buf)[*k] = (signed char)(v->t == J_BOOL ? v->i : v->d != 0); break;
    case K_STR: ((const char **)buf)[*k] = v->s; break;
    default: break;
    }
    (*k)++;
}

/* xarray writes a float _FillValue of a Zarr v3 array as the base64 text of its 8 little-endian
 * bytes; 1 with *d set when `s` is that. */
static int xarray_fill(const char *s, double *d) {
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char out[9];
    size_t n = 0, len = strlen(s);
    if (len != 12 || s[11] != '=') return 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < 11; i++) {
        const char *p = strchr(A, s[i]);
        if (!p || !s[i]) return 0;
        acc = (acc << 6) | (uint32_t)(p - A);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n < sizeof out) out[n++] = (unsigned char)(acc >> bits);
        }
    }
    if (n != 8) return 0;
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--) u = (u << 8) | out[i];
    memcpy(d, &u, 8);
    return 1;
}

/* The native HDF5 type of an attribute_types record of an enum or compound attribute (as h5tozarr and the
 * connector write them, docs/hdf5-netcdf.md): {"enum": {"base": "<integer type>", "members": {...}}} or
 * {"compound": [["<field>", <type name or record>], ...]} (packed); a field's type may also be a number
 * or "bool" name. -1 with the reason in msg when the record is not one of these. */
static hid_t record_type(const jv *rec, char *msg, size_t msz) {
    hid_t ft, mt;
    if (rec->t == J_STR) {
        int zt = numeric_type_by_name(rec->s);
        if (zt < 0 || !plain_types((zarr_data_type)zt, &ft, &mt)) {
            snprintf(msg, msz, "\"%s\" is not a number or bool type", rec->s);
            return -1;
        }
        H5Tclose(ft);
        return mt;
    }
    const jv *en = jv_get(rec, "enum"), *fields = jv_get(rec, "compound");
    if (rec->t == J_OBJ && en) {
        const jv *base = jv_get(en, "base"), *members = jv_get(en, "members");
        int zt = base && base->t == J_STR ? numeric_type_by_name(base->s) : -1;
        if (zt < 0 || !is_integer((zarr_data_type)zt) || !members || members->t != J_OBJ || !members->n) {
            snprintf(msg, msz, "an enum record needs an integer \"base\" and \"members\"");
            return -1;
        }
        plain_types((zarr_data_type)zt, &ft, &mt);
        hid_t out = H5Tenum_create(mt);
        H5Tclose(ft);
        H5Tclose(mt);
        for (size_t k = 0; k < members->n; k++) {
            const jv *val = &members->items[k];
            int64_t value[2] = {0, 0};
            if (val->t != J_NUM || !(val->is_int || val->is_uint)) {
                snprintf(msg, msz, "enum member '%s' has no integer value", members->keys[k]);
                H5Tclose(out);
                return -1;
            }
            store_int(value, (zarr_data_type)zt, val->is_int ? val->i : (int64_t)val->u);
            if (H5Tenum_insert(out, members->keys[k], value) < 0) {
                snprintf(msg, msz, "enum member '%s' could not be added (a repeated name or value?)", members->keys[k]);
                H5Tclose(out);
                return -1;
            }
        }
        return out;
    }
    if (rec->t != J_OBJ || !fields || fields->t != J_ARR || !fields->n) {
        snprintf(msg, msz, "the record is neither a type name, an enum nor a compound record");
        return -1;
    }
    hid_t *types = xmalloc(fields->n * sizeof *types);
    size_t total = 0, k;
    for (k = 0; k < fields->n; k++) {
        const jv *f = &fields->items[k];
        if (f->t != J_ARR || f->n != 2 || f->items[0].t != J_STR) {
            snprintf(msg, msz, "compound field %zu is not [name, type]", k);
            break;
        }
        if ((types[k] = record_type(&f->items[1], msg, msz)) < 0) break;
        total += H5Tget_size(types[k]);
    }
    hid_t out = -1;
    if (k == fields->n) {
        out = H5Tcreate(H5T_COMPOUND, total);
        size_t off = 0;
        for (size_t i = 0; i < fields->n && out >= 0; i++) {
            if (H5Tinsert(out, fields->items[i].items[0].s, off, types[i]) < 0) {
                snprintf(msg, msz, "compound field '%s' could not be added (a repeated name?)", fields->items[i].items[0].s);
                H5Tclose(out);
                out = -1;
            }
            off += H5Tget_size(types[i]);
        }
    }
    for (size_t i = 0; i < k; i++) H5Tclose(types[i]);
    free(types);
    return out;
}

/* The JSON value `v` as one element of the native type `t` (record_type) at p; 0 when it does not fit. */
static int record_value(hid_t t, const jv *v, unsigned char *p) {
    H5T_class_t cls = H5Tget_class(t);
    if (cls == H5T_COMPOUND) {
        if (v->t != J_OBJ) return 0;
        int n = H5Tget_nmembers(t), ok = 1;
        for (int i = 0; ok && i < n; i++) {
            char *mname = H5Tget_member_name(t, (unsigned)i);
            hid_t mt = H5Tget_member_type(t, (unsigned)i);
            const jv *fv = jv_get(v, mname);
            ok = fv && record_value(mt, fv, p + H5Tget_member_offset(t, (unsigned)i));
            H5free_memory(mname);
            H5Tclose(mt);
        }
        return ok;
    }
    if (cls == H5T_ENUM && H5Tget_size(t) == 1 && v->t == J_BOOL) { /* h5py's boolean */
        p[0] = (unsigned char)(v->i != 0);
        return 1;
    }
    hid_t num = cls == H5T_ENUM ? H5Tget_super(t) : H5Tcopy(t);
    unsigned char tmp[16] = {0};
    hid_t src;
    double d;
    if (v->t == J_NUM && H5Tget_class(num) == H5T_FLOAT) {
        memcpy(tmp, &v->d, sizeof v->d);
        src = H5T_NATIVE_DOUBLE;
    } else if (v->t == J_STR && H5Tget_class(num) == H5T_FLOAT && nonfinite_str(v, &d)) {
        memcpy(tmp, &d, sizeof d);
        src = H5T_NATIVE_DOUBLE;
    } else if (v->t == J_NUM && v->is_int) {
        memcpy(tmp, &v->i, 8);
        src = H5T_NATIVE_INT64;
    } else if (v->t == J_NUM && v->is_uint) {
        memcpy(tmp, &v->u, 8);
        src = H5T_NATIVE_UINT64;
    } else {
        H5Tclose(num);
        return 0;
    }
    int ok = H5Tconvert(src, num, 1, tmp, NULL, H5P_DEFAULT) >= 0;
    if (ok) memcpy(p, tmp, H5Tget_size(num));
    H5Tclose(num);
    return ok;
}

/* The leaves of a rectangular nest of arrays (leaves may be objects), in order, and its shape (`set`:
 * which dims are known); 0 when it is not rectangular. `leaves` NULL: only counted. */
static int record_leaves(const jv *v, int depth, int *rank, hsize_t *dims, int *set, const jv **leaves, size_t *n) {
    if (v->t == J_ARR) {
        if (depth >= 32 || (*rank >= 0 && depth >= *rank)) return 0;
        if (set[depth] && dims[depth] != v->n) return 0;
        dims[depth] = v->n;
        set[depth] = 1;
        if (v->n == 0) {
            if (*rank < 0) *rank = depth + 1;
            return *rank == depth + 1;
        }
        for (size_t k = 0; k < v->n; k++)
            if (!record_leaves(&v->items[k], depth + 1, rank, dims, set, leaves, n)) return 0;
        return 1;
    }
    if (*rank < 0) *rank = depth;
    if (*rank != depth) return 0;
    if (leaves) leaves[*n] = v;
    (*n)++;
    return 1;
}

/* Writes an enum or compound attribute `name` = `v` of the record `rec`. */
static void write_record_attr(hid_t obj, const char *name, const jv *v, const jv *rec, const char *path) {
    char msg[512];
    hid_t t = record_type(rec, msg, sizeof msg);
    if (t < 0) die("%s: attribute '%s': its record in _libzarr_hdf5.attribute_types: %s", path, name, msg);
    hid_t sp;
    unsigned char *buf = NULL;
    if (v->t == J_NULL) {
        sp = H5Screate(H5S_NULL);
    } else {
        int rank = -1, set[32] = {0};
        hsize_t dims[32] = {0};
        size_t n = 0;
        if (!record_leaves(v, 0, &rank, dims, set, NULL, &n))
            die("%s: attribute '%s' is not a rectangular nest of arrays", path, name);
        const jv **leaves = xmalloc((n ? n : 1) * sizeof *leaves);
        size_t m = 0;
        rank = -1;
        memset(set, 0, sizeof set);
        record_leaves(v, 0, &rank, dims, set, leaves, &m);
        size_t es = H5Tget_size(t);
        buf = xmalloc((n ? n : 1) * es);
        memset(buf, 0, (n ? n : 1) * es);
        for (size_t i = 0; i < n; i++)
            if (!record_value(t, leaves[i], buf + i * es))
                die("%s: attribute '%s': element %zu does not match its recorded type", path, name, i);
        free(leaves);
        sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    }
    hid_t named = open_named_type(obj, rec, H5Tget_class(t)); /* the attribute's named type, if committed */
    hid_t a = H5Acreate2(obj, name, named >= 0 ? named : t, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0 || (buf && H5Awrite(a, t, buf) < 0)) die("%s: attribute '%s' could not be written to HDF5", path, name);
    if (named >= 0) H5Tclose(named);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
    free(buf);
}

/* Writes attribute `name` = `v`; `tname` is its type from attribute_types (NULL: none). */
static void write_attr(hid_t obj, const char *name, const jv *v, const char *tname, const char *path) {
    int rank = -1, kind = K_NONE, dims_set[32] = {0};
    hsize_t dims[32];
    hid_t ft = -1, mt = -1, sp = -1;
    void *buf = NULL;
    char *text = NULL;
    int typed = tname ? numeric_type_by_name(tname) : -1;
    int is_char = tname && !strcmp(tname, "char");
    g_strfloat = typed >= ZARR_FLOAT16 && typed <= ZARR_FLOAT64;
    g_negative = 0;
    if (v->t == J_NULL) {
        if (typed < 0 || !plain_types((zarr_data_type)typed, &ft, &mt)) {
            ft = is_char ? H5Tcopy(H5T_C_S1) : tname && !strcmp(tname, "string") ? vstr_type() : H5Tcopy(H5T_IEEE_F64LE);
            mt = H5Tcopy(ft);
        }
        sp = H5Screate(H5S_NULL);
    } else if (is_char && v->t == J_STR) { /* netCDF NC_CHAR: one fixed-length string */
        ft = H5Tcopy(H5T_C_S1);
        H5Tset_size(ft, v->len ? v->len : 1);
        H5Tset_strpad(ft, H5T_STR_NULLTERM);
        for (size_t i = 0; i < v->len; i++)
            if ((unsigned char)v->s[i] >= 0x80) { H5Tset_cset(ft, H5T_CSET_UTF8); break; }
        mt = H5Tcopy(ft);
        sp = v->len ? H5Screate(H5S_SCALAR) : H5Screate(H5S_NULL);
        buf = xmalloc(v->len + 1);
        memcpy(buf, v->s, v->len + 1);
    } else if (shape_of(v, 0, &rank, dims, dims_set, &kind)) {
        hssize_t n = 1;
        for (int d = 0; d < rank; d++) n *= (hssize_t)dims[d];
        if (kind == K_NONE) kind = K_FLT; /* [] */
        int numeric = kind == K_INT || kind == K_UINT || kind == K_FLT;
        if (typed >= 0 && ((typed == ZARR_BOOL && (kind == K_BOOL || kind == K_INT)) || (typed != ZARR_BOOL && numeric))) {
            /* the recorded type: values in a wide native buffer, HDF5 converts them to it */
            plain_types((zarr_data_type)typed, &ft, &mt);
            H5Tclose(mt);
            if (typed == ZARR_BOOL) { kind = K_BOOL; mt = bool_type(); }
            else if (typed >= ZARR_FLOAT16) { kind = K_FLT; mt = H5Tcopy(H5T_NATIVE_DOUBLE); }
            else if (kind == K_UINT || (typed == ZARR_UINT64 && !g_negative)) {
                kind = K_UINT;
                mt = H5Tcopy(H5T_NATIVE_UINT64);
            }
            else { kind = K_INT; mt = H5Tcopy(H5T_NATIVE_INT64); }
        } else {
            switch (kind) {
            case K_INT: ft = H5Tcopy(H5T_STD_I64LE); mt = H5Tcopy(H5T_NATIVE_INT64); break;
            case K_UINT: ft = H5Tcopy(H5T_STD_U64LE); mt = H5Tcopy(H5T_NATIVE_UINT64); break;
            case K_FLT: ft = H5Tcopy(H5T_IEEE_F64LE); mt = H5Tcopy(H5T_NATIVE_DOUBLE); break;
            case K_BOOL: ft = bool_type(); mt = bool_type(); break;
            default: ft = vstr_type(); mt = vstr_type(); break;
            }
        }
        buf = xmalloc((size_t)n * 8);
        size_t k = 0;
        flatten(v, kind, buf, &k);
        sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    } else {
        /* objects and mixed arrays: their JSON text as a string */
        ft = vstr_type();
        mt = vstr_type();
        sp = H5Screate(H5S_SCALAR);
        text = xmalloc(v->raw_len + 1);
        memcpy(text, v->raw, v->raw_len);
        text[v->raw_len] = 0;
        buf = xmalloc(sizeof(char *));
        memcpy(buf, &text, sizeof(char *));
    }
    hid_t a = H5Acreate2(obj, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a < 0 || (buf && H5Awrite(a, mt, buf) < 0))
        die("%s: attribute '%s' could not be written to HDF5", path, name);
    H5Aclose(a);
    free(buf);
    free(text);
    H5Tclose(ft);
    H5Tclose(mt);
    H5Sclose(sp);
}

/* Attributes never copied: libzarr's record, xarray's dimension names, and what HDF5's dimension scales
 * and netCDF-4 keep for themselves (`scale`: also CLASS and NAME, which H5DSset_scale writes). */
static int reserved_attr(const char *name, int scale) {
    static const char *const R[] = {"_libzarr_hdf5", "_ARRAY_DIMENSIONS", "DIMENSION_LIST", "REFERENCE_LIST",
                                    "_Netcdf4Coordinates", "_Netcdf4Dimid", "_NCProperties", "_nc3_strict",
                                    "_IsNetcdf4"};
    for (size_t k = 0; k < sizeof R / sizeof *R; k++)
        if (!strcmp(name, R[k])) return 1;
    return scale && (!strcmp(name, "CLASS") || !strcmp(name, "NAME"));
}

/* Writes the attributes in `o` (a JSON object) to `obj`. `fill_type` is the array's data type (the
 * type of an untyped _FillValue), or -1. */
static void write_attrs(hid_t obj, const jv *o, const char *path, int fill_type, int scale) {
    const jv *types = jv_get(jv_get(o, "_libzarr_hdf5"), "attribute_types");
    for (size_t k = 0; k < o->n; k++) {
        const char *name = o->keys[k];
        const jv *v = &o->items[k];
        if (reserved_attr(name, scale)) continue;
        const jv *t = jv_get(types, name);
        const char *tname = t && t->t == J_STR ? t->s : NULL;
        jv fill = {0};
        if (!strcmp(name, "_FillValue")) { /* in the array's type unless recorded; xarray's base64 decoded */
            if (!tname && fill_type >= ZARR_INT8 && fill_type <= ZARR_FLOAT64) tname = TYPE_NAMES[fill_type];
            int t = tname ? numeric_type_by_name(tname) : -1;
            if (v->t == J_STR && t >= ZARR_FLOAT16 && t <= ZARR_FLOAT64 && xarray_fill(v->s, &fill.d)) {
                fill.t = J_NUM;
                v = &fill;
            }
        }
        if (t && t->t == J_OBJ) write_record_attr(obj, name, v, t, path);
        else write_attr(obj, name, v, tname, path);
    }
}

/* Parses attributes; the values point into `json`: free it (zarr_string_free) after jv_free. The record
 * `_libzarr_hdf5` is a string holding JSON text as h5tozarr writes it (or, as earlier versions and the
 * connector wrote it, the object itself): a string is parsed in place, so that every reader below sees
 * the object. */
static void parse_attrs(char *json, jv *o, const char *path) {
    jv_parse(json, o, path);
    if (o->t != J_OBJ) die("%s: attributes are not a JSON object", path);
    for (size_t k = 0; k < o->n; k++) {
        jv *it = &o->items[k];
        if (strcmp(o->keys[k], "_libzarr_hdf5") || it->t != J_STR) continue;
        char *text = it->s;
        jv rec;
        jparser q = {text, text + it->len, NULL, 0};
        int ok = j_value(&q, &rec);
        j_ws(&q);
        if (!ok || q.p != q.end || rec.t != J_OBJ) { /* not a record: left as text, which no reader uses */
            fprintf(stderr, "zarrtoh5: %s: the attribute _libzarr_hdf5 is not a JSON object: ignored\n", path);
            jv_free(&rec);
            continue;
        }
        *it = rec;
        it->s = text; /* the parsed values point into it; jv_free frees it with them */
    }
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

/* netCDF's default fill value of a numeric Zarr type (netcdf.h's NC_FILL_*; netCDF-C writes it as the HDF5
 * fill value of a variable without _FillValue) into out (the type's native layout); 0 for other types. */
static int netcdf_default_fill(zarr_data_type zt, void *out) {
    switch (zt) {
    case ZARR_INT8: { int8_t v = -127; memcpy(out, &v, 1); return 1; }
    case ZARR_UINT8: { uint8_t v = 255; memcpy(out, &v, 1); return 1; }
    case ZARR_INT16: { int16_t v = -32767; memcpy(out, &v, 2); return 1; }
    case ZARR_UINT16: { uint16_t v = 65535; memcpy(out, &v, 2); return 1; }
    case ZARR_INT32: { int32_t v = -2147483647; memcpy(out, &v, 4); return 1; }
    case ZARR_UINT32: { uint32_t v = 4294967295u; memcpy(out, &v, 4); return 1; }
    case ZARR_INT64: { int64_t v = -9223372036854775806LL; memcpy(out, &v, 8); return 1; }
    case ZARR_UINT64: { uint64_t v = 18446744073709551614ULL; memcpy(out, &v, 8); return 1; }
    case ZARR_FLOAT32: { float v = 9.9692099683868690e+36f; memcpy(out, &v, 4); return 1; }
    case ZARR_FLOAT64: { double v = 9.9692099683868690e+36; memcpy(out, &v, 8); return 1; }
    default: return 0;
    }
}

/* How one array's elements become HDF5 elements. */
enum { C_PLAIN, C_VSTR, C_UTF32, C_FIXED, C_OPAQUE, C_STRUCT, C_ENUM };
typedef struct {
    int conv;
    hid_t ft, mt;               /* file and memory types */
    zarr_data_type zt, buffer;  /* the array's type; the type libzarr reads it as */
    size_t esize;               /* bytes of one element as libzarr reads it */
} elem_conv;

static void conv_close(elem_conv *c) {
    if (c->ft >= 0) H5Tclose(c->ft);
    if (c->mt >= 0) H5Tclose(c->mt);
    c->ft = c->mt = -1;
}

/* A subarray member: `bf`/`bm` made an HDF5 array of shape `shape` (a JSON list; NULL or unusable: 1-D
 * of n items). Closes the base types. */
static void array_member(hid_t *bf, hid_t *bm, size_t n, const jv *shape) {
    hsize_t dims[32] = {n};
    unsigned rank = 1;
    if (shape && shape->t == J_ARR && shape->n >= 1 && shape->n <= 32) {
        uint64_t prod = 1;
        for (size_t d = 0; d < shape->n; d++) {
            const jv *e = &shape->items[d];
            if (e->t != J_NUM || !e->is_int || e->i <= 0) { prod = 0; break; }
            dims[d] = (hsize_t)e->i;
            prod *= (uint64_t)e->i;
        }
        if (prod == n) rank = (unsigned)shape->n;
        else dims[0] = n;
    }
    hid_t af = H5Tarray_create2(*bf, rank, dims), am = H5Tarray_create2(*bm, rank, dims);
    H5Tclose(*bf);
    H5Tclose(*bm);
    *bf = af;
    *bm = am;
}

static int meta_compound(const jv *fields, hid_t *ft, hid_t *mt, const char *where, char *msg, size_t msz);

/* An element type from Zarr metadata: a v2 typestr ("<i4", "|S3") or field list, a v3 name ("int32",
 * "r24") or object ({"name": "struct", ...}, null_terminated_bytes, raw_bytes). libzarr's field API
 * describes a nested structure only as ZARR_STRUCT; this builds its members. */
static int meta_type(const jv *dt, hid_t *ft, hid_t *mt, const char *where, char *msg, size_t msz) {
    *ft = *mt = -1;
    int zt = -1;
    long n = 0;
    if (dt->t == J_ARR) return meta_compound(dt, ft, mt, where, msg, msz);
    if (dt->t == J_STR && dt->len >= 2 && strchr("<>|=", dt->s[0])) { /* v2 typestr */
        n = strtol(dt->s + 2, NULL, 10);
        switch (dt->s[1]) {
        case 'b': zt = n == 1 ? ZARR_BOOL : -1; break;
        case 'i': zt = n == 1 ? ZARR_INT8 : n == 2 ? ZARR_INT16 : n == 4 ? ZARR_INT32 : n == 8 ? ZARR_INT64 : -1; break;
        case 'u': zt = n == 1 ? ZARR_UINT8 : n == 2 ? ZARR_UINT16 : n == 4 ? ZARR_UINT32 : n == 8 ? ZARR_UINT64 : -1; break;
        case 'f': zt = n == 2 ? ZARR_FLOAT16 : n == 4 ? ZARR_FLOAT32 : n == 8 ? ZARR_FLOAT64 : -1; break;
        case 'c': zt = n == 8 ? ZARR_COMPLEX64 : n == 16 ? ZARR_COMPLEX128 : -1; break;
        case 'S': zt = n > 0 ? ZARR_NULL_TERMINATED_BYTES : -1; break;
        case 'V': zt = n > 0 ? ZARR_RAW : -1; break;
        default: break;
        }
    } else if (dt->t == J_STR) { /* v3 name */
        for (int t = ZARR_BOOL; t <= ZARR_COMPLEX128; t++)
            if (!strcmp(dt->s, TYPE_NAMES[t])) zt = t;
        if (dt->s[0] == 'r' && (n = strtol(dt->s + 1, NULL, 10)) > 0 && n % 8 == 0) { zt = ZARR_RAW; n /= 8; }
    } else if (dt->t == J_OBJ) {
        const jv *name = jv_get(dt, "name"), *cfg = jv_get(dt, "configuration");
        const jv *len = jv_get(cfg, "length_bytes");
        const char *nm = name && name->t == J_STR ? name->s : "";
        if (!strcmp(nm, "struct") || !strcmp(nm, "structured")) {
            const jv *fields = jv_get(cfg, "fields");
            if (fields && fields->t == J_ARR) return meta_compound(fields, ft, mt, where, msg, msz);
        } else if (len && len->t == J_NUM && len->is_int && len->i > 0) {
            n = (long)len->i;
            zt = !strcmp(nm, "null_terminated_bytes") ? ZARR_NULL_TERMINATED_BYTES : !strcmp(nm, "raw_bytes") ? ZARR_RAW : -1;
        }
    }
    if (zt == ZARR_NULL_TERMINATED_BYTES || zt == ZARR_RAW) {
        *ft = zt == ZARR_RAW ? H5Tcreate(H5T_OPAQUE, (size_t)n) : H5Tcopy(H5T_C_S1);
        if (zt != ZARR_RAW) { H5Tset_size(*ft, (size_t)n); H5Tset_strpad(*ft, H5T_STR_NULLPAD); }
        *mt = H5Tcopy(*ft);
        return 1;
    }
    if (zt >= 0 && plain_types((zarr_data_type)zt, ft, mt)) return 1;
    snprintf(msg, msz, "compound member '%s' of type %.*s is not supported", where,
             (int)(dt->raw_len < 80 ? dt->raw_len : 80), dt->raw);
    return 0;
}

/* A packed compound from a field list: v2 [[name, type(, shape)], ...] or v3 [{"name", "data_type"}, ...]. */
static int meta_compound(const jv *fields, hid_t *ft, hid_t *mt, const char *where, char *msg, size_t msz) {
    size_t nf = fields->n, total = 0;
    hid_t *bf = xmalloc((nf + 1) * sizeof *bf), *bm = xmalloc((nf + 1) * sizeof *bm);
    const char **names = xmalloc((nf + 1) * sizeof *names);
    int ok = 1;
    size_t k = 0;
    for (; k < nf && ok; k++) {
        const jv *f = &fields->items[k], *name = NULL, *dt = NULL, *shape = NULL;
        if (f->t == J_ARR && f->n >= 2) { name = &f->items[0]; dt = &f->items[1]; shape = f->n > 2 ? &f->items[2] : NULL; }
        else if (f->t == J_OBJ) { name = jv_get(f, "name"); dt = jv_get(f, "data_type"); }
        if (!name || name->t != J_STR || !dt) {
            snprintf(msg, msz, "a member of compound '%s' has no name or type in the metadata", where);
            ok = 0;
            break;
        }
        names[k] = name->s;
        if (!meta_type(dt, &bf[k], &bm[k], name->s, msg, msz)) { ok = 0; break; }
        if (shape && shape->t == J_ARR && shape->n) {
            size_t items = 1;
            for (size_t d = 0; d < shape->n; d++) {
                const jv *e = &shape->items[d];
                items *= e->t == J_NUM && e->is_int && e->i > 0 ? (size_t)e->i : 0;
            }
            array_member(&bf[k], &bm[k], items, shape);
        }
        total += H5Tget_size(bf[k]);
    }
    if (ok) {
        *ft = H5Tcreate(H5T_COMPOUND, total ? total : 1);
        *mt = H5Tcreate(H5T_COMPOUND, total ? total : 1);
        size_t off = 0;
        for (size_t i = 0; i < k; i++) {
            H5Tinsert(*ft, names[i], off, bf[i]);
            H5Tinsert(*mt, names[i], off, bm[i]);
            off += H5Tget_size(bf[i]);
        }
    }
    for (size_t i = 0; i < k; i++) {
        if (bf[i] >= 0) H5Tclose(bf[i]);
        if (bm[i] >= 0) H5Tclose(bm[i]);
    }
    free(bf);
    free(bm);
    free(names);
    return ok;
}

/* Compound types for a ZARR_STRUCT array; 0 with `msg` naming the member that has no HDF5 form. */
static int struct_types(zarr_array *za, const jv *md, elem_conv *c, char *msg, size_t msz) {
    size_t nf = 0;
    zcheck(zarr_array_num_fields(za, &nf), "fields", "struct");
    const jv *v2dtype = jv_get(md, "dtype");
    const jv *v3fields = jv_get(jv_get(jv_get(md, "data_type"), "configuration"), "fields");
    c->ft = H5Tcreate(H5T_COMPOUND, c->esize);
    c->mt = H5Tcreate(H5T_COMPOUND, c->esize);
    for (size_t i = 0; i < nf; i++) {
        const char *fname;
        zarr_data_type fdt;
        size_t off, fsz;
        zcheck(zarr_array_field(za, i, &fname, &fdt, &off, &fsz), "fields", "struct");
        hid_t bf, bm;
        /* the field's metadata: v2 [name, type(, shape)], v3 {"name", "data_type"} or [name, type] */
        const jv *fm = NULL, *shape = NULL;
        if (v2dtype && v2dtype->t == J_ARR && i < v2dtype->n && v2dtype->items[i].t == J_ARR && v2dtype->items[i].n >= 2) {
            fm = &v2dtype->items[i].items[1];
            shape = v2dtype->items[i].n > 2 ? &v2dtype->items[i].items[2] : NULL;
        } else if (v3fields && v3fields->t == J_ARR && i < v3fields->n) {
            const jv *f = &v3fields->items[i];
            fm = f->t == J_OBJ ? jv_get(f, "data_type") : f->t == J_ARR && f->n >= 2 ? &f->items[1] : NULL;
        }
        /* libzarr reads a v2 |S<n> field as r<8n>: a fixed-length string all the same */
        if (fdt == ZARR_RAW && fm && fm->t == J_STR && (!strncmp(fm->s, "|S", 2) || fm->s[0] == 'S'))
            fdt = ZARR_NULL_TERMINATED_BYTES;
        if (fdt == ZARR_STRUCT) { /* nested: its members from the metadata */
            if (!fm) {
                snprintf(msg, msz, "compound member '%s' is a nested structure the metadata does not describe", fname);
                return 0;
            }
            if (!meta_type(fm, &bf, &bm, fname, msg, msz)) return 0;
        } else if (plain_types(fdt, &bf, &bm)) {
        } else if (fdt == ZARR_NULL_TERMINATED_BYTES || fdt == ZARR_RAW) {
            size_t bs = fsz;
            if (fm && fm->t == J_STR && fm->len > 2 && strchr("<>|", fm->s[0])) bs = (size_t)strtol(fm->s + 2, NULL, 10);
            if (!bs || fsz % bs) bs = fsz;
            bf = fdt == ZARR_RAW ? H5Tcreate(H5T_OPAQUE, bs) : H5Tcopy(H5T_C_S1);
            if (fdt != ZARR_RAW) { H5Tset_size(bf, bs); H5Tset_strpad(bf, H5T_STR_NULLPAD); }
            bm = H5Tcopy(bf);
        } else {
            snprintf(msg, msz, "compound member '%s' of type %s is not supported", fname, type_name(fdt));
            return 0;
        }
        size_t bs = H5Tget_size(bf);
        if (fsz != bs) { /* a subarray field: its items in C order, as an HDF5 array (its v2 shape) */
            if (!bs || fsz % bs) {
                snprintf(msg, msz, "compound member '%s' has %zu bytes, not a whole number of %zu-byte items", fname,
                         fsz, bs);
                H5Tclose(bf);
                H5Tclose(bm);
                return 0;
            }
            array_member(&bf, &bm, fsz / bs, shape);
        }
        if (H5Tinsert(c->ft, fname, off, bf) < 0 || H5Tinsert(c->mt, fname, off, bm) < 0) {
            snprintf(msg, msz, "compound member '%s' could not be made an HDF5 member", fname);
            return 0;
        }
        H5Tclose(bf);
        H5Tclose(bm);
    }
    return 1;
}

static int array_conv_types(zarr_array *za, const jv *attrs, elem_conv *c, int v2bytes, const jv *md, char *msg,
                            size_t msz);

/* The conversion of `za`'s elements; 0 with `msg` saying why there is none. `attrs`: its attributes. */
static int array_conv(zarr_array *za, const jv *attrs, elem_conv *c, char *msg, size_t msz) {
    memset(c, 0, sizeof *c);
    c->ft = c->mt = -1;
    zcheck(zarr_array_data_type(za, &c->zt, &c->esize), "data type", "array");
    c->buffer = c->zt;
    char *mdtext = NULL;
    zcheck(zarr_array_metadata(za, &mdtext), "metadata", "array");
    jv md;
    jv_parse(mdtext, &md, "array metadata");
    const jv *v2dtype = jv_get(&md, "dtype");
    /* libzarr reads a v2 |S<n> array as r<8n>: a fixed-length string all the same */
    int v2bytes = c->zt == ZARR_RAW && v2dtype && v2dtype->t == J_STR &&
                  ((v2dtype->s[0] == '|' && v2dtype->s[1] == 'S') || v2dtype->s[0] == 'S');
    int ok = array_conv_types(za, attrs, c, v2bytes, &md, msg, msz);
    jv_free(&md);
    zarr_string_free(mdtext);
    return ok;
}

static int array_conv_types(zarr_array *za, const jv *attrs, elem_conv *c, int v2bytes, const jv *md, char *msg,
                            size_t msz) {
    const jv *en = jv_get(jv_get(attrs, "_libzarr_hdf5"), "enum");
    if (en && is_integer(c->zt)) { /* an HDF5 enum: the base integers and the recorded names */
        const jv *members = jv_get(en, "members");
        if (!members || members->t != J_OBJ) {
            snprintf(msg, msz, "_libzarr_hdf5.enum has no \"members\" object");
            return 0;
        }
        hid_t bf, bm;
        plain_types(c->zt, &bf, &bm);
        c->ft = H5Tenum_create(bf);
        c->mt = H5Tenum_create(bm);
        H5Tclose(bf);
        H5Tclose(bm);
        for (size_t k = 0; k < members->n; k++) {
            const jv *val = &members->items[k];
            int64_t value[2] = {0, 0};
            if (val->t != J_NUM || !(val->is_int || val->is_uint)) {
                snprintf(msg, msz, "enum member '%s' has no integer value", members->keys[k]);
                return 0;
            }
            store_int(value, c->zt, val->is_int ? val->i : (int64_t)val->u);
            if (H5Tenum_insert(c->ft, members->keys[k], value) < 0 || H5Tenum_insert(c->mt, members->keys[k], value) < 0) {
                snprintf(msg, msz, "enum member '%s' could not be added (a repeated name or value?)", members->keys[k]);
                return 0;
            }
        }
        c->conv = C_ENUM;
        return 1;
    }
    if (plain_types(c->zt, &c->ft, &c->mt)) {
        c->conv = C_PLAIN;
        return 1;
    }
    switch (c->zt) {
    case ZARR_STRING:
    case ZARR_FIXED_UTF32:
        c->ft = vstr_type();
        c->mt = vstr_type();
        c->conv = c->zt == ZARR_STRING ? C_VSTR : C_UTF32;
        return 1;
    case ZARR_NULL_TERMINATED_BYTES:
    case ZARR_RAW:
        if (c->zt == ZARR_RAW && !v2bytes) {
            c->ft = H5Tcreate(H5T_OPAQUE, c->esize);
            c->conv = C_OPAQUE;
        } else {
            c->ft = H5Tcopy(H5T_C_S1);
            H5Tset_size(c->ft, c->esize);
            H5Tset_strpad(c->ft, H5T_STR_NULLPAD);
            c->conv = C_FIXED;
        }
        c->mt = H5Tcopy(c->ft);
        return 1;
    case ZARR_STRUCT:
        c->conv = C_STRUCT;
        if (struct_types(za, md, c, msg, msz)) return 1;
        conv_close(c);
        return 0;
    default:
        snprintf(msg, msz, "its data type %s has no HDF5 counterpart here", type_name(c->zt));
        return 0;
    }
}

/* UTF-32 code units (n of them, NUL-padded) as UTF-8 into b. */
static void utf32_to_utf8(sbuf *b, const uint32_t *u, size_t n) {
    for (size_t i = 0; i < n && u[i]; i++) put_utf8(b, u[i] < 0x110000 ? u[i] : 0xFFFD);
}

static void convert_array(zarr_array *za, hid_t parent, const char *name, const char *path, const int *unlimited,
                          int scale) {
    size_t rank;
    zcheck(zarr_array_rank(za, &rank), "rank", path);
    char *mdtext = NULL;
    zcheck(zarr_array_metadata(za, &mdtext), "metadata", path);
    jv md;
    jv_parse(mdtext, &md, path);
    int level, shuffle;
    pick_filters(&md, &level, &shuffle);
    /* Zarr v2's `fill_value: null` (no fill value, as h5tozarr writes a netCDF variable without _FillValue):
     * no _FillValue and netCDF's default fill as the HDF5 fill (below); a fill of 0 would read in netCDF
     * as the variable's fill value 0 */
    const jv *fvj = jv_get(&md, "fill_value");
    int null_fill = fvj && fvj->t == J_NULL;
    jv_free(&md);
    zarr_string_free(mdtext);
    char *attrtext = NULL;
    zcheck(zarr_array_attributes(za, &attrtext), "attributes", path);
    jv attrs;
    parse_attrs(attrtext, &attrs, path);
    elem_conv c;
    char msg[256];
    if (!array_conv(za, &attrs, &c, msg, sizeof msg)) die("%s: %s", path, msg);
    hid_t named = open_named_type(parent, jv_get(&attrs, "_libzarr_hdf5"), H5Tget_class(c.ft));
    if (named >= 0) { /* the dataset takes its named type (HDF5 converts the members by name) */
        H5Tclose(c.ft);
        c.ft = named;
    }
    int vlen = c.conv == C_VSTR || c.conv == C_UTF32;
    size_t hsize = vlen ? sizeof(char *) : c.esize; /* one element in HDF5's memory type */
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
    uint64_t cbytes = hsize;
    for (size_t d = 0; d < rank; d++) {
        dims[d] = shape[d];
        maxdims[d] = shape[d] && !unlimited[d] ? shape[d] : H5S_UNLIMITED;
        /* a chunk larger than a fixed dimension is cut to it (HDF5 wants that); along an unlimited one (or
         * of size 0, made unlimited) it stays as written: the array is meant to grow into it */
        hchunk[d] = shape[d] == 0 || unlimited[d] || inner[d] < shape[d] ? inner[d] : shape[d];
        cbytes *= hchunk[d];
    }
    for (size_t d = 0; d < rank && cbytes >= (1ull << 32) - 1; d++) /* HDF5's chunk limit: 4 GiB */
        while (hchunk[d] > 1 && cbytes >= (1ull << 32) - 1) {
            cbytes = cbytes / hchunk[d] * ((hchunk[d] + 1) / 2);
            hchunk[d] = (hchunk[d] + 1) / 2;
        }
    const jv *rec0 = jv_get(&attrs, "_libzarr_hdf5"), *hf = rec0 ? jv_get(rec0, "hdf5_fill") : NULL;
    if (null_fill && hf && hf->t == J_STR && !strcmp(hf->s, "default")) {
        /* a plain HDF5 dataset with HDF5's default fill (h5tozarr's record): that again */
    } else if (null_fill) {
        /* no _FillValue: the HDF5 fill value netCDF-C writes for such a variable, netCDF's default fill of
         * the type (NC_FILL_*; "" for strings, NUL for chars), so netCDF reads it as it reads a variable it
         * wrote without _FillValue (nc_inq_var_fill); other types keep HDF5's default (zeros) */
        unsigned char nfill[8];
        char *empty = "";
        if (c.conv == C_PLAIN && c.esize <= sizeof nfill && netcdf_default_fill(c.zt, nfill))
            H5Pset_fill_value(dcpl, c.mt, nfill);
        else if (c.conv == C_VSTR || c.conv == C_UTF32)
            H5Pset_fill_value(dcpl, c.mt, &empty);
        else if (c.conv == C_FIXED) {
            unsigned char *zero = xmalloc(c.esize);
            memset(zero, 0, c.esize);
            H5Pset_fill_value(dcpl, c.mt, zero);
            free(zero);
        }
    } else if (vlen) {
        sbuf fs = {0};
        sb_puts(&fs, "");
        if (c.conv == C_VSTR) {
            const uint8_t *fv;
            size_t fn;
            zcheck(zarr_array_fill_value_vlen(za, &fv, &fn), "fill value", path);
            sb_put(&fs, (const char *)fv, fn);
        } else {
            uint32_t *fv = xmalloc(c.esize);
            zcheck(zarr_array_fill_value(za, fv, c.esize), "fill value", path);
            utf32_to_utf8(&fs, fv, c.esize / 4);
            free(fv);
        }
        char *p = fs.p;
        H5Pset_fill_value(dcpl, c.mt, &p);
        free(fs.p);
    } else {
        unsigned char *fill = xmalloc(c.esize);
        zcheck(zarr_array_fill_value(za, fill, c.esize), "fill value", path);
        H5Pset_fill_value(dcpl, c.mt, fill);
        free(fill);
    }
    if (rank) {
        H5Pset_chunk(dcpl, (int)rank, hchunk);
        if (shuffle && hsize > 1 && !vlen) H5Pset_shuffle(dcpl);
        if (level >= 0) H5Pset_deflate(dcpl, (unsigned)level);
    }
    hid_t sp = rank ? H5Screate_simple((int)rank, dims, maxdims) : H5Screate(H5S_SCALAR);
    hid_t ds = H5Dcreate2(parent, name, c.ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (ds < 0) die("%s: creating the HDF5 dataset '%s' failed", path, name);
    write_attrs(ds, &attrs, path, c.conv == C_PLAIN ? (int)c.zt : -1, scale);
    jv_free(&attrs);
    zarr_string_free(attrtext);

    chunk_walk walk;
    chunk_walk_init(&walk, za, rank, shape, path);
    uint64_t start[32], count[32], idx = 0;
    void *buf = NULL, *raw = NULL;
    size_t cap = 0, rawcap = 0;
    while (chunk_walk_next(&walk, start, count)) {
        size_t nbytes = box_bytes(rank, count, hsize, path);
        if (nbytes > cap) { free(buf); buf = xmalloc(nbytes); cap = nbytes; }
        zarr_vlen *vl = NULL;
        char *text = NULL;
        if (c.conv == C_VSTR) { /* NUL-terminated copies (a NUL inside a string ends it in HDF5) */
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
        } else if (c.conv == C_UTF32) { /* UTF-32 -> UTF-8, each NUL-terminated */
            size_t rbytes = box_bytes(rank, count, c.esize, path), n = nbytes / sizeof(char *);
            if (rbytes > rawcap) { free(raw); raw = xmalloc(rbytes); rawcap = rbytes; }
            zcheck(zarr_read_hyperslab(za, start, count, NULL, NULL, c.buffer, raw, rbytes), "reading", path);
            sbuf all = {0};
            size_t *at = xmalloc(n * sizeof *at);
            for (size_t k = 0; k < n; k++) {
                at[k] = all.n;
                utf32_to_utf8(&all, (const uint32_t *)((const char *)raw + k * c.esize), c.esize / 4);
                sb_put(&all, "", 1);
            }
            text = all.p ? all.p : xstrdup("");
            for (size_t k = 0; k < n; k++) ((char **)buf)[k] = text + at[k];
            free(at);
        } else {
            zcheck(zarr_read_hyperslab(za, start, count, NULL, NULL, c.buffer, buf, nbytes), "reading", path);
        }
        hid_t msp = rank ? H5Screate_simple((int)rank, (const hsize_t *)count, NULL) : H5Screate(H5S_SCALAR);
        if (rank) {
            hsize_t hs[32], hn[32];
            for (size_t d = 0; d < rank; d++) { hs[d] = start[d]; hn[d] = count[d]; }
            H5Sselect_hyperslab(sp, H5S_SELECT_SET, hs, NULL, hn, NULL);
        }
        if (H5Dwrite(ds, c.mt, msp, sp, H5P_DEFAULT, buf) < 0) die("%s: H5Dwrite failed", path);
        free(text);
        zarr_vlen_free(vl);
        H5Sclose(msp);
        if (!g_quiet) progress(path, ++idx, walk.total);
    }
    free(buf);
    free(raw);
    H5Dclose(ds);
    H5Sclose(sp);
    H5Pclose(dcpl);
    conv_close(&c);
}

/* ---- the hierarchy: scan (groups, attributes, the dimension model), then arrays, then scales -------- */
static zh_model M;
static zarr_array **g_handles; /* parallel to M.arrays */

static char *child_path(const char *parent, const char *name) {
    char *p = xmalloc(strlen(parent) + strlen(name) + 2);
    sprintf(p, "%s%s%s", parent, strcmp(parent, "/") ? "/" : "", name);
    return p;
}

static void scan_array(zarr_array *za, int gi, const char *name, const char *path) {
    char *attrtext = NULL, msg[256];
    zcheck(zarr_array_attributes(za, &attrtext), "attributes", path);
    jv attrs;
    parse_attrs(attrtext, &attrs, path);
    elem_conv c;
    if (!array_conv(za, &attrs, &c, msg, sizeof msg)) {
        if (g_skip_unsupported) {
            fprintf(stderr, "zarrtoh5: %s: skipped (--skip-unsupported): %s\n", path, msg);
        } else {
            fprintf(stderr, "zarrtoh5: %s: cannot be converted: %s (--skip-unsupported skips it)\n", path, msg);
            g_refused = 1;
        }
        jv_free(&attrs);
        zarr_string_free(attrtext);
        zarr_close(za);
        return;
    }
    conv_close(&c);
    zh_array *a = zh_add_array(&M);
    g_handles = xrealloc(g_handles, M.narrays * sizeof *g_handles);
    g_handles[M.narrays - 1] = za;
    a->path = xstrdup(path);
    a->name = xstrdup(name);
    a->group = gi;
    zcheck(zarr_array_rank(za, &a->rank), "rank", path);
    if (a->rank > ZH_MAX_RANK) die("%s: rank %zu exceeds HDF5's 32", path, a->rank);
    zcheck(zarr_array_shape(za, a->shape, a->rank), "shape", path);
    int named = 0;
    for (size_t d = 0; d < a->rank; d++) {
        char *n = NULL;
        zcheck(zarr_array_dimension_name(za, d, &n), "dimension names", path);
        if (n) { a->dimname[d] = xstrdup(n); named = 1; }
        zarr_string_free(n);
    }
    const jv *xd = jv_get(&attrs, "_ARRAY_DIMENSIONS"); /* Zarr v2: the xarray convention */
    if (!named && xd && xd->t == J_ARR && xd->n == a->rank)
        for (size_t d = 0; d < a->rank; d++)
            if (xd->items[d].t == J_STR) a->dimname[d] = xstrdup(xd->items[d].s);
    for (size_t d = 0; d < a->rank; d++)
        if (a->dimname[d] && !zh_usable_name(a->dimname[d])) {
            fprintf(stderr, "zarrtoh5: %s: dimension name '%s' cannot name an HDF5 dimension scale: left unnamed\n",
                    path, a->dimname[d]);
            free(a->dimname[d]);
            a->dimname[d] = NULL;
        }
    const jv *unl = jv_get(jv_get(&attrs, "_libzarr_hdf5"), "unlimited_dimensions");
    if (unl && unl->t == J_ARR)
        for (size_t k = 0; k < unl->n; k++)
            if (unl->items[k].t == J_NUM && unl->items[k].is_int && unl->items[k].i >= 0 &&
                (uint64_t)unl->items[k].i < a->rank)
                a->unlimited[unl->items[k].i] = 1;
    jv_free(&attrs);
    zarr_string_free(attrtext);
}

/* Writes the group's attributes to hg and adds its dimension record; returns the group's index. */
static int scan_group_attrs(zarr_group *zg, hid_t hg, const char *path, int parent) {
    int gi = zh_add_group(&M, path, parent);
    char *text = NULL;
    zcheck(zarr_group_attributes(zg, &text), "attributes", path);
    jv o;
    parse_attrs(text, &o, path);
    commit_named_types(hg, jv_get(jv_get(&o, "_libzarr_hdf5"), "named_types"), path); /* before attributes use them */
    write_attrs(hg, &o, path, -1, 0);
    zh_add_record(&M, gi, jv_get(jv_get(&o, "_libzarr_hdf5"), "dimensions"), path);
    jv_free(&o);
    zarr_string_free(text);
    return gi;
}

static void scan_group(zarr_group *zg, hid_t hg, int gi, const char *path) {
    zarr_node_list *list = NULL;
    size_t n = 0;
    zcheck(zarr_group_list(zg, &list), "listing the group", path);
    zcheck(zarr_node_list_size(list, &n), "listing the group", path);
    for (int pass = 0; pass < 2; pass++) /* arrays first: parents' arrays come before their subgroups' */
        for (size_t k = 0; k < n; k++) {
            const char *name;
            zarr_node_type nt;
            zcheck(zarr_node_list_get(list, k, &name, &nt), "listing the group", path);
            if ((nt == ZARR_NODE_GROUP) != (pass == 1)) continue;
            char *child = child_path(path, name);
            if (nt == ZARR_NODE_GROUP) {
                zarr_group *zs = NULL;
                zcheck(zarr_group_open_group(zg, name, &zs), "opening the group", child);
                hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
                H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
                hid_t hs = H5Gcreate2(hg, name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
                H5Pclose(gcpl);
                if (hs < 0) die("%s: creating the HDF5 group failed", child);
                int si = scan_group_attrs(zs, hs, child, gi);
                scan_group(zs, hs, si, child);
                H5Gclose(hs);
                zarr_group_close(zs);
            } else {
                zarr_array *za = NULL;
                zcheck(zarr_group_open_array(zg, name, &za), "opening the array", child);
                scan_array(za, gi, name, child);
            }
            free(child);
        }
    zarr_node_list_free(list);
}

/* The dataset name of array i: netCDF-C's "_nc4_non_coord_" prefix when its group defines a dimension of
 * its name that it is not the coordinate variable of (the dimension-only dataset takes the name). */
static char *dataset_name(size_t i) {
    const zh_array *a = &M.arrays[i];
    int k = zh_dim_in(&M, a->group, a->name);
    if (k >= 0 && M.dims[k].coord != (int)i) {
        char *s = xmalloc(strlen(a->name) + 16);
        sprintf(s, "_nc4_non_coord_%s", a->name);
        return s;
    }
    return xstrdup(a->name);
}

/* Converts the scanned arrays, then makes and attaches the dimension scales. */
static void convert_all(hid_t f) {
    char **names = xmalloc((M.narrays + 1) * sizeof *names);
    for (size_t i = 0; i < M.narrays; i++) {
        names[i] = dataset_name(i);
        int scale = 0;
        for (size_t k = 0; k < M.ndims; k++) scale |= M.dims[k].coord == (int)i;
        hid_t hg = H5Gopen2(f, M.groups[M.arrays[i].group].path, H5P_DEFAULT);
        if (hg < 0) die("%s: reopening the HDF5 group failed", M.groups[M.arrays[i].group].path);
        convert_array(g_handles[i], hg, names[i], M.arrays[i].path, M.arrays[i].unlimited, scale);
        H5Gclose(hg);
        zarr_close(g_handles[i]);
    }
    hid_t *scales = xmalloc((M.ndims + 1) * sizeof *scales);
    for (size_t k = 0; k < M.ndims; k++) {
        const zh_dim *dm = &M.dims[k];
        hid_t hg = H5Gopen2(f, M.groups[dm->group].path, H5P_DEFAULT);
        if (dm->coord >= 0) { /* the coordinate variable is the scale */
            scales[k] = H5Dopen2(hg, names[dm->coord], H5P_DEFAULT);
            if (scales[k] < 0 || H5DSset_scale(scales[k], dm->name) < 0)
                die("%s: making it the dimension scale of '%s' failed", M.arrays[dm->coord].path, dm->name);
        } else { /* netCDF-4's dimension-only dataset: float32, no data, NAME says what it is */
            hsize_t size = dm->size, maxsize = dm->unlimited ? H5S_UNLIMITED : dm->size;
            hsize_t chunk = size && size < 1024 ? size : 1024;
            hid_t sp = H5Screate_simple(1, &size, &maxsize);
            hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
            if (dm->unlimited || size > (1u << 30)) H5Pset_chunk(dcpl, 1, &chunk); /* no huge contiguous extent */
            scales[k] = H5Dcreate2(hg, dm->name, H5T_IEEE_F32BE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
            char label[sizeof DIM_WITHOUT_VARIABLE + 24];
            snprintf(label, sizeof label, "%s%10llu", DIM_WITHOUT_VARIABLE, (unsigned long long)dm->size);
            if (scales[k] < 0 || H5DSset_scale(scales[k], label) < 0)
                die("%s: creating the dimension '%s' failed (is the name taken?)", M.groups[dm->group].path, dm->name);
            H5Pclose(dcpl);
            H5Sclose(sp);
        }
        H5Gclose(hg);
    }
    for (size_t i = 0; i < M.narrays; i++) {
        const zh_array *a = &M.arrays[i];
        hid_t ds = -1;
        for (size_t d = 0; d < a->rank; d++) {
            if (a->dim[d] < 0 || M.dims[a->dim[d]].coord == (int)i) continue;
            if (ds < 0) {
                hid_t hg = H5Gopen2(f, M.groups[a->group].path, H5P_DEFAULT);
                ds = H5Dopen2(hg, names[i], H5P_DEFAULT);
                H5Gclose(hg);
            }
            if (ds < 0 || H5DSattach_scale(ds, scales[a->dim[d]], (unsigned)d) < 0)
                die("%s: attaching dimension '%s' failed", a->path, a->dimname[d]);
        }
        if (ds >= 0) H5Dclose(ds);
    }
    for (size_t k = 0; k < M.ndims; k++) H5Dclose(scales[k]);
    free(scales);
    for (size_t i = 0; i < M.narrays; i++) free(names[i]);
    free(names);
}

/* The conversion itself, into `out` (the temporary file); returns the exit status. */
static int convert(const char *in, zarr_node_type nt, const char *out) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    /* links in creation order, as netCDF-4 keeps them: netCDF-C reads a group's objects in that order,
     * so a named type (committed first) is known before the variables that use it */
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    hid_t f = H5Fcreate(out, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    H5Pclose(fcpl);
    if (f < 0) die("%s: cannot create the HDF5 file", out);
    hid_t root = H5Gopen2(f, "/", H5P_DEFAULT);
    if (nt == ZARR_NODE_GROUP) {
        zarr_group *zg = NULL;
        zcheck(zarr_group_open(in, ZARR_READ, &zg), "opening the group", in);
        int gi = scan_group_attrs(zg, root, "/", -1);
        scan_group(zg, root, gi, "/");
        zarr_group_close(zg);
    } else {
        /* a lone array: the dataset named after the input's last path element, without ".zarr" */
        char *base = xstrdup(in);
        size_t n = strlen(base);
        while (n > 1 && base[n - 1] == '/') base[--n] = 0;
        char *name = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
        n = strlen(name);
        if (n > 5 && !strcmp(name + n - 5, ".zarr")) name[n - 5] = 0;
        zarr_array *za = NULL;
        zcheck(zarr_open(in, ZARR_READ, &za), "opening the array", in);
        zh_add_group(&M, "/", -1);
        scan_array(za, 0, name, name);
        free(base);
    }
    if (g_refused) return 2;
    zh_resolve(&M);
    convert_all(f);
    H5Gclose(root);
    if (H5Fclose(f) < 0) die("%s: closing the HDF5 file failed", out);
    return 0;
}

int main(int argc, char **argv) {
    g_prog = "zarrtoh5";
    const char *pos[2];
    int npos = 0, overwrite = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(USAGE, stdout); fputs(USAGE_CONVERTED, stdout); return 0; }
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) g_quiet = 1;
        else if (!strcmp(a, "--overwrite")) overwrite = 1;
        else if (!strcmp(a, "--skip-unsupported")) g_skip_unsupported = 1;
        else if (a[0] == '-' && a[1]) die("unknown option '%s' (see --help)", a);
        else if (npos < 2) pos[npos++] = a;
        else die("too many arguments (see --help)");
    }
    if (npos != 2) { fputs(USAGE, stderr); fputs(USAGE_CONVERTED, stderr); return 1; }
    const char *in = pos[0];
    struct stat st;
    if (stat(in, &st) != 0) die("%s: no such Zarr array or group (%s)", in, strerror(errno));
    zarr_node_type nt;
    if (zarr_node_type_at(in, &nt) != ZARR_OK) die("%s: not a Zarr array or group: %s", in, zarr_last_error());
    /* the refusals of h5z_output.h: never the input or inside it, --overwrite replaces only an HDF5 file */
    out_path op;
    out_path_init(&op, pos[1]);
    remove_stale(&op, "zarrtoh5");
    check_output(in, &op, overwrite, has_hdf5_signature, "an HDF5 file", "not an HDF5 file (no HDF5 signature)");
    const char *out = op.path;
    /* From here on this process only creates, waits, and renames or removes: it ignores the interrupts
     * (a terminal's ^C reaches the converting child, whose end it sees and cleans up after). */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    /* a temporary sibling, renamed into place when the conversion succeeds */
    char *tmp = temp_name(&op, "zarrtoh5", "tmp");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) die("%s: cannot create a temporary file beside it (%s)", out, strerror(errno));
    close(fd);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) { unlink(tmp); die("fork failed (%s)", strerror(errno)); }
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        int rc = convert(in, nt, tmp);
        fflush(NULL);
        _exit(rc);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) { unlink(tmp); die("waiting for the conversion failed (%s)", strerror(errno)); }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    if (WIFSIGNALED(status))
        fprintf(stderr, "zarrtoh5: the conversion ended by signal %d: nothing written\n", WTERMSIG(status));
    if (rc != 0) {
        unlink(tmp);
        if (rc == 2) fprintf(stderr, "zarrtoh5: nothing written: %s\n", out);
        return rc;
    }
    mode_t mask = umask(0);
    umask(mask);
    chmod(tmp, 0666 & ~mask);
    if (rename(tmp, out) != 0) {
        int e = errno;
        unlink(tmp);
        die("%s: renaming the finished file into place failed (%s)", out, strerror(e));
    }
    free(tmp);
    out_path_free(&op);
    return 0;
}
