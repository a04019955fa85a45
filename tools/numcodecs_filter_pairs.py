#!/usr/bin/env python3
"""Writes the vectors of tests/numcodecs_filter_pairs.rs: v2 arrays whose `filters` are an ordered
pair of the numcodecs filters libzarr supports, written and read back by zarr-python itself.

For every ordered pair (A, B) of delta, fixedscaleoffset, quantize, bitround, astype, packbits,
shuffle and categorize (A = B included), every array dtype in DTYPES and both ways of typing B
(B's dtype is the array's dtype, or the dtype A produces: numcodecs views whatever bytes a filter
receives as the filter's own dtype, so both are valid chains), zarr-python creates the array (one
chunk, no compressor), writes values to it and reads them back. A combination zarr-python refuses
at any step (numcodecs raises: bitround after a filter producing integers, categorize of numbers,
a buffer that is not a whole number of elements) is left out; every other one is a vector:
the `.zarray` zarr-python wrote, the values written (`raw`), the stored chunk (`chunk`), and the
values zarr-python reads back (`read`: lossy filters change them), each as hex, C order, the
array's byte order.

Usage: python3 tools/numcodecs_filter_pairs.py [out_file]
  (default tests/vectors/numcodecs_filter_pairs.json; needs zarr 3.1.6, numcodecs, numpy: the
  versions of tools/requirements-ci.txt)
"""

import json
import os
import sys
import tempfile
import warnings

import numcodecs
import numpy as np
import zarr
from zarr.storage import LocalStore

warnings.simplefilter("ignore")

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "tests", "vectors", "numcodecs_filter_pairs.json")
FILTERS = ["delta", "fixedscaleoffset", "quantize", "bitround", "astype", "packbits", "shuffle", "categorize"]
DTYPES = ["<i2", ">i4", "|u1", "<f4", ">f8", "|b1", "<U3"]
N = 12


def produces(f, received):
    """The dtype numcodecs' encode of filter config `f` returns when given `received`."""
    i = f["id"]
    if i in ("delta", "fixedscaleoffset", "quantize"):
        return np.dtype(f["astype"])
    if i == "astype":
        return np.dtype(f["encode_dtype"])
    if i == "categorize":
        return np.dtype(f["astype"])
    if i in ("packbits", "shuffle"):
        return np.dtype("|u1")
    return received  # bitround keeps what it receives


def config(i, t, array):
    """A configuration of filter `i` typed as `t` (the dtype it views its input as); `array`: the
    array's dtype (for categorize's labels)."""
    if i == "delta":
        return {"id": "delta", "dtype": t.str, "astype": t.str}
    if i == "fixedscaleoffset":
        if t.kind == "f":
            return {"id": "fixedscaleoffset", "offset": 1.5, "scale": 10, "dtype": t.str, "astype": "<i4"}
        return {"id": "fixedscaleoffset", "offset": 3, "scale": 2, "dtype": t.str, "astype": t.str}
    if i == "quantize":
        return {"id": "quantize", "digits": 2, "dtype": t.str, "astype": t.str}
    if i == "bitround":
        return {"id": "bitround", "keepbits": 6}
    if i == "astype":
        wider = {"f": "<f8", "i": "<i8", "u": "<u8", "b": "|u1"}.get(t.kind, "<i8")
        return {"id": "astype", "encode_dtype": wider, "decode_dtype": t.str}
    if i == "packbits":
        return {"id": "packbits"}
    if i == "shuffle":
        return {"id": "shuffle", "elementsize": max(t.itemsize, 2)}
    if i == "categorize":
        return {"id": "categorize", "labels": ["ab", "c", "xyz"], "dtype": t.str if t.kind == "U" else "<U3",
                "astype": "|u1"}
    raise ValueError(i)


def values(dtype, rng):
    t = np.dtype(dtype)
    if t.kind == "b":
        return rng.integers(0, 2, N).astype(t)
    if t.kind == "U":
        return np.array(["ab", "c", "xyz", "", "ab", "q", "xyz", "c", "c", "zz", "ab", ""], dtype=t)
    if t.kind == "f":
        return (rng.normal(0, 50, N)).astype(t)
    if t.kind == "u":
        return rng.integers(0, 200, N).astype(t)
    return rng.integers(-500, 500, N).astype(t)


def attempt(root, name, dtype, filters, x):
    """zarr-python writes `x` through `filters` and reads it back; None if it refuses."""
    store = LocalStore(root)
    try:
        codecs = [numcodecs.get_codec(dict(f)) for f in filters]
        a = zarr.create_array(store=store, name=name, shape=(N,), chunks=(N,), dtype=dtype, zarr_format=2,
                              filters=codecs, compressors=None, fill_value=None)
        a[:] = x
        back = zarr.open_array(store=store, path=name)[:]
    except Exception as e:  # noqa: BLE001 - numcodecs or zarr refuses: not a valid chain for this dtype
        return None, f"{type(e).__name__}: {e}"
    d = os.path.join(root, name)
    files = sorted(os.listdir(d))
    if "0" not in files:
        return None, f"no chunk stored ({files})"
    with open(os.path.join(d, ".zarray")) as f:
        zarray = json.load(f)
    with open(os.path.join(d, "0"), "rb") as f:
        chunk = f.read()
    return {"zarray": zarray, "raw": np.asarray(x).tobytes().hex(), "chunk": chunk.hex(),
            "read": np.ascontiguousarray(back).astype(np.dtype(dtype)).tobytes().hex()}, None


def main():
    rng = np.random.default_rng(20261129)
    root = tempfile.mkdtemp(prefix="filter-pairs-")
    vectors, refused, seen = [], {}, set()
    for a in FILTERS:
        for b in FILTERS:
            for dtype in DTYPES:
                t = np.dtype(dtype)
                fa = config(a, t, t)
                out = produces(fa, t)
                for typing, tb in [("array", t), ("received", out)]:
                    fb = config(b, tb, t)
                    key = json.dumps([dtype, fa, fb], sort_keys=True)
                    if key in seen:
                        continue
                    seen.add(key)
                    name = f"{a}_{b}_{dtype[1:]}{'_be' if dtype[0] == '>' else ''}_{typing}"
                    x = values(dtype, rng)
                    v, why = attempt(root, name, dtype, [fa, fb], x)
                    if v is None:
                        refused.setdefault(f"{a},{b}", []).append(f"{dtype} ({typing}): {why[:120]}")
                        continue
                    v["name"] = name
                    v["pair"] = [a, b]
                    vectors.append(v)
    pairs = sorted({tuple(v["pair"]) for v in vectors})
    head = {"generator": "tools/numcodecs_filter_pairs.py", "zarr": zarr.__version__,
            "numcodecs": numcodecs.__version__, "numpy": np.__version__,
            "pairs_valid": len(pairs), "pairs_refused_for_every_dtype": sorted(
                p for p in refused if tuple(p.split(",")) not in pairs)}
    with open(OUT, "w") as f:
        f.write(json.dumps(head)[:-1] + ', "vectors": [\n')
        f.write(",\n".join(json.dumps(v, separators=(",", ":"), sort_keys=True) for v in vectors))
        f.write("\n]}\n")
    print(f"{len(vectors)} vectors over {len(pairs)} ordered pairs, {os.path.getsize(OUT)} bytes in {OUT}")
    print("pairs zarr-python refuses for every dtype:", head["pairs_refused_for_every_dtype"])
    if os.environ.get("WHY"):
        for p in head["pairs_refused_for_every_dtype"]:
            print(p, refused[p][:4])


if __name__ == "__main__":
    main()
