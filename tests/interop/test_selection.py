#!/usr/bin/env python3
"""Selections through the C API checked against numpy and zarr-python.

  * zarr_read_hyperslab: arrays written by zarr-python (v3 regular + zstd, sharded, uncompressed
    big-endian, v2 + blosc, edge chunks) read with random starts, counts and steps into C-order,
    Fortran-order and padded buffers of other numeric types; the result must equal numpy's
    `a[start:stop:step].astype(t)` laid out the same way, and a value the buffer type cannot hold must
    be ZARR_ERR_VALUE exactly when numpy finds one;
  * zarr_write_hyperslab: strided, converted writes from Fortran-order buffers; zarr-python reads back
    the numpy model; a write with an unconvertible value stores nothing (every file byte-identical);
  * zarr_array_resize: the same grow/shrink done by zarr-python on a copy gives the same chunk files
    and the same values (v2 and v3);
  * chunk-level calls: the chunks a selection touches (brute force in numpy), stored flags (the files),
    whole-chunk reads and writes, erase;
  * writes of more than one batch of chunk parts (17 000 chunks, each covered in part), read back by
    zarr-python.
Exit status: 0 pass, 1 fail. Library: $ZARR_LIB.
"""
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402
import zarr  # noqa: E402
import harness  # noqa: E402
import zarr_ctypes as zc  # noqa: E402

NP = {"bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
      "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
      "float16": np.float16, "float32": np.float32, "float64": np.float64}
rng = np.random.default_rng(20261123)


def make(path, kind, dtype, shape, chunks):
    """Writes a random array with zarr-python; returns the numpy data."""
    if np.dtype(dtype).kind == "f":
        data = (rng.standard_normal(shape) * 1000).astype(dtype)
    else:
        info = np.iinfo(dtype)
        data = rng.integers(max(info.min, -30000), min(info.max, 30000), size=shape, endpoint=True).astype(dtype)
    if kind == "v3_zstd":
        z = zarr.create_array(str(path), shape=shape, chunks=chunks, dtype=dtype, fill_value=0,
                              compressors=[zarr.codecs.ZstdCodec(level=1)])
    elif kind == "v3_sharded":
        z = zarr.create_array(str(path), shape=shape, shards=[c * 2 for c in chunks], chunks=chunks, dtype=dtype,
                              fill_value=0)
    elif kind == "v3_bytes_be":
        z = zarr.create_array(str(path), shape=shape, chunks=chunks, dtype=dtype, fill_value=0, compressors=None,
                              serializer=zarr.codecs.BytesCodec(endian="big"))
    else:
        z = zarr.create_array(str(path), shape=shape, chunks=chunks, dtype=dtype, fill_value=0, zarr_format=2)
    z[...] = data
    # Leave one chunk unwritten: it must read as the fill value.
    data[tuple(slice(0, c) for c in chunks)] = 0
    z[tuple(slice(0, c) for c in chunks)] = 0
    return data


