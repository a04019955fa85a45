//! Streamed shard writes: a shard that a write covers whole, from a caller's buffer in the array's
//! own type, on a store that takes values in pieces ([`crate::store::Store::stream_locked`]), is
//! written while its inner chunks are encoded ([`crate::codec::sharding::ShardingCodec::encode_box_streamed`])
//! instead of after all of them: the encoded bytes reach the store still in the CPU's cache, and the
//! write holds a few encoded inner chunks at a time rather than the whole encoded shard. The stored
//! bytes are the same as those of the whole-shard path, and the shard replaces the old one atomically
//! when its last byte is written (a failed encode leaves the old one).

use super::Array;
use crate::selection::convert::Conv;
use crate::selection::{ChunkPart, Layout};
use crate::error::Result;
use crate::store::StoreLock;

impl Array {
    /// Writes the shard of `part`, which the selection covers whole, streamed; `None` when this write
    /// cannot be streamed (not a shard with its index at the end, the elements need converting or are
    /// strided, an edge shard, no fill value, or a store that cannot stream), and the caller takes the
    /// whole-shard path. Holds `lock`, which covers the shard.
    pub(super) fn write_shard_streamed(&self, part: &ChunkPart, layout: &Layout, conv: &Conv, data: &[u8], lock: &StoreLock) -> Option<Result<()>> {
        let chain = self.meta.chain_for(&part.chunk).ok()?;
        let shard = chain.array_to_bytes().as_sharding()?;
        let repr = chain.decoded_repr();
        let whole = conv.is_identity() && part.local.is_dense() && part.local.count == repr.shape;
        if !chain.is_bare() || !shard.streams() || !self.meta.fill_defined || !whole {
            return None;
        }
        let key = self.chunk_key(&part.chunk);
        let mut stream = match self.store.stream_locked(&key, lock) {
            Ok(Some(s)) => s,
            Ok(None) => return None,
            Err(e) => return Some(Err(e)),
        };
        let mut out = |parts: &[&[u8]]| stream.write(parts);
        let stored = match shard.encode_box_streamed(data, layout, layout.offset_of(&part.out), &mut out) {
            Ok(true) => stream.commit(),
            // Every inner chunk is the fill value: nothing is stored, and an old shard goes.
            Ok(false) => {
                drop(stream);
                self.store.delete_locked(&key, lock)
            }
            Err(e) => Err(e),
        };
        Some(stored)
    }
}
