//! `icechunk://` locations: an Icechunk repository on the local filesystem, the version to open and a
//! node inside it.
//!
//! The form is `icechunk://PATH[!/node/path][?VERSION]`:
//!
//! - `PATH` is the repository's directory (`icechunk:///abs/repo`; a relative path is relative to the
//!   working directory, as for plain paths), or a `file://` URI;
//! - `!/node/path` names a node inside the repository (split at the first `!/`, as for `zip://` and
//!   `reference://`); without it the location is the repository's root group;
//! - `VERSION` is one of `branch=NAME`, `tag=NAME` or `snapshot=ID` (default: `branch=main`).
//!
//! The query starts at the first `?`: a `?`, `!` or `%` inside the path or a node name is written
//! percent-encoded (`%3F`, `%21`, `%25`); the path, the node path and the version's value are
//! percent-decoded.

use crate::error::{Error, Result};
use std::path::PathBuf;

/// What to open of a repository.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Version {
    /// The tip of a branch: a writable session (commits advance the branch).
    Branch(String),
    /// The snapshot a tag names: a read-only session.
    Tag(String),
    /// A snapshot by id: a read-only session.
    Snapshot(String),
}

impl Version {
    /// The query form (`branch=main`), as written in locations and messages.
    pub fn query(&self) -> String {
        match self {
            Version::Branch(b) => format!("branch={b}"),
            Version::Tag(t) => format!("tag={t}"),
            Version::Snapshot(s) => format!("snapshot={s}"),
        }
    }
}

/// A parsed `icechunk://` location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IcechunkLocation {
    /// The repository's directory.
    pub repo: PathBuf,
    /// The version to open.
    pub version: Version,
    /// The node inside the repository (`""`: the root), not yet normalised.
    pub node: String,
}

/// The default branch of Icechunk repositories.
pub const DEFAULT_BRANCH: &str = "main";

/// Parses the part of an `icechunk://` location after the scheme.
pub fn parse(rest: &str) -> Result<IcechunkLocation> {
    let whole = format!("icechunk://{rest}");
    let bad = |why: String| Error::InvalidArgument(format!("icechunk location '{whole}': {why}"));
    let (before_query, query) = match rest.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (rest, None),
    };
    if let Some(q) = query {
        if q.contains("!/") {
            return Err(bad("the version query (?branch=, ?tag=, ?snapshot=) goes after the node path".into()));
        }
    }
    let (path, node) = before_query.split_once("!/").unwrap_or((before_query, ""));
    if path.is_empty() {
        return Err(bad("names no repository".into()));
    }
    let path = if path.starts_with("file://") { path.to_string() } else { format!("file://{}", abs_form(path)) };
    let repo = super::location::path_from_location(&path).map_err(|e| e.context(&whole))?;
    let repo = if rest.starts_with('/') || rest.starts_with("file://") { repo } else { relative(&repo) };
    let node = percent_decode(node).map_err(|e| bad(e))?;
    let mut version = None;
    if let Some(q) = query {
        for pair in q.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').ok_or_else(|| bad(format!("'{pair}' is not KEY=VALUE")))?;
            let v = percent_decode(v).map_err(|e| bad(e))?;
            if v.is_empty() {
                return Err(bad(format!("'{k}' has an empty value")));
            }
            let this = match k {
                "branch" => Version::Branch(v),
                "tag" => Version::Tag(v),
                "snapshot" => Version::Snapshot(v),
                _ => return Err(bad(format!("unknown query key '{k}' (branch, tag or snapshot)"))),
            };
            if version.replace(this).is_some() {
                return Err(bad("give one of branch=, tag= and snapshot=".into()));
            }
        }
    }
    Ok(IcechunkLocation { repo, version: version.unwrap_or_else(|| Version::Branch(DEFAULT_BRANCH.into())), node })
}

/// A relative path made absolute-looking for `file://` decoding (marked with a leading `./`).
fn abs_form(path: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/./{path}")
    }
}

/// Undoes [`abs_form`]: `/./x` -> `x`.
fn relative(p: &std::path::Path) -> PathBuf {
    p.strip_prefix("/.").map(PathBuf::from).unwrap_or_else(|_| p.to_path_buf())
}

fn percent_decode(s: &str) -> std::result::Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(v) => {
                    out.push(v);
                    i += 3;
                    continue;
                }
                None => return Err(format!("bad percent-escape in '{s}'")),
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).map_err(|_| format!("'{s}' decodes to invalid UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let l = parse("/data/repo").unwrap();
        assert_eq!((l.repo, l.version, l.node), (PathBuf::from("/data/repo"), Version::Branch("main".into()), String::new()));
        let l = parse("/data/repo!/a/b?tag=v1").unwrap();
        assert_eq!((l.repo, l.version, l.node), (PathBuf::from("/data/repo"), Version::Tag("v1".into()), "a/b".to_string()));
        let l = parse("/data/my%20repo?snapshot=8W2ZX8QPP05372FDCKWG").unwrap();
        assert_eq!((l.repo, l.version), (PathBuf::from("/data/my repo"), Version::Snapshot("8W2ZX8QPP05372FDCKWG".into())));
        let l = parse("rel/repo!/x?branch=dev%2F1").unwrap();
        assert_eq!((l.repo, l.version, l.node), (PathBuf::from("rel/repo"), Version::Branch("dev/1".into()), "x".to_string()));
        let l = parse("file:///data/repo?branch=b").unwrap();
        assert_eq!(l.repo, PathBuf::from("/data/repo"));
        for bad in ["", "?tag=x", "/r?tag=", "/r?tag=a&branch=b", "/r?color=red", "/r?tag", "/r?tag=v1!/a", "/r%zz", "/r!/a%zz"] {
            assert!(matches!(parse(bad), Err(Error::InvalidArgument(_))), "{bad:?}");
        }
    }
}
