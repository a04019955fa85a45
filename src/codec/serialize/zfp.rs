//! `zfp` codec (array -> bytes): a chunk compressed as one zfp field, without a zfp header.
//!
//! Spec: zarr-extensions `codecs/zfp`. v3 name: `zfp`. Configuration: `mode` (`"reversible"`,
//! `"fixed_rate"` + `rate` (number), `"fixed_precision"` + `precision` (integer), `"fixed_accuracy"` +
//! `tolerance` (number), `"expert"` + `minbits`, `maxbits`, `maxprec`, `minexp`); no other member.
//! Example: `{"name": "zfp", "configuration": {"mode": "fixed_accuracy", "tolerance": 0.05}}`
//!
//! The chunk (C order, rank 1 to 4; rank 0 is a 1-D field of one value) is the zfp field
//! `[nw, nz, ny, nx]` (last dimension fastest) of type int32, int64, float or double, compressed with
//! `zfp_compress` (the stream ends on a 64-bit word boundary). Data types: `int32`, `int64`,
//! `float32`, `float64` as they are; `float16` cast to float32; `int8`, `int16`, `uint8`, `uint16`
//! promoted to int32 as zfp's `zfp_promote_*` do (`i << (31 - N)`, `(u - 2^(N-1)) << (31 - N)`) and
//! demoted with clamping as `zfp_demote_*` do; `uint32` / `uint64` are offset by `2^31` / `2^63`
//! (the same mapping with no shift) into int32 / int64. In fixed-rate mode the rate is set for the
//! field's zfp type (`zfp_stream_set_rate(rate, type, dims, 0)`).
//!
//! The zfp C library (1.0, from the `zfp-sys-cc` crate) does no bounds checking while reading a stream,
//! so decoding copies the stream into a buffer padded by the most any block can read (a bound from
//! the decoder's structure, and the mode's `minbits` checked against the stored size), then fails if
//! the decoder used bytes beyond the stored stream (zfp streams are whole 64-bit words; the padding
//! is one bits, which a decoder cannot take for short blocks, so a cut stream is detected). The numcodecs `zfpy` codec (stream with a full
//! zfp header) shares this machinery: see [`crate::codec::serialize::zfpy`].

use crate::codec::{ArrayRepr, ArrayToBytesCodec, Config};
use crate::dtype::DataType;
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use zfp_sys_cc as z;
use crate::codec::registry::CodecEntry;
use crate::codec::Codec;

/// The registry entry: v3 `zfp`.
pub static CODEC: CodecEntry = CodecEntry::v3("zfp", |_, cfg, decoded| Ok(Codec::ArrayToBytes(Box::new(ZfpCodec::from_v3(cfg, decoded)?))));

/// A zfp compression mode.
#[derive(Debug, Clone, PartialEq)]
pub enum ZfpMode {
    /// Lossless.
    Reversible,
    /// Expert mode: zfp's four parameters.
    Expert {
        /// Minimum bits per block.
        minbits: u32,
        /// Maximum bits per block.
        maxbits: u32,
        /// Maximum bit planes per block.
        maxprec: u32,
        /// Smallest bit plane exponent coded.
        minexp: i32,
    },
    /// Fixed accuracy: absolute error at most `tolerance`.
    FixedAccuracy(f64),
    /// Fixed rate: bits per value.
    FixedRate(f64),
    /// Fixed precision: bit planes per block.
    FixedPrecision(u32),
}

