//! Icechunk repositories (feature `icechunk`): a version of a repository served as a store, through
//! the reference implementation, the `icechunk` crate (sessions, snapshots, manifests, commits).
//!
//! A location `icechunk://REPO[!/node][?branch=|tag=|snapshot=]` ([`super::icechunk_location`])
//! opens a session of the repository REPO, a local directory or `s3://bucket/prefix` (the crate's
//! S3 storage on object_store, set up from the same store options as `s3://` locations, see
//! [`s3_storage`]):
//!
//! - a branch (default `main`): a writable session at the branch's tip. Every write (metadata
//!   documents, chunks, deletions) goes into the session's change set; [`Transaction::commit`]
//!   writes it as one snapshot and moves the branch, [`Transaction::discard`] drops it. All
//!   locations naming the same repository and branch share one session in a process, so that nodes
//!   opened separately commit together; the session lives while a handle uses it, and changes not
//!   committed when the last handle closes are discarded (never partly committed).
//! - a tag or a snapshot id: a read-only session; every write is [`Error::ReadOnly`].
//!
//! Keys are mapped to Icechunk's nodes and chunk references: `zarr.json` documents are the nodes'
//! metadata, `.../c/i/j` keys their chunks (Zarr v3 with the default chunk key encoding; Icechunk
//! holds no Zarr v2 nodes). A chunk is inline bytes, a chunk file of the repository, or a virtual
//! reference (a byte range of another file), which is read through [`super::range_target`] when its
//! URL lies in one of the repository's virtual chunk containers and the caller authorized that
//! container (store option `icechunk_authorize_virtual`).
//!
//! The crate is async: its futures run on the runtime of the remote stores ([`super::runtime`]).
//! Commits by libzarr processes to one local repository are serialized by an exclusive `flock` on
//! the repository directory (the crate's local-filesystem storage cannot update the branch
//! conditionally), so that of two processes committing at once one succeeds and the other gets
//! [`Error::Conflict`]. On S3 the crate updates the branch with conditional writes (If-Match), which
//! does the same for writers of every implementation.

use super::icechunk_error::{class_repo, class_session, class_storage, classify, repo_err, session_err, store_err, Class};
use super::icechunk_location::{self, Repo, Version};
use super::options::StoreOptions;
use super::range_target::RangeTargets;
use super::runtime::block_on;
use super::transaction::{OnConflict, Transaction};
use super::{check_range, ByteSource, CountedSource, DirListing, Store};
use crate::error::{Error, Result};
use bytes::Bytes;
use futures::TryStreamExt;
use icechunk::format::manifest::{ChunkPayload, VirtualChunkRef};
use icechunk::format::{ByteRange, ChunkIndices, Path as NodePath, SnapshotId};
use icechunk::repository::VersionInfo;
use icechunk::session::{Session, SessionErrorKind};
use icechunk::store::{ListDirItem, StoreErrorKind};
use icechunk::Repository;
use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// The store option naming the virtual chunk containers the caller trusts.
pub const AUTHORIZE_OPTION: &str = "icechunk_authorize_virtual";

/// A session of an Icechunk repository, as a store.
pub struct IcechunkStore {
    repo_place: Repo,
    version: Version,
    repo: Arc<Repository>,
    store: icechunk::Store,
    /// Virtual chunk targets (local files, `file://`, S3, HTTP).
    targets: RangeTargets,
    /// URL prefixes of the virtual chunk containers the caller authorized.
    authorized: Vec<String>,
    /// A fork of a branch session ([`super::icechunk_fork`]): written, never committed (its changes
    /// are merged into the branch session that forked it).
    fork: bool,
    bytes_read: AtomicU64,
}

impl std::fmt::Debug for IcechunkStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IcechunkStore").field("repo", &self.repo_place).field("version", &self.version).finish()
    }
}

/// Branch sessions open in this process, by repository (a canonical path, or an S3 repository and
/// its endpoint) and branch.
type Sessions = HashMap<(Repo, Option<String>, String), Weak<IcechunkStore>>;

fn sessions() -> &'static Mutex<Sessions> {
    static S: std::sync::OnceLock<Mutex<Sessions>> = std::sync::OnceLock::new();
    S.get_or_init(Default::default)
}

/// The store named by the part of an `icechunk://` location after the scheme.
pub fn open_location(rest: &str, options: &StoreOptions) -> Result<Arc<dyn Store>> {
    let loc = icechunk_location::parse(rest)?;
    let store: Arc<dyn Store> = IcechunkStore::open(&loc.repo, &loc.version, options)?;
    super::prefix::PrefixStore::wrap(store, &loc.node)
}

