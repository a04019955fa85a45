#!/usr/bin/env python3
"""Icechunk repositories (icechunk:// locations, docs/icechunk.md) against the Python `icechunk`
package 2.3.0 and zarr-python 3.4.2 (Python 3.12: the script re-runs itself with $ZARR_PYTHON312).

  * Python writes a repository (commits on main, a branch `dev`, a tag `v1`; groups with
    attributes, an unsharded and a sharded array, an array added, one resized) -> libzarr reads every
    version (each branch, the tag, every snapshot id of main's history) equal to what Python reads of
    it: the node tree, attributes, every array; zarrdump lists it.
  * libzarr creates a repository and writes it (groups, a sharded and an unsharded array, regions,
    a resize, attributes), commits twice, tags and branches -> Python lists the history (messages,
    snapshot ids) and reads every version equal.
  * two processes commit to one branch at once: one succeeds, the other gets ZARR_ERR_CONFLICT and
    the branch holds the winner's commit whole; the loser commits with ZARR_ICECHUNK_REBASE when its
    changes touch other chunks; a process SIGKILLed during its commit leaves the branch at the
    previous snapshot or the new one, each read whole.
  * virtual chunks (byte ranges of a local file in a virtual chunk container) read through libzarr
    equal to Python when the container is authorized (store option icechunk_authorize_virtual), and
    are refused without it; a reference past the file's end is ZARR_ERR_CODEC.
  * bad input under `prlimit --as`: a missing repository, branch, tag and snapshot, a truncated
    manifest, a truncated snapshot, a commit to a tag: specific errors naming what was asked for.
Exit status: 0 pass, 1 fail. Library: $ZARR_LIB.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

harness.reexec_with_zarr("3.4.2")
np, icechunk = harness.import_or_skip("numpy", "icechunk")

import zarr  # noqa: E402
import zarr_ctypes as zc  # noqa: E402
import icechunk_writer as w  # noqa: E402

assert icechunk.__version__ == "2.3.0", icechunk.__version__
NP = {"int8": "i1", "int16": "<i2", "int32": "<i4", "int64": "<i8", "uint8": "u1", "uint16": "<u2",
      "uint32": "<u4", "uint64": "<u8", "float32": "<f4", "float64": "<f8", "bool": "?"}


def ic(path, node="", version=""):
    loc = f"icechunk://{path}"
    if node:
        loc += f"!/{node}"
    if version:
        loc += f"?{version}"
    return loc


def libzarr_tree(path, version, options=None):
    """{node path: ("group", attrs) or ("array", values, attrs)} of a version, read through libzarr."""
    out = {}

    def walk(g, prefix):
        for name, kind in sorted(g.children().items()):
            full = f"{prefix}{name}"
            if kind == "group":
                with g.open_group(name) as sub:
                    out[full] = ("group", json.loads(sub.attributes))
                    walk(sub, f"{full}/")
            else:
                with g.open_array(name) as a:
                    dt, _ = a.dtype
                    values = np.frombuffer(a.read(), dtype=NP[dt]).reshape(a.shape)
                    out[full] = ("array", values, json.loads(a.attributes))
        return out

    with zc.Group.open(ic(path, version=version), zc.READ, options=options) as root:
        out[""] = ("group", json.loads(root.attributes))
        walk(root, "")
    return out


def same_tree(got, want, what):
    assert sorted(got) == sorted(want), f"{what}: nodes {sorted(got)} != {sorted(want)}"
    for k, w_ in want.items():
        g = got[k]
        assert g[0] == w_[0], f"{what}: {k} is a {g[0]}, Python reads a {w_[0]}"
        if w_[0] == "group":
            assert g[1] == w_[1], f"{what}: attributes of {k}: {g[1]} != {w_[1]}"
        else:
            assert g[1].shape == w_[1].shape and g[1].dtype == w_[1].dtype, \
                f"{what}: {k}: {g[1].dtype}{g[1].shape} != {w_[1].dtype}{w_[1].shape}"
            assert np.array_equal(g[1], w_[1]), f"{what}: values of {k} differ"
            assert g[2] == w_[2], f"{what}: attributes of {k}: {g[2]} != {w_[2]}"


def t_python_writes(r):
    path = r.path("history")
    info = w.make_history_repo(path)
    hist = w.history(path)
    assert [m for _, m in hist][:3] == ["third: resize g/a", "second: a region, attributes, b", "first: g/a and sharded"]
    versions = [("branch=main", {"branch": "main"}), ("", {"branch": "main"}), ("branch=dev", {"branch": "dev"}),
                ("tag=v1", {"tag": "v1"})]
    versions += [(f"snapshot={sid}", {"snapshot_id": sid}) for sid, _ in hist[:-1]]
    for q, kw in versions:
        same_tree(libzarr_tree(path, q), w.read_version(path, **kw), q or "default version")
    # The first snapshot ("Repository initialized") holds no node, not even the root group.
    try:
        zc.Group.open(ic(path, version=f"snapshot={hist[-1][0]}")).close()
        raise AssertionError("a group in the empty first snapshot")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_NOT_FOUND", e
    # A node inside, by location; the dev branch's own group.
    a = zc.Array.open(ic(path, "g/a", f"snapshot={info['snapshots'][0]}"))
    assert a.shape == [40, 30], a.shape
    a.close()
    with zc.Group.open(ic(path, "devonly", "branch=dev")) as g:
        assert json.loads(g.attributes) == {"branch": "dev"}
    tool = os.environ.get("ZARRDUMP")
    assert tool, "ZARRDUMP is not set (CMake sets it)"
    out = harness.run_tool(tool, ic(path, version="tag=v1")).stdout
    for text in ("group: g {", "int a(y, x)", "double sharded(", ':units = "K"', ":n = 1"):
        assert text in out, f"zarrdump does not show {text!r}:\n{out[:3000]}"


def sharded_doc(shape, chunks, shards, dtype, fill):
    return json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": shards}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill,
        "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": chunks,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": "end"}}],
        "attributes": {"kind": "sharded"}})


def plain_doc(shape, chunks, dtype, fill):
    return json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill, "dimension_names": ["t", "x"],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                   {"name": "gzip", "configuration": {"level": 1}}]})


def t_libzarr_writes(r):
    path = r.path("from_libzarr")
    zc.icechunk_create_repository(ic(path))
    rng = np.random.default_rng(5)
    t1 = rng.integers(-30000, 30000, size=(30, 50), dtype="<i2")
    s1 = rng.standard_normal((64, 40)).astype("<f4")
    with zc.Group.create(ic(path), '{"title": "libzarr"}') as root:
        with root.create_group("grp", '{"level": 1}') as grp:
            with grp.create_array("t", plain_doc([30, 50], [7, 9], "int16", 0)) as a:
                a.write(t1.tobytes())
        with root.create_array("s", sharded_doc([64, 40], [8, 5], [32, 20], "float32", 0.25)) as s:
            s.write(s1.tobytes())
        assert root.icechunk_has_changes()
        c1 = root.icechunk_commit("c1: grp/t and s")
        # Second commit: a region, a resize, attributes.
        with root.open_array("grp/t") as a:
            a.resize([40, 50])
            patch = np.full((10, 50), 17, dtype="<i2")
            a.write(patch.tobytes(), [30, 0], [10, 50])
            t2 = np.concatenate([t1, patch])
        with root.open_array("s") as s:
            s.write(np.full((8, 8), -2, dtype="<f4").tobytes(), [8, 16], [8, 8])
            s2 = s1.copy()
            s2[8:16, 16:24] = -2
            s.set_attributes('{"kind": "sharded", "rev": 2}')
        root.set_attributes('{"title": "libzarr", "rev": 2}')
        c2 = root.icechunk_commit("c2: region, resize, attributes")
        assert not root.icechunk_has_changes() and root.icechunk_snapshot_id() == c2
    assert zc.icechunk_create_ref("tag", ic(path), "t1", c1) == c1
    assert zc.icechunk_create_ref("branch", ic(path, version="tag=t1"), "side") == c1
    with zc.Group.open(ic(path, version="branch=side"), zc.READ_WRITE) as side:
        with side.open_array("s") as s:
            s.write(np.zeros((64, 40), dtype="<f4").tobytes())
        c3 = side.icechunk_commit("c3 on side")
    hist = w.history(path)
    assert [m for _, m in hist] == ["c2: region, resize, attributes", "c1: grp/t and s", "Repository initialized"], hist
    assert [i for i, _ in hist][:2] == [c2, c1], (hist, c1, c2)
    want = {
        c1: {"": {"title": "libzarr"}, "grp/t": (t1, {}), "s": (s1, {"kind": "sharded"})},
        c2: {"": {"title": "libzarr", "rev": 2}, "grp/t": (t2, {}), "s": (s2, {"kind": "sharded", "rev": 2})},
        c3: {"": {"title": "libzarr"}, "grp/t": (t1, {}), "s": (np.zeros((64, 40), "<f4"), {"kind": "sharded"})},
    }
    for sid, kw in ((c1, {"tag": "t1"}), (c1, {"snapshot_id": c1}), (c2, {"branch": "main"}),
                    (c2, {"snapshot_id": c2}), (c3, {"branch": "side"})):
        got = w.read_version(path, **kw)
        assert got[""][1] == want[sid][""], (kw, got[""])
        assert got["grp"][1] == {"level": 1}, got["grp"]
        for name in ("grp/t", "s"):
            values, attrs = want[sid][name]
            assert np.array_equal(got[name][1], values), f"{kw}: {name} differs"
            assert got[name][2] == attrs, (kw, name, got[name][2])
    dims = zarr.open_group(store=w.open_repo(path).readonly_session(branch="main").store, mode="r")["grp/t"].metadata.dimension_names
    assert tuple(dims) == ("t", "x"), dims


# A child process committing to a branch: args lib, location, array, start row, value, ready file,
# go file, rebase flag. Prints the commit's status name (and the snapshot id).
COMMIT_CHILD = r"""
import sys, time, os, json
sys.path.insert(0, sys.argv[1]); import zarr_ctypes as zc; zc._LIB = zc.load(sys.argv[2])
loc, name, row, value, ready, go, rebase = sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), sys.argv[7], sys.argv[8], sys.argv[9] == "1"
g = zc.Group.open(loc, zc.READ_WRITE)
a = g.open_array(name)
a.write(bytes([value]) * (10 * 40), [row, 0], [10, 40])
open(ready, "w").close()
while not os.path.exists(go): time.sleep(0.002)
try:
    sid = g.icechunk_commit(f"row {row} = {value}", rebase=rebase)
    print("ZARR_OK", sid)
