#!/usr/bin/env python3
"""Interop, variable-length data types: arrays written by libzarr (zarr_create + zarr_write_region_vlen
through the C ABI) read back by zarr-python, and arrays written by zarr-python read by libzarr.

    python3 tests/interop/test_vlen_roundtrip.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (zarr-python, numcodecs or numpy not importable).
The library is $ZARR_LIB, else target/release/libzarr.so of this repository.

Covered:
  * v3 `string` (vlen-utf8) and `variable_length_bytes` (vlen-bytes), alone and followed by zstd, gzip,
    crc32c; 1-D to 3-D with edge chunks; partial writes (read-modify-write), chunks never written, writes
    of the fill value deleting chunks; non-empty fill values; sharded (inner vlen codec + zstd, index
    at start and end) with partial shard writes;
  * v2 `|O` with the vlen-utf8 / vlen-bytes filters and a compressor (zarr-python reads them), and with
    numcodecs' vlen-array filter (read back with numcodecs' VLenArray per chunk);
  * the other direction: zarr-python writes, libzarr reads (whole arrays and sub-regions).
Values: empty strings, non-ASCII (BMP and astral), NUL, controls, long strings; bytes 0..255.
"""
import base64
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))

try:
    import numcodecs
    import numpy as np
    import zarr
    from zarr.core.dtype import VariableLengthBytes
    from zarr.storage import LocalStore
except ImportError as e:
    print(f"SKIP: zarr-python / numcodecs / numpy not importable ({e})")
    sys.exit(77)

import harness  # noqa: E402  (tests/interop/harness.py)
import zarr_ctypes as zc  # noqa: E402

warnings.filterwarnings("ignore")

POOL = ["", "a", "héllo", "日本語", "😀🎉 astral", "tab\tnl\n", "nul\0mid", "y" * 500, "\x7f\x01", "Ω"]


def values(kind, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        s = POOL[int(rng.integers(len(POOL)))] + ("" if rng.integers(3) == 0 else str(i))
        if kind == "bytes":
            out.append(bytes(rng.integers(0, 256, int(rng.integers(0, 12)), dtype=np.uint8)) if i % 2 else s.encode())
        else:
            out.append(s)
    return out


def obj(vals, shape):
    a = np.empty(len(vals), dtype=object)
    a[:] = vals
    return a.reshape(shape)


def v3_doc(shape, chunks, dtype, fill, codecs):
    return json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill, "codecs": codecs, "attributes": {}})


def same(got, expected):
    g = np.asarray(got, dtype=object).reshape(-1)
    e = np.asarray(expected, dtype=object).reshape(-1)
    return len(g) == len(e) and all((bytes(a) if isinstance(a, (bytes, np.bytes_)) else a) == b for a, b in zip(g, e))


def boxes(shape, rng, k):
    out = []
    for _ in range(k):
        start = [int(rng.integers(0, s)) for s in shape]
        count = [int(rng.integers(1, s - a + 1)) for s, a in zip(shape, start)]
        out.append((start, count))
    return out


def t_v3(r, tag, kind, shape, chunks, fill, codecs, seed):
    path = r.path(tag)
    dtype = "string" if kind == "string" else "variable_length_bytes"
    fill_json = fill if kind == "string" else base64.b64encode(fill).decode()
    arr = zc.Array.create(path, v3_doc(shape, chunks, dtype, fill_json, codecs))
    expected = obj([fill] * int(np.prod(shape)), shape)
    rng = np.random.default_rng(seed)
    with arr:
        for i, (start, count) in enumerate(boxes(shape, rng, 5)):
            vals = values(kind, int(np.prod(count)), seed + i)
            if i == 3:
                vals = [fill] * len(vals)  # a write of the fill value
            arr.write_vlen(vals, start, count)
            expected[tuple(slice(a, a + c) for a, c in zip(start, count))] = obj(vals, count)
            got = zarr.open_array(store=LocalStore(str(path)), mode="r")[...]
            assert same(got, expected), f"{tag}: zarr-python reads something else after write {i}"
            assert same(arr.read_vlen(), expected), f"{tag}: libzarr reads something else after write {i}"
    # exactly the chunks (shards) holding a value other than the fill value are stored
    grid = [-(-s // c) for s, c in zip(shape, chunks)]
    for idx in np.ndindex(*grid):
        block = expected[tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, chunks))].reshape(-1)
        stored = (path / "c" / "/".join(map(str, idx))).exists()
        assert stored == any(v != fill for v in block), f"{tag}: chunk {idx} stored={stored}"


