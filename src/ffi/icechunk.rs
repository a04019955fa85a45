//! C functions of Icechunk repositories (`icechunk://` locations, docs/icechunk.md): create a
//! repository, commit or discard a branch session's changes, create tags and branches. Opening a
//! version is a location (`icechunk:///repo!/node?tag=v1`) given to the ordinary open calls.

use super::group::zarr_group;
use super::handle::HandleKind;
use super::status::*;
use super::store_options::zarr_store_options;
use super::{guard, str_arg, write_opt, write_string};
use crate::error::{Error, Result};
use crate::store::transaction::{OnConflict, Transaction};
use crate::store::StoreOptions;
use std::ffi::{c_char, c_int};

/// zarr_icechunk_commit() flag: when another writer committed to the branch since the session
/// began, rebase the changes onto the branch's new tip if they touch nothing that writer changed
/// (other chunks, other nodes), instead of failing with ZARR_ERR_CONFLICT. Since: 0.4.
pub const ZARR_ICECHUNK_REBASE: c_int = 1;

/// The part of an `icechunk://` location after the scheme.
pub(super) fn icechunk_rest<'a>(location: &'a str) -> Result<&'a str> {
    location
        .strip_prefix("icechunk://")
        .ok_or_else(|| Error::InvalidArgument(format!("'{location}' is not an icechunk:// location")))
}

/// The transaction of the session a group belongs to.
pub(super) fn with_transaction<T>(group: *mut zarr_group, f: impl FnOnce(&dyn Transaction) -> Result<T>) -> Result<T> {
    // SAFETY: `group` follows the caller's contract (checked against the handle table).
    let g = unsafe { zarr_group::get(group) }?;
    let t = g.store().transaction().ok_or_else(|| {
        Error::InvalidArgument(format!(
            "{}: not an Icechunk session (only groups opened from icechunk:// locations have one)",
            g.store().location("")
        ))
    })?;
    f(t)
}

/// Writes an optional string result.
///
/// # Safety
/// `out` is NULL or valid for writing a pointer.
pub(super) unsafe fn opt_string(out: *mut *mut c_char, s: String, what: &str) -> Result<()> {
    if out.is_null() {
        return Ok(());
    }
    // SAFETY: non-NULL, the caller's contract.
    unsafe { write_string(out, s, what) }
}

/// Creates an empty Icechunk repository (its first snapshot, and the branch `main` at it) on the
/// local filesystem or on S3, with settings from the environment only (for S3 settings given
/// explicitly: zarr_icechunk_create_repository_with_options()).
///
/// @param location     `icechunk://PATH` (a directory that does not exist or is empty) or
///                     `icechunk://s3://BUCKET/PREFIX` (a prefix holding no repository); no node, no
///                     version; NUL-terminated
/// @param snapshot_id  receives the first snapshot's id (20 characters; free with zarr_string_free()),
///                     or NULL when not wanted; set to NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL or malformed location); ZARR_ERR_EXISTS (the
///          directory is not empty, or a repository is already there); ZARR_ERR_UNSUPPORTED (libzarr
///          built without the `icechunk` feature); ZARR_ERR_IO.
/// Thread-safe. Since: 0.4.
///
/// # Safety
/// `location` is a NUL-terminated string; `snapshot_id` NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_create_repository(location: *const c_char, snapshot_id: *mut *mut c_char) -> zarr_status {
    // SAFETY: the caller's contract.
    unsafe { zarr_icechunk_create_repository_with_options(location, std::ptr::null(), snapshot_id) }
}

/// zarr_icechunk_create_repository() with store options: for a repository on S3 the same settings
/// as `s3://` locations take (`endpoint`, `region`, `access_key_id`, `secret_access_key`,
/// `session_token`, `anonymous`, `allow_http`; docs/icechunk.md). A local repository ignores them.
///
/// @param location     as for zarr_icechunk_create_repository()
/// @param options      store options, or NULL (the environment only); not taken over (the caller
///                     still frees them)
/// @param snapshot_id  as for zarr_icechunk_create_repository()
/// @returns as zarr_icechunk_create_repository(); ZARR_ERR_INVALID_HANDLE (`options` is not a live
///          options handle); ZARR_ERR_NOT_FOUND (the S3 bucket does not exist).
/// Thread-safe. Since: 0.4.
///
/// # Safety
/// `location` is a NUL-terminated string; `options` NULL or a handle from
/// zarr_store_options_create(); `snapshot_id` NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_create_repository_with_options(
    location: *const c_char,
    options: *const zarr_store_options,
    snapshot_id: *mut *mut c_char,
) -> zarr_status {
    // SAFETY: the caller's contract.
    unsafe { write_opt(snapshot_id, std::ptr::null_mut()) };
    guard(|| {
        // SAFETY (block): the caller's contract.
        let location = unsafe { str_arg(location, "location") }?;
        let none = StoreOptions::new();
        let options = if options.is_null() { &none } else { unsafe { zarr_store_options::get(options) }? };
        let id = create_repository(icechunk_rest(location)?, options)?;
        unsafe { opt_string(snapshot_id, id, "snapshot_id") }
    })
}

