//! Zarr v3 `zarr.json` documents: validation and parsing into [`ArrayMetadata`] / [`GroupMetadata`].
//!
//! Every member is checked; an unknown member or extension is refused (naming it) unless it is marked
//! `"must_understand": false`.

use super::{take_attributes, ArrayMetadata, GroupMetadata};
use crate::dtype::fill_value;
use crate::chunk_grid::rectilinear::RectilinearGrid;
use crate::chunk_grid::{ChunkGrid, RegularGrid};
use crate::chunk_key::ChunkKeyEncoding;
use crate::codec::chain::CodecChain;
use crate::codec::ArrayRepr;
use crate::format::extension::Extension;
use crate::dtype::{DataType, Endian};
use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The kind of node a `zarr.json` describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeType {
    /// An array.
    Array,
    /// A group.
    Group,
}

fn meta_err(msg: impl Into<String>) -> Error {
    Error::Metadata(msg.into())
}

/// Checks `zarr_format` and returns the node type of a v3 document.
pub fn node_type(doc: &Value) -> Result<NodeType> {
    let obj = doc.as_object().ok_or_else(|| meta_err("expected a JSON object"))?;
    match obj.get("zarr_format") {
        Some(v) if v.as_u64() == Some(3) => {}
        Some(v) => return Err(meta_err(format!("zarr_format must be 3, got {v}"))),
        None => return Err(meta_err("missing zarr_format")),
    }
    match obj.get("node_type").and_then(Value::as_str) {
        Some("array") => Ok(NodeType::Array),
        Some("group") => Ok(NodeType::Group),
        Some(other) => Err(meta_err(format!("node_type must be \"array\" or \"group\", got \"{other}\""))),
        None => Err(meta_err("missing or non-string node_type")),
    }
}

/// Checks an unknown member: allowed only as an object with `"must_understand": false`.
fn check_unknown_member(key: &str, v: &Value) -> Result<()> {
    let ignorable = v.as_object().and_then(|o| o.get("must_understand")).and_then(Value::as_bool) == Some(false);
    if ignorable {
        Ok(())
    } else {
        Err(Error::Unsupported(format!(
            "unknown member '{key}' (not marked \"must_understand\": false)"
        )))
    }
}

fn u64_list(v: &Value, what: &str) -> Result<Vec<u64>> {
    let list = v.as_array().ok_or_else(|| meta_err(format!("{what} must be a list of integers, got {v}")))?;
    list.iter()
        .map(|x| x.as_u64().ok_or_else(|| meta_err(format!("{what} entries must be non-negative integers, got {x}"))))
        .collect()
}

/// The byte order the array -> bytes codec stores elements in, looked up without building the codec
/// chain (base64 fill values of structured types are in that order): the `endian` of the `bytes`
/// codec, inside `sharding_indexed` too; little-endian when absent (as zarr-python's legacy
/// `structured` type requires).
fn stored_endian(codecs: &Value) -> Endian {
    for c in codecs.as_array().map(Vec::as_slice).unwrap_or_default() {
        let Ok(ext) = Extension::parse(c, "codec") else { continue };
        match ext.name {
            "bytes" => {
                return match ext.configuration.and_then(|m| m.get("endian")).and_then(Value::as_str) {
                    Some("big") => Endian::Big,
                    _ => Endian::Little,
                }
            }
            "sharding_indexed" => {
                if let Some(inner) = ext.configuration.and_then(|m| m.get("codecs")) {
                    return stored_endian(inner);
                }
            }
            _ => {}
        }
    }
    Endian::Little
}

fn parse_grid(v: &Value, shape: &[u64]) -> Result<Arc<dyn ChunkGrid>> {
    let rank = shape.len();
    let ext = Extension::parse(v, "chunk_grid")?;
    match ext.name {
        "regular" => {}
        "rectilinear" => return Ok(Arc::new(RectilinearGrid::from_v3(ext.configuration, shape)?)),
        _ => return Err(Error::Unsupported(format!("unsupported chunk_grid '{}'", ext.name))),
    }
    let cfg = ext.configuration.ok_or_else(|| meta_err("chunk_grid 'regular' needs a configuration"))?;
    if let Some(k) = cfg.keys().find(|k| *k != "chunk_shape") {
        return Err(meta_err(format!("chunk_grid 'regular': unknown configuration member '{k}'")));
    }
    let cs = cfg.get("chunk_shape").ok_or_else(|| meta_err("chunk_grid 'regular': missing chunk_shape"))?;
    let cs = u64_list(cs, "chunk_shape")?;
    if cs.len() != rank {
        return Err(meta_err(format!("chunk_shape {cs:?} has {} dimensions, shape has {rank}", cs.len())));
    }
    Ok(Arc::new(RegularGrid::new(cs)?))
}

