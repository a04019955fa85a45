//! Writes into part of a shard re-encode only the inner chunks the selection touches: the shard's
//! other inner chunks are carried over as their stored bytes (as tensorstore does), so a small write
//! costs a few inner chunks' codec work instead of the whole shard's.
//!
//! Phase 1 (before anything is stored, so a damaged shard fails the call with nothing changed) reads
//! the shard, checks its index and decodes the inner chunks the selection covers only in part;
//! phase 2 merges, encodes the touched inner chunks and lays the shard out again.

use super::Array;
use crate::buffer::{fill_elements, RawBuf};
use crate::codec::sharding::ShardingCodec;
use crate::codec::{ArrayToBytesCodec, Sink};
use crate::error::Result;
use crate::selection::convert::Conv;
use crate::selection::{copy, ChunkPart, Layout};
use crate::store::SliceSource;
use std::borrow::Cow;
use std::collections::HashMap;

/// What phase 1 gathered about a shard the selection covers in part.
pub(super) struct ShardUpdate {
    /// The stored shard (empty when it is missing).
    bytes: Vec<u8>,
    /// Its index (all empty when missing).
    entries: Vec<Option<(u64, u64)>>,
    /// Decoded inner chunks the selection covers only in part, by linear inner index.
    decoded: HashMap<usize, Vec<u8>>,
}

impl ShardUpdate {
    /// The bytes it holds (the stored shard, its index, the decoded inner chunks).
    pub(super) fn held_bytes(&self) -> usize {
        let index = self.entries.len() * std::mem::size_of::<Option<(u64, u64)>>();
        self.bytes.len() + index + self.decoded.values().map(Vec::len).sum::<usize>()
    }
}

impl Array {
    /// Phase 1 for a shard covered in part.
    pub(super) fn prepare_shard_update(&self, shard: &ShardingCodec, part: &ChunkPart) -> Result<ShardUpdate> {
        let limit = crate::store::ReadLimit::chunk(shard.max_encoded_size());
        let stored = self.store.get_limited(&self.chunk_key(&part.chunk), limit)?;
        self.shard_update_from(shard, part, stored)
    }

    /// Phase 1 for a shard covered in part, whose stored bytes (`None`: missing) were read already.
    pub(super) fn shard_update_from(&self, shard: &ShardingCodec, part: &ChunkPart, stored: Option<Vec<u8>>) -> Result<ShardUpdate> {
        let n = shard.chunks_per_shard().iter().product::<u64>() as usize;
        let Some(bytes) = stored else {
            return Ok(ShardUpdate { bytes: Vec::new(), entries: vec![None; n], decoded: HashMap::new() });
        };
        let entries = shard.read_index(&SliceSource(&bytes))?;
        let inner = shard.inner_chain();
        let mut decoded = HashMap::new();
        for ip in part.local.project(shard.inner_grid())? {
            let lin = shard.linear(&ip.chunk);
            if self.inner_covered(shard, part, &ip) {
                continue;
            }
            if let Some((o, len)) = entries[lin] {
                let mut buf = crate::error::try_alloc(inner.decoded_repr().nbytes())?;
                inner
                    .decode_chunk(&bytes[o as usize..(o + len) as usize], &mut buf)
                    .map_err(|e| e.context(format!("inner chunk {:?}", ip.chunk)))?;
                decoded.insert(lin, buf);
            }
        }
        Ok(ShardUpdate { bytes, entries, decoded })
    }

    /// Whether the inner part `ip` of shard part `part` covers every element of its inner chunk that
    /// lies inside the array.
    fn inner_covered(&self, shard: &ShardingCodec, part: &ChunkPart, ip: &ChunkPart) -> bool {
        let inner_shape = shard.inner_chunk_shape();
        ip.local.covers_chunk(&self.meta.shape, |d| {
            let (shard_origin, _) = self.grid().chunk_span(d, part.chunk[d]);
            (shard_origin + ip.chunk[d] * inner_shape[d], inner_shape[d])
        })
    }

    /// Phase 2: merges the selection's share of `data` into the touched inner chunks, encodes them,
    /// and hands the new shard (the untouched inner chunks' stored bytes reused) to `sink`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn write_shard_update(
        &self,
        shard: &ShardingCodec,
        part: &ChunkPart,
        mut update: ShardUpdate,
        layout: &Layout,
        conv: &Conv,
        data: &[u8],
        sink: Sink,
    ) -> Result<()> {
        let inner = shard.inner_chain();
        let repr = inner.decoded_repr();
        let chunk_layout = repr.layout();
        let src_base = layout.offset_of(&part.out);
        let touched = part.local.project(shard.inner_grid())?;
        let new: Vec<(usize, Option<Vec<u8>>)> = crate::threads::try_map(&touched, |ip| {
            let lin = shard.linear(&ip.chunk);
            let src_offset = src_base + layout.offset_of(&ip.out);
            let mut out = None;
            let mut keep = |e: Option<crate::codec::Parts>| {
                out = e.map(crate::codec::join_parts);
                Ok(())
            };
            if conv.is_identity() && ip.local.is_dense() && ip.local.count == repr.shape {
                inner.encode_box(data, layout, src_offset, repr, &mut keep)?;
                return Ok((lin, out));
            }
            let existing = update.decoded.get(&lin);
            crate::scratch::with_decoded(repr.nbytes(), |chunk| {
                match existing {
                    Some(d) => chunk.copy_from_slice(d),
                    None => fill_elements(chunk, &repr.fill_value),
                }
                let at = chunk_layout.offset_of(&ip.local.start);
                let into = chunk_layout.stepped(&ip.local.step);
                copy::copy(data, src_offset, layout, RawBuf::new(chunk), at, &into, &ip.local.count, conv)?;
                inner.encode_box(chunk, &chunk_layout, 0, repr, &mut keep)
            })?;
            Ok((lin, out))
        })?;
        update.decoded.clear();
        let mut replaced: HashMap<usize, Option<Vec<u8>>> = new.into_iter().collect();
        let bytes = &update.bytes;
        let encoded: Vec<Option<Cow<[u8]>>> = (0..update.entries.len())
            .map(|lin| match replaced.remove(&lin) {
                Some(e) => e.map(Cow::Owned),
                None => update.entries[lin].map(|(o, len)| Cow::Borrowed(&bytes[o as usize..(o + len) as usize])),
            })
            .collect();
        if encoded.iter().all(Option::is_none) {
            return sink(None);
        }
        sink(Some(shard.layout_parts(&encoded)?))
    }
}
