//! A view of another store below a key prefix: what a location naming a node inside a store
//! (`memory://name/a/b`, `zip://file.zip!/a/b`) opens, so that the node is the view's root. A view
//! may also carry its own metadata ceiling (the store option `max_metadata_bytes`, which
//! [`super::open_location_with`] applies to a store of any kind this way).

use super::{validate_key, ByteSource, ConditionalStore, DirListing, LockRange, OpenHint, ReadLimit, Store, StoreLock, ValueStream, ValueVersion};
use crate::error::Error;
use crate::error::Result;
use std::sync::Arc;

/// The keys of `inner` below `prefix` (which ends in `/`), seen without the prefix.
#[derive(Debug)]
pub struct PrefixStore {
    inner: Arc<dyn Store>,
    prefix: String,
    /// The metadata ceiling of the view; `None`: the inner store's.
    max_metadata_bytes: Option<u64>,
}

impl PrefixStore {
    /// The view of `inner` below the node path `path` (`a/b`); an empty path gives `inner` itself.
    pub fn wrap(inner: Arc<dyn Store>, path: &str) -> Result<Arc<dyn Store>> {
        let path = super::normalize_node_path(path)?;
        if path.is_empty() {
            return Ok(inner);
        }
        validate_key(&path)?;
        Ok(Arc::new(PrefixStore { inner, prefix: format!("{path}/"), max_metadata_bytes: None }))
    }

    /// `inner` (every key) with a metadata ceiling of `ceiling` bytes instead of its own.
    pub fn with_max_metadata_bytes(inner: Arc<dyn Store>, ceiling: u64) -> Arc<dyn Store> {
        Arc::new(PrefixStore { inner, prefix: String::new(), max_metadata_bytes: Some(ceiling) })
    }

    fn full(&self, key: &str) -> Result<String> {
        validate_key(key)?;
        Ok(format!("{}{key}", self.prefix))
    }
}

