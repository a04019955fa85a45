//! kerchunk's JSON reference sets, specification versions 0 and 1 (what fsspec's
//! `ReferenceFileSystem` reads), parsed into a map of keys to [`Ref`]s:
//!
//! - version 0: the document is the map `{"key": value, ...}`;
//! - version 1: `{"version": 1, "templates": {...}, "gen": [...], "refs": {...}}`: `templates` are
//!   rendered into the URLs of `refs` ([`super::reference_template`]), `gen` entries stand for ranges
//!   of keys that are looked up without being expanded ([`super::reference_gen`]).
//!
//! A value is inline data (a string: its UTF-8 bytes, or after `base64:` the decoded bytes; a JSON
//! object: its JSON text), a whole target (`[url]`) or a byte range of one (`[url, offset, length]`).
//! A `null` URL stands for the default target, which the reader must supply. A value of any other
//! shape is [`Error::Metadata`] naming the key. URLs are kept once each, however many references
//! name them.

use super::reference_gen::Gen;
use super::reference_template::Templates;
use super::DirListing;
use crate::error::{Error, Result};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// What a key refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ref {
    /// The value itself.
    Inline(Vec<u8>),
    /// A target file, whole (`range` `None`) or the `(offset, length)` bytes of it; `url` `None`: the
    /// default target.
    Url {
        /// The target's URL (`None`: the default target).
        url: Option<Arc<str>>,
        /// `(offset, length)` in the target, or `None` for all of it.
        range: Option<(u64, u64)>,
    },
}

/// The most keys a listing enumerates from one `gen` entry.
pub(crate) const GEN_LIST_LIMIT: u128 = 10_000_000;

/// A parsed JSON reference set.
#[derive(Debug, Default)]
pub struct JsonRefs {
    refs: BTreeMap<String, Ref>,
    gens: Vec<Gen>,
    templates: Templates,
}

fn bad(key: &str, what: impl std::fmt::Display) -> Error {
    Error::Metadata(format!("reference '{key}': {what}"))
}

/// Reads one value of `refs` (templates rendered into URLs); `urls` keeps each URL once.
pub fn parse_value(key: &str, v: &serde_json::Value, templates: &Templates, urls: &mut HashSet<Arc<str>>) -> Result<Ref> {
    use serde_json::Value as J;
    let mut intern = |u: String| -> Arc<str> {
        if let Some(x) = urls.get(u.as_str()) {
            return x.clone();
        }
        let a: Arc<str> = u.into();
        urls.insert(a.clone());
        a
    };
    match v {
        J::String(s) => match s.strip_prefix("base64:") {
            Some(b) => crate::format::base64::decode(b).map(Ref::Inline).map_err(|e| bad(key, format!("bad base64 data: {e}"))),
            None => Ok(Ref::Inline(s.as_bytes().to_vec())),
        },
        J::Object(_) => Ok(Ref::Inline(v.to_string().into_bytes())),
        J::Array(a) if a.len() == 1 || a.len() == 3 => {
            let url = match &a[0] {
                J::Null => None,
                J::String(u) if u.contains("{{") => Some(intern(templates.render(u, &|_| None).map_err(|e| e.context(format!("reference '{key}'")))?)),
                J::String(u) => Some(intern(u.clone())),
                other => return Err(bad(key, format!("the URL must be a string or null, not {other}"))),
            };
            let range = match a.get(1..) {
                Some([o, l]) => {
                    let (Some(o), Some(l)) = (o.as_u64(), l.as_u64()) else {
                        return Err(bad(key, format!("offset and length must be non-negative integers, not {o} and {l}")));
                    };
                    Some((o, l))
                }
                _ => None,
            };
            Ok(Ref::Url { url, range })
        }
        other => Err(bad(key, format!("a reference must be a string, a JSON object, [url] or [url, offset, length], not {other}"))),
    }
}

impl JsonRefs {
    /// Parses a reference file's bytes under the process's metadata ceiling
    /// ([`crate::limits::max_metadata_bytes`]).
    pub fn parse(bytes: &[u8]) -> Result<JsonRefs> {
        JsonRefs::parse_with_ceiling(bytes, crate::limits::max_metadata_bytes())
    }

