//! Filesystem store (v3 "file system store" spec): key `a/b` is the file `<root>/a/b`.
//!
//! Writes are atomic, so a crash leaves the old value or the new one. On Linux a value is first written
//! to an unnamed file in the destination directory (`O_TMPFILE`); when the key has no file yet, that
//! file is then given the key's name (`linkat`), and a killed writer leaves nothing behind. Otherwise
//! the value goes to a named temporary file in that directory, which is then renamed over the key's
//! file. A writer holding the key's lock ([`Store::set_parts_locked`]) uses the fixed temporary name
//! `.<name>.zarrtmp`, so what a killed writer left there is replaced by the key's next writer; other
//! writes use unique temporary names `.<name>.<pid>.<n>.tmp`. Temporary files and an array's lock
//! file `.zarr.lock` are never listed as keys (a group has no lock file: its metadata document is
//! locked itself, see [`super::lock`]). With `ZARR_FSYNC=1`
//! in the environment the file and its directory are also flushed to disk before and after the rename.
//!
//! Keys never leave the root ([`validate_key`]), but symbolic links inside the root are followed (a
//! chunk file or directory may link to another disk). A dangling link, and a key whose file is not a
//! regular file (directory, FIFO, socket, device), is an [`Error::Io`] when read; a FIFO never blocks.
//! Writing a key whose file is a link replaces the link with a regular file (the target is untouched).

use super::lock::FileLock;
use super::{check_range, validate_key, ByteSource, DirListing, LockRange, ReadLimit, Store, StoreLock};
use crate::error::{Error, Result};
use std::fs::{self, File, OpenOptions};
use std::io::{IoSlice, Read, Write};
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A store rooted at a directory.
#[derive(Debug)]
pub struct FilesystemStore {
    root: PathBuf,
    fsync: bool,
    bytes_read: AtomicU64,
    /// Set when `O_TMPFILE` turned out not to work here: every write then takes the named route.
    no_tmpfile: std::sync::atomic::AtomicBool,
}

