//! numcodecs `bitround` (bytes -> bytes, lossy): rounds float mantissas to `keepbits` bits.
//!
//! numcodecs id: `bitround`. Configuration: `keepbits` (integer >= 0, at most the mantissa width:
//! 10 for float16, 23 for float32, 52 for float64). Example: `{"id": "bitround", "keepbits": 7}`
//!
//! Decoding is the identity for every element type, as in numcodecs, so arrays of any fixed-size type
//! with this filter read (GDAL writes it on `|u1` data). Encoding, as numcodecs does, needs float16,
//! float32 or float64 elements and `keepbits` at most the mantissa width; anything else is refused
//! when a chunk is written (numcodecs raises there too). Encode (numcodecs, on the bits `b` as a
//! signed integer of the same width):
//! `maskbits = mantissa - keepbits`; `b += ((b >> maskbits) & 1) + (1 << (maskbits - 1)) - 1`
//! (wrapping, arithmetic shift); `b &= -1 << maskbits`; i.e. round to nearest, ties to even, in the bit
//! pattern (so NaNs may change payload, and a mantissa carry can reach infinity). `keepbits` equal to
//! the mantissa width is the identity. Decode is the identity. The elements keep their type and byte
//! order.

use super::check_out;
use crate::codec::numcodecs::{V2Config, V2Elem};
use crate::codec::{BytesToBytesCodec, DecodedSize};
use crate::dtype::{DataType, Endian};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::borrow::Cow;
use crate::codec::numcodecs::{array_filter, boxed};
use crate::codec::registry::CodecEntry;

/// The registry entry: numcodecs `bitround`, v3 `numcodecs.bitround` (array -> array).
pub static CODEC: CodecEntry = CodecEntry::numcodecs(array_filter("bitround", |c, input| boxed(BitRoundCodec::from_config(c, input)), true));

/// The numcodecs `bitround` filter.
#[derive(Debug, Clone)]
pub struct BitRoundCodec {
    keepbits: u32,
    /// Bytes per element (2, 4 or 8 for floats).
    size: usize,
    /// Mantissa bits of the element type; `None` for other types (decode only).
    mantissa: Option<u32>,
    big: bool,
    /// The element type, for messages.
    data_type: DataType,
}

impl BitRoundCodec {
    /// A codec keeping `keepbits` mantissa bits of `input` floats (any other fixed-size `input`
    /// decodes only).
    pub fn new(keepbits: i64, input: &V2Elem) -> Result<BitRoundCodec> {
        let (size, mantissa) = match input.data_type {
            DataType::Float16 => (2, Some(10)),
            DataType::Float32 => (4, Some(23)),
            DataType::Float64 => (8, Some(52)),
            ref t => (t.size().max(1), None),
        };
        if keepbits < 0 || keepbits > i64::from(u32::MAX) {
            return Err(Error::Metadata(format!("numcodecs 'bitround': keepbits {keepbits} must be zero or positive")));
        }
        Ok(BitRoundCodec {
            keepbits: keepbits as u32,
            size,
            mantissa,
            big: input.byte_order == Some(Endian::Big),
            data_type: input.data_type.clone(),
        })
    }

    /// Builds the filter from its configuration for `input` elements; returns what it produces.
    /// numcodecs' encode returns the rounded floats as signed integers of their width (`b`, the
    /// view it rounds in): a filter after it receives those (a second `bitround` then refuses to
    /// encode, as numcodecs raises).
    pub fn from_config(c: &V2Config, input: &V2Elem) -> Result<(BitRoundCodec, V2Elem)> {
        let keepbits = c.int("keepbits", i64::MIN, i64::MAX, None)?;
        let out = match input.data_type {
            DataType::Float16 => DataType::Int16,
            DataType::Float32 => DataType::Int32,
            DataType::Float64 => DataType::Int64,
            ref t => t.clone(),
        };
        Ok((BitRoundCodec::new(keepbits, input)?, V2Elem { data_type: out, byte_order: input.byte_order }))
    }
}

