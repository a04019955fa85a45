//! Writes a kerchunk reference set in the Parquet layout that [`super::reference_parquet`] reads (and
//! fsspec's `LazyReferenceMapper`, kerchunk's `refs_to_dataframe`): `.zmetadata` with every metadata
//! document and the record size, and `<var>/refs.<n>.parq` with the references of array `<var>`'s
//! chunks, chunk number `k` (its index raveled in C order over the chunk grid) in row `k % N` of file
//! `k / N`. Columns `path` (UTF-8, null for inline data and for chunks that do not exist), `offset`,
//! `size` (int64; both 0 for a whole target) and `raw` (bytes, null unless inline); pages compressed with
//! zstd, as fsspec writes them. Every record file of an array is written, the last one holding only the
//! chunks that remain.

use super::reference_spec::{JsonRefs, Ref};
use crate::error::{Error, Result};
use parquet::basic::{Compression, ZstdLevel};
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

/// The record size when none is given (fsspec's default).
pub(crate) const DEFAULT_RECORD_SIZE: u64 = 10_000;
/// The most chunks (stored or not) an array may have: every one is a row (10^8 rows: some minutes).
pub(crate) const MAX_CHUNKS: u64 = 100_000_000;

const SCHEMA: &str = "message schema { OPTIONAL BYTE_ARRAY path (UTF8); REQUIRED INT64 offset; \
                      REQUIRED INT64 size; OPTIONAL BYTE_ARRAY raw; }";

fn meta_err(what: impl std::fmt::Display) -> Error {
    Error::Metadata(what.to_string())
}

/// Whether `key` names a metadata document (`.zgroup`, `.zattrs`, `.zarray`, at any level).
fn is_metadata_key(key: &str) -> bool {
    let last = key.rsplit('/').next().unwrap_or(key);
    matches!(last, ".zgroup" | ".zattrs" | ".zarray" | ".zmetadata")
}

