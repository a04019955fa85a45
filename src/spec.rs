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
use crate::dtype::v2 as dtv2;
use crate::dtype::{DataType, Endian};
use crate::error::{Error, Result};
use crate::group::Group;
use crate::metadata::{self, fill_value};
use crate::store::Store;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The chunk size budget of the default chunking rule, in bytes (1 MiB).
pub(crate) const DEFAULT_CHUNK_BYTES: u64 = 1 << 20;
/// Bytes per element assumed by the default chunking rule for variable-length types.
pub(crate) const VLEN_ELEMENT_BYTES: u64 = 16;
/// Default zstd level.
pub(crate) const DEFAULT_ZSTD_LEVEL: i32 = 3;
/// Default gzip level.
pub(crate) const DEFAULT_GZIP_LEVEL: i32 = 6;
/// Default blosc level.
pub(crate) const DEFAULT_BLOSC_LEVEL: i32 = 5;
/// The blosc compressors: `blosc-<cname>` names.
pub(crate) const BLOSC_CNAMES: [&str; 5] = ["lz4", "lz4hc", "blosclz", "zstd", "zlib"];

/// A compressor choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compressor {
    /// No compression.
    None,
    /// `zstd` at a level.
    Zstd(i32),
    /// `gzip` at a level (0-9).
    Gzip(i32),
    /// `blosc` with an internal compressor name (`lz4`, `zstd`, ...) and level (0-9).
    Blosc(&'static str, i32),
}

impl Compressor {
    /// Parses a compressor name (`zstd`, `gzip`, `blosc-lz4`, `blosc-lz4hc`, `blosc-blosclz`,
    /// `blosc-zstd`, `blosc-zlib`, `none`) with a level (`None`: the default of that compressor).
    pub fn parse(name: &str, level: Option<i32>) -> Result<Compressor> {
        let in_range = |lo: i32, hi: i32, l: i32| -> Result<i32> {
            if !(lo..=hi).contains(&l) {
                return Err(Error::InvalidArgument(format!("compressor '{name}': level {l} is outside [{lo}, {hi}]")));
            }
            Ok(l)
        };
        Ok(match name {
            "none" => Compressor::None,
            "zstd" => Compressor::Zstd(in_range(-131072, 22, level.unwrap_or(DEFAULT_ZSTD_LEVEL))?),
            "gzip" => Compressor::Gzip(in_range(0, 9, level.unwrap_or(DEFAULT_GZIP_LEVEL))?),
            _ => match name.strip_prefix("blosc-").and_then(|c| BLOSC_CNAMES.iter().find(|k| **k == c)) {
                Some(cname) => Compressor::Blosc(cname, in_range(0, 9, level.unwrap_or(DEFAULT_BLOSC_LEVEL))?),
                None => {
                    return Err(Error::InvalidArgument(format!(
                        "unknown compressor '{name}': expected zstd, gzip, blosc-lz4, blosc-lz4hc, blosc-blosclz, \
                         blosc-zstd, blosc-zlib or none"
                    )))
                }
            },
        })
    }
}

