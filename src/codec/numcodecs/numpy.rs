//! The small numpy model the numcodecs filters share: arrays of the numeric and bool data types (their
//! Rust element types come from `with_data_type!`, the one typed dispatch), numpy type promotion, numpy
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
use crate::dtype::dispatch::with_data_type;
use crate::dtype::{DataType, Endian};
use half::f16;
use std::any::Any;

/// Whether `t` is a numeric or bool type this model computes with (`numpy` kinds `b`, `i`, `u`, `f`).
pub fn is_num(t: &DataType) -> bool {
    with_data_type!(t, numeric_bool, T => true, _ => false)
}

/// Whether `t` is a signed integer type.
pub fn is_signed_int(t: &DataType) -> bool {
    int_range(t).is_some_and(|(lo, _)| lo < 0)
}

/// The range of an integer type.
pub fn int_range(t: &DataType) -> Option<(i128, i128)> {
    with_data_type!(t, [Int8 Int16 Int32 Int64 UInt8 UInt16 UInt32 UInt64], T => Some((T::MIN as i128, T::MAX as i128)), _ => None)
}

/// The signed integer type of `size` bytes (1, 2, 4, otherwise 8).
fn signed(size: usize) -> DataType {
    match size {
        1 => DataType::Int8,
        2 => DataType::Int16,
        4 => DataType::Int32,
        _ => DataType::Int64,
    }
}

/// The float type of `size` bytes (2, 4, otherwise 8).
fn float(size: usize) -> DataType {
    match size {
        2 => DataType::Float16,
        4 => DataType::Float32,
        _ => DataType::Float64,
    }
}

/// `numpy.promote_types(a, b)` for numeric or bool types `a` and `b` (see [`is_num`]).
pub fn promote(a: &DataType, b: &DataType) -> DataType {
    debug_assert!(is_num(a) && is_num(b), "{a} {b}");
    if a == b {
        return a.clone();
    }
    match (a, b) {
        (DataType::Bool, k) | (k, DataType::Bool) => k.clone(),
        (x, y) if x.is_float() && y.is_float() => float(x.size().max(y.size())),
        (f, i) | (i, f) if f.is_float() => {
            // the smallest float holding every value of the integer type, then the wider float
            let need = match i.size() {
                1 => 2,
                2 => 4,
                _ => 8,
            };
            float(need.max(f.size()))
        }
        (x, y) if is_signed_int(x) == is_signed_int(y) => if x.size() >= y.size() { x.clone() } else { y.clone() },
        (s, u) | (u, s) if is_signed_int(s) => {
            if s.size() > u.size() {
                s.clone()
            } else if u.size() < 8 {
                signed(2 * u.size())
            } else {
                DataType::Float64
            }
        }
        _ => unreachable!("all pairs of numeric types are covered"),
    }
}

/// A numeric element type with its stored byte order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumType {
    /// The data type: one of the numeric or bool types (see [`is_num`]).
    pub data_type: DataType,
    /// Whether elements are stored big-endian (irrelevant for 1-byte types).
    pub big: bool,
}

impl NumType {
    /// The numeric type of an element description (`None` for complex, raw, structured types).
    pub fn from_elem(e: &V2Elem) -> Option<NumType> {
        if !is_num(&e.data_type) {
            return None;
        }
        let big = e.byte_order == Some(Endian::Big) && e.data_type.size() > 1;
        Some(NumType { data_type: e.data_type.clone(), big })
    }

    /// The element description of this type.
    pub fn elem(&self) -> V2Elem {
        let byte_order = (self.size() > 1).then_some(if self.big { Endian::Big } else { Endian::Little });
        V2Elem { data_type: self.data_type.clone(), byte_order }
    }

    /// Bytes per element.
    pub fn size(&self) -> usize {
        self.data_type.size()
    }

