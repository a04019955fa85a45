//! JSON text as Zarr implementations write it: standard JSON plus the bare tokens `NaN`, `Infinity`
//! and `-Infinity` outside strings, which Python's `json` module writes for non-finite floats (and
//! zarr-python therefore writes in attributes and reads everywhere).
//!
//! serde_json rejects those tokens. Parsing first tries serde_json as is (the usual case costs
//! nothing more); if that fails and the text holds such tokens, each one is replaced by a JSON number
//! that occurs nowhere in the text (a sentinel), the text is parsed again, and the sentinels are
//! turned into [`Number`]s whose text is the token itself. With serde_json's `arbitrary_precision`
//! feature a number is kept as its text and serialised verbatim, so documents and attributes are
//! written back with the same bare tokens and [`non_finite`] recognises them where a float is read
//! (fill values). Everything else that is not JSON is still rejected, with serde_json's message and
//! the line and column of the original text.
//!
//! In a metadata document the tokens are accepted only in attributes and fill values
//! ([`Scope::AttributesAndFillValues`]): elsewhere (shapes, codec configurations) they are a metadata
//! error naming where they are, so no code that reads configurations ever meets them. This matters
//! because serde_json's `to_value` (and so `json!` with an interpolated value) refuses such a number:
//! the metadata code places attributes and fill values into documents without it.

use serde_json::{Number, Value};
use std::collections::HashSet;

/// The tokens, in the order of the sentinels' middle digit.
const TOKENS: [&str; 3] = ["NaN", "Infinity", "-Infinity"];

/// A JSON text that could not be parsed: serde_json's message with the position in the text as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError(pub String);

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where the bare tokens are accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Anywhere (an attributes document such as `.zattrs`, or attributes given by a caller).
    Anywhere,
    /// In a metadata document: only below a member `attributes`, `fill_value` or `<path>/.zattrs`
    /// (consolidated metadata), and never inside a codec list (`codecs`, `index_codecs`, `filters`,
    /// `compressor`).
    AttributesAndFillValues,
}

/// Members whose values may hold the tokens in a metadata document.
const TOKEN_MEMBERS: [&str; 2] = ["attributes", "fill_value"];
/// Members whose values never may (codec configurations).
const CODEC_MEMBERS: [&str; 4] = ["codecs", "index_codecs", "filters", "compressor"];

/// Parses a JSON text that may contain the bare tokens `NaN`, `Infinity` and `-Infinity` outside
/// strings (as [`Number`]s with that text; see [`non_finite`]) where `scope` allows them.
pub fn parse(text: &[u8], scope: Scope) -> Result<Value, JsonError> {
    let first = match serde_json::from_slice::<Value>(text) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let Some(rw) = rewrite(text) else { return Err(JsonError(first.to_string())) };
    match serde_json::from_slice::<Value>(&rw.text) {
        Ok(mut v) => {
            let mut path = Vec::new();
            restore(&mut v, &rw.sentinels, scope, &mut path)?;
            Ok(v)
        }
        Err(e) => Err(JsonError(message_at_original_position(&e, &rw))),
    }
}

/// How many JSON values `text` holds, about: its commas and opening brackets outside strings, plus one
/// (an upper bound for arrays and objects of values, which is what a parse allocates for). Linear in
/// the text, without allocating: a caller refuses a text whose parse would take too much memory
/// before parsing it (a parsed value takes about a hundred bytes, far more than its text).
pub fn count_values(text: &[u8]) -> u64 {
    let mut n = 1u64;
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => {
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
            }
            b',' | b'[' | b'{' => n += 1,
            _ => {}
        }
        i += 1;
    }
    n
}

