//! Regression inputs of the fuzz targets: every file under `tests/fuzz_regressions/<target>/` runs
//! through the same body the fuzz target runs (`zarr::fuzzing::<target>`), which must return without
//! panicking, under the allocation limit the fuzz targets run under (`fuzz/alloc_limit.rs`: a single
//! allocation over 128 MiB, fallible or not, aborts the test with a message naming the input). The
//! inputs are crashes the fuzzers found (fixed since) and hand-made hostile inputs (decompression
//! bombs, headers claiming huge sizes, absurd shapes).

use std::path::Path;
use std::process::Command;

// The fuzz targets' allocation limit (`fuzz/alloc_limit.rs`): any single allocation over
// `FUZZ_MALLOC_LIMIT_MB` MiB (default 128), fallible ones included, aborts the process with a message
// naming the size and the input.
#[path = "../fuzz/alloc_limit.rs"]
mod alloc_limit;

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
        alloc_limit::set_input(Box::leak(p.display().to_string().into_boxed_str()));
        f(&data);
    }
    files.len()
}

#[test]
fn fuzz_regression_inputs() {
    // One test: the input named in the allocation limit's message is process-wide, so the inputs run
    // one at a time.
    for (name, f) in TARGETS {
        let n = run_target(name, *f);
        assert!(n > 0, "no regression inputs for {name}");
    }
}

/// Set in the environment of the child process of [`allocation_limit_aborts`]: what
/// [`allocation_limit_child`] asks for.
const CHILD: &str = "ZARR_ALLOC_LIMIT_CHILD";

/// The allocation limit can fail: a child process of this test binary (running
/// [`allocation_limit_child`]) that asks for more than the limit, by a fallible `try_reserve`, a
/// growing reallocation or a zeroed allocation, aborts with the limit's message; one that asks for
/// exactly the limit succeeds. `FUZZ_MALLOC_LIMIT_MB` sets the limit; a value that is not a whole
/// number of MiB is refused (an abort, not a silent default).
#[test]
fn allocation_limit_aborts() {
    use std::os::unix::process::ExitStatusExt;
    let over = |what: &str, size: usize, limit_mb: usize| {
        format!("{what} of {size} bytes exceeds the fuzz allocation limit of {} bytes", limit_mb << 20)
    };
    let default = alloc_limit::DEFAULT_LIMIT_MB;
    // (child mode, FUZZ_MALLOC_LIMIT_MB, the message of the abort or None for success)
    let cases = [
        ("try_reserve", None, Some(over("an allocation", 2 << 30, default))),
        ("grow", None, Some(over("a reallocation", 2 << 30, default))),
        ("zeroed_2mib", Some("1"), Some(over("a zeroed allocation", 2 << 20, 1) + " (FUZZ_MALLOC_LIMIT_MB=1)")),
        ("zeroed_1mib", Some("1"), None),
        ("zeroed_1mib", Some("1M"), Some("FUZZ_MALLOC_LIMIT_MB must be a whole number of MiB".to_string())),
    ];
    for (mode, limit, expect) in cases {
        let mut cmd = Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", "allocation_limit_child", "--ignored", "--nocapture", "--test-threads=1"]);
        cmd.env(CHILD, mode).env_remove("FUZZ_MALLOC_LIMIT_MB");
        if let Some(l) = limit {
            cmd.env("FUZZ_MALLOC_LIMIT_MB", l);
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        match expect {
            Some(message) => {
                assert_eq!(out.status.signal(), Some(6), "{mode} (limit {limit:?}) must abort: {:?}\n{err}", out.status);
                assert!(err.contains(&message), "{mode} (limit {limit:?}): no '{message}' in\n{err}");
            }
            None => assert!(out.status.success(), "{mode} (limit {limit:?}) must succeed: {:?}\n{err}", out.status),
        }
    }
}

/// The child process of [`allocation_limit_aborts`]: nothing unless [`CHILD`] is set.
#[test]
#[ignore = "run by allocation_limit_aborts in a child process"]
fn allocation_limit_child() {
    let Ok(mode) = std::env::var(CHILD) else { return };
    let mut v: Vec<u8> = Vec::new();
    match mode.as_str() {
        "try_reserve" => {
            let r = v.try_reserve(2 << 30);
            panic!("a try_reserve of 2 GiB returned {r:?} instead of aborting");
        }
        "grow" => {
            v.reserve_exact(1 << 20);
            let r = v.try_reserve_exact(2 << 30);
            panic!("a try_reserve growing to 2 GiB returned {r:?} instead of aborting");
        }
        "zeroed_2mib" => {
            let v = std::hint::black_box(vec![0u8; 2 << 20]);
            panic!("a zeroed allocation of {} bytes did not abort", v.len());
        }
        "zeroed_1mib" => {
            let v = std::hint::black_box(vec![0u8; 1 << 20]);
            assert_eq!(v.len(), 1 << 20);
        }
        m => panic!("unknown mode {m}"),
    }
}
