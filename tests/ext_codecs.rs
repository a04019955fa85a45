//! scale_offset and cast_value through the Rust API: chains with sharding, edge-chunk padding and
//! missing inner chunks holding the encoded fill value, value errors on write and read, and fill
//! values that cannot be encoded refused at open. (Byte-exact interop with zarr-python 3.4.2:
//! tests/fixtures (cases of kind v3-ext-codec, read by tests/fixtures.rs) and
//! tests/interop/test_ext_codecs_roundtrip.py.)

mod common;

use common::{bytes_codec, v3_array};
use serde_json::json;
use std::sync::Arc;
use zarr::store::memory::MemoryStore;
use zarr::store::Store;
use zarr::{Array, Error};

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn le_i16(b: &[u8]) -> Vec<i16> {
    b.chunks(2).map(|c| i16::from_le_bytes([c[0], c[1]])).collect()
}

#[test]
fn edge_chunk_padding_holds_the_encoded_fill_value() {
    // float64 fill 5.0 -> scale_offset (x - 2) * 10 = 30 -> int16 30
    let store = Arc::new(MemoryStore::new());
    let codecs = json!([{"name": "scale_offset", "configuration": {"offset": 2, "scale": 10}},
                        {"name": "cast_value", "configuration": {"data_type": "int16"}}, bytes_codec("little")]);
    let a = Array::create(store.clone(), "", &v3_array(&[5], &[4], "float64", json!(5.0), codecs)).unwrap();
    a.write_region(&[0], &[5], &f64s(&[1.0, 2.5, -3.0, 2.0, 4.25])).unwrap();
    assert_eq!(le_i16(&store.get("c/1").unwrap().unwrap()), [22, 30, 30, 30]);
    assert_eq!(le_i16(&store.get("c/0").unwrap().unwrap()), [-10, 5, -50, 0]);
    let mut out = vec![0u8; 40];
    a.read_region(&[0], &[5], &mut out).unwrap();
    // 4.25 -> 22.5 -> nearest-even 22 -> 4.2; 2.5 -> 5 -> 2.5
    assert_eq!(out, f64s(&[1.0, 2.5, -3.0, 2.0, 4.2]));
}

#[test]
fn sharding_inside_and_outside() {
    for (name, codecs) in [
        (
            "inner",
            json!([{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [2, 2], "index_codecs": [bytes_codec("little"), {"name": "crc32c"}],
                "codecs": [{"name": "scale_offset", "configuration": {"offset": 100, "scale": 2}},
                           {"name": "cast_value", "configuration": {"data_type": "int16"}}, bytes_codec("little")]}}]),
        ),
        (
            "outer",
            json!([{"name": "scale_offset", "configuration": {"offset": 100, "scale": 2}},
                   {"name": "cast_value", "configuration": {"data_type": "int16"}},
                   {"name": "sharding_indexed", "configuration": {
                       "chunk_shape": [2, 2], "index_codecs": [bytes_codec("little"), {"name": "crc32c"}], "codecs": [bytes_codec("little")]}}]),
        ),
    ] {
        let store = Arc::new(MemoryStore::new());
        let a = Array::create(store.clone(), "", &v3_array(&[5, 4], &[4, 4], "float32", json!(0.0), codecs)).unwrap();
        // only the top-left inner chunk of shard 0 and the edge shard's first row are written
        let v: Vec<u8> = [1.0f32, 2.0, 3.0, 4.5].iter().flat_map(|x| x.to_ne_bytes()).collect();
        a.write_region(&[0, 0], &[2, 2], &v).unwrap();
        a.write_region(&[4, 0], &[1, 4], &v).unwrap();
        let mut out = vec![0u8; 80];
        a.read_region(&[0, 0], &[5, 4], &mut out).unwrap();
        let got: Vec<f32> = out.chunks(4).map(|c| f32::from_ne_bytes(c.try_into().unwrap())).collect();
        let mut want = vec![0.0f32; 20];
        want[..2].copy_from_slice(&[1.0, 2.0]);
        want[4..6].copy_from_slice(&[3.0, 4.5]);
        want[16..].copy_from_slice(&[1.0, 2.0, 3.0, 4.5]);
        assert_eq!(got, want, "{name}");
        // the inner chunks left at the fill value are not stored: shard 0 holds one inner chunk of
        // 4 int16 (8 bytes) + a 4-entry index (64 bytes) + crc32c
        let shard = store.get("c/0/0").unwrap().unwrap();
        assert_eq!(shard.len(), 8 + 64 + 4, "{name}");
        // (x - 100) * 2 for 1, 2, 3, 4.5
        assert_eq!(le_i16(&shard[..8]), [-198, -196, -194, -191], "{name}");
        // the edge shard pads with the encoded fill (0 - 100) * 2 = -200 only where the inner chunk
        // is partly written: inner chunks (0,0) and (0,1) of shard (1,0), rows 4 and 5 (5 is padding)
        let edge = store.get("c/1/0").unwrap().unwrap();
        assert_eq!(le_i16(&edge[..8]), [-198, -196, -200, -200], "{name}");
        assert_eq!(le_i16(&edge[8..16]), [-194, -191, -200, -200], "{name}");
    }
}

