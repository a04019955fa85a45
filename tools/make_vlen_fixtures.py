#!/usr/bin/env python3
"""Generates the variable-length fixtures (string / bytes data types, v2 object arrays) in tests/fixtures.

    python3 tools/make_vlen_fixtures.py            # (re)writes the vlen cases into tests/fixtures
    python3 tools/make_vlen_fixtures.py --out DIR  # another fixtures directory

Run it after tools/make_fixtures.py (which wipes tests/fixtures): it replaces its own cases (the names
listed in CASES below) in manifest.json and leaves every other case alone.

Writers: zarr-python 3.1.6 for the v3 `string` / `variable_length_bytes` arrays (plain, compressed,
sharded) and the v2 `|O` arrays with the vlen-utf8 / vlen-bytes filters; "hand-written" for v2 `|O`
arrays with numcodecs' vlen-array filter (zarr-python 3.1.6 cannot create them: chunks encoded by
numcodecs' VLenArray, `.zarray` written here) and for damaged chunks.

Expected files use the corpus's `expected_format` "json": a JSON list of the flattened values in C order
(missing chunks as the fill value); strings as JSON strings, bytes as base64, a vlen-array element as
base64 of its items little-endian. After writing, every case is read back with zarr-python (numcodecs'
VLenArray decoding chunk by chunk for vlen-array) and compared with its expected file.
"""
import argparse
import base64
import json
import shutil
import sys
import warnings
from pathlib import Path

import numpy as np

try:
    import numcodecs
    import zarr
    from zarr.codecs import GzipCodec, ZstdCodec
    from zarr.core.dtype import VariableLengthBytes
    from zarr.storage import LocalStore
except ImportError as e:  # pragma: no cover
    sys.exit(f"make_vlen_fixtures.py needs zarr-python 3.1.6 and numcodecs: {e}")

ROOT = Path(__file__).resolve().parent.parent
ZP = f"zarr-python {zarr.__version__}"
HW = "hand-written"
warnings.filterwarnings("ignore")

CASES = [
    "vlen_v3_string", "vlen_v3_string_fill_gzip", "vlen_v3_bytes", "vlen_v3_string_sharded",
    "vlen_v3_bytes_sharded", "v2_dtype_object_vlen_utf8", "vlen_v2_utf8_zlib", "vlen_v2_bytes",
    "vlen_v2_array_i4", "vlen_v2_array_f8_be", "vlen_v3_string_truncated", "vlen_v3_bytes_bad_count",
]


def strings(n, seed):
    """A deterministic mix: empty, ASCII, BMP and astral characters, controls, NUL, a long string."""
    rng = np.random.default_rng(seed)
    pool = ["", "a", "héllo", "日本語", "😀🎉", "tab\tnew\nline", "nul\0in", "x" * 300, "Ω≈ç√", "quote\"\\"]
    return [pool[i] if i < len(pool) else pool[rng.integers(len(pool))] + str(i) for i in range(n)]


def blobs(n, seed):
    rng = np.random.default_rng(seed)
    pool = [b"", b"\0", bytes(range(256)), b"\xff" * 100, b"abc"]
    return [pool[i] if i < len(pool) else rng.integers(0, 256, rng.integers(0, 20), dtype=np.uint8).tobytes()
            for i in range(n)]


def obj(values, shape):
    a = np.empty(len(values), dtype=object)
    a[:] = values
    return a.reshape(shape)


class Gen:
    def __init__(self, out: Path):
        self.out = out
        self.cases = []

    def dir(self, zarr_format, name):
        d = self.out / f"v{zarr_format}" / name
        shutil.rmtree(d, ignore_errors=True)
        return d

    def add(self, name, zarr_format, data_type, shape, values, writer, notes, *, source_dtype=None,
            expect_error=None, corrupt_keys=None, readers=None):
        """`values`: the flattened expected elements (str, bytes, or numpy arrays for vlen-array)."""
        enc = []
        for v in values:
            if isinstance(v, str):
                enc.append(v)
            elif isinstance(v, np.ndarray):
                enc.append(base64.b64encode(v.astype(v.dtype.newbyteorder("<")).tobytes()).decode())
            else:
                enc.append(base64.b64encode(bytes(v)).decode())
        rel = f"expected/{name}.json"
        (self.out / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.out / rel).write_text(json.dumps(enc, ensure_ascii=False), encoding="utf-8")
        case = {"name": name, "kind": f"v{zarr_format}-vlen" if name != "v2_dtype_object_vlen_utf8" else "v2-dtype",
                "path": f"v{zarr_format}/{name}", "zarr_format": zarr_format, "writer": writer,
                "data_type": data_type, "shape": list(shape), "expected": rel, "element_size": None,
                "expect_error": expect_error, "notes": notes, "expected_format": "json"}
        if zarr_format != 3:
            case["source_dtype"] = source_dtype
        case["reference_readers"] = readers or {"zarr-python": "yes"}
        if corrupt_keys is not None:
            case["corrupt_keys"] = corrupt_keys
        self.cases.append(case)

    def zp(self, name, values, shape, chunks, notes, *, dtype=str, zarr_format=3, fill=None, write=None,
           **kw):
        d = self.dir(zarr_format, name)
        a = zarr.create_array(store=LocalStore(str(d)), shape=shape, chunks=chunks, dtype=dtype,
                              zarr_format=zarr_format, fill_value=fill, **kw)
        data = obj(values, shape)
        for sl in (write or [tuple(slice(None) for _ in shape)]):
            a[sl] = data[sl]
        got = a[...]
        flat = [x for x in np.asarray(got, dtype=object).reshape(-1)]
        data_type = "string" if dtype is str else "variable_length_bytes"
        src = json.loads((d / ".zarray").read_text())["dtype"] if zarr_format == 2 else None
        self.add(name, zarr_format, data_type, shape, flat, ZP, notes, source_dtype=src)
        return d


