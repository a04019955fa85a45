#!/usr/bin/env python3
"""Writes test vectors for libzarr's numcodecs compressors, encoded by the real numcodecs.

Usage: python3 tools/numcodecs_vectors.py [OUTDIR]   (default: tests/vectors/numcodecs)

Writes `input.bin` (the raw bytes every vector decodes to, unless noted), one `<name>.bin` per
configuration below, and `manifest.json` mapping each file to its numcodecs configuration and the
file it decodes to. The Rust unit tests of src/codec/compress/{lz4,bz2,lzma}.rs decode every vector
and compare. Deterministic: rerunning with the same numcodecs/liblz4/libbz2/liblzma gives the same
bytes (lz4 and bz2 output is stable across versions; lzma may differ, which the tests allow).
"""

import json
import lzma
import os
import sys

import numcodecs
import numpy as np

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "vectors", "numcodecs")

# About 1.4 KB: a little-endian int32 ramp (compressible), float64 samples of a sine (hard) and text.
INPUT = ((np.arange(200, dtype="<i4") // 3).tobytes() + np.sin(np.arange(40) * 0.1).astype("<f8").tobytes()
         + b"libzarr numcodecs test vector. " * 8)
SECOND = b"a second stream " * 8

VECTORS = {
    "lz4_acc1": {"id": "lz4", "acceleration": 1},
    "lz4_acc10": {"id": "lz4", "acceleration": 10},
    "bz2_level1": {"id": "bz2", "level": 1},
    "bz2_level9": {"id": "bz2", "level": 9},
    "lzma_xz": {"id": "lzma", "format": 1, "check": -1, "preset": None, "filters": None},
    "lzma_xz_check0": {"id": "lzma", "format": 1, "check": 0, "preset": 1, "filters": None},
    "lzma_xz_check10": {"id": "lzma", "format": 1, "check": 10, "preset": 9, "filters": None},
    "lzma_alone": {"id": "lzma", "format": 2, "check": -1, "preset": None, "filters": None},
    "lzma_raw_lzma2": {"id": "lzma", "format": 3, "check": -1, "preset": None,
                       "filters": [{"id": lzma.FILTER_LZMA2, "preset": 1}]},
    "lzma_raw_delta_lzma2": {"id": "lzma", "format": 3, "check": -1, "preset": None,
                             "filters": [{"id": lzma.FILTER_DELTA, "dist": 4},
                                         {"id": lzma.FILTER_LZMA2, "preset": 1}]},
    "lzma_raw_lzma1": {"id": "lzma", "format": 3, "check": -1, "preset": None,
                       "filters": [{"id": lzma.FILTER_LZMA1, "preset": 6, "lc": 0, "pb": 0}]},
}


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(bytes(data))


def main():
    os.makedirs(OUT, exist_ok=True)
    write("input.bin", INPUT)
    write("second.bin", SECOND)
    manifest = {}
    for name, cfg in VECTORS.items():
        codec = numcodecs.get_codec(dict(cfg))
        enc = bytes(codec.encode(INPUT))
        # numcodecs must read back what it wrote
        assert bytes(codec.decode(enc)) == INPUT, name
        write(name + ".bin", enc)
        manifest[name + ".bin"] = {"config": cfg, "decoded": "input.bin"}
    # Empty chunk: numcodecs writes the header 0 and the one-byte empty block.
    write("lz4_empty.bin", numcodecs.LZ4().encode(b""))
    manifest["lz4_empty.bin"] = {"config": VECTORS["lz4_acc1"], "decoded": None}
    # Concatenated streams, which Python's bz2/lzma.decompress (what numcodecs calls) accept: they
    # decode to input.bin + second.bin.
    import bz2
    both = INPUT + SECOND
    cat = bz2.compress(INPUT, 1) + bz2.compress(SECOND, 9)
    assert bytes(numcodecs.BZ2().decode(cat)) == both
    write("bz2_concat.bin", cat)
    manifest["bz2_concat.bin"] = {"config": VECTORS["bz2_level1"], "decoded": ["input.bin", "second.bin"]}
    cat = lzma.compress(INPUT, check=lzma.CHECK_CRC32) + lzma.compress(SECOND, check=lzma.CHECK_SHA256)
    assert bytes(numcodecs.LZMA().decode(cat)) == both
    write("lzma_xz_concat.bin", cat)
    manifest["lzma_xz_concat.bin"] = {"config": VECTORS["lzma_xz"], "decoded": ["input.bin", "second.bin"]}
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump({"numcodecs": numcodecs.__version__, "vectors": manifest}, f, indent=1, sort_keys=True)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
    print(f"wrote {len(os.listdir(OUT))} files, {total} bytes, to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
