//! Array creation without writing JSON: an [`ArraySpec`] (data type, shape, chunking, sharding, a
//! compressor by name, fill value, dimension names, attributes, Zarr format) that produces the metadata
//! document a hand-written `zarr.json` / `.zarray` would hold, as netCDF's `nc_def_var*` and HDF5's
//! `H5Pset_*` calls do for their formats. The C side is `zarr_array_spec_*` (src/ffi/spec.rs).
//!
//! Defaults (documented in the header too):
//! - compressor zstd at level 3 (zstd's own default level) without checksum; blosc level 5 with the
//!   byte shuffle; gzip level 6;
//! - chunks of at most 1 MiB ([`default_chunks`]); for a sharded array the inner chunks follow the same
//!   budget but divide the shard shape ([`default_inner_chunks`]);
//! - fill value zero (false, 0, +0.0, empty string);
//! - Zarr format 3, chunk key encoding `default` with separator `/` (v2: separator `.`, order C).

use crate::array::Array;
use crate::codec::serialize::bytes::BytesCodec;
use crate::codec::filter::shuffle::ShuffleCodec;
use crate::codec::numcodecs;
use crate::codec::registry;
use crate::codec::sharding::{self, index::IndexLocation};
use crate::codec::{ArrayRepr, ArrayToBytesCodec, BytesToBytesCodec, Codec};
use crate::dtype::v2 as dtv2;
use crate::dtype::{DataType, Endian};
use crate::error::{Error, Result};
use crate::group::Group;
use crate::dtype::fill_value;
use crate::metadata;
use crate::store::Store;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The chunk size budget of the default chunking rule, in bytes (1 MiB).
pub(crate) const DEFAULT_CHUNK_BYTES: u64 = 1 << 20;
/// Bytes per element assumed by the default chunking rule for variable-length types.
pub(crate) const VLEN_ELEMENT_BYTES: u64 = 16;

/// A compressor choice: `none`, or a codec the registry offers to the spec API
/// ([`registry::SpecCompressor`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compressor {
    /// No compression.
    None,
    /// A registered codec: its v3 name, its variant (blosc's internal compressor; `""` where it has
    /// none) and its level.
    Codec {
        /// The codec's v3 name.
        name: &'static str,
        /// The variant (`blosc-<variant>`), or `""`.
        variant: &'static str,
        /// The level.
        level: i32,
    },
}

impl Compressor {
    /// Parses a compressor name (`zstd`, `gzip`, `blosc-lz4`, `blosc-lz4hc`, `blosc-blosclz`,
    /// `blosc-zstd`, `blosc-zlib`, `none`: [`registry::spec_compressor_names`]) with a level (`None`:
    /// the default of that compressor).
    pub fn parse(name: &str, level: Option<i32>) -> Result<Compressor> {
        if name == "none" {
            return Ok(Compressor::None);
        }
        let Some((entry, variant)) = registry::spec_compressor(name) else {
            let names = registry::spec_compressor_names().join(", ");
            return Err(Error::InvalidArgument(format!("unknown compressor '{name}': expected {names} or none")));
        };
        let (Some(codec), Some(spec)) = (entry.name, &entry.spec) else {
            return Err(Error::Internal(format!("compressor '{name}' is registered without a name")));
        };
        let (lo, hi) = spec.levels;
        let level = level.unwrap_or(spec.default_level);
        if !(lo..=hi).contains(&level) {
            return Err(Error::InvalidArgument(format!("compressor '{name}': level {level} is outside [{lo}, {hi}]")));
        }
        Ok(Compressor::Codec { name: codec, variant, level })
    }

    /// The default: the registry's first spec compressor (zstd) at its default level.
    pub fn default_choice() -> Compressor {
        let (name, spec) = registry::all()
            .find_map(|e| Some((e.name?, e.spec.as_ref()?)))
            .expect("the registry offers a compressor");
        Compressor::Codec { name, variant: spec.variants.first().copied().unwrap_or(""), level: spec.default_level }
    }

