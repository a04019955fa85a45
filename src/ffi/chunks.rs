//! C functions at the level of chunks (the grid, which chunks a selection touches, whole-chunk I/O,
//! erasing) and resizing an array.

use super::array::{region_args, zarr_array, OpenArray};
use super::handle::HandleKind;
use super::hyperslab::{resolve_buffer_type, DataTypeCode};
use super::status::*;
use super::{guard, opt_slice_arg, slice_arg, slice_out, write_out};
use crate::error::{Error, Result};
use crate::selection::Selection;
use std::ffi::{c_int, c_void};

/// The open array behind `array` and the chunk coordinates argument `chunk` (rank values).
///
/// # Safety
/// `array` is NULL or a handle pointer from libzarr; `chunk` is NULL or points to rank values.
unsafe fn array_chunk<'a>(array: *const zarr_array, chunk: *const u64) -> Result<(&'a OpenArray, &'a [u64])> {
    // SAFETY: forwarded.
    unsafe {
        let a = zarr_array::get(array)?;
        Ok((a, slice_arg(chunk, a.shape().len(), "chunk")?))
    }
}

/// Changes the shape of an array (the rank stays). Growing exposes the fill value (and, as in
/// zarr-python, old values of chunks that straddled an earlier, smaller edge); shrinking deletes the
/// chunks wholly outside the new shape, then rewrites the metadata (`zarr.json` or `.zarray`)
/// atomically. Works for Zarr v3 and v2 arrays.
///
/// Old values after shrinking and growing again: shrinking keeps a chunk that the new edge cuts
/// through whole, values beyond the edge included (zarr-python does the same), so growing again shows
/// them there. To have the fill value everywhere in the grown part, write the fill value over it after
/// growing: one zarr_write_hyperslab() per grown dimension, from the single value that
/// zarr_array_fill_value() gives, with every buffer stride 0 (each element read from that one value;
/// no buffer of the region's size). Chunks left holding only the fill value are deleted. For a 2-D
/// float64 array grown from `old[0]` to `shape[0]` rows:
///
/// ```c
/// double fill;
/// zarr_array_fill_value(a, &fill, sizeof fill);
/// uint64_t start[2] = {old[0], 0}, count[2] = {shape[0] - old[0], shape[1]};
/// int64_t every[2] = {0, 0};
/// zarr_write_hyperslab(a, start, count, NULL, every, ZARR_FLOAT64, &fill, sizeof fill);
/// ```
///
/// (Writing the fill value over the part to be cut off before shrinking works too.)
///
/// Time and memory follow the chunks stored, not the grid: when many chunk positions lie outside the
/// new shape (an array of 2^62 chunks shrunk), the stored chunks are listed and those outside deleted
/// (docs/limits.md).
///
/// @param array  an array opened for writing
/// @param shape  `rank` new extents
/// @param rank   must equal the array's rank
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL, wrong rank);
///          ZARR_ERR_READ_ONLY; ZARR_ERR_IO (then some chunks outside the new shape may be deleted
///          while the shape is unchanged).
/// Not thread-safe with other calls on the same handle. Safe against other handles and processes: the
/// call holds the array's metadata lock (waiting for their writes to finish), starts from the stored
/// metadata (keeping attributes another handle set) and changes only the shape. Other handles keep the
/// shape they were opened with; their writes then fail with ZARR_ERR_METADATA until reopened. Since: 0.2.
///
/// # Safety
/// `array` is an open handle; `shape` holds `rank` values.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_resize(array: *mut zarr_array, shape: *const u64, rank: usize) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get_mut(array) }?;
        if rank != a.shape().len() {
            return Err(Error::InvalidArgument(format!("rank {rank} given, the array has rank {}", a.shape().len())));
        }
        let shape = unsafe { slice_arg(shape, rank, "shape") }?.to_vec();
        a.resize(&shape)
    })
}

