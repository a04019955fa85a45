//! Codecs: the three kinds of the v3 codec pipeline, and [`registry`], the one list of the codecs
//! (names, numcodecs ids, builders) that every metadata format and the spec API consult.
//!
//! A chunk is encoded by zero or more array->array codecs, exactly one array->bytes codec, and zero or more
//! bytes->bytes codecs ([`chain::CodecChain`], itself an array->bytes codec so that sharding can nest chains).
//! Array buffers are C order and native-endian; each codec file starts with its spec card.
//!
//! # Layout: one folder per kind, one file per codec, named after the codec
//!
//! A codec lives in the folder of what it does, whether Zarr v3 or numcodecs (Zarr v2) defines it;
//! its file is its name (numcodecs' `bitround` and `packbits` differ from the v3 codecs of those names,
//! see below).
//! - [`compress`] (bytes -> bytes compressors): `blosc`, `bz2`, `gzip`, `lz4`, `lzma`, `zlib`, `zstd`,
//!   and `deflate` (the DEFLATE streams `gzip` and `zlib` share).
//! - [`filter`] (filters, array -> array or numcodecs filters): v3 `bitround`, `cast_value` (its value
//!   conversion: `numeric_cast`), `reshape`, `scale_offset`, `transpose`; numcodecs `astype`,
//!   `bitround` (`bitround_numcodecs`, sharing the one kernel in `bitround`), `categorize`, `delta`,
//!   `fixedscaleoffset`, `packbits` (bools to bits), `quantize`, `shuffle`; `filter/mod.rs` holds what the
//!   numcodecs filters share.
//! - [`serialize`] (array -> bytes serializers): `bytes`, `packbits` (v3, sub-byte types), `vlen`
//!   (`vlen-utf8`, `vlen-bytes`, numcodecs `vlen-*`), `zfp`, and numcodecs `pcodec`, `zfpy`.
//! - [`checksum`] (bytes -> bytes checksums): v3 `crc32c`; numcodecs `crc32`, `adler32`, `crc32c`,
//!   `fletcher32` (`checksum32`, numcodecs' module name).
//! - [`sharding`] (`sharding_indexed`, an array -> bytes codec of nested chains) and its index.
//! - At the top: this module (the codec traits), [`chain`], [`registry`]; [`numcodecs`] holds the
//!   numcodecs plumbing (configuration objects, the numpy model the filters compute with, the
//!   `numcodecs.<id>` names under v3), not codecs.
//!
//! Elements are reached by type through the one typed dispatch, [`crate::dtype::dispatch`].

pub mod chain;
pub mod checksum;
pub mod compress;
pub mod filter;
pub mod numcodecs;
pub mod registry;
pub mod serialize;
pub mod sharding;
#[cfg(test)]
pub mod test_codec;

use crate::dtype::{DataType, SwapPlan};
pub use compress::blosc::Shuffle;
use crate::error::{Error, Result};
use crate::format::extension::Extension;
use crate::selection::{with_box, Dest, Layout, Selection};
use crate::store::ByteSource;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The decoded representation of a chunk at one point of a codec chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayRepr {
    /// Shape of the (chunk) array.
    pub shape: Vec<u64>,
    /// Element type.
    pub data_type: DataType,
    /// Fill value, one native-endian element.
    pub fill_value: Vec<u8>,
}

impl ArrayRepr {
    /// Number of elements.
    pub fn num_elements(&self) -> u64 {
        self.shape.iter().product()
    }

    /// Size in bytes of the decoded array (validated to fit in memory when the chain is built).
    pub fn nbytes(&self) -> usize {
        self.num_elements() as usize * self.data_type.size()
    }

    /// The C-order buffer layout of this representation.
    pub fn layout(&self) -> Layout {
        Layout::c_order(&self.shape, self.data_type.size())
    }
}

/// How large a bytes->bytes decoder's output must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodedSize {
    /// Exactly this many bytes, or the data is corrupt.
    Exact(usize),
    /// At most this many bytes (a guard against decompression bombs).
    AtMost(usize),
}

