//! Speculative shard reads on remote stores: the request that fetches a shard's index also brings the
//! inner chunks the read likely needs, so that a window into a shard costs one round trip.
//!
//! The index lies at one end of the shard (`index_location` "end": a suffix range; "start": a prefix),
//! so one range can hold it together with the inner chunks stored next to it. [`LayoutModel::plan`]
//! predicts how far from that end the needed inner chunks lie: their places in the storage order
//! times the size of an inner chunk. Both come from this array's shards read before (the order in
//! which the last index read placed its inner chunks, and the mean stored size of an inner chunk, with
//! a quarter added); before any index was read, the inner chunks are assumed stored in C order or in
//! Morton order (as zarr-python writes them), whichever puts the needed ones farther from the index,
//! each at its decoded size (compression only makes them smaller). When that span is at most the
//! store's bandwidth-delay estimate ([`crate::store::Store::speculative_read_bytes`]: the bytes that
//! arrive in the time of one round trip, at most `speculative_read_max`), the range asked for is the
//! index and that span; otherwise the index alone. A shard shorter than the range arrives whole. The
//! bytes read are therefore at most the index plus `speculative_read_max`, and the inner chunks the
//! answer does not hold are fetched together afterwards (coalesced, in one wave).

use crate::codec::sharding::index::{Entry, IndexLocation};
use crate::codec::sharding::ShardingCodec;
use crate::store::OpenHint;
use std::sync::{Arc, Mutex};

/// Inner chunks per shard up to which the storage order is learned and Morton ranks are computed
/// (4 bytes each): beyond, the span is predicted from C order alone.
const MAX_RANKED: usize = 1 << 20;
/// A rank no inner chunk has (an empty inner chunk of a learned index).
const UNRANKED: u32 = u32::MAX;

/// What this array's shards read so far say about where inner chunks are stored.
#[derive(Debug, Default)]
pub(crate) struct LayoutModel {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The mean stored size of a non-empty inner chunk in the indexes read, with how many went in.
    mean_inner: Option<(f64, u64)>,
    /// The place of each inner chunk (by its C-order position in the index) in the storage order of
    /// the last index read ([`UNRANKED`]: empty there).
    ranks: Option<Arc<Vec<u32>>>,
    /// Each inner chunk's place in Morton order (computed once).
    morton: Option<Arc<Vec<u32>>>,
}

impl LayoutModel {
    /// Learns from the index `entries` of a shard of this array.
    pub(crate) fn learn(&self, entries: &[Entry]) {
        let stored: Vec<(u64, u32)> =
            entries.iter().enumerate().filter_map(|(i, e)| e.filter(|e| e.1 > 0).map(|(o, _)| (o, i as u32))).collect();
        if stored.is_empty() {
            return;
        }
        let total: u64 = entries.iter().flatten().map(|e| e.1).sum();
        let mut ranks = None;
        if entries.len() <= MAX_RANKED {
            let mut by_offset = stored.clone();
            by_offset.sort_unstable();
            let mut r = vec![UNRANKED; entries.len()];
            for (rank, (_, i)) in by_offset.iter().enumerate() {
                r[*i as usize] = rank as u32;
            }
            ranks = Some(Arc::new(r));
        }
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (mean, n) = s.mean_inner.unwrap_or((0.0, 0));
        let added = stored.len() as u64;
        s.mean_inner = Some(((mean * n as f64 + total as f64) / (n + added) as f64, n + added));
        if ranks.is_some() {
            s.ranks = ranks;
        }
    }

    /// What to ask for when opening a shard of `shard` for a read of the inner chunks at C-order
    /// positions `needed`, fetching at most `budget` bytes beyond the index (see the module
    /// documentation).
    pub(crate) fn plan(&self, shard: &ShardingCodec, needed: &[usize], budget: u64) -> OpenHint {
        let (index_len, location) = shard.index_layout();
        let only_index = shard.index_hint();
        let n = shard.num_inner_chunks();
        if budget == 0 || needed.is_empty() || n == 0 {
            return only_index;
        }
        let (per_chunk, ranks, morton) = {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if s.morton.is_none() && n <= MAX_RANKED {
                s.morton = Some(Arc::new(morton_ranks(shard.chunks_per_shard())));
            }
            let per_chunk = match s.mean_inner {
                Some((mean, _)) => mean * 1.25,
                None => shard.inner_chain().decoded_repr().nbytes() as f64,
            };
            (per_chunk, s.ranks.clone().filter(|r| r.len() == n), s.morton.clone())
        };
        // Inner chunks between the index and each needed one, that one included: by its place in the
        // learned storage order (among the inner chunks that index stored), else by its place in C
        // and in Morton order (among all), whichever is farther.
        let stored = ranks.as_ref().map_or(0, |r| r.iter().filter(|&&r| r != UNRANKED).count() as u64);
        let distance = |i: usize| -> u64 {
            let learned = ranks.as_ref().map(|r| r[i]).filter(|&r| r != UNRANKED).map(u64::from);
            let assumed = [Some(i as u64), morton.as_ref().map(|m| u64::from(m[i]))];
            match (location, learned) {
                (IndexLocation::End, Some(r)) => stored - r,
                (IndexLocation::Start, Some(r)) => r + 1,
                (IndexLocation::End, None) => assumed.iter().flatten().map(|p| n as u64 - p).max().unwrap_or(n as u64),
                (IndexLocation::Start, None) => assumed.iter().flatten().map(|p| p + 1).max().unwrap_or(n as u64),
            }
        };
        let chunks = needed.iter().map(|&i| distance(i)).max().unwrap_or(0);
        let span = (chunks as f64 * per_chunk).ceil();
        if !(span.is_finite() && span <= budget as f64) {
            return only_index;
        }
        let want = index_len + span as u64;
        match location {
            IndexLocation::End => OpenHint::Tail(want),
            IndexLocation::Start => OpenHint::Head(want),
        }
    }
}

