//! Hostile JSON reference files (`reference://`, kerchunk's JSON layout): memory follows the ceilings of
//! docs/limits.md ("JSON reference files"), not what the document's shape makes a JSON tree cost. Every
//! case runs in a child process under an address-space cap of 2 GiB (as `prlimit --as`), so that an
//! abort fails the case, not the machine, and the parent checks the child's peak resident memory.
//!
//! - a 60 MB reference whose value is an array of 30 million numbers (a JSON tree of about 2.4 GB,
//!   which aborted the process) is `Error::Metadata` naming the key;
//! - 1.1 million tiny references (`"0": ""`, 12 MB) are `Error::Memory`: more than one reference per
//!   64 bytes of the metadata ceiling, and under a ceiling of 64 MiB they open;
//! - a `gen` list and an inline JSON object of 20 million numbers each are `Error::Memory` (more JSON
//!   values than the ceiling allows outside the reference map);
//! - 500 000 real references (`[url, offset, length]`, one URL) open within a bounded peak, and read back.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use zarr::store::options::StoreOptions;
use zarr::store::reference::ReferenceStore;
use zarr::store::Store;
use zarr::Error;

const CAP: u64 = 2 << 30;
const CHILD: &str = "ZARR_HOSTILE_REFERENCES_CASE";

fn capped(name: &str, case: fn()) -> u64 {
    common::capped::run_capped(CHILD, name, CAP, case)
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zarr-hostile-references-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `head`, `n` items made by `item` separated by commas, then `tail`, into `path`.
fn write_doc(path: &Path, head: &str, n: usize, item: impl Fn(usize) -> String, tail: &str) -> u64 {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    w.write_all(head.as_bytes()).unwrap();
    for i in 0..n {
        if i > 0 {
            w.write_all(b",").unwrap();
        }
        w.write_all(item(i).as_bytes()).unwrap();
    }
    w.write_all(tail.as_bytes()).unwrap();
    w.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

fn open(path: &Path, ceiling: Option<u64>) -> zarr::Result<ReferenceStore> {
    let mut o = StoreOptions::default();
    if let Some(c) = ceiling {
        o.set("max_metadata_bytes", &c.to_string()).unwrap();
    }
    ReferenceStore::open(path, &o)
}

fn expect(what: &str, r: zarr::Result<ReferenceStore>, ok: fn(&Error) -> bool, needle: &str) {
    match r {
        Ok(_) => panic!("{what}: opened"),
        Err(e) => {
            assert!(ok(&e), "{what}: {e:?}");
            assert!(e.message().contains(needle), "{what}: '{e}' does not say '{needle}'");
        }
    }
}

fn case_long_array() {
    let d = scratch("array");
    let f = d.join("refs.json");
    let len = write_doc(&f, r#"{"version": 1, "refs": {"zarr.json": ["#, 30_000_000, |_| "1".into(), "]}}");
    assert!(len < 64 << 20);
    expect("30 million numbers", open(&f, None), |e| matches!(e, Error::Metadata(_)), "'zarr.json'");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_reference_of_thirty_million_numbers_is_refused_without_its_json_tree() {
    let peak = capped("a_reference_of_thirty_million_numbers_is_refused_without_its_json_tree", case_long_array);
    // the 60 MB text and a few MiB: the tree of 30 million values (2.4 GB) is never built
    assert!(peak < 160 << 20, "peak {peak}");
}

fn case_tiny_references() {
    let d = scratch("tiny");
    let f = d.join("refs.json");
    let n = 1_100_000;
    write_doc(&f, "{", n, |i| format!("\"{i}\":\"\""), "}");
    expect("1.1 million references", open(&f, None), |e| matches!(e, Error::Memory(_)), "references");
    // a larger ceiling admits them
    let s = open(&f, Some(128 << 20)).unwrap();
    assert_eq!(s.get("1099999").unwrap(), Some(Vec::new()));
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn more_references_than_the_ceiling_allows_are_refused() {
    let peak = capped("more_references_than_the_ceiling_allows_are_refused", case_tiny_references);
    // 1.1 million references held (about 150 bytes each) under the larger ceiling
    assert!(peak < 400 << 20, "peak {peak}");
}

fn case_values() {
    let d = scratch("values");
    let f = d.join("gen.json");
    write_doc(&f, r#"{"version": 1, "gen": ["#, 20_000_000, |_| "1".into(), "]}");
    expect("a gen list of 20 million", open(&f, None), |e| matches!(e, Error::Memory(_)), "JSON values");
    let f = d.join("inline.json");
    write_doc(&f, r#"{"version": 1, "refs": {"a/.zattrs": {"x": ["#, 20_000_000, |_| "1".into(), "]}}}");
    expect("an inline object of 20 million", open(&f, None), |e| matches!(e, Error::Memory(_)), "JSON values");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn json_values_outside_the_reference_map_are_bounded() {
    let peak = capped("json_values_outside_the_reference_map_are_bounded", case_values);
    assert!(peak < 200 << 20, "peak {peak}");
}

fn case_real_references() {
    let d = scratch("real");
    let f = d.join("refs.json");
    let n = 500_000;
    let len = write_doc(
        &f,
        r#"{"version": 1, "templates": {"u": "data/file.nc"}, "refs": {".zgroup": "{\"zarr_format\": 2}", "#,
        n,
        |i| format!("\"x/{}.{}\": [\"{{{{u}}}}\", {}, 1000]", i / 1000, i % 1000, 4096 + i as u64 * 1000),
        "}}",
    );
    let s = open(&f, None).unwrap();
    assert_eq!(s.get(".zgroup").unwrap().as_deref(), Some(&br#"{"zarr_format": 2}"#[..]));
    assert_eq!(s.list_dir("x/").unwrap().keys.len(), n);
    eprintln!("{n} references in {} MB opened", len / 1_000_000);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn half_a_million_references_open_within_bounds() {
    let peak = capped("half_a_million_references_open_within_bounds", case_real_references);
    // the text (20 MB) and 500 000 references of about 150 bytes
    assert!(peak < 160 << 20, "peak {peak}");
}
