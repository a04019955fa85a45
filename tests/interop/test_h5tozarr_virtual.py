#!/usr/bin/env python3
"""Interop: `h5tozarr --virtual` (kerchunk JSON references into an HDF5 file's chunks), read by libzarr's
`reference://` store and by zarr-python / xarray through fsspec's ReferenceFileSystem, against netCDF4-python
and h5py reading the file itself.

    H5TOZARR=... python3 tests/interop/test_h5tozarr_virtual.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (a package or $H5TOZARR missing outside CI).

Covered (docs/reference-stores.md, "h5tozarr --virtual"), once for each way h5tozarr lists a dataset's chunks
(CMake runs it with h5tozarr built against HDF5 1.10, H5Dget_chunk_info, as interop.h5tozarr_virtual, and
against HDF5 1.14, H5Dchunk_iter, as interop.h5tozarr_virtual_chunk_iter; $H5TOZARR_WANT_LISTING names the
call that `h5tozarr --version` must report):
  * a netCDF-4 file (netCDF4-python): deflate + shuffle, big-endian, Fletcher-32 + deflate, a variable with
    chunks never written (its _FillValue) and one along the unlimited dimension written for fewer records
    than the dimension has (netCDF's default fill there), a contiguous coordinate, a contiguous variable of
    9.8 MB (split into two references), a scalar, variable-length strings (copied into the references),
    a subgroup, typed attributes. libzarr reads every variable equal to netCDF4-python (raw values), the
    dimension names are netCDF's; xarray opens the references through fsspec ("reference://", engine
    zarr) equal to xarray opening the netCDF file (decoded and raw: masks, strings, attributes,
    dimensions); the subgroup's variable through zarr-python.
  * an h5py file: the references equal kerchunk's SingleHdf5ToZarr's (byte ranges, shapes, chunks,
    dtypes, filters) for what both translate; Fletcher-32 (which kerchunk refuses) and a compact dataset
    (copied in, the output says so) read equal to h5py by libzarr and zarr-python 3.1.6 (through fsspec);
    a scale-offset dataset and a chunk stored with its filter skipped (h5py's write_direct_chunk with a
    filter mask) are refused by name (exit 2, nothing written) and left out with --skip-unsupported
    (named in the output; none of the dataset's keys written).
  * the Parquet layout (OUT.parq, --record-size): .zmetadata holds the JSON's metadata, the record files
    (read by pandas / fastparquet) hold the JSON's references row by row in C order over the chunk grid,
    chunks never written as rows without path; read by libzarr and by xarray through fsspec's
    LazyReferenceMapper equal to the netCDF file; --overwrite replaces a Parquet reference directory,
    never a Zarr hierarchy.
  * --target-url: the references name a URL on the test HTTP server; libzarr reads them from there.
  * the output rules: an existing output is refused, then replaced with --overwrite (atomically: no
    temporary file left); the input itself (through a link named *.json), a JSON file that is not a
    reference file, and a directory are never replaced; a name not ending in .json and options that do
    not apply are refused. Each refusal leaves input and output unchanged.
"""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402
import zarr_ctypes as zc  # noqa: E402

np, h5py, netCDF4, xr, zarr, fsspec, kerchunk_hdf = harness.import_or_skip(
    "numpy", "h5py", "netCDF4", "xarray", "zarr", "fsspec", "kerchunk.hdf")
from tool_outputs import tree_hash  # noqa: E402

warnings.filterwarnings("ignore")
H5TOZARR = harness.tool_or_skip("H5TOZARR")


def virtual(src, out, *opts, expect=0):
    return harness.run_tool(H5TOZARR, "--virtual", *opts, src, out, expect=expect)


