//! Rewriting a Zarr v2 array's metadata as Zarr v3, in place: `zarr.json` is written with the `v2`
//! chunk key encoding (so no chunk is moved or rewritten), then `.zarray` and `.zattrs` are removed.
//!
//! Only arrays whose v2 pieces have Zarr v3 equivalents convert: data types with a core name
//! (`S<n>`/`V<n>` become `r<8n>`); filters and compressors that numcodecs codecs implement, written
//! as zarr-python 3 names them: blosc, gzip and zstd become the core codecs, the array filters
//! (`delta`, `fixedscaleoffset`, `quantize`, `bitround`, `astype`, `packbits`, `categorize`) the
//! array -> array codecs `numcodecs.<id>` before `bytes`, the other compressors, checksums and
//! `shuffle` the bytes -> bytes codecs `numcodecs.<id>` after it. `order: "F"` becomes a transpose
//! codec. Refused (`Error::Unsupported`, nothing changed): codecs libzarr does not know, an array
//! filter after a bytes filter, `delta`/`packbits` on an `F`-order array (they depend on the element
//! order numcodecs sees), filter dtypes that reinterpret the byte order, and array filters whose
//! output is stored big-endian (zarr-python 3 would read those in the wrong byte order). A `null` v2 fill value
//! becomes the zero value, which is what readers use for missing chunks.

use crate::codec::serialize::bytes::BytesCodec;
use crate::codec::numcodecs::{self, V2Elem};
use crate::codec::registry::{self, UnderV3};
use crate::codec::filter::transpose::TransposeCodec;
use crate::codec::{ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec};
use crate::error::{Error, Result};
use crate::dtype::fill_value;
use crate::metadata::{self, v2, v3};
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
    let bytes = store.get_limited(&zarray, crate::store::ReadLimit::metadata(store.max_metadata_bytes()))?.ok_or_else(|| Error::NotFound(format!("no Zarr v2 array at {where_} (no .zarray)")))?;
    let doc = metadata::parse_json_at(&bytes, &zarray, store.max_metadata_bytes()).map_err(|e| e.context(store.location(&zarray)))?;
    let attrs = match store.get_limited(&node::key(&path, ".zattrs"), crate::store::ReadLimit::metadata(store.max_metadata_bytes()))? {
        None => Map::new(),
        Some(b) => match metadata::parse_json_at(&b, ".zattrs", store.max_metadata_bytes())? {
            Value::Object(m) => m,
            _ => return Err(Error::Metadata(".zattrs is not a JSON object".into())),
        },
    };
    let meta = v2::parse_array(&doc, attrs.clone()).map_err(|e| e.context(store.location(&zarray)))?;
    let v3doc = v3_document(&doc, &meta, attrs).map_err(|e| e.context(format!("cannot convert {where_} to Zarr v3")))?;
    // The new document must describe exactly the same chunks.
    let check = v3::parse_array(v3doc.clone())?;
    if check.shape != meta.shape || check.chunk_shape() != meta.chunk_shape() || check.data_type != meta.data_type || check.fill_value != meta.fill_value {
        return Err(Error::Internal("v2 -> v3 conversion produced a different array description".into()));
    }
    store.set(&node::v3_key(&path), &metadata::to_bytes(&v3doc))?;
    store.delete(&zarray)?;
    store.delete(&node::key(&path, ".zattrs"))
}

