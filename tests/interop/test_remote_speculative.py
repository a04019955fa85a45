"""Speculative shard reads over HTTP (remote_servers.RangeHTTPServer, which counts every request and
the size of every answer), on sharded arrays written by zarr-python 3.1.6 with the index at the end
and at the start, shards of 64 and of 1024 inner chunks:

- a window of 1, 4 or 16 inner chunks, read right after opening, is one round trip (the index and the
  inner chunks together): for the first handle of an array one request (a suffix range, or a prefix
  for an index at the start) whose answer holds everything, a shard smaller than the range asked for
  arriving whole; for later handles (which share what the earlier ones learned) the index request and
  ranges where the needed inner chunks lie, sent together, at most twice the bytes needed; the values
  equal zarr-python's; the next read of the shard is one request (the index kept);
- a handle that read one shard reads a window of another in one round trip, at most twice the bytes
  needed;
- `speculative_read_max` bounds every first answer to the index plus that many bytes: a window the
  bound cannot reach is the index alone, then one wave for the inner chunks; a window next to the
  index is still one request, and after the first shard the layout learned from its index sizes the
  range for the next shard; `speculative_read_max=0` asks for the index alone;
- the estimate is learned: the same read is one request against a server answering after 300 ms and
  two against one answering at once (the bandwidth fixed by `bandwidth_bytes_per_s`, the latency
  learned from the requests that opened the array);
- a server that ignores suffix ranges (answering 200 with the whole file) still gives the right
  values: the handle then asks for the size (HEAD) and a bounded range, and sends no suffix range
  again.
"""

import struct
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import zarr  # noqa: E402
from zarr.codecs import BytesCodec, ShardingCodec, ZstdCodec  # noqa: E402

import harness  # noqa: E402
import zarr_ctypes as zc  # noqa: E402
from remote_servers import RangeHTTPServer  # noqa: E402

# name: (shape, shard shape, inner chunk shape, index location)
ARRAYS = {
    "s64_end": ((256, 256), (128, 128), (16, 16), "end"),
    "s64_start": ((256, 256), (128, 128), (16, 16), "start"),
    "s1024_end": ((1024, 2048), (1024, 1024), (32, 32), "end"),
    "s1024_start": ((1024, 2048), (1024, 1024), (32, 32), "start"),
}
# Fixed estimates: 100 ms x 100 MB/s, so the bound (8 MiB by default) decides.
FIXED = dict(latency_ms=100, bandwidth_bytes_per_s=100_000_000)


def make_arrays(root):
    rng = np.random.default_rng(37)
    out = {}
    for name, (shape, shard, inner, loc) in ARRAYS.items():
        y, x = np.mgrid[0:shape[0], 0:shape[1]]
        d = (2000 + 1000 * np.sin(y / 37.0) * np.cos(x / 53.0) + rng.integers(0, 64, shape)).astype("<u2")
        a = zarr.create_array(store=str(root / name), shape=shape, dtype="<u2", chunks=shard,
                              serializer=ShardingCodec(chunk_shape=inner, codecs=[BytesCodec(), ZstdCodec()],
                                                       index_location=loc), compressors=None)
        a[...] = d
        out[name] = d
    return out


