#!/usr/bin/env python3
"""Icechunk repositories on S3 (icechunk://s3://BUCKET/PREFIX, docs/icechunk.md) and virtual chunks
over HTTP and S3, against the Python `icechunk` package 2.3.0 (Python 3.12: the script re-runs itself
with $ZARR_PYTHON312), on moto's S3 server and the project's HTTP server, both on loopback.

libzarr is given the S3 settings as store options only (endpoint, region, access_key_id,
secret_access_key): the AWS_* variables are removed from the environment once moto runs.

  * Python writes a repository into moto (commits on main, a branch `dev`, a tag `v1`; groups,
    attributes, a sharded and an unsharded array, a resize) -> libzarr reads every version (each
    branch, the tag, every snapshot of main's history) equal to what Python reads.
  * libzarr creates a repository in moto (zarr_icechunk_create_repository_with_options), writes and
    commits twice, tags and branches -> Python lists the history and reads every version equal;
    creating it again is ZARR_ERR_EXISTS, creating one in a missing bucket ZARR_ERR_NOT_FOUND.
    A libzarr commit after Python's to the same branch is ZARR_ERR_CONFLICT, and rebases.
  * virtual chunks: a repository on S3 whose array has chunks in an http:// container (the test HTTP
    server) and an s3:// container (another moto bucket) reads through libzarr equal to Python when
    both containers are authorized (store option icechunk_authorize_virtual), and each unauthorized
    container is refused (ZARR_ERR_IO naming it).
  * bad input, under `prlimit --as`: a bucket that does not exist, a prefix holding no repository, no
    bucket in the location, path_style=false; then, with moto checking signatures (an IAM user's key),
    a wrong secret and an unknown key id: specific errors naming the repository; the right key reads.
Exit status: 0 pass, 1 fail. Library: $ZARR_LIB.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

harness.reexec_with_zarr("3.4.2")
np, icechunk, _moto, _boto3 = harness.import_or_skip("numpy", "icechunk", "moto", "boto3")

import zarr  # noqa: E402
import zarr_ctypes as zc  # noqa: E402
import icechunk_writer as w  # noqa: E402
from remote_servers import MotoServer, RangeHTTPServer  # noqa: E402
from test_icechunk import libzarr_tree, same_tree, sharded_doc, plain_doc  # noqa: E402

assert icechunk.__version__ == "2.3.0", icechunk.__version__
KEY, SECRET = "testing", "testing"


class Env:
    """The moto server and the settings both sides use."""

    def __init__(self, s3):
        self.s3 = s3

    def storage(self, prefix, bucket=None):
        return icechunk.s3_storage(bucket=bucket or self.s3.bucket, prefix=prefix, region="us-east-1",
                                   endpoint_url=self.s3.endpoint, allow_http=True, access_key_id=KEY,
                                   secret_access_key=SECRET, force_path_style=True)

    def options(self, **more):
        o = {"endpoint": self.s3.endpoint, "region": "us-east-1", "access_key_id": KEY, "secret_access_key": SECRET}
        o.update(more)
        return o

    def zopts(self, **more):
        return zc.StoreOptions(**self.options(**more))

    def loc(self, prefix, node="", version="", bucket=None):
        out = f"icechunk://s3://{bucket or self.s3.bucket}/{prefix}"
        if node:
            out += f"!/{node}"
        if version:
            out += f"?{version}"
        return out


def t_python_writes(e):
    st = e.storage("hist")
    w.make_history_repo(st)
    hist = w.history(st)
    assert [m for _, m in hist][:3] == ["third: resize g/a", "second: a region, attributes, b", "first: g/a and sharded"]
    versions = [("", {"branch": "main"}), ("branch=dev", {"branch": "dev"}), ("tag=v1", {"tag": "v1"})]
    versions += [(f"snapshot={sid}", {"snapshot_id": sid}) for sid, _ in hist[:-1]]
    for q, kw in versions:
        got = libzarr_tree(f"s3://{e.s3.bucket}/hist", q, options=e.zopts())
        same_tree(got, w.read_version(st, **kw), q or "default version")
    # A node inside, by location.
    with zc.Array.open(e.loc("hist", "g/a", "tag=v1"), options=e.zopts()) as a:
        assert a.shape == [40, 30], a.shape


def t_libzarr_writes(e):
    loc = e.loc("from_libzarr")
    first = zc.icechunk_create_repository(loc, e.zopts())
    rng = np.random.default_rng(7)
    t1 = rng.integers(-30000, 30000, size=(30, 50), dtype="<i2")
    s1 = rng.standard_normal((64, 40)).astype("<f4")
    with zc.Group.create(loc, '{"title": "on s3"}', options=e.zopts()) as root:
        with root.create_group("grp", '{"level": 1}') as grp:
            with grp.create_array("t", plain_doc([30, 50], [7, 9], "int16", 0)) as a:
                a.write(t1.tobytes())
        with root.create_array("s", sharded_doc([64, 40], [8, 5], [32, 20], "float32", 0.25)) as s:
            s.write(s1.tobytes())
        c1 = root.icechunk_commit("c1 on s3")
        with root.open_array("grp/t") as a:
            a.resize([40, 50])
            patch = np.full((10, 50), 17, dtype="<i2")
            a.write(patch.tobytes(), [30, 0], [10, 50])
            t2 = np.concatenate([t1, patch])
        root.set_attributes('{"title": "on s3", "rev": 2}')
        c2 = root.icechunk_commit("c2 on s3")
    assert zc.icechunk_create_ref("tag", loc, "t1", c1, options=e.zopts()) == c1
    assert zc.icechunk_create_ref("branch", e.loc("from_libzarr", version="tag=t1"), "side", options=e.zopts()) == c1
    # An existing repository is not created again.
    try:
        zc.icechunk_create_repository(loc, e.zopts())
        raise AssertionError("a second repository was created over the first")
    except zc.ZarrError as err:
        assert err.name == "ZARR_ERR_EXISTS", err
    # Nor in a bucket that does not exist.
    try:
        zc.icechunk_create_repository(e.loc("r", bucket="no-such-bucket"), e.zopts())
        raise AssertionError("a repository was created in a bucket that does not exist")
    except zc.ZarrError as err:
        assert err.name == "ZARR_ERR_NOT_FOUND" and "s3://no-such-bucket/r" in err.message, err
    st = e.storage("from_libzarr")
    hist = w.history(st)
    assert hist == [(c2, "c2 on s3"), (c1, "c1 on s3"), (first, "Repository initialized")], hist
    for kw, title, t in (({"tag": "t1"}, {"title": "on s3"}, t1), ({"snapshot_id": c1}, {"title": "on s3"}, t1),
                         ({"branch": "main"}, {"title": "on s3", "rev": 2}, t2), ({"branch": "side"}, {"title": "on s3"}, t1)):
        got = w.read_version(st, **kw)
        assert got[""][1] == title, (kw, got[""])
        assert np.array_equal(got["grp/t"][1], t), f"{kw}: grp/t differs"
        assert np.array_equal(got["s"][1], s1), f"{kw}: s differs"
    # The chunks are objects of the repository's prefix (read in place by libzarr).
    assert any(k.startswith("from_libzarr/chunks/") for k in e.s3.keys("from_libzarr/")), e.s3.keys("from_libzarr/")
    # Python commits to main while a libzarr session is open: libzarr's commit is ZARR_ERR_CONFLICT (the
    # crate's conditional update of the branch on S3), then rebases (the changes touch another node).
    with zc.Group.open(loc, zc.READ_WRITE, options=e.zopts()) as root:
        with root.open_array("grp/t") as a:
            a.write(np.full((7, 9), 1, "<i2").tobytes(), [0, 0], [7, 9])
        s = icechunk.Repository.open(st).writable_session("main")
        zarr.open_group(store=s.store)["s"][0:8, 0:5] = 3
        c_py = s.commit("python meanwhile")
        try:
            root.icechunk_commit("lost")
            raise AssertionError("a commit over another writer's succeeded")
        except zc.ZarrError as err:
            assert err.name == "ZARR_ERR_CONFLICT" and "main" in err.message, err
        c4 = root.icechunk_commit("rebased", rebase=True)
    hist = w.history(st)
    assert [i for i, _ in hist][:3] == [c4, c_py, c2], hist
    got = w.read_version(st, branch="main")
    t4, s4 = t2.copy(), s1.copy()
    t4[0:7, 0:9], s4[0:8, 0:5] = 1, 3
    assert np.array_equal(got["grp/t"][1], t4) and np.array_equal(got["s"][1], s4), "the rebased commit lost data"


def make_virtual_repo(e, http, vbucket):
    """A repository on S3 whose array `v` (int32, (4, 10), chunks (2, 5)) has two chunks in a file
    served over HTTP, one in an object of `vbucket` and one native. Returns (values, prefixes)."""
    values = np.arange(40, dtype="<i4").reshape(4, 10) * 7 - 50
    block = {(i, j): values[2 * i:2 * i + 2, 5 * j:5 * j + 5].tobytes() for i in range(2) for j in range(2)}
    blob = b"0123456789" + block[(0, 0)] + block[(0, 1)]
    (http.root / "data.bin").write_bytes(blob)
    e.s3.client().create_bucket(Bucket=vbucket)
    e.s3.client().put_object(Bucket=vbucket, Key="dir/part.bin", Body=b"xyz" + block[(1, 0)])
    http_prefix, s3_prefix = f"{http.url}/", f"s3://{vbucket}/"
    config = icechunk.RepositoryConfig.default()
    config.set_virtual_chunk_container(icechunk.VirtualChunkContainer(http_prefix, icechunk.http_store()))
    config.set_virtual_chunk_container(icechunk.VirtualChunkContainer(s3_prefix, icechunk.s3_store(
        region="us-east-1", endpoint_url=e.s3.endpoint, allow_http=True, s3_compatible=True, force_path_style=True)))
    creds = icechunk.containers_credentials({http_prefix: icechunk.credentials.HttpAccess, s3_prefix: icechunk.s3_credentials(
        access_key_id=KEY, secret_access_key=SECRET)})
    repo = icechunk.Repository.create(e.storage("virtual"), config=config, authorize_virtual_chunk_access=creds)
    s = repo.writable_session("main")
    root = zarr.group(store=s.store)
    v = root.create_array("v", shape=(4, 10), chunks=(2, 5), dtype="<i4", fill_value=0,
                          serializer=zarr.codecs.BytesCodec(endian="little"), compressors=None)
    s.store.set_virtual_ref("v/c/0/0", f"{http_prefix}data.bin", offset=10, length=40)
    s.store.set_virtual_ref("v/c/0/1", f"{http_prefix}data.bin", offset=50, length=40)
    s.store.set_virtual_ref("v/c/1/0", f"{s3_prefix}dir/part.bin", offset=3, length=40)
    v[2:4, 5:10] = values[2:4, 5:10]
    s.commit("virtual chunks over http and s3")
    py = zarr.open_group(store=icechunk.Repository.open(e.storage("virtual"), authorize_virtual_chunk_access=creds)
                         .readonly_session(branch="main").store, mode="r")["v"][...]
    assert np.array_equal(py, values), "Python reads its own virtual chunks differently"
    return py, http_prefix, s3_prefix


def t_virtual(e, vdir):
    vdir.mkdir()
    with RangeHTTPServer(vdir) as http:
        py, http_prefix, s3_prefix = make_virtual_repo(e, http, "zarr-virtual")
        opts = e.zopts(icechunk_authorize_virtual=f"{http_prefix},{s3_prefix}")
        with zc.Array.open(e.loc("virtual", "v"), options=opts) as a:
            got = np.frombuffer(a.read(), "<i4").reshape(4, 10)
        assert np.array_equal(got, py), "virtual chunks over HTTP and S3 differ from Python's"
        assert http.by_method.get("GET", 0) >= 2, dict(http.by_method)
        # One container authorized: the other's chunks are refused, naming it and the option.
        for allowed, refused, start in ((http_prefix, s3_prefix, [2, 0]), (s3_prefix, http_prefix, [0, 0])):
            with zc.Array.open(e.loc("virtual", "v"), options=e.zopts(icechunk_authorize_virtual=allowed)) as a:
                try:
                    a.read(start, [2, 5])
                    raise AssertionError(f"a chunk of the unauthorized container {refused} was read")
                except zc.ZarrError as err:
                    assert err.name == "ZARR_ERR_IO" and refused in err.message and "icechunk_authorize_virtual" in err.message, err
                other = [2, 0] if start == [0, 0] else [0, 0]
                assert np.array_equal(np.frombuffer(a.read(other, [2, 5]), "<i4").reshape(2, 5),
                                      py[other[0]:other[0] + 2, 0:5])


# Each case: [location, options, expected status, text the message must hold]; opens the root group
# and reads array `a` of it when there is one.
BAD_CHILD = r"""
import sys, json
sys.path.insert(0, sys.argv[1]); import zarr_ctypes as zc; zc._LIB = zc.load(sys.argv[2])
bad = 0
for loc, opts, want, text in json.loads(sys.argv[3]):
    try:
        g = zc.Group.open(loc, options=zc.StoreOptions(**opts))
        if "a" in g.children():
            with g.open_array("a") as a:
                a.read()
        g.close()
        got, msg = "ZARR_OK", ""
    except zc.ZarrError as e:
        got, msg = e.name, e.message
    ok = got == want and text in msg
    bad += not ok
    print(("ok  " if ok else "BAD ") + f"{loc} {sorted(opts)}: {got} {msg[:400]}")
