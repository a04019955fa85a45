#!/usr/bin/env python3
"""Writes the scale_offset / cast_value fixtures (kind "v3-ext-codec") into tests/fixtures with
zarr-python 3.4.2 (its ScaleOffset and CastValue codecs; CastValue runs on cast-value-rs 0.5.1).

    /path/to/python3.12 tools/make_ext_codec_fixtures.py            # into tests/fixtures
    /path/to/python3.12 tools/make_ext_codec_fixtures.py --out DIR

Needs Python 3.12 with zarr==3.4.2 and cast-value-rs==0.5.1 (.ci/run creates such a venv in
.venv-zarr342). The cases of kind "v3-ext-codec" in the manifest are replaced (their directories
v3/<name> and expected files rewritten); every other case is left alone. tools/make_fixtures.py keeps
these cases when it regenerates the rest.

Each array is written by zarr-python (partial writes, so that some chunks / inner chunks are missing
and edge chunks are padded with the fill value encoded through the codecs); the expected file is what
zarr-python reads back (the decoded array, little-endian, C order). The two metadata-error cases are
hand-written documents that zarr-python refuses too (recorded in reference_readers). Deterministic:
fixed seeds.
"""
import argparse
import json
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np

try:
    import cast_value_rs  # noqa: F401  (zarr's cast_value backend)
    import zarr
    from zarr.storage import LocalStore
except ImportError as e:
    sys.exit(f"make_ext_codec_fixtures.py needs zarr-python 3.4.2 and cast-value-rs: {e}")

ROOT = Path(__file__).resolve().parent.parent
ZARR_VERSION = "3.4.2"
WRITER = f"zarr-python {ZARR_VERSION}"
KIND = "v3-ext-codec"
warnings.filterwarnings("ignore")

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
BYTES_BE = {"name": "bytes", "configuration": {"endian": "big"}}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
NAN_MAP = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}


def so(**cfg):
    return {"name": "scale_offset", "configuration": cfg} if cfg else {"name": "scale_offset"}


def cv(data_type, **cfg):
    return {"name": "cast_value", "configuration": {"data_type": data_type, **cfg}}


def sharding(inner, codecs):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner, "codecs": codecs, "index_codecs": [BYTES, {"name": "crc32c"}],
        "index_location": "end"}}


def uniform(lo, hi, specials=()):
    def gen(shape, seed):
        v = np.random.default_rng(seed).uniform(lo, hi, int(np.prod(shape)))
        v[: len(specials)] = list(specials)[: v.size]
        return v.reshape(shape)
    return gen


def integers(lo, hi, specials=()):
    def gen(shape, seed):
        v = np.random.default_rng(seed).integers(lo, hi, int(np.prod(shape))).astype(object)
        v[: len(specials)] = list(specials)[: v.size]
        return v.reshape(shape)
    return gen


