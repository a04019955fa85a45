//! Fill values: JSON forms of the Zarr v3 spec ("Permitted fill values") to and from element bytes.
//!
//! The bytes are one element, native-endian, in the buffer layout of [`crate::dtype`].

use crate::dtype::{DataType, Endian, FloatKind, SwapPlan};
use crate::format::json_text::non_finite;
use crate::error::{Error, Result};
use half::f16;
use serde_json::Value;

fn bad(dtype: &DataType, v: &Value, why: &str) -> Error {
    Error::Metadata(format!("invalid fill_value {v} for data type {dtype}: {why}"))
}

/// Parses a v3 `fill_value` for `dtype` into one native-endian element (base64 forms of structured
/// values little-endian).
pub fn parse_v3(dtype: &DataType, v: &Value) -> Result<Vec<u8>> {
    parse_v3_stored(dtype, v, Endian::Little)
}

/// [`parse_v3`] where base64 forms of structured values (zarr-python's legacy `structured` fill
/// values: the packed stored bytes) are in byte order `stored` (the `bytes` codec's).
pub fn parse_v3_stored(dtype: &DataType, v: &Value, stored: Endian) -> Result<Vec<u8>> {
    match dtype {
        DataType::Bool => match v {
            Value::Bool(b) => Ok(vec![*b as u8]),
            _ => Err(bad(dtype, v, "expected true or false")),
        },
        DataType::Int8 => int(dtype, v, i8::MIN as i128, i8::MAX as i128).map(|x| (x as i8).to_ne_bytes().to_vec()),
        DataType::Int16 => int(dtype, v, i16::MIN as i128, i16::MAX as i128).map(|x| (x as i16).to_ne_bytes().to_vec()),
        DataType::Int32 => int(dtype, v, i32::MIN as i128, i32::MAX as i128).map(|x| (x as i32).to_ne_bytes().to_vec()),
        DataType::Int64 => int(dtype, v, i64::MIN as i128, i64::MAX as i128).map(|x| (x as i64).to_ne_bytes().to_vec()),
        DataType::UInt8 => int(dtype, v, 0, u8::MAX as i128).map(|x| (x as u8).to_ne_bytes().to_vec()),
        DataType::UInt16 => int(dtype, v, 0, u16::MAX as i128).map(|x| (x as u16).to_ne_bytes().to_vec()),
        DataType::UInt32 => int(dtype, v, 0, u32::MAX as i128).map(|x| (x as u32).to_ne_bytes().to_vec()),
        DataType::UInt64 => int(dtype, v, 0, u64::MAX as i128).map(|x| (x as u64).to_ne_bytes().to_vec()),
        DataType::Float16 => float_bits(dtype, v, 16).map(|b| (b as u16).to_ne_bytes().to_vec()),
        DataType::Float32 => float_bits(dtype, v, 32).map(|b| (b as u32).to_ne_bytes().to_vec()),
        DataType::Float64 => float_bits(dtype, v, 64).map(|b| b.to_ne_bytes().to_vec()),
        DataType::Complex64 | DataType::Complex128 => {
            let bits = if *dtype == DataType::Complex64 { 32 } else { 64 };
            let parts = match v {
                Value::Array(a) if a.len() == 2 => a,
                _ => return Err(bad(dtype, v, "expected a two-element array [real, imaginary]")),
            };
            let mut out = Vec::with_capacity(dtype.size());
            for p in parts {
                let b = float_bits(dtype, p, bits)?;
                if bits == 32 {
                    out.extend_from_slice(&(b as u32).to_ne_bytes());
                } else {
                    out.extend_from_slice(&b.to_ne_bytes());
                }
            }
            Ok(out)
        }
        DataType::Raw(n) => match v {
            Value::Array(a) if a.len() == *n => a
                .iter()
                .map(|x| match x.as_u64() {
                    Some(b) if b <= 255 => Ok(b as u8),
                    _ => Err(bad(dtype, v, "raw bytes must be integers in [0, 255]")),
                })
                .collect(),
            Value::Array(a) => Err(bad(dtype, v, &format!("expected {n} byte values, got {}", a.len()))),
            _ => Err(bad(dtype, v, &format!("expected an array of {n} integers in [0, 255]"))),
        },
        DataType::Struct(st) => match v {
            Value::Object(o) => {
                let mut out = vec![0u8; st.size];
                for f in &st.fields {
                    let fv = o.get(&f.name).ok_or_else(|| bad(dtype, v, &format!("no value for field '{}'", f.name)))?;
                    let item = f.data_type.size();
                    let dst = &mut out[f.offset..f.offset + f.size()];
                    if f.shape.is_empty() {
                        dst.copy_from_slice(&parse_v3_stored(&f.data_type, fv, stored)?);
                    } else {
                        let items = fv.as_array().filter(|a| a.len() == f.count()).ok_or_else(|| {
                            bad(dtype, v, &format!("field '{}' needs a list of {} values", f.name, f.count()))
                        })?;
                        for (i, x) in items.iter().enumerate() {
                            dst[i * item..(i + 1) * item].copy_from_slice(&parse_v3_stored(&f.data_type, x, stored)?);
                        }
                    }
                }
                if let Some(k) = o.keys().find(|k| !st.fields.iter().any(|f| &f.name == *k)) {
                    return Err(bad(dtype, v, &format!("'{k}' is not a field")));
                }
                Ok(out)
            }
            Value::String(s) => {
                let mut bytes = crate::format::base64::decode(s).map_err(|_| bad(dtype, v, "not valid base64"))?;
                if bytes.len() != st.size {
                    return Err(bad(dtype, v, &format!("base64 value has {} bytes, the type has {}", bytes.len(), st.size)));
                }
                SwapPlan::for_type(dtype, Some(stored)).apply_in_place(&mut bytes);
                Ok(bytes)
            }
            _ => Err(bad(dtype, v, "expected an object {field: value, ...} or a base64 string")),
        },
        DataType::DateTime64(_) | DataType::TimeDelta64(_) => match v {
            Value::String(s) if s == "NaT" => Ok(i64::MIN.to_ne_bytes().to_vec()),
            Value::Number(_) => int(dtype, v, i64::MIN as i128, i64::MAX as i128).map(|x| (x as i64).to_ne_bytes().to_vec()),
            _ => Err(bad(dtype, v, "expected an integer or \"NaT\"")),
        },
        DataType::FixedUtf32(n) => match v {
            Value::String(s) => {
                let mut out = Vec::with_capacity(*n);
                for c in s.chars() {
                    if out.len() == *n {
                        return Err(bad(dtype, v, &format!("more than {} code points", n / 4)));
                    }
                    out.extend_from_slice(&(c as u32).to_ne_bytes());
                }
                out.resize(*n, 0);
                Ok(out)
            }
            _ => Err(bad(dtype, v, "expected a string")),
        },
        DataType::NullTerminatedBytes(n) => match v {
            Value::String(s) => {
                let mut bytes = crate::format::base64::decode(s).map_err(|_| bad(dtype, v, "not valid base64"))?;
                if bytes.len() > *n {
                    return Err(bad(dtype, v, &format!("{} bytes do not fit {n}", bytes.len())));
                }
                bytes.resize(*n, 0);
                Ok(bytes)
            }
            _ => Err(bad(dtype, v, "expected a base64 string")),
        },
        DataType::ExtFloat(k) => ext_float(dtype, v, *k).map(|b| k_bytes(*k, b)),
        DataType::ExtComplex(k) => {
            let parts = match v {
                Value::Array(a) if a.len() == 2 => a,
                _ => return Err(bad(dtype, v, "expected a two-element array [real, imaginary]")),
            };
            let mut out = k_bytes(*k, ext_float(dtype, &parts[0], *k)?);
            out.extend(k_bytes(*k, ext_float(dtype, &parts[1], *k)?));
            Ok(out)
        }
        DataType::SmallInt(t) => {
            let (lo, hi) = t.range();
            int(dtype, v, lo as i128, hi as i128).map(|x| vec![t.to_byte(x as i64)])
        }
        // Variable-length types: the bytes of the one fill element (its length is theirs).
        DataType::String => match v {
            Value::String(s) => Ok(s.as_bytes().to_vec()),
            _ => Err(bad(dtype, v, "expected a string")),
        },
        DataType::Bytes => match v {
            Value::String(s) => {
                crate::format::base64::decode(s).map_err(|_| bad(dtype, v, "expected base64 text or a list of byte values"))
            }
            Value::Array(a) => a
                .iter()
                .map(|x| match x.as_u64() {
                    Some(b) if b <= 255 => Ok(b as u8),
                    _ => Err(bad(dtype, v, "bytes must be integers in [0, 255]")),
                })
                .collect(),
            _ => Err(bad(dtype, v, "expected base64 text or a list of integers in [0, 255]")),
        },
        DataType::VlenArray(_) => Err(Error::Unsupported(format!("vlen-array fill value {v} in Zarr v3"))),
    }
}

