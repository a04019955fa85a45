//! The `{{...}}` strings of kerchunk references (spec version 1: `templates`, and the `key`, `url`,
//! `offset` and `length` of `gen` entries), which fsspec renders with jinja2. This renders the subset
//! that reference files use, with no jinja engine:
//!
//! - a name: a variable (a `gen` dimension, or a keyword argument of a template call) or a template
//!   (`{{u}}`), whose own `{{...}}` are rendered in turn;
//! - a template call with keyword arguments: `{{f(c='text')}}`, `{{f(c=i)}}`;
//! - integer arithmetic and string literals: `{{(i + 1) * 1000}}`, `{{i // 2}}`, `{{'a' + u}}`
//!   (`+ - * / // %`, parentheses, unary minus; `/` divides to a whole number as `//` does).
//!
//! Anything else (filters, attribute access, loops) is [`Error::Metadata`] naming the text. A template
//! that refers to itself, directly or through others, is an error naming it, as is output past
//! `MAX_RENDERED` bytes or nesting past `MAX_DEPTH`.

use crate::error::{Error, Result};
use std::collections::HashMap;

/// The most bytes one rendered string may have.
pub(crate) const MAX_RENDERED: usize = 1 << 20;
/// The most templates rendered inside one another.
pub(crate) const MAX_DEPTH: usize = 32;
/// The most parentheses and unary minus signs nested inside one `{{...}}`.
const MAX_NESTING: usize = 64;

/// A value inside `{{...}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// An integer.
    Int(i128),
    /// A string.
    Str(String),
}

impl Value {
    fn text(&self) -> String {
        match self {
            Value::Int(i) => i.to_string(),
            Value::Str(s) => s.clone(),
        }
    }
}

/// The named templates of a reference set.
#[derive(Debug, Clone, Default)]
pub struct Templates {
    map: HashMap<String, String>,
}

/// Variables visible while rendering (gen dimensions, or a template call's arguments).
pub type Vars<'a> = &'a dyn Fn(&str) -> Option<Value>;

impl Templates {
    /// Templates by name.
    pub fn new(map: HashMap<String, String>) -> Templates {
        Templates { map }
    }

    /// Whether there is a template `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }

    /// Renders `text` with `vars`.
    pub fn render(&self, text: &str, vars: Vars) -> Result<String> {
        self.render_in(text, vars, &mut Vec::new())
    }

    /// Evaluates `text` to an integer: a rendered string that is a (possibly signed) decimal integer.
    pub fn render_int(&self, text: &str, vars: Vars) -> Result<i128> {
        let s = self.render(text, vars)?;
        s.trim().parse::<i128>().map_err(|_| Error::Metadata(format!("'{text}' renders to '{s}', not an integer")))
    }

