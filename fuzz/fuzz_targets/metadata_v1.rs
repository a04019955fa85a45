//! Fuzz target `metadata_v1`: see `zarr::fuzzing::metadata_v1`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr::fuzzing::metadata_v1(data));
