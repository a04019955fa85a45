//! The library's error type. Every variant maps to exactly one C status code ([`Error::status`]).

use crate::status::*;

/// An error raised anywhere in libzarr. The message carries the context (path, chunk key, sizes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A caller-supplied argument is invalid (NULL pointer, bad mode, rank mismatch, bad name).
    #[error("{0}")]
    InvalidArgument(String),
    /// A handle is NULL, closed, or not a libzarr handle of the expected kind.
    #[error("{0}")]
    InvalidHandle(String),
    /// The caller's buffer size does not match the region.
    #[error("{0}")]
    BufferSize(String),
    /// The region lies (partly) outside the array.
    #[error("{0}")]
    OutOfBounds(String),
    /// A write was attempted through a read-only handle.
    #[error("{0}")]
    ReadOnly(String),
    /// A metadata document is malformed or structurally invalid.
    #[error("{0}")]
    Metadata(String),
    /// Well-formed metadata names something this library does not implement (codec, data type, extension).
    #[error("{0}")]
    Unsupported(String),
    /// A value cannot be represented in the array's data type.
    #[error("{0}")]
    Value(String),
    /// Stored bytes cannot be decoded (truncated, corrupt, inconsistent sizes).
    #[error("{0}")]
    Codec(String),
    /// A stored checksum does not match the data.
    #[error("{0}")]
    Checksum(String),
    /// No node at the given path.
    #[error("{0}")]
    NotFound(String),
    /// A node already exists where one was to be created.
    #[error("{0}")]
    Exists(String),
    /// An operating-system I/O failure.
    #[error("{0}")]
    Io(String),
    /// A bug in libzarr (including a caught panic).
    #[error("{0}")]
    Internal(String),
    /// An allocation failed, or the input asks for more memory than a documented ceiling allows.
    #[error("{0}")]
    Memory(String),
    /// A commit lost to another writer's (a transactional store's branch moved meanwhile).
    #[error("{0}")]
    Conflict(String),
}

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The C status code for this error.
    pub fn status(&self) -> zarr_status {
        self.parts().0
    }

    /// The message without the variant.
    pub fn message(&self) -> &str {
        self.parts().1
    }

    /// The status code and the message: the one place that maps each variant to its status.
    fn parts(&self) -> (zarr_status, &str) {
        match self {
            Error::InvalidArgument(m) => (ZARR_ERR_INVALID_ARGUMENT, m),
            Error::InvalidHandle(m) => (ZARR_ERR_INVALID_HANDLE, m),
            Error::BufferSize(m) => (ZARR_ERR_BUFFER_SIZE, m),
            Error::OutOfBounds(m) => (ZARR_ERR_OUT_OF_BOUNDS, m),
            Error::ReadOnly(m) => (ZARR_ERR_READ_ONLY, m),
            Error::Metadata(m) => (ZARR_ERR_METADATA, m),
            Error::Unsupported(m) => (ZARR_ERR_UNSUPPORTED, m),
            Error::Value(m) => (ZARR_ERR_VALUE, m),
            Error::Codec(m) => (ZARR_ERR_CODEC, m),
            Error::Checksum(m) => (ZARR_ERR_CHECKSUM, m),
            Error::NotFound(m) => (ZARR_ERR_NOT_FOUND, m),
            Error::Exists(m) => (ZARR_ERR_EXISTS, m),
            Error::Io(m) => (ZARR_ERR_IO, m),
            Error::Internal(m) => (ZARR_ERR_INTERNAL, m),
            Error::Memory(m) => (ZARR_ERR_MEMORY, m),
            Error::Conflict(m) => (ZARR_ERR_CONFLICT, m),
        }
    }

    /// The same error with `prefix: ` put before its message (e.g. the chunk key or file).
    pub fn context(self, prefix: impl std::fmt::Display) -> Error {
        self.map_message(|m| format!("{prefix}: {m}"))
    }

    /// The same error (same variant) with its message rewritten by `f`.
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> Error {
        let wrap = f;
        match self {
            Error::InvalidArgument(m) => Error::InvalidArgument(wrap(m)),
            Error::InvalidHandle(m) => Error::InvalidHandle(wrap(m)),
            Error::BufferSize(m) => Error::BufferSize(wrap(m)),
            Error::OutOfBounds(m) => Error::OutOfBounds(wrap(m)),
            Error::ReadOnly(m) => Error::ReadOnly(wrap(m)),
            Error::Metadata(m) => Error::Metadata(wrap(m)),
            Error::Unsupported(m) => Error::Unsupported(wrap(m)),
            Error::Value(m) => Error::Value(wrap(m)),
            Error::Codec(m) => Error::Codec(wrap(m)),
            Error::Checksum(m) => Error::Checksum(wrap(m)),
            Error::NotFound(m) => Error::NotFound(wrap(m)),
            Error::Exists(m) => Error::Exists(wrap(m)),
            Error::Io(m) => Error::Io(wrap(m)),
            Error::Internal(m) => Error::Internal(wrap(m)),
            Error::Memory(m) => Error::Memory(wrap(m)),
            Error::Conflict(m) => Error::Conflict(wrap(m)),
        }
    }

    /// An I/O error on `what` (a path or key). `NotFound` from the OS becomes [`Error::NotFound`].
    pub fn io(what: impl std::fmt::Display, e: std::io::Error) -> Error {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::NotFound(format!("{what}: {e}"))
        } else {
            Error::Io(format!("{what}: {e}"))
        }
    }
}

