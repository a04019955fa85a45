#!/usr/bin/env python3
"""Generates the fixtures modelled on arrays from other implementations' test data (issue 24, "Peers'
data") that zarr-python reads: bare NaN / Infinity in JSON, numcodecs `bitround` over integers, a v2
`|O` string array whose fill_value is 0.

    python3 tools/make_peer_fixtures.py            # (re)writes these cases into tests/fixtures
    python3 tools/make_peer_fixtures.py --out DIR  # another fixtures directory

Run it after tools/make_fixtures.py (which wipes tests/fixtures): it replaces its own cases (CASES below)
in manifest.json and leaves every other case alone. It also writes tests/fixtures/peers/ (not in the
manifest): groups whose attributes hold the bare tokens, checked by tests/nonfinite_json.rs, with
`expected/peers_attributes.json` holding, for each node, the attributes as Python's json module writes
them compactly (`json.dumps(attrs, separators=(",", ":"), ensure_ascii=False)`), the text libzarr must
return.

The real arrays these stand for (read, not copied): netCDF-C's nczarr_test `ref_quotes_orig.zip`
(`.zattrs` with `"esa_cci_path": NaN`), GDAL's autotest `bitround0.zarr` (`|u1` with bitround keepbits 8
then delta), zarrs' `zarr_python_compat/str_v2_fv_0.zarr` (`|O` vlen-utf8, `"fill_value": 0`, reads as
"0" in zarr-python 2 and 3).

Writers: zarr-python 3.1.6 writes every array and group (it writes attributes with Python's json module,
so NaN / inf become bare tokens). Two cases are then hand-edited, as their notes say: numcodecs cannot
*encode* bitround over integers (it raises TypeError; decoding is the identity), so the filter is added
to a `.zarray` written without it (the chunk bytes are unchanged); zarr-python 3 writes `""` as the fill
of a string array, so `fill_value` is set to 0 in `.zarray`. A v2 `.zarray` with a bare `NaN` fill value
and a v3 `zarr.json` with a bare `-Infinity` fill value are edited the same way (Python's json module
writes them; zarr-python reads them). After writing, every case is read back with zarr-python and
compared with its expected file.
"""
import argparse
import json
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np

try:
    import numcodecs
    import zarr
    from zarr.storage import LocalStore
except ImportError as e:  # pragma: no cover
    sys.exit(f"make_peer_fixtures.py needs zarr-python 3.1.6 and numcodecs: {e}")

ROOT = Path(__file__).resolve().parent.parent
ZP = f"zarr-python {zarr.__version__}"
warnings.filterwarnings("ignore")

CASES = ["v2_attrs_bare_nan", "v2_fill_bare_nan", "v3_fill_bare_neg_infinity", "v2_filter_bitround_u1_delta",
         "v2_filter_bitround_i4", "vlen_v2_utf8_fill_0"]

NONFINITE_ATTRS = {
    "esa_cci_path": float("nan"),
    "_FillValue": float("nan"),
    "valid_range": [float("-inf"), float("inf")],
    "nested": {"missing_value": [1.5, float("nan")], "text": "NaN is text here", "Infinity": -1},
    "big": 12345678901234567890123,
}


def compact(attrs):
    return json.dumps(attrs, separators=(",", ":"), ensure_ascii=False)


class Gen:
    def __init__(self, out: Path):
        self.out = out
        self.cases = []

    def dir(self, zarr_format, name):
        d = self.out / f"v{zarr_format}" / name
        shutil.rmtree(d, ignore_errors=True)
        return d

    def add(self, name, kind, zarr_format, data_type, shape, expected, notes, *, source_dtype=None,
            element_size=None, expected_format=None, readers=None, writer=ZP):
        if expected_format == "json":
            rel = f"expected/{name}.json"
            (self.out / rel).write_text(json.dumps(expected, ensure_ascii=False), encoding="utf-8")
        else:
            rel = f"expected/{name}.bin"
            a = np.ascontiguousarray(expected)
            (self.out / rel).write_bytes(a.astype(a.dtype.newbyteorder("<")).tobytes())
        case = {"name": name, "kind": kind, "path": f"v{zarr_format}/{name}", "zarr_format": zarr_format,
                "writer": writer, "data_type": data_type, "shape": list(shape), "expected": rel,
                "element_size": element_size, "expect_error": None, "notes": notes}
        if expected_format:
            case["expected_format"] = expected_format
        if zarr_format != 3:
            case["source_dtype"] = source_dtype
        case["reference_readers"] = readers or {"zarr-python": "yes"}
        self.cases.append(case)


def edit_json(path: Path, change):
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=2))  # allow_nan (the default): bare NaN / Infinity


