"""Real servers on loopback for the remote-store tests, started and stopped by the tests:

- RangeHTTPServer: serves a directory over HTTP with GET/HEAD and byte ranges (Range: bytes=a-b, a-,
  -n; 206 + Content-Range) and If-Match (412 when the ETag, the MD5 of the file, differs), counts
  requests and the most in flight at once, and injects faults on
  request: answer 500/503 or drop the connection for a fraction of requests (seeded), stall (hold the
  request without answering), or delay every answer.
- MotoServer: moto's S3 server (`moto.server.ThreadedMotoServer`) on a free port, with a bucket.

Everything binds to 127.0.0.1 only.
"""

import email.utils
import hashlib
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

    def log_message(self, *args):  # quiet
        pass

    def _fault(self):
        """Applies the server's fault plan; True when the request was answered (or dropped) by it."""
        srv = self.server
        with srv.lock:
            srv.requests += 1
            roll = srv.rng.random()
        if srv.delay:
            time.sleep(srv.delay)
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
            self.send_response(kind)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return True
        return False

    def _serve(self, head):
        srv = self.server
        with srv.lock:
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
        try:
            if self._fault():
                return
            rel = self.path.split("?", 1)[0].lstrip("/")
            path = srv.root / rel
            if ".." in rel.split("/") or not path.is_file():
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
                self.wfile.write(body)
        finally:
            with srv.lock:
                srv.in_flight -= 1

    def do_GET(self):
        self._serve(head=False)

    def do_HEAD(self):
        self._serve(head=True)


class RangeHTTPServer:
    """Serves `root` on http://127.0.0.1:<port>/ from a background thread (use as a context manager)."""

    def __init__(self, root, seed=0):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.root = Path(root).resolve()
        self.httpd.lock = threading.Lock()
        self.httpd.rng = random.Random(seed)
        self.configure()
        self.httpd.in_flight = 0
        self.reset_counts()
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def configure(self, fail_rate=0.0, fail_kinds=(500, 503, "drop"), stall=0.0, delay=0.0):
        """Fault plan: answer a `fail_rate` fraction of requests with one of `fail_kinds` (an HTTP
        status or "drop"), hold every request `stall` seconds and then drop it, or delay every answer."""
        h = self.httpd
        h.fail_rate, h.fail_kinds, h.stall, h.delay = fail_rate, list(fail_kinds), stall, delay

    def reset_counts(self):
        h = self.httpd
        h.requests = h.range_requests = h.faults = h.bytes_sent = h.precondition_failures = 0
        # Requests still being answered stay in flight (their handlers decrement it when they end).
        h.max_in_flight = h.in_flight

    def __getattr__(self, name):
        if name in ("requests", "range_requests", "faults", "bytes_sent", "max_in_flight", "precondition_failures"):
            return getattr(self.httpd, name)
        raise AttributeError(name)

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

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)

        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.server.start()
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
        self.server.stop()
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
