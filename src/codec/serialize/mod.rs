//! Serializers (array -> bytes codecs): see the layout in [`crate::codec`].

pub mod bytes;
pub mod packbits;
pub mod pcodec;
pub mod vlen;
pub mod zfp;
pub mod zfpy;