    /// How the registry builds it, its variant and level (`None`: no compressor).
    fn spec(&self) -> Option<(&'static registry::SpecCompressor, &'static str, i32)> {
        match self {
            Compressor::None => None,
            Compressor::Codec { name, variant, level } => {
                registry::by_v3_name(name).and_then(|(e, _)| e.spec.as_ref()).map(|s| (s, *variant, *level))
            }
        }
    }
}

/// A shuffle filter before compression: none, byte shuffle (blosc's own, otherwise numcodecs'
/// `shuffle` filter) or bit shuffle (blosc only).
pub use crate::codec::compress::blosc::Shuffle;

/// Everything needed to create an array; see the module documentation for the defaults.
#[derive(Debug, Clone)]
pub struct ArraySpec {
    /// Element type (fixed-size types without parameters, `string` and `bytes`).
    pub data_type: DataType,
    /// Array shape.
    pub shape: Vec<u64>,
    /// Chunk shape (the inner chunk shape when sharded); `None`: the default rule.
    pub chunks: Option<Vec<u64>>,
    /// Shard shape; `None`: not sharded.
    pub shards: Option<Vec<u64>>,
    /// Compressor.
    pub compressor: Compressor,
    /// Shuffle; `None`: byte shuffle for blosc, none otherwise.
    pub shuffle: Option<Shuffle>,
    /// One native-endian element; `None`: zero.
    pub fill_value: Option<Vec<u8>>,
    /// Dimension names (an entry `None` leaves that dimension unnamed).
    pub dimension_names: Option<Vec<Option<String>>>,
    /// User attributes.
    pub attributes: Map<String, Value>,
    /// 2 or 3; `None`: 3, or the format of the group the array is created in.
    pub zarr_format: Option<u8>,
}

/// The default chunk shape: start from the shape (extents of 0 count as 1) and halve the largest
/// extent (rounding up; the first one among equals) until the chunk holds at most
/// [`DEFAULT_CHUNK_BYTES`] (or every extent is 1).
pub fn default_chunks(shape: &[u64], element_bytes: u64) -> Vec<u64> {
    let mut c: Vec<u64> = shape.iter().map(|&s| s.max(1)).collect();
    while bytes_of(&c, element_bytes) > DEFAULT_CHUNK_BYTES {
        let Some(d) = largest(&c, |_| true) else { break };
        if c[d] == 1 {
            break;
        }
        c[d] = c[d].div_ceil(2);
    }
    c
}

/// The default inner chunk shape of a shard: start from the shard shape and divide the largest extent
/// above 1 (the first one among equals) by its smallest prime factor until the chunk holds at most
/// [`DEFAULT_CHUNK_BYTES`] (or every extent is 1). Inner chunks so always divide the shard shape.
pub fn default_inner_chunks(shard: &[u64], element_bytes: u64) -> Vec<u64> {
    let mut c = shard.to_vec();
    while bytes_of(&c, element_bytes) > DEFAULT_CHUNK_BYTES {
        let Some(d) = largest(&c, |x| x > 1) else { break };
        c[d] /= smallest_prime_factor(c[d]);
    }
    c
}

fn bytes_of(c: &[u64], element_bytes: u64) -> u64 {
    c.iter().fold(element_bytes, |acc, &x| acc.saturating_mul(x))
}

fn largest(c: &[u64], ok: impl Fn(u64) -> bool) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, &x) in c.iter().enumerate() {
        if ok(x) && best.is_none_or(|b| x > c[b]) {
            best = Some(i);
        }
    }
    best
}

fn smallest_prime_factor(n: u64) -> u64 {
    let mut f = 2u64;
    while f.saturating_mul(f) <= n {
        if n.is_multiple_of(f) {
            return f;
        }
        f += 1;
    }
    n
}

fn invalid(msg: impl Into<String>) -> Error {
    Error::InvalidArgument(msg.into())
}

