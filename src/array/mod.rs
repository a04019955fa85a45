//! Arrays: metadata + store + codec chain. Region reads ([`read`]) and writes ([`write`]) run their
//! chunks in parallel on the pool of [`crate::threads`].

mod chunks;
mod conditional_write;
mod from_document;
mod read;
mod remote_shard;
mod shard_speculation;
mod shard_stream_write;
mod shard_update;
mod write;

pub use crate::selection::vlen::VlenData;

use crate::error::{Error, Result};
use crate::metadata::{self, ArrayMetadata};
use crate::node::{self, NodeMetadata};
use crate::selection::{Layout, Selection};
use crate::store::{normalize_node_path, node_prefix, LockRange, Store, StoreLock};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};

/// An open array. Reads and writes may run concurrently from several threads, handles and processes:
/// every write locks the chunks (shards) it touches for the whole call (see [`crate::store::lock`]), so
/// concurrent writes to one chunk are applied one after the other, none lost. Metadata updates
/// (attributes, resize) re-read the stored document under the metadata lock and change only their part.
/// A write through a handle whose cached shape is no longer the stored one (another handle resized the
/// array) fails with [`Error::Metadata`] and stores nothing: reopen the array. (Remote stores take no
/// locks and this is not checked there: writers that resize need their own coordination.)
#[derive(Debug)]
pub struct Array {
    store: Arc<dyn Store>,
    path: String,
    prefix: String,
    meta: ArrayMetadata,
    attributes: Mutex<Map<String, Value>>,
    writable: bool,
    /// Shard indexes read from a remote store, kept with the shard's ETag.
    shard_indexes: remote_shard::ShardIndexCache,
    /// Writers are coordinated by the caller (one writer per chunk at a time, no resize by others):
    /// writes take no store lock and do not re-read the stored shape ([`Array::open_from_document`]).
    coordinated: bool,
}

impl Array {
    /// Opens the array at node `path` of `store`.
    pub fn open(store: Arc<dyn Store>, path: &str, writable: bool) -> Result<Array> {
        Array::open_expecting(store, path, writable, None)
    }

    /// Opens the array at node `path` of `store`, expected to be of Zarr `format` when known (that of
    /// the group it is opened through: a remote store is then asked for that format's documents
    /// first; without it `zarr.json`, `.zarray` and `.zattrs` go out together, one round trip).
    pub(crate) fn open_expecting(store: Arc<dyn Store>, path: &str, writable: bool, format: Option<u8>) -> Result<Array> {
        let path = normalize_node_path(path)?;
        let meta = match node::open_node(store.as_ref(), &path, Some(node::Want::Array), format)?.0 {
            Some(NodeMetadata::Array(m)) if m.zarr_format == 1 && writable => {
                return Err(Error::Unsupported(format!(
                    "{} is a Zarr v1 array: v1 arrays can only be opened for reading",
                    node::describe(store.as_ref(), &path)
                )))
            }
            Some(NodeMetadata::Array(m)) => m,
            Some(NodeMetadata::Group(_)) => {
                return Err(Error::NotFound(format!("{} is a group, not an array", node::describe(store.as_ref(), &path))))
            }
            None => {
                return Err(Error::NotFound(format!("no array at {} (no zarr.json)", node::describe(store.as_ref(), &path))))
            }
        };
        Ok(Array::from_parts(store, path, meta, writable))
    }

