//! Remote stores over object storage: S3 and S3-compatible servers (`s3://bucket/prefix`, read and
//! write) and plain HTTP(S) servers (`http://host/path`, `https://...`, read-only), both through the
//! `object_store` crate (request signing, retries with backoff, multipart upload, conditional PUT).
//!
//! Mapping of the [`Store`] operations to requests:
//! - `get` / `get_into`: one GET; 404 is `None` (the chunk is missing: fill value). A body longer
//!   than the read's limit ([`ReadLimit`]: the metadata ceiling, a chunk's largest encoding) fails
//!   at its `Content-Length`, or as it passes the limit; a ranged GET's body, past the range.
//! - `open` + [`ByteSource::read_into`]: one HEAD for the size, then one ranged GET per range read;
//!   `open_hinted` (a shard read): one ranged GET of the index (a suffix range when it is at the end)
//!   that also learns the size and ETag, then ranged GETs of coalesced runs of inner chunks, each
//!   conditional on that ETag (`If-Match`), so a shard replaced in between is an error the reader
//!   retries, never a mix of two versions; `open_version`: the same without the first request, for a
//!   reader that kept the index of that ETag.
//! - `set`: one PUT (atomic by the protocol: readers see the old or the new object); values over the
//!   `multipart_threshold` option (default 16 MiB) go up as a multipart upload in parts of
//!   `multipart_part_size` (default 8 MiB), up to `max_concurrency` parts in flight, which also
//!   becomes visible at once when completed, and is aborted on failure (nothing changes).
//! - `delete`: DELETE (absent keys succeed); `list_dir`: S3 list with delimiter `/`. Plain HTTP cannot
//!   list: [`Error::Unsupported`] (groups served over HTTP need consolidated metadata).
//! - Every failure other than "not found" is [`Error::Io`] naming the URL of the key and, where the
//!   server answered, the HTTP status. Transient failures (5xx, dropped connections, timeouts) are
//!   retried `retries` times with exponential backoff; each request is bounded by `timeout_ms`.
//!
//! Concurrent writers: object stores have no locks ([`Store::lock`] takes none). Each PUT replaces the
//! whole object atomically, so for one key the last writer wins and no reader sees a torn value. A
//! write covering only part of a chunk or shard is a read-modify-write; on S3 it goes through
//! [`Store::conditional`]: the chunk is read with its ETag (`get_versioned`) and the merged value is
//! PUT with `If-Match: <ETag>` (`If-None-Match: *` when the chunk did not exist); when another writer
//! changed the object meanwhile (412 Precondition Failed) the chunk is read again and the merge redone
//! (up to 16 tries with a random, growing pause, then [`Error::Io`]; see
//! `crate::array::conditional_write`). So writers of different inner chunks of one shard, in any
//! process, keep each other's updates. A conditional PUT is always one request (no multipart upload;
//! S3 takes up to 5 GiB in one PUT). Where the server answers 501 Not Implemented, this store stops
//! asking and updates fall back to plain PUTs (last writer wins, as with the `conditional_put=false`
//! option); a server that ignores the headers silently also gives last-writer-wins. A chunk whose
//! merge comes out all fill value is stored (conditionally) as the encoded fill chunk instead of
//! being deleted, as S3 cannot delete conditionally. Whole-chunk writes are plain PUTs (they do not
//! depend on what was stored). Plain HTTP stores are read-only: creating a node there fails with
//! [`Error::ReadOnly`] before any request ([`Store::ensure_writable`]).

use super::link_estimate::LinkEstimate;
use super::options::StoreOptions;
use super::redact::{redact, redact_error, register_secret};
use super::runtime::block_on;
use super::{check_range, ByteSource, ConditionalStore, DirListing, OpenHint, ReadLimit, Store, ValueVersion};
use crate::error::{Error, Result};
use bytes::Bytes;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectMeta, ObjectStore, PutMode, PutOptions, PutPayload, UpdateVersion};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The largest body buffer a request thread keeps for its next GET (larger ones are freed after use).
const KEPT_BODY_CAPACITY: usize = 8 << 20;
/// The most a GET reserves for its body before the body arrives.
const RESERVE_BOUND: u64 = 256 << 20;
/// The most parts S3 takes in one multipart upload.
const MAX_PARTS: usize = 10_000;

/// Which protocol a remote store speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// S3 or an S3-compatible server: read, write, list.
    S3,
    /// Plain HTTP(S): read only, no listing.
    Http,
}

/// A [`Store`] over an `object_store` backend, with all keys under a prefix.
pub struct ObjectStoreAdapter {
    inner: Arc<dyn ObjectStore>,
    protocol: Protocol,
    /// The location as the caller wrote it, without a trailing `/` and with secrets masked (for
    /// messages).
    url: String,
    /// Key prefix inside the backend (no leading or trailing `/`; empty for the root).
    prefix: String,
    multipart_threshold: usize,
    multipart_part_size: usize,
    concurrency: usize,
    bytes_read: Arc<AtomicU64>,
    /// Whether partial chunk updates use conditional PUTs ([`Store::conditional`]): S3 with the
    /// `conditional_put` option not off, until the server answers that it does not implement them.
    conditional_put: AtomicBool,
    /// The round trip's latency and bandwidth, learned from this handle's requests (or fixed by the
    /// options): how much a shard's first read fetches beyond its index.
    link: Arc<LinkEstimate>,
    /// Set once the server answered a suffix range (`bytes=-n`) with anything but that range: later
    /// opens ask for the size first (HEAD), then a bounded range.
    no_suffix: AtomicBool,
}

impl std::fmt::Debug for ObjectStoreAdapter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectStoreAdapter").field("protocol", &self.protocol).field("url", &self.url).finish()
    }
}

/// Whether an error is the server's "501 Not Implemented" (an S3-compatible server without
/// conditional PUT). `object_store` reports it as a generic error whose message carries the status.
fn is_not_implemented(e: &object_store::Error) -> bool {
    if matches!(e, object_store::Error::NotImplemented) {
        return true;
    }
    let mut cur: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = cur {
        let m = err.to_string();
        if m.contains("501 Not Implemented") || m.contains("<Code>NotImplemented</Code>") {
            return true;
        }
        cur = err.source();
    }
    false
}

fn client_options(o: &StoreOptions, allow_http: bool) -> object_store::ClientOptions {
    object_store::ClientOptions::new()
        .with_timeout(o.timeout())
        .with_connect_timeout(o.connect_timeout())
        .with_allow_http(allow_http)
        .with_pool_max_idle_per_host(o.max_concurrency())
}

fn retry_config(o: &StoreOptions) -> object_store::RetryConfig {
    let backoff = object_store::BackoffConfig {
        init_backoff: std::time::Duration::from_millis(50),
        max_backoff: std::time::Duration::from_secs(5),
        base: 2.0,
    };
    // Bound the whole retried request: every try may take the full timeout, plus the backoff.
    let tries = o.retries() as u32 + 1;
    let retry_timeout = o.timeout() * tries + std::time::Duration::from_secs(5) * tries;
    object_store::RetryConfig { backoff, max_retries: o.retries(), retry_timeout }
}

/// Splits `scheme://authority/path` into (authority, path without surrounding `/`).
fn split_url(rest: &str) -> (&str, &str) {
    match rest.split_once('/') {
        Some((a, p)) => (a, p.trim_matches('/')),
        None => (rest, ""),
    }
}

/// An `object_store` error as text for a message, secrets masked ([`redact`]).
fn text(e: &object_store::Error) -> String {
    redact(&e.to_string())
}

