//! Zarr v2 `.zarray` documents, normalised into [`ArrayMetadata`]: `order: "F"` becomes a transpose
//! codec, the dtype's byte order the `bytes` codec, then the filters and the compressor follow as
//! bytes->bytes codecs; chunk keys use the `v2` encoding with the document's `dimension_separator`.
//! Attributes live in `.zattrs`; groups are `.zgroup`.

use super::{ArrayMetadata, GroupMetadata};
use crate::dtype::fill_value;
use crate::chunk_grid::RegularGrid;
use crate::chunk_key::ChunkKeyEncoding;
use crate::codec::serialize::bytes::BytesCodec;
use crate::codec::chain::CodecChain;
use crate::codec::numcodecs::{self, V2Elem};
use crate::codec::registry::{self, V2Build};
use crate::codec::filter::transpose::TransposeCodec;
use crate::codec::{ArrayRepr, Codec};
use crate::dtype::v2 as dtv2;
use crate::dtype::{DataType, Endian};
use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::sync::Arc;

/// A metadata error with `msg`.
pub(super) fn meta_err(msg: impl Into<String>) -> Error {
    Error::Metadata(msg.into())
}

/// The list of non-negative integers `v` (member `what`, required).
pub(super) fn dims(v: Option<&Value>, what: &str) -> Result<Vec<u64>> {
    let v = v.ok_or_else(|| meta_err(format!("missing required member '{what}'")))?;
    let list = v.as_array().ok_or_else(|| meta_err(format!("{what} must be a list of integers, got {v}")))?;
    list.iter()
        .map(|x| x.as_u64().ok_or_else(|| meta_err(format!("{what} entries must be non-negative integers, got {x}"))))
        .collect()
}

/// The members of a v2 metadata document (`.zarray`, `.zgroup`): a JSON object with `zarr_format` 2.
fn v2_object(doc: &Value) -> Result<&Map<String, Value>> {
    let obj = doc.as_object().ok_or_else(|| meta_err("expected a JSON object"))?;
    match obj.get("zarr_format") {
        Some(v) if v.as_u64() == Some(2) => Ok(obj),
        Some(v) => Err(meta_err(format!("zarr_format must be 2, got {v}"))),
        None => Err(meta_err("missing zarr_format")),
    }
}

/// Parses and validates a `.zarray` document; `attributes` come from `.zattrs`.
pub fn parse_array(doc: &Value, attributes: Map<String, Value>) -> Result<ArrayMetadata> {
    let obj = v2_object(doc)?;
    let shape = dims(obj.get("shape"), "shape")?;
    let chunks = dims(obj.get("chunks"), "chunks")?;
    if chunks.len() != shape.len() {
        return Err(meta_err(format!("chunks {chunks:?} has {} dimensions, shape has {}", chunks.len(), shape.len())));
    }
    let grid = RegularGrid::new(chunks)?;
    let separator = match obj.get("dimension_separator") {
        None | Some(Value::Null) => '.',
        Some(Value::String(s)) if s == "." => '.',
        Some(Value::String(s)) if s == "/" => '/',
        Some(v) => return Err(meta_err(format!("dimension_separator must be \".\" or \"/\", got {v}"))),
    };
    let order = match obj.get("order") {
        None | Some(Value::Null) => "C",
        Some(Value::String(s)) if s == "C" || s == "F" => s.as_str(),
        Some(v) => return Err(meta_err(format!("order must be \"C\" or \"F\", got {v}"))),
    };
    let dtype_v = obj.get("dtype").ok_or_else(|| meta_err("missing required member 'dtype'"))?;
    if matches!(dtype_v.as_str(), Some("|O" | "O")) {
        let parts = ObjectParts { shape, grid, separator, order, attributes };
        return parse_object_array(obj, doc, parts);
    }
    let (v2t, fill, fill_defined) = typed_fill(dtype_v, obj.get("fill_value"))?;
    let data_type = v2t.data_type.clone();
    let rank = shape.len();
    // numcodecs' array -> bytes compressors (`pcodec`, `zfpy`) take the place of the bytes codec.
    let compressor_id = obj.get("compressor").and_then(|c| c.get("id")).and_then(Value::as_str);
    let array_to_bytes = compressor_id.and_then(|id| match registry::numcodecs(id)?.build {
        V2Build::ArrayToBytes { fortran, .. } => Some((id, fortran)),
        _ => None,
    });
    let codecs = if let Some((id, fortran_ok)) = array_to_bytes {
        let has_filters = matches!(obj.get("filters"), Some(Value::Array(l)) if !l.is_empty());
        if has_filters {
            return Err(Error::Unsupported(format!("v2 compressor '{id}' after filters")));
        }
        if v2t.byte_order.is_some_and(|e| e != numcodecs::v3::native()) {
            return Err(Error::Unsupported(format!("v2 compressor '{id}' on a non-native byte order (numcodecs refuses it)")));
        }
        if !fortran_ok && order == "F" && rank > 1 {
            return Err(Error::Unsupported(format!("v2 compressor '{id}' with order \"F\" (numcodecs refuses it)")));
        }
        let mut codecs = Vec::new();
        push_fortran_transpose(&mut codecs, order == "F", rank)?;
        let mut chunk_shape = grid.chunk_shape.clone();
        if order == "F" {
            chunk_shape.reverse();
        }
        let repr = ArrayRepr { shape: chunk_shape, data_type: data_type.clone(), fill_value: fill.clone() };
        let cfg = &obj["compressor"];
        codecs.push(Codec::ArrayToBytes(numcodecs::v3::array_to_bytes(cfg, &repr, cfg.clone())?));
        codecs
    } else {
        numeric_codecs(&data_type, v2t.byte_order, order == "F", rank, filters(obj)?, compressor(obj)?)?
    };
    let fixed = Fixed { zarr_format: 2, shape, grid, separator, attributes, document: complete(doc) };
    assemble(fixed, data_type, fill, fill_defined, codecs)
}

