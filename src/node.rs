//! Finding out what node (array or group, of which Zarr format) lives at a path of a store, reading
//! its metadata, and creating implicit parent groups.
//!
//! Metadata keys: v3 `zarr.json`; v2 `.zarray` / `.zgroup` with attributes in `.zattrs`; v1 `meta`
//! with attributes in `attrs`. When several exist, v3 wins, then v2, then v1.

use crate::error::{Error, Result};
use crate::metadata::{self, v1, v2, v3, ArrayMetadata, GroupMetadata};
use crate::store::{node_prefix, ReadLimit, Store};
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
    match store.get_limited(key, ReadLimit::metadata(store.max_metadata_bytes()))? {
        None => Ok(None),
        Some(bytes) => parse_doc(store, key, &bytes).map(Some),
    }
}

/// The JSON document `bytes` stored at `key`.
fn parse_doc(store: &dyn Store, key: &str, bytes: &[u8]) -> Result<Value> {
    metadata::parse_json_at(bytes, key, store.max_metadata_bytes()).map_err(|e| e.context(store.location(key)))
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

/// What a caller opens at a path: decides which documents a remote store is asked for in the first
/// round trip (the others only when the node turns out to be something else, for the message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// An array (`zarr.json`, v2 `.zarray` and `.zattrs`).
    Array,
    /// A group (`zarr.json`, v2 `.zgroup`, `.zattrs` and `.zmetadata`).
    Group,
}

/// Documents a remote store was asked for together, by key, with what each answer was. A key is
/// taken at most once; one that was not asked is read from the store when taken. An error answer
/// counts only when its document is needed (a bucket without list permission answers 403 for the
/// absent v2 documents of a v3 node, which must not fail the open).
#[derive(Debug, Default)]
pub struct Prefetch(Vec<(String, Result<Option<Vec<u8>>>)>);

impl Prefetch {
    /// Asks `store` for every key in `keys` at once (one round trip); nothing on a local store
    /// (`io_concurrency` 0), whose documents are read one by one when taken.
    fn fetch(&mut self, store: &dyn Store, keys: &[String]) -> Result<()> {
        let n = store.io_concurrency();
        if n == 0 || keys.is_empty() {
            return Ok(());
        }
        let got = crate::threads::io_scope(n, || crate::threads::try_map(keys, |k| Ok(store.get_limited(k, ReadLimit::metadata(store.max_metadata_bytes())))))?;
        self.0.extend(keys.iter().cloned().zip(got));
        Ok(())
    }

    fn has(&self, key: &str) -> bool {
        self.0.iter().any(|(k, _)| k == key)
    }

    /// The document at `key`: the answer asked for ahead, or a GET now.
    pub fn take(&mut self, store: &dyn Store, key: &str) -> Result<Option<Vec<u8>>> {
        match self.0.iter().position(|(k, _)| k == key) {
            Some(i) => self.0.swap_remove(i).1,
            None => store.get_limited(key, ReadLimit::metadata(store.max_metadata_bytes())),
        }
    }

    fn doc(&mut self, store: &dyn Store, key: &str) -> Result<Option<Value>> {
        self.take(store, key)?.map(|b| parse_doc(store, key, &b)).transpose()
    }
}

/// Reads and parses the metadata of the node at `path`; `None` when there is no node.
pub fn read_node(store: &dyn Store, path: &str) -> Result<Option<NodeMetadata>> {
    Ok(open_node(store, path, None, None)?.0)
}

