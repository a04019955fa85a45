//! Store-level locks: how writers of one array exclude each other across processes, threads and handles.
//!
//! Every array (and group) node has a space of *lock bytes*: byte 0 stands for the node's metadata
//! document(s), byte `1 + i` for the stored key (chunk, or shard of a sharded array) with lock index `i`
//! (see [`key_index`]). A write call asks for all its bytes at once with
//! [`super::Store::lock`]: chunk writers take byte 0 *shared* and their chunk bytes *exclusive*; metadata
//! updates (attributes, resize) take byte 0 *exclusive*, which also waits for every chunk writer. The
//! ranges are taken one after another in ascending order (so two calls cannot deadlock) and held until
//! the returned [`StoreLock`] is dropped. Readers take no locks: every stored value is replaced
//! atomically, so a reader sees the old value or the new one.
//!
//! Implementations:
//! - [`FileLock`] (filesystem store): one lock file per array, `<array dir>/.zarr.lock`, locked with Linux
//!   open-file-description byte-range locks (`F_OFD_SETLKW`). A group has no lock file: readers such as
//!   zarr-python list every entry of a group's directory as a would-be child and warn about anything
//!   that is not one ("Object at .zarr.lock is not recognized"), so a group's metadata lock is taken
//!   on its metadata document itself (`zarr.json`, v2 `.zgroup`; [`FileLock::acquire_document`]).
//!   An array's directory is never listed by readers (its keys are chunks), so its lock file stays.
//!   Each lock call opens its own description,
//!   so threads and separate handles of one process exclude each other like separate processes do, and
//!   the kernel releases the locks when the description is closed, including when the process dies.
//!   Elsewhere than Linux the classic process-wide POSIX locks (`F_SETLKW`) are used: they exclude other
//!   processes but not threads of the same process.
//! - [`LockTable`] (memory store, and any store without a shared medium): an in-process table with the
//!   same semantics.
//!
//! Stores that cannot lock (the default of [`super::Store::lock`]) return [`StoreLock::none`]: writers
//! of such stores are not protected against each other.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

/// A run of lock bytes `start..start + len`, shared or exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockRange {
    /// First lock byte.
    pub start: u64,
    /// Number of bytes (at least 1).
    pub len: u64,
    /// Exclusive (a writer of what the bytes stand for) or shared.
    pub exclusive: bool,
}

impl LockRange {
    /// Byte 0: the node's metadata document(s).
    pub fn metadata(exclusive: bool) -> LockRange {
        LockRange { start: 0, len: 1, exclusive }
    }

    fn end(&self) -> u64 {
        self.start + self.len
    }

    fn overlaps(&self, other: &LockRange) -> bool {
        self.start < other.end() && other.start < self.end()
    }
}

/// Bits per dimension of the virtual grid in which [`key_index`] numbers chunk coordinates.
fn bits_per_dim(rank: usize) -> u32 {
    62 / rank.max(1) as u32
}

/// The lock index of the stored key at chunk-grid coordinates `coords`.
///
/// The index is the C-order linear index in a fixed virtual grid of `2^(62 / rank)` chunks per dimension
/// (not the array's actual grid, which a resize changes: two handles with different views of the shape
/// must still agree). Consecutive chunks along the last dimension get consecutive indices, so a region
/// write locks one range per row of chunks. Coordinates too large for the virtual grid are hashed into
/// `[2^62, 2^63 - 2)` instead; a hash collision only serialises two writers.
pub fn key_index(coords: &[u64]) -> u64 {
    let bits = bits_per_dim(coords.len());
    if coords.iter().all(|&c| c >> bits == 0) {
        return coords.iter().fold(0u64, |acc, &c| (acc << bits) | c);
    }
    // FNV-1a over the coordinates: stable across processes and builds.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &c in coords {
        for b in c.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    (1u64 << 62) + h % ((1u64 << 62) - 2)
}

