//! Hostile stores: each case builds a damaged or malicious store at run time (no odd files such as FIFOs
//! or symlinks are committed) and checks the specific error libzarr reports, never a panic, hang or
//! huge allocation.
//!
//! Policies checked here (also documented in docs/testing.md, "Hostile stores"):
//! - node names and store keys never escape the store root: `..` and `.` segments, NUL and backslash
//!   are `Error::InvalidArgument`; a leading `/` in a node path means the store root, not the filesystem
//!   root;
//! - symbolic links *inside* the store directory are followed (a chunk file or directory may be a link
//!   to another disk, as with HDF5 external files); a dangling or looping link is `Error::Io`, never a
//!   silently missing chunk; a write to a key that is a link replaces the link, the target is untouched;
//! - a key whose file is not a regular file (a directory, FIFO, socket or device) is `Error::Io`; a FIFO
//!   is never opened for a blocking read;
//! - shapes, chunk shapes and chunk byte sizes whose products overflow 64 bits are `Error::Metadata` at
//!   open (an array whose *byte* size overflows but whose element count fits is valid);
//! - fill values of the wrong type for the data type are `Error::Metadata` (v3 and v2);
//! - JSON nested 100000 deep is `Error::Metadata` (documents) or `Error::InvalidArgument` (attributes
//!   given by the caller), not a stack overflow, also with bare NaN / Infinity tokens in it;
//! - a bare `NaN`, `Infinity` or `-Infinity` in place of any value of a metadata document opens (in
//!   attributes and fill values) or is `Error::Metadata`, and every later step (read, write,
//!   attributes, consolidation) returns normally;
//! - zero-byte chunks are `Error::Codec` for every codec family;
//! - shard index entries with 2^64-1 in odd places are `Error::Codec`;
//! - an array resized through one handle while another reads it: the stale handle's reads return old or
//!   fill values, or a clean error.

mod common;

use common::{bytes_codec, v3_array};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use zarr::store::filesystem::FilesystemStore;
use zarr::store::Store;
use zarr::{Array, Error, Group};

/// A fresh, empty directory for one test.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zarr-hostile-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fs_store(root: &Path) -> Arc<dyn Store> {
    Arc::new(FilesystemStore::new(root))
}

/// Runs `f` on another thread; fails the test if it does not return within 20 s (a hang).
fn within_deadline<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|_| panic!("{what}: no answer within 20 s (hang)"))
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

/// A small uncompressed int32 array of 8 elements in chunks of 4 at `path`, holding 1..=8.
fn small_i32(store: &Arc<dyn Store>, path: &str) -> Array {
    let a = Array::create(store.clone(), path, &v3_array(&[8], &[4], "int32", json!(-1), json!([bytes_codec("little")])))
        .unwrap();
    let data: Vec<u8> = (1..=8i32).flat_map(|v| v.to_le_bytes()).collect();
    a.write_region(&[0], &[8], &data).unwrap();
    a
}

fn read_i32(a: &Array, start: u64, count: u64) -> zarr::Result<Vec<i32>> {
    let mut out = vec![0u8; count as usize * 4];
    a.read_region(&[start], &[count], &mut out)?;
    Ok(out.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect())
}

// ---------------------------------------------------------------------------------------------
// Names and keys
// ---------------------------------------------------------------------------------------------