sys.exit(1 if bad else 0)
"""


def run_bad(r, cases):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    p = subprocess.run(["prlimit", "--as=4000000000", sys.executable, "-c", BAD_CHILD, str(ROOT / "tools"), zc._LIB._name,
                        json.dumps(cases)], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, f"bad input:\n{p.stdout}{p.stderr[-3000:]}"
    if r.verbose:
        print(p.stdout, end="")


def t_bad_input(r, e):
    # A small repository for the credential cases.
    st = e.storage("creds")
    repo = icechunk.Repository.create(st)
    s = repo.writable_session("main")
    zarr.group(store=s.store).create_array("a", shape=(4,), chunks=(2,), dtype="u1", fill_value=0)[:] = 9
    s.commit("one array")
    run_bad(r, [
        [e.loc("hist", bucket="no-such-bucket"), e.options(), "ZARR_ERR_NOT_FOUND", "s3://no-such-bucket/hist"],
        [e.loc("nothing/here"), e.options(), "ZARR_ERR_NOT_FOUND", f"s3://{e.s3.bucket}/nothing/here"],
        ["icechunk://s3:///hist", e.options(), "ZARR_ERR_INVALID_ARGUMENT", "bucket"],
        [e.loc("hist", version="tag=nope"), e.options(), "ZARR_ERR_NOT_FOUND", "nope"],
        [e.loc("hist"), e.options(path_style="false"), "ZARR_ERR_UNSUPPORTED", "path_style"],
    ])
    # moto checks signatures from now on: an IAM user's key reads, a wrong secret or key id does not.
    iam = __import__("boto3").client("iam", endpoint_url=e.s3.endpoint, region_name="us-east-1",
                                     aws_access_key_id=KEY, aws_secret_access_key=SECRET)
    iam.create_user(UserName="reader")
    iam.put_user_policy(UserName="reader", PolicyName="all", PolicyDocument=json.dumps(
        {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
    k = iam.create_access_key(UserName="reader")["AccessKey"]
    from moto import settings
    from moto.core.authorization import ActionAuthenticatorMixin
    saved = settings.INITIAL_NO_AUTH_ACTION_COUNT
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    ActionAuthenticatorMixin.request_count = 0
    try:
        right = e.options(access_key_id=k["AccessKeyId"], secret_access_key=k["SecretAccessKey"])
        run_bad(r, [
            [e.loc("creds"), right, "ZARR_OK", ""],
            [e.loc("creds"), e.options(access_key_id=k["AccessKeyId"], secret_access_key="wrong-secret"),
             "ZARR_ERR_IO", f"s3://{e.s3.bucket}/creds"],
            [e.loc("creds"), e.options(access_key_id="AKIANOSUCHKEY0000000", secret_access_key="x"),
             "ZARR_ERR_IO", f"s3://{e.s3.bucket}/creds"],
        ])
    finally:
        settings.INITIAL_NO_AUTH_ACTION_COUNT = saved


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    r = harness.Runner.in_scratch(args)
    with MotoServer() as s3:
        # libzarr gets the settings as store options only.
        for k in list(os.environ):
            if k.startswith("AWS_"):
                del os.environ[k]
        e = Env(s3)
        r.run("python_writes", t_python_writes, e)
        r.run("libzarr_writes", t_libzarr_writes, e)
        r.run("virtual", t_virtual, e, r.path("http_root"))
        r.run("bad_input", t_bad_input, r, e)
    r.finish()


if __name__ == "__main__":
    main()
