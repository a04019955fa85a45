//! Zarr v2 (numpy) data type descriptions: typestrs like `"<i4"`, `"|b1"`, `"|S8"`, `">M8[ns]"` and
//! structured `descr` lists `[[name, typestr], [name, typestr, shape], [name, [nested...]]]`.
//!
//! Mapping: `b1` bool; `i1..i8`, `u1..u8`; `f2/f4/f8`; `c8/c16`; `S<n>` and `V<n>` as `n` raw bytes;
//! `U<n>` as [`DataType::FixedUtf32`] of `4n` bytes (code units in native order in buffers, stored
//! in the dtype's byte order); `M8[unit]`/`m8[unit]` as int64; lists as [`DataType::Struct`].

use super::{DataType, Endian, StructField, StructType};
use crate::error::{Error, Result};
use serde_json::Value;
use std::sync::Arc;

/// A parsed v2 dtype: the element type and, for non-structured types, the stored byte order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V2Type {
    /// The element type (structured fields carry their own byte order).
    pub data_type: DataType,
    /// Stored byte order of a non-structured multi-byte type.
    pub byte_order: Option<Endian>,
    /// For `U<n>` (fixed-length UTF-32 text): the stored byte order of its code units.
    pub text: Option<Endian>,
}

fn bad(v: &str, why: &str) -> Error {
    Error::Metadata(format!("invalid v2 dtype '{v}': {why}"))
}

/// Parses a simple typestr such as `"<f8"`.
pub fn parse_typestr(s: &str) -> Result<V2Type> {
    let b = s.as_bytes();
    if b.len() >= 2 && b[1] == b'O' {
        return Err(Error::Unsupported(format!(
            "v2 object dtype '{s}' (variable-length values such as Python strings) is not supported"
        )));
    }
    if b.len() < 3 {
        return Err(bad(s, "too short"));
    }
    let order = match b[0] {
        b'<' => Some(Endian::Little),
        b'>' => Some(Endian::Big),
        b'|' => None,
        _ => return Err(bad(s, "must start with '<', '>' or '|'")),
    };
    if !b[1].is_ascii() {
        // (Slicing after a multi-byte character would split it.)
        return Err(bad(s, "the type character must be ASCII"));
    }
    let kind = b[1] as char;
    let rest = &s[2..];
    let (digits, unit) = match rest.find('[') {
        Some(i) if rest.ends_with(']') => (&rest[..i], Some(&rest[i + 1..rest.len() - 1])),
        Some(_) => return Err(bad(s, "unterminated unit")),
        None => (rest, None),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(bad(s, "the size must be a decimal number"));
    }
    let n: usize = digits.parse().map_err(|_| bad(s, "size out of range"))?;
    if unit.is_some() && kind != 'M' && kind != 'm' {
        return Err(bad(s, "only M8 and m8 take a unit"));
    }
    let dt = match (kind, n) {
        ('b', 1) => DataType::Bool,
        ('i', 1) => DataType::Int8,
        ('i', 2) => DataType::Int16,
        ('i', 4) => DataType::Int32,
        ('i', 8) => DataType::Int64,
        ('u', 1) => DataType::UInt8,
        ('u', 2) => DataType::UInt16,
        ('u', 4) => DataType::UInt32,
        ('u', 8) => DataType::UInt64,
        ('f', 2) => DataType::Float16,
        ('f', 4) => DataType::Float32,
        ('f', 8) => DataType::Float64,
        ('c', 8) => DataType::Complex64,
        ('c', 16) => DataType::Complex128,
        ('M' | 'm', 8) => {
            const UNITS: [&str; 13] = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs"];
            match unit {
                Some(u) if UNITS.contains(&u) || u == "as" || u.trim_start_matches(char::is_numeric) != u => {}
                Some(u) => return Err(bad(s, &format!("unknown time unit '{u}'"))),
                None => return Err(bad(s, "datetime/timedelta needs a unit, e.g. [ns]")),
            }
            DataType::Int64
        }
        ('S' | 'V', n) if n > 0 && n <= super::MAX_RAW_BYTES => DataType::Raw(n),
        ('U', n) if n > 0 && n * 4 <= super::MAX_RAW_BYTES => DataType::FixedUtf32(n * 4),
        ('O', _) => return Err(Error::Unsupported(format!("v2 object dtype '{s}' (variable-length values) is not supported"))),
        ('b' | 'i' | 'u' | 'f' | 'c' | 'M' | 'm' | 'S' | 'V' | 'U', _) => return Err(bad(s, "unsupported size")),
        _ => return Err(Error::Unsupported(format!("unsupported v2 dtype '{s}'"))),
    };
    // `|U<n>` has been seen in the wild: numpy's default (little-endian) code units
    let order = if kind == 'U' { Some(order.unwrap_or(Endian::Little)) } else { order };
    if order.is_none() && dt.has_endianness() {
        return Err(bad(s, "a multi-byte number needs byte order '<' or '>'"));
    }
    let byte_order = if dt.has_endianness() { order } else { None };
    let text = if kind == 'U' { order } else { None };
    Ok(V2Type { data_type: dt, byte_order, text })
}

