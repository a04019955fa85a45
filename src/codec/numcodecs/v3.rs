//! numcodecs codecs under the Zarr v3 names zarr-python 3 writes: `numcodecs.<id>` with the numcodecs
//! configuration (without `id`) as the v3 configuration, built by one adapter around the v2 codecs.
//!
//! v3 names (zarr-python 3.1 `zarr.codecs.numcodecs`), by kind:
//! - bytes -> bytes: `numcodecs.blosc`, `.lz4`, `.zstd`, `.zlib`, `.gzip`, `.bz2`, `.lzma`, `.shuffle`,
//!   and the checksums `.crc32`, `.adler32`, `.crc32c`, `.fletcher32`. They receive plain bytes, as
//!   in zarr-python (so `numcodecs.blosc` uses typesize 1 and its automatic shuffle is the bit
//!   shuffle); `numcodecs.shuffle` without `elementsize` takes the array's element size (zarr-python
//!   fills it in the same way).
//! - array -> array: `numcodecs.delta`, `.fixedscaleoffset`, `.quantize`, `.bitround`, `.astype`,
//!   `.packbits`, `.categorize` (not registered by zarr-python 3.1.6). They receive the chunk's
//!   elements (native byte order, as zarr-python hands numcodecs a native array) and produce elements
//!   of the type they describe (`astype`, `encode_dtype`; `packbits`: `1 + ceil(n / 8)` `uint8`
//!   values in one dimension); other filters keep the chunk's shape. Elements produced in the
//!   non-native byte order (a `">i4"` `astype`) are handed on in native order, as zarr-python does.
//! - array -> bytes: `numcodecs.pcodec` and `numcodecs.zfpy` (see [`crate::codec::serialize::pcodec`], [`crate::codec::serialize::zfpy`]); they
//!   receive the chunk's elements (native byte order) in its shape, as zarr-python hands them over.
//!
//! Dtype members (`dtype`, `astype`, `encode_dtype`, `decode_dtype`) may be numpy dtype names, as
//! zarr-python writes them (`"float64"`, `"uint8"`, `"bool"`, `"i4"`): they mean the native byte order.
//! Example: `{"name": "numcodecs.delta", "configuration": {"dtype": "int32"}}`

use super::{filter, V2Elem};
use crate::codec::registry::{self, UnderV3, V2Build};
use crate::codec::{ArrayRepr, ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, Codec, DecodedSize};
use crate::dtype::{DataType, Endian};
use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// Prefix of the v3 names of numcodecs codecs.
pub const PREFIX: &str = "numcodecs.";

/// The byte order of this machine.
pub fn native() -> Endian {
    if cfg!(target_endian = "big") {
        Endian::Big
    } else {
        Endian::Little
    }
}

/// A numpy dtype name (`"float64"`, `"u2"`, `"bool"`) as a dtype string in native order (`"<f8"`);
/// other strings are returned unchanged.
fn typestr(s: &str) -> String {
    let code = match s {
        "bool" | "?" | "b1" => "b1",
        "int8" | "i1" => "i1",
        "uint8" | "u1" => "u1",
        "int16" | "i2" => "i2",
        "uint16" | "u2" => "u2",
        "int32" | "i4" => "i4",
        "uint32" | "u4" => "u4",
        "int64" | "i8" => "i8",
        "uint64" | "u8" => "u8",
        "float16" | "f2" => "f2",
        "float32" | "f4" => "f4",
        "float64" | "f8" => "f8",
        _ => return s.to_string(),
    };
    let order = if code.ends_with('1') { '|' } else if native() == Endian::Big { '>' } else { '<' };
    format!("{order}{code}")
}

