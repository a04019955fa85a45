//! C functions for store options (settings of remote stores: endpoint, credentials, timeouts,
//! retries, concurrency) and the open/create calls that take them.
//!
//! Locations `s3://bucket/prefix`, `http://host/path` and `https://host/path` work with the plain calls
//! too (zarr_open(), zarr_group_open(), ...), set up from the standard environment: AWS_ACCESS_KEY_ID,
//! AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL (unsigned, anonymous
//! requests when no credentials are set). The `*_with_options` calls overlay explicit settings.

use super::array::{new_array, parse_mode, zarr_array};
use super::group::zarr_group;
use super::handle::{handle_kind, new_handle, HandleKind};
use super::spec::zarr_array_spec;
use super::status::*;
use super::{guard, str_arg};
use crate::array::Array;
use crate::error::Result;
use crate::group::Group;
use crate::store::{open_location_with, Store, StoreOptions};
use std::ffi::{c_char, c_int};
use std::sync::Arc;

/// Settings for remote stores (opaque), created by zarr_store_options_create(), filled by
/// zarr_store_options_set() / zarr_store_options_set_json(), passed to the `*_with_options` calls
/// (which copy what they need: the options may be freed right after), freed by
/// zarr_store_options_free().
///
/// Keys (values are strings; booleans `true`/`false`, integers in decimal):
/// - `endpoint`: URL of an S3-compatible server (e.g. `http://127.0.0.1:9000`); default AWS_ENDPOINT_URL,
///   else AWS itself.
/// - `region`: default AWS_REGION, else `us-east-1`.
/// - `access_key_id`, `secret_access_key`, `session_token`: credentials (default: the AWS_* variables;
///   with none, requests are unsigned).
/// - `anonymous`: `true` sends unsigned requests even when credentials are set.
/// - `path_style`: `true` for path-style requests (`endpoint/bucket/key`), `false` for virtual-hosted
///   (`bucket.endpoint/key`).
/// - `allow_http`: allow a plain `http://` S3 endpoint (default: true when `endpoint` is written as
///   `http://`).
/// - `timeout_ms` (default 30000): limit of one request; `connect_timeout_ms` (default 5000).
/// - `retries` (default 3): retries of transient failures (5xx, dropped connections, timeouts), with
///   exponential backoff.
/// - `max_concurrency` (default 64, or ZARR_REMOTE_CONCURRENCY): requests in flight at once: one
///   pool of that many I/O threads serves every calling thread, which share it fairly.
/// - `multipart_threshold` (default 16 MiB, at least 5 MiB): larger values are uploaded in parts.
/// - `multipart_part_size` (default 8 MiB, 5 MiB to 5 GiB): the size of those parts, all in flight at
///   once up to `max_concurrency`.
/// - `conditional_put` (default `true`): a write covering part of a chunk or shard on S3 stores the
///   merged value with a conditional PUT (`If-Match` / `If-None-Match`) and redoes the merge when
///   another writer changed the object meanwhile; `false`: plain PUTs (the last writer wins).
/// - `latency_ms` (a decimal number, 0 to 600000) and `bandwidth_bytes_per_s` (1 to 2^40): the
///   round-trip latency and the bandwidth of one answer to assume, instead of those learned from the
///   handle's requests; `speculative_read_max` (default 8 MiB, 0 to 1 GiB; 0: off): the most bytes a
///   shard's first read fetches beyond its index to save a round trip (docs/remote-stores.md,
///   "Speculative shard reads"). Since: 0.4.
/// - `reference_target` (`reference://` locations): the target URL of kerchunk references whose URL
///   is null (fsspec's default `target`). Since: 0.4.
/// - `icechunk_authorize_virtual` (`icechunk://` locations): the URL prefixes, comma-separated, of
///   the repository's virtual chunk containers whose files may be read (Icechunk's
///   `authorize_virtual_chunk_access`). A virtual chunk outside them is ZARR_ERR_IO. Since: 0.4.
/// - `max_metadata_bytes` (every kind of store; default ZARR_MAX_METADATA_BYTES, else 64 MiB;
///   1 to 2^48; Since: 0.4): the metadata ceiling of the opened store, the most bytes one metadata
///   document read from it (`zarr.json`, `.zarray`, `.zattrs`, `.zmetadata`, ...) may have; it also
///   bounds the document's JSON values (one per 128 bytes). A larger document is ZARR_ERR_MEMORY
///   before it is read (docs/limits.md). It wins over ZARR_MAX_METADATA_BYTES for this store only.
/// - `confine` (filesystem stores; default `false`, or `true` when the environment has
///   ZARR_CONFINE=1; Since: 0.4): `true` confines every access (read, write, listing, lock file,
///   delete, move) to the store's root directory, for stores from untrusted sources. A symbolic link
///   leading out of the root (an absolute link, or `..` above the root) is refused with ZARR_ERR_IO
///   before anything outside is read, written or created (`openat2` with `RESOLVE_BENEATH`; on
///   kernels without `openat2`, before Linux 5.6, every symbolic link is refused). Without it, reads
///   and writes follow symbolic links wherever they lead, as every Zarr implementation does (a chunk
///   directory may link to another disk). Deleting and moving never follow a link, confined or not:
///   zarr_group_delete_member() removes a link as a link, and fails with ZARR_ERR_IO when the member
///   lies below a directory that is a link.
///
/// Thread-safety: a zarr_store_options may be passed to several open calls at once, but must not be
/// changed or freed while another thread uses it.
pub struct zarr_store_options {
    _opaque: [u8; 0],
}

