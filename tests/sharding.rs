//! sharding_indexed: round trips, partial shard writes, empty inner chunks, hostile shards, and the
//! proof that small reads fetch only the index and the inner chunks they touch.

mod common;

use common::{bytes_codec, sharding_codec, v3_array};
use serde_json::{json, Value};
use std::sync::Arc;
use zarr::store::memory::MemoryStore;
use zarr::store::Store;
use zarr::{Array, Error};

fn meta(shape: &[u64], shard: &[u64], inner: &[u64], dtype: &str, fill: Value, inner_codecs: Value, location: &str) -> String {
    v3_array(shape, shard, dtype, fill, json!([sharding_codec(inner, inner_codecs, location)]))
}

fn gzip_codecs() -> Value {
    json!([bytes_codec("little"), {"name": "gzip", "configuration": {"level": 1}}])
}

fn bytes_codecs() -> Value {
    json!([bytes_codec("little")])
}

fn values_u16(n: usize, seed: u32) -> Vec<u8> {
    (0..n as u32).flat_map(|i| ((i.wrapping_mul(2654435761).wrapping_add(seed) >> 7) as u16 | 1).to_ne_bytes()).collect()
}

/// Parses a shard's index (bytes little + crc32c at the end or start) independently of the library.
fn parse_index(shard: &[u8], n: usize, at_start: bool) -> Vec<(u64, u64)> {
    let len = n * 16 + 4;
    let idx = if at_start { &shard[..len] } else { &shard[shard.len() - len..] };
    let payload = &idx[..n * 16];
    assert_eq!(u32::from_le_bytes(idx[n * 16..].try_into().unwrap()), crc32c::crc32c(payload));
    payload.chunks(16).map(|c| (u64::from_le_bytes(c[..8].try_into().unwrap()), u64::from_le_bytes(c[8..].try_into().unwrap()))).collect()
}

#[test]
fn round_trip_regions_and_edges() {
    for location in ["end", "start"] {
        let store = Arc::new(MemoryStore::new());
        let a = Array::create(store.clone(), "", &meta(&[30, 22], &[16, 12], &[4, 6], "uint16", json!(7), gzip_codecs(), location)).unwrap();
        let data = values_u16(30 * 22, 1);
        a.write_region(&[0, 0], &[30, 22], &data).unwrap();
        let mut out = vec![0u8; data.len()];
        a.read_region(&[0, 0], &[30, 22], &mut out).unwrap();
        assert_eq!(out, data);
        for (s, c) in [([3u64, 5u64], [9u64, 13u64]), ([15, 11], [2, 2]), ([29, 21], [1, 1]), ([0, 0], [16, 12])] {
            let mut part = vec![0u8; (c[0] * c[1]) as usize * 2];
            a.read_region(&s, &c, &mut part).unwrap();
            for i in 0..c[0] as usize {
                for j in 0..c[1] as usize {
                    let src = ((s[0] as usize + i) * 22 + s[1] as usize + j) * 2;
                    let dst = (i * c[1] as usize + j) * 2;
                    assert_eq!(part[dst..dst + 2], data[src..src + 2]);
                }
            }
        }
        // Edge shard (1,1): rows 16..32 of 30, cols 12..24 of 22. Inner chunk grid 4x2 (4x6 chunks):
        // every inner chunk still holds array elements, so all are stored.
        let shard = store.get("c/1/1").unwrap().unwrap();
        let entries = parse_index(&shard, 4 * 2, location == "start");
        assert!(entries.iter().all(|e| e.0 != u64::MAX));
    }
}

