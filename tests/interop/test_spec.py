#!/usr/bin/env python3
"""Interop: arrays created from a creation spec (zarr_array_spec_*, no JSON written by the caller).

    python3 tests/interop/test_spec.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (zarr-python or numpy not importable).
The library is $ZARR_LIB, else target/release/libzarr.so of this repository.

For each case (v3 and v2; data types, default and explicit chunks, shards, every compressor name,
shuffles, fill values, dimension names, attributes):
  * the stored metadata (zarr.json, or .zarray + .zattrs) parsed as JSON equals the document written
    by hand in this file, and equals what zarr_create stores for that hand-written document;
  * zarr_array_spec_to_json gives the stored document;
  * data written through libzarr reads back in zarr-python (numpy comparison), zarr-python sees the
    shape, chunks, shards, data type, fill value, dimension names and attributes the spec set, and
    data written by zarr-python reads back through libzarr.
Plus the refusals (sharding in v2, bit shuffle without blosc, chunks not dividing shards, ...), each
with its status code, and creation inside a v2 group taking the group's format.
"""
import json
import shutil
import struct
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))

try:
    import numpy as np
    import zarr
except ImportError as e:
    print(f"SKIP: zarr-python / numpy not importable ({e})")
    sys.exit(77)

import harness  # noqa: E402
from harness import Runner  # noqa: E402
import zarr_ctypes as zc  # noqa: E402

warnings.filterwarnings("ignore")

LE = {"endian": "little"}
KEY = {"name": "default", "configuration": {"separator": "/"}}


def v3doc(shape, dtype, chunks, fill, codecs, attributes=None, dimension_names=None):
    d = {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
         "chunk_key_encoding": KEY, "fill_value": fill, "codecs": codecs, "attributes": attributes or {}}
    if dimension_names is not None:
        d["dimension_names"] = dimension_names
    return d


def zstd(level=3):
    return {"name": "zstd", "configuration": {"level": level, "checksum": False}}


def blosc(cname, clevel, shuffle, typesize):
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": clevel, "shuffle": shuffle,
                                               "typesize": typesize, "blocksize": 0}}


def sharded(inner, codecs):
    return [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner, "codecs": codecs,
        "index_codecs": [{"name": "bytes", "configuration": LE}, {"name": "crc32c"}], "index_location": "end"}}]


def v2doc(shape, dtype, chunks, fill, compressor, filters=None):
    return {"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": dtype, "compressor": compressor,
            "fill_value": fill, "order": "C", "filters": filters, "dimension_separator": "."}


