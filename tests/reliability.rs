//! Reliability of writes: failing storage (an injected store that runs out of space, and a real full
//! tmpfs), concurrent writers through separate handles of one memory store, metadata updates that keep
//! each other's changes, handles with a stale shape, and the filesystem store's lock and temporary
//! files. The multi-process and crash tests are C programs (`c_tests/test_concurrency.c`,
//! `c_tests/test_crash.c`).

mod common;

use common::{bytes_codec, sharding_codec, v3_array};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use zarr::store::filesystem::FilesystemStore;
use zarr::store::memory::MemoryStore;
use zarr::store::{ByteSource, DirListing, LockRange, Store, StoreLock};
use zarr::{Array, Error, Result};

/// A memory store whose writes fail (nothing stored, `Error::Io` "no space left") once `budget` bytes
/// have been written.
#[derive(Debug)]
struct FullDisk {
    inner: MemoryStore,
    budget: AtomicI64,
}

impl FullDisk {
    fn new() -> FullDisk {
        FullDisk { inner: MemoryStore::new(), budget: AtomicI64::new(i64::MAX) }
    }
    fn spend(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        let n: usize = parts.iter().map(|p| p.len()).sum();
        if self.budget.fetch_sub(n as i64, Ordering::SeqCst) < n as i64 {
            self.budget.store(-1, Ordering::SeqCst);
            return Err(Error::Io(format!("{key}: No space left on device (os error 28)")));
        }
        Ok(())
    }
}

impl Store for FullDisk {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.inner.get(key)
    }
    fn open(&self, key: &str) -> Result<Option<Box<dyn ByteSource + '_>>> {
        self.inner.open(key)
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.set_parts(key, &[value])
    }
    fn set_parts(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        self.spend(key, parts)?;
        self.inner.set_parts(key, parts)
    }
    fn delete(&self, key: &str) -> Result<()> {
        self.inner.delete(key)
    }
    fn lock(&self, prefix: &str, ranges: &[LockRange]) -> Result<StoreLock> {
        self.inner.lock(prefix, ranges)
    }
    fn set_parts_locked(&self, key: &str, parts: &[&[u8]], lock: &StoreLock) -> Result<()> {
        self.spend(key, parts)?;
        self.inner.set_parts_locked(key, parts, lock)
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
}

fn read_all(a: &Array) -> Vec<u8> {
    let shape = a.shape().to_vec();
    let n: u64 = shape.iter().product();
    let mut out = vec![0u8; n as usize];
    a.read_region(&vec![0; shape.len()], &shape, &mut out).unwrap();
    out
}

/// Every `cs x cs` chunk of the 16x16 `got` is all `old` or all `new`; returns how many are `new`.
fn chunks_old_or_new(got: &[u8], cs: usize, old: u8, new: u8) -> usize {
    let mut fresh = 0;
    for ci in 0..16 / cs {
        for cj in 0..16 / cs {
            let cells: Vec<u8> = (0..cs * cs).map(|k| got[(ci * cs + k / cs) * 16 + cj * cs + k % cs]).collect();
            if cells.iter().all(|&v| v == new) {
                fresh += 1;
            } else {
                assert!(cells.iter().all(|&v| v == old), "chunk ({ci},{cj}) is torn: {cells:?}");
            }
        }
    }
    fresh
}

