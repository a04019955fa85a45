//! Extension data types through the Array API: stored bytes checked against values computed here
//! (byte order per unit, packbits streams), fill values in missing chunks, and the same inside
//! sharding_indexed.

mod common;

use common::{bytes_codec, sharding_codec, v3_array};
use serde_json::{json, Value};
use std::sync::Arc;
use zarr::store::memory::MemoryStore;
use zarr::store::Store;
use zarr::Array;

fn bytes(endian: &str) -> Value {
    json!([bytes_codec(endian)])
}

/// Writes `data` (whole array), reads it back, and returns the store.
fn write_read(doc: &str, shape: &[u64], data: &[u8]) -> (Arc<MemoryStore>, Array) {
    let store = Arc::new(MemoryStore::new());
    let a = Array::create(store.clone(), "a", doc).unwrap();
    a.write_region(&vec![0; shape.len()], shape, data).unwrap();
    let mut back = vec![0u8; data.len()];
    a.read_region(&vec![0; shape.len()], shape, &mut back).unwrap();
    assert_eq!(back, data);
    let reopened = Array::open(store.clone(), "a", false).unwrap();
    reopened.read_region(&vec![0; shape.len()], shape, &mut back).unwrap();
    assert_eq!(back, data);
    (store, reopened)
}

#[test]
fn datetime64_big_endian_and_nat_fill() {
    let dt = json!({"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}});
    let vals: [i64; 3] = [1_700_000_000_000_000_000, i64::MIN, -1];
    let data: Vec<u8> = vals.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let (store, a) = write_read(&v3_array(&[6], &[3], dt, json!("NaT"), bytes("big")), &[3], &data);
    let stored = store.get("a/c/0").unwrap().unwrap();
    assert_eq!(stored, vals.iter().flat_map(|v| v.to_be_bytes()).collect::<Vec<u8>>());
    // the chunk never written reads as NaT
    let mut rest = vec![0u8; 24];
    a.read_region(&[3], &[3], &mut rest).unwrap();
    assert_eq!(rest, i64::MIN.to_ne_bytes().repeat(3));
}

#[test]
fn utf32_swaps_per_code_unit() {
    let dt = json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 8}});
    let units: [u32; 4] = [0x48, 0x1f600, 0xe9, 0];
    let data: Vec<u8> = units.iter().flat_map(|u| u.to_ne_bytes()).collect();
    let (store, a) = write_read(&v3_array(&[4], &[2], dt, json!("zé"), bytes("big")), &[2], &data);
    assert_eq!(store.get("a/c/0").unwrap().unwrap(), units.iter().flat_map(|u| u.to_be_bytes()).collect::<Vec<u8>>());
    let mut rest = vec![0u8; 16];
    a.read_region(&[2], &[2], &mut rest).unwrap();
    assert_eq!(rest, [0x7au32, 0xe9, 0x7a, 0xe9].iter().flat_map(|u| u.to_ne_bytes()).collect::<Vec<u8>>());
}

#[test]
fn null_terminated_bytes_never_swap() {
    let dt = json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 3}});
    let data = b"ab\0xyzq\0\0".to_vec();
    let (store, _) = write_read(&v3_array(&[3], &[3], dt, json!("AQ=="), json!([{"name": "bytes"}])), &[3], &data);
    assert_eq!(store.get("a/c/0").unwrap().unwrap(), data);
}

#[test]
fn bfloat16_and_complex_components_swap() {
    let (store, _) = write_read(&v3_array(&[2], &[2], json!("bfloat16"), json!("NaN"), bytes("big")), &[2], &[0x3f80u16, 0xc049].iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>());
    assert_eq!(store.get("a/c/0").unwrap().unwrap(), [0x3f, 0x80, 0xc0, 0x49]);
    let data: Vec<u8> = [0x3c00u16, 0xc000].iter().flat_map(|v| v.to_ne_bytes()).collect();
    let (store, _) = write_read(&v3_array(&[1], &[1], json!("complex_float16"), json!([0, 0]), bytes("big")), &[1], &data);
    assert_eq!(store.get("a/c/0").unwrap().unwrap(), [0x3c, 0x00, 0xc0, 0x00]);
    // 1-byte components never swap
    let (store, _) = write_read(&v3_array(&[2], &[2], json!("complex_float8_e5m2"), json!(["NaN", 0]), bytes("big")), &[2], &[1, 2, 3, 4]);
    assert_eq!(store.get("a/c/0").unwrap().unwrap(), [1, 2, 3, 4]);
}

