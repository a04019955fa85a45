//! Helpers shared by the Rust integration tests (`mod common;` in each test file): array metadata
//! documents, the committed fixtures' directory, and C-order index iteration.
// Each test crate uses a subset of these.
#![allow(dead_code)]

pub mod capped;

use serde_json::{json, Value};
use std::path::PathBuf;

/// The committed fixtures, `tests/fixtures` of this repository.
pub fn fixtures_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures")
}

/// A Zarr v3 `zarr.json` array document (regular grid, default chunk keys with `/`, no attributes).
pub fn v3_array(shape: &[u64], chunks: &[u64], dtype: impl Into<Value>, fill: Value, codecs: Value) -> String {
    json!({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype.into(),
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill, "codecs": codecs, "attributes": {}
    })
    .to_string()
}

/// The `bytes` codec with `endian` ("little" or "big").
pub fn bytes_codec(endian: &str) -> Value {
    json!({"name": "bytes", "configuration": {"endian": endian}})
}

/// A `sharding_indexed` codec: inner chunks of `inner` encoded by `codecs`, the index (little-endian
/// bytes + crc32c) at `index_location` ("start" or "end").
pub fn sharding_codec(inner: &[u64], codecs: Value, index_location: &str) -> Value {
    json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner, "codecs": codecs,
        "index_codecs": [bytes_codec("little"), {"name": "crc32c"}],
        "index_location": index_location}})
}

/// Calls `f` with every index of the box `start .. start + count`, in C order (last dimension
/// fastest); nothing when an extent is 0.
pub fn for_each_index(start: &[u64], count: &[u64], mut f: impl FnMut(&[u64])) {
    let rank = start.len();
    let total: u64 = count.iter().product();
    let mut idx = start.to_vec();
    for _ in 0..total {
        f(&idx);
        for d in (0..rank).rev() {
            idx[d] += 1;
            if idx[d] < start[d] + count[d] {
                break;
            }
            idx[d] = start[d];
        }
    }
}
