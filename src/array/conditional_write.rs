//! Writes covering part of a chunk or shard on stores that cannot lock but can write conditionally
//! (S3, see [`crate::store::conditional`]). The read-modify-write of such a chunk reads the stored
//! value with its version, merges, and stores the result only if the value is still at that version
//! (`If-Match`, or `If-None-Match: *` when it did not exist). When another writer changed it
//! meanwhile, the chunk is read again and the merge redone, up to [`MAX_ATTEMPTS`] times with a
//! randomized, growing pause; then the call fails with [`Error::Io`]. So writers of different inner
//! chunks of one shard, or different parts of one chunk, in any process, never lose each other's
//! updates. A server that does not implement conditional writes gets a plain write (the last writer
//! wins). Whole-chunk writes need no condition: they do not depend on what was stored.

use super::write::Existing;
use super::Array;
use crate::codec::Parts;
use crate::error::{try_alloc, Error, Result};
use crate::selection::convert::Conv;
use crate::selection::{ChunkPart, Layout};
use crate::store::{ConditionalStore, StoreLock, ValueVersion};
use std::hash::{BuildHasher, Hasher};

/// How many times one chunk's update is tried before the call gives up on a lost race.
pub(super) const MAX_ATTEMPTS: u32 = 16;

/// What a conditional store of one chunk came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stored {
    /// Stored (or nothing needed storing).
    Done,
    /// Another writer changed the value since it was read: read again and redo the merge.
    Lost,
}

impl Array {
    /// Phase 1 of a conditional update: the chunk of `part` read with its version (`None`: it did not
    /// exist), and decoded as far as the merge needs.
    pub(super) fn read_versioned(&self, cond: &dyn ConditionalStore, part: &ChunkPart) -> Result<(Existing, Option<ValueVersion>)> {
        let key = self.chunk_key(&part.chunk);
        let chain = self.meta.chain_for(&part.chunk)?;
        let (stored, version) = match cond.get_versioned(&key, super::chunk_limit(&chain))? {
            Some((bytes, v)) => (Some(bytes), Some(v)),
            None => (None, None),
        };
        if let (true, Some(shard)) = (chain.is_bare(), chain.array_to_bytes().as_sharding()) {
            return Ok((Existing::Shard(self.shard_update_from(shard, part, stored)?), version));
        }
        let mut buf = try_alloc(chain.decoded_repr().nbytes())?;
        match stored {
            Some(bytes) => chain.decode_chunk(&bytes, &mut buf)?,
            None => crate::buffer::fill_elements(&mut buf, &self.meta.fill_value),
        }
        Ok((Existing::Decoded(buf), version))
    }

    /// Stores the merged chunk `encoded` (`None`: all fill value) at `key` if the stored value is still
    /// at `expected`. All fill value over an existing value stores the encoded fill chunk (an object
    /// store cannot delete conditionally); over a missing one it stores nothing. A server without
    /// conditional writes gets a plain write.
    pub(super) fn store_chunk_if(
        &self,
        cond: &dyn ConditionalStore,
        chunk: &[u64],
        encoded: Option<Parts>,
        expected: Option<&ValueVersion>,
    ) -> Result<Stored> {
        let key = self.chunk_key(chunk);
        let parts = match encoded {
            Some(p) => p,
            None if expected.is_none() => return Ok(Stored::Done),
            None => vec![std::borrow::Cow::Owned(self.fill_chunk_encoded(chunk)?)],
        };
        let slices: Vec<&[u8]> = parts.iter().map(|p| p.as_ref()).collect();
        match cond.set_parts_if_version(&key, &slices, expected) {
            Ok(true) => Ok(Stored::Done),
            Ok(false) => Ok(Stored::Lost),
            Err(Error::Unsupported(_)) => self.store_chunk(&key, Some(parts), &StoreLock::none()).map(|_| Stored::Done),
            Err(e) => Err(e),
        }
    }

    /// The chunk at `chunk` holding the fill value everywhere, encoded.
    fn fill_chunk_encoded(&self, chunk: &[u64]) -> Result<Vec<u8>> {
        let chain = self.meta.chain_for(chunk)?;
        crate::scratch::with_decoded(chain.decoded_repr().nbytes(), |buf| {
            crate::buffer::fill_elements(buf, &self.meta.fill_value);
            Ok(chain.encode_chunk(buf)?.into_owned())
        })
    }

