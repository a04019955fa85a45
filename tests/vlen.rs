//! Variable-length arrays (`string`, `bytes`, v2 `|O`): round trips against a reference model of the
//! array (a Vec of elements), partial writes, fill values, sharding, and errors (refused fixed-size
//! calls, invalid UTF-8, corrupt chunks, bad offsets), checking that failing writes store nothing.

mod common;

use common::{for_each_index, v3_array};
use serde_json::{json, Value};
use std::sync::Arc;
use zarr::array::VlenData;
use zarr::store::memory::MemoryStore;
use zarr::store::Store;
use zarr::{Array, Error};

fn elem(i: usize, seed: usize) -> String {
    let k = (i * 7 + seed * 13) % 11;
    match k {
        0 => String::new(),
        1 => "é€😀".repeat(i % 4 + 1),
        2 => format!("nul\0{i}"),
        _ => format!("s{i}-{seed}-").repeat(k),
    }
}

/// Writes random boxes to `a` and to a model; reads the whole array and random boxes back.
fn exercise(a: &Array, fill: &[u8]) {
    let shape = a.shape().to_vec();
    let rank = shape.len();
    let n: usize = shape.iter().product::<u64>() as usize;
    let mut model: Vec<Vec<u8>> = vec![fill.to_vec(); n];
    let whole = a.read_region(&vec![0; rank], &shape, &mut []);
    assert!(matches!(whole, Err(Error::InvalidArgument(ref m)) if m.contains("vlen")), "{whole:?}");
    let mut seed = 1usize;
    let mut boxes = Vec::new();
    for _ in 0..12 {
        let mut start = vec![0u64; rank];
        let mut count = vec![0u64; rank];
        for d in 0..rank {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            start[d] = (seed >> 33) as u64 % shape[d];
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            count[d] = 1 + (seed >> 33) as u64 % (shape[d] - start[d]);
        }
        boxes.push((start, count));
    }
    boxes.push((vec![0; rank], shape.clone()));
    for (bi, (start, count)) in boxes.iter().enumerate() {
        let m: usize = count.iter().product::<u64>() as usize;
        let elems: Vec<Vec<u8>> = (0..m).map(|i| if (i + bi) % 9 == 0 { fill.to_vec() } else { elem(i, bi).into_bytes() }).collect();
        let v = VlenData::from_elements(&elems);
        a.write_region_vlen(start, count, &v.offsets, &v.data).unwrap();
        let mut i = 0;
        for_each_index(start, count, |idx| {
            let lin = idx.iter().zip(&shape).fold(0u64, |acc, (x, s)| acc * s + x) as usize;
            model[lin] = elems[i].clone();
            i += 1;
        });
        let all = a.read_region_vlen(&vec![0; rank], &shape).unwrap();
        assert_eq!(all.len(), n);
        for (j, want) in model.iter().enumerate() {
            assert_eq!(all.get(j), &want[..], "after box {bi}, element {j}");
        }
        assert_eq!(all.offsets[0], 0);
        // the box read back on its own
        let part = a.read_region_vlen(start, count).unwrap();
        for (j, e) in elems.iter().enumerate() {
            assert_eq!(part.get(j), &e[..]);
        }
    }
}

#[test]
fn strings_round_trip_with_codecs() {
    for codecs in [
        json!([{"name": "vlen-utf8", "configuration": {}}]),
        json!([{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 3, "checksum": true}}]),
        json!([{"name": "vlen-utf8"}, {"name": "gzip", "configuration": {"level": 5}}, "crc32c"]),
    ] {
        let store = Arc::new(MemoryStore::new());
        let a = Array::create(store.clone(), "s", &v3_array(&[7, 9], &[3, 4], "string", json!("fill"), codecs.clone())).unwrap();
        exercise(&a, b"fill");
        let reopened = Array::open(store, "s", false).unwrap();
        assert_eq!(reopened.read_region_vlen(&[0, 0], &[7, 9]).unwrap(), a.read_region_vlen(&[0, 0], &[7, 9]).unwrap());
    }
}

