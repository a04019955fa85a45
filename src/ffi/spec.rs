//! C functions for creating arrays without writing JSON: the `zarr_array_spec` handle, set up with
//! calls in the manner of netCDF's `nc_def_var_chunking` / `nc_def_var_deflate` and HDF5's
//! `H5Pset_chunk` / `H5Pset_deflate`, then given to zarr_create_from_spec() or
//! zarr_group_create_array_from_spec(). The core is [`crate::spec`].

use super::array::{new_array, zarr_array, zarr_data_type};
use super::handle::{handle_kind, HandleKind};
use crate::store::open_location;
use super::group::zarr_group;
use super::hyperslab::DataTypeCode;
use super::status::*;
use super::{clear_out, guard, need_out, slice_arg, str_arg, write_out, write_string};
use crate::dtype::ext::FLOAT_KINDS;
use crate::dtype::{DataType, FloatKind, SmallInt};
use crate::error::{Error, Result};
use crate::spec::{ArraySpec, Compressor, Shuffle};
use std::ffi::{c_char, c_int, c_void};

/// The level argument of zarr_array_spec_set_compressor() that picks the compressor's default level
/// (zstd 3, gzip 6, blosc 5).
pub const ZARR_LEVEL_DEFAULT: c_int = -2147483647 - 1;
/// zarr_array_spec_set_shuffle(): no shuffle.
pub const ZARR_SHUFFLE_NONE: c_int = 0;
/// zarr_array_spec_set_shuffle(): byte shuffle (blosc's `shuffle`; before zstd or gzip, the numcodecs
/// `shuffle` filter).
pub const ZARR_SHUFFLE_BYTE: c_int = 1;
/// zarr_array_spec_set_shuffle(): bit shuffle (blosc compressors only).
pub const ZARR_SHUFFLE_BIT: c_int = 2;

/// A description of an array to create (opaque): data type, shape, chunking, sharding, compressor,
/// fill value, dimension names, attributes and Zarr format. Create with zarr_array_spec_new(), adjust
/// with the zarr_array_spec_set_*() calls, use with zarr_create_from_spec() or
/// zarr_group_create_array_from_spec() (as often as wanted), release with zarr_array_spec_free().
///
/// Thread-safety: a spec may be read (zarr_create_from_spec(), zarr_array_spec_to_json()) from several
/// threads at once; the setters and zarr_array_spec_free() need external synchronisation.
pub struct zarr_array_spec {
    _opaque: [u8; 0],
}

handle_kind!(
    zarr_array_spec,
    ArraySpec,
    0x7a61_7272_5350_4543, // "zarrSPEC"
    "array spec handle is NULL",
    "not a live zarr_array_spec handle (freed or corrupt?)"
);

/// The data type a spec may be created with, from its C code.
fn spec_data_type(code: DataTypeCode) -> Result<DataType> {
    let mut candidates = vec![
        DataType::Bool,
        DataType::Int8,
        DataType::Int16,
        DataType::Int32,
        DataType::Int64,
        DataType::UInt8,
        DataType::UInt16,
        DataType::UInt32,
        DataType::UInt64,
        DataType::Float16,
        DataType::Float32,
        DataType::Float64,
        DataType::Complex64,
        DataType::Complex128,
        DataType::String,
        DataType::Bytes,
        DataType::SmallInt(SmallInt::I2),
        DataType::SmallInt(SmallInt::I4),
        DataType::SmallInt(SmallInt::U2),
        DataType::SmallInt(SmallInt::U4),
    ];
    for k in FLOAT_KINDS {
        if !k.is_core() {
            candidates.push(DataType::ExtFloat(k));
        }
        if !matches!(k, FloatKind::F32 | FloatKind::F64) {
            candidates.push(DataType::ExtComplex(k));
        }
    }
    if let Some(t) = candidates.into_iter().find(|t| zarr_data_type::from(t) as i32 == code.0) {
        return Ok(t);
    }
    use zarr_data_type::*;
    let needs_params = [ZARR_RAW, ZARR_STRUCT, ZARR_DATETIME64, ZARR_TIMEDELTA64, ZARR_FIXED_UTF32, ZARR_NULL_TERMINATED_BYTES];
    if needs_params.iter().any(|c| *c as i32 == code.0) {
        return Err(Error::Unsupported(format!(
            "zarr_data_type {} needs parameters an array spec does not hold: create the array from a metadata \
             document (zarr_create)",
            code.0
        )));
    }
    Err(Error::InvalidArgument(format!("{} is not a zarr_data_type", code.0)))
}

