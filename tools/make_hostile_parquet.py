#!/usr/bin/env python3
"""Writes the hostile Parquet reference files of tests/hostile_parquet.rs into
tests/hostile_parquet_files/ (standard library only: a small Thrift compact-protocol encoder).

Each file is a record file of kerchunk's Parquet layout (`refs.0.parq`) with one required BYTE_ARRAY
column `raw` holding one row; `valid.parq` is such a file as it should be, every other file is it with
one field claiming far more than the file holds (a page, a dictionary, a list, a byte string, a row
count), or a footer nested too deep. The claims are what a reader would size buffers from.

Usage: python3 tools/make_hostile_parquet.py [OUTDIR]
"""
import os
import struct
import sys

# Thrift compact protocol types.
BOOL_TRUE, I32, I64, BINARY, LIST, STRUCT = 1, 5, 6, 8, 9, 12


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag(n):
    return varint((n << 1) ^ (n >> 63))


class Struct:
    """A Thrift struct: fields (id, type, encoded value) in increasing id order."""

    def __init__(self):
        self.fields = []

    def i32(self, fid, v):
        self.fields.append((fid, I32, zigzag(v)))
        return self

    def i64(self, fid, v):
        self.fields.append((fid, I64, zigzag(v)))
        return self

    def binary(self, fid, b, claimed=None):
        n = len(b) if claimed is None else claimed
        self.fields.append((fid, BINARY, varint(n) + b))
        return self

    def struct(self, fid, s):
        self.fields.append((fid, STRUCT, s.encode()))
        return self

    def list(self, fid, etype, items, claimed=None):
        n = len(items) if claimed is None else claimed
        head = bytes([(n << 4) | etype]) if n < 15 else bytes([0xF0 | etype]) + varint(n)
        self.fields.append((fid, LIST, head + b"".join(items)))
        return self

    def raw(self, fid, ftype, encoded):
        self.fields.append((fid, ftype, encoded))
        return self

    def encode(self):
        out = bytearray()
        last = 0
        for fid, ftype, val in self.fields:
            delta = fid - last
            if 0 < delta <= 15:
                out.append((delta << 4) | ftype)
            else:
                out.append(ftype)
                out += zigzag(fid)[:]  # i16 field id, zigzag varint
            out += val
            last = fid
        out.append(0)
        return bytes(out)


VALUE = b"hello"
PLAIN, PLAIN_DICTIONARY, RLE, DELTA_LENGTH_BYTE_ARRAY = 0, 2, 3, 6
BYTE_ARRAY, REQUIRED = 6, 0
UNCOMPRESSED, SNAPPY = 0, 1
DATA_PAGE, DICTIONARY_PAGE = 0, 2


def plain_byte_array(values):
    return b"".join(struct.pack("<I", len(v)) + v for v in values)


def data_page(body, num_values=1, uncompressed=None, compressed=None, encoding=PLAIN, stats=None):
    dph = Struct().i32(1, num_values).i32(2, encoding).i32(3, RLE).i32(4, RLE)
    if stats is not None:
        dph.struct(5, stats)
    h = Struct().i32(1, DATA_PAGE)
    h.i32(2, len(body) if uncompressed is None else uncompressed)
    h.i32(3, len(body) if compressed is None else compressed)
    h.struct(5, dph)
    return h.encode() + body


def dictionary_page(values, num_values):
    body = plain_byte_array(values)
    dict_h = Struct().i32(1, num_values).i32(2, PLAIN_DICTIONARY)
    h = Struct().i32(1, DICTIONARY_PAGE).i32(2, len(body)).i32(3, len(body)).struct(7, dict_h)
    return h.encode() + body


def parquet_file(pages, dict_len=None, codec=UNCOMPRESSED, schema_claimed=None, num_rows=1, rg_rows=None,
                 footer_extra=None, footer_len=None, schema=None, row_groups=1, values=1, schema_field=None):
    """`pages`: the column chunk's bytes (page headers and bodies), starting at offset 4; `schema`: the
    encoded schema elements (default: the root and the column `raw`); `row_groups`: how many row groups
    (each the one column chunk, of `rg_rows` rows); `values`: the column chunk's values; `schema_field`:
    the footer's field 2 as (type, encoded value) instead of the schema list."""
    chunk_start = 4
    cmd = Struct().i32(1, BYTE_ARRAY)
    cmd.list(2, I32, [zigzag(PLAIN), zigzag(RLE)] + ([zigzag(PLAIN_DICTIONARY)] if dict_len else []))
    cmd.list(3, BINARY, [varint(3) + b"raw"])
    cmd.i32(4, codec).i64(5, values).i64(6, len(pages)).i64(7, len(pages))
    cmd.i64(9, chunk_start + (dict_len or 0))
    if dict_len:
        cmd.i64(11, chunk_start)
    column = Struct().i64(2, chunk_start).struct(3, cmd)
    rg = Struct().list(1, STRUCT, [column.encode()]).i64(2, len(pages)).i64(3, num_rows if rg_rows is None else rg_rows)
    root = Struct().binary(4, b"schema").i32(5, 1)
    raw = Struct().i32(1, BYTE_ARRAY).i32(3, REQUIRED).binary(4, b"raw")
    meta = Struct().i32(1, 1)
    if schema_field is not None:
        meta.raw(2, *schema_field)
    else:
        meta.list(2, STRUCT, schema if schema is not None else [root.encode(), raw.encode()], claimed=schema_claimed)
    meta.i64(3, num_rows)
    meta.list(4, STRUCT, [rg.encode()] * row_groups)
    if footer_extra is not None:
        meta.raw(*footer_extra)
    footer = meta.encode()
    n = len(footer) if footer_len is None else footer_len
    return b"PAR1" + pages + footer + struct.pack("<I", n) + b"PAR1"


