//! The codec registry: every codec libzarr knows is one [`CodecEntry`] (its Zarr v3 name, aliases,
//! numcodecs id, the element types it takes, how it is built from metadata and how the spec API
//! builds it), declared in the codec's own file and listed once in [`CODECS`]. Metadata parsing (v1,
//! v2, v3, `numcodecs.<id>` under v3), the v2 -> v3 conversion and the spec API ask the registry;
//! nothing else spells a codec's identity.
//!
//! Adding a codec: write its file in the folder of its kind (see [`crate::codec`]) with
//! `pub static CODEC: CodecEntry = CodecEntry::v3(..)` (or [`CodecEntry::numcodecs`], or a
//! `CodecEntry { .. }` literal for more), declare the module beside its siblings, as for any file,
//! and add `&<path>::CODEC` to [`CODECS`].
//! A codec's JSON out is its own `to_json` (and, where numcodecs spells its configuration
//! differently, [`super::BytesToBytesCodec::to_numcodecs_json`]).

use super::numcodecs::{V2Config, V2Elem};
use crate::codec::serialize::vlen::VlenCodec;
use super::{ArrayRepr, ArrayToBytesCodec, BytesToBytesCodec, Codec, Shuffle};
use crate::dtype::DataType;
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// Builds a codec from its Zarr v3 configuration for chunks of `decoded`; the first argument is the
/// name it was given (an alias, or its name).
pub type FromV3 = fn(&str, Option<&Map<String, Value>>, &ArrayRepr) -> Result<Codec>;

/// One codec.
#[derive(Debug)]
pub struct CodecEntry {
    /// The Zarr v3 name (`None`: no v3 name of its own; a numcodecs codec may still be known under
    /// v3 as `numcodecs.<id>`, see [`Numcodecs::under_v3`]).
    pub name: Option<&'static str>,
    /// Other v3 names of the codec (the 2020 codec draft's URIs).
    pub aliases: &'static [Alias],
    /// The element types it takes (checked before it is built from v3 metadata).
    pub takes: Takes,
    /// Builds it from v3 metadata (required where `name` is set).
    pub from_v3: Option<FromV3>,
    /// Its numcodecs identity (Zarr v1 `compression`, v2 `compressor` / `filters`, v3 `numcodecs.<id>`).
    pub numcodecs: Option<Numcodecs>,
    /// How the spec API (`zarr_array_spec_set_compressor`) offers it.
    pub spec: Option<SpecCompressor>,
}

impl CodecEntry {
    /// An entry with nothing set (the base of the declarations' `..CodecEntry::NONE`).
    pub const NONE: CodecEntry = CodecEntry { name: None, aliases: &[], takes: Takes::Any, from_v3: None, numcodecs: None, spec: None };

    /// A codec known by its numcodecs identity alone.
    pub const fn numcodecs(numcodecs: Option<Numcodecs>) -> CodecEntry {
        CodecEntry { numcodecs, ..CodecEntry::NONE }
    }

    /// A codec known by its v3 `name` alone, built by `from_v3`.
    pub const fn v3(name: &'static str, from_v3: FromV3) -> CodecEntry {
        CodecEntry { name: Some(name), from_v3: Some(from_v3), ..CodecEntry::NONE }
    }
}

/// Another v3 name of a codec.
#[derive(Debug)]
pub struct Alias {
    /// The name.
    pub name: &'static str,
    /// Its configuration is numcodecs' (built through [`Numcodecs::build`], with the array's element
    /// type as input) rather than the v3 one.
    pub numcodecs_config: bool,
}

/// The element types a codec takes.
#[derive(Debug, PartialEq)]
pub enum Takes {
    /// Any (bytes -> bytes codecs, and codecs that check their configuration against the type).
    Any,
    /// Only this one (the variable-length serializers).
    Only(DataType),
}

