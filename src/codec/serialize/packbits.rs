//! `packbits` codec (array -> bytes): packs elements of types narrower than a byte (and, optionally,
//! a bit range of wider ones) into a continuous bit stream.
//!
//! Spec: zarr-extensions registry, `codecs/packbits/README.md`.
//! v3 name: `packbits`. Configuration (all optional): `padding_encoding` `"none"` (default),
//! `"first_byte"` or `"last_byte"` (a byte holding the number of padding bits, before or after the
//! packed bits); `first_bit` (default 0) and `last_bit` (default N - 1): the bit range of each
//! component that is kept (null means the default).
//! Example: `{"name": "packbits", "configuration": {"padding_encoding": "first_byte"}}`
//!
//! Each component (2 per complex element, else 1) of N bits contributes bits `first_bit..=last_bit`;
//! element `i` takes bits `[i k, (i+1) k)` of the stream, with byte `j` holding bits `[8 j, 8 j + 8)`
//! least significant bit first, and the stream is padded with zero bits to whole bytes. Decoding puts
//! the bits back at `first_bit`, sign-extends signed integers (int2/int4 over their whole buffer
//! byte) and zero-extends the rest. N: bool 1; int2/uint2 2; int4/uint4/float4_e2m1fn 4;
//! float6_* 6; the components of complex_float4/6; and, whole, their little-endian representation,
//! int8..uint64, float32, float64, bfloat16, complex_float32, complex_float64, complex_bfloat16.

use crate::codec::{ArrayRepr, ArrayToBytesCodec, Config};
use crate::dtype::{DataType, FloatKind, SmallInt};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use crate::codec::registry::CodecEntry;
use crate::codec::Codec;

/// The registry entry: v3 `packbits`.
pub static CODEC: CodecEntry = CodecEntry::v3("packbits", |_, cfg, decoded| Ok(Codec::ArrayToBytes(Box::new(PackBitsCodec::from_v3(cfg, decoded)?))));

/// Where the padding-bit count is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Padding {
    None,
    FirstByte,
    LastByte,
}

/// The `packbits` codec, bound to a data type.
#[derive(Debug, Clone)]
pub struct PackBitsCodec {
    padding: Padding,
    first_bit: Option<u32>,
    last_bit: Option<u32>,
    /// Bits per component (N).
    n: u32,
    /// Buffer bytes per component.
    csize: usize,
    /// Components per element.
    comps: usize,
    /// Whether decoded values are sign-extended.
    signed: bool,
}

/// (N, component bytes, components, signed) for the supported types.
fn components(dt: &DataType) -> Option<(u32, usize, usize, bool)> {
    Some(match dt {
        DataType::Bool => (1, 1, 1, false),
        DataType::SmallInt(i) => (i.bits(), 1, 1, matches!(i, SmallInt::I2 | SmallInt::I4)),
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => (8 * dt.size() as u32, dt.size(), 1, true),
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 | DataType::Float32 | DataType::Float64 => {
            (8 * dt.size() as u32, dt.size(), 1, false)
        }
        DataType::ExtFloat(k @ (FloatKind::BF16 | FloatKind::E2M1Fn | FloatKind::E2M3Fn | FloatKind::E3M2Fn)) => {
            (k.format().bits, k.size(), 1, false)
        }
        DataType::ExtComplex(
            k @ (FloatKind::F32 | FloatKind::F64 | FloatKind::BF16 | FloatKind::E2M1Fn | FloatKind::E2M3Fn | FloatKind::E3M2Fn),
        ) => (k.format().bits, k.size(), 2, false),
        _ => return None,
    })
}

