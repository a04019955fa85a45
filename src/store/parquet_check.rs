//! Checks a Parquet record file ([`super::reference_parquet`]) before the `parquet` crate reads it, so
//! that what the file claims can size no buffer beyond what it holds or the documented ceilings
//! (docs/limits.md). The crate sizes buffers from the file's own claims: a Thrift list's length
//! (`Vec::with_capacity`), a byte string's length in a page header, a page's decoded size, a
//! dictionary's number of values, a schema element's number of children; a claim of 2^31 elements or
//! 2^40 bytes in a 100-byte file aborted the process. Checked here, each a [`crate::Error::Metadata`]
//! naming the file:
//!
//! - the footer: its length within the file and at most [`MAX_FOOTER_BYTES`]; its Thrift structure
//!   walked whole without decoding: every list's length within the bytes left (each element takes at
//!   least one), at most [`MAX_FOOTER_ELEMENTS`] list elements in all, every byte string within the
//!   bytes left, nesting at most [`MAX_DEPTH`] deep, at most [`MAX_SCHEMA_ELEMENTS`] schema elements,
//!   each claiming fewer children than the schema has elements;
//! - every page header of every column chunk, walked the same way within the chunk: its stored size
//!   within the chunk, its decoded size at most the metadata ceiling, its values (and a dictionary's)
//!   at most its row group's rows, its encoding neither DELTA_LENGTH_BYTE_ARRAY nor DELTA_BYTE_ARRAY
//!   (whose decoders size a buffer from a count in the page's data).
//!
//! The crate reads a field of a known id as the type it expects, whatever type the field has on the
//! wire (an i32 field's varint read as a list's header reserved room for 2^31 elements): the walk
//! requires every field the crate reads to have the wire type it reads ([`Ty`]).
//!
//! A field given more than once (a decoder keeps the last) is checked at every occurrence. The walk
//! holds nothing per field it passes, so a header of millions of fields is walked in constant memory.
//! The row groups' rows (each at least 0, adding up to at most the file's), the file's length (at most
//! the metadata ceiling), its rows (at most the record size, and one per [`BYTES_PER_ROW`] bytes of
//! the ceiling) and the bytes its references copy out of it (at most the ceiling) are checked by the
//! caller.

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

/// Parquet encodings refused in data pages (see [`check_pages`]).
const DELTA_LENGTH_BYTE_ARRAY: i64 = 6;
const DELTA_BYTE_ARRAY: i64 = 7;

/// The path element standing for any element of a list or entry of a map.
const ELEMENT: i16 = i16::MIN;

