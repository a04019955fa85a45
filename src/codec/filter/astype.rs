//! numcodecs `astype` (bytes -> bytes): stores the elements cast to another type.
//!
//! numcodecs id: `astype`. Configuration: `encode_dtype` (the elements stored, required),
//! `decode_dtype` (the elements received; defaults to them).
//! Example: `{"id": "astype", "encode_dtype": "|i1", "decode_dtype": "<i2"}`
//!
//! Encode is numpy's `x.astype(encode_dtype)`, decode `enc.astype(decode_dtype)`, for every pair of
//! bool, integer, unsigned integer and float (16/32/64-bit) types, in either byte order: integers wrap,
//! floats round to nearest (ties to even), float -> integer truncates toward zero, NaN, infinities and
//! out-of-range floats -> integer give numpy's x86-64 scalar result (undefined in numpy; see the
//! module documentation of `filters`), anything -> bool is `!= 0`. Narrowing loses data silently, as in
//! numcodecs. Complex, string, datetime, structured and object types are refused (`Error::Unsupported`).

use super::{check_decode, count, decode_new, num_type, ratio_size};
use crate::codec::numcodecs::numpy::{Arr, NumType};
use crate::codec::numcodecs::{V2Config, V2Elem};
use crate::codec::{BytesToBytesCodec, DecodedSize};
use crate::error::Result;
use serde_json::{json, Value};
use std::borrow::Cow;
use crate::codec::numcodecs::{array_filter, boxed};
use crate::codec::registry::CodecEntry;

/// The registry entry: numcodecs `astype`, v3 `numcodecs.astype` (array -> array).
pub static CODEC: CodecEntry = CodecEntry::numcodecs(array_filter("astype", |c, input| boxed(AsTypeCodec::from_config(c, input)), true));

/// The numcodecs `astype` filter.
#[derive(Debug, Clone)]
pub struct AsTypeCodec {
    encode_dtype: NumType,
    decode_dtype: NumType,
}

impl AsTypeCodec {
    /// A codec storing `decode_dtype` elements as `encode_dtype`.
    pub fn new(encode_dtype: NumType, decode_dtype: NumType) -> AsTypeCodec {
        AsTypeCodec { encode_dtype, decode_dtype }
    }

    /// Builds the filter from its configuration for `input` elements; returns what it produces.
    pub fn from_config(c: &V2Config, input: &V2Elem) -> Result<(AsTypeCodec, V2Elem)> {
        let encode_dtype = num_type(c, "encode_dtype", None)?;
        let decode_dtype = num_type(c, "decode_dtype", NumType::from_elem(input))?;
        let out = encode_dtype.elem();
        Ok((AsTypeCodec::new(encode_dtype, decode_dtype), out))
    }
}

/// Casts `data` (elements of `from`) into `out` (elements of `to`).
fn convert(data: &[u8], from: &NumType, to: &NumType, out: &mut [u8]) {
    if from == to {
        out.copy_from_slice(data);
    } else {
        Arr::load(data, from).cast(&to.data_type).store_into(out, to.big);
    }
}

