//! C functions for arrays with variable-length elements (ZARR_STRING, ZARR_BYTES): regions cross the
//! boundary as an offsets array plus one data buffer.

use super::array::{region_args, zarr_array, zarr_data_type};
use super::handle::{handle_kind, new_handle, HandleKind};
use super::status::*;
use super::{guard, need_out, slice_arg, write_opt, write_out};
use crate::array::VlenData;
use crate::dtype::DataType;
use crate::error::Error;

/// Variable-length elements read by zarr_read_region_vlen() (opaque). Element i of n is
/// `data[offsets[i] .. offsets[i+1])` (see zarr_vlen_view()). Owned by the caller; free it with
/// zarr_vlen_free(). Independent of the array handle (it stays valid after zarr_close()).
///
/// Thread-safety: immutable; may be viewed from several threads at once.
pub struct zarr_vlen {
    _opaque: [u8; 0],
}

handle_kind!(
    zarr_vlen,
    VlenData,
    0x7a61_7272_564c_454e, // "zarrVLEN"
    "zarr_vlen is NULL",
    "not a live zarr_vlen (freed or corrupt?)"
);

/// Reads the hyperrectangle `start[i] .. start[i] + count[i]` of an array with variable-length
/// elements (ZARR_STRING or ZARR_BYTES) into a new zarr_vlen: product(count) elements in C order
/// (last dimension fastest). ZARR_STRING elements are UTF-8 without a terminating NUL (they may
/// contain NUL characters); elements of a Zarr v2 vlen-array are the bytes of their native-endian
/// items. Missing chunks read as the fill value. Chunks are decoded in parallel.
///
/// @param start  `rank` start indices
/// @param count  `rank` extents (zero extents give an empty result)
/// @param out    receives the new zarr_vlen (free with zarr_vlen_free()); set to NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL, or the array has
///          fixed-size elements: use zarr_read_region()); ZARR_ERR_OUT_OF_BOUNDS; ZARR_ERR_CODEC
///          (corrupt chunk: truncated, counts or lengths beyond the chunk, invalid UTF-8 in a string
///          chunk); ZARR_ERR_CHECKSUM; ZARR_ERR_IO.
/// Thread-safe (concurrent reads of one handle are allowed). Since: 0.2.
///
/// # Safety
/// `array` is an open handle; `start`/`count` hold `rank` values; `out` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_read_region_vlen(
    array: *mut zarr_array,
    start: *const u64,
    count: *const u64,
    out: *mut *mut zarr_vlen,
) -> zarr_status {
    let make = || {
        let (a, start, count) = unsafe { region_args(array, start, count) }?;
        a.read_region_vlen(start, count)
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_handle(out, make) }
}

/// The elements held by `v`: `n` elements, `offsets` has `n + 1` entries (`offsets[0]` is 0), and
/// element i is `data[offsets[i] .. offsets[i+1])`. The pointers stay valid until zarr_vlen_free();
/// `data` may be NULL when every element is empty. Any output may be NULL.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE (`v` NULL or not a live zarr_vlen).
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `v` is NULL or returned by zarr_read_region_vlen() and not yet freed; non-NULL outputs are valid
/// for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_vlen_view(
    v: *const zarr_vlen,
    offsets: *mut *const u64,
    data: *mut *const u8,
    n: *mut usize,
) -> zarr_status {
    guard(|| {
        let h = unsafe { zarr_vlen::get(v) }?;
        unsafe {
            write_opt(offsets, h.offsets.as_ptr());
            write_opt(data, if h.data.is_empty() { std::ptr::null() } else { h.data.as_ptr() });
            write_opt(n, h.len());
        }
        Ok(())
    })
}

/// Frees a zarr_vlen. NULL is a no-op.
///
/// Not thread-safe with other calls on the same zarr_vlen. Since: 0.2.
///
/// # Safety
/// `v` is NULL or returned by zarr_read_region_vlen() and not yet freed; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn zarr_vlen_free(v: *mut zarr_vlen) {
    let _ = guard(|| unsafe { zarr_vlen::close(v) });
}

