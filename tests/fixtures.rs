//! Reads every case of the committed interop fixtures (`tests/fixtures`, made by
//! `tools/make_fixtures.py` with zarr-python and friends) through the Rust API and checks it
//! byte-exactly against its expected file, or checks that it fails with the right error variant.
//! All three formats are checked: Zarr v3, v2 (`.zarray`, including structured dtypes, filters and
//! every numcodecs compressor) and v1 (`meta`). A case whose codec this build does not implement
//! fails like any other case (its message names the codec): nothing is skipped.
//!
//! Besides the whole array, each readable case is also read in several sub-regions (one per chunk,
//! and a few deterministic pseudo-random boxes), and each corrupted case is read chunk by chunk: the
//! intact chunks must read correctly, the damaged ones must fail with the expected error.

mod common;

use common::{fixtures_root, for_each_index};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use zarr::dtype::DataType;
use zarr::node::NodeKind;
use zarr::store::filesystem::FilesystemStore;
use zarr::{Array, Error, Group};

thread_local! {
    /// The fixture set this thread checks, below tests/fixtures (empty: the main set).
    static SUBSET: std::cell::RefCell<&'static str> = const { std::cell::RefCell::new("") };
}

fn fixtures_dir() -> PathBuf {
    SUBSET.with(|s| fixtures_root().join(*s.borrow()))
}

fn manifest() -> Value {
    let dir = fixtures_dir();
    let path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}. The fixtures are committed in the repository; regenerate them with \
             `python3 tools/make_fixtures.py`",
            path.display()
        )
    });
    serde_json::from_str(&text).expect("manifest.json is not valid JSON")
}

fn store_at(rel: &str) -> Arc<FilesystemStore> {
    Arc::new(FilesystemStore::new(fixtures_dir().join(rel)))
}

/// Whether `e` is the variant for the manifest's error class.
fn matches_class(e: &Error, class: &str) -> bool {
    match class {
        "invalid_metadata" => matches!(e, Error::Metadata(_)),
        "unsupported" => matches!(e, Error::Unsupported(_)),
        "checksum" => matches!(e, Error::Checksum(_)),
        "codec" | "invalid_data" => matches!(e, Error::Codec(_)),
        "value" => matches!(e, Error::Value(_)),
        other => panic!("unknown expect_error class '{other}'"),
    }
}

/// The byte ranges (offset, size) within one element whose bytes are reversed between little-endian
/// and native order (expected files are little-endian, read buffers native-endian): every scalar
/// (each half of a complex number, each item of a structured field).
fn swap_units(dt: &DataType) -> Vec<(usize, usize)> {
    match dt {
        DataType::Raw(_) | DataType::Bool | DataType::Int8 | DataType::UInt8 => vec![],
        DataType::Complex64 => vec![(0, 4), (4, 4)],
        DataType::Complex128 => vec![(0, 8), (8, 8)],
        DataType::Struct(st) => st
            .leaves()
            .into_iter()
            .flat_map(|(off, t, n, _)| {
                let inner = swap_units(&t);
                let size = t.size();
                (0..n).flat_map(move |i| inner.clone().into_iter().map(move |(o, s)| (off + i * size + o, s)))
            })
            .collect(),
        // one unit per swapped word: the whole scalar, each complex half, each UTF-32 code unit;
        // nothing for single bytes (sub-byte types, null_terminated_bytes, float8 formats)
        t => {
            let u = t.swap_unit();
            if u <= 1 { vec![] } else { (0..t.size() / u).map(|i| (i * u, u)).collect() }
        }
    }
}

fn le_to_native(mut bytes: Vec<u8>, dt: &DataType) -> Vec<u8> {
    if cfg!(target_endian = "big") {
        let units = swap_units(dt);
        for e in bytes.chunks_exact_mut(dt.size().max(1)) {
            for &(o, s) in &units {
                e[o..o + s].reverse();
            }
        }
    }
    bytes
}

/// The C-order sub-box `start/count` of a whole array `full` of `shape`.
fn sub_box(full: &[u8], shape: &[u64], start: &[u64], count: &[u64], es: usize) -> Vec<u8> {
    let n: u64 = count.iter().product();
    let mut out = Vec::with_capacity(n as usize * es);
    for_each_index(start, count, |idx| {
        let o = linear(idx, shape) * es;
        out.extend_from_slice(&full[o..o + es]);
    });
    out
}