except zc.ZarrError as e:
    print(e.name, e.message)
    if e.name == "ZARR_ERR_CONFLICT" and "--retry-rebase" in sys.argv:
        print("RETRY", g.icechunk_commit(f"row {row} = {value} (rebased)", rebase=True))
"""


def run_commit_children(r, path, specs, extra=()):
    """Starts one child per (row, value), lets them commit at once; returns their outputs."""
    procs, readies = [], []
    go = r.path("go")
    for row, value in specs:
        ready = r.path(f"ready{row}")
        readies.append(ready)
        procs.append(subprocess.Popen(
            [sys.executable, "-c", COMMIT_CHILD, str(ROOT / "tools"), zc._LIB._name, ic(path), "a", str(row), str(value),
             str(ready), str(go), "0", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.time() + 60
    while not all(p.exists() for p in readies):
        assert time.time() < deadline and all(p.poll() is None for p in procs), \
            [p.communicate() for p in procs if p.poll() is not None]
        time.sleep(0.005)
    go.touch()
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, f"child failed: {out}{err}"
        outs.append(out.strip())
    return outs


def new_conflict_repo(r, tag):
    path = r.path(tag)
    repo = icechunk.Repository.create(w.storage(path))
    s = repo.writable_session("main")
    root = zarr.group(store=s.store)
    root.create_array("a", shape=(40, 40), chunks=(10, 40), dtype="uint8", fill_value=0)
    base = s.commit("base")
    return path, base


def t_conflict(r):
    # Same chunk: one wins, the other is ZARR_ERR_CONFLICT (and keeps its changes, so a rebase fails too).
    path, base = new_conflict_repo(r, "conflict_same")
    outs = run_commit_children(r, path, [(0, 1), (0, 2)])
    status = sorted(o.split()[0] for o in outs)
    assert status == ["ZARR_ERR_CONFLICT", "ZARR_OK"], outs
    loser = next(o for o in outs if o.startswith("ZARR_ERR_CONFLICT"))
    assert "branch" in loser and "main" in loser, loser
    winner = next(o for o in outs if o.startswith("ZARR_OK"))
    value = 1 if winner == outs[0] else 2
    hist = w.history(path)
    assert [m for _, m in hist][:2] == [f"row 0 = {value}", "base"], hist
    got = w.read_version(path, branch="main")["a"][1]
    want = np.zeros((40, 40), "u1")
    want[0:10] = value
    assert np.array_equal(got, want), "the winner's commit is not whole"
    # Other chunks: the loser rebases onto the winner's commit; both changes land.
    path, base = new_conflict_repo(r, "conflict_rebase")
    outs = run_commit_children(r, path, [(0, 5), (20, 6)], extra=("--retry-rebase",))
    assert sorted(o.split()[0] for o in outs) == ["ZARR_ERR_CONFLICT", "ZARR_OK"], outs
    assert any("RETRY" in o for o in outs), outs
    got = w.read_version(path, branch="main")["a"][1]
    want = np.zeros((40, 40), "u1")
    want[0:10], want[20:30] = 5, 6
    assert np.array_equal(got, want), "a rebased commit lost data"
    assert len(w.history(path)) == 4


KILL_CHILD = r"""
import sys, os
sys.path.insert(0, sys.argv[1]); import zarr_ctypes as zc; zc._LIB = zc.load(sys.argv[2])
g = zc.Group.open(sys.argv[3], zc.READ_WRITE)
a = g.open_array("big")
v = int(sys.argv[4])
a.write(bytes([v]) * (256 * 256 * 16), [0, 0, 0], [16, 256, 256])
print("committing", flush=True)
g.icechunk_commit(f"fill {v}")
print("done", flush=True)
"""


def t_sigkill(r):
    path = r.path("sigkill")
    repo = icechunk.Repository.create(w.storage(path))
    s = repo.writable_session("main")
    root = zarr.group(store=s.store)
    root.create_array("big", shape=(16, 256, 256), chunks=(1, 64, 64), dtype="uint8", fill_value=0)
    s.commit("base")
    outcomes = set()
    for i, delay in enumerate([0.0, 0.005, 0.02, 0.05, 0.1]):
        before = w.history(path)[0][0]
        before_values = w.read_version(path, branch="main")["big"][1]
        p = subprocess.Popen([sys.executable, "-c", KILL_CHILD, str(ROOT / "tools"), zc._LIB._name, ic(path), str(i + 1)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = p.stdout.readline()
        assert line.strip() == "committing", (line, p.stderr.read())
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        hist = w.history(path)
        got = w.read_version(path, branch="main")["big"][1]
        if hist[0][0] == before:
            assert np.array_equal(got, before_values), f"kill {delay}: the branch did not move but its data changed"
            outcomes.add("before")
        else:
            assert hist[0][1] == f"fill {i + 1}" and hist[1][0] == before, hist[:2]
            assert (got == i + 1).all(), f"kill {delay}: a torn commit"
            outcomes.add("after")
    if r.verbose:
        print(f"  SIGKILL outcomes: {sorted(outcomes)}")


def t_virtual(r):
    vdir = r.path("vdata")
    vdir.mkdir()
    prefix = f"file://{vdir}/"
    path = r.path("virtual")
    values = w.make_virtual_repo(path, vdir / "data.bin", prefix)
    opts = zc.StoreOptions(icechunk_authorize_virtual=prefix)
    with zc.Array.open(ic(path, "v"), options=opts) as a:
        got = np.frombuffer(a.read(), "<i4").reshape(6, 10)
    assert np.array_equal(got, values), "virtual chunks differ"
    py = zarr.open_group(store=w.open_repo(path, {prefix: None}).readonly_session(branch="main").store, mode="r")
    assert np.array_equal(py["v"][...], got)
    # Without authorization: refused, naming the container.
    with zc.Array.open(ic(path, "v")) as a:
        try:
            a.read()
            raise AssertionError("an unauthorized virtual chunk was read")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_IO" and prefix in e.message and "icechunk_authorize_virtual" in e.message, e
        # The native chunk reads without authorization.
        assert np.array_equal(np.frombuffer(a.read([4, 5], [2, 5]), "<i4").reshape(2, 5), values[4:6, 5:10])
    with zc.Array.open(ic(path, "bad"), options=opts) as a:
        try:
            a.read()
            raise AssertionError("a virtual chunk past the end of its file was read")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_CODEC" and "data.bin" in e.message, e


# Each case: [location, node kind ("group"/"array"/"commit-tag"), expected status, text the message must hold].
BAD_CHILD = r"""
import sys, json
sys.path.insert(0, sys.argv[1]); import zarr_ctypes as zc; zc._LIB = zc.load(sys.argv[2])
bad = 0
for loc, kind, want, text in json.loads(sys.argv[3]):
    try:
        if kind == "group":
            zc.Group.open(loc).close()
        elif kind == "array":
            a = zc.Array.open(loc); a.read(); a.close()
        elif kind == "commit-tag":
            g = zc.Group.open(loc, zc.READ_WRITE); g.icechunk_commit("to a tag")
        elif kind == "write-tag":
            a = zc.Array.open(loc, zc.READ_WRITE); a.write(a.read())
        got, msg = "ZARR_OK", ""
    except zc.ZarrError as e:
        got, msg = e.name, e.message
    ok = got == want and text in msg
    bad += not ok
    print(("ok  " if ok else "BAD ") + f"{loc} {kind}: {got} {msg[:300]}")