/// The lock ranges of a chunk writer: byte 0 shared, then the bytes of `coords` (chunk-grid coordinates of
/// the stored keys written) exclusive, runs of consecutive indices merged, ascending; at most
/// [`MAX_CHUNK_LOCK_RANGES`] exclusive runs ([`ChunkLockRanges`]).
pub fn chunk_write_ranges<'a>(coords: impl IntoIterator<Item = &'a [u64]>) -> Vec<LockRange> {
    let mut ranges = ChunkLockRanges::new();
    for c in coords {
        ranges.add(c);
    }
    ranges.finish()
}

/// The most exclusive runs of lock bytes one chunk writer asks for (beyond them, runs are merged with
/// the gaps between them: a write touching millions of chunks locks a bounded number of ranges).
pub(crate) const MAX_CHUNK_LOCK_RANGES: usize = 4096;

/// The lock ranges of a chunk writer, gathered one chunk at a time in memory that does not grow with the
/// number of chunks: consecutive lock bytes form one run; when there are more than
/// [`MAX_CHUNK_LOCK_RANGES`] runs, neighbouring runs are merged pairwise, together with the bytes between
/// them (locking a chunk the call does not write only makes a writer of it wait: never a lost update, never
/// a deadlock, since the ranges stay ascending). Hashed indices (coordinates beyond the virtual grid,
/// [`key_index`]) are kept apart, up to the same number, beyond which the whole hashed space is locked.
/// Chunks come cheapest in C order of their coordinates (ascending indices), as selections make them;
/// any order is right.
#[derive(Debug, Default)]
pub struct ChunkLockRanges {
    /// Runs of bytes of indices below 2^62, in the order added.
    grid: Vec<LockRange>,
    /// Hashed indices (at least 2^62), until there are too many.
    hashed: Vec<u64>,
    /// Too many hashed indices: their whole space is locked.
    all_hashed: bool,
}

impl ChunkLockRanges {
    /// No chunk yet.
    pub fn new() -> ChunkLockRanges {
        ChunkLockRanges::default()
    }

    /// Adds the stored key at chunk-grid coordinates `coords`.
    pub fn add(&mut self, coords: &[u64]) {
        let idx = key_index(coords);
        if idx >= 1 << 62 {
            if !self.all_hashed {
                self.hashed.push(idx);
                if self.hashed.len() > MAX_CHUNK_LOCK_RANGES {
                    self.all_hashed = true;
                    self.hashed = Vec::new();
                }
            }
            return;
        }
        let byte = idx + 1;
        match self.grid.last_mut() {
            Some(last) if last.start <= byte && byte < last.end() => {}
            Some(last) if last.end() == byte => last.len += 1,
            _ => self.grid.push(LockRange { start: byte, len: 1, exclusive: true }),
        }
        if self.grid.len() > MAX_CHUNK_LOCK_RANGES {
            let pairs: Vec<LockRange> = self.grid.chunks(2).map(|p| cover(p[0], *p.last().expect("a chunk of 1 or 2"))).collect();
            self.grid = pairs;
        }
    }

    /// The ranges to lock: byte 0 shared, then the exclusive runs, ascending and disjoint.
    pub fn finish(self) -> Vec<LockRange> {
        let mut runs = self.grid;
        if self.all_hashed {
            runs.push(LockRange { start: (1 << 62) + 1, len: (1 << 62) - 2, exclusive: true });
        } else {
            runs.extend(self.hashed.into_iter().map(|i| LockRange { start: i + 1, len: 1, exclusive: true }));
        }
        runs.sort_unstable_by_key(|r| r.start);
        let mut out = vec![LockRange::metadata(false)];
        for r in runs {
            match out.last_mut() {
                Some(last) if last.exclusive && last.end() >= r.start => *last = cover(*last, r),
                _ => out.push(r),
            }
        }
        out
    }
}

/// The smallest exclusive range holding both `a` and `b`.
fn cover(a: LockRange, b: LockRange) -> LockRange {
    let start = a.start.min(b.start);
    LockRange { start, len: a.end().max(b.end()) - start, exclusive: true }
}