impl ZfpMode {
    /// Checks the parameters against what zfp accepts; `what` names the codec in messages.
    pub fn validate(&self, what: &str) -> Result<()> {
        let bad = |m: String| Err(Error::Metadata(format!("codec '{what}': {m}")));
        match *self {
            ZfpMode::Reversible => Ok(()),
            ZfpMode::FixedAccuracy(t) if !(t.is_finite() && t >= 0.0) => bad(format!("tolerance {t} is not a finite number >= 0")),
            ZfpMode::FixedRate(r) if !(r > 0.0 && r <= 64.0) => bad(format!("rate {r} is not in (0, 64]")),
            ZfpMode::FixedPrecision(p) if p > z::ZFP_MAX_PREC => bad(format!("precision {p} is above {}", z::ZFP_MAX_PREC)),
            ZfpMode::Expert { minbits, maxbits, maxprec, minexp } => {
                if minbits > maxbits || maxbits > z::ZFP_MAX_BITS || !(1..=z::ZFP_MAX_PREC).contains(&maxprec) || minexp < z::ZFP_MIN_EXP {
                    return bad(format!(
                        "expert parameters minbits {minbits}, maxbits {maxbits}, maxprec {maxprec}, minexp {minexp} are not \
                         0 <= minbits <= maxbits <= {}, 1 <= maxprec <= 64, minexp >= {}",
                        z::ZFP_MAX_BITS,
                        z::ZFP_MIN_EXP
                    ));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// The zfp scalar types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZType {
    /// 32-bit signed integers.
    Int32,
    /// 64-bit signed integers.
    Int64,
    /// IEEE single precision.
    Float,
    /// IEEE double precision.
    Double,
}

impl ZType {
    fn raw(self) -> z::zfp_type {
        match self {
            ZType::Int32 => z::zfp_type_zfp_type_int32,
            ZType::Int64 => z::zfp_type_zfp_type_int64,
            ZType::Float => z::zfp_type_zfp_type_float,
            ZType::Double => z::zfp_type_zfp_type_double,
        }
    }

    fn from_raw(t: z::zfp_type) -> Option<ZType> {
        Some(match t {
            z::zfp_type_zfp_type_int32 => ZType::Int32,
            z::zfp_type_zfp_type_int64 => ZType::Int64,
            z::zfp_type_zfp_type_float => ZType::Float,
            z::zfp_type_zfp_type_double => ZType::Double,
            _ => return None,
        })
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            ZType::Int32 | ZType::Float => 4,
            ZType::Int64 | ZType::Double => 8,
        }
    }

    /// The zfp type holding `dt` unchanged (`int32`, `int64`, `float32`, `float64`).
    pub fn exact(dt: &DataType) -> Option<ZType> {
        Some(match dt {
            DataType::Int32 => ZType::Int32,
            DataType::Int64 => ZType::Int64,
            DataType::Float32 => ZType::Float,
            DataType::Float64 => ZType::Double,
            _ => return None,
        })
    }
}

/// A zfp stream and its bit stream, closed on drop.
struct Stream {
    zfp: *mut z::zfp_stream,
    bits: *mut z::bitstream,
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: both were opened by `Stream::open` (or are null) and are closed once.
        unsafe {
            if !self.zfp.is_null() {
                z::zfp_stream_close(self.zfp);
            }
            if !self.bits.is_null() {
                z::stream_close(self.bits);
            }
        }
    }
}

impl Stream {
    /// A zfp stream without a bit stream yet.
    fn open() -> Result<Stream> {
        // SAFETY: a null bit stream is allowed; the result is checked.
        let zfp = unsafe { z::zfp_stream_open(std::ptr::null_mut()) };
        if zfp.is_null() {
            return Err(Error::Internal("zfp: cannot allocate a stream".into()));
        }
        Ok(Stream { zfp, bits: std::ptr::null_mut() })
    }

    /// Attaches `buf` as the bit stream and rewinds. `buf` must outlive every use of the stream.
    fn attach(&mut self, buf: &mut [u64]) -> Result<()> {
        // SAFETY: the buffer is valid for its length in bytes; zfp reads and writes whole words within it.
        unsafe {
            self.bits = z::stream_open(buf.as_mut_ptr().cast(), buf.len() * 8);
            if self.bits.is_null() {
                return Err(Error::Internal("zfp: cannot allocate a bit stream".into()));
            }
            z::zfp_stream_set_bit_stream(self.zfp, self.bits);
            z::zfp_stream_rewind(self.zfp);
        }
        Ok(())
    }

    /// Sets the compression mode; in fixed-rate mode the rate is set for `rate_type` (`None`: zfp's
    /// `zfp_type_none`, as zfpy does) and `dims` dimensions.
    fn set_mode(&mut self, mode: &ZfpMode, rate_type: Option<ZType>, dims: u32) -> Result<()> {
        // SAFETY: the stream is open; the parameters were validated.
        unsafe {
            match *mode {
                ZfpMode::Reversible => z::zfp_stream_set_reversible(self.zfp),
                ZfpMode::FixedAccuracy(t) => {
                    z::zfp_stream_set_accuracy(self.zfp, t);
                }
                ZfpMode::FixedPrecision(p) => {
                    z::zfp_stream_set_precision(self.zfp, p);
                }
                ZfpMode::FixedRate(r) => {
                    let t = rate_type.map_or(z::zfp_type_zfp_type_none, ZType::raw);
                    z::zfp_stream_set_rate(self.zfp, r, t, dims, 0);
                }
                ZfpMode::Expert { minbits, maxbits, maxprec, minexp } => {
                    if z::zfp_stream_set_params(self.zfp, minbits, maxbits, maxprec, minexp) == 0 {
                        return Err(Error::Metadata(format!("zfp: expert parameters {mode:?} refused")));
                    }
                }
            }
        }
        Ok(())
    }

    /// Fails when the mode gives blocks of type `t` fewer bits than zfp's encoder writes for a block
    /// header (1 + 8 exponent bits for floats, 1 + 11 for doubles): zfp then computes a negative budget
    /// and writes past its buffer. zfp raises such rates itself only when told the type.
    fn check_budget(&self, t: ZType) -> Result<()> {
        let need = match t {
            ZType::Float => 9,
            ZType::Double => 12,
            ZType::Int32 | ZType::Int64 => 0,
        };
        // SAFETY: the stream is open.
        let maxbits = unsafe { (*self.zfp).maxbits };
        if maxbits < need {
            return Err(Error::Unsupported(format!("zfp: {maxbits} bits per block is below the {need} a {t:?} block needs")));
        }
        Ok(())
    }

    fn minbits(&self) -> u32 {
        // SAFETY: the stream is open.
        unsafe { (*self.zfp).minbits }
    }
}

/// Fails unless chunks of field dimensions `d` and type `t` can be written with `mode` (see
/// [`compress`]): checked when a codec is built, so that writes are refused up front.
pub fn check_writable(mode: &ZfpMode, t: ZType, d: &[usize; 4], rate_type: Option<ZType>) -> Result<()> {
    let mut s = Stream::open()?;
    s.set_mode(mode, rate_type, rank(d))?;
    s.check_budget(t)
}

/// The zfp field dimensions `[nx, ny, nz, nw]` (unused ones 0) of a C-order chunk shape of rank 0 to 4.
pub fn field_dims(shape: &[u64]) -> Result<[usize; 4]> {
    if shape.len() > 4 {
        return Err(Error::Unsupported(format!("zfp: chunks of rank {} (more than 4 dimensions)", shape.len())));
    }
    let mut d = [0usize; 4];
    if shape.is_empty() {
        d[0] = 1;
    }
    for (i, &n) in shape.iter().rev().enumerate() {
        d[i] = usize::try_from(n).map_err(|_| Error::Unsupported(format!("zfp: dimension {n} too large")))?;
    }
    Ok(d)
}

fn rank(d: &[usize; 4]) -> u32 {
    d.iter().filter(|&&n| n > 0).count() as u32
}

fn field(t: ZType, d: &[usize; 4], data: *mut std::ffi::c_void) -> z::zfp_field {
    z::zfp_field { type_: t.raw(), nx: d[0], ny: d[1], nz: d[2], nw: d[3], sx: 0, sy: 0, sz: 0, sw: 0, data }
}

/// Compresses `values` (native elements of `t`, field dimensions `d`) with `mode`, after a full zfp
/// header when `header`; see [`Stream::set_mode`] for `rate_type`.
pub fn compress(values: &[u8], t: ZType, d: &[usize; 4], mode: &ZfpMode, rate_type: Option<ZType>, header: bool) -> Result<Vec<u8>> {
    let n: usize = d.iter().filter(|&&n| n > 0).product();
    if values.len() != n * t.size() {
        return Err(Error::Internal(format!("zfp: {} bytes for {n} values", values.len())));
    }
    let f = field(t, d, values.as_ptr() as *mut _);
    let mut s = Stream::open()?;
    s.set_mode(mode, rate_type, rank(d))?;
    s.check_budget(t)?;
    // SAFETY: the field describes `values` exactly; zfp only reads through it when compressing.
    let max = unsafe { z::zfp_stream_maximum_size(s.zfp, &f) };
    if max == 0 {
        return Err(Error::Codec(format!("zfp: cannot compress with {mode:?}")));
    }
    let mut buf = vec![0u64; max.div_ceil(8) + 1];
    s.attach(&mut buf)?;
    // SAFETY: stream and field are valid; the buffer holds zfp's maximum size for them.
    let size = unsafe {
        if header && z::zfp_write_header(s.zfp, &f, z::ZFP_HEADER_FULL) == 0 {
            return Err(Error::Codec("zfp: cannot write the header".into()));
        }
        z::zfp_compress(s.zfp, &f)
    };
    if size == 0 || size > buf.len() * 8 {
        return Err(Error::Codec("zfp: compression failed".into()));
    }
    let mut out = Vec::with_capacity(size);
    for w in &buf[..size.div_ceil(8)] {
        out.extend_from_slice(&w.to_ne_bytes());
    }
    out.truncate(size);
    Ok(out)
}

/// What a stream's header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Scalar type.
    pub ztype: ZType,
    /// Field dimensions `[nx, ny, nz, nw]`, unused ones 0.
    pub dims: [usize; 4],
}

/// How to decode: with the mode and field known (no header), or from a full zfp header.
#[derive(Clone, Copy)]
pub enum Source<'a> {
    /// No header: the stream was written with this mode, type and field.
    Known {
        /// The compression mode.
        mode: &'a ZfpMode,
        /// The type the rate was set for (fixed-rate mode), see [`compress`].
        rate_type: Option<ZType>,
        /// The values' type.
        ztype: ZType,
        /// Field dimensions `[nx, ny, nz, nw]`.
        dims: [usize; 4],
    },
    /// A full zfp header (magic, field, mode) starts the stream; `check` accepts or refuses it before
    /// any value is decoded.
    Header {
        /// Called with the header read.
        check: &'a dyn Fn(&Header) -> Result<()>,
    },
}