handle_kind!(
    zarr_store_options,
    StoreOptions,
    0x7a61_7272_5354_4f50, // "zarrSTOP"
    "zarr_store_options is NULL",
    "not a live zarr_store_options (freed or corrupt?)"
);

/// Creates an empty set of store options (everything from the environment and the defaults).
///
/// @param out  receives the new options; NULL on failure. Free with zarr_store_options_free().
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (`out` NULL).
/// Thread-safe. Since: 0.3.
///
/// # Safety
/// `out` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_options_create(out: *mut *mut zarr_store_options) -> zarr_status {
    // SAFETY: `out` follows the documented contract.
    unsafe { new_handle(out, || Ok(StoreOptions::new())) }
}

/// Sets one option (see zarr_store_options for the keys). An empty `value` removes the key.
///
/// @param options  options from zarr_store_options_create()
/// @param key      option name (NUL-terminated)
/// @param value    its value (NUL-terminated)
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL argument, unknown key, malformed value: the
///          options are unchanged); ZARR_ERR_INVALID_HANDLE.
/// Not thread-safe with other calls on the same options. Since: 0.3.
///
/// # Safety
/// `options` is a live handle; `key` and `value` are NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_options_set(
    options: *mut zarr_store_options,
    key: *const c_char,
    value: *const c_char,
) -> zarr_status {
    guard(|| {
        // SAFETY: arguments follow the documented contract.
        let o = unsafe { zarr_store_options::get_mut(options) }?;
        let key = unsafe { str_arg(key, "key") }?;
        let value = unsafe { str_arg(value, "value") }?;
        o.set(key, value)
    })
}

/// Sets every member of a JSON object, e.g. `{"endpoint": "http://127.0.0.1:9000", "retries": 2}`
/// (values: strings, numbers or booleans). All or nothing: on error the options are unchanged.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL, not a JSON object, unknown key, bad value);
///          ZARR_ERR_INVALID_HANDLE.
/// Not thread-safe with other calls on the same options. Since: 0.3.
///
/// # Safety
/// `options` is a live handle; `json` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_options_set_json(options: *mut zarr_store_options, json: *const c_char) -> zarr_status {
    guard(|| {
        // SAFETY: arguments follow the documented contract.
        let o = unsafe { zarr_store_options::get_mut(options) }?;
        let json = unsafe { str_arg(json, "json") }?;
        o.set_json(json)
    })
}

