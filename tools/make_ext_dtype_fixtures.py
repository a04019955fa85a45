#!/usr/bin/env python3
"""Adds the extension data type fixtures to tests/fixtures (written by zarr-python 3.1.6).

    python3 tools/make_ext_dtype_fixtures.py            # (re)write the ext_* cases of tests/fixtures
    python3 tools/make_ext_dtype_fixtures.py --out DIR  # somewhere else (DIR/manifest.json is merged)

Run it after tools/make_fixtures.py (which wipes the directory). It replaces every case named
`ext_*` in the manifest and leaves the others alone. Cases: zarr-python's `structured` (flat and
nested, base64 fill values), `numpy.datetime64` / `numpy.timedelta64` (NaT and non-NaT fill values,
big-endian storage, inside sharding), `fixed_length_utf32` (non-BMP code points, big-endian storage),
`null_terminated_bytes` (embedded NULs), and a Zarr v2 `>U` array (whose expected file holds the code
units little-endian like every other expected file: libzarr returns them in native order).

Expected files follow the corpus rules: the whole array in C order, every scalar little-endian,
never-written chunks as the fill value. Every case is read back with zarr-python and compared with its
expected file before the manifest is written. Deterministic: fixed seeds, no compressor with a clock.
"""
import argparse
import json
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np

try:
    import zarr
    from zarr.codecs import BytesCodec, ShardingCodec, ZstdCodec
except ImportError as e:  # pragma: no cover
    sys.exit(f"make_ext_dtype_fixtures.py needs zarr-python 3.1.6: {e}")

ROOT = Path(__file__).resolve().parent.parent
ZARR_VERSION = "3.1.6"
ZP = f"zarr-python {ZARR_VERSION}"
warnings.filterwarnings("ignore")  # zarr-python's "unstable specification" warnings


def little(dt: np.dtype) -> np.dtype:
    """`dt` with every scalar little-endian (structured fields too)."""
    if dt.fields is None:
        return dt.newbyteorder("<") if dt.byteorder in "<>=" and dt.itemsize > 1 else dt
    return np.dtype([(name, little(dt.fields[name][0])) for name in dt.names])


def v3_fields(dt: np.dtype):
    out = []
    for name in dt.names:
        f = dt.fields[name][0]
        out.append([name, v3_fields(f) if f.fields is not None else zarr_name(f)])
    return out


def zarr_name(dt: np.dtype) -> str:
    return {"b": "bool", "i": f"int{8 * dt.itemsize}", "u": f"uint{8 * dt.itemsize}",
            "f": f"float{8 * dt.itemsize}"}[dt.kind]


def case(out: Path, name: str, arr: np.ndarray, fill, chunks, *, fmt=3, notes="", writes=None, config=None,
         data_type=None, **create):
    """Writes one array (only the regions in `writes`, default everything), its expected file and
    returns the manifest entry."""
    sub = "v3" if fmt == 3 else "v2"
    path = out / sub / name
    shutil.rmtree(path, ignore_errors=True)
    z = zarr.create_array(str(path), shape=arr.shape, chunks=chunks, dtype=arr.dtype, fill_value=fill,
                          zarr_format=fmt, **create)
    full = np.full(arr.shape, fill, dtype=arr.dtype) if fill is not None else np.zeros(arr.shape, arr.dtype)
    for sl in writes or [tuple(slice(None) for _ in arr.shape)]:
        z[sl] = arr[sl]
        full[sl] = arr[sl]
    back = zarr.open_array(str(path), mode="r")[...]
    expected = full.astype(little(arr.dtype)).tobytes()
    if back.astype(little(arr.dtype)).tobytes() != expected:
        sys.exit(f"{name}: zarr-python reads back something else than was written")
    (out / "expected").mkdir(parents=True, exist_ok=True)
    (out / "expected" / f"{name}.bin").write_bytes(expected)
    entry = {
        "name": name, "kind": "v3-ext-dtype" if fmt == 3 else "v2-dtype", "path": f"{sub}/{name}", "zarr_format": fmt,
        "writer": ZP, "data_type": data_type, "shape": list(arr.shape), "expected": f"expected/{name}.bin",
        "element_size": arr.dtype.itemsize, "expect_error": None, "notes": notes,
        "reference_readers": {"zarr-python": "yes"},
    }
    if arr.dtype.fields is not None:
        entry["data_type"] = "struct"
        entry["fields"] = v3_fields(arr.dtype)
    if config is not None:
        entry["data_type_configuration"] = config
    if fmt == 2:
        entry["source_dtype"] = json.loads((path / ".zarray").read_text())["dtype"]
    return entry