#[test]
fn node_names_and_keys_never_escape_the_root() {
    let outer = scratch("names");
    let root = outer.join("store");
    let store = fs_store(&root);
    let doc = v3_array(&[4], &[4], "uint8", json!(0), json!([bytes_codec("little")]));
    for bad in ["..", "../evil", "a/../../evil", "a/./b", "./a", "a/..", "...", "a\\..\\b", "a\0b"] {
        assert_err!(Array::create(store.clone(), bad, &doc), InvalidArgument);
        assert_err!(Array::open(store.clone(), bad, false), InvalidArgument);
        assert_err!(Group::open(store.clone(), bad, false), InvalidArgument);
    }
    // Nothing was written outside the store (not even the store directory's parent gained files).
    let outside: Vec<_> = std::fs::read_dir(&outer).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(outside.iter().all(|n| n == "store"), "{outside:?}");

    // A leading '/' names the store root, not the filesystem root.
    let a = Array::create(store.clone(), "/tmp/abs", &doc).unwrap();
    assert_eq!(a.path(), "tmp/abs");
    assert!(root.join("tmp/abs/zarr.json").is_file());

    // Children named with '..' from a group.
    let g = Group::create(store.clone(), "g", Default::default(), 3).unwrap();
    assert_err!(g.open_array("../tmp/abs"), InvalidArgument);
    assert_err!(g.create_array("../sibling", &doc), InvalidArgument);
    assert_err!(g.create_group("x/../../y", Default::default()), InvalidArgument);

    // Raw store keys.
    for bad in ["/etc/passwd", "../x", "a/../../x", "a//b", "a/", "", "a\\b"] {
        assert_err!(store.get(bad), InvalidArgument);
        assert_err!(store.set(bad, b"x"), InvalidArgument);
        assert_err!(store.delete(bad), InvalidArgument);
        assert_err!(store.exists(bad), InvalidArgument);
    }
    std::fs::remove_dir_all(outer).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Symbolic links
// ---------------------------------------------------------------------------------------------

#[test]
fn symlinks_inside_the_store_are_followed() {
    use std::os::unix::fs::symlink;
    let outer = scratch("symlinks");
    let root = outer.join("store");
    let elsewhere = outer.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let store = fs_store(&root);
    let a = small_i32(&store, "a");

    // A chunk file that is a link to a file outside the store: followed.
    std::fs::rename(root.join("a/c/1"), elsewhere.join("chunk1")).unwrap();
    symlink(elsewhere.join("chunk1"), root.join("a/c/1")).unwrap();
    assert_eq!(read_i32(&a, 0, 8).unwrap(), [1, 2, 3, 4, 5, 6, 7, 8]);

    // Writing a key that is a link replaces the link by a regular file; the target is untouched.
    let target_before = std::fs::read(elsewhere.join("chunk1")).unwrap();
    a.write_region(&[4], &[1], &50i32.to_le_bytes()).unwrap();
    assert!(!std::fs::symlink_metadata(root.join("a/c/1")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(elsewhere.join("chunk1")).unwrap(), target_before);
    assert_eq!(read_i32(&a, 4, 4).unwrap(), [50, 6, 7, 8]);

    // The chunk directory itself a link to a directory elsewhere: followed.
    std::fs::rename(root.join("a/c"), elsewhere.join("cdir")).unwrap();
    symlink(elsewhere.join("cdir"), root.join("a/c")).unwrap();
    assert_eq!(read_i32(&a, 0, 8).unwrap(), [1, 2, 3, 4, 50, 6, 7, 8]);

    // A dangling link is an I/O error, not a missing chunk read as fill values.
    std::fs::remove_file(root.join("a/c")).unwrap();
    std::fs::create_dir(root.join("a/c")).unwrap();
    std::fs::copy(elsewhere.join("cdir/0"), root.join("a/c/0")).unwrap();
    symlink(outer.join("no-such-file"), root.join("a/c/1")).unwrap();
    let m = assert_err!(read_i32(&a, 0, 8), Io);
    assert!(m.contains("dangling"), "{m}");
    assert_eq!(read_i32(&a, 0, 4).unwrap(), [1, 2, 3, 4], "the chunk that is there still reads");

    // A link loop is an I/O error.
    std::fs::remove_file(root.join("a/c/1")).unwrap();
    symlink(root.join("a/c/1"), root.join("a/c/1")).unwrap();
    assert_err!(read_i32(&a, 4, 4), Io);

    // A link to a device (endless bytes) is refused: not a regular file.
    std::fs::remove_file(root.join("a/c/1")).unwrap();
    symlink("/dev/zero", root.join("a/c/1")).unwrap();
    let m = within_deadline("link to /dev/zero", {
        let a = Array::open(store.clone(), "a", false).unwrap();
        move || assert_err!(read_i32(&a, 4, 4), Io)
    });
    assert!(m.contains("not a regular file"), "{m}");

    // A metadata document that is a dangling link: an I/O error at open.
    std::fs::remove_file(root.join("a/zarr.json")).unwrap();
    symlink(outer.join("gone.json"), root.join("a/zarr.json")).unwrap();
    assert_err!(Array::open(store.clone(), "a", false), Io);
    std::fs::remove_dir_all(outer).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Keys that are not regular files
// ---------------------------------------------------------------------------------------------

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo {}", path.display());
}

#[test]
fn chunk_files_that_are_directories_or_fifos() {
    let root = scratch("special");
    let store = fs_store(&root);
    let a = small_i32(&store, "a");

    // A directory where chunk 1 should be.
    std::fs::remove_file(root.join("a/c/1")).unwrap();
    std::fs::create_dir(root.join("a/c/1")).unwrap();
    let m = assert_err!(read_i32(&a, 4, 4), Io);
    assert!(m.contains("not a regular file"), "{m}");
    assert_err!(store.get("a/c/1"), Io);
    assert_eq!(read_i32(&a, 0, 4).unwrap(), [1, 2, 3, 4]);
    // A write over it fails without touching it (rename cannot replace a directory).
    assert_err!(a.write_region(&[4], &[4], &[0u8; 16]), Io);
    assert!(root.join("a/c/1").is_dir());
    std::fs::remove_dir(root.join("a/c/1")).unwrap();

    // A FIFO (no writer): never blocks, an I/O error.
    mkfifo(&root.join("a/c/1"));
    let m = within_deadline("FIFO chunk", {
        let a = Array::open(store.clone(), "a", false).unwrap();
        move || assert_err!(read_i32(&a, 4, 4), Io)
    });
    assert!(m.contains("not a regular file"), "{m}");
    let s = store.clone();
    within_deadline("FIFO get", move || assert_err!(s.get("a/c/1"), Io));

    // A FIFO as the metadata document.
    std::fs::remove_file(root.join("a/zarr.json")).unwrap();
    mkfifo(&root.join("a/zarr.json"));
    let s = store.clone();
    within_deadline("FIFO zarr.json", move || assert_err!(Array::open(s, "a", false), Io));
    // ... and as a v2 .zarray / .zattrs.
    let v2 = json!({"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<i4", "compressor": null,
                    "fill_value": 0, "order": "C", "filters": null});
    Array::create(store.clone(), "v2", &v2.to_string()).unwrap();
    mkfifo(&root.join("v2/.zattrs"));
    let s = store.clone();
    within_deadline("FIFO .zattrs", move || assert_err!(Array::open(s, "v2", false), Io));
    std::fs::remove_dir_all(root).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Metadata: overflowing sizes, wrong fill values, deep JSON
// ---------------------------------------------------------------------------------------------

/// Writes `doc` as `zarr.json` (v3) or `.zarray` (v2) of node `name` and opens it.
fn open_doc(root: &Path, name: &str, doc: &Value) -> zarr::Result<Array> {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let file = if doc["zarr_format"] == 2 { ".zarray" } else { "zarr.json" };
    std::fs::write(dir.join(file), doc.to_string()).unwrap();
    Array::open(fs_store(root), name, false)
}

fn v3_doc(shape: Value, chunks: Value, dtype: &str, fill: Value) -> Value {
    json!({"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
           "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})
}

fn v2_doc(shape: Value, chunks: Value, dtype: &str, fill: Value) -> Value {
    json!({"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": dtype, "compressor": null,
           "fill_value": fill, "order": "C", "filters": null})
}

#[test]
fn sizes_overflowing_64_bits_are_metadata_errors() {
    let root = scratch("overflow");
    let max = u64::MAX;
    let cases: Vec<(&str, Value, Value, &str)> = vec![
        // the chunk's element count overflows
        ("chunk_elems", json!([max, max]), json!([max, max]), "uint8"),
        // the chunk's byte size overflows (2^62 elements of 8 bytes)
        ("chunk_bytes", json!([1u64 << 62]), json!([1u64 << 62]), "float64"),
        // the grid's chunk count overflows (2^64-1 chunks per dimension, two dimensions)
        ("grid", json!([max, max]), json!([1, 1]), "uint8"),
        // the element count overflows with small chunks (2^80 elements, 2^80 chunks)
        ("elements", json!([1u64 << 40, 1u64 << 40]), json!([1, 1]), "uint8"),
    ];
    for (i, (what, shape, chunks, dtype)) in cases.into_iter().enumerate() {
        for (fmt, doc) in [
            ("v3", v3_doc(shape.clone(), chunks.clone(), dtype, json!(0))),
            ("v2", v2_doc(shape.clone(), chunks.clone(), if dtype == "uint8" { "|u1" } else { "<f8" }, json!(0))),
        ] {
            let r = within_deadline(what, {
                let root = root.clone();
                move || open_doc(&root, &format!("{fmt}_{i}"), &doc).map(|_| ())
            });
            let m = match r {
                Err(Error::Metadata(m)) => m,
                other => panic!("{fmt} {what}: expected Error::Metadata, got {other:?}"),
            };
            assert!(m.contains("overflow"), "{fmt} {what}: {m}");
        }
    }
    // 2^62 elements (whose byte size overflows) is a valid sparse array: it opens, its far corner reads
    // as fill, and resizing it past 64 bits of elements is refused.
    let big = v3_doc(json!([1u64 << 31, 1u64 << 31]), json!([1u64 << 16, 1u64 << 16]), "int64", json!(7));
    open_doc(&root, "big", &big).unwrap();
    let mut a = Array::open(fs_store(&root), "big", true).unwrap();
    let mut out = [0u8; 8];
    a.read_region(&[(1 << 31) - 1, (1 << 31) - 1], &[1, 1], &mut out).unwrap();
    assert_eq!(i64::from_ne_bytes(out), 7);
    assert_err!(a.resize(&[1 << 40, 1 << 40]), InvalidArgument);
    assert_eq!(a.shape(), [1 << 31, 1 << 31]);
    // Through the creation path too (a document given by the caller).
    let doc = v3_doc(json!([max, max]), json!([max, max]), "uint8", json!(0));
    assert_err!(Array::create(fs_store(&root), "created", &doc.to_string()), Metadata);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn fill_values_of_the_wrong_type_are_metadata_errors() {
    let root = scratch("fill");
    let v3_cases = [
        ("int32", json!("abc")),
        ("int32", json!(1.5)),
        ("int32", json!(true)),
        ("int32", json!([1, 2])),
        ("int32", json!({"a": 1})),
        ("uint8", json!(-1)),
        ("uint8", json!(256)),
        ("bool", json!(1)),
        ("float32", json!("not-a-number")),
        ("float32", json!(true)),
        ("complex64", json!(1.0)),
        ("int64", json!(1e30)),
    ];
    for (i, (dtype, fill)) in v3_cases.iter().enumerate() {
        let doc = v3_doc(json!([4]), json!([4]), dtype, fill.clone());
        let r = open_doc(&root, &format!("v3_{i}"), &doc);
        assert!(matches!(r, Err(Error::Metadata(_))), "v3 {dtype} fill {fill}: {r:?}");
        // the same document given to create
        let r = Array::create(fs_store(&root), &format!("c3_{i}"), &doc.to_string());
        assert!(matches!(r, Err(Error::Metadata(_))), "create v3 {dtype} fill {fill}: {r:?}");
    }
    let v2_cases = [
        ("<i4", json!("abc")),
        ("<i4", json!(1.5)),
        ("<i4", json!([1])),
        ("|u1", json!(-1)),
        ("|u1", json!(300)),
        ("|b1", json!(2)),
        ("<f4", json!("nan-ish")),
        ("<f8", json!({"x": 1})),
    ];
    for (i, (dtype, fill)) in v2_cases.iter().enumerate() {
        let doc = v2_doc(json!([4]), json!([4]), dtype, fill.clone());
        let r = open_doc(&root, &format!("v2_{i}"), &doc);
        assert!(matches!(r, Err(Error::Metadata(_))), "v2 {dtype} fill {fill}: {r:?}");
    }
    std::fs::remove_dir_all(root).unwrap();
}

/// `depth` nested arrays, or objects when `objects`.
fn deep_json(depth: usize, objects: bool) -> String {
    let (open, close) = if objects { ("{\"a\":", "}") } else { ("[", "]") };
    let mut s = String::with_capacity(depth * (open.len() + close.len()) + 1);
    for _ in 0..depth {
        s.push_str(open);
    }
    s.push('1');
    for _ in 0..depth {
        s.push_str(close);
    }
    s
}

#[test]
fn json_nested_100000_deep_is_an_error_not_a_stack_overflow() {
    let root = scratch("deep");
    let store = fs_store(&root);
    let deep_arr = deep_json(100_000, false);
    let deep_obj = deep_json(100_000, true);
    // Run on a thread with a small stack: recursion proportional to the depth would overflow it.
    let small_stack = |f: Box<dyn FnOnce() + Send>| {
        std::thread::Builder::new().stack_size(2 << 20).spawn(f).unwrap().join().unwrap()
    };

    // zarr.json: the whole document, and a deep value inside an otherwise valid document.
    std::fs::create_dir_all(root.join("a")).unwrap();
    for text in [deep_obj.clone(), format!("{{\"zarr_format\": 3, \"node_type\": \"array\", \"attributes\": {deep_arr}}}")] {
        std::fs::write(root.join("a/zarr.json"), text).unwrap();
        let s = store.clone();
        small_stack(Box::new(move || {
            let m = assert_err!(Array::open(s.clone(), "a", false), Metadata);
            assert!(m.contains("recursion limit"), "{m}");
            assert_err!(Group::open(s, "a", false), Metadata);
        }));
    }
    // .zarray and .zattrs (v2).
    let v2 = v2_doc(json!([4]), json!([4]), "<i4", json!(0));
    Array::create(store.clone(), "v2", &v2.to_string()).unwrap();
    std::fs::write(root.join("v2/.zattrs"), &deep_obj).unwrap();
    let s = store.clone();
    small_stack(Box::new(move || {
        assert_err!(Array::open(s, "v2", false), Metadata);
    }));
    std::fs::remove_file(root.join("v2/.zattrs")).unwrap();
    std::fs::write(root.join("v2/.zarray"), &deep_arr).unwrap();
    let s = store.clone();
    small_stack(Box::new(move || {
        assert_err!(Array::open(s, "v2", false), Metadata);
    }));
    // A v2 group's .zattrs.
    Group::create(store.clone(), "g2", Default::default(), 2).unwrap();
    std::fs::write(root.join("g2/.zattrs"), &deep_arr).unwrap();
    let s = store.clone();
    small_stack(Box::new(move || {
        assert_err!(Group::open(s, "g2", false), Metadata);
    }));

    // Attributes given by a caller, and a document given to create.
    let (da, dobj) = (deep_arr.clone(), deep_obj.clone());
    small_stack(Box::new(move || {
        assert_err!(zarr::metadata::parse_attributes_arg(&format!("{{\"x\": {da}}}")), InvalidArgument);
        assert_err!(zarr::metadata::parse_attributes_arg(&dobj), InvalidArgument);
    }));
    let s = store.clone();
    let doc = deep_obj.clone();
    small_stack(Box::new(move || {
        assert_err!(Array::create(s, "created", &doc), Metadata);
    }));
    std::fs::remove_dir_all(root).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Zero-byte chunks
// ---------------------------------------------------------------------------------------------

#[test]
fn zero_byte_chunks_are_codec_errors_for_every_codec_family() {
    let root = scratch("empty-chunks");
    let store = fs_store(&root);
    let b = bytes_codec("little");
    let v3_chains: Vec<(&str, &str, Value)> = vec![
        ("bytes", "int32", json!([b])),
        ("transpose", "int32", json!([{"name": "transpose", "configuration": {"order": [0]}}, b])),
        ("gzip", "int32", json!([b, {"name": "gzip", "configuration": {"level": 1}}])),
        ("zstd", "int32", json!([b, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}])),
        ("blosc", "int32", json!([b, {"name": "blosc", "configuration":
            {"cname": "lz4", "clevel": 1, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}])),
        ("crc32c", "int32", json!([b, {"name": "crc32c"}])),
        ("sharding", "int32", json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2], "codecs": [b], "index_codecs": [b, {"name": "crc32c"}], "index_location": "end"}}])),
        ("sharding_start", "int32", json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2], "codecs": [b], "index_codecs": [b], "index_location": "start"}}])),
        ("vlen-utf8", "string", json!([{"name": "vlen-utf8"}])),
        ("vlen-bytes", "bytes", json!([{"name": "vlen-bytes"}])),
    ];
    for (name, dtype, codecs) in v3_chains {
        let fill = match dtype {
            "string" => json!(""),
            "bytes" => json!([]),
            _ => json!(0),
        };
        let path = format!("v3_{name}");
        let a = Array::create(store.clone(), &path, &v3_array(&[4], &[4], dtype, fill, codecs)).unwrap();
        std::fs::create_dir_all(root.join(&path).join("c")).unwrap();
        std::fs::write(root.join(&path).join("c/0"), b"").unwrap();
        let r = if dtype == "string" || dtype == "bytes" {
            a.read_region_vlen(&[0], &[4]).map(|_| ())
        } else {
            a.read_region(&[0], &[4], &mut [0u8; 16])
        };
        assert!(matches!(r, Err(Error::Codec(_))), "{name}: {r:?}");
    }
    // v2 compressors and filters (numcodecs).
    let v2_chains: Vec<(&str, Value, Value)> = vec![
        ("none", Value::Null, Value::Null),
        ("zlib", json!({"id": "zlib", "level": 1}), Value::Null),
        ("gzip", json!({"id": "gzip", "level": 1}), Value::Null),
        ("zstd", json!({"id": "zstd", "level": 1}), Value::Null),
        ("blosc", json!({"id": "blosc", "cname": "zstd", "clevel": 1, "shuffle": 1, "blocksize": 0}), Value::Null),
        ("lz4", json!({"id": "lz4", "acceleration": 1}), Value::Null),
        ("bz2", json!({"id": "bz2", "level": 1}), Value::Null),
        ("lzma", json!({"id": "lzma", "format": 1, "check": -1, "preset": null, "filters": null}), Value::Null),
        ("crc32", json!({"id": "crc32"}), Value::Null),
        ("adler32", json!({"id": "adler32"}), Value::Null),
        ("fletcher32", json!({"id": "fletcher32"}), Value::Null),
        ("delta", Value::Null, json!([{"id": "delta", "dtype": "<i4"}])),
        ("shuffle", Value::Null, json!([{"id": "shuffle", "elementsize": 4}])),
    ];
    for (name, compressor, filters) in v2_chains {
        let path = format!("v2_{name}");
        let doc = json!({"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<i4", "compressor": compressor,
                         "fill_value": 0, "order": "C", "filters": filters});
        let a = Array::create(store.clone(), &path, &doc.to_string()).unwrap();
        std::fs::write(root.join(&path).join("0"), b"").unwrap();
        let r = a.read_region(&[0], &[4], &mut [0u8; 16]);
        assert!(matches!(r, Err(Error::Codec(_))), "v2 {name}: {r:?}");
    }
    std::fs::remove_dir_all(root).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Shard indexes with 2^64-1 in odd places
