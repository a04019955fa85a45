//! Read-only store over a zip file: zarr-python's `ZipStore` layout, where every store key is a zip
//! member name at the archive root (`zarr.json`, `a/c/0/0`). Locations: `zip://PATH.zip`, or
//! `zip://PATH.zip!/inner/node` for a node inside (the path ends at the first `!/`); see
//! [`open_location`].
//!
//! Stored (uncompressed) members, zarr-python's default, are read by byte range straight from the
//! file (ranged reads of shard indexes and inner chunks); deflated members are inflated whole on the
//! first read of each open, never past their recorded size, which whole-value reads check against the
//! reader's limit first (docs/limits.md). The central directory is read once at open; a member's local
//! header is read on its first use.
//! Every write is [`Error::ReadOnly`].

use super::{check_range, validate_key, ByteSource, CountedSource, DirListing, ReadLimit, Store};
use crate::error::{try_alloc, Error, Result};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use zip::{CompressionMethod, ZipArchive};

/// Where and how a member's bytes are stored, read from its headers on first use.
#[derive(Debug, Clone, Copy)]
struct MemberInfo {
    stored: bool,
    data_start: u64,
    size: u64,
}

#[derive(Debug)]
struct Member {
    index: usize,
    info: OnceLock<MemberInfo>,
}

/// A zip file opened read-only as a store.
#[derive(Debug)]
pub struct ZipStore {
    path: PathBuf,
    /// Positioned reads of stored members (thread-safe, no shared cursor).
    file: File,
    file_len: u64,
    /// The parsed archive, for local headers and inflating deflated members.
    archive: Mutex<ZipArchive<Budgeted>>,
    /// Member name -> entry; directory entries and names that are not valid keys are left out.
    members: BTreeMap<String, Member>,
    bytes_read: AtomicU64,
}

fn zip_err(path: &Path, e: zip::result::ZipError) -> Error {
    match e {
        zip::result::ZipError::Io(io) => Error::io(path.display(), io),
        e => Error::Io(format!("{}: not a readable zip file: {e}", path.display())),
    }
}

/// The store named by the part of a `zip://` location after the scheme: `PATH` or `PATH!/node/path`.
pub fn open_location(rest: &str) -> Result<Arc<dyn Store>> {
    let (file, inner) = match rest.split_once("!/") {
        Some((file, inner)) => (file, inner),
        None => (rest, ""),
    };
    if file.is_empty() {
        return Err(Error::InvalidArgument(format!("zip location 'zip://{rest}' names no file")));
    }
    let store: Arc<dyn Store> = Arc::new(ZipStore::open(Path::new(file))?);
    super::prefix::PrefixStore::wrap(store, inner)
}

/// The most bytes after the start of the end-of-central-directory record: the record (22 bytes) and a
/// comment of at most 65535 bytes. The record lies in this many bytes at the end of a zip file.
const EOCD_WINDOW: u64 = 22 + 65535;

/// Reads of the archive while its central directory is parsed are limited to this many bytes beyond
/// the central directory itself (end records, zip64 records, slack).
const OPEN_SLACK: u64 = EOCD_WINDOW + (1 << 20);

fn le16(b: &[u8], at: usize) -> u64 {
    u16::from_le_bytes([b[at], b[at + 1]]) as u64
}
fn le32(b: &[u8], at: usize) -> u64 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes")) as u64
}
fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Finds the end-of-central-directory record in the last [`EOCD_WINDOW`] bytes of `file` (`len` bytes
/// long; the format puts it there) and returns the size of the central directory it describes (from
/// the zip64 end record where there is one). A file without one fails after reading 64 KiB, however
/// large it is.
fn central_directory_size(file: &File, len: u64, path: &Path) -> Result<u64> {
    let not_zip = |why: &str| Error::Io(format!("{}: not a readable zip file: {why}", path.display()));
    let start = len.saturating_sub(EOCD_WINDOW);
    let mut tail = vec![0u8; (len - start) as usize];
    file.read_exact_at(&mut tail, start).map_err(|e| Error::io(path.display(), e))?;
    let at = (0..tail.len().saturating_sub(21))
        .rev()
        .find(|&i| tail[i..i + 4] == *b"PK\x05\x06")
        .ok_or_else(|| not_zip("no end-of-central-directory record in its last 64 KiB"))?;
    let eocd = &tail[at..];
    let cd_size = le32(eocd, 12);
    let zip64 = le16(eocd, 10) == 0xFFFF || le32(eocd, 16) == 0xFFFF_FFFF || cd_size == 0xFFFF_FFFF;
    let eocd_offset = start + at as u64;
    let size = if zip64 && eocd_offset >= 20 {
        // The zip64 locator just before the record, and the zip64 end record it points to.
        let mut loc = [0u8; 20];
        file.read_exact_at(&mut loc, eocd_offset - 20).map_err(|e| Error::io(path.display(), e))?;
        let mut rec = [0u8; 56];
        if loc[..4] == *b"PK\x06\x07" && le64(&loc, 8) + 56 <= eocd_offset - 20 {
            file.read_exact_at(&mut rec, le64(&loc, 8)).map_err(|e| Error::io(path.display(), e))?;
        }
        if rec[..4] == *b"PK\x06\x06" {
            le64(&rec, 40)
        } else {
            cd_size
        }
    } else {
        cd_size
    };
    if size > len {
        return Err(not_zip("its central directory is larger than the file"));
    }
    Ok(size)
}

/// The archive's reader while its central directory is parsed: reads stop with an error once the
/// shared budget `left` is spent (then the store sets it to `u64::MAX`), so that end records pointing
/// nowhere cannot make the parser scan a huge (sparse) file for signatures.
#[derive(Debug)]
struct Budgeted {
    file: File,
    left: Arc<AtomicU64>,
}

impl Read for Budgeted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.left.load(Ordering::Relaxed);
        if left == 0 && !buf.is_empty() {
            return Err(std::io::Error::other("the zip end records point outside the central directory"));
        }
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let got = self.file.read(&mut buf[..n])?;
        if left != u64::MAX {
            self.left.fetch_sub(got as u64, Ordering::Relaxed);
        }
        Ok(got)
    }
}

