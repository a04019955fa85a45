#!/usr/bin/env python3
"""Interop, `reference://` locations (kerchunk references) through libzarr's C ABI.

    python3 tests/interop/test_reference_store.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (a package missing outside CI).
The library is $ZARR_LIB, else target/release/libzarr.so of this repository.

Covered:
  * netCDF4-python and h5py write HDF5 files (chunked and contiguous variables, deflate, shuffle,
    big-endian types, nested groups, an unlimited dimension, fill values with chunks never written);
    kerchunk's SingleHdf5ToZarr makes JSON references to them (version 1, every chunk a reference, and
    again with small chunks inlined as base64), which are also written as version 0 and with templates;
    libzarr opens `reference:///.../refs.json`, walks the group tree (zarr_group_list) and reads every
    array equal to h5py (and every netCDF variable equal to netCDF4-python; a strided hyperslab converted
    to float64 too), and zarrdump prints it.
  * the Parquet layout: kerchunk's refs_to_dataframe (fastparquet, zstd pages) with a small record size
    (several record files per array) and the default one, inline chunks or none, read equal.
  * references with a null URL read the store option `reference_target` (fsspec's default target);
    without it they are ZARR_ERR_METADATA naming the key.
  * Fletcher-32 (which kerchunk refuses): references made from h5py's chunk table with numcodecs'
    `fletcher32` outermost read equal, so HDF5's checksum and numcodecs' agree; a flipped checksum
    byte is ZARR_ERR_CHECKSUM.
  * `gen` entries: one reference per chunk of a contiguous dataset generated from a range, read equal;
    a `gen` of 10^12 keys opens and reads under an address-space cap.
  * the same references with the files behind an HTTP server and moto's S3 on loopback.
  * coalescing: the references of one read into one target that are adjacent or within 64 KiB of each
    other are one HTTP GET, farther ones a GET each (counted by the server), values equal.
  * writes are ZARR_ERR_READ_ONLY; bad input (a reference past the file's end, a missing target, a
    reference of the wrong shape, a self-referencing template, an unknown and a forbidden scheme, a
    target file that shrank, a Parquet file with other columns, an SZIP codec) is a specific error
    naming the key and the target, run under `prlimit --as`.
"""
import copy
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import harness  # noqa: E402  (tests/interop/harness.py)
import zarr_ctypes as zc  # noqa: E402

np, h5py, netCDF4, kerchunk_hdf, _ = harness.import_or_skip("numpy", "h5py", "netCDF4", "kerchunk.hdf", "fastparquet")

import warnings  # noqa: E402

warnings.filterwarnings("ignore")


def make_netcdf(path):
    """A netCDF-4 file: {variable path: values as netCDF4-python reads them (no masking)}."""
    rng = np.random.default_rng(3)
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        nc.createDimension("time", None)
        nc.createDimension("lat", 5)
        nc.createDimension("lon", 7)
        lat = nc.createVariable("lat", "f8", ("lat",))  # contiguous
        lat[:] = np.linspace(-60, 60, 5)
        lat.units = "degrees_north"
        t = nc.createVariable("temp", "f4", ("time", "lat", "lon"), zlib=True, shuffle=True, chunksizes=(2, 3, 4),
                              fill_value=np.float32(-999.0))
        t[0:5] = rng.standard_normal((5, 5, 7)).astype("f4")
        be = nc.createVariable("big", "i4", ("lat", "lon"), endian="big", zlib=True, chunksizes=(3, 3))
        be[:] = rng.integers(-2**31, 2**31 - 1, size=(5, 7), dtype="i4")
        sp = nc.createVariable("sparse", "f4", ("lat", "lon"), chunksizes=(2, 2), fill_value=np.float32(1.5))
        sp[0:2, 0:2] = np.arange(4, dtype="f4").reshape(2, 2)  # other chunks never written
        g = nc.createGroup("grp")
        v = g.createVariable("counts", "i2", ("lat",), chunksizes=(2,), fill_value=np.int16(7), zlib=True)
        v[0:2] = [1, 2]
    want = {}
    with netCDF4.Dataset(path) as nc:
        nc.set_auto_maskandscale(False)
        for name in ("lat", "temp", "big", "sparse"):
            want[name] = np.asarray(nc[name][...])
        want["grp/counts"] = np.asarray(nc["grp"]["counts"][...])
    return want