/// One component of kind `k` (bit pattern `b`) as native-endian buffer bytes.
fn k_bytes(k: FloatKind, b: u64) -> Vec<u8> {
    match k.size() {
        1 => vec![b as u8],
        2 => (b as u16).to_ne_bytes().to_vec(),
        4 => (b as u32).to_ne_bytes().to_vec(),
        _ => b.to_ne_bytes().to_vec(),
    }
}

/// Reads one component of kind `k` from native-endian buffer bytes.
fn k_bits(k: FloatKind, b: &[u8]) -> u64 {
    match k.size() {
        1 => b[0] as u64,
        2 => u16::from_ne_bytes([b[0], b[1]]) as u64,
        4 => u32::from_ne_bytes(b[..4].try_into().unwrap()) as u64,
        _ => u64::from_ne_bytes(b[..8].try_into().unwrap()),
    }
}

/// Bit pattern of an extension float fill value: a number (rounded to nearest, ties to even),
/// "NaN", "Infinity", "-Infinity" (where the format has them) or "0x..." (the pattern).
fn ext_float(dtype: &DataType, v: &Value, k: FloatKind) -> Result<u64> {
    let f = k.format();
    if k.is_core() {
        return float_bits(dtype, v, f.bits);
    }
    let conv = |x: f64| f.from_f64(x).map_err(|why| bad(dtype, v, why));
    match v {
        Value::Number(n) => conv(n.as_f64().or_else(|| non_finite(n)).ok_or_else(|| bad(dtype, v, "not a number"))?),
        Value::String(s) => match s.as_str() {
            "NaN" => conv(f64::NAN),
            "Infinity" => conv(f64::INFINITY),
            "-Infinity" => conv(f64::NEG_INFINITY),
            _ => {
                let digits = f.bits.div_ceil(4) as usize;
                let hex = s.strip_prefix("0x").filter(|h| !h.is_empty() && h.len() <= digits && h.bytes().all(|b| b.is_ascii_hexdigit()));
                let hex = hex.ok_or_else(|| bad(dtype, v, &format!("expected a number, \"NaN\", \"Infinity\", \"-Infinity\" or \"0x\" and 1 to {digits} hex digits")))?;
                let b = u64::from_str_radix(hex, 16).expect("validated hex");
                if b >> f.bits != 0 {
                    return Err(bad(dtype, v, &format!("the pattern has more than {} bits", f.bits)));
                }
                Ok(b)
            }
        },
        _ => Err(bad(dtype, v, "expected a number or a string")),
    }
}

