"""A slow server never makes a remote read hold more memory than the concurrency limit times the
largest object (docs/remote-stores.md), measured as peak resident memory:

- an array written by zarr-python of 32 uncompressed chunks of 4 MiB (128 MiB) is served over HTTP
  by a server (remote_servers.RangeHTTPServer) that trickles every body in 16 parts 15 ms apart, so
  that answers arrive slowly and in pieces while others are in flight;
- a child process (a fresh interpreter, so that nothing else shares its memory) opens the array,
  touches its destination buffer, resets its peak resident memory (`/proc/self/clear_refs`, 5), reads
  the whole array into the buffer over HTTP with `max_concurrency` = N, and reports the peak
  (`VmHWM`) above the resident memory before the read; the values are compared with zarr-python's;
- with N = 2 the peak stays within N x 4 MiB + 16 MiB of slack (threads' stacks, the I/O runtime,
  allocator arenas); the same read with N = 24 is measured too and must exceed that bound (it holds
  up to 24 answers at once), which shows that the measurement sees what a read holds: a client
  that buffered answers beyond its limit would fail the first check.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import zarr  # noqa: E402

import harness  # noqa: E402
from remote_servers import RangeHTTPServer  # noqa: E402

MIB = 1 << 20
CHUNK = (1024, 1024)  # uint32: 4 MiB a chunk
SHAPE = (8 * 1024, 4 * 1024)  # 32 chunks, 128 MiB
SLACK = 16 * MIB

CHILD = r"""
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import zarr_ctypes as zc
zc._LIB = zc.load(sys.argv[2])
url, limit = sys.argv[3], int(sys.argv[4])

def status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise SystemExit(f"no {field} in /proc/self/status")

with zc.Array.open(url, options=zc.StoreOptions(max_concurrency=limit)) as a:
    out = np.empty(a.shape, dtype="<u4")
    out.fill(7)  # touched: resident before the read
    # A first small read starts the I/O runtime and the request threads.
    a.read_hyperslab([0, 0], [1, 1], out=np.zeros((1, 1), dtype="<u4"))
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak resident memory restarts from the current one
    before = status("VmRSS")
    a.read_hyperslab([0, 0], list(a.shape), out=out)
    peak = status("VmHWM")
np.save(sys.argv[5], out)
print(json.dumps({"before": before, "peak": peak}))
"""


def measure(tmp, url, limit):
    """(peak resident bytes above those before the read, the values read) of a child process."""
    out = tmp / f"read_{limit}.npy"
    p = subprocess.run([sys.executable, "-c", CHILD, str(harness.ROOT / "tools"), os.environ.get("ZARR_LIB") or
                        str(harness.ROOT / "target" / "release" / "libzarr.so"), url, str(limit), str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"child (max_concurrency={limit}) failed: {p.stdout}{p.stderr}"
    r = json.loads(p.stdout.strip().splitlines()[-1])
    return r["peak"] - r["before"], np.load(out)


def t_bounded(r, srv, want):
    srv.configure(trickle=(16, 0.015))
    try:
        srv.reset_counts()
        t0 = time.monotonic()
        extra, got = measure(r.tmp, f"{srv.url}/big", 2)
        dt = time.monotonic() - t0
        assert srv.max_in_flight <= 3, f"{srv.max_in_flight} requests in flight with max_concurrency=2"
        np.testing.assert_array_equal(got, want)
        largest = CHUNK[0] * CHUNK[1] * 4
        bound = 2 * largest + SLACK
        print(f"  max_concurrency=2: peak {extra / MIB:.1f} MiB above the destination (bound {bound / MIB:.0f} MiB, "
              f"{dt:.1f} s)")
        assert extra <= bound, f"a read at max_concurrency=2 held {extra / MIB:.1f} MiB (bound {bound / MIB:.0f} MiB)"
        # The same measurement of a read allowed 24 in flight sees the answers it holds: it exceeds the
        # bound of 2 (so the check above can fail).
        srv.reset_counts()
        many, got = measure(r.tmp, f"{srv.url}/big", 24)
        np.testing.assert_array_equal(got, want)
        print(f"  max_concurrency=24: peak {many / MIB:.1f} MiB ({srv.max_in_flight} in flight)")
        assert srv.max_in_flight >= 12, srv.max_in_flight
        assert many > bound, f"24 in flight held only {many / MIB:.1f} MiB: the measurement does not see the answers"
        assert many <= 24 * largest + SLACK, f"24 in flight held {many / MIB:.1f} MiB"
    finally:
        srv.configure()


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    if not Path("/proc/self/clear_refs").exists():
        print("FAIL: /proc/self/clear_refs is needed to measure peak memory (Linux)")
        sys.exit(1)
    with tempfile.TemporaryDirectory(prefix="zarr-remote-memory-") as tmp:
        root = Path(tmp)
        want = np.arange(SHAPE[0] * SHAPE[1], dtype="<u4").reshape(SHAPE)
        zarr.create_array(store=str(root / "big"), data=want, chunks=CHUNK, compressors=None, zarr_format=3)
        r = harness.Runner(root, args.verbose, args.k)
        t0 = time.monotonic()
        with RangeHTTPServer(root) as srv:
            r.run("slow_server_memory_bounded", t_bounded, r, srv, want)
        print(f"{r.passed} passed, {len(r.failed)} failed ({time.monotonic() - t0:.1f} s)")
        sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