impl Takes {
    /// Fails unless a codec `name` with this rule can take elements of `dt`.
    pub fn check(&self, name: &str, dt: &DataType) -> Result<()> {
        match self {
            Takes::Only(want) if want != dt => {
                Err(Error::Metadata(format!("codec '{name}' needs data type {want}, the array has {dt}")))
            }
            _ => Ok(()),
        }
    }
}

/// A codec's numcodecs identity.
#[derive(Debug)]
pub struct Numcodecs {
    /// The numcodecs id.
    pub id: &'static str,
    /// How it is built from a numcodecs configuration.
    pub build: V2Build,
    /// Its kind under the v3 name `numcodecs.<id>` (`None`: no such name).
    pub under_v3: Option<UnderV3>,
    /// Fills configuration members zarr-python derives from the chunk under v3 (shuffle's
    /// `elementsize`).
    pub v3_defaults: Option<fn(&mut Value, &ArrayRepr)>,
    /// For a filter: whether its result depends only on each element (not on their order or count),
    /// so that it applies unchanged to an order "F" array's elements in another order.
    pub elementwise: bool,
    /// Its Zarr v1 `compression_opts` form (`None`: not a v1 compression).
    pub v1: Option<V1Options>,
}

/// How a numcodecs codec is built from its configuration (`{"id": .., members}`).
#[derive(Debug, Clone, Copy)]
pub enum V2Build {
    /// A bytes -> bytes compressor or checksum (also allowed among the filters), receiving bytes of
    /// the described elements (blosc takes its typesize from them).
    Compressor(fn(&V2Config, &V2Elem) -> Result<Box<dyn BytesToBytesCodec>>),
    /// A filter: bytes -> bytes over the described elements; returns the description of its output.
    Filter(fn(&V2Config, &V2Elem) -> Result<(Box<dyn BytesToBytesCodec>, V2Elem)>),
    /// An array -> bytes compressor taking the place of the bytes codec (`pcodec`, `zfpy`); the last
    /// argument is its metadata object. `fortran`: numcodecs takes arrays of order "F".
    ArrayToBytes {
        /// The builder.
        build: fn(&V2Config, &ArrayRepr, Value) -> Result<Box<dyn ArrayToBytesCodec>>,
        /// Whether numcodecs accepts it on an order "F" array.
        fortran: bool,
    },
    /// The first filter of an object (`|O`) array: the variable-length serializer.
    Object(fn(&V2Config) -> Result<VlenCodec>),
}

/// The kind of a numcodecs codec under its v3 name `numcodecs.<id>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnderV3 {
    /// bytes -> bytes, receiving plain bytes (as zarr-python hands them over).
    BytesToBytes,
    /// array -> array over the chunk's native elements.
    ArrayToArray,
    /// array -> bytes over the chunk's native elements.
    ArrayToBytes,
}

/// The form of a Zarr v1 `compression_opts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V1Options {
    /// A number: the `level` member.
    Level,
    /// An object: the numcodecs configuration members.
    Object,
}

/// A compressor of the spec API: `<name>` (or `<name>-<variant>`) with a level.
#[derive(Debug)]
pub struct SpecCompressor {
    /// Variants offered as `<name>-<variant>` (blosc's internal compressors); empty: just `<name>`.
    pub variants: &'static [&'static str],
    /// The lowest and highest level.
    pub levels: (i32, i32),
    /// The default level.
    pub default_level: i32,
    /// The codec shuffles itself (blosc, default byte shuffle); otherwise a byte shuffle is the
    /// numcodecs `shuffle` filter before it and the bit shuffle is refused.
    pub shuffles: bool,
    /// Builds it: variant (`""` without variants), level, shuffle, element size in bytes.
    pub build: fn(&'static str, i32, Shuffle, usize) -> Result<Box<dyn BytesToBytesCodec>>,
}

