//! libzarr: a Zarr implementation (Zarr v3 and v2, Zarr v1 read only) with a C ABI.
//!
//! Floors, from the ground up; a module uses its own floor and the floors below it, never one above,
//! and no two modules use each other (`tools/check_layers.py` reads this map and checks every
//! `crate::` path of `src/`; see also ARCHITECTURE.md):
//! 1. [`error`] and [`status`] (errors and their C status codes), [`index_order`] (how messages quote
//!    indices: C or Fortran order), [`buffer`], [`scratch`] (per-thread buffers), [`threads`] (the chunk
//!    thread pool), [`format`] (v3 extension objects, JSON text with `NaN`/`Infinity`, base64),
//!    [`limits`] (ceilings on what input may make the library read into memory).
//! 2. [`dtype`] (data types, their v2 and v3 names, fill values), [`chunk_grid`], [`chunk_key`],
//!    [`store`] (key/value stores: byte-range reads, atomic writes).
//! 3. [`selection`]: all region arithmetic: regions of chunks, buffer layouts, where decoded elements
//!    go ([`selection::Dest`]), element conversion, copies and transpositions, index iteration.
//! 4. [`codec`]: the chain array->array*, array->bytes, bytes->bytes*, one file per codec, and
//!    [`codec::registry`], the one list of codecs.
//! 5. [`metadata`]: v1, v2 and v3 documents read into one array model, [`metadata::ArrayMetadata`],
//!    whose chain `codec` builds.
//! 6. [`array`] (region reads and writes, chunks in parallel), [`node`], [`group`], [`consolidated`].
//! 7. `icechunk_import` (kerchunk references written into an Icechunk branch as virtual chunks; feature
//!    `icechunk`), [`spec`] (arrays described without JSON) and [`convert`] (v2 -> v3 metadata).
//! 8. [`ffi`]: the C ABI (`include/zarr.h`), the only module with `extern "C"` functions or raw
//!    pointers received from C.
//! 9. `fuzzing`: the fuzz targets' bodies; it exists only with the cargo feature `fuzzing`.
//!
//! The modules that Rust callers use (the tests, examples and fuzz targets of this repository) are
//! public; the others are private to the crate (the C ABI's functions are exported all the same).
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]
// The floor map above links private modules too (`cargo doc --document-private-items` shows them).
#![allow(rustdoc::private_intra_doc_links)]

pub mod array;
mod buffer;
mod chunk_grid;
mod chunk_key;
pub mod codec;
mod consolidated;
pub mod convert;
pub mod dtype;
mod error;
mod ffi;
#[cfg(feature = "icechunk")]
mod icechunk_import;
pub mod format;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod group;
mod index_order;
pub mod limits;
pub mod metadata;
pub mod node;
mod scratch;
mod selection;
mod spec;
pub mod status;
pub mod store;
mod threads;

pub use array::Array;
pub use error::{Error, Result};
pub use group::Group;
