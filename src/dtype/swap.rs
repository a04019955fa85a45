//! Byte-order conversion plans: which groups of bytes of a stored element are reversed to obtain
//! native order. Uniform plans (one unit for the whole element) take the fast word-swapping paths.

use super::{swap_copy, swap_in_place, DataType, Endian};

/// The byte groups of one element to reverse: `(offset, unit, count)` = `count` units of `unit` bytes
/// starting at `offset`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SwapPlan {
    elem: usize,
    groups: Vec<(usize, usize, usize)>,
}

impl SwapPlan {
    /// The plan that changes nothing.
    pub fn identity() -> SwapPlan {
        SwapPlan::default()
    }

    /// The plan for elements of `dtype` stored in byte order `stored`. Structured types use each field's
    /// own stored byte order when it has one, else `stored`.
    pub fn for_type(dtype: &DataType, stored: Option<Endian>) -> SwapPlan {
        let swaps = |e: Option<Endian>| e.is_some_and(|e| !e.is_native());
        let elem = dtype.size();
        let mut groups = Vec::new();
        match dtype {
            DataType::Struct(s) => {
                for (offset, t, count, order) in s.leaves() {
                    let unit = t.swap_unit();
                    if unit > 1 && swaps(order.or(stored)) {
                        groups.push((offset, unit, count * t.size() / unit));
                    }
                }
            }
            t => {
                let unit = t.swap_unit();
                if unit > 1 && swaps(stored) {
                    groups.push((0, unit, elem / unit));
                }
            }
        }
        SwapPlan { elem, groups }
    }

    /// Whether the plan changes nothing.
    pub fn is_identity(&self) -> bool {
        self.groups.is_empty()
    }

    /// The unit when the whole element is one run of equal units (the fast path).
    fn uniform_unit(&self) -> Option<usize> {
        match self.groups.as_slice() {
            [] => Some(1),
            [(0, unit, count)] if unit * count == self.elem => Some(*unit),
            _ => None,
        }
    }

    /// Applies the plan to every element of `buf` (a whole number of elements).
    pub fn apply_in_place(&self, buf: &mut [u8]) {
        if let Some(unit) = self.uniform_unit() {
            return swap_in_place(buf, unit);
        }
        for e in buf.chunks_exact_mut(self.elem) {
            for &(o, unit, n) in &self.groups {
                swap_in_place(&mut e[o..o + unit * n], unit);
            }
        }
    }

    /// Copies `src` into `dst` (same length, whole elements) applying the plan.
    pub fn apply_copy(&self, src: &[u8], dst: &mut [u8]) {
        if let Some(unit) = self.uniform_unit() {
            return swap_copy(src, dst, unit);
        }
        dst.copy_from_slice(src);
        self.apply_in_place(dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::{StructField, StructType};
    use std::sync::Arc;

    fn other() -> Endian {
        if Endian::NATIVE == Endian::Little { Endian::Big } else { Endian::Little }
    }

    #[test]
    fn simple_and_struct_plans() {
        assert!(SwapPlan::for_type(&DataType::Int32, Some(Endian::NATIVE)).is_identity());
        assert!(SwapPlan::for_type(&DataType::UInt8, Some(other())).is_identity());
        let p = SwapPlan::for_type(&DataType::Complex64, Some(other()));
        let mut b = vec![1, 2, 3, 4, 5, 6, 7, 8];
        p.apply_in_place(&mut b);
        assert_eq!(b, [4, 3, 2, 1, 8, 7, 6, 5]);
        // struct {a: u8, b: i16 (other order), c: [2] u16 (native)}
        let f = |name: &str, t: DataType, shape: Vec<u64>, e: Option<Endian>| StructField {
            name: name.into(),
            data_type: t,
            shape,
            offset: 0,
            byte_order: e,
        };
        let st = StructType::packed(vec![
            f("a", DataType::UInt8, vec![], None),
            f("b", DataType::Int16, vec![], Some(other())),
            f("c", DataType::UInt16, vec![2], Some(Endian::NATIVE)),
        ]);
        assert_eq!(st.size, 7);
        let p = SwapPlan::for_type(&DataType::Struct(Arc::new(st)), None);
        let src = [9, 1, 2, 3, 4, 5, 6, 9, 1, 2, 3, 4, 5, 6];
        let mut dst = [0u8; 14];
        p.apply_copy(&src, &mut dst);
        assert_eq!(dst, [9, 2, 1, 3, 4, 5, 6, 9, 2, 1, 3, 4, 5, 6]);
    }
}
