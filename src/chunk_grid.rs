//! The regular chunk grid: every chunk has the same shape; edge chunks extend past the array.

use crate::error::{Error, Result};

/// A regular grid of chunks of `chunk_shape` over an array of `array_shape`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegularGrid {
    /// Shape of every chunk (all entries > 0).
    pub chunk_shape: Vec<u64>,
}

impl RegularGrid {
    /// A grid with the given chunk shape; every extent must be positive.
    pub fn new(chunk_shape: Vec<u64>) -> Result<RegularGrid> {
        if chunk_shape.contains(&0) {
            return Err(Error::Metadata(format!("chunk_shape {chunk_shape:?} has a zero extent")));
        }
        Ok(RegularGrid { chunk_shape })
    }

    /// Number of chunks along each dimension for an array of `shape`.
    pub fn grid_shape(&self, shape: &[u64]) -> Vec<u64> {
        shape.iter().zip(&self.chunk_shape).map(|(&s, &c)| s.div_ceil(c)).collect()
    }

    /// For a region `[start, start+count)` (count all > 0), the inclusive range of chunk indices per dimension.
    pub fn chunk_range(&self, start: &[u64], count: &[u64]) -> Vec<(u64, u64)> {
        start
            .iter()
            .zip(count)
            .zip(&self.chunk_shape)
            .map(|((&s, &n), &c)| (s / c, (s + n - 1) / c))
            .collect()
    }
}

/// Iterates over every index in the inclusive per-dimension ranges, last dimension fastest.
pub fn for_each_index(ranges: &[(u64, u64)], mut f: impl FnMut(&[u64])) {
    if ranges.iter().any(|(lo, hi)| lo > hi) {
        return;
    }
    let mut idx: Vec<u64> = ranges.iter().map(|r| r.0).collect();
    loop {
        f(&idx);
        let mut d = ranges.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            if idx[d] < ranges[d].1 {
                idx[d] += 1;
                break;
            }
            idx[d] = ranges[d].0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid() {
        let g = RegularGrid::new(vec![5, 6]).unwrap();
        assert_eq!(g.grid_shape(&[13, 17]), [3, 3]);
        assert_eq!(g.grid_shape(&[0, 17]), [0, 3]);
        assert_eq!(g.chunk_range(&[4, 6], &[2, 6]), [(0, 1), (1, 1)]);
        assert!(RegularGrid::new(vec![1, 0]).is_err());
    }

    #[test]
    fn odometer() {
        let mut v = vec![];
        for_each_index(&[(0, 1), (2, 4)], |i| v.push(i.to_vec()));
        assert_eq!(v, [[0, 2], [0, 3], [0, 4], [1, 2], [1, 3], [1, 4]]);
        let mut n = 0;
        for_each_index(&[], |_| n += 1);
        assert_eq!(n, 1, "0-d has exactly one index");
    }
}
