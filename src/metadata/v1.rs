//! Zarr v1 arrays (read only): the `meta` document (`compression` none, zlib, bz2 or blosc with
//! `compression_opts`), attributes in `attrs`, chunk keys `i.j.k` beside them.

use super::{fill_value, ArrayMetadata};
use crate::chunk_grid::RegularGrid;
use crate::chunk_key::ChunkKeyEncoding;
use crate::codec::bytes::BytesCodec;
use crate::codec::chain::CodecChain;
use crate::codec::numcodecs::{self, V2Elem};
use crate::codec::transpose::TransposeCodec;
use crate::codec::{ArrayRepr, Codec};
use crate::dtype::v2 as dtv2;
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use std::sync::Arc;

fn meta_err(msg: impl Into<String>) -> Error {
    Error::Metadata(msg.into())
}

fn dims(v: Option<&Value>, what: &str) -> Result<Vec<u64>> {
    let v = v.ok_or_else(|| meta_err(format!("missing required member '{what}'")))?;
    v.as_array()
        .ok_or_else(|| meta_err(format!("{what} must be a list of integers, got {v}")))?
        .iter()
        .map(|x| x.as_u64().ok_or_else(|| meta_err(format!("{what} entries must be non-negative integers"))))
        .collect()
}

/// Parses a v1 `meta` document; `attributes` come from `attrs`.
pub fn parse_array(doc: &Value, attributes: Map<String, Value>) -> Result<ArrayMetadata> {
    let obj = doc.as_object().ok_or_else(|| meta_err("expected a JSON object"))?;
    if obj.get("zarr_format").and_then(Value::as_u64) != Some(1) {
        return Err(meta_err("zarr_format must be 1"));
    }
    let shape = dims(obj.get("shape"), "shape")?;
    let chunks = dims(obj.get("chunks"), "chunks")?;
    if chunks.len() != shape.len() {
        return Err(meta_err("chunks and shape have different ranks"));
    }
    let grid = RegularGrid::new(chunks)?;
    let v2t = dtv2::parse(obj.get("dtype").ok_or_else(|| meta_err("missing required member 'dtype'"))?)?;
    let data_type = v2t.data_type.clone();
    let fill_given = fill_value::parse_v2_typed(&data_type, v2t.byte_order, v2t.text, obj.get("fill_value").unwrap_or(&Value::Null))?;
    let fill_defined = fill_given.is_some();
    let fill = fill_given.unwrap_or_else(|| vec![0; data_type.size()]);
    let rank = shape.len();
    let mut codecs = Vec::new();
    match obj.get("order").and_then(Value::as_str) {
        Some("C") | None => {}
        Some("F") if rank > 1 => {
            codecs.push(Codec::ArrayToArray(Box::new(TransposeCodec::new((0..rank).rev().collect())?)))
        }
        Some("F") => {}
        Some(o) => return Err(meta_err(format!("order must be \"C\" or \"F\", got \"{o}\""))),
    }
    codecs.push(Codec::ArrayToBytes(Box::new(BytesCodec::new(&data_type, v2t.byte_order))));
    let opts = obj.get("compression_opts").cloned().unwrap_or(Value::Null);
    let compressor = match obj.get("compression").and_then(Value::as_str) {
        None | Some("none") => None,
        Some(id @ ("zlib" | "bz2")) => Some(match opts {
            Value::Null => json!({"id": id}),
            Value::Number(n) => json!({"id": id, "level": n}),
            v => return Err(meta_err(format!("compression_opts for {id} must be a level, got {v}"))),
        }),
        Some("blosc") => Some(match opts {
            Value::Null => json!({"id": "blosc"}),
            Value::Object(mut m) => {
                m.insert("id".into(), json!("blosc"));
                Value::Object(m)
            }
            v => return Err(meta_err(format!("compression_opts for blosc must be an object, got {v}"))),
        }),
        Some(other) => return Err(Error::Unsupported(format!("unsupported v1 compression '{other}'"))),
    };
    if let Some(c) = compressor {
        let elem = V2Elem { data_type: data_type.clone(), byte_order: v2t.byte_order };
        codecs.push(Codec::BytesToBytes(numcodecs::compressor(&c, &elem)?));
    }
    let repr = ArrayRepr { shape: grid.chunk_shape.clone(), data_type: data_type.clone(), fill_value: fill.clone() };
    let chain = CodecChain::new(codecs, &repr)?;
    Ok(ArrayMetadata {
        zarr_format: 1,
        shape,
        data_type,
        grid: Arc::new(grid),
        other_chains: Default::default(),
        chunk_key_encoding: ChunkKeyEncoding::V2 { separator: '.' },
        fill_value: fill,
        codecs: Arc::new(chain),
        dimension_names: None,
        attributes,
        document: doc.clone(),
        fill_defined,
    })
}
