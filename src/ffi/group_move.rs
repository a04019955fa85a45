//! C function moving (renaming) a member (array or group, with everything below it) of a group.

use super::group::zarr_group;
use super::handle::HandleKind;
use super::guard;
use super::status::*;
use super::str_arg;
use std::ffi::c_char;

/// Moves (renames) the array or group `src_name` below the group to `dst_name`, with every key below
/// it (its chunks, and for a group all its descendants), within the same store.
///
/// A filesystem store renames the node's directory (one atomic rename within the filesystem); the
/// memory store moves the keys at once. Object stores (S3) cannot rename: every key is copied to the
/// destination first, then consolidated metadata is rewritten, then the source keys are deleted (its
/// metadata documents first), so the move is not atomic there: a failure midway (ZARR_ERR_IO) leaves
/// the source readable, and possibly a partial copy at the destination. Consolidated metadata of every
/// ancestor of the source and of the destination, up to the root of the store the group was opened
/// on (a group opened by its own path does not see groups above it; open it through the root) (v3 `consolidated_metadata` in `zarr.json`, v2
/// `.zmetadata`) that names the moved nodes is rewritten with the entries renamed (an ancestor of the
/// destination only gets the moved nodes' documents added). Handles still open on the moved node or
/// its descendants stay valid to close, but keep the old path: reading through them gives fill values
/// or ZARR_ERR_NOT_FOUND; reopen the node at its new path. Other group handles opened with consolidated
/// metadata before the move keep their snapshot: reopen them.
///
/// A filesystem store never follows a symbolic link while moving, as `mv` does (Since: 0.4): a member
/// that is a link is moved as a link, and a source or destination below a directory that is a link is
/// refused with ZARR_ERR_IO before anything is changed, so nothing is moved into or out of a directory
/// outside the store.
///
/// @param group     a group opened for writing; this handle stops using consolidated metadata (like
///                  after zarr_group_create_group())
/// @param src_name  a NUL-terminated relative path below the group of an existing array or group, e.g.
///                  "a" or "a/b"; "", ".", "..", paths with ".." or empty segments, and absolute paths
///                  are refused. Borrowed.
/// @param dst_name  a NUL-terminated relative path below the group, same rules, where nothing is stored
///                  yet and whose parent group exists. Borrowed.
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL or invalid name, a name
///          that is the group itself, or `dst_name` equal to `src_name` or below it);
///          ZARR_ERR_NOT_FOUND (no array or group at `src_name`, or no group at the parent of
///          `dst_name`); ZARR_ERR_EXISTS (an array or group, or other keys, at `dst_name`);
///          ZARR_ERR_READ_ONLY (the group was opened read-only, or the store cannot be written: zip
///          archives, plain HTTP); ZARR_ERR_UNSUPPORTED (the store cannot list its keys);
///          ZARR_ERR_METADATA (a consolidated metadata document is malformed); ZARR_ERR_IO (also: a
///          path lies below a symbolic link).
/// Not safe while other threads or processes read or write the moved node or its destination or
/// change the consolidated metadata of their ancestors; safe beside work on other nodes. Since: 0.3.
///
/// # Safety
/// `group` is an open handle; `src_name` and `dst_name` are NULL or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_move_member(group: *mut zarr_group, src_name: *const c_char, dst_name: *const c_char) -> zarr_status {
    guard(|| {
        // SAFETY: `group`, `src_name` and `dst_name` follow the documented contract.
        let g = unsafe { zarr_group::get(group) }?;
        let from = unsafe { str_arg(src_name, "src_name") }?;
        let to = unsafe { str_arg(dst_name, "dst_name") }?;
        g.move_member(from, to)
    })
}
