"""Remote reads over plain HTTP (http:// locations, read-only) against a real server on loopback
(remote_servers.RangeHTTPServer, which honours byte ranges and injects faults):

- every committed fixture (tests/fixtures) read over HTTP equals the same fixture read from disk
  (bytes, or the same error status);
- arrays written by zarr-python (v3 unsharded, v3 sharded, v2) read back byte-exact over HTTP, whole
  and in regions; sharded reads are byte-range requests that fetch far less than the shard; a handle
  keeps a shard's index with its ETag (one request for the next read; a replaced shard is read afresh);
- a group with consolidated metadata (v3 inline, v2 .zmetadata; written by zarr-python) opens and lists
  its children, at any depth, without a request (the server counts), values equal zarr-python's;
- many chunks are fetched concurrently (the server sees several requests in flight), bounded by
  max_concurrency;
- whole shards are one GET each (the server counts 4 requests for 4 shards, all in flight at once); a
  small read in several shards sends their index GETs together;
- faults: random 500/503/dropped connections are retried to success; one answer in ten after 2 s
  (slower than the request timeout, or not) still gives the right values; a server that always fails gives
  ZARR_ERR_IO naming the URL and status; a stalled server gives ZARR_ERR_IO within the timeout (wall
  time asserted); writes are ZARR_ERR_READ_ONLY (creating arrays and groups before any request: the
  server sees none, and a closed port gives READ_ONLY rather than IO) and listing is ZARR_ERR_UNSUPPORTED.
"""

import json
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

FIXTURES = harness.ROOT / "tests" / "fixtures"


def read_or_status(location, options=None):
    """(True, bytes) of the whole array, or (False, status name) when opening or reading fails."""
    try:
        with zc.Array.open(location, options=options) as a:
            if a.is_vlen:
                return True, json.dumps([repr(v) for v in a.read_vlen()])
            return True, a.read()
    except zc.ZarrError as e:
        return False, e.name


def t_fixtures(r, srv):
    cases = json.loads((FIXTURES / "manifest.json").read_text())["cases"]
    n = 0
    for c in cases:
        if c["kind"].endswith("group"):
            continue
        local = read_or_status(FIXTURES / c["path"])
        remote = read_or_status(f"{srv.url}/{c['path']}")
        assert local == remote, f"{c['name']}: local {local if not local[0] else 'ok'} vs http " \
                                f"{remote if not remote[0] else 'ok'}"
        if local[0] and c.get("expected") and isinstance(local[1], bytes):
            exp = (FIXTURES / c["expected"]).read_bytes()
            assert remote[1] == exp, f"{c['name']}: http read differs from the expected bytes"
        n += 1
    assert n > 250, n


def make_arrays(root):
    """Arrays written by zarr-python: (name, numpy data)."""
    rng = np.random.default_rng(7)
    out = []
    d = rng.standard_normal((96, 80)).astype("<f4")
    zarr.create_array(store=str(root / "v3_plain"), data=d, chunks=(16, 16), zarr_format=3)
    out.append(("v3_plain", d))
    d = rng.integers(-1000, 1000, (64, 96), dtype="<i2")
    zarr.create_array(store=str(root / "v3_sharded"), data=d, chunks=(8, 8), shards=(32, 48),
                      compressors=None, zarr_format=3)
    out.append(("v3_sharded", d))
    d = rng.integers(0, 255, (40, 30, 20), dtype="u1")
    zarr.create_array(store=str(root / "v3_sharded_zstd"), data=d, chunks=(10, 10, 10), shards=(20, 30, 20),
                      zarr_format=3)
    out.append(("v3_sharded_zstd", d))
    d = rng.standard_normal((50, 70))
    zarr.create_array(store=str(root / "v2_blosc"), data=d, chunks=(20, 20), zarr_format=2)
    out.append(("v2_blosc", d))
    d = rng.integers(0, 60000, (64, 96), dtype="<u2")
    zarr.create_array(store=str(root / "v3_raw"), data=d, chunks=(32, 32), compressors=None, zarr_format=3)
    out.append(("v3_raw", d))
    d = rng.integers(0, 255, (256, 256), dtype="u1")
    zarr.create_array(store=str(root / "v3_many"), data=d, chunks=(16, 16), zarr_format=3)
    out.append(("v3_many", d))
    return out


