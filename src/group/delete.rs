//! Deleting a member (array or group, with everything below it) of a group.
//!
//! Order, so that a failure midway leaves at most unreachable garbage and never a half-node that still
//! opens:
//! 1. every consolidated metadata document of an ancestor group (v3 `consolidated_metadata` inline in
//!    its `zarr.json`, v2 `.zmetadata`) that names the node or a node below it is rewritten without
//!    those entries (under that group's metadata lock), so that no snapshot describes a node whose
//!    documents are gone;
//! 2. the subtree is walked top-down: at each level the node's documents (`zarr.json`, `.zarray`,
//!    `.zgroup`, `.zmetadata`, `.zattrs`, v1 `meta`/`attrs`) go first, so that readers see the node
//!    disappear at once, then its other keys (chunks), then the levels below;
//! 3. directories left empty are removed where the store has them ([`Store::remove_empty_prefix`]).

use super::Group;
use crate::error::{Error, Result};
use crate::metadata;
use crate::node::{self, NodeKind};
use crate::store::{node_prefix, normalize_node_path, Store};
use serde_json::Value;

/// The documents of a node, in the order they are deleted (the one that makes it a node first).
const DOCUMENTS: [&str; 7] = ["zarr.json", ".zarray", ".zgroup", ".zmetadata", ".zattrs", "meta", "attrs"];

impl Group {
    /// Deletes the member `name` (a relative path such as `"a/b"`) of this group: the array or group
    /// there and every key below it. Consolidated metadata of this group and of its ancestors is
    /// updated so that it no longer names the deleted nodes.
    ///
    /// Errors: [`Error::InvalidArgument`] for an empty, absolute or otherwise invalid name (`..`,
    /// `.`), [`Error::ReadOnly`] when the group was opened read-only or the store cannot be written
    /// (zip, HTTP), [`Error::NotFound`] when there is no array or group at `name`.
    pub fn delete_member(&self, name: &str) -> Result<()> {
        if name.starts_with('/') {
            return Err(Error::InvalidArgument(format!("member name '{name}' must be relative, not absolute")));
        }
        if normalize_node_path(name)?.is_empty() {
            return Err(Error::InvalidArgument(format!("invalid member name '{name}' (it names the group itself)")));
        }
        let path = self.child_path(name)?;
        self.check_writable()?;
        self.store.ensure_writable()?;
        let store = self.store.as_ref();
        // A node only the consolidated metadata still describes (its documents gone) is deleted too:
        // its entries, and whatever keys are left below it.
        let in_snapshot = || -> Result<bool> {
            Ok(match self.snapshot() {
                Some(snapshot) => snapshot.node(store, &path)?.is_some(),
                None => false,
            })
        };
        if node::node_kind(store, &path)?.is_none() && !in_snapshot()? {
            return Err(Error::NotFound(format!("no array or group at {}", node::describe(store, &path))));
        }
        // Nothing is changed when the node can only be reached through a symbolic link.
        store.check_removable(&node_prefix(&path))?;
        self.drop_snapshot();
        // 1. consolidated metadata of every ancestor group, root first.
        let segments: Vec<&str> = path.split('/').collect();
        for depth in 0..segments.len() {
            let ancestor = segments[..depth].join("/");
            let rel = segments[depth..].join("/");
            if let Some(doc) = drop_from_consolidated(store, &ancestor, &rel)? {
                if ancestor == self.path {
                    *self.document.lock().unwrap_or_else(|e| e.into_inner()) = doc;
                }
            }
        }
        // 2. and 3. the subtree.
        delete_subtree(store, &node_prefix(&path))
    }
}

/// Removes the entries of node `rel` (relative to the group at `group_path`) and of every node below
/// it from that group's consolidated metadata, if it has any that names them. Returns the group's new
/// v3 document when it was rewritten.
pub(super) fn drop_from_consolidated(store: &dyn Store, group_path: &str, rel: &str) -> Result<Option<Value>> {
    let doc_key = node::v3_key(group_path);
    if let Some(bytes) = store.get_limited(&doc_key, crate::store::ReadLimit::metadata(store.max_metadata_bytes()))? {
        let parsed = metadata::parse_json_at(&bytes, &doc_key, store.max_metadata_bytes()).map_err(|e| e.context(store.location(&doc_key)))?;
        if !names_in_v3(&parsed, rel) {
            return Ok(None);
        }
        let lock = store.lock_group_document(&node_prefix(group_path), &doc_key)?;
        // Re-read under the lock: another writer may have changed the document since.
        let mut doc = node::read_document(store, &doc_key)?;
        if !prune_v3(&mut doc, rel) {
            return Ok(None);
        }
        store.set_parts_locked(&doc_key, &[&metadata::to_bytes(&doc)], &lock)?;
        return Ok(Some(doc));
    }
    let zmeta_key = node::key(group_path, ".zmetadata");
    if !store.exists(&zmeta_key)? {
        return Ok(None);
    }
    let lock = store.lock_group_document(&node_prefix(group_path), &node::metadata_key(group_path, 2, NodeKind::Group))?;
    let mut zmeta = node::read_document(store, &zmeta_key)?;
    let Some(entries) = zmeta.get_mut("metadata").and_then(Value::as_object_mut) else { return Ok(None) };
    let below = format!("{rel}/");
    let before = entries.len();
    entries.retain(|k, _| !k.starts_with(&below));
    if entries.len() != before {
        store.set_parts_locked(&zmeta_key, &[&metadata::to_bytes(&zmeta)], &lock)?;
    }
    Ok(None)
}

