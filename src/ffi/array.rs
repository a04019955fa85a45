//! C functions on arrays: open, create, inspect, read and write regions.

use super::status::*;
use super::handle::{handle_kind, new_handle, HandleKind};
use super::{
    clear_out, document_text, guard, new_string, slice_arg, slice_out, str_arg, write_opt, write_out, write_string,
};
use crate::array::Array;
use crate::dtype::{DataType, FloatKind, SmallInt};
use crate::error::{Error, Result};
use crate::store::open_location;
use std::ffi::{c_char, c_int, c_void, CString};

/// Open for reading only.
pub const ZARR_READ: c_int = 1;
/// Open for reading and writing.
pub const ZARR_READ_WRITE: c_int = 3;

/// Element types. Buffers hold native-endian elements: bool is 1 byte (0 or 1), float16 its 2 IEEE
/// bytes, complex numbers (real, imaginary) pairs, ZARR_RAW (`r<N>`) N/8 opaque bytes.
///
/// ZARR_STRING and ZARR_BYTES have variable-length elements (element size 0): they are read and
/// written with zarr_read_region_vlen() / zarr_write_region_vlen() only. Extension types (18 and up) follow the
/// zarr-extensions registry. Formats narrower than 8 bits (float6/float4, int2/int4/uint2/uint4)
/// take one byte per value with the value in the low bits: libzarr writes signed integers
/// sign-extended over the byte and other types with the upper bits zero, and reads the stored byte
/// as it is with the `bytes` codec (other writers may leave arbitrary upper bits, which the registry
/// says readers ignore) or in libzarr's form with the `packbits` codec. The registry types
/// `complex_float32` and `complex_float64` report ZARR_COMPLEX64 / ZARR_COMPLEX128 (same layout).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum zarr_data_type {
    /// bool (1 byte, 0 or 1)
    ZARR_BOOL = 0,
    /// int8
    ZARR_INT8 = 1,
    /// int16
    ZARR_INT16 = 2,
    /// int32
    ZARR_INT32 = 3,
    /// int64
    ZARR_INT64 = 4,
    /// uint8
    ZARR_UINT8 = 5,
    /// uint16
    ZARR_UINT16 = 6,
    /// uint32
    ZARR_UINT32 = 7,
    /// uint64
    ZARR_UINT64 = 8,
    /// float16 (IEEE half precision, 2 bytes)
    ZARR_FLOAT16 = 9,
    /// float32
    ZARR_FLOAT32 = 10,
    /// float64
    ZARR_FLOAT64 = 11,
    /// complex64: two float32 (real, imaginary)
    ZARR_COMPLEX64 = 12,
    /// complex128: two float64 (real, imaginary)
    ZARR_COMPLEX128 = 13,
    /// r<N>: N/8 raw bytes per element
    ZARR_RAW = 14,
    /// structured elements (packed fields): Zarr v2 structured dtypes, v3 `struct` and zarr-python's
    /// `structured`; see zarr_array_num_fields() and zarr_array_field()
    ZARR_STRUCT = 15,
    /// `string`: variable-length UTF-8 text (also Zarr v2 `|O` with a vlen-utf8 filter)
    ZARR_STRING = 16,
    /// `bytes` / `variable_length_bytes`: variable-length byte strings (also Zarr v2 `|O` with a
    /// vlen-bytes filter, and with a vlen-array filter: each element is then the bytes of its
    /// native-endian items, see zarr_array_vlen_item_type())
    ZARR_BYTES = 17,
    /// `numpy.datetime64`: int64 counts of (scale factor x unit) since 1970-01-01T00:00:00 UTC; NaT
    /// (not a time) is INT64_MIN. See zarr_array_time_unit().
    ZARR_DATETIME64 = 18,
    /// `numpy.timedelta64`: int64 durations in (scale factor x unit); NaT is INT64_MIN. See
    /// zarr_array_time_unit().
    ZARR_TIMEDELTA64 = 19,
    /// `fixed_length_utf32` (and Zarr v2 `<U`/`>U`): element size / 4 UTF-32 code units (uint32, native
    /// byte order), the text followed by U+0000 padding.
    ZARR_FIXED_UTF32 = 20,
    /// `null_terminated_bytes`: element size bytes, the value followed by NUL padding.
    ZARR_NULL_TERMINATED_BYTES = 21,
    /// `bfloat16`: 2 bytes (uint16 native byte order) `0bSEEEEEEEEMMMMMMM`, the top half of a float32.
    ZARR_BFLOAT16 = 22,
    /// `complex_float16`: two float16 (real, imaginary), 4 bytes.
    ZARR_COMPLEX_FLOAT16 = 23,
    /// `complex_bfloat16`: two bfloat16 (real, imaginary), 4 bytes.
    ZARR_COMPLEX_BFLOAT16 = 24,
    /// `float8_e3m4`: 1 byte `0bSEEEMMMM`, bias 3, IEEE-style infinities and NaN.
    ZARR_FLOAT8_E3M4 = 25,
    /// `float8_e4m3`: 1 byte `0bSEEEEMMM`, bias 7, IEEE-style infinities and NaN.
    ZARR_FLOAT8_E4M3 = 26,
    /// `float8_e4m3b11fnuz`: 1 byte `0bSEEEEMMM`, bias 11, finite, NaN = 0x80, no negative zero.
    ZARR_FLOAT8_E4M3B11FNUZ = 27,
    /// `float8_e4m3fnuz`: 1 byte `0bSEEEEMMM`, bias 8, finite, NaN = 0x80, no negative zero.
    ZARR_FLOAT8_E4M3FNUZ = 28,
    /// `float8_e5m2`: 1 byte `0bSEEEEEMM`, bias 15, IEEE-style infinities and NaN.
    ZARR_FLOAT8_E5M2 = 29,
    /// `float8_e5m2fnuz`: 1 byte `0bSEEEEEMM`, bias 16, finite, NaN = 0x80, no negative zero.
    ZARR_FLOAT8_E5M2FNUZ = 30,
    /// `float8_e8m0fnu`: 1 byte, the biased exponent E of 2^(E-127); no sign, no zero, NaN = 0xff.
    ZARR_FLOAT8_E8M0FNU = 31,
    /// `float6_e2m3fn`: 1 byte `0b00SEEMMM`, bias 1, finite, no NaN.
    ZARR_FLOAT6_E2M3FN = 32,
    /// `float6_e3m2fn`: 1 byte `0b00SEEEMM`, bias 3, finite, no NaN.
    ZARR_FLOAT6_E3M2FN = 33,
    /// `float4_e2m1fn`: 1 byte `0b0000SEEM`, bias 1, finite, no NaN.
    ZARR_FLOAT4_E2M1FN = 34,
    /// `complex_float8_e3m4`: two float8_e3m4 bytes (real, imaginary).
    ZARR_COMPLEX_FLOAT8_E3M4 = 35,
    /// `complex_float8_e4m3`: two float8_e4m3 bytes (real, imaginary).
    ZARR_COMPLEX_FLOAT8_E4M3 = 36,
    /// `complex_float8_e4m3b11fnuz`: two float8_e4m3b11fnuz bytes (real, imaginary).
    ZARR_COMPLEX_FLOAT8_E4M3B11FNUZ = 37,
    /// `complex_float8_e4m3fnuz`: two float8_e4m3fnuz bytes (real, imaginary).
    ZARR_COMPLEX_FLOAT8_E4M3FNUZ = 38,
    /// `complex_float8_e5m2`: two float8_e5m2 bytes (real, imaginary).
    ZARR_COMPLEX_FLOAT8_E5M2 = 39,
    /// `complex_float8_e5m2fnuz`: two float8_e5m2fnuz bytes (real, imaginary).
    ZARR_COMPLEX_FLOAT8_E5M2FNUZ = 40,
    /// `complex_float8_e8m0fnu`: two float8_e8m0fnu bytes (real, imaginary).
    ZARR_COMPLEX_FLOAT8_E8M0FNU = 41,
    /// `complex_float6_e2m3fn`: two float6_e2m3fn bytes (real, imaginary).
    ZARR_COMPLEX_FLOAT6_E2M3FN = 42,
    /// `complex_float6_e3m2fn`: two float6_e3m2fn bytes (real, imaginary).
    ZARR_COMPLEX_FLOAT6_E3M2FN = 43,
    /// `complex_float4_e2m1fn`: two float4_e2m1fn bytes (real, imaginary).
    ZARR_COMPLEX_FLOAT4_E2M1FN = 44,
    /// `int2`: 1 byte, a value in [-2, 1] (sign-extended when written by libzarr).
    ZARR_INT2 = 45,
    /// `int4`: 1 byte, a value in [-8, 7] (sign-extended when written by libzarr).
    ZARR_INT4 = 46,
    /// `uint2`: 1 byte, a value in [0, 3].
    ZARR_UINT2 = 47,
    /// `uint4`: 1 byte, a value in [0, 15].
    ZARR_UINT4 = 48,
}

