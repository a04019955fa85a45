//! kerchunk references in the Parquet layout, as `kerchunk.df.refs_to_dataframe` and fsspec's
//! `LazyReferenceMapper` write them: a directory with
//!
//! - `.zmetadata`: `{"metadata": {key: document, ...}, "record_size": N}`, the Zarr v2 metadata of
//!   every node (`.zgroup`, `.zattrs`, `var/.zarray`, ...);
//! - `<var>/refs.<n>.parq`: the references of array `<var>`'s chunks, chunk number `k` (the chunk's
//!   index raveled in C order over the chunk grid of `<var>/.zarray`) in row `k % N` of file
//!   `k / N`. Columns: `path` (the target URL, or null), `offset` and `size` (integers), `raw` (the
//!   value itself, or null). A row with `raw` is inline data; one with `path` and offset and size both
//!   0 the whole target; one with `path` a byte range; one with neither, a chunk that does not exist.
//!
//! Record files are read when a key in them is first looked up and kept (the last
//! `CACHED_RECORDS`); a missing record file means its chunks do not exist. A file whose columns are
//! not these, or not of these types, is [`Error::Metadata`] naming the file and the columns.
//! `.zmetadata` and each record file are at most the metadata ceiling (the store option
//! `max_metadata_bytes`, else `ZARR_MAX_METADATA_BYTES`), checked before they are read; `.zmetadata`
//! and the `.zarray` documents in it hold at most one JSON value per 128 bytes of it, counted before
//! they are parsed. A record file is checked by [`super::parquet_check`] before the `parquet` crate
//! reads it, and what its references copy out of it is at most the ceiling (docs/limits.md).

use super::reference::read_bounded;
use super::reference::ReferenceIndex;
use super::reference_spec::Ref;
use super::DirListing;
use crate::error::{Error, Result};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Record files kept in memory at once.
pub(crate) const CACHED_RECORDS: usize = 16;
/// The most chunk keys one listing enumerates.
pub(crate) const LIST_LIMIT: u64 = 10_000_000;
/// The largest `record_size` accepted.
const MAX_RECORD_SIZE: u64 = 100_000_000;

type Record = Arc<Vec<Option<Ref>>>;

/// A Parquet reference directory.
pub struct ParquetRefs {
    root: PathBuf,
    metadata: BTreeMap<String, Vec<u8>>,
    record_size: u64,
    /// Chunk grid of each array (by field, i.e. node path).
    grids: HashMap<String, Vec<u64>>,
    cache: Mutex<VecDeque<((String, u64), Record)>>,
    remote: bool,
    /// The metadata ceiling: the most bytes `.zmetadata`, a record file or one decoded page may have.
    ceiling: u64,
}

fn meta_err(what: impl std::fmt::Display) -> Error {
    Error::Metadata(what.to_string())
}

