//! Reads: the selection is cut along the chunk grid and every chunk it touches is decoded in parallel,
//! straight into the caller's buffer when the chunk is one contiguous, unconverted run of it, otherwise
//! through per-thread scratch buffers, with striding and type conversion inside the one copy out.
//! Chains without compression (plain `bytes`, or sharding) read only the byte ranges they need, except
//! that a read touching every inner chunk of a local shard reads the shard file whole, at once.
//! Missing chunks become the fill value.

use super::{chunk_limit, Array};
use crate::buffer::RawBuf;
use crate::codec::ArrayToBytesCodec;
use crate::dtype::DataType;
use crate::error::Result;
use crate::scratch::with_encoded;
use crate::selection::convert::Conv;
use crate::selection::vlen::{VlenChunk, VlenData, VlenPiece, VlenPieces};
use crate::selection::{for_each_pair_run, ChunkPart, Dest, Layout, Selection};
use crate::store::OpenHint;

/// The most chunk parts a read holds at once ([`crate::selection::Parts::next_batch`]): a few MiB of
/// parts, enough to keep every thread busy and the reference store's batched reads long.
const READ_PARTS_PER_BATCH: usize = 16384;

impl Array {
    /// Reads the region `start..start+count` into `out` (C order, native-endian, exactly the region's size).
    /// A destination of 8 MiB to 1 GiB is advised to use transparent huge pages (as numpy does for its
    /// large arrays): when it is freshly allocated, the kernel then faults it in 2 MiB at a time.
    /// `ZARR_HUGEPAGES=0` in the environment turns this off.
    pub fn read_region(&self, start: &[u64], count: &[u64], out: &mut [u8]) -> Result<()> {
        let (sel, layout, conv) = self.region_plan(start, count, out.len())?;
        self.read_selection(&sel, &layout, &conv, out)
    }

    /// Reads the strided selection `start, count, step` (`step` `None`: all 1) into `out`, whose
    /// elements are of `buffer_type` at the element strides `buffer_stride` (`None`: C order over
    /// `count`), converting from the array's type by the rule of [`crate::selection::convert`].
    pub fn read_hyperslab(
        &self,
        start: &[u64],
        count: &[u64],
        step: Option<&[u64]>,
        buffer_stride: Option<&[i64]>,
        buffer_type: &DataType,
        out: &mut [u8],
    ) -> Result<()> {
        let (sel, layout, conv) = self.hyperslab_plan(start, count, step, buffer_stride, buffer_type, out.len(), true)?;
        self.read_selection(&sel, &layout, &conv, out)
    }

    /// Reads a checked selection into `out` laid out as `layout`, converting with `conv`.
    fn read_selection(&self, sel: &Selection, layout: &Layout, conv: &Conv, out: &mut [u8]) -> Result<()> {
        if sel.is_empty() {
            return Ok(());
        }
        advise_huge_pages(out);
        let fill = conv.convert_one(&self.meta.fill_value).ok();
        let dest = Dest { buf: RawBuf::new(out), offset: 0, layout, conv, fill: fill.as_deref() };
        // The parts are taken READ_PARTS_PER_BATCH at a time, never listed whole: memory follows the
        // caller's buffer, not the number of chunks (a stepped read of millions of one-element chunks).
        let mut parts = sel.parts(self.grid());
        let mut batch = parts.next_batch(READ_PARTS_PER_BATCH)?;
        // With at least two chunks (shards) per thread, the threads are kept busy by the chunks: a
        // shard's inner chunks are then decoded in turn by the thread that read the shard.
        let spread = parts.is_done() && batch.len() < 2 * crate::threads::num_threads()?;
        crate::threads::io_scope(self.store.io_concurrency(), || {
            while !batch.is_empty() {
                if !(batch.len() > 1 && self.read_batch(&batch, &dest)?) {
                    crate::threads::try_for_each(&batch, |part| self.read_chunk_part(part, dest.at(&part.out), spread))?;
                }
                batch = parts.next_batch(READ_PARTS_PER_BATCH)?;
            }
            Ok(())
        })
    }

    /// Reads `parts` through the store's batched read ([`crate::store::Store::get_batch`]: the
    /// reference store fetches adjacent byte ranges of one target together) and decodes each chunk's
    /// part into `dest`, missing chunks as the fill value; `false` (nothing read) when the store has
    /// no batched read or a chunk is sharded (a shard is read by the ranges it needs instead).
    fn read_batch(&self, parts: &[ChunkPart], dest: &Dest) -> Result<bool> {
        let chains = parts.iter().map(|p| self.meta.chain_for(&p.chunk)).collect::<Result<Vec<_>>>()?;
        if chains.iter().any(|c| c.array_to_bytes().as_sharding().is_some()) {
            return Ok(false);
        }
        let keys: Vec<String> = parts.iter().map(|p| self.chunk_key(&p.chunk)).collect();
        let limit = crate::store::ReadLimit::chunk(chains.iter().map(|c| c.max_encoded_size()).max().unwrap_or(0));
        let visit = |i: usize, encoded: &[u8]| -> Result<()> {
            let part = &parts[i];
            chunk_limit(&chains[i]).check(&self.store.location(&keys[i]), encoded.len() as u64)?;
            chains[i].decode_region(encoded, &part.local, dest.at(&part.out)).map_err(|e| e.context(self.store.location(&keys[i])))
        };
        let Some(found) = self.store.get_batch(&keys, limit, &visit)? else { return Ok(false) };
        for (part, _) in parts.iter().zip(&found).filter(|(_, f)| !**f) {
            dest.at(&part.out).fill_box(&part.local.count)?;
        }
        Ok(true)
    }

