//! Rewriting a Zarr v2 array's metadata as Zarr v3, in place: `zarr.json` is written with the `v2`
//! chunk key encoding (so no chunk is moved or rewritten), then `.zarray` and `.zattrs` are removed.
//!
//! Only arrays whose v2 pieces have Zarr v3 core equivalents convert: data types with a core name
//! (`S<n>`/`V<n>` become `r<8n>`), no filters, and a compressor among blosc, gzip and zstd (or none);
//! `order: "F"` becomes a transpose codec. Anything else is refused with the reason. A `null` v2 fill
//! value becomes the zero value, which is what readers use for missing chunks.

use crate::error::{Error, Result};
use crate::metadata::{self, fill_value, v2, v3};
use crate::node;
use crate::store::{normalize_node_path, Store};
use serde_json::{json, Map, Value};

/// Converts the v2 array at `path` of `store` to v3 metadata.
pub fn v2_to_v3(store: &dyn Store, path: &str) -> Result<()> {
    let path = normalize_node_path(path)?;
    let zarray = node::key(&path, ".zarray");
    let where_ = node::describe(store, &path);
    if store.exists(&node::v3_key(&path))? {
        return Err(Error::Exists(format!("{where_} already has Zarr v3 metadata (zarr.json)")));
    }
    let bytes = store.get(&zarray)?.ok_or_else(|| Error::NotFound(format!("no Zarr v2 array at {where_} (no .zarray)")))?;
    let doc = metadata::parse_json(&bytes).map_err(|e| e.context(store.location(&zarray)))?;
    let attrs = match store.get(&node::key(&path, ".zattrs"))? {
        None => Map::new(),
        Some(b) => match metadata::parse_json(&b)? {
            Value::Object(m) => m,
            _ => return Err(Error::Metadata(".zattrs is not a JSON object".into())),
        },
    };
    let meta = v2::parse_array(&doc, attrs.clone()).map_err(|e| e.context(store.location(&zarray)))?;
    let v3doc = v3_document(&doc, &meta, attrs).map_err(|e| e.context(format!("cannot convert {where_} to Zarr v3")))?;
    // The new document must describe exactly the same chunks.
    let check = v3::parse_array(&v3doc)?;
    if check.shape != meta.shape || check.grid != meta.grid || check.data_type != meta.data_type || check.fill_value != meta.fill_value {
        return Err(Error::Internal("v2 -> v3 conversion produced a different array description".into()));
    }
    store.set(&node::v3_key(&path), &metadata::to_bytes(&v3doc))?;
    store.delete(&zarray)?;
    store.delete(&node::key(&path, ".zattrs"))
}

fn unsupported(why: String) -> Error {
    Error::Unsupported(why)
}

