//! Zarr v1 arrays (read only): the `meta` document (`compression` none, zlib, bz2 or blosc with
//! `compression_opts`), attributes in `attrs`, chunk keys `i.j.k` beside them.

use super::v2::{assemble, dims, meta_err, numeric_codecs, typed_fill, Fixed};
use super::ArrayMetadata;
use crate::chunk_grid::RegularGrid;
use crate::codec::registry::{self, V1Options};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

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
    let dtype = obj.get("dtype").ok_or_else(|| meta_err("missing required member 'dtype'"))?;
    let (v2t, fill, fill_defined) = typed_fill(dtype, obj.get("fill_value"))?;
    let data_type = v2t.data_type.clone();
    let fortran = match obj.get("order").and_then(Value::as_str) {
        Some("C") | None => false,
        Some("F") => true,
        Some(o) => return Err(meta_err(format!("order must be \"C\" or \"F\", got \"{o}\""))),
    };
    let opts = obj.get("compression_opts").cloned().unwrap_or(Value::Null);
    let compressor = match obj.get("compression").and_then(Value::as_str) {
        None | Some("none") => None,
        Some(name) => match registry::numcodecs(name).and_then(|n| n.v1.map(|form| (n.id, form))) {
            Some((id, V1Options::Level)) => Some(match opts {
                Value::Null => json!({"id": id}),
                Value::Number(n) => json!({"id": id, "level": n}),
                v => return Err(meta_err(format!("compression_opts for {id} must be a level, got {v}"))),
            }),
            Some((id, V1Options::Object)) => Some(match opts {
                Value::Null => json!({"id": id}),
                Value::Object(mut m) => {
                    m.insert("id".into(), json!(id));
                    Value::Object(m)
                }
                v => return Err(meta_err(format!("compression_opts for {id} must be an object, got {v}"))),
            }),
            None => return Err(Error::Unsupported(format!("unsupported v1 compression '{name}'"))),
        },
    };
    let codecs = numeric_codecs(&data_type, v2t.byte_order, fortran, shape.len(), &[], compressor.as_ref())?;
    let fixed = Fixed { zarr_format: 1, shape, grid, separator: '.', attributes, document: doc.clone() };
    assemble(fixed, data_type, fill, fill_defined, codecs)
}
