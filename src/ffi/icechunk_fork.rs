//! C functions for one Icechunk commit written by several processes (MPI ranks, docs/mpi.md): fork
//! a branch session, write in the forks, merge their changes back and commit once; and for writing
//! kerchunk references into a repository as virtual chunks (`h5tozarr --virtual icechunk://...`).

use super::group::zarr_group;
use super::handle::{new_handle, HandleKind};
use super::status::*;
use super::icechunk::{icechunk_rest, opt_string, with_transaction};
use super::store_options::zarr_store_options;
use super::{guard, str_arg, write_opt};
use crate::error::{Error, Result};
use crate::group::Group;
use crate::store::StoreOptions;
use std::ffi::{c_char, c_int};

/// # Safety
/// `options` NULL or a live handle.
unsafe fn options_arg<'a>(options: *const zarr_store_options, none: &'a StoreOptions) -> Result<&'a StoreOptions> {
    if options.is_null() {
        Ok(none)
    } else {
        // SAFETY: the caller's contract.
        unsafe { zarr_store_options::get(options) }
    }
}

/// Forks the Icechunk branch session the group belongs to, for writers in other processes (MPI
/// ranks): the result is a text (the repository's directory, the branch, and the crate's serialized
/// fork session) that zarr_icechunk_open_fork() opens in any process that sees the repository's
/// directory. The fork starts from the session's current state, its uncommitted changes included (the
/// crate writes them as an anonymous snapshot, which is not on any branch). Writes made in a fork are
/// never committed from it: zarr_icechunk_fork_changes() gives them back as text, and
/// zarr_icechunk_merge() merges them into this session, which commits them all at once.
///
/// @param group  any group of a branch session (not of a fork)
/// @param fork   receives the text (free with zarr_string_free()); NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL `fork`, not an Icechunk
///          group, a fork session); ZARR_ERR_READ_ONLY (a tag or snapshot session); ZARR_ERR_UNSUPPORTED
///          (built without the `icechunk` feature); ZARR_ERR_IO.
/// Thread-safe. Since: 0.4.
///
/// # Safety
/// `group` is an open handle; `fork` valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_fork(group: *mut zarr_group, fork: *mut *mut c_char) -> zarr_status {
    // SAFETY: the caller's contract.
    unsafe { super::new_string(fork, "fork", || with_transaction(group, imp::fork)) }
}

/// Opens the root group of a fork session (a text from zarr_icechunk_fork(), possibly made in
/// another process), for reading and writing. Everything written through it and the nodes opened
/// from it goes into the fork's own change set: chunks are stored in the repository's chunk files at
/// once, references to them and metadata in the change set. Nothing of it is visible to anyone until
/// the process that forked merges the fork's changes (zarr_icechunk_fork_changes(),
/// zarr_icechunk_merge()) and commits. zarr_icechunk_commit() on a fork is ZARR_ERR_INVALID_ARGUMENT;
/// zarr_icechunk_discard() drops the fork's changes. Each call opens a separate fork session (handles
/// opened from different calls do not share changes). Closing the last handle drops the fork's
/// changes.
///
/// The text names the storage to write to: pass only texts that zarr_icechunk_fork() made for this
/// job.
///
/// @param fork     the text, NUL-terminated
/// @param options  store options (icechunk_authorize_virtual, ...), or NULL; copied
/// @param out      receives the group handle; NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL argument, not a fork text); ZARR_ERR_INVALID_HANDLE
///          (stale options); ZARR_ERR_NOT_FOUND (the repository is gone); ZARR_ERR_UNSUPPORTED (built
///          without the `icechunk` feature); ZARR_ERR_IO.
/// Thread-safe. Since: 0.4.
///
/// # Safety
/// `fork` is a NUL-terminated string; `options` NULL or a live handle; `out` valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_open_fork(
    fork: *const c_char,
    options: *const zarr_store_options,
    out: *mut *mut zarr_group,
) -> zarr_status {
    let make = || {
        // SAFETY (block): the caller's contract.
        let fork = unsafe { str_arg(fork, "fork") }?;
        let none = StoreOptions::new();
        let options = unsafe { options_arg(options, &none) }?;
        Group::open(imp::open_fork(fork, options)?, "", true)
    };
    // SAFETY: the caller's contract.
    unsafe { new_handle(out, make) }
}

/// The changes written in a fork session (the group is any group opened from
/// zarr_icechunk_open_fork()), as a text for zarr_icechunk_merge() in the process that forked. The
/// fork keeps its changes.
///
/// @param group    any group of a fork session
/// @param changes  receives the text (free with zarr_string_free()); NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL `changes`, not a fork
///          session); ZARR_ERR_UNSUPPORTED (built without the `icechunk` feature).
/// Thread-safe. Since: 0.4.
///
/// # Safety
/// `group` is an open handle; `changes` valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_fork_changes(group: *mut zarr_group, changes: *mut *mut c_char) -> zarr_status {
    // SAFETY: the caller's contract.
    unsafe { super::new_string(changes, "changes", || with_transaction(group, imp::changes)) }
}

