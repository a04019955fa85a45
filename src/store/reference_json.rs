//! Reading a kerchunk JSON reference file without building its JSON tree.
//!
//! A reference file is a metadata document (read whole, under the metadata ceiling), but most of it is
//! the `refs` map: millions of small values. Parsed into `serde_json::Value`s, a document of 60 MB of
//! one-character numbers takes over 2 GB (every value a node, every number a string, since the crate's
//! `arbitrary_precision` feature is on). So the reader walks the document with serde: the members of
//! `refs` (and the members of a version-0 document) go straight into [`RawRef`]s, each URL kept once;
//! only the small parts (`version`, `templates`, `gen`, a reference that is a JSON object, the pieces
//! of an array) become `Value`s, and those count against a budget of JSON values. Ceilings, both
//! following the metadata ceiling (docs/limits.md):
//!
//! - references: one per [`BYTES_PER_REFERENCE`] bytes of the ceiling (1 Mi at the default 64 MiB),
//!   as for Parquet reference files' rows; each held reference takes about 100-150 bytes;
//! - other JSON values: [`crate::limits::max_metadata_values`] of the ceiling, as for any metadata
//!   document.
//!
//! Either exceeded is [`Error::Memory`] naming the setting. The references are turned into
//! [`super::reference_spec::Ref`]s by [`super::reference_spec::JsonRefs`].

use crate::error::{Error, Result};
use crate::limits::METADATA_CEILING_SETTING;
use serde::de::{self, DeserializeSeed, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// One reference per this many bytes of the metadata ceiling.
pub(crate) const BYTES_PER_REFERENCE: u64 = 64;

/// The key serde_json uses for a number read with `arbitrary_precision` (a map of one entry).
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// A reference as read: templates not yet rendered, base64 not yet decoded.
#[derive(Debug)]
pub enum RawRef {
    /// A string.
    Text(String),
    /// A JSON object, as JSON text.
    Json(String),
    /// `[url]` or `[url, offset, length]`: the URL as written (`None`: null), each kept once.
    Url {
        /// The URL as written (`None`: null, the default target).
        url: Option<Arc<str>>,
        /// `(offset, length)`, or `None` for the whole target.
        range: Option<(u64, u64)>,
    },
    /// A value that is no reference, and why.
    Bad(String),
}

/// The `refs` member: a map of references, or (in a version-0 document, where `refs` is a key like
/// any other) a single value.
#[derive(Debug)]
pub enum RawRefs {
    /// A JSON object: its members.
    Map(BTreeMap<String, RawRef>),
    /// Any other value.
    Value(RawRef),
}

/// A reference document's top level as read.
#[derive(Debug, Default)]
pub struct RawDoc {
    /// `version`.
    pub version: Option<Value>,
    /// `templates`.
    pub templates: Option<Value>,
    /// `gen`.
    pub gen: Option<Value>,
    /// `refs`.
    pub refs: Option<RawRefs>,
    /// Every other member: the references of a version-0 document.
    pub others: BTreeMap<String, RawRef>,
}

/// What a read may still hold.
struct Budget {
    values: Cell<u64>,
    refs: Cell<u64>,
    ceiling: u64,
    /// The ceiling that was passed (set when a budget runs out, to tell it from a syntax error).
    exceeded: Cell<Option<&'static str>>,
    urls: RefCell<HashSet<Arc<str>>>,
}

impl Budget {
    fn take_value<E: de::Error>(&self) -> std::result::Result<(), E> {
        match self.values.get().checked_sub(1) {
            Some(n) => Ok(self.values.set(n)),
            None => Err(self.fail("values")),
        }
    }

    fn take_ref<E: de::Error>(&self) -> std::result::Result<(), E> {
        match self.refs.get().checked_sub(1) {
            Some(n) => Ok(self.refs.set(n)),
            None => Err(self.fail("references")),
        }
    }

    fn fail<E: de::Error>(&self, what: &'static str) -> E {
        self.exceeded.set(Some(what));
        E::custom(format!("too many {what}"))
    }

    fn intern(&self, u: &str) -> Arc<str> {
        let mut urls = self.urls.borrow_mut();
        if let Some(x) = urls.get(u) {
            return x.clone();
        }
        let a: Arc<str> = u.into();
        urls.insert(a.clone());
        a
    }
}

/// Reads `bytes` under the metadata ceiling `ceiling`.
pub fn read(bytes: &[u8], ceiling: u64) -> Result<RawDoc> {
    let budget = Budget {
        values: Cell::new(crate::limits::max_metadata_values(ceiling)),
        refs: Cell::new((ceiling / BYTES_PER_REFERENCE).max(1024)),
        ceiling,
        exceeded: Cell::new(None),
        urls: RefCell::new(HashSet::new()),
    };
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let doc = (&mut de).deserialize_any(DocVisitor(&budget)).and_then(|d| de.end().map(|()| d));
    doc.map_err(|e| match budget.exceeded.get() {
        Some("references") => Error::Memory(format!(
            "the references hold more than {} references, the most the metadata ceiling of {} bytes allows (one per {BYTES_PER_REFERENCE} bytes; {METADATA_CEILING_SETTING})",
            (budget.ceiling / BYTES_PER_REFERENCE).max(1024),
            budget.ceiling
        )),
        Some(_) => Error::Memory(format!(
            "the references hold more than {} JSON values outside their reference map, the most the metadata ceiling of {} bytes allows ({METADATA_CEILING_SETTING})",
            crate::limits::max_metadata_values(budget.ceiling),
            budget.ceiling
        )),
        None if e.is_data() => Error::Metadata(format!("references: {e}")),
        None => Error::Metadata(format!("references are not valid JSON: {e}")),
    })
}

struct DocVisitor<'b>(&'b Budget);

