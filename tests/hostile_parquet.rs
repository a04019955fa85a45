//! Hostile Parquet reference files (kerchunk's Parquet layout, `reference://DIR`): each record file of
//! `tests/hostile_parquet_files/` (made by `tools/make_hostile_parquet.py`) claims far more than it
//! holds in one field a Parquet reader sizes buffers from (the footer's length, a list's length, a page's
//! decoded or stored size, a dictionary's values, a statistics byte string, a page's values, a row group's
//! rows) or nests its footer 100 000 deep. Each case runs in a child process under a 1 GiB address-space
//! cap (`setrlimit(RLIMIT_AS)`, as `prlimit --as` sets it; [`common::capped`]) and must be
//! `Error::Metadata` naming the file, at a small peak; `valid.parq`, the same file without the claim,
//! reads its value. Before the checks of `src/store/parquet_check.rs` the schema list, decoded page size
//! and dictionary cases aborted the process under the cap (allocations of 192 GiB, 2 GiB and 64 GiB),
//! and the page values and row group rows cases panicked inside the crate.

mod common;

use std::path::{Path, PathBuf};
use zarr::store::location::open_location;
use zarr::{Array, Error};

/// The address-space cap of a case's process: far below the 2 GiB to 1 TiB the files claim.
const CAP: u64 = 1 << 30;

/// The environment variable naming the case a child process runs.
const CHILD: &str = "ZARR_HOSTILE_PARQUET_CASE";

/// The most resident memory a case may peak at.
const PEAK: u64 = 128 << 20;

/// A reference directory holding array `v` (5 bytes, one chunk) whose record file is fixture `name`.
fn refs_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zarr-hostile-parquet-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("v")).unwrap();
    let zarray = r#"{"zarr_format": 2, "shape": [5], "chunks": [5], "dtype": "|u1", "compressor": null, "filters": null, "fill_value": 0, "order": "C"}"#;
    let zmeta = serde_json::json!({"metadata": {".zgroup": "{\"zarr_format\": 2}", "v/.zarray": zarray}, "record_size": 10});
    std::fs::write(d.join(".zmetadata"), zmeta.to_string()).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile_parquet_files").join(format!("{name}.parq"));
    std::fs::copy(src, d.join("v/refs.0.parq")).unwrap();
    d
}

/// Reads array `v` of the reference directory made from fixture `name`.
fn read(name: &str) -> zarr::Result<Vec<u8>> {
    let d = refs_dir(name);
    let r = (|| {
        let store = open_location(&format!("reference://{}", d.display()))?;
        let a = Array::open(store, "v", false)?;
        let mut out = vec![0u8; 5];
        a.read_region(&[0], &[5], &mut out)?;
        Ok(out)
    })();
    let _ = std::fs::remove_dir_all(&d);
    r
}

/// Runs `case` (the read of one fixture) in a child under the cap: the test `name` there.
fn hostile(name: &str, case: fn()) {
    let peak = common::capped::run_capped(CHILD, name, CAP, case);
    assert!(peak < PEAK, "{name}: peak {} MiB", peak >> 20);
}

/// The expected message of each case.
fn why(name: &str) -> &'static str {
    match name {
        "footer_length" => "footer",
        "schema_list" => "list",
        "page_uncompressed" => "decoded size",
        "page_compressed" => "stored size",
        "dictionary_values" => "values",
        "statistics_length" => "byte string",
        "page_values" => "values",
        "row_group_rows" => "rows",
        "footer_depth" => "nested",
        _ => unreachable!(),
    }
}

/// Fails unless reading fixture `name` is `Error::Metadata` naming the record file and the claim.
fn expect(name: &str) {
    match read(name) {
        Err(e @ Error::Metadata(_)) => {
            let m = e.to_string();
            assert!(m.contains("refs.0.parq") && m.contains(why(name)), "{name}: {m}");
        }
        other => panic!("{name}: expected a metadata error, got {other:?}"),
    }
}

#[test]
fn valid_reads() {
    assert_eq!(read("valid").unwrap(), b"hello");
}

#[test]
fn footer_length() {
    hostile("footer_length", || expect("footer_length"));
}

#[test]
fn schema_list() {
    hostile("schema_list", || expect("schema_list"));
}

#[test]
fn page_uncompressed() {
    hostile("page_uncompressed", || expect("page_uncompressed"));
}

#[test]
fn page_compressed() {
    hostile("page_compressed", || expect("page_compressed"));
}

#[test]
fn dictionary_values() {
    hostile("dictionary_values", || expect("dictionary_values"));
}

#[test]
fn statistics_length() {
    hostile("statistics_length", || expect("statistics_length"));
}

#[test]
fn page_values() {
    hostile("page_values", || expect("page_values"));
}

#[test]
fn row_group_rows() {
    hostile("row_group_rows", || expect("row_group_rows"));
}

#[test]
fn footer_depth() {
    hostile("footer_depth", || expect("footer_depth"));
}
