//! Data types: the Zarr v3 core types, structured types, their sizes and names, and byte order.
//!
//! Element buffers exchanged with callers are native-endian, C order. `bool` is one byte (0 or 1),
//! `float16` is its two IEEE bytes, complex numbers are (real, imaginary) pairs, `r<N>` is N/8
//! opaque bytes that are never byte-swapped, and a structured element is its fields packed in order.
//! Extension types: see [`ext`] (small floats, sub-byte integers, time types); `fixed_length_utf32`
//! is its UTF-32 code units (native-endian) padded with U+0000, `null_terminated_bytes` its bytes
//! padded with NULs (never swapped).
//! [`swap::SwapPlan`] says which bytes of a stored element are reversed to reach native order.

pub mod dispatch;
pub mod ext;
pub mod fill_value;
pub mod structured;
pub mod swap;
pub mod v2;

use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::sync::Arc;
pub use ext::{FloatKind, SmallInt, TimeUnit};
pub use structured::{StructField, StructType};
pub use swap::SwapPlan;

/// The data type of an array's elements.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DataType {
    /// `bool`: one byte, 0 or 1.
    Bool,
    /// `int8`
    Int8,
    /// `int16`
    Int16,
    /// `int32`
    Int32,
    /// `int64`
    Int64,
    /// `uint8`
    UInt8,
    /// `uint16`
    UInt16,
    /// `uint32`
    UInt32,
    /// `uint64`
    UInt64,
    /// `float16` (IEEE 754 half precision)
    Float16,
    /// `float32`
    Float32,
    /// `float64`
    Float64,
    /// `complex64`: two float32
    Complex64,
    /// `complex128`: two float64
    Complex128,
    /// `r<N>`: N/8 raw bytes (the payload is the byte count, not the bit count).
    Raw(usize),
    /// Packed fields (Zarr v2 structured dtypes; v3 `struct` and zarr-python's `structured`).
    Struct(Arc<StructType>),
    /// `numpy.datetime64`: int64 counts of `scale_factor * unit` since the Unix epoch, NaT = `i64::MIN`.
    DateTime64(TimeUnit),
    /// `numpy.timedelta64`: int64 durations in `scale_factor * unit`, NaT = `i64::MIN`.
    TimeDelta64(TimeUnit),
    /// `fixed_length_utf32` of `length_bytes` bytes (a multiple of 4): UTF-32 code units in native
    /// byte order, padded with U+0000.
    FixedUtf32(usize),
    /// `null_terminated_bytes` of `length_bytes` bytes: the bytes padded with NULs.
    NullTerminatedBytes(usize),
    /// A float format other than float16/32/64 (`bfloat16`, `float8_*`, `float6_*`, `float4_*`):
    /// its bit pattern (see [`ext`]).
    ExtFloat(FloatKind),
    /// `complex_<component>`: (real, imaginary) pairs of the component format. `complex_float32` and
    /// `complex_float64` have the layout of `complex64` / `complex128`.
    ExtComplex(FloatKind),
    /// `int2`, `int4`, `uint2`, `uint4`: one byte per element.
    SmallInt(SmallInt),
    /// `string`: variable-length UTF-8 text (extension data type, codec `vlen-utf8`; v2 `|O` with a
    /// `vlen-utf8` filter). Variable-length types have no fixed element size ([`DataType::size`] is 0)
    /// and are read and written through `Array::read_region_vlen` / `write_region_vlen`.
    String,
    /// `bytes` (zarr-python: `variable_length_bytes`): variable-length byte strings (codec
    /// `vlen-bytes`; v2 `|O` with a `vlen-bytes` filter).
    Bytes,
    /// Zarr v2 `|O` arrays with a numcodecs `vlen-array` filter: each element is a 1-D array of this
    /// fixed-size type, exchanged as the bytes of its native-endian items.
    VlenArray(Box<DataType>),
}

/// Largest raw type accepted (`r<N>` with N/8 bytes at most this). Guards against absurd metadata.
pub const MAX_RAW_BYTES: usize = 1 << 20;