/// The S3 endpoint a repository is reached through (option `endpoint`, else `AWS_ENDPOINT_URL` or
/// `AWS_ENDPOINT`), as for `s3://` locations.
fn s3_endpoint(o: &StoreOptions) -> Option<String> {
    o.get("endpoint").map(str::to_string).or_else(|| env("AWS_ENDPOINT_URL")).or_else(|| env("AWS_ENDPOINT"))
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The crate's S3 storage (object_store's S3 client) for the repository under `prefix` in `bucket`,
/// set up as `s3://` locations are ([`super::object::ObjectStoreAdapter::s3`]): the options
/// `endpoint`, `region`, `access_key_id`, `secret_access_key`, `session_token`, `anonymous` and
/// `allow_http` over the `AWS_*` environment; region `us-east-1` when none is given; unsigned
/// requests when there are no credentials at all; plain HTTP allowed for an `http://` endpoint.
/// Requests are path-style (`path_style=false` is [`Error::Unsupported`]: the crate's object_store
/// S3 storage offers no virtual-hosted requests). The crate's storage applies its own timeouts and
/// retries; `timeout_ms`, `retries` and `max_concurrency` apply to the chunk reads libzarr makes
/// itself (repository chunk files and virtual chunks, through [`RangeTargets`]).
fn s3_storage(bucket: &str, prefix: &str, o: &StoreOptions) -> Result<Arc<dyn icechunk::Storage + Send + Sync>> {
    use icechunk::storage::{S3Credentials, S3Options, S3StaticCredentials};
    let what = format!("icechunk repository {}", Repo::S3 { bucket: bucket.into(), prefix: prefix.into() });
    if o.get_bool("path_style") == Some(false) {
        return Err(Error::Unsupported(format!(
            "{what}: the store option path_style=false (virtual-hosted requests): Icechunk repositories on S3 are reached with path-style requests only"
        )));
    }
    let endpoint = s3_endpoint(o);
    let region = o
        .get("region")
        .map(str::to_string)
        .or_else(|| env("AWS_REGION"))
        .or_else(|| env("AWS_DEFAULT_REGION"))
        .unwrap_or_else(|| "us-east-1".into());
    let allow_http =
        o.get_bool("allow_http").unwrap_or_else(|| endpoint.as_deref().is_some_and(|e| e.starts_with("http://")));
    let mut config = S3Options::default().with_region(region).with_allow_http(allow_http).with_force_path_style(true);
    if let Some(e) = endpoint {
        config = config.with_endpoint_url(e);
    }
    let static_credentials = |id: String, secret: Option<String>, token: Option<String>| -> Result<S3Credentials> {
        let secret = secret.ok_or_else(|| {
            Error::InvalidArgument(format!("{what}: an access key id without a secret access key (store option secret_access_key)"))
        })?;
        Ok(S3Credentials::Static(S3StaticCredentials {
            access_key_id: id,
            secret_access_key: secret,
            session_token: token,
            expires_after: None,
        }))
    };
    let credentials = if o.get_bool("anonymous").unwrap_or(false) {
        S3Credentials::Anonymous
    } else if let Some(id) = o.get("access_key_id") {
        let secret = o.get("secret_access_key").map(str::to_string).or_else(|| env("AWS_SECRET_ACCESS_KEY"));
        let token = o.get("session_token").map(str::to_string).or_else(|| env("AWS_SESSION_TOKEN"));
        static_credentials(id.to_string(), secret, token)?
    } else if let Some(id) = env("AWS_ACCESS_KEY_ID") {
        let token = o.get("session_token").map(str::to_string).or_else(|| env("AWS_SESSION_TOKEN"));
        static_credentials(id, env("AWS_SECRET_ACCESS_KEY"), token)?
    } else if ["AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"]
        .iter()
        .any(|k| env(k).is_some())
    {
        S3Credentials::FromEnv
    } else {
        S3Credentials::Anonymous
    };
    let anonymous = matches!(credentials, S3Credentials::Anonymous);
    let config = config.with_anonymous(anonymous);
    let prefix = (!prefix.is_empty()).then(|| prefix.to_string());
    let bucket = bucket.to_string();
    block_on(async move {
        icechunk::new_s3_object_store_storage(config, bucket, prefix, Some(credentials), Vec::new(), Vec::new())
            .await
            .map_err(|e| classify(class_storage(&e.kind), &what, e.kind.to_string()))
    })?
}

