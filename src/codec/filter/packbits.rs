//! numcodecs `packbits` (bytes -> bytes): bools packed eight to a byte.
//!
//! numcodecs id: `packbits`. No configuration. Example: `{"id": "packbits"}`
//!
//! The bytes received are viewed as bools (`|b1`, nonzero is true), as numcodecs views them. Encoded: one header byte holding the number of
//! padding bits in the last byte (0..=7), then the bits, most significant first (`numpy.packbits`);
//! `n` bools take `1 + ceil(n / 8)` bytes (an empty input is the header `[0]`). Decode unpacks and drops
//! the padding. A header above 7, a missing header, or padding without a byte to pad are
//! `Error::Codec` (numcodecs would silently drop more bits). Produces plain bytes.

use crate::codec::numcodecs::{V2Config, V2Elem};
use crate::codec::{BytesToBytesCodec, DecodedSize};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::borrow::Cow;
use crate::codec::numcodecs::{array_filter, boxed};
use crate::codec::registry::CodecEntry;

/// The registry entry: numcodecs `packbits`, v3 `numcodecs.packbits` (array -> array) (not elementwise: packs eight elements a byte).
pub static CODEC: CodecEntry = CodecEntry::numcodecs(array_filter("packbits", |c, input| boxed(PackBitsCodec::from_config(c, input)), false));

/// The numcodecs `packbits` filter.
#[derive(Debug, Clone, Default)]
pub struct PackBitsCodec;

impl PackBitsCodec {
    /// Builds the filter; returns what it produces. Whatever it receives is viewed as bools (one per
    /// byte, nonzero is true), as numcodecs views its input.
    pub fn from_config(_c: &V2Config, _input: &V2Elem) -> Result<(PackBitsCodec, V2Elem)> {
        Ok((PackBitsCodec, V2Elem::bytes()))
    }

    /// The number of bools `encoded` holds.
    fn decoded_len(encoded: &[u8]) -> Result<usize> {
        let (&pad, bits) = encoded.split_first().ok_or_else(|| Error::Codec("packbits: no header byte".into()))?;
        if pad > 7 || (pad > 0 && bits.is_empty()) {
            return Err(Error::Codec(format!("packbits: invalid padding {pad} for {} packed bytes", bits.len())));
        }
        Ok(bits.len() * 8 - pad as usize)
    }
}

impl BytesToBytesCodec for PackBitsCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        let mut out = vec![0u8; 1 + data.len().div_ceil(8)];
        out[0] = ((8 - data.len() % 8) % 8) as u8;
        for (o, chunk) in out[1..].iter_mut().zip(data.chunks(8)) {
            *o = chunk.iter().enumerate().fold(0u8, |acc, (i, &b)| acc | (((b != 0) as u8) << (7 - i)));
        }
        Ok(out)
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        let n = Self::decoded_len(encoded)?;
        size.check(n, "packbits")?;
        let mut out = crate::error::try_alloc(n)?;
        self.decode_into(encoded, &mut out)?;
        Ok(Cow::Owned(out))
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        let n = Self::decoded_len(encoded)?;
        super::check_out(out, n, "packbits")?;
        for (chunk, &byte) in out.chunks_mut(8).zip(&encoded[1..]) {
            for (i, o) in chunk.iter_mut().enumerate() {
                *o = (byte >> (7 - i)) & 1;
            }
        }
        Ok(())
    }

    fn encoded_size(&self, decoded: u64) -> Option<u64> {
        Some(1 + decoded.div_ceil(8))
    }

    fn to_json(&self) -> Value {
        json!({"id": "packbits"})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::numcodecs::filter;

    fn codec() -> Box<dyn BytesToBytesCodec> {
        filter(&json!({"id": "packbits"}), &V2Elem::parse("|b1").unwrap()).unwrap().0
    }

    #[test]
    fn known_values() {
        let c = codec();
        // numcodecs' docstring: [True, False, False, True] -> [4, 144]
        assert_eq!(c.encode(&[1, 0, 0, 1]).unwrap(), [4, 144]);
        assert_eq!(c.encode(&[]).unwrap(), [0]);
        assert_eq!(c.encode(&[1; 8]).unwrap(), [0, 255]);
        assert_eq!(c.encode(&[1; 9]).unwrap(), [7, 255, 128]);
        for n in 0..40usize {
            let x: Vec<u8> = (0..n).map(|i| ((i * 7 + i / 3) % 3 == 0) as u8).collect();
            let e = c.encode(&x).unwrap();
            assert_eq!(c.encoded_size(n as u64), Some(e.len() as u64));
            let mut out = vec![9; n];
            c.decode_into(&e, &mut out).unwrap();
            assert_eq!(out, x);
            assert_eq!(c.decode(&e, DecodedSize::AtMost(100)).unwrap().as_ref(), x.as_slice());
        }
    }

    #[test]
    fn corrupt_and_config() {
        let c = codec();
        for bad in [&[][..], &[8, 0], &[3], &[255, 1, 2]] {
            assert!(matches!(c.decode(bad, DecodedSize::AtMost(100)), Err(Error::Codec(_))), "{bad:?}");
        }
        let mut out = [0; 4];
        assert!(matches!(c.decode_into(&[0, 1], &mut out), Err(Error::Codec(_))));
        assert!(matches!(c.decode(&[0, 1], DecodedSize::Exact(4)), Err(Error::Codec(_))));
        // any bytes are viewed as bools, as numcodecs views them
        let (u, _) = filter(&json!({"id": "packbits"}), &V2Elem::parse("<i2").unwrap()).unwrap();
        assert_eq!(u.encode(&[1, 0, 0, 2]).unwrap(), [4, 0b1001_0000]);
        assert_eq!(filter(&json!({"id": "packbits"}), &V2Elem::parse("|b1").unwrap()).unwrap().1, V2Elem::bytes());
    }
}
