//! The codec chain: array->array*, one array->bytes, bytes->bytes*. It is itself an array->bytes codec,
//! so sharding's inner chunks use the same type.
//!
//! Representations along the chain are computed once, when the chain is built for a chunk shape.

use super::{from_v3, ArrayRepr, ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, Codec, DecodedSize};
use crate::format::extension::Extension;
use crate::dtype::SwapPlan;
use crate::scratch::with_decoded;
use crate::selection::{with_box, Dest, Layout, Selection};
use crate::error::{Error, Result};
use crate::store::ByteSource;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

/// Default upper bound on one decoded chunk, in bytes. Larger chunk shapes are refused at open.
pub const MAX_CHUNK_BYTES: u64 = 1 << 40;

/// The bound in force (0: not yet read from the environment).
static CHUNK_LIMIT: AtomicU64 = AtomicU64::new(0);

/// The upper bound on one decoded chunk in bytes: `ZARR_MAX_CHUNK_BYTES` from the environment when set
/// (read once, a positive integer), otherwise [`MAX_CHUNK_BYTES`]. Chunk shapes above it are refused
/// when an array is opened, before anything is allocated; every decoder's output is bounded by the
/// chunk size, so the bound also caps what a corrupt or hostile chunk can make the library allocate.
pub fn max_chunk_bytes() -> u64 {
    match CHUNK_LIMIT.load(Ordering::Relaxed) {
        0 => {
            let n = std::env::var("ZARR_MAX_CHUNK_BYTES")
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .filter(|&n| n > 0)
                .unwrap_or(MAX_CHUNK_BYTES);
            let _ = CHUNK_LIMIT.compare_exchange(0, n, Ordering::Relaxed, Ordering::Relaxed);
            CHUNK_LIMIT.load(Ordering::Relaxed)
        }
        n => n,
    }
}

/// Sets the bound returned by [`max_chunk_bytes`] for the whole process (the fuzz targets lower it);
/// 0 restores the default.
#[doc(hidden)]
pub fn set_max_chunk_bytes(n: u64) {
    CHUNK_LIMIT.store(if n == 0 { MAX_CHUNK_BYTES } else { n }, Ordering::Relaxed);
}

/// A complete codec pipeline for one chunk shape.
#[derive(Debug)]
pub struct CodecChain {
    array_to_array: Vec<Box<dyn ArrayToArrayCodec>>,
    array_to_bytes: Box<dyn ArrayToBytesCodec>,
    bytes_to_bytes: Vec<Box<dyn BytesToBytesCodec>>,
    /// `reprs[i]` is the input of `array_to_array[i]`; the last entry is the input of `array_to_bytes`.
    reprs: Vec<ArrayRepr>,
    /// Expected decoded size of each bytes->bytes codec's output.
    b2b_sizes: Vec<DecodedSize>,
    /// Fixed encoded size of the whole chain, if any.
    encoded_size: Option<u64>,
}

/// Fails unless a chunk of `repr` fits the in-memory limits ([`max_chunk_bytes`]; variable-length
/// elements count as 4 bytes each).
pub fn check_repr_size(repr: &ArrayRepr) -> Result<()> {
    let max = max_chunk_bytes();
    // Variable-length elements take at least their 4-byte length prefix in a chunk; zero-sized ones
    // count as one byte, so that the element count itself stays bounded.
    let unit = if repr.data_type.is_vlen() { 4 } else { repr.data_type.size().max(1) };
    let mut n: u64 = unit as u64;
    for &s in &repr.shape {
        n = n
            .checked_mul(s)
            .filter(|&n| n <= max)
            .ok_or_else(|| {
                Error::Metadata(format!(
                    "chunk shape {:?} of {} is larger than the {} byte limit for one chunk",
                    repr.shape, repr.data_type, max
                ))
            })?;
    }
    if n > usize::MAX as u64 {
        return Err(Error::Metadata("chunk does not fit in the address space".into()));
    }
    Ok(())
}