impl ArraySpec {
    /// A spec with every default for `data_type` and `shape`. Types that need parameters (`r<N>`,
    /// structs, datetimes, fixed-length strings) are [`Error::Unsupported`]: write their JSON document.
    pub fn new(data_type: DataType, shape: &[u64]) -> Result<ArraySpec> {
        match &data_type {
            DataType::Raw(_)
            | DataType::Struct(_)
            | DataType::DateTime64(_)
            | DataType::TimeDelta64(_)
            | DataType::FixedUtf32(_)
            | DataType::NullTerminatedBytes(_)
            | DataType::VlenArray(_) => {
                return Err(Error::Unsupported(format!(
                    "an array spec cannot describe data type {data_type} (it needs parameters): create it from a \
                     metadata document (zarr_create)"
                )))
            }
            _ => {}
        }
        Ok(ArraySpec {
            data_type,
            shape: shape.to_vec(),
            chunks: None,
            shards: None,
            compressor: Compressor::default_choice(),
            shuffle: None,
            fill_value: None,
            dimension_names: None,
            attributes: Map::new(),
            zarr_format: None,
        })
    }

    /// Bytes per element for the chunking rule.
    fn element_bytes(&self) -> u64 {
        match self.data_type.size() {
            0 => VLEN_ELEMENT_BYTES,
            n => n as u64,
        }
    }

    fn check_shape(&self, what: &str, v: &[u64], zero_ok: bool) -> Result<()> {
        if v.len() != self.shape.len() {
            return Err(invalid(format!("{what} has {} values, the array has rank {}", v.len(), self.shape.len())));
        }
        if !zero_ok && v.contains(&0) {
            return Err(invalid(format!("{what} {v:?} has a zero extent")));
        }
        Ok(())
    }

    /// Sets the chunk shape (the inner chunk shape of a sharded array).
    pub fn set_chunks(&mut self, chunks: &[u64]) -> Result<()> {
        self.check_shape("chunk shape", chunks, false)?;
        self.chunks = Some(chunks.to_vec());
        Ok(())
    }

    /// Sets (or, with `None`, removes) the shard shape.
    pub fn set_shards(&mut self, shards: Option<&[u64]>) -> Result<()> {
        if let Some(s) = shards {
            self.check_shape("shard shape", s, false)?;
        }
        self.shards = shards.map(<[u64]>::to_vec);
        Ok(())
    }

    /// Sets the fill value: one native-endian element, which must be a valid value of the type.
    pub fn set_fill_value(&mut self, value: &[u8]) -> Result<()> {
        let dt = &self.data_type;
        if !dt.is_vlen() {
            if value.len() != dt.size() {
                return Err(Error::BufferSize(format!(
                    "fill value has {} bytes, one {dt} element has {}",
                    value.len(),
                    dt.size()
                )));
            }
            if *dt == DataType::Bool && value[0] > 1 {
                return Err(Error::Value(format!("bool fill value must be 0 or 1, got {}", value[0])));
            }
            // A value the metadata cannot express exactly (e.g. an int4 outside [-8, 7]) is refused.
            let back = fill_value::parse_v3(dt, &fill_value::to_json_v3(dt, value))
                .map_err(|e| Error::Value(format!("fill value: {}", e.message())))?;
            if back != value {
                return Err(Error::Value(format!("fill value {:?} is not a valid {dt} value", value)));
            }
        } else if *dt == DataType::String && std::str::from_utf8(value).is_err() {
            return Err(Error::Value("string fill value is not valid UTF-8".into()));
        }
        self.fill_value = Some(value.to_vec());
        Ok(())
    }

    /// Sets the dimension names (one per dimension; `None` leaves one unnamed).
    pub fn set_dimension_names(&mut self, names: Vec<Option<String>>) -> Result<()> {
        if names.len() != self.shape.len() {
            return Err(invalid(format!("{} dimension names for rank {}", names.len(), self.shape.len())));
        }
        self.dimension_names = Some(names);
        Ok(())
    }

    /// Sets the Zarr format (2 or 3).
    pub fn set_zarr_format(&mut self, format: i64) -> Result<()> {
        match format {
            2 | 3 => self.zarr_format = Some(format as u8),
            f => return Err(invalid(format!("zarr_format must be 2 or 3, got {f}"))),
        }
        Ok(())
    }