/// Fails unless `ranges` are ascending and disjoint (the order that keeps lock calls deadlock-free).
pub fn check_ranges(ranges: &[LockRange]) -> Result<()> {
    for w in ranges.windows(2) {
        if w[1].start < w[0].end() {
            return Err(Error::Internal(format!("lock ranges out of order or overlapping: {:?} then {:?}", w[0], w[1])));
        }
    }
    if ranges.iter().any(|r| r.len == 0 || r.start.checked_add(r.len).is_none_or(|e| e > i64::MAX as u64)) {
        return Err(Error::Internal(format!("lock range empty or beyond 2^63: {ranges:?}")));
    }
    Ok(())
}

/// Held locks; dropping the value releases them.
#[must_use = "the locks are released when the guard is dropped"]
pub struct StoreLock {
    _held: Option<Box<dyn Send + Sync>>,
}

impl std::fmt::Debug for StoreLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self._held.is_some() { "StoreLock(held)" } else { "StoreLock(none)" })
    }
}

impl StoreLock {
    /// A guard holding nothing (stores that cannot lock).
    pub fn none() -> StoreLock {
        StoreLock { _held: None }
    }

    /// Whether this guard holds locks (`false`: the store could not lock).
    pub fn is_held(&self) -> bool {
        self._held.is_some()
    }

    /// A guard that releases its locks when `held` is dropped.
    pub fn new(held: impl Send + Sync + 'static) -> StoreLock {
        StoreLock { _held: Some(Box::new(held)) }
    }
}

/// Byte-range locks on one open file description of a lock file (released when it is closed).
pub struct FileLock {
    _file: std::fs::File,
}

impl FileLock {
    /// Opens (creating it if needed) the lock file at `path` and takes `ranges` in order, waiting for
    /// each as long as another description holds a conflicting lock.
    pub fn acquire(path: &std::path::Path, ranges: &[LockRange]) -> Result<FileLock> {
        use std::os::unix::fs::OpenOptionsExt;
        check_ranges(ranges)?;
        let open = || {
            std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).mode(0o666).open(path)
        };
        let file = match open() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display(), e))?;
                }
                open()
            }
            other => other,
        }
        .map_err(|e| Error::io(format!("lock file {}", path.display()), e))?;
        Self::lock_open_file(file, path, ranges)
    }

    /// Takes `ranges` of the lock file already open as `file` (at `path`, for messages), as
    /// [`FileLock::acquire`] does once it has opened the file (a confined store opens it below its root).
    pub fn lock_open_file(file: std::fs::File, path: &std::path::Path, ranges: &[LockRange]) -> Result<FileLock> {
        check_ranges(ranges)?;
        lock_ranges(&file, path, ranges)?;
        Ok(FileLock { _file: file })
    }

    /// Takes the whole metadata lock (byte 0, exclusive) of a group on its metadata document at `path`
    /// itself, so that no lock file sits in the group's directory. The document is replaced (renamed
    /// over) by the writer holding the lock, so after the lock is granted the path is opened again: if
    /// it names another file now (a writer replaced it meanwhile, or an NFS server reports the locked
    /// file stale), the lock is dropped and taken on the current file. A writer therefore always holds
    /// the lock of the document it reads and replaces, and every later writer waits for it or locks the
    /// replacement, which it reads. A missing document is [`Error::NotFound`].
    pub fn acquire_document(path: &std::path::Path) -> Result<FileLock> {
        let open = |flags: libc::c_int| {
            let mut o = std::fs::OpenOptions::new();
            o.read(true).write(flags & libc::O_ACCMODE == libc::O_RDWR);
            o.open(path)
        };
        Self::acquire_document_with(path, &open)
    }

    /// [`FileLock::acquire_document`], opening the document with `open(flags)` (`O_RDWR` to lock it,
    /// `O_RDONLY` to compare it): a confined store opens it below its root.
    pub fn acquire_document_with(
        path: &std::path::Path,
        open: &dyn Fn(libc::c_int) -> std::io::Result<std::fs::File>,
    ) -> Result<FileLock> {
        use std::os::unix::fs::MetadataExt;
        let range = [LockRange::metadata(true)];
        let gone = || Error::NotFound(format!("{}: the metadata document is gone", path.display()));
        loop {
            let file = match open(libc::O_RDWR) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(gone()),
                Err(e) => return Err(Error::io(format!("metadata document {}", path.display()), e)),
            };
            match lock_ranges(&file, path, &range) {
                Ok(()) => {}
                Err(_) if file.metadata().is_err() => continue, // stale (NFS): replaced meanwhile
                Err(e) => return Err(e),
            }
            let held = file.metadata().map_err(|e| Error::io(path.display(), e))?;
            let now = match open(libc::O_RDONLY).and_then(|f| f.metadata()) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(gone()),
                Err(e) => return Err(Error::io(path.display(), e)),
            };
            if (held.dev(), held.ino()) == (now.dev(), now.ino()) {
                return Ok(FileLock { _file: file });
            }
        }
    }
}

