//! Bodies of the fuzz targets (`fuzz/fuzz_targets/*.rs`), shared with the regression test
//! (`tests/fuzz_regressions.rs`) so that a committed crash input runs through exactly the code the
//! fuzzer ran. Not part of the library's API.
//!
//! Every target takes arbitrary bytes and must return normally: errors are expected and ignored, a
//! panic, a hang or an allocation above the bounds is a finding. Before running, each target lowers
//! the decoded chunk bound ([`crate::codec::chain::set_max_chunk_bytes`]) to [`FUZZ_MAX_CHUNK_BYTES`]
//! and the metadata ceiling ([`crate::limits::set_max_metadata_bytes`]) to [`FUZZ_MAX_METADATA_BYTES`],
//! so that no input may make the library allocate more than a few times those.
//!
//! Input layouts (built by `fuzz/make_seeds.py` from `tests/fixtures`):
//! - `metadata_v3`: a `zarr.json` document.
//! - `metadata_v2`: a `.zarray` or `.zgroup` document, optionally followed by a NUL byte and `.zattrs`.
//! - `metadata_v1`: a v1 `meta` document, optionally followed by a NUL byte and `attrs`.
//! - `codec_v3`: u16 LE header length, a JSON header `{"data_type", "chunk_shape", "codecs"}`, 8
//!   selection bytes, then the encoded chunk.
//! - `codec_numcodecs`: u16 LE header length, a JSON header `{"dtype", "compressor"?, "filters"?,
//!   "size"}`, then the encoded bytes.
//! - `shard_index`: u16 LE header length, a JSON header `{"data_type", "shard_shape", "configuration"}`
//!   (a `sharding_indexed` configuration), 8 selection bytes, then the shard.
//! - `store_read`: 8 selection bytes, then entries `u8 key length, key, u32 LE value length, value`
//!   written as files of a directory store that is opened with `zarr_open` and read.
//! - `zip_store`: 8 selection bytes, then a zip archive opened as a `zip://` store ([`zip_store`]).
//! - `remote_answer`: a flag byte, then the raw answers of an HTTP or S3 server on loopback
//!   ([`remote_answer`]).
#![allow(missing_docs)]

#[cfg(feature = "remote")]
mod remote_answer;
mod zip_store;
#[cfg(feature = "remote")]
pub use remote_answer::remote_answer;
pub use zip_store::zip_store;

use crate::buffer::RawBuf;
use crate::codec::chain::{set_max_chunk_bytes, CodecChain};
use crate::codec::numcodecs::{self, V2Elem};
use crate::codec::sharding::index::{IndexCodec, IndexLocation};
use crate::codec::sharding::ShardingCodec;
use crate::codec::{ArrayRepr, ArrayToBytesCodec, DecodedSize};
use crate::dtype::DataType;
use crate::metadata::{self, parse_json, ArrayMetadata};
use crate::selection::convert::Conv;
use crate::selection::{Dest, Layout, Selection};
use crate::store::SliceSource;
use serde_json::{Map, Value};

/// The decoded chunk bound (bytes) the fuzz targets run under.
const FUZZ_MAX_CHUNK_BYTES: u64 = 1 << 22;

/// Largest selection (bytes of the destination buffer) a target reads.
const MAX_READ_BYTES: u64 = 1 << 22;

/// The metadata ceiling (bytes) the fuzz targets run under: a document may hold at most 8192 JSON
/// values (`crate::limits::max_metadata_values`).
const FUZZ_MAX_METADATA_BYTES: u64 = 1 << 20;

fn setup() {
    set_max_chunk_bytes(FUZZ_MAX_CHUNK_BYTES);
    crate::limits::set_max_metadata_bytes(FUZZ_MAX_METADATA_BYTES);
}

/// Splits `data` at its first NUL byte.
fn split_nul(data: &[u8]) -> (&[u8], Option<&[u8]>) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    }
}

/// Splits a `u16 LE length, header, rest` input.
fn split_header(data: &[u8]) -> Option<(Value, &[u8])> {
    if data.len() < 2 {
        return None;
    }
    let n = u16::from_le_bytes([data[0], data[1]]) as usize;
    let header = data.get(2..2 + n)?;
    let v = serde_json::from_slice(header).ok()?;
    Some((v, &data[2 + n..]))
}

