//! Checksums (bytes -> bytes): the codecs of this kind, one file each (the layout: [`crate::codec`]).

pub mod checksum32;
pub mod crc32c;