impl DataType {
    /// Parses a Zarr v3 core data type name (`"int16"`, `"r48"`, ...). `None` when the name is not a core type.
    pub fn from_v3_name(name: &str) -> Option<DataType> {
        Some(match name {
            "bool" => DataType::Bool,
            "int8" => DataType::Int8,
            "int16" => DataType::Int16,
            "int32" => DataType::Int32,
            "int64" => DataType::Int64,
            "uint8" => DataType::UInt8,
            "uint16" => DataType::UInt16,
            "uint32" => DataType::UInt32,
            "uint64" => DataType::UInt64,
            "float16" => DataType::Float16,
            "float32" => DataType::Float32,
            "float64" => DataType::Float64,
            "complex64" => DataType::Complex64,
            "complex128" => DataType::Complex128,
            "int2" => DataType::SmallInt(SmallInt::I2),
            "int4" => DataType::SmallInt(SmallInt::I4),
            "uint2" => DataType::SmallInt(SmallInt::U2),
            "uint4" => DataType::SmallInt(SmallInt::U4),
            "string" => DataType::String,
            "bytes" | "variable_length_bytes" => DataType::Bytes,
            _ => {
                if let Some(k) = ext::FLOAT_KINDS.iter().find(|k| !k.is_core() && k.name() == name) {
                    return Some(DataType::ExtFloat(*k));
                }
                if let Some(c) = name.strip_prefix("complex_") {
                    return ext::FLOAT_KINDS.iter().find(|k| k.name() == c).map(|k| DataType::ExtComplex(*k));
                }
                let bits = name.strip_prefix('r')?;
                if bits.is_empty() || !bits.bytes().all(|b| b.is_ascii_digit()) || bits.starts_with('0') {
                    return None;
                }
                let bits: usize = bits.parse().ok()?;
                if !bits.is_multiple_of(8) || bits / 8 > MAX_RAW_BYTES {
                    return None;
                }
                DataType::Raw(bits / 8)
            }
        })
    }

    /// Parses a v3 data type name, with an error naming it when unknown.
    pub fn parse_v3(name: &str) -> Result<DataType> {
        if let Some(bits) = name.strip_prefix('r') {
            if !bits.is_empty() && bits.bytes().all(|b| b.is_ascii_digit()) {
                return DataType::from_v3_name(name).ok_or_else(|| {
                    Error::Metadata(format!(
                        "invalid raw data type '{name}': the bit count must be a positive multiple of 8 (at most {})",
                        MAX_RAW_BYTES * 8
                    ))
                });
            }
        }
        DataType::from_v3_name(name).ok_or_else(|| Error::Unsupported(format!("unsupported data type '{name}'")))
    }

    /// The Zarr v3 name of this type.
    pub fn v3_name(&self) -> String {
        match self {
            DataType::Bool => "bool".into(),
            DataType::Int8 => "int8".into(),
            DataType::Int16 => "int16".into(),
            DataType::Int32 => "int32".into(),
            DataType::Int64 => "int64".into(),
            DataType::UInt8 => "uint8".into(),
            DataType::UInt16 => "uint16".into(),
            DataType::UInt32 => "uint32".into(),
            DataType::UInt64 => "uint64".into(),
            DataType::Float16 => "float16".into(),
            DataType::Float32 => "float32".into(),
            DataType::Float64 => "float64".into(),
            DataType::Complex64 => "complex64".into(),
            DataType::Complex128 => "complex128".into(),
            DataType::Raw(n) => format!("r{}", n * 8),
            DataType::Struct(_) => "struct".into(),
            DataType::DateTime64(_) => "numpy.datetime64".into(),
            DataType::TimeDelta64(_) => "numpy.timedelta64".into(),
            DataType::FixedUtf32(_) => "fixed_length_utf32".into(),
            DataType::NullTerminatedBytes(_) => "null_terminated_bytes".into(),
            DataType::ExtFloat(k) => k.name().into(),
            DataType::ExtComplex(k) => format!("complex_{}", k.name()),
            DataType::SmallInt(i) => i.name().into(),
            DataType::String => "string".into(),
            DataType::Bytes => "variable_length_bytes".into(),
            DataType::VlenArray(t) => format!("vlen-array of {t}"),
        }
    }

    /// Parses a v3 `data_type` value: a name, or an object with `name` and `configuration`
    /// (`numpy.datetime64`, `numpy.timedelta64`, `fixed_length_utf32`, `null_terminated_bytes`,
    /// `struct`, and zarr-python's legacy `structured`). Unknown names are `Error::Unsupported`.
    pub fn from_v3_json(v: &Value) -> Result<DataType> {
        Self::from_v3_json_depth(v, 0)
    }

