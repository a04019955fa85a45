//! The small numpy model the numcodecs filters share: element kinds, numpy type promotion, numpy
//! `astype` casts, and element-wise arithmetic in a given type, so that every filter computes exactly
//! what numcodecs (numpy >= 2, NEP 50 scalar rules) computes, bit for bit.
//!
//! numpy semantics reproduced here:
//! - integer arithmetic wraps; `float16` arithmetic is done in `float32` and rounded back (as numpy
//!   does), which for one operation is the correctly rounded `float16` result;
//! - casts (`astype`, array assignment): int -> int wraps (two's complement); int -> float and
//!   float -> float round to nearest, ties to even (`float64 -> float16` rounds once, directly);
//!   float -> int truncates toward zero; anything -> bool is `!= 0` (NaN is true); bool -> number is 0/1;
//! - float -> int where the truncated value does not fit the target (NaN, infinities, out of range):
//!   numpy leaves this undefined (it warns "invalid value encountered in cast", and the result varies
//!   with the CPU and even with the array length, SIMD body versus scalar tail). libzarr gives what
//!   numpy's main cast loops give on x86-64 (AVX2/AVX-512 builds, checked against numpy 2.4): for
//!   int8/int16/int32/uint8/uint16 targets the value goes through a 32-bit conversion whose failure
//!   value is `i32::MIN`, then wraps; int64 through a 64-bit one (failure `i64::MIN`); uint32 converts
//!   values >= 2^31 as `conv32(x - 2^31) ^ 2^31` and the rest through the 32-bit conversion; uint64
//!   likewise with 2^63 and the 64-bit conversion. (numpy's scalar tail and its float16 loops differ
//!   again for some of these.) In-range values are always exact.
//! - python scalars in arithmetic (NEP 50): a python int used with an integer array must fit the
//!   array's type (numpy raises `OverflowError`); a python float with an integer array makes the
//!   operation `float64`; any python number with a float array is converted to the array's type.

use super::V2Elem;
use crate::dtype::{DataType, Endian};
use half::f16;

/// A numeric element kind (numpy dtype kinds `b`, `i`, `u`, `f`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `bool`
    Bool,
    /// `int8`
    I8,
    /// `int16`
    I16,
    /// `int32`
    I32,
    /// `int64`
    I64,
    /// `uint8`
    U8,
    /// `uint16`
    U16,
    /// `uint32`
    U32,
    /// `uint64`
    U64,
    /// `float16`
    F16,
    /// `float32`
    F32,
    /// `float64`
    F64,
}

impl Kind {
    /// The data type of this kind.
    pub fn data_type(self) -> DataType {
        match self {
            Kind::Bool => DataType::Bool,
            Kind::I8 => DataType::Int8,
            Kind::I16 => DataType::Int16,
            Kind::I32 => DataType::Int32,
            Kind::I64 => DataType::Int64,
            Kind::U8 => DataType::UInt8,
            Kind::U16 => DataType::UInt16,
            Kind::U32 => DataType::UInt32,
            Kind::U64 => DataType::UInt64,
            Kind::F16 => DataType::Float16,
            Kind::F32 => DataType::Float32,
            Kind::F64 => DataType::Float64,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Kind::Bool | Kind::I8 | Kind::U8 => 1,
            Kind::I16 | Kind::U16 | Kind::F16 => 2,
            Kind::I32 | Kind::U32 | Kind::F32 => 4,
            Kind::I64 | Kind::U64 | Kind::F64 => 8,
        }
    }

    /// Whether this is a float kind.
    pub fn is_float(self) -> bool {
        matches!(self, Kind::F16 | Kind::F32 | Kind::F64)
    }

    /// Whether this is an integer kind (signed or unsigned; not bool).
    pub fn is_int(self) -> bool {
        !self.is_float() && self != Kind::Bool
    }

    /// Whether this is a signed integer kind.
    pub fn is_signed_int(self) -> bool {
        matches!(self, Kind::I8 | Kind::I16 | Kind::I32 | Kind::I64)
    }

