#!/usr/bin/env python3
"""Interop, consolidated metadata: zarr-python 3.1.6's v3 inline `consolidated_metadata` and v2
`.zmetadata`, read and written by libzarr through its C ABI.

    python3 tests/interop/test_consolidated.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (zarr-python or numpy not importable).
The library is $ZARR_LIB, else target/release/libzarr.so of this repository.

Covered:
  * zarr-python writes a hierarchy (v3: plain, sharded and gzip arrays in nested groups with
    attributes; v2 likewise without sharding) and consolidates it (zarr.consolidate_metadata). Then
    every metadata document except the root's (and, v2, its .zmetadata) is deleted, so libzarr can only
    list the hierarchy and open its nodes from the consolidated metadata: it walks the hierarchy with
    zarr_group_list / zarr_group_open_group / zarr_group_open_array, and reads every array, compared
    byte-exactly with what zarr-python wrote. The same walk with the consolidated metadata removed
    must find nothing (the test can fail).
  * libzarr writes a hierarchy (v3 and v2) and consolidates it with zarr_group_consolidate; the
    children's own metadata is deleted and zarr-python opens it with zarr.open_consolidated and sees
    every node (kind, attributes, data).
  * staleness: attributes written through libzarr after consolidation change the node's own document;
    a group opened from the root still sees the consolidated (old) attributes until zarr_group_consolidate.
"""
import json
import os
import shutil
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

import harness  # noqa: E402  (tests/interop/harness.py)
import zarr_ctypes as zc  # noqa: E402

warnings.filterwarnings("ignore")

META_NAMES = {"zarr.json", ".zarray", ".zgroup", ".zattrs"}


def python_hierarchy(path, fmt):
    """zarr-python writes a hierarchy and consolidates it; returns {node path: (kind, attrs, ndarray)}."""
    rng = np.random.default_rng(fmt)
    g = zarr.open_group(str(path), mode="w", zarr_format=fmt, attributes={"title": "root"})
    want = {}
    a = rng.integers(-1000, 1000, size=(13, 7)).astype("i4")
    x = g.create_array("a", shape=a.shape, chunks=(4, 3), dtype=a.dtype, attributes={"units": "m"})
    x[:] = a
    want["a"] = ("array", {"units": "m"}, a)
    s = g.create_group("s", attributes={"level": 1})
    want["s"] = ("group", {"level": 1}, None)
    b = rng.standard_normal((20, 6)).astype("f8")
    kw = {"shards": (10, 6)} if fmt == 3 else {}
    x = s.create_array("b", shape=b.shape, chunks=(5, 3), dtype=b.dtype, **kw)
    x[:] = b
    want["s/b"] = ("array", {}, b)
    t = s.create_group("t")
    want["s/t"] = ("group", {}, None)
    c = rng.integers(0, 255, size=(100,)).astype("u1")
    comp = {"compressors": zarr.codecs.GzipCodec(level=5)} if fmt == 3 else {"compressors": None}
    x = t.create_array("c", shape=c.shape, chunks=(30,), dtype=c.dtype, attributes={"n": [1, 2]}, **comp)
    x[:] = c
    want["s/t/c"] = ("array", {"n": [1, 2]}, c)
    g.create_group("empty")
    want["empty"] = ("group", {}, None)
    zarr.consolidate_metadata(str(path))
    return want


def strip_child_metadata(path):
    """Deletes every node's metadata document below the root (chunks and the root's documents stay)."""
    n = 0
    for p in sorted(Path(path).rglob("*")):
        if p.is_file() and p.name in META_NAMES and p.parent != Path(path):
            p.unlink()
            n += 1
    assert n > 0
    return n


def walk(group, prefix=""):
    """{node path: (kind, attrs, group or array handle)} through libzarr's group calls."""
    out = {}
    for name, kind in group.children().items():
        p = f"{prefix}{name}"
        if kind == "group":
            child = group.open_group(name)
            out[p] = ("group", json.loads(child.attributes), None)
            out.update(walk(child, p + "/"))
            child.close()
        else:
            with group.open_array(name) as a:
                out[p] = ("array", json.loads(a.attributes), (a.dtype, a.shape, a.read()))
    return out


def check_python_written(r, fmt):
    path = r.path(f"py_v{fmt}")
    want = python_hierarchy(path, fmt)
    strip_child_metadata(path)
    with zc.Group.open(path) as root:
        got = walk(root)
        # A relative path through the root opens from the consolidated metadata too.
        with root.open_array("s/t/c") as c:
            assert c.read() == want["s/t/c"][2].tobytes()
    assert sorted(got) == sorted(want), f"nodes {sorted(got)} != {sorted(want)}"
    for p, (kind, attrs, data) in want.items():
        gk, gattrs, gdata = got[p]
        assert gk == kind, f"{p}: {gk} != {kind}"
        assert gattrs == attrs, f"{p}: attributes {gattrs} != {attrs}"
        if data is not None:
            (_, size), shape, raw = gdata
            assert shape == list(data.shape), f"{p}: shape {shape}"
            assert size == data.dtype.itemsize
            assert raw == data.tobytes(), f"{p}: data differs"
    # Without its consolidated metadata the stripped hierarchy has no nodes: the walk above used it.
    if fmt == 3:
        doc = json.loads((path / "zarr.json").read_text())
        del doc["consolidated_metadata"]
        (path / "zarr.json").write_text(json.dumps(doc))
    else:
        (path / ".zmetadata").unlink()
    with zc.Group.open(path) as root:
        assert root.children() == {}, root.children()
        try:
            root.open_array("a").close()
            raise AssertionError("array opened without its metadata")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_NOT_FOUND", e


