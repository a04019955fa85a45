//! Element type conversion between the array's data type and the caller's buffer type ("memory
//! types", as `H5Dread` and `nc_get_vara_double` take them), with netCDF's rule:
//!
//! - bool, every integer type and every float type convert to one another; complex64 and complex128
//!   convert to one another (component by component); any other type only to itself.
//! - A value the target type can hold converts as C converts it: integers exactly, floats to integers
//!   truncated toward zero, to a float rounded to nearest (ties to even). `bool` counts as an integer
//!   type holding 0 and 1 (reading bool gives 0/1; writing 2 or 0.5 into a bool array is out of range...
//!   0.5 truncates to 0, which is in range).
//! - NaN into an integer type, or a value outside the target's range (a finite float beyond the largest
//!   finite target float included), is [`Error::Value`]. ±Infinity and NaN convert between float types.
//!
//! A [`Conv`] is a kernel chosen once per call through the one typed-element dispatch
//! ([`with_data_type!`], once for the source type and once, nested, for the target type), so each
//! type pair gets its own monomorphic loop. It is applied to runs of elements with arbitrary strides;
//! it may also reverse the byte order of the source elements first (stored data read straight from a
//! chunk).

use crate::dtype::dispatch::with_data_type;
use crate::dtype::{DataType, SwapPlan};
use crate::error::{Error, Result};

/// A value on its way between two numeric types: integers exactly, floats as f64 (exact for every
/// float type here).
#[derive(Clone, Copy)]
enum Val {
    I(i128),
    F(f64),
}

/// The values a numeric type holds, for deciding once per type pair whether a conversion can fail.
#[derive(Clone, Copy)]
enum Range {
    /// An integer type (bool: 0..=1), its least and greatest value.
    Int(i128, i128),
    /// A float type, its greatest finite value.
    Float(f64),
}

/// A numeric element type: the Rust types of [`with_data_type!`]'s `numeric_bool` set.
trait Num: Copy {
    const RANGE: Range;
    /// Reads an element (unaligned).
    ///
    /// # Safety
    /// `p` is valid for reading `size_of::<Self>()` bytes.
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: caller's contract.
        unsafe { p.cast::<Self>().read_unaligned() }
    }
    /// Writes an element (unaligned).
    ///
    /// # Safety
    /// `p` is valid for writing `size_of::<Self>()` bytes.
    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: caller's contract.
        unsafe { p.cast::<Self>().write_unaligned(self) }
    }
    fn to_val(self) -> Val;
    fn from_val(v: Val) -> Option<Self>;
    /// `self as i128`, `as f32`, `as f64` (Rust's `as`: floats to integers saturate, integers to
    /// floats round to nearest, ties to even).
    fn as_i128(self) -> i128;
    fn as_f32(self) -> f32;
    fn as_f64(self) -> f64;
    /// `s` in this type by a plain cast, for a type pair whose conversion no value fails
    /// ([`can_fail`] false): the value itself, or for an integer into a float the nearest float (one
    /// rounding, as the checked path through [`Val`] gives).
    fn cast_from<S: Num>(s: S) -> Self;
}

macro_rules! int_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const RANGE: Range = Range::Int(<$t>::MIN as i128, <$t>::MAX as i128);
            #[inline(always)]
            fn to_val(self) -> Val {
                Val::I(self as i128)
            }
            #[inline(always)]
            fn from_val(v: Val) -> Option<Self> {
                match v {
                    Val::I(x) => <$t>::try_from(x).ok(),
                    Val::F(f) => {
                        // NaN fails both comparisons; bounds are powers of two, exact in f64.
                        let t = f.trunc();
                        let lo = <$t>::MIN as f64;
                        let hi = -(lo) + if lo == 0.0 { 2.0f64.powi(<$t>::BITS as i32) } else { 0.0 };
                        (t >= lo && t < hi).then(|| t as $t)
                    }
                }
            }
            #[inline(always)]
            fn as_i128(self) -> i128 {
                self as i128
            }
            #[inline(always)]
            fn as_f32(self) -> f32 {
                self as f32
            }
            #[inline(always)]
            fn as_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn cast_from<S: Num>(s: S) -> Self {
                s.as_i128() as $t
            }
        }
    )*};
}
int_num!(i8, i16, i32, i64, u8, u16, u32, u64);

