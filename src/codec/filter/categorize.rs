//! numcodecs `categorize` (bytes -> bytes): fixed-length strings stored as label numbers.
//!
//! numcodecs id: `categorize`. Configuration: `labels` (list of strings, required), `dtype` (the
//! string type received, required), `astype` (the numbers stored; default `|u1`).
//! Example: `{"id": "categorize", "labels": ["female", "male"], "dtype": "<U6", "astype": "|u1"}`
//!
//! Only numpy fixed-length unicode `dtype`s (`<U<n>` / `>U<n>`: `n` UTF-32 code units in that byte
//! order, NUL-padded; libzarr's raw `4n`-byte elements) are supported. numcodecs also accepts the
//! object dtype (`|O`, variable-length strings), which is refused with `Error::Unsupported`: categorize
//! needs a fixed-size label type here. Other dtypes are `Error::Metadata`, as numcodecs refuses them.
//!
//! Encode (numcodecs): `enc = zeros(astype)`; for each label `i`, `enc[x == label] = i + 1`, so a value
//! equal to no label is 0 and, with repeated labels, the last one wins. Values compare as numpy
//! strings: trailing NULs do not count, and a label longer than `n` characters matches nothing. numpy
//! raises when some `i + 1` does not fit an integer `astype` (even if no value matches it): encoding
//! then fails with `Error::Metadata`, while decoding works. Decode: `dec = full('', dtype)`;
//! `dec[enc == i + 1] = label` (the label cut to `n` characters); any other number (0, out of range,
//! fractional, NaN) gives the empty string (all zero bytes). `astype` may be bool, an integer or a float
//! type (numbers compare after numpy's conversion of `i + 1` to it).

use super::{check_out, count, num_type};
use crate::codec::numcodecs::numpy::{int_range, Arr, Canon, Num, NumType};
use crate::dtype::DataType;
use crate::codec::numcodecs::{V2Config, V2Elem};
use crate::codec::{BytesToBytesCodec, DecodedSize};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use crate::codec::numcodecs::{array_filter, boxed};
use crate::codec::registry::CodecEntry;

/// The registry entry: numcodecs `categorize`, v3 `numcodecs.categorize` (array -> array).
pub static CODEC: CodecEntry = CodecEntry::numcodecs(array_filter("categorize", |c, input| boxed(CategorizeCodec::from_config(c, input)), true));

/// The numcodecs `categorize` filter.
#[derive(Debug, Clone)]
pub struct CategorizeCodec {
    labels: Vec<String>,
    /// The dtype string as configured.
    dtype: String,
    /// Characters per value.
    chars: usize,
    astype: NumType,
    /// Each label as a stored value: UTF-32 in the dtype's byte order, cut or padded to `chars`.
    label_values: Vec<Vec<u8>>,
    /// Stored value -> 1 + label index, for labels a value can equal (last label wins).
    lookup: HashMap<Vec<u8>, usize>,
    /// The encoded bytes of each code (index 0: no label).
    codes: Vec<Vec<u8>>,
    /// Float `astype`: code value (as f64 bits) -> 1 + label index (last wins).
    float_codes: HashMap<u64, usize>,
    /// Why encoding fails (numpy raises), if it does.
    encode_error: Option<String>,
}

/// Parses a unicode dtype string: (characters, big-endian).
fn unicode_dtype(c: &V2Config, s: &str) -> Result<(usize, bool)> {
    let b = s.as_bytes();
    let (order, rest) = match b.first() {
        Some(b'<' | b'|') => (false, &s[1..]),
        Some(b'>') => (true, &s[1..]),
        Some(b'=') => (cfg!(target_endian = "big"), &s[1..]),
        _ => (false, s),
    };
    let kind = rest.chars().next();
    if kind == Some('O') {
        return Err(Error::Unsupported(format!(
            "numcodecs 'categorize' with dtype '{s}' (variable-length object strings) is not supported: \
             categorize needs a fixed-size label type such as '<U8'"
        )));
    }
    if kind != Some('U') {
        return Err(c.invalid("dtype", &format!("'{s}': only unicode ('U') and object ('O') dtypes are supported")));
    }
    let n: usize = rest[1..].parse().map_err(|_| c.invalid("dtype", &format!("'{s}' is not a unicode dtype like '<U8'")))?;
    if n == 0 || n * 4 > crate::dtype::MAX_RAW_BYTES {
        return Err(c.invalid("dtype", &format!("'{s}': unsupported length")));
    }
    Ok((n, order))
}