def index_len(name):
    shape, shard, inner, _ = ARRAYS[name]
    return int(np.prod([s // i for s, i in zip(shard, inner)])) * 16 + 4


def entries(root, name, key="c/0/0"):
    """The (offset, nbytes) pairs of a shard's index, read from the file."""
    shape, shard, inner, loc = ARRAYS[name]
    data = (root / name / key).read_bytes()
    n = index_len(name)
    raw = data[-n:] if loc == "end" else data[:n]
    return [struct.unpack_from("<QQ", raw, 16 * i) for i in range((n - 4) // 16)]


def windows(name):
    """(label, start, count) windows of 1, 4 and 16 inner chunks in the first shard."""
    _, shard, inner, _ = ARRAYS[name]
    out = []
    for k in (1, 2, 4):  # 1, 4, 16 inner chunks
        for where in ("first", "middle", "last"):
            pos = {"first": [0, 0], "middle": [s // 2 for s in shard], "last": [s - k * i for s, i in zip(shard, inner)]}
            start = [p // i * i + 3 for p, i in zip(pos[where], inner)]
            count = [k * i - 6 for i in inner]
            out.append((f"{k * k} chunks {where}", start, count))
    return out


def read(a, start, count):
    return a.read(start, count)


def want(root, name, start, count):
    z = zarr.open_array(store=str(root / name), mode="r")
    return np.ascontiguousarray(z[tuple(slice(s, s + c) for s, c in zip(start, count))]).tobytes()


def needed(root, name, start, count):
    """The bytes a read of the window (inside one shard) needs from the shard: its index and the
    stored inner chunks."""
    _, shard, inner, _ = ARRAYS[name]
    per = [s // i for s, i in zip(shard, inner)]
    key = "c/" + "/".join(str(s // h) for s, h in zip(start, shard))
    start = [s % h for s, h in zip(start, shard)]
    ent = entries(root, name, key)
    total = index_len(name)
    for r in range(start[0] // inner[0], (start[0] + count[0] - 1) // inner[0] + 1):
        for c in range(start[1] // inner[1], (start[1] + count[1] - 1) // inner[1] + 1):
            off, n = ent[r * per[1] + c]
            if off != 2**64 - 1:
                total += n
    return total


# Every answer delayed by this much: requests sent together begin within a few ms, a request sent
# after an answer begins a new wave (round trip).
DELAY = 0.04


def t_windows_in_one_request(r, srv, root, data):
    """Each window read right after opening (a new handle): one round trip for the index and the data.
    The first window of an array in this process asks for one range (nothing learned: the range
    reaches the farthest needed inner chunk, at its decoded size, in C or Morton order, so a window at
    the far end of the shard brings it whole); every later one (handles of the same array share what
    the earlier ones learned) asks, in that one round trip, for the index and the ranges where the
    needed inner chunks are, at most twice the bytes the read needs."""
    n = 0
    srv.configure(delay=DELAY)
    try:
        for name in ARRAYS:
            shard_file = root / name / "c" / "0" / "0"
            size = shard_file.stat().st_size
            for i, (label, start, count) in enumerate(windows(name)):
                with zc.Array.open(f"{srv.url}/{name}", options=zc.StoreOptions(**FIXED)) as a:
                    srv.reset_counts()
                    assert read(a, start, count) == want(root, name, start, count), f"{name} {label}: values differ"
                    trips = srv.round_trips(DELAY / 2)
                    assert trips == 1, f"{name} {label}: {trips} round trips ({srv.requests} requests) for index + data"
                    assert srv.range_requests == srv.requests, (name, label, srv.by_method)
                    sent = sum(srv.sent_sizes)
                    if i == 0:
                        assert srv.requests == 1 and sent <= min(size, index_len(name) + (8 << 20)), (name, label, srv.sent_sizes)
                        far = "first" if ARRAYS[name][3] == "end" else "last"
                        if label.endswith(far):
                            assert srv.sent_sizes == [size], (name, label, srv.sent_sizes)
                    else:
                        need = needed(root, name, start, count)
                        assert sent <= 2 * need, f"{name} {label}: {sent} bytes sent for {need} needed ({srv.sent_sizes})"
                    # The index is kept: another window of the shard is one request (the data alone).
                    srv.reset_counts()
                    s2 = [s - 2 for s in start]
                    assert read(a, s2, count) == want(root, name, s2, count), f"{name} {label}: second read differs"
                    assert srv.requests == 1, f"{name} {label}: {srv.requests} requests for a kept index"
                    n += 1
    finally:
        srv.configure()
    assert n == 36, n


def t_other_shard_in_one_round_trip(r, srv, root, data):
    """A handle that read one shard reads a window of 1, 4 or 16 inner chunks of another shard in one
    round trip, at most twice the bytes needed: the inner chunks are expected where the first shard
    stored them (zarr-python writes every shard in the same order)."""
    srv.configure(delay=DELAY)
    try:
        for name in ARRAYS:
            shape, shard, inner, _ = ARRAYS[name]
            for label, start, count in windows(name):
                with zc.Array.open(f"{srv.url}/{name}", options=zc.StoreOptions(**FIXED)) as a:
                    assert read(a, start, count) == want(root, name, start, count)
                    s2 = [start[0], start[1] + shard[1]]
                    srv.reset_counts()
                    assert read(a, s2, count) == want(root, name, s2, count), f"{name} {label}"
                    trips = srv.round_trips(DELAY / 2)
                    need = needed(root, name, s2, count)
                    assert trips == 1 and sum(srv.sent_sizes) <= 2 * need, \
                        f"{name} {label} in c/0/1: {trips} round trips, {srv.sent_sizes} sent for {need} needed"
    finally:
        srv.configure()


def t_bounded(r, srv, root, data):
    """speculative_read_max bounds the first answer; windows it cannot reach cost one more wave."""
    for name in ("s1024_end", "s1024_start"):
        loc = ARRAYS[name][3]
        idx = index_len(name)
        ent = entries(root, name)
        bound = 16384
        opts = dict(FIXED, speculative_read_max=bound)
        near = [0, 0] if loc == "start" else [1024 - 32, 1024 - 32]    # stored next to the index
        far = [1024 - 32, 1024 - 32] if loc == "start" else [0, 0]     # stored farthest from it
        with zc.Array.open(f"{srv.url}/{name}", options=zc.StoreOptions(**opts)) as a:
            srv.reset_counts()
            assert read(a, near, [32, 32]) == want(root, name, near, [32, 32])
            assert srv.requests == 1, f"{name}: {srv.requests} requests for the inner chunk next to the index"
            # The index and one inner chunk at its decoded size (2 KiB): nothing is learned yet.
            assert idx < srv.sent_sizes[0] <= idx + 2048, (name, srv.sent_sizes)
        # A server of its own (a new URL: nothing learned about the array there yet).
        with RangeHTTPServer(root) as fresh, \
                zc.Array.open(f"{fresh.url}/{name}", options=zc.StoreOptions(**opts)) as a:
            fresh.reset_counts()
            assert read(a, far, [32, 32]) == want(root, name, far, [32, 32])
            lin = far[0] // 32 * 32 + far[1] // 32
            assert fresh.requests == 2 and fresh.sent_sizes[0] == idx, \
                f"{name}: out of reach: the index alone first, then the chunk; saw {fresh.sent_sizes}"
            assert fresh.sent_sizes[1] == ent[lin][1], (fresh.sent_sizes, ent[lin])
            # The next shard (c/0/1): the offsets learned from c/0/0 size its range to the chunk next
            # to the index: within twice the index and that chunk.
            fresh.reset_counts()
            s2 = [near[0], near[1] + 1024]
            assert read(a, s2, [32, 32]) == want(root, name, s2, [32, 32])
            e2 = entries(root, name, "c/0/1")
            assert fresh.requests == 1 and fresh.sent_sizes[0] <= idx + bound, fresh.sent_sizes
            nearest = min(e2, key=lambda e: e[0]) if loc == "start" else max(e2, key=lambda e: e[0])
            assert idx + nearest[1] <= fresh.sent_sizes[0] <= 2 * (idx + nearest[1]), \
                f"{name}: learned range {fresh.sent_sizes[0] - idx} bytes beyond the index for a {nearest[1]}-byte chunk"
            # The far window again, in a new handle of the array: now within reach of the bound (the
            # index, and beside it a range where c/0/0 stored the chunk), in one round trip.
            with zc.Array.open(f"{fresh.url}/{name}", options=zc.StoreOptions(**opts)) as b:
                fresh.reset_counts()
                assert read(b, far, [32, 32]) == want(root, name, far, [32, 32])
                assert fresh.requests == 2 and sorted(fresh.sent_sizes)[-1] == idx, fresh.sent_sizes
                assert ent[lin][1] <= sorted(fresh.sent_sizes)[0] <= bound, fresh.sent_sizes
                assert sum(fresh.sent_sizes) <= 2 * (idx + ent[lin][1]), fresh.sent_sizes
        # Off: the index alone, then the data, even next to the index.
        with zc.Array.open(f"{srv.url}/{name}", options=zc.StoreOptions(**dict(FIXED, speculative_read_max=0))) as a:
            srv.reset_counts()
            assert read(a, near, [32, 32]) == want(root, name, near, [32, 32])
            assert srv.requests == 2 and srv.sent_sizes[0] == idx, srv.sent_sizes
    # Every window of every array under a bound of 4 KiB: the first answer never passes it.
    for name in ARRAYS:
        for label, start, count in windows(name):
            with zc.Array.open(f"{srv.url}/{name}", options=zc.StoreOptions(**dict(FIXED, speculative_read_max=4096))) as a:
                srv.reset_counts()
                assert read(a, start, count) == want(root, name, start, count), f"{name} {label}"
                assert srv.sent_sizes[0] <= index_len(name) + 4096 and srv.requests <= 2, \
                    (name, label, srv.sent_sizes)


def t_learned_latency(r, srv, root, data):
    """The latency is learned from the requests that opened the array: the same read of a window far
    from the index (the whole 2 MiB-decoded shard in range) is one request at 300 ms, two at once
    (bandwidth fixed at 10 MB/s: 3 MB per round trip at 300 ms; an answer at once would have to take
    over 200 ms for the range to reach 2 MiB)."""
    name = "s1024_end"
    got = {}
    for delay in (0.3, 0.0):
        srv.configure(delay=delay)
        try:
            with zc.Array.open(f"{srv.url}/{name}", options=zc.StoreOptions(bandwidth_bytes_per_s=10_000_000)) as a:
                srv.reset_counts()
                assert read(a, [0, 0], [64, 64]) == want(root, name, [0, 0], [64, 64])
                got[delay] = srv.requests
        finally:
            srv.configure()
    assert got == {0.3: 1, 0.0: 2}, got


def t_no_suffix_fallback(r, srv, root, data):
    name = "s64_end"
    srv.configure(no_suffix=True)
    try:
        with zc.Array.open(f"{srv.url}/{name}", options=zc.StoreOptions(**FIXED)) as a:
            srv.reset_counts()
            assert read(a, [3, 3], [10, 10]) == want(root, name, [3, 3], [10, 10])
            assert srv.suffix_requests == 1, srv.suffix_requests
            assert srv.by_method.get("HEAD") == 1, srv.by_method
            # Another shard: no suffix range is tried again (HEAD, with the range where the inner
            # chunk is expected beside it, then the bounded range of the index).
            srv.reset_counts()
            assert read(a, [131, 131], [10, 10]) == want(root, name, [131, 131], [10, 10])
            assert srv.suffix_requests == 0 and srv.by_method == {"HEAD": 1, "GET": 2}, \
                (srv.suffix_requests, srv.by_method)
            # The whole array is right too.
            assert a.read() == data[name].tobytes()
    finally:
        srv.configure()


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    with tempfile.TemporaryDirectory(prefix="zarr-remote-spec-") as tmp:
        root = Path(tmp)
        data = make_arrays(root)
        r = harness.Runner(root, args.verbose, args.k)
        t0 = time.monotonic()
        # A server (a URL) of its own for each case: handles of an array share what the earlier ones
        # learned in this process, so each case starts with nothing learned.
        for label, case in (("windows_in_one_request", t_windows_in_one_request),
                            ("other_shard_in_one_round_trip", t_other_shard_in_one_round_trip),
                            ("bounded_by_speculative_read_max", t_bounded),
                            ("learned_latency_sizes_the_range", t_learned_latency),
                            ("server_without_suffix_ranges", t_no_suffix_fallback)):
            with RangeHTTPServer(root) as srv:
                r.run(label, case, r, srv, root, data)
        print(f"{r.passed} passed, {len(r.failed)} failed ({time.monotonic() - t0:.1f} s)")
        sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