    /// Redoes the update of the chunk of `part` after a lost race: reads it again with its version,
    /// merges the caller's data, stores conditionally; up to [`MAX_ATTEMPTS`] tries in all (the first
    /// one was the caller's).
    pub(super) fn redo_chunk_update(
        &self,
        cond: &dyn ConditionalStore,
        part: &ChunkPart,
        layout: &Layout,
        conv: &Conv,
        data: &[u8],
    ) -> Result<()> {
        for attempt in 1..MAX_ATTEMPTS {
            std::thread::sleep(backoff(attempt));
            let (existing, expected) = self.read_versioned(cond, part)?;
            let mut outcome = Stored::Lost;
            let mut sink = |e: Option<Parts>| -> Result<()> {
                outcome = self.store_chunk_if(cond, &part.chunk, e, expected.as_ref())?;
                Ok(())
            };
            self.write_chunk_part(part, layout, conv, data, Some(existing), &mut sink)?;
            if outcome == Stored::Done {
                return Ok(());
            }
        }
        Err(Error::Io(format!(
            "a concurrent writer kept changing this chunk: {MAX_ATTEMPTS} conditional writes in a row lost the race"
        )))
    }
}

/// The pause before retry `attempt` (1, 2, ...): uniformly random up to 5 ms * 2^attempt, at most
/// 500 ms, so that writers that collided spread out.
fn backoff(attempt: u32) -> std::time::Duration {
    let cap_us = (5_000u64 << attempt.min(7)).min(500_000);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(attempt);
    std::time::Duration::from_micros(h.finish() % cap_us)
}

#[cfg(test)]
mod tests {
    #[test]
    fn backoff_grows_and_is_bounded() {
        for attempt in 1..super::MAX_ATTEMPTS {
            let d = super::backoff(attempt);
            assert!(d.as_micros() < (5_000u128 << attempt.min(7)).min(500_000), "{attempt}: {d:?}");
        }
    }
}

