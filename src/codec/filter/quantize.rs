//! numcodecs `quantize` (bytes -> bytes, lossy): keeps about `digits` decimal digits of floats.
//!
//! numcodecs id: `quantize`. Configuration: `digits` (number, required), `dtype` (the float elements
//! received; defaults to them), `astype` (the float elements stored; default `dtype`).
//! Example: `{"id": "quantize", "digits": 2, "dtype": "<f8", "astype": "<f4"}`
//!
//! numcodecs' formula: `precision = 10.0 ** -digits`; `exp = log10(precision)`, floored if negative,
//! else ceiled; `bits = ceil(log2(10.0 ** -exp))`; `scale = 2.0 ** bits`; encode
//! `(around(scale * x) / scale).astype(astype)` with every operation in `dtype` (the python float
//! `scale` is rounded to `dtype` first: a `float16` `scale` overflows to infinity from `digits` 5 on,
//! which numpy then propagates as infinities and NaNs). `around` rounds half to even. Decode is the
//! cast back to `dtype`. The libm functions (`pow`, `log10`, `log2`) are the ones python calls.
//!
//! Only float dtypes (`f2`, `f4`, `f8`) are accepted, as in numcodecs (others: `Error::Metadata`);
//! `digits` whose scale python cannot compute (overflow, domain errors) are `Error::Metadata`.

use super::{check_decode, count, decode_new, num_type, py_number, ratio_size};
use crate::codec::numcodecs::numpy::{Arr, NumType};
use crate::codec::numcodecs::{V2Config, V2Elem};
use crate::codec::{BytesToBytesCodec, DecodedSize};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::borrow::Cow;
use crate::codec::numcodecs::{array_filter, boxed};
use crate::codec::registry::CodecEntry;

/// The registry entry: numcodecs `quantize`, v3 `numcodecs.quantize` (array -> array).
pub static CODEC: CodecEntry = CodecEntry::numcodecs(array_filter("quantize", |c, input| boxed(QuantizeCodec::from_config(c, input)), true));

/// The numcodecs `quantize` filter.
#[derive(Debug, Clone)]
pub struct QuantizeCodec {
    digits: Value,
    scale: f64,
    dtype: NumType,
    astype: NumType,
}

/// numcodecs' `scale` for `digits` (`None` where python raises).
pub fn scale_for(digits: f64) -> Option<f64> {
    let precision = 10f64.powf(-digits);
    let exp = precision.log10();
    if !exp.is_finite() {
        return None; // log10(0) or of infinity: math.floor/ceil raise
    }
    let exp = if exp < 0.0 { exp.floor() } else { exp.ceil() };
    let p = 10f64.powf(-exp);
    if !p.is_finite() || p <= 0.0 {
        return None; // 10.0 ** n overflows (OverflowError) or is 0 (log2: domain error)
    }
    let bits = p.log2().ceil();
    let scale = 2f64.powf(bits);
    scale.is_finite().then_some(scale) // 2.0 ** bits overflows: OverflowError
}

impl QuantizeCodec {
    /// Builds the filter from its configuration for `input` elements; returns what it produces.
    pub fn from_config(c: &V2Config, input: &V2Elem) -> Result<(QuantizeCodec, V2Elem)> {
        let digits = py_number(c, "digits")?.to_f64();
        let dtype = num_type(c, "dtype", NumType::from_elem(input)).map_err(float_only)?;
        let astype = num_type(c, "astype", Some(dtype.clone())).map_err(float_only)?;
        for t in [&dtype, &astype] {
            if !t.data_type.is_float() {
                return Err(float_only(Error::Metadata(format!("'{}'", t.typestr()))));
            }
        }
        let scale = scale_for(digits).ok_or_else(|| c.invalid("digits", "numcodecs cannot compute a scale for it"))?;
        let digits = c.get("digits").cloned().unwrap_or(Value::Null);
        let out = astype.elem();
        Ok((QuantizeCodec { digits, scale, dtype, astype }, out))
    }
}

fn float_only(e: Error) -> Error {
    match e {
        Error::Unsupported(m) | Error::Metadata(m) => {
            Error::Metadata(format!("numcodecs 'quantize' supports only float dtypes: {m}"))
        }
        e => e,
    }
}

