#!/usr/bin/env python3
"""Interop: the HDF5 tools h5tozarr and zarrtoh5 (tools/hdf5/) against h5py and zarr-python.

    H5TOZARR=... ZARRTOH5=... python3 tests/interop/test_hdf5_tools.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (h5py, zarr-python or numpy not importable, or the
tools not given). CMakeLists.txt passes the tool paths in $H5TOZARR and $ZARRTOH5.

Covered: an HDF5 file written by h5py with every integer (1, 2, 4, 8 bytes, signed and unsigned) and
float (4, 8 bytes) type in both byte orders plus h5py booleans complex numbers (both sizes and byte orders) and fixed- and variable-length strings, ranks 0 to 4, chunked and contiguous
datasets, no compression / gzip / gzip + shuffle, fill values, nested groups, attributes of each kind
(integers, floats, strings fixed and variable, booleans, 1-D and 2-D arrays of them, an empty one) and a
dataset of many chunks with edge chunks (the chunk loop), converted
  * by h5tozarr to Zarr v3, v2, v3 sharded and with --codec, each read by zarr-python and compared
    with h5py value by value: data, dtype, shape, chunks (the documented rule for contiguous datasets),
    fill value, compressor, attributes;
  * back by zarrtoh5, read by h5py and compared with the source: data, dtype, shape, chunks, deflate
    level and shuffle, fill value, attributes (as values: integers become int64, floats float64);
  * zarrtoh5 of hierarchies written by zarr-python (v3 zstd, blosc with shuffle, v2 zlib + shuffle
    filter) and the refusals (unsupported types skipped with exit status 2, a missing input, an existing
    output, bad options);
  * a 256 MiB dataset converted both ways with a peak resident memory under 64 MiB (chunk by chunk), and
    the progress line: shown on a terminal (a pty), absent with -q or when stderr is not a terminal.
"""
import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import h5py
    import numpy as np
    import zarr
except ImportError as e:
    print(f"SKIPPED: {e}")
    sys.exit(77)
import harness  # noqa: E402
from tool_outputs import hdf5_record  # noqa: E402

# zarr-python warns that null_terminated_bytes (fixed-length strings) has no v3 spec yet: expected here.
warnings.filterwarnings("ignore", message=".*does not have a Zarr V3 specification.*")

H5TOZARR = os.environ.get("H5TOZARR")
ZARRTOH5 = os.environ.get("ZARRTOH5")

INT_TYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]
FLOAT_TYPES = ["f4", "f8"]


def run(*args, expect=0):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300)
    assert p.returncode == expect, f"{args[0]} exit {p.returncode} (expected {expect}): {p.stderr.strip()}"
    return p


def values(rng, dt, shape):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt.newbyteorder("="), endpoint=True).astype(dt)
    a = (rng.standard_normal(size=shape) * 1e3).astype(dt)
    if a.size > 3:
        a.flat[1] = np.nan
        a.flat[2] = -np.inf
    return a


ATTRS = {
    "an_int": np.int32(-7),
    "a_uint64": np.uint64(2**63 + 5),
    "a_float": np.float64(2.5),
    "a_float32": np.float32(0.1),
    "a_whole_float": np.float64(3.0),
    "a_string": "héllo \"wörld\"\n",
    "fixed_bytes": np.bytes_(b"fixed"),
    "a_bool": np.bool_(True),
    "ints": np.arange(5, dtype="i2"),
    "floats": np.array([0.5, -1.25, 1e300]),
    "strings": ["a", "bc", ""],
    "bools": np.array([True, False, True]),
    "matrix": np.arange(6, dtype="i8").reshape(2, 3),
    "float_matrix": np.linspace(0, 1, 6).reshape(3, 2),
    "empty_floats": np.zeros(0),
}


