#!/usr/bin/env python3
"""Generates tests/fixtures/pcodec_zfp: Zarr v3 and v2 arrays written by zarr-python 3.1.6 with numcodecs'
`pcodec` (PCodec, package pcodec 1.1.0) and `zfpy` (ZFPY, package zfpy 1.0.1) codecs -- v3 names
`numcodecs.pcodec` / `numcodecs.zfpy`, v2 compressor ids `pcodec` / `zfpy` -- and damaged chunks of them.

    python3 tools/make_pcodec_zfp_fixtures.py            # wipe tests/fixtures/pcodec_zfp, regenerate
    python3 tools/make_pcodec_zfp_fixtures.py --out DIR

Same layout and manifest format as tools/make_fixtures.py (whose Generator it uses; see
tests/fixtures/README.md), in its own directory with its own manifest.json. The expected bytes of every
case are what zarr-python reads back (zfp's lossy modes: the decoded values, which the script checks are
within the mode's bound of the input); lossless cases (pcodec, zfp reversible) are checked equal to the
input. zfp modes: fixed rate, fixed precision, fixed accuracy, and reversible (numcodecs' ZFPY with a
negative parameter, its default). Damaged cases record the error a reader must report; zarr-python is
not run on damaged zfp streams (zfp reads past the end of a stream without checking).
Deterministic: fixed seeds; pcodec and zfp are deterministic.
"""
import argparse
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures as mf  # noqa: E402  (Generator, le_bytes, v3_name, zarr-python pin)

import numcodecs  # noqa: E402
import zarr  # noqa: E402
import zarr.codecs.numcodecs as nc  # noqa: E402
import zfpy  # noqa: E402
from zarr.storage import LocalStore  # noqa: E402

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parent.parent
PINS = {"pcodec": "1.1.0", "zfpy": "1.0.1"}


def check_pins():
    from importlib.metadata import version
    for pkg, pin in PINS.items():
        if version(pkg) != pin:
            sys.exit(f"pins {pkg} {pin} (found {version(pkg)})")


def written(g, name, d, data, back, notes, zarr_format, bound):
    """Registers the array written at `d`; `bound`: None (lossless) or the largest error allowed."""
    if bound is None:
        assert back.tobytes() == data.tobytes(), name
    else:
        err = np.max(np.abs(back.astype("f8") - data.astype("f8")))
        assert err <= bound, (name, err, bound)
    extra = {}
    if zarr_format == 2:
        extra = dict(zarr_format=2, source_dtype=data.dtype.str)
    g.add(name, f"v{zarr_format}-pcodec-zfp", mf.v3_name(data.dtype), data.shape, mf.le_bytes(back), mf.ZP, notes,
          element_size=data.dtype.itemsize, readers={"zarr-python": "yes"}, **extra)


def write3(g, name, data, chunks, codec, notes, bound=None):
    d = g.out / "v3" / name
    arr = zarr.create_array(store=LocalStore(str(d)), shape=data.shape, chunks=chunks, dtype=data.dtype, zarr_format=3,
                            serializer=codec, compressors=None, fill_value=0)
    arr[...] = data
    back = zarr.open_array(store=LocalStore(str(d)), mode="r")[...]
    written(g, name, d, data, back, notes, 3, bound)


def write2(g, name, data, chunks, codec, notes, bound=None):
    d = g.out / "v2" / name
    arr = zarr.create_array(store=LocalStore(str(d)), shape=data.shape, chunks=chunks, dtype=data.dtype, zarr_format=2,
                            compressors=codec, filters=None, fill_value=0)
    arr[...] = data
    back = zarr.open_array(store=LocalStore(str(d)), mode="r")[...]
    written(g, name, d, data, back, notes, 2, bound)