/// Allocates a zero-initialised buffer of `n` bytes, failing with [`Error::Memory`] instead of aborting.
/// The memory comes zeroed from the allocator (`calloc`): a large buffer is fresh pages that the kernel
/// zeroes when they are first touched, so a buffer sized by input (a declared chunk size) costs resident
/// memory only for the bytes a decoder actually writes.
pub fn try_alloc(n: usize) -> Result<Vec<u8>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(n).map_err(|_| alloc_failed(n))?;
    // SAFETY: the layout's size is not zero.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return Err(alloc_failed(n));
    }
    // SAFETY: `p` comes from the global allocator with the layout of `[u8; n]` (capacity n, align 1),
    // and all n bytes are initialised (zeroed).
    Ok(unsafe { Vec::from_raw_parts(p, n, n) })
}

/// Makes room in `v` for `additional` more elements, failing with [`Error::Memory`] instead of aborting
/// (the fallible allocation every input-driven buffer uses).
pub fn try_reserve<T>(v: &mut Vec<T>, additional: usize) -> Result<()> {
    v.try_reserve_exact(additional).map_err(|_| alloc_failed(additional.saturating_mul(std::mem::size_of::<T>())))
}

/// The error of an allocation of `bytes` bytes that the allocator refused.
pub fn alloc_failed(bytes: usize) -> Error {
    Error::Memory(format!("cannot allocate {bytes} bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_keeps_variant() {
        let e = Error::Codec("bad".into()).context("chunk c/0");
        assert_eq!(e, Error::Codec("chunk c/0: bad".into()));
        assert_eq!(e.status(), ZARR_ERR_CODEC);
    }

    #[test]
    fn io_not_found_maps() {
        let e = Error::io("x", std::io::Error::from(std::io::ErrorKind::NotFound));
        assert_eq!(e.status(), ZARR_ERR_NOT_FOUND);
        let e = Error::io("x", std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        assert_eq!(e.status(), ZARR_ERR_IO);
    }

    #[test]
    fn try_alloc_refuses_absurd() {
        assert_eq!(try_alloc(usize::MAX / 2).unwrap_err().status(), ZARR_ERR_MEMORY);
        assert_eq!(try_alloc(3).unwrap(), vec![0, 0, 0]);
    }
}
