#!/usr/bin/env python3
"""Interop: `h5tozarr --virtual FILE icechunk://REPO` (docs/icechunk.md, "h5tozarr --virtual into a
repository"): an HDF5 file's chunks committed into an Icechunk repository as virtual chunk references,
read by Python `icechunk` 2.3.0 + zarr-python 3.4.2 (under $ZARR_PYTHON312) and by libzarr, against
netCDF4-python and h5py reading the files themselves.

    H5TOZARR=... python3 tests/interop/test_h5tozarr_icechunk.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (a package or $H5TOZARR missing outside CI).

Covered:
  * a netCDF-4 file (netCDF4-python: deflate + shuffle, big-endian, Fletcher-32, chunks never written,
    a contiguous variable split into two references, a scalar, variable-length strings copied in, a
    subgroup) into a new repository (created, a virtual chunk container file:///DIR/ added), and an
    h5py file (deflate + shuffle, big-endian, Fletcher-32 + shuffle + deflate, a fill value, complex,
    booleans, fixed-length strings, a compact dataset copied in, nested groups) into the node !/h5 of
    the same repository: two commits with their messages. Python icechunk lists them, reads the
    container from the repository's configuration, and, with the container authorized, zarr-python
    reads every variable equal to netCDF4 / h5py (and the netCDF dimension names); without the
    authorization Python's read of a virtual chunk fails. libzarr reads every variable equal too (store
    option icechunk_authorize_virtual), and refuses without it.
  * the rules: a non-empty node is refused (nothing committed, the branch unchanged); --overwrite
    replaces it in one new commit (the previous snapshot still reads the old contents); an unsupported
    dataset (scale-offset) refuses the run by name (exit 2) with nothing committed, and a run into a new
    repository that fails leaves no repository behind; --parquet and --message without --virtual into
    icechunk:// are refused.
"""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tools"))
sys.path.insert(0, str(HERE))

PEER = len(sys.argv) > 1 and sys.argv[1] == "--peer"

if PEER:
    # Python icechunk + zarr-python 3.4.2: python3.12 this.py --peer REPO CONTAINER WANT.npz STRINGS.json
    import numpy as np
    import icechunk
    import zarr

    warnings.filterwarnings("ignore")
    repo_dir, container, want_npz, strings_json = sys.argv[2:6]
    assert icechunk.__version__ == "2.3.0", icechunk.__version__
    storage = icechunk.local_filesystem_storage(repo_dir)
    plain = icechunk.Repository.open(storage)
    conts = plain.config.virtual_chunk_containers or {}
    assert container in conts, f"the repository's containers {list(conts)} lack {container}"
    history = [(s.id, s.message) for s in plain.ancestry(branch="main")]
    out = {"history": history}
    # without the authorization a virtual chunk is not read
    g = zarr.open_group(plain.readonly_session("main").store, mode="r")
    try:
        g["temp"][...]
        out["unauthorized"] = "read"
    except Exception as e:  # noqa: BLE001 - which exception icechunk raises is its business
        out["unauthorized"] = f"{type(e).__name__}"
    repo = icechunk.Repository.open(storage, authorize_virtual_chunk_access={container: icechunk.credentials.LocalFileSystemAccess})
    g = zarr.open_group(repo.readonly_session("main").store, mode="r")
    want = dict(np.load(want_npz))
    strings = json.loads(Path(strings_json).read_text())
    checked = []
    for name, w in want.items():
        got = g[name][...]
        got = np.asarray(got)
        if w.dtype.kind == "S":
            got_b = [bytes(x).rstrip(b"\0") if not isinstance(x, bytes) else x.rstrip(b"\0") for x in got.ravel()]
            assert got_b == [x.rstrip(b"\0") for x in w.ravel()], f"{name}: {got_b} != {w}"
        elif w.dtype.kind in "fc":
            assert got.shape == w.shape and np.array_equal(got, w, equal_nan=True), f"{name}: values differ"
        else:
            assert got.shape == w.shape and np.array_equal(got, w), f"{name}: values differ\n{got}\n{w}"
        checked.append(name)
    for name, w in strings.items():
        got = [str(x) for x in np.asarray(g[name][...]).ravel()]
        assert got == w, f"{name}: {got} != {w}"
        checked.append(name)
    out["checked"] = sorted(checked)
    out["temp_dims"] = list(g["temp"].metadata.dimension_names or [])
    print(json.dumps(out))
    sys.exit(0)

