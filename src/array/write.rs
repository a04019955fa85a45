//! Writes. The selection is cut along the chunk grid into chunk parts, taken
//! [`WRITE_PARTS_PER_BATCH`] at a time and never listed whole, so memory follows the caller's buffer,
//! not the number of chunks touched (docs/limits.md). A write makes two passes over the parts:
//!
//! 1. Before anything is stored: every chunk the selection covers only in part is read and decoded (a
//!    corrupt chunk fails the call without changing the array), and when the chain may refuse a value
//!    (`scale_offset`, `cast_value`) every chunk is merged and encoded too (a refused value stores
//!    nothing). What this pass makes is kept for pass 2 while it fits in the caller's buffer's size plus
//!    [`WRITE_HOLD_FLOOR`]; the rest is made again in pass 2. The pass is skipped when there is nothing
//!    to check (every chunk covered whole, no chain that refuses).
//! 2. Every touched chunk is merged, encoded and stored, in parallel.
//!
//! A call of one batch (the usual case) takes its parts once for both passes; a longer one makes them
//! again for each pass. A conversion from the caller's type that can fail is checked over the whole
//! selection first, so that a value out of range stores nothing. A chunk equal to the fill value
//! everywhere is not stored (an existing one is deleted). Edge chunks are stored at full size, with the
//! fill value outside the array. A fully covered chunk whose elements need no conversion is encoded
//! straight from the caller's buffer.
//! The touched chunks are locked (exclusive) for the whole call, so concurrent writers of one chunk or
//! shard, in any process, thread or handle, never lose each other's updates; a call touching more than
//! [`crate::store::lock::MAX_CHUNK_LOCK_RANGES`] separate runs of chunks also locks chunks between
//! them ([`crate::store::ChunkLockRanges`]). Stores that cannot lock but can write conditionally (S3)
//! get the same guarantee another way: chunks covered in part are read with their version and stored
//! only if unchanged, else merged again (see [`super::conditional_write`]).

use super::Array;
use crate::buffer::{fill_elements, RawBuf};
use crate::codec::ArrayToBytesCodec;
use crate::dtype::DataType;
use crate::error::{try_alloc, Result};
use crate::scratch::with_decoded;
use crate::selection::convert::Conv;
use crate::selection::{copy, for_each_pair_run, ChunkPart, Layout, Selection};
use crate::store::{ChunkLockRanges, ConditionalStore, StoreLock, ValueVersion};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The most chunk parts a write holds at once ([`crate::selection::Parts::next_batch`]), as reads.
const WRITE_PARTS_PER_BATCH: usize = 16384;

/// What pass 1 of a write may keep for pass 2 beyond the size of the caller's buffer: decoded chunks
/// covered in part, encoded chunks of a chain that may refuse a value (docs/limits.md).
pub(crate) const WRITE_HOLD_FLOOR: usize = 64 << 20;

/// Bytes counted for each thing pass 1 keeps beyond its data (its place in the queue, its vectors).
const HOLD_OVERHEAD: usize = 256;

/// What phase 1 of a write keeps of a chunk the selection covers only in part.
pub(super) enum Existing {
    /// The decoded chunk.
    Decoded(Vec<u8>),
    /// A shard: its stored bytes, index and the decoded inner chunks covered in part.
    Shard(super::shard_update::ShardUpdate),
}

impl Existing {
    /// The bytes it holds.
    fn held_bytes(&self) -> usize {
        match self {
            Existing::Decoded(buf) => buf.len(),
            Existing::Shard(update) => update.held_bytes(),
        }
    }
}

/// What pass 1 made of one chunk, kept for pass 2.
enum Prepared {
    /// The stored chunk, decoded (a chunk covered in part).
    Existing(Existing, Expected),
    /// The new chunk, encoded (`None`: all fill value), for a chain that may refuse a value.
    Encoded(Option<Vec<u8>>, Expected),
}

/// On a store written conditionally, the version a chunk covered in part had when it was read
/// (`Some(None)`: it did not exist); `None`: the chunk is stored plainly (under the lock).
type Expected = Option<Option<ValueVersion>>;

/// The bytes pass 1 may keep, shared by the threads of one call.
struct HoldBudget {
    limit: usize,
    used: AtomicUsize,
}

impl HoldBudget {
    /// Whether `n` more bytes may be kept (then they are counted).
    fn take(&self, n: usize) -> bool {
        let n = n.saturating_add(HOLD_OVERHEAD);
        let was = self.used.fetch_add(n, Ordering::Relaxed);
        if was.saturating_add(n) <= self.limit {
            return true;
        }
        self.used.fetch_sub(n, Ordering::Relaxed);
        false
    }
}

