//! Buffers: [`RawBuf`] lets the chunk tasks of one read write into disjoint parts of the caller's
//! buffer from several threads at once; element fills and comparisons over whole buffers. (Region
//! arithmetic lives in [`crate::selection`].)

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

    /// The start of the buffer.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
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

    #[test]
    fn fill_and_compare() {
        assert!(all_equal(&[7, 9, 7, 9], &[7, 9]));
        assert!(!all_equal(&[7, 9, 7, 8], &[7, 9]));
        assert!(all_equal(&[0; 33], &[0, 0, 0]));
        assert!(!all_equal(&[0, 0, 1], &[0]));
        let mut b = vec![0u8; 6];
        fill_elements(&mut b, &[1, 2, 3]);
        assert_eq!(b, [1, 2, 3, 1, 2, 3]);
    }
}
