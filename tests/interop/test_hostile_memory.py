"""Memory bounded by the request (docs/limits.md) against hostile servers and zip archives: every read
runs in a child process under an address-space cap (`prlimit --as`), so an abort or an unbounded
allocation fails the case, and the children's peak resident memory is asserted.

Remote answers, from a hostile HTTP server on loopback (plain HTTP and S3 path-style requests through
the same server), for a `zarr.json`, a compressed chunk (one whole GET), an uncompressed chunk (a
ranged GET) and a shard (a suffix GET of its index):
- `claims`: every answer announces `Content-Length: 2^40` and streams zeros;
- `streams`: every answer has no length and streams zeros until the client hangs up (refused at its
  headers: an answer without `Content-Length` is ZARR_ERR_IO);
- `total`: ranged answers carry the right bytes but claim an object of 2^40 bytes (`Content-Range`).
A metadata document longer than the ceiling is ZARR_ERR_MEMORY; a chunk longer than any encoding of
it is ZARR_ERR_CODEC (refused at its `Content-Length` or `Content-Range`); a ranged answer whose body
runs past the range is ZARR_ERR_IO after one byte more than the range; never a buffer of the claimed
size.

Zip members (local archives): a 3 MB archive whose `zarr.json` inflates to 3 GiB is ZARR_ERR_MEMORY,
and a chunk member that inflates to 3 GiB is ZARR_ERR_CODEC, whether its recorded size says so (refused
before inflating) or claims 100 bytes (inflating stops at byte 101).
"""

import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tools"))
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
import zarr_ctypes as zc  # noqa: E402
from remote_servers import free_port  # noqa: E402

# The children's address-space cap: far below what the hostile answers claim (2^40 bytes) and what the
# zip members inflate to (3 GiB), above what the library legitimately needs.
CAP = 1536 << 20
# The most resident memory a child may have used at its peak.
PEAK = 320 << 20
HUGE = 1 << 40

ZEROS = bytes(1 << 16)


def v3(shape, chunks, codecs):
    return json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": codecs, "attributes": {}}).encode()


BYTES = {"name": "bytes", "configuration": {"endian": "little"}}
ARRAYS = {
    # One whole GET per chunk.
    "zstd": v3([4096], [4096], [BYTES, {"name": "zstd", "configuration": {"level": 3, "checksum": False}}]),
    # A small read is one ranged GET of the bytes it needs.
    "plain": v3([1 << 20], [1 << 20], [BYTES]),
    # A small read opens the shard with a suffix GET of its index.
    "shard": v3([4096], [4096], [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [64], "codecs": [BYTES],
        "index_codecs": [BYTES, {"name": "crc32c"}], "index_location": "end"}}]),
}


