//! numcodecs `pcodec` (array -> bytes): the chunk's numbers in pco's standalone format.
//!
//! numcodecs id `pcodec` (numcodecs `PCodec`, from the `pcodec` package); v3 name `numcodecs.pcodec`.
//! Configuration (numcodecs' defaults): `level` (0..=12, 8), `mode_spec` (`"auto"` | `"classic"`),
//! `delta_spec` (`"auto"` | `"none"` | `"try_consecutive"` | `"try_lookback"`), `paging_spec`
//! (`"equal_pages_up_to"`), `delta_encoding_order` (0..=7 or null; with `delta_spec` `"auto"` it means
//! `try_consecutive` of that order, as numcodecs reads older configurations), `equal_pages_up_to`
//! (262144). Example: `{"name": "numcodecs.pcodec", "configuration": {"level": 8, "delta_spec": "auto"}}`
//!
//! The chunk's elements (C order, native) are compressed as one flat sequence by pco's
//! `standalone::simple_compress` (the `pco` crate, the implementation the `pcodec` package wraps), so
//! the bytes equal numcodecs'. Data types: `int16`, `int32`, `int64`, `uint16`, `uint32`, `uint64`,
//! `float16`, `float32`, `float64`. Decoding fails (`Error::Codec`) unless the stream holds exactly the
//! chunk's count of numbers of the array's type. pco validates the stream itself, but it sizes a
//! chunk's dictionary (dict mode, up to 2^25 entries) from the stream before reading it, so
//! `decompress_into` walks the stream chunk by chunk and refuses, before pco allocates, a chunk
//! that claims more numbers than the buffer has left or a dictionary longer than the bytes that
//! follow it (docs/limits.md).

use crate::codec::numcodecs::V2Config;
use crate::codec::{ArrayRepr, ArrayToBytesCodec};
use crate::dtype::DataType;
use crate::error::{Error, Result};
use pco::data_types::Number;
use pco::{ChunkConfig, DeltaSpec, ModeSpec, PagingSpec};
use serde_json::Value;
use std::borrow::Cow;
use crate::codec::registry::{CodecEntry, Numcodecs, UnderV3, V2Build};

/// The registry entry: numcodecs `pcodec` (array -> bytes; v2 compressor, v3 `numcodecs.pcodec`).
pub static CODEC: CodecEntry = CodecEntry {
    numcodecs: Some(Numcodecs {
        id: "pcodec",
        build: V2Build::ArrayToBytes { build: |c, decoded, json| Ok(Box::new(PcodecCodec::from_config(c, &decoded.data_type, json)?)), fortran: true },
        under_v3: Some(UnderV3::ArrayToBytes),
        v3_defaults: None,
        elementwise: false,
        v1: None,
    }),
    ..CodecEntry::NONE
};

/// Runs `$body` with `$t` the Rust type of `$dt` when it is one of the number types pco handles here,
/// `$other` otherwise: `with_data_type!` with pcodec's set of data types named once (no mapping of
/// its own).
macro_rules! with_pco_type {
    ($dt:expr, $t:ident => $body:expr, _ => $other:expr) => {
        crate::dtype::dispatch::with_data_type!($dt, [Int16 Int32 Int64 UInt16 UInt32 UInt64 Float16 Float32 Float64], $t => $body, _ => $other)
    };
}

/// The numcodecs `pcodec` codec.
#[derive(Debug, Clone)]
pub struct PcodecCodec {
    config: ChunkConfig,
    data_type: DataType,
    json: Value,
}

fn pco_err(what: &str, e: pco::errors::PcoError) -> Error {
    Error::Codec(format!("pcodec: {what}: {e}"))
}

/// Runs `f`, turning a panic inside pco into a codec error (pco reports damaged streams as errors;
/// this is a second line of defence).
fn guarded<R>(what: &str, f: impl FnOnce() -> Result<R>) -> Result<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| Err(Error::Codec(format!("pcodec: {what} failed"))))
}

/// Bytes of a standalone chunk's preamble: its number-type byte and 24 bits of count minus one.
const CHUNK_PREAMBLE_BYTES: usize = 4;
/// pco's mode variant for dictionary mode (4 bits), and the width of its entry count (25 bits).
const DICT_MODE: u8 = 4;
const DICT_LEN_BITS: u32 = 25;