impl ParquetRefs {
    /// Opens the directory `root` (reads `.zmetadata`).
    pub fn open(root: &Path, ceiling: u64) -> Result<ParquetRefs> {
        let zpath = root.join(".zmetadata");
        let text = read_bounded(&zpath, ceiling)?.ok_or_else(|| Error::io(zpath.display(), std::io::ErrorKind::NotFound.into()))?;
        // Its JSON values too are bounded by the ceiling, as any metadata document's (docs/limits.md):
        // a parsed value takes about a hundred bytes, far more than its text.
        crate::limits::check_parse_size(&text, ceiling).map_err(|e| e.context(zpath.display()))?;
        let doc: serde_json::Value =
            serde_json::from_slice(&text).map_err(|e| meta_err(format!("{}: not valid JSON: {e}", zpath.display())))?;
        let record_size = doc
            .get("record_size")
            .and_then(|v| v.as_u64())
            .filter(|n| (1..=MAX_RECORD_SIZE).contains(n))
            .ok_or_else(|| meta_err(format!("{}: 'record_size' must be an integer in 1..={MAX_RECORD_SIZE}", zpath.display())))?;
        let entries = doc
            .get("metadata")
            .and_then(|m| m.as_object())
            .ok_or_else(|| meta_err(format!("{}: no 'metadata' object", zpath.display())))?;
        let mut metadata = BTreeMap::new();
        let mut grids = HashMap::new();
        for (k, v) in entries {
            super::validate_key(k).map_err(|e| meta_err(format!("{}: {}", zpath.display(), e.message())))?;
            let bytes = match v {
                serde_json::Value::String(s) => s.as_bytes().to_vec(),
                other => other.to_string().into_bytes(),
            };
            if let Some(field) = k.strip_suffix("/.zarray").or_else(|| (k == ".zarray").then_some("")) {
                crate::limits::check_parse_size(&bytes, ceiling).map_err(|e| e.context(format!("{}: '{k}'", zpath.display())))?;
                let a: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| meta_err(format!("{}: '{k}': {e}", zpath.display())))?;
                let dims = |name: &str| -> Result<Vec<u64>> {
                    a.get(name)
                        .and_then(|s| s.as_array())
                        .and_then(|s| s.iter().map(|x| x.as_u64()).collect::<Option<Vec<u64>>>())
                        .ok_or_else(|| meta_err(format!("{}: '{k}' has no '{name}' of non-negative integers", zpath.display())))
                };
                let (shape, chunks) = (dims("shape")?, dims("chunks")?);
                if shape.len() != chunks.len() || chunks.contains(&0) {
                    return Err(meta_err(format!("{}: '{k}': shape and chunks do not match", zpath.display())));
                }
                let grid: Vec<u64> = shape.iter().zip(&chunks).map(|(s, c)| s.div_ceil(*c)).collect();
                grids.insert(field.to_string(), if grid.is_empty() { vec![1] } else { grid });
            }
            metadata.insert(k.clone(), bytes);
        }
        let mut refs =
            ParquetRefs { root: root.to_path_buf(), metadata, record_size, grids, cache: Mutex::new(VecDeque::new()), remote: false, ceiling };
        // Whether the targets are remote, from the first record file there is (a bad one is reported
        // when a key in it is read).
        let mut fields: Vec<&String> = refs.grids.keys().collect();
        fields.sort();
        if let Some(field) = fields.first().map(|f| f.to_string()) {
            if let Ok(Some(rec)) = refs.record(&field, 0) {
                refs.remote = rec.iter().flatten().any(|r| matches!(r, Ref::Url { url: Some(u), .. } if super::reference::is_remote(u)));
            }
        }
        Ok(refs)
    }

    fn record_path(&self, field: &str, record: u64) -> PathBuf {
        let dir = if field.is_empty() { self.root.clone() } else { self.root.join(field) };
        dir.join(format!("refs.{record}.parq"))
    }

    /// The references of record file `record` of `field` (`None`: there is no such file).
    fn record(&self, field: &str, record: u64) -> Result<Option<Record>> {
        let id = (field.to_string(), record);
        {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, r)) = cache.iter().find(|(k, _)| *k == id) {
                return Ok(Some(r.clone()));
            }
        }
        let path = self.record_path(field, record);
        let Some(bytes) = read_bounded(&path, self.ceiling)? else { return Ok(None) };
        let rec: Record = Arc::new(read_record(&path, bytes, self.record_size, self.ceiling)?);
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= CACHED_RECORDS {
            cache.pop_front();
        }
        cache.push_back((id, rec.clone()));
        Ok(Some(rec))
    }

    /// The field and chunk number of a chunk key (`None`: not a chunk key of an array here).
    fn chunk_number(&self, key: &str) -> Option<(&str, u64)> {
        let (field, chunk) = key.rsplit_once('/').unwrap_or(("", key));
        let (field, grid) = self.grids.get_key_value(field)?;
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
        Some((field.as_str(), n))
    }
}

