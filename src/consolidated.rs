//! Consolidated metadata: the metadata documents of a whole hierarchy kept in one place, so that
//! opening a group and then its many arrays and sub-groups takes one request instead of one per node
//! (and so that a group can be listed on stores that cannot list, such as HTTP).
//!
//! Layouts (those zarr-python 3 reads and writes):
//! - v3: the `consolidated_metadata` member of the group's `zarr.json`:
//!   `{"kind": "inline", "must_understand": false, "metadata": {"a": {...}, "a/b": {...}}}`, each value
//!   a node's whole `zarr.json` document keyed by its path relative to the group; sub-group documents
//!   carry an empty `consolidated_metadata` of their own.
//! - v2: `.zmetadata` beside the group's `.zgroup`:
//!   `{"metadata": {".zgroup": {...}, "a/.zarray": {...}, "a/.zattrs": {...}}, "zarr_consolidated_format": 1}`.
//!
//! Staleness rule (zarr-python's): a group opened with consolidated metadata trusts it for the nodes it
//! lists: children opened through the group, and the group's listing, come from the snapshot without
//! reading the store. A node missing from the snapshot is looked up in the store. Writes through
//! libzarr update only the node's own documents; consolidated metadata is rewritten only on request
//! ([`write`], C `zarr_group_consolidate`). A group handle that creates a child stops using its
//! snapshot (it no longer describes the hierarchy) and goes back to the store.

use crate::error::{Error, Result};
use crate::metadata::{self, v2, v3};
use crate::node::{self, NodeKind, NodeMetadata};
use crate::store::{normalize_node_path, node_prefix, Store};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One node's documents as consolidated.
#[derive(Debug, Clone)]
enum Entry {
    /// A v3 `zarr.json` document.
    V3(Value),
    /// A v2 `.zarray` or `.zgroup` document and its `.zattrs` (if any).
    V2 { kind: NodeKind, doc: Value, attrs: Option<Value> },
}

impl Entry {
    fn kind(&self) -> Result<NodeKind> {
        match self {
            Entry::V3(doc) => Ok(match v3::node_type(doc)? {
                v3::NodeType::Array => NodeKind::Array,
                v3::NodeType::Group => NodeKind::Group,
            }),
            Entry::V2 { kind, .. } => Ok(*kind),
        }
    }
}

/// The consolidated metadata of a group: node documents keyed by their full node path in the store.
#[derive(Debug)]
pub struct Consolidated {
    nodes: BTreeMap<String, Entry>,
}

fn meta_err(what: &str, msg: impl std::fmt::Display) -> Error {
    Error::Metadata(format!("consolidated metadata ({what}): {msg}"))
}

fn join(base: &str, rel: &str) -> String {
    if rel.is_empty() {
        base.to_string()
    } else if base.is_empty() {
        rel.to_string()
    } else {
        format!("{base}/{rel}")
    }
}

impl Consolidated {
    /// The consolidated metadata inlined in the v3 group document `doc` of the group at `path`;
    /// `None` when there is none (absent, `null`, or a kind other than `inline`).
    pub fn from_v3(path: &str, doc: &Value) -> Result<Option<Consolidated>> {
        let Some(cm) = doc.get("consolidated_metadata").filter(|v| !v.is_null()) else { return Ok(None) };
        let what = "consolidated_metadata";
        let cm = cm.as_object().ok_or_else(|| meta_err(what, "must be an object or null"))?;
        if cm.get("kind").and_then(Value::as_str) != Some("inline") {
            return Ok(None);
        }
        let Some(entries) = cm.get("metadata") else { return Err(meta_err(what, "missing \"metadata\"")) };
        let entries = entries.as_object().ok_or_else(|| meta_err(what, "\"metadata\" must be an object"))?;
        let mut nodes = BTreeMap::new();
        for (rel, doc) in entries {
            let rel_norm = normalize_node_path(rel)?;
            if rel_norm.is_empty() {
                return Err(meta_err(what, format!("invalid node path '{rel}'")));
            }
            if !doc.is_object() {
                return Err(meta_err(what, format!("the entry for '{rel}' is not an object")));
            }
            nodes.insert(join(path, &rel_norm), Entry::V3(doc.clone()));
        }
        Ok(Some(Consolidated { nodes }))
    }