/// Reads and parses the metadata of the node at `path` for a caller that wants `want` (`None`:
/// either), with `format` the Zarr format the node is expected to have (that of the group it is
/// opened through) if known. Returns the metadata (`None` when there is no node) and what else was
/// fetched on the way (a v2 group's `.zmetadata`).
///
/// On a remote store the documents the node may have go out together: without a known format
/// `zarr.json` and the v2 documents (for a group also `.zmetadata`), so that a node of either format
/// (a consolidated v2 group included) is open after one round trip; expected v3, `zarr.json` alone
/// (the v2 documents follow only when it is absent); expected v2, `zarr.json` with the v2 documents
/// (v3 wins when both exist). On a local store each document is read in turn, as needed.
pub fn open_node(store: &dyn Store, path: &str, want: Option<Want>, format: Option<u8>) -> Result<(Option<NodeMetadata>, Prefetch)> {
    let k3 = v3_key(path);
    let (zarray, zgroup, zattrs, zmeta) = (key(path, ".zarray"), key(path, ".zgroup"), key(path, ".zattrs"), key(path, ".zmetadata"));
    let v2_keys: Vec<String> = match want {
        Some(Want::Array) => vec![zarray.clone(), zattrs.clone()],
        Some(Want::Group) => vec![zgroup.clone(), zattrs.clone(), zmeta],
        None => vec![zarray.clone(), zgroup.clone(), zattrs.clone()],
    };
    let mut pf = Prefetch::default();
    let mut first = vec![k3.clone()];
    if format != Some(3) {
        first.extend(v2_keys.iter().cloned());
    }
    pf.fetch(store, &first)?;
    if let Some(doc) = pf.doc(store, &k3)? {
        let ctx = |e: Error| e.context(store.location(&k3));
        let meta = match v3::node_type(&doc).map_err(ctx)? {
            v3::NodeType::Array => NodeMetadata::Array(v3::parse_array(doc).map_err(ctx)?),
            v3::NodeType::Group => NodeMetadata::Group(v3::parse_group(doc).map_err(ctx)?),
        };
        return Ok((Some(meta), pf));
    }
    // v2 (asked in the first round trip unless the node was expected to be v3).
    if !pf.has(&zattrs) {
        pf.fetch(store, &v2_keys)?;
    }
    // The document the caller wants first: its answer is at hand; the other one is read only when
    // that is absent (the node is then not what the caller wants, or a v1 array).
    let order = if want == Some(Want::Group) { [&zgroup, &zarray] } else { [&zarray, &zgroup] };
    for k in order {
        if let Some(d) = pf.doc(store, k)? {
            let attrs = attributes_of(store, &zattrs, pf.doc(store, &zattrs)?)?;
            let meta = if k == &zarray {
                v2::parse_array(&d, attrs).map(NodeMetadata::Array)
            } else {
                v2::parse_group(&d, attrs).map(NodeMetadata::Group)
            };
            return Ok((Some(meta.map_err(|e| e.context(store.location(k)))?), pf));
        }
    }
    let k = key(path, "meta");
    if let Some(doc) = read_doc(store, &k)? {
        if doc.get("zarr_format").and_then(Value::as_u64) == Some(1) {
            let attrs = read_attributes(store, &key(path, "attrs"))?;
            let meta = v1::parse_array(&doc, attrs).map_err(|e| e.context(store.location(&k)))?;
            return Ok((Some(NodeMetadata::Array(meta)), pf));
        }
    }
    Ok((None, pf))
}

