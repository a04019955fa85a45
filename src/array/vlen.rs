//! Region reads and writes of arrays with variable-length elements (`string`, `bytes`, v2 object
//! arrays with a vlen filter).
//!
//! A region crosses the API as one offsets array (n + 1 entries) and one data buffer: element i is
//! `data[offsets[i] .. offsets[i+1]]`. A vlen-array element is the bytes of its native-endian items.
//!
//! Reads decode every touched chunk (or, for a sharded array, every touched inner chunk) in parallel,
//! keeping each decoded chunk as one buffer plus the byte range of each element; the output lengths are
//! then summed into the offsets and every chunk copies its elements into the one data buffer in
//! parallel. No allocation per element.
//!
//! Writes validate every element first (UTF-8 for `string`), then decode the chunks the region covers
//! only in part and encode every touched chunk in parallel, all in memory; only then is anything
//! stored, so a failing write changes nothing. A chunk (or an inner chunk of a shard) whose elements
//! all equal the fill value is not stored.

use super::Array;
use crate::chunk_grid::for_each_index;
use crate::codec::chain::CodecChain;
use crate::codec::sharding::ShardingCodec;
use crate::codec::vlen::VlenCodec;
use crate::codec::{BytesToBytesCodec, DecodedSize};
use crate::error::{Error, Result};
use crate::buffer::RawBuf;
use crate::selection::{for_each_pair, for_each_pair_run};
use crate::store::SliceSource;

/// Largest decoded size (bytes) of one variable-length chunk, a guard against decompression bombs.
pub const MAX_VLEN_CHUNK_BYTES: u64 = 1 << 34;

/// Variable-length elements: element i is `data[offsets[i] .. offsets[i+1]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VlenData {
    /// n + 1 non-decreasing offsets into `data`, starting at 0.
    pub offsets: Vec<u64>,
    /// The elements' bytes, back to back.
    pub data: Vec<u8>,
}

