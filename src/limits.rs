//! Ceilings on what input may make the library read into memory (docs/limits.md): the metadata
//! ceiling (the store option `max_metadata_bytes`, else `ZARR_MAX_METADATA_BYTES`, default 64 MiB;
//! a store reports its own with [`crate::store::Store::max_metadata_bytes`]) on a metadata document's size and on the JSON
//! values it may hold, and [`ReadLimit`], the most bytes one whole-value read of a store accepts (a
//! metadata document: the ceiling; a chunk: the largest size any encoding of it can have), which
//! every store enforces while it reads, so that a value longer than that is an error after at most
//! the limit was read, never a buffer of the length a file or a server claims.

use crate::error::Error;
use std::sync::atomic::{AtomicU64, Ordering};

/// Default ceiling on one metadata document (`zarr.json`, `.zarray`, `.zattrs`, `.zmetadata`, ...).
pub const MAX_METADATA_BYTES: u64 = 64 << 20;

/// Bytes of the metadata ceiling per JSON value a document may hold. A parsed JSON value takes about
/// 110 bytes (serde_json's `Value` with ordered objects, a number kept as its text), and opening a node
/// holds its document once (the text until it is parsed, then the parsed values, the attributes taken
/// out of the document rather than copied): its strings' bytes plus about 110 bytes per value, so a
/// document within the ceiling of `C` bytes takes at most about `2.8 C` bytes (text included) while a
/// node is opened, however its text is written (`[1,1,1,...]` or `NaN,NaN,...` included).
pub const METADATA_BYTES_PER_VALUE: u64 = 128;

/// The ceiling in force (0: not yet read from the environment).
static METADATA_LIMIT: AtomicU64 = AtomicU64::new(0);

/// The metadata ceiling: `ZARR_MAX_METADATA_BYTES` from the environment when set (read once, a
/// positive integer), otherwise [`MAX_METADATA_BYTES`]. A larger document is refused before it is read
/// whole ([`crate::Error::Memory`]); so is one holding more than one JSON value per
/// [`METADATA_BYTES_PER_VALUE`] bytes of the ceiling.
pub fn max_metadata_bytes() -> u64 {
    match METADATA_LIMIT.load(Ordering::Relaxed) {
        0 => {
            let n = std::env::var("ZARR_MAX_METADATA_BYTES")
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .filter(|&n| n > 0)
                .unwrap_or(MAX_METADATA_BYTES);
            let _ = METADATA_LIMIT.compare_exchange(0, n, Ordering::Relaxed, Ordering::Relaxed);
            METADATA_LIMIT.load(Ordering::Relaxed)
        }
        n => n,
    }
}

/// Sets the ceiling returned by [`max_metadata_bytes`] for the whole process (tests and fuzz targets
/// lower it); 0 restores the default.
#[doc(hidden)]
pub fn set_max_metadata_bytes(n: u64) {
    METADATA_LIMIT.store(if n == 0 { MAX_METADATA_BYTES } else { n }, Ordering::Relaxed);
}

/// The most JSON values a metadata document may hold under a metadata ceiling of `ceiling` bytes.
pub fn max_metadata_values(ceiling: u64) -> u64 {
    (ceiling / METADATA_BYTES_PER_VALUE).max(1024)
}

/// Where the metadata ceiling is set, for messages.
pub const METADATA_CEILING_SETTING: &str = "store option max_metadata_bytes or ZARR_MAX_METADATA_BYTES; docs/limits.md";

/// What a read is for, which decides what a value longer than its limit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadKind {
    /// A metadata document: longer than the metadata ceiling is [`Error::Memory`].
    Metadata,
    /// A chunk or shard: longer than any encoding of it can be is [`Error::Codec`] (corrupt data).
    Chunk,
}

/// The most bytes one whole-value read accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadLimit {
    /// The limit in bytes.
    pub bytes: u64,
    /// What the value is.
    pub kind: ReadKind,
}

impl ReadLimit {
    /// A metadata document under a metadata ceiling of `ceiling` bytes (a store's
    /// [`crate::store::Store::max_metadata_bytes`]).
    pub fn metadata(ceiling: u64) -> ReadLimit {
        ReadLimit { bytes: ceiling, kind: ReadKind::Metadata }
    }

    /// A chunk (or shard) whose encodings are at most `bytes` long.
    pub fn chunk(bytes: u64) -> ReadLimit {
        ReadLimit { bytes, kind: ReadKind::Chunk }
    }

    /// No limit beyond what memory allows (a value the caller itself asked to copy whole).
    pub fn none() -> ReadLimit {
        ReadLimit { bytes: u64::MAX, kind: ReadKind::Chunk }
    }

    /// Fails with [`ReadLimit::exceeded`] when a value of `len` bytes is longer than the limit.
    pub fn check(&self, location: &str, len: u64) -> crate::Result<()> {
        if len > self.bytes {
            return Err(self.exceeded(location, Some(len)));
        }
        Ok(())
    }

    /// The error of a value at `location` longer than the limit: `len` when its length is known
    /// (a file's size), `None` when the read stopped at the limit (a body still streaming).
    pub fn exceeded(&self, location: &str, len: Option<u64>) -> Error {
        let size = match len {
            Some(n) => format!("{n} bytes"),
            None => format!("more than {} bytes", self.bytes),
        };
        match self.kind {
            ReadKind::Metadata => Error::Memory(format!(
                "{location}: the metadata document is {size}, over the metadata ceiling of {} bytes ({METADATA_CEILING_SETTING})",
                self.bytes
            )),
            ReadKind::Chunk => Error::Codec(format!(
                "{location}: the stored value is {size}, longer than any encoding of this chunk can be \
                 (at most {} bytes)",
                self.bytes
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{ZARR_ERR_CODEC, ZARR_ERR_MEMORY};

    #[test]
    fn limits_name_what_was_exceeded() {
        let m = ReadLimit { bytes: 10, kind: ReadKind::Metadata };
        assert!(m.check("k", 10).is_ok());
        let e = m.check("g/zarr.json", 11).unwrap_err();
        assert_eq!(e.status(), ZARR_ERR_MEMORY);
        assert!(e.message().contains("g/zarr.json: the metadata document is 11 bytes"), "{e}");
        let e = ReadLimit::chunk(5).exceeded("c/0", None);
        assert_eq!(e.status(), ZARR_ERR_CODEC);
        assert!(e.message().contains("more than 5 bytes"), "{e}");
        assert!(ReadLimit::none().check("x", u64::MAX).is_ok());
    }
}

/// Fails with [`Error::Memory`] when a metadata text is over the metadata ceiling `max`, or holds so
/// many JSON values that parsing it would take more memory than the ceiling allows
/// ([`max_metadata_values`]): refused before parsing, so that a document of a few
/// megabytes of `NaN,` cannot take gigabytes.
pub(crate) fn check_parse_size(bytes: &[u8], max: u64) -> crate::Result<()> {
    if bytes.len() as u64 > max {
        return Err(Error::Memory(format!(
            "the metadata document is {} bytes, over the metadata ceiling of {max} bytes ({METADATA_CEILING_SETTING})",
            bytes.len()
        )));
    }
    let values = crate::format::json_text::count_values(bytes);
    let max_values = max_metadata_values(max);
    if values > max_values {
        return Err(Error::Memory(format!(
            "the metadata document holds about {values} JSON values, more than the {max_values} that the metadata ceiling \
             of {max} bytes allows (one per {} bytes; {METADATA_CEILING_SETTING})",
            METADATA_BYTES_PER_VALUE
        )));
    }
    Ok(())
}