/// Registers the secrets a store is opened with (the password of the location's or the endpoint's
/// user information, the `secret_access_key` and `session_token` options) for [`redact`].
fn register_secrets(location: &str, o: &StoreOptions) {
    for url in [Some(location), o.get("endpoint")].into_iter().flatten() {
        let Some((_, rest)) = url.split_once("://") else { continue };
        let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
        if let Some((userinfo, _)) = authority.rsplit_once('@') {
            register_secret(userinfo.split_once(':').map_or(userinfo, |(_, password)| password));
        }
    }
    for key in ["secret_access_key", "session_token"] {
        if let Some(v) = o.get(key) {
            register_secret(v);
        }
    }
}

/// The clients of the remote stores opened so far, by server and settings (options and, for S3, the
/// `AWS_*` environment): stores opened on the same server with the same settings share one client
/// and so its open connections, and opening a second array there costs no new connection (on
/// HTTPS: no new TLS handshake, one or two round trips).
static CLIENTS: std::sync::Mutex<Vec<(String, Arc<dyn ObjectStore>)>> = std::sync::Mutex::new(Vec::new());
/// Clients kept at most (the oldest is dropped first).
const MAX_CLIENTS: usize = 64;

fn shared_client(key: String, make: impl FnOnce() -> Result<Arc<dyn ObjectStore>>) -> Result<Arc<dyn ObjectStore>> {
    let mut clients = CLIENTS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, c)) = clients.iter().find(|(k, _)| *k == key) {
        return Ok(c.clone());
    }
    let c = make()?;
    if clients.len() >= MAX_CLIENTS {
        clients.remove(0);
    }
    clients.push((key, c.clone()));
    Ok(c)
}

fn env_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty())
}

impl ObjectStoreAdapter {
    /// Opens `s3://bucket/prefix` with the standard AWS environment overlaid by `o`. Without any
    /// credentials (neither `access_key_id` nor `AWS_ACCESS_KEY_ID`, nor a web identity or container
    /// credential setting) requests are unsigned (anonymous access to public buckets); instance
    /// metadata is never queried implicitly.
    pub fn s3(location: &str, o: &StoreOptions) -> Result<Self> {
        register_secrets(location, o);
        Self::s3_unchecked(location, o).map_err(redact_error)
    }

    fn s3_unchecked(location: &str, o: &StoreOptions) -> Result<Self> {
        use object_store::aws::AmazonS3Builder;
        let rest = location.strip_prefix("s3://").ok_or_else(|| Error::InvalidArgument(format!("not an s3:// URI: '{location}'")))?;
        let (bucket, prefix) = split_url(rest);
        if bucket.is_empty() {
            return Err(Error::InvalidArgument(format!("no bucket in '{location}'")));
        }
        let mut b = AmazonS3Builder::from_env().with_bucket_name(bucket);
        if let Some(v) = o.get("endpoint") {
            b = b.with_endpoint(v);
        }
        if let Some(v) = o.get("region") {
            b = b.with_region(v);
        } else if !env_set("AWS_REGION") && !env_set("AWS_DEFAULT_REGION") {
            b = b.with_region("us-east-1");
        }
        if let Some(v) = o.get("access_key_id") {
            b = b.with_access_key_id(v);
        }
        if let Some(v) = o.get("secret_access_key") {
            b = b.with_secret_access_key(v);
        }
        if let Some(v) = o.get("session_token") {
            b = b.with_token(v);
        }
        let has_credentials = o.get("access_key_id").is_some()
            || env_set("AWS_ACCESS_KEY_ID")
            || env_set("AWS_WEB_IDENTITY_TOKEN_FILE")
            || env_set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
            || env_set("AWS_CONTAINER_CREDENTIALS_FULL_URI");
        if o.get_bool("anonymous").unwrap_or(false) || !has_credentials {
            b = b.with_skip_signature(true);
        }
        if let Some(v) = o.get_bool("path_style") {
            b = b.with_virtual_hosted_style_request(!v);
        }
        // An endpoint written as http:// is the caller's choice of plain HTTP (a local S3 server).
        let endpoint = o.get("endpoint").map(str::to_string).or_else(|| {
            std::env::var("AWS_ENDPOINT_URL").ok().or_else(|| std::env::var("AWS_ENDPOINT").ok())
        });
        let allow_http = o
            .get_bool("allow_http")
            .unwrap_or_else(|| endpoint.as_deref().is_some_and(|e| e.starts_with("http://")));
        b = b
            .with_client_options(client_options(o, allow_http))
            .with_retry(retry_config(o))
            .with_http_connector(super::bounded_http::BoundedConnector);
        let aws_env: Vec<(String, String)> = std::env::vars().filter(|(k, _)| k.starts_with("AWS_")).collect();
        let store = shared_client(format!("s3|{bucket}|{o:?}|{aws_env:?}"), || {
            Ok(Arc::new(b.build().map_err(|e| Error::InvalidArgument(format!("cannot open '{location}': {e}")))?))
        })?;
        Ok(Self::new(store, Protocol::S3, location, prefix, o))
    }

    /// Opens `http://host/path` or `https://host/path` (read-only).
    pub fn http(location: &str, o: &StoreOptions) -> Result<Self> {
        register_secrets(location, o);
        Self::http_unchecked(location, o).map_err(redact_error)
    }

    fn http_unchecked(location: &str, o: &StoreOptions) -> Result<Self> {
        use object_store::http::HttpBuilder;
        let (scheme, rest) = location.split_once("://").ok_or_else(|| Error::InvalidArgument(format!("not a URL: '{location}'")))?;
        let (authority, prefix) = split_url(rest);
        if authority.is_empty() {
            return Err(Error::InvalidArgument(format!("no host in '{location}'")));
        }
        if rest.contains(['?', '#']) {
            return Err(Error::Unsupported(format!("query strings and fragments are not supported in '{location}'")));
        }
        let store = shared_client(format!("http|{scheme}://{authority}|{o:?}"), || {
            let store = HttpBuilder::new()
                .with_url(format!("{scheme}://{authority}"))
                .with_client_options(client_options(o, scheme == "http"))
                .with_retry(retry_config(o))
                .with_http_connector(super::bounded_http::BoundedConnector)
                .build()
                .map_err(|e| Error::InvalidArgument(format!("cannot open '{location}': {e}")))?;
            Ok(Arc::new(store))
        })?;
        Ok(Self::new(store, Protocol::Http, location, prefix, o))
    }

    /// Wraps an `object_store` backend (also used by tests with other backends).
    pub fn new(inner: Arc<dyn ObjectStore>, protocol: Protocol, url: &str, prefix: &str, o: &StoreOptions) -> Self {
        ObjectStoreAdapter {
            inner,
            protocol,
            url: redact(url.trim_end_matches('/')),
            prefix: prefix.trim_matches('/').to_string(),
            multipart_threshold: o.multipart_threshold(),
            multipart_part_size: o.multipart_part_size(),
            concurrency: o.max_concurrency(),
            bytes_read: Arc::new(AtomicU64::new(0)),
            conditional_put: AtomicBool::new(protocol == Protocol::S3 && o.get_bool("conditional_put").unwrap_or(true)),
            link: Arc::new(LinkEstimate::from_options(o)),
            no_suffix: AtomicBool::new(false),
        }
    }

    /// The protocol this store speaks.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// The estimates of this handle's round trip.
    pub fn link(&self) -> &LinkEstimate {
        &self.link
    }

