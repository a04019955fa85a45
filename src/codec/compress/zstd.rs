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

/// What the headers of the zstd frames in a stored chunk say, read without decoding anything: the
/// content size they declare, the least and the most their blocks can decode to, and whether they
/// carry content checksums. Skippable frames are passed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FramesShape {
    /// Number of (non-skippable) frames.
    pub frames: usize,
    /// The sum of the frames' declared content sizes, when every frame declares one.
    pub declared: Option<u64>,
    /// The least the blocks decode to (raw and RLE blocks exactly, compressed blocks nothing).
    pub min: u64,
    /// The most the blocks decode to (compressed blocks: the 128 KiB block maximum each).
    pub max: u64,
    /// Whether some frame carries a content checksum.
    pub checksum: bool,
}

/// The largest a block decodes to (`Block_Maximum_Size`, RFC 8878 3.1.1.2.3).
const BLOCK_MAX: u64 = 128 << 10;

/// Walks the frame and block headers of `encoded` (RFC 8878: one or more frames, each a header, blocks
/// with 3-byte headers, an optional checksum). The cost is a few bytes read per 128 KiB block. Fails
/// (`Error::Codec`) on a bad magic number, a reserved bit or block type, or a frame cut short.
pub fn frames_shape(encoded: &[u8]) -> Result<FramesShape> {
    let bad = |why: String| Err(Error::Codec(format!("zstd: {why}")));
    let mut shape = FramesShape { frames: 0, declared: Some(0), min: 0, max: 0, checksum: false };
    let mut p = 0usize;
    let le = |b: &[u8]| b.iter().rev().fold(0u64, |a, &x| (a << 8) | x as u64);
    while p < encoded.len() {
        let rest = &encoded[p..];
        if rest.len() < 4 {
            return bad(format!("{} stray bytes after the frames at byte {p}", rest.len()));
        }
        let magic = le(&rest[..4]);
        if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
            // A skippable frame: magic, 4-byte size, that many bytes.
            let Some(n) = rest.get(4..8).map(le) else { return bad(format!("skippable frame at byte {p} is cut short")) };
            if (rest.len() as u64 - 8) < n {
                return bad(format!("skippable frame at byte {p} is cut short"));
            }
            p += 8 + n as usize;
            continue;
        }
        if magic != 0xFD2F_B528 {
            return bad(format!("no zstd frame at byte {p} (magic number {magic:#010x})"));
        }
        let Some(&fhd) = rest.get(4) else { return bad(format!("frame header at byte {p} is cut short")) };
        if fhd & 0x08 != 0 {
            return bad(format!("frame at byte {p} sets a reserved header bit"));
        }
        let single_segment = fhd & 0x20 != 0;
        let fcs_len = match fhd >> 6 {
            0 => usize::from(single_segment),
            1 => 2,
            2 => 4,
            _ => 8,
        };
        let did_len = [0, 1, 2, 4][(fhd & 3) as usize];
        let header_len = 5 + usize::from(!single_segment) + did_len + fcs_len;
        if rest.len() < header_len {
            return bad(format!("frame header at byte {p} is cut short"));
        }
        let declared = match fcs_len {
            0 => None,
            2 => Some(le(&rest[header_len - 2..header_len]) + 256),
            n => Some(le(&rest[header_len - n..header_len])),
        };
        shape.declared = shape.declared.zip(declared).map(|(a, b)| a.saturating_add(b));
        shape.checksum |= fhd & 0x04 != 0;
        shape.frames += 1;
        let mut q = header_len;
        loop {
            let Some(h) = rest.get(q..q + 3).map(le) else {
                return bad(format!("frame at byte {p} is cut short (a block header at byte {} is missing)", p + q));
            };
            let (last, kind, size) = (h & 1 == 1, (h >> 1) & 3, h >> 3);
            let (stored, min, max) = match kind {
                0 => (size, size, size),
                1 => (1, size, size),
                2 => (size, 0, BLOCK_MAX),
                _ => return bad(format!("frame at byte {p}: reserved block type at byte {}", p + q)),
            };
            q += 3;
            if ((rest.len() - q) as u64) < stored {
                return bad(format!(
                    "frame at byte {p} is cut short (a block of {stored} bytes at byte {} has {} bytes left)",
                    p + q,
                    rest.len() - q
                ));
            }
            q += stored as usize;
            shape.min = shape.min.saturating_add(min);
            shape.max = shape.max.saturating_add(max);
            if last {
                break;
            }
        }
        if fhd & 0x04 != 0 {
            if rest.len() - q < 4 {
                return bad(format!("frame at byte {p} is cut short (its 4-byte checksum is missing)"));
            }
            q += 4;
        }
        p += q;
    }
    if shape.frames == 0 {
        return bad(format!("no zstd frame in {} bytes", encoded.len()));
    }
    Ok(shape)
}

