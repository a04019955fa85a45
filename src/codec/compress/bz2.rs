//! numcodecs `bz2` (bytes -> bytes): bzip2 streams (libbzip2 format, through the `bzip2` crate's
//! pure-Rust backend `libbz2-rs-sys`).
//!
//! numcodecs id: `bz2`. Configuration: `{"id": "bz2", "level": 1..9}` (default 1; the block size in
//! units of 100 kB).
//! Example: `{"id": "bz2", "level": 1}`
//!
//! Decoding follows Python's `bz2.decompress`, which numcodecs calls: concatenated streams decode one
//! after the other; once at least one stream has decoded, trailing bytes that are not a valid stream
//! are ignored; a stream cut short is an error; empty input decodes to nothing. Memory is bounded by
//! the expected decoded size plus libbzip2's fixed state (at most about 3.7 MB).

use crate::codec::{BytesToBytesCodec, DecodedSize};
use crate::error::{Error, Result};
use bzip2::{Action, Compress, Compression, Decompress, Status};
use serde_json::{json, Value};
use std::borrow::Cow;
use crate::codec::numcodecs::bytes_codec;
use crate::codec::registry::{CodecEntry, V1Options};

/// The registry entry: numcodecs `bz2` (default level 1; also a Zarr v1 compression).
pub static CODEC: CodecEntry = CodecEntry::numcodecs(bytes_codec("bz2", |c, _| Ok(Box::new(Bz2Codec::new(c.int("level", 1, 9, Some(1))? as u32)?)), Some(V1Options::Level)));

/// The numcodecs `bz2` codec.
#[derive(Debug, Clone)]
pub struct Bz2Codec {
    level: u32,
}

impl Bz2Codec {
    /// A codec compressing at `level` (1..9).
    pub fn new(level: u32) -> Result<Bz2Codec> {
        if !(1..=9).contains(&level) {
            return Err(Error::Metadata(format!("numcodecs 'bz2': level {level} is not in 1..9")));
        }
        Ok(Bz2Codec { level })
    }
}

fn corrupt(why: impl std::fmt::Display) -> Error {
    Error::Codec(format!("bz2: {why}"))
}

/// How one stream ended.
enum StreamEnd {
    /// The end-of-stream marker was reached after `consumed` input bytes, `produced` output bytes.
    Complete { consumed: usize, produced: usize },
    /// The data is invalid.
    Invalid(Error),
}

/// Decodes one bzip2 stream from the start of `input` into `out`. Errors other than invalid data
/// (truncation, too much output) are returned as `Err`.
fn decode_stream(input: &[u8], out: &mut [u8]) -> Result<StreamEnd> {
    let mut d = Decompress::new(false);
    let (mut inp, mut outp) = (0usize, 0usize);
    let mut probe = [0u8; 1];
    loop {
        let full = outp == out.len();
        let space: &mut [u8] = if full { &mut probe } else { &mut out[outp..] };
        let (in0, out0) = (d.total_in(), d.total_out());
        let status = match d.decompress(&input[inp..], space) {
            Ok(s) => s,
            Err(e) => return Ok(StreamEnd::Invalid(corrupt(e))),
        };
        let consumed = (d.total_in() - in0) as usize;
        let produced = (d.total_out() - out0) as usize;
        if full && produced > 0 {
            return Err(corrupt(format!("decoded more than the {} bytes expected", out.len())));
        }
        inp += consumed;
        outp += produced;
        match status {
            Status::StreamEnd => return Ok(StreamEnd::Complete { consumed: inp, produced: outp }),
            Status::MemNeeded => return Err(Error::Internal("bz2: out of memory while decoding".into())),
            _ if consumed == 0 && produced == 0 => {
                return Err(corrupt("compressed data ended before the end-of-stream marker"));
            }
            _ => {}
        }
    }
}

