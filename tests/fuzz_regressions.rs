//! Regression inputs of the fuzz targets: every file under `tests/fuzz_regressions/<target>/` runs
//! through the same body the fuzz target runs (`zarr::fuzzing::<target>`), which must return without
//! panicking, and no single allocation may exceed [`MAX_ALLOC`] (the `-malloc_limit_mb` the fuzzers
//! run under). The inputs are crashes the fuzzers found (fixed since) and hand-made hostile inputs
//! (decompression bombs, headers claiming huge sizes, absurd shapes).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest single allocation allowed while an input runs (bytes): as `-malloc_limit_mb=512`.
const MAX_ALLOC: usize = 512 << 20;

/// Records the largest allocation requested.
struct Tracking;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

type Target = fn(&[u8]);

const TARGETS: &[(&str, Target)] = &[
    ("metadata_v3", zarr::fuzzing::metadata_v3),
    ("metadata_v2", zarr::fuzzing::metadata_v2),
    ("metadata_v1", zarr::fuzzing::metadata_v1),
    ("codec_v3", zarr::fuzzing::codec_v3),
    ("codec_numcodecs", zarr::fuzzing::codec_numcodecs),
    ("shard_index", zarr::fuzzing::shard_index),
    ("store_read", zarr::fuzzing::store_read),
    ("zip_store", zarr::fuzzing::zip_store),
    #[cfg(feature = "remote")]
    ("remote_answer", zarr::fuzzing::remote_answer),
];

/// Runs every committed input of `target`; returns how many ran.
fn run_target(name: &str, f: Target) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions").join(name);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for p in &files {
        let data = std::fs::read(p).unwrap();
        LARGEST.store(0, Ordering::Relaxed);
        f(&data);
        let largest = LARGEST.load(Ordering::Relaxed);
        assert!(
            largest <= MAX_ALLOC + data.len(),
            "{}: an allocation of {largest} bytes (limit {MAX_ALLOC})",
            p.display()
        );
    }
    files.len()
}

#[test]
fn fuzz_regression_inputs() {
    // One test: the allocation high-water mark is process-wide, so the inputs run one at a time.
    for (name, f) in TARGETS {
        let n = run_target(name, *f);
        assert!(n > 0, "no regression inputs for {name}");
    }
}
