//! The `rectilinear` chunk grid (zarr-extensions `chunk-grids/rectilinear`): per dimension either one
//! integer (a regular step repeated to cover the dimension) or a list of chunk edge lengths, where
//! `[size, count]` pairs are run-length encoded repetitions. Edges may overrun the array.
//!
//! Example: `{"name": "rectilinear", "configuration": {"kind": "inline",
//! "chunk_shapes": [4, [1, 2, 3], [[4, 2]], [[1, 3], 3]]}}`.
//!
//! Edge lists are kept as runs, never expanded: a run-length count of 10^12 costs one entry.

use super::ChunkGrid;
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::sync::Arc;

/// One run of equal chunks along a dimension.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    /// Index of the run's first chunk.
    first_chunk: u64,
    /// Element index where the run starts.
    origin: u64,
    /// Edge length of each chunk.
    size: u64,
    /// Number of chunks.
    count: u64,
}

/// One dimension of a rectilinear grid.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Dim {
    /// A single integer: chunks of this length, as many as needed.
    Step(u64),
    /// Explicit edges as runs (non-empty), covering `total` elements.
    Edges { runs: Vec<Run>, total: u64 },
}

/// A rectilinear chunk grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RectilinearGrid {
    dims: Vec<Dim>,
}

fn meta_err(m: impl Into<String>) -> Error {
    Error::Metadata(format!("chunk_grid 'rectilinear': {}", m.into()))
}

fn positive(v: &Value, what: &str) -> Result<u64> {
    v.as_u64().filter(|&x| x > 0).ok_or_else(|| meta_err(format!("{what} must be a positive integer, got {v}")))
}

impl Dim {
    fn parse(v: &Value, d: usize) -> Result<Dim> {
        if let Some(list) = v.as_array() {
            let mut runs: Vec<Run> = Vec::new();
            let (mut chunk, mut origin) = (0u64, 0u64);
            for item in list {
                let (size, count) = match item {
                    Value::Array(pair) if pair.len() == 2 => {
                        (positive(&pair[0], "an edge length")?, positive(&pair[1], "a run-length count")?)
                    }
                    Value::Array(_) => return Err(meta_err(format!("dimension {d}: a run must be [size, count], got {item}"))),
                    _ => (positive(item, "an edge length")?, 1),
                };
                runs.push(Run { first_chunk: chunk, origin, size, count });
                let overflow = || meta_err(format!("dimension {d}: the edges overflow 64 bits"));
                chunk = chunk.checked_add(count).ok_or_else(overflow)?;
                origin = size.checked_mul(count).and_then(|n| n.checked_add(origin)).ok_or_else(overflow)?;
            }
            if runs.is_empty() {
                return Err(meta_err(format!("dimension {d} has no chunk edges")));
            }
            Ok(Dim::Edges { runs, total: origin })
        } else {
            Ok(Dim::Step(positive(v, &format!("dimension {d}'s chunk size"))?))
        }
    }

    fn run_of_index(runs: &[Run], i: u64) -> &Run {
        let k = runs.partition_point(|r| r.origin <= i);
        &runs[k.saturating_sub(1)]
    }

    fn run_of_chunk(runs: &[Run], c: u64) -> &Run {
        let k = runs.partition_point(|r| r.first_chunk <= c);
        &runs[k.saturating_sub(1)]
    }

    fn chunk_index(&self, i: u64) -> u64 {
        match self {
            Dim::Step(m) => i / m,
            Dim::Edges { runs, .. } => {
                let r = Dim::run_of_index(runs, i);
                r.first_chunk + (i - r.origin) / r.size
            }
        }
    }

    fn chunk_span(&self, c: u64) -> (u64, u64) {
        match self {
            Dim::Step(m) => (c.saturating_mul(*m), *m),
            Dim::Edges { runs, .. } => {
                let r = Dim::run_of_chunk(runs, c);
                (r.origin + (c - r.first_chunk).min(r.count - 1) * r.size, r.size)
            }
        }
    }

