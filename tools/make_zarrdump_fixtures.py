#!/usr/bin/env python3
"""Writes the zarrdump test hierarchies with zarr-python (an independent writer):

    python3 tools/make_zarrdump_fixtures.py      # zarr-python 3.1.6 (tools/requirements-ci.txt)

tests/zarrdump/small.zarr (Zarr v3): a root group with attributes; 'temperature' float32 [4, 5]
(chunks [2, 3], dimension names, NaN fill, two of four chunks written); 'counts' int16 [10] (chunks
[4], fill -1, all written); 'sub' group with 'flags' bool [3] and 'sharded' uint8 [8, 8] (shards
[4, 8], inner chunks [2, 4], one of two shards written); 'names' string [3].
tests/zarrdump/small_v2.zarr (Zarr v2): a group with 'grid' int32 [3, 4] (blosc lz4) and 'f8' float64
[5] (zlib, a shuffle filter... none written: every element is the fill value 2.5).
The expected outputs beside them (*.expected.txt) are zarrdump's, checked by hand once and kept:
tests/zarrdump/test_zarrdump.py compares them exactly and compares --json with zarr-python's view.
"""
import shutil
from pathlib import Path

import numcodecs
import numpy as np
import zarr

OUT = Path(__file__).resolve().parent.parent / "tests" / "zarrdump"


def v3():
    path = OUT / "small.zarr"
    shutil.rmtree(path, ignore_errors=True)
    root = zarr.open_group(str(path), mode="w", zarr_format=3, attributes={"title": "zarrdump fixture", "version": 1})
    t = root.create_array("temperature", shape=(4, 5), chunks=(2, 3), dtype="float32", fill_value=float("nan"),
                          dimension_names=["y", "x"], attributes={"units": "K"})
    t[0:2, :] = np.arange(10, dtype="float32").reshape(2, 5) + 0.5
    c = root.create_array("counts", shape=(10,), chunks=(4,), dtype="int16", fill_value=-1)
    c[:] = np.arange(10, dtype="int16") * 3 - 7
    sub = root.create_group("sub")
    f = sub.create_array("flags", shape=(3,), chunks=(3,), dtype="bool", fill_value=False)
    f[:] = [True, False, True]
    s = sub.create_array("sharded", shape=(8, 8), chunks=(2, 4), shards=(4, 8), dtype="uint8", fill_value=0)
    s[0:4, :] = np.arange(32, dtype="uint8").reshape(4, 8)
    n = root.create_array("names", shape=(3,), chunks=(3,), dtype=str, fill_value="")
    n[:] = np.array(["a", "bb", "ccc"], dtype=object)


def v2():
    path = OUT / "small_v2.zarr"
    shutil.rmtree(path, ignore_errors=True)
    root = zarr.open_group(str(path), mode="w", zarr_format=2, attributes={"kind": "v2"})
    g = root.create_array("grid", shape=(3, 4), chunks=(2, 2), dtype="<i4", fill_value=0,
                          compressors=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1))
    g[:] = np.arange(12, dtype="<i4").reshape(3, 4)
    root.create_array("f8", shape=(5,), chunks=(5,), dtype="<f8", fill_value=2.5,
                      compressors=numcodecs.Zlib(level=1), filters=[numcodecs.Shuffle(elementsize=8)])


if __name__ == "__main__":
    assert zarr.__version__ == "3.1.6", zarr.__version__
    v3()
    v2()
    print(f"wrote {OUT}/small.zarr and small_v2.zarr")
