//! Fuzz target `store_read`: see `zarr::fuzzing::store_read`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr::fuzzing::store_read(data));
