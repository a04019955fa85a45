//! The text formats under every metadata document, known to every floor above [`crate::error`]:
//! Zarr v3 extension objects ([`extension::Extension`]), JSON text with Python's bare `NaN` /
//! `Infinity` tokens ([`json_text`]), and base64 ([`base64`], v2 byte-string fill values).
//!
//! Codecs and data types read their configurations through this module, not through
//! [`crate::metadata`], which sits above them.

pub mod base64;
pub mod extension;
pub mod json_text;
