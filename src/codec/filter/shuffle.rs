//! numcodecs `shuffle` (bytes -> bytes): the bytes of all elements grouped by byte position.
//!
//! numcodecs id: `shuffle`. Configuration: `elementsize` (integer, default 4).
//! Example: `{"id": "shuffle", "elementsize": 4}`
//!
//! For `n` elements of `elementsize` bytes, encoded byte `j * n + i` is byte `j` of element `i`;
//! decode is the inverse. `elementsize` is independent of the elements received (numcodecs shuffles
//! whatever buffer it gets); an `elementsize` of 1 or less (0 and negative included, as numcodecs
//! accepts them) is a plain copy. Like numcodecs, a buffer whose length is not a multiple of
//! `elementsize` is refused in both directions (`Error::Codec`; numcodecs raises ValueError) — there
//! is no trailing partial element. numcodecs returns a `uint8` array, so what follows sees plain bytes
//! (blosc's typesize 1).

use crate::codec::numcodecs::{V2Config, V2Elem};
use crate::codec::{BytesToBytesCodec, DecodedSize};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::borrow::Cow;
use crate::codec::numcodecs::boxed;
use crate::codec::registry::{CodecEntry, Numcodecs, UnderV3, V2Build};

/// The registry entry: numcodecs `shuffle`; under v3 `numcodecs.shuffle` is bytes -> bytes, and
/// `elementsize` defaults to the array's element size there (as zarr-python fills it in).
pub static CODEC: CodecEntry = CodecEntry {
    numcodecs: Some(Numcodecs {
        id: "shuffle",
        build: V2Build::Filter(|c, input| boxed(ShuffleCodec::from_config(c, input))),
        under_v3: Some(UnderV3::BytesToBytes),
        v3_defaults: Some(|v2, decoded| {
            if v2.get("elementsize").is_none_or(Value::is_null) {
                v2["elementsize"] = Value::from(decoded.data_type.size());
            }
        }),
        elementwise: false,
        v1: None,
    }),
    ..CodecEntry::NONE
};

/// The numcodecs `shuffle` filter.
#[derive(Debug, Clone)]
pub struct ShuffleCodec {
    /// As configured (for `to_json`).
    elementsize: i64,
}

impl ShuffleCodec {
    /// A codec shuffling `elementsize`-byte elements.
    pub fn new(elementsize: i64) -> ShuffleCodec {
        ShuffleCodec { elementsize }
    }

    /// Builds the filter from its configuration; returns what it produces (plain bytes).
    pub fn from_config(c: &V2Config, _input: &V2Elem) -> Result<(ShuffleCodec, V2Elem)> {
        Ok((ShuffleCodec::new(c.int("elementsize", i64::MIN, i64::MAX, Some(4))?), V2Elem::bytes()))
    }

    /// The element size when shuffling applies (`None`: a copy).
    fn size(&self) -> Option<usize> {
        (self.elementsize > 1).then(|| usize::try_from(self.elementsize).unwrap_or(usize::MAX))
    }

    fn check(&self, len: usize) -> Result<()> {
        match self.size() {
            Some(e) if !len.is_multiple_of(e) => Err(Error::Codec(format!(
                "shuffle: a buffer of {len} bytes is not a whole number of {e}-byte elements"
            ))),
            _ => Ok(()),
        }
    }
}

/// `out[j * n + i] = data[i * e + j]` (`encode`) or its inverse, for `n = data.len() / e` elements.
/// Through c-blosc's shuffle (the same transform: numcodecs' `shuffle` is blosc's byte shuffle applied
/// to the whole buffer as one block), which picks SSE2 or AVX2 code at run time: several times faster
/// than a byte-at-a-time loop, and the unshuffle is on every read of an HDF5 shuffle+deflate chunk.
fn shuffle(data: &[u8], e: usize, out: &mut [u8], encode: bool) {
    assert_eq!(data.len(), out.len());
    if data.len() / e == 0 {
        out.copy_from_slice(data);
        return; // (and `e` may be huge)
    }
    // SAFETY: both buffers hold `data.len()` bytes; blosc reads `data` and writes `out` within that
    // length (the bytes after the last whole element are copied as they are).
    unsafe {
        if encode {
            blosc_internal_shuffle(e, data.len(), data.as_ptr(), out.as_mut_ptr());
        } else {
            blosc_internal_unshuffle(e, data.len(), data.as_ptr(), out.as_mut_ptr());
        }
    }
}

// c-blosc's (blosc-src, vendored and linked statically for the `blosc` codec) byte shuffle,
// blosc/shuffle.h: `bytesoftype`-byte elements of a block of `blocksize` bytes.
extern "C" {
    fn blosc_internal_shuffle(bytesoftype: usize, blocksize: usize, src: *const u8, dest: *mut u8);
    fn blosc_internal_unshuffle(bytesoftype: usize, blocksize: usize, src: *const u8, dest: *mut u8);
}

