#!/usr/bin/env python3
"""Remote reads and writes where latency decides: libzarr, tensorstore and zarr-python against a server
on 127.0.0.1 that answers every request after a set delay (bench/latency_server.py), as an object
store's first byte comes after 10-100 ms.

    python3 bench/remote_latency.py [--delays-ms 20,100] [--impls libzarr,tensorstore,zarr-python]
                                    [--layouts plain,sharded] [--cells W,V,T,P] [--reps 3]
                                    [--lib build/cargo/release/libzarr.so] [--python PYTHON]

Arrays (written by zarr-python 3 into a temporary directory the server serves): 1024 x 1024 uint16
(smooth values plus noise), 64 x 64 chunks, zstd; `plain`: 256 chunk objects; `sharded`: the same in
512 x 512 shards (4 objects of 64 inner chunks).

Cells (each timed alone, on an array handle opened just before, whose opening is reported apart):
- W: the whole array;
- V: a 200 x 200 window at (300, 400) (16 chunks; in one shard);
- T: a strided read, rows 100:900:7 and columns 50:1000:5 (224 chunks; all 4 shards);
- P: writing the whole array into a new array of the same layout (256 chunk PUTs, or 4 shard PUTs)
  over the server's path-style S3 interface (libzarr `s3://` with `endpoint`, tensorstore's `s3`
  kvstore, zarr-python with obstore's S3Store; no signatures are checked).

Reads go over plain HTTP: libzarr `http://` locations through the C API (tools/zarr_ctypes.py),
tensorstore's `http` kvstore, zarr-python with obstore's HTTPStore (zarr.storage.ObjectStore). Every
client runs with its defaults (libzarr's max_concurrency 64 requests in flight, tensorstore 32 per host)
and 2 decoding threads, each implementation in its own process; values are checked against numpy.
Beside each median time: the requests the server counted, the bytes it sent (reads) or received
(writes), the most requests it saw in flight at once, the client's CPU seconds (all its threads) and
the server's own CPU seconds during the cell (so that one sees whether CPU, not latency, set the time).
Opening is timed apart (not in the cells), with its requests and round trips as the server counted
them: libzarr asks zarr.json, .zarray and .zattrs together (one round trip, so that a v2 array opens
as fast). A delay of 0 (`--delays-ms 0,20,100`) measures what the server and the client spend on
the requests themselves on this machine. The latency floor of a cell is the round trips its selection
needs at a concurrency limit of 64, times the delay: W plain 4 (256 GETs), W sharded 1 (4 whole
shards), V plain 1 (16 GETs), V sharded 2 (the shard index, then the data, as one shard of 64 is
mostly not read), T plain 4 (224 GETs), T sharded 1 (each shard is mostly read: whole), P plain 4
(256 PUTs), P sharded 1.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHAPE = (1024, 1024)
CHUNKS = (64, 64)
SHARDS = (512, 512)
BUCKET = "bench"
WINDOW = ((300, 400), (200, 200))
STRIDED = ((100, 900, 7), (50, 1000, 5))
CONCURRENCY = 64
# Round trips each cell needs at CONCURRENCY requests in flight (see the docstring).
FLOOR_TRIPS = {("plain", "W"): math.ceil(256 / CONCURRENCY), ("sharded", "W"): 1,
               ("plain", "V"): 1, ("sharded", "V"): 2,
               ("plain", "T"): math.ceil(224 / CONCURRENCY), ("sharded", "T"): 1,
               ("plain", "P"): math.ceil(256 / CONCURRENCY), ("sharded", "P"): 1}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def data():
    import numpy as np

    y, x = np.mgrid[0:SHAPE[0], 0:SHAPE[1]]
    smooth = 2000 + 1000 * np.sin(y / 37.0) * np.cos(x / 53.0)
    noise = np.random.default_rng(42).integers(0, 64, SHAPE)
    return (smooth + noise).astype("<u2")


def make_arrays(root):
    import zarr
    from zarr.codecs import ZstdCodec

    d = data()
    for layout in ("plain", "sharded"):
        zarr.create_array(store=str(root / BUCKET / layout), data=d, chunks=CHUNKS,
                          shards=SHARDS if layout == "sharded" else None, compressors=ZstdCodec(level=3),
                          zarr_format=3)


def control(server, what):
    with urllib.request.urlopen(f"{server}/__control/{what}", timeout=30) as r:
        return json.loads(r.read())


# ---------------------------------------------------------------- worker (one process per implementation)

def selection(cell):
    if cell == "W":
        return tuple(slice(0, n) for n in SHAPE)
    if cell == "V":
        (y, x), (h, w) = WINDOW
        return (slice(y, y + h), slice(x, x + w))
    return tuple(slice(a, b, s) for a, b, s in STRIDED)


def base_impl(impl):
    """The client behind an implementation's name: `libzarr:LABEL` (one of --libs) is libzarr."""
    return impl.split(":", 1)[0]


