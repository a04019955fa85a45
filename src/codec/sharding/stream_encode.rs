//! Streamed shard encoding: a shard whose index is at its end is handed out piece by piece, each inner
//! chunk as soon as it and every inner chunk before it are encoded, then the index
//! ([`ShardingCodec::encode_box_streamed`]). A store that can take a value in pieces
//! ([`crate::store::Store::stream_locked`]) thus writes a shard while it is being encoded: the
//! encoded bytes are written while still in the CPU's cache, and a few encoded inner chunks are held
//! at a time instead of the whole shard. The bytes are those of [`ShardingCodec::encode_box`]: inner
//! chunks in index order, back to back, fill-value chunks left out.
//!
//! The pool's threads take inner chunks in index order from a shared counter; whoever finishes the
//! next chunk due writes it and every later one already finished, while the others go on encoding.

use super::index::{Entry, IndexLocation};
use super::ShardingCodec;
use crate::error::{Error, Result};
use crate::selection::Layout;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Receives a streamed shard's bytes in order.
pub(crate) type ShardOut<'o> = &'o mut (dyn FnMut(&[&[u8]]) -> Result<()> + Send);

/// The inner chunks encoded but not yet handed out, and the index being built.
struct Order {
    /// Per inner chunk: `Some` once encoded (its bytes, `None` for a fill-value chunk), taken again
    /// when handed out.
    done: Vec<Option<Option<Vec<u8>>>>,
    /// The first inner chunk not yet handed out.
    next: usize,
    /// Whether a thread is handing chunks out now (the others leave theirs for it).
    busy: bool,
    /// Whether handing out failed: nothing more is handed out.
    failed: bool,
    /// The index entries of the chunks handed out, and the offset of the next.
    entries: Vec<Entry>,
    offset: u64,
}

impl ShardingCodec {
    /// Whether [`Self::encode_box_streamed`] can encode this codec's shards (index at the end: the
    /// inner chunks' offsets are known before they are written).
    pub(crate) fn streams(&self) -> bool {
        self.index.location == IndexLocation::End
    }

    /// Encodes the shard at `offset` of `src` (laid out by `layout`) as [`Self::encode_box`] does,
    /// handing its bytes to `out` in order while the inner chunks are encoded in parallel. Returns
    /// `false` when every inner chunk equals the fill value: then `out` got nothing, and the shard
    /// needs no storing. On an error (of an encode or of `out`) the shard was handed out in part only.
    /// Only for [`Self::streams`] codecs.
    pub(crate) fn encode_box_streamed(&self, src: &[u8], layout: &Layout, offset: usize, out: ShardOut<'_>) -> Result<bool> {
        if !self.streams() {
            return Err(Error::Internal("a shard with its index at the start cannot be streamed".into()));
        }
        let indices = self.inner_indices();
        let n = indices.len();
        let order = Mutex::new(Order { done: (0..n).map(|_| None).collect(), next: 0, busy: false, failed: false, entries: vec![None; n], offset: 0 });
        let out = Mutex::new(out);
        let (taken, failed) = (AtomicUsize::new(0), AtomicBool::new(false));
        let workers: Vec<usize> = (0..crate::threads::num_threads()?.clamp(1, n.max(1))).collect();
        crate::threads::try_for_each(&workers, |_| {
            while !failed.load(Ordering::Relaxed) {
                let i = taken.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let done = self.encode_inner(src, layout, offset, &indices[i]).and_then(|e| hand_out(&order, &out, i, e));
                if done.is_err() {
                    failed.store(true, Ordering::Relaxed);
                    return done;
                }
            }
            Ok(())
        })?;
        let order = order.into_inner().unwrap_or_else(|e| e.into_inner());
        debug_assert_eq!(order.next, n, "every inner chunk was handed out");
        if order.entries.iter().all(Option::is_none) {
            return Ok(false);
        }
        let index = self.index.encode(&order.entries)?;
        (out.into_inner().unwrap_or_else(|e| e.into_inner()))(&[&index])?;
        Ok(true)
    }
}

