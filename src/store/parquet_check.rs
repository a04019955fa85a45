//! Checks a Parquet record file ([`super::reference_parquet`]) before the `parquet` crate reads it, so
//! that what the file claims can size no buffer beyond what it holds or the documented ceilings
//! (docs/limits.md). The crate sizes buffers from the file's own claims: a Thrift list's length
//! (`Vec::with_capacity`), a byte string's length in a page header, a page's decoded size, a
//! dictionary's number of values; a claim of 2^31 elements or 2^40 bytes in a 100-byte file aborted the
//! process. Checked here, each a [`crate::Error::Metadata`] naming the file:
//!
//! - the footer: its length within the file and at most [`MAX_FOOTER_BYTES`]; its Thrift structure
//!   walked whole without decoding: every list's length within the bytes left (each element takes at
//!   least one), at most [`MAX_FOOTER_ELEMENTS`] list elements in all, every byte string within the
//!   bytes left, nesting at most [`MAX_DEPTH`] deep, at most [`MAX_SCHEMA_ELEMENTS`] schema elements;
//! - the row groups: their rows (each at least 0) adding up to the file's;
//! - every page header of every column chunk, walked the same way within the chunk: its stored size
//!   within the chunk, its decoded size at most the metadata ceiling, its values (and a dictionary's)
//!   at most its row group's rows.
//!
//! The file's length (at most the metadata ceiling) and its rows (at most the record size, and one
//! per [`BYTES_PER_ROW`] bytes of the ceiling) are checked by the caller.

use crate::error::Error;

/// The longest footer accepted. A kerchunk record file's footer (a schema of four columns, a row group
/// or a few, their statistics and the writer's key-value metadata) takes a few KiB.
pub(crate) const MAX_FOOTER_BYTES: u64 = 1 << 20;
/// The most list elements a footer may hold in all (schema elements, row groups, column chunks,
/// encodings, key-value pairs, ...): the crate reserves room for a list's elements before decoding them,
/// a few hundred bytes each.
pub(crate) const MAX_FOOTER_ELEMENTS: u64 = 1 << 16;
/// The most schema elements a footer may have: a reference file has a root and four columns at most
/// (the crate builds the schema tree by recursion, one level per nested group).
pub(crate) const MAX_SCHEMA_ELEMENTS: u64 = 64;
/// The deepest nesting of Thrift structs and lists accepted.
pub(crate) const MAX_DEPTH: usize = 32;
/// Bytes of the metadata ceiling per row of a record file: a decoded reference takes about 48 bytes.
pub(crate) const BYTES_PER_ROW: u64 = 64;

/// Thrift compact-protocol element types.
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;

/// A walk over Thrift compact-protocol bytes that decodes nothing but integers at known field paths.
struct Walk<'a> {
    buf: &'a [u8],
    pos: usize,
    depth: usize,
    /// List elements seen so far.
    elements: u64,
    max_elements: u64,
    /// The field ids leading to the current struct (empty inside a list).
    path: Vec<i16>,
    /// Integer fields outside lists, by field-id path.
    ints: Vec<(Vec<i16>, i64)>,
    /// The field id of the outermost struct's list being entered, and the lengths of its lists.
    top_list: Option<i16>,
    top_lists: Vec<(i16, u64)>,
}