/// The crate's storage of a repository: its local directory (which must exist: a missing one is
/// [`Error::NotFound`]) or its S3 bucket and prefix.
fn storage(place: &Repo, options: &StoreOptions) -> Result<Arc<dyn icechunk::Storage + Send + Sync>> {
    let what = format!("icechunk repository {place}");
    match place {
        Repo::Local(path) => {
            let meta = std::fs::metadata(path).map_err(|e| Error::io(&what, e))?;
            if !meta.is_dir() {
                return Err(Error::NotFound(format!("{what}: not a directory")));
            }
            let p = path.to_path_buf();
            block_on(async move {
                icechunk::new_local_filesystem_storage(&p)
                    .await
                    .map_err(|e| classify(class_storage(&e.kind), &what, e.kind.to_string()))
            })?
        }
        Repo::S3 { bucket, prefix } => s3_storage(bucket, prefix, options),
    }
}

/// Opens the repository `place` (no session yet). A missing directory, bucket or prefix, or one
/// holding no repository, is [`Error::NotFound`].
pub(crate) fn open_repository(place: &Repo, options: &StoreOptions, authorize: &[String]) -> Result<Repository> {
    let storage = storage(place, options)?;
    let what = format!("icechunk repository {place}");
    let authorize: HashMap<String, Option<icechunk::config::Credentials>> = authorize.iter().map(|a| (a.clone(), None)).collect();
    let w = what.clone();
    block_on(async move {
        Repository::open(storage).authorize_virtual_chunk_access(authorize).execute().await.map_err(|e| match e.kind {
            icechunk::repository::RepositoryErrorKind::RepositoryDoesntExist => {
                Error::NotFound(format!("{w}: no Icechunk repository there"))
            }
            _ => repo_err(&w, e),
        })
    })?
}

/// The authorized virtual chunk containers from the store options (comma-separated URL prefixes).
pub(crate) fn authorized(options: &StoreOptions) -> Vec<String> {
    options
        .get(AUTHORIZE_OPTION)
        .map(|v| v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect())
        .unwrap_or_default()
}

fn describe(place: &Repo, version: &Version) -> String {
    format!("icechunk://{place}?{}", version.query())
}

/// Resolves `version` to a session of `repo`: a branch gives a writable session at its tip (a
/// read-only one where the storage or the repository cannot be written), a tag or a snapshot a
/// read-only session. The snapshot is read here, so that a missing or corrupt snapshot fails the open.
async fn new_session(repo: Arc<Repository>, version: Version, what: String) -> Result<Session> {
    let session = match &version {
        Version::Branch(b) => match repo.writable_session(b).await {
            Ok(s) => s,
            Err(e) if class_repo(&e.kind) == Class::ReadOnly => {
                repo.readonly_session(&VersionInfo::BranchTipRef(b.clone())).await.map_err(|e| repo_err(&what, e))?
            }
            Err(e) => return Err(repo_err(&what, e)),
        },
        Version::Tag(t) => repo.readonly_session(&VersionInfo::TagRef(t.clone())).await.map_err(|e| repo_err(&what, e))?,
        Version::Snapshot(s) => {
            let id = SnapshotId::try_from(s.as_str())
                .map_err(|_| Error::InvalidArgument(format!("{what}: '{s}' is not a snapshot id (20 base32 characters)")))?;
            repo.readonly_session(&VersionInfo::SnapshotId(id)).await.map_err(|e| repo_err(&what, e))?
        }
    };
    repo.asset_manager()
        .fetch_snapshot(session.snapshot_id())
        .await
        .map_err(|e| repo_err(&format!("{what}: snapshot {}", session.snapshot_id()), e))?;
    Ok(session)
}

impl IcechunkStore {
    /// Opens `version` of the repository `place` (see the module documentation); branch sessions
    /// are shared by every location naming the same repository and branch in this process.
    pub fn open(place: &Repo, version: &Version, options: &StoreOptions) -> Result<Arc<IcechunkStore>> {
        let what = describe(place, version);
        let key = match version {
            Version::Branch(b) => {
                let key = match place {
                    Repo::Local(path) => {
                        let canon = std::fs::canonicalize(path)
                            .map_err(|e| Error::io(format!("icechunk repository {}", path.display()), e))?;
                        (Repo::Local(canon), None, b.clone())
                    }
                    Repo::S3 { .. } => (place.clone(), s3_endpoint(options), b.clone()),
                };
                if let Some(s) = sessions().lock().unwrap_or_else(|e| e.into_inner()).get(&key).and_then(Weak::upgrade) {
                    return Ok(s);
                }
                Some(key)
            }
            _ => None,
        };
        let authorize = authorized(options);
        let repo = Arc::new(open_repository(place, options, &authorize)?);
        let session = block_on(new_session(repo.clone(), version.clone(), what))??;
        let s = Self::with_session(place, version, repo, session, options, authorize, false);
        if let Some(key) = key {
            let mut map = sessions().lock().unwrap_or_else(|e| e.into_inner());
            // Another thread may have opened the same session meanwhile: use the first one.
            if let Some(existing) = map.get(&key).and_then(Weak::upgrade) {
                return Ok(existing);
            }
            map.retain(|_, w| w.strong_count() > 0);
            map.insert(key, Arc::downgrade(&s));
        }
        Ok(s)
    }

