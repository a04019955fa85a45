//! The shard index: `(offset, nbytes)` per inner chunk, encoded with the index codecs at the start or
//! the end of the shard. Entries are validated against the shard's size before any inner chunk is read.

use crate::codec::chain::CodecChain;
use crate::codec::ArrayRepr;
use crate::dtype::DataType;
use crate::error::{Error, Result};
use serde_json::Value;

/// Marker of an empty inner chunk (both offset and nbytes).
pub const EMPTY: u64 = u64::MAX;

/// Where the index lives in the shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexLocation {
    /// Before the inner chunks.
    Start,
    /// After the inner chunks.
    End,
}

/// The index codecs and the fixed size of an encoded index.
#[derive(Debug)]
pub struct IndexCodec {
    chain: CodecChain,
    /// Number of inner chunks per shard.
    pub num_chunks: usize,
    /// Encoded size of the index in bytes.
    pub encoded_size: u64,
    /// Where the index is stored.
    pub location: IndexLocation,
}

/// One inner chunk's place in the shard, or `None` when the chunk is empty.
pub type Entry = Option<(u64, u64)>;

impl IndexCodec {
    /// Builds the index codec chain for `chunks_per_shard` from the v3 `index_codecs` list.
    pub fn new(index_codecs: &Value, chunks_per_shard: &[u64], location: IndexLocation) -> Result<IndexCodec> {
        let mut shape = chunks_per_shard.to_vec();
        shape.push(2);
        let repr = ArrayRepr { shape, data_type: DataType::UInt64, fill_value: EMPTY.to_ne_bytes().to_vec() };
        let chain = CodecChain::from_v3(index_codecs, &repr)
            .map_err(|e| e.context("codec 'sharding_indexed': index_codecs"))?;
        let encoded_size = chain.encoded_size_fixed().ok_or_else(|| {
            Error::Metadata(
                "codec 'sharding_indexed': index_codecs must have a fixed encoded size (no compression)".into(),
            )
        })?;
        let num_chunks = chunks_per_shard.iter().product::<u64>() as usize;
        Ok(IndexCodec { chain, num_chunks, encoded_size, location })
    }

    /// The byte range of the index within a shard of `shard_len` bytes.
    pub fn range_in(&self, shard_len: u64) -> Result<(u64, u64)> {
        if shard_len < self.encoded_size {
            return Err(Error::Codec(format!(
                "shard of {shard_len} bytes is shorter than its {} byte index",
                self.encoded_size
            )));
        }
        Ok(match self.location {
            IndexLocation::Start => (0, self.encoded_size),
            IndexLocation::End => (shard_len - self.encoded_size, self.encoded_size),
        })
    }

    /// Decodes an index and checks every entry against a shard of `shard_len` bytes: each non-empty
    /// chunk lies inside the shard and outside the index.
    pub fn decode(&self, bytes: &[u8], shard_len: u64) -> Result<Vec<Entry>> {
        let mut raw = crate::error::try_alloc(self.num_chunks * 16)?;
        self.chain.decode_chunk(bytes, &mut raw).map_err(|e| e.context("shard index"))?;
        let (index_start, index_len) = self.range_in(shard_len)?;
        let index_end = index_start + index_len;
        let mut entries = Vec::with_capacity(self.num_chunks);
        for (i, pair) in raw.chunks_exact(16).enumerate() {
            let offset = u64::from_ne_bytes(pair[..8].try_into().unwrap());
            let nbytes = u64::from_ne_bytes(pair[8..].try_into().unwrap());
            if offset == EMPTY && nbytes == EMPTY {
                entries.push(None);
                continue;
            }
            let end = offset.checked_add(nbytes).filter(|&e| e <= shard_len).ok_or_else(|| {
                Error::Codec(format!(
                    "shard index entry {i} (offset {offset}, nbytes {nbytes}) points outside the shard of {shard_len} bytes"
                ))
            })?;
            if nbytes > 0 && offset < index_end && end > index_start {
                return Err(Error::Codec(format!(
                    "shard index entry {i} (offset {offset}, nbytes {nbytes}) overlaps the index"
                )));
            }
            entries.push(Some((offset, nbytes)));
        }
        Ok(entries)
    }

