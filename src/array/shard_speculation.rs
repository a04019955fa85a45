//! Speculative shard reads on remote stores: the requests that fetch a shard's index also bring the
//! inner chunks the read likely needs, so that a window into a shard costs one round trip.
//!
//! [`LayoutModel::plan`] decides what the first round trip to a shard asks for:
//!
//! - **After a shard of the array was read** (by this handle, or by an earlier handle of the same
//!   array in this process: [`shared`]), and it stored every inner chunk the read needs: the needed
//!   inner chunks are expected at the offsets they had there. Their byte ranges (runs closer than an
//!   inner chunk joined) are asked for beside the index request, all at once (concurrent requests:
//!   one round trip), each widened on both sides by an equal share of what keeps the total within
//!   twice what the read needs (the index and the needed inner chunks, at the sizes they had), less a
//!   tenth; a run reaching the index joins the index request (a longer suffix, or prefix for an index
//!   at the start). The whole shard only when it was at most twice that need, or at most 16 KiB
//!   (`SMALL_SHARD`: one request instead of two, at no cost in time). So the bytes read stay within
//!   twice the need (the target for shards up to 8 MiB) for every shard over 16 KiB;
//!   an inner chunk whose bytes did not all arrive (the shard differs from the last one) is fetched
//!   afterwards with the other misses, coalesced, in one wave.
//! - **Otherwise** (the first shard of an array in this process, or a needed inner chunk that the
//!   last shard left empty): the range from the index through the farthest needed inner chunk. How far
//!   that is comes from the order in which the last index read placed its inner chunks and the mean
//!   stored size of an inner chunk, with a quarter added; before any index was read, the inner
//!   chunks are assumed stored in C order or in Morton order (as zarr-python writes them), whichever
//!   puts the needed ones farther from the index, each at its decoded size (compression only makes
//!   them smaller). Nothing says yet where the inner chunks lie, so this range can be several times
//!   what the read needs (a window far from the index brings most of the shard): the price of
//!   keeping the read to one round trip.
//!
//! Either way, the bytes beyond the index are at most the store's bandwidth-delay estimate
//! ([`crate::store::Store::speculative_read_bytes`]: the bytes that arrive in the time of one round
//! trip, at most `speculative_read_max`); past it, the index alone is asked for and the inner chunks
//! follow in one wave.

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
    /// The index entries of the last shard read, with that shard's length in bytes.
    last: Option<(Arc<Vec<Entry>>, u64)>,
}

/// What to ask for when opening a shard: the hinted range (the index, and whatever is stored next
/// to it that the read needs) and, in the same round trip, the `ranges` where the other inner chunks
/// it needs are expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub hint: OpenHint,
    pub ranges: Vec<(u64, u64)>,
}

/// A shard of at most this many bytes is asked for whole once its length is known: about what the
/// first flight of a new TCP connection carries (ten segments, RFC 6928), so one request beats two
/// at no cost in time.
const SMALL_SHARD: u64 = 16 << 10;
/// Arrays whose layout is remembered across handles at most (then the memory starts over).
const MAX_REMEMBERED: usize = 32;
/// Inner chunks per shard up to which the last index read is kept for [`LayoutModel::plan`] (24
/// bytes each).
const MAX_LAST: usize = 1 << 16;

/// The layout model of the array at `key` (its location and sharding), shared by every handle of
/// this process that opens it: a reopened array predicts where its inner chunks lie from what the
/// handles before it read. A guess only: every prediction is checked against the shard's own index.
pub(crate) fn shared(key: String) -> Arc<LayoutModel> {
    static MODELS: std::sync::OnceLock<Mutex<std::collections::HashMap<String, Arc<LayoutModel>>>> = std::sync::OnceLock::new();
    let mut map = MODELS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if map.len() >= MAX_REMEMBERED && !map.contains_key(&key) {
        map.clear();
    }
    map.entry(key).or_default().clone()
}