    /// A store over `session` of `repo` (at `place`).
    pub(super) fn with_session(
        place: &Repo,
        version: &Version,
        repo: Arc<Repository>,
        session: Session,
        options: &StoreOptions,
        authorized: Vec<String>,
        fork: bool,
    ) -> Arc<IcechunkStore> {
        let store = icechunk::Store::from_session_and_config(
            Arc::new(tokio::sync::RwLock::new(session)),
            repo.config().get_partial_values_concurrency(),
        );
        let mut targets = RangeTargets::new(None);
        for scheme in ["s3", "http", "https"] {
            targets.set_options(scheme, options.clone());
        }
        Arc::new(IcechunkStore {
            repo_place: place.clone(),
            version: version.clone(),
            repo,
            store,
            targets,
            authorized,
            fork,
            bytes_read: AtomicU64::new(0),
        })
    }

    /// The repository: its directory or its S3 bucket and prefix.
    pub(super) fn repo_place(&self) -> &Repo {
        &self.repo_place
    }

    /// The version the session was opened at (a fork: its branch).
    pub(super) fn version(&self) -> &Version {
        &self.version
    }

    /// Whether this is a fork session.
    pub(super) fn is_fork(&self) -> bool {
        self.fork
    }

    /// Records a virtual chunk reference at the chunk key `key` (`node/c/i/j`): `length` bytes at
    /// `offset` of the file at `url`, which must lie in a virtual chunk container of the repository.
    pub(crate) fn set_virtual(&self, key: &str, url: &str, offset: u64, length: u64) -> Result<()> {
        super::validate_key(key)?;
        self.ensure_writable()?;
        if chunk_key(key).is_none() {
            return Err(Error::InvalidArgument(format!("{}: not a chunk key (node/c/i/j)", self.location(key))));
        }
        let location = icechunk::format::manifest::VirtualChunkLocation::from_url(url)
            .map_err(|e| Error::InvalidArgument(format!("{}: virtual chunk URL '{url}': {e}", self.location(key))))?;
        let r = VirtualChunkRef { location, offset, length, checksum: None };
        let store = self.store.clone();
        let k = key.to_string();
        block_on(async move { store.set_virtual_ref(&k, r, true).await })?.map_err(|e| store_err(&self.location(key), e))
    }

    /// What an error about `key` starts with: for a chunk `icechunk` (the array layer names the chunk's
    /// location), otherwise the key's location.
    fn what_of(&self, key: &str) -> String {
        if chunk_key(key).is_some() {
            "icechunk".into()
        } else {
            self.location(key)
        }
    }

    /// The path or URL of the chunk file `id` of the repository (the crate's layout: `chunks/ID`).
    fn chunk_file(&self, id: &str) -> Result<String> {
        let repo_path = match &self.repo_place {
            Repo::Local(p) => p,
            Repo::S3 { bucket, prefix } => {
                let dir = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
                return Ok(format!("s3://{bucket}/{dir}{}/{id}", icechunk::format::CHUNKS_FILE_PATH));
            }
        };
        let p = repo_path.join(icechunk::format::CHUNKS_FILE_PATH).join(id);
        let p = if p.is_absolute() { p } else { std::env::current_dir().map_err(|e| Error::io("the working directory", e))?.join(p) };
        p.into_os_string().into_string().map_err(|_| Error::Unsupported(format!("{}: a path that is not UTF-8", self.what())))
    }

    pub(crate) fn what(&self) -> String {
        let w = describe(&self.repo_place, &self.version);
        if self.fork {
            format!("{w} (a fork session)")
        } else {
            w
        }
    }

    pub(super) fn session(&self) -> Arc<tokio::sync::RwLock<Session>> {
        self.store.session()
    }

    fn read_only(&self) -> Result<bool> {
        let s = self.session();
        block_on(async move { s.read().await.read_only() })
    }

    /// The payload of the chunk at `path` / `coords` (`None`: not stored).
    fn payload(&self, path: NodePath, coords: ChunkIndices, key: &str) -> Result<Option<ChunkPayload>> {
        let s = self.session();
        let r = block_on(async move { s.read().await.get_chunk_ref(&path, &coords).await })?;
        match r {
            Ok(p) => Ok(p),
            Err(e) if matches!(e.kind, SessionErrorKind::NodeNotFound { .. }) => Ok(None),
            Err(e) => Err(session_err(&self.what_of(key), e)),
        }
    }

