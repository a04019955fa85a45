#!/usr/bin/env python3
"""sharding_indexed interop with zarr-python, both directions.

For a set of shard configurations (index at start or end, with or without crc32c, inner chains with
gzip / zstd / blosc / crc32c, a non-self-inverse transpose, nested sharding, edge shards):
  * zarr-python writes (whole array, then a partial overwrite) -> libzarr reads the whole array and
    sub-regions byte-exact;
  * libzarr writes (whole array, partial overwrite, a fill-value write) -> zarr-python reads equal;
    inner chunks that are entirely the fill value are not stored (index entries are 2^64-1) and a shard
    left without inner chunks is deleted.
Exit status: 0 pass, 1 fail, 77 skip (zarr-python or numpy missing). Library: $ZARR_LIB.
"""
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
try:
    import numpy as np
    import zarr
except ImportError:
    print("zarr-python/numpy not installed: skipped")
    sys.exit(77)
import zarr_ctypes as zc  # noqa: E402

BYTES_LE = {"name": "bytes", "configuration": {"endian": "little"}}
BYTES_BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}
GZIP = {"name": "gzip", "configuration": {"level": 1}}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}
BLOSC = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}


def sharding(inner_shape, codecs, index_codecs=(BYTES_LE, CRC), location="end"):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner_shape), "codecs": list(codecs),
        "index_codecs": list(index_codecs), "index_location": location}}


# (name, dtype, fill (JSON), numpy fill, shape, shard shape, codecs)
CASES = [
    ("bytes_end_crc", "int16", -1, -1, [30, 22], [16, 12], [sharding([4, 6], [BYTES_LE])]),
    ("gzip_start", "uint8", 7, 7, [30, 22], [16, 12], [sharding([4, 6], [BYTES_LE, GZIP], location="start")]),
    ("zstd_index_no_crc", "float32", "NaN", np.nan, [33, 20], [16, 10], [sharding([8, 5], [BYTES_LE, ZSTD], index_codecs=[BYTES_LE])]),
    ("blosc", "int32", 0, 0, [40, 30], [20, 30], [sharding([10, 10], [BYTES_LE, BLOSC])]),
    ("inner_crc", "float64", 0.5, 0.5, [12, 18], [6, 9], [sharding([3, 3], [BYTES_BE, GZIP, CRC])]),
    ("transpose_3d", "uint16", 3, 3, [13, 10, 9], [8, 6, 4], [sharding([4, 3, 2], [
        {"name": "transpose", "configuration": {"order": [1, 2, 0]}}, BYTES_BE, ZSTD])]),
    ("nested", "int32", -5, -5, [16, 16], [8, 8], [sharding([4, 4], [sharding([2, 2], [BYTES_LE, GZIP], location="start")])]),
    ("complex", "complex64", [0.0, 0.0], 0, [9, 9], [6, 6], [sharding([3, 2 * 3], [BYTES_LE, GZIP])]),
]


def metadata(dtype, fill, shape, shard, codecs):
    return {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": shard}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": codecs, "attributes": {}}


def values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    if np.dtype(dtype).kind == "c":
        v = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    elif np.dtype(dtype).kind == "f":
        v = rng.standard_normal(n) * 100
    else:
        info = np.iinfo(dtype)
        v = rng.integers(max(info.min, -30000), min(info.max, 30000), n)
    return v.astype(dtype).reshape(shape)


