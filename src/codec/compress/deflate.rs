//! DEFLATE streams in gzip (RFC 1952) or zlib (RFC 1950) framing, through libdeflate: whole-buffer
//! decompression straight into the destination, with one (de)compressor per thread reused across chunks.
//!
//! Used by the `gzip` codec (and by the v2 `zlib` compressor). Concatenated gzip members are accepted,
//! as Python's `gzip.decompress` does; trailing zero padding is tolerated, other trailing bytes are not.

use crate::codec::DecodedSize;
use crate::error::{Error, Result};
use libdeflate_sys as ld;
use std::cell::RefCell;
use std::ffi::c_void;

/// Which framing a stream uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// RFC 1952 gzip (members may be concatenated).
    Gzip,
    /// RFC 1950 zlib.
    Zlib,
}

struct Decompressor(*mut ld::libdeflate_decompressor);

impl Drop for Decompressor {
    fn drop(&mut self) {
        // SAFETY: allocated by libdeflate_alloc_decompressor, freed once.
        unsafe { ld::libdeflate_free_decompressor(self.0) }
    }
}

struct Compressor(i32, *mut ld::libdeflate_compressor);

impl Drop for Compressor {
    fn drop(&mut self) {
        // SAFETY: allocated by libdeflate_alloc_compressor, freed once.
        unsafe { ld::libdeflate_free_compressor(self.1) }
    }
}

thread_local! {
    static DECOMPRESSOR: RefCell<Option<Decompressor>> = const { RefCell::new(None) };
    static COMPRESSOR: RefCell<Option<Compressor>> = const { RefCell::new(None) };
}

fn with_decompressor<R>(f: impl FnOnce(*mut ld::libdeflate_decompressor) -> R) -> Result<R> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            // SAFETY: plain allocation; NULL checked.
            let p = unsafe { ld::libdeflate_alloc_decompressor() };
            if p.is_null() {
                return Err(Error::Internal("libdeflate: cannot allocate a decompressor".into()));
            }
            *slot = Some(Decompressor(p));
        }
        Ok(f(slot.as_ref().unwrap().0))
    })
}

/// Inflates `encoded` into `out`; returns the decoded length. With `exact`, the stream must fill `out`.
pub fn inflate_into(framing: Framing, name: &str, encoded: &[u8], out: &mut [u8], exact: bool) -> Result<usize> {
    match inflate_or_full(framing, name, encoded, out, exact) {
        Ok(Some(n)) => Ok(n),
        Ok(None) => Err(Error::Codec(format!("{name}: {}", diagnose(framing, encoded, out.len())))),
        Err(e) => Err(e),
    }
}

/// The most a DEFLATE stream of `len` bytes can decode to: a 258-byte match takes at least two bits
/// (RFC 1951), so 1032 bytes per input byte.
fn max_expansion(len: usize) -> u64 {
    len as u64 * 1032 + 1024
}

/// Fails unless a stream of `encoded.len()` bytes can decode to `expected` bytes ([`max_expansion`];
/// a gzip stream whose size field disagrees is left to the decoder, since members may be
/// concatenated).
pub fn check_decodable(name: &str, encoded: &[u8], expected: usize) -> Result<()> {
    if expected as u64 > max_expansion(encoded.len()) {
        return Err(Error::Codec(format!(
            "{name}: a stream of {} bytes cannot decode to the chunk's {expected} bytes (nothing decoded)",
            encoded.len()
        )));
    }
    Ok(())
}