/// Records inner chunk `i` as encoded (`encoded`), then, unless another thread is at it, hands out
/// every chunk now due, in order, outside the lock, until none is. After a failed hand-out nothing
/// more is handed out.
fn hand_out(order: &Mutex<Order>, out: &Mutex<ShardOut<'_>>, i: usize, encoded: Option<Vec<u8>>) -> Result<()> {
    let lock = || order.lock().unwrap_or_else(|e| e.into_inner());
    let mut o = lock();
    o.done[i] = Some(encoded);
    if o.busy || o.failed {
        return Ok(());
    }
    o.busy = true;
    loop {
        let first = o.next;
        let mut due = Vec::new();
        loop {
            let at = o.next;
            let Some(slot) = o.done.get_mut(at).and_then(Option::take) else { break };
            due.push(slot);
            o.next += 1;
        }
        if due.is_empty() {
            o.busy = false;
            return Ok(());
        }
        for (k, bytes) in due.iter().enumerate() {
            if let Some(b) = bytes {
                o.entries[first + k] = Some((o.offset, b.len() as u64));
                o.offset += b.len() as u64;
            }
        }
        drop(o);
        let parts: Vec<&[u8]> = due.iter().flatten().map(Vec::as_slice).collect();
        let written = if parts.is_empty() { Ok(()) } else { (out.lock().unwrap_or_else(|e| e.into_inner()))(&parts) };
        drop(parts);
        // Written: the buffers serve the next inner chunks' encodes (`crate::scratch::take_encoded`).
        due.into_iter().flatten().for_each(crate::scratch::recycle_encoded);
        o = lock();
        if written.is_err() {
            (o.busy, o.failed) = (false, true);
            return written;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{ArrayRepr, ArrayToBytesCodec};
    use crate::dtype::DataType;
    use serde_json::json;

    /// A shard of 32 x 32 uint16 in 4 x 4 inner chunks (64 of them), zstd-compressed (so their sizes
    /// differ), index at `location`.
    fn codec(location: &str) -> (ShardingCodec, ArrayRepr) {
        let cfg = json!({"chunk_shape": [4, 4],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": location});
        let repr = ArrayRepr { shape: vec![32, 32], data_type: DataType::UInt16, fill_value: vec![0, 0] };
        (ShardingCodec::from_v3(cfg.as_object(), &repr).unwrap(), repr)
    }

    /// 32 x 32 uint16: noise, with every third inner chunk (in index order) all zero (fill value).
    fn data() -> Vec<u8> {
        let mut v = vec![0u8; 32 * 32 * 2];
        for r in 0..32usize {
            for c in 0..32usize {
                if ((r / 4) * 8 + c / 4) % 3 != 0 {
                    let x = ((r * 32 + c) as u32).wrapping_mul(2654435761) >> 13;
                    v[(r * 32 + c) * 2..][..2].copy_from_slice(&(x as u16 | 1).to_le_bytes());
                }
            }
        }
        v
    }

    /// The shard [`ShardingCodec::encode_box`] makes (the whole-shard path).
    fn whole(c: &ShardingCodec, repr: &ArrayRepr, src: &[u8]) -> Option<Vec<u8>> {
        let mut shard = None;
        c.encode_box(src, &repr.layout(), 0, repr, &mut |e| {
            shard = e.map(crate::codec::join_parts);
            Ok(())
        })
        .unwrap();
        shard
    }

    #[test]
    fn streamed_shards_are_the_whole_shards_bytes() {
        let (c, repr) = codec("end");
        let src = data();
        let mut pieces = 0;
        let mut streamed = Vec::new();
        let stored = c
            .encode_box_streamed(&src, &repr.layout(), 0, &mut |parts| {
                pieces += 1;
                parts.iter().for_each(|p| streamed.extend_from_slice(p));
                Ok(())
            })
            .unwrap();
        assert!(stored);
        assert_eq!(Some(streamed), whole(&c, &repr, &src));
        // 43 stored inner chunks and the index: handed out in several pieces, not at the end at once.
        assert!(pieces > 2, "{pieces} pieces");
        // The shard decodes to the data.
        let mut out = vec![0u8; src.len()];
        c.decode_into(&whole(&c, &repr, &src).unwrap(), &repr, &mut out).unwrap();
        assert_eq!(out, src);
    }

    #[test]
    fn an_all_fill_shard_hands_out_nothing() {
        let (c, repr) = codec("end");
        let mut called = false;
        let stored = c
            .encode_box_streamed(&vec![0u8; 32 * 32 * 2], &repr.layout(), 0, &mut |_| {
                called = true;
                Ok(())
            })
            .unwrap();
        assert!(!stored && !called);
    }

    #[test]
    fn a_failed_hand_out_ends_the_stream() {
        let (c, repr) = codec("end");
        let src = data();
        let mut calls = 0;
        let err = c
            .encode_box_streamed(&src, &repr.layout(), 0, &mut |_| {
                calls += 1;
                if calls == 2 {
                    return Err(Error::Io("disk full".into()));
                }
                Ok(())
            })
            .unwrap_err();
        assert!(matches!(err, Error::Io(ref m) if m == "disk full"), "{err:?}");
        assert_eq!(calls, 2, "nothing is handed out after the failure");
    }

    #[test]
    fn shards_with_the_index_first_are_not_streamed() {
        let (c, repr) = codec("start");
        assert!(!c.streams());
        let err = c.encode_box_streamed(&data(), &repr.layout(), 0, &mut |_| Ok(())).unwrap_err();
        assert!(matches!(err, Error::Internal(_)), "{err:?}");
        assert!(codec("end").0.streams());
    }
}