    /// Chunks holding at least one of `extent` elements.
    fn num_chunks(&self, extent: u64) -> u64 {
        if extent == 0 {
            0
        } else {
            self.chunk_index(extent - 1) + 1
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Dim::Step(m) => json!(m),
            Dim::Edges { runs, .. } => {
                // Adjacent runs of one size are merged; runs of one chunk are bare integers (zarr-python's form).
                let mut merged: Vec<(u64, u64)> = Vec::new();
                for r in runs {
                    match merged.last_mut() {
                        Some((s, n)) if *s == r.size => *n += r.count,
                        _ => merged.push((r.size, r.count)),
                    }
                }
                Value::Array(merged.into_iter().map(|(s, n)| if n == 1 { json!(s) } else { json!([s, n]) }).collect())
            }
        }
    }
}

impl RectilinearGrid {
    /// Parses the grid's `configuration` for an array of `shape`; the edges must cover the shape.
    pub fn from_v3(cfg: Option<&serde_json::Map<String, Value>>, shape: &[u64]) -> Result<RectilinearGrid> {
        let cfg = cfg.ok_or_else(|| meta_err("missing configuration"))?;
        if let Some(k) = cfg.keys().find(|k| *k != "kind" && *k != "chunk_shapes") {
            return Err(meta_err(format!("unknown configuration member '{k}'")));
        }
        match cfg.get("kind") {
            Some(Value::String(k)) if k == "inline" => {}
            Some(Value::String(k)) => return Err(Error::Unsupported(format!("chunk_grid 'rectilinear': unsupported kind '{k}'"))),
            Some(v) => return Err(meta_err(format!("kind must be \"inline\", got {v}"))),
            None => return Err(meta_err("missing kind")),
        }
        let shapes = cfg.get("chunk_shapes").and_then(Value::as_array).ok_or_else(|| meta_err("chunk_shapes must be a list"))?;
        if shapes.len() != shape.len() {
            return Err(meta_err(format!("chunk_shapes has {} dimensions, shape has {}", shapes.len(), shape.len())));
        }
        let dims = shapes.iter().enumerate().map(|(d, v)| Dim::parse(v, d)).collect::<Result<Vec<_>>>()?;
        let grid = RectilinearGrid { dims };
        grid.check_covers(shape)?;
        Ok(grid)
    }

    fn check_covers(&self, shape: &[u64]) -> Result<()> {
        for (d, (dim, &n)) in self.dims.iter().zip(shape).enumerate() {
            if let Dim::Edges { total, .. } = dim {
                if *total < n {
                    return Err(meta_err(format!("dimension {d}: the edges sum to {total}, less than the extent {n}")));
                }
            }
        }
        Ok(())
    }
}

impl ChunkGrid for RectilinearGrid {
    fn rank(&self) -> usize {
        self.dims.len()
    }

    fn grid_shape(&self, shape: &[u64]) -> Vec<u64> {
        self.dims.iter().zip(shape).map(|(d, &n)| d.num_chunks(n)).collect()
    }

    fn chunk_index(&self, d: usize, i: u64) -> u64 {
        self.dims[d].chunk_index(i)
    }

    fn chunk_span(&self, d: usize, c: u64) -> (u64, u64) {
        self.dims[d].chunk_span(c)
    }

    fn regular_shape(&self) -> Option<&[u64]> {
        None
    }

    fn distinct_extents(&self, d: usize) -> Vec<u64> {
        match &self.dims[d] {
            Dim::Step(m) => vec![*m],
            Dim::Edges { runs, .. } => {
                let mut v: Vec<u64> = runs.iter().map(|r| r.size).collect();
                v.sort_unstable();
                v.dedup();
                v
            }
        }
    }

    /// As zarr-python: an explicit edge list that no longer covers the new extent gets one more chunk
    /// of the missing length; shrinking keeps the edges.
    fn resized(&self, shape: &[u64]) -> Result<Arc<dyn ChunkGrid>> {
        let mut dims = self.dims.clone();
        for (dim, &n) in dims.iter_mut().zip(shape) {
            if let Dim::Edges { runs, total } = dim {
                if n > *total {
                    let last = runs.last().unwrap();
                    runs.push(Run { first_chunk: last.first_chunk + last.count, origin: *total, size: n - *total, count: 1 });
                    *total = n;
                }
            }
        }
        Ok(Arc::new(RectilinearGrid { dims }))
    }