/// What the `parquet` crate reads a field of a known id (or a list's element) as. The crate does not
/// compare that with the type the field has on the wire: a known field of another wire type is read
/// as something it is not (a list's header and length out of an integer's bytes, then room reserved
/// for that many elements), so the walk requires the wire type of every known field and list element
/// to be the one the crate reads. Unknown fields the crate skips by their wire type, as the walk does.
#[derive(Clone, Copy)]
enum Ty {
    /// i16, read as a zigzag varint cut to 16 bits.
    Int16,
    /// i32 or an enum, a zigzag varint cut to 32 bits.
    Int32,
    /// i64, a zigzag varint.
    Int64,
    /// i8, one byte.
    Int8,
    Boolean,
    Float64,
    /// A string or a byte string.
    Bytes,
    ListOf(&'static Ty),
    /// A struct or a union, by the ids and types of the fields the crate reads.
    StructOf(&'static [(i16, Ty)]),
}

use Ty::{Boolean, Bytes, Float64, Int16, Int32, Int64, Int8, ListOf, StructOf};

impl Ty {
    /// Whether a value of wire type `wire` is what the crate reads as this type.
    fn accepts(self, wire: u8) -> bool {
        match self {
            Int16 | Int32 | Int64 => matches!(wire, I16 | I32 | I64),
            Int8 => wire == BYTE,
            Boolean => matches!(wire, BOOL_TRUE | BOOL_FALSE),
            Float64 => wire == DOUBLE,
            Bytes => wire == BINARY,
            ListOf(_) => matches!(wire, LIST | SET),
            StructOf(_) => wire == STRUCT,
        }
    }

    /// What the crate reads, for messages.
    fn name(self) -> &'static str {
        match self {
            Int16 => "an i16",
            Int32 => "an i32",
            Int64 => "an i64",
            Int8 => "a byte",
            Boolean => "a bool",
            Float64 => "a double",
            Bytes => "a byte string",
            ListOf(_) => "a list",
            StructOf(_) => "a struct",
        }
    }

    /// The integer `v` (a zigzag varint's value) as the crate reads it for this type.
    fn int(self, v: i64) -> i64 {
        match self {
            Int16 => i64::from(v as i16),
            Int32 => i64::from(v as i32),
            _ => v,
        }
    }
}

/// The type of field `id` of a struct whose known fields are `fields`.
fn field_type(fields: &[(i16, Ty)], id: i16) -> Option<Ty> {
    fields.iter().find(|(i, _)| *i == id).map(|(_, t)| *t)
}

// The structs of the footer and of page headers as the `parquet` crate (=58.4.1; Cargo.toml) reads
// them (its src/file/metadata/thrift/mod.rs, src/file/metadata/mod.rs and src/basic.rs), without its
// `encryption` feature: the fields it reads, not the fields it skips.
const EMPTY: &[(i16, Ty)] = &[];
const STATISTICS: &[(i16, Ty)] =
    &[(1, Bytes), (2, Bytes), (3, Int64), (4, Int64), (5, Bytes), (6, Bytes), (7, Boolean), (8, Boolean)];
const TIME_UNIT: &[(i16, Ty)] = &[(1, StructOf(EMPTY)), (2, StructOf(EMPTY)), (3, StructOf(EMPTY))];
const TIMESTAMP_TYPE: &[(i16, Ty)] = &[(1, Boolean), (2, StructOf(TIME_UNIT))];
const LOGICAL_TYPE: &[(i16, Ty)] = &[
    (1, StructOf(EMPTY)),
    (2, StructOf(EMPTY)),
    (3, StructOf(EMPTY)),
    (4, StructOf(EMPTY)),
    (5, StructOf(&[(1, Int32), (2, Int32)])),
    (6, StructOf(EMPTY)),
    (7, StructOf(TIMESTAMP_TYPE)),
    (8, StructOf(TIMESTAMP_TYPE)),
    (10, StructOf(&[(1, Int8), (2, Boolean)])),
    (11, StructOf(EMPTY)),
    (12, StructOf(EMPTY)),
    (13, StructOf(EMPTY)),
    (14, StructOf(EMPTY)),
    (15, StructOf(EMPTY)),
    (16, StructOf(&[(1, Int8)])),
    (17, StructOf(&[(1, Bytes)])),
    (18, StructOf(&[(1, Bytes), (2, Int32)])),
];
const SCHEMA_ELEMENT: &[(i16, Ty)] = &[
    (1, Int32),
    (2, Int32),
    (3, Int32),
    (4, Bytes),
    (5, Int32),
    (6, Int32),
    (7, Int32),
    (8, Int32),
    (9, Int32),
    (10, StructOf(LOGICAL_TYPE)),
];
const BOUNDING_BOX: &[(i16, Ty)] =
    &[(1, Float64), (2, Float64), (3, Float64), (4, Float64), (5, Float64), (6, Float64), (7, Float64), (8, Float64)];
const COLUMN_META_DATA: &[(i16, Ty)] = &[
    (1, Int32),
    (2, ListOf(&Int32)),
    (4, Int32),
    (5, Int64),
    (6, Int64),
    (7, Int64),
    (9, Int64),
    (10, Int64),
    (11, Int64),
    (12, StructOf(STATISTICS)),
    (13, ListOf(&StructOf(&[(1, Int32), (2, Int32), (3, Int32)]))),
    (14, Int64),
    (15, Int32),
    (16, StructOf(&[(1, Int64), (2, ListOf(&Int64)), (3, ListOf(&Int64))])),
    (17, StructOf(&[(1, StructOf(BOUNDING_BOX)), (2, ListOf(&Int32))])),
];
const COLUMN_CHUNK: &[(i16, Ty)] =
    &[(1, Bytes), (2, Int64), (3, StructOf(COLUMN_META_DATA)), (4, Int64), (5, Int32), (6, Int64), (7, Int32)];
const ROW_GROUP: &[(i16, Ty)] = &[
    (1, ListOf(&StructOf(COLUMN_CHUNK))),
    (2, Int64),
    (3, Int64),
    (4, ListOf(&StructOf(&[(1, Int32), (2, Boolean), (3, Boolean)]))),
    (5, Int64),
    (7, Int16),
];
const FILE_META_DATA: &[(i16, Ty)] = &[
    (1, Int32),
    (2, ListOf(&StructOf(SCHEMA_ELEMENT))),
    (3, Int64),
    (4, ListOf(&StructOf(ROW_GROUP))),
    (5, ListOf(&StructOf(&[(1, Bytes), (2, Bytes)]))),
    (6, Bytes),
    (7, ListOf(&StructOf(&[(1, StructOf(EMPTY))]))),
];
const PAGE_HEADER: &[(i16, Ty)] = &[
    (1, Int32),
    (2, Int32),
    (3, Int32),
    (4, Int32),
    (5, StructOf(&[(1, Int32), (2, Int32), (3, Int32), (4, Int32), (5, StructOf(STATISTICS))])),
    (6, StructOf(EMPTY)),
    (7, StructOf(&[(1, Int32), (2, Int32), (3, Boolean)])),
    (
        8,
        StructOf(&[
            (1, Int32),
            (2, Int32),
            (3, Int32),
            (4, Int32),
            (5, Int32),
            (6, Int32),
            (7, Boolean),
            (8, StructOf(STATISTICS)),
        ]),
    ),
];

/// A walk over Thrift compact-protocol bytes that decodes nothing but the integers (and list lengths)
/// at the field paths it watches. A field may occur more than once in a struct (a decoder keeps the
/// last occurrence), so every occurrence is checked: the walk keeps the least and the greatest value
/// each watched path had. It holds nothing per field walked: its memory is its nesting.
struct Walk<'a> {
    buf: &'a [u8],
    pos: usize,
    depth: usize,
    /// List elements seen so far.
    elements: u64,
    max_elements: u64,
    /// The field ids leading to the current value from the outermost struct ([`ELEMENT`] for a list
    /// element or a map entry).
    path: Vec<i16>,
    /// The paths watched: an integer field, or a list field (its length).
    watch: &'a [&'a [i16]],
    /// The least and greatest value of each watched path, when it occurred.
    seen: Vec<Option<(i64, i64)>>,
    /// The values below 64 each watched path had (bit `v` for value `v`).
    small: Vec<u64>,
}

