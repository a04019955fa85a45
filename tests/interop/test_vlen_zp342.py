#!/usr/bin/env python3
"""Interop, variable-length data types through the one engine, both directions with zarr-python 3.4.2
(Python 3.12: the script re-runs itself with $ZARR_PYTHON312): `string` and `variable_length_bytes`
arrays with nested sharding, a rectilinear chunk grid, a transpose codec, and these combined; Zarr v2
object arrays in order "F" (their chunks frame the elements in Fortran order).

  * zarr-python writes (partial writes: missing shards, inner chunks and chunks) -> libzarr reads the
    whole array and random regions through zarr_read_region_vlen, equal to zarr-python's reading;
  * libzarr creates the same arrays (zarr-python's zarr.json) and writes random boxes, some of them the
    fill value, through zarr_write_region_vlen -> after every write zarr-python reads the array equal
    to the model, and at the end the stored chunk (shard) keys are exactly those zarr-python stores
    for the same values.

    python3 tests/interop/test_vlen_zp342.py [-v] [-k SUBSTRING]

Exit status: 0 pass, 1 fail, 77 skipped (no zarr-python 3.4.2; a failure under CI=true). Library:
$ZARR_LIB.
"""
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

harness.reexec_with_zarr("3.4.2")

import numpy as np  # noqa: E402
import zarr  # noqa: E402
import zarr_ctypes as zc  # noqa: E402
from zarr.codecs import (GzipCodec, ShardingCodec, TransposeCodec, VLenBytesCodec, VLenUTF8Codec,  # noqa: E402
                         ZstdCodec)
from zarr.core.dtype import VariableLengthBytes  # noqa: E402
from zarr.storage import LocalStore  # noqa: E402

warnings.filterwarnings("ignore")
zarr.config.set({"array.rectilinear_chunks": True})

POOL = ["", "a", "héllo", "日本語", "😀🎉 astral", "tab\tnl\n", "nul\0mid", "y" * 300, "Ω"]


def utf8(kind):
    return VLenUTF8Codec() if kind == "string" else VLenBytesCodec()


# (name, kind, shape, chunks (zarr-python's form: regular, or rectilinear edges), fill, kwargs builder)
CASES = [
    ("nested_sharding", "string", (11, 10), (8, 6), "",
     lambda k: {"compressors": None, "serializer": ShardingCodec(chunk_shape=(4, 6), codecs=[
         ShardingCodec(chunk_shape=(2, 3), codecs=[utf8(k), ZstdCodec(level=1)])])}),
    ("nested_sharding_bytes_start", "bytes", (12, 5), (6, 5), b"\x00",
     lambda k: {"compressors": None, "serializer": ShardingCodec(chunk_shape=(3, 5), index_location="start", codecs=[
         ShardingCodec(chunk_shape=(1, 5), codecs=[utf8(k)], index_location="start")])}),
    ("rectilinear", "string", (10, 11), [[3, 4, 3], [2, 2, 2, 5]], "fill",
     lambda k: {"compressors": [GzipCodec(level=1)]}),
    ("rectilinear_bytes", "bytes", (9,), [[2, 5, 2]], b"",
     lambda k: {}),
    ("transpose_3d", "string", (5, 4, 6), (2, 3, 4), "-",
     lambda k: {"filters": [TransposeCodec(order=(2, 0, 1))]}),
    ("transpose_bytes", "bytes", (7, 9), (3, 4), b"",
     lambda k: {"filters": [TransposeCodec(order=(1, 0))]}),
    ("rectilinear_sharded_transpose", "string", (12, 9), [[8, 4], [6, 3]], "",
     lambda k: {"compressors": None, "serializer": ShardingCodec(chunk_shape=(2, 3), codecs=[
         TransposeCodec(order=(1, 0)), utf8(k), ZstdCodec(level=1)])}),
    # Zarr v2 object arrays in Fortran order: the chunk's elements framed in Fortran order
    ("v2_order_F", "string", (7, 5), (3, 2), "", lambda k: {"zarr_format": 2, "order": "F", "compressors": None}),
    ("v2_order_F_bytes_3d", "bytes", (4, 3, 5), (3, 2, 2), b"", lambda k: {"zarr_format": 2, "order": "F"}),
]


