//! `vlen-utf8` and `vlen-bytes` codecs (array -> bytes) for variable-length elements, and the numcodecs
//! `vlen-utf8`, `vlen-bytes` and `vlen-array` filters of Zarr v2 object (`|O`) arrays.
//!
//! Spec: zarr-extensions `codecs/vlen-utf8`, `codecs/vlen-bytes` (numcodecs VLenUTF8 / VLenBytes /
//! VLenArray framing). v3 names: `vlen-utf8` (data type `string`), `vlen-bytes` (data type `bytes`,
//! zarr-python's `variable_length_bytes`). No configuration (an empty object is accepted).
//! v2 ids: `vlen-utf8`, `vlen-bytes`, `vlen-array` (configuration `dtype`, e.g. `"<i4"`), as the first
//! filter of a `"dtype": "|O"` array.
//! Framing of a chunk of n elements (C order): u32 LE n, then per element a u32 LE byte length and
//! the bytes (UTF-8 text, raw bytes, or the items of a vlen-array element in the filter's byte order).
//! Example: `{"name": "vlen-utf8", "configuration": {}}`
//!
//! Variable-length chunks do not fit the fixed-size buffer interface (the `ArrayToBytesCodec` buffer
//! methods refuse); the chain runs them with [`decode`] and [`encode`] instead, on the same codecs:
//! bytes->bytes codecs as for any chunk, array->array codecs that only move elements (transpose,
//! reshape) by the permutation they apply to an array of element indices, this codec's framing
//! ([`VlenCodec::parse_frame`], [`VlenCodec::encode_frame`]) or sharding (whose inner chunks go
//! through their own chain, so sharding nests). A decoded chunk is a [`VlenChunk`]. Every count and
//! length is checked against the chunk's bytes before anything is allocated for it.

use crate::codec::chain::CodecChain;
use crate::codec::numcodecs::V2Config;
use crate::codec::registry::{CodecEntry, Numcodecs, Takes, V2Build};
use crate::codec::{ArrayRepr, ArrayToArrayCodec, ArrayToBytesCodec, Codec, Config, DecodedSize};
use crate::dtype::{DataType, Endian};
use crate::error::{Error, Result};
use crate::selection::vlen::{VlenChunk, VlenPieces};
use crate::selection::Selection;
use serde_json::{json, Map, Value};
use std::borrow::Cow;

const UTF8: &str = "vlen-utf8";
const BYTES: &str = "vlen-bytes";
const ARRAY: &str = "vlen-array";

/// The numcodecs identity of a variable-length codec (the first filter of a v2 `|O` array).
const fn object(id: &'static str, build: fn(&V2Config) -> Result<VlenCodec>) -> Option<Numcodecs> {
    Some(Numcodecs { id, build: V2Build::Object(build), under_v3: None, v3_defaults: None, elementwise: false, v1: None })
}

fn from_v3(name: &str, cfg: Option<&Map<String, Value>>, decoded: &ArrayRepr) -> Result<Codec> {
    Ok(Codec::ArrayToBytes(Box::new(VlenCodec::from_v3(name, cfg, decoded)?)))
}

/// The registry entry of `vlen-utf8` (v3 and numcodecs; data type `string`).
pub static VLEN_UTF8: CodecEntry = CodecEntry {
    name: Some(UTF8),
    takes: Takes::Only(DataType::String),
    from_v3: Some(from_v3),
    numcodecs: object(UTF8, |_| Ok(VlenCodec { kind: VlenKind::Utf8 })),
    ..CodecEntry::NONE
};

/// The registry entry of `vlen-bytes` (v3 and numcodecs; data type `bytes`).
pub static VLEN_BYTES: CodecEntry = CodecEntry {
    name: Some(BYTES),
    takes: Takes::Only(DataType::Bytes),
    from_v3: Some(from_v3),
    numcodecs: object(BYTES, |_| Ok(VlenCodec { kind: VlenKind::Bytes })),
    ..CodecEntry::NONE
};

