//! N-dimensional boxes over C-order buffers: strided copy, fill and byte-swapped copy of a box between
//! two arrays, copying whole contiguous runs (merged trailing dimensions) instead of elements.
//!
//! [`RawBuf`] lets the chunk tasks of one read write into disjoint boxes of the caller's buffer from
//! several threads at once.


use crate::dtype::SwapPlan;

/// A destination buffer shared by tasks that write disjoint parts of it.
#[derive(Clone, Copy, Debug)]
pub struct RawBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a RawBuf is only handed to tasks that write pairwise disjoint boxes of the buffer, and the
// buffer outlives all of them (the read/write call waits for its tasks).
unsafe impl Send for RawBuf {}
unsafe impl Sync for RawBuf {}

impl RawBuf {
    /// Wraps a buffer. Every writer through copies of the result must write disjoint bytes.
    pub fn new(buf: &mut [u8]) -> RawBuf {
        RawBuf { ptr: buf.as_mut_ptr(), len: buf.len() }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes `offset..offset+len` as a slice.
    ///
    /// # Safety
    /// No other task may access these bytes while the slice lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn slice_mut(&self, offset: usize, len: usize) -> &mut [u8] {
        assert!(offset.checked_add(len).is_some_and(|e| e <= self.len), "RawBuf slice out of range");
        // SAFETY: in range (asserted); exclusivity is the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(offset), len) }
    }
}

/// A C-order array in a buffer: `shape` elements of `elem` bytes.
#[derive(Clone, Copy, Debug)]
pub struct Layout<'a> {
    /// Extent of each dimension.
    pub shape: &'a [u64],
    /// Bytes per element.
    pub elem: usize,
}

impl Layout<'_> {
    /// Total size in bytes.
    pub fn nbytes(&self) -> usize {
        self.shape.iter().product::<u64>() as usize * self.elem
    }

    /// Byte offset of the element at `idx`.
    pub fn offset_of(&self, idx: &[u64]) -> usize {
        let mut off = 0u64;
        for (i, s) in idx.iter().zip(self.shape) {
            off = off * s + i;
        }
        off as usize * self.elem
    }

    fn strides(&self) -> Vec<usize> {
        let mut st = vec![0usize; self.shape.len()];
        let mut acc = self.elem;
        for d in (0..self.shape.len()).rev() {
            st[d] = acc;
            acc *= self.shape[d] as usize;
        }
        st
    }
}

/// Whether the box `start..start+count` of `layout` is one contiguous byte range; returns (offset, len).
pub fn contiguous_span(layout: Layout, start: &[u64], count: &[u64]) -> Option<(usize, usize)> {
    // Contiguous iff after the first dimension with count > 1, every dimension is taken in full.
    let rank = count.len();
    let first = (0..rank).find(|&d| count[d] != 1).unwrap_or(rank);
    if ((first + 1)..rank).any(|d| count[d] != layout.shape[d]) {
        return None;
    }
    let n: u64 = count.iter().product();
    Some((layout.offset_of(start), n as usize * layout.elem))
}

/// Plans a box copy: (run length in bytes, number of outer dims, src strides, dst strides).
fn plan(src: Layout, dst: Layout, count: &[u64]) -> (usize, usize, Vec<usize>, Vec<usize>) {
    let rank = count.len();
    let mut k = rank; // dims k.. are merged into the run
    let mut run = src.elem;
    while k > 0 {
        let d = k - 1;
        run *= count[d] as usize;
        k = d;
        if count[d] != src.shape[d] || count[d] != dst.shape[d] {
            break;
        }
    }
    (run, k, src.strides(), dst.strides())
}