impl From<&DataType> for zarr_data_type {
    fn from(d: &DataType) -> Self {
        use zarr_data_type::*;
        match d {
            DataType::Bool => ZARR_BOOL,
            DataType::Int8 => ZARR_INT8,
            DataType::Int16 => ZARR_INT16,
            DataType::Int32 => ZARR_INT32,
            DataType::Int64 => ZARR_INT64,
            DataType::UInt8 => ZARR_UINT8,
            DataType::UInt16 => ZARR_UINT16,
            DataType::UInt32 => ZARR_UINT32,
            DataType::UInt64 => ZARR_UINT64,
            DataType::Float16 => ZARR_FLOAT16,
            DataType::Float32 => ZARR_FLOAT32,
            DataType::Float64 => ZARR_FLOAT64,
            DataType::Complex64 => ZARR_COMPLEX64,
            DataType::Complex128 => ZARR_COMPLEX128,
            DataType::Raw(_) => ZARR_RAW,
            DataType::Struct(_) => ZARR_STRUCT,
            DataType::DateTime64(_) => ZARR_DATETIME64,
            DataType::TimeDelta64(_) => ZARR_TIMEDELTA64,
            DataType::FixedUtf32(_) => ZARR_FIXED_UTF32,
            DataType::NullTerminatedBytes(_) => ZARR_NULL_TERMINATED_BYTES,
            DataType::SmallInt(SmallInt::I2) => ZARR_INT2,
            DataType::SmallInt(SmallInt::I4) => ZARR_INT4,
            DataType::SmallInt(SmallInt::U2) => ZARR_UINT2,
            DataType::SmallInt(SmallInt::U4) => ZARR_UINT4,
            DataType::ExtFloat(k) => match k {
                FloatKind::F16 => ZARR_FLOAT16,
                FloatKind::F32 => ZARR_FLOAT32,
                FloatKind::F64 => ZARR_FLOAT64,
                FloatKind::BF16 => ZARR_BFLOAT16,
                FloatKind::E3M4 => ZARR_FLOAT8_E3M4,
                FloatKind::E4M3 => ZARR_FLOAT8_E4M3,
                FloatKind::E4M3B11Fnuz => ZARR_FLOAT8_E4M3B11FNUZ,
                FloatKind::E4M3Fnuz => ZARR_FLOAT8_E4M3FNUZ,
                FloatKind::E5M2 => ZARR_FLOAT8_E5M2,
                FloatKind::E5M2Fnuz => ZARR_FLOAT8_E5M2FNUZ,
                FloatKind::E8M0Fnu => ZARR_FLOAT8_E8M0FNU,
                FloatKind::E2M3Fn => ZARR_FLOAT6_E2M3FN,
                FloatKind::E3M2Fn => ZARR_FLOAT6_E3M2FN,
                FloatKind::E2M1Fn => ZARR_FLOAT4_E2M1FN,
            },
            DataType::ExtComplex(k) => match k {
                FloatKind::F16 => ZARR_COMPLEX_FLOAT16,
                FloatKind::F32 => ZARR_COMPLEX64,
                FloatKind::F64 => ZARR_COMPLEX128,
                FloatKind::BF16 => ZARR_COMPLEX_BFLOAT16,
                FloatKind::E3M4 => ZARR_COMPLEX_FLOAT8_E3M4,
                FloatKind::E4M3 => ZARR_COMPLEX_FLOAT8_E4M3,
                FloatKind::E4M3B11Fnuz => ZARR_COMPLEX_FLOAT8_E4M3B11FNUZ,
                FloatKind::E4M3Fnuz => ZARR_COMPLEX_FLOAT8_E4M3FNUZ,
                FloatKind::E5M2 => ZARR_COMPLEX_FLOAT8_E5M2,
                FloatKind::E5M2Fnuz => ZARR_COMPLEX_FLOAT8_E5M2FNUZ,
                FloatKind::E8M0Fnu => ZARR_COMPLEX_FLOAT8_E8M0FNU,
                FloatKind::E2M3Fn => ZARR_COMPLEX_FLOAT6_E2M3FN,
                FloatKind::E3M2Fn => ZARR_COMPLEX_FLOAT6_E3M2FN,
                FloatKind::E2M1Fn => ZARR_COMPLEX_FLOAT4_E2M1FN,
            },
            DataType::String => ZARR_STRING,
            DataType::Bytes | DataType::VlenArray(_) => ZARR_BYTES,
        }
    }
}

