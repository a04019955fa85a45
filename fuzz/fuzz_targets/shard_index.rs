//! Fuzz target `shard_index`: see `zarr::fuzzing::shard_index`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr::fuzzing::shard_index(data));