/// `bool` as an integer type holding 0 and 1; any nonzero byte reads as 1 (true).
impl Num for bool {
    const RANGE: Range = Range::Int(0, 1);
    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: caller's contract (one byte, read as u8: not every byte is a valid `bool`).
        unsafe { p.read() != 0 }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u8) {
        // SAFETY: caller's contract.
        unsafe { p.write(self as u8) }
    }
    #[inline(always)]
    fn to_val(self) -> Val {
        Val::I(self as i128)
    }
    #[inline(always)]
    fn from_val(v: Val) -> Option<Self> {
        match v {
            Val::I(x) => (x == 0 || x == 1).then_some(x == 1),
            Val::F(f) => {
                let t = f.trunc();
                (0.0..2.0).contains(&t).then_some(t == 1.0)
            }
        }
    }
    #[inline(always)]
    fn as_i128(self) -> i128 {
        self as i128
    }
    #[inline(always)]
    fn as_f32(self) -> f32 {
        self as u8 as f32
    }
    #[inline(always)]
    fn as_f64(self) -> f64 {
        self as u8 as f64
    }
    #[inline(always)]
    fn cast_from<S: Num>(s: S) -> Self {
        s.as_i128() != 0
    }
}

impl Num for half::f16 {
    const RANGE: Range = Range::Float(65504.0);
    #[inline(always)]
    fn to_val(self) -> Val {
        Val::F(self.to_f64())
    }
    #[inline(always)]
    fn from_val(v: Val) -> Option<Self> {
        let f = match v {
            Val::I(x) => int_to_f64(x),
            Val::F(f) => f,
        };
        let r = crate::dtype::f16_from_f64(f);
        (!(f.is_finite() && r.is_infinite())).then_some(r)
    }
    #[inline(always)]
    fn as_i128(self) -> i128 {
        self.to_f64() as i128
    }
    #[inline(always)]
    fn as_f32(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn as_f64(self) -> f64 {
        self.to_f64()
    }
    #[inline(always)]
    fn cast_from<S: Num>(s: S) -> Self {
        // The sources that never fail into float16 (bool, 8- and 16-bit integers, float16) are exact
        // in f32: one rounding.
        half::f16::from_f32(s.as_f32())
    }
}

impl Num for f32 {
    const RANGE: Range = Range::Float(f32::MAX as f64);
    #[inline(always)]
    fn to_val(self) -> Val {
        Val::F(self as f64)
    }
    #[inline(always)]
    fn from_val(v: Val) -> Option<Self> {
        match v {
            Val::I(x) => Some(int_to_f32(x)),
            Val::F(f) => {
                let r = f as f32;
                (!(f.is_finite() && r.is_infinite())).then_some(r)
            }
        }
    }
    #[inline(always)]
    fn as_i128(self) -> i128 {
        self as i128
    }
    #[inline(always)]
    fn as_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn as_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn cast_from<S: Num>(s: S) -> Self {
        s.as_f32()
    }
}

impl Num for f64 {
    const RANGE: Range = Range::Float(f64::MAX);
    #[inline(always)]
    fn to_val(self) -> Val {
        Val::F(self)
    }
    #[inline(always)]
    fn from_val(v: Val) -> Option<Self> {
        Some(match v {
            Val::I(x) => int_to_f64(x),
            Val::F(f) => f,
        })
    }
    #[inline(always)]
    fn as_i128(self) -> i128 {
        self as i128
    }
    #[inline(always)]
    fn as_f32(self) -> f32 {
        self as f32
    }
    #[inline(always)]
    fn as_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn cast_from<S: Num>(s: S) -> Self {
        s.as_f64()
    }
}

/// Whether some value of `S` has no image in `D`: an integer outside the target's range, any float
/// into an integer type (NaN, infinities, large values), a finite value beyond the largest finite
/// target float (float16 holds integers up to 65504, past it they round to infinity).
fn can_fail<S: Num, D: Num>() -> bool {
    match (S::RANGE, D::RANGE) {
        (Range::Int(flo, fhi), Range::Int(tlo, thi)) => flo < tlo || fhi > thi,
        (Range::Int(flo, fhi), Range::Float(max)) => (flo as f64) < -max || (fhi as f64) > max,
        (Range::Float(_), Range::Int(..)) => true,
        (Range::Float(fmax), Range::Float(tmax)) => fmax > tmax,
    }
}

/// Converts `n` elements from `src` (stride `ss` bytes) to `dst` (stride `ds`); `false` at the first
/// value the target cannot hold.
type Kernel = unsafe fn(*const u8, usize, *mut u8, usize, usize) -> bool;

/// The kernel for `S` elements into `D` elements, and whether it can fail: a plain cast per element
/// ([`cast_run`]) where no value fails, the checked path ([`convert_run`]) otherwise.
fn kernel<S: Num, D: Num>() -> (Kernel, bool) {
    if can_fail::<S, D>() {
        (convert_run::<S, D>, true)
    } else {
        (cast_run::<S, D>, false)
    }
}

/// # Safety
/// `src + i*ss` and `dst + i*ds` are valid element addresses for `i < n`.
unsafe fn convert_run<S: Num, D: Num>(src: *const u8, ss: usize, dst: *mut u8, ds: usize, n: usize) -> bool {
    for i in 0..n {
        // SAFETY: caller's contract.
        unsafe {
            match D::from_val(S::load(src.add(i * ss)).to_val()) {
                Some(v) => v.store(dst.add(i * ds)),
                None => return false,
            }
        }
    }
    true
}

/// A conversion no value fails (u16 to f32, i32 to f64, u8 to i64, i64 to f64, ...): a plain cast per
/// element ([`Num::cast_from`]), which the compiler vectorises for contiguous runs, rather than the
/// checked path through [`Val`].
///
/// # Safety
/// As [`convert_run`].
unsafe fn cast_run<S: Num, D: Num>(src: *const u8, ss: usize, dst: *mut u8, ds: usize, n: usize) -> bool {
    let (es, ed) = (std::mem::size_of::<S>(), std::mem::size_of::<D>());
    // SAFETY: caller's contract.
    unsafe {
        if ss == es && ds == ed {
            for i in 0..n {
                D::cast_from(S::load(src.add(i * es))).store(dst.add(i * ed));
            }
        } else if ss == 2 * es && ds == ed {
            // Every 2nd element into a contiguous run (a step-2 read): a constant stride vectorises.
            for i in 0..n {
                D::cast_from(S::load(src.add(i * 2 * es))).store(dst.add(i * ed));
            }
        } else {
            for i in 0..n {
                D::cast_from(S::load(src.add(i * ss))).store(dst.add(i * ds));
            }
        }
    }
    true
}

/// The kernel converting `from` elements into `to` elements and whether it can fail, for two numeric
/// or bool types; `None` for any other pair.
fn real_kernel(from: &DataType, to: &DataType) -> Option<(Kernel, bool)> {
    with_data_type!(from, numeric_bool, S => with_data_type!(to, numeric_bool, D => Some(kernel::<S, D>()), _ => None), _ => None)
}

/// An integer on its way to a float type: through `i64` or `u64` where it fits (a native conversion,
/// rounding the same value the same way) rather than the `i128` library routine.
#[inline(always)]
fn int_to_f64(x: i128) -> f64 {
    if let Ok(v) = i64::try_from(x) {
        v as f64
    } else if let Ok(v) = u64::try_from(x) {
        v as f64
    } else {
        x as f64
    }
}

/// As [`int_to_f64`], to `f32` (one rounding, from the exact integer).
#[inline(always)]
fn int_to_f32(x: i128) -> f32 {
    if let Ok(v) = i64::try_from(x) {
        v as f32
    } else if let Ok(v) = u64::try_from(x) {
        v as f32
    } else {
        x as f32
    }
}

/// Complex to complex: both components with the checked kernel of the component types.
///
/// # Safety
/// As [`convert_run`], for complex elements of components `S` and `D`.
unsafe fn convert_complex<S: Num, D: Num>(src: *const u8, ss: usize, dst: *mut u8, ds: usize, n: usize) -> bool {
    let (sc, dc) = (std::mem::size_of::<S>(), std::mem::size_of::<D>());
    // SAFETY: the imaginary parts follow the real parts within each element.
    unsafe { convert_run::<S, D>(src, ss, dst, ds, n) && convert_run::<S, D>(src.add(sc), ss, dst.add(dc), ds, n) }
}

/// The kernel between the two complex types (component by component), and whether it can fail.
fn complex_kernel(from: &DataType, to: &DataType) -> Option<(Kernel, bool)> {
    match (from, to) {
        (DataType::Complex64, DataType::Complex128) => Some((convert_complex::<f32, f64>, can_fail::<f32, f64>())),
        (DataType::Complex128, DataType::Complex64) => Some((convert_complex::<f64, f32>, can_fail::<f64, f32>())),
        _ => None,
    }
}

/// Copies elements of `N` bytes unchanged.
///
/// # Safety
/// As [`convert_run`].
unsafe fn copy_run<const N: usize>(src: *const u8, ss: usize, dst: *mut u8, ds: usize, n: usize) -> bool {
    // SAFETY: caller's contract.
    unsafe {
        if ss == N && ds == N {
            std::ptr::copy_nonoverlapping(src, dst, n * N);
        } else if ss == 2 * N && ds == N {
            // Every 2nd element into a contiguous run (a step-2 read): a constant stride vectorises.
            for i in 0..n {
                dst.add(i * N).cast::<[u8; N]>().write_unaligned(src.add(i * 2 * N).cast::<[u8; N]>().read_unaligned());
            }
        } else {
            for i in 0..n {
                dst.add(i * ds).cast::<[u8; N]>().write_unaligned(src.add(i * ss).cast::<[u8; N]>().read_unaligned());
            }
        }
    }
    true
}

fn copy_kernel(elem: usize) -> Option<Kernel> {
    Some(match elem {
        1 => copy_run::<1>,
        2 => copy_run::<2>,
        4 => copy_run::<4>,
        8 => copy_run::<8>,
        16 => copy_run::<16>,
        _ => return None,
    })
}

/// A conversion from elements of one type to another, with an optional byte-order reversal of the
/// source elements first.
#[derive(Debug, Clone)]
pub struct Conv {
    from: DataType,
    to: DataType,
    kernel: Option<Kernel>,
    /// Element sizes.
    from_size: usize,
    to_size: usize,
    identity: bool,
    can_fail: bool,
    swap: SwapPlan,
}

impl Conv {
    /// The conversion from `from` elements to `to` elements; [`Error::InvalidArgument`] when the two
    /// types do not convert (complex with real, or a non-numeric type with any other type).
    pub fn new(from: &DataType, to: &DataType) -> Result<Conv> {
        let identity = from == to;
        let (kernel, can_fail) = if identity {
            (copy_kernel(from.size()), false)
        } else {
            match real_kernel(from, to).or_else(|| complex_kernel(from, to)) {
                Some((k, can_fail)) => (Some(k), can_fail),
                None => {
                    return Err(Error::InvalidArgument(format!(
                        "no conversion between {from} elements and {to} elements (numeric types convert among \
                         themselves, complex types among themselves, any other type only to itself)"
                    )))
                }
            }
        };
        Ok(Conv {
            from: from.clone(),
            to: to.clone(),
            kernel,
            from_size: from.size(),
            to_size: to.size(),
            identity,
            can_fail,
            swap: SwapPlan::identity(),
        })
    }