/// Parses a v2 `dtype` value: a typestr or a structured list.
pub fn parse(v: &Value) -> Result<V2Type> {
    parse_depth(v, 0)
}

fn parse_depth(v: &Value, depth: usize) -> Result<V2Type> {
    match v {
        Value::String(s) => parse_typestr(s),
        Value::Array(fields) => {
            if depth > 16 {
                return Err(Error::Metadata("v2 structured dtype nested more than 16 levels".into()));
            }
            if fields.is_empty() {
                return Err(Error::Metadata("v2 structured dtype has no fields".into()));
            }
            let mut out = Vec::with_capacity(fields.len());
            for f in fields {
                let parts = f.as_array().filter(|p| p.len() == 2 || p.len() == 3).ok_or_else(|| {
                    Error::Metadata(format!("v2 structured dtype field {f} is not [name, type] or [name, type, shape]"))
                })?;
                let name = parts[0]
                    .as_str()
                    .ok_or_else(|| Error::Metadata(format!("v2 structured dtype field name {} is not a string", parts[0])))?;
                let inner = parse_depth(&parts[1], depth + 1)?;
                let shape = match parts.get(2) {
                    None => vec![],
                    Some(Value::Array(dims)) => dims
                        .iter()
                        .map(|d| d.as_u64().ok_or_else(|| Error::Metadata(format!("bad subarray shape {}", parts[2]))))
                        .collect::<Result<Vec<u64>>>()?,
                    Some(other) => return Err(Error::Metadata(format!("bad subarray shape {other}"))),
                };
                let count = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
                let size = count.and_then(|c| c.checked_mul(inner.data_type.size() as u64));
                if size.is_none_or(|s| s > super::MAX_RAW_BYTES as u64) {
                    return Err(Error::Metadata(format!("v2 structured field '{name}' is too large")));
                }
                if out.iter().any(|f: &StructField| f.name == name && !name.is_empty()) {
                    return Err(Error::Metadata(format!("v2 structured dtype has two fields named '{name}'")));
                }
                out.push(StructField { name: name.to_string(), data_type: inner.data_type, shape, offset: 0, byte_order: inner.byte_order });
            }
            let st = StructType::packed(out);
            if st.size == 0 || st.size > super::MAX_RAW_BYTES {
                return Err(Error::Metadata(format!("v2 structured dtype of {} bytes", st.size)));
            }
            Ok(V2Type { data_type: DataType::Struct(Arc::new(st)), byte_order: None, text: None })
        }
        _ => Err(Error::Metadata(format!("v2 dtype must be a string or a list, got {v}"))),
    }
}

