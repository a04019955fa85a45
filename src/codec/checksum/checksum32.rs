//! numcodecs checksum codecs (bytes -> bytes): `crc32`, `adler32`, `crc32c`, `fletcher32`.
//!
//! numcodecs ids: `crc32`, `adler32`, `crc32c`, `fletcher32`; Zarr v3 names (zarr-python 3):
//! `numcodecs.crc32`, `numcodecs.adler32`, `numcodecs.crc32c`, `numcodecs.fletcher32`.
//! Configuration: `location` (`"start"` or `"end"`; not for `fletcher32`).
//! Example: `{"id": "crc32", "location": "end"}`, `{"name": "numcodecs.adler32", "configuration": {}}`
//!
//! Encoded: the data with the 32-bit checksum of the data, little-endian, before it (`location`
//! `"start"`, the default of `crc32` and `adler32`) or after it (`"end"`, the default of `crc32c`;
//! `fletcher32` always appends). The checksums are zlib's `crc32` (initial value 0) and `adler32`
//! (initial value 1), CRC-32C (Castagnoli), and numcodecs' `fletcher32`: the HDF5 Fletcher-32 of the
//! data read as big-endian 16-bit words (an odd last byte is the high byte of a final word), with the
//! sums folded (`(s & 0xffff) + (s >> 16)`) after every 360 words and twice at the end; the checksum is
//! `(sum2 << 16) | sum1`. Decode verifies and strips it: a mismatch is `Error::Checksum`, input
//! shorter than 4 bytes `Error::Codec`.
//!
//! Differences from numcodecs: `fletcher32` of no data is `0` (numcodecs fails on an empty buffer).

use crate::codec::numcodecs::V2Config;
use crate::codec::{BytesToBytesCodec, DecodedSize};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::borrow::Cow;
use crate::codec::numcodecs::bytes_codec;
use crate::codec::registry::CodecEntry;

/// The registry entries: numcodecs `crc32`, `adler32`, `crc32c`, `fletcher32`.
pub static CRC32: CodecEntry = entry(Sum::Crc32);
/// See [`CRC32`].
pub static ADLER32: CodecEntry = entry(Sum::Adler32);
/// See [`CRC32`].
pub static CRC32C: CodecEntry = entry(Sum::Crc32c);
/// See [`CRC32`].
pub static FLETCHER32: CodecEntry = entry(Sum::Fletcher32);

const fn entry(sum: Sum) -> CodecEntry {
    let build: fn(&V2Config, &crate::codec::numcodecs::V2Elem) -> Result<Box<dyn BytesToBytesCodec>> = match sum {
        Sum::Crc32 => |c, _| Ok(Box::new(ChecksumCodec::from_config(c, Sum::Crc32)?)),
        Sum::Adler32 => |c, _| Ok(Box::new(ChecksumCodec::from_config(c, Sum::Adler32)?)),
        Sum::Crc32c => |c, _| Ok(Box::new(ChecksumCodec::from_config(c, Sum::Crc32c)?)),
        Sum::Fletcher32 => |c, _| Ok(Box::new(ChecksumCodec::from_config(c, Sum::Fletcher32)?)),
    };
    CodecEntry::numcodecs(bytes_codec(sum.id(), build, None))
}

/// Which checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sum {
    /// zlib's CRC-32.
    Crc32,
    /// zlib's Adler-32.
    Adler32,
    /// CRC-32C (Castagnoli).
    Crc32c,
    /// HDF5's Fletcher-32 (numcodecs' variant).
    Fletcher32,
}

impl Sum {
    /// The numcodecs id.
    pub const fn id(self) -> &'static str {
        match self {
            Sum::Crc32 => "crc32",
            Sum::Adler32 => "adler32",
            Sum::Crc32c => "crc32c",
            Sum::Fletcher32 => "fletcher32",
        }
    }

    /// The checksum of `data`.
    pub fn of(self, data: &[u8]) -> u32 {
        match self {
            Sum::Crc32 => {
                let mut c = flate2::Crc::new();
                c.update(data);
                c.sum()
            }
            Sum::Adler32 => adler32(data),
            Sum::Crc32c => crc32c::crc32c(data),
            Sum::Fletcher32 => fletcher32(data),
        }
    }
}

fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    // 5552: the most bytes whose sums cannot overflow 32 bits before reducing (zlib's NMAX).
    let (mut a, mut b) = (1u32, 0u32);
    for block in data.chunks(5552) {
        for &x in block {
            a += u32::from(x);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

fn fletcher32(data: &[u8]) -> u32 {
    let fold = |s: u32| (s & 0xffff) + (s >> 16);
    let (mut s1, mut s2) = (0u32, 0u32);
    let (words, rest) = data.split_at(data.len() & !1);
    for block in words.chunks(2 * 360) {
        for w in block.chunks_exact(2) {
            s1 += (u32::from(w[0]) << 8) | u32::from(w[1]);
            s2 += s1;
        }
        s1 = fold(s1);
        s2 = fold(s2);
    }
    if let [last] = rest {
        s1 += u32::from(*last) << 8;
        s2 += s1;
        s1 = fold(s1);
        s2 = fold(s2);
    }
    s1 = fold(s1);
    s2 = fold(s2);
    (s2 << 16) | s1
}

/// A numcodecs checksum codec.
#[derive(Debug, Clone)]
pub struct ChecksumCodec {
    sum: Sum,
    /// The checksum precedes the data.
    at_start: bool,
}

impl ChecksumCodec {
    /// A codec storing the `sum` checksum before (`at_start`) or after the data.
    pub fn new(sum: Sum, at_start: bool) -> ChecksumCodec {
        ChecksumCodec { sum, at_start }
    }

    /// Builds the codec from its numcodecs configuration.
    pub fn from_config(c: &V2Config, sum: Sum) -> Result<ChecksumCodec> {
        let at_start = match sum {
            Sum::Fletcher32 => false,
            Sum::Crc32c => c.choice("location", &["start", "end"], Some("end"))? == "start",
            _ => c.choice("location", &["start", "end"], Some("start"))? == "start",
        };
        Ok(ChecksumCodec::new(sum, at_start))
    }

    /// The payload of `encoded` after verifying its checksum.
    pub fn verify<'a>(&self, encoded: &'a [u8]) -> Result<&'a [u8]> {
        let id = self.sum.id();
        if encoded.len() < 4 {
            return Err(Error::Codec(format!("{id}: {} bytes is too short for a checksum", encoded.len())));
        }
        let (stored, payload) = if self.at_start {
            let (s, p) = encoded.split_at(4);
            (s, p)
        } else {
            let (p, s) = encoded.split_at(encoded.len() - 4);
            (s, p)
        };
        let stored = u32::from_le_bytes(stored.try_into().unwrap());
        let actual = self.sum.of(payload);
        if stored != actual {
            return Err(Error::Checksum(format!("{id} mismatch: stored {stored:#010x}, computed {actual:#010x}")));
        }
        Ok(payload)
    }
}