impl FilesystemStore {
    /// A store rooted at `root` (which need not exist yet).
    pub fn new(root: impl Into<PathBuf>) -> FilesystemStore {
        let fsync = std::env::var("ZARR_FSYNC").map(|v| v == "1" || v.eq_ignore_ascii_case("true")).unwrap_or(false);
        FilesystemStore { root: root.into(), fsync, bytes_read: AtomicU64::new(0), no_tmpfile: Default::default() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path_of(&self, key: &str) -> Result<PathBuf> {
        validate_key(key)?;
        Ok(self.root.join(key))
    }

    fn count(&self, n: usize) {
        self.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// The path of `key` and the fixed temporary name writers holding its lock use.
    fn locked_temp(&self, key: &str) -> Result<(PathBuf, PathBuf)> {
        let path = self.path_of(key)?;
        let name = path.file_name().expect("validated key").to_string_lossy();
        let tmp = path.with_file_name(format!(".{name}{LOCKED_TEMP_SUFFIX}"));
        Ok((path, tmp))
    }

    /// The temporary name of a write of `key`: fixed (`.<name>.zarrtmp`) when the caller holds `key`'s
    /// lock, replacing what a killed writer left; otherwise unique (`.<name>.<pid>.<n>.tmp`).
    fn temp_name(&self, key: &str, locked: bool) -> Result<(PathBuf, PathBuf)> {
        if locked {
            return self.locked_temp(key);
        }
        let path = self.path_of(key)?;
        let name = path.file_name().expect("validated key").to_string_lossy();
        let tmp = path.with_file_name(format!(
            ".{name}.{}.{}.tmp",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        Ok((path, tmp))
    }

    /// Writes `parts` as the value of `key`, atomically: readers see the old value or the new one.
    ///
    /// On Linux the value is written to an unnamed file in the key's directory (`O_TMPFILE`), which is
    /// then given the key's name (`linkat`) when the key has no file yet: no temporary name is created,
    /// renamed or left behind by a killed writer. A key that has a file gets the named temporary file of
    /// [`Self::temp_name`], renamed over the old one. File systems without `O_TMPFILE` (and a system
    /// without `/proc`) take the named route for every write.
    fn write_atomic(&self, key: &str, parts: &[&[u8]], locked: bool) -> Result<()> {
        #[cfg(target_os = "linux")]
        if !self.no_tmpfile.load(Ordering::Relaxed) {
            if let Some(done) = self.write_unnamed(key, parts, locked) {
                return done;
            }
        }
        self.write_via_temp(key, parts, locked)
    }

    /// The `O_TMPFILE` route of [`Self::write_atomic`]. `None`: the route is not open here (no
    /// `O_TMPFILE` on this file system, or no `/proc`; then never again for this store), or the key's
    /// directory went away before the link. Nothing was stored; the caller takes the named route.
    #[cfg(target_os = "linux")]
    fn write_unnamed(&self, key: &str, parts: &[&[u8]], locked: bool) -> Option<Result<()>> {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::io::AsRawFd;
        let path = match self.path_of(key) {
            Ok(p) => p,
            Err(e) => return Some(Err(e)),
        };
        let dir = path.parent().expect("a key has a parent directory");
        let open = || OpenOptions::new().write(true).custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC).open(dir);
        // Directories are created only when missing (no mkdir per write in the common case).
        let opened = match open() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => fs::create_dir_all(dir).and_then(|_| open()),
            other => other,
        };
        let mut f = match opened {
            Ok(f) => f,
            Err(e) if tmpfile_unsupported(&e) => {
                self.no_tmpfile.store(true, Ordering::Relaxed);
                return None;
            }
            Err(e) => return Some(Err(Error::io(path.display(), e))),
        };
        let written = write_all_vectored(&mut f, parts).and_then(|_| if self.fsync { f.sync_all() } else { Ok(()) });
        if let Err(e) = written {
            // The unnamed file goes with its descriptor: nothing is left behind.
            return Some(Err(Error::io(path.display(), e)));
        }
        let proc_path = std::ffi::CString::new(format!("/proc/self/fd/{}", f.as_raw_fd())).expect("no NUL");
        let link = |to: &Path| -> std::io::Result<()> {
            let to = std::ffi::CString::new(to.as_os_str().as_bytes())
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
            // SAFETY: both paths are NUL-terminated strings that outlive the call.
            let rc = unsafe {
                libc::linkat(libc::AT_FDCWD, proc_path.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_SYMLINK_FOLLOW)
            };
            if rc == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        };
        let sync_dir = || if self.fsync { File::open(dir)?.sync_all() } else { Ok(()) };
        match link(&path) {
            Ok(()) => return Some(sync_dir().map_err(|e| Error::io(path.display(), e))),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !Path::new("/proc/self/fd").is_dir() => {
                self.no_tmpfile.store(true, Ordering::Relaxed);
                return None;
            }
            Err(e) => return Some(Err(Error::io(path.display(), e))),
        }
        // The key has a file: name the new one, then rename it over the old one.
        let tmp = match self.temp_name(key, locked) {
            Ok((_, tmp)) => tmp,
            Err(e) => return Some(Err(e)),
        };
        let replace = || -> std::io::Result<()> {
            match link(&tmp) {
                // What a killed writer left under the fixed name (held under the key's lock), or under a
                // unique name of a dead process with this process's id.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    fs::remove_file(&tmp)?;
                    link(&tmp)?;
                }
                other => other?,
            }
            drop(f);
            rename_over(&tmp, &path)?;
            sync_dir()
        };
        Some(replace().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            Error::io(path.display(), e)
        }))
    }

