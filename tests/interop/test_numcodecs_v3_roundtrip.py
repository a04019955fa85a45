#!/usr/bin/env python3
"""Interop, Zarr v3 numcodecs codecs: arrays written by libzarr (through its C ABI) with the
`numcodecs.<id>` codecs zarr-python 3 writes (and the registered `bitround` / `reshape`), read back by
zarr-python; and v2 arrays with lossy filters converted to v3 by libzarr, read by zarr-python as v3.

    python3 tests/interop/test_numcodecs_v3_roundtrip.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (zarr-python, numcodecs or numpy not importable).
The library is $ZARR_LIB, else target/release/libzarr.so of this repository.

Covered (compared bit-exactly, floats as their bits):
  * bytes -> bytes: numcodecs.blosc (automatic shuffle), .lz4, .zstd, .zlib, .gzip, .bz2, .lzma,
    .shuffle, and the checksums .crc32 (start / end), .adler32, .crc32c, .fletcher32; chained;
  * array -> array: numcodecs.delta (with a narrower astype), .fixedscaleoffset, .quantize,
    .bitround, .astype, with edge chunks: zarr-python must read what libzarr wrote, and for the lossy
    ones that must equal numcodecs' own decode(encode(chunk)) of each chunk;
  * the stored chunk bytes of lossless codecs equal what zarr-python stores for the same array;
  * zarr_convert_v2_to_v3 of v2 arrays with lossy filters (quantize, fixedscaleoffset, bitround,
    packbits on bool) and numcodecs compressors: zarr-python reads the v3 result as it read the v2.
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
    import zarr
    import zarr.codecs.numcodecs  # noqa: F401  (registers the numcodecs.* v3 codecs)
    from zarr.storage import LocalStore
except ImportError as e:
    print(f"SKIP: needs zarr-python, numcodecs and numpy: {e}")
    sys.exit(77)

import harness  # noqa: E402
import zarr_ctypes as zc  # noqa: E402

warnings.filterwarnings("ignore")
BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


def meta(dtype, shape, chunks, codecs, fill=0):
    return json.dumps({"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
                       "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
                       "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                       "fill_value": fill, "codecs": codecs})


def chunk_slices(shape, chunks):
    import itertools
    ranges = [range(0, s, c) for s, c in zip(shape, chunks)]
    for starts in itertools.product(*ranges):
        yield tuple(slice(a, min(a + c, s)) for a, c, s in zip(starts, chunks, shape))


def expected_lossy(data, chunks, filters):
    """numcodecs' decode(encode(x)) per chunk: each full-size chunk (edge chunks padded with the fill
    value 0, as zarr stores them), through every filter and back."""
    out = np.empty_like(data)
    for sl in chunk_slices(data.shape, chunks):
        block = np.zeros(chunks, dtype=data.dtype)
        part = data[sl]
        block[tuple(slice(0, n) for n in part.shape)] = part
        x = block
        encs = []
        for f in filters:
            encs.append(x)
            x = f.encode(x)
        for f, before in zip(reversed(filters), reversed(encs)):
            x = np.asarray(f.decode(x)).view(before.dtype).reshape(before.shape)
        out[sl] = x[tuple(slice(0, n) for n in part.shape)]
    return out


def t_write(r, tag, data, chunks, codecs, lossy_filters=None):
    p = r.path(tag)
    with zc.Array.create(p, meta(data.dtype.name, data.shape, chunks, codecs)) as a:
        a.write(np.ascontiguousarray(data).tobytes(), start=[0] * data.ndim, count=list(data.shape))
    got = zarr.open_array(store=LocalStore(str(p)), mode="r")[...]
    want = data if lossy_filters is None else expected_lossy(data, chunks, lossy_filters)
    assert got.dtype == data.dtype, (got.dtype, data.dtype)
    assert got.tobytes() == want.tobytes(), f"zarr-python reads other values than {'written' if lossy_filters is None else 'numcodecs gives'}"
    if lossy_filters is None:
        # zarr-python writing the same array with the same codecs stores the same chunk bytes
        q = r.path(tag + "_zp")
        doc = json.loads(meta(data.dtype.name, data.shape, chunks, codecs))
        z = zarr.create_array(store=LocalStore(str(q)), shape=data.shape, chunks=chunks, dtype=data.dtype,
                              filters=[c for c in doc["codecs"][:doc["codecs"].index(BYTES)]] or None,
                              serializer=zarr.codecs.BytesCodec(endian="little"),
                              compressors=doc["codecs"][doc["codecs"].index(BYTES) + 1:] or None, fill_value=0)
        z[...] = data
        ours = {f.relative_to(p): f.read_bytes() for f in p.rglob("*") if f.is_file() and f.name not in ("zarr.json", ".zarr.lock")}
        theirs = {f.relative_to(q): f.read_bytes() for f in q.rglob("*") if f.is_file() and f.name not in ("zarr.json", ".zarr.lock")}
        # (compressed streams may differ between compressor builds: compared only without compressors)
        compressors = ("blosc", "lz4", "zstd", "zlib", "gzip", "bz2", "lzma")
        if not any(c["name"].removeprefix("numcodecs.") in compressors for c in codecs):
            assert ours == theirs, "chunk bytes differ from zarr-python's"


def write_cases():
    rng = np.random.default_rng(7)
    ints = rng.integers(-500, 500, size=(13, 11)).cumsum(axis=1).astype("<i4")
    floats = (rng.standard_normal((9, 10)) * 40 + 100).astype("<f8")
    f32 = (rng.standard_normal((7, 6)) * 3).astype("<f4")
    nc = lambda name, **cfg: {"name": f"numcodecs.{name}", "configuration": cfg}  # noqa: E731
    cases = []
    for name, cfg in [("blosc", dict(cname="zstd", clevel=3, shuffle=-1, blocksize=0)),
                      ("blosc", dict(cname="lz4", clevel=5, shuffle=1, blocksize=0)),
                      ("lz4", dict(acceleration=1)), ("zstd", dict(level=3, checksum=True)), ("zlib", dict(level=6)),
                      ("gzip", dict(level=1)), ("bz2", dict(level=9)), ("lzma", dict(preset=1)),
                      ("shuffle", dict(elementsize=4)), ("crc32", {}), ("crc32", dict(location="end")),
                      ("adler32", {}), ("crc32c", {}), ("fletcher32", {})]:
        cases.append((f"{name}_{len(cases)}", ints, (5, 4), [BYTES, nc(name, **cfg)], None))
    cases.append(("chain_shuffle_zlib_adler32", ints, (5, 4),
                  [BYTES, nc("shuffle", elementsize=4), nc("zlib", level=1), nc("adler32")], None))
    cases.append(("delta", ints, (5, 4), [nc("delta", dtype="int32"), BYTES, nc("zstd", level=1)], None))
    cases.append(("delta_astype_i8", ints, (5, 4), [nc("delta", dtype="int32", astype="int64"), BYTES], None))
    cases.append(("astype_f8_f4", floats, (4, 5), [nc("astype", encode_dtype="float32", decode_dtype="float64"), BYTES],
                  [numcodecs.AsType(encode_dtype="float32", decode_dtype="float64")]))
    cases.append(("fixedscaleoffset", floats, (4, 5),
                  [nc("fixedscaleoffset", offset=100, scale=10, dtype="float64", astype="int16"), BYTES, nc("zlib", level=1)],
                  [numcodecs.FixedScaleOffset(offset=100, scale=10, dtype="float64", astype="int16")]))
    cases.append(("quantize", floats, (4, 5), [nc("quantize", digits=2, dtype="float64"), BYTES],
                  [numcodecs.Quantize(digits=2, dtype="float64")]))
    cases.append(("bitround", f32, (3, 4), [nc("bitround", keepbits=5), BYTES, nc("gzip", level=1)],
                  [numcodecs.BitRound(keepbits=5)]))
    return cases


def t_registered_bitround(r):
    """The registered `bitround` (zarr-python 3.1.6 does not know it): libzarr's stored and read values
    equal numcodecs.BitRound's for floats, as the spec promises."""
    x = (np.random.default_rng(3).standard_normal((7, 6)) * 1e3).astype("<f4")
    p = r.path("registered_bitround")
    with zc.Array.create(p, meta("float32", x.shape, (7, 6), [{"name": "bitround", "configuration": {"keepbits": 5}},
                                                              BYTES])) as a:
        a.write(x.tobytes(), start=[0, 0], count=list(x.shape))
        got = a.read()
    want = numcodecs.BitRound(keepbits=5).encode(x).tobytes()
    assert got == want, "libzarr's bitround differs from numcodecs'"
    assert (p / "c" / "0" / "0").read_bytes() == want, "stored bytes differ from numcodecs'"


