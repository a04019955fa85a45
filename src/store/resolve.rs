//! How the filesystem store turns a key's path below its root into an open file or directory, and the
//! directory-relative system calls (`openat`, `mkdirat`, `unlinkat`, `renameat`, `linkat`, reading a
//! directory) it then works with, so that the directory a call resolved is the one it changes.
//!
//! Three ways to resolve a path `a/b/c` below the root ([`Resolve`]):
//! - [`Resolve::Follow`]: as the kernel does, following symbolic links wherever they lead (default
//!   reads and writes: a chunk directory may link to another disk, as every Zarr implementation allows);
//! - [`Resolve::Beneath`] (a confined store): never leaving the root. `openat2` with `RESOLVE_BENEATH`
//!   and `RESOLVE_NO_MAGICLINKS` (Linux 5.6 and later) follows links that stay below the root and
//!   refuses an absolute link, a `..` above the root and `/proc` magic links (`EXDEV`, `ELOOP`). Where
//!   the kernel lacks `openat2` (`ENOSYS`, or `EPERM` from a seccomp filter), the path is walked one component at a time with
//!   `O_NOFOLLOW`, which refuses every symbolic link (`ELOOP`): stricter, never looser;
//! - [`Resolve::NoFollow`] (deleting and moving, in every mode): that same walk, so a link anywhere in
//!   the path is `ELOOP` and a link at the end is the link itself.
//!
//! The root directory itself is the caller's own path and is always followed.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// How a path below the root is resolved (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolve {
    /// Symbolic links are followed wherever they lead.
    Follow,
    /// Links are followed only while they stay below the root (`openat2` `RESOLVE_BENEATH`); without
    /// `openat2`, no link is followed.
    Beneath,
    /// No symbolic link is followed; a link at the end of the path is opened as itself (`O_PATH`) or
    /// refused (`ELOOP`, other flags).
    NoFollow,
}

/// Set once `openat2` answered `ENOSYS`: every later confined resolution walks instead.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Makes confined resolutions take the component walk instead of `openat2` (tests of the fallback).
#[doc(hidden)]
pub fn force_walk(on: bool) {
    NO_OPENAT2.store(on, Ordering::Relaxed);
}

/// Whether `e` is the kernel refusing a path for leaving the root or for a link (`EXDEV`, `ELOOP`).
pub fn is_refusal(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EXDEV) | Some(libc::ELOOP))
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// `openat(dir, name, flags | O_CLOEXEC, mode)`.
pub fn openat(dir: RawFd, name: &[u8], flags: libc::c_int, mode: libc::mode_t) -> io::Result<OwnedFd> {
    let name = cstring(name)?;
    // SAFETY: a NUL-terminated name; the returned descriptor is owned by the result.
    let fd = check(unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint) })?;
    // SAFETY: a fresh descriptor owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The root directory (followed: it is the caller's path), as an `O_PATH` descriptor.
pub fn open_root(root: &Path) -> io::Result<OwnedFd> {
    openat(libc::AT_FDCWD, root.as_os_str().as_bytes(), libc::O_PATH | libc::O_DIRECTORY, 0)
}

/// Opens `rel` (`/`-separated, no `.` or `..` segments; `""` for the root itself) below `root` with
/// `flags` (and `mode` when creating), resolved as `how` says.
pub fn open(root: &Path, rel: &str, how: Resolve, flags: libc::c_int, mode: libc::mode_t) -> io::Result<OwnedFd> {
    if how == Resolve::Follow {
        let path = if rel.is_empty() { root.to_path_buf() } else { root.join(rel) };
        return openat(libc::AT_FDCWD, path.as_os_str().as_bytes(), flags, mode);
    }
    let root_fd = open_root(root)?;
    if rel.is_empty() {
        return openat(root_fd.as_raw_fd(), b".", flags, mode);
    }
    if how == Resolve::Beneath && !NO_OPENAT2.load(Ordering::Relaxed) {
        match openat2_beneath(root_fd.as_raw_fd(), rel, flags, mode) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => NO_OPENAT2.store(true, Ordering::Relaxed),
            // Some seccomp filters (older container runtimes) answer unknown system calls with EPERM:
            // walk this time (a genuine EPERM comes back from the walk too).
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {}
            other => return other,
        }
    }
    walk(root_fd, rel, flags, mode)
}