/// Commits the changes of the Icechunk session the group belongs to: every write made through any
/// handle opened from the same repository and branch in this process (all such locations share one
/// session) becomes one new snapshot, and the branch moves to it. Readers of the repository see all
/// of it or, before, none of it. The session then continues from the new snapshot: later writes go
/// into the next commit. A commit with no changes is ZARR_ERR_INVALID_ARGUMENT.
///
/// When another writer (process) committed to the branch since the session began (opened, last
/// committed or discarded), the commit fails with ZARR_ERR_CONFLICT and the session keeps its
/// changes: call zarr_icechunk_discard() and redo them, or commit again with ZARR_ICECHUNK_REBASE.
/// Commits of libzarr processes to one repository are serialized (a lock on the repository
/// directory), so of two commits at once one succeeds and the other gets ZARR_ERR_CONFLICT.
///
/// @param group        any group of the session (opened from an `icechunk://` location of a branch)
/// @param message      the commit message (NUL-terminated UTF-8)
/// @param flags        0, or ZARR_ICECHUNK_REBASE
/// @param snapshot_id  receives the new snapshot's id (free with zarr_string_free()), or NULL when not
///                     wanted; set to NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL message, unknown flags,
///          not an Icechunk group, nothing to commit); ZARR_ERR_READ_ONLY (a tag or snapshot session);
///          ZARR_ERR_CONFLICT (another writer's commit came first; the message names both snapshots);
///          ZARR_ERR_IO.
/// Thread-safe: it waits for the session's reads and writes in flight, and they wait for it. Since: 0.4.
///
/// # Safety
/// `group` is an open handle; `message` a NUL-terminated string; `snapshot_id` NULL or valid for
/// writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_commit(
    group: *mut zarr_group,
    message: *const c_char,
    flags: c_int,
    snapshot_id: *mut *mut c_char,
) -> zarr_status {
    // SAFETY: the caller's contract.
    unsafe { write_opt(snapshot_id, std::ptr::null_mut()) };
    guard(|| {
        // SAFETY: the caller's contract.
        let message = unsafe { str_arg(message, "message") }?;
        let on_conflict = match flags {
            0 => OnConflict::Fail,
            ZARR_ICECHUNK_REBASE => OnConflict::Rebase,
            f => return Err(Error::InvalidArgument(format!("unknown commit flags {f} (0 or ZARR_ICECHUNK_REBASE)"))),
        };
        let id = with_transaction(group, |t| t.commit(message, on_conflict))?;
        // SAFETY: the caller's contract.
        unsafe { opt_string(snapshot_id, id, "snapshot_id") }
    })
}

/// Discards the uncommitted changes of the Icechunk session the group belongs to (all handles of the
/// same repository and branch in this process), and moves the session to the branch's current tip
/// (another writer's commits become visible). Handles opened before keep the metadata they read
/// (shape, attributes): reopen nodes that another writer may have changed. Changes still uncommitted
/// when the last handle of a session closes are discarded the same way: never partly committed.
/// A tag or snapshot session has nothing to discard (ZARR_OK).
///
/// @param group  any group of the session
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (not an Icechunk group);
///          ZARR_ERR_NOT_FOUND (the branch was deleted); ZARR_ERR_IO.
/// Thread-safe. Since: 0.4.
///
/// # Safety
/// `group` is an open handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_discard(group: *mut zarr_group) -> zarr_status {
    guard(|| with_transaction(group, |t| t.discard()))
}

/// Whether the Icechunk session the group belongs to has uncommitted changes.
///
/// @param group  any group of the session
/// @param out    receives 1 (changes to commit) or 0
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL `out`, not an Icechunk
///          group).
/// Thread-safe. Since: 0.4.
///
/// # Safety
/// `group` is an open handle; `out` valid for writing an int.
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_has_changes(group: *mut zarr_group, out: *mut c_int) -> zarr_status {
    guard(|| {
        super::need_out(out, "out")?;
        let v = with_transaction(group, |t| t.has_changes())?;
        // SAFETY: checked non-NULL; the caller's contract.
        unsafe { out.write(c_int::from(v)) };
        Ok(())
    })
}

/// The id of the snapshot the Icechunk session the group belongs to reads (for a branch: the tip it
/// began from, or its last commit).
///
/// @param group  any group of the session
/// @param out    receives the id (free with zarr_string_free()); NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL `out`, not an Icechunk
///          group).
/// Thread-safe. Since: 0.4.
///
/// # Safety
/// `group` is an open handle; `out` valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_snapshot_id(group: *mut zarr_group, out: *mut *mut c_char) -> zarr_status {
    // SAFETY: the caller's contract.
    unsafe { super::new_string(out, "out", || with_transaction(group, |t| t.snapshot_id())) }
}