def make_h5(path):
    """An h5py file with what kerchunk translates, and a Fletcher-32 dataset (which it does not)."""
    rng = np.random.default_rng(5)
    with h5py.File(path, "w") as f:
        f.create_dataset("deflate_shuffle", data=rng.integers(0, 1000, size=(30, 40), dtype="i4"), chunks=(8, 16),
                         compression="gzip", shuffle=True)
        f.create_dataset("contiguous", data=rng.standard_normal(1000))
        f.create_dataset("bigend", data=rng.standard_normal((20, 20)).astype(">f4"), chunks=(5, 5), compression="gzip")
        f.create_dataset("a/b/bytes", data=rng.integers(0, 255, size=50, dtype="u1"), chunks=(16,), compression="gzip",
                         compression_opts=9)
        d = f.create_dataset("filled", shape=(10, 10), chunks=(4, 4), dtype="i8", fillvalue=-5)
        d[0:4, 0:4] = 9
        u = f.create_dataset("unlimited", shape=(3, 4), maxshape=(None, 4), chunks=(2, 4), dtype="u2")
        u[:] = rng.integers(0, 60000, size=(3, 4))
        u.resize((5, 4))
        u[3:5] = 11
        f.create_dataset("fletcher", data=np.arange(600, dtype="<i4").reshape(20, 30), chunks=(8, 8),
                         fletcher32=True, shuffle=True, compression="gzip")
        f.create_dataset("fletcher_plain", data=np.arange(100, dtype="<u2"), chunks=(30,), fletcher32=True)
        f.create_dataset("small", data=np.arange(6, dtype="i2"), chunks=(3,))
    return h5_values(path)


