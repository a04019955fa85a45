#!/usr/bin/env python3
"""Interop, non-finite numbers in JSON: the bare tokens NaN, Infinity and -Infinity that Python's json
module (and so zarr-python) writes in attributes, read and written by libzarr through its C ABI.

    python3 tests/interop/test_nonfinite_json.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (zarr-python or numpy not importable).
The library is $ZARR_LIB, else target/release/libzarr.so of this repository.

Covered:
  * zarr-python 3.1.6 writes v3 and v2 groups and arrays whose attributes hold NaN, Infinity and
    -Infinity (and a NaN fill value), then consolidates them: libzarr opens every node (directly and
    through the consolidated metadata) and zarr_group_attributes / zarr_array_attributes return
    exactly the text Python's json module writes for them (compact), bare tokens included; the array
    reads, NaN where nothing was written.
  * libzarr writes such attributes (zarr_group_create_ex, zarr_group_set_attributes,
    zarr_array_set_attributes, zarr_array_spec_set_attributes, then zarr_group_consolidate): the files
    hold bare tokens, and zarr-python reads them back as float nan / inf (directly and consolidated).
  * a misspelt token (nan, -NaN, Infinityx) is refused with ZARR_ERR_INVALID_ARGUMENT when given as
    attributes and ZARR_ERR_METADATA when stored; nothing is written.
"""
import json
import math
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

NAN, INF = float("nan"), float("inf")
ATTRS = {"_FillValue": NAN, "valid_range": [-INF, INF], "nested": {"m": [1.5, NAN], "s": "NaN"}, "n": 3}
ATTRS_TEXT = '{"_FillValue": NaN, "valid_range": [-Infinity, Infinity], "nested": {"m": [1.5, NaN], "s": "NaN"}, "n": 3}'


def compact(attrs):
    return json.dumps(attrs, separators=(",", ":"), ensure_ascii=False)


def same(a, b):
    """Equality of JSON values where NaN equals NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def check_python_written(r, fmt):
    p = r.path(f"py_v{fmt}")
    g = zarr.open_group(str(p), mode="w", zarr_format=fmt, attributes=ATTRS)
    s = g.create_group("s", attributes={"inf": INF})
    a = s.create_array("a", shape=(4,), chunks=(2,), dtype="f4", fill_value=NAN,
                       attributes={"missing_value": -INF})
    a[:2] = [1, 2]
    zarr.consolidate_metadata(str(p))
    text = (p / ("zarr.json" if fmt == 3 else ".zattrs")).read_text()
    assert "NaN" in text and "-Infinity" in text, text
    for consolidated in (True, False):
        if not consolidated:
            # drop the consolidated metadata (Python's json module rewrites the tokens bare)
            if fmt == 3:
                doc = json.loads((p / "zarr.json").read_text())
                doc.pop("consolidated_metadata")
                (p / "zarr.json").write_text(json.dumps(doc))
                assert "NaN" in (p / "zarr.json").read_text()
            else:
                (p / ".zmetadata").unlink()
        with zc.Group.open(p) as root:
            assert root.attributes == compact(ATTRS), (consolidated, root.attributes)
            with root.open_group("s") as sg:
                assert sg.attributes == '{"inf":Infinity}', sg.attributes
            with root.open_array("s/a") as arr:
                assert arr.attributes == '{"missing_value":-Infinity}', arr.attributes
                v = np.frombuffer(bytes(arr.read()), dtype="<f4")
                assert v[:2].tolist() == [1, 2] and np.isnan(v[2:]).all(), v


def check_libzarr_written(r, fmt):
    p = r.path(f"lz_v{fmt}")
    with zc.Group.create(p, ATTRS_TEXT, zarr_format=fmt) as root:
        with root.create_group("s") as s:
            s.set_attributes('{"inf": Infinity, "ninf": -Infinity}')
        with zc.Spec("float64", [3], chunks=[3], attributes='{"_FillValue": NaN}', zarr_format=fmt) as spec:
            with spec.create_in(root, "a") as a:
                a.set_attributes('{"_FillValue": NaN, "scale": [Infinity]}')
        root.consolidate()
    stored = (p / ("s/zarr.json" if fmt == 3 else "s/.zattrs")).read_text()
    assert '"inf": Infinity' in stored and '"ninf": -Infinity' in stored, stored
    for consolidated in (False, True):
        g = zarr.open_consolidated(str(p), zarr_format=fmt) if consolidated else zarr.open_group(str(p), mode="r", zarr_format=fmt, use_consolidated=False)
        assert same(dict(g.attrs), ATTRS), dict(g.attrs)
        assert dict(g["s"].attrs) == {"inf": INF, "ninf": -INF}, dict(g["s"].attrs)
        at = dict(g["a"].attrs)
        assert math.isnan(at["_FillValue"]) and at["scale"] == [INF], at


def check_refused(r, fmt):
    p = r.path(f"bad_v{fmt}")
    with zc.Group.create(p, "{}", zarr_format=fmt) as g:
        before = sorted(x.name for x in p.iterdir())
        for bad in ['{"a": nan}', '{"a": -NaN}', '{"a": Infinityx}', '{"a": NaN']:
            try:
                g.set_attributes(bad)
                raise AssertionError(f"{bad} accepted")
            except zc.ZarrError as e:
                assert e.name == "ZARR_ERR_INVALID_ARGUMENT", e
        assert g.attributes == "{}"
    assert sorted(x.name for x in p.iterdir()) == before
    (p / ("zarr.json" if fmt == 3 else ".zattrs")).write_text(
        '{"zarr_format": 3, "node_type": "group", "attributes": {"a": nan}}' if fmt == 3 else '{"a": nan}')
    try:
        zc.Group.open(p).close()
        raise AssertionError("a misspelt token was read")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_METADATA" and "invalid JSON" in e.message, e


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    tmp = Path(tempfile.mkdtemp(prefix="zarr-nonfinite-", dir=os.environ.get("ZARR_TEST_TMPDIR")))
    r = harness.Runner(tmp, args.verbose, args.k)
    try:
        for fmt in (3, 2):
            r.run(f"zarr-python v{fmt} non-finite attributes, read by libzarr", check_python_written, r, fmt)
            r.run(f"libzarr v{fmt} non-finite attributes, read by zarr-python", check_libzarr_written, r, fmt)
            r.run(f"v{fmt} misspelt tokens refused", check_refused, r, fmt)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{r.passed} passed, {len(r.failed)} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
