//! Extension data types of the zarr-extensions registry with a fixed size: small and alternative
//! floating-point formats (`bfloat16`, `float8_*`, `float6_*`, `float4_*`), complex numbers built from
//! them (`complex_*`), sub-byte integers (`int2`, `int4`, `uint2`, `uint4`) and the time types
//! (`numpy.datetime64`, `numpy.timedelta64`).
//!
//! Buffer layouts (what callers read and write): every float format is its stored bit pattern in
//! the low bits of one byte (two bytes, native-endian, for `bfloat16`); a complex number is the pair
//! (real, imaginary) of its component; `int2`/`int4`/`uint2`/`uint4` are one byte per element holding
//! the value in the low bits. The `bytes` codec stores these bytes as they are (the registry says the
//! unused upper bits are ignored by readers); libzarr writes signed values sign-extended over the
//! whole byte and unsigned and float values with the upper bits zero, and the `packbits` codec
//! decodes to that form. Time types are int64 counts of `scale_factor * unit` since the Unix epoch
//! (durations for timedelta64), NaT = `i64::MIN`.

use crate::error::{Error, Result};

/// How a float format spells its special values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Specials {
    /// IEEE 754 style: exponent all ones is infinity (mantissa 0) or NaN.
    Ieee,
    /// `fnuz`: finite, no negative zero; the pattern sign=1, rest 0 is the only NaN.
    Fnuz,
    /// `fn` without NaN (`float6_*`, `float4_*`): every pattern is a finite number.
    FiniteOnly,
    /// `e8m0fnu`: unsigned, no zero, all ones is NaN.
    E8M0,
}

/// A floating-point format: 1 sign bit (except E8M0), `exp` exponent bits, `man` mantissa bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FloatFormat {
    /// Bits per value (sign + exponent + mantissa).
    pub bits: u32,
    /// Exponent bits.
    pub exp: u32,
    /// Mantissa (fraction) bits.
    pub man: u32,
    /// Exponent bias.
    pub bias: i32,
    /// Special values.
    pub specials: Specials,
}

/// The float formats other than the core float16/32/64, plus those three (used as complex components).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloatKind {
    /// IEEE binary16 (only as a complex component here; the plain type is `DataType::Float16`).
    F16,
    /// IEEE binary32 (complex component).
    F32,
    /// IEEE binary64 (complex component).
    F64,
    /// `bfloat16`
    BF16,
    /// `float8_e3m4`
    E3M4,
    /// `float8_e4m3`
    E4M3,
    /// `float8_e4m3b11fnuz`
    E4M3B11Fnuz,
    /// `float8_e4m3fnuz`
    E4M3Fnuz,
    /// `float8_e5m2`
    E5M2,
    /// `float8_e5m2fnuz`
    E5M2Fnuz,
    /// `float8_e8m0fnu`
    E8M0Fnu,
    /// `float6_e2m3fn`
    E2M3Fn,
    /// `float6_e3m2fn`
    E3M2Fn,
    /// `float4_e2m1fn`
    E2M1Fn,
}

/// Every float kind, in registry name order (for tables and tests).
pub const FLOAT_KINDS: [FloatKind; 14] = [
    FloatKind::F16,
    FloatKind::F32,
    FloatKind::F64,
    FloatKind::BF16,
    FloatKind::E3M4,
    FloatKind::E4M3,
    FloatKind::E4M3B11Fnuz,
    FloatKind::E4M3Fnuz,
    FloatKind::E5M2,
    FloatKind::E5M2Fnuz,
    FloatKind::E8M0Fnu,
    FloatKind::E2M3Fn,
    FloatKind::E3M2Fn,
    FloatKind::E2M1Fn,
];

impl FloatKind {
    /// Whether the real type of this kind is a core Zarr type (float16/32/64).
    pub fn is_core(self) -> bool {
        matches!(self, FloatKind::F16 | FloatKind::F32 | FloatKind::F64)
    }