/// Frees store options. NULL is a no-op. Arrays and groups opened with them stay valid.
///
/// Not thread-safe with other calls on the same options. Since: 0.3.
///
/// # Safety
/// `options` is NULL or returned by zarr_store_options_create() and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn zarr_store_options_free(options: *mut zarr_store_options) {
    let _ = guard(|| unsafe { zarr_store_options::close(options) });
}

/// The store for `location` with `options` (NULL: none).
///
/// # Safety
/// `location` is a NUL-terminated string; `options` NULL or a live handle.
unsafe fn store_arg(location: *const c_char, options: *const zarr_store_options) -> Result<Arc<dyn Store>> {
    // SAFETY: the caller's contract.
    let location = unsafe { str_arg(location, "location") }?;
    if options.is_null() {
        return open_location_with(location, &StoreOptions::new());
    }
    // SAFETY: the caller's contract.
    open_location_with(location, unsafe { zarr_store_options::get(options) }?)
}

/// As zarr_open(), with store options: opens the array at `location` (a path, `file://`, `s3://bucket/prefix`,
/// `http://` or `https://` URL; HTTP locations are read-only).
///
/// @param location  where the array's metadata lies (NUL-terminated)
/// @param options   store options, or NULL for the environment's settings; not retained
/// @param mode      ZARR_READ or ZARR_READ_WRITE (ZARR_READ_WRITE on HTTP: writes fail ZARR_ERR_READ_ONLY)
/// @param out       receives the new handle; NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL argument, bad mode, malformed URL);
///          ZARR_ERR_INVALID_HANDLE (stale options); ZARR_ERR_NOT_FOUND; ZARR_ERR_METADATA;
///          ZARR_ERR_UNSUPPORTED (unknown URI scheme, codec or type); ZARR_ERR_IO (the server failed or
///          could not be reached after the retries; the message names the URL and the HTTP status).
/// Thread-safe. Since: 0.3.
///
/// # Safety
/// `location` is a NUL-terminated string; `options` NULL or a live handle; `out` valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_open_with_options(
    location: *const c_char,
    options: *const zarr_store_options,
    mode: c_int,
    out: *mut *mut zarr_array,
) -> zarr_status {
    let make = || {
        let writable = parse_mode(mode)?;
        // SAFETY: the documented contract.
        Array::open(unsafe { store_arg(location, options) }?, "", writable)
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_array(out, make) }
}

/// As zarr_create(), with store options: creates an array at `location` from a complete metadata
/// document and opens it for reading and writing.
///
/// @param location       where to create the array (path, `file://` or `s3://bucket/prefix`)
/// @param options        store options, or NULL; not retained
/// @param metadata_json  a complete Zarr v3 `zarr.json` document
/// @param out            receives the new handle; NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_EXISTS;
///          ZARR_ERR_METADATA; ZARR_ERR_UNSUPPORTED; ZARR_ERR_READ_ONLY (an HTTP location); ZARR_ERR_IO.
/// Thread-safe. Since: 0.3.
///
/// # Safety
/// `location`, `metadata_json` are NUL-terminated strings; `options` NULL or a live handle; `out` valid.
#[no_mangle]
pub unsafe extern "C" fn zarr_create_with_options(
    location: *const c_char,
    options: *const zarr_store_options,
    metadata_json: *const c_char,
    out: *mut *mut zarr_array,
) -> zarr_status {
    let make = || {
        // SAFETY: the documented contract.
        let json = unsafe { str_arg(metadata_json, "metadata_json") }?;
        Array::create(unsafe { store_arg(location, options) }?, "", json)
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_array(out, make) }
}