    /// The range of an integer kind.
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            Kind::I8 => (i8::MIN.into(), i8::MAX.into()),
            Kind::I16 => (i16::MIN.into(), i16::MAX.into()),
            Kind::I32 => (i32::MIN.into(), i32::MAX.into()),
            Kind::I64 => (i64::MIN.into(), i64::MAX.into()),
            Kind::U8 => (0, u8::MAX.into()),
            Kind::U16 => (0, u16::MAX.into()),
            Kind::U32 => (0, u32::MAX.into()),
            Kind::U64 => (0, u64::MAX.into()),
            _ => return None,
        })
    }

    /// numpy's name of the kind.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bool => "bool",
            Kind::I8 => "int8",
            Kind::I16 => "int16",
            Kind::I32 => "int32",
            Kind::I64 => "int64",
            Kind::U8 => "uint8",
            Kind::U16 => "uint16",
            Kind::U32 => "uint32",
            Kind::U64 => "uint64",
            Kind::F16 => "float16",
            Kind::F32 => "float32",
            Kind::F64 => "float64",
        }
    }

    fn signed(size: usize) -> Kind {
        match size {
            1 => Kind::I8,
            2 => Kind::I16,
            4 => Kind::I32,
            _ => Kind::I64,
        }
    }

    fn float(size: usize) -> Kind {
        match size {
            2 => Kind::F16,
            4 => Kind::F32,
            _ => Kind::F64,
        }
    }

    /// `numpy.promote_types(a, b)`.
    pub fn promote(a: Kind, b: Kind) -> Kind {
        use Kind::*;
        if a == b {
            return a;
        }
        match (a, b) {
            (Bool, k) | (k, Bool) => k,
            (x, y) if x.is_float() && y.is_float() => Kind::float(x.size().max(y.size())),
            (f, i) | (i, f) if f.is_float() => {
                // the smallest float holding every value of the integer type, then the wider float
                let need = match i.size() {
                    1 => 2,
                    2 => 4,
                    _ => 8,
                };
                Kind::float(need.max(f.size()))
            }
            (x, y) if x.is_signed_int() == y.is_signed_int() => if x.size() >= y.size() { x } else { y },
            (s, u) | (u, s) if s.is_signed_int() => {
                if s.size() > u.size() {
                    s
                } else if u.size() < 8 {
                    Kind::signed(2 * u.size())
                } else {
                    F64
                }
            }
            _ => unreachable!("all kind pairs are covered"),
        }
    }
}

/// A numeric element type with its stored byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumType {
    /// The kind.
    pub kind: Kind,
    /// Whether elements are stored big-endian (irrelevant for 1-byte kinds).
    pub big: bool,
}

impl NumType {
    /// The numeric type of an element description (`None` for complex, raw, structured types).
    pub fn from_elem(e: &V2Elem) -> Option<NumType> {
        let kind = crate::dtype::dispatch::with_data_type!(&e.data_type, numeric_bool, T => <T as Num>::KIND, _ => return None);
        Some(NumType { kind, big: e.byte_order == Some(Endian::Big) && kind.size() > 1 })
    }

    /// The element description of this type.
    pub fn elem(self) -> V2Elem {
        let data_type = self.kind.data_type();
        let byte_order = (self.kind.size() > 1).then_some(if self.big { Endian::Big } else { Endian::Little });
        V2Elem { data_type, byte_order }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        self.kind.size()
    }

    /// The numpy dtype string (e.g. `"<i4"`, `"|u1"`).
    pub fn typestr(self) -> String {
        let e = self.elem();
        crate::dtype::v2::typestr(&e.data_type, e.byte_order.unwrap_or(Endian::Little)).unwrap_or_default()
    }
}

/// A number in canonical form: an exact integer, or a float (every float kind widens exactly to f64).
/// Also the form of python scalars (`int` / `float`) from configurations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Canon {
    /// An integer (bools are 0/1).
    Int(i128),
    /// A float.
    Float(f64),
}

