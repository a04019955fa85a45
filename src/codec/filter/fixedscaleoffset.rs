//! numcodecs `fixedscaleoffset` (bytes -> bytes): `round((x - offset) * scale)` stored as `astype`.
//!
//! numcodecs id: `fixedscaleoffset`. Configuration: `offset`, `scale` (numbers, required), `dtype`
//! (the elements received; defaults to them), `astype` (the elements stored; default `dtype`).
//! Example: `{"id": "fixedscaleoffset", "offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"}`
//!
//! Encode (numcodecs): `around((x - offset) * scale).astype(astype)`; decode:
//! `(enc / scale + offset).astype(dtype)`. The arithmetic types follow numpy >= 2 (NEP 50), so whether
//! `offset` and `scale` are written as integers (`1000`) or floats (`1000.0`) matters:
//! - a float `dtype` computes in that type, with `offset` and `scale` rounded to it first;
//! - an integer `dtype` with an integer member computes in that type, wrapping (and numpy raises
//!   `OverflowError` when the member does not fit the type: encoding then fails with
//!   `Error::Metadata`); a float member switches to float64 from that operation on;
//! - `enc / scale` on integers is float64; on floats it stays in the float type;
//! - `around` rounds half to even; float -> int casts truncate toward zero (so an integer `dtype`
//!   decodes `dec = trunc(enc / scale + offset)`).
//!
//! Integers, unsigned integers, floats and bools (computed as numpy computes them: lossy) are
//! supported; complex, datetime and object dtypes are refused. Integers in `offset`/`scale` beyond 128 bits are refused.

use super::{check_decode, count, decode_new, num_type, py_number, ratio_size};
use crate::codec::numcodecs::numpy::{Arr, Canon, NumType, Op};
use crate::codec::numcodecs::{V2Config, V2Elem};
use crate::codec::{BytesToBytesCodec, DecodedSize};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::borrow::Cow;
use crate::codec::numcodecs::{array_filter, boxed};
use crate::codec::registry::CodecEntry;

/// The registry entry: numcodecs `fixedscaleoffset`, v3 `numcodecs.fixedscaleoffset` (array -> array).
pub static CODEC: CodecEntry = CodecEntry::numcodecs(array_filter("fixedscaleoffset", |c, input| boxed(FixedScaleOffsetCodec::from_config(c, input)), true));

/// The numcodecs `fixedscaleoffset` filter.
#[derive(Debug, Clone)]
pub struct FixedScaleOffsetCodec {
    offset: Canon,
    scale: Canon,
    dtype: NumType,
    astype: NumType,
    json: Value,
}

impl FixedScaleOffsetCodec {
    /// Builds the filter from its configuration for `input` elements; returns what it produces.
    pub fn from_config(c: &V2Config, input: &V2Elem) -> Result<(FixedScaleOffsetCodec, V2Elem)> {
        let offset = py_number(c, "offset")?;
        let scale = py_number(c, "scale")?;
        let dtype = num_type(c, "dtype", NumType::from_elem(input))?;
        let astype = num_type(c, "astype", Some(dtype.clone()))?;
        let json = json!({
            "id": "fixedscaleoffset",
            "scale": c.get("scale").cloned().unwrap_or(Value::Null),
            "offset": c.get("offset").cloned().unwrap_or(Value::Null),
            "dtype": dtype.typestr(),
            "astype": astype.typestr(),
        });
        let out = astype.elem();
        Ok((FixedScaleOffsetCodec { offset, scale, dtype, astype, json }, out))
    }
}

fn overflow(msg: String) -> Error {
    Error::Metadata(format!("fixedscaleoffset: cannot encode: {msg}"))
}