#[test]
fn bytes_fill_forms_and_sharding() {
    for (dtype, fill, want) in [
        ("variable_length_bytes", json!(""), vec![]),
        ("bytes", json!([1, 2, 255]), vec![1, 2, 255]),
        ("bytes", json!("AQID"), vec![1, 2, 3]),
    ] {
        let store = Arc::new(MemoryStore::new());
        let a = Array::create(store.clone(), "b", &v3_array(&[20], &[6], dtype, fill, json!([{"name": "vlen-bytes"}]))).unwrap();
        assert_eq!(a.metadata().fill_value, want);
        let r = a.read_region_vlen(&[3], &[4]).unwrap();
        assert_eq!(r, VlenData::from_elements(&[&want, &want, &want, &want]));
        exercise(&a, &want);
    }
    for location in ["start", "end"] {
        let store = Arc::new(MemoryStore::new());
        let codecs = json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 3],
            "codecs": [{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, "crc32c"],
            "index_location": location}}]);
        let a = Array::create(store.clone(), "sh", &v3_array(&[9, 10], &[4, 6], "string", json!(""), codecs)).unwrap();
        exercise(&a, b"");
    }
}

fn sharding(chunk_shape: &[u64], codecs: Value) -> Value {
    json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": chunk_shape, "codecs": codecs,
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, "crc32c"]}})
}

fn transpose(order: &[usize]) -> Value {
    json!({"name": "transpose", "configuration": {"order": order}})
}

/// The elements of a vlen-utf8 / vlen-bytes frame, in stored order.
fn frame_elements(buf: &[u8]) -> Vec<Vec<u8>> {
    let n = u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize;
    let mut pos = 4;
    (0..n)
        .map(|_| {
            let len = u32::from_le_bytes(buf[pos..pos + 4].try_into().unwrap()) as usize;
            pos += 4 + len;
            buf[pos - len..pos].to_vec()
        })
        .collect()
}

#[test]
fn transpose_moves_elements() {
    let store = Arc::new(MemoryStore::new());
    let codecs = json!([transpose(&[1, 0]), "vlen-utf8"]);
    let a = Array::create(store.clone(), "t", &v3_array(&[2, 3], &[2, 3], "string", json!(""), codecs)).unwrap();
    let v = VlenData::from_elements(&["a", "bb", "", "d", "é", "f"]);
    a.write_region_vlen(&[0, 0], &[2, 3], &v.offsets, &v.data).unwrap();
    // stored transposed (3 x 2): column by column of the array
    let stored = frame_elements(&store.get("t/c/0/0").unwrap().unwrap());
    assert_eq!(stored, [&b"a"[..], b"d", b"bb", "é".as_bytes(), b"", b"f"]);
    assert_eq!(a.read_region_vlen(&[0, 1], &[2, 2]).unwrap(), VlenData::from_elements(&["bb", "", "é", "f"]));
    for (shape, chunks, codecs) in [
        (vec![7u64, 9], vec![3u64, 4], json!([transpose(&[1, 0]), "vlen-utf8", {"name": "zstd", "configuration": {"level": 1}}])),
        (vec![5, 4, 6], vec![2, 3, 4], json!([transpose(&[2, 0, 1]), "vlen-utf8"])),
        (vec![5, 4, 6], vec![2, 3, 4], json!([{"name": "reshape", "configuration": {"shape": [6, 4]}}, transpose(&[1, 0]), "vlen-utf8"])),
        // a transpose outside sharding: the shard's decoded inner chunks are assembled before it is undone
        (vec![7, 9], vec![4, 6], json!([transpose(&[1, 0]), sharding(&[3, 2], json!(["vlen-utf8"]))])),
        (vec![7, 9], vec![4, 6], json!([transpose(&[1, 0]), sharding(&[6, 2], json!([sharding(&[3, 1], json!(["vlen-utf8"]))]))])),
    ] {
        let store = Arc::new(MemoryStore::new());
        let a = Array::create(store, "t", &v3_array(&shape, &chunks, "string", json!("-"), codecs)).unwrap();
        exercise(&a, b"-");
    }
}

