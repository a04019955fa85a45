//! numcodecs `delta` (bytes -> bytes): the first element, then the differences of neighbours.
//!
//! numcodecs id: `delta`. Configuration: `dtype` (the elements received; defaults to them),
//! `astype` (the elements stored; default `dtype`).
//! Example: `{"id": "delta", "dtype": "<i2", "astype": "<i1"}`
//!
//! Encode (numcodecs): `enc[0] = x[0]` (numpy scalar assignment), `enc[1:] = diff(x)` computed in
//! `dtype` (integers wrap) and cast to `astype`. Decode: `cumsum(enc, out=dec)`, which numpy
//! accumulates in `promote_types(dtype, astype)` (e.g. float64 for int64 with uint64) before casting
//! each running sum to `dtype`. Integers, unsigned integers, floats and bools are supported (numpy's
//! bool `diff` is `not_equal` and its bool `cumsum` an `or`: lossy, as in numcodecs); complex, datetime
//! and object dtypes are refused.
//!
//! Differences from numcodecs: an empty chunk encodes to nothing (numcodecs raises IndexError). Where
//! numpy's scalar assignment of the first element raises (a first value that does not fit a signed
//! integer `astype`, NaN or infinity into one), encoding fails with `Error::Value`.

use super::{check_decode, count, decode_new, num_type, ratio_size};
use crate::codec::numcodecs::numpy::{promote, scalar_assign_ok, Arr, NumType};
use crate::codec::numcodecs::{V2Config, V2Elem};
use crate::codec::{BytesToBytesCodec, DecodedSize};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::borrow::Cow;
use crate::codec::numcodecs::{array_filter, boxed};
use crate::codec::registry::CodecEntry;

/// The registry entry: numcodecs `delta`, v3 `numcodecs.delta` (array -> array) (not elementwise: differences of neighbours).
pub static CODEC: CodecEntry = CodecEntry::numcodecs(array_filter("delta", |c, input| boxed(DeltaCodec::from_config(c, input)), false));

/// The numcodecs `delta` filter.
#[derive(Debug, Clone)]
pub struct DeltaCodec {
    dtype: NumType,
    astype: NumType,
}

impl DeltaCodec {
    /// A codec storing the differences of `dtype` elements as `astype`.
    pub fn new(dtype: NumType, astype: NumType) -> Result<DeltaCodec> {
        Ok(DeltaCodec { dtype, astype })
    }

    /// Builds the filter from its configuration for `input` elements; returns what it produces.
    pub fn from_config(c: &V2Config, input: &V2Elem) -> Result<(DeltaCodec, V2Elem)> {
        let dtype = num_type(c, "dtype", NumType::from_elem(input))?;
        let astype = num_type(c, "astype", Some(dtype.clone()))?;
        let out = astype.elem();
        Ok((DeltaCodec::new(dtype, astype)?, out))
    }
}