/// Takes `ranges` of the open `file` (at `path`, for messages) in order, waiting for each.
fn lock_ranges(file: &std::fs::File, path: &std::path::Path, ranges: &[LockRange]) -> Result<()> {
    use std::os::unix::io::AsRawFd;
    {
        for r in ranges {
            // SAFETY: flock is plain data; zeroed is a valid value and every field used is set.
            let mut fl: libc::flock = unsafe { std::mem::zeroed() };
            fl.l_type = if r.exclusive { libc::F_WRLCK } else { libc::F_RDLCK } as _;
            fl.l_whence = libc::SEEK_SET as _;
            fl.l_start = r.start as libc::off_t;
            fl.l_len = r.len as libc::off_t;
            loop {
                // SAFETY: a valid descriptor and a valid flock pointer.
                let rc = unsafe { libc::fcntl(file.as_raw_fd(), SETLKW, &mut fl as *mut libc::flock) };
                if rc == 0 {
                    break;
                }
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(Error::io(format!("locking {} bytes {}..{}", path.display(), r.start, r.end()), e));
                }
            }
        }
    }
    Ok(())
}

#[cfg(target_os = "linux")]
const SETLKW: libc::c_int = libc::F_OFD_SETLKW;
#[cfg(not(target_os = "linux"))]
const SETLKW: libc::c_int = libc::F_SETLKW;

/// In-process byte-range locks per node prefix, with the semantics of [`FileLock`]: every
/// [`LockTable::acquire`] is an owner of its own, shared locks coexist, exclusive ones exclude.
#[derive(Debug, Default)]
pub struct LockTable {
    inner: Arc<TableInner>,
}

#[derive(Debug, Default)]
struct TableInner {
    held: Mutex<TableState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct TableState {
    next_owner: u64,
    /// Per node prefix: (owner, range) of every held lock.
    by_prefix: HashMap<String, Vec<(u64, LockRange)>>,
}

struct TableGuard {
    table: Arc<TableInner>,
    prefix: String,
    owner: u64,
}

impl Drop for TableGuard {
    fn drop(&mut self) {
        let mut st = self.table.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(v) = st.by_prefix.get_mut(&self.prefix) {
            v.retain(|(o, _)| *o != self.owner);
            if v.is_empty() {
                st.by_prefix.remove(&self.prefix);
            }
        }
        drop(st);
        self.table.changed.notify_all();
    }
}

impl LockTable {
    /// An empty table.
    pub fn new() -> LockTable {
        LockTable::default()
    }