#[test]
fn nested_sharding() {
    // shards of 8 x 6 holding shards of 4 x 6 holding chunks of 2 x 3; one level with a transpose
    for inner in [
        json!(["vlen-utf8", {"name": "zstd", "configuration": {"level": 1}}]),
        json!([transpose(&[1, 0]), "vlen-utf8"]),
    ] {
        for dtype in ["string", "bytes"] {
            let store = Arc::new(MemoryStore::new());
            let codec = if dtype == "string" { "vlen-utf8" } else { "vlen-bytes" };
            let inner: Value = serde_json::from_str(&inner.to_string().replace("vlen-utf8", codec)).unwrap();
            let codecs = json!([sharding(&[4, 6], json!([sharding(&[2, 3], inner)]))]);
            let a = Array::create(store.clone(), "n", &v3_array(&[11, 10], &[8, 6], dtype, json!(""), codecs)).unwrap();
            exercise(&a, b"");
            let reopened = Array::open(store.clone(), "n", false).unwrap();
            assert_eq!(reopened.read_region_vlen(&[0, 0], &[11, 10]).unwrap(), a.read_region_vlen(&[0, 0], &[11, 10]).unwrap());
            // a damaged shard: reads touching it fail as codec errors, the others still read, and a write
            // covering it in part stores nothing (not even in the intact shard it also touches)
            store.set("n/c/0/0", b"short").unwrap();
            assert!(matches!(a.read_region_vlen(&[0, 0], &[2, 2]), Err(Error::Codec(_))));
            assert_eq!(a.read_region_vlen(&[8, 0], &[3, 10]).unwrap().len(), 30);
            let intact = store.get("n/c/0/1").unwrap();
            let v = VlenData::from_elements(&["q", "q"]);
            assert!(matches!(a.write_region_vlen(&[0, 5], &[1, 2], &v.offsets, &v.data), Err(Error::Codec(_))));
            assert_eq!(store.get("n/c/0/1").unwrap(), intact);
        }
    }
}