def t_convert_lossy(r, tag, data, kw):
    p = r.path(f"convert_{tag}")
    z = zarr.create_array(store=LocalStore(str(p)), shape=data.shape, chunks=(3, 4), dtype=data.dtype, zarr_format=2,
                          **kw)
    z[...] = data
    v2 = zarr.open_array(store=LocalStore(str(p)), mode="r", zarr_format=2)[...]
    zc.convert_v2_to_v3(p)
    v3 = zarr.open_array(store=LocalStore(str(p)), mode="r", zarr_format=3)[...]
    assert v3.tobytes() == v2.tobytes(), "zarr-python reads the converted array differently"
    with zc.Array.open(p) as a:
        assert a.read() == np.ascontiguousarray(v2).astype(v2.dtype.newbyteorder("=")).tobytes(), "libzarr differs"


def convert_cases():
    rng = np.random.default_rng(11)
    f8 = (rng.standard_normal((7, 9)) * 10).astype("<f8")
    return [
        ("quantize_blosc", f8, dict(filters=[numcodecs.Quantize(digits=2, dtype="<f8")],
                                    compressors=numcodecs.Blosc("lz4", 5, -1))),
        ("fixedscaleoffset_lz4", f8, dict(filters=[numcodecs.FixedScaleOffset(offset=0, scale=100, dtype="<f8", astype="<i4")],
                                          compressors=numcodecs.LZ4())),
        ("bitround_zstd", f8.astype("<f4"), dict(filters=[numcodecs.BitRound(keepbits=4)], compressors=numcodecs.Zstd(1))),
        ("packbits_crc32", rng.integers(0, 2, size=(7, 9)).astype(bool), dict(filters=[numcodecs.PackBits()],
                                                                            compressors=numcodecs.CRC32())),
        ("delta_shuffle_bz2", rng.integers(0, 1000, size=(7, 9)).astype("<u4"),
         dict(filters=[numcodecs.Delta(dtype="<u4"), numcodecs.Shuffle(elementsize=4)], compressors=numcodecs.BZ2(1))),
    ]


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="libzarr_numcodecs_v3_") as tmp:
        r = harness.Runner(Path(tmp), args.verbose, args.k)
        for tag, data, chunks, codecs, lossy in write_cases():
            r.run(f"write/{tag}", t_write, r, tag, data, chunks, codecs, lossy)
        r.run("write/registered_bitround", t_registered_bitround, r)
        for tag, data, kw in convert_cases():
            r.run(f"convert/{tag}", t_convert_lossy, r, tag, data, kw)
    print(f"{r.passed} passed, {len(r.failed)} failed ({time.monotonic() - t0:.1f} s)")
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
