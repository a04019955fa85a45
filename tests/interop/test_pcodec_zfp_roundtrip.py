#!/usr/bin/env python3
"""Interop, pcodec and zfp: arrays written by libzarr (through its C ABI) with numcodecs' `pcodec` and
`zfpy` codecs (v3 names `numcodecs.pcodec` / `numcodecs.zfpy`, and v2 compressors) read back by
zarr-python with numcodecs (pcodec 1.1.0, zfpy 1.0.1); the registered `zfp` codec's chunks decoded
by zfpy itself.

    python3 tests/interop/test_pcodec_zfp_roundtrip.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (zarr-python, numcodecs, pcodec, zfpy or numpy
not importable). The library is $ZARR_LIB, else target/release/libzarr.so of this repository.

Covered:
  * pcodec (lossless): zarr-python reads exactly what was written, and libzarr's chunk bytes equal
    the ones zarr-python stores for the same array and configuration (pco is deterministic);
  * zfpy in fixed rate / precision / accuracy and reversible modes, 1-D to 4-D, int32 / int64 /
    float32 / float64: each stored chunk equals numcodecs' ZFPY encoding of the same chunk; zarr-python
    reads the values zfpy itself decodes from libzarr's streams; those are the input for reversible
    mode and within the tolerance for fixed accuracy;
  * v2 arrays with compressor pcodec / zfpy: zarr-python reads them (zarr_format=2);
  * registered `zfp` (no header): each chunk is decoded by zfpy's header-less `_decompress` with the
    same mode, and equals both libzarr's read and, where the modes coincide, zfpy's encoding.
"""
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

try:
    import numcodecs
    import numpy as np
    import pcodec  # noqa: F401
    import zarr
    import zarr.codecs.numcodecs  # noqa: F401  (registers the numcodecs.* v3 codecs)
    import zfpy
    from zarr.storage import LocalStore
except ImportError as e:
    print(f"SKIP: needs zarr-python, numcodecs, pcodec, zfpy and numpy: {e}")
    sys.exit(77)

import harness  # noqa: E402
import zarr_ctypes as zc  # noqa: E402

warnings.filterwarnings("ignore")