#[test]
fn fill_inner_chunks_not_stored_and_empty_shard_deleted() {
    let store = Arc::new(MemoryStore::new());
    let a = Array::create(store.clone(), "", &meta(&[16, 16], &[8, 8], &[4, 4], "int32", json!(-1), gzip_codecs(), "end")).unwrap();
    // one element in shard (0,0), inner chunk (1,0)
    a.write_region(&[5, 2], &[1, 1], &42i32.to_ne_bytes()).unwrap();
    let shard = store.get("c/0/0").unwrap().unwrap();
    let e = parse_index(&shard, 4, false);
    assert_eq!(e.iter().filter(|x| x.0 != u64::MAX).count(), 1, "only the written inner chunk is stored");
    assert_ne!(e[2].0, u64::MAX);
    assert_eq!(e[0], (u64::MAX, u64::MAX));
    assert_eq!(store.keys(), vec!["c/0/0".to_string(), "zarr.json".to_string()]);
    let mut v = [0u8; 4];
    a.read_region(&[5, 3], &[1, 1], &mut v).unwrap();
    assert_eq!(i32::from_ne_bytes(v), -1);
    a.read_region(&[5, 2], &[1, 1], &mut v).unwrap();
    assert_eq!(i32::from_ne_bytes(v), 42);
    // writing the fill value back leaves the shard without inner chunks: it is deleted
    a.write_region(&[5, 2], &[1, 1], &(-1i32).to_ne_bytes()).unwrap();
    assert!(store.get("c/0/0").unwrap().is_none());
}

#[test]
fn partial_shard_write_keeps_other_inner_chunks() {
    let store = Arc::new(MemoryStore::new());
    let a = Array::create(store.clone(), "", &meta(&[8, 8], &[8, 8], &[4, 4], "uint16", json!(0), gzip_codecs(), "end")).unwrap();
    let data = values_u16(64, 9);
    a.write_region(&[0, 0], &[8, 8], &data).unwrap();
    let patch: Vec<u8> = (0..4u16).flat_map(|v| (1000 + v).to_ne_bytes()).collect();
    a.write_region(&[1, 5], &[2, 2], &patch).unwrap();
    let mut out = vec![0u8; 128];
    a.read_region(&[0, 0], &[8, 8], &mut out).unwrap();
    let mut want = data.clone();
    for (k, (i, j)) in [(1, 5), (1, 6), (2, 5), (2, 6)].iter().enumerate() {
        want[(i * 8 + j) * 2..(i * 8 + j) * 2 + 2].copy_from_slice(&(1000 + k as u16).to_ne_bytes());
    }
    assert_eq!(out, want);
}

#[test]
fn nested_sharding_and_inner_transpose() {
    let inner = json!([
        {"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 3],
            "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes", "configuration": {"endian": "big"}}, {"name": "zstd", "configuration": {"level": 1, "checksum": true}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
            "index_location": "start"}}
    ]);
    let store = Arc::new(MemoryStore::new());
    let a = Array::create(store, "", &meta(&[13, 17], &[8, 12], &[4, 6], "float32", json!("NaN"), inner, "end")).unwrap();
    let data: Vec<u8> = (0..13 * 17).flat_map(|i| (i as f32 * 0.5 - 3.0).to_ne_bytes()).collect();
    a.write_region(&[0, 0], &[13, 17], &data).unwrap();
    let mut out = vec![0u8; data.len()];
    a.read_region(&[0, 0], &[13, 17], &mut out).unwrap();
    assert_eq!(out, data);
    let mut part = vec![0u8; 3 * 5 * 4];
    a.read_region(&[6, 10], &[3, 5], &mut part).unwrap();
    for i in 0..3 {
        for j in 0..5 {
            let v = ((6 + i) * 17 + 10 + j) as f32 * 0.5 - 3.0;
            assert_eq!(part[(i * 5 + j) * 4..(i * 5 + j) * 4 + 4], v.to_ne_bytes());
        }
    }
}