/// Upper bound on the bits the zfp decoder reads for one block of `dims` dimensions of type `t`,
/// beyond `minbits` (from the structure of zfp 1.0's `decode_ints` and block headers): at most
/// `intprec` bit planes of `values` verbatim bits, two group-test bits per value and one per plane,
/// and at most 64 bits of exponent / precision header.
fn block_read_bound(t: ZType, dims: u32) -> usize {
    let values = 1usize << (2 * dims);
    let intprec = t.size() * 8;
    values * (intprec + 2) + intprec + 64
}

/// Decodes a zfp stream into `out` (native elements of the field's type, exactly the field's size).
pub fn decompress(encoded: &[u8], src: Source, out: &mut [u8]) -> Result<()> {
    if encoded.is_empty() {
        return Err(Error::Codec("zfp: empty stream".into()));
    }
    // The stream, word-aligned, with room for the header and for what the decoder may read past the
    // stored bytes of a damaged stream. Grown below once the field is known.
    let words = encoded.len().div_ceil(8);
    let mut buf: Vec<u64> = Vec::new();
    let fill = |buf: &mut Vec<u64>, extra: usize| -> Result<()> {
        buf.clear();
        crate::error::try_reserve(buf, words + extra)?;
        buf.extend(encoded.chunks(8).map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_ne_bytes(w)
        }));
        // One bits: a decoder reading past the stream decodes non-zero blocks at full length and so
        // runs past the stored words (checked below) instead of reading short zero blocks.
        if !encoded.len().is_multiple_of(8) {
            let last = words - 1;
            let kept = encoded.len() % 8;
            let mut w = buf[last].to_ne_bytes();
            w[kept..].fill(0xff);
            buf[last] = u64::from_ne_bytes(w);
        }
        buf.resize(words + extra, u64::MAX);
        Ok(())
    };
    let header_words = (z::ZFP_HEADER_MAX_BITS as usize).div_ceil(64) + 2;
    let mut s = Stream::open()?;
    let (ztype, dims) = match src {
        Source::Known { mode, rate_type, ztype, dims } => {
            s.set_mode(mode, rate_type, rank(&dims))?;
            (ztype, dims)
        }
        Source::Header { check } => {
            fill(&mut buf, header_words)?;
            s.attach(&mut buf)?;
            let mut f = field(ZType::Int32, &[0; 4], std::ptr::null_mut());
            // SAFETY: the buffer holds the whole header's bits; the field is plain data.
            if unsafe { z::zfp_read_header(s.zfp, &mut f, z::ZFP_HEADER_FULL) } == 0 {
                return Err(Error::Codec("zfpy: no valid zfp header".into()));
            }
            let ztype = ZType::from_raw(f.type_).ok_or_else(|| Error::Codec(format!("zfpy: header has zfp type {}", f.type_)))?;
            let dims = [f.nx, f.ny, f.nz, f.nw];
            check(&Header { ztype, dims })?;
            (ztype, dims)
        }
    };
    let r = rank(&dims);
    let mut n = 1usize;
    let mut blocks = 1usize;
    for &d in dims.iter().filter(|&&d| d > 0) {
        n = n.checked_mul(d).ok_or_else(|| Error::Codec("zfp: field too large".into()))?;
        blocks = blocks.checked_mul(d.div_ceil(4)).ok_or_else(|| Error::Codec("zfp: field too large".into()))?;
    }
    if r == 0 || n.checked_mul(ztype.size()) != Some(out.len()) {
        return Err(Error::Codec(format!("zfp: field of {n} values of {} bytes, expected {} bytes", ztype.size(), out.len())));
    }
    // Blocks are at least `minbits` long: a shorter stream is cut short (checked before padding for it).
    let min_bits = blocks as u128 * u128::from(s.minbits());
    if min_bits > encoded.len() as u128 * 8 {
        return Err(Error::Codec(format!("zfp: stream of {} bytes is shorter than its {blocks} blocks", encoded.len())));
    }
    let pad_bits = blocks
        .checked_mul(block_read_bound(ztype, r))
        .and_then(|b| b.checked_add(z::ZFP_HEADER_MAX_BITS as usize + 256))
        .ok_or_else(|| Error::Codec("zfp: field too large".into()))?;
    let header_bits = match src {
        Source::Header { .. } => {
            // SAFETY: the bit stream is attached to `buf`.
            unsafe { z::stream_rtell(s.bits) as usize }
        }
        Source::Known { .. } => 0,
    };
    fill(&mut buf, pad_bits.div_ceil(64))?;
    // Re-attach the (reallocated) buffer and skip a header already read.
    if !s.bits.is_null() {
        // SAFETY: closes the bit stream opened on the old buffer.
        unsafe { z::stream_close(s.bits) };
        s.bits = std::ptr::null_mut();
    }
    s.attach(&mut buf)?;
    let mut f = field(ztype, &dims, out.as_mut_ptr().cast());
    // SAFETY: `out` holds exactly the field's values; the bit stream's buffer covers every bit the
    // decoder can read (see `block_read_bound`); `header_bits` lie within the stored stream.
    let used = unsafe {
        if header_bits > 0 {
            z::stream_skip(s.bits, header_bits as z::bitstream_size);
        }
        z::zfp_decompress(s.zfp, &mut f)
    };
    if used == 0 {
        return Err(Error::Codec("zfp: decompression failed".into()));
    }
    if used > encoded.len() {
        return Err(Error::Codec(format!("zfp: stream of {} bytes ends before its last block", encoded.len())));
    }
    Ok(())
}

