//! The store interface: a map from keys to byte values with byte-range reads and atomic writes.
//!
//! Keys are `/`-separated relative paths (`c/0/1`, `group/zarr.json`). [`validate_key`] rejects keys that
//! could escape the store root. Implementations: [`filesystem::FilesystemStore`], [`memory::MemoryStore`],
//! [`zip::ZipStore`] (read-only), and [`prefix::PrefixStore`] (a view below a node).
//! [`open_location`] turns a location (path or URI) into a store. Writers exclude each other through
//! [`Store::lock`] (see [`lock`]).
//! With the `remote` feature, [`object::ObjectStoreAdapter`] serves `s3://` and `http(s)://` locations;
//! object stores cannot lock, and offer conditional writes instead ([`Store::conditional`], see
//! [`conditional`]).

pub mod conditional;
mod deferred_close;
pub mod filesystem;
#[cfg(feature = "icechunk")]
pub mod icechunk;
#[cfg(feature = "icechunk")]
pub mod icechunk_error;
#[cfg(feature = "icechunk")]
pub mod icechunk_location;
#[cfg(feature = "icechunk")]
pub mod icechunk_fork;
pub mod location;
pub mod link_estimate;
pub mod lock;
pub mod memory;
pub mod prefix;
pub mod range_target;
pub mod coalesce;
pub mod reference;
pub mod reference_gen;
pub mod reference_json;
#[cfg(feature = "reference-parquet")]
pub mod reference_parquet;
#[cfg(feature = "reference-parquet")]
pub(crate) mod parquet_check;
#[cfg(feature = "reference-parquet")]
pub mod reference_parquet_write;
pub mod reference_spec;
pub mod reference_template;
pub mod resolve;
pub mod transaction;
pub mod value_stream;
pub mod zip;
#[cfg(feature = "remote")]
pub mod bounded_http;
#[cfg(feature = "remote")]
pub mod object;
pub mod options;
pub mod redact;
#[cfg(feature = "remote")]
pub mod runtime;

pub use conditional::{ConditionalStore, ValueVersion};
pub use location::{open_location, open_location_with};
pub use lock::{ChunkLockRanges, LockRange, StoreLock};
pub use options::StoreOptions;
pub use value_stream::ValueStream;

use crate::error::{Error, Result};
pub use crate::limits::ReadLimit;

/// One stored value opened for byte-range reads.
pub trait ByteSource: Send + Sync {
    /// Size of the value in bytes.
    fn len(&self) -> u64;

    /// Whether the value is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fills `buf` with the bytes at `offset..offset + buf.len()`; a range past the end is a codec error.
    fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<()>;

    /// The bytes at `offset..offset + len`.
    fn read_range(&self, offset: u64, len: u64) -> Result<Vec<u8>> {
        check_range(offset, len, self.len())?;
        let mut v = crate::error::try_alloc(len as usize)?;
        self.read_into(offset, &mut v)?;
        Ok(v)
    }

    /// The whole value.
    fn read_all(&self) -> Result<Vec<u8>> {
        self.read_range(0, self.len())
    }

    /// The whole value, when it is already in memory (a [`SliceSource`]): a reader then takes its
    /// ranges straight from it instead of copying them out with [`ByteSource::read_into`].
    fn as_slice(&self) -> Option<&[u8]> {
        None
    }

    /// Whether the bytes at `offset..offset + len` are already in memory (fetched when a remote value
    /// was opened, [`Store::open_speculative`]): reading them costs no request. A reader coalescing
    /// ranges into requests leaves these out. `false` for sources without such parts.
    fn holds(&self, offset: u64, len: u64) -> bool {
        let _ = (offset, len);
        false
    }

    /// The largest single read worth issuing (`None`: no limit). Remote sources give a limit so that
    /// readers coalescing ranges (the sharding codec) split a large run into several requests that
    /// are fetched concurrently and decoded while the others arrive.
    fn max_read_hint(&self) -> Option<u64> {
        None
    }

