//! Interop with the real numcodecs: the vectors under `tests/vectors/filters/`, made by numcodecs and
//! numpy (`tools/numcodecs_filter_vectors.py`). For each filter vector, libzarr's encode must equal
//! numcodecs' encoded bytes byte for byte (lossy filters included), and libzarr's decode of numcodecs'
//! encoded bytes must equal numcodecs' decoded bytes; where numcodecs refuses to encode, libzarr must
//! refuse too. Whole-chunk vectors run `.zarray` documents (filters chained, then the compressor)
//! through libzarr's codec chain.

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use zarr::codec::numcodecs::{filter, V2Elem};
use zarr::codec::DecodedSize;

/// The vectors' directory; `LIBZARR_FILTER_VECTORS` points the test at another set made by the same
/// generator (e.g. a large randomised one).
fn dir() -> PathBuf {
    match std::env::var_os("LIBZARR_FILTER_VECTORS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/filters"),
    }
}

fn read(name: &str, suffix: &str) -> Vec<u8> {
    let p = dir().join(format!("{name}.{suffix}"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn vectors() -> Vec<Value> {
    let index: Value = serde_json::from_slice(&read("index", "json")).expect("index.json");
    index["vectors"].as_array().expect("vectors").clone()
}

/// Checks one filter vector; returns what went wrong.
fn check_filter(v: &Value) -> Result<(), String> {
    let name = v["name"].as_str().unwrap();
    let input = V2Elem::parse(v["input"].as_str().unwrap()).map_err(|e| format!("input: {e}"))?;
    let (codec, _) = filter(&v["filter"], &input).map_err(|e| format!("building {}: {e}", v["filter"]))?;
    let kind = v["kind"].as_str().unwrap();
    if kind == "encode_error" {
        let raw = read(name, "raw");
        return match codec.encode(&raw) {
            Err(_) => Ok(()),
            Ok(e) => Err(format!("numcodecs refuses to encode ({}), libzarr gave {}", v["error"], hex(&e))),
        };
    }
    let enc = read(name, "enc");
    let dec = read(name, "dec");
    if kind == "round_trip" {
        let raw = read(name, "raw");
        let mine = codec.encode(&raw).map_err(|e| format!("encode: {e}"))?;
        if mine != enc {
            return Err(format!("encode\n  libzarr   {}\n  numcodecs {}", hex(&mine), hex(&enc)));
        }
        if codec.encoded_size(raw.len() as u64) != Some(enc.len() as u64) {
            return Err(format!("encoded_size({}) = {:?}, encoded {}", raw.len(), codec.encoded_size(raw.len() as u64), enc.len()));
        }
    }
    let mut out = vec![0xa5; dec.len()];
    codec.decode_into(&enc, &mut out).map_err(|e| format!("decode_into: {e}"))?;
    if out != dec {
        return Err(format!("decode\n  libzarr   {}\n  numcodecs {}", hex(&out), hex(&dec)));
    }
    let d = codec.decode(&enc, DecodedSize::Exact(dec.len())).map_err(|e| format!("decode: {e}"))?;
    if d.as_ref() != dec.as_slice() {
        return Err("decode differs from decode_into".into());
    }
    Ok(())
}

/// Checks one whole-chunk vector through the `.zarray`'s codec chain.
fn check_chunk(v: &Value) -> Result<(), String> {
    let name = v["name"].as_str().unwrap();
    let meta = zarr::metadata::v2::parse_array(&v["zarray"], Map::new()).map_err(|e| format!("parse .zarray: {e}"))?;
    let chain = &meta.codecs;
    let (raw, enc, dec) = (read(name, "raw"), read(name, "enc"), read(name, "dec"));
    let mut out = vec![0xa5; dec.len()];
    chain.decode_chunk(&enc, &mut out).map_err(|e| format!("decode_chunk: {e}"))?;
    if out != dec {
        return Err(format!("decode_chunk\n  libzarr   {}\n  numcodecs {}", hex(&out), hex(&dec)));
    }
    let mine = chain.encode_chunk(&raw).map_err(|e| format!("encode_chunk: {e}"))?.into_owned();
    if v["zarray"]["compressor"].is_null() && mine != enc {
        return Err(format!("encode_chunk\n  libzarr   {}\n  numcodecs {}", hex(&mine), hex(&enc)));
    }
    let mut back = vec![0xa5; dec.len()];
    chain.decode_chunk(&mine, &mut back).map_err(|e| format!("decode_chunk (own): {e}"))?;
    if back != dec {
        return Err(format!("own round trip\n  libzarr   {}\n  numcodecs {}", hex(&back), hex(&dec)));
    }
    Ok(())
}

#[test]
fn numcodecs_filter_vectors() {
    let mut failures = Vec::new();
    let mut per_filter: BTreeMap<String, usize> = BTreeMap::new();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for v in vectors() {
        let kind = v["kind"].as_str().unwrap().to_string();
        *kinds.entry(kind.clone()).or_default() += 1;
        let r = if kind == "chunk" {
            check_chunk(&v)
        } else {
            *per_filter.entry(v["filter"]["id"].as_str().unwrap().to_string()).or_default() += 1;
            check_filter(&v)
        };
        if let Err(e) = r {
            failures.push(format!("{}: {e}", v["name"].as_str().unwrap()));
        }
    }
    eprintln!("numcodecs vectors: {kinds:?}, per filter {per_filter:?}");
    let ids = ["astype", "bitround", "categorize", "delta", "fixedscaleoffset", "packbits", "quantize", "shuffle"];
    if std::env::var_os("LIBZARR_FILTER_VECTORS").is_none() {
        assert_eq!(per_filter.keys().map(String::as_str).collect::<Vec<_>>(), ids, "every filter has vectors");
        assert!(kinds.get("chunk").copied().unwrap_or(0) >= 4);
    }
    assert!(failures.is_empty(), "{} of the vectors fail:\n{}", failures.len(), failures.join("\n"));
}
