#!/usr/bin/env python3
"""Generates the project's interoperability fixtures in tests/fixtures (Zarr v3, v2 and v1).

    python3 tools/make_fixtures.py            # wipe tests/fixtures and regenerate it
    python3 tools/make_fixtures.py --out DIR  # somewhere else

Writers: zarr-python 3.1.6 (with its numcodecs codecs; `zarr_format=2` for the v2 cases) for nearly
everything; tensorstore for the blosc/snappy cases only (numcodecs' bundled c-blosc has no snappy); and
"hand-written" for what no writer produces: the core r<N> data types, hex fill values, unknown
extensions, broken metadata, corrupted chunks, Zarr v1 (zarr-python 3 cannot write it; written per
the v1 spec) and v2 structured dtypes with subarray or nested fields (see each case's `notes`).

The layout and manifest follow the shared interop corpus format (tools/check_corpus.py reads both):
one directory per case under v3/, `expected/<name>.bin` with the whole array (C order, little-endian,
missing chunks as the fill value), and `manifest.json` with `cases` and `groups`.

Everything is deterministic (fixed seeds, gzip mtime 0). After writing, every case is read back with
zarr-python (tensorstore for snappy) and compared bit-exactly with its expected file; v1/v2 cases are
also read with tools/np_zarr.py (an independent numpy + numcodecs reader, the only one for v1 and for
the structured dtypes zarr-python cannot read); error cases are checked to be refused by zarr-python
where it does (recorded in `reference_readers`).
"""
import argparse
import base64
import bz2
import gzip
import json
import shutil
import sys
import tempfile
import warnings
import zlib
from pathlib import Path

import numpy as np

try:
    import numcodecs
    import zarr
    from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec, TransposeCodec,
                             ZstdCodec)
    from zarr.storage import LocalStore
except ImportError as e:  # pragma: no cover
    sys.exit(f"make_fixtures.py needs zarr-python 3.1.6: {e}")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from np_zarr import chunk_slices, grid_of, np_read  # noqa: E402  (the independent v1/v2 reader)
ZARR_VERSION = "3.1.6"
ZP = f"zarr-python {ZARR_VERSION}"
HW = "hand-written"

warnings.filterwarnings("ignore")  # zarr-python's "unstable specification" warnings for raw_bytes


class _EpochClock:
    """numcodecs' GZip writes the current time into each gzip header (MTIME); the generator pins the
    clock the gzip module sees to 0 so that regenerating gives byte-identical chunks."""

    @staticmethod
    def time():
        return 0.0


gzip.time = _EpochClock

FLOAT_NAN_PAYLOAD = {  # quiet NaNs with a payload, and a negative NaN, per float width
    "float16": [0x7E01, 0xFE00],
    "float32": [0x7FC00001, 0xFFC00000],
    "float64": [0x7FF8000000000001, 0xFFF8000000000000],
}
UINT_OF = {2: np.uint16, 4: np.uint32, 8: np.uint64}


# ------------------------------------------------------------------------------------------------
# data


def float_bits(dtype, bits):
    dtype = np.dtype(dtype)
    return np.array([bits], dtype=UINT_OF[dtype.itemsize]).view(dtype)[0]


def specials(dtype):
    """Special values of `dtype` (extremes, NaN/Inf/-0.0, subnormals), as an array."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return np.array([True, False, False, True, True, False], dtype=dt)
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        vals = [ii.min, ii.max, 0, 1, ii.max - 1, ii.min + 1]
        if dt.kind == "i":
            vals += [-1, -2]
        return np.array(vals, dtype=dt)
    if dt.kind == "f":
        fi = np.finfo(dt)
        sub = fi.smallest_subnormal
        vals = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, sub, -sub, fi.smallest_normal - sub,
                         fi.smallest_normal, fi.max, fi.min, fi.eps, 1.0, -1.5], dtype=dt)
        payload = np.array(FLOAT_NAN_PAYLOAD[dt.name], dtype=UINT_OF[dt.itemsize]).view(dt)
        return np.concatenate([vals, payload])
    if dt.kind == "c":
        f = specials(np.dtype(f"f{dt.itemsize // 2}"))
        re = f
        im = np.roll(f, 5)
        out = np.empty(len(f), dtype=dt)
        out.real = re
        out.imag = im
        return out
    raise ValueError(dt)


def random_values(dtype, n, rng):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(dt)
    if dt.kind in "iu":
        ii = np.iinfo(dt)
        return rng.integers(ii.min, ii.max, n, dtype=dt, endpoint=True)
    if dt.kind == "f":
        mag = 10.0 ** rng.integers(-3, 4, n)
        return (rng.standard_normal(n) * mag).astype(dt)
    if dt.kind == "c":
        f = np.dtype(f"f{dt.itemsize // 2}")
        out = np.empty(n, dtype=dt)
        out.real = random_values(f, n, rng)
        out.imag = random_values(f, n, rng)
        return out
    raise ValueError(dt)


def mixed(dtype, shape, seed):
    """Specials first, then random values, in C order."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    sp = specials(dtype)[:n]
    vals = np.concatenate([sp, random_values(dtype, n - len(sp), rng)])
    return vals.reshape(shape)