impl std::io::Seek for Budgeted {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.file.seek(pos)
    }
}

impl ZipStore {
    /// Opens the zip file at `path` and reads its central directory. The file is opened without
    /// blocking (a FIFO is an error, not a hang) and must be a regular file; the end of its central
    /// directory is looked for in its last 64 KiB only, as the format allows.
    pub fn open(path: &Path) -> Result<ZipStore> {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| Error::io(path.display(), e))?;
        let meta = file.metadata().map_err(|e| Error::io(path.display(), e))?;
        if !meta.file_type().is_file() {
            let kind = match meta.file_type() {
                t if t.is_dir() => "a directory",
                t if t.is_fifo() => "a FIFO",
                t if t.is_socket() => "a socket",
                t if t.is_char_device() || t.is_block_device() => "a device",
                _ => "of an unknown type",
            };
            return Err(Error::Io(format!("{}: not a regular file ({kind}), so not a zip file", path.display())));
        }
        let file_len = meta.len();
        let cd_size = central_directory_size(&file, file_len, path)?;
        // The parser reads through a duplicate (it seeks; `file` is read by position only).
        let archive_file = file.try_clone().map_err(|e| Error::io(path.display(), e))?;
        let left = Arc::new(AtomicU64::new(cd_size.saturating_add(OPEN_SLACK)));
        let archive = ZipArchive::new(Budgeted { file: archive_file, left: left.clone() }).map_err(|e| zip_err(path, e))?;
        // Members are read later through the same reader, unlimited.
        left.store(u64::MAX, Ordering::Relaxed);
        let mut members = BTreeMap::new();
        for index in 0..archive.len() {
            let Some(name) = archive.name_for_index(index) else { continue };
            if name.ends_with('/') || validate_key(name).is_err() {
                continue;
            }
            // A name written twice (zarr-python's ZipStore appends on overwrite): the last one wins,
            // as in Python's zipfile.
            members.insert(name.to_string(), Member { index, info: OnceLock::new() });
        }
        Ok(ZipStore {
            path: path.to_path_buf(),
            file,
            file_len,
            archive: Mutex::new(archive),
            members,
            bytes_read: AtomicU64::new(0),
        })
    }

    fn info(&self, key: &str, m: &Member) -> Result<MemberInfo> {
        if let Some(info) = m.info.get() {
            return Ok(*info);
        }
        let mut archive = self.archive.lock().unwrap_or_else(|e| e.into_inner());
        let f = archive.by_index_raw(m.index).map_err(|e| zip_err(&self.path, e).context(self.location(key)))?;
        if f.encrypted() {
            return Err(Error::Unsupported(format!("{}: encrypted zip members are not supported", self.location(key))));
        }
        let info = match f.compression() {
            CompressionMethod::Stored => {
                if f.compressed_size() != f.size() {
                    return Err(Error::Io(format!("{}: stored member with differing sizes", self.location(key))));
                }
                MemberInfo { stored: true, data_start: f.data_start(), size: f.size() }
            }
            CompressionMethod::Deflated => MemberInfo { stored: false, data_start: f.data_start(), size: f.size() },
            other => {
                return Err(Error::Unsupported(format!(
                    "{}: zip compression method {other:?} (only stored and deflated are supported)",
                    self.location(key)
                )))
            }
        };
        // The stored bytes (a stored member's value, a deflated member's stream) must lie in the file:
        // a recorded compressed size past its end would also lift the bound `inflate` reserves under.
        check_range(info.data_start, f.compressed_size(), self.file_len).map_err(|_| {
            Error::Io(format!("{}: member data lies past the end of the zip file", self.location(key)))
        })?;
        Ok(*m.info.get_or_init(|| info))
    }

    /// Inflates the deflated member `m` whole (checked against its recorded size and CRC).
    fn inflate(&self, key: &str, m: &Member, size: u64) -> Result<Vec<u8>> {
        let mut archive = self.archive.lock().unwrap_or_else(|e| e.into_inner());
        let ctx = |e: Error| e.context(self.location(key));
        let f = archive.by_index(m.index).map_err(|e| ctx(zip_err(&self.path, e)))?;
        let mut out = Vec::new();
        // DEFLATE makes at most 1032 bytes per stored byte: a recorded size beyond what the stored
        // bytes can make (a 1 KB member recording 3 GiB) is not reserved; reading stops at it anyway.
        // The stored bytes are at most the file's (`info` checks the recorded compressed size).
        let most = f.compressed_size().min(self.file_len).saturating_mul(1032).saturating_add(1024);
        let cap = usize::try_from(size.min(most)).map_err(|_| ctx(crate::error::alloc_failed(usize::MAX)))?;
        crate::error::try_reserve(&mut out, cap).map_err(ctx)?;
        // Reading to the end makes the reader check the CRC; one byte more than recorded is an error.
        f.take(size + 1).read_to_end(&mut out).map_err(|e| ctx(Error::io("inflating", e)))?;
        if out.len() as u64 != size {
            return Err(ctx(Error::Codec(format!("zip member inflates to {} bytes, not the recorded {size}", out.len()))));
        }
        Ok(out)
    }

    fn read_stored(&self, key: &str, start: u64, buf: &mut [u8]) -> Result<()> {
        self.file.read_exact_at(buf, start).map_err(|e| Error::io(self.location(key), e))?;
        self.bytes_read.fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn read_only(&self, key: &str) -> Error {
        Error::ReadOnly(format!("{}: zip stores are read-only", self.location(key)))
    }
}

