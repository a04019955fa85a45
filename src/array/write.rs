//! Writes. The selection is cut along the chunk grid. Chunks it covers only in part are first read and
//! decoded (all of them, before anything is stored, so a corrupt chunk fails the call without changing
//! the array); then every touched chunk is merged, encoded and stored in parallel. A conversion from the
//! caller's type that can fail is checked over the whole selection first, so that a value out of range
//! stores nothing. A chunk equal to the fill value everywhere is not stored (an existing one is
//! deleted). Edge chunks are stored at full size, with the fill value outside the array. A fully
//! covered chunk whose elements need no conversion is encoded straight from the caller's buffer.
//! The touched chunks are locked (exclusive) for the whole call, so concurrent writers of one chunk or
//! shard, in any process, thread or handle, never lose each other's updates. Stores that cannot lock
//! but can write conditionally (S3) get the same guarantee another way: chunks covered in part are
//! read with their version and stored only if unchanged, else merged again (see
//! [`super::conditional_write`]).

use super::Array;
use crate::buffer::{fill_elements, RawBuf};
use crate::codec::ArrayToBytesCodec;
use crate::dtype::DataType;
use crate::error::{try_alloc, Result};
use crate::scratch::with_decoded;
use crate::selection::convert::Conv;
use crate::selection::{copy, for_each_pair_run, ChunkPart, Layout, Selection};
use crate::store::{StoreLock, ValueVersion};
use std::collections::HashMap;
use std::sync::Mutex;

/// What phase 1 of a write keeps of a chunk the selection covers only in part.
pub(super) enum Existing {
    /// The decoded chunk.
    Decoded(Vec<u8>),
    /// A shard: its stored bytes, index and the decoded inner chunks covered in part.
    Shard(super::shard_update::ShardUpdate),
}

impl Array {
    /// Writes `data` (C order, native-endian, exactly the region's size) to the region `start..start+count`.
    pub fn write_region(&self, start: &[u64], count: &[u64], data: &[u8]) -> Result<()> {
        self.check_writable()?;
        let (sel, layout, conv) = self.region_plan(start, count, data.len())?;
        self.write_selection(&sel, &layout, &conv, data)
    }

    /// Writes the strided selection `start, count, step` (`step` `None`: all 1) from `data`, whose
    /// elements are of `buffer_type` at the element strides `buffer_stride` (`None`: C order over
    /// `count`), converting to the array's type. A value that does not convert fails the call with
    /// nothing stored.
    pub fn write_hyperslab(
        &self,
        start: &[u64],
        count: &[u64],
        step: Option<&[u64]>,
        buffer_stride: Option<&[i64]>,
        buffer_type: &DataType,
        data: &[u8],
    ) -> Result<()> {
        self.check_writable()?;
        let (sel, layout, conv) = self.hyperslab_plan(start, count, step, buffer_stride, buffer_type, data.len(), false)?;
        self.write_selection(&sel, &layout, &conv, data)
    }

    fn write_selection(&self, sel: &Selection, layout: &Layout, conv: &Conv, data: &[u8]) -> Result<()> {
        if sel.is_empty() {
            return Ok(());
        }
        let done = crate::threads::io_scope(self.store.io_concurrency(), || self.write_selection_on_pool(sel, layout, conv, data));
        // The encoded-chunk buffers kept for reuse during the call are freed (`crate::scratch`).
        crate::scratch::release_encoded();
        done
    }