    /// The registry name of the real type (`float16`, `bfloat16`, `float8_e4m3`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FloatKind::F16 => "float16",
            FloatKind::F32 => "float32",
            FloatKind::F64 => "float64",
            FloatKind::BF16 => "bfloat16",
            FloatKind::E3M4 => "float8_e3m4",
            FloatKind::E4M3 => "float8_e4m3",
            FloatKind::E4M3B11Fnuz => "float8_e4m3b11fnuz",
            FloatKind::E4M3Fnuz => "float8_e4m3fnuz",
            FloatKind::E5M2 => "float8_e5m2",
            FloatKind::E5M2Fnuz => "float8_e5m2fnuz",
            FloatKind::E8M0Fnu => "float8_e8m0fnu",
            FloatKind::E2M3Fn => "float6_e2m3fn",
            FloatKind::E3M2Fn => "float6_e3m2fn",
            FloatKind::E2M1Fn => "float4_e2m1fn",
        }
    }

    /// The format's parameters.
    pub fn format(self) -> FloatFormat {
        let f = |bits, exp, man, bias, specials| FloatFormat { bits, exp, man, bias, specials };
        match self {
            FloatKind::F16 => f(16, 5, 10, 15, Specials::Ieee),
            FloatKind::F32 => f(32, 8, 23, 127, Specials::Ieee),
            FloatKind::F64 => f(64, 11, 52, 1023, Specials::Ieee),
            FloatKind::BF16 => f(16, 8, 7, 127, Specials::Ieee),
            FloatKind::E3M4 => f(8, 3, 4, 3, Specials::Ieee),
            FloatKind::E4M3 => f(8, 4, 3, 7, Specials::Ieee),
            FloatKind::E4M3B11Fnuz => f(8, 4, 3, 11, Specials::Fnuz),
            FloatKind::E4M3Fnuz => f(8, 4, 3, 8, Specials::Fnuz),
            FloatKind::E5M2 => f(8, 5, 2, 15, Specials::Ieee),
            FloatKind::E5M2Fnuz => f(8, 5, 2, 16, Specials::Fnuz),
            FloatKind::E8M0Fnu => f(8, 8, 0, 127, Specials::E8M0),
            FloatKind::E2M3Fn => f(6, 2, 3, 1, Specials::FiniteOnly),
            FloatKind::E3M2Fn => f(6, 3, 2, 3, Specials::FiniteOnly),
            FloatKind::E2M1Fn => f(4, 2, 1, 1, Specials::FiniteOnly),
        }
    }

    /// Bytes per value in buffers (1 for the formats narrower than 8 bits).
    pub fn size(self) -> usize {
        self.format().bits.div_ceil(8) as usize
    }
}

impl FloatFormat {
    fn sign_bit(&self) -> u64 {
        if self.specials == Specials::E8M0 { 0 } else { 1u64 << (self.bits - 1) }
    }

    /// The pattern of `"NaN"` (the registry's constant), or `None` when the format has no NaN.
    pub fn nan(&self) -> Option<u64> {
        match self.specials {
            Specials::Ieee => Some((((1u64 << self.exp) - 1) << self.man) | (1u64 << (self.man - 1))),
            Specials::Fnuz => Some(self.sign_bit()),
            Specials::E8M0 => Some(0xff),
            Specials::FiniteOnly => None,
        }
    }

    /// The pattern of positive infinity, if the format has one.
    pub fn infinity(&self) -> Option<u64> {
        (self.specials == Specials::Ieee).then(|| ((1u64 << self.exp) - 1) << self.man)
    }

    /// Whether `bits` (a value of this format) is a NaN.
    pub fn is_nan(&self, bits: u64) -> bool {
        match self.specials {
            Specials::Ieee => {
                let e = (bits >> self.man) & ((1 << self.exp) - 1);
                e == (1 << self.exp) - 1 && bits & ((1 << self.man) - 1) != 0
            }
            Specials::Fnuz => bits == self.sign_bit(),
            Specials::E8M0 => bits == 0xff,
            Specials::FiniteOnly => false,
        }
    }

    /// The value of the pattern `bits` as a float64 (exact: every format here fits in a float64).
    pub fn to_f64(&self, bits: u64) -> f64 {
        if self.bits == 64 {
            return f64::from_bits(bits);
        }
        if self.is_nan(bits) {
            return f64::NAN;
        }
        if self.specials == Specials::E8M0 {
            return 2f64.powi(bits as i32 - self.bias);
        }
        let neg = bits & self.sign_bit() != 0;
        let e = ((bits >> self.man) & ((1 << self.exp) - 1)) as i32;
        let m = bits & ((1 << self.man) - 1);
        let mag = if Some(bits & !self.sign_bit()) == self.infinity() {
            f64::INFINITY
        } else if e == 0 {
            m as f64 * 2f64.powi(1 - self.bias - self.man as i32)
        } else {
            (m | (1 << self.man)) as f64 * 2f64.powi(e - self.bias - self.man as i32)
        };
        if neg { -mag } else { mag }
    }

