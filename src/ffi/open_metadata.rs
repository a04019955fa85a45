//! Opening an array from a metadata document held by the caller (no storage read).

use super::array::{new_array, zarr_array, ZARR_READ, ZARR_READ_WRITE};
use super::status::*;
use super::str_arg;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::store::open_location;
use std::ffi::{c_char, c_int};

/// A flag for the `mode` of zarr_open_with_metadata(), combined with ZARR_READ_WRITE: writers are
/// coordinated by the caller. Writes through the handle take no store lock (no `.zarr.lock`, no
/// `fcntl`) and do not re-read the stored metadata to check the shape. The caller guarantees that no
/// two writers (handles, threads or processes) write one chunk (shard, for a sharded array) at the
/// same time, and that nobody resizes the array while the handle writes. libzarr_mpi's collective
/// writes (zarr_mpi_write_all()), where each shard has exactly one writer, use it. Since: 0.4.
pub const ZARR_COORDINATED: c_int = 4;

/// Opens the array at `path` from its metadata document, held by the caller, without reading
/// storage: the document is what zarr_array_metadata() returns for that array (or the text of its
/// `zarr.json`). One process of a job reads the metadata and sends the text to the others, which
/// open their handles with this call (libzarr_mpi's zarr_mpi_open() does): one metadata read per
/// job instead of one per process. The document is trusted to be the stored one: nothing is
/// compared with storage (a stale document describes an array that is no longer there).
///
/// @param path           where the array is (as zarr_open(): a directory, `file://`, `memory://`,
///                       `s3://`, ... location); nothing is read there
/// @param mode           ZARR_READ, ZARR_READ_WRITE, or ZARR_READ_WRITE | ZARR_COORDINATED
/// @param metadata_json  a Zarr v3 array document (`zarr.json`), NUL-terminated
/// @param out            receives the new handle (release with zarr_close()); set to NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL argument, bad mode or path);
///          ZARR_ERR_METADATA (not a valid array document); ZARR_ERR_UNSUPPORTED (a v2 or v1 document:
///          their attributes live in another document, so open them with zarr_open(); unknown codec or
///          data type); ZARR_ERR_READ_ONLY (ZARR_READ_WRITE on a read-only store such as HTTP or zip).
/// Thread-safe. Since: 0.4.
///
/// # Safety
/// `path` and `metadata_json` are NUL-terminated strings; `out` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_open_with_metadata(
    path: *const c_char,
    mode: c_int,
    metadata_json: *const c_char,
    out: *mut *mut zarr_array,
) -> zarr_status {
    // SAFETY (whole body): pointer arguments follow this function's documented contract.
    let make = || -> Result<Array> {
        let path = unsafe { str_arg(path, "path") }?;
        let json = unsafe { str_arg(metadata_json, "metadata_json") }?;
        let (writable, coordinated) = match mode {
            ZARR_READ => (false, false),
            ZARR_READ_WRITE => (true, false),
            m if m == ZARR_READ_WRITE | ZARR_COORDINATED => (true, true),
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "mode {mode} is neither ZARR_READ ({ZARR_READ}), ZARR_READ_WRITE ({ZARR_READ_WRITE}) nor \
                     ZARR_READ_WRITE | ZARR_COORDINATED ({})",
                    ZARR_READ_WRITE | ZARR_COORDINATED
                )))
            }
        };
        Array::open_from_document(open_location(path)?, "", json, writable, coordinated)
    };
    unsafe { new_array(out, make) }
}