    /// `get` of the icechunk store (metadata and chunks stored in the repository).
    fn fetch(&self, key: &str, range: ByteRange) -> Result<Option<Bytes>> {
        let store = self.store.clone();
        let k = key.to_string();
        match block_on(async move { store.get(&k, &range).await })? {
            Ok(b) => Ok(Some(b)),
            Err(e) if matches!(e.kind, StoreErrorKind::NotFound(_)) => Ok(None),
            Err(e) => Err(store_err(&self.what_of(key), e)),
        }
    }

    /// Checks that a virtual chunk's URL lies in a container of the repository that the caller
    /// authorized.
    fn check_virtual(&self, key: &str, r: &VirtualChunkRef) -> Result<()> {
        let url = r.location.url();
        let s = self.session();
        let loc = r.location.clone();
        let container = block_on(async move { s.read().await.matching_container(&loc).map(|c| c.url_prefix().to_string()) })?;
        let Some(prefix) = container else {
            return Err(Error::Io(format!(
                "{}: virtual chunk {url} lies in none of the repository's virtual chunk containers",
                self.what_of(key)
            )));
        };
        if !self.authorized.iter().any(|a| a == &prefix) {
            return Err(Error::Io(format!(
                "{}: virtual chunk {url}: the container '{prefix}' is not authorized (store option '{AUTHORIZE_OPTION}')",
                self.what_of(key)
            )));
        }
        Ok(())
    }

    /// What a key names.
    fn resolve(&self, key: &str) -> Result<Resolved> {
        super::validate_key(key)?;
        if key == "zarr.json" || key.ends_with("/zarr.json") {
            return Ok(Resolved::Metadata);
        }
        match chunk_key(key) {
            Some((node, coords)) => {
                let path = NodePath::try_from(format!("/{node}").as_str())
                    .map_err(|e| Error::InvalidArgument(format!("{}: {e}", self.what_of(key))))?;
                Ok(match self.payload(path, ChunkIndices(coords), key)? {
                    None => Resolved::Absent,
                    Some(ChunkPayload::Inline(b)) => Resolved::Inline(b),
                    Some(ChunkPayload::Ref(r)) => Resolved::Native(self.chunk_file(&r.id.to_string())?, r.offset, r.length),
                    Some(ChunkPayload::Virtual(v)) => {
                        self.check_virtual(key, &v)?;
                        Resolved::Virtual(v)
                    }
                    Some(_) => return Err(Error::Unsupported(format!("{}: a chunk payload of an unknown kind", self.what_of(key)))),
                })
            }
            // Zarr v2 documents and anything else: Icechunk holds none.
            None => Ok(Resolved::Absent),
        }
    }

    fn count(&self, n: usize) {
        self.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
    }

    fn write(&self, key: &str, value: Bytes) -> Result<()> {
        super::validate_key(key)?;
        if !(key == "zarr.json" || key.ends_with("/zarr.json") || chunk_key(key).is_some()) {
            return Err(Error::Unsupported(format!(
                "{}: Icechunk repositories hold Zarr v3 nodes and chunks only (zarr.json and c/... keys)",
                self.what_of(key)
            )));
        }
        let store = self.store.clone();
        let k = key.to_string();
        block_on(async move { store.set(&k, value).await })?.map_err(|e| store_err(&self.what_of(key), e))
    }

    /// An exclusive lock on a local repository's directory against other libzarr processes' commits
    /// and reference updates (`None` on S3, where the crate's conditional writes do that).
    fn repo_lock(&self) -> Result<Option<RepoLock>> {
        RepoLock::take_for(&self.repo_place)
    }
}

/// An exclusive `flock` on a repository directory, released on drop.
pub(crate) struct RepoLock(std::fs::File);

impl RepoLock {
    pub(crate) fn take_for(place: &Repo) -> Result<Option<RepoLock>> {
        match place {
            Repo::Local(path) => Self::take(path).map(Some),
            Repo::S3 { .. } => Ok(None),
        }
    }

    pub(crate) fn take(path: &Path) -> Result<RepoLock> {
        let f = std::fs::File::open(path).map_err(|e| Error::io(format!("icechunk repository {}", path.display()), e))?;
        loop {
            // SAFETY: a valid open descriptor.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(RepoLock(f));
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(Error::io(format!("locking icechunk repository {}", path.display()), e));
            }
        }
    }
}

