//! `blosc` codec (bytes -> bytes): c-blosc 1.x frames (vendored and statically built by `blosc-src`).
//!
//! Spec: <https://zarr-specs.readthedocs.io/en/latest/v3/codecs/blosc/index.html>
//! v3 name: `blosc`; numcodecs id: `blosc`. Configuration: `cname` (lz4, lz4hc, blosclz, zstd, zlib,
//! snappy), `clevel` (0-9), `shuffle` ("noshuffle", "shuffle", "bitshuffle"), `typesize` (bytes; required
//! unless noshuffle, defaults to the element size here), `blocksize` (bytes, 0 = automatic).
//! Example: `{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
//! "typesize": 2, "blocksize": 0}}`
//!
//! Only the thread-safe `*_ctx` entry points are used. A frame's header is validated against the stored
//! length before c-blosc reads it.

use crate::codec::numcodecs::{bytes_codec, V2Config, V2Elem};
use crate::codec::registry::{Alias, CodecEntry, SpecCompressor, V1Options};
use crate::codec::{ArrayRepr, BytesToBytesCodec, Codec, Config, DecodedSize};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::ffi::CString;

/// Blosc's shuffle filters (numbers as in c-blosc and numcodecs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shuffle {
    /// No shuffle (0).
    None = 0,
    /// Byte shuffle (1).
    Byte = 1,
    /// Bit shuffle (2).
    Bit = 2,
}

/// The `blosc` codec.
#[derive(Debug, Clone)]
pub struct BloscCodec {
    cname: &'static str,
    clevel: u8,
    shuffle: Shuffle,
    typesize: usize,
    blocksize: usize,
}

/// The compressors this build of c-blosc provides; the first five are those numcodecs
/// also decodes (the spec API offers only them).
pub const CNAMES: [&str; 6] = ["lz4", "lz4hc", "blosclz", "zstd", "zlib", "snappy"];
/// How many of [`CNAMES`], from the first, numcodecs' blosc decodes (all but snappy).
const NUMCODECS_CNAMES: usize = 5;

/// URI name of blosc in the 2020 codec draft (accepted as an alias of `blosc`, with numcodecs'
/// configuration: integer `shuffle`).
pub const URI: &str = "https://purl.org/zarr/spec/codec/blosc";

/// The registry entry: v3 `blosc` (and its draft URI), numcodecs `blosc` (also a Zarr v1
/// compression), spec API `blosc-<cname>` (levels 0-9, default 5, byte shuffle by default).
pub static CODEC: CodecEntry = CodecEntry {
    name: Some("blosc"),
    aliases: &[Alias { name: URI, numcodecs_config: true }],
    from_v3: Some(|_, cfg, decoded| Ok(Codec::BytesToBytes(Box::new(BloscCodec::from_v3(cfg, decoded)?)))),
    numcodecs: bytes_codec(
        "blosc",
        |c, input| Ok(Box::new(BloscCodec::from_v2(c, input)?)),
        Some(V1Options::Object),
    ),
    spec: Some(SpecCompressor {
        variants: CNAMES.split_at(NUMCODECS_CNAMES).0,
        levels: (0, 9),
        default_level: 5,
        shuffles: true,
        build: |cname, level, shuffle, elem| Ok(Box::new(BloscCodec::new(cname, level as u8, shuffle, elem, 0)?)),
    }),
    ..CodecEntry::NONE
};

const MIN_HEADER: usize = 16;
const MAX_BUFFER: usize = i32::MAX as usize - MIN_HEADER;

impl BloscCodec {
    /// A codec with explicit parameters.
    pub fn new(cname: &str, clevel: u8, shuffle: Shuffle, typesize: usize, blocksize: usize) -> Result<BloscCodec> {
        let cname = CNAMES
            .iter()
            .find(|c| **c == cname)
            .copied()
            .ok_or_else(|| Error::Unsupported(format!("codec 'blosc': unsupported cname '{cname}'")))?;
        if clevel > 9 {
            return Err(Error::Metadata(format!("codec 'blosc': clevel {clevel} is not in 0..9")));
        }
        if typesize == 0 {
            return Err(Error::Metadata("codec 'blosc': typesize must be positive".into()));
        }
        Ok(BloscCodec { cname, clevel, shuffle, typesize, blocksize })
    }

