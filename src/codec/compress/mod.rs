//! Compressors (bytes -> bytes): the codecs of this kind, one file each (the layout: [`crate::codec`]).

pub mod blosc;
pub mod bz2;
pub mod deflate;
pub mod gzip;
pub mod lz4;
pub mod lzma;
pub mod zlib;
pub mod zstd;