    fn to_json(&self) -> Value {
        json!({"name": "rectilinear", "configuration": {
            "kind": "inline",
            "chunk_shapes": self.dims.iter().map(Dim::to_json).collect::<Vec<_>>(),
        }})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(shapes: Value, shape: &[u64]) -> Result<RectilinearGrid> {
        let cfg = json!({"kind": "inline", "chunk_shapes": shapes});
        RectilinearGrid::from_v3(cfg.as_object(), shape)
    }

    #[test]
    fn spec_example() {
        let g = grid(json!([4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]]), &[6; 5]).unwrap();
        assert_eq!(g.grid_shape(&[6; 5]), [2, 3, 2, 4, 2]);
        assert_eq!(g.chunk_index(1, 0), 0);
        assert_eq!(g.chunk_index(1, 2), 1);
        assert_eq!(g.chunk_index(1, 3), 2);
        assert_eq!(g.chunk_span(1, 2), (3, 3));
        assert_eq!(g.chunk_span(3, 2), (2, 1));
        assert_eq!(g.chunk_span(3, 3), (3, 3));
        assert_eq!(g.chunk_index(3, 5), 3);
        assert_eq!(g.chunk_shape_at(&[1, 2, 1, 3, 0]), [4, 3, 4, 3, 4]);
        // Brute force against the expanded edges.
        let edges: Vec<u64> = vec![1, 1, 1, 3];
        let mut starts = vec![0];
        for e in &edges {
            starts.push(starts.last().unwrap() + e);
        }
        for i in 0..6 {
            let c = starts.iter().rposition(|&s| s <= i).unwrap() as u64;
            assert_eq!(g.chunk_index(3, i), c);
        }
        assert_eq!(g.to_json()["configuration"]["chunk_shapes"], json!([4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [[4, 3]]]));
    }

    #[test]
    fn validation() {
        assert!(matches!(grid(json!([[1, 2]]), &[4]), Err(Error::Metadata(_))));
        assert!(grid(json!([[1, 2]]), &[3]).is_ok());
        assert!(matches!(grid(json!([[]]), &[0]), Err(Error::Metadata(_))));
        assert!(matches!(grid(json!([[0]]), &[0]), Err(Error::Metadata(_))));
        assert!(matches!(grid(json!([[[2, 0]]]), &[0]), Err(Error::Metadata(_))));
        assert!(matches!(grid(json!([[[2, 3, 4]]]), &[0]), Err(Error::Metadata(_))));
        assert!(matches!(grid(json!([0]), &[0]), Err(Error::Metadata(_))));
        assert!(matches!(grid(json!([[[u64::MAX, 2]]]), &[0]), Err(Error::Metadata(_))));
        assert!(matches!(grid(json!([3, 3]), &[9]), Err(Error::Metadata(_))));
        let cfg = json!({"kind": "other", "chunk_shapes": [3]});
        assert!(matches!(RectilinearGrid::from_v3(cfg.as_object(), &[3]), Err(Error::Unsupported(_))));
        // A huge run-length count is one entry, not an expansion.
        let g = grid(json!([[[1, 1_000_000_000_000u64]]]), &[5]).unwrap();
        assert_eq!(g.chunk_index(0, 999_999), 999_999);
    }

    #[test]
    fn resize_appends_an_edge() {
        let g = grid(json!([[5, 5], 3]), &[10, 7]).unwrap();
        let r = g.resized(&[14, 20]).unwrap();
        assert_eq!(r.to_json()["configuration"]["chunk_shapes"], json!([[[5, 2], 4], 3]));
        assert_eq!(r.grid_shape(&[14, 20]), [3, 7]);
        let s = g.resized(&[3, 2]).unwrap();
        assert_eq!(s.to_json(), g.to_json());
    }
}