impl PackBitsCodec {
    /// Parses the v3 configuration for arrays of `decoded`.
    pub fn from_v3(cfg: Option<&Map<String, Value>>, decoded: &ArrayRepr) -> Result<PackBitsCodec> {
        let mut c = Config::new("packbits", cfg, &["padding_encoding", "first_bit", "last_bit"])?;
        c = Config { null_is_absent: true, ..c };
        let (n, csize, comps, signed) = components(&decoded.data_type).ok_or_else(|| {
            Error::Metadata(format!("codec 'packbits' does not support data type {}", decoded.data_type))
        })?;
        let padding = match c.choice("padding_encoding", &["none", "first_byte", "last_byte"], Some("none"))? {
            "first_byte" => Padding::FirstByte,
            "last_byte" => Padding::LastByte,
            _ => Padding::None,
        };
        let bit = |key: &str| -> Result<Option<u32>> {
            match c.get(key) {
                None => Ok(None),
                Some(_) => Ok(Some(c.int(key, 0, n as i64 - 1, None)? as u32)),
            }
        };
        let (first_bit, last_bit) = (bit("first_bit")?, bit("last_bit")?);
        if last_bit.unwrap_or(n - 1) < first_bit.unwrap_or(0) {
            return Err(c.invalid("last_bit", "is below first_bit"));
        }
        Ok(PackBitsCodec { padding, first_bit, last_bit, n, csize, comps, signed })
    }

    fn first(&self) -> u32 {
        self.first_bit.unwrap_or(0)
    }

    /// Bits kept per component (b).
    fn width(&self) -> u32 {
        self.last_bit.unwrap_or(self.n - 1) - self.first() + 1
    }

    /// (packed bytes, padding bits) for `elements` elements.
    fn packed_len(&self, elements: u64) -> (u64, u8) {
        let bits = elements * self.comps as u64 * self.width() as u64;
        let bytes = bits.div_ceil(8);
        (bytes, (bytes * 8 - bits) as u8)
    }

    fn pad_bytes(&self) -> u64 {
        if self.padding == Padding::None { 0 } else { 1 }
    }

    fn read_component(&self, b: &[u8]) -> u64 {
        let mut w = [0u8; 8];
        if cfg!(target_endian = "little") {
            w[..self.csize].copy_from_slice(b);
            u64::from_le_bytes(w)
        } else {
            w[8 - self.csize..].copy_from_slice(b);
            u64::from_be_bytes(w)
        }
    }