def nested(depth):
    """A struct nested `depth` deep (an unknown footer field a reader skips by recursion)."""
    return bytes([0x1C]) * depth + b"\x00" * (depth + 1)


def schema_element(name, children=None, leaf=False):
    """An encoded schema element: a group of `children` (the root when it has no repetition) or a
    required BYTE_ARRAY leaf."""
    e = Struct()
    if leaf:
        e.i32(1, BYTE_ARRAY)
    if leaf or children is not None and name != b"schema":
        e.i32(3, REQUIRED)
    e.binary(4, name)
    if children is not None:
        e.i32(5, children)
    return e.encode()


def key_values(n, value_len=0):
    """Footer field 5, key_value_metadata: `n` entries of a one-byte key and a value of `value_len` bytes."""
    kv = Struct().binary(1, b"k").binary(2, b"v" * value_len).encode()
    n_head = bytes([(n << 4) | STRUCT]) if n < 15 else bytes([0xF0 | STRUCT]) + varint(n)
    return (5, LIST, n_head + kv * n)


def dictionary_file(value_len, rows):
    """A dictionary-encoded column: a dictionary of one value of `value_len` bytes, named by `rows` rows."""
    dict_page = dictionary_page([b"\0" * value_len], num_values=1)
    rle = bytes([1]) + varint(rows << 1) + bytes([0])  # bit width 1, one RLE run of `rows` indices 0
    return parquet_file(dict_page + data_page(rle, num_values=rows, encoding=PLAIN_DICTIONARY), dict_len=len(dict_page),
                        num_rows=rows, values=rows)


