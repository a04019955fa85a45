//! Array and group metadata: the one internal model every format version is parsed into.
//!
//! [`v3`] parses `zarr.json`. Later formats (v2 `.zarray`, v1 `meta`) normalise into the same
//! [`ArrayMetadata`]: a data type, a regular grid, a chunk key encoding, a fill value and a codec chain.

pub mod v1;
pub mod v2;
pub mod v3;

use crate::chunk_grid::ChunkGrid;
use crate::codec::ArrayRepr;
use crate::chunk_key::ChunkKeyEncoding;
use crate::codec::chain::CodecChain;
use crate::dtype::DataType;
use crate::error::{Error, Result};
use crate::format::json_text;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Everything needed to read and write an array, whatever its format version.
#[derive(Debug, Clone)]
pub struct ArrayMetadata {
    /// 3 (later also 2 and 1).
    pub zarr_format: u8,
    /// Array shape.
    pub shape: Vec<u64>,
    /// Element type.
    pub data_type: DataType,
    /// The chunk grid (chunks are shards for sharded arrays).
    pub grid: Arc<dyn ChunkGrid>,
    /// How chunk keys are formed.
    pub chunk_key_encoding: ChunkKeyEncoding,
    /// One native-endian element.
    pub fill_value: Vec<u8>,
    /// The codec chain for chunks of the first chunk's shape (every chunk's, for a regular grid).
    pub codecs: Arc<CodecChain>,
    /// Chains for the other chunk shapes of a rectilinear grid, built on first use.
    pub other_chains: Arc<Mutex<HashMap<Vec<u64>, Arc<CodecChain>>>>,
    /// Optional dimension names.
    pub dimension_names: Option<Vec<Option<String>>>,
    /// User attributes.
    pub attributes: Map<String, Value>,
    /// The metadata document as stored, but for v3 its `attributes` member, which holds `null` (the
    /// attributes are held once, in `attributes`; [`ArrayMetadata::document_with_attributes`] gives
    /// the whole document).
    pub document: Value,
    /// `false` for a v2/v1 `null` fill value: missing chunks then read as zero bytes, and chunks are
    /// always stored (never dropped for equalling the fill value), since other readers leave missing
    /// chunks undefined.
    pub fill_defined: bool,
}

impl ArrayMetadata {
    /// The chunk shape of a regular grid; for a rectilinear grid, the shape of the first chunk.
    pub fn chunk_shape(&self) -> &[u64] {
        &self.codecs.decoded_repr().shape
    }

    /// The codec chain for the chunk at grid coordinates `chunk` (whose shape a rectilinear grid varies).
    pub fn chain_for(&self, chunk: &[u64]) -> Result<Arc<CodecChain>> {
        if self.grid.regular_shape().is_some() {
            return Ok(self.codecs.clone());
        }
        let shape = self.grid.chunk_shape_at(chunk);
        if shape == self.codecs.decoded_repr().shape {
            return Ok(self.codecs.clone());
        }
        self.chain_for_shape(shape)
    }

    /// The codec chain for chunks of `shape` (v3 only: built from the stored `codecs` list).
    fn chain_for_shape(&self, shape: Vec<u64>) -> Result<Arc<CodecChain>> {
        let mut cache = self.other_chains.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cache.get(&shape) {
            return Ok(c.clone());
        }
        let repr = ArrayRepr { shape: shape.clone(), ..self.codecs.decoded_repr().clone() };
        let chain = Arc::new(CodecChain::from_v3(&self.document["codecs"], &repr)?);
        cache.insert(shape, chain.clone());
        Ok(chain)
    }

    /// Builds the chain of every chunk extent the grid has along each dimension (with the first
    /// chunk's extent elsewhere), so that codecs that cannot take some chunk shape (sharding whose
    /// inner chunks do not divide it) fail when the array is opened, not on first use.
    pub fn check_chunk_shapes(&self) -> Result<()> {
        if self.grid.regular_shape().is_some() {
            return Ok(());
        }
        let base = self.chunk_shape().to_vec();
        for d in 0..base.len() {
            for e in self.grid.distinct_extents(d) {
                let mut shape = base.clone();
                shape[d] = e;
                if shape != base {
                    self.chain_for_shape(shape)?;
                }
            }
        }
        Ok(())
    }

