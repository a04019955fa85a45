//! numcodecs plumbing: the `compressor` and `filters` entries of Zarr v2 `.zarray` documents (and the
//! `compression` of Zarr v1), built into the same bytes->bytes codecs as Zarr v3 chains. The codecs
//! themselves live by kind in [`super::compress`], [`super::filter`], [`super::serialize`] and
//! [`super::checksum`]; here are their configuration objects, the numpy model ([`numpy`]) and the
//! `numcodecs.<id>` names under v3 ([`v3`]).
//!
//! Every codec receives the description of the bytes it is given ([`V2Elem`]: element type and byte
//! order); a filter also returns the description of what it produces (e.g. `astype` changes it). A
//! filter with a dtype of its own views what it receives as that dtype, as numcodecs does (see
//! [`super::filter`]): the description gives defaults, and the element type of `bitround` and blosc.
//! Configuration members not listed by a codec are ignored, as numcodecs ignores them.

pub mod numpy;
#[cfg(test)]
pub(crate) mod test_vectors;
pub mod v3;

use super::registry::{self, Numcodecs, UnderV3, V1Options, V2Build};
use super::{BytesToBytesCodec, Config, DecodedSize};
use std::borrow::Cow;
use crate::dtype::{DataType, Endian};
use crate::error::{Error, Result};
use serde_json::Value;

/// The elements a numcodecs codec receives: their type and stored byte order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Elem {
    /// Element type.
    pub data_type: DataType,
    /// Byte order of the elements (`None` where it does not matter).
    pub byte_order: Option<Endian>,
}

impl V2Elem {
    /// Plain bytes (what a compressor produces).
    pub fn bytes() -> V2Elem {
        V2Elem { data_type: DataType::UInt8, byte_order: None }
    }

    /// Parses a numcodecs dtype string (e.g. `"<i4"`) as an element description. Without a byte-order
    /// character (`"u1"`, `"i4"`: numpy's native order, as GDAL writes delta's dtype) the host's order.
    pub fn parse(typestr: &str) -> Result<V2Elem> {
        let native;
        let typestr = if typestr.starts_with(|c: char| c.is_ascii_alphabetic()) {
            native = format!("{}{typestr}", if cfg!(target_endian = "big") { '>' } else { '<' });
            native.as_str()
        } else {
            typestr
        };
        let t = crate::dtype::v2::parse_typestr(typestr)?;
        Ok(V2Elem { data_type: t.data_type, byte_order: t.byte_order })
    }
}

/// A numcodecs configuration object: `id` plus members, read leniently (see [`Config::lenient`]).
pub struct V2Config<'a> {
    /// The codec id.
    pub id: &'a str,
    config: Config<'a>,
}

impl<'a> std::ops::Deref for V2Config<'a> {
    type Target = Config<'a>;
    fn deref(&self) -> &Config<'a> {
        &self.config
    }
}

impl<'a> V2Config<'a> {
    /// Reads the `id` of a configuration object.
    pub fn new(v: &'a Value) -> Result<V2Config<'a>> {
        let map = v.as_object().ok_or_else(|| Error::Metadata(format!("numcodecs configuration {v} is not an object")))?;
        let id = map
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::Metadata(format!("numcodecs configuration {v} has no string 'id'")))?;
        Ok(V2Config { id, config: Config::lenient(format!("numcodecs '{id}'"), map) })
    }

    /// A dtype-string member parsed as an element description (`default` when absent).
    pub fn elem(&self, key: &str, default: Option<&V2Elem>) -> Result<V2Elem> {
        match self.get(key) {
            None => default.cloned().ok_or_else(|| self.invalid(key, "required")),
            Some(Value::String(s)) => V2Elem::parse(s).map_err(|e| e.context(format!("numcodecs '{}' {key}", self.id))),
            Some(v) => Err(self.invalid(key, &format!("expected a dtype string, got {v}"))),
        }
    }
}

/// The `decode` of a decompressor writing into a slice (`decode` returns the bytes it wrote): decodes
/// into a buffer of the largest size allowed, checks the size and shrinks the buffer to it.
pub fn decompress_new(size: DecodedSize, codec: &str, decode: impl FnOnce(&mut [u8]) -> Result<usize>) -> Result<Cow<'static, [u8]>> {
    let mut out = crate::error::try_alloc(size.max())?;
    let n = decode(&mut out)?;
    size.check(n, codec)?;
    out.truncate(n);
    Ok(Cow::Owned(out))
}

