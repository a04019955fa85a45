//! Finding out what node (array or group, of which Zarr format) lives at a path of a store, reading
//! its metadata, and creating implicit parent groups.
//!
//! Metadata keys: v3 `zarr.json`; v2 `.zarray` / `.zgroup` with attributes in `.zattrs`; v1 `meta`
//! with attributes in `attrs`. When several exist, v3 wins, then v2, then v1.

use crate::error::{Error, Result};
use crate::metadata::{self, v1, v2, v3, ArrayMetadata, GroupMetadata};
use crate::store::{node_prefix, Store};
use serde_json::{Map, Value};

/// The kind of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// An array.
    Array,
    /// A group.
    Group,
}

/// The parsed metadata of a node.
#[derive(Debug, Clone)]
pub enum NodeMetadata {
    /// An array's metadata.
    Array(ArrayMetadata),
    /// A group's metadata.
    Group(GroupMetadata),
}

/// The v3 metadata key of the node at normalised `path`.
pub fn v3_key(path: &str) -> String {
    format!("{}zarr.json", node_prefix(path))
}

/// The key `name` (e.g. `.zarray`) inside the node at `path`.
pub fn key(path: &str, name: &str) -> String {
    format!("{}{name}", node_prefix(path))
}

/// The key holding a node's metadata document for `zarr_format`, and for v2 the array/group variant.
pub fn metadata_key(path: &str, zarr_format: u8, kind: NodeKind) -> String {
    match (zarr_format, kind) {
        (3, _) => v3_key(path),
        (2, NodeKind::Array) => key(path, ".zarray"),
        (2, NodeKind::Group) => key(path, ".zgroup"),
        _ => key(path, "meta"),
    }
}

/// The key holding a node's attributes when they live in their own document (v2 `.zattrs`, v1 `attrs`).
pub fn attributes_key(path: &str, zarr_format: u8) -> Option<String> {
    match zarr_format {
        2 => Some(key(path, ".zattrs")),
        1 => Some(key(path, "attrs")),
        _ => None,
    }
}

fn read_doc(store: &dyn Store, key: &str) -> Result<Option<Value>> {
    match store.get(key)? {
        None => Ok(None),
        Some(bytes) => parse_doc(store, key, &bytes).map(Some),
    }
}

/// The JSON document `bytes` stored at `key`.
fn parse_doc(store: &dyn Store, key: &str, bytes: &[u8]) -> Result<Value> {
    metadata::parse_json_at(bytes, key).map_err(|e| e.context(store.location(key)))
}

/// The stored metadata document at `key` (e.g. to update one member under the metadata lock);
/// [`Error::NotFound`] when absent.
pub fn read_document(store: &dyn Store, key: &str) -> Result<Value> {
    read_doc(store, key)?.ok_or_else(|| Error::NotFound(format!("{}: the metadata document is gone", store.location(key))))
}

/// Stores the attributes of the node at `path` under its metadata lock `lock`: for v3 the stored
/// `zarr.json` is re-read and only its `attributes` replaced (so a concurrent change of the rest of the
/// document is kept); for v2 and v1 the attributes document is rewritten.
pub fn store_attributes(
    store: &dyn Store,
    path: &str,
    zarr_format: u8,
    attributes: &Map<String, Value>,
    lock: &crate::store::StoreLock,
) -> Result<()> {
    match attributes_key(path, zarr_format) {
        None => {
            let key = v3_key(path);
            let mut doc = read_document(store, &key)?;
            doc["attributes"] = Value::Object(attributes.clone());
            store.set_parts_locked(&key, &[&metadata::to_bytes(&doc)], lock)
        }
        Some(key) => store.set_parts_locked(&key, &[&metadata::to_bytes(&Value::Object(attributes.clone()))], lock),
    }
}

fn read_attributes(store: &dyn Store, key: &str) -> Result<Map<String, Value>> {
    attributes_of(store, key, read_doc(store, key)?)
}

/// The attributes in `doc`, the document stored at `key` (none when absent).
fn attributes_of(store: &dyn Store, key: &str, doc: Option<Value>) -> Result<Map<String, Value>> {
    match doc {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(_) => Err(Error::Metadata(format!("{}: attributes must be a JSON object", store.location(key)))),
    }
}

