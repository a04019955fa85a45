//! Read-only reference stores: a Zarr hierarchy whose values are inline data or byte ranges of other
//! files (kerchunk references, as fsspec's `ReferenceFileSystem` reads them), so that HDF5 and
//! netCDF-4 files read as Zarr in place.
//!
//! Locations: `reference://PATH` (`reference:///abs/refs.json`), and `reference://PATH!/node/path` for
//! a node inside. PATH is a kerchunk JSON file (specification versions 0 and 1,
//! [`super::reference_spec`]) or a directory in the Parquet layout ([`super::reference_parquet`]).
//! Targets are local paths (relative ones are taken relative to the directory of PATH), `file://`,
//! `s3://` and `http(s)://` URLs, read through libzarr's stores ([`super::range_target`]) with the
//! store options the location was opened with (for S3 and HTTP targets alike). A reference with a
//! `null` URL names the default target, the store option `reference_target` (fsspec's `target`);
//! without that option it is an error.
//!
//! Every value is looked up when it is read; a reference past its target's end, a missing target,
//! an unknown or forbidden URL scheme, or a target that shrank is an error naming the key and the
//! target. Every write is [`Error::ReadOnly`].

use super::options::StoreOptions;
use super::range_target::RangeTargets;
use super::reference_spec::{JsonRefs, Ref};
use super::coalesce::{self, Piece, Span, COALESCE_GAP, COALESCE_MAX};
use super::{check_range, ByteSource, CountedSource, DirListing, ReadLimit, Store};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A set of references: a key's reference and the children of a prefix.
pub trait ReferenceIndex: Send + Sync {
    /// The reference of `key`, or `None` when the set has no such key.
    fn lookup(&self, key: &str) -> Result<Option<Ref>>;
    /// Whether the set has `key`.
    fn contains(&self, key: &str) -> Result<bool> {
        Ok(self.lookup(key)?.is_some())
    }
    /// The direct children of `prefix`.
    fn list_dir(&self, prefix: &str) -> Result<DirListing>;
    /// Whether any reference may name a remote target (then reads run on the I/O pool).
    fn may_be_remote(&self) -> bool;
}

impl ReferenceIndex for JsonRefs {
    fn lookup(&self, key: &str) -> Result<Option<Ref>> {
        JsonRefs::lookup(self, key)
    }
    fn contains(&self, key: &str) -> Result<bool> {
        JsonRefs::contains(self, key)
    }
    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        JsonRefs::list_dir(self, prefix)
    }
    fn may_be_remote(&self) -> bool {
        self.urls().any(is_remote)
    }
}

/// Whether a URL (or URL template) names a remote target.
pub fn is_remote(url: &str) -> bool {
    matches!(super::range_target::url_scheme(url).as_deref(), Some("s3" | "http" | "https"))
}

/// A reference set opened as a read-only store.
pub struct ReferenceStore {
    path: PathBuf,
    index: Box<dyn ReferenceIndex>,
    targets: RangeTargets,
    /// The target of references whose URL is null (option `reference_target`).
    default_target: Option<Arc<str>>,
    concurrency: usize,
    bytes_read: AtomicU64,
}

impl std::fmt::Debug for ReferenceStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReferenceStore").field("path", &self.path).finish()
    }
}

/// The store named by the part of a `reference://` location after the scheme: `PATH` or
/// `PATH!/node/path`; `options` apply to the S3 and HTTP targets.
pub fn open_location(rest: &str, options: &StoreOptions) -> Result<Arc<dyn Store>> {
    let (file, inner) = rest.split_once("!/").unwrap_or((rest, ""));
    if file.is_empty() {
        return Err(Error::InvalidArgument(format!("reference location 'reference://{rest}' names no file")));
    }
    let path = super::location::path_from_location(file)?;
    let store: Arc<dyn Store> = Arc::new(ReferenceStore::open(&path, options)?);
    super::prefix::PrefixStore::wrap(store, inner)
}

