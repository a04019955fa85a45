//! Hostile input, found by mutation: every readable case of the committed fixtures (`tests/fixtures`)
//! is copied, damaged in many deterministic ways, opened and read. Whatever the damage, libzarr must
//! return (an error or data), never panic, hang, abort or ask for a huge allocation.
//!
//! Damage to stored chunks (metadata intact): bit flips, truncation, garbage appended, zeroed bytes,
//! empty files, random bytes, and for sharded arrays random 64-bit values written into the shard index.
//! Stronger properties are also checked where the format promises them:
//! - a chunk made shorter either fails or, where the read needed only an intact prefix of it (a
//!   streamed zstd prefix, a shard's untouched inner chunks), returns exactly the original values:
//!   truncation never produces wrong values silently;
//! - a flipped bit in an array whose codec chain ends with `crc32c` fails with `Error::Checksum`;
//! - a write (read-modify-write of the chunks holding the first and last elements) over the damaged
//!   array either succeeds or fails leaving every stored file exactly as it was; a write never
//!   replaces an undecodable chunk it covers only in part, and when the damage was detected, the
//!   array never reads as different values without an error after the write;
//! - no allocation while reading damaged chunks exceeds 64 MiB (the fixtures' chunks are tiny, so a
//!   larger request could only come from trusting damaged bytes).
//!
//! Damage to metadata documents: every JSON value (one at a time, chosen deterministically) replaced
//! by values of the wrong type, negative, zero, huge or deeply nested, members removed, and the text
//! truncated or flipped. The result must open or fail with an error; when it opens, a bounded read
//! (the whole array when small, otherwise its first and last elements) must return.
//!
//! A global allocator refuses any single request above 4 GiB (as a machine without that much memory
//! would) so that an unguarded huge allocation shows up as an abort here rather than as an OOM kill.

mod common;

use common::fixtures_root;
use serde_json::Value;
use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use zarr::store::filesystem::FilesystemStore;
use zarr::{Array, Error};

/// Refuses single allocations above `REFUSE_ABOVE`; while `TRACKING` is set, records the largest request.
struct GuardedAllocator;

const REFUSE_ABOVE: usize = 4 << 30;
static TRACKING: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for GuardedAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_request(layout.size());
        if layout.size() > REFUSE_ABOVE {
            return std::ptr::null_mut();
        }
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_request(layout.size());
        if layout.size() > REFUSE_ABOVE {
            return std::ptr::null_mut();
        }
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_request(new_size);
        if new_size > REFUSE_ABOVE {
            return std::ptr::null_mut();
        }
        System.realloc(ptr, layout, new_size)
    }
}

fn note_request(size: usize) {
    if TRACKING.load(Ordering::Relaxed) {
        LARGEST.fetch_max(size, Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: GuardedAllocator = GuardedAllocator;

/// The chunk-damage phase's allocation bound (fixture chunks are a few KiB).
const CHUNK_PHASE_ALLOC_LIMIT: usize = 64 << 20;
/// Reads of a whole array are bounded by this many bytes and this many chunks.
const READ_ALL_MAX_BYTES: u64 = 4 << 20;
const READ_ALL_MAX_CHUNKS: u64 = 4096;
/// A single open-and-read that takes longer than this counts as a hang.
const HANG_LIMIT: Duration = Duration::from_secs(120);

/// Deterministic xorshift64* generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    }) | 1
}

const METADATA_FILES: &[&str] = &[
    "zarr.json",
    ".zarray",
    ".zattrs",
    ".zgroup",
    "meta",
    "attrs",
];

fn is_metadata(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| METADATA_FILES.contains(&n))
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// A fresh scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("libzarr-mutation-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Aborts the process (with a message) when no progress is reported for `HANG_LIMIT`.
struct Watchdog {
    last: Arc<AtomicU64>,
    what: Arc<std::sync::Mutex<String>>,
    start: Instant,
}

impl Watchdog {
    fn start() -> Watchdog {
        let last = Arc::new(AtomicU64::new(0));
        let what = Arc::new(std::sync::Mutex::new(String::new()));
        let start = Instant::now();
        let (l, w) = (last.clone(), what.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_secs(1));
            let since = start
                .elapsed()
                .as_secs()
                .saturating_sub(l.load(Ordering::Relaxed));
            if since > HANG_LIMIT.as_secs() {
                eprintln!(
                    "HANG: no progress for {since} s while: {}",
                    w.lock().unwrap()
                );
                std::process::abort();
            }
        });
        Watchdog { last, what, start }
    }
    fn step(&self, what: String) {
        self.last
            .store(self.start.elapsed().as_secs(), Ordering::Relaxed);
        *self.what.lock().unwrap() = what;
    }
}

