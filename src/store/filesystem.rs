//! Filesystem store (v3 "file system store" spec): key `a/b` is the file `<root>/a/b`.
//!
//! Writes are atomic, so a crash leaves the old value or the new one. On Linux a value is first written
//! to an unnamed file in the destination directory (`O_TMPFILE`); when the key has no file yet, that
//! file is then given the key's name (`linkat`), and a killed writer leaves nothing behind. Otherwise
//! the value goes to a named temporary file in that directory, which is then renamed over the key's
//! file. A value may also arrive in pieces ([`Store::stream_locked`]: a shard written while it is
//! encoded); the pieces go to the same file, which gets the key's name only when the value is
//! committed, and goes away if it never is. A writer holding the key's lock
//! ([`Store::set_parts_locked`], [`Store::stream_locked`]) uses the fixed temporary name
//! `.<name>.zarrtmp`, so what a killed writer left there is replaced by the key's next writer; other
//! writes use unique temporary names `.<name>.<pid>.<n>.tmp`. Temporary files and an array's lock
//! file `.zarr.lock` are never listed as keys (a group has no lock file: its metadata document is
//! locked itself, see [`super::lock`]). With `ZARR_FSYNC=1`
//! in the environment the file and its directory are also flushed to disk before and after the rename.
//!
//! Keys never leave the root ([`validate_key`]), but by default symbolic links inside the root are
//! followed by reads and writes (a chunk file or directory may link to another disk). A confined store
//! ([`FilesystemStore::with_confine`], store option `confine`, `ZARR_CONFINE=1`) resolves every path
//! below its root only ([`super::resolve`]): a link leading out is [`Error::Io`]. Deleting a tree
//! ([`Store::delete_tree`]) and moving one ([`Store::rename_prefix`]) never follow a link in any mode:
//! a link is removed or moved as a link, and a path through a linked directory is refused. A dangling
//! link, and a key whose file is not a regular file (directory, FIFO, socket, device), is an
//! [`Error::Io`] when read; a FIFO never blocks. Writing a key whose file is a link replaces the link
//! with a regular file (the target is untouched).

