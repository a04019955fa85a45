//! C functions on groups: create, open, attributes, children.

use super::array::{new_array, parse_mode, zarr_array};
use super::handle::{handle_kind, new_handle, HandleKind};
use super::status::*;
use super::{document_text, guard, new_string, str_arg, write_out};
use crate::error::{Error, Result};
use crate::group::Group;
use crate::store::open_location;
use crate::node::NodeKind;
use std::ffi::{c_char, c_int, CString};

/// Kind of a hierarchy node.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum zarr_node_type {
    /// An array.
    ZARR_NODE_ARRAY = 1,
    /// A group.
    ZARR_NODE_GROUP = 2,
}

impl From<NodeKind> for zarr_node_type {
    fn from(k: NodeKind) -> Self {
        match k {
            NodeKind::Array => zarr_node_type::ZARR_NODE_ARRAY,
            NodeKind::Group => zarr_node_type::ZARR_NODE_GROUP,
        }
    }
}

/// An open group (opaque). Create with zarr_group_open() or zarr_group_create(); release with
/// zarr_group_close(). Arrays and groups opened through it share its access mode.
///
/// Thread-safety: a handle may be used from several threads at once, except zarr_group_close().
pub struct zarr_group {
    _opaque: [u8; 0],
}

handle_kind!(
    zarr_group,
    Group,
    0x7a61_7272_4752_5550, // "zarrGRUP"
    "group handle is NULL",
    "not an open zarr_group handle (closed or corrupt?)"
);

/// A snapshot of a group's children (opaque), from zarr_group_list(); release with zarr_node_list_free().
pub struct zarr_node_list {
    _opaque: [u8; 0],
}

handle_kind!(
    zarr_node_list,
    NodeList,
    0x7a61_7272_4c49_5354, // "zarrLIST"
    "node list handle is NULL",
    "not a live zarr_node_list (freed or corrupt?)"
);

/// What a `zarr_node_list *` owns: each child's NUL-terminated name and kind.
pub(crate) struct NodeList {
    entries: Vec<(CString, zarr_node_type)>,
}

pub(crate) fn attributes_arg(json: *const c_char) -> Result<serde_json::Map<String, serde_json::Value>> {
    if json.is_null() {
        return Ok(Default::default());
    }
    // SAFETY: non-NULL, NUL-terminated by the caller's contract.
    crate::metadata::parse_attributes_arg(unsafe { str_arg(json, "attributes_json") }?)
}

/// Opens the group stored in the directory `path` (filesystem path or `file://` URI).
///
/// @param mode  ZARR_READ or ZARR_READ_WRITE
/// @param out   receives the handle; NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_NOT_FOUND (nothing there, or an array);
///          ZARR_ERR_METADATA; ZARR_ERR_UNSUPPORTED; ZARR_ERR_IO; ZARR_ERR_MEMORY (a metadata document
///          over the metadata ceiling: docs/limits.md; since 0.4).
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_open(path: *const c_char, mode: i32, out: *mut *mut zarr_group) -> zarr_status {
    // SAFETY (whole body): pointer arguments follow the documented contract.
    let make = || {
        let path = unsafe { str_arg(path, "path") }?;
        let g = Group::open(open_location(path)?, "", parse_mode(mode)?)?;
        Ok(g)
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_handle(out, make) }
}

/// Creates a group in the directory `path` and opens it for reading and writing.
///
/// @param attributes_json  a JSON object of attributes, or NULL for none
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_EXISTS; ZARR_ERR_IO.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `path` is a NUL-terminated string, `attributes_json` NULL or one; `out` is valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_create(
    path: *const c_char,
    attributes_json: *const c_char,
    out: *mut *mut zarr_group,
) -> zarr_status {
    let make = || {
        let path = unsafe { str_arg(path, "path") }?;
        let g = Group::create(open_location(path)?, "", attributes_arg(attributes_json)?, 3)?;
        Ok(g)
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_handle(out, make) }
}

/// Creates a group of the given Zarr format (2: `.zgroup` + `.zattrs`; 3: `zarr.json`) in the directory
/// `path` and opens it for reading and writing. Groups and arrays created through it get the same
/// format for their implicit parents; child groups take this group's format.
///
/// @param attributes_json  a JSON object, or NULL for none
/// @param zarr_format      2 or 3
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (bad format or JSON); ZARR_ERR_EXISTS; ZARR_ERR_IO.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `path` is a NUL-terminated string, `attributes_json` NULL or one; `out` is valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_create_ex(
    path: *const c_char,
    attributes_json: *const c_char,
    zarr_format: c_int,
    out: *mut *mut zarr_group,
) -> zarr_status {
    let make = || {
        let path = unsafe { str_arg(path, "path") }?;
        let format = u8::try_from(zarr_format).ok().filter(|f| *f == 2 || *f == 3).ok_or_else(|| {
            Error::InvalidArgument(format!("zarr_format must be 2 or 3, got {zarr_format}"))
        })?;
        let g = Group::create(open_location(path)?, "", attributes_arg(attributes_json)?, format)?;
        Ok(g)
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_handle(out, make) }
}