impl BytesToBytesCodec for ChecksumCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        let sum = self.sum.of(data).to_le_bytes();
        let mut out = Vec::with_capacity(data.len() + 4);
        if self.at_start {
            out.extend_from_slice(&sum);
            out.extend_from_slice(data);
        } else {
            out.extend_from_slice(data);
            out.extend_from_slice(&sum);
        }
        Ok(out)
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        let payload = self.verify(encoded)?;
        size.check(payload.len(), self.sum.id())?;
        Ok(Cow::Borrowed(payload))
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        let payload = self.verify(encoded)?;
        DecodedSize::Exact(out.len()).check(payload.len(), self.sum.id())?;
        out.copy_from_slice(payload);
        Ok(())
    }

    fn encoded_size(&self, decoded: u64) -> Option<u64> {
        Some(decoded + 4)
    }

    fn to_json(&self) -> Value {
        match self.sum {
            Sum::Fletcher32 => json!({"id": "fletcher32"}),
            s => json!({"id": s.id(), "location": if self.at_start { "start" } else { "end" }}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::numcodecs::{compressor, V2Elem};

    fn codec(cfg: Value) -> Box<dyn BytesToBytesCodec> {
        compressor(&cfg, &V2Elem::bytes()).unwrap()
    }

    #[test]
    fn known_values() {
        // zlib.crc32(b"hello world"), zlib.adler32(b"hello world"); crc32c check value of "123456789"
        assert_eq!(Sum::Crc32.of(b"hello world"), 0x0d4a1185);
        assert_eq!(Sum::Adler32.of(b"hello world"), 0x1a0b045d);
        assert_eq!(Sum::Adler32.of(b""), 1);
        assert_eq!(Sum::Crc32c.of(b"123456789"), 0xe3069283);
        // numcodecs.Fletcher32().encode(b"abcde")[-4:] and of 1000 bytes i % 251 (several 360-word blocks)
        assert_eq!(Sum::Fletcher32.of(b"abcde"), u32::from_le_bytes([199, 41, 240, 79]));
        let long: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        assert_eq!(Sum::Fletcher32.of(&long), 0xe5e62220);
        // adler32 over more than one 5552-byte block (zlib.adler32(bytes(range(256)) * 100))
        let big: Vec<u8> = (0..25600u32).map(|i| i as u8).collect();
        assert_eq!(Sum::Adler32.of(&big), 0x747fd0e0);
    }

    #[test]
    fn framing_and_errors() {
        let data = b"some bytes to protect".to_vec();
        for (cfg, at_start) in [
            (json!({"id": "crc32"}), true),
            (json!({"id": "crc32", "location": "end"}), false),
            (json!({"id": "adler32"}), true),
            (json!({"id": "crc32c"}), false),
            (json!({"id": "crc32c", "location": "start"}), true),
            (json!({"id": "fletcher32"}), false),
        ] {
            let c = codec(cfg.clone());
            let e = c.encode(&data).unwrap();
            assert_eq!(e.len(), data.len() + 4);
            assert_eq!(c.encoded_size(data.len() as u64), Some(e.len() as u64));
            let body = if at_start { &e[4..] } else { &e[..data.len()] };
            assert_eq!(body, &data[..], "{cfg}");
            assert_eq!(c.decode(&e, DecodedSize::Exact(data.len())).unwrap().as_ref(), &data[..]);
            let mut out = vec![0; data.len()];
            c.decode_into(&e, &mut out).unwrap();
            assert_eq!(out, data);
            // any changed byte is a checksum error
            for i in [0, 3, 4, e.len() - 1] {
                let mut bad = e.clone();
                bad[i] ^= 0x10;
                assert!(matches!(c.decode(&bad, DecodedSize::AtMost(1 << 20)), Err(Error::Checksum(_))), "{cfg} {i}");
            }
            assert!(matches!(c.decode(&e[..3], DecodedSize::AtMost(10)), Err(Error::Codec(_))));
            assert!(matches!(c.decode(&e, DecodedSize::Exact(3)), Err(Error::Codec(_))));
            assert_eq!(codec(c.to_json()).encode(&data).unwrap(), e);
        }
        assert!(compressor(&json!({"id": "crc32", "location": "middle"}), &V2Elem::bytes()).is_err());
    }
}