    fn render_in(&self, text: &str, vars: Vars, stack: &mut Vec<String>) -> Result<String> {
        if stack.len() > MAX_DEPTH {
            return Err(Error::Metadata(format!("templates nested deeper than {MAX_DEPTH} ({})", stack.join(" -> "))));
        }
        let mut out = String::new();
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            out.push_str(&rest[..open]);
            let after = &rest[open + 2..];
            let close = after.find("}}").ok_or_else(|| Error::Metadata(format!("'{text}': '{{{{' without '}}}}'")))?;
            let expr = &after[..close];
            let v = Parser { src: expr, pos: 0, t: self, vars, stack, whole: text, nesting: 0 }.parse_all()?;
            out.push_str(&v.text());
            if out.len() > MAX_RENDERED {
                return Err(Error::Metadata(format!("'{text}' renders to more than {MAX_RENDERED} bytes")));
            }
            rest = &after[close + 2..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn expand(&self, name: &str, args: &HashMap<String, Value>, stack: &mut Vec<String>) -> Result<Value> {
        let body = &self.map[name];
        if stack.iter().any(|s| s == name) {
            return Err(Error::Metadata(format!("template '{name}' refers to itself ({} -> {name})", stack.join(" -> "))));
        }
        stack.push(name.to_string());
        let r = self.render_in(body, &|n: &str| args.get(n).cloned(), stack);
        stack.pop();
        Ok(Value::Str(r?))
    }
}

struct Parser<'a, 's> {
    src: &'a str,
    pos: usize,
    t: &'a Templates,
    vars: Vars<'a>,
    stack: &'s mut Vec<String>,
    whole: &'a str,
    nesting: usize,
}

impl Parser<'_, '_> {
    fn err(&self, what: &str) -> Error {
        Error::Metadata(format!("'{}': {what} in '{{{{{}}}}}'", self.whole, self.src))
    }

    fn skip_ws(&mut self) {
        while self.src[self.pos..].starts_with([' ', '\t']) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, tok: &str) -> bool {
        self.skip_ws();
        if self.src[self.pos..].starts_with(tok) {
            self.pos += tok.len();
            true
        } else {
            false
        }
    }

    fn parse_all(mut self) -> Result<Value> {
        let v = self.expr()?;
        self.skip_ws();
        if self.pos != self.src.len() {
            return Err(self.err("unsupported expression"));
        }
        Ok(v)
    }

    fn expr(&mut self) -> Result<Value> {
        let mut v = self.term()?;
        loop {
            if self.eat("+") {
                let r = self.term()?;
                v = match (v, r) {
                    (Value::Int(a), Value::Int(b)) => Value::Int(a.checked_add(b).ok_or_else(|| self.err("integer overflow"))?),
                    (Value::Str(a), Value::Str(b)) => Value::Str(a + &b),
                    _ => return Err(self.err("'+' of a string and a number")),
                };
            } else if self.eat("-") {
                let (a, b) = (self.int(v)?, self.term().and_then(|r| self.int(r))?);
                v = Value::Int(a.checked_sub(b).ok_or_else(|| self.err("integer overflow"))?);
            } else {
                return Ok(v);
            }
        }
    }

    fn int(&self, v: Value) -> Result<i128> {
        match v {
            Value::Int(i) => Ok(i),
            Value::Str(s) => s.trim().parse().map_err(|_| self.err(&format!("'{s}' is not a number"))),
        }
    }

    fn term(&mut self) -> Result<Value> {
        let mut v = self.factor()?;
        loop {
            let op = if self.eat("*") {
                '*'
            } else if self.eat("//") || self.eat("/") {
                '/'
            } else if self.eat("%") {
                '%'
            } else {
                return Ok(v);
            };
            let (a, b) = (self.int(v)?, self.factor().and_then(|r| self.int(r))?);
            let r = match op {
                '*' => a.checked_mul(b),
                _ if b == 0 => return Err(self.err("division by zero")),
                '/' => Some(a.div_euclid(b)),
                _ => Some(a.rem_euclid(b)),
            };
            v = Value::Int(r.ok_or_else(|| self.err("integer overflow"))?);
        }
    }

    fn factor(&mut self) -> Result<Value> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return Err(self.err(&format!("expression nested deeper than {MAX_NESTING}")));
        }
        let v = self.factor_inner();
        self.nesting -= 1;
        v
    }