/// The Zarr format of the group's metadata (2 or 3).
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `group` is an open handle; `format` is valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_zarr_format(group: *const zarr_group, format: *mut c_int) -> zarr_status {
    guard(|| {
        let g = unsafe { zarr_group::get(group) }?;
        unsafe { write_out(format, g.zarr_format() as c_int, "format") }
    })
}

/// Closes a group handle. NULL is a no-op. Arrays and groups opened through it stay valid.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE.
/// Since: 0.1.
///
/// # Safety
/// `group` is NULL or an open handle; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_close(group: *mut zarr_group) -> zarr_status {
    guard(|| unsafe { zarr_group::close(group) })
}

/// The group's attributes as a JSON object text (free with zarr_string_free()).
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `group` is an open handle; `json` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_attributes(group: *const zarr_group, json: *mut *mut c_char) -> zarr_status {
    let make = || {
        let g = unsafe { zarr_group::get(group) }?;
        Ok(serde_json::Value::Object(g.attributes()).to_string())
    };
    // SAFETY: `json` follows the documented contract.
    unsafe { new_string(json, "json", make) }
}

/// Replaces the group's attributes with the JSON object `json` (metadata rewritten atomically).
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_READ_ONLY; ZARR_ERR_IO.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `group` is an open handle; `json` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_set_attributes(group: *mut zarr_group, json: *const c_char) -> zarr_status {
    guard(|| {
        let g = unsafe { zarr_group::get(group) }?;
        let json = unsafe { str_arg(json, "json") }?;
        g.set_attributes(crate::metadata::parse_attributes_arg(json)?)
    })
}

/// The group's metadata document as JSON text (free with zarr_string_free()).
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `group` is an open handle; `json` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_metadata(group: *const zarr_group, json: *mut *mut c_char) -> zarr_status {
    let make = || {
        let g = unsafe { zarr_group::get(group) }?;
        document_text(&g.document())
    };
    // SAFETY: `json` follows the documented contract.
    unsafe { new_string(json, "json", make) }
}

/// Opens the array `name` below the group (`name` may be a relative path such as "a/b").
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (bad name); ZARR_ERR_NOT_FOUND;
///          ZARR_ERR_METADATA; ZARR_ERR_UNSUPPORTED; ZARR_ERR_IO.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `group` is an open handle; `name` a NUL-terminated string; `out` valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_open_array(
    group: *const zarr_group,
    name: *const c_char,
    out: *mut *mut zarr_array,
) -> zarr_status {
    let make = || {
        let g = unsafe { zarr_group::get(group) }?;
        g.open_array(unsafe { str_arg(name, "name") }?)
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_array(out, make) }
}

/// Creates the array `name` below the group from a complete metadata document; missing intermediate
/// groups are created.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_READ_ONLY;
///          ZARR_ERR_EXISTS; ZARR_ERR_METADATA; ZARR_ERR_UNSUPPORTED; ZARR_ERR_IO.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `group` is an open handle; `name`, `metadata_json` NUL-terminated strings; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_create_array(
    group: *mut zarr_group,
    name: *const c_char,
    metadata_json: *const c_char,
    out: *mut *mut zarr_array,
) -> zarr_status {
    let make = || {
        let g = unsafe { zarr_group::get(group) }?;
        let name = unsafe { str_arg(name, "name") }?;
        let json = unsafe { str_arg(metadata_json, "metadata_json") }?;
        g.create_array(name, json)
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_array(out, make) }
}

/// Opens the group `name` below the group.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_NOT_FOUND;
///          ZARR_ERR_METADATA; ZARR_ERR_IO.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `group` is an open handle; `name` a NUL-terminated string; `out` valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_open_group(
    group: *const zarr_group,
    name: *const c_char,
    out: *mut *mut zarr_group,
) -> zarr_status {
    let make = || {
        let g = unsafe { zarr_group::get(group) }?;
        let child = g.open_group(unsafe { str_arg(name, "name") }?)?;
        Ok(child)
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_handle(out, make) }
}

/// Creates the group `name` below the group (missing intermediate groups are created).
///
/// @param attributes_json  a JSON object, or NULL for none
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_READ_ONLY;
///          ZARR_ERR_EXISTS; ZARR_ERR_IO.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `group` is an open handle; `name` NUL-terminated; `attributes_json` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_create_group(
    group: *mut zarr_group,
    name: *const c_char,
    attributes_json: *const c_char,
    out: *mut *mut zarr_group,
) -> zarr_status {
    let make = || {
        let g = unsafe { zarr_group::get(group) }?;
        let name = unsafe { str_arg(name, "name") }?;
        let child = g.create_group(name, attributes_arg(attributes_json)?)?;
        Ok(child)
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_handle(out, make) }
}

