#!/usr/bin/env python3
"""Generates tests/fixtures/numcodecs_v3: Zarr v3 arrays written by zarr-python 3.1.6 with the numcodecs
codecs under their v3 names (`numcodecs.<id>`, from `zarr.codecs.numcodecs`), numcodecs' checksum codecs,
and damaged chunks of them.

    python3 tools/make_numcodecs_v3_fixtures.py            # wipe tests/fixtures/numcodecs_v3, regenerate
    python3 tools/make_numcodecs_v3_fixtures.py --out DIR

Same layout and manifest format as tools/make_fixtures.py (whose Generator it uses; see
tests/fixtures/README.md), in its own directory with its own manifest.json, so that either script can
be rerun alone. The expected bytes of every case are what zarr-python reads back (for lossy codecs the
rounded values, not the input); for lossless codecs the script also checks that they equal the input.
Damaged cases (a payload byte flipped under a checksum; a compressed stream cut short) record the
error class a reader must report. Deterministic: fixed seeds, gzip mtime pinned to 0 (make_fixtures).
"""
import argparse
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_fixtures as mf  # noqa: E402  (Generator, le_bytes, v3_name, zarr-python pin, gzip mtime 0)

import zarr  # noqa: E402
import zarr.codecs.numcodecs as nc  # noqa: E402
from zarr.codecs import BytesCodec  # noqa: E402
from zarr.storage import LocalStore  # noqa: E402

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parent.parent
KIND = "v3-numcodecs"


def write(g, name, data, chunks, notes, *, filters=(), compressors=(), lossy=False, fill=None):
    d = g.out / "v3" / name
    kw = dict(shape=data.shape, chunks=chunks, dtype=data.dtype, zarr_format=3, filters=filters,
              serializer=BytesCodec(endian="little"), compressors=compressors)
    if fill is not None:
        kw["fill_value"] = fill
    arr = zarr.create_array(store=LocalStore(str(d)), **kw)
    arr[...] = data
    back = zarr.open_array(store=LocalStore(str(d)), mode="r")[...]
    if not lossy:
        assert back.tobytes() == data.tobytes(), name
    g.add(name, KIND, mf.v3_name(data.dtype), data.shape, mf.le_bytes(back), mf.ZP, notes,
          element_size=data.dtype.itemsize, readers={"zarr-python": "yes"})
    return d


def damage(g, src, name, key, how, err, notes, dtype, shape):
    d = g.out / "v3" / name
    shutil.copytree(src, d)
    p = d / key
    p.write_bytes(how(p.read_bytes()))
    try:
        zarr.open_array(store=LocalStore(str(d)), mode="r")[...]
        readers = {"zarr-python": "no: reads it without an error"}
    except Exception as e:  # noqa: BLE001 - any refusal counts
        readers = {"zarr-python": f"yes ({type(e).__name__})"}
    expected = (g.out / "expected" / f"{src.name}.bin").read_bytes()
    g.add(name, KIND, mf.v3_name(np.dtype(dtype)), shape, expected, mf.HW, notes, element_size=np.dtype(dtype).itemsize,
          expect_error=err, readers=readers, corrupt_keys=[key])