/// An open array (opaque). Create with zarr_open(), zarr_create() or the zarr_group_* functions;
/// release with zarr_close().
///
/// Thread-safety: a handle may be used from several threads at once for reads and writes, also to the
/// same chunks (writes lock what they touch, across threads, handles and processes);
/// zarr_array_resize() and zarr_close() need the handle to themselves.
pub struct zarr_array {
    _opaque: [u8; 0],
}

handle_kind!(
    zarr_array,
    OpenArray,
    0x7a61_7272_4152_5259, // "zarrARRY"
    "array handle is NULL",
    "not an open zarr_array handle (closed or corrupt?)"
);

/// What a `zarr_array *` owns: the array and what C borrows from the handle. Dereferences to the
/// [`Array`].
pub(crate) struct OpenArray {
    array: Array,
    /// NUL-terminated field names of a structured type (owned here for zarr_array_field()).
    field_names: Vec<CString>,
}

impl OpenArray {
    /// The handle value for `a` (make the handle with `zarr_array::into_raw`).
    pub(crate) fn new(a: Array) -> OpenArray {
        let field_names = match &a.metadata().data_type {
            DataType::Struct(s) => {
                s.fields.iter().map(|f| CString::new(f.name.replace('\0', "")).unwrap_or_default()).collect()
            }
            _ => Vec::new(),
        };
        OpenArray { array: a, field_names }
    }
}

