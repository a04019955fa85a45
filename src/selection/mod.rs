//! The selection engine: every piece of region arithmetic in libzarr lives here.
//!
//! - [`Selection`]: per dimension a start, a count and a step (a strided hyperslab, as HDF5's
//!   `H5Sselect_hyperslab` and netCDF's `nc_get_vars` take it); a dense box has every step 1.
//! - [`Selection::project`]: the selection cut along a [`ChunkGrid`] into the part of each chunk it
//!   touches ([`ChunkPart`]: which chunk, where in the chunk, where in the caller's buffer), listed;
//!   [`Selection::parts`] makes the same parts one at a time ([`Parts`], which reads and writes take in
//!   batches).
//! - [`layout::Layout`]: a buffer as an element size and a byte stride per dimension (C order,
//!   Fortran order, a chunk stepped by the selection, a caller's arbitrary strides).
//! - [`copy`]: copies, fills and validates boxes between two layouts in whole runs, converting element
//!   types ([`convert::Conv`]) and byte order inside the same pass.
//! - [`vlen`]: boxes of variable-length elements (the API's offsets + data, a decoded chunk's spans).

pub mod convert;
pub mod copy;
pub mod dest;
pub mod layout;
pub mod vlen;

use crate::chunk_grid::ChunkGrid;
use crate::error::{Error, Result};
pub use dest::{with_box, Dest};
pub use layout::Layout;

/// A strided hyperslab: along dimension `d` the indices `start[d] + k * step[d]` for `k < count[d]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// First index per dimension.
    pub start: Vec<u64>,
    /// Number of selected indices per dimension.
    pub count: Vec<u64>,
    /// Distance between selected indices per dimension (all >= 1).
    pub step: Vec<u64>,
}

/// The part of one chunk that a selection touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkPart {
    /// The chunk's grid coordinates.
    pub chunk: Vec<u64>,
    /// This part as a selection within the chunk (chunk-local start, count, and the selection's step).
    pub local: Selection,
    /// Where this part starts among the selected elements (per dimension, in units of selected elements).
    pub out: Vec<u64>,
}

/// One dimension of a [`ChunkPart`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Piece {
    chunk: u64,
    local: u64,
    count: u64,
    out: u64,
}

impl Selection {
    /// The dense box `start..start+count` (every step 1).
    pub fn dense(start: &[u64], count: &[u64]) -> Selection {
        Selection { start: start.to_vec(), count: count.to_vec(), step: vec![1; count.len()] }
    }

    /// A selection from caller arguments: `step` `None` means all 1; steps must be >= 1.
    pub fn new(start: &[u64], count: &[u64], step: Option<&[u64]>) -> Result<Selection> {
        let step = match step {
            None => vec![1; count.len()],
            Some(s) => {
                if let Some(d) = s.iter().position(|&x| x == 0) {
                    let d = crate::index_order::dimension(d, s.len());
                    return Err(Error::InvalidArgument(format!("step[{d}] is 0 (steps must be at least 1)")));
                }
                s.to_vec()
            }
        };
        if start.len() != count.len() || step.len() != count.len() {
            return Err(Error::InvalidArgument("start, count and step differ in rank".into()));
        }
        Ok(Selection { start: start.to_vec(), count: count.to_vec(), step })
    }

    /// The byte span `[first, end)` of a buffer laid out as `layout` (a C-order chunk) that holds
    /// this (non-empty) selection.
    pub fn byte_span(&self, layout: &Layout) -> (usize, usize) {
        let first = layout.offset_of(&self.start);
        (first, first + layout.stepped(&self.step).span(&self.count).expect("a selection inside a chunk"))
    }

    /// Whether this selection, local to a chunk that spans `span(d) = (origin, extent)` along each
    /// dimension `d` of an array of `shape`, covers every element of the chunk that lies inside the
    /// array (a write then replaces the chunk without reading it).
    pub fn covers_chunk(&self, shape: &[u64], span: impl Fn(usize) -> (u64, u64)) -> bool {
        (0..self.rank()).all(|d| {
            let (origin, extent) = span(d);
            self.count[d] == origin.saturating_add(extent).min(shape[d]).saturating_sub(origin)
        })
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.count.len()
    }

    /// Whether every step is 1.
    pub fn is_dense(&self) -> bool {
        self.step.iter().all(|&s| s == 1)
    }

    /// Number of selected elements, `None` on overflow.
    pub fn num_elements(&self) -> Option<u64> {
        self.count.iter().try_fold(1u64, |a, &c| a.checked_mul(c))
    }

    /// Whether nothing is selected.
    pub fn is_empty(&self) -> bool {
        self.count.contains(&0)
    }