/// The number of chunks (shards, for a sharded array) along each dimension.
///
/// @param grid_shape  receives `rank` values
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL, wrong rank).
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `array` is an open handle; `grid_shape` has room for `rank` values.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_grid_shape(array: *const zarr_array, grid_shape: *mut u64, rank: usize) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        let g = a.grid_shape();
        if rank != g.len() {
            return Err(Error::InvalidArgument(format!("rank {rank} given, the array has rank {}", g.len())));
        }
        unsafe { slice_out(grid_shape, rank, "grid_shape") }?.copy_from_slice(&g);
        Ok(())
    })
}

/// The chunks (shards, for a sharded array) holding at least one element of a selection, by grid
/// coordinates, in C order. Call with `max_chunks` 0 to learn the number, then again with room.
///
/// @param start, count, step  the selection, as zarr_read_hyperslab() takes it (`step` NULL: all 1)
/// @param chunks      receives up to `max_chunks` coordinate vectors of rank values each (may be NULL
///                    when `max_chunks` is 0)
/// @param max_chunks  room in `chunks`, in chunks
/// @param num_chunks  receives the total number of chunks touched (may exceed `max_chunks`: then only the
///                    first `max_chunks` are written)
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_OUT_OF_BOUNDS.
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `start`, `count` (and `step` unless NULL) hold rank values; `chunks` has room for
/// `max_chunks * rank` values.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_selection_chunks(
    array: *const zarr_array,
    start: *const u64,
    count: *const u64,
    step: *const u64,
    chunks: *mut u64,
    max_chunks: usize,
    num_chunks: *mut usize,
) -> zarr_status {
    guard(|| {
        let (a, start, count) = unsafe { region_args(array, start, count) }?;
        let rank = a.shape().len();
        let step = unsafe { opt_slice_arg(step, rank, "step") }?;
        super::need_out(num_chunks, "num_chunks")?;
        let list = a.selection_chunks(&Selection::new(start, count, step)?)?;
        let n = list.len().min(max_chunks);
        let room = max_chunks.checked_mul(rank).ok_or_else(|| Error::InvalidArgument("max_chunks too large".into()))?;
        let out = unsafe { slice_out(chunks, if n == 0 { 0 } else { room }, "chunks") }?;
        for (i, c) in list.iter().take(n).enumerate() {
            out[i * rank..(i + 1) * rank].copy_from_slice(c);
        }
        unsafe { write_out(num_chunks, list.len(), "num_chunks") }
    })
}

/// Where a chunk lies: its first element and its shape (the full chunk shape: an edge chunk reaches
/// past the array's end). Either output may be NULL.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_OUT_OF_BOUNDS (not a
///          chunk of the grid).
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `chunk` holds rank values; non-NULL outputs have room for rank values.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_chunk_region(
    array: *const zarr_array,
    chunk: *const u64,
    origin: *mut u64,
    shape: *mut u64,
) -> zarr_status {
    guard(|| {
        let (a, chunk) = unsafe { array_chunk(array, chunk) }?;
        let rank = chunk.len();
        let (o, s) = a.chunk_region(chunk)?;
        if !origin.is_null() {
            unsafe { slice_out(origin, rank, "origin") }?.copy_from_slice(&o);
        }
        if !shape.is_null() {
            unsafe { slice_out(shape, rank, "shape") }?.copy_from_slice(&s);
        }
        Ok(())
    })
}

/// Whether a chunk is stored (1) or missing (0; it reads as the fill value).
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_OUT_OF_BOUNDS; ZARR_ERR_IO.
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `chunk` holds rank values; `stored` is valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_chunk_is_stored(array: *const zarr_array, chunk: *const u64, stored: *mut c_int) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        super::need_out(stored, "stored")?;
        let s = a.chunk_is_stored(unsafe { slice_arg(chunk, a.shape().len(), "chunk") }?)?;
        unsafe { write_out(stored, s as c_int, "stored") }
    })
}

