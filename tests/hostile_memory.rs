//! Memory bounded by the request (docs/limits.md), on stores built at run time to be hostile: every
//! case runs in a child process (this test binary run again with just that test) under an
//! address-space cap (`setrlimit(RLIMIT_AS)`, what `prlimit --as` sets), so that an abort or an
//! unbounded allocation fails the case instead of the machine, and the parent asserts the child's peak
//! resident memory.
//!
//! - a metadata document over the metadata ceiling (64 MiB): a sparse 8 GiB `zarr.json`, `.zarray`,
//!   `.zattrs` or `.zmetadata` and a real 65 MiB one are `Error::Memory` naming the ceiling, read not at
//!   all (sparse) or not parsed;
//! - the store option `max_metadata_bytes` sets the ceiling of one store of any kind (filesystem, zip,
//!   memory), over `ZARR_MAX_METADATA_BYTES`, for the size and the JSON values of its documents;
//! - a 60 MiB document is held once while its group opens (the text and one parsed copy: the peak grows
//!   by under 2.7 times the document, where three parsed copies took 3.7 times);
//! - a document of 2 million bare `NaN` tokens (8 MB) is `Error::Memory` before parsing (more JSON values
//!   than the ceiling allows, one per 128 bytes of it); 500 000 of them open, within a bounded peak;
//! - a chunk file extended (sparse) to 8 GiB is `Error::Codec` before it is read, for a compressed chunk,
//!   an uncompressed one (whole and partial reads), a shard, and a write merging into it;
//! - a chunk declared 3 GiB long whose stored zstd frame (13 bytes) announces 3 GiB and is cut short: a
//!   read of its last 16 elements is `Error::Codec`, and the 3 GiB buffer costs resident memory only for
//!   what was decoded (it comes zeroed from the allocator, untouched);
//! - `Array::resize` of v2 and v3 arrays of 2^62 one-element chunks takes time and memory proportional to
//!   the chunks stored: those outside the new shape are deleted, the others kept.

mod common;

use common::{bytes_codec, sharding_codec, v3_array};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarr::store::filesystem::FilesystemStore;
use zarr::store::Store;
use zarr::{Array, Error, Group};

/// The address-space cap of a case's process: far below the sizes the hostile inputs claim (8 GiB
/// files, 2^40-byte answers), above what the library legitimately needs (thread stacks and malloc
/// arenas included).
const CAP: u64 = 2 << 30;

/// The environment variable naming the case a child process runs.
const CHILD: &str = "ZARR_HOSTILE_MEMORY_CASE";

/// Runs `case` in a child process under [`CAP`] and returns the child's peak resident memory in bytes;
/// in the child (`CHILD` names this test), applies the cap and runs `case` itself.
fn capped(name: &str, case: fn()) -> u64 {
    capped_at(name, CAP, case)
}

/// [`capped`] under an address-space cap of `cap` bytes ([`common::capped::run_capped`]).
fn capped_at(name: &str, cap: u64, case: fn()) -> u64 {
    common::capped::run_capped(CHILD, name, cap, case)
}

/// A fresh, empty directory for one case.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zarr-hostile-memory-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fs_store(root: &Path) -> Arc<dyn Store> {
    Arc::new(FilesystemStore::new(root))
}

/// Extends (sparse) or creates the file `path` to `len` bytes.
fn sparse(path: &Path, len: u64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap().set_len(len).unwrap();
}

