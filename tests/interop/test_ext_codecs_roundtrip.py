#!/usr/bin/env python3
"""scale_offset / cast_value interop with zarr-python 3.4.2 (its codecs; cast_value runs on cast-value-rs).

For each configuration (alone, combined, with a compressor, inside and around sharding, edge chunks,
missing chunks, non-zero fill values whose encoded value differs from the fill value):
  * libzarr writes (whole array, then a partial overwrite) -> zarr-python reads it equal to what
    zarr-python reads back from the same writes made by itself; for uncompressed chains every stored
    chunk file is also compared byte for byte with zarr-python's (so libzarr's encoding, edge-chunk
    padding with the encoded fill value included, is cast-value-rs' / numpy's exactly);
  * zarr-python writes -> libzarr reads the whole array and a sub-region equal to zarr-python's read;
  * a value the codecs cannot encode (no out_of_range / integer overflow) fails in both: libzarr with
    ZARR_ERR_VALUE, leaving every stored file unchanged.

Needs Python 3.12 with zarr 3.4.2 and cast-value-rs: when the running interpreter lacks them the
script re-executes itself with $ZARR_PYTHON312 (set by CMakeLists.txt; the fixture test
build.python312_env makes that venv). If that interpreter is missing too, the test is skipped (exit 77)
- except under CI=true, where it fails (zarr_prereq.missing). Exit status: 0 pass, 1 fail, 77 skip. Library: $ZARR_LIB.
"""
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ZARR_VERSION = "3.4.2"


def _ensure_interpreter():
    try:
        import cast_value_rs  # noqa: F401
        import zarr
        if zarr.__version__ == ZARR_VERSION:
            return
    except ImportError:
        pass
    other = os.environ.get("ZARR_PYTHON312", "")
    if other and Path(other).exists() and os.environ.get("_EXT_CODECS_REEXEC") != "1":
        os.environ["_EXT_CODECS_REEXEC"] = "1"
        os.execv(other, [other, __file__, *sys.argv[1:]])
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "python_site"))
    import zarr_prereq

    zarr_prereq.missing(f"needs zarr-python {ZARR_VERSION} with cast-value-rs (Python 3.12); "
                        f"ZARR_PYTHON312={other!r} is not such an interpreter")


_ensure_interpreter()

import numpy as np  # noqa: E402
import zarr  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import zarr_ctypes as zc  # noqa: E402

BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
BYTES_BE = {"name": "bytes", "configuration": {"endian": "big"}}
ZSTD = {"name": "zstd", "configuration": {"level": 3, "checksum": False}}


def so(**cfg):
    return {"name": "scale_offset", "configuration": cfg} if cfg else {"name": "scale_offset"}


def cv(data_type, **cfg):
    c = {"data_type": data_type}
    for k, v in cfg.items():
        c[k.replace("_", "_")] = v
    return {"name": "cast_value", "configuration": c}


def sharding(inner, codecs):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner, "codecs": codecs, "index_codecs": [BYTES, {"name": "crc32c"}], "index_location": "end"}}


NAN_MAP = {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]}
NUMPY_MAP = {"encode": [["NaN", 0], ["+Infinity", 0], ["-Infinity", 0]]}


def floats(shape, seed, lo, hi, specials=()):
    rng = np.random.default_rng(seed)
    v = rng.uniform(lo, hi, int(np.prod(shape)))
    v[: len(specials)] = specials[: v.size]
    return v


