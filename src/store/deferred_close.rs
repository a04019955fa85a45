//! Closing replaced files off the writer's thread.
//!
//! When a write renames its temporary file over a key's file, the old file loses its last name. The
//! kernel frees it when its last reference goes, and on ext4 that free waits until the disk has
//! written the pages the rename itself sent out (`auto_da_alloc` starts writeback of a file renamed
//! over another). A writer that rewrites a large shard again and again would wait for the disk on
//! every call. So the filesystem store opens the old file before the rename and hands that
//! reference to one background thread, which closes it. The wait, and the freeing of the old
//! pages, then happen there.
//!
//! The queue is bounded ([`PENDING`]). When it is full, the writer waits, so at most that many
//! replaced files are kept alive. If the thread cannot be started, files are closed where they are
//! dropped, as before.

use std::fs::File;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Mutex, OnceLock};

/// Replaced files that may wait for the closing thread at one time.
const PENDING: usize = 16;

static CLOSER: OnceLock<Option<Mutex<SyncSender<File>>>> = OnceLock::new();

fn closer() -> Option<&'static Mutex<SyncSender<File>>> {
    CLOSER
        .get_or_init(|| {
            let (tx, rx) = sync_channel::<File>(PENDING);
            std::thread::Builder::new()
                .name("zarr-close".into())
                .spawn(move || {
                    for file in rx {
                        drop(file);
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

/// Closes `file` on the closing thread (or here, when that thread is not available).
pub(crate) fn close_later(file: File) {
    let Some(tx) = closer() else { return };
    // Cloning the sender keeps the lock only for the clone, not while a full queue blocks the send.
    let tx = tx.lock().unwrap_or_else(|e| e.into_inner()).clone();
    // A send fails only when the thread has gone; then the file is closed here.
    let _ = tx.send(file);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn closes_files_and_applies_backpressure() {
        let dir = std::env::temp_dir().join(format!("zarr-deferred-close-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // More files than the queue holds: the sends that find it full wait for the thread.
        for i in 0..(PENDING * 4) {
            let p = dir.join(format!("f{i}"));
            File::create(&p).unwrap().write_all(b"x").unwrap();
            let f = File::open(&p).unwrap();
            std::fs::remove_file(&p).unwrap();
            close_later(f);
        }
        // Every handed-over file is closed eventually: no descriptor of this process still names it.
        let p = dir.join("last");
        File::create(&p).unwrap();
        close_later(File::open(&p).unwrap());
        std::fs::remove_file(&p).unwrap();
        let open_on_last = || {
            std::fs::read_dir("/proc/self/fd")
                .unwrap()
                .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .any(|target| target.starts_with(&p) || target.to_string_lossy().starts_with(&*p.to_string_lossy()))
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while open_on_last() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!open_on_last(), "the closing thread did not close the file");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
