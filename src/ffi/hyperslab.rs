//! C functions for strided, typed and any-layout reads and writes (`zarr_read_hyperslab`,
//! `zarr_write_hyperslab`), as HDF5's `H5Dread` with a memory type and hyperslab and netCDF's
//! `nc_get_vars_<type>` offer them.

use super::array::{region_args, zarr_array, zarr_data_type, OpenArray};
use super::status::*;
use super::{guard, opt_slice_arg, slice_arg};
use crate::dtype::DataType;
use crate::error::{Error, Result};
use std::ffi::c_void;

/// A `zarr_data_type` received by value from C. It is read as a plain integer, so that a value outside
/// the enum is an error rather than undefined behaviour. (The header names it `zarr_data_type`.)
#[repr(transparent)]
#[derive(Debug, Clone, Copy)]
pub struct DataTypeCode(pub i32);

/// The element type a caller's buffer holds: a numeric type converts to and from the array's numeric
/// types; the array's own type (whatever it is) is always accepted.
pub(crate) fn resolve_buffer_type(code: DataTypeCode, array_type: &DataType) -> Result<DataType> {
    use zarr_data_type::*;
    if code.0 == zarr_data_type::from(array_type) as i32 {
        return Ok(array_type.clone());
    }
    let numeric = [
        (ZARR_BOOL, DataType::Bool),
        (ZARR_INT8, DataType::Int8),
        (ZARR_INT16, DataType::Int16),
        (ZARR_INT32, DataType::Int32),
        (ZARR_INT64, DataType::Int64),
        (ZARR_UINT8, DataType::UInt8),
        (ZARR_UINT16, DataType::UInt16),
        (ZARR_UINT32, DataType::UInt32),
        (ZARR_UINT64, DataType::UInt64),
        (ZARR_FLOAT16, DataType::Float16),
        (ZARR_FLOAT32, DataType::Float32),
        (ZARR_FLOAT64, DataType::Float64),
        (ZARR_COMPLEX64, DataType::Complex64),
        (ZARR_COMPLEX128, DataType::Complex128),
    ];
    numeric.into_iter().find(|(c, _)| *c as i32 == code.0).map(|(_, t)| t).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "buffer_type {} is not a numeric zarr_data_type, nor the array's own type ({array_type})",
            code.0
        ))
    })
}

/// The checked arguments of a hyperslab call.
struct HyperslabArgs<'a> {
    array: &'a OpenArray,
    start: &'a [u64],
    count: &'a [u64],
    step: Option<&'a [u64]>,
    stride: Option<&'a [i64]>,
    buffer_type: DataType,
}

/// The arguments of a hyperslab call, checked in this order: the handle, NULL selection pointers,
/// the buffer type.
///
/// # Safety
/// `array` is NULL or a handle pointer from libzarr; each other pointer is NULL or points to rank
/// readable values.
unsafe fn hyperslab_args<'a>(
    array: *const zarr_array,
    start: *const u64,
    count: *const u64,
    step: *const u64,
    buffer_stride: *const i64,
    buffer_type: DataTypeCode,
) -> Result<HyperslabArgs<'a>> {
    // SAFETY: forwarded.
    unsafe {
        let (array, start, count) = region_args(array, start, count)?;
        let rank = array.shape().len();
        let step = opt_slice_arg(step, rank, "step")?;
        let stride = opt_slice_arg(buffer_stride, rank, "buffer_stride")?;
        let buffer_type = resolve_buffer_type(buffer_type, &array.metadata().data_type)?;
        Ok(HyperslabArgs { array, start, count, step, stride, buffer_type })
    }
}