fn parse_dimension_names(v: &Value, rank: usize) -> Result<Option<Vec<Option<String>>>> {
    if v.is_null() {
        return Ok(None);
    }
    let list = v.as_array().ok_or_else(|| meta_err(format!("dimension_names must be a list, got {v}")))?;
    if list.len() != rank {
        return Err(meta_err(format!("dimension_names has {} entries, shape has {rank}", list.len())));
    }
    list.iter()
        .map(|n| match n {
            Value::String(s) => Ok(Some(s.clone())),
            Value::Null => Ok(None),
            _ => Err(meta_err(format!("dimension_names entries must be strings or null, got {n}"))),
        })
        .collect::<Result<Vec<Option<String>>>>()
        .map(Some)
}

fn parse_storage_transformers(v: &Value) -> Result<()> {
    let list = v.as_array().ok_or_else(|| meta_err(format!("storage_transformers must be a list, got {v}")))?;
    for t in list {
        let ext = Extension::parse(t, "storage transformer")?;
        if ext.must_understand {
            return Err(Error::Unsupported(format!("unsupported storage transformer '{}'", ext.name)));
        }
    }
    Ok(())
}

/// Parses and validates a v3 array document, which becomes the metadata's `document` (its
/// `attributes` taken out into `attributes`, see [`take_attributes`]: no part of it is copied).
pub fn parse_array(mut doc: Value) -> Result<ArrayMetadata> {
    if node_type(&doc)? != NodeType::Array {
        return Err(meta_err("node_type is \"group\", not \"array\""));
    }
    let obj = doc.as_object().unwrap();
    let get = |k: &str| obj.get(k).ok_or_else(|| meta_err(format!("missing required member '{k}'")));
    for (k, v) in obj {
        match k.as_str() {
            "zarr_format" | "node_type" | "shape" | "data_type" | "chunk_grid" | "chunk_key_encoding" | "fill_value"
            | "codecs" | "attributes" | "dimension_names" => {}
            "storage_transformers" => parse_storage_transformers(v)?,
            _ => check_unknown_member(k, v)?,
        }
    }
    let shape = u64_list(get("shape")?, "shape")?;
    super::check_shape_size(&shape)?;
    let data_type = DataType::from_v3_json(get("data_type")?)?;
    let grid = parse_grid(get("chunk_grid")?, &shape)?;
    let cke = Extension::parse(get("chunk_key_encoding")?, "chunk_key_encoding")?;
    let chunk_key_encoding = ChunkKeyEncoding::from_v3(cke.name, cke.configuration)?;
    let fill = fill_value::parse_v3_stored(&data_type, get("fill_value")?, stored_endian(get("codecs")?))?;
    let dimension_names = match obj.get("dimension_names") {
        Some(v) => parse_dimension_names(v, shape.len())?,
        None => None,
    };
    let first_chunk = grid.chunk_shape_at(&vec![0; shape.len()]);
    let repr = ArrayRepr { shape: first_chunk, data_type: data_type.clone(), fill_value: fill.clone() };
    let codecs = CodecChain::from_v3(get("codecs")?, &repr)?;
    let attributes = take_attributes(doc.as_object_mut().unwrap())?;
    let meta = ArrayMetadata {
        zarr_format: 3,
        shape,
        data_type,
        grid,
        chunk_key_encoding,
        fill_value: fill,
        codecs: Arc::new(codecs),
        other_chains: Default::default(),
        dimension_names,
        attributes,
        document: doc,
        fill_defined: true,
    };
    meta.check_chunk_shapes()?;
    Ok(meta)
}