#[test]
fn small_reads_fetch_only_index_and_touched_inner_chunks() {
    for (codecs, bare) in [(gzip_codecs(), false), (bytes_codecs(), true)] {
        let store = Arc::new(MemoryStore::new());
        let a = Array::create(store.clone(), "", &meta(&[64, 64], &[64, 64], &[8, 8], "uint16", json!(0), codecs, "end")).unwrap();
        let data = values_u16(64 * 64, 3);
        a.write_region(&[0, 0], &[64, 64], &data).unwrap();
        let shard = store.get("c/0/0").unwrap().unwrap();
        let entries = parse_index(&shard, 64, false);
        let index_size = 64 * 16 + 4;
        // A 2x2 box inside inner chunk (1,1) (rows 8..16, cols 8..16).
        let before = store.bytes_read();
        let mut out = vec![0u8; 8];
        a.read_region(&[10, 10], &[2, 2], &mut out).unwrap();
        let delivered = store.bytes_read() - before;
        let inner_bytes = if bare {
            // elements (2,2)..=(3,3) of an 8x8 u16 inner chunk: the span from element 18 to 27
            ((3 * 8 + 3) - (2 * 8 + 2) + 1) * 2
        } else {
            entries[9].1
        };
        assert_eq!(delivered, index_size + inner_bytes, "bare={bare}");
        assert!(delivered * 4 < shard.len() as u64);
        // A 4x4 box at (14,6) touches inner chunks (1,0), (1,1), (2,0), (2,1).
        let before = store.bytes_read();
        let mut out = vec![0u8; 4 * 4 * 2];
        a.read_region(&[14, 6], &[4, 4], &mut out).unwrap();
        let delivered = store.bytes_read() - before;
        if !bare {
            let want: u64 = [8, 9, 16, 17].iter().map(|&k| entries[k].1).sum();
            assert_eq!(delivered, index_size + want);
        }
        for i in 0..4 {
            for j in 0..4 {
                let s = ((14 + i) * 64 + 6 + j) * 2;
                assert_eq!(out[(i * 4 + j) * 2..(i * 4 + j) * 2 + 2], data[s..s + 2]);
            }
        }
    }
}

fn hostile(mutate: impl Fn(&mut Vec<u8>)) -> Error {
    let store = Arc::new(MemoryStore::new());
    let a = Array::create(store.clone(), "", &meta(&[8], &[8], &[2], "int16", json!(0), gzip_codecs(), "end")).unwrap();
    let data: Vec<u8> = (1..=8i16).flat_map(|v| v.to_ne_bytes()).collect();
    a.write_region(&[0], &[8], &data).unwrap();
    let mut shard = store.get("c/0").unwrap().unwrap();
    mutate(&mut shard);
    store.set("c/0", &shard).unwrap();
    let mut out = vec![0u8; 16];
    a.read_region(&[0], &[8], &mut out).unwrap_err()
}