    /// The version of the value this source reads (a remote object's ETag), when the store has one:
    /// a reader may keep what it learnt from the value (a shard index) together with this version and
    /// later reopen the same version with [`Store::open_version`]. `None` for local stores.
    fn version(&self) -> Option<&str> {
        None
    }
}

/// Receives a value's bytes piece by piece, in order ([`Store::stream_value`]).
pub type ByteSink<'a> = dyn FnMut(&[u8]) -> Result<()> + 'a;

/// What a reader opening a value will read first, so that a remote store can fetch it with the one
/// request that also learns the value's size (instead of a HEAD, then a GET).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenHint {
    /// The first `n` bytes (a shard index stored at the start).
    Head(u64),
    /// The last `n` bytes (a shard index stored at the end).
    Tail(u64),
    /// The bytes `start..end` (the span of an uncompressed chunk that a region needs).
    Range(u64, u64),
}

/// Fails unless `offset..offset+len` lies within a value of `size` bytes.
pub fn check_range(offset: u64, len: u64, size: u64) -> Result<()> {
    match offset.checked_add(len) {
        Some(end) if end <= size => Ok(()),
        _ => Err(Error::Codec(format!(
            "byte range {offset}..{} lies outside the stored value of {size} bytes",
            offset as u128 + len as u128
        ))),
    }
}

/// A part of another byte source (e.g. an inner chunk inside a shard).
pub struct SubSource<'a> {
    /// The source holding the bytes.
    pub inner: &'a dyn ByteSource,
    /// Start of the part within `inner`.
    pub offset: u64,
    /// Length of the part.
    pub len: u64,
}

impl ByteSource for SubSource<'_> {
    fn len(&self) -> u64 {
        self.len
    }
    fn max_read_hint(&self) -> Option<u64> {
        self.inner.max_read_hint()
    }
    fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_range(offset, buf.len() as u64, self.len)?;
        self.inner.read_into(self.offset + offset, buf)
    }
}

/// A byte source over bytes already in memory.
pub struct SliceSource<'a>(pub &'a [u8]);

impl ByteSource for SliceSource<'_> {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
    fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_range(offset, buf.len() as u64, self.0.len() as u64)?;
        buf.copy_from_slice(&self.0[offset as usize..offset as usize + buf.len()]);
        Ok(())
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(self.0)
    }
}

/// A byte source over a value a store holds in memory (`D`: an owned or a shared buffer), adding the
/// bytes read to the store's `bytes_read` counter.
pub(crate) struct CountedSource<'a, D> {
    /// The value.
    pub data: D,
    /// The store's counter of bytes read.
    pub counter: &'a std::sync::atomic::AtomicU64,
}

impl<D> ByteSource for CountedSource<'_, D>
where
    D: std::ops::Deref + Send + Sync,
    D::Target: AsRef<[u8]>,
{
    fn len(&self) -> u64 {
        (*self.data).as_ref().len() as u64
    }
    fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        SliceSource((*self.data).as_ref()).read_into(offset, buf)?;
        self.counter.fetch_add(buf.len() as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}

/// The direct children of a prefix: keys (values) and sub-prefixes (without the trailing `/`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct DirListing {
    /// Names of values directly under the prefix.
    pub keys: Vec<String>,
    /// Names of sub-prefixes directly under the prefix.
    pub prefixes: Vec<String>,
}

impl DirListing {
    /// The listing with its keys and its prefixes sorted (for stores that list in no particular order).
    pub fn sorted(mut self) -> DirListing {
        self.keys.sort();
        self.prefixes.sort();
        self
    }

    /// The direct children of `prefix` among `keys`, which must be sorted (a `BTreeMap`'s keys from
    /// `prefix` on): values directly under the prefix, and each sub-prefix once. Stops at the first key
    /// past the prefix.
    pub fn from_sorted_keys<'a>(prefix: &str, keys: impl IntoIterator<Item = &'a str>) -> DirListing {
        let mut out = DirListing::default();
        for k in keys {
            let Some(rest) = k.strip_prefix(prefix) else { break };
            match rest.split_once('/') {
                None => out.keys.push(rest.to_string()),
                Some((dir, _)) if out.prefixes.last().map(String::as_str) != Some(dir) => out.prefixes.push(dir.to_string()),
                Some(_) => {}
            }
        }
        out
    }
}