/// Every codec, in the order the spec API lists its compressors.
pub static CODECS: &[&CodecEntry] = &[
    &crate::codec::compress::zstd::CODEC,
    &crate::codec::compress::gzip::CODEC,
    &crate::codec::compress::blosc::CODEC,
    &crate::codec::serialize::bytes::CODEC,
    &crate::codec::filter::transpose::CODEC,
    &crate::codec::filter::reshape::CODEC,
    &crate::codec::filter::bitround::CODEC,
    &crate::codec::filter::scale_offset::CODEC,
    &crate::codec::filter::cast_value::CODEC,
    &crate::codec::checksum::crc32c::CODEC,
    &crate::codec::serialize::packbits::CODEC,
    &crate::codec::serialize::zfp::CODEC,
    &super::sharding::CODEC,
    &crate::codec::serialize::vlen::VLEN_UTF8,
    &crate::codec::serialize::vlen::VLEN_BYTES,
    &crate::codec::serialize::vlen::VLEN_ARRAY,
    &crate::codec::compress::zlib::CODEC,
    &crate::codec::compress::lz4::CODEC,
    &crate::codec::compress::bz2::CODEC,
    &crate::codec::compress::lzma::CODEC,
    &crate::codec::checksum::checksum32::CRC32,
    &crate::codec::checksum::checksum32::ADLER32,
    &crate::codec::checksum::checksum32::CRC32C,
    &crate::codec::checksum::checksum32::FLETCHER32,
    &crate::codec::filter::shuffle::CODEC,
    &crate::codec::filter::delta::CODEC,
    &crate::codec::filter::fixedscaleoffset::CODEC,
    &crate::codec::filter::quantize::CODEC,
    &crate::codec::filter::bitround_numcodecs::CODEC,
    &crate::codec::filter::astype::CODEC,
    &crate::codec::filter::packbits::CODEC,
    &crate::codec::filter::categorize::CODEC,
    &crate::codec::serialize::pcodec::CODEC,
    &crate::codec::serialize::zfpy::CODEC,
];

/// Codecs registered for the crate's own tests only.
#[cfg(test)]
static TEST_CODECS: &[&CodecEntry] = &[&super::test_codec::CODEC];
#[cfg(not(test))]
static TEST_CODECS: &[&CodecEntry] = &[];

/// Every registered codec.
pub fn all() -> impl Iterator<Item = &'static CodecEntry> {
    CODECS.iter().chain(TEST_CODECS).copied()
}

/// The codec with v3 name (or alias) `name`, and the alias when `name` is one.
pub fn by_v3_name(name: &str) -> Option<(&'static CodecEntry, Option<&'static Alias>)> {
    all().find_map(|e| {
        if e.name == Some(name) {
            return Some((e, None));
        }
        e.aliases.iter().find(|a| a.name == name).map(|a| (e, Some(a)))
    })
}

/// The numcodecs codec with id `id`.
pub fn numcodecs(id: &str) -> Option<&'static Numcodecs> {
    all().filter_map(|e| e.numcodecs.as_ref()).find(|n| n.id == id)
}

/// The numcodecs codec known under the v3 name `name` (`numcodecs.<id>`), with its kind there.
pub fn numcodecs_under_v3(name: &str) -> Option<(&'static Numcodecs, UnderV3)> {
    let id = name.strip_prefix(super::numcodecs::v3::PREFIX)?;
    numcodecs(id).and_then(|n| n.under_v3.map(|k| (n, k)))
}

/// The spec API's compressor `name` (`zstd`, `blosc-lz4`, ...): its entry and variant.
pub fn spec_compressor(name: &str) -> Option<(&'static CodecEntry, &'static str)> {
    all().find_map(|e| {
        let (n, s) = (e.name?, e.spec.as_ref()?);
        if s.variants.is_empty() {
            return (n == name).then_some((e, ""));
        }
        let v = name.strip_prefix(n)?.strip_prefix('-')?;
        s.variants.iter().find(|x| **x == v).map(|x| (e, *x))
    })
}