import harness  # noqa: E402
import zarr_ctypes as zc  # noqa: E402

np, h5py, netCDF4 = harness.import_or_skip("numpy", "h5py", "netCDF4")
warnings.filterwarnings("ignore")
H5TOZARR = harness.tool_or_skip("H5TOZARR")
import test_h5tozarr_virtual as tv  # noqa: E402  (the same netCDF and h5py files)

tv.np, tv.h5py, tv.netCDF4 = np, h5py, netCDF4


def peer_python():
    """$ZARR_PYTHON312 (Python icechunk 2.3.0 + zarr-python 3.4.2); missing: zarr_prereq decides."""
    p = os.environ.get("ZARR_PYTHON312", "")
    if not p or not Path(p).exists():
        sys.path.insert(0, str(HERE.parents[1] / "tests" / "python_site"))
        import zarr_prereq
        zarr_prereq.missing(f"$ZARR_PYTHON312={p!r} (Python icechunk 2.3.0) is not an interpreter")
    return p


def h5tozarr(*args, expect=0):
    return harness.run_tool(H5TOZARR, *args, expect=expect)


def file_url_dir(path):
    return "file://" + str(Path(path).resolve().parent) + "/"


def options(container):
    o = zc.StoreOptions()
    o.set("icechunk_authorize_virtual", container)
    return o


def libzarr_snapshot(repo):
    with zc.Group.open(f"icechunk://{repo}", zc.READ) as g:
        h = zc.ctypes.c_void_p()
        zc.check(zc.lib().zarr_icechunk_snapshot_id(g.h, zc.ctypes.byref(h)))
        s = zc.ctypes.string_at(h.value).decode()
        zc.lib().zarr_string_free(h)
        return s


def libzarr_read(location, container, want, strings):
    """Every array of `want` / `strings` read by libzarr below `location`, compared."""
    with zc.Group.open(location, zc.READ, options=options(container)) as root:
        arrays = tv.walk(root)
    try:
        missing = (set(want) | set(strings)) - set(arrays)
        assert not missing, f"{location}: arrays not found: {sorted(missing)} (found {sorted(arrays)})"
        for name, w in want.items():
            a = arrays[name]
            if w.dtype.kind == "S":
                got = np.frombuffer(a.read(), dtype=f"S{w.dtype.itemsize}").reshape(a.shape)
            else:
                got = np.frombuffer(a.read(), dtype=w.dtype.newbyteorder("=")).reshape(a.shape)
            tv.check_equal(name, got, w)
        for name, w in strings.items():
            tv.check_equal(name, np.array(arrays[name].read_vlen(), dtype=object), np.array(w, dtype=object))
    finally:
        for a in arrays.values():
            a.close()


def split_want(want, prefix=""):
    nums = {prefix + k: np.asarray(v) for k, v in want.items() if not isinstance(v, list)}
    strs = {prefix + k: v for k, v in want.items() if isinstance(v, list)}
    return nums, strs


class Setup:
    def __init__(self, r):
        self.dir = r.path("files")
        self.dir.mkdir()
        self.nc = self.dir / "model.nc"
        self.h5 = self.dir / "plain.h5"
        self.nc_want = tv.make_netcdf(self.nc)
        self.h5_want = tv.make_h5(self.h5)
        self.container = file_url_dir(self.nc)


