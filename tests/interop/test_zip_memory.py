#!/usr/bin/env python3
"""Interop, `zip://` and `memory://` locations through libzarr's C ABI.

    python3 tests/interop/test_zip_memory.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (zarr-python or numpy not importable).
The library is $ZARR_LIB, else target/release/libzarr.so of this repository.

Covered:
  * zarr-python 3.1.6's ZipStore (members stored, its default; and deflated) holding v3 unsharded,
    sharded (ranged reads of shard indexes and inner chunks straight from the file) and v2 arrays in
    nested groups: libzarr opens `zip://FILE.zip` (group walk) and `zip://FILE.zip!/node` (an array
    inside) and reads whole arrays and sub-regions, compared byte-exactly with numpy.
  * writes to a zip store (region writes, new arrays, attributes) fail with ZARR_ERR_READ_ONLY and
    leave the file unchanged.
  * `memory://NAME/...`: zarr_create then zarr_open of the same location see the same data (v3 and
    v2), a group at `memory://NAME` lists them, other names are separate, and zarr_memory_store_remove
    empties the name (later opens: ZARR_ERR_NOT_FOUND; removing twice: ZARR_ERR_NOT_FOUND).
"""
import hashlib
import json
import os
import shutil
import sys
import tempfile
import warnings
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))

try:
    import numpy as np
    import zarr
    from zarr.storage import ZipStore
except ImportError as e:
    print(f"SKIP: zarr-python / numpy not importable ({e})")
    sys.exit(77)

import harness  # noqa: E402  (tests/interop/harness.py)
import zarr_ctypes as zc  # noqa: E402

warnings.filterwarnings("ignore")


def write_zip(path, compression):
    """zarr-python writes a hierarchy into a ZipStore; returns {node path: ndarray}."""
    rng = np.random.default_rng(7)
    store = ZipStore(str(path), mode="w", compression=compression)
    g = zarr.open_group(store, mode="w", zarr_format=3, attributes={"zip": True})
    want = {}
    a = rng.integers(-30000, 30000, size=(37, 23)).astype("i2")
    g.create_array("plain", shape=a.shape, chunks=(10, 8), dtype=a.dtype)[:] = a
    want["plain"] = a
    b = rng.standard_normal((64, 48)).astype("f4")
    g.create_array("sub/sharded", shape=b.shape, chunks=(8, 8), shards=(32, 24), dtype=b.dtype)[:] = b
    want["sub/sharded"] = b
    store.close()
    store = ZipStore(str(path), mode="a", compression=compression)
    c = rng.integers(0, 2**40, size=(50,)).astype("u8")
    zarr.create_array(store, name="v2/old", shape=c.shape, chunks=(16,), dtype=c.dtype, zarr_format=2)[:] = c
    want["v2/old"] = c
    store.close()
    return want


def check_zip(r, compression):
    path = r.path("store").with_suffix(".zip")
    want = write_zip(path, compression)
    with zipfile.ZipFile(path) as z:
        methods = {i.compress_type for i in z.infolist() if not i.is_dir()}
        assert methods == {compression}, f"zip members {methods}, wanted {compression}"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with zc.Group.open(f"zip://{path}") as root:
        assert json.loads(root.attributes) == {"zip": True}
        assert root.children() == {"plain": "array", "sub": "group", "v2": "group"}, root.children()
        for name, data in want.items():
            with root.open_array(name) as a:
                assert a.shape == list(data.shape), name
                assert a.read() == data.tobytes(), f"{name}: data differs"
    # A node inside the file, and a region crossing shard and inner-chunk edges.
    b = want["sub/sharded"]
    with zc.Array.open(f"zip://{path}!/sub/sharded") as a:
        got = np.frombuffer(a.read([5, 20], [40, 17]), dtype=b.dtype).reshape(40, 17)
        assert got.tobytes() == b[5:45, 20:37].tobytes()
    with zc.Array.open(f"zip://{path}!/v2/old") as a:
        assert a.zarr_format == 2 and a.read([3], [30]) == want["v2/old"][3:33].tobytes()
    # Writes: READ_ONLY, nothing changed.
    with zc.Array.open(f"zip://{path}!/plain", zc.READ_WRITE) as a:
        for attempt in (lambda: a.write(np.zeros((2, 2), "i2").tobytes(), [0, 0], [2, 2]),
                        lambda: a.set_attributes('{"x": 1}')):
            try:
                attempt()
                raise AssertionError("write to a zip store accepted")
            except zc.ZarrError as e:
                assert e.name == "ZARR_ERR_READ_ONLY", e
    doc = json.dumps({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8",
                      "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
                      "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes"}]})
    try:
        zc.Array.create(f"zip://{path}!/new", doc).close()
        raise AssertionError("array created in a zip store")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_READ_ONLY", e
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest, "the zip file changed"
    # What zarr-python itself reads agrees (the file is a valid ZipStore).
    g = zarr.open_group(ZipStore(str(path), mode="r"), mode="r")
    np.testing.assert_array_equal(g["sub/sharded"][...], b)


