//! Opening an array from a metadata document the caller already holds: no storage is read. A job that
//! reads `zarr.json` once and hands the text to its other processes (libzarr_mpi's collective open)
//! builds every other handle this way.

use super::Array;
use crate::error::{Error, Result};
use crate::metadata;
use crate::store::{normalize_node_path, Store};
use std::sync::Arc;

impl Array {
    /// The array at node `path` of `store` described by `document` (a Zarr v3 `zarr.json` text, as
    /// [`Array::document`] gives it), without reading the store. `coordinated`: the caller guarantees
    /// that no two writers touch one chunk (shard) at the same time and that nobody resizes the array
    /// while this handle writes, so writes take no store lock and do not re-read the stored shape.
    pub fn open_from_document(
        store: Arc<dyn Store>,
        path: &str,
        document: &str,
        writable: bool,
        coordinated: bool,
    ) -> Result<Array> {
        let path = normalize_node_path(path)?;
        let doc = metadata::parse_json(document.as_bytes()).map_err(|e| e.context("array metadata"))?;
        let meta = match doc.get("zarr_format").and_then(serde_json::Value::as_u64) {
            Some(3) => metadata::v3::parse_array(doc).map_err(|e| e.context("array metadata"))?,
            Some(f) => {
                return Err(Error::Unsupported(format!(
                    "array metadata: zarr_format {f}: only a Zarr v3 document (zarr.json) describes a whole \
                     array (v2 attributes live in another document); open the array with its path instead"
                )))
            }
            None => return Err(Error::Metadata("array metadata: missing integer zarr_format".into())),
        };
        if writable {
            // A read-only store (HTTP, zip) fails here, as at creation.
            store.ensure_writable()?;
        }
        let mut a = Array::from_parts(store, path, meta, writable);
        a.coordinated = coordinated && writable;
        Ok(a)
    }
}