/// Checks a standalone chunk before pco reads its metadata: `src` starts at the chunk's preamble
/// (pco's standalone layout: type byte, count - 1 in 24 bits little-endian, then the chunk metadata,
/// whose first 4 bits are the mode; dictionary mode follows them with its entry count in 25 bits,
/// pads to a byte and stores each entry in full width). Refuses a count beyond `room` numbers and a
/// dictionary longer than the bytes left, which pco would otherwise allocate before finding the
/// stream short. Too short a `src` is left to pco, which reports it.
fn check_chunk<T: Number>(src: &[u8], room: usize) -> Result<()> {
    if src.len() < CHUNK_PREAMBLE_BYTES || src[0] == 0 {
        return Ok(()); // too short for pco too, or the termination byte
    }
    let count = (u32::from_le_bytes([src[1], src[2], src[3], 0]) as usize) + 1;
    if count > room {
        return Err(Error::Codec(format!("pcodec: a chunk of the stream holds {count} numbers, more than the {room} left of the chunk")));
    }
    let meta = &src[CHUNK_PREAMBLE_BYTES..];
    if meta.first().map(|b| b & 0x0f) != Some(DICT_MODE) {
        return Ok(());
    }
    let mut word = [0u8; 4];
    let have = meta.len().min(4);
    word[..have].copy_from_slice(&meta[..have]);
    let entries = ((u32::from_le_bytes(word) >> 4) & ((1 << DICT_LEN_BITS) - 1)) as u64;
    let needed = entries * std::mem::size_of::<T>() as u64;
    // 4 bits of mode + 25 of count, padded to a byte: the entries start 4 bytes into the metadata.
    let left = meta.len().saturating_sub(4) as u64;
    if needed > left {
        return Err(Error::Codec(format!("pcodec: corrupt stream: a dictionary of {entries} entries needs {needed} bytes, {left} are left")));
    }
    Ok(())
}

/// Decodes a standalone pco stream into `dst`, chunk by chunk (what `simple_decompress_into` does),
/// checking each chunk with `check_chunk` before pco reads it. Returns the progress as pco's does:
/// the numbers written, and whether the stream ended.
fn decompress_into<T: Number>(encoded: &[u8], dst: &mut [T]) -> Result<pco::Progress> {
    use pco::standalone::{DecompressorItem, FileDecompressor};
    let (file, mut src) = FileDecompressor::new(encoded).map_err(|e| pco_err("corrupt stream", e))?;
    let mut done = 0usize;
    loop {
        check_chunk::<T>(src, dst.len() - done)?;
        match file.chunk_decompressor::<T, &[u8]>(src).map_err(|e| pco_err("corrupt stream", e))? {
            DecompressorItem::EndOfData(_) => return Ok(pco::Progress { n_processed: done, finished: true }),
            DecompressorItem::Chunk(mut chunk) => {
                let n = chunk.n();
                if n > dst.len() - done {
                    // check_chunk read the same count; this keeps the slice below in bounds whatever pco reads.
                    return Err(Error::Codec(format!("pcodec: a chunk of the stream holds {n} numbers, more than the {} left of the chunk", dst.len() - done)));
                }
                let p = chunk.read(&mut dst[done..done + n]).map_err(|e| pco_err("corrupt stream", e))?;
                if p.n_processed != n || !p.finished {
                    return Err(Error::Codec(format!("pcodec: corrupt stream: a chunk of {n} numbers decoded {}", p.n_processed)));
                }
                done += n;
                src = chunk.into_src();
            }
        }
    }
}

impl PcodecCodec {
    /// Builds the codec from a numcodecs configuration for elements of `dt`; `json` is its metadata object.
    pub fn from_config(c: &V2Config, dt: &DataType, json: Value) -> Result<PcodecCodec> {
        if with_pco_type!(dt, T => false, _ => true) {
            return Err(Error::Unsupported(format!("numcodecs 'pcodec': data type {dt}")));
        }
        let level = c.int("level", 0, 12, Some(8))? as usize;
        let mode_spec = match c.choice("mode_spec", &["auto", "classic"], Some("auto"))? {
            "auto" => ModeSpec::Auto,
            _ => ModeSpec::Classic,
        };
        c.choice("paging_spec", &["equal_pages_up_to"], Some("equal_pages_up_to"))?;
        let pages = c.int("equal_pages_up_to", 1, 1 << 24, Some(pco::DEFAULT_MAX_PAGE_N as i64))? as usize;
        let order = match c.get("delta_encoding_order") {
            None => None,
            Some(_) => Some(c.int("delta_encoding_order", 0, 7, None)? as usize),
        };
        let spec = c.choice("delta_spec", &["auto", "none", "try_consecutive", "try_lookback"], Some("auto"))?;
        let delta_spec = match (spec, order) {
            ("auto", Some(o)) | ("try_consecutive", Some(o)) => DeltaSpec::TryConsecutive(o),
            ("try_consecutive", None) => return Err(c.invalid("delta_encoding_order", "required with delta_spec 'try_consecutive'")),
            (_, Some(_)) => return Err(c.invalid("delta_encoding_order", "only allowed with delta_spec 'try_consecutive' or 'auto'")),
            ("auto", None) => DeltaSpec::Auto,
            ("none", None) => DeltaSpec::NoOp,
            _ => DeltaSpec::TryLookback,
        };
        let config = ChunkConfig::default()
            .with_compression_level(level)
            .with_mode_spec(mode_spec)
            .with_delta_spec(delta_spec)
            .with_paging_spec(PagingSpec::EqualPagesUpTo(pages));
        Ok(PcodecCodec { config, data_type: dt.clone(), json })
    }

