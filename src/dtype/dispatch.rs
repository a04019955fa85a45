//! The one typed-element dispatch: from a [`DataType`](super::DataType) value to code compiled for
//! its Rust element type. Every codec or conversion that computes on elements picks its kernel
//! through [`with_data_type!`], once per call, so the loops inside stay monomorphic.
//!
//! `with_data_type!(dt, SET, T => body, _ => other)` evaluates `body` with the type alias `T` set to
//! the Rust type of `dt` (a `DataType` or a reference to one) when `dt` is in `SET`, and `other`
//! otherwise. `SET` is `numeric` (int8..int64, uint8..uint64, float16, float32, float64),
//! `numeric_bool` (the same and bool), or a bracketed list of `DataType` variants (`[Int16 Float32]`).
//! The Rust types: bool, i8..i64, u8..u64, `half::f16`, f32, f64.

/// The Rust element type of a numeric or bool `DataType` variant name (see the module documentation).
macro_rules! rust_type {
    (Bool) => { bool };
    (Int8) => { i8 };
    (Int16) => { i16 };
    (Int32) => { i32 };
    (Int64) => { i64 };
    (UInt8) => { u8 };
    (UInt16) => { u16 };
    (UInt32) => { u32 };
    (UInt64) => { u64 };
    (Float16) => { half::f16 };
    (Float32) => { f32 };
    (Float64) => { f64 };
}
pub(crate) use rust_type;

/// Runs code compiled for the element type of a data type: see the module documentation.
macro_rules! with_data_type {
    ($dt:expr, numeric, $t:ident => $body:expr, _ => $other:expr) => {
        $crate::dtype::dispatch::with_data_type!(
            $dt,
            [Int8 Int16 Int32 Int64 UInt8 UInt16 UInt32 UInt64 Float16 Float32 Float64],
            $t => $body,
            _ => $other
        )
    };
    ($dt:expr, numeric_bool, $t:ident => $body:expr, _ => $other:expr) => {
        $crate::dtype::dispatch::with_data_type!(
            $dt,
            [Bool Int8 Int16 Int32 Int64 UInt8 UInt16 UInt32 UInt64 Float16 Float32 Float64],
            $t => $body,
            _ => $other
        )
    };
    ($dt:expr, [$($v:ident)*], $t:ident => $body:expr, _ => $other:expr) => {
        match $dt {
            $($crate::dtype::DataType::$v => {
                #[allow(dead_code)]
                type $t = $crate::dtype::dispatch::rust_type!($v);
                $body
            })*
            #[allow(unreachable_patterns)]
            _ => $other,
        }
    };
}
pub(crate) use with_data_type;

/// The `numeric_bool` set as values, for tests that go over every type (checked against the macro
/// by this module's tests).
#[cfg(test)]
pub(crate) const NUMERIC_BOOL: [crate::dtype::DataType; 12] = {
    use crate::dtype::DataType::*;
    [Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float16, Float32, Float64]
};

#[cfg(test)]
mod tests {
    use crate::dtype::DataType;

    fn size_and_name(dt: &DataType) -> Option<(usize, &'static str)> {
        with_data_type!(dt, numeric_bool, T => Some((std::mem::size_of::<T>(), std::any::type_name::<T>())), _ => None)
    }

    #[test]
    fn each_type_gets_its_rust_type() {
        let want = [
            (DataType::Bool, 1, "bool"),
            (DataType::Int8, 1, "i8"),
            (DataType::Int64, 8, "i64"),
            (DataType::UInt16, 2, "u16"),
            (DataType::Float16, 2, std::any::type_name::<half::f16>()),
            (DataType::Float64, 8, "f64"),
        ];
        for (dt, size, name) in want {
            assert_eq!(size_and_name(&dt), Some((size, name)), "{dt}");
            assert_eq!(size, dt.size(), "{dt}");
        }
        // NUMERIC_BOOL is the macro's set: each member dispatches, to a distinct Rust type
        let names: std::collections::HashSet<_> =
            super::NUMERIC_BOOL.iter().map(|dt| size_and_name(dt).expect("in the set").1).collect();
        assert_eq!(names.len(), super::NUMERIC_BOOL.len());
        assert_eq!(size_and_name(&DataType::Complex64), None);
        assert_eq!(size_and_name(&DataType::Raw(2)), None);
        // the numeric set leaves bool out; a list picks exactly its members
        assert_eq!(with_data_type!(DataType::Bool, numeric, T => Some(std::mem::size_of::<T>()), _ => None), None);
        let picked = |dt: DataType| with_data_type!(dt, [Int16 Float32], T => std::mem::size_of::<T>(), _ => 0);
        assert_eq!((picked(DataType::Int16), picked(DataType::Float32), picked(DataType::Int32)), (2, 4, 0));
    }
}