def make_netcdf(path):
    rng = np.random.default_rng(11)
    with netCDF4.Dataset(path, "w", format="NETCDF4") as nc:
        nc.title = "virtual"
        nc.setncattr("levels", np.array([1, 2, 3], dtype="i2"))
        nc.setncattr("scale", np.float32(0.5))
        nc.createDimension("time", None)
        nc.createDimension("lat", 5)
        nc.createDimension("lon", 7)
        nc.createDimension("y", 1200)
        nc.createDimension("x", 1024)
        lat = nc.createVariable("lat", "f8", ("lat",))
        lat[:] = np.linspace(-60, 60, 5)
        lat.units = "degrees_north"
        t = nc.createVariable("temp", "f4", ("time", "lat", "lon"), zlib=True, shuffle=True, complevel=4,
                              chunksizes=(2, 3, 4), fill_value=np.float32(-999.0))
        t[0:5] = rng.standard_normal((5, 5, 7)).astype("f4")
        t.units = "K"
        be = nc.createVariable("big", "i4", ("lat", "lon"), endian="big", zlib=True, chunksizes=(3, 3))
        be[:] = rng.integers(-2**31, 2**31 - 1, size=(5, 7), dtype="i4")
        fl = nc.createVariable("checked", "f4", ("lat", "lon"), zlib=True, fletcher32=True, chunksizes=(2, 7))
        fl[:] = rng.standard_normal((5, 7)).astype("f4")
        sp = nc.createVariable("sparse", "f4", ("lat", "lon"), chunksizes=(2, 2), fill_value=np.float32(1.5))
        sp[0:2, 0:2] = np.arange(4, dtype="f4").reshape(2, 2)
        rec = nc.createVariable("rec", "f4", ("time",), chunksizes=(2,))
        rec[0:3] = [1, 2, 3]  # time has 5 records: the last chunk is never written (netCDF's default fill)
        field = nc.createVariable("field", "f8", ("y", "x"), contiguous=True)
        field[:] = rng.standard_normal((1200, 1024))
        crs = nc.createVariable("crs", "i4", ())
        crs[...] = 4326
        crs.grid_mapping_name = "latitude_longitude"
        names = nc.createVariable("station", str, ("lat",))
        for i, s in enumerate(["alpha", "beta", "", "δέλτα", "e"]):
            names[i] = s
        g = nc.createGroup("grp")
        v = g.createVariable("counts", "i2", ("lat",), chunksizes=(2,), fill_value=np.int16(7), zlib=True)
        v[0:2] = [1, 2]
    want = {}
    with netCDF4.Dataset(path) as nc:
        nc.set_auto_maskandscale(False)
        for name in ("lat", "temp", "big", "checked", "sparse", "rec", "field", "crs"):
            want[name] = np.asarray(nc[name][...])
        want["grp/counts"] = np.asarray(nc["grp"]["counts"][...])
        want["station"] = [str(s) for s in nc["station"][...]]
    return want