    /// [`Self::write_selection`] on the pool chosen for the store.
    fn write_selection_on_pool(&self, sel: &Selection, layout: &Layout, conv: &Conv, data: &[u8]) -> Result<()> {
        if conv.can_fail() {
            copy::check(data, 0, layout, &sel.count, conv)?;
        }
        let parts = sel.project(self.grid())?;
        // Every touched chunk (shard) is locked for the whole call, against other writers of any
        // process, thread or handle (see `crate::store::lock`).
        let lock = self.lock_chunks(parts.iter().map(|p| p.chunk.as_slice()))?;
        // A store that cannot lock but can write conditionally: chunks covered in part are read with
        // their version and stored only if unchanged (`super::conditional_write`).
        let cond = if lock.is_held() { None } else { self.store.conditional() };
        // Phase 1: decode the chunks the selection covers only in part.
        let partial: Vec<usize> = (0..parts.len()).filter(|&i| !self.covers_chunk(&parts[i])).collect();
        let decoded = crate::threads::try_map(&partial, |&i| {
            if let Some(c) = cond {
                let key = self.chunk_key(&parts[i].chunk);
                return self.read_versioned(c, &parts[i]).map_err(|e| e.context(self.store.location(&key)));
            }
            self.read_existing(&parts[i]).map(|e| (e, None))
        })?;
        let mut existing: Vec<Mutex<Option<Existing>>> = (0..parts.len()).map(|_| Mutex::new(None)).collect();
        // The version each chunk covered in part had when read (conditional stores only).
        let mut expected: HashMap<usize, Option<ValueVersion>> = HashMap::new();
        for (i, (buf, version)) in partial.into_iter().zip(decoded) {
            existing[i] = Mutex::new(Some(buf));
            if cond.is_some() {
                expected.insert(i, version);
            }
        }
        // Stores chunk `i`: conditionally where phase 1 read it with a version (a lost race is
        // answered by redoing that chunk's update), else plainly under `lock`.
        let store = |i: usize, e: Option<crate::codec::Parts>| -> Result<()> {
            let (Some(c), Some(version)) = (cond, expected.get(&i)) else {
                return self.store_chunk(&self.chunk_key(&parts[i].chunk), e, &lock);
            };
            match self.store_chunk_if(c, &parts[i].chunk, e, version.as_ref())? {
                super::conditional_write::Stored::Done => Ok(()),
                super::conditional_write::Stored::Lost => self.redo_chunk_update(c, &parts[i], layout, conv, data),
            }
        };
        // Phase 2: merge, encode, store. When a codec may refuse a value, every chunk is encoded
        // before any is stored (phase 3), so that a refused value stores nothing.
        let indices: Vec<usize> = (0..parts.len()).collect();
        let deferred = self.meta.codecs.may_refuse_values();
        let encoded: Vec<Mutex<Option<Option<Vec<u8>>>>> = (0..if deferred { parts.len() } else { 0 }).map(|_| Mutex::new(None)).collect();
        crate::threads::try_for_each(&indices, |&i| {
            let buf = existing[i].lock().unwrap_or_else(|e| e.into_inner()).take();
            let key = self.chunk_key(&parts[i].chunk);
            let mut sink = |e: Option<crate::codec::Parts>| -> Result<()> {
                if deferred {
                    *encoded[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(e.map(crate::codec::join_parts));
                    return Ok(());
                }
                store(i, e)
            };
            self.write_chunk_part(&parts[i], layout, conv, data, buf, &mut sink)
                .map_err(|e| e.context(self.store.location(&key)))
        })?;
        if deferred {
            let ready: Vec<(usize, Option<Vec<u8>>)> =
                indices.iter().map(|&i| (i, encoded[i].lock().unwrap_or_else(|e| e.into_inner()).take().flatten())).collect();
            crate::threads::try_for_each(&ready, |(i, bytes)| {
                store(*i, bytes.as_deref().map(|b| vec![std::borrow::Cow::Borrowed(b)]))
                    .map_err(|e| e.context(self.store.location(&self.chunk_key(&parts[*i].chunk))))
            })?;
        }
        Ok(())
    }

    /// Phase 1 for one chunk the selection covers only in part: the decoded chunk, or for a shard
    /// what its update needs.
    fn read_existing(&self, part: &ChunkPart) -> Result<Existing> {
        let chain = self.meta.chain_for(&part.chunk)?;
        if let (true, Some(shard)) = (chain.is_bare(), chain.array_to_bytes().as_sharding()) {
            // A shard: only its touched inner chunks are decoded (and later re-encoded).
            let key = self.chunk_key(&part.chunk);
            return self.prepare_shard_update(shard, part).map(Existing::Shard).map_err(|e| e.context(self.store.location(&key)));
        }
        let mut buf = try_alloc(chain.decoded_repr().nbytes())?;
        self.read_chunk(&part.chunk, &mut buf)?;
        Ok(Existing::Decoded(buf))
    }

    /// Stores an encoded chunk under `key`, or deletes the key for `None` (all fill value), holding
    /// `lock`, which covers the chunk.
    pub(crate) fn store_chunk(&self, key: &str, encoded: Option<crate::codec::Parts>, lock: &StoreLock) -> Result<()> {
        match encoded {
            None => self.store.delete_locked(key, lock),
            Some(parts) => {
                let slices: Vec<&[u8]> = parts.iter().map(|p| p.as_ref()).collect();
                self.store.set_parts_locked(key, &slices, lock)?;
                drop(slices);
                // Stored: the buffers serve the next chunks' encodes (`crate::scratch::take_encoded`).
                for p in parts {
                    if let std::borrow::Cow::Owned(v) = p {
                        crate::scratch::recycle_encoded(v);
                    }
                }
                Ok(())
            }
        }
    }

    /// Whether the part covers every element of its chunk that lies inside the array.
    fn covers_chunk(&self, part: &ChunkPart) -> bool {
        part.local.covers_chunk(&self.meta.shape, |d| self.grid().chunk_span(d, part.chunk[d]))
    }

    pub(super) fn write_chunk_part(
        &self,
        part: &ChunkPart,
        layout: &Layout,
        conv: &Conv,
        data: &[u8],
        existing: Option<Existing>,
        sink: crate::codec::Sink,
    ) -> Result<()> {
        let chain = self.meta.chain_for(&part.chunk)?;
        let repr = chain.decoded_repr();
        let existing = match existing {
            Some(Existing::Shard(update)) => {
                let shard = chain.array_to_bytes().as_sharding().expect("phase 1 saw a sharding codec");
                return self.write_shard_update(shard, part, update, layout, conv, data, sink);
            }
            Some(Existing::Decoded(buf)) => Some(buf),
            None => None,
        };
        let encode = |src: &[u8], layout: &Layout, offset: usize, sink: crate::codec::Sink| {
            if self.meta.fill_defined {
                chain.encode_box(src, layout, offset, repr, sink)
            } else {
                // No fill value: every chunk is stored, whatever it holds.
                crate::selection::with_box(src, layout, offset, &repr.shape, &repr.data_type, |data| sink(Some(vec![chain.encode_chunk(data)?])))
            }
        };
        let src_offset = layout.offset_of(&part.out);
        if existing.is_none() && conv.is_identity() && part.local.is_dense() && part.local.count == repr.shape {
            // Fully covered: encode straight from the caller's buffer.
            return encode(data, layout, src_offset, sink);
        }
        // Otherwise the selection is merged into a whole-chunk buffer first.
        let chunk_layout = repr.layout();
        let merge_and_encode = |chunk: &mut [u8], sink: crate::codec::Sink| {
            let at = chunk_layout.offset_of(&part.local.start);
            let into = chunk_layout.stepped(&part.local.step);
            copy::copy(data, src_offset, layout, RawBuf::new(chunk), at, &into, &part.local.count, conv)?;
            encode(chunk, &chunk_layout, 0, sink)
        };
        match existing {
            Some(mut chunk) => merge_and_encode(&mut chunk, sink),
            None => with_decoded(repr.nbytes(), |chunk| {
                // An edge chunk covered in full: the part outside the array holds the fill value.
                fill_elements(chunk, &self.meta.fill_value);
                merge_and_encode(chunk, sink)
            }),
        }
    }
}

impl Array {
    /// Writes elements to the region `start..start+count` (C order): element i is
    /// `data[offsets[i] .. offsets[i+1]]`, with `offsets` holding product(count) + 1 entries. For
    /// `string` arrays every element must be valid UTF-8 ([`crate::Error::Value`] otherwise, nothing
    /// stored). The region is cut along the grid like any other; the chunks it covers in part are
    /// decoded, and every touched chunk is merged and encoded by its chain
    /// ([`crate::codec::serialize::vlen::encode`]), in parallel and before anything is stored, so a failing write
    /// changes nothing. A chunk (or an inner chunk of a shard) whose elements all equal the fill value
    /// is not stored.
    pub fn write_region_vlen(&self, start: &[u64], count: &[u64], offsets: &[u64], data: &[u8]) -> Result<()> {
        self.check_writable()?;
        self.check_vlen_region(start, count)?;
        let codec = crate::codec::serialize::vlen::element_codec(&self.meta.codecs)
            .ok_or_else(|| crate::Error::Internal("a variable-length array without a variable-length codec".into()))?;
        let n = count.iter().try_fold(1u64, |a, &c| a.checked_mul(c));
        if n.and_then(|n| n.checked_add(1)) != Some(offsets.len() as u64) {
            return Err(crate::Error::BufferSize(format!(
                "{} offsets given, the region needs {} (one more than its element count)",
                offsets.len(),
                n.map_or("more than 2^64".to_string(), |n| (n as u128 + 1).to_string())
            )));
        }
        let n = offsets.len() - 1;
        for i in 0..n {
            let (a, b) = (offsets[i], offsets[i + 1]);
            if a > b || b > data.len() as u64 {
                return Err(crate::Error::InvalidArgument(format!(
                    "offsets[{i}..={}] = {a}, {b}: offsets must not decrease and must stay within the {} data bytes",
                    i + 1,
                    data.len()
                )));
            }
            codec.check_element(&data[a as usize..b as usize]).map_err(|why| crate::Error::Value(format!("element {i}: {why}")))?;
        }
        if n == 0 {
            return Ok(());
        }
        let parts = Selection::dense(start, count).project(self.grid())?;
        let lock = self.lock_chunks(parts.iter().map(|p| p.chunk.as_slice()))?;
        let encoded: Vec<Option<Vec<u8>>> = crate::threads::try_map(&parts, |part| {
            let key = self.chunk_key(&part.chunk);
            self.encode_vlen_part(part, start, count, offsets, data).map_err(|e| e.context(self.store.location(&key)))
        })?;
        let jobs: Vec<(&ChunkPart, &Option<Vec<u8>>)> = parts.iter().zip(&encoded).collect();
        crate::threads::try_for_each(&jobs, |(part, enc)| {
            let key = self.chunk_key(&part.chunk);
            match enc {
                Some(bytes) => self.store.set_parts_locked(&key, &[bytes], &lock),
                None => self.store.delete_locked(&key, &lock),
            }
        })
    }

