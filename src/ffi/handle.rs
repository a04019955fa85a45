//! The one handle mechanism behind every opaque C type (`zarr_array`, `zarr_group`, `zarr_node_list`,
//! `zarr_array_spec`, `zarr_store_options`, `zarr_vlen`).
//!
//! A handle is not an address: it is a token naming a slot of the process-wide handle table and the
//! slot's generation, `(generation << 35) | ((slot + 1) << 3)` (never NULL, low 3 bits clear so it looks
//! like an aligned pointer to C and C++ code that stores it). The slot holds the kind's magic number
//! and a pointer to the boxed Rust value. Checking a handle reads only the table, never memory the
//! token might point to, so NULL, never-valid pointers (anything not made here), closed handles and
//! handles of another kind are all `ZARR_ERR_INVALID_HANDLE` without touching freed memory. Closing a
//! handle bumps its slot's generation before the slot is reused, so a second close of a handle, even
//! after a new handle took the same slot, is `ZARR_ERR_INVALID_HANDLE` and never closes the new one
//! (the generation wraps after 2^29 reuses of one slot). The C type is an empty opaque struct
//! implementing `HandleKind`, so a call site reads `zarr_array::get(p)` and the value type follows.

use super::status::zarr_status;
use super::{clear_out, guard, need_out, write_out};
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Slots per page of the table; pages are allocated as needed and never freed.
const PAGE: usize = 4096;
/// Pages at most: 4096 x 4096 = 16.7 million handles open at once.
const PAGES: usize = 4096;
/// Bits of a token below the generation: the slot number + 1 (32 bits) and 3 clear bits.
const GEN_SHIFT: u32 = 35;
/// Generations wrap at this many bits (what fits above the slot number in a 64-bit token).
const GEN_MASK: u64 = (1 << (64 - GEN_SHIFT)) - 1;

/// One slot of the handle table. `state` is `generation << 1 | live`; `magic` and `value` are valid
/// while `live` is set.
pub(crate) struct Slot {
    state: AtomicU64,
    magic: AtomicU64,
    value: AtomicPtr<()>,
}

struct Table {
    pages: [AtomicPtr<Slot>; PAGES],
    /// Free slot numbers (closed handles), and the next never-used one.
    free: Mutex<(Vec<u32>, u32)>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| Table { pages: std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut())), free: Mutex::new((Vec::new(), 0)) })
}

impl Table {
    /// The slot `index`, if its page exists.
    fn slot(&self, index: usize) -> Option<&'static Slot> {
        let page = self.pages.get(index / PAGE)?.load(Ordering::Acquire);
        // SAFETY: a page, once published, lives (and is never moved) until the process ends.
        (!page.is_null()).then(|| unsafe { &*page.add(index % PAGE) })
    }

    /// A free slot (its page allocated if needed) and its number.
    fn take_slot(&self) -> Result<(usize, &'static Slot)> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let index = match free.0.pop() {
            Some(i) => i as usize,
            None => {
                let i = free.1 as usize;
                if i >= PAGE * PAGES {
                    return Err(Error::Internal(format!("more than {} handles open at once", PAGE * PAGES)));
                }
                if i % PAGE == 0 {
                    let page: Box<[Slot]> = (0..PAGE)
                        .map(|_| Slot { state: AtomicU64::new(0), magic: AtomicU64::new(0), value: AtomicPtr::new(std::ptr::null_mut()) })
                        .collect();
                    // Published under the lock; never freed.
                    self.pages[i / PAGE].store(Box::into_raw(page).cast::<Slot>(), Ordering::Release);
                }
                free.1 += 1;
                i
            }
        };
        Ok((index, self.slot(index).expect("allocated above")))
    }

    fn release_slot(&self, index: usize) {
        self.free.lock().unwrap_or_else(|e| e.into_inner()).0.push(index as u32);
    }
}

/// The token of slot `index` at `generation`.
fn token(index: usize, generation: u64) -> usize {
    (((generation & GEN_MASK) << GEN_SHIFT) | ((index as u64 + 1) << 3)) as usize
}