    /// The pattern nearest to `x` (round to nearest, ties to even). Errors (as a reason) when the
    /// format cannot represent `x`: NaN or an infinity it lacks, a magnitude beyond its largest finite
    /// value (formats without infinity), a negative value or zero for `float8_e8m0fnu`.
    pub fn from_f64(&self, x: f64) -> std::result::Result<u64, &'static str> {
        if self.bits == 64 {
            return Ok(x.to_bits());
        }
        if x.is_nan() {
            return self.nan().ok_or("the format has no NaN");
        }
        let sign = if x.is_sign_negative() { self.sign_bit() } else { 0 };
        if self.specials == Specials::E8M0 && (x <= 0.0 || x.is_sign_negative()) {
            return Err("float8_e8m0fnu has no zero and no negative values");
        }
        if x.is_infinite() {
            return self.infinity().map(|i| sign | i).ok_or("the format has no infinity");
        }
        let b = x.abs().to_bits();
        let exp = ((b >> 52) & 0x7ff) as i32;
        if exp == 0 && b & ((1 << 52) - 1) == 0 {
            // zero; fnuz formats have no negative zero
            return Ok(if self.specials == Specials::Fnuz { 0 } else { sign });
        }
        let (e, m) = if exp == 0 {
            // float64 subnormal: normalise
            let sig = b & ((1 << 52) - 1);
            let lz = sig.leading_zeros() as i32 - 11;
            (-1022 - lz, sig << lz)
        } else {
            (exp - 1023, (b & ((1 << 52) - 1)) | (1 << 52))
        };
        let min_normal = 1 - self.bias;
        let man = self.man as i32;
        // the result in units of 2^(max(e, min_normal) - man), rounded
        let shift = if e >= min_normal || self.specials == Specials::E8M0 { 52 - man } else { 52 - man + (min_normal - e) };
        let q = if shift > 60 {
            0
        } else {
            let q = m >> shift;
            let rem = m & ((1u64 << shift) - 1);
            let half = 1u64 << (shift - 1);
            if rem > half || (rem == half && q & 1 == 1) { q + 1 } else { q }
        };
        if self.specials == Specials::E8M0 {
            // q is 1 or 2: a power of two after rounding
            let biased = e + (q >> 1) as i32 + self.bias;
            if !(0..=254).contains(&biased) {
                return Err("out of the range of float8_e8m0fnu");
            }
            return Ok(biased as u64);
        }
        let mag = if e >= min_normal {
            (((e - min_normal) as u64) << self.man) + q
        } else {
            q
        };
        if self.specials == Specials::Fnuz && mag == 0 {
            return Ok(0);
        }
        let max_finite = match self.specials {
            Specials::Ieee => (((1u64 << self.exp) - 1) << self.man) - 1,
            _ => self.sign_bit() - 1,
        };
        if mag > max_finite {
            return match self.infinity() {
                Some(inf) => Ok(sign | inf),
                None => Err("beyond the largest finite value of the format"),
            };
        }
        Ok(sign | mag)
    }
}

/// Sub-byte integer types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SmallInt {
    /// `int2`: -2..=1
    I2,
    /// `int4`: -8..=7
    I4,
    /// `uint2`: 0..=3
    U2,
    /// `uint4`: 0..=15
    U4,
}

impl SmallInt {
    /// Registry name.
    pub fn name(self) -> &'static str {
        match self {
            SmallInt::I2 => "int2",
            SmallInt::I4 => "int4",
            SmallInt::U2 => "uint2",
            SmallInt::U4 => "uint4",
        }
    }

    /// Bits per value.
    pub fn bits(self) -> u32 {
        match self {
            SmallInt::I2 | SmallInt::U2 => 2,
            SmallInt::I4 | SmallInt::U4 => 4,
        }
    }

    /// Whether the type is signed.
    pub fn signed(self) -> bool {
        matches!(self, SmallInt::I2 | SmallInt::I4)
    }

    /// Inclusive value range.
    pub fn range(self) -> (i64, i64) {
        let b = self.bits();
        if self.signed() { (-(1 << (b - 1)), (1 << (b - 1)) - 1) } else { (0, (1 << b) - 1) }
    }

    /// The buffer byte of value `v` (in range): signed values sign-extended over the byte.
    pub fn to_byte(self, v: i64) -> u8 {
        v as i8 as u8
    }

    /// The value of a buffer byte (upper bits ignored, as the registry says).
    pub fn from_byte(self, b: u8) -> i64 {
        let bits = self.bits();
        let low = (b as u64) & ((1 << bits) - 1);
        if self.signed() && low >> (bits - 1) == 1 { low as i64 - (1 << bits) } else { low as i64 }
    }
}

