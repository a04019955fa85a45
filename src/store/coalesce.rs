//! Coalescing byte ranges: the references of one read into one target whose byte ranges are adjacent
//! or close are fetched in one read of the span that holds them (docs/reference-stores.md, "Reading").
//! Ranges of one target are sorted by offset and merged while the next one starts at most
//! [`COALESCE_GAP`] bytes after the end of the span so far and the span stays within
//! [`COALESCE_MAX`] bytes; the bytes of a gap are read and dropped.

use std::sync::Arc;

/// Ranges at most this many bytes apart are read as one (the gap is read too): about what a request
/// to an object store costs in transfer time, and small against a local read.
pub(crate) const COALESCE_GAP: u64 = 64 << 10;
/// The longest span one merged read covers.
pub(crate) const COALESCE_MAX: u64 = 16 << 20;

/// One range to read: the bytes `offset..offset + len` of the target `url`, wanted for item `item`.
#[derive(Debug, Clone)]
pub struct Piece {
    /// The caller's number for it (the index of its key).
    pub item: usize,
    /// The target.
    pub url: Arc<str>,
    /// Where the range starts in the target.
    pub offset: u64,
    /// The range's length.
    pub len: u64,
}

/// One read: the bytes `offset..offset + len` of `url`, holding `pieces` (each at `piece.offset -
/// offset` in it).
#[derive(Debug)]
pub struct Span {
    /// The target.
    pub url: Arc<str>,
    /// Where the span starts in the target.
    pub offset: u64,
    /// The span's length.
    pub len: u64,
    /// The ranges it holds, by offset.
    pub pieces: Vec<Piece>,
}

/// The reads that fetch `pieces`: pieces of the same target that are adjacent, overlapping or at
/// most `gap` bytes apart share a read of at most `max` bytes (a piece longer than `max` is a read of
/// its own). Spans come sorted by target and offset.
pub fn plan(mut pieces: Vec<Piece>, gap: u64, max: u64) -> Vec<Span> {
    pieces.sort_by(|a, b| (&a.url, a.offset, a.len).cmp(&(&b.url, b.offset, b.len)));
    let mut out: Vec<Span> = Vec::new();
    for p in pieces {
        let end = p.offset.saturating_add(p.len);
        if let Some(s) = out.last_mut() {
            let s_end = s.offset + s.len;
            let joins = s.url == p.url && p.offset <= s_end.saturating_add(gap) && end.max(s_end) - s.offset <= max;
            if joins {
                s.len = end.max(s_end) - s.offset;
                s.pieces.push(p);
                continue;
            }
        }
        out.push(Span { url: p.url.clone(), offset: p.offset, len: p.len, pieces: vec![p] });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(item: usize, url: &str, offset: u64, len: u64) -> Piece {
        Piece { item, url: url.into(), offset, len }
    }

    #[test]
    fn adjacent_and_close_ranges_merge() {
        let spans = plan(
            vec![
                piece(0, "a", 100, 10),
                piece(1, "a", 110, 10), // adjacent
                piece(2, "b", 0, 5),    // another target
                piece(3, "a", 130, 10), // 10 bytes after the span: within the gap
                piece(4, "a", 1000, 10), // too far
                piece(5, "a", 135, 2),  // inside the span
            ],
            64,
            1 << 20,
        );
        let got: Vec<(&str, u64, u64, Vec<usize>)> =
            spans.iter().map(|s| (&*s.url, s.offset, s.len, s.pieces.iter().map(|p| p.item).collect())).collect();
        assert_eq!(got, vec![("a", 100, 40, vec![0, 1, 3, 5]), ("a", 1000, 10, vec![4]), ("b", 0, 5, vec![2])]);
    }

    #[test]
    fn spans_stay_within_the_maximum() {
        let pieces: Vec<Piece> = (0..10).map(|k| piece(k, "a", k as u64 * 100, 100)).collect();
        let spans = plan(pieces, 0, 300);
        assert_eq!(spans.iter().map(|s| s.pieces.len()).collect::<Vec<_>>(), vec![3, 3, 3, 1]);
        assert!(spans.iter().all(|s| s.len <= 300));
        // one piece longer than the maximum is a read of its own
        let spans = plan(vec![piece(0, "a", 0, 1000), piece(1, "a", 1000, 10)], 0, 300);
        assert_eq!(spans.len(), 2);
    }
}