def meta(dtype, shape, chunks, codecs, fill=0):
    return json.dumps({"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
                       "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
                       "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                       "fill_value": fill, "codecs": codecs})


def chunk_blocks(data, chunks):
    """(chunk key parts, full-size chunk padded with 0 as zarr stores edge chunks, slice of data)."""
    import itertools
    for idx in itertools.product(*[range(-(-s // c)) for s, c in zip(data.shape, chunks)]):
        sl = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, data.shape))
        block = np.zeros(chunks, dtype=data.dtype)
        part = data[sl]
        block[tuple(slice(0, n) for n in part.shape)] = part
        yield idx, block, sl


def write(r, tag, data, chunks, codecs):
    p = r.path(tag)
    with zc.Array.create(p, meta(data.dtype.name, data.shape, chunks, codecs)) as a:
        a.write(np.ascontiguousarray(data).tobytes(), start=[0] * data.ndim, count=list(data.shape))
        back = np.frombuffer(a.read(), dtype=data.dtype).reshape(data.shape)
    return p, back


def t_pcodec(r, tag, data, chunks, cfg):
    codec = {"name": "numcodecs.pcodec", "configuration": cfg}
    p, ours = write(r, tag, data, chunks, [codec])
    got = zarr.open_array(store=LocalStore(str(p)), mode="r")[...]
    assert got.dtype == data.dtype and got.tobytes() == data.tobytes(), "zarr-python reads other values"
    assert ours.tobytes() == data.tobytes(), "libzarr reads other values"
    q = r.path(tag + "_zp")
    z = zarr.create_array(store=LocalStore(str(q)), shape=data.shape, chunks=chunks, dtype=data.dtype,
                          serializer=zarr.codecs.numcodecs.PCodec(**cfg), compressors=None, fill_value=0)
    z[...] = data
    mine = {f.relative_to(p): f.read_bytes() for f in p.rglob("*") if f.is_file() and f.name not in ("zarr.json", ".zarr.lock")}
    theirs = {f.relative_to(q): f.read_bytes() for f in q.rglob("*") if f.is_file() and f.name not in ("zarr.json", ".zarr.lock")}
    assert mine == theirs, "chunk bytes differ from zarr-python's"


def t_zfpy(r, tag, data, chunks, cfg, bound):
    p, ours = write(r, tag, data, chunks, [{"name": "numcodecs.zfpy", "configuration": cfg}])
    got = zarr.open_array(store=LocalStore(str(p)), mode="r")[...]
    assert got.dtype == data.dtype
    assert got.tobytes() == ours.tobytes(), "zarr-python and libzarr read different values"
    nc = numcodecs.ZFPY(**cfg)
    want = np.empty_like(data)
    for idx, block, sl in chunk_blocks(data, chunks):
        stream = (p / "c" / Path(*map(str, idx))).read_bytes()
        assert stream == nc.encode(block), f"chunk {idx}: stream differs from numcodecs' ZFPY"
        dec = zfpy.decompress_numpy(stream)
        want[sl] = dec[tuple(slice(0, n) for n in want[sl].shape)]
    assert got.tobytes() == want.tobytes(), "zarr-python reads other values than zfpy decodes"
    err = np.max(np.abs(got.astype("f8") - data.astype("f8")))
    assert err <= bound, f"error {err} above {bound}"


def t_v2(r, tag, data, chunks, compressor, bound):
    p = r.path(tag)
    doc = {"zarr_format": 2, "shape": list(data.shape), "chunks": list(chunks), "dtype": data.dtype.str,
           "compressor": compressor, "fill_value": 0, "order": "C", "filters": None}
    with zc.Array.create(p, json.dumps(doc)) as a:
        a.write(np.ascontiguousarray(data).tobytes(), start=[0] * data.ndim, count=list(data.shape))
        ours = np.frombuffer(a.read(), dtype=data.dtype).reshape(data.shape)
    got = zarr.open_array(store=LocalStore(str(p)), mode="r", zarr_format=2)[...]
    assert got.tobytes() == ours.tobytes(), "zarr-python and libzarr read different values"
    err = np.max(np.abs(got.astype("f8") - data.astype("f8")))
    assert err <= bound, f"error {err} above {bound}"


ZTYPE = {np.dtype("int32"): zfpy.type_int32, np.dtype("int64"): zfpy.type_int64,
         np.dtype("float32"): zfpy.type_float, np.dtype("float64"): zfpy.type_double}


def t_zfp_registered(r, tag, data, chunks, cfg, kw, same_as_zfpy, bound):
    """kw: zfpy's tolerance / rate / precision for the mode ({} = reversible)."""
    p, ours = write(r, tag, data, chunks, [{"name": "zfp", "configuration": cfg}])
    want = np.empty_like(data)
    for idx, block, sl in chunk_blocks(data, chunks):
        stream = (p / "c" / Path(*map(str, idx))).read_bytes()
        dec = zfpy._decompress(stream, ZTYPE[data.dtype], list(block.shape), **kw)
        want[sl] = dec[tuple(slice(0, n) for n in want[sl].shape)]
        if same_as_zfpy:
            assert stream == zfpy.compress_numpy(block, write_header=False, **kw), f"chunk {idx} differs from zfpy's"
    assert ours.tobytes() == want.tobytes(), "libzarr reads other values than zfpy decodes"
    err = np.max(np.abs(ours.astype("f8") - data.astype("f8")))
    assert err <= bound, f"error {err} above {bound}"


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    rng = np.random.default_rng(5)
    ints = rng.integers(-900, 900, size=(13, 11)).cumsum(axis=1).astype("<i4")
    i64 = (rng.integers(0, 40, size=(250,)).cumsum() * 7919).astype("<i8")
    f64 = (np.sin(np.arange(90) / 6.0) * 50 + rng.standard_normal(90)).reshape(9, 10)
    f32 = (np.cos(np.arange(6 * 7 * 8) / 9.0) * 20).astype("<f4").reshape(6, 7, 8)
    f32_4d = (np.arange(3 * 4 * 5 * 6) / 13.0).astype("<f4").reshape(3, 4, 5, 6)
    u16 = np.linspace(0, 65000, 96).astype("<u2").reshape(8, 12)
    f16 = (np.sin(np.arange(40) / 4.0) * 100).astype("<f2")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="libzarr_pcodec_zfp_") as tmp:
        r = harness.Runner(Path(tmp), args.verbose, args.k)
        for tag, data, chunks, cfg in [
            ("pc_i32_default", ints, (5, 4), {}),
            ("pc_f64_classic", f64, (4, 5), dict(level=3, mode_spec="classic")),
            ("pc_u16_consecutive", u16, (8, 5), dict(delta_spec="try_consecutive", delta_encoding_order=2)),
            ("pc_i64_lookback_pages", i64, (100,), dict(delta_spec="try_lookback", equal_pages_up_to=30)),
            ("pc_f16_l12", f16, (16,), dict(level=12)),
            ("pc_f32_order1", f32, (3, 7, 5), dict(delta_encoding_order=1)),
        ]:
            r.run(f"pcodec/{tag}", t_pcodec, r, tag, data, chunks, cfg)
        for tag, data, chunks, cfg, bound in [
            ("zfpy_rate16", f64, (4, 5), dict(mode=2, rate=16), 0.1),
            ("zfpy_rate8_4d", f32_4d, (2, 3, 4, 5), dict(mode=2, rate=8), 1.0),
            ("zfpy_precision14_3d", f32, (3, 7, 5), dict(mode=3, precision=14), 0.1),
            ("zfpy_accuracy", f64, (4, 5), dict(mode=4, tolerance=0.01), 0.01),
            ("zfpy_reversible_f64", f64, (4, 5), {}, 0),
            ("zfpy_reversible_i32", ints, (5, 4), dict(mode=4, tolerance=-1), 0),
            ("zfpy_precision_i64", i64, (100,), dict(mode=3, precision=40), 2.0**40),
        ]:
            r.run(f"zfpy/{tag}", t_zfpy, r, tag, data, chunks, cfg, bound)
        r.run("v2/pcodec", t_v2, r, "v2_pcodec", f32, (3, 7, 5), {"id": "pcodec", "level": 8}, 0)
        r.run("v2/zfpy_accuracy", t_v2, r, "v2_zfpy", f64, (4, 5), {"id": "zfpy", "mode": 4, "tolerance": 0.001}, 0.001)
        r.run("v2/zfpy_reversible", t_v2, r, "v2_zfpy_rev", i64, (64,), {"id": "zfpy", "mode": 4, "tolerance": -1}, 0)
        for tag, data, chunks, cfg, kw, same, bound in [
            ("zfp_reversible", f64, (4, 5), {"mode": "reversible"}, {}, True, 0),
            ("zfp_reversible_i32", ints, (5, 4), {"mode": "reversible"}, {}, True, 0),
            ("zfp_accuracy", f32, (3, 7, 5), {"mode": "fixed_accuracy", "tolerance": 0.05}, dict(tolerance=0.05), True, 0.05),
            ("zfp_precision", f64, (4, 5), {"mode": "fixed_precision", "precision": 19}, dict(precision=19), True, 0.01),
            ("zfp_rate", f32_4d, (2, 3, 4, 5), {"mode": "fixed_rate", "rate": 10.5}, dict(rate=10.5), True, 1.0),
            ("zfp_rate_low_1d", f16.astype("<f4"), (16,), {"mode": "fixed_rate", "rate": 1.5}, dict(rate=1.5), False, 200),
        ]:
            r.run(f"zfp/{tag}", t_zfp_registered, r, tag, data, chunks, cfg, kw, same, bound)
    print(f"{r.passed} passed, {len(r.failed)} failed ({time.monotonic() - t0:.1f} s)")
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