/// Writes variable-length elements to the hyperrectangle `start[i] .. start[i] + count[i]` (C order):
/// element i of n = product(count) is `data[offsets[i] .. offsets[i+1])`. For ZARR_STRING arrays
/// every element must be valid UTF-8; for a Zarr v2 vlen-array each element holds whole native-endian
/// items. Partly covered chunks are read, merged and rewritten; chunks left entirely equal to the
/// fill value are deleted instead of stored. Everything is validated, decoded and encoded before
/// anything is stored: a failing call leaves the array unchanged. Every chunk is replaced atomically.
///
/// @param offsets    n + 1 non-decreasing byte offsets into `data` (`offsets[0]` need not be 0)
/// @param data       the elements' bytes (may be NULL when `data_size` is 0)
/// @param data_size  bytes in `data`; `offsets[n]` must not exceed it
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL, decreasing offsets or
///          offsets beyond `data_size`, or the array has fixed-size elements: use zarr_write_region());
///          ZARR_ERR_VALUE (invalid UTF-8 for a string array, an element over 4 GiB, a vlen-array
///          element that is not whole items); ZARR_ERR_READ_ONLY; ZARR_ERR_OUT_OF_BOUNDS;
///          ZARR_ERR_CODEC (a partly covered chunk cannot be decoded); ZARR_ERR_CHECKSUM; ZARR_ERR_IO.
/// Thread-safe, also across handles and processes: writes touching the same chunk or shard are applied
/// one after the other (see docs/concurrency.md). ZARR_ERR_METADATA when
/// another handle resized the array since this one was opened (nothing stored; reopen it). Since: 0.2.
///
/// # Safety
/// `array` is an open handle; `start`/`count` hold `rank` values; `offsets` holds product(count) + 1
/// values; `data` has `data_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_write_region_vlen(
    array: *mut zarr_array,
    start: *const u64,
    count: *const u64,
    offsets: *const u64,
    data: *const u8,
    data_size: usize,
) -> zarr_status {
    guard(|| {
        let (a, start, count) = unsafe { region_args(array, start, count) }?;
        let n = count.iter().try_fold(1u64, |x, &c| x.checked_mul(c));
        let n = n
            .and_then(|n| usize::try_from(n).ok())
            .and_then(|n| n.checked_add(1))
            .ok_or_else(|| Error::InvalidArgument(format!("region {count:?} has too many elements")))?;
        if a.check_vlen_region(start, count).is_err() {
            // Report rank/bounds/type errors before reading `n` offsets from a region that may be absurd.
            return a.check_vlen_region(start, count);
        }
        let offsets = unsafe { slice_arg(offsets, n, "offsets") }?;
        let data = unsafe { slice_arg(data, data_size, "data") }?;
        a.write_region_vlen(start, count, offsets, data)
    })
}

/// The fill value of an array with variable-length elements: `size` bytes at `value` (for ZARR_STRING
/// UTF-8 without a NUL). The pointer is owned by the array handle (valid until zarr_close()) and may
/// be NULL when `size` is 0.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL output, or the array has
///          fixed-size elements: use zarr_array_fill_value()).
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `array` is an open handle; `value` and `size` are valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_fill_value_vlen(
    array: *const zarr_array,
    value: *mut *const u8,
    size: *mut usize,
) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        let m = a.metadata();
        if !m.data_type.is_vlen() {
            return Err(Error::InvalidArgument("the array has fixed-size elements: use zarr_array_fill_value()".into()));
        }
        need_out(value, "value")?;
        need_out(size, "size")?;
        let p = if m.fill_value.is_empty() { std::ptr::null() } else { m.fill_value.as_ptr() };
        unsafe { write_out(value, p, "value") }?;
        unsafe { write_out(size, m.fill_value.len(), "size") }
    })
}

/// For a Zarr v2 object array with a vlen-array filter (reported as ZARR_BYTES): the type of the
/// items each element holds and their size in bytes (elements are exchanged as the bytes of their
/// native-endian items). Other arrays fail with ZARR_ERR_INVALID_ARGUMENT. Either output may be NULL.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT.
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `array` is an open handle; non-NULL outputs are valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_vlen_item_type(
    array: *const zarr_array,
    item_type: *mut zarr_data_type,
    item_size: *mut usize,
) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        let DataType::VlenArray(item) = &a.metadata().data_type else {
            return Err(Error::InvalidArgument("the array is not a Zarr v2 vlen-array object array".into()));
        };
        unsafe {
            write_opt(item_type, zarr_data_type::from(item.as_ref()));
            write_opt(item_size, item.size());
        }
        Ok(())
    })
}