def damage(g, src, name, key, how, err, notes, run_zarr_python):
    fmt = src.parent.name
    d = g.out / fmt / name
    shutil.copytree(src, d)
    p = d / key
    p.write_bytes(how(p.read_bytes()))
    readers = {"zarr-python": "not run (zfp reads past the end of a damaged stream)"}
    if run_zarr_python:
        try:
            zarr.open_array(store=LocalStore(str(d)), mode="r")[...]
            readers = {"zarr-python": "no: reads it without an error"}
        except Exception as e:  # noqa: BLE001 - any refusal counts
            readers = {"zarr-python": f"yes ({type(e).__name__})"}
    base = next(c for c in g.cases if c["name"] == src.name)
    expected = (g.out / "expected" / f"{src.name}.bin").read_bytes()
    extra = dict(zarr_format=2, source_dtype=base["source_dtype"]) if fmt == "v2" else {}
    g.add(name, base["kind"], base["data_type"], base["shape"], expected, mf.HW, notes,
          element_size=base["element_size"], expect_error=err, readers=readers, corrupt_keys=[key], **extra)


def cases(g):
    rng = np.random.default_rng(20261124)
    ints = rng.integers(-2000, 2000, size=(13, 11)).cumsum(axis=1).astype("<i4")
    i64 = (rng.integers(0, 50, size=300).cumsum() * 1_000_003).astype("<i8")
    u16 = np.linspace(0, 60000, 12 * 7).astype("<u2").reshape(12, 7)
    f64 = np.ascontiguousarray((np.sin(np.arange(90) / 7.0) * 100 + rng.standard_normal(90)).reshape(9, 10)).astype("<f8")
    f32_3d = (np.sin(np.arange(6 * 7 * 8) / 11.0) * 10).astype("<f4").reshape(6, 7, 8)
    f16 = (np.cos(np.arange(50) / 5.0) * 30).astype("<f2")
    f32_4d = (np.arange(3 * 4 * 5 * 6) / 17.0).astype("<f4").reshape(3, 4, 5, 6)
    prices = np.round(rng.uniform(1, 100, size=(40,)), 2).astype("<f8")

    # pcodec (lossless)
    write3(g, "pc_int32", ints, (5, 4), nc.PCodec(), "int32 [13, 11] chunks [5, 4] (edge chunks), numcodecs.pcodec "
           "with numcodecs' defaults (level 8, auto mode and delta)")
    write3(g, "pc_f64_classic", f64, (4, 5), nc.PCodec(level=3, mode_spec="classic", delta_spec="try_consecutive",
                                                        delta_encoding_order=0),
           "float64, level 3, classic mode, delta order 0 (numcodecs' delta_spec \"none\" needs pcodec < 1: "
           "DeltaSpec.none is DeltaSpec.no_op in pcodec 1.1)")
    write3(g, "pc_u16_consecutive", u16, (12, 7), nc.PCodec(level=5, delta_spec="try_consecutive", delta_encoding_order=2),
           "uint16, try_consecutive order 2")
    write3(g, "pc_i64_lookback_pages", i64, (128,), nc.PCodec(delta_spec="try_lookback", equal_pages_up_to=50),
           "int64, try_lookback, pages of up to 50 numbers (several pco chunks per zarr chunk)")
    write3(g, "pc_f16", f16, (20,), nc.PCodec(level=12), "float16, level 12")
    write3(g, "pc_f64_order_auto", prices, (16,), nc.PCodec(delta_encoding_order=1),
           "float64 (decimals: float mult mode), delta_encoding_order 1 with delta_spec auto (numcodecs' old form)")
    write2(g, "pc_v2_f32", f32_3d, (3, 7, 5), numcodecs.PCodec(level=8), "Zarr v2 compressor pcodec, float32 3-D")

    # zfpy
    write3(g, "zfpy_rate", f64, (4, 5), nc.ZFPY(mode=zfpy.mode_fixed_rate, rate=16), "float64 2-D, fixed rate 16",
           bound=1e-1)
    write3(g, "zfpy_rate_f32_1d", f16.astype("<f4"), (20,), nc.ZFPY(mode=zfpy.mode_fixed_rate, rate=2.5),
           "float32 1-D, fixed rate 2.5: 10 bits per block (zfpy sets the rate for zfp type none, so rates under "
           "9 bits per float block overflow zfpy's buffer; libzarr refuses them)",
           bound=100)
    write3(g, "zfpy_precision", f32_3d, (3, 7, 5), nc.ZFPY(mode=zfpy.mode_fixed_precision, precision=14),
           "float32 3-D, fixed precision 14", bound=0.1)
    write3(g, "zfpy_accuracy", f64, (4, 5), nc.ZFPY(mode=zfpy.mode_fixed_accuracy, tolerance=0.01),
           "float64 2-D, fixed accuracy 0.01", bound=0.01)
    write3(g, "zfpy_reversible", f64, (4, 5), nc.ZFPY(), "float64 2-D, reversible (numcodecs' default: tolerance -1)")
    write3(g, "zfpy_i32_reversible", ints, (5, 4), nc.ZFPY(mode=zfpy.mode_fixed_accuracy, tolerance=-1),
           "int32 2-D, reversible")
    write3(g, "zfpy_i64_precision", i64, (128,), nc.ZFPY(mode=zfpy.mode_fixed_precision, precision=40),
           "int64 1-D, fixed precision 40", bound=2.0**40)
    write3(g, "zfpy_f32_4d_rate", f32_4d, (2, 3, 4, 5), nc.ZFPY(mode=zfpy.mode_fixed_rate, rate=8),
           "float32 4-D, fixed rate 8", bound=1.0)
    write2(g, "zfpy_v2_accuracy", f64, (4, 5), numcodecs.ZFPY(mode=zfpy.mode_fixed_accuracy, tolerance=0.001),
           "Zarr v2 compressor zfpy, float64, fixed accuracy 0.001", bound=0.001)
    write2(g, "zfpy_v2_reversible_i64", i64, (100,), numcodecs.ZFPY(), "Zarr v2 compressor zfpy, int64, reversible")

    half = lambda b: b[: len(b) // 2]  # noqa: E731
    flip_mid = lambda b: b[:len(b) // 2] + bytes([b[len(b) // 2] ^ 0x5A]) + b[len(b) // 2 + 1:]  # noqa: E731
    flip_type = lambda b: b[:4] + bytes([b[4] ^ 0x01]) + b[5:]  # noqa: E731  (zfp header: the field's type bits)
    damage(g, g.out / "v3" / "pc_int32", "pc_int32_truncated", "c/1/1", half, "codec", "pcodec chunk cut to half", True)
    damage(g, g.out / "v3" / "pc_f64_classic", "pc_f64_corrupt", "c/0/0", lambda b: b[:5] + b"\xff" * 4 + b[9:], "codec",
           "pcodec chunk with bytes 5..9 of its header set to 0xff", True)
    damage(g, g.out / "v2" / "pc_v2_f32", "pc_v2_f32_truncated", "0.0.0", half, "codec", "v2 pcodec chunk cut to half", True)
    damage(g, g.out / "v3" / "zfpy_accuracy", "zfpy_accuracy_truncated", "c/1/1", half, "codec",
           "zfpy chunk cut to half (zfp would read past its end)", False)
    damage(g, g.out / "v3" / "zfpy_reversible", "zfpy_magic", "c/0/0", lambda b: b"x" + b[1:], "codec",
           "zfpy chunk whose zfp magic is altered", True)
    damage(g, g.out / "v3" / "zfpy_rate", "zfpy_type", "c/0/1", flip_type, "codec",
           "zfpy chunk whose header declares another zfp type", False)
    damage(g, g.out / "v2" / "zfpy_v2_reversible_i64", "zfpy_v2_truncated", "1", lambda b: b[:24], "codec",
           "v2 zfpy chunk cut to its header and a few bytes", False)
    del flip_mid


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures" / "pcodec_zfp")
    args = ap.parse_args()
    if zarr.__version__ != mf.ZARR_VERSION:
        sys.exit(f"pins zarr-python {mf.ZARR_VERSION} (found {zarr.__version__})")
    check_pins()
    out = args.out.resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    g = mf.Generator(out)
    cases(g)
    manifest = {"corpus_set": "libzarr-fixtures-pcodec-zfp", "format_version": 1, "cases": g.cases, "groups": []}
    (out / "manifest.json").write_text(mf.json.dumps(manifest, indent=1) + "\n")
    refused = [c["name"] for c in g.cases if c["expect_error"] and c["reference_readers"]["zarr-python"].startswith("no:")]
    print(f"wrote {len(g.cases)} cases to {out}")
    if refused:
        sys.exit(f"zarr-python read damaged cases without an error: {refused}")


if __name__ == "__main__":
    main()
