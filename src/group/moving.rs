//! Moving (renaming) a member (array or group, with everything below it) of a group to another path
//! of the same hierarchy.
//!
//! Order, so that a failure midway leaves the source readable:
//! 1. the keys move: where the store can do it in one atomic step ([`Store::rename_prefix`]: the
//!    filesystem store renames the node's directory, the memory store moves its keys) that is all;
//!    otherwise (object stores) every key below the source is copied to the destination first;
//! 2. every consolidated metadata document of an ancestor group of the source or of the destination
//!    (v3 `consolidated_metadata` inline in its `zarr.json`, v2 `.zmetadata`) is rewritten under that
//!    group's metadata lock: entries of the moved nodes are renamed where the group is above both
//!    paths, dropped where it is above the source only, and read from the moved node's documents
//!    where it is above the destination only;
//! 3. for a copy, the source subtree is deleted like [`Group::delete_member`] deletes (documents first).

use super::delete::{delete_subtree, prune_v3};
use super::Group;
use crate::consolidated;
use crate::error::{Error, Result};
use crate::metadata;
use crate::node::{self, NodeKind};
use crate::store::{node_prefix, normalize_node_path, Store};
use serde_json::{Map, Value};

impl Group {
    /// Moves the member `from` (a relative path such as `"a/b"`) of this group to the relative path
    /// `to`, with every key below it. The parent group of `to` must exist, and nothing may be stored
    /// at `to`. Consolidated metadata of the ancestors of both paths is updated.
    ///
    /// Errors: [`Error::InvalidArgument`] for an empty, absolute or otherwise invalid path, or when
    /// `to` is `from` or lies below it; [`Error::ReadOnly`] when the group was opened read-only or
    /// the store cannot be written (zip, HTTP); [`Error::NotFound`] when there is no array or group
    /// at `from` or no group is the parent of `to`; [`Error::Exists`] when a node or keys are at `to`.
    pub fn move_member(&self, from: &str, to: &str) -> Result<()> {
        let src = self.member_path(from)?;
        let dst = self.member_path(to)?;
        if src == dst || dst.starts_with(&format!("{src}/")) {
            return Err(Error::InvalidArgument(format!("cannot move '{from}' to '{to}': the destination is the node itself or below it")));
        }
        self.check_writable()?;
        self.store.ensure_writable()?;
        let store = self.store.as_ref();
        if node::node_kind(store, &src)?.is_none() {
            return Err(Error::NotFound(format!("no array or group at {}", node::describe(store, &src))));
        }
        if node::node_kind(store, &dst)?.is_some() {
            return Err(Error::Exists(format!("an array or group exists at {}", node::describe(store, &dst))));
        }
        let below = store.list_dir(&node_prefix(&dst))?;
        if !below.keys.is_empty() || !below.prefixes.is_empty() {
            return Err(Error::Exists(format!("keys are stored below {}", node::describe(store, &dst))));
        }
        let parent = dst.rsplit_once('/').map_or("", |(p, _)| p);
        if !matches!(node::node_kind(store, parent)?, Some((NodeKind::Group, _))) {
            return Err(Error::NotFound(format!("no group at {} to move '{from}' into", node::describe(store, parent))));
        }
        let (from_prefix, to_prefix) = (node_prefix(&src), node_prefix(&dst));
        // Nothing is changed when either path can only be reached through a symbolic link.
        store.check_removable(&from_prefix)?;
        store.check_removable(&to_prefix)?;
        self.drop_snapshot();
        let renamed = store.rename_prefix(&from_prefix, &to_prefix)?;
        if !renamed {
            copy_subtree(store, &from_prefix, &to_prefix)?;
        }
        let mut ancestors: Vec<String> = ancestors_of(&src).chain(ancestors_of(&dst)).collect();
        ancestors.sort_by_key(|a| (if a.is_empty() { 0 } else { a.split('/').count() }, a.clone()));
        ancestors.dedup();
        for ancestor in &ancestors {
            let (rel_src, rel_dst) = (relative(ancestor, &src), relative(ancestor, &dst));
            if let Some(doc) = move_in_consolidated(store, ancestor, rel_src.as_deref(), rel_dst.as_deref())? {
                if *ancestor == self.path {
                    *self.document.lock().unwrap_or_else(|e| e.into_inner()) = doc;
                }
            }
        }
        if !renamed {
            delete_subtree(store, &from_prefix)?;
        }
        Ok(())
    }

    /// The store path of the member `name`, which must be a relative path naming a node below the group.
    fn member_path(&self, name: &str) -> Result<String> {
        if name.starts_with('/') {
            return Err(Error::InvalidArgument(format!("member name '{name}' must be relative, not absolute")));
        }
        if normalize_node_path(name)?.is_empty() {
            return Err(Error::InvalidArgument(format!("invalid member name '{name}' (it names the group itself)")));
        }
        self.child_path(name)
    }
}