    fn path(&self, key: &str) -> Result<Path> {
        super::validate_key(key)?;
        Ok(if self.prefix.is_empty() { Path::from(key) } else { Path::from(format!("{}/{key}", self.prefix)) })
    }

    /// One GET of the whole value of `key`, its body received straight into `buf` (cleared first; its
    /// capacity is reused, so a request thread's steady state allocates and page-faults nothing, and
    /// the body is copied once, not gathered and then copied again). `false`: no such key. A value
    /// longer than `limit` is an error: at once when the server says so (`Content-Length`), otherwise
    /// as soon as the body passes the limit (the rest is not read).
    fn get_body_into(&self, key: &str, buf: &mut Vec<u8>, limit: ReadLimit) -> Result<bool> {
        let path = self.path(key)?;
        let inner = self.inner.clone();
        let mut body = std::mem::take(buf);
        body.clear();
        let began = Instant::now();
        let (body, got) = block_on(async move {
            let got = async {
                let got = inner.get(&path).await.map_err(Failed::Store)?;
                let size = got.meta.size;
                if size > limit.bytes {
                    return Err(Failed::TooLong(Some(size)));
                }
                receive(got.into_stream(), &mut body, size, limit.bytes).await
            }
            .await;
            (body, got)
        })?;
        *buf = body;
        match got {
            Ok(()) => {
                self.link.record(buf.len() as u64, began.elapsed().as_secs_f64());
                self.bytes_read.fetch_add(buf.len() as u64, Ordering::Relaxed);
                Ok(true)
            }
            Err(Failed::Store(object_store::Error::NotFound { .. })) => Ok(false),
            Err(e) => Err(self.failed("GET", key, e, limit)),
        }
    }

    /// The error of a failed GET of `key` whose body was limited to `limit`.
    fn failed(&self, op: &str, key: &str, e: Failed, limit: ReadLimit) -> Error {
        match e {
            Failed::Store(e) => self.io_error(op, key, e),
            Failed::Alloc(n) => crate::error::alloc_failed(n).context(format!("{op} {}", self.location(key))),
            Failed::TooLong(n) => limit.exceeded(&format!("{op} {}", self.location(key)), n),
        }
    }

    /// A source reading `len` bytes of `key` (at `path`), version `e_tag`, with `prefetched` bytes.
    fn source(&self, key: &str, path: Path, len: u64, prefetched: Vec<(u64, Bytes)>, e_tag: Option<String>) -> RemoteSource {
        RemoteSource {
            inner: self.inner.clone(),
            path,
            len,
            url: self.location(key),
            bytes_read: self.bytes_read.clone(),
            prefetched,
            e_tag,
            link: self.link.clone(),
        }
    }

    /// [`OpenHint::Tail`] on a server without suffix ranges: a HEAD for the size and ETag (together
    /// with the bounded GETs of `ranges`, [`Store::open_speculative`]), then one bounded range of the
    /// last `n` bytes (conditional on that ETag), kept as prefetched.
    fn open_tail_bounded(&self, key: &str, n: u64, ranges: &[(u64, u64)]) -> Result<Option<Box<dyn ByteSource + '_>>> {
        let path = self.path(key)?;
        let (inner, p) = (self.inner.clone(), path.clone());
        let began = Instant::now();
        let extra = self.ranged_gets(&path, ranges, began);
        let (head, extra) =
            block_on(async move { futures::future::join(inner.head(&p), futures::future::join_all(extra)).await })?;
        let meta = match head {
            Ok(meta) => meta,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(self.io_error("HEAD", key, e)),
        };
        self.link.record(0, began.elapsed().as_secs_f64());
        let len = meta.size;
        let mut pieces = self.same_version(&meta, extra);
        let src = self.source(key, path.clone(), len, Vec::new(), meta.e_tag.clone());
        let start = len.saturating_sub(n);
        let mut bytes = crate::error::try_alloc((len - start) as usize)?;
        src.read_into(start, &mut bytes)?;
        pieces.insert(0, (start, Bytes::from(bytes)));
        Ok(Some(Box::new(self.source(key, path, len, pieces, meta.e_tag))))
    }

    /// One bounded GET of each of `ranges` (not yet sent: to be awaited together with another
    /// request), each answering its object's metadata, the range and bytes it got, and the seconds
    /// from `began` to its last byte.
    #[allow(clippy::type_complexity)]
    fn ranged_gets(
        &self,
        path: &Path,
        ranges: &[(u64, u64)],
        began: Instant,
    ) -> Vec<futures::future::BoxFuture<'static, std::result::Result<(ObjectMeta, std::ops::Range<u64>, Bytes, f64), Failed>>> {
        ranges
            .iter()
            .filter(|(s, e)| s < e)
            .map(|&(s, e)| {
                let (inner, p) = (self.inner.clone(), path.clone());
                let options = GetOptions { range: Some(GetRange::Bounded(s..e)), ..Default::default() };
                let fut = async move {
                    let r = inner.get_opts(&p, options).await.map_err(Failed::Store)?;
                    let (meta, range) = (r.meta.clone(), r.range.clone());
                    let mut body = Vec::new();
                    receive(r.into_stream(), &mut body, range.end.saturating_sub(range.start), e - s).await?;
                    Ok((meta, range, Bytes::from(body), began.elapsed().as_secs_f64()))
                };
                Box::pin(fut) as futures::future::BoxFuture<'static, _>
            })
            .collect()
    }

    /// The answers of [`Self::ranged_gets`] that are whole and come from the version `meta` of the
    /// object (its ETag and size; a server without ETags: its size and modification time, as
    /// unversioned reads trust), as prefetched pieces; every answer counts in the bytes read and the
    /// link estimate. Failed ones (a range past the end of the object) are dropped.
    #[allow(clippy::type_complexity)]
    fn same_version(
        &self,
        meta: &ObjectMeta,
        answers: Vec<std::result::Result<(ObjectMeta, std::ops::Range<u64>, Bytes, f64), Failed>>,
    ) -> Vec<(u64, Bytes)> {
        let mut pieces = Vec::new();
        for (m, r, b, secs) in answers.into_iter().flatten() {
            self.bytes_read.fetch_add(b.len() as u64, Ordering::Relaxed);
            self.link.record(b.len() as u64, secs);
            let same = m.e_tag == meta.e_tag
                && m.size == meta.size
                && (meta.e_tag.is_some() || m.last_modified == meta.last_modified);
            if same && b.len() as u64 == r.end - r.start && r.end <= meta.size && !b.is_empty() {
                pieces.push((r.start, b));
            }
        }
        pieces
    }

    fn io_error(&self, op: &str, key: &str, e: object_store::Error) -> Error {
        Error::Io(format!("{op} {}: {}", self.location(key), text(&e)))
    }

    fn writable(&self, key: &str) -> Result<()> {
        match self.protocol {
            Protocol::S3 => Ok(()),
            Protocol::Http => Err(Error::ReadOnly(format!("{}: HTTP stores are read-only", self.location(key)))),
        }
    }

    fn put(&self, key: &str, value: &[u8]) -> Result<()> {
        self.writable(key)?;
        let path = self.path(key)?;
        let inner = self.inner.clone();
        let r = if value.len() > self.multipart_threshold {
            // Parts of `multipart_part_size`, uploaded in parallel: up to `max_concurrency` in flight.
            // S3 takes at most 10000 parts: a larger value gets larger parts.
            let data = value.to_vec();
            let part = self.multipart_part_size.max(value.len().div_ceil(MAX_PARTS));
            let max = self.concurrency.max(1);
            block_on(async move {
                let upload = inner.put_multipart(&path).await?;
                let mut w = object_store::WriteMultipart::new_with_chunk_size(upload, part);
                for piece in data.chunks(part) {
                    if let Err(e) = w.wait_for_capacity(max).await {
                        w.abort().await.ok();
                        return Err(e);
                    }
                    w.write(piece);
                }
                // On failure, `finish` aborts the upload: the old value (if any) stays.
                w.finish().await.map(|_| ())
            })?
        } else {
            let payload = PutPayload::from(value.to_vec());
            block_on(async move { inner.put(&path, payload).await.map(|_| ()) })?
        };
        r.map_err(|e| self.io_error("PUT", key, e))
    }
}