/// `openat2(dir, rel, flags, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`, through `syscall` (glibc has no
/// wrapper before 2.36).
fn openat2_beneath(dir: RawFd, rel: &str, flags: libc::c_int, mode: libc::mode_t) -> io::Result<OwnedFd> {
    let name = cstring(rel.as_bytes())?;
    // SAFETY: open_how is plain data; zeroed is valid and the used fields are set below.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.mode = if flags & (libc::O_CREAT | libc::O_TMPFILE) != 0 { mode as u64 } else { 0 };
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: a NUL-terminated path and a valid open_how of the size passed.
    let rc = unsafe {
        libc::syscall(libc::SYS_openat2, dir, name.as_ptr(), &how as *const libc::open_how, std::mem::size_of::<libc::open_how>())
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(rc as RawFd) })
}

/// Opens `rel` below the directory `dir` one component at a time, never following a symbolic link:
/// a link in the middle is `ELOOP`; at the end it is opened as itself with `O_PATH`, else `ELOOP`.
fn walk(dir: OwnedFd, rel: &str, flags: libc::c_int, mode: libc::mode_t) -> io::Result<OwnedFd> {
    let mut parts: Vec<&str> = rel.split('/').collect();
    let last = parts.pop().expect("split yields one part at least");
    let mut dir = dir;
    for part in parts {
        dir = match openat(dir.as_raw_fd(), part.as_bytes(), libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0) {
            Ok(d) => d,
            // O_PATH | O_NOFOLLOW on a link opens the link, which is then no directory.
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) && is_link(dir.as_raw_fd(), part.as_bytes()) => {
                return Err(io::Error::from_raw_os_error(libc::ELOOP))
            }
            Err(e) => return Err(e),
        };
    }
    match openat(dir.as_raw_fd(), last.as_bytes(), flags | libc::O_NOFOLLOW, mode) {
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) && flags & libc::O_DIRECTORY != 0 && is_link(dir.as_raw_fd(), last.as_bytes()) => {
            Err(io::Error::from_raw_os_error(libc::ELOOP))
        }
        other => other,
    }
}

/// `fstatat(dir, name)`, following a link at `name` when `follow`.
pub fn stat_at(dir: RawFd, name: &[u8], follow: bool) -> io::Result<libc::stat> {
    let name = cstring(name)?;
    // SAFETY: stat is plain data, filled by the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
    // SAFETY: a NUL-terminated name and a valid stat buffer.
    check(unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, flags) })?;
    Ok(st)
}

/// Whether `name` in `dir` is a symbolic link.
pub fn is_link(dir: RawFd, name: &[u8]) -> bool {
    stat_at(dir, name, false).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK)
}

/// The type bits (`S_IFMT`) of an open descriptor.
pub fn file_type(fd: RawFd) -> io::Result<libc::mode_t> {
    // SAFETY: stat is plain data, filled by the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and stat buffer.
    check(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st.st_mode & libc::S_IFMT)
}