/// The numcodecs configuration object (`{"id": ..., ...}`) of a v3 `numcodecs.<id>` codec.
fn v2_config(id: &str, cfg: Option<&Map<String, Value>>) -> Result<Value> {
    let mut m = Map::new();
    m.insert("id".into(), Value::from(id));
    for (k, v) in cfg.into_iter().flatten() {
        match (k.as_str(), v) {
            ("id", Value::String(s)) if s == id => {}
            ("id", _) => return Err(Error::Metadata(format!("codec '{PREFIX}{id}': configuration id {v} does not match"))),
            (member, Value::String(s)) if super::DTYPE_MEMBERS.contains(&member) => {
                m.insert(k.clone(), Value::from(typestr(s)));
            }
            _ => {
                m.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(Value::Object(m))
}

/// The v3 metadata object of a codec.
fn v3_json(name: &str, cfg: Option<&Map<String, Value>>) -> Value {
    serde_json::json!({"name": name, "configuration": cfg.cloned().unwrap_or_default()})
}

/// The Zarr v3 metadata object of a codec built from a numcodecs configuration, given the codec's
/// `to_json()`: a Zarr v3 codec (blosc, gzip, zstd) already names itself; a numcodecs one (`{"id": ...,
/// members}`) becomes `numcodecs.<id>` with its members as configuration (the inverse of
/// `v2_config`).
pub fn v3_metadata(codec_json: Value) -> Value {
    match codec_json {
        Value::Object(mut m) if !m.contains_key("name") => {
            let id = m.remove("id").and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            serde_json::json!({"name": format!("{PREFIX}{id}"), "configuration": m})
        }
        v => v,
    }
}

/// Whether `name` is a `numcodecs.<id>` codec libzarr implements.
pub fn known(name: &str) -> bool {
    registry::numcodecs_under_v3(name).is_some()
}

/// Builds the v3 codec `name` (`numcodecs.<id>`) receiving `decoded`.
pub fn from_v3(name: &str, cfg: Option<&Map<String, Value>>, decoded: &ArrayRepr) -> Result<Codec> {
    let id = name.strip_prefix(PREFIX).unwrap_or(name);
    let mut v2 = v2_config(id, cfg)?;
    let json = v3_json(name, cfg);
    let ctx = |e: Error| e.context(format!("codec '{name}'"));
    let Some((n, kind)) = registry::numcodecs_under_v3(name) else {
        return Err(Error::Unsupported(format!("unsupported codec '{name}'")));
    };
    if let Some(fill_in) = n.v3_defaults {
        fill_in(&mut v2, decoded);
    }
    Ok(match kind {
        UnderV3::BytesToBytes => {
            Codec::BytesToBytes(Box::new(V3Bytes { inner: filter(&v2, &V2Elem::bytes()).map_err(ctx)?.0, json }))
        }
        UnderV3::ArrayToArray => Codec::ArrayToArray(Box::new(V3Filter::new(&v2, decoded, json).map_err(ctx)?)),
        UnderV3::ArrayToBytes => Codec::ArrayToBytes(array_to_bytes(&v2, decoded, json).map_err(ctx)?),
    })
}

/// Builds a numcodecs array -> bytes codec (`pcodec`, `zfpy`) from its configuration (`{"id", ...}`)
/// for chunks of `decoded` (native byte order); `json` is its metadata object.
pub fn array_to_bytes(v2: &Value, decoded: &ArrayRepr, json: Value) -> Result<Box<dyn ArrayToBytesCodec>> {
    let c = super::V2Config::new(v2)?;
    match registry::numcodecs(c.id).map(|n| n.build) {
        Some(V2Build::ArrayToBytes { build, .. }) => build(&c, decoded, json),
        _ => Err(Error::Unsupported(format!("numcodecs '{}' is not an array -> bytes codec", c.id))),
    }
}

/// A numcodecs bytes->bytes codec under its v3 name.
#[derive(Debug)]
struct V3Bytes {
    inner: Box<dyn BytesToBytesCodec>,
    json: Value,
}

impl BytesToBytesCodec for V3Bytes {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        self.inner.encode(data)
    }
    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        self.inner.decode(encoded, size)
    }
    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        self.inner.decode_into(encoded, out)
    }
    fn decode_partial(&self, encoded: &[u8], start: usize, end: usize, total: usize, out: &mut [u8]) -> Result<bool> {
        self.inner.decode_partial(encoded, start, end, total, out)
    }
    fn check_decodable(&self, encoded: &[u8], expected: usize) -> Result<()> {
        self.inner.check_decodable(encoded, expected)
    }
    fn encoded_size(&self, decoded: u64) -> Option<u64> {
        self.inner.encoded_size(decoded)
    }
    fn to_json(&self) -> Value {
        self.json.clone()
    }
}

/// A numcodecs filter as a v3 array->array codec.
#[derive(Debug)]
struct V3Filter {
    inner: Box<dyn BytesToBytesCodec>,
    /// The element type received.
    input: DataType,
    /// The element type produced.
    output: DataType,
    /// The filter produces elements in the non-native byte order (swapped to native here).
    swap: bool,
    json: Value,
}