/// The Zarr v3 document (chunk key encoding `default`, `c/i/j`) of a v2 array's `.zarray` document
/// and attributes, for a store that holds v3 nodes only (an Icechunk repository). `where_` names the
/// array in errors.
#[cfg(feature = "icechunk")]
pub(crate) fn v3_document_default_keys(zarray: &Value, attrs: Map<String, Value>, where_: &str) -> Result<Value> {
    let meta = v2::parse_array(zarray, attrs.clone()).map_err(|e| e.context(where_.to_string()))?;
    let mut v3doc = v3_document(zarray, &meta, attrs).map_err(|e| e.context(format!("cannot convert {where_} to Zarr v3")))?;
    v3doc["chunk_key_encoding"] = json!({"name": "default", "configuration": {"separator": "/"}});
    let check = v3::parse_array(v3doc.clone())?;
    if check.shape != meta.shape || check.chunk_shape() != meta.chunk_shape() || check.data_type != meta.data_type || check.fill_value != meta.fill_value {
        return Err(Error::Internal("v2 -> v3 conversion produced a different array description".into()));
    }
    Ok(v3doc)
}

fn unsupported(why: String) -> Error {
    Error::Unsupported(why)
}

/// The v3 `numcodecs.<id>` codec of a v2 array filter receiving `elem`, from the filter's own
/// configuration (`to_json`). Its dtype members name the elements in the v3 chain, which are native
/// (little-endian): a big-endian v2 dtype becomes the little-endian one (the `bytes` codec restores
/// the stored order).
fn array_filter(filter: &dyn BytesToBytesCodec, id: &str, elem: &V2Elem) -> Result<Value> {
    let mut json = filter.to_json();
    if let Some(m) = json.as_object_mut() {
        for key in numcodecs::DTYPE_MEMBERS {
            if let Some(Value::String(s)) = m.get(key) {
                let parsed = V2Elem::parse(s)?;
                let received = key == "dtype" || key == "decode_dtype";
                if received && parsed.data_type.size() > 1 && elem.data_type.size() > 1 && parsed.byte_order != elem.byte_order {
                    return Err(unsupported(format!(
                        "v2 filter '{id}': {key} '{s}' reinterprets the byte order of the elements it receives; no Zarr v3 equivalent"
                    )));
                }
                if let Some(rest) = s.strip_prefix('>') {
                    let little = format!("<{rest}");
                    m.insert(key.into(), Value::from(little));
                }
            }
        }
    }
    Ok(numcodecs::v3::v3_metadata(json))
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
    let t = crate::dtype::v2::parse_typestr(typestr)?;
    let rank = meta.shape.len();
    let fortran = doc.get("order").and_then(Value::as_str) == Some("F") && rank > 1;
    let mut codecs = Vec::new();
    if fortran {
        codecs.push(TransposeCodec::new((0..rank).rev().collect())?.to_json());
    }
    // Single-byte elements have no byte order.
    let bytes_codec = |e: &V2Elem| {
        BytesCodec::new(&e.data_type, e.byte_order.filter(|_| e.data_type.size() > 1)).to_json()
    };
    // The elements each codec receives, as in the v2 pipeline.
    let mut elem = V2Elem { data_type: meta.data_type.clone(), byte_order: t.byte_order };
    let mut arrays = true;
    let filters = doc.get("filters").and_then(Value::as_array).cloned().unwrap_or_default();
    for f in &filters {
        let id = f.get("id").and_then(Value::as_str).unwrap_or("?");
        let (codec, out) = numcodecs::filter(f, &elem).map_err(|e| match e {
            Error::Unsupported(m) => unsupported(format!("v2 filter '{id}' has no Zarr v3 equivalent ({m})")),
            e => e.context(format!("v2 filter '{id}'")),
        })?;
        let entry = registry::numcodecs(id);
        if entry.is_some_and(|n| n.under_v3 == Some(UnderV3::ArrayToArray)) {
            if !arrays {
                return Err(unsupported(format!("v2 filter '{id}' after a bytes filter has no Zarr v3 equivalent")));
            }
            if fortran && entry.is_some_and(|n| !n.elementwise) {
                return Err(unsupported(format!("v2 filter '{id}' on an order \"F\" array has no Zarr v3 equivalent")));
            }
            codecs.push(array_filter(codec.as_ref(), id, &elem)?);
        } else {
            if arrays {
                codecs.push(bytes_codec(&elem));
                arrays = false;
            }
            codecs.push(numcodecs::v3::v3_metadata(codec.to_json()));
        }
        elem = out;
    }
    if arrays {
        codecs.push(bytes_codec(&elem));
    }
    let is_array_filter = |n: &str| registry::numcodecs_under_v3(n).is_some_and(|(_, kind)| kind == UnderV3::ArrayToArray);
    if codecs.iter().any(|c| c["name"].as_str().is_some_and(is_array_filter))
        && codecs.iter().any(|c| c["name"] == "bytes" && c["configuration"]["endian"] == "big")
    {
        // zarr-python 3 hands numcodecs filters the big-endian array the bytes codec decodes, which
        // they reinterpret as native: such an array would read wrongly there.
        return Err(unsupported(
            "big-endian elements stored by a v2 filter: zarr-python 3 reads numcodecs filters over big-endian bytes in the wrong byte order".into(),
        ));
    }
    match doc.get("compressor") {
        None | Some(Value::Null) => {}
        Some(c) => {
            let id = c.get("id").and_then(Value::as_str).unwrap_or("?");
            let codec = numcodecs::compressor(c, &elem).map_err(|e| match e {
                Error::Unsupported(_) => unsupported(format!("v2 compressor '{id}' has no Zarr v3 codec")),
                e => e.context(format!("v2 compressor '{id}'")),
            })?;
            codecs.push(numcodecs::v3::v3_metadata(codec.to_json()));
        }
    }
    let separator = match doc.get("dimension_separator").and_then(Value::as_str) {
        Some("/") => "/",
        _ => ".",
    };
    let mut doc = json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": meta.shape,
        "data_type": meta.data_type.to_v3_json()?,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": meta.chunk_shape()}},
        "chunk_key_encoding": {"name": "v2", "configuration": {"separator": separator}},
        "fill_value": fill_value::to_json_v3(&meta.data_type, &meta.fill_value),
        "codecs": codecs,
    });
    // placed, not serialised by `json!`, which refuses bare NaN / Infinity attributes (see json_text)
    doc["attributes"] = Value::Object(attrs);
    Ok(doc)
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
    fn converts_filters_and_numcodecs_compressors() {
        for (dtype, order, filters, compressor) in [
            ("<i4", "C", json!([{"id": "delta", "dtype": "<i4", "astype": "<i8"}, {"id": "shuffle", "elementsize": 8}]),
                json!({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": -1, "blocksize": 0})),
            ("<i4", "C", json!([{"id": "delta", "dtype": "<i4"}]), json!({"id": "zlib", "level": 1})),
            ("<f8", "F", json!([{"id": "fixedscaleoffset", "offset": 100, "scale": 10, "dtype": "<f8", "astype": "|u1"}]),
                json!({"id": "lz4", "acceleration": 1})),
            (">f4", "C", json!([{"id": "astype", "encode_dtype": "<f8", "decode_dtype": ">f4"}, {"id": "crc32"}]),
                json!({"id": "bz2", "level": 1})),
            ("<u2", "C", json!(null), json!({"id": "lzma", "format": 1, "check": -1, "preset": null, "filters": null})),
            ("<u2", "C", json!([{"id": "adler32"}]), json!({"id": "fletcher32"})),
            ("|b1", "C", json!([{"id": "packbits"}]), json!({"id": "crc32c"})),
            ("<f4", "C", json!([{"id": "quantize", "digits": 2, "dtype": "<f4"}, {"id": "bitround", "keepbits": 4}]), json!(null)),
        ] {
            let store = Arc::new(MemoryStore::new());
            let z = json!({"zarr_format": 2, "shape": [5, 7], "chunks": [2, 3], "dtype": dtype, "fill_value": 0,
                "order": order, "filters": filters, "compressor": compressor});
            v2_array(&store, z.clone());
            // what the v2 array reads (lossy filters: the stored values)
            let a = Array::open(store.clone(), "a", false).unwrap();
            let mut before = vec![0u8; 35 * a.metadata().data_type.size()];
            a.read_region(&[0, 0], &[5, 7], &mut before).unwrap();
            let chunks_before: Vec<_> = store.keys().into_iter().filter(|k| !k.contains(".z")).map(|k| (store.get(&k).unwrap(), k)).collect();
            v2_to_v3(store.as_ref(), "a").unwrap_or_else(|e| panic!("{z}: {e}"));
            let a = Array::open(store.clone(), "a", false).unwrap();
            let mut after = vec![0u8; before.len()];
            a.read_region(&[0, 0], &[5, 7], &mut after).unwrap();
            assert_eq!(after, before, "{z}");
            for (bytes, k) in chunks_before {
                assert_eq!(store.get(&k).unwrap(), bytes, "chunk {k} unchanged");
            }
        }
    }

    #[test]
    fn codec_metadata_comes_from_the_codecs() {
        let store = Arc::new(MemoryStore::new());
        v2_array(&store, json!({"zarr_format": 2, "shape": [4, 6], "chunks": [2, 3], "dtype": "|u1", "fill_value": 0,
            "order": "F", "filters": [{"id": "fixedscaleoffset", "offset": 1, "scale": 2, "dtype": "|u1"}, {"id": "crc32"}],
            "compressor": {"id": "blosc", "cname": "zstd", "clevel": 2, "shuffle": -1}}));
        v2_to_v3(store.as_ref(), "a").unwrap();
        let doc: Value = serde_json::from_slice(&store.get("a/zarr.json").unwrap().unwrap()).unwrap();
        assert_eq!(
            doc["codecs"],
            json!([
                {"name": "transpose", "configuration": {"order": [1, 0]}},
                {"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 1, "scale": 2, "dtype": "|u1", "astype": "|u1"}},
                {"name": "bytes"},
                {"name": "numcodecs.crc32", "configuration": {"location": "start"}},
                // numcodecs' automatic shuffle of 1-byte elements is the bit shuffle
                {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 2, "shuffle": "bitshuffle", "typesize": 1, "blocksize": 0}},
            ])
        );
    }

    #[test]
    fn refuses_what_has_no_v3_equivalent() {
        for (dtype, order, filters, compressor, why) in [
            (json!("<i4"), "C", json!([{"id": "nonesuch"}]), json!(null), "filter 'nonesuch'"),
            (json!("<i4"), "C", json!(null), json!({"id": "nonesuch", "level": 1}), "compressor 'nonesuch'"),
            (json!("<i4"), "C", json!([{"id": "shuffle"}, {"id": "delta"}]), json!(null), "after a bytes filter"),
            (json!("<i4"), "F", json!([{"id": "delta"}]), json!(null), "order"),
            (json!("<i4"), "C", json!([{"id": "delta", "dtype": ">i4"}]), json!(null), "byte order"),
            (json!(">i4"), "C", json!([{"id": "delta", "dtype": ">i4"}]), json!(null), "big-endian"),
            (json!("<M8[ns]"), "C", json!(null), json!(null), "datetime"),
            (json!([["x", "<f4"]]), "C", json!(null), json!(null), "structured"),
        ] {
            let store = MemoryStore::new();
            let z = json!({"zarr_format": 2, "shape": [4, 4], "chunks": [2, 2], "dtype": dtype, "fill_value": 0,
                "order": order, "filters": filters, "compressor": compressor});
            store.set("a/.zarray", z.to_string().as_bytes()).unwrap();
            let e = v2_to_v3(&store, "a").unwrap_err();
            assert!(matches!(e, Error::Unsupported(_)), "{why}: {e}");
            assert!(e.message().contains(why), "{why}: {e}");
            assert!(store.get("a/zarr.json").unwrap().is_none());
            assert!(store.get("a/.zarray").unwrap().is_some());
        }
        assert!(matches!(v2_to_v3(&MemoryStore::new(), "x"), Err(Error::NotFound(_))));
    }
}
