//! Fuzz target body `zip_store`: the input (after 8 selection bytes) is a zip archive, written to a
//! scratch file and opened through the real zip store (`zip://FILE`, [`crate::store::zip`]): its
//! listing walked, every member read whole under the metadata ceiling and by ranges, and its nodes
//! opened and read (the root array, the root group's children) through the C API and the group API.

use super::{read_through_c, scratch_path, setup, take_sel};
use crate::group::Group;
use crate::node::NodeKind;
use crate::store::{open_location, ReadLimit, Store};

/// Most members read by the walk of the listing.
const MAX_KEYS: usize = 64;
/// Deepest prefix the walk lists.
const MAX_DEPTH: usize = 6;
/// Most children of the root group opened and read.
const MAX_CHILDREN: usize = 4;

/// `zip_store`: 8 selection bytes, then the zip archive.
pub fn zip_store(data: &[u8]) {
    setup();
    let (sel, archive) = take_sel(data);
    let path = scratch_path(".zip");
    if std::fs::write(&path, archive).is_err() {
        return;
    }
    let location = format!("zip://{}", path.display());
    if let Ok(store) = open_location(&location) {
        let mut left = MAX_KEYS;
        walk(store.as_ref(), "", 0, &mut left);
    }
    read_location(&location, &sel);
    if let Ok(g) = open_location(&location).and_then(|s| Group::open(s, "", false)) {
        let _ = g.attributes();
        if let Ok(children) = g.children() {
            for (name, kind) in children.into_iter().take(MAX_CHILDREN) {
                match kind {
                    NodeKind::Array => read_location(&format!("{location}!/{name}"), &sel),
                    NodeKind::Group => {
                        let _ = g.open_group(&name).and_then(|c| c.children());
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// Opens the array at `location` through the C API and reads it ([`read_through_c`]).
fn read_location(location: &str, sel: &[u8; 8]) {
    let Ok(loc) = std::ffi::CString::new(location) else { return };
    // SAFETY: a NUL-terminated location and a valid output pointer.
    read_through_c(sel, |a| unsafe { crate::ffi::array::zarr_open(loc.as_ptr(), crate::ffi::array::ZARR_READ, a) });
}

/// Lists `prefix` and reads every member below it (at most `left` in all): whole under the metadata
/// ceiling, then by ranges (the first and last bytes, one in the middle).
fn walk(store: &dyn Store, prefix: &str, depth: usize, left: &mut usize) {
    let Ok(listing) = store.list_dir(prefix) else { return };
    for name in &listing.keys {
        if *left == 0 {
            return;
        }
        *left -= 1;
        let key = format!("{prefix}{name}");
        let mut buf = Vec::new();
        let _ = store.get_into(&key, &mut buf, ReadLimit::metadata(crate::limits::max_metadata_bytes()));
        let _ = store.exists(&key);
        if let Ok(Some(src)) = store.open(&key) {
            let len = src.len();
            let n = len.min(64) as usize;
            let mut buf = vec![0u8; n];
            let _ = src.read_into(0, &mut buf);
            let _ = src.read_into(len - n as u64, &mut buf);
            let _ = src.read_into(len / 2, &mut buf[..n / 2]);
            let _ = src.read_into(len, &mut buf[..1.min(n)]);
        }
    }
    if depth < MAX_DEPTH {
        for p in &listing.prefixes {
            walk(store, &format!("{prefix}{p}/"), depth + 1, left);
        }
    }
}
