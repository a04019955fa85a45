#!/usr/bin/env python3
"""A server on 127.0.0.1 with an object store's latency: every request is answered after a set delay
(an object store's time to first byte is 10-100 ms), so that the number of round trips a client needs,
not the server's or the loopback's speed, sets the time.

    python3 bench/latency_server.py ROOT [--delay-ms 100] [--port 0] [--read-only]
                                    [--slow-rate 0.1 --slow-ms 2000] [--fail-rate 0.05 --fail-kinds drop,503]

It is the tests' RangeHTTPServer (tests/interop/remote_servers.py): a threaded HTTP/1.1 server (one
thread per connection; a delay is a sleep, so waiting requests cost no CPU) with GET/HEAD and byte
ranges (bounded, open, suffix), ETags and If-Match, and unless --read-only PUT and DELETE, so that it
also serves as a path-style S3 endpoint without signature checks (`s3://BUCKET/key` is the file
ROOT/BUCKET/key). It prints its URL on the first line of stdout and serves until stdin closes or it is
terminated. `GET /__control/stats` answers the requests (by method), bytes sent and received, the most
requests in flight at once, the round trips (runs of requests begun less than half the delay apart),
the span from the first GET's start to the last one's end with the mean in flight over it, and the
server's own CPU seconds (JSON, at once, not counted);
`GET /__control/reset` zeroes the counts. bench/remote_latency.py drives it.
"""
import argparse
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "interop"))

from remote_servers import RangeHTTPServer  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root")
    ap.add_argument("--delay-ms", type=float, default=100.0, help="delay of every answer (default 100)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--read-only", action="store_true", help="answer PUT and DELETE with 405")
    ap.add_argument("--slow-rate", type=float, default=0.0, help="fraction of requests answered --slow-ms later")
    ap.add_argument("--slow-ms", type=float, default=2000.0)
    ap.add_argument("--fail-rate", type=float, default=0.0, help="fraction of requests answered with a fault")
    ap.add_argument("--fail-kinds", default="drop", help="comma-separated: HTTP statuses, drop, truncate")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    kinds = [int(k) if k.isdigit() else k for k in a.fail_kinds.split(",") if k]
    srv = RangeHTTPServer(a.root, seed=a.seed, writable=not a.read_only, port=a.port)
    srv.configure(fail_rate=a.fail_rate, fail_kinds=kinds, delay=a.delay_ms / 1000, slow_rate=a.slow_rate,
                  slow=a.slow_ms / 1000)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    with srv:
        print(srv.url, flush=True)
        done.wait()


if __name__ == "__main__":
    main()