/// As zarr_create_from_spec(), with store options: creates an array at `location` from a spec and
/// opens it for reading and writing.
///
/// @param location  where to create the array (path, `file://` or `s3://bucket/prefix`)
/// @param spec      the spec (not modified; may be used again)
/// @param options   store options, or NULL (then as zarr_create_from_spec()); not retained
/// @param out       receives the new handle (close with zarr_close()); NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE (`spec` or `options`); ZARR_ERR_INVALID_ARGUMENT (NULL
///          `location` or `out`, and as zarr_array_spec_to_json()); ZARR_ERR_UNSUPPORTED (as
///          zarr_array_spec_to_json(), or a scheme this build lacks); ZARR_ERR_EXISTS (an array or group
///          is already there); ZARR_ERR_READ_ONLY (an HTTP location); ZARR_ERR_IO.
/// Thread-safe. Since: 0.3.
///
/// # Safety
/// `location` is a NUL-terminated string; `spec` a live spec; `options` NULL or a live handle; `out`
/// valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_create_from_spec_with_options(
    location: *const c_char,
    spec: *const zarr_array_spec,
    options: *const zarr_store_options,
    out: *mut *mut zarr_array,
) -> zarr_status {
    let make = || {
        // SAFETY: the documented contract.
        let s = unsafe { zarr_array_spec::get(spec) }?;
        s.create(unsafe { store_arg(location, options) }?, "")
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_array(out, make) }
}

/// As zarr_group_open(), with store options. Listing children needs an S3 (or local) location: plain
/// HTTP cannot list (ZARR_ERR_UNSUPPORTED) unless the group has consolidated metadata.
///
/// @param location  where the group's metadata lies
/// @param options   store options, or NULL; not retained
/// @param mode      ZARR_READ or ZARR_READ_WRITE
/// @param out       receives the handle; NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_NOT_FOUND;
///          ZARR_ERR_METADATA; ZARR_ERR_UNSUPPORTED; ZARR_ERR_IO.
/// Thread-safe. Since: 0.3.
///
/// # Safety
/// `location` is a NUL-terminated string; `options` NULL or a live handle; `out` valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_open_with_options(
    location: *const c_char,
    options: *const zarr_store_options,
    mode: c_int,
    out: *mut *mut zarr_group,
) -> zarr_status {
    let make = || {
        // SAFETY: the documented contract.
        let g = Group::open(unsafe { store_arg(location, options) }?, "", parse_mode(mode)?)?;
        Ok(g)
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_handle(out, make) }
}

/// As zarr_group_create_ex(), with store options: creates a group of Zarr format 2 or 3 at `location`.
///
/// @param location         where to create the group (path, `file://` or `s3://bucket/prefix`)
/// @param options          store options, or NULL; not retained
/// @param attributes_json  a JSON object, or NULL for none
/// @param zarr_format      2 or 3
/// @param out              receives the handle; NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_EXISTS;
///          ZARR_ERR_READ_ONLY (an HTTP location); ZARR_ERR_IO.
/// Thread-safe. Since: 0.3.
///
/// # Safety
/// `location` is a NUL-terminated string, `attributes_json` NULL or one; `options` NULL or a live
/// handle; `out` valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_create_with_options(
    location: *const c_char,
    options: *const zarr_store_options,
    attributes_json: *const c_char,
    zarr_format: c_int,
    out: *mut *mut zarr_group,
) -> zarr_status {
    let make = || {
        let format = u8::try_from(zarr_format).ok().filter(|f| *f == 2 || *f == 3).ok_or_else(|| {
            crate::error::Error::InvalidArgument(format!("zarr_format must be 2 or 3, got {zarr_format}"))
        })?;
        // SAFETY: the documented contract.
        let attrs = super::group::attributes_arg(attributes_json)?;
        let g = Group::create(unsafe { store_arg(location, options) }?, "", attrs, format)?;
        Ok(g)
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_handle(out, make) }
}