def t_zarr_python_arrays(r, srv, arrays):
    for name, d in arrays:
        with zc.Array.open(f"{srv.url}/arrays/{name}") as a:
            assert a.shape == list(d.shape), (a.shape, d.shape)
            assert a.read() == d.tobytes(), f"{name}: whole read differs"
            start = [s // 3 for s in d.shape]
            count = [max(s // 2, 1) for s in d.shape]
            sl = tuple(slice(s, s + c) for s, c in zip(start, count))
            assert a.read(start, count) == np.ascontiguousarray(d[sl]).tobytes(), f"{name}: region differs"


def t_sharded_ranges(r, srv, arrays):
    """Without speculation (`speculative_read_max=0`) a shard's first read fetches its index and then
    just the inner chunk; with it (the default) the small shard comes whole with the index, in one
    request (tests/interop/test_remote_speculative.py)."""
    d = dict(arrays)["v3_sharded"]
    srv.reset_counts()
    with zc.Array.open(f"{srv.url}/arrays/v3_sharded", options=zc.StoreOptions(speculative_read_max=0)) as a:
        # One inner chunk of one shard.
        assert a.read([9, 17], [4, 4]) == np.ascontiguousarray(d[9:13, 17:21]).tobytes()
    meta = len((srv.root / "arrays" / "v3_sharded" / "zarr.json").read_bytes())
    index = 4 * 6 * 16 + 4  # 24 (offset, length) pairs + crc32c
    assert srv.range_requests >= 2, f"index + inner chunk should be range requests, saw {srv.range_requests}"
    assert srv.bytes_sent - meta <= index + 128, \
        f"sent {srv.bytes_sent - meta} chunk bytes for one 128-byte inner chunk (index {index}; shard 3072)"
    with zc.Array.open(f"{srv.url}/arrays/v3_sharded") as a:
        srv.reset_counts()
        assert a.read([9, 17], [4, 4]) == np.ascontiguousarray(d[9:13, 17:21]).tobytes()
        assert (srv.requests, srv.range_requests) == (1, 1), (srv.requests, srv.range_requests)


def t_uncompressed_chunk_ranges(r, srv, arrays):
    """A region of an uncompressed chunk is one ranged GET of just the span it needs (rows of 32
    uint16 = 64 bytes); the whole chunk is one plain GET."""
    d = dict(arrays)["v3_raw"]  # chunks of 32 x 32 uint16
    with zc.Array.open(f"{srv.url}/arrays/v3_raw") as a:
        srv.reset_counts()
        # Chunk (1, 1): local rows 1..4, columns 8..12: bytes (1*32 + 8)*2 .. (4*32 + 13)*2.
        assert a.read([33, 40], [4, 5]) == np.ascontiguousarray(d[33:37, 40:45]).tobytes()
        assert (srv.requests, srv.range_requests) == (1, 1), (srv.requests, srv.range_requests)
        assert srv.bytes_sent == (4 * 32 + 13 - (32 + 8)) * 2, f"sent {srv.bytes_sent} bytes for a 202-byte span"
        # Across 4 chunks: 4 ranged GETs; strided; into float64 (conversion after the ranged read).
        srv.reset_counts()
        got = np.empty((8, 6), dtype=np.float64)
        a.read_hyperslab([20, 20], [8, 6], step=[2, 3], buffer_type="float64", out=got)
        assert np.array_equal(got, d[20:36:2, 20:38:3].astype(np.float64)), \
            "strided, converted read over ranged GETs differs"
        assert (srv.requests, srv.range_requests) == (4, 4), (srv.requests, srv.range_requests)
        srv.reset_counts()
        assert a.read([32, 64], [32, 32]) == np.ascontiguousarray(d[32:64, 64:96]).tobytes()
        assert (srv.requests, srv.range_requests, srv.bytes_sent) == (1, 0, 2048), \
            (srv.requests, srv.range_requests, srv.bytes_sent)
    # A truncated chunk (1000 of 2048 bytes): a span inside what is left and a span past its end (the
    # server answers 416) are both ZARR_ERR_CODEC naming the chunk's URL.
    chunk = srv.root / "arrays" / "v3_raw" / "c" / "1" / "2"
    original = chunk.read_bytes()
    chunk.write_bytes(original[:1000])
    try:
        with zc.Array.open(f"{srv.url}/arrays/v3_raw") as a:
            for start in ([33, 65], [60, 90]):
                try:
                    a.read(start, [2, 2])
                    raise AssertionError(f"read {start} of a truncated chunk")
                except zc.ZarrError as e:
                    assert e.name == "ZARR_ERR_CODEC" and "/arrays/v3_raw/c/1/2" in str(e), e
    finally:
        chunk.write_bytes(original)


def t_shard_index_kept_and_revalidated(r, srv, arrays):
    """A handle keeps a shard's index with its ETag: the next read of the shard is one request (the
    data, conditional on the ETag); a shard replaced on the server fails that condition and is read
    afresh (the new values, never a mix)."""
    d = dict(arrays)["v3_sharded"]  # shards of 32 x 48, inner chunks 8 x 8
    shard = srv.root / "arrays" / "v3_sharded" / "c" / "0" / "0"
    original = shard.read_bytes()
    with zc.Array.open(f"{srv.url}/arrays/v3_sharded") as a:
        srv.reset_counts()
        assert a.read([9, 17], [4, 4]) == np.ascontiguousarray(d[9:13, 17:21]).tobytes()
        # The index comes with the request that opens the shard (a suffix range, no HEAD), and with it
        # the inner chunks (this 3 KiB shard whole: speculative reads).
        assert (srv.requests, srv.range_requests) == (1, 1), (srv.requests, srv.range_requests)
        srv.reset_counts()
        assert a.read([1, 2], [3, 30]) == np.ascontiguousarray(d[1:4, 2:32]).tobytes()
        assert (srv.requests, srv.range_requests) == (1, 1), f"kept index: {srv.requests} requests"
        # Replace shard (0, 0) by shard (1, 1) (same layout, other values) behind the handle's back.
        shard.write_bytes((srv.root / "arrays" / "v3_sharded" / "c" / "1" / "1").read_bytes())
        try:
            srv.reset_counts()
            assert a.read([9, 17], [4, 4]) == np.ascontiguousarray(d[41:45, 65:69]).tobytes(), \
                "a replaced shard must be read afresh"
            assert srv.precondition_failures == 1, srv.precondition_failures
        finally:
            shard.write_bytes(original)
    # Most of a shard: one GET of the whole shard, its index read from its end (one round trip);
    # with the index kept (after a small read), one GET streamed and decoded as it arrives.
    with zc.Array.open(f"{srv.url}/arrays/v3_sharded") as a:
        srv.reset_counts()
        assert a.read([0, 0], [32, 40]) == np.ascontiguousarray(d[0:32, 0:40]).tobytes()
        assert (srv.requests, srv.range_requests) == (1, 0), (srv.requests, srv.range_requests)
        assert a.read([1, 2], [3, 4]) == np.ascontiguousarray(d[1:4, 2:6]).tobytes()
        srv.reset_counts()
        assert a.read([0, 8], [32, 40]) == np.ascontiguousarray(d[0:32, 8:48]).tobytes()
        assert (srv.requests, srv.range_requests) == (1, 0), (srv.requests, srv.range_requests)
    # Four whole shards at once: 4 requests, all in flight together, one round trip (the server
    # counts them; no timing).
    srv.configure(delay=0.3)
    try:
        with zc.Array.open(f"{srv.url}/arrays/v3_sharded") as a:
            srv.reset_counts()
            assert a.read() == d.tobytes()
            assert (srv.requests, srv.range_requests, srv.max_in_flight) == (4, 0, 4), \
                (srv.requests, srv.range_requests, srv.max_in_flight)
            # A small read in each of the 4 shards: the 4 index GETs go out together.
            srv.reset_counts()
            got = np.empty((2, 4), dtype="<i2")
            a.read_hyperslab([5, 5], [2, 4], step=[32, 24], out=got)
            assert np.array_equal(got, d[5:64:32, 5:96:24]), "strided read across shards"
            assert srv.max_in_flight >= 4 and srv.range_requests == srv.requests, \
                (srv.requests, srv.range_requests, srv.max_in_flight)
    finally:
        srv.configure()


def t_concurrency(r, srv, arrays):
    d = dict(arrays)["v3_plain"]  # 6 x 5 = 30 chunks
    srv.configure(delay=0.15)
    try:
        srv.reset_counts()
        t0 = time.monotonic()
        with zc.Array.open(f"{srv.url}/arrays/v3_plain", options=zc.StoreOptions(max_concurrency=8)) as a:
            assert a.read() == d.tobytes()
        dt = time.monotonic() - t0
        assert 4 <= srv.max_in_flight <= 8 + 1, f"max in flight {srv.max_in_flight}"
        # 30 chunk GETs + metadata at 0.15 s each: serial would be >= 4.6 s.
        assert dt < 3.0, f"{dt:.2f} s: chunk requests did not overlap"
        with zc.Array.open(f"{srv.url}/arrays/v3_plain", options=zc.StoreOptions(max_concurrency=1)) as a:
            srv.reset_counts()
            t0 = time.monotonic()
            assert a.read() == d.tobytes()
            dt = time.monotonic() - t0
        # One at a time: 30 delayed GETs take at least 30 x 0.15 s. (The server's in-flight count may
        # see 2: a handler finishes its bookkeeping after the client already has the whole answer.)
        assert srv.max_in_flight <= 2 and dt >= 30 * 0.15, f"max_concurrency=1: {srv.max_in_flight} in flight, {dt:.2f} s"
    finally:
        srv.configure()


def t_requests_in_flight(r, srv, arrays):
    """256 chunks behind a server answering every request after 100 ms: the read sends one GET per
    chunk and keeps them in flight up to the default limit (64), without waves or a serial tail, so
    that it takes few round trips. Counted on the server's side: the most in flight at once, and the
    mean in flight over the read (256 x 0.1 s of answers over the read's span: at 64 in flight about
    50, with the lock-step of earlier versions about 15)."""
    d = dict(arrays)["v3_many"]
    srv.configure(delay=0.1)
    try:
        with zc.Array.open(f"{srv.url}/arrays/v3_many") as a:
            srv.reset_counts()
            assert a.read() == d.tobytes()
        assert srv.requests == 256, srv.requests
        assert 48 <= srv.max_in_flight <= 65, f"max in flight {srv.max_in_flight}"
        rounds = 256 / srv.mean_in_flight
        assert rounds <= 10, f"{srv.mean_in_flight:.1f} in flight on average: {rounds:.1f} round trips (floor 4)"
    finally:
        srv.configure()


def t_flaky_server_retries(r, srv, arrays):
    srv.configure(fail_rate=0.3)
    try:
        srv.reset_counts()
        opts = zc.StoreOptions(retries=10, timeout_ms=5000)
        for name, d in arrays:
            with zc.Array.open(f"{srv.url}/arrays/{name}", options=opts) as a:
                assert a.read() == d.tobytes(), name
        assert srv.faults > 5, f"only {srv.faults} faults injected"
    finally:
        srv.configure()


def t_slow_and_dropping_server(r, srv, arrays):
    """One request in ten answered only after 2 s, or connections dropped: reads complete with the
    right values (a slow answer within the request timeout is waited for, one past it is retried);
    a server dropping every connection gives ZARR_ERR_IO naming the URL after the retries. No hang:
    every read is bounded far below what a hang would take."""
    d = dict(arrays)["v3_plain"]  # 30 chunks
    srv.configure(delay=0.02, slow_rate=0.1, slow=2.0)
    try:
        srv.reset_counts()
        t0 = time.monotonic()
        for opts in (zc.StoreOptions(), zc.StoreOptions(timeout_ms=1000, retries=5), zc.StoreOptions(timeout_ms=1000, retries=5)):
            with zc.Array.open(f"{srv.url}/arrays/v3_plain", options=opts) as a:
                assert a.read() == d.tobytes(), "read through slow answers differs"
        assert srv.slowed >= 1, "no slow answer was injected"
        assert time.monotonic() - t0 < 60
    finally:
        srv.configure()
    srv.configure(delay=0.02, fail_rate=0.2, fail_kinds=("drop",))
    try:
        srv.reset_counts()
        with zc.Array.open(f"{srv.url}/arrays/v3_plain", options=zc.StoreOptions(retries=10)) as a:
            assert a.read() == d.tobytes(), "read through dropped connections differs"
        assert srv.faults >= 1, "no connection was dropped"
    finally:
        srv.configure()
    with zc.Array.open(f"{srv.url}/arrays/v3_plain", options=zc.StoreOptions(retries=2, timeout_ms=2000)) as a:
        srv.configure(fail_rate=1.0, fail_kinds=("drop",))
        try:
            srv.reset_counts()
            t0 = time.monotonic()
            a.read()
            raise AssertionError("read succeeded against a server dropping every connection")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_IO" and "/arrays/v3_plain/c/" in e.message, e
            # 3 tries of the failing chunk (the others may stop early when the read fails).
            assert srv.requests >= 3, srv.requests
            assert time.monotonic() - t0 < 30
        finally:
            srv.configure()


def t_failing_server_is_io_error(r, srv, arrays):
    srv.configure(fail_rate=1.0, fail_kinds=(503,))
    try:
        t0 = time.monotonic()
        try:
            zc.Array.open(f"{srv.url}/arrays/v3_plain", options=zc.StoreOptions(retries=2, timeout_ms=2000))
            raise AssertionError("open succeeded against a server answering 503")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_IO", e
            assert "arrays/v3_plain/zarr.json" in e.message and "503" in e.message, e.message
        assert time.monotonic() - t0 < 20
    finally:
        srv.configure()


def t_stalled_server_times_out(r, srv, arrays):
    srv.configure(stall=30)
    try:
        t0 = time.monotonic()
        try:
            zc.Array.open(f"{srv.url}/arrays/v3_plain", options=zc.StoreOptions(retries=1, timeout_ms=700))
            raise AssertionError("open succeeded against a stalled server")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_IO", e
        dt = time.monotonic() - t0
        # 2 tries of 0.7 s plus backoff; far from the 30 s stall.
        assert dt < 10, f"took {dt:.1f} s"
    finally:
        srv.configure()


def t_read_only_and_no_listing(r, srv, arrays):
    with zc.Array.open(f"{srv.url}/arrays/v3_plain", zc.READ_WRITE) as a:
        try:
            a.write(b"\0" * 16, [0, 0], [2, 2])
            raise AssertionError("write over HTTP succeeded")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_READ_ONLY", e
    meta = json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "bytes"}]})
    # Creating fails at once, without a request: on the live server (which counts none) and on a
    # closed port (where a request would give ZARR_ERR_IO).
    closed = f"http://127.0.0.1:{free_port()}"
    for base in (srv.url, closed):
        srv.reset_counts()
        with zc.Spec("uint8", (4,), chunks=(4,)) as spec:
            for what, create in [
                ("array", lambda: zc.Array.create(f"{base}/arrays/new", meta)),
                ("array with options", lambda: zc.Array.create(f"{base}/arrays/new", meta, options=zc.StoreOptions(retries=0))),
                ("array from spec", lambda: spec.create(f"{base}/arrays/new")),
                ("array from spec with options", lambda: spec.create(f"{base}/arrays/new", options=zc.StoreOptions(retries=0))),
                ("group", lambda: zc.Group.create(f"{base}/grp")),
            ]:
                try:
                    create()
                    raise AssertionError(f"{what} created over HTTP")
                except zc.ZarrError as e:
                    assert e.name == "ZARR_ERR_READ_ONLY", (what, base, e)
        assert srv.requests == 0, f"{srv.requests} requests sent by create calls"
    try:
        zc.Array.open(f"{closed}/arrays/new", options=zc.StoreOptions(retries=0))
        raise AssertionError("opened through a closed port")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_IO", e
    with zc.Group.open(f"{srv.url}/arrays") as g:
        try:
            g.children()
            raise AssertionError("listing over plain HTTP succeeded")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_UNSUPPORTED", e
    # Missing array: NOT_FOUND, not IO.
    try:
        zc.Array.open(f"{srv.url}/arrays/nothing_here")
        raise AssertionError("opened a missing array")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_NOT_FOUND", e