impl CategorizeCodec {
    /// Builds the filter from its configuration for `input` elements; returns what it produces.
    pub fn from_config(c: &V2Config, _input: &V2Elem) -> Result<(CategorizeCodec, V2Elem)> {
        let dtype = c.string("dtype", None)?;
        let (chars, big) = unicode_dtype(c, dtype)?;
        let labels = match c.get("labels") {
            Some(Value::Array(l)) => l
                .iter()
                .map(|v| v.as_str().map(str::to_string).ok_or_else(|| c.invalid("labels", &format!("{v} is not a string"))))
                .collect::<Result<Vec<String>>>()?,
            Some(v) => return Err(c.invalid("labels", &format!("expected a list of strings, got {v}"))),
            None => return Err(c.invalid("labels", "required")),
        };
        let astype = num_type(c, "astype", Some(NumType { data_type: DataType::UInt8, big: false }))?;
        Ok((CategorizeCodec::new(labels, dtype.to_string(), chars, big, astype.clone()), astype.elem()))
    }

    fn new(labels: Vec<String>, dtype: String, chars: usize, big: bool, astype: NumType) -> CategorizeCodec {
        let mut label_values = Vec::with_capacity(labels.len());
        let mut lookup = HashMap::new();
        for (i, label) in labels.iter().enumerate() {
            let mut units: Vec<u32> = label.chars().map(u32::from).collect();
            while units.last() == Some(&0) {
                units.pop();
            }
            let fits = units.len() <= chars;
            units.resize(chars, 0);
            let value: Vec<u8> =
                units.iter().flat_map(|u| if big { u.to_be_bytes() } else { u.to_le_bytes() }).collect();
            if fits {
                lookup.insert(value.clone(), i + 1);
            }
            label_values.push(value);
        }
        let mut codes = vec![vec![0u8; astype.size()]];
        let mut float_codes = HashMap::new();
        let mut encode_error = None;
        for i in 1..=labels.len() {
            if let Some((_, hi)) = int_range(&astype.data_type) {
                if i as i128 > hi && encode_error.is_none() {
                    encode_error = Some(format!(
                        "label number {i} does not fit astype {} (numpy raises OverflowError)",
                        astype.typestr()
                    ));
                }
            }
            let mut bytes = vec![0u8; astype.size()];
            let value = code_value(&astype.data_type, i);
            store_canon(&astype, value, &mut bytes);
            if let Canon::Float(f) = value {
                if !f.is_nan() {
                    float_codes.insert(f.to_bits(), i);
                }
            }
            codes.push(bytes);
        }
        CategorizeCodec { labels, dtype, chars, astype, label_values, lookup, codes, float_codes, encode_error }
    }

    /// The label number (1-based) a stored number decodes to, if any.
    fn label_of(&self, v: Canon) -> Option<usize> {
        let n = self.labels.len();
        match v {
            Canon::Int(k) => (k >= 1 && k <= n as i128).then_some(k as usize),
            Canon::Float(f) => self.float_codes.get(&(f + 0.0).to_bits()).copied(),
        }
    }
}

/// numpy's conversion of the python int `i` to `kind` (wrapping never happens: too large is refused).
fn code_value(data_type: &DataType, i: usize) -> Canon {
    crate::dtype::dispatch::with_data_type!(
        data_type,
        [Bool Float16 Float32 Float64],
        T => <T as Num>::from_canon(Canon::Int(i as i128)).canon(),
        _ => Canon::Int(i as i128)
    )
}

