//! `sharding_indexed` codec (array -> bytes): a shard holds many inner chunks, each encoded with its
//! own codec chain, plus an index of their byte ranges.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/index.html>
//! v3 name: `sharding_indexed`. Configuration: `chunk_shape` (inner chunk shape, divides the shard
//! shape), `codecs` (inner chain), `index_codecs` (fixed-size chain for the index),
//! `index_location` ("start" or "end", default "end").
//! Example: `{"name": "sharding_indexed", "configuration": {"chunk_shape": [32, 32],
//! "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
//! "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
//! "index_location": "end"}}`
//!
//! Reads fetch the index by byte range and then only the inner chunks a region touches (adjacent
//! ranges coalesced into one read), decoding them in parallel. A read that touches every inner chunk
//! of a local shard reads the whole shard file at once instead and decodes each inner chunk straight
//! from that buffer ([`ShardingCodec::decode_from_memory`]). Writes encode all inner chunks in
//! parallel; inner chunks equal to the fill value everywhere are not stored. A shard with its index
//! at the end can be handed to the store piece by piece while it is encoded (`stream_encode.rs`).

pub mod index;
mod stream_encode;
mod vlen;

use crate::buffer::RawBuf;
use crate::chunk_grid::RegularGrid;
use crate::codec::chain::CodecChain;
use crate::codec::{ArrayRepr, ArrayToBytesCodec, Config};
use crate::error::{Error, Result};
use crate::selection::convert::Conv;
use crate::selection::{for_each_index, ChunkPart, Dest, Layout, Selection};
use crate::store::{ByteSource, SliceSource};
use std::borrow::Cow;
use index::{Entry, IndexCodec, IndexLocation};
use serde_json::{json, Map, Value};
use super::registry::CodecEntry;
use super::Codec;

/// The v3 name.
const NAME: &str = "sharding_indexed";

/// The registry entry: v3 `sharding_indexed`.
pub static CODEC: CodecEntry = CodecEntry {
    name: Some(NAME),
    from_v3: Some(|_, cfg, decoded| Ok(Codec::ArrayToBytes(Box::new(ShardingCodec::from_v3(cfg, decoded)?)))),
    ..CodecEntry::NONE
};

/// Gap (bytes) up to which neighbouring inner chunk ranges are read as one.
const COALESCE_GAP: u64 = 0;
/// The largest gap between byte ranges read from a remote source that are fetched as one request.
const REMOTE_COALESCE_GAP: u64 = 1 << 20;

/// The metadata object of a `sharding_indexed` codec with inner chunks of `chunk_shape` encoded by
/// the chain `codecs`, and its index by `index_codecs` at `location`.
pub fn metadata(chunk_shape: &[u64], codecs: Value, index_codecs: Value, location: IndexLocation) -> Value {
    json!({"name": NAME, "configuration": {
        "chunk_shape": chunk_shape,
        "codecs": codecs,
        "index_codecs": index_codecs,
        "index_location": if location == IndexLocation::Start { "start" } else { "end" },
    }})
}

/// The index codecs libzarr writes: little-endian `bytes`, then `crc32c`.
pub fn default_index_codecs() -> Value {
    let bytes = crate::codec::serialize::bytes::BytesCodec::new(&crate::dtype::DataType::UInt64, Some(crate::dtype::Endian::Little));
    Value::Array(vec![bytes.to_json(), crate::codec::BytesToBytesCodec::to_json(&crate::codec::checksum::crc32c::Crc32cCodec)])
}

/// The `sharding_indexed` codec for one shard shape.
#[derive(Debug)]
pub struct ShardingCodec {
    inner_shape: Vec<u64>,
    inner_grid: RegularGrid,
    chunks_per_shard: Vec<u64>,
    inner: CodecChain,
    index: IndexCodec,
}

