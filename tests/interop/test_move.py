#!/usr/bin/env python3
"""Interop, moving nodes: zarr-python 3.1.6 writes hierarchies, libzarr moves (renames) members of them
with zarr_group_move_member (through its C ABI), and zarr-python's view is checked.

    python3 tests/interop/test_move.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure. The library is $ZARR_LIB, else target/release/libzarr.so.

Covered, for a v3 hierarchy (plain, sharded arrays in nested groups, with inline consolidated metadata)
and a v2 one (`.zmetadata`), on the filesystem (a directory rename) and on S3 (moto's server on
loopback, zarr-python through obstore; copy then delete):
  * an array into another group under a new name, a nested group by relative paths through a child
    group handle, and a whole group to a new top-level name: zarr-python finds the nodes at their new
    paths only (walking the store, and in the consolidated metadata, which lists exactly the nodes
    found), every array reads equal to what was written, with its attributes, and no key is left
    below the old paths;
  * refusals: an absent source or destination parent (ZARR_ERR_NOT_FOUND), an existing destination
    (ZARR_ERR_EXISTS), a destination below the source, "", "..", "/abs" (ZARR_ERR_INVALID_ARGUMENT), a
    group opened read-only, a zip archive and plain HTTP (ZARR_ERR_READ_ONLY); the hierarchy is
    unchanged after them.
"""
import os
import sys
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import zarr  # noqa: E402

import harness  # noqa: E402
import zarr_ctypes as zc  # noqa: E402

warnings.filterwarnings("ignore")


def write_hierarchy(store, fmt):
    """zarr-python writes a hierarchy and consolidates it; returns {array path: ndarray}."""
    rng = np.random.default_rng(fmt + 10)
    g = zarr.open_group(store, mode="w", zarr_format=fmt, attributes={"title": "root"})
    want = {}
    extra = dict(shards=(8, 8)) if fmt == 3 else {}
    for path, kw in [("a", {}), ("keep", extra), ("g/x", {}), ("g/sub/deep/y", {}), ("g/sub/z", extra), ("h/w", {})]:
        data = rng.integers(-1000, 1000, size=(16, 12)).astype("i4")
        arr = g.create_array(path, shape=data.shape, chunks=(4, 4), dtype=data.dtype, attributes={"p": path}, **kw)
        arr[...] = data
        want[path] = data
    zarr.consolidate_metadata(store)
    return want


def members(group):
    """{path: kind} of every node below `group`, as zarr-python finds them."""
    return {k: ("array" if isinstance(v, zarr.Array) else "group") for k, v in group.members(max_depth=None)}


def check_view(store, fmt, want, gone):
    """zarr-python's view, walking the store and from consolidated metadata: `want` ({new path: (data,
    original path)}) is there, `gone` not."""
    for consolidated in (False, True):
        g = zarr.open_group(store, mode="r", zarr_format=fmt, use_consolidated=consolidated)
        found = members(g)
        for path, (data, origin) in want.items():
            assert found.get(path) == "array", f"consolidated={consolidated}: {path} missing from {sorted(found)}"
            assert np.array_equal(g[path][...], data), f"{path}: values differ"
            assert g[path].attrs["p"] == origin
        for path in gone:
            assert path not in found, f"consolidated={consolidated}: moved {path} still in {sorted(found)}"
        if consolidated:
            meta = g.metadata.consolidated_metadata
            assert meta is not None, "the consolidated metadata was dropped"
            flat = set(meta.flattened_metadata)
            assert flat == set(found), f"consolidated entries {sorted(flat)} != nodes {sorted(found)}"
    plain = members(zarr.open_group(store, mode="r", zarr_format=fmt, use_consolidated=False))
    cons = members(zarr.open_consolidated(store, zarr_format=fmt))
    assert plain == cons, f"store walk {sorted(plain)} != consolidated {sorted(cons)}"


def expect(status, fn, *args):
    try:
        fn(*args)
    except zc.ZarrError as e:
        assert e.name == status, f"{args!r}: {e}"
        return
    raise AssertionError(f"{args!r} succeeded, expected {status}")