impl Canon {
    /// As a float (python's `float(x)` for ints: round to nearest).
    pub fn to_f64(self) -> f64 {
        match self {
            Canon::Int(i) => i as f64,
            Canon::Float(f) => f,
        }
    }
}

pub use crate::dtype::f16_from_f64;

/// float -> int32 as x86-64 `cvttsd2si` (32-bit) does: truncation, `i32::MIN` when it does not fit.
fn cvt32(f: f64) -> i32 {
    if f > -2147483649.0 && f < 2147483648.0 {
        f as i32
    } else {
        i32::MIN
    }
}

/// float -> int64 as x86-64 `cvttsd2si` (64-bit) does: truncation, `i64::MIN` when it does not fit.
fn cvt64(f: f64) -> i64 {
    if (-9223372036854775808.0..9223372036854775808.0).contains(&f) {
        f as i64
    } else {
        i64::MIN
    }
}

/// An element type the filters compute with.
pub trait Num: Copy + PartialEq + Send + Sync + 'static {
    /// Its kind.
    const KIND: Kind;
    /// Reads one element from `b` (exactly its size).
    fn load(b: &[u8], big: bool) -> Self;
    /// Writes one element into `b` (exactly its size).
    fn store(self, b: &mut [u8], big: bool);
    /// The exact value.
    fn canon(self) -> Canon;
    /// numpy's cast of `c` to this type (see the module documentation).
    fn from_canon(c: Canon) -> Self;
    /// `self + o` in this type.
    fn add(self, o: Self) -> Self;
    /// `self - o` in this type.
    fn sub(self, o: Self) -> Self;
    /// `self * o` in this type.
    fn mul(self, o: Self) -> Self;
    /// `self / o` in this type (only used for floats).
    fn div(self, o: Self) -> Self;
    /// `numpy.rint` (identity for integers).
    fn rint(self) -> Self;
    /// Wraps a vector as an [`Arr`].
    fn wrap(v: Vec<Self>) -> Arr;
}

macro_rules! int_num {
    ($t:ty, $kind:ident, $cvt:expr) => {
        impl Num for $t {
            const KIND: Kind = Kind::$kind;
            #[inline]
            fn load(b: &[u8], big: bool) -> Self {
                let a = b.try_into().unwrap();
                if big { <$t>::from_be_bytes(a) } else { <$t>::from_le_bytes(a) }
            }
            #[inline]
            fn store(self, b: &mut [u8], big: bool) {
                b.copy_from_slice(&if big { self.to_be_bytes() } else { self.to_le_bytes() });
            }
            #[inline]
            fn canon(self) -> Canon {
                Canon::Int(self as i128)
            }
            #[inline]
            fn from_canon(c: Canon) -> Self {
                match c {
                    Canon::Int(i) => i as $t,
                    Canon::Float(f) => $cvt(f),
                }
            }
            #[inline]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline]
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline]
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            #[inline]
            fn div(self, o: Self) -> Self {
                self.checked_div(o).unwrap_or(0)
            }
            #[inline]
            fn rint(self) -> Self {
                self
            }
            fn wrap(v: Vec<Self>) -> Arr {
                Arr::$kind(v)
            }
        }
    };
}

int_num!(i8, I8, |f| cvt32(f) as i8);
int_num!(i16, I16, |f| cvt32(f) as i16);
int_num!(i32, I32, cvt32);
int_num!(i64, I64, cvt64);
int_num!(u8, U8, |f| cvt32(f) as u8);
int_num!(u16, U16, |f| cvt32(f) as u16);
int_num!(u32, U32, |f: f64| if f >= 2147483648.0 {
    (cvt32(f - 2147483648.0) as u32) ^ (1 << 31)
} else {
    cvt32(f) as u32
});
int_num!(u64, U64, |f: f64| if f >= 9223372036854775808.0 {
    (cvt64(f - 9223372036854775808.0) as u64) ^ (1 << 63)
} else {
    cvt64(f) as u64
});