sys.exit(1 if bad else 0)
"""


def t_bad_input(r):
    path = r.path("bad")
    info = w.make_history_repo(path)
    first = info["snapshots"][0]
    # A copy whose manifests are truncated, and one whose first snapshot file is.
    torn_manifest = r.path("torn_manifest")
    shutil.copytree(path, torn_manifest)
    for m in (torn_manifest / "manifests").iterdir():
        m.write_bytes(m.read_bytes()[:50])
    torn_snapshot = r.path("torn_snapshot")
    shutil.copytree(path, torn_snapshot)
    snap = torn_snapshot / "snapshots" / first
    snap.write_bytes(snap.read_bytes()[:60])
    missing = r.path("missing")
    cases = [
        [ic(missing), "group", "ZARR_ERR_NOT_FOUND", str(missing)],
        [ic(path, version="branch=nope"), "group", "ZARR_ERR_NOT_FOUND", "nope"],
        [ic(path, version="tag=nope"), "group", "ZARR_ERR_NOT_FOUND", "nope"],
        [ic(path, version="snapshot=AAAAAAAAAAAAAAAAAAAA"), "group", "ZARR_ERR_NOT_FOUND", "AAAAAAAAAAAAAAAAAAAA"],
        [ic(path, version="snapshot=xyz"), "group", "ZARR_ERR_INVALID_ARGUMENT", "xyz"],
        [ic(path, "nothing/here"), "array", "ZARR_ERR_NOT_FOUND", "nothing/here"],
        [ic(torn_manifest, "g/a"), "array", "ZARR_ERR_CODEC", "g/a"],
        [ic(torn_snapshot, version=f"snapshot={first}"), "group", "ZARR_ERR_CODEC", first],
        [ic(path, version="tag=v1"), "commit-tag", "ZARR_ERR_READ_ONLY", "v1"],
        [ic(path, "g/a", "tag=v1"), "write-tag", "ZARR_ERR_READ_ONLY", "v1"],
    ]
    p = subprocess.run(["prlimit", "--as=4000000000", sys.executable, "-c", BAD_CHILD, str(ROOT / "tools"), zc._LIB._name,
                        json.dumps(cases)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"bad input:\n{p.stdout}{p.stderr[-3000:]}"
    if r.verbose:
        print(p.stdout, end="")
    # Nothing changed: Python still reads the repository as before.
    same_tree(libzarr_tree(path, "branch=main"), w.read_version(path, branch="main"), "after the bad input")


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    r = harness.Runner.in_scratch(args)
    r.run("python_writes", t_python_writes, r)
    r.run("libzarr_writes", t_libzarr_writes, r)
    r.run("conflict", t_conflict, r)
    r.run("sigkill", t_sigkill, r)
    r.run("virtual", t_virtual, r)
    r.run("bad_input", t_bad_input, r)
    r.finish()


if __name__ == "__main__":
    main()
