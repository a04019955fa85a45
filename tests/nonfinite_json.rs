//! Bare `NaN`, `Infinity` and `-Infinity` in JSON metadata and attributes (Python's json module writes
//! them; zarr-python reads and writes them): read from groups and arrays zarr-python 3.1.6 wrote
//! (`tests/fixtures/peers`, `tools/make_peer_fixtures.py`), returned as written, written back as bare
//! tokens, and refused with a metadata error wherever else they appear.

mod common;

use common::{bytes_codec, fixtures_root, v3_array};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarr::metadata::parse_attributes_arg;
use zarr::store::filesystem::FilesystemStore;
use zarr::store::Store;
use zarr::{Array, Error, Group};

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zarr-nonfinite-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fs(root: &Path) -> Arc<dyn Store> {
    Arc::new(FilesystemStore::new(root))
}

/// The attributes of the node at `rel` below the fixtures, as the C API returns them (compact text).
fn attributes_text(root: &Path, rel: &str) -> String {
    let store = fs(root);
    let attrs = match Group::open(store.clone(), rel, false) {
        Ok(g) => g.attributes(),
        Err(_) => Array::open(store, rel, false).unwrap_or_else(|e| panic!("{rel}: {e:?}")).attributes(),
    };
    Value::Object(attrs).to_string()
}

#[test]
fn attributes_zarr_python_wrote_are_returned_as_written() {
    let root = fixtures_root();
    let expected: Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(root.join("expected/peers_attributes.json")).unwrap()).unwrap();
    assert_eq!(expected.len(), 6);
    for (rel, want) in &expected {
        let want = want.as_str().unwrap();
        assert!(want.contains("NaN") || want.contains("Infinity"), "{rel}");
        assert_eq!(attributes_text(&root, rel), want, "{rel}");
    }
    // through the groups' consolidated metadata (v3 inline, v2 .zmetadata)
    for fmt in [3, 2] {
        let g = Group::open(fs(&root), &format!("peers/nonfinite_v{fmt}"), false).unwrap();
        assert!(g.has_consolidated(), "v{fmt}");
        let a = g.open_array("sub/temp").unwrap();
        let want = expected[&format!("peers/nonfinite_v{fmt}/sub/temp")].as_str().unwrap();
        assert_eq!(Value::Object(a.attributes()).to_string(), want);
        // the array's NaN fill value reads where nothing was written
        let mut out = vec![0u8; 24];
        a.read_region(&[0], &[3], &mut out).unwrap();
        let v: Vec<f64> = out.chunks(8).map(|b| f64::from_ne_bytes(b.try_into().unwrap())).collect();
        assert_eq!(&v[..2], &[1.0, 2.0]);
        assert!(v[2].is_nan());
    }
    // the v2 array with a bare NaN in .zattrs (the corpus case) opens and keeps its tokens
    let a = Array::open(fs(&root.join("v2/v2_attrs_bare_nan")), "", false).unwrap();
    assert!(Value::Object(a.attributes()).to_string().contains("\"esa_cci_path\":NaN"));
}