/// How a chunk's elements become zfp values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conv {
    /// Stored as they are.
    Same,
    /// float16 <-> float32.
    Half,
    /// intN / uintN (N = 8, 16) promoted to int32: `(v - offset) << shift`.
    Promote { signed: bool, bits: u32 },
    /// uint32 / uint64 with the top bit flipped.
    Offset,
}

fn conv_for(dt: &DataType) -> Option<(ZType, Conv)> {
    Some(match dt {
        DataType::Int32 => (ZType::Int32, Conv::Same),
        DataType::Int64 => (ZType::Int64, Conv::Same),
        DataType::Float32 => (ZType::Float, Conv::Same),
        DataType::Float64 => (ZType::Double, Conv::Same),
        DataType::Float16 => (ZType::Float, Conv::Half),
        DataType::Int8 => (ZType::Int32, Conv::Promote { signed: true, bits: 8 }),
        DataType::Int16 => (ZType::Int32, Conv::Promote { signed: true, bits: 16 }),
        DataType::UInt8 => (ZType::Int32, Conv::Promote { signed: false, bits: 8 }),
        DataType::UInt16 => (ZType::Int32, Conv::Promote { signed: false, bits: 16 }),
        DataType::UInt32 => (ZType::Int32, Conv::Offset),
        DataType::UInt64 => (ZType::Int64, Conv::Offset),
        _ => return None,
    })
}