def add_lib_args(ap):
    """--libs and --rounds (bench/remote_latency.py, bench/remote_shard_windows.py)."""
    ap.add_argument("--libs", help="compare libzarr builds in one run: LABEL=PATH,... (each a client `libzarr:LABEL` "
                    "run with ZARR_LIB=PATH, in place of `libzarr` in --impls; the table adds each one's time over "
                    "the first's)")
    ap.add_argument("--rounds", type=int, default=1, help="run every client this many times, the order reversed "
                    "each round (A B, B A, ...), pooling the repetitions: clients compared on one run share its "
                    "load; the 1-minute load average before and after each client's run is reported")


def expand_impls(a):
    """(clients, {client: library path}) from --impls, --libs and --lib."""
    impls = a.impls.split(",")
    libs = {"libzarr": a.lib}
    if a.libs:
        pairs = [x.split("=", 1) for x in a.libs.split(",")]
        labelled = {f"libzarr:{k}": v for k, v in pairs}
        impls = [x for i in impls for x in (labelled if i == "libzarr" else [i])]
        libs = labelled
    return impls, libs


def run_rounds(rounds, impls, run_one, log_load):
    """Runs `run_one(impl)` for every client, `rounds` times, reversing the order each round; records
    the 1-minute load average before and after each run with `log_load(impl, before, after)`."""
    for r in range(rounds):
        for impl in (impls if r % 2 == 0 else impls[::-1]):
            before = os.getloadavg()[0]
            run_one(impl)
            log_load(impl, before, os.getloadavg()[0])


def client(impl, server):
    """(open(layout) -> handle, read(handle, cell) -> numpy array, write(layout, name, values))."""
    import numpy as np

    endpoint = server
    impl = base_impl(impl)
    if impl == "libzarr":
        sys.path.insert(0, str(REPO / "tools"))
        import zarr_ctypes as zc

        def open_(layout):
            return zc.Array.open(f"{server}/{BUCKET}/{layout}")

        def read(a, cell):
            sl = selection(cell)
            start = [s.start for s in sl]
            if cell == "T":
                count = [len(range(s.start, s.stop, s.step)) for s in sl]
                out = np.empty(count, dtype="<u2")
                a.read_hyperslab(start, count, step=[s.step for s in sl], out=out)
                return out
            count = [s.stop - s.start for s in sl]
            return a.read_into(np.empty(count, dtype="<u2"), start, count)

        def write(layout, name, values):
            meta = (Path(os.environ["BENCH_ROOT"]) / BUCKET / layout / "zarr.json").read_text()
            opts = zc.StoreOptions(endpoint=endpoint, anonymous="true", path_style="true", allow_http="true")
            with zc.Array.create(f"s3://{BUCKET}/{name}", meta, options=opts) as a:
                a.write(values.tobytes())
    elif impl == "tensorstore":
        import tensorstore as ts

        ctx = ts.Context({"data_copy_concurrency": {"limit": 2}, "cache_pool": {"total_bytes_limit": 0}})

        def open_(layout):
            spec = {"driver": "zarr3", "kvstore": {"driver": "http", "base_url": f"{server}/{BUCKET}/{layout}/"}}
            return ts.open(spec, open=True, read=True, context=ctx).result()

        def read(a, cell):
            return a[selection(cell)].read().result()

        def write(layout, name, values):
            meta = json.loads((Path(os.environ["BENCH_ROOT"]) / BUCKET / layout / "zarr.json").read_text())
            meta.pop("attributes", None)
            spec = {"driver": "zarr3", "metadata": meta,
                    "kvstore": {"driver": "s3", "bucket": BUCKET, "path": name + "/", "endpoint": endpoint,
                                "aws_region": "us-east-1", "aws_credentials": {"type": "anonymous"}}}
            a = ts.open(spec, create=True, delete_existing=False, context=ctx).result()
            a.write(values).result()
    elif impl == "zarr-python":
        import zarr
        from obstore.store import HTTPStore, S3Store
        from zarr.storage import ObjectStore

        zarr.config.set({"threading.max_workers": 2})

        def open_(layout):
            st = HTTPStore.from_url(f"{server}/{BUCKET}/{layout}", client_options={"allow_http": True})
            return zarr.open_array(store=ObjectStore(st, read_only=True), mode="r")

        def read(a, cell):
            return a[selection(cell)]

        def write(layout, name, values):
            from zarr.codecs import ZstdCodec

            st = S3Store(BUCKET, prefix=name, endpoint=endpoint, region="us-east-1", skip_signature=True,
                         client_options={"allow_http": True}, virtual_hosted_style_request=False)
            a = zarr.create_array(store=ObjectStore(st), shape=SHAPE, dtype="<u2", chunks=CHUNKS,
                                  shards=SHARDS if layout == "sharded" else None, compressors=ZstdCodec(level=3))
            a[...] = values
    else:
        raise SystemExit(f"unknown implementation {impl}")
    return open_, read, write