impl<'a> Walk<'a> {
    fn new(buf: &'a [u8], max_elements: u64, watch: &'a [&'a [i16]]) -> Walk<'a> {
        Walk { buf, pos: 0, depth: 0, elements: 0, max_elements, path: Vec::new(), watch, seen: vec![None; watch.len()], small: vec![0; watch.len()] }
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

    /// Notes `v`, the value at the current path, if that path is watched.
    fn note(&mut self, v: i64) {
        if let Some(i) = self.watch.iter().position(|w| *w == &self.path[..]) {
            self.seen[i] = Some(match self.seen[i] {
                None => (v, v),
                Some((lo, hi)) => (lo.min(v), hi.max(v)),
            });
            if (0..64).contains(&v) {
                self.small[i] |= 1 << v;
            }
        }
    }

    /// A struct's fields up to its stop byte; `fields`: the fields the crate reads (their types).
    fn structure(&mut self, fields: &'static [(i16, Ty)]) -> std::result::Result<(), String> {
        self.enter()?;
        let mut last: i16 = 0;
        loop {
            let b = self.byte()?;
            if b == 0 {
                break;
            }
            let (wire, delta) = (b & 0x0F, b >> 4);
            let id = if delta == 0 { i16::try_from(self.zigzag()?).map_err(|_| "a field id out of range")? } else { last.saturating_add(i16::from(delta)) };
            last = id;
            let ty = field_type(fields, id);
            if let Some(t) = ty.filter(|t| !t.accepts(wire)) {
                return Err(format!("field {id} has the Thrift type {wire}, where a reader reads {}", t.name()));
            }
            self.path.push(id);
            let r = match wire {
                // A boolean field's value is its type.
                BOOL_TRUE | BOOL_FALSE => Ok(()),
                I16 | I32 | I64 => self.zigzag().map(|v| self.note(ty.map_or(v, |t| t.int(v)))),
                w => self.value(w, ty),
            };
            self.path.pop();
            r?;
        }
        self.depth -= 1;
        Ok(())
    }

    /// One value of wire type `wire` (a list element, a map entry or a field's value) at the current
    /// path; `ty`: what the crate reads it as, if it reads it.
    fn value(&mut self, wire: u8, ty: Option<Ty>) -> std::result::Result<(), String> {
        match wire {
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
                self.note(i64::try_from(n).unwrap_or(i64::MAX));
                let element = match ty {
                    Some(ListOf(t)) => Some(*t),
                    _ => None,
                };
                if let Some(t) = element.filter(|t| n > 0 && !t.accepts(h & 0x0F)) {
                    return Err(format!("a list's elements have the Thrift type {}, where a reader reads {}", h & 0x0F, t.name()));
                }
                self.elements(n, 1)?;
                self.enter()?;
                self.path.push(ELEMENT);
                for _ in 0..n {
                    self.value(h & 0x0F, element)?;
                }
                self.path.pop();
                self.depth -= 1;
                Ok(())
            }
            MAP => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                self.elements(n, 2)?;
                self.enter()?;
                self.path.push(ELEMENT);
                for _ in 0..n {
                    self.value(kv >> 4, None)?;
                    self.value(kv & 0x0F, None)?;
                }
                self.path.pop();
                self.depth -= 1;
                Ok(())
            }
            STRUCT => self.structure(match ty {
                Some(StructOf(f)) => f,
                _ => EMPTY,
            }),
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

    /// The least and greatest value the watched path `i` had.
    fn seen(&self, i: usize) -> Option<(i64, i64)> {
        self.seen[i]
    }

    /// Whether the watched path `i` had the value `v` (below 64).
    fn had(&self, i: usize, v: i64) -> bool {
        (0..64).contains(&v) && self.small[i] & (1 << v) != 0
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
    // FileMetaData field 2: the schema, a list of SchemaElement, whose field 5 is num_children.
    const WATCH: &[&[i16]] = &[&[2], &[2, ELEMENT, 5]];
    let mut w = Walk::new(&bytes[start..bytes.len() - 8], MAX_FOOTER_ELEMENTS, WATCH);
    w.structure(FILE_META_DATA).map_err(|e| format!("footer: {e}"))?;
    if let Some((_, n)) = w.seen(0).filter(|&(_, n)| n > MAX_SCHEMA_ELEMENTS as i64) {
        return Err(format!("footer: the schema list claims {n} elements (a reference file has at most {MAX_SCHEMA_ELEMENTS})"));
    }
    // The crate reserves room for an element's children before reading them; each child is an
    // element after it.
    let elements = w.seen(0).map_or(0, |(_, n)| n);
    if let Some((_, n)) = w.seen(1).filter(|&(_, n)| n >= elements) {
        return Err(format!("footer: a schema element claims {n} children (the schema has {elements} elements)"));
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
    // PageHeader fields: 2 the decoded size, 3 the stored size; the values of 5 the data page
    // header, 7 the dictionary page header, 8 the data page header v2 (and 8.3 its rows); the
    // encodings of 5 and 8.
    const WATCH: &[&[i16]] = &[&[3], &[2], &[5, 1], &[7, 1], &[8, 1], &[8, 3], &[5, 2], &[8, 4]];
    const WHAT: [&str; 6] = ["stored size", "decoded size", "data page values", "dictionary page values", "data page values", "data page rows"];
    let mut pos = 0usize;
    while pos < chunk.len() {
        let at = offset + pos as u64;
        let mut w = Walk::new(&chunk[pos..], MAX_FOOTER_ELEMENTS, WATCH);
        w.structure(PAGE_HEADER).map_err(|e| format!("the page header at {at}: {e}"))?;
        // Every occurrence of a field is checked (the crate keeps the last): its least value must
        // not be negative, its greatest within the bounds.
        let mut most = [0u64; 6];
        for (i, what) in WHAT.iter().enumerate() {
            if let Some((lo, hi)) = w.seen(i) {
                if lo < 0 {
                    return Err(format!("the page at {at} claims a negative {what} ({lo})"));
                }
                most[i] = hi as u64;
            }
        }
        let [stored, decoded, ..] = most;
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
        for (n, what) in most.iter().zip(WHAT).skip(2) {
            if *n > rows {
                return Err(format!("the page at {at} claims {n} {what}, more than its row group's {rows} rows"));
            }
        }
        // The crate's decoders of these encodings size a buffer from a count in the page's
        // (compressed) data before decoding it; Parquet reference files do not use them.
        for (code, name) in [(DELTA_LENGTH_BYTE_ARRAY, "DELTA_LENGTH_BYTE_ARRAY"), (DELTA_BYTE_ARRAY, "DELTA_BYTE_ARRAY")] {
            if w.had(6, code) || w.had(7, code) {
                return Err(format!("the data page at {at} has the encoding {name}, which is not read in reference files"));
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
        assert!(Walk::new(&b, 1 << 16, &[]).structure(EMPTY).unwrap_err().contains("claims 2147483647 elements"));
        // struct { 1: binary claiming 2^40 bytes }
        let b = [0x18, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x00];
        assert!(Walk::new(&b, 1 << 16, &[]).structure(EMPTY).unwrap_err().contains("byte string"));
        // nested 100 deep
        let mut b = vec![0x1C; 100];
        b.extend(vec![0; 101]);
        assert!(Walk::new(&b, 1 << 16, &[]).structure(EMPTY).unwrap_err().contains("nested"));
        // struct { 2: i32 7, 5: struct { 1: i32 -3 } }
        let b = [0x25, 14, 0x3C, 0x15, 5, 0x00, 0x00];
        let mut w = Walk::new(&b, 1 << 16, &[&[2], &[5, 1], &[1]]);
        w.structure(EMPTY).unwrap();
        assert_eq!((w.seen(0), w.seen(1), w.seen(2), w.pos), (Some((7, 7)), Some((-3, -3)), None, b.len()));
    }

    #[test]
    fn walk_requires_the_types_a_reader_reads() {
        // FileMetaData { 2: i32 whose varint's first byte reads as the header of a list of 2^31 - 1 }
        let b = [0x25, 0xF5, 0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0x00];
        let e = Walk::new(&b, 1 << 16, &[]).structure(FILE_META_DATA).unwrap_err();
        assert!(e.contains("field 2 has the Thrift type 5, where a reader reads a list"), "{e}");
        // The same bytes where no reader reads field 2 walk.
        Walk::new(&b, 1 << 16, &[]).structure(EMPTY).unwrap();
        // PageHeader { 5: the data page header as a byte string }
        let b = [0x58, 0x01, 0x00, 0x00];
        assert!(Walk::new(&b, 1 << 16, &[]).structure(PAGE_HEADER).unwrap_err().contains("field 5 has the Thrift type 8"));
        // FileMetaData { 4: list<i32> [1] }: row groups are structs
        let b = [0x49, 0x15, 0x02, 0x00];
        assert!(Walk::new(&b, 1 << 16, &[]).structure(FILE_META_DATA).unwrap_err().contains("a list's elements have the Thrift type 5"));
        // An empty list whose element type is 0 (some writers write that) walks.
        let b = [0x49, 0x00, 0x00];
        Walk::new(&b, 1 << 16, &[]).structure(FILE_META_DATA).unwrap();
        // An i32 field noted as the reader reads it: 2^32 + 5 is 5.
        let b = [0x25, 0x8A, 0x80, 0x80, 0x80, 0x20, 0x00];
        let mut w = Walk::new(&b, 1 << 16, &[&[2]]);
        w.structure(PAGE_HEADER).unwrap();
        assert_eq!(w.seen(0), Some((5, 5)));
    }

    #[test]
    fn walk_sees_every_occurrence() {
        // struct { 2: i32 7, 3: i32 1, 2: i32 2^30 (field id written in full), 2: i32 -1 }
        let b = [0x25, 14, 0x15, 2, 0x05, 4, 0x80, 0x80, 0x80, 0x80, 0x08, 0x05, 4, 1, 0x00];
        let mut w = Walk::new(&b, 1 << 16, &[&[2], &[3]]);
        w.structure(EMPTY).unwrap();
        assert_eq!((w.seen(0), w.seen(1)), (Some((-1, 1 << 30)), Some((1, 1))));
        // struct { 2: list<struct> [ { 5: i32 1 }, { 5: i32 9 } ], 2: list<i32> [ 1, 2, 3 ] }
        let b = [0x29, 0x2C, 0x55, 2, 0x00, 0x55, 18, 0x00, 0x09, 4, 0x35, 2, 4, 6, 0x00];
        let mut w = Walk::new(&b, 1 << 16, &[&[2], &[2, ELEMENT, 5]]);
        w.structure(EMPTY).unwrap();
        assert_eq!((w.seen(0), w.seen(1), w.pos), (Some((2, 3)), Some((1, 9)), b.len()));
    }
}