    fn from_v3_json_depth(v: &Value, depth: usize) -> Result<DataType> {
        let e = crate::format::extension::Extension::parse(v, "data_type")?;
        let cfg = e.configuration;
        let bad = |why: String| Error::Metadata(format!("data_type '{}': {why}", e.name));
        let length_bytes = |multiple: usize| -> Result<usize> {
            let c = cfg.ok_or_else(|| bad("needs a configuration {\"length_bytes\": n}".into()))?;
            if let Some(k) = c.keys().find(|k| *k != "length_bytes") {
                return Err(bad(format!("unknown configuration member '{k}'")));
            }
            match c.get("length_bytes").and_then(Value::as_u64) {
                Some(n) if n > 0 && (n as usize).is_multiple_of(multiple) && n <= MAX_RAW_BYTES as u64 => Ok(n as usize),
                _ => Err(bad(format!(
                    "'length_bytes' must be a positive multiple of {multiple} (at most {MAX_RAW_BYTES}), got {}",
                    c.get("length_bytes").unwrap_or(&Value::Null)
                ))),
            }
        };
        Ok(match e.name {
            "numpy.datetime64" => DataType::DateTime64(TimeUnit::from_config(e.name, cfg)?),
            "numpy.timedelta64" => DataType::TimeDelta64(TimeUnit::from_config(e.name, cfg)?),
            "fixed_length_utf32" => DataType::FixedUtf32(length_bytes(4)?),
            "null_terminated_bytes" => DataType::NullTerminatedBytes(length_bytes(1)?),
            "struct" | "structured" => {
                if depth > 16 {
                    return Err(bad("nested more than 16 levels".into()));
                }
                DataType::Struct(Arc::new(structured::parse_v3_fields(e.name, cfg, |f| {
                    let t = Self::from_v3_json_depth(f, depth + 1)?;
                    if t.is_vlen() {
                        return Err(Error::Unsupported(format!("struct field of variable-length type {t}")));
                    }
                    Ok(t)
                })?))
            }
            name => {
                let dt = DataType::parse_v3(name)?;
                if cfg.is_some_and(|c| !c.is_empty()) {
                    return Err(bad("takes no configuration".into()));
                }
                dt
            }
        })
    }

    /// The v3 `data_type` JSON of this type (a name or `{name, configuration}`). Fails for structured
    /// types with subarray fields (Zarr v2 only).
    pub fn to_v3_json(&self) -> Result<Value> {
        Ok(match self {
            DataType::DateTime64(t) | DataType::TimeDelta64(t) => json!({"name": self.v3_name(), "configuration": t.to_config()}),
            DataType::FixedUtf32(n) | DataType::NullTerminatedBytes(n) => {
                json!({"name": self.v3_name(), "configuration": {"length_bytes": n}})
            }
            DataType::Struct(s) => {
                let mut fields = Vec::with_capacity(s.fields.len());
                for f in &s.fields {
                    if !f.shape.is_empty() {
                        return Err(Error::Unsupported(format!(
                            "structured field '{}' is a subarray, which the Zarr v3 struct data type cannot express",
                            f.name
                        )));
                    }
                    fields.push(json!({"name": f.name, "data_type": f.data_type.to_v3_json()?}));
                }
                json!({"name": "struct", "configuration": {"fields": fields}})
            }
            _ => Value::from(self.v3_name()),
        })
    }

    /// Bytes per element.
    pub fn size(&self) -> usize {
        match self {
            DataType::Bool | DataType::Int8 | DataType::UInt8 => 1,
            DataType::Int16 | DataType::UInt16 | DataType::Float16 => 2,
            DataType::Int32 | DataType::UInt32 | DataType::Float32 => 4,
            DataType::Int64 | DataType::UInt64 | DataType::Float64 | DataType::Complex64 => 8,
            DataType::Complex128 => 16,
            DataType::Raw(n) | DataType::FixedUtf32(n) | DataType::NullTerminatedBytes(n) => *n,
            DataType::Struct(s) => s.size,
            DataType::DateTime64(_) | DataType::TimeDelta64(_) => 8,
            DataType::ExtFloat(k) => k.size(),
            DataType::ExtComplex(k) => 2 * k.size(),
            DataType::SmallInt(_) => 1,
            DataType::String | DataType::Bytes | DataType::VlenArray(_) => 0,
        }
    }

    /// Whether elements have variable length (`string`, `bytes`, v2 `vlen-array`).
    pub fn is_vlen(&self) -> bool {
        matches!(self, DataType::String | DataType::Bytes | DataType::VlenArray(_))
    }