/// Runs a streaming compressor to the end of its stream: `step(input, out)` feeds the rest of the input,
/// appends to `out` and returns (input bytes consumed, stream finished). The output starts with
/// `first_capacity` bytes of room and grows by half when full.
pub fn compress_streaming(
    data: &[u8],
    first_capacity: usize,
    mut step: impl FnMut(&[u8], &mut Vec<u8>) -> Result<(usize, bool)>,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut cap = first_capacity;
    let mut consumed = 0usize;
    loop {
        out.try_reserve(cap.saturating_sub(out.len())).map_err(|_| crate::error::alloc_failed(cap))?;
        let (used, done) = step(&data[consumed..], &mut out)?;
        consumed += used;
        if done {
            return Ok(out);
        }
        cap = out.len() + out.len() / 2 + 4096;
    }
}

/// The configuration members that are dtype strings (numpy dtype names under v3).
pub const DTYPE_MEMBERS: [&str; 4] = ["dtype", "astype", "encode_dtype", "decode_dtype"];

/// Builds a v2 `compressor` for bytes described by `input` (the typesize of blosc comes from it). The
/// 2020 codec draft's form `{"codec": URI, "configuration": {...}}` is accepted for the codecs with
/// such an alias (gzip and blosc).
pub fn compressor(cfg: &Value, input: &V2Elem) -> Result<Box<dyn BytesToBytesCodec>> {
    if let Some(uri) = cfg.get("codec").and_then(Value::as_str) {
        let id = registry::by_v3_name(uri)
            .filter(|(_, alias)| alias.is_some())
            .and_then(|(e, _)| e.numcodecs.as_ref())
            .map(|n| n.id)
            .ok_or_else(|| Error::Unsupported(format!("unsupported compressor '{uri}'")))?;
        let mut m = cfg.get("configuration").and_then(Value::as_object).cloned().unwrap_or_default();
        m.insert("id".into(), Value::from(id));
        return compressor(&Value::Object(m), input);
    }
    let c = V2Config::new(cfg)?;
    match registry::numcodecs(c.id).map(|n| n.build) {
        Some(V2Build::Compressor(build)) => build(&c, input),
        _ => Err(Error::Unsupported(format!("unsupported v2 compressor '{}'", c.id))),
    }
}

/// A filter's codec and output description, boxed (for the filters' registry entries).
pub fn boxed<C: BytesToBytesCodec + 'static>(r: Result<(C, V2Elem)>) -> Result<(Box<dyn BytesToBytesCodec>, V2Elem)> {
    r.map(|(c, e)| (Box::new(c) as Box<dyn BytesToBytesCodec>, e))
}

/// The numcodecs identity of a filter built by `build` (`elementwise`: see
/// [`Numcodecs::elementwise`]), known under v3 as the array -> array codec `numcodecs.<id>`.
pub const fn array_filter(
    id: &'static str,
    build: fn(&V2Config, &V2Elem) -> Result<(Box<dyn BytesToBytesCodec>, V2Elem)>,
    elementwise: bool,
) -> Option<Numcodecs> {
    Some(Numcodecs { id, build: V2Build::Filter(build), under_v3: Some(UnderV3::ArrayToArray), v3_defaults: None, elementwise, v1: None })
}

/// The numcodecs identity of a bytes -> bytes compressor or checksum built by `build`, known under
/// v3 as `numcodecs.<id>`; `v1`: its Zarr v1 form, if it is a v1 compression.
pub const fn bytes_codec(
    id: &'static str,
    build: fn(&V2Config, &V2Elem) -> Result<Box<dyn BytesToBytesCodec>>,
    v1: Option<V1Options>,
) -> Option<Numcodecs> {
    Some(Numcodecs { id, build: V2Build::Compressor(build), under_v3: Some(UnderV3::BytesToBytes), v3_defaults: None, elementwise: false, v1 })
}

/// Builds a v2 filter receiving `input`; returns it with the description of what it produces.
/// Filters: `delta`, `fixedscaleoffset`, `quantize`, `bitround`, `astype`, `packbits`, `shuffle`,
/// `categorize` (see [`filters`]), and the compressors and checksums.
pub fn filter(cfg: &Value, input: &V2Elem) -> Result<(Box<dyn BytesToBytesCodec>, V2Elem)> {
    let c = V2Config::new(cfg)?;
    match registry::numcodecs(c.id).map(|n| n.build) {
        // Compressors (and checksums) may also be listed as filters.
        Some(V2Build::Compressor(build)) => Ok((build(&c, input)?, V2Elem::bytes())),
        Some(V2Build::Filter(build)) => build(&c, input),
        _ => Err(Error::Unsupported(format!("unsupported v2 filter '{}'", c.id))),
    }
}
