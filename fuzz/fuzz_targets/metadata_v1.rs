//! Fuzz target `metadata_v1`: see `zarr::fuzzing::metadata_v1`.
#![no_main]

// Any single allocation over FUZZ_MALLOC_LIMIT_MB (default 128) fails the input.
#[path = "../alloc_limit.rs"]
mod alloc_limit;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr::fuzzing::metadata_v1(data));