/// The slot number and generation a token names; `None` for what no token looks like.
fn untoken(p: usize) -> Option<(usize, u64)> {
    let p = p as u64;
    if p & 7 != 0 {
        return None;
    }
    let slot = (p >> 3) & ((1 << (GEN_SHIFT - 3)) - 1);
    (slot != 0).then(|| ((slot - 1) as usize, p >> GEN_SHIFT))
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
    fn into_raw(value: Self::Value) -> Result<*mut Self> {
        let t = table();
        let (index, slot) = t.take_slot()?;
        let generation = slot.state.load(Ordering::Relaxed) >> 1;
        slot.magic.store(Self::MAGIC, Ordering::Relaxed);
        slot.value.store(Box::into_raw(Box::new(value)).cast(), Ordering::Relaxed);
        slot.state.store(generation << 1 | 1, Ordering::Release);
        Ok(token(index, generation) as *mut Self)
    }

    /// The slot a live handle `p` of this kind names, and its live state.
    fn live_slot(p: *const Self) -> Result<(usize, &'static Slot, u64)> {
        if p.is_null() {
            return Err(Error::InvalidHandle(Self::NULL_MESSAGE.into()));
        }
        let stale = || Error::InvalidHandle(Self::STALE_MESSAGE.into());
        let (index, generation) = untoken(p as usize).ok_or_else(stale)?;
        let slot = table().slot(index).ok_or_else(stale)?;
        let live = (generation << 1) | 1;
        if slot.state.load(Ordering::Acquire) & ((GEN_MASK << 1) | 1) != live || slot.magic.load(Ordering::Relaxed) != Self::MAGIC {
            return Err(stale());
        }
        Ok((index, slot, live))
    }

    /// The value behind a handle, after checking that `p` is a live handle of this kind.
    ///
    /// # Safety
    /// `p` is any pointer value (it is never dereferenced); a live handle of this kind is not closed
    /// while the returned reference is in use.
    unsafe fn get<'a>(p: *const Self) -> Result<&'a Self::Value> {
        let (_, slot, _) = Self::live_slot(p)?;
        // SAFETY: a live slot of this kind holds a value boxed by `into_raw`, freed only by `close`.
        Ok(unsafe { &*slot.value.load(Ordering::Acquire).cast::<Self::Value>() })
    }

    /// The value behind a handle, for calls that change it (e.g. resize).
    ///
    /// # Safety
    /// As [`HandleKind::get`], and no other reference to the value is used meanwhile.
    unsafe fn get_mut<'a>(p: *mut Self) -> Result<&'a mut Self::Value> {
        let (_, slot, _) = Self::live_slot(p)?;
        // SAFETY: as in `get`; exclusivity is the caller's contract.
        Ok(unsafe { &mut *slot.value.load(Ordering::Acquire).cast::<Self::Value>() })
    }

    /// Frees a handle; NULL is a no-op. The slot is marked closed (its generation bumped) before the
    /// value is dropped, so a second close of the same handle, also after its slot was reused, fails
    /// with `InvalidHandle` (and of two threads closing a handle at once, one does).
    ///
    /// # Safety
    /// `p` is any pointer value; it is not used afterwards.
    unsafe fn close(p: *mut Self) -> Result<()> {
        if p.is_null() {
            return Ok(());
        }
        let (index, slot, live) = Self::live_slot(p)?;
        let next = (((live >> 1) + 1) & GEN_MASK) << 1;
        if slot.state.compare_exchange(live, next, Ordering::AcqRel, Ordering::Acquire).is_err() {
            return Err(Error::InvalidHandle(Self::STALE_MESSAGE.into()));
        }
        let value = slot.value.swap(std::ptr::null_mut(), Ordering::AcqRel);
        // SAFETY: boxed by `into_raw`; this close won the slot, so no other close frees it.
        drop(unsafe { Box::from_raw(value.cast::<Self::Value>()) });
        table().release_slot(index);
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
        let handle = K::into_raw(value)?;
        // SAFETY: caller's contract, checked non-NULL above.
        unsafe { write_out(out, handle, "out") }
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
        let a = opaque_a::into_raw("hello".to_string()).unwrap();
        assert_eq!(unsafe { opaque_a::get(a) }.unwrap(), "hello");
        unsafe { opaque_a::get_mut(a) }.unwrap().push('!');
        assert_eq!(unsafe { opaque_a::get(a) }.unwrap(), "hello!");
        // The wrong kind is refused from the table alone.
        assert_eq!(
            unsafe { opaque_b::get(a.cast::<opaque_b>()) },
            Err(Error::InvalidHandle("not a live b".into()))
        );
        assert_eq!(unsafe { opaque_a::get(std::ptr::null()) }, Err(Error::InvalidHandle("a is NULL".into())));
        assert_eq!(unsafe { opaque_a::close(std::ptr::null_mut()) }, Ok(()));
        let b = opaque_b::into_raw(7).unwrap();
        assert_eq!(
            unsafe { opaque_a::close(b.cast::<opaque_a>()) },
            Err(Error::InvalidHandle("not a live a".into()))
        );
        assert_eq!(unsafe { opaque_b::close(b) }, Ok(()));
        assert_eq!(unsafe { opaque_a::close(a) }, Ok(()));
    }

    #[test]
    fn closed_and_never_valid_handles_are_refused_after_reuse() {
        let a = opaque_a::into_raw("first".to_string()).unwrap();
        assert_eq!(unsafe { opaque_a::close(a) }, Ok(()));
        assert!(unsafe { opaque_a::get(a) }.is_err(), "a closed handle");
        // The next handle takes the freed slot: the old token stays dead and never closes it.
        let mut reused = None;
        let mut others = Vec::new();
        for i in 0..64 {
            let n = opaque_a::into_raw(format!("n{i}")).unwrap();
            if untoken(n as usize).map(|(s, _)| s) == untoken(a as usize).map(|(s, _)| s) {
                reused = Some(n);
                break;
            }
            others.push(n);
        }
        let n = reused.expect("the freed slot is reused");
        assert_ne!(n, a);
        assert_eq!(unsafe { opaque_a::close(a) }, Err(Error::InvalidHandle("not a live a".into())));
        assert_eq!(unsafe { opaque_a::get(n) }.unwrap().as_str().as_bytes()[0], b'n');
        assert_eq!(unsafe { opaque_a::close(n) }, Ok(()));
        assert!(unsafe { opaque_a::close(n) }.is_err());
        for o in others {
            assert_eq!(unsafe { opaque_a::close(o) }, Ok(()));
        }
        // Pointers libzarr never made: never read.
        let local = 5u64;
        for p in [&local as *const u64 as usize, 1, 8, 0xdead_beef0, usize::MAX & !7, token(PAGE * PAGES - 1, 3)] {
            assert!(unsafe { opaque_a::get(p as *const opaque_a) }.is_err(), "{p:#x}");
            assert!(unsafe { opaque_a::close(p as *mut opaque_a) }.is_err(), "{p:#x}");
        }
    }
}