def make_source(path):
    """The h5py file every conversion starts from; returns {dataset path: chunking expected in Zarr}."""
    rng = np.random.default_rng(42)
    with h5py.File(path, "w") as f:
        for k, v in ATTRS.items():
            f.attrs[k] = v
        g = f.create_group("types")
        g.attrs["title"] = "every numeric type"
        for t in INT_TYPES + FLOAT_TYPES:
            for order in "<>":
                dt = np.dtype(order + t)
                name = f"{t}{'le' if order == '<' else 'be'}"
                fill = 3 if dt.kind in "iu" else -1.5
                d = g.create_dataset(name, data=values(rng, dt, (13, 7)), chunks=(5, 4), fillvalue=fill)
                d.attrs["dtype"] = str(dt)
        g.create_dataset("bool", data=values(rng, bool, (9, 4)), chunks=(4, 4))
        for t in ("<c8", ">c8", "<c16", ">c16"):
            z = np.empty((6, 5), dtype=t)
            z.real, z.imag = values(rng, "f8", (6, 5)), values(rng, "f8", (6, 5))[::-1]
            g.create_dataset(f"complex{np.dtype(t).itemsize * 8}{'le' if t[0] == '<' else 'be'}", data=z,
                             chunks=(4, 4), fillvalue=complex(1.5, -2), compression="gzip", shuffle=True)
        r = f.create_group("ranks/nested/deeper")
        r.attrs["level"] = 3
        f["ranks"].attrs["kind"] = np.array([b"x", b"yz"], dtype="S2")
        f.create_dataset("ranks/scalar", data=np.float64(6.25))
        f.create_dataset("ranks/r1", data=np.arange(10, dtype="i4"))
        f.create_dataset("ranks/nested/r3", data=values(rng, "f4", (4, 5, 6)), chunks=(2, 5, 4),
                         compression="gzip", compression_opts=4, shuffle=True)
        r.create_dataset("r4", data=values(rng, "u2", (3, 4, 2, 5)), chunks=(2, 2, 2, 2), compression="gzip",
                         compression_opts=9)
        r.create_dataset("empty", shape=(0, 4), maxshape=(None, 4), dtype="i2", chunks=(2, 2))
        s = f.create_group("strings")
        words = np.array([b"alpha", b"be", b"", b"gamma", b"d\xc3\xa9lta", b"x"] * 5, dtype="S5").reshape(5, 6)
        s.create_dataset("fixed", data=words, chunks=(2, 4), compression="gzip", compression_opts=5, fillvalue=b"none")
        s.create_dataset("contiguous", data=words[:, :3].astype("S3"))
        s.create_dataset("empty_fill", shape=(4,), dtype="S2", chunks=(3,))
        texts = np.array(["", "ascii", "ünïcödé ✓", "a much longer string " * 20, "tab\there", "€"] * 6,
                         dtype=object).reshape(4, 9)
        s.create_dataset("vlen", data=texts, dtype=h5py.string_dtype(), chunks=(3, 4), compression="gzip")
        s.create_dataset("vlen_contiguous", data=texts[0], dtype=h5py.string_dtype())
        s.create_dataset("vlen_scalar", data="one string", dtype=h5py.string_dtype())
        c = f.create_group("compression")
        c.create_dataset("gzip", data=values(rng, "i8", (40, 30)), chunks=(16, 16), compression="gzip",
                         compression_opts=1)
        c.create_dataset("gzip_shuffle", data=values(rng, ">f8", (40, 30)), chunks=(16, 16),
                         compression="gzip", compression_opts=6, shuffle=True)
        c.create_dataset("none", data=values(rng, "u4", (40, 30)), chunks=(16, 16))
        c.create_dataset("fill_only", shape=(20, 20), dtype="f4", chunks=(8, 8), fillvalue=np.nan)
        # many chunks, edge chunks: the chunk loop
        big = f.create_dataset("big/chunked", data=values(rng, "f8", (1000, 333)), chunks=(64, 50),
                               compression="gzip", compression_opts=3, shuffle=True)
        big.attrs["note"] = "105 chunks"
        # contiguous, 2.6 MB: the 1 MiB chunk rule splits it
        f.create_dataset("big/contiguous", data=values(rng, "i8", (700, 500)))


def h5_chunks(d):
    """The Zarr chunk shape h5tozarr documents for an HDF5 dataset."""
    if d.chunks is not None:
        return d.chunks
    chunk = [max(s, 1) for s in d.shape]
    nbytes = d.dtype.itemsize * int(np.prod(chunk))
    for i in range(len(chunk)):
        while chunk[i] > 1 and nbytes > 1 << 20:
            nbytes = nbytes // chunk[i] * ((chunk[i] + 1) // 2)
            chunk[i] = (chunk[i] + 1) // 2
    return tuple(chunk)


def norm(v):
    """An attribute value as the JSON value h5tozarr writes for it."""
    if isinstance(v, h5py.Empty):
        return None
    if isinstance(v, np.ndarray):
        return [norm(x) for x in v]
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.generic):
        return norm(v.item())
    return v


def same_attrs(h5attrs, other, where):
    a = {k: norm(v) for k, v in h5attrs.items()}
    b = {k: norm(v) for k, v in dict(other).items()}
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True), f"{where}: attributes {a} != {b}"


def h5_attr_type(attrs, k):
    """The type name h5tozarr records in _libzarr_hdf5.attribute_types for an HDF5 attribute."""
    dt = attrs.get_id(k).dtype
    if h5py.check_string_dtype(dt):
        return "string" if h5py.check_string_dtype(dt).length is None else "char"
    return "bool" if dt.kind == "b" else dt.name