/// The C-order linear position of `idx` in an array of `shape`.
fn linear(idx: &[u64], shape: &[u64]) -> usize {
    idx.iter().zip(shape).fold(0u64, |a, (x, s)| a * s + x) as usize
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => format!("first difference at byte {i}"),
        None => format!("lengths {} and {}", a.len(), b.len()),
    }
}

/// A small deterministic generator (64-bit LCG), so that the sub-regions are the same on every run.
struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        if n == 0 {
            0
        } else {
            (self.0 >> 33) % n
        }
    }
}

/// Every chunk's clipped box, as (grid index, start, count).
fn chunk_boxes(shape: &[u64], chunks: &[u64]) -> Vec<(Vec<u64>, Vec<u64>, Vec<u64>)> {
    let grid: Vec<u64> = shape.iter().zip(chunks).map(|(s, c)| s.div_ceil(*c)).collect();
    let rank = shape.len();
    let mut out = Vec::new();
    for_each_index(&vec![0; rank], &grid, |idx| {
        let start: Vec<u64> = (0..rank).map(|d| idx[d] * chunks[d]).collect();
        let count: Vec<u64> = (0..rank).map(|d| chunks[d].min(shape[d] - start[d])).collect();
        out.push((idx.to_vec(), start, count));
    });
    out
}

fn key_to_index(key: &str) -> Vec<u64> {
    let k = key.strip_prefix('c').unwrap_or(key);
    k.split(['/', '.']).filter(|s| !s.is_empty()).map(|s| s.parse().expect("chunk key index")).collect()
}

fn check_case(case: &Value) -> Result<String, String> {
    let name = case["name"].as_str().unwrap();
    let rel = case["path"].as_str().unwrap();
    let want_err = case["expect_error"].as_str();
    let arr = match Array::open(store_at(rel), "", false) {
        Ok(a) if a.metadata().zarr_format as u64 != case["zarr_format"].as_u64().unwrap() => {
            return Err(format!("opened as Zarr v{}, the manifest says v{}", a.metadata().zarr_format, case["zarr_format"]))
        }
        Ok(a) => a,
        Err(e) => {
            return match want_err {
                Some(class) if matches_class(&e, class) => Ok(format!("open failed as expected: {e:?}")),
                Some(class) => Err(format!("open failed with {e:?}, expected a {class} error")),
                None => Err(format!("open failed: {e:?}")),
            }
        }
    };
    let shape: Vec<u64> = case["shape"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    if case["expected_format"] == "json" {
        return check_vlen_case(case, &arr, &shape);
    }
    let es = arr.metadata().data_type.size();
    if arr.shape() != shape.as_slice() {
        return Err(format!("shape {:?} != {:?}", arr.shape(), shape));
    }
    if let Some(want_es) = case["element_size"].as_u64() {
        if es as u64 != want_es {
            return Err(format!("element size {es} != {want_es}"));
        }
    }
    let expected = match case["expected"].as_str() {
        Some(p) => {
            let raw = std::fs::read(fixtures_dir().join(p)).map_err(|e| format!("{p}: {e}"))?;
            le_to_native(raw, &arr.metadata().data_type)
        }
        None => {
            return Err(format!("opened a case whose metadata must be refused ({want_err:?})"));
        }
    };
    let zeros = vec![0u64; shape.len()];
    let n: u64 = shape.iter().product();
    let mut buf = vec![0u8; n as usize * es];
    let whole = arr.read_region(&zeros, &shape, &mut buf);
    let chunks = arr.metadata().chunk_shape().to_vec();

    if let Some(class) = want_err {
        // a corrupted case: the whole read fails; chunks not listed in corrupt_keys read correctly
        match whole {
            Ok(()) => return Err(format!("whole read succeeded, expected a {class} error")),
            Err(e) if !matches_class(&e, class) => {
                return Err(format!("whole read failed with {e:?}, expected {class}"))
            }
            Err(_) => {}
        }
        let corrupt: Vec<Vec<u64>> = case["corrupt_keys"]
            .as_array()
            .map(|a| a.iter().map(|k| key_to_index(k.as_str().unwrap())).collect())
            .unwrap_or_default();
        let mut intact = 0;
        for (idx, start, count) in chunk_boxes(&shape, &chunks) {
            let mut b = vec![0u8; count.iter().product::<u64>() as usize * es];
            let r = arr.read_region(&start, &count, &mut b);
            if corrupt.contains(&idx) {
                match r {
                    Err(e) if matches_class(&e, class) => {}
                    other => return Err(format!("chunk {idx:?} (corrupt): {other:?}, expected a {class} error")),
                }
            } else {
                r.map_err(|e| format!("intact chunk {idx:?} failed: {e:?}"))?;
                if b != sub_box(&expected, &shape, &start, &count, es) {
                    return Err(format!("intact chunk {idx:?} differs"));
                }
                intact += 1;
            }
        }
        return Ok(format!("{class} as expected; {intact} intact chunks read correctly"));
    }

    whole.map_err(|e| format!("read failed: {e:?}"))?;
    if buf != expected {
        return Err(format!("whole array differs: {}", first_difference(&buf, &expected)));
    }
    // sub-regions: each chunk on its own, then pseudo-random boxes (unaligned, spanning chunks)
    let mut regions: Vec<(Vec<u64>, Vec<u64>)> =
        chunk_boxes(&shape, &chunks).into_iter().map(|(_, s, c)| (s, c)).collect();
    let mut rng = Lcg(name.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3)));
    for _ in 0..8 {
        let mut start = Vec::new();
        let mut count = Vec::new();
        for &s in &shape {
            let a = rng.below(s + 1);
            let c = rng.below(s - a + 1);
            start.push(a);
            count.push(c);
        }
        regions.push((start, count));
    }
    for (start, count) in &regions {
        let mut b = vec![0u8; count.iter().product::<u64>() as usize * es];
        arr.read_region(start, count, &mut b).map_err(|e| format!("region {start:?}+{count:?}: {e:?}"))?;
        let want = sub_box(&expected, &shape, start, count, es);
        if b != want {
            return Err(format!("region {start:?}+{count:?} differs: {}", first_difference(&b, &want)));
        }
    }
    Ok(format!("{} bytes identical; {} sub-regions identical", buf.len(), regions.len()))
}

