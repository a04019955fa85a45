//! How messages write indices: in C/Zarr order, 0-based (the default), or in Fortran order, 1-based,
//! for callers that see the array through a Fortran interface (dimensions reversed, as netCDF-Fortran
//! reverses them). A per-thread setting (zarr_set_message_index_order()), read when a message is made:
//! every message that quotes positions, extents or dimension numbers of a caller's selection builds
//! them with [`positions`], [`extents`] and [`dimension`].

use std::cell::Cell;

/// The conventions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexOrder {
    /// Zarr/C order (last dimension fastest), 0-based indices.
    C,
    /// Fortran order (first dimension fastest: Zarr's dimensions reversed), 1-based indices.
    Fortran,
}

thread_local! {
    static ORDER: Cell<IndexOrder> = const { Cell::new(IndexOrder::C) };
}

/// This thread's convention.
pub fn current() -> IndexOrder {
    ORDER.with(Cell::get)
}

/// Sets this thread's convention; returns the previous one.
pub fn set(order: IndexOrder) -> IndexOrder {
    ORDER.with(|o| o.replace(order))
}

fn list(v: impl Iterator<Item = String>) -> String {
    format!("[{}]", v.collect::<Vec<_>>().join(", "))
}

/// Element (or chunk) positions, such as a selection's start: `[a, b, c]` (C) or `[c+1, b+1, a+1]`.
pub fn positions(v: &[u64]) -> String {
    match current() {
        IndexOrder::C => list(v.iter().map(u64::to_string)),
        IndexOrder::Fortran => list(v.iter().rev().map(|&x| (u128::from(x) + 1).to_string())),
    }
}

/// Extents, counts or steps (no base): `[a, b, c]` (C) or `[c, b, a]` (Fortran).
pub fn extents(v: &[u64]) -> String {
    match current() {
        IndexOrder::C => list(v.iter().map(u64::to_string)),
        IndexOrder::Fortran => list(v.iter().rev().map(u64::to_string)),
    }
}

/// The number of dimension `d` (0-based, C order) of a rank-`rank` array: `d`, or `rank - d` (Fortran).
pub fn dimension(d: usize, rank: usize) -> usize {
    match current() {
        IndexOrder::C => d,
        IndexOrder::Fortran => rank - d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conventions() {
        assert_eq!(positions(&[0, 4, 9]), "[0, 4, 9]");
        assert_eq!(dimension(0, 3), 0);
        let was = set(IndexOrder::Fortran);
        assert_eq!(was, IndexOrder::C);
        assert_eq!(positions(&[0, 4, u64::MAX]), "[18446744073709551616, 5, 1]");
        assert_eq!(extents(&[2, 3, 4]), "[4, 3, 2]");
        assert_eq!(dimension(0, 3), 3);
        assert_eq!(dimension(2, 3), 1);
        // the setting is per thread
        std::thread::spawn(|| assert_eq!(current(), IndexOrder::C)).join().unwrap();
        set(IndexOrder::C);
        assert_eq!(extents(&[2, 3]), "[2, 3]");
    }
}