impl DecodedSize {
    /// Fails unless `n` is an acceptable decoded size.
    pub fn check(self, n: usize, codec: &str) -> Result<()> {
        match self {
            DecodedSize::Exact(e) if n != e => {
                Err(Error::Codec(format!("{codec}: decoded {n} bytes, expected {e}")))
            }
            DecodedSize::AtMost(m) if n > m => {
                Err(Error::Codec(format!("{codec}: decoded more than the {m} bytes allowed")))
            }
            _ => Ok(()),
        }
    }

    /// The upper bound on the decoded size.
    pub fn max(self) -> usize {
        match self {
            DecodedSize::Exact(n) | DecodedSize::AtMost(n) => n,
        }
    }
}

/// An array->array codec (e.g. transpose).
pub trait ArrayToArrayCodec: Send + Sync + std::fmt::Debug {
    /// The representation this codec produces from `decoded`; fails if it cannot take `decoded`.
    fn encoded_repr(&self, decoded: &ArrayRepr) -> Result<ArrayRepr>;
    /// Encodes `data` (of representation `decoded`).
    fn encode(&self, data: &[u8], decoded: &ArrayRepr) -> Result<Vec<u8>>;
    /// Decodes `encoded` into `out`, which has `decoded`'s size.
    fn decode_into(&self, encoded: &[u8], decoded: &ArrayRepr, out: &mut [u8]) -> Result<()>;
    /// The codec's metadata object.
    fn to_json(&self) -> Value;
    /// Whether encoding may refuse a value ([`Error::Value`]): writes then encode every chunk before
    /// storing any, so that a refused value stores nothing.
    fn may_refuse_values(&self) -> bool {
        false
    }
    /// Whether the codec only moves elements, whatever their type (transpose, reshape): it then
    /// applies to variable-length elements too, moved as it moves an array of element indices
    /// (see [`vlen`]).
    fn only_moves_elements(&self) -> bool {
        false
    }
}

/// An encoded chunk as consecutive parts (a shard: its inner chunks and index), stored back to back.
pub type Parts<'a> = Vec<Cow<'a, [u8]>>;

/// Receives an encoded chunk: `None` when every element is the fill value (nothing needs storing).
pub type Sink<'s> = &'s mut dyn FnMut(Option<Parts<'_>>) -> Result<()>;

/// The parts joined into one owned buffer (a single owned part is moved, not copied).
pub fn join_parts(mut parts: Parts) -> Vec<u8> {
    if parts.len() == 1 {
        return parts.pop().unwrap().into_owned();
    }
    parts.concat()
}

/// An array->bytes codec (bytes, sharding_indexed, or a whole chain).
pub trait ArrayToBytesCodec: Send + Sync + std::fmt::Debug {
    /// Encodes `data` (C order, native-endian, of representation `repr`); may return the input itself.
    fn encode<'a>(&self, data: Cow<'a, [u8]>, repr: &ArrayRepr) -> Result<Cow<'a, [u8]>>;

    /// Encodes the chunk held as the box of `repr.shape` whose origin is at byte `offset` of `src`
    /// (laid out as `layout`) and hands the result to `sink` (`None` when every element equals the fill
    /// value). The default gathers the box when it is not contiguous and calls `encode`.
    fn encode_box(&self, src: &[u8], layout: &Layout, offset: usize, repr: &ArrayRepr, sink: Sink) -> Result<()> {
        with_box(src, layout, offset, &repr.shape, &repr.data_type, |data| {
            if crate::buffer::all_equal(data, &repr.fill_value) {
                return sink(None);
            }
            sink(Some(vec![self.encode(Cow::Borrowed(data), repr)?]))
        })
    }

    /// Decodes `encoded` into `out` (exactly `repr.nbytes()` bytes).
    fn decode_into(&self, encoded: &[u8], repr: &ArrayRepr, out: &mut [u8]) -> Result<()>;

    /// Whether decoding is a plain byte copy for `repr`, so that a bytes->bytes codec above may write
    /// straight into the destination.
    fn is_identity(&self, _repr: &ArrayRepr) -> bool {
        false
    }

    /// For codecs whose output is the elements in C order (the `bytes` codec): the byte-order
    /// conversion to apply when reading them back. Lets a chain map a region to the byte span it needs.
    fn element_bytes(&self, _repr: &ArrayRepr) -> Option<SwapPlan> {
        None
    }

    /// The encoded size when it does not depend on the values.
    fn encoded_size(&self, repr: &ArrayRepr) -> Option<u64>;

    /// Decodes the selection `sel` (chunk-local) of the chunk held by `src` into `dest`, reading only
    /// the bytes it needs where the codec allows. The default reads and decodes the whole chunk.
    fn partial_decode(&self, src: &dyn ByteSource, repr: &ArrayRepr, sel: &Selection, dest: Dest) -> Result<()> {
        crate::scratch::with_read_buffer(src.len() as usize, |encoded| {
            src.read_into(0, encoded)?;
            crate::scratch::with_decoded(repr.nbytes(), |chunk| {
                self.decode_into(encoded, repr, chunk)?;
                dest.copy_from(chunk, 0, &repr.shape, sel, &SwapPlan::identity())
            })
        })
    }

    /// The codec's metadata object.
    fn to_json(&self) -> Value;

    /// For a sharding codec, the inner chunk shape; `None` for other codecs.
    fn inner_chunk_shape(&self) -> Option<&[u64]> {
        None
    }

    /// Whether encoding may refuse a value (see [`ArrayToArrayCodec::may_refuse_values`]).
    fn may_refuse_values(&self) -> bool {
        false
    }

    /// This codec as a variable-length codec ([`vlen::VlenCodec`]), if it is one.
    fn as_vlen(&self) -> Option<&serialize::vlen::VlenCodec> {
        None
    }

    /// This codec as `sharding_indexed`, if it is one.
    fn as_sharding(&self) -> Option<&sharding::ShardingCodec> {
        None
    }
}