    /// The identity conversion for `t`.
    pub fn identity(t: &DataType) -> Conv {
        Conv::new(t, t).expect("a type converts to itself")
    }

    /// This conversion preceded by the byte-order reversal `swap` of each source element.
    pub fn with_swap(&self, swap: &SwapPlan) -> Conv {
        Conv { swap: swap.clone(), ..self.clone() }
    }

    /// Whether elements are copied unchanged (same type, no byte swap).
    pub fn is_identity(&self) -> bool {
        self.identity && self.swap.is_identity()
    }

    /// Whether some value of the source type has no image in the target type.
    pub fn can_fail(&self) -> bool {
        self.can_fail
    }

    /// Source element size in bytes.
    pub fn from_size(&self) -> usize {
        self.from_size
    }

    /// Target element size in bytes.
    pub fn to_size(&self) -> usize {
        self.to_size
    }

    /// The error for a value that does not convert.
    pub fn value_error(&self) -> Error {
        Error::Value(format!("a {} value is NaN or outside the range of {}", self.from, self.to))
    }

    /// Converts one element.
    pub fn convert_one(&self, src: &[u8]) -> Result<Vec<u8>> {
        let mut out = vec![0u8; self.to_size];
        assert_eq!(src.len(), self.from_size);
        // SAFETY: one element each side.
        if unsafe { self.run(src.as_ptr(), 0, out.as_mut_ptr(), 0, 1) } {
            Ok(out)
        } else {
            Err(self.value_error())
        }
    }

