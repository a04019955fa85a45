"""Secrets stay secret: every remote failure path, with credentials in the URL, in the environment and in
the store options, gives messages (zarr_last_error() through the C API, and zarrdump's output) that never
contain a password, a secret key, a session token or a presigned URL's signature parameters.

Failure paths, each against a real server on loopback (remote_servers.RangeHTTPServer, which also
answers path-style S3 requests, echoing the request, headers included, in the body of its error
answers, as some servers' error pages do): connection refused (a closed port), 403, 404 (a missing
array: ZARR_ERR_NOT_FOUND), 503 after the retries, a timeout (a stalled server), a truncated body and a
dropped connection; both when opening and when reading an array already open. Credentials:
- in the URL: http://user:PASSWORD@127.0.0.1:PORT/... and an S3 endpoint written with user information;
- in the environment: AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN for s3:// locations;
- in the options: secret_access_key and session_token;
- a presigned URL: X-Amz-Signature, X-Amz-Credential and X-Amz-Security-Token parameters.
The test fails if any of these strings appears in any message, and checks that the messages still name
the (masked) URL, so that masking did not simply drop them.
"""

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
import zarr_ctypes as zc  # noqa: E402
from remote_servers import RangeHTTPServer, free_port  # noqa: E402

URL_PASSWORD = "urlPassw0rd-x1"
ENDPOINT_PASSWORD = "endpointPw-x2"
ENV_SECRET = "envSecretKey-x3"
ENV_TOKEN = "envSessionToken-x4"
OPT_SECRET = "optSecretKey-x5"
OPT_TOKEN = "optSessionToken-x6"
SIGNATURE = "c0ffee5ignature-x7"
CREDENTIAL = "AKIAPRESIGNED-x8"
SIG_TOKEN = "presignedToken-x9"
SECRETS = [URL_PASSWORD, ENDPOINT_PASSWORD, ENV_SECRET, ENV_TOKEN, OPT_SECRET, OPT_TOKEN, SIGNATURE, CREDENTIAL,
           SIG_TOKEN]
FAST = {"retries": 1, "timeout_ms": 600, "connect_timeout_ms": 600}


def check_message(what, message, expect=None):
    for s in SECRETS:
        assert s not in message, f"{what}: secret {s!r} in message: {message}"
    if expect is not None:
        assert expect in message, f"{what}: {expect!r} not in message: {message}"


class Env:
    """Sets environment variables for a block (the library reads them when a store is opened)."""

    def __init__(self, **values):
        self.values, self.saved = values, {}

    def __enter__(self):
        for k, v in self.values.items():
            self.saved[k] = os.environ.get(k)
            os.environ[k] = v

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def placements(base):
    """(name, location, options, environment) for each way of giving credentials, against `base`
    (http://127.0.0.1:PORT). The server's root holds bucket directory `b` with array `arr`."""
    host = base.split("://", 1)[1]
    s3_env = {"AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": ENV_SECRET, "AWS_SESSION_TOKEN": ENV_TOKEN,
              "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": base}
    return [
        ("url", f"http://user:{URL_PASSWORD}@{host}/b/arr", FAST, {}),
        ("env", "s3://b/arr", {**FAST, "path_style": "true"}, s3_env),
        ("options", "s3://b/arr", {**FAST, "endpoint": base, "access_key_id": "AKIDOPT",
                                   "secret_access_key": OPT_SECRET, "session_token": OPT_TOKEN,
                                   "path_style": "true"}, {}),
        ("endpoint", "s3://b/arr", {**FAST, "endpoint": f"http://ep:{ENDPOINT_PASSWORD}@{host}",
                                    "access_key_id": "AKIDOPT", "secret_access_key": OPT_SECRET,
                                    "path_style": "true"}, {}),
    ]


def failing_open(what, location, options, env, expect_status, expect_text):
    with Env(**env):
        try:
            zc.Array.open(location, options=zc.StoreOptions(**options)).close()
            raise AssertionError(f"{what}: opened")
        except zc.ZarrError as e:
            assert e.name in expect_status, f"{what}: {e.name}: {e.message}"
            check_message(what, e.message, expect_text)
            return e.message


def t_open_failures(r, srv):
    closed = f"http://127.0.0.1:{free_port()}"
    n = 0
    for name, location, options, env in placements(closed):
        failing_open(f"refused/{name}", location, options, env, ("ZARR_ERR_IO",), "127.0.0.1")
        n += 1
    faults = [("403", {"fail_rate": 1.0, "fail_kinds": (403,)}, ("ZARR_ERR_IO",), "403"),
              ("503", {"fail_rate": 1.0, "fail_kinds": (503,)}, ("ZARR_ERR_IO",), "503"),
              ("truncated", {"fail_rate": 1.0, "fail_kinds": ("truncate",)}, ("ZARR_ERR_IO",), "zarr.json"),
              ("dropped", {"fail_rate": 1.0, "fail_kinds": ("drop",)}, ("ZARR_ERR_IO",), "zarr.json"),
              ("timeout", {"stall": 5.0}, ("ZARR_ERR_IO",), "zarr.json")]
    for fault, plan, status, text in faults:
        srv.configure(**plan)
        try:
            for name, location, options, env in placements(srv.url):
                failing_open(f"{fault}/{name}", location, options, env, status, text)
                n += 1
        finally:
            srv.configure()
    srv.reset_counts()
    for name, location, options, env in placements(srv.url):
        missing = location.replace("/arr", "/nothing")
        failing_open(f"404/{name}", missing, options, env, ("ZARR_ERR_NOT_FOUND",), "nothing")
        n += 1
    assert srv.requests >= 4, "the 404 cases reached the server"
    assert n == 4 * 7, n