def same_zarr_attrs(h5attrs, zattrs, where):
    """The attributes h5tozarr wrote: each value cast to its recorded type equals the HDF5 value, and the
    recorded types are the HDF5 types (float32 is written as the shortest decimal of the float32)."""
    zattrs = dict(zattrs)
    record = hdf5_record(zattrs)
    zattrs.pop("_libzarr_hdf5", None)
    types = record.get("attribute_types", {})
    want_types = {k: h5_attr_type(h5attrs, k) for k in h5attrs}
    assert types == want_types, f"{where}: attribute_types {types} != {want_types}"

    def typed(v, t):
        if v is None or t in ("string", "char"):
            return norm(v)
        a = np.asarray(v, dtype=t)
        return norm(a[()] if a.ndim == 0 else a)

    a = {k: norm(v) for k, v in h5attrs.items()}
    b = {k: typed(v, types.get(k, "string")) for k, v in zattrs.items()}
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True), f"{where}: attributes {a} != {b}"


def same_values(a, b, where):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "OTU" or b.dtype.kind in "OTU":  # variable-length strings: compare as str
        def text(x):
            return np.vectorize(lambda e: e.decode() if isinstance(e, bytes) else str(e), otypes=[object])(x)
        a, b = text(a), text(b)
    assert a.shape == b.shape, f"{where}: shape {a.shape} != {b.shape}"
    if a.dtype.kind in "fc":
        ok = np.array_equal(a, b, equal_nan=True)
    else:
        ok = np.array_equal(a, b)
    assert ok, f"{where}: values differ"


def same_fill(a, b):
    """Fill values equal: NaN equals NaN; byte strings compare without their NUL padding."""
    if isinstance(a, str) or isinstance(b, str):
        return (a.decode() if isinstance(a, bytes) else a) == (b.decode() if isinstance(b, bytes) else b)
    if isinstance(a, bytes) or isinstance(b, bytes):
        return bytes(a).rstrip(b"\0") == bytes(b).rstrip(b"\0")
    if np.isnan(a) if np.asarray(a).dtype.kind == "f" else False:
        return bool(np.isnan(b))
    return bool(a == b)


def zarr_fill_ok(d, z, fmt):
    """The Zarr fill value of h5py dataset `d`: the fill value the writer set; where HDF5 has only its
    default, none in Zarr v2 (null, so that xarray masks nothing) and that default in v3
    (docs/hdf5-netcdf.md, "Fill values")."""
    user_fill = d.id.get_create_plist().fill_value_defined() == h5py.h5d.FILL_VALUE_USER_DEFINED
    if fmt == 2 and not user_fill:
        return z.fill_value is None
    return same_fill(d.fillvalue, z.fill_value)


def walk(f):
    out = {}

    def visit(name, obj):
        out[name] = obj  # returns None: visititems goes on

    f.visititems(visit)
    return out


def native(dt):
    return np.dtype(dt).newbyteorder("<") if np.dtype(dt).itemsize > 1 else np.dtype(dt)


def h5_filters(d):
    level = d.compression_opts if d.compression == "gzip" else None
    return level, bool(d.shuffle)


