//! C function deleting a member (array or group, with everything below it) of a group.

use super::group::zarr_group;
use super::handle::HandleKind;
use super::guard;
use super::status::*;
use super::str_arg;
use std::ffi::c_char;

/// Deletes the array or group `name` below the group, with every key below it (its chunks, and for a
/// group all its descendants).
///
/// The node's metadata documents (`zarr.json`, or v2 `.zarray` / `.zgroup` / `.zattrs`) are deleted
/// first, so that readers see the node disappear at once, then its other keys, level by level; a
/// failure midway (ZARR_ERR_IO) leaves at most keys that no node names, never a partial node that still
/// opens. Before that, consolidated metadata of this group and of its ancestors (v3
/// `consolidated_metadata` in `zarr.json`, v2 `.zmetadata`) that names the node or its descendants is
/// rewritten without those entries (the other entries are kept as they were). Directories left empty
/// in a filesystem store are removed. Handles still open on the deleted node or its descendants stay
/// valid to close; reading through them gives fill values or ZARR_ERR_NOT_FOUND, and writing through
/// them stores keys again that no node names. Other group handles opened with consolidated metadata
/// before the deletion keep their snapshot: reopen them.
///
/// A filesystem store never follows a symbolic link while deleting, as `rm -r` does (Since: 0.4): a
/// member or any directory or file below it that is a link is removed as a link, its target left
/// intact; a member that lies below a directory that is a link is refused with ZARR_ERR_IO before
/// anything is changed. (In a confined store, see zarr_store_options, a member whose metadata is
/// reached through a link out of the store cannot even be read: ZARR_ERR_IO.)
///
/// @param group  a group opened for writing; this handle stops using consolidated metadata (like after
///               zarr_group_create_group())
/// @param name   a NUL-terminated relative path below the group, e.g. "a" or "a/b"; "", ".", "..", paths
///               with ".." or empty segments, and absolute paths are refused. Borrowed.
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (NULL or invalid name, or a name
///          that is the group itself); ZARR_ERR_NOT_FOUND (no array or group at `name`, neither
///          in the store nor in the consolidated metadata the group uses);
///          ZARR_ERR_READ_ONLY (the group was opened read-only, or the store cannot be written: zip
///          archives, plain HTTP); ZARR_ERR_UNSUPPORTED (the store cannot list its keys);
///          ZARR_ERR_METADATA (a consolidated metadata document is malformed); ZARR_ERR_IO (also: the
///          member lies below a symbolic link).
/// Not safe while other threads or processes read or write the deleted node or change the
/// consolidated metadata of its ancestors; safe beside work on other nodes. Since: 0.3.
///
/// # Safety
/// `group` is an open handle; `name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_delete_member(group: *mut zarr_group, name: *const c_char) -> zarr_status {
    guard(|| {
        // SAFETY: `group` and `name` follow the documented contract.
        let g = unsafe { zarr_group::get(group) }?;
        let name = unsafe { str_arg(name, "name") }?;
        g.delete_member(name)
    })
}