/// Writes the JSON reference set `json` (bytes of a kerchunk JSON file, version 0 or 1, without `gen`)
/// into the existing, empty directory `dir` in the Parquet layout with `record_size` rows a file.
pub fn write_parquet_layout(json: &[u8], dir: &Path, record_size: u64) -> Result<()> {
    if record_size == 0 || record_size > 100_000_000 {
        return Err(Error::InvalidArgument(format!("record size {record_size}: must be in 1..=100000000")));
    }
    let refs = JsonRefs::parse(json)?;
    if refs.has_gen() {
        return Err(Error::Unsupported("references with 'gen' entries are not written as Parquet".into()));
    }
    let mut metadata = serde_json::Map::new();
    let mut grids: HashMap<String, Vec<u64>> = HashMap::new();
    for (key, r) in refs.entries() {
        if !is_metadata_key(key) || key.ends_with(".zmetadata") {
            continue;
        }
        let Ref::Inline(bytes) = r else {
            return Err(meta_err(format!("reference '{key}': a metadata document must be inline")));
        };
        let doc: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| meta_err(format!("reference '{key}': not valid JSON: {e}")))?;
        if let Some(field) = key.strip_suffix("/.zarray").or_else(|| (key == ".zarray").then_some("")) {
            let dims = |name: &str| -> Result<Vec<u64>> {
                doc.get(name)
                    .and_then(|s| s.as_array())
                    .and_then(|s| s.iter().map(|x| x.as_u64()).collect::<Option<Vec<u64>>>())
                    .ok_or_else(|| meta_err(format!("reference '{key}' has no '{name}' of non-negative integers")))
            };
            let (shape, chunks) = (dims("shape")?, dims("chunks")?);
            if shape.len() != chunks.len() || chunks.contains(&0) {
                return Err(meta_err(format!("reference '{key}': shape and chunks do not match")));
            }
            if doc.get("dimension_separator").and_then(|v| v.as_str()).is_some_and(|s| s != ".") {
                return Err(Error::Unsupported(format!("reference '{key}': chunk keys separated by other than '.'")));
            }
            let grid: Vec<u64> = shape.iter().zip(&chunks).map(|(s, c)| s.div_ceil(*c)).collect();
            grids.insert(field.to_string(), if grid.is_empty() { vec![1] } else { grid });
        }
        metadata.insert(key.to_string(), doc);
    }
    // the chunks of each array by chunk number
    let mut chunks: BTreeMap<&str, BTreeMap<u64, &Ref>> = BTreeMap::new();
    for (key, r) in refs.entries() {
        if is_metadata_key(key) {
            continue;
        }
        let (field, chunk) = key.rsplit_once('/').unwrap_or(("", key));
        let grid = grids.get(field).ok_or_else(|| meta_err(format!("reference '{key}': not a chunk of an array")))?;
        let n = chunk_number(chunk, grid).ok_or_else(|| meta_err(format!("reference '{key}': not a chunk key inside the array's chunk grid")))?;
        if matches!(r, Ref::Url { url: None, .. }) {
            return Err(meta_err(format!("reference '{key}': a reference to the default target (null URL)")));
        }
        chunks.entry(field).or_default().insert(n, r);
    }
    let mut fields: Vec<&String> = grids.keys().collect();
    fields.sort();
    for field in fields {
        let total = grids[field].iter().try_fold(1u64, |a, g| a.checked_mul(*g)).filter(|t| *t <= MAX_CHUNKS);
        let total = total.ok_or_else(|| Error::Unsupported(format!("array '{field}': more than {MAX_CHUNKS} chunks")))?;
        let empty = BTreeMap::new();
        let mine = chunks.get(field.as_str()).unwrap_or(&empty);
        let sub = if field.is_empty() { dir.to_path_buf() } else { dir.join(field) };
        std::fs::create_dir_all(&sub).map_err(|e| Error::io(sub.display(), e))?;
        for record in 0..total.div_ceil(record_size) {
            let first = record * record_size;
            let rows = record_size.min(total - first);
            let path = sub.join(format!("refs.{record}.parq"));
            write_record(&path, (first..first + rows).map(|n| mine.get(&n).copied()))?;
        }
    }
    let doc = serde_json::json!({"metadata": metadata, "record_size": record_size});
    let zpath = dir.join(".zmetadata");
    std::fs::write(&zpath, doc.to_string()).map_err(|e| Error::io(zpath.display(), e))
}

/// The chunk number of the key `chunk` ("2.0.1") in `grid`, or `None`.
fn chunk_number(chunk: &str, grid: &[u64]) -> Option<u64> {
    let idx: Vec<u64> = chunk.split('.').map(|c| c.parse::<u64>().ok().filter(|v| v.to_string() == c)).collect::<Option<_>>()?;
    if idx.len() != grid.len() {
        return None;
    }
    let mut n: u64 = 0;
    for (i, g) in idx.iter().zip(grid) {
        if i >= g {
            return None;
        }
        n = n.checked_mul(*g)?.checked_add(*i)?;
    }
    Some(n)
}

