"""Real servers on loopback for the remote-store tests, started and stopped by the tests:

- RangeHTTPServer: serves a directory over HTTP with GET/HEAD and byte ranges (Range: bytes=a-b, a-,
  -n; 206 + Content-Range) and If-Match (412 when the ETag, the MD5 of the file, differs), and with
  `writable=True` PUT and DELETE (so that path-style S3 clients can write: `/bucket/key` is the file
  `root/bucket/key`); counts requests (by method), bytes and the most in flight at once, and injects
  faults on request: answer an HTTP status (500, 503, 403, ...) or drop the connection or send a
  truncated body for a fraction of requests (seeded), answer a fraction of requests only after a long
  pause (`slow_rate`, `slow`), stall (hold the request without answering), or delay every answer;
  `no_suffix` makes it ignore suffix ranges (`bytes=-n`: the whole file, 200), as servers may.
  `GET /__control/stats` (not delayed, not counted) answers the counts and the server's own CPU
  seconds as JSON, `GET /__control/reset` resets the counts: for a server run in another process
  (bench/latency_server.py).
- MotoServer: moto's S3 server (as `moto.server.ThreadedMotoServer` runs it, object writes one at a time) on a
  free port, with a bucket.

Everything binds to 127.0.0.1 only.
"""

import email.utils
import hashlib
import json
import os
import random
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The headers and the body go out in two writes: with Nagle's algorithm the body would wait for
    # the client's delayed ACK of the headers (40 ms on Linux), on every answer.
    disable_nagle_algorithm = True

    def log_message(self, *args):  # quiet
        pass

    def _fault(self):
        """Applies the server's fault plan; True when the request was answered (or dropped) by it."""
        srv = self.server
        with srv.lock:
            srv.requests += 1
            srv.by_method[self.command] = srv.by_method.get(self.command, 0) + 1
            roll = srv.rng.random()
            slow = srv.slow_rate and srv.rng.random() < srv.slow_rate
        if srv.delay:
            time.sleep(srv.delay)
        if slow:
            with srv.lock:
                srv.slowed += 1
            time.sleep(srv.slow)
        if srv.stall:
            time.sleep(srv.stall)
            self.close_connection = True
            return True
        if roll < srv.fail_rate:
            kind = srv.rng.choice(srv.fail_kinds)
            with srv.lock:
                srv.faults += 1
            if kind == "drop":
                # Close the socket without an answer.
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return True
            if kind == "truncate":
                # Promise a body and close the connection halfway through it.
                self.close_connection = True
                self.send_response(200)
                self.send_header("Content-Length", "1000")
                self.end_headers()
                self.wfile.write(b"x" * 500)
                self.wfile.flush()
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return True
            # An error page that repeats the request, headers included (as some servers' do): what
            # a client puts in its error messages must not leak credentials from it.
            echo = f"{self.requestline}\r\n{self.headers}".encode("utf-8", "replace")
            self.send_response(kind)
            self.send_header("Content-Length", str(len(echo)))
            self.end_headers()
            self.wfile.write(echo)
            return True
        return False

    def _control(self):
        """`/__control/stats` and `/__control/reset`: answered at once, not counted; True if it was one."""
        if not self.path.startswith("/__control/"):
            return False
        srv = self.server
        if self.path == "/__control/reset":
            with srv.lock:
                _reset(srv)
            body = b"{}"
        else:
            with srv.lock:
                stats = {k: getattr(srv, k) for k in COUNTS}
            stats["by_method"] = dict(srv.by_method)
            # Waves of requests: with every answer delayed, those begun more than half the delay after
            # the one before were sent after an answer.
            stats["round_trips"] = _waves(srv.starts, srv.delay / 2) if srv.delay else None
            # From the first GET's start to the last one's end, and the mean in flight over it.
            span = srv.last_ended - srv.first_began
            stats["span_s"] = span if span > 0 else 0.0
            stats["mean_in_flight"] = srv.busy_s / span if span > 0 else 0.0
            stats["cpu_s"] = time.process_time()
            body = json.dumps(stats).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)
        return True

    def _file(self):
        rel = self.path.split("?", 1)[0].lstrip("/")
        if ".." in rel.split("/") or not rel:
            return None
        return self.server.root / rel

    def _answer(self, status, body=b"", headers=()):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        if body:
            self.wfile.write(body)

    def _write(self, delete):
        """PUT (the body becomes the file) or DELETE (absent files succeed), when the server is writable."""
        srv = self.server
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if not srv.writable:
            self._answer(405)
            return
        with srv.lock:
            gen = srv.generation
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
            srv.bytes_received += len(body)
        try:
            if self._fault():
                return
            path = self._file()
            if path is None:
                self._answer(400)
                return
            if delete:
                path.unlink(missing_ok=True)
                self._answer(204)
                return
            if self.headers.get("If-None-Match", "").strip() == "*" and path.exists():
                self._answer(412)
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{threading.get_ident()}.tmp")
            tmp.write_bytes(body)
            os.replace(tmp, path)
            self._answer(200, headers=[("ETag", '"' + hashlib.md5(body).hexdigest() + '"')])
        finally:
            with srv.lock:
                if gen == srv.generation:
                    srv.in_flight -= 1

    def do_PUT(self):
        self._write(delete=False)

    def do_DELETE(self):
        self._write(delete=True)

    def _serve(self, head):
        if self._control():
            return
        srv = self.server
        began = time.monotonic()
        with srv.lock:
            gen = srv.generation
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
            srv.first_began = min(srv.first_began, began)
            srv.starts.append(began)
        try:
            if self._fault():
                return
            path = self._file()
            if path is None or not path.is_file():
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            data = path.read_bytes()
            size = len(data)
            st = path.stat()
            etag = '"' + hashlib.md5(data).hexdigest() + '"'
            if_match = self.headers.get("If-Match")
            if if_match and if_match.strip() != "*" and etag not in [t.strip() for t in if_match.split(",")]:
                with srv.lock:
                    srv.precondition_failures += 1
                self.send_response(412)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            rng = self.headers.get("Range")
            status, body, extra = 200, data, {}
            if rng:
                m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
                if not m or (m.group(1) == "" and m.group(2) == ""):
                    self.send_response(416)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if m.group(1) == "":
                    with srv.lock:
                        srv.suffix_requests += 1
                    rng = None if srv.no_suffix else rng
            if rng:
                m = re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())
                if m.group(1) == "":
                    n = int(m.group(2))
                    a, b = max(size - n, 0), size - 1
                else:
                    a = int(m.group(1))
                    b = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
                if a >= size or b < a:
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{size}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status, body = 206, data[a:b + 1]
                extra["Content-Range"] = f"bytes {a}-{b}/{size}"
                with srv.lock:
                    srv.range_requests += 1
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", email.utils.formatdate(st.st_mtime, usegmt=True))
            for k, v in extra.items():
                self.send_header(k, v)
            self.end_headers()
            if not head:
                # Counted before the body goes out: a client that has its answer may reset the counts
                # at once, and a count added after the write would land in the next tally.
                with srv.lock:
                    srv.bytes_sent += len(body)
                    srv.sent_sizes.append(len(body))
                if srv.trickle:
                    # The body in `pieces` parts, `pause` seconds apart (a slow link).
                    pieces, pause = srv.trickle
                    step = -(-len(body) // pieces) or 1
                    for i in range(0, len(body), step):
                        self.wfile.write(body[i:i + step])
                        self.wfile.flush()
                        time.sleep(pause)
                else:
                    self.wfile.write(body)
        finally:
            ended = time.monotonic()
            with srv.lock:
                if gen == srv.generation:
                    srv.in_flight -= 1
                    srv.busy_s += ended - began
                    srv.last_ended = max(srv.last_ended, ended)

    def do_GET(self):
        self._serve(head=False)

    def do_HEAD(self):
        self._serve(head=True)


COUNTS = ("requests", "range_requests", "faults", "slowed", "bytes_sent", "bytes_received", "max_in_flight",
          "precondition_failures", "suffix_requests")


def _waves(starts, gap):
    """Runs of the times `starts` in which each begins less than `gap` after the one before."""
    starts = sorted(starts)
    return sum(1 for i, t in enumerate(starts) if i == 0 or t - starts[i - 1] >= gap)


def _reset(h):
    """Zeroes the counts of server `h` (its lock held)."""
    h.requests = h.range_requests = h.faults = h.slowed = h.bytes_sent = h.bytes_received = 0
    h.precondition_failures = h.suffix_requests = 0
    # The body size of each GET answered, in the order they went out.
    h.sent_sizes = []
    h.by_method = {}
    # GETs and HEADs: the sum of their durations and the span from the first start to the last end.
    h.busy_s, h.first_began, h.last_ended = 0.0, float("inf"), float("-inf")
    # When each GET and HEAD began (server clock): round trips are the runs of them apart by less
    # than a delay.
    h.starts = []
    # Only requests that begin after the reset count: one whose answer the client already has may
    # still be ending here (its handler sees a new generation and leaves the counts alone).
    h.generation = getattr(h, "generation", 0) + 1
    h.in_flight = h.max_in_flight = 0


class _Server(ThreadingHTTPServer):
    # Many clients open dozens of connections at once: the default backlog (5) would make the kernel
    # drop SYNs, and the client retry after a second.
    request_queue_size = 1024

    def handle_error(self, request, client_address):
        # A client that gave up on a slow answer (its timeout) closes the connection: not an error here.
        pass


class RangeHTTPServer:
    """Serves `root` on http://127.0.0.1:<port>/ from a background thread (use as a context manager)."""

    def __init__(self, root, seed=0, writable=False, port=0):
        self.httpd = _Server(("127.0.0.1", port), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.writable = writable
        self.httpd.root = Path(root).resolve()
        self.httpd.lock = threading.Lock()
        self.httpd.rng = random.Random(seed)
        self.configure()
        self.reset_counts()
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def configure(self, fail_rate=0.0, fail_kinds=(500, 503, "drop"), stall=0.0, delay=0.0, slow_rate=0.0, slow=0.0,
                  trickle=None, no_suffix=False):
        """Fault plan: answer a `fail_rate` fraction of requests with one of `fail_kinds` (an HTTP
        status, "drop" or "truncate"), hold every request `stall` seconds and then drop it, delay every
        answer by `delay` seconds, and a `slow_rate` fraction of them by `slow` seconds more;
        `trickle=(pieces, pause)` sends every GET's body in that many parts, `pause` seconds apart;
        `no_suffix` answers a suffix range (`bytes=-n`) with the whole file (200), as a server without
        them does (`suffix_requests` counts them either way)."""
        h = self.httpd
        h.no_suffix = no_suffix
        h.fail_rate, h.fail_kinds, h.stall, h.delay = fail_rate, list(fail_kinds), stall, delay
        h.slow_rate, h.slow, h.trickle = slow_rate, slow, trickle

    def reset_counts(self):
        with self.httpd.lock:
            _reset(self.httpd)

    def __getattr__(self, name):
        if name in COUNTS or name in ("by_method", "sent_sizes"):
            return getattr(self.httpd, name)
        raise AttributeError(name)

    @property
    def mean_in_flight(self):
        """GETs and HEADs in flight on average since the counts were reset, from the server's clock:
        their summed durations over the span from the first start to the last end."""
        h = self.httpd
        span = h.last_ended - h.first_began
        return h.busy_s / span if span > 0 else 0.0

    def round_trips(self, gap):
        """Waves of GETs and HEADs since the counts were reset: runs of requests that began less than
        `gap` seconds after the one before (with every answer delayed by more than `gap`, a request
        sent after another's answer begins a new wave)."""
        with self.httpd.lock:
            return _waves(self.httpd.starts, gap)

    @property
    def root(self):
        return self.httpd.root

    @property
    def url(self):
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


class MotoServer:
    """moto's S3 server on 127.0.0.1:<free port>; sets the AWS_* variables of this process (credentials
    that moto accepts, region, endpoint) while running, and creates `bucket`."""

    def __init__(self, bucket="zarr-test"):
        self.bucket = bucket
        self.port = free_port()
        self.saved = {}

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        import logging

        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.ERROR)

        # moto's own ThreadedMotoServer, with one difference: requests that change objects are served one
        # at a time. moto 5.2 checks a PUT's If-Match / If-None-Match and then stores the object without a
        # lock, so two conditional PUTs racing on one key could both succeed, which S3 never allows (its
        # conditional writes are atomic). Reads stay concurrent.
        app = DomainDispatcherApplication(create_backend_app)
        writes = threading.Lock()

        def serve(environ, start_response):
            if environ.get("REQUEST_METHOD") in ("PUT", "POST", "DELETE"):
                with writes:
                    return list(app(environ, start_response))
            return app(environ, start_response)

        self.server = make_server("127.0.0.1", self.port, serve, threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": self.endpoint}
        for k, v in env.items():
            self.saved[k] = os.environ.get(k)
            os.environ[k] = v
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        self.client().create_bucket(Bucket=self.bucket)
        return self

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    def zarr_python_store(self, prefix, read_only=False):
        """zarr-python's view of s3://bucket/prefix on this server (obstore's S3 client)."""
        from obstore.store import S3Store
        from zarr.storage import ObjectStore

        st = S3Store(self.bucket, prefix=prefix, endpoint=self.endpoint, region="us-east-1",
                     access_key_id="testing", secret_access_key="testing", client_options={"allow_http": True},
                     virtual_hosted_style_request=False)
        return ObjectStore(st, read_only=read_only)

    def keys(self, prefix=""):
        out = []
        for page in self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            out += [o["Key"] for o in page.get("Contents", [])]
        return sorted(out)

    def upload_dir(self, local, prefix):
        """Uploads every file under `local` to s3://bucket/prefix/<relative path>."""
        c = self.client()
        local = Path(local)
        for p in sorted(local.rglob("*")):
            if p.is_file():
                c.put_object(Bucket=self.bucket, Key=f"{prefix}/{p.relative_to(local).as_posix()}", Body=p.read_bytes())

    def __exit__(self, *exc):
        self.server.shutdown()
        self.thread.join()
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
