//! Status codes returned by every C function: the codes themselves live in the core ([`crate::status`])
//! and are re-exported here; [`zarr_status_name`] names them for C.

use std::ffi::c_char;

pub use crate::status::*;

/// The name of a status code, e.g. `"ZARR_ERR_CHECKSUM"`; `"ZARR_ERR_UNKNOWN"` for other values.
///
/// Returns a static string (never NULL, never freed). Thread-safe. Since: 0.1.
#[no_mangle]
pub extern "C" fn zarr_status_name(status: zarr_status) -> *const c_char {
    let s: &'static [u8] = match status {
        ZARR_OK => b"ZARR_OK\0",
        ZARR_ERR_INVALID_ARGUMENT => b"ZARR_ERR_INVALID_ARGUMENT\0",
        ZARR_ERR_INVALID_HANDLE => b"ZARR_ERR_INVALID_HANDLE\0",
        ZARR_ERR_BUFFER_SIZE => b"ZARR_ERR_BUFFER_SIZE\0",
        ZARR_ERR_OUT_OF_BOUNDS => b"ZARR_ERR_OUT_OF_BOUNDS\0",
        ZARR_ERR_READ_ONLY => b"ZARR_ERR_READ_ONLY\0",
        ZARR_ERR_METADATA => b"ZARR_ERR_METADATA\0",
        ZARR_ERR_UNSUPPORTED => b"ZARR_ERR_UNSUPPORTED\0",
        ZARR_ERR_VALUE => b"ZARR_ERR_VALUE\0",
        ZARR_ERR_CODEC => b"ZARR_ERR_CODEC\0",
        ZARR_ERR_CHECKSUM => b"ZARR_ERR_CHECKSUM\0",
        ZARR_ERR_NOT_FOUND => b"ZARR_ERR_NOT_FOUND\0",
        ZARR_ERR_EXISTS => b"ZARR_ERR_EXISTS\0",
        ZARR_ERR_IO => b"ZARR_ERR_IO\0",
        ZARR_ERR_INTERNAL => b"ZARR_ERR_INTERNAL\0",
        ZARR_ERR_MEMORY => b"ZARR_ERR_MEMORY\0",
        ZARR_ERR_CONFLICT => b"ZARR_ERR_CONFLICT\0",
        _ => b"ZARR_ERR_UNKNOWN\0",
    };
    s.as_ptr().cast()
}
