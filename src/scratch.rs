//! Per-thread reusable buffers, so that decoding a chunk allocates (and page-faults) nothing in the
//! steady state. A buffer is moved out of its slot while in use: nested users get a fresh one.

use crate::error::Result;
use std::cell::Cell;

thread_local! {
    static DECODED: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    static ENCODED: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    static READ: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    static BETWEEN: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

fn put_back(slot: &'static std::thread::LocalKey<Cell<Vec<u8>>>, buf: Vec<u8>) {
    slot.with(|c| {
        let other = c.take();
        c.set(if other.capacity() > buf.capacity() { other } else { buf });
    });
}

/// Runs `f` with a per-thread buffer of `n` bytes (contents unspecified: the bytes are initialised but
/// may hold earlier data).
pub fn with_decoded<R>(n: usize, f: impl FnOnce(&mut [u8]) -> Result<R>) -> Result<R> {
    with_high_water(&DECODED, n, f)
}

/// Runs `f` with a per-thread buffer of `n` bytes for bytes read from a store (contents unspecified,
/// as for [`with_decoded`]; a slot of its own, so that decoding inside `f` still reuses its buffer):
/// a read that overwrites the whole buffer then costs no zeroing in the steady state.
pub fn with_read_buffer<R>(n: usize, f: impl FnOnce(&mut [u8]) -> Result<R>) -> Result<R> {
    with_high_water(&READ, n, f)
}

/// Runs `f` with a per-thread buffer of `n` bytes between two steps of a codec chain (contents
/// unspecified, as for [`with_decoded`]; a slot of its own, so that a chain decoding into a
/// [`with_decoded`] buffer still reuses one).
pub fn with_between<R>(n: usize, f: impl FnOnce(&mut [u8]) -> Result<R>) -> Result<R> {
    with_high_water(&BETWEEN, n, f)
}

fn with_high_water<R>(
    slot: &'static std::thread::LocalKey<Cell<Vec<u8>>>,
    n: usize,
    f: impl FnOnce(&mut [u8]) -> Result<R>,
) -> Result<R> {
    let mut buf = slot.with(|c| c.take());
    // The Vec's length is its high-water mark. A larger buffer replaces it with fresh zeroed memory
    // (contents are unspecified anyway): nothing is written here, so a buffer sized by a declared chunk
    // size costs resident memory only for what the caller writes into it.
    if buf.len() < n {
        drop(std::mem::take(&mut buf));
        buf = crate::error::try_alloc(n)?;
    }
    let r = f(&mut buf[..n]);
    put_back(slot, buf);
    r
}

/// Runs `f` with a per-thread, empty `Vec` whose capacity is kept between uses (for encoded chunk bytes).
pub fn with_encoded<R>(f: impl FnOnce(&mut Vec<u8>) -> Result<R>) -> Result<R> {
    let mut buf = ENCODED.with(|c| c.take());
    buf.clear();
    let r = f(&mut buf);
    put_back(&ENCODED, buf);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_and_reuse() {
        let r = with_decoded(8, |a| {
            a.fill(1);
            with_decoded(4, |b| {
                b.fill(2);
                Ok(b.len())
            })
        })
        .unwrap();
        assert_eq!(r, 4);
        let cap = with_encoded(|v| {
            v.extend_from_slice(&[1; 100]);
            Ok(v.capacity())
        })
        .unwrap();
        with_encoded(|v| {
            assert!(v.is_empty());
            assert!(v.capacity() >= cap.min(100));
            Ok(())
        })
        .unwrap();
    }
}