impl V3Filter {
    fn new(v2: &Value, decoded: &ArrayRepr, json: Value) -> Result<V3Filter> {
        let input = V2Elem { data_type: decoded.data_type.clone(), byte_order: Some(native()) };
        let (inner, out) = filter(v2, &input)?;
        // Under v3 the filter is an array -> array codec of the chunk's elements (zarr-python reshapes
        // its output to the chunk's shape): its own dtype must be theirs, unlike under v2, where a
        // filter views any bytes as its dtype.
        let c = super::V2Config::new(v2)?;
        for key in ["dtype", "decode_dtype"] {
            if let Ok(t) = crate::codec::filter::num_type(&c, key, None) {
                crate::codec::filter::check_input(&c, key, &t, &input)?;
            }
        }
        // zarr-python's `numcodecs.bitround` keeps the chunk's data type (its integer result holds
        // the same bytes); under v2 the next filter sees numcodecs' integers.
        let id_of = |e: &registry::CodecEntry| e.numcodecs.as_ref().map(|n| n.id);
        let out = if Some(c.id) == id_of(&crate::codec::filter::bitround_numcodecs::CODEC) { input.clone() } else { out };
        if Some(c.id) == id_of(&crate::codec::filter::packbits::CODEC) && decoded.data_type != DataType::Bool {
            return Err(Error::Unsupported(format!("numcodecs 'packbits' needs bool elements, not {}", decoded.data_type)));
        }
        let swap = out.data_type.size() > 1 && out.byte_order.is_some_and(|o| o != native());
        Ok(V3Filter { inner, input: decoded.data_type.clone(), output: out.data_type, swap, json })
    }

    fn swap_bytes(&self, data: &mut [u8]) {
        if self.swap {
            for e in data.chunks_exact_mut(self.output.size()) {
                e.reverse();
            }
        }
    }
}

impl ArrayToArrayCodec for V3Filter {
    fn encoded_repr(&self, decoded: &ArrayRepr) -> Result<ArrayRepr> {
        if decoded.data_type != self.input {
            return Err(Error::Metadata(format!("{}: built for {} elements, given {}", self.json["name"], self.input, decoded.data_type)));
        }
        let n = decoded.num_elements();
        let size = self.output.size() as u64;
        let m = self.inner.encoded_size(n * decoded.data_type.size() as u64).ok_or_else(|| {
            Error::Unsupported(format!("{}: the encoded size of a chunk is not fixed", self.json["name"]))
        })?;
        let shape = if m == n * size { decoded.shape.clone() } else { vec![m / size] };
        // The encoded fill value: the decoded one encoded alone where the filter works element-wise.
        let mut fill = vec![0; self.output.size()];
        if shape == decoded.shape {
            if let Ok(e) = self.inner.encode(&decoded.fill_value) {
                if e.len() == fill.len() {
                    fill = e;
                    self.swap_bytes(&mut fill);
                }
            }
        }
        Ok(ArrayRepr { shape, data_type: self.output.clone(), fill_value: fill })
    }

    fn encode(&self, data: &[u8], _decoded: &ArrayRepr) -> Result<Vec<u8>> {
        let mut v = self.inner.encode(data)?;
        self.swap_bytes(&mut v);
        Ok(v)
    }

    fn decode_into(&self, encoded: &[u8], _decoded: &ArrayRepr, out: &mut [u8]) -> Result<()> {
        if self.swap {
            let mut v = encoded.to_vec();
            self.swap_bytes(&mut v);
            return self.inner.decode_into(&v, out);
        }
        self.inner.decode_into(encoded, out)
    }

