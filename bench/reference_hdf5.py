#!/usr/bin/env python3
"""Benchmark: a deflate+shuffle chunked netCDF-4 variable read in place through kerchunk references
(issue 35), against the HDF5 readers reading the file itself.

    python3 bench/reference_hdf5.py [--size-mib 1024] [--reps 3] [--threads 2] [--out bench/out/reference]
                                    [--lib build/cargo/release/libzarr.so] [--h5tozarr build/tools/h5tozarr]
                                    [--h5tozarr-chunk-iter build/tools/h5tozarr_chunk_iter]
                                    [--floor build/cargo/release/examples/reference_floor]

Writes the file (netCDF4-python: float32 (T, 512, 512), one chunk (1, 512, 512) = 1 MiB a time step, zlib
level 1 + shuffle, a smooth field with noise), then times:
  * `h5tozarr --virtual` (JSON references; it reads no chunk data; median of 3) and the references' size,
    with h5tozarr built against HDF5 1.10 (H5Dget_chunk_info) and, when --h5tozarr-chunk-iter's program
    exists (CMake builds it where the VOL connector's HDF5 1.14 is built), against 1.14 (H5Dchunk_iter);
  * the codec floor (when --floor's program exists: `cargo build --release --example reference_floor`):
    the same chunks pread, inflated by libdeflate and unshuffled into a fresh buffer on --threads
    threads, without libzarr's engine (examples/reference_floor.rs), and the same without the unshuffle;
  * a whole read and a window read ([T/2 : T/2+8, 128:384, 128:384], 8 chunks touched) by
    - libzarr: `reference://refs.json!/v` (zarr_read_region into a numpy buffer; --threads decoding threads),
    - h5py and netCDF4-python reading the file,
    - xarray + kerchunk: kerchunk's SingleHdf5ToZarr references, opened by xarray (zarr-python 3.1.6)
      through fsspec's ReferenceFileSystem;
checks that every reader returns the same values, and prints a Markdown table (median seconds, MB/s of
decoded data, ratio to h5py, and the median CPU seconds of the process, all threads, which says more than
wall time when other work shares the cores) with the machine: CPU model (/proc/cpuinfo), cores, kernel,
load average before and after. Results also go to OUT/results.json. The page cache is warm (every reader reads the
file once before the timed repetitions).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import numpy as np  # noqa: E402


def machine():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release(), "load": os.getloadavg()}


def make_file(path, steps):
    import netCDF4

    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:512, 0:512].astype("f4") / 512
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        nc.createDimension("time", steps)
        nc.createDimension("y", 512)
        nc.createDimension("x", 512)
        v = nc.createVariable("v", "f4", ("time", "y", "x"), zlib=True, complevel=1, shuffle=True,
                              chunksizes=(1, 512, 512))
        for t in range(0, steps, 16):
            n = min(16, steps - t)
            base = np.sin(6 * x + t / 10) * np.cos(4 * y)
            v[t:t + n] = (base[None] + rng.normal(0, 0.01, size=(n, 512, 512))).astype("f4")


def timed(fn, reps):
    """(median wall seconds, wall seconds, median CPU seconds of this process, CPU seconds)."""
    fn()  # warm (page cache, imports, pools)
    times, cpu = [], []
    for _ in range(reps):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        del out
    return statistics.median(times), times, statistics.median(cpu), cpu


def time_tool(cmd, reps=3):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out" / "reference"))
    ap.add_argument("--lib", default=str(ROOT / "build" / "cargo" / "release" / "libzarr.so"))
    ap.add_argument("--h5tozarr", default=str(ROOT / "build" / "tools" / "h5tozarr"))
    ap.add_argument("--h5tozarr-chunk-iter", default=str(ROOT / "build" / "tools" / "h5tozarr_chunk_iter"),
                    help="h5tozarr built against HDF5 1.14 (timed too when it exists)")
    ap.add_argument("--floor", default=str(ROOT / "build" / "cargo" / "release" / "examples" / "reference_floor"),
                    help="examples/reference_floor's program (the codec floor, run when it exists)")
    args = ap.parse_args()

    import h5py
    import netCDF4
    import xarray as xr
    import zarr_ctypes as zc
    from kerchunk.hdf import SingleHdf5ToZarr

    zc._LIB = zc.load(args.lib)
    zc._LIB.zarr_set_num_threads(args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    steps = args.size_mib
    nc_path = out / f"v{steps}.nc"
    before = machine()
    if not nc_path.exists():
        t0 = time.perf_counter()
        make_file(nc_path, steps)
        print(f"wrote {nc_path} ({nc_path.stat().st_size / 2**20:.0f} MiB on disk) in {time.perf_counter() - t0:.1f} s")
    refs = out / f"v{steps}.json"
    virtual_tools = {"h5tozarr": args.h5tozarr}
    if Path(args.h5tozarr_chunk_iter).exists():
        virtual_tools["h5tozarr_chunk_iter"] = args.h5tozarr_chunk_iter
    t_virtual = {}
    for name, exe in virtual_tools.items():
        listing = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True).stdout
        listing = listing.rsplit(" with ", 1)[-1].strip()
        t_virtual[f"{name} ({listing})"] = time_tool([exe, "--virtual", "--overwrite", "-q", str(nc_path), str(refs)])
    kref = out / f"v{steps}.kerchunk.json"
    t0 = time.perf_counter()
    kref.write_text(json.dumps(SingleHdf5ToZarr(str(nc_path), inline_threshold=0).translate()))
    t_kerchunk = time.perf_counter() - t0

    shape = (steps, 512, 512)
    t = steps // 2
    win = (slice(t, t + 8), slice(128, 384), slice(128, 384))
    win_start, win_count = [t, 128, 128], [8, 256, 256]
    loc = f"reference://{refs}!/v"

    def libzarr_whole():
        a = np.empty(shape, dtype="f4")
        with zc.Array.open(loc) as arr:
            arr.read_into(a)
        return a

    def libzarr_window():
        a = np.empty(win_count, dtype="f4")
        with zc.Array.open(loc) as arr:
            arr.read_into(a, win_start, win_count)
        return a

    def h5py_read(sel):
        with h5py.File(nc_path, "r") as f:
            return f["v"][sel]

    def nc_read(sel):
        with netCDF4.Dataset(nc_path) as nc:
            nc.set_auto_maskandscale(False)
            return np.asarray(nc["v"][sel])

    def xr_read(sel):
        ds = xr.open_dataset("reference://", engine="zarr", mask_and_scale=False,
                             backend_kwargs={"storage_options": {"fo": str(kref)}, "consolidated": False})
        return ds["v"][sel].values

    readers = {
        "libzarr reference://": (libzarr_whole, libzarr_window),
        "h5py": (lambda: h5py_read(()), lambda: h5py_read(win)),
        "netCDF4-python": (lambda: nc_read(slice(None)), lambda: nc_read(win)),
        "xarray + kerchunk (fsspec)": (lambda: xr_read({}), lambda: xr_read(dict(zip(("time", "y", "x"), win)))),
    }
    # the same values from every reader
    ref_whole, ref_win = h5py_read(()), h5py_read(win)
    for name, (whole, window) in readers.items():
        assert np.array_equal(whole(), ref_whole), f"{name}: whole read differs from h5py's"
        assert np.array_equal(window(), ref_win), f"{name}: window read differs from h5py's"
    del ref_whole
    results = {}
    for name, (whole, window) in readers.items():
        results[name] = {"whole": timed(whole, args.reps), "window": timed(window, args.reps * 3)}
        print(f"{name}: whole {results[name]['whole'][0]:.3f} s, window {results[name]['window'][0] * 1000:.1f} ms",
              flush=True)
    floor = None
    if Path(args.floor).exists():
        p = subprocess.run([args.floor, str(refs), "v", str(args.reps), str(args.threads)], capture_output=True,
                           text=True, check=True)
        floor = json.loads(p.stdout)
        print(f"codec floor: {floor['median_s']:.3f} s (inflate only {floor['inflate_median_s']:.3f} s)", flush=True)
    after = machine()
    mib_whole = np.prod(shape) * 4 / 2**20
    mib_win = np.prod(win_count) * 4 / 2**20
    h_whole, h_win = results["h5py"]["whole"][0], results["h5py"]["window"][0]
    lines = [
        f"Machine: {before['cpu']}, {before['cores']} cores, Linux {before['kernel']}; load average "
        f"{before['load'][0]:.1f} / {before['load'][1]:.1f} / {before['load'][2]:.1f} before, "
        f"{after['load'][0]:.1f} / {after['load'][1]:.1f} / {after['load'][2]:.1f} after; libzarr with {args.threads} "
        f"threads. Variable: float32 {shape[0]} x 512 x 512 ({mib_whole:.0f} MiB decoded, "
        f"{nc_path.stat().st_size / 2**20:.0f} MiB in the file), chunks 1 x 512 x 512 (1 MiB), zlib 1 + shuffle. "
        f"Median of {args.reps} (window: {args.reps * 3}) warm repetitions.",
        "",
        "`h5tozarr --virtual` (median of 3): "
        + ", ".join(f"{name} {t:.3f} s" for name, t in t_virtual.items())
        + f"; {refs.stat().st_size / 1024:.0f} KiB of references "
        f"({refs.stat().st_size / 2**10 / (nc_path.stat().st_size / 2**30):.0f} KiB per GiB of chunks); "
        f"kerchunk SingleHdf5ToZarr: {t_kerchunk:.2f} s.",
        "",
        "| reader | whole read (s) | MB/s | vs h5py | CPU s | window read (ms) | vs h5py |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        w, v = r["whole"][0], r["window"][0]
        lines.append(f"| {name} | {w:.3f} | {mib_whole * 1.048576 / w:.0f} | {h_whole / w:.2f}x | {r['whole'][2]:.2f} | "
                     f"{v * 1000:.1f} | {h_win / v:.2f}x |")
    if floor:
        w = floor["median_s"]
        lines.append(f"| codec floor: pread + libdeflate + unshuffle, {args.threads} threads | {w:.3f} | "
                     f"{mib_whole * 1.048576 / w:.0f} | {h_whole / w:.2f}x | {floor['cpu_median_s']:.2f} | | |")
        lines.append(f"| codec floor without the unshuffle | {floor['inflate_median_s']:.3f} | "
                     f"{mib_whole * 1.048576 / floor['inflate_median_s']:.0f} | | "
                     f"{floor['inflate_cpu_median_s']:.2f} | | |")
    table = "\n".join(lines)
    print()
    print(table)
    (out / "results.json").write_text(json.dumps({"machine_before": before, "machine_after": after, "shape": shape,
                                                  "h5tozarr_virtual_s": t_virtual, "kerchunk_s": t_kerchunk,
                                                  "floor": floor,
                                                  "refs_bytes": refs.stat().st_size, "results": results,
                                                  "table": table}, indent=1))


if __name__ == "__main__":
    main()
