//! `zstd` codec (bytes -> bytes): Zstandard frames.
//!
//! Spec: <https://github.com/zarr-developers/zarr-extensions/tree/main/codecs/zstd>
//! v3 name: `zstd`; numcodecs id: `zstd`. Configuration: `{"level": int, "checksum": bool}`
//! (level 0 means zstd's default; negative levels are the fast modes).
//! Example: `{"name": "zstd", "configuration": {"level": 3, "checksum": false}}`
//!
//! Compression and decompression contexts are kept per thread and reused.

use crate::codec::numcodecs::bytes_codec;
use crate::codec::registry::{CodecEntry, SpecCompressor};
use crate::codec::{BytesToBytesCodec, Codec, Config, DecodedSize};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::cell::RefCell;

/// The registry entry: v3 `zstd`, numcodecs `zstd` (default level 1), spec API `zstd` (levels
/// -131072 to 22, default 3, written without checksum).
pub static CODEC: CodecEntry = CodecEntry {
    name: Some("zstd"),
    from_v3: Some(|_, cfg, _| Ok(Codec::BytesToBytes(Box::new(ZstdCodec::from_v3(cfg)?)))),
    numcodecs: bytes_codec(
        "zstd",
        |c, _| {
            Ok(Box::new(ZstdCodec::new(c.int("level", -131072, 22, Some(1))? as i32, c.bool("checksum", false)?)))
        },
        None,
    ),
    spec: Some(SpecCompressor {
        variants: &[],
        levels: (-131072, 22),
        default_level: 3,
        shuffles: false,
        build: |_, level, _, _| Ok(Box::new(ZstdCodec::new(level, false))),
    }),
    ..CodecEntry::NONE
};

/// The `zstd` codec.
#[derive(Debug, Clone)]
pub struct ZstdCodec {
    level: i32,
    checksum: bool,
}

thread_local! {
    static DCTX: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
    static CCTX: RefCell<Option<(i32, bool, zstd::bulk::Compressor<'static>)>> = const { RefCell::new(None) };
}

impl ZstdCodec {
    /// A codec with the given level and frame checksum flag.
    pub fn new(level: i32, checksum: bool) -> ZstdCodec {
        ZstdCodec { level, checksum }
    }

    /// Parses the v3 configuration.
    pub fn from_v3(cfg: Option<&Map<String, Value>>) -> Result<ZstdCodec> {
        let c = Config::new("zstd", cfg, &["level", "checksum"])?;
        let level = c.int("level", -131072, 22, Some(0))? as i32;
        Ok(ZstdCodec::new(level, c.bool("checksum", false)?))
    }
}

fn codec_err(e: std::io::Error) -> Error {
    Error::Codec(format!("zstd: {e}"))
}

/// Decompresses `encoded` into `out`, returning the decoded length (may be shorter than `out`).
fn decompress_into(encoded: &[u8], out: &mut [u8]) -> Result<usize> {
    DCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new().map_err(|e| Error::Internal(format!("zstd: {e}")))?);
        }
        slot.as_mut().unwrap().decompress_to_buffer(encoded, out).map_err(codec_err)
    })
}

thread_local! {
    static STREAM: RefCell<Option<zstd::zstd_safe::DCtx<'static>>> = const { RefCell::new(None) };
}

