//! `zz_test` (bytes -> bytes, crate tests only): XORs every byte with `key`. It exists to show that a
//! codec is added by its own file plus one registration line (`registry::TEST_CODECS`): the tests
//! `spec::test_codec_round_trip` (at the top floor, since they go through arrays and the spec API)
//! round-trip data through it in Zarr v2 (`compressor` and `filters`), Zarr v3 (`zz_test` and
//! `numcodecs.zz_test`) and the spec API without any other file naming it.
//!
//! v3 name and numcodecs id: `zz_test`. Configuration: `key` (0-255, default 90). Spec API:
//! `zz_test`, the level being the key.

use super::registry::{CodecEntry, Numcodecs, SpecCompressor, UnderV3, V2Build};
use super::{BytesToBytesCodec, Codec, Config, DecodedSize};
use crate::error::Result;
use serde_json::{json, Value};
use std::borrow::Cow;

/// The registry entry.
pub static CODEC: CodecEntry = CodecEntry {
    name: Some("zz_test"),
    from_v3: Some(|_, cfg, _| {
        let c = Config::new("zz_test", cfg, &["key"])?;
        Ok(Codec::BytesToBytes(Box::new(XorCodec { key: c.int("key", 0, 255, Some(90))? as u8 })))
    }),
    numcodecs: Some(Numcodecs {
        id: "zz_test",
        build: V2Build::Compressor(|c, _| Ok(Box::new(XorCodec { key: c.int("key", 0, 255, Some(90))? as u8 }))),
        under_v3: Some(UnderV3::BytesToBytes),
        v3_defaults: None,
        elementwise: true,
        v1: None,
    }),
    spec: Some(SpecCompressor {
        variants: &[],
        levels: (0, 255),
        default_level: 90,
        shuffles: false,
        build: |_, level, _, _| Ok(Box::new(XorCodec { key: level as u8 })),
    }),
    ..CodecEntry::NONE
};

/// The `zz_test` codec.
#[derive(Debug)]
pub struct XorCodec {
    key: u8,
}

impl BytesToBytesCodec for XorCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        Ok(data.iter().map(|b| b ^ self.key).collect())
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        size.check(encoded.len(), "zz_test")?;
        Ok(Cow::Owned(self.encode(encoded)?))
    }

    fn encoded_size(&self, decoded: u64) -> Option<u64> {
        Some(decoded)
    }

    fn to_json(&self) -> Value {
        json!({"name": "zz_test", "configuration": {"key": self.key}})
    }
}