    /// The size of the unit whose bytes are reversed when the byte order changes (1: never swapped).
    /// For a structured type this is 1; its fields are described by [`SwapPlan::for_type`].
    pub fn swap_unit(&self) -> usize {
        match self {
            DataType::Complex64 => 4,
            DataType::Complex128 => 8,
            DataType::Raw(_) | DataType::Struct(_) | DataType::NullTerminatedBytes(_) => 1,
            DataType::String | DataType::Bytes | DataType::VlenArray(_) => 1,
            DataType::FixedUtf32(_) => 4,
            DataType::ExtComplex(k) => k.size(),
            other => other.size(),
        }
    }

    /// Whether the byte order matters for this type.
    pub fn has_endianness(&self) -> bool {
        match self {
            DataType::Struct(s) => s.fields.iter().any(|f| f.data_type.has_endianness()),
            _ => self.swap_unit() > 1,
        }
    }

    /// Whether this is a floating-point (or complex) type.
    pub fn is_float(&self) -> bool {
        matches!(
            self,
            DataType::Float16
                | DataType::Float32
                | DataType::Float64
                | DataType::Complex64
                | DataType::Complex128
                | DataType::ExtFloat(_)
                | DataType::ExtComplex(_)
        )
    }
}

impl std::fmt::Display for DataType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.v3_name())
    }
}

/// `float64 -> float16`, rounded once to nearest, ties to even (numpy's `npy_double_to_half`; the
/// `half` crate may round through `float32` on some CPUs, which double-rounds). NaN keeps its sign and
/// the top of its payload, and stays a NaN.
pub fn f16_from_f64(x: f64) -> half::f16 {
    use half::f16;
    let b = x.to_bits();
    let sign = ((b >> 48) & 0x8000) as u16;
    let exp = ((b >> 52) & 0x7ff) as i32;
    let sig = b & 0x000f_ffff_ffff_ffff;
    if exp == 0x7ff {
        if sig == 0 {
            return f16::from_bits(sign | 0x7c00);
        }
        let m = (sig >> 42) as u16;
        return f16::from_bits(sign | 0x7c00 | if m == 0 { 1 } else { m });
    }
    if exp == 0 {
        return f16::from_bits(sign); // zero or a float64 subnormal: far below half the smallest float16
    }
    let e = exp - 1023;
    if e >= 16 {
        return f16::from_bits(sign | 0x7c00);
    }
    let m = sig | (1u64 << 52);
    // units of the result: 2^(e-10) for normal results, 2^-24 for subnormal ones
    let shift = if e >= -14 { 42 } else { 28 - e };
    if shift > 53 {
        return f16::from_bits(sign);
    }
    let q = m >> shift;
    let rem = m & ((1u64 << shift) - 1);
    let half = 1u64 << (shift - 1);
    let q = if rem > half || (rem == half && q & 1 == 1) { q + 1 } else { q };
    // a carry out of the significand moves into the exponent (up to infinity)
    let bits = if e >= -14 { (((e + 14) as u64) << 10) + q } else { q };
    f16::from_bits(sign | bits as u16)
}

/// Byte order of stored data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endian {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
}

impl Endian {
    /// The byte order of this machine.
    pub const NATIVE: Endian = if cfg!(target_endian = "little") { Endian::Little } else { Endian::Big };

    /// Whether this is the machine's byte order.
    pub fn is_native(self) -> bool {
        self == Endian::NATIVE
    }
}

/// Reverses the bytes of every `unit`-byte word of `buf` in place (`unit` 1 is a no-op).
pub fn swap_in_place(buf: &mut [u8], unit: usize) {
    match unit {
        0 | 1 => {}
        2 => buf.chunks_exact_mut(2).for_each(|c| {
            let v = u16::from_ne_bytes([c[0], c[1]]).swap_bytes();
            c.copy_from_slice(&v.to_ne_bytes());
        }),
        4 => buf.chunks_exact_mut(4).for_each(|c| {
            let v = u32::from_ne_bytes(c.try_into().unwrap()).swap_bytes();
            c.copy_from_slice(&v.to_ne_bytes());
        }),
        8 => buf.chunks_exact_mut(8).for_each(|c| {
            let v = u64::from_ne_bytes(c.try_into().unwrap()).swap_bytes();
            c.copy_from_slice(&v.to_ne_bytes());
        }),
        n => buf.chunks_exact_mut(n).for_each(|c| c.reverse()),
    }
}