# name, dtype, fill, shape, chunks, codecs, values, notes
CASES = [
    ("v3_extfx_combined", "float64", "NaN", [23, 17], [8, 8],
     [so(offset=-10, scale=0.1), cv("uint8", scalar_map=NAN_MAP), BYTES, ZSTD],
     uniform(0.0, 2540.0, [np.nan, 0.0, 2540.0, 5.0, 15.0, 25.0, 0.05, -0.0]),
     "the spec's combined example (float64 NaN fill -> scale_offset -> uint8 with NaN<->0) + zstd; NaN, "
     "ties (5, 15, 25 -> 1.5, 2.5, 3.5 before rounding), edge chunks, missing chunks"),
    ("v3_extfx_so_int16", "int16", 1000, [30, 7], [8, 4], [so(offset=1000, scale=3), BYTES],
     integers(-9000, 11000, [1000, -9000, 11922, -9922]),
     "scale_offset on int16 (offset 1000, scale 3, fill 1000 -> encoded 0); values next to the limits"),
    ("v3_extfx_so_float16", "float16", 1.5, [40], [16], [so(offset=0.5, scale=3), BYTES],
     uniform(-1000.0, 1000.0, [np.nan, np.inf, -np.inf, -0.0, 1.5, 0.5, 21845.0]),
     "scale_offset in float16 arithmetic (each step rounded to float16; 21845 overflows to inf)"),
    ("v3_extfx_so_uint32_be_noconfig", "uint32", 7, [33], [10], [so(), BYTES_BE],
     integers(0, 2**32, [0, 2**32 - 1]), "scale_offset without configuration (a no-op), big-endian bytes"),
    ("v3_extfx_cv_f64_int8_numpy", "float64", 0.0, [25], [10],
     [cv("int8", rounding="towards-zero", out_of_range="wrap",
         scalar_map={"encode": [["NaN", 0], ["+Infinity", 0], ["-Infinity", 0]]}), BYTES],
     uniform(-1000.0, 1000.0, [np.nan, np.inf, -np.inf, 128.0, -129.0, 200.7, 1e30, -0.0, -1.5]),
     "the spec's NumPy-compatibility example: towards-zero, wrap, NaN/+Infinity/-Infinity -> 0"),
    ("v3_extfx_cv_f32_f16_clamp", "float32", 0.0, [40], [16], [cv("float16", out_of_range="clamp"), BYTES],
     uniform(-70000.0, 70000.0, [np.nan, np.inf, -0.0, 65519.0, 65520.0, -65520.0, 1e-8, 2049.0, 2051.0, 3e-8]),
     "float32 -> float16 nearest-even with clamp (beyond the finite range -> +-inf), ties, subnormals"),
    ("v3_extfx_cv_f64_u16_be_away", "float64", 3.0, [18, 5], [4, 4],
     [cv("uint16", rounding="nearest-away", out_of_range="clamp"), BYTES_BE],
     uniform(-100.0, 70000.0, [0.5, 1.5, 65535.5, -0.5, -0.0, 1e20, -1e20, 2.5]),
     "float64 -> uint16 nearest-away + clamp, stored big-endian"),
    ("v3_extfx_cv_i64_f64_up", "int64", 0, [30], [12], [cv("float64", rounding="towards-positive"), BYTES],
     integers(-(2**62), 2**62, [2**53 + 1, -(2**53 + 1), 2**63 - 1025, -(2**63), 2**62 + 3]),
     "int64 -> float64 towards-positive: inexact integers above 2^53 round up, and decode back exactly"),
    ("v3_extfx_cv_f64_f32_tz", "float64", "NaN", [13, 13], [6, 6], [cv("float32", rounding="towards-zero"), BYTES],
     uniform(-1e6, 1e6, [np.nan, 0.1, -0.1, 1e-46, -1e-46, -0.0, 3.4028235e38]),
     "float64 -> float32 towards-zero (subnormal underflow to +-0, signed zero kept)"),
    ("v3_extfx_sharded_inner", "float32", 0.0, [30, 22], [16, 12],
     [sharding([4, 6], [so(offset=100, scale=2), cv("int16", rounding="nearest-away"), BYTES])],
     uniform(-1000.0, 1000.0, [0.25, -0.25, 100.0]),
     "scale_offset + cast_value inside sharding_indexed (inner fill 0.0 -> -200): missing inner chunks, edge shards"),
    ("v3_extfx_sharded_outer", "float64", 5.0, [20, 20], [10, 10],
     [so(offset=2, scale=10), cv("int32", out_of_range="clamp"), sharding([5, 5], [BYTES, ZSTD])],
     uniform(-1e3, 1e3, [5.0, 2.0, 1e12]),
     "scale_offset + cast_value before sharding_indexed (the shard's fill value is the encoded 30)"),
]

# name, document edits on a valid float64 array, notes
ERRORS = [
    ("v3_extfx_err_scale_zero", "float64", 0.0, [so(offset=1, scale=0), BYTES], "scale_offset with scale 0 (decoding divides by it)"),
    ("v3_extfx_err_fill_unencodable", "float64", "NaN", [cv("int16"), BYTES],
     "fill value NaN cannot be cast to int16 (no scalar_map entry)"),
]


def le_bytes(a):
    a = np.ascontiguousarray(a)
    return a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()


