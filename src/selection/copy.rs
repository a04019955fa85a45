//! Box copies between two layouts: the box is walked as runs along its innermost remaining dimension
//! (dimensions of extent 1 dropped, dimensions contiguous on both sides merged), and each run goes
//! through one [`Conv`] call: a `memcpy` when both sides are contiguous and the types equal, a strided
//! (and converting) loop otherwise.

use super::convert::Conv;
use super::layout::Layout;
use crate::buffer::RawBuf;
use crate::dtype::DataType;
use crate::error::Result;

/// The dimensions of a box walk after dropping extent-1 dimensions, ordering the rest by the strides
/// of one side (`by_src`: the source's, else the destination's; outermost first) and merging
/// dimensions contiguous on both sides: (count, source stride, destination stride), outermost first.
/// Copies order by the larger buffer (the caller's), which a transposing copy (C order into a
/// Fortran-order buffer, or back) then walks in memory order, while the chunk side, small enough
/// for the cache, takes the strided accesses.
///
/// When the innermost dimension's runs are whole cache lines of the larger buffer, the dimensions
/// outside it are ordered by the smaller buffer's strides instead: consecutive runs then read (or
/// write) neighbouring elements of the chunk, in cache lines the previous run brought in, rather
/// than a fresh line per element (a strided read into a Fortran-order buffer walks a chunk down its
/// slowest dimension in every run).
fn plan(count: &[u64], ss: &[usize], ds: &[usize], by_src: bool) -> Vec<(usize, usize, usize)> {
    let mut order: Vec<(usize, usize, usize)> =
        (0..count.len()).filter(|&d| count[d] != 1).map(|d| (count[d] as usize, ss[d], ds[d])).collect();
    let big = |&(_, s, t): &(usize, usize, usize)| if by_src { (s, t) } else { (t, s) };
    order.sort_by_key(|d| std::cmp::Reverse(big(d)));
    if let Some((inner, outer)) = order.split_last_mut() {
        const LINE: usize = 64;
        let (n, stride_big) = (inner.0, big(inner).0);
        if outer.len() > 1 && stride_big > 0 && stride_big < LINE && n * stride_big >= LINE {
            outer.sort_by_key(|d| std::cmp::Reverse((big(d).1, big(d).0)));
        }
    }
    let mut dims: Vec<(usize, usize, usize)> = Vec::with_capacity(order.len());
    for (n, s, t) in order {
        if let Some(last) = dims.last_mut() {
            // The previous (outer) dimension steps exactly over this one on both sides: merge.
            if last.1 == s * n && last.2 == t * n {
                *last = (last.0 * n, s, t);
                continue;
            }
        }
        dims.push((n, s, t));
    }
    dims
}

/// Calls `f(src_offset, dst_offset, n, src_stride, dst_stride)` for each run of a box walk; stops at
/// the first `false`.
fn for_each_run(
    count: &[u64],
    ss: &[usize],
    ds: &[usize],
    by_src: bool,
    mut f: impl FnMut(usize, usize, usize, usize, usize) -> bool,
) -> bool {
    if count.contains(&0) {
        return true;
    }
    let dims = plan(count, ss, ds, by_src);
    let Some((&(n, s_in, d_in), rest)) = dims.split_last() else { return f(0, 0, 1, 0, 0) };
    // The dimension next to the runs' is walked by a plain loop, and the odometer below steps only
    // once per row of runs: a chunk's rows of 64 uint16 are 128 bytes, where the odometer's steps cost
    // more than the copy's own instructions.
    let (&(m, s_mid, d_mid), outer) = rest.split_last().unwrap_or((&(1, 0, 0), rest));
    let mut idx = vec![0usize; outer.len()];
    let (mut so, mut dof) = (0usize, 0usize);
    loop {
        let (mut s2, mut d2) = (so, dof);
        for _ in 0..m {
            if !f(s2, d2, n, s_in, d_in) {
                return false;
            }
            s2 += s_mid;
            d2 += d_mid;
        }
        let mut k = outer.len();
        loop {
            if k == 0 {
                return true;
            }
            k -= 1;
            idx[k] += 1;
            so += outer[k].1;
            dof += outer[k].2;
            if idx[k] < outer[k].0 {
                break;
            }
            so -= outer[k].1 * outer[k].0;
            dof -= outer[k].2 * outer[k].0;
            idx[k] = 0;
        }
    }
}

