#!/usr/bin/env python3
"""The `rectilinear` chunk grid, both directions with zarr-python 3.4.2 (the first release that writes
it; Python 3.12: the script re-runs itself with $ZARR_PYTHON312).

  * zarr-python writes rectilinear arrays (explicit edges, run-length encoded edges, a bare-integer
    dimension, edges overrunning the array, sharding inside rectilinear shards) -> libzarr reads the
    whole array and random strided hyperslabs equal to numpy;
  * libzarr creates and writes rectilinear arrays (whole, partial and strided writes) -> zarr-python
    reads them equal, and the stored chunk keys are those zarr-python stores for the same data;
  * zarr_array_resize grows and shrinks them like zarr-python (appended edge, same metadata grid,
    same chunk files, same values); the chunk-level calls report each chunk's own origin and shape.
Exit status: 0 pass, 1 fail. Library: $ZARR_LIB.
"""
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

harness.reexec_with_zarr("3.4.2")

import numpy as np  # noqa: E402
import zarr  # noqa: E402
import zarr_ctypes as zc  # noqa: E402

zarr.config.set({"array.rectilinear_chunks": True})
rng = np.random.default_rng(7)

# (name, shape, chunks (zarr-python's form), shards or None, dtype, shapes to resize to)
CASES = [
    ("explicit_2d", (30, 17), [[10, 5, 15], [4, 4, 4, 5]], None, "int16", [(37, 24), (15, 8), (60, 34)]),
    ("rle_and_int", (40, 9, 6), [[3] * 10 + [10], [2, 7], [4, 2]], None, "float32", [(47, 16, 13), (20, 4, 3)]),
    ("sharded", (48, 20), [[16, 16, 8, 8], [10, 10]], [4, 5], "int32", [(56, 30), (24, 10), (96, 40)]),
]
# Edges overrunning the array: zarr-python reads them but will not create them; libzarr creates them.
OVERRUN = {"zarr_format": 3, "node_type": "array", "shape": [11, 8], "data_type": "uint8",
           "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline",
                                                                   "chunk_shapes": [[[5, 3]], [3, 3, 3, 3]]}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 0,
           "codecs": [{"name": "bytes"}, {"name": "zstd", "configuration": {"level": 1, "checksum": False}}]}


def create_zp(path, shape, chunks, shards, dtype, data):
    if shards is None:
        z = zarr.create_array(str(path), shape=shape, chunks=chunks, dtype=dtype, fill_value=0,
                              compressors=[zarr.codecs.ZstdCodec(level=1)])
    else:
        z = zarr.create_array(str(path), shape=shape, shards=chunks, chunks=shards, dtype=dtype, fill_value=0)
    z[...] = data
    return z


def random_data(shape, dtype):
    return rng.integers(1, 100, size=shape).astype(dtype)


def chunk_files(p):
    return sorted(str(f.relative_to(p)) for f in Path(p).rglob("*") if f.is_file() and f.name not in ("zarr.json", ".zarr.lock"))