impl std::ops::Deref for OpenArray {
    type Target = Array;
    fn deref(&self) -> &Array {
        &self.array
    }
}

impl std::ops::DerefMut for OpenArray {
    fn deref_mut(&mut self) -> &mut Array {
        &mut self.array
    }
}

/// Runs an exported function that opens or creates an array: the array `make` returns reaches the
/// caller through `out` as a new handle, as [`new_handle`] does it (`out` NULL on failure).
///
/// # Safety
/// `out` is NULL or valid for writing a pointer.
pub(crate) unsafe fn new_array(out: *mut *mut zarr_array, make: impl FnOnce() -> Result<Array>) -> zarr_status {
    // SAFETY: forwarded.
    unsafe { new_handle(out, || make().map(OpenArray::new)) }
}

/// The open array behind `array` and the region arguments `start` and `count` (rank values each).
///
/// # Safety
/// `array` is NULL or a handle pointer from libzarr; `start` and `count` are NULL or hold rank values;
/// the handle and the values outlive the returned references.
pub(crate) unsafe fn region_args<'a>(
    array: *const zarr_array,
    start: *const u64,
    count: *const u64,
) -> Result<(&'a OpenArray, &'a [u64], &'a [u64])> {
    // SAFETY: forwarded.
    unsafe {
        let a = zarr_array::get(array)?;
        let rank = a.shape().len();
        Ok((a, slice_arg(start, rank, "start")?, slice_arg(count, rank, "count")?))
    }
}

pub(crate) fn parse_mode(mode: c_int) -> Result<bool> {
    match mode {
        ZARR_READ => Ok(false),
        ZARR_READ_WRITE => Ok(true),
        _ => Err(Error::InvalidArgument(format!(
            "mode {mode} is neither ZARR_READ ({ZARR_READ}) nor ZARR_READ_WRITE ({ZARR_READ_WRITE})"
        ))),
    }
}

/// Opens the array stored in the directory `path` (a filesystem path or a `file://` URI).
///
/// @param path  directory holding the array's `zarr.json` (UTF-8, NUL-terminated)
/// @param mode  ZARR_READ or ZARR_READ_WRITE
/// @param out   receives the new handle; set to NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL argument, bad mode); ZARR_ERR_NOT_FOUND (no array
///          there, or a group); ZARR_ERR_METADATA (malformed metadata); ZARR_ERR_UNSUPPORTED (unknown
///          codec, data type or extension); ZARR_ERR_IO; ZARR_ERR_MEMORY (a metadata document over the
///          metadata ceiling: the store option `max_metadata_bytes`, else `ZARR_MAX_METADATA_BYTES`,
///          default 64 MiB: docs/limits.md; since 0.4).
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_open(path: *const c_char, mode: c_int, out: *mut *mut zarr_array) -> zarr_status {
    // SAFETY (whole body): pointer arguments follow this function's documented contract.
    let make = || {
        let path = unsafe { str_arg(path, "path") }?;
        let writable = parse_mode(mode)?;
        Array::open(open_location(path)?, "", writable)
    };
    unsafe { new_array(out, make) }
}