#[test]
fn struct_with_extension_fields_in_shards() {
    let dt = json!({"name": "struct", "configuration": {"fields": [
        {"name": "t", "data_type": {"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 10}}},
        {"name": "p", "data_type": {"name": "struct", "configuration": {"fields": [
            {"name": "x", "data_type": "bfloat16"}, {"name": "k", "data_type": "int4"}]}}}]}});
    let fill = json!({"t": "NaT", "p": {"x": 1.0, "k": -1}});
    let elem = |t: i64, x: u16, k: u8| -> Vec<u8> {
        let mut e = t.to_ne_bytes().to_vec();
        e.extend(x.to_ne_bytes());
        e.push(k);
        e
    };
    let data: Vec<u8> = (0..4).flat_map(|i| elem(i * 100 - 7, 0x4000 + i as u16, (i as u8).wrapping_sub(2))).collect();
    let doc = v3_array(&[8], &[8], dt, fill, json!([sharding_codec(&[2], bytes("big"), "end")]));
    let store = Arc::new(MemoryStore::new());
    let a = Array::create(store.clone(), "a", &doc).unwrap();
    a.write_region(&[0], &[4], &data).unwrap();
    let mut all = vec![0u8; 8 * 11];
    a.read_region(&[0], &[8], &mut all).unwrap();
    assert_eq!(&all[..44], &data[..]);
    for e in all[44..].chunks(11) {
        assert_eq!(e, elem(i64::MIN, 0x3f80, 0xff));
    }
    // stored big-endian, field by field: the first inner chunk starts the shard
    let shard = store.get("a/c/0").unwrap().unwrap();
    let mut want = (-7i64).to_be_bytes().to_vec();
    want.extend(0x4000u16.to_be_bytes());
    want.push(0xfe);
    assert_eq!(&shard[..11], &want[..]);
}

#[test]
fn packbits_sub_byte_types_in_shards() {
    // int4 over 5 elements per inner chunk: 20 bits -> 3 bytes + the padding byte
    let codecs = json!([{"name": "packbits", "configuration": {"padding_encoding": "first_byte"}}]);
    let doc = v3_array(&[10], &[10], json!("int4"), json!(-3), json!([sharding_codec(&[5], codecs, "end")]));
    let vals: [i8; 10] = [-8, -1, 0, 7, 3, -3, -3, -3, -3, -3];
    let data: Vec<u8> = vals.iter().map(|v| *v as u8).collect();
    let (store, _) = write_read(&doc, &[10], &data);
    let shard = store.get("a/c/0").unwrap().unwrap();
    // first inner chunk packed: nibbles 8, f, 0, 7, 3 -> 0xf8, 0x70, 0x03; second is all fill, not stored
    assert_eq!(&shard[..4], &[4, 0xf8, 0x70, 0x03]);
    assert_eq!(shard.len(), 4 + 2 * 16 + 4);
    // float4 without sharding, partial chunk writes merge with the fill
    let codecs = json!([{"name": "packbits"}]);
    let doc = v3_array(&[6], &[6], json!("float4_e2m1fn"), json!(-0.5), codecs);
    let store = Arc::new(MemoryStore::new());
    let a = Array::create(store.clone(), "a", &doc).unwrap();
    a.write_region(&[1], &[2], &[0x7, 0x2]).unwrap();
    let mut back = [0u8; 6];
    a.read_region(&[0], &[6], &mut back).unwrap();
    assert_eq!(back, [0x9, 0x7, 0x2, 0x9, 0x9, 0x9]);
    assert_eq!(store.get("a/c/0").unwrap().unwrap(), [0x79, 0x92, 0x99]);
}
