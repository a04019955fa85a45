//! `gzip` codec (bytes -> bytes): RFC 1952 gzip streams (DEFLATE through libdeflate, see [`crate::codec::compress::deflate`]).
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/gzip/index.html>
//! v3 name: `gzip`; numcodecs id: `gzip`. Configuration: `{"level": 0..9}`.
//! Example: `{"name": "gzip", "configuration": {"level": 5}}`
//!
//! Decoding accepts concatenated gzip members and decodes straight into the destination when the
//! decoded size is known. Every member's CRC-32 is verified.

use crate::codec::compress::deflate::{deflate, inflate_into, inflate_to_vec, Framing};
use crate::codec::numcodecs::bytes_codec;
use crate::codec::registry::{Alias, CodecEntry, SpecCompressor};
use crate::codec::{BytesToBytesCodec, Codec, Config, DecodedSize};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use std::borrow::Cow;

/// URI name of gzip in the 2020 codec draft (accepted as an alias of `gzip`, with the v3
/// configuration).
pub const URI: &str = "https://purl.org/zarr/spec/codec/gzip";

/// The registry entry: v3 `gzip` (and its draft URI), numcodecs `gzip` (level -1..9, -1 meaning 0
/// as numcodecs clamps it), spec API `gzip` (levels 0-9, default 6).
pub static CODEC: CodecEntry = CodecEntry {
    name: Some("gzip"),
    aliases: &[Alias { name: URI, numcodecs_config: false }],
    from_v3: Some(|_, cfg, _| Ok(Codec::BytesToBytes(Box::new(GzipCodec::from_v3(cfg)?)))),
    numcodecs: bytes_codec(
        "gzip",
        |c, _| Ok(Box::new(GzipCodec::new(c.int("level", -1, 9, Some(1))?.clamp(0, 9) as u32)?)),
        None,
    ),
    spec: Some(SpecCompressor {
        variants: &[],
        levels: (0, 9),
        default_level: 6,
        shuffles: false,
        build: |_, level, _, _| Ok(Box::new(GzipCodec::new(level as u32)?)),
    }),
    ..CodecEntry::NONE
};

/// The `gzip` codec.
#[derive(Debug, Clone)]
pub struct GzipCodec {
    level: u32,
}

impl GzipCodec {
    /// A codec compressing at `level` (0-9).
    pub fn new(level: u32) -> Result<GzipCodec> {
        if level > 9 {
            return Err(Error::Metadata(format!("codec 'gzip': level {level} is not in 0..9")));
        }
        Ok(GzipCodec { level })
    }

    /// Parses the v3 configuration.
    pub fn from_v3(cfg: Option<&Map<String, Value>>) -> Result<GzipCodec> {
        let c = Config::new("gzip", cfg, &["level"])?;
        GzipCodec::new(c.int("level", 0, 9, None)? as u32)
    }
}

impl BytesToBytesCodec for GzipCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        deflate(Framing::Gzip, self.level as i32, data)
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        inflate_to_vec(Framing::Gzip, "gzip", encoded, size).map(Cow::Owned)
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        inflate_into(Framing::Gzip, "gzip", encoded, out, true).map(|_| ())
    }

    fn check_decodable(&self, encoded: &[u8], expected: usize) -> Result<()> {
        crate::codec::compress::deflate::check_decodable("gzip", encoded, expected)
    }

    fn to_json(&self) -> Value {
        json!({"name": "gzip", "configuration": {"level": self.level}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_sizes() {
        let c = GzipCodec::new(5).unwrap();
        let d: Vec<u8> = (0..10000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
        let e = c.encode(&d).unwrap();
        assert!(e.len() < d.len());
        assert_eq!(&e[..2], &[0x1f, 0x8b]);
        let mut out = vec![0; d.len()];
        c.decode_into(&e, &mut out).unwrap();
        assert_eq!(out, d);
        assert_eq!(c.decode(&e, DecodedSize::AtMost(1 << 20)).unwrap().as_ref(), &d[..]);
        assert!(c.decode(&e, DecodedSize::AtMost(100)).is_err());
        let mut out = vec![0; d.len()];
        assert!(matches!(c.decode_into(&e[..e.len() / 2], &mut out), Err(Error::Codec(_))));
        assert!(matches!(c.decode_into(b"not gzip at all", &mut out), Err(Error::Codec(_))));
    }

    #[test]
    fn config() {
        assert!(GzipCodec::from_v3(None).is_err());
        assert!(GzipCodec::from_v3(serde_json::json!({"level": 10}).as_object()).is_err());
        assert!(GzipCodec::from_v3(serde_json::json!({"level": 1, "x": 0}).as_object()).is_err());
        assert_eq!(GzipCodec::from_v3(serde_json::json!({"level": 0}).as_object()).unwrap().level, 0);
    }
}
