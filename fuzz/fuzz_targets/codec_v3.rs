//! Fuzz target `codec_v3`: see `zarr::fuzzing::codec_v3`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr::fuzzing::codec_v3(data));