/// The registered `zfp` codec.
#[derive(Debug, Clone)]
pub struct ZfpCodec {
    mode: ZfpMode,
    ztype: ZType,
    conv: Conv,
}

impl ZfpCodec {
    /// A codec for chunks of `dt` with `mode`.
    pub fn new(mode: ZfpMode, dt: &DataType) -> Result<ZfpCodec> {
        mode.validate("zfp")?;
        let (ztype, conv) = conv_for(dt).ok_or_else(|| Error::Unsupported(format!("codec 'zfp': data type {dt}")))?;
        Ok(ZfpCodec { mode, ztype, conv })
    }

    /// Parses the v3 configuration for chunks of `decoded`.
    pub fn from_v3(cfg: Option<&Map<String, Value>>, decoded: &ArrayRepr) -> Result<ZfpCodec> {
        let c = Config::new("zfp", cfg, &["mode", "rate", "precision", "tolerance", "minbits", "maxbits", "maxprec", "minexp"])?;
        let mode = c.choice("mode", &["reversible", "expert", "fixed_accuracy", "fixed_rate", "fixed_precision"], None)?;
        let allowed: &[&str] = match mode {
            "reversible" => &["mode"],
            "expert" => &["mode", "minbits", "maxbits", "maxprec", "minexp"],
            "fixed_accuracy" => &["mode", "tolerance"],
            "fixed_rate" => &["mode", "rate"],
            _ => &["mode", "precision"],
        };
        Config::new("zfp", cfg, allowed)?;
        let u32_of = |k: &str| -> Result<u32> { Ok(c.int(k, 0, i64::from(u32::MAX), None)? as u32) };
        let mode = match mode {
            "reversible" => ZfpMode::Reversible,
            "expert" => ZfpMode::Expert {
                minbits: u32_of("minbits")?,
                maxbits: u32_of("maxbits")?,
                maxprec: u32_of("maxprec")?,
                minexp: c.int("minexp", i64::from(i32::MIN), i64::from(i32::MAX), None)? as i32,
            },
            "fixed_accuracy" => ZfpMode::FixedAccuracy(c.float("tolerance", None)?),
            "fixed_rate" => ZfpMode::FixedRate(c.float("rate", None)?),
            _ => ZfpMode::FixedPrecision(u32_of("precision")?),
        };
        let c = ZfpCodec::new(mode, &decoded.data_type)?;
        check_writable(&c.mode, c.ztype, &field_dims(&decoded.shape)?, Some(c.ztype))?;
        Ok(c)
    }

