//! The fuzz targets' allocation limit: a global allocator that ends the process (abort, so that
//! libFuzzer records the input as a crash) when any single allocation, reallocation or zeroed
//! allocation asks for more than the limit, fallible ones (`try_reserve`, `try_alloc`) included: the
//! library must refuse a size that the input drives before it asks for the memory.
//!
//! libFuzzer's own `-malloc_limit_mb` works only through a sanitizer's malloc hooks, which the
//! `-s none` builds of `fuzz/smoke.sh` do not have, and `-rss_limit_mb` misses memory that is reserved
//! but never touched; this allocator catches both.
//!
//! The limit is `FUZZ_MALLOC_LIMIT_MB` MiB (environment variable, read at the first allocation;
//! default [`DEFAULT_LIMIT_MB`]). Used by every target in `fuzz/fuzz_targets/` and by the regression
//! test `tests/fuzz_regressions.rs` (as `#[path]` modules). Allocation-free: the message is written
//! with `write(2)` from a stack buffer.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::c_char;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// The default limit (MiB): no legitimate allocation of a fuzz target passes 64 MiB (a shard index of
/// 4 Mi entries under the targets' 4 MiB chunk bound), so one of 128 MiB is a blow-up of the input.
pub const DEFAULT_LIMIT_MB: usize = 128;

/// The environment variable that overrides [`DEFAULT_LIMIT_MB`] (a whole number of MiB, at least 1).
const ENV: &[u8] = b"FUZZ_MALLOC_LIMIT_MB\0";

/// The words every failure message holds (`fuzz/smoke.sh` and the regression test look for them).
const MARK: &[u8] = b"exceeds the fuzz allocation limit of ";

unsafe extern "C" {
    fn getenv(name: *const c_char) -> *const c_char;
    fn write(fd: i32, buf: *const u8, count: usize) -> isize;
}

/// The limit in bytes; 0 until read.
static LIMIT: AtomicUsize = AtomicUsize::new(0);

/// The name of the input being run (set by the regression test), for the message.
static INPUT: AtomicPtr<&'static str> = AtomicPtr::new(std::ptr::null_mut());

/// The global allocator: the system allocator behind the limit.
pub struct AllocLimit;

#[global_allocator]
static GLOBAL: AllocLimit = AllocLimit;

/// Names the input that runs next in the failure message (the regression test's files; libFuzzer
/// names its crash artifact itself).
#[allow(dead_code)]
pub fn set_input(name: &'static str) {
    INPUT.store(Box::into_raw(Box::new(name)), Ordering::Release);
}

/// The limit in bytes (reads `FUZZ_MALLOC_LIMIT_MB` once).
fn limit() -> usize {
    let l = LIMIT.load(Ordering::Relaxed);
    if l != 0 {
        return l;
    }
    // SAFETY: a NUL-terminated name; getenv neither allocates nor keeps the pointer.
    let v = unsafe { getenv(ENV.as_ptr().cast()) };
    let mb = if v.is_null() {
        DEFAULT_LIMIT_MB
    } else {
        // SAFETY: getenv returns a NUL-terminated string, valid while the environment is unchanged.
        let s = unsafe { std::ffi::CStr::from_ptr(v) }.to_bytes();
        match parse_mb(s) {
            Some(mb) => mb,
            None => fail(&[b"fuzz alloc_limit: FUZZ_MALLOC_LIMIT_MB must be a whole number of MiB from 1 to 2^44, not '", s, b"'\n"]),
        }
    };
    let l = mb << 20;
    LIMIT.store(l, Ordering::Relaxed);
    l
}

/// A whole number of MiB from 1 to 2^44 (so that the bytes fit 64 bits).
fn parse_mb(s: &[u8]) -> Option<usize> {
    if s.is_empty() || s.len() > 14 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mb = s.iter().fold(0usize, |acc, &d| acc * 10 + (d - b'0') as usize);
    (1..=1 << 44).contains(&mb).then_some(mb)
}

/// Writes `parts` to stderr and aborts.
fn fail(parts: &[&[u8]]) -> ! {
    for p in parts {
        // SAFETY: a valid buffer of that length; a short or failed write only shortens the message.
        unsafe { write(2, p.as_ptr(), p.len()) };
    }
    std::process::abort()
}

/// `n` in decimal, in `buf`.
fn decimal(mut n: usize, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

/// Aborts with the message when `size` is over the limit.
#[inline]
fn check(size: usize, what: &[u8]) {
    let l = limit();
    if size > l {
        over(size, l, what);
    }
}

#[cold]
#[inline(never)]
fn over(size: usize, l: usize, what: &[u8]) -> ! {
    let (mut a, mut b, mut c) = ([0u8; 20], [0u8; 20], [0u8; 20]);
    let input: &[u8] = match INPUT.load(Ordering::Acquire) {
        p if p.is_null() => b"",
        // SAFETY: set_input stores only leaked, never freed boxes.
        p => unsafe { *p }.as_bytes(),
    };
    let sep: &[u8] = if input.is_empty() { b"" } else { b"; input: " };
    fail(&[
        b"fuzz alloc_limit: ",
        what,
        b" of ",
        decimal(size, &mut a),
        b" bytes ",
        MARK,
        decimal(l, &mut b),
        b" bytes (FUZZ_MALLOC_LIMIT_MB=",
        decimal(l >> 20, &mut c),
        b"): the library must refuse a size that the input drives before allocating it",
        sep,
        input,
        b"\n",
    ])
}

// SAFETY: every call goes to the system allocator unchanged, or aborts before it.
unsafe impl GlobalAlloc for AllocLimit {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check(layout.size(), b"an allocation");
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check(layout.size(), b"a zeroed allocation");
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check(new_size, b"a reallocation");
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}