def random_selection(shape):
    start, count, step = [], [], []
    for n in shape:
        s = int(rng.integers(0, n))
        st = int(rng.integers(1, 5))
        c = int(rng.integers(0, (n - 1 - s) // st + 2))
        start.append(s), count.append(c), step.append(st)
    return start, count, step


def np_slices(start, count, step):
    return tuple(slice(s, s + (c - 1) * st + 1 if c else s, st) for s, c, st in zip(start, count, step))


def strided_buffer(count, btype, order):
    """A numpy buffer for `count` elements in `order` ("C", "F" or "padded") and its element strides."""
    itemsize = np.dtype(NP[btype]).itemsize
    if order == "padded":
        base = np.zeros([c + 2 for c in count], dtype=NP[btype])
        view = base[tuple(slice(1, 1 + c) for c in count)]
        flat = np.zeros(base.size, dtype=NP[btype])
        strides = [s // itemsize for s in base.strides]
        return flat, strides, view.shape, strides, base.shape
    arr = np.zeros(count, dtype=NP[btype], order=order)
    strides = [s // itemsize for s in arr.strides] if arr.size else None
    return arr, strides, None, None, None


def unconvertible(values, btype):
    t = NP[btype]
    v = values.astype(np.float64)
    if np.dtype(t).kind in "iub":
        lo, hi = (0, 1) if t is np.bool_ else (np.iinfo(t).min, np.iinfo(t).max)
        tr = np.trunc(v)
        return bool(np.any(np.isnan(v) | (tr < lo) | (tr > hi)))
    if t in (np.float16, np.float32):
        big = np.finfo(t).max
        with np.errstate(over="ignore"):
            return bool(np.any(np.isfinite(v) & ~np.isfinite(v.astype(t))))
    return False


def check_read(r, tmp, kind, dtype, shape, chunks):
    path = r.path(f"read_{kind}_{dtype}")
    data = make(path, kind, dtype, shape, chunks)
    with zc.Array.open(path) as a:
        for trial in range(40):
            start, count, step = random_selection(shape)
            btype = [dtype, "float64", "float32", "int32", "uint8", "int64", "bool"][trial % 7]
            order = ["C", "F", "padded"][trial % 3]
            want = data[np_slices(start, count, step)]
            if order == "padded":
                flat, strides, _, pstr, pshape = strided_buffer(count, btype, "padded")
                offset = sum(pstr)  # the view starts at (1, 1, ...)
                try:
                    a.read_hyperslab(start, count, step, strides, btype, out=flat[offset:])
                    err = None
                except zc.ZarrError as e:
                    err = e
                got = flat.reshape(pshape)[tuple(slice(1, 1 + c) for c in count)]
                outside = flat.reshape(pshape).copy()
                outside[tuple(slice(1, 1 + c) for c in count)] = 0
            else:
                buf, strides, *_ = strided_buffer(count, btype, order)
                try:
                    a.read_hyperslab(start, count, step, strides, btype, out=buf)
                    err = None
                except zc.ZarrError as e:
                    err = e
                got, outside = buf, None
            should_fail = want.size > 0 and unconvertible(want, btype)
            label = f"{kind} {dtype} -> {btype} {order} start={start} count={count} step={step}"
            if should_fail:
                assert err is not None and err.name == "ZARR_ERR_VALUE", f"{label}: expected ZARR_ERR_VALUE, got {err}"
                continue
            assert err is None, f"{label}: {err}"
            with np.errstate(invalid="ignore", over="ignore"):
                expect = np.trunc(want.astype(np.float64)).astype(NP[btype]) if (
                    np.dtype(NP[btype]).kind in "iub" and want.dtype.kind == "f") else want.astype(NP[btype])
            assert np.array_equal(got, expect), f"{label}: values differ"
            assert outside is None or not outside.any(), f"{label}: wrote outside the strided elements"


def check_write(r, tmp, kind, dtype, shape, chunks):
    path = r.path(f"write_{kind}_{dtype}")
    model = make(path, kind, dtype, shape, chunks)
    with zc.Array.open(path, zc.READ_WRITE) as a:
        for trial in range(12):
            start, count, step = random_selection(shape)
            btype = ["float64", "int32", dtype][trial % 3]
            lo = 0 if model.dtype.kind == "u" else -100
            src = rng.uniform(lo, 100, size=count).astype(NP[btype]) if NP[btype] in (np.float64,) else \
                rng.integers(lo, 100, size=count).astype(NP[btype])
            src = np.asfortranarray(src)
            strides = [s // src.itemsize for s in src.strides] if src.size else None
            a.write_hyperslab(src, start, count, step, strides, btype)
            with np.errstate(invalid="ignore"):
                conv = np.trunc(src.astype(np.float64)).astype(model.dtype) if (
                    src.dtype.kind == "f" and model.dtype.kind in "iu") else src.astype(model.dtype)
            model[np_slices(start, count, step)] = conv
        got = zarr.open_array(str(path), mode="r")[...]
        assert np.array_equal(got, model), f"{kind} {dtype}: zarr-python reads back other values than numpy's model"
        # An unconvertible value: nothing stored.
        before = {p: p.read_bytes() for p in Path(path).rglob("*") if p.is_file()}
        bad = np.full([2] * len(shape), np.nan)
        bad.flat[0] = 1.0
        if model.dtype.kind in "iu":
            try:
                a.write_hyperslab(bad, [0] * len(shape), [2] * len(shape), None, None, "float64")
                raise AssertionError(f"{kind} {dtype}: NaN written into an integer array")
            except zc.ZarrError as e:
                assert e.name == "ZARR_ERR_VALUE", e
            after = {p: p.read_bytes() for p in Path(path).rglob("*") if p.is_file()}
            assert before == after, f"{kind} {dtype}: a failed write changed stored files"


def check_resize(r, tmp, fmt):
    base = r.path(f"resize_v{fmt}")
    z = zarr.create_array(str(base), shape=(23, 17), chunks=(5, 4), dtype="int32", fill_value=-1, zarr_format=fmt)
    z[...] = np.arange(23 * 17, dtype=np.int32).reshape(23, 17)
    for new in [(9, 10), (30, 3), (23, 17), (40, 40), (1, 1)]:
        ours, theirs = Path(str(base) + f"_ours_{new[0]}x{new[1]}"), Path(str(base) + f"_zp_{new[0]}x{new[1]}")
        shutil.copytree(base, ours)
        shutil.copytree(base, theirs)
        with zc.Array.open(ours, zc.READ_WRITE) as a:
            a.resize(list(new))
            assert a.shape == list(new), a.shape
        zarr.open_array(str(theirs), mode="r+").resize(new)
        files = lambda p: sorted(str(f.relative_to(p)) for f in p.rglob("*") if f.is_file() and "zarr.json" not in f.name and f.name != ".zarr.lock"
                                 and ".zarray" not in f.name)
        assert files(ours) == files(theirs), f"v{fmt} {new}: chunk files differ from zarr-python's resize"
        za, zb = zarr.open_array(str(ours), mode="r"), zarr.open_array(str(theirs), mode="r")
        assert za.shape == new and np.array_equal(za[...], zb[...]), f"v{fmt} {new}: values differ from zarr-python's"
        with zc.Array.open(ours) as a:
            assert np.frombuffer(a.read(), dtype=np.int32).reshape(new).tolist() == zb[...].tolist()
    with zc.Array.open(base) as a:
        try:
            a.resize([5, 5])
            raise AssertionError("resize through a read-only handle")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_READ_ONLY", e


def check_chunks(r, tmp):
    path = r.path("chunks")
    shape, chunks = [29, 31], [4, 6]
    data = make(path, "v3_zstd", "int16", shape, chunks)
    with zc.Array.open(path, zc.READ_WRITE) as a:
        assert a.grid_shape == [8, 6]
        for _ in range(30):
            start, count, step = random_selection(shape)
            got = a.selection_chunks(start, count, step)
            idx = np.ix_(*[np.arange(s, s + c * st, st) for s, c, st in zip(start, count, step)])
            want = sorted({(int(i) // 4, int(j) // 6) for i, j in zip(*(np.broadcast_arrays(*idx)[k].ravel()
                                                                            for k in range(2)))})
            assert [tuple(c) for c in got] == want, f"{start} {count} {step}: {got} != {want}"
        assert not a.chunk_is_stored([0, 0]) and a.chunk_is_stored([1, 1])
        assert a.chunk_is_stored([7, 5]) == (Path(path) / "c" / "7" / "5").exists()
        assert a.chunk_region([7, 5]) == ([28, 30], [4, 6])
        nb = 4 * 6 * 2
        c11 = np.frombuffer(a.read_chunk([1, 1], nb), dtype=np.int16).reshape(4, 6)
        assert np.array_equal(c11, data[4:8, 6:12])
        edge = np.frombuffer(a.read_chunk([7, 5], nb), dtype=np.int16).reshape(4, 6)
        assert np.array_equal(edge[:1, :1], data[28:, 30:])
        new = np.arange(24, dtype=np.int16).reshape(4, 6) + 7
        a.write_chunk([2, 3], new.tobytes())
        data[8:12, 18:24] = new
        a.erase_chunk([1, 1])
        data[4:8, 6:12] = 0
        assert not (Path(path) / "c" / "1" / "1").exists()
        a.write_chunk([3, 3], np.zeros(24, dtype=np.int16).tobytes())  # all fill: deleted
        data[12:16, 18:24] = 0
        assert not a.chunk_is_stored([3, 3])
        assert a.region_nbytes([3, 5], "float64") == 120 and a.region_nbytes([3, 5]) == 30
        for bad in ([8, 0], [0, 6]):
            try:
                a.chunk_is_stored(bad)
                raise AssertionError(f"chunk {bad} outside the grid accepted")
            except zc.ZarrError as e:
                assert e.name == "ZARR_ERR_OUT_OF_BOUNDS", e
    assert np.array_equal(zarr.open_array(str(path), mode="r")[...], data), "zarr-python after chunk writes"


def check_many_chunks(r, tmp):
    """Writes of more than one batch of chunk parts (16 384): the even, then the odd elements of 17 000
    chunks of 2, each chunk covered in part (read, merged, most of them all fill value and not stored)."""
    path = r.path("many_chunks")
    n = 17_000
    zarr.create_array(str(path), shape=(2 * n,), chunks=(2,), dtype="uint16", fill_value=0,
                      compressors=[zarr.codecs.ZstdCodec(level=1)])
    model = np.zeros(2 * n, dtype=np.uint16)
    with zc.Array.open(path, zc.READ_WRITE) as a:
        for first, every in [(0, 7), (1, 5)]:
            src = np.where(np.arange(n) % every == 0, np.arange(n) % 60000 + 1, 0).astype(np.uint16)
            a.write_hyperslab(src, [first], [n], [2], None, "uint16")
            model[first::2] = src
    stored = len([f for f in (Path(path) / "c").iterdir()])
    assert stored == np.count_nonzero(model.reshape(n, 2).any(axis=1)), f"{stored} chunk files"
    assert np.array_equal(zarr.open_array(str(path), mode="r")[...], model), "zarr-python reads other values"


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    tmp = Path(tempfile.mkdtemp(prefix="zarr-selection-", dir=os.environ.get("ZARR_TEST_TMPDIR")))
    r = harness.Runner(tmp, args.verbose, args.k)
    try:
        for kind in ["v3_zstd", "v3_sharded", "v3_bytes_be", "v2_blosc"]:
            for dtype, shape, chunks in [("int16", [37, 29, 11], [8, 7, 4]), ("float32", [50, 41], [16, 9]),
                                         ("uint16", [64], [10]), ("float64", [9, 8, 7, 3], [4, 4, 4, 2])]:
                r.run(f"read {kind} {dtype}", check_read, r, tmp, kind, dtype, shape, chunks)
                r.run(f"write {kind} {dtype}", check_write, r, tmp, kind, dtype, shape, chunks)
        r.run("resize v3", check_resize, r, tmp, 3)
        r.run("resize v2", check_resize, r, tmp, 2)
        r.run("chunk calls", check_chunks, r, tmp)
        r.run("many chunks", check_many_chunks, r, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{r.passed} passed, {len(r.failed)} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