impl CodecChain {
    /// Builds the chain from a v3 `codecs` list for chunks of representation `decoded`.
    pub fn from_v3(codecs: &Value, decoded: &ArrayRepr) -> Result<CodecChain> {
        let list = codecs
            .as_array()
            .ok_or_else(|| Error::Metadata(format!("codecs must be a list, got {codecs}")))?;
        let mut built = Vec::with_capacity(list.len());
        let mut repr = decoded.clone();
        let mut seen_a2b = false;
        for v in list {
            let ext = Extension::parse(v, "codec")?;
            // Representation handed to this codec: the array repr until the array->bytes codec.
            let Some(codec) = from_v3(&ext, &repr)? else { continue };
            if let Codec::ArrayToArray(c) = &codec {
                if seen_a2b {
                    return Err(Error::Metadata(format!(
                        "codec '{}' (array -> array) comes after the array -> bytes codec",
                        ext.name
                    )));
                }
                repr = c.encoded_repr(&repr)?;
            }
            if let Codec::ArrayToBytes(_) = &codec {
                if seen_a2b {
                    return Err(Error::Metadata(format!("second array -> bytes codec '{}'", ext.name)));
                }
                seen_a2b = true;
            }
            if let Codec::BytesToBytes(_) = &codec {
                if !seen_a2b {
                    return Err(Error::Metadata(format!(
                        "codec '{}' (bytes -> bytes) comes before the array -> bytes codec",
                        ext.name
                    )));
                }
            }
            built.push(codec);
        }
        if !seen_a2b {
            return Err(Error::Metadata("codecs has no array -> bytes codec (e.g. \"bytes\")".into()));
        }
        CodecChain::new(built, decoded)
    }

    /// Assembles a chain from built codecs (already in a valid order) for chunks of `decoded`.
    pub fn new(codecs: Vec<Codec>, decoded: &ArrayRepr) -> Result<CodecChain> {
        check_repr_size(decoded)?;
        let mut a2a = Vec::new();
        let mut a2b = None;
        let mut b2b = Vec::new();
        let mut reprs = vec![decoded.clone()];
        for c in codecs {
            match c {
                Codec::ArrayToArray(c) => {
                    let next = c.encoded_repr(reprs.last().unwrap())?;
                    check_repr_size(&next)?;
                    reprs.push(next);
                    a2a.push(c);
                }
                Codec::ArrayToBytes(c) => a2b = Some(c),
                Codec::BytesToBytes(c) => b2b.push(c),
            }
        }
        let a2b = a2b.ok_or_else(|| Error::Metadata("codec chain has no array -> bytes codec".into()))?;
        if decoded.data_type.is_vlen() {
            crate::codec::serialize::vlen::check_chain(&a2a, a2b.as_ref(), &decoded.data_type)?;
        }
        let a2b_repr = reprs.last().unwrap();
        let bound = 2 * a2b_repr.nbytes() + (1 << 20);
        let mut size = a2b.encoded_size(a2b_repr);
        let mut b2b_sizes = Vec::with_capacity(b2b.len());
        for c in &b2b {
            b2b_sizes.push(match size {
                Some(n) => DecodedSize::Exact(n as usize),
                None => DecodedSize::AtMost(bound),
            });
            size = size.and_then(|n| c.encoded_size(n));
        }
        Ok(CodecChain {
            array_to_array: a2a,
            array_to_bytes: a2b,
            bytes_to_bytes: b2b,
            reprs,
            b2b_sizes,
            encoded_size: size,
        })
    }

    /// The decoded representation (the chunk as the array sees it).
    pub fn decoded_repr(&self) -> &ArrayRepr {
        &self.reprs[0]
    }

    /// The array->bytes codec.
    pub fn array_to_bytes(&self) -> &dyn ArrayToBytesCodec {
        self.array_to_bytes.as_ref()
    }

    /// The array->array codecs, in encoding order.
    pub fn array_to_array(&self) -> &[Box<dyn ArrayToArrayCodec>] {
        &self.array_to_array
    }

    /// The representations along the chain: entry `i` is what `array_to_array()[i]` receives when
    /// encoding, the last what the array->bytes codec receives.
    pub fn reprs(&self) -> &[ArrayRepr] {
        &self.reprs
    }

    /// The bytes->bytes codecs, in encoding order.
    pub fn bytes_to_bytes(&self) -> &[Box<dyn BytesToBytesCodec>] {
        &self.bytes_to_bytes
    }

    /// Whether the chain has array->array codecs.
    pub fn has_array_to_array(&self) -> bool {
        !self.array_to_array.is_empty()
    }

    /// The encoded size of a chunk when it does not depend on the values.
    pub fn encoded_size_fixed(&self) -> Option<u64> {
        self.encoded_size
    }