impl BytesToBytesCodec for AsTypeCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        let n = count(data.len(), self.decode_dtype.size(), "astype", "input")?;
        let mut out = vec![0; n * self.encode_dtype.size()];
        convert(data, &self.decode_dtype, &self.encode_dtype, &mut out);
        Ok(out)
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        if self.encode_dtype == self.decode_dtype {
            let n = count(encoded.len(), self.encode_dtype.size(), "astype", "encoded data")?;
            size.check(n * self.decode_dtype.size(), "astype")?;
            return Ok(Cow::Borrowed(encoded));
        }
        decode_new(self, encoded, size, (self.encode_dtype.size(), self.decode_dtype.size()), "astype")
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        check_decode(encoded, out, self.encode_dtype.size(), self.decode_dtype.size(), "astype")?;
        convert(encoded, &self.encode_dtype, &self.decode_dtype, out);
        Ok(())
    }

    fn encoded_size(&self, decoded: u64) -> Option<u64> {
        ratio_size(decoded, self.decode_dtype.size(), self.encode_dtype.size())
    }

    fn to_json(&self) -> Value {
        json!({"id": "astype", "encode_dtype": self.encode_dtype.typestr(), "decode_dtype": self.decode_dtype.typestr()})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::filter::test_filter as codec;
    use crate::codec::numcodecs::filter;
    use crate::error::Error;

    #[test]
    fn casts() {
        // numcodecs' docstring: int16 <-> int8
        let c = codec(json!({"id": "astype", "encode_dtype": "|i1", "decode_dtype": "<i2"}), "<i2");
        let x: Vec<u8> = (0..10).flat_map(|i| (100i16 + 2 * i).to_le_bytes()).collect();
        let e = c.encode(&x).unwrap();
        assert_eq!(e, (0..10).map(|i| 100 + 2 * i).collect::<Vec<u8>>());
        let mut out = vec![0; 20];
        c.decode_into(&e, &mut out).unwrap();
        assert_eq!(out, x);
        assert_eq!(c.encode(&(-300i16).to_le_bytes()).unwrap(), [212]);
        // float64 -> int32 truncates toward zero; byte order changes
        let c = codec(json!({"id": "astype", "encode_dtype": ">i4", "decode_dtype": "<f8"}), "<f8");
        let x: Vec<u8> = [2.9f64, -2.9, 1e3].iter().flat_map(|v| v.to_le_bytes()).collect();
        let e = c.encode(&x).unwrap();
        assert_eq!(e, [2i32, -2, 1000].iter().flat_map(|v| v.to_be_bytes()).collect::<Vec<_>>());
        // float -> float16 rounds; bool
        let c = codec(json!({"id": "astype", "encode_dtype": "<f2", "decode_dtype": "<f4"}), "<f4");
        assert_eq!(c.encode(&70000.0f32.to_le_bytes()).unwrap(), half::f16::INFINITY.to_le_bytes());
        let c = codec(json!({"id": "astype", "encode_dtype": "|b1", "decode_dtype": "<f4"}), "<f4");
        let x: Vec<u8> = [0.0f32, -0.0, 0.5, f32::NAN].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(c.encode(&x).unwrap(), [0, 0, 1, 1]);
        // same type, other byte order: a swap; identical types: a copy
        let c = codec(json!({"id": "astype", "encode_dtype": ">u2", "decode_dtype": "<u2"}), "<u2");
        assert_eq!(c.encode(&[1, 2, 3, 4]).unwrap(), [2, 1, 4, 3]);
        let c = codec(json!({"id": "astype", "encode_dtype": "<u2", "decode_dtype": "<u2"}), "<u2");
        assert!(matches!(c.decode(&[1, 2], DecodedSize::Exact(2)).unwrap(), Cow::Borrowed(_)));
    }

    #[test]
    fn errors() {
        let c = codec(json!({"id": "astype", "encode_dtype": "<i4", "decode_dtype": "<i8"}), "<i8");
        assert_eq!(c.encoded_size(16), Some(8));
        assert_eq!(c.encode(&[]).unwrap(), Vec::<u8>::new());
        assert!(matches!(c.encode(&[0; 7]), Err(Error::Codec(_))));
        let mut out = [0; 8];
        assert!(matches!(c.decode_into(&[0; 3], &mut out), Err(Error::Codec(_))));
        assert!(matches!(c.decode_into(&[0; 8], &mut out), Err(Error::Codec(_))));
        assert!(matches!(c.decode(&[0; 8], DecodedSize::Exact(8)), Err(Error::Codec(_))));
        let input = V2Elem::parse("<i8").unwrap();
        assert!(matches!(filter(&json!({"id": "astype", "decode_dtype": "<i8"}), &input), Err(Error::Metadata(_))));
        // a decode_dtype of another size than the elements received views their bytes (numcodecs)
        let (c, _) = filter(&json!({"id": "astype", "encode_dtype": "<i2", "decode_dtype": "<i4"}), &input).unwrap();
        assert_eq!(c.encode(&[1, 0, 0, 0, 2, 0, 0, 0]).unwrap(), [1, 0, 2, 0]);
        for cfg in [
            json!({"id": "astype", "encode_dtype": "<c8", "decode_dtype": "<i8"}),
            json!({"id": "astype", "encode_dtype": "|S8", "decode_dtype": "<i8"}),
            json!({"id": "astype", "encode_dtype": "<m8[s]", "decode_dtype": "<i8"}),
        ] {
            assert!(matches!(filter(&cfg, &input), Err(Error::Unsupported(_))), "{cfg}");
        }
        let (c, out) = filter(&json!({"id": "astype", "encode_dtype": "<f4"}), &input).unwrap();
        assert_eq!(out, V2Elem::parse("<f4").unwrap());
        assert_eq!(c.to_json(), json!({"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<i8"}));
    }
}
