//! Region writes. Chunks only partly covered by the region are first read and decoded (all of them,
//! before anything is stored, so a corrupt chunk fails the call without changing the array); then every
//! touched chunk is merged, encoded and stored in parallel. A chunk equal to the fill value everywhere
//! is not stored (an existing one is deleted). Edge chunks are stored at full size, with the fill value
//! outside the array. A fully covered chunk that is one contiguous run of the caller's buffer is encoded
//! straight from it.

use super::Array;
use crate::codec::ArrayToBytesCodec;
use crate::dtype::SwapPlan;
use crate::error::{try_alloc, Result};
use crate::region::{copy_box, fill_elements, Layout, RawBuf};
use crate::scratch::with_decoded;
use std::collections::HashMap;
use std::sync::Mutex;

impl Array {
    /// Writes `data` (C order, native-endian, exactly the region's size) to the region `start..start+count`.
    pub fn write_region(&self, start: &[u64], count: &[u64], data: &[u8]) -> Result<()> {
        self.check_writable()?;
        let n = self.check_region(start, count, data.len())?;
        if n == 0 {
            return Ok(());
        }
        let chunks = self.chunks_of(start, count);
        // Phase 1: decode the chunks the region covers only in part.
        let partial: Vec<&[u64]> =
            chunks.iter().map(Vec::as_slice).filter(|ci| !self.covers_chunk(ci, start, count)).collect();
        let decoded = crate::threads::try_map(&partial, |ci| {
            let mut buf = try_alloc(self.chunk_nbytes())?;
            self.read_chunk(ci, &mut buf)?;
            Ok(Mutex::new(Some(buf)))
        })?;
        let existing: HashMap<&[u64], Mutex<Option<Vec<u8>>>> = partial.into_iter().zip(decoded).collect();
        // Phase 2: merge, encode, store.
        crate::threads::try_for_each(&chunks, |ci| {
            let buf = existing.get(ci.as_slice()).and_then(|m| m.lock().unwrap().take());
            self.write_chunk_part(ci, start, count, data, buf)
        })
    }

    fn chunk_nbytes(&self) -> usize {
        self.meta.codecs.decoded_repr().nbytes()
    }

    /// Whether the region covers every element of chunk `ci` that lies inside the array.
    fn covers_chunk(&self, ci: &[u64], start: &[u64], count: &[u64]) -> bool {
        let cs = self.meta.chunk_shape();
        let shape = &self.meta.shape;
        (0..cs.len()).all(|d| {
            let origin = ci[d] * cs[d];
            let end = origin.saturating_add(cs[d]).min(shape[d]);
            start[d] <= origin && start[d] + count[d] >= end
        })
    }

    fn write_chunk_part(
        &self,
        ci: &[u64],
        start: &[u64],
        count: &[u64],
        data: &[u8],
        existing: Option<Vec<u8>>,
    ) -> Result<()> {
        let (local, within, n) = self.intersect(ci, start, count);
        let cs = self.meta.chunk_shape();
        let elem = self.meta.data_type.size();
        let key = self.chunk_key(ci);
        let chain = &self.meta.codecs;
        let repr = chain.decoded_repr();
        let mut sink = |encoded: Option<crate::codec::Parts>| -> Result<()> {
            match encoded {
                None => self.store.delete(&key),
                Some(parts) => {
                    let slices: Vec<&[u8]> = parts.iter().map(|p| p.as_ref()).collect();
                    self.store.set_parts(&key, &slices)
                }
            }
        };
        let ctx = |e: crate::Error| e.context(self.store.location(&key));
        let src_layout = Layout { shape: count, elem };
        let zeros = vec![0; cs.len()];
        let encode = |src: &[u8], layout: Layout, start: &[u64], sink: crate::codec::Sink| {
            if self.meta.fill_defined {
                chain.encode_box(src, layout, start, repr, sink)
            } else {
                // No fill value: every chunk is stored, whatever it holds.
                crate::codec::with_box(src, layout, start, repr, |data| sink(Some(vec![chain.encode_chunk(data)?])))
            }
        };
        if existing.is_none() && n == cs {
            // Fully covered: encode straight from the caller's buffer.
            return encode(data, src_layout, &within, &mut sink).map_err(ctx);
        }
        // Otherwise the region is merged into a whole-chunk buffer first.
        let chunk_layout = Layout { shape: cs, elem };
        let merge_and_encode = |chunk: &mut [u8], sink: crate::codec::Sink| {
            copy_box(data, src_layout, &within, 0, RawBuf::new(chunk), chunk_layout, &local, &n, &SwapPlan::identity());
            encode(chunk, chunk_layout, &zeros, sink)
        };
        match existing {
            Some(mut chunk) => merge_and_encode(&mut chunk, &mut sink).map_err(ctx),
            None => with_decoded(self.chunk_nbytes(), |chunk| {
                // An edge chunk covered in full: the part outside the array holds the fill value.
                fill_elements(chunk, &self.meta.fill_value);
                merge_and_encode(chunk, &mut sink)
            })
            .map_err(ctx),
        }
    }
}
