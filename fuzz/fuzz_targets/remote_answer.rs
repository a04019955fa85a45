//! Fuzz target `remote_answer`: see `zarr::fuzzing::remote_answer`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr::fuzzing::remote_answer(data));
