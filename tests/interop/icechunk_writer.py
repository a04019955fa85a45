"""Builds Icechunk repositories with the Python `icechunk` package (2.3.0) and zarr-python, for
tests/interop/test_icechunk.py (run under the Python 3.12 venv). Every function returns what it wrote,
so that the test compares libzarr's reads with what Python reads back of every version."""
import numpy as np
import icechunk
import zarr


def storage(path):
    """The storage of a repository: a local directory, or a storage object given as is (S3)."""
    if isinstance(path, icechunk.Storage):
        return path
    return icechunk.local_filesystem_storage(str(path))


def open_repo(path, authorize=None):
    return icechunk.Repository.open(storage(path), authorize_virtual_chunk_access=authorize)


def history(path):
    """[(snapshot id, message)] of branch main, newest first."""
    repo = open_repo(path)
    return [(s.id, s.message) for s in repo.ancestry(branch="main")]


def make_history_repo(path):
    """A repository with several commits on main, a branch `dev` and a tag `v1`: groups with
    attributes, an unsharded int32 array, a sharded float64 array, an array added and one resized
    later. Returns {"snapshots": [ids of main, oldest first], "dev": id, ...}."""
    rng = np.random.default_rng(36)
    repo = icechunk.Repository.create(storage(path))
    s = repo.writable_session("main")
    root = zarr.group(store=s.store, attributes={"title": "icechunk interop", "n": 1})
    g = root.create_group("g", attributes={"units": "K"})
    a = g.create_array("a", shape=(40, 30), chunks=(8, 7), dtype="int32", fill_value=-1, dimension_names=["y", "x"])
    a[:] = rng.integers(-1000, 1000, size=(40, 30), dtype="int32")
    sh = root.create_array("sharded", shape=(64, 48), chunks=(8, 8), shards=(32, 24), dtype="float64", fill_value=0.5)
    sh[:40, :] = rng.standard_normal((40, 48))
    first = s.commit("first: g/a and sharded")
    s = repo.writable_session("main")
    root = zarr.open_group(store=s.store)
    root["g/a"][5:17, 3:29] = 7
    root.attrs["n"] = 2
    b = root.create_array("b", shape=(1000,), chunks=(300,), dtype="uint8", fill_value=3)
    b[100:900] = (np.arange(800) % 251).astype("uint8")
    second = s.commit("second: a region, attributes, b")
    repo.create_tag("v1", first)
    repo.create_branch("dev", first)
    s = repo.writable_session("dev")
    root = zarr.open_group(store=s.store)
    root["sharded"][:, :] = np.arange(64 * 48, dtype="float64").reshape(64, 48)
    root.create_group("devonly", attributes={"branch": "dev"})
    dev = s.commit("dev: rewrite sharded")
    s = repo.writable_session("main")
    root = zarr.open_group(store=s.store)
    a = root["g/a"]
    a.resize((48, 30))
    a[40:48, :] = 11
    root["g"].attrs["units"] = "degC"
    third = s.commit("third: resize g/a")
    return {"snapshots": [first, second, third], "dev": dev, "tag": "v1"}


def read_version(path, **version):
    """{node path: numpy array or attributes dict} of a version (branch=, tag= or snapshot_id=)."""
    repo = open_repo(path)
    s = repo.readonly_session(**version)
    root = zarr.open_group(store=s.store, mode="r")
    out = {"": ("group", dict(root.attrs))}
    for name, node in root.members(max_depth=None):
        if isinstance(node, zarr.Array):
            out[name] = ("array", node[...], dict(node.attrs))
        else:
            out[name] = ("group", dict(node.attrs))
    return out


def make_virtual_repo(path, data_file, prefix):
    """A repository whose array `v` (int32, (6, 10), chunks (2, 5)) has virtual chunks: byte ranges
    of `data_file` (raw little-endian int32, written here), in a virtual chunk container for
    `prefix` (a file:// URL prefix ending in '/'). One chunk is native (written normally) and one
    points past the end of the file (`bad`, a separate array). Returns the array's values."""
    values = np.arange(60, dtype="<i4").reshape(6, 10) * 3
    # The file holds the chunks one after another, each C-ordered, after a 16-byte header.
    chunks = {}
    blob = bytearray(b"HEADER-16-BYTES!")
    for i in range(3):
        for j in range(2):
            block = values[2 * i:2 * i + 2, 5 * j:5 * j + 5].tobytes()
            chunks[(i, j)] = (len(blob), len(block))
            blob += block
    with open(data_file, "wb") as f:
        f.write(bytes(blob))
    config = icechunk.RepositoryConfig.default()
    config.set_virtual_chunk_container(icechunk.VirtualChunkContainer(prefix, icechunk.local_filesystem_store(prefix)))
    repo = icechunk.Repository.create(storage(path), config=config,
                                      authorize_virtual_chunk_access={prefix: None})
    s = repo.writable_session("main")
    root = zarr.group(store=s.store)
    v = root.create_array("v", shape=(6, 10), chunks=(2, 5), dtype="<i4", fill_value=0,
                          serializer=zarr.codecs.BytesCodec(endian="little"), compressors=None)
    url = f"{prefix}{data_file.name}"
    for (i, j), (off, length) in chunks.items():
        if (i, j) == (2, 1):
            continue
        s.store.set_virtual_ref(f"v/c/{i}/{j}", url, offset=off, length=length)
    v[4:6, 5:10] = values[4:6, 5:10]   # one native chunk
    bad = root.create_array("bad", shape=(2, 5), chunks=(2, 5), dtype="<i4", fill_value=0,
                            serializer=zarr.codecs.BytesCodec(endian="little"), compressors=None)
    s.store.set_virtual_ref("bad/c/0/0", url, offset=len(blob) - 8, length=40)
    s.commit("virtual chunks")
    return values