def check_zip_errors(r):
    try:
        zc.Group.open(f"zip://{r.tmp}/missing.zip").close()
        raise AssertionError("missing zip opened")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_NOT_FOUND", e
    bad = r.path("bad.zip")
    bad.write_bytes(b"PK\x03\x04 not really a zip file")
    try:
        zc.Group.open(f"zip://{bad}").close()
        raise AssertionError("garbage zip opened")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_IO", e


def check_memory(r, fmt):
    name = f"interop-{fmt}"
    data = np.arange(24, dtype="f8").reshape(4, 6) / 7
    if fmt == 3:
        doc = {"zarr_format": 3, "node_type": "array", "shape": [4, 6], "data_type": "float64",
               "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3, 4]}},
               "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
               "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}]}
    else:
        doc = {"zarr_format": 2, "shape": [4, 6], "chunks": [3, 4], "dtype": "<f8", "compressor": None,
               "fill_value": 0, "order": "C", "filters": None}
    # As with directories, zarr_create makes no group above the location's node: make them first.
    with zc.Group.create(f"memory://{name}", zarr_format=fmt) as root:
        root.create_group("grp").close()
    with zc.Array.create(f"memory://{name}/grp/a", json.dumps(doc)) as a:
        a.write(data.tobytes())
    with zc.Array.open(f"memory://{name}/grp/a") as a:
        assert a.read() == data.tobytes()
        assert a.read([1, 2], [2, 3]) == data[1:3, 2:5].tobytes()
    with zc.Group.open(f"memory://{name}") as root:
        assert root.zarr_format == fmt
        assert root.children() == {"grp": "group"}
        with root.open_array("grp/a") as a:
            assert a.read() == data.tobytes()
        if fmt == 3:
            with zc.Group.open(f"memory://{name}", zc.READ_WRITE) as rw:
                rw.consolidate()
    try:
        zc.Array.open(f"memory://{name}-other/grp/a").close()
        raise AssertionError("another memory store shares the data")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_NOT_FOUND", e
        assert f"memory://{name}-other/" in e.message, e.message
    zc.memory_store_remove(f"{name}-other")  # created empty by the open above
    zc.memory_store_remove(name)
    for attempt in (lambda: zc.Array.open(f"memory://{name}/grp/a").close(), lambda: zc.memory_store_remove("never-made")):
        try:
            attempt()
            raise AssertionError("removed memory store still there")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_NOT_FOUND", e
    zc.memory_store_remove(name)  # the failed open above created it again, empty
    for bad in ("", "a/b"):
        try:
            zc.memory_store_remove(bad)
            raise AssertionError(f"memory store name {bad!r} accepted")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_INVALID_ARGUMENT", e


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    tmp = Path(tempfile.mkdtemp(prefix="zarr-zipmem-", dir=os.environ.get("ZARR_TEST_TMPDIR")))
    r = harness.Runner(tmp, args.verbose, args.k)
    try:
        r.run("zip stored", check_zip, r, zipfile.ZIP_STORED)
        r.run("zip deflated", check_zip, r, zipfile.ZIP_DEFLATED)
        r.run("zip errors", check_zip_errors, r)
        r.run("memory v3", check_memory, r, 3)
        r.run("memory v2", check_memory, r, 2)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{r.passed} passed, {len(r.failed)} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