impl<'a> Walk<'a> {
    fn new(buf: &'a [u8], max_elements: u64) -> Walk<'a> {
        Walk { buf, pos: 0, depth: 0, elements: 0, max_elements, path: Vec::new(), ints: Vec::new(), top_list: None, top_lists: Vec::new() }
    }

    fn left(&self) -> u64 {
        (self.buf.len() - self.pos) as u64
    }

    fn byte(&mut self) -> std::result::Result<u8, String> {
        let b = *self.buf.get(self.pos).ok_or("ends inside a Thrift value")?;
        self.pos += 1;
        Ok(b)
    }

    fn skip(&mut self, n: u64) -> std::result::Result<(), String> {
        if n > self.left() {
            return Err(format!("a byte string claims {n} bytes where {} are left", self.left()));
        }
        self.pos += n as usize;
        Ok(())
    }

    fn varint(&mut self) -> std::result::Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7F).checked_shl(shift).unwrap_or(0);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint longer than 10 bytes".into())
    }

    fn zigzag(&mut self) -> std::result::Result<i64, String> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn enter(&mut self) -> std::result::Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("Thrift values nested more than {MAX_DEPTH} deep"));
        }
        Ok(())
    }

    /// A struct's fields up to its stop byte.
    fn structure(&mut self) -> std::result::Result<(), String> {
        self.enter()?;
        let mut last: i16 = 0;
        loop {
            let b = self.byte()?;
            if b == 0 {
                break;
            }
            let (ty, delta) = (b & 0x0F, b >> 4);
            let id = if delta == 0 { i16::try_from(self.zigzag()?).map_err(|_| "a field id out of range")? } else { last.saturating_add(i16::from(delta)) };
            last = id;
            match ty {
                BOOL_TRUE | BOOL_FALSE => {}
                I16 | I32 | I64 => {
                    let v = self.zigzag()?;
                    if !self.path.is_empty() || self.depth == 1 {
                        let mut p = self.path.clone();
                        p.push(id);
                        self.ints.push((p, v));
                    }
                }
                STRUCT => {
                    let inside = !self.path.is_empty() || self.depth == 1;
                    if inside {
                        self.path.push(id);
                    }
                    self.structure()?;
                    if inside {
                        self.path.pop();
                    }
                }
                t => {
                    if self.depth == 1 && (t == LIST || t == SET) {
                        self.top_list = Some(id);
                    }
                    self.value(t)?
                }
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// One value of type `ty` (a list element, a map entry or a field's value).
    fn value(&mut self, ty: u8) -> std::result::Result<(), String> {
        match ty {
            BOOL_TRUE | BOOL_FALSE | BYTE => self.skip(1),
            I16 | I32 | I64 => self.varint().map(drop),
            DOUBLE => self.skip(8),
            BINARY => {
                let n = self.varint()?;
                self.skip(n)
            }
            LIST | SET => {
                let h = self.byte()?;
                let n = if h >> 4 == 15 { self.varint()? } else { u64::from(h >> 4) };
                if let Some(id) = self.top_list.take() {
                    self.top_lists.push((id, n));
                }
                self.elements(n, 1)?;
                let saved = std::mem::take(&mut self.path);
                self.enter()?;
                for _ in 0..n {
                    if (h & 0x0F) == STRUCT {
                        self.structure()?;
                    } else {
                        self.value(h & 0x0F)?;
                    }
                }
                self.depth -= 1;
                self.path = saved;
                Ok(())
            }
            MAP => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                self.elements(n, 2)?;
                let saved = std::mem::take(&mut self.path);
                self.enter()?;
                for _ in 0..n {
                    for t in [kv >> 4, kv & 0x0F] {
                        if t == STRUCT {
                            self.structure()?;
                        } else {
                            self.value(t)?;
                        }
                    }
                }
                self.depth -= 1;
                self.path = saved;
                Ok(())
            }
            STRUCT => {
                let saved = std::mem::take(&mut self.path);
                let r = self.structure();
                self.path = saved;
                r
            }
            t => Err(format!("an unknown Thrift type {t}")),
        }
    }

    /// Counts a list of `n` elements taking at least `each` bytes each.
    fn elements(&mut self, n: u64, each: u64) -> std::result::Result<(), String> {
        if n.saturating_mul(each) > self.left() {
            return Err(format!("a list claims {n} elements where {} bytes are left", self.left()));
        }
        self.elements += n;
        if self.elements > self.max_elements {
            return Err(format!("more than {} list elements", self.max_elements));
        }
        Ok(())
    }

    /// The integer field at `path` of the outermost struct.
    fn int(&self, path: &[i16]) -> Option<i64> {
        self.ints.iter().find(|(p, _)| p == path).map(|(_, v)| *v)
    }
}

/// Checks the footer of the Parquet file `bytes` (see the module documentation); `Err` is the reason.
pub(crate) fn check_footer(bytes: &[u8]) -> std::result::Result<(), String> {
    let len = bytes.len() as u64;
    if len < 12 || !bytes.starts_with(b"PAR1") || !bytes.ends_with(b"PAR1") {
        return Err("not a Parquet file (no PAR1 at its start and end)".into());
    }
    let footer = u64::from(u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().expect("4 bytes")));
    if footer > len - 12 || footer > MAX_FOOTER_BYTES {
        return Err(format!(
            "its footer claims {footer} bytes (the file has {len}; a footer may have at most {MAX_FOOTER_BYTES})"
        ));
    }
    let start = (len - 8 - footer) as usize;
    let mut w = Walk::new(&bytes[start..bytes.len() - 8], MAX_FOOTER_ELEMENTS);
    w.structure().map_err(|e| format!("footer: {e}"))?;
    if let Some(&(_, n)) = w.top_lists.iter().find(|(id, _)| *id == 2).filter(|(_, n)| *n > MAX_SCHEMA_ELEMENTS) {
        return Err(format!("footer: the schema list claims {n} elements (a reference file has at most {MAX_SCHEMA_ELEMENTS})"));
    }
    Ok(())
}

