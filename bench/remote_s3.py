#!/usr/bin/env python3
"""Remote-read benchmark: the benchmark volume's layouts (A-E, bench/README.md) read from a local S3
server on 127.0.0.1, by libzarr (s3:// location), tensorstore (its own S3 client: kvstore driver s3) and
zarr-python 3.1.6 with obstore (zarr.storage.ObjectStore), side by side.

    python3 bench/remote_s3.py [--ref-dir bench/out/ref] [--volume bench/out/data/volume_u16_512.bin]
                               [--layouts A,B,C,D,E] [--impls libzarr,tensorstore,zarr-python]
                               [--ops R,S] [--reps 3] [--regions N] [--server moto|s3s|nginx]
                               [--libs before=OLD.so,new=NEW.so] [--rounds 2]

1. the server starts on a free loopback port and serves every layout's reference copy (written by
   zarr-python: `bench/run_all.py` makes them under bench/out/ref/<L>) as s3://bench/<L>:
   - moto (default; the server the tests use): uploaded with boto3. Python, ~3.5 ms of one core per
     request whatever its size, so it sets the time of every client alike on the unsharded layouts;
   - s3s (s3s-fs 0.14.1, `cargo install s3s-fs@0.14.1 --locked --features binary`, outside the
     repository; --s3s-exe or $S3S_FS): uploaded. Rust, but its GET reads the file 4 KiB at a time
     through tokio's blocking pool, which makes it server-bound as well;
   - nginx (Debian's nginx-light): the reference copies served as static files at /bench/<L>/...
     (GET and HEAD, ranges, ETag, 404; signatures not checked; reads only), so that the clients, not
     the server, set the times;
2. each (layout x op x implementation) cell runs in its own process with 2 decode threads (libzarr
   ZARR_NUM_THREADS=2; tensorstore data_copy_concurrency 2, cache_pool 0; zarr-python
   threading.max_workers 2); request concurrency is each implementation's default (libzarr 32);
3. ops: R = read the whole array into a fresh buffer (checked against the volume), S = N reads of 16^3
   boxes one at a time (origins from shared/perf/regions_16.txt, default all 1000; checked);
4. a markdown table of medians (seconds), the ratio best peer / libzarr, and for each implementation the
   server's CPU seconds (its process and children, all threads, from /proc) per second of that client's
   timed reads: near 1.0 for moto means its one Python core was busy throughout, so the server, not the
   client, set the time;
5. `--libs LABEL=PATH,...` runs each libzarr build as its own client (`libzarr:LABEL`) in the same run,
   and `--rounds N` runs every client of a cell N times, the order reversed each round, pooling the
   repetitions (as bench/remote_latency.py): the table adds each build's time over the first's and the
   1-minute load average around each client's runs.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import remote_latency as rl  # noqa: E402
BUCKET = "bench"
CREDS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
         "AWS_DEFAULT_REGION": "us-east-1"}
SHAPE = (512, 512, 512)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def find_regions():
    for p in (REPO / "shared" / "perf" / "regions_16.txt", REPO.parent / "shared" / "perf" / "regions_16.txt",
              Path("/work/shared/perf/regions_16.txt")):
        if p.exists():
            return p
    raise SystemExit("regions_16.txt not found (shared/perf)")


# ---------------------------------------------------------------- workers (one process per cell)

def _stat_fields(pid):
    """The fields of /proc/PID/stat after the command name (state is [0], ppid [1], utime [11], stime [12])."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def server_pids(pid):
    """The server's process and its children (nginx's worker), whose CPU time the workers sample."""
    pids = [pid]
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if int(_stat_fields(p)[1]) == pid:
                    pids.append(int(p))
            except (OSError, IndexError, ValueError):
                pass
    return pids