    /// The longest a stored chunk of this chain can be, in bytes (docs/limits.md): a longer stored
    /// value is refused before it is read. The fixed encoded size where there is one; a shard, its
    /// inner chunks at their longest plus the index; a chunk of variable-length elements, the
    /// variable-length chunk ceiling. Otherwise the array->bytes codec's output is taken to be at
    /// most `2 n + 1 MiB` for a chunk of `n` bytes (the bound its decoder is held to), and each
    /// bytes->bytes codec without a fixed size to add at most half its input plus 64 KiB, more than
    /// any supported compressor's worst case (zstd, lz4, blosc, gzip, bz2, lzma: under 1% plus a
    /// header).
    pub fn max_encoded_size(&self) -> u64 {
        if let Some(n) = self.encoded_size {
            return n;
        }
        let a2b_repr = self.reprs.last().expect("a chain has a representation");
        if self.reprs[0].data_type.is_vlen() || a2b_repr.data_type.is_vlen() {
            return crate::codec::serialize::vlen::MAX_VLEN_CHUNK_BYTES.min(max_chunk_bytes());
        }
        let mut n = match self.array_to_bytes.as_sharding() {
            Some(s) => s.max_encoded_size(),
            None => self
                .array_to_bytes
                .encoded_size(a2b_repr)
                .unwrap_or_else(|| (a2b_repr.nbytes() as u64).saturating_mul(2).saturating_add(1 << 20)),
        };
        for c in &self.bytes_to_bytes {
            n = c.encoded_size(n).unwrap_or_else(|| n.saturating_add(n / 2).saturating_add(64 << 10));
        }
        n
    }

    /// Whether there are only the array->bytes codec's own steps (no array->array, no bytes->bytes).
    pub fn is_bare(&self) -> bool {
        self.array_to_array.is_empty() && self.bytes_to_bytes.is_empty()
    }