def cases(g):
    rng = np.random.default_rng(20261123)
    ints = (rng.integers(-2000, 2000, size=(13, 11)).cumsum(axis=1)).astype("<i4")
    floats = (rng.standard_normal((9, 10)) * 50 + 200).astype("<f8")
    f32 = (rng.standard_normal(40) * 3).astype("<f4")
    smooth = np.linspace(0, 1000, 12 * 7, dtype="<u2").reshape(12, 7)

    bytes_codecs = [
        ("nc_blosc", nc.Blosc(cname="zstd", clevel=3, shuffle=-1, blocksize=0), "typesize 1: numcodecs sees bytes"),
        ("nc_blosc_lz4_shuffle", nc.Blosc(cname="lz4", clevel=5, shuffle=1, blocksize=0), ""),
        ("nc_lz4", nc.LZ4(acceleration=1), ""),
        ("nc_zstd", nc.Zstd(level=3, checksum=True), ""),
        ("nc_zlib", nc.Zlib(level=6), ""),
        ("nc_gzip", nc.GZip(level=1), ""),
        ("nc_bz2", nc.BZ2(level=9), ""),
        ("nc_lzma", nc.LZMA(preset=1), ""),
        ("nc_crc32", nc.CRC32(), "checksum before the data"),
        ("nc_crc32_end", nc.CRC32(location="end"), "checksum after the data"),
        ("nc_adler32", nc.Adler32(), ""),
        ("nc_crc32c", nc.CRC32C(), "numcodecs' crc32c: after the data by default"),
        ("nc_fletcher32", nc.Fletcher32(), "HDF5 Fletcher-32, appended"),
    ]
    for name, codec, note in bytes_codecs:
        write(g, name, ints, (5, 4), f"int32 [13, 11] chunks [5, 4] (edge chunks), bytes + {codec.codec_name}. {note}",
              compressors=[codec])
    write(g, "nc_shuffle_zlib", smooth, (5, 7), "uint16, numcodecs.shuffle (elementsize filled in by zarr-python) + zlib",
          compressors=[nc.Shuffle(), nc.Zlib(level=1)])
    write(g, "nc_delta", ints, (5, 4), "numcodecs.delta int32 -> bytes -> zstd",
          filters=[nc.Delta(dtype="int32")], compressors=[nc.Zstd(level=1)])
    write(g, "nc_delta_astype", smooth.astype("<i4"), (6, 7), "numcodecs.delta int32 stored as int16",
          filters=[nc.Delta(dtype="int32", astype="int16")])
    write(g, "nc_fixedscaleoffset", floats, (4, 5), "numcodecs.fixedscaleoffset float64 -> uint16 (lossy)",
          filters=[nc.FixedScaleOffset(offset=200, scale=100, dtype="float64", astype="uint16")],
          compressors=[nc.Zlib(level=1)], lossy=True)
    write(g, "nc_quantize", floats, (4, 5), "numcodecs.quantize digits 2 (lossy)",
          filters=[nc.Quantize(digits=2, dtype="float64")], lossy=True)
    write(g, "nc_bitround", f32, (16,), "numcodecs.bitround keepbits 6 on float32 (lossy)",
          filters=[nc.BitRound(keepbits=6)], lossy=True)
    write(g, "nc_astype", floats, (4, 5), "numcodecs.astype float64 stored as float32 (lossy)",
          filters=[nc.AsType(encode_dtype="float32", decode_dtype="float64")], lossy=True)
    write(g, "nc_chain", floats, (9, 3), "quantize -> bytes -> shuffle(8) -> blosc -> adler32 (lossy)",
          filters=[nc.Quantize(digits=3, dtype="float64")],
          compressors=[nc.Shuffle(elementsize=8), nc.Blosc(cname="lz4", clevel=1, shuffle=0), nc.Adler32()], lossy=True)

    flip_mid = lambda b: b[:len(b) // 2] + bytes([b[len(b) // 2] ^ 0x40]) + b[len(b) // 2 + 1:]  # noqa: E731
    for src, key in (("nc_adler32", "c/0/0"), ("nc_fletcher32", "c/1/2"), ("nc_crc32", "c/2/1"), ("nc_crc32c", "c/0/0")):
        damage(g, g.out / "v3" / src, f"{src}_corrupt", key, flip_mid, "checksum",
               f"{src} with a payload byte of chunk {key} flipped", "<i4", ints.shape)
    for src in ("nc_zlib", "nc_lz4", "nc_bz2"):
        damage(g, g.out / "v3" / src, f"{src}_truncated", "c/1/1", lambda b: b[: len(b) // 2], "codec",
               f"{src} with chunk c/1/1 cut to half its length", "<i4", ints.shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures" / "numcodecs_v3")
    args = ap.parse_args()
    if zarr.__version__ != mf.ZARR_VERSION:
        sys.exit(f"pins zarr-python {mf.ZARR_VERSION} (found {zarr.__version__})")
    out = args.out.resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    g = mf.Generator(out)
    cases(g)
    manifest = {"corpus_set": "libzarr-fixtures-numcodecs-v3", "format_version": 1, "cases": g.cases, "groups": []}
    (out / "manifest.json").write_text(mf.json.dumps(manifest, indent=1) + "\n")
    refused = [c["name"] for c in g.cases if c["expect_error"] and not c["reference_readers"]["zarr-python"].startswith("yes")]
    print(f"wrote {len(g.cases)} cases to {out}")
    if refused:
        sys.exit(f"zarr-python read damaged cases without an error: {refused}")


if __name__ == "__main__":
    main()
