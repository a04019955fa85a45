//! Byte ranges of target files named by URL, read through libzarr's stores: what a reference store
//! (kerchunk references, [`super::reference`]) resolves a key to, and what any other store of
//! "virtual" chunks (chunks that are ranges of other files) can reuse.
//!
//! A target URL is an absolute local path, a path relative to a base directory (the reference file's),
//! a `file://` URI, or with the `remote` feature `s3://bucket/key` and `http(s)://host/path`, read with
//! the [`StoreOptions`] set for that scheme ([`RangeTargets::set_options`]). Any other scheme
//! (`memory://`, `zip://`, `reference://`, `gs://`, ...) is [`Error::Unsupported`].
//!
//! Each target is opened once and shared by every read of it: a local file keeps one open handle
//! (positioned reads, no shared cursor), a remote object its size and ETag, learnt by the first read
//! (one ranged GET); later reads are single ranged GETs conditional on that ETag, so an object
//! replaced in between is an error, never a mix of two versions. Every range is checked against the
//! target's size before a byte is read: a range past the end is [`Error::Codec`] naming the target and
//! the range; a local file that shrank under the reader is the same.

use super::options::StoreOptions;
use super::{check_range, Store};
use crate::error::{try_alloc, Error, Result};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Open targets kept at most; past this the table is emptied (handles are reopened on next use).
const MAX_OPEN_TARGETS: usize = 4096;

/// Remote ranges longer than this are checked against the object's size before their buffer is
/// allocated.
const CHECK_FIRST: u64 = 16 << 20;

/// One opened target.
enum Target {
    /// A local file: one handle shared by all reads.
    Local { file: File, len: u64, path: PathBuf },
    /// An object of a remote store; size and version learnt by the first read.
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    Remote { store: Arc<dyn Store>, key: String, url: String, meta: OnceLock<(u64, Option<String>)> },
}

/// Resolves target URLs to byte ranges (see the module documentation). Thread-safe.
pub struct RangeTargets {
    base: Option<PathBuf>,
    options: HashMap<String, StoreOptions>,
    targets: Mutex<HashMap<String, Arc<Target>>>,
    /// Remote stores by `scheme://authority`.
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
    servers: Mutex<HashMap<String, Arc<dyn Store>>>,
    bytes_read: AtomicU64,
}

impl std::fmt::Debug for RangeTargets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RangeTargets").field("base", &self.base).finish()
    }
}

/// The scheme of a URL (lowercase), or `None` for a plain path.
pub fn url_scheme(url: &str) -> Option<String> {
    let (scheme, _) = url.split_once("://")?;
    (!scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b)))
        .then(|| scheme.to_ascii_lowercase())
}

impl RangeTargets {
    /// Targets whose relative paths are taken relative to `base` (`None`: relative paths are refused).
    pub fn new(base: Option<PathBuf>) -> RangeTargets {
        RangeTargets {
            base,
            options: HashMap::new(),
            targets: Mutex::new(HashMap::new()),
            servers: Mutex::new(HashMap::new()),
            bytes_read: AtomicU64::new(0),
        }
    }

    /// Sets the store options of the targets of `scheme` (`s3`, `http`, `https`).
    pub fn set_options(&mut self, scheme: &str, options: StoreOptions) {
        self.options.insert(scheme.to_ascii_lowercase(), options);
    }

    /// Bytes delivered from targets so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    /// Checks that `url` names a target this resolver can read (scheme, form), without opening it.
    pub fn check_url(&self, url: &str) -> Result<()> {
        match url_scheme(url).as_deref() {
            None if url.is_empty() => Err(Error::InvalidArgument("empty target URL".into())),
            None if url.contains("://") => Err(Error::Unsupported(format!("target '{url}': malformed URL scheme"))),
            None | Some("file") => self.local_path(url).map(|_| ()),
            #[cfg(feature = "remote")]
            Some("s3" | "http" | "https") => split_remote(url).map(|_| ()),
            Some(s @ ("memory" | "zip" | "reference")) => Err(Error::Unsupported(format!(
                "target '{url}': the scheme '{s}' is not allowed for reference targets (local paths, file://, s3://, http(s)://)"
            ))),
            Some(s) => Err(Error::Unsupported(format!(
                "target '{url}': unknown URL scheme '{s}' (reference targets: local paths, file://, s3://, http(s)://{})",
                if cfg!(feature = "remote") { "" } else { "; remote schemes need the `remote` feature" }
            ))),
        }
    }