def smooth(dtype, shape, seed):
    """Compressible data (ramps with a little noise), so that compressors actually compress."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    base = np.arange(n) // 3 + rng.integers(0, 3, n)
    if dt.kind == "b":
        vals = (base // 7) % 2 == 1
    elif dt.kind in "iu":
        vals = (base % (np.iinfo(dt).max // 2 + 1)).astype(dt)
        if dt.kind == "i":
            vals[1::5] = -vals[1::5]
    elif dt.kind == "f":
        vals = (base * 0.25).astype(dt)
    else:
        vals = np.empty(n, dtype=dt)
        vals.real = base * 0.5
        vals.imag = -base
    return np.asarray(vals, dtype=dt).reshape(shape)


def le_bytes(a):
    a = np.ascontiguousarray(a)
    return a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()


def v3_name(dtype):
    return np.dtype(dtype).name  # bool, int8.., float16.., complex64..


# ------------------------------------------------------------------------------------------------
# generator


class Generator:
    def __init__(self, out: Path):
        self.out = out
        self.cases = []
        self.groups = []
        self.names = set()

    # -- manifest ------------------------------------------------------------------------------

    def add(self, name, kind, data_type, shape, expected, writer, notes, *, element_size,
            path=None, expect_error=None, corrupt_keys=None, readers=None, zarr_format=3, source_dtype=None,
            fields=None):
        """Registers a case. `expected` is bytes or None. v1/v2 cases give `source_dtype` (the dtype as
        stored in the metadata) and, for structured types, `fields`."""
        assert name not in self.names, name
        self.names.add(name)
        path = path or f"v{zarr_format}/{name}"
        exp_rel = None
        if expected is not None:
            exp_rel = f"expected/{name}.bin"
            p = self.out / exp_rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(expected)
            n = int(np.prod(shape, dtype=np.int64))
            assert len(expected) == n * element_size, (name, len(expected), n, element_size)
        case = {
            "name": name, "kind": kind, "path": path, "zarr_format": zarr_format, "writer": writer,
            "data_type": data_type, "shape": list(shape), "expected": exp_rel,
            "element_size": element_size, "expect_error": expect_error, "notes": notes,
        }
        if fields is not None:
            case["fields"] = fields
        if zarr_format != 3:
            case["source_dtype"] = source_dtype
        case["reference_readers"] = readers or {}
        if corrupt_keys is not None:
            case["corrupt_keys"] = corrupt_keys
        self.cases.append(case)
        return case

    def dir(self, name):
        return self.out / "v3" / name

    # -- zarr-python writer ----------------------------------------------------------------------

    def zp(self, name, kind, data, chunks, notes, *, fill=None, filters=None, serializer="auto",
           compressors="auto", cke=None, dimension_names=None, attributes=None, regions=None,
           expected_fill=None, path=None, register=True):
        """Writes `data` with zarr-python (only `regions` when given; the rest stays missing)."""
        d = self.out / (path or f"v3/{name}")
        kwargs = dict(shape=data.shape, chunks=chunks, dtype=data.dtype, zarr_format=3,
                      filters=filters if filters is not None else (),
                      serializer=serializer, compressors=compressors)
        if fill is not None:
            kwargs["fill_value"] = fill
        if cke is not None:
            kwargs["chunk_key_encoding"] = cke
        if dimension_names is not None:
            kwargs["dimension_names"] = dimension_names
        if attributes is not None:
            kwargs["attributes"] = attributes
        arr = zarr.create_array(store=LocalStore(str(d)), **kwargs)
        if regions is None:
            if data.size:
                arr[...] = data
            expected = data
        else:
            fv = expected_fill if expected_fill is not None else arr.fill_value
            expected = np.full(data.shape, fv, dtype=data.dtype)
            for r in regions:
                arr[r] = data[r]
                expected[r] = data[r]
        if register:
            self.add(name, kind, v3_name(data.dtype), data.shape, le_bytes(expected), ZP, notes,
                     element_size=data.dtype.itemsize, path=path)
        return expected

    # -- hand-written helpers ----------------------------------------------------------------------

    @staticmethod
    def read_json(path):
        return json.loads(Path(path).read_text())

    @staticmethod
    def write_json(path, doc):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")

    def edit_meta(self, name, fn):
        p = self.dir(name) / "zarr.json"
        doc = self.read_json(p)
        doc = fn(doc) or doc
        self.write_json(p, doc)


# ------------------------------------------------------------------------------------------------
# cases


def cases_dtype(g: Generator):
    for i, dt in enumerate(["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                            "uint64", "float16", "float32", "float64", "complex64", "complex128"]):
        data = mixed(dt, (5, 7), seed=100 + i)
        g.zp(f"v3_dtype_{dt}", "v3-dtype", data, (3, 4),
             f"core type {dt}; zarr-python default codecs (bytes little + zstd level 0); 5x7 in 3x4 chunks "
             "(edge chunks on both axes); specials first: ints min/max, floats NaN (also with payload and "
             "negative), +-Inf, -0.0, subnormals, max/min, complex with special components")
    # raw r<N>: hand-written (zarr-python 3.1.6 writes its own raw_bytes extension, not the core name)
    for i, (bits, shape, chunks, fill, missing) in enumerate([
        (16, (6,), (4,), [0, 0], None),
        (24, (5, 3), (2, 2), [1, 2, 3], (1, 1)),
        (48, (4, 5), (3, 3), [0, 0, 0, 0, 0, 0], None),
    ]):
        nb = bits // 8
        rng = np.random.default_rng(200 + i)
        data = rng.integers(0, 256, (*shape, nb), dtype=np.uint8)
        name = f"v3_dtype_r{bits}"
        d = g.dir(name)
        doc = {
            "zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": f"r{bits}",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": fill,
            "codecs": [{"name": "bytes"}, {"name": "gzip", "configuration": {"level": 5}}],
            "attributes": {},
        }
        g.write_json(d / "zarr.json", doc)
        grid = [-(-s // k) for s, k in zip(shape, chunks)]
        expected = data.copy()
        for ci in np.ndindex(*grid):
            if missing is not None and tuple(ci) == missing:
                sl = tuple(slice(c * k, min((c + 1) * k, s)) for c, k, s in zip(ci, chunks, shape))
                expected[sl] = np.array(fill, dtype=np.uint8)
                continue
            chunk = np.empty((*chunks, nb), dtype=np.uint8)
            chunk[...] = np.array(fill, dtype=np.uint8)
            sl = tuple(slice(c * k, min((c + 1) * k, s)) for c, k, s in zip(ci, chunks, shape))
            part = data[sl]
            chunk[tuple(slice(0, e) for e in part.shape[:-1])] = part
            key = d / "c" / Path(*[str(c) for c in ci])
            key.parent.mkdir(parents=True, exist_ok=True)
            key.write_bytes(gzip.compress(chunk.tobytes(), compresslevel=5, mtime=0))
        miss = f"; chunk c/{'/'.join(map(str, missing))} never written (reads as fill {fill})" if missing else ""
        g.add(name, "v3-dtype", f"r{bits}", shape, expected.tobytes(), HW,
              f"raw r{bits} ({nb} opaque bytes/element), hand-written: zarr-python 3.1.6 writes its own "
              f"'raw_bytes' extension instead of the core r<N> name, so zarr.json (fill_value as the core list "
              f"of {nb} byte integers) and the chunks (bytes codec without endian + gzip level 5 from Python's "
              f"gzip module, mtime 0) come from make_fixtures.py; {'x'.join(map(str, shape))} in "
              f"{'x'.join(map(str, chunks))} chunks (edge chunks){miss}",
              element_size=nb,
              readers={"zarr-python": "translate: read from a copy whose data_type is zarr-python's raw_bytes "
                                      "extension (fill_value base64); bytes compared unchanged"})


def cases_codec(g: Generator):
    # bytes endianness
    for i, dt in enumerate(["int16", "int32", "int64", "uint16", "uint32", "uint64", "float16", "float32",
                            "float64", "complex64", "complex128"]):
        data = mixed(dt, (10,), seed=300 + i)
        g.zp(f"v3_codec_bytes_be_{dt}", "v3-codec", data, (4,),
             f"bytes endian big, no compressor, {dt}; 10 in chunks of 4 (edge chunk); specials included",
             serializer=BytesCodec(endian="big"), compressors=None)
    for i, dt in enumerate(["int16", "float64", "complex128"]):
        data = mixed(dt, (10,), seed=320 + i)
        g.zp(f"v3_codec_bytes_le_{dt}", "v3-codec", data, (4,),
             f"bytes endian little, no compressor, {dt}; 10 in chunks of 4 (edge chunk)",
             serializer=BytesCodec(endian="little"), compressors=None)
    # transpose
    for i, (shape, chunks, order, dt) in enumerate([
        ((5, 7), (3, 4), (1, 0), "int32"),
        ((3, 4, 5), (2, 3, 5), (2, 0, 1), "uint16"),
        ((3, 4, 5), (2, 3, 5), (1, 2, 0), "float32"),
        ((2, 3, 4, 5), (2, 3, 2, 5), (3, 1, 0, 2), "int16"),
        ((4, 6), (4, 6), (0, 1), "float64"),
    ]):
        data = mixed(dt, shape, seed=340 + i)
        o = "_".join(map(str, order))
        g.zp(f"v3_codec_transpose_{o}", "v3-codec", data, chunks,
             f"transpose order {list(order)} + bytes little + gzip(1), {dt} {list(shape)} in {list(chunks)} chunks"
             + (" (identity permutation)" if list(order) == sorted(order) else " (edge chunks)"),
             filters=[TransposeCodec(order=order)], compressors=[GzipCodec(level=1)])
    # gzip levels
    for lvl in (0, 1, 9):
        data = smooth("int32", (50,), seed=360 + lvl)
        g.zp(f"v3_codec_gzip_l{lvl}", "v3-codec", data, (16,),
             f"bytes little + gzip level {lvl}{' (stored blocks)' if lvl == 0 else ''}, int32 50 in chunks of 16",
             compressors=[GzipCodec(level=lvl)])
    # zstd levels / checksum
    for lvl, ck in ((1, True), (3, False), (19, True), (-3, False), (-1, True)):
        data = smooth("float64", (40,), seed=370 + lvl)
        tag = f"l{lvl}".replace("-", "m") + ("_checksum" if ck else "")
        g.zp(f"v3_codec_zstd_{tag}", "v3-codec", data, (16,),
             f"bytes little + zstd level {lvl}, checksum {str(ck).lower()}; float64 40 in chunks of 16",
             compressors=[ZstdCodec(level=lvl, checksum=ck)])
    # blosc: every cname x shuffle; typesize given; snappy via tensorstore
    cnames = [("lz4", "int32", 5), ("lz4hc", "float64", 9), ("blosclz", "uint16", 1), ("zstd", "int64", 3),
              ("zlib", "float32", 6)]
    for ci, (cname, dt, clevel) in enumerate(cnames):
        for si, shuffle in enumerate(("noshuffle", "shuffle", "bitshuffle")):
            data = smooth(dt, (300,), seed=400 + 10 * ci + si)
            ts = np.dtype(dt).itemsize
            g.zp(f"v3_codec_blosc_{cname}_{shuffle}", "v3-codec", data, (128,),
                 f"bytes little + blosc cname {cname} clevel {clevel} shuffle {shuffle} typesize {ts}; {dt} 300 "
                 "in chunks of 128 (edge chunk); compressible data",
                 compressors=[BloscCodec(cname=cname, clevel=clevel, shuffle=shuffle, typesize=ts, blocksize=0)])
    for si, shuffle in enumerate(("noshuffle", "shuffle", "bitshuffle")):
        cases_blosc_snappy(g, shuffle, seed=460 + si)
    data = smooth("int32", (600,), seed=470)
    g.zp("v3_codec_blosc_lz4_blocksize", "v3-codec", data, (512,),
         "bytes little + blosc lz4 shuffle typesize 4 blocksize 256 (several blocks per 2 KiB chunk); int32 600 "
         "in chunks of 512",
         compressors=[BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=4, blocksize=256)])
    # crc32c
    for comp, tag in ((GzipCodec(level=5), "gzip"),
                      (BloscCodec(cname="zstd", clevel=3, shuffle="shuffle", typesize=4, blocksize=0), "blosc")):
        data = smooth("uint32", (6, 9), seed=480 + len(tag))
        g.zp(f"v3_codec_{tag}_crc32c", "v3-codec", data, (4, 4),
             f"bytes little + {tag} + crc32c; uint32 6x9 in 4x4 chunks (edge chunks)",
             compressors=[comp, Crc32cCodec()])
    data = mixed("float32", (6, 9), seed=490)
    g.zp("v3_codec_bytes_crc32c", "v3-codec", data, (4, 4),
         "bytes little + crc32c (no compressor); float32 6x9 in 4x4 chunks", compressors=[Crc32cCodec()])
    data = mixed("float32", (7, 9), seed=491)
    g.zp("v3_codec_chain_full", "v3-codec", data, (4, 4),
         "full chain: transpose [1,0] + bytes big + blosc(zstd, bitshuffle, typesize 4) + crc32c; float32 7x9 in "
         "4x4 chunks (edge chunks); specials included",
         filters=[TransposeCodec(order=(1, 0))], serializer=BytesCodec(endian="big"),
         compressors=[BloscCodec(cname="zstd", clevel=5, shuffle="bitshuffle", typesize=4, blocksize=0),
                      Crc32cCodec()])
    data = mixed("complex128", (5, 6), seed=492)
    g.zp("v3_codec_chain_gzip_zstd", "v3-codec", data, (3, 4),
         "two compressors in a row: bytes little + gzip(2) + zstd(5); complex128 5x6 in 3x4 chunks",
         compressors=[GzipCodec(level=2), ZstdCodec(level=5)])


def zstd_raw_frame(payload: bytes, block=1000) -> bytes:
    """A zstd frame (RFC 8878) made of raw (stored) blocks, with no Frame_Content_Size field, as
    streaming compressors write it: magic, frame header descriptor 0 (no content size, not single
    segment, no checksum), window descriptor (2^20), then blocks of [3-byte header | bytes]."""
    out = bytearray(b"\x28\xb5\x2f\xfd\x00" + bytes([(20 - 10) << 3]))
    parts = [payload[i:i + block] for i in range(0, len(payload), block)] or [b""]
    for i, part in enumerate(parts):
        last = 1 if i == len(parts) - 1 else 0
        out += (last | (0 << 1) | (len(part) << 3)).to_bytes(3, "little") + part
    return bytes(out)


def cases_stream_variants(g: Generator):
    """Valid but unusual compressed streams, as other writers produce them (chunks re-encoded by hand)."""
    data = smooth("int32", (20,), seed=495)
    padded = np.concatenate([data, np.zeros(4, dtype=data.dtype)]).reshape(3, 8)  # 20 in chunks of 8
    variants = [
        ("v3_codec_zstd_no_content_size", [ZstdCodec(level=1)], lambda raw: zstd_raw_frame(raw, block=12),
         "zstd frames without Frame_Content_Size, made of several raw blocks (as streaming zstd encoders write "
         "them); zarr.json by zarr-python 3.1.6, chunks re-encoded by make_fixtures.py's own minimal zstd writer"),
        ("v3_codec_gzip_multimember", [GzipCodec(level=5)],
         lambda raw: gzip.compress(raw[:13], 5, mtime=0) + gzip.compress(raw[13:], 5, mtime=0),
         "each gzip chunk is two concatenated gzip members (valid RFC 1952; must decode to their concatenation); "
         "zarr.json by zarr-python 3.1.6, chunks from Python's gzip module"),
        ("v3_codec_gzip_header_fields", [GzipCodec(level=5)], gzip_with_fname,
         "gzip chunks whose header carries FNAME and a non-zero MTIME (as the gzip tool writes them); zarr.json by "
         "zarr-python 3.1.6, chunks from Python's gzip module"),
    ]
    for name, comps, enc, notes in variants:
        g.zp(name, "v3-codec", data, (8,), "", compressors=comps, register=False)
        for i in range(3):
            (g.dir(name) / "c" / str(i)).write_bytes(enc(le_bytes(padded[i])))
        g.add(name, "v3-codec", "int32", data.shape, le_bytes(data), HW, notes + "; int32 20 in chunks of 8",
              element_size=4)
    data = np.random.default_rng(496).integers(0, 2**63, 100, dtype=np.uint64)
    g.zp("v3_codec_blosc_incompressible", "v3-codec", data, (64,),
         "blosc lz4 shuffle typesize 8 on random uint64 (incompressible: blosc stores the blocks memcpy'd)",
         compressors=[BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=8, blocksize=0)])


def gzip_with_fname(raw: bytes) -> bytes:
    import io
    bio = io.BytesIO()
    with gzip.GzipFile(filename="chunk.bin", mode="wb", fileobj=bio, compresslevel=5, mtime=1700000000) as f:
        f.write(raw)
    return bio.getvalue()


def cases_blosc_snappy(g: Generator, shuffle, seed):
    try:
        import tensorstore as ts
    except ImportError:
        sys.exit("make_fixtures.py needs tensorstore for the blosc snappy cases (numcodecs has no snappy)")
    name = f"v3_codec_blosc_snappy_{shuffle}"
    data = smooth("complex64", (100,), seed=seed)
    d = g.dir(name)
    spec = {
        "driver": "zarr3", "kvstore": {"driver": "file", "path": str(d)},
        "metadata": {
            "shape": [100], "data_type": "complex64",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [40]}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": [0.0, 0.0],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "blosc", "configuration": {"cname": "snappy", "clevel": 5, "shuffle": shuffle,
                                                           "typesize": 8, "blocksize": 0}}],
        },
        "create": True,
    }
    t = ts.open(spec).result()
    t[...] = data
    g.add(name, "v3-codec", "complex64", data.shape, le_bytes(data), f"tensorstore {tensorstore_version()}",
          f"bytes little + blosc cname snappy shuffle {shuffle} typesize 8; complex64 100 in chunks of 40; written "
          "by tensorstore because numcodecs' bundled c-blosc (hence zarr-python) has no snappy",
          element_size=8,
          readers={"zarr-python": "no: numcodecs' c-blosc is built without snappy (decompression error -5)",
                   "tensorstore": "yes"})


def tensorstore_version():
    try:
        from importlib.metadata import version
        return version("tensorstore")
    except Exception:
        return "unknown"


def hex_fill(name, dtype, bits_str, g: Generator, seed, readers=None):
    """zarr-python writes the array (chunk-aligned regions, fill NaN), then fill_value becomes a hex string."""
    dt = np.dtype(dtype)
    data = mixed(dt, (8, 6), seed=seed)
    fv = float_bits(dt, int(bits_str, 16))
    # written regions are whole chunks, so no written chunk holds zarr-python's own (canonical) fill
    expected = g.zp(name, "v3-fill", data, (4, 3), "", fill=np.nan, regions=[np.s_[0:4, 0:3], np.s_[4:8, 3:6]],
                    expected_fill=fv, register=False)
    g.edit_meta(name, lambda d: d.update(fill_value=bits_str))
    g.add(name, "v3-fill", dt.name, data.shape, le_bytes(expected), HW,
          f"hex fill_value \"{bits_str}\" ({dt.name}, a NaN with payload) : chunks written by zarr-python 3.1.6 "
          "with fill NaN (only chunks c/0/0 and c/1/1, whole chunks), then fill_value rewritten by hand to the "
          "hex form (zarr-python does not write hex fill values); the missing chunks must read with the exact "
          "payload bits", element_size=dt.itemsize, readers=readers)


def cases_fill(g: Generator):
    regions = [np.s_[0:4, 0:3], np.s_[4:7, 3:5]]  # of 7x5 in 4x3 chunks: 2 of 4 chunks written
    spec = [
        ("nan_float32", "float32", np.nan, "\"NaN\""),
        ("inf_float64", "float64", np.inf, "\"Infinity\""),
        ("neginf_float16", "float16", -np.inf, "\"-Infinity\""),
        ("negzero_float64", "float64", -0.0, "-0.0"),
        ("negzero_float32", "float32", -0.0, "-0.0"),
        ("complex64_nan_inf", "complex64", complex(np.nan, np.inf), "[\"NaN\", \"Infinity\"]"),
        ("complex128_neginf_negzero", "complex128", complex(-np.inf, -0.0), "[\"-Infinity\", -0.0]"),
        ("complex128_values", "complex128", complex(1.5, -2.25), "[1.5, -2.25]"),
        ("bool_true", "bool", True, "true"),
        ("uint64_max", "uint64", np.iinfo(np.uint64).max, "18446744073709551615"),
        ("int64_min", "int64", np.iinfo(np.int64).min, "-9223372036854775808"),
        ("int32_42", "int32", 42, "42"),
        ("int8_neg", "int8", -7, "-7"),
        ("uint16_nonzero", "uint16", 65000, "65000"),
        ("float32_value", "float32", 3.25, "3.25"),
        # 17 significant digits, as zarr-python writes (Python's shortest round-trip repr): the JSON number
        # must be converted with correct rounding (a 1-ulp error changes every missing chunk)
        ("float64_17_digits", "float64", 0.9748618674097633, "0.9748618674097633"),
        ("float64_tiny", "float64", -1.5e-300, "-1.5e-300"),
    ]
    for i, (tag, dt, fv, shown) in enumerate(spec):
        data = mixed(dt, (7, 5), seed=500 + i)
        if np.dtype(dt).kind == "b":
            data = np.zeros((7, 5), dtype=bool)
            data[::2, 1::2] = True
        g.zp(f"v3_fill_{tag}", "v3-fill", data, (4, 3),
             f"fill_value {shown} ({dt}); 7x5 in 4x3 chunks, only chunks c/0/0 and c/1/1 written, the other two "
             "missing (read as the fill value); written chunks that are partial edge chunks are padded by the writer",
             fill=fv, regions=regions)
    hex_fill("v3_fill_hex_nan_float32", "float32", "0x7fc00001", g, 540)
    hex_fill("v3_fill_hex_nan_float64", "float64", "0x7ff8000000000001", g, 541)
    hex_fill("v3_fill_hex_nan_float16", "float16", "0x7e01", g, 542,
             readers={"zarr-python": "deviation: zarr-python 3.1.6 parses the float16 hex fill 0x7e01 as the "
                                     "canonical NaN 0x7e00 (payload lost); the expected file keeps 0x7e01"})
    # a hex fill that is not a NaN
    name = "v3_fill_hex_float64_value"
    data = mixed("float64", (8, 6), seed=543)
    fv = float_bits("float64", 0xC00921FB54442D18)  # -pi
    expected = g.zp(name, "v3-fill", data, (4, 3), "", fill=0.0, regions=[np.s_[0:4, 3:6]], expected_fill=fv,
                    register=False)
    g.edit_meta(name, lambda d: d.update(fill_value="0xc00921fb54442d18"))
    g.add(name, "v3-fill", "float64", data.shape, le_bytes(expected), HW,
          "hex fill_value \"0xc00921fb54442d18\" (= -pi, not a NaN): chunk c/0/1 written by zarr-python 3.1.6, "
          "fill_value rewritten by hand to the hex form; three chunks missing", element_size=8)


def cases_shape(g: Generator):
    g.zp("v3_shape_edge_3d", "v3-shape", mixed("int16", (3, 5, 4), 600), (2, 3, 3),
         "3-D 3x5x4 in 2x3x3 chunks: edge chunks on every axis, default codecs")
    g.zp("v3_shape_chunk_larger", "v3-shape", mixed("float32", (5, 3), 601), (8, 8),
         "chunk 8x8 larger than the 5x3 array: one partial chunk")
    g.zp("v3_shape_0d", "v3-shape", np.array(-12345, dtype=np.int32), (),
         "0-d array (shape []) written; its one chunk has key 'c'")
    g.zp("v3_shape_0d_complex128", "v3-shape", np.array(complex(-0.0, np.nan), dtype=np.complex128), (),
         "0-d complex128 array written (value (-0.0, NaN)), big-endian bytes", serializer=BytesCodec(endian="big"))
    g.zp("v3_shape_0d_unwritten", "v3-shape", np.array(7, dtype=np.int16), (),
         "0-d array never written: reads as fill_value 7", fill=7, regions=[])
    g.zp("v3_shape_zero_len_1d", "v3-shape", np.zeros((0,), dtype=np.float64), (4,),
         "1-D array of length 0 (empty expected file)")
    g.zp("v3_shape_zero_len_3d", "v3-shape", np.zeros((3, 0, 2), dtype=np.uint8), (2, 1, 2),
         "3-D array 3x0x2 (zero-length middle dimension; empty expected file)")
    g.zp("v3_shape_long_1d", "v3-shape", smooth("uint16", (1500,), 602), (512,),
         "1-D 1500 uint16 in chunks of 512 (edge chunk)")
    g.zp("v3_shape_4d", "v3-shape", mixed("int8", (3, 2, 4, 5), 603), (2, 2, 3, 3),
         "4-D 3x2x4x5 in 2x2x3x3 chunks (edge chunks on axes 0, 2, 3)")
    data = smooth("int32", (8, 8), 604)
    g.zp("v3_shape_missing_chunks", "v3-shape", data, (4, 4),
         "8x8 in 4x4 chunks; only c/0/1 and c/1/0 written, c/0/0 and c/1/1 missing (fill_value -1)",
         fill=-1, regions=[np.s_[0:4, 4:8], np.s_[4:8, 0:4]])
    data = smooth("float32", (10,), 605)
    g.zp("v3_shape_missing_partial", "v3-shape", data, (4,),
         "10 in chunks of 4; a region write [3:5] touched chunks c/0 and c/1 only partly; c/2 missing "
         "(fill_value 0.5)", fill=0.5, regions=[np.s_[3:5]])
    g.zp("v3_shape_chunk_one", "v3-shape", mixed("uint8", (2, 3), 606), (1, 1),
         "2x3 in 1x1 chunks (one element per chunk)")


def cases_chunk_key(g: Generator):
    data = mixed("int32", (4, 5), 700)
    for enc, sep in (("default", "/"), ("default", "."), ("v2", "."), ("v2", "/")):
        tag = {"/": "slash", ".": "dot"}[sep]
        keys = {"default": f"c{sep}0{sep}1", "v2": f"0{sep}1"}[enc]
        g.zp(f"v3_cke_{enc}_{tag}", "v3-chunk-key", data, (2, 3),
             f"chunk_key_encoding {enc} separator '{sep}' (keys like '{keys}'); 4x5 in 2x3 chunks",
             cke={"name": enc, "separator": sep})
    g.zp("v3_cke_v2_0d", "v3-chunk-key", np.array(3.5, dtype=np.float32), (),
         "0-d array with chunk_key_encoding v2 '.': its chunk key is '0'", cke={"name": "v2", "separator": "."})


def cases_metadata(g: Generator):
    g.zp("v3_meta_dimension_names", "v3-metadata", mixed("uint8", (2, 3, 4), 800), (2, 2, 2),
         "dimension_names [\"x\", null, \"z\"]", dimension_names=["x", None, "z"])
    attrs = {"title": "température °C", "emoji": "🧊❄", "日本語": True, "nested": {"a": [1, 2.5, {"b": None}],
             "empty": {}, "list": []}, "big": 18446744073709551615, "neg": -1.5e-300}
    g.zp("v3_meta_attributes_unicode", "v3-metadata", mixed("int16", (4,), 801), (3,),
         "nested and non-ASCII attributes (UTF-8 in zarr.json): " + json.dumps(attrs, ensure_ascii=False),
         attributes=attrs)
    # invalid metadata: each is a zarr-python array edited by hand
    bad = [
        ("bad_json", "zarr.json truncated mid-document (not valid JSON)",
         lambda p: p.write_text(p.read_text()[:60])),
        ("missing_fill_value", "required member fill_value removed", lambda p: edit(p, lambda d: d.pop("fill_value"))),
        ("wrong_fill_type", "int32 fill_value is the string \"zero\"",
         lambda p: edit(p, lambda d: d.update(fill_value="zero"))),
        ("fill_float_for_int", "int32 fill_value 1.5 (not an integer)",
         lambda p: edit(p, lambda d: d.update(fill_value=1.5))),
        ("chunk_rank_mismatch", "chunk_shape [4] for a 2-D array of shape [8, 8]",
         lambda p: edit(p, lambda d: d["chunk_grid"]["configuration"].update(chunk_shape=[4]))),
        ("bytes_no_endian", "int16 with a bytes codec without endian (required for multi-byte types)",
         lambda p: edit(p, lambda d: d["codecs"][0].pop("configuration"))),
        ("missing_shape", "required member shape removed", lambda p: edit(p, lambda d: d.pop("shape"))),
        ("zero_chunk", "chunk_shape [0, 4] (chunk extents must be positive)",
         lambda p: edit(p, lambda d: d["chunk_grid"]["configuration"].update(chunk_shape=[0, 4]))),
    ]
    for tag, what, fn in bad:
        name = f"v3_meta_err_{tag}"
        dt = "int16" if tag == "bytes_no_endian" else "int32"
        g.zp(name, "v3-metadata", smooth(dt, (8, 8), 810), (4, 4), "", register=False)
        fn(g.dir(name) / "zarr.json")
        g.add(name, "v3-metadata", dt, (8, 8), None, HW,
              f"{what}: invalid_metadata (base array written by zarr-python 3.1.6, zarr.json edited by make_fixtures.py)",
              element_size=np.dtype(dt).itemsize, expect_error="invalid_metadata")


def edit(p, fn):
    doc = json.loads(p.read_text())
    fn(doc)
    p.write_text(json.dumps(doc, indent=2) + "\n")


def cases_extension(g: Generator):
    base = "(base array written by zarr-python 3.1.6, zarr.json edited by make_fixtures.py)"
    data = mixed("float32", (6, 5), 900)
    name = "v3_ext_must_understand_false"
    g.zp(name, "v3-extension", data, (4, 4), "", register=False)
    g.edit_meta(name, lambda d: d.update(zz_extension={"must_understand": False, "value": 1}))
    g.add(name, "v3-extension", "float32", data.shape, le_bytes(data), HW,
          "unknown top-level member zz_extension {\"must_understand\": false}: must open and read normally " + base,
          element_size=4)
    errs = [
        ("must_understand_true", "unknown top-level member zz_extension {\"must_understand\": true}",
         lambda d: d.update(zz_extension={"must_understand": True, "value": 1})),
        ("must_understand_absent", "unknown top-level member zz_extension without must_understand (defaults to true)",
         lambda d: d.update(zz_extension={"value": 1})),
        ("unknown_codec", "unknown bytes->bytes codec 'zz_unknown_codec' appended to the chain",
         lambda d: d["codecs"].append({"name": "zz_unknown_codec", "configuration": {}})),
        ("unknown_data_type", "unknown data_type 'zz_unknown_type' (fill_value 0)",
         lambda d: d.update(data_type="zz_unknown_type", fill_value=0)),
        ("unknown_chunk_grid", "unknown chunk_grid 'zz_grid'",
         lambda d: d["chunk_grid"].update(name="zz_grid")),
        ("unknown_chunk_key_encoding", "unknown chunk_key_encoding 'zz_encoding'",
         lambda d: d["chunk_key_encoding"].update(name="zz_encoding")),
        ("unknown_storage_transformer", "unknown storage transformer 'zz_transformer'",
         lambda d: d.update(storage_transformers=[{"name": "zz_transformer", "configuration": {}}])),
    ]
    for tag, what, fn in errs:
        name = f"v3_ext_{tag}"
        g.zp(name, "v3-extension", data, (4, 4), "", register=False)
        g.edit_meta(name, fn)
        unknown_dt = tag == "unknown_data_type"
        g.add(name, "v3-extension", "zz_unknown_type" if unknown_dt else "float32", data.shape, None,
              HW, f"{what}: must be refused as unsupported {base}", element_size=None if unknown_dt else 4,
              expect_error="unsupported")


def cases_corrupt(g: Generator):
    base = "(base array written by zarr-python 3.1.6, chunk damaged by make_fixtures.py)"

    def corrupt(name, dt, comps, key, how, what, err, serializer="auto", shape=(8, 8), chunks=(4, 4)):
        data = smooth(dt, shape, 1000 + len(g.cases))
        g.zp(name, "v3-corrupt", data, chunks, "", compressors=comps, serializer=serializer, register=False)
        p = g.dir(name) / key
        b = p.read_bytes()
        p.write_bytes(how(b))
        g.add(name, "v3-corrupt", dt, shape, le_bytes(data), HW, f"{what} {base}",
              element_size=np.dtype(dt).itemsize, expect_error=err, corrupt_keys=[key])

    def flip_last(b):
        return b[:-1] + bytes([b[-1] ^ 0x5A])

    def half(b):
        return b[: len(b) // 2]

    corrupt("v3_corrupt_crc32c", "int32", [GzipCodec(level=5), Crc32cCodec()], "c/0/1", flip_last,
            "gzip + crc32c; the stored crc32c of chunk c/0/1 altered (payload intact)", "checksum")
    corrupt("v3_corrupt_crc32c_payload", "int32", [Crc32cCodec()], "c/1/0",
            lambda b: bytes([b[0] ^ 1]) + b[1:],
            "bytes + crc32c; the first payload byte of chunk c/1/0 altered (stored crc32c intact)", "checksum")
    corrupt("v3_corrupt_truncated_gzip", "int32", [GzipCodec(level=5)], "c/1/0", half,
            "gzip chunk c/1/0 truncated to half its length", "codec")
    corrupt("v3_corrupt_truncated_zstd", "float64", [ZstdCodec(level=3)], "c/0/0", half,
            "zstd chunk c/0/0 truncated to half its length", "codec")
    corrupt("v3_corrupt_zstd_checksum", "float64", [ZstdCodec(level=3, checksum=True)], "c/1/1",
            lambda b: b[:-4] + bytes(x ^ 0xFF for x in b[-4:]),
            "zstd (checksum true) chunk c/1/1 with its frame content checksum altered", "codec")
    corrupt("v3_corrupt_truncated_blosc", "int16",
            [BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=2, blocksize=0)], "c/0/1", half,
            "blosc(lz4, shuffle) chunk c/0/1 (512 bytes decoded, compressed) truncated to half its length "
            "(16-byte header intact, so its cbytes no longer matches); int16 24x24 in 16x16 chunks", "codec",
            shape=(24, 24), chunks=(16, 16))
    corrupt("v3_corrupt_raw_short", "int32", None, "c/1/1", lambda b: b[:-4],
            "bytes codec only; chunk c/1/1 is 60 bytes instead of 64 (wrong decoded length)", "codec")
    corrupt("v3_corrupt_raw_long", "int32", None, "c/0/0", lambda b: b + b"\0\0\0\0",
            "bytes codec only; chunk c/0/0 is 68 bytes instead of 64 (wrong decoded length)", "codec")
    corrupt("v3_corrupt_gzip_garbage", "uint16", [GzipCodec(level=5)], "c/0/0", lambda b: b"not a gzip stream",
            "gzip chunk c/0/0 replaced by non-gzip bytes", "codec")


def cases_sharding(g: Generator):
    """sharding_indexed written by zarr-python: index at either end, several inner chains, edge shards,
    empty inner chunks and missing shards, nested sharding; then damaged shards."""
    le, be = BytesCodec(endian="little"), BytesCodec(endian="big")
    crc_index = [le, Crc32cCodec()]

    def shard(inner, codecs, location="end", index_codecs=None):
        return ShardingCodec(chunk_shape=inner, codecs=codecs, index_codecs=index_codecs or crc_index,
                             index_location=location)

    g.zp("v3_shard_end_gzip", "v3-sharding", smooth("int32", (23, 17), 2000), (10, 10),
         "sharding_indexed: shards 10x10 of inner 5x5 [bytes, gzip(1)], index [bytes, crc32c] at the end; "
         "int32 23x17 (edge shards with inner chunks wholly outside the array)",
         serializer=shard((5, 5), [le, GzipCodec(level=1)]), compressors=None)
    g.zp("v3_shard_start_zstd", "v3-sharding", smooth("uint16", (32, 32), 2001), (16, 16),
         "sharding_indexed: shards 16x16 of inner 4x8 [bytes, zstd(3)], index [bytes, crc32c] at the start; uint16 32x32",
         serializer=shard((4, 8), [le, ZstdCodec(level=3)], "start"), compressors=None)
    data = smooth("float64", (20, 20), 2002)
    g.zp("v3_shard_partial", "v3-sharding", data, (10, 10),
         "sharding_indexed: shards 10x10 of inner 5x5 [bytes, zstd(1)]; only [0:5, 0:5] and [12:14, 3:17] written: "
         "empty inner chunks (offset = nbytes = 2^64-1), one shard never stored; fill value -1.5",
         serializer=shard((5, 5), [le, ZstdCodec(level=1)]), compressors=None, fill=-1.5,
         regions=[np.s_[0:5, 0:5], np.s_[12:14, 3:17]])
    g.zp("v3_shard_transpose_blosc", "v3-sharding", smooth("int16", (12, 10, 8), 2003), (6, 10, 8),
         "sharding_indexed: shards 6x10x8 of inner 3x5x4 [transpose (2,0,1), bytes, blosc lz4 shuffle]; int16 12x10x8",
         serializer=shard((3, 5, 4), [TransposeCodec(order=(2, 0, 1)), le,
                                      BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=2)]),
         compressors=None)
    g.zp("v3_shard_raw_bigendian", "v3-sharding", mixed("uint32", (9, 9), 2004), (9, 9),
         "sharding_indexed: one 9x9 shard of inner 3x3 [bytes big, crc32c] (uncompressed inner chunks), "
         "index [bytes little] with no checksum at the start; uint32",
         serializer=shard((3, 3), [be, Crc32cCodec()], "start", [le]), compressors=None)
    g.zp("v3_shard_nested", "v3-sharding", smooth("uint8", (16, 16), 2005), (16, 16),
         "nested sharding_indexed: a 16x16 shard of 8x8 inner shards, each of 4x4 inner chunks [bytes, gzip(5)]",
         serializer=shard((8, 8), [shard((4, 4), [le, GzipCodec(level=5)])]), compressors=None)

    base = "(base array written by zarr-python 3.1.6, shard damaged by make_fixtures.py)"

    def corrupt(name, location, how, what, err):
        data = smooth("int32", (8, 8), 2100 + len(g.cases))
        g.zp(name, "v3-corrupt", data, (8, 8), "", serializer=shard((4, 4), [le, GzipCodec(level=1)], location),
             compressors=None, register=False)
        key = "c/0/0"
        p = g.dir(name) / key
        p.write_bytes(how(p.read_bytes()))
        g.add(name, "v3-corrupt", "int32", (8, 8), le_bytes(data), HW, f"{what} {base}",
              element_size=4, expect_error=err, corrupt_keys=[key])

    def flip_index_byte(b):
        return b[:-10] + bytes([b[-10] ^ 0x01]) + b[-9:]

    corrupt("v3_corrupt_shard_index_crc", "end", flip_index_byte,
            "sharded (index [bytes, crc32c] at the end): one byte of the index altered, stored crc32c intact", "checksum")
    corrupt("v3_corrupt_shard_truncated", "end", lambda b: b[: len(b) // 2],
            "sharded (index [bytes, crc32c] at the end): shard file truncated to half its length, so the "
            "bytes where its index should be fail the index crc32c", "checksum")
    corrupt("v3_corrupt_shard_inner_truncated", "start", lambda b: b[:-3],
            "sharded (index at the start): the last inner chunk cut short by 3 bytes, so its index entry "
            "points beyond the end of the shard file", "codec")


def cases_group(g: Generator):
    root = g.out / "v3" / "hier"
    grp = zarr.create_group(store=LocalStore(str(root)), zarr_format=3,
                            attributes={"title": "fixture root", "version": 1, "tags": ["a", "é"]})
    sub = grp.create_group("sub", attributes={"level": 1, "nested": {"k": [1, None, True]}})
    grp.create_group("empty")
    deep = sub.create_group("deep", attributes={"level": 2, "scale": 0.9748618674097633})
    for name, parent, rel, dt, shape, chunks, seed in (
        ("arr0", grp, "arr0", "int32", (6, 6), (4, 4), 1100),
        ("arr1", sub, "sub/arr1", "float64", (10,), (4,), 1101),
        ("arr2", deep, "sub/deep/arr2", "uint16", (5, 5), (3, 3), 1102),
    ):
        data = mixed(dt, shape, seed)
        a = parent.create_array(name, shape=shape, chunks=chunks, dtype=dt, attributes={"name": name})
        a[...] = data
        g.add(f"v3_group_{name}", "v3-group", dt, shape, le_bytes(data), ZP,
              f"array {name} inside group v3/hier{'/' + rel.rsplit('/', 1)[0] if '/' in rel else ''}",
              element_size=np.dtype(dt).itemsize, path=f"v3/hier/{rel}")
    for path, attrs, children in (
        ("v3/hier", {"title": "fixture root", "version": 1, "tags": ["a", "é"]},
         {"arr0": "array", "empty": "group", "sub": "group"}),
        ("v3/hier/sub", {"level": 1, "nested": {"k": [1, None, True]}}, {"arr1": "array", "deep": "group"}),
        ("v3/hier/sub/deep", {"level": 2, "scale": 0.9748618674097633}, {"arr2": "array"}),
        ("v3/hier/empty", {}, {}),
    ):
        g.groups.append({"path": path, "zarr_format": 3, "writer": ZP, "attributes": attrs, "children": children,
                         "notes": "group written by zarr-python 3.1.6 (create_group / create_array)"})


# ------------------------------------------------------------------------------------------------
# Zarr v2 (zarr-python with zarr_format=2, numcodecs) and Zarr v1 (hand-written)
#
# Expected files follow the same rules as for v3: C order, every scalar little-endian (structured
# elements: packed fields, each leaf little-endian), datetime64/timedelta64 as int64, |S<n>/|V<n>/<U<n>
# as their n (4n) stored bytes. `source_dtype` records the dtype exactly as the metadata stores it.

NO_FILL = object()


def descr_json(dt):
    """The v2 `dtype` JSON of a numpy dtype, as zarr-python 2 wrote it (the numpy descr as lists)."""
    dt = np.dtype(dt)
    return json.loads(json.dumps(dt.descr)) if dt.names else dt.str


def manifest_type(dt):
    """The manifest `data_type` of a v1/v2 dtype: the v3 core name, r<N> for S/V/U, int64 for M8/m8, struct."""
    dt = np.dtype(dt)
    if dt.names:
        return "struct"
    if dt.kind in "SVU":
        return f"r{8 * dt.itemsize}"
    if dt.kind in "Mm":
        return "int64"
    return dt.name


def manifest_fields(dt):
    """`fields` of a structured dtype: [name, type] (type a v3 name, or a nested field list), plus the
    subarray shape as a third member when the field is a subarray."""
    dt = np.dtype(dt)
    if not dt.names:
        return None
    out = []
    for n in dt.names:
        sub = dt.fields[n][0]
        base, shape = (sub.base, list(sub.shape)) if sub.subdtype else (sub, [])
        out.append([n, manifest_fields(base) if base.names else manifest_type(base)] + ([shape] if shape else []))
    return out


def v2_fill_json(dt, value):
    """A v2 fill_value (value given as a numpy scalar / bytes) in its JSON form: base64 of the stored
    bytes for S/V/structured types."""
    dt = np.dtype(dt)
    if value is None:
        return None
    if dt.names or dt.kind in "SV":
        return base64.b64encode(np.array(value, dtype=dt).tobytes()).decode()
    v = np.array(value, dtype=dt)[()]
    if dt.kind == "b":
        return bool(v)
    if dt.kind in "iu":
        return int(v)
    if dt.kind in "Mm":
        return int(v.view("i8"))

    def f(x):
        x = float(x)
        return "NaN" if np.isnan(x) else ("Infinity" if x == np.inf else ("-Infinity" if x == -np.inf else x))

    if dt.kind == "c":
        return [f(v.real), f(v.imag)]
    return f(v)


def roundtrip_filters(data, filters):
    """What numcodecs' own decode gives back after its encode (lossy filters): elementwise filters, so
    applying them to the whole array equals applying them chunk by chunk."""
    x = np.ascontiguousarray(data).reshape(-1)
    for f in filters:
        x = f.encode(x)
    for f in reversed(filters):
        x = f.decode(x)
    x = np.asarray(x)
    return np.frombuffer(np.ascontiguousarray(x).tobytes(), dtype=data.dtype).reshape(data.shape).copy()


def zp2(g: Generator, name, kind, data, chunks, notes, *, fill=NO_FILL, filters=None, compressor=None,
        order="C", sep=".", attributes=None, regions=None, decoded=None, path=None, register=True, readers=None,
        parent=None):
    """Writes `data` with zarr-python as a Zarr v2 array (only `regions` when given; the other chunks stay
    missing). `decoded`: what a reader gets back where `data` was written (lossy filters). Returns the
    expected array."""
    rel = path or f"v2/{name}"
    kwargs = dict(shape=data.shape, chunks=chunks, dtype=data.dtype, filters=filters or None,
                  compressors=compressor, order=order, chunk_key_encoding={"name": "v2", "separator": sep})
    if fill is not NO_FILL:
        kwargs["fill_value"] = fill
    if attributes is not None:
        kwargs["attributes"] = attributes
    if parent is None:
        arr = zarr.create_array(store=LocalStore(str(g.out / rel)), zarr_format=2, **kwargs)
    else:
        arr = parent.create_array(rel.rsplit("/", 1)[1], **kwargs)
    src = decoded if decoded is not None else data
    if regions is None:
        if data.size:
            arr[...] = data
        expected = src.copy()
    else:
        expected = np.empty_like(src)
        expected[...] = arr.fill_value
        for r in regions:
            arr[r] = data[r]
            expected[r] = src[r]
    if register:
        zarray = json.loads((g.out / rel / ".zarray").read_text())
        g.add(name, kind, manifest_type(data.dtype), data.shape, le_bytes(expected), ZP, notes,
              element_size=data.dtype.itemsize, path=rel, zarr_format=2, source_dtype=zarray["dtype"],
              fields=manifest_fields(data.dtype), readers=readers)
    return expected


def write_chunks(d: Path, data, chunks, fill, order, sep, encode, missing=(), full_edge=True):
    """Hand-written chunks of `data` (full-size chunks, padding = fill) stored as `encode(raw bytes)`;
    returns the expected array (missing chunks read as the fill value)."""
    expected = data.copy()
    for ci in np.ndindex(*grid_of(data.shape, chunks)):
        sl = chunk_slices(ci, chunks, data.shape)
        if tuple(ci) in missing:
            expected[sl] = fill
            continue
        chunk = np.empty(chunks, dtype=data.dtype)
        chunk[...] = fill
        chunk[tuple(slice(0, s.stop - s.start) for s in sl)] = data[sl]
        key = d / sep.join(map(str, ci)) if data.ndim else d / "0"
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(encode(chunk.tobytes(order=order)))
    return expected


def hw2(g: Generator, name, kind, data, chunks, notes, *, fill=None, compressor=None, order="C", sep=".",
        missing=(), readers=None):
    """A hand-written Zarr v2 array: .zarray by this script, chunks by numpy (+ a numcodecs compressor)."""
    rel = f"v2/{name}"
    d = g.out / rel
    dt = data.dtype
    zarray = {"chunks": list(chunks), "compressor": compressor.get_config() if compressor else None,
              "dimension_separator": sep, "dtype": descr_json(dt), "fill_value": v2_fill_json(dt, fill),
              "filters": None, "order": order, "shape": list(data.shape), "zarr_format": 2}
    g.write_json(d / ".zarray", zarray)
    padding = np.zeros((), dtype=dt) if fill is None else np.array(fill, dtype=dt)
    enc = compressor.encode if compressor else (lambda b: b)
    expected = write_chunks(d, data, chunks, padding, order, sep, lambda b: bytes(enc(b)), missing)
    g.add(name, kind, manifest_type(dt), data.shape, le_bytes(expected), HW, notes, element_size=dt.itemsize,
          path=rel, zarr_format=2, source_dtype=zarray["dtype"], fields=manifest_fields(dt),
          readers=readers or {"zarr-python": "no: zarr-python 3.1.6 has no data type for structured dtypes with "
                                             "subarray or nested fields (verified with the independent "
                                             "numpy + numcodecs reader tools/np_zarr.py instead)"})
    return expected


def v2_types():
    out = ["|b1", "|i1", "|u1"]
    for t in ("i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"):
        out += [f"<{t}", f">{t}"]
    return out


def cases_v2_dtype(g: Generator):
    for i, ts in enumerate(v2_types()):
        dt = np.dtype(ts)
        data = mixed(dt.name, (5, 7), seed=2000 + i).astype(dt)
        tag = ts[1:] if ts[0] == "|" else ("le_" if ts[0] == "<" else "be_") + ts[1:]
        comp = None if i % 2 else numcodecs.Zlib(level=1)
        zp2(g, f"v2_dtype_{tag}", "v2-dtype", data, (3, 4),
            f"v2 dtype {ts} ({dt.name}, {'big' if ts[0] == '>' else 'little'}-endian chunks"
            f"{'' if ts[0] != '|' else ', byte order not relevant'}); {'no compressor' if comp is None else 'zlib(1)'}; "
            "5x7 in 3x4 chunks (edge chunks); specials first (int min/max; NaN, NaN payloads, +-Inf, -0.0, "
            "subnormals)", compressor=comp)
    # fixed-length bytes, with embedded and trailing NULs; zarr-python's default fill for |S is "" (base64 of b"")
    s = np.array([b"abc", b"", b"hello", b"a\0b", b"\xff\xfe", b"zz\0\0z", b"12345", b"\0"], dtype="|S5")
    zp2(g, "v2_dtype_S5", "v2-dtype", s, (3,),
        "v2 dtype |S5 (r40: 5 raw bytes, NUL padding and embedded NULs preserved); 8 in chunks of 3; zarr-python "
        "writes its default fill_value \"\" (base64 of zero bytes: read as 5 zero bytes)", compressor=None)
    v = np.frombuffer(np.random.default_rng(2100).integers(0, 256, 30, dtype=np.uint8).tobytes(), dtype="|V3")
    zp2(g, "v2_dtype_V3", "v2-dtype", v.reshape(2, 5), (2, 2),
        "v2 dtype |V3 (r24, opaque bytes); 2x5 in 2x2 chunks; default fill \"AAAA\"", compressor=numcodecs.Zlib(1))
    u = np.array(["abc", "é", "", "🧊x", "a\0b", "zz"], dtype="<U3")
    zp2(g, "v2_dtype_U3", "v2-dtype", u, (4,),
        "v2 dtype <U3 (r96: 3 UTF-32LE code units per element, NUL padded); zarr-python writes the default "
        "fill_value \"\" (an empty string, not base64)", compressor=None)
    nat = np.iinfo(np.int64).min
    m = np.array([0, 1, -1, nat, 1_700_000_000_000_000_000, nat + 1, 2**62, 7, -(2**40), 123456789],
                 dtype="<i8").view("<M8[ns]")
    zp2(g, "v2_dtype_M8_ns", "v2-dtype", m, (4,),
        "v2 dtype <M8[ns] (datetime64, read as int64: NaT = -2^63); 10 in chunks of 4; default fill NaT "
        "(-9223372036854775808)", compressor=None)
    td = np.array([0, -5, 86400, nat, 2**63 - 1, 3], dtype="<i8").view("<m8[s]")
    zp2(g, "v2_dtype_m8_s", "v2-dtype", td, (4,),
        "v2 dtype <m8[s] (timedelta64, read as int64); 6 in chunks of 4", compressor=numcodecs.Zlib(1))
    # structured: [name, type] written by zarr-python (mixed byte orders)
    st = np.dtype([("x", "<f4"), ("y", ">i2"), ("z", "|u1"), ("flag", "|b1"), ("c", ">c8")])
    rec = np.zeros((4, 3), dtype=st)
    rng = np.random.default_rng(2101)
    rec["x"] = specials("float32")[:12].reshape(4, 3)
    rec["y"] = rng.integers(-30000, 30000, (4, 3))
    rec["z"] = rng.integers(0, 256, (4, 3))
    rec["flag"] = rng.integers(0, 2, (4, 3))
    rec["c"] = (rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))).astype("c8")
    zp2(g, "v2_dtype_struct", "v2-dtype", rec, (3, 2),
        "structured dtype [[x,<f4],[y,>i2],[z,|u1],[flag,|b1],[c,>c8]] (16 bytes packed; mixed byte orders); "
        "4x3 in 3x2 chunks (edge chunks); x holds float specials", compressor=numcodecs.Zlib(1))
    # structured with subarray fields and nested structures: hand-written (zarr-python 3.1.6 cannot write them)
    sub = np.dtype([("id", "<u2"), ("v", ">f4", (2,)), ("m", "|i1", (2, 3))])
    a = np.zeros(7, dtype=sub)
    a["id"] = np.arange(7) * 1000 + 1
    a["v"] = rng.standard_normal((7, 2)).astype("f4")
    a["m"] = rng.integers(-128, 128, (7, 2, 3))
    hw2(g, "v2_dtype_struct_subarray", "v2-dtype", a, (3,),
        "hand-written: structured dtype with subarray fields [[id,<u2],[v,>f4,[2]],[m,|i1,[2,3]]] (16 bytes packed; "
        "subarray items in C order, v big-endian); 7 in chunks of 3; fill_value null, all chunks written; .zarray "
        "and raw chunks (no compressor) written by make_fixtures.py with numpy")
    nest = np.dtype([("a", "<i2"), ("n", [("p", ">f8"), ("q", "|b1")]), ("t", "<u4")])
    b = np.zeros((3, 4), dtype=nest)
    b["a"] = rng.integers(-3000, 3000, (3, 4))
    b["n"]["p"] = specials("float64")[:12].reshape(3, 4)
    b["n"]["q"] = rng.integers(0, 2, (3, 4))
    b["t"] = rng.integers(0, 2**32, (3, 4))
    fill = np.array((-1, (1.5, True), 7), dtype=nest)
    hw2(g, "v2_dtype_struct_nested", "v2-dtype", b, (2, 3),
        "hand-written: nested structured dtype [[a,<i2],[n,[[p,>f8],[q,|b1]]],[t,<u4]] (15 bytes packed); 3x4 in "
        "2x3 chunks; chunk 1.1 missing, fill_value base64 of the stored element (-1, (1.5, true), 7); zlib(1) "
        "chunks by numcodecs", fill=fill, compressor=numcodecs.Zlib(1), missing={(1, 1)})
    pts = np.dtype([("pts", [("x", "<i2"), ("y", ">i2")], (3,)), ("k", "|u1")])
    c = np.zeros(5, dtype=pts)
    c["pts"]["x"] = rng.integers(-100, 100, (5, 3))
    c["pts"]["y"] = rng.integers(-100, 100, (5, 3))
    c["k"] = np.arange(5)
    hw2(g, "v2_dtype_struct_nested_subarray", "v2-dtype", c, (2,),
        "hand-written: a subarray of structures [[pts,[[x,<i2],[y,>i2]],[3]],[k,|u1]] (13 bytes packed); 5 in "
        "chunks of 2; fill null, all chunks written, uncompressed")
    # object dtype |O (variable-length strings) moved to tools/make_vlen_fixtures.py (case v2_dtype_object_vlen_utf8)


def cases_v2_order(g: Generator):
    zp2(g, "v2_order_F_2d", "v2-order", mixed("int32", (5, 7), 2200), (3, 4),
        "order \"F\": chunk bytes in Fortran order (first index fastest); <i4 5x7 in 3x4 chunks (edge chunks), "
        "uncompressed", order="F")
    data = mixed("float64", (4, 5, 6), 2201)
    zp2(g, "v2_order_F_3d", "v2-order", data, (3, 2, 4),
        "order \"F\" 3-D <f8 4x5x6 in 3x2x4 chunks (edge chunks on every axis), zlib(1); fill -1.5, only 3 "
        "regions written (other chunks missing)", order="F", compressor=numcodecs.Zlib(1), fill=-1.5,
        regions=[np.s_[0:3, 0:2, 0:4], np.s_[3:4, 2:5, 1:6], np.s_[1:2, 4:5, 4:5]])
    zp2(g, "v2_order_F_be_blosc", "v2-order", mixed("uint16", (6, 5), 2202).astype(">u2"), (4, 3),
        "order \"F\" with big-endian >u2 and blosc(lz4, shuffle 1); 6x5 in 4x3 chunks",
        order="F", compressor=numcodecs.Blosc("lz4", 5, 1))
    zp2(g, "v2_order_F_1d", "v2-order", mixed("int16", (10,), 2203), (4,),
        "order \"F\" on a 1-D array (same bytes as C); 10 in chunks of 4", order="F")
    zp2(g, "v2_order_F_4d", "v2-order", mixed("int8", (3, 2, 4, 5), 2204), (2, 2, 3, 2),
        "order \"F\" 4-D |i1 3x2x4x5 in 2x2x3x2 chunks, zstd(3)", order="F", compressor=numcodecs.Zstd(level=3))
    rec = np.zeros((3, 4), dtype=[("x", "<f4"), ("y", ">i2")])
    rec["x"] = np.arange(12).reshape(3, 4) * 0.5
    rec["y"] = -np.arange(12).reshape(3, 4)
    zp2(g, "v2_order_F_struct", "v2-order", rec, (2, 3),
        "order \"F\" with a structured dtype [[x,<f4],[y,>i2]] (whole elements in Fortran order); 3x4 in 2x3 chunks",
        order="F")


def cases_v2_dimsep(g: Generator):
    zp2(g, "v2_dimsep_slash_2d", "v2-dimsep", mixed("int32", (5, 7), 2300), (2, 3),
        "dimension_separator \"/\": chunk keys like 1/2 (nested directories); 5x7 in 2x3 chunks", sep="/")
    zp2(g, "v2_dimsep_slash_3d", "v2-dimsep", mixed("uint16", (3, 4, 5), 2301), (2, 3, 2),
        "dimension_separator \"/\" 3-D (keys i/j/k), gzip(5); fill 7, two regions written", sep="/",
        compressor=numcodecs.GZip(5), fill=7, regions=[np.s_[0:2, 0:3, 0:2], np.s_[2:3, 1:4, 3:5]])
    zp2(g, "v2_dimsep_dot_3d", "v2-dimsep", mixed("float32", (3, 4, 5), 2302), (2, 3, 2),
        "dimension_separator \".\" 3-D (keys i.j.k)", sep=".")
    name = "v2_dimsep_absent"
    data = mixed("int16", (4, 6), 2303)
    zp2(g, name, "v2-dimsep", data, (3, 4), "", register=False)
    p = g.out / "v2" / name / ".zarray"
    doc = json.loads(p.read_text())
    del doc["dimension_separator"]
    g.write_json(p, doc)
    g.add(name, "v2-dimsep", "int16", data.shape, le_bytes(data), HW,
          "no dimension_separator member (as zarr-python 2 before 2.8 wrote it): keys use \".\"; written by "
          "zarr-python 3.1.6, the member removed from .zarray by make_fixtures.py", element_size=2, zarr_format=2,
          source_dtype="<i2")
    zp2(g, "v2_dimsep_slash_F_missing", "v2-dimsep", mixed("float64", (5, 4), 2304), (2, 3),
        "dimension_separator \"/\" with order \"F\" and missing chunks (fill NaN)", sep="/", order="F",
        fill=np.nan, regions=[np.s_[0:2, 0:3], np.s_[4:5, 3:4]])


def cases_v2_fill(g: Generator):
    regions = [np.s_[0:4, 0:3], np.s_[4:7, 3:5]]  # of 7x5 in 4x3 chunks: 2 of 4 chunks written
    spec = [
        ("int_neg", "<i4", -99, "-99"),
        ("uint64_max", "<u8", np.iinfo(np.uint64).max, "18446744073709551615"),
        ("int64_min_be", ">i8", np.iinfo(np.int64).min, "-9223372036854775808 (big-endian dtype)"),
        ("float_value", "<f4", 3.25, "3.25"),
        ("float64_17_digits", "<f8", 0.9748618674097633, "0.9748618674097633"),
        ("negzero_be", ">f8", -0.0, "-0.0 (big-endian dtype)"),
        ("nan", "<f4", np.nan, "\"NaN\""),
        ("inf_be", ">f8", np.inf, "\"Infinity\" (big-endian dtype)"),
        ("neginf_f2", "<f2", -np.inf, "\"-Infinity\""),
        ("complex_nan", "<c8", complex(1.0, np.nan), "[1.0, \"NaN\"]"),
        ("complex_inf_be", ">c16", complex(-np.inf, -0.0), "[\"-Infinity\", -0.0] (big-endian dtype)"),
        ("bool_true", "|b1", True, "true"),
        ("uint8", "|u1", 200, "200"),
    ]
    for i, (tag, ts, fv, shown) in enumerate(spec):
        dt = np.dtype(ts)
        data = mixed(dt.name, (7, 5), seed=2400 + i).astype(dt)
        if dt.kind == "b":
            data = np.zeros((7, 5), dtype=bool)
            data[::2, 1::2] = True
        zp2(g, f"v2_fill_{tag}", "v2-fill", data, (4, 3),
            f"fill_value {shown} ({ts}); 7x5 in 4x3 chunks, only chunks 0.0 and 1.1 written, 0.1 and 1.0 missing "
            "(read as the fill value)", fill=fv, regions=regions)
    zp2(g, "v2_fill_null", "v2-fill", mixed("float64", (7, 5), 2420), (4, 3),
        "fill_value null; every chunk written, so no fill semantics are needed", fill=None)
    zp2(g, "v2_fill_S3_base64", "v2-fill", np.array([b"ab", b"", b"c\0d", b"xyz", b"q", b"rs", b"t"], dtype="|S3"),
        (2,), "fill_value base64 \"eHl6\" (b\"xyz\") for |S3; 7 in chunks of 2, chunks 1 and 3 missing",
        fill=b"xyz", regions=[np.s_[0:2], np.s_[4:6], np.s_[6:7]])
    zp2(g, "v2_fill_V3_base64", "v2-fill",
        np.frombuffer(bytes(range(40, 61)), dtype="|V3").copy(), (2,),
        "fill_value base64 \"AQID\" (bytes 01 02 03) for |V3; 7 in chunks of 2, chunks 0 and 2 missing",
        fill=np.void(b"\x01\x02\x03"), regions=[np.s_[2:4], np.s_[6:7]])
    st = np.dtype([("x", "<f4"), ("y", ">i2")])
    rec = np.zeros(9, dtype=st)
    rec["x"] = np.arange(9) * 0.25
    rec["y"] = np.arange(9) - 4
    zp2(g, "v2_fill_struct_base64", "v2-fill", rec, (4,),
        "structured fill_value base64 \"AAAgQP/9\" = (2.5, -3) stored as <f4 then >i2 (the base64 holds the stored, "
        "big-endian y); 9 in chunks of 4, chunk 1 missing",
        fill=np.array((2.5, -3), dtype=st)[()], regions=[np.s_[0:4], np.s_[8:9]])
    m = np.arange(10, dtype="<i8").view("<M8[s]")
    zp2(g, "v2_fill_datetime_nat", "v2-fill", m, (4,),
        "<M8[s] with fill NaT (-9223372036854775808, read as int64); chunk 1 missing",
        fill=np.datetime64("NaT", "s"), regions=[np.s_[0:4], np.s_[8:10]])


BLOSC_CNAMES = [("lz4", "int32", 5), ("lz4hc", "float64", 9), ("blosclz", "uint16", 1), ("zstd", "int64", 3),
                ("zlib", "float32", 6)]


def cases_v2_compressor(g: Generator):
    for ci, (cname, dt, clevel) in enumerate(BLOSC_CNAMES):
        for shuffle in (-1, 0, 1, 2):
            data = smooth(dt, (300,), seed=2500 + 10 * ci + shuffle)
            tag = {-1: "auto", 0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}[shuffle]
            zp2(g, f"v2_blosc_{cname}_{tag}", "v2-compressor", data, (128,),
                f"blosc cname {cname} clevel {clevel} shuffle {shuffle}"
                f"{' (AUTOSHUFFLE: byte shuffle for multi-byte items)' if shuffle == -1 else ''}; <{np.dtype(dt).str[1:]} "
                "300 in chunks of 128 (edge chunk); compressible data",
                compressor=numcodecs.Blosc(cname=cname, clevel=clevel, shuffle=shuffle))
    zp2(g, "v2_blosc_auto_u1", "v2-compressor", smooth("uint8", (300,), 2560), (128,),
        "blosc lz4 shuffle -1 on |u1: AUTOSHUFFLE means bit shuffle for 1-byte items",
        compressor=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=-1))
    zp2(g, "v2_blosc_blocksize", "v2-compressor", smooth("int32", (600,), 2561), (512,),
        "blosc lz4 shuffle 1 blocksize 256 (several blocks per 2 KiB chunk); <i4 600 in chunks of 512",
        compressor=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1, blocksize=256))
    zp2(g, "v2_blosc_2d_F", "v2-compressor", smooth("float32", (20, 30), 2562), (8, 16),
        "blosc zstd bitshuffle on an order \"F\" 2-D <f4 20x30 in 8x16 chunks", order="F",
        compressor=numcodecs.Blosc(cname="zstd", clevel=5, shuffle=2))
    cases_v2_blosc_snappy(g)
    others = [
        ("zlib_l1", numcodecs.Zlib(level=1), "int64"), ("zlib_l9", numcodecs.Zlib(level=9), "uint16"),
        ("gzip_l1", numcodecs.GZip(level=1), "float64"), ("gzip_l9", numcodecs.GZip(level=9), "int32"),
        ("zstd_l3_checksum", numcodecs.Zstd(level=3, checksum=True), "float32"),
        ("zstd_lm1", numcodecs.Zstd(level=-1), "int16"), ("zstd_default", numcodecs.Zstd(), "uint32"),
        ("lz4", numcodecs.LZ4(), "int32"), ("lz4_acc10", numcodecs.LZ4(acceleration=10), "float64"),
        ("bz2_l1", numcodecs.BZ2(level=1), "float64"), ("bz2_l9", numcodecs.BZ2(level=9), "uint8"),
        ("lzma", numcodecs.LZMA(), "uint16"), ("lzma_preset9_crc32", numcodecs.LZMA(preset=9, check=1), "int64"),
        ("lzma_alone", numcodecs.LZMA(format=2), "float32"),
        ("none", None, "float64"),
    ]
    for i, (tag, comp, dt) in enumerate(others):
        data = smooth(dt, (12, 20), seed=2600 + i)
        cfg = json.dumps(comp.get_config()) if comp is not None else "null"
        zp2(g, f"v2_compressor_{tag}", "v2-compressor", data, (8, 16),
            f"compressor {cfg}; <{np.dtype(dt).str[1:]} 12x20 in 8x16 chunks (edge chunks)", compressor=comp)


def cases_v2_blosc_snappy(g: Generator):
    import tensorstore as ts
    name = "v2_blosc_snappy_ts"
    data = smooth("complex64", (100,), seed=2570)
    t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": str(g.out / "v2" / name)},
                 "metadata": {"shape": [100], "chunks": [40], "dtype": "<c8", "fill_value": None, "order": "C",
                              "filters": None, "dimension_separator": ".",
                              "compressor": {"id": "blosc", "cname": "snappy", "clevel": 5, "shuffle": 1,
                                             "blocksize": 0}},
                 "create": True}).result()
    t[...] = data
    g.add(name, "v2-compressor", "complex64", data.shape, le_bytes(data), f"tensorstore {tensorstore_version()}",
          "blosc cname snappy shuffle 1 on <c8 100 in chunks of 40; written by tensorstore (zarr v2 driver) because "
          "numcodecs' bundled c-blosc has no snappy", element_size=8, zarr_format=2, source_dtype="<c8",
          readers={"zarr-python": "no: numcodecs' c-blosc is built without snappy", "tensorstore": "yes"})


def cases_v2_filter(g: Generator):
    def filt(name, data, chunks, filters, notes, compressor=None, **kw):
        dec = roundtrip_filters(data, filters)
        zp2(g, name, "v2-filter", data, chunks,
            notes + "; filters " + json.dumps([f.get_config() for f in filters]) + ", compressor "
            + (json.dumps(compressor.get_config()) if compressor else "null"),
            filters=filters, compressor=compressor, decoded=dec, **kw)

    i32 = smooth("int32", (50,), 2700)
    filt("v2_filter_delta", i32, (16,), [numcodecs.Delta(dtype="<i4")], "delta alone on <i4 (differences per chunk)")
    u8 = mixed("uint8", (40,), 2701)
    filt("v2_filter_delta_u1_wrap", u8, (16,), [numcodecs.Delta(dtype="|u1")],
         "delta on |u1 with random values: the differences wrap around modulo 256")
    i64 = (np.arange(60, dtype="<i8") * 37 - 1000) * 3
    filt("v2_filter_delta_astype", i64, (25,), [numcodecs.Delta(dtype="<i8", astype="<i2")],
         "delta storing its differences narrowed to <i2 (astype) for an <i8 array (differences fit)")
    f8 = (smooth("float64", (40,), 2702) - 3.3).astype("<f8")
    filt("v2_filter_fixedscaleoffset", f8, (16,),
         [numcodecs.FixedScaleOffset(offset=10, scale=100, dtype="<f8", astype="<i4")],
         "fixedscaleoffset (offset 10, scale 100) <f8 -> <i4 (lossy: expected = numcodecs' decode(encode(x)))")
    f4 = (np.abs(smooth("float32", (6, 7), 2703)) % 25).astype("<f4")
    filt("v2_filter_fixedscaleoffset_u1_2d", f4, (4, 4),
         [numcodecs.FixedScaleOffset(offset=0, scale=10, dtype="<f4", astype="|u1")],
         "fixedscaleoffset (offset 0, scale 10) <f4 -> |u1 on 2-D 6x7 in 4x4 chunks, zlib(1)",
         compressor=numcodecs.Zlib(1))
    r = np.random.default_rng(2704)
    fq = (r.standard_normal(40) * 100).astype("<f4")
    filt("v2_filter_quantize_f4", fq, (16,), [numcodecs.Quantize(digits=2, dtype="<f4")],
         "quantize digits 2 on <f4 (lossy, decode is identity)")
    fq8 = (r.standard_normal(40) * 1e3).astype("<f8")
    filt("v2_filter_quantize_f8", fq8, (16,), [numcodecs.Quantize(digits=3, dtype="<f8")],
         "quantize digits 3 on <f8")
    fb = (r.standard_normal(40) * 1e3).astype("<f4")
    fb[:4] = [np.inf, -np.inf, -0.0, 0.0]
    filt("v2_filter_bitround_f4", fb, (16,), [numcodecs.BitRound(keepbits=7)],
         "bitround keepbits 7 on <f4 (lossy, decode is identity); +-Inf and -0.0 included")
    filt("v2_filter_bitround_f8", (r.standard_normal(40) * 1e-3).astype("<f8"), (16,),
         [numcodecs.BitRound(keepbits=20)], "bitround keepbits 20 on <f8")
    filt("v2_filter_astype_f8_f4", (r.standard_normal(40) * 10).astype("<f8"), (16,),
         [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")],
         "astype narrowing: <f8 array stored as <f4 (lossy), read back widened to <f8")
    filt("v2_filter_astype_i8_i2", (np.arange(40, dtype="<i8") * 811 - 16000), (16,),
         [numcodecs.AsType(encode_dtype="<i2", decode_dtype="<i8")],
         "astype narrowing: <i8 array stored as <i2 (values fit)")
    b = np.random.default_rng(2705).integers(0, 2, (7, 11)).astype(bool)
    filt("v2_filter_packbits", b, (3, 5), [numcodecs.PackBits()],
         "packbits on |b1 7x11 in 3x5 chunks (15 bools per chunk: 2 packed bytes + 1 header byte giving the 1 "
         "padding bit)")
    filt("v2_filter_packbits_zlib", np.random.default_rng(2706).integers(0, 2, 100).astype(bool), (64,),
         [numcodecs.PackBits()], "packbits on |b1 then zlib(5) (64 bools per chunk, no padding; edge chunk)",
         compressor=numcodecs.Zlib(5))
    filt("v2_filter_shuffle_i4", smooth("int32", (60,), 2707), (25,), [numcodecs.Shuffle(elementsize=4)],
         "shuffle elementsize 4 alone on <i4")
    filt("v2_filter_shuffle_f8_zlib", smooth("float64", (60,), 2708), (25,), [numcodecs.Shuffle(elementsize=8)],
         "shuffle elementsize 8 on <f8, then zlib(1)", compressor=numcodecs.Zlib(1))
    labels = ["a", "bb", "ccc", "é"]
    u = np.array([labels[i] for i in np.random.default_rng(2709).integers(0, 4, 30)], dtype="<U3")
    filt("v2_filter_categorize", u, (8,), [numcodecs.Categorize(labels=labels, dtype="<U3", astype="|u1")],
         "categorize <U3 labels [a, bb, ccc, é] -> |u1 codes (0 = not a label); data_type r96 (3 UTF-32LE code "
         "units); zarr-python's default fill \"\"")
    filt("v2_filter_categorize_zlib", u.reshape(5, 6), (2, 4),
         [numcodecs.Categorize(labels=labels, dtype="<U3", astype="<u2")],
         "categorize <U3 -> <u2 codes on 2-D 5x6 in 2x4 chunks, then zlib(1)", compressor=numcodecs.Zlib(1))
    # chains
    filt("v2_filter_chain_delta_shuffle_blosc", smooth("uint32", (60,), 2710), (25,),
         [numcodecs.Delta(dtype="<u4"), numcodecs.Shuffle(elementsize=4)],
         "delta then shuffle, then blosc zstd noshuffle (decode order: blosc, shuffle, delta)",
         compressor=numcodecs.Blosc(cname="zstd", clevel=5, shuffle=0))
    filt("v2_filter_chain_fso_shuffle_zlib", (smooth("float64", (6, 9), 2711) * 0.37).astype("<f8"), (4, 4),
         [numcodecs.FixedScaleOffset(offset=1, scale=1000, dtype="<f8", astype="<i4"),
          numcodecs.Shuffle(elementsize=4)],
         "fixedscaleoffset (<f8 -> <i4) then shuffle(4) (element size of the narrowed type), then zlib(1); 2-D",
         compressor=numcodecs.Zlib(1))
    filt("v2_filter_chain_astype_bitround_zstd", (r.standard_normal(50) * 100).astype("<f8"), (20,),
         [numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8"), numcodecs.BitRound(keepbits=10)],
         "astype <f8 -> <f4, then bitround(10) on the float32 values, then zstd(3)",
         compressor=numcodecs.Zstd(level=3))
    filt("v2_filter_chain_quantize_delta_lz4", (np.cumsum(r.standard_normal(50)) * 10).astype("<f8"), (20,),
         [numcodecs.Quantize(digits=1, dtype="<f8"), numcodecs.Shuffle(elementsize=8)],
         "quantize(1) then shuffle(8) then lz4", compressor=numcodecs.LZ4())
    filt("v2_filter_compressor_as_filter", smooth("int32", (50,), 2712), (16,), [numcodecs.Zlib(level=1)],
         "a compressor listed as a filter: filters [zlib(1)], compressor zstd(1)", compressor=numcodecs.Zstd(level=1))
    filt("v2_filter_chain_delta_bz2_F", smooth("int16", (6, 8), 2713), (4, 3), [numcodecs.Delta(dtype="<i2")],
         "delta on an order \"F\" chunk (differences along the Fortran-order bytes), then bz2(5)",
         compressor=numcodecs.BZ2(level=5), order="F")
    # categorize with an object label dtype: must be refused (no fixed-size element)
    name = "v2_filter_categorize_object"
    zp2(g, name, "v2-filter", u, (8,), "", filters=[numcodecs.Categorize(labels=labels, dtype="<U3", astype="|u1")],
        register=False)
    p = g.out / "v2" / name / ".zarray"
    doc = json.loads(p.read_text())
    doc["dtype"] = "|O"
    doc["fill_value"] = None
    doc["filters"][0]["dtype"] = "|O"
    g.write_json(p, doc)
    g.add(name, "v2-filter", "string", u.shape, None, HW,
          "categorize with an object label dtype (dtype \"|O\", filter dtype \"|O\", as zarr-python 2 wrote "
          "categorical strings): variable-length elements, must be refused as unsupported (written by zarr-python "
          "3.1.6 with <U3, then dtype / filter dtype / fill_value edited by make_fixtures.py)",
          element_size=None, zarr_format=2, source_dtype="|O", expect_error="unsupported")


def cases_v2_group(g: Generator):
    root_attrs = {"title": "v2 fixture root", "version": 2, "tags": ["a", "é"]}
    grp = zarr.create_group(store=LocalStore(str(g.out / "v2" / "hier")), zarr_format=2, attributes=root_attrs)
    sub_attrs = {"level": 1, "nested": {"k": [1, None, True]}}
    sub = grp.create_group("sub", attributes=sub_attrs)
    grp.create_group("empty")
    deep_attrs = {"level": 2, "scale": 0.9748618674097633}
    deep = sub.create_group("deep", attributes=deep_attrs)
    for name, parent, rel, dt, shape, chunks, seed, kw in (
        ("arr0", grp, "arr0", "int32", (6, 6), (4, 4), 2800, dict(compressor=numcodecs.Zlib(1))),
        ("arr1", sub, "sub/arr1", "float64", (10,), (4,), 2801,
         dict(compressor=numcodecs.Blosc("zstd", 5, 1), fill=np.nan, regions=[np.s_[0:4], np.s_[8:10]])),
        ("arr2", deep, "sub/deep/arr2", "uint16", (5, 5), (3, 3), 2802, dict(order="F", sep="/")),
    ):
        data = mixed(dt, shape, seed)
        where = "v2/hier" + ("/" + rel.rsplit("/", 1)[0] if "/" in rel else "")
        zp2(g, f"v2_group_{name}", "v2-group", data, chunks,
            f"array {name} (with .zattrs) inside the v2 group {where}; " + ", ".join(f"{k}" for k in kw),
            path=f"v2/hier/{rel}", parent=parent, attributes={"name": name}, **kw)
    for path, attrs, children in (
        ("v2/hier", root_attrs, {"arr0": "array", "empty": "group", "sub": "group"}),
        ("v2/hier/sub", sub_attrs, {"arr1": "array", "deep": "group"}),
        ("v2/hier/sub/deep", deep_attrs, {"arr2": "array"}),
        ("v2/hier/empty", {}, {}),
    ):
        g.groups.append({"path": path, "zarr_format": 2, "writer": ZP, "attributes": attrs, "children": children,
                         "notes": "v2 group (.zgroup, attributes in .zattrs) written by zarr-python 3.1.6"})


def cases_v2_corrupt(g: Generator):
    base = "(base array written by zarr-python 3.1.6, then damaged by make_fixtures.py)"

    def corrupt(name, dt, comp, key, how, what, err="codec", shape=(8, 8), chunks=(4, 4), sep=".", filters=None):
        data = smooth(dt, shape, 2900 + len(g.cases))
        zp2(g, name, "v2-corrupt", data, chunks, "", compressor=comp, sep=sep, filters=filters, register=False)
        p = g.out / "v2" / name / key
        p.write_bytes(how(p.read_bytes()))
        g.add(name, "v2-corrupt", dt, shape, le_bytes(data), HW, f"{what} {base}", element_size=np.dtype(dt).itemsize,
              expect_error=err, corrupt_keys=[key], zarr_format=2, source_dtype=np.dtype(dt).str)

    def half(b):
        return b[: len(b) // 2]

    corrupt("v2_corrupt_truncated_zlib", "int32", numcodecs.Zlib(1), "0.1", half, "zlib chunk 0.1 truncated to half")
    corrupt("v2_corrupt_truncated_zlib_slash", "int32", numcodecs.Zlib(1), "1/0", half,
            "dimension_separator \"/\"; zlib chunk 1/0 truncated to half", sep="/")
    corrupt("v2_corrupt_truncated_blosc", "int16", numcodecs.Blosc("lz4", 5, 1), "0.1", half,
            "blosc(lz4, shuffle) chunk 0.1 (512 bytes decoded) truncated to half (header intact, cbytes no longer "
            "matches); int16 24x24 in 16x16 chunks", shape=(24, 24), chunks=(16, 16))
    corrupt("v2_corrupt_truncated_gzip", "float64", numcodecs.GZip(5), "1.1", half, "gzip chunk 1.1 truncated to half")
    corrupt("v2_corrupt_truncated_zstd", "uint32", numcodecs.Zstd(level=3), "0.0", half,
            "zstd chunk 0.0 truncated to half")
    corrupt("v2_corrupt_zlib_garbage", "uint16", numcodecs.Zlib(1), "1.0", lambda b: b"not a zlib stream",
            "zlib chunk 1.0 replaced by non-zlib bytes")
    corrupt("v2_corrupt_raw_short", "int32", None, "1.1", lambda b: b[:-4],
            "no compressor; chunk 1.1 is 60 bytes instead of 64 (wrong decoded length)")
    corrupt("v2_corrupt_zlib_wrong_length", "int32", numcodecs.Zlib(1), "0.0",
            lambda b: zlib.compress(zlib.decompress(b)[:-8], 1),
            "zlib chunk 0.0 is a valid stream of 56 bytes instead of 64 (decoded size mismatch)")
    # metadata naming something unknown, or broken
    meta_cases = [
        ("v2_unknown_compressor", "unsupported", "compressor id \"zz_unknown_compressor\"",
         lambda d: d.update(compressor={"id": "zz_unknown_compressor", "level": 1})),
        ("v2_unknown_filter", "unsupported", "filters [{\"id\": \"zz_unknown_filter\"}]",
         lambda d: d.update(filters=[{"id": "zz_unknown_filter"}])),
        ("v2_meta_bad_dtype", "invalid_metadata", "dtype \"<i3\" (no such size)", lambda d: d.update(dtype="<i3")),
        ("v2_meta_missing_chunks", "invalid_metadata", "required member chunks removed", lambda d: d.pop("chunks")),
        ("v2_meta_chunk_rank", "invalid_metadata", "chunks [4] for a 2-D shape", lambda d: d.update(chunks=[4])),
        ("v2_meta_bad_order", "invalid_metadata", "order \"X\"", lambda d: d.update(order="X")),
    ]
    for name, err, what, fn in meta_cases:
        zp2(g, name, "v2-corrupt", smooth("int32", (8, 8), 2950), (4, 4), "", compressor=numcodecs.Zlib(1),
            register=False)
        p = g.out / "v2" / name / ".zarray"
        doc = json.loads(p.read_text())
        fn(doc)
        g.write_json(p, doc)
        g.add(name, "v2-corrupt", "int32", (8, 8), None, HW,
              f".zarray edited: {what}: must be refused as {err} (base array written by zarr-python 3.1.6)",
              element_size=4, expect_error=err, zarr_format=2, source_dtype=doc.get("dtype"))
    name = "v2_meta_bad_json"
    zp2(g, name, "v2-corrupt", smooth("int32", (8, 8), 2951), (4, 4), "", register=False)
    p = g.out / "v2" / name / ".zarray"
    p.write_text(p.read_text()[:40])
    g.add(name, "v2-corrupt", "int32", (8, 8), None, HW, ".zarray truncated mid-document (not valid JSON): "
          "invalid_metadata (base array written by zarr-python 3.1.6)", element_size=4,
          expect_error="invalid_metadata", zarr_format=2, source_dtype="<i4")


# -- Zarr v1 ------------------------------------------------------------------------------------


def v1_case(g: Generator, name, data, chunks, compression, opts, order, fill, notes, *, attrs=None, missing=()):
    """A Zarr v1 array written per the v1 spec: `meta` (JSON), `attrs` (always present), chunk keys i.j.k,
    every chunk full size (edge chunks padded with the fill value), compressed without any header."""
    d = g.out / "v1" / name
    dt = data.dtype
    meta = {"chunks": list(chunks), "compression": compression, "compression_opts": opts, "dtype": descr_json(dt),
            "fill_value": v2_fill_json(dt, fill), "order": order, "shape": list(data.shape), "zarr_format": 1}
    d.mkdir(parents=True)
    (d / "meta").write_text(json.dumps(meta, indent=4, sort_keys=True))
    (d / "attrs").write_text(json.dumps(attrs or {}, indent=4, sort_keys=True))

    def enc(raw):
        if compression == "none":
            return raw
        if compression == "zlib":
            return zlib.compress(raw, opts)
        if compression == "bz2":
            return bz2.compress(raw, opts)
        assert compression == "blosc"
        return bytes(numcodecs.Blosc(**opts).encode(np.frombuffer(raw, dtype=dt)))

    padding = np.zeros((), dtype=dt) if fill is None else np.array(fill, dtype=dt)
    expected = write_chunks(d, data, chunks, padding, order, ".", enc, missing)
    g.add(name, "v1", manifest_type(dt), data.shape, le_bytes(expected), HW,
          "hand-written per the v1 spec (zarr-python 3 can neither write nor read v1): 'meta' and 'attrs' keys, "
          "'.'-joined chunk keys, full-size edge chunks padded with the fill value; " + notes,
          element_size=dt.itemsize, zarr_format=1, source_dtype=meta["dtype"], fields=manifest_fields(dt),
          readers={"zarr-python": "no: zarr-python 3 dropped Zarr v1 (verified with the independent numpy + "
                                  "numcodecs reader tools/np_zarr.py)", "tensorstore": "no: no v1 driver"})


def cases_v1(g: Generator):
    attrs = {"foo": 42, "bar": "apples", "baz": [1, 2, 3, 4]}
    v1_case(g, "v1_none_i4", mixed("int32", (7, 9), 3000), (3, 4), "none", None, "C", 42,
            "compression none, <i4 7x9 in 3x4 chunks, fill 42, chunk 1.2 missing; attrs as in the spec's example",
            attrs=attrs, missing={(1, 2)})
    v1_case(g, "v1_zlib_f8_F", mixed("float64", (5, 6), 3001), (2, 4), "zlib", 1, "F", float("nan"),
            "compression zlib (compression_opts 1), order F, <f8 5x6 in 2x4 chunks, fill NaN, chunk 0.1 missing",
            missing={(0, 1)})
    v1_case(g, "v1_zlib_i2_C_be", mixed("int16", (10,), 3002).astype(">i2"), (4,), "zlib", 9, "C", -1,
            "compression zlib (compression_opts 9), big-endian >i2, 10 in chunks of 4")
    v1_case(g, "v1_bz2_u2", mixed("uint16", (6, 5), 3003), (4, 4), "bz2", 9, "C", 0,
            "compression bz2 (compression_opts 9), <u2 6x5 in 4x4 chunks", attrs={"units": "counts"})
    v1_case(g, "v1_bz2_f4_F", mixed("float32", (3, 4, 5), 3004), (2, 3, 2), "bz2", 1, "F", 0.5,
            "compression bz2 (compression_opts 1), order F 3-D <f4 3x4x5 in 2x3x2 chunks")
    v1_case(g, "v1_blosc_lz4_i4", smooth("int32", (300,), 3005), (128,), "blosc",
            {"clevel": 5, "cname": "lz4", "shuffle": 1}, "C", 0,
            "compression blosc (compression_opts {cname lz4, clevel 5, shuffle 1}), <i4 300 in chunks of 128")
    v1_case(g, "v1_blosc_zstd_f8_F", smooth("float64", (9, 7), 3006), (4, 4), "blosc",
            {"clevel": 3, "cname": "zstd", "shuffle": 2}, "F", -0.0,
            "compression blosc (zstd, bit shuffle), order F, <f8 9x7 in 4x4 chunks, fill -0.0, chunk 2.1 missing",
            missing={(2, 1)})
    rgb = np.zeros((4, 5), dtype=[("r", "|u1"), ("g", "|u1"), ("b", "|u1")])
    rr = np.random.default_rng(3007)
    for f in "rgb":
        rgb[f] = rr.integers(0, 256, (4, 5))
    v1_case(g, "v1_zlib_struct_rgb", rgb, (3, 3), "zlib", 1, "C", None,
            "the spec's structured example dtype [[r,|u1],[g,|u1],[b,|u1]] (3 bytes), zlib 1, fill null, all chunks "
            "written")
    v1_case(g, "v1_none_b1_F", (mixed("uint8", (5, 5), 3008) % 2).astype(bool), (2, 3), "none", None, "F", True,
            "compression none, |b1, order F, fill true, chunk 2.1 missing", missing={(2, 1)})


# ------------------------------------------------------------------------------------------------
# verification with the reference readers


def zp_read(path, zarr_format=3):
    arr = zarr.open_array(store=LocalStore(str(path), read_only=True), mode="r", zarr_format=zarr_format)
    return np.asarray(arr[...])


def translate_raw(src: Path, dst: Path):
    shutil.copytree(src, dst)
    doc = json.loads((dst / "zarr.json").read_text())
    nb = int(doc["data_type"][1:]) // 8
    doc["data_type"] = {"name": "raw_bytes", "configuration": {"length_bytes": nb}}
    doc["fill_value"] = base64.b64encode(bytes(doc["fill_value"])).decode()
    (dst / "zarr.json").write_text(json.dumps(doc))


def verify_v1_v2(g: Generator, case):
    """Checks a v1/v2 case with the reference readers (zarr-python, or tensorstore for what it wrote) and
    with np_read (every readable case): returns the list of failed names."""
    path = g.out / case["path"]
    readers = case["reference_readers"]
    if case["expect_error"]:
        if case["zarr_format"] == 2:
            try:
                zp_read(path, 2)
                readers.setdefault("zarr-python", "no: reads it without an error")
            except Exception as e:  # noqa: BLE001 - any refusal counts
                readers.setdefault("zarr-python", f"yes ({type(e).__name__})")
        return []
    expected = (g.out / case["expected"]).read_bytes()
    checks = {}
    if case["writer"].startswith("tensorstore"):
        import tensorstore as ts
        got = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": str(path)}}).result().read().result()
        checks["tensorstore"] = le_bytes(got)
    else:
        checks["make_fixtures.np_read"] = le_bytes(np_read(path))
        if not readers.get("zarr-python", "").startswith("no"):
            checks["zarr-python"] = le_bytes(zp_read(path, 2))
            readers.setdefault("zarr-python", "yes")
    bad = [who for who, got in checks.items() if got != expected]
    for who in bad:
        print(f"VERIFY FAIL {case['name']}: {who} disagrees with the expected bytes", file=sys.stderr)
    return [case["name"]] if bad else []


def verify(g: Generator):
    bad = []
    for case in g.cases:
        path = g.out / case["path"]
        readers = case["reference_readers"]
        if case["zarr_format"] != 3:
            bad += verify_v1_v2(g, case)
            continue
        if case["expect_error"]:
            try:
                zp_read(path)
                readers.setdefault("zarr-python", "no: reads it without an error")
            except Exception as e:  # noqa: BLE001 - any refusal counts
                readers.setdefault("zarr-python", f"yes ({type(e).__name__})")
            continue
        expected = (g.out / case["expected"]).read_bytes()
        if case["writer"].startswith("tensorstore"):
            import tensorstore as ts
            got = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}).result().read().result()
            got_b = le_bytes(got)
        elif case["data_type"].startswith("r"):
            with tempfile.TemporaryDirectory() as tmp:
                translate_raw(path, Path(tmp) / "a")
                got_b = zp_read(Path(tmp) / "a").tobytes()
        else:
            got_b = le_bytes(zp_read(path))
            readers.setdefault("zarr-python", "yes")
        deviation = readers.get("zarr-python", "").startswith("deviation")
        if got_b != expected and deviation:
            print(f"note {case['name']}: known reference-reader deviation: {readers['zarr-python']}")
        elif deviation:
            bad.append(case["name"])
            print(f"VERIFY FAIL {case['name']}: declared deviation not observed (stale note)", file=sys.stderr)
        elif got_b != expected:
            bad.append(case["name"])
            print(f"VERIFY FAIL {case['name']}: reference reader disagrees with the expected bytes", file=sys.stderr)
    for grp in g.groups:
        zg = zarr.open_group(store=LocalStore(str(g.out / grp["path"]), read_only=True), mode="r",
                             zarr_format=grp["zarr_format"])
        children = {k: ("array" if isinstance(v, zarr.Array) else "group") for k, v in zg.members()}
        if dict(zg.attrs) != grp["attributes"] or children != grp["children"]:
            bad.append(grp["path"])
            print(f"VERIFY FAIL group {grp['path']}: {dict(zg.attrs)} {children}", file=sys.stderr)
    return bad


# ------------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures")
    args = ap.parse_args()
    if zarr.__version__ != ZARR_VERSION:
        sys.exit(f"make_fixtures.py pins zarr-python {ZARR_VERSION} (found {zarr.__version__}): "
                 "the committed fixtures record that writer")
    out = args.out.resolve()
    readme = out / "README.md"
    keep = readme.read_bytes() if readme.exists() else None
    # tests/fixtures/numcodecs_v3 and pcodec_zfp belong to tools/make_numcodecs_v3_fixtures.py and
    # tools/make_pcodec_zfp_fixtures.py: kept as they are
    kept = {}
    for name in ("numcodecs_v3", "pcodec_zfp"):
        sub = out / name
        if sub.exists():
            kept[sub] = Path(tempfile.mkdtemp()) / name
            shutil.move(str(sub), kept[sub])
    # The scale_offset / cast_value cases come from tools/make_ext_codec_fixtures.py, the "v3-vlen-342"
    # cases from tools/make_vlen342_fixtures.py (zarr-python 3.4.2 on Python 3.12): kept as they are,
    # files and manifest entries.
    kept_cases, kept_files = [], {}
    if (out / "manifest.json").exists():
        for c in json.loads((out / "manifest.json").read_text())["cases"]:
            if c["kind"] in ("v3-ext-codec", "v3-vlen-342"):
                kept_cases.append(c)
                for rel in [c["expected"]] if c.get("expected") else []:
                    kept_files[rel] = (out / rel).read_bytes()
                for p in (out / c["path"]).rglob("*"):
                    if p.is_file():
                        kept_files[str(p.relative_to(out))] = p.read_bytes()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if keep is not None:
        readme.write_bytes(keep)
    for sub, aside in kept.items():
        shutil.move(str(aside), sub)
    for rel, data in kept_files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)
    g = Generator(out)
    for fn in (cases_dtype, cases_codec, cases_stream_variants, cases_fill, cases_shape, cases_chunk_key, cases_metadata,
               cases_extension, cases_corrupt, cases_group, cases_v2_dtype, cases_v2_order, cases_v2_dimsep,
               cases_v2_fill, cases_v2_compressor, cases_v2_filter, cases_v2_group, cases_v2_corrupt, cases_v1,
               cases_sharding):
        fn(g)
    bad = verify(g)
    manifest = {"corpus_set": "libzarr-fixtures", "format_version": 1, "cases": g.cases + kept_cases, "groups": g.groups}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    kinds = {}
    for c in g.cases:
        kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
    print(f"wrote {len(g.cases)} cases and {len(g.groups)} groups to {out}: "
          + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    if bad:
        sys.exit(f"{len(bad)} case(s) failed verification with the reference readers: {', '.join(bad)}")


if __name__ == "__main__":
    main()