    fn encode_typed<T: Number>(&self, data: &[u8]) -> Result<Vec<u8>> {
        // SAFETY: every bit pattern is a valid T (plain integers and floats).
        let (pre, mid, post) = unsafe { data.align_to::<T>() };
        let copy;
        let nums: &[T] = if pre.is_empty() && post.is_empty() {
            mid
        } else {
            let mut v = vec![T::default(); data.len() / std::mem::size_of::<T>()];
            // SAFETY: `v` has exactly data.len() bytes of plain numbers.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), v.as_mut_ptr().cast::<u8>(), data.len()) };
            copy = v;
            &copy
        };
        guarded("compression", || pco::standalone::simple_compress(nums, &self.config).map_err(|e| pco_err("compression", e)))
    }

    fn decode_typed<T: Number>(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        let n = out.len() / std::mem::size_of::<T>();
        let check = |p: pco::Progress| {
            if p.n_processed != n || !p.finished {
                return Err(Error::Codec(format!(
                    "pcodec: stream holds {} numbers, expected {n}",
                    if p.finished { p.n_processed.to_string() } else { "more".into() }
                )));
            }
            Ok(())
        };
        // SAFETY: every bit pattern is a valid T.
        let (pre, mid, post) = unsafe { out.align_to_mut::<T>() };
        if pre.is_empty() && post.is_empty() {
            return check(guarded("decompression", || decompress_into(encoded, mid))?);
        }
        let mut v = vec![T::default(); n];
        check(guarded("decompression", || decompress_into(encoded, &mut v))?)?;
        // SAFETY: `v` holds exactly out.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr().cast::<u8>(), out.as_mut_ptr(), out.len()) };
        Ok(())
    }
}

impl ArrayToBytesCodec for PcodecCodec {
    fn encode<'a>(&self, data: Cow<'a, [u8]>, _repr: &ArrayRepr) -> Result<Cow<'a, [u8]>> {
        with_pco_type!(&self.data_type, T => self.encode_typed::<T>(&data), _ => Err(Error::Internal("pcodec: no number type".into()))).map(Cow::Owned)
    }

    fn decode_into(&self, encoded: &[u8], _repr: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        with_pco_type!(&self.data_type, T => self.decode_typed::<T>(encoded, out), _ => Err(Error::Internal("pcodec: no number type".into())))
    }

    fn encoded_size(&self, _repr: &ArrayRepr) -> Option<u64> {
        None
    }

    fn to_json(&self) -> Value {
        self.json.clone()
    }
}

#[cfg(test)]
mod tests {
    use crate::codec::numcodecs::v3::from_v3;
    use crate::codec::{ArrayRepr, Codec};
    use crate::dtype::DataType;
    use crate::error::Error;
    use serde_json::{json, Value};
    use std::borrow::Cow;

    fn build(cfg: Value, dt: DataType, n: u64) -> (Box<dyn crate::codec::ArrayToBytesCodec>, ArrayRepr) {
        let repr = ArrayRepr { shape: vec![n], fill_value: vec![0; dt.size()], data_type: dt };
        let Codec::ArrayToBytes(c) = from_v3("numcodecs.pcodec", cfg.as_object(), &repr).unwrap() else { panic!() };
        (c, repr)
    }