    /// Writes `parts` to a temporary file beside `key`'s file and renames it over that file (the route
    /// of [`Self::write_atomic`] without `O_TMPFILE`; names: [`Self::temp_name`]).
    fn write_via_temp(&self, key: &str, parts: &[&[u8]], locked: bool) -> Result<()> {
        let (path, tmp) = self.temp_name(key, locked)?;
        let dir = path.parent().expect("a key has a parent directory");
        let write = || -> std::io::Result<()> {
            let open = || {
                let mut o = OpenOptions::new();
                o.write(true);
                if locked {
                    o.create(true).truncate(true);
                } else {
                    o.create_new(true);
                }
                o.open(&tmp)
            };
            // Directories are created only when missing (no mkdir per write in the common case).
            let mut f = match open() {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    fs::create_dir_all(dir)?;
                    open()?
                }
                other => other?,
            };
            write_all_vectored(&mut f, parts)?;
            if self.fsync {
                f.sync_all()?;
            }
            drop(f);
            rename_over(&tmp, &path)?;
            if self.fsync {
                File::open(dir)?.sync_all()?;
            }
            Ok(())
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            Error::io(path.display(), e)
        })
    }
}

/// Renames `tmp` over `path`. The file being replaced is kept open across the rename so that it is
/// freed on the closing thread, not inside the rename (deferred_close.rs); it is opened without
/// following a symbolic link, and never blocking (FIFO).
fn rename_over(tmp: &Path, path: &Path) -> std::io::Result<()> {
    let replaced = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).ok();
    fs::rename(tmp, path)?;
    if let Some(old) = replaced {
        super::deferred_close::close_later(old);
    }
    Ok(())
}

/// Whether opening with `O_TMPFILE` failed because the kernel or the file system lacks it.
#[cfg(target_os = "linux")]
fn tmpfile_unsupported(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL))
}

/// Writes every byte of `parts` in order, in as few `writev` calls as the kernel allows (a shard laid
/// out again is dozens of parts: one call instead of one per part).
fn write_all_vectored(f: &mut File, parts: &[&[u8]]) -> std::io::Result<()> {
    /// Linux's IOV_MAX.
    const MAX_SLICES: usize = 1024;
    let mut slices: Vec<IoSlice> = parts.iter().filter(|p| !p.is_empty()).map(|p| IoSlice::new(p)).collect();
    let mut rest = &mut slices[..];
    while !rest.is_empty() {
        let n = rest.len().min(MAX_SLICES);
        match f.write_vectored(&rest[..n]) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(written) => IoSlice::advance_slices(&mut rest, written),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Name of the lock file in every node directory (see [`super::lock`]).
pub const LOCK_FILE: &str = ".zarr.lock";

/// Suffix of the fixed temporary name of a write under lock: `.<name>.zarrtmp`.
pub const LOCKED_TEMP_SUFFIX: &str = ".zarrtmp";

/// Whether a file name is the store's own (the lock file, a temporary value), never a key.
pub fn is_internal_name(name: &str) -> bool {
    name == LOCK_FILE || (name.starts_with('.') && (name.ends_with(LOCKED_TEMP_SUFFIX) || name.ends_with(".tmp")))
}

struct FileSource<'a> {
    file: File,
    len: u64,
    key: String,
    store: &'a FilesystemStore,
}

impl ByteSource for FileSource<'_> {
    fn len(&self) -> u64 {
        self.len
    }
    fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_range(offset, buf.len() as u64, self.len).map_err(|e| e.context(&self.key))?;
        self.file.read_exact_at(buf, offset).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Error::Codec(format!("{}: value shrank while being read", self.key))
            } else {
                Error::io(&self.key, e)
            }
        })?;
        self.store.count(buf.len());
        Ok(())
    }
}

/// Opens the file of `key` for reading: `None` when there is no value (no file, or a path through a
/// file). Symbolic links are followed; a dangling link is an error, not an absent value (a link whose
/// target went away is damage, not a chunk that was never written). Anything but a regular file (a
/// directory, FIFO, socket, device) is an error: the file is opened with `O_NONBLOCK`, so that a FIFO
/// without a writer cannot block the open, and its type checked before a byte is read (`O_NONBLOCK`
/// has no effect on reads of regular files). Returns the file and its size.
fn open_value(path: &Path, key: &str) -> Result<Option<(File, u64)>> {
    let file = match OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match fs::read_link(path) {
                Ok(target) => Err(Error::Io(format!(
                    "{}: dangling symbolic link (to {})",
                    path.display(),
                    target.display()
                ))),
                Err(_) => Ok(None),
            };
        }
        // A path through a file (`a/b` where `a` is a file): no value there.
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(None),
        Err(e) => return Err(Error::io(path.display(), e)),
    };
    let meta = file.metadata().map_err(|e| Error::io(path.display(), e))?;
    let ft = meta.file_type();
    if !ft.is_file() {
        let kind = if ft.is_dir() {
            "a directory"
        } else if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_socket() {
            "a socket"
        } else if ft.is_char_device() || ft.is_block_device() {
            "a device"
        } else {
            "of an unknown type"
        };
        return Err(Error::Io(format!("{}: not a regular file ({kind}) where the value of key '{key}' should be", path.display())));
    }
    Ok(Some((file, meta.len())))
}