/// Calls `f(src_offset, dst_offset, run)` for each contiguous run of a box copy, `run` bytes long.
/// The innermost non-merged dimension is a tight loop; the odometer only advances the dimensions above it.
#[inline(always)]
fn for_each_run(
    src: Layout,
    src_start: &[u64],
    dst: Layout,
    dst_start: &[u64],
    count: &[u64],
    mut f: impl FnMut(usize, usize, usize),
) {
    if count.contains(&0) {
        return;
    }
    let (run, outer, ss, ds) = plan(src, dst, count);
    let mut so = src.offset_of(src_start);
    let mut dof = dst.offset_of(dst_start);
    if outer == 0 {
        f(so, dof, run);
        return;
    }
    let last = outer - 1;
    let (n_in, ss_in, ds_in) = (count[last] as usize, ss[last], ds[last]);
    let mut idx = vec![0u64; last];
    loop {
        let (mut s, mut d) = (so, dof);
        for _ in 0..n_in {
            f(s, d, run);
            s += ss_in;
            d += ds_in;
        }
        let mut k = last;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            so += ss[k];
            dof += ds[k];
            if idx[k] < count[k] {
                break;
            }
            so -= ss[k] * count[k] as usize;
            dof -= ds[k] * count[k] as usize;
            idx[k] = 0;
        }
    }
}

fn check_box(layout: Layout, start: &[u64], count: &[u64], len: usize, what: &str) {
    assert_eq!(layout.shape.len(), start.len(), "{what}: rank");
    assert_eq!(layout.shape.len(), count.len(), "{what}: rank");
    for d in 0..count.len() {
        assert!(start[d] + count[d] <= layout.shape[d], "{what}: box outside the array");
    }
    assert!(layout.nbytes() <= len, "{what}: buffer smaller than its layout");
}

/// Copies the box `count` at `src_start` of the array in `src` to `dst_start` of the array in `dst`.
/// `src_bias` is subtracted from every source byte offset (the source holds only a window of its array).
/// `swap` converts each element's byte order on the way.
#[allow(clippy::too_many_arguments)]
pub fn copy_box(
    src: &[u8],
    src_layout: Layout,
    src_start: &[u64],
    src_bias: usize,
    dst: RawBuf,
    dst_layout: Layout,
    dst_start: &[u64],
    count: &[u64],
    swap: &SwapPlan,
) {
    assert_eq!(src_layout.elem, dst_layout.elem);
    check_box(dst_layout, dst_start, count, dst.len, "copy_box destination");
    assert_eq!(src_layout.shape.len(), count.len());
    for_each_run(src_layout, src_start, dst_layout, dst_start, count, |so, dof, run| {
        let s = &src[so - src_bias..so - src_bias + run];
        // SAFETY: the box lies inside dst's layout (checked above); disjointness is RawBuf's contract.
        let d = unsafe { dst.slice_mut(dof, run) };
        if swap.is_identity() {
            d.copy_from_slice(s);
        } else {
            swap.apply_copy(s, d);
        }
    });
}

/// Fills the box `count` at `dst_start` of the array in `dst` with copies of the element `value`.
pub fn fill_box(dst: RawBuf, dst_layout: Layout, dst_start: &[u64], count: &[u64], value: &[u8]) {
    assert_eq!(value.len(), dst_layout.elem);
    check_box(dst_layout, dst_start, count, dst.len, "fill_box");
    let zero = value.iter().all(|&b| b == 0);
    let mut pattern: Vec<u8> = Vec::new();
    for_each_run(dst_layout, dst_start, dst_layout, dst_start, count, |_, dof, run| {
        // SAFETY: as in copy_box.
        let d = unsafe { dst.slice_mut(dof, run) };
        if zero {
            d.fill(0);
        } else {
            if pattern.len() != run {
                pattern = value.iter().copied().cycle().take(run).collect();
            }
            d.copy_from_slice(&pattern);
        }
    });
}

/// Fills all of `buf` with copies of the element `value`.
pub fn fill_elements(buf: &mut [u8], value: &[u8]) {
    if value.iter().all(|&b| b == 0) {
        buf.fill(0);
    } else if value.len() == 1 {
        buf.fill(value[0]);
    } else {
        for c in buf.chunks_exact_mut(value.len()) {
            c.copy_from_slice(value);
        }
    }
}

