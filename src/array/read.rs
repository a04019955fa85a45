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
    pub fn read_region(&self, start: &[u64], count: &[u64], out: &mut [u8]) -> Result<()> {
        let n = self.check_region(start, count, out.len())?;
        if n == 0 {
            return Ok(());
        }
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