/// Why receiving a response failed.
enum Failed {
    /// The request or the body failed.
    Store(object_store::Error),
    /// Memory for this many bytes could not be had.
    Alloc(usize),
    /// The body is longer than the read accepts: its claimed length, or `None` when it passed the
    /// limit while streaming.
    TooLong(Option<u64>),
}

/// Appends the response body `pieces` to `body`, failing as soon as it would pass `limit` bytes (the
/// rest is never read) and when memory for it cannot be had. `claimed` (the length the server
/// announced) is reserved up front, up to [`RESERVE_BOUND`]: a length merely claimed allocates
/// nothing beyond that until the bytes arrive.
async fn receive(
    mut pieces: futures::stream::BoxStream<'static, object_store::Result<Bytes>>,
    body: &mut Vec<u8>,
    claimed: u64,
    limit: u64,
) -> std::result::Result<(), Failed> {
    use futures::StreamExt;
    let reserve = usize::try_from(claimed.min(limit).min(RESERVE_BOUND)).unwrap_or(usize::MAX);
    body.try_reserve_exact(reserve).map_err(|_| Failed::Alloc(reserve))?;
    let start = body.len() as u64;
    while let Some(piece) = pieces.next().await {
        let piece = piece.map_err(Failed::Store)?;
        if body.len() as u64 - start + piece.len() as u64 > limit {
            return Err(Failed::TooLong(None));
        }
        body.try_reserve(piece.len()).map_err(|_| Failed::Alloc(body.len() + piece.len()))?;
        body.extend_from_slice(&piece);
    }
    Ok(())
}

/// Whether a failed suffix-range GET says the server does not serve suffix ranges: it refused the
/// range (416 Range Not Satisfiable, 400, 501) or answered with the whole object or another range
/// (`object_store` then fails the response as "non-partial" or "unexpected range").
fn refuses_suffix(e: &object_store::Error) -> bool {
    let mut cur: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = cur {
        let m = err.to_string();
        if ["416", "400 Bad Request", "501", "non-partial response", "Range request not supported"].iter().any(|s| m.contains(s))
            || (m.starts_with("Requested ") && m.contains(", got "))
        {
            return true;
        }
        cur = err.source();
    }
    false
}

/// One remote object opened for ranged reads.
struct RemoteSource {
    inner: Arc<dyn ObjectStore>,
    path: Path,
    len: u64,
    url: String,
    bytes_read: Arc<AtomicU64>,
    /// Bytes fetched when the object was opened (offset, bytes; disjoint or not, in any order): reads
    /// inside them need no request.
    prefetched: Vec<(u64, Bytes)>,
    /// The ETag the object had when opened; range reads are conditional on it (`If-Match`).
    e_tag: Option<String>,
    /// The store's round-trip estimates, told the size and duration of every range read.
    link: Arc<LinkEstimate>,
}

/// Runs of coalesced ranges longer than this are split into concurrent requests.
const MAX_REMOTE_READ: u64 = 4 << 20;

impl ByteSource for RemoteSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn max_read_hint(&self) -> Option<u64> {
        Some(MAX_REMOTE_READ)
    }

    fn version(&self) -> Option<&str> {
        self.e_tag.as_deref()
    }

    fn as_slice(&self) -> Option<&[u8]> {
        // The whole object came with the opening request (a shard smaller than the range asked for).
        self.prefetched.iter().find(|(at, bytes)| *at == 0 && bytes.len() as u64 == self.len).map(|(_, b)| &b[..])
    }

    fn holds(&self, offset: u64, len: u64) -> bool {
        let end = offset.saturating_add(len);
        self.prefetched.iter().any(|(at, bytes)| *at <= offset && end <= at + bytes.len() as u64)
    }

    /// Bytes inside the parts fetched at opening are copied from them; only the rest of the range is
    /// asked for: one ranged GET of the part they leave uncovered when that is one run, else of the
    /// whole range (one request either way).
    fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        check_range(offset, buf.len() as u64, self.len)?;
        if buf.is_empty() {
            return Ok(());
        }
        let end = offset + buf.len() as u64;
        // The parts of the range the prefetched pieces cover, sorted.
        let mut covered: Vec<(u64, u64)> = Vec::new();
        for (at, bytes) in &self.prefetched {
            let (p0, p1) = (*at, at + bytes.len() as u64);
            let (lo, hi) = (offset.max(p0), end.min(p1));
            if lo < hi {
                buf[(lo - offset) as usize..(hi - offset) as usize].copy_from_slice(&bytes[(lo - p0) as usize..(hi - p0) as usize]);
                covered.push((lo, hi));
            }
        }
        covered.sort_unstable();
        let mut gaps: Vec<(u64, u64)> = Vec::new();
        let mut at = offset;
        for (lo, hi) in covered {
            if lo > at {
                gaps.push((at, lo));
            }
            at = at.max(hi);
        }
        if at < end {
            gaps.push((at, end));
        }
        match gaps[..] {
            [] => Ok(()),
            [(lo, hi)] => self.fetch_into(lo, &mut buf[(lo - offset) as usize..(hi - offset) as usize]),
            _ => self.fetch_into(offset, buf),
        }
    }
}

impl RemoteSource {
    /// One ranged GET (conditional on the ETag seen at opening) of `offset..offset + buf.len()`.
    fn fetch_into(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset + buf.len() as u64;
        let began = Instant::now();
        let (inner, path) = (self.inner.clone(), self.path.clone());
        let options = GetOptions { range: Some(GetRange::Bounded(offset..end)), if_match: self.e_tag.clone(), ..Default::default() };
        // The body may be at most the range asked for: a server sending more fails the read after
        // one byte more than that.
        let want = buf.len() as u64;
        let got = block_on(async move {
            let r = inner.get_opts(&path, options).await.map_err(Failed::Store)?;
            let mut body = Vec::new();
            receive(r.into_stream(), &mut body, want, want).await.map(|()| body)
        })?
        .map_err(|e| match e {
            Failed::Store(object_store::Error::Precondition { .. } | object_store::Error::NotFound { .. }) => Error::Io(format!(
                "GET {} (bytes {offset}..{end}): the object changed while it was being read (it is no longer ETag {})",
                self.url,
                self.e_tag.as_deref().unwrap_or("?")
            )),
            Failed::Store(e) => Error::Io(format!("GET {} (bytes {offset}..{end}): {}", self.url, text(&e))),
            Failed::Alloc(n) => crate::error::alloc_failed(n).context(format!("GET {} (bytes {offset}..{end})", self.url)),
            Failed::TooLong(_) => Error::Io(format!(
                "GET {} (bytes {offset}..{end}): the server sent more than the {want} bytes asked for",
                self.url
            )),
        })?;
        if got.len() != buf.len() {
            return Err(Error::Io(format!("GET {}: asked for {} bytes at {offset}, got {}", self.url, buf.len(), got.len())));
        }
        buf.copy_from_slice(&got);
        self.link.record(got.len() as u64, began.elapsed().as_secs_f64());
        self.bytes_read.fetch_add(got.len() as u64, Ordering::Relaxed);
        Ok(())
    }
}

