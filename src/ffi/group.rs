//! C functions on groups: create, open, attributes, children.

use super::array::{fs_store, parse_mode, zarr_array};
use super::status::*;
use super::{clear_out, guard, need_out, str_arg, write_out, write_string};
use crate::error::{Error, Result};
use crate::group::Group;
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

const GROUP_MAGIC: u64 = 0x7a61_7272_4752_5550; // "zarrGRUP"
const LIST_MAGIC: u64 = 0x7a61_7272_4c49_5354; // "zarrLIST"

/// An open group (opaque). Create with zarr_group_open() or zarr_group_create(); release with
/// zarr_group_close(). Arrays and groups opened through it share its access mode.
///
/// Thread-safety: a handle may be used from several threads at once, except zarr_group_close().
pub struct zarr_group {
    _opaque: [u8; 0],
}

/// What a `zarr_group *` points to (magic number first, as in every handle kind).
#[repr(C)]
struct GroupHandle {
    magic: u64,
    inner: Group,
}

/// A snapshot of a group's children (opaque), from zarr_group_list(); release with zarr_node_list_free().
pub struct zarr_node_list {
    _opaque: [u8; 0],
}

/// What a `zarr_node_list *` points to.
#[repr(C)]
struct NodeList {
    magic: u64,
    entries: Vec<(CString, zarr_node_type)>,
}

fn into_raw(g: Group) -> *mut zarr_group {
    Box::into_raw(Box::new(GroupHandle { magic: GROUP_MAGIC, inner: g })).cast()
}

/// # Safety
/// `p` is NULL or a pointer returned by libzarr for a group.
pub(crate) unsafe fn group_ref<'a>(p: *const zarr_group) -> Result<&'a Group> {
    if p.is_null() {
        return Err(Error::InvalidHandle("group handle is NULL".into()));
    }
    // SAFETY: caller's contract; magic checked.
    let h = unsafe { &*p.cast::<GroupHandle>() };
    if h.magic != GROUP_MAGIC {
        return Err(Error::InvalidHandle("not an open zarr_group handle (closed or corrupt?)".into()));
    }
    Ok(&h.inner)
}

/// # Safety
/// `p` is NULL or a pointer returned by zarr_group_list().
unsafe fn list_ref<'a>(p: *const zarr_node_list) -> Result<&'a NodeList> {
    if p.is_null() {
        return Err(Error::InvalidHandle("node list handle is NULL".into()));
    }
    // SAFETY: caller's contract; magic checked.
    let h = unsafe { &*p.cast::<NodeList>() };
    if h.magic != LIST_MAGIC {
        return Err(Error::InvalidHandle("not a live zarr_node_list (freed or corrupt?)".into()));
    }
    Ok(h)
}

