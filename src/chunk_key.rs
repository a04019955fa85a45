//! Chunk key encodings (v3 `default` and `v2`): chunk grid index -> store key (relative to the array).

use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// How chunk indices become store keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkKeyEncoding {
    /// `default`: `c` followed by the indices, each preceded by the separator (`c/1/2`, `c.1.2`; 0-d: `c`).
    Default {
        /// '/' or '.'
        separator: char,
    },
    /// `v2`: the indices joined by the separator (`1.2`, `1/2`; 0-d: `0`).
    V2 {
        /// '.' or '/'
        separator: char,
    },
}

impl ChunkKeyEncoding {
    /// Parses a v3 `chunk_key_encoding` by name and configuration.
    pub fn from_v3(name: &str, config: Option<&Map<String, Value>>) -> Result<ChunkKeyEncoding> {
        let default_sep = match name {
            "default" => '/',
            "v2" => '.',
            _ => return Err(Error::Unsupported(format!("unsupported chunk_key_encoding '{name}'"))),
        };
        let mut separator = default_sep;
        if let Some(cfg) = config {
            for (k, v) in cfg {
                match (k.as_str(), v.as_str()) {
                    ("separator", Some("/")) => separator = '/',
                    ("separator", Some(".")) => separator = '.',
                    ("separator", _) => {
                        return Err(Error::Metadata(format!(
                            "chunk_key_encoding separator must be \"/\" or \".\", got {v}"
                        )))
                    }
                    _ => {
                        return Err(Error::Metadata(format!(
                            "unknown member '{k}' in chunk_key_encoding '{name}' configuration"
                        )))
                    }
                }
            }
        }
        Ok(if name == "default" { ChunkKeyEncoding::Default { separator } } else { ChunkKeyEncoding::V2 { separator } })
    }

    /// The key of the chunk at grid index `idx`.
    pub fn key(&self, idx: &[u64]) -> String {
        use std::fmt::Write;
        let mut s = String::with_capacity(2 + idx.len() * 4);
        match *self {
            ChunkKeyEncoding::Default { separator } => {
                s.push('c');
                for i in idx {
                    s.push(separator);
                    write!(s, "{i}").unwrap();
                }
            }
            ChunkKeyEncoding::V2 { separator } => {
                if idx.is_empty() {
                    s.push('0');
                }
                for (n, i) in idx.iter().enumerate() {
                    if n > 0 {
                        s.push(separator);
                    }
                    write!(s, "{i}").unwrap();
                }
            }
        }
        s
    }

    /// The grid index of a chunk of rank `rank` whose key is `key` (the inverse of
    /// [`ChunkKeyEncoding::key`]); `None` when `key` is not such a chunk key (a metadata document, a
    /// lock file, a key of another rank). Only keys that [`ChunkKeyEncoding::key`] writes are read
    /// back (no leading zeros, no sign), so the key of the index found is `key` itself.
    pub fn parse(&self, key: &str, rank: usize) -> Option<Vec<u64>> {
        let (rest, separator) = match *self {
            ChunkKeyEncoding::Default { separator } => {
                let rest = key.strip_prefix('c')?;
                if rank == 0 {
                    return rest.is_empty().then(Vec::new);
                }
                (rest.strip_prefix(separator)?, separator)
            }
            ChunkKeyEncoding::V2 { separator } => {
                if rank == 0 {
                    return (key == "0").then(Vec::new);
                }
                (key, separator)
            }
        };
        let idx: Vec<u64> = rest
            .split(separator)
            .map(|p| {
                let canonical = !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && (p == "0" || !p.starts_with('0'));
                canonical.then(|| p.parse().ok()).flatten()
            })
            .collect::<Option<_>>()?;
        (idx.len() == rank).then_some(idx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys() {
        let d = ChunkKeyEncoding::from_v3("default", None).unwrap();
        assert_eq!(d.key(&[1, 23, 45]), "c/1/23/45");
        assert_eq!(d.key(&[]), "c");
        let cfg = json!({"separator": "."});
        let d = ChunkKeyEncoding::from_v3("default", cfg.as_object()).unwrap();
        assert_eq!(d.key(&[1, 2]), "c.1.2");
        let v = ChunkKeyEncoding::from_v3("v2", None).unwrap();
        assert_eq!(v.key(&[1, 23, 45]), "1.23.45");
        assert_eq!(v.key(&[]), "0");
        let cfg = json!({"separator": "/"});
        assert_eq!(ChunkKeyEncoding::from_v3("v2", cfg.as_object()).unwrap().key(&[3, 4]), "3/4");
        assert!(ChunkKeyEncoding::from_v3("v2", json!({"separator": "-"}).as_object()).is_err());
        assert!(matches!(ChunkKeyEncoding::from_v3("mine", None), Err(Error::Unsupported(_))));
    }

    #[test]
    fn keys_parse_back() {
        let slash = ChunkKeyEncoding::Default { separator: '/' };
        let dot = ChunkKeyEncoding::Default { separator: '.' };
        let v2 = ChunkKeyEncoding::V2 { separator: '.' };
        let v2_slash = ChunkKeyEncoding::V2 { separator: '/' };
        for e in [slash, dot, v2, v2_slash] {
            for idx in [vec![], vec![0], vec![7, 0, 4611686018427387903], vec![u64::MAX, 12]] {
                assert_eq!(e.parse(&e.key(&idx), idx.len()), Some(idx.clone()), "{e:?} {idx:?}");
            }
        }
        for bad in ["zarr.json", "c", "c/", "c/1/", "c/01", "c/+1", "c/1/2/3", "c/18446744073709551616", ".lock", "c.1"] {
            assert_eq!(slash.parse(bad, 2), None, "{bad}");
        }
        for bad in [".zarray", ".zattrs", "1", "1.2.3", "1..2", "a.b", "1/2"] {
            assert_eq!(v2.parse(bad, 2), None, "{bad}");
        }
        assert_eq!(v2_slash.parse("1/2", 2), Some(vec![1, 2]));
        assert_eq!(v2.parse("0", 0), Some(vec![]));
        assert_eq!(slash.parse("c", 0), Some(vec![]));
    }
}