// ---------------------------------------------------------------------------------------------

#[test]
fn shard_index_entries_with_u64_max_are_codec_errors() {
    let root = scratch("shard-index");
    let store = fs_store(&root);
    let b = bytes_codec("little");
    // One shard of 4 int32 in 2 inner chunks of 2; the index (2 x (offset, nbytes), little-endian, no
    // checksum so that the damage reaches the index decoder) at the end.
    let codecs = json!([{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2], "codecs": [b], "index_codecs": [b], "index_location": "end"}}]);
    let a = Array::create(store.clone(), "s", &v3_array(&[4], &[4], "int32", json!(-1), codecs)).unwrap();
    let data: Vec<u8> = [10i32, 11, 12, 13].iter().flat_map(|v| v.to_le_bytes()).collect();
    a.write_region(&[0], &[4], &data).unwrap();
    let shard = root.join("s/c/0");
    let good = std::fs::read(&shard).unwrap();
    assert_eq!(good.len(), 16 + 32);
    let max = u64::MAX;
    let with_index = |entries: [(u64, u64); 2]| {
        let mut v = good[..16].to_vec();
        for (o, n) in entries {
            v.extend_from_slice(&o.to_le_bytes());
            v.extend_from_slice(&n.to_le_bytes());
        }
        v
    };
    // Sanity: the index as written reads back, and (MAX, MAX) marks an empty inner chunk (fill).
    std::fs::write(&shard, with_index([(0, 8), (8, 8)])).unwrap();
    assert_eq!(read_i32(&a, 0, 4).unwrap(), [10, 11, 12, 13]);
    std::fs::write(&shard, with_index([(0, 8), (max, max)])).unwrap();
    assert_eq!(read_i32(&a, 0, 4).unwrap(), [10, 11, -1, -1]);

    let cases: [(&str, [(u64, u64); 2]); 7] = [
        ("offset MAX, nbytes 8", [(0, 8), (max, 8)]),
        ("offset 0, nbytes MAX", [(0, 8), (0, max)]),
        ("offset MAX, nbytes 0", [(0, 8), (max, 0)]),
        ("offset + nbytes overflows", [(0, 8), (16, max - 8)]),
        ("offset past the end", [(0, 8), (1 << 40, 8)]),
        ("nbytes past the end", [(0, 8), (8, 1 << 40)]),
        ("offset MAX - 1, nbytes MAX", [(max - 1, max), (8, 8)]),
    ];
    for (what, entries) in cases {
        std::fs::write(&shard, with_index(entries)).unwrap();
        let a = a.store().clone();
        let r = within_deadline(what, move || {
            let a = Array::open(a, "s", false).unwrap();
            let mut out = vec![0u8; 16];
            a.read_region(&[0], &[4], &mut out)
        });
        assert!(matches!(r, Err(Error::Codec(_))), "{what}: {r:?}");
    }
    std::fs::remove_dir_all(root).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Metadata changing under a reader