/// Parses and validates a v3 group document, which becomes the metadata's `document` (its
/// `attributes` taken out, see [`take_attributes`]).
pub fn parse_group(mut doc: Value) -> Result<GroupMetadata> {
    if node_type(&doc)? != NodeType::Group {
        return Err(meta_err("node_type is \"array\", not \"group\""));
    }
    let obj = doc.as_object().unwrap();
    for (k, v) in obj {
        match k.as_str() {
            "zarr_format" | "node_type" | "attributes" => {}
            // zarr-python's consolidated metadata: `null`, or an object marked must_understand false.
            "consolidated_metadata" if v.is_null() => {}
            _ => check_unknown_member(k, v)?,
        }
    }
    let attributes = take_attributes(doc.as_object_mut().unwrap())?;
    Ok(GroupMetadata { zarr_format: 3, attributes, document: doc })
}

/// A new group document with the given attributes.
pub fn group_document(attributes: &Map<String, Value>) -> Value {
    // attributes are placed, not serialised by `json!`: serde_json's `to_value` refuses the bare NaN /
    // Infinity numbers that attributes may hold (see `json_text`)
    let mut doc = serde_json::json!({"zarr_format": 3, "node_type": "group"});
    doc["attributes"] = Value::Object(attributes.clone());
    doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({
            "zarr_format": 3, "node_type": "array", "shape": [10, 20], "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 6]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": "NaN",
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "attributes": {"a": 1},
            "dimension_names": ["y", null]
        })
    }

    fn with(k: &str, v: Value) -> Value {
        let mut d = base();
        d[k] = v;
        d
    }

    fn without(k: &str) -> Value {
        let mut d = base();
        d.as_object_mut().unwrap().remove(k);
        d
    }

    #[test]
    fn parses_valid() {
        let m = parse_array(base()).unwrap();
        assert_eq!(m.shape, [10, 20]);
        assert_eq!(m.chunk_shape(), [5, 6]);
        assert_eq!(m.fill_value, 0x7fc0_0000u32.to_ne_bytes());
        assert_eq!(m.dimension_names, Some(vec![Some("y".into()), None]));
        assert_eq!(m.attributes["a"], 1);
    }

    #[test]
    fn errors_are_specific() {
        let meta = |d: Value| matches!(parse_array(d), Err(Error::Metadata(_)));
        let unsup = |d: Value| matches!(parse_array(d), Err(Error::Unsupported(_)));
        assert!(meta(with("zarr_format", json!(2))));
        assert!(meta(without("shape")));
        assert!(meta(without("fill_value")));
        assert!(meta(without("codecs")));
        assert!(meta(without("chunk_key_encoding")));
        assert!(meta(with("shape", json!([10]))));
        assert!(meta(with("shape", json!([10, -1]))));
        assert!(meta(with("chunk_grid", json!({"name": "regular", "configuration": {"chunk_shape": [0, 1]}}))));
        assert!(meta(with("dimension_names", json!(["a"]))));
        assert!(meta(with("attributes", json!([]))));
        assert!(meta(with("fill_value", json!("nan"))));
        assert!(unsup(with("data_type", json!("float8"))));
        assert!(meta(with("chunk_grid", json!({"name": "rectilinear", "configuration": {}}))));
        assert!(unsup(with("chunk_grid", json!({"name": "hexagonal", "configuration": {}}))));
        assert!(unsup(with("chunk_key_encoding", json!({"name": "mine"}))));
        assert!(unsup(with("storage_transformers", json!([{"name": "x"}]))));
        assert!(parse_array(with("storage_transformers", json!([]))).is_ok());
        assert!(parse_array(with("storage_transformers", json!([{"name": "x", "must_understand": false}]))).is_ok());
        let e = parse_array(with("zz_ext", json!({"name": "zz_ext"}))).unwrap_err();
        assert!(matches!(&e, Error::Unsupported(m) if m.contains("zz_ext")), "{e}");
        assert!(unsup(with("zz_ext", json!(1))));
        assert!(parse_array(with("zz_ext", json!({"must_understand": false, "x": 1}))).is_ok());
        assert!(meta(with("node_type", json!("group"))));
    }

    #[test]
    fn groups() {
        let g = parse_group(json!({"zarr_format": 3, "node_type": "group"})).unwrap();
        assert!(g.attributes.is_empty());
        assert!(parse_group(json!({"zarr_format": 3, "node_type": "group", "consolidated_metadata": null})).is_ok());
        assert!(matches!(
            parse_group(json!({"zarr_format": 3, "node_type": "group", "x": {}})),
            Err(Error::Unsupported(_))
        ));
        assert!(parse_group(base()).is_err());
        assert_eq!(node_type(&group_document(&Map::new())).unwrap(), NodeType::Group);
    }
}