/// The paths of the groups above the node `path`, root (`""`) first.
fn ancestors_of(path: &str) -> impl Iterator<Item = String> + '_ {
    let segments: Vec<&str> = path.split('/').collect();
    (0..segments.len()).map(move |depth| segments[..depth].join("/"))
}

/// `path` relative to the group at `ancestor`, when it lies below it.
fn relative(ancestor: &str, path: &str) -> Option<String> {
    if ancestor.is_empty() {
        return Some(path.to_string());
    }
    path.strip_prefix(ancestor).and_then(|r| r.strip_prefix('/')).map(str::to_string)
}

/// Copies every key below `from` to the same name below `to` (both ending in `/`).
fn copy_subtree(store: &dyn Store, from: &str, to: &str) -> Result<()> {
    let listing = store.list_dir(from)?;
    for key in &listing.keys {
        let value = store
            .get(&format!("{from}{key}"))?
            .ok_or_else(|| Error::NotFound(format!("{}: removed while it was being moved", store.location(&format!("{from}{key}")))))?;
        store.set(&format!("{to}{key}"), &value)?;
    }
    for sub in &listing.prefixes {
        copy_subtree(store, &format!("{from}{sub}/"), &format!("{to}{sub}/"))?;
    }
    Ok(())
}

/// Entries of `entries` naming the node `rel` (as itself, with `exact`, or as the prefix `rel/`) and
/// the nodes below it, taken out of `entries` and renamed to `new_rel` (kept under their old names
/// when `new_rel` is `None`).
fn take_entries(entries: &mut Map<String, Value>, rel: &str, new_rel: Option<&str>, exact: bool) -> Map<String, Value> {
    let below = format!("{rel}/");
    let names: Vec<String> = entries.keys().filter(|k| (exact && *k == rel) || k.starts_with(&below)).cloned().collect();
    let mut out = Map::new();
    for name in names {
        let value = entries.remove(&name).expect("listed above");
        let renamed = match new_rel {
            Some(new) => format!("{new}{}", &name[rel.len()..]),
            None => name,
        };
        out.insert(renamed, value);
    }
    out
}