/// The JSON form of an extension float pattern.
fn ext_float_json(k: FloatKind, bits: u64) -> Value {
    let f = k.format();
    let x = f.to_f64(bits);
    if f.is_nan(bits) {
        if Some(bits) == f.nan() {
            Value::from("NaN")
        } else {
            Value::from(format!("0x{:0w$x}", bits, w = f.bits.div_ceil(4) as usize))
        }
    } else if x.is_infinite() {
        Value::from(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        Value::from(x)
    }
}

/// Parses the `fill_value` of a Zarr v2 object (`|O`) array holding `dtype` (a variable-length type):
/// `null` is none (missing elements read empty); strings are the text itself for `string` and base64
/// for byte strings. An integer (zarr-python 2's default for object arrays was `0`) is, for `string`,
/// its decimal text, as zarr-python 2 and 3 read it (`0` reads as "0"), and for byte strings `0` is
/// the empty element.
pub fn parse_v2_vlen(dtype: &DataType, v: &Value) -> Result<Option<Vec<u8>>> {
    match (dtype, v) {
        (_, Value::Null) => Ok(None),
        (DataType::String, Value::Number(n)) if n.is_i64() || n.is_u64() => {
            let text = n.as_i64().map_or_else(|| n.as_u64().unwrap_or(0).to_string(), |i| i.to_string());
            Ok(Some(text.into_bytes()))
        }
        (_, Value::Number(n)) if n.as_u64() == Some(0) => Ok(Some(Vec::new())),
        (DataType::String, Value::String(s)) => Ok(Some(s.as_bytes().to_vec())),
        (_, Value::String(s)) => crate::format::base64::decode(s).map(Some).map_err(|_| bad(dtype, v, "expected base64 text")),
        (DataType::String, _) => Err(bad(dtype, v, "expected null, an integer or a string")),
        _ => Err(bad(dtype, v, "expected null, 0 or a string")),
    }
}

fn int(dtype: &DataType, v: &Value, min: i128, max: i128) -> Result<i128> {
    let n = match v {
        Value::Number(n) => n,
        _ => return Err(bad(dtype, v, "expected an integer")),
    };
    let x = if let Some(i) = n.as_i64() {
        i as i128
    } else if let Some(u) = n.as_u64() {
        u as i128
    } else {
        return Err(bad(dtype, v, "expected an integer without fraction or exponent"));
    };
    if x < min || x > max {
        return Err(bad(dtype, v, "out of range"));
    }
    Ok(x)
}

/// Bit pattern (in the low `bits` bits) of a float fill value: number, "NaN", "Infinity", "-Infinity", "0x...".
fn float_bits(dtype: &DataType, v: &Value, bits: u32) -> Result<u64> {
    let from_f64 = |x: f64| -> u64 {
        match bits {
            16 => crate::dtype::f16_from_f64(x).to_bits() as u64,
            32 => (x as f32).to_bits() as u64,
            _ => x.to_bits(),
        }
    };
    match v {
        // a bare NaN (as Python's json module writes it) is the canonical NaN, like "NaN"
        Value::Number(n) if non_finite(n).is_some_and(f64::is_nan) => float_bits(dtype, &Value::from("NaN"), bits),
        Value::Number(n) => {
            let x = n.as_f64().or_else(|| non_finite(n)).ok_or_else(|| bad(dtype, v, "not a number"))?;
            Ok(from_f64(x))
        }
        Value::String(s) => match s.as_str() {
            "NaN" => Ok(match bits {
                16 => 0x7e00,
                32 => 0x7fc0_0000,
                _ => 0x7ff8_0000_0000_0000,
            }),
            "Infinity" => Ok(from_f64(f64::INFINITY)),
            "-Infinity" => Ok(from_f64(f64::NEG_INFINITY)),
            _ => {
                let hex = s
                    .strip_prefix("0x")
                    .ok_or_else(|| bad(dtype, v, "expected a number, \"NaN\", \"Infinity\", \"-Infinity\" or \"0x...\""))?;
                if hex.is_empty() || hex.len() > (bits / 4) as usize || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(bad(dtype, v, &format!("hex form needs 1 to {} hex digits", bits / 4)));
                }
                Ok(u64::from_str_radix(hex, 16).expect("validated hex"))
            }
        },
        _ => Err(bad(dtype, v, "expected a number or a string")),
    }
}