    /// Decodes the part of one chunk that a selection touches into `dest`; `spread`: a shard's inner
    /// chunks may be decoded in parallel (otherwise by this thread, in turn).
    fn read_chunk_part(&self, part: &ChunkPart, dest: Dest, spread: bool) -> Result<()> {
        let key = self.chunk_key(&part.chunk);
        let chain = self.meta.chain_for(&part.chunk)?;
        let ctx = |e: crate::Error| e.context(self.store.location(&key));
        // Remote stores: shards by the ranges they need (remote_shard.rs); uncompressed chunks by one
        // ranged GET of the span the part needs; other chunks by one whole GET, decoded on the chunk pool.
        let remote = self.store.io_concurrency() > 0;
        if remote {
            if chain.is_bare() {
                if let Some(shard) = chain.array_to_bytes().as_sharding() {
                    return self.read_shard_remote(&key, shard, part, dest).map_err(ctx);
                }
                let repr = chain.decoded_repr();
                let span = (chain.array_to_bytes().element_bytes(repr))
                    .map(|_| part.local.byte_span(&repr.layout()));
                if let Some((first, end)) = span.filter(|&(first, end)| end - first < repr.nbytes()) {
                    let hint = OpenHint::Range(first as u64, end as u64);
                    let Some(src) = self.store.open_hinted(&key, hint).map_err(ctx)? else {
                        return dest.fill_box(&part.local.count);
                    };
                    chunk_limit(&chain).check(&self.store.location(&key), src.len())?;
                    return chain.partial_decode(src.as_ref(), repr, &part.local, dest).map_err(ctx);
                }
            }
            return self.read_whole_chunk_remote(&key, part, dest).map_err(ctx);
        }
        if chain.is_bare() && !dest.is_direct(&chain.decoded_repr().shape, &part.local) {
            if let Some(shard) = chain.array_to_bytes().as_sharding().filter(|s| {
                (!s.inner_chain().is_bare() || part.local.is_dense()) && s.touches_every_inner_chunk(&part.local)
            }) {
                // Every inner chunk is needed: the whole shard file in one read (into this thread's
                // reused buffer), the index taken from it, each inner chunk decoded straight from it.
                return with_encoded(|encoded| {
                    if !self.store.get_into(&key, encoded, chunk_limit(&chain))? {
                        return dest.fill_box(&part.local.count);
                    }
                    shard.decode_from_memory(encoded, &part.local, dest, spread)
                })
                .map_err(ctx);
            }
            let Some(src) = self.store.open(&key).map_err(ctx)? else {
                return dest.fill_box(&part.local.count);
            };
            // A stored value longer than any encoding of the chunk is refused before it is read.
            chunk_limit(&chain).check(&self.store.location(&key), src.len())?;
            return chain.partial_decode(src.as_ref(), chain.decoded_repr(), &part.local, dest).map_err(ctx);
        }
        with_encoded(|encoded| {
            if !self.store.get_into(&key, encoded, chunk_limit(&chain))? {
                return dest.fill_box(&part.local.count);
            }
            chain.decode_region(encoded, &part.local, dest)
        })
        .map_err(ctx)
    }
}

/// Asks for transparent huge pages on the page-aligned interior of a large buffer (a hint; errors such
/// as a file-backed mapping are ignored).
fn advise_huge_pages(buf: &mut [u8]) {
    const MIN: usize = 8 << 20;
    // Above this, synchronous compaction for huge pages (transparent_hugepage/defrag = madvise) costs
    // more than the page faults it saves: a fresh 3.3 GB destination took 11-12 CPU s with the advice
    // and 6.2 s without it, while 256 MiB reads still gain (bench/README.md).
    const MAX: usize = 1 << 30;
    const PAGE: usize = 4096;
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let enabled = *ENABLED.get_or_init(|| std::env::var("ZARR_HUGEPAGES").map(|v| v != "0").unwrap_or(true));
    if !enabled || buf.len() < MIN || buf.len() > MAX {
        return;
    }
    let begin = (buf.as_mut_ptr() as usize).next_multiple_of(PAGE);
    let end = (buf.as_mut_ptr() as usize + buf.len()) & !(PAGE - 1);
    if end > begin {
        // SAFETY: the range lies inside `buf`, which we may write; madvise only changes paging policy.
        unsafe { libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_HUGEPAGE) };
    }
}