impl VlenData {
    /// Builds from a list of elements.
    pub fn from_elements<T: AsRef<[u8]>>(elems: &[T]) -> VlenData {
        let mut offsets = Vec::with_capacity(elems.len() + 1);
        let mut data = Vec::new();
        offsets.push(0);
        for e in elems {
            data.extend_from_slice(e.as_ref());
            offsets.push(data.len() as u64);
        }
        VlenData { offsets, data }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        &self.data[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

/// How the chunks of a variable-length array are encoded.
pub(crate) struct Plan<'a> {
    /// The framing codec of a chunk (of an inner chunk when sharded).
    vlen: &'a VlenCodec,
    /// The bytes->bytes codecs after it.
    b2b: &'a [Box<dyn BytesToBytesCodec>],
    /// For a sharded array: the sharding codec and the bytes->bytes codecs after it.
    shard: Option<(&'a ShardingCodec, &'a [Box<dyn BytesToBytesCodec>])>,
}

/// Checks that `chain` can encode variable-length elements: a vlen codec as its array -> bytes codec
/// (directly, or as the inner codec of one sharding level), no array -> array codecs.
pub fn check_chain(chain: &CodecChain) -> Result<()> {
    plan(chain).map(|_| ())
}

fn plan(chain: &CodecChain) -> Result<Plan<'_>> {
    let no_a2a = |c: &CodecChain| {
        if c.has_array_to_array() {
            Err(Error::Unsupported("array -> array codecs (e.g. transpose) on a variable-length data type".into()))
        } else {
            Ok(())
        }
    };
    no_a2a(chain)?;
    let dt = &chain.decoded_repr().data_type;
    let needs = || {
        Error::Metadata(format!(
            "data type {dt} needs a variable-length codec (vlen-utf8 for string, vlen-bytes for bytes) as its array -> bytes codec"
        ))
    };
    let a2b = chain.array_to_bytes();
    if let Some(vlen) = a2b.as_vlen() {
        return Ok(Plan { vlen, b2b: chain.bytes_to_bytes(), shard: None });
    }
    let shard = a2b.as_sharding().ok_or_else(needs)?;
    let inner = shard.inner_chain();
    no_a2a(inner)?;
    if inner.array_to_bytes().as_sharding().is_some() {
        return Err(Error::Unsupported("nested sharding of a variable-length data type".into()));
    }
    let vlen = inner.array_to_bytes().as_vlen().ok_or_else(needs)?;
    Ok(Plan { vlen, b2b: inner.bytes_to_bytes(), shard: Some((shard, chain.bytes_to_bytes())) })
}

/// One decoded chunk: its buffer and the byte range of each element in it.
struct Decoded {
    buf: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

/// A box of the array whose elements come from one decoded chunk, or are all the fill value (`None`).
struct Unit {
    origin: Vec<u64>,
    shape: Vec<u64>,
    data: Option<Decoded>,
}

impl Unit {
    fn elem<'a>(&'a self, k: usize, fill: &'a [u8]) -> &'a [u8] {
        match &self.data {
            Some(d) => {
                let (s, e) = d.spans[k];
                &d.buf[s..e]
            }
            None => fill,
        }
    }
}

fn undo_b2b(b2b: &[Box<dyn BytesToBytesCodec>], encoded: Vec<u8>) -> Result<Vec<u8>> {
    let max = MAX_VLEN_CHUNK_BYTES.min(crate::codec::chain::max_chunk_bytes()).min(usize::MAX as u64) as usize;
    let mut cur = encoded;
    for c in b2b.iter().rev() {
        cur = c.decode(&cur, DecodedSize::AtMost(max))?.into_owned();
    }
    Ok(cur)
}

fn apply_b2b(b2b: &[Box<dyn BytesToBytesCodec>], data: Vec<u8>) -> Result<Vec<u8>> {
    let mut cur = data;
    for c in b2b {
        cur = c.encode(&cur)?;
    }
    Ok(cur)
}

fn decode(vlen: &VlenCodec, b2b: &[Box<dyn BytesToBytesCodec>], encoded: Vec<u8>, n: usize) -> Result<Decoded> {
    let mut buf = undo_b2b(b2b, encoded)?;
    let mut spans = Vec::new();
    vlen.parse_frame(&mut buf, n, &mut spans)?;
    Ok(Decoded { buf, spans })
}

fn num_elements(shape: &[u64]) -> usize {
    shape.iter().product::<u64>() as usize
}

impl Array {
    fn vlen_plan(&self) -> Result<Plan<'_>> {
        if !self.meta.data_type.is_vlen() {
            return Err(Error::InvalidArgument(format!(
                "the array's data type {} has fixed-size elements: use zarr_read_region / zarr_write_region",
                self.meta.data_type
            )));
        }
        if self.meta.grid.regular_shape().is_none() {
            return Err(Error::Unsupported("variable-length data types on a rectilinear chunk grid".into()));
        }
        plan(&self.meta.codecs)
    }

    /// Checks that the array has variable-length elements and that the region lies inside it.
    pub fn check_vlen_region(&self, start: &[u64], count: &[u64]) -> Result<()> {
        self.vlen_plan()?;
        self.check_bounds(start, count)
    }

