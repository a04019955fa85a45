#!/usr/bin/env python3
"""Interop, Zarr v2: arrays and groups written by libzarr (through its C ABI) read back by zarr-python,
and v2 arrays written by zarr-python converted to v3 by libzarr.

    python3 tests/interop/test_v2_roundtrip.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (zarr-python, numcodecs or numpy not importable).
The library is $ZARR_LIB, else target/release/libzarr.so of this repository.

Covered (libzarr writes with zarr_create and a `.zarray` document, zarr-python reads with
zarr_format=2, compared bit-exactly: floats as their bits, so NaN payloads and -0.0 count):
  * every v2 dtype (|b1, i1..i8 / u1..u8 / f2, f4, f8 / c8, c16 in both byte orders, |S, |V, <U,
    <M8[ns], <m8[s], structured with plain, subarray and nested fields) x every compressor (none,
    zlib, gzip, zstd, blosc with each cname and shuffle -1/0/1/2 and a blocksize, lz4, bz2, lzma),
    with edge chunks;
  * every numcodecs filter (delta, fixedscaleoffset, quantize, bitround, astype, packbits, shuffle,
    categorize), alone and chained with other filters and compressors; lossy filters must give what
    numcodecs' own decode(encode(x)) gives;
  * order "F" (2-D, 3-D, 4-D), dimension_separator "/" and ".", partial writes (read-modify-write),
    region writes leaving chunks missing, writes of the fill value deleting chunks (v2 keys), fill
    values (NaN, +-Infinity, base64 |S / structured, NaT);
  * v2 groups made with zarr_group_create_ex (children, implicit parents, .zattrs);
  * zarr_convert_v2_to_v3 of arrays written by zarr-python (read back by zarr-python as v3 with the
    same data and attributes, no chunk moved; filters and numcodecs compressors become numcodecs.<id>
    v3 codecs), and the refusals (a filter after a bytes filter, delta on order "F", codecs without a
    v3 equivalent, datetime, unicode, structured) that must leave every file untouched.

zarr-python 3.1.6 has no data type for structured dtypes with subarray or nested fields: those arrays
are read back with tools/np_zarr.py (numpy + numcodecs' codec classes) instead.
Cases needing codecs this build lacks fail (with the library's message): nothing is skipped.
"""
import base64
import hashlib
import json
import re
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))

try:
    import numcodecs
    import numpy as np
    import zarr
    from zarr.storage import LocalStore
except ImportError as e:
    print(f"SKIP: zarr-python / numcodecs / numpy not importable ({e})")
    sys.exit(77)

import harness  # noqa: E402  (tests/interop/harness.py)
from harness import Runner  # noqa: E402
import zarr_ctypes as zc  # noqa: E402
from np_zarr import np_read  # noqa: E402  (independent numpy/numcodecs v2 reader)

warnings.filterwarnings("ignore")

UINT_OF = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
NAN_PAYLOAD = {2: [0x7E01, 0xFE00], 4: [0x7FC00001, 0xFFC00000], 8: [0x7FF8000000000001, 0xFFF8000000000000]}

# ------------------------------------------------------------------------------------------------
# data types and data

NUMERIC = ["|b1", "|i1", "|u1"] + [f"{o}{t}" for t in ("i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8", "c8",
                                                          "c16") for o in "<>"]
STRUCT_PLAIN = [["x", "<f4"], ["y", ">i2"], ["z", "|u1"], ["flag", "|b1"]]
STRUCT_SUBARRAY = [["id", "<u2"], ["v", ">f4", [2]], ["m", "|i1", [2, 3]]]
STRUCT_NESTED = [["a", "<i2"], ["n", [["p", ">f8"], ["q", "|b1"]]], ["t", "<u4"]]
OTHER = ["|S5", "|V3", "<U3", "<M8[ns]", "<m8[s]"]
ALL_TYPES = NUMERIC + OTHER + [STRUCT_PLAIN, STRUCT_SUBARRAY, STRUCT_NESTED]


def np_dtype(v):
    """numpy dtype of a v2 dtype JSON value."""
    if isinstance(v, str):
        return np.dtype(v)
    return np.dtype([tuple([f[0], np_dtype(f[1])] + ([tuple(f[2])] if len(f) > 2 else [])) for f in v])


def type_tag(v):
    if isinstance(v, str):
        return v.replace("<", "le_").replace(">", "be_").replace("|", "").replace("[", "_").replace("]", "")
    return {id(STRUCT_PLAIN): "struct", id(STRUCT_SUBARRAY): "struct_subarray", id(STRUCT_NESTED): "struct_nested"}.get(
        id(v), "struct_other")


def specials(dt):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return np.array([True, False, True, True, False])
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        return np.array([ii.min, ii.max, 0, 1, ii.max - 1] + ([-1] if dt.kind == "i" else []), dtype=dt)
    if dt.kind == "f":
        fi = np.finfo(dt)
        s = fi.smallest_subnormal
        base = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, s, -s, fi.smallest_normal, fi.max, fi.min], dtype=dt)
        return np.concatenate([base, np.array(NAN_PAYLOAD[dt.itemsize], dtype=UINT_OF[dt.itemsize]).view(dt)])
    f = specials(np.dtype(f"f{dt.itemsize // 2}"))
    out = np.empty(len(f), dtype=dt)
    out.real, out.imag = f, np.roll(f, 3)
    return out