use super::lock::FileLock;
use super::resolve::{self, bytes, split_last, Resolve};
use super::{check_range, validate_key, ByteSource, DirListing, LockRange, ReadLimit, Store, StoreLock, ValueStream};
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{IoSlice, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A store rooted at a directory.
#[derive(Debug)]
pub struct FilesystemStore {
    root: PathBuf,
    fsync: bool,
    /// Every access stays below the root ([`Resolve::Beneath`]); otherwise reads and writes follow links.
    confine: bool,
    bytes_read: AtomicU64,
    /// Set when `O_TMPFILE` turned out not to work here: every write then takes the named route.
    no_tmpfile: std::sync::atomic::AtomicBool,
}

/// Whether the environment asks for confined filesystem stores (`ZARR_CONFINE=1` or `true`).
pub fn confine_from_env() -> bool {
    std::env::var("ZARR_CONFINE").map(|v| v == "1" || v.eq_ignore_ascii_case("true")).unwrap_or(false)
}

impl FilesystemStore {
    /// A store rooted at `root` (which need not exist yet), confined when the environment says so
    /// (`ZARR_CONFINE=1`, see [`FilesystemStore::with_confine`]).
    pub fn new(root: impl Into<PathBuf>) -> FilesystemStore {
        Self::with_confine(root, confine_from_env())
    }

    /// A store rooted at `root`. With `confine`, every access (read, write, listing, lock file, delete,
    /// move) stays below the root: a symbolic link leading out of it, and where the kernel lacks
    /// `openat2` any link, is refused with [`Error::Io`] (see [`super::resolve`]). Without it, reads
    /// and writes follow links wherever they lead (deleting and moving never follow a link).
    pub fn with_confine(root: impl Into<PathBuf>, confine: bool) -> FilesystemStore {
        let fsync = std::env::var("ZARR_FSYNC").map(|v| v == "1" || v.eq_ignore_ascii_case("true")).unwrap_or(false);
        FilesystemStore { root: root.into(), fsync, confine, bytes_read: AtomicU64::new(0), no_tmpfile: Default::default() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether every access stays below the root.
    pub fn confined(&self) -> bool {
        self.confine
    }

    /// How reads and writes resolve paths.
    fn how(&self) -> Resolve {
        if self.confine {
            Resolve::Beneath
        } else {
            Resolve::Follow
        }
    }

    fn path_of(&self, key: &str) -> Result<PathBuf> {
        validate_key(key)?;
        Ok(self.root.join(key))
    }

    fn count(&self, n: usize) {
        self.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// The error of a failed system call on `rel`: a refusal of the confined resolution (or of a
    /// link met while deleting or moving) says so, without naming anything outside the root.
    fn err(&self, rel: &str, e: std::io::Error) -> Error {
        let path = self.root.join(rel);
        if resolve::is_refusal(&e) {
            let why = if self.confine {
                "the path leaves the store root or passes through a symbolic link the confined store does not follow"
            } else {
                "the path passes through a symbolic link"
            };
            return Error::Io(format!("{}: refused: {why} ({e})", path.display()));
        }
        Error::io(path.display(), e)
    }

    /// The directory holding `key`'s file (`O_PATH`), created when missing, and the file's name.
    fn dir_for_write<'k>(&self, key: &'k str) -> Result<(OwnedFd, &'k str)> {
        validate_key(key)?;
        let (parent, name) = split_last(key);
        let dir = resolve::open_dir_creating(&self.root, parent, self.how()).map_err(|e| self.err(parent, e))?;
        Ok((dir, name))
    }

    /// The fixed temporary name writers holding `name`'s lock use.
    fn locked_temp(name: &str) -> String {
        format!(".{name}{LOCKED_TEMP_SUFFIX}")
    }

    /// The temporary name of a write of `name`: fixed (`.<name>.zarrtmp`) when the caller holds the
    /// key's lock, replacing what a killed writer left; otherwise unique (`.<name>.<pid>.<n>.tmp`).
    fn temp_name(name: &str, locked: bool) -> String {
        if locked {
            return Self::locked_temp(name);
        }
        format!(".{name}.{}.{}.tmp", std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed))
    }

    fn sync_dir(&self, dir: &OwnedFd) -> std::io::Result<()> {
        if self.fsync {
            File::from(resolve::openat(dir.as_raw_fd(), b".", libc::O_RDONLY | libc::O_DIRECTORY, 0)?).sync_all()?;
        }
        Ok(())
    }

    /// Writes `parts` as the value of `key`, atomically: readers see the old value or the new one
    /// ([`Self::begin_value`], then [`PendingValue::commit`]).
    fn write_atomic(&self, key: &str, parts: &[&[u8]], locked: bool) -> Result<()> {
        let mut value = self.begin_value(key, locked)?;
        value.write(parts)?;
        value.commit()
    }

    /// Starts a new value of `key`, written to a file beside the key's file and given the key's name
    /// by [`PendingValue::commit`].
    ///
    /// On Linux that file is unnamed (`O_TMPFILE`); at the commit it is given the key's name (`linkat`)
    /// when the key has no file yet, so no temporary name is created, renamed or left behind by a
    /// killed writer. A key that has a file gets the named temporary file of [`Self::temp_name`],
    /// renamed over the old one. File systems without `O_TMPFILE` (and a system without `/proc`) take
    /// the named route from the start. Every call after the directory was resolved is relative to it
    /// (`*at`), so a confined write stays in the directory resolved below the root.
    fn begin_value<'s>(&'s self, key: &str, locked: bool) -> Result<PendingValue<'s>> {
        let (dir, name) = self.dir_for_write(key)?;
        let d = dir.as_raw_fd();
        let (key, name) = (key.to_string(), name.to_string());
        #[cfg(target_os = "linux")]
        if !self.no_tmpfile.load(Ordering::Relaxed) {
            if !proc_fd_links() {
                self.no_tmpfile.store(true, Ordering::Relaxed);
            } else {
                match resolve::openat(d, b".", libc::O_TMPFILE | libc::O_WRONLY, 0o666) {
                    Ok(fd) => return Ok(PendingValue { store: self, dir, key, name, locked, file: File::from(fd), temp: None }),
                    Err(e) if tmpfile_unsupported(&e) => self.no_tmpfile.store(true, Ordering::Relaxed),
                    Err(e) => return Err(self.err(&key, e)),
                }
            }
        }
        // The named route. The temporary file is opened with `O_NOFOLLOW`: a link planted under its
        // name is replaced, never written through.
        let tmp = Self::temp_name(&name, locked);
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_NOFOLLOW | if locked { libc::O_TRUNC } else { libc::O_EXCL };
        let fd = match resolve::openat(d, bytes(&tmp), flags, 0o666) {
            Err(e) if locked && (e.raw_os_error() == Some(libc::ELOOP) || e.raw_os_error() == Some(libc::EISDIR)) => {
                resolve::unlink_at(d, bytes(&tmp), 0).and_then(|_| resolve::openat(d, bytes(&tmp), flags, 0o666))
            }
            other => other,
        };
        match fd {
            Ok(fd) => Ok(PendingValue { store: self, dir, key, name, locked, file: File::from(fd), temp: Some(tmp) }),
            Err(e) => {
                let _ = resolve::unlink_at(d, bytes(&tmp), 0);
                Err(self.err(&key, e))
            }
        }
    }

    /// Opens the file of `key` for reading (see [`open_value`]).
    fn open_value(&self, key: &str) -> Result<Option<(File, u64)>> {
        let path = self.path_of(key)?;
        if !self.confine {
            return open_value(&path, key);
        }
        let file = match resolve::open(&self.root, key, Resolve::Beneath, libc::O_RDONLY | libc::O_NONBLOCK, 0) {
            Ok(fd) => File::from(fd),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(None),
            Err(e) => return Err(self.err(key, e)),
        };
        check_value_file(file, &path, key).map(Some)
    }

    /// Walks to the directory holding `rel` without following any link (deleting, moving): the
    /// directory (`O_PATH`) and `rel`'s last component. `None` when a directory on the way is missing.
    fn parent_nofollow<'r>(&self, rel: &'r str, what: &str) -> Result<Option<(OwnedFd, &'r str)>> {
        let (parent, name) = split_last(rel);
        match resolve::open(&self.root, parent, Resolve::NoFollow, libc::O_PATH | libc::O_DIRECTORY, 0) {
            Ok(d) => Ok(Some((d, name))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) if resolve::is_refusal(&e) || e.raw_os_error() == Some(libc::ENOTDIR) => Err(Error::Io(format!(
                "{}: refused: {what} never follows a symbolic link, and a directory above '{rel}' is one (or not a directory)",
                self.root.join(parent).display()
            ))),
            Err(e) => Err(self.err(parent, e)),
        }
    }
}