impl ReferenceStore {
    /// Opens the reference file (or Parquet directory) at `path`.
    pub fn open(path: &Path, options: &StoreOptions) -> Result<ReferenceStore> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(format!("references {}", path.display()), e))?;
        let index: Box<dyn ReferenceIndex> = if meta.is_dir() {
            open_parquet(path, options.get_u64("max_metadata_bytes").unwrap_or_else(crate::limits::max_metadata_bytes))?
        } else {
            // A reference file is a metadata document: refused before it is read when it is longer than
            // the metadata ceiling (docs/limits.md).
            let ceiling = options.get_u64("max_metadata_bytes").unwrap_or_else(crate::limits::max_metadata_bytes);
            let bytes = read_bounded(path, ceiling)?
                .ok_or_else(|| Error::io(path.display(), std::io::ErrorKind::NotFound.into()))?;
            Box::new(JsonRefs::parse_with_ceiling(&bytes, ceiling).map_err(|e| e.context(path.display()))?)
        };
        let base = if meta.is_dir() { Some(path.to_path_buf()) } else { path.parent().map(Path::to_path_buf) };
        let base = base.map(|b| if b.as_os_str().is_empty() { PathBuf::from(".") } else { b });
        let mut targets = RangeTargets::new(base);
        for scheme in ["s3", "http", "https"] {
            targets.set_options(scheme, options.clone());
        }
        let concurrency = if index.may_be_remote() { options.max_concurrency() } else { 0 };
        let default_target = match options.get("reference_target") {
            Some(t) => {
                targets.check_url(t).map_err(|e| e.context("store option 'reference_target'"))?;
                Some(t.into())
            }
            None => None,
        };
        Ok(ReferenceStore { path: path.to_path_buf(), index, targets, default_target, concurrency, bytes_read: AtomicU64::new(0) })
    }

    fn read_only(&self, key: &str) -> Error {
        Error::ReadOnly(format!("{}: reference stores are read-only", self.location(key)))
    }

    /// The target and range of `key` (`None`: absent), or its inline bytes.
    fn resolve(&self, key: &str) -> Result<Option<Resolved>> {
        super::validate_key(key)?;
        let ctx = |e: Error| e.context(format!("reference '{key}'"));
        Ok(match self.index.lookup(key).map_err(ctx)? {
            None => None,
            Some(Ref::Inline(v)) => Some(Resolved::Inline(v)),
            Some(Ref::Url { url: None, range }) => match &self.default_target {
                Some(url) => Some(self.resolve_url(key, url.clone(), range)?),
                None => {
                    return Err(ctx(Error::Metadata(
                        "the URL is null and no default target was given (store option 'reference_target')".into(),
                    )))
                }
            },
            Some(Ref::Url { url: Some(url), range }) => Some(self.resolve_url(key, url, range)?),
        })
    }

    fn resolve_url(&self, key: &str, url: Arc<str>, range: Option<(u64, u64)>) -> Result<Resolved> {
        let (offset, len) = match range {
            Some(r) => r,
            None => (0, self.targets.len(&url).map_err(|e| e.context(format!("reference '{key}'")))?),
        };
        Ok(Resolved::Range { url, offset, len })
    }

    fn read_range(&self, key: &str, url: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        let v = self.targets.read(url, offset, len).map_err(|e| e.context(format!("reference '{key}'")))?;
        self.bytes_read.fetch_add(v.len() as u64, Ordering::Relaxed);
        Ok(v)
    }
}

impl ReferenceStore {
    /// The bytes of a span's pieces: one read of the span; when that read fails, or there is one
    /// piece, each piece read by itself (the error then names its key).
    fn read_span(&self, keys: &[String], span: &Span) -> Result<SpanBytes> {
        if span.pieces.len() > 1 {
            if let Ok(all) = self.targets.read(&span.url, span.offset, span.len) {
                self.bytes_read.fetch_add(all.len() as u64, Ordering::Relaxed);
                return Ok(SpanBytes::Whole(all));
            }
        }
        let each = span.pieces.iter().map(|p| self.read_range(&keys[p.item], &p.url, p.offset, p.len));
        Ok(SpanBytes::Each(each.collect::<Result<_>>()?))
    }
}