class Hostile(BaseHTTPRequestHandler):
    """GET /[bucket/]<mode>/<array>/zarr.json and /[bucket/]<mode>/<array>/c/0 (see the module's
    docstring); mode `meta` is hostile in zarr.json, the others in the chunk."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.answer(head=True)

    def do_GET(self):
        self.answer(head=False)

    def answer(self, head):
        parts = self.path.strip("/").split("/")
        if parts and parts[0] == "bucket":
            parts = parts[1:]
        if len(parts) < 3 or parts[1] not in ARRAYS:
            return self.plain(404, b"")
        mode, name, key = parts[0], parts[1], "/".join(parts[2:])
        if key == "zarr.json" and mode != "meta":
            return self.plain(200, ARRAYS[name], head)
        if key == "zarr.json" or (key == "c/0" and mode != "meta"):
            return self.hostile(mode if mode != "meta" else "claims", head)
        return self.plain(404, b"")

    def plain(self, status, body, head=False):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", '"fixed"')
        self.send_header("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def hostile(self, mode, head):
        rng = self.headers.get("Range")
        start, end = 0, HUGE - 1
        if rng and rng.startswith("bytes="):
            a, _, b = rng[6:].partition("-")
            if a == "":  # suffix: the last b bytes of a 2^40-byte object
                start, end = HUGE - int(b), HUGE - 1
            else:
                start, end = int(a), int(b) if b else HUGE - 1
        self.send_response(206 if rng else 200)
        self.send_header("ETag", '"fixed"')
        self.send_header("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")
        self.send_header("Accept-Ranges", "bytes")
        if rng:
            self.send_header("Content-Range", f"bytes {start}-{end}/{HUGE}")
        if mode == "claims":
            self.send_header("Content-Length", str(HUGE))
        elif mode == "total":
            self.send_header("Content-Length", str(end - start + 1))
        else:  # streams: no length, the body ends when the connection does
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if head:
            return
        left = end - start + 1 if mode == "total" else HUGE
        try:
            # At most 2 GiB per answer (more than any cap here), so a client that keeps reading fails
            # its case on the cap instead of the test running forever.
            sent = 0
            while left > 0 and sent < (2 << 30):
                n = min(left, len(ZEROS))
                self.wfile.write(ZEROS[:n])
                left -= n
                sent += n
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True


def child(case, location, options):
    """Runs in the capped child: opens `location` and reads 16 elements, printing the outcome."""
    harness.load_library()
    opts = zc.StoreOptions(json=json.dumps(options)) if options else None
    try:
        with zc.Array.open(location, options=opts) as a:
            a.read([0], [16])
        print(json.dumps({"case": case, "status": "ZARR_OK", "message": ""}))
    except zc.ZarrError as e:
        print(json.dumps({"case": case, "status": e.name, "message": str(e)}))


def run_capped(case, location, options, expect, needle):
    """Runs `child` for one case under `prlimit --as` and checks its status and message."""
    cmd = ["prlimit", f"--as={CAP}", sys.executable, __file__, "--child", case, location, json.dumps(options or {})]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env={**os.environ, "ZARR_NUM_THREADS": "4"})
    assert p.returncode == 0, f"{case}: the capped child failed with {p.returncode}: {p.stderr.strip()[-2000:]}"
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["status"] == expect, f"{case}: {out['status']} ({out['message']}), expected {expect}"
    assert needle in out["message"], f"{case}: {out['message']!r} does not say {needle!r}"


def remote_cases(url, options, tag):
    meta = "over the metadata ceiling"
    codec = "longer than any encoding"
    cases = []
    for name in ARRAYS:
        cases.append((f"{tag} meta/{name}", f"{url}/meta/{name}", "ZARR_ERR_MEMORY", meta))
    cases += [
        (f"{tag} claims/zstd", f"{url}/claims/zstd", "ZARR_ERR_CODEC", codec),
        (f"{tag} streams/zstd", f"{url}/streams/zstd", "ZARR_ERR_IO", "Content-Length"),
        (f"{tag} claims/plain", f"{url}/claims/plain", "ZARR_ERR_IO", "more than"),
        (f"{tag} streams/plain", f"{url}/streams/plain", "ZARR_ERR_IO", "Content-Length"),
        (f"{tag} total/plain", f"{url}/total/plain", "ZARR_ERR_CODEC", codec),
        (f"{tag} claims/shard", f"{url}/claims/shard", "ZARR_ERR_IO", "more than"),
        (f"{tag} total/shard", f"{url}/total/shard", "ZARR_ERR_CODEC", codec),
    ]
    return [(c, loc, options, e, n) for c, loc, e, n in cases]


# --- zip archives built by hand: a deflate stream of 3 GiB of zeros in about 3 MB ---

def zeros_deflated(total):
    """A raw deflate stream of `total` zero bytes (a multiple of 1 MiB): one independently decodable,
    byte-aligned segment (full flush) for 1 MiB, repeated, then a final empty block."""
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    seg = co.compress(bytes(1 << 20)) + co.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    mib = bytes(1 << 20)
    for _ in range(total >> 20):
        crc = zlib.crc32(mib, crc)
    return seg * (total >> 20) + b"\x03\x00", crc


def write_zip(path, members):
    """A zip archive of `members`: (name, method (0 stored, 8 deflated), data, recorded size, crc)."""
    out = bytearray()
    central = bytearray()
    for name, method, data, size, crc in members:
        n = name.encode()
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21, crc, len(data), size, len(n), 0) + n + data
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0x21, crc, len(data), size,
                               len(n), 0, 0, 0, 0, 0, offset) + n
    cd_at = len(out)
    out += central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), cd_at, 0)
    path.write_bytes(bytes(out))


def zip_cases(tmp):
    three_gib = 3 << 30
    bomb, crc = zeros_deflated(three_gib)
    assert len(bomb) < 4 << 20, len(bomb)
    doc = ARRAYS["zstd"]
    stored_doc = ("zarr.json", 0, doc, len(doc), zlib.crc32(doc))
    meta = tmp / "meta_bomb.zip"
    write_zip(meta, [("zarr.json", 8, bomb, three_gib, crc)])
    honest = tmp / "chunk_bomb.zip"
    write_zip(honest, [stored_doc, ("c/0", 8, bomb, three_gib, crc)])
    liar = tmp / "chunk_liar.zip"
    write_zip(liar, [stored_doc, ("c/0", 8, bomb, 100, crc)])
    return [
        ("zip: zarr.json inflating to 3 GiB", f"zip://{meta}", None, "ZARR_ERR_MEMORY", "over the metadata ceiling"),
        ("zip: chunk recorded and inflating as 3 GiB", f"zip://{honest}", None, "ZARR_ERR_CODEC", "longer than any encoding"),
        ("zip: chunk recorded as 100 bytes inflating to 3 GiB", f"zip://{liar}", None, "ZARR_ERR_CODEC", "not the recorded 100"),
    ]


def check_peak(peak):
    assert peak < PEAK, f"a child peaked at {peak >> 20} MiB (at most {PEAK >> 20} MiB)"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        case, location, options = sys.argv[2:5]
        child(case, location, json.loads(options))
        return
    args = harness.parse_args(__doc__)
    harness.load_library()
    if not shutil.which("prlimit"):
        import zarr_prereq  # tests/python_site: skipped (77), failed under CI=true

        zarr_prereq.missing("prlimit (util-linux) is not installed")
    r = harness.Runner.in_scratch(args)
    port = free_port()
    srv = ThreadingHTTPServer(("127.0.0.1", port), Hostile)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{port}"
        s3 = {"endpoint": url, "anonymous": "true", "path_style": "true", "allow_http": "true", "region": "us-east-1",
              "retries": "0"}
        cases = remote_cases(url, {"retries": "0"}, "http") + remote_cases("s3://bucket", s3, "s3") + zip_cases(r.tmp)
        for case, location, options, expect, needle in cases:
            r.run(case, run_capped, case, location, options, expect, needle)
    finally:
        srv.shutdown()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(f"children's peak resident memory: {peak >> 20} MiB")
    r.run("peak resident memory of the capped children", check_peak, peak)
    r.finish()


if __name__ == "__main__":
    main()