def check_zarr(src, out, fmt, shard=None, codec=None):
    root = zarr.open_group(out, mode="r")
    assert root.metadata.zarr_format == fmt, f"zarr_format {root.metadata.zarr_format}"
    with h5py.File(src, "r") as f:
        same_zarr_attrs(f.attrs, root.attrs, "/")
        n_arrays = 0
        for name, obj in walk(f).items():
            z = root[name]
            if isinstance(obj, h5py.Group):
                assert isinstance(z, zarr.Group), f"{name}: not a group"
                same_zarr_attrs(obj.attrs, z.attrs, name)
                continue
            n_arrays += 1
            assert isinstance(z, zarr.Array), f"{name}: not an array"
            zattrs = dict(z.attrs)
            # every dimension named as netCDF-C names a dataset's dimensions without scales (phony_dim_N;
            # test_h5tozarr_netcdf.py compares the names with netCDF-C's): v2 `_ARRAY_DIMENSIONS`, v3
            # dimension_names, so that xarray opens the array
            names = zattrs.pop("_ARRAY_DIMENSIONS", None) if fmt == 2 else z.metadata.dimension_names
            assert (names is not None or obj.ndim == 0) and len(names or ()) == obj.ndim, f"{name}: {names}"
            assert all(re.fullmatch(r"phony_dim_\d+", n) for n in names), f"{name}: dimension names {names}"
            same_zarr_attrs(obj.attrs, zattrs, name)
            if fmt == 2 and z.fill_value is None:   # HDF5's default fill, recorded for zarrtoh5
                assert hdf5_record(zattrs).get("hdf5_fill") == "default", f"{name}: {zattrs}"
            if h5py.check_string_dtype(obj.dtype) and obj.dtype.kind == "O":
                assert z.dtype.kind in "OT", f"{name}: dtype {z.dtype} for a variable-length string"
            else:
                assert z.dtype == native(obj.dtype), f"{name}: dtype {z.dtype} != {obj.dtype}"
            assert z.shape == obj.shape, f"{name}: shape {z.shape} != {obj.shape}"
            same_values(obj[()], z[()], name)
            if obj.ndim:
                chunks = h5_chunks(obj)
                if shard and len(shard) == obj.ndim:
                    assert z.chunks == chunks, f"{name}: inner chunks {z.chunks} != {chunks}"
                    want = tuple(-(-s // c) * c for s, c in zip(shard, chunks))
                    assert z.shards == want, f"{name}: shards {z.shards} != {want}"
                else:
                    assert z.chunks == chunks, f"{name}: chunks {z.chunks} != {chunks}"
            assert zarr_fill_ok(obj, z, fmt), f"{name}: fill value {z.fill_value!r} != {obj.fillvalue!r}"
            # the compressor
            comps = z.compressors
            level, shuffle = h5_filters(obj)
            if codec is not None:
                want = codec.split(":")[0]
                got = [type(c).__name__.lower() for c in comps]
                if want == "none":
                    assert comps == (), f"{name}: compressors {comps}"
                else:
                    assert len(comps) == 1 and want.split("-")[0] in got[0], f"{name}: compressors {got}"
            elif level is None:
                assert comps == (), f"{name}: compressors {comps}"
            else:
                assert len(comps) == 1, f"{name}: compressors {comps}"
                conf = comps[0].to_dict() if hasattr(comps[0], "to_dict") else comps[0].get_config()
                text = json.dumps(conf)
                if shuffle:
                    assert "blosc" in text and "zlib" in text and str(level) in text, f"{name}: {text}"
                else:
                    assert "gzip" in text and f"{level}" in text, f"{name}: {text}"
    assert n_arrays >= 30, f"only {n_arrays} arrays compared"


def check_h5_roundtrip(src, back, shard=None):
    with h5py.File(src, "r") as f, h5py.File(back, "r") as g:
        same_attrs(f.attrs, g.attrs, "/")
        a, b = walk(f), walk(g)
        assert sorted(a) == sorted(b), f"members {sorted(a)} != {sorted(b)}"
        for name, obj in a.items():
            o = b[name]
            assert type(o) is type(obj), f"{name}: {type(o)} != {type(obj)}"
            same_attrs(obj.attrs, o.attrs, name)
            if isinstance(obj, h5py.Group):
                continue
            assert o.dtype == native(obj.dtype), f"{name}: dtype {o.dtype} != {obj.dtype}"
            assert o.shape == obj.shape, f"{name}: shape"
            same_values(obj[()], o[()], name)
            if obj.ndim:
                want = tuple(min(c, s) if s else c for c, s in zip(h5_chunks(obj), obj.shape))
                assert o.chunks == want, f"{name}: chunks {o.chunks} != {want}"
                assert h5_filters(o) == h5_filters(obj), f"{name}: filters {h5_filters(o)} != {h5_filters(obj)}"
            assert same_fill(obj.fillvalue, o.fillvalue), f"{name}: fill value {o.fillvalue!r} != {obj.fillvalue!r}"


def count_chunk_files(path):
    return sum(1 for p in Path(path).rglob("*") if p.is_file() and p.name not in
               ("zarr.json", ".zarray", ".zattrs", ".zgroup", ".zarr.lock"))


def t_roundtrip(r, fmt, extra, shard=None, codec=None):
    src = r.path("src.h5")
    make_source(src)
    out = r.path("out.zarr")
    run(H5TOZARR, *extra, src, out)
    check_zarr(src, out, fmt, shard=shard, codec=codec)
    if shard is None and fmt == 3:
        n = count_chunk_files(out / "big" / "chunked")
        assert n == 16 * 7, f"big/chunked: {n} chunk files, expected 112"
    back = r.path("back.h5")
    run(ZARRTOH5, out, back)
    if codec is None:
        check_h5_roundtrip(src, back)
    else:  # the data and attributes survive a change of codec
        with h5py.File(src, "r") as f, h5py.File(back, "r") as g:
            for name, obj in walk(f).items():
                same_attrs(obj.attrs, g[name].attrs, name)
                if isinstance(obj, h5py.Dataset):
                    same_values(obj[()], g[name][()], name)
                    if obj.ndim and obj.size:
                        assert g[name].compression == ("gzip" if not codec.startswith("none") else None), \
                            f"{name}: {g[name].compression}"


def t_from_zarr_python(r):
    """Hierarchies written by zarr-python: codecs without an HDF5 filter become deflate."""
    from zarr.codecs import BloscCodec, GzipCodec, ZstdCodec
    import numcodecs
    rng = np.random.default_rng(1)
    out = r.path("zp.zarr")
    root = zarr.open_group(out, mode="w", zarr_format=3)
    root.attrs.update({"obj": {"a": 1}, "mixed": [1, "x"], "nothing": None, "big": 2**70})
    data = {}
    for name, comp, dt in [("zstd", ZstdCodec(level=5), "i4"), ("blosc", BloscCodec(cname="lz4", clevel=7,
                           shuffle="shuffle"), "f8"), ("gzip", GzipCodec(level=2), "u2"), ("raw", None, "i1")]:
        a = root.create_array(name, shape=(30, 20), chunks=(8, 8), dtype=dt, compressors=comp, fill_value=1)
        data[name] = values(rng, dt, (30, 20))
        a[...] = data[name]
    words = np.array([b"ab", b"cdef", b"", b"g", b"hij", b"k", b"lm"], dtype="S4")
    root.create_array("bytes", shape=(7,), chunks=(3,), dtype="S4", fill_value=b"zz")[...] = words
    texts = np.array(["x", "", "ünï", "longer text here", "z"], dtype=object)
    root.create_array("text", shape=(5,), chunks=(2,), dtype=str)[...] = texts
    sh = root.create_array("sub/sharded", shape=(50,), chunks=(5,), shards=(25,), dtype="f4")
    data["sub/sharded"] = values(rng, "f4", (50,))
    sh[...] = data["sub/sharded"]
    v2 = r.path("zp2.zarr")
    g2 = zarr.open_group(v2, mode="w", zarr_format=2)
    a2 = g2.create_array("z", shape=(17, 9), chunks=(4, 4), dtype="<u8", compressors=numcodecs.Zlib(level=3),
                         filters=[numcodecs.Shuffle(elementsize=8)], fill_value=7)
    v2data = values(rng, "u8", (17, 9))
    a2[...] = v2data
    g2.create_array("text", shape=(5,), chunks=(3,), dtype=str)[...] = texts
    g2.create_array("bytes", shape=(7,), chunks=(2,), dtype="|S4", fill_value=b"q",
                    compressors=numcodecs.Zlib(level=1))[...] = words
    back, back2 = r.path("zp.h5"), r.path("zp2.h5")
    run(ZARRTOH5, out, back)
    run(ZARRTOH5, v2, back2)
    with h5py.File(back, "r") as f:
        assert json.loads(f.attrs["obj"]) == {"a": 1}, f.attrs["obj"]
        assert json.loads(f.attrs["mixed"]) == [1, "x"]
        assert isinstance(f.attrs["nothing"], h5py.Empty)
        assert f.attrs["big"] == float(2**70)
        want = {"zstd": (6, False), "blosc": (7, True), "gzip": (2, False), "raw": (None, False)}
        for name, filt in want.items():
            same_values(data[name], f[name][()], name)
            assert h5_filters(f[name]) == filt, f"{name}: {h5_filters(f[name])} != {filt}"
            assert f[name].chunks == (8, 8) and f[name].fillvalue == 1
        same_values(data["sub/sharded"], f["sub/sharded"][()], "sub/sharded")
        same_values(words, f["bytes"][()], "bytes")
        same_values(texts, f["text"][()], "text")
        assert h5py.check_string_dtype(f["text"].dtype).encoding == "utf-8" and f["text"].chunks == (2,)
        assert f["bytes"].dtype == np.dtype("S4") and same_fill(f["bytes"].fillvalue, b"zz")
        assert f["sub/sharded"].chunks == (5,), f["sub/sharded"].chunks
    with h5py.File(back2, "r") as f:
        same_values(v2data, f["z"][()], "z")
        assert h5_filters(f["z"]) == (3, True) and f["z"].fillvalue == 7 and f["z"].chunks == (4, 4)
        same_values(words, f["bytes"][()], "v2 bytes")
        same_values(texts, f["text"][()], "v2 text")
        assert f["bytes"].dtype == np.dtype("S4") and same_fill(f["bytes"].fillvalue, b"q")
        assert h5_filters(f["bytes"]) == (1, False)


# ---- --codec: every compressor of libzarr's codec registry -----------------------------------------------
FLAT_STRUCT = np.dtype([("id", "<i4"), ("x", ">f8"), ("k", "i1")])  # 13 bytes: blosc's typesize is the stand-in's


def registry_names():
    """The compressor names of libzarr's spec API, asked through the C API (zarr_array_spec_compressor_name)."""
    lib = ctypes.CDLL(os.environ.get("ZARR_LIB") or str(harness.ROOT / "target" / "release" / "libzarr.so"))
    f = lib.zarr_array_spec_compressor_name
    f.argtypes, f.restype = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_char_p)], ctypes.c_int
    names, out = [], ctypes.c_char_p()
    while f(len(names), ctypes.byref(out)) == 0:
        names.append(out.value.decode())
    assert out.value is None, "zarr_array_spec_compressor_name left a name on failure"
    return names