/// The registry entry of numcodecs' `vlen-array` (v2 only).
pub static VLEN_ARRAY: CodecEntry = CodecEntry::numcodecs(object(ARRAY, VlenCodec::from_v2_array));

/// Which elements a variable-length codec frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VlenKind {
    /// UTF-8 text (`vlen-utf8`).
    Utf8,
    /// Byte strings (`vlen-bytes`).
    Bytes,
    /// 1-D arrays of a fixed-size type stored in byte order `order` (numcodecs `vlen-array`).
    Array {
        /// The item type.
        item: DataType,
        /// Stored byte order of the items.
        order: Endian,
    },
}

/// A variable-length array -> bytes codec.
#[derive(Debug, Clone)]
pub struct VlenCodec {
    /// What the elements are.
    pub kind: VlenKind,
}

fn wrong_entry(what: &str) -> Error {
    Error::InvalidArgument(format!(
        "{what}: the array has a variable-length data type; use zarr_read_region_vlen / zarr_write_region_vlen"
    ))
}

impl VlenCodec {
    /// Parses the v3 codec `name` (`vlen-utf8` or `vlen-bytes`) for chunks of `decoded`.
    pub fn from_v3(name: &str, cfg: Option<&Map<String, Value>>, decoded: &ArrayRepr) -> Result<VlenCodec> {
        Config::new(name, cfg, &[])?;
        let (kind, entry) = match name {
            UTF8 => (VlenKind::Utf8, &VLEN_UTF8),
            _ => (VlenKind::Bytes, &VLEN_BYTES),
        };
        entry.takes.check(name, &decoded.data_type)?;
        Ok(VlenCodec { kind })
    }

    /// Parses numcodecs' `vlen-array` configuration (`dtype`: the item type).
    pub fn from_v2_array(cfg: &V2Config) -> Result<VlenCodec> {
        let item = cfg.elem("dtype", None)?;
        if item.data_type.is_vlen() || matches!(item.data_type, DataType::Struct(_)) {
            return Err(Error::Unsupported(format!("vlen-array of {}", item.data_type)));
        }
        Ok(VlenCodec { kind: VlenKind::Array { item: item.data_type, order: item.byte_order.unwrap_or(Endian::Little) } })
    }

    /// The data type this codec's elements have.
    pub fn data_type(&self) -> DataType {
        match &self.kind {
            VlenKind::Utf8 => DataType::String,
            VlenKind::Bytes => DataType::Bytes,
            VlenKind::Array { item, .. } => DataType::VlenArray(Box::new(item.clone())),
        }
    }

    /// Checks one element about to be written: UTF-8 text for `vlen-utf8`, a whole number of items
    /// for `vlen-array`.
    pub fn check_element(&self, e: &[u8]) -> std::result::Result<(), String> {
        match &self.kind {
            VlenKind::Utf8 => std::str::from_utf8(e).map(|_| ()).map_err(|err| format!("not valid UTF-8 ({err})")),
            VlenKind::Bytes => Ok(()),
            VlenKind::Array { item, .. } => {
                if e.len().is_multiple_of(item.size()) {
                    Ok(())
                } else {
                    Err(format!("{} bytes is not a whole number of {item} items", e.len()))
                }
            }
        }
    }

    /// Whether stored elements need their items byte-swapped to reach native order (vlen-array).
    fn swap_unit(&self) -> usize {
        match &self.kind {
            VlenKind::Array { item, order } if !order.is_native() => item.swap_unit(),
            _ => 1,
        }
    }

