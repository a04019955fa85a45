//! `bitround` codec (array -> array, lossy): keeps `keepbits` significant bits of each value.
//!
//! Spec: zarr-extensions `codecs/bitround`. v3 name: `bitround` (`numcodecs.bitround`, numcodecs'
//! float-only filter, is `bitround_numcodecs`; both round with [`round_in_place`]). Configuration: `{"keepbits": integer >= 0}`.
//! Example: `{"name": "bitround", "configuration": {"keepbits": 10}}`
//!
//! Floats (float16/32/64, and each part of complex64/128): the mantissa is rounded to `keepbits` bits,
//! to nearest with ties to even, on the bit pattern exactly as numcodecs `bitround` does (the spec's
//! compatibility promise): with `m = mantissa - keepbits`, `b += ((b >> m) & 1) + (1 << (m - 1)) - 1`
//! (signed, wrapping), then the low `m` bits are cleared. `keepbits` at or above the mantissa width
//! changes nothing. Integers (signed and unsigned, taken as their unsigned bit pattern): with
//! `w` = the bit width minus the leading zero bits, values with `w > keepbits` are rounded the same
//! way with `m = w - keepbits`, the addition saturating at the all-ones pattern (so 255 as uint8 with
//! keepbits 3 becomes 224); this is the spec's sample data. Decoding is the identity. Other data
//! types are `Error::Unsupported`.

use crate::codec::{ArrayRepr, ArrayToArrayCodec, Config};
use crate::dtype::DataType;
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use crate::codec::registry::CodecEntry;
use crate::codec::Codec;

/// The registry entry: v3 `bitround`.
pub static CODEC: CodecEntry = CodecEntry::v3("bitround", |_, cfg, decoded| Ok(Codec::ArrayToArray(Box::new(BitroundCodec::from_v3(cfg, decoded)?))));

/// The `bitround` codec.
#[derive(Debug, Clone)]
pub struct BitroundCodec {
    keepbits: u32,
    /// Bytes per rounded value (2, 4 or 8; 1 for 8-bit integers).
    size: usize,
    /// Mantissa bits for floats; `None` for integers.
    mantissa: Option<u32>,
}

impl BitroundCodec {
    /// Parses the v3 configuration for chunks of `decoded`.
    pub fn from_v3(cfg: Option<&Map<String, Value>>, decoded: &ArrayRepr) -> Result<BitroundCodec> {
        let c = Config::new("bitround", cfg, &["keepbits"])?;
        let keepbits = c.int("keepbits", 0, i64::from(u32::MAX), None)? as u32;
        let (size, mantissa) = match decoded.data_type {
            DataType::Float16 => (2, Some(10)),
            DataType::Float32 | DataType::Complex64 => (4, Some(23)),
            DataType::Float64 | DataType::Complex128 => (8, Some(52)),
            DataType::Int8 | DataType::UInt8 => (1, None),
            DataType::Int16 | DataType::UInt16 => (2, None),
            DataType::Int32 | DataType::UInt32 => (4, None),
            DataType::Int64 | DataType::UInt64 => (8, None),
            ref t => return Err(Error::Unsupported(format!("codec 'bitround' does not support data type {t}"))),
        };
        Ok(BitroundCodec { keepbits, size, mantissa })
    }
}

/// Rounds one value's bit pattern `b` of `bits` bits (zero-extended to 64): floats (`mantissa` =
/// their mantissa width) on the mantissa, integers (`None`) on their significant bits, as the module
/// documentation says.
#[inline]
fn round(b: u64, bits: u32, mantissa: Option<u32>, keepbits: u32) -> u64 {
    let all = u64::MAX >> (64 - bits);
    match mantissa {
        Some(mant) => {
            if keepbits >= mant {
                return b;
            }
            let m = mant - keepbits;
            // numcodecs: signed arithmetic in the element's width, wrapping.
            let add = ((b >> m) & 1) + (1u64 << (m - 1)) - 1;
            (b.wrapping_add(add) & all) & (all << m)
        }
        None => {
            let w = bits - (b.leading_zeros() - (64 - bits));
            if keepbits >= w {
                return b;
            }
            let m = w - keepbits;
            let add = ((b >> m) & 1) + (1u64 << (m - 1)) - 1;
            b.saturating_add(add).min(all) & (all << m)
        }
    }
}

