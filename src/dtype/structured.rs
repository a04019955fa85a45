//! Structured (record) types: named fields packed in declaration order, each a scalar type, optionally
//! a fixed-shape subarray of it, or a nested structure. Zarr v2 writes them as numpy `descr` lists.

use super::{DataType, Endian};
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// One field of a structured type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StructField {
    /// Field name.
    pub name: String,
    /// Element type of the field (may itself be a structure).
    pub data_type: DataType,
    /// Subarray shape (empty for a scalar field).
    pub shape: Vec<u64>,
    /// Byte offset of the field within an element.
    pub offset: usize,
    /// Byte order of the field as stored (v2 `<`/`>`); `None` where it does not matter.
    pub byte_order: Option<Endian>,
}

impl StructField {
    /// Number of scalar items in the field (product of the subarray shape).
    pub fn count(&self) -> usize {
        self.shape.iter().product::<u64>() as usize
    }

    /// Size of the field in bytes.
    pub fn size(&self) -> usize {
        self.count() * self.data_type.size()
    }
}

/// A structured type: its fields and total size.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StructType {
    /// Fields in declaration order.
    pub fields: Vec<StructField>,
    /// Size of one element in bytes.
    pub size: usize,
}

impl StructType {
    /// Lays out `fields` packed in order (offsets are recomputed); `fields` carry name, type, shape,
    /// byte order.
    pub fn packed(mut fields: Vec<StructField>) -> StructType {
        let mut offset = 0;
        for f in &mut fields {
            f.offset = offset;
            offset += f.size();
        }
        StructType { fields, size: offset }
    }

    /// Every scalar leaf as (offset within the element, type, item count, stored byte order), with
    /// nested structures flattened.
    pub fn leaves(&self) -> Vec<(usize, DataType, usize, Option<Endian>)> {
        let mut out = Vec::new();
        for f in &self.fields {
            match &f.data_type {
                DataType::Struct(inner) => {
                    for i in 0..f.count() {
                        let base = f.offset + i * inner.size;
                        out.extend(inner.leaves().into_iter().map(|(o, t, n, e)| (base + o, t, n, e)));
                    }
                }
                t => out.push((f.offset, t.clone(), f.count(), f.byte_order)),
            }
        }
        out
    }
}

/// Parses the `configuration` of a v3 `struct` (fields `{"name", "data_type"}`) or of zarr-python's
/// legacy `structured` (fields `[name, data_type]`; both forms are accepted under either name).
/// `parse_type` parses a field's data type. Field names must be non-empty and unique, the type
/// fixed-size; the element is at most [`super::MAX_RAW_BYTES`] bytes.
pub fn parse_v3_fields(
    name: &str,
    cfg: Option<&Map<String, Value>>,
    parse_type: impl Fn(&Value) -> Result<DataType>,
) -> Result<StructType> {
    let bad = |why: String| Error::Metadata(format!("data_type '{name}': {why}"));
    let cfg = cfg.ok_or_else(|| bad("needs a configuration {\"fields\": [...]}".into()))?;
    if let Some(k) = cfg.keys().find(|k| *k != "fields") {
        return Err(bad(format!("unknown configuration member '{k}'")));
    }
    let list = cfg.get("fields").and_then(Value::as_array).ok_or_else(|| bad("'fields' must be a list".into()))?;
    if list.is_empty() {
        return Err(bad("'fields' is empty".into()));
    }
    let mut fields: Vec<StructField> = Vec::with_capacity(list.len());
    let mut size = 0usize;
    for f in list {
        let (fname, ftype) = match f {
            Value::Object(o) => {
                if let Some(k) = o.keys().find(|k| *k != "name" && *k != "data_type") {
                    return Err(bad(format!("field {f}: unknown member '{k}'")));
                }
                (o.get("name"), o.get("data_type"))
            }
            Value::Array(a) if a.len() == 2 => (a.first(), a.get(1)),
            _ => return Err(bad(format!("field {f} is neither {{\"name\", \"data_type\"}} nor [name, data_type]"))),
        };
        let fname = fname.and_then(Value::as_str).filter(|n| !n.is_empty()).ok_or_else(|| bad(format!("field {f} has no non-empty string name")))?;
        let ftype = ftype.ok_or_else(|| bad(format!("field '{fname}' has no data_type")))?;
        if fields.iter().any(|g| g.name == fname) {
            return Err(bad(format!("two fields are named '{fname}'")));
        }
        let data_type = parse_type(ftype)?;
        size += data_type.size();
        if size > super::MAX_RAW_BYTES {
            return Err(bad(format!("elements larger than {} bytes", super::MAX_RAW_BYTES)));
        }
        fields.push(StructField { name: fname.to_string(), data_type, shape: vec![], offset: 0, byte_order: None });
    }
    Ok(StructType::packed(fields))
}