/// Creates an array spec with every default: compressor zstd level 3 (no checksum), chunks of at most
/// 1 MiB (the rule below), fill value zero (false, 0, +0.0; the empty string for ZARR_STRING and
/// ZARR_BYTES), no sharding, no dimension names, no attributes, Zarr format 3 (or, through
/// zarr_group_create_array_from_spec(), the group's format).
///
/// Default chunks: starting from the shape (an extent of 0 counts as 1), the largest extent (the first
/// among equals) is halved, rounding up, until a chunk holds at most 1 MiB (ZARR_STRING and ZARR_BYTES
/// elements count 16 bytes) or every extent is 1. E.g. float64 [4096, 4096] gets chunks [256, 512].
/// Default inner chunks of a sharded array (zarr_array_spec_set_shards() without
/// zarr_array_spec_set_chunks()): starting from the shard shape, the largest extent above 1 is divided
/// by its smallest prime factor until the chunk holds at most 1 MiB, so they always divide the shard.
///
/// @param data_type  the element type: bool, the integer, float and complex types, ZARR_STRING,
///                   ZARR_BYTES and the extension float and small-integer types (18 and up except
///                   ZARR_DATETIME64, ZARR_TIMEDELTA64, ZARR_FIXED_UTF32, ZARR_NULL_TERMINATED_BYTES);
///                   types that need parameters (ZARR_RAW, ZARR_STRUCT, those four) are created from a
///                   metadata document with zarr_create() instead
/// @param rank       the number of dimensions (0: a scalar)
/// @param shape      `rank` extents (may be NULL when `rank` is 0)
/// @param out        receives the new spec (free with zarr_array_spec_free()); NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL, not a zarr_data_type value);
///          ZARR_ERR_UNSUPPORTED (a type needing parameters).
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `shape` holds `rank` values; `out` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_spec_new(
    data_type: DataTypeCode,
    rank: usize,
    shape: *const u64,
    out: *mut *mut zarr_array_spec,
) -> zarr_status {
    unsafe { clear_out(out) };
    guard(|| {
        need_out(out, "out")?;
        let shape = unsafe { slice_arg(shape, rank, "shape") }?;
        let spec = ArraySpec::new(spec_data_type(data_type)?, shape)?;
        let handle = zarr_array_spec::into_raw(spec)?;
        unsafe { write_out(out, handle, "out") }
    })
}

/// Frees an array spec. NULL is a no-op. Arrays created from it are not affected.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE (not a live spec).
/// Not thread-safe with other calls on the same spec. Since: 0.2.
///
/// # Safety
/// `spec` is NULL or a live spec; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_spec_free(spec: *mut zarr_array_spec) -> zarr_status {
    // SAFETY: `spec` is NULL or a live spec, per the contract.
    guard(|| unsafe { zarr_array_spec::close(spec) })
}

/// Sets the chunk shape (`nc_def_var_chunking`, `H5Pset_chunk`). For a sharded array these are the
/// inner chunks, the unit of compression inside each shard, and must divide the shard shape. Chunks
/// may be larger than the array.
///
/// @param chunks  `rank` extents, each at least 1
/// @param rank    must equal the spec's rank
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL, wrong rank, a zero extent).
/// Not thread-safe with other calls on the same spec. Since: 0.2.
///
/// # Safety
/// `spec` is a live spec; `chunks` holds `rank` values.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_spec_set_chunks(spec: *mut zarr_array_spec, chunks: *const u64, rank: usize) -> zarr_status {
    guard(|| {
        let s = unsafe { zarr_array_spec::get_mut(spec) }?;
        let chunks = unsafe { slice_arg(chunks, rank, "chunks") }?;
        s.set_chunks(chunks)
    })
}