def same(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def libzarr_read(path, dtype, shape, start=None, count=None):
    with zc.Array.open(path) as arr:
        raw = arr.read(start, count)
    return np.frombuffer(raw, dtype=dtype).reshape(count if count is not None else shape)


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL", what)


def index_entries(shard_file, n_inner, location, with_crc):
    data = Path(shard_file).read_bytes()
    size = 16 * n_inner + (4 if with_crc else 0)
    idx = data[:size] if location == "start" else data[len(data) - size:]
    return np.frombuffer(idx[:16 * n_inner], dtype="<u8").reshape(n_inner, 2)


def run_case(tmp, name, dtype, fill, npfill, shape, shard, codecs):
    meta = metadata(dtype, fill, shape, shard, codecs)
    rank = len(shape)
    data = values(dtype, shape, hash(name) % 1000)
    patch_start = [s // 3 for s in shape]
    patch_count = [max(1, s // 3) for s in shape]
    sl = tuple(slice(a, a + c) for a, c in zip(patch_start, patch_count))
    patch = values(dtype, patch_count, 99)
    expected = data.copy()
    expected[sl] = patch

    # zarr-python writes, libzarr reads
    zp = tmp / f"{name}_zp"
    zp.mkdir()
    (zp / "zarr.json").write_text(json.dumps(meta))
    a = zarr.open_array(str(zp), mode="r+")
    a[...] = data
    a[sl] = patch
    check(same(libzarr_read(zp, dtype, shape), expected), f"{name}: libzarr reads zarr-python's shards")
    for start, count in [([0] * rank, [min(3, s) for s in shape]), ([s // 2 for s in shape], [max(1, s // 4) for s in shape]),
                         ([s - 1 for s in shape], [1] * rank)]:
        want = expected[tuple(slice(a, a + c) for a, c in zip(start, count))]
        check(same(libzarr_read(zp, dtype, shape, start, count), want), f"{name}: libzarr region {start}+{count}")

    # libzarr writes, zarr-python reads
    lz = tmp / f"{name}_lz"
    with zc.Array.create(lz, json.dumps(meta)) as arr:
        arr.write(np.ascontiguousarray(data).tobytes())
        arr.write(np.ascontiguousarray(patch).tobytes(), patch_start, patch_count)
    back = zarr.open_array(str(lz), mode="r")[...]
    check(same(back, expected), f"{name}: zarr-python reads libzarr's shards")

    # a block of fill values: the first inner chunk of shard 0 is entirely fill -> not stored
    outer = codecs[0]["configuration"]
    inner = outer["chunk_shape"]
    fill_block = np.full(inner, npfill, dtype=dtype)
    with zc.Array.open(lz, zc.READ_WRITE) as arr:
        arr.write(fill_block.tobytes(), [0] * rank, inner)
    expected[tuple(slice(0, c) for c in inner)] = fill_block
    check(same(zarr.open_array(str(lz), mode="r")[...], expected), f"{name}: zarr-python after a fill block")
    n_inner = int(np.prod([s // i for s, i in zip(shard, inner)]))
    with_crc = outer["index_codecs"][-1].get("name") == "crc32c"
    e = index_entries(lz / "c" / "/".join(["0"] * rank), n_inner, outer.get("index_location", "end"), with_crc)
    check(e[0, 0] == 2**64 - 1 and e[0, 1] == 2**64 - 1, f"{name}: an all-fill inner chunk is not stored")
    check(all(e[k, 0] != 2**64 - 1 for k in range(1, n_inner)) or any(s % sh for s, sh in zip(shape, shard)),
          f"{name}: the other inner chunks stay stored")

    # writing the fill value over a whole shard deletes it
    full_shard = [min(s, sh) for s, sh in zip(shape, shard)]
    with zc.Array.open(lz, zc.READ_WRITE) as arr:
        arr.write(np.full(full_shard, npfill, dtype=dtype).tobytes(), [0] * rank, full_shard)
    check(not (lz / "c" / "/".join(["0"] * rank)).exists(), f"{name}: a shard left without inner chunks is deleted")
    expected[tuple(slice(0, c) for c in full_shard)] = npfill
    check(same(zarr.open_array(str(lz), mode="r")[...], expected), f"{name}: zarr-python after deleting a shard")


def main():
    tmp = Path(tempfile.mkdtemp(prefix="zarr-shard-interop-", dir=os.environ.get("ZARR_TEST_TMPDIR")))
    try:
        for case in CASES:
            try:
                run_case(tmp, *case)
            except Exception as e:  # a crash in one case is a failure, not an abort
                failures.append(f"{case[0]}: {type(e).__name__}: {e}")
                print("FAIL", case[0], type(e).__name__, e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(CASES)} sharding configurations, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
