//! Checksums (bytes -> bytes codecs): see the layout in [`crate::codec`].

pub mod checksum32;
pub mod crc32c;