# name, dtype, fill (JSON), numpy fill, shape, chunks, codecs, data(seed) -> values (float64 or int),
# stored bytes comparable (True: no compressor; an integer: shards of that many inner chunks, compared
# inner chunk by inner chunk, as the two writers order them differently), a value that must fail to
# encode (or None)
CASES = [
    ("combined_spec_example", "float64", "NaN", np.nan, [23, 17], [8, 8],
     [so(offset=-10, scale=0.1), cv("uint8", scalar_map=NAN_MAP), BYTES, ZSTD],
     lambda s, n: floats(n, s, 0.0, 2540.0, [np.nan, 0.0, 2540.0, 5.0, 15.0, 25.0, 0.05]), False, 2560.0),
    ("combined_uncompressed", "float64", "NaN", np.nan, [19, 6], [5, 4],
     [so(offset=-10, scale=0.1), cv("uint8", scalar_map=NAN_MAP), BYTES],
     lambda s, n: floats(n, s, 0.0, 2540.0, [np.nan, -0.0, 2540.0, 5.0, 15.0, 25.0, 35.0]), True, -20.0),
    ("so_int16", "int16", 1000, 1000, [30, 7], [8, 4], [so(offset=1000, scale=3), BYTES],
     lambda s, n: np.random.default_rng(s).integers(1000 - 10000, 1000 + 10000, int(np.prod(n))), True, 12000),
    ("so_uint32_noconfig_be", "uint32", 7, 7, [33], [10], [so(), BYTES_BE],
     lambda s, n: np.random.default_rng(s).integers(0, 2**32, int(np.prod(n))), True, None),
    ("so_float32", "float32", 0.0, 0.0, [12, 12], [5, 5], [so(offset=273.15, scale=0.1), BYTES],
     lambda s, n: floats(n, s, -300.0, 400.0, [np.nan, np.inf, -np.inf, -0.0, 273.15]), True, None),
    ("so_float16", "float16", 1.5, 1.5, [40], [16], [so(offset=0.5, scale=3), BYTES],
     lambda s, n: floats(n, s, -1000.0, 1000.0, [np.nan, np.inf, -0.0, 1.5, 0.5]), True, None),
    ("cv_f64_int16_ne", "float64", 0.0, 0.0, [21, 9], [8, 4], [cv("int16"), BYTES],
     lambda s, n: floats(n, s, -32000.0, 32000.0, [0.5, 1.5, 2.5, -0.5, -2.5, -0.0, 32767.4, -32768.4]), True, 32767.5),
    ("cv_f64_int8_numpy_compat", "float64", 0.0, 0.0, [25], [10],
     [cv("int8", rounding="towards-zero", out_of_range="wrap", scalar_map=NUMPY_MAP), BYTES],
     lambda s, n: floats(n, s, -1000.0, 1000.0, [np.nan, np.inf, -np.inf, 128.0, -129.0, 200.7, 1e30, -0.0]), True, None),
    ("cv_f64_uint16_away_clamp", "float64", 3.0, 3.0, [18, 5], [4, 4],
     [cv("uint16", rounding="nearest-away", out_of_range="clamp"), BYTES],
     lambda s, n: floats(n, s, -100.0, 70000.0, [0.5, 1.5, 65535.5, -0.5, -0.0, 1e20]), True, None),
    ("cv_f64_int32_modes", "float64", -1.0, -1.0, [16], [16], [cv("int32", rounding="towards-negative"), BYTES],
     lambda s, n: floats(n, s, -1e9, 1e9, [-0.5, 0.5, -2147483647.5, 2147483647.5]), True, 2147483648.0),
    ("cv_f32_f16", "float32", 0.0, 0.0, [40], [16], [cv("float16", out_of_range="clamp"), BYTES],
     lambda s, n: floats(n, s, -70000.0, 70000.0, [np.nan, np.inf, -0.0, 65519.0, 65520.0, 1e-8, 2049.0]), True, None),
    ("cv_f64_f32_tz", "float64", "NaN", np.nan, [13, 13], [6, 6], [cv("float32", rounding="towards-zero"), BYTES],
     lambda s, n: floats(n, s, -1e6, 1e6, [np.nan, 0.1, -0.1, 1e-46, -0.0, 3.4028235e38]), True, 1e39),
    ("cv_i64_f64", "int64", 0, 0, [30], [12], [cv("float64", rounding="towards-positive"), BYTES],
     lambda s, n: np.concatenate([[2**53 + 1, -(2**53 + 1), 2**63 - 1025, -(2**63), 2**62 + 3],
                                  np.random.default_rng(s).integers(-(2**62), 2**62, int(np.prod(n)) - 5)]), True, None),
    ("cv_u16_u8_clamp", "uint16", 0, 0, [50], [16], [cv("uint8", out_of_range="clamp"), BYTES],
     lambda s, n: np.random.default_rng(s).integers(0, 600, int(np.prod(n))), True, None),
    ("cv_i16_i8_noclamp", "int16", 0, 0, [20], [8], [cv("int8"), BYTES],
     lambda s, n: np.random.default_rng(s).integers(-128, 128, int(np.prod(n))), True, 300),
    ("sharded_inner", "float32", 0.0, 0.0, [30, 22], [16, 12],
     [sharding([4, 6], [so(offset=100, scale=2), cv("int16", rounding="nearest-away"), BYTES])],
     lambda s, n: floats(n, s, -1000.0, 1000.0, [0.25, -0.25, 100.0]), 8, 17000.0),
    ("sharded_outer", "float64", 5.0, 5.0, [20, 20], [10, 10],
     [so(offset=2, scale=10), cv("int32", out_of_range="clamp"), sharding([5, 5], [BYTES, ZSTD])],
     lambda s, n: floats(n, s, -1e3, 1e3, [5.0, 2.0, 1e12]), False, None),
]


def metadata(dtype, fill, shape, chunks, codecs):
    return {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill, "codecs": codecs, "attributes": {}}


