#!/usr/bin/env python3
"""Writes the reference for libzarr's memory-type conversion (src/selection/convert.rs), made by numpy.

For every source type S and target type D of bool, int8..int64, uint8..uint64, float16, float32,
float64 (144 pairs, the identity ones included), a list of values of S (edges of every type's range,
rounding boundaries of every float type, NaN, infinities, signed zeros, random values) and what each
becomes in D under the rule of convert.rs (netCDF's and C's), computed here independently:

- into a float type: numpy's `astype` (C's cast: integers and floats rounded to nearest, ties to even);
  a finite value that numpy turns into an infinity is out of range (an error in libzarr);
- into an integer type: the value truncated toward zero (Python's exact integers), an error when NaN,
  infinite or outside the target's range (numpy's astype wraps or is undefined there: that is the
  documented exception);
- into bool: as an integer type holding 0 and 1 (so 0.5 becomes false and 2 is an error, where numpy's
  astype(bool) would give true: the second documented exception).

Files (in tests/vectors/convert): `data.bin`, the concatenated little-endian arrays, and `index.json`:
`sources` (per type name: offset and count of its values in data.bin) and `pairs` (from, to, offset of
the expected target elements in data.bin, and `errors`: the indices of the values that do not convert;
their target bytes are zero).

Usage: python3 tools/convert_vectors.py [out_dir]   (default: tests/vectors/convert)
The Rust test `selection::convert::tests::every_pair_matches_numpy` checks libzarr against these files.
"""

import json
import math
import os
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")  # casts of NaN/inf and overflows: computed on purpose

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "vectors", "convert")
TYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64"]
rng = np.random.default_rng(20261126)


def np_type(name):
    return np.dtype(name).newbyteorder("<")


def is_float(name):
    return name.startswith("float")


def int_range(name):
    if name == "bool":
        return 0, 1
    i = np.iinfo(name)
    return int(i.min), int(i.max)


def int_values(name):
    """Integers of the type's range: all of them for 8-bit types, else every type's edges, float rounding boundaries, random ones."""
    lo, hi = int_range(name)
    if hi - lo < 256:
        return list(range(lo, hi + 1))
    cand = {0, 1, -1, 2, 3, -2, 100, -100}
    for t in TYPES[1:9]:
        a, b = int_range(t)
        cand |= {a, b, a - 1, b + 1, a + 1, b - 1}
    for k in (11, 12, 24, 25, 53, 54, 63, 64):  # float16/32/64 significands: the first inexact integers
        for s in (1, -1):
            cand |= {s * (2**k + d) for d in (-1, 0, 1, 2, 3)}
    cand |= {65504, 65505, 65519, 65520, 65535, -65504, -65519, -65520,
             2**63 - 512, 2**63 - 513, 2**63 - 1024, 2**64 - 1024, 2**64 - 1025, 2**24 + 5, 16777219}
    for _ in range(40):
        bits = int(rng.integers(1, 65))
        v = int(rng.integers(0, 2**63)) >> (64 - bits)
        cand |= {v, -v}
    return sorted(v for v in cand if lo <= v <= hi)


def float_values(name):
    """Values of a float type: specials, boundaries of every integer and float type, random ones."""
    c = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 0.5, -0.5, 0.9, -0.9, 0.99999, 1.0, -1.0, 1.5, -1.5,
         1.9999, 2.0, 2.5, -2.5, 3.5, 65504.0, 65505.0, 65519.0, 65519.99, 65520.0, -65520.0, 65536.0, 1e-8, 6e-8,
         3e-8, 5.960464477539063e-08, 6.103515625e-05, 1e-40, 1e-310, 16777217.0, 3.4028234663852886e38,
         3.4028235677973366e38, np.nextafter(3.4028235677973366e38, 0.0), 3.5e38, 1e300, -1e300, 1.7976931348623157e308]
    for t in TYPES[1:9]:
        a, b = int_range(t)
        for v in (a, b):
            c += [float(v), float(v) + 0.5, float(v) - 0.5, float(v) + 1, float(v) - 1, float(v) + 0.999]
        for v in (float(2**63), float(2**64), -float(2**63)):
            c += [v, np.nextafter(v, 0.0), np.nextafter(v, math.inf if v > 0 else -math.inf)]
    for _ in range(40):
        c.append(float(rng.normal()) * 10.0 ** int(rng.integers(-8, 21)))
    arr = np.array(c, dtype=np.float64).astype(np_type(name))
    seen, out = set(), []
    for v in arr:
        b = v.tobytes()
        if b not in seen:
            seen.add(b)
            out.append(v)
    return np.array(out, dtype=np_type(name))


def source_values(name):
    if name == "bool":
        return np.array([False, True], dtype=np_type("bool"))
    if is_float(name):
        return float_values(name)
    return np.array(int_values(name), dtype=np_type(name))


def expected(src, s, d):
    """The target elements (zero where the value does not convert) and the failing indices."""
    out = np.zeros(len(src), dtype=np_type(d))
    errors = []
    for i, v in enumerate(src):
        if is_float(d):
            r = np.array([v]).astype(np_type(d))[0]
            finite = not is_float(s) or math.isfinite(float(v))
            if finite and math.isinf(float(r)):
                errors.append(i)
            else:
                out[i] = r
        else:
            if is_float(s):
                f = float(v)  # exact: every float16/32 value is a float64 value
                if not math.isfinite(f):
                    errors.append(i)
                    continue
                x = math.trunc(f)
            else:
                x = int(v)
            lo, hi = int_range(d)
            if lo <= x <= hi:
                out[i] = x
            else:
                errors.append(i)
    return out, errors


def main():
    os.makedirs(OUT, exist_ok=True)
    blob = bytearray()
    index = {"generator": "tools/convert_vectors.py", "numpy": np.__version__, "sources": {}, "pairs": []}
    srcs = {}
    for s in TYPES:
        srcs[s] = source_values(s)
        index["sources"][s] = {"offset": len(blob), "count": len(srcs[s])}
        blob += srcs[s].tobytes()
    for s in TYPES:
        for d in TYPES:
            out, errors = expected(srcs[s], s, d)
            index["pairs"].append({"from": s, "to": d, "offset": len(blob), "errors": errors})
            blob += out.tobytes()
    with open(os.path.join(OUT, "data.bin"), "wb") as f:
        f.write(blob)
    with open(os.path.join(OUT, "index.json"), "w") as f:
        f.write("{\n")
        f.write(f' "generator": {json.dumps(index["generator"])},\n "numpy": {json.dumps(index["numpy"])},\n')
        f.write(f' "sources": {json.dumps(index["sources"])},\n "pairs": [\n')
        f.write(",\n".join("  " + json.dumps(p) for p in index["pairs"]))
        f.write("\n ]\n}\n")
    n = sum(len(v) for v in srcs.values()) * len(TYPES)
    bad = sum(len(p["errors"]) for p in index["pairs"])
    print(f"convert_vectors: {len(index['pairs'])} pairs, {n} conversions ({bad} out of range), {len(blob)} bytes")


main()
