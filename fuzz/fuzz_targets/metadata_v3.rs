//! Fuzz target `metadata_v3`: see `zarr::fuzzing::metadata_v3`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr::fuzzing::metadata_v3(data));