def same(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def inner_chunks(shard, n):
    """The inner chunks of a shard (index at the end, with crc32c), None for an empty one."""
    idx = np.frombuffer(shard[len(shard) - 16 * n - 4:len(shard) - 4], dtype="<u8").reshape(n, 2)
    return [None if off == 2**64 - 1 else shard[off:off + size] for off, size in idx.tolist()]


def stored_files(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.name not in ("zarr.json", ".zarr.lock")}


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL", what)


def run_case(tmp, name, dtype, fill, npfill, shape, chunks, codecs, gen, comparable, bad):
    meta = metadata(dtype, fill, shape, chunks, codecs)
    data = np.asarray(gen(1, shape)).astype(dtype).reshape(shape)
    rank = len(shape)
    # a patch over part of the array, and one chunk region left unwritten (missing chunks)
    p_start = [s // 3 for s in shape]
    p_count = [max(1, s // 3) for s in shape]
    sl = tuple(slice(a, a + c) for a, c in zip(p_start, p_count))
    patch = np.asarray(gen(2, p_count)).astype(dtype).reshape(p_count)
    w_count = [s - s // 4 if s > 4 else s for s in shape]  # the first write leaves the far edge missing
    w_sl = tuple(slice(0, c) for c in w_count)

    # zarr-python's writes and reads (the reference)
    zp = tmp / f"{name}_zp"
    zp.mkdir()
    (zp / "zarr.json").write_text(json.dumps(meta))
    a = zarr.open_array(str(zp), mode="r+")
    a[w_sl] = data[w_sl]
    a[sl] = patch
    ref = zarr.open_array(str(zp), mode="r")[...]

    # libzarr writes the same, zarr-python reads
    lz = tmp / f"{name}_lz"
    with zc.Array.create(lz, json.dumps(meta)) as arr:
        arr.write(np.ascontiguousarray(data[w_sl]).tobytes(), [0] * rank, w_count)
        arr.write(np.ascontiguousarray(patch).tobytes(), p_start, p_count)
    back = zarr.open_array(str(lz), mode="r")[...]
    check(same(back, ref), f"{name}: zarr-python reads libzarr's array as its own")
    if comparable:
        a_files, b_files = stored_files(lz), stored_files(zp)
        check(a_files.keys() == b_files.keys(), f"{name}: same stored keys ({sorted(a_files)} vs {sorted(b_files)})")
        if comparable is True:
            diff = [k for k in a_files if a_files[k] != b_files.get(k)]
        else:
            diff = [k for k in a_files if inner_chunks(a_files[k], comparable) != inner_chunks(b_files.get(k, b""), comparable)]
        check(not diff, f"{name}: stored bytes differ from zarr-python's in {diff}")

    # libzarr reads zarr-python's array (whole, and a region)
    with zc.Array.open(zp) as arr:
        got = np.frombuffer(arr.read(), dtype=dtype).reshape(shape)
        r_start = [s // 2 for s in shape]
        r_count = [s - s // 2 for s in shape]
        region = np.frombuffer(arr.read(r_start, r_count), dtype=dtype).reshape(r_count)
    check(same(got, ref), f"{name}: libzarr reads zarr-python's array")
    check(same(region, ref[tuple(slice(a, a + c) for a, c in zip(r_start, r_count))]), f"{name}: libzarr region read")

    # a value the chain cannot encode: both refuse, and libzarr's refused write of one whole chunk
    # (new valid values everywhere, one unencodable value at its end) leaves every stored file unchanged.
    # (A refused write over several chunks: tests/ext_codecs.rs, refused_multi_chunk_write_changes_nothing.)
    if bad is not None:
        c_count = [min(c, s) for c, s in zip(chunks, shape)]
        c_sl = tuple(slice(0, c) for c in c_count)
        block = np.asarray(gen(3, c_count)).astype(dtype).reshape(c_count)
        block.flat[-1] = np.asarray(bad).astype(dtype)
        try:
            zarr.open_array(str(zp), mode="r+")[c_sl] = block
            check(False, f"{name}: zarr-python accepted the unencodable value {bad}")
        except Exception:
            pass
        before = stored_files(lz)
        try:
            with zc.Array.open(lz, zc.READ_WRITE) as arr:
                arr.write(np.ascontiguousarray(block).tobytes(), [0] * rank, c_count)
            check(False, f"{name}: libzarr accepted the unencodable value {bad}")
        except zc.ZarrError as e:
            check(e.name == "ZARR_ERR_VALUE", f"{name}: libzarr failed with {e.name}, expected ZARR_ERR_VALUE")
        after = stored_files(lz)
        changed = [k for k in set(before) | set(after) if before.get(k) != after.get(k)]
        check(not changed, f"{name}: a refused write changed stored files {sorted(changed)}")
        check(same(zarr.open_array(str(lz), mode="r")[...], ref), f"{name}: the array is unchanged after the refused write")


def main():
    lib = os.environ.get("ZARR_LIB")
    if lib:
        zc._LIB = zc.load(lib)
    tmp = Path(tempfile.mkdtemp(prefix="zarr-ext-codecs-", dir=os.environ.get("ZARR_TEST_TMPDIR")))
    try:
        for case in CASES:
            try:
                run_case(tmp, *case)
            except Exception as e:  # a crash in one case is a failure, not an abort
                failures.append(f"{case[0]}: {type(e).__name__}: {e}")
                print("FAIL", case[0], type(e).__name__, e)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(CASES)} scale_offset/cast_value configurations with zarr-python {zarr.__version__}, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