/// Takes the 8 selection bytes from the front of `data` (zeros when short).
fn take_sel(data: &[u8]) -> ([u8; 8], &[u8]) {
    let mut sel = [0u8; 8];
    let n = data.len().min(8);
    sel[..n].copy_from_slice(&data[..n]);
    (sel, &data[n..])
}

/// A selection inside `shape` chosen by `bytes` (start, count and step per dimension, cycling through
/// the bytes), with at most `max_elems` elements.
fn pick_selection(shape: &[u64], bytes: &[u8; 8], max_elems: u64) -> Selection {
    let mut start = Vec::with_capacity(shape.len());
    let mut count = Vec::with_capacity(shape.len());
    let mut step = Vec::with_capacity(shape.len());
    let mut budget = max_elems.max(1);
    for (d, &n) in shape.iter().enumerate() {
        let b = |k: usize| bytes[(3 * d + k) % 8] as u64;
        if n == 0 {
            start.push(0);
            count.push(0);
            step.push(1);
            continue;
        }
        let s = b(0) % n;
        let st = 1 + b(2) % 3;
        let avail = (n - s).div_ceil(st);
        let c = (1 + b(1) % avail).min(budget).max(1);
        budget = (budget / c).max(1);
        start.push(s);
        count.push(c);
        step.push(st);
    }
    Selection::new(&start, &count, Some(&step)).unwrap_or_else(|_| Selection::dense(&start, &count))
}

/// Parses a JSON data type (a v3 name or extension object).
fn data_type(v: Option<&Value>) -> Option<DataType> {
    DataType::from_v3_json(v?).ok()
}

fn u64_list(v: Option<&Value>) -> Option<Vec<u64>> {
    v?.as_array()?.iter().map(Value::as_u64).collect()
}

/// The zero element of `dt` as its fill value.
fn zero_repr(shape: Vec<u64>, dt: DataType) -> ArrayRepr {
    let fill = vec![0; dt.size()];
    ArrayRepr { shape, data_type: dt, fill_value: fill }
}

/// Decodes `encoded` with `codec` (an array -> bytes codec for chunks of `repr`): whole, then the
/// selection chosen by `sel` through the partial path, into the chunk's type and into float64.
fn decode_both(codec: &dyn ArrayToBytesCodec, repr: &ArrayRepr, encoded: &[u8], sel: &[u8; 8]) {
    let nbytes = repr.nbytes();
    if let Ok(mut out) = crate::error::try_alloc(nbytes) {
        let _ = codec.decode_into(encoded, repr, &mut out);
    }
    let elem = repr.data_type.size().max(1) as u64;
    let s = pick_selection(&repr.shape, sel, MAX_READ_BYTES / elem);
    let Some(n) = s.num_elements() else { return };
    let to = if sel[7] & 1 == 1 { DataType::Float64 } else { repr.data_type.clone() };
    let Ok(conv) = Conv::new(&repr.data_type, &to) else { return };
    let fill_out = conv.convert_one(&repr.fill_value).ok();
    let fill = fill_out.as_deref();
    let mut out = vec![0u8; (n as usize) * to.size()];
    let layout = Layout::c_order(&s.count, to.size());
    let dest = Dest { buf: RawBuf::new(&mut out), offset: 0, layout: &layout, conv: &conv, fill };
    let _ = codec.partial_decode(&SliceSource(encoded), repr, &s, dest);
}

/// Decodes a variable-length chunk of `chain` (its bytes -> bytes codecs under the chunk bound, the
/// element-moving array -> array codecs, the framing or the shard), whole.
fn decode_vlen(chain: &CodecChain, encoded: &[u8]) {
    let shape = &chain.decoded_repr().shape;
    let whole = crate::selection::Selection::dense(&vec![0; shape.len()], shape);
    let _ = crate::codec::serialize::vlen::decode(chain, encoded.to_vec(), &whole);
}