/// The place of each inner chunk (by C-order position) in zarr-python's Morton order over a grid of
/// `shape` inner chunks: bits interleaved from the lowest up, the first dimension first, each
/// dimension with as many bits as its extent needs.
fn morton_ranks(shape: &[u64]) -> Vec<u32> {
    let bits: Vec<u32> = shape.iter().map(|&c| if c <= 1 { 0 } else { 64 - (c - 1).leading_zeros() }).collect();
    let max_bits = bits.iter().copied().max().unwrap_or(0);
    let n = shape.iter().product::<u64>() as usize;
    let mut codes: Vec<(u128, u32)> = Vec::with_capacity(n);
    let mut idx = vec![0u64; shape.len()];
    for linear in 0..n {
        let mut z = 0u128;
        let mut bit = 0;
        for b in 0..max_bits {
            for (d, &c) in idx.iter().enumerate() {
                if b < bits[d] {
                    z |= (((c >> b) & 1) as u128) << bit;
                    bit += 1;
                }
            }
        }
        codes.push((z, linear as u32));
        // Next C-order index.
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    codes.sort_unstable();
    let mut ranks = vec![0u32; n];
    for (rank, (_, linear)) in codes.iter().enumerate() {
        ranks[*linear as usize] = rank as u32;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::ArrayRepr;
    use crate::dtype::DataType;
    use serde_json::json;

    /// Shards of 8 x 8 inner chunks of 4 x 4 uint16 (32 bytes decoded), index at `location`.
    fn codec(location: &str) -> ShardingCodec {
        let cfg = json!({"chunk_shape": [4, 4], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": location});
        let repr = ArrayRepr { shape: vec![32, 32], data_type: DataType::UInt16, fill_value: vec![0, 0] };
        ShardingCodec::from_v3(cfg.as_object(), &repr).unwrap()
    }

    const INDEX: u64 = 64 * 16 + 4;

    #[test]
    fn morton_order_as_zarr_python_writes_it() {
        // zarr-python's morton_order_iter((2, 2)) is (0,0), (1,0), (0,1), (1,1): the first dimension's
        // bit lowest.
        assert_eq!(morton_ranks(&[2, 2]), [0, 2, 1, 3]);
        // (3, 2): codes of the 4 x 2 box, out-of-bounds ones skipped: (0,0) (1,0) (0,1) (1,1) (2,0) (2,1).
        assert_eq!(morton_ranks(&[3, 2]), [0, 2, 1, 3, 4, 5]);
        assert_eq!(morton_ranks(&[5]), [0, 1, 2, 3, 4]);
        let r = morton_ranks(&[8, 8]);
        assert_eq!((r[0], r[1], r[8], r[63]), (0, 2, 1, 63));
    }

    #[test]
    fn plans_a_suffix_covering_the_needed_chunks_within_the_budget() {
        let c = codec("end");
        let m = LayoutModel::default();
        // Nothing learned: the last inner chunk (63, last in C and Morton order) is one chunk of 32
        // bytes from the index.
        assert_eq!(m.plan(&c, &[63], 1 << 20), OpenHint::Tail(INDEX + 32));
        // Chunk (0, 7): C place 7, Morton place 42 (2*21): the farther one, C, decides: 57 chunks.
        assert_eq!(morton_ranks(&[8, 8])[7], 42);
        assert_eq!(m.plan(&c, &[7], 1 << 20), OpenHint::Tail(INDEX + 57 * 32));
        // Beyond the budget: the index alone; no budget: the index alone.
        assert_eq!(m.plan(&c, &[7], 57 * 32 - 1), OpenHint::Tail(INDEX));
        assert_eq!(m.plan(&c, &[63], 0), OpenHint::Tail(INDEX));
        // Index at the start: a prefix to the farthest needed chunk.
        let s = codec("start");
        assert_eq!(m.plan(&s, &[0], 1 << 20), OpenHint::Head(INDEX + 32));
        assert_eq!(m.plan(&s, &[0, 8], 1 << 20), OpenHint::Head(INDEX + 9 * 32), "C place 8 (farther than Morton place 1)");
    }

    #[test]
    fn learns_the_order_and_the_size_of_inner_chunks() {
        let c = codec("end");
        let m = LayoutModel::default();
        // A shard storing its inner chunks in reverse C order, 10 bytes each, chunk 5 empty.
        let entries: Vec<Entry> =
            (0..64u64).map(|i| if i == 5 { None } else { Some(((63 - i) * 10, 10)) }).collect();
        m.learn(&entries);
        // Chunk 0 is stored last: 1 chunk of 12.5 bytes (the mean with a quarter added).
        assert_eq!(m.plan(&c, &[0], 1 << 20), OpenHint::Tail(INDEX + 13));
        // Chunk 63 is stored first (place 0 of the 63 stored): 63 chunks from the end.
        assert_eq!(m.plan(&c, &[63], 1 << 20), OpenHint::Tail(INDEX + 788));
        // Chunk 5 was empty: its place is assumed (C 5, Morton 34 of 64) as before learning.
        assert_eq!(m.plan(&c, &[5], 1 << 20), OpenHint::Tail(INDEX + (59.0f64 * 12.5).ceil() as u64));
        // An empty index teaches nothing.
        m.learn(&vec![None; 64]);
        assert_eq!(m.plan(&c, &[0], 1 << 20), OpenHint::Tail(INDEX + 13));
    }
}