/// One record file: a row per reference (`None`: a chunk that does not exist).
fn write_record<'a>(path: &Path, rows: impl Iterator<Item = Option<&'a Ref>>) -> Result<()> {
    let (mut urls, mut url_def, mut offsets, mut sizes, mut raws, mut raw_def) = (vec![], vec![], vec![], vec![], vec![], vec![]);
    for r in rows {
        let (url, range, raw) = match r {
            None => (None, None, None),
            Some(Ref::Inline(v)) => (None, None, Some(v)),
            Some(Ref::Url { url, range }) => (url.as_deref(), *range, None),
        };
        url_def.push(i16::from(url.is_some()));
        if let Some(u) = url {
            urls.push(ByteArray::from(u.as_bytes().to_vec()));
        }
        let (o, l) = range.unwrap_or((0, 0));
        let int = |v: u64| i64::try_from(v).map_err(|_| meta_err(format!("{}: offset or length {v} is too large", path.display())));
        offsets.push(int(o)?);
        sizes.push(int(l)?);
        raw_def.push(i16::from(raw.is_some()));
        if let Some(v) = raw {
            raws.push(ByteArray::from(v.clone()));
        }
    }
    let pq = |e: parquet::errors::ParquetError| Error::Io(format!("{}: writing Parquet: {e}", path.display()));
    let schema = Arc::new(parse_message_type(SCHEMA).map_err(pq)?);
    let props = Arc::new(WriterProperties::builder().set_compression(Compression::ZSTD(ZstdLevel::default())).build());
    let file = std::fs::File::create(path).map_err(|e| Error::io(path.display(), e))?;
    let mut writer = SerializedFileWriter::new(file, schema, props).map_err(pq)?;
    let mut rg = writer.next_row_group().map_err(pq)?;
    let mut column = 0;
    while let Some(mut col) = rg.next_column().map_err(pq)? {
        match column {
            0 => col.typed::<ByteArrayType>().write_batch(&urls, Some(&url_def), None),
            1 => col.typed::<Int64Type>().write_batch(&offsets, None, None),
            2 => col.typed::<Int64Type>().write_batch(&sizes, None, None),
            _ => col.typed::<ByteArrayType>().write_batch(&raws, Some(&raw_def), None),
        }
        .map_err(pq)?;
        col.close().map_err(pq)?;
        column += 1;
    }
    rg.close().map_err(pq)?;
    let file = writer.into_inner().map_err(pq)?;
    file.sync_all().map_err(|e| Error::io(path.display(), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::options::StoreOptions;
    use crate::store::reference::open_location;

    #[test]
    fn written_layout_reads_back() {
        let dir = std::env::temp_dir().join(format!("zarr-reference-write-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("data.bin");
        std::fs::write(&data, (0u8..=255).collect::<Vec<u8>>()).unwrap();
        let arr = r#"{"zarr_format":2,"shape":[10],"chunks":[2],"dtype":"|u1","compressor":null,"fill_value":7,"filters":null,"order":"C"}"#;
        let refs = serde_json::json!({"version": 1, "refs": {
            ".zgroup": "{\"zarr_format\":2}",
            "g/.zgroup": "{\"zarr_format\":2}",
            "g/a/.zarray": arr,
            "g/a/0": [data.to_str().unwrap(), 10, 2],
            "g/a/1": "base64:AQI=",
            "g/a/4": [data.to_str().unwrap(), 200, 2],
        }});
        let out = dir.join("refs.parq");
        std::fs::create_dir(&out).unwrap();
        write_parquet_layout(refs.to_string().as_bytes(), &out, 2).unwrap();
        for n in 0..3 {
            assert!(out.join(format!("g/a/refs.{n}.parq")).exists(), "record {n}");
        }
        let store = open_location(out.to_str().unwrap(), &StoreOptions::new()).unwrap();
        assert_eq!(store.get("g/a/0").unwrap().unwrap(), vec![10, 11]);
        assert_eq!(store.get("g/a/1").unwrap().unwrap(), vec![1, 2]);
        assert_eq!(store.get("g/a/2").unwrap(), None);
        assert_eq!(store.get("g/a/4").unwrap().unwrap(), vec![200, 201]);
        assert!(store.get("g/a/.zarray").unwrap().is_some());
        // what it cannot write is refused by key
        let bad = serde_json::json!({"version": 1, "refs": {"g/.zgroup": "{\"zarr_format\":2}", "g/x/0": ["f", 0, 1]}});
        let out2 = dir.join("bad.parq");
        std::fs::create_dir(&out2).unwrap();
        let e = write_parquet_layout(bad.to_string().as_bytes(), &out2, 2).unwrap_err();
        assert!(e.message().contains("g/x/0") && e.message().contains("not a chunk of an array"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
