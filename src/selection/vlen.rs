//! Boxes of variable-length elements (`string`, `bytes`, v2 vlen-array), the counterpart of a C-order
//! buffer of fixed-size elements.
//!
//! - [`VlenData`]: what crosses the API, one offsets array (n + 1 entries) and one data buffer.
//! - [`VlenChunk`]: a decoded chunk (or a box of one) as the codec chain hands it over: one buffer and
//!   the byte span of each element in it, in C order. Spans may share bytes (a fill value stored
//!   once) and need not be in buffer order (after a transpose), so moving elements (selecting a box,
//!   permuting) moves spans, never bytes.
//! - [`VlenPieces`]: a decoded box as the chunks that cover it, each with its place (a shard's inner
//!   chunks): a read copies each piece's elements straight into its [`VlenData`]; only a chain that
//!   permutes the whole chunk (transpose) assembles the pieces into one [`VlenChunk`] first.

use super::{for_each_pair_run, Selection};
use crate::error::{Error, Result};

/// Variable-length elements: element i is `data[offsets[i] .. offsets[i+1]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VlenData {
    /// n + 1 non-decreasing offsets into `data`, starting at 0.
    pub offsets: Vec<u64>,
    /// The elements' bytes, back to back.
    pub data: Vec<u8>,
}

