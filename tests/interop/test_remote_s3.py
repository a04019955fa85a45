"""Remote arrays on S3 (s3://bucket/prefix) against moto's S3 server on loopback (started and stopped
here), compared with zarr-python 3.1.6 talking to the same server through obstore:

- zarr-python writes (v3 unsharded, v3 sharded, v2) and libzarr reads byte-exact, whole and in regions,
  with the settings from the AWS_* environment and with explicit store options (endpoint,
  credentials, region, path_style) when the environment has none;
- libzarr writes (groups and arrays, v3 sharded with partial shard updates, v2, a value large enough
  for a multipart upload, a 12 MiB shard uploaded in three 5 MiB parts, checked with boto3 too) and
  zarr-python reads byte-exact; the stored keys are the expected ones;
- group children are listed from S3; deleting chunks (all fill value) removes the objects;
- concurrent writers: several processes (each with its own libzarr) write disjoint elements of the same
  shard at once; with conditional PUTs (the default) zarr-python finds every update, with
  `conditional_put=false` (plain PUTs: last writer wins) updates are lost, which shows the test sees
  races; an array created with zarr_create_from_spec_with_options (endpoint and credentials given as
  options) is written by libzarr and read by zarr-python;
- a server that cannot be reached is ZARR_ERR_IO within the time limit;
- on a counting S3 server (the tests' RangeHTTPServer): a write of 16 whole chunks is 16 PUTs in flight
  at once and no other request; a partial write of 8 chunks reads and PUTs those 8.
"""

import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import zarr  # noqa: E402

import harness  # noqa: E402
import zarr_ctypes as zc  # noqa: E402
from remote_servers import MotoServer, RangeHTTPServer, free_port  # noqa: E402


def zp_store(s3, prefix, read_only=False):
    """zarr-python's view of s3://bucket/prefix (obstore's S3 client)."""
    return s3.zarr_python_store(prefix, read_only)


def t_zarr_python_writes(r, s3):
    rng = np.random.default_rng(3)
    cases = [
        ("zp/v3_plain", rng.standard_normal((70, 90)).astype("<f8"), dict(chunks=(16, 32), zarr_format=3)),
        ("zp/v3_sharded", rng.integers(-9999, 9999, (64, 64), dtype="<i4"),
         dict(chunks=(8, 16), shards=(32, 32), zarr_format=3)),
        ("zp/v3_sharded_raw", rng.integers(0, 60000, (30, 40), dtype="<u2"),
         dict(chunks=(5, 10), shards=(15, 20), compressors=None, zarr_format=3)),
        ("zp/v2_blosc", rng.integers(0, 100, (33, 44, 5), dtype="<i8"), dict(chunks=(10, 10, 5), zarr_format=2)),
    ]
    for prefix, d, kw in cases:
        zarr.create_array(store=zp_store(s3, prefix), data=d, **kw)
    for prefix, d, kw in cases:
        with zc.Array.open(f"s3://{s3.bucket}/{prefix}") as a:
            assert a.shape == list(d.shape)
            assert a.read() == d.tobytes(), f"{prefix}: whole read differs"
            start = [s // 4 for s in d.shape]
            count = [max(s // 3, 1) for s in d.shape]
            sl = tuple(slice(s, s + c) for s, c in zip(start, count))
            assert a.read(start, count) == np.ascontiguousarray(d[sl]).tobytes(), f"{prefix}: region differs"


def t_explicit_options(r, s3):
    d = np.arange(1000, dtype="<u4").reshape(20, 50)
    zarr.create_array(store=zp_store(s3, "opt/a"), data=d, chunks=(7, 11), zarr_format=3)
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("AWS_")}
    try:
        # Without settings there is no endpoint: the request goes nowhere near moto.
        opts = zc.StoreOptions(json=json.dumps({"endpoint": s3.endpoint, "region": "us-east-1",
                                                "access_key_id": "testing", "secret_access_key": "testing",
                                                "path_style": True, "retries": 1, "timeout_ms": 5000}))
        with zc.Array.open(f"s3://{s3.bucket}/opt/a", options=opts) as a:
            assert a.read() == d.tobytes()
        # Anonymous (unsigned) requests, once the bucket is public-read.
        s3.client().put_bucket_policy(Bucket=s3.bucket, Policy=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                                                    "Resource": f"arn:aws:s3:::{s3.bucket}/opt/*"}]}))
        anon = zc.StoreOptions(endpoint=s3.endpoint, anonymous=True)
        with zc.Array.open(f"s3://{s3.bucket}/opt/a", options=anon) as a:
            assert a.read([3, 4], [5, 6]) == np.ascontiguousarray(d[3:8, 4:10]).tobytes()
        # Options are checked.
        try:
            zc.StoreOptions(endpoint_url="x")
            raise AssertionError("unknown option accepted")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_INVALID_ARGUMENT", e
    finally:
        os.environ.update(saved)