def worker(impl, server, layouts, cells, reps):
    import numpy as np

    values = data()
    open_, read, write = client(impl, server)
    out = {}
    for layout in layouts:
        for cell in cells:
            runs = []
            for rep in range(reps):
                name = f"written/{impl.replace(':', '-')}-{os.getpid()}-{layout}-{rep}"
                h = None
                control(server, "reset")
                t0 = time.perf_counter()
                if cell != "P":
                    h = open_(layout)
                t_open = time.perf_counter() - t0
                opened = control(server, "stats")
                control(server, "reset")
                c0 = time.process_time()
                t0 = time.perf_counter()
                if cell == "P":
                    write(layout, name, values)
                else:
                    got = read(h, cell)
                dt = time.perf_counter() - t0
                cpu = time.process_time() - c0
                st = control(server, "stats")
                if cell == "P":
                    back = read(open_(name), "W")
                    if not np.array_equal(np.asarray(back), values):
                        raise SystemExit(f"{impl} {layout} P: what was written reads back differently")
                elif not np.array_equal(np.asarray(got), values[selection(cell)]):
                    raise SystemExit(f"{impl} {layout} {cell}: wrong values")
                runs.append({"t": dt, "cpu": cpu, "open_t": t_open, "open_requests": opened["requests"],
                             "open_trips": opened.get("round_trips"), "trips": st.get("round_trips"),
                             "requests": st["requests"], "by_method": st["by_method"],
                             "bytes": st["bytes_received"] if cell == "P" else st["bytes_sent"],
                             "in_flight": st["max_in_flight"], "server_cpu": st["cpu_s"] - opened["cpu_s"]})
                if h is not None and hasattr(h, "close"):
                    h.close()
            out[f"{layout}/{cell}"] = runs
            med = statistics.median(r["t"] for r in runs)
            each = ", ".join(f"{r['t']:.3f}" for r in runs)
            log(f"  {impl} {layout} {cell}: {med:.3f} s ({each}), "
                f"{runs[-1]['requests']} requests in {runs[-1]['trips']} round trips, "
                f"{runs[-1]['bytes']} bytes, {runs[-1]['in_flight']} in flight")
    print(json.dumps(out))


# ---------------------------------------------------------------- driver