/// Opens the array in `dir` and reads it within bounds: all of it when small, else its first and
/// last elements, and returns what it read. A panic is turned into `Err(message)`; a libzarr error
/// into `Ok(Err(e))`.
fn open_and_read(dir: &Path) -> Result<Result<Vec<u8>, Error>, String> {
    let store = Arc::new(FilesystemStore::new(dir));
    catch_unwind(AssertUnwindSafe(|| {
        let a = Array::open(store, "", false)?;
        let md = a.metadata();
        if md.data_type.is_vlen() {
            return read_vlen(&a);
        }
        let es = md.data_type.size() as u64;
        let shape = md.shape.clone();
        if shape.contains(&0) {
            return Ok(Vec::new());
        }
        let grid = md.grid.grid_shape(&shape);
        let nchunks = grid.iter().try_fold(1u64, |acc, &g| acc.checked_mul(g));
        let nbytes = shape.iter().try_fold(es, |acc, &n| acc.checked_mul(n));
        if let (Some(nc), Some(nb)) = (nchunks, nbytes) {
            if nb <= READ_ALL_MAX_BYTES && nc <= READ_ALL_MAX_CHUNKS {
                let mut out = vec![0u8; nb as usize];
                let start = vec![0u64; shape.len()];
                a.read_region(&start, &shape, &mut out)?;
                return Ok(out);
            }
        }
        let ones = vec![1u64; shape.len()];
        let mut out = vec![0u8; 2 * es as usize];
        let (first, last) = out.split_at_mut(es as usize);
        a.read_region(&vec![0u64; shape.len()], &ones, first)?;
        let end: Vec<u64> = shape.iter().map(|&n| n - 1).collect();
        a.read_region(&end, &ones, last)?;
        Ok(out)
    }))
    .map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "non-string panic".into())
    })
}

/// Serialises variable-length elements as (u64 LE length, bytes) each, so that they compare as bytes.
fn serialize_vlen(v: &zarr::array::VlenData) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..v.len() {
        let e = v.get(i);
        out.extend_from_slice(&(e.len() as u64).to_le_bytes());
        out.extend_from_slice(e);
    }
    out
}

/// The first and last elements of serialised variable-length elements.
fn vlen_corners(bytes: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut elems = Vec::new();
    let mut p = 0;
    while p < bytes.len() {
        let n = u64::from_le_bytes(bytes[p..p + 8].try_into().unwrap()) as usize;
        elems.push(bytes[p + 8..p + 8 + n].to_vec());
        p += 8 + n;
    }
    (elems[0].clone(), elems[elems.len() - 1].clone())
}

/// [`open_and_read`] for a variable-length array: the whole array when small, else its first and
/// last elements, serialised.
fn read_vlen(a: &Array) -> Result<Vec<u8>, Error> {
    let shape = a.shape().to_vec();
    if shape.contains(&0) {
        return Ok(Vec::new());
    }
    let n = shape.iter().try_fold(1u64, |acc, &s| acc.checked_mul(s));
    if n.is_some_and(|n| n <= READ_ALL_MAX_BYTES / 16) {
        return Ok(serialize_vlen(&a.read_region_vlen(&vec![0; shape.len()], &shape)?));
    }
    let ones = vec![1u64; shape.len()];
    let end: Vec<u64> = shape.iter().map(|&n| n - 1).collect();
    let mut out = serialize_vlen(&a.read_region_vlen(&vec![0; shape.len()], &ones)?);
    out.extend(serialize_vlen(&a.read_region_vlen(&end, &ones)?));
    Ok(out)
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    files_under(dir, &mut files);
    files
        .into_iter()
        // The lock file (`.zarr.lock`, see `zarr::store::lock`) that a write creates is not stored data.
        .filter(|p| p.file_name().is_none_or(|n| n != zarr::store::filesystem::LOCK_FILE))
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect()
}