/// The retry logic against `object_store`'s in-memory backend (which implements conditional PUTs),
/// with another writer changing the shard between each read and conditional PUT of the write under test.
#[cfg(all(test, feature = "remote"))]
mod race_tests {
    use super::super::Array;
    use crate::error::{Error, Result};
    use crate::store::object::{ObjectStoreAdapter, Protocol};
    use crate::store::{ByteSource, ConditionalStore, DirListing, Store, StoreOptions, ValueVersion};
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    const META: &str = r#"{"zarr_format":3,"node_type":"array","shape":[4,8],"data_type":"int32",
        "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4,8]}},
        "chunk_key_encoding":{"name":"default"},"fill_value":0,
        "codecs":[{"name":"sharding_indexed","configuration":{"chunk_shape":[1,8],
            "codecs":[{"name":"bytes","configuration":{"endian":"little"}}],
            "index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],
            "index_location":"end"}}]}"#;

    /// A store over `inner` whose conditional PUTs are each preceded, while `interfere` is above 0, by
    /// another writer's update of the same shard (element `(3, n)`, value `100 + n`).
    #[derive(Debug)]
    struct Racing {
        inner: Arc<ObjectStoreAdapter>,
        interfere: AtomicU32,
        done: AtomicU32,
        /// Answer every conditional PUT as a server without them would.
        unsupported: std::sync::atomic::AtomicBool,
    }

    impl Racing {
        fn other_writer(&self) {
            if self.interfere.load(Ordering::SeqCst) == 0 {
                return;
            }
            self.interfere.fetch_sub(1, Ordering::SeqCst);
            let n = self.done.fetch_add(1, Ordering::SeqCst) as u64 % 8;
            let other = Array::open(self.inner.clone(), "", true).unwrap();
            other.write_region(&[3, n], &[1, 1], &(100 + n as i32).to_le_bytes()).unwrap();
        }
    }

    impl ConditionalStore for Racing {
        fn get_versioned(&self, key: &str, limit: crate::store::ReadLimit) -> Result<Option<(Vec<u8>, ValueVersion)>> {
            self.inner.conditional().unwrap().get_versioned(key, limit)
        }
        fn set_parts_if_version(&self, key: &str, parts: &[&[u8]], expected: Option<&ValueVersion>) -> Result<bool> {
            if self.unsupported.load(Ordering::SeqCst) {
                return Err(Error::Unsupported("conditional PUT: 501 Not Implemented".into()));
            }
            self.other_writer();
            self.inner.conditional().unwrap().set_parts_if_version(key, parts, expected)
        }
    }

    impl Store for Racing {
        fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
            self.inner.get(key)
        }
        fn open(&self, key: &str) -> Result<Option<Box<dyn ByteSource + '_>>> {
            self.inner.open(key)
        }
        fn set(&self, key: &str, value: &[u8]) -> Result<()> {
            self.inner.set(key, value)
        }
        fn delete(&self, key: &str) -> Result<()> {
            self.inner.delete(key)
        }
        fn conditional(&self) -> Option<&dyn ConditionalStore> {
            Some(self)
        }
        fn exists(&self, key: &str) -> Result<bool> {
            self.inner.exists(key)
        }
        fn list_dir(&self, prefix: &str) -> Result<DirListing> {
            self.inner.list_dir(prefix)
        }
        fn bytes_read(&self) -> u64 {
            self.inner.bytes_read()
        }
        fn location(&self, key: &str) -> String {
            self.inner.location(key)
        }
    }

    fn setup(interfere: u32) -> (Arc<Racing>, Array) {
        let mem = Arc::new(object_store::memory::InMemory::new());
        let inner = Arc::new(ObjectStoreAdapter::new(mem, Protocol::S3, "s3://b/a", "a", &StoreOptions::new()));
        Array::create(inner.clone(), "", META).unwrap();
        let racing = Arc::new(Racing { inner, interfere: AtomicU32::new(interfere),
            done: AtomicU32::new(0),
            unsupported: Default::default(),
        });
        let a = Array::open(racing.clone(), "", true).unwrap();
        (racing, a)
    }

    fn read_all(s: &Racing) -> Vec<i32> {
        let a = Array::open(s.inner.clone(), "", false).unwrap();
        let mut out = vec![0u8; 4 * 32];
        a.read_region(&[0, 0], &[4, 8], &mut out).unwrap();
        out.chunks(4).map(|b| i32::from_le_bytes(b.try_into().unwrap())).collect()
    }

    #[test]
    fn lost_races_are_merged_again() {
        // The shard does not exist at first (If-None-Match: *), then changes under the writer 3 times.
        let (s, a) = setup(3);
        a.write_region(&[0, 3], &[1, 2], &[7i32.to_le_bytes(), 8i32.to_le_bytes()].concat()).unwrap();
        let v = read_all(&s);
        assert_eq!((v[3], v[4]), (7, 8));
        assert_eq!(&v[24..27], &[100, 101, 102], "the other writer's updates are kept");
        assert_eq!(s.done.load(Ordering::SeqCst), 3);
        // A partial write whose merge is all fill value over an existing shard is stored, not deleted.
        let (s, a) = setup(0);
        a.write_region(&[1, 1], &[1, 1], &5i32.to_le_bytes()).unwrap();
        a.write_region(&[1, 1], &[1, 1], &0i32.to_le_bytes()).unwrap();
        assert!(s.exists("c/0/0").unwrap());
        assert!(read_all(&s).iter().all(|&x| x == 0));
    }

    #[test]
    fn without_conditional_puts_the_write_is_a_plain_put() {
        let (s, a) = setup(0);
        s.unsupported.store(true, Ordering::SeqCst);
        a.write_region(&[2, 5], &[1, 1], &6i32.to_le_bytes()).unwrap();
        assert_eq!(read_all(&s)[2 * 8 + 5], 6);
    }

    #[test]
    fn a_writer_that_keeps_losing_fails_with_nothing_of_its_own_stored() {
        let (s, a) = setup(1000);
        match a.write_region(&[0, 0], &[1, 1], &9i32.to_le_bytes()) {
            Err(Error::Io(m)) => assert!(m.contains("concurrent writer") && m.contains("s3://b/a/c/0/0"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(s.done.load(Ordering::SeqCst), super::MAX_ATTEMPTS);
        let v = read_all(&s);
        assert_eq!(v[0], 0);
        assert!(v[24..32].iter().all(|&x| x >= 100), "{v:?}");
    }
}