def make_codec_source(path):
    rng = np.random.default_rng(7)
    with h5py.File(path, "w") as f:
        f.create_dataset("i2", data=values(rng, "<i2", (13, 7)), chunks=(5, 4), fillvalue=3)
        f.create_dataset("f4be", data=values(rng, ">f4", (9, 10)), chunks=(4, 4), fillvalue=-1.5)
        f.create_dataset("f8", data=values(rng, "f8", (50,)), chunks=(16,), compression="gzip", shuffle=True)
        f.create_dataset("u1", data=values(rng, "u1", (30,)), chunks=(7,))
        f.create_dataset("bool", data=values(rng, bool, (6, 5)), chunks=(4, 4))
        z = np.empty(11, "<c16")
        z.real, z.imag = values(rng, "f8", 11), values(rng, "f8", 11)
        f.create_dataset("c16", data=z, chunks=(4,), fillvalue=complex(1, -1))
        f.create_dataset("scalar", data=np.int64(-12345))
        words = np.array([b"alpha", b"be", b"", b"gamma", b"d\xc3\xa9lta", b"x"] * 3, dtype="S5").reshape(3, 6)
        f.create_dataset("fixed", data=words, chunks=(2, 4), fillvalue=b"none")
        texts = np.array(["", "ascii", "\u00fcn\u00efc\u00f6d\u00e9", "long " * 40, "\u20ac"] * 4, dtype=object)
        f.create_dataset("vlen", data=texts, dtype=h5py.string_dtype(), chunks=(6,))
        t = np.zeros(11, FLAT_STRUCT)
        t["id"], t["x"], t["k"] = np.arange(11) * 1000, np.arange(11) / 3, -np.arange(11)
        f.create_dataset("table", data=t, chunks=(4,), fillvalue=np.array((-1, 0.5, 2), FLAT_STRUCT)[()])


