//! The thread pool that encodes and decodes chunks.
//!
//! Its size comes from `ZARR_NUM_THREADS` (read when the pool is first used; default: the number of
//! CPUs) or from [`set_num_threads`]. Calls on remote stores run inside [`io_scope`]: on an I/O pool
//! with as many threads as requests should be in flight (each thread blocks on its request; the pool
//! is shared by every calling thread, so the limit holds for all of them together and their items
//! take turns), and the parallel helpers called inside stay on that pool, one item per task so that
//! an idle thread always takes the next request; what a request fetched is decoded by the thread that
//! fetched it, at most `ZARR_NUM_THREADS` of them at once ([`compute`]).

use crate::error::{Error, Result};
use std::cell::Cell;
use std::sync::{Arc, Mutex, RwLock};

static POOL: RwLock<Option<Arc<rayon::ThreadPool>>> = RwLock::new(None);
static IO_POOL: Mutex<Option<Arc<rayon::ThreadPool>>> = Mutex::new(None);

thread_local! {
    /// Whether this thread is a worker of one of our pools (then nested parallel work stays on it).
    static ON_OUR_POOL: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread is a worker of the I/O pool (see [`compute`]).
    static ON_IO_POOL: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread runs [`compute`] work on the I/O pool: parallel helpers inside run serially.
    static IN_COMPUTE: Cell<bool> = const { Cell::new(false) };
}

/// Decoding slots of the I/O pool's threads ([`compute`]): how many decode at this moment.
static DECODING: (Mutex<usize>, std::sync::Condvar) = (Mutex::new(0), std::sync::Condvar::new());

fn default_threads() -> usize {
    std::env::var("ZARR_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
}

fn build(n: usize) -> Result<Arc<rayon::ThreadPool>> {
    build_named(n, "zarr")
}

fn build_named(n: usize, name: &'static str) -> Result<Arc<rayon::ThreadPool>> {
    let io = name == "zarr-io";
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(move |i| format!("{name}-{i}"))
        .start_handler(move |_| {
            ON_OUR_POOL.with(|c| c.set(true));
            ON_IO_POOL.with(|c| c.set(io));
        })
        .build()
        .map(Arc::new)
        .map_err(|e| Error::Internal(format!("cannot start the thread pool: {e}")))
}

/// The pool, created on first use.
pub fn pool() -> Result<Arc<rayon::ThreadPool>> {
    if let Some(p) = POOL.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
        return Ok(p.clone());
    }
    let mut slot = POOL.write().unwrap_or_else(|e| e.into_inner());
    if slot.is_none() {
        *slot = Some(build(default_threads())?);
    }
    Ok(slot.as_ref().unwrap().clone())
}

/// Replaces the pool by one of `n` threads (`0`: the default from `ZARR_NUM_THREADS` or the CPU count).
/// Calls already running finish on the old pool.
pub fn set_num_threads(n: usize) -> Result<()> {
    let n = if n == 0 { default_threads() } else { n };
    if n > 4096 {
        return Err(Error::InvalidArgument(format!("{n} threads is more than the 4096 allowed")));
    }
    let p = build(n)?;
    *POOL.write().unwrap_or_else(|e| e.into_inner()) = Some(p);
    Ok(())
}

/// The number of threads in the pool.
pub fn num_threads() -> Result<usize> {
    Ok(pool()?.current_num_threads())
}

/// Runs `f` on the pool: on the current one when this thread already is a worker of one of ours (the
/// chunk pool, or the I/O pool of an [`io_scope`]), otherwise on the chunk pool.
fn on_pool<R: Send>(f: impl FnOnce() -> Result<R> + Send) -> Result<R> {
    if ON_OUR_POOL.with(|c| c.get()) {
        f()
    } else {
        pool()?.install(f)
    }
}

/// Runs `f` with `concurrency` threads for the parallel helpers inside it, for calls whose work
/// blocks on remote requests (`concurrency` = the store's [`crate::store::Store::io_concurrency`]):
/// `0` runs `f` as it is (local stores); otherwise `f` runs on the I/O pool, (re)built with that many
/// threads, so that up to `concurrency` chunks are fetched at once.
pub fn io_scope<R: Send>(concurrency: usize, f: impl FnOnce() -> Result<R> + Send) -> Result<R> {
    if concurrency == 0 || ON_OUR_POOL.with(|c| c.get()) {
        return f();
    }
    let p = {
        let mut slot = IO_POOL.lock().unwrap_or_else(|e| e.into_inner());
        match slot.as_ref() {
            Some(p) if p.current_num_threads() == concurrency => p.clone(),
            _ => {
                let p = build_named(concurrency.min(1024), "zarr-io")?;
                *slot = Some(p.clone());
                p
            }
        }
    };
    p.install(f)
}