impl ShardingCodec {
    /// Parses the v3 configuration for shards of representation `shard`.
    pub fn from_v3(cfg: Option<&Map<String, Value>>, shard: &ArrayRepr) -> Result<ShardingCodec> {
        let c = Config::new(NAME, cfg, &["chunk_shape", "codecs", "index_codecs", "index_location"])?;
        let cs = c.get("chunk_shape").ok_or_else(|| c.invalid("chunk_shape", "required"))?;
        let inner_shape: Vec<u64> = cs
            .as_array()
            .ok_or_else(|| c.invalid("chunk_shape", "expected a list of integers"))?
            .iter()
            .map(|v| v.as_u64().filter(|&x| x > 0).ok_or_else(|| c.invalid("chunk_shape", "entries must be positive integers")))
            .collect::<Result<_>>()?;
        if inner_shape.len() != shard.shape.len() {
            return Err(c.invalid(
                "chunk_shape",
                &format!("{inner_shape:?} has {} dimensions, the shard has {}", inner_shape.len(), shard.shape.len()),
            ));
        }
        let mut chunks_per_shard = Vec::with_capacity(inner_shape.len());
        for (s, i) in shard.shape.iter().zip(&inner_shape) {
            if s % i != 0 {
                return Err(c.invalid(
                    "chunk_shape",
                    &format!("inner chunk shape {inner_shape:?} does not divide the shard shape {:?}", shard.shape),
                ));
            }
            chunks_per_shard.push(s / i);
        }
        let location = match c.choice("index_location", &["start", "end"], Some("end"))? {
            "start" => IndexLocation::Start,
            _ => IndexLocation::End,
        };
        let inner_repr = ArrayRepr { shape: inner_shape.clone(), ..shard.clone() };
        let codecs = c.get("codecs").ok_or_else(|| c.invalid("codecs", "required"))?;
        let inner = CodecChain::from_v3(codecs, &inner_repr).map_err(|e| e.context("codec 'sharding_indexed': codecs"))?;
        let index_codecs = c.get("index_codecs").ok_or_else(|| c.invalid("index_codecs", "required"))?;
        let index = IndexCodec::new(index_codecs, &chunks_per_shard, location)?;
        let inner_grid = RegularGrid::new(inner_shape.clone())?;
        Ok(ShardingCodec { inner_shape, inner_grid, chunks_per_shard, inner, index })
    }

    /// The inner chunk shape.
    pub fn inner_chunk_shape(&self) -> &[u64] {
        &self.inner_shape
    }

    /// The grid of inner chunks within a shard.
    pub fn inner_grid(&self) -> &RegularGrid {
        &self.inner_grid
    }

    /// The inner codec chain.
    pub fn inner_chain(&self) -> &CodecChain {
        &self.inner
    }

    /// Inner chunks per shard along each dimension.
    pub fn chunks_per_shard(&self) -> &[u64] {
        &self.chunks_per_shard
    }

    /// The linear (C order) position of inner chunk `idx` in the index.
    pub(crate) fn linear(&self, idx: &[u64]) -> usize {
        idx.iter().zip(&self.chunks_per_shard).fold(0u64, |a, (i, n)| a * n + i) as usize
    }

    /// What a reader of the shard's index asks a store to fetch when opening the shard.
    pub(crate) fn index_hint(&self) -> crate::store::OpenHint {
        match self.index.location {
            IndexLocation::Start => crate::store::OpenHint::Head(self.index.encoded_size),
            IndexLocation::End => crate::store::OpenHint::Tail(self.index.encoded_size),
        }
    }

    /// The encoded size of the index and where it lies in the shard.
    pub(crate) fn index_layout(&self) -> (u64, IndexLocation) {
        (self.index.encoded_size, self.index.location)
    }

    /// The longest a stored shard can be: every inner chunk at its longest, and the index.
    pub(crate) fn max_encoded_size(&self) -> u64 {
        (self.index.num_chunks as u64).saturating_mul(self.inner.max_encoded_size()).saturating_add(self.index.encoded_size)
    }

    /// The number of inner chunks in a shard.
    pub(crate) fn num_inner_chunks(&self) -> usize {
        self.index.num_chunks
    }

    /// Reads and validates the index of the shard held by `src`.
    pub(crate) fn read_index(&self, src: &dyn ByteSource) -> Result<Vec<Entry>> {
        let len = src.len();
        let (off, n) = self.index.range_in(len)?;
        let bytes = src.read_range(off, n)?;
        self.index.decode(&bytes, len)
    }
}

/// One inner chunk touched by a read: where it is stored and which part of the selection it holds.
struct Touched {
    entry: Entry,
    part: ChunkPart,
}

