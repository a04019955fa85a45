//! Writing kerchunk reference sets (the reading side is the `reference://` store).

use super::{guard, str_arg};
use crate::error::Error;

/// Writes the kerchunk JSON reference set in the file `json_path` (version 0 or 1, without `gen`
/// entries) in the Parquet layout into the directory `out_dir`, which must exist and should be empty:
/// `.zmetadata` (every metadata document and the record size) and `<var>/refs.<n>.parq` (the references
/// of array `<var>`'s chunks, `record_size` rows a file, columns path / offset / size / raw, zstd pages),
/// as kerchunk's `refs_to_dataframe` and fsspec's `LazyReferenceMapper` write it; libzarr reads it as
/// `reference://OUT_DIR` (docs/reference-stores.md, "The Parquet layout"). Chunk keys must use the `.`
/// separator; references to the default target (a null URL) are refused. Files are written in place (the
/// caller renames the directory into place for an atomic result); on failure `out_dir` may hold some
/// of them.
///
/// @param json_path    the JSON reference file
/// @param out_dir      an existing directory
/// @param record_size  rows a record file (0: 10000, fsspec's default); at most 10^8
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL, not UTF-8, a record size over 10^8);
///          ZARR_ERR_NOT_FOUND / ZARR_ERR_IO (reading or writing files); ZARR_ERR_METADATA (invalid JSON, a
///          key that is not a metadata document or a chunk of an array, a non-inline metadata document,
///          a null URL; the message names the key); ZARR_ERR_UNSUPPORTED (`gen` entries, another chunk
///          key separator, an array of more than 10^8 chunks, or a library built without the cargo
///          feature `reference-parquet`).
/// Thread-safe (distinct directories). Since: 0.4.
///
/// # Safety
/// `json_path` and `out_dir` are NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn zarr_references_write_parquet(
    json_path: *const std::ffi::c_char,
    out_dir: *const std::ffi::c_char,
    record_size: u64,
) -> crate::ffi::status::zarr_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let json_path = unsafe { str_arg(json_path, "json_path") }?;
        // SAFETY: the caller's contract.
        let out_dir = unsafe { str_arg(out_dir, "out_dir") }?;
        write(json_path, out_dir, record_size)
    })
}

#[cfg(feature = "reference-parquet")]
fn write(json_path: &str, out_dir: &str, record_size: u64) -> crate::error::Result<()> {
    use crate::store::reference_parquet_write::{write_parquet_layout, DEFAULT_RECORD_SIZE};
    let json = std::fs::read(json_path).map_err(|e| Error::io(json_path, e))?;
    let n = if record_size == 0 { DEFAULT_RECORD_SIZE } else { record_size };
    write_parquet_layout(&json, std::path::Path::new(out_dir), n).map_err(|e| e.context(out_dir))
}

#[cfg(not(feature = "reference-parquet"))]
fn write(_json_path: &str, _out_dir: &str, _record_size: u64) -> crate::error::Result<()> {
    Err(Error::Unsupported("writing Parquet references needs the cargo feature reference-parquet".into()))
}