def build(out: Path):
    rng = np.random.default_rng(20260714)
    cases = []

    # zarr-python's `structured`: flat, non-zero fill (base64 in zarr.json), one chunk never written
    dt = np.dtype([("id", "<i4"), ("t", "<f8"), ("flag", "?"), ("q", "<u2")])
    a = np.zeros(11, dt)
    a["id"] = rng.integers(-2**31, 2**31 - 1, 11)
    a["t"] = rng.normal(size=11)
    a["t"][3] = np.nan
    a["flag"] = rng.integers(0, 2, 11).astype(bool)
    a["q"] = rng.integers(0, 2**16, 11)
    fill = np.array((-1, -0.0, True, 65535), dt)[()]
    cases.append(case(out, "ext_structured", a, fill, (4,), writes=[slice(0, 4), slice(8, 11)],
                      notes="zarr-python 'structured' (tuple fields), base64 fill (-1, -0.0, True, 65535); "
                            "chunk 1 never written; bytes codec without endian (little, per the registry)"))
    # nested structured
    dt = np.dtype([("id", "<u1"), ("p", [("x", "<f4"), ("y", "<i2")]), ("z", "<i8")])
    a = np.zeros(6, dt)
    a["id"] = np.arange(6)
    a["p"]["x"] = rng.normal(size=6).astype(np.float32)
    a["p"]["y"] = rng.integers(-300, 300, 6)
    a["z"] = rng.integers(-2**62, 2**62, 6)
    fill = np.array((7, (2.5, -3), -1), dt)[()]
    cases.append(case(out, "ext_structured_nested", a, fill, (4,), writes=[slice(0, 4)],
                      notes="nested 'structured' field p {x: f4, y: i2}; base64 fill (7, (2.5, -3), -1); last chunk "
                            "never written"))

    # numpy.datetime64 [10us]: NaT fill, NaT in data, sharded with big-endian inner chunks
    a = (rng.integers(0, 10**14, (6, 5)) * 1).astype("M8[10us]")
    a[1, 2] = np.datetime64("NaT")
    cases.append(case(out, "ext_datetime64_10us_sharded", a, np.datetime64("NaT"), (3, 5),
                      writes=[(slice(0, 3), slice(None))],
                      shards=(6, 5), serializer=BytesCodec(endian="big"), compressors=[ZstdCodec(level=1)],
                      config={"unit": "us", "scale_factor": 10}, data_type="numpy.datetime64",
                      notes="numpy.datetime64 unit us scale 10 in shards (6,5) of inner chunks (3,5), inner bytes "
                            "big-endian + zstd; fill NaT; second inner chunk never written; expected int64 LE"))
    # numpy.timedelta64 [h]: non-NaT fill, big-endian bytes
    a = rng.integers(-10**6, 10**6, 9).astype("m8[h]")
    a[4] = np.timedelta64("NaT")
    cases.append(case(out, "ext_timedelta64_h_big", a, np.timedelta64(-5, "h"), (4,), writes=[slice(0, 4), slice(8, 9)],
                      serializer=BytesCodec(endian="big"), config={"unit": "h", "scale_factor": 1},
                      data_type="numpy.timedelta64",
                      notes="numpy.timedelta64 unit h, big-endian bytes codec, fill -5 (not NaT), NaT in data; "
                            "chunk 1 never written"))

    # fixed_length_utf32: big-endian storage, non-BMP code points, non-empty fill
    a = np.array([["", "a", "Zürich", "\U0001F600x"], ["日本語", "abcde", "\x01\x7f", "é"]], dtype="<U5")
    cases.append(case(out, "ext_fixed_utf32_big", a, "ab", (1, 4), writes=[(slice(0, 1), slice(None))],
                      serializer=BytesCodec(endian="big"), config={"length_bytes": 20},
                      data_type="fixed_length_utf32",
                      notes="fixed_length_utf32 length_bytes 20, big-endian bytes codec; non-BMP code point; fill "
                            "'ab'; row 1 never written; expected UTF-32LE code units"))

    # null_terminated_bytes: embedded NULs and full-width values
    a = np.array([b"", b"a\x00b", b"xyzxyz", b"\xff\x01", b"q"], dtype="S6")
    cases.append(case(out, "ext_null_terminated_bytes", a, b"xy", (2,), writes=[slice(0, 2), slice(4, 5)],
                      config={"length_bytes": 6}, data_type="null_terminated_bytes",
                      notes="null_terminated_bytes length_bytes 6: embedded NUL, 6-byte value, 0xff; base64 fill "
                            "'xy'; chunk 1 never written"))

    # Zarr v2 big-endian unicode: read back as native code units
    a = np.array(["ab", "\U0001F600", "", "wxyz", "é"], dtype=">U4")
    cases.append(case(out, "ext_v2_unicode_big", a, "zz", (2,), fmt=2, writes=[slice(0, 4)], compressors=None,
                      data_type="fixed_length_utf32", config={"length_bytes": 16},
                      notes="v2 dtype '>U4' (stored big-endian): libzarr reports ZARR_FIXED_UTF32 with native code "
                            "units; expected UTF-32LE; last chunk partly written"))
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures")
    args = ap.parse_args()
    if zarr.__version__ != ZARR_VERSION:
        sys.exit(f"make_ext_dtype_fixtures.py pins zarr-python {ZARR_VERSION}, found {zarr.__version__}")
    out = args.out
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else \
        {"corpus_set": "libzarr fixtures", "format_version": 1, "cases": [], "groups": []}
    cases = build(out)
    manifest["cases"] = [c for c in manifest["cases"] if not c["name"].startswith("ext_")] + cases
    manifest_path.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(cases)} extension data type cases written to {out}")


if __name__ == "__main__":
    main()
