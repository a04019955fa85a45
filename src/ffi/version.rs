//! Library version and thread-pool settings.

use super::guard;
use super::status::*;
use super::write_out;
use std::ffi::c_char;

/// The library's version string ("MAJOR.MINOR.PATCH"), to compare with ZARR_VERSION_STRING from the
/// header a program was compiled with. Static; never NULL. Since: 0.1.
#[no_mangle]
pub extern "C" fn zarr_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The library's version as MAJOR * 10000 + MINOR * 100 + PATCH (compare with ZARR_VERSION_NUMBER).
/// Since: 0.1.
#[no_mangle]
pub extern "C" fn zarr_version_number() -> u32 {
    let p = |s: &str| s.parse::<u32>().unwrap_or(0);
    p(env!("CARGO_PKG_VERSION_MAJOR")) * 10000 + p(env!("CARGO_PKG_VERSION_MINOR")) * 100 + p(env!("CARGO_PKG_VERSION_PATCH"))
}

/// Sets the number of threads that encode and decode chunks (0: the default, from the environment
/// variable ZARR_NUM_THREADS or else the number of CPUs). Calls already running keep their threads.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (more than 4096); ZARR_ERR_INTERNAL.
/// Thread-safe. Since: 0.1.
#[no_mangle]
pub extern "C" fn zarr_set_num_threads(num_threads: usize) -> zarr_status {
    guard(|| crate::threads::set_num_threads(num_threads))
}

/// The number of threads that encode and decode chunks.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL).
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `num_threads` is valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_get_num_threads(num_threads: *mut usize) -> zarr_status {
    guard(|| {
        let n = crate::threads::num_threads()?;
        // SAFETY: caller's contract.
        unsafe { write_out(num_threads, n, "num_threads") }
    })
}