    #[test]
    fn roundtrip_and_damage() {
        let data: Vec<u8> = (0..1000i64).flat_map(|v| (v * v * 3 - 7000).to_ne_bytes()).collect();
        for cfg in [
            json!({}),
            json!({"level": 0, "mode_spec": "classic", "delta_spec": "none"}),
            json!({"delta_spec": "try_lookback", "equal_pages_up_to": 100}),
            json!({"delta_encoding_order": 2}),
        ] {
            let (c, repr) = build(cfg.clone(), DataType::Int64, 1000);
            let enc = c.encode(Cow::Borrowed(&data), &repr).unwrap().into_owned();
            let mut out = vec![0u8; data.len()];
            c.decode_into(&enc, &repr, &mut out).unwrap();
            assert_eq!(out, data, "{cfg}");
            // misaligned output buffer
            let mut shifted = vec![0u8; data.len() + 1];
            c.decode_into(&enc, &repr, &mut shifted[1..]).unwrap();
            assert_eq!(&shifted[1..], &data[..], "{cfg}");
            for cut in [0, 3, enc.len() / 2, enc.len() - 1] {
                let r = c.decode_into(&enc[..cut], &repr, &mut out);
                assert!(matches!(r, Err(Error::Codec(_))), "{cfg} cut to {cut}: {r:?}");
            }
            // another count or type than the array's
            let (small, srepr) = build(cfg.clone(), DataType::Int64, 999);
            assert!(matches!(small.decode_into(&enc, &srepr, &mut out[..999 * 8]), Err(Error::Codec(_))));
            let (u, urepr) = build(cfg.clone(), DataType::UInt64, 1000);
            assert!(matches!(u.decode_into(&enc, &urepr, &mut out), Err(Error::Codec(_))));
        }
    }

    /// A dictionary-mode stream (pco's `TryDict`, several chunks) decodes; the same stream with a
    /// chunk's dictionary claimed longer than the bytes that follow fails with a codec error before
    /// pco sizes the dictionary (the fuzzer's crash: 159 MB allocated for a 300-byte chunk).
    #[test]
    fn dictionary_longer_than_stream() {
        use pco::standalone::{DecompressorItem, FileDecompressor};
        let values = [-5i64, 1000, 1 << 40, 7];
        let nums: Vec<i64> = (0..1000).map(|i| values[(i % 4 + i / 5) % 4]).collect();
        let data: Vec<u8> = nums.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let config = pco::ChunkConfig::default().with_mode_spec(pco::ModeSpec::TryDict).with_paging_spec(pco::PagingSpec::EqualPagesUpTo(400));
        let enc = pco::standalone::simple_compress(&nums, &config).unwrap();
        let (c, repr) = build(json!({}), DataType::Int64, 1000);
        let mut out = vec![0u8; data.len()];
        c.decode_into(&enc, &repr, &mut out).unwrap();
        assert_eq!(out, data);
        // The offsets of the chunks, from pco's own reader.
        let (file, mut src) = FileDecompressor::new(&enc[..]).unwrap();
        let mut starts = vec![];
        while let DecompressorItem::Chunk(mut chunk) = file.chunk_decompressor::<i64, &[u8]>(src).unwrap() {
            starts.push(enc.len() - src.len());
            let mut v = vec![0i64; chunk.n()];
            chunk.read(&mut v).unwrap();
            src = chunk.into_src();
        }
        assert_eq!(starts.len(), 3);
        for &at in &starts {
            let meta = &enc[at + super::CHUNK_PREAMBLE_BYTES..];
            assert_eq!(meta[0] & 0x0f, super::DICT_MODE, "chunk at {at} is in dictionary mode");
            let entries = (u32::from_le_bytes(meta[..4].try_into().unwrap()) >> 4) & ((1 << 25) - 1);
            assert_eq!(entries, 4, "the layout check_chunk reads");
            for claim in [5u32, (1 << 25) - 1] {
                let mut bad = enc.clone();
                let word = (u32::from_le_bytes(meta[..4].try_into().unwrap()) & 0xe000_000f) | (claim << 4);
                bad[at + 4..at + 8].copy_from_slice(&word.to_le_bytes());
                match c.decode_into(&bad, &repr, &mut out) {
                    Err(Error::Codec(m)) if claim == (1 << 25) - 1 => assert!(m.contains("dictionary of 33554431 entries"), "{m}"),
                    Err(Error::Codec(_)) => {}
                    r => panic!("chunk at {at}, {claim} entries: {r:?}"),
                }
            }
        }
    }

    #[test]
    fn configurations() {
        for (cfg, ok) in [
            (json!({"level": 13}), false),
            (json!({"mode_spec": "dict"}), false),
            (json!({"delta_spec": "try_consecutive"}), false),
            (json!({"delta_spec": "none", "delta_encoding_order": 1}), false),
            (json!({"delta_spec": "try_consecutive", "delta_encoding_order": 7}), true),
            (json!({"paging_spec": "exact"}), false),
            (json!({"equal_pages_up_to": 0}), false),
        ] {
            let repr = ArrayRepr { shape: vec![30], fill_value: vec![0; 4], data_type: DataType::Float32 };
            assert_eq!(from_v3("numcodecs.pcodec", cfg.as_object(), &repr).is_ok(), ok, "{cfg}");
        }
        let repr = ArrayRepr { shape: vec![30], fill_value: vec![0], data_type: DataType::UInt8 };
        assert!(matches!(from_v3("numcodecs.pcodec", None, &repr), Err(Error::Unsupported(_))));
    }
}
