//! Region reads: every chunk the region touches is decoded in parallel, straight into the caller's
//! buffer when the chunk is one contiguous run of it, otherwise through per-thread scratch buffers.
//! Chains without compression (plain `bytes`, or sharding) read only the byte ranges they need.
//! Missing chunks become the fill value.

use super::Array;
use crate::codec::{ArrayToBytesCodec, Dest};
use crate::error::Result;
use crate::region::{contiguous_span, fill_box, Layout, RawBuf};
use crate::scratch::with_encoded;

impl Array {
    /// Reads the region `start..start+count` into `out` (C order, native-endian, exactly the region's size).
    /// A destination of 8 MiB or more is advised to use transparent huge pages (as numpy does for its
    /// large arrays): when it is freshly allocated, the kernel then faults it in 2 MiB at a time.
    /// `ZARR_HUGEPAGES=0` in the environment turns this off.
    pub fn read_region(&self, start: &[u64], count: &[u64], out: &mut [u8]) -> Result<()> {
        let n = self.check_region(start, count, out.len())?;
        if n == 0 {
            return Ok(());
        }
        advise_huge_pages(out);
        let chunks = self.chunks_of(start, count);
        let dest = RawBuf::new(out);
        crate::threads::try_for_each(&chunks, |ci| self.read_chunk_part(ci, start, count, dest))
    }

    /// Decodes the part of chunk `ci` inside the region into `dest` (the region's buffer).
    fn read_chunk_part(&self, ci: &[u64], start: &[u64], count: &[u64], dest: RawBuf) -> Result<()> {
        let (local, within, n) = self.intersect(ci, start, count);
        let key = self.chunk_key(ci);
        let chain = &self.meta.codecs;
        let dest_layout = Layout { shape: count, elem: self.meta.data_type.size() };
        let fill = || fill_box(dest, dest_layout, &within, &n, &self.meta.fill_value);
        let region = Dest { buf: dest, shape: count, start: &within };
        // The whole chunk as one run of the destination: decode into it directly.
        let direct = if n == self.meta.chunk_shape() { contiguous_span(dest_layout, &within, &n) } else { None };
        let ctx = |e: crate::Error| e.context(self.store.location(&key));
        if chain.is_bare() && direct.is_none() {
            let Some(src) = self.store.open(&key)? else {
                fill();
                return Ok(());
            };
            return chain.partial_decode(src.as_ref(), chain.decoded_repr(), &local, &n, region).map_err(ctx);
        }
        with_encoded(|encoded| {
            if !self.store.get_into(&key, encoded)? {
                fill();
                return Ok(());
            }
            if let Some((off, len)) = direct {
                // SAFETY: this chunk's box of the destination is written by this task only.
                let out = unsafe { dest.slice_mut(off, len) };
                return chain.decode_chunk(encoded, out);
            }
            chain.decode_region(encoded, &local, &n, region)
        })
        .map_err(ctx)
    }

}

/// Asks for transparent huge pages on the page-aligned interior of a large buffer (a hint; errors such
/// as a file-backed mapping are ignored).
fn advise_huge_pages(buf: &mut [u8]) {
    const MIN: usize = 8 << 20;
    const PAGE: usize = 4096;
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let enabled = *ENABLED.get_or_init(|| std::env::var("ZARR_HUGEPAGES").map(|v| v != "0").unwrap_or(true));
    if !enabled || buf.len() < MIN {
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
    /// Decodes the whole chunk `ci` into `out` (the chunk's decoded size); `false` when it is missing
    /// (then `out` holds the fill value).
    pub fn read_chunk(&self, ci: &[u64], out: &mut [u8]) -> Result<bool> {
        let key = self.chunk_key(ci);
        with_encoded(|encoded| {
            if !self.store.get_into(&key, encoded)? {
                crate::region::fill_elements(out, &self.meta.fill_value);
                return Ok(false);
            }
            self.meta.codecs.decode_chunk(encoded, out)?;
            Ok(true)
        })
        .map_err(|e| e.context(self.store.location(&key)))
    }
}