    /// Parses the v3 configuration for data of `decoded`.
    pub fn from_v3(cfg: Option<&Map<String, Value>>, decoded: &ArrayRepr) -> Result<BloscCodec> {
        let c = Config::new("blosc", cfg, &["cname", "clevel", "shuffle", "typesize", "blocksize"])?;
        let cname = match c.get("cname") {
            Some(Value::String(s)) => s.as_str(),
            Some(v) => return Err(c.invalid("cname", &format!("expected a string, got {v}"))),
            None => return Err(c.invalid("cname", "required")),
        };
        let clevel = c.int("clevel", 0, 9, None)? as u8;
        let shuffle = match c.choice("shuffle", &["noshuffle", "shuffle", "bitshuffle"], Some("noshuffle"))? {
            "noshuffle" => Shuffle::None,
            "shuffle" => Shuffle::Byte,
            _ => Shuffle::Bit,
        };
        let typesize = c.int("typesize", 1, i64::from(u32::MAX), Some(decoded.data_type.size() as i64))? as usize;
        let blocksize = c.int("blocksize", 0, i64::from(i32::MAX), Some(0))? as usize;
        BloscCodec::new(cname, clevel, shuffle, typesize, blocksize)
    }

    /// Parses numcodecs' configuration (integer `shuffle`, -1 automatic) for bytes of `input`'s
    /// elements (the typesize).
    pub fn from_v2(c: &V2Config, input: &V2Elem) -> Result<BloscCodec> {
        let elem = input.data_type.size();
        let shuffle = match c.int("shuffle", -1, 2, Some(1))? {
            0 => Shuffle::None,
            1 => Shuffle::Byte,
            2 => Shuffle::Bit,
            // AUTOSHUFFLE: bit shuffle for 1-byte items, byte shuffle otherwise (numcodecs rule)
            _ => if elem == 1 { Shuffle::Bit } else { Shuffle::Byte },
        };
        BloscCodec::new(
            c.string("cname", Some(CNAMES[0]))?,
            c.int("clevel", 0, 9, Some(5))? as u8,
            shuffle,
            elem,
            c.int("blocksize", 0, i64::from(i32::MAX), Some(0))? as usize,
        )
    }
}

/// The uncompressed size a blosc frame announces, after checking its header against its length.
pub fn frame_nbytes(encoded: &[u8]) -> Result<usize> {
    if encoded.len() < MIN_HEADER {
        return Err(Error::Codec(format!("blosc: frame of {} bytes is shorter than its header", encoded.len())));
    }
    let mut nbytes = 0usize;
    // SAFETY: the buffer holds at least the 16 header bytes and `encoded.len()` bytes in all.
    let rc = unsafe { blosc_src::blosc_cbuffer_validate(encoded.as_ptr().cast(), encoded.len(), &mut nbytes) };
    if rc < 0 {
        return Err(Error::Codec(format!(
            "blosc: invalid frame header (stored length {} does not match the header, or bad version)",
            encoded.len()
        )));
    }
    Ok(nbytes)
}

/// Decompresses one blosc frame into `out`, which must be exactly the announced size.
pub fn blosc_decompress_into(encoded: &[u8], out: &mut [u8]) -> Result<()> {
    let nbytes = frame_nbytes(encoded)?;
    if nbytes != out.len() {
        return Err(Error::Codec(format!("blosc: frame holds {nbytes} bytes, expected {}", out.len())));
    }
    if nbytes == 0 {
        return Ok(());
    }
    // SAFETY: header validated against the source length; c-blosc writes at most `out.len()` bytes.
    let n = unsafe {
        blosc_src::blosc_decompress_ctx(encoded.as_ptr().cast(), out.as_mut_ptr().cast(), out.len(), 1)
    };
    if n < 0 || n as usize != out.len() {
        return Err(Error::Codec(format!("blosc: corrupt frame (decompression returned {n})")));
    }
    Ok(())
}

/// Decodes only the blocks of a blosc frame holding the decoded bytes `start..end`, into the same
/// positions of `out` (at least `end` bytes; the frame must hold `total`). `Ok(false)`: the frame's
/// items do not divide its size (the caller decodes everything).
pub fn blosc_decompress_range(encoded: &[u8], start: usize, end: usize, total: usize, out: &mut [u8]) -> Result<bool> {
    let nbytes = frame_nbytes(encoded)?;
    if nbytes != total || start > end || end > nbytes || out.len() < end {
        return Err(Error::Codec(format!("blosc: frame holds {nbytes} bytes, the chunk has {total}")));
    }
    if start == end {
        return Ok(true);
    }
    let typesize = (encoded[3] as usize).max(1);
    let first = start / typesize;
    let stop = end.div_ceil(typesize).min(nbytes / typesize);
    if stop * typesize < end || nbytes > i32::MAX as usize {
        // The tail is not a whole item.
        return Ok(false);
    }
    // The last item may reach past `out`: it goes through a buffer of its own.
    let whole = (out.len() / typesize).min(stop);
    let get = |from: usize, n: usize, dst: *mut u8| -> Result<()> {
        // SAFETY: header validated against the length; items from..from+n lie inside the frame's
        // output and the destination has room for n items.
        let got = unsafe { blosc_src::blosc_getitem(encoded.as_ptr().cast(), from as i32, n as i32, dst.cast()) };
        if got < 0 || got as usize != n * typesize {
            return Err(Error::Codec(format!("blosc: corrupt frame (partial decompression returned {got})")));
        }
        Ok(())
    };
    if whole > first {
        // SAFETY (of the pointer): first * typesize < whole * typesize <= out.len().
        get(first, whole - first, unsafe { out.as_mut_ptr().add(first * typesize) })?;
    }
    if stop > whole.max(first) {
        let from = whole.max(first);
        let mut tail = vec![0u8; (stop - from) * typesize];
        get(from, stop - from, tail.as_mut_ptr())?;
        let at = from * typesize;
        let n = out.len().min(stop * typesize) - at;
        out[at..at + n].copy_from_slice(&tail[..n]);
    }
    Ok(true)
}