    /// Converts `n` elements from `src` (stride `ss` bytes) to `dst` (stride `ds`); `false` when a
    /// value does not convert (elements before it are written).
    ///
    /// # Safety
    /// `src + i*ss` (source element size) and `dst + i*ds` (target element size) are valid for `i < n`,
    /// and the two ranges do not overlap.
    #[inline]
    pub unsafe fn run(&self, src: *const u8, ss: usize, dst: *mut u8, ds: usize, n: usize) -> bool {
        if self.swap.is_identity() {
            return match self.kernel {
                // SAFETY: forwarded.
                Some(k) => unsafe { k(src, ss, dst, ds, n) },
                None => {
                    // Same type of an unusual size (r<N>, structs): byte copies.
                    for i in 0..n {
                        // SAFETY: forwarded.
                        unsafe { std::ptr::copy_nonoverlapping(src.add(i * ss), dst.add(i * ds), self.from_size) };
                    }
                    true
                }
            };
        }
        // SAFETY: forwarded.
        unsafe { self.run_swapped(src, ss, dst, ds, n) }
    }

    /// [`Conv::run`] for a byte-swapped source: blocks of elements are swapped into a contiguous
    /// buffer, then converted. Kept out of `run`, whose every call (one per run of a box copy, often
    /// 32 elements) would otherwise set up and probe this function's 4 KiB stack buffer.
    ///
    /// # Safety
    /// As [`Conv::run`].
    #[cold]
    #[inline(never)]
    unsafe fn run_swapped(&self, src: *const u8, ss: usize, dst: *mut u8, ds: usize, n: usize) -> bool {
        const BLOCK: usize = 256;
        let e = self.from_size;
        let mut tmp = [0u8; 4096];
        let per = (tmp.len() / e).clamp(1, BLOCK);
        let native = Conv { swap: SwapPlan::identity(), ..self.clone() };
        let mut big = Vec::new();
        let tmp: &mut [u8] = if e > tmp.len() {
            big.resize(e, 0);
            &mut big
        } else {
            &mut tmp
        };
        let mut i = 0;
        while i < n {
            let m = per.min(n - i);
            for j in 0..m {
                // SAFETY: forwarded (element i + j of the source).
                let s = unsafe { std::slice::from_raw_parts(src.add((i + j) * ss), e) };
                self.swap.apply_copy(s, &mut tmp[j * e..(j + 1) * e]);
            }
            // SAFETY: `tmp` holds m contiguous elements; the target as forwarded.
            if !unsafe { native.run(tmp.as_ptr(), e, dst.add(i * ds), ds, m) } {
                return false;
            }
            i += m;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DataType::*;

    fn conv<S: Copy, D: Copy + Default>(from: DataType, to: DataType, v: S) -> Result<D> {
        let c = Conv::new(&from, &to)?;
        let src = unsafe { std::slice::from_raw_parts((&v as *const S).cast::<u8>(), std::mem::size_of::<S>()) };
        let out = c.convert_one(src)?;
        Ok(unsafe { out.as_ptr().cast::<D>().read_unaligned() })
    }

    #[test]
    fn netcdf_rule() {
        assert_eq!(conv::<i16, f64>(Int16, Float64, -7).unwrap(), -7.0);
        assert_eq!(conv::<f64, i16>(Float64, Int16, -7.9).unwrap(), -7);
        assert_eq!(conv::<f64, i16>(Float64, Int16, 32767.9).unwrap(), 32767);
        assert!(conv::<f64, i16>(Float64, Int16, 32768.0).is_err());
        assert_eq!(conv::<f64, i16>(Float64, Int16, -32768.5).unwrap(), -32768);
        assert!(conv::<f64, i16>(Float64, Int16, -32769.0).is_err());
        assert!(matches!(conv::<f64, i32>(Float64, Int32, f64::NAN), Err(Error::Value(_))));
        assert!(conv::<f64, i32>(Float64, Int32, f64::INFINITY).is_err());
        assert_eq!(conv::<f64, u8>(Float64, UInt8, -0.9).unwrap(), 0);
        assert!(conv::<f64, u8>(Float64, UInt8, -1.0).is_err());
        assert_eq!(conv::<f64, u64>(Float64, UInt64, 18446744073709549568.0).unwrap(), 18446744073709549568);
        assert!(conv::<f64, u64>(Float64, UInt64, 18446744073709551616.0).is_err());
        assert_eq!(conv::<f64, i64>(Float64, Int64, -9223372036854775808.0).unwrap(), i64::MIN);
        assert!(conv::<f64, i64>(Float64, Int64, 9223372036854775808.0).is_err());
        assert!(conv::<i32, u16>(Int32, UInt16, 70000).is_err());
        assert!(conv::<i32, u16>(Int32, UInt16, -1).is_err());
        assert_eq!(conv::<u64, i64>(UInt64, Int64, 5).unwrap(), 5);
        assert!(conv::<u64, i64>(UInt64, Int64, u64::MAX).is_err());
        assert_eq!(conv::<i64, f32>(Int64, Float32, 16777217).unwrap(), 16777216.0);
        assert!(conv::<f64, f32>(Float64, Float32, 1e300).is_err());
        assert!(conv::<f64, f32>(Float64, Float32, f64::NAN).unwrap().is_nan());
        assert_eq!(conv::<f64, f32>(Float64, Float32, f64::NEG_INFINITY).unwrap(), f32::NEG_INFINITY);
        assert_eq!(conv::<f32, f64>(Float32, Float64, -0.0).unwrap().to_bits(), (-0.0f64).to_bits());
        assert_eq!(conv::<f64, u16>(Float64, Float16, 1.0).unwrap(), 0x3c00);
        assert!(conv::<f64, u16>(Float64, Float16, 70000.0).is_err());
        assert!(conv::<i32, u16>(Int32, Float16, 70000).is_err());
        assert_eq!(conv::<u8, i32>(DataType::Bool, Int32, 1).unwrap(), 1);
        assert_eq!(conv::<i32, u8>(Int32, DataType::Bool, 1).unwrap(), 1);
        assert!(conv::<i32, u8>(Int32, DataType::Bool, 2).is_err());
        assert_eq!(conv::<[f32; 2], [f64; 2]>(Complex64, Complex128, [1.5, -2.0]).unwrap(), [1.5, -2.0]);
        assert!(conv::<[f64; 2], [f32; 2]>(Complex128, Complex64, [1.0, 1e300]).is_err());
        assert!(Conv::new(&Complex64, &Float64).is_err());
        assert!(Conv::new(&Raw(3), &UInt8).is_err());
        assert!(Conv::new(&Raw(3), &Raw(3)).unwrap().is_identity());
    }

    #[test]
    fn failure_classes() {
        assert!(!Conv::new(&Int16, &Float64).unwrap().can_fail());
        assert!(!Conv::new(&UInt8, &Int16).unwrap().can_fail());
        assert!(Conv::new(&Int8, &UInt16).unwrap().can_fail());
        assert!(Conv::new(&Float64, &Float32).unwrap().can_fail());
        assert!(!Conv::new(&Float32, &Float64).unwrap().can_fail());
        assert!(Conv::new(&Int32, &Float16).unwrap().can_fail());
        assert!(Conv::new(&UInt16, &Float16).unwrap().can_fail());
        assert!(!Conv::new(&UInt8, &Float16).unwrap().can_fail());
        assert!(Conv::new(&Float32, &Int64).unwrap().can_fail());
    }

    /// The plain-cast kernels give the bytes of the checked path, for every pair that no value fails,
    /// on every value of the 8- and 16-bit types and on edge and random values of the wider ones,
    /// contiguous and strided (every 3rd source element into every 2nd target element).
    #[test]
    fn cast_kernels_match_the_checked_path() {
        let types = crate::dtype::dispatch::NUMERIC_BOOL;
        let mut pairs = 0;
        for f in &types {
            let es = f.size();
            let mut src: Vec<u8> = Vec::new();
            if es <= 2 {
                for v in 0..(1u32 << (8 * es)) {
                    src.extend_from_slice(&v.to_le_bytes()[..es]);
                }
            } else {
                let mut x = 0x9e37_79b9_7f4a_7c15u64;
                for i in 0..4096u64 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let v = match i % 4 {
                        0 => x,
                        1 => x >> (i % 64),
                        2 => (i / 4).wrapping_sub(8),
                        _ => [0, 1, u64::MAX, 1 << (8 * es - 1), (1 << (8 * es - 1)) - 1][(i / 4) as usize % 5],
                    };
                    src.extend_from_slice(&v.to_le_bytes()[..es]);
                }
            }
            let n = src.len() / es;
            for t in &types {
                let (fast, slow, fails) = with_data_type!(f, numeric_bool, S => with_data_type!(t, numeric_bool, D =>
                    (cast_run::<S, D> as Kernel, convert_run::<S, D> as Kernel, can_fail::<S, D>()),
                    _ => unreachable!()), _ => unreachable!());
                assert_eq!(Conv::new(f, t).unwrap().can_fail(), fails && f != t, "{f} -> {t}");
                if fails || f == t {
                    continue;
                }
                pairs += 1;
                let ed = t.size();
                let (mut a, mut b) = (vec![0u8; n * ed], vec![0u8; n * ed]);
                unsafe {
                    assert!(fast(src.as_ptr(), es, a.as_mut_ptr(), ed, n));
                    assert!(slow(src.as_ptr(), es, b.as_mut_ptr(), ed, n));
                }
                assert_eq!(a, b, "{f} -> {t}, contiguous");
                let m = n / 3;
                let (mut a, mut b) = (vec![0u8; 2 * m * ed], vec![0u8; 2 * m * ed]);
                unsafe {
                    assert!(fast(src.as_ptr(), 3 * es, a.as_mut_ptr(), 2 * ed, m));
                    assert!(slow(src.as_ptr(), 3 * es, b.as_mut_ptr(), 2 * ed, m));
                }
                assert_eq!(a, b, "{f} -> {t}, strided");
                // Every 2nd element into a contiguous run (the kernel's step-2 branch).
                let m = n / 2;
                let (mut a, mut b) = (vec![0u8; m * ed], vec![0u8; m * ed]);
                unsafe {
                    assert!(fast(src.as_ptr(), 2 * es, a.as_mut_ptr(), ed, m));
                    assert!(slow(src.as_ptr(), 2 * es, b.as_mut_ptr(), ed, m));
                }
                assert_eq!(a, b, "{f} -> {t}, step 2");
            }
        }
        // integer widenings 26 (bool into the 8 integer types), integers into floats 22 (float16 from
        // bool, int8, uint8, int16), float widenings 3
        assert_eq!(pairs, 51);
        // Integers into floats through i64/u64: the same rounding as from the exact value.
        assert_eq!(conv::<u64, f32>(UInt64, Float32, u64::MAX).unwrap(), 18446744073709551616.0);
        assert_eq!(conv::<u64, f64>(UInt64, Float64, (1 << 63) + 1025).unwrap(), 9223372036854777856.0);
        assert_eq!(conv::<i64, f64>(Int64, Float64, i64::MIN + 1).unwrap(), -9223372036854775808.0);
    }

    #[test]
    fn unchanged_copies_match_element_by_element_for_every_stride_pair() {
        fn check<const N: usize>() {
            let src: Vec<u8> = (0..N * 300).map(|i| (i * 7 + i / 5) as u8).collect();
            for (ss, ds) in [(N, N), (2 * N, N), (3 * N, N), (N, 2 * N), (2 * N, 3 * N)] {
                let n = (src.len() / ss).min(100);
                let mut got = vec![0xAAu8; n * ds];
                // SAFETY: n elements at strides ss / ds lie inside both buffers.
                assert!(unsafe { copy_run::<N>(src.as_ptr(), ss, got.as_mut_ptr(), ds, n) });
                let mut want = vec![0xAAu8; n * ds];
                for i in 0..n {
                    want[i * ds..i * ds + N].copy_from_slice(&src[i * ss..i * ss + N]);
                }
                assert_eq!(got, want, "N={N} ss={ss} ds={ds}");
            }
        }
        check::<1>();
        check::<2>();
        check::<4>();
        check::<8>();
        check::<16>();
    }

    #[test]
    fn swapped_source() {
        let vals: Vec<u8> = [1u16, 2, 300].iter().flat_map(|v| v.to_be_bytes()).collect();
        let c = Conv::new(&UInt16, &Float32).unwrap().with_swap(&SwapPlan::for_type(&UInt16, Some(other_endian())));
        let mut out = [0f32; 3];
        assert!(unsafe { c.run(vals.as_ptr(), 2, out.as_mut_ptr().cast(), 4, 3) });
        if crate::dtype::Endian::NATIVE == crate::dtype::Endian::Little {
            assert_eq!(out, [1.0, 2.0, 300.0]);
        }
    }

    /// Every pair of numeric and bool types, the identity ones included, against the reference that
    /// `tools/convert_vectors.py` computes with numpy and C's rules (tests/vectors/convert): each value
    /// one at a time (out-of-range ones refused with [`Error::Value`]), then the values that convert
    /// in runs (contiguous, every 2nd source element, strided both sides, and big-endian sources
    /// through a byte swap), and a run over all values stops at the first that does not convert.
    #[cfg(target_endian = "little")]
    #[test]
    fn every_pair_matches_numpy() {
        use serde_json::Value;
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/convert");
        let index: Value = serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap();
        let data = std::fs::read(dir.join("data.bin")).unwrap();
        let num = |v: &Value| v.as_u64().unwrap() as usize;
        let same = |t: &DataType, got: &[u8], want: &[u8]| {
            let nan = |b: &[u8]| match b.len() {
                2 => half::f16::from_le_bytes([b[0], b[1]]).is_nan(),
                4 => f32::from_le_bytes(b.try_into().unwrap()).is_nan(),
                _ => f64::from_le_bytes(b.try_into().unwrap()).is_nan(),
            };
            got == want || (t.is_float() && nan(got) && nan(want))
        };
        let (mut pairs, mut values, mut refused) = (0, 0, 0);
        for p in index["pairs"].as_array().unwrap() {
            let (fname, tname) = (p["from"].as_str().unwrap(), p["to"].as_str().unwrap());
            let (from, to) = (DataType::parse_v3(fname).unwrap(), DataType::parse_v3(tname).unwrap());
            let (es, ed) = (from.size(), to.size());
            let n = num(&index["sources"][fname]["count"]);
            let src = &data[num(&index["sources"][fname]["offset"])..][..n * es];
            let want = &data[num(&p["offset"])..][..n * ed];
            let errors: std::collections::HashSet<usize> = p["errors"].as_array().unwrap().iter().map(num).collect();
            let c = Conv::new(&from, &to).unwrap();
            assert_eq!(c.can_fail(), !errors.is_empty(), "{fname} -> {tname}: can_fail");
            for i in 0..n {
                let got = c.convert_one(&src[i * es..][..es]);
                if errors.contains(&i) {
                    assert!(matches!(got, Err(Error::Value(_))), "{fname} -> {tname}: value {i} converted");
                    refused += 1;
                } else {
                    let got = got.unwrap_or_else(|e| panic!("{fname} -> {tname}: value {i}: {e}"));
                    assert!(same(&to, &got, &want[i * ed..][..ed]), "{fname} -> {tname}: value {i}: {got:?}");
                }
                values += 1;
            }
            let ok: Vec<usize> = (0..n).filter(|i| !errors.contains(i)).collect();
            let m = ok.len();
            let want_ok: Vec<u8> = ok.iter().flat_map(|&i| want[i * ed..][..ed].to_vec()).collect();
            // (source stride, target stride) in elements; the source elements at their stride, the
            // bytes between them 0xEE
            for (sk, dk) in [(1, 1), (2, 1), (3, 2)] {
                let mut s = vec![0xEEu8; m * sk * es];
                for (j, &i) in ok.iter().enumerate() {
                    s[j * sk * es..][..es].copy_from_slice(&src[i * es..][..es]);
                }
                for swapped in [false, true] {
                    let c = if swapped {
                        for j in 0..m {
                            s[j * sk * es..][..es].reverse();
                        }
                        c.with_swap(&SwapPlan::for_type(&from, Some(other_endian())))
                    } else {
                        c.clone()
                    };
                    let mut got = vec![0u8; m * dk * ed];
                    // SAFETY: m elements at strides sk*es and dk*ed lie inside both buffers.
                    assert!(unsafe { c.run(s.as_ptr(), sk * es, got.as_mut_ptr(), dk * ed, m) });
                    for j in 0..m {
                        assert!(
                            same(&to, &got[j * dk * ed..][..ed], &want_ok[j * ed..][..ed]),
                            "{fname} -> {tname}: run with strides ({sk}, {dk}), swapped {swapped}: value {}",
                            ok[j]
                        );
                    }
                }
            }
            if let Some(&first) = errors.iter().min() {
                let mut got = vec![0u8; n * ed];
                // SAFETY: n contiguous elements each side.
                assert!(!unsafe { c.run(src.as_ptr(), es, got.as_mut_ptr(), ed, n) }, "{fname} -> {tname}");
                assert!((0..first).all(|i| same(&to, &got[i * ed..][..ed], &want[i * ed..][..ed])));
            }
            pairs += 1;
        }
        assert_eq!(pairs, 144);
        eprintln!("convert vectors: {pairs} pairs, {values} values, {refused} refused as out of range");
    }

    fn other_endian() -> crate::dtype::Endian {
        crate::dtype::Endian::Big
    }
}