/// The bitround kernel (the v3 codec's and the numcodecs filter's): rounds every `size`-byte element
/// (1, 2, 4 or 8) of `data` in place, stored big-endian if `big`, little-endian otherwise; `mantissa`
/// as for [`round`].
pub fn round_in_place(data: &mut [u8], size: usize, mantissa: Option<u32>, keepbits: u32, big: bool) {
    let bits = 8 * size as u32;
    // A loop per word width and byte order (bitround works on bit patterns), not a data type -> element
    // type dispatch: that mapping is `with_data_type!`'s alone.
    macro_rules! each {
        ($t:ty, $from:ident, $to:ident) => {
            for e in data.chunks_exact_mut(size) {
                let v = <$t>::$from(e.try_into().unwrap());
                e.copy_from_slice(&(round(v as u64, bits, mantissa, keepbits) as $t).$to());
            }
        };
    }
    match (size, big) {
        (1, _) => each!(u8, from_le_bytes, to_le_bytes),
        (2, false) => each!(u16, from_le_bytes, to_le_bytes),
        (2, true) => each!(u16, from_be_bytes, to_be_bytes),
        (4, false) => each!(u32, from_le_bytes, to_le_bytes),
        (4, true) => each!(u32, from_be_bytes, to_be_bytes),
        (_, false) => each!(u64, from_le_bytes, to_le_bytes),
        (_, true) => each!(u64, from_be_bytes, to_be_bytes),
    }
}

impl ArrayToArrayCodec for BitroundCodec {
    fn encoded_repr(&self, decoded: &ArrayRepr) -> Result<ArrayRepr> {
        Ok(decoded.clone())
    }

    fn encode(&self, data: &[u8], _decoded: &ArrayRepr) -> Result<Vec<u8>> {
        let mut out = data.to_vec();
        round_in_place(&mut out, self.size, self.mantissa, self.keepbits, cfg!(target_endian = "big"));
        Ok(out)
    }

    fn decode_into(&self, encoded: &[u8], _decoded: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        super::copy_unchanged(encoded, out, "bitround")
    }

    fn to_json(&self) -> Value {
        json!({"name": "bitround", "configuration": {"keepbits": self.keepbits}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec(dt: DataType, keepbits: u32) -> (BitroundCodec, ArrayRepr) {
        let r = ArrayRepr { shape: vec![1], fill_value: vec![0; dt.size()], data_type: dt };
        (BitroundCodec::from_v3(json!({"keepbits": keepbits}).as_object(), &r).unwrap(), r)
    }

    #[test]
    fn spec_sample_values() {
        // zarr-extensions codecs/bitround/sample_data README, keepbits 3
        let (c, r) = codec(DataType::UInt8, 3);
        let x = [0u8, 1, 10, 11, 100, 123, 200, 208, 209, 255];
        assert_eq!(c.encode(&x, &r).unwrap(), [0, 1, 10, 12, 96, 128, 192, 192, 224, 224]);
        let (c, r) = codec(DataType::Float32, 3);
        let x = [0.0f32, 0.1, 1.2, 12.3, 123.4, 1234.5, f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
        let want = [0.0f32, 0.1015625, 1.25, 12.0, 120.0, 1280.0];
        let enc = c.encode(&x.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<_>>(), &r).unwrap();
        let got: Vec<f32> = enc.chunks(4).map(|b| f32::from_ne_bytes(b.try_into().unwrap())).collect();
        assert_eq!(&got[..6], &want);
        assert!(got[6].is_nan());
        assert_eq!(&got[7..], &[f32::INFINITY, f32::NEG_INFINITY]);
        // uint32 and more keepbits than bits
        let (c, r) = codec(DataType::UInt32, 3);
        let x = [0u32, 1024, 1280, 1664, 1685, 123145182, u32::MAX];
        let enc = c.encode(&x.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<_>>(), &r).unwrap();
        let got: Vec<u32> = enc.chunks(4).map(|b| u32::from_ne_bytes(b.try_into().unwrap())).collect();
        assert_eq!(got, [0, 1024, 1280, 1536, 1792, 117440512, 3758096384]);
        let (c, r) = codec(DataType::Float64, 60);
        assert_eq!(c.encode(&1.2345f64.to_ne_bytes(), &r).unwrap(), 1.2345f64.to_ne_bytes());
        let r = ArrayRepr { shape: vec![1], fill_value: vec![0], data_type: DataType::Bool };
        assert!(matches!(BitroundCodec::from_v3(json!({"keepbits": 3}).as_object(), &r), Err(Error::Unsupported(_))));
        assert!(BitroundCodec::from_v3(json!({"keepbits": -1}).as_object(), &codec(DataType::Float32, 1).1).is_err());
    }
}