/// Copies `src` into `dst` (same length), reversing every `unit`-byte word.
pub fn swap_copy(src: &[u8], dst: &mut [u8], unit: usize) {
    debug_assert_eq!(src.len(), dst.len());
    match unit {
        0 | 1 => dst.copy_from_slice(src),
        2 => dst.chunks_exact_mut(2).zip(src.chunks_exact(2)).for_each(|(d, s)| {
            d.copy_from_slice(&u16::from_ne_bytes([s[0], s[1]]).swap_bytes().to_ne_bytes())
        }),
        4 => dst.chunks_exact_mut(4).zip(src.chunks_exact(4)).for_each(|(d, s)| {
            d.copy_from_slice(&u32::from_ne_bytes(s.try_into().unwrap()).swap_bytes().to_ne_bytes())
        }),
        8 => dst.chunks_exact_mut(8).zip(src.chunks_exact(8)).for_each(|(d, s)| {
            d.copy_from_slice(&u64::from_ne_bytes(s.try_into().unwrap()).swap_bytes().to_ne_bytes())
        }),
        n => dst.chunks_exact_mut(n).zip(src.chunks_exact(n)).for_each(|(d, s)| {
            for (i, b) in s.iter().rev().enumerate() {
                d[i] = *b;
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in [
            "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
            "float64", "complex64", "complex128", "r8", "r48", "r128",
        ] {
            assert_eq!(DataType::from_v3_name(n).unwrap().v3_name(), n);
        }
        assert_eq!(DataType::from_v3_name("r48").unwrap().size(), 6);
        assert!(DataType::from_v3_name("r7").is_none());
        assert!(DataType::from_v3_name("r0").is_none());
        assert!(DataType::from_v3_name("r08").is_none());
        assert_eq!(DataType::from_v3_name("string"), Some(DataType::String));
        assert_eq!(DataType::from_v3_name("variable_length_bytes"), Some(DataType::Bytes));
        assert_eq!(DataType::from_v3_name("bytes"), Some(DataType::Bytes));
        assert!(DataType::String.is_vlen() && !DataType::String.has_endianness());
        assert!(DataType::from_v3_name("str").is_none());
        assert!(matches!(DataType::parse_v3("r12"), Err(Error::Metadata(_))));
        assert!(matches!(DataType::parse_v3("float8"), Err(Error::Unsupported(_))));
        assert!(matches!(DataType::parse_v3("r99999999999999999999"), Err(Error::Metadata(_))));
    }

    #[test]
    fn swap_units() {
        assert_eq!(DataType::Complex128.swap_unit(), 8);
        assert_eq!(DataType::Raw(6).swap_unit(), 1);
        assert!(!DataType::Bool.has_endianness());
        let mut b = vec![1, 2, 3, 4, 5, 6];
        swap_in_place(&mut b, 2);
        assert_eq!(b, [2, 1, 4, 3, 6, 5]);
        swap_in_place(&mut b, 3);
        assert_eq!(b, [4, 1, 2, 5, 6, 3]);
        let mut d = vec![0; 8];
        swap_copy(&[1, 2, 3, 4, 5, 6, 7, 8], &mut d, 8);
        assert_eq!(d, [8, 7, 6, 5, 4, 3, 2, 1]);
        swap_copy(&[1, 2, 3, 4, 5, 6, 7, 8], &mut d, 4);
        assert_eq!(d, [4, 3, 2, 1, 8, 7, 6, 5]);
    }

    #[test]
    fn extension_types_parse() {
        let p = |v: Value| DataType::from_v3_json(&v);
        for n in ["bfloat16", "float8_e4m3fnuz", "float6_e2m3fn", "float4_e2m1fn", "complex_float16", "complex_bfloat16",
                  "complex_float8_e8m0fnu", "complex_float32", "int2", "uint4"] {
            let dt = p(json!(n)).unwrap();
            assert_eq!(dt.v3_name(), n);
            assert_eq!(dt.to_v3_json().unwrap(), json!(n));
        }
        assert_eq!(p(json!("bfloat16")).unwrap().swap_unit(), 2);
        assert_eq!(p(json!("complex_bfloat16")).unwrap().size(), 4);
        assert_eq!(p(json!("complex_bfloat16")).unwrap().swap_unit(), 2);
        assert_eq!(p(json!("complex_float64")).unwrap().swap_unit(), 8);
        assert!(!p(json!("complex_float8_e5m2")).unwrap().has_endianness());
        assert!(!p(json!("int4")).unwrap().has_endianness());
        assert!(matches!(p(json!("complex_int8")), Err(Error::Unsupported(_))));
        assert!(matches!(p(json!("float8")), Err(Error::Unsupported(_))));
        assert!(matches!(p(json!({"name": "bfloat16", "configuration": {"x": 1}})), Err(Error::Metadata(_))));

        let t = json!({"name": "numpy.datetime64", "configuration": {"unit": "us", "scale_factor": 10}});
        let dt = p(t.clone()).unwrap();
        assert_eq!(dt, DataType::DateTime64(TimeUnit { unit: "us".into(), scale_factor: 10 }));
        assert_eq!((dt.size(), dt.swap_unit()), (8, 8));
        assert_eq!(dt.to_v3_json().unwrap(), t);
        for bad in [json!({"unit": "xs", "scale_factor": 1}), json!({"unit": "s", "scale_factor": 0}),
                    json!({"unit": "s", "scale_factor": 2147483648u64}), json!({"unit": "s"}),
                    json!({"unit": "s", "scale_factor": 1, "x": 0})] {
            assert!(matches!(p(json!({"name": "numpy.timedelta64", "configuration": bad})), Err(Error::Metadata(_))));
        }
        assert!(p(json!("numpy.datetime64")).is_err());
        let u = p(json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 24}})).unwrap();
        assert_eq!((u.size(), u.swap_unit()), (24, 4));
        assert!(p(json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 6}})).is_err());
        assert!(p(json!({"name": "fixed_length_utf32", "configuration": {"length_bytes": 0}})).is_err());
        let b = p(json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 5}})).unwrap();
        assert_eq!((b.size(), b.swap_unit()), (5, 1));
        assert!(p(json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": 1u64 << 40}})).is_err());
    }

    #[test]
    fn struct_types_parse() {
        let nested = json!({"name": "struct", "configuration": {"fields": [
            {"name": "point", "data_type": {"name": "struct", "configuration": {"fields": [
                {"name": "x", "data_type": "float32"}, {"name": "y", "data_type": {"name": "float32"}}]}}},
            {"name": "t", "data_type": {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}},
            {"name": "v", "data_type": "uint8"}]}});
        let dt = DataType::from_v3_json(&nested).unwrap();
        let DataType::Struct(s) = &dt else { panic!() };
        assert_eq!(s.size, 17);
        assert_eq!([s.fields[0].offset, s.fields[1].offset, s.fields[2].offset], [0, 8, 16]);
        // the plan swaps x, y and t, not v
        let plan = SwapPlan::for_type(&dt, Some(if Endian::NATIVE == Endian::Little { Endian::Big } else { Endian::Little }));
        let mut e: Vec<u8> = (0..17).collect();
        plan.apply_in_place(&mut e);
        assert_eq!(e, [3, 2, 1, 0, 7, 6, 5, 4, 15, 14, 13, 12, 11, 10, 9, 8, 16]);
        let mut round = DataType::from_v3_json(&dt.to_v3_json().unwrap()).unwrap();
        assert_eq!(round, dt);
        // zarr-python's legacy form
        round = DataType::from_v3_json(&json!({"name": "structured", "configuration": {"fields": [["a", "int16"], ["b", "bool"]]}})).unwrap();
        assert_eq!(round.size(), 3);
        let bad = |fields: Value| DataType::from_v3_json(&json!({"name": "struct", "configuration": {"fields": fields}}));
        assert!(matches!(bad(json!([])), Err(Error::Metadata(_))));
        assert!(matches!(bad(json!([{"name": "a", "data_type": "int8"}, {"name": "a", "data_type": "int8"}])), Err(Error::Metadata(_))));
        assert!(matches!(bad(json!([{"name": "", "data_type": "int8"}])), Err(Error::Metadata(_))));
        assert!(matches!(bad(json!([{"name": "a"}])), Err(Error::Metadata(_))));
        assert!(matches!(bad(json!([{"name": "a", "data_type": "string"}])), Err(Error::Unsupported(_))));
        assert!(matches!(bad(json!([{"name": "a", "data_type": "int8", "x": 1}])), Err(Error::Metadata(_))));
        assert!(matches!(bad(json!(5)), Err(Error::Metadata(_))));
        // absurd nesting is refused, not a stack overflow
        let mut deep = json!("int8");
        for _ in 0..40 {
            deep = json!({"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": deep}]}});
        }
        assert!(matches!(DataType::from_v3_json(&deep), Err(Error::Metadata(_))));
        // v2 subarray fields have no v3 form
        let v2 = v2::parse(&json!([["a", "<i2", [2]]])).unwrap();
        assert!(matches!(v2.data_type.to_v3_json(), Err(Error::Unsupported(_))));
    }
}