def start_server(root, delay_ms):
    p = subprocess.Popen([sys.executable, str(HERE / "latency_server.py"), str(root), "--delay-ms", str(delay_ms)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    url = p.stdout.readline().strip()
    if not url.startswith("http://"):
        p.kill()
        raise SystemExit("latency_server.py did not start")
    return p, url


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--delays-ms", default="20,100")
    ap.add_argument("--impls", default="libzarr,tensorstore,zarr-python")
    ap.add_argument("--layouts", default="plain,sharded")
    ap.add_argument("--cells", default="W,V,T,P")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--lib", default=os.environ.get("ZARR_LIB", str(REPO / "build" / "cargo" / "release" / "libzarr.so")))
    ap.add_argument("--python", default=sys.executable,
                    help="the Python that runs the clients (one with tensorstore 0.1.86, zarr 3, obstore)")
    ap.add_argument("--json", help="also write the raw results here")
    ap.add_argument("--worker", nargs=2, metavar=("IMPL", "SERVER"), help=argparse.SUPPRESS)
    add_lib_args(ap)
    a = ap.parse_args()
    layouts, cells = a.layouts.split(","), a.cells.split(",")
    if a.worker:
        worker(a.worker[0], a.worker[1], layouts, cells, a.reps)
        return
    impls, libs = expand_impls(a)
    results, loads = {}, {}
    with tempfile.TemporaryDirectory(prefix="zarr-latency-") as tmp:
        root = Path(tmp)
        make_arrays(root)
        for delay in [float(d) for d in a.delays_ms.split(",")]:
            proc, url = start_server(root, delay)
            try:
                log(f"delay {delay:g} ms: {url}")

                def run_one(impl):
                    env = {**os.environ, "ZARR_LIB": libs.get(impl, a.lib), "ZARR_NUM_THREADS": "2",
                           "BENCH_ROOT": str(root), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
                    cmd = [a.python, __file__, "--worker", impl, url, "--layouts", a.layouts, "--cells", a.cells,
                           "--reps", str(a.reps)]
                    # The worker's log (each cell's times and round trips) goes to this stderr.
                    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True, timeout=1800)
                    if p.returncode != 0:
                        log(f"{impl}: ERR (exit {p.returncode})")
                        return
                    for k, runs in json.loads(p.stdout.strip().splitlines()[-1]).items():
                        results.setdefault((delay, impl, *k.split("/")), []).extend(runs)

                def log_load(impl, before, after):
                    loads.setdefault((delay, impl), []).append((before, after))
                    log(f"  {impl}: load average {before:.1f} before, {after:.1f} after")

                run_rounds(a.rounds, impls, run_one, log_load)
            finally:
                proc.communicate("", timeout=30)
                shutil.rmtree(root / BUCKET / "written", ignore_errors=True)
    if a.json:
        Path(a.json).write_text(json.dumps({"|".join(map(str, k)): v for k, v in results.items()}, indent=1))
    print_table(results, [float(d) for d in a.delays_ms.split(",")], impls, layouts, cells)
    print()
    print("Load (1-minute average before, after each client's run): " + "; ".join(
        f"{d:g} ms {i}: " + ", ".join(f"{b:.1f}-{e:.1f}" for b, e in v) for (d, i), v in loads.items()))


def print_table(results, delays, impls, layouts, cells):
    names = {"W": "whole", "V": "200x200 window", "T": "strided", "P": "write all"}
    lz = [i for i in impls if base_impl(i) == "libzarr"]
    ref = lz[0] if lz else "libzarr"
    extra = [f"{i} / {ref} (time)" for i in lz[1:]]
    print("| delay | layout | cell | floor s | " + " | ".join(f"{i} s (requests, MB, in flight, client CPU s, server CPU s)" for i in impls)
          + f" | tensorstore / {ref} | {ref} / floor |" + "".join(f" {x} |" for x in extra))
    print("|---" * (len(impls) + 6 + len(extra)) + "|")
    for delay in delays:
        for layout in layouts:
            for cell in cells:
                floor = FLOOR_TRIPS[(layout, cell)] * delay / 1000
                row, med = [], {}
                for impl in impls:
                    runs = results.get((delay, impl, layout, cell))
                    if not runs:
                        row.append("ERR")
                        continue
                    med[impl] = statistics.median(r["t"] for r in runs)
                    r = runs[-1]
                    row.append(f"{med[impl]:.3f} ({r['requests']}, {r['bytes'] / 1e6:.2f}, {r['in_flight']}, "
                               f"{r['cpu']:.2f}, {r['server_cpu']:.2f})")
                ts_ratio = f"{med['tensorstore'] / med[ref]:.2f}" if "tensorstore" in med and ref in med else "n/a"
                fl = f"{med[ref] / floor:.2f}" if ref in med and floor > 0 else "n/a"
                cmp = [f"{med[i] / med[ref]:.3f}" if i in med and ref in med else "n/a" for i in lz[1:]]
                print(f"| {delay:g} ms | {layout} | {names[cell]} | {floor:.2f} | " + " | ".join(row)
                      + f" | {ts_ratio} | {fl} |" + "".join(f" {x} |" for x in cmp))

    # Opening (not in the cells): requests and round trips as the server counted them, median time.
    print()
    print("| delay | layout | " + " | ".join(f"{i}: open s (requests, round trips)" for i in impls) + " |")
    print("|---" * (len(impls) + 2) + "|")
    for delay in delays:
        for layout in layouts:
            row = []
            for impl in impls:
                runs = [r for cell in cells if cell != "P" for r in results.get((delay, impl, layout, cell), [])]
                if not runs:
                    row.append("n/a")
                    continue
                r = runs[-1]
                row.append(f"{statistics.median(x['open_t'] for x in runs):.3f} ({r['open_requests']}, {r.get('open_trips')})")
            print(f"| {delay:g} ms | {layout} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
