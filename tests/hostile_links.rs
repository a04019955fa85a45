//! Hostile stores that reach outside their root through symbolic links, and hostile zip files (issue
//! 32). Each case builds its store at run time (no links or FIFOs are committed) with a directory
//! "outside" the store whose files are checked, by name and content, to be intact afterwards.
//!
//! Policies checked here (also in docs/stores.md, "Symbolic links and confined stores"):
//! - deleting and moving never follow a symbolic link, in any mode: a link (a chunk directory, the
//!   member itself) is removed or moved as a link, and a member below a directory that is a link is
//!   refused with `Error::Io` before anything changes; so is a chunk deleted by a write of fill
//!   values, `erase_chunk` or a resize when a directory above it is a link and a value lies there;
//! - by default reads and writes follow links (a chunk directory may live on another disk);
//! - a confined store (`FilesystemStore::with_confine`, store option `confine`, `ZARR_CONFINE=1`)
//!   refuses with `Error::Io` every read, write, listing, lock and move through a link that leaves
//!   its root, for both ways of resolving (`openat2` and the component walk of older kernels);
//! - an invalid metadata document never has its content quoted in the error message;
//! - `zip://` of a FIFO fails at once; a large zip file without an end-of-central-directory record
//!   in its last 64 KiB fails after reading that much, as does one whose end record points nowhere.

mod common;

use common::{bytes_codec, v3_array};
use serde_json::{json, Map};
use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use zarr::store::filesystem::FilesystemStore;
use zarr::store::{LockRange, Store, StoreOptions};
use zarr::{Array, Error, Group};

/// Tests that switch the confined resolution to its fallback walk run one at a time.
static WALK: Mutex<()> = Mutex::new(());

/// A fresh, empty directory for one test, with `store/` and `outside/` in it.
fn scratch(tag: &str) -> (PathBuf, PathBuf) {
    let base = std::env::var_os("ZARR_TEST_TMPDIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let d = base.join(format!("zarr-links-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("store")).unwrap();
    std::fs::create_dir_all(d.join("outside")).unwrap();
    (d.join("store"), d.join("outside"))
}

/// Every file below `dir` (links not followed) with its content: what must stay intact.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let rel = e.path().strip_prefix(base).unwrap().display().to_string();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(base, &e.path(), out);
            } else if t.is_symlink() {
                out.insert(rel, std::fs::read_link(e.path()).unwrap().display().to_string().into_bytes());
            } else {
                out.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

macro_rules! assert_err {
    ($result:expr, $variant:ident) => {
        match $result {
            Err(Error::$variant(m)) => m,
            Err(other) => panic!("{}: expected Error::{}, got {other:?}", stringify!($result), stringify!($variant)),
            Ok(_) => panic!("{}: expected Error::{}, got Ok", stringify!($result), stringify!($variant)),
        }
    };
}

fn doc() -> String {
    v3_array(&[8], &[4], "int32", json!(-1), json!([bytes_codec("little")]))
}

fn data() -> Vec<u8> {
    (1..=8i32).flat_map(|v| v.to_le_bytes()).collect()
}

fn read_all(a: &Array) -> zarr::Result<Vec<u8>> {
    let mut out = vec![0u8; 32];
    a.read_region(&[0], &[8], &mut out)?;
    Ok(out)
}

/// An outside directory that looks like the chunk directory of an array (and more).
fn fill_outside(outside: &Path) {
    std::fs::create_dir_all(outside.join("sub")).unwrap();
    std::fs::write(outside.join("0"), [9u8; 16]).unwrap();
    std::fs::write(outside.join("1"), [8u8; 16]).unwrap();
    std::fs::write(outside.join("notes.txt"), b"not zarr, never to be deleted").unwrap();
    std::fs::write(outside.join("sub/deep"), b"deep").unwrap();
}

/// Runs `f` on another thread; fails if it does not answer within 60 s (a hang).
fn within_deadline<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("{what}: no answer within 60 s (hang)"))
}