    /// The chunk's elements as zfp values.
    fn to_values<'a>(&self, data: &'a [u8]) -> Cow<'a, [u8]> {
        match self.conv {
            Conv::Same => Cow::Borrowed(data),
            Conv::Half => Cow::Owned(
                data.chunks_exact(2)
                    .flat_map(|c| half::f16::from_ne_bytes([c[0], c[1]]).to_f32().to_ne_bytes())
                    .collect(),
            ),
            Conv::Promote { signed, bits } => {
                let shift = 31 - bits;
                let w = (bits / 8) as usize;
                Cow::Owned(
                    data.chunks_exact(w)
                        .flat_map(|c| {
                            let v: i32 = match (signed, w) {
                                (true, 1) => i32::from(c[0] as i8),
                                (true, _) => i32::from(i16::from_ne_bytes([c[0], c[1]])),
                                (false, 1) => i32::from(c[0]) - 0x80,
                                (false, _) => i32::from(u16::from_ne_bytes([c[0], c[1]])) - 0x8000,
                            };
                            (v << shift).to_ne_bytes()
                        })
                        .collect(),
                )
            }
            Conv::Offset => {
                let mut v = data.to_vec();
                flip_top_bits(&mut v, self.ztype.size());
                Cow::Owned(v)
            }
        }
    }

    /// zfp values back into the chunk's elements (`out`).
    fn values_to_elements(&self, values: &[u8], out: &mut [u8]) {
        match self.conv {
            Conv::Same => out.copy_from_slice(values),
            Conv::Half => {
                for (o, c) in out.chunks_exact_mut(2).zip(values.chunks_exact(4)) {
                    let f = f32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
                    o.copy_from_slice(&half::f16::from_f32(f).to_ne_bytes());
                }
            }
            Conv::Promote { signed, bits } => {
                let shift = 31 - bits;
                let w = (bits / 8) as usize;
                for (o, c) in out.chunks_exact_mut(w).zip(values.chunks_exact(4)) {
                    let v = i32::from_ne_bytes([c[0], c[1], c[2], c[3]]) >> shift;
                    let half = 1i32 << (bits - 1);
                    let v = if signed { v.clamp(-half, half - 1) } else { (v + half).clamp(0, 2 * half - 1) };
                    if w == 1 {
                        o[0] = v as u8;
                    } else {
                        o.copy_from_slice(&(v as u16).to_ne_bytes());
                    }
                }
            }
            Conv::Offset => {
                out.copy_from_slice(values);
                flip_top_bits(out, self.ztype.size());
            }
        }
    }
}