#[test]
fn full_disk_fails_with_io_and_keeps_what_was_not_written() {
    let disk = Arc::new(FullDisk::new());
    let store: Arc<dyn Store> = disk.clone();
    let doc = v3_array(&[16, 16], &[4, 4], "uint8", json!(0), json!([bytes_codec("little")]));
    let a = Array::create(store.clone(), "a", &doc).unwrap();
    a.write_region(&[0, 0], &[16, 16], &[1u8; 256]).unwrap();
    // Room for 5 of the 16 chunks (16 bytes each).
    disk.budget.store(5 * 16 + 8, Ordering::SeqCst);
    let e = a.write_region(&[0, 0], &[16, 16], &[2u8; 256]).unwrap_err();
    assert!(matches!(e, Error::Io(_)), "{e:?}");
    assert_eq!(e.status(), zarr::status::ZARR_ERR_IO);
    let got = read_all(&Array::open(store.clone(), "a", false).unwrap());
    let fresh = chunks_old_or_new(&got, 4, 1, 2);
    assert!(fresh <= 5, "{fresh} chunks stored beyond the space available");

    // A partial write into a shard: the shard stays as it was.
    disk.budget.store(i64::MAX, Ordering::SeqCst);
    let doc = v3_array(&[16, 16], &[8, 8], "uint8", json!(0), json!([sharding_codec(&[4, 4], json!([bytes_codec("little")]), "end")]));
    let s = Array::create(store.clone(), "s", &doc).unwrap();
    s.write_region(&[0, 0], &[16, 16], &[3u8; 256]).unwrap();
    let before = disk.inner.get("s/c/0/0").unwrap().unwrap();
    disk.budget.store(0, Ordering::SeqCst);
    assert!(matches!(s.write_region(&[1, 1], &[2, 2], &[4u8; 4]), Err(Error::Io(_))));
    assert_eq!(disk.inner.get("s/c/0/0").unwrap().unwrap(), before);
    assert_eq!(read_all(&s), vec![3u8; 256]);

    // Metadata updates: the stored document is unchanged, and so is the handle.
    let zarr_json = disk.inner.get("s/zarr.json").unwrap().unwrap();
    let mut attrs = Map::new();
    attrs.insert("x".into(), json!(1));
    assert!(matches!(s.set_attributes(attrs), Err(Error::Io(_))));
    let mut s = s;
    assert!(matches!(s.resize(&[24, 24]), Err(Error::Io(_))));
    assert_eq!(disk.inner.get("s/zarr.json").unwrap().unwrap(), zarr_json);
    assert_eq!(s.shape(), &[16, 16]);
    assert!(s.attributes().is_empty());
    disk.budget.store(i64::MAX, Ordering::SeqCst);
    s.write_region(&[0, 0], &[1, 1], &[9u8]).unwrap();
}

/// Writes of more than one batch of parts (16 384 chunks): a stepped write whose last chunk is corrupt
/// stores nothing (every chunk covered in part is decoded before any is stored), and two threads
/// writing the even and the odd elements of the same 20 000 chunks lose nothing of each other (each
/// call holds the locks of all its chunks until it ends).
#[test]
fn writes_of_many_chunks_check_everything_first_and_lose_nothing() {
    let n = 20_000u64;
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let doc = v3_array(&[2 * n], &[2], "uint8", json!(0), json!([bytes_codec("little")]));
    let a = Array::create(store.clone(), "a", &doc).unwrap();
    a.write_region(&[0], &[2 * n], &vec![1u8; 2 * n as usize]).unwrap();
    let last = format!("a/c/{}", n - 1);
    store.set(&last, &[1, 1, 1]).unwrap();
    let u8_type = zarr::dtype::DataType::UInt8;
    let e = a.write_hyperslab(&[0], &[n], Some(&[2]), None, &u8_type, &vec![2u8; n as usize]).unwrap_err();
    assert!(matches!(e, Error::Codec(_)) && e.to_string().contains(&last), "{e}");
    store.set(&last, &[1, 1]).unwrap();
    assert_eq!(read_all(&a), vec![1u8; 2 * n as usize], "nothing stored");
    for round in 0..3u8 {
        std::thread::scope(|s| {
            for parity in 0..2u8 {
                let store = store.clone();
                s.spawn(move || {
                    let h = Array::open(store, "a", true).unwrap();
                    let data = vec![10 * round + parity + 2; n as usize];
                    h.write_hyperslab(&[parity as u64], &[n], Some(&[2]), None, &zarr::dtype::DataType::UInt8, &data).unwrap();
                });
            }
        });
        let got = read_all(&a);
        assert!(got.chunks(2).all(|c| c == [10 * round + 2, 10 * round + 3]), "round {round}: an update was lost");
    }
}