impl<'de> Visitor<'de> for DocVisitor<'_> {
    type Value = RawDoc;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object of references")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<RawDoc, A::Error> {
        let b = self.0;
        let mut doc = RawDoc::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "version" => doc.version = Some(map.next_value_seed(ValueSeed(b))?),
                "templates" => doc.templates = Some(map.next_value_seed(ValueSeed(b))?),
                "gen" => doc.gen = Some(map.next_value_seed(ValueSeed(b))?),
                "refs" => doc.refs = Some(map.next_value_seed(RefsSeed(b))?),
                _ => {
                    b.take_ref()?;
                    let r = map.next_value_seed(RefSeed(b))?;
                    doc.others.insert(key, r);
                }
            }
        }
        Ok(doc)
    }
}

/// The `refs` member.
struct RefsSeed<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for RefsSeed<'_> {
    type Value = RawRefs;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<RawRefs, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RefsSeed<'_> {
    type Value = RawRefs;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object of references")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<RawRefs, A::Error> {
        let b = self.0;
        let Some(first) = map.next_key::<String>()? else { return Ok(RawRefs::Map(BTreeMap::new())) };
        if first == NUMBER_TOKEN {
            let n: String = map.next_value()?;
            return Ok(RawRefs::Value(not_a_reference(n)));
        }
        let mut out = BTreeMap::new();
        let mut key = Some(first);
        while let Some(k) = key {
            b.take_ref()?;
            let r = map.next_value_seed(RefSeed(b))?;
            out.insert(k, r);
            key = map.next_key::<String>()?;
        }
        Ok(RawRefs::Map(out))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<RawRefs, E> {
        RefSeed(self.0).visit_str(v).map(RawRefs::Value)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<RawRefs, A::Error> {
        RefSeed(self.0).visit_seq(seq).map(RawRefs::Value)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<RawRefs, E> {
        Ok(RawRefs::Value(not_a_reference(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<RawRefs, E> {
        Ok(RawRefs::Value(not_a_reference(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<RawRefs, E> {
        Ok(RawRefs::Value(not_a_reference(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<RawRefs, E> {
        Ok(RawRefs::Value(not_a_reference(v)))
    }

    fn visit_unit<E: de::Error>(self) -> std::result::Result<RawRefs, E> {
        Ok(RawRefs::Value(not_a_reference("null")))
    }
}

fn not_a_reference(what: impl fmt::Display) -> RawRef {
    RawRef::Bad(format!("a reference must be a string, a JSON object, [url] or [url, offset, length], not {what}"))
}

/// One reference.
struct RefSeed<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for RefSeed<'_> {
    type Value = RawRef;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<RawRef, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RefSeed<'_> {
    type Value = RawRef;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a reference")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<RawRef, E> {
        Ok(RawRef::Text(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<RawRef, E> {
        Ok(RawRef::Text(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<RawRef, A::Error> {
        Ok(match ValueSeed(self.0).visit_map(map)? {
            Value::Number(n) => not_a_reference(n),
            v => RawRef::Json(v.to_string()),
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<RawRef, A::Error> {
        let b = self.0;
        let mut items: Vec<Value> = Vec::with_capacity(3);
        while items.len() < 3 {
            match seq.next_element_seed(ValueSeed(b))? {
                Some(v) => {
                    // the pieces of a reference are not metadata values: a scalar is given back
                    if !(v.is_array() || v.is_object()) {
                        b.values.set(b.values.get() + 1);
                    }
                    items.push(v)
                }
                None => break,
            }
        }
        let mut more = 0usize;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            more += 1;
        }
        if more > 0 || items.len() == 2 || items.is_empty() {
            return Ok(not_a_reference(format!("an array of {} elements", items.len() + more)));
        }
        let url = match &items[0] {
            Value::Null => None,
            Value::String(u) => Some(b.intern(u)),
            other => return Ok(RawRef::Bad(format!("the URL must be a string or null, not {other}"))),
        };
        let range = match &items[1..] {
            [o, l] => match (o.as_u64(), l.as_u64()) {
                (Some(o), Some(l)) => Some((o, l)),
                _ => return Ok(RawRef::Bad(format!("offset and length must be non-negative integers, not {o} and {l}"))),
            },
            _ => None,
        };
        Ok(RawRef::Url { url, range })
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<RawRef, E> {
        Ok(not_a_reference(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<RawRef, E> {
        Ok(not_a_reference(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<RawRef, E> {
        Ok(not_a_reference(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<RawRef, E> {
        Ok(not_a_reference(v))
    }

    fn visit_unit<E: de::Error>(self) -> std::result::Result<RawRef, E> {
        Ok(not_a_reference("null"))
    }
}

/// A JSON value, every node counted against the budget.
struct ValueSeed<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<Value, E> {
        self.0.take_value()?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Value, E> {
        self.0.take_value()?;
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Value, E> {
        self.0.take_value()?;
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Value, E> {
        self.0.take_value()?;
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Value, E> {
        self.0.take_value()?;
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<Value, E> {
        self.0.take_value()?;
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> std::result::Result<Value, E> {
        self.0.take_value()?;
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        self.0.take_value()?;
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(ValueSeed(self.0))? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        self.0.take_value()?;
        let mut out = serde_json::Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if k == NUMBER_TOKEN && out.is_empty() {
                // a number, as serde_json hands it over with arbitrary_precision
                let n: String = map.next_value()?;
                let n: serde_json::Number = n.parse().map_err(|e| de::Error::custom(format!("number {n}: {e}")))?;
                return Ok(Value::Number(n));
            }
            let v = map.next_value_seed(ValueSeed(self.0))?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}