/// Exercises a parsed array's metadata: the chains of every chunk shape, the codecs' JSON, the
/// rewritten document.
fn exercise_array(m: &ArrayMetadata) {
    let _ = m.check_chunk_shapes();
    let _ = m.codecs.to_json();
    let _ = metadata::to_bytes(&m.document_with_attributes(&m.attributes));
    let _ = m.grid.regular_shape();
}

/// `metadata_v3`: parses a `zarr.json` document (array or group).
pub fn metadata_v3(data: &[u8]) {
    setup();
    let Ok(doc) = parse_json(data) else { return };
    match metadata::v3::node_type(&doc) {
        Ok(metadata::v3::NodeType::Array) => {
            if let Ok(m) = metadata::v3::parse_array(doc) {
                exercise_array(&m);
            }
        }
        Ok(metadata::v3::NodeType::Group) => {
            let _ = metadata::v3::parse_group(doc);
        }
        Err(_) => {}
    }
}

fn attributes(bytes: Option<&[u8]>) -> Map<String, Value> {
    match bytes.and_then(|b| metadata::parse_json_at(b, ".zattrs", crate::limits::max_metadata_bytes()).ok()) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// `metadata_v2`: parses a `.zarray` (or `.zgroup`) document with optional `.zattrs`.
pub fn metadata_v2(data: &[u8]) {
    setup();
    let (doc, attrs) = split_nul(data);
    let Ok(doc) = parse_json(doc) else { return };
    let attrs = attributes(attrs);
    if doc.get("shape").is_some() || doc.get("dtype").is_some() {
        if let Ok(m) = metadata::v2::parse_array(&doc, attrs) {
            exercise_array(&m);
        }
    } else {
        let _ = metadata::v2::parse_group(&doc, attrs);
    }
}

/// `metadata_v1`: parses a v1 `meta` document with optional `attrs`.
pub fn metadata_v1(data: &[u8]) {
    setup();
    let (doc, attrs) = split_nul(data);
    let Ok(doc) = parse_json(doc) else { return };
    if let Ok(m) = metadata::v1::parse_array(&doc, attributes(attrs)) {
        exercise_array(&m);
    }
}

/// `codec_v3`: builds the v3 codec chain of the header for its data type and chunk shape and decodes
/// the rest of the input as one chunk.
pub fn codec_v3(data: &[u8]) {
    setup();
    let Some((header, rest)) = split_header(data) else { return };
    let Some(dt) = data_type(header.get("data_type")) else { return };
    let Some(shape) = u64_list(header.get("chunk_shape")) else { return };
    let Some(codecs) = header.get("codecs") else { return };
    let (sel, encoded) = take_sel(rest);
    let repr = zero_repr(shape, dt);
    let Ok(chain) = CodecChain::from_v3(codecs, &repr) else { return };
    if repr.data_type.is_vlen() {
        decode_vlen(&chain, encoded);
        return;
    }
    decode_both(&chain, &repr, encoded, &sel);
}

/// `codec_numcodecs`: builds the numcodecs compressor and filters of the header (v2 configurations)
/// and decodes the rest of the input through them.
pub fn codec_numcodecs(data: &[u8]) {
    setup();
    let Some((header, encoded)) = split_header(data) else { return };
    let Some(elem) = header.get("dtype").and_then(Value::as_str).and_then(|s| V2Elem::parse(s).ok()) else { return };
    let size = header.get("size").and_then(Value::as_u64).unwrap_or(0).min(FUZZ_MAX_CHUNK_BYTES) as usize;
    let max = FUZZ_MAX_CHUNK_BYTES as usize;
    let mut cur = encoded.to_vec();
    if let Some(c) = header.get("compressor").filter(|c| !c.is_null()) {
        let Ok(codec) = numcodecs::compressor(c, &elem) else { return };
        if let Ok(mut out) = crate::error::try_alloc(size) {
            let _ = codec.decode_into(&cur, &mut out);
            if size > 2 {
                let _ = codec.decode_partial(&cur, size / 3, size / 2, size, &mut out);
                let _ = codec.decode_partial(&cur, size / 3, size / 2, size, &mut out[..size / 2]);
            }
        }
        match codec.decode(&cur, DecodedSize::AtMost(max)) {
            Ok(v) => cur = v.into_owned(),
            Err(_) => return,
        }
    }
    let Some(filters) = header.get("filters").and_then(Value::as_array) else { return };
    let mut built = Vec::new();
    let mut input = elem;
    for f in filters.iter().take(8) {
        let Ok((codec, next)) = numcodecs::filter(f, &input) else { return };
        built.push(codec);
        input = next;
    }
    for codec in built.iter().rev() {
        match codec.decode(&cur, DecodedSize::AtMost(max)) {
            Ok(v) => cur = v.into_owned(),
            Err(_) => return,
        }
    }
}

/// `shard_index`: builds a `sharding_indexed` codec from the header, decodes the shard's index alone
/// and the whole shard and a selection of it.
pub fn shard_index(data: &[u8]) {
    setup();
    let Some((header, rest)) = split_header(data) else { return };
    let Some(dt) = data_type(header.get("data_type")) else { return };
    let Some(shape) = u64_list(header.get("shard_shape")) else { return };
    let cfg = header.get("configuration").and_then(Value::as_object);
    let (sel, shard) = take_sel(rest);
    let repr = zero_repr(shape, dt);
    if crate::codec::chain::check_repr_size(&repr).is_err() {
        return;
    }
    let Ok(codec) = ShardingCodec::from_v3(cfg, &repr) else { return };
    // The index alone, as its own codec.
    let location = match cfg.and_then(|c| c.get("index_location")).and_then(Value::as_str) {
        Some("start") => IndexLocation::Start,
        _ => IndexLocation::End,
    };
    let default_codecs = crate::codec::sharding::default_index_codecs();
    let index_codecs = cfg.and_then(|c| c.get("index_codecs")).unwrap_or(&default_codecs);
    if let Ok(index) = IndexCodec::new(index_codecs, codec.chunks_per_shard(), location) {
        if let Ok((start, len)) = index.range_in(shard.len() as u64) {
            let bytes = &shard[start as usize..(start + len) as usize];
            if let Ok(entries) = index.decode(bytes, shard.len() as u64) {
                let _ = IndexCodec::check_disjoint(&entries);
            }
        }
    }
    if repr.data_type.is_vlen() {
        return;
    }
    decode_both(&codec, &repr, shard, &sel);
}

/// `store_read`: writes the entries of the input as the files of a directory store, opens it with
/// `zarr_open` and reads (through the C API) a region chosen by the selection bytes, the whole array
/// when it is small, a strided hyperslab, and variable-length regions. A panic caught by the C API
/// (`ZARR_ERR_INTERNAL` "internal panic") is re-raised.
pub fn store_read(data: &[u8]) {
    setup();
    let (sel, mut rest) = take_sel(data);
    let dir = scratch_dir();
    let _ = std::fs::remove_dir_all(&dir);
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let mut entries = 0;
    while rest.len() >= 5 && entries < 64 {
        let kl = rest[0] as usize;
        let Some(key) = rest.get(1..1 + kl) else { break };
        let Some(vl) = rest.get(1 + kl..5 + kl) else { break };
        let vl = u32::from_le_bytes(vl.try_into().unwrap()) as usize;
        let Some(value) = rest.get(5 + kl..5 + kl + vl) else { break };
        rest = &rest[5 + kl + vl..];
        entries += 1;
        let Some(key) = safe_key(key) else { continue };
        let path = dir.join(key);
        if let Some(parent) = path.parent() {
            if std::fs::create_dir_all(parent).is_err() {
                continue;
            }
        }
        let _ = std::fs::write(&path, value);
    }
    if let Ok(path) = std::ffi::CString::new(dir.to_string_lossy().as_bytes()) {
        // SAFETY: a NUL-terminated path and a valid output pointer.
        read_through_c(&sel, |a| unsafe { crate::ffi::array::zarr_open(path.as_ptr(), crate::ffi::array::ZARR_READ, a) });
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A per-process scratch directory for [`store_read`] (in `/dev/shm` when there is one).
fn scratch_dir() -> std::path::PathBuf {
    scratch_path("")
}

/// A per-process scratch path ending in `suffix` (in `/dev/shm` when there is one).
fn scratch_path(suffix: &str) -> std::path::PathBuf {
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    base.join(format!("zarr-fuzz-{}{suffix}", std::process::id()))
}

/// A relative key of at most 8 plain components (letters, digits, `.`, `_`, `-`; not `.` or `..`).
fn safe_key(key: &[u8]) -> Option<&str> {
    let key = std::str::from_utf8(key).ok()?;
    let parts: Vec<&str> = key.split('/').collect();
    let plain = |p: &&str| {
        !p.is_empty() && *p != "." && *p != ".." && p.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    };
    (parts.len() <= 8 && parts.iter().all(plain)).then_some(key)
}

fn check_status(s: crate::status::zarr_status) {
    if s == crate::status::ZARR_ERR_INTERNAL {
        let msg = unsafe { std::ffi::CStr::from_ptr(crate::ffi::last_error::zarr_last_error()) };
        let msg = msg.to_string_lossy();
        if msg.contains("internal panic") {
            panic!("the C API caught a panic: {msg}");
        }
    }
}

/// Opens an array with `open` (a C API call that stores the handle through its argument) and reads
/// it through the C API: a region chosen by `sel`, the whole array when it is small, a strided
/// hyperslab converted to float64, or a variable-length region.
fn read_through_c(sel: &[u8; 8], open: impl FnOnce(&mut *mut crate::ffi::array::zarr_array) -> crate::status::zarr_status) {
    use crate::ffi::array::*;
    use crate::ffi::hyperslab::{zarr_read_hyperslab, DataTypeCode};
    use crate::ffi::vlen::{zarr_read_region_vlen, zarr_vlen_free};
    use crate::status::ZARR_OK;
    let mut a = std::ptr::null_mut();
    let s = open(&mut a);
    check_status(s);
    if s != ZARR_OK {
        return;
    }
    // SAFETY (rest): `a` is an open handle; every buffer has the length passed with it.
    unsafe {
        let mut rank = 0usize;
        check_status(zarr_array_rank(a, &mut rank));
        let mut shape = vec![0u64; rank];
        check_status(zarr_array_shape(a, shape.as_mut_ptr(), rank));
        let mut code = zarr_data_type::ZARR_UINT8;
        let mut size = 0usize;
        check_status(zarr_array_data_type(a, &mut code, &mut size));
        let s1 = pick_selection(&shape, sel, MAX_READ_BYTES / size.max(1) as u64);
        if size == 0 {
            let mut v = std::ptr::null_mut();
            check_status(zarr_read_region_vlen(a, s1.start.as_ptr(), s1.count.as_ptr(), &mut v));
            zarr_vlen_free(v);
        } else {
            // A dense region.
            let n = s1.count.iter().product::<u64>() as usize * size;
            let mut buf = vec![0u8; n];
            check_status(zarr_read_region(a, s1.start.as_ptr(), s1.count.as_ptr(), buf.as_mut_ptr().cast(), n));
            // The whole array when it is small.
            let total = shape.iter().try_fold(size as u64, |acc, &d| acc.checked_mul(d));
            if let Some(t) = total.filter(|&t| t <= MAX_READ_BYTES) {
                let zeros = vec![0u64; rank];
                let mut buf = vec![0u8; t as usize];
                check_status(zarr_read_region(a, zeros.as_ptr(), shape.as_ptr(), buf.as_mut_ptr().cast(), t as usize));
            }
            // A strided hyperslab converted to float64.
            let mut buf = vec![0u8; n / size * 8];
            check_status(zarr_read_hyperslab(
                a,
                s1.start.as_ptr(),
                s1.count.as_ptr(),
                s1.step.as_ptr(),
                std::ptr::null(),
                DataTypeCode(zarr_data_type::ZARR_FLOAT64 as i32),
                buf.as_mut_ptr().cast(),
                buf.len(),
            ));
        }
        check_status(zarr_close(a));
    }
}