/// A bytes->bytes codec (compressors, checksums).
pub trait BytesToBytesCodec: Send + Sync + std::fmt::Debug {
    /// Encodes `data`.
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>>;
    /// Decodes `encoded`; the result must satisfy `size`.
    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>>;
    /// Decodes `encoded` into `out`, which must be filled exactly.
    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        let v = self.decode(encoded, DecodedSize::Exact(out.len()))?;
        out.copy_from_slice(&v);
        Ok(())
    }
    /// Decodes at least the decoded bytes `start..end` of `encoded`, whose full decoded size is
    /// `total`, into the same positions of `out` (at least `end` bytes: a buffer for the prefix the
    /// selection needs, not the whole chunk), doing less work than a full decode. `Ok(false)`: not
    /// possible here (the caller decodes everything). Only codecs whose partial output is as
    /// trustworthy as a full decode offer this (no skipped checksums), and they check what the stored
    /// bytes declare against `total` whatever part is read: a frame that declares another size or is
    /// cut short is `Error::Codec` for every selection.
    fn decode_partial(&self, _encoded: &[u8], _start: usize, _end: usize, _total: usize, _out: &mut [u8]) -> Result<bool> {
        Ok(false)
    }
    /// Fails (`Error::Codec`) when `encoded` cannot decode to `expected` bytes as far as a cheap look
    /// at it tells (a size its header declares, block sizes, the codec's largest expansion), before the
    /// caller allocates `expected` bytes for it. The default checks nothing; the decode still checks
    /// the size it gets.
    fn check_decodable(&self, _encoded: &[u8], _expected: usize) -> Result<()> {
        Ok(())
    }
    /// The encoded size for `decoded` input bytes, when it does not depend on the values.
    fn encoded_size(&self, _decoded: u64) -> Option<u64> {
        None
    }
    /// The codec's metadata object.
    fn to_json(&self) -> Value;
    /// The codec's numcodecs configuration object (`{"id": .., members}`, Zarr v2 `compressor` and
    /// `filters`). The default: `to_json` where that is already one, else the v3 object
    /// `{"name": n, "configuration": {..}}` as `{"id": n, ..}` (codecs whose numcodecs id is their v3
    /// name and whose members are the same override nothing).
    fn to_numcodecs_json(&self) -> Value {
        match self.to_json() {
            Value::Object(mut m) if m.contains_key("name") => {
                let mut out = Map::new();
                out.insert("id".into(), m.remove("name").unwrap_or_default());
                if let Some(Value::Object(c)) = m.remove("configuration") {
                    out.extend(c);
                }
                Value::Object(out)
            }
            v => v,
        }
    }
}