impl ReferenceStore {
    /// Reads `span` (local targets) into this thread's reused read buffer and hands each of its
    /// pieces to `visit` in parallel; when the span's read fails, or it holds one piece, each piece is
    /// read by itself (an error then names its key).
    fn visit_local_span(&self, keys: &[String], span: &Span, visit: &(dyn Fn(usize, &[u8]) -> Result<()> + Sync)) -> Result<()> {
        let len = usize::try_from(span.len).map_err(|_| Error::Codec(format!("a span of {} bytes", span.len)))?;
        if span.pieces.len() > 1 {
            let done = crate::scratch::with_read_buffer(len, |buf| {
                if self.targets.read_into(&span.url, span.offset, buf).is_err() {
                    return Ok(false);
                }
                self.bytes_read.fetch_add(span.len, Ordering::Relaxed);
                let buf: &[u8] = buf;
                crate::threads::try_for_each(&span.pieces, |p| {
                    let at = (p.offset - span.offset) as usize;
                    visit(p.item, &buf[at..at + p.len as usize])
                })?;
                Ok(true)
            })?;
            if done {
                return Ok(());
            }
        }
        crate::threads::try_for_each(&span.pieces, |p| {
            let n = usize::try_from(p.len).map_err(|_| Error::Codec(format!("a range of {} bytes", p.len)))?;
            crate::scratch::with_read_buffer(n, |buf| {
                self.targets.read_into(&p.url, p.offset, buf).map_err(|e| e.context(format!("reference '{}'", keys[p.item])))?;
                self.bytes_read.fetch_add(p.len, Ordering::Relaxed);
                visit(p.item, buf)
            })
        })
    }
}

/// What [`ReferenceStore::read_span`] read.
enum SpanBytes {
    Whole(Vec<u8>),
    Each(Vec<Vec<u8>>),
}

impl SpanBytes {
    /// The bytes of piece `k` of `span`.
    fn piece<'a>(&'a self, span: &Span, k: usize) -> &'a [u8] {
        match self {
            SpanBytes::Whole(all) => {
                let p = &span.pieces[k];
                let at = (p.offset - span.offset) as usize;
                &all[at..at + p.len as usize]
            }
            SpanBytes::Each(each) => &each[k],
        }
    }
}

/// The most bytes the spans of one batch of [`ReferenceStore::get_batch`] hold at once.
pub(crate) const BATCH_BYTES: u64 = 256 << 20;

#[cfg(feature = "reference-parquet")]
fn open_parquet(path: &Path, ceiling: u64) -> Result<Box<dyn ReferenceIndex>> {
    Ok(Box::new(super::reference_parquet::ParquetRefs::open(path, ceiling)?))
}

#[cfg(not(feature = "reference-parquet"))]
fn open_parquet(path: &Path, _ceiling: u64) -> Result<Box<dyn ReferenceIndex>> {
    Err(Error::Unsupported(format!(
        "{}: Parquet references need libzarr built with the `reference-parquet` feature",
        path.display()
    )))
}

enum Resolved {
    Inline(Vec<u8>),
    Range { url: Arc<str>, offset: u64, len: u64 },
}

/// The bytes a reference names, read by range from its target.
struct RangeSource<'a> {
    store: &'a ReferenceStore,
    key: String,
    url: Arc<str>,
    offset: u64,
    len: u64,
}

impl ByteSource for RangeSource<'_> {
    fn len(&self) -> u64 {
        self.len
    }
    fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_range(offset, buf.len() as u64, self.len).map_err(|e| e.context(format!("reference '{}'", self.key)))?;
        self.store
            .targets
            .read_into(&self.url, self.offset + offset, buf)
            .map_err(|e| e.context(format!("reference '{}'", self.key)))?;
        self.store.bytes_read.fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(())
    }
}