def generate(g: Gen):
    # (a) a v2 array whose .zattrs holds bare NaN / Infinity (as netCDF-C's ref_quotes_orig.zip)
    d = g.dir(2, "v2_attrs_bare_nan")
    a = zarr.create_array(store=LocalStore(str(d)), shape=(5, 4), chunks=(2, 3), dtype="<f4", zarr_format=2,
                          fill_value=float("nan"), compressors=numcodecs.Zlib(level=1))
    x = np.arange(20, dtype="<f4").reshape(5, 4) / 4
    a[:4, :] = x[:4, :]
    a.attrs.update(NONFINITE_ATTRS)
    want = x.copy()
    want[4:, :] = np.nan
    assert "NaN" in (d / ".zattrs").read_text()
    g.add("v2_attrs_bare_nan", "v2-metadata", 2, "float32", want.shape, want,
          "`.zattrs` with bare NaN, Infinity and -Infinity (Python's json module, as zarr-python writes "
          "attributes; netCDF-C's ref_quotes_orig.zip has \"esa_cci_path\": NaN); fill \"NaN\"; the last row "
          "of chunks never written", source_dtype="<f4", element_size=4)

    # a v2 .zarray whose fill_value is a bare NaN (json.dumps of float nan), big-endian float64
    d = g.dir(2, "v2_fill_bare_nan")
    a = zarr.create_array(store=LocalStore(str(d)), shape=(7,), chunks=(3,), dtype=">f8", zarr_format=2,
                          fill_value=0.0, compressors=None)
    x = np.array([1.5, -2.25, np.pi], dtype=">f8")
    a[:3] = x
    edit_json(d / ".zarray", lambda m: m.update(fill_value=float("nan")))
    assert '"fill_value": NaN' in (d / ".zarray").read_text()
    want = np.concatenate([x, np.full(4, np.nan)]).astype("<f8")
    g.add("v2_fill_bare_nan", "v2-fill", 2, "float64", (7,), want,
          "hand-edited: zarr-python 3.1.6 wrote the array with fill 0.0, then `\"fill_value\": NaN` (a bare "
          "token, as json.dumps writes float nan) replaced it in .zarray; chunks 1 and 2 never written",
          source_dtype=">f8", element_size=8)

    # a v3 zarr.json whose fill_value is a bare -Infinity
    d = g.dir(3, "v3_fill_bare_neg_infinity")
    a = zarr.create_array(store=LocalStore(str(d)), shape=(4, 4), chunks=(2, 2), dtype="float32",
                          fill_value=0.0, attributes={"scale": float("inf")})
    x = np.arange(4, dtype="float32").reshape(2, 2) - 1.5
    a[:2, :2] = x
    edit_json(d / "zarr.json", lambda m: m.update(fill_value=float("-inf")))
    assert '"fill_value": -Infinity' in (d / "zarr.json").read_text()
    want = np.full((4, 4), -np.inf, dtype="float32")
    want[:2, :2] = x
    g.add("v3_fill_bare_neg_infinity", "v3-fill", 3, "float32", (4, 4), want,
          "hand-edited: zarr-python 3.1.6 wrote the array (attribute \"scale\": Infinity) with fill 0.0, then "
          "`\"fill_value\": -Infinity` (a bare token) replaced it in zarr.json; 3 of 4 chunks never written",
          element_size=4)

    # (b) numcodecs bitround over integers (as GDAL's bitround0.zarr: |u1, keepbits 8, then delta)
    d = g.dir(2, "v2_filter_bitround_u1_delta")
    rng = np.random.default_rng(24)
    x = rng.integers(0, 256, (9, 7), dtype=np.uint8)
    a = zarr.create_array(store=LocalStore(str(d)), shape=x.shape, chunks=(4, 4), dtype="|u1", zarr_format=2,
                          fill_value=None, filters=[numcodecs.Delta(dtype="u1")], compressors=numcodecs.Zlib(level=1))
    a[...] = x
    edit_json(d / ".zarray", lambda m: m.update(filters=[{"id": "bitround", "keepbits": 8},
                                                         {"id": "delta", "dtype": "u1"}]))
    g.add("v2_filter_bitround_u1_delta", "v2-filter", 2, "uint8", x.shape, x,
          "hand-edited: zarr-python 3.1.6 wrote |u1 with filters [delta] + zlib, then numcodecs bitround "
          "(keepbits 8) was put first in `filters` (numcodecs cannot encode bitround over integers; its decode "
          "is the identity, so the chunks stay valid) and delta's dtype written \"u1\" (numpy's native order, no "
          "byte-order character), both as in GDAL's bitround0.zarr", source_dtype="|u1", element_size=1)

    d = g.dir(2, "v2_filter_bitround_i4")
    x = rng.integers(-2**31, 2**31, (10,), dtype=np.int64).astype("<i4")
    a = zarr.create_array(store=LocalStore(str(d)), shape=x.shape, chunks=(4,), dtype="<i4", zarr_format=2,
                          fill_value=-7, compressors=None)
    a[:8] = x[:8]
    edit_json(d / ".zarray", lambda m: m.update(filters=[{"id": "bitround", "keepbits": 3}]))
    want = x.copy()
    want[8:] = -7
    g.add("v2_filter_bitround_i4", "v2-filter", 2, "int32", x.shape, want,
          "hand-edited: zarr-python 3.1.6 wrote <i4 without filters, then filters [bitround keepbits 3] were "
          "set (decode is the identity whatever keepbits, so the stored integers read unchanged); chunk 2 "
          "never written (fill -7)", source_dtype="<i4", element_size=4)

    # (c) a v2 |O string array with fill_value 0 (as zarrs' str_v2_fv_0.zarr): missing elements read "0"
    d = g.dir(2, "vlen_v2_utf8_fill_0")
    a = zarr.create_array(store=LocalStore(str(d)), shape=(7,), chunks=(2,), dtype=str, zarr_format=2,
                          compressors=None)
    vals = np.array(["a", "bb", "", "é0"], dtype=object)
    a[:4] = vals
    edit_json(d / ".zarray", lambda m: m.update(fill_value=0))
    want = ["a", "bb", "", "é0", "0", "0", "0"]
    g.add("vlen_v2_utf8_fill_0", "v2-vlen", 2, "string", (7,), want,
          "hand-edited: zarr-python 3.1.6 wrote |O + vlen-utf8 (fill \"\"), then `\"fill_value\": 0` (zarr-python "
          "2's default for object arrays) replaced it; chunks 2 and 3 never written: zarr-python 2 and 3 read "
          "them as \"0\" (zarrs' str_v2_fv_0.zarr)", source_dtype="|O", expected_format="json")