impl ArrayToBytesCodec for ShardingCodec {
    fn encode<'a>(&self, data: Cow<'a, [u8]>, repr: &ArrayRepr) -> Result<Cow<'a, [u8]>> {
        let mut shard = None;
        self.encode_box(&data, &repr.layout(), 0, repr, &mut |e| {
            shard = e.map(crate::codec::join_parts);
            Ok(())
        })?;
        // A shard without inner chunks is just its index of empty entries.
        Ok(Cow::Owned(match shard {
            Some(s) => s,
            None => crate::codec::join_parts(self.layout_parts::<Vec<u8>>(&vec![None; self.index.num_chunks])?),
        }))
    }

    fn encode_box(&self, src: &[u8], layout: &Layout, offset: usize, _repr: &ArrayRepr, sink: crate::codec::Sink) -> Result<()> {
        let indices = self.inner_indices();
        // Encode the inner chunks in parallel (in index order), each gathered straight from `src`;
        // chunks equal to the fill value everywhere are left out.
        let encoded: Vec<Option<Vec<u8>>> = crate::threads::try_map(&indices, |ci| self.encode_inner(src, layout, offset, ci))?;
        if encoded.iter().all(Option::is_none) {
            return sink(None);
        }
        // The inner chunks and the index go to the sink as parts: no shard-sized copy.
        sink(Some(self.layout_parts(&encoded)?))?;
        // Stored: their buffers serve the next shard's inner chunks (`crate::scratch::take_encoded`).
        encoded.into_iter().flatten().for_each(crate::scratch::recycle_encoded);
        Ok(())
    }

    fn decode_into(&self, encoded: &[u8], repr: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        let src = SliceSource(encoded);
        let entries = self.read_index(&src)?;
        IndexCodec::check_disjoint(&entries)?;
        let zeros = vec![0; repr.shape.len()];
        let (layout, conv) = (repr.layout(), Conv::identity(&repr.data_type));
        let dest = Dest { buf: RawBuf::new(out), offset: 0, layout: &layout, conv: &conv, fill: Some(&repr.fill_value) };
        self.decode_region(&src, entries, &Selection::dense(&zeros, &repr.shape), dest)
    }

    fn encoded_size(&self, _repr: &ArrayRepr) -> Option<u64> {
        None
    }

    fn partial_decode(&self, src: &dyn ByteSource, _repr: &ArrayRepr, sel: &Selection, dest: Dest) -> Result<()> {
        let entries = self.read_index(src)?;
        self.decode_region(src, entries, sel, dest)
    }

    fn inner_chunk_shape(&self) -> Option<&[u64]> {
        Some(&self.inner_shape)
    }

    fn may_refuse_values(&self) -> bool {
        self.inner.may_refuse_values()
    }

    fn as_sharding(&self) -> Option<&ShardingCodec> {
        Some(self)
    }

    fn to_json(&self) -> Value {
        metadata(&self.inner_shape, self.inner.to_json(), self.index.to_json(), self.index.location)
    }
}

impl ShardingCodec {
    /// The grid indices of the inner chunks of a shard, in index order (C order).
    fn inner_indices(&self) -> Vec<Vec<u64>> {
        let mut indices = Vec::with_capacity(self.index.num_chunks);
        for_each_index(&self.chunks_per_shard.iter().map(|&n| (0, n - 1)).collect::<Vec<_>>(), |i| {
            indices.push(i.to_vec())
        });
        indices
    }

    /// The inner chunk `ci` of the shard at `offset` of `src` (laid out by `layout`), encoded by the
    /// inner chain straight from `src`; `None` when it equals the fill value everywhere.
    fn encode_inner(&self, src: &[u8], layout: &Layout, offset: usize, ci: &[u64]) -> Result<Option<Vec<u8>>> {
        let inner_origin: Vec<u64> = ci.iter().zip(&self.inner_shape).map(|(i, s)| i * s).collect();
        let mut out = None;
        self.inner.encode_box(src, layout, offset + layout.offset_of(&inner_origin), self.inner.decoded_repr(), &mut |e| {
            out = e.map(crate::codec::join_parts);
            Ok(())
        })?;
        Ok(out)
    }

