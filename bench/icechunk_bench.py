#!/usr/bin/env python3
"""Icechunk read benchmark (docs/icechunk.md, issue 36): a 256 MiB array (uint16, 512 x 512 x 512,
chunks 64 x 64 x 64, zstd level 1) stored by Python icechunk 2.3.0 + zarr-python in an Icechunk
repository on the local filesystem, and by zarr-python in a plain directory store (same codecs, same
chunks). Timed (best of --reps, wall clock): the whole array, and 16 windows of 96 x 96 x 96 at fixed
random origins (one pass = all 16), read by

  libzarr-icechunk  libzarr (ctypes, zarr_read_region into a numpy buffer) on icechunk:///REPO
  libzarr-dir       libzarr on the directory store
  python-icechunk   zarr-python 3.4.2 over icechunk's store (readonly session)

Runs under Python 3.12 with the pinned tools/requirements-py312.txt (the venv build/venv312) and
libzarr from $ZARR_LIB (default build/cargo/release/libzarr.so):

    ZARR_LIB=build/cargo/release/libzarr.so build/venv312/bin/python bench/icechunk_bench.py [--reps 5]

Prints a table with the ratios the issue's targets name (python-icechunk / libzarr-icechunk: >= 1.5;
libzarr-icechunk / libzarr-dir: <= 1.2). Data in bench/out/icechunk (git-ignored), made once.
"""
import argparse
import ctypes
import os
import platform
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import numpy as np  # noqa: E402
import icechunk  # noqa: E402
import zarr  # noqa: E402
import zarr_ctypes as zc  # noqa: E402

SHAPE, CHUNKS, WIN = (512, 512, 512), (64, 64, 64), 96


def make(out):
    repo_dir, dir_store = out / "repo", out / "dir.zarr"
    done = out / "done"
    if done.exists():
        return repo_dir, dir_store
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    rng = np.random.default_rng(36)
    # Smooth-ish data (compressible like a simulation field), 256 MiB.
    z = np.arange(SHAPE[0], dtype=np.float32)[:, None, None]
    y = np.arange(SHAPE[1], dtype=np.float32)[None, :, None]
    x = np.arange(SHAPE[2], dtype=np.float32)[None, None, :]
    data = (1000 + 500 * np.sin(z / 37) * np.cos(y / 23) + x).astype(np.uint16)
    data += rng.integers(0, 16, size=SHAPE, dtype=np.uint16)
    codecs = dict(compressors=zarr.codecs.ZstdCodec(level=1))
    repo = icechunk.Repository.create(icechunk.local_filesystem_storage(str(repo_dir)))
    s = repo.writable_session("main")
    a = zarr.create_array(store=s.store, name="v", shape=SHAPE, chunks=CHUNKS, dtype="uint16", fill_value=0, **codecs)
    a[...] = data
    s.commit("256 MiB")
    d = zarr.create_array(store=str(dir_store), name="v", shape=SHAPE, chunks=CHUNKS, dtype="uint16", fill_value=0,
                          **codecs)
    d[...] = data
    done.touch()
    return repo_dir, dir_store


def windows():
    rng = np.random.default_rng(16)
    return [tuple(int(rng.integers(0, n - WIN)) for n in SHAPE) for _ in range(16)]


def best(fn, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "icechunk"))
    args = ap.parse_args()
    zc._LIB = zc.load(os.environ.get("ZARR_LIB") or str(ROOT / "build" / "cargo" / "release" / "libzarr.so"))
    repo_dir, dir_store = make(Path(args.out))
    wins = windows()
    whole = np.empty(SHAPE, np.uint16)
    win = np.empty((WIN,) * 3, np.uint16)

    def libzarr(location):
        a = zc.Array.open(location)
        return (lambda: a.read_into(whole),
                lambda: [a.read_into(win, list(o), [WIN] * 3) for o in wins], a)

    lz_ic = libzarr(f"icechunk://{repo_dir}!/v")
    lz_dir = libzarr(f"{dir_store}/v")
    py = zarr.open_array(store=icechunk.Repository.open(icechunk.local_filesystem_storage(str(repo_dir)))
                         .readonly_session(branch="main").store, path="v", mode="r")
    py_whole = lambda: py[...]  # noqa: E731
    py_win = lambda: [py[o[0]:o[0] + WIN, o[1]:o[1] + WIN, o[2]:o[2] + WIN] for o in wins]  # noqa: E731
    # The three read the same values.
    lz_ic[0]()
    ref = whole.copy()
    lz_dir[0]()
    assert np.array_equal(ref, whole) and np.array_equal(ref, py_whole()), "the readers disagree"
    rows = []
    for name, (fw, fwin) in (("libzarr-icechunk", lz_ic[:2]), ("libzarr-dir", lz_dir[:2]),
                             ("python-icechunk", (py_whole, py_win))):
        rows.append((name, best(fw, args.reps), best(fwin, args.reps)))
    zc.lib().zarr_version.restype = ctypes.c_char_p
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"icechunk {icechunk.__version__}, zarr {zarr.__version__}, libzarr {zc.lib().zarr_version().decode()}")
    print(f"{'reader':<18} {'whole 256 MiB (s)':>18} {'16 windows 96^3 (s)':>20}")
    for name, w_, wi in rows:
        print(f"{name:<18} {w_:>18.3f} {wi:>20.3f}")
    t = {n: (w_, wi) for n, w_, wi in rows}
    for i, what in ((0, "whole"), (1, "windows")):
        print(f"{what}: python-icechunk / libzarr-icechunk = {t['python-icechunk'][i] / t['libzarr-icechunk'][i]:.2f} "
              f"(target >= 1.5); libzarr-icechunk / libzarr-dir = {t['libzarr-icechunk'][i] / t['libzarr-dir'][i]:.2f} "
              f"(target <= 1.2)")


if __name__ == "__main__":
    main()