impl Store for ReferenceStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        match self.resolve(key)? {
            None => Ok(None),
            Some(Resolved::Inline(v)) => {
                self.bytes_read.fetch_add(v.len() as u64, Ordering::Relaxed);
                Ok(Some(v))
            }
            Some(Resolved::Range { url, offset, len }) => self.read_range(key, &url, offset, len).map(Some),
        }
    }

    /// The byte ranges of one target that are adjacent or close are read together ([`coalesce`]).
    /// Local targets: every span is read into its thread's reused buffer and its values are handed to
    /// `visit` at once, in parallel (reads and decoding overlap, and nothing is allocated or faulted
    /// in per span). Remote targets: in batches of at most [`BATCH_BYTES`], the spans of a batch
    /// fetched in parallel on the I/O pool, then its values handed to `visit` in parallel. A span
    /// whose read fails is read again range by range, so that the error names the reference that
    /// caused it.
    fn get_batch(&self, keys: &[String], limit: ReadLimit, visit: &(dyn Fn(usize, &[u8]) -> Result<()> + Sync)) -> Result<Option<Vec<bool>>> {
        let mut found = vec![false; keys.len()];
        let (mut pieces, mut inline) = (Vec::new(), Vec::new());
        for (i, key) in keys.iter().enumerate() {
            match self.resolve(key)? {
                None => {}
                Some(Resolved::Inline(v)) => {
                    limit.check(&self.location(key), v.len() as u64)?;
                    self.bytes_read.fetch_add(v.len() as u64, Ordering::Relaxed);
                    inline.push((i, v));
                    found[i] = true;
                }
                Some(Resolved::Range { url, offset, len }) => {
                    limit.check(&self.location(key), len)?;
                    pieces.push(Piece { item: i, url, offset, len });
                    found[i] = true;
                }
            }
        }
        let visit_one = |i: usize, v: &[u8]| crate::threads::compute(|| visit(i, v)).map_err(|e| e.context(format!("reference '{}'", keys[i])));
        crate::threads::try_for_each(&inline, |(i, v)| visit_one(*i, v))?;
        let spans = coalesce::plan(pieces, COALESCE_GAP, COALESCE_MAX);
        if self.concurrency == 0 {
            crate::threads::try_for_each(&spans, |span| self.visit_local_span(keys, span, &visit_one))?;
            return Ok(Some(found));
        }
        let mut rest: &[Span] = &spans;
        while !rest.is_empty() {
            let mut n = 0;
            let mut bytes = 0;
            while n < rest.len() && (n == 0 || bytes + rest[n].len <= BATCH_BYTES) {
                bytes += rest[n].len;
                n += 1;
            }
            let (batch, later) = rest.split_at(n);
            rest = later;
            let read: Vec<SpanBytes> = crate::threads::try_map(batch, |span| self.read_span(keys, span))?;
            let values: Vec<(usize, &[u8])> = batch
                .iter()
                .zip(&read)
                .flat_map(|(span, bytes)| span.pieces.iter().enumerate().map(move |(k, p)| (p.item, bytes.piece(span, k))))
                .collect();
            crate::threads::try_for_each(&values, |(i, v)| visit_one(*i, v))?;
        }
        Ok(Some(found))
    }

    fn open(&self, key: &str) -> Result<Option<Box<dyn ByteSource + '_>>> {
        Ok(match self.resolve(key)? {
            None => None,
            Some(Resolved::Inline(data)) => Some(Box::new(CountedSource { data, counter: &self.bytes_read })),
            Some(Resolved::Range { url, offset, len }) => {
                // The whole range must lie inside the target (a local target is checked here; a
                // remote one on its first read).
                Some(Box::new(RangeSource { store: self, key: key.to_string(), url, offset, len }))
            }
        })
    }

    fn set(&self, key: &str, _value: &[u8]) -> Result<()> {
        Err(self.read_only(key))
    }

    fn set_parts(&self, key: &str, _parts: &[&[u8]]) -> Result<()> {
        Err(self.read_only(key))
    }

    fn delete(&self, key: &str) -> Result<()> {
        Err(self.read_only(key))
    }

    fn ensure_writable(&self) -> Result<()> {
        Err(self.read_only(""))
    }

    fn exists(&self, key: &str) -> Result<bool> {
        super::validate_key(key)?;
        self.index.contains(key).map_err(|e| e.context(format!("reference '{key}'")))
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        self.index.list_dir(prefix).map_err(|e| e.context(self.location(prefix)))
    }

    fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    fn location(&self, key: &str) -> String {
        format!("reference://{}!/{key}", self.path.display())
    }

    fn io_concurrency(&self) -> usize {
        self.concurrency
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_references_over_a_local_file() {
        let dir = std::env::temp_dir().join(format!("zarr-reference-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("data.bin"), (0u8..200).collect::<Vec<_>>()).unwrap();
        let refs = serde_json::json!({
            "version": 1,
            "templates": {"d": "data.bin"},
            "gen": [{"key": "g/{{i}}", "url": "{{d}}", "offset": "{{i * 10}}", "length": "10", "dimensions": {"i": {"stop": 20}}}],
            "refs": {".zgroup": "{\"zarr_format\": 2}", "a/0": ["{{d}}", 5, 3], "a/1": ["data.bin"], "a/2": "base64:AQID",
                     "bad/past": ["data.bin", 199, 2], "bad/missing": ["nothing.bin", 0, 1], "bad/scheme": ["gs://b/x", 0, 1],
                     "bad/null": [null, 0, 1]}
        });
        std::fs::write(dir.join("refs.json"), refs.to_string()).unwrap();
        let s = open_location(&format!("{}", dir.join("refs.json").display()), &StoreOptions::new()).unwrap();
        assert_eq!(s.get("a/0").unwrap().unwrap(), [5, 6, 7]);
        assert_eq!(s.get("a/1").unwrap().unwrap().len(), 200);
        assert_eq!(s.get("a/2").unwrap().unwrap(), [1, 2, 3]);
        assert_eq!(s.get("g/19").unwrap().unwrap(), (190u8..200).collect::<Vec<_>>());
        assert!(s.get("g/20").unwrap().is_none() && !s.exists("g/20").unwrap() && s.exists("g/3").unwrap());
        let src = s.open("g/1").unwrap().unwrap();
        assert_eq!(src.read_range(2, 3).unwrap(), [12, 13, 14]);
        assert!(src.read_range(8, 3).is_err());
        let root = s.list_dir("").unwrap();
        assert_eq!((root.keys, root.prefixes), (vec![".zgroup".to_string()], vec!["a".into(), "bad".into(), "g".into()]));
        assert_eq!(s.list_dir("g/").unwrap().keys.len(), 20);
        for (key, what) in [("bad/past", "past the end"), ("bad/missing", "nothing.bin"), ("bad/scheme", "gs"), ("bad/null", "null")] {
            let e = s.get(key).unwrap_err();
            assert!(e.message().contains(key) && e.message().contains(what), "{key}: {e}");
        }
        assert!(matches!(s.set("a/0", b"x"), Err(Error::ReadOnly(_))));
        assert!(matches!(s.delete("a/0"), Err(Error::ReadOnly(_))));
        assert!(matches!(s.ensure_writable(), Err(Error::ReadOnly(_))));
        let mut o = StoreOptions::new();
        o.set("reference_target", "data.bin").unwrap();
        let with_default = open_location(&format!("{}", dir.join("refs.json").display()), &o).unwrap();
        assert_eq!(with_default.get("bad/null").unwrap().unwrap(), [0]);
        o.set("reference_target", "zip://x.zip").unwrap();
        assert!(matches!(open_location(&format!("{}", dir.join("refs.json").display()), &o), Err(Error::Unsupported(_))));
        let inner = open_location(&format!("{}!/a", dir.join("refs.json").display()), &StoreOptions::new()).unwrap();
        assert_eq!(inner.get("0").unwrap().unwrap(), [5, 6, 7]);
        assert!(matches!(open_location("/nonexistent/refs.json", &StoreOptions::new()), Err(Error::NotFound(_))));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// The content of the file `path` (`None`: there is none), refused before it is read when it is
/// longer than the metadata ceiling `ceiling` ([`Error::Memory`]).
pub(super) fn read_bounded(path: &Path, ceiling: u64) -> Result<Option<Vec<u8>>> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path.display(), e)),
    };
    let len = file.metadata().map_err(|e| Error::io(path.display(), e))?.len();
    if len > ceiling {
        return Err(Error::Memory(format!(
            "{}: {len} bytes, more than the metadata ceiling of {ceiling} ({})",
            path.display(),
            crate::limits::METADATA_CEILING_SETTING
        )));
    }
    let mut bytes = Vec::new();
    crate::error::try_reserve(&mut bytes, len as usize)?;
    // At most the ceiling, should the file grow meanwhile.
    file.take(ceiling + 1).read_to_end(&mut bytes).map_err(|e| Error::io(path.display(), e))?;
    if bytes.len() as u64 > ceiling {
        return Err(Error::Memory(format!("{}: longer than the metadata ceiling of {ceiling}", path.display())));
    }
    Ok(Some(bytes))
}
