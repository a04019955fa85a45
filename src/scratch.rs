//! Per-thread reusable buffers, so that decoding a chunk allocates (and page-faults) nothing in the
//! steady state. A buffer is moved out of its slot while in use: nested users get a fresh one.
//!
//! Encoded chunks are handed between threads (a shard's inner chunks are encoded on every thread and
//! stored together), so their buffers go back to one shared pool once their bytes are stored
//! ([`recycle_encoded`]) and the next encodes take them from it ([`take_encoded`]). Without it, a
//! write of whole shards allocated a shard's worth of fresh memory per shard and freed it again once
//! the shard was stored; the allocator returned that memory to the system each time, and every page
//! of it was faulted in (zeroed) again for the next shard (37 000 page faults per 256 MiB written,
//! about a tenth of the write's CPU time; 11 000 with the pool, for the first shards). The
//! pool holds at most [`RECYCLED_MAX_BYTES`] and is emptied at the end of every write call
//! ([`release_encoded`]), so nothing stays held between calls.

use crate::error::Result;
use std::cell::Cell;
use std::sync::Mutex;

/// The most bytes (of capacity) the pool of encoded-chunk buffers holds: two shards of 64 inner
/// chunks of 512 KiB in flight at once.
const RECYCLED_MAX_BYTES: usize = 64 << 20;

/// The most buffers the pool holds (a take looks through them for one large enough).
const RECYCLED_MAX_COUNT: usize = 256;

/// The pool of encoded-chunk buffers and the sum of their capacities.
static RECYCLED: Mutex<(Vec<Vec<u8>>, usize)> = Mutex::new((Vec::new(), 0));

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

/// An empty buffer with room for at least `capacity` bytes, for an encoded chunk: one from the pool
/// of [`recycle_encoded`] when one is large enough, else a new one.
pub fn take_encoded(capacity: usize) -> Vec<u8> {
    let found = {
        let mut pool = RECYCLED.lock().unwrap_or_else(|e| e.into_inner());
        match pool.0.iter().rposition(|b| b.capacity() >= capacity) {
            Some(i) => {
                let buf = pool.0.swap_remove(i);
                pool.1 -= buf.capacity();
                Some(buf)
            }
            None => None,
        }
    };
    match found {
        Some(mut buf) => {
            buf.clear();
            buf
        }
        None => Vec::with_capacity(capacity),
    }
}

/// Hands back the buffer of an encoded chunk whose bytes are stored, for [`take_encoded`]; dropped
/// instead when the pool is full.
pub fn recycle_encoded(buf: Vec<u8>) {
    let cap = buf.capacity();
    if cap == 0 {
        return;
    }
    let mut pool = RECYCLED.lock().unwrap_or_else(|e| e.into_inner());
    if pool.1 + cap <= RECYCLED_MAX_BYTES && pool.0.len() < RECYCLED_MAX_COUNT {
        pool.1 += cap;
        pool.0.push(buf);
    }
}

/// Frees every buffer in the pool of [`recycle_encoded`] (at the end of a write call).
pub fn release_encoded() {
    let bufs = {
        let mut pool = RECYCLED.lock().unwrap_or_else(|e| e.into_inner());
        pool.1 = 0;
        std::mem::take(&mut pool.0)
    };
    drop(bufs);
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

    #[test]
    fn encoded_buffers_are_reused_and_bounded() {
        // Other tests may use the pool at the same time: only what this test can rely on is checked.
        let mut b = take_encoded(1000);
        assert!(b.is_empty() && b.capacity() >= 1000);
        b.extend_from_slice(&[7; 10]);
        recycle_encoded(b);
        let again = take_encoded(10);
        assert!(again.is_empty(), "a recycled buffer comes back empty");
        recycle_encoded(again);
        // A buffer larger than the pool's bound is dropped, not held.
        recycle_encoded(Vec::with_capacity(RECYCLED_MAX_BYTES + 1));
        assert!(RECYCLED.lock().unwrap().1 <= RECYCLED_MAX_BYTES);
        release_encoded();
    }
}