impl LayoutModel {
    /// Learns from the index `entries` of a shard of this array, `shard_len` bytes long.
    pub(crate) fn learn(&self, entries: &[Entry], shard_len: u64) {
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
            s.last = (entries.len() <= MAX_LAST).then(|| (Arc::new(entries.to_vec()), shard_len));
        }
    }

    /// What to ask for when opening a shard of `shard` for a read of the inner chunks at C-order
    /// positions `needed`, fetching at most `budget` bytes beyond the index (see the module
    /// documentation).
    pub(crate) fn plan(&self, shard: &ShardingCodec, needed: &[usize], budget: u64) -> Plan {
        if budget > 0 && !needed.is_empty() {
            if let Some(plan) = self.plan_from_last(shard, needed, budget) {
                return plan;
            }
        }
        Plan { hint: self.plan_span(shard, needed, budget), ranges: Vec::new() }
    }

    /// The plan when the last shard read stored every inner chunk in `needed`: they are expected at
    /// the same places in this shard. The byte ranges they took there, runs closer than an inner
    /// chunk joined, each widened on both sides so that the bytes asked for stay within twice what
    /// the read needs (the index and those inner chunks): a run reaching the index joins its range,
    /// the others are asked for beside it. The whole shard when it is at most twice that or at most
    /// [`SMALL_SHARD`]. `None`
    /// (the span plan) when a needed inner chunk was empty there or the ranges pass `budget`.
    fn plan_from_last(&self, shard: &ShardingCodec, needed: &[usize], budget: u64) -> Option<Plan> {
        let (index_len, location) = shard.index_layout();
        let (last, len) = self.state.lock().unwrap_or_else(|e| e.into_inner()).last.clone()?;
        if last.len() != shard.num_inner_chunks() {
            return None;
        }
        let mut pieces = Vec::with_capacity(needed.len());
        for &i in needed {
            let (o, n) = last.get(i).copied().flatten().filter(|e| e.1 > 0)?;
            pieces.push((o, o.checked_add(n)?));
        }
        pieces.sort_unstable();
        let data: u64 = pieces.iter().map(|p| p.1 - p.0).sum();
        let need = index_len + data;
        let end = |n: u64| match location {
            IndexLocation::End => OpenHint::Tail(n),
            IndexLocation::Start => OpenHint::Head(n),
        };
        if len <= 2 * need || len <= SMALL_SHARD {
            // Asked for with a sixteenth more: a shard grown a little still arrives whole.
            return (len - index_len <= budget).then(|| Plan { hint: end(len + len / 16), ranges: Vec::new() });
        }
        let mean = data / pieces.len() as u64;
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for (a, b) in pieces {
            match runs.last_mut() {
                Some(r) if a <= r.1 + mean => r.1 = r.1.max(b),
                _ => runs.push((a, b)),
            }
        }
        let asked: u64 = index_len + runs.iter().map(|r| r.1 - r.0).sum::<u64>();
        // A tenth kept back: the sizes of inner chunks differ from shard to shard.
        let slack = (2 * need).saturating_sub(asked) * 9 / 10 / (2 * runs.len() as u64);
        let mut edge = index_len;
        let mut ranges = Vec::new();
        for (a, b) in runs {
            let (a, b) = (a.saturating_sub(slack), b + slack);
            match location {
                IndexLocation::End if b >= len - index_len => edge = edge.max(len.saturating_sub(a)),
                IndexLocation::Start if a <= index_len => edge = edge.max(b),
                _ => ranges.push((a, b)),
            }
        }
        let beyond = edge - index_len + ranges.iter().map(|r| r.1 - r.0).sum::<u64>();
        (beyond <= budget).then(|| Plan { hint: end(edge), ranges })
    }

    /// The range from the index to the farthest needed inner chunk (the module documentation).
    fn plan_span(&self, shard: &ShardingCodec, needed: &[usize], budget: u64) -> OpenHint {
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
        assert_eq!(m.plan(&c, &[63], 1 << 20).hint, OpenHint::Tail(INDEX + 32));
        // Chunk (0, 7): C place 7, Morton place 42 (2*21): the farther one, C, decides: 57 chunks.
        assert_eq!(morton_ranks(&[8, 8])[7], 42);
        assert_eq!(m.plan(&c, &[7], 1 << 20).hint, OpenHint::Tail(INDEX + 57 * 32));
        // Beyond the budget: the index alone; no budget: the index alone.
        assert_eq!(m.plan(&c, &[7], 57 * 32 - 1).hint, OpenHint::Tail(INDEX));
        assert_eq!(m.plan(&c, &[63], 0).hint, OpenHint::Tail(INDEX));
        // Index at the start: a prefix to the farthest needed chunk.
        let s = codec("start");
        assert_eq!(m.plan(&s, &[0], 1 << 20).hint, OpenHint::Head(INDEX + 32));
        assert_eq!(m.plan(&s, &[0, 8], 1 << 20).hint, OpenHint::Head(INDEX + 9 * 32), "C place 8 (farther than Morton place 1)");
    }

    #[test]
    fn learns_the_order_and_the_size_of_inner_chunks() {
        let c = codec("end");
        let m = LayoutModel::default();
        // The span plan (what a shard is asked for when the last one read lacks a needed chunk).
        // A shard storing its inner chunks in reverse C order, 10 bytes each, chunk 5 empty.
        let entries: Vec<Entry> =
            (0..64u64).map(|i| if i == 5 { None } else { Some(((63 - i) * 10, 10)) }).collect();
        m.learn(&entries, 640 + INDEX);
        // Chunk 0 is stored last: 1 chunk of 12.5 bytes (the mean with a quarter added).
        assert_eq!(m.plan_span(&c, &[0], 1 << 20), OpenHint::Tail(INDEX + 13));
        // Chunk 63 is stored first (place 0 of the 63 stored): 63 chunks from the end.
        assert_eq!(m.plan_span(&c, &[63], 1 << 20), OpenHint::Tail(INDEX + 788));
        // Chunk 5 was empty: its place is assumed (C 5, Morton 34 of 64) as before learning.
        assert_eq!(m.plan_span(&c, &[5], 1 << 20), OpenHint::Tail(INDEX + (59.0f64 * 12.5).ceil() as u64));
        // An empty index teaches nothing.
        m.learn(&vec![None; 64], INDEX);
        assert_eq!(m.plan_span(&c, &[0], 1 << 20), OpenHint::Tail(INDEX + 13));
    }

    #[test]
    fn a_learned_shard_places_the_needed_chunks_in_ranges_beside_the_index() {
        // The last shard read stored its 64 inner chunks in C order, 1000 bytes each, index at the end.
        let c = codec("end");
        let m = LayoutModel::default();
        let entries: Vec<Entry> = (0..64u64).map(|i| Some((i * 1000, 1000))).collect();
        let len = 64_000 + INDEX;
        m.learn(&entries, len);
        let total = |p: &Plan| {
            let (OpenHint::Tail(t) | OpenHint::Head(t)) = p.hint else { panic!("{p:?}") };
            t + p.ranges.iter().map(|r| r.1 - r.0).sum::<u64>()
        };
        // Chunk 10 alone: the index, and a range around bytes 10000..11000 in the same round trip.
        let p = m.plan(&c, &[10], 1 << 20);
        assert_eq!(p.hint, OpenHint::Tail(INDEX));
        assert_eq!(p.ranges.len(), 1);
        let (a, b) = p.ranges[0];
        assert!(a <= 10_000 && b >= 11_000 && a > 9000, "{p:?}");
        assert!(total(&p) <= 2 * (INDEX + 1000), "{p:?}");
        // Chunks 9, 10, 11 (adjacent) and 40: two ranges; chunks 62 and 63 (next to the index): the
        // suffix reaches them.
        let p = m.plan(&c, &[9, 10, 11, 40], 1 << 20);
        assert_eq!(p.ranges.len(), 2, "{p:?}");
        assert!(p.ranges[0].0 <= 9000 && p.ranges[0].1 >= 12_000 && p.ranges[1].0 <= 40_000 && p.ranges[1].1 >= 41_000);
        assert!(total(&p) <= 2 * (INDEX + 4000));
        let p = m.plan(&c, &[62, 63], 1 << 20);
        assert!(p.ranges.is_empty() && total(&p) >= INDEX + 2000 && total(&p) <= 2 * (INDEX + 2000), "{p:?}");
        // Most of the shard: all of it, asked for with a sixteenth more.
        let most: Vec<usize> = (0..40).collect();
        assert_eq!(m.plan(&c, &most, 1 << 20), Plan { hint: OpenHint::Tail(len + len / 16), ranges: vec![] });
        // Past the budget, or a needed chunk empty in the last shard: the span plan.
        assert!(m.plan(&c, &[10], 1000).ranges.is_empty());
        let mut holes = entries.clone();
        holes[10] = None;
        m.learn(&holes, len - 1000);
        assert!(m.plan(&c, &[10], 1 << 20).ranges.is_empty());
        // A shard of at most 16 KiB: whole.
        m.learn(&(0..64u64).map(|i| Some((i * 100, 100))).collect::<Vec<_>>(), 6400 + INDEX);
        assert!(matches!(m.plan(&c, &[10], 1 << 20), Plan { hint: OpenHint::Tail(t), ranges } if t >= 6400 + INDEX && ranges.is_empty()));
        // Index at the start: offsets from the start of the shard, a run next to the index joins the
        // prefix.
        let s = codec("start");
        let m = LayoutModel::default();
        m.learn(&(0..64u64).map(|i| Some((INDEX + i * 1000, 1000))).collect::<Vec<_>>(), len);
        let p = m.plan(&s, &[0], 1 << 20);
        let OpenHint::Head(h) = p.hint else { panic!("{p:?}") };
        assert!(p.ranges.is_empty() && h >= INDEX + 1000 && h <= 2 * (INDEX + 1000), "{p:?}");
        let p = m.plan(&s, &[50], 1 << 20);
        assert_eq!(p.hint, OpenHint::Head(INDEX));
        assert!(p.ranges[0].0 <= INDEX + 50_000 && p.ranges[0].1 >= INDEX + 51_000, "{p:?}");
        assert!(total(&p) <= 2 * (INDEX + 1000), "{p:?}");
    }

    #[test]
    fn handles_of_one_array_share_its_model() {
        let a = shared("test://shared/a".into());
        assert!(Arc::ptr_eq(&a, &shared("test://shared/a".into())));
        assert!(!Arc::ptr_eq(&a, &shared("test://shared/b".into())));
    }
}