impl Array {
    /// Decodes the part of the chunk (or shard) at `key` that `part` selects from one GET of the whole
    /// value (decoded on the chunk pool, straight from the received buffer); a missing value is the
    /// fill value.
    pub(super) fn read_whole_chunk_remote(&self, key: &str, part: &ChunkPart, dest: Dest) -> Result<()> {
        let chain = self.meta.chain_for(&part.chunk)?;
        let found = self
            .store
            .with_value(key, chunk_limit(&chain), &mut |encoded| {
                crate::threads::compute(|| chain.decode_region(encoded, &part.local, dest))
            })?;
        if found {
            Ok(())
        } else {
            dest.fill_box(&part.local.count)
        }
    }
}

impl Array {
    /// Decodes the whole chunk `ci` into `out` (the chunk's decoded size); `false` when it is missing
    /// (then `out` holds the fill value).
    pub fn read_chunk(&self, ci: &[u64], out: &mut [u8]) -> Result<bool> {
        let key = self.chunk_key(ci);
        let chain = self.meta.chain_for(ci)?;
        with_encoded(|encoded| {
            if !self.store.get_into(&key, encoded, chunk_limit(&chain))? {
                crate::buffer::fill_elements(out, &self.meta.fill_value);
                return Ok(false);
            }
            chain.decode_chunk(encoded, out)?;
            Ok(true)
        })
        .map_err(|e| e.context(self.store.location(&key)))
    }
}

impl Array {
    /// Checks that the array has variable-length elements and that the region lies inside it.
    pub fn check_vlen_region(&self, start: &[u64], count: &[u64]) -> Result<()> {
        if !self.meta.data_type.is_vlen() {
            return Err(crate::Error::InvalidArgument(format!(
                "the array's data type {} has fixed-size elements: use zarr_read_region / zarr_write_region",
                self.meta.data_type
            )));
        }
        self.check_bounds(start, count)
    }

    /// Reads the region `start..start+count` of an array of variable-length elements (C order; a
    /// vlen-array element is the bytes of its native-endian items). Missing chunks read as the fill
    /// value. The region is cut along the grid like any other ([`Selection::project`]); each touched
    /// chunk is decoded by its chain ([`crate::codec::serialize::vlen::decode`]: only the touched inner chunks of
    /// a shard, each kept as its own piece) in parallel, then the element lengths are summed into the
    /// offsets and every decoded piece copies its elements into the one data buffer in parallel,
    /// adjacent elements in one copy.
    pub fn read_region_vlen(&self, start: &[u64], count: &[u64]) -> Result<VlenData> {
        self.check_vlen_region(start, count)?;
        let n = count.iter().try_fold(1u64, |a, &c| a.checked_mul(c));
        let n = n.filter(|&n| n < usize::MAX as u64 / 8).ok_or_else(|| crate::Error::BufferSize("region too large".into()))? as usize;
        if n == 0 {
            return Ok(VlenData { offsets: vec![0], data: Vec::new() });
        }
        let mut offsets = Vec::new();
        crate::error::try_reserve(&mut offsets, n + 1)?;
        offsets.resize(n + 1, 0u64);
        let parts = Selection::dense(start, count).project(self.grid())?;
        let pieces: Vec<VlenPieces> = crate::threads::try_map(&parts, |part| {
            let key = self.chunk_key(&part.chunk);
            let ctx = |e: crate::Error| e.context(self.store.location(&key));
            let chain = self.meta.chain_for(&part.chunk)?;
            let mut pieces = match self.store.get_limited(&key, chunk_limit(&chain)).map_err(ctx)? {
                Some(bytes) => crate::codec::serialize::vlen::decode(&chain, bytes, &part.local).map_err(ctx)?,
                None => VlenPieces::one(
                    &part.local.count,
                    VlenChunk::filled(part.local.num_elements().unwrap_or(0) as usize, &self.meta.fill_value)?,
                ),
            };
            pieces.shift(&part.out);
            Ok(pieces)
        })?;
        // Every decoded piece (a chunk, or an inner chunk of a shard) is placed straight into the result.
        let pieces: Vec<VlenPiece> = pieces.into_iter().flat_map(|p| p.0).collect();
        let zeros = vec![0u64; count.len()];
        for p in &pieces {
            for_each_pair_run(&p.out, &p.count, &zeros, count, |r0, k0, run| {
                for j in 0..run {
                    let (s, e) = p.chunk.spans[k0 + j];
                    offsets[r0 + j + 1] = (e - s) as u64;
                }
            });
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let total = usize::try_from(offsets[n]).map_err(|_| crate::Error::Memory("the region does not fit in memory".into()))?;
        let mut data = crate::error::try_alloc(total)?;
        let dst = RawBuf::new(&mut data);
        let offsets_ref = &offsets;
        crate::threads::try_for_each(&pieces, |p| {
            for_each_pair_run(&p.out, &p.count, &zeros, count, |r0, k0, run| {
                let lo = offsets_ref[r0] as usize;
                // SAFETY: elements r0..r0+run of the region are written by this task only (each lies in
                // exactly one piece), and lie inside `data` (their offsets sum to its size).
                let out = unsafe { dst.slice_mut(lo, offsets_ref[r0 + run] as usize - lo) };
                p.chunk.copy_run(k0, run, out);
            });
            Ok(())
        })?;
        Ok(VlenData { offsets, data })
    }
}