/// The JSON form of a fill value (inverse of [`parse_v3`]); NaNs other than the canonical one use the hex form.
pub fn to_json_v3(dtype: &DataType, bytes: &[u8]) -> Value {
    fn float(bits: u64, width: u32) -> Value {
        let (x, canonical_nan) = match width {
            16 => (f16::from_bits(bits as u16).to_f64(), 0x7e00),
            32 => (f32::from_bits(bits as u32) as f64, 0x7fc0_0000),
            _ => (f64::from_bits(bits), 0x7ff8_0000_0000_0000),
        };
        if x.is_nan() {
            if bits == canonical_nan {
                Value::from("NaN")
            } else {
                Value::from(format!("0x{:0w$x}", bits, w = (width / 4) as usize))
            }
        } else if x.is_infinite() {
            Value::from(if x > 0.0 { "Infinity" } else { "-Infinity" })
        } else if x == 0.0 && x.is_sign_negative() {
            Value::from(-0.0)
        } else {
            Value::from(x)
        }
    }
    let u = |n: usize| -> u64 {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&bytes[..n]);
        if cfg!(target_endian = "big") {
            u64::from_be_bytes(b) >> (64 - 8 * n)
        } else {
            u64::from_le_bytes(b)
        }
    };
    match dtype {
        DataType::Bool => Value::Bool(bytes[0] != 0),
        DataType::Int8 => Value::from(bytes[0] as i8),
        DataType::Int16 => Value::from(i16::from_ne_bytes([bytes[0], bytes[1]])),
        DataType::Int32 => Value::from(i32::from_ne_bytes(bytes[..4].try_into().unwrap())),
        DataType::Int64 => Value::from(i64::from_ne_bytes(bytes[..8].try_into().unwrap())),
        DataType::UInt8 => Value::from(bytes[0]),
        DataType::UInt16 => Value::from(u16::from_ne_bytes([bytes[0], bytes[1]])),
        DataType::UInt32 => Value::from(u32::from_ne_bytes(bytes[..4].try_into().unwrap())),
        DataType::UInt64 => Value::from(u64::from_ne_bytes(bytes[..8].try_into().unwrap())),
        DataType::Float16 => float(u(2), 16),
        DataType::Float32 => float(u(4), 32),
        DataType::Float64 => float(u(8), 64),
        DataType::Complex64 => Value::Array(vec![
            float(u32::from_ne_bytes(bytes[..4].try_into().unwrap()) as u64, 32),
            float(u32::from_ne_bytes(bytes[4..8].try_into().unwrap()) as u64, 32),
        ]),
        DataType::Complex128 => Value::Array(vec![
            float(u64::from_ne_bytes(bytes[..8].try_into().unwrap()), 64),
            float(u64::from_ne_bytes(bytes[8..16].try_into().unwrap()), 64),
        ]),
        DataType::Raw(_) => Value::Array(bytes.iter().map(|b| Value::from(*b)).collect()),
        DataType::Struct(st) => {
            let mut o = serde_json::Map::new();
            for f in &st.fields {
                let item = f.data_type.size();
                let b = &bytes[f.offset..f.offset + f.size()];
                let v = if f.shape.is_empty() {
                    to_json_v3(&f.data_type, b)
                } else {
                    Value::Array(b.chunks_exact(item.max(1)).map(|x| to_json_v3(&f.data_type, x)).collect())
                };
                o.insert(f.name.clone(), v);
            }
            Value::Object(o)
        }
        DataType::DateTime64(_) | DataType::TimeDelta64(_) => Value::from(i64::from_ne_bytes(bytes[..8].try_into().unwrap())),
        DataType::FixedUtf32(_) => {
            let mut s: String = bytes
                .chunks_exact(4)
                .map(|c| char::from_u32(u32::from_ne_bytes(c.try_into().unwrap())).unwrap_or('\u{fffd}'))
                .collect();
            s.truncate(s.trim_end_matches('\0').len());
            Value::from(s)
        }
        DataType::NullTerminatedBytes(_) => {
            let end = bytes.iter().rposition(|b| *b != 0).map_or(0, |i| i + 1);
            Value::from(crate::format::base64::encode(&bytes[..end]))
        }
        DataType::ExtFloat(k) => ext_float_json(*k, k_bits(*k, bytes)),
        DataType::ExtComplex(k) => {
            let n = k.size();
            Value::Array(vec![ext_float_json(*k, k_bits(*k, &bytes[..n])), ext_float_json(*k, k_bits(*k, &bytes[n..2 * n]))])
        }
        DataType::SmallInt(t) => Value::from(t.from_byte(bytes[0])),
        DataType::VlenArray(_) => Value::Array(bytes.iter().map(|b| Value::from(*b)).collect()),
        DataType::String => Value::from(String::from_utf8_lossy(bytes).into_owned()),
        DataType::Bytes => Value::from(crate::format::base64::encode(bytes)),
    }
}

/// Parses a Zarr v2 `fill_value` for `dtype` (stored byte order `order`; structured fields carry
/// their own). `null` gives `None` (missing chunks then read as zero bytes). Numbers for numeric types
/// (integers may be written as floats with no fraction), "NaN"/"Infinity"/"-Infinity" for floats,
/// `[re, im]` for complex, booleans or 0/1 for bool, base64 of the stored bytes for raw and
/// structured types (and, as numcodecs allows, for any type).
pub fn parse_v2(dtype: &DataType, order: Option<Endian>, v: &Value) -> Result<Option<Vec<u8>>> {
    parse_v2_typed(dtype, order, None, v)
}