/// Renames `tmp` over `name` in `dir`. The file being replaced is kept open across the rename so that
/// it is freed on the closing thread, not inside the rename (deferred_close.rs); it is opened without
/// following a symbolic link, and never blocking (FIFO).
fn rename_over(dir: std::os::fd::RawFd, tmp: &str, name: &str) -> std::io::Result<()> {
    let replaced = resolve::openat(dir, bytes(name), libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK, 0).ok();
    resolve::rename_at(dir, bytes(tmp), dir, bytes(name))?;
    if let Some(old) = replaced {
        super::deferred_close::close_later(File::from(old));
    }
    Ok(())
}

/// A value being written beside its key's file ([`FilesystemStore::begin_value`]): to an unnamed file
/// (`temp` `None`), or to the named temporary file `temp`, which is removed again when the value is
/// dropped uncommitted.
struct PendingValue<'s> {
    store: &'s FilesystemStore,
    /// The directory holding the key's file (`O_PATH`).
    dir: OwnedFd,
    key: String,
    /// The key's file name in `dir`.
    name: String,
    locked: bool,
    file: File,
    temp: Option<String>,
}

impl PendingValue<'_> {
    /// Appends `parts` to the value.
    fn write(&mut self, parts: &[&[u8]]) -> Result<()> {
        write_all_vectored(&mut self.file, parts).map_err(|e| self.store.err(&self.key, e))
    }

    /// Gives the value the key's name: an unnamed file is linked under it when the key has no file,
    /// otherwise linked under a temporary name and renamed over the old file; a named temporary file
    /// is renamed over it. With `ZARR_FSYNC` the file and the directory are flushed first and after.
    fn commit(mut self) -> Result<()> {
        let store = self.store;
        let d = self.dir.as_raw_fd();
        if store.fsync {
            self.file.sync_all().map_err(|e| store.err(&self.key, e))?;
        }
        if self.temp.is_none() {
            match resolve::link_open_file(self.file.as_raw_fd(), d, bytes(&self.name)) {
                Ok(()) => return store.sync_dir(&self.dir).map_err(|e| store.err(&self.key, e)),
                // The key has a file: name the new one, then rename it over the old one.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(store.err(&self.key, e)),
            }
            let tmp = FilesystemStore::temp_name(&self.name, self.locked);
            let linked = match resolve::link_open_file(self.file.as_raw_fd(), d, bytes(&tmp)) {
                // What a killed writer left under the fixed name (held under the key's lock), or under a
                // unique name of a dead process with this process's id.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => resolve::unlink_at(d, bytes(&tmp), 0)
                    .and_then(|_| resolve::link_open_file(self.file.as_raw_fd(), d, bytes(&tmp))),
                other => other,
            };
            // From here on the name is removed again if the commit fails (`Drop`).
            self.temp = Some(tmp);
            linked.map_err(|e| store.err(&self.key, e))?;
        }
        let tmp = self.temp.clone().expect("a named temporary file");
        rename_over(d, &tmp, &self.name).map_err(|e| store.err(&self.key, e))?;
        self.temp = None;
        store.sync_dir(&self.dir).map_err(|e| store.err(&self.key, e))
    }
}