impl BytesToBytesCodec for BitRoundCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        let mantissa = self.mantissa.ok_or_else(|| {
            Error::Unsupported(format!(
                "numcodecs 'bitround' encodes only float16, float32 or float64 elements, not {} (such arrays can be read, not written)",
                self.data_type
            ))
        })?;
        if self.keepbits > mantissa {
            return Err(Error::Metadata(format!(
                "numcodecs 'bitround': keepbits {} is not in 0..={mantissa} for {} (such arrays can be read, not written)",
                self.keepbits, self.data_type
            )));
        }
        super::count(data.len(), self.size, "bitround", "input")?;
        let mut out = data.to_vec();
        if self.keepbits == mantissa {
            return Ok(out);
        }
        super::bitround::round_in_place(&mut out, self.size, Some(mantissa), self.keepbits, self.big);
        Ok(out)
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        super::count(encoded.len(), self.size, "bitround", "encoded data")?;
        size.check(encoded.len(), "bitround")?;
        Ok(Cow::Borrowed(encoded))
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        super::count(encoded.len(), self.size, "bitround", "encoded data")?;
        check_out(out, encoded.len(), "bitround")?;
        out.copy_from_slice(encoded);
        Ok(())
    }

    fn encoded_size(&self, decoded: u64) -> Option<u64> {
        Some(decoded)
    }

    fn to_json(&self) -> Value {
        json!({"id": "bitround", "keepbits": self.keepbits})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::filter::test_filter as codec;
    use crate::codec::numcodecs::filter;

    fn f32s(c: &dyn BytesToBytesCodec, v: &[f32]) -> Vec<u32> {
        let d: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        c.encode(&d).unwrap().chunks(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect()
    }

    #[test]
    fn rounding() {
        let c = codec(json!({"id": "bitround", "keepbits": 1}), "<f4");
        // 1.25 = 1.01b: a tie at one kept bit, rounds to even (1.0); 1.75 = 1.11b rounds up to 2.0
        assert_eq!(f32s(c.as_ref(), &[1.25, 1.75, 1.5, -1.75]), [
            1.0f32.to_bits(),
            2.0f32.to_bits(),
            1.5f32.to_bits(),
            (-2.0f32).to_bits()
        ]);
        // a mantissa carry into the exponent up to infinity; infinity stays infinity
        assert_eq!(f32s(c.as_ref(), &[f32::MAX, f32::INFINITY]), [f32::INFINITY.to_bits(); 2]);
        // keepbits 0: powers of two; 3 and 6 are ties, to the even exponent
        let c = codec(json!({"id": "bitround", "keepbits": 0}), "<f4");
        let want = [1.0f32, 2.0, 2.0, 8.0].map(f32::to_bits);
        assert_eq!(f32s(c.as_ref(), &[1.4, 1.6, 3.0, 6.0]), want);
        // the all-ones pattern wraps in numpy's int32 arithmetic
        let d = 0x7fff_ffffu32.to_le_bytes();
        let c = codec(json!({"id": "bitround", "keepbits": 1}), "<f4");
        assert_eq!(c.encode(&d).unwrap(), 0x8000_0000u32.to_le_bytes());
        // full precision: identity
        let c = codec(json!({"id": "bitround", "keepbits": 23}), "<f4");
        assert_eq!(f32s(c.as_ref(), &[0.1]), [0.1f32.to_bits()]);
    }

    #[test]
    fn widths_orders_and_errors() {
        let c = codec(json!({"id": "bitround", "keepbits": 3}), ">f8");
        let x = std::f64::consts::PI;
        let e = c.encode(&x.to_be_bytes()).unwrap();
        assert_eq!(f64::from_be_bytes(e.clone().try_into().unwrap()), 3.25);
        let mut out = [0; 8];
        c.decode_into(&e, &mut out).unwrap();
        assert_eq!(out.as_slice(), e.as_slice());
        let c = codec(json!({"id": "bitround", "keepbits": 2}), "<f2");
        let e = c.encode(&half::f16::from_f32(-0.8).to_le_bytes()).unwrap();
        assert_eq!(half::f16::from_le_bytes([e[0], e[1]]).to_f32(), -0.75);
        assert!(matches!(c.encode(&[0; 3]), Err(Error::Codec(_))));
        assert!(matches!(c.decode(&[0; 3], DecodedSize::AtMost(8)), Err(Error::Codec(_))));
        assert!(matches!(c.decode(&[0; 4], DecodedSize::Exact(2)), Err(Error::Codec(_))));
        assert_eq!(c.encode(&[]).unwrap(), Vec::<u8>::new());
        for (cfg, input) in [
            (json!({"id": "bitround", "keepbits": -1}), "<f4"),
            (json!({"id": "bitround"}), "<f4"),
            (json!({"id": "bitround", "keepbits": 1.5}), "<f4"),
        ] {
            assert!(matches!(filter(&cfg, &V2Elem::parse(input).unwrap()), Err(Error::Metadata(_))), "{cfg}");
        }
        // as in numcodecs, decoding is the identity for any type and any keepbits; encoding refuses
        // non-float elements and keepbits beyond the mantissa
        for (keepbits, input, bytes) in [(8, "|u1", vec![7u8, 200]), (1, "<i4", vec![1, 2, 3, 4]), (11, "<f2", vec![1, 2])] {
            let (c, out) = filter(&json!({"id": "bitround", "keepbits": keepbits}), &V2Elem::parse(input).unwrap()).unwrap();
            // numcodecs hands on the rounded floats as integers of their width
            let want = match input { "<f2" => "<i2", other => other };
            assert_eq!(out, V2Elem::parse(want).unwrap());
            assert_eq!(c.decode(&bytes, DecodedSize::Exact(bytes.len())).unwrap().as_ref(), bytes.as_slice());
            let mut o = vec![0; bytes.len()];
            c.decode_into(&bytes, &mut o).unwrap();
            assert_eq!(o, bytes);
            let want_unsupported = !input.contains('f');
            match c.encode(&bytes) {
                Err(Error::Unsupported(m)) if want_unsupported => assert!(m.contains("float"), "{m}"),
                Err(Error::Metadata(m)) if !want_unsupported => assert!(m.contains("keepbits 11"), "{m}"),
                r => panic!("{input} keepbits {keepbits}: {r:?}"),
            }
        }
        let (_, out) = filter(&json!({"id": "bitround", "keepbits": 1}), &V2Elem::parse(">f4").unwrap()).unwrap();
        assert_eq!(out, V2Elem::parse(">i4").unwrap());
    }
}
