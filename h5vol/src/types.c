/* Datatypes: HDF5 integer, float and h5py-boolean types <-> Zarr data types. Buffers handed to libzarr
 * hold native-endian elements; the stored byte order is the HDF5 type's. */
#include "zvol.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER: return "H5T_INTEGER";
    case H5T_FLOAT: return "H5T_FLOAT";
    case H5T_TIME: return "H5T_TIME";
    case H5T_STRING: return "H5T_STRING";
    case H5T_BITFIELD: return "H5T_BITFIELD";
    case H5T_OPAQUE: return "H5T_OPAQUE";
    case H5T_COMPOUND: return "H5T_COMPOUND";
    case H5T_REFERENCE: return "H5T_REFERENCE";
    case H5T_ENUM: return "H5T_ENUM";
    case H5T_VLEN: return "H5T_VLEN";
    case H5T_ARRAY: return "H5T_ARRAY";
    default: return "an unknown class";
    }
}

/* h5py's boolean: an enum over a signed 8-bit integer with FALSE = 0 and TRUE = 1. */
static int is_h5py_bool(hid_t type)
{
    int ok = 0;
    hid_t base = H5Tget_super(type);
    if (base < 0)
        return 0;
    if (H5Tget_class(base) == H5T_INTEGER && H5Tget_size(base) == 1 && H5Tget_nmembers(type) == 2) {
        ok = 1;
        for (unsigned i = 0; i < 2 && ok; i++) {
            char *name = H5Tget_member_name(type, i);
            signed char value = -1;
            hid_t native = H5Tcopy(base);
            /* member values are in the base type's order: a single byte needs no conversion */
            if (!name || H5Tget_member_value(type, i, &value) < 0)
                ok = 0;
            else if (!((strcmp(name, "FALSE") == 0 && value == 0) || (strcmp(name, "TRUE") == 0 && value == 1)))
                ok = 0;
            if (name)
                H5free_memory(name);
            H5Tclose(native);
        }
    }
    H5Tclose(base);
    return ok;
}

int zh5_is_h5py_bool(hid_t type)
{
    return is_h5py_bool(type);
}

/* The IEEE float kind of a type: 4 or 8 (its size) for float32/float64, 0 otherwise. */
static size_t ieee_float(hid_t type)
{
    size_t spos, epos, esize, mpos, msize, size = H5Tget_size(type);
    if (H5Tget_class(type) != H5T_FLOAT || H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) < 0)
        return 0;
    if (size == 4 && esize == 8 && msize == 23 && H5Tget_ebias(type) == 127)
        return 4;
    if (size == 8 && esize == 11 && msize == 52 && H5Tget_ebias(type) == 1023)
        return 8;
    return 0;
}

/* h5py's complex numbers: a compound of two IEEE floats of one size named r and i (or real and imag),
   packed. Returns the float size (4 or 8) and its byte order, 0 when the type is not one. */
static size_t complex_parts(hid_t type, int *big_endian)
{
    size_t part = 0;
    if (H5Tget_class(type) != H5T_COMPOUND || H5Tget_nmembers(type) != 2)
        return 0;
    for (unsigned k = 0; k < 2; k++) {
        char *name = H5Tget_member_name(type, k);
        hid_t mt = H5Tget_member_type(type, k);
        size_t f = mt >= 0 ? ieee_float(mt) : 0;
        int ok = name && f && (part == 0 || f == part) && H5Tget_member_offset(type, k) == k * f &&
                 (k == 0 ? (strcmp(name, "r") == 0 || strcmp(name, "real") == 0)
                         : (strcmp(name, "i") == 0 || strcmp(name, "imag") == 0));
        if (ok) {
            part = f;
            *big_endian = H5Tget_order(mt) == H5T_ORDER_BE;
        }
        if (name)
            H5free_memory(name);
        if (mt >= 0)
            H5Tclose(mt);
        if (!ok)
            return 0;
    }
    return H5Tget_size(type) == 2 * part ? part : 0;
}