/// Decodes the first `out.len()` bytes of the output of `encoded` (streaming, stopping early). Refuses
/// (`Ok(false)`) frames carrying a content checksum: a prefix could not be verified against it.
pub fn decode_prefix(encoded: &[u8], out: &mut [u8]) -> Result<bool> {
    // Frame header: magic (4 bytes), then the descriptor whose bit 2 is Content_Checksum_flag.
    if encoded.len() < 5 || encoded[..4] != [0x28, 0xb5, 0x2f, 0xfd] || encoded[4] & 0x04 != 0 {
        return Ok(false);
    }
    STREAM.with(|cell| {
        let mut slot = cell.borrow_mut();
        let dctx = slot.get_or_insert_with(zstd::zstd_safe::DCtx::create);
        dctx.reset(zstd::zstd_safe::ResetDirective::SessionOnly)
            .map_err(|e| Error::Internal(format!("zstd: {}", zstd::zstd_safe::get_error_name(e))))?;
        let mut input = zstd::zstd_safe::InBuffer::around(encoded);
        let want = out.len();
        let mut output = zstd::zstd_safe::OutBuffer::around(out);
        while output.pos() < want {
            let before = (input.pos(), output.pos());
            let r = dctx
                .decompress_stream(&mut output, &mut input)
                .map_err(|e| Error::Codec(format!("zstd: {}", zstd::zstd_safe::get_error_name(e))))?;
            if (input.pos(), output.pos()) == before {
                if r == 0 && input.pos() == encoded.len() {
                    return Err(Error::Codec(format!("zstd: frame decodes to only {} bytes", output.pos())));
                }
                return Err(Error::Codec("zstd: truncated frame".into()));
            }
        }
        Ok(true)
    })
}

/// Decodes zstd frames, checking the decoded size.
pub fn decode_zstd(encoded: &[u8], size: DecodedSize) -> Result<Vec<u8>> {
    if let DecodedSize::Exact(n) = size {
        let mut out = crate::error::try_alloc(n)?;
        let got = decompress_into(encoded, &mut out)?;
        size.check(got, "zstd")?;
        return Ok(out);
    }
    let max = size.max();
    // Frame header may announce the size; otherwise decode into the bound.
    let hint = zstd::zstd_safe::get_frame_content_size(encoded).ok().flatten();
    let cap = match hint {
        Some(n) if n as usize <= max => n as usize,
        Some(n) => return Err(Error::Codec(format!("zstd: frame announces {n} bytes, more than the {max} allowed"))),
        None => max,
    };
    if cap > GROW_ABOVE {
        // A large bound (or announced size) is not allocated up front: the output grows with what
        // the stream really decodes to, so damaged headers cannot demand memory.
        return decode_growing(encoded, max);
    }
    let mut out = crate::error::try_alloc(cap)?;
    let got = decompress_into(encoded, &mut out)?;
    out.truncate(got);
    Ok(out)
}

/// Output sizes up to which a bounded decode allocates its bound at once.
const GROW_ABOVE: usize = 16 << 20;

/// Streams `encoded` (one or more frames) into a growing buffer, failing beyond `max` bytes.
fn decode_growing(encoded: &[u8], max: usize) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut dec = zstd::stream::read::Decoder::with_buffer(encoded).map_err(codec_err)?;
    let mut out = Vec::new();
    (&mut dec).take(max as u64 + 1).read_to_end(&mut out).map_err(codec_err)?;
    if out.len() > max {
        return Err(Error::Codec(format!("zstd: decoded more than the {max} bytes allowed")));
    }
    Ok(out)
}

/// Compresses with zstd at `level`, with or without the frame checksum.
pub fn encode_zstd(data: &[u8], level: i32, checksum: bool) -> Result<Vec<u8>> {
    CCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        let stale = !matches!(&*slot, Some((l, c, _)) if *l == level && *c == checksum);
        if stale {
            let mut c = zstd::bulk::Compressor::new(level).map_err(|e| Error::Internal(format!("zstd: {e}")))?;
            c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(checksum))
                .map_err(|e| Error::Internal(format!("zstd: {e}")))?;
            *slot = Some((level, checksum, c));
        }
        let (_, _, c) = slot.as_mut().unwrap();
        c.compress(data).map_err(|e| Error::Internal(format!("zstd compression failed: {e}")))
    })
}