impl Drop for PendingValue<'_> {
    fn drop(&mut self) {
        // Uncommitted (or a failed commit): the named temporary file goes; an unnamed one goes with its
        // descriptor.
        if let Some(tmp) = self.temp.take() {
            let _ = resolve::unlink_at(self.dir.as_raw_fd(), bytes(&tmp), 0);
        }
    }
}

impl super::ValueStream for PendingValue<'_> {
    fn write(&mut self, parts: &[&[u8]]) -> Result<()> {
        PendingValue::write(self, parts)
    }

    fn commit(self: Box<Self>) -> Result<()> {
        PendingValue::commit(*self)
    }
}

/// Whether an open file can be given a name through `/proc/self/fd` (`linkat` of an `O_TMPFILE`
/// file), checked once per process.
#[cfg(target_os = "linux")]
fn proc_fd_links() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| Path::new("/proc/self/fd").is_dir())
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
    use std::os::unix::fs::OpenOptionsExt;
    let file = match std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match std::fs::read_link(path) {
                Ok(_) => Err(Error::Io(format!("{}: dangling symbolic link", path.display()))),
                Err(_) => Ok(None),
            };
        }
        // A path through a file (`a/b` where `a` is a file): no value there.
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(None),
        Err(e) => return Err(Error::io(path.display(), e)),
    };
    check_value_file(file, path, key).map(Some)
}

/// `file` (opened for `key` at `path`) and its size, if it is a regular file; anything else is an
/// error naming what it is.
fn check_value_file(file: File, path: &Path, key: &str) -> Result<(File, u64)> {
    use std::os::unix::fs::FileTypeExt;
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
    Ok((file, meta.len()))
}

/// Removes everything in the directory open at `dir` (not `O_PATH`) without following a link: the
/// entries named in `first` go first (a node's documents, so that readers see the node disappear at
/// once), then every other entry that is not a directory (a link to a directory is removed as a
/// link), then each directory below, emptied the same way and removed. What another writer puts there
/// meanwhile may stay (the directory is then left, not an error).
fn remove_contents(dir: &OwnedFd, first: &[&str]) -> std::io::Result<()> {
    let d = dir.as_raw_fd();
    let entries = resolve::read_dir(d)?;
    let gone = |r: std::io::Result<()>| match r {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    };
    let (dirs, others): (Vec<_>, Vec<_>) = entries.into_iter().partition(|e| e.is_dir(d));
    for doc in first {
        if others.iter().any(|e| e.name == doc.as_bytes()) {
            gone(resolve::unlink_at(d, doc.as_bytes(), 0))?;
        }
    }
    for e in others.iter().filter(|e| !first.iter().any(|doc| e.name == doc.as_bytes())) {
        gone(resolve::unlink_at(d, &e.name, 0))?;
    }
    for e in dirs {
        let sub = match resolve::openat(d, &e.name, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0) {
            Ok(sub) => sub,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            // Replaced by a link (or a file) since it was listed: removed as what it is now.
            Err(err) if matches!(err.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)) => {
                gone(resolve::unlink_at(d, &e.name, 0))?;
                continue;
            }
            Err(err) => return Err(err),
        };
        remove_contents(&sub, first)?;
        drop(sub);
        remove_empty_dir(d, &e.name)?;
    }
    Ok(())
}