/// Creates an array in the directory `path` from a complete metadata document and opens it for
/// reading and writing. The directory is created if needed.
///
/// @param path           directory for the array (filesystem path or `file://` URI)
/// @param metadata_json  a complete Zarr v3 `zarr.json` document (JSON text)
/// @param out            receives the new handle; set to NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_EXISTS (an array or group is already there);
///          ZARR_ERR_METADATA; ZARR_ERR_UNSUPPORTED; ZARR_ERR_IO.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `path` and `metadata_json` are NUL-terminated strings; `out` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_create(
    path: *const c_char,
    metadata_json: *const c_char,
    out: *mut *mut zarr_array,
) -> zarr_status {
    // SAFETY (whole body): pointer arguments follow this function's documented contract.
    let make = || {
        let path = unsafe { str_arg(path, "path") }?;
        let json = unsafe { str_arg(metadata_json, "metadata_json") }?;
        Array::create(open_location(path)?, "", json)
    };
    unsafe { new_array(out, make) }
}

/// Closes an array handle and frees it. NULL is a no-op. Everything written has already been stored
/// (writes are not buffered).
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE (not an open array handle).
/// Not thread-safe with other calls on the same handle. Since: 0.1.
///
/// # Safety
/// `array` is NULL or an open handle; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn zarr_close(array: *mut zarr_array) -> zarr_status {
    guard(|| unsafe { zarr_array::close(array) })
}

/// The number of dimensions.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (`rank` NULL).
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `rank` is valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_rank(array: *const zarr_array, rank: *mut usize) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        unsafe { write_out(rank, a.shape().len(), "rank") }
    })
}

fn copy_dims(dst: *mut u64, rank: usize, src: &[u64], what: &str) -> Result<()> {
    if rank != src.len() {
        return Err(Error::InvalidArgument(format!("{what}: rank {rank} given, the array has rank {}", src.len())));
    }
    // SAFETY: the caller provides `rank` writable elements.
    let out = unsafe { slice_out(dst, rank, what) }?;
    out.copy_from_slice(src);
    Ok(())
}

/// The array's shape (elements per dimension).
///
/// @param shape  receives `rank` values
/// @param rank   must equal the array's rank
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL, wrong rank).
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `shape` has room for `rank` values.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_shape(array: *const zarr_array, shape: *mut u64, rank: usize) -> zarr_status {
    guard(|| copy_dims(shape, rank, unsafe { zarr_array::get(array) }?.shape(), "shape"))
}

/// The chunk shape (for a sharded array: the shard shape).
///
/// @param chunk_shape  receives `rank` values
/// @param rank         must equal the array's rank
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `chunk_shape` has room for `rank` values.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_chunk_shape(
    array: *const zarr_array,
    chunk_shape: *mut u64,
    rank: usize,
) -> zarr_status {
    guard(|| copy_dims(chunk_shape, rank, unsafe { zarr_array::get(array) }?.metadata().chunk_shape(), "chunk_shape"))
}

/// The inner chunk shape of a sharded array: the `chunk_shape` of its `sharding_indexed` codec (the
/// unit of encoding inside each shard). For an array without sharding this is the chunk shape.
///
/// @param inner_chunk_shape  receives `rank` values
/// @param rank               must equal the array's rank
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `inner_chunk_shape` has room for `rank` values.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_inner_chunk_shape(
    array: *const zarr_array,
    inner_chunk_shape: *mut u64,
    rank: usize,
) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        let shape = a.inner_chunk_shape().unwrap_or(a.metadata().chunk_shape());
        copy_dims(inner_chunk_shape, rank, shape, "inner_chunk_shape")
    })
}

/// Whether the array is sharded (its array -> bytes codec is `sharding_indexed`): 1 or 0.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `sharded` is valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_is_sharded(array: *const zarr_array, sharded: *mut c_int) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        unsafe { write_out(sharded, a.inner_chunk_shape().is_some() as c_int, "sharded") }
    })
}