/// Fails (`Error::Codec`) unless the frames of `encoded` can decode to exactly `expected` bytes as far
/// as their headers tell ([`frames_shape`]): a declared content size must be `expected`, and the
/// blocks must be able to make it. Cheap, and done before any output is allocated, so that a frame
/// declaring 2^60 bytes, a bomb of RLE blocks or a frame cut short costs nothing.
pub fn check_frames(encoded: &[u8], expected: usize) -> Result<FramesShape> {
    let shape = frames_shape(encoded)?;
    let e = expected as u64;
    if let Some(d) = shape.declared.filter(|&d| d != e) {
        return Err(Error::Codec(format!("zstd: the frame header declares {d} bytes, the chunk has {e}")));
    }
    if shape.min > e {
        return Err(Error::Codec(format!("zstd: the frame's blocks decode to at least {} bytes, the chunk has {e}", shape.min)));
    }
    if shape.max < e {
        return Err(Error::Codec(format!("zstd: the frame's blocks decode to at most {} bytes, the chunk has {e}", shape.max)));
    }
    Ok(shape)
}

thread_local! {
    static STREAM: RefCell<Option<zstd::zstd_safe::DCtx<'static>>> = const { RefCell::new(None) };
}

/// Decodes the first `out.len()` bytes of the output of `encoded`, whose whole output is `total`
/// bytes (streaming, stopping early). The frame is validated first ([`check_frames`]): its header
/// must declare `total` bytes, its block headers must be able to make them and must reach the end of
/// the stored bytes; a frame failing that is `Error::Codec`, whatever part of it is read. Refuses
/// (`Ok(false)`: the caller decodes everything) several frames, a frame that declares no content size,
/// and a frame carrying a content checksum (a prefix could not be verified against it).
///
/// What a prefix decode does not see: a compressed block past the prefix whose entropy-coded data is
/// damaged while its header is intact (no decoder can tell without decoding it); a read that reaches
/// that block finds it.
pub fn decode_prefix(encoded: &[u8], total: usize, out: &mut [u8]) -> Result<bool> {
    let shape = check_frames(encoded, total)?;
    if shape.frames != 1 || shape.declared.is_none() || shape.checksum || out.len() > total {
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
        check_frames(encoded, n)?;
        let mut out = crate::error::try_alloc(n)?;
        let got = decompress_into(encoded, &mut out)?;
        size.check(got, "zstd")?;
        return Ok(out);
    }
    let max = size.max();
    let shape = frames_shape(encoded)?;
    if shape.min > max as u64 {
        return Err(Error::Codec(format!("zstd: the frame's blocks decode to at least {} bytes, more than the {max} allowed", shape.min)));
    }
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

    fn decode_partial(&self, encoded: &[u8], _start: usize, end: usize, total: usize, out: &mut [u8]) -> Result<bool> {
        // Streaming is slower per byte than one bulk call: worth it only for a short prefix. The
        // frame is validated against the chunk's size first, whatever the prefix.
        if end * 4 > total * 3 {
            check_frames(encoded, total)?;
            return Ok(false);
        }
        decode_prefix(encoded, total, &mut out[..end])
    }

    fn check_decodable(&self, encoded: &[u8], expected: usize) -> Result<()> {
        check_frames(encoded, expected).map(|_| ())
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        decode_zstd(encoded, size).map(Cow::Owned)
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        check_frames(encoded, out.len())?;
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
        let n = d.len();
        let mut out = vec![0u8; n];
        assert!(plain.decode_partial(&e, 1000, 50_000, n, &mut out).unwrap());
        assert_eq!(out[..50_000], d[..50_000]);
        let mut prefix = vec![0u8; 50_000];
        assert!(plain.decode_partial(&e, 1000, 50_000, n, &mut prefix).unwrap());
        assert_eq!(prefix, d[..50_000]);
        assert!(!plain.decode_partial(&e, 0, n, n, &mut out).unwrap(), "long prefixes: bulk decode instead");
        let mut short = vec![0u8; 10];
        assert!(matches!(decode_prefix(&e[..e.len() / 4], n, &mut short), Err(Error::Codec(_))), "truncated");
        assert!(matches!(decode_prefix(&e[..e.len() - 1], n, &mut short), Err(Error::Codec(_))), "one byte short");
        assert!(matches!(decode_prefix(&e, n + 1, &mut short), Err(Error::Codec(_))), "declares another size");
        assert!(decode_prefix(&e, n, &mut short).unwrap());
        assert_eq!(short, d[..10]);
        // a frame with a content checksum is never decoded partially (it could not be verified)
        let summed = ZstdCodec::new(3, true);
        let e = summed.encode(&d).unwrap();
        assert!(!summed.decode_partial(&e, 0, 100, n, &mut out).unwrap());
        assert!(matches!(summed.decode_partial(&e[..e.len() - 2], 0, 100, n, &mut out), Err(Error::Codec(_))));
    }

    /// A zstd frame made by hand: `fcs` the declared content size (8-byte field), then blocks of
    /// (type, Block_Size, content).
    fn frame(fcs: Option<u64>, blocks: &[(u32, u32, &[u8])]) -> Vec<u8> {
        let mut f = vec![0x28, 0xb5, 0x2f, 0xfd];
        match fcs {
            Some(n) => {
                f.push(0xC0 | 0x20); // 8-byte FCS, single segment
                f.extend_from_slice(&n.to_le_bytes());
            }
            None => f.extend_from_slice(&[0x00, 0x50]), // no FCS; window descriptor (1 MiB)
        }
        for (i, (kind, size, content)) in blocks.iter().enumerate() {
            let last = u32::from(i + 1 == blocks.len());
            let h = last | (kind << 1) | (size << 3);
            f.extend_from_slice(&h.to_le_bytes()[..3]);
            f.extend_from_slice(content);
        }
        f
    }

    #[test]
    fn frame_headers_checked_before_decoding() {
        let d: Vec<u8> = (0..300_000u32).map(|i| (i / 1000) as u8).collect();
        let e = ZstdCodec::new(3, false).encode(&d).unwrap();
        let shape = frames_shape(&e).unwrap();
        assert_eq!((shape.frames, shape.declared, shape.checksum), (1, Some(d.len() as u64), false));
        assert!(shape.min <= d.len() as u64 && d.len() as u64 <= shape.max, "{shape:?}");
        check_frames(&e, d.len()).unwrap();
        for cut in [1, 2, 3, 4, e.len() / 2, e.len() - 1] {
            let m = check_frames(&e[..e.len() - cut], d.len()).unwrap_err();
            assert!(matches!(&m, Error::Codec(s) if s.contains("cut short") || s.contains("stray")), "cut {cut}: {m}");
        }
        assert!(matches!(check_frames(&e, d.len() + 1), Err(Error::Codec(m)) if m.contains("declares")));
        // several frames, a skippable frame, a streamed frame without a content size
        let mut two = e.clone();
        two.extend_from_slice(&[0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
        two.extend_from_slice(&e);
        let s2 = check_frames(&two, 2 * d.len()).unwrap();
        assert_eq!((s2.frames, s2.declared), (2, Some(2 * d.len() as u64)));
        let mut out = vec![0u8; 2 * d.len()];
        ZstdCodec::new(1, false).decode_into(&two, &mut out).unwrap();
        let mut enc = zstd::stream::Encoder::new(Vec::new(), 3).unwrap();
        std::io::Write::write_all(&mut enc, &d).unwrap();
        let streamed = enc.finish().unwrap();
        assert_eq!(frames_shape(&streamed).unwrap().declared, None);
        let mut out = vec![0u8; d.len()];
        let c = ZstdCodec::new(1, false);
        c.decode_into(&streamed, &mut out).unwrap();
        assert_eq!(out, d);
        // undeclared: a prefix read decodes the whole frame instead, and finds damage anywhere
        assert!(!c.decode_partial(&streamed, 0, 10, d.len(), &mut out).unwrap());
        // a frame declaring 2^60 bytes, refused before anything is decoded or allocated
        let huge = frame(Some(1 << 60), &[(1, 1000, &[7])]);
        assert!(matches!(check_frames(&huge, 1000), Err(Error::Codec(m)) if m.contains("declares 1152921504606846976")));
        let mut small = vec![0u8; 16];
        assert!(matches!(c.decode_partial(&huge, 0, 16, 1000, &mut small), Err(Error::Codec(_))));
        // a 16 GiB bomb of RLE blocks (512 KiB stored), declaring nothing or the chunk's size
        let blocks: Vec<(u32, u32, &[u8])> = vec![(1, 128 << 10, &[1u8][..]); 1 << 17];
        for fcs in [None, Some(1000)] {
            let bomb = frame(fcs, &blocks);
            assert_eq!(frames_shape(&bomb).unwrap().min, 16 << 30);
            assert!(matches!(check_frames(&bomb, 1000), Err(Error::Codec(m)) if m.contains("at least 17179869184")));
            let mut out = vec![0u8; 1000];
            assert!(matches!(c.decode_into(&bomb, &mut out), Err(Error::Codec(_))));
            assert!(matches!(c.decode_partial(&bomb, 0, 16, 1000, &mut out), Err(Error::Codec(_))));
            assert!(matches!(c.decode(&bomb, DecodedSize::AtMost(1 << 20)), Err(Error::Codec(_))));
        }
        // blocks that cannot make the declared size; a reserved block type; a reserved header bit
        assert!(matches!(check_frames(&frame(Some(100), &[(0, 10, &[0; 10])]), 100), Err(Error::Codec(m)) if m.contains("at most 10")));
        assert!(matches!(frames_shape(&frame(Some(1), &[(3, 1, &[0])])), Err(Error::Codec(m)) if m.contains("reserved")));
        let mut reserved = frame(Some(1), &[(0, 1, &[0])]);
        reserved[4] |= 0x08;
        assert!(matches!(frames_shape(&reserved), Err(Error::Codec(_))));
        assert!(matches!(frames_shape(b""), Err(Error::Codec(_))));
        assert!(matches!(frames_shape(b"\x28\xb5\x2f"), Err(Error::Codec(_))));
        // a well-formed hand-made frame decodes as zstd says
        let ok = frame(Some(6), &[(0, 2, b"ab"), (1, 4, b"z")]);
        let mut out = vec![0u8; 6];
        c.decode_into(&ok, &mut out).unwrap();
        assert_eq!(out, b"abzzzz");
    }

    #[test]
    fn config() {
        let z = ZstdCodec::from_v3(None).unwrap();
        assert_eq!((z.level, z.checksum), (0, false));
        assert!(ZstdCodec::from_v3(serde_json::json!({"level": 23}).as_object()).is_err());
        assert!(ZstdCodec::from_v3(serde_json::json!({"checksum": 1}).as_object()).is_err());
    }
}
