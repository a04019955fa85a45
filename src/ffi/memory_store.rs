//! C functions on the named in-memory stores behind `memory://NAME/...` locations.

use super::status::*;
use super::{guard, str_arg};
use crate::error::Error;
use std::ffi::c_char;

/// Removes the named in-memory store `name` (the NAME of `memory://NAME/...` locations), freeing its
/// data once no open handle uses it; a later `memory://NAME` location starts with an empty store.
///
/// Named memory stores are created empty by the first location that names them and otherwise live
/// until process exit. Handles already open on the store keep working on its (now unnamed) data
/// until they are closed.
///
/// @param name  the store name (no '/')
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL or invalid name); ZARR_ERR_NOT_FOUND (no store
///          of that name).
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `name` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_memory_store_remove(name: *const c_char) -> zarr_status {
    guard(|| {
        // SAFETY: `name` follows the documented contract.
        let name = unsafe { str_arg(name, "name") }?;
        if crate::store::memory::remove_named(name)? {
            Ok(())
        } else {
            Err(Error::NotFound(format!("no memory store named '{name}'")))
        }
    })
}