/// Pass 1 of a write for one chunk part: `None` when there is nothing to check or keep, else what
/// was made and the bytes it holds.
type PrepareFn<'f, H> = dyn Fn(&ChunkPart, &StoreLock) -> Result<Option<(H, usize)>> + Sync + 'f;
/// Pass 2 of a write for one chunk part, given what pass 1 kept of it (`None`: nothing, or dropped).
type FinishFn<'f, H> = dyn Fn(&ChunkPart, Option<H>, &StoreLock) -> Result<()> + Sync + 'f;

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
        // When a codec may refuse a value, pass 1 encodes every chunk, so that a refused value stores
        // nothing.
        let refusing = self.meta.codecs.may_refuse_values();
        let prepare = |part: &ChunkPart, lock: &StoreLock| -> Result<Option<(Prepared, usize)>> {
            let covered = self.covers_chunk(part);
            if covered && !refusing {
                return Ok(None);
            }
            let (existing, expected) = match covered {
                true => (None, None),
                false => {
                    let (e, v) = self.read_for_update(self.conditional(lock), part)?;
                    (Some(e), v)
                }
            };
            if !refusing {
                let existing = existing.expect("a chunk covered in part was read");
                let n = existing.held_bytes();
                return Ok(Some((Prepared::Existing(existing, expected), n)));
            }
            let mut encoded = None;
            let mut keep = |e: Option<crate::codec::Parts>| -> Result<()> {
                encoded = e.map(crate::codec::join_parts);
                Ok(())
            };
            self.write_chunk_part(part, layout, conv, data, existing, &mut keep)
                .map_err(|e| e.context(self.store.location(&self.chunk_key(&part.chunk))))?;
            let n = encoded.as_ref().map_or(0, Vec::len);
            Ok(Some((Prepared::Encoded(encoded, expected), n)))
        };
        let finish = |part: &ChunkPart, kept: Option<Prepared>, lock: &StoreLock| -> Result<()> {
            let cond = self.conditional(lock);
            let key = self.chunk_key(&part.chunk);
            let (existing, expected) = match kept {
                Some(Prepared::Encoded(bytes, expected)) => {
                    let parts = bytes.map(|b| vec![Cow::Owned(b)]);
                    return self
                        .store_part(cond, part, parts, expected.as_ref(), lock, layout, conv, data)
                        .map_err(|e| e.context(self.store.location(&key)));
                }
                Some(Prepared::Existing(e, expected)) => (Some(e), expected),
                None if self.covers_chunk(part) => {
                    // A whole shard, where it can go to the store while its inner chunks are encoded.
                    if let Some(done) = cond.is_none().then(|| self.write_shard_streamed(part, layout, conv, data, lock)).flatten() {
                        return done.map_err(|e| e.context(self.store.location(&key)));
                    }
                    (None, None)
                }
                None => {
                    let (e, v) = self.read_for_update(cond, part)?;
                    (Some(e), v)
                }
            };
            let mut sink = |e: Option<crate::codec::Parts>| self.store_part(cond, part, e, expected.as_ref(), lock, layout, conv, data);
            self.write_chunk_part(part, layout, conv, data, existing, &mut sink).map_err(|e| e.context(self.store.location(&key)))
        };
        let hold = data.len().saturating_add(WRITE_HOLD_FLOOR);
        self.write_parts::<Prepared>(sel, hold, refusing, &prepare, &finish)
    }

    /// The store written conditionally when `lock` holds nothing (a store that cannot lock), if it can.
    fn conditional(&self, lock: &StoreLock) -> Option<&dyn ConditionalStore> {
        if lock.is_held() {
            None
        } else {
            self.store.conditional()
        }
    }

    /// Reads the chunk of `part`, which the selection covers only in part, for its update: with its
    /// version on a store written conditionally (`cond`).
    fn read_for_update(&self, cond: Option<&dyn ConditionalStore>, part: &ChunkPart) -> Result<(Existing, Expected)> {
        match cond {
            Some(c) => {
                let key = self.chunk_key(&part.chunk);
                let (e, v) = self.read_versioned(c, part).map_err(|e| e.context(self.store.location(&key)))?;
                Ok((e, Some(v)))
            }
            None => Ok((self.read_existing(part)?, None)),
        }
    }

    /// Stores the new chunk of `part` (`None`: all fill value): conditionally where it was read with a
    /// version (`expected`; a lost race is answered by redoing that chunk's update), else plainly
    /// under `lock`.
    #[allow(clippy::too_many_arguments)]
    fn store_part(
        &self,
        cond: Option<&dyn ConditionalStore>,
        part: &ChunkPart,
        encoded: Option<crate::codec::Parts>,
        expected: Option<&Option<ValueVersion>>,
        lock: &StoreLock,
        layout: &Layout,
        conv: &Conv,
        data: &[u8],
    ) -> Result<()> {
        let (Some(c), Some(version)) = (cond, expected) else {
            return self.store_chunk(&self.chunk_key(&part.chunk), encoded, lock);
        };
        match self.store_chunk_if(c, &part.chunk, encoded, version.as_ref())? {
            super::conditional_write::Stored::Done => Ok(()),
            super::conditional_write::Stored::Lost => self.redo_chunk_update(c, part, layout, conv, data),
        }
    }

    /// Runs a write of the parts of `sel` in two passes, [`WRITE_PARTS_PER_BATCH`] parts at a time,
    /// each batch in parallel, holding the lock of every touched chunk (shard) for the whole call
    /// (against other writers of any process, thread or handle: `crate::store::lock`). Pass 1
    /// (`prepare`) sees every part before pass 2 (`finish`) sees any, so that whatever can fail in it
    /// fails with nothing stored; it keeps what it made up to `hold` bytes in all, and pass 2 gets what
    /// was kept of each part (what was not, it makes again). Pass 1 is skipped when no part covers its
    /// chunk in part and `check_all` is false (then it would find nothing to check).
    fn write_parts<H: Send>(
        &self,
        sel: &Selection,
        hold: usize,
        check_all: bool,
        prepare: &PrepareFn<'_, H>,
        finish: &FinishFn<'_, H>,
    ) -> Result<()> {
        let grid = self.grid();
        let mut parts = sel.parts(grid);
        let mut batch = parts.next_batch(WRITE_PARTS_PER_BATCH)?;
        let single = parts.is_done();
        // The lock ranges, and whether some chunk is covered in part, from every part: those of the
        // batch, or (longer calls) all parts made once more.
        let mut ranges = ChunkLockRanges::new();
        let mut in_part = false;
        let mut scan = |p: &ChunkPart| {
            ranges.add(&p.chunk);
            in_part = in_part || !self.covers_chunk(p);
        };
        if single {
            batch.iter().for_each(&mut scan);
        } else {
            let mut all = sel.parts(grid);
            while let Some(p) = all.try_next()? {
                scan(&p);
            }
        }
        let lock = self.lock_chunk_ranges(ranges.finish())?;
        let budget = HoldBudget { limit: hold, used: AtomicUsize::new(0) };
        let pass1 = |batch: &[ChunkPart]| -> Result<Vec<Option<H>>> {
            crate::threads::try_map(batch, |part| Ok(prepare(part, &lock)?.and_then(|(h, n)| budget.take(n).then_some(h))))
        };
        let pass2 = |batch: &[ChunkPart], kept: Vec<Option<H>>| -> Result<()> {
            let jobs: Vec<(&ChunkPart, Mutex<Option<H>>)> = batch.iter().zip(kept.into_iter().map(Mutex::new)).collect();
            crate::threads::try_for_each(&jobs, |(part, h)| finish(part, h.lock().unwrap_or_else(|e| e.into_inner()).take(), &lock))
        };
        let nothing = |n: usize| (0..n).map(|_| None).collect::<Vec<Option<H>>>();
        let checks = check_all || in_part;
        if single {
            let kept = if checks { pass1(&batch)? } else { nothing(batch.len()) };
            return pass2(&batch, kept);
        }
        // Several batches: what pass 1 keeps waits in order, by the part's place in the selection.
        let mut queue: VecDeque<(u64, H)> = VecDeque::new();
        if checks {
            let mut base = 0u64;
            while !batch.is_empty() {
                for (i, h) in pass1(&batch)?.into_iter().enumerate() {
                    if let Some(h) = h {
                        queue.try_reserve(1).map_err(|_| crate::error::alloc_failed(std::mem::size_of::<(u64, H)>()))?;
                        queue.push_back((base + i as u64, h));
                    }
                }
                base += batch.len() as u64;
                batch = parts.next_batch(WRITE_PARTS_PER_BATCH)?;
            }
            parts = sel.parts(grid);
            batch = parts.next_batch(WRITE_PARTS_PER_BATCH)?;
        }
        let mut base = 0u64;
        while !batch.is_empty() {
            let mut kept = nothing(batch.len());
            let end = base + batch.len() as u64;
            while queue.front().is_some_and(|(i, _)| *i < end) {
                let (i, h) = queue.pop_front().expect("a first entry");
                kept[(i - base) as usize] = Some(h);
            }
            pass2(&batch, kept)?;
            base += batch.len() as u64;
            batch = parts.next_batch(WRITE_PARTS_PER_BATCH)?;
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
        // Pass 1 encodes every chunk (kept up to the caller's data and offsets plus WRITE_HOLD_FLOOR),
        // pass 2 stores them (encoding again those not kept).
        let encode = |part: &ChunkPart| -> Result<Option<Vec<u8>>> {
            let key = self.chunk_key(&part.chunk);
            self.encode_vlen_part(part, start, count, offsets, data).map_err(|e| e.context(self.store.location(&key)))
        };
        let prepare = |part: &ChunkPart, _: &StoreLock| -> Result<Option<(Option<Vec<u8>>, usize)>> {
            let encoded = encode(part)?;
            let n = encoded.as_ref().map_or(0, Vec::len);
            Ok(Some((encoded, n)))
        };
        let finish = |part: &ChunkPart, kept: Option<Option<Vec<u8>>>, lock: &StoreLock| -> Result<()> {
            let key = self.chunk_key(&part.chunk);
            match kept.map_or_else(|| encode(part), Ok)? {
                Some(bytes) => self.store.set_parts_locked(&key, &[bytes.as_slice()], lock),
                None => self.store.delete_locked(&key, lock),
            }
        };
        let given = data.len().saturating_add(offsets.len().saturating_mul(8));
        self.write_parts::<Option<Vec<u8>>>(&Selection::dense(start, count), given.saturating_add(WRITE_HOLD_FLOOR), true, &prepare, &finish)
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