    /// The consolidated metadata of the v2 group at `path` from its `.zmetadata` document.
    pub fn from_v2(path: &str, zmetadata: &Value) -> Result<Consolidated> {
        let what = ".zmetadata";
        let obj = zmetadata.as_object().ok_or_else(|| meta_err(what, "expected a JSON object"))?;
        match obj.get("zarr_consolidated_format").and_then(Value::as_u64) {
            Some(1) => {}
            _ => return Err(Error::Unsupported(format!("{what}: zarr_consolidated_format must be 1"))),
        }
        let entries = obj
            .get("metadata")
            .and_then(Value::as_object)
            .ok_or_else(|| meta_err(what, "missing or non-object \"metadata\""))?;
        // node path -> (.zarray, .zgroup, .zattrs)
        let mut parts: BTreeMap<String, [Option<&Value>; 3]> = BTreeMap::new();
        for (key, doc) in entries {
            let (dir, name) = key.rsplit_once('/').unwrap_or(("", key.as_str()));
            let slot = match name {
                ".zarray" => 0,
                ".zgroup" => 1,
                ".zattrs" => 2,
                _ => continue,
            };
            let rel = normalize_node_path(dir)?;
            if rel.is_empty() {
                continue; // the group's own documents: read from the store when it was opened
            }
            parts.entry(join(path, &rel)).or_default()[slot] = Some(doc);
        }
        let mut nodes = BTreeMap::new();
        for (p, [zarray, zgroup, zattrs]) in parts {
            let (kind, doc) = match (zarray, zgroup) {
                (Some(a), _) => (NodeKind::Array, a),
                (None, Some(g)) => (NodeKind::Group, g),
                (None, None) => continue,
            };
            if !doc.is_object() || zattrs.is_some_and(|a| !a.is_object()) {
                return Err(meta_err(what, format!("the documents of '{p}' must be objects")));
            }
            nodes.insert(p, Entry::V2 { kind, doc: doc.clone(), attrs: zattrs.cloned() });
        }
        Ok(Consolidated { nodes })
    }

    /// The parsed metadata of the node at full path `path`; `None` when the snapshot has no such node.
    /// `store` only names the node in error messages.
    pub fn node(&self, store: &dyn Store, path: &str) -> Result<Option<NodeMetadata>> {
        let Some(entry) = self.nodes.get(path) else { return Ok(None) };
        let ctx = |e: Error| e.context(format!("{} (consolidated metadata)", node::describe(store, path)));
        Ok(Some(match entry {
            Entry::V3(doc) => match v3::node_type(doc).map_err(ctx)? {
                v3::NodeType::Array => NodeMetadata::Array(v3::parse_array(doc.clone()).map_err(ctx)?),
                v3::NodeType::Group => NodeMetadata::Group(v3::parse_group(doc.clone()).map_err(ctx)?),
            },
            Entry::V2 { kind, doc, attrs } => {
                let attrs = match attrs {
                    Some(Value::Object(m)) => m.clone(),
                    _ => Map::new(),
                };
                match kind {
                    NodeKind::Array => NodeMetadata::Array(v2::parse_array(doc, attrs).map_err(ctx)?),
                    NodeKind::Group => NodeMetadata::Group(v2::parse_group(doc, attrs).map_err(ctx)?),
                }
            }
        }))
    }

