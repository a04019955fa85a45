#!/usr/bin/env python3
"""Writes the variable-length fixtures that need zarr-python 3.4.2 (kind "v3-vlen-342") into
tests/fixtures: `string` / `variable_length_bytes` arrays with nested sharding, with a rectilinear
chunk grid and with a transpose codec, alone and combined.

    .venv-zarr342/bin/python tools/make_vlen342_fixtures.py            # into tests/fixtures
    .venv-zarr342/bin/python tools/make_vlen342_fixtures.py --out DIR

Needs Python 3.12 with zarr==3.4.2 (the first release that writes rectilinear grids; .ci/run creates
the venv .venv-zarr342). The cases of kind "v3-vlen-342" in the manifest are replaced (their
directories v3/<name> and expected files rewritten); every other case is left alone, and
tools/make_fixtures.py keeps these cases when it regenerates the rest.

Every array is written by zarr-python with partial writes (so that some chunks, shards and inner
chunks are missing or hold only the fill value); the expected file is the flattened array zarr-python
reads back, in the format of tools/make_vlen_fixtures.py (strings as JSON strings, bytes as base64).
After writing, every case is read back with zarr-python and compared with its expected file.
Deterministic: fixed seeds.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_vlen_fixtures as mv  # noqa: E402  (Gen, strings, blobs, verify)
import zarr  # noqa: E402
from zarr.codecs import GzipCodec, ShardingCodec, TransposeCodec, VLenBytesCodec, VLenUTF8Codec, ZstdCodec  # noqa: E402

ZARR_VERSION = "3.4.2"
KIND = "v3-vlen-342"


def nested(outer_inner, inner_inner, codecs):
    """Sharding inside sharding: shards of the grid's chunk shape hold shards of `outer_inner` holding
    chunks of `inner_inner` encoded by `codecs`."""
    return ShardingCodec(chunk_shape=outer_inner, codecs=[ShardingCodec(chunk_shape=inner_inner, codecs=codecs)])


def generate(g):
    s = mv.strings(11 * 10, 21)
    g.zp("vlen342_string_nested_sharding", s, (11, 10), (8, 6),
         "string; shards of 8x6 holding shards of 4x6 holding chunks of 2x3 (vlen-utf8 + zstd), written "
         "with serializer=ShardingCodec(ShardingCodec(...)); edge shards; shard (1,1) never written; inner "
         "chunks holding only the fill \"\" not stored",
         fill="", compressors=None, serializer=nested((4, 6), (2, 3), [VLenUTF8Codec(), ZstdCodec(level=1)]),
         write=[(slice(0, 8), slice(0, 6)), (slice(0, 3), slice(6, 10)), (slice(9, 11), slice(0, 5))])
    b = mv.blobs(16 * 3, 22)
    g.zp("vlen342_bytes_nested_sharding", b, (16, 3), (8, 3),
         "variable_length_bytes; shards of 8x3 holding shards of 4x3 holding chunks of 2x1 (vlen-bytes), "
         "index at the start of the inner shards", dtype=mv.VariableLengthBytes(), fill=b"", compressors=None,
         serializer=ShardingCodec(chunk_shape=(4, 3), codecs=[
             ShardingCodec(chunk_shape=(2, 1), codecs=[VLenBytesCodec()], index_location="start")]),
         write=[(slice(0, 16), slice(None)), (slice(5, 7), slice(None))])
    s = mv.strings(10 * 11, 23)
    g.zp("vlen342_string_rectilinear", s, (10, 11), [[3, 4, 3], [2, 2, 2, 5]],
         "string on a rectilinear grid (rows 3,4,3; columns 2,2,2,5 written run-length encoded by zarr-python), "
         "vlen-utf8 + gzip(1); chunks (0,3) and (2,0) never written (fill \"fill\")",
         fill="fill", compressors=[GzipCodec(level=1)],
         write=[(slice(0, 3), slice(0, 6)), (slice(3, 7), slice(None)), (slice(7, 10), slice(2, 11))])
    s = mv.strings(5 * 4 * 6, 24)
    g.zp("vlen342_string_transpose", s, (5, 4, 6), (2, 3, 4),
         "string with transpose order [2,0,1] before vlen-utf8 + zstd (chunks stored with the last "
         "dimension first); edge chunks; chunk (2,1,1) never written (fill \"-\")",
         fill="-", filters=[TransposeCodec(order=(2, 0, 1))],
         write=[(slice(0, 4), slice(None), slice(None)), (slice(4, 5), slice(0, 3), slice(None))])
    s = mv.strings(12 * 9, 25)
    g.zp("vlen342_string_rectilinear_sharded_transpose", s, (12, 9), [[8, 4], [6, 3]],
         "string on a rectilinear grid of shards (8,4 x 6,3) holding chunks of 2x3 whose chain is "
         "transpose [1,0] + vlen-utf8 + zstd; shard (1,1) never written",
         fill="", compressors=None,
         serializer=ShardingCodec(chunk_shape=(2, 3), codecs=[TransposeCodec(order=(1, 0)), VLenUTF8Codec(),
                                                              ZstdCodec(level=1)]),
         write=[(slice(0, 8), slice(None)), (slice(8, 12), slice(0, 6))])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=mv.ROOT / "tests" / "fixtures")
    args = ap.parse_args()
    if zarr.__version__ != ZARR_VERSION:
        sys.exit(f"make_vlen342_fixtures.py pins zarr-python {ZARR_VERSION} (found {zarr.__version__})")
    zarr.config.set({"array.rectilinear_chunks": True})
    g = mv.Gen(args.out)
    generate(g)
    for c in g.cases:
        c["kind"] = KIND
        c["reference_readers"] = {"zarr-python 3.4.2": "yes"}
    mv.verify(g)
    mpath = args.out / "manifest.json"
    m = json.loads(mpath.read_text())
    m["cases"] = [c for c in m["cases"] if c["kind"] != KIND] + g.cases
    mpath.write_text(json.dumps(m, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(g.cases)} variable-length cases (zarr-python {ZARR_VERSION}) written to {args.out}")


if __name__ == "__main__":
    main()