#[test]
fn rectilinear_grid() {
    for codecs in [
        json!(["vlen-utf8"]),
        json!([transpose(&[1, 0]), "vlen-utf8", {"name": "gzip", "configuration": {"level": 1}}]),
        json!([sharding(&[1, 5], json!(["vlen-utf8"]))]),
    ] {
        let store = Arc::new(MemoryStore::new());
        let mut doc: Value = serde_json::from_str(&v3_array(&[9, 10], &[1, 1], "string", json!("z"), codecs)).unwrap();
        doc["chunk_grid"] = json!({"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[3, 4, 2], [5, 5]]}});
        let a = Array::create(store.clone(), "r", &doc.to_string()).unwrap();
        exercise(&a, b"z");
        // the middle row of chunks holds 4 x 5 elements
        let v = VlenData::from_elements(&(0..20).map(|i| format!("m{i}")).collect::<Vec<_>>());
        a.write_region_vlen(&[3, 5], &[4, 5], &v.offsets, &v.data).unwrap();
        let mut raw = store.get("r/c/1/1").unwrap().unwrap();
        if a.metadata().codecs.to_json().to_string().contains("gzip") {
            let mut plain = vec![0u8; 4096];
            let n = zarr::codec::compress::deflate::inflate_into(zarr::codec::compress::deflate::Framing::Gzip, "gzip", &raw, &mut plain, false).unwrap();
            raw = plain[..n].to_vec();
        }
        if a.metadata().codecs.to_json()[0]["name"] != "sharding_indexed" {
            assert_eq!(frame_elements(&raw).len(), 20);
        }
        assert_eq!(a.read_region_vlen(&[3, 5], &[4, 5]).unwrap(), v);
    }
}

#[test]
fn fill_chunks_are_not_stored() {
    let store = Arc::new(MemoryStore::new());
    let a = Array::create(store.clone(), "f", &v3_array(&[4], &[2], "string", json!("x"), json!(["vlen-utf8"]))).unwrap();
    let v = VlenData::from_elements(&["a", "x", "x", "x"]);
    a.write_region_vlen(&[0], &[4], &v.offsets, &v.data).unwrap();
    assert!(store.get("f/c/0").unwrap().is_some());
    assert!(store.get("f/c/1").unwrap().is_none());
    let back = VlenData::from_elements(&["x"]);
    a.write_region_vlen(&[0], &[1], &back.offsets, &back.data).unwrap();
    assert!(store.get("f/c/0").unwrap().is_none(), "a chunk back to all fill is deleted");
    // The stored framing is exactly vlen-utf8's.
    let v = VlenData::from_elements(&["hé", ""]);
    a.write_region_vlen(&[2], &[2], &v.offsets, &v.data).unwrap();
    assert_eq!(store.get("f/c/1").unwrap().unwrap(), b"\x02\0\0\0\x03\0\0\0h\xc3\xa9\0\0\0\0");
}

#[test]
fn errors_store_nothing() {
    let store = Arc::new(MemoryStore::new());
    let a = Array::create(store.clone(), "e", &v3_array(&[6], &[2], "string", json!(""), json!(["vlen-utf8"]))).unwrap();
    let v = VlenData::from_elements(&["a", "b", "c", "d", "e", "f"]);
    a.write_region_vlen(&[0], &[6], &v.offsets, &v.data).unwrap();
    let before: Vec<(String, Option<Vec<u8>>)> = store.keys().into_iter().map(|k| (k.clone(), store.get(&k).unwrap())).collect();
    let unchanged = || {
        let now: Vec<(String, Option<Vec<u8>>)> = store.keys().into_iter().map(|k| (k.clone(), store.get(&k).unwrap())).collect();
        assert_eq!(now, before);
    };
    // invalid UTF-8 in the last element: a value error, nothing stored
    let bad = VlenData::from_elements(&[&b"ok"[..], b"ok", b"ok", b"ok", b"ok", b"\xff"]);
    assert!(matches!(a.write_region_vlen(&[0], &[6], &bad.offsets, &bad.data), Err(Error::Value(_))));
    unchanged();
    // offsets: wrong count, decreasing, beyond the data
    assert!(matches!(a.write_region_vlen(&[0], &[2], &[0, 1], b"ab"), Err(Error::BufferSize(_))));
    assert!(matches!(a.write_region_vlen(&[0], &[2], &[0, 2, 1], b"ab"), Err(Error::InvalidArgument(_))));
    assert!(matches!(a.write_region_vlen(&[0], &[2], &[0, 1, 3], b"ab"), Err(Error::InvalidArgument(_))));
    assert!(matches!(a.write_region_vlen(&[5], &[2], &[0, 1, 2], b"ab"), Err(Error::OutOfBounds(_))));
    assert!(matches!(a.write_region(&[0], &[1], &[]), Err(Error::InvalidArgument(_))));
    unchanged();
    // a corrupt chunk: reads fail with a codec error; a write covering it only in part stores nothing
    store.set("e/c/2", b"\x02\0\0\0\xff\xff\xff\x7fab").unwrap();
    assert!(matches!(a.read_region_vlen(&[0], &[6]), Err(Error::Codec(_))));
    assert_eq!(a.read_region_vlen(&[0], &[4]).unwrap().len(), 4);
    let one = VlenData::from_elements(&["z", "z"]);
    assert!(matches!(a.write_region_vlen(&[3], &[2], &one.offsets, &one.data), Err(Error::Codec(_))));
    assert_eq!(a.read_region_vlen(&[3], &[1]).unwrap(), VlenData::from_elements(&["d"]));
    // ... while one covering it whole replaces it
    a.write_region_vlen(&[4], &[2], &one.offsets, &one.data).unwrap();
    assert_eq!(a.read_region_vlen(&[0], &[6]).unwrap(), VlenData::from_elements(&["a", "b", "c", "d", "z", "z"]));
    // a fixed-size array refuses the vlen calls
    let f = Array::create(store.clone(), "i", &v3_array(&[2], &[2], "int32", json!(0), json!([{"name": "bytes", "configuration": {"endian": "little"}}]))).unwrap();
    assert!(matches!(f.read_region_vlen(&[0], &[2]), Err(Error::InvalidArgument(_))));
}

#[test]
fn metadata_checks() {
    let store = Arc::new(MemoryStore::new());
    let bad = |dtype: &str, fill: Value, codecs: Value| Array::create(store.clone(), "m", &v3_array(&[2], &[2], dtype, fill, codecs)).unwrap_err();
    assert!(matches!(bad("string", json!(""), json!(["bytes"])), Error::Metadata(_)));
    assert!(matches!(bad("string", json!(""), json!(["vlen-bytes"])), Error::Metadata(_)));
    assert!(matches!(bad("int32", json!(0), json!(["vlen-utf8"])), Error::Metadata(_)));
    assert!(matches!(bad("string", json!(3), json!(["vlen-utf8"])), Error::Metadata(_)));
    assert!(matches!(bad("bytes", json!([256]), json!(["vlen-bytes"])), Error::Metadata(_)));
    // array -> array codecs that change values do not apply to variable-length elements
    assert!(matches!(
        bad("string", json!(""), json!([{"name": "bitround", "configuration": {"keepbits": 3}}, "vlen-utf8"])),
        Error::Unsupported(_) | Error::Metadata(_)
    ));
    let inner_bad = json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [1],
        "codecs": ["bytes"], "index_codecs": ["bytes"]}}]);
    assert!(matches!(bad("string", json!(""), inner_bad), Error::Metadata(_)));
}