/// Checks the pages of the column chunk at `range` (offset, length) of `bytes`, of a row group of
/// `rows` rows, against the metadata ceiling `ceiling`.
pub(crate) fn check_pages(bytes: &[u8], range: (u64, u64), rows: u64, ceiling: u64) -> std::result::Result<(), String> {
    let (offset, length) = range;
    let end = offset.checked_add(length).filter(|&e| e <= bytes.len() as u64).ok_or_else(|| {
        format!("a column chunk at {offset} claims {length} bytes (the file has {})", bytes.len())
    })?;
    let chunk = &bytes[offset as usize..end as usize];
    let mut pos = 0usize;
    while pos < chunk.len() {
        let at = offset + pos as u64;
        let mut w = Walk::new(&chunk[pos..], MAX_FOOTER_ELEMENTS);
        w.structure().map_err(|e| format!("the page header at {at}: {e}"))?;
        let field = |p: &[i16], what: &str| -> std::result::Result<u64, String> {
            let v = w.int(p).unwrap_or(0);
            u64::try_from(v).map_err(|_| format!("the page at {at}: {what} {v}"))
        };
        let stored = field(&[3], "stored size")?;
        let decoded = field(&[2], "decoded size")?;
        let left = (chunk.len() - pos - w.pos) as u64;
        if stored > left {
            return Err(format!("the page at {at} claims a stored size of {stored} bytes where its column chunk has {left} left"));
        }
        if decoded > ceiling {
            return Err(format!(
                "the page at {at} claims a decoded size of {decoded} bytes, more than the metadata ceiling of {ceiling} ({})",
                crate::limits::METADATA_CEILING_SETTING
            ));
        }
        for (p, what) in [(&[5, 1][..], "data page"), (&[7, 1][..], "dictionary page"), (&[8, 1][..], "data page"), (&[8, 3][..], "data page")] {
            let n = field(p, "values")?;
            if n > rows {
                return Err(format!("the {what} at {at} claims {n} values, more than its row group's {rows} rows"));
            }
        }
        pos += w.pos + stored as usize;
    }
    Ok(())
}

/// The error for the record file `path`: `why` is what [`check_footer`] or [`check_pages`] found.
pub(crate) fn error(path: &std::path::Path, why: String) -> Error {
    Error::Metadata(format!("{}: not a readable Parquet record file: {why}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_bounds() {
        // struct { 1: list<i32> claiming 2^31 - 1 elements }
        let mut b = vec![0x19, 0xF5];
        b.extend([0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0x00]);
        assert!(Walk::new(&b, 1 << 16).structure().unwrap_err().contains("claims 2147483647 elements"));
        // struct { 1: binary claiming 2^40 bytes }
        let b = [0x18, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x00];
        assert!(Walk::new(&b, 1 << 16).structure().unwrap_err().contains("byte string"));
        // nested 100 deep
        let mut b = vec![0x1C; 100];
        b.extend(vec![0; 101]);
        assert!(Walk::new(&b, 1 << 16).structure().unwrap_err().contains("nested"));
        // struct { 2: i32 7, 5: struct { 1: i32 -3 } }
        let b = [0x25, 14, 0x3C, 0x15, 5, 0x00, 0x00];
        let mut w = Walk::new(&b, 1 << 16);
        w.structure().unwrap();
        assert_eq!((w.int(&[2]), w.int(&[5, 1]), w.pos), (Some(7), Some(-3), b.len()));
    }
}