impl Drop for RepoLock {
    fn drop(&mut self) {
        // SAFETY: a valid open descriptor (closing it would release the lock too).
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

enum Resolved {
    Absent,
    Metadata,
    Inline(Bytes),
    /// A range (offset, length) of a chunk file of the repository (its path).
    Native(String, u64, u64),
    Virtual(VirtualChunkRef),
}

/// `node/c/1/2` -> (`node`, `[1, 2]`); `c` and `node/c` are the chunk of a 0-d array. `None` for a
/// key that is not a chunk key of the default v3 encoding.
pub(crate) fn chunk_key(key: &str) -> Option<(&str, Vec<u32>)> {
    let (node, coords) = if key == "c" {
        ("", "")
    } else if let Some(n) = key.strip_suffix("/c") {
        (n, "")
    } else if let Some(c) = key.strip_prefix("c/") {
        ("", c)
    } else {
        let i = key.rfind("/c/")?;
        (&key[..i], &key[i + 3..])
    };
    let coords = if coords.is_empty() {
        Vec::new()
    } else {
        coords.split('/').map(|s| s.parse::<u32>().ok().filter(|_| !s.starts_with('+'))).collect::<Option<Vec<_>>>()?
    };
    Some((node, coords))
}

/// A chunk of the repository: a byte range of one of its chunk files, read in place (one shared
/// handle per file, [`RangeTargets`]) rather than through the crate's object store.
struct NativeSource<'a> {
    store: &'a IcechunkStore,
    key: String,
    file: String,
    offset: u64,
    len: u64,
}

impl ByteSource for NativeSource<'_> {
    fn len(&self) -> u64 {
        self.len
    }
    fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let ctx = |e: Error| e.context(self.store.what_of(&self.key));
        check_range(offset, buf.len() as u64, self.len).map_err(ctx)?;
        self.store.targets.read_into(&self.file, self.offset + offset, buf).map_err(ctx)?;
        self.store.count(buf.len());
        Ok(())
    }
}

/// A virtual chunk: a byte range of another file.
struct VirtualSource<'a> {
    store: &'a IcechunkStore,
    key: String,
    r: VirtualChunkRef,
}

impl ByteSource for VirtualSource<'_> {
    fn len(&self) -> u64 {
        self.r.length
    }
    fn read_into(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let ctx = |e: Error| e.context(self.store.what_of(&self.key));
        check_range(offset, buf.len() as u64, self.r.length).map_err(ctx)?;
        self.store.targets.read_into(self.r.location.url(), self.r.offset + offset, buf).map_err(ctx)?;
        self.store.count(buf.len());
        Ok(())
    }
}

impl Store for IcechunkStore {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        Ok(match self.resolve(key)? {
            Resolved::Absent => None,
            Resolved::Inline(b) => {
                self.count(b.len());
                Some(b.to_vec())
            }
            Resolved::Native(file, offset, len) => {
                let v = self.targets.read(&file, offset, len).map_err(|e| e.context(self.what_of(key)))?;
                self.count(v.len());
                Some(v)
            }
            Resolved::Metadata => match self.fetch(key, ByteRange::ALL)? {
                None => None,
                Some(b) => {
                    self.count(b.len());
                    Some(b.to_vec())
                }
            },
            Resolved::Virtual(r) => {
                let v = self.targets.read(r.location.url(), r.offset, r.length).map_err(|e| e.context(self.what_of(key)))?;
                self.count(v.len());
                Some(v)
            }
        })
    }

    fn open(&self, key: &str) -> Result<Option<Box<dyn ByteSource + '_>>> {
        Ok(match self.resolve(key)? {
            Resolved::Absent => None,
            Resolved::Inline(data) => Some(Box::new(CountedSource { data, counter: &self.bytes_read })),
            Resolved::Metadata => self.fetch(key, ByteRange::ALL)?.map(|data| {
                Box::new(CountedSource { data, counter: &self.bytes_read }) as Box<dyn ByteSource + '_>
            }),
            Resolved::Native(file, offset, len) => Some(Box::new(NativeSource { store: self, key: key.to_string(), file, offset, len })),
            Resolved::Virtual(r) => Some(Box::new(VirtualSource { store: self, key: key.to_string(), r })),
        })
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.write(key, Bytes::copy_from_slice(value))
    }

    fn set_parts(&self, key: &str, parts: &[&[u8]]) -> Result<()> {
        self.write(key, Bytes::from(parts.concat()))
    }

    fn delete(&self, key: &str) -> Result<()> {
        super::validate_key(key)?;
        self.ensure_writable()?;
        if !(key == "zarr.json" || key.ends_with("/zarr.json") || chunk_key(key).is_some()) {
            return Ok(());
        }
        let store = self.store.clone();
        let k = key.to_string();
        block_on(async move { store.delete(&k).await })?.map_err(|e| store_err(&self.what_of(key), e))
    }

    fn delete_tree(&self, prefix: &str, _first: &[&str]) -> Result<bool> {
        self.ensure_writable()?;
        let store = self.store.clone();
        let p = prefix.to_string();
        block_on(async move { store.delete_dir(&p).await })?.map_err(|e| store_err(&self.location(prefix), e))?;
        Ok(true)
    }

    fn ensure_writable(&self) -> Result<()> {
        if self.read_only()? {
            return Err(Error::ReadOnly(format!(
                "{}: a read-only session (tags and snapshots are read-only; open a branch to write)",
                self.what()
            )));
        }
        Ok(())
    }

    fn exists(&self, key: &str) -> Result<bool> {
        Ok(match self.resolve(key)? {
            Resolved::Absent => false,
            Resolved::Metadata => {
                let store = self.store.clone();
                let k = key.to_string();
                block_on(async move { store.exists(&k).await })?.map_err(|e| store_err(&self.what_of(key), e))?
            }
            _ => true,
        })
    }

    fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let store = self.store.clone();
        let p = prefix.to_string();
        let items = block_on(async move {
            match store.list_dir_items(&p).await {
                Ok(stream) => stream.try_collect::<Vec<_>>().await,
                Err(e) => Err(e),
            }
        })?;
        let items = match items {
            Ok(i) => i,
            Err(e) if matches!(e.kind, StoreErrorKind::BadKeyPrefix { .. } | StoreErrorKind::NotFound(_)) => Vec::new(),
            Err(e) => return Err(store_err(&self.location(prefix), e)),
        };
        let mut out = DirListing::default();
        for i in items {
            match i {
                ListDirItem::Key(k) => out.keys.push(k),
                ListDirItem::Prefix(p) => out.prefixes.push(p),
            }
        }
        Ok(out.sorted())
    }

    fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    fn location(&self, key: &str) -> String {
        format!("icechunk://{}!/{key}?{}", self.repo_place, self.version.query())
    }

    fn transaction(&self) -> Option<&dyn Transaction> {
        Some(self)
    }
}