/// Puts `dir` back exactly as `snap` recorded it.
fn restore(dir: &Path, snap: &[(PathBuf, Vec<u8>)]) {
    let _ = std::fs::remove_dir_all(dir);
    for (p, b) in snap {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b).unwrap();
    }
}

/// Opens the array in `dir` for writing and writes `first` and `last` (one element each, the values
/// already there) to its first and last elements, one call each: a read-modify-write of the chunks
/// holding them. Returns how many calls failed, and what went wrong: a panic, a failed call that
/// changed a stored file, or (when `unreadable` names the damaged chunk file of an unsharded array
/// that could not be read) a call that replaced that chunk although it wrote only part of it.
fn write_corners(
    dir: &Path,
    first: &[u8],
    last: &[u8],
    unreadable: Option<&Path>,
) -> (usize, Vec<String>) {
    let store = Arc::new(FilesystemStore::new(dir));
    let a = match Array::open(store, "", true) {
        Ok(a) => a,
        Err(e) => {
            return (
                0,
                vec![format!(
                    "the intact metadata no longer opens for writing: {e}"
                )],
            )
        }
    };
    let shape = a.shape().to_vec();
    let ones = vec![1u64; shape.len()];
    let end: Vec<u64> = shape.iter().map(|&n| n - 1).collect();
    let (mut failed, mut problems) = (0, Vec::new());
    for (at, value) in [(vec![0u64; shape.len()], first), (end, last)] {
        let before = snapshot(dir);
        let write = || {
            if a.metadata().data_type.is_vlen() {
                a.write_region_vlen(&at, &ones, &[0, value.len() as u64], value)
            } else {
                a.write_region(&at, &ones, value)
            }
        };
        match catch_unwind(AssertUnwindSafe(write)) {
            Err(p) => problems.push(format!("write at {at:?}: PANIC {p:?}")),
            Ok(Err(e)) => {
                failed += 1;
                if snapshot(dir) != before {
                    problems.push(format!(
                        "a failed write at {at:?} ({e}) changed stored files"
                    ));
                }
            }
            Ok(Ok(())) => {
                let chunk = a.metadata().chunk_shape();
                let whole_chunk = at
                    .iter()
                    .zip(chunk)
                    .zip(&shape)
                    .all(|((&i, &c), &n)| (n - i / c * c).min(c) == 1);
                let file_of = |snap: &[(PathBuf, Vec<u8>)], p: &Path| {
                    snap.iter().find(|(q, _)| q == p).map(|(_, b)| b.clone())
                };
                if let Some(bad) = unreadable {
                    if !whole_chunk && file_of(&before, bad) != file_of(&snapshot(dir), bad) {
                        problems.push(format!(
                            "a write at {at:?} replaced a chunk it could not decode"
                        ));
                    }
                }
            }
        }
    }
    (failed, problems)
}

/// Readable cases of tests/fixtures/manifest.json and of the sub-corpora with their own manifests
/// (`numcodecs_v3`, `pcodec_zfp`).
fn readable_cases() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for sub in ["", "numcodecs_v3", "pcodec_zfp"] {
        let dir = fixtures_root().join(sub);
        let text = std::fs::read_to_string(dir.join("manifest.json"))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.join("manifest.json").display()));
        let m: Value = serde_json::from_str(&text).unwrap();
        out.extend(m["cases"].as_array().unwrap().iter().filter(|c| c["expect_error"].is_null()).map(|c| {
            let name = c["name"].as_str().unwrap();
            let name = if sub.is_empty() { name.to_string() } else { format!("{sub}/{name}") };
            (name, dir.join(c["path"].as_str().unwrap()))
        }));
    }
    out
}

