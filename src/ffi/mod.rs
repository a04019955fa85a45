//! The C ABI (`include/zarr.h`). Every exported function runs inside [`guard`]: errors become a status
//! code plus `zarr_last_error()`, and a panic becomes `ZARR_ERR_INTERNAL`, never an unwind into C.
//!
//! Handles are tokens naming a slot of a handle table (with its generation) that holds a boxed Rust
//! value and its kind, so that NULL, closed (also after the slot was reused), never-valid and mixed-up
//! handles are `ZARR_ERR_INVALID_HANDLE` without reading freed memory ([`handle`]).
#![allow(non_camel_case_types)]

pub mod array;
pub mod chunks;
pub mod group;
pub mod group_delete;
pub mod group_move;
pub mod handle;
pub mod icechunk;
pub mod icechunk_fork;
pub mod hyperslab;
pub mod index_order;
pub mod last_error;
pub mod memory_store;
pub mod open_metadata;
pub mod references;
pub mod spec;
pub mod status;
pub mod store_options;
pub mod version;
pub mod vlen;

use crate::error::{Error, Result};
use status::*;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs the body of an exported function: maps its error to a status code and records the message;
/// turns a panic into `ZARR_ERR_INTERNAL`.
pub(crate) fn guard(f: impl FnOnce() -> Result<()>) -> zarr_status {
    last_error::install_panic_hook();
    let was = last_error::set_in_call(true);
    let r = catch_unwind(AssertUnwindSafe(f));
    last_error::set_in_call(was);
    match r {
        Ok(Ok(())) => ZARR_OK,
        Ok(Err(e)) => {
            last_error::set_last_error(e.message());
            e.status()
        }
        Err(payload) => {
            let msg = last_error::take_panic_message()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            last_error::set_last_error(&format!("internal panic: {msg}"));
            ZARR_ERR_INTERNAL
        }
    }
}

/// A NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that outlives the returned reference.
pub(crate) unsafe fn str_arg<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    if p.is_null() {
        return Err(Error::InvalidArgument(format!("{what} is NULL")));
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| Error::InvalidArgument(format!("{what} is not valid UTF-8")))
}

/// An array argument of `n` elements (`p` may be NULL when `n` is 0).
///
/// # Safety
/// `p` is NULL or points to `n` readable elements that outlive the returned slice.
pub(crate) unsafe fn slice_arg<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::InvalidArgument(format!("{what} is NULL")));
    }
    // SAFETY: non-NULL, `n` elements by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// An optional array argument of `n` elements: `None` when `p` is NULL.
///
/// # Safety
/// As [`slice_arg`].
pub(crate) unsafe fn opt_slice_arg<'a, T>(p: *const T, n: usize, what: &str) -> Result<Option<&'a [T]>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded.
    unsafe { slice_arg(p, n, what) }.map(Some)
}

/// A writable output array argument of `n` elements.
///
/// # Safety
/// `p` is NULL or points to `n` writable elements not aliased elsewhere.
pub(crate) unsafe fn slice_out<'a, T>(p: *mut T, n: usize, what: &str) -> Result<&'a mut [T]> {
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(Error::InvalidArgument(format!("{what} is NULL")));
    }
    // SAFETY: as above.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// Writes `v` through the output pointer `p`.
///
/// # Safety
/// `p` is NULL or valid for writing a `T`.
pub(crate) unsafe fn write_out<T>(p: *mut T, v: T, what: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::InvalidArgument(format!("{what} is NULL")));
    }
    // SAFETY: non-NULL and writable by the caller's contract.
    unsafe { p.write(v) };
    Ok(())
}

/// Writes `v` through the output pointer `p` unless `p` is NULL (an output the caller may leave out).
///
/// # Safety
/// `p` is NULL or valid for writing a `T`.
pub(crate) unsafe fn write_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-NULL and writable by the caller's contract.
        unsafe { p.write(v) };
    }
}

/// Fails unless the output pointer `p` is non-NULL; called before any work so that a NULL output
/// never leaves a created node or a leaked object behind.
pub(crate) fn need_out<T>(p: *mut T, what: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::InvalidArgument(format!("{what} is NULL")));
    }
    Ok(())
}

/// Hands a string to the caller as a `malloc`-free C string owned by libzarr (free it with
/// `zarr_string_free`).
///
/// # Safety
/// `p` is NULL or valid for writing a pointer.
pub(crate) unsafe fn write_string(p: *mut *mut c_char, s: String, what: &str) -> Result<()> {
    let c = CString::new(s.replace('\0', "\\u0000")).expect("NULs replaced");
    // SAFETY: forwarded.
    unsafe { write_out(p, c.into_raw(), what) }
}

/// Runs an exported function whose result is a string returned through `out` (free it with
/// `zarr_string_free`): `out` is set to NULL first and checked before `make` runs, as
/// [`handle::new_handle`] does for handles.
///
/// # Safety
/// `out` is NULL or valid for writing a pointer.
pub(crate) unsafe fn new_string(out: *mut *mut c_char, what: &str, make: impl FnOnce() -> Result<String>) -> zarr_status {
    // SAFETY: caller's contract.
    unsafe { clear_out(out) };
    guard(|| {
        need_out(out, what)?;
        let s = make()?;
        // SAFETY: caller's contract, checked non-NULL above.
        unsafe { write_string(out, s, what) }
    })
}

/// A metadata document as the pretty-printed JSON text the `zarr_*_metadata` functions return.
pub(crate) fn document_text(doc: &serde_json::Value) -> Result<String> {
    serde_json::to_string_pretty(doc).map_err(|e| Error::Internal(e.to_string()))
}

/// Clears an output handle pointer on entry, so that it is NULL whenever the call fails.
///
/// # Safety
/// `p` is NULL or valid for writing a pointer.
pub(crate) unsafe fn clear_out<T>(p: *mut *mut T) {
    if !p.is_null() {
        // SAFETY: non-NULL and writable by the caller's contract.
        unsafe { p.write(std::ptr::null_mut()) };
    }
}

/// Frees a string returned by libzarr (attributes, metadata, names). NULL is a no-op.
///
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `s` is NULL or a string returned by libzarr that has not been freed yet.
#[no_mangle]
pub unsafe extern "C" fn zarr_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: created by CString::into_raw in write_string.
        drop(unsafe { CString::from_raw(s) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_header_is_current() {
        let before = include_str!(concat!(env!("OUT_DIR"), "/zarr.h.before"));
        let generated = include_str!(concat!(env!("OUT_DIR"), "/zarr.h"));
        assert!(
            before == generated,
            "include/zarr.h was stale when this build started (build.rs has now regenerated it): commit it"
        );
    }

    #[test]
    fn guard_maps_errors_and_panics() {
        assert_eq!(guard(|| Ok(())), ZARR_OK);
        assert_eq!(guard(|| Err(Error::Checksum("bad sum".into()))), ZARR_ERR_CHECKSUM);
        let msg = unsafe { CStr::from_ptr(last_error::zarr_last_error()) }.to_str().unwrap().to_string();
        assert_eq!(msg, "bad sum");
        assert_eq!(guard(|| panic!("boom")), ZARR_ERR_INTERNAL);
        let msg = unsafe { CStr::from_ptr(last_error::zarr_last_error()) }.to_str().unwrap().to_string();
        assert!(msg.starts_with("internal panic: boom"), "{msg}");
    }
}