    /// Parses a framed chunk of `n` elements in `buf` (which is modified only to bring vlen-array
    /// items to native byte order), appending each element's byte range to `spans`. The elements are
    /// moved down over their length prefixes, so the ranges are of the squeezed buffer and
    /// consecutive elements are adjacent.
    pub fn parse_frame(&self, buf: &mut [u8], n: usize, spans: &mut Vec<(usize, usize)>) -> Result<()> {
        let corrupt = |why: String| Error::Codec(format!("{}: {why}", self.name()));
        if buf.len() < 4 {
            return Err(corrupt(format!("chunk of {} bytes has no element count", buf.len())));
        }
        let count = u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize;
        if count != n {
            return Err(corrupt(format!("chunk holds {count} elements, expected {n}")));
        }
        // Each element needs at least its 4-byte length: checked before reserving anything.
        if (buf.len() - 4) / 4 < n {
            return Err(corrupt(format!("{n} elements cannot fit in {} bytes", buf.len())));
        }
        spans.reserve(n);
        let swap = self.swap_unit();
        let mut pos = 4usize;
        // Element bytes are moved down over the length prefixes as they are parsed (`w`), so that
        // consecutive elements end up contiguous: readers copy runs of them with one memcpy.
        let mut w = 0usize;
        for i in 0..n {
            let Some(head) = buf.get(pos..pos + 4) else {
                return Err(corrupt(format!("truncated at element {i} of {n}")));
            };
            let len = u32::from_le_bytes(head.try_into().unwrap()) as usize;
            let start = pos + 4;
            let end = start.checked_add(len).filter(|&e| e <= buf.len()).ok_or_else(|| {
                corrupt(format!("element {i} of {len} bytes runs past the end of the {} byte chunk", buf.len()))
            })?;
            let e = &mut buf[start..end];
            match &self.kind {
                VlenKind::Utf8 => {
                    // ASCII (checked a word at a time) needs no further decoding.
                    if !e.is_ascii() && std::str::from_utf8(e).is_err() {
                        return Err(corrupt(format!("element {i} is not valid UTF-8")));
                    }
                }
                VlenKind::Bytes => {}
                VlenKind::Array { item, .. } => {
                    if !len.is_multiple_of(item.size()) {
                        return Err(corrupt(format!("element {i} of {len} bytes is not a whole number of {item} items")));
                    }
                    crate::dtype::swap_in_place(e, swap);
                }
            }
            buf.copy_within(start..end, w);
            spans.push((w, w + len));
            w += len;
            pos = end;
        }
        if pos != buf.len() {
            return Err(corrupt(format!("{} bytes after the last element", buf.len() - pos)));
        }
        Ok(())
    }

    /// Frames `elems` (native-endian elements, already checked with [`VlenCodec::check_element`]).
    pub fn encode_frame(&self, elems: &[&[u8]]) -> Result<Vec<u8>> {
        let count = u32::try_from(elems.len())
            .map_err(|_| Error::InvalidArgument(format!("{} elements in one chunk exceed the u32 count", elems.len())))?;
        let total = elems.iter().try_fold(4usize, |a, e| a.checked_add(4 + e.len()));
        let total = total.ok_or_else(|| Error::InvalidArgument("encoded chunk size overflows".into()))?;
        let mut out = Vec::new();
        crate::error::try_reserve(&mut out, total)?;
        out.extend_from_slice(&count.to_le_bytes());
        let swap = self.swap_unit();
        for e in elems {
            let len = u32::try_from(e.len())
                .map_err(|_| Error::Value(format!("an element of {} bytes exceeds the 4 GiB limit of {}", e.len(), self.name())))?;
            out.extend_from_slice(&len.to_le_bytes());
            let at = out.len();
            out.extend_from_slice(e);
            crate::dtype::swap_in_place(&mut out[at..], swap);
        }
        Ok(out)
    }

    /// The codec's name.
    pub fn name(&self) -> &'static str {
        match self.kind {
            VlenKind::Utf8 => UTF8,
            VlenKind::Bytes => BYTES,
            VlenKind::Array { .. } => ARRAY,
        }
    }
}