/// What is wrong with a stream that libdeflate refused (called only after a failure): the stream is
/// decoded again with a streaming decoder (flate2) into a small window, counting at most `expected + 1`
/// decoded bytes, and the header, the DEFLATE data and the trailer of each member are checked in turn.
fn diagnose(framing: Framing, encoded: &[u8], expected: usize) -> String {
    let (trailer, what) = match framing {
        Framing::Gzip => (8, "CRC-32 and size"),
        Framing::Zlib => (4, "Adler-32"),
    };
    let mut pos = 0usize;
    let mut total = 0u64;
    let mut window = vec![0u8; 1 << 16];
    loop {
        let header = match framing {
            Framing::Gzip => gzip_header_len(&encoded[pos..]),
            Framing::Zlib => zlib_header_len(&encoded[pos..]),
        };
        let Some(h) = header else {
            return format!("the header at byte {pos} is truncated or invalid ({} bytes, {total} decoded before it)", encoded.len());
        };
        pos += h;
        let mut raw = flate2::Decompress::new(false);
        loop {
            let (in0, out0) = (raw.total_in(), raw.total_out());
            let status = raw.decompress(&encoded[pos..], &mut window, flate2::FlushDecompress::None);
            let (used, made) = ((raw.total_in() - in0) as usize, raw.total_out() - out0);
            pos += used;
            total += made;
            if total > expected as u64 {
                return format!("the stream decodes to more than the chunk's {expected} bytes");
            }
            match status {
                Err(_) => return format!("corrupt DEFLATE data at byte {pos} (after {total} decoded bytes)"),
                Ok(flate2::Status::StreamEnd) => break,
                Ok(_) if used == 0 && made == 0 => {
                    return format!(
                        "truncated stream: the DEFLATE data ends unfinished at byte {pos} of {} (after {total} decoded bytes)",
                        encoded.len()
                    )
                }
                Ok(_) => {}
            }
        }
        let left = encoded.len() - pos;
        if left < trailer {
            return format!(
                "truncated stream: the DEFLATE data is complete ({total} decoded bytes) but {} of its {trailer} trailer bytes ({what}) {} missing",
                trailer - left,
                if trailer - left == 1 { "is" } else { "are" }
            );
        }
        pos += trailer;
        let rest = &encoded[pos..];
        if framing == Framing::Gzip && rest.len() >= 2 && rest[..2] == [0x1f, 0x8b] {
            continue;
        }
        if (total as usize) < expected {
            return format!("the stream decodes to {total} bytes, the chunk has {expected}");
        }
        return format!("the stream's trailer ({what}) does not match its data, or bytes follow it");
    }
}

/// The length of the gzip member header at the start of `b` (RFC 1952 2.3), `None` if it is cut short
/// or not a gzip header.
fn gzip_header_len(b: &[u8]) -> Option<usize> {
    if b.len() < 10 || b[0] != 0x1f || b[1] != 0x8b || b[2] != 8 {
        return None;
    }
    let flags = b[3];
    let mut p = 10;
    if flags & 4 != 0 {
        let xlen = u16::from_le_bytes(b.get(p..p + 2)?.try_into().ok()?) as usize;
        p += 2 + xlen;
    }
    for bit in [8, 16] {
        if flags & bit != 0 {
            p += b.get(p..)?.iter().position(|&c| c == 0)? + 1;
        }
    }
    if flags & 2 != 0 {
        p += 2;
    }
    (p <= b.len()).then_some(p)
}

/// The length of the zlib header at the start of `b` (RFC 1950 2.2), `None` if it is cut short or
/// not a zlib header.
fn zlib_header_len(b: &[u8]) -> Option<usize> {
    let (cmf, flg) = (*b.first()?, *b.get(1)?);
    if cmf & 0x0f != 8 || (u16::from(cmf) << 8 | u16::from(flg)) % 31 != 0 {
        return None;
    }
    let n = if flg & 0x20 != 0 { 6 } else { 2 };
    (n <= b.len()).then_some(n)
}

/// [`inflate_into`], with `Ok(None)` when the stream decodes to more than `out` holds.
fn inflate_or_full(framing: Framing, name: &str, encoded: &[u8], out: &mut [u8], exact: bool) -> Result<Option<usize>> {
    let corrupt = |why: String| Error::Codec(format!("{name}: {why}"));
    let (mut ip, mut op) = (0usize, 0usize);
    loop {
        let (mut used_in, mut used_out) = (0usize, 0usize);
        let rest_in = &encoded[ip..];
        let rest_out = &mut out[op..];
        let rc = with_decompressor(|d| {
            // SAFETY: pointers and lengths describe live slices; libdeflate writes at most rest_out.len().
            unsafe {
                match framing {
                    Framing::Gzip => ld::libdeflate_gzip_decompress_ex(
                        d,
                        rest_in.as_ptr() as *const c_void,
                        rest_in.len(),
                        rest_out.as_mut_ptr() as *mut c_void,
                        rest_out.len(),
                        &mut used_in,
                        &mut used_out,
                    ),
                    Framing::Zlib => ld::libdeflate_zlib_decompress_ex(
                        d,
                        rest_in.as_ptr() as *const c_void,
                        rest_in.len(),
                        rest_out.as_mut_ptr() as *mut c_void,
                        rest_out.len(),
                        &mut used_in,
                        &mut used_out,
                    ),
                }
            }
        })?;
        match rc {
            ld::libdeflate_result_LIBDEFLATE_SUCCESS => {}
            ld::libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE => return Ok(None),
            _ => return Err(corrupt(diagnose(framing, encoded, out.len()))),
        }
        ip += used_in;
        op += used_out;
        let rest = &encoded[ip..];
        if framing == Framing::Gzip && rest.len() >= 2 && rest[0] == 0x1f && rest[1] == 0x8b {
            continue; // another gzip member
        }
        if !rest.iter().all(|&b| b == 0) {
            return Err(corrupt(format!("{} bytes of trailing garbage", rest.len())));
        }
        if exact && op != out.len() {
            return Err(corrupt(format!("the stream decodes to {op} bytes, the chunk has {}", out.len())));
        }
        return Ok(Some(op));
    }
}

