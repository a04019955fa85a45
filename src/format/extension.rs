//! Extension points: the `"name"` / `{"name", "configuration"?, "must_understand"?}` objects that
//! name a codec, data type, chunk grid, chunk key encoding or storage transformer in Zarr v3 metadata.

use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// A parsed extension object (`"name"` or `{"name", "configuration"?, "must_understand"?}`).
#[derive(Debug, Clone)]
pub struct Extension<'a> {
    /// The extension's name.
    pub name: &'a str,
    /// Its configuration, if any.
    pub configuration: Option<&'a Map<String, Value>>,
    /// `false` only when the document says `"must_understand": false`.
    pub must_understand: bool,
}

impl<'a> Extension<'a> {
    /// Parses an extension point value; `what` names it in errors (e.g. `"codec"`).
    pub fn parse(v: &'a Value, what: &str) -> Result<Extension<'a>> {
        match v {
            Value::String(name) => Ok(Extension { name, configuration: None, must_understand: true }),
            Value::Object(obj) => {
                // The 2020 codec draft names a codec with "codec" (a URI) instead of "name".
                let name_key = if what == "codec" && !obj.contains_key("name") && obj.contains_key("codec") {
                    "codec"
                } else {
                    "name"
                };
                let name = obj
                    .get(name_key)
                    .and_then(Value::as_str)
                    .ok_or_else(|| Error::Metadata(format!("{what} object {v} has no string member 'name'")))?;
                let mut ext = Extension { name, configuration: None, must_understand: true };
                for (k, val) in obj {
                    match k.as_str() {
                        k if k == name_key => {}
                        "configuration" => {
                            ext.configuration = Some(val.as_object().ok_or_else(|| {
                                Error::Metadata(format!("{what} '{name}': configuration must be an object"))
                            })?)
                        }
                        "must_understand" => {
                            ext.must_understand = val.as_bool().ok_or_else(|| {
                                Error::Metadata(format!("{what} '{name}': must_understand must be a boolean"))
                            })?
                        }
                        _ => {
                            return Err(Error::Metadata(format!("{what} '{name}': unexpected member '{k}'")))
                        }
                    }
                }
                Ok(ext)
            }
            _ => Err(Error::Metadata(format!("{what} must be a name or an object, got {v}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn extension_forms() {
        let v = json!("gzip");
        let e = Extension::parse(&v, "codec").unwrap();
        assert_eq!(e.name, "gzip");
        assert!(e.must_understand);
        let v = json!({"name": "x", "configuration": {"a": 1}, "must_understand": false});
        let e = Extension::parse(&v, "codec").unwrap();
        assert!(!e.must_understand);
        assert_eq!(e.configuration.unwrap()["a"], 1);
        assert!(Extension::parse(&json!({"configuration": {}}), "codec").is_err());
        assert!(Extension::parse(&json!({"name": "x", "configuration": 3}), "codec").is_err());
        assert!(Extension::parse(&json!({"name": "x", "extra": 3}), "codec").is_err());
        assert!(Extension::parse(&json!(5), "codec").is_err());
    }
}