#[test]
fn v2_object_arrays() {
    for (filter, fill, elems) in [
        (json!({"id": "vlen-utf8"}), json!(""), vec![b"a".to_vec(), "é".as_bytes().to_vec(), vec![], b"dddd".to_vec()]),
        (json!({"id": "vlen-bytes"}), json!(null), vec![b"\xff".to_vec(), vec![0], vec![], b"xy".to_vec()]),
        (
            json!({"id": "vlen-array", "dtype": ">i4"}),
            json!(0),
            vec![vec![], vec![], 7i32.to_ne_bytes().to_vec(), [1i32, -2].iter().flat_map(|v| v.to_ne_bytes()).collect()],
        ),
    ] {
        let store = Arc::new(MemoryStore::new());
        let doc = json!({"zarr_format": 2, "shape": [4], "chunks": [3], "dtype": "|O", "fill_value": fill,
            "order": "C", "filters": [filter], "compressor": {"id": "zlib", "level": 1}});
        let a = Array::create(store.clone(), "o", &doc.to_string()).unwrap();
        let v = VlenData::from_elements(&elems);
        a.write_region_vlen(&[0], &[4], &v.offsets, &v.data).unwrap();
        let a = Array::open(store.clone(), "o", false).unwrap();
        if filter["id"] == "vlen-array" {
            // items stored big-endian, read back native
            let raw = store.get("o/1").unwrap().unwrap();
            let mut plain = vec![0u8; 64];
            let n = zarr::codec::compress::deflate::inflate_into(zarr::codec::compress::deflate::Framing::Zlib, "zlib", &raw, &mut plain, false).unwrap();
            assert_eq!(&plain[4..16], &[8, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe]);
            assert_eq!(n, 24);
        }
        assert_eq!(a.read_region_vlen(&[0], &[4]).unwrap(), v, "{filter}");
        assert_eq!(a.read_region_vlen(&[1], &[2]).unwrap(), VlenData::from_elements(&elems[1..3]));
        // the stored edge chunk is zlib over the numcodecs framing of 3 elements, the last two the
        // (empty) fill value
        let raw = store.get("o/1").unwrap().unwrap();
        let mut plain = vec![0u8; 64];
        let n = zarr::codec::compress::deflate::inflate_into(zarr::codec::compress::deflate::Framing::Zlib, "zlib", &raw, &mut plain, false).unwrap();
        assert_eq!(&plain[..4], &3u32.to_le_bytes());
        assert_eq!(n, 16 + elems[3].len());
    }
    let store = Arc::new(MemoryStore::new());
    let doc = |filters: Value| {
        json!({"zarr_format": 2, "shape": [4], "chunks": [3], "dtype": "|O", "fill_value": null, "order": "C",
               "filters": filters, "compressor": null}).to_string()
    };
    assert!(matches!(Array::create(store.clone(), "p", &doc(json!([{"id": "pickle"}]))), Err(Error::Unsupported(_))));
    assert!(matches!(Array::create(store.clone(), "q", &doc(json!(null))), Err(Error::Unsupported(_))));
    let s = Array::create(store.clone(), "r", &doc(json!([{"id": "vlen-utf8"}]))).unwrap();
    // a null fill value: missing chunks read as empty elements, and every chunk is stored
    assert_eq!(s.read_region_vlen(&[0], &[2]).unwrap(), VlenData::from_elements(&["", ""]));
    let e = VlenData::from_elements(&["", "", ""]);
    s.write_region_vlen(&[0], &[3], &e.offsets, &e.data).unwrap();
    assert!(store.get("r/0").unwrap().is_some());
}

#[test]
fn v2_fortran_order() {
    // order "F": each chunk frames its elements in Fortran order (numcodecs sees the chunk flattened so)
    let store = Arc::new(MemoryStore::new());
    let doc = json!({"zarr_format": 2, "shape": [3, 3], "chunks": [2, 3], "dtype": "|O", "fill_value": "",
        "order": "F", "filters": [{"id": "vlen-utf8"}], "compressor": null});
    let a = Array::create(store.clone(), "f", &doc.to_string()).unwrap();
    let v = VlenData::from_elements(&["a", "bb", "", "d", "é", "f", "g", "h", "i"]);
    a.write_region_vlen(&[0, 0], &[3, 3], &v.offsets, &v.data).unwrap();
    let stored = frame_elements(&store.get("f/0.0").unwrap().unwrap());
    assert_eq!(stored, [&b"a"[..], b"d", b"bb", "é".as_bytes(), b"", b"f"]);
    // the edge chunk: row 2 and a row of fill, column by column
    assert_eq!(frame_elements(&store.get("f/1.0").unwrap().unwrap()), [&b"g"[..], b"", b"h", b"", b"i", b""]);
    assert_eq!(a.read_region_vlen(&[0, 0], &[3, 3]).unwrap(), v);
    assert_eq!(a.read_region_vlen(&[1, 1], &[2, 2]).unwrap(), VlenData::from_elements(&["é", "f", "h", "i"]));
}