/// [`parse_v2`] for a dtype that may be `U<n>` text (`text`: the byte order of its UTF-32 code units):
/// its fill value is a plain string, stored as UTF-32 padded with NULs. Byte strings (`S<n>`) may be
/// given by shorter base64 values, padded with NULs as numpy does.
pub fn parse_v2_typed(dtype: &DataType, order: Option<Endian>, _text: Option<Endian>, v: &Value) -> Result<Option<Vec<u8>>> {
    if v.is_null() {
        return Ok(None);
    }
    if let (DataType::FixedUtf32(_), Value::String(_)) = (dtype, v) {
        // text fill values are the string itself (native code units in the buffer)
        return parse_v3(dtype, v).map(Some);
    }
    let from_base64 = |s: &str| -> Result<Vec<u8>> {
        let mut bytes = crate::format::base64::decode(s)?;
        let short_raw = matches!(dtype, DataType::Raw(_)) && bytes.len() < dtype.size();
        if short_raw {
            bytes.resize(dtype.size(), 0);
        }
        if bytes.len() != dtype.size() {
            return Err(bad(dtype, v, &format!("base64 value has {} bytes, the type has {}", bytes.len(), dtype.size())));
        }
        SwapPlan::for_type(dtype, order).apply_in_place(&mut bytes);
        Ok(bytes)
    };
    let bytes = match (dtype, v) {
        (DataType::Raw(_) | DataType::Struct(_), Value::String(s)) => from_base64(s)?,
        (DataType::Raw(_) | DataType::Struct(_), Value::Number(n)) if n.as_u64() == Some(0) => vec![0; dtype.size()],
        (DataType::Bool, Value::Number(n)) => match n.as_u64() {
            Some(0) => vec![0],
            Some(1) => vec![1],
            _ => return Err(bad(dtype, v, "expected true, false, 0 or 1")),
        },
        (DataType::Complex64 | DataType::Complex128, Value::Number(_)) => {
            parse_v3(dtype, &Value::Array(vec![v.clone(), Value::from(0)]))?
        }
        (d, Value::Number(n)) if !d.is_float() && !matches!(d, DataType::Bool) && n.as_f64().is_some_and(|x| x.fract() == 0.0) && n.as_i64().is_none() && n.as_u64().is_none() => {
            // an integer written as a float (e.g. 0.0 or 1e3)
            let x = n.as_f64().unwrap();
            if x.abs() > 9.007_199_254_740_992e15 {
                return Err(bad(dtype, v, "integer fill value written as an imprecise float"));
            }
            parse_v3(dtype, &Value::from(x as i64))?
        }
        (d, Value::String(s)) if !d.is_float() => match crate::format::base64::decode(s) {
            Ok(b) if b.len() == d.size() => from_base64(s)?,
            _ => return Err(bad(dtype, v, "expected a number")),
        },
        _ => parse_v3(dtype, v)?,
    };
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(t: &str, v: Value) -> Result<Vec<u8>> {
        parse_v3(&DataType::from_v3_name(t).unwrap(), &v)
    }

    #[test]
    fn integers() {
        assert_eq!(p("int16", json!(-7)).unwrap(), (-7i16).to_ne_bytes());
        assert_eq!(p("uint64", json!(18446744073709551615u64)).unwrap(), u64::MAX.to_ne_bytes());
        assert_eq!(p("int64", json!(i64::MIN)).unwrap(), i64::MIN.to_ne_bytes());
        assert!(p("uint8", json!(256)).is_err());
        assert!(p("int8", json!(-129)).is_err());
        assert!(p("uint8", json!(-1)).is_err());
        assert!(p("int32", json!(1.5)).is_err());
        assert!(p("int32", json!(1.0)).is_err());
        assert!(p("int32", json!("1")).is_err());
        assert!(p("int32", Value::Null).is_err());
    }

    #[test]
    fn floats() {
        assert_eq!(p("float32", json!("NaN")).unwrap(), 0x7fc0_0000u32.to_ne_bytes());
        assert_eq!(p("float64", json!("NaN")).unwrap(), 0x7ff8_0000_0000_0000u64.to_ne_bytes());
        assert_eq!(p("float16", json!("NaN")).unwrap(), 0x7e00u16.to_ne_bytes());
        assert_eq!(p("float16", json!("-Infinity")).unwrap(), 0xfc00u16.to_ne_bytes());
        assert_eq!(p("float64", json!("Infinity")).unwrap(), f64::INFINITY.to_ne_bytes());
        assert_eq!(p("float32", json!("0x7fc00001")).unwrap(), 0x7fc0_0001u32.to_ne_bytes());
        assert_eq!(p("float32", json!("0x40490fdb")).unwrap(), std::f32::consts::PI.to_ne_bytes());
        assert_eq!(p("float32", json!(-0.0)).unwrap(), 0x8000_0000u32.to_ne_bytes());
        assert_eq!(p("float16", json!(1.5)).unwrap(), f16::from_f32(1.5).to_bits().to_ne_bytes());
        assert_eq!(p("float32", json!(3)).unwrap(), 3.0f32.to_ne_bytes());
        assert!(p("float32", json!("0x7fc000001")).is_err());
        assert!(p("float32", json!("nan")).is_err());
        assert!(p("float32", json!("0xzz")).is_err());
        assert!(p("float32", json!(true)).is_err());
    }

    #[test]
    fn complex_bool_raw() {
        let mut want = 1.5f32.to_ne_bytes().to_vec();
        want.extend((-2.5f32).to_ne_bytes());
        assert_eq!(p("complex64", json!([1.5, -2.5])).unwrap(), want);
        let mut want = 0x7ff8_0000_0000_0000u64.to_ne_bytes().to_vec();
        want.extend(f64::INFINITY.to_ne_bytes());
        assert_eq!(p("complex128", json!(["NaN", "Infinity"])).unwrap(), want);
        assert!(p("complex64", json!([1.0])).is_err());
        assert_eq!(p("bool", json!(true)).unwrap(), [1]);
        assert!(p("bool", json!(1)).is_err());
        assert_eq!(p("r16", json!([1, 255])).unwrap(), [1, 255]);
        assert!(p("r16", json!([1, 256])).is_err());
        assert!(p("r16", json!([1])).is_err());
    }

    #[test]
    fn v2_forms() {
        let d = |t: &str| crate::dtype::v2::parse_typestr(t).unwrap();
        let p2 = |t: &str, v: Value| { let t = d(t); parse_v2(&t.data_type, t.byte_order, &v) };
        assert_eq!(p2("<f8", Value::Null).unwrap(), None);
        assert_eq!(p2("<i4", json!(-99)).unwrap().unwrap(), (-99i32).to_ne_bytes());
        assert_eq!(p2("<i4", json!(3.0)).unwrap().unwrap(), 3i32.to_ne_bytes());
        assert!(p2("<i4", json!(3.5)).is_err());
        assert_eq!(p2("<f4", json!("NaN")).unwrap().unwrap(), 0x7fc0_0000u32.to_ne_bytes());
        assert_eq!(p2("|b1", json!(1)).unwrap().unwrap(), [1]);
        assert_eq!(p2("|b1", json!(false)).unwrap().unwrap(), [0]);
        assert_eq!(p2("|S3", json!("Zm9v")).unwrap().unwrap(), b"foo");
        assert_eq!(p2("|S4", json!("Zm9v")).unwrap().unwrap(), b"foo\0");
        assert!(p2("|S2", json!("Zm9v")).is_err());
        assert_eq!(p2("|S3", json!(0)).unwrap().unwrap(), [0, 0, 0]);
        assert_eq!(p2("|S5", json!("YWI=")).unwrap().unwrap(), b"ab\0\0\0");
        assert_eq!(p2("|S5", json!("")).unwrap().unwrap(), [0; 5]);
        let u = d("<U3");
        let units = |v: &[u32]| v.iter().flat_map(|u| u.to_ne_bytes()).collect::<Vec<u8>>();
        assert_eq!(parse_v2_typed(&u.data_type, u.byte_order, u.text, &json!("ab")).unwrap().unwrap(), units(&[97, 98, 0]));
        let ub = d(">U2");
        assert_eq!(parse_v2_typed(&ub.data_type, ub.byte_order, ub.text, &json!("é")).unwrap().unwrap(), units(&[0xe9, 0]));
        assert_eq!(parse_v2_typed(&u.data_type, u.byte_order, u.text, &json!("")).unwrap().unwrap(), [0; 12]);
        assert!(parse_v2_typed(&u.data_type, u.byte_order, u.text, &json!("abcd")).is_err());
        let mut want = 2.5f64.to_ne_bytes().to_vec();
        want.extend(0f64.to_ne_bytes());
        assert_eq!(p2("<c16", json!(2.5)).unwrap().unwrap(), want);
        // big-endian base64 of a >u2 value 0x0102 gives native 258
        assert_eq!(p2(">u2", json!(crate::format::base64::encode(&[1, 2]))).unwrap().unwrap(), 258u16.to_ne_bytes());
        let st = crate::dtype::v2::parse(&json!([["x", "<f4"], ["y", ">i2"]])).unwrap();
        let b = parse_v2(&st.data_type, None, &json!(crate::format::base64::encode(&[0, 0, 0x80, 0x3f, 0, 7]))).unwrap().unwrap();
        assert_eq!(&b[..4], &1.0f32.to_ne_bytes());
        assert_eq!(&b[4..], &7i16.to_ne_bytes());
    }

    #[test]
    fn json_round_trip() {
        for (t, v) in [
            ("float32", json!("NaN")),
            ("float32", json!("0x7fc00001")),
            ("float16", json!("-Infinity")),
            ("float64", json!(-0.0)),
            ("float64", json!(2.5)),
            ("complex128", json!(["NaN", 1.0])),
            ("uint64", json!(u64::MAX)),
            ("int8", json!(-3)),
            ("r24", json!([1, 2, 3])),
            ("bool", json!(false)),
        ] {
            let dt = DataType::from_v3_name(t).unwrap();
            let b = parse_v3(&dt, &v).unwrap();
            assert_eq!(parse_v3(&dt, &to_json_v3(&dt, &b)).unwrap(), b, "{t} {v}");
        }
    }

    fn pj(t: Value, v: Value) -> Result<Vec<u8>> {
        parse_v3(&DataType::from_v3_json(&t).unwrap(), &v)
    }

    #[test]
    fn extension_fill_values() {
        // bfloat16: numbers rounded to nearest even, the registry's NaN 0x7fc0, hex patterns
        assert_eq!(p("bfloat16", json!(1.0)).unwrap(), 0x3f80u16.to_ne_bytes());
        assert_eq!(p("bfloat16", json!("NaN")).unwrap(), 0x7fc0u16.to_ne_bytes());
        assert_eq!(p("bfloat16", json!("-Infinity")).unwrap(), 0xff80u16.to_ne_bytes());
        assert_eq!(p("bfloat16", json!("0x7fc1")).unwrap(), 0x7fc1u16.to_ne_bytes());
        assert!(p("bfloat16", json!("0x7fc10")).is_err());
        assert_eq!(p("float8_e4m3", json!("NaN")).unwrap(), [0x7c]);
        assert_eq!(p("float8_e5m2fnuz", json!("NaN")).unwrap(), [0x80]);
        assert_eq!(p("float8_e8m0fnu", json!("NaN")).unwrap(), [0xff]);
        assert_eq!(p("float8_e8m0fnu", json!(0.5)).unwrap(), [126]);
        assert!(p("float8_e4m3fnuz", json!("Infinity")).is_err());
        assert!(p("float4_e2m1fn", json!("NaN")).is_err());
        assert_eq!(p("float4_e2m1fn", json!(-3)).unwrap(), [0b1101]);
        assert_eq!(p("float4_e2m1fn", json!("0xf")).unwrap(), [0xf]);
        assert!(p("float4_e2m1fn", json!("0x1f")).is_err());
        assert!(p("float6_e3m2fn", json!("0x40")).is_err());
        assert_eq!(p("float6_e3m2fn", json!("0x3f")).unwrap(), [0x3f]);
        assert!(p("float4_e2m1fn", json!(100)).is_err());
        assert_eq!(p("complex_float8_e4m3", json!([1.0, "NaN"])).unwrap(), [0x38, 0x7c]);
        let mut want = 0x3c00u16.to_ne_bytes().to_vec();
        want.extend(0xc000u16.to_ne_bytes());
        assert_eq!(p("complex_float16", json!([1.0, -2.0])).unwrap(), want);
        assert_eq!(p("complex_float32", json!([1.5, 0])).unwrap(), p("complex64", json!([1.5, 0])).unwrap());
        assert!(p("complex_bfloat16", json!(1.0)).is_err());
        // sub-byte integers: range checked, signed values sign-extended
        assert_eq!(p("int4", json!(-8)).unwrap(), [0xf8]);
        assert_eq!(p("int2", json!(1)).unwrap(), [1]);
        assert!(p("int2", json!(2)).is_err());
        assert!(p("uint4", json!(16)).is_err());
        assert_eq!(p("uint2", json!(3)).unwrap(), [3]);
        // time types: integers or "NaT" (= -2^63)
        let dt = json!({"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}});
        assert_eq!(pj(dt.clone(), json!("NaT")).unwrap(), i64::MIN.to_ne_bytes());
        assert_eq!(pj(dt.clone(), json!(i64::MIN)).unwrap(), i64::MIN.to_ne_bytes());
        assert_eq!(pj(dt.clone(), json!(86400)).unwrap(), 86400i64.to_ne_bytes());
        assert!(pj(dt.clone(), json!(1.5)).is_err());
        assert!(pj(dt.clone(), json!("nat")).is_err());
        assert!(pj(dt, json!(9223372036854775808u64)).is_err());
        // fixed_length_utf32: at most length_bytes / 4 code points, native code units, NUL padded
        let u = json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}});
        let units = |v: &[u32]| v.iter().flat_map(|u| u.to_ne_bytes()).collect::<Vec<u8>>();
        assert_eq!(pj(u.clone(), json!("H\u{1F600}")).unwrap(), units(&[0x48, 0x1f600, 0]));
        assert_eq!(pj(u.clone(), json!("")).unwrap(), [0; 12]);
        assert!(pj(u.clone(), json!("abcd")).is_err());
        assert!(pj(u, json!(0)).is_err());
        // null_terminated_bytes: base64, shorter values NUL padded
        let b = json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 4}});
        assert_eq!(pj(b.clone(), json!("YWI=")).unwrap(), b"ab\0\0");
        assert_eq!(pj(b.clone(), json!("")).unwrap(), [0; 4]);
        assert!(pj(b.clone(), json!("YWJjZGU=")).is_err());
        assert!(pj(b, json!([1, 2])).is_err());
    }

    #[test]
    fn struct_fill_values() {
        let t = json!({"name": "struct", "configuration": {"fields": [
            {"name": "p", "data_type": {"name": "struct", "configuration": {"fields": [{"name": "x", "data_type": "float32"}]}}},
            {"name": "n", "data_type": "int16"}, {"name": "f", "data_type": "bool"}]}});
        let dt = DataType::from_v3_json(&t).unwrap();
        let mut want = 1.5f32.to_ne_bytes().to_vec();
        want.extend((-2i16).to_ne_bytes());
        want.push(1);
        let v = json!({"p": {"x": 1.5}, "n": -2, "f": true});
        assert_eq!(parse_v3(&dt, &v).unwrap(), want);
        assert_eq!(to_json_v3(&dt, &want), v);
        // base64 of the stored bytes, in the bytes codec's order
        let le = [0, 0, 0xc0, 0x3f, 0xfe, 0xff, 1];
        let be = [0x3f, 0xc0, 0, 0, 0xff, 0xfe, 1];
        assert_eq!(parse_v3_stored(&dt, &json!(crate::format::base64::encode(&le)), Endian::Little).unwrap(), want);
        assert_eq!(parse_v3_stored(&dt, &json!(crate::format::base64::encode(&be)), Endian::Big).unwrap(), want);
        assert!(parse_v3(&dt, &json!(crate::format::base64::encode(&le[..6]))).is_err());
        assert!(parse_v3(&dt, &json!({"p": {"x": 1.5}, "n": -2})).is_err());
        assert!(parse_v3(&dt, &json!({"p": {"x": 1.5}, "n": -2, "f": true, "z": 0})).is_err());
        assert!(parse_v3(&dt, &json!({"p": {"x": 1.5}, "n": 40000, "f": true})).is_err());
        assert!(parse_v3(&dt, &json!([1, 2])).is_err());
    }

    #[test]
    fn extension_json_round_trip() {
        for (t, v) in [
            (json!("bfloat16"), json!("NaN")),
            (json!("bfloat16"), json!("0x7fc1")),
            (json!("bfloat16"), json!(-0.0)),
            (json!("float8_e4m3b11fnuz"), json!(-0.125)),
            (json!("float8_e5m2"), json!("-Infinity")),
            (json!("float6_e2m3fn"), json!(7.5)),
            (json!("float8_e8m0fnu"), json!(1024.0)),
            (json!("complex_float4_e2m1fn"), json!([6.0, -0.5])),
            (json!("complex_float16"), json!(["NaN", 1.0])),
            (json!("int4"), json!(-5)),
            (json!("uint2"), json!(2)),
            (json!({"name": "numpy.timedelta64", "configuration": {"unit": "ms", "scale_factor": 1}}), json!(-7)),
            (json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 16}}), json!("é\u{10FFFF}")),
            (json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 6}}), json!("AAFi")),
        ] {
            let dt = DataType::from_v3_json(&t).unwrap();
            let b = parse_v3(&dt, &v).unwrap();
            assert_eq!(to_json_v3(&dt, &b), v, "{t} {v}");
        }
    }

    #[test]
    fn bare_non_finite_tokens_are_the_special_values() {
        // as Python's json module writes them (`"fill_value": NaN`), parsed by the metadata reader
        let doc = crate::format::json_text::parse(br#"[NaN, Infinity, -Infinity]"#, crate::format::json_text::Scope::Anywhere).unwrap();
        let (nan, inf, ninf) = (&doc[0], &doc[1], &doc[2]);
        assert_eq!(p("float32", nan.clone()).unwrap(), 0x7fc0_0000u32.to_ne_bytes());
        assert_eq!(p("float64", nan.clone()).unwrap(), 0x7ff8_0000_0000_0000u64.to_ne_bytes());
        assert_eq!(p("float16", nan.clone()).unwrap(), 0x7e00u16.to_ne_bytes());
        assert_eq!(p("float64", inf.clone()).unwrap(), f64::INFINITY.to_ne_bytes());
        assert_eq!(p("float32", ninf.clone()).unwrap(), f32::NEG_INFINITY.to_ne_bytes());
        let mut want = f64::NAN.to_ne_bytes().to_vec();
        want.extend(f64::NEG_INFINITY.to_ne_bytes());
        assert_eq!(p("complex128", Value::Array(vec![nan.clone(), ninf.clone()])).unwrap(), want);
        assert_eq!(p("bfloat16", inf.clone()).unwrap(), 0x7f80u16.to_ne_bytes());
        assert!(p("int32", nan.clone()).is_err());
        assert!(p("bool", inf.clone()).is_err());
        let d = crate::dtype::v2::parse_typestr(">f8").unwrap();
        assert_eq!(parse_v2(&d.data_type, d.byte_order, nan).unwrap().unwrap(), 0x7ff8_0000_0000_0000u64.to_ne_bytes());
        let d = crate::dtype::v2::parse_typestr("<i2").unwrap();
        assert!(parse_v2(&d.data_type, d.byte_order, inf).is_err());
    }

    #[test]
    fn v2_object_fill_values() {
        // zarr-python 2 and 3 read an integer fill of a `|O` string array as its decimal text
        let s = |v: Value| parse_v2_vlen(&DataType::String, &v);
        assert_eq!(s(json!(0)).unwrap(), Some(b"0".to_vec()));
        assert_eq!(s(json!(-12)).unwrap(), Some(b"-12".to_vec()));
        assert_eq!(s(json!(u64::MAX)).unwrap(), Some(u64::MAX.to_string().into_bytes()));
        assert_eq!(s(json!("")).unwrap(), Some(vec![]));
        assert_eq!(s(json!("x")).unwrap(), Some(b"x".to_vec()));
        assert_eq!(s(Value::Null).unwrap(), None);
        assert!(s(json!(1.5)).is_err());
        assert!(s(json!(true)).is_err());
        assert!(s(json!([0])).is_err());
        let b = |v: Value| parse_v2_vlen(&DataType::Bytes, &v);
        assert_eq!(b(json!(0)).unwrap(), Some(vec![]));
        assert_eq!(b(json!("YWI=")).unwrap(), Some(b"ab".to_vec()));
        assert!(b(json!(1)).is_err());
    }
}