impl Num for bool {
    const KIND: Kind = Kind::Bool;
    #[inline]
    fn load(b: &[u8], _big: bool) -> Self {
        b[0] != 0
    }
    #[inline]
    fn store(self, b: &mut [u8], _big: bool) {
        b[0] = self as u8;
    }
    #[inline]
    fn canon(self) -> Canon {
        Canon::Int(self as i128)
    }
    #[inline]
    fn from_canon(c: Canon) -> Self {
        match c {
            Canon::Int(i) => i != 0,
            Canon::Float(f) => f != 0.0,
        }
    }
    // numpy's bool ufunc loops: add = or, multiply = and (subtract and divide are refused by numpy;
    // no filter computes with bools)
    fn add(self, o: Self) -> Self {
        self | o
    }
    fn sub(self, o: Self) -> Self {
        self ^ o
    }
    fn mul(self, o: Self) -> Self {
        self & o
    }
    fn div(self, _o: Self) -> Self {
        self
    }
    fn rint(self) -> Self {
        self
    }
    fn wrap(v: Vec<Self>) -> Arr {
        Arr::Bool(v)
    }
}

macro_rules! float_num {
    ($t:ty, $kind:ident, $bits:ty) => {
        impl Num for $t {
            const KIND: Kind = Kind::$kind;
            #[inline]
            fn load(b: &[u8], big: bool) -> Self {
                let a = b.try_into().unwrap();
                <$t>::from_bits(if big { <$bits>::from_be_bytes(a) } else { <$bits>::from_le_bytes(a) })
            }
            #[inline]
            fn store(self, b: &mut [u8], big: bool) {
                let x = self.to_bits();
                b.copy_from_slice(&if big { x.to_be_bytes() } else { x.to_le_bytes() });
            }
            #[inline]
            fn canon(self) -> Canon {
                Canon::Float(self as f64)
            }
            #[inline]
            fn from_canon(c: Canon) -> Self {
                match c {
                    Canon::Int(i) => i as $t,
                    Canon::Float(f) => f as $t,
                }
            }
            #[inline]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline]
            fn div(self, o: Self) -> Self {
                self / o
            }
            #[inline]
            fn rint(self) -> Self {
                self.round_ties_even()
            }
            fn wrap(v: Vec<Self>) -> Arr {
                Arr::$kind(v)
            }
        }
    };
}

float_num!(f32, F32, u32);
float_num!(f64, F64, u64);

/// One float16 operation: computed in float32 (exact for these inputs' products, sums, quotients up
/// to one rounding) and rounded to float16, as numpy's half loops do.
#[inline]
fn h(x: f32) -> f16 {
    f16_from_f64(x as f64)
}

impl Num for f16 {
    const KIND: Kind = Kind::F16;
    #[inline]
    fn load(b: &[u8], big: bool) -> Self {
        let a = [b[0], b[1]];
        f16::from_bits(if big { u16::from_be_bytes(a) } else { u16::from_le_bytes(a) })
    }
    #[inline]
    fn store(self, b: &mut [u8], big: bool) {
        let x = self.to_bits();
        b.copy_from_slice(&if big { x.to_be_bytes() } else { x.to_le_bytes() });
    }
    #[inline]
    fn canon(self) -> Canon {
        Canon::Float(self.to_f64())
    }
    #[inline]
    fn from_canon(c: Canon) -> Self {
        // int -> float16 goes through float32 in numpy: exact below 2^24, and larger values are
        // infinite in float16 either way
        f16_from_f64(match c {
            Canon::Int(i) => i as f32 as f64,
            Canon::Float(f) => f,
        })
    }
    #[inline]
    fn add(self, o: Self) -> Self {
        h(self.to_f32() + o.to_f32())
    }
    #[inline]
    fn sub(self, o: Self) -> Self {
        h(self.to_f32() - o.to_f32())
    }
    #[inline]
    fn mul(self, o: Self) -> Self {
        h(self.to_f32() * o.to_f32())
    }
    #[inline]
    fn div(self, o: Self) -> Self {
        h(self.to_f32() / o.to_f32())
    }
    #[inline]
    fn rint(self) -> Self {
        h(self.to_f32().round_ties_even())
    }
    fn wrap(v: Vec<Self>) -> Arr {
        Arr::F16(v)
    }
}