# (name, Spec kwargs, numpy dtype, hand-written metadata, hand-written .zattrs for v2 or None)
CASES = [
    ("f8_defaults", dict(dtype="float64", shape=[100, 200], chunks=[10, 20]), "<f8",
     v3doc([100, 200], "float64", [10, 20], 0.0, [{"name": "bytes", "configuration": LE}, zstd()]), None),
    # default chunks: 2 MB of int16 -> the first dimension halved once: [500, 1000] (1 000 000 bytes)
    ("i2_default_chunks_gzip_names_attrs",
     dict(dtype="int16", shape=[1000, 1000], compressor="gzip", level=5, fill_value=struct.pack("<h", -1),
          dimension_names=["y", "x"], attributes='{"units": "K", "scale": [1, 2.5]}'), "<i2",
     v3doc([1000, 1000], "int16", [500, 1000], -1,
           [{"name": "bytes", "configuration": LE}, {"name": "gzip", "configuration": {"level": 5}}],
           {"units": "K", "scale": [1, 2.5]}, ["y", "x"]), None),
    # 4096 x 4096 float32 (64 MiB): halving dimension 0, 1, 0, ... ends at [512, 512] (1 MiB)
    ("f4_default_chunks_big", dict(dtype="float32", shape=[4096, 4096], compressor="none"), "<f4",
     v3doc([4096, 4096], "float32", [512, 512], 0.0, [{"name": "bytes", "configuration": LE}]), None),
    ("u1_sharded_blosc_lz4",
     dict(dtype="uint8", shape=[64, 64, 40], chunks=[8, 8, 10], shards=[32, 32, 20], compressor="blosc-lz4",
          fill_value=b"\x07", dimension_names=["z", None, "x"]), "|u1",
     v3doc([64, 64, 40], "uint8", [32, 32, 20], 7,
           sharded([8, 8, 10], [{"name": "bytes"}, blosc("lz4", 5, "shuffle", 1)]),
           dimension_names=["z", None, "x"]), None),
    # shards without chunks: inner chunks divide the shard, at most 1 MiB: [500, 1000] float64 = 4 MB
    # -> 1000 / 2 = 500 -> [500, 500] (2 MB) -> [250, 500] (1 MB)
    ("f8_sharded_default_inner", dict(dtype="float64", shape=[1000, 1000], shards=[500, 1000]), "<f8",
     v3doc([1000, 1000], "float64", [500, 1000], 0.0,
           sharded([250, 500], [{"name": "bytes", "configuration": LE}, zstd()])), None),
    ("b1_none_fill_true", dict(dtype="bool", shape=[10], compressor="none", fill_value=b"\x01"), "|b1",
     v3doc([10], "bool", [10], True, [{"name": "bytes"}]), None),
    ("c8_blosc_zstd_bitshuffle",
     dict(dtype="complex64", shape=[6, 7], chunks=[4, 4], compressor="blosc-zstd", level=7, shuffle="bit",
          fill_value=struct.pack("<ff", 1.5, -2.0)), "<c8",
     v3doc([6, 7], "complex64", [4, 4], [1.5, -2.0],
           [{"name": "bytes", "configuration": LE}, blosc("zstd", 7, "bitshuffle", 8)]), None),
    ("u2_zstd_byte_shuffle",
     dict(dtype="uint16", shape=[50, 3], chunks=[16, 3], compressor="zstd", level=-2, shuffle="byte"), "<u2",
     v3doc([50, 3], "uint16", [16, 3], 0,
           [{"name": "bytes", "configuration": LE}, {"name": "numcodecs.shuffle", "configuration": {"elementsize": 2}},
            zstd(-2)]), None),
    ("f8_nan_fill_blosc_noshuffle",
     dict(dtype="float64", shape=[9], chunks=[4], compressor="blosc-lz4hc", level=9, shuffle="none",
          fill_value=struct.pack("<d", float("nan"))), "<f8",
     v3doc([9], "float64", [4], "NaN", [{"name": "bytes", "configuration": LE}, blosc("lz4hc", 9, "noshuffle", 8)]),
     None),
    ("i8_scalar", dict(dtype="int64", shape=[], fill_value=struct.pack("<q", 42)), "<i8",
     v3doc([], "int64", [], 42, [{"name": "bytes", "configuration": LE}, zstd()]), None),
    ("string_v3", dict(dtype="string", shape=[5], chunks=[2], fill_value=b"n/a"), "str",
     v3doc([5], "string", [2], "n/a", [{"name": "vlen-utf8", "configuration": {}}, zstd()]), None),
    # Zarr v2
    ("v2_f4_gzip_names",
     dict(dtype="float32", shape=[30, 40], chunks=[7, 9], compressor="gzip", level=4, zarr_format=2,
          dimension_names=["lat", "lon"], attributes='{"units": "m"}', fill_value=struct.pack("<f", -9999.0)),
     "<f4", v2doc([30, 40], "<f4", [7, 9], -9999.0, {"id": "gzip", "level": 4}),
     {"units": "m", "_ARRAY_DIMENSIONS": ["lat", "lon"]}),
    ("v2_i8_blosc_zstd_default_chunks",
     dict(dtype="int64", shape=[300000], compressor="blosc-zstd", zarr_format=2), "<i8",
     # 2.4 MB -> 150000 -> 75000 elements (600 000 bytes)
     v2doc([300000], "<i8", [75000], 0, {"id": "blosc", "cname": "zstd", "clevel": 5, "shuffle": 1, "blocksize": 0}),
     None),
    ("v2_u2_zstd_shuffle",
     dict(dtype="uint16", shape=[20, 20], chunks=[8, 8], shuffle="byte", zarr_format=2), "<u2",
     v2doc([20, 20], "<u2", [8, 8], 0, {"id": "zstd", "level": 3}, [{"id": "shuffle", "elementsize": 2}]), None),
    ("v2_string", dict(dtype="string", shape=[7], chunks=[3], zarr_format=2), "str",
     v2doc([7], "|O", [3], "", {"id": "zstd", "level": 3}, [{"id": "vlen-utf8"}]), None),
    ("v2_b1_none", dict(dtype="bool", shape=[12], chunks=[5], compressor="none", zarr_format=2), "|b1",
     v2doc([12], "|b1", [5], False, None), None),
]


