//! Where decoded elements go, and where encoded ones come from: [`Dest`] (the caller's buffer that a
//! chunk's selected elements are decoded into) and [`with_box`] (a box of a caller's buffer seen as
//! one contiguous C-order chunk).

use super::convert::Conv;
use super::{copy, Layout, Selection};
use crate::buffer::RawBuf;
use crate::dtype::{DataType, SwapPlan};
use crate::error::{Error, Result};
use std::borrow::Cow;

/// Where a (partial) decode puts the elements a selection picks out of a chunk: selected element `k`
/// (counted per dimension within the selection) lands at byte `offset + sum(k[d] * layout.strides[d])`
/// of `buf`, converted by `conv` from the chunk's type to the buffer's.
#[derive(Clone, Copy, Debug)]
pub struct Dest<'a> {
    /// The destination buffer (the caller's, written by several chunk tasks at disjoint elements).
    pub buf: RawBuf,
    /// Byte offset of the selection's first element.
    pub offset: usize,
    /// The buffer's strides per selected element.
    pub layout: &'a Layout,
    /// Conversion from the chunk's elements to the buffer's.
    pub conv: &'a Conv,
    /// The fill value in the buffer's type; `None` when it has no image there (filling is then an error).
    pub fill: Option<&'a [u8]>,
}

impl<'a> Dest<'a> {
    /// The destination of the part of a selection that starts at selected element `out`.
    pub fn at(&self, out: &[u64]) -> Dest<'a> {
        Dest { offset: self.offset + self.layout.offset_of(out), ..*self }
    }

    /// Writes the fill value to the first `count` selected elements.
    pub fn fill_box(&self, count: &[u64]) -> Result<()> {
        let fill = self.fill.ok_or_else(|| {
            Error::Value("the fill value cannot be represented in the buffer's type".into())
        })?;
        copy::fill(self.buf, self.offset, self.layout, count, fill);
        Ok(())
    }

    /// Copies the selection `sel` of a decoded C-order chunk of `chunk_shape` (in `chunk`, whose first
    /// byte is the chunk's byte `bias`) to this destination, reversing byte order with `swap` on the way.
    pub fn copy_from(&self, chunk: &[u8], bias: usize, chunk_shape: &[u64], sel: &Selection, swap: &SwapPlan) -> Result<()> {
        let layout = Layout::c_order(chunk_shape, self.conv.from_size());
        let off = layout.offset_of(&sel.start) - bias;
        let conv = if swap.is_identity() { Cow::Borrowed(self.conv) } else { Cow::Owned(self.conv.with_swap(swap)) };
        copy::copy(chunk, off, &layout.stepped(&sel.step), self.buf, self.offset, self.layout, &sel.count, &conv)
    }

    /// Whether [`Dest::direct`] applies.
    pub fn is_direct(&self, chunk_shape: &[u64], sel: &Selection) -> bool {
        self.conv.is_identity() && sel.is_dense() && sel.count == chunk_shape && self.layout.is_contiguous(&sel.count)
    }

    /// The destination bytes of a whole chunk of `chunk_shape`, when selection `sel` covers the chunk
    /// and lands as one contiguous run of unconverted elements (a chunk can then be decoded straight
    /// into the caller's buffer).
    #[allow(clippy::mut_from_ref)]
    pub fn direct(&self, chunk_shape: &[u64], sel: &Selection) -> Option<&mut [u8]> {
        if !self.is_direct(chunk_shape, sel) {
            return None;
        }
        let nbytes = chunk_shape.iter().product::<u64>() as usize * self.conv.from_size();
        // SAFETY: this box of the destination belongs to the calling chunk task alone.
        Some(unsafe { self.buf.slice_mut(self.offset, nbytes) })
    }
}

/// Runs `f` on the box of `shape` (elements of `data_type`) whose origin is at byte `offset` of `src`
/// (laid out as `layout`) as one contiguous C-order slice: the slice itself when the box is a
/// contiguous run of `src`, otherwise a gathered per-thread copy.
pub fn with_box<R>(
    src: &[u8],
    layout: &Layout,
    offset: usize,
    shape: &[u64],
    data_type: &DataType,
    f: impl FnOnce(&[u8]) -> Result<R>,
) -> Result<R> {
    let nbytes = shape.iter().product::<u64>() as usize * data_type.size();
    if layout.is_contiguous(shape) {
        return f(&src[offset..offset + nbytes]);
    }
    crate::scratch::with_decoded(nbytes, |chunk| {
        let conv = Conv::identity(data_type);
        copy::copy(src, offset, layout, RawBuf::new(chunk), 0, &Layout::c_order(shape, data_type.size()), shape, &conv)?;
        f(chunk)
    })
}