/// A tmpfs of 256 KiB filled up by a write: the write fails with `Error::Io`, every chunk holds its old
/// or its new value, the array still opens, and after space is freed writes work again. Needs
/// `mount -t tmpfs` (root); it is skipped where mounting is impossible, except under `CI=true`, where
/// it must run.
#[test]
fn real_full_filesystem() {
    let dir = std::env::temp_dir().join(format!("zarr-tmpfs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&dir)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !mounted {
        let _ = std::fs::remove_dir(&dir);
        assert!(std::env::var("CI").as_deref() != Ok("true"), "under CI=true the tmpfs test must run, but mount failed");
        eprintln!("real_full_filesystem: cannot mount a tmpfs here (not root?): not run");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
            let _ = std::fs::remove_dir(&self.0);
        }
    }
    let _guard = Unmount(dir.clone());
    full_filesystem_checks(&dir);
}

fn full_filesystem_checks(dir: &Path) {
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir));
    // 16 chunks of 16 KiB (uint8, 128x128 each): 256 KiB of chunks cannot all fit.
    let doc = v3_array(&[512, 512], &[128, 128], "uint8", json!(0), json!([bytes_codec("little")]));
    let a = Array::create(store.clone(), "a", &doc).unwrap();
    let ones = vec![1u8; 512 * 128];
    // Rows of chunks until the disk is full.
    let mut rows_written = 0;
    for r in 0..4u64 {
        match a.write_region(&[r * 128, 0], &[128, 512], &ones) {
            Ok(()) => rows_written += 1,
            Err(e) => {
                assert!(matches!(e, Error::Io(_)), "{e:?}");
                break;
            }
        }
    }
    assert!(rows_written < 4, "the 256 KiB tmpfs took 256 KiB of chunks plus metadata");
    let b = Array::open(store.clone(), "a", false).unwrap();
    let mut got = vec![0u8; 512 * 512];
    b.read_region(&[0, 0], &[512, 512], &mut got).unwrap();
    for (i, chunk) in got.chunks(128).enumerate() {
        // Every 128-element run lies within one chunk: all old (0) or all new (1).
        assert!(chunk.iter().all(|&v| v == chunk[0]), "run {i} is torn");
        if (i / 4) / 128 < rows_written {
            assert_eq!(chunk[0], 1, "a completed write was lost");
        }
    }
    // A metadata update on the full disk fails cleanly or succeeds; the array opens either way.
    let mut attrs = Map::new();
    attrs.insert("big".into(), Value::String("x".repeat(300_000)));
    assert!(matches!(a.set_attributes(attrs), Err(Error::Io(_))));
    let b = Array::open(store.clone(), "a", true).unwrap();
    assert!(b.attributes().is_empty());
    // No temporary file survives a failed write.
    let mut temps = 0;
    visit(dir, &mut |name| temps += (zarr::store::filesystem::is_internal_name(name) && name != ".zarr.lock") as usize);
    assert_eq!(temps, 0);
    // Space freed: writing works again.
    a.write_region(&[0, 0], &[512, 512], &vec![0u8; 512 * 512]).unwrap();
    a.write_region(&[0, 0], &[1, 1], &[7]).unwrap();
    b.read_region(&[0, 0], &[1, 1], &mut got[..1]).unwrap();
    assert_eq!(got[0], 7);
}

fn visit(dir: &Path, f: &mut dyn FnMut(&str)) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            visit(&e.path(), f);
        } else {
            f(e.file_name().to_str().unwrap());
        }
    }
}