/// `location` (or any message text) with its secrets replaced by `***`: the password of a URL's user
/// information, signature and credential query parameters of presigned URLs (`X-Amz-Signature`,
/// `X-Amz-Credential`, `X-Amz-Security-Token`, ...), and the secret keys and session tokens known to
/// this process (AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, the `secret_access_key` and `session_token`
/// store options). For programs that print a location they were given, as zarrdump does; libzarr's
/// own messages (zarr_last_error()) are already masked this way.
///
/// @param location  NUL-terminated text
/// @param out       receives the masked text, to free with zarr_string_free(); NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (`location` or `out` NULL, `location` not UTF-8).
/// Thread-safe. Since: 0.3.
///
/// # Safety
/// `location` is NULL or a NUL-terminated string; `out` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_location_redacted(location: *const c_char, out: *mut *mut c_char) -> zarr_status {
    // SAFETY: arguments follow the documented contract.
    unsafe {
        super::new_string(out, "out", || {
            let text = str_arg(location, "location")?;
            Ok(crate::store::redact::redact(text))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::ptr;

    #[test]
    fn options_handle_and_open_with_options() {
        let mut o: *mut zarr_store_options = ptr::null_mut();
        unsafe {
            assert_eq!(zarr_store_options_create(&mut o), ZARR_OK);
            let k = CString::new("retries").unwrap();
            assert_eq!(zarr_store_options_set(o, k.as_ptr(), c"2".as_ptr()), ZARR_OK);
            assert_eq!(zarr_store_options_set(o, c"no_such_key".as_ptr(), c"1".as_ptr()), ZARR_ERR_INVALID_ARGUMENT);
            assert_eq!(zarr_store_options_set(o, k.as_ptr(), c"lots".as_ptr()), ZARR_ERR_INVALID_ARGUMENT);
            assert_eq!(zarr_store_options_set(o, k.as_ptr(), ptr::null()), ZARR_ERR_INVALID_ARGUMENT);
            assert_eq!(zarr_store_options_set_json(o, c"{\"timeout_ms\": 1000}".as_ptr()), ZARR_OK);
            assert_eq!(zarr_store_options_set_json(o, c"[]".as_ptr()), ZARR_ERR_INVALID_ARGUMENT);
            assert_eq!(zarr_store_options_set(ptr::null_mut(), k.as_ptr(), c"1".as_ptr()), ZARR_ERR_INVALID_HANDLE);

            // Local locations ignore the options; create a group and an array, open them again.
            let dir = std::env::temp_dir().join(format!("zarr-store-options-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            let loc = CString::new(dir.to_str().unwrap()).unwrap();
            let mut g: *mut zarr_group = ptr::null_mut();
            assert_eq!(zarr_group_create_with_options(loc.as_ptr(), o, ptr::null(), 3, &mut g), ZARR_OK);
            assert_eq!(crate::ffi::group::zarr_group_close(g), ZARR_OK);
            assert_eq!(zarr_group_create_with_options(loc.as_ptr(), o, ptr::null(), 4, &mut g), ZARR_ERR_INVALID_ARGUMENT);
            assert!(g.is_null());
            assert_eq!(zarr_group_open_with_options(loc.as_ptr(), ptr::null(), super::super::array::ZARR_READ, &mut g), ZARR_OK);
            assert_eq!(crate::ffi::group::zarr_group_close(g), ZARR_OK);
            let aloc = CString::new(dir.join("a").to_str().unwrap()).unwrap();
            let meta = CString::new(
                r#"{"zarr_format":3,"node_type":"array","shape":[4],"data_type":"uint8","chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},"chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes"}]}"#,
            )
            .unwrap();
            let mut a: *mut zarr_array = ptr::null_mut();
            assert_eq!(zarr_create_with_options(aloc.as_ptr(), o, meta.as_ptr(), &mut a), ZARR_OK);
            assert_eq!(crate::ffi::array::zarr_close(a), ZARR_OK);
            assert_eq!(zarr_open_with_options(aloc.as_ptr(), o, super::super::array::ZARR_READ, &mut a), ZARR_OK);
            assert_eq!(crate::ffi::array::zarr_close(a), ZARR_OK);
            assert_eq!(zarr_open_with_options(aloc.as_ptr(), o, 7, &mut a), ZARR_ERR_INVALID_ARGUMENT);
            let gs = CString::new("gs://bucket/x").unwrap();
            assert_eq!(zarr_open_with_options(gs.as_ptr(), o, super::super::array::ZARR_READ, &mut a), ZARR_ERR_UNSUPPORTED);
            zarr_store_options_free(o);
            zarr_store_options_free(ptr::null_mut());
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}
