//! Finding out what node (array or group) lives at a path of a store, and creating implicit parents.

use crate::error::{Error, Result};
use crate::metadata::{self, v3, ArrayMetadata, GroupMetadata};
use crate::store::{node_prefix, Store};

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

/// Reads and parses the metadata of the node at `path`; `None` when there is no node.
pub fn read_node(store: &dyn Store, path: &str) -> Result<Option<NodeMetadata>> {
    let key = v3_key(path);
    let Some(bytes) = store.get(&key)? else { return Ok(None) };
    let loc = store.location(&key);
    let ctx = |e: Error| e.context(&loc);
    let doc = metadata::parse_json(&bytes).map_err(ctx)?;
    Ok(Some(match v3::node_type(&doc).map_err(ctx)? {
        v3::NodeType::Array => NodeMetadata::Array(v3::parse_array(&doc).map_err(ctx)?),
        v3::NodeType::Group => NodeMetadata::Group(v3::parse_group(&doc).map_err(ctx)?),
    }))
}

/// The kind of node at `path` (only its node type is checked); `None` when there is none.
pub fn node_kind(store: &dyn Store, path: &str) -> Result<Option<NodeKind>> {
    let key = v3_key(path);
    let Some(bytes) = store.get(&key)? else { return Ok(None) };
    let loc = store.location(&key);
    let doc = metadata::parse_json(&bytes).map_err(|e| e.context(&loc))?;
    Ok(Some(match v3::node_type(&doc).map_err(|e| e.context(&loc))? {
        v3::NodeType::Array => NodeKind::Array,
        v3::NodeType::Group => NodeKind::Group,
    }))
}

/// A node path described for messages: where it lives in the store (e.g. its directory).
pub fn describe(store: &dyn Store, path: &str) -> String {
    format!("'{}'", store.location(path))
}

/// Fails with [`Error::Exists`] when a node already exists at `path`.
pub fn check_absent(store: &dyn Store, path: &str) -> Result<()> {
    if store.exists(&v3_key(path))? {
        return Err(Error::Exists(format!("an array or group already exists at {}", describe(store, path))));
    }
    Ok(())
}

/// Makes sure every ancestor of `path` is a group, creating empty groups where there is no node.
/// An ancestor that is an array is an error.
pub fn ensure_parents(store: &dyn Store, path: &str) -> Result<()> {
    if path.is_empty() {
        return Ok(());
    }
    let parts: Vec<&str> = path.split('/').collect();
    for n in 0..parts.len() {
        let parent = parts[..n].join("/");
        match node_kind(store, &parent)? {
            Some(NodeKind::Group) => {}
            Some(NodeKind::Array) => {
                return Err(Error::InvalidArgument(format!(
                    "cannot create '{path}': its ancestor '{parent}' is an array"
                )))
            }
            None => store.set(&v3_key(&parent), &metadata::to_bytes(&v3::group_document(&Default::default())))?,
        }
    }
    Ok(())
}