/// Makes the array sharded (Zarr format 3 only): each stored object (a shard) holds a shard of this
/// shape, made of inner chunks (zarr_array_spec_set_chunks(), else the default inner chunks described
/// at zarr_array_spec_new()), compressed one by one, with an index (`bytes` + `crc32c`) at its end.
/// `shard_shape` NULL removes the sharding.
///
/// @param shard_shape  `rank` extents, each at least 1 and a multiple of the chunk extent; or NULL
/// @param rank         must equal the spec's rank
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (wrong rank, a zero extent).
///          Whether the chunks divide the shards is checked when the array is created.
/// Not thread-safe with other calls on the same spec. Since: 0.2.
///
/// # Safety
/// `spec` is a live spec; `shard_shape` is NULL or holds `rank` values.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_spec_set_shards(
    spec: *mut zarr_array_spec,
    shard_shape: *const u64,
    rank: usize,
) -> zarr_status {
    guard(|| {
        let s = unsafe { zarr_array_spec::get_mut(spec) }?;
        if shard_shape.is_null() {
            return s.set_shards(None);
        }
        let shards = unsafe { slice_arg(shard_shape, rank, "shard_shape") }?;
        s.set_shards(Some(shards))
    })
}

/// Sets the compressor (`nc_def_var_deflate`, `H5Pset_deflate`) by name and level:
/// - `"zstd"`: levels -131072 to 22, default 3 (written without checksum);
/// - `"gzip"`: levels 0 to 9, default 6;
/// - `"blosc-lz4"`, `"blosc-lz4hc"`, `"blosc-blosclz"`, `"blosc-zstd"`, `"blosc-zlib"`: blosc with that
///   internal compressor, levels 0 to 9, default 5, with the byte shuffle unless
///   zarr_array_spec_set_shuffle() says otherwise;
/// - `"none"`: no compression (the level is ignored).
///
/// zarr_array_spec_compressor_name() lists the names (those of libzarr's codec registry).
///
/// Zarr v3 writes the `zstd`, `gzip` and `blosc` codecs, Zarr v2 the numcodecs compressors of the same
/// names.
///
/// @param name   one of the names above (NUL-terminated)
/// @param level  the level, or ZARR_LEVEL_DEFAULT
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL, unknown name, level out of
///          range).
/// Not thread-safe with other calls on the same spec. Since: 0.2.
///
/// # Safety
/// `spec` is a live spec; `name` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_spec_set_compressor(
    spec: *mut zarr_array_spec,
    name: *const c_char,
    level: c_int,
) -> zarr_status {
    guard(|| {
        let s = unsafe { zarr_array_spec::get_mut(spec) }?;
        let name = unsafe { str_arg(name, "name") }?;
        s.compressor = Compressor::parse(name, (level != ZARR_LEVEL_DEFAULT).then_some(level))?;
        Ok(())
    })
}

/// The `index`-th compressor name zarr_array_spec_set_compressor() accepts, in the registry's order
/// (`"zstd"`, `"gzip"`, `"blosc-lz4"`, ...); `"none"`, also accepted, is not listed. Count them by
/// calling with 0, 1, 2, ... until ZARR_ERR_OUT_OF_BOUNDS.
///
/// @param index  0-based position in the list
/// @param name   receives a static NUL-terminated string (never freed; valid for the life of the
///               process); NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (`name` NULL); ZARR_ERR_OUT_OF_BOUNDS (`index` is at or
///          past the number of names).
/// Thread-safe. Since: 0.3.
///
/// # Safety
/// `name` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_spec_compressor_name(
    index: usize,
    name: *mut *const c_char,
) -> zarr_status {
    static NAMES: std::sync::OnceLock<Vec<std::ffi::CString>> = std::sync::OnceLock::new();
    if !name.is_null() {
        // SAFETY: non-NULL and writable by the caller's contract.
        unsafe { name.write(std::ptr::null()) };
    }
    guard(|| {
        need_out(name, "name")?;
        let names = NAMES.get_or_init(|| {
            crate::codec::registry::spec_compressor_names()
                .into_iter()
                .filter_map(|n| std::ffi::CString::new(n).ok())
                .collect()
        });
        let n = names.get(index).ok_or_else(|| {
            Error::OutOfBounds(format!("compressor index {index}: there are {} compressor names", names.len()))
        })?;
        unsafe { write_out(name, n.as_ptr(), "name") }
    })
}

