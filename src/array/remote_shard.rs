//! Shard reads on remote stores, where a round trip costs more than the bytes it carries:
//!
//! - a selection touching at least half of the inner chunks fetches the whole shard in one GET (one
//!   round trip: the index is read from the end of what arrived), or, when the handle kept the
//!   shard's index, streams it, each inner chunk decoded as soon as its bytes are in;
//! - a smaller selection gets the index with the request that opens the shard (a suffix range for an
//!   index at the end, a prefix for one at the start: no HEAD), and with it, speculatively, the inner
//!   chunks the selection likely needs: those stored next to the index in that range, the others as
//!   ranged GETs sent beside it in the same round trip, where an earlier shard of the array stored
//!   them (as many bytes as arrive in one round trip, at most `speculative_read_max`:
//!   [`super::shard_speculation`]); a small shard arrives whole. The inner chunks the answer lacks are fetched as coalesced runs by ranged GETs (gaps up to
//!   1 MiB bridged), all at once, conditional on the shard's ETag (`If-Match`). A read touching
//!   several shards does this for all of them at once (one I/O task per shard);
//! - the index is kept per array handle with that ETag ([`ShardIndexCache`]), so the next read of the
//!   shard sends only the data requests. Those carry `If-Match` too: a shard another writer replaced
//!   fails them, and the read starts over with a fresh index. Stale bytes are never decoded.

use super::shard_speculation::LayoutModel;
use super::Array;
use crate::codec::sharding::index::Entry;
use crate::codec::sharding::ShardingCodec;
use crate::selection::Dest;
use crate::error::{Error, Result};
use crate::selection::ChunkPart;
use crate::store::ByteSource;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Shard indexes read through one array handle, by shard key, with the version (ETag) and size of the
/// shard they were read from. Bounded: when the entries kept would exceed [`ShardIndexCache::MAX_ENTRIES`]
/// the cache starts over.
#[derive(Debug, Default)]
pub(crate) struct ShardIndexCache {
    /// The kept indexes, and how many entries they hold together.
    map: Mutex<(HashMap<String, CachedIndex>, usize)>,
    /// Where the shards read so far stored their inner chunks (what the first requests to an unread
    /// shard ask for), shared with the other handles of the array in this process.
    layout: std::sync::OnceLock<Arc<LayoutModel>>,
}

#[derive(Debug, Clone)]
struct CachedIndex {
    version: String,
    len: u64,
    entries: Arc<Vec<Entry>>,
}

impl ShardIndexCache {
    /// Index entries kept at most (16 bytes each in memory: 16 MiB).
    const MAX_ENTRIES: usize = 1 << 20;

    fn get(&self, key: &str) -> Option<CachedIndex> {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).0.get(key).cloned()
    }

    fn insert(&self, key: &str, index: CachedIndex) {
        let mut guard = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let (map, held) = &mut *guard;
        if *held + index.entries.len() > Self::MAX_ENTRIES {
            map.clear();
            *held = 0;
        }
        *held += index.entries.len();
        if let Some(old) = map.insert(key.to_string(), index) {
            *held -= old.entries.len();
        }
    }

    /// The layout model of the array (`array`: its location and sharding).
    fn layout(&self, array: impl FnOnce() -> String) -> &LayoutModel {
        self.layout.get_or_init(|| super::shard_speculation::shared(array()))
    }

    fn remove(&self, key: &str) {
        let mut guard = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let (map, held) = &mut *guard;
        if let Some(old) = map.remove(key) {
            *held -= old.entries.len();
        }
    }
}

