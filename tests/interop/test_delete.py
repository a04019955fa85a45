#!/usr/bin/env python3
"""Interop, deleting nodes: zarr-python 3.1.6 writes hierarchies, libzarr deletes members of them with
zarr_group_delete_member (through its C ABI), and zarr-python's view is checked.

    python3 tests/interop/test_delete.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure. The library is $ZARR_LIB, else target/release/libzarr.so.

Covered, for a v3 hierarchy (plain, sharded and gzip arrays in nested groups, with inline consolidated
metadata) and a v2 one (blosc arrays, `.zmetadata`), on the filesystem and on S3 (moto's server on
loopback, zarr-python through obstore):
  * an array, a nested group (by a relative path "g/sub") and a group through a child group handle
    are deleted: zarr-python no longer finds them (walking the store, and in the consolidated
    metadata, which still lists every remaining node), the siblings read equal to what was written,
    and no key is left below a deleted node (no directory either, on the filesystem);
  * a node whose documents are gone but which the consolidated metadata still describes is deleted
    (entries and keys);
  * refusals: an absent member (ZARR_ERR_NOT_FOUND), "", "..", "/abs" (ZARR_ERR_INVALID_ARGUMENT), a
    group opened read-only and a zip archive (ZARR_ERR_READ_ONLY); the hierarchy is unchanged after them.
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
    rng = np.random.default_rng(fmt)
    g = zarr.open_group(store, mode="w", zarr_format=fmt, attributes={"title": "root"})
    want = {}
    extra = dict(shards=(8, 8)) if fmt == 3 else {}
    for path, kw in [("a", {}), ("keep", extra), ("g/x", {}), ("g/sub/deep/y", {}), ("g/sub/z", {}), ("h/w", {})]:
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
    """zarr-python's view, walking the store and from consolidated metadata: `want` remains, `gone` not."""
    for consolidated in (False, True):
        g = zarr.open_group(store, mode="r", zarr_format=fmt, use_consolidated=consolidated)
        found = members(g)
        for path, data in want.items():
            assert found.get(path) == "array", f"consolidated={consolidated}: {path} missing from {sorted(found)}"
            assert np.array_equal(g[path][...], data), f"{path}: values differ"
            assert g[path].attrs["p"] == path
        for path in gone:
            assert path not in found, f"consolidated={consolidated}: deleted {path} still in {sorted(found)}"
        if consolidated:
            meta = g.metadata.consolidated_metadata
            assert meta is not None, "the consolidated metadata was dropped"
            flat = set(meta.flattened_metadata)
            assert flat == set(found), f"consolidated entries {sorted(flat)} != nodes {sorted(found)}"
    plain = members(zarr.open_group(store, mode="r", zarr_format=fmt, use_consolidated=False))
    cons = members(zarr.open_consolidated(store, zarr_format=fmt))
    assert plain == cons, f"store walk {sorted(plain)} != consolidated {sorted(cons)}"


def delete_and_check(loc, store, fmt, want, keys_below):
    """Deletes members through libzarr at `loc`; checks zarr-python's view and the stored keys."""
    with zc.Group.open(loc, zc.READ_WRITE) as g:
        g.delete_member("a")
        g.delete_member("g/sub")
    want = {k: v for k, v in want.items() if k not in ("a", "g/sub/deep/y", "g/sub/z")}
    check_view(store, fmt, want, ["a", "g/sub", "g/sub/deep", "g/sub/deep/y", "g/sub/z"])
    for prefix in ("a/", "g/sub/"):
        assert keys_below(prefix) == [], f"keys left below {prefix}: {keys_below(prefix)}"
    # through a child group's handle, then a whole group
    with zc.Group.open(loc, zc.READ_WRITE) as root:
        with zc.Group.open(f"{loc}/h", zc.READ_WRITE) as h:
            h.delete_member("w")
        root.delete_member("h")
    want.pop("h/w")
    check_view(store, fmt, want, ["h", "h/w"])
    assert keys_below("h/") == [], keys_below("h/")
    # refusals leave the hierarchy as it is
    with zc.Group.open(loc, zc.READ_WRITE) as g:
        for name, status in [("a", "ZARR_ERR_NOT_FOUND"), ("g/nothing", "ZARR_ERR_NOT_FOUND"),
                             ("", "ZARR_ERR_INVALID_ARGUMENT"), ("..", "ZARR_ERR_INVALID_ARGUMENT"),
                             ("/keep", "ZARR_ERR_INVALID_ARGUMENT"), ("g/../keep", "ZARR_ERR_INVALID_ARGUMENT")]:
            try:
                g.delete_member(name)
                raise AssertionError(f"deleting {name!r} succeeded")
            except zc.ZarrError as e:
                assert e.name == status, f"{name!r}: {e}"
    with zc.Group.open(loc, zc.READ) as g:
        try:
            g.delete_member("keep")
            raise AssertionError("deleting through a read-only group succeeded")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_READ_ONLY", e
    check_view(store, fmt, want, ["a", "h"])


def t_filesystem(r, fmt):
    path = r.path(f"v{fmt}")
    want = write_hierarchy(str(path), fmt)

    def keys_below(prefix):
        d = path / prefix
        return sorted(str(p.relative_to(path)) for p in d.rglob("*")) + ([prefix] if d.exists() else [])

    delete_and_check(str(path), str(path), fmt, want, keys_below)


def t_only_consolidated(r):
    """A node that only the consolidated metadata still describes (its zarr.json gone) is deleted too."""
    path = r.path("only_consolidated")
    want = write_hierarchy(str(path), 3)
    (path / "a" / "zarr.json").unlink()
    assert "a" in members(zarr.open_consolidated(str(path)))
    with zc.Group.open(str(path), zc.READ_WRITE) as g:
        g.delete_member("a")
    want.pop("a")
    check_view(str(path), 3, want, ["a"])
    assert not (path / "a").exists()


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
            try:
                g.delete_member("a")
                raise AssertionError("deleting from a zip archive succeeded")
            except zc.ZarrError as e:
                assert e.name == "ZARR_ERR_READ_ONLY", e
    with zipfile.ZipFile(archive) as z:
        assert "a/zarr.json" in z.namelist()


def t_http_read_only(r):
    from remote_servers import RangeHTTPServer

    path = r.path("http_root")
    write_hierarchy(str(path), 3)
    with RangeHTTPServer(path) as srv:
        for mode in (zc.READ, zc.READ_WRITE):
            with zc.Group.open(srv.url, mode) as g:
                try:
                    g.delete_member("a")
                    raise AssertionError("deleting over plain HTTP succeeded")
                except zc.ZarrError as e:
                    assert e.name == "ZARR_ERR_READ_ONLY", e
    assert (path / "a" / "zarr.json").exists()


def t_s3(r, s3, fmt):
    prefix = f"del_v{fmt}"
    store = s3.zarr_python_store(prefix)
    want = write_hierarchy(store, fmt)
    delete_and_check(f"s3://{s3.bucket}/{prefix}", store, fmt, want, lambda p: s3.keys(f"{prefix}/{p}"))


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    with tempfile.TemporaryDirectory(prefix="zarr-delete-", dir=os.environ.get("ZARR_TEST_TMPDIR")) as tmp:
        r = harness.Runner(Path(tmp), args.verbose, args.k)
        t0 = time.monotonic()
        r.run("filesystem_v3", t_filesystem, r, 3)
        r.run("filesystem_v2", t_filesystem, r, 2)
        r.run("only_consolidated", t_only_consolidated, r)
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
