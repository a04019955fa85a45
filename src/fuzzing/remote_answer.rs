//! Fuzz target body `remote_answer`: the input is what an HTTP or S3 server answers. A server thread
//! on loopback (started once per process) answers each connection's request with the next answer of
//! the input, raw (status line, headers, body, cut short or not), then closes the connection. The
//! requests come from the real remote store (`http://` or `s3://` through [`crate::store::object`]
//! and the `object_store` client): whole GETs under a read limit, HEAD, ranged and suffix GETs,
//! streamed GETs, S3 listings and versioned GETs, and an array opened and read through the C API. So
//! the production path receives every answer: a body longer than asked for, a `Content-Length` of
//! 2^40, a wrong `Content-Range`, a truncated or malformed answer.
//!
//! Input: one flag byte (bit 0: S3, else plain HTTP), then up to [`MAX_ANSWERS`] answers, each a u32
//! LE length and that many bytes (the last one may be cut short by the end of the input). The i-th
//! request gets answer `i mod n`.

use super::{check_status, read_through_c, setup, take_sel};
use crate::store::{open_location_with, OpenHint, ReadLimit, Store, StoreOptions};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Most answers an input holds.
const MAX_ANSWERS: usize = 16;
/// The metadata ceiling of the remote store (bytes): a body longer than this is refused as it arrives.
const METADATA_CEILING: u64 = 16 << 10;
/// The limit of a whole-chunk GET (bytes).
const CHUNK_LIMIT: u64 = 4 << 10;
/// The most a streamed GET takes before its sink stops it (bytes).
const STREAM_LIMIT: usize = 1 << 20;

/// The answers of the input being run, and the index of the next one.
static ANSWERS: Mutex<(Vec<Vec<u8>>, usize)> = Mutex::new((Vec::new(), 0));
static PORT: OnceLock<Option<u16>> = OnceLock::new();

/// The port of the loopback server, started on first use.
fn server_port() -> Option<u16> {
    *PORT.get_or_init(|| {
        let listener = TcpListener::bind("127.0.0.1:0").ok()?;
        let port = listener.local_addr().ok()?.port();
        std::thread::Builder::new()
            .name("fuzz-server".into())
            .spawn(move || {
                for conn in listener.incoming().flatten() {
                    let _ = std::thread::Builder::new().name("fuzz-answer".into()).spawn(move || answer(conn));
                }
            })
            .ok()?;
        Some(port)
    })
}

/// Reads one request's head from `conn`, writes the next answer and closes the connection.
fn answer(mut conn: TcpStream) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
        if request.len() > 1 << 16 {
            return;
        }
    }
    let reply = {
        let mut a = ANSWERS.lock().unwrap_or_else(|e| e.into_inner());
        if a.0.is_empty() {
            return;
        }
        let i = a.1 % a.0.len();
        a.1 += 1;
        a.0[i].clone()
    };
    let _ = conn.write_all(&reply);
    let _ = conn.shutdown(Shutdown::Both);
}

/// The answers of an input (after the flag byte).
fn split_answers(mut rest: &[u8]) -> Vec<Vec<u8>> {
    let mut answers = Vec::new();
    while rest.len() >= 4 && answers.len() < MAX_ANSWERS {
        let n = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")) as usize;
        let body = &rest[4..];
        let take = n.min(body.len());
        answers.push(body[..take].to_vec());
        rest = &body[take..];
    }
    answers
}