/// Names of the array's v3 codecs (empty for v2/v1).
fn v3_codec_names(dir: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(dir.join("zarr.json")) else {
        return vec![];
    };
    let doc: Value = zarr::metadata::parse_json(text.as_bytes()).unwrap(); // zarr.json may hold bare NaN / Infinity
    doc["codecs"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    c.as_str()
                        .or_else(|| c["name"].as_str())
                        .unwrap_or("")
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum ChunkDamage {
    FlipBit,
    Truncate,
    Append,
    ZeroRange,
    Empty,
    Random,
    IndexGarbage,
}

const CHUNK_DAMAGES: &[ChunkDamage] = &[
    ChunkDamage::FlipBit,
    ChunkDamage::FlipBit,
    ChunkDamage::Truncate,
    ChunkDamage::Truncate,
    ChunkDamage::Append,
    ChunkDamage::ZeroRange,
    ChunkDamage::Empty,
    ChunkDamage::Random,
    ChunkDamage::IndexGarbage,
    ChunkDamage::IndexGarbage,
];

/// Applies `damage` to `orig`; `None` when it does not apply (e.g. index garbage on a non-shard).
fn damage_chunk(orig: &[u8], damage: ChunkDamage, sharded: bool, rng: &mut Rng) -> Option<Vec<u8>> {
    let mut b = orig.to_vec();
    let n = b.len() as u64;
    match damage {
        ChunkDamage::FlipBit => {
            if n == 0 {
                return None;
            }
            let i = rng.below(n) as usize;
            b[i] ^= 1 << rng.below(8);
        }
        ChunkDamage::Truncate => {
            if n == 0 {
                return None;
            }
            b.truncate(rng.below(n) as usize);
        }
        ChunkDamage::Append => {
            let k = 1 + rng.below(64);
            b.extend((0..k).map(|_| rng.next() as u8));
        }
        ChunkDamage::ZeroRange => {
            if n == 0 {
                return None;
            }
            let i = rng.below(n);
            let k = 1 + rng.below(n - i);
            b[i as usize..(i + k) as usize].fill(0);
        }
        ChunkDamage::Empty => b.clear(),
        ChunkDamage::Random => {
            let k = rng.below(2 * n + 16);
            b = (0..k).map(|_| rng.next() as u8).collect();
        }
        ChunkDamage::IndexGarbage => {
            if !sharded || n < 16 {
                return None;
            }
            // Overwrite one aligned 8-byte word at the start or end (where the index lives) with
            // an interesting 64-bit value.
            let words = n / 8;
            let w = if rng.below(2) == 0 {
                rng.below(words.min(8))
            } else {
                words - 1 - rng.below(words.min(8))
            };
            let v: u64 = match rng.below(6) {
                0 => u64::MAX,
                1 => u64::MAX - 1,
                2 => 1 << 63,
                3 => n + rng.below(1000),
                4 => rng.below(n),
                _ => rng.next(),
            };
            let at = (w * 8) as usize;
            b[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
    }
    (b != orig).then_some(b)
}

#[test]
fn damaged_chunks_fail_cleanly() {
    let dog = Watchdog::start();
    let root = scratch("chunks");
    let mut failures = Vec::new();
    let mut runs = 0usize;
    let mut writes = 0usize;
    let mut failed_writes = 0usize;
    let mut largest = 0usize;
    for (name, src) in readable_cases() {
        let work = root.join(&name);
        copy_dir(&src, &work);
        let codecs = v3_codec_names(&work);
        let sharded = codecs.iter().any(|c| c == "sharding_indexed");
        let crc_last = codecs.last().is_some_and(|c| c == "crc32c");
        let mut chunk_files = Vec::new();
        files_under(&work, &mut chunk_files);
        chunk_files.retain(|p| !is_metadata(p));
        let baseline = match open_and_read(&work) {
            Ok(Ok(bytes)) => bytes,
            other => panic!("{name}: the intact fixture does not read: {other:?}"),
        };
        // The values of the first and last elements, for the write check (v1 is read-only; 0-size
        // arrays have no elements).
        let dt = Array::open(Arc::new(FilesystemStore::new(&work)), "", false)
            .unwrap()
            .metadata()
            .data_type
            .clone();
        let es = dt.size();
        let corners = (!baseline.is_empty() && !work.join("meta").exists()).then(|| {
            if dt.is_vlen() {
                return vlen_corners(&baseline);
            }
            (
                baseline[..es].to_vec(),
                baseline[baseline.len() - es..].to_vec(),
            )
        });
        let mut rng = Rng(seed_of(&name));
        // At most three chunk files per case, each damaged every way.
        for _ in 0..chunk_files.len().min(3) {
            let file = chunk_files[rng.below(chunk_files.len() as u64) as usize].clone();
            let orig = std::fs::read(&file).unwrap();
            for &damage in CHUNK_DAMAGES {
                let Some(bad) = damage_chunk(&orig, damage, sharded, &mut rng) else {
                    continue;
                };
                std::fs::write(&file, &bad).unwrap();
                let what = format!(
                    "{name}: {damage:?} of {} ({} -> {} bytes)",
                    file.display(),
                    orig.len(),
                    bad.len()
                );
                dog.step(what.clone());
                LARGEST.store(0, Ordering::Relaxed);
                TRACKING.store(true, Ordering::Relaxed);
                let got = open_and_read(&work);
                TRACKING.store(false, Ordering::Relaxed);
                let peak = LARGEST.load(Ordering::Relaxed);
                largest = largest.max(peak);
                runs += 1;
                match &got {
                    Err(panic) => failures.push(format!("{what}: PANIC {panic}")),
                    Ok(res) => {
                        if peak > CHUNK_PHASE_ALLOC_LIMIT {
                            failures.push(format!("{what}: allocation of {peak} bytes"));
                        }
                        if damage == ChunkDamage::Truncate
                            && res.as_ref().is_ok_and(|got| *got != baseline)
                        {
                            failures.push(format!("{what}: a shortened chunk read as different values without an error"));
                        }
                        if damage == ChunkDamage::FlipBit
                            && crc_last
                            && !sharded
                            && !matches!(res, Err(Error::Checksum(_)))
                        {
                            failures.push(format!("{what}: a flipped bit under crc32c gave {res:?}, not a checksum error"));
                        }
                    }
                }
                // A write over the damaged array either succeeds or changes nothing at all.
                if let Some((first, last)) = corners.as_ref() {
                    let before = snapshot(&work);
                    dog.step(format!("{what}, then a write"));
                    let read_failed = matches!(got, Ok(Err(_)));
                    let unreadable = (read_failed && !sharded).then_some(file.as_path());
                    let (failed, problems) = write_corners(&work, first, last, unreadable);
                    failed_writes += failed;
                    failures.extend(problems.into_iter().map(|p| format!("{what}: {p}")));
                    // Writing back the values already there never turns detected damage into
                    // different values that read without an error.
                    if read_failed && failed < 2 {
                        if let Ok(Ok(now)) = open_and_read(&work) {
                            if now != baseline {
                                failures.push(format!(
                                    "{what}: after a write, the damaged array reads as different values without an error"
                                ));
                            }
                        }
                    }
                    restore(&work, &before);
                    writes += 1;
                }
            }
            std::fs::write(&file, &orig).unwrap();
        }
        let _ = std::fs::remove_dir_all(&work);
    }
    let _ = std::fs::remove_dir_all(&root);
    eprintln!(
        "damaged chunks: {runs} reads, {writes} writes ({failed_writes} calls refused), largest allocation {largest} bytes, {} failures",
        failures.len()
    );
    assert!(
        runs > 1000,
        "only {runs} damaged reads ran: are the fixtures present?"
    );
    assert!(
        failed_writes > 1000,
        "only {failed_writes} writes over damaged chunks failed: the write check proves little"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Values that replace one JSON value of a metadata document.
fn replacement(rng: &mut Rng) -> Option<Value> {
    use serde_json::json;
    Some(match rng.below(16) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(-1),
        3 => json!(0),
        4 => json!(u64::MAX),
        5 => json!(i64::MIN),
        6 => json!(1e308),
        7 => json!(0.5),
        8 => json!("x"),
        9 => json!(""),
        10 => json!([]),
        11 => json!({}),
        12 => json!([4294967296u64, 4294967296u64, 4294967296u64]),
        13 => json!([
            1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
            1, 1, 1, 1
        ]),
        14 => {
            json!({"name": "sharding_indexed", "configuration": {"chunk_shape": [1], "codecs": ["bytes"], "index_codecs": ["bytes"]}})
        }
        _ => return None, // remove the member / element
    })
}

/// Every path (object keys and array indices) to a value inside `v`.
fn value_paths(v: &Value, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(prefix.clone());
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                prefix.push(Value::String(k.clone()));
                value_paths(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                prefix.push(Value::from(i));
                value_paths(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

/// Replaces (or removes, with `None`) the value at `path` (not the root).
fn set_path(doc: &mut Value, path: &[Value], new: Option<Value>) {
    let (last, parents) = path.split_last().unwrap();
    let mut cur = doc;
    for p in parents {
        cur = match p {
            Value::String(k) => cur.get_mut(k.as_str()).unwrap(),
            _ => cur.get_mut(p.as_u64().unwrap() as usize).unwrap(),
        };
    }
    match (cur, last, new) {
        (Value::Object(m), Value::String(k), Some(v)) => {
            m.insert(k.clone(), v);
        }
        (Value::Object(m), Value::String(k), None) => {
            m.remove(k);
        }
        (Value::Array(a), i, Some(v)) => a[i.as_u64().unwrap() as usize] = v,
        (Value::Array(a), i, None) => {
            a.remove(i.as_u64().unwrap() as usize);
        }
        _ => unreachable!(),
    }
}

fn damage_metadata(text: &str, rng: &mut Rng) -> Option<String> {
    let kind = rng.below(10);
    if kind < 7 {
        let mut doc: Value = serde_json::from_str(text).ok()?;
        let mut paths = Vec::new();
        value_paths(&doc, &mut Vec::new(), &mut paths);
        paths.remove(0); // the root
        if paths.is_empty() {
            return None;
        }
        let path = paths[rng.below(paths.len() as u64) as usize].clone();
        set_path(&mut doc, &path, replacement(rng));
        return Some(serde_json::to_string(&doc).unwrap());
    }
    let mut b = text.as_bytes().to_vec();
    if b.is_empty() {
        return None;
    }
    match kind {
        7 => b.truncate(rng.below(b.len() as u64) as usize),
        8 => {
            let i = rng.below(b.len() as u64) as usize;
            b[i] ^= 1 << rng.below(8);
        }
        _ => {
            // A deeply nested value where the document begins.
            let deep = "[".repeat(100_000);
            b.splice(1..1, format!("\"deep\": {deep}").into_bytes());
        }
    }
    Some(String::from_utf8_lossy(&b).into_owned())
}

#[test]
fn damaged_metadata_fails_cleanly() {
    let dog = Watchdog::start();
    let root = scratch("metadata");
    let mut failures = Vec::new();
    let mut runs = 0usize;
    for (name, src) in readable_cases() {
        let work = root.join(&name);
        copy_dir(&src, &work);
        let mut meta_files = Vec::new();
        files_under(&work, &mut meta_files);
        meta_files.retain(|p| is_metadata(p) && p.parent() == Some(work.as_path()));
        let mut rng = Rng(seed_of(&name) ^ 0x5eed);
        for file in meta_files {
            let orig = std::fs::read_to_string(&file).unwrap();
            for _ in 0..24 {
                let Some(bad) = damage_metadata(&orig, &mut rng) else {
                    continue;
                };
                std::fs::write(&file, &bad).unwrap();
                let shown: String = bad.chars().take(300).collect();
                let what = format!(
                    "{name}: {} = {shown}",
                    file.file_name().unwrap().to_string_lossy()
                );
                dog.step(what.clone());
                runs += 1;
                if let Err(panic) = open_and_read(&work) {
                    failures.push(format!("{what}: PANIC {panic}"));
                }
            }
            std::fs::write(&file, &orig).unwrap();
        }
        let _ = std::fs::remove_dir_all(&work);
    }
    let _ = std::fs::remove_dir_all(&root);
    eprintln!(
        "damaged metadata: {runs} opens, {} failures",
        failures.len()
    );
    assert!(
        runs > 1000,
        "only {runs} damaged documents ran: are the fixtures present?"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