/// A key/value store. All methods may be called from several threads at once.
pub trait Store: Send + Sync + std::fmt::Debug {
    /// The whole value at `key`, or `None` when absent.
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;

    /// The metadata ceiling of this store: the most bytes one metadata document read from it may have
    /// (its JSON values are bounded by it too, see [`crate::limits::max_metadata_values`]). The store
    /// option `max_metadata_bytes` sets it for one store ([`prefix::PrefixStore::with_max_metadata_bytes`]);
    /// the default is the process-wide [`crate::limits::max_metadata_bytes`] (`ZARR_MAX_METADATA_BYTES`).
    fn max_metadata_bytes(&self) -> u64 {
        crate::limits::max_metadata_bytes()
    }

    /// Reads the whole value at `key` into `buf` (replacing its contents); `false` when absent. A value
    /// longer than `limit` is an error ([`ReadLimit::exceeded`]) after at most `limit.bytes + 1` bytes
    /// were read: a store that learns the length first (a file's size, a zip member's recorded size, a
    /// response's `Content-Length`) fails before reading anything, and a body longer than it claimed
    /// stops at the limit. The default (values already in memory) checks the value it got.
    fn get_into(&self, key: &str, buf: &mut Vec<u8>, limit: ReadLimit) -> Result<bool> {
        match self.get(key)? {
            Some(v) => {
                limit.check(&self.location(key), v.len() as u64)?;
                *buf = v;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// [`Store::get`] of a value that may be at most `limit` long (see [`Store::get_into`]): every
    /// read of a metadata document or a chunk whose length the input decides goes through this or
    /// [`Store::get_into`].
    fn get_limited(&self, key: &str, limit: ReadLimit) -> Result<Option<Vec<u8>>> {
        let mut v = Vec::new();
        Ok(self.get_into(key, &mut v, limit)?.then_some(v))
    }

    /// Calls `f` with the whole value at `key` and returns `true`, or returns `false` when absent; a
    /// value longer than `limit` is an error as for [`Store::get_into`]. A remote store hands over the
    /// received buffer as it is (no copy); the default reads into a per-thread scratch buffer with
    /// [`Store::get_into`].
    fn with_value(&self, key: &str, limit: ReadLimit, f: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<bool> {
        crate::scratch::with_encoded(|buf| {
            if !self.get_into(key, buf, limit)? {
                return Ok(false);
            }
            f(buf)?;
            Ok(true)
        })
    }

    /// Hands the whole value at `key` to `sink` in order, piece by piece as it arrives (a remote store
    /// streams the response body), and returns `true`; `false` when absent. With `version` (from
    /// [`ByteSource::version`]) the value must still be that version, otherwise [`Error::Io`]. The
    /// default calls `sink` once with the whole value from [`Store::with_value`] (no versions).
    fn stream_value(&self, key: &str, version: Option<&str>, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<bool> {
        let _ = version;
        self.with_value(key, ReadLimit::none(), sink)
    }

    /// Reads the values at `keys` together, where the store can do better than one read a key (the
    /// reference store fetches the byte ranges of one target that are adjacent or close in one read:
    /// [`coalesce`]). Calls `visit(i, value)` for each key `keys[i]` found, from any thread, and returns
    /// which keys were found; a value longer than `limit` is an error as for [`Store::get_into`].
    /// `None` (the default): the store has no such read, and the caller reads key by key.
    fn get_batch(&self, keys: &[String], limit: ReadLimit, visit: &(dyn Fn(usize, &[u8]) -> Result<()> + Sync)) -> Result<Option<Vec<bool>>> {
        let _ = (keys, limit, visit);
        Ok(None)
    }

    /// Opens the value at `key` for byte-range reads, or `None` when absent.
    fn open(&self, key: &str) -> Result<Option<Box<dyn ByteSource + '_>>>;

    /// [`Store::open`], for a reader that will first read the part of the value named by `hint`: a
    /// remote store fetches that part with the request that opens the value (one round trip), and
    /// makes the source's later range reads conditional on the version it saw, so that a value
    /// replaced in between fails those reads instead of mixing two versions. Local stores: `open`.
    fn open_hinted(&self, key: &str, hint: OpenHint) -> Result<Option<Box<dyn ByteSource + '_>>> {
        let _ = hint;
        self.open(key)
    }

    /// [`Store::open_hinted`], fetching besides, in the same round trip (concurrent requests), the
    /// byte ranges `ranges` (`start..end` each) that the reader expects to need: a remote store keeps
    /// the parts of them the value has, when they come from the same version as the hinted part (a
    /// range that fails or answers another version is dropped: the reader fetches what it lacks
    /// later, conditionally). The source's [`ByteSource::holds`] says what arrived. Local stores and
    /// stores without ranged reads: [`Store::open_hinted`].
    fn open_speculative(&self, key: &str, hint: OpenHint, ranges: &[(u64, u64)]) -> Result<Option<Box<dyn ByteSource + '_>>> {
        let _ = ranges;
        self.open_hinted(key, hint)
    }

    /// Reopens version `version` (from [`ByteSource::version`]) of the value at `key`, `len` bytes
    /// long, without a request: its range reads fail with [`Error::Io`] if the stored value is no
    /// longer that version (or is gone). Stores without versions: [`Error::Unsupported`].
    fn open_version(&self, key: &str, len: u64, version: &str) -> Result<Box<dyn ByteSource + '_>> {
        let _ = (len, version);
        Err(Error::Unsupported(format!("{}: the store has no value versions", self.location(key))))
    }

    /// Stores `value` at `key` atomically: a reader sees the old value or the new one, never a mix.
    fn set(&self, key: &str, value: &[u8]) -> Result<()>;

    /// Stores the concatenation of `parts` at `key` atomically (e.g. a shard's inner chunks and index,
    /// without joining them in memory first).
    fn set_parts(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        match parts {
            [one] => self.set(key, one),
            _ => self.set(key, &parts.concat()),
        }
    }

    /// Removes `key`; removing an absent key succeeds.
    fn delete(&self, key: &str) -> Result<()>;

    /// Takes the lock `ranges` (ascending, disjoint; see [`lock`]) of the node at `node_prefix` (`""`
    /// for the root, otherwise ending in `/`), waiting while another writer (process, thread or handle)
    /// holds a conflicting lock; the locks are held until the returned guard is dropped. The default
    /// takes no lock: writers of such a store are not protected against each other.
    fn lock(&self, node_prefix: &str, ranges: &[LockRange]) -> Result<StoreLock> {
        let _ = (node_prefix, ranges);
        Ok(StoreLock::none())
    }

    /// Takes the metadata lock (exclusive) of the *group* at `node_prefix`, whose metadata document is
    /// `document_key` (v3 `zarr.json`, v2 `.zgroup`), for an attribute update or a consolidation. It
    /// excludes the same writers as [`Store::lock`] with [`LockRange::metadata`] (the default takes
    /// exactly that), but a store may take it without putting anything beside the document: the
    /// filesystem store locks the document file itself (see [`lock`]), since readers list a group's
    /// directory as its children and warn about a lock file there.
    fn lock_group_document(&self, node_prefix: &str, document_key: &str) -> Result<StoreLock> {
        let _ = document_key;
        self.lock(node_prefix, &[LockRange::metadata(true)])
    }

    /// Versioned reads and conditional writes ([`conditional`]), for stores whose [`Store::lock`] takes
    /// no lock but whose server can compare-and-swap a key (S3). Writers merging into a stored chunk or
    /// shard then retry on a lost race instead of overwriting another writer's update. `None` (the
    /// default): not available.
    fn conditional(&self) -> Option<&dyn ConditionalStore> {
        None
    }

    /// [`Store::set_parts`] by a writer holding `lock`, which covers `key` exclusively. A store may use
    /// this to reuse one temporary name per key, so that what a killed writer left behind is replaced
    /// by the next writer of the key.
    fn set_parts_locked(&self, key: &str, parts: &[&[u8]], lock: &StoreLock) -> Result<()> {
        let _ = lock;
        self.set_parts(key, parts)
    }

    /// A [`ValueStream`] for a value of `key` written in pieces by a writer holding `lock`, which
    /// covers `key` exclusively: the pieces go to the store as they come, and the value replaces the
    /// key's old one at [`ValueStream::commit`], atomically as with [`Store::set_parts_locked`].
    /// `None` (the default): the store cannot, and the caller hands over the value whole.
    fn stream_locked(&self, key: &str, lock: &StoreLock) -> Result<Option<Box<dyn ValueStream + '_>>> {
        let _ = (key, lock);
        Ok(None)
    }

    /// [`Store::delete`] by a writer holding `lock`, which covers `key` exclusively (a store may also
    /// remove a killed writer's temporary value of `key`).
    fn delete_locked(&self, key: &str, lock: &StoreLock) -> Result<()> {
        let _ = lock;
        self.delete(key)
    }

    /// Fails with [`Error::ReadOnly`] when nothing can ever be written to this store (a zip archive, a
    /// plain HTTP server), without sending a request: creating a node checks this first. The default
    /// (writable stores) succeeds.
    fn ensure_writable(&self) -> Result<()> {
        Ok(())
    }

    /// Removes what is left of `prefix` (ending in `/`) once every key below it was deleted, where the
    /// store keeps something for a prefix (the filesystem store: the empty directory); a prefix that
    /// is not empty or absent is left as it is. The default (stores of keys only) does nothing.
    fn remove_empty_prefix(&self, prefix: &str) -> Result<()> {
        let _ = prefix;
        Ok(())
    }

    /// Moves every key below `from` to the same name below `to` (both node prefixes ending in `/`) in
    /// one atomic step, where the store can (the filesystem store renames the directory; the memory
    /// store moves the keys under its map lock). `Ok(false)`: the store cannot, nothing was done, and
    /// the caller copies the keys and deletes the sources instead (the default, e.g. object stores).
    /// The caller has checked that nothing is stored below `to`.
    fn rename_prefix(&self, from: &str, to: &str) -> Result<bool> {
        let _ = (from, to);
        Ok(false)
    }

    /// Fails, before anything is changed, when deleting or moving the node at `prefix` (ending in
    /// `/`) would have to pass through a symbolic link above it (the filesystem store: a directory on
    /// the way from the root is a link). Deleting and moving never follow a link. The default (stores
    /// without links) succeeds.
    fn check_removable(&self, prefix: &str) -> Result<()> {
        let _ = prefix;
        Ok(())
    }

    /// Deletes everything below `prefix` (ending in `/`) where the store can do it itself, the keys
    /// named `first` at each level before the others (a node's documents), without following a
    /// symbolic link: a link is removed as a link, its target untouched (the filesystem store).
    /// `Ok(false)`: not offered, nothing done; the caller deletes key by key (the default).
    fn delete_tree(&self, prefix: &str, first: &[&str]) -> Result<bool> {
        let _ = (prefix, first);
        Ok(false)
    }

    /// Whether a value exists at `key`.
    fn exists(&self, key: &str) -> Result<bool>;

    /// The direct children of `prefix` (`""` for the root, otherwise ending in `/`).
    fn list_dir(&self, prefix: &str) -> Result<DirListing>;

    /// Total bytes this store has delivered to readers (for tests and statistics).
    fn bytes_read(&self) -> u64;

    /// A human-readable location of `key` for error messages (e.g. the file path).
    fn location(&self, key: &str) -> String {
        key.to_string()
    }

    /// How many requests one call should keep in flight (remote stores: the `max_concurrency` option);
    /// `0` for local stores, which are read by the chunk thread pool as it is. Reads and writes of
    /// many chunks then run on an I/O pool of this many threads ([`crate::threads::try_for_each_io`]).
    fn io_concurrency(&self) -> usize {
        0
    }

    /// How many bytes beyond what a reader needs first it is worth fetching with a request it makes
    /// anyway (a shard's first read: the index with the inner chunks likely needed), so that no second
    /// round trip follows: remote stores give their bandwidth-delay estimate
    /// ([`link_estimate::LinkEstimate::speculative_bytes`]); `0` for local stores (the default).
    fn speculative_read_bytes(&self) -> u64 {
        0
    }

    /// The transaction this store's writes go into ([`transaction`]: an Icechunk session), for
    /// `zarr_icechunk_commit` and `zarr_icechunk_discard`. `None` (the default): writes are stored
    /// as they are made.
    fn transaction(&self) -> Option<&dyn transaction::Transaction> {
        None
    }
}

/// Rejects keys that are empty, absolute, contain empty, `.` or `..` segments, NUL or backslash.
pub fn validate_key(key: &str) -> Result<()> {
    let bad = |why: &str| Err(Error::InvalidArgument(format!("invalid store key '{key}': {why}")));
    if key.is_empty() {
        return bad("empty");
    }
    if key.contains('\0') || key.contains('\\') {
        return bad("contains NUL or backslash");
    }
    for seg in key.split('/') {
        match seg {
            "" => return bad("empty path segment (leading, trailing or doubled '/')"),
            "." | ".." => return bad("'.' and '..' segments are not allowed"),
            _ => {}
        }
    }
    Ok(())
}

/// Normalises a node path (`"/a/b/"` -> `"a/b"`, `""` or `"/"` -> root `""`), rejecting invalid names:
/// empty segments, names made only of periods, names starting with `__`, NUL and backslash.
pub fn normalize_node_path(path: &str) -> Result<String> {
    let trimmed = path.trim_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    for seg in trimmed.split('/') {
        let why = if seg.is_empty() {
            Some("empty name")
        } else if seg.bytes().all(|b| b == b'.') {
            Some("a name made only of periods")
        } else if seg.starts_with("__") {
            Some("names starting with '__' are reserved")
        } else if seg.contains('\0') || seg.contains('\\') {
            Some("NUL or backslash in a name")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Error::InvalidArgument(format!("invalid node path '{path}': {why}")));
        }
    }
    Ok(trimmed.to_string())
}