#[test]
fn threads_with_separate_handles_on_a_memory_store_lose_nothing() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let doc = v3_array(&[16, 16], &[8, 8], "uint16", json!(0), json!([sharding_codec(&[4, 4], json!([bytes_codec("little")]), "end")]));
    Array::create(store.clone(), "s", &doc).unwrap();
    // Thread t owns the cells (i, j) with i % 8 == t and writes each of its cells in turn, one write
    // per call: every call is a read-modify-write of a shared shard.
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                let a = Array::open(store, "s", true).unwrap();
                for i in (t..16).step_by(8) {
                    for j in 0..16 {
                        let v = (i * 16 + j + 1) as u16;
                        a.write_region(&[i, j], &[1, 1], &v.to_ne_bytes()).unwrap();
                    }
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let a = Array::open(store, "s", false).unwrap();
    let mut got = vec![0u8; 512];
    a.read_region(&[0, 0], &[16, 16], &mut got).unwrap();
    let got: Vec<u16> = got.chunks(2).map(|b| u16::from_ne_bytes([b[0], b[1]])).collect();
    assert_eq!(got, (1..=256).collect::<Vec<u16>>());
}

#[test]
fn metadata_updates_keep_each_other_and_stale_handles_fail_cleanly() {
    let root = std::env::temp_dir().join(format!("zarr-reliability-meta-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(&root));
    let doc = v3_array(&[8], &[4], "uint8", json!(0), json!([bytes_codec("little")]));
    let mut a = Array::create(store.clone(), "a", &doc).unwrap();
    // b is opened before a resizes; its attribute update keeps a's shape, and a's next resize keeps
    // b's attributes.
    let b = Array::open(store.clone(), "a", true).unwrap();
    a.resize(&[12]).unwrap();
    let mut attrs = Map::new();
    attrs.insert("from".into(), json!("b"));
    b.set_attributes(attrs.clone()).unwrap();
    let fresh = Array::open(store.clone(), "a", false).unwrap();
    assert_eq!(fresh.shape(), &[12]);
    assert_eq!(fresh.attributes(), attrs);
    a.resize(&[16]).unwrap();
    assert_eq!(a.attributes(), attrs, "the resizing handle picks up the stored attributes");
    let fresh = Array::open(store.clone(), "a", false).unwrap();
    assert_eq!((fresh.shape(), fresh.attributes()), (&[16u64][..], attrs.clone()));
    // b's cached shape (8) is stale: its writes fail with Error::Metadata and store nothing.
    let e = b.write_region(&[0], &[4], &[5; 4]).unwrap_err();
    assert!(matches!(e, Error::Metadata(_)) && e.to_string().contains("reopen"), "{e}");
    assert!(matches!(b.write_whole_chunk(&[0], &[5; 4]), Err(Error::Metadata(_))));
    assert!(!fresh.chunk_is_stored(&[0]).unwrap());
    // A group's attribute update keeps a child array's metadata and its own document.
    let g = zarr::group::Group::create(store.clone(), "g", Map::new(), 3).unwrap();
    let g2 = zarr::group::Group::open(store.clone(), "g", true).unwrap();
    g.set_attributes(attrs.clone()).unwrap();
    let mut other = Map::new();
    other.insert("n".into(), json!(2));
    g2.set_attributes(other.clone()).unwrap();
    assert_eq!(zarr::group::Group::open(store.clone(), "g", false).unwrap().attributes(), other);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn lock_and_temporary_files_are_not_data() {
    let root = std::env::temp_dir().join(format!("zarr-reliability-tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let fs_store = Arc::new(FilesystemStore::new(&root));
    let store: Arc<dyn Store> = fs_store.clone();
    let doc = v3_array(&[8], &[4], "uint8", json!(0), json!([bytes_codec("little")]));
    let a = Array::create(store.clone(), "a", &doc).unwrap();
    a.write_region(&[0], &[8], &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    assert!(root.join("a/.zarr.lock").is_file(), "one lock file in the array's directory");
    // What a killed writer leaves: garbage under the fixed temporary name of chunk 0.
    std::fs::write(root.join("a/c/.0.zarrtmp"), b"torn").unwrap();
    std::fs::write(root.join("a/c/.1.123.4.tmp"), b"torn").unwrap();
    let mut got = [0u8; 8];
    a.read_region(&[0], &[8], &mut got).unwrap();
    assert_eq!(got, [1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(store.list_dir("a/c/").unwrap().keys, ["0", "1"]);
    assert_eq!(store.list_dir("a/").unwrap().keys, ["zarr.json"]);
    // The next writer of chunk 0 replaces the leftover; an erase removes it too.
    a.write_region(&[0], &[1], &[9]).unwrap();
    assert!(!root.join("a/c/.0.zarrtmp").exists());
    std::fs::write(root.join("a/c/.0.zarrtmp"), b"torn").unwrap();
    a.erase_chunk(&[0]).unwrap();
    assert!(!root.join("a/c/.0.zarrtmp").exists());
    // The group root and the array directory are two stores of one lock file.
    let direct: Arc<dyn Store> = Arc::new(FilesystemStore::new(root.join("a")));
    let held = store.lock("a/", &[LockRange { start: 1, len: 1, exclusive: true }]).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let t = std::thread::spawn(move || {
        let _g = direct.lock("", &[LockRange { start: 1, len: 1, exclusive: true }]).unwrap();
        tx.send(()).unwrap();
    });
    assert!(rx.recv_timeout(std::time::Duration::from_millis(200)).is_err(), "the second store's lock waited");
    drop(held);
    rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
    t.join().unwrap();
    std::fs::remove_dir_all(&root).unwrap();
}

/// A group's directory holds only its metadata after libzarr updated its attributes and consolidated
/// it (readers list every entry there as a would-be child): the group's lock is its metadata document.
/// Arrays keep their lock file, in their own directory, which readers do not list.
#[test]
fn group_directories_hold_no_lock_file() {
    for fmt in [3u8, 2] {
        let root = std::env::temp_dir().join(format!("zarr-reliability-grouplock{fmt}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(&root));
        let g = zarr::Group::create(store.clone(), "", Map::new(), fmt).unwrap();
        let sub = g.create_group("sub", Map::new()).unwrap();
        let doc = if fmt == 3 {
            v3_array(&[8], &[4], "uint8", json!(0), json!([bytes_codec("little")]))
        } else {
            json!({"zarr_format": 2, "shape": [8], "chunks": [4], "dtype": "|u1", "compressor": null,
                   "fill_value": 0, "order": "C", "filters": null})
            .to_string()
        };
        let mut a = sub.create_array("a", &doc).unwrap();
        a.write_region(&[0], &[8], &[1; 8]).unwrap();
        a.resize(&[12]).unwrap();
        let mut attrs = Map::new();
        for i in 0..3 {
            attrs.insert("i".into(), json!(i));
            g.set_attributes(attrs.clone()).unwrap();
            sub.set_attributes(attrs.clone()).unwrap();
            a.set_attributes(attrs.clone()).unwrap();
        }
        g.consolidate().unwrap();
        let names = |p: &Path| {
            let mut v: Vec<String> = std::fs::read_dir(p).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
            v.sort();
            v
        };
        let (meta, zmeta): (Vec<&str>, Vec<&str>) =
            if fmt == 3 { (vec!["zarr.json"], vec!["zarr.json"]) } else { (vec![".zattrs", ".zgroup"], vec![".zattrs", ".zgroup", ".zmetadata"]) };
        let with = |base: &[&str], child: &str| {
            let mut v: Vec<String> = base.iter().map(|s| s.to_string()).chain([child.to_string()]).collect();
            v.sort();
            v
        };
        assert_eq!(names(&root), with(&zmeta, "sub"), "v{fmt} root");
        assert_eq!(names(&root.join("sub")), with(&meta, "a"), "v{fmt} sub");
        assert!(root.join("sub/a/.zarr.lock").is_file(), "v{fmt}: the array keeps its lock file");
        assert_eq!(zarr::Group::open(store.clone(), "sub", false).unwrap().attributes(), attrs);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