/// Writes `content` to `path`, creating its directory.
fn write(path: &Path, content: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// Fails unless `r` is an error of variant `kind` whose message contains `needle`.
fn expect_err<T: std::fmt::Debug>(what: &str, r: zarr::Result<T>, kind: fn(&Error) -> bool, needle: &str) {
    match r {
        Err(e) if kind(&e) && e.to_string().contains(needle) => {}
        other => panic!("{what}: expected an error containing {needle:?}, got {other:?}"),
    }
}

fn is_memory(e: &Error) -> bool {
    matches!(e, Error::Memory(_))
}

fn is_codec(e: &Error) -> bool {
    matches!(e, Error::Codec(_))
}

const EIGHT_GIB: u64 = 8 << 30;

fn case_metadata_ceiling() {
    let d = scratch("ceiling");
    let store = fs_store(&d);
    // Sparse documents: refused by their size, before a byte is read.
    sparse(&d.join("big3/zarr.json"), EIGHT_GIB);
    expect_err("v3 array", Array::open(store.clone(), "big3", false), is_memory, "metadata ceiling");
    expect_err("v3 group", Group::open(store.clone(), "big3", false), is_memory, "metadata ceiling");
    sparse(&d.join("big2/.zarray"), EIGHT_GIB);
    expect_err("v2 .zarray", Array::open(store.clone(), "big2", false), is_memory, "metadata ceiling");
    write(
        &d.join("v2/.zarray"),
        json!({"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "|u1", "compressor": null,
               "fill_value": 0, "order": "C", "filters": null})
        .to_string(),
    );
    sparse(&d.join("v2/.zattrs"), EIGHT_GIB);
    expect_err("v2 .zattrs", Array::open(store.clone(), "v2", false), is_memory, "metadata ceiling");
    write(&d.join("g/.zgroup"), r#"{"zarr_format": 2}"#);
    sparse(&d.join("g/.zmetadata"), EIGHT_GIB);
    expect_err("v2 .zmetadata", Group::open(store.clone(), "g", false), is_memory, "metadata ceiling");
    // A real document of 65 MiB (a 30-million-element attribute list): refused before parsing.
    let mut doc = br#"{"zarr_format": 3, "node_type": "group", "attributes": {"list": ["#.to_vec();
    while doc.len() < (65 << 20) {
        doc.extend_from_slice(b"1,");
    }
    doc.extend_from_slice(b"1]}}");
    write(&d.join("real/zarr.json"), &doc);
    drop(doc);
    expect_err("65 MiB document", Group::open(store.clone(), "real", false), is_memory, "metadata ceiling");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn metadata_over_the_ceiling_is_refused() {
    let peak = capped("metadata_over_the_ceiling_is_refused", case_metadata_ceiling);
    // The 65 MiB text is built and written by the case itself (one copy, its doubling growth, one read
    // back); nothing else may come near the claimed sizes.
    assert!(peak < 400 << 20, "peak {peak}");
}

/// A group document of about `len` bytes whose attribute `list` holds strings of 1000 bytes (few JSON
/// values for its size), with the number of strings.
fn group_document(len: usize) -> (Vec<u8>, usize) {
    let mut doc = br#"{"zarr_format": 3, "node_type": "group", "attributes": {"list": ["#.to_vec();
    let item = format!("\"{}\"", "x".repeat(998));
    let mut n = 0;
    while doc.len() < len {
        if n > 0 {
            doc.push(b',');
        }
        doc.extend_from_slice(item.as_bytes());
        n += 1;
    }
    doc.extend_from_slice(b"]}}");
    (doc, n)
}

/// Opens the group at `location` with the store option `max_metadata_bytes` (when given).
fn open_with_ceiling(location: &str, ceiling: Option<u64>) -> zarr::Result<Group> {
    let mut o = zarr::store::StoreOptions::new();
    if let Some(c) = ceiling {
        o.set("max_metadata_bytes", &c.to_string())?;
    }
    Group::open(zarr::store::open_location_with(location, &o)?, "", false)
}

fn case_ceiling_option() {
    // The process-wide ceiling, 1 MiB, from the environment (read on first use, in this child alone).
    std::env::set_var("ZARR_MAX_METADATA_BYTES", (1u64 << 20).to_string());
    let d = scratch("ceiling-option");
    let (doc, n) = group_document(2 << 20);
    // A v3 group, a v2 group with a 2 MiB .zattrs and one with a 2 MiB .zmetadata, on the filesystem.
    write(&d.join("v3/zarr.json"), &doc);
    write(&d.join("v2/.zgroup"), r#"{"zarr_format": 2}"#);
    let mut attrs = br#"{"list": ["#.to_vec();
    attrs.extend_from_slice(&doc[doc.iter().position(|&b| b == b'[').unwrap() + 1..doc.len() - 1]);
    write(&d.join("v2/.zattrs"), &attrs);
    write(&d.join("v2c/.zgroup"), r#"{"zarr_format": 2}"#);
    let mut zmeta = br#"{"zarr_consolidated_format": 1, "metadata": {".zgroup": {"zarr_format": 2}, ".zattrs": "#.to_vec();
    zmeta.extend_from_slice(&attrs);
    zmeta.extend_from_slice(b"}}");
    write(&d.join("v2c/.zmetadata"), &zmeta);
    // The same v3 group in a zip archive and in a named memory store.
    let zip_path = d.join("g.zip");
    {
        use std::io::Write;
        let mut w = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
        let o = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        w.start_file("zarr.json", o).unwrap();
        w.write_all(&doc).unwrap();
        w.finish().unwrap();
    }
    zarr::store::open_location("memory://ceiling-option").unwrap().set("zarr.json", &doc).unwrap();
    let locations = [
        format!("{}/v3", d.display()),
        format!("file://{}/v2", d.display()),
        format!("{}/v2c", d.display()),
        format!("zip://{}", zip_path.display()),
        "memory://ceiling-option".to_string(),
    ];
    for loc in &locations {
        // The environment's 1 MiB: refused, the message naming both settings.
        expect_err(loc, open_with_ceiling(loc, None), is_memory, "store option max_metadata_bytes or ZARR_MAX_METADATA_BYTES");
        // The store option wins over the environment, both ways.
        let g = open_with_ceiling(loc, Some(4 << 20)).unwrap_or_else(|e| panic!("{loc}: {e}"));
        if !loc.ends_with("v2c") {
            // (v2c's group attributes are its own .zattrs, absent; the 2 MiB is its .zmetadata.)
            assert_eq!(g.attributes()["list"].as_array().unwrap().len(), n, "{loc}");
        }
        expect_err(loc, open_with_ceiling(loc, Some(64 << 10)), is_memory, "metadata ceiling of 65536 bytes");
    }
    // The ceiling bounds the JSON values too (one per 128 bytes): 200 KB of `1,` (100 000 values) is
    // within a 1 MiB ceiling by size but not by values; a 16 MiB ceiling allows them.
    let mut ones = br#"{"zarr_format": 3, "node_type": "group", "attributes": {"list": [1"#.to_vec();
    for _ in 1..100_000 {
        ones.extend_from_slice(b",1");
    }
    ones.extend_from_slice(b"]}}");
    write(&d.join("ones/zarr.json"), &ones);
    let ones_loc = format!("{}/ones", d.display());
    expect_err("values", open_with_ceiling(&ones_loc, Some(1 << 20)), is_memory, "JSON values");
    assert_eq!(open_with_ceiling(&ones_loc, Some(16 << 20)).unwrap().attributes()["list"].as_array().unwrap().len(), 100_000);
    // Out of range or malformed: refused when set.
    let mut o = zarr::store::StoreOptions::new();
    for bad in ["0", "-1", "1e6", &((1u64 << 48) + 1).to_string()] {
        assert!(matches!(o.set("max_metadata_bytes", bad), Err(Error::InvalidArgument(_))), "{bad}");
    }
    zarr::store::memory::remove_named("ceiling-option").unwrap();
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn the_store_option_max_metadata_bytes_wins_over_the_environment() {
    let peak = capped("the_store_option_max_metadata_bytes_wins_over_the_environment", case_ceiling_option);
    assert!(peak < 400 << 20, "peak {peak}");
}

/// This process's peak resident memory so far, in bytes.
fn peak_rss() -> u64 {
    // SAFETY: an all-zero rusage is valid; getrusage fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is valid for writes.
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) }, 0);
    usage.ru_maxrss as u64 * 1024
}

fn case_json_held_once() {
    // A 60 MiB group document (under the 64 MiB ceiling), nearly all attributes: 300 000 strings of
    // 200 bytes, written piece by piece so that the process holds none of it before the open.
    let d = scratch("json-once");
    std::fs::create_dir_all(d.join("g")).unwrap();
    let n = 300_000;
    let item = format!("\"{}\"", "y".repeat(198));
    let len = {
        use std::io::Write;
        let mut w = std::io::BufWriter::new(std::fs::File::create(d.join("g/zarr.json")).unwrap());
        w.write_all(br#"{"zarr_format": 3, "node_type": "group", "attributes": {"list": ["#).unwrap();
        for i in 0..n {
            w.write_all(if i > 0 { b"," } else { b"" }).unwrap();
            w.write_all(item.as_bytes()).unwrap();
        }
        w.write_all(b"]}}").unwrap();
        w.flush().unwrap();
        std::fs::metadata(d.join("g/zarr.json")).unwrap().len()
    };
    assert!(len > 57 << 20 && len < 64 << 20, "{len}");
    let before = peak_rss();
    // And the address space: at most 200 MiB more than now for the open (the old three copies
    // needed about 240 MiB more, and aborted under this cap).
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    let size = statm.split_whitespace().next().unwrap().parse::<u64>().unwrap() * page;
    let lim = libc::rlimit { rlim_cur: size + (200 << 20), rlim_max: CAP };
    // SAFETY: setrlimit reads the struct we pass.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) }, 0, "setrlimit");
    let g = Group::open(fs_store(&d), "g", false).unwrap();
    let lim = libc::rlimit { rlim_cur: CAP, rlim_max: CAP };
    // SAFETY: as above (raising the soft limit back up to the hard one).
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) }, 0, "setrlimit");
    let grown = peak_rss().saturating_sub(before);
    // The text (60 MiB) and one parsed copy (about 1.2 times the text: a 32-byte value and a 200-byte
    // string per element), the text freed once parsed: about 2.3 times the document. Holding the
    // parsed document three times over (the parsed value, the kept document, the attributes), as
    // opening did before, took about 3.7 times (220 MiB).
    eprintln!("opening a {} MiB document grew the peak by {} MiB", len >> 20, grown >> 20);
    assert!(grown < len * 27 / 10, "opening a {len}-byte document grew the peak resident memory by {grown} bytes");
    let attrs = g.attributes();
    let list = attrs["list"].as_array().unwrap();
    assert_eq!(list.len(), n);
    assert!(list.iter().all(|v| v.as_str().is_some_and(|s| s.len() == 198)));
    // The document given back has its attributes, where they were.
    let doc = g.document();
    assert_eq!(doc.as_object().unwrap().keys().collect::<Vec<_>>(), ["zarr_format", "node_type", "attributes"]);
    assert_eq!(doc["attributes"]["list"].as_array().unwrap().len(), n);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_document_is_held_once_while_a_node_opens() {
    capped("a_document_is_held_once_while_a_node_opens", case_json_held_once);
}

/// A group document whose attribute `nan` is a list of `n` bare NaN tokens.
fn nan_document(n: usize) -> Vec<u8> {
    let mut doc = br#"{"zarr_format": 3, "node_type": "group", "attributes": {"nan": ["#.to_vec();
    for i in 0..n {
        doc.extend_from_slice(if i + 1 < n { b"NaN," } else { b"NaN" });
    }
    doc.extend_from_slice(b"]}}");
    doc
}

fn case_nan_tokens_refused() {
    let d = scratch("nan2m");
    let doc = nan_document(2_000_000);
    assert_eq!(doc.len() / 1_000_000, 8, "8 MB of NaN");
    write(&d.join("g/zarr.json"), &doc);
    drop(doc);
    expect_err("2 million NaN", Group::open(fs_store(&d), "g", false), is_memory, "JSON values");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn two_million_nan_tokens_are_refused_before_parsing() {
    let peak = capped("two_million_nan_tokens_are_refused_before_parsing", case_nan_tokens_refused);
    assert!(peak < 100 << 20, "peak {peak}: the document is refused before parsing");
}

fn case_nan_tokens_within() {
    let d = scratch("nan500k");
    let n = 500_000;
    write(&d.join("g/zarr.json"), nan_document(n));
    let g = Group::open(fs_store(&d), "g", false).unwrap();
    let attrs = g.attributes();
    let list = attrs["nan"].as_array().unwrap();
    assert_eq!(list.len(), n);
    assert!(list.iter().all(|v| v.as_number().is_some_and(|x| x.as_str() == "NaN")));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn half_a_million_nan_tokens_open_within_bounds() {
    let peak = capped("half_a_million_nan_tokens_open_within_bounds", case_nan_tokens_within);
    // 2 MB of text, close to the most values the default ceiling allows: about 110 bytes a parsed
    // value, held once while the group opens (with the text) and a second time returned by
    // attributes(), so under 2 x the 64 MiB ceiling plus the caller's copy (docs/limits.md).
    assert!(peak < 256 << 20, "peak {peak}");
}

fn case_sparse_chunks() {
    let d = scratch("sparse");
    let store = fs_store(&d);
    let data: Vec<u8> = (0..256u32).flat_map(|i| (i * 7).to_le_bytes()).collect();
    let arrays = [
        ("zstd", json!([bytes_codec("little"), {"name": "zstd", "configuration": {"level": 3, "checksum": false}}]), "c/0/0"),
        ("plain", json!([bytes_codec("little")]), "c/0/0"),
        ("shard", json!([sharding_codec(&[4, 4], json!([bytes_codec("little"), {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]), "end")]), "c/0/0"),
    ];
    for (name, codecs, key) in arrays {
        let a = Array::create(store.clone(), name, &v3_array(&[16, 16], &[16, 16], "uint32", json!(0), codecs)).unwrap();
        a.write_region(&[0, 0], &[16, 16], &data).unwrap();
        sparse(&d.join(name).join(key), EIGHT_GIB);
        let a = Array::open(store.clone(), name, true).unwrap();
        let mut whole = vec![0u8; 1024];
        expect_err(&format!("{name}: whole read"), a.read_region(&[0, 0], &[16, 16], &mut whole), is_codec, "longer than any encoding");
        let mut four = vec![0u8; 16];
        expect_err(&format!("{name}: 2x2 read"), a.read_region(&[3, 3], &[2, 2], &mut four), is_codec, "longer than any encoding");
        expect_err(&format!("{name}: 1x1 write"), a.write_region(&[1, 1], &[1, 1], &[1, 0, 0, 0]), is_codec, "longer than any encoding");
        expect_err(&format!("{name}: whole chunk"), a.read_whole_chunk(&[0, 0], &mut whole), is_codec, "longer than any encoding");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn chunk_files_longer_than_any_encoding_are_not_read() {
    let peak = capped("chunk_files_longer_than_any_encoding_are_not_read", case_sparse_chunks);
    assert!(peak < 100 << 20, "peak {peak}");
}

fn resize_case(tag: &str, v2: bool) {
    let d = scratch(tag);
    let store = fs_store(&d);
    let n: u64 = 1 << 62;
    let doc = if v2 {
        json!({"zarr_format": 2, "shape": [n], "chunks": [1], "dtype": "<i2", "compressor": null,
               "fill_value": 0, "order": "C", "filters": null, "dimension_separator": "."})
        .to_string()
    } else {
        v3_array(&[n], &[1], "int16", json!(0), json!([bytes_codec("little")]))
    };
    let mut a = Array::create(store.clone(), "a", &doc).unwrap();
    // Chunks stored at both ends of the grid, and near the new edge.
    let stored = [0u64, 5, 9, 10, 11, 1 << 40, n - 1];
    for &i in &stored {
        a.write_region(&[i], &[1], &7i16.to_le_bytes()).unwrap();
    }
    let t = std::time::Instant::now();
    a.resize(&[10]).unwrap();
    assert!(t.elapsed().as_secs() < 20, "resize took {:?}", t.elapsed());
    let key = |i: u64| if v2 { format!("a/{i}") } else { format!("a/c/{i}") };
    for &i in &stored {
        assert_eq!(store.exists(&key(i)).unwrap(), i < 10, "chunk {i}");
    }
    let a = Array::open(store.clone(), "a", false).unwrap();
    let mut out = vec![0u8; 20];
    a.read_region(&[0], &[10], &mut out).unwrap();
    let got: Vec<i16> = out.chunks(2).map(|b| i16::from_le_bytes([b[0], b[1]])).collect();
    assert_eq!(got, [7, 0, 0, 0, 0, 7, 0, 0, 0, 7]);
    // Growing back to 2^62 shows the deleted chunks as fill values.
    let mut a = Array::open(store.clone(), "a", true).unwrap();
    a.resize(&[n]).unwrap();
    let mut one = vec![0u8; 2];
    a.read_region(&[n - 1], &[1], &mut one).unwrap();
    assert_eq!(one, [0, 0]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn resizing_a_grid_of_2_62_chunks_follows_the_stored_chunks_v3() {
    let peak = capped("resizing_a_grid_of_2_62_chunks_follows_the_stored_chunks_v3", || resize_case("resize3", false));
    assert!(peak < 100 << 20, "peak {peak}");
}

#[test]
fn resizing_a_grid_of_2_62_chunks_follows_the_stored_chunks_v2() {
    let peak = capped("resizing_a_grid_of_2_62_chunks_follows_the_stored_chunks_v2", || resize_case("resize2", true));
    assert!(peak < 100 << 20, "peak {peak}");
}

fn case_declared_huge_chunk() {
    let d = scratch("declared");
    let store = fs_store(&d);
    let n: u64 = 3 << 30;
    let zstd = json!({"name": "zstd", "configuration": {"level": 3, "checksum": false}});
    Array::create(store.clone(), "a", &v3_array(&[n], &[n], "uint8", json!(0), json!([bytes_codec("little"), zstd]))).unwrap();
    // A zstd frame announcing 3 GiB (single segment, 4-byte content size), one RLE block of 128 KiB of
    // 7s, and nothing more: it is cut short.
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0xa0];
    frame.extend_from_slice(&(n as u32).to_le_bytes());
    let block = (1u32 << 1) | (131072 << 3);
    frame.extend_from_slice(&block.to_le_bytes()[..3]);
    frame.push(7);
    write(&d.join("a/c/0"), &frame);
    let a = Array::open(store, "a", false).unwrap();
    let mut out = vec![0u8; 16];
    expect_err("the last 16 elements", a.read_region(&[n - 16], &[16], &mut out), is_codec, "zstd");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_declared_3_gib_chunk_costs_only_what_its_stored_bytes_decode_to() {
    // The cap leaves room for the declared chunk's buffer (address space), not for touching it.
    let peak = capped_at("a_declared_3_gib_chunk_costs_only_what_its_stored_bytes_decode_to", 5 << 30, case_declared_huge_chunk);
    assert!(peak < 100 << 20, "peak {peak}: the declared 3 GiB buffer was written, not just allocated");
}

/// Parts of the selection one read touches: 2 million one-element chunks.
const STEPPED_PARTS: u64 = 2 << 20;

/// A read of every 524 288th element of an array of 2^40 one-element chunks: 2 Mi chunks touched for a
/// 2 MiB buffer. Listing their parts took about 400 bytes each (a peak of 830 MiB; under the 768 MiB cap
/// of this case the process aborted); reads take them 16 384 at a time (`Selection::parts`), so memory
/// follows the buffer. Two threads, so that the cap does not depend on the machine's CPUs.
fn case_stepped_read() {
    std::env::set_var("ZARR_NUM_THREADS", "2");
    let store: Arc<dyn Store> = Arc::new(zarr::store::memory::MemoryStore::new());
    let n: u64 = 1 << 40;
    let step = n / STEPPED_PARTS;
    let a = Array::create(store.clone(), "a", &v3_array(&[n], &[1], "uint8", json!(7), json!([bytes_codec("little")]))).unwrap();
    // A few stored chunks among the selected ones (the rest read as the fill value, 7).
    for k in [0u64, 1, 12345, STEPPED_PARTS - 1] {
        a.write_region(&[k * step], &[1], &[(k % 200) as u8 + 20]).unwrap();
    }
    let mut out = vec![0u8; STEPPED_PARTS as usize];
    let u8_type = zarr::dtype::DataType::UInt8;
    a.read_hyperslab(&[0], &[STEPPED_PARTS], Some(&[step]), None, &u8_type, &mut out).unwrap();
    for (k, v) in out.iter().enumerate() {
        let k = k as u64;
        let want = if [0, 1, 12345, STEPPED_PARTS - 1].contains(&k) { (k % 200) as u8 + 20 } else { 7 };
        assert_eq!(*v, want, "element {k}");
    }
}

#[test]
fn a_stepped_read_of_millions_of_chunks_holds_a_batch_of_parts_at_a_time() {
    let peak = capped_at("a_stepped_read_of_millions_of_chunks_holds_a_batch_of_parts_at_a_time", 768 << 20, case_stepped_read);
    assert!(peak < 128 << 20, "peak {} MiB", peak >> 20);
}

/// A write of every 524 288th element of an array of 2^40 one-element chunks from a 2 MiB buffer: 2 Mi
/// chunks touched. Listing their parts took about 400 bytes each (800 MiB: `Error::Memory` under this
/// cap); writes take them 16 384 at a time and lock at most 4096 runs of chunks, and with every chunk
/// covered whole they skip the checking pass. One value in 4096 differs from the fill value (7): those
/// chunks are stored, the others deleted (a few were stored before) or never stored. Chunks between
/// the selected ones keep their values.
fn case_stepped_write() {
    std::env::set_var("ZARR_NUM_THREADS", "2");
    let store: Arc<dyn Store> = Arc::new(zarr::store::memory::MemoryStore::new());
    let n: u64 = 1 << 40;
    let step = n / STEPPED_PARTS;
    let a = Array::create(store.clone(), "a", &v3_array(&[n], &[1], "uint8", json!(7), json!([bytes_codec("little")]))).unwrap();
    let before = [0u64, 3, 12345, STEPPED_PARTS - 1];
    for k in before {
        a.write_region(&[k * step], &[1], &[1]).unwrap();
        a.write_region(&[k * step + 1], &[1], &[2]).unwrap();
    }
    let value = |k: u64| if k % 4096 == 1 { (k / 4096 % 200) as u8 + 20 } else { 7 };
    let data: Vec<u8> = (0..STEPPED_PARTS).map(value).collect();
    let u8_type = zarr::dtype::DataType::UInt8;
    a.write_hyperslab(&[0], &[STEPPED_PARTS], Some(&[step]), None, &u8_type, &data).unwrap();
    let mut out = vec![0u8; STEPPED_PARTS as usize];
    a.read_hyperslab(&[0], &[STEPPED_PARTS], Some(&[step]), None, &u8_type, &mut out).unwrap();
    if let Some(k) = (0..out.len()).find(|&k| out[k] != data[k]) {
        panic!("element {k}: read {} after writing {}", out[k], data[k]);
    }
    for k in before {
        let mut one = [0u8];
        a.read_region(&[k * step + 1], &[1], &mut one).unwrap();
        assert_eq!(one, [2], "the chunk after selected chunk {k}");
    }
    // Stored: the 512 chunks of other values and the 4 unselected ones.
    assert_eq!(store.list_dir("a/c/").unwrap().keys.len(), 512 + before.len());
}

#[test]
fn a_stepped_write_of_millions_of_chunks_holds_a_batch_of_parts_at_a_time() {
    let peak = capped_at("a_stepped_write_of_millions_of_chunks_holds_a_batch_of_parts_at_a_time", 768 << 20, case_stepped_write);
    assert!(peak < 128 << 20, "peak {} MiB", peak >> 20);
}

/// Chunks of this case: 300 of 1 MiB.
const BIG_CHUNK: u64 = 1 << 20;
const BIG_CHUNKS: u64 = 300;

/// A write of one element into each of 300 stored chunks of 1 MiB (zstd): every chunk is decoded
/// before any is stored, so a corrupt one (the last) fails the call with nothing stored; but only what
/// fits 64 MiB beyond the caller's 300 bytes is kept between the two passes (the rest is decoded again
/// when stored). Keeping every decoded chunk, as writes did, took 300 MiB.
fn case_partial_chunks_beyond_the_hold() {
    std::env::set_var("ZARR_NUM_THREADS", "2");
    let store: Arc<dyn Store> = Arc::new(zarr::store::memory::MemoryStore::new());
    let zstd = json!({"name": "zstd", "configuration": {"level": 1, "checksum": false}});
    let doc = v3_array(&[BIG_CHUNKS * BIG_CHUNK], &[BIG_CHUNK], "uint8", json!(0), json!([bytes_codec("little"), zstd]));
    let a = Array::create(store.clone(), "a", &doc).unwrap();
    let old = |c: u64| (c % 250) as u8 + 1;
    let mut whole = vec![0u8; BIG_CHUNK as usize];
    let mut store_chunk = |c: u64| {
        whole.fill(old(c));
        a.write_whole_chunk(&[c], &whole).unwrap();
    };
    (0..BIG_CHUNKS).for_each(&mut store_chunk);
    let good_last = store.get("a/c/299").unwrap().unwrap();
    store.set("a/c/299", &[0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0]).unwrap();
    let new = |c: u64| 253 + (c % 3) as u8;
    let data: Vec<u8> = (0..BIG_CHUNKS).map(new).collect();
    let u8_type = zarr::dtype::DataType::UInt8;
    let write = || a.write_hyperslab(&[5], &[BIG_CHUNKS], Some(&[BIG_CHUNK]), None, &u8_type, &data);
    expect_err("a corrupt last chunk", write(), is_codec, "a/c/299");
    let read = |offset: u64, count: u64| {
        let mut out = vec![0u8; count as usize];
        a.read_hyperslab(&[offset], &[count], Some(&[BIG_CHUNK]), None, &u8_type, &mut out).unwrap();
        out
    };
    assert!(read(5, BIG_CHUNKS - 1).iter().enumerate().all(|(c, &v)| v == old(c as u64)), "nothing was stored");
    store.set("a/c/299", &good_last).unwrap();
    write().unwrap();
    assert_eq!(read(5, BIG_CHUNKS), data);
    assert!(read(4, BIG_CHUNKS).iter().enumerate().all(|(c, &v)| v == old(c as u64)));
    assert!(read(6, BIG_CHUNKS).iter().enumerate().all(|(c, &v)| v == old(c as u64)));
}

#[test]
fn a_write_into_many_chunks_covered_in_part_keeps_a_bounded_share_of_them_decoded() {
    let peak = capped("a_write_into_many_chunks_covered_in_part_keeps_a_bounded_share_of_them_decoded", case_partial_chunks_beyond_the_hold);
    assert!(peak < 160 << 20, "peak {} MiB", peak >> 20);
}