/// Decodes all streams of `encoded` into `out`; returns the decoded length (at most `out.len()`).
pub fn decode_to_slice(encoded: &[u8], out: &mut [u8]) -> Result<usize> {
    let (mut inp, mut outp) = (0usize, 0usize);
    while inp < encoded.len() {
        match decode_stream(&encoded[inp..], &mut out[outp..]) {
            Ok(StreamEnd::Complete { consumed, produced }) => {
                inp += consumed;
                outp += produced;
            }
            // As Python's bz2.decompress: leftovers that are not a valid stream are ignored.
            Ok(StreamEnd::Invalid(_)) if inp > 0 => break,
            Ok(StreamEnd::Invalid(e)) => return Err(e),
            Err(e) => return Err(e),
        }
    }
    Ok(outp)
}

/// The most a bzip2 stream of `len` bytes can decode to. A block holds at most 900 000 symbols after
/// bzip2's first run-length stage, which turns at most 5 bytes (4 equal bytes and a count of 251 more)
/// into 255, so a block decodes to at most 45 900 000 bytes; each block takes at least 10 stored bytes
/// (its 48-bit magic and 32-bit CRC).
fn max_expansion(len: usize) -> u64 {
    (len as u64 / 10 + 1) * 900_000 * 51
}

impl BytesToBytesCodec for Bz2Codec {
    fn check_decodable(&self, encoded: &[u8], expected: usize) -> Result<()> {
        if expected as u64 > max_expansion(encoded.len()) {
            return Err(Error::Codec(format!(
                "bz2: a stream of {} bytes cannot decode to {expected} bytes (at most {})",
                encoded.len(),
                max_expansion(encoded.len())
            )));
        }
        Ok(())
    }

    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        let mut c = Compress::new(Compression::new(self.level), 0);
        // bzip2 grows incompressible data by about 1%, plus the header and trailer.
        crate::codec::numcodecs::compress_streaming(data, data.len() + data.len() / 100 + 600, |input, out| {
            let in0 = c.total_in();
            let status = c
                .compress_vec(input, out, Action::Finish)
                .map_err(|e| Error::Internal(format!("bz2 compression failed: {e}")))?;
            Ok(((c.total_in() - in0) as usize, matches!(status, Status::StreamEnd)))
        })
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        crate::codec::numcodecs::decompress_new(size, "bz2", |out| decode_to_slice(encoded, out))
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        let n = decode_to_slice(encoded, out)?;
        DecodedSize::Exact(out.len()).check(n, "bz2")
    }

    fn to_json(&self) -> Value {
        json!({"id": "bz2", "level": self.level})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_stream_cannot_claim_gigabytes() {
        let c = Bz2Codec { level: 9 };
        // The bound holds for the most compressible input: 8 MiB of one byte.
        let data = vec![7u8; 8 << 20];
        let enc = c.encode(&data).unwrap();
        assert!(max_expansion(enc.len()) >= data.len() as u64, "{} bytes", enc.len());
        c.check_decodable(&enc, data.len()).unwrap();
        // That stream (under 100 bytes) for a chunk declared 3 GiB: refused before anything is allocated.
        assert!(enc.len() < 100);
        let e = c.check_decodable(&enc, 3 << 30).unwrap_err();
        assert!(matches!(e, Error::Codec(_)) && e.to_string().contains("cannot decode to"), "{e}");
    }
    use crate::codec::numcodecs::test_vectors::ramp;
    use crate::codec::numcodecs::test_vectors::{numcodecs_decodes, vector};

    #[test]
    fn round_trips() {
        let d = ramp(6000);
        let noise: Vec<u8> = (0..3000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        for level in [1, 5, 9] {
            let c = Bz2Codec::new(level).unwrap();
            for input in [&d[..], &noise[..], &[3u8][..], &[][..]] {
                let e = c.encode(input).unwrap();
                assert_eq!(&e[..3], b"BZh");
                assert_eq!(e[3], b'0' + level as u8);
                let mut out = vec![0; input.len()];
                c.decode_into(&e, &mut out).unwrap();
                assert_eq!(out, input);
                assert_eq!(&*c.decode(&e, DecodedSize::AtMost(input.len() + 100)).unwrap(), input);
            }
        }
        assert!(Bz2Codec::new(0).is_err());
        assert!(Bz2Codec::new(10).is_err());
    }

    #[test]
    fn multi_stream_and_trailing_bytes() {
        let c = Bz2Codec::new(1).unwrap();
        let (a, b) = (b"first stream ".repeat(50), b"second".repeat(70));
        let mut e = c.encode(&a).unwrap();
        e.extend_from_slice(&Bz2Codec::new(9).unwrap().encode(&b).unwrap());
        e.extend_from_slice(&c.encode(&[]).unwrap());
        let both = [a.clone(), b.clone()].concat();
        assert_eq!(&*c.decode(&e, DecodedSize::Exact(both.len())).unwrap(), &both[..]);
        // trailing garbage after a complete stream is ignored (as bz2.decompress does)
        let mut g = e.clone();
        g.extend_from_slice(b"garbage!");
        assert_eq!(&*c.decode(&g, DecodedSize::AtMost(1 << 16)).unwrap(), &both[..]);
        // ... but a second stream cut short is an error
        let cut = &e[..e.len() - 20];
        assert!(matches!(c.decode(cut, DecodedSize::AtMost(1 << 16)), Err(Error::Codec(_))));
        // garbage alone is an error; empty input is empty
        assert!(matches!(c.decode(b"garbage!", DecodedSize::AtMost(100)), Err(Error::Codec(_))));
        assert!(c.decode(&[], DecodedSize::Exact(0)).unwrap().is_empty());
    }

    #[test]
    fn sizes_and_corruption() {
        let c = Bz2Codec::new(1).unwrap();
        let d = ramp(6000);
        let e = c.encode(&d).unwrap();
        let mut short = vec![0; d.len() - 1];
        assert!(matches!(c.decode_into(&e, &mut short), Err(Error::Codec(m)) if m.contains("bz2")));
        let mut long = vec![0; d.len() + 1];
        assert!(matches!(c.decode_into(&e, &mut long), Err(Error::Codec(_))));
        assert!(matches!(c.decode(&e, DecodedSize::AtMost(d.len() - 1)), Err(Error::Codec(_))));
        assert!(matches!(c.decode(&e, DecodedSize::Exact(d.len() + 1)), Err(Error::Codec(_))));
        let mut out = vec![0; d.len()];
        for cut in (0..e.len()).step_by(7) {
            assert!(matches!(c.decode_into(&e[..cut], &mut out), Err(Error::Codec(_))), "cut {cut}");
        }
        for i in (0..e.len()).step_by(3) {
            let mut bad = e.clone();
            bad[i] ^= 0x5A;
            // block and stream CRCs catch corruptions of the data (a flip in an unused code length or in
            // the final padding bits may leave it intact)
            if c.decode_into(&bad, &mut out).is_ok() {
                assert_eq!(out, d, "corruption at {i} not detected");
            }
            let _ = c.decode(&bad, DecodedSize::AtMost(d.len()));
        }
    }

    #[test]
    fn numcodecs_vectors() {
        let raw = vector!("input.bin");
        for (level, e) in [(1, vector!("bz2_level1.bin")), (9, vector!("bz2_level9.bin"))] {
            let c = Bz2Codec::new(level).unwrap();
            let mut out = vec![0; raw.len()];
            c.decode_into(e, &mut out).unwrap();
            assert_eq!(out, raw, "level {level}");
            // libbzip2's output is the same in every implementation of the format
            assert_eq!(c.encode(raw).unwrap(), e, "level {level}");
        }
        let both = [raw, vector!("second.bin")].concat();
        let c = Bz2Codec::new(1).unwrap();
        assert_eq!(&*c.decode(vector!("bz2_concat.bin"), DecodedSize::Exact(both.len())).unwrap(), &both[..]);
    }

    /// libzarr -> numcodecs. Skipped (passes, with a note) when python3 or numcodecs is missing.
    #[test]
    fn numcodecs_decodes_ours() {
        let d = ramp(6000);
        let cases: Vec<_> = [1, 5, 9]
            .into_iter()
            .map(|level| (json!({"id": "bz2", "level": level}), Bz2Codec::new(level).unwrap().encode(&d).unwrap()))
            .collect();
        numcodecs_decodes(&cases, &d);
        numcodecs_decodes(&[(json!({"id": "bz2", "level": 1}), Bz2Codec::new(1).unwrap().encode(&[]).unwrap())], &[]);
    }
}