    /// The resolved chunk shape (the inner chunk shape when sharded) and shard shape.
    pub fn resolved_chunks(&self) -> Result<(Vec<u64>, Option<Vec<u64>>)> {
        let elem = self.element_bytes();
        match (&self.chunks, &self.shards) {
            (Some(c), None) => Ok((c.clone(), None)),
            (None, None) => Ok((default_chunks(&self.shape, elem), None)),
            (None, Some(s)) => Ok((default_inner_chunks(s, elem), Some(s.clone()))),
            (Some(c), Some(s)) => {
                if c.iter().zip(s).any(|(c, s)| !s.is_multiple_of(*c)) {
                    return Err(invalid(format!("the shard shape {s:?} is not a multiple of the chunk shape {c:?}")));
                }
                Ok((c.clone(), Some(s.clone())))
            }
        }
    }

    fn shuffle(&self) -> Shuffle {
        self.shuffle.unwrap_or(match self.compressor.spec() {
            Some((s, ..)) if s.shuffles => Shuffle::Byte,
            _ => Shuffle::None,
        })
    }

    fn fill_bytes(&self) -> Vec<u8> {
        self.fill_value.clone().unwrap_or_else(|| vec![0; self.data_type.size()])
    }

    /// The bytes -> bytes codecs: a shuffle filter where the compressor does not shuffle itself,
    /// then the compressor.
    fn compression(&self) -> Result<Vec<Box<dyn BytesToBytesCodec>>> {
        let mut out: Vec<Box<dyn BytesToBytesCodec>> = Vec::new();
        let elem = self.data_type.size().max(1);
        let spec = self.compressor.spec();
        let shuffle = self.shuffle();
        if !spec.is_some_and(|(s, ..)| s.shuffles) {
            match shuffle {
                Shuffle::Bit => return Err(invalid("the bit shuffle is a blosc option: use a blosc-* compressor")),
                Shuffle::Byte => out.push(Box::new(ShuffleCodec::new(elem as i64))),
                Shuffle::None => {}
            }
        }
        if let Some((s, variant, level)) = spec {
            out.push((s.build)(variant, level, shuffle, elem)?);
        }
        Ok(out)
    }

    /// The v3 array -> bytes codec: the registry's serializer for a variable-length type, else
    /// `bytes` (little-endian where the type has a byte order).
    fn v3_array_to_bytes(&self) -> Result<Value> {
        let dt = &self.data_type;
        if let Some(e) = registry::vlen_serializer(dt) {
            let (Some(name), Some(build)) = (e.name, e.from_v3) else {
                return Err(Error::Internal(format!("the serializer of {dt} has no v3 name")));
            };
            let repr = ArrayRepr { shape: vec![1], data_type: dt.clone(), fill_value: Vec::new() };
            return Ok(match build(name, None, &repr)? {
                Codec::ArrayToBytes(c) => c.to_json(),
                _ => return Err(Error::Internal(format!("the serializer of {dt} is not array -> bytes"))),
            });
        }
        Ok(BytesCodec::new(dt, dt.has_endianness().then_some(Endian::Little)).to_json())
    }

    fn fill_json(&self) -> Value {
        let bytes = self.fill_bytes();
        match &self.data_type {
            DataType::String => Value::from(String::from_utf8_lossy(&bytes).into_owned()),
            DataType::Bytes => Value::from(crate::format::base64::encode(&bytes)),
            dt => fill_value::to_json_v3(dt, &bytes),
        }
    }