    /// Parses a reference file's bytes, holding at most what the metadata ceiling `ceiling` allows
    /// ([`super::reference_json`]).
    pub fn parse_with_ceiling(bytes: &[u8], ceiling: u64) -> Result<JsonRefs> {
        use super::reference_json::{RawRef, RawRefs};
        let raw = super::reference_json::read(bytes, ceiling)?;
        let mut out = JsonRefs::default();
        let mut urls = HashSet::new();
        let refs = match &raw.version {
            None => {
                // version 0: every member is a reference, `templates` and `gen` too
                let mut refs = raw.others;
                for (name, v) in [("templates", raw.templates), ("gen", raw.gen)] {
                    if let Some(v) = v {
                        out.refs.insert(name.to_string(), parse_value(name, &v, &out.templates, &mut urls)?);
                    }
                }
                match raw.refs {
                    Some(RawRefs::Value(r)) => {
                        refs.insert("refs".to_string(), r);
                    }
                    Some(RawRefs::Map(_)) => {
                        return Err(Error::Unsupported(
                            "a reference set without \"version\" (version 0) whose member 'refs' is a JSON object \
                             (add \"version\": 1 to read it as version 1)"
                                .into(),
                        ))
                    }
                    None => {}
                }
                refs
            }
            Some(v) if v.as_u64() == Some(1) => {
                if let Some(t) = &raw.templates {
                    let t = t.as_object().ok_or_else(|| Error::Metadata("reference 'templates' must be an object".into()))?;
                    let mut map = HashMap::new();
                    for (k, v) in t {
                        let v = v.as_str().ok_or_else(|| Error::Metadata(format!("reference template '{k}' must be a string")))?;
                        map.insert(k.clone(), v.to_string());
                    }
                    out.templates = Templates::new(map);
                }
                if let Some(g) = &raw.gen {
                    let g = g.as_array().ok_or_else(|| Error::Metadata("reference 'gen' must be a list".into()))?;
                    out.gens = g.iter().enumerate().map(|(i, e)| Gen::parse(i, e, &out.templates)).collect::<Result<_>>()?;
                }
                match raw.refs {
                    None => Default::default(),
                    Some(RawRefs::Map(m)) => m,
                    Some(RawRefs::Value(_)) => return Err(Error::Metadata("reference 'refs' must be an object".into())),
                }
            }
            Some(v) => return Err(Error::Unsupported(format!("reference specification version {v} (known: 0, 1)"))),
        };
        // each distinct URL rendered once
        let mut rendered: HashMap<Arc<str>, Arc<str>> = HashMap::new();
        for (k, r) in refs {
            super::validate_key(&k).map_err(|e| Error::Metadata(format!("reference key: {}", e.message())))?;
            let r = match r {
                RawRef::Text(s) => match s.strip_prefix("base64:") {
                    Some(b) => Ref::Inline(crate::format::base64::decode(b).map_err(|e| bad(&k, format!("bad base64 data: {e}")))?),
                    None => Ref::Inline(s.into_bytes()),
                },
                RawRef::Json(t) => Ref::Inline(t.into_bytes()),
                RawRef::Bad(why) => return Err(bad(&k, why)),
                RawRef::Url { url: Some(u), range } if u.contains("{{") => {
                    let url = match rendered.get(&u) {
                        Some(x) => x.clone(),
                        None => {
                            let text = out.templates.render(&u, &|_| None).map_err(|e| e.context(format!("reference '{k}'")))?;
                            let x = match urls.get(text.as_str()) {
                                Some(x) => Arc::clone(x),
                                None => {
                                    let x: Arc<str> = text.into();
                                    urls.insert(x.clone());
                                    x
                                }
                            };
                            rendered.insert(u, x.clone());
                            x
                        }
                    };
                    Ref::Url { url: Some(url), range }
                }
                RawRef::Url { url, range } => Ref::Url { url, range },
            };
            out.refs.insert(k, r);
        }
        Ok(out)
    }