/// Whether the v3 group document `doc` has consolidated metadata naming `rel` or a node below it.
fn names_in_v3(doc: &Value, rel: &str) -> bool {
    prune_v3(&mut doc.clone(), rel)
}

/// Removes `rel` and the nodes below it from the consolidated metadata of the v3 group document
/// `doc` (also from the consolidated metadata nested in the entries of groups above `rel`, where a
/// writer put some); whether anything was removed.
pub(super) fn prune_v3(doc: &mut Value, rel: &str) -> bool {
    let Some(entries) = doc.get_mut("consolidated_metadata").and_then(|cm| cm.get_mut("metadata")).and_then(Value::as_object_mut)
    else {
        return false;
    };
    let below = format!("{rel}/");
    let before = entries.len();
    entries.retain(|k, _| k != rel && !k.starts_with(&below));
    let mut changed = entries.len() != before;
    for (k, entry) in entries.iter_mut() {
        if let Some(inner) = rel.strip_prefix(k.as_str()).and_then(|r| r.strip_prefix('/')) {
            changed |= prune_v3(entry, inner);
        }
    }
    changed
}

/// Deletes every key below `prefix` (ending in `/`), each level's node documents first. A store that
/// deletes a tree itself ([`Store::delete_tree`]: the filesystem store, which never follows a symbolic
/// link) does; otherwise key by key.
pub(super) fn delete_subtree(store: &dyn Store, prefix: &str) -> Result<()> {
    if store.delete_tree(prefix, &DOCUMENTS)? {
        return Ok(());
    }
    delete_keys(store, prefix)
}

/// [`delete_subtree`] key by key, through the store's listing.
fn delete_keys(store: &dyn Store, prefix: &str) -> Result<()> {
    let listing = store.list_dir(prefix)?;
    for doc in DOCUMENTS {
        if listing.keys.iter().any(|k| k == doc) {
            store.delete(&format!("{prefix}{doc}"))?;
        }
    }
    for key in listing.keys.iter().filter(|k| !DOCUMENTS.contains(&k.as_str())) {
        store.delete(&format!("{prefix}{key}"))?;
    }
    for sub in &listing.prefixes {
        delete_keys(store, &format!("{prefix}{sub}/"))?;
    }
    store.remove_empty_prefix(prefix)
}

#[cfg(test)]
mod tests {
    use crate::group::Group;
    use crate::store::memory::MemoryStore;
    use crate::store::Store;
    use crate::Error;
    use serde_json::{json, Map};
    use std::sync::Arc;

    fn array_doc() -> String {
        json!({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})
        .to_string()
    }

    fn keys(store: &MemoryStore) -> Vec<String> {
        let mut out = Vec::new();
        fn walk(s: &MemoryStore, p: &str, out: &mut Vec<String>) {
            let l = s.list_dir(p).unwrap();
            out.extend(l.keys.iter().map(|k| format!("{p}{k}")));
            for d in l.prefixes {
                walk(s, &format!("{p}{d}/"), out);
            }
        }
        walk(store, "", &mut out);
        out.sort();
        out
    }

    #[test]
    fn deletes_subtrees_and_updates_consolidated_metadata() {
        let mem = Arc::new(MemoryStore::new());
        let root = Group::create(mem.clone(), "", Map::new(), 3).unwrap();
        let g = root.create_group("g", Map::new()).unwrap();
        g.create_array("a", &array_doc()).unwrap().write_region(&[0], &[4], &[1u8; 16]).unwrap();
        g.create_group("sub/deep", Map::new()).unwrap();
        root.create_array("keep", &array_doc()).unwrap();
        root.consolidate().unwrap();
        assert!(keys(&mem).iter().any(|k| k.starts_with("g/a/c/")));

        root.delete_member("g/a").unwrap();
        assert!(!keys(&mem).iter().any(|k| k.starts_with("g/a/")), "{:?}", keys(&mem));
        let cm = &root.document()["consolidated_metadata"]["metadata"];
        assert!(cm.get("g/a").is_none() && cm.get("g").is_some() && cm.get("keep").is_some());

        root.delete_member("g").unwrap();
        assert_eq!(keys(&mem), vec!["keep/zarr.json".to_string(), "zarr.json".to_string()]);
        let reopened = Group::open(mem.clone(), "", true).unwrap();
        let names: Vec<String> = reopened.children().unwrap().into_iter().map(|c| c.0).collect();
        assert_eq!(names, vec!["keep".to_string()]);

        assert!(matches!(root.delete_member("g"), Err(Error::NotFound(_))));
        for bad in ["", "/", ".", "..", "/keep", "a/../keep"] {
            assert!(matches!(root.delete_member(bad), Err(Error::InvalidArgument(_))), "{bad}");
        }
        let ro = Group::open(mem.clone(), "", false).unwrap();
        assert!(matches!(ro.delete_member("keep"), Err(Error::ReadOnly(_))));
    }

    #[test]
    fn v2_zmetadata_loses_the_deleted_entries() {
        let mem = Arc::new(MemoryStore::new());
        let root = Group::create(mem.clone(), "", Map::new(), 2).unwrap();
        root.create_group("x/y", Map::new()).unwrap();
        root.create_group("z", Map::new()).unwrap();
        root.consolidate().unwrap();
        root.delete_member("x").unwrap();
        let z = crate::metadata::parse_json(&mem.get(".zmetadata").unwrap().unwrap()).unwrap();
        let names: Vec<&String> = z["metadata"].as_object().unwrap().keys().collect();
        assert_eq!(names, vec![".zgroup", "z/.zgroup"]);
        assert_eq!(keys(&mem), vec![".zgroup", ".zmetadata", "z/.zgroup"]);
    }
}