/// The expected elements of a variable-length case (`expected_format` "json"): strings as UTF-8, other
/// values base64 (a vlen-array element: its items little-endian, brought to native order here).
fn vlen_expected(case: &Value, dt: &DataType) -> Result<Vec<Vec<u8>>, String> {
    let p = case["expected"].as_str().ok_or("a json case without an expected file")?;
    let text = std::fs::read_to_string(fixtures_dir().join(p)).map_err(|e| format!("{p}: {e}"))?;
    let list: Vec<String> = serde_json::from_str(&text).map_err(|e| format!("{p}: {e}"))?;
    list.iter()
        .map(|v| match dt {
            DataType::String => Ok(v.as_bytes().to_vec()),
            DataType::VlenArray(item) => {
                let b = zarr::format::base64::decode(v).map_err(|e| format!("{e:?}"))?;
                Ok(le_to_native(b, item))
            }
            _ => zarr::format::base64::decode(v).map_err(|e| format!("{e:?}")),
        })
        .collect()
}

/// A variable-length case: the whole array, each chunk and pseudo-random boxes read through
/// `read_region_vlen` and compared element by element; for damaged cases, the chunks in
/// `corrupt_keys` fail with the expected class and the others read correctly.
fn check_vlen_case(case: &Value, arr: &Array, shape: &[u64]) -> Result<String, String> {
    let dt = arr.metadata().data_type.clone();
    if !dt.is_vlen() {
        return Err(format!("a json case opened with the fixed-size data type {dt}"));
    }
    let expected = vlen_expected(case, &dt)?;
    let chunks = arr.metadata().chunk_shape().to_vec();
    let zeros = vec![0u64; shape.len()];
    let compare = |start: &[u64], count: &[u64]| -> Result<(), String> {
        let got = arr.read_region_vlen(start, count).map_err(|e| format!("region {start:?}+{count:?}: {e:?}"))?;
        let total: u64 = count.iter().product();
        if got.len() != total as usize {
            return Err(format!("region {start:?}+{count:?}: {} elements, expected {total}", got.len()));
        }
        let mut bad = None;
        let mut i = 0;
        for_each_index(start, count, |idx| {
            let lin = linear(idx, shape);
            if bad.is_none() && got.get(i) != &expected[lin][..] {
                bad = Some(lin);
            }
            i += 1;
        });
        match bad {
            Some(lin) => Err(format!("region {start:?}+{count:?}: element {lin} differs")),
            None => Ok(()),
        }
    };
    if let Some(class) = case["expect_error"].as_str() {
        match arr.read_region_vlen(&zeros, shape) {
            Ok(_) => return Err(format!("whole read succeeded, expected a {class} error")),
            Err(e) if !matches_class(&e, class) => return Err(format!("whole read failed with {e:?}, expected {class}")),
            Err(_) => {}
        }
        let corrupt: Vec<Vec<u64>> = case["corrupt_keys"]
            .as_array()
            .map(|a| a.iter().map(|k| key_to_index(k.as_str().unwrap())).collect())
            .unwrap_or_default();
        let mut intact = 0;
        for (idx, start, count) in chunk_boxes(shape, &chunks) {
            if corrupt.contains(&idx) {
                match arr.read_region_vlen(&start, &count) {
                    Err(e) if matches_class(&e, class) => {}
                    other => return Err(format!("chunk {idx:?} (corrupt): {other:?}, expected a {class} error")),
                }
            } else {
                compare(&start, &count)?;
                intact += 1;
            }
        }
        return Ok(format!("{class} as expected; {intact} intact chunks read correctly"));
    }
    compare(&zeros, shape)?;
    let mut regions: Vec<(Vec<u64>, Vec<u64>)> = chunk_boxes(shape, &chunks).into_iter().map(|(_, s, c)| (s, c)).collect();
    let name = case["name"].as_str().unwrap();
    let mut rng = Lcg(name.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3)));
    for _ in 0..8 {
        let (mut start, mut count) = (Vec::new(), Vec::new());
        for &s in shape {
            let a = rng.below(s + 1);
            let c = rng.below(s - a + 1);
            start.push(a);
            count.push(c);
        }
        regions.push((start, count));
    }
    for (start, count) in &regions {
        compare(start, count)?;
    }
    Ok(format!("{} elements identical; {} sub-regions identical", expected.len(), regions.len()))
}