/// Versioned GETs and conditional PUTs (`If-Match: <ETag>`, or `If-None-Match: *` for a value that
/// did not exist). A conditional PUT is one request (never a multipart upload, whatever the size).
impl ConditionalStore for ObjectStoreAdapter {
    fn get_versioned(&self, key: &str, limit: ReadLimit) -> Result<Option<(Vec<u8>, ValueVersion)>> {
        let path = self.path(key)?;
        let inner = self.inner.clone();
        let r = block_on(async move {
            let got = inner.get(&path).await.map_err(Failed::Store)?;
            let version = ValueVersion { e_tag: got.meta.e_tag.clone(), version: got.meta.version.clone() };
            let size = got.meta.size;
            if size > limit.bytes {
                return Err(Failed::TooLong(Some(size)));
            }
            let mut body = Vec::new();
            receive(got.into_stream(), &mut body, size, limit.bytes).await.map(|()| (body, version))
        })?;
        match r {
            Ok((bytes, v)) => {
                self.bytes_read.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                Ok(Some((bytes, v)))
            }
            Err(Failed::Store(object_store::Error::NotFound { .. })) => Ok(None),
            Err(e) => Err(self.failed("GET", key, e, limit)),
        }
    }

    /// A server answering that it does not implement conditional PUT (501) turns them off for this
    /// store: later updates take the plain path at once.
    fn set_parts_if_version(&self, key: &str, parts: &[&[u8]], expected: Option<&ValueVersion>) -> Result<bool> {
        self.writable(key)?;
        let path = self.path(key)?;
        let mode = match expected {
            None => PutMode::Create,
            Some(v) => PutMode::Update(UpdateVersion { e_tag: v.e_tag.clone(), version: v.version.clone() }),
        };
        let payload = PutPayload::from(parts.concat());
        let inner = self.inner.clone();
        match block_on(async move { inner.put_opts(&path, payload, PutOptions { mode, ..Default::default() }).await })? {
            Ok(_) => Ok(true),
            Err(object_store::Error::Precondition { .. } | object_store::Error::AlreadyExists { .. }) => Ok(false),
            Err(e) if is_not_implemented(&e) => {
                self.conditional_put.store(false, Ordering::Relaxed);
                Err(Error::Unsupported(format!("conditional PUT {}: {}", self.location(key), text(&e))))
            }
            Err(e) => Err(self.io_error("PUT", key, e)),
        }
    }
}

