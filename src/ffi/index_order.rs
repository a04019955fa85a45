//! The index convention of this thread's messages (crate::index_order), for language bindings.

use super::status::*;
use super::{guard, write_out};
use crate::error::Error;
use crate::index_order::{self, IndexOrder};
use std::ffi::c_int;

/// zarr_set_message_index_order(): messages quote indices in C/Zarr order, 0-based (the default).
pub const ZARR_INDEX_ORDER_C: c_int = 0;
/// zarr_set_message_index_order(): messages quote indices in Fortran order (dimensions reversed),
/// 1-based.
pub const ZARR_INDEX_ORDER_FORTRAN: c_int = 1;

/// Sets how the messages of this thread's failing calls (zarr_last_error()) quote a caller's indices:
/// selection starts, counts, steps, shapes, chunk coordinates and dimension numbers. With
/// ZARR_INDEX_ORDER_FORTRAN they are written as a Fortran caller passes them to the Fortran module
/// (netCDF-Fortran's convention): dimensions reversed and positions 1-based, so an out-of-bounds read
/// of `start = [1, 1, 12]` in a Fortran array of shape `[4, 5, 10]` reports
/// `start [1, 1, 12] ... the array shape [4, 5, 10] in dimension 3` instead of
/// `start [11, 0, 0] ... [10, 5, 4] in dimension 0`. The arguments of every call stay in C order,
/// 0-based: only messages change. Metadata text (zarr.json) is quoted as stored. The Fortran module
/// sets ZARR_INDEX_ORDER_FORTRAN around its reads and writes and restores the previous setting after.
///
/// @param order     ZARR_INDEX_ORDER_C or ZARR_INDEX_ORDER_FORTRAN
/// @param previous  NULL or receives the setting in force before the call
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (another value; nothing changes).
/// Thread-safe: the setting belongs to the calling thread (a new thread starts with
/// ZARR_INDEX_ORDER_C) and applies to the messages of calls made on it. Since: 0.3.
///
/// # Safety
/// `previous` is NULL or valid for writing an int.
#[no_mangle]
pub unsafe extern "C" fn zarr_set_message_index_order(order: c_int, previous: *mut c_int) -> zarr_status {
    guard(|| {
        let new = match order {
            ZARR_INDEX_ORDER_C => IndexOrder::C,
            ZARR_INDEX_ORDER_FORTRAN => IndexOrder::Fortran,
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "index order {order} is neither ZARR_INDEX_ORDER_C (0) nor ZARR_INDEX_ORDER_FORTRAN (1)"
                )))
            }
        };
        let was = match index_order::set(new) {
            IndexOrder::C => ZARR_INDEX_ORDER_C,
            IndexOrder::Fortran => ZARR_INDEX_ORDER_FORTRAN,
        };
        if previous.is_null() {
            return Ok(());
        }
        // SAFETY: caller's contract.
        unsafe { write_out(previous, was, "previous") }
    })
}