def make_consolidated(root):
    """A consolidated hierarchy per format written by zarr-python: {format: {child path: data}}."""
    rng = np.random.default_rng(11)
    out = {}
    for fmt in (3, 2):
        g = zarr.create_group(store=str(root / f"cons_v{fmt}"), zarr_format=fmt, attributes={"fmt": fmt})
        sub = g.create_group("sub")
        data = {"a": rng.integers(0, 60000, (40, 30), dtype="<u2"), "sub/b": rng.standard_normal((25,))}
        g.create_array("a", shape=data["a"].shape, dtype=data["a"].dtype, chunks=(16, 16))[...] = data["a"]
        sub.create_array("b", shape=data["sub/b"].shape, dtype=data["sub/b"].dtype, chunks=(10,))[...] = data["sub/b"]
        zarr.consolidate_metadata(str(root / f"cons_v{fmt}"), zarr_format=fmt)
        out[fmt] = data
    return out


# Every answer is delayed by DELAY in the round-trip counts: requests that begin more than GAP apart
# were sent after an answer (a new round trip), those sent together begin within a few ms.
DELAY, GAP = 0.25, 0.12


def t_open_round_trips(r, srv, arrays, hierarchies):
    """Opening costs one round trip, counted on the server (requests and their waves), for arrays and
    groups of either format written by zarr-python: without a known format zarr.json and the v2
    documents (a group's .zmetadata too) go out together; through an open group its format's
    documents (v3: zarr.json alone). What the handles read equals zarr-python's values."""
    d2 = dict(arrays)["v2_blosc"]
    d3 = dict(arrays)["v3_plain"]
    srv.configure(delay=DELAY)
    try:
        for name, d, want in (("v2_blosc", d2, 3), ("v3_plain", d3, 3)):
            srv.reset_counts()
            with zc.Array.open(f"{srv.url}/arrays/{name}") as a:
                assert (srv.requests, srv.round_trips(GAP)) == (want, 1), \
                    f"{name}: opening took {srv.requests} requests in {srv.round_trips(GAP)} round trips"
                srv.configure()
                assert a.read() == d.tobytes(), name
                srv.configure(delay=DELAY)
        # Through the (v3, not consolidated) group "arrays": zarr.json alone.
        with zc.Group.open(f"{srv.url}/arrays") as g:
            srv.reset_counts()
            with g.open_array("v3_plain") as a:
                assert (srv.requests, srv.round_trips(GAP)) == (1, 1), (srv.requests, srv.round_trips(GAP))
                srv.configure()
                assert a.read() == d3.tobytes()
                srv.configure(delay=DELAY)
            # A v2 array below a v3 group: zarr.json, then .zarray and .zattrs (2 round trips).
            srv.reset_counts()
            with g.open_array("v2_blosc") as a:
                assert (srv.requests, srv.round_trips(GAP)) == (3, 2), (srv.requests, srv.round_trips(GAP))
        # A consolidated v2 group, its sub-group and arrays: one round trip in all.
        for fmt in (2, 3):
            srv.reset_counts()
            t0 = time.monotonic()
            with zc.Group.open(f"{srv.url}/cons_v{fmt}") as g, g.open_group("sub") as sub, \
                    sub.open_array("b") as b, g.open_array("a") as a:
                dt = time.monotonic() - t0
                assert (srv.requests, srv.round_trips(GAP)) == (4, 1), \
                    f"v{fmt}: {srv.requests} requests in {srv.round_trips(GAP)} round trips"
                assert dt < 3 * DELAY, f"v{fmt}: opening took {dt:.2f} s, a round trip is {DELAY} s"
                srv.configure()
                for path, arr in (("a", a), ("sub/b", b)):
                    want = zarr.open_array(store=str(srv.root / f"cons_v{fmt}" / path), mode="r")[...]
                    got = np.frombuffer(arr.read(), dtype=want.dtype).reshape(want.shape)
                    np.testing.assert_array_equal(got, want)
                srv.configure(delay=DELAY)
        # A v2 group without .zmetadata (the v2 arrays' parent is v3; make one): still one round trip.
        plain = srv.root / "plain_v2"
        if not plain.exists():
            zarr.create_group(store=str(plain), zarr_format=2).create_array("x", shape=(4,), dtype="u1", chunks=(4,))
        srv.reset_counts()
        with zc.Group.open(f"{srv.url}/plain_v2") as g:
            assert (srv.requests, srv.round_trips(GAP)) == (4, 1), (srv.requests, srv.round_trips(GAP))
            # Its child through it: zarr.json, .zarray, .zattrs together.
            srv.reset_counts()
            with g.open_array("x") as x:
                assert (srv.requests, srv.round_trips(GAP)) == (3, 1), (srv.requests, srv.round_trips(GAP))
    finally:
        srv.configure()