/// Inflates into a new buffer, checking the decoded size.
pub fn inflate_to_vec(framing: Framing, name: &str, encoded: &[u8], size: DecodedSize) -> Result<Vec<u8>> {
    let max = size.max();
    let exact = matches!(size, DecodedSize::Exact(_));
    if exact {
        check_decodable(name, encoded, max)?;
    }
    // A large bound is not allocated up front: start from a guess (a gzip stream's recorded size
    // when plausible) and grow while the stream needs more, so damaged data cannot demand memory.
    let mut cap = if exact || max <= GROW_ABOVE {
        max
    } else {
        let isize = match framing {
            Framing::Gzip if encoded.len() >= 18 => {
                u32::from_le_bytes(encoded[encoded.len() - 4..].try_into().unwrap()) as usize
            }
            _ => 0,
        };
        isize.max(encoded.len().saturating_mul(4)).clamp(1 << 16, GROW_ABOVE).min(max)
    };
    loop {
        let mut out = crate::error::try_alloc(cap)?;
        match inflate_or_full(framing, name, encoded, &mut out, exact)? {
            Some(n) => {
                out.truncate(n);
                return Ok(out);
            }
            None if cap < max => cap = cap.saturating_mul(4).min(max),
            None => return Err(Error::Codec(format!("{name}: {}", diagnose(framing, encoded, max)))),
        }
    }
}

/// Output bounds up to which [`inflate_to_vec`] allocates the bound at once.
const GROW_ABOVE: usize = 16 << 20;

/// Compresses `data` at `level` (0-12; 0 stores) in the given framing. Level 1 uses miniz_oxide's
/// greedy parser (faster than libdeflate's level 1); other levels use libdeflate.
pub fn deflate(framing: Framing, level: i32, data: &[u8]) -> Result<Vec<u8>> {
    if level == 1 {
        return Ok(deflate_fast(framing, data));
    }
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if !matches!(&*slot, Some(c) if c.0 == level) {
            // SAFETY: plain allocation; NULL checked.
            let p = unsafe { ld::libdeflate_alloc_compressor(level) };
            if p.is_null() {
                return Err(Error::Internal(format!("libdeflate: cannot make a level {level} compressor")));
            }
            *slot = Some(Compressor(level, p));
        }
        let c = slot.as_ref().unwrap().1;
        // SAFETY: c is a live compressor; the output has `bound` bytes of capacity and libdeflate
        // writes at most that many, returning the count (0 on failure).
        unsafe {
            let bound = match framing {
                Framing::Gzip => ld::libdeflate_gzip_compress_bound(c, data.len()),
                Framing::Zlib => ld::libdeflate_zlib_compress_bound(c, data.len()),
            };
            let mut out: Vec<u8> = Vec::new();
            crate::error::try_reserve(&mut out, bound)?;
            let n = match framing {
                Framing::Gzip => ld::libdeflate_gzip_compress(
                    c,
                    data.as_ptr() as *const c_void,
                    data.len(),
                    out.as_mut_ptr() as *mut c_void,
                    bound,
                ),
                Framing::Zlib => ld::libdeflate_zlib_compress(
                    c,
                    data.as_ptr() as *const c_void,
                    data.len(),
                    out.as_mut_ptr() as *mut c_void,
                    bound,
                ),
            };
            if n == 0 {
                return Err(Error::Internal("libdeflate compression failed".into()));
            }
            out.set_len(n);
            Ok(out)
        }
    })
}