/// A shuffle filter before compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shuffle {
    /// None.
    None,
    /// Byte shuffle (blosc's `shuffle`; for zstd and gzip the numcodecs `shuffle` filter).
    Byte,
    /// Bit shuffle (blosc only).
    Bit,
}

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
            compressor: Compressor::Zstd(DEFAULT_ZSTD_LEVEL),
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
        self.shuffle.unwrap_or(match self.compressor {
            Compressor::Blosc(..) => Shuffle::Byte,
            _ => Shuffle::None,
        })
    }

    fn fill_bytes(&self) -> Vec<u8> {
        self.fill_value.clone().unwrap_or_else(|| vec![0; self.data_type.size()])
    }

    /// The v3 bytes -> bytes codecs (shuffle filter, compressor).
    fn v3_compression(&self) -> Result<Vec<Value>> {
        let mut out = Vec::new();
        let elem = self.data_type.size().max(1);
        match (&self.compressor, self.shuffle()) {
            (Compressor::Blosc(cname, level), sh) => {
                let sh = match sh {
                    Shuffle::None => "noshuffle",
                    Shuffle::Byte => "shuffle",
                    Shuffle::Bit => "bitshuffle",
                };
                out.push(json!({"name": "blosc", "configuration": {
                    "cname": cname, "clevel": level, "shuffle": sh, "typesize": elem, "blocksize": 0}}));
            }
            (_, Shuffle::Bit) => return Err(invalid("the bit shuffle is a blosc option: use a blosc-* compressor")),
            (c, sh) => {
                if sh == Shuffle::Byte {
                    out.push(json!({"name": "numcodecs.shuffle", "configuration": {"elementsize": elem}}));
                }
                match c {
                    Compressor::Zstd(l) => out.push(json!({"name": "zstd", "configuration": {"level": l, "checksum": false}})),
                    Compressor::Gzip(l) => out.push(json!({"name": "gzip", "configuration": {"level": l}})),
                    _ => {}
                }
            }
        }
        Ok(out)
    }

    fn v3_array_to_bytes(&self) -> Value {
        match &self.data_type {
            DataType::String => json!({"name": "vlen-utf8", "configuration": {}}),
            DataType::Bytes => json!({"name": "vlen-bytes", "configuration": {}}),
            dt if dt.has_endianness() => json!({"name": "bytes", "configuration": {"endian": "little"}}),
            _ => json!({"name": "bytes"}),
        }
    }

    fn fill_json(&self) -> Value {
        let bytes = self.fill_bytes();
        match &self.data_type {
            DataType::String => Value::from(String::from_utf8_lossy(&bytes).into_owned()),
            DataType::Bytes => Value::from(metadata::base64::encode(&bytes)),
            dt => fill_value::to_json_v3(dt, &bytes),
        }
    }

    /// The metadata document this spec creates in format `format` (2: the `.zarray` document, whose
    /// attributes go to `.zattrs`), with the codecs as libzarr records them (every default explicit).
    pub fn document(&self, format: u8) -> Result<Value> {
        let (chunks, shards) = self.resolved_chunks()?;
        match format {
            3 => {
                let mut codecs = vec![self.v3_array_to_bytes()];
                codecs.extend(self.v3_compression()?);
                let (grid, codecs) = match &shards {
                    None => (chunks, codecs),
                    Some(s) => {
                        let index = json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]);
                        let sharding = json!({"name": "sharding_indexed", "configuration": {
                            "chunk_shape": chunks, "codecs": codecs, "index_codecs": index, "index_location": "end"}});
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
                let meta = metadata::v3::parse_array(&doc)?;
                doc["codecs"] = meta.codecs.to_json();
                Ok(doc)
            }
            2 => {
                if shards.is_some() {
                    return Err(Error::Unsupported("sharding needs Zarr format 3".into()));
                }
                let elem = self.data_type.size();
                let mut filters = Vec::new();
                let dtype = match &self.data_type {
                    DataType::String => {
                        filters.push(json!({"id": "vlen-utf8"}));
                        "|O".to_string()
                    }
                    DataType::Bytes => {
                        filters.push(json!({"id": "vlen-bytes"}));
                        "|O".to_string()
                    }
                    dt => dtv2::typestr(dt, Endian::Little).ok_or_else(|| {
                        Error::Unsupported(format!("data type {dt} has no Zarr v2 dtype: use Zarr format 3"))
                    })?,
                };
                let compressor = match (&self.compressor, self.shuffle()) {
                    (Compressor::Blosc(cname, level), sh) => {
                        let sh = match sh {
                            Shuffle::None => 0,
                            Shuffle::Byte => 1,
                            Shuffle::Bit => 2,
                        };
                        json!({"id": "blosc", "cname": cname, "clevel": level, "shuffle": sh, "blocksize": 0})
                    }
                    (_, Shuffle::Bit) => return Err(invalid("the bit shuffle is a blosc option: use a blosc-* compressor")),
                    (c, sh) => {
                        if sh == Shuffle::Byte {
                            filters.push(json!({"id": "shuffle", "elementsize": elem.max(1)}));
                        }
                        match c {
                            Compressor::Zstd(l) => json!({"id": "zstd", "level": l}),
                            Compressor::Gzip(l) => json!({"id": "gzip", "level": l}),
                            _ => Value::Null,
                        }
                    }
                };
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
        assert_eq!(Compressor::parse("zstd", None).unwrap(), Compressor::Zstd(3));
        assert_eq!(Compressor::parse("blosc-lz4", Some(9)).unwrap(), Compressor::Blosc("lz4", 9));
        assert!(matches!(Compressor::parse("gzip", Some(10)), Err(Error::InvalidArgument(_))));
        assert!(matches!(Compressor::parse("lzma", None), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn documents_parse() {
        let mut s = ArraySpec::new(DataType::Int16, &[10, 20]).unwrap();
        s.set_chunks(&[5, 5]).unwrap();
        s.set_shards(Some(&[10, 10])).unwrap();
        s.compressor = Compressor::Blosc("zstd", 4);
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