/// A v1 / v2 `dtype` of fixed-size elements and the document's `fill_value` in it: the parsed type,
/// the fill value's bytes (zero where the document has `null` or none) and whether it defines one.
pub(super) fn typed_fill(dtype: &Value, fill_value: Option<&Value>) -> Result<(dtv2::V2Type, Vec<u8>, bool)> {
    let t = dtv2::parse(dtype)?;
    let given = fill_value::parse_v2_typed(&t.data_type, t.byte_order, t.text, fill_value.unwrap_or(&Value::Null))?;
    let defined = given.is_some();
    let fill = given.unwrap_or_else(|| vec![0; t.data_type.size()]);
    Ok((t, fill, defined))
}

/// The members of a v1 `meta` or v2 `.zarray` document that do not depend on its data type.
pub(super) struct Fixed {
    /// 1 or 2.
    pub zarr_format: u8,
    /// Array shape.
    pub shape: Vec<u64>,
    /// The regular chunk grid.
    pub grid: RegularGrid,
    /// Chunk key separator of the `v2` chunk key encoding.
    pub separator: char,
    /// User attributes.
    pub attributes: Map<String, Value>,
    /// The document as stored.
    pub document: Value,
}

/// The [`ArrayMetadata`] of a v1 or v2 array: `codecs` become its chain for chunks of the grid's
/// shape; `fill_defined` is false where the document's fill value is `null` (`fill` then holds the
/// value readers use for missing chunks).
pub(super) fn assemble(f: Fixed, data_type: DataType, fill: Vec<u8>, fill_defined: bool, codecs: Vec<Codec>) -> Result<ArrayMetadata> {
    super::check_shape_size(&f.shape)?;
    let repr = ArrayRepr { shape: f.grid.chunk_shape.clone(), data_type: data_type.clone(), fill_value: fill.clone() };
    let chain = CodecChain::new(codecs, &repr)?;
    Ok(ArrayMetadata {
        zarr_format: f.zarr_format,
        shape: f.shape,
        data_type,
        grid: Arc::new(f.grid),
        other_chains: Default::default(),
        chunk_key_encoding: ChunkKeyEncoding::V2 { separator: f.separator },
        fill_value: fill,
        codecs: Arc::new(chain),
        dimension_names: None,
        attributes: f.attributes,
        document: f.document,
        fill_defined,
    })
}