/// A one-dimensional numpy-like array of one numeric kind (native values).
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum Arr {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F16(Vec<f16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Runs `$e` with `$v` bound to the vector inside an [`Arr`] (by the same binding mode as `$a`).
macro_rules! with_arr {
    ($a:expr, $v:ident => $e:expr) => {
        match $a {
            Arr::Bool($v) => $e,
            Arr::I8($v) => $e,
            Arr::I16($v) => $e,
            Arr::I32($v) => $e,
            Arr::I64($v) => $e,
            Arr::U8($v) => $e,
            Arr::U16($v) => $e,
            Arr::U32($v) => $e,
            Arr::U64($v) => $e,
            Arr::F16($v) => $e,
            Arr::F32($v) => $e,
            Arr::F64($v) => $e,
        }
    };
}

/// Runs `$e` with the type alias `$t` set to the Rust type of kind `$k` (through the one typed
/// dispatch, [`crate::dtype::dispatch`]).
macro_rules! with_kind {
    ($k:expr, $t:ident => $e:expr) => {
        crate::dtype::dispatch::with_data_type!($k.data_type(), numeric_bool, $t => $e, _ => unreachable!("every kind is a numeric or bool data type"))
    };
}

fn load_vec<T: Num>(bytes: &[u8], big: bool) -> Vec<T> {
    let n = std::mem::size_of::<T>();
    bytes.chunks_exact(n).map(|c| T::load(c, big)).collect()
}

fn store_slice<T: Num>(v: &[T], out: &mut [u8], big: bool) {
    let n = std::mem::size_of::<T>();
    for (x, c) in v.iter().zip(out.chunks_exact_mut(n)) {
        x.store(c, big);
    }
}

fn cast_vec<S: Num, T: Num>(v: &[S]) -> Vec<T> {
    v.iter().map(|&x| T::from_canon(x.canon())).collect()
}

/// A binary operation with a scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `a + s`
    Add,
    /// `a - s`
    Sub,
    /// `a * s`
    Mul,
    /// `a / s` (numpy `true_divide`)
    Div,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
        }
    }
}

fn op_scalar<T: Num>(v: &[T], op: Op, s: T) -> Arr {
    T::wrap(match op {
        Op::Add => v.iter().map(|&x| x.add(s)).collect(),
        Op::Sub => v.iter().map(|&x| x.sub(s)).collect(),
        Op::Mul => v.iter().map(|&x| x.mul(s)).collect(),
        Op::Div => v.iter().map(|&x| x.div(s)).collect(),
    })
}

impl Arr {
    /// Reads `bytes` (a whole number of elements of `t`).
    pub fn load(bytes: &[u8], t: NumType) -> Arr {
        debug_assert_eq!(bytes.len() % t.size(), 0);
        with_kind!(t.kind, T => T::wrap(load_vec::<T>(bytes, t.big)))
    }