/// The spec API's compressor names, in order.
pub fn spec_compressor_names() -> Vec<String> {
    let mut out = Vec::new();
    for e in all() {
        if let (Some(n), Some(s)) = (e.name, &e.spec) {
            if s.variants.is_empty() {
                out.push(n.to_string());
            }
            out.extend(s.variants.iter().map(|v| format!("{n}-{v}")));
        }
    }
    out
}

/// The registered serializer that takes only the variable-length type `dt` (`vlen-utf8` for
/// `string`, `vlen-bytes` for `bytes`).
pub fn vlen_serializer(dt: &DataType) -> Option<&'static CodecEntry> {
    all().find(|e| e.takes == Takes::Only(dt.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::path::Path;

    /// The non-test part of a source file (its `#[cfg(test..)] mod tests` comes last).
    fn non_test(text: &str) -> &str {
        match text.find("\nmod tests {") {
            Some(i) if text[..i].rsplit('\n').next().is_some_and(|l| l.starts_with("#[cfg(") && l.contains("test")) => &text[..i],
            _ => text,
        }
    }

    /// Whether the string literal ending at byte `end` of `line` (starting at `start`) names a
    /// configuration member rather than a codec: a JSON key (`"astype":`) or a getter's key
    /// (`(c, "astype"`, `c.int("shuffle"`, `c.choice("shuffle"`).
    fn is_member_name(line: &str, start: usize, end: usize) -> bool {
        let after = line[end..].trim_start();
        if after.starts_with(':') && !after.starts_with("::") {
            return true;
        }
        let before = line[..start].trim_end();
        before.ends_with("(c,")
            || ["c.int(", "c.choice(", "c.string(", "c.bool(", "c.float(", "c.get(", "c.elem(", "c.invalid("]
                .iter()
                .any(|g| before.ends_with(g))
    }

    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// Check (a) of issue 23: every numcodecs id (the test codec's included) is spelled, as a string
    /// literal outside comments, tests and configuration member names, in at most two files of
    /// `src/` (the codec's own, and another codec's where the same word is that codec's option, as
    /// blosc's `cname` "zstd"); the registration line names the codec's module, not its id.
    #[test]
    fn ids_are_spelled_once() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let texts: Vec<(String, String)> = files
            .iter()
            .map(|p| (p.strip_prefix(&src).unwrap().display().to_string(), std::fs::read_to_string(p).unwrap()))
            .collect();
        let mut report = BTreeMap::new();
        for n in all().filter_map(|e| e.numcodecs.as_ref()) {
            let lit = format!("\"{}\"", n.id);
            let mut where_: Vec<&str> = Vec::new();
            for (name, text) in &texts {
                let spelled = non_test(text).lines().any(|line| {
                    let code = line.trim_start();
                    if code.starts_with("//") {
                        return false;
                    }
                    line.match_indices(&lit).any(|(i, _)| !is_member_name(line, i, i + lit.len()))
                });
                if spelled {
                    where_.push(name);
                }
            }
            assert!(!where_.is_empty(), "numcodecs id {} is not spelled anywhere", n.id);
            report.insert(n.id, where_);
        }
        let over: Vec<_> = report.iter().filter(|(_, f)| f.len() > 2).collect();
        assert!(over.is_empty(), "ids spelled in more than two files: {over:?}");
    }

    #[test]
    fn names_are_unique() {
        let mut v3 = std::collections::HashSet::new();
        let mut ids = std::collections::HashSet::new();
        for e in all() {
            for n in e.name.iter().copied().chain(e.aliases.iter().map(|a| a.name)) {
                assert!(v3.insert(n), "v3 name {n} registered twice");
            }
            if let Some(n) = &e.numcodecs {
                assert!(ids.insert(n.id), "numcodecs id {} registered twice", n.id);
            }
            assert_eq!(e.name.is_some(), e.from_v3.is_some(), "{e:?}");
        }
        assert_eq!(
            spec_compressor_names(),
            ["zstd", "gzip", "blosc-lz4", "blosc-lz4hc", "blosc-blosclz", "blosc-zstd", "blosc-zlib", "zz_test"]
        );
    }
}