/// Rewrites the consolidated metadata of the group at `group_path` (if it has any) for a move of the
/// node `rel_src` (relative to the group; `None`: the source is not below it) to `rel_dst` (`None`:
/// the destination is not below it). Returns the group's new v3 document when it was rewritten.
fn move_in_consolidated(store: &dyn Store, group_path: &str, rel_src: Option<&str>, rel_dst: Option<&str>) -> Result<Option<Value>> {
    let doc_key = node::v3_key(group_path);
    if let Some(bytes) = store.get_limited(&doc_key, crate::store::ReadLimit::metadata(store.max_metadata_bytes()))? {
        let parsed = metadata::parse_json_at(&bytes, &doc_key, store.max_metadata_bytes()).map_err(|e| e.context(store.location(&doc_key)))?;
        if !has_v3_entries(&parsed) {
            return Ok(None);
        }
        let lock = store.lock_group_document(&node_prefix(group_path), &doc_key)?;
        // Re-read under the lock: another writer may have changed the document since.
        let mut doc = node::read_document(store, &doc_key)?;
        let Some(entries) = v3_entries(&mut doc) else { return Ok(None) };
        let mut moved = match rel_src {
            Some(rs) => take_entries(entries, rs, rel_dst, true),
            None => Map::new(),
        };
        let mut changed = !moved.is_empty();
        if let Some(rs) = rel_src {
            // also from the consolidated metadata nested in the entries of groups above the source
            changed |= prune_v3(&mut doc, rs);
        }
        if let Some(rd) = rel_dst {
            if rel_src.is_none() {
                moved = consolidated::subtree_entries(store, group_path, rd, 3)?;
            }
            changed |= !moved.is_empty();
            v3_entries(&mut doc).expect("checked above").extend(moved);
        }
        if !changed {
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
    let mut moved = match rel_src {
        Some(rs) => take_entries(entries, rs, rel_dst, false),
        None => Map::new(),
    };
    let mut changed = !moved.is_empty();
    if let (Some(rd), None) = (rel_dst, rel_src) {
        moved = consolidated::subtree_entries(store, group_path, rd, 2)?;
    }
    if rel_dst.is_some() {
        changed |= !moved.is_empty();
        entries.extend(moved);
    }
    if changed {
        store.set_parts_locked(&zmeta_key, &[&metadata::to_bytes(&zmeta)], &lock)?;
    }
    Ok(None)
}

/// The consolidated metadata entries of a v3 group document, if it has any.
fn v3_entries(doc: &mut Value) -> Option<&mut Map<String, Value>> {
    doc.get_mut("consolidated_metadata").and_then(|cm| cm.get_mut("metadata")).and_then(Value::as_object_mut)
}

fn has_v3_entries(doc: &Value) -> bool {
    doc.get("consolidated_metadata").and_then(|cm| cm.get("metadata")).is_some_and(Value::is_object)
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

    /// Hides the memory store's atomic rename, like an object store.
    #[derive(Debug)]
    struct NoRename(Arc<MemoryStore>);
    impl Store for NoRename {
        fn get(&self, key: &str) -> crate::Result<Option<Vec<u8>>> {
            self.0.get(key)
        }
        fn open(&self, key: &str) -> crate::Result<Option<Box<dyn crate::store::ByteSource + '_>>> {
            self.0.open(key)
        }
        fn set(&self, key: &str, value: &[u8]) -> crate::Result<()> {
            self.0.set(key, value)
        }
        fn delete(&self, key: &str) -> crate::Result<()> {
            self.0.delete(key)
        }
        fn exists(&self, key: &str) -> crate::Result<bool> {
            self.0.exists(key)
        }
        fn list_dir(&self, prefix: &str) -> crate::Result<crate::store::DirListing> {
            self.0.list_dir(prefix)
        }
        fn bytes_read(&self) -> u64 {
            0
        }
    }

    fn check(store: Arc<dyn Store>, mem: &MemoryStore) {
        let root = Group::create(store.clone(), "", Map::new(), 3).unwrap();
        let g = root.create_group("g", Map::new()).unwrap();
        g.create_array("a", &array_doc()).unwrap().write_region(&[0], &[4], &[7u8; 16]).unwrap();
        g.create_group("sub/deep", Map::new()).unwrap();
        root.create_group("h", Map::new()).unwrap().consolidate().unwrap();
        root.consolidate().unwrap();

        root.move_member("g/a", "h/b").unwrap();
        assert!(!mem.keys().iter().any(|k| k.starts_with("g/a/")), "{:?}", mem.keys());
        assert!(mem.keys().iter().any(|k| k.starts_with("h/b/c/")), "{:?}", mem.keys());
        let cm = &root.document()["consolidated_metadata"]["metadata"];
        assert!(cm.get("g/a").is_none() && cm.get("h/b").is_some());
        // h (above the destination only) got the moved array's document
        let h = crate::metadata::parse_json(&mem.get("h/zarr.json").unwrap().unwrap()).unwrap();
        assert!(h["consolidated_metadata"]["metadata"].get("b").is_some());
        let reopened = Group::open(store.clone(), "", true).unwrap();
        let mut out = vec![0u8; 16];
        reopened.open_array("h/b").unwrap().read_region(&[0], &[4], &mut out).unwrap();
        assert_eq!(out, vec![7u8; 16]);

        root.move_member("g", "moved").unwrap();
        let cm = &root.document()["consolidated_metadata"]["metadata"];
        assert!(cm.get("g").is_none() && cm.get("moved/sub/deep").is_some());
        assert!(matches!(root.move_member("g", "x"), Err(Error::NotFound(_))));
        assert!(matches!(root.move_member("moved", "h"), Err(Error::Exists(_))));
        assert!(matches!(root.move_member("moved", "nowhere/x"), Err(Error::NotFound(_))));
        assert!(matches!(root.move_member("moved", "moved/sub/x"), Err(Error::InvalidArgument(_))));
        assert!(matches!(root.move_member("moved", "moved"), Err(Error::InvalidArgument(_))));
        for bad in ["", "/", ".", "/h", "a/../h"] {
            assert!(matches!(root.move_member(bad, "y"), Err(Error::InvalidArgument(_))), "{bad}");
            assert!(matches!(root.move_member("h", bad), Err(Error::InvalidArgument(_))), "{bad}");
        }
        let ro = Group::open(store, "", false).unwrap();
        assert!(matches!(ro.move_member("h", "k"), Err(Error::ReadOnly(_))));
    }

    #[test]
    fn moves_with_rename_and_with_copy() {
        let mem = Arc::new(MemoryStore::new());
        check(mem.clone(), &mem);
        let mem = Arc::new(MemoryStore::new());
        check(Arc::new(NoRename(mem.clone())), &mem);
    }

    #[test]
    fn v2_zmetadata_entries_are_renamed() {
        let mem = Arc::new(MemoryStore::new());
        let root = Group::create(mem.clone(), "", Map::new(), 2).unwrap();
        root.create_group("x/y", Map::new()).unwrap();
        root.create_group("z", Map::new()).unwrap();
        root.consolidate().unwrap();
        root.move_member("x", "z/w").unwrap();
        let z = crate::metadata::parse_json(&mem.get(".zmetadata").unwrap().unwrap()).unwrap();
        let mut names: Vec<&String> = z["metadata"].as_object().unwrap().keys().collect();
        names.sort();
        assert_eq!(names, vec![".zgroup", "z/.zgroup", "z/w/.zgroup", "z/w/y/.zgroup"]);
        assert_eq!(mem.keys(), vec![".zgroup", ".zmetadata", "z/.zgroup", "z/w/.zgroup", "z/w/y/.zgroup"]);
    }
}