/// Consolidates the metadata of every array and group below the group into one document, so that
/// later opens of the hierarchy take one request: for a v3 group inline in its `zarr.json`
/// (`consolidated_metadata`, zarr-python's layout), for a v2 group as `.zmetadata`. Nodes of the other
/// Zarr format are left out. The group handle uses the new consolidated metadata from now on.
///
/// A group opened with consolidated metadata (zarr_group_open() of a group that has it) opens its
/// descendants (zarr_group_open_array(), zarr_group_open_group()) and lists its children
/// (zarr_group_list()) from it, without reading their metadata from the store; a node it does not
/// describe is looked up in the store. Writes (attributes, new nodes, resizes) change only the nodes'
/// own documents: call this again to bring the consolidated metadata up to date. A group handle that
/// creates a child stops using its consolidated metadata (it goes back to the store).
///
/// @param group  a group opened for writing, on a store that can list its keys
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_READ_ONLY; ZARR_ERR_METADATA (a node's metadata
///          is malformed); ZARR_ERR_UNSUPPORTED (the store cannot list); ZARR_ERR_IO.
/// Not safe while other threads write metadata below the group. Since: 0.2.
///
/// # Safety
/// `group` is an open handle.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_consolidate(group: *mut zarr_group) -> zarr_status {
    guard(|| {
        // SAFETY: `group` follows the documented contract.
        let g = unsafe { zarr_group::get(group) }?;
        g.consolidate()
    })
}

/// Lists the group's direct children that are arrays or groups, sorted by name.
///
/// @param out  receives a list to free with zarr_node_list_free(); NULL on failure
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_METADATA (a child's
///          metadata is malformed); ZARR_ERR_IO.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `group` is an open handle; `out` valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_list(group: *const zarr_group, out: *mut *mut zarr_node_list) -> zarr_status {
    let make = || {
        let g = unsafe { zarr_group::get(group) }?;
        let entries = g
            .children()?
            .into_iter()
            .map(|(name, kind)| (CString::new(name).unwrap_or_default(), zarr_node_type::from(kind)))
            .collect();
        Ok(NodeList { entries })
    };
    // SAFETY: `out` follows the documented contract.
    unsafe { new_handle(out, make) }
}

/// The number of entries in a node list.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT.
/// Since: 0.1.
///
/// # Safety
/// `list` is a live list; `size` valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_node_list_size(list: *const zarr_node_list, size: *mut usize) -> zarr_status {
    guard(|| {
        let l = unsafe { zarr_node_list::get(list) }?;
        unsafe { write_out(size, l.entries.len(), "size") }
    })
}

/// Entry `index` of a node list: its name (owned by the list, valid until zarr_node_list_free()) and
/// kind. Either output may be NULL.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT (`index` out of range).
/// Since: 0.1.
///
/// # Safety
/// `list` is a live list; non-NULL outputs are valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_node_list_get(
    list: *const zarr_node_list,
    index: usize,
    name: *mut *const c_char,
    node_type: *mut zarr_node_type,
) -> zarr_status {
    guard(|| {
        let l = unsafe { zarr_node_list::get(list) }?;
        let (n, t) = l.entries.get(index).ok_or_else(|| {
            Error::InvalidArgument(format!("index {index} is not below the list size {}", l.entries.len()))
        })?;
        if !name.is_null() {
            unsafe { write_out(name, n.as_ptr(), "name") }?;
        }
        if !node_type.is_null() {
            unsafe { write_out(node_type, *t, "node_type") }?;
        }
        Ok(())
    })
}

/// Frees a node list. NULL is a no-op.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE.
/// Since: 0.1.
///
/// # Safety
/// `list` is NULL or a live list; it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn zarr_node_list_free(list: *mut zarr_node_list) -> zarr_status {
    guard(|| unsafe { zarr_node_list::close(list) })
}

/// What is stored at the directory `path`: an array or a group.
///
/// @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT; ZARR_ERR_NOT_FOUND (neither); ZARR_ERR_METADATA; ZARR_ERR_IO.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `path` is a NUL-terminated string; `node_type` is valid for writing.
#[no_mangle]
pub unsafe extern "C" fn zarr_node_type_at(path: *const c_char, node_type: *mut zarr_node_type) -> zarr_status {
    guard(|| {
        let path = unsafe { str_arg(path, "path") }?;
        let store = open_location(path)?;
        match crate::node::node_kind(store.as_ref(), "")? {
            Some((k, _)) => unsafe { write_out(node_type, zarr_node_type::from(k), "node_type") },
            None => Err(Error::NotFound(format!("no array or group at '{path}'"))),
        }
    })
}