/// The kind and format of the node at `path` (metadata not fully parsed); `None` when there is none.
pub fn node_kind(store: &dyn Store, path: &str) -> Result<Option<(NodeKind, u8)>> {
    let k = v3_key(path);
    let (zarray, zgroup) = (key(path, ".zarray"), key(path, ".zgroup"));
    // A remote store is asked for the three documents at once (one round trip); a local one in turn.
    let mut pf = Prefetch::default();
    pf.fetch(store, &[k.clone(), zarray.clone(), zgroup.clone()])?;
    if let Some(doc) = pf.doc(store, &k)? {
        return Ok(Some(match v3::node_type(&doc).map_err(|e| e.context(store.location(&k)))? {
            v3::NodeType::Array => (NodeKind::Array, 3),
            v3::NodeType::Group => (NodeKind::Group, 3),
        }));
    }
    let present = |pf: &mut Prefetch, key: &str| -> Result<bool> {
        if pf.has(key) {
            return Ok(pf.take(store, key)?.is_some());
        }
        store.exists(key)
    };
    if present(&mut pf, &zarray)? {
        return Ok(Some((NodeKind::Array, 2)));
    }
    if present(&mut pf, &zgroup)? {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::MemoryStore;
    use crate::store::{ByteSource, DirListing};
    use std::sync::Mutex;

    /// A store that behaves as a remote one (`io_concurrency` > 0), records the keys it is asked for
    /// and refuses some (as a bucket without list permission answers 403 for absent keys).
    #[derive(Debug, Default)]
    struct Remote {
        inner: MemoryStore,
        asked: Mutex<Vec<String>>,
        refused: Vec<&'static str>,
    }

    impl Remote {
        fn ask(&self, key: &str) -> Result<()> {
            self.asked.lock().unwrap().push(key.to_string());
            if self.refused.iter().any(|r| key.ends_with(r)) {
                return Err(Error::Io(format!("GET {key}: 403 Forbidden")));
            }
            Ok(())
        }
        fn taken(&self) -> Vec<String> {
            let mut v = std::mem::take(&mut *self.asked.lock().unwrap());
            v.sort();
            v
        }
    }

    impl Store for Remote {
        fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
            self.ask(key)?;
            self.inner.get(key)
        }
        fn open(&self, key: &str) -> Result<Option<Box<dyn ByteSource + '_>>> {
            self.ask(key)?;
            self.inner.open(key)
        }
        fn set(&self, key: &str, value: &[u8]) -> Result<()> {
            self.inner.set(key, value)
        }
        fn delete(&self, key: &str) -> Result<()> {
            self.inner.delete(key)
        }
        fn exists(&self, key: &str) -> Result<bool> {
            self.ask(key)?;
            self.inner.exists(key)
        }
        fn list_dir(&self, prefix: &str) -> Result<DirListing> {
            self.inner.list_dir(prefix)
        }
        fn bytes_read(&self) -> u64 {
            0
        }
        fn io_concurrency(&self) -> usize {
            4
        }
    }

    const V3_ARRAY: &str = r#"{"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]}"#;
    const V2_ARRAY: &str = r#"{"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "|u1", "compressor": null,
        "fill_value": 0, "order": "C", "filters": null}"#;

    fn keys(names: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        v.sort();
        v
    }

    #[test]
    fn one_wave_of_documents_per_open() {
        let s = Remote::default();
        s.set("a/zarr.json", V3_ARRAY.as_bytes()).unwrap();
        s.set("b/.zarray", V2_ARRAY.as_bytes()).unwrap();
        s.set("b/.zattrs", br#"{"x": 1}"#).unwrap();
        s.set("g/.zgroup", br#"{"zarr_format": 2}"#).unwrap();
        s.set("g/.zmetadata", br#"{"metadata": {}, "zarr_consolidated_format": 1}"#).unwrap();
        // Without a known format: zarr.json and the wanted kind's v2 documents, nothing after.
        assert!(matches!(open_node(&s, "a", Some(Want::Array), None).unwrap().0, Some(NodeMetadata::Array(_))));
        assert_eq!(s.taken(), keys(&["a/.zarray", "a/.zattrs", "a/zarr.json"]));
        match open_node(&s, "b", Some(Want::Array), None).unwrap().0 {
            Some(NodeMetadata::Array(m)) => assert_eq!((m.zarr_format, m.attributes["x"].as_u64()), (2, Some(1))),
            other => panic!("{other:?}"),
        }
        assert_eq!(s.taken(), keys(&["b/.zarray", "b/.zattrs", "b/zarr.json"]));
        // A v2 group: its .zmetadata came in the same wave and is handed over, not asked again.
        let (meta, mut pf) = open_node(&s, "g", Some(Want::Group), None).unwrap();
        assert!(matches!(meta, Some(NodeMetadata::Group(_))));
        assert!(pf.take(&s, "g/.zmetadata").unwrap().is_some());
        assert_eq!(s.taken(), keys(&["g/.zattrs", "g/.zgroup", "g/.zmetadata", "g/zarr.json"]));
        // Expected v3 (opened through a v3 group): zarr.json alone; a v2 node then costs a second wave.
        open_node(&s, "a", Some(Want::Array), Some(3)).unwrap();
        assert_eq!(s.taken(), keys(&["a/zarr.json"]));
        open_node(&s, "b", Some(Want::Array), Some(3)).unwrap();
        assert_eq!(s.taken(), keys(&["b/.zarray", "b/.zattrs", "b/zarr.json"]));
        // A group asked where an array is: the other document only then, for the message.
        assert!(matches!(open_node(&s, "b", Some(Want::Group), None).unwrap().0, Some(NodeMetadata::Array(_))));
        // Nothing there: the v1 document is looked for last.
        assert!(open_node(&s, "none", Some(Want::Array), None).unwrap().0.is_none());
        // The kind of a node (listing children): the three documents at once.
        s.taken();
        assert_eq!(node_kind(&s, "g").unwrap(), Some((NodeKind::Group, 2)));
        assert_eq!(s.taken(), keys(&["g/.zarray", "g/.zgroup", "g/zarr.json"]));
    }

    #[test]
    fn refused_speculative_documents_cost_nothing() {
        // The v2 documents of a v3 node answer 403: the open still succeeds from zarr.json.
        let s = Remote { refused: vec![".zarray", ".zattrs", ".zgroup", ".zmetadata"], ..Default::default() };
        s.set("a/zarr.json", V3_ARRAY.as_bytes()).unwrap();
        assert!(matches!(open_node(&s, "a", Some(Want::Array), None).unwrap().0, Some(NodeMetadata::Array(_))));
        assert_eq!(node_kind(&s, "a").unwrap(), Some((NodeKind::Array, 3)));
        // Without zarr.json the refusal is the answer: an I/O error naming the document.
        let e = open_node(&s, "b", Some(Want::Array), None).unwrap_err();
        assert!(matches!(e, Error::Io(ref m) if m.contains("b/.zarray")), "{e:?}");
        // A refused zarr.json fails the open even when the v2 documents are there.
        let s = Remote { refused: vec!["zarr.json"], ..Default::default() };
        s.set("b/.zarray", V2_ARRAY.as_bytes()).unwrap();
        assert!(open_node(&s, "b", Some(Want::Array), None).is_err());
    }
}
