//! `crc32c` codec (bytes -> bytes): appends the CRC-32C (Castagnoli) of the data, little-endian.
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/crc32c/index.html>
//! v3 name: `crc32c`. No configuration. A mismatch on decode is a checksum error.
//! Example: `{"name": "crc32c"}`

use crate::codec::{BytesToBytesCodec, Config, DecodedSize};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use crate::codec::registry::CodecEntry;
use crate::codec::Codec;

/// The registry entry: v3 `crc32c`.
pub static CODEC: CodecEntry = CodecEntry::v3("crc32c", |_, cfg, _| Ok(Codec::BytesToBytes(Box::new(Crc32cCodec::from_v3(cfg)?))));

/// The `crc32c` codec.
#[derive(Debug, Clone, Default)]
pub struct Crc32cCodec;

impl Crc32cCodec {
    /// Parses the v3 configuration (which must be empty).
    pub fn from_v3(cfg: Option<&Map<String, Value>>) -> Result<Crc32cCodec> {
        Config::new("crc32c", cfg, &[])?;
        Ok(Crc32cCodec)
    }

    /// The payload of `encoded` after verifying its checksum.
    pub fn verify(encoded: &[u8]) -> Result<&[u8]> {
        if encoded.len() < 4 {
            return Err(Error::Codec(format!("crc32c: {} bytes is too short for a checksum", encoded.len())));
        }
        let (payload, tail) = encoded.split_at(encoded.len() - 4);
        let stored = u32::from_le_bytes(tail.try_into().unwrap());
        let actual = crc32c::crc32c(payload);
        if stored != actual {
            return Err(Error::Checksum(format!(
                "crc32c mismatch: stored {stored:#010x}, computed {actual:#010x}"
            )));
        }
        Ok(payload)
    }
}

impl BytesToBytesCodec for Crc32cCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(data.len() + 4);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc32c::crc32c(data).to_le_bytes());
        Ok(out)
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        let payload = Self::verify(encoded)?;
        size.check(payload.len(), "crc32c")?;
        Ok(Cow::Borrowed(payload))
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        let payload = Self::verify(encoded)?;
        DecodedSize::Exact(out.len()).check(payload.len(), "crc32c")?;
        out.copy_from_slice(payload);
        Ok(())
    }

    fn encoded_size(&self, decoded: u64) -> Option<u64> {
        Some(decoded + 4)
    }

    fn to_json(&self) -> Value {
        json!({"name": "crc32c"})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_value_and_mismatch() {
        // CRC-32C check value of "123456789" is 0xE3069283.
        let e = Crc32cCodec.encode(b"123456789").unwrap();
        assert_eq!(&e[9..], &0xE306_9283u32.to_le_bytes());
        assert_eq!(Crc32cCodec.decode(&e, DecodedSize::Exact(9)).unwrap().as_ref(), b"123456789");
        let mut bad = e.clone();
        bad[0] ^= 1;
        assert!(matches!(Crc32cCodec.decode(&bad, DecodedSize::Exact(9)), Err(Error::Checksum(_))));
        assert!(matches!(Crc32cCodec.decode(&e[..3], DecodedSize::AtMost(9)), Err(Error::Codec(_))));
        assert!(Crc32cCodec::from_v3(serde_json::json!({"x": 1}).as_object()).is_err());
        assert_eq!(Crc32cCodec.encoded_size(10), Some(14));
    }
}