def zarr342_bytes(path, name):
    """The struct array `name` as zarr-python 3.4.2 reads it (zarr-python 3.1.6 has no Zarr v3 struct)."""
    py = os.environ.get("ZARR_PYTHON312") or ""
    if not py or not Path(py).exists() and not shutil.which(py):
        if os.environ.get("CI") == "true":
            raise AssertionError(f"no Python with zarr 3.4.2 ('{py}', ZARR_PYTHON312): required under CI=true")
        print(f"SKIPPED the v3 struct read by zarr-python 3.4.2: no Python with zarr 3.4.2 ('{py}')")
        return None
    code = ("import sys, zarr\n"
            "assert zarr.__version__ == '3.4.2', zarr.__version__\n"
            "sys.stdout.buffer.write(zarr.open_group(sys.argv[1], mode='r')[sys.argv[2]][...].tobytes())\n")
    p = subprocess.run([py, "-c", code, str(path), name], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    return p.stdout


def compressor_of(out, name, fmt):
    """The compressor h5tozarr wrote for array `name`: (its name as --codec spells it, its level)."""
    def spelled(codec_id, conf):
        level = conf.get("level", conf.get("clevel"))
        return (f"blosc-{conf['cname']}", level) if codec_id == "blosc" else (codec_id, level)

    if fmt == 2:
        c = json.loads((out / name / ".zarray").read_text())["compressor"]
        return ("none", None) if c is None else spelled(c["id"], c)
    codecs = json.loads((out / name / "zarr.json").read_text())["codecs"]
    if codecs[0]["name"] == "sharding_indexed":
        codecs = codecs[0]["configuration"]["codecs"]
    rest = [c for c in codecs[1:] if c["name"] != "numcodecs.shuffle"]
    if not rest:
        return "none", None
    assert len(rest) == 1, codecs
    return spelled(rest[0]["name"].removeprefix("numcodecs."), rest[0].get("configuration", {}))


def t_codecs(r):
    """h5tozarr --codec with every name of libzarr's registry, Zarr v3 (plain and sharded) and v2: zarr-python
    reads each array equal to h5py's; --help and the error for an unknown name list the registry's names."""
    names = registry_names()
    assert {"zstd", "gzip", "blosc-lz4", "blosc-zstd", "blosc-zlib"} <= set(names), names
    listed = ["none"] + names
    help_text = run(H5TOZARR, "--help").stdout
    seg = help_text[help_text.index("one of libzarr's:") + len("one of libzarr's:"):help_text.index("(blosc with")]
    assert [n.strip() for n in seg.split(",")] == listed, f"--help lists {seg!r}, the registry {listed}"
    src = r.path("codecs.h5")
    make_codec_source(src)
    p = run(H5TOZARR, "--codec", "snappy:1", src, r.path("bad.zarr"), expect=1)
    assert f"unknown codec 'snappy' ({', '.join(listed)})" in p.stderr, p.stderr
    assert not r.path("bad.zarr").exists()
    p = run(H5TOZARR, "--codec", "gzip:10", src, r.path("bad.zarr"), expect=1)
    assert "level 10" in p.stderr, p.stderr
    runs = 0
    for name in listed:
        for fmt, extra in ((3, []), (3, ["--shard", "8,8"]), (2, ["--format", "2"])):
            level = None if name == "none" else (1 if fmt == 3 else 2)
            out = r.path(f"c-{name}-{fmt}-{len(extra)}.zarr")
            run(H5TOZARR, "-q", "--codec", name if level is None else f"{name}:{level}", *extra, src, out)
            root = zarr.open_group(out, mode="r")
            with h5py.File(src, "r") as f:
                for key, d in f.items():
                    where = f"--codec {name} v{fmt} {' '.join(extra)}: {key}"
                    assert compressor_of(out, key, fmt) == (name, level), f"{where}: {compressor_of(out, key, fmt)}"
                    want = d[()]
                    if key == "table" and fmt == 3:
                        got = zarr342_bytes(out, key)
                        if got is not None:
                            assert got == want.astype(FLAT_STRUCT.newbyteorder("<")).tobytes(), f"{where}: values"
                        continue
                    z = root[key]
                    same_values(want, z[()], where)
                    if key != "vlen":
                        assert z.dtype == native(d.dtype) or key == "table", f"{where}: dtype {z.dtype}"
                        assert zarr_fill_ok(d, z, fmt) or key == "table", f"{where}: fill {z.fill_value!r}"
            runs += 1
    assert runs == 3 * len(listed), runs


def t_lone_array(r):
    out = r.path("lone.zarr")
    a = zarr.create_array(out, shape=(6, 5), chunks=(4, 4), dtype="i2")
    a[...] = np.arange(30, dtype="i2").reshape(6, 5)
    a.attrs["units"] = "m"
    back = r.path("lone.h5")
    run(ZARRTOH5, out, back)
    name = out.name[: -len(".zarr")]
    with h5py.File(back, "r") as f:
        same_values(np.arange(30).reshape(6, 5), f[name][()], name)
        assert f[name].attrs["units"] == "m"


def peak_rss_mib(*cmd):
    """Runs cmd in a fresh Python parent and returns the child's peak resident memory in MiB."""
    probe = ("import resource, subprocess, sys\n"
             "p = subprocess.run(sys.argv[1:])\n"
             "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", probe, *map(str, cmd)], capture_output=True, text=True,
                         timeout=600)
    rc, kib = out.stdout.split()
    assert rc == "0", f"{cmd[0]} exit {rc}: {out.stderr}"
    return int(kib) / 1024


