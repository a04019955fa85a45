//! Chunk grids: how an array's index space is cut into chunks. [`ChunkGrid`] is what the selection
//! engine asks of a grid; [`RegularGrid`] (every chunk the same shape, edge chunks extending past the
//! array) and [`rectilinear::RectilinearGrid`] (per dimension a list of chunk edge lengths) implement it.

pub mod rectilinear;

use crate::error::{Error, Result};
use serde_json::Value;

/// A chunk grid, dimension by dimension: which chunk holds an index, and where each chunk lies.
pub trait ChunkGrid: std::fmt::Debug + Send + Sync {
    /// Number of dimensions.
    fn rank(&self) -> usize;
    /// Number of chunks along each dimension for an array of `shape`.
    fn grid_shape(&self, shape: &[u64]) -> Vec<u64>;
    /// The chunk holding index `i` along dimension `d`.
    fn chunk_index(&self, d: usize, i: u64) -> u64;
    /// The first index and the extent of chunk `c` along dimension `d` (the extent may reach past the
    /// array's end: edge chunks are stored whole).
    fn chunk_span(&self, d: usize, c: u64) -> (u64, u64);
    /// The shape of the chunk at grid coordinates `chunk`.
    fn chunk_shape_at(&self, chunk: &[u64]) -> Vec<u64> {
        chunk.iter().enumerate().map(|(d, &c)| self.chunk_span(d, c).1).collect()
    }
    /// The chunk shape when every chunk has the same one.
    fn regular_shape(&self) -> Option<&[u64]>;
    /// The distinct chunk extents along dimension `d` (for validating codecs against every chunk shape).
    fn distinct_extents(&self, d: usize) -> Vec<u64>;
    /// The grid for the array resized to `shape` (a rectilinear grid grows an edge list to cover it).
    fn resized(&self, shape: &[u64]) -> Result<std::sync::Arc<dyn ChunkGrid>>;
    /// The v3 `chunk_grid` metadata object.
    fn to_json(&self) -> Value;
}

impl ChunkGrid for RegularGrid {
    fn rank(&self) -> usize {
        self.chunk_shape.len()
    }

    fn grid_shape(&self, shape: &[u64]) -> Vec<u64> {
        RegularGrid::grid_shape(self, shape)
    }

    fn chunk_index(&self, d: usize, i: u64) -> u64 {
        i / self.chunk_shape[d]
    }

    fn chunk_span(&self, d: usize, c: u64) -> (u64, u64) {
        let n = self.chunk_shape[d];
        (c.saturating_mul(n), n)
    }

    fn regular_shape(&self) -> Option<&[u64]> {
        Some(&self.chunk_shape)
    }

    fn distinct_extents(&self, d: usize) -> Vec<u64> {
        vec![self.chunk_shape[d]]
    }

    fn resized(&self, _shape: &[u64]) -> Result<std::sync::Arc<dyn ChunkGrid>> {
        Ok(std::sync::Arc::new(self.clone()))
    }

    fn to_json(&self) -> Value {
        serde_json::json!({"name": "regular", "configuration": {"chunk_shape": self.chunk_shape}})
    }
}

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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid() {
        let g = RegularGrid::new(vec![5, 6]).unwrap();
        assert_eq!(g.grid_shape(&[13, 17]), [3, 3]);
        assert_eq!(g.grid_shape(&[0, 17]), [0, 3]);
        assert_eq!(ChunkGrid::chunk_span(&g, 1, 2), (12, 6));
        assert_eq!(g.chunk_index(0, 14), 2);
        assert!(RegularGrid::new(vec![1, 0]).is_err());
    }
}