    /// The parts of a shard holding `encoded` inner chunks (in index order): the inner chunks back to
    /// back, with the index before or after them.
    pub(crate) fn layout_parts<'a, B: AsRef<[u8]>>(&self, encoded: &'a [Option<B>]) -> Result<crate::codec::Parts<'a>> {
        let index_len = self.index.encoded_size;
        let mut offset = if self.index.location == IndexLocation::Start { index_len } else { 0 };
        let mut entries = Vec::with_capacity(encoded.len());
        let mut parts: crate::codec::Parts<'a> = Vec::with_capacity(encoded.len() + 1);
        for e in encoded {
            match e {
                Some(bytes) => {
                    let bytes = bytes.as_ref();
                    entries.push(Some((offset, bytes.len() as u64)));
                    offset += bytes.len() as u64;
                    parts.push(Cow::Borrowed(bytes));
                }
                None => entries.push(None),
            }
        }
        let index_bytes = Cow::Owned(self.index.encode(&entries)?);
        match self.index.location {
            IndexLocation::Start => parts.insert(0, index_bytes),
            IndexLocation::End => parts.push(index_bytes),
        }
        Ok(parts)
    }

    /// Decodes the selection `sel` of a shard of `len` bytes whose index is `entries` into `dest`, the
    /// shard's bytes arriving in order through `receive` (which passes every piece to the sink it is
    /// given and returns `false` when the shard is missing): each inner chunk is decoded on the chunk
    /// pool as soon as its bytes are in, while the next ones arrive. Returns what `receive` returned.
    pub(crate) fn decode_streamed(
        &self,
        len: u64,
        entries: Vec<Entry>,
        sel: &Selection,
        dest: Dest,
        receive: &mut dyn FnMut(&mut crate::store::ByteSink) -> Result<bool>,
    ) -> Result<bool> {
        IndexCodec::check_disjoint(&entries)?;
        let touched: Vec<Touched> = sel
            .project(&self.inner_grid)?
            .into_iter()
            .map(|part| Touched { entry: entries[self.linear(&part.chunk)], part })
            .collect();
        let mut stored: Vec<&Touched> = touched.iter().filter(|t| t.entry.is_some()).collect();
        stored.sort_by_key(|t| t.entry.map(|(o, n)| o + n));
        // The shard lands in this thread's reusable buffer (its pages stay mapped between reads, and
        // the bytes received overwrite it whole: no zeroing first).
        let found = crate::scratch::with_read_buffer(len as usize, |buf| self.receive_and_decode(buf, &stored, dest, receive))?;
        if found {
            for t in touched.iter().filter(|t| t.entry.is_none()) {
                dest.at(&t.part.out).fill_box(&t.part.local.count)?;
            }
        }
        Ok(found)
    }

    /// The body of [`ShardingCodec::decode_streamed`]: fills `buf` (the shard's size) from `receive`,
    /// spawning the decode of each of `stored` (sorted by end offset) on the chunk pool once its bytes
    /// are in.
    fn receive_and_decode(
        &self,
        buf: &mut [u8],
        stored: &[&Touched],
        dest: Dest,
        receive: &mut dyn FnMut(&mut crate::store::ByteSink) -> Result<bool>,
    ) -> Result<bool> {
        let len = buf.len() as u64;
        let base = RawBuf::new(buf);
        let failed: std::sync::Mutex<Option<Error>> = std::sync::Mutex::new(None);
        let mut received = 0u64;
        let mut next = 0;
        let found = crate::threads::pool()?.in_place_scope(|scope| {
            receive(&mut |piece: &[u8]| {
                let end = received + piece.len() as u64;
                if end > len {
                    return Err(Error::Io(format!("the shard grew past its {len} bytes while it was read")));
                }
                // SAFETY: bytes received..end of `buf` are written here only; the tasks spawned so far
                // read bytes below `received`.
                unsafe { base.slice_mut(received as usize, piece.len()) }.copy_from_slice(piece);
                received = end;
                while let Some(t) = stored.get(next).filter(|t| t.entry.is_some_and(|(o, n)| o + n <= received)) {
                    let (o, n) = t.entry.unwrap();
                    // SAFETY: a range below `received`, never written again; `buf` outlives the scope.
                    let bytes: &[u8] = unsafe { base.slice_mut(o as usize, n as usize) };
                    let (failed, inner) = (&failed, &self.inner);
                    scope.spawn(move |_| {
                        if let Err(e) = inner.decode_region(bytes, &t.part.local, dest.at(&t.part.out)) {
                            failed.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                        }
                    });
                    next += 1;
                }
                Ok(())
            })
        })?;
        if let Some(e) = failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
            return Err(e);
        }
        if !found {
            return Ok(false);
        }
        if received != len {
            return Err(Error::Io(format!("the shard ended after {received} of its {len} bytes")));
        }
        Ok(true)
    }

    /// Whether the selection `sel` (shard-local) touches every inner chunk of the shard: a reader then
    /// needs the whole shard (all but the index), and one read of the whole value serves it best.
    pub(crate) fn touches_every_inner_chunk(&self, sel: &Selection) -> bool {
        (0..self.inner_shape.len()).all(|d| {
            let (inner, n) = (self.inner_shape[d], self.chunks_per_shard[d]);
            let (start, count, step) = (sel.start[d], sel.count[d], sel.step[d]);
            count > 0 && step <= inner && start < inner && start + (count - 1) * step >= (n - 1) * inner
        })
    }

    /// Decodes the selection `sel` of the whole shard `shard`, held in memory, into `dest` (a missing
    /// inner chunk becomes the fill value): the index from the shard's head or tail, then every touched
    /// inner chunk straight from `shard`, in parallel on the pool when `parallel`, otherwise in turn on
    /// this thread (when the caller already keeps every thread busy with other shards).
    pub(crate) fn decode_from_memory(&self, shard: &[u8], sel: &Selection, dest: Dest, parallel: bool) -> Result<()> {
        let entries = self.read_index(&SliceSource(shard))?;
        IndexCodec::check_disjoint(&entries)?;
        self.decode_from_slice(shard, entries, sel, dest, parallel)
    }

    /// The inner chunks that `sel` touches, with their index entries; those that are empty (no entry)
    /// are filled with the fill value in `dest` here.
    fn touch(&self, entries: Vec<Entry>, sel: &Selection, dest: Dest) -> Result<Vec<Touched>> {
        let touched: Vec<Touched> = sel
            .project(&self.inner_grid)?
            .into_iter()
            .map(|part| Touched { entry: entries[self.linear(&part.chunk)], part })
            .collect();
        for t in touched.iter().filter(|t| t.entry.is_none()) {
            dest.at(&t.part.out).fill_box(&t.part.local.count)?;
        }
        Ok(touched)
    }

    /// [`ShardingCodec::decode_from_memory`] with the index already decoded (`entries`, checked
    /// against `shard`'s length).
    fn decode_from_slice(&self, shard: &[u8], entries: Vec<Entry>, sel: &Selection, dest: Dest, parallel: bool) -> Result<()> {
        let touched = self.touch(entries, sel, dest)?;
        let stored: Vec<&Touched> = touched.iter().filter(|t| t.entry.is_some()).collect();
        let decode = |t: &&Touched| {
            let (o, n) = t.entry.unwrap();
            let bytes = shard.get(o as usize..(o + n) as usize).ok_or_else(|| {
                Error::Codec(format!("inner chunk at bytes {o}..{} lies outside the shard of {} bytes", o + n, shard.len()))
            })?;
            self.inner.decode_region(bytes, &t.part.local, dest.at(&t.part.out))
        };
        if parallel {
            crate::threads::try_for_each(&stored, decode)
        } else {
            stored.iter().try_for_each(decode)
        }
    }

    /// Decodes the selection `sel` of the shard in `src` (whose index is `entries`) into `dest`.
    pub(crate) fn decode_region(&self, src: &dyn ByteSource, entries: Vec<Entry>, sel: &Selection, dest: Dest) -> Result<()> {
        if let Some(shard) = src.as_slice() {
            // Already in memory: the inner chunks are decoded from it, without copying them out first.
            return self.decode_from_slice(shard, entries, sel, dest, true);
        }
        let touched = self.touch(entries, sel, dest)?;
        let stored: Vec<&Touched> = touched.iter().filter(|t| t.entry.is_some()).collect();
        if stored.is_empty() {
            return Ok(());
        }
        if self.inner.is_bare() && src.max_read_hint().is_none() {
            // Uncompressed inner chunks from a local source: each reads just the byte span it needs
            // (remote sources: coalesced runs below, a request costing more than the bytes).
            return crate::threads::try_for_each(&stored, |t| {
                let (offset, len) = t.entry.unwrap();
                let sub = crate::store::SubSource { inner: src, offset, len };
                self.inner.partial_decode(&sub, self.inner.decoded_repr(), &t.part.local, dest.at(&t.part.out))
            });
        }
        // Coalesce the byte ranges of the touched chunks into as few reads as possible.
        let mut order: Vec<&Touched> = stored;
        order.sort_by_key(|t| t.entry.unwrap().0);
        // Inner chunks whose bytes the source already holds (fetched with the index) are read alone,
        // without a request; only the others are coalesced into requests.
        let mut groups: Vec<(u64, u64, Vec<&Touched>)> = Vec::new();
        order.retain(|t| {
            let (o, n) = t.entry.unwrap();
            let held = src.holds(o, n);
            if held {
                groups.push((o, o + n, vec![*t]));
            }
            !held
        });
        let held = groups.len();
        // A remote source asks for bounded runs (fetched concurrently); a group always takes one chunk.
        let max_read = src.max_read_hint().unwrap_or(u64::MAX);
        // Remote sources also bridge gaps of up to a MiB: fetching the bytes in between costs less
        // than another round trip.
        let gap = if src.max_read_hint().is_some() { REMOTE_COALESCE_GAP } else { COALESCE_GAP };
        for t in order {
            let (o, n) = t.entry.unwrap();
            let open = groups.len() > held;
            match groups.last_mut().filter(|_| open) {
                Some((gs, ge, members)) if o <= *ge + gap && (o + n).saturating_sub(*gs) <= max_read => {
                    *ge = (*ge).max(o + n);
                    members.push(t);
                }
                _ => groups.push((o, o + n, vec![t])),
            }
        }
        crate::threads::try_for_each(&groups, |(gs, ge, members)| {
            // A reused buffer that the read overwrites whole: no zeroing first.
            crate::scratch::with_read_buffer((ge - gs) as usize, |bytes| {
                src.read_into(*gs, bytes)?;
                let bytes = &*bytes;
                // Fetched (by a thread of the I/O pool when the source is remote): decode on the
                // chunk pool.
                crate::threads::compute(|| {
                    crate::threads::try_for_each(members, |t| {
                        let (o, n) = t.entry.unwrap();
                        let piece = &bytes[(o - gs) as usize..(o - gs + n) as usize];
                        self.inner.decode_region(piece, &t.part.local, dest.at(&t.part.out))
                    })
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DataType;

    /// A shard of 16 x 16 uint16 in 4 x 4 inner chunks (4 per dimension).
    fn codec() -> ShardingCodec {
        let cfg = json!({"chunk_shape": [4, 4], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]});
        let repr = ArrayRepr { shape: vec![16, 16], data_type: DataType::UInt16, fill_value: vec![0, 0] };
        ShardingCodec::from_v3(cfg.as_object(), &repr).unwrap()
    }

    #[test]
    fn which_selections_touch_every_inner_chunk() {
        let c = codec();
        let sel = |start: [u64; 2], count: [u64; 2], step: [u64; 2]| Selection::new(&start, &count, Some(&step)).unwrap();
        assert!(c.touches_every_inner_chunk(&sel([0, 0], [16, 16], [1, 1])), "the whole shard");
        assert!(c.touches_every_inner_chunk(&sel([3, 3], [10, 10], [1, 1])), "from the first inner chunk into the last");
        assert!(c.touches_every_inner_chunk(&sel([1, 0], [4, 4], [4, 4])), "a step of the inner chunk's size");
        assert!(!c.touches_every_inner_chunk(&sel([0, 0], [3, 4], [5, 4])), "a step past an inner chunk skips it");
        assert!(!c.touches_every_inner_chunk(&sel([4, 0], [12, 16], [1, 1])), "the first row of inner chunks left out");
        assert!(!c.touches_every_inner_chunk(&sel([0, 0], [16, 12], [1, 1])), "the last column of inner chunks left out");
        assert!(!c.touches_every_inner_chunk(&sel([0, 0], [0, 16], [1, 1])), "nothing selected");
    }
}