def values(kind, n, rng):
    out = []
    for i in range(n):
        s = POOL[int(rng.integers(len(POOL)))] + ("" if rng.integers(3) == 0 else str(i))
        out.append(s.encode() if kind == "bytes" else s)
    return out


def obj(vals, shape):
    a = np.empty(len(vals), dtype=object)
    a[:] = vals
    return a.reshape(shape)


def flat(a):
    return [bytes(v) if isinstance(v, (bytes, np.bytes_)) else v for v in np.asarray(a, dtype=object).reshape(-1)]


def boxes(shape, rng, k):
    out = []
    for _ in range(k):
        start = [int(rng.integers(0, s)) for s in shape]
        count = [int(rng.integers(1, s - a + 1)) for s, a in zip(shape, start)]
        out.append((start, count))
    return out


def create_zp(path, kind, shape, chunks, fill, kw):
    dtype = str if kind == "string" else VariableLengthBytes()
    return zarr.create_array(store=LocalStore(str(path)), shape=shape, chunks=chunks, dtype=dtype, fill_value=fill,
                             **kw(kind))


def stored_keys(path):
    return sorted(str(f.relative_to(path)) for f in Path(path).rglob("*")
                  if f.is_file() and f.name != "zarr.json" and not f.name.startswith("."))


def sl(start, count):
    return tuple(slice(a, a + c) for a, c in zip(start, count))


def check_read(r, name, kind, shape, chunks, fill, kw):
    """zarr-python writes, libzarr reads."""
    rng = np.random.default_rng(len(name))
    path = r.path(f"zp_{name}")
    z = create_zp(path, kind, shape, chunks, fill, kw)
    data = obj(values(kind, int(np.prod(shape)), rng), shape)
    for start, count in boxes(shape, rng, 3):
        z[sl(start, count)] = data[sl(start, count)]
    want = z[...]
    with zc.Array.open(path) as a:
        assert a.read_vlen() == flat(want), f"{name}: whole array differs"
        for start, count in boxes(shape, rng, 12):
            assert a.read_vlen(start, count) == flat(want[sl(start, count)]), f"{name}: region {start}+{count}"


def check_write(r, name, kind, shape, chunks, fill, kw):
    """libzarr writes (zarr-python's metadata), zarr-python reads."""
    rng = np.random.default_rng(100 + len(name))
    ref = r.path(f"ref_{name}")
    create_zp(ref, kind, shape, chunks, fill, kw)
    doc = (ref / "zarr.json" if (ref / "zarr.json").exists() else ref / ".zarray").read_text()
    path = r.path(f"lib_{name}")
    model = obj([fill] * int(np.prod(shape)), shape)
    with zc.Array.create(path, doc) as a:
        for i, (start, count) in enumerate(boxes(shape, rng, 6)):
            vals = values(kind, int(np.prod(count)), rng) if i != 3 else [fill] * int(np.prod(count))
            a.write_vlen(vals, start, count)
            model[sl(start, count)] = obj(vals, count)
            got = zarr.open_array(store=LocalStore(str(path)), mode="r")[...]
            assert flat(got) == flat(model), f"{name}: zarr-python reads something else after write {i}"
    # zarr-python storing the same values stores the same chunks (shards)
    z = zarr.open_array(store=LocalStore(str(ref)), mode="r+")
    z[...] = model
    assert stored_keys(path) == stored_keys(ref), f"{name}: stored {stored_keys(path)}, zarr-python {stored_keys(ref)}"


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="libzarr_vlen342_") as tmp:
        r = harness.Runner(Path(tmp), args.verbose, args.k)
        for case in CASES:
            r.run(f"read {case[0]}", check_read, r, *case)
            r.run(f"write {case[0]}", check_write, r, *case)
    print(f"{r.passed} passed, {len(r.failed)} failed ({time.monotonic() - t0:.1f} s)")
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
