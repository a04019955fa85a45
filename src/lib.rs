//! libzarr: a Zarr implementation with a C ABI: Zarr v3 (sharding included) and v2 read and written, v1 read.
//!
//! Layers, inward to outward:
//! - [`dtype`], [`metadata`]: data types, fill values, and the one internal array model ([`metadata::ArrayMetadata`]).
//! - [`chunk_grid`], [`chunk_key`]: the regular and rectilinear chunk grids and the chunk key encodings.
//! - [`codec`]: the codec chain (array->array*, array->bytes, bytes->bytes*) and one file per codec.
//! - [`store`]: the key/value store interface (byte-range reads, atomic writes) and its implementations.
//! - [`array`], [`group`]: nodes of a hierarchy; region reads and writes run chunks in parallel.
//! - [`ffi`]: the C ABI (`include/zarr.h`). Only this module has `extern "C"` functions or raw pointers
//!   received from C.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod array;
pub mod buffer;
pub mod chunk_grid;
pub mod chunk_key;
pub mod codec;
pub mod consolidated;
pub mod convert;
pub mod dtype;
pub mod error;
pub mod ffi;
#[doc(hidden)]
pub mod fuzzing;
pub mod group;
pub mod index_order;
pub mod metadata;
pub mod node;
pub mod selection;
pub mod spec;
pub mod scratch;
pub mod status;
pub mod store;
pub mod threads;

pub use array::Array;
pub use error::{Error, Result};
pub use group::Group;