/// Removes the directory `name` in `dir` if it is empty; absent or not empty is no error.
fn remove_empty_dir(dir: std::os::fd::RawFd, name: &[u8]) -> std::io::Result<()> {
    match resolve::unlink_at(dir, name, libc::AT_REMOVEDIR) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound || matches!(e.raw_os_error(), Some(libc::ENOTEMPTY) | Some(libc::EEXIST)) => Ok(()),
        other => other,
    }
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
        let Some((f, size)) = self.open_value(key)? else { return Ok(false) };
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
        let Some((file, len)) = self.open_value(key)? else { return Ok(None) };
        Ok(Some(Box::new(FileSource { file, len, key: key.to_string(), store: self })))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.set_parts(key, &[value])
    }

    fn set_parts(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        self.write_atomic(key, parts, false)
    }

    fn lock(&self, node_prefix: &str, ranges: &[LockRange]) -> Result<StoreLock> {
        let dir = if node_prefix.is_empty() {
            ""
        } else {
            let p = node_prefix.strip_suffix('/').ok_or_else(|| {
                Error::InvalidArgument(format!("node prefix '{node_prefix}' must end with '/'"))
            })?;
            validate_key(p)?;
            p
        };
        let path = self.root.join(node_prefix).join(LOCK_FILE);
        if !self.confine {
            return Ok(StoreLock::new(FileLock::acquire(&path, ranges)?));
        }
        let d = resolve::open_dir_creating(&self.root, dir, Resolve::Beneath).map_err(|e| self.err(dir, e))?;
        let file = resolve::openat(d.as_raw_fd(), LOCK_FILE.as_bytes(), libc::O_RDWR | libc::O_CREAT | libc::O_NOFOLLOW, 0o666)
            .map_err(|e| self.err(&format!("{node_prefix}{LOCK_FILE}"), e))?;
        Ok(StoreLock::new(FileLock::lock_open_file(File::from(file), &path, ranges)?))
    }

    fn lock_group_document(&self, _node_prefix: &str, document_key: &str) -> Result<StoreLock> {
        // No lock file in a group's directory (readers would list it as a child): the document itself.
        let path = self.path_of(document_key)?;
        if !self.confine {
            return Ok(StoreLock::new(FileLock::acquire_document(&path)?));
        }
        let open = |flags: libc::c_int| {
            resolve::open(&self.root, document_key, Resolve::Beneath, flags | libc::O_NONBLOCK, 0).map(File::from)
        };
        Ok(StoreLock::new(FileLock::acquire_document_with(&path, &open)?))
    }

    fn set_parts_locked(&self, key: &str, parts: &[&[u8]], _lock: &StoreLock) -> Result<()> {
        self.write_atomic(key, parts, true)
    }

    fn stream_locked(&self, key: &str, _lock: &StoreLock) -> Result<Option<Box<dyn ValueStream + '_>>> {
        Ok(Some(Box::new(self.begin_value(key, true)?)))
    }

    fn delete_locked(&self, key: &str, _lock: &StoreLock) -> Result<()> {
        self.delete(key)?;
        // A killed writer's temporary value of the key, if any.
        let (parent, name) = split_last(key);
        let tmp = if parent.is_empty() { Self::locked_temp(name) } else { format!("{parent}/{}", Self::locked_temp(name)) };
        self.delete(&tmp)
    }

    fn delete(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        let (parent, name) = split_last(key);
        let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR);
        // Deleting never follows a symbolic link, in any mode (a chunk deleted by a write of fill
        // values, by erase_chunk, by a resize): the key's directory is walked with O_NOFOLLOW.
        let dir = match resolve::open(&self.root, parent, Resolve::NoFollow, libc::O_PATH | libc::O_DIRECTORY, 0) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) if resolve::is_refusal(&e) || e.raw_os_error() == Some(libc::ENOTDIR) => {
                // A directory above the key is a link (or no directory). Nothing to refuse when no
                // value lies there, resolved as reads resolve it (a resize of an array whose chunk
                // directory links to another disk, over chunks never written); otherwise the value
                // stays where it is.
                return match resolve::open(&self.root, key, self.how(), libc::O_PATH, 0) {
                    Err(e) if gone(&e) => Ok(()),
                    _ => Err(Error::Io(format!(
                        "{}: refused: deleting never follows a symbolic link, and a directory above '{key}' is one \
                         (the value there is left as it is)",
                        self.root.join(key).display()
                    ))),
                };
            }
            Err(e) => return Err(self.err(parent, e)),
        };
        match resolve::unlink_at(dir.as_raw_fd(), bytes(name), 0) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) => Ok(()),
            Err(e) => Err(self.err(key, e)),
        }
    }

    fn check_removable(&self, prefix: &str) -> Result<()> {
        let Some(p) = prefix.strip_suffix('/') else { return Ok(()) };
        validate_key(p)?;
        self.parent_nofollow(p, "deleting or moving").map(drop)
    }

    fn delete_tree(&self, prefix: &str, first: &[&str]) -> Result<bool> {
        let Some(p) = prefix.strip_suffix('/') else { return Ok(false) };
        validate_key(p)?;
        let Some((parent, name)) = self.parent_nofollow(p, "deleting")? else { return Ok(true) };
        let pd = parent.as_raw_fd();
        let st = match resolve::stat_at(pd, bytes(name), false) {
            Ok(st) => st,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(true),
            Err(e) => return Err(self.err(p, e)),
        };
        if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
            // The member is a link (or a file): removed as itself, its target untouched.
            return match resolve::unlink_at(pd, bytes(name), 0) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(self.err(p, e)),
                _ => Ok(true),
            };
        }
        let result = match resolve::openat(pd, bytes(name), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0) {
            Ok(dir) => remove_contents(&dir, first),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)) => {
                // Replaced by a link since: removed as a link.
                resolve::unlink_at(pd, bytes(name), 0)
            }
            Err(e) => Err(e),
        };
        result.and_then(|()| remove_empty_dir(pd, bytes(name))).map_err(|e| self.err(p, e))?;
        Ok(true)
    }

    fn rename_prefix(&self, from: &str, to: &str) -> Result<bool> {
        let (Some(f), Some(t)) = (from.strip_suffix('/'), to.strip_suffix('/')) else {
            return Err(Error::InvalidArgument(format!("cannot rename the store root ('{from}' to '{to}')")));
        };
        validate_key(f)?;
        validate_key(t)?;
        let missing = |p: &str| Error::NotFound(format!("{}: no such directory", self.root.join(p).display()));
        let (src_dir, src_name) = self.parent_nofollow(f, "moving")?.ok_or_else(|| missing(f))?;
        let (dst_dir, dst_name) = self.parent_nofollow(t, "moving")?.ok_or_else(|| missing(t))?;
        // One rename(2) of the node's directory (a link is moved as a link): atomic within the filesystem.
        resolve::rename_at(src_dir.as_raw_fd(), bytes(src_name), dst_dir.as_raw_fd(), bytes(dst_name)).map_err(|e| {
            Error::io(format!("renaming {} to {}", self.root.join(f).display(), self.root.join(t).display()), e)
        })?;
        Ok(true)
    }

    fn remove_empty_prefix(&self, prefix: &str) -> Result<()> {
        let Some(p) = prefix.strip_suffix('/') else { return Ok(()) };
        validate_key(p)?;
        let Some((parent, name)) = self.parent_nofollow(p, "deleting")? else { return Ok(()) };
        // What the store itself keeps there (an array's lock file, a killed writer's temporary files)
        // goes with the directory; it is never listed as a key.
        let pd = parent.as_raw_fd();
        if let Ok(dir) = resolve::openat(pd, bytes(name), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0) {
            for e in resolve::read_dir(dir.as_raw_fd()).unwrap_or_default() {
                if e.utf8().is_some_and(is_internal_name) && e.d_type == libc::DT_REG {
                    let _ = resolve::unlink_at(dir.as_raw_fd(), &e.name, 0);
                }
            }
        }
        remove_empty_dir(pd, bytes(name)).map_err(|e| self.err(p, e))
    }

    fn exists(&self, key: &str) -> Result<bool> {
        let path = self.path_of(key)?;
        if !self.confine {
            return Ok(path.is_file());
        }
        Ok(resolve::open(&self.root, key, Resolve::Beneath, libc::O_PATH, 0)
            .and_then(|fd| resolve::file_type(fd.as_raw_fd()))
            .is_ok_and(|t| t == libc::S_IFREG))
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let rel = if prefix.is_empty() {
            ""
        } else {
            let p = prefix.strip_suffix('/').ok_or_else(|| {
                Error::InvalidArgument(format!("list prefix '{prefix}' must end with '/'"))
            })?;
            validate_key(p)?;
            p
        };
        let mut out = DirListing::default();
        let dir = match resolve::open(&self.root, rel, self.how(), libc::O_RDONLY | libc::O_DIRECTORY, 0) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(out),
            Err(e) => return Err(self.err(rel, e)),
        };
        let d = dir.as_raw_fd();
        for entry in resolve::read_dir(d).map_err(|e| self.err(rel, e))? {
            let Some(name) = entry.utf8() else { continue };
            let is_dir = entry.is_dir(d)
                || (entry.is_link(d)
                    && if self.confine {
                        // Listed as a directory only where the link stays below the root.
                        let full = if rel.is_empty() { name.to_string() } else { format!("{rel}/{name}") };
                        resolve::open(&self.root, &full, Resolve::Beneath, libc::O_PATH | libc::O_DIRECTORY, 0).is_ok()
                    } else {
                        resolve::stat_at(d, &entry.name, true).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR)
                    });
            if is_dir {
                out.prefixes.push(name.to_string());
            } else if !is_internal_name(name) {
                out.keys.push(name.to_string());
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
    use std::fs;

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
    fn a_streamed_value_shows_only_when_committed_on_both_routes() {
        for unnamed in [true, false] {
            let root = tmpdir(if unnamed { "stream-unnamed" } else { "stream-named" });
            let s = FilesystemStore::new(&root);
            s.no_tmpfile.store(!unnamed, Ordering::Relaxed);
            let lock = s.lock("g/", &[LockRange { start: 1, len: 2, exclusive: true }]).unwrap();
            // A new key: absent until the commit, then the pieces in order.
            let mut v = s.stream_locked("g/c/0", &lock).unwrap().expect("the filesystem store streams");
            v.write(&[b"ab", b"", b"c"]).unwrap();
            v.write(&[b"def"]).unwrap();
            assert_eq!(s.get("g/c/0").unwrap(), None);
            assert_eq!(s.list_dir("g/c/").unwrap().keys, Vec::<String>::new(), "a temporary file is no key");
            v.commit().unwrap();
            assert_eq!(s.get("g/c/0").unwrap().unwrap(), b"abcdef");
            // Replacing it: the old value until the commit.
            let mut v = s.stream_locked("g/c/0", &lock).unwrap().unwrap();
            v.write(&[b"new"]).unwrap();
            assert_eq!(s.get("g/c/0").unwrap().unwrap(), b"abcdef");
            v.commit().unwrap();
            assert_eq!(s.get("g/c/0").unwrap().unwrap(), b"new");
            // Dropped uncommitted (a failed encode): the old value stays, a new key stays absent, and
            // nothing is left behind.
            let mut v = s.stream_locked("g/c/0", &lock).unwrap().unwrap();
            v.write(&[b"torn"]).unwrap();
            drop(v);
            let mut v = s.stream_locked("g/c/1", &lock).unwrap().unwrap();
            v.write(&[b"torn"]).unwrap();
            drop(v);
            assert_eq!(s.get("g/c/0").unwrap().unwrap(), b"new");
            assert_eq!(s.get("g/c/1").unwrap(), None);
            assert_eq!(raw_names(&root.join("g/c")), ["0"]);
            drop(lock);
            fs::remove_dir_all(root).unwrap();
        }
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