/// The codecs of a v1 or v2 array of fixed-size elements stored with `byte_order`: a transpose for
/// `fortran` order (of `rank` > 1 dimensions), the `bytes` codec, then the numcodecs `filters` and `compressor` as bytes -> bytes
/// codecs, each receiving what the one before produces.
pub(super) fn numeric_codecs(
    data_type: &DataType,
    byte_order: Option<Endian>,
    fortran: bool,
    rank: usize,
    filters: &[Value],
    compressor: Option<&Value>,
) -> Result<Vec<Codec>> {
    let mut codecs = Vec::new();
    push_fortran_transpose(&mut codecs, fortran, rank)?;
    codecs.push(Codec::ArrayToBytes(Box::new(BytesCodec::new(data_type, byte_order))));
    let elem = V2Elem { data_type: data_type.clone(), byte_order };
    push_numcodecs(&mut codecs, elem, filters, compressor)?;
    Ok(codecs)
}

/// Appends the transpose codec that stores a `fortran` order array of `rank` > 1 dimensions.
fn push_fortran_transpose(codecs: &mut Vec<Codec>, fortran: bool, rank: usize) -> Result<()> {
    if fortran && rank > 1 {
        codecs.push(Codec::ArrayToArray(Box::new(TransposeCodec::new((0..rank).rev().collect())?)));
    }
    Ok(())
}

/// Appends the numcodecs `filters` and then `compressor` as bytes -> bytes codecs, the first
/// receiving `elem`.
fn push_numcodecs(codecs: &mut Vec<Codec>, mut elem: V2Elem, filters: &[Value], compressor: Option<&Value>) -> Result<()> {
    for f in filters {
        let (codec, out) = numcodecs::filter(f, &elem)?;
        codecs.push(Codec::BytesToBytes(codec));
        elem = out;
    }
    if let Some(c) = compressor {
        codecs.push(Codec::BytesToBytes(numcodecs::compressor(c, &elem)?));
    }
    Ok(())
}

/// The `filters` of a `.zarray` (`null` or absent: none).
fn filters(obj: &Map<String, Value>) -> Result<&[Value]> {
    match obj.get("filters") {
        Some(Value::Array(list)) => Ok(list),
        None | Some(Value::Null) => Ok(&[]),
        Some(v) => Err(meta_err(format!("filters must be a list or null, got {v}"))),
    }
}

/// The `compressor` of a `.zarray` (`null` or absent: none).
fn compressor(obj: &Map<String, Value>) -> Result<Option<&Value>> {
    match obj.get("compressor") {
        None | Some(Value::Null) => Ok(None),
        Some(c @ Value::Object(_)) => Ok(Some(c)),
        Some(v) => Err(meta_err(format!("compressor must be an object or null, got {v}"))),
    }
}

/// The members of a `.zarray` parsed before its dtype.
struct ObjectParts<'a> {
    shape: Vec<u64>,
    grid: RegularGrid,
    separator: char,
    order: &'a str,
    attributes: Map<String, Value>,
}

/// An object (`|O`) array: its first filter must be numcodecs' `vlen-utf8`, `vlen-bytes` or
/// `vlen-array`, which becomes the array -> bytes codec; the other filters and the compressor follow
/// as bytes -> bytes codecs over the framed chunk.
fn parse_object_array(obj: &Map<String, Value>, doc: &Value, p: ObjectParts) -> Result<ArrayMetadata> {
    let filters = filters(obj)?;
    let no_codec = || {
        Error::Unsupported(
            "v2 object dtype '|O' needs a vlen-utf8, vlen-bytes or vlen-array filter first (other object codecs \
             such as pickle, json or msgpack are not supported)"
                .into(),
        )
    };
    let first = filters.first().ok_or_else(no_codec)?;
    let cfg = numcodecs::V2Config::new(first)?;
    let vlen = match registry::numcodecs(cfg.id).map(|n| n.build) {
        Some(V2Build::Object(build)) => build(&cfg)?,
        _ => return Err(no_codec()),
    };
    let data_type = vlen.data_type();
    let fill_given = fill_value::parse_v2_vlen(&data_type, obj.get("fill_value").unwrap_or(&Value::Null))?;
    if let Some(f) = &fill_given {
        vlen.check_element(f).map_err(|why| meta_err(format!("fill_value: {why}")))?;
    }
    let fill_defined = fill_given.is_some();
    let fill = fill_given.unwrap_or_default();
    // order "F": the elements are framed in Fortran order, a transpose as for fixed-size elements
    let mut codecs = Vec::new();
    push_fortran_transpose(&mut codecs, p.order == "F", p.shape.len())?;
    codecs.push(Codec::ArrayToBytes(Box::new(vlen)));
    push_numcodecs(&mut codecs, V2Elem::bytes(), &filters[1..], compressor(obj)?)?;
    let fixed = Fixed {
        zarr_format: 2,
        shape: p.shape,
        grid: p.grid,
        separator: p.separator,
        attributes: p.attributes,
        document: complete(doc),
    };
    assemble(fixed, data_type, fill, fill_defined, codecs)
}