    /// The metadata document this spec creates in format `format` (2: the `.zarray` document, whose
    /// attributes go to `.zattrs`), with the codecs as libzarr records them (every default explicit).
    pub fn document(&self, format: u8) -> Result<Value> {
        let (chunks, shards) = self.resolved_chunks()?;
        match format {
            3 => {
                let mut codecs = vec![self.v3_array_to_bytes()?];
                codecs.extend(self.compression()?.iter().map(|c| numcodecs::v3::v3_metadata(c.to_json())));
                let (grid, codecs) = match &shards {
                    None => (chunks, codecs),
                    Some(s) => {
                        let index = sharding::default_index_codecs();
                        let sharding = sharding::metadata(&chunks, Value::Array(codecs), index, IndexLocation::End);
                        (s.clone(), vec![sharding])
                    }
                };
                let mut doc = json!({
                    "zarr_format": 3,
                    "node_type": "array",
                    "shape": self.shape,
                    "data_type": self.data_type.to_v3_json()?,
                    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": grid}},
                    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                    "fill_value": self.fill_json(),
                    "codecs": codecs,
                });
                // placed, not serialised by `json!`, which refuses bare NaN / Infinity (see json_text)
                doc["attributes"] = Value::Object(self.attributes.clone());
                if let Some(names) = &self.dimension_names {
                    doc["dimension_names"] = json!(names);
                }
                // Normalise as Array::create does, so that this is exactly the stored document.
                let meta = metadata::v3::parse_array(doc.clone())?;
                doc["codecs"] = meta.codecs.to_json();
                Ok(doc)
            }
            2 => {
                if shards.is_some() {
                    return Err(Error::Unsupported("sharding needs Zarr format 3".into()));
                }
                let mut filters = Vec::new();
                let dtype = match registry::vlen_serializer(&self.data_type).and_then(|e| e.numcodecs.as_ref()) {
                    Some(n) => {
                        filters.push(json!({"id": n.id}));
                        "|O".to_string()
                    }
                    None => dtv2::typestr(&self.data_type, Endian::Little).ok_or_else(|| {
                        Error::Unsupported(format!("data type {} has no Zarr v2 dtype: use Zarr format 3", self.data_type))
                    })?,
                };
                let mut codecs = self.compression()?;
                let compressor = match self.compressor {
                    Compressor::None => Value::Null,
                    _ => codecs.pop().map_or(Value::Null, |c| c.to_numcodecs_json()),
                };
                filters.extend(codecs.iter().map(|c| c.to_numcodecs_json()));
                Ok(json!({
                    "zarr_format": 2,
                    "shape": self.shape,
                    "chunks": chunks,
                    "dtype": dtype,
                    "compressor": compressor,
                    "fill_value": self.fill_json(),
                    "order": "C",
                    "filters": if filters.is_empty() { Value::Null } else { Value::Array(filters) },
                    "dimension_separator": ".",
                }))
            }
            f => Err(invalid(format!("zarr_format must be 2 or 3, got {f}"))),
        }
    }

    /// The attributes a v2 array gets in `.zattrs`: the user's, plus `_ARRAY_DIMENSIONS` (the xarray
    /// convention) when dimension names are set, which needs every dimension named.
    fn v2_attributes(&self) -> Result<Map<String, Value>> {
        let mut a = self.attributes.clone();
        if let Some(names) = &self.dimension_names {
            let all: Option<Vec<&String>> = names.iter().map(Option::as_ref).collect();
            let all = all.ok_or_else(|| {
                invalid("Zarr v2 stores dimension names as the _ARRAY_DIMENSIONS attribute, which needs every dimension named")
            })?;
            a.insert("_ARRAY_DIMENSIONS".into(), json!(all));
        }
        Ok(a)
    }

    /// The format used when creating at the root of a store (`default`: a group's format).
    pub fn format_or(&self, default: u8) -> u8 {
        self.zarr_format.unwrap_or(default)
    }

    fn finish(&self, array: Array, format: u8) -> Result<Array> {
        if format == 2 {
            let attrs = self.v2_attributes()?;
            if !attrs.is_empty() {
                array.set_attributes(attrs)?;
            }
        }
        Ok(array)
    }

    /// Creates the array at node `path` of `store` (format: the spec's, else 3).
    pub fn create(&self, store: Arc<dyn Store>, path: &str) -> Result<Array> {
        let format = self.format_or(3);
        let doc = self.checked_document(format)?;
        let a = Array::create(store, path, &doc)?;
        self.finish(a, format)
    }