impl BytesToBytesCodec for FixedScaleOffsetCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        count(data.len(), self.dtype.size(), "fixedscaleoffset", "input")?;
        let x = Arr::load(data, &self.dtype);
        let y = x.op_py(Op::Sub, self.offset).map_err(overflow)?;
        let y = y.op_py(Op::Mul, self.scale).map_err(overflow)?;
        Ok(y.rint().cast(&self.astype.data_type).to_bytes(self.astype.big))
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        decode_new(self, encoded, size, (self.astype.size(), self.dtype.size()), "fixedscaleoffset")
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        check_decode(encoded, out, self.astype.size(), self.dtype.size(), "fixedscaleoffset")?;
        let e = Arr::load(encoded, &self.astype);
        // true division never fails (integers become float64); `+ offset` is then on floats
        let y = e.op_py(Op::Div, self.scale).map_err(Error::Internal)?;
        let y = y.op_py(Op::Add, self.offset).map_err(Error::Internal)?;
        y.cast(&self.dtype.data_type).store_into(out, self.dtype.big);
        Ok(())
    }

    fn encoded_size(&self, decoded: u64) -> Option<u64> {
        ratio_size(decoded, self.dtype.size(), self.astype.size())
    }

    fn to_json(&self) -> Value {
        self.json.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::filter::{f64s_le as f64s, test_filter as codec};
    use crate::codec::numcodecs::filter;

    #[test]
    fn docstring_example() {
        // numcodecs' docstring: linspace(1000, 1001, 10), offset 1000, scale 10, f8 -> u1
        let x: Vec<f64> = (0..10).map(|i| 1000.0 + i as f64 / 9.0).collect();
        let c = codec(json!({"id": "fixedscaleoffset", "offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"}), "<f8");
        let e = c.encode(&f64s(&x)).unwrap();
        assert_eq!(e, [0, 1, 2, 3, 4, 6, 7, 8, 9, 10]);
        assert_eq!(c.encoded_size(80), Some(10));
        let mut out = vec![0; 80];
        c.decode_into(&e, &mut out).unwrap();
        let want: Vec<f64> = (0..=10).filter(|&i| i != 5).map(|i| i as f64 / 10.0 + 1000.0).collect();
        assert_eq!(out, f64s(&want));
        let c = codec(json!({"id": "fixedscaleoffset", "offset": 1000, "scale": 1000, "dtype": "<f8", "astype": ">u2"}), "<f8");
        let e = c.encode(&f64s(&x)).unwrap();
        let got: Vec<u16> = e.chunks(2).map(|b| u16::from_be_bytes([b[0], b[1]])).collect();
        assert_eq!(got, [0, 111, 222, 333, 444, 556, 667, 778, 889, 1000]);
    }

    #[test]
    fn rounding_and_types() {
        // half to even
        let c = codec(json!({"id": "fixedscaleoffset", "offset": 0, "scale": 1, "dtype": "<f8", "astype": "<i4"}), "<f8");
        let e = c.encode(&f64s(&[0.5, 1.5, 2.5, -0.5, -1.5])).unwrap();
        let got: Vec<i32> = e.chunks(4).map(|b| i32::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!(got, [0, 2, 2, 0, -2]);
        // integer dtype, integer members: wrapping int16 arithmetic
        let c = codec(json!({"id": "fixedscaleoffset", "offset": 10, "scale": 1000, "dtype": "<i2", "astype": "<i2"}), "<i2");
        assert_eq!(c.encode(&100i16.to_le_bytes()).unwrap(), (90i16.wrapping_mul(1000)).to_le_bytes());
        // ... decodes in float64 and truncates: 24464 / 1000 + 10 = 34.464 -> 34
        let mut out = [0; 2];
        c.decode_into(&24464i16.to_le_bytes(), &mut out).unwrap();
        assert_eq!(i16::from_le_bytes(out), 34);
        // float offset with an integer dtype: float64 from the subtraction on
        let c = codec(json!({"id": "fixedscaleoffset", "offset": 0.5, "scale": 1000, "dtype": "<i2", "astype": "<i4"}), "<i2");
        assert_eq!(c.encode(&100i16.to_le_bytes()).unwrap(), 99500i32.to_le_bytes());
        // float32 dtype: offset rounded to float32, arithmetic in float32
        let c = codec(json!({"id": "fixedscaleoffset", "offset": 0.1, "scale": 3, "dtype": "<f4", "astype": "<f4"}), "<f4");
        let e = c.encode(&1.0f32.to_le_bytes()).unwrap();
        assert_eq!(e, ((1.0f32 - 0.1f32) * 3.0f32).round_ties_even().to_le_bytes());
        // NaN stays NaN through float astype; to an integer astype it is undefined in numpy (0 here)
        let c = codec(json!({"id": "fixedscaleoffset", "offset": 0, "scale": 1, "dtype": "<f8", "astype": "<f8"}), "<f8");
        assert!(f64::from_le_bytes(c.encode(&f64s(&[f64::NAN])).unwrap().try_into().unwrap()).is_nan());
    }

    #[test]
    fn errors() {
        // numpy raises OverflowError for a python int that does not fit the integer dtype
        let c = codec(json!({"id": "fixedscaleoffset", "offset": 1000, "scale": 1, "dtype": "|u1"}), "|u1");
        assert!(matches!(c.encode(&[1]), Err(Error::Metadata(_))));
        let c = codec(json!({"id": "fixedscaleoffset", "offset": -3, "scale": 1, "dtype": "|u1"}), "|u1");
        assert!(matches!(c.encode(&[1]), Err(Error::Metadata(_))));
        // ... but decoding works (true division first)
        let mut out = [0];
        c.decode_into(&[4], &mut out).unwrap();
        assert_eq!(out, [1]);
        let c = codec(json!({"id": "fixedscaleoffset", "offset": 0, "scale": 2, "dtype": "<f4", "astype": "<i2"}), "<f4");
        assert!(matches!(c.encode(&[0; 3]), Err(Error::Codec(_))));
        let mut out = [0; 4];
        assert!(matches!(c.decode_into(&[0; 3], &mut out), Err(Error::Codec(_))));
        assert!(matches!(c.decode_into(&[0; 4], &mut out), Err(Error::Codec(_))));
        assert_eq!(c.encode(&[]).unwrap(), Vec::<u8>::new());
        let input = V2Elem::parse("<f4").unwrap();
        for cfg in [
            json!({"id": "fixedscaleoffset", "scale": 1, "dtype": "<f4"}),
            json!({"id": "fixedscaleoffset", "offset": 0, "dtype": "<f4"}),
            json!({"id": "fixedscaleoffset", "offset": "0", "scale": 1, "dtype": "<f4"}),
        ] {
            assert!(matches!(filter(&cfg, &input), Err(Error::Metadata(_))), "{cfg}");
        }
        for cfg in [
            json!({"id": "fixedscaleoffset", "offset": 0, "scale": 1, "dtype": "<f4", "astype": "|O"}),
        ] {
            assert!(matches!(filter(&cfg, &input), Err(Error::Unsupported(_))), "{cfg}");
        }
        let big: Value = serde_json::from_str(r#"{"id": "fixedscaleoffset", "offset": 0, "scale": 100000000000000000000000000000000000000000, "dtype": "<f4"}"#).unwrap();
        assert!(matches!(filter(&big, &input), Err(Error::Unsupported(_))));
        let (c, out) = filter(&json!({"id": "fixedscaleoffset", "offset": 1000, "scale": 10.0, "dtype": "<f4", "astype": "|u1"}), &input).unwrap();
        assert_eq!(out, V2Elem::parse("|u1").unwrap());
        assert_eq!(c.to_json()["scale"], json!(10.0));
        assert_eq!(c.to_json()["offset"], json!(1000));
    }
}