/// A stored member: byte ranges are read straight from the file.
struct StoredSource<'a> {
    store: &'a ZipStore,
    key: String,
    start: u64,
    len: u64,
}

impl ByteSource for StoredSource<'_> {
    fn len(&self) -> u64 {
        self.len
    }
    fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_range(offset, buf.len() as u64, self.len)?;
        self.store.read_stored(&self.key, self.start + offset, buf)
    }
}

/// A deflated member: inflated whole (up to its recorded size) on its first read.
struct DeflatedSource<'a> {
    store: &'a ZipStore,
    key: String,
    member: &'a Member,
    len: u64,
    data: OnceLock<Vec<u8>>,
}

impl ByteSource for DeflatedSource<'_> {
    fn len(&self) -> u64 {
        self.len
    }
    fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_range(offset, buf.len() as u64, self.len)?;
        let data = match self.data.get() {
            Some(d) => d,
            None => {
                let v = self.store.inflate(&self.key, self.member, self.len)?;
                self.data.get_or_init(|| v)
            }
        };
        CountedSource { data, counter: &self.store.bytes_read }.read_into(offset, buf)
    }
}

impl Store for ZipStore {
    fn ensure_writable(&self) -> Result<()> {
        Err(self.read_only(""))
    }
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.get_limited(key, ReadLimit::none())
    }

    /// The member's recorded size is checked against `limit` before anything is read or inflated, and
    /// a deflated member is inflated only up to its recorded size (one byte more is an error): a small
    /// member that inflates to gigabytes costs at most the limit.
    fn get_into(&self, key: &str, buf: &mut Vec<u8>, limit: ReadLimit) -> Result<bool> {
        validate_key(key)?;
        let Some(m) = self.members.get(key) else { return Ok(false) };
        let info = self.info(key, m)?;
        limit.check(&self.location(key), info.size)?;
        if info.stored {
            *buf = try_alloc(usize::try_from(info.size).map_err(|_| crate::error::alloc_failed(usize::MAX))?)?;
            self.read_stored(key, info.data_start, buf)?;
        } else {
            *buf = self.inflate(key, m, info.size)?;
            self.bytes_read.fetch_add(buf.len() as u64, Ordering::Relaxed);
        }
        Ok(true)
    }

    fn open(&self, key: &str) -> Result<Option<Box<dyn ByteSource + '_>>> {
        validate_key(key)?;
        let Some(m) = self.members.get(key) else { return Ok(None) };
        let info = self.info(key, m)?;
        Ok(Some(if info.stored {
            Box::new(StoredSource { store: self, key: key.to_string(), start: info.data_start, len: info.size })
        } else {
            // A deflated member, inflated whole on its first read: a reader checks its recorded
            // length first.
            Box::new(DeflatedSource { store: self, key: key.to_string(), member: m, len: info.size, data: OnceLock::new() })
        }))
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

    fn exists(&self, key: &str) -> Result<bool> {
        validate_key(key)?;
        Ok(self.members.contains_key(key))
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        Ok(DirListing::from_sorted_keys(prefix, self.members.range(prefix.to_string()..).map(|(k, _)| k.as_str())))
    }

    fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    fn location(&self, key: &str) -> String {
        format!("zip://{}!/{key}", self.path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use zip::write::SimpleFileOptions;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("zarr-zipstore-{}-{name}.zip", std::process::id()))
    }

    #[test]
    fn stored_and_deflated_members() {
        let path = temp("members");
        let mut w = zip::ZipWriter::new(File::create(&path).unwrap());
        let stored = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
        let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
        w.start_file("zarr.json", stored).unwrap();
        w.write_all(b"{\"zarr_format\": 3}").unwrap();
        w.add_directory("a/", stored).unwrap();
        w.start_file("a/c/0", stored).unwrap();
        w.write_all(&(0u8..200).collect::<Vec<_>>()).unwrap();
        w.start_file("a/c/1", deflated).unwrap();
        w.write_all(&[7u8; 5000]).unwrap();
        w.finish().unwrap();

        let s = ZipStore::open(&path).unwrap();
        assert_eq!(s.get("zarr.json").unwrap().unwrap(), b"{\"zarr_format\": 3}");
        let src = s.open("a/c/0").unwrap().unwrap();
        let before = s.bytes_read();
        assert_eq!(src.read_range(10, 3).unwrap(), [10, 11, 12]);
        assert_eq!(s.bytes_read() - before, 3, "a ranged read of a stored member reads just the range");
        assert!(src.read_range(199, 2).is_err());
        assert_eq!(s.get("a/c/1").unwrap().unwrap(), vec![7u8; 5000]);
        assert_eq!(s.open("a/c/1").unwrap().unwrap().read_range(4998, 2).unwrap(), [7, 7]);
        assert!(s.get("a/c/2").unwrap().is_none());
        assert!(s.exists("a/c/0").unwrap() && !s.exists("a").unwrap());
        let root = s.list_dir("").unwrap();
        assert_eq!((root.keys, root.prefixes), (vec!["zarr.json".to_string()], vec!["a".to_string()]));
        assert_eq!(s.list_dir("a/c/").unwrap().keys, ["0", "1"]);
        assert!(matches!(s.set("x", b""), Err(Error::ReadOnly(_))));
        assert!(matches!(s.delete("zarr.json"), Err(Error::ReadOnly(_))));

        let inner = open_location(&format!("{}!/a", path.display())).unwrap();
        assert_eq!(inner.get("c/0").unwrap().unwrap().len(), 200);
        std::fs::remove_file(&path).unwrap();
    }

    /// A deflated member whose central directory records a compressed size past the end of the file
    /// (and 2 GiB inflated) is an error before anything is reserved or inflated (found by the
    /// `zip_store` fuzz target under its allocation limit: the reservation bound, 1032 bytes per
    /// recorded compressed byte, was 2 GiB for a 2 KB file).
    #[test]
    fn deflated_member_past_the_end() {
        let path = temp("past-end");
        let mut w = zip::ZipWriter::new(File::create(&path).unwrap());
        let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
        w.start_file("c/0", deflated).unwrap();
        w.write_all(&[7u8; 5000]).unwrap();
        w.finish().unwrap();
        let mut z = std::fs::read(&path).unwrap();
        let cd = z.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
        z[cd + 20..cd + 24].copy_from_slice(&(32u32 << 20).to_le_bytes());
        z[cd + 24..cd + 28].copy_from_slice(&0x7e00_010cu32.to_le_bytes());
        std::fs::write(&path, &z).unwrap();

        let s = ZipStore::open(&path).unwrap();
        let past = |r: Result<()>| matches!(r, Err(Error::Io(m)) if m.contains("past the end of the zip file"));
        assert!(past(s.get("c/0").map(drop)), "{:?}", s.get("c/0"));
        assert!(past(s.open("c/0").map(drop)));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn bad_files() {
        assert!(matches!(open_location("/nonexistent/x.zip"), Err(Error::NotFound(_))));
        let path = temp("garbage");
        std::fs::write(&path, b"this is not a zip file at all").unwrap();
        assert!(matches!(ZipStore::open(&path), Err(Error::Io(_))));
        std::fs::remove_file(&path).unwrap();
        assert!(open_location("").is_err());
    }
}
