//! Groups: attributes and children (arrays and groups) of a hierarchy node.
//!
//! A group with consolidated metadata ([`crate::consolidated`]) opens and lists its descendants from
//! that snapshot instead of the store.

use crate::array::Array;
use crate::consolidated::{self, Consolidated};
use crate::error::{Error, Result};
use crate::metadata::{self, v2, v3, GroupMetadata};
use crate::node::{self, NodeKind, NodeMetadata};
use crate::store::{node_prefix, normalize_node_path, Store};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex, RwLock};

mod delete;
mod moving;

/// An open group.
#[derive(Debug)]
pub struct Group {
    store: Arc<dyn Store>,
    path: String,
    zarr_format: u8,
    attributes: Mutex<Map<String, Value>>,
    document: Mutex<Value>,
    writable: bool,
    /// The consolidated metadata this group opens and lists its descendants from (its own, or that of
    /// the group it was opened through); `None` after a child was created through this handle.
    consolidated: RwLock<Option<Arc<Consolidated>>>,
}


impl Group {
    /// Opens the group at node `path` of `store`.
    pub fn open(store: Arc<dyn Store>, path: &str, writable: bool) -> Result<Group> {
        Group::open_expecting(store, path, writable, None)
    }

    /// Opens the group at node `path` of `store`, expected to be of Zarr `format` when known (the
    /// format of the group it is opened through: a remote store is then asked only for that format's
    /// documents first). On a remote store a v2 group's `.zmetadata` is asked for together with its
    /// `.zgroup` and `.zattrs` (and `zarr.json`): one round trip.
    fn open_expecting(store: Arc<dyn Store>, path: &str, writable: bool, format: Option<u8>) -> Result<Group> {
        let path = normalize_node_path(path)?;
        let (meta, mut prefetched) = node::open_node(store.as_ref(), &path, Some(node::Want::Group), format)?;
        let meta = match meta {
            Some(NodeMetadata::Group(g)) => g,
            Some(NodeMetadata::Array(_)) => {
                return Err(Error::NotFound(format!("{} is an array, not a group", node::describe(store.as_ref(), &path))))
            }
            None => {
                return Err(Error::NotFound(format!("no group at {} (no zarr.json)", node::describe(store.as_ref(), &path))))
            }
        };
        let consolidated = match meta.zarr_format {
            3 => Consolidated::from_v3(&path, &meta.document).map_err(|e| e.context(store.location(&node::v3_key(&path))))?,
            _ => {
                let key = node::key(&path, ".zmetadata");
                match prefetched.take(store.as_ref(), &key)? {
                    None => None,
                    Some(bytes) => {
                        let ctx = |e: Error| e.context(store.location(&key));
                        Some(Consolidated::from_v2(&path, &metadata::parse_json_at(&bytes, &key, store.max_metadata_bytes()).map_err(ctx)?).map_err(ctx)?)
                    }
                }
            }
        };
        Ok(Group::from_parts(store, path, meta, writable, consolidated.map(Arc::new)))
    }

    fn from_parts(
        store: Arc<dyn Store>,
        path: String,
        meta: GroupMetadata,
        writable: bool,
        consolidated: Option<Arc<Consolidated>>,
    ) -> Group {
        Group {
            store,
            path,
            zarr_format: meta.zarr_format,
            attributes: Mutex::new(meta.attributes),
            document: Mutex::new(meta.document),
            writable,
            consolidated: RwLock::new(consolidated),
        }
    }

    /// The consolidated metadata snapshot in use, if any.
    fn snapshot(&self) -> Option<Arc<Consolidated>> {
        self.consolidated.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether children are opened and listed from consolidated metadata.
    pub fn has_consolidated(&self) -> bool {
        self.snapshot().is_some()
    }

    /// Writes the consolidated metadata of every node below this group (v3: inline in its
    /// `zarr.json`; v2: `.zmetadata`), walking the store (which must be able to list), and uses it
    /// from now on.
    pub fn consolidate(&self) -> Result<()> {
        self.check_writable()?;
        // Under the group's metadata lock, like an attribute update (the walk itself reads unlocked).
        let _lock = self.lock_metadata()?;
        let mut doc = self.document.lock().unwrap_or_else(|e| e.into_inner());
        let mut current = doc.clone();
        if self.zarr_format == 3 {
            current["attributes"] = Value::Object(self.attributes());
        }
        let (new_doc, snapshot) = consolidated::write(self.store.as_ref(), &self.path, self.zarr_format, &current)?;
        *doc = new_doc;
        *self.consolidated.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(snapshot));
        Ok(())
    }