    /// The new encoded content of the chunk of `part` after writing the region (`None`: all fill, not
    /// stored).
    fn encode_vlen_part(&self, part: &ChunkPart, start: &[u64], count: &[u64], offsets: &[u64], data: &[u8]) -> Result<Option<Vec<u8>>> {
        let chain = self.meta.chain_for(&part.chunk)?;
        let shape = &chain.decoded_repr().shape;
        let fill = &self.meta.fill_value[..];
        let existing = match self.covers_chunk(part) {
            true => None,
            false => match self.store.get_limited(&self.chunk_key(&part.chunk), super::chunk_limit(&chain))? {
                Some(bytes) => Some(crate::codec::serialize::vlen::decode(&chain, bytes, &Selection::dense(&vec![0; shape.len()], shape))?.into_chunk(shape)?),
                None => None,
            },
        };
        let mut elems: Vec<&[u8]> = match &existing {
            Some(chunk) => chunk.elements(),
            None => vec![fill; shape.iter().product::<u64>() as usize],
        };
        // The chunk's origin in the array.
        let origin: Vec<u64> = (0..shape.len()).map(|d| start[d] + part.out[d] - part.local.start[d]).collect();
        for_each_pair_run(&origin, shape, start, count, |r0, k0, run| {
            for j in 0..run {
                elems[k0 + j] = &data[offsets[r0 + j] as usize..offsets[r0 + j + 1] as usize];
            }
        });
        if self.meta.fill_defined && elems.iter().all(|e| *e == fill) {
            return Ok(None);
        }
        crate::codec::serialize::vlen::encode(&chain, &elems).map(Some)
    }
}