def t_v2(r, tag, filt, compressor, kind, shape, chunks, fill, seed):
    path = r.path(tag)
    doc = {"zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": "|O", "fill_value": fill, "order": "C",
           "filters": [filt], "compressor": compressor, "dimension_separator": "."}
    n = int(np.prod(shape))
    vals = values(kind, n, seed)
    with zc.Array.create(path, json.dumps(doc)) as arr:
        arr.write_vlen(vals)
        start = [s // 3 for s in shape]
        count = [max(1, s // 2) for s in shape]
        part = values(kind, int(np.prod(count)), seed + 1)
        arr.write_vlen(part, start, count)
    expected = obj(vals, shape)
    expected[tuple(slice(a, a + c) for a, c in zip(start, count))] = obj(part, count)
    got = zarr.open_array(store=LocalStore(str(path)), mode="r", zarr_format=2)[...]
    assert same(got, expected), f"{tag}: zarr-python reads something else"


def t_v2_vlen_array(r, typestr, seed):
    path = r.path("vlen_array")
    rng = np.random.default_rng(seed)
    n, ch = 11, 4
    elems = [rng.normal(size=int(rng.integers(0, 5))).astype(typestr) if typestr[1] == "f" else
             rng.integers(-1000, 1000, int(rng.integers(0, 5))).astype(typestr) for _ in range(n)]
    filt = numcodecs.VLenArray(typestr)
    doc = {"zarr_format": 2, "shape": [n], "chunks": [ch], "dtype": "|O", "fill_value": None, "order": "C",
           "filters": [filt.get_config()], "compressor": {"id": "zstd", "level": 1}}
    native = np.dtype(typestr).newbyteorder("=")
    with zc.Array.create(path, json.dumps(doc)) as arr:
        arr.write_vlen([e.astype(native).tobytes() for e in elems])
        back = arr.read_vlen()
    assert back == [e.astype(native).tobytes() for e in elems], "libzarr reads back something else"
    comp = numcodecs.Zstd(level=1)
    got = []
    for k in range(-(-n // ch)):
        got.extend(filt.decode(comp.decode((path / str(k)).read_bytes())))
    got = got[:n]
    assert all(np.array_equal(np.asarray(a, dtype=native), b.astype(native)) for a, b in zip(got, elems)), \
        f"vlen-array {typestr}: numcodecs decodes something else"


def t_zp_to_lib(r, tag, kind, zarr_format, kw, seed):
    path = r.path(tag)
    shape, chunks = (7, 5), (3, 2)
    dtype = str if kind == "string" else VariableLengthBytes()
    vals = values(kind, 35, seed)
    z = zarr.create_array(store=LocalStore(str(path)), shape=shape, chunks=chunks, dtype=dtype,
                          zarr_format=zarr_format, **kw)
    z[0:5, :] = obj(vals, shape)[0:5, :]
    expected = z[...]
    with zc.Array.open(path) as arr:
        assert same(arr.read_vlen(), expected), f"{tag}: whole array differs"
        for start, count in boxes(list(shape), np.random.default_rng(seed), 6):
            want = expected[tuple(slice(a, a + c) for a, c in zip(start, count))]
            assert same(arr.read_vlen(start, count), want), f"{tag}: region {start}+{count} differs"


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    t0 = time.monotonic()
    utf8 = [{"name": "vlen-utf8", "configuration": {}}]
    vb = [{"name": "vlen-bytes", "configuration": {}}]
    zstd = {"name": "zstd", "configuration": {"level": 3, "checksum": True}}
    gzip = {"name": "gzip", "configuration": {"level": 5}}

    def shard(inner, loc):
        return [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 3], "codecs": inner + [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
            "index_location": loc}}]

    with tempfile.TemporaryDirectory(prefix="libzarr_vlen_interop_") as tmp:
        r = harness.Runner(Path(tmp), args.verbose, args.k)
        seed = 1
        for kind, base, fill in (("string", utf8, ""), ("string", utf8, "fill é"), ("bytes", vb, b""),
                                 ("bytes", vb, b"\x00\xff")):
            for ctag, codecs in (("plain", base), ("zstd", base + [zstd]), ("gzip_crc", base + [gzip, "crc32c"])):
                for shape, chunks in (([13], [4]), ([5, 7], [2, 3]), ([3, 4, 5], [2, 2, 3])):
                    tag = f"v3/{kind}/{ctag}/{len(shape)}d/fill{len(fill)}"
                    r.run(tag, t_v3, r, tag.replace("/", "_"), kind, shape, chunks, fill, codecs, seed)
                    seed += 10
            for loc in ("start", "end"):
                tag = f"v3/{kind}/sharded_{loc}/fill{len(fill)}"
                r.run(tag, t_v3, r, tag.replace("/", "_"), kind, [9, 10], [4, 6], fill, shard(base, loc), seed)
                seed += 10
        for kind, filt in (("string", {"id": "vlen-utf8"}), ("bytes", {"id": "vlen-bytes"})):
            for ctag, comp in (("none", None), ("zlib", {"id": "zlib", "level": 1}),
                               ("blosc", {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0})):
                for fill in (None, ""):
                    tag = f"v2/{kind}/{ctag}/fill_{fill}"
                    r.run(tag, t_v2, r, tag.replace("/", "_"), filt, comp, kind, [9, 4], [4, 3], fill, seed)
                    seed += 10
        for typestr in ("<i4", ">i2", "<f8", ">f4"):
            r.run(f"v2/vlen-array/{typestr}", t_v2_vlen_array, r, typestr, seed)
            seed += 10
        for kind in ("string", "bytes"):
            r.run(f"zp_to_lib/v3/{kind}", t_zp_to_lib, r, f"zp3_{kind}", kind, 3, {}, seed)
            r.run(f"zp_to_lib/v3_sharded/{kind}", t_zp_to_lib, r, f"zp3s_{kind}", kind, 3, {"shards": (6, 4)}, seed)
            r.run(f"zp_to_lib/v2/{kind}", t_zp_to_lib, r, f"zp2_{kind}", kind, 2, {}, seed)
            seed += 10
    print(f"{r.passed} passed, {len(r.failed)} failed ({time.monotonic() - t0:.1f} s)")
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