    /// The last selected index along `d` (count must be > 0), `None` on overflow.
    fn last(&self, d: usize) -> Option<u64> {
        (self.count[d] - 1).checked_mul(self.step[d]).and_then(|x| x.checked_add(self.start[d]))
    }

    /// The extent of the bounding box along `d`: `last - start + 1` (count must be > 0).
    pub fn extent(&self, d: usize) -> u64 {
        (self.count[d] - 1) * self.step[d] + 1
    }

    /// Fails unless the selection has the array's rank and lies inside `shape`.
    pub fn check_within(&self, shape: &[u64]) -> Result<()> {
        if self.rank() != shape.len() {
            return Err(Error::InvalidArgument(format!(
                "the selection has rank {} but the array has rank {}",
                self.rank(),
                shape.len()
            )));
        }
        for d in 0..self.rank() {
            let inside = if self.count[d] == 0 { self.start[d] <= shape[d] } else { self.last(d).is_some_and(|l| l < shape[d]) };
            if !inside {
                // Written in the caller's index convention (crate::index_order).
                use crate::index_order::{dimension, extents, positions};
                return Err(Error::OutOfBounds(format!(
                    "selection start {} count {} step {} exceeds the array shape {} in dimension {}",
                    positions(&self.start),
                    extents(&self.count),
                    extents(&self.step),
                    extents(shape),
                    dimension(d, self.rank())
                )));
            }
        }
        Ok(())
    }

    /// Cuts the selection along `grid`: one [`ChunkPart`] per chunk holding at least one selected element,
    /// chunks in C order. Nothing when the selection is empty. Every allocation is fallible: a selection
    /// touching more chunks than memory can describe (each part takes about a hundred bytes: a large
    /// region of an array of tiny chunks) is [`crate::Error::Memory`], never an abort. Reads and writes
    /// of regions do not list the parts: they take them from [`Selection::parts`] a batch at a time.
    pub fn project(&self, grid: &dyn ChunkGrid) -> crate::Result<Vec<ChunkPart>> {
        let mut parts = self.parts(grid);
        let total = parts.remaining().ok_or_else(|| {
            crate::Error::Memory("the selection touches more chunks than memory can describe (more than 2^64)".into())
        })?;
        let total = usize::try_from(total)
            .map_err(|_| crate::Error::Memory(format!("the selection touches {total} chunks, more than memory can describe")))?;
        let mut out = Vec::new();
        crate::error::try_reserve(&mut out, total)?;
        while let Some(p) = parts.try_next()? {
            out.push(p);
        }
        Ok(out)
    }

    /// The parts of [`Selection::project`], one at a time, without listing them: memory is that of one
    /// part whatever the number of chunks the selection touches.
    pub fn parts<'a>(&'a self, grid: &'a dyn ChunkGrid) -> Parts<'a> {
        let cur = if self.is_empty() { Vec::new() } else { (0..self.rank()).map(|d| self.piece(grid, d, 0)).collect() };
        Parts { sel: self, grid, cur, done: self.is_empty() }
    }

    /// The piece of dimension `d` that starts at the `k`-th selected index: its chunk and the selected
    /// indices of the selection in that chunk (chunks the step jumps over are not visited).
    fn piece(&self, grid: &dyn ChunkGrid, d: usize, k: u64) -> Piece {
        let (start, count, step) = (self.start[d], self.count[d], self.step[d]);
        let i = start + k * step;
        let c = grid.chunk_index(d, i);
        let (origin, extent) = grid.chunk_span(d, c);
        let end = origin.saturating_add(extent);
        let k_last = ((end - 1 - start) / step).min(count - 1);
        Piece { chunk: c, local: i - origin, count: k_last - k + 1, out: k }
    }
}

/// The parts of a selection along a chunk grid in C order of their chunks, made one at a time
/// ([`Selection::parts`]): an odometer over the per-dimension pieces, the last dimension fastest, each
/// piece computed from the grid when the odometer reaches it.
pub struct Parts<'a> {
    sel: &'a Selection,
    grid: &'a dyn ChunkGrid,
    /// The current piece of each dimension.
    cur: Vec<Piece>,
    done: bool,
}

