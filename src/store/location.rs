//! Locations: what C callers pass as `path` (a filesystem path, a `file://` URI, `memory://NAME/node`,
//! `zip://FILE.zip!/node`, `reference://REFS[!/node]`, and with the `remote` feature
//! `s3://bucket/prefix`, `http://host/path` or `https://host/path`). [`open_location_with`] is the one place where a location becomes a store;
//! stores for further URI schemes plug in there.

use super::filesystem::FilesystemStore;
use super::options::StoreOptions;
use super::Store;
use crate::error::{Error, Result};
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::sync::Arc;

/// The store named by `location`, with settings from the environment only (see [`open_location_with`]).
pub fn open_location(location: &str) -> Result<Arc<dyn Store>> {
    open_location_with(location, &StoreOptions::new())
}

/// The store named by `location`: a [`FilesystemStore`] rooted at a filesystem path or a `file://`
/// URI (the directory need not exist yet; of `options` only `confine` applies, else `ZARR_CONFINE`); `memory://NAME[/node/path]` a named
/// in-memory store (see [`super::memory::named`]); `zip://FILE[!/node/path]` a read-only zip file (see
/// [`super::zip`]); `reference://REFS[!/node/path]` read-only kerchunk references (see
/// [`super::reference`]; `options` apply to their remote targets); with the `remote` feature an S3
/// store for `s3://bucket/prefix` and a read-only HTTP store for `http(s)://host/path`, set up from
/// the environment and `options`. Other URI schemes are [`Error::Unsupported`]. Error messages have
/// secrets masked ([`super::redact`]). The option `max_metadata_bytes` applies to every kind: the
/// store is wrapped in a [`super::prefix::PrefixStore`] view with that metadata ceiling.
pub fn open_location_with(location: &str, options: &StoreOptions) -> Result<Arc<dyn Store>> {
    let store = open_location_unredacted(location, options).map_err(super::redact::redact_error)?;
    // The store option wins over ZARR_MAX_METADATA_BYTES, for a store of any kind.
    Ok(match options.get_u64("max_metadata_bytes") {
        Some(ceiling) => super::prefix::PrefixStore::with_max_metadata_bytes(store, ceiling),
        None => store,
    })
}

fn open_location_unredacted(location: &str, options: &StoreOptions) -> Result<Arc<dyn Store>> {
    if let Some(rest) = location.strip_prefix("memory://") {
        let (name, node) = rest.split_once('/').unwrap_or((rest, ""));
        return super::prefix::PrefixStore::wrap(super::memory::named(name)?, node);
    }
    if let Some(rest) = location.strip_prefix("zip://") {
        return super::zip::open_location(rest);
    }
    if let Some(rest) = location.strip_prefix("reference://") {
        return super::reference::open_location(rest, options);
    }
    if let Some(rest) = location.strip_prefix("icechunk://") {
        #[cfg(feature = "icechunk")]
        return super::icechunk::open_location(rest, options);
        #[cfg(not(feature = "icechunk"))]
        return Err(Error::Unsupported(format!(
            "icechunk://{rest}: Icechunk repositories need libzarr built with the `icechunk` feature"
        )));
    }
    let scheme = location.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        #[cfg(feature = "remote")]
        Some("s3") => Ok(Arc::new(super::object::ObjectStoreAdapter::s3(location, options)?)),
        #[cfg(feature = "remote")]
        Some("http" | "https") => Ok(Arc::new(super::object::ObjectStoreAdapter::http(location, options)?)),
        _ => {
            let confine = options.get_bool("confine").unwrap_or_else(super::filesystem::confine_from_env);
            Ok(Arc::new(FilesystemStore::with_confine(path_from_location(location)?, confine)))
        }
    }
}

/// Turns a `file://` URI (or a plain path) into a filesystem path. Percent-escapes are decoded.
pub fn path_from_location(location: &str) -> Result<PathBuf> {
    let Some(rest) = location.strip_prefix("file://") else {
        if location.is_empty() {
            return Err(Error::InvalidArgument("empty path".into()));
        }
        if location.contains("://") {
            let scheme = location.split("://").next().unwrap_or("");
            return Err(Error::Unsupported(format!("unsupported URI scheme '{scheme}' in '{location}'")));
        }
        return Ok(PathBuf::from(location));
    };
    // file:///abs/path or file://localhost/abs/path
    let path = if let Some(p) = rest.strip_prefix("localhost/") {
        format!("/{p}")
    } else if rest.starts_with('/') {
        rest.to_string()
    } else {
        return Err(Error::Unsupported(format!("file URI with a remote host is not supported: '{location}'")));
    };
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(b) => {
                    out.push(b);
                    i += 3;
                    continue;
                }
                None => return Err(Error::InvalidArgument(format!("bad percent-escape in URI '{location}'"))),
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    Ok(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        assert_eq!(path_from_location("/tmp/x").unwrap(), PathBuf::from("/tmp/x"));
        assert_eq!(path_from_location("file:///tmp/a%20b").unwrap(), PathBuf::from("/tmp/a b"));
        assert_eq!(path_from_location("file://localhost/tmp/x").unwrap(), PathBuf::from("/tmp/x"));
        assert!(matches!(path_from_location("s3://bucket/x"), Err(Error::Unsupported(_))));
        assert!(matches!(open_location("gs://bucket/x"), Err(Error::Unsupported(_))));
        assert!(path_from_location("file://host/x").is_err());
        assert!(path_from_location("file:///x%zz").is_err());
        assert!(path_from_location("").is_err());
    }

    #[test]
    fn open_location_gives_a_filesystem_store() {
        let dir = std::env::temp_dir().join(format!("zarr-location-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let uri = format!("file://{}", dir.display());
        open_location(&uri).unwrap().set("k", b"v").unwrap();
        assert_eq!(open_location(dir.to_str().unwrap()).unwrap().get("k").unwrap(), Some(b"v".to_vec()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn memory_locations_share_a_named_store() {
        open_location("memory://location-test/a/b").unwrap().set("zarr.json", b"{}").unwrap();
        assert_eq!(open_location("memory://location-test").unwrap().get("a/b/zarr.json").unwrap(), Some(b"{}".to_vec()));
        assert!(open_location("memory://other-location-test/a").unwrap().get("b/zarr.json").unwrap().is_none());
        assert!(open_location("memory:///a").is_err());
        assert!(open_location("memory://x/../a").is_err());
        assert!(crate::store::memory::remove_named("location-test").unwrap());
        crate::store::memory::remove_named("other-location-test").unwrap();
    }
}