// ---------------------------------------------------------------------------------------------

#[test]
fn resize_through_another_handle_while_reading() {
    let root = scratch("resize-race");
    let store = fs_store(&root);
    let n: u64 = 64;
    let a = Array::create(store.clone(), "r", &v3_array(&[n], &[4], "int32", json!(-1), json!([bytes_codec("little")])))
        .unwrap();
    let data: Vec<u8> = (0..n as i32).flat_map(|v| v.to_le_bytes()).collect();
    a.write_region(&[0], &[n], &data).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let stale = Arc::new(a);
    let mut readers = Vec::new();
    for t in 0..2 {
        let (stale, stop, reads, errors, store) = (stale.clone(), stop.clone(), reads.clone(), errors.clone(), store.clone());
        readers.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                // The handle opened before the resizes (its shape is still n), and from time to time a
                // fresh handle (whatever shape the metadata has now).
                let fresh;
                let a: &Array = if t == 1 && reads.load(Ordering::Relaxed) % 3 == 0 {
                    fresh = match Array::open(store.clone(), "r", false) {
                        Ok(f) => f,
                        Err(e) => panic!("opening while another handle resizes: {e:?}"),
                    };
                    &fresh
                } else {
                    &stale
                };
                let len = a.shape()[0];
                let mut out = vec![0u8; len as usize * 4];
                match a.read_region(&[0], &[len], &mut out) {
                    Ok(()) => {
                        for (i, c) in out.chunks(4).enumerate() {
                            let v = i32::from_le_bytes(c.try_into().unwrap());
                            // Old values or fill; elements past a shrink may come back when it grows
                            // again (chunks straddling the edge are kept, as zarr-python does).
                            assert!(v == i as i32 || v == -1, "element {i} read as {v}");
                        }
                    }
                    Err(Error::Codec(_) | Error::Io(_) | Error::NotFound(_)) => {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => panic!("unexpected error reading during a resize: {e:?}"),
                }
                reads.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let mut resizer = Array::open(store.clone(), "r", true).unwrap();
    let started = Instant::now();
    let mut resizes = 0;
    while started.elapsed() < Duration::from_secs(2) {
        let shape = [(resizes * 7 % (n as usize * 2)) as u64];
        resizer.resize(&shape).unwrap();
        resizes += 1;
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().expect("a reader panicked");
    }
    assert!(resizes > 10 && reads.load(Ordering::Relaxed) > 10, "resizes {resizes}, reads {reads:?}");
    eprintln!("{resizes} resizes, {reads:?} reads, {errors:?} clean errors");
    std::fs::remove_dir_all(root).unwrap();
}

/// Every scalar value of `doc` (a JSON text) replaced in turn by `token`: one text per replacement.
fn token_variants(doc: &str, token: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(doc).unwrap();
    fn paths(v: &Value, at: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
        match v {
            Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| {
                at.push(json!(i));
                paths(x, at, out);
                at.pop();
            }),
            Value::Object(o) => o.iter().for_each(|(k, x)| {
                at.push(json!(k));
                paths(x, at, out);
                at.pop();
            }),
            _ => out.push(at.clone()),
        }
    }
    let mut all = Vec::new();
    paths(&v, &mut Vec::new(), &mut all);
    const MARK: &str = "@@token@@";
    all.iter()
        .map(|p| {
            let mut w = v.clone();
            let mut slot = &mut w;
            for k in p {
                slot = match k {
                    Value::Number(i) => &mut slot[i.as_u64().unwrap() as usize],
                    k => &mut slot[k.as_str().unwrap()],
                };
            }
            *slot = Value::from(MARK);
            w.to_string().replace(&format!("\"{MARK}\""), token)
        })
        .collect()
}

#[test]
fn bare_non_finite_tokens_anywhere_in_metadata_never_panic() {
    let root = scratch("tokens");
    let store = fs_store(&root);
    let cast = json!({"name": "cast_value", "configuration": {"data_type": "uint8", "rounding": "nearest-even",
        "out_of_range": "clamp", "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}}});
    let v3 = json!({"zarr_format": 3, "node_type": "array", "shape": [6], "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 1.5,
        "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2],
            "codecs": [cast, bytes_codec("little"), {"name": "gzip", "configuration": {"level": 1}}],
            "index_codecs": [bytes_codec("little"), {"name": "crc32c"}], "index_location": "end"}}],
        "attributes": {"a": [1, {"b": 2.5}]}, "dimension_names": ["x"]})
    .to_string();
    let v2 = json!({"zarr_format": 2, "shape": [6], "chunks": [4], "dtype": "<f8", "fill_value": 0.5, "order": "C",
        "filters": [{"id": "quantize", "digits": 3, "dtype": "<f8"},
                    {"id": "fixedscaleoffset", "offset": 1.5, "scale": 10, "dtype": "<f8", "astype": "<i4"}],
        "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}})
    .to_string();
    let zattrs = json!({"u": "m", "v": [1, 2]}).to_string();
    for (i, (file, base)) in [("zarr.json", &v3), (".zarray", &v2)].into_iter().enumerate() {
        std::fs::create_dir_all(root.join(format!("base{i}"))).unwrap();
        std::fs::write(root.join(format!("base{i}")).join(file), base).unwrap();
        Array::open(store.clone(), &format!("base{i}"), false).unwrap_or_else(|e| panic!("{base}: {e:?}"));
    }
    let mut n = 0;
    for token in ["NaN", "Infinity", "-Infinity"] {
        for (file, base) in [("zarr.json", &v3), (".zarray", &v2), (".zattrs", &zattrs)] {
            for text in token_variants(base, token) {
                n += 1;
                let dir = root.join(format!("n{n}"));
                std::fs::create_dir_all(&dir).unwrap();
                if file == ".zattrs" {
                    std::fs::write(dir.join(".zarray"), &v2).unwrap();
                }
                std::fs::write(dir.join(file), &text).unwrap();
                let s = store.clone();
                let name = format!("n{n}");
                within_deadline(&text.clone(), move || {
                    let a = match Array::open(s.clone(), &name, true) {
                        Ok(a) => a,
                        Err(Error::Metadata(_) | Error::Unsupported(_)) => return,
                        Err(e) => panic!("{text}: {e:?}"),
                    };
                    let mut out = vec![0u8; 6 * 8];
                    let _ = a.write_region(&[0], &[6], &out.clone());
                    let _ = a.read_region(&[0], &[6], &mut out[..6 * a.metadata().data_type.size()]);
                    let attrs = a.attributes();
                    a.set_attributes(attrs).unwrap();
                    let _ = zarr::metadata::to_bytes(&a.document());
                    let _ = Value::Object(a.attributes()).to_string();
                });
            }
        }
    }
    assert!(n > 60, "{n} variants");
    // a group whose attributes hold tokens consolidates and reopens
    // (a group below the store root: consolidating it once failed with "invalid store key 'g/'")
    let g = Group::create(store.clone(), "g", zarr::metadata::parse_attributes_arg(r#"{"a": [NaN, -Infinity]}"#).unwrap(), 3).unwrap();
    g.create_group("c", zarr::metadata::parse_attributes_arg(r#"{"b": Infinity}"#).unwrap()).unwrap();
    g.consolidate().unwrap();
    let g = Group::open(store, "g", false).unwrap();
    assert!(g.has_consolidated());
    assert_eq!(Value::Object(g.open_group("c").unwrap().attributes()).to_string(), r#"{"b":Infinity}"#);
    // deep nesting with tokens: still an error, not a stack overflow
    let deep = format!("{}NaN{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_err!(zarr::metadata::parse_attributes_arg(&deep), InvalidArgument);
}