int zh5_type_to_zarr(hid_t type, zarr_data_type *ztype, int *big_endian)
{
    H5T_class_t cls = H5Tget_class(type);
    size_t size = H5Tget_size(type);
    *big_endian = 0;
    if (cls == H5T_INTEGER || cls == H5T_FLOAT)
        *big_endian = H5Tget_order(type) == H5T_ORDER_BE;
    if (cls == H5T_INTEGER) {
        int is_signed = H5Tget_sign(type) == H5T_SGN_2;
        if (H5Tget_precision(type) == size * 8 && H5Tget_offset(type) == 0) {
            switch (size) {
            case 1: *ztype = is_signed ? ZARR_INT8 : ZARR_UINT8; return 0;
            case 2: *ztype = is_signed ? ZARR_INT16 : ZARR_UINT16; return 0;
            case 4: *ztype = is_signed ? ZARR_INT32 : ZARR_UINT32; return 0;
            case 8: *ztype = is_signed ? ZARR_INT64 : ZARR_UINT64; return 0;
            default: break;
            }
        }
    } else if (cls == H5T_FLOAT) {
        size_t spos, epos, esize, mpos, msize;
        if (H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) >= 0) {
            size_t ebias = H5Tget_ebias(type);
            if (size == 4 && esize == 8 && msize == 23 && ebias == 127) {
                *ztype = ZARR_FLOAT32;
                return 0;
            }
            if (size == 8 && esize == 11 && msize == 52 && ebias == 1023) {
                *ztype = ZARR_FLOAT64;
                return 0;
            }
            if (size == 2 && esize == 5 && msize == 10 && ebias == 15) {
                *ztype = ZARR_FLOAT16;
                return 0;
            }
        }
    } else if (cls == H5T_ENUM && is_h5py_bool(type)) {
        *ztype = ZARR_BOOL;
        return 0;
    } else if (cls == H5T_COMPOUND && complex_parts(type, big_endian)) {
        *ztype = complex_parts(type, big_endian) == 4 ? ZARR_COMPLEX64 : ZARR_COMPLEX128;
        return 0;
    } else if (cls == H5T_STRING && H5Tis_variable_str(type) > 0) {
        *ztype = ZARR_STRING;
        return 0;
    } else if (cls == H5T_STRING && H5Tget_strpad(type) != H5T_STR_SPACEPAD && size > 0) {
        *ztype = ZARR_NULL_TERMINATED_BYTES;   /* NUL-terminated or NUL-padded: both read back NUL-padded */
        return 0;
    }
    zh5_err(H5E_DATATYPE, H5E_UNSUPPORTED,
            "the datatype (class %s, %zu bytes) has no Zarr equivalent in this connector: it supports integers of "
            "8-64 bits, IEEE float16/32/64, h5py's booleans and complex numbers, variable-length strings and NUL-padded fixed-length strings",
            class_name(cls), size);
    return -1;
}

static hid_t native_order_of(void)
{
    return H5Tget_order(H5T_NATIVE_INT);
}