#[test]
fn delete_removes_links_as_links_in_every_mode() {
    for confine in [false, true] {
        let (root, outside) = scratch(&format!("delete-{confine}"));
        fill_outside(&outside);
        // A second outside tree holding a whole array (for the member that is itself a link).
        let other = outside.parent().unwrap().join("other");
        let _ = std::fs::remove_dir_all(&other);
        let fs_other: Arc<dyn Store> = Arc::new(FilesystemStore::with_confine(&other, false));
        Array::create(fs_other, "", &doc()).unwrap().write_region(&[0], &[8], &data()).unwrap();
        std::fs::write(other.join("keep.txt"), b"keep").unwrap();
        let (before, before_other) = (snapshot(&outside), snapshot(&other));

        let store: Arc<dyn Store> = Arc::new(FilesystemStore::with_confine(&root, confine));
        let g = Group::create(store.clone(), "", Map::new(), 3).unwrap();
        // `arr/c` (its chunk directory) links outside.
        g.create_array("arr", &doc()).unwrap();
        symlink(&outside, root.join("arr/c")).unwrap();
        // `lnk` (the member itself) links to a whole array outside.
        symlink(&other, root.join("lnk")).unwrap();
        // `par` is a group whose directory links outside: `par/arr` lies below a link.
        let par_target = outside.parent().unwrap().join("par_target");
        let _ = std::fs::remove_dir_all(&par_target);
        let fs_par: Arc<dyn Store> = Arc::new(FilesystemStore::with_confine(&par_target, false));
        Group::create(fs_par.clone(), "", Map::new(), 3).unwrap().create_array("arr", &doc()).unwrap();
        Array::open(fs_par, "arr", true).unwrap().write_region(&[0], &[8], &data()).unwrap();
        symlink(&par_target, root.join("par")).unwrap();
        let before_par = snapshot(&par_target);

        g.delete_member("arr").unwrap();
        assert!(!root.join("arr").exists() && std::fs::symlink_metadata(root.join("arr")).is_err());
        assert_eq!(snapshot(&outside), before, "confine={confine}: the linked chunk directory's target is intact");

        if confine {
            // The member's document lies outside: it is refused, not read; nothing is removed.
            assert_err!(g.delete_member("lnk"), Io);
            assert!(std::fs::symlink_metadata(root.join("lnk")).unwrap().file_type().is_symlink());
        } else {
            g.delete_member("lnk").unwrap();
            assert!(std::fs::symlink_metadata(root.join("lnk")).is_err(), "the link itself is removed");
        }
        assert_eq!(snapshot(&other), before_other, "confine={confine}: the linked member's target is intact");

        let m = assert_err!(g.delete_member("par/arr"), Io);
        assert!(m.contains("symbolic link"), "{m}");
        assert_eq!(snapshot(&par_target), before_par, "confine={confine}: nothing is deleted through a linked parent");
        assert!(std::fs::symlink_metadata(root.join("par")).unwrap().file_type().is_symlink());
        let _ = std::fs::remove_dir_all(root.parent().unwrap());
        let _ = std::fs::remove_dir_all(&other);
        let _ = std::fs::remove_dir_all(&par_target);
    }
}