impl Store for ObjectStoreAdapter {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let mut v = Vec::new();
        Ok(self.get_into(key, &mut v, ReadLimit::none())?.then_some(v))
    }

    fn get_into(&self, key: &str, buf: &mut Vec<u8>, limit: ReadLimit) -> Result<bool> {
        self.get_body_into(key, buf, limit)
    }

    fn with_value(&self, key: &str, limit: ReadLimit, f: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<bool> {
        crate::scratch::with_encoded(|body| {
            let found = self.get_body_into(key, body, limit)?;
            let r = if found { f(body).map(|()| true) } else { Ok(false) };
            // Whole shards can be large, and up to `max_concurrency` request threads each keep one.
            if body.capacity() > KEPT_BODY_CAPACITY {
                *body = Vec::new();
            }
            r
        })
    }

    /// One GET (conditional on `version`), its body handed to `sink` piece by piece on the calling
    /// thread while the I/O runtime receives the next pieces.
    fn stream_value(&self, key: &str, version: Option<&str>, sink: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<bool> {
        use futures::StreamExt;
        let path = self.path(key)?;
        let inner = self.inner.clone();
        let options = GetOptions { if_match: version.map(str::to_string), ..Default::default() };
        let (tx, rx) = std::sync::mpsc::sync_channel::<std::result::Result<Bytes, object_store::Error>>(64);
        super::runtime::spawn(async move {
            match inner.get_opts(&path, options).await {
                Ok(got) => {
                    let mut body = got.into_stream();
                    while let Some(piece) = body.next().await {
                        let stop = piece.is_err();
                        if tx.send(piece).is_err() || stop {
                            return;
                        }
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                }
            }
        })?;
        for piece in rx {
            match piece {
                Ok(bytes) => {
                    self.bytes_read.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                    sink(&bytes)?;
                }
                Err(object_store::Error::NotFound { .. }) if version.is_none() => return Ok(false),
                Err(e @ (object_store::Error::Precondition { .. } | object_store::Error::NotFound { .. })) => {
                    return Err(Error::Io(format!(
                        "GET {}: the object changed while it was being read (it is no longer ETag {}): {}",
                        self.location(key),
                        version.unwrap_or("?"),
                        text(&e)
                    )))
                }
                Err(e) => return Err(self.io_error("GET", key, e)),
            }
        }
        Ok(true)
    }

    fn open(&self, key: &str) -> Result<Option<Box<dyn ByteSource + '_>>> {
        let path = self.path(key)?;
        let (inner, p) = (self.inner.clone(), path.clone());
        let began = Instant::now();
        match block_on(async move { inner.head(&p).await })? {
            Ok(meta) => {
                self.link.record(0, began.elapsed().as_secs_f64());
                Ok(Some(Box::new(self.source(key, path, meta.size, Vec::new(), meta.e_tag))))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.io_error("HEAD", key, e)),
        }
    }

    /// One ranged GET (a suffix range for [`OpenHint::Tail`]) that learns the size and ETag and keeps
    /// the bytes it fetched: opening a shard and reading its index (and the inner chunks that came
    /// with it), or opening an uncompressed chunk and reading the span a region needs, is one round
    /// trip. A suffix or prefix longer than the object brings all of it. A server that answers a
    /// suffix range with anything but that range (some ignore or refuse `bytes=-n`) is asked for the
    /// size (HEAD) and then the bounded range instead, for this and every later open of the handle.
    fn open_hinted(&self, key: &str, hint: OpenHint) -> Result<Option<Box<dyn ByteSource + '_>>> {
        self.open_speculative(key, hint, &[])
    }

    /// [`Store::open_hinted`]'s request and one bounded GET for each of `ranges`, all at once; the
    /// answers to `ranges` are kept when they carry the ETag and size of the hinted answer (an object
    /// without an ETag: none kept), and dropped when they fail (a range past the end of the object).
    fn open_speculative(&self, key: &str, hint: OpenHint, ranges: &[(u64, u64)]) -> Result<Option<Box<dyn ByteSource + '_>>> {
        let range = match hint {
            OpenHint::Head(0) | OpenHint::Tail(0) => return self.open(key),
            OpenHint::Range(start, end) if end <= start => return self.open(key),
            OpenHint::Tail(n) if self.no_suffix.load(Ordering::Relaxed) => return self.open_tail_bounded(key, n, ranges),
            OpenHint::Head(n) => GetRange::Bounded(0..n),
            OpenHint::Tail(n) => GetRange::Suffix(n),
            OpenHint::Range(start, end) => GetRange::Bounded(start..end),
        };
        let suffix = matches!(range, GetRange::Suffix(_));
        let path = self.path(key)?;
        // The body may be at most the range asked for (a suffix: its length).
        let want = match &range {
            GetRange::Bounded(r) => r.end - r.start,
            GetRange::Suffix(n) => *n,
            GetRange::Offset(_) => u64::MAX,
        };
        let began = Instant::now();
        let get = |range: GetRange, want: u64| {
            let (inner, p) = (self.inner.clone(), path.clone());
            let options = GetOptions { range: Some(range), ..Default::default() };
            async move {
                let r = inner.get_opts(&p, options).await.map_err(Failed::Store)?;
                let (meta, range) = (r.meta.clone(), r.range.clone());
                let mut body = Vec::new();
                receive(r.into_stream(), &mut body, range.end.saturating_sub(range.start), want).await?;
                Ok::<_, Failed>((meta, range, Bytes::from(body), began.elapsed().as_secs_f64()))
            }
        };
        let main = get(range, want);
        let extra = self.ranged_gets(&path, ranges, began);
        let (got, extra) = block_on(async move { futures::future::join(main, futures::future::join_all(extra)).await })?;
        let got = got.map(|(meta, range, bytes, _)| (meta, range, bytes));
        match got {
            Ok((meta, range, bytes)) => {
                if bytes.len() as u64 != range.end - range.start || range.end > meta.size {
                    return Err(Error::Io(format!(
                        "GET {}: asked for {hint:?}, got {} bytes for range {range:?} of {}",
                        self.location(key),
                        bytes.len(),
                        meta.size
                    )));
                }
                self.link.record(bytes.len() as u64, began.elapsed().as_secs_f64());
                self.bytes_read.fetch_add(bytes.len() as u64, Ordering::Relaxed);
                let mut pieces = vec![(range.start, bytes)];
                pieces.extend(self.same_version(&meta, extra));
                Ok(Some(Box::new(self.source(key, path, meta.size, pieces, meta.e_tag))))
            }
            Err(Failed::Store(object_store::Error::NotFound { .. })) => Ok(None),
            // A range a server cannot serve (an empty object): open it plainly, the reader then
            // reports what is wrong with the value.
            Err(Failed::Store(e)) if e.to_string().contains("416") && !suffix => self.open(key),
            // A suffix range refused (416, 400, 501) or answered whole or with another range: the
            // server does not do suffix ranges (or the object is empty, which the bounded read
            // below reports as it would any short shard).
            Err(Failed::Store(e)) if suffix && refuses_suffix(&e) => {
                let OpenHint::Tail(n) = hint else { unreachable!("a suffix range comes from a tail hint") };
                let src = self.open_tail_bounded(key, n, ranges)?;
                if src.as_ref().is_some_and(|s| !s.is_empty()) {
                    self.no_suffix.store(true, Ordering::Relaxed);
                }
                Ok(src)
            }
            Err(Failed::TooLong(_)) => Err(Error::Io(format!(
                "GET {}: asked for {hint:?}, the server sent more than the {want} bytes of that range",
                self.location(key)
            ))),
            Err(e) => Err(self.failed("GET", key, e, ReadLimit::none())),
        }
    }

    fn open_version(&self, key: &str, len: u64, version: &str) -> Result<Box<dyn ByteSource + '_>> {
        Ok(Box::new(self.source(key, self.path(key)?, len, Vec::new(), Some(version.to_string()))))
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.put(key, value)
    }

    fn ensure_writable(&self) -> Result<()> {
        self.writable("")
    }

    fn conditional(&self) -> Option<&dyn ConditionalStore> {
        self.conditional_put.load(Ordering::Relaxed).then_some(self as &dyn ConditionalStore)
    }

    fn delete(&self, key: &str) -> Result<()> {
        self.writable(key)?;
        let path = self.path(key)?;
        let inner = self.inner.clone();
        match block_on(async move { inner.delete(&path).await })? {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.io_error("DELETE", key, e)),
        }
    }

    fn exists(&self, key: &str) -> Result<bool> {
        let path = self.path(key)?;
        let inner = self.inner.clone();
        match block_on(async move { inner.head(&path).await })? {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.io_error("HEAD", key, e)),
        }
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        if self.protocol == Protocol::Http {
            return Err(Error::Unsupported(format!(
                "{}: HTTP servers cannot list keys (open arrays by path, or use consolidated metadata)",
                self.location(prefix)
            )));
        }
        let full = match (self.prefix.is_empty(), prefix.trim_end_matches('/')) {
            (true, "") => None,
            (true, p) => Some(Path::from(p)),
            (false, "") => Some(Path::from(self.prefix.as_str())),
            (false, p) => Some(Path::from(format!("{}/{p}", self.prefix))),
        };
        let inner = self.inner.clone();
        let listed = block_on(async move { inner.list_with_delimiter(full.as_ref()).await })?
            .map_err(|e| self.io_error("LIST", prefix, e))?;
        let name = |p: &Path| p.filename().unwrap_or("").to_string();
        Ok(DirListing {
            keys: listed.objects.iter().map(|m| name(&m.location)).filter(|n| !n.is_empty()).collect(),
            prefixes: listed.common_prefixes.iter().map(name).filter(|n| !n.is_empty()).collect(),
        }
        .sorted())
    }

    fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    fn location(&self, key: &str) -> String {
        if key.is_empty() {
            self.url.clone()
        } else {
            format!("{}/{key}", self.url)
        }
    }

    fn io_concurrency(&self) -> usize {
        self.concurrency
    }

    fn speculative_read_bytes(&self) -> u64 {
        self.link.speculative_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;

    fn adapter(protocol: Protocol, o: &StoreOptions) -> (ObjectStoreAdapter, Arc<InMemory>) {
        let mem = Arc::new(InMemory::new());
        (ObjectStoreAdapter::new(mem.clone(), protocol, "s3://b/root/", "root", o), mem)
    }

    #[test]
    fn get_set_delete_list_under_a_prefix() {
        let (s, mem) = adapter(Protocol::S3, &StoreOptions::new());
        assert_eq!(s.get("zarr.json").unwrap(), None);
        assert!(s.open("c/0").unwrap().is_none());
        s.set("zarr.json", b"{}").unwrap();
        s.set("c/0/1", b"0123456789").unwrap();
        s.set("g/zarr.json", b"{}").unwrap();
        // Keys lie under the prefix in the backend.
        let raw = block_on({
            let m = mem.clone();
            async move { m.get(&Path::from("root/c/0/1")).await.unwrap().bytes().await.unwrap() }
        })
        .unwrap();
        assert_eq!(&raw[..], b"0123456789");
        assert_eq!(s.get("zarr.json").unwrap().as_deref(), Some(&b"{}"[..]));
        let src = s.open("c/0/1").unwrap().unwrap();
        assert_eq!(src.len(), 10);
        assert_eq!(src.read_range(3, 4).unwrap(), b"3456");
        assert!(src.read_range(8, 4).is_err());
        assert!(s.exists("c/0/1").unwrap());
        assert!(!s.exists("c/0/2").unwrap());
        let root = s.list_dir("").unwrap();
        assert_eq!(root.keys, ["zarr.json"]);
        assert_eq!(root.prefixes, ["c", "g"]);
        assert_eq!(s.list_dir("c/").unwrap().prefixes, ["0"]);
        assert_eq!(s.list_dir("c/0/").unwrap().keys, ["1"]);
        s.delete("c/0/1").unwrap();
        s.delete("c/0/1").unwrap();
        assert_eq!(s.get("c/0/1").unwrap(), None);
        assert_eq!(s.location("c/0/1"), "s3://b/root/c/0/1");
        assert_eq!(s.bytes_read(), 6, "2 bytes of zarr.json + a 4-byte range");
        assert!(matches!(s.get("../x"), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn hinted_opens_versions_and_streams() {
        let (s, _) = adapter(Protocol::S3, &StoreOptions::new());
        assert!(s.open_hinted("c/0", OpenHint::Tail(4)).unwrap().is_none());
        s.set("c/0", b"0123456789").unwrap();
        // The tail (or head) comes with the opening request; the size and version with it.
        let tail = s.open_hinted("c/0", OpenHint::Tail(4)).unwrap().unwrap();
        assert_eq!(tail.len(), 10);
        let version = tail.version().expect("an ETag").to_string();
        assert_eq!(tail.read_range(6, 4).unwrap(), b"6789");
        assert_eq!(tail.read_range(1, 3).unwrap(), b"123", "a range outside the prefetched tail");
        let head = s.open_hinted("c/0", OpenHint::Head(3)).unwrap().unwrap();
        assert_eq!((head.len(), head.read_range(0, 3).unwrap()), (10, b"012".to_vec()));
        let before = s.bytes_read();
        let mid = s.open_hinted("c/0", OpenHint::Range(3, 7)).unwrap().unwrap();
        assert_eq!((mid.len(), mid.read_range(4, 2).unwrap()), (10, b"45".to_vec()));
        assert_eq!(s.bytes_read() - before, 4, "just the range, with the opening request");
        assert!(s.open_hinted("c/9", OpenHint::Range(3, 7)).unwrap().is_none());
        // Longer than the value: all of it.
        assert_eq!(s.open_hinted("c/0", OpenHint::Tail(99)).unwrap().unwrap().read_range(0, 10).unwrap(), b"0123456789");
        // A kept version reads without a request, and fails once the value is replaced.
        let kept = s.open_version("c/0", 10, &version).unwrap();
        assert_eq!(kept.read_range(2, 2).unwrap(), b"23");
        let mut pieces = Vec::new();
        assert!(s.stream_value("c/0", Some(&version), &mut |p| {
            pieces.extend_from_slice(p);
            Ok(())
        }).unwrap());
        assert_eq!(pieces, b"0123456789");
        let mut whole = Vec::new();
        assert!(s.with_value("c/0", ReadLimit::none(), &mut |v| {
            whole.extend_from_slice(v);
            Ok(())
        }).unwrap());
        assert_eq!(whole, b"0123456789");
        s.set("c/0", b"abcdefghij").unwrap();
        assert!(matches!(kept.read_range(2, 2), Err(Error::Io(m)) if m.contains("changed")));
        assert!(matches!(tail.read_range(1, 3), Err(Error::Io(_))), "reads of the opened version fail too");
        assert!(matches!(s.stream_value("c/0", Some(&version), &mut |_| Ok(())), Err(Error::Io(m)) if m.contains("changed")));
        assert!(s.stream_value("c/1", None, &mut |_| Ok(())).map(|found| !found).unwrap());
        s.delete("c/0").unwrap();
        assert!(matches!(kept.read_range(2, 2), Err(Error::Io(_))), "a deleted value is not the kept version");
    }

    #[test]
    fn reads_take_what_came_with_the_opening_request_and_fetch_only_the_rest() {
        let (s, _) = adapter(Protocol::S3, &StoreOptions::new());
        s.set("c/0", b"0123456789").unwrap();
        let tail = s.open_hinted("c/0", OpenHint::Tail(4)).unwrap().unwrap();
        assert!(tail.as_slice().is_none(), "only the tail is in memory");
        let before = s.bytes_read();
        // Bytes 6..10 came with the opening request: a range over 4..8 fetches 4..6 alone.
        assert_eq!(tail.read_range(4, 4).unwrap(), b"4567");
        assert_eq!(s.bytes_read() - before, 2);
        assert_eq!(tail.read_range(7, 3).unwrap(), b"789");
        assert_eq!(s.bytes_read() - before, 2, "inside the tail: no request");
        let head = s.open_hinted("c/0", OpenHint::Head(3)).unwrap().unwrap();
        let before = s.bytes_read();
        assert_eq!(head.read_range(1, 5).unwrap(), b"12345");
        assert_eq!(s.bytes_read() - before, 3, "3..6 fetched, 1..3 from the head");
        // A range asked for beyond the value: all of it, readable as one slice.
        let whole = s.open_hinted("c/0", OpenHint::Tail(1 << 20)).unwrap().unwrap();
        assert_eq!(whole.as_slice(), Some(&b"0123456789"[..]));
        // Every answer was timed: the store has latency samples (small answers).
        assert!(s.link().latency() < 1.0);
        assert!(s.speculative_read_bytes() > 0);
        let mut off = StoreOptions::new();
        off.set("speculative_read_max", "0").unwrap();
        assert_eq!(adapter(Protocol::S3, &off).0.speculative_read_bytes(), 0);
    }

    #[test]
    fn multipart_upload_for_large_values() {
        let mut o = StoreOptions::new();
        o.set("multipart_threshold", &(5u64 << 20).to_string()).unwrap();
        let (s, _) = adapter(Protocol::S3, &o);
        let big: Vec<u8> = (0..(21u32 << 20) / 4).flat_map(|i| i.to_le_bytes()).collect();
        s.set("big", &big).unwrap();
        assert_eq!(s.get("big").unwrap().unwrap(), big);
        let src = s.open("big").unwrap().unwrap();
        assert_eq!(src.read_range(20 << 20, 8).unwrap(), big[20 << 20..(20 << 20) + 8]);
    }

    #[test]
    fn conditional_put() {
        let (s, _) = adapter(Protocol::S3, &StoreOptions::new());
        let c = s.conditional().expect("S3 stores offer conditional writes");
        assert!(c.set_parts_if_version("shard", &[b"o", b"ne"], None).unwrap());
        assert!(!c.set_parts_if_version("shard", &[b"two"], None).unwrap(), "create over an existing object");
        let (v, ver) = c.get_versioned("shard", ReadLimit::none()).unwrap().unwrap();
        assert_eq!(v, b"one");
        s.set("shard", b"other writer").unwrap();
        assert!(!c.set_parts_if_version("shard", &[b"mine"], Some(&ver)).unwrap(), "stale version must fail");
        let (_, ver2) = c.get_versioned("shard", ReadLimit::none()).unwrap().unwrap();
        assert!(c.set_parts_if_version("shard", &[b"mine"], Some(&ver2)).unwrap());
        assert_eq!(s.get("shard").unwrap().unwrap(), b"mine");
        // Off by option, and never for HTTP.
        let mut off = StoreOptions::new();
        off.set("conditional_put", "false").unwrap();
        assert!(adapter(Protocol::S3, &off).0.conditional().is_none());
        assert!(adapter(Protocol::Http, &StoreOptions::new()).0.conditional().is_none());
    }

    #[test]
    fn a_server_without_conditional_put_turns_them_off() {
        // object_store's S3 client with conditional PUT disabled answers NotImplemented (no request).
        let s3 = object_store::aws::AmazonS3Builder::new()
            .with_bucket_name("b")
            .with_region("us-east-1")
            .with_endpoint("http://127.0.0.1:1")
            .with_allow_http(true)
            .with_skip_signature(true)
            .with_conditional_put(object_store::aws::S3ConditionalPut::Disabled)
            .build()
            .unwrap();
        let s = ObjectStoreAdapter::new(Arc::new(s3), Protocol::S3, "s3://b", "", &StoreOptions::new());
        let c = s.conditional().unwrap();
        assert!(matches!(c.set_parts_if_version("k", &[b"v"], None), Err(Error::Unsupported(_))));
        assert!(s.conditional().is_none(), "later updates take the plain path");
    }

    #[test]
    fn http_is_read_only_and_cannot_list() {
        let (s, _) = adapter(Protocol::Http, &StoreOptions::new());
        assert!(matches!(s.set("k", b"v"), Err(Error::ReadOnly(_))));
        assert!(matches!(s.delete("k"), Err(Error::ReadOnly(_))));
        assert!(matches!(s.list_dir(""), Err(Error::Unsupported(_))));
        assert!(matches!(s.ensure_writable(), Err(Error::ReadOnly(_))));
        assert_eq!(s.get("k").unwrap(), None);
    }

    #[test]
    fn urls_are_checked() {
        let o = StoreOptions::new();
        assert!(matches!(ObjectStoreAdapter::s3("s3:///x", &o), Err(Error::InvalidArgument(_))));
        assert!(matches!(ObjectStoreAdapter::http("http:///x", &o), Err(Error::InvalidArgument(_))));
        assert!(matches!(ObjectStoreAdapter::http("http://h/x?a=1", &o), Err(Error::Unsupported(_))));
        let s = ObjectStoreAdapter::http("http://127.0.0.1:1/data/arr/", &o).unwrap();
        assert_eq!(s.location("zarr.json"), "http://127.0.0.1:1/data/arr/zarr.json");
        assert_eq!(s.io_concurrency(), 64);
    }

    #[test]
    fn unreachable_server_is_an_io_error_naming_the_key() {
        // A port nothing listens on: connection refused, retried, then ZARR_ERR_IO.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut o = StoreOptions::new();
        o.set("retries", "1").unwrap();
        o.set("timeout_ms", "2000").unwrap();
        let s = ObjectStoreAdapter::http(&format!("http://127.0.0.1:{port}/a"), &o).unwrap();
        let t = std::time::Instant::now();
        match s.get("zarr.json") {
            Err(Error::Io(m)) => assert!(m.contains(&format!("http://127.0.0.1:{port}/a/zarr.json")), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(t.elapsed() < std::time::Duration::from_secs(20));
    }

    /// A one-thread HTTP server on loopback answering every request as `mode` says: "403" and "404"
    /// (with the request echoed in the body, as some servers' error pages do), "truncate" (a body cut
    /// off), "stall" (no answer). Returns its port.
    fn misbehaving_server(mode: &'static str) -> u16 {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                std::thread::spawn(move || {
                    let mut request = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match conn.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    let echo = String::from_utf8_lossy(&request).to_string();
                    let answer = match mode {
                        "403" | "404" => {
                            let status = if mode == "403" { "403 Forbidden" } else { "404 Not Found" };
                            format!("HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{echo}", echo.len())
                        }
                        "truncate" => "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n0123456789".to_string(),
                        // 2^40 bytes announced, 64 KiB sent (a success and an error page)
                        "huge" | "huge500" => {
                            let status = if mode == "huge" { "200 OK" } else { "500 Internal Server Error" };
                            let head = format!("HTTP/1.1 {status}\r\nContent-Length: 1099511627776\r\nConnection: close\r\n\r\n");
                            let _ = conn.write_all(head.as_bytes());
                            for _ in 0..16 {
                                let _ = conn.write_all(&[b'0'; 4096]);
                            }
                            return;
                        }
                        _ => {
                            std::thread::sleep(std::time::Duration::from_secs(5));
                            return;
                        }
                    };
                    let _ = conn.write_all(answer.as_bytes());
                });
            }
        });
        port
    }

    /// Answers announcing 2^40 bytes (issue 32): the bodies object_store collects itself (an S3
    /// listing, an error page) abort nothing and fail as `Error::Io`; a GET fails at the announced length.
    #[test]
    fn huge_announced_lengths_are_errors_not_aborts() {
        for mode in ["huge", "huge500"] {
            let port = misbehaving_server(mode);
            let mut o = StoreOptions::new();
            o.set("retries", "0").unwrap();
            o.set("timeout_ms", "5000").unwrap();
            let http = ObjectStoreAdapter::http(&format!("http://127.0.0.1:{port}/a"), &o).unwrap();
            o.set("endpoint", &format!("http://127.0.0.1:{port}")).unwrap();
            o.set("path_style", "true").unwrap();
            o.set("anonymous", "true").unwrap();
            let s3 = ObjectStoreAdapter::s3("s3://bucket/a", &o).unwrap();
            for store in [&http, &s3] {
                let mut buf = Vec::new();
                let r = store.get_into("zarr.json", &mut buf, ReadLimit::metadata(1 << 20));
                assert!(matches!(r, Err(Error::Io(_) | Error::Memory(_))), "{mode}: {r:?}");
                assert!(buf.capacity() < 1 << 30, "{mode}: {} bytes reserved", buf.capacity());
                let r = store.open_hinted("c/0", OpenHint::Tail(16)).map(|_| ());
                assert!(matches!(r, Err(Error::Io(_))), "{mode}: {r:?}");
            }
            let r = s3.list_dir("");
            assert!(matches!(r, Err(Error::Io(_))), "{mode}: {r:?}");
        }
    }

    #[test]
    fn no_secret_in_any_error_message() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let ports = [
            ("refused", closed),
            ("403", misbehaving_server("403")),
            ("404", misbehaving_server("404")),
            ("truncate", misbehaving_server("truncate")),
            ("stall", misbehaving_server("stall")),
        ];
        let secrets = ["url-pass-5ecret", "opt-s3cret-key-9", "opt-session-t0ken-7", "endpoint-pw-77"];
        let mut checked = 0;
        for (what, port) in ports {
            let mut o = StoreOptions::new();
            o.set("retries", "1").unwrap();
            o.set("timeout_ms", "400").unwrap();
            let http = ObjectStoreAdapter::http(&format!("http://user:{}@127.0.0.1:{port}/a", secrets[0]), &o).unwrap();
            o.set("endpoint", &format!("http://ep:{}@127.0.0.1:{port}", secrets[3])).unwrap();
            o.set("access_key_id", "AKIDEXAMPLE").unwrap();
            o.set("secret_access_key", secrets[1]).unwrap();
            o.set("session_token", secrets[2]).unwrap();
            o.set("path_style", "true").unwrap();
            let s3 = ObjectStoreAdapter::s3("s3://bucket/a", &o).unwrap();
            for store in [&http, &s3] {
                let mut messages = vec![format!("{:?}", store)];
                messages.extend(store.get("zarr.json").err().map(|e| e.to_string()));
                messages.extend(store.open_hinted("c/0", OpenHint::Tail(16)).err().map(|e| e.to_string()));
                messages.extend(store.exists("c/1").err().map(|e| e.to_string()));
                messages.extend(store.set("c/2", b"v").err().map(|e| e.to_string()));
                messages.extend(store.stream_value("c/3", None, &mut |_| Ok(())).err().map(|e| e.to_string()));
                assert!(messages.len() > 2 || what == "404", "{what}: expected failures, got {messages:?}");
                for m in &messages {
                    for secret in secrets {
                        assert!(!m.contains(secret), "{what}: '{secret}' in '{m}'");
                    }
                    assert!(!m.contains("AWS4-HMAC-SHA256 Credential=AKID"), "{what}: a signature in '{m}'");
                    checked += 1;
                }
            }
        }
        assert!(checked >= 30, "{checked} messages checked");
    }

}
