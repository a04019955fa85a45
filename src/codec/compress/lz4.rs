//! numcodecs `lz4` (bytes -> bytes): a 4-byte little-endian decoded size, then one raw LZ4 *block*
//! (not an LZ4 frame), compressed with `LZ4_compress_fast` (liblz4 through `lz4-sys`).
//!
//! numcodecs id: `lz4`. Configuration: `{"id": "lz4", "acceleration": int}` (default 1; values below 1
//! mean 1, larger values trade ratio for speed).
//! Example: `{"id": "lz4", "acceleration": 1}`
//!
//! Layout: `size: u32 LE | block`. The size is checked against the expected decoded size before
//! anything is decompressed; a block must decode to exactly `size` bytes. numcodecs writes an empty
//! input as the header `0` followed by the one-byte empty block `00`; a bare 4-byte header of `0` is
//! also read as empty.

use crate::codec::{BytesToBytesCodec, DecodedSize};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::os::raw::{c_char, c_int};
use crate::codec::numcodecs::bytes_codec;
use crate::codec::registry::CodecEntry;

/// The registry entry: numcodecs `lz4` (default acceleration 1).
pub static CODEC: CodecEntry = CodecEntry {
    numcodecs: bytes_codec(
        "lz4",
        |c, _| Ok(Box::new(Lz4Codec::new(c.int("acceleration", i64::from(i32::MIN), i64::from(i32::MAX), Some(1))? as i32))),
        None,
    ),
    ..CodecEntry::NONE
};

/// The numcodecs `lz4` codec.
#[derive(Debug, Clone)]
pub struct Lz4Codec {
    acceleration: i32,
}

/// liblz4's `LZ4_MAX_INPUT_SIZE`: the largest block it compresses.
const LZ4_MAX_INPUT_SIZE: usize = 0x7E00_0000;

impl Lz4Codec {
    /// A codec compressing with `acceleration` (liblz4 treats values below 1 as 1).
    pub fn new(acceleration: i32) -> Lz4Codec {
        Lz4Codec { acceleration }
    }
}

fn corrupt(why: &str) -> Error {
    Error::Codec(format!("lz4: {why}"))
}

/// Splits a stored chunk into its announced decoded size and its block.
fn split_header(encoded: &[u8]) -> Result<(usize, &[u8])> {
    if encoded.len() < 4 {
        return Err(corrupt(&format!("{} bytes is shorter than the 4-byte size header", encoded.len())));
    }
    let size = u32::from_le_bytes(encoded[..4].try_into().unwrap()) as usize;
    if size > i32::MAX as usize {
        return Err(corrupt(&format!("header announces {size} bytes, more than an LZ4 block can hold")));
    }
    let block = &encoded[4..];
    if block.len() > i32::MAX as usize {
        return Err(corrupt("block larger than 2 GiB"));
    }
    Ok((size, block))
}

/// The header announces `n` bytes where the chunk has `expected`: nothing was decoded.
fn announced(n: usize, expected: usize) -> Error {
    corrupt(&format!("the header announces {n} decoded bytes, the chunk has {expected} (nothing decoded)"))
}

/// The most an LZ4 block of `len` bytes can decode to: a sequence of a 1-byte token and a 2-byte
/// offset copies at most 4 + 15 + 255 per further length byte, so the ratio stays below 255:1 (plus
/// the final literals).
fn max_expansion(len: usize) -> u64 {
    len as u64 * 255 + 64
}

/// Fails unless a block of `block.len()` bytes can decode to `n` bytes.
fn check_expansion(n: usize, block: &[u8]) -> Result<()> {
    if n as u64 > max_expansion(block.len()) {
        return Err(corrupt(&format!(
            "the header announces {n} decoded bytes, more than a block of {} bytes can hold (nothing decoded)",
            block.len()
        )));
    }
    Ok(())
}

/// Decompresses `block` into `out`, which must be exactly the decoded size.
fn decompress_block(block: &[u8], out: &mut [u8]) -> Result<()> {
    if out.is_empty() && block.is_empty() {
        return Ok(());
    }
    // SAFETY: both pointers are valid for the lengths passed (each fits in an int, checked by the
    // callers); LZ4_decompress_safe never reads or writes outside them, whatever the input.
    let n = unsafe {
        lz4_sys::LZ4_decompress_safe(
            block.as_ptr() as *const c_char,
            out.as_mut_ptr() as *mut c_char,
            block.len() as c_int,
            out.len() as c_int,
        )
    };
    if n < 0 {
        return Err(corrupt("corrupt or truncated block"));
    }
    if n as usize != out.len() {
        return Err(corrupt(&format!("block decodes to {n} bytes, header says {}", out.len())));
    }
    Ok(())
}