    fn factor_inner(&mut self) -> Result<Value> {
        self.skip_ws();
        let rest = &self.src[self.pos..];
        let Some(c) = rest.chars().next() else { return Err(self.err("missing value")) };
        if self.eat("-") {
            let v = self.factor()?;
            return Ok(Value::Int(-self.int(v)?));
        }
        if self.eat("(") {
            let v = self.expr()?;
            if !self.eat(")") {
                return Err(self.err("missing ')'"));
            }
            return Ok(v);
        }
        if c.is_ascii_digit() {
            let n = rest.bytes().take_while(u8::is_ascii_digit).count();
            self.pos += n;
            return rest[..n].parse().map(Value::Int).map_err(|_| self.err("integer too large"));
        }
        if c == '\'' || c == '"' {
            let end = rest[1..].find(c).ok_or_else(|| self.err("unterminated string"))?;
            self.pos += end + 2;
            return Ok(Value::Str(rest[1..1 + end].to_string()));
        }
        let name = self.name().ok_or_else(|| self.err("unsupported expression"))?;
        if self.eat("(") {
            if !self.t.contains(&name) {
                return Err(self.err(&format!("'{name}' is not a template")));
            }
            let mut args = HashMap::new();
            if !self.eat(")") {
                loop {
                    let k = self.name().ok_or_else(|| self.err("template arguments must be name=value"))?;
                    if !self.eat("=") {
                        return Err(self.err("template arguments must be name=value"));
                    }
                    let v = self.expr()?;
                    args.insert(k, v);
                    if self.eat(")") {
                        break;
                    }
                    if !self.eat(",") {
                        return Err(self.err("missing ')'"));
                    }
                }
            }
            return self.t.expand(&name, &args, self.stack);
        }
        if let Some(v) = (self.vars)(&name) {
            return Ok(v);
        }
        if self.t.contains(&name) {
            return self.t.expand(&name, &HashMap::new(), self.stack);
        }
        Err(self.err(&format!("undefined name '{name}'")))
    }

    fn name(&mut self) -> Option<String> {
        self.skip_ws();
        let rest = &self.src[self.pos..];
        let n = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
        if n == 0 || rest.as_bytes()[0].is_ascii_digit() {
            return None;
        }
        self.pos += n;
        Some(rest[..n].to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(pairs: &[(&str, &str)]) -> Templates {
        Templates::new(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    #[test]
    fn the_spec_example() {
        let t = t(&[("u", "server.domain/path"), ("f", "{{c}}")]);
        let none = |_: &str| None;
        assert_eq!(t.render("http://{{u}}", &none).unwrap(), "http://server.domain/path");
        assert_eq!(t.render("http://{{f(c='text')}}", &none).unwrap(), "http://text");
        let i = |n: &str| (n == "i").then_some(Value::Int(3));
        assert_eq!(t.render("http://{{u}}_{{i}}", &i).unwrap(), "http://server.domain/path_3");
        assert_eq!(t.render_int("{{(i + 1) * 1000}}", &i).unwrap(), 4000);
        assert_eq!(t.render_int("{{ i // 2 + i % 2 - -1 }}", &i).unwrap(), 3);
        assert_eq!(t.render_int("1000", &i).unwrap(), 1000);
        assert_eq!(t.render("{{f(c=i)}}-{{'a' + u}}", &i).unwrap(), "3-aserver.domain/path");
    }

    #[test]
    fn bad_templates() {
        let none = |_: &str| None;
        let t = t(&[("a", "x{{a}}"), ("b", "{{c}}"), ("c", "{{b}}"), ("d", "{{e}}{{e}}"), ("e", "{{g}}{{g}}")]);
        let e = t.render("{{a}}", &none).unwrap_err();
        assert!(e.message().contains("template 'a' refers to itself"), "{e}");
        assert!(t.render("{{b}}", &none).unwrap_err().message().contains("refers to itself"));
        let deep = format!("{{{{{}1{}}}}}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(t.render(&deep, &none).unwrap_err().message().contains("nested deeper"));
        assert!(t.render(&format!("{{{{{}1}}}}", "-".repeat(100_000)), &none).is_err());
        for bad in ["{{zz}}", "{{u|upper}}", "{{1/0}}", "{{ (1 }}", "{{", "{{x.y}}", "{{'a' + 1}}"] {
            assert!(matches!(t.render(bad, &none), Err(Error::Metadata(_))), "{bad}");
        }
        assert!(t.render_int("{{'x'}}", &none).is_err());
        assert!(t.render_int("{{99999999999999999999999999999999999999999 * 99999}}", &none).is_err());
        // Exponential growth is cut at MAX_RENDERED.
        let mut m = HashMap::new();
        for i in 0..40 {
            m.insert(format!("t{i}"), format!("{{{{t{}}}}}{{{{t{}}}}}", i + 1, i + 1));
        }
        m.insert("t40".into(), "xxxxxxxx".into());
        assert!(Templates::new(m).render("{{t0}}", &none).is_err());
    }
}
