//! Conditional writes: compare-and-swap on one key, for stores that cannot lock (object stores).
//!
//! A writer that must merge its change into a stored value (a write covering part of a chunk or
//! shard) reads the value with its [`ValueVersion`], merges, and stores the result only if the value
//! is still at that version ([`ConditionalStore::set_parts_if_version`]); when another writer got
//! there first it reads again and redoes the merge. On S3 this is a PUT with `If-Match: <ETag>`, or
//! `If-None-Match: *` when the value did not exist. Stores offer it through [`super::Store::conditional`].

use crate::error::Result;

/// The version of a stored value that a conditional write compares against (an S3 ETag and, on
/// versioned buckets, the object version). Opaque to callers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueVersion {
    /// The entity tag the server gave the value.
    pub e_tag: Option<String>,
    /// The object version, where the server keeps versions.
    pub version: Option<String>,
}

/// Versioned reads and conditional writes of single keys. All methods may be called from several
/// threads at once.
pub trait ConditionalStore: Send + Sync {
    /// The whole value at `key` with its version, or `None` when absent; a value longer than `limit` is
    /// an error, as for [`super::Store::get_into`].
    fn get_versioned(&self, key: &str, limit: super::ReadLimit) -> Result<Option<(Vec<u8>, ValueVersion)>>;

    /// Stores the concatenation of `parts` at `key` (atomically, as [`super::Store::set_parts`]) only
    /// if the value is still at `expected` (`None`: only if no value exists). `Ok(false)` when it is
    /// not (another writer changed it: read again and retry); [`crate::Error::Unsupported`] when the
    /// server does not implement conditional writes (the caller may fall back to a plain write).
    fn set_parts_if_version(&self, key: &str, parts: &[&[u8]], expected: Option<&ValueVersion>) -> Result<bool>;
}
