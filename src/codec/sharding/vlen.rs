//! Shards of variable-length elements: each inner chunk goes through the inner chain with
//! [`crate::codec::serialize::vlen::decode`] / [`crate::codec::serialize::vlen::encode`] (so an inner chain that is itself
//! sharded nests). Reads decode only the inner chunks a box touches, in parallel; writes encode every
//! inner chunk in parallel and leave out those equal to the fill value everywhere.

use super::ShardingCodec;
use crate::codec::serialize::vlen::{decode, encode};
use crate::error::Result;
use crate::selection::vlen::{VlenChunk, VlenPieces};
use crate::selection::{for_each_index, for_each_pair_run, Selection};
use crate::store::SliceSource;

impl ShardingCodec {
    /// Decodes the box `sel` (dense, shard-local) of the shard `bytes` of variable-length elements, as
    /// the decoded pieces of the inner chunks it touches (placed in the box, not assembled).
    pub(crate) fn decode_vlen(&self, bytes: &[u8], sel: &Selection) -> Result<VlenPieces> {
        let entries = self.read_index(&SliceSource(bytes))?;
        let parts = sel.project(&self.inner_grid)?;
        let fill = &self.inner.decoded_repr().fill_value;
        let pieces = crate::threads::try_map(&parts, |part| {
            let mut pieces = match entries[self.linear(&part.chunk)] {
                None => VlenPieces::one(&part.local.count, VlenChunk::filled(part.local.num_elements().unwrap_or(0) as usize, fill)?),
                Some((o, len)) => decode(&self.inner, bytes[o as usize..(o + len) as usize].to_vec(), &part.local)
                    .map_err(|e| e.context(format!("inner chunk {:?}", part.chunk)))?,
            };
            pieces.shift(&part.out);
            Ok(pieces)
        })?;
        Ok(VlenPieces(pieces.into_iter().flat_map(|p| p.0).collect()))
    }

    /// Encodes a shard of `shape` whose elements (C order) are `elems`.
    pub(crate) fn encode_vlen(&self, elems: &[&[u8]], shape: &[u64]) -> Result<Vec<u8>> {
        let mut indices = Vec::with_capacity(self.index.num_chunks);
        for_each_index(&self.chunks_per_shard.iter().map(|&n| (0, n - 1)).collect::<Vec<_>>(), |i| indices.push(i.to_vec()));
        let fill = &self.inner.decoded_repr().fill_value[..];
        let n_inner = self.inner_shape.iter().product::<u64>() as usize;
        let zeros = vec![0u64; shape.len()];
        let encoded: Vec<Option<Vec<u8>>> = crate::threads::try_map(&indices, |ci| {
            let origin: Vec<u64> = ci.iter().zip(&self.inner_shape).map(|(i, s)| i * s).collect();
            let mut inner: Vec<&[u8]> = vec![fill; n_inner];
            for_each_pair_run(&origin, &self.inner_shape, &zeros, shape, |r0, k0, run| {
                inner[k0..k0 + run].copy_from_slice(&elems[r0..r0 + run])
            });
            if inner.iter().all(|e| *e == fill) {
                return Ok(None);
            }
            encode(&self.inner, &inner).map(Some)
        })?;
        Ok(crate::codec::join_parts(self.layout_parts(&encoded)?))
    }
}
