//! Fuzz target `remote_answer`: see `zarr::fuzzing::remote_answer`.
#![no_main]

// Any single allocation over FUZZ_MALLOC_LIMIT_MB (default 128) fails the input.
#[path = "../alloc_limit.rs"]
mod alloc_limit;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr::fuzzing::remote_answer(data));