    /// The numpy dtype string (e.g. `"<i4"`, `"|u1"`).
    pub fn typestr(&self) -> String {
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
pub trait Num: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static {
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
}

// The arithmetic of each element type (numpy's loops), not a dispatch: which type a data type
// uses is decided by `with_data_type!` alone.
macro_rules! int_num {
    ($t:ty, $cvt:expr) => {
        impl Num for $t {
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
        }
    };
}

int_num!(i8, |f| cvt32(f) as i8);
int_num!(i16, |f| cvt32(f) as i16);
int_num!(i32, cvt32);
int_num!(i64, cvt64);
int_num!(u8, |f| cvt32(f) as u8);
int_num!(u16, |f| cvt32(f) as u16);
int_num!(u32, |f: f64| if f >= 2147483648.0 {
    (cvt32(f - 2147483648.0) as u32) ^ (1 << 31)
} else {
    cvt32(f) as u32
});
int_num!(u64, |f: f64| if f >= 9223372036854775808.0 {
    (cvt64(f - 9223372036854775808.0) as u64) ^ (1 << 63)
} else {
    cvt64(f) as u64
});

impl Num for bool {
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
}

macro_rules! float_num {
    ($t:ty, $bits:ty) => {
        impl Num for $t {
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
        }
    };
}

float_num!(f32, u32);
float_num!(f64, u64);

/// One float16 operation: computed in float32 (exact for these inputs' products, sums, quotients up
/// to one rounding) and rounded to float16, as numpy's half loops do.
#[inline]
fn h(x: f32) -> f16 {
    f16_from_f64(x as f64)
}

impl Num for f16 {
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
}

/// A one-dimensional numpy-like array: native values of one numeric or bool data type, held as the
/// `Vec<T>` of the Rust element type that [`with_data_type!`] gives that data type.
pub struct Arr {
    data_type: DataType,
    values: Box<dyn Any + Send + Sync>,
}

/// Runs `$e` with the type alias `$t` set to the element type of array `$a` and `$v` bound to its
/// values: `&Vec<$t>` for `ref` (`$a` a reference), `Vec<$t>` for `move` (`$a` consumed).
macro_rules! with_values {
    (ref $a:expr, $t:ident, $v:ident => $e:expr) => {{
        let a: &Arr = $a;
        with_data_type!(&a.data_type, numeric_bool, $t => {
            let $v: &Vec<$t> = a.values.downcast_ref().expect("an array holds values of its data type");
            $e
        }, _ => unreachable!("an array has a numeric or bool data type"))
    }};
    (move $a:expr, $t:ident, $v:ident => $e:expr) => {{
        let a: Arr = $a;
        with_data_type!(&a.data_type, numeric_bool, $t => {
            let $v: Vec<$t> = *a.values.downcast().expect("an array holds values of its data type");
            $e
        }, _ => unreachable!("an array has a numeric or bool data type"))
    }};
}

impl Clone for Arr {
    fn clone(&self) -> Arr {
        with_values!(ref self, T, v => Arr::new(self.data_type.clone(), v.clone()))
    }
}

impl PartialEq for Arr {
    fn eq(&self, o: &Arr) -> bool {
        self.data_type == o.data_type && with_values!(ref self, T, v => o.values.downcast_ref::<Vec<T>>() == Some(v))
    }
}

impl std::fmt::Debug for Arr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        with_values!(ref self, T, v => f.debug_struct("Arr").field("data_type", &self.data_type).field("values", v).finish())
    }
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

fn op_scalar<T: Num>(v: &[T], op: Op, s: T) -> Vec<T> {
    match op {
        Op::Add => v.iter().map(|&x| x.add(s)).collect(),
        Op::Sub => v.iter().map(|&x| x.sub(s)).collect(),
        Op::Mul => v.iter().map(|&x| x.mul(s)).collect(),
        Op::Div => v.iter().map(|&x| x.div(s)).collect(),
    }
}

impl Arr {
    /// An array of `data_type` holding `values`. Panics unless `T` is the element type of
    /// `data_type` (a numeric or bool type).
    pub fn new<T: Num>(data_type: DataType, values: Vec<T>) -> Arr {
        let values: Box<dyn Any + Send + Sync> = Box::new(values);
        assert!(
            with_data_type!(&data_type, numeric_bool, U => values.is::<Vec<U>>(), _ => false),
            "{} values are not of data type {data_type}",
            std::any::type_name::<T>()
        );
        Arr { data_type, values }
    }

