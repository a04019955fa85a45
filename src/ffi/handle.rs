//! The one handle mechanism behind every opaque C type (`zarr_array`, `zarr_group`, `zarr_node_list`,
//! `zarr_vlen`).
//!
//! A handle is a boxed `Handle`: the kind's magic number first, then the Rust value. The C type is
//! an empty opaque struct implementing `HandleKind`, so a call site reads `zarr_array::get(p)` and
//! the value type follows from the pointer. Checking a pointer reads only its first 8 bytes, so NULL,
//! closed (the magic is cleared on close) and mixed-up handles are caught, best effort, as
//! `ZARR_ERR_INVALID_HANDLE`.

use super::status::zarr_status;
use super::{clear_out, guard, need_out, write_out};
use crate::error::{Error, Result};

/// What a handle pointer points to: the magic number of its kind, then the value.
#[repr(C)]
struct Handle<V> {
    magic: u64,
    value: V,
}

/// An opaque C handle type and the Rust value behind it.
pub(crate) trait HandleKind: Sized {
    /// The Rust value a handle of this kind owns.
    type Value;
    /// The kind's magic number (8 ASCII bytes such as "zarrARRY").
    const MAGIC: u64;
    /// Message of the `InvalidHandle` error for a NULL pointer.
    const NULL_MESSAGE: &'static str;
    /// Message of the `InvalidHandle` error for a closed, freed or foreign pointer.
    const STALE_MESSAGE: &'static str;

    /// Moves `value` into a new handle owned by the caller (release it with [`HandleKind::close`]).
    fn into_raw(value: Self::Value) -> *mut Self {
        Box::into_raw(Box::new(Handle { magic: Self::MAGIC, value })).cast()
    }

    /// The value behind a handle, after checking that `p` is a live handle of this kind.
    ///
    /// # Safety
    /// `p` is NULL or a pointer returned by libzarr (of any handle kind) that is at least 8 bytes
    /// readable; a live handle of this kind outlives the returned reference.
    unsafe fn get<'a>(p: *const Self) -> Result<&'a Self::Value> {
        if p.is_null() {
            return Err(Error::InvalidHandle(Self::NULL_MESSAGE.into()));
        }
        // SAFETY: caller's contract; every handle kind starts with its u64 magic (repr(C)), so only
        // those 8 bytes are read before the kind is known.
        if unsafe { p.cast::<u64>().read() } != Self::MAGIC {
            return Err(Error::InvalidHandle(Self::STALE_MESSAGE.into()));
        }
        // SAFETY: a live handle of this kind, created by `into_raw`.
        Ok(unsafe { &(*p.cast::<Handle<Self::Value>>()).value })
    }

    /// The value behind a handle, for calls that change it (e.g. resize).
    ///
    /// # Safety
    /// As [`HandleKind::get`], and no other reference to the value is used meanwhile.
    unsafe fn get_mut<'a>(p: *mut Self) -> Result<&'a mut Self::Value> {
        // SAFETY: checked by `get`; exclusivity is the caller's contract.
        unsafe { Self::get(p) }?;
        Ok(unsafe { &mut (*p.cast::<Handle<Self::Value>>()).value })
    }

    /// Frees a handle; NULL is a no-op. The magic is cleared first, so a second close (best effort)
    /// fails with `InvalidHandle` instead of freeing twice.
    ///
    /// # Safety
    /// As [`HandleKind::get`]; `p` is not used afterwards.
    unsafe fn close(p: *mut Self) -> Result<()> {
        if p.is_null() {
            return Ok(());
        }
        // SAFETY: checked by `get`; the box was created by `into_raw`.
        unsafe {
            Self::get(p)?;
            let h = p.cast::<Handle<Self::Value>>();
            (*h).magic = 0;
            drop(Box::from_raw(h));
        }
        Ok(())
    }
}

/// Runs an exported function whose result is a new handle returned through `out`: `out` is set to
/// NULL first (so it is NULL whenever the call fails) and checked before `make` runs (so a NULL
/// `out` never leaves a created node or a leaked object behind); then it receives the handle of what
/// `make` returns. Errors and panics become a status as in [`guard`].
///
/// # Safety
/// `out` is NULL or valid for writing a pointer.
pub(crate) unsafe fn new_handle<K: HandleKind>(out: *mut *mut K, make: impl FnOnce() -> Result<K::Value>) -> zarr_status {
    // SAFETY: caller's contract.
    unsafe { clear_out(out) };
    guard(|| {
        need_out(out, "out")?;
        let value = make()?;
        // SAFETY: caller's contract, checked non-NULL above.
        unsafe { write_out(out, K::into_raw(value), "out") }
    })
}

/// Implements [`HandleKind`] for an opaque C type.
macro_rules! handle_kind {
    ($c:ty, $value:ty, $magic:expr, $null:expr, $stale:expr) => {
        impl $crate::ffi::handle::HandleKind for $c {
            type Value = $value;
            const MAGIC: u64 = $magic;
            const NULL_MESSAGE: &'static str = $null;
            const STALE_MESSAGE: &'static str = $stale;
        }
    };
}
pub(crate) use handle_kind;

#[cfg(test)]
mod tests {
    use super::*;

    struct opaque_a {
        _opaque: [u8; 0],
    }
    struct opaque_b {
        _opaque: [u8; 0],
    }
    handle_kind!(opaque_a, String, 0x7a61_7272_5445_5341, "a is NULL", "not a live a");
    handle_kind!(opaque_b, u8, 0x7a61_7272_5445_5342, "b is NULL", "not a live b");

    #[test]
    fn get_checks_null_kind_and_close() {
        let a = opaque_a::into_raw("hello".to_string());
        assert_eq!(unsafe { opaque_a::get(a) }.unwrap(), "hello");
        unsafe { opaque_a::get_mut(a) }.unwrap().push('!');
        assert_eq!(unsafe { opaque_a::get(a) }.unwrap(), "hello!");
        // The wrong kind is refused after reading the magic only.
        assert_eq!(
            unsafe { opaque_b::get(a.cast::<opaque_b>()) },
            Err(Error::InvalidHandle("not a live b".into()))
        );
        assert_eq!(unsafe { opaque_a::get(std::ptr::null()) }, Err(Error::InvalidHandle("a is NULL".into())));
        assert_eq!(unsafe { opaque_a::close(std::ptr::null_mut()) }, Ok(()));
        let b = opaque_b::into_raw(7);
        assert_eq!(
            unsafe { opaque_a::close(b.cast::<opaque_a>()) },
            Err(Error::InvalidHandle("not a live a".into()))
        );
        assert_eq!(unsafe { opaque_b::close(b) }, Ok(()));
        assert_eq!(unsafe { opaque_a::close(a) }, Ok(()));
    }
}