def t_libzarr_writes(r, s3):
    rng = np.random.default_rng(11)
    base = f"s3://{s3.bucket}/lib"
    with zc.Group.create(base, '{"title": "remote"}') as g:
        pass
    d = rng.integers(-2**31, 2**31 - 1, (48, 40), dtype="<i4")
    with zc.Spec("int32", d.shape, chunks=(8, 10), shards=(16, 20), compressor="zstd") as spec, \
            spec.create(f"{base}/sharded") as a:
        a.write(d.tobytes())
        # Partial shard update: read-modify-write of touched inner chunks.
        patch = np.full((5, 7), 42, dtype="<i4")
        a.write(patch.tobytes(), [13, 17], [5, 7])
        d[13:18, 17:24] = 42
    v2 = rng.standard_normal((25, 30)).astype("<f4")
    with zc.Group.create(f"{base}/v2group", zarr_format=2):
        pass
    with zc.Spec("float32", v2.shape, chunks=(10, 10), compressor="blosc-lz4", zarr_format=2) as spec2, \
            spec2.create(f"{base}/v2group/arr") as a:
        a.write(v2.tobytes())
    g = zarr.open_group(store=zp_store(s3, "lib", read_only=True), mode="r")
    assert g.attrs["title"] == "remote"
    np.testing.assert_array_equal(g["sharded"][...], d)
    np.testing.assert_array_equal(zarr.open_array(store=zp_store(s3, "lib/v2group/arr", True), mode="r")[...], v2)
    keys = s3.keys("lib/sharded/")
    assert keys == sorted(["lib/sharded/zarr.json"] + [f"lib/sharded/c/{i}/{j}" for i in range(3) for j in range(2)]), keys
    with zc.Group.open(base) as g2:
        kids = g2.children()
    assert kids == {"sharded": "array", "v2group": "group"}, kids