impl Array {
    /// Decodes the part of the shard at `key` that `part` selects into `dest`, from a remote store.
    pub(super) fn read_shard_remote(&self, key: &str, shard: &ShardingCodec, part: &ChunkPart, dest: Dest) -> Result<()> {
        let needed: Vec<usize> = part.local.project(shard.inner_grid())?.iter().map(|p| shard.linear(&p.chunk)).collect();
        let whole = needed.len() * 2 >= shard.num_inner_chunks();
        // A kept index first. When the shard changed since, the conditional reads fail and the shard is
        // reopened: a new version (replaced in between) is read again, the same version ends the read
        // with the error.
        let mut kept = self.shard_indexes.get(key);
        if whole && kept.is_none() {
            // Most of the shard and no index kept: one GET of all of it, index included.
            return self.read_whole_chunk_remote(key, part, dest);
        }
        let mut failed: Option<(String, Error)> = None;
        for _ in 0..4 {
            let (src, index) = match kept.take() {
                Some(c) => (self.store.open_version(key, c.len, &c.version)?, c),
                None => {
                    // The index, and the inner chunks likely needed stored next to it.
                    let layout = self.shard_indexes.layout(|| {
                        format!("{}\n{}\n{:?}", self.store.location(&self.prefix), shard.num_inner_chunks(), shard.index_layout())
                    });
                    let plan = layout.plan(shard, &needed, self.store.speculative_read_bytes());
                    let Some(src) = self.store.open_speculative(key, plan.hint, &plan.ranges)? else {
                        return dest.fill_box(&part.local.count);
                    };
                    // A shard longer than any encoding of it is refused before its index is used
                    // (a streamed read of it would take a buffer of that size).
                    crate::store::ReadLimit::chunk(shard.max_encoded_size()).check(&self.store.location(key), src.len())?;
                    let entries = shard.read_index(src.as_ref())?;
                    layout.learn(&entries, src.len());
                    let Some(version) = src.version().map(str::to_string) else {
                        // A server without versions: plain reads.
                        return self.read_shard_unversioned(key, shard, part, dest, src.as_ref(), entries, whole);
                    };
                    if let Some((seen, e)) = failed.take() {
                        if seen == version {
                            return Err(e);
                        }
                    }
                    let len = src.len();
                    (src, CachedIndex { version, len, entries: Arc::new(entries) })
                }
            };
            let entries = index.entries.as_ref().clone();
            let result = if whole {
                // Most of the shard: one GET of all of it, inner chunks decoded as their bytes arrive.
                shard
                    .decode_streamed(index.len, entries, &part.local, dest, &mut |sink| {
                        self.store.stream_value(key, Some(&index.version), sink)
                    })
                    .map(|_| ())
            } else {
                shard.decode_region(src.as_ref(), entries, &part.local, dest)
            };
            match result {
                Ok(()) => {
                    self.shard_indexes.insert(key, index);
                    return Ok(());
                }
                Err(e) => {
                    self.shard_indexes.remove(key);
                    failed = Some((index.version, e));
                }
            }
        }
        Err(failed.map(|(_, e)| e).unwrap_or_else(|| Error::Io(format!("{key}: the shard kept changing while it was read"))))
    }

    /// [`Array::read_shard_remote`] from a store without versions (nothing is kept).
    #[allow(clippy::too_many_arguments)]
    fn read_shard_unversioned(
        &self,
        key: &str,
        shard: &ShardingCodec,
        part: &ChunkPart,
        dest: Dest,
        src: &dyn ByteSource,
        entries: Vec<Entry>,
        whole: bool,
    ) -> Result<()> {
        if whole {
            self.read_whole_chunk_remote(key, part, dest)
        } else {
            shard.decode_region(src, entries, &part.local, dest)
        }
    }
}

#[cfg(all(test, feature = "remote"))]
mod tests {
    use super::*;
    use crate::store::object::{ObjectStoreAdapter, Protocol};
    use crate::store::options::StoreOptions;
    use crate::store::Store;

    const DOC: &str = r#"{"zarr_format": 3, "node_type": "array", "shape": [16, 24], "data_type": "uint16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 12]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 7,
        "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 3],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}]}"#;

