#!/usr/bin/env python3
"""Checks libzarr (through its C ABI) against a corpus directory with a manifest.json.

The corpus format is that of ../shared/corpus (see its README); the project's own fixtures in
tests/fixtures use the same format. Each case must read byte-exact, or fail with the status that
matches its `expect_error` class. Cases of the kinds given with --unsupported must be refused with
ZARR_ERR_UNSUPPORTED (features outside the library's scope, e.g. extension codecs).

Exit status 0 when every selected case passes.
"""
import argparse
import base64
import collections
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zarr_ctypes as zc  # noqa: E402

ERROR_STATUS = {
    "invalid_metadata": {"ZARR_ERR_METADATA"},
    "unsupported": {"ZARR_ERR_UNSUPPORTED"},
    "checksum": {"ZARR_ERR_CHECKSUM"},
    "codec": {"ZARR_ERR_CODEC"},
    "invalid_data": {"ZARR_ERR_CODEC"},
    "value": {"ZARR_ERR_VALUE"},
}


def uses_sharding(case_dir: Path) -> bool:
    meta = case_dir / "zarr.json"
    return meta.exists() and "sharding_indexed" in meta.read_text(errors="replace")


def check_case(root: Path, case: dict, unsupported: set) -> tuple:
    """Returns (verdict, detail): verdict is 'pass' or 'fail'."""
    path = root / case["path"]
    want_err = case.get("expect_error")
    # "dtype:NAME" marks a Zarr v3 extension data type (e.g. v3 "struct"); v1/v2 structured dtypes are core.
    refuse = case["kind"] in unsupported or (case["zarr_format"] == 3 and f"dtype:{case.get('data_type')}" in unsupported)
    try:
        arr = zc.Array.open(path)
    except zc.ZarrError as e:
        if refuse:
            ok = e.name == "ZARR_ERR_UNSUPPORTED"
            return ("pass" if ok else "fail", f"refused at open with {e.name}: {e.message}")
        if want_err and e.name in ERROR_STATUS.get(want_err, set()):
            return ("pass", f"open failed as expected: {e.name}: {e.message}")
        return ("fail", f"open failed: {e}")
    with arr:
        if refuse:
            return ("fail", "opened a case that should be refused as unsupported")
        if case.get("expected_format") == "json":
            return check_vlen_case(root, case, arr, want_err)
        try:
            data = arr.read()
        except zc.ZarrError as e:
            if want_err and e.name in ERROR_STATUS.get(want_err, set()):
                return ("pass", f"read failed as expected: {e.name}: {e.message}")
            return ("fail", f"read failed: {e}")
        if want_err:
            return ("fail", f"read succeeded, expected a {want_err} error")
        if list(arr.shape) != list(case["shape"]):
            return ("fail", f"shape {arr.shape} != {case['shape']}")
        if case.get("element_size") is not None and arr.dtype[1] != case["element_size"]:
            return ("fail", f"element size {arr.dtype[1]} != {case['element_size']}")
        expected = (root / case["expected"]).read_bytes()
        if data != expected:
            diff = next((i for i, (a, b) in enumerate(zip(data, expected)) if a != b), min(len(data), len(expected)))
            return ("fail", f"bytes differ (got {len(data)} bytes, expected {len(expected)}; first difference at byte {diff})")
        return ("pass", f"{len(data)} bytes identical")


def check_vlen_case(root: Path, case: dict, arr, want_err) -> tuple:
    """A variable-length case (expected_format "json"): read through zarr_read_region_vlen and compared
    with the JSON list of flattened values (strings, or base64 for bytes)."""
    try:
        values = arr.read_vlen()
    except zc.ZarrError as e:
        if want_err and e.name in ERROR_STATUS.get(want_err, set()):
            return ("pass", f"read failed as expected: {e.name}: {e.message}")
        return ("fail", f"read failed: {e}")
    if want_err:
        return ("fail", f"read succeeded, expected a {want_err} error")
    if list(arr.shape) != list(case["shape"]):
        return ("fail", f"shape {arr.shape} != {case['shape']}")
    expected = json.loads((root / case["expected"]).read_text(encoding="utf-8"))
    if arr.dtype[0] != "string":
        expected = [base64.b64decode(v) for v in expected]
    if len(values) != len(expected):
        return ("fail", f"{len(values)} elements, expected {len(expected)}")
    diff = [i for i, (a, b) in enumerate(zip(values, expected)) if a != b]
    if diff:
        i = diff[0]
        return ("fail", f"{len(diff)} elements differ; first at {i}: {values[i]!r:.80} != {expected[i]!r:.80}")
    return ("pass", f"{len(values)} variable-length elements identical")


def check_group(root: Path, g: dict) -> tuple:
    try:
        with zc.Group.open(root / g["path"]) as grp:
            attrs = json.loads(grp.attributes)
            children = grp.children()
    except zc.ZarrError as e:
        return ("fail", str(e))
    if attrs != g["attributes"]:
        return ("fail", f"attributes {attrs} != {g['attributes']}")
    if children != g["children"]:
        return ("fail", f"children {children} != {g['children']}")
    return ("pass", f"{len(children)} children, attributes equal")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--formats", default="1,2,3", help="zarr formats to check (comma list)")
    ap.add_argument("--no-sharding", action="store_true", help="skip v3 cases whose metadata uses sharding_indexed")
    ap.add_argument("--unsupported", default="", help="kinds (or dtype:NAME for v3 data types) that must be refused as unsupported")
    ap.add_argument("--only", default="", help="check only cases of these kinds (comma list), and no groups")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    manifest = json.loads((args.corpus / "manifest.json").read_text())
    formats = {int(f) for f in args.formats.split(",") if f}
    unsupported = {k for k in args.unsupported.split(",") if k}
    only = {k for k in args.only.split(",") if k}
    tally = collections.defaultdict(lambda: [0, 0])
    failures = []
    skipped = 0
    for case in manifest["cases"]:
        if only and case["kind"] not in only:
            skipped += 1
            continue
        if case["zarr_format"] not in formats or (args.no_sharding and uses_sharding(args.corpus / case["path"])):
            skipped += 1
            continue
        verdict, detail = check_case(args.corpus, case, unsupported)
        tally[case["kind"]][0 if verdict == "pass" else 1] += 1
        if verdict != "pass":
            failures.append((case["name"], detail))
        if args.verbose or verdict != "pass":
            print(f"{verdict.upper():4} {case['name']}: {detail}")
    for g in manifest.get("groups", []):
        if g["zarr_format"] not in formats or only:
            continue
        verdict, detail = check_group(args.corpus, g)
        tally["groups"][0 if verdict == "pass" else 1] += 1
        if verdict != "pass":
            failures.append((g["path"], detail))
        if args.verbose or verdict != "pass":
            print(f"{verdict.upper():4} group {g['path']}: {detail}")
    print(f"\n{'kind':24} pass fail")
    for kind in sorted(tally):
        p, f = tally[kind]
        print(f"{kind:24} {p:4} {f:4}")
    total_pass = sum(v[0] for v in tally.values())
    print(f"{'total':24} {total_pass:4} {len(failures):4}   (skipped {skipped})")
    missing = collections.Counter(m.group(2) for _, detail in failures
                                  for m in [re.search(r"unsupported v2 (compressor|filter) '([^']+)'", detail)] if m)
    if missing:
        print(f"note: {sum(missing.values())} of the failures are numcodecs codecs this build refuses as unsupported: "
              + ", ".join(f"{k} {v}" for k, v in sorted(missing.items())))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