    fn local_path(&self, url: &str) -> Result<PathBuf> {
        let p = super::location::path_from_location(url)?;
        if p.is_absolute() {
            return Ok(p);
        }
        match &self.base {
            Some(b) => Ok(b.join(p)),
            None => Err(Error::InvalidArgument(format!("target '{url}': a relative path needs a base directory"))),
        }
    }

    fn target(&self, url: &str) -> Result<Arc<Target>> {
        if let Some(t) = self.targets.lock().unwrap_or_else(|e| e.into_inner()).get(url) {
            return Ok(t.clone());
        }
        self.check_url(url)?;
        let t = Arc::new(match url_scheme(url).as_deref() {
            None | Some("file") => {
                let path = self.local_path(url)?;
                let file = open_regular(&path)?;
                let len = file.metadata().map_err(|e| Error::io(path.display(), e))?.len();
                Target::Local { file, len, path }
            }
            #[cfg(feature = "remote")]
            Some(scheme) => {
                let (server, key) = split_remote(url)?;
                let store = self.server(scheme, &server)?;
                Target::Remote { store, key, url: url.to_string(), meta: OnceLock::new() }
            }
            #[cfg(not(feature = "remote"))]
            Some(_) => unreachable!("check_url refuses remote schemes without the feature"),
        });
        let mut targets = self.targets.lock().unwrap_or_else(|e| e.into_inner());
        if targets.len() >= MAX_OPEN_TARGETS {
            targets.clear();
        }
        Ok(targets.entry(url.to_string()).or_insert(t).clone())
    }

    #[cfg(feature = "remote")]
    fn server(&self, scheme: &str, server: &str) -> Result<Arc<dyn Store>> {
        let mut servers = self.servers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = servers.get(server) {
            return Ok(s.clone());
        }
        let none = StoreOptions::new();
        let o = self.options.get(scheme).unwrap_or(&none);
        let s: Arc<dyn Store> = match scheme {
            "s3" => Arc::new(super::object::ObjectStoreAdapter::s3(server, o)?),
            _ => Arc::new(super::object::ObjectStoreAdapter::http(server, o)?),
        };
        servers.insert(server.to_string(), s.clone());
        Ok(s)
    }

    /// The size of the target in bytes (opens it; a remote object: one HEAD the first time).
    pub fn len(&self, url: &str) -> Result<u64> {
        match &*self.target(url)? {
            Target::Local { len, .. } => Ok(*len),
            Target::Remote { store, key, url, meta } => {
                if let Some((len, _)) = meta.get() {
                    return Ok(*len);
                }
                let src = store.open(key)?.ok_or_else(|| Error::NotFound(format!("target {url} does not exist")))?;
                let (len, version) = (src.len(), src.version().map(str::to_string));
                Ok(meta.get_or_init(|| (len, version)).0)
            }
        }
    }

    /// The `len` bytes of `url` at `offset`.
    pub fn read(&self, url: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        let n = usize::try_from(len).map_err(|_| Error::Codec(format!("target {url}: a range of {len} bytes")))?;
        // Checked first where the size is known (a remote target's is learnt first for a large
        // range: one HEAD), so that a bad length allocates nothing.
        match &*self.target(url)? {
            Target::Local { len: size, path, .. } => past_end(check_range(offset, len, *size), path.display(), offset, len, *size)?,
            Target::Remote { .. } if len > CHECK_FIRST => {
                let size = self.len(url)?;
                past_end(check_range(offset, len, size), url, offset, len, size)?;
            }
            Target::Remote { .. } => {}
        }
        let mut buf = try_alloc(n)?;
        self.read_into(url, offset, &mut buf)?;
        Ok(buf)
    }