def peers_groups(out: Path):
    """Groups and arrays with non-finite attributes in v3 and v2 (with consolidated metadata)."""
    root = out / "peers"
    shutil.rmtree(root, ignore_errors=True)
    expected = {}
    for fmt in (3, 2):
        p = root / f"nonfinite_v{fmt}"
        g = zarr.open_group(store=LocalStore(str(p)), mode="w", zarr_format=fmt)
        g.attrs.update(NONFINITE_ATTRS)
        sub = g.create_group("sub", attributes={"inf": float("inf"), "list": [float("nan"), None, 0.1]})
        a = sub.create_array("temp", shape=(3,), chunks=(3,), dtype="float64", fill_value=float("nan"),
                             attributes={"_FillValue": float("nan"), "missing_value": float("-inf")})
        a[:2] = [1.0, 2.0]
        zarr.consolidate_metadata(LocalStore(str(p)))
        for node in ("", "sub", "sub/temp"):
            obj = zarr.open(store=LocalStore(str(p)), path=node, mode="r", zarr_format=fmt, use_consolidated=False)
            expected[f"peers/nonfinite_v{fmt}" + (f"/{node}" if node else "")] = compact(dict(obj.attrs))
    (out / "expected" / "peers_attributes.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")
    # the stored files hold bare tokens, as Python's json module writes them
    assert "NaN" in (root / "nonfinite_v2" / ".zmetadata").read_text()
    assert '"esa_cci_path": NaN' in (root / "nonfinite_v3" / "zarr.json").read_text()
    return expected


def verify(g: Gen):
    """Reads every case back with zarr-python and compares with its expected file."""
    for c in g.cases:
        a = zarr.open_array(store=LocalStore(str(g.out / c["path"])), mode="r")
        got = a[...]
        if c.get("expected_format") == "json":
            want = json.loads((g.out / c["expected"]).read_text(encoding="utf-8"))
            if [str(v) for v in np.asarray(got, dtype=object).reshape(-1)] != want:
                raise SystemExit(f"{c['name']}: zarr-python reads {got}, expected {want}")
        else:
            want = np.frombuffer((g.out / c["expected"]).read_bytes(), dtype=np.asarray(got).dtype.newbyteorder("<"))
            if np.asarray(got).reshape(-1).astype(want.dtype).tobytes() != want.tobytes():
                raise SystemExit(f"{c['name']}: zarr-python reads {got}, expected {want}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures")
    args = ap.parse_args()
    (args.out / "expected").mkdir(parents=True, exist_ok=True)
    g = Gen(args.out)
    generate(g)
    verify(g)
    groups = peers_groups(args.out)
    mpath = args.out / "manifest.json"
    m = json.loads(mpath.read_text()) if mpath.exists() else {"corpus_set": "libzarr-fixtures", "format_version": 1,
                                                             "cases": [], "groups": []}
    m["cases"] = [c for c in m["cases"] if c["name"] not in CASES] + g.cases
    mpath.write_text(json.dumps(m, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(g.cases)} peer cases and {len(groups)} nodes with non-finite attributes written to {args.out}")


if __name__ == "__main__":
    main()