def vlen_array_case(g, name, typestr, elems, shape, chunks, notes):
    """A v2 |O array with numcodecs' VLenArray filter: chunks encoded by numcodecs, .zarray by hand."""
    d = g.dir(2, name)
    d.mkdir(parents=True)
    codec = numcodecs.VLenArray(typestr)
    zlib = numcodecs.Zlib(level=1)
    fill = np.array([], dtype=typestr)
    (d / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": list(shape), "chunks": list(chunks), "dtype": "|O", "fill_value": None,
        "order": "C", "filters": [codec.get_config()], "compressor": zlib.get_config(),
        "dimension_separator": "."}, indent=2))
    n = len(elems)
    nchunks = -(-n // chunks[0])
    for c in range(nchunks):
        part = elems[c * chunks[0]:(c + 1) * chunks[0]]
        if c == 1:
            continue  # a missing chunk: reads as the fill value (null: empty elements)
        part = part + [fill] * (chunks[0] - len(part))
        (d / str(c)).write_bytes(zlib.encode(codec.encode(obj(part, (len(part),)))))
    expect = [e if (i // chunks[0]) != 1 else fill for i, e in enumerate(elems)]
    item = np.dtype(typestr)
    g.add(name, 2, "variable_length_bytes", shape, [np.asarray(e, dtype=item) for e in expect], HW,
          notes + f"; elements are read as the bytes of their native-endian {item.newbyteorder('=').name} items "
          "(expected: base64 of the items little-endian); chunk 1 missing (fill null: empty elements)",
          source_dtype="|O", readers={"zarr-python": "no: zarr-python 3.1.6 has no vlen-array data type",
                                      "numcodecs": "yes (VLenArray.decode per chunk)"})


def generate(g: Gen):
    s = strings(42, 1)
    g.zp("vlen_v3_string", s, (6, 7), (4, 4),
         "string (vlen-utf8 + zstd, zarr-python defaults): empty, non-ASCII (BMP, astral), controls, an "
         "embedded NUL, a 300-character string; chunk (1,1) never written (fill \"\")", fill="",
         write=[(slice(0, 4), slice(None)), (slice(4, 6), slice(0, 4))])
    s = strings(30, 2)
    g.zp("vlen_v3_string_fill_gzip", s, (30,), (7,),
         "string, fill \"fill\", vlen-utf8 + gzip(5); chunks 1 and 3 never written", fill="fill",
         compressors=[GzipCodec(level=5)], write=[slice(0, 7), slice(14, 21), slice(28, 30)])
    b = blobs(20, 3)
    g.zp("vlen_v3_bytes", b, (20,), (6,),
         "variable_length_bytes (vlen-bytes + zstd): empty, NUL, all 256 byte values, 100 x 0xff; chunk 2 "
         "never written (fill b\"\")", dtype=VariableLengthBytes(), fill=b"",
         write=[slice(0, 12), slice(18, 20)])
    s = strings(5 * 6, 4)
    g.zp("vlen_v3_string_sharded", s, (5, 6), (2, 3),
         "string in shards of 4x6 with inner chunks 2x3 (inner chain vlen-utf8 + zstd, index at the end "
         "with crc32c); edge shard; inner chunk (0,1) of shard 0 holds only the fill \"-\" (not stored)",
         fill="-", shards=(4, 6), write=[(slice(0, 2), slice(0, 3)), (slice(2, 5), slice(None))])
    b = blobs(12, 5)
    g.zp("vlen_v3_bytes_sharded", b, (12,), (2,),
         "variable_length_bytes in shards of 8 with inner chunks of 2 (vlen-bytes + zstd); shard 1 is an "
         "edge shard", dtype=VariableLengthBytes(), fill=b"", shards=(8,))
    g.zp("v2_dtype_object_vlen_utf8", ["a", "bb", "", "ccc", "é"], (5,), (2,),
         "object dtype |O with the vlen-utf8 filter (zarr-python's v2 variable-length strings), no "
         "compressor; read through the variable-length calls", zarr_format=2, compressors=None)
    s = strings(9 * 4, 6)
    g.zp("vlen_v2_utf8_zlib", s, (9, 4), (4, 3),
         "|O + vlen-utf8 filter + zlib compressor, 2-D with edge chunks; chunk (1,0) never written (fill "
         "\"\")", zarr_format=2, compressors=numcodecs.Zlib(level=1), fill="",
         write=[(slice(0, 4), slice(None)), (slice(4, 9), slice(3, 4)), (slice(8, 9), slice(None))])
    b = blobs(7, 7)
    g.zp("vlen_v2_bytes", b, (7,), (3,),
         "|O + vlen-bytes filter + zstd (zarr-python's v2 variable-length bytes)", zarr_format=2,
         dtype=VariableLengthBytes())
    rng = np.random.default_rng(8)
    elems = [rng.integers(-2**31, 2**31, int(rng.integers(0, 6)), dtype=np.int64).astype("<i4") for _ in range(10)]
    vlen_array_case(g, "vlen_v2_array_i4", "<i4", elems, (10,), (4,), "|O + numcodecs vlen-array <i4 + zlib")
    elems = [np.array([np.pi * k, -0.0, np.inf][:k % 4], dtype=">f8") for k in range(6)]
    vlen_array_case(g, "vlen_v2_array_f8_be", ">f8", elems, (6,), (2,),
                    "|O + numcodecs vlen-array >f8 (big-endian items) + zlib")
    # damaged chunks (hand-written from zarr-python arrays)
    s = strings(12, 9)
    d = g.zp("vlen_v3_string_truncated", s, (12,), (4,), "", compressors=None, fill="")
    g.cases.pop()
    raw = (d / "c" / "1").read_bytes()
    (d / "c" / "1").write_bytes(raw[:-3])
    g.add("vlen_v3_string_truncated", 3, "string", (12,), s, HW,
          "string with vlen-utf8 only (no compressor), written by zarr-python 3.1.6; chunk c/1 cut short by "
          "3 bytes (its last element runs past the end) -> codec", expect_error="codec", corrupt_keys=["c/1"],
          readers={"zarr-python": "yes (raises)"})
    b = blobs(8, 10)
    d = g.zp("vlen_v3_bytes_bad_count", b, (8,), (4,), "", dtype=VariableLengthBytes(), compressors=None,
             fill=b"")
    g.cases.pop()
    raw = bytearray((d / "c" / "0").read_bytes())
    raw[0:4] = (0x7FFFFFFF).to_bytes(4, "little")
    (d / "c" / "0").write_bytes(bytes(raw))
    g.add("vlen_v3_bytes_bad_count", 3, "variable_length_bytes", (8,), b, HW,
          "vlen-bytes chunk c/0 whose element count says 2^31-1 (the chunk holds 4): must fail as codec "
          "without allocating for the claimed count", expect_error="codec", corrupt_keys=["c/0"],
          readers={"zarr-python": "yes (raises)"})


def verify(g: Gen):
    """Reads every case back independently and compares with its expected file."""
    for c in g.cases:
        want = json.loads((g.out / c["expected"]).read_text(encoding="utf-8"))
        path = g.out / c["path"]
        if c["name"].startswith("vlen_v2_array"):
            meta = json.loads((path / ".zarray").read_text())
            codec = numcodecs.get_codec(meta["filters"][0])
            comp = numcodecs.get_codec(meta["compressor"])
            item = np.dtype(meta["filters"][0]["dtype"])
            ch = meta["chunks"][0]
            got = []
            for k in range(-(-meta["shape"][0] // ch)):
                f = path / str(k)
                part = codec.decode(comp.decode(f.read_bytes())) if f.exists() else [np.array([], item)] * ch
                got.extend(base64.b64encode(np.asarray(e, item).astype(item.newbyteorder("<")).tobytes()).decode()
                           for e in part)
            got = got[:meta["shape"][0]]
        else:
            a = zarr.open_array(store=LocalStore(str(path)), mode="r")
            try:
                vals = np.asarray(a[...], dtype=object).reshape(-1)
            except Exception:
                assert c["expect_error"], c["name"]
                continue
            if c["expect_error"]:
                raise SystemExit(f"{c['name']}: zarr-python read a damaged case")
            got = [v if isinstance(v, str) else base64.b64encode(bytes(v)).decode() for v in vals]
        if got != want:
            raise SystemExit(f"{c['name']}: read back differs from the expected file")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "fixtures")
    args = ap.parse_args()
    g = Gen(args.out)
    generate(g)
    verify(g)
    mpath = args.out / "manifest.json"
    m = json.loads(mpath.read_text()) if mpath.exists() else {"corpus_set": "libzarr-fixtures", "format_version": 1,
                                                             "cases": [], "groups": []}
    m["cases"] = [c for c in m["cases"] if c["name"] not in CASES] + g.cases
    mpath.write_text(json.dumps(m, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(g.cases)} variable-length cases written to {args.out}")


if __name__ == "__main__":
    main()