/// Compresses `data` into one blosc frame.
pub fn blosc_compress(
    data: &[u8],
    cname: &str,
    clevel: u8,
    shuffle: Shuffle,
    typesize: usize,
    blocksize: usize,
) -> Result<Vec<u8>> {
    if data.len() > MAX_BUFFER {
        return Err(Error::Unsupported(format!(
            "blosc: cannot compress {} bytes in one frame (limit {MAX_BUFFER})",
            data.len()
        )));
    }
    let cap = data.len() + MIN_HEADER;
    // A buffer whose pages an earlier encode already touched, when one is free (see `crate::scratch`).
    let mut out: Vec<u8> = crate::scratch::take_encoded(cap);
    let cname = CString::new(cname).expect("cname has no NUL");
    // SAFETY: `out` has at least `cap` bytes of capacity; c-blosc writes at most `cap` bytes and returns how many.
    let n = unsafe {
        blosc_src::blosc_compress_ctx(
            clevel as i32,
            shuffle as i32,
            typesize.min(255),
            data.len(),
            data.as_ptr().cast(),
            out.as_mut_ptr().cast(),
            cap,
            cname.as_ptr(),
            blocksize,
            1,
        )
    };
    if n <= 0 {
        return Err(Error::Internal(format!("blosc compression failed ({n})")));
    }
    // SAFETY: c-blosc initialised the first n bytes (n <= cap).
    unsafe { out.set_len(n as usize) };
    Ok(out)
}

