#!/usr/bin/env python3
"""zarrdump: exact text output on the committed hierarchies (written by zarr-python; see
tools/make_zarrdump_fixtures.py), --json compared with zarr-python's view of the same hierarchies,
values of regions (-d) compared with zarr-python's, --help, and the error exits.

    ZARRDUMP=build/zarrdump python3 tests/zarrdump/test_zarrdump.py

Exit status 0 when all pass, 1 on a failure, 77 (skipped) when zarr-python or numpy is missing.
"""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

try:
    import numpy as np
    import zarr
except ImportError as e:
    print(f"SKIP: zarr-python / numpy not importable ({e})")
    sys.exit(77)

ZARRDUMP = os.environ.get("ZARRDUMP", "")
failures = []
passed = 0


def run(*args, expect_rc=0):
    p = subprocess.run([ZARRDUMP, *args], cwd=HERE, capture_output=True, text=True, timeout=120)
    assert p.returncode == expect_rc, f"zarrdump {' '.join(args)}: exit {p.returncode}, stderr {p.stderr!r}"
    return p.stdout, p.stderr


def case(fn):
    global passed
    try:
        fn()
        passed += 1
        print(f"PASS {fn.__name__}")
    except AssertionError as e:
        failures.append(fn.__name__)
        print(f"FAIL {fn.__name__}: {e}")


def text_small():
    out, _ = run("small.zarr")
    want = (HERE / "small.expected.txt").read_text()
    assert out == want, f"output differs from small.expected.txt:\n{out}"


def text_small_v2():
    out, _ = run("small_v2.zarr")
    assert out == (HERE / "small_v2.expected.txt").read_text(), f"output differs:\n{out}"


def text_data():
    out, _ = run("-v", "temperature,sub/sharded,names", "-d", "1:4,1:5:2", "small.zarr")
    assert out == (HERE / "small_data.expected.txt").read_text(), f"output differs:\n{out}"