/// The v2 typestr of a non-structured type in byte order `order` (`|` where order does not matter).
pub fn typestr(dt: &DataType, order: Endian) -> Option<String> {
    let o = if dt.has_endianness() {
        if order == Endian::Little { '<' } else { '>' }
    } else {
        '|'
    };
    let body = match dt {
        DataType::Bool => "b1".to_string(),
        DataType::Int8 => "i1".into(),
        DataType::Int16 => "i2".into(),
        DataType::Int32 => "i4".into(),
        DataType::Int64 => "i8".into(),
        DataType::UInt8 => "u1".into(),
        DataType::UInt16 => "u2".into(),
        DataType::UInt32 => "u4".into(),
        DataType::UInt64 => "u8".into(),
        DataType::Float16 => "f2".into(),
        DataType::Float32 => "f4".into(),
        DataType::Float64 => "f8".into(),
        DataType::Complex64 => "c8".into(),
        DataType::Complex128 => "c16".into(),
        DataType::Raw(n) => format!("V{n}"),
        DataType::String | DataType::Bytes | DataType::VlenArray(_) => "O".into(),
        DataType::FixedUtf32(n) => format!("U{}", n / 4),
        DataType::NullTerminatedBytes(n) => format!("S{n}"),
        DataType::DateTime64(t) | DataType::TimeDelta64(t) => {
            let k = if matches!(dt, DataType::DateTime64(_)) { 'M' } else { 'm' };
            match t.scale_factor {
                1 => format!("{k}8[{}]", t.unit),
                s => format!("{k}8[{s}{}]", t.unit),
            }
        }
        DataType::Struct(_) | DataType::ExtFloat(_) | DataType::ExtComplex(_) | DataType::SmallInt(_) => return None,
    };
    Some(format!("{o}{body}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typestrs() {
        let t = parse_typestr("<i4").unwrap();
        assert_eq!((t.data_type, t.byte_order), (DataType::Int32, Some(Endian::Little)));
        let t = parse_typestr(">c16").unwrap();
        assert_eq!((t.data_type, t.byte_order), (DataType::Complex128, Some(Endian::Big)));
        let t = parse_typestr("|b1").unwrap();
        assert_eq!((t.data_type, t.byte_order), (DataType::Bool, None));
        assert_eq!(parse_typestr("|S8").unwrap().data_type, DataType::Raw(8));
        assert_eq!(parse_typestr("|V3").unwrap().data_type, DataType::Raw(3));
        assert_eq!(parse_typestr("<U2").unwrap().data_type, DataType::FixedUtf32(8));
        assert_eq!(parse_typestr(">U2").unwrap().byte_order, Some(Endian::Big));
        assert_eq!(parse_typestr("|U1").unwrap().byte_order, Some(Endian::Little));
        assert_eq!(parse_typestr("<M8[ns]").unwrap().data_type, DataType::Int64);
        assert_eq!(parse_typestr(">m8[10s]").unwrap().byte_order, Some(Endian::Big));
        assert_eq!(parse_typestr("<u1").unwrap().byte_order, None);
        for bad in ["i4", "<i3", "<f16", "|i4", "<M8", "<M8[xs]", "<x4", "<i", "=i4", "<S0"] {
            assert!(parse_typestr(bad).is_err(), "{bad}");
        }
        assert!(matches!(parse_typestr("|O"), Err(Error::Unsupported(_))));
        assert!(matches!(parse_typestr("|O8"), Err(Error::Unsupported(_))));
        // A multi-byte type character (found by fuzzing: slicing after it panicked).
        assert!(matches!(parse_typestr("<\u{10f}2"), Err(Error::Metadata(_))));
        assert_eq!(typestr(&DataType::Float64, Endian::Big).unwrap(), ">f8");
        assert_eq!(typestr(&DataType::UInt8, Endian::Big).unwrap(), "|u1");
    }

    #[test]
    fn structured() {
        let t = parse(&json!([["x", "<f4"], ["y", ">i2"], ["z", "|u1", [2, 3]], ["n", [["a", "<u2"]]]])).unwrap();
        let DataType::Struct(s) = &t.data_type else { panic!() };
        assert_eq!(s.size, 4 + 2 + 6 + 2);
        assert_eq!(s.fields[1].offset, 4);
        assert_eq!(s.fields[1].byte_order, Some(Endian::Big));
        assert_eq!(s.fields[2].shape, [2, 3]);
        assert_eq!(s.fields[3].offset, 12);
        assert!(parse(&json!([])).is_err());
        assert!(parse(&json!([["x"]])).is_err());
        assert!(parse(&json!([["x", "<f4"], ["x", "<f4"]])).is_err());
        assert!(parse(&json!([["x", "<f4", [1u64 << 40, 1u64 << 40]]])).is_err());
        assert!(parse(&json!(5)).is_err());
    }
}
