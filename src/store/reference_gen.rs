//! The `gen` entries of kerchunk references (spec version 1): a key template over named dimensions
//! (`"key": "data/{{i}}.{{j}}"`, `"dimensions": {"i": {"stop": 5}, "j": [0, 2, 4]}`) standing for one
//! reference per point of the dimensions' cartesian product. Nothing is expanded up front: a `gen` of
//! 10^12 keys costs its few fields. A key is looked up by matching it against the key template (each
//! `{{name}}` takes a decimal integer written as Python writes it, which must lie in its dimension),
//! then rendering the URL, offset and length with those values ([`super::reference_template`]).
//! Listing iterates the product in order, the last dimension fastest, as fsspec expands it.

use super::reference_spec::Ref;
use super::reference_template::{Templates, Value};
use crate::error::{Error, Result};

/// The most steps one key match may take.
const MATCH_STEPS: u32 = 100_000;

/// The values of one dimension.
#[derive(Debug, Clone)]
enum Dim {
    /// `range(start, stop, step)`.
    Range { start: i128, stop: i128, step: i128 },
    /// An explicit list.
    List(Vec<i128>),
}

impl Dim {
    fn len(&self) -> u128 {
        match self {
            Dim::List(v) => v.len() as u128,
            Dim::Range { start, stop, step } => {
                let (span, step) = if *step > 0 { (stop - start, *step) } else { (start - stop, -step) };
                if span <= 0 {
                    0
                } else {
                    (span as u128).div_ceil(step as u128)
                }
            }
        }
    }

    fn contains(&self, v: i128) -> bool {
        match self {
            Dim::List(l) => l.contains(&v),
            Dim::Range { start, stop, step } => {
                let inside = if *step > 0 { v >= *start && v < *stop } else { v <= *start && v > *stop };
                inside && (v - start) % step == 0
            }
        }
    }

    fn nth(&self, i: u128) -> i128 {
        match self {
            Dim::List(l) => l[i as usize],
            Dim::Range { start, step, .. } => start + step * i as i128,
        }
    }
}

/// A piece of a key template.
#[derive(Debug, Clone)]
enum Part {
    Lit(String),
    /// A dimension, by index.
    Var(usize),
}

/// One `gen` entry.
#[derive(Debug, Clone)]
pub struct Gen {
    key: Vec<Part>,
    url: String,
    /// Offset and length templates (both or neither).
    range: Option<(String, String)>,
    dims: Vec<(String, Dim)>,
    count: u128,
    /// The entry's index in `gen`, for messages.
    index: usize,
}

fn bad(index: usize, what: impl std::fmt::Display) -> Error {
    Error::Metadata(format!("reference 'gen' entry {index}: {what}"))
}

fn int_of(index: usize, v: &serde_json::Value, what: &str) -> Result<i128> {
    v.as_i64().map(i128::from).ok_or_else(|| bad(index, format!("{what} must be an integer, not {v}")))
}