    /// The direct children of the group at full path `path` that the snapshot describes, sorted by name.
    pub fn children(&self, path: &str) -> Result<Vec<(String, NodeKind)>> {
        let prefix = node_prefix(path);
        let mut out = Vec::new();
        for (p, entry) in self.nodes.range(prefix.clone()..) {
            let Some(name) = p.strip_prefix(&prefix) else { break };
            if !name.contains('/') {
                out.push((name.to_string(), entry.kind()?));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}

fn read_json(store: &dyn Store, key: &str) -> Result<Option<Value>> {
    match store.get_limited(key, crate::store::ReadLimit::metadata(store.max_metadata_bytes()))? {
        None => Ok(None),
        Some(bytes) => metadata::parse_json_at(&bytes, key, store.max_metadata_bytes()).map(Some).map_err(|e| e.context(store.location(key))),
    }
}

/// The consolidated entry of the node at `node_path` when it is a node of `zarr_format`.
fn node_entry(store: &dyn Store, node_path: &str, zarr_format: u8) -> Result<Option<Entry>> {
    if zarr_format == 3 {
        let Some(mut doc) = read_json(store, &node::v3_key(node_path))? else { return Ok(None) };
        let kind = v3::node_type(&doc).map_err(|e| e.context(store.location(&node::v3_key(node_path))))?;
        if kind == v3::NodeType::Group {
            // As zarr-python writes it: sub-groups carry an empty consolidated_metadata.
            doc = with_consolidated(&doc, Map::new());
        }
        return Ok(Some(Entry::V3(doc)));
    }
    let attrs = read_json(store, &node::key(node_path, ".zattrs"))?;
    Ok(if let Some(doc) = read_json(store, &node::key(node_path, ".zarray"))? {
        Some(Entry::V2 { kind: NodeKind::Array, doc, attrs })
    } else {
        read_json(store, &node::key(node_path, ".zgroup"))?.map(|doc| Entry::V2 { kind: NodeKind::Group, doc, attrs })
    })
}

/// Collects the documents of every node of `zarr_format` below the group at `path` (walking the store,
/// which must be able to list), keyed by path relative to the group.
fn collect(store: &dyn Store, path: &str, rel: &str, zarr_format: u8, out: &mut BTreeMap<String, Entry>) -> Result<()> {
    let listing = store.list_dir(&node_prefix(&join(path, rel)))?;
    for name in listing.prefixes {
        if name.starts_with("__") || normalize_node_path(&name).is_err() {
            continue;
        }
        let child_rel = join(rel, &name);
        let Some(entry) = node_entry(store, &join(path, &child_rel), zarr_format)? else { continue };
        let recurse = entry.kind()? == NodeKind::Group;
        out.insert(child_rel.clone(), entry);
        if recurse {
            collect(store, path, &child_rel, zarr_format, out)?;
        }
    }
    Ok(())
}

/// Entries as a v2 `.zmetadata` stores them: `rel/.zarray` or `rel/.zgroup`, and `rel/.zattrs`.
fn v2_entries(entries: BTreeMap<String, Entry>, docs: &mut Map<String, Value>) {
    for (rel, e) in entries {
        if let Entry::V2 { kind, doc, attrs } = e {
            let name = if kind == NodeKind::Array { ".zarray" } else { ".zgroup" };
            docs.insert(format!("{rel}/{name}"), doc);
            if let Some(attrs) = attrs {
                docs.insert(format!("{rel}/.zattrs"), attrs);
            }
        }
    }
}

/// The consolidated metadata entries, keyed as the group at `path` stores them, of the node `rel`
/// below it and of every node below that one (walking the store): v3 `rel` and `rel/...` to their
/// documents; v2 `rel/.zarray` or `rel/.zgroup` and `rel/.zattrs` (and those below). Empty when
/// there is no node of `zarr_format` at `rel`.
pub fn subtree_entries(store: &dyn Store, path: &str, rel: &str, zarr_format: u8) -> Result<Map<String, Value>> {
    let mut entries = BTreeMap::new();
    if let Some(entry) = node_entry(store, &join(path, rel), zarr_format)? {
        let group = entry.kind()? == NodeKind::Group;
        entries.insert(rel.to_string(), entry);
        if group {
            collect(store, path, rel, zarr_format, &mut entries)?;
        }
    }
    let mut out = Map::new();
    if zarr_format == 3 {
        out.extend(entries.into_iter().filter_map(|(rel, e)| match e {
            Entry::V3(doc) => Some((rel, doc)),
            Entry::V2 { .. } => None,
        }));
    } else {
        v2_entries(entries, &mut out);
    }
    Ok(out)
}

/// `doc` (a v3 group document) with an inline `consolidated_metadata` of `entries`, placed where
/// zarr-python puts it (before `node_type`).
fn with_consolidated(doc: &Value, entries: Map<String, Value>) -> Value {
    let mut out = Map::new();
    // placed, not serialised by `json!`, which refuses attributes' bare NaN / Infinity (see json_text)
    let mut cm = serde_json::json!({"kind": "inline", "must_understand": false});
    cm["metadata"] = Value::Object(entries);
    let mut placed = false;
    for (k, v) in doc.as_object().into_iter().flatten() {
        match k.as_str() {
            "consolidated_metadata" => continue,
            "node_type" if !placed => {
                out.insert("consolidated_metadata".into(), cm.clone());
                placed = true;
            }
            _ => {}
        }
        out.insert(k.clone(), v.clone());
    }
    if !placed {
        out.insert("consolidated_metadata".into(), cm);
    }
    Value::Object(out)
}

/// Consolidates the metadata of every node below the group at `path` (format `zarr_format`, current
/// document `group_doc`) into the store: v3 inline in the group's `zarr.json`, v2 as `.zmetadata`.
/// Nodes of the other Zarr format are left out. Returns the group's new document (v3; for v2 the
/// unchanged `group_doc`) and the new snapshot.
pub fn write(store: &dyn Store, path: &str, zarr_format: u8, group_doc: &Value) -> Result<(Value, Consolidated)> {
    let mut entries = BTreeMap::new();
    collect(store, path, "", zarr_format, &mut entries)?;
    let snapshot = Consolidated { nodes: entries.iter().map(|(rel, e)| (join(path, rel), e.clone())).collect() };
    match zarr_format {
        3 => {
            let docs = entries
                .into_iter()
                .map(|(rel, e)| match e {
                    Entry::V3(doc) => (rel, doc),
                    Entry::V2 { doc, .. } => (rel, doc), // not reached: the walk keeps v3 nodes only
                })
                .collect();
            let doc = with_consolidated(group_doc, docs);
            store.set(&node::v3_key(path), &metadata::to_bytes(&doc))?;
            Ok((doc, snapshot))
        }
        2 => {
            let mut docs = Map::new();
            docs.insert(".zgroup".into(), group_doc.clone());
            if let Some(attrs) = read_json(store, &node::key(path, ".zattrs"))? {
                docs.insert(".zattrs".into(), attrs);
            }
            v2_entries(entries, &mut docs);
            let mut zmeta = serde_json::json!({"metadata": {}, "zarr_consolidated_format": 1});
            zmeta["metadata"] = Value::Object(docs); // not through `json!` (bare NaN attributes)
            store.set(&node::key(path, ".zmetadata"), &metadata::to_bytes(&zmeta))?;
            Ok((group_doc.clone(), snapshot))
        }
        f => Err(Error::Unsupported(format!("consolidated metadata for Zarr format {f}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::Group;
    use crate::store::memory::MemoryStore;
    use crate::store::{ByteSource, DirListing};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// Counts metadata requests and refuses to list, like an HTTP store.
    #[derive(Debug)]
    struct Remote {
        inner: Arc<MemoryStore>,
        requests: AtomicU64,
        listable: bool,
    }

    impl Remote {
        fn count(&self) {
            self.requests.fetch_add(1, Ordering::Relaxed);
        }
    }

    impl Store for Remote {
        fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
            self.count();
            self.inner.get(key)
        }
        fn open(&self, key: &str) -> Result<Option<Box<dyn ByteSource + '_>>> {
            self.count();
            self.inner.open(key)
        }
        fn set(&self, key: &str, value: &[u8]) -> Result<()> {
            self.inner.set(key, value)
        }
        fn delete(&self, key: &str) -> Result<()> {
            self.inner.delete(key)
        }
        fn exists(&self, key: &str) -> Result<bool> {
            self.count();
            self.inner.exists(key)
        }
        fn list_dir(&self, prefix: &str) -> Result<DirListing> {
            self.count();
            if self.listable {
                self.inner.list_dir(prefix)
            } else {
                Err(Error::Unsupported("this store cannot list".into()))
            }
        }
        fn bytes_read(&self) -> u64 {
            self.inner.bytes_read()
        }
    }

    fn array_doc(format: u8) -> String {
        if format == 3 {
            r#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"int16","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},"chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"attributes":{"u":"m"}}"#.into()
        } else {
            r#"{"zarr_format":2,"shape":[4],"chunks":[2],"dtype":"<i2","compressor":null,"fill_value":0,"order":"C","filters":null}"#.into()
        }
    }

    /// Builds root/{a, s/{b, t/{c}}} in `format`, writes data, consolidates through a listing store.
    fn build(format: u8) -> Arc<MemoryStore> {
        let mem = Arc::new(MemoryStore::new());
        let root = Group::create(mem.clone(), "", Map::new(), format).unwrap();
        for (i, name) in ["a", "s/b", "s/t/c"].into_iter().enumerate() {
            let a = root.create_array(name, &array_doc(format)).unwrap();
            let data: Vec<u8> = (0..4i16).flat_map(|v| (v + 10 * i as i16).to_le_bytes()).collect();
            a.write_region(&[0], &[4], &data).unwrap();
        }
        let mut attrs = Map::new();
        attrs.insert("k".into(), Value::from(7));
        root.open_group("s").unwrap().set_attributes(attrs).unwrap();
        let root = Group::open(mem.clone(), "", true).unwrap();
        assert!(!root.has_consolidated());
        root.consolidate().unwrap();
        assert!(root.has_consolidated());
        mem
    }

    fn check_remote(format: u8) {
        let mem = build(format);
        let remote = Arc::new(Remote { inner: mem.clone(), requests: AtomicU64::new(0), listable: false });
        let root = Group::open(remote.clone(), "", false).unwrap();
        assert!(root.has_consolidated());
        let after_open = remote.requests.load(Ordering::Relaxed);
        // Listing and opening every node: no request (and no listing, which this store refuses).
        assert_eq!(root.children().unwrap(), [("a".to_string(), NodeKind::Array), ("s".to_string(), NodeKind::Group)]);
        let s = root.open_group("s").unwrap();
        assert_eq!(s.attributes()["k"], 7);
        assert_eq!(s.children().unwrap(), [("b".to_string(), NodeKind::Array), ("t".to_string(), NodeKind::Group)]);
        let t = s.open_group("t").unwrap();
        assert_eq!(t.children().unwrap(), [("c".to_string(), NodeKind::Array)]);
        let arrays = [root.open_array("a").unwrap(), s.open_array("b").unwrap(), root.open_array("s/t/c").unwrap()];
        if format == 3 {
            assert_eq!(arrays[1].attributes()["u"], "m");
        }
        assert!(root.open_array("s").is_err() && root.open_group("a").is_err());
        assert_eq!(remote.requests.load(Ordering::Relaxed), after_open, "metadata came from the snapshot");
        for (i, a) in arrays.iter().enumerate() {
            let mut out = vec![0u8; 8];
            a.read_region(&[0], &[4], &mut out).unwrap();
            let want: Vec<u8> = (0..4i16).flat_map(|v| (v + 10 * i as i16).to_le_bytes()).collect();
            assert_eq!(out, want);
        }
        // Without consolidated metadata the same store cannot be listed.
        let plain = Group::open(remote.clone(), "s", false).unwrap();
        assert!(!plain.has_consolidated());
        assert!(matches!(plain.children(), Err(Error::Unsupported(_))));
    }

    #[test]
    fn v3_hierarchy_opens_from_consolidated_metadata() {
        check_remote(3);
    }

    #[test]
    fn v2_hierarchy_opens_from_zmetadata() {
        check_remote(2);
    }

    #[test]
    fn layout_matches_zarr_python() {
        let mem = build(3);
        let doc = metadata::parse_json(&mem.get("zarr.json").unwrap().unwrap()).unwrap();
        let keys: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
        let at = |k: &str| keys.iter().position(|x| *x == k).unwrap();
        assert!(at("consolidated_metadata") + 1 == at("node_type"), "{keys:?}");
        let cm = &doc["consolidated_metadata"];
        assert_eq!((cm["kind"].as_str(), cm["must_understand"].as_bool()), (Some("inline"), Some(false)));
        let names: Vec<&String> = cm["metadata"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["a", "s", "s/b", "s/t", "s/t/c"]);
        assert_eq!(cm["metadata"]["s"]["consolidated_metadata"]["metadata"], serde_json::json!({}));
        assert_eq!(cm["metadata"]["s"]["attributes"]["k"], 7);

        let mem = build(2);
        let z = metadata::parse_json(&mem.get(".zmetadata").unwrap().unwrap()).unwrap();
        assert_eq!(z["zarr_consolidated_format"], 1);
        let m = z["metadata"].as_object().unwrap();
        for k in [".zgroup", "a/.zarray", "s/.zgroup", "s/.zattrs", "s/b/.zarray", "s/t/c/.zarray"] {
            assert!(m.contains_key(k), "{k}");
        }
    }

    #[test]
    fn stale_and_new_nodes() {
        let mem = build(3);
        let root = Group::open(mem.clone(), "", true).unwrap();
        // A write through libzarr changes the node's own document, not the consolidated one.
        let mut attrs = Map::new();
        attrs.insert("new".into(), Value::from(1));
        root.open_array("a").unwrap().set_attributes(attrs).unwrap();
        let reopened = Group::open(mem.clone(), "", false).unwrap();
        assert!(reopened.open_array("a").unwrap().attributes().get("new").is_none(), "consolidated is trusted");
        // A node added after consolidation is still found; the creating handle goes back to the store.
        root.create_group("late", Map::new()).unwrap();
        assert!(!root.has_consolidated());
        assert_eq!(root.children().unwrap().len(), 3);
        assert!(reopened.open_group("late").is_ok());
        assert_eq!(reopened.children().unwrap().len(), 2);
        root.consolidate().unwrap();
        let fresh = Group::open(mem, "", false).unwrap();
        assert_eq!(fresh.children().unwrap().len(), 3);
        assert_eq!(fresh.open_array("a").unwrap().attributes()["new"], 1);
    }

    #[test]
    fn malformed() {
        let doc = serde_json::json!({"zarr_format": 3, "node_type": "group",
            "consolidated_metadata": {"kind": "inline", "must_understand": false, "metadata": {"../x": {}}}});
        assert!(Consolidated::from_v3("", &doc).is_err());
        let doc = serde_json::json!({"consolidated_metadata": {"kind": "inline", "metadata": {"a": 3}}});
        assert!(Consolidated::from_v3("", &doc).is_err());
        let doc = serde_json::json!({"consolidated_metadata": {"kind": "other"}});
        assert!(Consolidated::from_v3("", &doc).unwrap().is_none());
        assert!(Consolidated::from_v3("", &serde_json::json!({"consolidated_metadata": null})).unwrap().is_none());
        assert!(Consolidated::from_v2("", &serde_json::json!({"metadata": {}})).is_err());
        assert!(Consolidated::from_v2("", &serde_json::json!({"metadata": 1, "zarr_consolidated_format": 1})).is_err());
        let c = Consolidated::from_v2("g", &serde_json::json!({"metadata": {"x/.zattrs": {}, "y/.zgroup": {"zarr_format": 2}},
            "zarr_consolidated_format": 1})).unwrap();
        assert_eq!(c.children("g").unwrap(), [("y".to_string(), NodeKind::Group)]);
        let mem = MemoryStore::new();
        mem.set("zarr.json", br#"{"zarr_format":3,"node_type":"group","consolidated_metadata":{"kind":"inline","must_understand":false,"metadata":{"a":{"zarr_format":3,"node_type":"array"}}}}"#).unwrap();
        let g = Group::open(Arc::new(mem), "", false).unwrap();
        assert!(matches!(g.open_array("a"), Err(Error::Metadata(_))));
    }
}