def t_consolidated_children(r, srv, hierarchies):
    """A group with consolidated metadata opens its children (arrays and sub-groups, at any depth) and
    lists them without a request: opening costs the group's own documents only; reading an array then
    costs its chunk GETs alone. Values as zarr-python reads them."""
    for fmt, data in hierarchies.items():
        srv.reset_counts()
        srv.configure(delay=DELAY)  # so that requests sent together overlap at the server
        try:
            g = zc.Group.open(f"{srv.url}/cons_v{fmt}")
        finally:
            srv.configure()
        with g:
            # zarr.json, .zgroup, .zattrs and .zmetadata, all in one round trip, for either format.
            opened = srv.requests
            assert opened == 4, f"v{fmt}: opening the group took {opened} requests"
            assert srv.round_trips(GAP) == 1 and srv.max_in_flight == 4, \
                f"v{fmt}: {srv.round_trips(GAP)} round trips, {srv.max_in_flight} in flight"
            assert g.children() == {"a": "array", "sub": "group"}, g.children()
            assert srv.requests == opened, f"v{fmt}: listing sent {srv.requests - opened} requests"
            for path, d in data.items():
                srv.reset_counts()
                with g.open_array(path) as a:
                    assert srv.requests == 0, f"v{fmt} {path}: opening sent {srv.requests} requests"
                    got = np.frombuffer(a.read(), dtype=d.dtype).reshape(d.shape)
                want = zarr.open_array(store=str(srv.root / f"cons_v{fmt}" / path), mode="r")[...]
                np.testing.assert_array_equal(want, d)
                np.testing.assert_array_equal(got, d)
                n_chunks = int(np.prod([-(-s // c) for s, c in zip(d.shape, (16, 16) if path == "a" else (10,))]))
                assert srv.requests == n_chunks, f"v{fmt} {path}: {srv.requests} requests for {n_chunks} chunks"
            srv.reset_counts()
            with g.open_group("sub") as sub:
                assert srv.requests == 0, f"v{fmt}: opening sub sent {srv.requests} requests"
                assert sub.children() == {"b": "array"}, sub.children()
                with sub.open_array("b") as b:
                    assert srv.requests == 0, f"v{fmt}: sub/b through sub sent {srv.requests} requests"
                    assert b.read() == data["sub/b"].tobytes()


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    with tempfile.TemporaryDirectory(prefix="zarr-remote-http-") as tmp:
        root = Path(tmp)
        (root / "arrays").mkdir()
        zarr.create_group(store=str(root / "arrays"), zarr_format=3)
        arrays = make_arrays(root / "arrays")
        hierarchies = make_consolidated(root)
        (root / "fixtures").symlink_to(FIXTURES)
        r = harness.Runner(root, args.verbose, args.k)
        t0 = time.monotonic()
        with RangeHTTPServer(root) as srv:
            # Fixtures are served from the symlinked committed tree.
            class Fx:
                url = f"{srv.url}/fixtures"
            r.run("fixtures_over_http", t_fixtures, r, Fx)
            r.run("zarr_python_arrays", t_zarr_python_arrays, r, srv, arrays)
            r.run("sharded_reads_are_ranges", t_sharded_ranges, r, srv, arrays)
            r.run("uncompressed_chunk_ranges", t_uncompressed_chunk_ranges, r, srv, arrays)
            r.run("shard_index_kept_and_revalidated", t_shard_index_kept_and_revalidated, r, srv, arrays)
            r.run("concurrent_chunk_requests", t_concurrency, r, srv, arrays)
            r.run("requests_in_flight", t_requests_in_flight, r, srv, arrays)
            r.run("flaky_server_retried", t_flaky_server_retries, r, srv, arrays)
            r.run("slow_and_dropping_server", t_slow_and_dropping_server, r, srv, arrays)
            r.run("failing_server_io_error", t_failing_server_is_io_error, r, srv, arrays)
            r.run("stalled_server_times_out", t_stalled_server_times_out, r, srv, arrays)
            r.run("read_only_and_no_listing", t_read_only_and_no_listing, r, srv, arrays)
            r.run("consolidated_children_without_requests", t_consolidated_children, r, srv, hierarchies)
            r.run("open_in_one_round_trip", t_open_round_trips, r, srv, arrays, hierarchies)
        print(f"{r.passed} passed, {len(r.failed)} failed ({time.monotonic() - t0:.1f} s)")
        sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