    /// The kind of the elements.
    pub fn kind(&self) -> Kind {
        fn k<T: Num>(_: &[T]) -> Kind {
            T::KIND
        }
        with_arr!(self, v => k(v))
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        with_arr!(self, v => v.len())
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` in canonical form.
    pub fn get(&self, i: usize) -> Canon {
        with_arr!(self, v => v[i].canon())
    }

    /// Writes the elements into `out` (exactly `len * size` bytes) in byte order `big`.
    pub fn store_into(&self, out: &mut [u8], big: bool) {
        debug_assert_eq!(out.len(), self.len() * self.kind().size());
        with_arr!(self, v => store_slice(v, out, big))
    }

    /// The elements as bytes in byte order `big`.
    pub fn to_bytes(&self, big: bool) -> Vec<u8> {
        let mut out = vec![0; self.len() * self.kind().size()];
        self.store_into(&mut out, big);
        out
    }

    /// numpy `astype(to)` (unsafe casting).
    pub fn cast(self, to: Kind) -> Arr {
        if self.kind() == to {
            return self;
        }
        with_arr!(&self, v => with_kind!(to, T => T::wrap(cast_vec::<_, T>(v))))
    }

    /// `numpy.around(a)` (decimals 0): `rint` for floats (ties to even), the identity for integers.
    pub fn rint(self) -> Arr {
        if !self.kind().is_float() {
            return self;
        }
        fn r<T: Num>(v: Vec<T>) -> Arr {
            T::wrap(v.into_iter().map(T::rint).collect())
        }
        with_arr!(self, v => r(v))
    }

    /// The first element followed by the differences of neighbours (`numpy.diff`), in this type.
    pub fn first_and_diff(&self) -> Arr {
        fn d<T: Num>(v: &[T]) -> Arr {
            let mut out = Vec::with_capacity(v.len());
            if let Some(&first) = v.first() {
                out.push(first);
                out.extend(v.windows(2).map(|w| w[1].sub(w[0])));
            }
            T::wrap(out)
        }
        with_arr!(self, v => d(v))
    }

    /// Running sums (`numpy.cumsum`, sequential), in this type.
    pub fn cumsum(self) -> Arr {
        fn c<T: Num>(mut v: Vec<T>) -> Arr {
            for i in 1..v.len() {
                v[i] = v[i - 1].add(v[i]);
            }
            T::wrap(v)
        }
        with_arr!(self, v => c(v))
    }

    /// `a <op> s` with python scalar `s`, typed by numpy's NEP 50 rules (see the module documentation).
    /// Fails where numpy raises: a python int that does not fit an integer array's type.
    pub fn op_py(self, op: Op, s: Canon) -> std::result::Result<Arr, String> {
        let k = self.kind();
        let floaty = matches!(s, Canon::Float(_)) || op == Op::Div;
        if !k.is_float() && floaty {
            // integer (or bool) array with a python float, or true division: float64
            return self.cast(Kind::F64).op_py(op, s);
        }
        let s = if k.is_float() {
            Canon::Float(s.to_f64())
        } else {
            let Canon::Int(i) = s else { unreachable!() };
            match k.int_range() {
                Some((lo, hi)) if i < lo || i > hi => {
                    return Err(format!(
                        "python integer {i} is out of bounds for {} in `{} {} {i}` (numpy raises OverflowError)",
                        k.name(),
                        k.name(),
                        op.symbol()
                    ))
                }
                Some(_) => s,
                None => return Err(format!("numpy does not compute `bool {} int` in bool", op.symbol())),
            }
        };
        Ok(with_arr!(self, v => op_scalar(&v, op, Num::from_canon(s))))
    }

    /// `scale * a` then `rint`, then `/ scale`, all in this (float) type (numcodecs' quantize).
    pub fn quantize(self, scale: f64) -> Arr {
        fn q<T: Num>(v: Vec<T>, scale: f64) -> Arr {
            let s = T::from_canon(Canon::Float(scale));
            T::wrap(v.into_iter().map(|x| s.mul(x).rint().div(s)).collect())
        }
        with_arr!(self, v => q(v, scale))
    }
}

/// Whether numpy's scalar assignment `arr[i] = value` (a numpy scalar `value`, an array of `to`)
/// succeeds: signed integer targets convert through a python int and reject what does not fit
/// (`OverflowError`) and NaN or infinities (`ValueError`/`OverflowError`); other targets cast.
pub fn scalar_assign_ok(value: Canon, to: Kind) -> bool {
    let Some((lo, hi)) = to.int_range().filter(|_| to.is_signed_int()) else { return true };
    let i = match value {
        Canon::Int(i) => i,
        Canon::Float(f) if f.is_finite() => {
            let t = f.trunc();
            if t.abs() > 1e30 {
                return false;
            }
            t as i128
        }
        Canon::Float(_) => return false,
    };
    lo <= i && i <= hi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion() {
        use Kind::*;
        let cases = [
            (I8, I16, I16),
            (U8, I8, I16),
            (U16, I16, I32),
            (U32, I64, I64),
            (U64, I64, F64),
            (U64, I8, F64),
            (I8, F16, F16),
            (U8, F16, F16),
            (I16, F16, F32),
            (I32, F32, F64),
            (I64, F16, F64),
            (F16, F32, F32),
            (Bool, I8, I8),
            (Bool, F16, F16),
            (U8, U32, U32),
        ];
        for (a, b, r) in cases {
            assert_eq!(Kind::promote(a, b), r, "{a:?} {b:?}");
            assert_eq!(Kind::promote(b, a), r, "{b:?} {a:?}");
        }
    }

    #[test]
    fn f64_to_f16_rounding() {
        // exhaustive against a reference: every f16 value, midpoints and their neighbours
        for bits in 0u16..0x7c00 {
            let v = f16::from_bits(bits).to_f64();
            assert_eq!(f16_from_f64(v).to_bits(), bits);
            assert_eq!(f16_from_f64(-v).to_bits(), bits | 0x8000);
            if bits == 0x7bff {
                break;
            }
            let next = f16::from_bits(bits + 1).to_f64();
            let mid = (v + next) / 2.0;
            let even = if bits & 1 == 0 { bits } else { bits + 1 };
            assert_eq!(f16_from_f64(mid).to_bits(), even, "tie {bits:#x}");
            assert_eq!(f16_from_f64(mid.next_up()).to_bits(), bits + 1, "above {bits:#x}");
            assert_eq!(f16_from_f64(mid.next_down()).to_bits(), bits, "below {bits:#x}");
        }
        // a tie in float32 terms that is not a tie in float64 (double rounding would go to even)
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f16_from_f64(x).to_bits(), 0x3c01);
        assert_eq!(f16_from_f64(65519.0).to_bits(), 0x7bff);
        assert_eq!(f16_from_f64(65520.0).to_bits(), 0x7c00);
        assert_eq!(f16_from_f64(f64::INFINITY).to_bits(), 0x7c00);
        assert_eq!(f16_from_f64(f64::NAN).to_bits() & 0x7e00, 0x7e00);
        assert_eq!(f16_from_f64(2f64.powi(-25)).to_bits(), 0);
        assert_eq!(f16_from_f64(2f64.powi(-25).next_up()).to_bits(), 1);
        assert_eq!(f16_from_f64(1e-300).to_bits(), 0);
        assert_eq!(f16_from_f64(-0.0).to_bits(), 0x8000);
    }

    #[test]
    fn casts() {
        let f = Arr::F64(vec![f64::NAN, 1e10, -1.5, 300.7, -300.7, 40000.5, 2f64.powi(63), -1e10, 2f64.powi(64)]);
        assert_eq!(f.clone().cast(Kind::I8), Arr::I8(vec![0, 0, -1, 44, -44, 64, 0, 0, 0]));
        assert_eq!(f.clone().cast(Kind::U8), Arr::U8(vec![0, 0, 255, 44, 212, 64, 0, 0, 0]));
        assert_eq!(f.clone().cast(Kind::I16), Arr::I16(vec![0, 0, -1, 300, -300, -25536, 0, 0, 0]));
        let m = i64::MIN;
        assert_eq!(f.clone().cast(Kind::I64), Arr::I64(vec![m, 10000000000, -1, 300, -300, 40000, m, -10000000000, m]));
        let big = 1u64 << 63;
        assert_eq!(
            f.clone().cast(Kind::U64),
            Arr::U64(vec![big, 10000000000, u64::MAX, 300, 0u64.wrapping_sub(300), 40000, big, 0u64.wrapping_sub(10000000000), 0])
        );
        assert_eq!(f.clone().cast(Kind::Bool), Arr::Bool(vec![true, true, true, true, true, true, true, true, true]));
        assert_eq!(Arr::I32(vec![300, -1, 70000]).cast(Kind::U8), Arr::U8(vec![44, 255, 112]));
        assert_eq!(Arr::I64(vec![(1 << 60) + (1 << 36) + 1]).cast(Kind::F32), Arr::F32(vec![((1u64 << 60) + (1 << 37)) as f32]));
        assert_eq!(Arr::I32(vec![65519, 65520, 2049]).cast(Kind::F16), Arr::F16(vec![f16::from_bits(0x7bff), f16::INFINITY, f16::from_f32(2048.0)]));
        assert_eq!(Arr::Bool(vec![true, false]).cast(Kind::F32), Arr::F32(vec![1.0, 0.0]));
    }

    #[test]
    fn scalar_ops() {
        let a = Arr::I16(vec![3, -32768]);
        assert_eq!(a.clone().op_py(Op::Sub, Canon::Int(10)).unwrap(), Arr::I16(vec![-7, 32758]));
        assert!(a.clone().op_py(Op::Sub, Canon::Int(40000)).is_err());
        assert_eq!(a.clone().op_py(Op::Sub, Canon::Float(0.5)).unwrap(), Arr::F64(vec![2.5, -32768.5]));
        assert_eq!(a.op_py(Op::Div, Canon::Int(2)).unwrap(), Arr::F64(vec![1.5, -16384.0]));
        assert!(Arr::U8(vec![1]).op_py(Op::Sub, Canon::Int(-3)).is_err());
        let f = Arr::F32(vec![0.1]);
        assert_eq!(f.op_py(Op::Mul, Canon::Float(0.1)).unwrap(), Arr::F32(vec![0.1f32 * 0.1f32]));
        assert!(scalar_assign_ok(Canon::Int(-5), Kind::U8));
        assert!(!scalar_assign_ok(Canon::Int(300), Kind::I8));
        assert!(scalar_assign_ok(Canon::Float(-128.9), Kind::I8));
        assert!(!scalar_assign_ok(Canon::Float(-129.0), Kind::I8));
        assert!(!scalar_assign_ok(Canon::Float(f64::NAN), Kind::I64));
        assert!(scalar_assign_ok(Canon::Float(f64::NAN), Kind::U16));
    }

    /// Speed probe, run by hand under callgrind (`--ignored numpy::tests::round_trip_probe`): a round
    /// trip of 1 Mi elements through each numcodecs filter that computes with this model.
    #[test]
    #[ignore]
    fn round_trip_probe() {
        use crate::codec::filter::test_filter;
        use serde_json::json;
        let n = 1 << 20;
        let f8: Vec<u8> = (0..n).flat_map(|i| (1000.0 + (i % 977) as f64 * 0.37).to_le_bytes()).collect();
        let i4: Vec<u8> = (0..n).flat_map(|i| ((i as i32 / 3) ^ 0x55).to_le_bytes()).collect();
        let cases = [
            (json!({"id": "delta", "dtype": "<i4", "astype": "<i2"}), "<i4", &i4),
            (json!({"id": "delta", "dtype": "<f8"}), "<f8", &f8),
            (json!({"id": "fixedscaleoffset", "offset": 1000, "scale": 10, "dtype": "<f8", "astype": "<u2"}), "<f8", &f8),
            (json!({"id": "quantize", "digits": 3, "dtype": "<f8", "astype": "<f4"}), "<f8", &f8),
            (json!({"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}), "<f8", &f8),
            (json!({"id": "astype", "encode_dtype": ">i8", "decode_dtype": "<i4"}), "<i4", &i4),
        ];
        let mut sum = 0u64;
        for (cfg, input, data) in cases {
            let c = test_filter(cfg, input);
            let e = c.encode(data).unwrap();
            let mut out = vec![0; data.len()];
            c.decode_into(&e, &mut out).unwrap();
            sum = sum.wrapping_add(out.iter().map(|&b| b as u64).sum::<u64>());
        }
        assert_ne!(sum, 0);
    }
}
