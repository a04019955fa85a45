"""A minimal, independent Zarr v1/v2 reader: numpy for the data types and the chunk layout, numcodecs'
codec classes for the compressors and filters. It is the reference for what zarr-python 3.1.6 cannot
read (Zarr v1; structured dtypes with subarray or nested fields) and a second check of the rest, in
tools/make_fixtures.py and tests/interop/test_v2_roundtrip.py. It reads whole arrays only.
"""
import base64
import json
from pathlib import Path

import numcodecs
import numpy as np


def np_dtype_of(v):
    """The numpy dtype of a .zarray / meta `dtype` value (typestr or structured descr list)."""
    if isinstance(v, str):
        return np.dtype(v)
    return np.dtype([tuple([f[0], np_dtype_of(f[1])] + ([tuple(f[2])] if len(f) > 2 else [])) for f in v])


def grid_of(shape, chunks):
    return [-(-s // c) for s, c in zip(shape, chunks)]


def chunk_slices(ci, chunks, shape):
    return tuple(slice(c * k, min((c + 1) * k, s)) for c, k, s in zip(ci, chunks, shape))


def np_read(path):
    """The whole v1/v2 array stored in the directory `path` (missing chunks as the fill value; a null fill
    reads as zeros)."""
    path = Path(path)
    if (path / ".zarray").exists():
        meta = json.loads((path / ".zarray").read_text())
        comp, filters = meta.get("compressor"), meta.get("filters") or []
        sep = meta.get("dimension_separator") or "."
    else:
        meta = json.loads((path / "meta").read_text())
        c, o = meta["compression"], meta.get("compression_opts")
        comp = None if c in (None, "none") else ({"id": c, "level": o} if c in ("zlib", "bz2") else {"id": c, **o})
        filters, sep = [], "."
    dt = np_dtype_of(meta["dtype"])
    shape, chunks, order = meta["shape"], meta["chunks"], meta.get("order") or "C"
    fv = meta["fill_value"]
    fill = np.zeros((), dtype=dt)
    if fv is not None:
        if dt.names or dt.kind in "SV":
            # zarr-python writes "" (no bytes) for the default |S fill: short values are NUL padded, as numpy does
            fill = np.frombuffer(base64.b64decode(fv).ljust(dt.itemsize, b"\0"), dtype=dt)[0]
        else:
            fill = np.array(fv if not isinstance(fv, list) else complex(float(fv[0]), float(fv[1])), dtype=dt)
    out = np.empty(shape, dtype=dt)
    out[...] = fill
    for ci in np.ndindex(*grid_of(shape, chunks)):
        key = path / (sep.join(map(str, ci)) if len(shape) else "0")
        if not key.exists():
            continue
        buf = key.read_bytes()
        if comp:
            buf = numcodecs.get_codec(dict(comp)).decode(buf)
        for f in reversed(filters):
            buf = numcodecs.get_codec(dict(f)).decode(buf)
        raw = np.ascontiguousarray(np.asarray(buf)).tobytes() if isinstance(buf, np.ndarray) else bytes(buf)
        chunk = np.frombuffer(raw, dtype=dt).reshape(chunks, order=order)
        sl = chunk_slices(ci, chunks, shape)
        out[sl] = chunk[tuple(slice(0, s.stop - s.start) for s in sl)]
    return out