impl BytesToBytesCodec for Lz4Codec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        if data.len() > LZ4_MAX_INPUT_SIZE {
            return Err(Error::Codec(format!(
                "lz4: cannot compress {} bytes in one block (at most {LZ4_MAX_INPUT_SIZE})",
                data.len()
            )));
        }
        // SAFETY: plain arithmetic on an int within LZ4_MAX_INPUT_SIZE.
        let bound = unsafe { lz4_sys::LZ4_compressBound(data.len() as c_int) } as usize;
        let mut out = Vec::new();
        crate::error::try_reserve(&mut out, 4 + bound)?;
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.resize(4 + bound, 0);
        // SAFETY: the source is valid for data.len() bytes, the destination for `bound` bytes after the
        // header; LZ4_compress_fast writes at most maxDestSize bytes.
        let n = unsafe {
            lz4_sys::LZ4_compress_fast(
                data.as_ptr() as *const c_char,
                out.as_mut_ptr().add(4) as *mut c_char,
                data.len() as c_int,
                bound as c_int,
                self.acceleration as c_int,
            )
        };
        if n <= 0 {
            return Err(Error::Internal(format!("lz4: compressing {} bytes failed", data.len())));
        }
        out.truncate(4 + n as usize);
        Ok(out)
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        let (n, block) = split_header(encoded)?;
        match size {
            DecodedSize::Exact(e) if n != e => return Err(announced(n, e)),
            DecodedSize::AtMost(m) if n > m => {
                return Err(corrupt(&format!("the header announces {n} bytes, more than the {m} allowed")))
            }
            _ => {}
        }
        check_expansion(n, block)?;
        let mut out = crate::error::try_alloc(n)?;
        decompress_block(block, &mut out)?;
        Ok(Cow::Owned(out))
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        self.check_decodable(encoded, out.len())?;
        decompress_block(&encoded[4..], out)
    }

    fn check_decodable(&self, encoded: &[u8], expected: usize) -> Result<()> {
        let (n, block) = split_header(encoded)?;
        if n != expected {
            return Err(announced(n, expected));
        }
        check_expansion(n, block)
    }

    fn to_json(&self) -> Value {
        json!({"id": "lz4", "acceleration": self.acceleration})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::numcodecs::test_vectors::ramp;
    use crate::codec::numcodecs::test_vectors::{numcodecs_decodes, vector};

    #[test]
    fn round_trips() {
        let d = ramp(6000);
        for acc in [-5, 0, 1, 4, 100, 65537, i32::MAX] {
            let c = Lz4Codec::new(acc);
            let e = c.encode(&d).unwrap();
            assert_eq!(&e[..4], &(d.len() as u32).to_le_bytes());
            if acc <= 100 {
                assert!(e.len() < d.len());
            }
            let mut out = vec![0; d.len()];
            c.decode_into(&e, &mut out).unwrap();
            assert_eq!(out, d);
            assert_eq!(&*c.decode(&e, DecodedSize::Exact(d.len())).unwrap(), &d[..]);
            assert_eq!(&*c.decode(&e, DecodedSize::AtMost(d.len())).unwrap(), &d[..]);
        }
        // incompressible and tiny inputs
        let noise: Vec<u8> = (0..3000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        for input in [&noise[..], &[7u8][..], &[][..]] {
            let c = Lz4Codec::new(1);
            let e = c.encode(input).unwrap();
            assert_eq!(&*c.decode(&e, DecodedSize::Exact(input.len())).unwrap(), input);
        }
    }

    #[test]
    fn empty_chunks() {
        let c = Lz4Codec::new(1);
        assert_eq!(c.encode(&[]).unwrap(), vec![0, 0, 0, 0, 0]);
        c.decode_into(&[0, 0, 0, 0, 0], &mut []).unwrap();
        c.decode_into(&[0, 0, 0, 0], &mut []).unwrap();
        assert!(c.decode(&[0, 0, 0, 0], DecodedSize::AtMost(10)).unwrap().is_empty());
        assert!(matches!(c.decode_into(&[0, 0, 0, 0, 0x55, 1], &mut []), Err(Error::Codec(_))));
        assert!(matches!(c.decode_into(&[0, 0, 0], &mut []), Err(Error::Codec(_))));
    }

    fn assert_codec<T: std::fmt::Debug>(r: Result<T>) -> String {
        match r {
            Err(Error::Codec(m)) => m,
            other => panic!("expected Error::Codec, got {other:?}"),
        }
    }

    #[test]
    fn sizes_and_corruption() {
        let c = Lz4Codec::new(1);
        let d = ramp(6000);
        let e = c.encode(&d).unwrap();
        // header disagrees with the expected size: refused before decompressing
        let mut out = vec![0; d.len() - 1];
        assert!(matches!(c.decode_into(&e, &mut out), Err(Error::Codec(m)) if m.contains("lz4")));
        assert!(matches!(c.decode(&e, DecodedSize::AtMost(d.len() - 1)), Err(Error::Codec(_))));
        assert!(matches!(c.decode(&e, DecodedSize::Exact(d.len() + 1)), Err(Error::Codec(_))));
        // a hostile header announcing 4 GiB - 1 is refused without allocating
        let mut big = e.clone();
        big[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(c.decode(&big, DecodedSize::AtMost(1 << 20)), Err(Error::Codec(_))));
        assert!(matches!(c.decode(&big, DecodedSize::AtMost(usize::MAX)), Err(Error::Codec(_))));
        // a header claiming 2^31-1 bytes: the message says the header claims it, nothing was decoded
        let mut claim = e.clone();
        claim[..4].copy_from_slice(&(i32::MAX as u32).to_le_bytes());
        let mut out = vec![0; d.len()];
        let m = assert_codec(c.decode_into(&claim, &mut out));
        assert!(m.contains("header announces 2147483647") && !m.contains("decoded 2147483647"), "{m}");
        let m = assert_codec(c.decode(&claim, DecodedSize::AtMost(usize::MAX)));
        assert!(m.contains("more than a block of"), "{m}");
        // header says more than the block holds, and less
        let mut more = e.clone();
        more[..4].copy_from_slice(&(d.len() as u32 + 10).to_le_bytes());
        let mut out = vec![0; d.len() + 10];
        assert!(matches!(c.decode_into(&more, &mut out), Err(Error::Codec(_))));
        let mut less = e.clone();
        less[..4].copy_from_slice(&(d.len() as u32 - 10).to_le_bytes());
        let mut out = vec![0; d.len() - 10];
        assert!(matches!(c.decode_into(&less, &mut out), Err(Error::Codec(_))));
        // truncations and corruptions never panic; truncations always fail
        let mut out = vec![0; d.len()];
        for cut in 0..e.len() {
            assert!(matches!(c.decode_into(&e[..cut], &mut out), Err(Error::Codec(_))), "cut {cut}");
        }
        for i in 4..e.len() {
            let mut bad = e.clone();
            bad[i] ^= 0xA5;
            let _ = c.decode_into(&bad, &mut out);
            let _ = c.decode(&bad, DecodedSize::AtMost(d.len()));
        }
    }

    #[test]
    fn registry_and_json() {
        let input = crate::codec::numcodecs::V2Elem::bytes();
        let c = crate::codec::numcodecs::compressor(&json!({"id": "lz4", "acceleration": 3}), &input).unwrap();
        assert_eq!(c.to_json(), json!({"id": "lz4", "acceleration": 3}));
        let c = crate::codec::numcodecs::compressor(&json!({"id": "lz4"}), &input).unwrap();
        assert_eq!(c.to_json(), json!({"id": "lz4", "acceleration": 1}));
        assert!(matches!(
            crate::codec::numcodecs::compressor(&json!({"id": "lz4", "acceleration": "x"}), &input),
            Err(Error::Metadata(_))
        ));
    }

    /// Vectors written by numcodecs itself (tools/numcodecs_vectors.py).
    #[test]
    fn numcodecs_vectors() {
        let raw = vector!("input.bin");
        for (name, acc, e) in [("acc1", 1, vector!("lz4_acc1.bin")), ("acc10", 10, vector!("lz4_acc10.bin"))] {
            let c = Lz4Codec::new(acc);
            let mut out = vec![0; raw.len()];
            c.decode_into(e, &mut out).unwrap();
            assert_eq!(out, raw, "{name}");
            // same liblz4, same block: encoding reproduces numcodecs' bytes
            assert_eq!(c.encode(raw).unwrap(), e, "{name}");
        }
        assert!(Lz4Codec::new(1).decode(vector!("lz4_empty.bin"), DecodedSize::Exact(0)).unwrap().is_empty());
    }

    /// libzarr -> numcodecs. Skipped (passes, with a note) when python3 or numcodecs is missing.
    #[test]
    fn numcodecs_decodes_ours() {
        let d = ramp(6000);
        let cases: Vec<_> = [1, 10, 1000]
            .into_iter()
            .map(|acc| (json!({"id": "lz4", "acceleration": acc}), Lz4Codec::new(acc).encode(&d).unwrap()))
            .collect();
        numcodecs_decodes(&cases, &d);
        numcodecs_decodes(&[(json!({"id": "lz4", "acceleration": 1}), Lz4Codec::new(1).encode(&d[..1]).unwrap())], &d[..1]);
    }
}