impl Gen {
    /// Parses entry `index` of `gen`.
    pub fn parse(index: usize, v: &serde_json::Value, templates: &Templates) -> Result<Gen> {
        let o = v.as_object().ok_or_else(|| bad(index, "not an object"))?;
        let text = |name: &str| -> Result<Option<String>> {
            match o.get(name) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
                Some(serde_json::Value::Number(n)) => Ok(Some(n.to_string())),
                Some(other) => Err(bad(index, format!("'{name}' must be a string, not {other}"))),
            }
        };
        let key = text("key")?.ok_or_else(|| bad(index, "no 'key'"))?;
        let url = text("url")?.ok_or_else(|| bad(index, "no 'url'"))?;
        let range = match (text("offset")?, text("length")?) {
            (Some(o), Some(l)) => Some((o, l)),
            (None, None) => None,
            _ => return Err(bad(index, "'offset' and 'length' go together")),
        };
        let dims_json = o.get("dimensions").and_then(|d| d.as_object()).ok_or_else(|| bad(index, "no 'dimensions' object"))?;
        if dims_json.is_empty() {
            return Err(bad(index, "'dimensions' is empty"));
        }
        let mut dims = Vec::new();
        for (name, d) in dims_json {
            let dim = match d {
                serde_json::Value::Array(a) => Dim::List(a.iter().map(|x| int_of(index, x, name)).collect::<Result<_>>()?),
                serde_json::Value::Object(r) => {
                    let get = |k: &str, default: Option<i128>| match r.get(k) {
                        Some(x) => int_of(index, x, &format!("{name}.{k}")),
                        None => default.ok_or_else(|| bad(index, format!("dimension '{name}' has no '{k}'"))),
                    };
                    let step = get("step", Some(1))?;
                    if step == 0 {
                        return Err(bad(index, format!("dimension '{name}' has step 0")));
                    }
                    Dim::Range { start: get("start", Some(0))?, stop: get("stop", None)?, step }
                }
                other => return Err(bad(index, format!("dimension '{name}' must be a list or {{start, stop, step}}, not {other}"))),
            };
            dims.push((name.clone(), dim));
        }
        let count = dims.iter().try_fold(1u128, |a, (_, d)| a.checked_mul(d.len())).ok_or_else(|| bad(index, "too many keys"))?;
        let key = parse_key(index, &key, &dims, templates)?;
        Ok(Gen { key, url, range, dims, count, index })
    }

    /// The URL template.
    pub fn url_template(&self) -> &str {
        &self.url
    }

    /// The number of keys this entry stands for.
    pub fn count(&self) -> u128 {
        self.count
    }

    /// The literal text every key of this entry starts with.
    pub fn head(&self) -> &str {
        match self.key.first() {
            Some(Part::Lit(s)) => s,
            _ => "",
        }
    }

    /// The reference of `key`, when it is one of this entry's keys.
    pub fn lookup(&self, key: &str, templates: &Templates) -> Result<Option<Ref>> {
        let mut values = vec![None; self.dims.len()];
        let mut budget = MATCH_STEPS;
        if !self.matches(0, key, &mut values, &mut budget)? {
            return Ok(None);
        }
        let values: Vec<i128> = values.into_iter().map(|v| v.unwrap_or(0)).collect();
        self.reference(&values, templates).map(Some)
    }

    /// Whether `rest` matches the key template from `part` on, binding dimension values; `budget`
    /// bounds the tries of an ambiguous template (`{{a}}0{{b}}0{{c}}...` against a run of zeros).
    fn matches(&self, part: usize, rest: &str, values: &mut Vec<Option<i128>>, budget: &mut u32) -> Result<bool> {
        if *budget == 0 {
            return Err(bad(self.index, format!("matching key '{rest}' takes too many tries (an ambiguous key template)")));
        }
        *budget -= 1;
        match self.key.get(part) {
            None => Ok(rest.is_empty()),
            Some(Part::Lit(s)) => match rest.strip_prefix(s.as_str()) {
                Some(r) => self.matches(part + 1, r, values, budget),
                None => Ok(false),
            },
            Some(Part::Var(d)) => {
                let run = rest.bytes().enumerate().take_while(|&(i, b)| b.is_ascii_digit() || (i == 0 && b == b'-')).count().min(40);
                for n in (1..=run).rev() {
                    let Ok(v) = rest[..n].parse::<i128>() else { continue };
                    if v.to_string() != rest[..n] || !self.dims[*d].1.contains(v) || values[*d].is_some_and(|w| w != v) {
                        continue;
                    }
                    let before = values[*d];
                    values[*d] = Some(v);
                    if self.matches(part + 1, &rest[n..], values, budget)? {
                        return Ok(true);
                    }
                    values[*d] = before;
                }
                Ok(false)
            }
        }
    }

    fn reference(&self, values: &[i128], templates: &Templates) -> Result<Ref> {
        let vars = |name: &str| self.dims.iter().position(|(n, _)| n == name).map(|i| Value::Int(values[i]));
        let ctx = |e: Error| e.context(format!("reference 'gen' entry {}", self.index));
        let url = templates.render(&self.url, &vars).map_err(ctx)?;
        let range = match &self.range {
            None => None,
            Some((o, l)) => {
                let (o, l) = (templates.render_int(o, &vars).map_err(ctx)?, templates.render_int(l, &vars).map_err(ctx)?);
                let (Ok(o), Ok(l)) = (u64::try_from(o), u64::try_from(l)) else {
                    return Err(ctx(Error::Metadata(format!("offset {o} and length {l} must be non-negative"))));
                };
                Some((o, l))
            }
        };
        Ok(Ref::Url { url: Some(url.into()), range })
    }

    /// The key of point `n` of the product (last dimension fastest).
    fn key_at(&self, mut n: u128) -> String {
        let mut values = vec![0i128; self.dims.len()];
        for (i, (_, d)) in self.dims.iter().enumerate().rev() {
            let len = d.len();
            values[i] = d.nth(n % len);
            n /= len;
        }
        self.key
            .iter()
            .map(|p| match p {
                Part::Lit(s) => s.clone(),
                Part::Var(d) => values[*d].to_string(),
            })
            .collect()
    }

    /// Calls `f` with each key in turn while it returns `true`; fails without calling `f` when this
    /// entry has more than `limit` keys.
    pub fn for_each_key(&self, limit: u128, f: &mut dyn FnMut(String) -> bool) -> Result<()> {
        if self.count > limit {
            return Err(Error::Unsupported(format!(
                "reference 'gen' entry {}: listing its {} keys is refused (more than {limit}); open its arrays by path",
                self.index, self.count
            )));
        }
        for n in 0..self.count {
            if !f(self.key_at(n)) {
                break;
            }
        }
        Ok(())
    }
}