#[test]
fn fixtures_read_correctly() {
    let m = manifest();
    let cases = m["cases"].as_array().expect("manifest has no cases");
    assert!(!cases.is_empty(), "manifest has no cases");
    let mut failures = Vec::new();
    let mut per_kind: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    let mut per_format: BTreeMap<u64, u32> = BTreeMap::new();
    for case in cases {
        *per_format.entry(case["zarr_format"].as_u64().expect("zarr_format")).or_default() += 1;
        let name = case["name"].as_str().unwrap();
        let kind = case["kind"].as_str().unwrap().to_string();
        let r = std::panic::catch_unwind(|| check_case(case)).unwrap_or_else(|_| Err("panicked".into()));
        let entry = per_kind.entry(kind).or_default();
        match r {
            Ok(_) => entry.0 += 1,
            Err(msg) => {
                entry.1 += 1;
                failures.push(format!("{name}: {msg}"));
            }
        }
    }
    for (kind, (p, f)) in &per_kind {
        eprintln!("{kind:20} pass {p:4} fail {f:4}");
    }
    // the manifest covers all three formats: a regenerated manifest that lost a format fails here
    for f in [1, 2, 3] {
        assert!(per_format.get(&f).copied().unwrap_or(0) > 0, "the manifest has no Zarr v{f} case");
    }
    assert!(failures.is_empty(), "{} fixture case(s) failed:\n  {}", failures.len(), failures.join("\n  "));
}

/// Checks every case of the sub-corpus `tests/fixtures/<name>` (its own manifest, at least `min_cases`
/// cases), reporting all failures at once.
fn check_subset(name: &'static str, min_cases: usize) {
    SUBSET.with(|s| *s.borrow_mut() = name);
    let m = manifest();
    let cases = m["cases"].as_array().expect("manifest has no cases");
    assert!(cases.len() >= min_cases, "the {name} manifest lost cases");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            let r = std::panic::catch_unwind(|| check_case(case)).unwrap_or_else(|_| Err("panicked".into()));
            r.err().map(|m| format!("{}: {m}", case["name"]))
        })
        .collect();
    assert!(failures.is_empty(), "{} case(s) failed:\n  {}", failures.len(), failures.join("\n  "));
}