impl BytesToBytesCodec for ZstdCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        encode_zstd(data, self.level, self.checksum)
    }

    fn decode_partial(&self, encoded: &[u8], _start: usize, end: usize, out: &mut [u8]) -> Result<bool> {
        // Streaming is slower per byte than one bulk call: worth it only for a short prefix.
        if end * 4 > out.len() * 3 {
            return Ok(false);
        }
        decode_prefix(encoded, &mut out[..end])
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        decode_zstd(encoded, size).map(Cow::Owned)
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        let got = decompress_into(encoded, out)?;
        DecodedSize::Exact(out.len()).check(got, "zstd")
    }

    fn to_json(&self) -> Value {
        json!({"name": "zstd", "configuration": {"level": self.level, "checksum": self.checksum}})
    }

    /// numcodecs' form; `checksum` only when set (numcodecs before 0.13 has no such member).
    fn to_numcodecs_json(&self) -> Value {
        let mut v = json!({"id": "zstd", "level": self.level});
        if self.checksum {
            v["checksum"] = Value::Bool(true);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_checksum_and_corruption() {
        let d: Vec<u8> = (0..50000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
        for (level, checksum) in [(0, false), (3, true), (-5, false), (19, true)] {
            let c = ZstdCodec::new(level, checksum);
            let e = c.encode(&d).unwrap();
            let mut out = vec![0; d.len()];
            c.decode_into(&e, &mut out).unwrap();
            assert_eq!(out, d);
            assert_eq!(c.decode(&e, DecodedSize::AtMost(1 << 22)).unwrap().as_ref(), &d[..]);
            assert!(c.decode(&e, DecodedSize::AtMost(1000)).is_err());
            assert_eq!(decode_growing(&e, d.len()).unwrap(), d);
            assert!(matches!(decode_growing(&e, d.len() - 1), Err(Error::Codec(_))));
            assert!(matches!(decode_growing(&e[..e.len() / 2], d.len()), Err(Error::Codec(_))));
            let mut short = vec![0; d.len() - 1];
            assert!(c.decode_into(&e, &mut short).is_err());
            let mut long = vec![0; d.len() + 1];
            assert!(c.decode_into(&e, &mut long).is_err());
            assert!(matches!(c.decode_into(&e[..e.len() / 2], &mut out), Err(Error::Codec(_))));
        }
        // A flipped bit in the payload of a checksummed frame is detected.
        let c = ZstdCodec::new(1, true);
        let mut e = c.encode(&d).unwrap();
        let n = e.len();
        e[n - 2] ^= 0x55;
        let mut out = vec![0; d.len()];
        assert!(c.decode_into(&e, &mut out).is_err());
    }

    #[test]
    fn prefix_decoding() {
        let d: Vec<u8> = (0..100_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
        let plain = ZstdCodec::new(3, false);
        let e = plain.encode(&d).unwrap();
        let mut out = vec![0u8; d.len()];
        assert!(plain.decode_partial(&e, 1000, 50_000, &mut out).unwrap());
        assert_eq!(out[..50_000], d[..50_000]);
        assert!(!plain.decode_partial(&e, 0, d.len(), &mut out).unwrap(), "long prefixes: bulk decode instead");
        let mut short = vec![0u8; 10];
        assert!(decode_prefix(&e[..e.len() / 4], &mut out[..]).is_err(), "truncated");
        assert!(decode_prefix(&e, &mut short).unwrap());
        assert_eq!(short, d[..10]);
        // a frame with a content checksum is never decoded partially (it could not be verified)
        let summed = ZstdCodec::new(3, true);
        let e = summed.encode(&d).unwrap();
        assert!(!summed.decode_partial(&e, 0, 100, &mut out).unwrap());
    }

    #[test]
    fn config() {
        let z = ZstdCodec::from_v3(None).unwrap();
        assert_eq!((z.level, z.checksum), (0, false));
        assert!(ZstdCodec::from_v3(serde_json::json!({"level": 23}).as_object()).is_err());
        assert!(ZstdCodec::from_v3(serde_json::json!({"checksum": 1}).as_object()).is_err());
    }
}