impl BytesToBytesCodec for DeltaCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        count(data.len(), self.dtype.size(), "delta", "input")?;
        let x = Arr::load(data, &self.dtype);
        if x.is_empty() {
            return Ok(Vec::new());
        }
        if !scalar_assign_ok(x.get(0), &self.astype.data_type) {
            return Err(Error::Value(format!(
                "delta: the first element {:?} does not fit astype {} (numcodecs raises here)",
                x.get(0),
                self.astype.typestr()
            )));
        }
        Ok(x.first_and_diff().cast(&self.astype.data_type).to_bytes(self.astype.big))
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        decode_new(self, encoded, size, (self.astype.size(), self.dtype.size()), "delta")
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        check_decode(encoded, out, self.astype.size(), self.dtype.size(), "delta")?;
        let acc = promote(&self.dtype.data_type, &self.astype.data_type);
        Arr::load(encoded, &self.astype).cast(&acc).cumsum().cast(&self.dtype.data_type).store_into(out, self.dtype.big);
        Ok(())
    }

    fn encoded_size(&self, decoded: u64) -> Option<u64> {
        ratio_size(decoded, self.dtype.size(), self.astype.size())
    }

    fn to_json(&self) -> Value {
        json!({"id": "delta", "dtype": self.dtype.typestr(), "astype": self.astype.typestr()})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::filter::test_filter as codec;
    use crate::codec::numcodecs::filter;

    fn round(c: &dyn BytesToBytesCodec, data: &[u8]) -> Vec<u8> {
        let e = c.encode(data).unwrap();
        assert_eq!(c.encoded_size(data.len() as u64), Some(e.len() as u64));
        let mut out = vec![0; data.len()];
        c.decode_into(&e, &mut out).unwrap();
        assert_eq!(c.decode(&e, DecodedSize::Exact(data.len())).unwrap().as_ref(), out.as_slice());
        out
    }

    #[test]
    fn known_values_and_narrowing() {
        // numcodecs' docstring: arange(100, 120, 2) as i2, astype i1
        let c = codec(json!({"id": "delta", "dtype": "<i2", "astype": "<i1"}), "<i2");
        let x: Vec<u8> = (0..10).flat_map(|i| (100i16 + 2 * i).to_le_bytes()).collect();
        let e = c.encode(&x).unwrap();
        assert_eq!(e, [100, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
        assert_eq!(round(c.as_ref(), &x), x);
        // big-endian in, big-endian out
        let c = codec(json!({"id": "delta", "dtype": ">i4", "astype": ">i4"}), ">i4");
        let x: Vec<u8> = [5i32, 7, 4, i32::MIN].iter().flat_map(|v| v.to_be_bytes()).collect();
        let e = c.encode(&x).unwrap();
        let want: Vec<u8> = [5i32, 2, -3, i32::MIN.wrapping_sub(4)].iter().flat_map(|v| v.to_be_bytes()).collect();
        assert_eq!(e, want);
        assert_eq!(round(c.as_ref(), &x), x);
    }

    #[test]
    fn wrapping() {
        let c = codec(json!({"id": "delta", "dtype": "|u1"}), "|u1");
        let x = [250u8, 3, 255, 0, 0];
        assert_eq!(c.encode(&x).unwrap(), [250, 9, 252, 1, 0]);
        assert_eq!(round(c.as_ref(), &x), x);
        // lossy narrowing: 0 -> 200 stored as -56 in int8, decoded in int16 as -56
        let c = codec(json!({"id": "delta", "dtype": "<i2", "astype": "|i1"}), "<i2");
        let x: Vec<u8> = [0i16, 200].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(c.encode(&x).unwrap(), [0, 200]);
        let out = round(c.as_ref(), &x);
        let want: Vec<u8> = [0i16, -56].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(out, want);
    }

    #[test]
    fn floats_and_accumulation_type() {
        let c = codec(json!({"id": "delta", "dtype": "<f8", "astype": "<f4"}), "<f8");
        let x: Vec<u8> = [1.0f64, 1.5, f64::INFINITY, f64::NAN].iter().flat_map(|v| v.to_le_bytes()).collect();
        let e = c.encode(&x).unwrap();
        let d: Vec<f32> = e.chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!(&d[..3], [1.0, 0.5, f32::INFINITY]);
        assert!(d[3].is_nan());
        // int64 with uint64 accumulates in float64 (numpy promotion): 2^53 + 1 is lost
        let c = codec(json!({"id": "delta", "dtype": "<u8", "astype": "<i8"}), "<u8");
        let enc: Vec<u8> = [1i64 << 53, 1, 1].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = vec![0; 24];
        c.decode_into(&enc, &mut out).unwrap();
        let got: Vec<u64> = out.chunks(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!(got, [1 << 53; 3]);
        // float32 running sums cast to float16 each step
        let c = codec(json!({"id": "delta", "dtype": "<f2", "astype": "<f4"}), "<f2");
        let enc: Vec<u8> = [1.0f32, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = vec![0; 12];
        c.decode_into(&enc, &mut out).unwrap();
        assert_eq!(&out[10..], half::f16::from_bits(0x3c01).to_le_bytes());
    }

    #[test]
    fn edges_and_errors() {
        let c = codec(json!({"id": "delta", "dtype": "<i4"}), "<i4");
        assert_eq!(c.encode(&[]).unwrap(), Vec::<u8>::new());
        assert_eq!(round(c.as_ref(), &[]), Vec::<u8>::new());
        assert!(matches!(c.encode(&[1, 2, 3]), Err(Error::Codec(_))));
        let mut out = vec![0; 4];
        assert!(matches!(c.decode_into(&[1, 2, 3], &mut out), Err(Error::Codec(_))));
        assert!(matches!(c.decode_into(&[1, 2, 3, 4, 5, 6, 7, 8], &mut out), Err(Error::Codec(_))));
        assert!(matches!(c.decode(&[0; 8], DecodedSize::Exact(4)), Err(Error::Codec(_))));
        // first value out of a signed astype: numpy raises
        let c = codec(json!({"id": "delta", "dtype": "<i2", "astype": "|i1"}), "<i2");
        assert!(matches!(c.encode(&300i16.to_le_bytes()), Err(Error::Value(_))));
        // into an unsigned astype it wraps, as numpy does
        let c = codec(json!({"id": "delta", "dtype": "<i2", "astype": "|u1"}), "<i2");
        assert_eq!(c.encode(&(-5i16).to_le_bytes()).unwrap(), [251]);
        let input = V2Elem::parse("<i4").unwrap();
        for (cfg, bad_meta) in [
            (json!({"id": "delta", "dtype": "<i4", "astype": 5}), true),
            (json!({"id": "delta", "dtype": "<x4"}), false),
            (json!({"id": "delta", "dtype": "<c8"}), false),
            (json!({"id": "delta", "dtype": "|O"}), false),
            (json!({"id": "delta", "dtype": "<M8[ns]"}), false),
        ] {
            match filter(&cfg, &input) {
                Err(Error::Metadata(_)) if bad_meta => {}
                Err(Error::Unsupported(_)) if !bad_meta => {}
                other => panic!("{cfg}: {:?}", other.map(|(c, _)| c)),
            }
        }
        let (c, out) = filter(&json!({"id": "delta", "dtype": "<i4", "astype": ">i2"}), &input).unwrap();
        assert_eq!(out, V2Elem::parse(">i2").unwrap());
        assert_eq!(c.to_json(), json!({"id": "delta", "dtype": "<i4", "astype": ">i2"}));
        assert_eq!(c.encoded_size(12), Some(6));
        assert_eq!(c.encoded_size(13), None);
    }
}