impl BytesToBytesCodec for BloscCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        blosc_compress(data, self.cname, self.clevel, self.shuffle, self.typesize, self.blocksize)
    }

    fn decode_partial(&self, encoded: &[u8], start: usize, end: usize, total: usize, out: &mut [u8]) -> Result<bool> {
        self.check_decodable(encoded, total)?;
        // Decoding block by block costs more per byte than one bulk call: only worth it when the
        // range spans at most 3/4 of the blocks.
        let blocksize = u32::from_le_bytes(encoded[8..12].try_into().unwrap()) as usize;
        if blocksize > 0 && end > start {
            let touched = ((end - 1) / blocksize - start / blocksize + 1) * blocksize;
            if touched * 4 > total * 3 {
                return Ok(false);
            }
        }
        blosc_decompress_range(encoded, start, end, total, out)
    }

    fn check_decodable(&self, encoded: &[u8], expected: usize) -> Result<()> {
        let n = frame_nbytes(encoded)?;
        if n != expected {
            return Err(Error::Codec(format!("blosc: the frame header declares {n} bytes, the chunk has {expected}")));
        }
        Ok(())
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        let n = frame_nbytes(encoded)?;
        size.check(n, "blosc")?;
        let mut out = crate::error::try_alloc(n)?;
        blosc_decompress_into(encoded, &mut out)?;
        Ok(Cow::Owned(out))
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        blosc_decompress_into(encoded, out)
    }

    fn to_json(&self) -> Value {
        let shuffle = match self.shuffle {
            Shuffle::None => "noshuffle",
            Shuffle::Byte => "shuffle",
            Shuffle::Bit => "bitshuffle",
        };
        json!({"name": "blosc", "configuration": {
            "cname": self.cname, "clevel": self.clevel, "shuffle": shuffle,
            "typesize": self.typesize, "blocksize": self.blocksize}})
    }

    /// numcodecs' form: integer `shuffle`, no `typesize` (numcodecs takes it from the elements).
    fn to_numcodecs_json(&self) -> Value {
        json!({"id": "blosc", "cname": self.cname, "clevel": self.clevel, "shuffle": self.shuffle as u8, "blocksize": self.blocksize})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DataType;

    #[test]
    fn every_cname_and_shuffle_round_trips() {
        let d: Vec<u8> = (0..20000u32).flat_map(|i| (i / 5).to_le_bytes()).collect();
        for cname in CNAMES {
            for shuffle in [Shuffle::None, Shuffle::Byte, Shuffle::Bit] {
                let c = BloscCodec::new(cname, 5, shuffle, 4, 0).unwrap();
                let e = c.encode(&d).unwrap();
                let mut out = vec![0; d.len()];
                c.decode_into(&e, &mut out).unwrap();
                assert_eq!(out, d, "{cname} {shuffle:?}");
            }
        }
        let c = BloscCodec::new("blosclz", 9, Shuffle::Byte, 4, 256).unwrap();
        let e = c.encode(&d).unwrap();
        assert_eq!(c.decode(&e, DecodedSize::Exact(d.len())).unwrap().as_ref(), &d[..]);
    }

    #[test]
    fn partial_ranges_match_full_decode() {
        let d: Vec<u8> = (0..65536u32).flat_map(|i| (i / 9).to_le_bytes()).collect();
        let c = BloscCodec::new("lz4", 5, Shuffle::Byte, 4, 4096).unwrap();
        let e = c.encode(&d).unwrap();
        for (s, t) in [(0, 4), (100, 9000), (4096, 8192), (250_000, 262_144), (8, 8), (3, 7), (101, 9001)] {
            let mut out = vec![0xAAu8; d.len()];
            assert!(c.decode_partial(&e, s, t, d.len(), &mut out).unwrap());
            assert_eq!(out[s..t], d[s..t], "{s}..{t}");
            // a buffer for the prefix only (the last item cut by its end)
            let mut out = vec![0xAAu8; t];
            assert!(c.decode_partial(&e, s, t, d.len(), &mut out).unwrap());
            assert_eq!(out[s..t], d[s..t], "{s}..{t} into {t} bytes");
        }
        // most of the frame: declined, the caller decodes everything
        let mut out = vec![0u8; d.len()];
        assert!(!c.decode_partial(&e, 0, d.len() - 10, d.len(), &mut out).unwrap());
        assert!(blosc_decompress_range(&e, 10, 5, d.len(), &mut out).is_err());
        assert!(blosc_decompress_range(&e[..e.len() - 1], 0, 10, d.len(), &mut out).is_err());
        // a frame of another size than the chunk is refused whatever the range
        assert!(matches!(c.decode_partial(&e, 0, 4, d.len() + 4, &mut out), Err(Error::Codec(_))));
        assert!(matches!(c.check_decodable(&e, d.len() - 4), Err(Error::Codec(_))));
    }

    #[test]
    fn corrupt_frames() {
        let d: Vec<u8> = (0..4096u32).flat_map(|i| i.to_le_bytes()).collect();
        let c = BloscCodec::new("lz4", 5, Shuffle::Byte, 4, 0).unwrap();
        let e = c.encode(&d).unwrap();
        let mut out = vec![0; d.len()];
        assert!(matches!(c.decode_into(&e[..e.len() - 1], &mut out), Err(Error::Codec(_))));
        assert!(matches!(c.decode_into(&e[..10], &mut out), Err(Error::Codec(_))));
        let mut small = vec![0; d.len() - 4];
        assert!(matches!(c.decode_into(&e, &mut small), Err(Error::Codec(_))));
        let mut garbage = e.clone();
        for b in garbage[16..].iter_mut() {
            *b = 0xAB;
        }
        // Either detected as corrupt or decoded to something; it must never crash.
        let _ = c.decode_into(&garbage, &mut out);
        assert!(c.decode(&e, DecodedSize::AtMost(100)).is_err());
    }

    #[test]
    fn config() {
        let r = ArrayRepr { shape: vec![4], data_type: DataType::Float64, fill_value: vec![0; 8] };
        let cfg = serde_json::json!({"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle"});
        let c = BloscCodec::from_v3(cfg.as_object(), &r).unwrap();
        assert_eq!(c.typesize, 8);
        let bad = serde_json::json!({"cname": "brotli", "clevel": 3, "shuffle": "shuffle", "typesize": 8});
        assert!(matches!(BloscCodec::from_v3(bad.as_object(), &r), Err(Error::Unsupported(_))));
        let bad = serde_json::json!({"cname": "lz4", "clevel": 10, "shuffle": "shuffle", "typesize": 8});
        assert!(BloscCodec::from_v3(bad.as_object(), &r).is_err());
        let bad = serde_json::json!({"cname": "lz4", "clevel": 1, "shuffle": 1, "typesize": 8});
        assert!(BloscCodec::from_v3(bad.as_object(), &r).is_err());
    }
}
