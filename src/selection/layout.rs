//! Buffer layouts: an element size and a byte stride per dimension. C order, Fortran order, a chunk
//! walked with a selection's steps and a caller's arbitrary strides are all just strides.

use crate::error::{Error, Result};

/// Where the elements of an N-dimensional array lie in a buffer: element `idx` starts at byte
/// `sum(idx[d] * strides[d])` from the array's origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Bytes per element.
    pub elem: usize,
    /// Bytes between neighbours along each dimension.
    pub strides: Vec<usize>,
}

impl Layout {
    /// The C-order (last dimension fastest) layout of an array of `shape`.
    pub fn c_order(shape: &[u64], elem: usize) -> Layout {
        let mut strides = vec![0usize; shape.len()];
        let mut acc = elem;
        for d in (0..shape.len()).rev() {
            strides[d] = acc;
            acc = acc.saturating_mul(shape[d] as usize);
        }
        Layout { elem, strides }
    }

    /// A layout from a caller's strides, given in elements (`None`: C order over `count`). Strides must
    /// be non-negative, and distinct selected elements must land on distinct, non-overlapping elements
    /// when `distinct` is set (reads: two elements into one place would race).
    pub fn from_caller(count: &[u64], elem: usize, strides: Option<&[i64]>, distinct: bool) -> Result<Layout> {
        let Some(strides) = strides else { return Ok(Layout::c_order(count, elem)) };
        if strides.len() != count.len() {
            return Err(Error::InvalidArgument("buffer_stride and count differ in rank".into()));
        }
        let mut bytes = Vec::with_capacity(strides.len());
        for (d, &s) in strides.iter().enumerate() {
            let s = u64::try_from(s)
                .ok()
                .and_then(|s| s.checked_mul(elem as u64))
                .and_then(|s| usize::try_from(s).ok())
                .ok_or_else(|| Error::InvalidArgument(format!("buffer_stride[{d}] = {s} is negative or too large")))?;
            bytes.push(s);
        }
        let layout = Layout { elem, strides: bytes };
        if distinct && !layout.is_injective(count) {
            return Err(Error::InvalidArgument(format!(
                "buffer_stride {strides:?} makes distinct elements of count {count:?} overlap in the buffer"
            )));
        }
        Ok(layout)
    }

    /// The same layout visiting every `step[d]`-th element.
    pub fn stepped(&self, step: &[u64]) -> Layout {
        Layout { elem: self.elem, strides: self.strides.iter().zip(step).map(|(&s, &k)| s * k as usize).collect() }
    }

    /// Byte offset of the element at `idx`.
    pub fn offset_of(&self, idx: &[u64]) -> usize {
        idx.iter().zip(&self.strides).map(|(&i, &s)| i as usize * s).sum()
    }

    /// Bytes from the origin to the end of the last element of a box of `count` (0 when empty);
    /// `None` on overflow.
    pub fn span(&self, count: &[u64]) -> Option<usize> {
        if count.contains(&0) {
            return Some(0);
        }
        let mut end = self.elem as u64;
        for (&c, &s) in count.iter().zip(&self.strides) {
            end = end.checked_add((c - 1).checked_mul(s as u64)?)?;
        }
        usize::try_from(end).ok()
    }

    /// Whether a box of `count` at the origin is one contiguous run of `count`'s elements in C order.
    pub fn is_contiguous(&self, count: &[u64]) -> bool {
        let mut expect = self.elem;
        for d in (0..count.len()).rev() {
            if count[d] > 1 && self.strides[d] != expect {
                return false;
            }
            expect = expect.saturating_mul(count[d] as usize);
        }
        true
    }

    /// Whether distinct elements of a box of `count` occupy disjoint bytes: sorted by stride, each
    /// dimension's stride clears the span of the dimensions below it.
    fn is_injective(&self, count: &[u64]) -> bool {
        let mut dims: Vec<usize> = (0..count.len()).filter(|&d| count[d] > 1).collect();
        dims.sort_by_key(|&d| self.strides[d]);
        let mut span = self.elem as u128;
        for d in dims {
            if (self.strides[d] as u128) < span {
                return false;
            }
            span += (count[d] as u128 - 1) * self.strides[d] as u128;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_and_spans() {
        let c = Layout::c_order(&[4, 5, 6], 2);
        assert_eq!(c.strides, [60, 12, 2]);
        assert_eq!(c.offset_of(&[1, 2, 3]), 60 + 24 + 6);
        assert_eq!(c.span(&[4, 5, 6]), Some(240));
        assert!(c.is_contiguous(&[4, 5, 6]));
        assert!(c.is_contiguous(&[1, 1, 6]));
        assert!(!c.is_contiguous(&[2, 2, 6]));
        assert!(c.stepped(&[1, 1, 2]).is_contiguous(&[1, 1, 1]));
        // Fortran order of a 3 x 4 array of f64: strides (1, 3) elements.
        let f = Layout::from_caller(&[3, 4], 8, Some(&[1, 3]), true).unwrap();
        assert_eq!(f.strides, [8, 24]);
        assert_eq!(f.span(&[3, 4]), Some(96));
        assert!(!f.is_contiguous(&[3, 4]));
        assert_eq!(c.span(&[0, 5, 6]), Some(0));
    }

    #[test]
    fn caller_strides_checked() {
        assert!(Layout::from_caller(&[3, 4], 4, Some(&[-1, 1]), false).is_err());
        assert!(Layout::from_caller(&[3, 4], 4, Some(&[1]), false).is_err());
        // Overlap: rows 2 apart but 4 elements long.
        assert!(Layout::from_caller(&[3, 4], 4, Some(&[2, 1]), true).is_err());
        assert!(Layout::from_caller(&[3, 4], 4, Some(&[2, 1]), false).is_ok());
        assert!(Layout::from_caller(&[3, 4], 4, Some(&[0, 1]), true).is_err());
        // A dimension of extent 1 may have any stride.
        assert!(Layout::from_caller(&[1, 4], 4, Some(&[0, 1]), true).is_ok());
        // Gaps are fine.
        assert!(Layout::from_caller(&[3, 4], 4, Some(&[10, 2]), true).is_ok());
        assert!(Layout::from_caller(&[2], 8, Some(&[i64::MAX]), true).is_err());
    }
}