def make_h5(path):
    rng = np.random.default_rng(12)
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
        f.create_dataset("cplx", data=(rng.standard_normal(12) + 1j * rng.standard_normal(12)).astype("c8"), chunks=(5,))
        f.create_dataset("flags", data=np.array([True, False, True]), chunks=(2,))
        f.create_dataset("label", data=np.array([b"ab", b"cde", b""], dtype="S3"))
        # a compact dataset: its data lies in the object header
        space = h5py.h5s.create_simple((4, 3))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        dsid = h5py.h5d.create(f.id, b"compact", h5py.h5t.STD_I16BE, space, dcpl=dcpl)
        h5py.Dataset(dsid)[...] = np.arange(12, dtype=">i2").reshape(4, 3)
    want = {}
    with h5py.File(path) as f:
        f.visititems(lambda n, o: want.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return want


def walk(group, prefix=""):
    out = {}
    for name, kind in group.children().items():
        full = f"{prefix}{name}"
        if kind == "array":
            out[full] = group.open_array(name)
        else:
            with group.open_group(name) as g:
                out.update(walk(g, full + "/"))
    return out


def check_equal(name, got, want):
    want = np.asarray(want)
    got = np.asarray(got)
    assert list(got.shape) == list(want.shape), f"{name}: shape {got.shape} != {want.shape}"
    if want.dtype.kind in "fc":
        assert np.array_equal(got, want, equal_nan=True), f"{name}: values differ"
    else:
        assert np.array_equal(got, want), f"{name}: values differ\n{got}\n{want}"


def libzarr_read_all(location, want, skip=()):
    """Opens `location` with libzarr, walks the groups and compares every array with `want`."""
    with zc.Group.open(location) as root:
        arrays = walk(root)
    try:
        missing = set(want) - set(arrays) - set(skip)
        assert not missing, f"{location}: arrays not found: {sorted(missing)} (found {sorted(arrays)})"
        for name, a in arrays.items():
            if name in skip or name not in want:
                continue
            w = want[name]
            if isinstance(w, list):  # strings
                check_equal(name, np.array(a.read_vlen(), dtype=object), np.array(w, dtype=object))
                continue
            w = np.asarray(w)
            got = np.frombuffer(a.read(), dtype=w.dtype.newbyteorder("=")).reshape(a.shape)
            check_equal(name, got, w)
        return {n: a.attributes for n, a in arrays.items()}
    finally:
        for a in arrays.values():
            a.close()


def reference_group(path):
    """zarr-python's group over fsspec's ReferenceFileSystem for the references at `path`."""
    return zarr.open_group("reference://", mode="r", storage_options={"fo": str(path)}, zarr_format=2)


class Files:
    def __init__(self, r):
        self.dir = r.path("files")
        self.dir.mkdir()
        self.nc = self.dir / "model.nc"
        self.h5 = self.dir / "plain.h5"
        self.nc_want = make_netcdf(self.nc)
        self.h5_want = make_h5(self.h5)


def t_netcdf(r, files):
    out = r.path("nc.json")
    p = virtual(files.nc, out)
    assert "station: copied into the references (variable-length strings" in p.stderr, p.stderr
    refs = json.loads(out.read_text())
    assert refs["version"] == 1
    # the contiguous 9.8 MB variable: two references of 4.9 MB, at the dataset's address
    field = json.loads(refs["refs"]["field/.zarray"])
    assert field["chunks"] == [600, 1024] and field["filters"] is None, field
    assert [refs["refs"]["field/0.0"][2], refs["refs"]["field/1.0"][2]] == [600 * 1024 * 8] * 2
    assert refs["refs"]["field/1.0"][1] == refs["refs"]["field/0.0"][1] + 600 * 1024 * 8
    assert json.loads(refs["refs"]["big/.zarray"])["dtype"] == ">i4"
    # HDF5's pipeline in its order (netCDF-C puts Fletcher-32 first)
    filters = json.loads(refs["refs"]["checked/.zarray"])["filters"]
    assert [f["id"] for f in filters] == ["fletcher32", "shuffle", "zlib"], filters
    # (a) libzarr
    attrs = libzarr_read_all(f"reference://{out}", files.nc_want)
    assert json.loads(attrs["temp"])["_ARRAY_DIMENSIONS"] == ["time", "lat", "lon"]
    assert json.loads(attrs["grp/counts"])["_ARRAY_DIMENSIONS"] == ["lat"]
    with zc.Group.open(f"reference://{out}") as root:
        top = json.loads(root.attributes)
    assert top["title"] == "virtual" and top["levels"] == [1, 2, 3] and top["scale"] == 0.5, top
    # (b) xarray through fsspec's reference filesystem, against xarray reading the netCDF file
    for decode in (True, False):
        ref_ds = xr.open_dataset("reference://", engine="zarr", mask_and_scale=decode,
                                 backend_kwargs={"storage_options": {"fo": str(out)}, "consolidated": False})
        nc_ds = xr.open_dataset(files.nc, engine="netcdf4", mask_and_scale=decode)
        assert set(ref_ds.variables) == set(nc_ds.variables), (sorted(ref_ds.variables), sorted(nc_ds.variables))
        assert dict(ref_ds.sizes) == dict(nc_ds.sizes), (dict(ref_ds.sizes), dict(nc_ds.sizes))
        for name in nc_ds.variables:
            a, b = ref_ds[name], nc_ds[name]
            assert a.dims == b.dims, f"{name}: dims {a.dims} != {b.dims}"
            if b.dtype.kind in "OUS":
                assert [str(x) for x in a.values.ravel()] == [str(x) for x in b.values.ravel()], name
            else:
                want = b.values
                if decode and "_FillValue" not in b.encoding and b.dtype.kind == "f":
                    # chunks never written of a variable without _FillValue hold netCDF's default fill, the
                    # references' fill_value: xarray masks it there (as netCDF4-python does by default;
                    # xarray's netcdf4 engine does not)
                    default = netCDF4.default_fillvals[b.dtype.str[1:]]
                    want = np.where(want == np.asarray(default, dtype=b.dtype), np.nan, want)
                check_equal(f"xarray {name} (decode={decode})", a.values, want)
            for k in ("units", "grid_mapping_name"):
                assert a.attrs.get(k) == b.attrs.get(k), f"{name}: attribute {k}"
        assert ref_ds.attrs["title"] == "virtual" and list(ref_ds.attrs["levels"]) == [1, 2, 3]
    # the subgroup through zarr-python (zarr-python 3.1.6 lists no member of a subgroup of fsspec's
    # ReferenceFileSystem, kerchunk's references alike, so xarray's group= finds nothing there)
    g = reference_group(out)
    check_equal("zarr-python grp/counts", g["grp/counts"][...], files.nc_want["grp/counts"])
    assert g["grp/counts"].fill_value == 7


def t_h5py(r, files):
    out = r.path("h5.json")
    p = virtual(files.h5, out)
    assert "compact: copied into the references (a compact dataset" in p.stderr, p.stderr
    libzarr_read_all(f"reference://{out}", files.h5_want)
    # zarr-python 3.1.6 through fsspec: numcodecs' zlib, shuffle, fletcher32 decode HDF5's bytes
    g = reference_group(out)
    for name, want in files.h5_want.items():
        check_equal(f"zarr-python {name}", g[name][...], want)
    # the references equal kerchunk's where both translate (kerchunk refuses Fletcher-32, and inlines the
    # compact dataset and the strings its own way)
    with open(files.h5, "rb") as fh:
        kref = kerchunk_hdf.SingleHdf5ToZarr(fh, url=str(files.h5.resolve()), inline_threshold=0).translate()["refs"]
    mine = json.loads(out.read_text())["refs"]
    compared = 0
    for key, v in kref.items():
        name = key.rsplit("/", 1)[0]
        if name.startswith(("fletcher", "compact", "label")):
            continue
        if key.endswith("/.zarray"):
            a, b = json.loads(mine[key]), json.loads(v)
            for k in ("shape", "chunks", "dtype", "filters", "compressor"):
                assert a[k] == b[k], f"{key}: {k} {a[k]} != kerchunk's {b[k]}"
            compared += 1
        elif isinstance(v, list):
            assert mine.get(key) == v, f"{key}: {mine.get(key)} != kerchunk's {v}"
            compared += 1
    assert compared > 20, compared


def t_unsupported(r, files):
    src = r.path("scaleoffset.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("packed", data=np.arange(100, dtype="i4"), chunks=(50,), scaleoffset=0)
        f.create_dataset("plain", data=np.arange(10, dtype="i4"))
    out = r.path("so.json")
    p = virtual(src, out, expect=2)
    assert "/packed: the HDF5 filter scale-offset (id 6)" in p.stderr and "--skip-unsupported" in p.stderr, p.stderr
    assert not out.exists() and not [x for x in os.listdir(out.parent) if "so.json" in x], "output written"
    p = virtual(src, out, "--skip-unsupported")
    assert "/packed: skipped: the HDF5 filter scale-offset" in p.stderr, p.stderr
    with zc.Group.open(f"reference://{out}") as root:
        assert sorted(root.children()) == ["plain"], root.children()
    # a chunk stored with its deflate filter skipped (filter mask 1): no reference can say so
    with h5py.File(src, "a") as f:
        del f["packed"]
        m = f.create_dataset("masked", shape=(8,), chunks=(4,), dtype="i4", compression="gzip")
        m[0:4] = [1, 2, 3, 4]
        # HDF5 records the mask in the chunk index (H5Dget_chunk_info reports it)
        m.id.write_direct_chunk((4,), np.arange(4, dtype="i4").tobytes(), filter_mask=1)
    out = r.path("masked.json")
    p = virtual(src, out, expect=2)
    assert "/masked: a chunk was stored with HDF5 filters skipped (filter mask 0x1)" in p.stderr, p.stderr
    assert not out.exists()
    p = virtual(src, out, "--skip-unsupported")
    assert "/masked: skipped: a chunk was stored with HDF5 filters skipped" in p.stderr, p.stderr
    assert not [k for k in json.loads(out.read_text())["refs"] if k.startswith("masked")], "masked left in"
    with zc.Group.open(f"reference://{out}") as root:
        assert sorted(root.children()) == ["plain"], root.children()
    check_equal("plain", reference_group(out)["plain"][...], np.arange(10, dtype="i4"))
    # netCDF-C's order, Fletcher-32 then shuffle: for 8-byte elements the checksum is not a whole element,
    # which HDF5's shuffle keeps in place and numcodecs' refuses
    nc = r.path("fletcher8.nc")
    with netCDF4.Dataset(nc, "w") as ds:
        ds.createDimension("n", 10)
        ds.createVariable("f8", "f8", ("n",), zlib=True, fletcher32=True, chunksizes=(5,))[:] = np.arange(10.0)
        ds.createVariable("i2", "i2", ("n",), zlib=True, fletcher32=True, chunksizes=(5,))[:] = np.arange(10)
    out = r.path("f8.json")
    p = virtual(nc, out, expect=2)
    assert "/f8: Fletcher-32 before shuffle of 8-byte elements" in p.stderr, p.stderr
    assert not out.exists()
    p = virtual(nc, out, "--skip-unsupported")
    assert "/f8: skipped: Fletcher-32 before shuffle" in p.stderr, p.stderr
    g = reference_group(out)
    assert sorted(g.array_keys()) == ["i2"], sorted(g.array_keys())
    check_equal("i2 (Fletcher-32, shuffle of 2-byte elements)", g["i2"][...], np.arange(10, dtype="i2"))
    libzarr_read_all(f"reference://{out}", {"i2": np.arange(10, dtype="i2")})


def t_target_url(r, files):
    from remote_servers import RangeHTTPServer

    with RangeHTTPServer(files.dir) as srv:
        out = r.path("http.json")
        virtual(files.h5, out, "--target-url", f"{srv.url}/{files.h5.name}")
        refs = json.loads(out.read_text())["refs"]
        assert refs["deflate_shuffle/0.0"][0] == f"{srv.url}/plain.h5"
        libzarr_read_all(f"reference://{out}", files.h5_want)
        assert srv.by_method.get("GET", 0) > 0


def t_parquet(r, files):
    import pandas as pd

    js = r.path("nc.json")
    virtual(files.nc, js)
    refs = json.loads(js.read_text())["refs"]
    out = r.path("nc.parq")
    virtual(files.nc, out, "--record-size", "3")
    assert sorted(x.name for x in out.iterdir())[:2] == [".zmetadata", "big"], sorted(out.iterdir())
    meta = json.loads((out / ".zmetadata").read_text())
    assert meta["record_size"] == 3, meta["record_size"]
    assert json.loads(refs["temp/.zarray"]) == meta["metadata"]["temp/.zarray"], meta["metadata"]["temp/.zarray"]
    # temp: 3 x 2 x 2 chunks in C order, 3 rows a file: the rows are the JSON's references
    grid = (3, 2, 2)
    for n in range(12):
        df = pd.read_parquet(out / "temp" / f"refs.{n // 3}.parq", engine="fastparquet")
        assert len(df) == 3 and list(df.columns) == ["path", "offset", "size", "raw"], df
        row = df.iloc[n % 3]
        idx = np.unravel_index(n, grid)
        want = refs.get("temp/" + ".".join(map(str, idx)))
        assert [row["path"], row["offset"], row["size"]] == want, (n, row, want)
    # sparse: the chunks never written are rows without path or raw
    df = pd.concat([pd.read_parquet(p, engine="fastparquet") for p in sorted((out / "sparse").glob("refs.*.parq"))])
    stored = sum(1 for k in refs if k.startswith("sparse/") and "/." not in k)
    assert len(df) == 3 * 4 and df["path"].isna().sum() == 12 - stored, (len(df), df["path"].isna().sum(), stored)
    # read by libzarr and by xarray through fsspec's LazyReferenceMapper, equal to the JSON's readings
    libzarr_read_all(f"reference://{out}", files.nc_want)
    a = xr.open_dataset("reference://", engine="zarr", mask_and_scale=False,
                        backend_kwargs={"storage_options": {"fo": str(out), "remote_protocol": "file"}, "consolidated": False})
    b = xr.open_dataset(files.nc, engine="netcdf4", mask_and_scale=False)
    for name in ("temp", "big", "checked", "sparse", "rec", "field", "lat", "crs", "station"):
        if b[name].dtype.kind in "OUS":
            assert [str(x) for x in a[name].values] == [str(x) for x in b[name].values], name
        else:
            check_equal(f"xarray (Parquet) {name}", a[name].values, b[name].values)
    # --overwrite replaces a Parquet reference directory, never a Zarr hierarchy
    virtual(files.nc, out, "--overwrite")
    assert json.loads((out / ".zmetadata").read_text())["record_size"] == 10000
    zdir = r.path("hier.parq")
    zdir.mkdir()
    (zdir / ".zgroup").write_text('{"zarr_format": 2}')
    (zdir / ".zmetadata").write_text("{}")
    before = tree_hash(zdir)
    p = virtual(files.nc, zdir, "--overwrite", expect=1)
    assert "not a Parquet reference directory" in p.stderr, p.stderr
    assert tree_hash(zdir) == before
    assert not [x for x in out.parent.iterdir() if x.name.startswith(".h5tozarr-")], "temporary output left"


def t_output_rules(r, files):
    d = r.path("rules")
    d.mkdir()
    src = d / "in.h5"
    src.write_bytes(files.h5.read_bytes())
    out = d / "refs.json"
    virtual(src, out)
    first = out.read_text()
    before = (tree_hash(src), tree_hash(out))
    p = virtual(src, out, expect=1)
    assert "the output exists (--overwrite replaces it)" in p.stderr, p.stderr
    virtual(src, out, "--overwrite")
    assert out.read_text() == first
    assert sorted(x.name for x in d.iterdir()) == ["in.h5", "refs.json"], "temporary file left"
    # never the input (through a link named .json), never another JSON file or a directory
    link = d / "in.json"
    link.symlink_to(src)
    p = virtual(src, link, "--overwrite", expect=1)
    assert "is the input itself" in p.stderr, p.stderr
    other = d / "other.json"
    other.write_text('{"name": "not references"}')
    p = virtual(src, other, "--overwrite", expect=1)
    assert "not a kerchunk JSON reference file" in p.stderr, p.stderr
    assert other.read_text() == '{"name": "not references"}'
    (d / "dir.json").mkdir()
    p = virtual(src, d / "dir.json", "--overwrite", expect=1)
    assert "is a directory" in p.stderr, p.stderr
    p = virtual(src, d / "refs.zarr", expect=1)
    assert "to a name ending in .json (JSON) or .parq" in p.stderr, p.stderr
    p = virtual(src, out, "--codec", "zstd", "--overwrite", expect=1)
    assert "do not apply" in p.stderr, p.stderr
    assert (tree_hash(src), tree_hash(out)) == before, "a refused run changed the input or the output"


def t_listing(r, files):
    """`h5tozarr --version` names the HDF5 call that lists chunks; $H5TOZARR_WANT_LISTING (set by CMake:
    H5Dget_chunk_info before HDF5 1.14, H5Dchunk_iter from 1.14 on) is the one this run must test."""
    p = harness.run_tool(H5TOZARR, "--version")
    want = os.environ.get("H5TOZARR_WANT_LISTING")
    assert f"--virtual lists chunks with {want or ''}" in p.stdout, p.stdout
    print(p.stdout.strip())


def main():
    args = harness.parse_args(__doc__)
    harness.load_library()
    r = harness.Runner.in_scratch(args)
    files = Files(r)
    r.run("listing", t_listing, r, files)
    r.run("netcdf", t_netcdf, r, files)
    r.run("h5py", t_h5py, r, files)
    r.run("unsupported", t_unsupported, r, files)
    r.run("target_url", t_target_url, r, files)
    r.run("parquet", t_parquet, r, files)
    r.run("output_rules", t_output_rules, r, files)
    r.finish()


if __name__ == "__main__":
    main()
