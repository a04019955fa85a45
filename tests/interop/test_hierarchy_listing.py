#!/usr/bin/env python3
"""Interop, hierarchy listing: zarr-python 3.1.6 and 3.4.2 list hierarchies libzarr wrote (groups whose
attributes libzarr updated, consolidated or not; arrays written, resized and given attributes) with
warnings turned into errors, and see exactly the nodes libzarr created: no extra member (such as a lock
file) and no "Object at ... is not recognized" warning.

    python3 tests/interop/test_hierarchy_listing.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (zarr-python or numpy not importable).
The library is $ZARR_LIB, else target/release/libzarr.so of this repository. zarr-python 3.4.2 runs in
$ZARR_PYTHON312 (CMakeLists.txt sets it; .ci/run creates it); when that interpreter is missing its half
is skipped with a message, except under CI=true, where that is a failure.

Each listing runs in a child interpreter (`python -W error -c ...`): zarr.open_group(...).members(
max_depth=None) without and with consolidated metadata, v3 and v2. The test also checks that it can fail:
a stray file in a group's directory (what libzarr's group lock file used to be) makes the listing fail.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))

try:
    import numpy as np
    import zarr  # noqa: F401
except ImportError as e:
    print(f"SKIP: zarr-python / numpy not importable ({e})")
    sys.exit(77)

import harness  # noqa: E402  (tests/interop/harness.py)
import zarr_ctypes as zc  # noqa: E402

LIST = r"""
import json, sys, warnings
warnings.simplefilter("error")
import zarr
path, fmt, consolidated = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
g = zarr.open_group(path, mode="r", zarr_format=fmt, use_consolidated=consolidated)
out = {name: ("group" if isinstance(node, zarr.Group) else "array") for name, node in g.members(max_depth=None)}
print(json.dumps({"version": zarr.__version__, "members": out, "attrs": dict(g.attrs)}))
"""


def interpreters():
    """(label, python) for zarr-python 3.1.6 (this interpreter) and 3.4.2 ($ZARR_PYTHON312)."""
    out = [("3.1.6", sys.executable)]
    other = os.environ.get("ZARR_PYTHON312", "")
    if other and Path(other).exists():
        out.append(("3.4.2", other))
    elif os.environ.get("CI", "").lower() == "true":
        print(f"FAIL: zarr-python 3.4.2 missing ($ZARR_PYTHON312={other!r}); CI=true: .ci/run must create it")
        sys.exit(1)
    else:
        print(f"SKIPPED (half): zarr-python 3.4.2 is not installed ($ZARR_PYTHON312={other!r})")
    return out


def listing(python, path, fmt, consolidated):
    p = subprocess.run([python, "-W", "error", "-c", LIST, str(path), str(fmt), "1" if consolidated else "0"],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"zarr-python listing failed: {p.stderr.strip().splitlines()[-1:]}")
    return json.loads(p.stdout)


def write_hierarchy(path, fmt):
    """libzarr writes a hierarchy and updates attributes and shapes; returns the expected members."""
    with zc.Group.create(path, '{"title": "root"}', zarr_format=fmt) as root:
        for i in range(3):
            root.set_attributes(json.dumps({"title": "root", "round": i}))
        with root.create_group("sub") as sub:
            sub.set_attributes('{"level": 1}')
            with zc.Spec("int32", [10, 6], chunks=[4, 4], zarr_format=fmt) as spec, spec.create_in(sub, "a") as a:
                a.write(np.arange(60, dtype="<i4").reshape(10, 6).tobytes())
                a.resize([14, 6])
                a.set_attributes('{"units": "m"}')
                a.resize([12, 6])
            with sub.create_group("deep") as deep:
                deep.set_attributes('{"level": 2}')
                with zc.Spec("float32", [5], chunks=[2], zarr_format=fmt) as spec, spec.create_in(deep, "b") as b:
                    b.write(np.ones(5, dtype="<f4").tobytes())
        with root.create_group("empty") as empty:
            empty.set_attributes('{}')
    return {"sub": "group", "sub/a": "array", "sub/deep": "group", "sub/deep/b": "array", "empty": "group"}


def check_lists(r, fmt, pythons):
    p = r.path(f"v{fmt}")
    want = write_hierarchy(p, fmt)
    for consolidated in (False, True):
        if consolidated:
            with zc.Group.open(p, zc.READ_WRITE) as root:
                root.consolidate()
                root.set_attributes('{"title": "root", "round": 3}')
        for label, python in pythons:
            got = listing(python, p, fmt, consolidated)
            assert got["members"] == want, f"zarr-python {label} (consolidated={consolidated}): {got['members']}"
            assert got["attrs"]["title"] == "root", got["attrs"]
    # no entry in any group directory but its metadata and its children
    meta = {"zarr.json"} if fmt == 3 else {".zgroup", ".zattrs", ".zmetadata"}
    for group, children in [("", {"sub", "empty"}), ("sub", {"a", "deep"}), ("sub/deep", {"b"}), ("empty", set())]:
        names = {x.name for x in (p / group).iterdir()}
        assert names - meta == children, f"v{fmt} {group or '/'}: {sorted(names - meta - children)}"


def check_can_fail(r, fmt, pythons):
    """A stray file in a group's directory is what zarr-python warns about: the listing must fail."""
    p = r.path(f"stray_v{fmt}")
    write_hierarchy(p, fmt)
    (p / "sub" / ".zarr.lock").write_bytes(b"")
    for label, python in pythons:
        try:
            listing(python, p, fmt, False)
        except AssertionError as e:
            assert "not recognized" in str(e), f"zarr-python {label}: {e}"
            continue
        raise AssertionError(f"zarr-python {label} listed a group holding a stray file without a warning")


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    pythons = interpreters()
    tmp = Path(tempfile.mkdtemp(prefix="zarr-listing-", dir=os.environ.get("ZARR_TEST_TMPDIR")))
    r = harness.Runner(tmp, args.verbose, args.k)
    try:
        for fmt in (3, 2):
            r.run(f"v{fmt} libzarr hierarchy listed by zarr-python {', '.join(v for v, _ in pythons)}",
                  check_lists, r, fmt, pythons)
            r.run(f"v{fmt} a stray file in a group is reported (the test can fail)", check_can_fail, r, fmt, pythons)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{r.passed} passed, {len(r.failed)} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
