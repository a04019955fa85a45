#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz targets (fuzz/corpus/<target>/) from the committed fixtures
(tests/fixtures) and codec vectors (tests/vectors), in the input layouts described in src/fuzzing.rs.
The generated corpora are not committed; run this before fuzzing (fuzz/smoke.sh does).

Usage: fuzz/make_seeds.py [OUT_DIR]   (default: fuzz/corpus)
"""
import hashlib
import io
import json
import os
import struct
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
VECTORS = os.path.join(ROOT, "tests", "vectors")
MAX_SEED = 1 << 16  # bytes: larger inputs only slow the fuzzer down
MAX_CHUNKS = 3  # chunk seeds per array

counts = {}


def put(out, target, data):
    if len(data) > MAX_SEED:
        return
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
    counts[target] = counts.get(target, 0) + 1


def header(obj):
    h = json.dumps(obj, separators=(",", ":")).encode()
    return struct.pack("<H", len(h)) + h


def load(raw):
    """The JSON object in `raw`, or None (fixtures include malformed documents on purpose)."""
    try:
        doc = json.loads(raw)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def read(p):
    with open(p, "rb") as f:
        return f.read()


def chunk_files(d, meta_names):
    """Files of an array directory other than its metadata, smallest first."""
    files = []
    for base, _, names in os.walk(d):
        for n in names:
            p = os.path.join(base, n)
            if os.path.relpath(p, d) not in meta_names:
                files.append(p)
    return sorted(files, key=lambda p: (os.path.getsize(p), p))


def array_dirs(meta_name):
    for base, _, names in sorted(os.walk(FIXTURES)):
        if meta_name in names:
            yield base


SEL = [bytes(8), bytes([1, 2, 1, 3, 0, 2, 1, 1])]


def v3(out):
    for d in array_dirs("zarr.json"):
        raw = read(os.path.join(d, "zarr.json"))
        put(out, "metadata_v3", raw)
        doc = load(raw)
        if doc is None or doc.get("node_type") != "array" or "codecs" not in doc:
            continue
        grid = doc.get("chunk_grid", {})
        cfg = grid.get("configuration", {}) if isinstance(grid, dict) else {}
        chunk_shape = cfg.get("chunk_shape")
        if not isinstance(chunk_shape, list) or not all(isinstance(x, int) for x in chunk_shape):
            continue
        chunks = chunk_files(d, {"zarr.json"})[:MAX_CHUNKS]
        h = {"data_type": doc["data_type"], "chunk_shape": chunk_shape, "codecs": doc["codecs"]}
        for i, c in enumerate(chunks):
            put(out, "codec_v3", header(h) + SEL[i % 2] + read(c))
        for c in doc["codecs"]:
            if isinstance(c, dict) and c.get("name") == "sharding_indexed":
                sh = {"data_type": doc["data_type"], "shard_shape": chunk_shape, "configuration": c["configuration"]}
                for i, ch in enumerate(chunks):
                    put(out, "shard_index", header(sh) + SEL[i % 2] + read(ch))
        store_seed(out, d, chunks, ["zarr.json"])


def store_seed(out, d, chunks, meta_names):
    data = SEL[1]
    for name in meta_names:
        p = os.path.join(d, name)
        if os.path.exists(p):
            data += entry(name, read(p))
    for c in chunks:
        data += entry(os.path.relpath(c, d), read(c))
    put(out, "store_read", data)


def entry(key, value):
    k = key.replace(os.sep, "/").encode()
    return bytes([len(k)]) + k + struct.pack("<I", len(value)) + value


def v2(out):
    for d in array_dirs(".zarray"):
        raw = read(os.path.join(d, ".zarray"))
        attrs_p = os.path.join(d, ".zattrs")
        attrs = read(attrs_p) if os.path.exists(attrs_p) else None
        put(out, "metadata_v2", raw + (b"\0" + attrs if attrs else b""))
        doc = load(raw)
        chunks = chunk_files(d, {".zarray", ".zattrs"})[:MAX_CHUNKS]
        if doc is None or "dtype" not in doc:
            store_seed(out, d, chunks, [".zarray", ".zattrs"])
            continue
        nbytes = doc_nbytes(doc)
        h = {"dtype": doc["dtype"] if isinstance(doc["dtype"], str) else "|u1",
             "compressor": doc.get("compressor"), "filters": doc.get("filters") or [], "size": nbytes}
        for c in chunks:
            put(out, "codec_numcodecs", header(h) + read(c))
        store_seed(out, d, chunks, [".zarray", ".zattrs"])
    for d in array_dirs(".zgroup"):
        raw = read(os.path.join(d, ".zgroup"))
        put(out, "metadata_v2", raw)


def doc_nbytes(doc):
    n = 1
    for c in doc.get("chunks", []):
        n *= c
    dt = doc.get("dtype")
    size = int(dt[2:]) if isinstance(dt, str) and dt[2:].isdigit() else 1
    return n * size


def v1(out):
    for d in array_dirs("meta"):
        raw = read(os.path.join(d, "meta"))
        attrs_p = os.path.join(d, "attrs")
        attrs = read(attrs_p) if os.path.exists(attrs_p) else None
        put(out, "metadata_v1", raw + (b"\0" + attrs if attrs else b""))
        chunks = chunk_files(d, {"meta", "attrs"})[:MAX_CHUNKS]
        store_seed(out, d, chunks, ["meta", "attrs"])


def vectors(out):
    """The numcodecs compressor vectors and the filter vectors (tests/vectors)."""
    man = os.path.join(VECTORS, "numcodecs", "manifest.json")
    if os.path.exists(man):
        for name, v in json.load(open(man))["vectors"].items():
            p = os.path.join(VECTORS, "numcodecs", name)
            if os.path.exists(p):
                h = {"dtype": "|u1", "compressor": v["config"], "size": 4096}
                put(out, "codec_numcodecs", header(h) + read(p))
    idx = os.path.join(VECTORS, "filters", "index.json")
    if os.path.exists(idx):
        for v in json.load(open(idx))["vectors"]:
            p = os.path.join(VECTORS, "filters", v["name"] + ".enc")
            if os.path.exists(p) and "filter" in v:
                h = {"dtype": v.get("input", "|u1"), "filters": [v["filter"]], "size": 0}
                put(out, "codec_numcodecs", header(h) + read(p))


# Codecs no fixture uses: seeds with plausible (not necessarily valid) chunk bytes, for the fuzzer to
# start from a configuration that builds.
SYNTHETIC_V3 = [
    ("bool", [16], [{"name": "packbits", "configuration": {"padding_encoding": "first_byte"}}], bytes([0, 0xA5, 0x5A])),
    ("uint4", [8], [{"name": "packbits", "configuration": {"padding_encoding": "none"}}], bytes([0x12, 0x34, 0x56, 0x78])),
    ("int2", [6], [{"name": "packbits", "configuration": {"padding_encoding": "last_byte"}}], bytes([0xE4, 0x0F, 4])),
    ("float32", [2, 3, 4], [{"name": "reshape", "configuration": {"shape": [[0, 1], [2]]}}, "bytes"], bytes(96)),
    ("float32", [4, 4], [{"name": "reshape", "configuration": {"shape": [-1]}}, "bytes"], bytes(64)),
    ("float32", [8], [{"name": "bitround", "configuration": {"keepbits": 10}}, "bytes"], bytes(range(32))),
    ("float64", [4, 4], [{"name": "zfp", "configuration": {"mode": "fixed_accuracy", "tolerance": 0.05}}], bytes(range(64))),
    ("float32", [8, 8], [{"name": "zfp", "configuration": {"mode": "fixed_rate", "rate": 8}}], bytes(range(64))),
    ("int32", [16], [{"name": "zfp", "configuration": {"mode": "reversible"}}], bytes(range(64))),
    ("float32", [4, 4], [{"name": "zfp", "configuration": {"mode": "fixed_precision", "precision": 12}}], bytes(range(48))),
    ("uint8", [16], [{"name": "numcodecs.packbits"}, "bytes"], bytes([0, 0xff, 0x0f])),
]


def synthetic(out):
    for dt, shape, codecs, enc in SYNTHETIC_V3:
        put(out, "codec_v3", header({"data_type": dt, "chunk_shape": shape, "codecs": codecs}) + SEL[1] + enc)


def node_dirs():
    """Fixture directories that are a Zarr node (v3, v2 or v1), sorted."""
    for base, _, names in sorted(os.walk(FIXTURES)):
        if {"zarr.json", ".zarray", ".zgroup", "meta"} & set(names):
            yield base


def zip_of(d, method):
    """The files below `d` as a zip archive (store keys as member names), or None when too large."""
    files = []
    for base, _, names in sorted(os.walk(d)):
        for n in sorted(names):
            p = os.path.join(base, n)
            files.append((os.path.relpath(p, d).replace(os.sep, "/"), p))
    if sum(os.path.getsize(p) for _, p in files) > MAX_SEED // 2:
        return None
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, p in files:
            z.write(p, name)
    return buf.getvalue()


def zips(out):
    """`zip_store`: fixture nodes (arrays, and hierarchies such as v3/hier) zipped as zarr-python's
    ZipStore writes them (stored members), and deflated; both with the two selections."""
    for i, d in enumerate(node_dirs()):
        for method in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            z = zip_of(d, method)
            if z is not None:
                put(out, "zip_store", SEL[i % 2] + z)


HTTP_DATE = "Sun, 29 Nov 2026 09:00:00 GMT"


def answer(status, body=b"", headers=(), length=None):
    """An HTTP/1.1 answer: status line, headers (Content-Length of the body unless `length` says
    otherwise; none when it is False), blank line, body."""
    h = [f"HTTP/1.1 {status}", f"Last-Modified: {HTTP_DATE}", 'ETag: "e1"', "Accept-Ranges: bytes"]
    if length is not False:
        h.append(f"Content-Length: {len(body) if length is None else length}")
    h.extend(headers)
    return ("\r\n".join(h) + "\r\n\r\n").encode() + body


def ranged(value, start, end):
    """A 206 answer with the bytes start..end (exclusive) of `value`."""
    end = min(end, len(value))
    cr = f"Content-Range: bytes {start}-{end - 1}/{len(value)}"
    return answer("206 Partial Content", value[start:end], [cr])


def answers(flags, items):
    return bytes([flags]) + b"".join(struct.pack("<I", len(a)) + a for a in items)


def s3_listing(keys, prefixes):
    contents = "".join(
        f"<Contents><Key>arr/{k}</Key><LastModified>2026-11-29T09:00:00.000Z</LastModified>"
        f"<ETag>&quot;e1&quot;</ETag><Size>{n}</Size><StorageClass>STANDARD</StorageClass></Contents>"
        for k, n in keys
    )
    common = "".join(f"<CommonPrefixes><Prefix>arr/{p}/</Prefix></CommonPrefixes>" for p in prefixes)
    return (
        '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        f"<Name>bucket</Name><Prefix>arr/</Prefix><KeyCount>{len(keys) + len(prefixes)}</KeyCount>"
        f"<MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter><IsTruncated>false</IsTruncated>{contents}{common}"
        "</ListBucketResult>"
    ).encode()


def remote(out):
    """`remote_answer`: the answers a well-behaved server gives to the target's requests, in their
    order, for fixture arrays (zarr.json and a chunk); then single answers repeated for every request:
    hostile lengths (Content-Length 2^40 with a body past every limit), wrong or missing Content-Range,
    chunked and unterminated bodies, errors, an S3 listing."""
    n = 0
    for d in array_dirs("zarr.json"):
        meta = read(os.path.join(d, "zarr.json"))
        chunks = chunk_files(d, {"zarr.json"})
        if not chunks or load(meta) is None or n >= 6:
            continue
        n += 1
        c = read(chunks[0])
        L = len(c)
        seq = [
            answer("200 OK", meta),                    # GET zarr.json
            answer("200 OK", c),                       # GET c/0 (whole, limited)
            answer("200 OK", b"", length=L),           # HEAD c/0
            ranged(c, 0, 64),                          # its first bytes
            ranged(c, max(L - 64, 0), L),              # its last bytes
            ranged(c, L // 2, L // 2 + min(L, 64) // 2),
            ranged(c, max(L - 48, 0), L),              # suffix range
            ranged(c, 8, 40),
            ranged(c, 0, 16),
            answer("200 OK", c),                       # streamed GET
            answer("200 OK", b"", length=L),           # HEAD (exists)
            answer("200 OK", meta),                    # the C API: zarr.json
            answer("200 OK", c),                       # and chunks
        ]
        for flags in (0, 1):
            put(out, "remote_answer", answers(flags, seq))
        listing = s3_listing([("zarr.json", len(meta))], ["c"])
        put(out, "remote_answer", answers(1, seq[:11] + [answer("200 OK", listing, ["Content-Type: application/xml"])] + seq[11:]))
    zeros = bytes(20 << 10)
    single = [
        answer("200 OK", zeros, length=1 << 40),
        answer("206 Partial Content", zeros, ["Content-Range: bytes 0-1099511627775/1099511627776"], length=1 << 40),
        answer("206 Partial Content", b"0123456789", ["Content-Range: bytes 0-9/100"]),
        answer("206 Partial Content", b"0123456789", ["Content-Range: bytes 90-99/100"]),
        answer("206 Partial Content", b"01234", ["Content-Range: bytes 0-9/100"], length=10),
        answer("206 Partial Content", b"0123456789", ["Content-Range: bytes 0-99999999999/100"]),
        answer("206 Partial Content", b"0123456789", ["Content-Range: bytes */100"]),
        answer("200 OK", b"0123456789", length=1000),
        answer("200 OK", b"a" * 300, length=False),
        answer("200 OK", b"5\r\nhello\r\n0\r\n\r\n", ["Transfer-Encoding: chunked"], length=False),
        answer("200 OK", b"ffffffffff\r\nhello", ["Transfer-Encoding: chunked"], length=False),
        answer("404 Not Found", b"no such key"),
        answer("416 Range Not Satisfiable", b"", ["Content-Range: bytes */0"]),
        answer("500 Internal Server Error", b"<Error><Code>InternalError</Code></Error>"),
        answer("200 OK", s3_listing([("zarr.json", 10), ("x", 1 << 40)], ["c", "d"])),
        answer("301 Moved Permanently", b"", ["Location: /elsewhere"]),
    ]
    for a in single:
        for flags in (0, 1):
            put(out, "remote_answer", answers(flags, [a]))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "fuzz", "corpus")
    v3(out)
    v2(out)
    v1(out)
    vectors(out)
    synthetic(out)
    zips(out)
    remote(out)
    for t in sorted(counts):
        print(f"{t}: {counts[t]} seeds")


if __name__ == "__main__":
    main()