def fill_random(out, rng):
    """Fills `out` (any v2 dtype, structured included) with random values, specials first."""
    dt = out.dtype
    if dt.names:
        for n in dt.names:
            fill_random(out[n], rng)
        return out
    n = out.size
    native = dt.newbyteorder("=") if dt.kind not in "SVUb" else dt
    if dt.kind == "b":
        vals = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        ii = np.iinfo(dt)
        vals = rng.integers(ii.min, ii.max, n, dtype=native, endpoint=True)
        vals[n // 2:] = (np.arange(n - n // 2) // 4).astype(native)  # runs, so that compressors have work
    elif dt.kind == "f":
        vals = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(native)
    elif dt.kind == "c":
        vals = (rng.standard_normal(n) + 1j * rng.standard_normal(n) * 100).astype(native)
    elif dt.kind in "Mm":
        vals = rng.integers(-(2**62), 2**62, n, dtype=np.int64)
        vals[:2] = [np.iinfo(np.int64).min, 0]  # NaT, epoch
        vals = vals.view(native)
    elif dt.kind in "SV":
        raw = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8)
        raw[::3] = 0  # embedded NULs
        vals = np.frombuffer(raw.tobytes(), dtype=dt)
    elif dt.kind == "U":
        alphabet = ["a", "é", "🧊", "z", "\0", "Ω"]
        vals = np.array(["".join(alphabet[k] for k in rng.integers(0, 6, rng.integers(0, dt.itemsize // 4 + 1)))
                         for _ in range(n)], dtype=dt)
    else:
        raise ValueError(dt)
    if dt.kind in "biufc":
        sp = specials(native)[:n]
        vals[: len(sp)] = sp
    out[...] = vals.astype(dt).reshape(out.shape)  # (a field of a structured array is a strided view)
    return out


def make_data(dtype_json, shape, seed):
    return fill_random(np.zeros(shape, dtype=np_dtype(dtype_json)), np.random.default_rng(seed))


def le(a):
    """Bytes with every scalar little-endian (structured: field by field), C order."""
    a = np.ascontiguousarray(a)
    return a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()


def native(a):
    """The libzarr buffer of `a`: C order, every scalar native-endian."""
    a = np.ascontiguousarray(a)
    return a.astype(a.dtype.newbyteorder("="), copy=False).tobytes()


def first_diff(got, want, itemsize, shape):
    for i in range(0, min(len(got), len(want)), itemsize):
        if got[i:i + itemsize] != want[i:i + itemsize]:
            idx = np.unravel_index(i // itemsize, shape) if shape else ()
            return (f"first difference at {tuple(int(x) for x in idx)}: got {got[i:i + itemsize].hex()} "
                    f"want {want[i:i + itemsize].hex()}")
    return f"lengths {len(got)} != {len(want)}"


# ------------------------------------------------------------------------------------------------
# metadata


def fill_json(dt, value):
    """The .zarray fill_value of a numpy value (None: null)."""
    if value is None:
        return None
    dt = np.dtype(dt)
    if dt.names or dt.kind in "SV":
        return base64.b64encode(np.array(value, dtype=dt).tobytes()).decode()
    v = np.array(value, dtype=dt)[()]
    if dt.kind == "U":
        return str(v)
    if dt.kind == "b":
        return bool(v)
    if dt.kind in "iu":
        return int(v)
    if dt.kind in "Mm":
        return int(v.view("i8"))

    def f(x):
        x = float(x)
        return "NaN" if np.isnan(x) else ("Infinity" if x == np.inf else ("-Infinity" if x == -np.inf else x))

    return [f(v.real), f(v.imag)] if dt.kind == "c" else f(v)


def zarray(dtype_json, shape, chunks, *, fill=0, order="C", compressor=None, filters=None, sep="."):
    """A .zarray document (fill given as a value of the dtype, or None)."""
    return json.dumps({"zarr_format": 2, "shape": list(shape), "chunks": list(chunks), "dtype": dtype_json,
                       "fill_value": fill_json(np_dtype(dtype_json), fill), "order": order,
                       "filters": [f.get_config() for f in filters] if filters else None,
                       "compressor": compressor.get_config() if compressor is not None else None,
                       "dimension_separator": sep})


def default_fill(dt):
    dt = np.dtype(dt)
    if dt.names or dt.kind in "SVU":
        return None
    return np.zeros((), dtype=dt)[()]


COMPRESSORS = {
    "none": None,
    "zlib": numcodecs.Zlib(level=1),
    "gzip": numcodecs.GZip(level=5),
    "zstd_checksum": numcodecs.Zstd(level=3, checksum=True),
    "blosc_lz4_shuffle": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1),
    "blosc_lz4hc_bitshuffle": numcodecs.Blosc(cname="lz4hc", clevel=9, shuffle=2),
    "blosc_blosclz_noshuffle": numcodecs.Blosc(cname="blosclz", clevel=1, shuffle=0),
    "blosc_zstd_auto": numcodecs.Blosc(cname="zstd", clevel=3, shuffle=-1),
    "blosc_zlib_blocksize": numcodecs.Blosc(cname="zlib", clevel=6, shuffle=1, blocksize=64),
    "lz4": numcodecs.LZ4(acceleration=1),
    "bz2": numcodecs.BZ2(level=9),
    "lzma": numcodecs.LZMA(),
}


def roundtrip_filters(data, filters):
    """What numcodecs' decode(encode(x)) gives for elementwise filters (lossy ones included)."""
    x = np.ascontiguousarray(data).reshape(-1)
    for f in filters:
        x = f.encode(x)
    for f in reversed(filters):
        x = f.decode(x)
    return np.frombuffer(np.ascontiguousarray(np.asarray(x)).tobytes(), dtype=data.dtype).reshape(data.shape).copy()


# ------------------------------------------------------------------------------------------------
# readers


def zp_open(path, zarr_format=2):
    return zarr.open_array(store=LocalStore(str(path), read_only=True), mode="r", zarr_format=zarr_format)


def zp_can_read(dt):
    """zarr-python 3.1.6 has no data type for structured dtypes with subarray or nested fields."""
    dt = np.dtype(dt)
    return not dt.names or all(not dt.fields[n][0].subdtype and not dt.fields[n][0].names for n in dt.names)


def assert_zp_equal(path, expected, what="", zarr_format=2):
    """zarr-python reads `path` equal to `expected`; for the structured dtypes it cannot read, tools/np_zarr.py
    (numpy + numcodecs) is the reader instead."""
    if zarr_format == 2 and not zp_can_read(expected.dtype):
        got, who = le(np_read(path)), "np_zarr (zarr-python cannot read this structured dtype)"
    else:
        got, who = le(np.asarray(zp_open(path, zarr_format)[...])), "zarr-python"
    want = le(expected)
    assert got == want, f"{who} reads different data{what}: " + first_diff(got, want, expected.dtype.itemsize,
                                                                           expected.shape)


def assert_lib_equal(arr, expected, what=""):
    got = arr.read()
    want = native(expected)
    assert got == want, f"libzarr reads back different data{what}: " + first_diff(got, want, expected.dtype.itemsize,
                                                                                  expected.shape)


def lib_write(arr, data, start=None):
    arr.write(native(data), start=start if start is not None else [0] * data.ndim, count=list(data.shape))


def chunk_files(path):
    return sorted(str(p.relative_to(path)) for p in Path(path).rglob("*")
                  if p.is_file() and not p.name.startswith(".") and p.name != "zarr.json")


def write_and_check(r: Runner, tag, dtype_json, shape, chunks, data, expected=None, **meta):
    """libzarr creates the array, writes `data` whole, reads it back; zarr-python reads it back."""
    expected = data if expected is None else expected
    p = r.path(tag)
    with zc.Array.create(p, zarray(dtype_json, shape, chunks, **meta)) as a:
        assert a.zarr_format == 2, f"zarr_array_zarr_format {a.zarr_format}"
        lib_write(a, data)
        assert_lib_equal(a, expected)
    assert (p / ".zarray").is_file() and not (p / "zarr.json").exists(), "no .zarray written (or a zarr.json)"
    assert_zp_equal(p, expected)
    return p


# ------------------------------------------------------------------------------------------------
# libzarr writes, zarr-python reads


def t_matrix(r: Runner, dtype_json, cname, comp, seed):
    dt = np_dtype(dtype_json)
    shape, chunks = (7, 9), (3, 4)
    data = make_data(dtype_json, shape, seed)
    write_and_check(r, f"{type_tag(dtype_json)}_{cname}", dtype_json, shape, chunks, data,
                    fill=default_fill(dt), compressor=comp)


def t_fields(r: Runner):
    """zarr_array_field describes structured v2 dtypes as packed fields (libzarr-created arrays)."""
    want = {
        "struct": [("x", "float32", 0, 4), ("y", "int16", 4, 2), ("z", "uint8", 6, 1), ("flag", "bool", 7, 1)],
        "struct_subarray": [("id", "uint16", 0, 2), ("v", "float32", 2, 8), ("m", "int8", 10, 6)],
        "struct_nested": [("a", "int16", 0, 2), ("n", "struct", 2, 9), ("t", "uint32", 11, 4)],
    }
    for st in (STRUCT_PLAIN, STRUCT_SUBARRAY, STRUCT_NESTED):
        p = r.path(f"fields_{type_tag(st)}")
        with zc.Array.create(p, zarray(st, (4,), (2,), fill=None)) as a:
            assert a.dtype == ("struct", np_dtype(st).itemsize), a.dtype
            assert a.fields == want[type_tag(st)], f"{type_tag(st)} fields {a.fields}"


def t_order_f(r: Runner, dtype_json, comp_name, shape, chunks, seed):
    dt = np_dtype(dtype_json)
    data = make_data(dtype_json, shape, seed)
    write_and_check(r, f"F_{type_tag(dtype_json)}_{comp_name}_{len(shape)}d", dtype_json, shape, chunks, data,
                    fill=default_fill(dt), order="F", compressor=COMPRESSORS[comp_name])


def t_separator(r: Runner, sep, order):
    data = make_data("<i4", (5, 7, 3), 301)
    p = write_and_check(r, f"sep_{'slash' if sep == '/' else 'dot'}_{order}", "<i4", (5, 7, 3), (2, 3, 2), data,
                        sep=sep, order=order, compressor=COMPRESSORS["zlib"])
    key = f"2{sep}1{sep}1"
    assert (p / key).is_file(), f"chunk key {key} not stored; have {chunk_files(p)[:6]}..."


def t_filter(r: Runner, name, dtype_json, shape, chunks, filters, comp_name, seed, data=None, order="C"):
    dt = np_dtype(dtype_json)
    if data is None:
        data = make_data(dtype_json, shape, seed)
    expected = roundtrip_filters(data, filters)
    write_and_check(r, f"filter_{name}_{comp_name}", dtype_json, shape, chunks, data, expected,
                    fill=default_fill(dt), filters=filters, compressor=COMPRESSORS[comp_name], order=order)


def finite(dtype_json, shape, seed, scale=100.0):
    dt = np_dtype(dtype_json)
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * scale).astype(dt)


def filter_cases():
    """(name, dtype, shape, chunks, filters, data or None)."""
    rng = np.random.default_rng(400)
    labels = ["a", "bb", "ccc", "é"]
    cat = np.array([labels[i] for i in rng.integers(0, 4, 63)], dtype="<U3").reshape(7, 9)
    cat[0, 0] = "zz"  # not a label: stored as code 0, read back as "" (numcodecs)
    smooth_i4 = (np.arange(63).reshape(7, 9) // 3 * 5 - 40).astype("<i4")
    return [
        ("delta_i2", "<i2", (7, 9), (3, 4), [numcodecs.Delta(dtype="<i2")], None),
        ("delta_be_i4", ">i4", (7, 9), (3, 4), [numcodecs.Delta(dtype=">i4")], None),
        ("delta_u1_wrap", "|u1", (7, 9), (3, 4), [numcodecs.Delta(dtype="|u1")], None),
        ("delta_u8", "<u8", (7, 9), (3, 4), [numcodecs.Delta(dtype="<u8")], None),
        ("delta_astype_i8_i2", "<i8", (7, 9), (3, 4), [numcodecs.Delta(dtype="<i8", astype="<i2")],
         (np.arange(63, dtype="<i8").reshape(7, 9) * 37 - 1000)),
        ("fixedscaleoffset_f8_i4", "<f8", (7, 9), (3, 4),
         [numcodecs.FixedScaleOffset(offset=10, scale=100, dtype="<f8", astype="<i4")], finite("<f8", (7, 9), 401)),
        ("fixedscaleoffset_f4_u1", "<f4", (7, 9), (3, 4),
         [numcodecs.FixedScaleOffset(offset=0, scale=10, dtype="<f4", astype="|u1")],
         np.abs(finite("<f4", (7, 9), 402, 5.0))),
        ("quantize_f4", "<f4", (7, 9), (3, 4), [numcodecs.Quantize(digits=2, dtype="<f4")], finite("<f4", (7, 9), 403)),
        ("quantize_f8", "<f8", (7, 9), (3, 4), [numcodecs.Quantize(digits=3, dtype="<f8")],
         finite("<f8", (7, 9), 404, 1e4)),
        ("bitround_f4", "<f4", (7, 9), (3, 4), [numcodecs.BitRound(keepbits=7)], None),
        ("bitround_f8", "<f8", (7, 9), (3, 4), [numcodecs.BitRound(keepbits=20)], None),
        ("astype_f8_f4", "<f8", (7, 9), (3, 4), [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")],
         finite("<f8", (7, 9), 405)),
        ("astype_i8_i2", "<i8", (7, 9), (3, 4), [numcodecs.AsType(encode_dtype="<i2", decode_dtype="<i8")],
         (np.arange(63, dtype="<i8").reshape(7, 9) * 500 - 15000)),
        ("packbits", "|b1", (7, 9), (3, 4), [numcodecs.PackBits()], None),
        ("shuffle_i4", "<i4", (7, 9), (3, 4), [numcodecs.Shuffle(elementsize=4)], None),
        ("shuffle_be_f8", ">f8", (7, 9), (3, 4), [numcodecs.Shuffle(elementsize=8)], None),
        ("categorize_u1", "<U3", (7, 9), (3, 4), [numcodecs.Categorize(labels=labels, dtype="<U3", astype="|u1")], cat),
        ("categorize_u2", "<U3", (7, 9), (3, 4), [numcodecs.Categorize(labels=labels, dtype="<U3", astype="<u2")], cat),
        # chains
        ("delta_shuffle", "<u4", (7, 9), (3, 4), [numcodecs.Delta(dtype="<u4"), numcodecs.Shuffle(elementsize=4)],
         None),
        ("fso_shuffle", "<f8", (7, 9), (3, 4),
         [numcodecs.FixedScaleOffset(offset=1, scale=1000, dtype="<f8", astype="<i4"), numcodecs.Shuffle(elementsize=4)],
         finite("<f8", (7, 9), 406, 10.0)),
        ("astype_bitround", "<f8", (7, 9), (3, 4),
         [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8"), numcodecs.BitRound(keepbits=10)],
         finite("<f8", (7, 9), 407)),
        ("quantize_shuffle", "<f8", (7, 9), (3, 4),
         [numcodecs.Quantize(digits=1, dtype="<f8"), numcodecs.Shuffle(elementsize=8)], finite("<f8", (7, 9), 408)),
        ("delta_zlib_as_filter", "<i4", (7, 9), (3, 4), [numcodecs.Delta(dtype="<i4"), numcodecs.Zlib(level=1)],
         smooth_i4),
        ("packbits_shuffle", "|b1", (7, 9), (3, 4), [numcodecs.PackBits(), numcodecs.Shuffle(elementsize=1)], None),
    ]


def t_partial(r: Runner, tag, dtype_json, meta):
    """Read-modify-write: regions that cover chunks only partly, incl. the edge chunks."""
    shape, chunks = (7, 9), (3, 4)
    dt = np_dtype(dtype_json)
    filters = meta.get("filters") or []
    data = make_data(dtype_json, shape, 501) if not filters else finite(dtype_json, shape, 501)
    p = r.path(f"partial_{tag}")
    with zc.Array.create(p, zarray(dtype_json, shape, chunks, fill=default_fill(dt), **meta)) as a:
        lib_write(a, data)
        patch = (make_data(dtype_json, (4, 5), 502) if not filters else finite(dtype_json, (4, 5), 502))[::-1]
        lib_write(a, patch, start=[1, 2])
        data[1:5, 2:7] = patch
        edge = make_data(dtype_json, (1, 9), 503) if not filters else finite(dtype_json, (1, 9), 503)
        lib_write(a, edge, start=[6, 0])
        data[6:7, :] = edge
        expected = roundtrip_filters(data, filters) if filters else data
        assert_lib_equal(a, expected, " after partial writes")
        sub = a.read([2, 3], [3, 4])
        assert sub == native(expected[2:5, 3:7]), "libzarr region read differs"
    assert_zp_equal(p, expected, f" after partial writes ({tag})")


def t_missing_and_fill(r: Runner, tag, dtype_json, fill, sep):
    """Region writes leave chunks missing (read as the fill value by zarr-python); writing the fill value
    over whole chunks (or the in-bounds part of an edge chunk) deletes them."""
    shape, chunks = (7, 9), (3, 4)
    dt = np_dtype(dtype_json)
    p = r.path(f"fill_{tag}")
    data = make_data(dtype_json, shape, 601)
    fillv = np.zeros((), dtype=dt) if fill is None else np.array(fill, dtype=dt)
    key = (lambda i, j: f"{i}{sep}{j}")
    with zc.Array.create(p, zarray(dtype_json, shape, chunks, fill=fill, sep=sep, compressor=COMPRESSORS["zlib"])) as a:
        expected = np.empty(shape, dtype=dt)
        expected[...] = fillv
        lib_write(a, data[3:6, 4:8], start=[3, 4])  # exactly chunk 1.1
        expected[3:6, 4:8] = data[3:6, 4:8]
        lib_write(a, data[0:2, 0:3], start=[0, 0])  # part of chunk 0.0
        expected[0:2, 0:3] = data[0:2, 0:3]
        lib_write(a, data[6:7, 8:9], start=[6, 8])  # the one in-bounds element of edge chunk 2.2
        expected[6, 8] = data[6, 8]
        assert chunk_files(p) == sorted([key(0, 0), key(1, 1), key(2, 2)]), f"stored chunks {chunk_files(p)}"
        assert_lib_equal(a, expected, " with missing chunks")
        assert_zp_equal(p, expected, " with missing chunks")
        whole = np.empty((3, 4), dtype=dt)
        whole[...] = fillv
        lib_write(a, whole, start=[3, 4])  # the fill value over all of chunk 1.1
        expected[3:6, 4:8] = fillv
        lib_write(a, whole[:1, :1], start=[6, 8])  # edge chunk 2.2: its only in-bounds element becomes fill
        expected[6, 8] = fillv
        if fill is None:
            # fill_value null: missing chunks are undefined (v2 spec), so zero chunks must stay stored, as
            # zarr-python 2 (write_empty_chunks never applies to a null fill) keeps them
            assert (p / key(1, 1)).exists() and (p / key(2, 2)).exists(), (
                f"chunks of zeros deleted although fill_value is null (missing chunks are undefined): {chunk_files(p)}")
        else:
            assert not (p / key(1, 1)).exists(), f"chunk {key(1, 1)} still stored after writing the fill value over it"
            assert not (p / key(2, 2)).exists(), (
                f"edge chunk {key(2, 2)} still stored although all its in-bounds part is fill")
        lib_write(a, whole[:1, :2], start=[0, 0])  # chunk 0.0 still holds data
        expected[0, 0:2] = fillv
        assert (p / key(0, 0)).exists(), f"chunk {key(0, 0)} deleted although it still holds data"
        assert_lib_equal(a, expected, " after fill-value writes")
    assert_zp_equal(p, expected, " after fill-value writes")


def t_incomplete_zarray(r: Runner, missing):
    """A .zarray document without a member the v2 spec requires (order, fill_value, filters): libzarr may
    refuse it (METADATA) or complete it, but what it stores must be readable by zarr-python."""
    doc = json.loads(zarray("<i4", (4,), (2,)))
    del doc[missing]
    p = r.path(f"incomplete_{missing}")
    try:
        a = zc.Array.create(p, json.dumps(doc))
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_METADATA", f"refused with {e.name}: {e.message}"
        return
    with a:
        lib_write(a, np.arange(4, dtype="<i4"))
    try:
        assert_zp_equal(p, np.arange(4, dtype="<i4"), f" (.zarray created without '{missing}')")
    except AssertionError:
        raise
    except Exception as e:  # noqa: BLE001
        stored = json.loads((p / ".zarray").read_text())
        raise AssertionError(f"zarr-python cannot open the .zarray libzarr stored without the required member "
                             f"'{missing}' ({type(e).__name__}: {e}); stored: {stored}") from None


def t_zero_size(r: Runner):
    for shape, chunks in (((0,), (4,)), ((3, 0, 2), (2, 1, 2))):
        p = r.path("zero_len")
        with zc.Array.create(p, zarray("<f4", shape, chunks, compressor=COMPRESSORS["zlib"])) as a:
            a.write(b"", start=[0] * len(shape), count=list(shape))
        got = np.asarray(zp_open(p)[...])
        assert got.shape == shape, f"zarr-python shape {got.shape} != {shape}"
    p = r.path("zero_d")
    value = np.array(-0.0, dtype=">f8")
    with zc.Array.create(p, zarray(">f8", (), (), fill=1.5)) as a:
        a.write(native(value), start=[], count=[])
    assert (p / "0").is_file(), f"0-d chunk key '0' missing; have {chunk_files(p)}"
    assert_zp_equal(p, value, " (0-d)")


def t_attributes(r: Runner):
    attrs = {"title": "température", "emoji": "🧊", "nested": {"a": [1, 2.5, None, {"b": True}]}, "n": -7,
             "scale": 0.9748618674097633}
    p = r.path("attrs")
    with zc.Array.create(p, zarray("<i2", (4,), (2,))) as a:
        a.set_attributes(json.dumps(attrs))
        assert json.loads(a.attributes) == attrs
    assert (p / ".zattrs").is_file(), "set_attributes on a v2 array wrote no .zattrs"
    assert "attributes" not in json.loads((p / ".zarray").read_text()), ".zarray got an attributes member"
    assert dict(zp_open(p).attrs) == attrs, f"zarr-python attributes {dict(zp_open(p).attrs)}"
    with zc.Array.open(p, zc.READ_WRITE) as a:
        a.set_attributes("{}")
    assert dict(zp_open(p).attrs) == {}, "attributes not cleared"


def t_groups(r: Runner):
    root = r.path("hier")
    meta = zarray("<f4", (4, 6), (2, 4), compressor=COMPRESSORS["blosc_lz4_shuffle"])
    d0, d1, d2 = (make_data("<f4", (4, 6), s) for s in (701, 702, 703))
    with zc.Group.create(root, json.dumps({"title": "root", "n": 1}), zarr_format=2) as g:
        assert g.zarr_format == 2
        with g.create_group("sub", json.dumps({"level": 1, "unicode": "ü"})) as sub:
            assert sub.zarr_format == 2, "a child group of a v2 group is not v2"
            with sub.create_array("arr1", meta) as a:
                lib_write(a, d1)
            with sub.create_group("deep") as deep:
                deep.set_attributes(json.dumps({"level": 2}))
        with g.create_array("arr0", meta) as a:
            lib_write(a, d0)
            a.set_attributes(json.dumps({"units": "m"}))
        with g.create_array("x/y/arr2", meta) as a:  # implicit v2 parents x and x/y
            lib_write(a, d2)
        g.create_group("empty").close()
        g.set_attributes(json.dumps({"title": "root (renamed)", "n": 2, "list": [1, None]}))
        assert g.children() == {"arr0": "array", "empty": "group", "sub": "group", "x": "group"}, g.children()
    for rel in ("", "sub", "sub/deep", "empty", "x", "x/y"):
        assert (root / rel / ".zgroup").is_file(), f"no .zgroup in '{rel}'"
        assert not (root / rel / "zarr.json").exists(), f"a zarr.json in the v2 group '{rel}'"
    want = {
        "": ({"title": "root (renamed)", "n": 2, "list": [1, None]},
             {"arr0": "array", "empty": "group", "sub": "group", "x": "group"}),
        "sub": ({"level": 1, "unicode": "ü"}, {"arr1": "array", "deep": "group"}),
        "sub/deep": ({"level": 2}, {}),
        "empty": ({}, {}),
        "x": ({}, {"y": "group"}),
        "x/y": ({}, {"arr2": "array"}),
    }
    zroot = zarr.open_group(store=LocalStore(str(root), read_only=True), mode="r", zarr_format=2)
    for path, (attrs, children) in want.items():
        zg = zroot[path] if path else zroot
        assert isinstance(zg, zarr.Group), f"zarr-python sees '{path}' as {type(zg).__name__}"
        got = {k: ("array" if isinstance(v, zarr.Array) else "group") for k, v in zg.members()}
        assert got == children, f"zarr-python children of '{path}': {got} != {children}"
        assert dict(zg.attrs) == attrs, f"zarr-python attributes of '{path}': {dict(zg.attrs)} != {attrs}"
    for path, data in (("arr0", d0), ("sub/arr1", d1), ("x/y/arr2", d2)):
        assert le(np.asarray(zroot[path][...])) == le(data), f"zarr-python reads different data in {path}"
    assert dict(zroot["arr0"].attrs) == {"units": "m"}, f"arr0 attributes {dict(zroot['arr0'].attrs)}"
    # a zarr-python v2 group opened and extended by libzarr
    zp_root = r.path("zp_hier")
    zg = zarr.create_group(store=LocalStore(str(zp_root)), zarr_format=2, attributes={"by": "zarr-python"})
    zg.create_group("a")
    with zc.Group.open(zp_root, zc.READ_WRITE) as g:
        assert g.zarr_format == 2
        with g.create_group("b", json.dumps({"by": "libzarr"})) as b:
            assert b.zarr_format == 2
        g.create_array("c", zarray("|u1", (3,), (2,))).close()
    zg = zarr.open_group(store=LocalStore(str(zp_root), read_only=True), mode="r", zarr_format=2)
    got = {k: ("array" if isinstance(v, zarr.Array) else "group") for k, v in zg.members()}
    assert got == {"a": "group", "b": "group", "c": "array"}, got
    assert dict(zg["b"].attrs) == {"by": "libzarr"}


def t_zp_v2_to_lib(r: Runner):
    """The other direction, lightly (the fixtures cover reads): libzarr patches a zarr-python v2 array."""
    for dtype_json, kw in (("<f8", dict(compressors=numcodecs.Blosc("zstd", 5, 2))),
                           (">i2", dict(order="F", compressors=numcodecs.Zlib(1))),
                           (STRUCT_PLAIN, dict(compressors=None))):
        data = make_data(dtype_json, (7, 9), 801)
        p = r.path(f"zp_{type_tag(dtype_json)}")
        z = zarr.create_array(store=LocalStore(str(p)), shape=data.shape, chunks=(3, 4), dtype=data.dtype,
                              zarr_format=2, **kw)
        z[...] = data
        with zc.Array.open(p, zc.READ_WRITE) as a:
            assert a.zarr_format == 2
            assert_lib_equal(a, data, " (zarr-python wrote it)")
            patch = make_data(dtype_json, (3, 3), 802)
            lib_write(a, patch, start=[2, 3])
            data[2:5, 3:6] = patch
        assert_zp_equal(p, data, " (zarr-python wrote, libzarr patched)")


# ------------------------------------------------------------------------------------------------
# zarr_convert_v2_to_v3


def snapshot(path):
    return {str(f.relative_to(path)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(Path(path).rglob("*")) if f.is_file()}


def zp_read_v3(path):
    """zarr-python reads a converted array as v3; r<N> (the core raw type, which zarr-python names
    raw_bytes) is read from a copy whose data_type is rewritten to zarr-python's extension."""
    doc = json.loads((Path(path) / "zarr.json").read_text())
    if isinstance(doc["data_type"], str) and doc["data_type"].startswith("r"):
        tmp = Path(path).parent / (Path(path).name + "_as_raw_bytes")
        shutil.copytree(path, tmp)
        nb = int(doc["data_type"][1:]) // 8
        doc["data_type"] = {"name": "raw_bytes", "configuration": {"length_bytes": nb}}
        doc["fill_value"] = base64.b64encode(bytes(doc["fill_value"])).decode()
        (tmp / "zarr.json").write_text(json.dumps(doc))
        return zp_open(tmp, 3), True
    return zp_open(path, 3), False


def t_convert(r: Runner, tag, dtype_json, kw, regions=None):
    data = make_data(dtype_json, (7, 9), 901)
    dt = data.dtype
    p = r.path(f"convert_{tag}")
    attrs = {"units": "m", "n": [1, 2.5]}
    z = zarr.create_array(store=LocalStore(str(p)), shape=data.shape, chunks=(3, 4), dtype=dt, zarr_format=2,
                          attributes=attrs, **kw)
    if regions is None:
        z[...] = data
        expected = data
    else:
        expected = np.empty_like(data)
        expected[...] = z.fill_value if z.fill_value is not None else np.zeros((), dtype=dt)
        for reg in regions:
            z[reg] = data[reg]
            expected[reg] = data[reg]
    chunks_before = {k: v for k, v in snapshot(p).items() if not k.startswith(".")}
    zc.convert_v2_to_v3(p)
    assert (p / "zarr.json").is_file(), "no zarr.json after the conversion"
    assert not (p / ".zarray").exists() and not (p / ".zattrs").exists(), ".zarray/.zattrs left behind"
    chunks_after = {k: v for k, v in snapshot(p).items() if k != "zarr.json"}
    assert chunks_after == chunks_before, "chunks were moved or rewritten by the conversion"
    doc = json.loads((p / "zarr.json").read_text())
    assert doc["chunk_key_encoding"]["name"] == "v2", doc["chunk_key_encoding"]
    with zc.Array.open(p) as a:
        assert a.zarr_format == 3
        assert_lib_equal(a, expected, " (libzarr, after the conversion)")
        assert json.loads(a.attributes) == attrs
    z3, raw = zp_read_v3(p)
    got = np.asarray(z3[...])
    if raw:
        assert got.tobytes() == np.ascontiguousarray(expected).tobytes(), "zarr-python reads different raw bytes"
    else:
        assert le(got) == le(expected), "zarr-python reads the converted array differently: " + first_diff(
            le(got), le(expected), dt.itemsize, expected.shape)
    assert dict(z3.attrs) == attrs, f"zarr-python attributes after conversion {dict(z3.attrs)}"


def convert_cases():
    blosc = numcodecs.Blosc
    return [
        ("le_i4_none", "<i4", dict(compressors=None), None),
        ("be_f8_gzip", ">f8", dict(compressors=numcodecs.GZip(5)), None),
        ("le_u2_zstd_F", "<u2", dict(compressors=numcodecs.Zstd(level=3, checksum=True), order="F"), None),
        ("be_c16_blosc_bitshuffle", ">c16", dict(compressors=blosc("lz4", 5, 2)), None),
        ("b1_blosc_auto", "|b1", dict(compressors=blosc("zstd", 5, -1)), None),
        ("u1_blosc_auto", "|u1", dict(compressors=blosc("lz4hc", 9, -1)), None),
        ("le_i2_blosc_auto", "<i2", dict(compressors=blosc("blosclz", 5, -1)), None),
        ("le_f2_blosc_noshuffle_blocksize", "<f2", dict(compressors=blosc("zlib", 5, 0, blocksize=128)), None),
        ("be_i8_slash_F", ">i8", dict(compressors=None, order="F", chunk_key_encoding={"name": "v2", "separator": "/"}),
         None),
        ("le_f4_nan_fill_missing", "<f4", dict(compressors=numcodecs.GZip(1), fill_value=np.nan),
         [np.s_[0:3, 0:4], np.s_[6:7, 8:9]]),
        ("le_f8_null_fill", "<f8", dict(compressors=None, fill_value=None), None),
        ("le_i4_fill_missing", "<i4", dict(compressors=numcodecs.Zstd(level=1), fill_value=-7),
         [np.s_[3:6, 4:8]]),
        ("S5", "|S5", dict(compressors=numcodecs.GZip(1), fill_value=b"ab"), [np.s_[0:6, 0:8]]),
        ("V3", "|V3", dict(compressors=None), None),
        ("le_c8", "<c8", dict(compressors=None, fill_value=complex(1.5, -0.0)), [np.s_[0:3, 0:4]]),
        # filters and numcodecs compressors: numcodecs.<id> v3 codecs
        ("filter_delta", "<i4", dict(filters=[numcodecs.Delta(dtype="<i4")], compressors=None), None),
        ("filter_delta_be_astype_le", ">i4", dict(filters=[numcodecs.Delta(dtype=">i4", astype="<i8")],
                                              compressors=numcodecs.Zlib(1)), None),
        ("filter_shuffle_gzip", "<i4", dict(filters=[numcodecs.Shuffle(elementsize=4)], compressors=numcodecs.GZip(1)),
         None),
        ("filter_astype_blosc_auto", "<i2", dict(filters=[numcodecs.AsType(encode_dtype="<i8", decode_dtype="<i2")],
                                                compressors=blosc("lz4", 5, -1)), None),
        ("zlib", "<i4", dict(compressors=numcodecs.Zlib(1)), None),
        ("lz4", "<i4", dict(compressors=numcodecs.LZ4()), None),
        ("bz2", "<f8", dict(compressors=numcodecs.BZ2(1)), None),
        ("lzma_F", "<u2", dict(compressors=numcodecs.LZMA(), order="F"), None),
        ("crc32_compressor", "<u2", dict(compressors=numcodecs.CRC32()), None),
    ]


def refusal_cases():
    """(tag, dtype, zarr-python kwargs, words the error message must contain)."""
    return [
        ("filter_delta_after_shuffle", "<i4", dict(filters=[numcodecs.Shuffle(elementsize=4), numcodecs.Delta(dtype="|u1")],
                                                   compressors=None), ["delta", "after a bytes filter"]),
        ("filter_delta_order_F", "<i4", dict(filters=[numcodecs.Delta(dtype="<i4")], compressors=None, order="F"),
         ["delta", "order"]),
        ("filter_big_endian_output", ">i4", dict(filters=[numcodecs.Delta(dtype=">i4")], compressors=None),
         ["big-endian"]),
        ("jenkins_lookup3", "<i4", dict(compressors=numcodecs.JenkinsLookup3()), ["jenkins_lookup3"]),
        ("datetime", "<M8[ns]", dict(compressors=None), ["datetime"]),
        ("timedelta", "<m8[s]", dict(compressors=None), ["timedelta"]),
        ("unicode_null_fill", "<U3", dict(compressors=None, fill_value=None), ["unicode"]),
        ("unicode_default_fill", "<U3", dict(compressors=None), ["unicode"]),
        ("structured", STRUCT_PLAIN, dict(compressors=None), ["structured"]),
    ]


def t_convert_refused(r: Runner, tag, dtype_json, kw, words):
    data = make_data(dtype_json, (5, 4), 950)
    p = r.path(f"refuse_{tag}")
    z = zarr.create_array(store=LocalStore(str(p)), shape=data.shape, chunks=(3, 3), dtype=data.dtype, zarr_format=2,
                          attributes={"keep": True}, **kw)
    z[...] = data
    before = snapshot(p)
    try:
        zc.convert_v2_to_v3(p)
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_UNSUPPORTED", f"refused with {e.name} (expected ZARR_ERR_UNSUPPORTED): {e.message}"
        for w in words:
            assert w in e.message.lower(), f"the refusal does not name '{w}': {e.message}"
    else:
        raise AssertionError("the conversion succeeded; it must be refused")
    assert snapshot(p) == before, "a refused conversion changed files"


def t_convert_errors(r: Runner):
    p = r.path("convert_errors")
    p.mkdir()
    try:
        zc.convert_v2_to_v3(p)
        raise AssertionError("converting an empty directory succeeded")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_NOT_FOUND", e
    with zc.Array.create(p / "v3", json.dumps({
            "zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "int8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]})):
        pass
    try:
        zc.convert_v2_to_v3(p / "v3")
        raise AssertionError("converting a v3 array succeeded")
    except zc.ZarrError as e:
        assert e.name in ("ZARR_ERR_NOT_FOUND", "ZARR_ERR_EXISTS"), e
    # a v2 array that already has a zarr.json beside it
    with zc.Array.create(p / "both", zarray("<i2", (4,), (2,))):
        pass
    (p / "both" / "zarr.json").write_text((p / "v3" / "zarr.json").read_text())
    before = snapshot(p / "both")
    try:
        zc.convert_v2_to_v3(p / "both")
        raise AssertionError("converting over an existing zarr.json succeeded")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_EXISTS", e
    assert snapshot(p / "both") == before, "a refused conversion changed files"
    # a v2 group is not an array
    zc.Group.create(p / "grp", None, zarr_format=2).close()
    try:
        zc.convert_v2_to_v3(p / "grp")
        raise AssertionError("converting a v2 group succeeded")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_NOT_FOUND", e


# ------------------------------------------------------------------------------------------------


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="libzarr_v2_interop_") as tmp:
        r = harness.Runner(Path(tmp), args.verbose, args.k)
        for i, dtype_json in enumerate(ALL_TYPES):
            for j, (cname, comp) in enumerate(COMPRESSORS.items()):
                r.run(f"matrix/{type_tag(dtype_json)}/{cname}", t_matrix, r, dtype_json, cname, comp, 1000 + 50 * i + j)
        r.run("struct_fields", t_fields, r)
        for k, (dtype_json, comp) in enumerate([("<i4", "none"), (">f8", "zlib"), ("<c8", "blosc_lz4_shuffle"),
                                                ("|b1", "gzip"), ("|S5", "zstd_checksum"), (STRUCT_NESTED, "none"),
                                                (">u2", "lz4"), ("<f4", "bz2"), ("<M8[ns]", "lzma")]):
            for shape, chunks in (((7, 9), (3, 4)), ((4, 5, 6), (3, 2, 4)), ((3, 2, 4, 5), (2, 2, 3, 2))):
                r.run(f"order_F/{type_tag(dtype_json)}/{comp}/{len(shape)}d", t_order_f, r, dtype_json, comp, shape,
                      chunks, 200 + k)
        for sep in (".", "/"):
            for order in ("C", "F"):
                r.run(f"separator/{sep}/{order}", t_separator, r, sep, order)
        for name, dtype_json, shape, chunks, filters, data in filter_cases():
            for comp in ("none", "zlib", "blosc_lz4_shuffle", "zstd_checksum", "lzma"):
                r.run(f"filter/{name}/{comp}", t_filter, r, name, dtype_json, shape, chunks, filters, comp,
                      450 + len(name), data)
        r.run("filter/delta/order_F", t_filter, r, "delta_F", "<i2", (7, 9), (3, 4), [numcodecs.Delta(dtype="<i2")],
              "bz2", 460, None, "F")
        for tag, dtype_json, meta in (
                ("le_f8_none", "<f8", {}), ("be_i2_zlib", ">i2", {"compressor": COMPRESSORS["zlib"]}),
                ("le_c16_F_blosc", "<c16", {"order": "F", "compressor": COMPRESSORS["blosc_zstd_auto"]}),
                ("struct_slash", STRUCT_SUBARRAY, {"sep": "/", "compressor": COMPRESSORS["gzip"]}),
                ("S5_lz4", "|S5", {"compressor": COMPRESSORS["lz4"]}),
                ("delta_zlib", "<i4", {"filters": [numcodecs.Delta(dtype="<i4")], "compressor": COMPRESSORS["zlib"]}),
                ("quantize_F_bz2", "<f8", {"filters": [numcodecs.Quantize(digits=2, dtype="<f8")], "order": "F",
                                           "compressor": COMPRESSORS["bz2"]})):
            r.run(f"partial_write/{tag}", t_partial, r, tag, dtype_json, meta)
        for tag, dtype_json, fill, sep in (
                ("i4_neg", "<i4", -5, "."), ("f4_nan", "<f4", np.nan, "/"), ("be_f8_inf", ">f8", np.inf, "."),
                ("f2_neginf", "<f2", -np.inf, "."), ("c8_nan", "<c8", complex(np.nan, 1.0), "/"),
                ("b1_true", "|b1", True, "."), ("u8_max", "<u8", np.iinfo(np.uint64).max, "/"),
                ("S3_base64", "|S3", b"xyz", "."), ("V2_base64", "|V2", np.void(b"\x01\x02"), "/"),
                ("struct_base64", STRUCT_PLAIN, np.array((2.5, -3, 7, True), dtype=np_dtype(STRUCT_PLAIN))[()], "."),
                ("M8_nat", "<M8[ns]", np.datetime64("NaT", "ns"), "."), ("i2_null", "<i2", None, ".")):
            r.run(f"missing_and_fill/{tag}", t_missing_and_fill, r, tag, dtype_json, fill, sep)
        for missing in ("order", "fill_value", "filters", "compressor"):
            r.run(f"incomplete_zarray/{missing}", t_incomplete_zarray, r, missing)
        r.run("zero_size_and_0d", t_zero_size, r)
        r.run("attributes", t_attributes, r)
        r.run("groups", t_groups, r)
        r.run("zarr_python_v2_to_libzarr", t_zp_v2_to_lib, r)
        for tag, dtype_json, kw, regions in convert_cases():
            r.run(f"convert/{tag}", t_convert, r, tag, dtype_json, kw, regions)
        for tag, dtype_json, kw, words in refusal_cases():
            r.run(f"convert_refused/{tag}", t_convert_refused, r, tag, dtype_json, kw, words)
        r.run("convert_errors", t_convert_errors, r)
    dt = time.monotonic() - t0
    missing = {}
    for _, msg in r.failed:
        m = re.search(r"unsupported v2 (compressor|filter) '([^']+)'", msg)
        if m:
            missing[m.group(2)] = missing.get(m.group(2), 0) + 1
    if missing:
        print(f"note: {sum(missing.values())} of the failures are numcodecs codecs this build refuses as unsupported: "
              + ", ".join(f"{k} {v}" for k, v in sorted(missing.items())))
    print(f"{r.passed} passed, {len(r.failed)} failed ({dt:.1f} s)")
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