fn attributes_arg(json: *const c_char) -> Result<serde_json::Map<String, serde_json::Value>> {
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
///          ZARR_ERR_METADATA; ZARR_ERR_UNSUPPORTED; ZARR_ERR_IO.
/// Thread-safe. Since: 0.1.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` is valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn zarr_group_open(path: *const c_char, mode: i32, out: *mut *mut zarr_group) -> zarr_status {
    // SAFETY (whole body): pointer arguments follow the documented contract.
    unsafe { clear_out(out) };
    guard(|| {
        need_out(out, "out")?;
        let path = unsafe { str_arg(path, "path") }?;
        let g = Group::open(fs_store(path)?, "", parse_mode(mode)?)?;
        unsafe { write_out(out, into_raw(g), "out") }
    })
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
    unsafe { clear_out(out) };
    guard(|| {
        need_out(out, "out")?;
        let path = unsafe { str_arg(path, "path") }?;
        let g = Group::create(fs_store(path)?, "", attributes_arg(attributes_json)?, 3)?;
        unsafe { write_out(out, into_raw(g), "out") }
    })
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
    unsafe { clear_out(out) };
    guard(|| {
        need_out(out, "out")?;
        let path = unsafe { str_arg(path, "path") }?;
        let format = u8::try_from(zarr_format).ok().filter(|f| *f == 2 || *f == 3).ok_or_else(|| {
            Error::InvalidArgument(format!("zarr_format must be 2 or 3, got {zarr_format}"))
        })?;
        let g = Group::create(fs_store(path)?, "", attributes_arg(attributes_json)?, format)?;
        unsafe { write_out(out, into_raw(g), "out") }
    })
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
        let g = unsafe { group_ref(group) }?;
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
    if group.is_null() {
        return ZARR_OK;
    }
    guard(|| {
        unsafe { group_ref(group) }?;
        // SAFETY: live handle from Box::into_raw.
        unsafe {
            let h = group.cast::<GroupHandle>();
            (*h).magic = 0;
            drop(Box::from_raw(h));
        }
        Ok(())
    })
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
    unsafe { clear_out(json) };
    guard(|| {
        need_out(json, "json")?;
        let g = unsafe { group_ref(group) }?;
        unsafe { write_string(json, serde_json::Value::Object(g.attributes()).to_string(), "json") }
    })
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
        let g = unsafe { group_ref(group) }?;
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
    unsafe { clear_out(json) };
    guard(|| {
        need_out(json, "json")?;
        let g = unsafe { group_ref(group) }?;
        let text = serde_json::to_string_pretty(&g.document()).map_err(|e| Error::Internal(e.to_string()))?;
        unsafe { write_string(json, text, "json") }
    })
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
    unsafe { clear_out(out) };
    guard(|| {
        need_out(out, "out")?;
        let g = unsafe { group_ref(group) }?;
        let a = g.open_array(unsafe { str_arg(name, "name") }?)?;
        unsafe { write_out(out, zarr_array::into_raw(a), "out") }
    })
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
    unsafe { clear_out(out) };
    guard(|| {
        need_out(out, "out")?;
        let g = unsafe { group_ref(group) }?;
        let name = unsafe { str_arg(name, "name") }?;
        let json = unsafe { str_arg(metadata_json, "metadata_json") }?;
        let a = g.create_array(name, json)?;
        unsafe { write_out(out, zarr_array::into_raw(a), "out") }
    })
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
    unsafe { clear_out(out) };
    guard(|| {
        need_out(out, "out")?;
        let g = unsafe { group_ref(group) }?;
        let child = g.open_group(unsafe { str_arg(name, "name") }?)?;
        unsafe { write_out(out, into_raw(child), "out") }
    })
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
    unsafe { clear_out(out) };
    guard(|| {
        need_out(out, "out")?;
        let g = unsafe { group_ref(group) }?;
        let name = unsafe { str_arg(name, "name") }?;
        let child = g.create_group(name, attributes_arg(attributes_json)?)?;
        unsafe { write_out(out, into_raw(child), "out") }
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
    unsafe { clear_out(out) };
    guard(|| {
        need_out(out, "out")?;
        let g = unsafe { group_ref(group) }?;
        let entries = g
            .children()?
            .into_iter()
            .map(|(name, kind)| (CString::new(name).unwrap_or_default(), zarr_node_type::from(kind)))
            .collect();
        let list = Box::into_raw(Box::new(NodeList { magic: LIST_MAGIC, entries }));
        unsafe { write_out(out, list.cast::<zarr_node_list>(), "out") }
    })
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
        let l = unsafe { list_ref(list) }?;
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
        let l = unsafe { list_ref(list) }?;
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
    if list.is_null() {
        return ZARR_OK;
    }
    guard(|| {
        unsafe { list_ref(list) }?;
        // SAFETY: live list from Box::into_raw.
        unsafe {
            let h = list.cast::<NodeList>();
            (*h).magic = 0;
            drop(Box::from_raw(h));
        }
        Ok(())
    })
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
        let store = fs_store(path)?;
        match crate::node::node_kind(store.as_ref(), "")? {
            Some((k, _)) => unsafe { write_out(node_type, zarr_node_type::from(k), "node_type") },
            None => Err(Error::NotFound(format!("no array or group at '{path}'"))),
        }
    })
}