    /// Creates an array at node `path` from a complete metadata document: a v3 `zarr.json` or a v2
    /// `.zarray` (told apart by `zarr_format`). Fails with [`Error::Exists`] if a node is already there;
    /// missing parent groups (of the same format) are created.
    pub fn create(store: Arc<dyn Store>, path: &str, document: &str) -> Result<Array> {
        let path = normalize_node_path(path)?;
        let doc = metadata::parse_json(document.as_bytes()).map_err(|e| e.context("array metadata"))?;
        let meta = match doc.get("zarr_format").and_then(Value::as_u64) {
            Some(3) => {
                let mut meta = metadata::v3::parse_array(doc).map_err(|e| e.context("array metadata"))?;
                // Record the codecs as they will be applied, with every default made explicit (e.g. the
                // blosc typesize chosen from the data type, as the blosc spec requires).
                meta.document["codecs"] = meta.codecs.to_json();
                meta
            }
            Some(2) => metadata::v2::parse_array(&doc, Map::new()).map_err(|e| e.context("array metadata (.zarray)"))?,
            Some(1) => return Err(Error::Unsupported("Zarr v1 arrays can be read but not created".into())),
            Some(f) => return Err(Error::Metadata(format!("array metadata: unknown zarr_format {f}"))),
            None => return Err(Error::Metadata("array metadata: missing integer zarr_format".into())),
        };
        // A read-only store (HTTP, zip) fails here, before any request.
        store.ensure_writable()?;
        node::check_absent(store.as_ref(), &path)?;
        node::ensure_parents(store.as_ref(), &path, meta.zarr_format)?;
        let key = node::metadata_key(&path, meta.zarr_format, node::NodeKind::Array);
        let stored = if meta.zarr_format == 3 { meta.document_with_attributes(&meta.attributes) } else { meta.document.clone() };
        store.set(&key, &metadata::to_bytes(&stored))?;
        Ok(Array::from_parts(store, path, meta, true))
    }

    /// An array at normalised `path` from metadata already read (e.g. from consolidated metadata).
    pub(crate) fn from_parts(store: Arc<dyn Store>, path: String, meta: ArrayMetadata, writable: bool) -> Array {
        let prefix = node_prefix(&path);
        let attributes = Mutex::new(meta.attributes.clone());
        Array { store, path, prefix, meta, attributes, writable, shard_indexes: Default::default(), coordinated: false }
    }

    /// The parsed metadata (attributes as when opened; see [`Array::attributes`]).
    pub fn metadata(&self) -> &ArrayMetadata {
        &self.meta
    }

    /// The node path within the store (`""` for the root).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The store holding the array.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Whether writes are allowed.
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// The array shape.
    pub fn shape(&self) -> &[u64] {
        &self.meta.shape
    }

    /// The current attributes.
    pub fn attributes(&self) -> Map<String, Value> {
        self.attributes.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The current metadata document: for v3 `zarr.json` with the current attributes; for v2 and v1
    /// the `.zarray` / `meta` document (their attributes live apart).
    pub fn document(&self) -> Value {
        if self.meta.zarr_format == 3 {
            self.meta.document_with_attributes(&self.attributes())
        } else {
            self.meta.document.clone()
        }
    }

    /// Replaces the attributes and rewrites their document atomically (`zarr.json` for v3,
    /// `.zattrs` for v2). Holds the metadata lock exclusively and rewrites the stored `zarr.json` with
    /// only its attributes replaced, so a concurrent resize by another handle or process is kept.
    pub fn set_attributes(&self, attributes: Map<String, Value>) -> Result<()> {
        self.check_writable()?;
        let mut guard = self.attributes.lock().unwrap_or_else(|e| e.into_inner());
        let lock = self.lock_metadata()?;
        node::store_attributes(self.store.as_ref(), &self.path, self.meta.zarr_format, &attributes, &lock)?;
        *guard = attributes;
        Ok(())
    }

    /// Sets the dimension names (`None`: unnamed) and rewrites the stored metadata atomically under the
    /// metadata lock: v3 `dimension_names` in `zarr.json` (removed when no dimension is named), v2 the
    /// `_ARRAY_DIMENSIONS` attribute in `.zattrs` (xarray's convention, which needs every dimension named;
    /// removed when none is). The rest of the stored document is kept as stored. This handle keeps the
    /// names it was opened with: a handle opened afterwards reads the new ones.
    pub fn set_dimension_names(&self, names: &[Option<String>]) -> Result<()> {
        self.check_writable()?;
        let rank = self.meta.shape.len();
        if names.len() != rank {
            return Err(Error::InvalidArgument(format!("{} dimension names for an array of rank {rank}", names.len())));
        }
        let none = names.iter().all(Option::is_none);
        let _lock = self.lock_metadata()?;
        if self.meta.zarr_format == 3 {
            let key = node::v3_key(&self.path);
            let mut doc = node::read_document(self.store.as_ref(), &key)?;
            let obj = doc.as_object_mut().ok_or_else(|| {
                Error::Metadata(format!("{}: the metadata is not a JSON object", self.store.location(&key)))
            })?;
            if none {
                obj.remove("dimension_names");
            } else {
                obj.insert("dimension_names".into(), Value::Array(names.iter().map(|n| n.clone().map_or(Value::Null, Value::String)).collect()));
            }
            return self.store.set_parts_locked(&key, &[&metadata::to_bytes(&doc)], &_lock);
        }
        if !none && names.iter().any(Option::is_none) {
            return Err(Error::InvalidArgument(
                "Zarr v2 stores dimension names as the _ARRAY_DIMENSIONS attribute, which needs every dimension named".into(),
            ));
        }
        let mut guard = self.attributes.lock().unwrap_or_else(|e| e.into_inner());
        let mut attributes = guard.clone();
        if none {
            attributes.remove("_ARRAY_DIMENSIONS");
        } else {
            attributes.insert("_ARRAY_DIMENSIONS".into(), Value::Array(names.iter().flatten().cloned().map(Value::String).collect()));
        }
        node::store_attributes(self.store.as_ref(), &self.path, self.meta.zarr_format, &attributes, &_lock)?;
        *guard = attributes;
        Ok(())
    }

    /// Takes the array's metadata lock exclusively (excluding every other writer of the array).
    fn lock_metadata(&self) -> Result<StoreLock> {
        self.store.lock(&self.prefix, &[LockRange::metadata(true)])
    }

    /// Locks the stored keys at chunk-grid coordinates `chunks` for writing (and the metadata shared),
    /// then checks that the stored shape is still the one this handle works with. On a store that
    /// locks (filesystem, memory) the shared metadata lock keeps a resize out until the write ends, so
    /// the check holds for the whole call. A remote store takes no lock: the array could be resized
    /// right after any check, which would then guarantee nothing and cost a round trip (10-100 ms)
    /// per write call, so there it is not made (docs/concurrency.md).
    fn lock_chunks<'a>(&self, chunks: impl IntoIterator<Item = &'a [u64]>) -> Result<StoreLock> {
        if self.coordinated {
            return Ok(StoreLock::none());
        }
        self.lock_chunk_ranges(crate::store::lock::chunk_write_ranges(chunks))
    }