    /// Reads the region `start..start+count` of a variable-length array (elements in C order).
    /// Missing chunks read as the fill value.
    pub fn read_region_vlen(&self, start: &[u64], count: &[u64]) -> Result<VlenData> {
        let plan = self.vlen_plan()?;
        self.check_bounds(start, count)?;
        let n = count.iter().try_fold(1u64, |a, &c| a.checked_mul(c));
        let n = n.filter(|&n| n < usize::MAX as u64 / 8).ok_or_else(|| Error::BufferSize("region too large".into()))? as usize;
        if n == 0 {
            return Ok(VlenData { offsets: vec![0], data: Vec::new() });
        }
        let chunks = self.chunks_of(start, count);
        let units: Vec<Vec<Unit>> = crate::threads::try_map(&chunks, |ci| {
            let key = self.chunk_key(ci);
            self.read_units(&plan, ci, start, count).map_err(|e| e.context(self.store.location(&key)))
        })?;
        let units: Vec<Unit> = units.into_iter().flatten().collect();
        let fill = &self.meta.fill_value[..];
        let mut offsets = Vec::new();
        offsets.try_reserve_exact(n + 1).map_err(|_| Error::Internal(format!("cannot allocate {} offsets", n + 1)))?;
        offsets.resize(n + 1, 0u64);
        for u in &units {
            match &u.data {
                Some(d) => for_each_pair(&u.origin, &u.shape, start, count, |r, k| {
                    offsets[r + 1] = (d.spans[k].1 - d.spans[k].0) as u64
                }),
                None => for_each_pair(&u.origin, &u.shape, start, count, |r, _| offsets[r + 1] = fill.len() as u64),
            }
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let total = usize::try_from(offsets[n]).map_err(|_| Error::Internal("region does not fit in memory".into()))?;
        let mut data = crate::error::try_alloc(total)?;
        let dst = RawBuf::new(&mut data);
        let offsets_ref = &offsets;
        crate::threads::try_for_each(&units, |u| {
            for_each_pair_run(&u.origin, &u.shape, start, count, |r0, k0, run| {
                let (lo, hi) = (offsets_ref[r0] as usize, offsets_ref[r0 + run] as usize);
                // SAFETY: elements r0..r0+run of the output are written by this task only (each region
                // element lies in exactly one unit), and lie inside `data` (their offsets sum to total).
                let out = unsafe { dst.slice_mut(lo, hi - lo) };
                match &u.data {
                    // A run of consecutive elements is one run of bytes of the decoded chunk (the
                    // frame's length prefixes were squeezed out by parse_frame).
                    Some(d) => out.copy_from_slice(&d.buf[d.spans[k0].0..d.spans[k0 + run - 1].1]),
                    None => {
                        for e in out.chunks_exact_mut(fill.len().max(1)) {
                            e.copy_from_slice(fill);
                        }
                    }
                }
            });
            Ok(())
        })?;
        Ok(VlenData { offsets, data })
    }

    /// Decodes the parts of chunk `ci` that the box `start..start+count` touches: the chunk itself, or
    /// for a sharded array the touched inner chunks.
    fn read_units(&self, plan: &Plan, ci: &[u64], start: &[u64], count: &[u64]) -> Result<Vec<Unit>> {
        let cs = self.meta.chunk_shape();
        let origin: Vec<u64> = ci.iter().zip(cs).map(|(i, c)| i * c).collect();
        let key = self.chunk_key(ci);
        let Some(bytes) = self.store.get(&key)? else {
            return Ok(vec![Unit { origin, shape: cs.to_vec(), data: None }]);
        };
        let Some((shard, outer)) = plan.shard else {
            let data = decode(plan.vlen, plan.b2b, bytes, num_elements(cs))?;
            return Ok(vec![Unit { origin, shape: cs.to_vec(), data: Some(data) }]);
        };
        let bytes = undo_b2b(outer, bytes)?;
        let entries = shard.read_index(&SliceSource(&bytes))?;
        let inner = shard.inner_chunk_shape();
        let ranges: Vec<(u64, u64)> = (0..cs.len())
            .map(|d| {
                let lo = start[d].max(origin[d]) - origin[d];
                let hi = (start[d] + count[d]).min(origin[d] + cs[d]) - origin[d];
                (lo / inner[d], (hi - 1) / inner[d])
            })
            .collect();
        let mut touched = Vec::new();
        for_each_index(&ranges, |ii| touched.push(ii.to_vec()));
        let n_inner = num_elements(inner);
        crate::threads::try_map(&touched, |ii| {
            let origin: Vec<u64> = (0..cs.len()).map(|d| origin[d] + ii[d] * inner[d]).collect();
            let data = match entries[shard.linear(ii)] {
                None => None,
                Some((o, len)) => {
                    let piece = bytes[o as usize..(o + len) as usize].to_vec();
                    Some(decode(plan.vlen, plan.b2b, piece, n_inner).map_err(|e| e.context(format!("inner chunk {ii:?}")))?)
                }
            };
            Ok(Unit { origin, shape: inner.to_vec(), data })
        })
    }

    /// Writes elements to the region `start..start+count` (C order): element i is
    /// `data[offsets[i] .. offsets[i+1]]`, with `offsets` holding product(count) + 1 entries. For
    /// `string` arrays every element must be valid UTF-8 ([`Error::Value`] otherwise, nothing stored).
    pub fn write_region_vlen(&self, start: &[u64], count: &[u64], offsets: &[u64], data: &[u8]) -> Result<()> {
        self.check_writable()?;
        let plan = self.vlen_plan()?;
        self.check_bounds(start, count)?;
        let n = count.iter().try_fold(1u64, |a, &c| a.checked_mul(c));
        if n.and_then(|n| n.checked_add(1)) != Some(offsets.len() as u64) {
            return Err(Error::BufferSize(format!(
                "{} offsets given, the region needs {} (one more than its element count)",
                offsets.len(),
                n.map_or("more than 2^64".to_string(), |n| (n as u128 + 1).to_string())
            )));
        }
        let n = offsets.len() - 1;
        for i in 0..n {
            let (a, b) = (offsets[i], offsets[i + 1]);
            if a > b || b > data.len() as u64 {
                return Err(Error::InvalidArgument(format!(
                    "offsets[{i}..={}] = {a}, {b}: offsets must not decrease and must stay within the {} data bytes",
                    i + 1,
                    data.len()
                )));
            }
            plan.vlen.check_element(&data[a as usize..b as usize]).map_err(|why| Error::Value(format!("element {i}: {why}")))?;
        }
        if n == 0 {
            return Ok(());
        }
        let chunks = self.chunks_of(start, count);
        let lock = self.lock_chunks(chunks.iter().map(Vec::as_slice))?;
        // Decode what is kept and encode every chunk, all before storing anything.
        let encoded: Vec<Option<Vec<u8>>> = crate::threads::try_map(&chunks, |ci| {
            let key = self.chunk_key(ci);
            self.encode_vlen_chunk(&plan, ci, start, count, offsets, data).map_err(|e| e.context(self.store.location(&key)))
        })?;
        let jobs: Vec<(&Vec<u64>, &Option<Vec<u8>>)> = chunks.iter().zip(&encoded).collect();
        crate::threads::try_for_each(&jobs, |(ci, enc)| {
            let key = self.chunk_key(ci);
            match enc {
                Some(bytes) => self.store.set_parts_locked(&key, &[bytes], &lock),
                None => self.store.delete_locked(&key, &lock),
            }
        })
    }

    /// The new encoded content of chunk `ci` after writing the region (`None`: all fill, not stored).
    fn encode_vlen_chunk(
        &self,
        plan: &Plan,
        ci: &[u64],
        start: &[u64],
        count: &[u64],
        offsets: &[u64],
        data: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        let cs = self.meta.chunk_shape();
        let rank = cs.len();
        let origin: Vec<u64> = ci.iter().zip(cs).map(|(i, c)| i * c).collect();
        let shape = &self.meta.shape;
        let covered = (0..rank).all(|d| {
            let end = origin[d].saturating_add(cs[d]).min(shape[d]);
            start[d] <= origin[d] && start[d] + count[d] >= end
        });
        let fill = &self.meta.fill_value[..];
        let existing = if covered { Vec::new() } else { self.read_units(plan, ci, &origin, cs)? };
        let mut elems: Vec<&[u8]> = vec![fill; num_elements(cs)];
        for u in &existing {
            for_each_pair(&u.origin, &u.shape, &origin, cs, |r, k| elems[r] = u.elem(k, fill));
        }
        for_each_pair(&origin, cs, start, count, |r, k| elems[k] = &data[offsets[r] as usize..offsets[r + 1] as usize]);
        let all_fill = |es: &[&[u8]]| es.iter().all(|e| *e == fill);
        let Some((shard, outer)) = plan.shard else {
            if self.meta.fill_defined && all_fill(&elems) {
                return Ok(None);
            }
            return apply_b2b(plan.b2b, plan.vlen.encode_frame(&elems)?).map(Some);
        };
        let inner = shard.inner_chunk_shape();
        let mut indices = Vec::new();
        let ranges: Vec<(u64, u64)> = shard.chunks_per_shard().iter().map(|&c| (0, c - 1)).collect();
        for_each_index(&ranges, |ii| indices.push(ii.to_vec()));
        let zeros = vec![0u64; rank];
        let encoded: Vec<Option<Vec<u8>>> = crate::threads::try_map(&indices, |ii| {
            let io: Vec<u64> = (0..rank).map(|d| ii[d] * inner[d]).collect();
            let mut ie: Vec<&[u8]> = vec![fill; num_elements(inner)];
            for_each_pair(&io, inner, &zeros, cs, |r, k| ie[k] = elems[r]);
            if all_fill(&ie) {
                return Ok(None);
            }
            apply_b2b(plan.b2b, plan.vlen.encode_frame(&ie)?).map(Some)
        })?;
        if encoded.iter().all(Option::is_none) && self.meta.fill_defined {
            return Ok(None);
        }
        let parts = shard.layout_parts(&encoded)?;
        apply_b2b(outer, crate::codec::join_parts(parts)).map(Some)
    }
}