/// Merges the changes of a fork (a text from zarr_icechunk_fork_changes()) into the Icechunk branch
/// session the group belongs to; zarr_icechunk_commit() then commits them with the session's own
/// changes, as one snapshot. Merge the changes of every fork before committing; where two forks
/// wrote the same chunk or node, the one merged last wins. A failed merge leaves the session as it was
/// when the error is ZARR_ERR_INVALID_ARGUMENT (a text of another repository or branch, or not of a fork).
///
/// @param group    any group of the branch session that made the forks
/// @param changes  the text, NUL-terminated
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_READ_ONLY (a tag or
///          snapshot session); ZARR_ERR_UNSUPPORTED (built without the `icechunk` feature); ZARR_ERR_IO.
/// Thread-safe. Since: 0.4.
///
/// # Safety
/// `group` is an open handle; `changes` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_merge(group: *mut zarr_group, changes: *const c_char) -> zarr_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let changes = unsafe { str_arg(changes, "changes") }?;
        with_transaction(group, |t| imp::merge(t, changes))
    })
}

/// Adds a virtual chunk container to an Icechunk repository's configuration: the URL prefix its
/// virtual chunks may point into (`file:///data/netcdf/`, `http(s)://host/path/`; ending in `/`),
/// as Python's `RepositoryConfig.set_virtual_chunk_container` with `local_filesystem_store` or
/// `http_store`. Nothing happens when the repository has a container of that prefix. Readers still
/// have to authorize the container (store option `icechunk_authorize_virtual`; Python's
/// `authorize_virtual_chunk_access`). Sessions opened before do not see the new container.
///
/// @param location    an `icechunk://` location of the repository
/// @param options     store options, or NULL; not retained
/// @param url_prefix  the container's URL prefix, NUL-terminated
/// @param added       receives 1 (added) or 0 (one was there), or NULL when not wanted
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL or malformed argument, a prefix not ending in
///          `/` or not canonical); ZARR_ERR_INVALID_HANDLE (stale options); ZARR_ERR_NOT_FOUND (no
///          repository); ZARR_ERR_UNSUPPORTED (another scheme, or built without the `icechunk` feature);
///          ZARR_ERR_IO.
/// Thread-safe; libzarr processes changing one repository's configuration take turns. Since: 0.4.
///
/// # Safety
/// `location` and `url_prefix` are NUL-terminated strings; `options` NULL or a live handle; `added`
/// NULL or valid for writing an int.
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_add_virtual_container(
    location: *const c_char,
    options: *const zarr_store_options,
    url_prefix: *const c_char,
    added: *mut c_int,
) -> zarr_status {
    // SAFETY: the caller's contract.
    unsafe { write_opt(added, 0) };
    guard(|| {
        // SAFETY (block): the caller's contract.
        let location = unsafe { str_arg(location, "location") }?;
        let prefix = unsafe { str_arg(url_prefix, "url_prefix") }?;
        let none = StoreOptions::new();
        let options = unsafe { options_arg(options, &none) }?;
        let a = imp::add_virtual_container(icechunk_rest(location)?, options, prefix)?;
        unsafe { write_opt(added, c_int::from(a)) };
        Ok(())
    })
}