    /// Creates the array `name` below `group` (format: the spec's, else the group's).
    pub fn create_in(&self, group: &Group, name: &str) -> Result<Array> {
        let format = self.format_or(group.zarr_format());
        let doc = self.checked_document(format)?;
        let a = group.create_array(name, &doc)?;
        self.finish(a, format)
    }

    fn checked_document(&self, format: u8) -> Result<String> {
        if format == 2 {
            self.v2_attributes()?;
        }
        Ok(self.document(format)?.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_chunking_rule() {
        // 4096 x 4096 float64 = 128 MiB: halve dim 0 then dim 1 alternately down to 512 x 256 = 1 MiB.
        assert_eq!(default_chunks(&[4096, 4096], 8), vec![256, 512]);
        assert_eq!(default_chunks(&[100, 10], 8), vec![100, 10]);
        assert_eq!(default_chunks(&[0, 3], 4), vec![1, 3]);
        assert_eq!(default_chunks(&[], 8), Vec::<u64>::new());
        // odd extents round up: 1_000_001 -> 500_001 -> ... until <= 131072 elements
        let c = default_chunks(&[1_000_001], 8);
        assert!(c[0] * 8 <= DEFAULT_CHUNK_BYTES && c[0] * 16 > DEFAULT_CHUNK_BYTES, "{c:?}");
        let inner = default_inner_chunks(&[1000, 1000, 3], 8);
        assert!(inner.iter().zip([1000, 1000, 3]).all(|(c, s)| s % c == 0));
        assert!(inner.iter().product::<u64>() * 8 <= DEFAULT_CHUNK_BYTES, "{inner:?}");
    }

    #[test]
    fn compressor_names() {
        assert_eq!(Compressor::parse("zstd", None).unwrap(), Compressor::Codec { name: "zstd", variant: "", level: 3 });
        assert_eq!(Compressor::default_choice(), Compressor::parse("zstd", None).unwrap());
        assert_eq!(Compressor::parse("gzip", None).unwrap(), Compressor::Codec { name: "gzip", variant: "", level: 6 });
        assert_eq!(Compressor::parse("blosc-lz4", Some(9)).unwrap(), Compressor::Codec { name: "blosc", variant: "lz4", level: 9 });
        assert_eq!(Compressor::parse("blosc-zlib", None).unwrap(), Compressor::Codec { name: "blosc", variant: "zlib", level: 5 });
        assert!(matches!(Compressor::parse("blosc-snappy", None), Err(Error::InvalidArgument(_))));
        assert!(matches!(Compressor::parse("gzip", Some(10)), Err(Error::InvalidArgument(_))));
        assert!(matches!(Compressor::parse("lzma", None), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn documents_parse() {
        let mut s = ArraySpec::new(DataType::Int16, &[10, 20]).unwrap();
        s.set_chunks(&[5, 5]).unwrap();
        s.set_shards(Some(&[10, 10])).unwrap();
        s.compressor = Compressor::parse("blosc-zstd", Some(4)).unwrap();
        s.set_fill_value(&(-3i16).to_ne_bytes()).unwrap();
        let d = s.document(3).unwrap();
        assert_eq!(d["chunk_grid"]["configuration"]["chunk_shape"], json!([10, 10]));
        assert_eq!(d["fill_value"], json!(-3));
        assert!(matches!(s.document(2), Err(Error::Unsupported(_))));
        s.set_shards(None).unwrap();
        let d2 = s.document(2).unwrap();
        assert_eq!(d2["dtype"], json!("<i2"));
        assert_eq!(d2["compressor"]["shuffle"], json!(1));
        crate::metadata::v2::parse_array(&d2, Map::new()).unwrap();
        s.set_shards(Some(&[7, 10])).unwrap();
        s.set_chunks(&[5, 5]).unwrap();
        assert!(matches!(s.document(3), Err(Error::InvalidArgument(_))));
        let mut b = ArraySpec::new(DataType::Bool, &[3]).unwrap();
        assert!(matches!(b.set_fill_value(&[2]), Err(Error::Value(_))));
        let mut i4 = ArraySpec::new(DataType::SmallInt(crate::dtype::SmallInt::I4), &[3]).unwrap();
        assert!(matches!(i4.set_fill_value(&[0x7f]), Err(Error::Value(_))));
        assert!(matches!(ArraySpec::new(DataType::Raw(2), &[3]), Err(Error::Unsupported(_))));
    }
}

/// The registry's test codec `zz_test` (`codec/test_codec.rs`, registered by one line) through Zarr v2,
/// Zarr v3 and the spec API.
#[cfg(test)]
mod test_codec_round_trip {
    use crate::dtype::DataType;
    use crate::spec::{ArraySpec, Compressor};
    use crate::store::memory::MemoryStore;
    use crate::store::Store;
    use crate::Array;
    use serde_json::json;
    use std::sync::Arc;

    fn values() -> Vec<i32> {
        (0..10).map(|i| i * 1000 - 4321).collect()
    }

    /// Writes `values()` to `a` (one chunk of 10), checks the stored chunk `key` against the
    /// little-endian values XORed with `xor`, and reads them back.
    fn round_trip(store: &Arc<MemoryStore>, a: &Array, key: &str, xor: u8) {
        let v = values();
        let data: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
        a.write_region(&[0], &[10], &data).unwrap();
        let expected: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).map(|b| b ^ xor).collect();
        assert_eq!(store.get(key).unwrap().unwrap(), expected, "{key}");
        let mut out = vec![0u8; 40];
        a.read_region(&[0], &[10], &mut out).unwrap();
        assert_eq!(out, data);
        let reopened = Array::open(store.clone(), "", false).unwrap();
        let mut out = vec![0u8; 40];
        reopened.read_region(&[0], &[10], &mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn v2_compressor_and_filter() {
        let store = Arc::new(MemoryStore::new());
        let doc = json!({"zarr_format": 2, "shape": [10], "chunks": [10], "dtype": "<i4", "fill_value": 0, "order": "C",
                         "filters": [{"id": "zz_test", "key": 3}], "compressor": {"id": "zz_test", "key": 7}});
        let a = Array::create(store.clone(), "", &doc.to_string()).unwrap();
        round_trip(&store, &a, "0", 3 ^ 7);
    }

    #[test]
    fn v3_name_and_numcodecs_name() {
        let store = Arc::new(MemoryStore::new());
        let codecs = json!([{"name": "bytes", "configuration": {"endian": "little"}},
                            {"name": "zz_test", "configuration": {"key": 5}},
                            {"name": "numcodecs.zz_test", "configuration": {"key": 9}}]);
        let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [10], "data_type": "int32",
                         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [10]}},
                         "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs});
        let a = Array::create(store.clone(), "", &doc.to_string()).unwrap();
        round_trip(&store, &a, "c/0", 5 ^ 9);
        let stored: serde_json::Value = serde_json::from_slice(&store.get("zarr.json").unwrap().unwrap()).unwrap();
        assert_eq!(stored["codecs"], codecs);
    }

    #[test]
    fn spec_api() {
        for format in [2, 3] {
            let store = Arc::new(MemoryStore::new());
            let mut s = ArraySpec::new(DataType::Int32, &[10]).unwrap();
            s.set_chunks(&[10]).unwrap();
            s.set_zarr_format(format).unwrap();
            s.compressor = Compressor::parse("zz_test", Some(17)).unwrap();
            let a = s.create(store.clone(), "").unwrap();
            round_trip(&store, &a, if format == 2 { "0" } else { "c/0" }, 17);
            let doc = s.document(format as u8).unwrap();
            if format == 2 {
                assert_eq!(doc["compressor"], json!({"id": "zz_test", "key": 17}));
            } else {
                assert_eq!(doc["codecs"][1], json!({"name": "zz_test", "configuration": {"key": 17}}));
            }
        }
        assert!(Compressor::parse("zz_test", Some(256)).is_err());
    }
}