#[test]
fn move_never_follows_links() {
    for confine in [false, true] {
        let (root, outside) = scratch(&format!("move-{confine}"));
        // `h` links to an outside directory that is a group: moving into it is refused.
        let fs_out: Arc<dyn Store> = Arc::new(FilesystemStore::with_confine(&outside, false));
        Group::create(fs_out, "", Map::new(), 3).unwrap();
        std::fs::write(outside.join("notes.txt"), b"outside").unwrap();
        let before = snapshot(&outside);
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::with_confine(&root, confine));
        let g = Group::create(store.clone(), "", Map::new(), 3).unwrap();
        g.create_array("a", &doc()).unwrap().write_region(&[0], &[8], &data()).unwrap();
        symlink(&outside, root.join("h")).unwrap();
        assert_err!(g.move_member("a", "h/b"), Io);
        assert_eq!(snapshot(&outside), before, "confine={confine}: nothing moved into the linked directory");
        assert_eq!(read_all(&g.open_array("a").unwrap()).unwrap(), data(), "the source is intact");
        // Out of a linked directory: refused too.
        assert!(g.move_member("h", "h2").is_err() || std::fs::symlink_metadata(root.join("h2")).unwrap().file_type().is_symlink());
        assert_eq!(snapshot(&outside), before);
        let _ = std::fs::remove_dir_all(root.parent().unwrap());
    }
    // By default a member that is itself a link is moved as a link.
    let (root, outside) = scratch("move-link");
    let fs_out: Arc<dyn Store> = Arc::new(FilesystemStore::with_confine(&outside, false));
    Array::create(fs_out, "", &doc()).unwrap().write_region(&[0], &[8], &data()).unwrap();
    let before = snapshot(&outside);
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::with_confine(&root, false));
    let g = Group::create(store, "", Map::new(), 3).unwrap();
    symlink(&outside, root.join("lnk")).unwrap();
    g.move_member("lnk", "moved").unwrap();
    assert!(std::fs::symlink_metadata(root.join("moved")).unwrap().file_type().is_symlink());
    assert_eq!(snapshot(&outside), before);
    let _ = std::fs::remove_dir_all(root.parent().unwrap());
}

#[test]
fn default_mode_follows_links_for_reads_and_writes() {
    let (root, outside) = scratch("follow");
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::with_confine(&root, false));
    let a = Array::create(store.clone(), "a", &doc()).unwrap();
    std::fs::create_dir_all(outside.join("c")).unwrap();
    symlink(outside.join("c"), root.join("a/c")).unwrap();
    a.write_region(&[0], &[8], &data()).unwrap();
    assert!(outside.join("c/0").is_file() && outside.join("c/1").is_file(), "writes follow the link");
    assert_eq!(read_all(&Array::open(store.clone(), "a", false).unwrap()).unwrap(), data());
    assert_eq!(store.list_dir("a/c/").unwrap().keys, ["0", "1"]);
    let _ = std::fs::remove_dir_all(root.parent().unwrap());
}

#[test]
fn chunk_deletes_by_writes_never_follow_links() {
    for confine in [false, true] {
        let (root, outside) = scratch(&format!("chunk-delete-{confine}"));
        // `outside` holds files named like chunks 0 and 1 of the array (16 bytes each: valid chunks).
        fill_outside(&outside);
        let empty = outside.parent().unwrap().join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        let (before, before_empty) = (snapshot(&outside), snapshot(&empty));
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::with_confine(&root, confine));
        // `a/c` (a's chunk directory) links to `outside`; `b/c` to an empty directory.
        let mut a = Array::create(store.clone(), "a", &doc()).unwrap();
        symlink(&outside, root.join("a/c")).unwrap();
        let mut b = Array::create(store.clone(), "b", &doc()).unwrap();
        symlink(&empty, root.join("b/c")).unwrap();
        let fill: Vec<u8> = [-1i32; 4].iter().flat_map(|v| v.to_le_bytes()).collect();

        // A write of fill values deletes the chunk: refused below the link, the outside file kept.
        let m = assert_err!(a.write_region(&[0], &[4], &fill), Io);
        assert!(m.contains("symbolic link"), "{m}");
        assert_err!(a.erase_chunk(&[1]), Io);
        // A resize deleting chunk 1: refused, and the shape unchanged (the metadata comes last).
        assert_err!(a.resize(&[4]), Io);
        assert_eq!(Array::open(store.clone(), "a", false).unwrap().shape(), &[8]);
        assert_eq!(snapshot(&outside), before, "confine={confine}: nothing outside is deleted");
        if confine {
            // Confined, the link out of the root is refused whatever lies there.
            assert_err!(b.write_region(&[0], &[4], &fill), Io);
            assert_err!(b.erase_chunk(&[1]), Io);
            assert_err!(b.resize(&[4]), Io);
        } else {
            // Nothing stored below the link: nothing to refuse (the link stays).
            b.write_region(&[0], &[4], &fill).unwrap();
            b.erase_chunk(&[1]).unwrap();
            b.resize(&[4]).unwrap();
            assert_eq!(Array::open(store.clone(), "b", false).unwrap().shape(), &[4]);
        }
        assert!(std::fs::symlink_metadata(root.join("b/c")).unwrap().file_type().is_symlink());
        assert_eq!(snapshot(&empty), before_empty);
        let _ = std::fs::remove_dir_all(root.parent().unwrap());
    }
}

