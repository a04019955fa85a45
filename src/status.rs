//! Status codes: the C-facing number of every [`crate::Error`] variant ([`crate::Error::status`]).
//! Codes are never renumbered; retired codes stay listed. The C ABI re-exports them from
//! [`crate::ffi::status`] (`include/zarr.h`).
#![allow(non_camel_case_types)]

/// Result of every libzarr call: `ZARR_OK` (0) or a negative `ZARR_ERR_*` code.
/// `zarr_last_error()` explains a failure.
pub type zarr_status = i32;

/// Success.
pub const ZARR_OK: zarr_status = 0;

/// An argument is invalid: a NULL pointer, an unknown mode, a rank mismatch, an invalid name.
pub const ZARR_ERR_INVALID_ARGUMENT: zarr_status = -1;
/// A handle is NULL, already closed, or not a handle of the expected kind.
pub const ZARR_ERR_INVALID_HANDLE: zarr_status = -2;
/// The buffer size does not match the region (or the element size).
pub const ZARR_ERR_BUFFER_SIZE: zarr_status = -3;
/// The region lies (partly) outside the array.
pub const ZARR_ERR_OUT_OF_BOUNDS: zarr_status = -4;
/// A write through a handle opened read-only.
pub const ZARR_ERR_READ_ONLY: zarr_status = -5;

/// A metadata document is malformed or structurally invalid.
pub const ZARR_ERR_METADATA: zarr_status = -10;
/// Valid metadata that names something this library does not implement (codec, data type, extension).
pub const ZARR_ERR_UNSUPPORTED: zarr_status = -11;
/// A value cannot be represented in the array's data type.
pub const ZARR_ERR_VALUE: zarr_status = -12;

/// Stored bytes cannot be decoded: truncated or corrupt data, inconsistent sizes.
pub const ZARR_ERR_CODEC: zarr_status = -20;
/// A stored checksum does not match the data.
pub const ZARR_ERR_CHECKSUM: zarr_status = -21;

/// No array or group at the path.
pub const ZARR_ERR_NOT_FOUND: zarr_status = -30;
/// An array or group already exists at the path.
pub const ZARR_ERR_EXISTS: zarr_status = -31;

/// An operating-system I/O error (permissions, disk full, ...).
pub const ZARR_ERR_IO: zarr_status = -40;

/// A bug in libzarr, including a caught internal panic.
pub const ZARR_ERR_INTERNAL: zarr_status = -50;

/// Memory for the request could not be allocated: the allocator refused, or the input asks for more than a
/// documented ceiling allows (a metadata document over the metadata ceiling, a stored or remote object
/// longer than the request can need). The call changed nothing; smaller requests may still succeed.
/// Since: 0.4.
pub const ZARR_ERR_MEMORY: zarr_status = -60;

/// A commit lost to another writer's: an Icechunk branch moved since the session began (another
/// process committed), and the changes could not be rebased onto it. The session keeps its changes
/// (discard them and redo the work, or commit with rebasing). Since: 0.4.
pub const ZARR_ERR_CONFLICT: zarr_status = -70;