/// The `.zarray` document with every member the v2 spec requires present (absent optional ones
/// filled with their defaults), as libzarr stores it: readers such as zarr-python need them all.
fn complete(doc: &Value) -> Value {
    let mut out = doc.clone();
    if let Value::Object(o) = &mut out {
        for (k, default) in [("compressor", Value::Null), ("fill_value", Value::Null), ("order", Value::from("C")), ("filters", Value::Null)] {
            o.entry(k).or_insert(default);
        }
    }
    out
}

/// Parses a `.zgroup` document; `attributes` come from `.zattrs`.
pub fn parse_group(doc: &Value, attributes: Map<String, Value>) -> Result<GroupMetadata> {
    v2_object(doc)?;
    Ok(GroupMetadata { zarr_format: 2, attributes, document: doc.clone() })
}

/// A new `.zgroup` document.
pub fn group_document() -> Value {
    serde_json::json!({"zarr_format": 2})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DataType;
    use serde_json::json;

    fn base() -> Value {
        json!({"zarr_format": 2, "shape": [10, 7], "chunks": [4, 3], "dtype": ">i2", "fill_value": -5,
               "order": "F", "filters": null, "compressor": {"id": "zlib", "level": 1}, "dimension_separator": "/"})
    }

    #[test]
    fn parses_and_round_trips() {
        let m = parse_array(&base(), Map::new()).unwrap();
        assert_eq!(m.data_type, DataType::Int16);
        assert_eq!(m.fill_value, (-5i16).to_ne_bytes());
        assert_eq!(m.chunk_key_encoding.key(&[1, 2]), "1/2");
        // F order + big-endian: encoding a chunk puts element (i, j) at i + 4 j, big-endian
        let data: Vec<u8> = (0..12i16).flat_map(|v| v.to_ne_bytes()).collect();
        let enc = m.codecs.encode_chunk(&data).unwrap().into_owned();
        let mut raw = vec![0u8; 24];
        crate::codec::compress::deflate::inflate_into(crate::codec::compress::deflate::Framing::Zlib, "zlib", &enc, &mut raw, true).unwrap();
        let stored: Vec<i16> = raw.chunks(2).map(|c| i16::from_be_bytes([c[0], c[1]])).collect();
        assert_eq!(stored, [0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11]);
        let mut back = vec![0u8; 24];
        m.codecs.decode_chunk(&enc, &mut back).unwrap();
        assert_eq!(back, data);
    }

    #[test]
    fn errors() {
        let with = |k: &str, v: Value| {
            let mut d = base();
            d[k] = v;
            parse_array(&d, Map::new())
        };
        assert!(matches!(with("zarr_format", json!(3)), Err(Error::Metadata(_))));
        assert!(matches!(with("chunks", json!([4])), Err(Error::Metadata(_))));
        assert!(matches!(with("order", json!("X")), Err(Error::Metadata(_))));
        assert!(matches!(with("compressor", json!({"id": "zz_comp"})), Err(Error::Unsupported(m)) if m.contains("zz_comp")));
        assert!(matches!(with("filters", json!([{"id": "zz_filter"}])), Err(Error::Unsupported(m)) if m.contains("zz_filter")));
        // an object array needs a vlen filter first
        assert!(matches!(with("dtype", json!("|O")), Err(Error::Unsupported(_))));
        assert!(matches!(with("filters", json!([{"id": "vlen-utf8"}])), Err(Error::Unsupported(_))));
        assert!(matches!(with("dimension_separator", json!("-")), Err(Error::Metadata(_))));
        assert!(with("fill_value", Value::Null).is_ok());
    }
}