/// Reads a strided selection (a hyperslab) into a buffer of any layout and numeric type.
///
/// Along dimension `d` the elements `start[d] + k * step[d]` for `k < count[d]` are read. Selected
/// element `k` (a vector) is written at element offset `sum(k[d] * buffer_stride[d])` of `buffer`,
/// converted to `buffer_type`.
///
/// A Fortran-order (column-major) buffer is just strides: for `double A(nx, ny)` holding the array's
/// `[ny, nx]` region, `count = {ny, nx}` and `buffer_stride = {nx, 1}` is C order, while the same
/// region into a column-major `double B(ny, nx)` takes `buffer_stride = {1, ny}`:
/// ```c
/// uint64_t start[2] = {0, 0}, count[2] = {ny, nx}, step[2] = {2, 2};
/// int64_t fortran[2] = {1, (int64_t)ny};
/// zarr_read_hyperslab(a, start, count, step, fortran, ZARR_FLOAT64, B, sizeof(double) * ny * nx);
/// ```
///
/// Conversion (netCDF's rule): bool, every integer and every float type convert to one another, and
/// complex64 and complex128 to one another; a value the buffer type can hold converts as C converts it
/// (floats to integers truncate toward zero; to floats round to nearest); NaN into an integer type or a
/// value out of the buffer type's range is ZARR_ERR_VALUE (the buffer is then partly written). bool
/// counts as an integer type holding 0 and 1. Other types (r<N>, structs, ...) are read only as
/// themselves (buffer_type equal to the array's type).
///
/// @param array          an open array handle
/// @param start          rank values: the first index per dimension
/// @param count          rank values: how many indices per dimension (0 reads nothing)
/// @param step           rank values >= 1, or NULL for all 1
/// @param buffer_stride  rank values >= 0, in elements of buffer_type, or NULL for C order over `count`;
///                       distinct elements must not overlap in the buffer
/// @param buffer_type    the element type of `buffer` (native-endian)
/// @param buffer         the destination (caller-owned)
/// @param buffer_size    bytes of `buffer`: at least the span the strides reach
///                       (`(sum((count[d]-1) * buffer_stride[d]) + 1) * element size`)
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL pointers, a zero step,
///          negative or overlapping strides, a type that does not convert); ZARR_ERR_OUT_OF_BOUNDS (the
///          last selected index beyond the shape); ZARR_ERR_BUFFER_SIZE (buffer smaller than the span);
///          ZARR_ERR_VALUE (a value does not convert); ZARR_ERR_CODEC, ZARR_ERR_CHECKSUM, ZARR_ERR_IO.
/// Thread-safe: concurrent reads on one handle are allowed. Since: 0.2.
///
/// # Safety
/// `start`, `count` and the non-NULL `step`/`buffer_stride` hold rank values; `buffer` is writable for
/// `buffer_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_read_hyperslab(
    array: *mut zarr_array,
    start: *const u64,
    count: *const u64,
    step: *const u64,
    buffer_stride: *const i64,
    buffer_type: DataTypeCode,
    buffer: *mut c_void,
    buffer_size: usize,
) -> zarr_status {
    guard(|| {
        let h = unsafe { hyperslab_args(array, start, count, step, buffer_stride, buffer_type) }?;
        let out = unsafe { super::slice_out(buffer.cast::<u8>(), buffer_size, "buffer") }?;
        h.array.read_hyperslab(h.start, h.count, h.step, h.stride, &h.buffer_type, out)
    })
}

/// Writes a strided selection (a hyperslab) from a buffer of any layout and numeric type: the mirror
/// of zarr_read_hyperslab() (same arguments and conversion rule, converting from `buffer_type` to the
/// array's type). Strides may overlap (an element is then read more than once).
///
/// A value that does not convert (NaN into an integer array, out of range) is ZARR_ERR_VALUE and
/// nothing is stored. Chunks the selection covers only in part are read, merged and rewritten.
///
/// @returns as zarr_read_hyperslab(), plus ZARR_ERR_READ_ONLY.
/// Thread-safe, also across handles and processes: writes touching the same chunk or shard are applied
/// one after the other (see docs/concurrency.md). ZARR_ERR_METADATA when
/// another handle resized the array since this one was opened (nothing stored; reopen it). Since: 0.2.
///
/// # Safety
/// As zarr_read_hyperslab(), with `buffer` readable for `buffer_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_write_hyperslab(
    array: *mut zarr_array,
    start: *const u64,
    count: *const u64,
    step: *const u64,
    buffer_stride: *const i64,
    buffer_type: DataTypeCode,
    buffer: *const c_void,
    buffer_size: usize,
) -> zarr_status {
    guard(|| {
        let h = unsafe { hyperslab_args(array, start, count, step, buffer_stride, buffer_type) }?;
        let data = unsafe { slice_arg(buffer.cast::<u8>(), buffer_size, "buffer") }?;
        h.array.write_hyperslab(h.start, h.count, h.step, h.stride, &h.buffer_type, data)
    })
}