    /// Stops using the consolidated snapshot (after this handle changed the hierarchy).
    fn drop_snapshot(&self) {
        *self.consolidated.write().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Creates a group of `zarr_format` (2 or 3) at `path` with `attributes`; missing parent groups are
    /// created too, in the same format.
    pub fn create(store: Arc<dyn Store>, path: &str, attributes: Map<String, Value>, zarr_format: u8) -> Result<Group> {
        let path = normalize_node_path(path)?;
        let doc = match zarr_format {
            3 => v3::group_document(&attributes),
            2 => v2::group_document(),
            f => return Err(Error::InvalidArgument(format!("groups can be created as Zarr format 2 or 3, not {f}"))),
        };
        // A read-only store (HTTP, zip) fails here, before any request.
        store.ensure_writable()?;
        node::check_absent(store.as_ref(), &path)?;
        node::ensure_parents(store.as_ref(), &path, zarr_format)?;
        store.set(&node::metadata_key(&path, zarr_format, NodeKind::Group), &metadata::to_bytes(&doc))?;
        if zarr_format == 2 && !attributes.is_empty() {
            store.set(&node::key(&path, ".zattrs"), &metadata::to_bytes(&Value::Object(attributes.clone())))?;
        }
        let meta = GroupMetadata { zarr_format, attributes, document: doc };
        Ok(Group::from_parts(store, path, meta, true, None))
    }

    /// The Zarr format of the group (2 or 3).
    pub fn zarr_format(&self) -> u8 {
        self.zarr_format
    }

    /// The store holding the group.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The node path within the store (`""` for the root).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Whether the group and the nodes opened through it are writable.
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// The current attributes.
    pub fn attributes(&self) -> Map<String, Value> {
        self.attributes.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The group's metadata lock, taken on its metadata document (`zarr.json`, v2 `.zgroup`) rather
    /// than on a lock file beside it, which readers listing the group would report as an unknown child.
    fn lock_metadata(&self) -> Result<crate::store::StoreLock> {
        let doc = node::metadata_key(&self.path, self.zarr_format, NodeKind::Group);
        self.store.lock_group_document(&node_prefix(&self.path), &doc)
    }

    /// Replaces the attributes and rewrites the group document atomically, changing only the attributes of
    /// the document as stored (under the group's metadata lock).
    pub fn set_attributes(&self, attributes: Map<String, Value>) -> Result<()> {
        if !self.writable {
            return Err(Error::ReadOnly(format!("group {} was opened read-only", node::describe(self.store.as_ref(), &self.path))));
        }
        let mut guard = self.attributes.lock().unwrap_or_else(|e| e.into_inner());
        // Under the group's metadata lock, only the stored document's attributes are replaced.
        let lock = self.lock_metadata()?;
        node::store_attributes(self.store.as_ref(), &self.path, self.zarr_format, &attributes, &lock)?;
        *guard = attributes;
        Ok(())
    }

    /// The metadata document (for v3 with the current attributes; for v2 the `.zgroup` document).
    pub fn document(&self) -> Value {
        let mut doc = self.document.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if self.zarr_format == 3 {
            doc["attributes"] = Value::Object(self.attributes());
        }
        doc
    }

    fn child_path(&self, name: &str) -> Result<String> {
        let rel = normalize_node_path(name)?;
        if rel.is_empty() {
            return Err(Error::InvalidArgument(format!("invalid child name '{name}'")));
        }
        Ok(if self.path.is_empty() { rel } else { format!("{}/{rel}", self.path) })
    }

    /// The direct children that are arrays or groups, sorted by name.
    pub fn children(&self) -> Result<Vec<(String, NodeKind)>> {
        if let Some(snapshot) = self.snapshot() {
            return snapshot.children(&self.path);
        }
        let listing = self.store.list_dir(&node_prefix(&self.path))?;
        let mut candidates = Vec::new();
        for name in listing.prefixes {
            if name.starts_with("__") {
                continue;
            }
            let child = if self.path.is_empty() { name.clone() } else { format!("{}/{name}", self.path) };
            if crate::store::validate_key(&child).is_err() {
                continue;
            }
            candidates.push((name, child));
        }
        // On a remote store every child is looked at at once (one round trip for all of them).
        let store = self.store.as_ref();
        let kinds = crate::threads::io_scope(store.io_concurrency(), || {
            crate::threads::try_map(&candidates, |(_, child)| node::node_kind(store, child))
        })?;
        Ok(candidates.into_iter().zip(kinds).filter_map(|((name, _), kind)| kind.map(|(k, _)| (name, k))).collect())
    }

    /// Opens the array `name` (a relative path) below this group, with this group's access mode.
    pub fn open_array(&self, name: &str) -> Result<Array> {
        let path = self.child_path(name)?;
        if let Some(snapshot) = self.snapshot() {
            match snapshot.node(self.store.as_ref(), &path)? {
                Some(NodeMetadata::Array(meta)) => return Ok(Array::from_parts(self.store.clone(), path, meta, self.writable)),
                Some(NodeMetadata::Group(_)) => {
                    return Err(Error::NotFound(format!("{} is a group, not an array", node::describe(self.store.as_ref(), &path))))
                }
                None => {} // not consolidated (added later?): look in the store
            }
        }
        Array::open_expecting(self.store.clone(), &path, self.writable, Some(self.zarr_format))
    }

    /// Opens the group `name` (a relative path) below this group, with this group's access mode.
    pub fn open_group(&self, name: &str) -> Result<Group> {
        let path = self.child_path(name)?;
        if let Some(snapshot) = self.snapshot() {
            match snapshot.node(self.store.as_ref(), &path)? {
                Some(NodeMetadata::Group(meta)) => {
                    return Ok(Group::from_parts(self.store.clone(), path, meta, self.writable, Some(snapshot)))
                }
                Some(NodeMetadata::Array(_)) => {
                    return Err(Error::NotFound(format!("{} is an array, not a group", node::describe(self.store.as_ref(), &path))))
                }
                None => {}
            }
        }
        Group::open_expecting(self.store.clone(), &path, self.writable, Some(self.zarr_format))
    }

    /// Creates the array `name` below this group from a complete metadata document.
    pub fn create_array(&self, name: &str, document: &str) -> Result<Array> {
        self.check_writable()?;
        self.drop_snapshot();
        Array::create(self.store.clone(), &self.child_path(name)?, document)
    }

    /// Creates the group `name` below this group, in this group's format.
    pub fn create_group(&self, name: &str, attributes: Map<String, Value>) -> Result<Group> {
        self.check_writable()?;
        self.drop_snapshot();
        Group::create(self.store.clone(), &self.child_path(name)?, attributes, self.zarr_format)
    }

    fn check_writable(&self) -> Result<()> {
        if !self.writable {
            return Err(Error::ReadOnly(format!("group {} was opened read-only", node::describe(self.store.as_ref(), &self.path))));
        }
        Ok(())
    }
}