fn set_entry(shard: &mut [u8], i: usize, offset: u64, nbytes: u64) {
    let n = 4;
    let start = shard.len() - (n * 16 + 4);
    shard[start + i * 16..start + i * 16 + 8].copy_from_slice(&offset.to_le_bytes());
    shard[start + i * 16 + 8..start + i * 16 + 16].copy_from_slice(&nbytes.to_le_bytes());
    let crc = crc32c::crc32c(&shard[start..start + n * 16]);
    let l = shard.len();
    shard[l - 4..].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn hostile_shards_fail_cleanly() {
    assert!(matches!(hostile(|s| set_entry(s, 1, 1 << 40, 10)), Error::Codec(_)), "entry beyond the end");
    assert!(matches!(hostile(|s| set_entry(s, 1, 5, u64::MAX - 2)), Error::Codec(_)), "absurd size");
    assert!(matches!(hostile(|s| set_entry(s, 1, 0, 30)), Error::Codec(_)), "overlapping entries");
    assert!(matches!(hostile(|s| s.truncate(20)), Error::Codec(_)), "shorter than its index");
    assert!(matches!(hostile(|s| { let l = s.len(); s[l - 10] ^= 0xff; }), Error::Checksum(_)), "index checksum");
    assert!(matches!(hostile(|s| set_entry(s, 0, u64::MAX, 3)), Error::Codec(_)), "half-empty entry");
    assert!(matches!(hostile(|s| s[3] ^= 0xff), Error::Codec(_)), "garbage inner chunk");
}

#[test]
fn invalid_configurations() {
    let bad = |cfg: Value| {
        let m = json!({
            "zarr_format": 3, "node_type": "array", "shape": [8, 8], "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 8]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "sharding_indexed", "configuration": cfg}]
        });
        Array::create(Arc::new(MemoryStore::new()), "", &m.to_string()).unwrap_err()
    };
    let idx = json!([{"name": "bytes", "configuration": {"endian": "little"}}]);
    let inner = json!([{"name": "bytes"}]);
    assert!(matches!(bad(json!({"chunk_shape": [3, 4], "codecs": inner, "index_codecs": idx})), Error::Metadata(_)));
    assert!(matches!(bad(json!({"chunk_shape": [4], "codecs": inner, "index_codecs": idx})), Error::Metadata(_)));
    assert!(matches!(bad(json!({"chunk_shape": [4, 4], "index_codecs": idx})), Error::Metadata(_)));
    assert!(matches!(bad(json!({"chunk_shape": [4, 4], "codecs": inner, "index_codecs": idx, "index_location": "middle"})), Error::Metadata(_)));
    assert!(matches!(
        bad(json!({"chunk_shape": [4, 4], "codecs": inner, "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}]})),
        Error::Metadata(_)
    ));
}

/// A write into part of a shard re-encodes only the inner chunks it touches: the others keep their
/// stored bytes. Proof: the shard is first written with gzip level 1, then the metadata is changed to
/// level 9 (decoding is the same). After a one-element write, the touched inner chunk is level-9
/// bytes and every other inner chunk is byte-for-byte its level-1 original.
#[test]
fn partial_shard_write_reencodes_only_touched_inner_chunks() {
    let store = Arc::new(MemoryStore::new());
    let level = |l: u32| json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": l}}]);
    let a = Array::create(store.clone(), "", &meta(&[16, 12], &[16, 12], &[4, 6], "uint16", json!(0), level(1), "end")).unwrap();
    let data = values_u16(16 * 12, 5);
    a.write_region(&[0, 0], &[16, 12], &data).unwrap();
    let before = store.get("c/0/0").unwrap().unwrap();
    let idx_before = parse_index(&before, 8, false);
    store.set("zarr.json", meta(&[16, 12], &[16, 12], &[4, 6], "uint16", json!(0), level(9), "end").as_bytes()).unwrap();
    let a = Array::open(store.clone(), "", true).unwrap();
    // One element of inner chunk (1, 1): rows 4..8, columns 6..12.
    a.write_region(&[5, 7], &[1, 1], &77u16.to_ne_bytes()).unwrap();
    let after = store.get("c/0/0").unwrap().unwrap();
    let idx_after = parse_index(&after, 8, false);
    let piece = |s: &[u8], (o, n): (u64, u64)| s[o as usize..(o + n) as usize].to_vec();
    for k in 0..8 {
        let (b, n) = (piece(&before, idx_before[k]), piece(&after, idx_after[k]));
        if k == 3 {
            assert_ne!(b, n, "the touched inner chunk is re-encoded (level 9)");
        } else {
            assert_eq!(b, n, "inner chunk {k} keeps its stored bytes");
        }
    }
    let mut want = data.clone();
    want[(5 * 12 + 7) * 2..(5 * 12 + 7) * 2 + 2].copy_from_slice(&77u16.to_ne_bytes());
    let mut out = vec![0u8; want.len()];
    a.read_region(&[0, 0], &[16, 12], &mut out).unwrap();
    assert_eq!(out, want);
    // Writing the fill value over a whole inner chunk removes it from the index; the others stay.
    a.write_region(&[0, 0], &[4, 6], &[0u8; 4 * 6 * 2]).unwrap();
    let idx = parse_index(&store.get("c/0/0").unwrap().unwrap(), 8, false);
    assert_eq!(idx[0], (u64::MAX, u64::MAX));
    assert!(idx[1..].iter().all(|e| e.0 != u64::MAX));
}

/// 32x32 uint16 values in 8x8 shards of 4x4 gzip inner chunks (16 shards): inner chunk (0,0) of shard
/// (0,0) and the whole of shard (1,1) hold the fill value 0 (so they are not stored), the rest
/// non-zero values.
fn many_shards_data() -> Vec<u8> {
    let mut data = values_u16(32 * 32, 11);
    for r in 0..32 {
        for c in 0..32 {
            if (r < 4 && c < 4) || ((8..16).contains(&r) && (8..16).contains(&c)) {
                data[(r * 32 + c) * 2..(r * 32 + c) * 2 + 2].fill(0);
            }
        }
    }
    data
}

fn many_shards(store: Arc<dyn Store>) -> Array {
    let a = Array::create(store, "", &meta(&[32, 32], &[8, 8], &[4, 4], "uint16", json!(0), gzip_codecs(), "end")).unwrap();
    a.write_region(&[0, 0], &[32, 32], &many_shards_data()).unwrap();
    a
}

/// Reads that touch every inner chunk of a shard read the whole shard at once: whole-array reads,
/// a read of one shard that is not contiguous in the buffer, and a strided read, each compared with
/// the values written, on a memory store (bytes counted: each shard read exactly once) and on files.
#[test]
fn reads_touching_every_inner_chunk_read_each_shard_once() {
    let data = many_shards_data();
    let at = |r: usize, c: usize| &data[(r * 32 + c) * 2..(r * 32 + c) * 2 + 2];
    let mem = Arc::new(MemoryStore::new());
    let dir = std::env::temp_dir().join(format!("zarr-sharding-whole-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let files: Arc<dyn Store> = Arc::new(zarr::store::filesystem::FilesystemStore::new(&dir));
    for (k, store) in [mem.clone() as Arc<dyn Store>, files].into_iter().enumerate() {
        let a = many_shards(store.clone());
        assert!(store.get("c/1/1").unwrap().is_none(), "a shard of fill values is not stored");
        let shard00 = store.get("c/0/0").unwrap().unwrap();
        assert_eq!(parse_index(&shard00, 4, false)[0], (u64::MAX, u64::MAX), "an inner chunk of fill values is not stored");
        let stored: u64 = (0..16).filter_map(|i| store.get(&format!("c/{}/{}", i / 4, i % 4)).unwrap()).map(|s| s.len() as u64).sum();

        let before = mem.bytes_read();
        let mut out = vec![0xA5u8; 32 * 32 * 2];
        a.read_region(&[0, 0], &[32, 32], &mut out).unwrap();
        assert_eq!(out, data);
        if k == 0 {
            assert_eq!(mem.bytes_read() - before, stored, "every stored shard read once, whole");
        }

        // Shard (0,1) alone, 8 rows x 7 columns (not contiguous in the buffer; every inner chunk touched).
        let mut out = vec![0xA5u8; 8 * 7 * 2];
        a.read_region(&[0, 8], &[8, 7], &mut out).unwrap();
        for r in 0..8 {
            for c in 0..7 {
                assert_eq!(&out[(r * 7 + c) * 2..(r * 7 + c) * 2 + 2], at(r, 8 + c), "({r}, {c})");
            }
        }

        // Every other element from (1, 1): every inner chunk of every shard touched.
        let mut out = vec![0xA5u8; 16 * 16 * 2];
        let u16t = zarr::dtype::DataType::UInt16;
        a.read_hyperslab(&[1, 1], &[16, 16], Some(&[2, 2]), None, &u16t, &mut out).unwrap();
        for r in 0..16 {
            for c in 0..16 {
                assert_eq!(&out[(r * 16 + c) * 2..(r * 16 + c) * 2 + 2], at(1 + 2 * r, 1 + 2 * c), "({r}, {c})");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The whole-shard read keeps the specific errors of damaged shards.
#[test]
fn whole_shard_reads_of_damaged_shards_fail_cleanly() {
    let damaged = |mutate: &dyn Fn(&mut Vec<u8>)| {
        let store = Arc::new(MemoryStore::new());
        let a = many_shards(store.clone());
        let mut shard = store.get("c/0/1").unwrap().unwrap();
        mutate(&mut shard);
        store.set("c/0/1", &shard).unwrap();
        let mut out = vec![0u8; 32 * 32 * 2];
        a.read_region(&[0, 0], &[32, 32], &mut out).unwrap_err()
    };
    let n = 4;
    let entry = |s: &mut Vec<u8>, i: usize, offset: u64, nbytes: u64| {
        let start = s.len() - (n * 16 + 4);
        s[start + i * 16..start + i * 16 + 8].copy_from_slice(&offset.to_le_bytes());
        s[start + i * 16 + 8..start + i * 16 + 16].copy_from_slice(&nbytes.to_le_bytes());
        let crc = crc32c::crc32c(&s[start..start + n * 16]);
        let l = s.len();
        s[l - 4..].copy_from_slice(&crc.to_le_bytes());
    };
    let e = damaged(&|s| {
        let l = s.len();
        s[l - 10] ^= 0xff
    });
    assert!(matches!(e, Error::Checksum(_)), "index checksum: {e:?}");
    let e = damaged(&|s| s.truncate(20));
    assert!(matches!(&e, Error::Codec(m) if m.contains("shorter than its")), "shorter than its index: {e:?}");
    let e = damaged(&|s| {
        s.drain(..16);
    });
    assert!(matches!(&e, Error::Codec(m) if m.contains("outside the shard") || m.contains("overlaps the index")), "truncated at the head: {e:?}");
    let e = damaged(&|s| entry(s, 2, 0, 40));
    assert!(matches!(&e, Error::Codec(m) if m.contains("overlap")), "overlapping entries: {e:?}");
    let e = damaged(&|s| entry(s, 1, 1 << 40, 10));
    assert!(matches!(&e, Error::Codec(m) if m.contains("outside the shard")), "entry beyond the end: {e:?}");
    let e = damaged(&|s| s[3] ^= 0xff);
    assert!(matches!(e, Error::Codec(_)), "garbage inner chunk: {e:?}");
}

/// A store that counts, per kind, the calls that fetch chunk values (keys under `c/`): whole values
/// (`get`) and values opened for ranged reads (`open`).
#[derive(Debug)]
struct CountingStore {
    inner: MemoryStore,
    gets: std::sync::atomic::AtomicUsize,
    opens: std::sync::atomic::AtomicUsize,
}

impl Store for CountingStore {
    fn get(&self, key: &str) -> zarr::Result<Option<Vec<u8>>> {
        if key.starts_with("c/") {
            self.gets.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.inner.get(key)
    }
    fn open(&self, key: &str) -> zarr::Result<Option<Box<dyn zarr::store::ByteSource + '_>>> {
        if key.starts_with("c/") {
            self.opens.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        self.inner.open(key)
    }
    fn set(&self, key: &str, value: &[u8]) -> zarr::Result<()> {
        self.inner.set(key, value)
    }
    fn delete(&self, key: &str) -> zarr::Result<()> {
        self.inner.delete(key)
    }
    fn exists(&self, key: &str) -> zarr::Result<bool> {
        self.inner.exists(key)
    }
    fn list_dir(&self, prefix: &str) -> zarr::Result<zarr::store::DirListing> {
        self.inner.list_dir(prefix)
    }
    fn bytes_read(&self) -> u64 {
        self.inner.bytes_read()
    }
}

/// Which reads fetch whole shards: a read touching every inner chunk of each shard gets every shard
/// once, whole, and opens none for ranged reads; a box inside one inner chunk opens its shard instead.
#[test]
fn whole_shard_reads_fetch_each_shard_once_and_ranged_reads_open_it() {
    use std::sync::atomic::Ordering::Relaxed;
    let store = Arc::new(CountingStore { inner: MemoryStore::new(), gets: 0.into(), opens: 0.into() });
    many_shards(store.clone());
    let a = Array::open(store.clone(), "", false).unwrap();
    let (gets, opens) = (store.gets.load(Relaxed), store.opens.load(Relaxed));
    let mut out = vec![0u8; 32 * 32 * 2];
    a.read_region(&[0, 0], &[32, 32], &mut out).unwrap();
    assert_eq!(out, many_shards_data());
    assert_eq!(store.gets.load(Relaxed) - gets, 16, "every shard fetched whole once (one of them missing)");
    assert_eq!(store.opens.load(Relaxed), opens, "no shard opened for ranged reads");
    let mut out = vec![0u8; 2 * 2 * 2];
    a.read_region(&[5, 5], &[2, 2], &mut out).unwrap();
    assert_eq!(store.opens.load(Relaxed) - opens, 1, "a small box reads its shard's index and inner chunk by range");
    assert_eq!(store.gets.load(Relaxed) - gets, 16);
}

/// Every file below `dir`, relative, with its bytes (temporary files included).
fn files_below(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// 64 x 48 uint16 in shards of 32 x 24 (2 x 2 shards) of 8 x 8 gzip inner chunks, index at the end,
/// fill value 0: the shards written whole are streamed to a filesystem store.
fn streamed_meta() -> String {
    meta(&[64, 48], &[32, 24], &[8, 8], "uint16", json!(0), gzip_codecs(), "end")
}

#[test]
fn whole_shards_streamed_to_files_are_the_memory_stores_bytes() {
    let dir = std::env::temp_dir().join(format!("zarr-sharding-streamed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let fs_store = Arc::new(zarr::store::filesystem::FilesystemStore::new(&dir));
    let mem = Arc::new(MemoryStore::new());
    let on_disk = Array::create(fs_store.clone(), "", &streamed_meta()).unwrap();
    let in_memory = Array::create(mem.clone(), "", &streamed_meta()).unwrap();
    // Noise, with inner chunks of fill value here and there and shard (1, 1) all fill value.
    let mut data = values_u16(64 * 48, 3);
    for r in 0..64usize {
        for c in 0..48usize {
            if (r >= 32 && c >= 24) || (r / 8 + c / 8) % 4 == 1 {
                data[(r * 48 + c) * 2..][..2].copy_from_slice(&0u16.to_ne_bytes());
            }
        }
    }
    for a in [&on_disk, &in_memory] {
        a.write_region(&[0, 0], &[64, 48], &data).unwrap();
    }
    let files = files_below(&dir);
    assert_eq!(files.keys().collect::<Vec<_>>(), [".zarr.lock", "c/0/0", "c/0/1", "c/1/0", "zarr.json"], "no temporary file, no empty shard");
    for key in ["c/0/0", "c/0/1", "c/1/0"] {
        let shard = &files[key];
        assert_eq!(Some(shard), mem.get(key).unwrap().as_ref(), "{key}: the whole-shard path's bytes");
        let entries = parse_index(shard, 12, false);
        assert!(entries.iter().any(|e| e.0 == u64::MAX) && entries.iter().any(|e| e.0 != u64::MAX), "{key}: {entries:?}");
    }
    let mut out = vec![0u8; data.len()];
    on_disk.read_region(&[0, 0], &[64, 48], &mut out).unwrap();
    assert_eq!(out, data);
    // Rewritten whole: a shard now all fill value is deleted, the others replaced.
    let zeros = vec![0u8; 32 * 24 * 2];
    on_disk.write_region(&[0, 0], &[32, 24], &zeros).unwrap();
    let again = values_u16(32 * 24, 4);
    on_disk.write_region(&[32, 0], &[32, 24], &again).unwrap();
    assert_eq!(files_below(&dir).keys().collect::<Vec<_>>(), [".zarr.lock", "c/0/1", "c/1/0", "zarr.json"]);
    let mut part = vec![0u8; again.len()];
    on_disk.read_region(&[32, 0], &[32, 24], &mut part).unwrap();
    assert_eq!(part, again);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A filesystem store whose streamed values fail at their second piece (a disk filling up).
#[derive(Debug)]
struct FailingStreams(zarr::store::filesystem::FilesystemStore);

struct FailingStream<'s>(Box<dyn zarr::store::ValueStream + 's>, usize);

impl zarr::store::ValueStream for FailingStream<'_> {
    fn write(&mut self, parts: &[&[u8]]) -> zarr::Result<()> {
        self.1 += 1;
        if self.1 == 2 {
            return Err(Error::Io("No space left on device".into()));
        }
        self.0.write(parts)
    }
    fn commit(self: Box<Self>) -> zarr::Result<()> {
        self.0.commit()
    }
}

impl Store for FailingStreams {
    fn get(&self, key: &str) -> zarr::Result<Option<Vec<u8>>> {
        self.0.get(key)
    }
    fn open(&self, key: &str) -> zarr::Result<Option<Box<dyn zarr::store::ByteSource + '_>>> {
        self.0.open(key)
    }
    fn set(&self, key: &str, value: &[u8]) -> zarr::Result<()> {
        self.0.set(key, value)
    }
    fn delete(&self, key: &str) -> zarr::Result<()> {
        self.0.delete(key)
    }
    fn lock(&self, node_prefix: &str, ranges: &[zarr::store::LockRange]) -> zarr::Result<zarr::store::StoreLock> {
        self.0.lock(node_prefix, ranges)
    }
    fn stream_locked(&self, key: &str, lock: &zarr::store::StoreLock) -> zarr::Result<Option<Box<dyn zarr::store::ValueStream + '_>>> {
        Ok(self.0.stream_locked(key, lock)?.map(|s| Box::new(FailingStream(s, 0)) as Box<dyn zarr::store::ValueStream + '_>))
    }
    fn exists(&self, key: &str) -> zarr::Result<bool> {
        self.0.exists(key)
    }
    fn list_dir(&self, prefix: &str) -> zarr::Result<zarr::store::DirListing> {
        self.0.list_dir(prefix)
    }
    fn bytes_read(&self) -> u64 {
        self.0.bytes_read()
    }
}

#[test]
fn a_failed_streamed_shard_leaves_the_old_shard() {
    let dir = std::env::temp_dir().join(format!("zarr-sharding-stream-fails-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let a = Array::create(Arc::new(zarr::store::filesystem::FilesystemStore::new(&dir)), "", &streamed_meta()).unwrap();
    let old = values_u16(32 * 24, 5);
    a.write_region(&[0, 0], &[32, 24], &old).unwrap();
    let before = files_below(&dir);
    let failing = Array::open(Arc::new(FailingStreams(zarr::store::filesystem::FilesystemStore::new(&dir))), "", true).unwrap();
    let err = failing.write_region(&[0, 0], &[32, 24], &values_u16(32 * 24, 6)).unwrap_err();
    assert!(matches!(err, Error::Io(ref m) if m.contains("No space left")), "{err:?}");
    assert_eq!(files_below(&dir), before, "the old shard, and no temporary file");
    let mut out = vec![0u8; old.len()];
    a.read_region(&[0, 0], &[32, 24], &mut out).unwrap();
    assert_eq!(out, old);
    std::fs::remove_dir_all(&dir).unwrap();
}