/// Units of `numpy.datetime64` / `numpy.timedelta64`.
pub const TIME_UNITS: [&str; 15] = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "μs", "ns", "ps", "fs", "as", "generic"];

/// The configuration of a time type: unit and scale factor (`datetime64[10us]`: unit "us", 10).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TimeUnit {
    /// One of [`TIME_UNITS`] (`"μs"` is kept as written).
    pub unit: String,
    /// In `1..=2^31-1`.
    pub scale_factor: u32,
}

impl TimeUnit {
    /// Parses the `configuration` of a time type.
    pub fn from_config(name: &str, cfg: Option<&serde_json::Map<String, serde_json::Value>>) -> Result<TimeUnit> {
        let bad = |why: String| Error::Metadata(format!("data_type '{name}': {why}"));
        let cfg = cfg.ok_or_else(|| bad("needs a configuration {\"unit\", \"scale_factor\"}".into()))?;
        if let Some(k) = cfg.keys().find(|k| *k != "unit" && *k != "scale_factor") {
            return Err(bad(format!("unknown configuration member '{k}'")));
        }
        let unit = cfg.get("unit").and_then(|u| u.as_str()).ok_or_else(|| bad("'unit' must be a string".into()))?;
        if !TIME_UNITS.contains(&unit) {
            return Err(bad(format!("unknown unit '{unit}' (expected one of {TIME_UNITS:?})")));
        }
        let scale = cfg.get("scale_factor").ok_or_else(|| bad("missing 'scale_factor'".into()))?;
        let scale_factor = match scale.as_u64() {
            Some(s) if (1..=i32::MAX as u64).contains(&s) => s as u32,
            _ => return Err(bad(format!("'scale_factor' must be an integer in [1, 2147483647], got {scale}"))),
        };
        Ok(TimeUnit { unit: unit.to_string(), scale_factor })
    }