/// Writes `v` as one element of `t`.
fn store_canon(t: &NumType, v: Canon, out: &mut [u8]) {
    let a = match v {
        Canon::Int(i) => Arr::new(DataType::Int64, vec![i.clamp(i64::MIN as i128, i64::MAX as i128) as i64]),
        Canon::Float(f) => Arr::new(DataType::Float64, vec![f]),
    };
    a.cast(&t.data_type).store_into(out, t.big);
}

impl BytesToBytesCodec for CategorizeCodec {
    fn encode(&self, data: &[u8]) -> Result<Vec<u8>> {
        if let Some(e) = &self.encode_error {
            return Err(Error::Metadata(format!("categorize: cannot encode: {e}")));
        }
        let n = count(data.len(), 4 * self.chars, "categorize", "input")?;
        let size = self.astype.size();
        let mut out = vec![0u8; n * size];
        for (v, o) in data.chunks_exact(4 * self.chars).zip(out.chunks_exact_mut(size)) {
            if let Some(&code) = self.lookup.get(v) {
                o.copy_from_slice(&self.codes[code]);
            }
        }
        Ok(out)
    }

    fn decode<'a>(&self, encoded: &'a [u8], size: DecodedSize) -> Result<Cow<'a, [u8]>> {
        let n = count(encoded.len(), self.astype.size(), "categorize", "encoded data")?;
        let len = n.checked_mul(4 * self.chars).ok_or_else(|| Error::Codec("categorize: decoded size overflows".into()))?;
        size.check(len, "categorize")?;
        let mut out = vec![0; len];
        self.decode_into(encoded, &mut out)?;
        Ok(Cow::Owned(out))
    }

    fn decode_into(&self, encoded: &[u8], out: &mut [u8]) -> Result<()> {
        let n = count(encoded.len(), self.astype.size(), "categorize", "encoded data")?;
        check_out(out, n.saturating_mul(4 * self.chars), "categorize")?;
        let mut cells = out.chunks_exact_mut(4 * self.chars);
        Arr::load(encoded, &self.astype).for_each(|v| {
            let o = cells.next().expect("one output cell per code");
            match self.label_of(v) {
                Some(k) => o.copy_from_slice(&self.label_values[k - 1]),
                None => o.fill(0),
            }
        });
        Ok(())
    }

    fn encoded_size(&self, decoded: u64) -> Option<u64> {
        super::ratio_size(decoded, 4 * self.chars, self.astype.size())
    }

    fn to_json(&self) -> Value {
        json!({"id": "categorize", "labels": self.labels, "dtype": self.dtype, "astype": self.astype.typestr()})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::numcodecs::filter;

    fn u32s(s: &[&str], n: usize, big: bool) -> Vec<u8> {
        s.iter()
            .flat_map(|v| {
                let mut u: Vec<u32> = v.chars().map(u32::from).collect();
                u.resize(n, 0);
                u.into_iter().flat_map(move |c| if big { c.to_be_bytes() } else { c.to_le_bytes() })
            })
            .collect()
    }

    fn codec(cfg: Value, bytes: usize) -> Box<dyn BytesToBytesCodec> {
        let input = V2Elem { data_type: crate::dtype::DataType::Raw(bytes), byte_order: None };
        filter(&cfg, &input).unwrap().0
    }

    #[test]
    fn docstring_example() {
        let c = codec(json!({"id": "categorize", "labels": ["female", "male"], "dtype": "<U10"}), 40);
        let x = u32s(&["male", "female", "female", "male", "unexpected"], 10, false);
        let e = c.encode(&x).unwrap();
        assert_eq!(e, [2, 1, 1, 2, 0]);
        assert_eq!(c.encoded_size(200), Some(5));
        let mut out = vec![7; 200];
        c.decode_into(&e, &mut out).unwrap();
        assert_eq!(out, u32s(&["male", "female", "female", "male", ""], 10, false));
    }

    #[test]
    fn numpy_string_rules() {
        // big-endian UTF-32, repeated label (last wins), a label longer than the type, int16 codes
        let c = codec(json!({"id": "categorize", "labels": ["a", "bb", "a", "é\u{0}"], "dtype": ">U1", "astype": "<i2"}), 4);
        let x = u32s(&["a", "b", "", "é"], 1, true);
        let e = c.encode(&x).unwrap();
        assert_eq!(e, [3, 0, 0, 0, 0, 0, 4, 0]);
        let enc: Vec<u8> = [1i16, 2, 3, 0, 5, -1, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = vec![0; 28];
        c.decode_into(&enc, &mut out).unwrap();
        assert_eq!(out, u32s(&["a", "b", "a", "", "", "", "é"], 1, true));
        // float codes: 2.0 is label 2, 1.5 and NaN are nothing
        let c = codec(json!({"id": "categorize", "labels": ["x", "y"], "dtype": "<U2", "astype": "<f4"}), 8);
        assert_eq!(c.encode(&u32s(&["y", "zz"], 2, false)).unwrap(), [2.0f32, 0.0].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>());
        let enc: Vec<u8> = [2.0f32, 1.5, f32::NAN, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = vec![0; 32];
        c.decode_into(&enc, &mut out).unwrap();
        assert_eq!(out, u32s(&["y", "", "", "x"], 2, false));
    }

    #[test]
    fn errors() {
        let raw = |n| V2Elem { data_type: crate::dtype::DataType::Raw(n), byte_order: None };
        let err = filter(&json!({"id": "categorize", "labels": ["a"], "dtype": "|O"}), &raw(8)).unwrap_err();
        assert!(matches!(&err, Error::Unsupported(m) if m.contains("fixed-size")), "{err:?}");
        for (cfg, n) in [
            (json!({"id": "categorize", "labels": ["a"], "dtype": "|S4"}), 4),
            (json!({"id": "categorize", "labels": ["a"]}), 4),
            (json!({"id": "categorize", "labels": "a", "dtype": "<U1"}), 4),
            (json!({"id": "categorize", "labels": [1], "dtype": "<U1"}), 4),
            (json!({"id": "categorize", "dtype": "<U1"}), 4),
            (json!({"id": "categorize", "labels": ["a"], "dtype": "<U0"}), 4),
        ] {
            assert!(matches!(filter(&cfg, &raw(n)), Err(Error::Metadata(_))), "{cfg}");
        }
        // 256 labels do not fit uint8: encoding fails, decoding works
        let labels: Vec<String> = (0..256).map(|i| format!("{i}")).collect();
        let c = codec(json!({"id": "categorize", "labels": labels, "dtype": "<U3"}), 12);
        assert!(matches!(c.encode(&u32s(&["1"], 3, false)), Err(Error::Metadata(_))));
        let mut out = vec![0; 12];
        c.decode_into(&[2], &mut out).unwrap();
        assert_eq!(out, u32s(&["1"], 3, false));
        assert!(matches!(c.decode_into(&[2, 3], &mut out), Err(Error::Codec(_))));
        let c = codec(json!({"id": "categorize", "labels": ["a"], "dtype": "<U1", "astype": "<u2"}), 4);
        assert!(matches!(c.encode(&[0; 5]), Err(Error::Codec(_))));
        assert!(matches!(c.decode(&[0; 3], DecodedSize::AtMost(100)), Err(Error::Codec(_))));
        assert!(matches!(c.decode(&[0; 4], DecodedSize::Exact(4)), Err(Error::Codec(_))));
        assert_eq!(c.decode(&[1, 0, 0, 0], DecodedSize::Exact(8)).unwrap().as_ref(), u32s(&["a", ""], 1, false).as_slice());
        assert_eq!(
            c.to_json(),
            json!({"id": "categorize", "labels": ["a"], "dtype": "<U1", "astype": "<u2"})
        );
    }
}