impl Parts<'_> {
    /// The next part; `Error::Memory` when its few small vectors cannot be allocated.
    pub fn try_next(&mut self) -> crate::Result<Option<ChunkPart>> {
        if self.done {
            return Ok(None);
        }
        let cur = &self.cur;
        let part = ChunkPart {
            chunk: try_collect(cur.iter().map(|p| p.chunk), cur.len())?,
            local: Selection {
                start: try_collect(cur.iter().map(|p| p.local), cur.len())?,
                count: try_collect(cur.iter().map(|p| p.count), cur.len())?,
                step: try_collect(self.sel.step.iter().copied(), cur.len())?,
            },
            out: try_collect(cur.iter().map(|p| p.out), cur.len())?,
        };
        // Odometer, last dimension fastest.
        let mut d = self.cur.len();
        loop {
            if d == 0 {
                self.done = true;
                break;
            }
            d -= 1;
            let next = self.cur[d].out + self.cur[d].count;
            if next < self.sel.count[d] {
                self.cur[d] = self.sel.piece(self.grid, d, next);
                break;
            }
            self.cur[d] = self.sel.piece(self.grid, d, 0);
        }
        Ok(Some(part))
    }

    /// Up to `n` next parts (none: all were taken), in a vector allocated fallibly.
    pub fn next_batch(&mut self, n: usize) -> crate::Result<Vec<ChunkPart>> {
        let mut batch = Vec::new();
        while batch.len() < n {
            let Some(p) = self.try_next()? else { break };
            if batch.len() == batch.capacity() {
                let more = batch.len().max(4).min(n - batch.len());
                crate::error::try_reserve(&mut batch, more)?;
            }
            batch.push(p);
        }
        Ok(batch)
    }

    /// Whether every part was taken.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The number of parts not yet taken (`None`: more than 2^64), counted without allocating: time
    /// proportional to the pieces of the dimensions.
    pub fn remaining(&self) -> Option<u64> {
        if self.done {
            return Some(0);
        }
        // Parts left = sum over d of (pieces of d after the current one) * (pieces of every later d),
        // plus the current part.
        let mut left: u64 = 1;
        let mut later: u64 = 1;
        for d in (0..self.cur.len()).rev() {
            let (after, all) = self.pieces_after(d);
            left = left.checked_add(after.checked_mul(later)?)?;
            later = later.checked_mul(all)?;
        }
        Some(left)
    }

    /// The pieces of dimension `d` after the current one, and all its pieces.
    fn pieces_after(&self, d: usize) -> (u64, u64) {
        let (mut k, mut all, mut after) = (0u64, 0u64, 0u64);
        while k < self.sel.count[d] {
            let p = self.sel.piece(self.grid, d, k);
            all += 1;
            if p.out > self.cur[d].out {
                after += 1;
            }
            k = p.out + p.count;
        }
        (after, all)
    }
}

