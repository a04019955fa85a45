//! Structured (record) types: named fields packed in declaration order, each a scalar type, optionally
//! a fixed-shape subarray of it, or a nested structure. Zarr v2 writes them as numpy `descr` lists.

use super::{DataType, Endian};

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