/// Sets the shuffle applied before compression (the `shuffle` flag of `nc_def_var_deflate`,
/// `H5Pset_shuffle`). With a blosc compressor it is blosc's own shuffle (default: byte). With zstd or
/// gzip a byte shuffle adds the numcodecs `shuffle` filter (Zarr v3: the `numcodecs.shuffle` codec,
/// read by zarr-python 3; Zarr v2: a `shuffle` filter); the bit shuffle needs blosc, which is checked
/// when the array is created. With `"none"` a byte shuffle is still written (it then only reorders
/// the bytes).
///
/// @param shuffle  ZARR_SHUFFLE_NONE, ZARR_SHUFFLE_BYTE or ZARR_SHUFFLE_BIT
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (another value).
/// Not thread-safe with other calls on the same spec. Since: 0.2.
///
/// # Safety
/// `spec` is a live spec.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_spec_set_shuffle(spec: *mut zarr_array_spec, shuffle: c_int) -> zarr_status {
    guard(|| {
        let s = unsafe { zarr_array_spec::get_mut(spec) }?;
        s.shuffle = Some(match shuffle {
            ZARR_SHUFFLE_NONE => Shuffle::None,
            ZARR_SHUFFLE_BYTE => Shuffle::Byte,
            ZARR_SHUFFLE_BIT => Shuffle::Bit,
            v => {
                return Err(Error::InvalidArgument(format!(
                    "shuffle {v} is not ZARR_SHUFFLE_NONE, ZARR_SHUFFLE_BYTE or ZARR_SHUFFLE_BIT"
                )))
            }
        });
        Ok(())
    })
}

/// Sets the fill value: the value of elements never written (`nc_def_var_fill`, `H5Pset_fill_value`).
///
/// @param value  one element of the spec's type, native-endian (as zarr_read_region() gives it: bool is
///               one byte 0 or 1); for ZARR_STRING and ZARR_BYTES the element's bytes (UTF-8 for
///               strings, no NUL needed), and `value` may be NULL when `size` is 0
/// @param size   the element size in bytes (for ZARR_STRING / ZARR_BYTES the value's length)
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL); ZARR_ERR_BUFFER_SIZE
///          (`size` is not the element size); ZARR_ERR_VALUE (not a value of the type: a bool other than
///          0 or 1, an int4 outside [-8, 7], invalid UTF-8, ...).
/// Not thread-safe with other calls on the same spec. Since: 0.2.
///
/// # Safety
/// `spec` is a live spec; `value` is readable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_spec_set_fill_value(
    spec: *mut zarr_array_spec,
    value: *const c_void,
    size: usize,
) -> zarr_status {
    guard(|| {
        let s = unsafe { zarr_array_spec::get_mut(spec) }?;
        let v = unsafe { slice_arg(value.cast::<u8>(), size, "value") }?;
        s.set_fill_value(v)
    })
}

/// Sets the dimension names (netCDF's dimensions). Zarr v3 writes them as `dimension_names`; Zarr v2
/// has no such member and writes them as the `_ARRAY_DIMENSIONS` attribute (the xarray convention),
/// which needs every dimension named.
///
/// @param names  `rank` NUL-terminated UTF-8 names; an entry may be NULL for an unnamed dimension
///               (Zarr v3 only). `names` itself NULL removes the names.
/// @param rank   must equal the spec's rank
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (wrong rank, invalid UTF-8).
/// Not thread-safe with other calls on the same spec. Since: 0.2.
///
/// # Safety
/// `spec` is a live spec; `names` is NULL or holds `rank` pointers, each NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_spec_set_dimension_names(
    spec: *mut zarr_array_spec,
    names: *const *const c_char,
    rank: usize,
) -> zarr_status {
    guard(|| {
        let s = unsafe { zarr_array_spec::get_mut(spec) }?;
        if names.is_null() {
            s.dimension_names = None;
            return Ok(());
        }
        let ptrs = unsafe { slice_arg(names, rank, "names") }?;
        let mut v = Vec::with_capacity(rank);
        for (i, p) in ptrs.iter().enumerate() {
            v.push(if p.is_null() { None } else { Some(unsafe { str_arg(*p, &format!("names[{i}]")) }?.to_string()) });
        }
        s.set_dimension_names(v)
    })
}