/// The element type and the size of one element in bytes. Either output may be NULL.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; non-NULL outputs are valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_data_type(
    array: *const zarr_array,
    dtype: *mut zarr_data_type,
    element_size: *mut usize,
) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        let dt = &a.metadata().data_type;
        unsafe {
            write_opt(dtype, zarr_data_type::from(dt));
            write_opt(element_size, dt.size());
        }
        Ok(())
    })
}

/// The time unit of a ZARR_DATETIME64 or ZARR_TIMEDELTA64 array: an element value `v` stands for
/// `v * scale_factor` units (after the Unix epoch, for datetime64). `unit` is one of "Y", "M", "W",
/// "D", "h", "m", "s", "ms", "us", "μs" (UTF-8, as stored), "ns", "ps", "fs", "as", "generic".
/// Either output may be NULL.
///
/// @param unit          receives a string to free with zarr_string_free() (set to NULL on failure)
/// @param scale_factor  receives the scale factor, in [1, 2^31 - 1]
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (the array's data type is not a
///          time type).
/// Thread-safe. Since: 0.2.
///
/// # Safety
/// `array` is an open handle; non-NULL outputs are valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_time_unit(
    array: *const zarr_array,
    unit: *mut *mut c_char,
    scale_factor: *mut i64,
) -> zarr_status {
    unsafe { clear_out(unit) };
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        let (DataType::DateTime64(t) | DataType::TimeDelta64(t)) = &a.metadata().data_type else {
            return Err(Error::InvalidArgument(format!(
                "the array's data type {} is not numpy.datetime64 or numpy.timedelta64",
                a.metadata().data_type
            )));
        };
        unsafe { write_opt(scale_factor, t.scale_factor as i64) };
        if !unit.is_null() {
            unsafe { write_string(unit, t.unit.clone(), "unit") }?;
        }
        Ok(())
    })
}

/// The number of fields of a structured data type (ZARR_STRUCT); 0 for other types.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `count` is valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_num_fields(array: *const zarr_array, count: *mut usize) -> zarr_status {
    guard(|| {
        let n = unsafe { zarr_array::get(array) }?.field_names.len();
        unsafe { write_out(count, n, "count") }
    })
}

/// Field `index` of a structured data type. In read and write buffers each element is its fields
/// packed in order (no padding), each native-endian; a field holding a subarray stores its items in
/// C order, so `size` is the item count times the size of `dtype`. A nested structure reports
/// ZARR_STRUCT. Any output may be NULL.
///
/// @param name    receives the field name, owned by the array handle (valid until zarr_close())
/// @param dtype   receives the field's element type
/// @param offset  receives the field's byte offset within an element
/// @param size    receives the field's size in bytes
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (`index` out of range, or the
///          array is not structured).
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; non-NULL outputs are valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_field(
    array: *const zarr_array,
    index: usize,
    name: *mut *const c_char,
    dtype: *mut zarr_data_type,
    offset: *mut usize,
    size: *mut usize,
) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        let DataType::Struct(st) = &a.metadata().data_type else {
            return Err(Error::InvalidArgument("the array's data type is not structured".into()));
        };
        let f = st.fields.get(index).ok_or_else(|| {
            Error::InvalidArgument(format!("field {index} is not below the field count {}", st.fields.len()))
        })?;
        unsafe {
            write_opt(name, a.field_names[index].as_ptr());
            write_opt(dtype, zarr_data_type::from(&f.data_type));
            write_opt(offset, f.offset);
            write_opt(size, f.size());
        }
        Ok(())
    })
}

/// Rewrites the Zarr v2 array in the directory `path` as Zarr v3, in place: `zarr.json` is written
/// with the `v2` chunk key encoding, so no chunk is moved or rewritten, and `.zarray`/`.zattrs` are
/// removed. Works when every part has a Zarr v3 equivalent: a core data type (`S<n>`/`V<n>`
/// become `r<8n>`); filters and compressors among the numcodecs codecs libzarr implements (blosc,
/// gzip, zstd become the core codecs; the others the `numcodecs.<id>` codecs zarr-python 3 reads);
/// `order` "F" becomes a transpose codec and a `null` fill value becomes zero. Otherwise nothing is changed and the
/// error names the part without an equivalent.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_NOT_FOUND (no v2 array there);
///          ZARR_ERR_EXISTS (already has zarr.json); ZARR_ERR_UNSUPPORTED (no v3 equivalent);
///          ZARR_ERR_METADATA; ZARR_ERR_IO.
/// Not safe while other handles have the array open. Since: 0.1.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_convert_v2_to_v3(path: *const c_char) -> zarr_status {
    guard(|| {
        let path = unsafe { str_arg(path, "path") }?;
        let store = open_location(path)?;
        crate::convert::v2_to_v3(store.as_ref(), "")
    })
}

