//! Fuzz target `zip_store`: see `zarr::fuzzing::zip_store`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr::fuzzing::zip_store(data));