/// The confined cases, run for `openat2` and for the walk of kernels without it.
#[test]
fn a_confined_store_refuses_every_access_through_links_out_of_its_root() {
    let _one = WALK.lock().unwrap_or_else(|e| e.into_inner());
    for walk in [false, true] {
        zarr::store::resolve::force_walk(walk);
        let (root, outside) = scratch(&format!("confined-{walk}"));
        std::fs::write(outside.join("passwd"), b"root:x:0:0:SECRET-CONTENT:/root:/bin/bash\n").unwrap();
        std::fs::write(outside.join("zarr.json"), b"SECRET-CONTENT not json").unwrap();
        std::fs::write(outside.join("chunk"), [7u8; 16]).unwrap();
        std::fs::create_dir_all(outside.join("chunks")).unwrap();
        std::fs::write(outside.join("chunks/keep"), b"keep").unwrap();
        let open = |confine: bool| -> Arc<dyn Store> {
            let mut o = StoreOptions::new();
            o.set("confine", if confine { "true" } else { "false" }).unwrap();
            zarr::store::open_location_with(root.to_str().unwrap(), &o).unwrap()
        };
        let (free, confined) = (open(false), open(true));
        let g = Group::create(confined.clone(), "", Map::new(), 3).unwrap();
        let a = Array::create(confined.clone(), "a", &doc()).unwrap();
        a.write_region(&[0], &[8], &data()).unwrap();
        assert_eq!(read_all(&a).unwrap(), data(), "walk={walk}: plain files work confined");
        let before = snapshot(&outside);

        // A chunk linked to a file outside: read by default, refused confined.
        std::fs::remove_file(root.join("a/c/0")).unwrap();
        symlink(outside.join("chunk"), root.join("a/c/0")).unwrap();
        let mut first = vec![0u8; 16];
        Array::open(free.clone(), "a", false).unwrap().read_region(&[0], &[4], &mut first).unwrap();
        assert_eq!(first, [7u8; 16], "walk={walk}: followed by default");
        let m = assert_err!(read_all(&Array::open(confined.clone(), "a", false).unwrap()), Io);
        assert!(m.contains("refused") && !m.contains("SECRET"), "{m}");
        assert_err!(confined.get("a/c/0"), Io);
        assert!(!confined.exists("a/c/0").unwrap());

        // A linked zarr.json: refused confined; by default parsed, its content never quoted.
        std::fs::create_dir_all(root.join("b")).unwrap();
        symlink(outside.join("zarr.json"), root.join("b/zarr.json")).unwrap();
        let m = assert_err!(Array::open(confined.clone(), "b", false), Io);
        assert!(!m.contains("SECRET"), "{m}");
        let m = assert_err!(Array::open(free.clone(), "b", false), Metadata);
        assert!(!m.contains("SECRET"), "the content of an invalid document is never quoted: {m}");

        // A write through a linked chunk directory: refused, nothing created outside.
        let w = Array::create(confined.clone(), "w", &doc()).unwrap();
        symlink(outside.join("chunks"), root.join("w/c")).unwrap();
        assert_err!(w.write_region(&[0], &[8], &data()), Io);
        // Listing through a link, locking in a linked directory.
        assert_err!(confined.list_dir("w/c/"), Io);
        assert_eq!(free.list_dir("w/c/").unwrap().keys, ["keep"]);
        symlink(&outside, root.join("out")).unwrap();
        assert_err!(confined.lock("out/", &[LockRange::metadata(true)]), Io);
        assert_err!(confined.set("out/x", b"x"), Io);
        assert_err!(confined.delete("out/passwd"), Io);
        // Deleting and moving (refused through the link; the array with the linked chunk dir goes).
        assert!(g.move_member("a", "out/a").is_err());
        assert!(g.delete_member("out/zarr").is_err());
        g.delete_member("w").unwrap();
        assert!(!root.join("w").exists());
        assert_eq!(snapshot(&outside), before, "walk={walk}: nothing outside was written or deleted");
        let _ = std::fs::remove_dir_all(root.parent().unwrap());
    }
    zarr::store::resolve::force_walk(false);
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Bytes this process has read through `read`-like calls (`rchar` of /proc/self/io).
fn bytes_read_by_process() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap();
    io.lines().find_map(|l| l.strip_prefix("rchar: ")).unwrap().trim().parse().unwrap()
}