/// The key prefix of the node at normalised `path` (`""` for the root, otherwise `path/`).
pub fn node_prefix(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("{path}/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert!(validate_key("c/0/1").is_ok());
        assert!(validate_key("zarr.json").is_ok());
        for k in ["", "/abs", "a//b", "a/", "../x", "a/../b", "a/./b", "a\\b", "a\0"] {
            assert!(validate_key(k).is_err(), "{k:?}");
        }
    }

    #[test]
    fn node_paths() {
        assert_eq!(normalize_node_path("/a/b/").unwrap(), "a/b");
        assert_eq!(normalize_node_path("").unwrap(), "");
        assert_eq!(normalize_node_path("/").unwrap(), "");
        for p in ["a//b", "..", "a/../b", "a/...", "__zarr", "a/__b"] {
            assert!(normalize_node_path(p).is_err(), "{p:?}");
        }
        assert!(normalize_node_path("a.b/.c").is_ok());
        assert_eq!(node_prefix("a/b"), "a/b/");
        assert_eq!(node_prefix(""), "");
    }

    #[test]
    fn ranges() {
        let data = [1u8, 2, 3, 4, 5];
        let s = SliceSource(&data);
        assert_eq!(s.read_range(1, 3).unwrap(), [2, 3, 4]);
        assert!(s.read_range(3, 3).is_err());
        assert!(s.read_range(u64::MAX, 2).is_err());
        let sub = SubSource { inner: &s, offset: 2, len: 2 };
        assert_eq!(sub.read_all().unwrap(), [3, 4]);
        assert!(sub.read_range(1, 2).is_err());
    }
}