/// Sets the user attributes.
///
/// @param json  a JSON object text, or NULL for none
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (not a JSON object).
/// Not thread-safe with other calls on the same spec. Since: 0.2.
///
/// # Safety
/// `spec` is a live spec; `json` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_spec_set_attributes(spec: *mut zarr_array_spec, json: *const c_char) -> zarr_status {
    guard(|| {
        let s = unsafe { zarr_array_spec::get_mut(spec) }?;
        s.attributes = if json.is_null() {
            Default::default()
        } else {
            crate::metadata::parse_attributes_arg(unsafe { str_arg(json, "json") }?)?
        };
        Ok(())
    })
}

/// Sets the Zarr format: 3 (`zarr.json`) or 2 (`.zarray` + `.zattrs`; no sharding, only the core
/// numeric types, ZARR_STRING and ZARR_BYTES).
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (not 2 or 3).
/// Not thread-safe with other calls on the same spec. Since: 0.2.
///
/// # Safety
/// `spec` is a live spec.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_spec_set_zarr_format(spec: *mut zarr_array_spec, zarr_format: c_int) -> zarr_status {
    guard(|| unsafe { zarr_array_spec::get_mut(spec) }?.set_zarr_format(zarr_format as i64))
}

/// The metadata document the spec creates, byte for byte as zarr_create_from_spec() writes it
/// (indented JSON, codec defaults made explicit): for Zarr v3 the `zarr.json`, for Zarr v2 the `.zarray` (the
/// attributes, and v2 dimension names, go to `.zattrs`). Passing this text to zarr_create() creates
/// the same array (for v2, without the attributes).
///
/// @param json  receives a string to free with zarr_string_free(); NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL; chunks that do not divide
///          the shards; a bit shuffle without blosc; v2 dimension names with an unnamed dimension);
///          ZARR_ERR_UNSUPPORTED (sharding or an extension type in Zarr v2).
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `spec` is a live spec; `json` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_spec_to_json(spec: *const zarr_array_spec, json: *mut *mut c_char) -> zarr_status {
    unsafe { clear_out(json) };
    guard(|| {
        need_out(json, "json")?;
        let s = unsafe { zarr_array_spec::get(spec) }?;
        let doc = crate::metadata::to_bytes(&s.document(s.format_or(3))?);
        let text = String::from_utf8(doc).map_err(|_| Error::Internal("metadata is not UTF-8".into()))?;
        unsafe { write_string(json, text, "json") }
    })
}

/// Creates an array from a spec in the directory `path` (created if needed) and opens it for reading
/// and writing, as zarr_create() does with the document zarr_array_spec_to_json() gives.
///
/// @param path  directory for the array (filesystem path or `file://` URI)
/// @param spec  the spec (not modified; may be used again)
/// @param out   receives the new handle (close with zarr_close()); NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE (`spec`); the errors of zarr_array_spec_to_json();
///          ZARR_ERR_EXISTS (an array or group is already there); ZARR_ERR_IO.
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `path` is a NUL-terminated string; `spec` a live spec; `out` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_create_from_spec(
    path: *const c_char,
    spec: *const zarr_array_spec,
    out: *mut *mut zarr_array,
) -> zarr_status {
    let make = || {
        let path = unsafe { str_arg(path, "path") }?;
        let s = unsafe { zarr_array_spec::get(spec) }?;
        s.create(open_location(path)?, "")
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_array(out, make) }
}

/// Creates the array `name` (a relative path such as "a/b"; missing intermediate groups are created)
/// below a group from a spec. Without zarr_array_spec_set_zarr_format() the array takes the group's
/// Zarr format.
///
/// @param out  receives the new handle (close with zarr_close()); NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE (`group` or `spec`); ZARR_ERR_INVALID_ARGUMENT (bad name,
///          and as zarr_array_spec_to_json()); ZARR_ERR_UNSUPPORTED; ZARR_ERR_READ_ONLY;
///          ZARR_ERR_EXISTS; ZARR_ERR_IO.
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `group` is an open handle; `name` a NUL-terminated string; `spec` a live spec; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_create_array_from_spec(
    group: *mut zarr_group,
    name: *const c_char,
    spec: *const zarr_array_spec,
    out: *mut *mut zarr_array,
) -> zarr_status {
    let make = || {
        let g = unsafe { zarr_group::get(group) }?;
        let name = unsafe { str_arg(name, "name") }?;
        unsafe { zarr_array_spec::get(spec) }?.create_in(g, name)
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_array(out, make) }
}