/// Runs CPU work `f` (decoding what a request fetched). On a thread of the I/O pool `f` runs on
/// that thread once one of `ZARR_NUM_THREADS` decoding slots is free (so decoding uses as many cores
/// as the chunk pool would, however many requests are in flight), and the parallel helpers inside it
/// run serially: the thread neither waits for other tasks nor takes up a request meanwhile (handing
/// the work to the chunk pool would let the waiting thread take up another request and hold the
/// decoded result back until that request ended). Elsewhere `f` runs as it is.
pub fn compute<R: Send>(f: impl FnOnce() -> Result<R> + Send) -> Result<R> {
    if !ON_IO_POOL.with(|c| c.get()) || IN_COMPUTE.with(|c| c.get()) {
        return f();
    }
    let slots = num_threads()?.max(1);
    {
        let mut busy = DECODING.0.lock().unwrap_or_else(|e| e.into_inner());
        while *busy >= slots {
            busy = DECODING.1.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
        *busy += 1;
    }
    struct Release;
    impl Drop for Release {
        fn drop(&mut self) {
            IN_COMPUTE.with(|c| c.set(false));
            *DECODING.0.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
            DECODING.1.notify_one();
        }
    }
    IN_COMPUTE.with(|c| c.set(true));
    let _release = Release;
    f()
}

/// How the parallel helpers run on this thread.
enum Mode {
    /// One after the other (inside [`compute`] on the I/O pool).
    Serial,
    /// On the I/O pool, one item per task (each may block on a request).
    Io,
    /// On the chunk pool, split adaptively.
    Chunk,
}

fn mode() -> Mode {
    if IN_COMPUTE.with(|c| c.get()) {
        Mode::Serial
    } else if ON_IO_POOL.with(|c| c.get()) {
        Mode::Io
    } else {
        Mode::Chunk
    }
}

/// Runs `f` on every item, in parallel on the pool when there is more than one item; stops at the
/// first error.
pub fn try_for_each<T: Sync>(items: &[T], f: impl Fn(&T) -> Result<()> + Sync + Send) -> Result<()> {
    if items.len() <= 1 {
        return items.iter().try_for_each(f);
    }
    use rayon::prelude::*;
    match mode() {
        Mode::Serial => items.iter().try_for_each(f),
        Mode::Io => items.par_iter().with_max_len(1).try_for_each(&f),
        Mode::Chunk => on_pool(|| items.par_iter().try_for_each(&f)),
    }
}

/// Maps every item in parallel on the pool (in order); stops at the first error.
pub fn try_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> Result<R> + Sync + Send) -> Result<Vec<R>> {
    if items.len() <= 1 {
        return items.iter().map(f).collect();
    }
    use rayon::prelude::*;
    match mode() {
        Mode::Serial => items.iter().map(f).collect(),
        Mode::Io => items.par_iter().with_max_len(1).map(&f).collect(),
        Mode::Chunk => on_pool(|| items.par_iter().map(&f).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts how many run a section at once, and the most ever.
    #[derive(Default)]
    struct Gauge {
        now: AtomicUsize,
        max: AtomicUsize,
    }

    impl Gauge {
        fn during<R>(&self, f: impl FnOnce() -> R) -> R {
            let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
            self.max.fetch_max(n, Ordering::SeqCst);
            let r = f();
            self.now.fetch_sub(1, Ordering::SeqCst);
            r
        }
    }

    #[test]
    fn io_scope_keeps_every_thread_busy_and_bounds_decoding() {
        let (waiting, decoding) = (Gauge::default(), Gauge::default());
        let items: Vec<usize> = (0..48).collect();
        let done = AtomicUsize::new(0);
        io_scope(16, || {
            try_for_each(&items, |_| {
                // A request: blocks without work.
                waiting.during(|| std::thread::sleep(std::time::Duration::from_millis(30)));
                compute(|| {
                    decoding.during(|| {
                        // Nested helpers inside decoding run serially on this thread.
                        let me = std::thread::current().id();
                        try_for_each(&[0, 1, 2, 3], |_| {
                            assert_eq!(std::thread::current().id(), me);
                            Ok(())
                        })
                    })
                })?;
                done.fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
        })
        .unwrap();
        assert_eq!(done.load(Ordering::SeqCst), 48);
        // The I/O pool's threads wait on "requests" together (16 when none is slow to wake up).
        let max = waiting.max.load(Ordering::SeqCst);
        assert!((12..=16).contains(&max), "{max} in flight");
        assert!(decoding.max.load(Ordering::SeqCst) <= num_threads().unwrap());
    }
}
