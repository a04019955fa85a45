//! `zz_test` (bytes -> bytes, crate tests only): XORs every byte with `key`. It exists to show that a
//! codec is added by its own file plus one registration line (`registry::TEST_CODECS`): the test
//! below round-trips data through it in Zarr v2 (`compressor` and `filters`), Zarr v3 (`zz_test` and
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

#[cfg(test)]
mod tests {
    use crate::dtype::DataType;
    use crate::spec::{ArraySpec, Compressor};
    use crate::store::memory::MemoryStore;
    use crate::store::Store;
    use crate::Array;
    use serde_json::json;
    use std::sync::Arc;

    fn values() -> Vec<i32> {
        (0..10).map(|i| i * 1000 - 4321).collect()
    }

    /// Writes `values()` to `a` (one chunk of 10), checks the stored chunk `key` against the
    /// little-endian values XORed with `xor`, and reads them back.
    fn round_trip(store: &Arc<MemoryStore>, a: &Array, key: &str, xor: u8) {
        let v = values();
        let data: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
        a.write_region(&[0], &[10], &data).unwrap();
        let expected: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).map(|b| b ^ xor).collect();
        assert_eq!(store.get(key).unwrap().unwrap(), expected, "{key}");
        let mut out = vec![0u8; 40];
        a.read_region(&[0], &[10], &mut out).unwrap();
        assert_eq!(out, data);
        let reopened = Array::open(store.clone(), "", false).unwrap();
        let mut out = vec![0u8; 40];
        reopened.read_region(&[0], &[10], &mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn v2_compressor_and_filter() {
        let store = Arc::new(MemoryStore::new());
        let doc = json!({"zarr_format": 2, "shape": [10], "chunks": [10], "dtype": "<i4", "fill_value": 0, "order": "C",
                         "filters": [{"id": "zz_test", "key": 3}], "compressor": {"id": "zz_test", "key": 7}});
        let a = Array::create(store.clone(), "", &doc.to_string()).unwrap();
        round_trip(&store, &a, "0", 3 ^ 7);
    }

    #[test]
    fn v3_name_and_numcodecs_name() {
        let store = Arc::new(MemoryStore::new());
        let codecs = json!([{"name": "bytes", "configuration": {"endian": "little"}},
                            {"name": "zz_test", "configuration": {"key": 5}},
                            {"name": "numcodecs.zz_test", "configuration": {"key": 9}}]);
        let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [10], "data_type": "int32",
                         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10]}},
                         "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs});
        let a = Array::create(store.clone(), "", &doc.to_string()).unwrap();
        round_trip(&store, &a, "c/0", 5 ^ 9);
        let stored: serde_json::Value = serde_json::from_slice(&store.get("zarr.json").unwrap().unwrap()).unwrap();
        assert_eq!(stored["codecs"], codecs);
    }

    #[test]
    fn spec_api() {
        for format in [2, 3] {
            let store = Arc::new(MemoryStore::new());
            let mut s = ArraySpec::new(DataType::Int32, &[10]).unwrap();
            s.set_chunks(&[10]).unwrap();
            s.set_zarr_format(format).unwrap();
            s.compressor = Compressor::parse("zz_test", Some(17)).unwrap();
            let a = s.create(store.clone(), "").unwrap();
            round_trip(&store, &a, if format == 2 { "0" } else { "c/0" }, 17);
            let doc = s.document(format as u8).unwrap();
            if format == 2 {
                assert_eq!(doc["compressor"], json!({"id": "zz_test", "key": 17}));
            } else {
                assert_eq!(doc["codecs"][1], json!({"name": "zz_test", "configuration": {"key": 17}}));
            }
        }
        assert!(Compressor::parse("zz_test", Some(256)).is_err());
    }
}
