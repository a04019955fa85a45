#!/usr/bin/env python3
"""Windows into shards on a server with an object store's latency (bench/latency_server.py): how many
round trips, requests and bytes a window of a few inner chunks costs right after opening the array.

    python3 bench/remote_shard_windows.py [--delays-ms 20,100] [--impls libzarr,tensorstore,zarr-python]
                                          [--reps 3] [--lib build/cargo/release/libzarr.so] [--json out.json]

Arrays (uint16, smooth values plus noise, zstd level 3, written by zarr-python 3 with the shard index
at the end, inner chunks in its Morton order):
- `s64`: 1024 x 1024 in 512 x 512 shards of 64 x 64 inner chunks (64 per shard, 512 KiB decoded);
- `s1024`: 2048 x 2048 in 1024 x 1024 shards of 32 x 32 inner chunks (1024 per shard, 2 MiB decoded).

Cells: a window of 1, 4 or 16 inner chunks (1 x 1, 2 x 2, 4 x 4, aligned to the inner chunks) in the
first shard, at two places: `end`, the inner chunks stored last (the shard's bottom-right corner: next
to the index), and `mid`, starting at the shard's centre (in Morton order the first inner chunk of the
last quarter: about a quarter of the shard lies between it and the index). Each repetition opens the
array anew (opening is not timed), then reads the window; the values are checked against numpy.
Beside the median time: the requests and round trips the server counted for the read, the bytes it
sent, and the bytes beyond what was needed (what it sent less the shard index and the stored bytes of
the needed inner chunks, both taken from the shard file). Every client runs with its defaults and 2
decoding threads, each implementation in its own process (bench/remote_latency.py's clients).
The requests and bytes are the last repetition's (a handle opened after others of the array in the
same process: libzarr's then predicts where inner chunks lie from what the earlier handles read);
the first repetition's are reported apart: for each array's first cell (window 1 end), the first
read of the array in the worker's process, with nothing learned (what every read of a library
without that memory, such as libzarr 0.3, costs).
`--libs main=PATH,new=PATH` compares two libzarr builds on the same run (bench/remote_latency.py).
"""
import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import remote_latency as rl  # noqa: E402

ARRAYS = {"s64": ((1024, 1024), (512, 512), (64, 64)), "s1024": ((2048, 2048), (1024, 1024), (32, 32))}
SIDES = (1, 2, 4)  # windows of 1, 4, 16 inner chunks
PLACES = ("end", "mid")


def values(shape):
    import numpy as np

    y, x = np.mgrid[0:shape[0], 0:shape[1]]
    smooth = 2000 + 1000 * np.sin(y / 37.0) * np.cos(x / 53.0)
    return (smooth + np.random.default_rng(42).integers(0, 64, shape)).astype("<u2")


def make_arrays(root):
    import zarr
    from zarr.codecs import ZstdCodec

    for name, (shape, shards, inner) in ARRAYS.items():
        zarr.create_array(store=str(root / rl.BUCKET / name), data=values(shape), chunks=inner, shards=shards,
                          compressors=ZstdCodec(level=3), zarr_format=3)