    /// [`Self::lock_chunks`] for the lock ranges of the chunks
    /// ([`crate::store::ChunkLockRanges::finish`]).
    fn lock_chunk_ranges(&self, ranges: Vec<LockRange>) -> Result<StoreLock> {
        if self.coordinated {
            return Ok(StoreLock::none());
        }
        let lock = self.store.lock(&self.prefix, &ranges)?;
        if !lock.is_held() && self.store.io_concurrency() > 0 {
            return Ok(lock);
        }
        let key = node::metadata_key(&self.path, self.meta.zarr_format, node::NodeKind::Array);
        let doc = node::read_document(self.store.as_ref(), &key)?;
        let stored: Option<Vec<u64>> =
            doc.get("shape").and_then(Value::as_array).and_then(|a| a.iter().map(Value::as_u64).collect());
        if stored.as_deref() != Some(self.meta.shape.as_slice()) {
            return Err(Error::Metadata(format!(
                "{}: the array's stored shape is now {} but this handle has {} (another writer resized it): \
                 reopen the array",
                self.store.location(&key),
                stored.map_or("unreadable".to_string(), |s| crate::index_order::extents(&s)),
                crate::index_order::extents(&self.meta.shape)
            )));
        }
        Ok(lock)
    }

    /// The inner chunk shape of a sharded array (the outermost sharding codec's `chunk_shape`), or
    /// `None` when the array is not sharded.
    pub fn inner_chunk_shape(&self) -> Option<&[u64]> {
        use crate::codec::ArrayToBytesCodec;
        self.meta.codecs.inner_chunk_shape()
    }

    /// The store key of the chunk at grid index `idx`.
    pub fn chunk_key(&self, idx: &[u64]) -> String {
        format!("{}{}", self.prefix, self.meta.chunk_key_encoding.key(idx))
    }

    fn check_writable(&self) -> Result<()> {
        if !self.writable {
            return Err(Error::ReadOnly(format!("array {} was opened read-only", node::describe(self.store.as_ref(), &self.path))));
        }
        Ok(())
    }