impl ArrayToBytesCodec for VlenCodec {
    fn encode<'a>(&self, _data: Cow<'a, [u8]>, _repr: &ArrayRepr) -> Result<Cow<'a, [u8]>> {
        Err(wrong_entry("writing a fixed-size buffer"))
    }

    fn decode_into(&self, _encoded: &[u8], _repr: &ArrayRepr, _out: &mut [u8]) -> Result<()> {
        Err(wrong_entry("reading into a fixed-size buffer"))
    }

    fn encoded_size(&self, _repr: &ArrayRepr) -> Option<u64> {
        None
    }

    fn to_json(&self) -> Value {
        json!({"name": self.name(), "configuration": {}})
    }

    fn as_vlen(&self) -> Option<&VlenCodec> {
        Some(self)
    }
}

/// Largest decoded size (bytes) of one variable-length chunk, a guard against decompression bombs.
pub const MAX_VLEN_CHUNK_BYTES: u64 = 1 << 34;

/// Checks that a chain for chunks of the variable-length type `dt` can run: array->array codecs that
/// only move elements, and a variable-length codec as the array->bytes codec (directly, or inside
/// sharding, whose inner chain was checked when it was built).
pub fn check_chain(a2a: &[Box<dyn ArrayToArrayCodec>], a2b: &dyn ArrayToBytesCodec, dt: &DataType) -> Result<()> {
    if let Some(c) = a2a.iter().find(|c| !c.only_moves_elements()) {
        return Err(Error::Unsupported(format!(
            "array -> array codec '{}' on the variable-length data type {dt} (only transpose and reshape apply)",
            c.to_json()["name"].as_str().unwrap_or("?")
        )));
    }
    if a2b.as_vlen().is_none() && a2b.as_sharding().is_none() {
        return Err(Error::Metadata(format!(
            "data type {dt} needs a variable-length codec (vlen-utf8 for string, vlen-bytes for bytes) as its array -> bytes codec"
        )));
    }
    Ok(())
}

/// The variable-length codec that frames the elements of `chain`'s chunks (inside sharding if need be).
pub fn element_codec(chain: &CodecChain) -> Option<&VlenCodec> {
    let a2b = chain.array_to_bytes();
    a2b.as_vlen().or_else(|| a2b.as_sharding().and_then(|s| element_codec(s.inner_chain())))
}

/// Where an element-moving array->array codec puts the elements of a chunk of `decoded`: element `j`
/// of its output is element `order[j]` of its input (the codec applied to an array of indices).
fn element_order(c: &dyn ArrayToArrayCodec, decoded: &ArrayRepr) -> Result<Vec<u64>> {
    let n = decoded.num_elements();
    let mut iota = crate::error::try_alloc((n as usize).saturating_mul(8))?;
    for (i, e) in iota.chunks_exact_mut(8).enumerate() {
        e.copy_from_slice(&(i as u64).to_ne_bytes());
    }
    let repr = ArrayRepr { shape: decoded.shape.clone(), data_type: DataType::UInt64, fill_value: vec![0; 8] };
    let moved = c.encode(&iota, &repr)?;
    let order: Vec<u64> = moved.chunks_exact(8).map(|b| u64::from_ne_bytes(b.try_into().unwrap())).collect();
    if order.len() as u64 != n || order.iter().any(|&i| i >= n) {
        return Err(Error::Internal("an array -> array codec lost elements of a variable-length chunk".into()));
    }
    Ok(order)
}