def window(name, side, place):
    """(start, count) of the window."""
    _, shards, inner = ARRAYS[name]
    if place == "end":
        start = [s - side * i for s, i in zip(shards, inner)]
    else:
        start = [s // 2 for s in shards]
    return start, [side * i for i in inner]


def needed_bytes(root, name, start, count):
    """The shard index and the stored inner chunks the window needs (bytes), from shard c/0/0."""
    _, shards, inner = ARRAYS[name]
    per = [s // i for s, i in zip(shards, inner)]
    n = per[0] * per[1]
    data = (root / rl.BUCKET / name / "c" / "0" / "0").read_bytes()
    index = data[-(n * 16 + 4):]
    total = n * 16 + 4
    for r in range(start[0] // inner[0], (start[0] + count[0] - 1) // inner[0] + 1):
        for c in range(start[1] // inner[1], (start[1] + count[1] - 1) // inner[1] + 1):
            off, nbytes = struct.unpack_from("<QQ", index, 16 * (r * per[1] + c))
            if off != 2**64 - 1:
                total += nbytes
    return total


def worker(impl, server, reps):
    import numpy as np

    open_, read, _ = rl.client(impl, server)
    out = {}
    for name, (shape, _, _) in ARRAYS.items():
        full = values(shape)
        for side in SIDES:
            for place in PLACES:
                start, count = window(name, side, place)
                sl = tuple(slice(s, s + c) for s, c in zip(start, count))
                runs = []
                for _ in range(reps):
                    h = open_(name)
                    rl.control(server, "reset")
                    t0 = time.perf_counter()
                    got = read_window(impl, h, start, count, sl)
                    dt = time.perf_counter() - t0
                    st = rl.control(server, "stats")
                    if not np.array_equal(np.asarray(got), full[sl]):
                        raise SystemExit(f"{impl} {name} {side} {place}: wrong values")
                    runs.append({"t": dt, "requests": st["requests"], "trips": st.get("round_trips"),
                                 "bytes": st["bytes_sent"]})
                    if hasattr(h, "close"):
                        h.close()
                out[f"{name}|{side * side}|{place}"] = runs
                rl.log(f"  {impl} {name} {side * side} {place}: {statistics.median(r['t'] for r in runs):.3f} s, "
                       f"{runs[-1]['requests']} requests in {runs[-1]['trips']} round trips, {runs[-1]['bytes']} bytes")
    print(json.dumps(out))


def read_window(impl, h, start, count, sl):
    import numpy as np

    if rl.base_impl(impl) == "libzarr":
        return h.read_into(np.empty(count, dtype="<u2"), start, count)
    if rl.base_impl(impl) == "tensorstore":
        return h[sl].read().result()
    return h[sl]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--delays-ms", default="20,100")
    ap.add_argument("--impls", default="libzarr,tensorstore,zarr-python")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--lib", default=os.environ.get("ZARR_LIB", str(HERE.parent / "build" / "cargo" / "release" / "libzarr.so")))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--json", help="also write the raw results here")
    ap.add_argument("--worker", nargs=2, metavar=("IMPL", "SERVER"), help=argparse.SUPPRESS)
    rl.add_lib_args(ap)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker[0], a.worker[1], a.reps)
        return
    impls, libs = rl.expand_impls(a)
    delays = [float(d) for d in a.delays_ms.split(",")]
    results, loads = {}, {}
    with tempfile.TemporaryDirectory(prefix="zarr-shard-windows-") as tmp:
        root = Path(tmp)
        make_arrays(root)
        needed = {(n, s * s, p): needed_bytes(root, n, *window(n, s, p)) for n in ARRAYS for s in SIDES for p in PLACES}
        for delay in delays:
            proc, url = rl.start_server(root, delay)
            try:
                rl.log(f"delay {delay:g} ms: {url}")

                def run_one(impl):
                    env = {**os.environ, "ZARR_LIB": libs.get(impl, a.lib), "ZARR_NUM_THREADS": "2",
                           "BENCH_ROOT": str(root), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
                    p = subprocess.run([a.python, __file__, "--worker", impl, url, "--reps", str(a.reps)], env=env,
                                       stdout=subprocess.PIPE, text=True, timeout=1800)
                    if p.returncode != 0:
                        rl.log(f"{impl}: ERR (exit {p.returncode})")
                        return
                    for k, runs in json.loads(p.stdout.strip().splitlines()[-1]).items():
                        results.setdefault((delay, impl, k), []).append(runs)

                def log_load(impl, before, after):
                    loads.setdefault((delay, impl), []).append((before, after))
                    rl.log(f"  {impl}: load average {before:.1f} before, {after:.1f} after")

                rl.run_rounds(a.rounds, impls, run_one, log_load)
            finally:
                proc.communicate("", timeout=30)
                shutil.rmtree(root / rl.BUCKET / "written", ignore_errors=True)
    if a.json:
        Path(a.json).write_text(json.dumps({f"{d}|{i}|{k}": v for (d, i, k), v in results.items()}, indent=1))
    # Each round's worker opens the array anew for every repetition, the cells in table order: the first
    # repetition of an array's first cell is its first read in that process (nothing learned).
    lz = [i for i in impls if rl.base_impl(i) == "libzarr"]
    ref = lz[0] if lz else "libzarr"
    print("| delay | shard (inner chunks) | window | needed KB | " + " | ".join(
        f"{i} s (requests, round trips, KB, KB beyond needed)" for i in impls)
        + f" | tensorstore / {ref} |" + "".join(f" {i} / {ref} (time) |" for i in lz[1:])
        + "".join(f" {i} first repetition (requests, round trips, KB beyond needed) |" for i in lz))
    print("|---" * (len(impls) + 5 + 2 * len(lz) - 1) + "|")
    for delay in delays:
        for name in ARRAYS:
            for side in SIDES:
                for place in PLACES:
                    k = f"{name}|{side * side}|{place}"
                    need = needed[(name, side * side, place)]
                    row, med, first = [], {}, []
                    for impl in impls:
                        rounds = results.get((delay, impl, k))
                        if not rounds:
                            row.append("ERR")
                            continue
                        runs = [r for rr in rounds for r in rr]
                        med[impl] = statistics.median(r["t"] for r in runs)
                        r = runs[-1]
                        row.append(f"{med[impl]:.3f} ({r['requests']}, {r['trips']}, {r['bytes'] / 1e3:.1f}, "
                                   f"{max(r['bytes'] - need, 0) / 1e3:.1f})")
                        if impl in lz:
                            f0 = rounds[0][0]
                            first.append(f"{f0['requests']}, {f0['trips']}, {max(f0['bytes'] - need, 0) / 1e3:.1f}")
                    ratio = f"{med['tensorstore'] / med[ref]:.2f}" if {"tensorstore", ref} <= med.keys() else "n/a"
                    cmp = [f"{med[i] / med[ref]:.3f}" if i in med and ref in med else "n/a" for i in lz[1:]]
                    print(f"| {delay:g} ms | {name[1:]} | {side * side} {place} | {need / 1e3:.1f} | "
                          + " | ".join(row) + f" | {ratio} |" + "".join(f" {x} |" for x in cmp)
                          + "".join(f" {x} |" for x in first))
    print()
    print("Load (1-minute average before, after each client's run): " + "; ".join(
        f"{d:g} ms {i}: " + ", ".join(f"{b:.1f}-{e:.1f}" for b, e in v) for (d, i), v in loads.items()))


if __name__ == "__main__":
    main()
