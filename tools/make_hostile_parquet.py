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
PLAIN, PLAIN_DICTIONARY, RLE = 0, 2, 3
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
                 footer_extra=None, footer_len=None):
    """`pages`: the column chunk's bytes (page headers and bodies), starting at offset 4."""
    chunk_start = 4
    cmd = Struct().i32(1, BYTE_ARRAY)
    cmd.list(2, I32, [zigzag(PLAIN), zigzag(RLE)] + ([zigzag(PLAIN_DICTIONARY)] if dict_len else []))
    cmd.list(3, BINARY, [varint(3) + b"raw"])
    cmd.i32(4, codec).i64(5, 1).i64(6, len(pages)).i64(7, len(pages))
    cmd.i64(9, chunk_start + (dict_len or 0))
    if dict_len:
        cmd.i64(11, chunk_start)
    column = Struct().i64(2, chunk_start).struct(3, cmd)
    rg = Struct().list(1, STRUCT, [column.encode()]).i64(2, len(pages)).i64(3, num_rows if rg_rows is None else rg_rows)
    root = Struct().binary(4, b"schema").i32(5, 1)
    raw = Struct().i32(1, BYTE_ARRAY).i32(3, REQUIRED).binary(4, b"raw")
    meta = Struct().i32(1, 1)
    meta.list(2, STRUCT, [root.encode(), raw.encode()], claimed=schema_claimed)
    meta.i64(3, num_rows)
    meta.list(4, STRUCT, [rg.encode()])
    if footer_extra is not None:
        meta.raw(*footer_extra)
    footer = meta.encode()
    n = len(footer) if footer_len is None else footer_len
    return b"PAR1" + pages + footer + struct.pack("<I", n) + b"PAR1"


def nested(depth):
    """A struct nested `depth` deep (an unknown footer field a reader skips by recursion)."""
    return bytes([0x1C]) * depth + b"\x00" * (depth + 1)


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


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "hostile_parquet_files")
    os.makedirs(out, exist_ok=True)
    for name, data in cases():
        with open(os.path.join(out, name + ".parq"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