def move_and_check(loc, store, fmt, data, keys_below):
    """Moves members through libzarr at `loc`; checks zarr-python's view and the stored keys."""
    want = {p: (d, p) for p, d in data.items()}
    with zc.Group.open(loc, zc.READ_WRITE) as g:
        g.move_member("a", "h/moved_a")
    want["h/moved_a"] = want.pop("a")
    check_view(store, fmt, want, ["a"])
    assert keys_below("a/") == [], keys_below("a/")
    # by relative paths through a child group's handle, then a whole group to a new name
    with zc.Group.open(loc, zc.READ_WRITE) as root:
        # a child group opened through the root (opened by its own URL, its store would end at it, and
        # the root's consolidated metadata would be out of its reach)
        with root.open_group("g") as g:
            g.move_member("sub/deep", "deep2")
        root.move_member("g", "renamed")
    want["renamed/deep2/y"] = want.pop("g/sub/deep/y")
    want["renamed/sub/z"] = want.pop("g/sub/z")
    want["renamed/x"] = want.pop("g/x")
    check_view(store, fmt, want, ["g", "g/x", "g/sub", "renamed/sub/deep"])
    assert keys_below("g/") == [], keys_below("g/")
    # refusals leave the hierarchy as it is
    with zc.Group.open(loc, zc.READ_WRITE) as g:
        for src, dst, status in [("a", "b", "ZARR_ERR_NOT_FOUND"), ("keep", "nowhere/b", "ZARR_ERR_NOT_FOUND"),
                                 ("keep", "h", "ZARR_ERR_EXISTS"), ("keep", "renamed/x", "ZARR_ERR_EXISTS"),
                                 ("renamed", "renamed/sub/r", "ZARR_ERR_INVALID_ARGUMENT"),
                                 ("", "b", "ZARR_ERR_INVALID_ARGUMENT"), ("keep", "..", "ZARR_ERR_INVALID_ARGUMENT"),
                                 ("/keep", "b", "ZARR_ERR_INVALID_ARGUMENT")]:
            expect(status, g.move_member, src, dst)
    with zc.Group.open(loc, zc.READ) as g:
        expect("ZARR_ERR_READ_ONLY", g.move_member, "keep", "b")
    check_view(store, fmt, want, ["a", "g", "b"])


def t_filesystem(r, fmt):
    path = r.path(f"v{fmt}")
    data = write_hierarchy(str(path), fmt)

    def keys_below(prefix):
        d = path / prefix
        return sorted(str(p.relative_to(path)) for p in d.rglob("*")) + ([prefix] if d.exists() else [])

    move_and_check(str(path), str(path), fmt, data, keys_below)


def t_zip_read_only(r):
    path = r.path("zip_src")
    write_hierarchy(str(path), 3)
    archive = r.path("h.zip")
    with zipfile.ZipFile(archive, "w") as z:
        for p in sorted(path.rglob("*")):
            if p.is_file():
                z.write(p, p.relative_to(path).as_posix())
    for mode in (zc.READ, zc.READ_WRITE):
        try:
            g = zc.Group.open(f"zip://{archive}", mode)
        except zc.ZarrError as e:
            assert mode == zc.READ_WRITE and e.name == "ZARR_ERR_READ_ONLY", e
            continue
        with g:
            expect("ZARR_ERR_READ_ONLY", g.move_member, "a", "b")
    with zipfile.ZipFile(archive) as z:
        assert "a/zarr.json" in z.namelist() and "b/zarr.json" not in z.namelist()


def t_http_read_only(r):
    from remote_servers import RangeHTTPServer

    path = r.path("http_root")
    write_hierarchy(str(path), 3)
    with RangeHTTPServer(path) as srv:
        for mode in (zc.READ, zc.READ_WRITE):
            with zc.Group.open(srv.url, mode) as g:
                expect("ZARR_ERR_READ_ONLY", g.move_member, "a", "b")
    assert (path / "a" / "zarr.json").exists() and not (path / "b").exists()


def t_s3(r, s3, fmt):
    prefix = f"move_v{fmt}"
    store = s3.zarr_python_store(prefix)
    data = write_hierarchy(store, fmt)
    move_and_check(f"s3://{s3.bucket}/{prefix}", store, fmt, data, lambda p: s3.keys(f"{prefix}/{p}"))


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    with tempfile.TemporaryDirectory(prefix="zarr-move-", dir=os.environ.get("ZARR_TEST_TMPDIR")) as tmp:
        r = harness.Runner(Path(tmp), args.verbose, args.k)
        t0 = time.monotonic()
        r.run("filesystem_v3", t_filesystem, r, 3)
        r.run("filesystem_v2", t_filesystem, r, 2)
        r.run("zip_read_only", t_zip_read_only, r)
        r.run("http_read_only", t_http_read_only, r)
        if not args.k or "s3" in args.k:
            from remote_servers import MotoServer

            with MotoServer() as s3:
                r.run("s3_v3", t_s3, r, s3, 3)
                r.run("s3_v2", t_s3, r, s3, 2)
        print(f"{r.passed} passed, {len(r.failed)} failed ({time.monotonic() - t0:.1f} s)")
        sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
