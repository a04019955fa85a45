//! Serializers (array -> bytes): the codecs of this kind, one file each (the layout: [`crate::codec`]).

pub mod bytes;
pub mod packbits;
pub mod pcodec;
pub mod vlen;
pub mod zfp;
pub mod zfpy;