/// Opens the directory `rel` below `root` (`O_PATH`) resolved as `how`, creating what is missing of it
/// (the root included) with mode 0777 less the umask. Directories are created one at a time below the
/// directory already resolved, so a confined store never creates one outside its root.
pub fn open_dir_creating(root: &Path, rel: &str, how: Resolve) -> io::Result<OwnedFd> {
    let flags = libc::O_PATH | libc::O_DIRECTORY;
    match open(root, rel, how, flags, 0) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        other => return other,
    }
    if how == Resolve::Follow {
        std::fs::create_dir_all(if rel.is_empty() { root.to_path_buf() } else { root.join(rel) })?;
        return open(root, rel, how, flags, 0);
    }
    std::fs::create_dir_all(root)?;
    let parts: Vec<&str> = if rel.is_empty() { Vec::new() } else { rel.split('/').collect() };
    let mut dir = open(root, "", how, flags, 0)?;
    for i in 0..parts.len() {
        let here = parts[..=i].join("/");
        dir = match open(root, &here, how, flags, 0) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let name = cstring(parts[i].as_bytes())?;
                // SAFETY: a valid directory descriptor and a NUL-terminated name.
                match check(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o777) }) {
                    Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                    _ => {}
                }
                open(root, &here, how, flags, 0)?
            }
            other => other?,
        };
    }
    Ok(dir)
}

/// `unlinkat(dir, name, flags)` (`AT_REMOVEDIR` for a directory): a link is removed as a link.
pub fn unlink_at(dir: RawFd, name: &[u8], flags: libc::c_int) -> io::Result<()> {
    let name = cstring(name)?;
    // SAFETY: a NUL-terminated name.
    check(unsafe { libc::unlinkat(dir, name.as_ptr(), flags) }).map(drop)
}

/// `renameat(from_dir, from, to_dir, to)`: a link is moved as a link.
pub fn rename_at(from_dir: RawFd, from: &[u8], to_dir: RawFd, to: &[u8]) -> io::Result<()> {
    let (from, to) = (cstring(from)?, cstring(to)?);
    // SAFETY: NUL-terminated names.
    check(unsafe { libc::renameat(from_dir, from.as_ptr(), to_dir, to.as_ptr()) }).map(drop)
}

/// Gives the open, unnamed file `file` (`O_TMPFILE`) the name `name` in `dir` (`linkat` through its
/// `/proc/self/fd` entry); `AlreadyExists` when `name` is taken (a link at `name` is never followed).
pub fn link_open_file(file: RawFd, dir: RawFd, name: &[u8]) -> io::Result<()> {
    let proc_path = cstring(format!("/proc/self/fd/{file}").as_bytes())?;
    let name = cstring(name)?;
    // SAFETY: NUL-terminated paths.
    check(unsafe { libc::linkat(libc::AT_FDCWD, proc_path.as_ptr(), dir, name.as_ptr(), libc::AT_SYMLINK_FOLLOW) }).map(drop)
}

/// One entry of a directory: its name and `d_type` (`DT_UNKNOWN` where the file system does not say).
pub struct Entry {
    /// The name (any bytes but `/` and NUL).
    pub name: Vec<u8>,
    /// `DT_DIR`, `DT_REG`, `DT_LNK`, ... or `DT_UNKNOWN`.
    pub d_type: u8,
}

impl Entry {
    /// The name as UTF-8, if it is.
    pub fn utf8(&self) -> Option<&str> {
        std::str::from_utf8(&self.name).ok()
    }

    /// Whether the entry is a directory itself (a link to one is not), asking the file system when
    /// the directory listing did not say.
    pub fn is_dir(&self, dir: RawFd) -> bool {
        match self.d_type {
            libc::DT_DIR => true,
            libc::DT_UNKNOWN => stat_at(dir, &self.name, false).is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR),
            _ => false,
        }
    }

    /// Whether the entry is a symbolic link.
    pub fn is_link(&self, dir: RawFd) -> bool {
        match self.d_type {
            libc::DT_LNK => true,
            libc::DT_UNKNOWN => is_link(dir, &self.name),
            _ => false,
        }
    }
}