    fn values(seed: u16) -> Vec<u8> {
        (0..16 * 24u16).flat_map(|i| (i.wrapping_mul(31) ^ seed).to_le_bytes()).collect()
    }

    fn region(all: &[u8], start: [usize; 2], count: [usize; 2]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in start[0]..start[0] + count[0] {
            out.extend_from_slice(&all[(r * 24 + start[1]) * 2..(r * 24 + start[1] + count[1]) * 2]);
        }
        out
    }

    #[test]
    fn the_index_cache_counts_its_entries_and_stays_bounded() {
        let cache = ShardIndexCache::default();
        let index = |n: usize| CachedIndex { version: "v".into(), len: 1, entries: Arc::new(vec![None; n]) };
        let held = |c: &ShardIndexCache| c.map.lock().unwrap().1;
        cache.insert("a", index(10));
        cache.insert("b", index(5));
        cache.insert("a", index(3));
        assert_eq!(held(&cache), 8);
        cache.remove("b");
        cache.remove("b");
        assert_eq!(held(&cache), 3);
        // Up to the bound everything is kept; past it the cache starts over with the new index alone.
        cache.insert("big", index(ShardIndexCache::MAX_ENTRIES - 3));
        assert_eq!(held(&cache), ShardIndexCache::MAX_ENTRIES);
        cache.insert("c", index(7));
        assert_eq!(held(&cache), 7);
        assert!(cache.get("a").is_none() && cache.get("c").is_some());
    }

    #[test]
    fn kept_indexes_are_revalidated_and_whole_shards_stream() {
        let mem = Arc::new(object_store::memory::InMemory::new());
        let store: Arc<dyn Store> =
            Arc::new(ObjectStoreAdapter::new(mem, Protocol::S3, "s3://b/a", "a", &StoreOptions::new()));
        let writer = Array::create(store.clone(), "", DOC).unwrap();
        let first = values(0);
        writer.write_region(&[0, 0], &[16, 24], &first).unwrap();
        // Leave inner chunks of shard (1, 1) missing: they read as the fill value.
        writer.write_region(&[8, 12], &[4, 12], &[0u8; 4 * 12 * 2]).unwrap();
        let reader = Array::open(store.clone(), "", false).unwrap();
        let mut expect = first.clone();
        for r in 8..12 {
            expect[(r * 24 + 12) * 2..(r * 24 + 24) * 2].copy_from_slice(&[0u8; 24]);
        }
        let read = |start: [u64; 2], count: [u64; 2]| {
            let mut out = vec![0u8; (count[0] * count[1] * 2) as usize];
            reader.read_region(&start, &count, &mut out).unwrap();
            out
        };
        // Small reads (ranges) keep the index; whole shards stream; both agree with what was written.
        assert_eq!(read([1, 2], [3, 4]), region(&expect, [1, 2], [3, 4]));
        assert!(reader.shard_indexes.get("c/0/0").is_some(), "the index is kept");
        assert_eq!(read([0, 0], [16, 24]), expect);
        assert_eq!(read([3, 5], [9, 11]), region(&expect, [3, 5], [9, 11]));
        // Another writer replaces every shard: the kept indexes no longer match, the reads start over.
        let second = values(0x5a5a);
        writer.write_region(&[0, 0], &[16, 24], &second).unwrap();
        assert_eq!(read([1, 2], [3, 4]), region(&second, [1, 2], [3, 4]));
        assert_eq!(read([0, 0], [16, 24]), second);
        // A shard deleted behind the reader's back is the fill value.
        store.delete("c/0/0").unwrap();
        let mut filled = second.clone();
        for r in 0..8 {
            for c in 0..12 {
                filled[(r * 24 + c) * 2..(r * 24 + c) * 2 + 2].copy_from_slice(&7u16.to_le_bytes());
            }
        }
        assert_eq!(read([0, 0], [16, 24]), filled);
        assert_eq!(read([1, 2], [3, 4]), region(&filled, [1, 2], [3, 4]));
    }
}
