//! numcodecs `zlib` (bytes -> bytes): RFC 1950 zlib streams (DEFLATE through libdeflate).
//!
//! numcodecs id: `zlib`. Configuration: `{"id": "zlib", "level": 0..9}` (-1: zlib's default, 6).
//! Example: `{"id": "zlib", "level": 1}`

use crate::codec::compress::deflate::{deflate, inflate_into, inflate_to_vec, Framing};
use crate::codec::{BytesToBytesCodec, DecodedSize};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::borrow::Cow;
use crate::codec::numcodecs::bytes_codec;
use crate::codec::registry::{CodecEntry, V1Options};

/// The registry entry: numcodecs `zlib` (default level 1; also a Zarr v1 compression).
pub static CODEC: CodecEntry = CodecEntry::numcodecs(bytes_codec("zlib", |c, _| Ok(Box::new(ZlibCodec::new(c.int("level", -1, 9, Some(1))? as i32)?)), Some(V1Options::Level)));

/// The numcodecs `zlib` codec.
#[derive(Debug, Clone)]
pub struct ZlibCodec {
    level: i32,
}

impl ZlibCodec {
    /// A codec compressing at `level` (-1 means 6).
    pub fn new(level: i32) -> Result<ZlibCodec> {
        let level = if level == -1 { 6 } else { level };
        if !(0..=9).contains(&level) {
            return Err(Error::Metadata(format!("numcodecs 'zlib': level {level} is not in 0..9")));
        }
        Ok(ZlibCodec { level })
    }
}

impl BytesToBytesCodec for ZlibCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        deflate(Framing::Zlib, self.level, data)
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        inflate_to_vec(Framing::Zlib, "zlib", encoded, size).map(Cow::Owned)
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        inflate_into(Framing::Zlib, "zlib", encoded, out, true).map(|_| ())
    }

    fn check_decodable(&self, encoded: &[u8], expected: usize) -> Result<()> {
        crate::codec::compress::deflate::check_decodable("zlib", encoded, expected)
    }

    fn to_json(&self) -> Value {
        json!({"id": "zlib", "level": self.level})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let c = ZlibCodec::new(1).unwrap();
        let d: Vec<u8> = (0..5000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
        let e = c.encode(&d).unwrap();
        assert_eq!(e[0], 0x78);
        let mut out = vec![0; d.len()];
        c.decode_into(&e, &mut out).unwrap();
        assert_eq!(out, d);
        assert!(c.decode_into(&e[..e.len() - 3], &mut out).is_err());
        assert!(ZlibCodec::new(10).is_err());
        assert_eq!(ZlibCodec::new(-1).unwrap().level, 6);
    }
}