def h5_values(path):
    want = {}
    with h5py.File(path) as f:
        f.visititems(lambda n, o: want.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return want


def translate(path, url, inline=0):
    """kerchunk's references to the HDF5 file at `path`, its chunks named by `url`."""
    with open(path, "rb") as fh:
        refs = kerchunk_hdf.SingleHdf5ToZarr(fh, url=url, inline_threshold=inline).translate()
    return refs


def write_refs(path, refs):
    Path(path).write_text(json.dumps(refs))
    return path


def walk(group, prefix=""):
    """{array path: Array handle opened through the group tree}."""
    out = {}
    for name, kind in group.children().items():
        full = f"{prefix}{name}"
        if kind == "array":
            out[full] = group.open_array(name)
        else:
            with group.open_group(name) as g:
                out.update(walk(g, full + "/"))
    return out


def values(a, like):
    raw = a.read()
    return np.frombuffer(raw, dtype=like.dtype.newbyteorder("=")).reshape(a.shape)


def check_equal(name, got, want):
    want = np.asarray(want)
    assert list(got.shape) == list(want.shape), f"{name}: shape {got.shape} != {want.shape}"
    if want.dtype.kind == "f":
        assert np.array_equal(got, want, equal_nan=True), f"{name}: values differ"
    else:
        assert np.array_equal(got, want), f"{name}: values differ"


def read_all(location, want, options=None, expect_missing=()):
    """Opens `location`, walks it and compares every array with `want` (by path)."""
    with zc.Group.open(location, options=options) as root:
        arrays = walk(root)
    try:
        missing = set(want) - set(arrays) - set(expect_missing)
        assert not missing, f"{location}: arrays not found: {sorted(missing)} (found {sorted(arrays)})"
        for name, a in arrays.items():
            if name in want:
                check_equal(name, values(a, np.asarray(want[name])), want[name])
        return sorted(arrays)
    finally:
        for a in arrays.values():
            a.close()


def with_urls(refs, fn):
    """A copy of version-1 `refs` with every URL replaced by fn(url)."""
    out = copy.deepcopy(refs)
    for k, v in out["refs"].items():
        if isinstance(v, list):
            v[0] = fn(v[0])
    return out


class Files:
    def __init__(self, r):
        self.dir = r.path("files")
        self.dir.mkdir()
        self.nc = self.dir / "model.nc"
        self.h5 = self.dir / "plain.h5"
        self.nc_want = make_netcdf(self.nc)
        self.nc_h5 = h5_values(self.nc)
        self.h5_want = make_h5(self.h5)


def t_netcdf(r, files):
    for inline in (0, 64):
        refs = translate(files.nc, str(files.nc), inline)
        loc = f"reference://{write_refs(r.path('nc.json'), refs)}"
        names = read_all(loc, files.nc_want)
        read_all(loc, {k: v for k, v in files.nc_h5.items() if k in names})
        if inline:
            assert any(isinstance(v, str) and v.startswith("base64:") for v in refs["refs"].values()), "nothing inlined"
    # A strided hyperslab converted to float64 (zarr_read_hyperslab), across chunk boundaries.
    with zc.Array.open(loc + "!/temp") as a:
        out = np.zeros((2, 3, 3), dtype="f8")
        a.read_hyperslab([1, 0, 1], [2, 3, 3], step=[2, 2, 2], buffer_type="float64", out=out)
        check_equal("temp[1::2, ::2, 1::2]", out, files.nc_want["temp"][1:5:2, 0:5:2, 1:7:2].astype("f8"))
    # Fill values of chunks never written: the sparse variable's unwritten chunks read as its _FillValue.
    assert (files.nc_want["sparse"][2:, 2:] == np.float32(1.5)).all()


def t_h5py(r, files):
    refs = translate(files.h5, str(files.h5))
    assert not any(k.startswith("fletcher") for k in refs["refs"]), "kerchunk translated Fletcher-32 (it used to refuse it)"
    read_all(f"reference://{write_refs(r.path('h5.json'), refs)}", files.h5_want, expect_missing=("fletcher", "fletcher_plain"))


def t_version0_relative_file_uri(r, files):
    refs = translate(files.h5, str(files.h5))
    v0 = dict(refs["refs"])
    # Version 0, metadata written as JSON objects, and relative URLs (taken relative to the references' file).
    for k, v in list(v0.items()):
        if k.endswith((".zarray", ".zattrs", ".zgroup")):
            v0[k] = json.loads(v)
        elif isinstance(v, list):
            v0[k] = [files.h5.name] + v[1:]
    want = {k: v for k, v in files.h5_want.items() if not k.startswith("fletcher")}
    read_all(f"reference://{write_refs(files.dir / 'v0.json', v0)}", want)
    uri = with_urls(refs, lambda u: f"file://{u}")
    read_all(f"reference://{write_refs(r.path('uri.json'), uri)}", want)


def t_default_target(r, files):
    # References with a null URL read the store option reference_target (fsspec's `target`).
    refs = with_urls(translate(files.h5, str(files.h5)), lambda u: None)
    loc = f"reference://{write_refs(r.path('null.json'), refs)}"
    want = {k: v for k, v in files.h5_want.items() if not k.startswith("fletcher")}
    read_all(loc, want, options=zc.StoreOptions(reference_target=str(files.h5)))
    with zc.Array.open(loc + "!/small") as a:
        try:
            a.read()
            raise AssertionError("a null URL without a default target was read")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_METADATA" and "small/0" in str(e) and "reference_target" in str(e), e


def t_templates(r, files):
    refs = translate(files.nc, str(files.nc))
    tpl = with_urls(refs, lambda u: "{{d}}/{{f(name='" + Path(u).stem + "')}}")
    tpl["templates"] = {"d": str(files.dir), "f": "{{name}}.nc"}
    read_all(f"reference://{write_refs(r.path('tpl.json'), tpl)}", files.nc_want)


def fletcher_refs(path, url):
    """References to the Fletcher-32 datasets from h5py's chunk table: HDF5's pipeline (shuffle, deflate,
    then the checksum appended) as zarr v2 filters with numcodecs' fletcher32 outermost."""
    refs = {".zgroup": json.dumps({"zarr_format": 2})}
    with h5py.File(path) as f:
        for name in ("fletcher", "fletcher_plain"):
            d = f[name]
            filters = [{"id": "shuffle", "elementsize": d.dtype.itemsize}, {"id": "zlib", "level": 4}] if d.shuffle else None
            refs[f"{name}/.zarray"] = json.dumps({
                "zarr_format": 2, "shape": list(d.shape), "chunks": list(d.chunks), "dtype": d.dtype.str,
                "compressor": {"id": "fletcher32"}, "filters": filters, "fill_value": 0, "order": "C"})
            for i in range(d.id.get_num_chunks()):
                ci = d.id.get_chunk_info(i)
                key = ".".join(str(o // c) for o, c in zip(ci.chunk_offset, d.chunks))
                refs[f"{name}/{key}"] = [url, ci.byte_offset, ci.size]
    return refs


def t_parquet(r, files):
    from kerchunk.df import refs_to_dataframe

    for path, want, skip in ((files.nc, files.nc_want, ()), (files.h5, files.h5_want, ("fletcher", "fletcher_plain"))):
        for inline, record_size in ((0, 3), (64, 100000)):
            out = r.path("parq")
            refs_to_dataframe(translate(path, str(path), inline), str(out), record_size=record_size)
            assert (out / ".zmetadata").exists() and list(out.rglob("refs.*.parq")), f"no Parquet layout in {out}"
            if record_size == 3:
                assert list(out.rglob("refs.1.parq")), "a small record size gave one record file per array"
            read_all(f"reference://{out}", want, expect_missing=skip)


def t_fletcher32(r, files):
    refs = fletcher_refs(files.h5, str(files.h5))
    want = {k: files.h5_want[k] for k in ("fletcher", "fletcher_plain")}
    read_all(f"reference://{write_refs(r.path('f32.json'), refs)}", want)
    # One flipped byte of a chunk's stored checksum: ZARR_ERR_CHECKSUM.
    bad = r.path("bad.h5")
    bad.write_bytes(files.h5.read_bytes())
    off, size = refs["fletcher_plain/0"][1:]
    with open(bad, "r+b") as fh:
        fh.seek(off + size - 1)
        b = fh.read(1)
        fh.seek(off + size - 1)
        fh.write(bytes([b[0] ^ 0xFF]))
    loc = f"reference://{write_refs(r.path('f32bad.json'), fletcher_refs(bad, str(bad)))}!/fletcher_plain"
    with zc.Array.open(loc) as a:
        try:
            a.read()
            raise AssertionError("a corrupt Fletcher-32 checksum was read")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_CHECKSUM", e


def t_gen(r, files):
    # The contiguous dataset as 10 chunks of 100 float64, generated from a range.
    with h5py.File(files.h5) as f:
        off = f["contiguous"].id.get_offset()
    refs = {"version": 1, "templates": {"file": str(files.h5)},
            "gen": [{"key": "c/{{i}}", "url": "{{file}}", "offset": "{{" + str(off) + " + i * 800}}", "length": "800",
                     "dimensions": {"i": {"stop": 10}}}],
            "refs": {".zgroup": '{"zarr_format": 2}',
                     "c/.zarray": json.dumps({"zarr_format": 2, "shape": [1000], "chunks": [100], "dtype": "<f8",
                                              "compressor": None, "filters": None, "fill_value": None, "order": "C"})}}
    read_all(f"reference://{write_refs(r.path('gen.json'), refs)}", {"c": files.h5_want["contiguous"]})


def t_read_only(r, files):
    loc = f"reference://{write_refs(r.path('ro.json'), translate(files.h5, str(files.h5)))}"
    with zc.Array.open(loc + "!/small") as a:
        for fn in (lambda: a.write(b"\0" * 12), lambda: a.set_attributes("{}")):
            try:
                fn()
                raise AssertionError("a write to a reference store succeeded")
            except zc.ZarrError as e:
                assert e.name == "ZARR_ERR_READ_ONLY", e
    try:
        zc.Array.open(loc + "!/small", zc.READ_WRITE).close()
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_READ_ONLY", e


def t_zarrdump(r, files):
    tool = os.environ.get("ZARRDUMP")
    if not tool:
        raise AssertionError("ZARRDUMP is not set (CMake sets it)")
    loc = f"reference://{write_refs(r.path('dump.json'), translate(files.nc, str(files.nc)))}"
    out = harness.run_tool(tool, loc).stdout
    for name in ("temp", "big", "grp", "counts"):
        assert name in out, f"zarrdump does not show {name}:\n{out}"


def t_http(r, files):
    from remote_servers import RangeHTTPServer

    with RangeHTTPServer(files.dir) as srv:
        refs = with_urls(translate(files.nc, str(files.nc)), lambda u: f"{srv.url}/{Path(u).name}")
        read_all(f"reference://{write_refs(r.path('http.json'), refs)}", files.nc_want)
        assert srv.by_method.get("GET", 0) > 0


def t_s3(r, files):
    from remote_servers import MotoServer

    with MotoServer() as s3:
        s3.upload_dir(files.dir, "in")
        refs = with_urls(translate(files.h5, str(files.h5)), lambda u: f"s3://{s3.bucket}/in/{Path(u).name}")
        want = {k: v for k, v in files.h5_want.items() if not k.startswith("fletcher")}
        loc = f"reference://{write_refs(r.path('s3.json'), refs)}"
        read_all(loc, want)
        opts = zc.StoreOptions(endpoint=s3.endpoint, region="us-east-1", access_key_id="testing",
                               secret_access_key="testing", path_style=True)
        read_all(loc, want, options=opts)


def t_coalesce(r, files):
    """The references of one read into one target that are adjacent or close (gap up to 64 KiB) are one
    request; distant ones are a request each (GETs counted by the loopback HTTP server)."""
    from remote_servers import RangeHTTPServer

    d = r.path("coalesce")
    d.mkdir()
    data = np.random.default_rng(9).integers(0, 256, size=4 << 20, dtype="u1").tobytes()
    (d / "blob.bin").write_bytes(data)
    chunk, n = 1000, 8

    def refs_with_gap(url, gap):
        arr = {"zarr_format": 2, "shape": [n * chunk], "chunks": [chunk], "dtype": "|u1", "compressor": None,
               "filters": None, "fill_value": 0, "order": "C"}
        refs = {".zgroup": '{"zarr_format": 2}', "a/.zarray": json.dumps(arr)}
        want = bytearray()
        for k in range(n):
            off = k * (chunk + gap)
            refs[f"a/{k}"] = [url, off, chunk]
            want += data[off:off + chunk]
        return {"version": 1, "refs": refs}, bytes(want)

    with RangeHTTPServer(d) as srv:
        for gap, gets_wanted in ((0, 1), (10_000, 1), (200_000, n)):
            refs, want = refs_with_gap(f"{srv.url}/blob.bin", gap)
            loc = f"reference://{write_refs(r.path('coalesce.json'), refs)}!/a"
            with zc.Array.open(loc) as a:
                before = srv.by_method.get("GET", 0)
                got = a.read()
                gets = srv.by_method.get("GET", 0) - before
            assert got == want, f"gap {gap}: values differ"
            assert gets == gets_wanted, f"gap {gap}: {gets} GETs (expected {gets_wanted})"
            # the same references to the local file read the same bytes
            local = with_urls(refs, lambda u: str(d / "blob.bin"))
            with zc.Array.open(f"reference://{write_refs(r.path('coalesce_local.json'), local)}!/a") as a:
                assert a.read() == want, f"gap {gap}, local: values differ"
    # a merged read that fails (the second reference lies past the end) is read again reference by
    # reference: the error names the reference that caused it
    (d / "short.bin").write_bytes(data[:1500])
    refs, _ = refs_with_gap(str(d / "short.bin"), 0)
    refs["refs"] = {k: v for k, v in refs["refs"].items() if k in (".zgroup", "a/.zarray", "a/0", "a/1")}
    with zc.Array.open(f"reference://{write_refs(r.path('coalesce_short.json'), refs)}!/a") as a:
        try:
            a.read([0], [2000])
            raise AssertionError("a reference past the end read without error")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_CODEC" and "reference 'a/1'" in str(e) and "past the end" in str(e), e


BAD_CHILD = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import zarr_ctypes as zc
zc._LIB = zc.load(sys.argv[2])
cases = json.loads(sys.argv[3])
failures = 0
for loc, key, status, words in cases:
    try:
        with zc.Array.open(loc) as a:
            a.read()
        print(f"FAIL {key}: read without error")
        failures += 1
    except zc.ZarrError as e:
        ok = e.name == status and all(w in str(e) for w in words)
        print(("ok  " if ok else "FAIL ") + f"{key}: {e}")
        failures += not ok
sys.exit(1 if failures else 0)
'''


def t_bad_input(r, files):
    d = r.path("bad")
    d.mkdir()
    data = d / "data.bin"
    data.write_bytes(bytes(range(256)) * 4)
    shrink = d / "shrink.bin"
    shrink.write_bytes(bytes(4096))
    arr = json.dumps({"zarr_format": 2, "shape": [8], "chunks": [8], "dtype": "|u1", "compressor": None,
                      "filters": None, "fill_value": 0, "order": "C"})

    def one(name, value, extra=None):
        refs = {"version": 1, "refs": {".zgroup": '{"zarr_format": 2}', f"{name}/.zarray": arr, f"{name}/0": value}}
        refs.update(extra or {})
        return f"reference://{write_refs(d / (name + '.json'), refs)}!/{name}"

    cases = [
        (one("past", [str(data), 1020, 8]), "past", "ZARR_ERR_CODEC", ["past/0", "data.bin", "past the end"]),
        (one("missing", [str(d / "gone.bin"), 0, 8]), "missing", "ZARR_ERR_NOT_FOUND", ["missing/0", "gone.bin"]),
        (one("unknown", ["gs://bucket/x.nc", 0, 8]), "unknown", "ZARR_ERR_UNSUPPORTED", ["unknown/0", "gs"]),
        (one("forbidden", ["memory://x/y", 0, 8]), "forbidden", "ZARR_ERR_UNSUPPORTED", ["forbidden/0", "memory"]),
        (one("selfref", ["{{a}}", 0, 8], {"templates": {"a": "x{{b}}", "b": "{{a}}"}}), "selfref", "ZARR_ERR_METADATA",
         ["refers to itself"]),
        (one("shrunk", [str(shrink), 4000, 8]), "shrunk", "ZARR_ERR_CODEC", ["shrunk/0", "shrink.bin"]),
    ]
    # An HDF5 filter with no numcodecs equivalent, written by hand as kerchunk would not: refused by name.
    szip = json.loads(arr)
    szip["compressor"] = {"id": "szip", "mask": 4, "pixels_per_block": 32}
    refs = {".zgroup": '{"zarr_format": 2}', "sz/.zarray": json.dumps(szip), "sz/0": [str(data), 0, 8]}
    cases.append((f"reference://{write_refs(d / 'sz.json', refs)}!/sz", "szip", "ZARR_ERR_UNSUPPORTED", ["szip"]))
    # A wrong shape or type: the key is named when the reference file is opened.
    for name, value in (("shape", [str(data), 1]), ("type", 17), ("negative", [str(data), -1, 8])):
        loc = one(name, value)
        try:
            zc.Group.open(loc.split("!/")[0]).close()
            raise AssertionError(f"{name}: references with a bad value opened")
        except zc.ZarrError as e:
            assert e.name == "ZARR_ERR_METADATA" and f"{name}/0" in str(e), e
    # A JSON reference file is a metadata document: longer than the metadata ceiling, it is refused before
    # it is read (ZARR_ERR_MEMORY, naming the file and the setting); under the default ceiling it opens.
    big = one("ceiling", [str(data), 0, 8], {"templates": {"pad": "x" * 4000}}).split("!/")[0]
    try:
        zc.Group.open(big, options=zc.StoreOptions(max_metadata_bytes=1000)).close()
        raise AssertionError("a reference file over the metadata ceiling opened")
    except zc.ZarrError as e:
        assert e.name == "ZARR_ERR_MEMORY" and "ceiling.json" in str(e) and "max_metadata_bytes" in str(e), e
    zc.Group.open(big).close()
    # A Parquet reference directory whose record file has other columns.
    import pandas as pd

    pq = d / "parq"
    (pq / "v").mkdir(parents=True)
    (pq / ".zmetadata").write_text(json.dumps({"record_size": 10, "metadata": {
        ".zgroup": {"zarr_format": 2}, "v/.zarray": json.loads(arr)}}))
    pd.DataFrame({"url": [str(data)], "start": [0], "length": [8]}).to_parquet(pq / "v" / "refs.0.parq", engine="fastparquet")
    cases.append((f"reference://{pq}!/v", "parquet_columns", "ZARR_ERR_METADATA", ["refs.0.parq", "url, start, length"]))
    # A gen of 10^12 keys: opening and reading one key costs no memory up front.
    big = {"version": 1, "gen": [{"key": "g/{{i}}", "url": str(data), "offset": "{{i % 128}}", "length": "8",
                                  "dimensions": {"i": {"stop": 10**12}}}],
           "refs": {".zgroup": '{"zarr_format": 2}',
                    "g/.zarray": json.dumps({"zarr_format": 2, "shape": [8 * 10**12], "chunks": [8], "dtype": "|u1",
                                             "compressor": None, "filters": None, "fill_value": 0, "order": "C"})}}
    big_loc = f"reference://{write_refs(d / 'big.json', big)}"
    # The shrinking target: opened by the child, it is cut short before the read (the child opens the
    # reference file itself, so cut it now: the size check is against the file as it is read).
    shrink.write_bytes(bytes(100))
    env = dict(os.environ)
    child = [sys.executable, "-c", BAD_CHILD, str(ROOT / "tools"), zc._LIB._name, json.dumps(cases)]
    p = subprocess.run(["prlimit", "--as=4000000000", *child], capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, f"bad input:\n{p.stdout}{p.stderr}"
    if r.verbose:
        print(p.stdout, end="")
    # The 10^12-key gen, under the same cap: read one chunk far out.
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import zarr_ctypes as zc; zc._LIB = zc.load(sys.argv[2]);"
            "a = zc.Array.open(sys.argv[3] + '!/g'); "
            "assert a.read([8 * (10**12 - 1)], [8]) == bytes(range(((10**12 - 1) % 128), ((10**12 - 1) % 128) + 8)); print('ok')")
    p = subprocess.run(["prlimit", "--as=4000000000", sys.executable, "-c", code, str(ROOT / "tools"), zc._LIB._name, big_loc],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "ok" in p.stdout, f"gen of 10^12 keys:\n{p.stdout}{p.stderr}"


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    r = harness.Runner.in_scratch(args)
    files = Files(r)
    r.run("netcdf", t_netcdf, r, files)
    r.run("h5py", t_h5py, r, files)
    r.run("version0_relative_file_uri", t_version0_relative_file_uri, r, files)
    r.run("templates", t_templates, r, files)
    r.run("default_target", t_default_target, r, files)
    r.run("parquet", t_parquet, r, files)
    r.run("fletcher32", t_fletcher32, r, files)
    r.run("gen", t_gen, r, files)
    r.run("read_only", t_read_only, r, files)
    r.run("zarrdump", t_zarrdump, r, files)
    r.run("bad_input", t_bad_input, r, files)
    r.run("http", t_http, r, files)
    r.run("coalesce", t_coalesce, r, files)
    r.run("s3", t_s3, r, files)
    r.finish()


if __name__ == "__main__":
    main()