impl VlenData {
    /// Builds from a list of elements.
    pub fn from_elements<T: AsRef<[u8]>>(elems: &[T]) -> VlenData {
        let mut offsets = Vec::with_capacity(elems.len() + 1);
        let mut data = Vec::new();
        offsets.push(0);
        for e in elems {
            data.extend_from_slice(e.as_ref());
            offsets.push(data.len() as u64);
        }
        VlenData { offsets, data }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        &self.data[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

/// A C-order box of variable-length elements: element i is `buf[spans[i].0 .. spans[i].1]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VlenChunk {
    /// The bytes the spans point into.
    pub buf: Vec<u8>,
    /// The byte range of each element in `buf`.
    pub spans: Vec<(usize, usize)>,
    /// Whether the elements lie back to back in order (`spans[i].1 == spans[i + 1].0`), as a parsed
    /// frame leaves them: a run of elements is then one run of bytes.
    pub packed: bool,
}

impl VlenChunk {
    /// `n` elements, all equal to `fill` (stored once).
    pub fn filled(n: usize, fill: &[u8]) -> Result<VlenChunk> {
        Ok(VlenChunk { buf: fill.to_vec(), spans: spans(n, (0, fill.len()))?, packed: n <= 1 || fill.is_empty() })
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Element `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        let (s, e) = self.spans[i];
        &self.buf[s..e]
    }

    /// Copies elements `k..k + run` back to back into `out` (exactly their total length): one copy
    /// where the chunk is packed, else one per run of adjacent elements.
    pub fn copy_run(&self, k: usize, run: usize, out: &mut [u8]) {
        let spans = &self.spans[k..k + run];
        if self.packed {
            out.copy_from_slice(&self.buf[spans[0].0..spans[run - 1].1]);
            return;
        }
        let (mut w, mut j) = (0, 0);
        while j < run {
            let (s, mut e) = spans[j];
            j += 1;
            while j < run && spans[j].0 == e {
                e = spans[j].1;
                j += 1;
            }
            out[w..w + e - s].copy_from_slice(&self.buf[s..e]);
            w += e - s;
        }
    }

    /// The elements as slices, in order.
    pub fn elements(&self) -> Vec<&[u8]> {
        self.spans.iter().map(|&(s, e)| &self.buf[s..e]).collect()
    }

    /// The box `sel` (dense) of this chunk of `shape`.
    pub fn select(self, shape: &[u64], sel: &Selection) -> Result<VlenChunk> {
        if sel.count == shape && sel.start.iter().all(|&s| s == 0) {
            return Ok(self);
        }
        let zeros = vec![0u64; shape.len()];
        let mut spans = spans(sel.num_elements().unwrap_or(0) as usize, (0, 0))?;
        for_each_pair_run(&zeros, shape, &sel.start, &sel.count, |r0, k0, run| {
            spans[r0..r0 + run].copy_from_slice(&self.spans[k0..k0 + run])
        });
        Ok(VlenChunk { buf: self.buf, spans, packed: false })
    }

    /// Moves the elements by a permutation: element `j` of the result is element `perm[j]` of this
    /// chunk (`inverse`: element `perm[j]` of the result is element `j`).
    pub fn permute(&mut self, perm: &[u64], inverse: bool) -> Result<()> {
        if perm.len() != self.spans.len() {
            return Err(Error::Internal(format!("a permutation of {} for {} elements", perm.len(), self.spans.len())));
        }
        let mut spans = spans(perm.len(), (0, 0))?;
        for (j, &p) in perm.iter().enumerate() {
            if inverse {
                spans[p as usize] = self.spans[j];
            } else {
                spans[j] = self.spans[p as usize];
            }
        }
        self.spans = spans;
        self.packed = false;
        Ok(())
    }

    /// The box of shape `count` assembled from `pieces` (together they cover it): their buffers are
    /// joined, their spans placed. Only an array->array codec that moves elements needs this; reads
    /// place the pieces straight into their result ([`VlenPieces`]).
    pub fn assemble(count: &[u64], pieces: Vec<VlenPiece>) -> Result<VlenChunk> {
        let n = count.iter().product::<u64>() as usize;
        let total: usize = pieces.iter().map(|p| p.chunk.buf.len()).sum();
        let mut buf = Vec::new();
        crate::error::try_reserve(&mut buf, total)?;
        let mut spans = spans(n, (0, 0))?;
        let zeros = vec![0u64; count.len()];
        for p in pieces {
            let base = buf.len();
            buf.extend_from_slice(&p.chunk.buf);
            for_each_pair_run(&p.out, &p.count, &zeros, count, |r0, k0, run| {
                for j in 0..run {
                    let (s, e) = p.chunk.spans[k0 + j];
                    spans[r0 + j] = (base + s, base + e);
                }
            });
        }
        Ok(VlenChunk { buf, spans, packed: false })
    }
}

/// One decoded piece of a box: a C-order box of shape `count` whose first element sits at `out` in
/// the box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VlenPiece {
    /// Where the piece's first element sits in the box.
    pub out: Vec<u64>,
    /// The piece's shape.
    pub count: Vec<u64>,
    /// The piece's elements.
    pub chunk: VlenChunk,
}

/// A decoded box of variable-length elements as the pieces that cover it (a plain chunk is one piece,
/// a shard one per inner chunk it touches, nested shards offset their inner pieces), so that a read
/// copies each element once, from its decoded inner chunk into the result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VlenPieces(pub Vec<VlenPiece>);

impl VlenPieces {
    /// The box `chunk` of shape `count` as one piece.
    pub fn one(count: &[u64], chunk: VlenChunk) -> VlenPieces {
        VlenPieces(vec![VlenPiece { out: vec![0; count.len()], count: count.to_vec(), chunk }])
    }

    /// Moves every piece by `by` (these pieces cover a box whose first element sits at `by` in a
    /// larger one).
    pub fn shift(&mut self, by: &[u64]) {
        for p in &mut self.0 {
            for (o, b) in p.out.iter_mut().zip(by) {
                *o += b;
            }
        }
    }

    /// The box of shape `count` as one chunk (pieces assembled where there are several).
    pub fn into_chunk(mut self, count: &[u64]) -> Result<VlenChunk> {
        if self.0.len() == 1 && self.0[0].count == count {
            return Ok(self.0.pop().expect("one piece").chunk);
        }
        VlenChunk::assemble(count, self.0)
    }
}

/// `n` copies of `span`, or an error where they do not fit in memory.
fn spans(n: usize, span: (usize, usize)) -> Result<Vec<(usize, usize)>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::Memory(format!("cannot allocate {n} element spans")))?;
    v.resize(n, span);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(elems: &[&str]) -> VlenChunk {
        let d = VlenData::from_elements(elems);
        let spans = d.offsets.windows(2).map(|w| (w[0] as usize, w[1] as usize)).collect();
        VlenChunk { buf: d.data, spans, packed: true }
    }

    fn strs(c: &VlenChunk) -> Vec<String> {
        c.elements().iter().map(|e| String::from_utf8(e.to_vec()).unwrap()).collect()
    }

    #[test]
    fn select_permute_assemble() {
        // 2 x 3: a b c / d e f
        let c = chunk(&["a", "b", "c", "d", "e", "f"]);
        let sel = Selection::dense(&[0, 1], &[2, 2]);
        assert_eq!(strs(&c.clone().select(&[2, 3], &sel).unwrap()), ["b", "c", "e", "f"]);
        let mut t = c.clone();
        // the transpose 3 x 2 takes a d b e c f
        t.permute(&[0, 3, 1, 4, 2, 5], false).unwrap();
        assert_eq!(strs(&t), ["a", "d", "b", "e", "c", "f"]);
        t.permute(&[0, 3, 1, 4, 2, 5], true).unwrap();
        assert_eq!(t.elements(), c.elements());
        let f = VlenChunk::filled(2, b"-").unwrap();
        let piece = |out: Vec<u64>, count: Vec<u64>, chunk| VlenPiece { out, count, chunk };
        let mut pieces = VlenPieces(vec![piece(vec![0, 0], vec![2, 2], chunk(&["a", "b", "d", "e"])), piece(vec![0, 1], vec![2, 1], f)]);
        pieces.shift(&[0, 1]);
        assert_eq!(pieces.0[1].out, [0, 2]);
        pieces.0[0].out = vec![0, 0];
        let whole = pieces.into_chunk(&[2, 3]).unwrap();
        assert_eq!(strs(&whole), ["a", "b", "-", "d", "e", "-"]);
    }
}
