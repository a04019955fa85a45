//! A kerchunk reference set written into an Icechunk repository as one commit, its chunks as virtual
//! chunk references (what `h5tozarr --virtual icechunk://...` does), and the repository's virtual
//! chunk containers (the URL prefixes its virtual chunks may point into).
//!
//! The reference set is Zarr v2 (kerchunk's form); Icechunk holds Zarr v3 nodes only, so each
//! `.zarray` becomes the equivalent `zarr.json` ([`crate::convert`]: numcodecs filters as
//! `numcodecs.*` codecs, the stored byte order in the `bytes` codec) with the default chunk key
//! encoding, each `.zgroup` a v3 group, and each chunk key (`i.j.k`) the v3 key `c/i/j/k`:
//!
//! - `[url, offset, length]`: a virtual chunk reference (a local path becomes a `file://` URL);
//!   the URL must lie in one of the repository's virtual chunk containers;
//! - `[url]` (a whole local file): a virtual reference to all of it;
//! - inline data: a chunk stored in the repository.

use crate::error::{Error, Result};
use crate::store::icechunk::{authorized, open_repository, IcechunkStore, RepoLock};
use crate::store::icechunk_error::repo_err;
use crate::store::icechunk_location::{self, Version};
use crate::store::location::path_from_location;
use crate::store::options::StoreOptions;
use crate::store::reference_spec::{JsonRefs, Ref};
use crate::store::runtime::block_on;
use crate::store::transaction::{OnConflict, Transaction};
use crate::store::Store;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// What [`import_references`] wrote.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    /// The new snapshot's id.
    pub snapshot: String,
    /// Groups and arrays written.
    pub nodes: u64,
    /// Chunks written as virtual references.
    pub virtual_chunks: u64,
    /// Chunks written into the repository (inline data of the references).
    pub stored_chunks: u64,
}

/// `url` as an absolute URL: a local absolute path becomes `file://` with the bytes a URL path
/// cannot hold percent-encoded; URLs with a scheme are kept.
pub fn target_url(url: &str) -> Result<String> {
    if url.contains("://") {
        return Ok(url.to_string());
    }
    if !url.starts_with('/') {
        return Err(Error::InvalidArgument(format!(
            "reference target '{url}': a relative path (Icechunk's virtual chunks name absolute URLs)"
        )));
    }
    let mut out = String::from("file://");
    for &b in url.as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~+,=@:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(out)
}

/// Adds a virtual chunk container for `url_prefix` (`file:///dir/`, `http(s)://host/...`) to the
/// repository named by the `icechunk://` location `rest` (without the scheme), unless one with that
/// prefix exists. Returns whether it added one.
pub fn add_virtual_container(rest: &str, options: &StoreOptions, url_prefix: &str) -> Result<bool> {
    use icechunk::config::ObjectStoreConfig;
    use icechunk::virtual_chunks::VirtualChunkContainer;
    let loc = icechunk_location::parse(rest)?;
    let what = format!("icechunk repository {}: virtual chunk container '{url_prefix}'", loc.repo);
    let store = if let Some(p) = url_prefix.strip_prefix("file://") {
        ObjectStoreConfig::LocalFileSystem(path_from_location(&format!("file://{p}"))?)
    } else if url_prefix.starts_with("http://") || url_prefix.starts_with("https://") {
        ObjectStoreConfig::Http(Default::default())
    } else {
        return Err(Error::Unsupported(format!("{what}: libzarr adds file:// and http(s):// containers")));
    };
    let cont = VirtualChunkContainer::new(url_prefix.to_string(), store).map_err(|e| Error::InvalidArgument(format!("{what}: {e}")))?;
    let repo = open_repository(&loc.repo, options, &authorized(options))?;
    if repo.config().get_virtual_chunk_container(url_prefix).is_some() {
        return Ok(false);
    }
    let _lock = RepoLock::take_for(&loc.repo)?;
    block_on(async move {
        // The configuration as it is now (another process may have changed it since the open).
        let repo = repo.reopen(None, None).await.map_err(|e| repo_err(&what, e))?;
        let mut config = repo.config().clone();
        config.set_virtual_chunk_container(cont).map_err(|e| Error::InvalidArgument(format!("{what}: {e}")))?;
        let repo = repo.reopen(Some(config), None).await.map_err(|e| repo_err(&what, e))?;
        repo.save_config().await.map_err(|e| repo_err(&what, e))?;
        Ok(true)
    })?
}