/// A codec of any kind, as built from metadata.
#[derive(Debug)]
pub enum Codec {
    /// array -> array
    ArrayToArray(Box<dyn ArrayToArrayCodec>),
    /// array -> bytes
    ArrayToBytes(Box<dyn ArrayToBytesCodec>),
    /// bytes -> bytes
    BytesToBytes(Box<dyn BytesToBytesCodec>),
}

/// Reads codec configurations: typed getters with messages naming the codec. Zarr v3 configurations
/// are strict (unknown members are refused); numcodecs ones are lenient (see [`Config::lenient`]).
pub struct Config<'a> {
    what: String,
    map: Option<&'a Map<String, Value>>,
    null_is_absent: bool,
}

impl<'a> Config<'a> {
    /// Wraps the configuration of `codec`, allowing only the member names in `allowed`.
    pub fn new(codec: &'a str, map: Option<&'a Map<String, Value>>, allowed: &[&str]) -> Result<Config<'a>> {
        if let Some(m) = map {
            if let Some(k) = m.keys().find(|k| !allowed.contains(&k.as_str())) {
                return Err(Error::Metadata(format!("codec '{codec}': unknown configuration member '{k}'")));
            }
        }
        Ok(Config { what: format!("codec '{codec}'"), map: Some(map).flatten(), null_is_absent: false })
    }

    /// Wraps a configuration whose unknown members are ignored and whose `null` members count as absent
    /// (numcodecs' conventions); `what` names it in messages.
    pub fn lenient(what: String, map: &'a Map<String, Value>) -> Config<'a> {
        Config { what, map: Some(map), null_is_absent: true }
    }

    /// The raw value of `key`.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.and_then(|m| m.get(key)).filter(|v| !(self.null_is_absent && v.is_null()))
    }

    /// An error about `key`.
    pub fn invalid(&self, key: &str, why: &str) -> Error {
        Error::Metadata(format!("{}: invalid '{key}': {why}", self.what))
    }

    /// An integer member in `min..=max`, or `default` when absent (`None`: required).
    pub fn int(&self, key: &str, min: i64, max: i64, default: Option<i64>) -> Result<i64> {
        match self.get(key) {
            None => default.ok_or_else(|| self.invalid(key, "required")),
            Some(v) => match v.as_i64() {
                Some(x) if x >= min && x <= max => Ok(x),
                _ => Err(self.invalid(key, &format!("expected an integer in [{min}, {max}], got {v}"))),
            },
        }
    }

    /// A number member, or `default` when absent (`None`: required).
    pub fn float(&self, key: &str, default: Option<f64>) -> Result<f64> {
        match self.get(key) {
            None => default.ok_or_else(|| self.invalid(key, "required")),
            Some(v) => v.as_f64().ok_or_else(|| self.invalid(key, &format!("expected a number, got {v}"))),
        }
    }

    /// A string member, or `default` when absent (`None`: required).
    pub fn string(&self, key: &str, default: Option<&'a str>) -> Result<&'a str> {
        match self.get(key) {
            None => default.ok_or_else(|| self.invalid(key, "required")),
            Some(v) => v.as_str().ok_or_else(|| self.invalid(key, &format!("expected a string, got {v}"))),
        }
    }

    /// A boolean member, or `default` when absent.
    pub fn bool(&self, key: &str, default: bool) -> Result<bool> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| self.invalid(key, &format!("expected a boolean, got {v}"))),
        }
    }

    /// A string member from `choices`, or `default` when absent (`None`: required).
    pub fn choice(&self, key: &str, choices: &[&'static str], default: Option<&'static str>) -> Result<&'static str> {
        match self.get(key) {
            None => default.ok_or_else(|| self.invalid(key, "required")),
            Some(v) => {
                let s = v.as_str().unwrap_or("");
                choices
                    .iter()
                    .find(|c| **c == s)
                    .copied()
                    .ok_or_else(|| self.invalid(key, &format!("expected one of {choices:?}, got {v}")))
            }
        }
    }
}