/// The Zarr format version of the array's metadata (3; 2 or 1 for older formats).
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `format` is valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_zarr_format(array: *const zarr_array, format: *mut c_int) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        unsafe { write_out(format, a.metadata().zarr_format as c_int, "format") }
    })
}

/// The fill value: one element in the buffer layout of zarr_read_region().
///
/// @param value  receives `size` bytes
/// @param size   must equal the element size
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_BUFFER_SIZE.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `value` has room for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_fill_value(array: *const zarr_array, value: *mut c_void, size: usize) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        let fill = &a.metadata().fill_value;
        if size != fill.len() {
            return Err(Error::BufferSize(format!("fill value needs {} bytes, {size} given", fill.len())));
        }
        unsafe { slice_out(value.cast::<u8>(), size, "value") }?.copy_from_slice(fill);
        Ok(())
    })
}

/// The name of dimension `dim`, or NULL when the dimension is unnamed.
///
/// @param name  receives a string to free with zarr_string_free(), or NULL
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL, `dim` >= rank).
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `name` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_dimension_name(
    array: *const zarr_array,
    dim: usize,
    name: *mut *mut c_char,
) -> zarr_status {
    unsafe { clear_out(name) };
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        let rank = a.shape().len();
        if dim >= rank {
            return Err(Error::InvalidArgument(format!("dimension {dim} is not below the rank {rank}")));
        }
        if name.is_null() {
            return Err(Error::InvalidArgument("name is NULL".into()));
        }
        match a.metadata().dimension_names.as_ref().and_then(|n| n[dim].clone()) {
            Some(n) => unsafe { write_string(name, n, "name") },
            None => Ok(()),
        }
    })
}

/// Sets the names of the array's dimensions (netCDF's and xarray's dimensions) and rewrites the stored
/// metadata atomically: Zarr v3 writes them as `dimension_names` (the member is removed when no dimension
/// is named), Zarr v2 as the `_ARRAY_DIMENSIONS` attribute (xarray's convention, which names every
/// dimension or none). The rest of the stored metadata is kept. `array` itself keeps reporting the names
/// it was opened with (zarr_array_dimension_name()); a handle opened afterwards reports the new ones.
///
/// @param names  `count` entries, each a NUL-terminated UTF-8 name or NULL for an unnamed dimension
/// @param count  must equal the array's rank
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (`names` NULL with `count` > 0,
///          `count` not the rank, a name not UTF-8, a v2 array with some but not all dimensions named);
///          ZARR_ERR_READ_ONLY; ZARR_ERR_NOT_FOUND (the array's metadata is gone); ZARR_ERR_IO.
/// Thread-safe, also across handles and processes: the stored document is re-read under the array's
/// metadata lock and only the names replaced. Since: 0.4.
///
/// # Safety
/// `array` is an open handle; `names` holds `count` pointers, each NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_set_dimension_names(
    array: *mut zarr_array,
    names: *const *const c_char,
    count: usize,
) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        if names.is_null() && count > 0 {
            return Err(Error::InvalidArgument("names is NULL".into()));
        }
        let ptrs: &[*const c_char] = if count == 0 { &[] } else { unsafe { std::slice::from_raw_parts(names, count) } };
        let mut list = Vec::with_capacity(count);
        for (i, &p) in ptrs.iter().enumerate() {
            list.push(if p.is_null() { None } else { Some(unsafe { str_arg(p, &format!("names[{i}]")) }?.to_string()) });
        }
        a.set_dimension_names(&list)
    })
}

/// The user attributes as a JSON object text.
///
/// @param json  receives a string to free with zarr_string_free()
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `json` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_attributes(array: *const zarr_array, json: *mut *mut c_char) -> zarr_status {
    let make = || {
        let a = unsafe { zarr_array::get(array) }?;
        Ok(serde_json::Value::Object(a.attributes()).to_string())
    };
    // SAFETY: `json` follows the documented contract.
    unsafe { new_string(json, "json", make) }
}