def stored(path, fmt):
    if fmt == 3:
        return json.loads((path / "zarr.json").read_text()), None
    attrs = json.loads((path / ".zattrs").read_text()) if (path / ".zattrs").exists() else None
    return json.loads((path / ".zarray").read_text()), attrs


def sample(np_dtype, shape, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    if np_dtype == "str":
        return np.array([f"s{int(x)}é" * (int(x) % 4) for x in rng.integers(0, 100, n)], dtype=object).reshape(shape)
    dt = np.dtype(np_dtype)
    if dt.kind == "b":
        a = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(max(info.min, -1000), min(info.max, 1000), n).astype(dt)
    elif dt.kind == "c":
        a = (rng.normal(size=n) + 1j * rng.normal(size=n)).astype(dt)
    else:
        a = rng.normal(size=n).astype(dt)
    return a.reshape(shape)


def check_case(r, name, kwargs, np_dtype, hand, hand_attrs):
    fmt = kwargs.get("zarr_format", 3)
    base = r.path(name)
    a_path, b_path = base / "spec", base / "hand"
    with zc.Spec(**kwargs) as spec:
        spec_json = json.loads(spec.to_json())
        arr = spec.create(a_path)
    meta, attrs = stored(a_path, fmt)
    assert meta == hand, f"stored metadata\n{json.dumps(meta)}\n!= hand-written\n{json.dumps(hand)}"
    assert attrs == hand_attrs, f".zattrs {attrs} != {hand_attrs}"
    assert spec_json == meta, f"to_json {spec_json} != stored {meta}"
    with zc.Array.create(b_path, json.dumps(hand)) as b:
        pass
    assert stored(b_path, fmt)[0] == meta, "zarr_create of the hand-written document stores something else"

    # libzarr writes, zarr-python reads
    shape = kwargs["shape"]
    # big arrays: write a corner only
    region = [min(s, 70) for s in shape]
    data = sample(np_dtype, region, 1)
    with arr:
        if np_dtype == "str":
            arr.write_vlen([str(x) for x in data.ravel()], [0] * len(shape), region)
        else:
            arr.write(np.ascontiguousarray(data).tobytes(), [0] * len(shape), region)
    z = zarr.open_array(str(a_path), mode="r+", zarr_format=fmt)
    assert list(z.shape) == shape, (z.shape, shape)
    sel = tuple(slice(0, n) for n in region)
    got = z[sel] if shape else z[()]
    if np_dtype == "str":
        assert [str(x) for x in np.asarray(got).ravel()] == [str(x) for x in data.ravel()], "string values"
    else:
        assert np.array_equal(np.asarray(got), data, equal_nan=True), f"values differ:\n{got}\n{data}"
    # what zarr-python sees
    if fmt == 3:
        grid = hand["chunk_grid"]["configuration"]["chunk_shape"]
        top = hand["codecs"][0]
        if top["name"] == "sharding_indexed":
            assert list(z.shards) == grid and list(z.chunks) == top["configuration"]["chunk_shape"], (z.shards, z.chunks)
        else:
            assert list(z.chunks) == grid, (z.chunks, grid)
        assert z.metadata.dimension_names == (tuple(hand["dimension_names"]) if "dimension_names" in hand else None)
        assert dict(z.attrs) == hand["attributes"], dict(z.attrs)
    else:
        assert list(z.chunks) == hand["chunks"]
        assert dict(z.attrs) == (hand_attrs or {}), dict(z.attrs)
    if np_dtype != "str":
        assert z.dtype == np.dtype(np_dtype), (z.dtype, np_dtype)
        fv = np.asarray(z.fill_value, dtype=np_dtype)
        want = np.frombuffer(kwargs.get("fill_value", bytes(np.dtype(np_dtype).itemsize)), dtype=np_dtype)[0]
        assert np.array_equal(fv, want, equal_nan=True), (z.fill_value, want)
        if shape:  # an element never written reads as the fill value
            far = tuple(s - 1 for s in shape)
            if any(f >= n for f, n in zip(far, region)):
                assert np.array_equal(np.asarray(z[far]), want, equal_nan=True), (z[far], want)
    # zarr-python writes, libzarr reads
    data2 = sample(np_dtype, region, 2)
    if shape:
        z[sel] = data2
    else:
        z[()] = data2
    with zc.Array.open(a_path) as back:
        if np_dtype == "str":
            vals = back.read_vlen([0] * len(shape), region)
            assert vals == [str(x) for x in data2.ravel()], "strings written by zarr-python"
        else:
            raw = back.read([0] * len(shape), region)
            got = np.frombuffer(raw, dtype=np_dtype).reshape(region)
            assert np.array_equal(got, data2, equal_nan=True), "values written by zarr-python"


def expect_status(status, fn):
    try:
        fn()
    except zc.ZarrError as e:
        assert e.name == status, f"expected {status}, got {e}"
        return
    raise AssertionError(f"expected {status}, got success")


def refusals(r):
    p = r.path("refusals")
    expect_status("ZARR_ERR_UNSUPPORTED", lambda: zc.Spec("float32", [4], shards=[4], zarr_format=2).create(p / "a"))
    expect_status("ZARR_ERR_INVALID_ARGUMENT", lambda: zc.Spec("float32", [4], shuffle="bit").create(p / "b"))
    expect_status("ZARR_ERR_INVALID_ARGUMENT", lambda: zc.Spec("float32", [8], chunks=[3], shards=[8]).create(p / "c"))
    expect_status("ZARR_ERR_INVALID_ARGUMENT", lambda: zc.Spec("float32", [8], chunks=[0]))
    expect_status("ZARR_ERR_INVALID_ARGUMENT", lambda: zc.Spec("float32", [8], chunks=[2, 2]))
    expect_status("ZARR_ERR_INVALID_ARGUMENT", lambda: zc.Spec("float32", [8], compressor="lzma"))
    expect_status("ZARR_ERR_INVALID_ARGUMENT", lambda: zc.Spec("float32", [8], compressor="gzip", level=10))
    expect_status("ZARR_ERR_INVALID_ARGUMENT", lambda: zc.Spec("float32", [8], zarr_format=4))
    expect_status("ZARR_ERR_INVALID_ARGUMENT", lambda: zc.Spec("float32", [8], attributes="[1]"))
    expect_status("ZARR_ERR_BUFFER_SIZE", lambda: zc.Spec("float32", [8], fill_value=b"\0" * 8))
    expect_status("ZARR_ERR_VALUE", lambda: zc.Spec("bool", [8], fill_value=b"\x02"))
    expect_status("ZARR_ERR_VALUE", lambda: zc.Spec("int4", [8], fill_value=b"\x7f"))
    expect_status("ZARR_ERR_UNSUPPORTED", lambda: zc.Spec("raw", [8]))
    expect_status("ZARR_ERR_UNSUPPORTED", lambda: zc.Spec("numpy.datetime64", [8]))
    expect_status("ZARR_ERR_UNSUPPORTED", lambda: zc.Spec("bfloat16", [8], zarr_format=2).create(p / "d"))
    expect_status("ZARR_ERR_INVALID_ARGUMENT",
                  lambda: zc.Spec("float32", [2], dimension_names=["a", None], zarr_format=2).create(p / "e"))
    with zc.Spec("float32", [4]) as s:
        s.create(p / "f").close()
        expect_status("ZARR_ERR_EXISTS", lambda: s.create(p / "f"))
    for sub in "abcde":
        assert not (p / sub).exists(), f"a refused creation left {p / sub} behind"


def in_v2_group(r):
    p = r.path("v2group")
    with zc.Group.create(p, '{"title": "t"}', zarr_format=2) as g:
        with zc.Spec("int32", [6, 4], chunks=[3, 2], attributes='{"a": 1}') as s:
            s.create_in(g, "sub/x").close()
        with zc.Spec("int32", [6], zarr_format=3) as s:
            s.create_in(g, "y3").close()
    root = zarr.open_group(str(p), mode="r", zarr_format=2)
    x = root["sub/x"]
    assert x.metadata.zarr_format == 2 and list(x.chunks) == [3, 2] and dict(x.attrs) == {"a": 1}
    assert json.loads((p / "y3" / "zarr.json").read_text())["zarr_format"] == 3


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    tmp = Path(tempfile.mkdtemp(prefix="zarr_spec_"))
    r = Runner(tmp, args.verbose, args.k)
    try:
        for name, kwargs, np_dtype, hand, hand_attrs in CASES:
            r.run(name, check_case, r, name, kwargs, np_dtype, hand, hand_attrs)
        r.run("refusals", refusals, r)
        r.run("in_v2_group", in_v2_group, r)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{r.passed} passed, {len(r.failed)} failed")
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