def norm(v):
    """JSON fill values / values as comparable Python values (NaN as the string zarr uses)."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, (np.floating,)):
        return "NaN" if np.isnan(v) else float(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.bool_,)):
        return bool(v)
    return v


def compare_array(node, z, fmt):
    assert node["node_type"] == "array"
    assert node["zarr_format"] == fmt == z.metadata.zarr_format
    assert node["shape"] == list(z.shape), (node["shape"], z.shape)
    assert node["chunk_shape"] == list(z.chunks), (node["path"], node["chunk_shape"], z.chunks)
    assert node["shard_shape"] == (list(z.shards) if z.shards else None), (node["shard_shape"], z.shards)
    grid = [math.ceil(s / c) for s, c in zip(z.shape, z.shards or z.chunks)]
    assert node["grid_shape"] == grid and node["chunks_total"] == math.prod(grid)
    # stored chunks, or shards for a sharded array (zarr-python 3.1.6: nchunks_initialized counts the inner
    # chunks of a sharded array; its _nshards_initialized counts stored shards)
    stored = z._nshards_initialized if z.shards else z.nchunks_initialized
    assert node["chunks_stored"] == stored, (node["path"], node["chunks_stored"], stored)
    assert node["attributes"] == dict(z.attrs), (node["attributes"], dict(z.attrs))
    md = z.metadata.to_dict()
    if fmt == 3:
        assert node["data_type"] == md["data_type"], (node["data_type"], md["data_type"])
        codecs = json.loads(json.dumps(md["codecs"], default=str))  # tuples -> lists
        assert node["codecs"] == codecs, (node["codecs"], codecs)
        dn = md.get("dimension_names")
        assert node["dimension_names"] == (list(dn) if dn else None), (node["dimension_names"], dn)
    else:
        assert node["data_type"] == z.dtype.name, (node["data_type"], z.dtype)
        comp = md.get("compressor")
        assert node["compressor"] == (comp.get_config() if hasattr(comp, "get_config") else comp), (node["compressor"], comp)
        filters = md.get("filters")
        if filters is not None:
            filters = [f.get_config() if hasattr(f, "get_config") else f for f in filters]
        assert node["filters"] == filters, (node["filters"], filters)
    assert norm(node["fill_value"]) == norm(z.fill_value), (node["fill_value"], z.fill_value)


def compare_group(node, g, fmt, path=""):
    assert node["node_type"] == "group" and node["path"] == path and node["zarr_format"] == fmt
    assert node["attributes"] == dict(g.attrs), (node["attributes"], dict(g.attrs))
    members = dict(g.members())
    names = [c["path"].rsplit("/", 1)[-1] for c in node["children"]]
    assert names == sorted(members), (names, sorted(members))
    for child in node["children"]:
        m = members[child["path"].rsplit("/", 1)[-1]]
        if isinstance(m, zarr.Group):
            compare_group(child, m, fmt, child["path"])
        else:
            compare_array(child, m, fmt)


def json_small():
    out, _ = run("--json", "small.zarr")
    compare_group(json.loads(out), zarr.open_group(str(HERE / "small.zarr"), mode="r"), 3)


def json_small_v2():
    out, _ = run("--json", "small_v2.zarr")
    compare_group(json.loads(out), zarr.open_group(str(HERE / "small_v2.zarr"), mode="r", zarr_format=2), 2)


def flat(node):
    if node["node_type"] == "array":
        yield node
    else:
        for c in node.get("children", []):
            yield from flat(c)


def json_values():
    root = zarr.open_group(str(HERE / "small.zarr"), mode="r")
    for region, sel in [("0:4,1:5:2", (slice(0, 4), slice(1, 5, 2))), ("3,0:8", (3, slice(0, 8))),
                        (":,:", (slice(None), slice(None))), ("2:,:3", (slice(2, None), slice(0, 3)))]:
        out, _ = run("--json", "-d", region, "small.zarr")
        arrays = {a["path"]: a for a in flat(json.loads(out))}
        for path in ("temperature", "sub/sharded"):
            z = root[path]
            want = np.asarray(z[sel]).ravel().tolist()
            got = arrays[path]["data"]["values"]
            assert [norm(x) for x in got] == [norm(x) for x in want], (path, region, got, want)
        for path in ("counts", "names", "sub/flags"):
            assert arrays[path].get("data") is None, (path, arrays[path].get("data"))
    for path, sel in [("counts", slice(None)), ("names", slice(None)), ("sub/flags", slice(None))]:
        out, _ = run("--json", "-v", path, "small.zarr")
        arrays = {a["path"]: a for a in flat(json.loads(out))}
        assert list(arrays) == [path], list(arrays)
        want = [str(x) if isinstance(x, str) else norm(x) for x in np.asarray(root[path][sel]).ravel().tolist()]
        assert arrays[path]["data"]["values"] == want, (arrays[path]["data"]["values"], want)
    # an array path directly, with a region
    out, _ = run("--json", "-d", "1:9:3", "small.zarr/counts")
    node = json.loads(out)
    assert node["path"] == "" and node["data"] == {"start": [1], "count": [3], "step": [3],
                                                   "values": [int(x) for x in root["counts"][1:9:3]]}, node["data"]
    # v2 values (f8: nothing stored, every value is the fill value)
    out, _ = run("--json", "-d", ":", "small_v2.zarr")
    arrays = {a["path"]: a for a in flat(json.loads(out))}
    assert arrays["f8"]["data"]["values"] == [2.5] * 5


def help_and_errors():
    out, _ = run("--help")
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES", "--json", "-d, --data"):
        assert section in out, section
    out, _ = run("--version")
    assert out.startswith("zarrdump (libzarr ")
    _, err = run("--bogus", expect_rc=2)
    assert "unknown option --bogus" in err
    run(expect_rc=2)
    _, err = run("no-such.zarr", expect_rc=1)
    assert "ZARR_ERR_NOT_FOUND" in err, err
    _, err = run("-d", "0:x", "small.zarr/counts", expect_rc=1)
    assert "malformed" in err, err
    _, err = run("-d", "10", "small.zarr/counts", expect_rc=1)
    assert "outside the shape" in err, err


def main():
    if not ZARRDUMP or not Path(ZARRDUMP).exists():
        print(f"FAIL: set ZARRDUMP to the zarrdump program (got {ZARRDUMP!r})")
        sys.exit(1)
    for fn in (text_small, text_small_v2, text_data, json_small, json_small_v2, json_values, help_and_errors):
        case(fn)
    print(f"{passed} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