    /// Reads `bytes` (a whole number of elements of `t`).
    pub fn load(bytes: &[u8], t: &NumType) -> Arr {
        debug_assert_eq!(bytes.len() % t.size(), 0);
        with_data_type!(&t.data_type, numeric_bool, T => Arr::new(t.data_type.clone(), load_vec::<T>(bytes, t.big)), _ => unreachable!("a NumType is numeric or bool"))
    }

    /// The data type of the elements.
    pub fn data_type(&self) -> &DataType {
        &self.data_type
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        with_values!(ref self, T, v => v.len())
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` in canonical form.
    pub fn get(&self, i: usize) -> Canon {
        with_values!(ref self, T, v => v[i].canon())
    }

    /// Calls `f` with each element in canonical form, in order (one dispatch for the whole array).
    pub fn for_each(&self, mut f: impl FnMut(Canon)) {
        with_values!(ref self, T, v => v.iter().for_each(|x| f(x.canon())))
    }

    /// Writes the elements into `out` (exactly `len * size` bytes) in byte order `big`.
    pub fn store_into(&self, out: &mut [u8], big: bool) {
        debug_assert_eq!(out.len(), self.len() * self.data_type.size());
        with_values!(ref self, T, v => store_slice(v, out, big))
    }

    /// The elements as bytes in byte order `big`.
    pub fn to_bytes(&self, big: bool) -> Vec<u8> {
        let mut out = vec![0; self.len() * self.data_type.size()];
        self.store_into(&mut out, big);
        out
    }

    /// numpy `astype(to)` (unsafe casting); `to` is a numeric or bool type.
    pub fn cast(self, to: &DataType) -> Arr {
        if self.data_type == *to {
            return self;
        }
        with_values!(ref &self, S, v => with_data_type!(to, numeric_bool, T => Arr::new(to.clone(), cast_vec::<S, T>(v)), _ => unreachable!("cast to {to}, not a numeric or bool type")))
    }

    /// `numpy.around(a)` (decimals 0): `rint` for floats (ties to even), the identity for integers.
    pub fn rint(self) -> Arr {
        if !self.data_type.is_float() {
            return self;
        }
        let dt = self.data_type.clone();
        with_values!(move self, T, v => Arr::new(dt, v.into_iter().map(T::rint).collect::<Vec<T>>()))
    }

    /// The first element followed by the differences of neighbours (`numpy.diff`), in this type.
    pub fn first_and_diff(&self) -> Arr {
        fn d<T: Num>(v: &[T]) -> Vec<T> {
            let mut out = Vec::with_capacity(v.len());
            if let Some(&first) = v.first() {
                out.push(first);
                out.extend(v.windows(2).map(|w| w[1].sub(w[0])));
            }
            out
        }
        with_values!(ref self, T, v => Arr::new(self.data_type.clone(), d(v)))
    }

    /// Running sums (`numpy.cumsum`, sequential), in this type.
    pub fn cumsum(self) -> Arr {
        fn c<T: Num>(mut v: Vec<T>) -> Vec<T> {
            for i in 1..v.len() {
                v[i] = v[i - 1].add(v[i]);
            }
            v
        }
        let dt = self.data_type.clone();
        with_values!(move self, T, v => Arr::new(dt, c(v)))
    }

    /// `a <op> s` with python scalar `s`, typed by numpy's NEP 50 rules (see the module documentation).
    /// Fails where numpy raises: a python int that does not fit an integer array's type.
    pub fn op_py(self, op: Op, s: Canon) -> std::result::Result<Arr, String> {
        let k = self.data_type.clone();
        let floaty = matches!(s, Canon::Float(_)) || op == Op::Div;
        if !k.is_float() && floaty {
            // integer (or bool) array with a python float, or true division: float64
            return self.cast(&DataType::Float64).op_py(op, s);
        }
        let s = if k.is_float() {
            Canon::Float(s.to_f64())
        } else {
            let Canon::Int(i) = s else { unreachable!() };
            match int_range(&k) {
                Some((lo, hi)) if i < lo || i > hi => {
                    return Err(format!(
                        "python integer {i} is out of bounds for {k} in `{k} {} {i}` (numpy raises OverflowError)",
                        op.symbol()
                    ))
                }
                Some(_) => s,
                // a bool array with a python int computes in the default integer (NEP 50:
                // `np.array([True]) - 3` is int64)
                None => return self.cast(&DataType::Int64).op_py(op, s),
            }
        };
        Ok(with_values!(ref &self, T, v => Arr::new(k, op_scalar::<T>(v, op, T::from_canon(s)))))
    }

    /// `scale * a` then `rint`, then `/ scale`, all in this (float) type (numcodecs' quantize).
    pub fn quantize(self, scale: f64) -> Arr {
        fn q<T: Num>(v: Vec<T>, scale: f64) -> Vec<T> {
            let s = T::from_canon(Canon::Float(scale));
            v.into_iter().map(|x| s.mul(x).rint().div(s)).collect()
        }
        let dt = self.data_type.clone();
        with_values!(move self, T, v => Arr::new(dt, q(v, scale)))
    }
}

/// Whether numpy's scalar assignment `arr[i] = value` (a numpy scalar `value`, an array of `to`)
/// succeeds: signed integer targets convert through a python int and reject what does not fit
/// (`OverflowError`) and NaN or infinities (`ValueError`/`OverflowError`); other targets cast.
pub fn scalar_assign_ok(value: Canon, to: &DataType) -> bool {
    let Some((lo, hi)) = int_range(to).filter(|_| is_signed_int(to)) else { return true };
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

    /// An array of the named data type from values written as literals of its element type.
    macro_rules! arr {
        ($dt:ident, $v:expr) => {
            Arr::new(DataType::$dt, {
                let v: Vec<crate::dtype::dispatch::rust_type!($dt)> = $v;
                v
            })
        };
    }

    #[test]
    fn promotion() {
        use DataType::*;
        let cases = [
            (Int8, Int16, Int16),
            (UInt8, Int8, Int16),
            (UInt16, Int16, Int32),
            (UInt32, Int64, Int64),
            (UInt64, Int64, Float64),
            (UInt64, Int8, Float64),
            (Int8, Float16, Float16),
            (UInt8, Float16, Float16),
            (Int16, Float16, Float32),
            (Int32, Float32, Float64),
            (Int64, Float16, Float64),
            (Float16, Float32, Float32),
            (Bool, Int8, Int8),
            (Bool, Float16, Float16),
            (UInt8, UInt32, UInt32),
        ];
        for (a, b, r) in cases {
            assert_eq!(promote(&a, &b), r, "{a:?} {b:?}");
            assert_eq!(promote(&b, &a), r, "{b:?} {a:?}");
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
        let f = arr!(Float64, vec![f64::NAN, 1e10, -1.5, 300.7, -300.7, 40000.5, 2f64.powi(63), -1e10, 2f64.powi(64)]);
        assert_eq!(f.clone().cast(&DataType::Int8), arr!(Int8, vec![0, 0, -1, 44, -44, 64, 0, 0, 0]));
        assert_eq!(f.clone().cast(&DataType::UInt8), arr!(UInt8, vec![0, 0, 255, 44, 212, 64, 0, 0, 0]));
        assert_eq!(f.clone().cast(&DataType::Int16), arr!(Int16, vec![0, 0, -1, 300, -300, -25536, 0, 0, 0]));
        let m = i64::MIN;
        assert_eq!(f.clone().cast(&DataType::Int64), arr!(Int64, vec![m, 10000000000, -1, 300, -300, 40000, m, -10000000000, m]));
        let big = 1u64 << 63;
        assert_eq!(
            f.clone().cast(&DataType::UInt64),
            arr!(UInt64, vec![big, 10000000000, u64::MAX, 300, 0u64.wrapping_sub(300), 40000, big, 0u64.wrapping_sub(10000000000), 0])
        );
        assert_eq!(f.clone().cast(&DataType::Bool), arr!(Bool, vec![true, true, true, true, true, true, true, true, true]));
        assert_eq!(arr!(Int32, vec![300, -1, 70000]).cast(&DataType::UInt8), arr!(UInt8, vec![44, 255, 112]));
        assert_eq!(arr!(Int64, vec![(1 << 60) + (1 << 36) + 1]).cast(&DataType::Float32), arr!(Float32, vec![((1u64 << 60) + (1 << 37)) as f32]));
        assert_eq!(arr!(Int32, vec![65519, 65520, 2049]).cast(&DataType::Float16), arr!(Float16, vec![f16::from_bits(0x7bff), f16::INFINITY, f16::from_f32(2048.0)]));
        assert_eq!(arr!(Bool, vec![true, false]).cast(&DataType::Float32), arr!(Float32, vec![1.0, 0.0]));
    }

    #[test]
    fn scalar_ops() {
        let a = arr!(Int16, vec![3, -32768]);
        assert_eq!(a.clone().op_py(Op::Sub, Canon::Int(10)).unwrap(), arr!(Int16, vec![-7, 32758]));
        assert!(a.clone().op_py(Op::Sub, Canon::Int(40000)).is_err());
        assert_eq!(a.clone().op_py(Op::Sub, Canon::Float(0.5)).unwrap(), arr!(Float64, vec![2.5, -32768.5]));
        assert_eq!(a.op_py(Op::Div, Canon::Int(2)).unwrap(), arr!(Float64, vec![1.5, -16384.0]));
        assert!(arr!(UInt8, vec![1]).op_py(Op::Sub, Canon::Int(-3)).is_err());
        let f = arr!(Float32, vec![0.1]);
        assert_eq!(f.op_py(Op::Mul, Canon::Float(0.1)).unwrap(), arr!(Float32, vec![0.1f32 * 0.1f32]));
        assert!(scalar_assign_ok(Canon::Int(-5), &DataType::UInt8));
        assert!(!scalar_assign_ok(Canon::Int(300), &DataType::Int8));
        assert!(scalar_assign_ok(Canon::Float(-128.9), &DataType::Int8));
        assert!(!scalar_assign_ok(Canon::Float(-129.0), &DataType::Int8));
        assert!(!scalar_assign_ok(Canon::Float(f64::NAN), &DataType::Int64));
        assert!(scalar_assign_ok(Canon::Float(f64::NAN), &DataType::UInt16));
    }

    #[test]
    #[should_panic(expected = "values are not of data type int32")]
    fn values_must_be_of_the_element_type() {
        Arr::new(DataType::Int32, vec![1u32]);
    }

    #[test]
    fn each_data_type_holds_its_element_type() {
        // every numeric or bool type loads, casts, compares and stores through with_data_type!
        for dt in crate::dtype::dispatch::NUMERIC_BOOL {
            let t = NumType { data_type: dt.clone(), big: true };
            let bytes: Vec<u8> = (0..3 * dt.size()).map(|i| if dt == DataType::Bool { (i % 2) as u8 } else { i as u8 }).collect();
            let a = Arr::load(&bytes, &t);
            assert_eq!((a.data_type(), a.len()), (&dt, 3));
            assert_eq!(a.to_bytes(true), bytes, "{dt}");
            let wide = if dt.is_float() { DataType::Float64 } else { DataType::Int64 };
            assert_eq!(a.clone().cast(&wide).cast(&dt), a, "{dt}");
        }
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

    /// Speed probe for categorize (its decode reads every code through this model), run by hand
    /// under callgrind like `round_trip_probe`.
    #[test]
    #[ignore]
    fn categorize_probe() {
        use crate::codec::numcodecs::{filter, V2Elem};
        use serde_json::json;
        let labels = ["red", "green", "blue", "cyan"];
        let data: Vec<u8> = (0..1usize << 20)
            .flat_map(|i| {
                let mut cell = [0u8; 20];
                for (k, ch) in labels[i % 4].chars().enumerate() {
                    cell[4 * k..4 * k + 4].copy_from_slice(&(ch as u32).to_le_bytes());
                }
                cell
            })
            .collect();
        let input = V2Elem { data_type: DataType::Raw(20), byte_order: None };
        let mut sum = 0u64;
        for astype in ["|u1", "<f4"] {
            let cfg = json!({"id": "categorize", "labels": ["red", "green", "blue"], "dtype": "<U5", "astype": astype});
            let c = filter(&cfg, &input).unwrap().0;
            let e = c.encode(&data).unwrap();
            let mut out = vec![0; data.len()];
            c.decode_into(&e, &mut out).unwrap();
            sum = sum.wrapping_add(out.iter().map(|&b| b as u64).sum::<u64>());
        }
        assert_ne!(sum, 0);
    }
}