    /// Encodes one chunk (C order, native-endian, the decoded representation's size). May return the
    /// input itself (e.g. uncompressed, native byte order).
    pub fn encode_chunk<'a>(&self, data: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        let mut cur: Cow<'a, [u8]> = Cow::Borrowed(data);
        for (c, repr) in self.array_to_array.iter().zip(&self.reprs) {
            cur = Cow::Owned(c.encode(&cur, repr)?);
        }
        let mut bytes = self.array_to_bytes.encode(cur, self.reprs.last().unwrap())?;
        for c in &self.bytes_to_bytes {
            bytes = Cow::Owned(c.encode(&bytes)?);
        }
        Ok(bytes)
    }

    /// Checks, before a buffer for the decoded chunk is allocated, that `encoded` can be a chunk of
    /// this chain as far as a cheap look tells: its length when the chain's encoded size is fixed
    /// (`bytes` alone, checksums, fixed-ratio filters), and what the outermost bytes->bytes codec's
    /// headers declare ([`BytesToBytesCodec::check_decodable`]: a zstd or blosc frame's content size,
    /// an lz4 header, a DEFLATE stream's largest expansion). A stored chunk far smaller than its
    /// declared decoded size then costs no allocation of that size.
    pub fn check_encoded(&self, encoded: &[u8]) -> Result<()> {
        if let Some(n) = self.encoded_size.filter(|&n| n != encoded.len() as u64) {
            return Err(Error::Codec(format!("the stored chunk has {} bytes, a chunk of this array encodes to {n}", encoded.len())));
        }
        if let (Some(c), Some(DecodedSize::Exact(n))) = (self.bytes_to_bytes.last(), self.b2b_sizes.last()) {
            c.check_decodable(encoded, *n)?;
        }
        Ok(())
    }

    /// Decodes one chunk into `out` (exactly the decoded representation's size).
    pub fn decode_chunk(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        if out.len() != self.reprs[0].nbytes() {
            return Err(Error::Internal(format!(
                "decode_chunk: output of {} bytes for a chunk of {}",
                out.len(),
                self.reprs[0].nbytes()
            )));
        }
        self.check_encoded(encoded)?;
        let a2b_repr = self.reprs.last().unwrap();
        let direct = self.array_to_array.is_empty() && self.array_to_bytes.is_identity(a2b_repr);
        let mut cur: Cow<[u8]> = Cow::Borrowed(encoded);
        for (i, c) in self.bytes_to_bytes.iter().enumerate().rev() {
            if i == 0 && direct {
                // The last decoder writes straight into the destination.
                return c.decode_into(&cur, out);
            }
            if let (1, true, DecodedSize::Exact(n)) = (i, direct, self.b2b_sizes[i]) {
                // Two steps left (a filter, e.g. shuffle, after a compressor): the compressor decodes
                // into this thread's reused buffer and the filter from there into the destination.
                let first = &self.bytes_to_bytes[0];
                return crate::scratch::with_between(n, |mid| {
                    c.decode_into(&cur, mid)?;
                    first.decode_into(mid, out)
                });
            }
            cur = Cow::Owned(c.decode(&cur, self.b2b_sizes[i])?.into_owned());
        }
        self.decode_array(&cur, out)
    }

    fn decode_array(&self, bytes: &[u8], out: &mut [u8]) -> Result<()> {
        let n = self.array_to_array.len();
        if n == 0 {
            return self.array_to_bytes.decode_into(bytes, &self.reprs[0], out);
        }
        let mut cur = crate::error::try_alloc(self.reprs[n].nbytes())?;
        self.array_to_bytes.decode_into(bytes, &self.reprs[n], &mut cur)?;
        for i in (0..n).rev() {
            if i == 0 {
                return self.array_to_array[0].decode_into(&cur, &self.reprs[0], out);
            }
            let mut next = crate::error::try_alloc(self.reprs[i].nbytes())?;
            self.array_to_array[i].decode_into(&cur, &self.reprs[i], &mut next)?;
            cur = next;
        }
        unreachable!()
    }

    /// Decodes the selection `sel` (chunk-local) of the chunk whose encoded bytes are `encoded` into
    /// `dest`. When the chain is `bytes` + one compressor that can decode part of its output, only the
    /// byte span the selection needs is decoded; otherwise the whole chunk is decoded into a scratch
    /// buffer (or straight into the destination when the selection is the whole chunk, unconverted
    /// and contiguous there).
    pub fn decode_region(&self, encoded: &[u8], sel: &Selection, dest: Dest) -> Result<()> {
        if sel.is_empty() {
            return Ok(());
        }
        let repr = &self.reprs[0];
        if let Some(out) = dest.direct(&repr.shape, sel) {
            return self.decode_chunk(encoded, out);
        }
        // `bytes` alone: the stored bytes are the chunk (in the codec's byte order), so the selection
        // is copied from them as they are, without a decoded copy of the chunk (a remote read holds
        // one buffer per request in flight, not two). A body of the wrong size is decoded below, which
        // names the fault.
        if let (true, true, Some(swap)) =
            (self.array_to_array.is_empty(), self.bytes_to_bytes.is_empty(), self.array_to_bytes.element_bytes(repr))
        {
            if encoded.len() == repr.nbytes() {
                return dest.copy_from(encoded, 0, &repr.shape, sel, &swap);
            }
        }
        // Nothing is allocated for the decoded chunk before the stored bytes are known to fit it.
        self.check_encoded(encoded)?;
        if let (true, [b2b], Some(swap)) =
            (self.array_to_array.is_empty(), self.bytes_to_bytes.as_slice(), self.array_to_bytes.element_bytes(repr))
        {
            // A compressor that can decode part of its output: a buffer for the bytes up to the
            // selection's end, not for the whole chunk.
            let (first, end) = sel.byte_span(&repr.layout());
            let total = repr.nbytes();
            if (first > 0 || end < total)
                && with_decoded(end, |prefix| {
                    let done = b2b.decode_partial(encoded, first, end, total, prefix)?;
                    if done {
                        dest.copy_from(prefix, 0, &repr.shape, sel, &swap)?;
                    }
                    Ok(done)
                })?
            {
                return Ok(());
            }
        }
        with_decoded(repr.nbytes(), |chunk| {
            self.decode_chunk(encoded, chunk)?;
            dest.copy_from(chunk, 0, &repr.shape, sel, &SwapPlan::identity())
        })
    }

    /// The v3 `codecs` list for this chain.
    pub fn to_json(&self) -> Value {
        let mut v: Vec<Value> = self.array_to_array.iter().map(|c| c.to_json()).collect();
        v.push(self.array_to_bytes.to_json());
        v.extend(self.bytes_to_bytes.iter().map(|c| c.to_json()));
        Value::Array(v)
    }
}