/// Splits a key template into literal text (templates without arguments rendered into it) and
/// dimension names.
fn parse_key(index: usize, key: &str, dims: &[(String, Dim)], templates: &Templates) -> Result<Vec<Part>> {
    let mut parts: Vec<Part> = Vec::new();
    let mut lit = String::new();
    let mut rest = key;
    while let Some(open) = rest.find("{{") {
        lit.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let close = after.find("}}").ok_or_else(|| bad(index, format!("key '{key}': '{{{{' without '}}}}'")))?;
        let name = after[..close].trim();
        if let Some(d) = dims.iter().position(|(n, _)| n == name) {
            if !lit.is_empty() {
                parts.push(Part::Lit(std::mem::take(&mut lit)));
            }
            if matches!(parts.last(), Some(Part::Var(_))) {
                return Err(bad(index, format!("key '{key}': two dimensions with nothing between them cannot be told apart")));
            }
            parts.push(Part::Var(d));
        } else if templates.contains(name) {
            lit.push_str(&templates.render(&format!("{{{{{name}}}}}"), &|_| None)?);
        } else {
            return Err(bad(index, format!("key '{key}': '{{{{{name}}}}}' must be a dimension name or a template")));
        }
        rest = &after[close + 2..];
    }
    lit.push_str(rest);
    if !lit.is_empty() {
        parts.push(Part::Lit(lit));
    }
    if !parts.iter().any(|p| matches!(p, Part::Var(_))) {
        return Err(bad(index, format!("key '{key}' uses no dimension")));
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn templates() -> Templates {
        Templates::new([("u".to_string(), "server.domain/path".to_string())].into_iter().collect())
    }

    #[test]
    fn the_spec_example() {
        let t = templates();
        let g = json!({"key": "gen_key{{i}}", "url": "http://{{u}}_{{i}}", "offset": "{{(i + 1) * 1000}}", "length": "1000",
                       "dimensions": {"i": {"stop": 5}}});
        let g = Gen::parse(0, &g, &t).unwrap();
        assert_eq!(g.count(), 5);
        let r = g.lookup("gen_key3", &t).unwrap().unwrap();
        assert_eq!(r, Ref::Url { url: Some("http://server.domain/path_3".into()), range: Some((4000, 1000)) });
        assert!(g.lookup("gen_key5", &t).unwrap().is_none());
        assert!(g.lookup("gen_key03", &t).unwrap().is_none());
        assert!(g.lookup("gen_key", &t).unwrap().is_none());
        let mut keys = Vec::new();
        g.for_each_key(10, &mut |k| {
            keys.push(k);
            true
        })
        .unwrap();
        assert_eq!(keys, ["gen_key0", "gen_key1", "gen_key2", "gen_key3", "gen_key4"]);
    }

    #[test]
    fn huge_products_are_lazy() {
        let t = templates();
        let g = json!({"key": "data/{{i}}.{{j}}", "url": "f{{i}}.bin", "dimensions": {"i": {"stop": 1000000}, "j": {"start": -10, "stop": 1000000, "step": 2}}});
        let g = Gen::parse(1, &g, &t).unwrap();
        assert_eq!(g.count(), 1_000_000u128 * 500_005);
        assert_eq!(g.lookup("data/999999.-10", &t).unwrap().unwrap(), Ref::Url { url: Some("f999999.bin".into()), range: None });
        assert!(g.lookup("data/999999.-9", &t).unwrap().is_none());
        assert!(g.lookup("data/1000000.0", &t).unwrap().is_none());
        assert_eq!(g.head(), "data/");
        assert!(matches!(g.for_each_key(1 << 20, &mut |_| true), Err(Error::Unsupported(_))));
        let lists = json!({"key": "k{{a}}/{{b}}", "url": "x", "dimensions": {"a": [5, 1], "b": {"start": 3, "stop": 0, "step": -1}}});
        let g = Gen::parse(2, &lists, &t).unwrap();
        let mut keys = Vec::new();
        g.for_each_key(100, &mut |k| {
            keys.push(k);
            true
        })
        .unwrap();
        assert_eq!(keys, ["k5/3", "k5/2", "k5/1", "k1/3", "k1/2", "k1/1"]);
        assert!(g.lookup("k1/0", &t).unwrap().is_none() && g.lookup("k5/2", &t).unwrap().is_some());
    }

    #[test]
    fn bad_entries() {
        let t = templates();
        for g in [
            json!({"key": "k{{i}}", "url": "x", "dimensions": {"i": {"stop": 5, "step": 0}}}),
            json!({"key": "k{{i}}", "url": "x", "offset": "1", "dimensions": {"i": {"stop": 5}}}),
            json!({"key": "k{{i}}{{j}}", "url": "x", "dimensions": {"i": {"stop": 5}, "j": [1]}}),
            json!({"key": "k{{i*2}}", "url": "x", "dimensions": {"i": {"stop": 5}}}),
            json!({"key": "k", "url": "x", "dimensions": {"i": {"stop": 5}}}),
            json!({"key": "k{{i}}", "url": "x", "dimensions": {}}),
            json!({"key": "k{{i}}", "dimensions": {"i": {"stop": 5}}}),
            json!({"key": "k{{i}}", "url": "x", "dimensions": {"i": {"stop": "5"}}}),
            json!({"key": "k{{i}}", "url": "x", "dimensions": {"i": {"stop": 1e300}}}),
        ] {
            assert!(matches!(Gen::parse(0, &g, &t), Err(Error::Metadata(_))), "{g}");
        }
        // An ambiguous template against a hostile key: an error, not an exponential search.
        let mut key = String::from("k");
        let mut dims = serde_json::Map::new();
        for i in 0..40 {
            key.push_str(&format!("{{{{d{i}}}}}0"));
            dims.insert(format!("d{i}"), json!([1, 101, 10101]));
        }
        let g = Gen::parse(0, &json!({"key": key, "url": "x", "dimensions": dims}), &t).unwrap();
        assert!(g.lookup(&format!("k{}x", "10".repeat(200)), &t).is_err());
        let neg = json!({"key": "k{{i}}", "url": "x", "offset": "{{i - 10}}", "length": "1", "dimensions": {"i": {"stop": 5}}});
        assert!(Gen::parse(0, &neg, &t).unwrap().lookup("k1", &t).is_err());
    }
}