impl Store for FilesystemStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let mut buf = Vec::new();
        Ok(if self.get_into(key, &mut buf, ReadLimit::none())? { Some(buf) } else { None })
    }

    /// The file's size is checked against `limit` before a byte is read (a sparse file of terabytes
    /// costs nothing), and the read stops one byte past the limit (a file growing meanwhile).
    fn get_into(&self, key: &str, buf: &mut Vec<u8>, limit: ReadLimit) -> Result<bool> {
        let path = self.path_of(key)?;
        let Some((f, size)) = open_value(&path, key)? else { return Ok(false) };
        limit.check(&path.display().to_string(), size)?;
        buf.clear();
        let size = usize::try_from(size).map_err(|_| crate::error::alloc_failed(usize::MAX))?;
        crate::error::try_reserve(buf, size).map_err(|e| e.context(path.display()))?;
        f.take(limit.bytes.saturating_add(1)).read_to_end(buf).map_err(|e| Error::io(key, e))?;
        if buf.len() as u64 > limit.bytes {
            return Err(limit.exceeded(&path.display().to_string(), None));
        }
        self.count(buf.len());
        Ok(true)
    }

    fn open(&self, key: &str) -> Result<Option<Box<dyn ByteSource + '_>>> {
        let path = self.path_of(key)?;
        let Some((file, len)) = open_value(&path, key)? else { return Ok(None) };
        Ok(Some(Box::new(FileSource { file, len, key: key.to_string(), store: self })))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.set_parts(key, &[value])
    }

    fn set_parts(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        self.write_atomic(key, parts, false)
    }

    fn lock(&self, node_prefix: &str, ranges: &[LockRange]) -> Result<StoreLock> {
        if !node_prefix.is_empty() {
            let p = node_prefix.strip_suffix('/').ok_or_else(|| {
                Error::InvalidArgument(format!("node prefix '{node_prefix}' must end with '/'"))
            })?;
            validate_key(p)?;
        }
        let path = self.root.join(node_prefix).join(LOCK_FILE);
        Ok(StoreLock::new(FileLock::acquire(&path, ranges)?))
    }

    fn lock_group_document(&self, _node_prefix: &str, document_key: &str) -> Result<StoreLock> {
        // No lock file in a group's directory (readers would list it as a child): the document itself.
        Ok(StoreLock::new(FileLock::acquire_document(&self.path_of(document_key)?)?))
    }

    fn set_parts_locked(&self, key: &str, parts: &[&[u8]], _lock: &StoreLock) -> Result<()> {
        self.write_atomic(key, parts, true)
    }

    fn delete_locked(&self, key: &str, _lock: &StoreLock) -> Result<()> {
        self.delete(key)?;
        // A killed writer's temporary value of the key, if any.
        let (_, tmp) = self.locked_temp(key)?;
        match fs::remove_file(&tmp) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) => Ok(()),
            Err(e) => Err(Error::io(tmp.display(), e)),
        }
    }

    fn delete(&self, key: &str) -> Result<()> {
        let path = self.path_of(key)?;
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(path.display(), e)),
        }
    }

    fn rename_prefix(&self, from: &str, to: &str) -> Result<bool> {
        let (Some(f), Some(t)) = (from.strip_suffix('/'), to.strip_suffix('/')) else {
            return Err(Error::InvalidArgument(format!("cannot rename the store root ('{from}' to '{to}')")));
        };
        let (src, dst) = (self.path_of(f)?, self.path_of(t)?);
        // One rename(2) of the node's directory: atomic within the filesystem.
        fs::rename(&src, &dst).map_err(|e| Error::io(format!("renaming {} to {}", src.display(), dst.display()), e))?;
        Ok(true)
    }

    fn remove_empty_prefix(&self, prefix: &str) -> Result<()> {
        let Some(p) = prefix.strip_suffix('/') else { return Ok(()) };
        let path = self.path_of(p)?;
        // What the store itself keeps there (an array's lock file, a killed writer's temporary files)
        // goes with the directory; it is never listed as a key.
        if let Ok(entries) = fs::read_dir(&path) {
            for e in entries.flatten() {
                if e.file_name().to_str().is_some_and(is_internal_name) && e.file_type().is_ok_and(|t| t.is_file()) {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
        match fs::remove_dir(&path) {
            Ok(()) => Ok(()),
            // Absent, or not empty (a file another writer put there meanwhile): left as it is.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.kind() == std::io::ErrorKind::DirectoryNotEmpty => Ok(()),
            Err(e) => Err(Error::io(path.display(), e)),
        }
    }

    fn exists(&self, key: &str) -> Result<bool> {
        let path = self.path_of(key)?;
        Ok(path.is_file())
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let dir = if prefix.is_empty() {
            self.root.clone()
        } else {
            let p = prefix.strip_suffix('/').ok_or_else(|| {
                Error::InvalidArgument(format!("list prefix '{prefix}' must end with '/'"))
            })?;
            self.path_of(p)?
        };
        let mut out = DirListing::default();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(out),
            Err(e) => return Err(Error::io(dir.display(), e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(dir.display(), e))?;
            let Ok(name) = entry.file_name().into_string() else { continue };
            let ft = entry.file_type().map_err(|e| Error::io(entry.path().display(), e))?;
            let is_dir = ft.is_dir() || (ft.is_symlink() && entry.path().is_dir());
            if is_dir {
                out.prefixes.push(name);
            } else if !is_internal_name(&name) {
                out.keys.push(name);
            }
        }
        Ok(out.sorted())
    }

    fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    fn location(&self, key: &str) -> String {
        self.root.join(key).display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("zarr-fs-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn set_get_range_delete_list() {
        let root = tmpdir("basic");
        let s = FilesystemStore::new(&root);
        assert_eq!(s.get("a/b").unwrap(), None);
        s.set("a/b", b"hello").unwrap();
        s.set("a/c/d", b"x").unwrap();
        assert_eq!(s.get("a/b").unwrap().unwrap(), b"hello");
        let src = s.open("a/b").unwrap().unwrap();
        assert_eq!(src.read_range(1, 3).unwrap(), b"ell");
        assert!(matches!(src.read_range(3, 5), Err(Error::Codec(_))));
        drop(src);
        s.set("a/b", b"bye").unwrap();
        assert_eq!(s.get("a/b").unwrap().unwrap(), b"bye");
        let l = s.list_dir("a/").unwrap();
        assert_eq!(l.keys, ["b"]);
        assert_eq!(l.prefixes, ["c"]);
        assert!(s.exists("a/b").unwrap());
        s.delete("a/b").unwrap();
        s.delete("a/b").unwrap();
        assert!(!s.exists("a/b").unwrap());
        assert!(matches!(s.open("a/c"), Err(Error::Io(_))), "a directory is not a value");
        assert!(s.open("a/c/d/e").unwrap().is_none(), "a path through a file is no value");
        assert!(s.bytes_read() >= 8);
        // no temporary files are left behind
        assert_eq!(s.list_dir("a/").unwrap().keys, Vec::<String>::new());
        fs::remove_dir_all(root).unwrap();
    }

    /// The names in `dir` (not recursive), sorted: temporary files included.
    fn raw_names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        v.sort();
        v
    }

    #[test]
    fn both_write_routes_store_the_same_files_and_leave_no_temporaries() {
        use std::os::unix::fs::PermissionsExt;
        let mut modes = Vec::new();
        for unnamed in [true, false] {
            let root = tmpdir(if unnamed { "route-unnamed" } else { "route-named" });
            let s = FilesystemStore::new(&root);
            s.no_tmpfile.store(!unnamed, Ordering::Relaxed);
            // A new key (and its directories), then the same key replaced.
            s.set("g/c/0", b"first").unwrap();
            assert_eq!(s.get("g/c/0").unwrap().unwrap(), b"first");
            s.set_parts("g/c/0", &[b"sec", b"", b"ond"]).unwrap();
            assert_eq!(s.get("g/c/0").unwrap().unwrap(), b"second");
            modes.push(fs::metadata(root.join("g/c/0")).unwrap().permissions().mode());
            // Under the key's lock: a killed writer's leftover under the fixed name is replaced when
            // the key has a file, and stays out of the listing either way.
            let lock = s.lock("g/", &[LockRange { start: 1, len: 1, exclusive: true }]).unwrap();
            fs::write(root.join("g/c/.0.zarrtmp"), b"torn").unwrap();
            s.set_parts_locked("g/c/0", &[b"third"], &lock).unwrap();
            s.set_parts_locked("g/c/1", &[b"new"], &lock).unwrap();
            drop(lock);
            assert_eq!(s.get("g/c/0").unwrap().unwrap(), b"third");
            assert_eq!(s.get("g/c/1").unwrap().unwrap(), b"new");
            assert_eq!(raw_names(&root.join("g/c")), ["0", "1"]);
            // A symbolic link at the key is replaced by a regular file; its target is untouched.
            fs::write(root.join("target"), b"outside").unwrap();
            std::os::unix::fs::symlink(root.join("target"), root.join("g/c/2")).unwrap();
            s.set("g/c/2", b"inside").unwrap();
            assert!(fs::symlink_metadata(root.join("g/c/2")).unwrap().file_type().is_file());
            assert_eq!(fs::read(root.join("target")).unwrap(), b"outside");
            // A directory at the key: an I/O error, and nothing left behind.
            fs::create_dir_all(root.join("g/c/3/x")).unwrap();
            assert!(matches!(s.set("g/c/3", b"v"), Err(Error::Io(_))));
            assert_eq!(raw_names(&root.join("g/c")), ["0", "1", "2", "3"]);
            // Writers racing for one new key: each write is whole, one wins, no temporary survives.
            std::thread::scope(|sc| {
                for t in 0..4u8 {
                    let s = &s;
                    sc.spawn(move || {
                        for i in 0..50u8 {
                            s.set(&format!("g/r/{i}"), &[t; 4096]).unwrap();
                        }
                    });
                }
            });
            for i in 0..50 {
                let v = s.get(&format!("g/r/{i}")).unwrap().unwrap();
                assert!(v.len() == 4096 && v.iter().all(|&b| b == v[0]), "key {i} torn");
            }
            assert_eq!(raw_names(&root.join("g/r")).len(), 50);
            // The unnamed route is taken wherever this file system offers O_TMPFILE.
            let dir = std::ffi::CString::new(root.to_str().unwrap()).unwrap();
            // SAFETY: a NUL-terminated path; the descriptor is closed right away.
            let fd = unsafe { libc::open(dir.as_ptr(), libc::O_TMPFILE | libc::O_WRONLY, 0o600) };
            if fd >= 0 {
                unsafe { libc::close(fd) };
            }
            assert_eq!(s.no_tmpfile.load(Ordering::Relaxed), !unnamed || fd < 0, "route taken");
            fs::remove_dir_all(root).unwrap();
        }
        assert_eq!(modes[0], modes[1], "both routes create files with the same permissions");
    }

    #[test]
    fn escaping_keys_rejected() {
        let s = FilesystemStore::new(tmpdir("escape"));
        assert!(matches!(s.set("../evil", b"x"), Err(Error::InvalidArgument(_))));
        assert!(matches!(s.get("/etc/passwd"), Err(Error::InvalidArgument(_))));
        assert!(s.list_dir("../").is_err());
    }
}