impl ArrayToBytesCodec for CodecChain {
    fn encode<'a>(&self, data: Cow<'a, [u8]>, _repr: &ArrayRepr) -> Result<Cow<'a, [u8]>> {
        match data {
            Cow::Borrowed(d) => self.encode_chunk(d),
            Cow::Owned(v) => Ok(Cow::Owned(self.encode_chunk(&v)?.into_owned())),
        }
    }

    fn encode_box(&self, src: &[u8], layout: &Layout, offset: usize, repr: &ArrayRepr, sink: super::Sink) -> Result<()> {
        if self.is_bare() {
            // e.g. sharding: it gathers its inner chunks straight from `src`.
            return self.array_to_bytes.encode_box(src, layout, offset, repr, sink);
        }
        with_box(src, layout, offset, &repr.shape, &repr.data_type, |data| {
            if crate::buffer::all_equal(data, &repr.fill_value) {
                return sink(None);
            }
            sink(Some(vec![self.encode_chunk(data)?]))
        })
    }

    fn decode_into(&self, encoded: &[u8], _repr: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        self.decode_chunk(encoded, out)
    }

    fn encoded_size(&self, _repr: &ArrayRepr) -> Option<u64> {
        self.encoded_size
    }

    fn partial_decode(&self, src: &dyn ByteSource, repr: &ArrayRepr, sel: &Selection, dest: Dest) -> Result<()> {
        if self.is_bare() {
            return self.array_to_bytes.partial_decode(src, repr, sel, dest);
        }
        // A reused buffer that the read overwrites whole: no zeroing first.
        crate::scratch::with_read_buffer(src.len() as usize, |encoded| {
            src.read_into(0, encoded)?;
            self.decode_region(encoded, sel, dest)
        })
    }

    fn to_json(&self) -> Value {
        CodecChain::to_json(self)
    }

    fn inner_chunk_shape(&self) -> Option<&[u64]> {
        self.array_to_bytes.inner_chunk_shape()
    }

    fn may_refuse_values(&self) -> bool {
        self.array_to_array.iter().any(|c| c.may_refuse_values()) || self.array_to_bytes.may_refuse_values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DataType;
    use serde_json::json;

    fn repr(shape: &[u64], dt: DataType) -> ArrayRepr {
        let fill = vec![0; dt.size()];
        ArrayRepr { shape: shape.to_vec(), data_type: dt, fill_value: fill }
    }

    fn round_trip(codecs: Value, r: &ArrayRepr) {
        let chain = CodecChain::from_v3(&codecs, r).unwrap();
        let data: Vec<u8> = (0..r.nbytes()).map(|i| (i * 7 % 251) as u8).collect();
        let enc = chain.encode_chunk(&data).unwrap().into_owned();
        let mut out = vec![0; r.nbytes()];
        chain.decode_chunk(&enc, &mut out).unwrap();
        assert_eq!(out, data, "{codecs}");
    }

    #[test]
    fn chains_round_trip() {
        let r = repr(&[4, 5, 6], DataType::Int32);
        round_trip(json!([{"name": "bytes", "configuration": {"endian": "little"}}]), &r);
        round_trip(json!([{"name": "bytes", "configuration": {"endian": "big"}}, "crc32c"]), &r);
        round_trip(
            json!([{"name": "transpose", "configuration": {"order": [2, 0, 1]}},
                   {"name": "bytes", "configuration": {"endian": "big"}},
                   {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}},
                   {"name": "crc32c"}]),
            &r,
        );
        round_trip(
            json!([{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "gzip", "configuration": {"level": 1}},
                   {"name": "zstd", "configuration": {"level": 3, "checksum": true}}]),
            &r,
        );
    }

    #[test]
    fn chain_order_errors() {
        let r = repr(&[4], DataType::Int16);
        let bad = |v: Value| CodecChain::from_v3(&v, &r).unwrap_err();
        assert!(matches!(bad(json!([])), Error::Metadata(_)));
        assert!(matches!(bad(json!(["crc32c"])), Error::Metadata(_)));
        assert!(matches!(
            bad(json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "transpose", "configuration": {"order": [0]}}])),
            Error::Metadata(_)
        ));
        assert!(matches!(
            bad(json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "bytes", "configuration": {"endian": "little"}}])),
            Error::Metadata(_)
        ));
        assert!(matches!(bad(json!({"name": "bytes"})), Error::Metadata(_)));
        assert!(matches!(
            bad(json!([{"name": "bytes", "configuration": {"endian": "little"}}, "lzma"])),
            Error::Unsupported(_)
        ));
    }

    #[test]
    fn oversized_chunks_refused() {
        let r = repr(&[1 << 30, 1 << 30], DataType::Float64);
        let e = CodecChain::from_v3(&json!(["bytes"]), &r).unwrap_err();
        assert!(matches!(e, Error::Metadata(_)), "{e}");
        // Variable-length elements have size 0 but still count (found by fuzzing: the element count
        // overflowed 64 bits).
        let r = repr(&[1 << 32, 1 << 32], DataType::String);
        let e = CodecChain::from_v3(&json!(["vlen-utf8"]), &r).unwrap_err();
        assert!(matches!(e, Error::Metadata(_)), "{e}");
        assert!(CodecChain::from_v3(&json!(["vlen-utf8"]), &repr(&[1 << 20], DataType::String)).is_ok());
    }
}