def t_read_failures(r, srv, data):
    """Faults after the array was opened: the reads fail (or succeed after retries), messages masked."""
    n = 0
    for fault, plan in [("403", {"fail_rate": 1.0, "fail_kinds": (403,)}),
                        ("truncated", {"fail_rate": 1.0, "fail_kinds": ("truncate",)}),
                        ("timeout", {"stall": 5.0})]:
        for name, location, options, env in placements(srv.url):
            with Env(**env):
                with zc.Array.open(location, options=zc.StoreOptions(**options)) as a:
                    assert a.read([0, 0], [4, 4]) == np.ascontiguousarray(data[:4, :4]).tobytes()
                    srv.configure(**plan)
                    try:
                        a.read()
                        raise AssertionError(f"{fault}/{name}: read succeeded")
                    except zc.ZarrError as e:
                        assert e.name in ("ZARR_ERR_IO", "ZARR_ERR_CODEC"), f"{fault}/{name}: {e.name} {e.message}"
                        check_message(f"read {fault}/{name}", e.message, "/c/")
                        n += 1
                    finally:
                        srv.configure()
    assert n == 3 * 4, n


def t_presigned_url(r, srv):
    q = f"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={CREDENTIAL}&X-Amz-Security-Token={SIG_TOKEN}" \
        f"&X-Amz-Signature={SIGNATURE}"
    for location in (f"{srv.url}/b/arr?{q}", f"{srv.url}/b/arr/zarr.json?{q}"):
        msg = failing_open("presigned", location, FAST, {}, ("ZARR_ERR_UNSUPPORTED",), "X-Amz-Signature=***")
        assert "X-Amz-Algorithm=AWS4-HMAC-SHA256" in msg, msg


def t_masking_keeps_the_rest(r, srv):
    """The masked message still says what failed and where: the user name and host stay."""
    srv.configure(fail_rate=1.0, fail_kinds=(503,))
    try:
        msg = failing_open("503", f"http://alice:{URL_PASSWORD}@127.0.0.1:{srv.url.rsplit(':', 1)[1]}/b/arr", FAST, {},
                           ("ZARR_ERR_IO",), "503")
        assert "alice:***@127.0.0.1" in msg, msg
    finally:
        srv.configure()


def t_zarrdump(r, srv):
    exe = os.environ.get("ZARRDUMP")
    if not exe:
        # ctest passes ZARRDUMP; a hand run without it checks the library's messages only.
        assert not os.environ.get("CI"), "ZARRDUMP (the zarrdump program) is not set"
        print("note: ZARRDUMP not set: zarrdump's output not checked")
        return
    host = srv.url.split("://", 1)[1]
    ok = subprocess.run([exe, f"http://user:{URL_PASSWORD}@{host}/b/arr"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    check_message("zarrdump", ok.stdout + ok.stderr, "ushort arr(")
    closed = free_port()
    for loc in (f"http://user:{URL_PASSWORD}@127.0.0.1:{closed}/b/arr",
                f"http://127.0.0.1:{closed}/b/arr?X-Amz-Signature={SIGNATURE}&X-Amz-Credential={CREDENTIAL}"):
        bad = subprocess.run([exe, loc], capture_output=True, text=True, timeout=120)
        assert bad.returncode != 0, bad.stdout
        check_message("zarrdump error", bad.stdout + bad.stderr, "127.0.0.1")


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    with tempfile.TemporaryDirectory(prefix="zarr-remote-secrets-") as tmp:
        root = Path(tmp)
        data = np.arange(64 * 48, dtype="<u2").reshape(64, 48)
        zarr.create_array(store=str(root / "b" / "arr"), data=data, chunks=(16, 16), zarr_format=3)
        r = harness.Runner(root, args.verbose, args.k)
        t0 = time.monotonic()
        with RangeHTTPServer(root) as srv:
            r.run("open_failures", t_open_failures, r, srv)
            r.run("read_failures", t_read_failures, r, srv, data)
            r.run("presigned_url", t_presigned_url, r, srv)
            r.run("masking_keeps_the_rest", t_masking_keeps_the_rest, r, srv)
            r.run("zarrdump", t_zarrdump, r, srv)
        print(f"{r.passed} passed, {len(r.failed)} failed ({time.monotonic() - t0:.1f} s)")
        sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
