//! Data types: the Zarr v3 core types, structured types, their sizes and names, and byte order.
//!
//! Element buffers exchanged with callers are native-endian, C order. `bool` is one byte (0 or 1),
//! `float16` is its two IEEE bytes, complex numbers are (real, imaginary) pairs, `r<N>` is N/8
//! opaque bytes that are never byte-swapped, and a structured element is its fields packed in order.
//! [`swap::SwapPlan`] says which bytes of a stored element are reversed to reach native order.

pub mod structured;
pub mod swap;
pub mod v2;

use crate::error::{Error, Result};
use std::sync::Arc;
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
    /// Packed fields (Zarr v2 structured dtypes).
    Struct(Arc<StructType>),
    /// `string`: variable-length UTF-8 text (extension data type, codec `vlen-utf8`; v2 `|O` with a
    /// `vlen-utf8` filter). Variable-length types have no fixed element size ([`DataType::size`] is 0)
    /// and are read and written through [`crate::array::vlen`].
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
            "string" => DataType::String,
            "bytes" | "variable_length_bytes" => DataType::Bytes,
            _ => {
                let bits = name.strip_prefix('r')?;
                if bits.is_empty() || !bits.bytes().all(|b| b.is_ascii_digit()) || bits.starts_with('0') {
                    return None;
                }
                let bits: usize = bits.parse().ok()?;
                if bits % 8 != 0 || bits / 8 > MAX_RAW_BYTES {
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
            DataType::String => "string".into(),
            DataType::Bytes => "variable_length_bytes".into(),
            DataType::VlenArray(t) => format!("vlen-array of {t}"),
        }
    }

    /// Bytes per element.
    pub fn size(&self) -> usize {
        match self {
            DataType::Bool | DataType::Int8 | DataType::UInt8 => 1,
            DataType::Int16 | DataType::UInt16 | DataType::Float16 => 2,
            DataType::Int32 | DataType::UInt32 | DataType::Float32 => 4,
            DataType::Int64 | DataType::UInt64 | DataType::Float64 | DataType::Complex64 => 8,
            DataType::Complex128 => 16,
            DataType::Raw(n) => *n,
            DataType::Struct(s) => s.size,
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
            DataType::Raw(_) | DataType::Struct(_) | DataType::String | DataType::Bytes | DataType::VlenArray(_) => 1,
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
            DataType::Float16 | DataType::Float32 | DataType::Float64 | DataType::Complex64 | DataType::Complex128
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
}
