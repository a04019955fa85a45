//! One Icechunk commit written by several processes (MPI ranks): the crate's fork and merge of
//! sessions (`Session::fork`, `Session::merge`, sessions serialized with `as_bytes`/`from_bytes`).
//!
//! 1. The process holding the branch session (a writable [`IcechunkStore`]) forks it: [`fork`]
//!    gives a text that carries the repository's directory, the branch and the crate's serialized
//!    fork session (a writable session at an anonymous snapshot that holds the branch session's
//!    state, uncommitted changes included; the crate writes that snapshot when there are any).
//! 2. Each process opens the text with [`open_fork`]: a store over its own fork session. Its
//!    writes (chunks go to the repository's chunk files at once, their references into the fork's
//!    change set) are never committed from there ([`IcechunkStore`] refuses).
//! 3. [`changes`] serializes a fork session with its changes; the process holding the branch
//!    session merges each ([`merge`], the crate's change-set merge) and commits once.
//!
//! The text is `{"icechunk_fork":1,"repo":PATH,"branch":NAME}` on its first line (a repository
//! on S3: `"s3_bucket":BUCKET,"s3_prefix":PREFIX` in place of `"repo"`; [`open_fork`] reaches it
//! with the store options it is given, as `icechunk://s3://` locations are), then the session in
//! base64. It names storage to write to: open only texts that a process of the same job
//! made.

use super::icechunk::{authorized, open_repository, IcechunkStore};
use super::icechunk_error::session_err;
use super::icechunk_location::{Repo, Version};
use super::options::StoreOptions;
use super::runtime::block_on;
use super::transaction::Transaction;
use crate::error::{Error, Result};
use crate::format::base64;
use icechunk::session::Session;
use serde_json::{json, Value};
use std::sync::Arc;

/// The Icechunk session behind a transaction (`None`: another kind of store).
pub fn session_store(t: &dyn Transaction) -> Option<&IcechunkStore> {
    t.as_any().and_then(|a| a.downcast_ref::<IcechunkStore>())
}

fn branch_of(store: &IcechunkStore, what: &str) -> Result<String> {
    match store.version() {
        Version::Branch(b) => Ok(b.clone()),
        _ => Err(Error::ReadOnly(format!("{}: a read-only session cannot {what} (only a branch can)", store.what()))),
    }
}

/// The text of `session` (see the module documentation).
fn to_text(store: &IcechunkStore, branch: &str, session: &Session) -> Result<String> {
    let bytes = session.as_bytes().map_err(|e| session_err(&store.what(), e))?;
    let head = match store.repo_place() {
        Repo::Local(path) => {
            let repo = path.to_str().ok_or_else(|| Error::Unsupported(format!("{}: a path that is not UTF-8", store.what())))?;
            json!({"icechunk_fork": 1, "repo": repo, "branch": branch})
        }
        Repo::S3 { bucket, prefix } => json!({"icechunk_fork": 1, "s3_bucket": bucket, "s3_prefix": prefix, "branch": branch}),
    };
    Ok(format!("{head}\n{}", base64::encode(&bytes)))
}

/// The repository, branch and session of a text from [`fork`] or [`changes`].
fn from_text(text: &str) -> Result<(Repo, String, Session)> {
    let bad = |why: &str| Error::InvalidArgument(format!("not an Icechunk fork session from zarr_icechunk_fork: {why}"));
    let (head, body) = text.split_once('\n').ok_or_else(|| bad("no header line"))?;
    let head: Value = serde_json::from_str(head).map_err(|_| bad("the header is not JSON"))?;
    if head.get("icechunk_fork").and_then(Value::as_u64) != Some(1) {
        return Err(bad("the header has no \"icechunk_fork\": 1"));
    }
    let repo = match (head.get("repo").and_then(Value::as_str), head.get("s3_bucket").and_then(Value::as_str)) {
        (Some(path), None) => Repo::Local(path.into()),
        (None, Some(bucket)) => Repo::S3 {
            bucket: bucket.to_string(),
            prefix: head.get("s3_prefix").and_then(Value::as_str).unwrap_or_default().to_string(),
        },
        _ => return Err(bad("the header names no repository")),
    };
    let branch = head.get("branch").and_then(Value::as_str).ok_or_else(|| bad("the header names no branch"))?;
    let bytes = base64::decode(body.trim_end()).map_err(|_| bad("the session is not base64"))?;
    let session = Session::from_bytes(&bytes).map_err(|e| bad(&format!("the session does not decode ({e})")))?;
    Ok((repo, branch.to_string(), session))
}

/// A fork of the branch session `store`, as text for [`open_fork`].
pub fn fork(store: &IcechunkStore) -> Result<String> {
    let branch = branch_of(store, "fork")?;
    if store.is_fork() {
        return Err(Error::InvalidArgument(format!("{}: fork the branch session, not a fork of it", store.what())));
    }
    let s = store.session();
    let what = store.what();
    let forked = block_on(async move { s.read().await.fork().await })?.map_err(|e| session_err(&what, e))?;
    to_text(store, &branch, &forked)
}

/// A store over the fork session of `text` (from [`fork`]), writable, never committed.
pub fn open_fork(text: &str, options: &StoreOptions) -> Result<Arc<IcechunkStore>> {
    let (place, branch, session) = from_text(text)?;
    if !session.is_fork() {
        return Err(Error::InvalidArgument(format!(
            "icechunk repository {place}: the text holds a session that is not a fork (zarr_icechunk_fork makes them)"
        )));
    }
    let authorize = authorized(options);
    let repo = Arc::new(open_repository(&place, options, &authorize)?);
    Ok(IcechunkStore::with_session(&place, &Version::Branch(branch), repo, session, options, authorize, true))
}

/// The fork session `store` with its changes, as text for [`merge`].
pub fn changes(store: &IcechunkStore) -> Result<String> {
    if !store.is_fork() {
        return Err(Error::InvalidArgument(format!(
            "{}: not a fork session (zarr_icechunk_open_fork opens them; a branch session commits its own changes)",
            store.what()
        )));
    }
    let branch = branch_of(store, "fork")?;
    let s = store.session();
    let session = block_on(async move { s.read().await.clone() })?;
    to_text(store, &branch, &session)
}

/// Merges the changes of a fork session (text from [`changes`]) into the branch session `store`.
pub fn merge(store: &IcechunkStore, text: &str) -> Result<()> {
    let branch = branch_of(store, "merge")?;
    if store.is_fork() {
        return Err(Error::InvalidArgument(format!("{}: merge into the branch session, not into a fork", store.what())));
    }
    let (place, fork_branch, session) = from_text(text)?;
    let same = match (&place, store.repo_place()) {
        (Repo::Local(a), Repo::Local(b)) => match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => a == b,
        },
        (a, b) => a == b,
    };
    if !same || fork_branch != branch {
        return Err(Error::InvalidArgument(format!(
            "{}: the changes are of a fork of icechunk://{place}?branch={fork_branch}, not of this session",
            store.what()
        )));
    }
    if !session.is_fork() {
        return Err(Error::InvalidArgument(format!("{}: the changes are not of a fork session", store.what())));
    }
    let s = store.session();
    let what = store.what();
    block_on(async move { s.write().await.merge(session).await })?.map_err(|e| session_err(&what, e))
}