    fn to_json(&self) -> Value {
        self.json.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::chain::CodecChain;
    use serde_json::json;

    fn repr(shape: &[u64], dt: DataType) -> ArrayRepr {
        let fill = vec![0; dt.size()];
        ArrayRepr { shape: shape.to_vec(), data_type: dt, fill_value: fill }
    }

    fn round_trip(codecs: Value, r: &ArrayRepr, data: &[u8]) -> Vec<u8> {
        let chain = CodecChain::from_v3(&codecs, r).unwrap();
        assert_eq!(chain.to_json(), codecs);
        let enc = chain.encode_chunk(data).unwrap().into_owned();
        let mut out = vec![0; r.nbytes()];
        chain.decode_chunk(&enc, &mut out).unwrap();
        out
    }

    #[test]
    fn names_and_kinds() {
        let r = repr(&[6, 7], DataType::Int32);
        let data: Vec<u8> = (0..42i32).flat_map(|v| (v * v - 300).to_ne_bytes()).collect();
        let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
        for c in [
            json!({"name": "numcodecs.blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": -1, "blocksize": 0}}),
            json!({"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}),
            json!({"name": "numcodecs.zstd", "configuration": {"level": 0, "checksum": true}}),
            json!({"name": "numcodecs.zlib", "configuration": {"level": 5}}),
            json!({"name": "numcodecs.gzip", "configuration": {"level": 1}}),
            json!({"name": "numcodecs.bz2", "configuration": {"level": 9}}),
            json!({"name": "numcodecs.lzma", "configuration": {"format": 1, "check": -1, "preset": null, "filters": null}}),
            json!({"name": "numcodecs.shuffle", "configuration": {}}),
            json!({"name": "numcodecs.crc32", "configuration": {"location": "end"}}),
            json!({"name": "numcodecs.adler32", "configuration": {}}),
            json!({"name": "numcodecs.crc32c", "configuration": {}}),
            json!({"name": "numcodecs.fletcher32", "configuration": {}}),
        ] {
            let codecs = json!([bytes, c]);
            assert_eq!(round_trip(codecs, &r, &data), data);
        }
        for c in [
            json!({"name": "numcodecs.delta", "configuration": {"dtype": "int32"}}),
            json!({"name": "numcodecs.delta", "configuration": {"dtype": "<i4", "astype": ">i8"}}),
            json!({"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 100, "scale": 2, "dtype": "int32", "astype": "int64"}}),
            json!({"name": "numcodecs.astype", "configuration": {"encode_dtype": "float64", "decode_dtype": "int32"}}),
        ] {
            let codecs = json!([c, bytes]);
            assert_eq!(round_trip(codecs, &r, &data), data);
        }
        // the encoded representation follows the filter's output type
        let chain = CodecChain::from_v3(&json!([{"name": "numcodecs.astype", "configuration": {"encode_dtype": "int16"}}, bytes]), &r).unwrap();
        let enc = chain.encode_chunk(&data).unwrap();
        assert_eq!(enc.len(), 42 * 2);
        assert_eq!(&enc[..4], &[(-300i16).to_le_bytes(), (-299i16).to_le_bytes()].concat()[..]);
    }

    #[test]
    fn lossy_filters_and_packbits() {
        let r = repr(&[4, 5], DataType::Float64);
        let x: Vec<f64> = (0..20).map(|i| (i as f64) * 0.123456789 - 1.0).collect();
        let data: Vec<u8> = x.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
        let out = round_trip(json!([{"name": "numcodecs.quantize", "configuration": {"digits": 3, "dtype": "float64"}}, bytes]), &r, &data);
        for (a, b) in x.iter().zip(out.chunks(8)) {
            assert!((a - f64::from_ne_bytes(b.try_into().unwrap())).abs() < 1e-3);
        }
        let out = round_trip(json!([{"name": "numcodecs.bitround", "configuration": {"keepbits": 10}}, bytes]), &r, &data);
        for (a, b) in x.iter().zip(out.chunks(8)) {
            let b = f64::from_ne_bytes(b.try_into().unwrap());
            assert!((a - b).abs() <= a.abs() / 1024.0, "{a} {b}");
        }
        let r = repr(&[3, 7], DataType::Bool);
        let data: Vec<u8> = (0..21).map(|i| u8::from(i % 3 == 0)).collect();
        let codecs = json!([{"name": "numcodecs.packbits", "configuration": {}}, bytes]);
        assert_eq!(round_trip(codecs.clone(), &r, &data), data);
        let chain = CodecChain::from_v3(&codecs, &r).unwrap();
        assert_eq!(chain.encode_chunk(&data).unwrap().len(), 1 + 3);
    }

    #[test]
    fn refusals() {
        let r = repr(&[4], DataType::Int32);
        let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
        for (c, unsupported) in [
            (json!({"name": "numcodecs.nonesuch", "configuration": {}}), true),
            (json!({"name": "numcodecs.packbits", "configuration": {}}), true),
            (json!({"name": "numcodecs.delta", "configuration": {"dtype": "int16"}}), false),
            (json!({"name": "numcodecs.zlib", "configuration": {"id": "gzip"}}), false),
            (json!({"name": "numcodecs.zlib", "configuration": {"level": 99}}), false),
        ] {
            let codecs = if c["name"] == "numcodecs.zlib" { json!([bytes, c]) } else { json!([c, bytes]) };
            match CodecChain::from_v3(&codecs, &r) {
                Err(Error::Unsupported(_)) if unsupported => {}
                Err(Error::Metadata(_)) if !unsupported => {}
                other => panic!("{c}: {other:?}"),
            }
        }
        // corrupt data: a checksum error, a codec error
        let chain = CodecChain::from_v3(&json!([bytes, {"name": "numcodecs.adler32"}]), &r).unwrap();
        let mut enc = chain.encode_chunk(&[7; 16]).unwrap().into_owned();
        enc[9] ^= 1;
        assert!(matches!(chain.decode_chunk(&enc, &mut [0; 16]), Err(Error::Checksum(_))));
        let chain = CodecChain::from_v3(&json!([bytes, {"name": "numcodecs.zlib"}]), &r).unwrap();
        let enc = chain.encode_chunk(&[7; 16]).unwrap().into_owned();
        assert!(matches!(chain.decode_chunk(&enc[..enc.len() - 3], &mut [0; 16]), Err(Error::Codec(_))));
    }
}