/// The value of a number written as one of the bare tokens (NaN, +inf, -inf); `None` for any other
/// number (finite ones included).
pub fn non_finite(n: &Number) -> Option<f64> {
    match n.as_str() {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// The number written as the bare token for `x` (NaN or an infinity); `None` for a finite `x`.
pub fn non_finite_number(x: f64) -> Option<Number> {
    let token = if x.is_nan() {
        TOKENS[0]
    } else if x == f64::INFINITY {
        TOKENS[1]
    } else if x == f64::NEG_INFINITY {
        TOKENS[2]
    } else {
        return None;
    };
    Some(token_number(token))
}

/// A number whose text is `token`. serde_json keeps an arbitrary-precision number as its text and
/// writes that text as is; `from_string_unchecked` is the one constructor that skips its
/// finite-number check (the unit tests below pin the behaviour this module relies on).
fn token_number(token: &str) -> Number {
    Number::from_string_unchecked(token.to_string())
}

/// A text with its tokens replaced.
struct Rewritten {
    text: Vec<u8>,
    /// The sentinel texts, in the order of [`TOKENS`].
    sentinels: [String; 3],
    /// Each replacement: (offset in `text`, sentinel length, token length).
    replaced: Vec<(usize, usize, usize)>,
}

/// Bytes that may continue a bare word or number: a token is only replaced where it stands alone.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-')
}

/// Replaces the bare tokens outside strings by sentinel numbers absent from `text`; `None` when
/// there is none. Linear in the text; strings (escapes included) are skipped as serde_json reads them.
fn rewrite(text: &[u8]) -> Option<Rewritten> {
    // Pass 1: find the tokens (offset, which) and the number texts that could clash with a sentinel.
    let mut found: Vec<(usize, usize)> = Vec::new();
    let mut numbers: HashSet<&[u8]> = HashSet::new();
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if b == b'"' {
            i += 1;
            while i < text.len() && text[i] != b'"' {
                i += if text[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if b == b'-' || b.is_ascii_alphanumeric() {
            // a run of word bytes: a literal, a number or a token
            let start = i;
            i += 1;
            while i < text.len() && is_word(text[i]) {
                i += 1;
            }
            let word = &text[start..i];
            match TOKENS.iter().position(|t| t.as_bytes() == word) {
                Some(t) => found.push((start, t)),
                None if word.starts_with(b"-0.") => {
                    numbers.insert(word);
                }
                None => {}
            }
        } else {
            i += 1;
        }
    }
    if found.is_empty() {
        return None;
    }
    // The sentinels: `-0.<t><salt>`, with the first salt none of whose three texts is in the text
    // (serde_json keeps a number without exponent as written, so equal texts are the only clash).
    let sentinels_for = |salt: usize| [0, 1, 2].map(|t| format!("-0.{t}{salt}"));
    let sentinels = (0..)
        .map(sentinels_for)
        .find(|s| s.iter().all(|x| !numbers.contains(x.as_bytes())))
        .expect("a text has fewer numbers than salts");
    // Pass 2: copy with the replacements.
    let mut out = Vec::with_capacity(text.len() + found.len() * 8);
    let mut replaced = Vec::with_capacity(found.len());
    let mut at = 0;
    for &(start, t) in &found {
        out.extend_from_slice(&text[at..start]);
        replaced.push((out.len(), sentinels[t].len(), TOKENS[t].len()));
        out.extend_from_slice(sentinels[t].as_bytes());
        at = start + TOKENS[t].len();
    }
    out.extend_from_slice(&text[at..]);
    Some(Rewritten { text: out, sentinels, replaced })
}

/// Turns the sentinel numbers in `v` back into their tokens, failing on one outside `scope`; `path`
/// holds the member names and indices down to `v` (depth bounded by serde_json's nesting limit).
fn restore(v: &mut Value, sentinels: &[String; 3], scope: Scope, path: &mut Vec<String>) -> Result<(), JsonError> {
    match v {
        Value::Number(n) => {
            if let Some(t) = sentinels.iter().position(|s| s == n.as_str()) {
                if scope == Scope::AttributesAndFillValues && !allowed(path) {
                    return Err(JsonError(format!(
                        "{} at {} (the bare tokens NaN, Infinity and -Infinity are accepted only in attributes and fill values)",
                        TOKENS[t],
                        if path.is_empty() { "the top level".to_string() } else { path.join("/") }
                    )));
                }
                *n = token_number(TOKENS[t]);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                path.push(i.to_string());
                restore(x, sentinels, scope, path)?;
                path.pop();
            }
        }
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                path.push(k.clone());
                restore(x, sentinels, scope, path)?;
                path.pop();
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether a token at `path` of a metadata document is accepted.
fn allowed(path: &[String]) -> bool {
    let keys = || path.iter().map(String::as_str);
    keys().any(|k| TOKEN_MEMBERS.contains(&k) || k.ends_with(".zattrs")) && !keys().any(|k| CODEC_MEMBERS.contains(&k))
}

/// serde_json's message for an error in the rewritten text, with the column of the original text.
fn message_at_original_position(e: &serde_json::Error, rw: &Rewritten) -> String {
    let full = e.to_string();
    if e.line() == 0 {
        return full;
    }
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let msg = full.strip_suffix(&suffix).unwrap_or(&full);
    // serde_json counts lines from 1 and columns as bytes from the line's start (replacements never
    // hold a newline, so only the column moves).
    let line_start = if e.line() == 1 {
        0
    } else {
        let mut seen = 1;
        rw.text.iter().position(|&b| {
            seen += (b == b'\n') as usize;
            seen == e.line()
        })
        .map_or(0, |p| p + 1)
    };
    let at = line_start + e.column();
    // A sentinel may be longer or shorter than its token (`-Infinity` is 9 bytes), so the shift is signed.
    let mut shift = 0isize;
    for &(off, new_len, old_len) in &rw.replaced {
        if off >= at {
            break;
        }
        if off >= line_start {
            // inside a sentinel: point at the token's start + what is left of it
            shift += if at < off + new_len {
                (at - off) as isize - (at - off).min(old_len) as isize
            } else {
                new_len as isize - old_len as isize
            };
        }
    }
    format!("{msg} at line {} column {}", e.line(), (e.column() as isize - shift).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_outside_strings() {
        assert_eq!(count_values(b"1"), 1);
        assert_eq!(count_values(b"[1, 2, 3]"), 4);
        assert_eq!(count_values(br#"{"a,[{": [NaN, NaN], "b\",": 1}"#), 5);
        assert_eq!(count_values(br#"["unterminated, [, {"#), 2);
    }

    fn ok(s: &str) -> Value {
        parse(s.as_bytes(), Scope::Anywhere).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn err(s: &str) -> String {
        parse(s.as_bytes(), Scope::Anywhere).expect_err(s).0
    }

    #[test]
    fn tokens_parse_as_numbers_and_serialise_as_written() {
        let v = ok(r#"{"a": NaN, "b": [Infinity, -Infinity, 1.5], "c": {"d": NaN}, "s": "NaN"}"#);
        assert!(non_finite(v["a"].as_number().unwrap()).unwrap().is_nan());
        assert_eq!(non_finite(v["b"][0].as_number().unwrap()), Some(f64::INFINITY));
        assert_eq!(non_finite(v["b"][1].as_number().unwrap()), Some(f64::NEG_INFINITY));
        assert_eq!(non_finite(v["b"][2].as_number().unwrap()), None);
        assert_eq!(v["s"], Value::from("NaN"));
        assert_eq!(v.to_string(), r#"{"a":NaN,"b":[Infinity,-Infinity,1.5],"c":{"d":NaN},"s":"NaN"}"#);
        let pretty = String::from_utf8(serde_json::to_vec_pretty(&v).unwrap()).unwrap();
        assert!(pretty.contains("\"a\": NaN") && pretty.contains("-Infinity"), "{pretty}");
        assert_eq!(ok(&pretty), v);
        // a token alone, at the ends of the text, around whitespace
        assert_eq!(ok("NaN").to_string(), "NaN");
        assert_eq!(ok(" -Infinity\n").to_string(), "-Infinity");
        assert_eq!(ok("[NaN,NaN]").to_string(), "[NaN,NaN]");
        // the tokens inside strings and keys stay text
        assert_eq!(ok(r#"{"NaN": "x NaN \" Infinity", "k": NaN}"#).to_string(), r#"{"NaN":"x NaN \" Infinity","k":NaN}"#);
        // the rewritten path keeps big numbers' digits
        assert_eq!(ok("[NaN, 123456789012345678901234567890]").to_string(), "[NaN,123456789012345678901234567890]");
        assert_eq!(non_finite_number(f64::NAN).unwrap().as_str(), "NaN");
        assert_eq!(non_finite_number(-f64::INFINITY).unwrap().as_str(), "-Infinity");
        assert!(non_finite_number(1.0).is_none());
    }

    #[test]
    fn numbers_equal_to_a_sentinel_keep_their_value() {
        let v = ok("[NaN, -0.00, -0.10, -0.20, -0.01, Infinity, -0.21, -0.02, -Infinity]");
        assert_eq!(v.to_string(), "[NaN,-0.00,-0.10,-0.20,-0.01,Infinity,-0.21,-0.02,-Infinity]");
    }

    #[test]
    fn other_invalid_text_is_still_rejected() {
        for bad in [
            "nan", "NAN", "inf", "-inf", "+Infinity", "-NaN", "NaNa", "NaN1", "1NaN", "Infinityy", "[NaN,]",
            "[NaN", "{NaN: 1}", "{\"a\": NaN \"b\"}", "[Infinity.5]", "[-Infinity-1]", "[NaN.0]", "[--Infinity]",
            "[1e-NaN]", "[\"NaN]", "[NaN] x", "", "[NaN, \"\\u00\"]",
        ] {
            assert!(parse(bad.as_bytes(), Scope::Anywhere).is_err(), "{bad:?} was accepted");
        }
        // invalid UTF-8 in a string is still an error with a token present
        assert!(parse(b"[NaN, \"\xff\"]", Scope::Anywhere).is_err());
    }

    #[test]
    fn errors_point_into_the_original_text() {
        assert_eq!(err("[1, tru]"), serde_json::from_str::<Value>("[1, tru]").unwrap_err().to_string());
        // same error and column as for the text with a number in place of the (same-length) token
        let want = serde_json::from_str::<Value>("[123, 456, x]").unwrap_err().to_string();
        assert_eq!(err("[NaN, NaN, x]"), want);
        let want = serde_json::from_str::<Value>("{\"a\": 1,\n \"b\": 12345678, \"c\": x}").unwrap_err().to_string();
        assert_eq!(err("{\"a\": NaN,\n \"b\": Infinity, \"c\": x}"), want);
    }

    #[test]
    fn nesting_stays_bounded() {
        let deep = format!("{}NaN{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(deep.as_bytes(), Scope::Anywhere).is_err());
        let ok_depth = format!("{}NaN{}", "[".repeat(100), "]".repeat(100));
        assert!(parse(ok_depth.as_bytes(), Scope::Anywhere).is_ok());
    }

    #[test]
    fn many_tokens_and_a_long_number_stay_linear() {
        let text = format!("[{}-0.00{}]", "NaN,".repeat(200_000), ",-0.11".repeat(1000));
        let v = ok(&text);
        assert_eq!(v.as_array().unwrap().len(), 201_001);
    }

    #[test]
    fn metadata_documents_take_tokens_in_attributes_and_fill_values_only() {
        let doc = |s: &str| parse(s.as_bytes(), Scope::AttributesAndFillValues);
        for good in [
            r#"{"fill_value": NaN, "attributes": {"a": [Infinity, {"b": -Infinity}]}}"#,
            r#"{"fill_value": [NaN, -Infinity]}"#,
            r#"{"metadata": {"x/.zattrs": {"m": NaN}, "x/.zarray": {"fill_value": NaN}, ".zattrs": {"k": NaN}}}"#,
            r#"{"consolidated_metadata": {"metadata": {"x": {"fill_value": NaN, "attributes": {"a": NaN}}}}}"#,
        ] {
            let v = doc(good).unwrap_or_else(|e| panic!("{good}: {e}"));
            assert!(v.to_string().contains("NaN"));
        }
        for (bad, at) in [
            (r#"{"shape": [NaN]}"#, "NaN at shape/0"),
            (r#"NaN"#, "NaN at the top level"),
            (r#"{"codecs": [{"name": "x", "configuration": {"attributes": Infinity}}]}"#, "Infinity at codecs/0/configuration/attributes"),
            (r#"{"fill_value": 0, "compressor": {"fill_value": -Infinity}}"#, "-Infinity at compressor/fill_value"),
            (r#"{"filters": [{"id": "x", "attributes": NaN}]}"#, "NaN at filters/0/attributes"),
        ] {
            let e = doc(bad).expect_err(bad).0;
            assert!(e.starts_with(at) && e.contains("only in attributes and fill values"), "{bad}: {e}");
        }
    }
}
