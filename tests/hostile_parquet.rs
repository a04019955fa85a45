//! Hostile Parquet reference files (kerchunk's Parquet layout, `reference://DIR`): each record file of
//! `tests/hostile_parquet_files/` (made by `tools/make_hostile_parquet.py`) claims far more than it
//! holds in one field a Parquet reader sizes buffers from (the footer's length, a list's length, a page's
//! decoded or stored size, a dictionary's values, a statistics byte string, a page's values, a row group's
//! rows, a schema element's children) or nests its footer 100 000 deep, or passes one of the ceilings of
//! docs/limits.md ("Parquet reference files") with what it really holds (65 schema elements, 60 000
//! nested, a footer of 1 MiB + 1 KiB or of 70 000 list elements, 11 rows for a record size of 10, a
//! dictionary value named by 20 000 rows). Each case runs in a child process under a 1 GiB address-space
//! cap (`setrlimit(RLIMIT_AS)`, as `prlimit --as` sets it; [`common::capped`]) and must be
//! `Error::Metadata` (or `Error::Memory` for a ceiling on memory) naming the file and the claim, at a
//! small peak; `valid.parq`, the same file without the claim, reads its value. Before the checks of
//! `src/store/parquet_check.rs` the schema list, decoded page size and dictionary cases aborted the
//! process under the cap (allocations of 192 GiB, 2 GiB and 64 GiB), and the page values and row group
//! rows cases panicked inside the crate. `.zmetadata` and record files longer than the metadata ceiling
//! (sparse files of 64 MiB + 1 byte, and the store option `max_metadata_bytes`) are `Error::Memory`
//! before they are read, as is a `.zmetadata` (or an array's `.zarray` in it) holding more JSON values
//! than the ceiling allows.

mod common;

use std::path::{Path, PathBuf};
use zarr::store::location::open_location_with;
use zarr::{Array, Error};

/// The address-space cap of a case's process: far below the 2 GiB to 1 TiB the files claim.
const CAP: u64 = 1 << 30;

/// The environment variable naming the case a child process runs.
const CHILD: &str = "ZARR_HOSTILE_PARQUET_CASE";

/// The most resident memory a case may peak at.
const PEAK: u64 = 128 << 20;

/// The most resident memory a case that must read little may peak at.
const PEAK_SMALL: u64 = 32 << 20;

/// A reference directory holding array `v` (5 bytes, one chunk) whose record file is fixture `name`,
/// with `record_size` rows per record file.
fn refs_dir(name: &str, record_size: u64) -> PathBuf {
    let d = empty_refs_dir(name, record_size, "");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile_parquet_files").join(format!("{name}.parq"));
    std::fs::copy(src, d.join("v/refs.0.parq")).unwrap();
    d
}

/// The `.zarray` of array `v`, with `extra` (JSON members, each followed by a comma) first.
fn zarray(extra: &str) -> String {
    format!(r#"{{{extra}"zarr_format": 2, "shape": [5], "chunks": [5], "dtype": "|u1", "compressor": null, "filters": null, "fill_value": 0, "order": "C"}}"#)
}

/// A reference directory holding array `v` (its `.zarray` with `extra` members) and no record file.
fn empty_refs_dir(name: &str, record_size: u64, extra: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zarr-hostile-parquet-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("v")).unwrap();
    let zmeta = serde_json::json!({"metadata": {".zgroup": "{\"zarr_format\": 2}", "v/.zarray": zarray(extra)}, "record_size": record_size});
    std::fs::write(d.join(".zmetadata"), zmeta.to_string()).unwrap();
    d
}

/// Reads array `v` of the reference directory `d` (with the store option `max_metadata_bytes` when
/// `ceiling` is given), then removes `d`.
fn read_dir(d: &Path, ceiling: Option<u64>) -> zarr::Result<Vec<u8>> {
    let r = (|| {
        let mut o = zarr::store::StoreOptions::new();
        if let Some(c) = ceiling {
            o.set("max_metadata_bytes", &c.to_string())?;
        }
        let store = open_location_with(&format!("reference://{}", d.display()), &o)?;
        let a = Array::open(store, "v", false)?;
        let mut out = vec![0u8; 5];
        a.read_region(&[0], &[5], &mut out)?;
        Ok(out)
    })();
    let _ = std::fs::remove_dir_all(d);
    r
}