/// Builds one v3 codec from its extension object, as the registry ([`registry`]) describes it.
/// `decoded` is the representation it receives when encoding (needed to validate it and to pick
/// defaults). `Ok(None)`: an unknown codec marked `"must_understand": false`, which is skipped.
pub fn from_v3(ext: &Extension, decoded: &ArrayRepr) -> Result<Option<Codec>> {
    let (name, cfg) = (ext.name, ext.configuration);
    if let Some((entry, alias)) = registry::by_v3_name(name) {
        entry.takes.check(name, &decoded.data_type)?;
        if let (Some(a), Some(n)) = (alias, &entry.numcodecs) {
            if a.numcodecs_config {
                // The 2020 draft's configuration is numcodecs' (blosc: integer shuffle, -1 = automatic).
                let mut v2 = cfg.cloned().unwrap_or_default();
                v2.insert("id".into(), Value::from(n.id));
                let elem = numcodecs::V2Elem { data_type: decoded.data_type.clone(), byte_order: None };
                return Ok(Some(Codec::BytesToBytes(numcodecs::compressor(&Value::Object(v2), &elem)?)));
            }
        }
        let build = entry.from_v3.ok_or_else(|| Error::Internal(format!("codec '{name}' has no v3 builder")))?;
        return build(name, cfg, decoded).map(Some);
    }
    if name.starts_with(numcodecs::v3::PREFIX) {
        return match numcodecs::v3::from_v3(name, cfg, decoded) {
            Err(Error::Unsupported(_)) if !ext.must_understand && !numcodecs::v3::known(name) => Ok(None),
            r => r.map(Some),
        };
    }
    if !ext.must_understand {
        return Ok(None);
    }
    Err(Error::Unsupported(format!("unsupported codec '{name}'")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn draft_uri_names() {
        let repr = ArrayRepr { shape: vec![64], data_type: DataType::Int32, fill_value: vec![0; 4] };
        let data: Vec<u8> = (0..64i32).flat_map(|v| (v / 3).to_ne_bytes()).collect();
        for v in [
            json!({"codec": compress::gzip::URI, "configuration": {"level": 1}}),
            json!({"name": compress::gzip::URI, "configuration": {"level": 9}}),
            json!({"codec": compress::blosc::URI, "configuration": {"cname": "lz4", "clevel": 1, "shuffle": 1, "blocksize": 0}}),
            json!({"codec": compress::blosc::URI, "configuration": {"cname": "zstd", "clevel": 3, "shuffle": -1, "blocksize": 0}}),
        ] {
            let e = Extension::parse(&v, "codec").unwrap();
            let Some(Codec::BytesToBytes(c)) = from_v3(&e, &repr).unwrap() else { panic!("{v}") };
            let enc = c.encode(&data).unwrap();
            assert_eq!(c.decode(&enc, DecodedSize::Exact(data.len())).unwrap().as_ref(), &data[..], "{v}");
        }
        let bad = json!({"codec": compress::blosc::URI, "configuration": {"cname": "lz4", "clevel": 1, "shuffle": 7}});
        assert!(from_v3(&Extension::parse(&bad, "codec").unwrap(), &repr).is_err());
    }

    #[test]
    fn unknown_codec() {
        let repr = ArrayRepr { shape: vec![2], data_type: DataType::UInt8, fill_value: vec![0] };
        let v = json!({"name": "zz_unknown"});
        let e = Extension::parse(&v, "codec").unwrap();
        assert!(matches!(from_v3(&e, &repr), Err(Error::Unsupported(m)) if m.contains("zz_unknown")));
        let v = json!({"name": "zz_unknown", "must_understand": false});
        let e = Extension::parse(&v, "codec").unwrap();
        assert!(from_v3(&e, &repr).unwrap().is_none());
    }
}