/// Creates a tag (an immutable name of a snapshot) in an Icechunk repository.
///
/// @param location     an `icechunk://` location of the repository; without `snapshot`, its version
///                     (`?branch=`, default main, `?tag=`, `?snapshot=`) names the snapshot to tag
/// @param options      store options, or NULL; not retained
/// @param name         the new tag's name
/// @param snapshot     a snapshot id (as zarr_icechunk_commit() returns), or NULL
/// @param snapshot_id  receives the tagged snapshot's id (free with zarr_string_free()), or NULL when
///                     not wanted
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL or malformed argument); ZARR_ERR_INVALID_HANDLE
///          (stale options); ZARR_ERR_NOT_FOUND (no repository, branch, tag or snapshot); ZARR_ERR_EXISTS
///          (the tag exists, or existed: tags are never reused); ZARR_ERR_UNSUPPORTED (built without
///          the `icechunk` feature); ZARR_ERR_IO.
/// Thread-safe. Since: 0.4.
///
/// # Safety
/// `location` and `name` are NUL-terminated strings, `snapshot` NULL or one; `options` NULL or a live
/// handle; `snapshot_id` NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_create_tag(
    location: *const c_char,
    options: *const zarr_store_options,
    name: *const c_char,
    snapshot: *const c_char,
    snapshot_id: *mut *mut c_char,
) -> zarr_status {
    // SAFETY: the caller's contract.
    unsafe { create_ref_ffi(location, options, name, snapshot, snapshot_id, RefWanted::Tag) }
}

/// Creates a branch in an Icechunk repository, at a snapshot.
///
/// @param location     an `icechunk://` location of the repository; without `snapshot`, its version
///                     (`?branch=`, default main, `?tag=`, `?snapshot=`) names the snapshot the branch
///                     starts at
/// @param options      store options, or NULL; not retained
/// @param name         the new branch's name
/// @param snapshot     a snapshot id, or NULL
/// @param snapshot_id  receives the branch's snapshot id (free with zarr_string_free()), or NULL
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_INVALID_HANDLE (stale options);
///          ZARR_ERR_NOT_FOUND (no repository, branch, tag or snapshot); ZARR_ERR_EXISTS (the branch
///          exists); ZARR_ERR_UNSUPPORTED (built without the `icechunk` feature); ZARR_ERR_IO.
/// Thread-safe. Since: 0.4.
///
/// # Safety
/// As zarr_icechunk_create_tag().
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_create_branch(
    location: *const c_char,
    options: *const zarr_store_options,
    name: *const c_char,
    snapshot: *const c_char,
    snapshot_id: *mut *mut c_char,
) -> zarr_status {
    // SAFETY: the caller's contract.
    unsafe { create_ref_ffi(location, options, name, snapshot, snapshot_id, RefWanted::Branch) }
}

#[derive(Clone, Copy)]
enum RefWanted {
    Tag,
    Branch,
}

/// # Safety
/// As zarr_icechunk_create_tag().
unsafe fn create_ref_ffi(
    location: *const c_char,
    options: *const zarr_store_options,
    name: *const c_char,
    snapshot: *const c_char,
    snapshot_id: *mut *mut c_char,
    kind: RefWanted,
) -> zarr_status {
    // SAFETY: the caller's contract.
    unsafe { write_opt(snapshot_id, std::ptr::null_mut()) };
    guard(|| {
        // SAFETY (block): the caller's contract.
        let location = unsafe { str_arg(location, "location") }?;
        let name = unsafe { str_arg(name, "name") }?;
        let snapshot = if snapshot.is_null() { None } else { Some(unsafe { str_arg(snapshot, "snapshot") }?) };
        let none = StoreOptions::new();
        let options = if options.is_null() { &none } else { unsafe { zarr_store_options::get(options) }? };
        let id = create_ref(icechunk_rest(location)?, options, kind, name, snapshot)?;
        unsafe { opt_string(snapshot_id, id, "snapshot_id") }
    })
}

#[cfg(feature = "icechunk")]
fn create_repository(rest: &str, options: &StoreOptions) -> Result<String> {
    crate::store::icechunk::create_repository(rest, options)
}

#[cfg(feature = "icechunk")]
fn create_ref(rest: &str, options: &StoreOptions, kind: RefWanted, name: &str, snapshot: Option<&str>) -> Result<String> {
    use crate::store::icechunk::RefKind;
    let kind = match kind {
        RefWanted::Tag => RefKind::Tag,
        RefWanted::Branch => RefKind::Branch,
    };
    crate::store::icechunk::create_ref(rest, options, kind, name, snapshot)
}

#[cfg(not(feature = "icechunk"))]
fn unsupported(rest: &str) -> Error {
    Error::Unsupported(format!("icechunk://{rest}: Icechunk repositories need libzarr built with the `icechunk` feature"))
}

#[cfg(not(feature = "icechunk"))]
fn create_repository(rest: &str, _: &StoreOptions) -> Result<String> {
    Err(unsupported(rest))
}

#[cfg(not(feature = "icechunk"))]
fn create_ref(rest: &str, _: &StoreOptions, _: RefWanted, _: &str, _: Option<&str>) -> Result<String> {
    Err(unsupported(rest))
}