impl Transaction for IcechunkStore {
    fn commit(&self, message: &str, on_conflict: OnConflict) -> Result<String> {
        let Version::Branch(branch) = &self.version else {
            return Err(Error::ReadOnly(format!("{}: a read-only session cannot commit (only a branch can)", self.what())));
        };
        self.ensure_writable()?;
        if self.fork {
            return Err(Error::InvalidArgument(format!(
                "{}: a fork session is not committed: its changes (zarr_icechunk_fork_changes) are merged into the branch session that forked it (zarr_icechunk_merge), which commits",
                self.what()
            )));
        }
        let what = format!("commit to {}", self.what());
        let _lock = self.repo_lock()?;
        let (s, repo, message, branch) = (self.session(), self.repo.clone(), message.to_string(), branch.clone());
        let w = what.clone();
        block_on(async move {
            let mut session = s.write().await;
            let res = match on_conflict {
                OnConflict::Fail => session.commit(message).execute().await,
                OnConflict::Rebase => {
                    let solver = icechunk::conflicts::detector::ConflictDetector;
                    session.commit(message).rebase(&solver, 3).execute().await
                }
            };
            let id = match res {
                Ok(id) => id,
                Err(e) => {
                    let conflict = class_session(&e.kind) == Class::Conflict;
                    let err = session_err(&w, e);
                    return Err(if conflict {
                        err.map_message(|m| {
                            format!("{m} (another writer committed to the branch since this session began; the changes are kept: discard them and redo, or commit with ZARR_ICECHUNK_REBASE)")
                        })
                    } else {
                        err
                    });
                }
            };
            // The committed session is read-only from now on: continue in a fresh one.
            *session = repo.writable_session(&branch).await.map_err(|e| repo_err(&w, e))?;
            Ok(id.to_string())
        })?
    }

    fn discard(&self) -> Result<()> {
        let Version::Branch(branch) = &self.version else {
            return Ok(());
        };
        if self.fork {
            let (s, what) = (self.session(), self.what());
            return block_on(async move { s.write().await.discard_changes() })?.map_err(|e| session_err(&what, e));
        }
        let (s, repo, branch, what) = (self.session(), self.repo.clone(), branch.clone(), self.what());
        block_on(async move {
            let mut session = s.write().await;
            match repo.writable_session(&branch).await {
                Ok(fresh) => *session = fresh,
                Err(e) if class_repo(&e.kind) == Class::ReadOnly => {}
                Err(e) => return Err(repo_err(&what, e)),
            }
            Ok(())
        })?
    }

    fn has_changes(&self) -> Result<bool> {
        let s = self.session();
        block_on(async move { s.read().await.has_uncommitted_changes() })
    }

