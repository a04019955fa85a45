//! `gzip` codec (bytes -> bytes): RFC 1952 gzip streams (deflate via zlib-rs).
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/gzip/index.html>
//! v3 name: `gzip`; numcodecs id: `gzip`. Configuration: `{"level": 0..9}`.
//! Example: `{"name": "gzip", "configuration": {"level": 5}}`
//!
//! Decoding accepts concatenated gzip members (as Python's `gzip.decompress` does) and decodes
//! straight into the destination when the decoded size is known.

use super::{BytesToBytesCodec, Config, DecodedSize};
use crate::error::{Error, Result};
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use serde_json::{json, Map, Value};
use std::borrow::Cow;

/// The `gzip` codec.
#[derive(Debug, Clone)]
pub struct GzipCodec {
    level: u32,
}

impl GzipCodec {
    /// A codec compressing at `level` (0-9).
    pub fn new(level: u32) -> Result<GzipCodec> {
        if level > 9 {
            return Err(Error::Metadata(format!("codec 'gzip': level {level} is not in 0..9")));
        }
        Ok(GzipCodec { level })
    }

    /// Parses the v3 configuration.
    pub fn from_v3(cfg: Option<&Map<String, Value>>) -> Result<GzipCodec> {
        let c = Config::new("gzip", cfg, &["level"])?;
        GzipCodec::new(c.int("level", 0, 9, None)? as u32)
    }
}

/// Which deflate framing a stream uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// RFC 1952 gzip (members may be concatenated).
    Gzip,
    /// RFC 1950 zlib.
    Zlib,
}

fn new_inflater(framing: Framing) -> Decompress {
    match framing {
        Framing::Gzip => Decompress::new_gzip(15),
        Framing::Zlib => Decompress::new(true),
    }
}

/// Inflates `encoded` into `out`, returning the number of bytes written. With `exact`, the stream must
/// produce exactly `out.len()` bytes; otherwise it may produce fewer (more is always an error).
fn inflate(framing: Framing, name: &str, encoded: &[u8], out: &mut [u8], exact: bool) -> Result<usize> {
    let corrupt = |why: String| Error::Codec(format!("{name}: {why}"));
    let mut d = new_inflater(framing);
    let (mut ip, mut op) = (0usize, 0usize);
    loop {
        let (in0, out0) = (d.total_in(), d.total_out());
        let status = d
            .decompress(&encoded[ip..], &mut out[op..], FlushDecompress::Finish)
            .map_err(|e| corrupt(format!("corrupt stream ({e})")))?;
        ip += (d.total_in() - in0) as usize;
        op += (d.total_out() - out0) as usize;
        match status {
            Status::StreamEnd => {
                let rest = &encoded[ip..];
                if framing == Framing::Gzip && rest.len() >= 2 && rest[0] == 0x1f && rest[1] == 0x8b {
                    d = new_inflater(framing); // next member
                    continue;
                }
                if !rest.iter().all(|&b| b == 0) {
                    return Err(corrupt(format!("{} bytes of trailing garbage", rest.len())));
                }
                if exact && op != out.len() {
                    return Err(corrupt(format!("decoded {op} bytes, expected {}", out.len())));
                }
                return Ok(op);
            }
            Status::Ok | Status::BufError => {
                if op == out.len() {
                    // Output full but the stream has not ended: is there more data?
                    let mut probe = [0u8; 1];
                    let (in1, out1) = (d.total_in(), d.total_out());
                    let st = d
                        .decompress(&encoded[ip..], &mut probe, FlushDecompress::Finish)
                        .map_err(|e| corrupt(format!("corrupt stream ({e})")))?;
                    ip += (d.total_in() - in1) as usize;
                    if d.total_out() > out1 {
                        return Err(corrupt(format!("stream decodes to more than {} bytes", out.len())));
                    }
                    if st == Status::StreamEnd {
                        continue_after_end(framing, name, &encoded[ip..])?;
                        return Ok(op);
                    }
                    if d.total_in() == in1 {
                        return Err(corrupt("truncated stream".into()));
                    }
                    continue;
                }
                if d.total_in() == in0 && d.total_out() == out0 {
                    return Err(corrupt(format!("truncated stream (decoded {op} bytes)")));
                }
            }
        }
    }
}

fn continue_after_end(framing: Framing, name: &str, rest: &[u8]) -> Result<()> {
    if rest.iter().all(|&b| b == 0) {
        return Ok(());
    }
    if framing == Framing::Gzip && rest.len() >= 2 && rest[0] == 0x1f && rest[1] == 0x8b {
        // Another member after the output is already full: it must decode to nothing.
        let mut probe = [0u8; 1];
        let n = inflate(framing, name, rest, &mut probe, false)?;
        if n == 0 {
            return Ok(());
        }
        return Err(Error::Codec(format!("{name}: stream decodes to more bytes than expected")));
    }
    Err(Error::Codec(format!("{name}: {} bytes of trailing garbage", rest.len())))
}

