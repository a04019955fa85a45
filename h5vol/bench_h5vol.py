#!/usr/bin/env python3
"""The connector's speed: reads of the benchmark's layouts (bench/, ../shared/perf) through h5py + libzarr_h5vol,
beside libzarr's own C API and zarr-python 3.1.6. Not part of the tests (timings on shared machines are noise).

    python3 h5vol/bench_h5vol.py --plugin-dir build/h5vol/plugin --lib build/lib/libzarr.so.0 \\
        [--perf-dir ../shared/perf] [--layouts A,C] [--reps 5] [--out bench/out/h5vol]

For each layout the 512^3 uint16 volume (the perf directory's gen_data.py) is written once with zarr-python
into OUT/<layout>; then each cell runs in a fresh process with 2 threads (ZARR_NUM_THREADS=2):
  R   the whole array (C API: zarr_read_region and h5py: Dataset.read_direct, into a preallocated buffer;
      zarr-python: z[...])
  Rs  every other element along each axis, [::2, ::2, ::2] (C API: zarr_read_hyperslab; h5py and
      zarr-python: the slice), into a new array
and prints the median seconds and the connector's overhead over the C API (h5py / C API - 1).
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def cell(args):
    """One measurement in this process: prints {"median": s, "checksum": n}."""
    import numpy as np
    shape = (512, 512, 512)
    out = np.empty(shape, dtype="<u2")
    times = []
    result = None
    for _ in range(args.reps + 1):   # the first repetition warms the page cache, untimed
        t0 = time.perf_counter()
        if args.impl == "capi":
            lib = ctypes.CDLL(args.lib)
            a = ctypes.c_void_p()
            assert lib.zarr_open(str(args.array).encode(), 1, ctypes.byref(a)) == 0
            u64 = ctypes.c_uint64 * 3
            if args.op == "R":
                st = lib.zarr_read_region(a, u64(0, 0, 0), u64(*shape), out.ctypes.data_as(ctypes.c_void_p),
                                          ctypes.c_size_t(out.nbytes))
                result = out
            else:
                result = np.empty((256, 256, 256), dtype="<u2")
                st = lib.zarr_read_hyperslab(a, u64(0, 0, 0), u64(256, 256, 256), u64(2, 2, 2), None, 6,
                                             result.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(result.nbytes))
            assert st == 0, st
            lib.zarr_close(a)
        elif args.impl == "h5py":
            import h5py
            with h5py.File(str(args.array.parent), "r") as f:
                d = f[args.array.name]
                if args.op == "R":
                    d.read_direct(out)
                    result = out
                else:
                    result = d[::2, ::2, ::2]
        else:
            import zarr
            z = zarr.open_array(str(args.array), mode="r")
            result = z[...] if args.op == "R" else z[::2, ::2, ::2]
        times.append(time.perf_counter() - t0)
    print(json.dumps({"median": statistics.median(times[1:]), "checksum": int(result.sum(dtype="u8"))}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plugin-dir", type=Path, required=True)
    ap.add_argument("--lib", required=True, help="the libzarr the plugin links (build/lib/libzarr.so.0)")
    ap.add_argument("--perf-dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "perf")
    ap.add_argument("--layouts", default="A,C")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", type=Path, default=Path("bench/out/h5vol"))
    ap.add_argument("--cell", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--impl", help=argparse.SUPPRESS)
    ap.add_argument("--op", help=argparse.SUPPRESS)
    ap.add_argument("--array", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cell:
        return cell(args)
    import numpy as np
    import zarr
    args.out.mkdir(parents=True, exist_ok=True)
    data = args.out / "volume_u16_512.bin"
    if not data.exists():
        subprocess.run([sys.executable, str(args.perf_dir / "gen_data.py"), "--datadir", str(args.out),
                        "--regions", str(args.out / "regions_16.txt")], check=True)
    volume = np.fromfile(data, dtype="<u2").reshape(512, 512, 512)
    env = dict(os.environ, ZARR_NUM_THREADS="2", HDF5_PLUGIN_PATH=str(args.plugin_dir.resolve()),
               HDF5_VOL_CONNECTOR="zarr")
    print("| layout | op | C API (s) | h5py + connector (s) | zarr-python (s) | connector overhead |")
    print("|---|---|---|---|---|---|")
    for layout in args.layouts.split(","):
        meta = json.loads((args.perf_dir / "layouts" / f"{layout}.json").read_text())
        root = args.out / f"{layout}.zarr"
        if not (root / "v" / "zarr.json").exists() or json.loads((root / "v" / "zarr.json").read_text())["codecs"] != meta["codecs"]:
            g = zarr.open_group(str(root), mode="w")
            (root / "v").mkdir()
            (root / "v" / "zarr.json").write_text(json.dumps(meta))
            zarr.open_array(str(root / "v"), mode="r+")[...] = volume
        for op in ("R", "Rs"):
            row = {}
            for impl in ("capi", "h5py", "zarr-python"):
                p = subprocess.run([sys.executable, __file__, "--cell", "--impl", impl, "--op", op, "--array",
                                    str(root / "v"), "--lib", args.lib, "--reps", str(args.reps),
                                    "--plugin-dir", str(args.plugin_dir)], env=env, capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"{layout}/{op}/{impl} failed:\n{p.stderr[-3000:]}")
                row[impl] = json.loads(p.stdout.strip().splitlines()[-1])
            assert len({r["checksum"] for r in row.values()}) == 1, f"{layout}/{op}: the readers disagree {row}"
            c, h, z = row["capi"]["median"], row["h5py"]["median"], row["zarr-python"]["median"]
            print(f"| {layout} | {op} | {c:.3f} | {h:.3f} | {z:.3f} | {100 * (h / c - 1):+.0f} % |")


if __name__ == "__main__":
    main()