/// Copies `len` bytes between non-overlapping buffers; runs of at most 64 bytes inline, as two
/// possibly overlapping blocks, rather than a call to `memcpy` (a box of 32^3 uint8 chunks is 10^8
/// runs of 32 bytes, where the calls alone took 10% of a write's time).
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`].
#[inline(always)]
unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize) {
    /// `len` in `N..=2N`: the first and the last `N` bytes.
    #[inline(always)]
    unsafe fn two<const N: usize>(src: *const u8, dst: *mut u8, len: usize) {
        // SAFETY: N <= len, so both blocks lie inside the len bytes of each side.
        unsafe {
            let a = src.cast::<[u8; N]>().read_unaligned();
            let b = src.add(len - N).cast::<[u8; N]>().read_unaligned();
            dst.cast::<[u8; N]>().write_unaligned(a);
            dst.add(len - N).cast::<[u8; N]>().write_unaligned(b);
        }
    }
    // SAFETY: caller's contract; each branch stays inside len bytes.
    unsafe {
        match len {
            0 => {}
            1..=3 => {
                for i in 0..len {
                    *dst.add(i) = *src.add(i);
                }
            }
            4..=7 => two::<4>(src, dst, len),
            8..=15 => two::<8>(src, dst, len),
            16..=31 => two::<16>(src, dst, len),
            32..=64 => two::<32>(src, dst, len),
            // Rows of 64^3 uint16 chunks (a write gathers millions of them): inline, not a call.
            65..=128 => two::<64>(src, dst, len),
            _ => std::ptr::copy_nonoverlapping(src, dst, len),
        }
    }
}

/// Copies the box `count` from `src` (its origin at byte `src_off`, strides of `src_layout`) to `dst`
/// (origin at `dst_off`, strides of `dst_layout`), converting each element with `conv`. A value that
/// does not convert is [`crate::Error::Value`] (elements before it are written).
#[allow(clippy::too_many_arguments)]
pub fn copy(
    src: &[u8],
    src_off: usize,
    src_layout: &Layout,
    dst: RawBuf,
    dst_off: usize,
    dst_layout: &Layout,
    count: &[u64],
    conv: &Conv,
) -> Result<()> {
    assert_eq!(src_layout.elem, conv.from_size(), "copy: source element size");
    assert_eq!(dst_layout.elem, conv.to_size(), "copy: destination element size");
    let src_end = src_layout.span(count).and_then(|s| s.checked_add(src_off));
    let dst_end = dst_layout.span(count).and_then(|s| s.checked_add(dst_off));
    assert!(src_end.is_some_and(|e| e <= src.len() || count.contains(&0)), "copy: box outside the source");
    assert!(dst_end.is_some_and(|e| e <= dst.len() || count.contains(&0)), "copy: box outside the destination");
    let (sp, dp) = (src.as_ptr(), dst.as_ptr());
    let by_src = src.len() > dst.len();
    if conv.is_identity() {
        // Unchanged elements: contiguous runs are copied here, without the kernel's indirect call (a
        // box of small chunks is millions of short runs: 32-byte rows of 32^3 uint8 chunks).
        let e = src_layout.elem;
        for_each_run(count, &src_layout.strides, &dst_layout.strides, by_src, |so, dof, n, s, d| {
            // SAFETY: as below.
            unsafe {
                if s == e && d == e {
                    copy_bytes(sp.add(src_off + so), dp.add(dst_off + dof), n * e);
                    true
                } else {
                    conv.run(sp.add(src_off + so), s, dp.add(dst_off + dof), d, n)
                }
            }
        });
        return Ok(());
    }
    let ok = for_each_run(count, &src_layout.strides, &dst_layout.strides, by_src, |so, dof, n, s, d| {
        // SAFETY: every element of the box lies inside both buffers (asserted above); the destination's
        // disjointness from other writers is RawBuf's contract, and src and dst never alias (a caller's
        // buffer and a chunk buffer).
        unsafe { conv.run(sp.add(src_off + so), s, dp.add(dst_off + dof), d, n) }
    });
    if ok {
        Ok(())
    } else {
        Err(conv.value_error())
    }
}

/// Writes into `dst` the C-order array whose dimension `k` is dimension `map[k]` of the C-order array
/// `src` of `src_shape` (a transposition): a [`copy`] that walks `src` with permuted strides.
pub fn permute(src: &[u8], src_shape: &[u64], dst: &mut [u8], map: &[usize], data_type: &DataType) -> Result<()> {
    let elem = data_type.size();
    let src_layout = Layout::c_order(src_shape, elem);
    let dst_shape: Vec<u64> = map.iter().map(|&m| src_shape[m]).collect();
    let walked = Layout { elem, strides: map.iter().map(|&m| src_layout.strides[m]).collect() };
    let dst_layout = Layout::c_order(&dst_shape, elem);
    copy(src, 0, &walked, RawBuf::new(dst), 0, &dst_layout, &dst_shape, &Conv::identity(data_type))
}

/// Fills the box `count` of `dst` (origin at `dst_off`) with copies of the element `value`.
pub fn fill(dst: RawBuf, dst_off: usize, dst_layout: &Layout, count: &[u64], value: &[u8]) {
    assert_eq!(value.len(), dst_layout.elem, "fill: element size");
    assert!(
        dst_layout.span(count).and_then(|s| s.checked_add(dst_off)).is_some_and(|e| e <= dst.len() || count.contains(&0)),
        "fill: box outside the destination"
    );
    let zero = value.iter().all(|&b| b == 0);
    let e = value.len();
    let zeros = vec![0; count.len()];
    let mut pattern: Vec<u8> = Vec::new();
    for_each_run(count, &zeros, &dst_layout.strides, false, |_, dof, n, _, d| {
        if d == e {
            // SAFETY: inside dst (asserted); disjointness is RawBuf's contract.
            let run = unsafe { dst.slice_mut(dst_off + dof, n * e) };
            if zero {
                run.fill(0);
            } else {
                if pattern.len() != run.len() {
                    pattern = value.iter().copied().cycle().take(run.len()).collect();
                }
                run.copy_from_slice(&pattern);
            }
        } else {
            for i in 0..n {
                // SAFETY: as above.
                unsafe { dst.slice_mut(dst_off + dof + i * d, e) }.copy_from_slice(value);
            }
        }
        true
    });
}

/// Checks that every element of the box `count` of `src` converts with `conv` (nothing is written).
pub fn check(src: &[u8], src_off: usize, src_layout: &Layout, count: &[u64], conv: &Conv) -> Result<()> {
    assert!(
        src_layout.span(count).and_then(|s| s.checked_add(src_off)).is_some_and(|e| e <= src.len() || count.contains(&0)),
        "check: box outside the source"
    );
    let zeros = vec![0; count.len()];
    let mut tmp = vec![0u8; 256 * conv.to_size()];
    let sp = src.as_ptr();
    let ok = for_each_run(count, &src_layout.strides, &zeros, true, |so, _, n, s, _| {
        let mut i = 0;
        while i < n {
            let m = (n - i).min(256);
            // SAFETY: source elements inside src (asserted); tmp holds 256 target elements.
            if !unsafe { conv.run(sp.add(src_off + so + i * s), s, tmp.as_mut_ptr(), conv.to_size(), m) } {
                return false;
            }
            i += m;
        }
        true
    });
    if ok {
        Ok(())
    } else {
        Err(conv.value_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_transposes() {
        // 2x3 u8 -> map [1, 0] -> 3x2
        let src = [0u8, 1, 2, 3, 4, 5];
        let mut dst = [0u8; 6];
        permute(&src, &[2, 3], &mut dst, &[1, 0], &DataType::UInt8).unwrap();
        assert_eq!(dst, [0, 3, 1, 4, 2, 5]);
        // 3-byte elements (no typed kernel), 2x1x3 -> map [2, 0, 1] -> 3x2x1
        let dt = DataType::Raw(3);
        let src: Vec<u8> = (0..18).collect();
        let mut dst = vec![0u8; 18];
        permute(&src, &[2, 1, 3], &mut dst, &[2, 0, 1], &dt).unwrap();
        let want: Vec<u8> = [0usize, 3, 1, 4, 2, 5].iter().flat_map(|&e| (0..3).map(move |b| (3 * e + b) as u8)).collect();
        assert_eq!(dst, want);
    }

    #[test]
    fn plans_merge_and_drop() {
        // 3x4 of 2-byte elements, C order both sides: one run of 12.
        assert_eq!(plan(&[3, 4], &[8, 2], &[8, 2], false), [(12, 2, 2)]);
        // destination rows wider: no merge.
        assert_eq!(plan(&[3, 4], &[8, 2], &[20, 2], false), [(3, 8, 20), (4, 2, 2)]);
        assert_eq!(plan(&[1, 4, 1], &[99, 2, 77], &[1, 2, 3], true), [(4, 2, 2)]);
        // C order into Fortran order: ordered by the destination, its unit-stride dimension goes
        // innermost; ordered by the source, the source's.
        assert_eq!(plan(&[3, 4], &[8, 2], &[2, 6], false), [(4, 2, 6), (3, 8, 2)]);
        assert_eq!(plan(&[3, 4], &[8, 2], &[2, 6], true), [(3, 8, 2), (4, 2, 6)]);
        // A strided C-order chunk box (32^3 of 64^3 uint16, step 2) into a Fortran-order buffer: the
        // destination's unit-stride dimension innermost (runs of 64 bytes); outside it, the chunk's
        // order (its dimension 2, 4 bytes apart, next), not the destination's.
        let (ss, ds) = ([16384, 256, 4], [2, 64, 2048]);
        assert_eq!(plan(&[32, 32, 32], &ss, &ds, false), [(32, 256, 64), (32, 4, 2048), (32, 16384, 2)]);
        // Runs shorter than a cache line keep the larger buffer's order throughout.
        assert_eq!(plan(&[8, 32, 32], &ss, &[2, 16, 512], false), [(32, 4, 512), (32, 256, 16), (8, 16384, 2)]);
    }

    #[test]
    fn strided_converting_copy_into_fortran_order() {
        // Source: 4x6 int16 C order; select rows 0,2 and columns 1,3,5 (step 2), into a 2x3 f64 Fortran buffer.
        let src: Vec<u8> = (0..24i16).flat_map(|v| v.to_ne_bytes()).collect();
        let sl = Layout::c_order(&[4, 6], 2).stepped(&[2, 2]);
        let dl = Layout::from_caller(&[2, 3], 8, Some(&[1, 2]), true).unwrap();
        let mut out = vec![0u8; 48];
        let conv = Conv::new(&DataType::Int16, &DataType::Float64).unwrap();
        copy(&src, 2, &sl, RawBuf::new(&mut out), 0, &dl, &[2, 3], &conv).unwrap();
        let got: Vec<f64> = out.chunks(8).map(|b| f64::from_ne_bytes(b.try_into().unwrap())).collect();
        // Fortran order: column-major (r0c0, r1c0, r0c1, ...)
        assert_eq!(got, [1.0, 13.0, 3.0, 15.0, 5.0, 17.0]);
    }

    #[test]
    fn small_copies_cover_every_length() {
        let src: Vec<u8> = (0..200u8).collect();
        for len in 0..=130 {
            for off in [0, 1, 7] {
                let mut dst = vec![0xEEu8; 140];
                unsafe { copy_bytes(src.as_ptr().add(off), dst.as_mut_ptr().add(3), len) };
                assert_eq!(&dst[3..3 + len], &src[off..off + len], "len {len} off {off}");
                assert!(dst[..3].iter().chain(&dst[3 + len..]).all(|&b| b == 0xEE), "len {len}: wrote outside");
            }
        }
    }

    #[test]
    fn fill_and_check() {
        let mut d = vec![0u8; 2 * 3 * 2];
        let l = Layout::c_order(&[2, 3], 2);
        fill(RawBuf::new(&mut d), l.offset_of(&[1, 1]), &l, &[1, 2], &[7, 9]);
        assert_eq!(d, [0, 0, 0, 0, 0, 0, 0, 0, 7, 9, 7, 9]);
        let src: Vec<u8> = [1i32, 300, 2].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let conv = Conv::new(&DataType::Int32, &DataType::UInt8).unwrap();
        let l = Layout::c_order(&[3], 4);
        assert!(check(&src, 0, &l, &[3], &conv).is_err());
        assert!(check(&src, 0, &l.stepped(&[2]), &[2], &conv).is_ok());
        let zero_d = Layout::c_order(&[], 4);
        assert!(check(&src, 4, &zero_d, &[], &conv).is_err());
    }
}