/// The references of one record file, `record_size` rows at most. What the file claims is checked
/// before the crate sizes anything from it ([`super::parquet_check`]).
fn read_record(path: &Path, bytes: Vec<u8>, record_size: u64, ceiling: u64) -> Result<Vec<Option<Ref>>> {
    use super::parquet_check::{check_footer, check_pages, error, BYTES_PER_ROW};
    check_footer(&bytes).map_err(|why| error(path, why))?;
    let ctx = |e: parquet::errors::ParquetError| meta_err(format!("{}: not a readable Parquet file: {e}", path.display()));
    let data = bytes::Bytes::from(bytes);
    let reader = SerializedFileReader::new(data.clone()).map_err(ctx)?;
    let file_rows = reader.metadata().file_metadata().num_rows();
    let mut sum: i64 = 0;
    for rg in reader.metadata().row_groups() {
        let rows = u64::try_from(rg.num_rows()).map_err(|_| error(path, format!("a row group claims {} rows", rg.num_rows())))?;
        sum = sum.saturating_add(rg.num_rows());
        if sum > file_rows {
            return Err(error(path, format!("its row groups claim more rows than the file's {file_rows} rows")));
        }
        for col in rg.columns() {
            // The crate's byte_range() panics on a negative offset or size.
            let start = col.dictionary_page_offset().unwrap_or(col.data_page_offset());
            let range = u64::try_from(start).ok().zip(u64::try_from(col.compressed_size()).ok()).ok_or_else(|| {
                error(path, format!("a column chunk claims offset {start} and size {}", col.compressed_size()))
            })?;
            check_pages(&data, range, rows, ceiling).map_err(|why| error(path, why))?;
        }
    }
    let meta = reader.metadata().file_metadata();
    let names: Vec<String> = meta.schema_descr().columns().iter().map(|c| c.name().to_string()).collect();
    let known = ["path", "offset", "size", "raw"];
    let has = |n: &str| names.iter().any(|c| c == n);
    if names.iter().any(|c| !known.contains(&c.as_str())) || !(has("raw") || (has("path") && has("offset") && has("size"))) {
        return Err(meta_err(format!(
            "{}: reference columns must be path, offset, size and raw (or some of them), not {}",
            path.display(),
            names.join(", ")
        )));
    }
    let rows = u64::try_from(meta.num_rows()).unwrap_or(0);
    if rows > record_size {
        return Err(meta_err(format!("{}: {rows} rows, more than the record size {record_size}", path.display())));
    }
    if rows > ceiling / BYTES_PER_ROW {
        return Err(Error::Memory(format!(
            "{}: {rows} rows, more than one per {BYTES_PER_ROW} bytes of the metadata ceiling of {ceiling} ({})",
            path.display(),
            crate::limits::METADATA_CEILING_SETTING
        )));
    }
    let mut out = Vec::new();
    crate::error::try_reserve(&mut out, rows as usize)?;
    let mut urls: HashSet<Arc<str>> = HashSet::new();
    // The bytes the references copy out of the file (inline values, distinct target URLs): at most the
    // metadata ceiling in all, however often the pages repeat a value (a dictionary holds a value once
    // and each row may name it).
    let mut held: u64 = 0;
    let mut hold = |n: usize| -> Result<()> {
        held = held.saturating_add(n as u64);
        if held > ceiling {
            return Err(Error::Memory(format!(
                "{}: its references hold more than the metadata ceiling of {ceiling} bytes of inline values and target URLs ({})",
                path.display(),
                crate::limits::METADATA_CEILING_SETTING
            )));
        }
        Ok(())
    };
    for (i, row) in reader.get_row_iter(None).map_err(ctx)?.enumerate() {
        let row = row.map_err(ctx)?;
        let (mut url, mut offset, mut size, mut raw) = (None, 0u64, 0u64, None);
        for (name, field) in row.get_column_iter() {
            let bad = || meta_err(format!("{}: row {i}: column '{name}' holds {field:?}", path.display()));
            let int = |f: &Field| -> Result<u64> {
                match f {
                    Field::Long(v) => u64::try_from(*v).map_err(|_| bad()),
                    Field::Int(v) => u64::try_from(*v).map_err(|_| bad()),
                    Field::ULong(v) => Ok(*v),
                    Field::UInt(v) => Ok(u64::from(*v)),
                    Field::Null => Ok(0),
                    _ => Err(bad()),
                }
            };
            match (name.as_str(), field) {
                (_, Field::Null) => {}
                ("path", Field::Str(s)) => url = Some(s.clone()),
                ("path", Field::Bytes(b)) => url = Some(std::str::from_utf8(b.data()).map_err(|_| bad())?.to_string()),
                ("offset", f) => offset = int(f)?,
                ("size", f) => size = int(f)?,
                ("raw", Field::Bytes(b)) => {
                    hold(b.data().len())?;
                    raw = Some(b.data().to_vec())
                }
                ("raw", Field::Str(s)) => {
                    hold(s.len())?;
                    raw = Some(s.as_bytes().to_vec())
                }
                _ => return Err(bad()),
            }
        }
        out.push(match (raw, url) {
            (Some(v), _) => Some(Ref::Inline(v)),
            (None, Some(u)) => {
                let u: Arc<str> = match urls.get(u.as_str()) {
                    Some(x) => x.clone(),
                    None => {
                        hold(u.len())?;
                        let a: Arc<str> = u.into();
                        urls.insert(a.clone());
                        a
                    }
                };
                let range = (offset != 0 || size != 0).then_some((offset, size));
                Some(Ref::Url { url: Some(u), range })
            }
            (None, None) => None,
        });
    }
    Ok(out)
}

impl ReferenceIndex for ParquetRefs {
    fn lookup(&self, key: &str) -> Result<Option<Ref>> {
        if let Some(v) = self.metadata.get(key) {
            return Ok(Some(Ref::Inline(v.clone())));
        }
        let Some((field, n)) = self.chunk_number(key) else { return Ok(None) };
        let Some(rec) = self.record(field, n / self.record_size)? else { return Ok(None) };
        Ok(rec.get((n % self.record_size) as usize).cloned().flatten())
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let mut out = DirListing::from_sorted_keys(prefix, self.metadata.range(prefix.to_string()..).map(|(k, _)| k.as_str()));
        let field = prefix.strip_suffix('/').unwrap_or(prefix);
        if let Some(grid) = self.grids.get(field) {
            let total = grid.iter().try_fold(1u64, |a, g| a.checked_mul(*g)).unwrap_or(u64::MAX);
            if total > LIST_LIMIT {
                return Err(Error::Unsupported(format!(
                    "{}: listing the {total} chunk keys of '{field}' is refused (more than {LIST_LIMIT})",
                    self.root.display()
                )));
            }
            for record in 0..total.div_ceil(self.record_size) {
                let Some(rec) = self.record(field, record)? else { continue };
                for (row, r) in rec.iter().enumerate() {
                    let n = record * self.record_size + row as u64;
                    if r.is_none() || n >= total {
                        continue;
                    }
                    let mut idx = vec![0u64; grid.len()];
                    let mut rest = n;
                    for (d, g) in grid.iter().enumerate().rev() {
                        idx[d] = rest % g;
                        rest /= g;
                    }
                    out.keys.push(idx.iter().map(u64::to_string).collect::<Vec<_>>().join("."));
                }
            }
            out.keys.sort();
            out.keys.dedup();
        }
        Ok(out)
    }

    fn may_be_remote(&self) -> bool {
        self.remote
    }
}