    /// The configuration object.
    pub fn to_config(&self) -> serde_json::Value {
        serde_json::json!({"unit": self.unit, "scale_factor": self.scale_factor})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_patterns(k: FloatKind) -> impl Iterator<Item = u64> {
        0..(1u64 << k.format().bits)
    }

    #[test]
    fn registry_nan_constants() {
        let nan = |k: FloatKind| k.format().nan();
        assert_eq!(nan(FloatKind::BF16), Some(0x7fc0));
        assert_eq!(nan(FloatKind::E3M4), Some(0x78));
        assert_eq!(nan(FloatKind::E4M3), Some(0x7c));
        assert_eq!(nan(FloatKind::E5M2), Some(0x7e));
        assert_eq!(nan(FloatKind::E4M3Fnuz), Some(0x80));
        assert_eq!(nan(FloatKind::E4M3B11Fnuz), Some(0x80));
        assert_eq!(nan(FloatKind::E5M2Fnuz), Some(0x80));
        assert_eq!(nan(FloatKind::E8M0Fnu), Some(0xff));
        assert_eq!(nan(FloatKind::E2M1Fn), None);
        assert_eq!(FloatKind::F16.format().nan(), Some(0x7e00));
    }

    #[test]
    fn every_pattern_round_trips() {
        for k in FLOAT_KINDS {
            if matches!(k, FloatKind::F32 | FloatKind::F64) {
                continue;
            }
            let f = k.format();
            for b in all_patterns(k) {
                let x = f.to_f64(b);
                if f.is_nan(b) {
                    assert_eq!(f.from_f64(x), Ok(f.nan().unwrap()), "{k:?} {b:#x}");
                } else if f.specials == Specials::Fnuz && b == 0 {
                    assert_eq!(f.from_f64(x), Ok(0));
                } else {
                    assert_eq!(f.from_f64(x), Ok(b), "{k:?} {b:#x} {x}");
                }
            }
        }
    }

    #[test]
    fn hand_computed_values() {
        // float4_e2m1fn: 0bSEEM, values 0, 0.5, 1, 1.5, 2, 3, 4, 6
        let f4 = FloatKind::E2M1Fn.format();
        let v: Vec<f64> = (0..8).map(|b| f4.to_f64(b)).collect();
        assert_eq!(v, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
        assert_eq!(f4.to_f64(0b1111), -6.0);
        assert_eq!(f4.from_f64(5.0), Ok(0b0110)); // tie between 4 and 6 -> even mantissa (4)
        assert_eq!(f4.from_f64(7.0), Err("beyond the largest finite value of the format"));
        assert!(f4.from_f64(f64::NAN).is_err());
        // float8_e4m3 (IEEE, bias 7): 1.0 = 0x38, max finite 240 = 0x77, inf 0x78
        let e4m3 = FloatKind::E4M3.format();
        assert_eq!(e4m3.from_f64(1.0), Ok(0x38));
        assert_eq!(e4m3.to_f64(0x77), 240.0);
        assert_eq!(e4m3.from_f64(1e6), Ok(0x78));
        assert_eq!(e4m3.from_f64(f64::NEG_INFINITY), Ok(0xf8));
        // float8_e4m3fnuz: bias 8, 1.0 = 0x40, max 240 = 0x7f, -0.0 -> 0
        let fnuz = FloatKind::E4M3Fnuz.format();
        assert_eq!(fnuz.from_f64(1.0), Ok(0x40));
        assert_eq!(fnuz.to_f64(0x7f), 240.0);
        assert_eq!(fnuz.from_f64(-0.0), Ok(0));
        assert!(fnuz.from_f64(f64::INFINITY).is_err());
        // float8_e5m2: 1.0 = 0x3c, smallest subnormal 2^-16 = 0x01
        let e5m2 = FloatKind::E5M2.format();
        assert_eq!(e5m2.from_f64(1.0), Ok(0x3c));
        assert_eq!(e5m2.from_f64(2f64.powi(-16)), Ok(0x01));
        assert_eq!(e5m2.from_f64(2f64.powi(-18)), Ok(0x00)); // below half the smallest subnormal
        // float8_e8m0fnu: 2^(E-127)
        let e8 = FloatKind::E8M0Fnu.format();
        assert_eq!(e8.from_f64(1.0), Ok(127));
        assert_eq!(e8.from_f64(0.25), Ok(125));
        assert_eq!(e8.to_f64(128), 2.0);
        assert!(e8.from_f64(0.0).is_err());
        assert!(e8.from_f64(-1.0).is_err());
        // bfloat16: 1.0 = 0x3f80, pi rounds to 0x4049
        let bf = FloatKind::BF16.format();
        assert_eq!(bf.from_f64(1.0), Ok(0x3f80));
        assert_eq!(bf.from_f64(std::f64::consts::PI), Ok(0x4049));
        // float6_e3m2fn: bias 3, max 28 = 0x1f
        let e3m2 = FloatKind::E3M2Fn.format();
        assert_eq!(e3m2.to_f64(0x1f), 28.0);
        assert_eq!(e3m2.from_f64(-1.0), Ok(0x20 | 0x0c));
        // float6_e2m3fn: bias 1, max 7.5 = 0x1f
        assert_eq!(FloatKind::E2M3Fn.format().to_f64(0x1f), 7.5);
        // float16 agrees with the double-rounding-free converter of dtype::f16_from_f64
        let f16 = FloatKind::F16.format();
        for x in [1.0 / 3.0, 65519.99, 65520.0, 1e-8, 2.9802322387695312e-8, -5.96e-8] {
            assert_eq!(f16.from_f64(x), Ok(crate::dtype::f16_from_f64(x).to_bits() as u64), "{x}");
        }
        assert_eq!(FloatKind::F32.format().from_f64(0.1), Ok(0.1f32.to_bits() as u64));
    }

    #[test]
    fn small_ints() {
        assert_eq!(SmallInt::I4.range(), (-8, 7));
        assert_eq!(SmallInt::U2.range(), (0, 3));
        assert_eq!(SmallInt::I2.to_byte(-2), 0xfe);
        assert_eq!(SmallInt::I2.from_byte(0b1110), -2);
        assert_eq!(SmallInt::I4.from_byte(0xa7), 7);
        assert_eq!(SmallInt::U4.from_byte(0xff), 15);
    }
}
