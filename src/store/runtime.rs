//! The async runtime behind the remote stores: one small multi-thread tokio runtime, created on first
//! use and shared by every remote store. The C API stays synchronous: each store call runs its future
//! to completion with [`block_on`], on the calling thread (a caller's thread or a worker of the chunk
//! thread pool), while the runtime's own threads drive the sockets and timers.

use crate::error::{Error, Result};
use std::future::Future;
use std::sync::OnceLock;

static RUNTIME: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> = OnceLock::new();

/// The shared runtime (2 worker threads: they only move bytes between sockets and futures; decoding
/// happens on the calling threads).
fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("zarr-io")
                .enable_io()
                .enable_time()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| Error::Internal(format!("cannot start the I/O runtime: {e}")))
}

/// Runs `fut` to completion and returns its output. Safe to call from any thread, also from threads
/// inside another tokio runtime (there the future is spawned on ours and this thread waits for it,
/// instead of nesting runtimes, which tokio forbids).
pub fn block_on<F>(fut: F) -> Result<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let rt = runtime()?;
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    rt.spawn(async move {
        let _ = tx.send(fut.await);
    });
    rx.recv().map_err(|_| Error::Internal("an I/O task ended without a result".into()))
}

/// Starts `fut` on the runtime without waiting for it (its result goes where the future sends it).
pub fn spawn<F>(fut: F) -> Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    runtime()?.spawn(fut);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_futures_from_plain_and_runtime_threads() {
        assert_eq!(block_on(async { 41 + 1 }).unwrap(), 42);
        // From inside another runtime: no nested-runtime panic.
        let other = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let v = other.block_on(async { block_on(async { 7 }).unwrap() });
        assert_eq!(v, 7);
        // From many threads at once.
        let hs: Vec<_> = (0..8).map(|i| std::thread::spawn(move || block_on(async move { i * 2 }).unwrap())).collect();
        let sum: i32 = hs.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(sum, 56);
    }
}