/// Decodes the box `sel` (dense, chunk-local) of the variable-length chunk `encoded` of `chain`, as the
/// pieces that cover it (one per inner chunk of a shard; [`VlenPieces::into_chunk`] joins them).
pub fn decode(chain: &CodecChain, encoded: Vec<u8>, sel: &Selection) -> Result<VlenPieces> {
    let max = MAX_VLEN_CHUNK_BYTES.min(crate::codec::chain::max_chunk_bytes()).min(usize::MAX as u64) as usize;
    let mut bytes = encoded;
    for c in chain.bytes_to_bytes().iter().rev() {
        bytes = c.decode(&bytes, DecodedSize::AtMost(max))?.into_owned();
    }
    let reprs = chain.reprs();
    let a2a = chain.array_to_array();
    let a2b_repr = reprs.last().expect("a chain has a representation");
    let whole;
    // Without array->array codecs the array->bytes codec decodes just the box (sharding: just the
    // inner chunks it touches).
    let a2b_sel = if a2a.is_empty() {
        sel
    } else {
        whole = Selection::dense(&vec![0; a2b_repr.shape.len()], &a2b_repr.shape);
        &whole
    };
    let a2b = chain.array_to_bytes();
    let pieces = if let Some(v) = a2b.as_vlen() {
        let mut spans = Vec::new();
        v.parse_frame(&mut bytes, a2b_repr.num_elements() as usize, &mut spans)?;
        VlenPieces::one(&a2b_sel.count, VlenChunk { buf: bytes, spans, packed: true }.select(&a2b_repr.shape, a2b_sel)?)
    } else if let Some(s) = a2b.as_sharding() {
        s.decode_vlen(&bytes, a2b_sel)?
    } else {
        return Err(Error::Internal("a variable-length chunk without a variable-length codec".into()));
    };
    if a2a.is_empty() {
        return Ok(pieces);
    }
    // Array->array codecs move elements across the whole chunk: it is assembled from its pieces first.
    let mut chunk = pieces.into_chunk(&a2b_repr.shape)?;
    for (c, repr) in a2a.iter().zip(reprs).rev() {
        chunk.permute(&element_order(c.as_ref(), repr)?, true)?;
    }
    Ok(VlenPieces::one(&sel.count, chunk.select(&chain.decoded_repr().shape, sel)?))
}