/// A node of the reference set.
#[derive(Default)]
struct Node {
    zarray: Option<Value>,
    group: bool,
    attrs: Map<String, Value>,
}

fn json_of(key: &str, r: &Ref) -> Result<Value> {
    match r {
        Ref::Inline(b) => serde_json::from_slice(b).map_err(|e| Error::Metadata(format!("reference '{key}': not a JSON document ({e})"))),
        Ref::Url { .. } => Err(Error::Unsupported(format!("reference '{key}': a metadata document in another file"))),
    }
}

/// The v3 chunk key of the v2 chunk key `name` of an array of `rank` dimensions (`None`: not a chunk key).
fn v3_chunk_key(name: &str, separator: char, rank: usize) -> Option<String> {
    let parts: Vec<&str> = name.split(separator).collect();
    if rank == 0 {
        return (name == "0").then(|| "c".to_string());
    }
    if parts.len() != rank || parts.iter().any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    Some(format!("c/{}", parts.iter().map(|p| p.trim_start_matches('0')).map(|p| if p.is_empty() { "0" } else { p }).collect::<Vec<_>>().join("/")))
}

fn join(prefix: &str, key: &str) -> String {
    match (prefix.is_empty(), key.is_empty()) {
        (true, _) => key.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}/{key}"),
    }
}

/// Writes the kerchunk JSON reference file `refs` into the branch named by the `icechunk://`
/// location `rest` (without the scheme; its node, if any, is where the reference set's root goes)
/// and commits it with `message`. The node must be empty (a repository's root without children, or
/// a node that does not exist) unless `replace`, which deletes what is there in the same commit.
/// On any failure nothing is committed.
pub fn import_references(refs: &Path, rest: &str, options: &StoreOptions, message: &str, replace: bool) -> Result<Imported> {
    let loc = icechunk_location::parse(rest)?;
    let Version::Branch(_) = &loc.version else {
        return Err(Error::ReadOnly(format!("icechunk://{rest}: references are written to a branch (tags and snapshots are read-only)")));
    };
    let what = format!("{}", refs.display());
    let bytes = std::fs::read(refs).map_err(|e| Error::io(&what, e))?;
    let set = JsonRefs::parse(&bytes).map_err(|e| e.context(what.clone()))?;
    if set.has_gen() {
        return Err(Error::Unsupported(format!("{what}: 'gen' entries (write them out as refs first)")));
    }
    let node = crate::store::normalize_node_path(&loc.node)?;
    let store = IcechunkStore::open(&loc.repo, &loc.version, options)?;
    if store.has_changes()? {
        return Err(Error::InvalidArgument(format!(
            "{}: the session has uncommitted changes in this process; commit or discard them first",
            store.what()
        )));
    }
    let result = write_all(&store, &set, &node, replace, &what).and_then(|mut imported| {
        imported.snapshot = store.commit(message, OnConflict::Fail)?;
        Ok(imported)
    });
    if result.is_err() {
        let _ = store.discard();
    }
    result
}