/// Whether every element of `buf` equals `value` byte for byte.
pub fn all_equal(buf: &[u8], value: &[u8]) -> bool {
    if value.iter().all(|&b| b == 0) {
        let (pre, mid, post) = unsafe { buf.align_to::<u64>() };
        return pre.iter().all(|&b| b == 0) && mid.iter().all(|&w| w == 0) && post.iter().all(|&b| b == 0);
    }
    buf.chunks_exact(value.len()).all(|c| c == value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn other_endian() -> crate::dtype::Endian {
        if crate::dtype::Endian::NATIVE == crate::dtype::Endian::Little { crate::dtype::Endian::Big } else { crate::dtype::Endian::Little }
    }

    fn arr(n: usize) -> Vec<u8> {
        (0..n as u32).map(|i| i as u8).collect()
    }

    #[test]
    fn copy_2d_box() {
        // src 4x5, copy box rows 1..3, cols 2..5 into dst 3x4 at (0,1)
        let src = arr(20);
        let mut dst = vec![255u8; 12];
        let rb = RawBuf::new(&mut dst);
        copy_box(&src, Layout { shape: &[4, 5], elem: 1 }, &[1, 2], 0, rb, Layout { shape: &[3, 4], elem: 1 }, &[0, 1], &[2, 3], &SwapPlan::identity());
        assert_eq!(dst, [255, 7, 8, 9, 255, 12, 13, 14, 255, 255, 255, 255]);
    }

    #[test]
    fn copy_merges_full_rows_and_swaps() {
        let src: Vec<u8> = arr(24); // 3x4 of u16
        let mut dst = vec![0u8; 24];
        let rb = RawBuf::new(&mut dst);
        copy_box(&src, Layout { shape: &[3, 4], elem: 2 }, &[0, 0], 0, rb, Layout { shape: &[3, 4], elem: 2 }, &[0, 0], &[3, 4], &SwapPlan::for_type(&crate::dtype::DataType::UInt16, Some(other_endian())));
        let want: Vec<u8> = src.chunks(2).flat_map(|c| [c[1], c[0]]).collect();
        assert_eq!(dst, want);
    }

    #[test]
    fn copy_with_bias_and_zero_d() {
        // source holds only bytes 5.. of a 10-element array
        let full = arr(10);
        let window = &full[5..];
        let mut dst = vec![0u8; 3];
        copy_box(window, Layout { shape: &[10], elem: 1 }, &[6], 5, RawBuf::new(&mut dst), Layout { shape: &[3], elem: 1 }, &[0], &[3], &SwapPlan::identity());
        assert_eq!(dst, [6, 7, 8]);
        let mut d0 = vec![0u8; 4];
        copy_box(&[1, 2, 3, 4], Layout { shape: &[], elem: 4 }, &[], 0, RawBuf::new(&mut d0), Layout { shape: &[], elem: 4 }, &[], &[], &SwapPlan::identity());
        assert_eq!(d0, [1, 2, 3, 4]);
    }

    #[test]
    fn fill_and_compare() {
        let mut d = vec![0u8; 2 * 3 * 2];
        fill_box(RawBuf::new(&mut d), Layout { shape: &[2, 3], elem: 2 }, &[1, 1], &[1, 2], &[7, 9]);
        assert_eq!(d, [0, 0, 0, 0, 0, 0, 0, 0, 7, 9, 7, 9]);
        assert!(all_equal(&[7, 9, 7, 9], &[7, 9]));
        assert!(!all_equal(&[7, 9, 7, 8], &[7, 9]));
        assert!(all_equal(&[0; 33], &[0, 0, 0]));
        assert!(!all_equal(&[0, 0, 1], &[0]));
        let mut b = vec![0u8; 6];
        fill_elements(&mut b, &[1, 2, 3]);
        assert_eq!(b, [1, 2, 3, 1, 2, 3]);
    }

    #[test]
    fn spans() {
        let l = Layout { shape: &[4, 5, 6], elem: 2 };
        assert_eq!(contiguous_span(l, &[1, 0, 0], &[2, 5, 6]), Some((60, 120)));
        assert_eq!(contiguous_span(l, &[1, 2, 0], &[1, 2, 6]), Some((84, 24)));
        assert_eq!(contiguous_span(l, &[1, 2, 1], &[1, 1, 3]), Some((86, 6)));
        assert_eq!(contiguous_span(l, &[0, 0, 0], &[2, 2, 6]), None);
        assert_eq!(contiguous_span(l, &[0, 0, 0], &[1, 2, 5]), None);
    }
}