/// Level-1 deflate with miniz_oxide, framed as gzip (header, stream, CRC-32, size) or zlib.
fn deflate_fast(framing: Framing, data: &[u8]) -> Vec<u8> {
    match framing {
        Framing::Zlib => miniz_oxide::deflate::compress_to_vec_zlib(data, 1),
        Framing::Gzip => {
            let body = miniz_oxide::deflate::compress_to_vec(data, 1);
            let mut out = Vec::with_capacity(body.len() + 18);
            // magic, deflate, no flags, mtime 0, extra flags 4 (fastest), OS 255 (unknown)
            out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 0xff]);
            out.extend_from_slice(&body);
            // SAFETY: plain checksum over a live slice.
            let crc = unsafe { ld::libdeflate_crc32(0, data.as_ptr() as *const c_void, data.len()) };
            out.extend_from_slice(&crc.to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::numcodecs::test_vectors::ramp;
    use std::io::Write;

    #[test]
    fn large_bounds_grow_instead_of_allocating() {
        let d: Vec<u8> = (0..(20u32 << 20)).map(|i| (i % 251 / 50) as u8).collect();
        for framing in [Framing::Gzip, Framing::Zlib] {
            let e = deflate(framing, 1, &d).unwrap();
            assert_eq!(inflate_to_vec(framing, "x", &e, DecodedSize::AtMost(1 << 40)).unwrap(), d);
            assert!(matches!(inflate_to_vec(framing, "x", &e, DecodedSize::AtMost(d.len() - 1)), Err(Error::Codec(_))));
            assert!(matches!(inflate_to_vec(framing, "x", &e[..e.len() / 2], DecodedSize::AtMost(1 << 40)), Err(Error::Codec(_))));
        }
    }

    #[test]
    fn gzip_round_trip_and_zlib_interop() {
        let d = ramp(10000);
        for level in [0, 1, 6, 9, 12] {
            let e = deflate(Framing::Gzip, level, &d).unwrap();
            assert_eq!(inflate_to_vec(Framing::Gzip, "gzip", &e, DecodedSize::Exact(d.len())).unwrap(), d);
            let z = deflate(Framing::Zlib, level, &d).unwrap();
            assert_eq!(inflate_to_vec(Framing::Zlib, "zlib", &z, DecodedSize::Exact(d.len())).unwrap(), d);
            // an independent decoder (flate2/zlib-rs) reads both framings
            let mut back = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&e[..]), &mut back).unwrap();
            assert_eq!(back, d, "gzip level {level}");
            let mut back = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(&z[..]), &mut back).unwrap();
            assert_eq!(back, d, "zlib level {level}");
        }
        // streams made by zlib (flate2) decode here, and the other way round
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(5));
        enc.write_all(&d).unwrap();
        let z = enc.finish().unwrap();
        assert_eq!(inflate_to_vec(Framing::Zlib, "zlib", &z, DecodedSize::AtMost(1 << 20)).unwrap(), d);
        let ours = deflate(Framing::Gzip, 1, &d).unwrap();
        let mut back = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&ours[..]), &mut back).unwrap();
        assert_eq!(back, d);
    }

    #[test]
    fn sizes_corruption_members() {
        let d = ramp(10000);
        let e = deflate(Framing::Gzip, 1, &d).unwrap();
        let mut out = vec![0u8; d.len() - 1];
        assert!(inflate_into(Framing::Gzip, "gzip", &e, &mut out, true).is_err(), "too small");
        let mut out = vec![0u8; d.len() + 1];
        assert!(inflate_into(Framing::Gzip, "gzip", &e, &mut out, true).is_err(), "too big for exact");
        assert_eq!(inflate_into(Framing::Gzip, "gzip", &e, &mut out, false).unwrap(), d.len());
        let mut out = vec![0u8; d.len()];
        assert!(inflate_into(Framing::Gzip, "gzip", &e[..e.len() / 2], &mut out, true).is_err(), "truncated");
        let mut bad = e.clone();
        let n = bad.len();
        bad[n - 6] ^= 1; // CRC
        assert!(inflate_into(Framing::Gzip, "gzip", &bad, &mut out, true).is_err(), "crc");
        let mut trailing = e.clone();
        trailing.extend_from_slice(b"xy");
        assert!(inflate_into(Framing::Gzip, "gzip", &trailing, &mut out, true).is_err(), "garbage");
        let mut padded = e.clone();
        padded.extend_from_slice(&[0, 0, 0]);
        inflate_into(Framing::Gzip, "gzip", &padded, &mut out, true).unwrap();
        let mut two = deflate(Framing::Gzip, 1, b"hello ").unwrap();
        two.extend(deflate(Framing::Gzip, 9, b"world").unwrap());
        assert_eq!(inflate_to_vec(Framing::Gzip, "gzip", &two, DecodedSize::Exact(11)).unwrap(), b"hello world");
        assert!(inflate_to_vec(Framing::Gzip, "gzip", b"", DecodedSize::Exact(0)).is_err());
    }
}