/// Replaces the user attributes with the JSON object `json` and rewrites the metadata atomically.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL, not a JSON object);
///          ZARR_ERR_READ_ONLY; ZARR_ERR_NOT_FOUND (the array's metadata is gone); ZARR_ERR_IO.
/// Thread-safe, also across handles and processes: under the array's metadata lock the stored document
/// is re-read and only its attributes replaced, so a concurrent resize is kept. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `json` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_set_attributes(array: *mut zarr_array, json: *const c_char) -> zarr_status {
    guard(|| {
        let a = unsafe { zarr_array::get(array) }?;
        let json = unsafe { str_arg(json, "json") }?;
        a.set_attributes(crate::metadata::parse_attributes_arg(json)?)
    })
}

/// The whole metadata document (e.g. `zarr.json`) as JSON text, with the current attributes.
///
/// @param json  receives a string to free with zarr_string_free()
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `json` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_array_metadata(array: *const zarr_array, json: *mut *mut c_char) -> zarr_status {
    let make = || {
        let a = unsafe { zarr_array::get(array) }?;
        document_text(&a.document())
    };
    // SAFETY: `json` follows the documented contract.
    unsafe { new_string(json, "json", make) }
}

/// Reads the hyperrectangle `start[i] .. start[i] + count[i]` into `buffer`: C order (last dimension
/// fastest), native-endian elements. Missing chunks read as the fill value. Chunks are decoded in
/// parallel (see ZARR_NUM_THREADS).
///
/// @param start        `rank` start indices
/// @param count        `rank` extents (zero extents read nothing)
/// @param buffer       receives the elements
/// @param buffer_size  must equal product(count) * element size, in bytes
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL); ZARR_ERR_OUT_OF_BOUNDS;
///          ZARR_ERR_BUFFER_SIZE; ZARR_ERR_CODEC (corrupt chunk, or a stored chunk longer than any
///          encoding of it can be: refused before it is read, docs/limits.md); ZARR_ERR_CHECKSUM;
///          ZARR_ERR_IO; ZARR_ERR_MEMORY (since 0.4). On failure the buffer contents are unspecified.
/// Thread-safe (concurrent reads of one handle are allowed). Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `start`/`count` hold `rank` values; `buffer` has `buffer_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_read_region(
    array: *mut zarr_array,
    start: *const u64,
    count: *const u64,
    buffer: *mut c_void,
    buffer_size: usize,
) -> zarr_status {
    guard(|| {
        let (a, start, count) = unsafe { region_args(array, start, count) }?;
        let buf = unsafe { slice_out(buffer.cast::<u8>(), buffer_size, "buffer") }?;
        a.read_region(start, count, buf)
    })
}

/// Writes `buffer` (C order, native-endian) to the hyperrectangle `start[i] .. start[i] + count[i]`.
/// Partly covered chunks are read, merged and rewritten; chunks left entirely equal to the fill value
/// are deleted instead of stored. Every chunk is replaced atomically. If a partly covered chunk cannot
/// be decoded the call fails before anything is stored.
///
/// @param buffer_size  must equal product(count) * element size, in bytes
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_READ_ONLY;
///          ZARR_ERR_OUT_OF_BOUNDS; ZARR_ERR_BUFFER_SIZE; ZARR_ERR_CODEC; ZARR_ERR_CHECKSUM; ZARR_ERR_IO.
/// Thread-safe, also across handles and processes: writes touching the same chunk or shard are applied
/// one after the other (see docs/concurrency.md). ZARR_ERR_METADATA when
/// another handle resized the array since this one was opened (nothing stored; reopen it). Since: 0.1.
///
/// # Safety
/// `array` is an open handle; `start`/`count` hold `rank` values; `buffer` has `buffer_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn zarr_write_region(
    array: *mut zarr_array,
    start: *const u64,
    count: *const u64,
    buffer: *const c_void,
    buffer_size: usize,
) -> zarr_status {
    guard(|| {
        let (a, start, count) = unsafe { region_args(array, start, count) }?;
        let buf = unsafe { slice_arg(buffer.cast::<u8>(), buffer_size, "buffer") }?;
        a.write_region(start, count, buf)
    })
}