    /// Fails when two non-empty entries overlap.
    pub fn check_disjoint(entries: &[Entry]) -> Result<()> {
        let mut spans: Vec<(u64, u64, usize)> =
            entries.iter().enumerate().filter_map(|(i, e)| e.filter(|e| e.1 > 0).map(|(o, n)| (o, o + n, i))).collect();
        spans.sort_unstable();
        for w in spans.windows(2) {
            if w[1].0 < w[0].1 {
                return Err(Error::Codec(format!(
                    "shard index entries {} and {} overlap (bytes {}..{} and {}..{})",
                    w[0].2, w[1].2, w[0].0, w[0].1, w[1].0, w[1].1
                )));
            }
        }
        Ok(())
    }

    /// Encodes entries into index bytes.
    pub fn encode(&self, entries: &[Entry]) -> Result<Vec<u8>> {
        let mut raw = Vec::with_capacity(entries.len() * 16);
        for e in entries {
            let (o, n) = e.unwrap_or((EMPTY, EMPTY));
            raw.extend_from_slice(&o.to_ne_bytes());
            raw.extend_from_slice(&n.to_ne_bytes());
        }
        let out = self.chain.encode_chunk(&raw)?.into_owned();
        debug_assert_eq!(out.len() as u64, self.encoded_size);
        Ok(out)
    }

    /// The `index_codecs` list.
    pub fn to_json(&self) -> Value {
        self.chain.to_json()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn codec(loc: IndexLocation) -> IndexCodec {
        IndexCodec::new(&json!([{"name": "bytes", "configuration": {"endian": "little"}}, "crc32c"]), &[2, 2], loc).unwrap()
    }

    #[test]
    fn size_and_round_trip() {
        let c = codec(IndexLocation::End);
        assert_eq!(c.encoded_size, 4 * 16 + 4);
        let entries = vec![Some((0, 10)), None, Some((10, 0)), Some((10, 5))];
        let bytes = c.encode(&entries).unwrap();
        assert_eq!(c.decode(&bytes, 15 + 68).unwrap(), entries);
        IndexCodec::check_disjoint(&entries).unwrap();
    }

    #[test]
    fn hostile_entries() {
        let c = codec(IndexLocation::End);
        let bytes = c.encode(&[Some((0, 100)), None, None, None]).unwrap();
        assert!(matches!(c.decode(&bytes, 50 + 68), Err(Error::Codec(_))), "beyond the end");
        let bytes = c.encode(&[Some((u64::MAX - 1, 2)), None, None, None]).unwrap();
        assert!(matches!(c.decode(&bytes, 50 + 68), Err(Error::Codec(_))), "overflowing end");
        let bytes = c.encode(&[Some((40, 20)), None, None, None]).unwrap();
        assert!(matches!(c.decode(&bytes, 50 + 68), Err(Error::Codec(_))), "into the index");
        let mut bad = c.encode(&[None, None, None, None]).unwrap();
        bad[3] ^= 1;
        assert!(matches!(c.decode(&bad, 68), Err(Error::Checksum(_))), "index checksum");
        assert!(c.range_in(10).is_err(), "shard shorter than its index");
        assert!(IndexCodec::check_disjoint(&[Some((0, 10)), Some((5, 10))]).is_err());
        assert!(IndexCodec::check_disjoint(&[Some((0, 10)), Some((10, 10)), Some((10, 0))]).is_ok());
    }

    #[test]
    fn variable_size_index_codecs_refused() {
        let e = IndexCodec::new(&json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}]), &[2], IndexLocation::End);
        assert!(matches!(e, Err(Error::Metadata(_))));
    }
}