fn write_all(store: &IcechunkStore, set: &JsonRefs, node: &str, replace: bool, what: &str) -> Result<Imported> {
    // The nodes, from their metadata keys.
    let mut nodes: BTreeMap<String, Node> = BTreeMap::new();
    for (key, r) in set.entries() {
        let (dir, name) = key.rsplit_once('/').unwrap_or(("", key));
        match name {
            ".zarray" => nodes.entry(dir.to_string()).or_default().zarray = Some(json_of(key, r)?),
            ".zgroup" => nodes.entry(dir.to_string()).or_default().group = true,
            ".zattrs" => match json_of(key, r)? {
                Value::Object(m) => nodes.entry(dir.to_string()).or_default().attrs = m,
                _ => return Err(Error::Metadata(format!("{what}: '{key}' is not a JSON object"))),
            },
            _ => {}
        }
    }
    if nodes.is_empty() {
        return Err(Error::Metadata(format!("{what}: no .zgroup or .zarray: not a Zarr v2 reference set")));
    }
    // The target must be empty, or replaced.
    let occupied = if node.is_empty() {
        let l = store.list_dir("")?;
        !l.prefixes.is_empty()
    } else {
        store.exists(&join(node, "zarr.json"))?
    };
    if occupied {
        if !replace {
            return Err(Error::Exists(format!(
                "{}: not empty (write into a new node, or replace what is there)",
                store.location(node)
            )));
        }
        if node.is_empty() {
            for p in store.list_dir("")?.prefixes {
                store.delete_tree(&p, &[])?;
            }
        } else {
            store.delete_tree(node, &[])?;
        }
    }
    let mut out = Imported::default();
    // Metadata first, parents before children (BTreeMap order).
    let mut arrays: BTreeMap<String, (char, usize)> = BTreeMap::new();
    for (dir, n) in &nodes {
        let where_ = format!("{what}: '{}'", if dir.is_empty() { "/" } else { dir });
        let doc = match &n.zarray {
            Some(z) => {
                let doc = if z.get("dtype").and_then(Value::as_str) == Some("|O") {
                    vlen_document(z, n.attrs.clone(), &where_)?
                } else {
                    let mut doc = crate::convert::v3_document_default_keys(z, n.attrs.clone(), &where_)?;
                    fixed_bytes(z, &mut doc, &where_)?;
                    doc
                };
                let mut doc = doc;
                dimension_names(&mut doc);
                let sep = if z.get("dimension_separator").and_then(Value::as_str) == Some("/") { '/' } else { '.' };
                let rank = z.get("shape").and_then(Value::as_array).map_or(0, Vec::len);
                arrays.insert(dir.clone(), (sep, rank));
                doc
            }
            None if n.group => json!({"zarr_format": 3, "node_type": "group", "attributes": Value::Object(n.attrs.clone())}),
            None => return Err(Error::Metadata(format!("{where_}: attributes (.zattrs) without .zgroup or .zarray"))),
        };
        store.set(&join(node, &join(dir, "zarr.json")), &crate::metadata::to_bytes(&doc))?;
        out.nodes += 1;
    }
    // Then the chunks.
    for (key, r) in set.entries() {
        let (dir, name) = key.rsplit_once('/').unwrap_or(("", key));
        if name.starts_with('.') {
            continue;
        }
        // The array the key belongs to: the longest array path that is a prefix of the key.
        let owner = arrays
            .iter()
            .filter(|(a, _)| a.is_empty() || key.starts_with(&format!("{a}/")))
            .max_by_key(|(a, _)| a.len());
        let chunk = owner.and_then(|(a, &(sep, rank))| {
            let inner = if a.is_empty() { key } else { &key[a.len() + 1..] };
            v3_chunk_key(inner, sep, rank).map(|c| join(node, &join(a, &c)))
        });
        let Some(target) = chunk else {
            return Err(Error::Metadata(format!(
                "{what}: '{key}' is neither metadata nor a chunk key of an array (in '{dir}')"
            )));
        };
        match r {
            Ref::Inline(b) => {
                store.set(&target, b)?;
                out.stored_chunks += 1;
            }
            Ref::Url { url: None, .. } => {
                return Err(Error::Unsupported(format!("{what}: '{key}' names the default target, which the references do not give")))
            }
            Ref::Url { url: Some(u), range } => {
                let url = target_url(u).map_err(|e| e.context(format!("{what}: '{key}'")))?;
                let (offset, length) = match range {
                    Some(r) => *r,
                    None => {
                        let p = path_from_location(&url).map_err(|e| e.context(format!("{what}: '{key}'")))?;
                        (0, std::fs::metadata(&p).map_err(|e| Error::io(format!("{what}: '{key}': {}", p.display()), e))?.len())
                    }
                };
                store.set_virtual(&target, &url, offset, length).map_err(|e| e.context(format!("{what}: '{key}'")))?;
                out.virtual_chunks += 1;
            }
        }
    }
    Ok(out)
}