/// Reads array `v` of the reference directory made from fixture `name` (record size 10).
fn read(name: &str) -> zarr::Result<Vec<u8>> {
    read_dir(&refs_dir(name, 10), None)
}

/// Runs `case` (the read of one fixture) in a child under the cap: the test `name` there.
fn hostile(name: &str, case: fn()) {
    hostile_under(name, PEAK, case);
}

/// [`hostile`], the child peaking under `peak` bytes.
fn hostile_under(name: &str, peak: u64, case: fn()) {
    let got = common::capped::run_capped(CHILD, name, CAP, case);
    assert!(got < peak, "{name}: peak {} MiB (at most {} MiB)", got >> 20, peak >> 20);
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
        "schema_elements" => "the schema list claims 65 elements",
        "schema_depth" => "the schema list claims 60000 elements",
        "schema_children" => "a schema element claims 2147483647 children",
        "footer_bytes" => "a footer may have at most 1048576",
        "footer_elements" => "more than 65536 list elements",
        "record_rows" => "11 rows, more than the record size 10",
        "row_group_negative" => "a row group claims -1 rows",
        "row_groups_sum" => "its row groups claim more rows than the file's 1 rows",
        "page_repeated" => "claims a decoded size of 2147483647 bytes",
        "schema_type" => "field 2 has the Thrift type 5, where a reader reads a list",
        "page_delta_lengths" => "has the encoding DELTA_LENGTH_BYTE_ARRAY",
        "page_header_type" => "field 5 has the Thrift type 8, where a reader reads a struct",
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

/// Fails unless `r` is `Error::Memory` whose message names `file` and says `what`.
fn expect_memory(r: zarr::Result<Vec<u8>>, file: &str, what: &str) {
    match r {
        Err(e @ Error::Memory(_)) => {
            let m = e.to_string();
            assert!(m.contains(file) && m.contains(what), "{file}: {m}");
        }
        other => panic!("{file}: expected a memory error, got {other:?}"),
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

#[test]
fn schema_elements() {
    hostile("schema_elements", || expect("schema_elements"));
}

/// Without the schema's ceiling the crate's recursion over 60 000 nested groups overflows the stack.
#[test]
fn schema_depth() {
    hostile("schema_depth", || expect("schema_depth"));
}

/// Without the children's check the crate reserves 16 GiB for the root's children.
#[test]
fn schema_children() {
    hostile("schema_children", || expect("schema_children"));
}

#[test]
fn footer_bytes() {
    hostile("footer_bytes", || expect("footer_bytes"));
}

#[test]
fn footer_elements() {
    hostile("footer_elements", || expect("footer_elements"));
}

#[test]
fn record_rows() {
    hostile("record_rows", || expect("record_rows"));
}

#[test]
fn row_group_negative() {
    hostile("row_group_negative", || expect("row_group_negative"));
}

#[test]
fn row_groups_sum() {
    hostile("row_groups_sum", || expect("row_groups_sum"));
}

/// The crate keeps a field's last occurrence: checking only the first let 2 GiB through.
#[test]
fn page_repeated() {
    hostile("page_repeated", || expect("page_repeated"));
}

/// The crate reads field 2 as the schema list whatever its wire type: checking the i32 as an i32 let
/// it reserve room for 2^31 - 1 schema elements.
#[test]
fn schema_type() {
    hostile("schema_type", || expect("schema_type"));
}

/// The crate reads a page header's field 5 as a data page header whatever its wire type: a byte
/// string's length and bytes read as the fields of a page of 2^31 - 1 values.
#[test]
fn page_header_type() {
    hostile("page_header_type", || expect("page_header_type"));
}

/// The crate's DELTA_LENGTH_BYTE_ARRAY decoder sizes its lengths (8 GiB) from a count in the page.
#[test]
fn page_delta_lengths() {
    hostile("page_delta_lengths", || expect("page_delta_lengths"));
}

/// A file claiming 2^21 rows, more than one per 64 bytes of the default ceiling (the record size is
/// 10^8): `Error::Memory` before room is reserved for them.
#[test]
fn file_rows() {
    hostile("file_rows", || {
        let r = read_dir(&refs_dir("file_rows", 100_000_000), None);
        expect_memory(r, "refs.0.parq", "2097152 rows, more than one per 64 bytes of the metadata ceiling");
    });
}

/// A dictionary of one 64 KiB value named by 20 000 rows: the references may copy out at most the
/// metadata ceiling (1.3 GB otherwise, past the cap).
#[test]
fn dictionary_copies() {
    hostile("dictionary_copies", || {
        let r = read_dir(&refs_dir("dictionary_copies", 100_000_000), None);
        expect_memory(r, "refs.0.parq", "its references hold more than the metadata ceiling");
    });
}

/// A page header of 3 MiB of unknown fields (1.5 million) is walked in constant memory and the value
/// reads.
#[test]
fn page_header_fields() {
    hostile_under("page_header_fields", PEAK_SMALL, || assert_eq!(read("page_header_fields").unwrap(), b"hello"));
}

/// A record file of 8 KiB under the store option `max_metadata_bytes` of 4 KiB.
#[test]
fn record_file_over_the_ceiling_option() {
    hostile("record_file_over_the_ceiling_option", || {
        let r = read_dir(&refs_dir("large_value", 10), Some(4096));
        expect_memory(r, "refs.0.parq", "8299 bytes, more than the metadata ceiling of 4096");
    });
}

/// The length of a sparse file of 64 MiB + 1 byte, one past the default metadata ceiling.
const PAST_DEFAULT: u64 = (64 << 20) + 1;

/// A record file of 64 MiB + 1 byte (sparse) is refused before it is read: the peak stays far below it.
#[test]
fn record_file_over_the_default_ceiling() {
    hostile_under("record_file_over_the_default_ceiling", PEAK_SMALL, || {
        let d = empty_refs_dir("record_file_over_the_default_ceiling", 10, "");
        std::fs::File::create(d.join("v/refs.0.parq")).unwrap().set_len(PAST_DEFAULT).unwrap();
        expect_memory(read_dir(&d, None), "refs.0.parq", &format!("{PAST_DEFAULT} bytes, more than the metadata ceiling"));
    });
}

/// A `.zmetadata` of 64 MiB + 1 byte (sparse) is refused before it is read.
#[test]
fn zmetadata_over_the_default_ceiling() {
    hostile_under("zmetadata_over_the_default_ceiling", PEAK_SMALL, || {
        let d = empty_refs_dir("zmetadata_over_the_default_ceiling", 10, "");
        std::fs::File::create(d.join(".zmetadata")).unwrap().set_len(PAST_DEFAULT).unwrap();
        expect_memory(read_dir(&d, None), ".zmetadata", &format!("{PAST_DEFAULT} bytes, more than the metadata ceiling"));
    });
}

/// `[0,0,...]` of 4 Mi values (8 MiB of text): parsed, about 100 bytes a value.
fn many_values() -> String {
    let mut s = String::from("[");
    s.push_str(&"0,".repeat(4 << 20));
    s.push_str("0]");
    s
}

/// A `.zmetadata` within the ceiling holding 4 Mi JSON values, more than one per 128 bytes of the
/// ceiling: refused before it is parsed (parsed, it takes about 400 MB).
#[test]
fn zmetadata_values() {
    hostile_under("zmetadata_values", PEAK_SMALL + (32 << 20), || {
        let d = empty_refs_dir("zmetadata_values", 10, "");
        let text = format!(r#"{{"pad": {}, "metadata": {{"v/.zarray": {}}}, "record_size": 10}}"#, many_values(), serde_json::to_string(&zarray("")).unwrap());
        std::fs::write(d.join(".zmetadata"), text).unwrap();
        expect_memory(read_dir(&d, None), ".zmetadata", "JSON values");
    });
}

/// The same values in the `.zarray` document `.zmetadata` holds as a string.
#[test]
fn zarray_values() {
    hostile_under("zarray_values", PEAK_SMALL + (64 << 20), || {
        let d = empty_refs_dir("zarray_values", 10, &format!(r#""pad": {}, "#, many_values()));
        expect_memory(read_dir(&d, None), "v/.zarray", "JSON values");
    });
}