def t_fill_chunks_deleted(r, s3):
    meta = {"zarr_format": 3, "node_type": "array", "shape": [8, 8], "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}
    loc = f"s3://{s3.bucket}/fill"
    with zc.Array.create(loc, json.dumps(meta)) as a:
        a.write(bytes(range(1, 65)))
        assert len(s3.keys("fill/c/")) == 4
        a.write(bytes(16), [0, 0], [4, 4])
        assert s3.keys("fill/c/") == ["fill/c/0/1", "fill/c/1/0", "fill/c/1/1"], s3.keys("fill/c/")
    np.testing.assert_array_equal(
        zarr.open_array(store=zp_store(s3, "fill", True), mode="r")[...],
        np.array(bytearray(bytes(range(1, 65))), dtype="u1").reshape(8, 8) * np.kron(
            np.array([[0, 1], [1, 1]], dtype="u1"), np.ones((4, 4), dtype="u1")))


def t_multipart(r, s3):
    # One uncompressed 6 MiB chunk, with the multipart threshold at its minimum (5 MiB).
    d = np.random.default_rng(5).integers(0, 2**63, (786432,), dtype="<u8")
    meta = {"zarr_format": 3, "node_type": "array", "shape": [d.size], "data_type": "uint64",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [d.size]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}
    opts = zc.StoreOptions(multipart_threshold=5 << 20)
    with zc.Array.create(f"s3://{s3.bucket}/big", json.dumps(meta), options=opts) as a:
        a.write(d.tobytes())
    head = s3.client().head_object(Bucket=s3.bucket, Key="big/c/0")
    assert head["ContentLength"] == d.nbytes
    assert "-" in head["ETag"], f"not a multipart upload: ETag {head['ETag']}"
    np.testing.assert_array_equal(zarr.open_array(store=zp_store(s3, "big", True), mode="r")[...], d)


def t_multipart_shard(r, s3):
    # One 12.2 MiB shard (16 uncompressed inner chunks), in 5 MiB parts: 3 parts, sent in parallel.
    n, inner = 1_600_000, 100_000
    d = np.random.default_rng(6).integers(0, 2**63, (n,), dtype="<u8")
    meta = {"zarr_format": 3, "node_type": "array", "shape": [n], "data_type": "uint64",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [n]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [inner], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                "index_location": "end"}}]}
    opts = zc.StoreOptions(multipart_threshold=5 << 20, multipart_part_size=5 << 20)
    with zc.Array.create(f"s3://{s3.bucket}/bigshard", json.dumps(meta), options=opts) as a:
        a.write(d.tobytes())
    head = s3.client().head_object(Bucket=s3.bucket, Key="bigshard/c/0")
    size = d.nbytes + 16 * (n // inner) + 4
    assert head["ContentLength"] == size, (head["ContentLength"], size)
    assert head["ETag"].strip('"').endswith("-3"), f"not a 3-part upload: ETag {head['ETag']}"
    # boto3's bytes: the index at the end locates each inner chunk, whose bytes are the data's.
    body = s3.client().get_object(Bucket=s3.bucket, Key="bigshard/c/0")["Body"].read()
    assert len(body) == size
    index = np.frombuffer(body[-(16 * (n // inner) + 4):-4], dtype="<u8").reshape(-1, 2)
    for i, (off, nbytes) in enumerate(index):
        assert nbytes == inner * 8, (i, nbytes)
        assert body[off:off + nbytes] == d[i * inner:(i + 1) * inner].tobytes(), f"inner chunk {i} differs"
    np.testing.assert_array_equal(zarr.open_array(store=zp_store(s3, "bigshard", True), mode="r")[...], d)


def t_write_requests(r, tmp):
    """Counted on a path-style S3 server that answers every request after 50 ms (the tests'
    RangeHTTPServer, writable): a write of 16 whole chunks is 16 PUTs, all in flight at once, and no
    other request (no re-read of zarr.json: a store without locks skips the stale-shape check); a write
    covering part of 8 chunks GETs those 8 (with their ETags) and PUTs them (conditionally).
    zarr-python reads the result from the server's directory."""
    d = np.arange(64 * 64, dtype="<u2").reshape(64, 64)
    with RangeHTTPServer(tmp, writable=True) as srv:
        opts = zc.StoreOptions(endpoint=srv.url, anonymous=True, path_style=True, allow_http=True)
        with zc.Spec("uint16", d.shape, chunks=(16, 16), compressor="zstd") as spec, \
                spec.create("s3://bkt/counted", options=opts) as a:
            srv.configure(delay=0.05)
            srv.reset_counts()
            a.write(d.tobytes())
            assert srv.by_method == {"PUT": 16}, srv.by_method
            assert srv.max_in_flight == 16, f"{srv.max_in_flight} PUTs in flight, not 16"
            srv.reset_counts()
            a.write(np.full((2, 64), 9, dtype="<u2").tobytes(), [15, 0], [2, 64])
            d[15:17, :] = 9
            assert srv.by_method == {"GET": 8, "PUT": 8}, srv.by_method
            srv.configure()
    np.testing.assert_array_equal(zarr.open_array(store=str(Path(tmp) / "bkt" / "counted"), mode="r")[...], d)


WRITERS, ROUNDS = 4, 24


def _shard_writer(loc, conditional, proc, barrier, out):
    """One writer process: its own libzarr; writes element (proc, k) of the shard, k = 0..ROUNDS-1, one
    call each (a read-modify-write of inner chunk `proc`), all writers starting at once."""
    try:
        harness.load_library()
        opts = zc.StoreOptions(conditional_put=conditional)
        with zc.Array.open(loc, zc.READ_WRITE, options=opts) as a:
            barrier.wait(60)
            for k in range(ROUNDS):
                a.write(np.array([proc * 1000 + k + 1], dtype="<i4").tobytes(), [proc, k], [1, 1])
        out.put((proc, "ok"))
    except Exception as e:  # noqa: BLE001 - reported to the parent
        out.put((proc, f"{type(e).__name__}: {e}"))


def _concurrent_run(s3, prefix, conditional):
    """Runs WRITERS processes on one shard; the number of updates zarr-python does not find."""
    loc = f"s3://{s3.bucket}/{prefix}"
    # One shard of WRITERS x ROUNDS, inner chunks of one row: writer p owns inner chunk p.
    with zc.Spec("int32", (WRITERS, ROUNDS), chunks=(1, ROUNDS), shards=(WRITERS, ROUNDS), compressor="zstd") as spec, \
            spec.create(loc):
        pass
    ctx = multiprocessing.get_context("spawn")  # a forked child would inherit the parent's runtime threads
    barrier, out = ctx.Barrier(WRITERS), ctx.Queue()
    procs = [ctx.Process(target=_shard_writer, args=(loc, conditional, p, barrier, out)) for p in range(WRITERS)]
    for p in procs:
        p.start()
    results = dict(out.get(timeout=300) for _ in procs)
    for p in procs:
        p.join(60)
    assert all(v == "ok" for v in results.values()), results
    assert s3.keys(f"{prefix}/c/") == [f"{prefix}/c/0/0"], s3.keys(f"{prefix}/c/")
    got = zarr.open_array(store=zp_store(s3, prefix, True), mode="r")[...]
    want = np.arange(WRITERS)[:, None] * 1000 + np.arange(ROUNDS)[None, :] + 1
    return int((got != want).sum())


def t_concurrent_shard_writers(r, s3):
    lost = _concurrent_run(s3, "race/conditional", True)
    assert lost == 0, f"{lost} of {WRITERS * ROUNDS} updates lost with conditional PUTs"
    # The same with plain PUTs loses updates: the race is real and the test would see it.
    lost_plain = _concurrent_run(s3, "race/plain", False)
    if r.verbose:
        print(f"  plain PUTs: {lost_plain} of {WRITERS * ROUNDS} updates lost")
    assert lost_plain > 0, "no update lost without conditional PUTs: the writers did not race"


def t_spec_with_options(r, s3):
    d = np.arange(600, dtype="<u2").reshape(20, 30)
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("AWS_")}
    try:
        opts = zc.StoreOptions(endpoint=s3.endpoint, region="us-east-1", access_key_id="testing",
                               secret_access_key="testing", path_style=True)
        with zc.Spec("uint16", d.shape, chunks=(8, 8), shards=(16, 16), compressor="zstd") as spec, \
                spec.create(f"s3://{s3.bucket}/specopt", options=opts) as a:
            a.write(d.tobytes())
            a.write(np.full((3, 4), 7, dtype="<u2").tobytes(), [5, 6], [3, 4])
            d[5:8, 6:10] = 7
    finally:
        os.environ.update(saved)
    np.testing.assert_array_equal(zarr.open_array(store=zp_store(s3, "specopt", True), mode="r")[...], d)


def t_unreachable(r, s3):
    port = free_port()
    t0 = time.monotonic()
    try:
        zc.Array.open(f"s3://{s3.bucket}/zp/v3_plain",
                      options=zc.StoreOptions(endpoint=f"http://127.0.0.1:{port}", retries=2, timeout_ms=1000))
        raise AssertionError("opened through a closed port")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_IO", e
        assert f"s3://{s3.bucket}/zp/v3_plain/zarr.json" in e.message, e.message
    assert time.monotonic() - t0 < 20


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    import tempfile

    with tempfile.TemporaryDirectory(prefix="zarr-remote-s3-") as tmp:
        r = harness.Runner(Path(tmp), args.verbose, args.k)
        t0 = time.monotonic()
        r.run("write_requests_counted", t_write_requests, r, tmp)
        with MotoServer() as s3:
            r.run("zarr_python_writes_libzarr_reads", t_zarr_python_writes, r, s3)
            r.run("explicit_options_and_anonymous", t_explicit_options, r, s3)
            r.run("libzarr_writes_zarr_python_reads", t_libzarr_writes, r, s3)
            r.run("fill_chunks_deleted", t_fill_chunks_deleted, r, s3)
            r.run("multipart_upload", t_multipart, r, s3)
            r.run("multipart_upload_of_a_shard", t_multipart_shard, r, s3)
            r.run("concurrent_writers_of_one_shard", t_concurrent_shard_writers, r, s3)
            r.run("create_from_spec_with_options", t_spec_with_options, r, s3)
            r.run("unreachable_endpoint_io_error", t_unreachable, r, s3)
        print(f"{r.passed} passed, {len(r.failed)} failed ({time.monotonic() - t0:.1f} s)")
        sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
