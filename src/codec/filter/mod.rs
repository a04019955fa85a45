//! Filters: the v3 array -> array codecs, and the numcodecs filters (bytes -> bytes codecs that know the
//! element type of the bytes they receive; under v3 `numcodecs.<id>`, array -> array). The numcodecs
//! filters compute with the numpy model of [`crate::codec::numcodecs::numpy`]; this module holds what
//! they share to read their configurations and check sizes.
//!
//! **Typing of a v2 filter chain, as numcodecs types it.** A numcodecs filter with a dtype of its own
//! (`delta`, `fixedscaleoffset`, `quantize`: `dtype`; `astype`: `decode_dtype`; `categorize`: `dtype`;
//! `packbits`: bool) views the bytes it receives as that dtype (`ensure_ndarray(buf).view(dtype)`),
//! whatever the previous filter produced: `[shuffle, delta]` is valid although `shuffle` hands on
//! plain bytes. The elements received only give defaults (a `delta` without `dtype`) and the type of
//! `bitround`, which numcodecs takes from the array it is given. A buffer that is not a whole number
//! of the filter's elements is `Error::Codec` when it is encoded or decoded, where numcodecs raises.

pub mod astype;
pub mod bitround;
pub mod bitround_numcodecs;
pub mod cast_value;
pub mod categorize;
pub mod delta;
pub mod fixedscaleoffset;
pub mod numeric_cast;
pub mod packbits;
pub mod quantize;
pub mod reshape;
pub mod scale_offset;
pub mod shuffle;
pub mod transpose;

use crate::codec::numcodecs::numpy::{Canon, NumType};
use crate::codec::numcodecs::{V2Config, V2Elem};
use crate::error::{Error, Result};
use crate::codec::{BytesToBytesCodec, DecodedSize};
use serde_json::Value;
use std::borrow::Cow;

/// Reads the dtype-string member `key` as a numeric type (`default` when absent).
/// Object, string, datetime and complex dtypes are `Error::Unsupported`.
pub fn num_type(c: &V2Config, key: &str, default: Option<NumType>) -> Result<NumType> {
    let s = match c.get(key) {
        None => return default.ok_or_else(|| c.invalid(key, "required")),
        Some(Value::String(s)) => s.as_str(),
        Some(v) => return Err(c.invalid(key, &format!("expected a dtype string, got {v}"))),
    };
    let unsupported = |what: &str| {
        Error::Unsupported(format!("numcodecs '{}': {key} '{s}' ({what}) is not supported by this filter", c.id))
    };
    match s.as_bytes().get(1) {
        Some(b'O') => return Err(unsupported("object dtype")),
        Some(b'M' | b'm') => return Err(unsupported("datetime dtype")),
        Some(b'c') => return Err(unsupported("complex dtype")),
        Some(b'S' | b'U' | b'V') => return Err(unsupported("string/void dtype")),
        _ => {}
    }
    let e = c.elem(key, None)?;
    NumType::from_elem(&e).ok_or_else(|| unsupported("not a bool, integer or float dtype"))
}

/// Fails unless the configured `t` (member `key`) has the size of the elements the filter receives.
/// Only for a filter under Zarr v3 (`numcodecs.<id>`, an array -> array codec, whose output zarr-python
/// reshapes to the chunk's shape): under Zarr v2 a filter views whatever bytes it receives as its own
/// dtype, as numcodecs does.
pub fn check_input(c: &V2Config, key: &str, t: &NumType, input: &V2Elem) -> Result<()> {
    if t.size() != input.data_type.size() {
        return Err(Error::Metadata(format!(
            "numcodecs '{}': {key} '{}' has {}-byte elements but the filter receives {} ({} bytes)",
            c.id,
            t.typestr(),
            t.size(),
            input.data_type,
            input.data_type.size()
        )));
    }
    Ok(())
}

/// The number of `size`-byte elements in `len` bytes, or `Error::Codec` if it is not a whole number.
pub fn count(len: usize, size: usize, codec: &str, what: &str) -> Result<usize> {
    if size == 0 || !len.is_multiple_of(size) {
        return Err(Error::Codec(format!("{codec}: {what} of {len} bytes is not a whole number of {size}-byte elements")));
    }
    Ok(len / size)
}

/// Fails unless `out` has exactly `expected` bytes.
pub fn check_out(out: &[u8], expected: usize, codec: &str) -> Result<()> {
    if out.len() != expected {
        return Err(Error::Codec(format!("{codec}: decodes to {expected} bytes, expected {}", out.len())));
    }
    Ok(())
}

/// Checks, for the `decode_into` of a filter storing `stored`-byte elements of `received`-byte ones,
/// that `encoded` is whole elements and `out` takes exactly their decoded bytes.
pub fn check_decode(encoded: &[u8], out: &[u8], stored: usize, received: usize, codec: &str) -> Result<()> {
    let n = count(encoded.len(), stored, codec, "encoded data")?;
    check_out(out, n * received, codec)
}

/// The `decode` of a filter storing `stored`-byte elements of `received`-byte ones: checks the sizes,
/// then decodes through the filter's `decode_into` into a new buffer.
pub fn decode_new<'a, F: BytesToBytesCodec + ?Sized>(
    filter: &F,
    encoded: &'a [u8],
    size: DecodedSize,
    (stored, received): (usize, usize),
    codec: &str,
) -> Result<Cow<'a, [u8]>> {
    let n = count(encoded.len(), stored, codec, "encoded data")?;
    size.check(n * received, codec)?;
    let mut out = crate::error::try_alloc(n * received)?;
    filter.decode_into(encoded, &mut out)?;
    Ok(Cow::Owned(out))
}

/// The decode of a filter that stores the elements unchanged: copies `encoded` to `out`, which must
/// have its size.
pub fn copy_unchanged(encoded: &[u8], out: &mut [u8], codec: &str) -> Result<()> {
    if encoded.len() != out.len() {
        return Err(Error::Codec(format!("{codec}: {} bytes given, {} expected", encoded.len(), out.len())));
    }
    out.copy_from_slice(encoded);
    Ok(())
}

/// `n / from * to` for fixed-ratio filters (`None` when `n` is not a whole number of elements).
pub fn ratio_size(n: u64, from: usize, to: usize) -> Option<u64> {
    n.is_multiple_of(from as u64).then(|| n / from as u64 * to as u64)
}

/// Reads a configuration number as a python scalar: an integer literal is a python `int` (kept exact;
/// refused beyond 128 bits), anything else a python `float`.
pub fn py_number(c: &V2Config, key: &str) -> Result<Canon> {
    match c.get(key) {
        None => Err(c.invalid(key, "required")),
        Some(Value::Number(n)) => {
            let s = n.to_string();
            if s.contains(['.', 'e', 'E']) {
                n.as_f64().map(Canon::Float).ok_or_else(|| c.invalid(key, &format!("not a number: {s}")))
            } else {
                s.parse::<i128>()
                    .map(Canon::Int)
                    .map_err(|_| Error::Unsupported(format!("numcodecs '{}': integer {key} {s} is too large", c.id)))
            }
        }
        Some(v) => Err(c.invalid(key, &format!("expected a number, got {v}"))),
    }
}

/// Test support: the filter a numcodecs configuration builds for elements of the dtype string `input`.
#[cfg(test)]
pub fn test_filter(cfg: Value, input: &str) -> Box<dyn BytesToBytesCodec> {
    crate::codec::numcodecs::filter(&cfg, &V2Elem::parse(input).unwrap()).unwrap().0
}

/// Test support: float64 values as little-endian bytes.
#[cfg(test)]
pub fn f64s_le(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