def t_bounded_memory(r):
    """A 256 MiB dataset in 1 MiB chunks converts both ways with far less memory than its size."""
    src = r.path("large.h5")
    rng = np.random.default_rng(3)
    band = values(rng, "f4", (512, 8192))
    with h5py.File(src, "w") as f:
        d = f.create_dataset("large", shape=(8192, 8192), dtype="f4", chunks=(512, 512), fillvalue=2.0)
        d[1024:1536, :] = band
    out = r.path("large.zarr")
    rss = peak_rss_mib(H5TOZARR, "-q", src, out)
    if r.verbose:
        print(f"h5tozarr peak RSS {rss:.0f} MiB")
    assert rss < 64, f"h5tozarr peaked at {rss:.0f} MiB for a 256 MiB dataset"
    z = zarr.open_array(out / "large", mode="r")
    same_values(z[1024:1536, :], band, "band")
    assert float(z[5000, 77]) == 2.0 and z.chunks == (512, 512)
    back = r.path("large.h5")
    rss = peak_rss_mib(ZARRTOH5, "-q", out, back)
    if r.verbose:
        print(f"zarrtoh5 peak RSS {rss:.0f} MiB")
    assert rss < 64, f"zarrtoh5 peaked at {rss:.0f} MiB for a 256 MiB dataset"
    with h5py.File(back, "r") as f:
        same_values(f["large"][1024:1536, :], band, "band back")
        assert f["large"][8000, 8000] == 2.0