/// The entries of the directory open at `dir` (which must not be `O_PATH`), `.` and `..` left out.
pub fn read_dir(dir: RawFd) -> io::Result<Vec<Entry>> {
    // SAFETY: fdopendir takes over a duplicate, released by closedir below.
    let dup = check(unsafe { libc::fcntl(dir, libc::F_DUPFD_CLOEXEC, 0) })?;
    let stream = unsafe { libc::fdopendir(dup) };
    if stream.is_null() {
        let e = io::Error::last_os_error();
        // SAFETY: the duplicate is still ours when fdopendir failed.
        unsafe { libc::close(dup) };
        return Err(e);
    }
    // The duplicate shares the original's position: start from the top.
    // SAFETY: a valid directory stream.
    unsafe { libc::rewinddir(stream) };
    let mut out = Vec::new();
    let result = loop {
        // SAFETY: errno is thread-local; readdir returns NULL at the end (errno unchanged) or on error.
        unsafe { *libc::__errno_location() = 0 };
        // SAFETY: a valid directory stream; the entry is read before the next readdir.
        let ent = unsafe { libc::readdir(stream) };
        if ent.is_null() {
            let e = io::Error::last_os_error();
            break if e.raw_os_error().unwrap_or(0) == 0 { Ok(()) } else { Err(e) };
        }
        // SAFETY: d_name is NUL-terminated.
        let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) }.to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        // SAFETY: a valid entry.
        out.push(Entry { name: name.to_vec(), d_type: unsafe { (*ent).d_type } });
    };
    // SAFETY: the stream opened above, closed once.
    unsafe { libc::closedir(stream) };
    result.map(|()| out)
}

/// The parent of `rel` (`""` at the top) and its last component.
pub fn split_last(rel: &str) -> (&str, &str) {
    rel.rsplit_once('/').unwrap_or(("", rel))
}

/// A name as bytes for the `*_at` calls.
pub fn bytes(name: &str) -> &[u8] {
    OsStr::new(name).as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn beneath_refuses_what_leaves_the_root_and_nofollow_every_link() {
        let base = std::env::temp_dir().join(format!("zarr-resolve-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (root, outside) = (base.join("root"), base.join("outside"));
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("f"), b"secret").unwrap();
        std::fs::write(root.join("d/f"), b"inside").unwrap();
        symlink(&outside, root.join("out")).unwrap();
        symlink("../outside/f", root.join("rel_out")).unwrap();
        symlink("d", root.join("in")).unwrap();
        let rd = libc::O_RDONLY;
        for walk in [false, true] {
            force_walk(walk);
            for rel in ["out/f", "rel_out"] {
                let e = open(&root, rel, Resolve::Beneath, rd, 0).unwrap_err();
                assert!(is_refusal(&e), "{rel} (walk {walk}): {e}");
                assert!(open(&root, rel, Resolve::Follow, rd, 0).is_ok(), "{rel} is followed by default");
                assert!(is_refusal(&open(&root, rel, Resolve::NoFollow, rd, 0).unwrap_err()));
            }
            // A link that stays below the root: followed by openat2, refused by the walk.
            assert_eq!(open(&root, "in/f", Resolve::Beneath, rd, 0).is_ok(), !walk);
            assert!(open(&root, "d/f", Resolve::Beneath, rd, 0).is_ok());
            assert!(is_refusal(&open(&root, "out", Resolve::NoFollow, rd | libc::O_DIRECTORY, 0).unwrap_err()));
            // Creating directories never creates one outside.
            let e = open_dir_creating(&root, "out/new/deeper", Resolve::Beneath).unwrap_err();
            assert!(is_refusal(&e), "{e}");
            assert!(!outside.join("new").exists());
            open_dir_creating(&root, "d/new/deeper", Resolve::Beneath).unwrap();
            assert!(root.join("d/new/deeper").is_dir());
            std::fs::remove_dir_all(root.join("d/new")).unwrap();
        }
        force_walk(false);
        let names: Vec<Vec<u8>> = {
            let d = open(&root, "", Resolve::Beneath, rd | libc::O_DIRECTORY, 0).unwrap();
            let mut v: Vec<Vec<u8>> = read_dir(d.as_raw_fd()).unwrap().into_iter().map(|e| e.name).collect();
            v.sort();
            v
        };
        assert_eq!(names, [b"d".to_vec(), b"in".to_vec(), b"out".to_vec(), b"rel_out".to_vec()]);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