    /// The document with `attributes` replaced (as it will be stored).
    pub fn document_with_attributes(&self, attributes: &Map<String, Value>) -> Value {
        let mut doc = self.document.clone();
        if let Value::Object(o) = &mut doc {
            o.insert("attributes".into(), Value::Object(attributes.clone()));
        }
        doc
    }
}

/// Fails with [`Error::Metadata`] unless the array's element count (the product of `shape`) fits in
/// 64 bits, as every count and linear index libzarr derives from it must (e.g. `[2^40, 2^40]` fails;
/// `[2^31, 2^31]` is fine, even though its byte size may not fit: regions of it are checked when read).
/// Each chunk's own element and byte counts are checked where the codec chain is built.
pub fn check_shape_size(shape: &[u64]) -> Result<()> {
    shape.iter().try_fold(1u64, |n, &s| n.checked_mul(s)).map(|_| ()).ok_or_else(|| {
        Error::Metadata(format!("the element count of shape {shape:?} overflows 64 bits"))
    })
}

/// A group's metadata.
#[derive(Debug, Clone)]
pub struct GroupMetadata {
    /// 3 (later also 2).
    pub zarr_format: u8,
    /// User attributes.
    pub attributes: Map<String, Value>,
    /// The metadata document as stored, but for v3 its `attributes` member, which holds `null` (the
    /// attributes are held once, in `attributes`; [`ArrayMetadata::document_with_attributes`] gives
    /// the whole document).
    pub document: Value,
}

/// Parses a metadata document from bytes, as a JSON object. The bare tokens `NaN`, `Infinity` and
/// `-Infinity` that Python's `json` module writes are accepted in attributes and fill values (see
/// [`json_text`]).
pub fn parse_json(bytes: &[u8]) -> Result<Value> {
    parse_json_scoped(bytes, json_text::Scope::AttributesAndFillValues, crate::limits::max_metadata_bytes())
}

/// [`parse_json`] for the document stored at `key`: an attributes document (v2 `.zattrs`, v1
/// `attrs`) accepts the bare tokens anywhere. `ceiling` is the metadata ceiling of the store it came
/// from ([`crate::store::Store::max_metadata_bytes`]).
pub fn parse_json_at(bytes: &[u8], key: &str, ceiling: u64) -> Result<Value> {
    let name = key.rsplit('/').next().unwrap_or(key);
    let scope = if name == ".zattrs" || name == "attrs" { json_text::Scope::Anywhere } else { json_text::Scope::AttributesAndFillValues };
    parse_json_scoped(bytes, scope, ceiling)
}

fn parse_json_scoped(bytes: &[u8], scope: json_text::Scope, ceiling: u64) -> Result<Value> {
    crate::limits::check_parse_size(bytes, ceiling)?;
    let v: Value = json_text::parse(bytes, scope).map_err(|e| Error::Metadata(format!("invalid JSON: {e}")))?;
    if !v.is_object() {
        return Err(Error::Metadata("the metadata document is not a JSON object".into()));
    }
    Ok(v)
}


/// Serialises a metadata document the way it is stored (pretty-printed, UTF-8).
pub fn to_bytes(doc: &Value) -> Vec<u8> {
    serde_json::to_vec_pretty(doc).expect("a JSON value serialises")
}

/// Takes the `attributes` member (absent = empty; it must be an object) out of a v3 document, leaving
/// `null` in its place, so that the attributes are held once (a document's attributes may be most of
/// its size) and [`ArrayMetadata::document_with_attributes`] puts them back where they were.
pub fn take_attributes(doc: &mut Map<String, Value>) -> Result<Map<String, Value>> {
    match doc.get_mut("attributes") {
        None => Ok(Map::new()),
        Some(v) if v.is_object() => match std::mem::take(v) {
            Value::Object(m) => Ok(m),
            _ => unreachable!("checked to be an object"),
        },
        Some(v) => Err(Error::Metadata(format!("attributes must be an object, got {v}"))),
    }
}

/// Parses a JSON text given by a caller as attributes (must be an object); bare `NaN`, `Infinity`
/// and `-Infinity` are accepted and stored as written.
pub fn parse_attributes_arg(json: &str) -> Result<Map<String, Value>> {
    match json_text::parse(json.as_bytes(), json_text::Scope::Anywhere) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(v) => Err(Error::InvalidArgument(format!("attributes must be a JSON object, got {v}"))),
        Err(e) => Err(Error::InvalidArgument(format!("attributes are not valid JSON: {e}"))),
    }
}
