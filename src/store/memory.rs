//! In-memory store, for tests and for callers that build arrays in memory. Its locks
//! ([`Store::lock`]) are an in-process [`LockTable`].
//!
//! Named memory stores ([`named`]) live in a process-wide registry, so that the `memory://NAME/...`
//! locations of separate calls (`zarr_create("memory://x/a")`, then `zarr_open("memory://x/a")`) see the
//! same data. A named store lives until [`remove_named`] (C: `zarr_memory_store_remove`) or process
//! exit; handles still open on a removed store keep its data until they are closed.

use super::lock::LockTable;
use super::{validate_key, ByteSource, CountedSource, DirListing, LockRange, ReadLimit, Store, StoreLock};
use crate::error::{Error, Result};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

static REGISTRY: Mutex<Option<HashMap<String, Arc<MemoryStore>>>> = Mutex::new(None);

fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains('/') || name.contains('\0') {
        return Err(Error::InvalidArgument(format!(
            "invalid memory store name '{name}': it must be non-empty, without '/' or NUL"
        )));
    }
    Ok(())
}

/// The named memory store `name` of the process-wide registry, created empty on first use.
pub fn named(name: &str) -> Result<Arc<MemoryStore>> {
    check_name(name)?;
    let mut reg = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    Ok(reg.get_or_insert_with(HashMap::new).entry(name.to_string())
        .or_insert_with(|| Arc::new(MemoryStore { name: name.to_string(), ..MemoryStore::default() }))
        .clone())
}

/// Removes the named memory store `name` from the registry (a later `memory://NAME` starts empty);
/// `false` when there was none.
pub fn remove_named(name: &str) -> Result<bool> {
    check_name(name)?;
    let mut reg = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    Ok(reg.as_mut().and_then(|m| m.remove(name)).is_some())
}

/// A thread-safe map from keys to values.
#[derive(Debug, Default)]
pub struct MemoryStore {
    map: RwLock<BTreeMap<String, Arc<Vec<u8>>>>,
    bytes_read: AtomicU64,
    locks: LockTable,
    /// The registry name (for messages); empty for an unnamed store.
    name: String,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// All keys, sorted.
    pub fn keys(&self) -> Vec<String> {
        self.map.read().unwrap().keys().cloned().collect()
    }
}

impl Store for MemoryStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        validate_key(key)?;
        let v = self.map.read().unwrap().get(key).map(|v| v.as_ref().clone());
        if let Some(v) = &v {
            self.bytes_read.fetch_add(v.len() as u64, Ordering::Relaxed);
        }
        Ok(v)
    }

    /// The value's length is checked before it is copied out.
    fn get_into(&self, key: &str, buf: &mut Vec<u8>, limit: ReadLimit) -> Result<bool> {
        validate_key(key)?;
        let Some(v) = self.map.read().unwrap().get(key).cloned() else { return Ok(false) };
        limit.check(&self.location(key), v.len() as u64)?;
        buf.clear();
        crate::error::try_reserve(buf, v.len())?;
        buf.extend_from_slice(&v);
        self.bytes_read.fetch_add(v.len() as u64, Ordering::Relaxed);
        Ok(true)
    }

    fn open(&self, key: &str) -> Result<Option<Box<dyn ByteSource + '_>>> {
        validate_key(key)?;
        let data = self.map.read().unwrap().get(key).cloned();
        Ok(data.map(|data| Box::new(CountedSource { data, counter: &self.bytes_read }) as Box<dyn ByteSource>))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        validate_key(key)?;
        self.map.write().unwrap().insert(key.to_string(), Arc::new(value.to_vec()));
        Ok(())
    }

    fn delete(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        self.map.write().unwrap().remove(key);
        Ok(())
    }

    fn rename_prefix(&self, from: &str, to: &str) -> Result<bool> {
        let mut map = self.map.write().unwrap();
        let moved: Vec<String> = map.range(from.to_string()..).map(|(k, _)| k).take_while(|k| k.starts_with(from)).cloned().collect();
        for key in moved {
            let value = map.remove(&key).expect("listed above");
            map.insert(format!("{to}{}", &key[from.len()..]), value);
        }
        Ok(true)
    }

    fn lock(&self, node_prefix: &str, ranges: &[LockRange]) -> Result<StoreLock> {
        self.locks.acquire(node_prefix, ranges)
    }

    fn exists(&self, key: &str) -> Result<bool> {
        validate_key(key)?;
        Ok(self.map.read().unwrap().contains_key(key))
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let map = self.map.read().unwrap_or_else(|e| e.into_inner());
        Ok(DirListing::from_sorted_keys(prefix, map.range(prefix.to_string()..).map(|(k, _)| k.as_str())))
    }

    fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    fn location(&self, key: &str) -> String {
        if self.name.is_empty() {
            format!("memory:{key}")
        } else {
            format!("memory://{}/{key}", self.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic() {
        let s = MemoryStore::new();
        s.set("a/b", b"12345").unwrap();
        s.set("a/c/d", b"x").unwrap();
        s.set("a/c/e", b"y").unwrap();
        assert_eq!(s.open("a/b").unwrap().unwrap().read_range(1, 2).unwrap(), b"23");
        assert_eq!(s.bytes_read(), 2);
        let l = s.list_dir("a/").unwrap();
        assert_eq!(l.keys, ["b"]);
        assert_eq!(l.prefixes, ["c"]);
        s.delete("a/b").unwrap();
        assert!(s.get("a/b").unwrap().is_none());
        assert!(s.set("../x", b"").is_err());
    }

    #[test]
    fn registry() {
        let a = named("memory-test-registry").unwrap();
        a.set("k", b"v").unwrap();
        assert_eq!(named("memory-test-registry").unwrap().get("k").unwrap(), Some(b"v".to_vec()));
        assert!(remove_named("memory-test-registry").unwrap());
        assert!(!remove_named("memory-test-registry").unwrap());
        assert_eq!(a.get("k").unwrap(), Some(b"v".to_vec()), "a removed store lives on in its handles");
        assert!(named("memory-test-registry").unwrap().get("k").unwrap().is_none());
        assert!(remove_named("memory-test-registry").unwrap());
        for bad in ["", "a/b", "a\0"] {
            assert!(named(bad).is_err());
        }
    }
}