#[test]
fn zip_of_a_fifo_or_a_huge_file_without_end_record_fails_fast() {
    let (root, _) = scratch("zip");
    let fifo = root.join("x.zip");
    mkfifo(&fifo);
    let loc = format!("zip://{}", fifo.display());
    let m = within_deadline("zip://FIFO", move || match zarr::store::open_location(&loc) {
        Err(Error::Io(m)) => m,
        other => panic!("expected Error::Io, got {other:?}"),
    });
    assert!(m.contains("FIFO"), "{m}");

    // 8 GiB of holes: no end record in the last 64 KiB. What the process reads (`rchar`, other tests
    // of this binary read kilobytes) shows the search stayed in the tail.
    let big = root.join("big.zip");
    std::fs::File::create(&big).unwrap().set_len(8 << 30).unwrap();
    let loc = format!("zip://{}", big.display());
    let before = bytes_read_by_process();
    let m = within_deadline("8 GiB without EOCD", move || match zarr::store::open_location(&loc) {
        Err(Error::Io(m)) => m,
        other => panic!("expected Error::Io, got {other:?}"),
    });
    assert!(m.contains("end-of-central-directory"), "{m}");
    let read = bytes_read_by_process() - before;
    assert!(read < 64 << 20, "{read} bytes read to find no end record");

    // An end record whose central directory is nowhere (holes where it says): the parser would scan
    // the whole file for signatures; its reads are bounded.
    let f = std::fs::OpenOptions::new().write(true).open(&big).unwrap();
    let mut eocd = Vec::new();
    eocd.extend_from_slice(b"PK\x05\x06");
    eocd.extend_from_slice(&[0, 0, 0, 0]); // disk numbers
    eocd.extend_from_slice(&1u16.to_le_bytes());
    eocd.extend_from_slice(&1u16.to_le_bytes());
    eocd.extend_from_slice(&46u32.to_le_bytes()); // central directory size
    eocd.extend_from_slice(&0u32.to_le_bytes()); // ... at offset 0 (holes)
    eocd.extend_from_slice(&0u16.to_le_bytes());
    std::os::unix::fs::FileExt::write_all_at(&f, &eocd, (8 << 30) - 22).unwrap();
    drop(f);
    let loc = format!("zip://{}", big.display());
    let before = bytes_read_by_process();
    within_deadline("8 GiB with a bogus EOCD", move || assert_err!(zarr::store::open_location(&loc), Io));
    let read = bytes_read_by_process() - before;
    assert!(read < 64 << 20, "{read} bytes read for an end record pointing at holes");
    let _ = std::fs::remove_dir_all(root.parent().unwrap());
}