/// The v2 convention's dimension names (the attribute `_ARRAY_DIMENSIONS`) as v3's `dimension_names`,
/// which xarray and zarr-python 3 read for v3 arrays (the attribute is dropped).
fn dimension_names(doc: &mut Value) {
    let rank = doc.get("shape").and_then(Value::as_array).map_or(0, Vec::len);
    let Some(attrs) = doc.get_mut("attributes").and_then(Value::as_object_mut) else {
        return;
    };
    let names = match attrs.get("_ARRAY_DIMENSIONS").and_then(Value::as_array) {
        Some(n) if n.len() == rank && n.iter().all(Value::is_string) => n.clone(),
        _ => return,
    };
    attrs.remove("_ARRAY_DIMENSIONS");
    doc["dimension_names"] = Value::Array(names);
}

/// A v2 `|S<n>` array as zarr-python 3 names it in v3: `null_terminated_bytes` of n bytes (the
/// converter's core `r<8n>` is a type zarr-python 3 does not read); the fill value in base64.
fn fixed_bytes(z: &Value, doc: &mut Value, where_: &str) -> Result<()> {
    let Some(n) = z.get("dtype").and_then(Value::as_str).and_then(|d| d.strip_prefix("|S")).and_then(|n| n.parse::<usize>().ok()) else {
        return Ok(());
    };
    let fill = match z.get("fill_value") {
        Some(Value::String(s)) if crate::format::base64::decode(s).is_ok_and(|b| b.len() <= n) => s.clone(),
        _ => crate::format::base64::encode(&vec![0u8; n]),
    };
    doc["data_type"] = json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": n}});
    doc["fill_value"] = Value::from(fill);
    crate::metadata::v3::parse_array(doc.clone()).map_err(|e| e.context(where_.to_string()))?;
    Ok(())
}

/// The v3 document of a v2 array of variable-length strings (`|O` with the one filter `vlen-utf8`).
fn vlen_document(z: &Value, attrs: Map<String, Value>, where_: &str) -> Result<Value> {
    let filters = z.get("filters").and_then(Value::as_array).cloned().unwrap_or_default();
    let only_vlen = filters.len() == 1 && filters[0].get("id").and_then(Value::as_str) == Some("vlen-utf8");
    if !only_vlen || !z.get("compressor").is_none_or(Value::is_null) {
        return Err(Error::Unsupported(format!("{where_}: an object (|O) array other than vlen-utf8 strings without compression")));
    }
    let shape = z.get("shape").cloned().unwrap_or(json!([]));
    let chunks = z.get("chunks").cloned().unwrap_or(json!([]));
    let doc = json!({
        "zarr_format": 3,
        "node_type": "array",
        "shape": shape,
        "data_type": "string",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": "",
        "codecs": [{"name": "vlen-utf8", "configuration": {}}],
        "attributes": Value::Object(attrs),
    });
    crate::metadata::v3::parse_array(doc.clone()).map_err(|e| e.context(where_.to_string()))?;
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_keys_and_urls() {
        assert_eq!(v3_chunk_key("0.3.12", '.', 3).as_deref(), Some("c/0/3/12"));
        assert_eq!(v3_chunk_key("0/3", '/', 2).as_deref(), Some("c/0/3"));
        assert_eq!(v3_chunk_key("0", '.', 0).as_deref(), Some("c"));
        assert_eq!(v3_chunk_key("0.1", '.', 3), None);
        assert_eq!(v3_chunk_key("a.1", '.', 2), None);
        assert_eq!(target_url("/data/a b.nc").unwrap(), "file:///data/a%20b.nc");
        assert_eq!(target_url("s3://b/k").unwrap(), "s3://b/k");
        assert!(target_url("rel.nc").is_err());
    }
}