def cases():
    body = plain_byte_array([VALUE])
    page = data_page(body)
    yield "valid", parquet_file(page)
    # The footer's length (last 8 bytes) claims 2 GiB.
    yield "footer_length", parquet_file(page, footer_len=0x7FFFFFF0)
    # The schema list claims 2^31 - 1 elements (two are there).
    yield "schema_list", parquet_file(page, schema_claimed=0x7FFFFFFF)
    # A snappy page claiming 2 GiB uncompressed (a reader reserves that before decompressing).
    snappy = varint(len(body)) + bytes([(len(body) - 1) << 2]) + body
    yield "page_uncompressed", parquet_file(data_page(snappy, uncompressed=0x7FFFFFFF), codec=SNAPPY)
    # A page claiming 2 GiB of stored bytes.
    yield "page_compressed", parquet_file(data_page(body, compressed=0x7FFFFFFF))
    # A dictionary page claiming 2^31 - 1 values (a reader sizes the dictionary from it).
    dict_page = dictionary_page([VALUE], num_values=0x7FFFFFFF)
    rle = bytes([1, 2, 0])  # bit width 1, one RLE run of 1 value: index 0
    yield "dictionary_values", parquet_file(dict_page + data_page(rle, encoding=PLAIN_DICTIONARY), dict_len=len(dict_page))
    # A page header whose statistics claim a 1 TiB byte string.
    stats = Struct().binary(1, b"", claimed=1 << 40)
    yield "statistics_length", parquet_file(data_page(body, stats=stats))
    # A data page claiming 2^31 - 1 values, and a row group claiming 2^40 rows.
    yield "page_values", parquet_file(data_page(body, num_values=0x7FFFFFFF))
    yield "row_group_rows", parquet_file(page, rg_rows=1 << 40)
    # An unknown footer field: a struct nested 100 000 deep.
    yield "footer_depth", parquet_file(page, footer_extra=(100, STRUCT, nested(100_000)))
    # 65 schema elements, each there: the root and 64 columns.
    leaves = [schema_element(b"c%d" % i, leaf=True) for i in range(64)]
    yield "schema_elements", parquet_file(page, schema=[schema_element(b"schema", 64)] + leaves)
    # 60 000 schema elements, each the only child of the one before (the crate builds the schema tree
    # by recursion, a level per group: the stack overflows).
    chain = [schema_element(b"schema", 1)] + [schema_element(b"g", 1) for _ in range(59_998)] + [schema_element(b"raw", leaf=True)]
    yield "schema_depth", parquet_file(page, schema=chain)
    # The root claims 2^31 - 1 children (two elements are there): the crate reserves room for them.
    yield "schema_children", parquet_file(page, schema=[schema_element(b"schema", 0x7FFFFFFF), schema_element(b"raw", leaf=True)])
    # A footer of 1 MiB + 1 KiB, all of it there (a key-value pair's value).
    yield "footer_bytes", parquet_file(page, footer_extra=key_values(1, (1 << 20) + 1024))
    # 70 000 key-value pairs: more than 65 536 list elements, each there.
    yield "footer_elements", parquet_file(page, footer_extra=key_values(70_000))
    # 11 rows, each there (the test's record size is 10).
    yield "record_rows", parquet_file(data_page(plain_byte_array([VALUE] * 11), num_values=11), num_rows=11, values=11)
    # A file claiming 2^21 rows (more than one per 64 bytes of the default 64 MiB ceiling), one there.
    yield "file_rows", parquet_file(page, num_rows=1 << 21, rg_rows=1)
    # A row group claiming -1 rows.
    yield "row_group_negative", parquet_file(page, rg_rows=-1)
    # Two row groups of a row each (both the one column chunk) in a file of one row.
    yield "row_groups_sum", parquet_file(page, row_groups=2)
    # A page header whose decoded size is given twice: 5, then 2^31 - 1 (a decoder keeps the last).
    h = Struct().i32(1, DATA_PAGE).i32(2, len(body)).i32(3, len(snappy))
    h.struct(5, Struct().i32(1, 1).i32(2, PLAIN).i32(3, RLE).i32(4, RLE)).i32(2, 0x7FFFFFFF)
    yield "page_repeated", parquet_file(h.encode() + snappy, codec=SNAPPY)
    # A dictionary of one 64 KiB value named by 20 000 rows: 1.3 GB if each row's value were copied.
    yield "dictionary_copies", dictionary_file(64 << 10, 20_000)
    # A data page header of 3 MiB: unknown fields (ids 100 to 30 099, again and again), 1.5 million of
    # them, which a reader skips; a check holding something per field walked takes 30 times that.
    run = bytes([I32]) + zigzag(100)[:] + zigzag(0) + bytes([0x10 | I32, 0]) * 29_999
    pad = run * ((3 << 20) // len(run))
    h = data_page(body)
    header = h[:-len(body)]
    yield "page_header_fields", parquet_file(header[:-1] + pad + b"\0" + body)
    # The schema (footer field 2) is an i32 whose varint's first byte, 0xF5, reads as the header of a list
    # of 2^31 - 1 structs (the next four bytes) for a reader that reads field 2 as the schema list
    # whatever its wire type.
    yield "schema_type", parquet_file(page, schema_field=(I32, bytes([0xF5, 0xFF, 0xFF, 0xFF, 0xFF, 0x07])))
    # A page header whose data page header (field 5) is a byte string of 97 bytes: its length, 0x61, reads
    # as a field header (an unknown bool) and its bytes as the fields of a data page header of 2^31 - 1
    # values for a reader that reads field 5 as a struct whatever its wire type.
    def long_i32(fid, v):
        return bytes([I32]) + zigzag(fid) + zigzag(v)
    fields = long_i32(1, 0x7FFFFFFF) + long_i32(2, PLAIN) + long_i32(3, RLE) + long_i32(4, RLE)
    inner = fields + bytes([0x10 | BOOL_TRUE]) * (0x61 - len(fields) - 1) + b"\0"
    h = Struct().i32(1, DATA_PAGE).i32(2, len(body)).i32(3, len(body)).binary(5, inner)
    yield "page_header_type", parquet_file(h.encode() + body)
    # A data page of DELTA_LENGTH_BYTE_ARRAY whose data claims 2^31 - 1 lengths (block size 128, 4
    # miniblocks, the count, the first value 0): a reader sizes its lengths from the count (8 GiB).
    delta = varint(128) + varint(4) + varint(0x7FFFFFFF) + zigzag(0) + bytes(8)
    yield "page_delta_lengths", parquet_file(data_page(delta, encoding=DELTA_LENGTH_BYTE_ARRAY))
    # A valid file whose value is 8 KiB (the tests read it under a smaller metadata ceiling).
    yield "large_value", parquet_file(data_page(plain_byte_array([b"x" * 8192])))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "hostile_parquet_files")
    os.makedirs(out, exist_ok=True)
    for name, data in cases():
        with open(os.path.join(out, name + ".parq"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