    fn snapshot_id(&self) -> Result<String> {
        let s = self.session();
        block_on(async move { s.read().await.snapshot_id().to_string() })
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// Which reference [`create_ref`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    /// A tag (immutable).
    Tag,
    /// A branch.
    Branch,
}

/// Creates the tag or branch `name` in the repository named by `location` (an `icechunk://` location
/// without the scheme), at snapshot `snapshot` or, when `None`, at the snapshot the location's version
/// names (a branch's tip, a tag's snapshot). Returns the snapshot id.
pub fn create_ref(location: &str, options: &StoreOptions, kind: RefKind, name: &str, snapshot: Option<&str>) -> Result<String> {
    let loc = icechunk_location::parse(location)?;
    if name.is_empty() {
        return Err(Error::InvalidArgument("the tag or branch name is empty".into()));
    }
    let repo = Arc::new(open_repository(&loc.repo, options, &authorized(options))?);
    let what = format!(
        "creating {} '{name}' in {}",
        if kind == RefKind::Tag { "tag" } else { "branch" },
        describe(&loc.repo, &loc.version)
    );
    let _lock = RepoLock::take_for(&loc.repo)?;
    let (name, snapshot) = (name.to_string(), snapshot.map(str::to_string));
    block_on(async move {
        let id = match snapshot {
            Some(s) => SnapshotId::try_from(s.as_str())
                .map_err(|_| Error::InvalidArgument(format!("{what}: '{s}' is not a snapshot id (20 base32 characters)")))?,
            None => {
                let v = match &loc.version {
                    Version::Branch(b) => VersionInfo::BranchTipRef(b.clone()),
                    Version::Tag(t) => VersionInfo::TagRef(t.clone()),
                    Version::Snapshot(s) => VersionInfo::SnapshotId(
                        SnapshotId::try_from(s.as_str())
                            .map_err(|_| Error::InvalidArgument(format!("{what}: '{s}' is not a snapshot id")))?,
                    ),
                };
                repo.resolve_version(&v).await.map_err(|e| repo_err(&what, e))?
            }
        };
        let r = match kind {
            RefKind::Tag => repo.create_tag(&name, &id).await,
            RefKind::Branch => repo.create_branch(&name, &id).await,
        };
        r.map_err(|e| repo_err(&what, e))?;
        Ok(id.to_string())
    })?
}

/// Creates an empty Icechunk repository (its first snapshot, branch `main`) where `location` (an
/// `icechunk://` location without the scheme, no version or node) names: a directory that must not
/// exist or be empty, or an S3 prefix under which there must be no repository yet (`options`: the
/// S3 settings). Returns the first snapshot's id.
pub fn create_repository(location: &str, options: &StoreOptions) -> Result<String> {
    let loc = icechunk_location::parse(location)?;
    if !loc.node.is_empty() || location.contains('?') {
        return Err(Error::InvalidArgument(format!(
            "icechunk://{location}: a new repository is named by its directory or S3 prefix only (no node, no version)"
        )));
    }
    let what = format!("creating icechunk repository {}", loc.repo);
    let storage = match &loc.repo {
        Repo::Local(path) => {
            if let Ok(mut d) = std::fs::read_dir(path) {
                if d.next().is_some() {
                    return Err(Error::Exists(format!("{what}: the directory is not empty")));
                }
            }
            let p = path.clone();
            let w = what.clone();
            block_on(async move {
                icechunk::new_local_filesystem_storage(&p)
                    .await
                    .map_err(|e| classify(class_storage(&e.kind), &w, e.kind.to_string()))
            })??
        }
        Repo::S3 { bucket, prefix } => s3_storage(bucket, prefix, options)?,
    };
    block_on(async move {
        let repo = Repository::create(storage).execute().await.map_err(|e| repo_err(&what, e))?;
        let id = repo.lookup_branch(icechunk_location::DEFAULT_BRANCH).await.map_err(|e| repo_err(&what, e))?;
        Ok(id.to_string())
    })?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_keys() {
        assert_eq!(chunk_key("c/0/12"), Some(("", vec![0, 12])));
        assert_eq!(chunk_key("a/b/c/3"), Some(("a/b", vec![3])));
        assert_eq!(chunk_key("a/c/b/c/3/4"), Some(("a/c/b", vec![3, 4])));
        assert_eq!(chunk_key("c"), Some(("", vec![])));
        assert_eq!(chunk_key("x/c"), Some(("x", vec![])));
        assert_eq!(chunk_key("a/zarr.json"), None);
        assert_eq!(chunk_key("a/0.0"), None);
        assert_eq!(chunk_key("a/c/x"), None);
        assert_eq!(chunk_key("a/c/+1"), None);
        assert_eq!(chunk_key("a/c/99999999999"), None);
    }
}
