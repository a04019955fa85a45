//! The thread-local last error message, and the panic hook that captures panic messages silently.

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, CString};
use std::sync::Once;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    static IN_CALL: Cell<bool> = const { Cell::new(false) };
    static PANIC_MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Records `msg` as this thread's last error (interior NULs are replaced, secrets masked by
/// [`crate::store::redact::redact`]).
pub fn set_last_error(msg: &str) {
    let c = CString::new(crate::store::redact::redact(msg).replace('\0', "\\0")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// Marks whether this thread is inside a libzarr C call (panics are then captured, not printed).
pub fn set_in_call(on: bool) -> bool {
    IN_CALL.with(|c| c.replace(on))
}

/// The message of the last panic captured on this thread, if any (taken).
pub fn take_panic_message() -> Option<String> {
    PANIC_MESSAGE.with(|m| m.borrow_mut().take())
}

/// Installs (once) a panic hook that records panics raised inside libzarr calls or on libzarr's pool
/// threads instead of printing them, and defers to the previous hook otherwise.
pub fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let ours = IN_CALL.with(|c| c.get())
                || std::thread::current().name().is_some_and(|n| n.starts_with("zarr-"));
            if ours {
                let payload = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                let loc = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
                PANIC_MESSAGE.with(|m| *m.borrow_mut() = Some(format!("{payload}{loc}")));
            } else {
                previous(info);
            }
        }));
    });
}

/// The message of the last failed libzarr call on this thread.
///
/// Returns a NUL-terminated string owned by the library: never NULL (empty when no call has failed),
/// valid until the next failing call on this thread. Calls that succeed may leave it unchanged.
/// Thread-safe: each thread has its own message. Since: 0.1.
#[no_mangle]
pub extern "C" fn zarr_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}