    /// The reference of `key`: an entry of `refs`, else the first `gen` entry that has the key.
    pub fn lookup(&self, key: &str) -> Result<Option<Ref>> {
        if let Some(r) = self.refs.get(key) {
            return Ok(Some(r.clone()));
        }
        for g in &self.gens {
            if let Some(r) = g.lookup(key, &self.templates)? {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }

    /// The entries of `refs` (templates rendered), sorted by key.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Ref)> {
        self.refs.iter().map(|(k, r)| (k.as_str(), r))
    }

    /// Whether the set has `gen` entries.
    pub fn has_gen(&self) -> bool {
        !self.gens.is_empty()
    }

    /// The target URLs of `refs` and the URL templates of `gen`.
    pub fn urls(&self) -> impl Iterator<Item = &str> {
        let refs = self.refs.values().filter_map(|r| match r {
            Ref::Url { url: Some(u), .. } => Some(&**u),
            _ => None,
        });
        refs.chain(self.gens.iter().map(Gen::url_template))
    }

    /// Whether `key` has a reference (without rendering a `gen` entry's URL).
    pub fn contains(&self, key: &str) -> Result<bool> {
        Ok(self.refs.contains_key(key) || self.lookup(key)?.is_some())
    }

    /// The direct children of `prefix`. A `gen` entry whose fixed head already names a child below
    /// `prefix` gives that child without enumerating its keys; otherwise its keys are enumerated (up
    /// to `GEN_LIST_LIMIT`).
    pub fn list_dir(&self, prefix: &str) -> Result<DirListing> {
        let mut out = DirListing::from_sorted_keys(prefix, self.refs.range(prefix.to_string()..).map(|(k, _)| k.as_str()));
        let mut keys: Vec<String> = Vec::new();
        for g in &self.gens {
            let head = g.head();
            if let Some(rest) = head.strip_prefix(prefix) {
                if let Some((dir, _)) = rest.split_once('/') {
                    out.prefixes.push(dir.to_string());
                    continue;
                }
            } else if !prefix.starts_with(head) {
                continue; // no key of this entry lies below the prefix
            }
            g.for_each_key(GEN_LIST_LIMIT, &mut |k| {
                if k.starts_with(prefix) {
                    keys.push(k);
                }
                true
            })?;
        }
        keys.sort();
        let more = DirListing::from_sorted_keys(prefix, keys.iter().map(String::as_str));
        out.keys.extend(more.keys);
        out.prefixes.extend(more.prefixes);
        out.keys.sort();
        out.keys.dedup();
        out.prefixes.sort();
        out.prefixes.dedup();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_0() {
        let r = JsonRefs::parse(br#"{".zgroup": "{\"zarr_format\": 2}", "x/.zarray": {"chunks": [2]}, "x/0": ["s3://b/f.nc", 10, 20],
                                    "x/1": ["f.nc"], "x/2": "base64:AAEC", "x/3": [null, 5, 6]}"#).unwrap();
        assert_eq!(r.lookup(".zgroup").unwrap(), Some(Ref::Inline(br#"{"zarr_format": 2}"#.to_vec())));
        assert_eq!(r.lookup("x/.zarray").unwrap(), Some(Ref::Inline(br#"{"chunks":[2]}"#.to_vec())));
        assert_eq!(r.lookup("x/0").unwrap(), Some(Ref::Url { url: Some("s3://b/f.nc".into()), range: Some((10, 20)) }));
        assert_eq!(r.lookup("x/1").unwrap(), Some(Ref::Url { url: Some("f.nc".into()), range: None }));
        assert_eq!(r.lookup("x/2").unwrap(), Some(Ref::Inline(vec![0, 1, 2])));
        assert_eq!(r.lookup("x/3").unwrap(), Some(Ref::Url { url: None, range: Some((5, 6)) }));
        assert_eq!(r.lookup("x/4").unwrap(), None);
        let root = r.list_dir("").unwrap();
        assert_eq!((root.keys, root.prefixes), (vec![".zgroup".to_string()], vec!["x".to_string()]));
        assert_eq!(r.list_dir("x/").unwrap().keys, [".zarray", "0", "1", "2", "3"]);
    }

    #[test]
    fn version_1() {
        let doc = br#"{"version": 1, "templates": {"u": "server.domain/path", "f": "{{c}}"},
            "gen": [{"key": "gen_key{{i}}", "url": "http://{{u}}_{{i}}", "offset": "{{(i + 1) * 1000}}", "length": "1000",
                     "dimensions": {"i": {"stop": 5}}},
                    {"key": "big/{{i}}", "url": "f", "dimensions": {"i": {"stop": 1000000000000}}}],
            "refs": {"key0": "data", "key1": ["http://target_url", 10000, 100], "key2": ["http://{{u}}", 10000, 100],
                     "key3": ["http://{{f(c='text')}}", 10000, 100]}}"#;
        let r = JsonRefs::parse(doc).unwrap();
        assert_eq!(r.lookup("key0").unwrap(), Some(Ref::Inline(b"data".to_vec())));
        assert_eq!(r.lookup("key2").unwrap(), Some(Ref::Url { url: Some("http://server.domain/path".into()), range: Some((10000, 100)) }));
        assert_eq!(r.lookup("key3").unwrap(), Some(Ref::Url { url: Some("http://text".into()), range: Some((10000, 100)) }));
        assert_eq!(r.lookup("gen_key0").unwrap(), Some(Ref::Url { url: Some("http://server.domain/path_0".into()), range: Some((1000, 1000)) }));
        assert_eq!(r.lookup("big/999999999999").unwrap(), Some(Ref::Url { url: Some("f".into()), range: None }));
        let root = r.list_dir("").unwrap();
        assert_eq!(root.keys, ["gen_key0", "gen_key1", "gen_key2", "gen_key3", "gen_key4", "key0", "key1", "key2", "key3"]);
        assert_eq!(root.prefixes, ["big"]);
        assert!(matches!(r.list_dir("big/"), Err(Error::Unsupported(_))));
    }

    #[test]
    fn bad_references() {
        for doc in [
            &br#"{"a": 5}"#[..],
            br#"{"a": ["u", 1]}"#,
            br#"{"a": ["u", -1, 2]}"#,
            br#"{"a": [5, 1, 2]}"#,
            br#"{"a": "base64:@@"}"#,
            br#"{"../a": "x"}"#,
            br#"[1]"#,
            br#"{"a": "#,
            br#"{"version": 1, "templates": {"a": "{{a}}"}, "refs": {"k": ["{{a}}"]}}"#,
            br#"{"version": 1, "refs": []}"#,
        ] {
            let e = JsonRefs::parse(doc).unwrap_err();
            assert!(matches!(e, Error::Metadata(_)), "{}: {e:?}", String::from_utf8_lossy(doc));
        }
        assert!(matches!(JsonRefs::parse(br#"{"version": 2}"#), Err(Error::Unsupported(_))));
        let e = JsonRefs::parse(br#"{"x/0": ["u", 1]}"#).unwrap_err();
        assert!(e.message().contains("'x/0'"), "{e}");
    }
}