/// The v3 document equivalent to a v2 `.zarray` (`meta` is its parsed form).
fn v3_document(doc: &Value, meta: &metadata::ArrayMetadata, attrs: Map<String, Value>) -> Result<Value> {
    let dtype = &doc["dtype"];
    let typestr = dtype
        .as_str()
        .ok_or_else(|| unsupported("structured v2 dtypes have no Zarr v3 core equivalent".into()))?;
    match typestr.as_bytes().get(1) {
        Some(b'M') | Some(b'm') => {
            return Err(unsupported(format!("v2 dtype '{typestr}' (datetime/timedelta) has no Zarr v3 core equivalent")))
        }
        Some(b'U') => return Err(unsupported(format!("v2 dtype '{typestr}' (unicode text) has no Zarr v3 core equivalent"))),
        _ => {}
    }
    if let Some(list) = doc.get("filters").and_then(Value::as_array) {
        if let Some(f) = list.first() {
            let id = f.get("id").and_then(Value::as_str).unwrap_or("?");
            return Err(unsupported(format!("v2 filter '{id}' has no Zarr v3 core equivalent")));
        }
    }
    let t = crate::dtype::v2::parse_typestr(typestr)?;
    let rank = meta.shape.len();
    let mut codecs = Vec::new();
    if doc.get("order").and_then(Value::as_str) == Some("F") && rank > 1 {
        codecs.push(json!({"name": "transpose", "configuration": {"order": (0..rank).rev().collect::<Vec<_>>()}}));
    }
    codecs.push(match t.byte_order {
        Some(crate::dtype::Endian::Big) => json!({"name": "bytes", "configuration": {"endian": "big"}}),
        Some(crate::dtype::Endian::Little) => json!({"name": "bytes", "configuration": {"endian": "little"}}),
        None => json!({"name": "bytes"}),
    });
    let elem = meta.data_type.size();
    match doc.get("compressor") {
        None | Some(Value::Null) => {}
        Some(c) => {
            let id = c.get("id").and_then(Value::as_str).unwrap_or("?");
            let get = |k: &str| c.get(k).filter(|v| !v.is_null());
            codecs.push(match id {
                "blosc" => {
                    let shuffle = match get("shuffle").and_then(Value::as_i64).unwrap_or(1) {
                        0 => "noshuffle",
                        2 => "bitshuffle",
                        -1 if elem == 1 => "bitshuffle",
                        _ => "shuffle",
                    };
                    json!({"name": "blosc", "configuration": {
                        "cname": get("cname").cloned().unwrap_or(json!("lz4")),
                        "clevel": get("clevel").cloned().unwrap_or(json!(5)),
                        "shuffle": shuffle, "typesize": elem,
                        "blocksize": get("blocksize").cloned().unwrap_or(json!(0))}})
                }
                "gzip" => json!({"name": "gzip", "configuration": {"level": get("level").cloned().unwrap_or(json!(1))}}),
                "zstd" => json!({"name": "zstd", "configuration": {
                    "level": get("level").cloned().unwrap_or(json!(1)),
                    "checksum": get("checksum").cloned().unwrap_or(json!(false))}}),
                other => return Err(unsupported(format!("v2 compressor '{other}' has no Zarr v3 core codec"))),
            });
        }
    }
    let separator = match doc.get("dimension_separator").and_then(Value::as_str) {
        Some("/") => "/",
        _ => ".",
    };
    Ok(json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": meta.shape,
        "data_type": meta.data_type.to_v3_json()?,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": meta.grid.chunk_shape}},
        "chunk_key_encoding": {"name": "v2", "configuration": {"separator": separator}},
        "fill_value": fill_value::to_json_v3(&meta.data_type, &meta.fill_value),
        "codecs": codecs,
        "attributes": attrs,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::MemoryStore;
    use crate::Array;
    use std::sync::Arc;

    fn v2_array(store: &Arc<MemoryStore>, zarray: Value) -> Vec<u8> {
        let a = Array::create(store.clone(), "a", &zarray.to_string()).unwrap();
        let n: u64 = a.shape().iter().product();
        let elem = a.metadata().data_type.size();
        let data: Vec<u8> = (0..n as usize * elem).map(|i| (i * 31 % 251) as u8).collect();
        let count = a.shape().to_vec();
        a.write_region(&vec![0; count.len()], &count, &data).unwrap();
        a.set_attributes(serde_json::from_str(r#"{"units": "m"}"#).unwrap()).unwrap();
        data
    }

    #[test]
    fn converts_and_reads_the_same_chunks() {
        for (dtype, order, compressor) in [
            ("<i4", "C", json!({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1, "blocksize": 0})),
            (">f8", "F", json!({"id": "gzip", "level": 3})),
            ("|S3", "C", json!(null)),
            ("<u2", "F", json!({"id": "zstd", "level": 2})),
        ] {
            let store = Arc::new(MemoryStore::new());
            let data = v2_array(&store, json!({"zarr_format": 2, "shape": [5, 7], "chunks": [2, 3], "dtype": dtype,
                "fill_value": null, "order": order, "filters": null, "compressor": compressor, "dimension_separator": "/"}));
            let chunk_keys = || -> Vec<String> {
                store.keys().into_iter().filter(|k| k.starts_with("a/") && !k.starts_with("a/.") && k != "a/zarr.json").collect()
            };
            let keys_before = chunk_keys();
            v2_to_v3(store.as_ref(), "a").unwrap();
            let a = Array::open(store.clone(), "a", false).unwrap();
            assert_eq!(a.metadata().zarr_format, 3);
            assert_eq!(a.attributes()["units"], "m");
            let mut out = vec![0u8; data.len()];
            a.read_region(&[0, 0], &[5, 7], &mut out).unwrap();
            assert_eq!(out, data, "{dtype} {order}");
            assert_eq!(chunk_keys(), keys_before, "no chunk moved");
            assert!(store.get("a/.zarray").unwrap().is_none() && store.get("a/.zattrs").unwrap().is_none());
        }
    }

    #[test]
    fn refuses_what_has_no_v3_equivalent() {
        for (dtype, filters, compressor, why) in [
            (json!("<i4"), json!([{"id": "delta", "dtype": "<i4"}]), json!(null), "filter 'delta'"),
            (json!("<i4"), json!(null), json!({"id": "zlib", "level": 1}), "compressor 'zlib'"),
            (json!("<M8[ns]"), json!(null), json!(null), "datetime"),
            (json!([["x", "<f4"]]), json!(null), json!(null), "structured"),
        ] {
            let store = MemoryStore::new();
            let z = json!({"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": dtype, "fill_value": 0,
                "order": "C", "filters": filters, "compressor": compressor});
            store.set("a/.zarray", z.to_string().as_bytes()).unwrap();
            let e = v2_to_v3(&store, "a").unwrap_err();
            // (delta is refused as unknown until the filter exists; either way a clean refusal.)
            assert!(matches!(e, Error::Unsupported(_)), "{why}: {e}");
            assert!(e.message().contains(why) || e.message().contains("delta"), "{why}: {e}");
            assert!(store.get("a/zarr.json").unwrap().is_none());
            assert!(store.get("a/.zarray").unwrap().is_some());
        }
        assert!(matches!(v2_to_v3(&MemoryStore::new(), "x"), Err(Error::NotFound(_))));
    }
}