/// `remote_answer`: a flag byte, then the server's answers.
pub fn remote_answer(data: &[u8]) {
    setup();
    let Some((&flags, rest)) = data.split_first() else { return };
    let answers = split_answers(rest);
    if answers.is_empty() {
        return;
    }
    let Some(port) = server_port() else { return };
    *ANSWERS.lock().unwrap_or_else(|e| e.into_inner()) = (answers, 0);
    let s3 = flags & 1 == 1;
    let mut options = vec![
        ("retries", "0".to_string()),
        ("timeout_ms", "3000".to_string()),
        ("connect_timeout_ms", "1000".to_string()),
        ("max_concurrency", "1".to_string()),
        ("max_metadata_bytes", METADATA_CEILING.to_string()),
    ];
    let location = if s3 {
        options.push(("endpoint", format!("http://127.0.0.1:{port}")));
        options.push(("path_style", "true".to_string()));
        options.push(("anonymous", "true".to_string()));
        "s3://bucket/arr".to_string()
    } else {
        format!("http://127.0.0.1:{port}/arr")
    };
    let mut o = StoreOptions::new();
    for (k, v) in &options {
        o.set(k, v).expect("valid store option");
    }
    if let Ok(store) = open_location_with(&location, &o) {
        exercise(store.as_ref(), s3);
    }
    read_array(&location, &options, &take_sel(&[flags]).0);
    // Requests still in flight (none should be) get no answer from the next input.
    ANSWERS.lock().unwrap_or_else(|e| e.into_inner()).0.clear();
}

/// Reads through the store's request kinds, each an answer (or more) of the input.
fn exercise(store: &dyn Store, s3: bool) {
    let mut buf = Vec::new();
    internal(&store.get_into("zarr.json", &mut buf, ReadLimit::metadata(METADATA_CEILING)));
    internal(&store.get_into("c/0", &mut buf, ReadLimit::chunk(CHUNK_LIMIT)));
    let read = |src: &dyn crate::store::ByteSource| {
        let len = src.len();
        let n = len.min(64) as usize;
        let mut buf = vec![0u8; n];
        internal(&src.read_into(0, &mut buf));
        internal(&src.read_into(len - n as u64, &mut buf));
        internal(&src.read_into(len / 2, &mut buf[..n / 2]));
    };
    match store.open("c/0") {
        Ok(Some(src)) => read(src.as_ref()),
        r => internal(&r.map(|_| ())),
    }
    for hint in [OpenHint::Tail(48), OpenHint::Range(8, 40), OpenHint::Head(16)] {
        match store.open_hinted("c/0", hint) {
            Ok(Some(src)) => read(src.as_ref()),
            r => internal(&r.map(|_| ())),
        }
    }
    let mut taken = 0usize;
    internal(&store.stream_value("c/1", None, &mut |piece| {
        taken += piece.len();
        if taken > STREAM_LIMIT {
            return Err(crate::Error::Io("streamed more than the fuzz target takes".into()));
        }
        Ok(())
    }));
    internal(&store.exists("c/2"));
    if s3 {
        internal(&store.list_dir(""));
        internal(&store.list_dir("c/"));
        if let Some(c) = store.conditional() {
            internal(&c.get_versioned("c/3", ReadLimit::chunk(CHUNK_LIMIT)));
        }
    }
}

/// A panic when `r` is [`crate::Error::Internal`] ("a library bug", e.g. an I/O task that panicked).
fn internal<T>(r: &crate::Result<T>) {
    if let Err(crate::Error::Internal(m)) = r {
        panic!("internal error from a remote answer: {m}");
    }
}

/// Opens the array at `location` with `options` through the C API and reads it ([`read_through_c`]).
fn read_array(location: &str, options: &[(&str, String)], sel: &[u8; 8]) {
    use crate::ffi::store_options::*;
    let Ok(loc) = std::ffi::CString::new(location) else { return };
    let mut o = std::ptr::null_mut();
    // SAFETY: a valid output pointer; the handle is freed below.
    check_status(unsafe { zarr_store_options_create(&mut o) });
    for (k, v) in options {
        let (k, v) = (std::ffi::CString::new(*k).expect("no NUL"), std::ffi::CString::new(v.as_str()).expect("no NUL"));
        // SAFETY: a live options handle and NUL-terminated strings.
        check_status(unsafe { zarr_store_options_set(o, k.as_ptr(), v.as_ptr()) });
    }
    // SAFETY: a NUL-terminated location, a live options handle and a valid output pointer.
    read_through_c(sel, |a| unsafe { zarr_open_with_options(loc.as_ptr(), o, crate::ffi::array::ZARR_READ, a) });
    // SAFETY: the handle made above, freed once.
    unsafe { zarr_store_options_free(o) };
}