/// Writes a kerchunk reference set (a JSON file, specification version 0 or 1, as `h5tozarr
/// --virtual` and kerchunk write it) into an Icechunk branch and commits it with `message`: its
/// groups and arrays become Zarr v3 nodes (the v2 metadata converted as zarr-python 3 names it:
/// numcodecs filters as `numcodecs.*` codecs, the stored byte order in the `bytes` codec; object
/// arrays of vlen-utf8 strings as `string`), its `[url, offset, length]` references virtual chunk
/// references (a local path becomes a `file://` URL), and inline data chunks stored in the
/// repository. Every reference's URL must lie in one of the repository's virtual chunk containers
/// (zarr_icechunk_add_virtual_container()). The location's node is where the reference set's root
/// goes; it must be empty (a repository root without children, or a node that does not exist) unless
/// `replace` is 1, which deletes what is there in the same commit (older snapshots keep it). On any
/// failure nothing is committed and the branch is unchanged.
///
/// @param references   the path of the JSON reference file
/// @param location     an `icechunk://` location of a branch (`?branch=`, default main), with an
///                     optional node (`!/node`)
/// @param options      store options, or NULL; not retained
/// @param message      the commit message
/// @param replace      0 or 1 (see above)
/// @param snapshot_id  receives the new snapshot's id (free with zarr_string_free()), or NULL
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL or malformed argument, a relative target path,
///          uncommitted changes of this process's session of the branch, a URL outside the virtual
///          chunk containers); ZARR_ERR_INVALID_HANDLE (stale options); ZARR_ERR_NOT_FOUND (no
///          repository or branch, no reference file); ZARR_ERR_EXISTS (the node is not empty);
///          ZARR_ERR_METADATA (not a reference set of Zarr v2 nodes); ZARR_ERR_READ_ONLY (a tag or a
///          snapshot); ZARR_ERR_UNSUPPORTED (`gen` entries, metadata or codecs without a v3 form,
///          built without the `icechunk` feature); ZARR_ERR_CONFLICT (another writer committed to the
///          branch meanwhile); ZARR_ERR_IO.
/// Thread-safe. Since: 0.4.
///
/// # Safety
/// `references`, `location` and `message` are NUL-terminated strings; `options` NULL or a live
/// handle; `snapshot_id` NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_icechunk_import_references(
    references: *const c_char,
    location: *const c_char,
    options: *const zarr_store_options,
    message: *const c_char,
    replace: c_int,
    snapshot_id: *mut *mut c_char,
) -> zarr_status {
    // SAFETY: the caller's contract.
    unsafe { write_opt(snapshot_id, std::ptr::null_mut()) };
    guard(|| {
        // SAFETY (block): the caller's contract.
        let references = unsafe { str_arg(references, "references") }?;
        let location = unsafe { str_arg(location, "location") }?;
        let message = unsafe { str_arg(message, "message") }?;
        let none = StoreOptions::new();
        let options = unsafe { options_arg(options, &none) }?;
        let replace = match replace {
            0 => false,
            1 => true,
            r => return Err(Error::InvalidArgument(format!("replace must be 0 or 1, not {r}"))),
        };
        let id = imp::import_references(references, icechunk_rest(location)?, options, message, replace)?;
        unsafe { opt_string(snapshot_id, id, "snapshot_id") }
    })
}

#[cfg(feature = "icechunk")]
mod imp {
    use crate::error::{Error, Result};
    use crate::store::icechunk::IcechunkStore;
    use crate::store::icechunk_fork::{self, session_store};
    use crate::store::transaction::Transaction;
    use crate::store::{Store, StoreOptions};
    use std::sync::Arc;

    fn icechunk(t: &dyn Transaction) -> Result<&IcechunkStore> {
        session_store(t).ok_or_else(|| Error::InvalidArgument("not an Icechunk session".into()))
    }

    pub fn fork(t: &dyn Transaction) -> Result<String> {
        icechunk_fork::fork(icechunk(t)?)
    }

    pub fn changes(t: &dyn Transaction) -> Result<String> {
        icechunk_fork::changes(icechunk(t)?)
    }

    pub fn merge(t: &dyn Transaction, text: &str) -> Result<()> {
        icechunk_fork::merge(icechunk(t)?, text)
    }

    pub fn open_fork(text: &str, options: &StoreOptions) -> Result<Arc<dyn Store>> {
        Ok(icechunk_fork::open_fork(text, options)?)
    }

    pub fn add_virtual_container(rest: &str, options: &StoreOptions, prefix: &str) -> Result<bool> {
        crate::icechunk_import::add_virtual_container(rest, options, prefix)
    }

    pub fn import_references(refs: &str, rest: &str, options: &StoreOptions, message: &str, replace: bool) -> Result<String> {
        let r = crate::icechunk_import::import_references(std::path::Path::new(refs), rest, options, message, replace)?;
        Ok(r.snapshot)
    }
}

#[cfg(not(feature = "icechunk"))]
mod imp {
    use crate::error::{Error, Result};
    use crate::store::transaction::Transaction;
    use crate::store::{Store, StoreOptions};
    use std::sync::Arc;

    fn unsupported() -> Error {
        Error::Unsupported("Icechunk repositories need libzarr built with the `icechunk` feature".into())
    }
    pub fn fork(_: &dyn Transaction) -> Result<String> {
        Err(unsupported())
    }
    pub fn changes(_: &dyn Transaction) -> Result<String> {
        Err(unsupported())
    }
    pub fn merge(_: &dyn Transaction, _: &str) -> Result<()> {
        Err(unsupported())
    }
    pub fn open_fork(_: &str, _: &StoreOptions) -> Result<Arc<dyn Store>> {
        Err(unsupported())
    }
    pub fn add_virtual_container(_: &str, _: &StoreOptions, _: &str) -> Result<bool> {
        Err(unsupported())
    }
    pub fn import_references(_: &str, _: &str, _: &StoreOptions, _: &str, _: bool) -> Result<String> {
        Err(unsupported())
    }
}