hid_t zh5_type_from_zarr(zarr_data_type ztype, size_t esize, int big_endian)
{
    hid_t t = H5I_INVALID_HID;
    H5T_order_t order = big_endian ? H5T_ORDER_BE : H5T_ORDER_LE;
    (void)esize;
    switch (ztype) {
    case ZARR_BOOL: {
        signed char f = 0, tr = 1;
        t = H5Tenum_create(H5T_NATIVE_SCHAR);
        if (t >= 0 && (H5Tenum_insert(t, "FALSE", &f) < 0 || H5Tenum_insert(t, "TRUE", &tr) < 0)) {
            H5Tclose(t);
            t = H5I_INVALID_HID;
        }
        return t;
    }
    case ZARR_STRING:
        /* variable-length UTF-8 text: in memory a char * per element (NUL-terminated) */
        t = H5Tcopy(H5T_C_S1);
        if (t >= 0 && (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
            H5Tclose(t);
            t = H5I_INVALID_HID;
        }
        return t;
    case ZARR_COMPLEX64:
    case ZARR_COMPLEX128: {
        /* h5py's layout: a packed compound of the real and imaginary parts, named r and i */
        size_t part = ztype == ZARR_COMPLEX64 ? 4 : 8;
        hid_t ft = H5Tcopy(part == 4 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
        t = ft >= 0 ? H5Tcreate(H5T_COMPOUND, 2 * part) : H5I_INVALID_HID;
        if (ft < 0 || t < 0 || H5Tset_order(ft, order) < 0 || H5Tinsert(t, "r", 0, ft) < 0 ||
            H5Tinsert(t, "i", part, ft) < 0) {
            if (t >= 0)
                H5Tclose(t);
            t = H5I_INVALID_HID;
        }
        if (ft >= 0)
            H5Tclose(ft);
        return t;
    }
    case ZARR_NULL_TERMINATED_BYTES:
        /* fixed-length bytes padded with NULs (numpy's S<n>): HDF5's fixed-length NULPAD string */
        t = H5Tcopy(H5T_C_S1);
        if (t >= 0 && (H5Tset_size(t, esize) < 0 || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0)) {
            H5Tclose(t);
            t = H5I_INVALID_HID;
        }
        return t;
    case ZARR_INT8: t = H5Tcopy(H5T_STD_I8LE); break;
    case ZARR_INT16: t = H5Tcopy(H5T_STD_I16LE); break;
    case ZARR_INT32: t = H5Tcopy(H5T_STD_I32LE); break;
    case ZARR_INT64: t = H5Tcopy(H5T_STD_I64LE); break;
    case ZARR_UINT8: t = H5Tcopy(H5T_STD_U8LE); break;
    case ZARR_UINT16: t = H5Tcopy(H5T_STD_U16LE); break;
    case ZARR_UINT32: t = H5Tcopy(H5T_STD_U32LE); break;
    case ZARR_UINT64: t = H5Tcopy(H5T_STD_U64LE); break;
    case ZARR_FLOAT32: t = H5Tcopy(H5T_IEEE_F32LE); break;
    case ZARR_FLOAT64: t = H5Tcopy(H5T_IEEE_F64LE); break;
    case ZARR_FLOAT16:
        /* IEEE half precision, as h5py builds it */
        t = H5Tcopy(H5T_IEEE_F32LE);
        if (t >= 0 && (H5Tset_fields(t, 15, 10, 5, 0, 10) < 0 || H5Tset_size(t, 2) < 0 || H5Tset_ebias(t, 15) < 0)) {
            H5Tclose(t);
            return H5I_INVALID_HID;
        }
        break;
    default:
        return H5I_INVALID_HID;
    }
    if (t >= 0 && esize > 1 && H5Tset_order(t, order) < 0) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

/* The native-order twin of a stored type (libzarr's buffer layout). */
hid_t zh5_type_native(zarr_data_type ztype, size_t esize)
{
    return zh5_type_from_zarr(ztype, esize, native_order_of() == H5T_ORDER_BE);
}

herr_t zh5_convert(hid_t src, hid_t dst, size_t n, void *buf)
{
    void *bkg = NULL;
    herr_t ret;
    if (n == 0 || H5Tequal(src, dst) > 0)
        return 0;
    /* HDF5 converts compound types (complex numbers of another byte order or size, records) member by
       member into a background buffer of n destination elements, which it refuses to go without. */
    if (H5Tget_class(src) == H5T_COMPOUND || H5Tget_class(dst) == H5T_COMPOUND) {
        size_t dsize = H5Tget_size(dst);
        if (dsize == 0 || n > SIZE_MAX / dsize || !(bkg = calloc(n, dsize))) {
            zh5_err(H5E_DATATYPE, H5E_CANTALLOC, "no memory for the conversion's background buffer (%zu elements)", n);
            return -1;
        }
    }
    ret = H5Tconvert(src, dst, n, buf, bkg, H5P_DEFAULT);
    free(bkg);
    if (ret < 0) {
        zh5_err(H5E_DATATYPE, H5E_CANTCONVERT, "cannot convert between the memory and the stored datatype");
        return -1;
    }
    return 0;
}