impl BytesToBytesCodec for ShuffleCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        self.check(data.len())?;
        let mut out = vec![0; data.len()];
        match self.size() {
            Some(e) => shuffle(data, e, &mut out, true),
            None => out.copy_from_slice(data),
        }
        Ok(out)
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        self.check(encoded.len())?;
        size.check(encoded.len(), "shuffle")?;
        if self.size().is_none() {
            return Ok(Cow::Borrowed(encoded));
        }
        let mut out = vec![0; encoded.len()];
        self.decode_into(encoded, &mut out)?;
        Ok(Cow::Owned(out))
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        self.check(encoded.len())?;
        super::check_out(out, encoded.len(), "shuffle")?;
        match self.size() {
            Some(e) => shuffle(encoded, e, out, false),
            None => out.copy_from_slice(encoded),
        }
        Ok(())
    }

    fn encoded_size(&self, decoded: u64) -> Option<u64> {
        Some(decoded)
    }

    fn to_json(&self) -> Value {
        json!({"id": "shuffle", "elementsize": self.elementsize})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::numcodecs::filter;

    fn codec(cfg: Value) -> Box<dyn BytesToBytesCodec> {
        filter(&cfg, &V2Elem::parse("<i4").unwrap()).unwrap().0
    }

    #[test]
    fn known_values() {
        let d: Vec<u8> = (0..12).collect();
        let c = codec(json!({"id": "shuffle"}));
        assert_eq!(c.encode(&d).unwrap(), [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
        let c3 = codec(json!({"id": "shuffle", "elementsize": 3}));
        assert_eq!(c3.encode(&d).unwrap(), [0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11]);
        for c in [&c, &c3] {
            let e = c.encode(&d).unwrap();
            let mut out = vec![0; 12];
            c.decode_into(&e, &mut out).unwrap();
            assert_eq!(out, d);
            assert_eq!(c.decode(&e, DecodedSize::Exact(12)).unwrap().as_ref(), d.as_slice());
        }
        for es in [0, 1, -3] {
            let c = codec(json!({"id": "shuffle", "elementsize": es}));
            assert_eq!(c.encode(&d[..10]).unwrap(), &d[..10]);
            assert_eq!(c.decode(&d[..10], DecodedSize::Exact(10)).unwrap().as_ref(), &d[..10]);
        }
        assert_eq!(c.encode(&[]).unwrap(), Vec::<u8>::new());
        // a single element is unchanged
        assert_eq!(codec(json!({"id": "shuffle", "elementsize": 12})).encode(&d).unwrap(), d);
        assert_eq!(c.to_json(), json!({"id": "shuffle", "elementsize": 4}));
    }

    /// The definition, byte by byte.
    fn plain(data: &[u8], e: usize, encode: bool) -> Vec<u8> {
        let n = data.len() / e;
        let mut out = data.to_vec();
        for i in 0..n {
            for j in 0..e {
                if encode {
                    out[j * n + i] = data[i * e + j];
                } else {
                    out[i * e + j] = data[j * n + i];
                }
            }
        }
        out
    }

    #[test]
    fn vectorized_equals_the_definition() {
        let data: Vec<u8> = (0..140_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        for e in [2usize, 3, 4, 5, 7, 8, 12, 16, 17, 32] {
            for len in [e, 16 * e, 16 * e + e, 64 * e - e, 1000 * e, 4099 * e, data.len() / e * e] {
                let d = &data[..len];
                for encode in [true, false] {
                    let mut out = vec![0; len];
                    shuffle(d, e, &mut out, encode);
                    assert_eq!(out, plain(d, e, encode), "e {e}, len {len}, encode {encode}");
                }
            }
        }
    }

    #[test]
    fn errors() {
        let c = codec(json!({"id": "shuffle", "elementsize": 4}));
        assert!(matches!(c.encode(&[0; 10]), Err(Error::Codec(_))));
        assert!(matches!(c.decode(&[0; 10], DecodedSize::AtMost(100)), Err(Error::Codec(_))));
        let mut out = [0; 8];
        assert!(matches!(c.decode_into(&[0; 12], &mut out), Err(Error::Codec(_))));
        assert!(matches!(c.decode(&[0; 12], DecodedSize::Exact(8)), Err(Error::Codec(_))));
        let huge = codec(json!({"id": "shuffle", "elementsize": i64::MAX}));
        assert!(matches!(huge.encode(&[0; 10]), Err(Error::Codec(_))));
        assert_eq!(huge.encode(&[]).unwrap(), Vec::<u8>::new());
        let input = V2Elem::parse("<i4").unwrap();
        assert!(matches!(filter(&json!({"id": "shuffle", "elementsize": "4"}), &input), Err(Error::Metadata(_))));
        assert!(matches!(filter(&json!({"id": "shuffle", "elementsize": 2.5}), &input), Err(Error::Metadata(_))));
        assert_eq!(filter(&json!({"id": "shuffle"}), &input).unwrap().1, V2Elem::bytes());
    }
}