/// The `n` items of `items` in a vector allocated fallibly.
fn try_collect(items: impl Iterator<Item = u64>, n: usize) -> crate::Result<Vec<u64>> {
    let mut v = Vec::new();
    crate::error::try_reserve(&mut v, n)?;
    v.extend(items);
    Ok(v)
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

/// For the elements in both the box `start..start+count` and the unit box `origin..origin+shape`, a
/// run at a time: `f(r0, k0, n)` stands for the pairs `(r0 + j, k0 + j)`, `j < n`, where `r` is an
/// element's C-order index in the first box and `k` its C-order index in the second.
pub fn for_each_pair_run(origin: &[u64], shape: &[u64], start: &[u64], count: &[u64], mut f: impl FnMut(usize, usize, usize)) {
    let rank = shape.len();
    if rank == 0 {
        f(0, 0, 1);
        return;
    }
    let mut lo = vec![0u64; rank];
    let mut hi = vec![0u64; rank];
    for d in 0..rank {
        lo[d] = start[d].max(origin[d]);
        hi[d] = (start[d] + count[d]).min(origin[d].saturating_add(shape[d]));
        if lo[d] >= hi[d] {
            return;
        }
    }
    let (mut rs, mut us) = (vec![1usize; rank], vec![1usize; rank]);
    for d in (0..rank - 1).rev() {
        rs[d] = rs[d + 1] * count[d + 1] as usize;
        us[d] = us[d + 1] * shape[d + 1] as usize;
    }
    let run = (hi[rank - 1] - lo[rank - 1]) as usize;
    let mut idx = lo.clone();
    loop {
        let mut r0 = 0usize;
        let mut k0 = 0usize;
        for d in 0..rank {
            r0 += (idx[d] - start[d]) as usize * rs[d];
            k0 += (idx[d] - origin[d]) as usize * us[d];
        }
        f(r0, k0, run);
        let mut d = rank - 1;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < hi[d] {
                break;
            }
            idx[d] = lo[d];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk_grid::RegularGrid;

    /// Every selected index of dimension 0 in order, as (chunk, index within chunk, output index).
    fn flatten(parts: &[ChunkPart], cs: u64) -> Vec<(u64, u64, u64)> {
        let mut v = Vec::new();
        for p in parts {
            for k in 0..p.local.count[0] {
                let local = p.local.start[0] + k * p.local.step[0];
                assert!(local < cs);
                v.push((p.chunk[0], local, p.out[0] + k));
            }
        }
        v
    }

    #[test]
    fn projection_matches_brute_force() {
        for cs in 1..7u64 {
            let grid = RegularGrid::new(vec![cs]).unwrap();
            for start in 0..9 {
                for step in 1..9 {
                    for count in 0..8 {
                        let sel = Selection { start: vec![start], count: vec![count], step: vec![step] };
                        let got = flatten(&sel.project(&grid).unwrap(), cs);
                        let want: Vec<_> =
                            (0..count).map(|k| { let i = start + k * step; (i / cs, i % cs, k) }).collect();
                        assert_eq!(got, want, "cs {cs} start {start} step {step} count {count}");
                    }
                }
            }
        }
    }

    #[test]
    fn projection_nd_and_zero_d() {
        let grid = RegularGrid::new(vec![4, 3]).unwrap();
        let sel = Selection { start: vec![1, 0], count: vec![3, 2], step: vec![3, 5] };
        let parts = sel.project(&grid).unwrap();
        // rows 1, 4, 7 -> chunks 0, 1, 1; cols 0, 5 -> chunks 0, 1
        let chunks: Vec<_> = parts.iter().map(|p| p.chunk.clone()).collect();
        assert_eq!(chunks, [vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]);
        assert_eq!(parts[3].local, Selection { start: vec![0, 2], count: vec![2, 1], step: vec![3, 5] });
        assert_eq!(parts[3].out, [1, 1]);
        let zero_d = Selection::dense(&[], &[]);
        assert_eq!(zero_d.project(&RegularGrid::new(vec![]).unwrap()).unwrap().len(), 1);
        // 2^60 one-element chunks (4 dimensions of 2^15): their parts cannot be listed, which is
        // Error::Memory (ZARR_ERR_MEMORY), not a capacity-overflow panic or an abort.
        let n = 1u64 << 15;
        let sel = Selection::dense(&[0; 4], &[n; 4]);
        let e = sel.project(&RegularGrid::new(vec![1; 4]).unwrap()).unwrap_err();
        assert!(matches!(e, crate::Error::Memory(_)), "{e:?}");
    }

    #[test]
    fn bounds() {
        let s = Selection::new(&[1], &[3], Some(&[4])).unwrap();
        assert!(s.check_within(&[10]).is_ok());
        assert!(matches!(s.check_within(&[9]), Err(Error::OutOfBounds(_))));
        assert!(Selection::new(&[0], &[1], Some(&[0])).is_err());
        let big = Selection::new(&[u64::MAX - 1], &[3], Some(&[u64::MAX])).unwrap();
        assert!(matches!(big.check_within(&[u64::MAX]), Err(Error::OutOfBounds(_))));
        assert!(Selection::new(&[5], &[0], None).unwrap().check_within(&[5]).is_ok());
        // the message speaks the thread's index convention
        let s2 = Selection::new(&[0, 7], &[2, 4], None).unwrap();
        let c = s2.check_within(&[5, 10]).unwrap_err();
        assert_eq!(c.message(), "selection start [0, 7] count [2, 4] step [1, 1] exceeds the array shape [5, 10] in dimension 1");
        let was = crate::index_order::set(crate::index_order::IndexOrder::Fortran);
        let f = s2.check_within(&[5, 10]).unwrap_err();
        crate::index_order::set(was);
        assert_eq!(f.message(), "selection start [8, 1] count [4, 2] step [1, 1] exceeds the array shape [10, 5] in dimension 1");
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

    /// [`for_each_pair_run`] one pair at a time.
    fn for_each_pair(origin: &[u64], shape: &[u64], start: &[u64], count: &[u64], mut f: impl FnMut(usize, usize)) {
        for_each_pair_run(origin, shape, start, count, |r0, k0, run| {
            for j in 0..run {
                f(r0 + j, k0 + j);
            }
        })
    }

    #[test]
    fn pairs_cover_the_intersection() {
        // unit [2..6) x [3..5) against region [4..8) x [0..4): rows 4,5; cols 3
        let mut got = Vec::new();
        for_each_pair(&[2, 3], &[4, 2], &[4, 0], &[4, 4], |r, k| got.push((r, k)));
        assert_eq!(got, vec![(3, 4), (7, 6)]);
        let mut none = 0;
        for_each_pair(&[0], &[2], &[2], &[3], |_, _| none += 1);
        assert_eq!(none, 0);
        let mut zero_d = Vec::new();
        for_each_pair(&[], &[], &[], &[], |r, k| zero_d.push((r, k)));
        assert_eq!(zero_d, vec![(0, 0)]);
    }
}