/// Decodes a deflate stream with the given framing, checking the decoded size.
pub fn inflate_to_vec(framing: Framing, name: &str, encoded: &[u8], size: DecodedSize) -> Result<Vec<u8>> {
    match size {
        DecodedSize::Exact(n) => {
            let mut out = crate::error::try_alloc(n)?;
            inflate(framing, name, encoded, &mut out, true)?;
            Ok(out)
        }
        DecodedSize::AtMost(max) => {
            // Grow geometrically up to the bound.
            let mut cap = encoded.len().saturating_mul(4).max(4096).min(max);
            loop {
                let mut out = crate::error::try_alloc(cap)?;
                match inflate(framing, name, encoded, &mut out, false) {
                    Ok(n) => {
                        out.truncate(n);
                        return Ok(out);
                    }
                    Err(e) if cap < max && e.message().contains("more than") => cap = (cap * 4).min(max),
                    Err(e) => return Err(e),
                }
            }
        }
    }
}

/// Compresses `data` with deflate at `level` in the given framing.
pub fn deflate(framing: Framing, level: u32, data: &[u8]) -> Result<Vec<u8>> {
    let mut c = match framing {
        Framing::Gzip => Compress::new_gzip(Compression::new(level), 15),
        Framing::Zlib => Compress::new(Compression::new(level), true),
    };
    let mut out = Vec::with_capacity(data.len() + data.len() / 1000 + 64);
    loop {
        let before = c.total_in() as usize;
        let st = c
            .compress_vec(&data[before..], &mut out, FlushCompress::Finish)
            .map_err(|e| Error::Internal(format!("deflate failed: {e}")))?;
        if st == Status::StreamEnd {
            return Ok(out);
        }
        out.reserve(out.capacity().max(4096));
    }
}

impl BytesToBytesCodec for GzipCodec {
    fn encode(&self, data: Vec<u8>) -> Result<Vec<u8>> {
        deflate(Framing::Gzip, self.level, &data)
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        inflate_to_vec(Framing::Gzip, "gzip", encoded, size).map(Cow::Owned)
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        inflate(Framing::Gzip, "gzip", encoded, out, true).map(|_| ())
    }

    fn to_json(&self) -> Value {
        json!({"name": "gzip", "configuration": {"level": self.level}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> Vec<u8> {
        (0..10000u32).flat_map(|i| (i / 7).to_le_bytes()).collect()
    }

    #[test]
    fn round_trip_and_sizes() {
        let c = GzipCodec::new(5).unwrap();
        let d = data();
        let e = c.encode(d.clone()).unwrap();
        assert!(e.len() < d.len());
        assert_eq!(&e[..2], &[0x1f, 0x8b]);
        let mut out = vec![0; d.len()];
        c.decode_into(&e, &mut out).unwrap();
        assert_eq!(out, d);
        assert_eq!(c.decode(&e, DecodedSize::AtMost(1 << 20)).unwrap().as_ref(), &d[..]);
        // wrong expected sizes
        let mut small = vec![0; d.len() - 1];
        assert!(matches!(c.decode_into(&e, &mut small), Err(Error::Codec(_))));
        let mut big = vec![0; d.len() + 1];
        assert!(matches!(c.decode_into(&e, &mut big), Err(Error::Codec(_))));
        assert!(c.decode(&e, DecodedSize::AtMost(100)).is_err());
    }

    #[test]
    fn corrupt_and_truncated() {
        let c = GzipCodec::new(1).unwrap();
        let d = data();
        let e = c.encode(d.clone()).unwrap();
        let mut out = vec![0; d.len()];
        assert!(matches!(c.decode_into(&e[..e.len() / 2], &mut out), Err(Error::Codec(_))));
        assert!(matches!(c.decode_into(&e[..5], &mut out), Err(Error::Codec(_))));
        assert!(matches!(c.decode_into(b"not gzip at all", &mut out), Err(Error::Codec(_))));
        let mut bad = e.clone();
        let n = bad.len();
        bad[n - 6] ^= 0xff; // CRC32 trailer
        assert!(matches!(c.decode_into(&bad, &mut out), Err(Error::Codec(_))));
        let mut trailing = e.clone();
        trailing.extend_from_slice(b"xyz");
        assert!(c.decode_into(&trailing, &mut out).is_err());
    }

    #[test]
    fn multi_member() {
        let c = GzipCodec::new(9).unwrap();
        let mut e = c.encode(b"hello ".to_vec()).unwrap();
        e.extend(c.encode(b"world".to_vec()).unwrap());
        let mut out = vec![0; 11];
        c.decode_into(&e, &mut out).unwrap();
        assert_eq!(&out, b"hello world");
    }

    #[test]
    fn config() {
        assert!(GzipCodec::from_v3(None).is_err());
        assert!(GzipCodec::from_v3(serde_json::json!({"level": 10}).as_object()).is_err());
        assert!(GzipCodec::from_v3(serde_json::json!({"level": 1, "x": 0}).as_object()).is_err());
        assert_eq!(GzipCodec::from_v3(serde_json::json!({"level": 0}).as_object()).unwrap().level, 0);
    }
}