/// Flips the most significant bit of each native-endian `w`-byte integer (`u - 2^(8w-1)` as signed).
fn flip_top_bits(v: &mut [u8], w: usize) {
    let top = if cfg!(target_endian = "little") { w - 1 } else { 0 };
    for c in v.chunks_exact_mut(w) {
        c[top] ^= 0x80;
    }
}

impl ArrayToBytesCodec for ZfpCodec {
    fn encode<'a>(&self, data: Cow<'a, [u8]>, repr: &ArrayRepr) -> Result<Cow<'a, [u8]>> {
        let dims = field_dims(&repr.shape)?;
        let values = self.to_values(&data);
        Ok(Cow::Owned(compress(&values, self.ztype, &dims, &self.mode, Some(self.ztype), false)?))
    }

    fn decode_into(&self, encoded: &[u8], repr: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        let dims = field_dims(&repr.shape)?;
        let src = Source::Known { mode: &self.mode, rate_type: Some(self.ztype), ztype: self.ztype, dims };
        if self.conv == Conv::Same {
            return decompress(encoded, src, out);
        }
        let n = repr.num_elements() as usize;
        crate::scratch::with_decoded(n * self.ztype.size(), |values| {
            decompress(encoded, src, values)?;
            self.values_to_elements(values, out);
            Ok(())
        })
    }

    fn encoded_size(&self, _repr: &ArrayRepr) -> Option<u64> {
        None
    }

    fn to_json(&self) -> Value {
        let cfg = match self.mode {
            ZfpMode::Reversible => json!({"mode": "reversible"}),
            ZfpMode::Expert { minbits, maxbits, maxprec, minexp } => {
                json!({"mode": "expert", "minbits": minbits, "maxbits": maxbits, "maxprec": maxprec, "minexp": minexp})
            }
            ZfpMode::FixedAccuracy(t) => json!({"mode": "fixed_accuracy", "tolerance": t}),
            ZfpMode::FixedRate(r) => json!({"mode": "fixed_rate", "rate": r}),
            ZfpMode::FixedPrecision(p) => json!({"mode": "fixed_precision", "precision": p}),
        };
        json!({"name": "zfp", "configuration": cfg})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::from_v3;
    use crate::codec::{Codec, Extension};

    fn codec(cfg: Value, dt: DataType, shape: &[u64]) -> (Box<dyn ArrayToBytesCodec>, ArrayRepr) {
        let repr = ArrayRepr { shape: shape.to_vec(), fill_value: vec![0; dt.size()], data_type: dt };
        let v = json!({"name": "zfp", "configuration": cfg});
        let Some(Codec::ArrayToBytes(c)) = from_v3(&Extension::parse(&v, "codec").unwrap(), &repr).unwrap() else { panic!() };
        (c, repr)
    }

    fn roundtrip(c: &dyn ArrayToBytesCodec, repr: &ArrayRepr, data: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let enc = c.encode(Cow::Borrowed(data), repr).unwrap().into_owned();
        let mut out = vec![0u8; data.len()];
        c.decode_into(&enc, repr, &mut out).unwrap();
        (enc, out)
    }

    #[test]
    fn reversible_is_lossless_for_every_type() {
        for (dt, data) in [
            (DataType::Int8, (0..60u8).map(|v| v.wrapping_mul(37)).collect::<Vec<u8>>()),
            (DataType::UInt8, (0..60u8).map(|v| v.wrapping_mul(91)).collect()),
            (DataType::Int16, (0..60i16).flat_map(|v| v.wrapping_mul(1000).wrapping_sub(30000).to_ne_bytes()).collect()),
            (DataType::UInt16, (0..60u16).flat_map(|v| v.wrapping_mul(1111).to_ne_bytes()).collect()),
            (DataType::UInt32, (0..60u32).flat_map(|v| (v.wrapping_mul(0x9E37_79B9)).to_ne_bytes()).collect()),
            (DataType::UInt64, (0..60u64).flat_map(|v| (v.wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_ne_bytes()).collect()),
            (DataType::Float16, (0..60).flat_map(|v| half::f16::from_f32(v as f32 / 7.0).to_ne_bytes()).collect()),
            (DataType::Float64, (0..60).flat_map(|v| (v as f64).sin().to_ne_bytes()).collect()),
        ] {
            let (c, repr) = codec(json!({"mode": "reversible"}), dt.clone(), &[3, 4, 5]);
            let (_, out) = roundtrip(c.as_ref(), &repr, &data);
            assert_eq!(out, data, "{dt}");
        }
    }

    #[test]
    fn lossy_modes_within_bounds() {
        let vals: Vec<f64> = (0..120).map(|v| (v as f64 / 5.0).sin() * 30.0).collect();
        let data: Vec<u8> = vals.iter().flat_map(|v| v.to_ne_bytes()).collect();
        for (cfg, bound) in [
            (json!({"mode": "fixed_accuracy", "tolerance": 0.01}), 0.01),
            (json!({"mode": "fixed_precision", "precision": 24}), 0.01),
            (json!({"mode": "fixed_rate", "rate": 20}), 0.01),
            (json!({"mode": "expert", "minbits": 1, "maxbits": 4000, "maxprec": 30, "minexp": -20}), 0.01),
        ] {
            let (c, repr) = codec(cfg.clone(), DataType::Float64, &[2, 3, 4, 5]);
            let (_, out) = roundtrip(c.as_ref(), &repr, &data);
            for (a, b) in vals.iter().zip(out.chunks_exact(8)) {
                let b = f64::from_ne_bytes(b.try_into().unwrap());
                assert!((a - b).abs() <= bound, "{cfg}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn bad_configurations() {
        let repr = ArrayRepr { shape: vec![4, 4], fill_value: vec![0; 8], data_type: DataType::Float64 };
        for cfg in [
            json!({"mode": "fixed_rate"}),
            json!({"mode": "fixed_rate", "rate": 0}),
            json!({"mode": "fixed_accuracy", "tolerance": -1}),
            json!({"mode": "fixed_precision", "precision": 65}),
            json!({"mode": "reversible", "rate": 3}),
            json!({"mode": "expert", "minbits": 10, "maxbits": 5, "maxprec": 10, "minexp": 0}),
            json!({"mode": "expert", "minbits": 1, "maxbits": 8, "maxprec": 10, "minexp": 0}),
            json!({"mode": "lossy"}),
        ] {
            let v = json!({"name": "zfp", "configuration": cfg});
            assert!(from_v3(&Extension::parse(&v, "codec").unwrap(), &repr).is_err(), "{cfg}");
        }
        let v = json!({"name": "zfp", "configuration": {"mode": "reversible"}});
        let r5 = ArrayRepr { shape: vec![1; 5], ..repr.clone() };
        assert!(matches!(from_v3(&Extension::parse(&v, "codec").unwrap(), &r5), Err(Error::Unsupported(_))));
        let rb = ArrayRepr { data_type: DataType::Bool, fill_value: vec![0], ..repr };
        assert!(matches!(from_v3(&Extension::parse(&v, "codec").unwrap(), &rb), Err(Error::Unsupported(_))));
    }

    #[test]
    fn damaged_streams_are_codec_errors() {
        let data: Vec<u8> = (0..400).flat_map(|v| ((v as f32) * 0.37).cos().to_ne_bytes()).collect();
        for cfg in [json!({"mode": "reversible"}), json!({"mode": "fixed_rate", "rate": 12}), json!({"mode": "fixed_accuracy", "tolerance": 0.001})] {
            let (c, repr) = codec(cfg.clone(), DataType::Float32, &[20, 20]);
            let (enc, _) = roundtrip(c.as_ref(), &repr, &data);
            let mut out = vec![0u8; data.len()];
            for cut in [0, 1, 8, enc.len() / 2, enc.len() - 8] {
                let r = c.decode_into(&enc[..cut], &repr, &mut out);
                assert!(matches!(r, Err(Error::Codec(_))), "{cfg} cut to {cut}: {r:?}");
            }
        }
    }
}