impl Store for PrefixStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.inner.get(&self.full(key)?)
    }
    fn max_metadata_bytes(&self) -> u64 {
        self.max_metadata_bytes.unwrap_or_else(|| self.inner.max_metadata_bytes())
    }
    fn get_into(&self, key: &str, buf: &mut Vec<u8>, limit: ReadLimit) -> Result<bool> {
        self.inner.get_into(&self.full(key)?, buf, limit)
    }
    fn get_batch(&self, keys: &[String], limit: ReadLimit, visit: &(dyn Fn(usize, &[u8]) -> Result<()> + Sync)) -> Result<Option<Vec<bool>>> {
        let full = keys.iter().map(|k| self.full(k)).collect::<Result<Vec<String>>>()?;
        self.inner.get_batch(&full, limit, visit)
    }
    fn open(&self, key: &str) -> Result<Option<Box<dyn ByteSource + '_>>> {
        self.inner.open(&self.full(key)?)
    }
    fn with_value(&self, key: &str, limit: ReadLimit, f: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<bool> {
        self.inner.with_value(&self.full(key)?, limit, f)
    }
    fn stream_value(&self, key: &str, version: Option<&str>, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<bool> {
        self.inner.stream_value(&self.full(key)?, version, sink)
    }
    fn open_hinted(&self, key: &str, hint: OpenHint) -> Result<Option<Box<dyn ByteSource + '_>>> {
        self.inner.open_hinted(&self.full(key)?, hint)
    }
    fn open_speculative(&self, key: &str, hint: OpenHint, ranges: &[(u64, u64)]) -> Result<Option<Box<dyn ByteSource + '_>>> {
        self.inner.open_speculative(&self.full(key)?, hint, ranges)
    }
    fn open_version(&self, key: &str, len: u64, version: &str) -> Result<Box<dyn ByteSource + '_>> {
        self.inner.open_version(&self.full(key)?, len, version)
    }
    fn transaction(&self) -> Option<&dyn super::transaction::Transaction> {
        self.inner.transaction()
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.inner.set(&self.full(key)?, value)
    }
    fn set_parts(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        self.inner.set_parts(&self.full(key)?, parts)
    }
    fn delete(&self, key: &str) -> Result<()> {
        self.inner.delete(&self.full(key)?)
    }
    fn lock(&self, node_prefix: &str, ranges: &[LockRange]) -> Result<StoreLock> {
        // The lock of a node is the inner store's lock of the same node (seen from its root).
        self.inner.lock(&format!("{}{node_prefix}", self.prefix), ranges)
    }
    fn lock_group_document(&self, node_prefix: &str, document_key: &str) -> Result<StoreLock> {
        self.inner.lock_group_document(&format!("{}{node_prefix}", self.prefix), &self.full(document_key)?)
    }
    fn conditional(&self) -> Option<&dyn ConditionalStore> {
        self.inner.conditional().map(|_| self as &dyn ConditionalStore)
    }
    fn set_parts_locked(&self, key: &str, parts: &[&[u8]], lock: &StoreLock) -> Result<()> {
        self.inner.set_parts_locked(&self.full(key)?, parts, lock)
    }
    fn stream_locked(&self, key: &str, lock: &StoreLock) -> Result<Option<Box<dyn ValueStream + '_>>> {
        self.inner.stream_locked(&self.full(key)?, lock)
    }
    fn delete_locked(&self, key: &str, lock: &StoreLock) -> Result<()> {
        self.inner.delete_locked(&self.full(key)?, lock)
    }
    fn ensure_writable(&self) -> Result<()> {
        self.inner.ensure_writable()
    }
    fn remove_empty_prefix(&self, prefix: &str) -> Result<()> {
        self.inner.remove_empty_prefix(&format!("{}{prefix}", self.prefix))
    }
    fn rename_prefix(&self, from: &str, to: &str) -> Result<bool> {
        self.inner.rename_prefix(&format!("{}{from}", self.prefix), &format!("{}{to}", self.prefix))
    }
    fn check_removable(&self, prefix: &str) -> Result<()> {
        self.inner.check_removable(&format!("{}{prefix}", self.prefix))
    }
    fn delete_tree(&self, prefix: &str, first: &[&str]) -> Result<bool> {
        self.inner.delete_tree(&format!("{}{prefix}", self.prefix), first)
    }
    fn exists(&self, key: &str) -> Result<bool> {
        self.inner.exists(&self.full(key)?)
    }
    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        self.inner.list_dir(&format!("{}{prefix}", self.prefix))
    }
    fn bytes_read(&self) -> u64 {
        self.inner.bytes_read()
    }
    fn location(&self, key: &str) -> String {
        self.inner.location(&format!("{}{key}", self.prefix))
    }
    fn io_concurrency(&self) -> usize {
        self.inner.io_concurrency()
    }
    fn speculative_read_bytes(&self) -> u64 {
        self.inner.speculative_read_bytes()
    }
}

impl PrefixStore {
    fn inner_conditional(&self) -> Result<&dyn ConditionalStore> {
        self.inner.conditional().ok_or_else(|| Error::Unsupported(format!("{}: no conditional writes", self.location(""))))
    }
}

/// The inner store's conditional writes, below the prefix.
impl ConditionalStore for PrefixStore {
    fn get_versioned(&self, key: &str, limit: ReadLimit) -> Result<Option<(Vec<u8>, ValueVersion)>> {
        self.inner_conditional()?.get_versioned(&self.full(key)?, limit)
    }
    fn set_parts_if_version(&self, key: &str, parts: &[&[u8]], expected: Option<&ValueVersion>) -> Result<bool> {
        self.inner_conditional()?.set_parts_if_version(&self.full(key)?, parts, expected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::MemoryStore;

    #[test]
    fn view() {
        let m = Arc::new(MemoryStore::new());
        let v = PrefixStore::wrap(m.clone(), "/a/b/").unwrap();
        v.set("zarr.json", b"{}").unwrap();
        v.set("c/0", b"x").unwrap();
        assert_eq!(m.get("a/b/zarr.json").unwrap(), Some(b"{}".to_vec()));
        assert_eq!(v.open("c/0").unwrap().unwrap().read_all().unwrap(), b"x");
        let l = v.list_dir("").unwrap();
        assert_eq!((l.keys, l.prefixes), (vec!["zarr.json".to_string()], vec!["c".to_string()]));
        assert!(v.get("../x").is_err());
        assert!(PrefixStore::wrap(m.clone(), "a/../b").is_err());
        assert!(Arc::ptr_eq(&PrefixStore::wrap(m.clone(), "").unwrap(), &(m as Arc<dyn Store>)));
    }
}