    /// Fills `buf` with the bytes of `url` at `offset..offset + buf.len()`.
    pub fn read_into(&self, url: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        let len = buf.len() as u64;
        match &*self.target(url)? {
            Target::Local { file, len: size, path } => {
                past_end(check_range(offset, len, *size), path.display(), offset, len, *size)?;
                file.read_exact_at(buf, offset).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::UnexpectedEof {
                        Error::Codec(format!(
                            "target {}: bytes {offset}..{} lie past the end of the file (it shrank since it was opened at {size} bytes)",
                            path.display(),
                            offset + len
                        ))
                    } else {
                        Error::io(path.display(), e)
                    }
                })?;
            }
            Target::Remote { store, key, url, meta } => {
                if let Some((size, version)) = meta.get() {
                    past_end(check_range(offset, len, *size), url, offset, len, *size)?;
                    match version {
                        Some(v) => store.open_version(key, *size, v)?.read_into(offset, buf)?,
                        None => self.read_hinted(store.as_ref(), key, url, offset, buf).map(|_| ())?,
                    }
                } else {
                    let (size, version) = self.read_hinted(store.as_ref(), key, url, offset, buf)?;
                    meta.get_or_init(|| (size, version));
                }
            }
        }
        self.bytes_read.fetch_add(len, Ordering::Relaxed);
        Ok(())
    }

    /// One ranged GET that also learns the object's size and version.
    fn read_hinted(&self, store: &dyn Store, key: &str, url: &str, offset: u64, buf: &mut [u8]) -> Result<(u64, Option<String>)> {
        let len = buf.len() as u64;
        let hint = super::OpenHint::Range(offset, offset.saturating_add(len));
        let src = store.open_hinted(key, hint)?.ok_or_else(|| Error::NotFound(format!("target {url} does not exist")))?;
        let size = src.len();
        past_end(check_range(offset, len, size), url, offset, len, size)?;
        src.read_into(offset, buf)?;
        Ok((size, src.version().map(str::to_string)))
    }
}

fn past_end(r: Result<()>, target: impl std::fmt::Display, offset: u64, len: u64, size: u64) -> Result<()> {
    r.map_err(|_| {
        Error::Codec(format!(
            "target {target}: bytes {offset}..{} lie past the end of the target ({size} bytes)",
            offset as u128 + len as u128
        ))
    })
}

/// Opens a local target for reading: a regular file only (a FIFO cannot block the open).
fn open_regular(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(format!("target {}", path.display()), e))?;
    let meta = file.metadata().map_err(|e| Error::io(path.display(), e))?;
    if !meta.is_file() {
        return Err(Error::Io(format!("target {}: not a regular file", path.display())));
    }
    Ok(file)
}

/// `scheme://authority/key` -> (`scheme://authority`, `key`).
#[cfg(feature = "remote")]
fn split_remote(url: &str) -> Result<(String, String)> {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
    let key = key.trim_start_matches('/');
    if authority.is_empty() || key.is_empty() {
        return Err(Error::InvalidArgument(format!("target '{url}': a remote target needs a host (bucket) and a path")));
    }
    if rest.contains(['?', '#']) {
        return Err(Error::Unsupported(format!("target '{url}': query strings and fragments are not supported")));
    }
    super::validate_key(key).map_err(|e| e.context(format!("target '{url}'")))?;
    Ok((format!("{}://{authority}", scheme.to_ascii_lowercase()), key.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_targets() {
        let dir = std::env::temp_dir().join(format!("zarr-range-target-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f.bin"), (0u8..100).collect::<Vec<_>>()).unwrap();
        let t = RangeTargets::new(Some(dir.clone()));
        assert_eq!(t.read("f.bin", 10, 3).unwrap(), [10, 11, 12]);
        let abs = dir.join("f.bin");
        assert_eq!(t.read(abs.to_str().unwrap(), 98, 2).unwrap(), [98, 99]);
        assert_eq!(t.read(&format!("file://{}", abs.display()), 0, 1).unwrap(), [0]);
        assert_eq!(t.len("f.bin").unwrap(), 100);
        let e = t.read("f.bin", 99, 2).unwrap_err();
        assert!(matches!(e, Error::Codec(_)) && e.message().contains("f.bin") && e.message().contains("99..101"), "{e}");
        assert!(matches!(t.read("f.bin", u64::MAX, 1u64 << 40), Err(Error::Codec(_))));
        assert!(matches!(t.read("missing.bin", 0, 1), Err(Error::NotFound(_))));
        assert!(matches!(t.read("memory://x/y", 0, 1), Err(Error::Unsupported(_))));
        assert!(matches!(t.read("gs://b/k", 0, 1), Err(Error::Unsupported(_))));
        assert!(matches!(t.read("reference:///x.json", 0, 1), Err(Error::Unsupported(_))));
        assert!(RangeTargets::new(None).read("f.bin", 0, 1).is_err());
        // A file that shrank after it was opened.
        std::fs::OpenOptions::new().write(true).open(dir.join("f.bin")).unwrap().set_len(50).unwrap();
        let e = t.read("f.bin", 60, 2).unwrap_err();
        assert!(matches!(e, Error::Codec(_)) && e.message().contains("shrank"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