def metadata(dtype, fill, shape, chunks, codecs):
    return {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": codecs, "attributes": {}}


def case_entry(name, dtype, shape, expected, notes, expect_error=None, readers=None, encoded=None):
    return {"name": name, "kind": KIND, "path": f"v3/{name}", "zarr_format": 3, "writer": WRITER,
            "data_type": dtype, "shape": shape, "expected": expected,
            "element_size": np.dtype(dtype).itemsize, "expect_error": expect_error, "notes": notes,
            "reference_readers": readers or {"zarr-python": "yes"}, "encoded_data_type": encoded}


def encoded_type(dtype, codecs):
    for c in codecs:
        if c["name"] == "cast_value":
            dtype = c["configuration"]["data_type"]
        if c["name"] == "sharding_indexed":
            return encoded_type(dtype, c["configuration"]["codecs"])
    return dtype


def write_case(out, name, dtype, fill, shape, chunks, codecs, gen, notes):
    d = out / "v3" / name
    if d.exists():
        shutil.rmtree(d)
    store = LocalStore(str(d))
    doc = metadata(dtype, fill, shape, chunks, codecs)
    d.mkdir(parents=True)
    (d / "zarr.json").write_text(json.dumps(doc, indent=2) + "\n")
    a = zarr.open_array(store=store, mode="r+")
    data = np.asarray(gen(shape, 1)).astype(dtype)
    rank = len(shape)
    # the first write leaves the far quarter of every dimension missing; then a patch
    w = tuple(slice(0, s - s // 4 if s > 4 else s) for s in shape)
    a[w] = data[w]
    p_count = [max(1, s // 3) for s in shape]
    p = tuple(slice(s // 3, s // 3 + c) for s, c in zip(shape, p_count))
    a[p] = np.asarray(gen(p_count, 2)).astype(dtype)
    expected = zarr.open_array(store=LocalStore(str(d), read_only=True), mode="r")[...]
    assert expected.shape == tuple(shape) and rank == expected.ndim
    exp_rel = f"expected/{name}.bin"
    (out / exp_rel).write_bytes(le_bytes(expected))
    return case_entry(name, dtype, shape, exp_rel, notes, encoded=encoded_type(dtype, codecs))


def write_error(out, name, dtype, fill, codecs, notes):
    d = out / "v3" / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    (d / "zarr.json").write_text(json.dumps(metadata(dtype, fill, [10], [5], codecs), indent=2) + "\n")
    try:
        zarr.open_array(store=LocalStore(str(d), read_only=True), mode="r")[...]
        reader = "no: zarr-python opens and reads it"
    except Exception as e:  # noqa: BLE001
        reader = f"yes ({type(e).__name__})"
    return case_entry(name, dtype, [10], None, "hand-written document: " + notes, expect_error="invalid_metadata",
                      readers={"zarr-python": reader})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures")
    args = ap.parse_args()
    if zarr.__version__ != ZARR_VERSION:
        sys.exit(f"make_ext_codec_fixtures.py pins zarr-python {ZARR_VERSION} (found {zarr.__version__})")
    out = args.out.resolve()
    (out / "expected").mkdir(parents=True, exist_ok=True)
    mpath = out / "manifest.json"
    manifest = json.loads(mpath.read_text()) if mpath.exists() else {
        "corpus_set": "libzarr-fixtures", "format_version": 1, "cases": [], "groups": []}
    for c in manifest["cases"]:
        if c["kind"] == KIND:
            shutil.rmtree(out / c["path"], ignore_errors=True)
            if c.get("expected"):
                (out / c["expected"]).unlink(missing_ok=True)
    cases = [c for c in manifest["cases"] if c["kind"] != KIND]
    new = [write_case(out, *c) for c in CASES] + [write_error(out, *e) for e in ERRORS]
    manifest["cases"] = cases + new
    mpath.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    bad = [c["name"] for c in new if c["expect_error"] and not c["reference_readers"]["zarr-python"].startswith("yes")]
    print(f"wrote {len(new)} {KIND} cases to {out}")
    if bad:
        sys.exit(f"zarr-python does not refuse: {', '.join(bad)}")


if __name__ == "__main__":
    main()