def t_progress(r):
    """On a terminal, a progress line per dataset; none when stderr is a file or with -q."""
    import pty
    src = r.path("progress.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("a/b", data=np.arange(1000.0), chunks=(100,))
    for quiet, want in (([], True), (["-q"], False)):
        master, slave = pty.openpty()
        p = subprocess.run([H5TOZARR, *quiet, src, r.path("progress.zarr")], stderr=slave, timeout=60)
        os.close(slave)
        text = b""
        try:
            while True:
                chunk = os.read(master, 4096)
                if not chunk:
                    break
                text += chunk
        except OSError:
            pass
        os.close(master)
        assert p.returncode == 0
        assert ("/a/b: 10/10 chunks (100%)" in text.decode()) == want, f"progress {quiet}: {text!r}"
    p = run(H5TOZARR, src, r.path("progress.zarr"))
    assert p.stderr == "", p.stderr


def t_refusals(r):
    """A dataset without a Zarr form is an error naming its type (exit 2, nothing written);
    --skip-unsupported leaves it out with a message and converts the rest."""
    src = r.path("strings.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("c", data=np.zeros(3, dtype="V4"))
        f.create_dataset("ok", data=np.arange(4))
        f["soft"] = h5py.SoftLink("/ok")
    out = r.path("strings.zarr")
    p = run(H5TOZARR, src, out, expect=2)
    assert "/c: dataset of type opaque (4 bytes) is not supported" in p.stderr, p.stderr
    assert not out.exists() and not list(out.parent.glob(".h5tozarr-*")), "a refused conversion left files"
    p = run(H5TOZARR, "--skip-unsupported", src, out)
    for word in ("/c: skipped: dataset of type opaque", "/soft: skipped: a soft link has no Zarr form"):
        assert word in p.stderr, f"no '{word}' in: {p.stderr}"
    same_values(zarr.open_group(out, mode="r")["ok"][()], np.arange(4), "ok")
    assert sorted(zarr.open_group(out, mode="r").keys()) == ["ok"]
    p = run(H5TOZARR, r.path("missing.h5"), r.path("x.zarr"), expect=1)
    assert "No such file or directory" in p.stderr, p.stderr
    truncated = r.path("truncated.h5")
    make_source(truncated)
    with open(truncated, "r+b") as fh:
        fh.truncate(truncated.stat().st_size // 2)
    p = run(H5TOZARR, truncated, r.path("t.zarr"), expect=1)
    assert "h5tozarr:" in p.stderr, p.stderr
    run(H5TOZARR, "--format", "4", src, r.path("y.zarr"), expect=1)
    run(H5TOZARR, "--codec", "lzma", src, r.path("y.zarr"), expect=1)
    run(H5TOZARR, "--format", "2", "--shard", "4", src, r.path("y.zarr"), expect=1)
    p = run(H5TOZARR, src, out, expect=1)  # the output exists
    assert "h5tozarr:" in p.stderr
    existing = r.path("exists.h5")
    existing.write_bytes(b"keep")
    p = run(ZARRTOH5, out, existing, expect=1)
    assert existing.read_bytes() == b"keep" and "exist" in p.stderr
    run(ZARRTOH5, r.path("nothing.zarr"), r.path("z.h5"), expect=1)
    for tool in (H5TOZARR, ZARRTOH5):
        p = run(tool, "--help")
        assert p.stdout.startswith("usage:") and "exit status" in p.stdout
        run(tool, expect=1)


def main():
    args = harness.parse_args(__doc__)
    if not H5TOZARR or not ZARRTOH5:
        print("SKIPPED: set H5TOZARR and ZARRTOH5 to the tools (CMake does)")
        sys.exit(77)
    tmp = Path(os.environ.get("ZARR_TEST_TMPDIR") or tempfile.mkdtemp())
    tmp = Path(tempfile.mkdtemp(dir=tmp))
    r = harness.Runner(tmp, args.verbose, args.k)
    r.run("h5tozarr v3 and back", t_roundtrip, r, 3, [])
    r.run("h5tozarr v2 and back", t_roundtrip, r, 2, ["--format", "2"])
    r.run("h5tozarr v3 sharded and back", t_roundtrip, r, 3, ["--shard", "100,100"], (100, 100))
    r.run("h5tozarr --codec zstd:3", t_roundtrip, r, 3, ["--codec", "zstd:3"], None, "zstd:3")
    r.run("h5tozarr --format 2 --codec blosc-lz4", t_roundtrip, r, 2, ["--format", "2", "--codec", "blosc-lz4"],
          None, "blosc-lz4")
    r.run("h5tozarr --codec none", t_roundtrip, r, 3, ["--codec", "none", "-q"], None, "none")
    r.run("h5tozarr --codec: every name of libzarr's codec registry", t_codecs, r)
    r.run("zarrtoh5 of zarr-python hierarchies", t_from_zarr_python, r)
    r.run("zarrtoh5 of a lone array", t_lone_array, r)
    r.run("bounded memory (256 MiB dataset)", t_bounded_memory, r)
    r.run("progress line on a terminal", t_progress, r)
    r.run("refusals and options", t_refusals, r)
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"{r.passed} passed, {len(r.failed)} failed")
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