/// tests/fixtures/numcodecs_v3 (tools/make_numcodecs_v3_fixtures.py): zarr-python's `numcodecs.<id>`
/// v3 codecs and numcodecs checksums, read byte for byte, and their damaged chunks refused.
#[test]
fn numcodecs_v3_fixtures_read_correctly() {
    check_subset("numcodecs_v3", 20);
}

/// Every non-integer number token of a JSON text, converted by the standard library (correctly rounded),
/// independently of serde_json.
fn json_float_tokens(text: &str) -> Vec<f64> {
    let b = text.as_bytes();
    let (mut i, mut out) = (0, Vec::new());
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    i += 1;
                }
                let tok = &text[start..i];
                if tok.contains(['.', 'e', 'E']) {
                    out.push(tok.parse().expect("JSON number"));
                }
            }
            _ => i += 1,
        }
    }
    out
}

fn floats_of(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => out.push(n.as_f64().unwrap()),
        Value::Array(a) => a.iter().for_each(|x| floats_of(x, out)),
        Value::Object(o) => o.values().for_each(|x| floats_of(x, out)),
        _ => {}
    }
}

#[test]
fn fixture_groups_match() {
    let m = manifest();
    let groups = m["groups"].as_array().expect("manifest has no groups");
    assert!(!groups.is_empty(), "manifest lists no groups");
    let mut failures = Vec::new();
    for g in groups {
        let rel = g["path"].as_str().unwrap();
        let grp = match Group::open(store_at(rel), "", false) {
            Ok(grp) => grp,
            Err(e) => {
                failures.push(format!("{rel}: open failed: {e:?}"));
                continue;
            }
        };
        let attrs = Value::Object(grp.attributes());
        if attrs != g["attributes"] {
            failures.push(format!("{rel}: attributes {attrs} != {}", g["attributes"]));
        }
        // the comparison above parses both sides with serde_json; check float attributes against the
        // numbers of zarr.json as the standard library converts them
        if grp.zarr_format() as u64 != g["zarr_format"].as_u64().unwrap() {
            failures.push(format!("{rel}: opened as Zarr v{}, the manifest says v{}", grp.zarr_format(), g["zarr_format"]));
        }
        let attrs_file = if g["zarr_format"].as_u64() == Some(2) { ".zattrs" } else { "zarr.json" };
        let text = std::fs::read_to_string(fixtures_dir().join(rel).join(attrs_file)).unwrap_or_default();
        let exact = json_float_tokens(&text);
        let mut got = Vec::new();
        floats_of(&attrs, &mut got);
        for f in got {
            if !exact.iter().any(|e| e.to_bits() == f.to_bits()) {
                failures.push(format!("{rel}: float attribute read as {f:?}, zarr.json has {exact:?}"));
            }
        }
        let children: BTreeMap<String, &str> = match grp.children() {
            Ok(c) => c.into_iter().map(|(n, k)| (n, if k == NodeKind::Array { "array" } else { "group" })).collect(),
            Err(e) => {
                failures.push(format!("{rel}: listing failed: {e:?}"));
                continue;
            }
        };
        let want: BTreeMap<String, &str> =
            g["children"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_str().unwrap())).collect();
        if children != want {
            failures.push(format!("{rel}: children {children:?} != {want:?}"));
        }
        // every child opens as what the manifest says it is
        for (child, kind) in &want {
            let ok = match *kind {
                "array" => grp.open_array(child).is_ok(),
                _ => grp.open_group(child).is_ok(),
            };
            if !ok {
                failures.push(format!("{rel}: child {child} does not open as {kind}"));
            }
        }
    }
    assert!(failures.is_empty(), "group check failures:\n  {}", failures.join("\n  "));
}

/// tests/fixtures/pcodec_zfp (tools/make_pcodec_zfp_fixtures.py): zarr-python's numcodecs `pcodec` and
/// `zfpy` codecs (v3 names and v2 compressors; zfp in fixed rate / precision / accuracy and reversible
/// modes), read byte for byte, and their damaged chunks refused.
#[test]
fn pcodec_zfp_fixtures_read_correctly() {
    check_subset("pcodec_zfp", 24);
}