/// Reads one whole chunk (shard, for a sharded array), decoded: its full shape (edge chunks
/// included, with whatever lies past the array's end), C order, native-endian, in the array's type.
/// A missing chunk reads as the fill value.
///
/// @param buffer_size  must equal the chunk's size in bytes (product of the chunk shape times the element size)
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_OUT_OF_BOUNDS;
///          ZARR_ERR_BUFFER_SIZE; ZARR_ERR_CODEC; ZARR_ERR_CHECKSUM; ZARR_ERR_IO.
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `chunk` holds rank values; `buffer` is writable for `buffer_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_read_chunk(
    array: *const zarr_array,
    chunk: *const u64,
    buffer: *mut c_void,
    buffer_size: usize,
) -> zarr_status {
    guard(|| {
        let (a, chunk) = unsafe { array_chunk(array, chunk) }?;
        let out = unsafe { slice_out(buffer.cast::<u8>(), buffer_size, "buffer") }?;
        a.read_whole_chunk(chunk, out).map(|_| ())
    })
}

/// Encodes and stores one whole chunk (layout as zarr_array_read_chunk()). A chunk equal to the fill
/// value everywhere is deleted instead of stored. The write is atomic.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_OUT_OF_BOUNDS;
///          ZARR_ERR_BUFFER_SIZE; ZARR_ERR_READ_ONLY; ZARR_ERR_VALUE; ZARR_ERR_IO.
/// Thread-safe, also across handles and processes: writes touching the same chunk or shard are applied
/// one after the other (see docs/concurrency.md). ZARR_ERR_METADATA when
/// another handle resized the array since this one was opened (nothing stored; reopen it). Since: 0.2.
///
/// # Safety
/// `chunk` holds rank values; `buffer` is readable for `buffer_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_write_chunk(
    array: *mut zarr_array,
    chunk: *const u64,
    buffer: *const c_void,
    buffer_size: usize,
) -> zarr_status {
    guard(|| {
        let (a, chunk) = unsafe { array_chunk(array, chunk) }?;
        let data = unsafe { slice_arg(buffer.cast::<u8>(), buffer_size, "buffer") }?;
        a.write_whole_chunk(chunk, data)
    })
}

/// Deletes one chunk: its elements read as the fill value afterwards. Erasing a missing chunk is no
/// error.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_OUT_OF_BOUNDS;
///          ZARR_ERR_READ_ONLY; ZARR_ERR_IO.
/// Thread-safe, also across handles and processes: writes touching the same chunk or shard are applied
/// one after the other (see docs/concurrency.md). ZARR_ERR_METADATA when
/// another handle resized the array since this one was opened (nothing stored; reopen it). Since: 0.2.
///
/// # Safety
/// `chunk` holds rank values.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_erase_chunk(array: *mut zarr_array, chunk: *const u64) -> zarr_status {
    guard(|| {
        let (a, chunk) = unsafe { array_chunk(array, chunk) }?;
        a.erase_chunk(chunk)
    })
}

/// The size in bytes of a dense buffer for `count` elements of `buffer_type` (C order): what
/// zarr_read_hyperslab() needs with `buffer_stride` NULL.
///
/// @param count        rank values
/// @param rank         must equal the array's rank
/// @param buffer_type  a type the array converts to (see zarr_read_hyperslab())
/// @param nbytes       receives the size
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL, wrong rank, a type that
///          does not convert); ZARR_ERR_BUFFER_SIZE (the size overflows size_t).
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `count` holds `rank` values; `nbytes` is valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_region_nbytes(
    array: *const zarr_array,
    count: *const u64,
    rank: usize,
    buffer_type: DataTypeCode,
    nbytes: *mut usize,
) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        if rank != a.shape().len() {
            return Err(Error::InvalidArgument(format!("rank {rank} given, the array has rank {}", a.shape().len())));
        }
        let count = unsafe { slice_arg(count, rank, "count") }?;
        let t = resolve_buffer_type(buffer_type, &a.metadata().data_type)?;
        crate::selection::convert::Conv::new(&a.metadata().data_type, &t)?;
        let n = count
            .iter()
            .try_fold(t.size() as u64, |acc, &c| acc.checked_mul(c))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| Error::BufferSize(format!("{count:?} elements of {t} overflow size_t")))?;
        unsafe { write_out(nbytes, n, "nbytes") }
    })
}