    fn write_component(&self, v: u64, out: &mut [u8]) {
        if cfg!(target_endian = "little") {
            out.copy_from_slice(&v.to_le_bytes()[..self.csize]);
        } else {
            out.copy_from_slice(&v.to_be_bytes()[8 - self.csize..]);
        }
    }
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

impl ArrayToBytesCodec for PackBitsCodec {
    fn encode<'a>(&self, data: Cow<'a, [u8]>, repr: &ArrayRepr) -> Result<Cow<'a, [u8]>> {
        let (packed, pad) = self.packed_len(repr.num_elements());
        let mut out = Vec::with_capacity((packed + self.pad_bytes()) as usize);
        if self.padding == Padding::FirstByte {
            out.push(pad);
        }
        let (first, width) = (self.first(), self.width());
        let m = mask(width);
        let mut acc: u128 = 0;
        let mut nacc: u32 = 0;
        for c in data.chunks_exact(self.csize) {
            let v = (self.read_component(c) >> first) & m;
            acc |= (v as u128) << nacc;
            nacc += width;
            while nacc >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                nacc -= 8;
            }
        }
        if nacc > 0 {
            out.push(acc as u8);
        }
        if self.padding == Padding::LastByte {
            out.push(pad);
        }
        Ok(Cow::Owned(out))
    }

    fn decode_into(&self, encoded: &[u8], repr: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        let (packed, pad) = self.packed_len(repr.num_elements());
        let want = packed + self.pad_bytes();
        if encoded.len() as u64 != want {
            return Err(Error::Codec(format!("packbits: stored chunk has {} bytes, expected {want}", encoded.len())));
        }
        let bits = match self.padding {
            Padding::None => encoded,
            Padding::FirstByte => &encoded[1..],
            Padding::LastByte => &encoded[..encoded.len() - 1],
        };
        let stored_pad = match self.padding {
            Padding::None => pad,
            Padding::FirstByte => encoded[0],
            Padding::LastByte => encoded[encoded.len() - 1],
        };
        if stored_pad != pad {
            return Err(Error::Codec(format!("packbits: the padding byte says {stored_pad} bits, expected {pad}")));
        }
        let (first, width) = (self.first(), self.width());
        let m = mask(width);
        let top = first + width - 1; // the sign bit of a kept signed value
        let container = 8 * self.csize as u32;
        let mut acc: u128 = 0;
        let mut nacc: u32 = 0;
        let mut src = bits.iter();
        for c in out.chunks_exact_mut(self.csize) {
            while nacc < width {
                acc |= (*src.next().expect("length checked") as u128) << nacc;
                nacc += 8;
            }
            let mut v = ((acc as u64) & m) << first;
            acc >>= width;
            nacc -= width;
            if self.signed && (v >> top) & 1 == 1 && top + 1 < container {
                v |= mask(container) & !mask(top + 1);
            }
            self.write_component(v, c);
        }
        Ok(())
    }

    fn encoded_size(&self, repr: &ArrayRepr) -> Option<u64> {
        Some(self.packed_len(repr.num_elements()).0 + self.pad_bytes())
    }

    fn to_json(&self) -> Value {
        let mut cfg = Map::new();
        let p = match self.padding {
            Padding::None => "none",
            Padding::FirstByte => "first_byte",
            Padding::LastByte => "last_byte",
        };
        cfg.insert("padding_encoding".into(), json!(p));
        if let Some(b) = self.first_bit {
            cfg.insert("first_bit".into(), json!(b));
        }
        if let Some(b) = self.last_bit {
            cfg.insert("last_bit".into(), json!(b));
        }
        json!({"name": "packbits", "configuration": cfg})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec(t: &str, cfg: Value, shape: &[u64]) -> (PackBitsCodec, ArrayRepr) {
        let dt = DataType::from_v3_json(&json!(t)).unwrap();
        let repr = ArrayRepr { shape: shape.to_vec(), fill_value: vec![0; dt.size()], data_type: dt };
        (PackBitsCodec::from_v3(cfg.as_object(), &repr).unwrap(), repr)
    }

    fn round(c: &PackBitsCodec, r: &ArrayRepr, data: &[u8]) -> Vec<u8> {
        let enc = c.encode(Cow::Borrowed(data), r).unwrap().into_owned();
        assert_eq!(enc.len() as u64, c.encoded_size(r).unwrap());
        let mut back = vec![0; data.len()];
        c.decode_into(&enc, r, &mut back).unwrap();
        assert_eq!(back, data);
        enc
    }

    #[test]
    fn hand_packed_streams() {
        // int4 [-1, 2, -8, 7, 5]: nibbles f, 2, 8, 7, 5 (low nibble first), 4 padding bits
        let (c, r) = codec("int4", json!({"padding_encoding": "first_byte"}), &[5]);
        let data = [0xff, 2, 0xf8, 7, 5];
        assert_eq!(round(&c, &r, &data), [4, 0x2f, 0x78, 0x05]);
        // uint2 [1, 2, 3, 0, 3]: bits 01 10 11 00 | 11 -> 0b00_11_10_01, 0b11
        let (c, r) = codec("uint2", json!({"padding_encoding": "last_byte"}), &[5]);
        assert_eq!(round(&c, &r, &[1, 2, 3, 0, 3]), [0b0011_1001, 0b11, 6]);
        // int2 sign-extends over the whole byte
        let (c, r) = codec("int2", json!({}), &[4]);
        assert_eq!(round(&c, &r, &[0xfe, 0xff, 0, 1]), [0b01_00_11_10]);
        // float6_e2m3fn: 6-bit patterns 0x3f, 0x01, 0x20 -> 18 bits
        let (c, r) = codec("float6_e2m3fn", json!({}), &[3]);
        assert_eq!(round(&c, &r, &[0x3f, 0x01, 0x20]), [0x7f, 0x00, 0x02]);
        // complex_float4_e2m1fn: (re, im) nibbles
        let (c, r) = codec("complex_float4_e2m1fn", json!({}), &[2]);
        assert_eq!(round(&c, &r, &[0x1, 0xa, 0xf, 0x3]), [0xa1, 0x3f]);
        // bool: one bit each, numcodecs-style padding byte first
        let (c, r) = codec("bool", json!({"padding_encoding": "first_byte"}), &[10]);
        assert_eq!(round(&c, &r, &[1, 0, 1, 1, 0, 0, 0, 1, 1, 0]), [6, 0b1000_1101, 0b01]);
    }

    #[test]
    fn bit_ranges_of_wide_types() {
        // uint16 keeping bits 4..=11: (v >> 4) & 0xff
        let (c, r) = codec("uint16", json!({"first_bit": 4, "last_bit": 11}), &[2]);
        let data: Vec<u8> = [0x0ab0u16, 0x0120].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(round(&c, &r, &data), [0xab, 0x12]);
        // int32 keeping bits 0..=11, sign-extended from bit 11
        let (c, r) = codec("int32", json!({"last_bit": 11, "first_bit": null}), &[2]);
        let data: Vec<u8> = [-3i32, 2047].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(round(&c, &r, &data), [0xfd, 0xff, 0x7f]);
        // whole float64: its little-endian bytes
        let (c, r) = codec("float64", json!({}), &[1]);
        assert_eq!(round(&c, &r, &1.5f64.to_ne_bytes()), 1.5f64.to_le_bytes());
        let (c, r) = codec("complex_bfloat16", json!({}), &[1]);
        let data: Vec<u8> = [0x3f80u16, 0xc000].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(round(&c, &r, &data), [0x80, 0x3f, 0x00, 0xc0]);
        // dropped bits decode as zero
        let (c, r) = codec("uint8", json!({"first_bit": 2}), &[1]);
        let enc = c.encode(Cow::Borrowed(&[0xff]), &r).unwrap().into_owned();
        let mut back = [0];
        c.decode_into(&enc, &r, &mut back).unwrap();
        assert_eq!(back, [0xfc]);
    }

    #[test]
    fn errors() {
        let dt = |t: &str| DataType::from_v3_json(&json!(t)).unwrap();
        let repr = |t: &str| ArrayRepr { shape: vec![3], fill_value: vec![0; dt(t).size()], data_type: dt(t) };
        let bad = |t: &str, cfg: Value| PackBitsCodec::from_v3(cfg.as_object(), &repr(t)).unwrap_err();
        assert!(matches!(bad("float16", json!({})), Error::Metadata(_)));
        assert!(matches!(bad("float8_e4m3", json!({})), Error::Metadata(_)));
        assert!(matches!(bad("int4", json!({"first_bit": 4})), Error::Metadata(_)));
        assert!(matches!(bad("int4", json!({"first_bit": 2, "last_bit": 1})), Error::Metadata(_)));
        assert!(matches!(bad("int4", json!({"padding_encoding": "middle"})), Error::Metadata(_)));
        assert!(matches!(bad("int4", json!({"x": 1})), Error::Metadata(_)));
        let (c, r) = codec("uint4", json!({"padding_encoding": "first_byte"}), &[3]);
        let mut out = [0u8; 3];
        c.decode_into(&[4, 0x21, 0x03], &r, &mut out).unwrap();
        assert_eq!(out, [1, 2, 3]);
        for bad in [&[3, 0x21, 0x03][..], &[4, 0x21], &[4, 0x21, 3, 3], &[]] {
            assert!(matches!(c.decode_into(bad, &r, &mut out), Err(Error::Codec(_))), "{bad:?}");
        }
    }
}