def check_read(r, name, shape, chunks, shards, dtype, _resizes):
    path = r.path(f"zp_{name}")
    data = random_data(shape, dtype)
    create_zp(path, shape, chunks, shards, dtype, data)
    with zc.Array.open(path) as a:
        got = np.frombuffer(a.read(), dtype=dtype).reshape(shape)
        assert np.array_equal(got, data), f"{name}: whole read differs"
        for _ in range(25):
            start = [int(rng.integers(0, n)) for n in shape]
            step = [int(rng.integers(1, 4)) for _ in shape]
            count = [int(rng.integers(1, (n - s - 1) // st + 2)) for n, s, st in zip(shape, start, step)]
            out = np.zeros(count, dtype=np.float64, order="F")
            a.read_hyperslab(start, count, step, [s // 8 for s in out.strides], "float64", out=out)
            sl = tuple(slice(s, s + (c - 1) * st + 1, st) for s, c, st in zip(start, count, step))
            assert np.array_equal(out, data[sl].astype(np.float64)), f"{name}: hyperslab {start} {count} {step}"
        # Each chunk's own origin and shape.
        meta = json.loads((Path(path) / "zarr.json").read_text())
        grid = a.grid_shape
        last = [g - 1 for g in grid]
        origin, cshape = a.chunk_region(last)
        assert all(o < n <= o + c for o, c, n in zip(origin, cshape, shape)), f"{name}: last chunk {origin} {cshape}"
        assert meta["chunk_grid"]["name"] == "rectilinear"


def check_write(r, name, shape, chunks, shards, dtype, _resizes):
    ours, theirs = r.path(f"lz_{name}"), r.path(f"zpw_{name}")
    data = random_data(shape, dtype)
    z = create_zp(theirs, shape, chunks, shards, dtype, np.zeros(shape, dtype))
    doc = json.loads((Path(theirs) / "zarr.json").read_text())
    with zc.Array.create(ours, json.dumps(doc)) as a:
        a.write(data.tobytes())
        # a strided, converted partial write
        start, count, step = [1] * len(shape), [max(1, (n - 2) // 3) for n in shape], [3] * len(shape)
        patch = np.asfortranarray(rng.integers(100, 120, size=count).astype(np.float64))
        a.write_hyperslab(patch, start, count, step, [s // 8 for s in patch.strides], "float64")
    sl = tuple(slice(s, s + (c - 1) * st + 1, st) for s, c, st in zip(start, count, step))
    data[sl] = patch.astype(dtype)
    got = zarr.open_array(str(ours), mode="r")[...]
    assert np.array_equal(got, data), f"{name}: zarr-python reads other values than libzarr wrote"
    z[...] = data
    assert chunk_files(ours) == chunk_files(theirs), f"{name}: chunk keys differ from zarr-python's"


def check_resize(r, name, shape, chunks, shards, dtype, resizes):
    base = r.path(f"rs_{name}")
    data = random_data(shape, dtype)
    create_zp(base, shape, chunks, shards, dtype, data)
    if shards:
        # A grown edge the inner chunks do not divide: refused, nothing changed.
        before = {p: p.read_bytes() for p in Path(base).rglob("*") if p.is_file() and p.name != ".zarr.lock"}
        with zc.Array.open(base, zc.READ_WRITE) as a:
            try:
                a.resize([n + 1 for n in shape])
                raise AssertionError("a shard edge the inner chunks do not divide was accepted")
            except zc.ZarrError as e:
                assert e.name == "ZARR_ERR_INVALID_ARGUMENT", e
        assert before == {p: p.read_bytes() for p in Path(base).rglob("*") if p.is_file() and p.name != ".zarr.lock"}, "refused resize changed files"
    for new in resizes:
        ours, theirs = Path(f"{base}_ours_{new}"), Path(f"{base}_zp_{new}")
        shutil.copytree(base, ours)
        shutil.copytree(base, theirs)
        with zc.Array.open(ours, zc.READ_WRITE) as a:
            a.resize(list(new))
        zarr.open_array(str(theirs), mode="r+").resize(new)
        mo = json.loads((ours / "zarr.json").read_text())
        mt = json.loads((theirs / "zarr.json").read_text())
        assert mo["shape"] == mt["shape"], f"{name} {new}: shape"
        assert mo["chunk_grid"] == mt["chunk_grid"], f"{name} {new}: grid {mo['chunk_grid']} != {mt['chunk_grid']}"
        assert chunk_files(ours) == chunk_files(theirs), f"{name} {new}: chunk files differ"
        a_ = zarr.open_array(str(ours), mode="r")[...]
        b_ = zarr.open_array(str(theirs), mode="r")[...]
        assert np.array_equal(a_, b_), f"{name} {new}: values differ"
        with zc.Array.open(ours) as a:
            assert np.array_equal(np.frombuffer(a.read(), dtype=dtype).reshape(new), b_), f"{name} {new}: libzarr read"


def check_overrun(r):
    path = r.path("overrun")
    data = random_data((11, 8), "uint8")
    with zc.Array.create(path, json.dumps(OVERRUN)) as a:
        a.write(data.tobytes())
        assert a.grid_shape == [3, 3]
        assert a.chunk_region([2, 2]) == ([10, 6], [5, 3])
    assert np.array_equal(zarr.open_array(str(path), mode="r")[...], data), "zarr-python reads the overrun grid"
    assert chunk_files(path) == [f"c/{i}/{j}" for i in range(3) for j in range(3)]


def check_errors(r):
    bad = {"zarr_format": 3, "node_type": "array", "shape": [10], "data_type": "int8",
           "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline", "chunk_shapes": [[3, 3]]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]}
    for grid, status in [([[3, 3]], "ZARR_ERR_METADATA"), ([[3, [0, 2]]], "ZARR_ERR_METADATA"),
                         ([[[3, 2, 1]]], "ZARR_ERR_METADATA")]:
        bad["chunk_grid"]["configuration"]["chunk_shapes"] = grid
        try:
            zc.Array.create(r.path("bad"), json.dumps(bad)).close()
            raise AssertionError(f"{grid} accepted")
        except zc.ZarrError as e:
            assert e.name == status, f"{grid}: {e}"
    # Sharding whose inner chunks do not divide a shard's edge.
    bad["shape"] = [10]
    bad["chunk_grid"]["configuration"]["chunk_shapes"] = [[4, 6]]
    bad["codecs"] = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4], "codecs": [{"name": "bytes"}], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]
    try:
        zc.Array.create(r.path("bad_shard"), json.dumps(bad)).close()
        raise AssertionError("inner chunks not dividing a shard accepted")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_METADATA", e


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    tmp = Path(tempfile.mkdtemp(prefix="zarr-rectilinear-", dir=os.environ.get("ZARR_TEST_TMPDIR")))
    r = harness.Runner(tmp, args.verbose, args.k)
    try:
        for case in CASES:
            r.run(f"read {case[0]}", check_read, r, *case)
            r.run(f"write {case[0]}", check_write, r, *case)
            r.run(f"resize {case[0]}", check_resize, r, *case)
        r.run("overrun", check_overrun, r)
        r.run("errors", check_errors, r)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{r.passed} passed, {len(r.failed)} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
