//! `icechunk://` locations: an Icechunk repository (on the local filesystem or on S3), the version to
//! open and a node inside it.
//!
//! The form is `icechunk://REPO[!/node/path][?VERSION]`:
//!
//! - `REPO` is the repository's directory (`icechunk:///abs/repo`; a relative path is relative to the
//!   working directory, as for plain paths), a `file://` URI, or `s3://bucket/prefix` (the
//!   repository's objects lie under `prefix/` in `bucket`; the prefix may be empty);
//! - `!/node/path` names a node inside the repository (split at the first `!/`, as for `zip://` and
//!   `reference://`); without it the location is the repository's root group;
//! - `VERSION` is one of `branch=NAME`, `tag=NAME` or `snapshot=ID` (default: `branch=main`).
//!
//! The query starts at the first `?`: a `?`, `!` or `%` inside the path, the S3 prefix or a node name
//! is written percent-encoded (`%3F`, `%21`, `%25`); the path, the prefix, the node path and the
//! version's value are percent-decoded.

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

/// Where a repository lies.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Repo {
    /// A directory of the local filesystem.
    Local(PathBuf),
    /// The objects under `prefix/` of an S3 bucket.
    S3 {
        /// The bucket.
        bucket: String,
        /// The key prefix, without a leading or trailing `/` (empty: the whole bucket).
        prefix: String,
    },
}

impl std::fmt::Display for Repo {
    /// The repository as written in messages: its directory, or `s3://bucket/prefix`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Repo::Local(p) => write!(f, "{}", p.display()),
            Repo::S3 { bucket, prefix } if prefix.is_empty() => write!(f, "s3://{bucket}"),
            Repo::S3 { bucket, prefix } => write!(f, "s3://{bucket}/{prefix}"),
        }
    }
}

/// A parsed `icechunk://` location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IcechunkLocation {
    /// The repository.
    pub repo: Repo,
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
    let repo = if let Some(s3) = path.strip_prefix("s3://") {
        let (bucket, prefix) = s3.split_once('/').unwrap_or((s3, ""));
        if bucket.is_empty() {
            return Err(bad("names no S3 bucket (icechunk://s3://BUCKET/PREFIX)".into()));
        }
        let prefix = percent_decode(prefix.trim_matches('/')).map_err(&bad)?;
        Repo::S3 { bucket: bucket.to_string(), prefix }
    } else {
        let path = if path.starts_with("file://") { path.to_string() } else { format!("file://{}", abs_form(path)) };
        let repo = super::location::path_from_location(&path).map_err(|e| e.context(&whole))?;
        Repo::Local(if rest.starts_with('/') || rest.starts_with("file://") { repo } else { relative(&repo) })
    };
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
        let local = |p: &str| Repo::Local(PathBuf::from(p));
        let l = parse("/data/repo").unwrap();
        assert_eq!((l.repo, l.version, l.node), (local("/data/repo"), Version::Branch("main".into()), String::new()));
        let l = parse("/data/repo!/a/b?tag=v1").unwrap();
        assert_eq!((l.repo, l.version, l.node), (local("/data/repo"), Version::Tag("v1".into()), "a/b".to_string()));
        let l = parse("/data/my%20repo?snapshot=8W2ZX8QPP05372FDCKWG").unwrap();
        assert_eq!((l.repo, l.version), (local("/data/my repo"), Version::Snapshot("8W2ZX8QPP05372FDCKWG".into())));
        let l = parse("rel/repo!/x?branch=dev%2F1").unwrap();
        assert_eq!((l.repo, l.version, l.node), (local("rel/repo"), Version::Branch("dev/1".into()), "x".to_string()));
        let l = parse("file:///data/repo?branch=b").unwrap();
        assert_eq!(l.repo, local("/data/repo"));
        let s3 = |b: &str, p: &str| Repo::S3 { bucket: b.into(), prefix: p.into() };
        let l = parse("s3://bucket/runs/a%3F1/!/g/t?tag=v1").unwrap();
        assert_eq!((l.repo.clone(), l.version, l.node), (s3("bucket", "runs/a?1"), Version::Tag("v1".into()), "g/t".to_string()));
        assert_eq!(l.repo.to_string(), "s3://bucket/runs/a?1");
        assert_eq!(parse("s3://bucket").unwrap().repo, s3("bucket", ""));
        assert_eq!(parse("s3://bucket/").unwrap().repo.to_string(), "s3://bucket");
        for bad in ["", "?tag=x", "/r?tag=", "/r?tag=a&branch=b", "/r?color=red", "/r?tag", "/r?tag=v1!/a", "/r%zz", "/r!/a%zz", "s3://", "s3:///p", "s3://b/%zz"] {
            assert!(matches!(parse(bad), Err(Error::InvalidArgument(_))), "{bad:?}");
        }
    }
}