def libzarr_hierarchy(path, fmt):
    """libzarr writes a hierarchy; returns {node path: (kind, attrs, ndarray)}."""
    want = {}

    def doc(shape, chunks, dtype):
        if fmt == 3:
            return json.dumps({"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
                               "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
                               "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
                               "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                          {"name": "zstd", "configuration": {"level": 3}}],
                               "attributes": {"who": "libzarr"}})
        np_dtype = np.dtype(dtype).str
        return json.dumps({"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": np_dtype,
                           "compressor": {"id": "zlib", "level": 1}, "fill_value": 0, "order": "C",
                           "filters": None})

    with zc.Group.create(path, json.dumps({"title": "lib"}), zarr_format=fmt) as root:
        data = np.arange(60, dtype="i8").reshape(6, 10) * 3
        with root.create_array("x", doc([6, 10], [4, 4], "int64")) as a:
            a.write(data.tobytes())
        want["x"] = ("array", data)
        with root.create_group("g", json.dumps({"k": "v"})) as g:
            want["g"] = ("group", None)
            d2 = np.linspace(0, 1, 17, dtype="f4")
            with g.create_array("y", doc([17], [5], "float32")) as a:
                a.write(d2.tobytes())
            want["g/y"] = ("array", d2)
            with g.create_group("h"):
                want["g/h"] = ("group", None)
    with zc.Group.open(path, zc.READ_WRITE) as root:
        root.consolidate()
    return want


def check_libzarr_written(r, fmt):
    path = r.path(f"lib_v{fmt}")
    want = libzarr_hierarchy(path, fmt)
    strip_child_metadata(path)
    g = zarr.open_consolidated(str(path), zarr_format=fmt)
    assert dict(g.attrs) == {"title": "lib"}
    members = dict(g.members(max_depth=None))
    assert sorted(members) == sorted(want), f"zarr-python sees {sorted(members)}"
    for p, (kind, data) in want.items():
        node = members[p]
        if kind == "group":
            assert isinstance(node, zarr.Group), p
        else:
            assert isinstance(node, zarr.Array), p
            if fmt == 3:
                assert dict(node.attrs) == {"who": "libzarr"}
            np.testing.assert_array_equal(node[...], data)
            assert node[...].tobytes() == data.tobytes()
    assert dict(members["g"].attrs) == {"k": "v"}


def check_stale(r, fmt):
    path = r.path(f"stale_v{fmt}")
    libzarr_hierarchy(path, fmt)
    with zc.Group.open(path, zc.READ_WRITE) as root:
        with root.open_array("g/y") as a:
            a.set_attributes('{"new": 1}')
    # The node's own document changed; the consolidated metadata did not (zarr-python agrees).
    assert dict(zarr.open_array(str(path / "g" / "y"), zarr_format=fmt).attrs) == {"new": 1}
    with zc.Group.open(path) as root:
        with root.open_group("g") as g, g.open_array("y") as a:
            assert json.loads(a.attributes) != {"new": 1}, "consolidated metadata is trusted"
    assert dict(zarr.open_consolidated(str(path), zarr_format=fmt)["g/y"].attrs) != {"new": 1}
    with zc.Group.open(path, zc.READ_WRITE) as root:
        root.consolidate()
    with zc.Group.open(path) as root, root.open_array("g/y") as a:
        assert json.loads(a.attributes) == {"new": 1}
    assert dict(zarr.open_consolidated(str(path), zarr_format=fmt)["g/y"].attrs) == {"new": 1}
    with zc.Group.open(path) as root:
        try:
            root.consolidate()
            raise AssertionError("consolidated through a read-only group")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_READ_ONLY", e


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    tmp = Path(tempfile.mkdtemp(prefix="zarr-consolidated-", dir=os.environ.get("ZARR_TEST_TMPDIR")))
    r = harness.Runner(tmp, args.verbose, args.k)
    try:
        for fmt in (3, 2):
            r.run(f"zarr-python v{fmt} consolidated, read by libzarr", check_python_written, r, fmt)
            r.run(f"libzarr v{fmt} consolidated, read by zarr-python", check_libzarr_written, r, fmt)
            r.run(f"stale v{fmt}", check_stale, r, fmt)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{r.passed} passed, {len(r.failed)} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
