#!/usr/bin/env python3
"""Writes the hand-made hostile inputs of the `zip_store` and `remote_answer` fuzz targets to
tests/fuzz_regressions/<target>/ (input layouts: src/fuzzing/zip_store.rs, src/fuzzing/remote_answer.rs).
tests/fuzz_regressions.rs runs them; rerun this only to change them.

zip_store:
- member_recorded_3gib: a deflated chunk member and a stored zarr.json whose headers record 3 GiB;
- entries_65535: an end record claiming 65535 entries in a 46-byte central directory;
- zip64_entries_2_60: a zip64 end record claiming 2^60 entries and a 2^60-byte central directory.
remote_answer:
- content_length_2_40_s3 / _http: every request answered `200 OK` with `Content-Length: 2^40` and 20 KB
  of zeros (an S3 listing of that answer made object_store reserve 1 TiB and abort the process);
- error_content_length_2_40: every request answered `500` with `Content-Length: 2^40` and 20 KB;
- wrong_content_range: ranges answered with other ranges, and a 206 longer than its range.
"""
import io
import os
import struct
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fuzz_regressions")
SEL = bytes([1, 2, 1, 3, 0, 2, 1, 1])
ZARR_JSON = (
    b'{"zarr_format":3,"node_type":"array","shape":[16],"data_type":"uint8",'
    b'"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[16]}},'
    b'"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},'
    b'"fill_value":0,"codecs":[{"name":"bytes"}]}'
)


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def patch_sizes(z, name, size):
    """Sets the recorded uncompressed size of member `name` to `size` in its local header and its
    central directory entry."""
    z = bytearray(z)
    n = name.encode()
    i = z.find(b"PK\x03\x04")
    while i >= 0:
        nlen = struct.unpack_from("<H", z, i + 26)[0]
        if z[i + 30:i + 30 + nlen] == n:
            struct.pack_into("<I", z, i + 22, size)
        i = z.find(b"PK\x03\x04", i + 4)
    i = z.find(b"PK\x01\x02")
    while i >= 0:
        nlen = struct.unpack_from("<H", z, i + 28)[0]
        if z[i + 46:i + 46 + nlen] == n:
            struct.pack_into("<I", z, i + 24, size)
        i = z.find(b"PK\x01\x02", i + 4)
    return bytes(z)


def zips():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(zipfile.ZipInfo("zarr.json"), ZARR_JSON)
        z.writestr(zipfile.ZipInfo("c/0"), bytes(1 << 20), compress_type=zipfile.ZIP_DEFLATED)
    data = patch_sizes(buf.getvalue(), "c/0", 3 << 30)
    write("zip_store", "member_recorded_3gib", SEL + patch_sizes(data, "zarr.json", 3 << 30))

    # one central directory entry, the end record claiming 65535
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(zipfile.ZipInfo("zarr.json"), ZARR_JSON)
    data = bytearray(buf.getvalue())
    eocd = data.rfind(b"PK\x05\x06")
    struct.pack_into("<HH", data, eocd + 8, 0xFFFF, 0xFFFF)
    write("zip_store", "entries_65535", SEL + bytes(data))

    # zip64: locator and end record claiming 2^60 entries and a 2^60-byte central directory
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(zipfile.ZipInfo("zarr.json"), ZARR_JSON)
    data = buf.getvalue()
    eocd = data.rfind(b"PK\x05\x06")
    cd_size, cd_off = struct.unpack_from("<II", data, eocd + 12)
    body = data[:eocd]
    rec_off = len(body)
    rec = b"PK\x06\x06" + struct.pack("<QHHIIQQQQ", 44, 45, 45, 0, 0, 1 << 60, 1 << 60, 1 << 60, cd_off)
    loc = b"PK\x06\x07" + struct.pack("<IQI", 0, rec_off, 1)
    end = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    write("zip_store", "zip64_entries_2_60", SEL + body + rec + loc + end)


def answer(status, body=b"", headers=(), length=None):
    h = [f"HTTP/1.1 {status}", "Last-Modified: Sun, 29 Nov 2026 09:00:00 GMT", 'ETag: "e1"']
    h.append(f"Content-Length: {len(body) if length is None else length}")
    h.extend(headers)
    return ("\r\n".join(h) + "\r\n\r\n").encode() + body


def answers(flags, items):
    return bytes([flags]) + b"".join(struct.pack("<I", len(a)) + a for a in items)


def remote():
    zeros = bytes(20 << 10)
    huge = answer("200 OK", zeros, length=1 << 40)
    write("remote_answer", "content_length_2_40_s3", answers(1, [huge]))
    write("remote_answer", "content_length_2_40_http", answers(0, [huge]))
    err = answer("500 Internal Server Error", zeros, length=1 << 40)
    write("remote_answer", "error_content_length_2_40", answers(1, [err]))
    write("remote_answer", "error_content_length_2_40_http", answers(0, [err]))
    wrong = [
        answer("200 OK", ZARR_JSON),
        answer("206 Partial Content", b"0123456789", ["Content-Range: bytes 90-99/100"]),
        answer("206 Partial Content", bytes(64), ["Content-Range: bytes 0-9/100"]),
        answer("206 Partial Content", b"0123456789", ["Content-Range: bytes 0-99999999999999/100"]),
        answer("200 OK", bytes(100)),
    ]
    write("remote_answer", "wrong_content_range", answers(0, wrong))


if __name__ == "__main__":
    zips()
    remote()
