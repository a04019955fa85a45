//! Fuzz target `codec_numcodecs`: see `zarr::fuzzing::codec_numcodecs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| zarr::fuzzing::codec_numcodecs(data));