#[test]
fn value_errors_on_write_and_read() {
    let store = Arc::new(MemoryStore::new());
    let codecs = json!([{"name": "cast_value", "configuration": {"data_type": "uint8"}}, bytes_codec("little")]);
    let a = Array::create(store.clone(), "", &v3_array(&[4], &[2], "float64", json!(0.0), codecs)).unwrap();
    a.write_region(&[0], &[2], &f64s(&[1.0, 2.0])).unwrap();
    for bad in [256.0, -1.0, f64::NAN, f64::INFINITY, -0.6] {
        let e = a.write_region(&[0], &[2], &f64s(&[7.0, bad])).unwrap_err();
        assert!(matches!(e, Error::Value(_)), "{bad}: {e}");
        assert_eq!(store.get("c/0").unwrap().unwrap(), [1, 2], "{bad}");
    }
    // a stored value the decoder cannot map back (int16 300 -> int8) is a value error on read
    let store = Arc::new(MemoryStore::new());
    let codecs = json!([{"name": "cast_value", "configuration": {"data_type": "int16"}}, bytes_codec("little")]);
    let a = Array::create(store.clone(), "", &v3_array(&[4], &[2], "int8", json!(0), codecs)).unwrap();
    store.set("c/1", &[44, 1, 5, 0]).unwrap();
    let mut out = vec![0u8; 4];
    assert!(matches!(a.read_region(&[0], &[4], &mut out), Err(Error::Value(m)) if m.contains("300")));
    a.read_region(&[0], &[2], &mut out[..2]).unwrap();
    assert_eq!(out[..2], [0, 0]);
    // scale_offset: a stored value with a remainder
    let store = Arc::new(MemoryStore::new());
    let codecs = json!([{"name": "scale_offset", "configuration": {"scale": 4}}, bytes_codec("little")]);
    let a = Array::create(store.clone(), "", &v3_array(&[2], &[2], "int32", json!(0), codecs)).unwrap();
    store.set("c/0", &[8, 0, 0, 0, 6, 0, 0, 0]).unwrap();
    let mut out = vec![0u8; 8];
    assert!(matches!(a.read_region(&[0], &[2], &mut out), Err(Error::Value(_))));
}

#[test]
fn fill_values_that_cannot_be_encoded_fail_at_open() {
    let store = Arc::new(MemoryStore::new());
    for (dtype, fill, codecs) in [
        ("float64", json!("NaN"), json!([{"name": "cast_value", "configuration": {"data_type": "int16"}}, bytes_codec("little")])),
        ("float64", json!(1e9), json!([{"name": "cast_value", "configuration": {"data_type": "int16"}}, bytes_codec("little")])),
        ("int16", json!(32767), json!([{"name": "scale_offset", "configuration": {"offset": -1}}, bytes_codec("little")])),
        ("uint8", json!(3), json!([{"name": "cast_value", "configuration": {"data_type": "float32", "scalar_map": {"encode": [[3, "NaN"]]}}}, bytes_codec("little")])),
    ] {
        let e = Array::create(store.clone(), "x", &v3_array(&[4], &[2], dtype, fill.clone(), codecs)).unwrap_err();
        assert!(matches!(e, Error::Metadata(_)), "{dtype} {fill}: {e}");
    }
}

/// The requirement "a write that fails with a value error leaves every stored byte unchanged", for
/// a write over several chunks where only the last chunk holds an unencodable value. Ignored until
/// array/write.rs encodes every touched chunk before storing any (it now encodes and stores chunk by
/// chunk in parallel, so the other chunks of the region are replaced).
#[test]
fn refused_multi_chunk_write_changes_nothing() {
    let store = Arc::new(MemoryStore::new());
    let codecs = json!([{"name": "cast_value", "configuration": {"data_type": "uint8"}}, bytes_codec("little")]);
    let a = Array::create(store.clone(), "", &v3_array(&[8], &[2], "float64", json!(0.0), codecs)).unwrap();
    a.write_region(&[0], &[8], &f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])).unwrap();
    let e = a.write_region(&[0], &[8], &f64s(&[9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 9.0, 300.0])).unwrap_err();
    assert!(matches!(e, Error::Value(_)), "{e}");
    for (k, want) in [("c/0", [1u8, 2]), ("c/1", [3, 4]), ("c/2", [5, 6]), ("c/3", [7, 8])] {
        assert_eq!(store.get(k).unwrap().unwrap(), want, "{k}");
    }
}

/// The same over 40 000 chunks, more than one batch of parts (16 384): every chunk is encoded before
/// any is stored, whatever the number of chunks, so a value refused in the last batch stores nothing.
#[test]
fn refused_value_in_the_last_batch_of_a_many_chunk_write_changes_nothing() {
    let n = 40_000u64;
    let store = Arc::new(MemoryStore::new());
    let codecs = json!([{"name": "cast_value", "configuration": {"data_type": "uint8"}}, bytes_codec("little")]);
    let a = Array::create(store.clone(), "", &v3_array(&[n], &[1], "float64", json!(0.0), codecs)).unwrap();
    let old: Vec<f64> = (0..n).map(|i| (i % 200 + 1) as f64).collect();
    a.write_region(&[0], &[n], &f64s(&old)).unwrap();
    let mut new: Vec<f64> = (0..n).map(|i| (i % 50 + 201) as f64).collect();
    new[n as usize - 1] = 256.0;
    let e = a.write_region(&[0], &[n], &f64s(&new)).unwrap_err();
    assert!(matches!(e, Error::Value(_)), "{e}");
    let mut out = vec![0u8; 8 * n as usize];
    a.read_region(&[0], &[n], &mut out).unwrap();
    assert_eq!(out, f64s(&old), "nothing stored");
    new[n as usize - 1] = 255.0;
    a.write_region(&[0], &[n], &f64s(&new)).unwrap();
    a.read_region(&[0], &[n], &mut out).unwrap();
    assert_eq!(out, f64s(&new));
}
