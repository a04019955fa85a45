#!/usr/bin/env python3
"""Generates the project's interoperability fixtures in tests/fixtures (Zarr v3).

    python3 tools/make_fixtures.py            # wipe tests/fixtures and regenerate it
    python3 tools/make_fixtures.py --out DIR  # somewhere else

Writers: zarr-python 3.1.6 (with its numcodecs codecs) for nearly everything; tensorstore for the
blosc/snappy cases only (numcodecs' bundled c-blosc has no snappy); and "hand-written" for what no
writer produces: the core r<N> data types, hex fill values, unknown extensions, broken metadata and
corrupted chunks (see each case's `notes`).

The layout and manifest follow the shared interop corpus format (tools/check_corpus.py reads both):
one directory per case under v3/, `expected/<name>.bin` with the whole array (C order, little-endian,
missing chunks as the fill value), and `manifest.json` with `cases` and `groups`.

Everything is deterministic (fixed seeds, gzip mtime 0). After writing, every case is read back with
zarr-python (tensorstore for snappy) and compared bit-exactly with its expected file; error cases are
checked to be refused by zarr-python where it does (recorded in `reference_readers`).
"""
import argparse
import base64
import gzip
import json
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

try:
    import zarr
    from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, TransposeCodec, ZstdCodec
    from zarr.storage import LocalStore
except ImportError as e:  # pragma: no cover
    sys.exit(f"make_fixtures.py needs zarr-python 3.1.6: {e}")

ROOT = Path(__file__).resolve().parent.parent
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
            path=None, expect_error=None, corrupt_keys=None, readers=None):
        """Registers a case. `expected` is bytes or None."""
        assert name not in self.names, name
        self.names.add(name)
        path = path or f"v3/{name}"
        exp_rel = None
        if expected is not None:
            exp_rel = f"expected/{name}.bin"
            p = self.out / exp_rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(expected)
            n = int(np.prod(shape, dtype=np.int64))
            assert len(expected) == n * element_size, (name, len(expected), n, element_size)
        case = {
            "name": name, "kind": kind, "path": path, "zarr_format": 3, "writer": writer,
            "data_type": data_type, "shape": list(shape), "expected": exp_rel,
            "element_size": element_size, "expect_error": expect_error, "notes": notes,
            "reference_readers": readers or {},
        }
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
# verification with the reference readers


def zp_read(path):
    arr = zarr.open_array(store=LocalStore(str(path), read_only=True), mode="r", zarr_format=3)
    return np.asarray(arr[...])


def translate_raw(src: Path, dst: Path):
    shutil.copytree(src, dst)
    doc = json.loads((dst / "zarr.json").read_text())
    nb = int(doc["data_type"][1:]) // 8
    doc["data_type"] = {"name": "raw_bytes", "configuration": {"length_bytes": nb}}
    doc["fill_value"] = base64.b64encode(bytes(doc["fill_value"])).decode()
    (dst / "zarr.json").write_text(json.dumps(doc))


def verify(g: Generator):
    bad = []
    for case in g.cases:
        path = g.out / case["path"]
        readers = case["reference_readers"]
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
        zg = zarr.open_group(store=LocalStore(str(g.out / grp["path"]), read_only=True), mode="r", zarr_format=3)
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
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if keep is not None:
        readme.write_bytes(keep)
    g = Generator(out)
    for fn in (cases_dtype, cases_codec, cases_stream_variants, cases_fill, cases_shape, cases_chunk_key, cases_metadata,
               cases_extension, cases_corrupt, cases_group):
        fn(g)
    bad = verify(g)
    manifest = {"corpus_set": "libzarr-fixtures", "format_version": 1, "cases": g.cases, "groups": g.groups}
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