def t_two_commits(r, s):
    repo = r.path("repo")
    p = h5tozarr("--virtual", s.nc, f"icechunk://{repo}")
    assert f"virtual chunk container {s.container} added" in p.stderr, p.stderr
    assert "committed as snapshot" in p.stderr, p.stderr
    p = h5tozarr("--virtual", "--message", "the h5py file", s.h5, f"icechunk://{repo}!/h5")
    assert "container" not in p.stderr, p.stderr  # the directory's container is there already
    nc_num, nc_str = split_want(s.nc_want)
    h5_num, h5_str = split_want(s.h5_want, "h5/")
    want = {**nc_num, **h5_num}
    strings = {**nc_str, **h5_str}
    npz = r.path("want.npz")
    np.savez(npz, **want)
    sj = r.path("strings.json")
    sj.write_text(json.dumps(strings))
    # Python icechunk + zarr-python
    p = subprocess.run([peer_python(), __file__, "--peer", str(repo), s.container, str(npz), str(sj)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"Python icechunk: {p.stderr[-3000:]}"
    out = json.loads(p.stdout.strip().splitlines()[-1])
    messages = [m for _, m in out["history"]]
    assert messages == ["the h5py file", f"h5tozarr --virtual {s.nc}", "Repository initialized"], messages
    assert out["unauthorized"] != "read", "Python read a virtual chunk of a container it did not authorize"
    assert out["checked"] == sorted(list(want) + list(strings)), (out["checked"], sorted(list(want) + list(strings)))
    assert out["temp_dims"] == ["time", "lat", "lon"], out["temp_dims"]
    # libzarr
    libzarr_read(f"icechunk://{repo}", s.container, want, strings)
    with zc.Array.open(f"icechunk://{repo}!/temp", zc.READ) as a:
        try:
            a.read()
            raise AssertionError("libzarr read a virtual chunk of a container it did not authorize")
        except zc.ZarrError as e:
            assert "not authorized" in str(e), str(e)
    assert libzarr_snapshot(repo) == out["history"][0][0]


def t_rules(r, s):
    repo = r.path("rules")
    h5tozarr("--virtual", s.h5, f"icechunk://{repo}")
    first = libzarr_snapshot(repo)
    # a node that is not empty: refused, nothing committed
    p = h5tozarr("--virtual", s.nc, f"icechunk://{repo}", expect=1)
    assert "not empty" in p.stderr, p.stderr
    assert libzarr_snapshot(repo) == first
    # --overwrite: the netCDF file replaces it in one commit; the first snapshot keeps the h5py file
    h5tozarr("--virtual", "--overwrite", s.nc, f"icechunk://{repo}")
    second = libzarr_snapshot(repo)
    assert second != first
    nc_num, nc_str = split_want(s.nc_want)
    libzarr_read(f"icechunk://{repo}", s.container, nc_num, nc_str)
    with zc.Group.open(f"icechunk://{repo}", zc.READ) as g:
        assert "deflate_shuffle" not in g.children(), g.children()
    h5_num, h5_str = split_want(s.h5_want)
    libzarr_read(f"icechunk://{repo}?snapshot={first}", s.container, h5_num, h5_str)
    # an unsupported dataset: refused by name, nothing committed; a new repository is not left behind
    bad = s.dir / "scaleoffset.h5"
    with h5py.File(bad, "w") as f:
        f.create_dataset("so", data=np.arange(100, dtype="i4"), chunks=(10,), scaleoffset=0)
    p = h5tozarr("--virtual", "--overwrite", bad, f"icechunk://{repo}", expect=2)
    assert "/so" in p.stderr and "scale-offset" in p.stderr, p.stderr
    assert libzarr_snapshot(repo) == second
    fresh = r.path("fresh")
    p = h5tozarr("--virtual", s.h5, f"icechunk://{fresh}?tag=v1", expect=1)
    assert not fresh.exists(), "a failed run left a repository behind"
    # options that do not apply
    p = h5tozarr("--virtual", "--parquet", s.h5, f"icechunk://{repo}", expect=1)
    assert "do not apply" in p.stderr, p.stderr
    p = h5tozarr(s.h5, f"icechunk://{repo}", expect=1)
    assert "with --virtual" in p.stderr, p.stderr
    assert libzarr_snapshot(repo) == second


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    r = harness.Runner.in_scratch(args)
    s = Setup(r)
    r.run("two_commits", t_two_commits, r, s)
    r.run("rules", t_rules, r, s)
    r.finish()


if __name__ == "__main__":
    main()