/// Encodes a chunk of `chain` whose elements (C order, native-endian, already checked with
/// [`VlenCodec::check_element`]) are `elems`.
pub fn encode(chain: &CodecChain, elems: &[&[u8]]) -> Result<Vec<u8>> {
    let mut cur: Cow<[&[u8]]> = Cow::Borrowed(elems);
    for (c, repr) in chain.array_to_array().iter().zip(chain.reprs()) {
        let order = element_order(c.as_ref(), repr)?;
        cur = Cow::Owned(order.iter().map(|&i| cur[i as usize]).collect());
    }
    let a2b = chain.array_to_bytes();
    let mut bytes = if let Some(v) = a2b.as_vlen() {
        v.encode_frame(&cur)?
    } else if let Some(s) = a2b.as_sharding() {
        s.encode_vlen(&cur, &chain.reprs().last().expect("a chain has a representation").shape)?
    } else {
        return Err(Error::Internal("a variable-length chunk without a variable-length codec".into()));
    };
    for c in chain.bytes_to_bytes() {
        bytes = c.encode(&bytes)?;
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codec(kind: VlenKind) -> VlenCodec {
        VlenCodec { kind }
    }

    fn parse(c: &VlenCodec, mut buf: Vec<u8>, n: usize) -> Result<Vec<Vec<u8>>> {
        let mut spans = Vec::new();
        c.parse_frame(&mut buf, n, &mut spans)?;
        Ok(spans.iter().map(|&(s, e)| buf[s..e].to_vec()).collect())
    }

    #[test]
    fn framing_round_trips() {
        let c = codec(VlenKind::Utf8);
        let elems: Vec<&[u8]> = vec![b"", "é€😀".as_bytes(), b"a\0b", b"xyz"];
        let enc = c.encode_frame(&elems).unwrap();
        // Exactly numcodecs' layout.
        let mut want = 4u32.to_le_bytes().to_vec();
        for e in &elems {
            want.extend_from_slice(&(e.len() as u32).to_le_bytes());
            want.extend_from_slice(e);
        }
        assert_eq!(enc, want);
        assert_eq!(parse(&c, enc, 4).unwrap(), elems.iter().map(|e| e.to_vec()).collect::<Vec<_>>());
        assert_eq!(parse(&c, 0u32.to_le_bytes().to_vec(), 0).unwrap().len(), 0);
    }

    #[test]
    fn vlen_array_items_swap() {
        let c = codec(VlenKind::Array { item: DataType::Int32, order: Endian::Big });
        let e: Vec<u8> = [1i32, -2].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let enc = c.encode_frame(&[&e, &[]]).unwrap();
        assert_eq!(&enc[8..16], &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe]);
        assert_eq!(parse(&c, enc, 2).unwrap(), vec![e.clone(), vec![]]);
        let mut bad = 1u32.to_le_bytes().to_vec();
        bad.extend_from_slice(&3u32.to_le_bytes());
        bad.extend_from_slice(&[1, 2, 3]);
        assert!(matches!(parse(&c, bad, 1), Err(Error::Codec(_))));
        assert!(c.check_element(&[1, 2, 3]).is_err());
    }

    #[test]
    fn corrupt_chunks_are_codec_errors() {
        let c = codec(VlenKind::Bytes);
        let good = c.encode_frame(&[b"ab", b"cde"]).unwrap();
        let codec_err = |buf: Vec<u8>, n: usize| matches!(parse(&c, buf, n), Err(Error::Codec(_)));
        // truncated anywhere
        for cut in 0..good.len() {
            assert!(codec_err(good[..cut].to_vec(), 2), "cut at {cut}");
        }
        // wrong count, trailing bytes
        assert!(codec_err(good.clone(), 3));
        let mut long = good.clone();
        long.push(0);
        assert!(codec_err(long, 2));
        // a count far beyond the chunk: refused before any allocation for it
        let mut huge = u32::MAX.to_le_bytes().to_vec();
        huge.extend_from_slice(&[0; 8]);
        assert!(codec_err(huge, u32::MAX as usize));
        // a length beyond the chunk
        let mut len = 1u32.to_le_bytes().to_vec();
        len.extend_from_slice(&u32::MAX.to_le_bytes());
        len.extend_from_slice(b"abc");
        assert!(codec_err(len, 1));
        // invalid UTF-8 in a string chunk
        let u = codec(VlenKind::Utf8);
        let mut spans = Vec::new();
        let mut bad = u.encode_frame(&[b"\xff\xfe"]).unwrap();
        assert!(matches!(u.parse_frame(&mut bad, 1, &mut spans), Err(Error::Codec(_))));
        assert!(u.check_element(b"\xc3").is_err());
        assert!(u.check_element("ok é".as_bytes()).is_ok());
    }

    #[test]
    fn v3_config() {
        let repr = |dt: DataType| ArrayRepr { shape: vec![4], data_type: dt, fill_value: vec![] };
        assert!(VlenCodec::from_v3("vlen-utf8", None, &repr(DataType::String)).is_ok());
        assert!(VlenCodec::from_v3("vlen-bytes", Some(&Map::new()), &repr(DataType::Bytes)).is_ok());
        assert!(matches!(VlenCodec::from_v3("vlen-utf8", None, &repr(DataType::Int32)), Err(Error::Metadata(_))));
        assert!(matches!(VlenCodec::from_v3("vlen-bytes", None, &repr(DataType::String)), Err(Error::Metadata(_))));
        let mut m = Map::new();
        m.insert("x".into(), json!(1));
        assert!(matches!(VlenCodec::from_v3("vlen-utf8", Some(&m), &repr(DataType::String)), Err(Error::Metadata(_))));
        let c = VlenCodec::from_v3("vlen-utf8", None, &repr(DataType::String)).unwrap();
        assert!(matches!(c.decode_into(&[], &repr(DataType::String), &mut []), Err(Error::InvalidArgument(_))));
    }
}