def cpu_seconds(pids):
    """User + system CPU seconds of these processes (all their threads) so far."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in pids:
        try:
            f = _stat_fields(p)
            total += int(f[11]) + int(f[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / tick


def worker(impl, layout, op, endpoint, volume, regions, reps, pids=()):
    import numpy as np

    vol = np.memmap(volume, dtype="<u2", mode="r", shape=SHAPE)
    boxes = [tuple(int(v) for v in line.split()) for line in Path(regions).read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    prefix = layout
    if impl == "libzarr":
        sys.path.insert(0, str(REPO / "tools"))
        import zarr_ctypes as zc

        arr = zc.Array.open(f"s3://{BUCKET}/{prefix}")

        # Into numpy.empty buffers, as a C caller reads into its own memory (the peers return numpy
        # arrays allocated the same way).
        def read_all():
            return arr.read_into(np.empty(SHAPE, dtype="<u2"))

        def read_box(z, y, x):
            return arr.read_into(np.empty((16, 16, 16), dtype="<u2"), [z, y, x], [16, 16, 16])
    elif impl == "tensorstore":
        import tensorstore as ts

        ctx = ts.Context({"data_copy_concurrency": {"limit": 2}, "cache_pool": {"total_bytes_limit": 0}})
        spec = {"driver": "zarr3", "kvstore": {"driver": "s3", "bucket": BUCKET, "path": prefix + "/",
                                               "endpoint": endpoint, "aws_region": "us-east-1"}}
        arr = ts.open(spec, open=True, read=True, context=ctx).result()

        def read_all():
            return arr.read().result()

        def read_box(z, y, x):
            return arr[z:z + 16, y:y + 16, x:x + 16].read().result()
    elif impl == "zarr-python":
        import zarr
        from obstore.store import S3Store
        from zarr.storage import ObjectStore

        zarr.config.set({"threading.max_workers": 2})
        st = S3Store(BUCKET, prefix=prefix, endpoint=endpoint, region="us-east-1", access_key_id="testing",
                     secret_access_key="testing", client_options={"allow_http": True},
                     virtual_hosted_style_request=False)
        arr = zarr.open_array(store=ObjectStore(st, read_only=True), mode="r")

        def read_all():
            return arr[...]

        def read_box(z, y, x):
            return arr[z:z + 16, y:y + 16, x:x + 16]
    else:
        raise SystemExit(f"unknown implementation {impl}")
    times, server = [], []
    for _ in range(reps):
        if op == "R":
            c0 = cpu_seconds(pids)
            t0 = time.perf_counter()
            out = read_all()
            times.append(time.perf_counter() - t0)
            server.append(cpu_seconds(pids) - c0)
            if not np.array_equal(out, vol):
                raise SystemExit(f"{impl} {layout} R: wrong data")
            del out
        else:
            outs = []
            c0 = cpu_seconds(pids)
            t0 = time.perf_counter()
            for z, y, x in boxes:
                outs.append(read_box(z, y, x))
            times.append(time.perf_counter() - t0)
            server.append(cpu_seconds(pids) - c0)
            for (z, y, x), o in zip(boxes, outs):
                if not np.array_equal(o, vol[z:z + 16, y:y + 16, x:x + 16]):
                    raise SystemExit(f"{impl} {layout} S: wrong data at {z} {y} {x}")
    print(json.dumps({"times": times, "server_cpu": server}))


# ---------------------------------------------------------------- driver

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_server(proc, port, name):
    """Waits until the server process `proc` accepts connections on `port`; returns (proc, endpoint)."""
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"{name} did not start")


def start_moto():
    port = free_port()
    code = ("import logging,sys,time; from moto.server import ThreadedMotoServer; "
            "logging.getLogger('werkzeug').setLevel(logging.ERROR); "
            f"s=ThreadedMotoServer(ip_address='127.0.0.1', port={port}, verbose=False); s.start(); "
            "sys.stdin.read(); s.stop()")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
    return wait_for_server(proc, port, "moto")


def start_s3s(exe, root):
    """s3s-fs (the s3s project's S3 server over a local directory, Rust, multi-threaded): a server fast
    enough that the clients, not the server, set the times. Built by `cargo install s3s-fs@0.14.1
    --locked --features binary` (outside the repository; bench/README.md)."""
    port = free_port()
    os.makedirs(root, exist_ok=True)
    proc = subprocess.Popen([exe, "--host", "127.0.0.1", "--port", str(port), "--access-key", CREDS["AWS_ACCESS_KEY_ID"],
                             "--secret-key", CREDS["AWS_SECRET_ACCESS_KEY"], root],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return wait_for_server(proc, port, "s3s-fs")


NGINX_CONF = """daemon off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log error;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nodelay on;
    keepalive_requests 100000;
    default_type application/octet-stream;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location = /{bucket} {{ add_header x-amz-bucket-region us-east-1; return 200; }}
        location /{bucket}/ {{ alias {root}/; }}
    }}
}}
"""


def start_nginx(ref_dir):
    """nginx serving the reference copies as the objects of s3://bench (GET and HEAD with ranges, ETag,
    404 for a missing key; signatures are not checked). Reads only: a static server as fast as the
    machine allows, so that the clients, not the server, set the times."""
    import tempfile

    port = free_port()
    d = tempfile.mkdtemp(prefix="nginx-bench-")
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as f:
        f.write(NGINX_CONF.format(dir=d, port=port, bucket=BUCKET, root=os.path.abspath(ref_dir)))
    proc = subprocess.Popen(["nginx", "-c", conf, "-e", os.path.join(d, "error.log")], stdin=subprocess.DEVNULL)
    return wait_for_server(proc, port, "nginx")


def upload(endpoint, ref_dir, layouts):
    import boto3

    c = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                     aws_secret_access_key="testing")
    c.create_bucket(Bucket=BUCKET)
    for L in layouts:
        root = Path(ref_dir) / L
        files = [p for p in sorted(root.rglob("*")) if p.is_file()]
        t0 = time.monotonic()
        with ThreadPoolExecutor(8) as ex:
            list(ex.map(lambda p: c.put_object(Bucket=BUCKET, Key=f"{L}/{p.relative_to(root).as_posix()}",
                                               Body=p.read_bytes()), files))
        log(f"uploaded {L}: {len(files)} objects in {time.monotonic() - t0:.1f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref-dir", default=str(HERE / "out" / "ref"))
    ap.add_argument("--volume", default=str(HERE / "out" / "data" / "volume_u16_512.bin"))
    ap.add_argument("--layouts", default="A,B,C,D,E")
    ap.add_argument("--impls", default="libzarr,tensorstore,zarr-python")
    ap.add_argument("--ops", default="R,S")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--regions", type=int, default=1000, help="number of 16^3 boxes for S (first N lines)")
    ap.add_argument("--lib", default=os.environ.get("ZARR_LIB", str(REPO / "target" / "release" / "libzarr.so")))
    rl.add_lib_args(ap)
    ap.add_argument("--server", choices=["moto", "s3s", "nginx"], default="moto",
                    help="moto (Python, CPU-bound at a few hundred requests/s), s3s-fs (Rust; --s3s-exe) or "
                         "nginx (static GETs of the reference copies; reads only)")
    ap.add_argument("--s3s-exe", default=os.environ.get("S3S_FS", "s3s-fs"))
    ap.add_argument("--s3s-root", help="s3s-fs's data directory (default: a temporary one)")
    ap.add_argument("--worker", nargs=3, metavar=("IMPL", "LAYOUT", "OP"), help=argparse.SUPPRESS)
    ap.add_argument("--endpoint", help=argparse.SUPPRESS)
    ap.add_argument("--regions-file", help=argparse.SUPPRESS)
    ap.add_argument("--server-pids", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(*a.worker, a.endpoint, a.volume, a.regions_file, a.reps,
               [int(x) for x in a.server_pids.split(",") if x])
        return
    layouts, ops = a.layouts.split(","), a.ops.split(",")
    impls, libs = rl.expand_impls(a)
    lz = [i for i in impls if rl.base_impl(i) == "libzarr"]
    for L in layouts:
        if not (Path(a.ref_dir) / L / "zarr.json").exists():
            raise SystemExit(f"no reference copy of layout {L} under {a.ref_dir} (run bench/run_all.py first)")
    regions_src = find_regions()
    import tempfile

    tmp_root = None
    if a.server == "s3s":
        tmp_root = a.s3s_root or tempfile.mkdtemp(prefix="s3s-bench-")
        proc, endpoint = start_s3s(a.s3s_exe, tmp_root)
    elif a.server == "nginx":
        proc, endpoint = start_nginx(a.ref_dir)
    else:
        proc, endpoint = start_moto()
    results, busy = {}, {}
    try:
        pids = ",".join(str(p) for p in server_pids(proc.pid))
        if a.server != "nginx":
            upload(endpoint, a.ref_dir, layouts)

        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            lines = [x for x in regions_src.read_text().splitlines() if x.strip() and not x.lstrip().startswith("#")]
            f.write("\n".join(lines[:a.regions]) + "\n")
            regions = f.name
        env = {**os.environ, **CREDS, "AWS_ENDPOINT_URL": endpoint, "ZARR_LIB": a.lib, "ZARR_NUM_THREADS": "2",
               # numpy's OpenBLAS threads otherwise spin beside every client (as in run_all.py)
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        loads = {}
        cell = 0
        for L in layouts:
            for op in ops:
                order = impls[cell % len(impls):] + impls[:cell % len(impls)]
                cell += 1
                times, server_cpu = {}, {}

                def run_one(impl):
                    if (L, op, impl) in results and results[(L, op, impl)] is None:
                        return
                    cmd = [sys.executable, __file__, "--worker", rl.base_impl(impl), L, op, "--endpoint", endpoint,
                           "--volume", a.volume, "--regions-file", regions, "--reps", str(a.reps if op == "R" else 1),
                           "--server-pids", pids]
                    p = subprocess.run(cmd, env={**env, "ZARR_LIB": libs.get(impl, a.lib)}, capture_output=True,
                                       text=True, timeout=1800)
                    if p.returncode != 0:
                        log(f"{L} {op} {impl}: ERR {p.stderr.strip().splitlines()[-1:]}")
                        results[(L, op, impl)] = None
                        return
                    res = json.loads(p.stdout.strip().splitlines()[-1])
                    times.setdefault(impl, []).extend(res["times"])
                    server_cpu.setdefault(impl, []).extend(res["server_cpu"])

                def log_load(impl, before, after):
                    loads.setdefault(impl, []).extend([before, after])

                rl.run_rounds(a.rounds, order, run_one, log_load)
                for impl, t in times.items():
                    if results.get((L, op, impl), 0) is None:
                        continue
                    results[(L, op, impl)] = statistics.median(t)
                    # the server's CPU seconds per second of the client's timed reads (1.0 = one core busy)
                    busy[(L, op, impl)] = sum(server_cpu[impl]) / sum(t)
                    log(f"{L} {op} {impl}: {results[(L, op, impl)]:.3f} s ({', '.join(f'{x:.3f}' for x in t)}); "
                        f"server CPU {sum(server_cpu[impl]):.2f} s = {busy[(L, op, impl)]:.2f} of the time")
    finally:
        if a.server == "nginx":
            proc.terminate()
            proc.wait(timeout=30)
        elif a.server == "s3s":
            proc.terminate()
            proc.wait(timeout=30)
            if not a.s3s_root:
                import shutil

                shutil.rmtree(tmp_root, ignore_errors=True)
        else:
            proc.communicate(b"", timeout=30)
    load = os.getloadavg()
    print(f"Remote S3 reads ({a.server} on loopback), medians in seconds; load average {load[0]:.1f} {load[1]:.1f}; "
          f"S = {a.regions} boxes of 16^3")
    print()
    extra = [f"{i} / {lz[0]}" for i in lz[1:]]
    print("| layout | op | " + " | ".join(impls) + " | best peer / libzarr | " + "".join(f"{x} | " for x in extra)
          + "server CPU s per s (" + ", ".join(impls) + ") |")
    print("|---" * (len(impls) + 4 + len(extra)) + "|")
    for L in layouts:
        for op in ops:
            cells = [results.get((L, op, i)) for i in impls]
            lib = results.get((L, op, lz[0])) if lz else None
            peers = [results.get((L, op, i)) for i in impls if i not in lz and results.get((L, op, i))]
            ratio = f"{min(peers) / lib:.2f}x" if lib and peers else "n/a"
            rel = "".join((f"{results[(L, op, i)] / lib:.3f} | " if lib and results.get((L, op, i)) else "n/a | ")
                          for i in lz[1:])
            srv = ", ".join(f"{busy[(L, op, i)]:.2f}" if (L, op, i) in busy else "-" for i in impls)
            print(f"| {L} | {op} | " + " | ".join("ERR" if c is None else f"{c:.3f}" for c in cells) + f" | {ratio} | "
                  + rel + f"{srv} |")
    if loads:
        print()
        print("Load (1-minute average before and after each client's runs): " + "; ".join(
            f"{i}: {min(v):.1f}-{max(v):.1f}" for i, v in loads.items()))

if __name__ == "__main__":
    main()