/// Reads and parses the metadata of the node at `path`; `None` when there is no node.
pub fn read_node(store: &dyn Store, path: &str) -> Result<Option<NodeMetadata>> {
    let k = v3_key(path);
    if let Some(doc) = read_doc(store, &k)? {
        let ctx = |e: Error| e.context(store.location(&k));
        return Ok(Some(match v3::node_type(&doc).map_err(ctx)? {
            v3::NodeType::Array => NodeMetadata::Array(v3::parse_array(&doc).map_err(ctx)?),
            v3::NodeType::Group => NodeMetadata::Group(v3::parse_group(&doc).map_err(ctx)?),
        }));
    }
    // v2. A remote store is asked for `.zarray`, `.zgroup` and `.zattrs` at once: one round trip
    // instead of up to three in turn.
    let v2_keys = [key(path, ".zarray"), key(path, ".zgroup"), key(path, ".zattrs")];
    let prefetched: Vec<Option<Vec<u8>>> = match store.io_concurrency() {
        0 => Vec::new(),
        n => crate::threads::io_scope(n, || crate::threads::try_map(&v2_keys, |k| store.get(k)))?,
    };
    let doc = |i: usize| match prefetched.get(i) {
        Some(bytes) => bytes.as_deref().map(|b| parse_doc(store, &v2_keys[i], b)).transpose(),
        None => read_doc(store, &v2_keys[i]),
    };
    let attrs = || attributes_of(store, &v2_keys[2], doc(2)?);
    if let Some(d) = doc(0)? {
        let k = &v2_keys[0];
        return v2::parse_array(&d, attrs()?).map(|m| Some(NodeMetadata::Array(m))).map_err(|e| e.context(store.location(k)));
    }
    if let Some(d) = doc(1)? {
        let k = &v2_keys[1];
        return v2::parse_group(&d, attrs()?).map(|m| Some(NodeMetadata::Group(m))).map_err(|e| e.context(store.location(k)));
    }
    let k = key(path, "meta");
    if let Some(doc) = read_doc(store, &k)? {
        if doc.get("zarr_format").and_then(Value::as_u64) == Some(1) {
            let attrs = read_attributes(store, &key(path, "attrs"))?;
            return v1::parse_array(&doc, attrs).map(|m| Some(NodeMetadata::Array(m))).map_err(|e| e.context(store.location(&k)));
        }
    }
    Ok(None)
}

/// The kind and format of the node at `path` (metadata not fully parsed); `None` when there is none.
pub fn node_kind(store: &dyn Store, path: &str) -> Result<Option<(NodeKind, u8)>> {
    let k = v3_key(path);
    if let Some(doc) = read_doc(store, &k)? {
        return Ok(Some(match v3::node_type(&doc).map_err(|e| e.context(store.location(&k)))? {
            v3::NodeType::Array => (NodeKind::Array, 3),
            v3::NodeType::Group => (NodeKind::Group, 3),
        }));
    }
    if store.exists(&key(path, ".zarray"))? {
        return Ok(Some((NodeKind::Array, 2)));
    }
    if store.exists(&key(path, ".zgroup"))? {
        return Ok(Some((NodeKind::Group, 2)));
    }
    if store.exists(&key(path, "meta"))? {
        if let Some(doc) = read_doc(store, &key(path, "meta"))? {
            if doc.get("zarr_format").and_then(Value::as_u64) == Some(1) {
                return Ok(Some((NodeKind::Array, 1)));
            }
        }
    }
    Ok(None)
}

/// A node path described for messages: where it lives in the store (e.g. its directory).
pub fn describe(store: &dyn Store, path: &str) -> String {
    format!("'{}'", store.location(path))
}

/// Fails with [`Error::Exists`] when a node of any format already exists at `path`. The three keys
/// are looked up at once (one round trip on a remote store).
pub fn check_absent(store: &dyn Store, path: &str) -> Result<()> {
    let keys: Vec<String> = ["zarr.json", ".zarray", ".zgroup"].iter().map(|n| key(path, n)).collect();
    let found = crate::threads::io_scope(store.io_concurrency(), || crate::threads::try_map(&keys, |k| store.exists(k)))?;
    if found.contains(&true) {
        return Err(Error::Exists(format!("an array or group already exists at {}", describe(store, path))));
    }
    Ok(())
}

/// Makes sure every ancestor of `path` is a group, creating empty groups of `zarr_format` (2 or 3)
/// where there is no node. An ancestor that is an array is an error.
pub fn ensure_parents(store: &dyn Store, path: &str, zarr_format: u8) -> Result<()> {
    if path.is_empty() {
        return Ok(());
    }
    let parts: Vec<&str> = path.split('/').collect();
    for n in 0..parts.len() {
        let parent = parts[..n].join("/");
        match node_kind(store, &parent)? {
            Some((NodeKind::Group, _)) => {}
            Some((NodeKind::Array, _)) => {
                return Err(Error::InvalidArgument(format!(
                    "cannot create '{path}': its ancestor {} is an array",
                    describe(store, &parent)
                )))
            }
            None if zarr_format == 2 => store.set(&key(&parent, ".zgroup"), &metadata::to_bytes(&v2::group_document()))?,
            None => store.set(&v3_key(&parent), &metadata::to_bytes(&v3::group_document(&Default::default())))?,
        }
    }
    Ok(())
}