    /// Validates a dense region's rank and bounds.
    fn check_bounds(&self, start: &[u64], count: &[u64]) -> Result<()> {
        Selection::new(start, count, None)?.check_within(&self.meta.shape)
    }

    /// The chunk grid.
    pub fn grid(&self) -> &dyn crate::chunk_grid::ChunkGrid {
        self.meta.grid.as_ref()
    }

    /// Validates a selection against the array, and the caller's buffer of `buffer_len` bytes against
    /// `layout`: exactly the selection's size when `exact` (the dense region calls), else at least the
    /// span its strides reach.
    fn check_selection(&self, sel: &Selection, layout: &Layout, buffer_len: usize, exact: bool) -> Result<()> {
        if self.meta.data_type.is_vlen() {
            return Err(Error::InvalidArgument(format!(
                "the array's data type {} has variable-length elements: use zarr_read_region_vlen / \
                 zarr_write_region_vlen (Array::read_region_vlen / write_region_vlen)",
                self.meta.data_type
            )));
        }
        sel.check_within(&self.meta.shape)?;
        let n = sel.num_elements().ok_or_else(|| Error::BufferSize("selection size overflows 64 bits".into()))?;
        let elem = layout.elem as u64;
        let need = if exact { n.checked_mul(elem) } else { layout.span(&sel.count).map(|s| s as u64) };
        match need {
            Some(b) if (exact && b == buffer_len as u64) || (!exact && b <= buffer_len as u64) => Ok(()),
            Some(b) => Err(Error::BufferSize(format!(
                "buffer has {buffer_len} bytes, the selection needs {b} ({n} elements of {elem} bytes{})",
                if exact { "" } else { " at the given strides" }
            ))),
            None => Err(Error::BufferSize("selection size overflows 64 bits".into())),
        }
    }

    /// The checked selection, buffer layout and (identity) conversion of a dense region call: the
    /// region `start..start+count` against a buffer of exactly `buffer_len` bytes in C order, of the
    /// array's own type.
    fn region_plan(
        &self,
        start: &[u64],
        count: &[u64],
        buffer_len: usize,
    ) -> Result<(Selection, Layout, crate::selection::convert::Conv)> {
        let sel = Selection::new(start, count, None)?;
        let layout = Layout::c_order(count, self.meta.data_type.size());
        self.check_selection(&sel, &layout, buffer_len, true)?;
        Ok((sel, layout, crate::selection::convert::Conv::identity(&self.meta.data_type)))
    }

    /// The checked selection, buffer layout and conversion of a hyperslab call: the strided selection
    /// `start, count, step` against a buffer of `buffer_len` bytes holding `buffer_type` at the element
    /// strides `buffer_stride`. `reading`: elements go from the array to the buffer (so the conversion
    /// runs that way, and distinct elements must land on distinct places of the buffer).
    #[allow(clippy::too_many_arguments)]
    fn hyperslab_plan(
        &self,
        start: &[u64],
        count: &[u64],
        step: Option<&[u64]>,
        buffer_stride: Option<&[i64]>,
        buffer_type: &crate::dtype::DataType,
        buffer_len: usize,
        reading: bool,
    ) -> Result<(Selection, Layout, crate::selection::convert::Conv)> {
        use crate::selection::convert::Conv;
        let sel = Selection::new(start, count, step)?;
        let array_type = &self.meta.data_type;
        let conv = if reading { Conv::new(array_type, buffer_type) } else { Conv::new(buffer_type, array_type) }?;
        let layout = Layout::from_caller(count, buffer_type.size(), buffer_stride, reading)?;
        self.check_selection(&sel, &layout, buffer_len, false)?;
        Ok((sel, layout, conv))
    }
}

/// The most bytes a stored chunk (or shard) of `chain` may hold ([`crate::codec::chain::CodecChain::max_encoded_size`]):
/// every whole-chunk read is limited to it, and a chunk opened for ranged reads is checked against it
/// before anything is read.
fn chunk_limit(chain: &crate::codec::chain::CodecChain) -> crate::store::ReadLimit {
    crate::store::ReadLimit::chunk(chain.max_encoded_size())
}