    /// Takes `ranges` of node `prefix` in order, waiting for each while another owner holds a
    /// conflicting lock (an exclusive one, or any when asking for exclusive).
    pub fn acquire(&self, prefix: &str, ranges: &[LockRange]) -> Result<StoreLock> {
        check_ranges(ranges)?;
        let mut st = self.inner.held.lock().unwrap_or_else(|e| e.into_inner());
        st.next_owner += 1;
        let owner = st.next_owner;
        // From here on the guard releases whatever was taken, also on an early return.
        let guard = TableGuard { table: self.inner.clone(), prefix: prefix.to_string(), owner };
        for r in ranges {
            loop {
                let conflict = st
                    .by_prefix
                    .get(prefix)
                    .is_some_and(|v| v.iter().any(|(o, h)| *o != owner && h.overlaps(r) && (h.exclusive || r.exclusive)));
                if !conflict {
                    break;
                }
                st = self.inner.changed.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            st.by_prefix.entry(prefix.to_string()).or_default().push((owner, *r));
        }
        drop(st);
        Ok(StoreLock::new(guard))
    }

    /// Number of locks held on `prefix` (for tests).
    pub fn held(&self, prefix: &str) -> usize {
        self.inner.held.lock().unwrap_or_else(|e| e.into_inner()).by_prefix.get(prefix).map_or(0, Vec::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    #[test]
    fn indices_and_ranges() {
        assert_eq!(key_index(&[5]), 5);
        assert_eq!(key_index(&[1, 2]), (1 << 31) | 2);
        assert_eq!(key_index(&[]), 0);
        // Independent of any grid shape; consecutive along the last dimension.
        assert_eq!(key_index(&[3, 4, 6]), key_index(&[3, 4, 5]) + 1);
        // Too large for the virtual grid: hashed above 2^62, deterministic.
        let h = key_index(&[1 << 40, 0]);
        assert!(((1 << 62)..(1 << 63) - 2).contains(&h));
        assert_eq!(h, key_index(&[1 << 40, 0]));
        assert_ne!(h, key_index(&[1 << 40, 1]));
        let coords: Vec<Vec<u64>> = vec![vec![0, 2], vec![0, 0], vec![0, 1], vec![1, 0], vec![0, 1]];
        let r = chunk_write_ranges(coords.iter().map(|c| c.as_slice()));
        assert_eq!(
            r,
            [
                LockRange::metadata(false),
                LockRange { start: 1, len: 3, exclusive: true },
                LockRange { start: (1 << 31) + 1, len: 1, exclusive: true }
            ]
        );
        check_ranges(&r).unwrap();
        assert!(check_ranges(&[r[1], r[0]]).is_err());
        assert!(check_ranges(&[LockRange { start: 0, len: 0, exclusive: true }]).is_err());
    }

    /// Whether some range of `ranges` holds byte `b` exclusively.
    fn holds(ranges: &[LockRange], b: u64) -> bool {
        ranges.iter().any(|r| r.exclusive && r.start <= b && b < r.end())
    }

    #[test]
    fn ranges_stay_few_for_millions_of_chunks() {
        // Every 3rd chunk of a row of 3 million: a million runs, merged down to at most the cap.
        let mut b = ChunkLockRanges::new();
        for i in 0..1_000_000u64 {
            b.add(&[i * 3]);
        }
        let r = b.finish();
        check_ranges(&r).unwrap();
        assert!(r.len() <= MAX_CHUNK_LOCK_RANGES + 1, "{} ranges", r.len());
        assert_eq!(r[0], LockRange::metadata(false));
        assert!((0..1_000_000u64).all(|i| holds(&r, key_index(&[i * 3]) + 1)));
        assert!(!holds(&r, key_index(&[3_000_000]) + 1), "nothing beyond the last chunk");
        // Out of order and repeated: still ascending, disjoint, covering.
        let mut b = ChunkLockRanges::new();
        for i in (0..10_000u64).rev().chain(0..10) {
            b.add(&[i * 7, 1]);
        }
        let r = b.finish();
        check_ranges(&r).unwrap();
        assert!(r.len() <= MAX_CHUNK_LOCK_RANGES + 1);
        assert!((0..10_000u64).all(|i| holds(&r, key_index(&[i * 7, 1]) + 1)));
        // Hashed coordinates: each its own byte up to the cap, then the whole hashed space.
        let few: Vec<Vec<u64>> = (0..10u64).map(|i| vec![1 << 40, i]).collect();
        let r = chunk_write_ranges(few.iter().map(|c| c.as_slice()));
        check_ranges(&r).unwrap();
        assert_eq!(r.len(), 11);
        let mut b = ChunkLockRanges::new();
        b.add(&[0, 5]);
        for i in 0..(MAX_CHUNK_LOCK_RANGES as u64 + 1) {
            b.add(&[1 << 40, i]);
        }
        let r = b.finish();
        check_ranges(&r).unwrap();
        assert_eq!(r, [LockRange::metadata(false), ex(6, 1), ex((1 << 62) + 1, (1 << 62) - 2)]);
        assert!(holds(&r, key_index(&[1 << 41, 3]) + 1));
    }

    /// Runs `second` on a thread after `first` is held; returns whether it finished while `first` was
    /// still held (it should not when the two conflict).
    fn blocks(first: impl FnOnce() -> StoreLock, second: impl FnOnce() -> StoreLock + Send + 'static) -> bool {
        let held = first();
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let t = std::thread::spawn(move || {
            let _g = second();
            d.store(true, Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(100));
        let finished_early = done.load(Ordering::SeqCst);
        drop(held);
        t.join().unwrap();
        assert!(done.load(Ordering::SeqCst));
        !finished_early
    }

    fn ex(start: u64, len: u64) -> LockRange {
        LockRange { start, len, exclusive: true }
    }

    #[test]
    fn table_semantics() {
        let t = Arc::new(LockTable::new());
        let (a, b) = (t.clone(), t.clone());
        // shared + shared coexist, exclusive excludes, disjoint ranges and other prefixes do not conflict
        assert!(!blocks(|| a.acquire("x/", &[LockRange::metadata(false)]).unwrap(), {
            let b = b.clone();
            move || b.acquire("x/", &[LockRange::metadata(false)]).unwrap()
        }));
        assert!(blocks(|| a.acquire("x/", &[LockRange::metadata(false)]).unwrap(), {
            let b = b.clone();
            move || b.acquire("x/", &[LockRange::metadata(true)]).unwrap()
        }));
        assert!(blocks(|| a.acquire("x/", &[ex(3, 4)]).unwrap(), {
            let b = b.clone();
            move || b.acquire("x/", &[ex(6, 1)]).unwrap()
        }));
        assert!(!blocks(|| a.acquire("x/", &[ex(3, 4)]).unwrap(), {
            let b = b.clone();
            move || b.acquire("x/", &[ex(7, 1)]).unwrap()
        }));
        assert!(!blocks(|| a.acquire("x/", &[ex(3, 4)]).unwrap(), {
            let b = b.clone();
            move || b.acquire("y/", &[ex(3, 4)]).unwrap()
        }));
        assert_eq!(t.held("x/"), 0, "every guard released its locks");
        assert!(t.acquire("x/", &[ex(2, 1), ex(1, 1)]).is_err(), "descending ranges are refused");
        assert_eq!(t.held("x/"), 0);
    }

    #[test]
    fn table_excludes_threads() {
        // Many threads increment a counter with a read-modify-write under an exclusive range.
        let t = Arc::new(LockTable::new());
        let counter = Arc::new(Mutex::new(0u64));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (t, c) = (t.clone(), counter.clone());
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        let _g = t.acquire("a/", &[LockRange::metadata(false), ex(1, 1)]).unwrap();
                        let v = *c.lock().unwrap();
                        std::thread::yield_now();
                        *c.lock().unwrap() = v + 1;
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(*counter.lock().unwrap(), 1600);
    }

    fn lock_path(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("zarr-lock-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d.join("arr/.zarr.lock")
    }

    #[test]
    fn file_locks_exclude_descriptions_and_release_on_close() {
        let p = lock_path("ofd");
        let (p1, p2) = (p.clone(), p.clone());
        // Two descriptions in one process exclude each other (OFD semantics).
        assert!(blocks(move || StoreLock::new(FileLock::acquire(&p1, &[ex(5, 2)]).unwrap()), move || {
            StoreLock::new(FileLock::acquire(&p2, &[ex(6, 1)]).unwrap())
        }));
        let (p1, p2) = (p.clone(), p.clone());
        assert!(!blocks(move || StoreLock::new(FileLock::acquire(&p1, &[LockRange::metadata(false)]).unwrap()), move || {
            StoreLock::new(FileLock::acquire(&p2, &[LockRange::metadata(false), ex(1, 1)]).unwrap())
        }));
        // Closing (dropping) releases: an exclusive lock can be taken at once afterwards.
        drop(FileLock::acquire(&p, &[LockRange::metadata(true), ex(1, 100)]).unwrap());
        let again = FileLock::acquire(&p, &[LockRange::metadata(true), ex(1, 100)]).unwrap();
        drop(again);
        // A dead process releases too: a child takes the lock and exits without unlocking.
        let pc = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: fork in a test; the child only makes async-signal-safe calls before _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe {
                let fd = libc::open(pc.as_ptr(), libc::O_RDWR);
                let mut fl: libc::flock = std::mem::zeroed();
                fl.l_type = libc::F_WRLCK as _;
                fl.l_len = 10;
                let rc = libc::fcntl(fd, SETLKW, &mut fl as *mut libc::flock);
                libc::_exit(if rc == 0 { 0 } else { 1 });
            }
        }
        let mut status = 0;
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(status, 0);
        let (tx, rx) = std::sync::mpsc::channel();
        let p2 = p.clone();
        std::thread::spawn(move || tx.send(FileLock::acquire(&p2, &[ex(0, 10)]).is_ok()).unwrap());
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(true), "a dead owner's lock was released");
        std::fs::remove_dir_all(p.parent().unwrap().parent().unwrap()).unwrap();
    }

    /// Read-modify-write of a document that each writer replaces by rename while holding the lock
    /// taken on the document itself: no update is lost, although every update changes the file
    /// (inode) the next writer must lock.
    #[test]
    fn document_locks_follow_the_replaced_document() {
        let dir = std::env::temp_dir().join(format!("zarr-doclock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let doc = dir.join("zarr.json");
        std::fs::write(&doc, "0").unwrap();
        let (threads, rounds) = (6, 40);
        std::thread::scope(|s| {
            for t in 0..threads {
                let (doc, dir) = (&doc, &dir);
                s.spawn(move || {
                    for i in 0..rounds {
                        let _held = FileLock::acquire_document(doc).unwrap();
                        let n: u64 = std::fs::read_to_string(doc).unwrap().parse().unwrap();
                        if i % 3 == 0 {
                            std::thread::yield_now();
                        }
                        let tmp = dir.join(format!(".zarr.json.{t}"));
                        std::fs::write(&tmp, (n + 1).to_string()).unwrap();
                        std::fs::rename(&tmp, doc).unwrap();
                    }
                });
            }
        });
        assert_eq!(std::fs::read_to_string(&doc).unwrap(), (threads * rounds).to_string());
        // nothing but the document is left in the directory
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["zarr.json"]);
        // a holder excludes the next writer until it lets go
        let held = FileLock::acquire_document(&doc).unwrap();
        let got = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let _l = FileLock::acquire_document(&doc).unwrap();
                got.store(true, Ordering::SeqCst);
            });
            std::thread::sleep(Duration::from_millis(100));
            assert!(!got.load(Ordering::SeqCst), "document lock not exclusive");
            drop(held);
        });
        assert!(got.load(Ordering::SeqCst));
        std::fs::remove_file(&doc).unwrap();
        assert!(matches!(FileLock::acquire_document(&doc), Err(Error::NotFound(_))));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