#[test]
fn attributes_set_with_tokens_are_stored_as_bare_tokens() {
    let text = r#"{"_FillValue": NaN, "range": [-Infinity, Infinity], "s": "NaN", "n": {"x": NaN}}"#;
    let attrs = parse_attributes_arg(text).unwrap();
    let compact = r#"{"_FillValue":NaN,"range":[-Infinity,Infinity],"s":"NaN","n":{"x":NaN}}"#;
    for fmt in [3u8, 2] {
        let root = scratch(&format!("set{fmt}"));
        let g = Group::create(fs(&root), "", attrs.clone(), fmt).unwrap();
        let child = g.create_group("c", Map::new()).unwrap();
        child.set_attributes(attrs.clone()).unwrap();
        let file = if fmt == 3 { "c/zarr.json" } else { "c/.zattrs" };
        let stored = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(stored.contains("\"_FillValue\": NaN") && stored.contains("-Infinity,"), "{stored}");
        assert!(stored.contains("\"s\": \"NaN\""), "{stored}");
        assert_eq!(attributes_text(&root, "c"), compact);
        assert_eq!(attributes_text(&root, ""), compact);
        // an array: created with them, then updated; consolidation and listing still work
        let doc = if fmt == 3 {
            v3_array(&[4], &[2], "float32", json!("NaN"), json!([bytes_codec("little")]))
        } else {
            json!({"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<f4", "compressor": null,
                   "fill_value": "NaN", "order": "C", "filters": null})
            .to_string()
        };
        let a = g.create_array("a", &doc).unwrap();
        a.set_attributes(attrs.clone()).unwrap();
        g.consolidate().unwrap();
        let g = Group::open(fs(&root), "", false).unwrap();
        assert_eq!(Value::Object(g.open_array("a").unwrap().attributes()).to_string(), compact);
        assert_eq!(g.children().unwrap().len(), 2);
        if fmt == 2 {
            // converted to v3, the attributes keep their tokens
            zarr::convert::v2_to_v3(fs(&root).as_ref(), "a").unwrap();
            assert_eq!(attributes_text(&root, "a"), compact);
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}

#[test]
fn bare_tokens_as_fill_values() {
    let root = scratch("fill");
    let store = fs(&root);
    let doc = v3_array(&[3], &[3], "float64", json!(0), json!([bytes_codec("little")])).replace("\"fill_value\":0", "\"fill_value\":-Infinity");
    assert!(doc.contains("-Infinity"), "{doc}");
    let a = Array::create(store.clone(), "a", &doc).unwrap();
    let mut out = vec![0u8; 24];
    a.read_region(&[0], &[3], &mut out).unwrap();
    assert!(out.chunks(8).all(|b| f64::from_ne_bytes(b.try_into().unwrap()) == f64::NEG_INFINITY));
    let stored = std::fs::read_to_string(root.join("a/zarr.json")).unwrap();
    assert!(stored.contains("\"fill_value\": -Infinity"), "{stored}");
    drop(a);
    std::fs::create_dir_all(root.join("b")).unwrap();
    std::fs::write(root.join("b/.zarray"), r#"{"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "<f4",
        "compressor": null, "fill_value": NaN, "order": "C", "filters": null}"#).unwrap();
    let b = Array::open(store, "b", false).unwrap();
    let mut out = vec![0u8; 8];
    b.read_region(&[0], &[2], &mut out).unwrap();
    assert_eq!(out[..4], 0x7fc0_0000u32.to_ne_bytes());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn tokens_elsewhere_and_other_invalid_json_are_specific_errors() {
    let root = scratch("bad");
    let store = fs(&root);
    let put = |key: &str, text: &str| {
        let p = root.join(key);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    let good = v3_array(&[4], &[2], "int32", json!(0), json!([bytes_codec("little")]));
    for (i, (from, to, needle)) in [
        ("\"shape\":[4]", "\"shape\":[NaN]", "NaN at shape/0"),
        ("\"fill_value\":0", "\"fill_value\":nan", "invalid JSON"),
        ("\"fill_value\":0", "\"fill_value\":NaN", "invalid fill_value NaN for data type int32"),
        ("\"endian\":\"little\"", "\"endian\":\"little\",\"x\":Infinity", "Infinity at codecs/0/configuration/x"),
        ("\"fill_value\":0", "\"fill_value\":-NaN", "invalid JSON"),
        ("\"fill_value\":0", "\"fill_value\":Infinityx", "invalid JSON"),
        ("\"fill_value\":0", "\"fill_value\":+Infinity", "invalid JSON"),
    ]
    .into_iter()
    .enumerate()
    {
        let text = good.replace(from, to);
        assert_ne!(text, good);
        put(&format!("a{i}/zarr.json"), &text);
        match Array::open(store.clone(), &format!("a{i}"), false) {
            Err(Error::Metadata(m)) => assert!(m.contains(needle), "{to}: {m}"),
            r => panic!("{to}: {:?}", r.map(|_| ())),
        }
    }
    // a v2 compressor with a token; a .zattrs with a token spelled the wrong way
    put("v2/.zarray", r#"{"zarr_format": 2, "shape": [2], "chunks": [2], "dtype": "<f4", "compressor": {"id": "zlib", "level": NaN},
        "fill_value": NaN, "order": "C", "filters": null}"#);
    assert!(matches!(Array::open(store.clone(), "v2", false), Err(Error::Metadata(m)) if m.contains("NaN at compressor/level")));
    put("g/.zgroup", r#"{"zarr_format": 2}"#);
    put("g/.zattrs", r#"{"a": Nan}"#);
    assert!(matches!(Group::open(store.clone(), "g", false), Err(Error::Metadata(m)) if m.contains("invalid JSON")));
    // attributes given by a caller
    for bad in [r#"{"a": nan}"#, r#"{"a": NaN"#, r#"[NaN]"#, r#"{"a": -NaN}"#, "NaN"] {
        assert!(matches!(parse_attributes_arg(bad), Err(Error::InvalidArgument(_))), "{bad}");
    }
    std::fs::remove_dir_all(&root).unwrap();
}