impl BytesToBytesCodec for QuantizeCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        count(data.len(), self.dtype.size(), "quantize", "input")?;
        let x = Arr::load(data, &self.dtype);
        Ok(x.quantize(self.scale).cast(&self.astype.data_type).to_bytes(self.astype.big))
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        decode_new(self, encoded, size, (self.astype.size(), self.dtype.size()), "quantize")
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        check_decode(encoded, out, self.astype.size(), self.dtype.size(), "quantize")?;
        Arr::load(encoded, &self.astype).cast(&self.dtype.data_type).store_into(out, self.dtype.big);
        Ok(())
    }

    fn encoded_size(&self, decoded: u64) -> Option<u64> {
        ratio_size(decoded, self.dtype.size(), self.astype.size())
    }

    fn to_json(&self) -> Value {
        json!({"id": "quantize", "digits": self.digits, "dtype": self.dtype.typestr(), "astype": self.astype.typestr()})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::filter::{f64s_le as f64s, test_filter as codec};
    use crate::codec::numcodecs::filter;

    #[test]
    fn scales() {
        assert_eq!(scale_for(1.0), Some(16.0));
        assert_eq!(scale_for(2.0), Some(128.0));
        assert_eq!(scale_for(3.0), Some(1024.0));
        assert_eq!(scale_for(0.0), Some(1.0));
        assert_eq!(scale_for(-1.0), Some(0.125));
        assert_eq!(scale_for(400.0), None);
        assert_eq!(scale_for(-400.0), None);
    }

    #[test]
    fn docstring_example() {
        // numcodecs' docstring: linspace(0, 1, 10)
        let x: Vec<f64> = (0..10).map(|i| i as f64 / 9.0).collect();
        let c = codec(json!({"id": "quantize", "digits": 1, "dtype": "<f8"}), "<f8");
        let e = c.encode(&f64s(&x)).unwrap();
        assert_eq!(e, f64s(&[0.0, 0.125, 0.25, 0.3125, 0.4375, 0.5625, 0.6875, 0.75, 0.875, 1.0]));
        let mut out = vec![0; 80];
        c.decode_into(&e, &mut out).unwrap();
        assert_eq!(out, e);
        let c = codec(json!({"id": "quantize", "digits": 2, "dtype": "<f8"}), "<f8");
        let e = c.encode(&f64s(&x)).unwrap();
        let want = [0.0, 0.109375, 0.21875, 0.3359375, 0.4453125, 0.5546875, 0.6640625, 0.78125, 0.890625, 1.0];
        assert_eq!(e, f64s(&want));
    }

    #[test]
    fn narrowing_specials_and_errors() {
        let c = codec(json!({"id": "quantize", "digits": 3, "dtype": ">f8", "astype": "<f4"}), ">f8");
        let x: Vec<u8> = [0.1f64, f64::INFINITY, -2.5].iter().flat_map(|v| v.to_be_bytes()).collect();
        let e = c.encode(&x).unwrap();
        assert_eq!(c.encoded_size(24), Some(12));
        let got: Vec<f32> = e.chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!(got, [(102.0f64 / 1024.0) as f32, f32::INFINITY, -2.5]);
        let mut out = vec![0; 24];
        c.decode_into(&e, &mut out).unwrap();
        assert_eq!(&out[8..], &x[8..]);
        assert!(c.decode_into(&e[..11], &mut out[..22]).is_err());
        // float16 with digits 5: scale 2^17 is infinite in float16
        let c = codec(json!({"id": "quantize", "digits": 5, "dtype": "<f2"}), "<f2");
        let e = c.encode(&half::f16::from_f32(0.5).to_le_bytes()).unwrap();
        assert!(half::f16::from_le_bytes([e[0], e[1]]).is_nan());
        let input = V2Elem::parse("<f4").unwrap();
        for cfg in [
            json!({"id": "quantize", "dtype": "<f4"}),
            json!({"id": "quantize", "digits": 2, "dtype": "<i4"}),
            json!({"id": "quantize", "digits": 2, "dtype": "<f4", "astype": "<i4"}),
            json!({"id": "quantize", "digits": 2, "dtype": "<f4", "astype": "<c8"}),
            json!({"id": "quantize", "digits": 400, "dtype": "<f4"}),
        ] {
            assert!(matches!(filter(&cfg, &input), Err(Error::Metadata(_))), "{cfg}");
        }
    }
}
