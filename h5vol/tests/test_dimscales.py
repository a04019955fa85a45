#!/usr/bin/env python3
"""Interop: dimension scales through the VOL connector libzarr_h5vol, both ways, checked against xarray,
zarr-python and h5netcdf.

    HDF5_PLUGIN_PATH=<dir of libzarr_h5vol.so> HDF5_VOL_CONNECTOR=zarr LD_PRELOAD=<libzarr_h5vol_v1api.so> \\
        python3 h5vol/tests/test_dimscales.py [-v] [-k S]

Exit status: 0 all passed, 1 a failure, 77 skipped (h5py, xarray, h5netcdf or zarr-python missing, or the
variables unset; under CI=true a skip is a failure). h5vol/h5vol.cmake sets the variables (test
h5vol.dimscales, and h5vol.dimscales_hdf5v2 under h5py 3.16 / HDF5 2.0.0).

Covered, for Zarr v3 and v2 hierarchies:
  * h5py writes (make_scale, dims[i].attach_scale, detach_scale, dims[i].label): zarr-python finds the
    dimension names (v3 dimension_names, v2 _ARRAY_DIMENSIONS) and none of the H5DS attributes stored, and
    xarray opens the hierarchy with the dimensions and coordinates attached, values equal as xarray decodes
    them by default (a v2 dataset without an HDF5 fill value has fill_value null: a 0.0 stays 0.0, not NaN),
    the connector's `_libzarr_hdf5` record (the attribute types) a string attribute, and writes the Dataset
    to netCDF-4 (a child without the connector; netCDF4-python reads the values and the record back);
  * maximum dimensions: unlimited only where the writer made them so (h5netcdf's unlimited dimension, the
    record's unlimited_dimensions), the size elsewhere (what xarray wrote: no unlimited dimension);
  * xarray writes: h5py sees the dimension scales (dims, is_scale, DIMENSION_LIST references dereferenced,
    REFERENCE_LIST, object references), h5netcdf sees the dimensions and variables, and xarray through
    h5netcdf (engine="h5netcdf") reads a Dataset identical to the one written;
  * h5netcdf writes a netCDF-style hierarchy through the connector (fill values, missing_value, a dimension
    without a variable, a subgroup using the root's dimension): netCDF's internal attributes (_NCProperties,
    _Netcdf4Dimid, _Netcdf4Coordinates, NAME) are in the `_libzarr_hdf5` record, not Zarr attributes;
    xarray (open_zarr, no warning) and zarr-python read the dimensions, coordinates and values; xarray's
    to_netcdf of it reads in netCDF-C (netCDF4-python) as the same code's native netCDF-4 file does
    (dimensions, variables, dtypes, values, attributes; the dimension without a variable shows as one); and
    h5netcdf and h5py read back the internal attributes and the dimensions (across groups) through the
    connector;
  * h5py writes datasets without dimension scales: each dimension is named as netCDF-C names it in the same
    h5py code's native file (phony_dim_N, shared by length within the group; netCDF4-python reads the
    native file), xarray opens the hierarchy, h5py sees no scale attached; a detached dimension gets a
    phony name too, and so does a resized one (xarray opens it: no two lengths for one name);
  * without libzarr_h5vol_v1api preloaded (a child process): no H5DS attribute is shown, and attach_scale
    fails with an exception, leaving the names as they were.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tools"))
sys.path.insert(0, str(HERE.parents[1] / "tests" / "interop"))


def skip(msg):
    if os.environ.get("CI", "").lower() == "true":
        print(f"FAIL: {msg} (CI=true: everything this test needs must be there)")
        sys.exit(1)
    print(f"SKIPPED: {msg}")
    sys.exit(77)


if os.environ.get("HDF5_VOL_CONNECTOR") != "zarr" or not os.environ.get("HDF5_PLUGIN_PATH"):
    skip("set HDF5_PLUGIN_PATH to the directory of libzarr_h5vol.so and HDF5_VOL_CONNECTOR=zarr")
if "libzarr_h5vol_v1api" not in os.environ.get("LD_PRELOAD", ""):
    skip("preload libzarr_h5vol_v1api.so (LD_PRELOAD): dimension scales need it")
try:
    import h5py
    import h5netcdf
    import numpy as np
    import xarray as xr
    import zarr
except ImportError as e:
    skip(str(e))
import harness  # noqa: E402

# h5vol.dimscales_hdf5v2 runs this under h5py 3.16 (HDF5 2.0.0) and sets ZARR_H5VOL_WANT_HDF5=2: another
# HDF5 there is a missing prerequisite, never a pass of the wrong thing
_want = os.environ.get("ZARR_H5VOL_WANT_HDF5")
if _want and h5py.version.hdf5_version.split(".")[0] != _want:
    skip(f"h5py {h5py.version.version} carries HDF5 {h5py.version.hdf5_version}, this run needs HDF5 {_want}.x "
         f"(tools/requirements-h5py316.txt)")

print(f"h5py {h5py.version.version}, HDF5 {h5py.version.hdf5_version}, h5netcdf {h5netcdf.__version__}, "
      f"xarray {xr.__version__}, zarr-python {zarr.__version__}")

H5DS_ATTRS = {"CLASS", "NAME", "REFERENCE_LIST", "DIMENSION_LIST"}


def dim_names(path, fmt):
    """The dimension names zarr-python reads: v3 metadata, v2 the _ARRAY_DIMENSIONS attribute."""
    a = zarr.open_array(path, mode="r")
    if fmt == 3:
        names = a.metadata.dimension_names
        return list(names) if names is not None else None
    return a.attrs.get("_ARRAY_DIMENSIONS")


def stored_attrs(path):
    return set(zarr.open_array(path, mode="r").attrs)


def in_format(fmt, code, *args):
    """Runs `code` (a Python script) in a child process whose connector makes Zarr v`fmt` hierarchies."""
    env = dict(os.environ)
    env["HDF5_VOL_CONNECTOR"] = f"zarr zarr_format={fmt}"
    p = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, f"child failed:\n{p.stdout}\n{p.stderr}"
    return p.stdout


H5PY_WRITES = r"""
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:
    x = f.create_dataset("x", data=np.arange(3.0) * 10)
    t = f.create_dataset("time", data=np.array([1, 2], "i4"))
    d = f.create_dataset("data", data=np.arange(6, dtype="f4").reshape(2, 3))
    e = f.create_dataset("extra", data=np.arange(3, dtype="i2"))
    f.attrs["title"] = "written by h5py"
    d.attrs["valid_max"] = np.int16(100)
    x.make_scale("x")
    t.make_scale("time")
    assert x.is_scale and t.is_scale and not d.is_scale
    d.dims[0].attach_scale(t)
    d.dims[1].attach_scale(x)
    e.dims[0].attach_scale(x)
    d.dims[1].label = "east"
    assert [len(dim) for dim in d.dims] == [1, 1], [len(dim) for dim in d.dims]
    assert d.dims[1].label == "east"
"""


TO_NETCDF = r"""
import json, sys, netCDF4, xarray as xr
zarr_path, nc_path, fmt = sys.argv[1], sys.argv[2], int(sys.argv[3])
with xr.open_zarr(zarr_path, consolidated=False, zarr_format=fmt) as ds:
    ds.to_netcdf(nc_path, engine="netcdf4")
with netCDF4.Dataset(nc_path) as nc:
    print(json.dumps({"attrs": {k: nc.getncattr(k) for k in nc.ncattrs()},
                      "vars": {n: [list(v.dimensions), v[:].tolist(), sorted(v.ncattrs())]
                               for n, v in nc.variables.items()}}))
"""


def to_netcdf(r, root, fmt, tag):
    """xarray's to_netcdf (netCDF4 engine) of the hierarchy at root, in a child without the connector; what
    netCDF4-python reads back: {"attrs": root attributes, "vars": {name: [dims, values, attribute names]}}."""
    env = {k: v for k, v in os.environ.items() if k not in ("HDF5_VOL_CONNECTOR", "LD_PRELOAD")}
    nc = r.path(f"{tag}.nc")
    p = subprocess.run([sys.executable, "-c", TO_NETCDF, root, nc, str(fmt)], env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, f"xarray's to_netcdf failed:\n{p.stdout}\n{p.stderr}"
    return json.loads(p.stdout)


def t_h5py_writes(r):
    for fmt in (3, 2):
        root = r.path(f"h5py_v{fmt}.zarr")
        in_format(fmt, H5PY_WRITES, root)
        assert dim_names(f"{root}/data", fmt) == ["time", "x"], dim_names(f"{root}/data", fmt)
        assert dim_names(f"{root}/x", fmt) == ["x"] and dim_names(f"{root}/time", fmt) == ["time"]
        assert dim_names(f"{root}/extra", fmt) == ["x"], dim_names(f"{root}/extra", fmt)
        for name in ("data", "x", "time", "extra"):   # nothing of H5DS's is stored
            assert not stored_attrs(f"{root}/{name}") & H5DS_ATTRS, (name, stored_attrs(f"{root}/{name}"))
        assert zarr.open_array(f"{root}/data", mode="r").attrs["DIMENSION_LABELS"] == ["", "east"]
        ds = xr.open_zarr(root, consolidated=False, zarr_format=fmt).load()
        assert ds["data"].dims == ("time", "x") and ds["extra"].dims == ("x",), ds
        assert set(ds.coords) == {"time", "x"}, ds.coords
        np.testing.assert_array_equal(ds["x"].values, np.arange(3.0) * 10)
        np.testing.assert_array_equal(ds["time"].values, [1, 2])
        np.testing.assert_array_equal(ds["data"].values, np.arange(6, dtype="f4").reshape(2, 3))
        # the connector's record of the attribute types is a string to xarray (JSON text), not a dict, so
        # the Dataset goes back to netCDF-4 (issue 33), the record a text attribute there
        rec = ds.attrs["_libzarr_hdf5"]
        assert isinstance(rec, str) and json.loads(rec) == {"attribute_types": {"title": "string"}}, rec
        rec = ds["data"].attrs["_libzarr_hdf5"]
        assert isinstance(rec, str) and json.loads(rec)["attribute_types"]["valid_max"] == "int16", rec
        got = to_netcdf(r, root, fmt, f"h5py_v{fmt}")
        assert got["attrs"] == {"title": "written by h5py", "_libzarr_hdf5": ds.attrs["_libzarr_hdf5"]}, got
        assert got["vars"]["data"][:2] == [["time", "x"], [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]], got["vars"]
        assert "_libzarr_hdf5" in got["vars"]["data"][2] and "valid_max" in got["vars"]["data"][2], got["vars"]
        # h5py's view of what it wrote, and a detach
        with h5py.File(root, "a") as f:
            d, x, t = f["data"], f["x"], f["time"]
            assert [[s.name for s in dim.values()] for dim in d.dims] == [["/time"], ["/x"]]
            assert sorted(d.attrs) == ["DIMENSION_LABELS", "DIMENSION_LIST", "valid_max"], sorted(d.attrs)
            assert d.attrs["valid_max"].dtype == np.int16 and d.attrs["valid_max"] == 100
            assert sorted(x.attrs) == ["CLASS", "NAME", "REFERENCE_LIST"], sorted(x.attrs)
            refs = sorted((f[ref].name, int(dim)) for ref, dim in x.attrs["REFERENCE_LIST"])
            assert refs == [("/data", 1), ("/extra", 0)], refs
            assert x.attrs["NAME"] == b"x" and x.attrs["CLASS"] == b"DIMENSION_SCALE"
            d.dims[0].detach_scale(t)
            assert len(d.dims[0]) == 0 and len(d.dims[1]) == 1
            e = f["extra"]
            e.dims[0].detach_scale(x)   # the last one: H5DS deletes DIMENSION_LIST
            assert "DIMENSION_LIST" not in e.attrs and len(e.dims[0]) == 0
        # a detached dimension gets netCDF's phony name, shared by length within the group (xarray opens it)
        assert dim_names(f"{root}/data", fmt) == ["phony_dim_0", "x"], dim_names(f"{root}/data", fmt)
        assert dim_names(f"{root}/extra", fmt) == ["phony_dim_1"], dim_names(f"{root}/extra", fmt)
        ds = xr.open_zarr(root, consolidated=False, zarr_format=fmt)
        assert dict(ds.sizes) == {"phony_dim_0": 2, "x": 3, "phony_dim_1": 3, "time": 2}, dict(ds.sizes)


H5PY_PLAIN = r"""
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "w") as f:   # in name order, as netCDF-C visits a plain HDF5 file's members
    f["a"] = np.arange(12.0).reshape(3, 4)
    f["b"] = np.zeros((4, 3), "i2")
    f["c"] = np.ones((3, 3), "f4")
    f["d"] = np.arange(5)
    f["s"] = 1.5
"""

NC_DIMS = r"""
import json, sys, netCDF4
with netCDF4.Dataset(sys.argv[1]) as nc:
    print(json.dumps({n: list(v.dimensions) for n, v in nc.variables.items()}))
"""


def t_h5py_plain(r):
    """Datasets without dimension scales: named as netCDF-C names them in a plain HDF5 file (phony_dim_N,
    shared by length within the group), so xarray opens what h5py wrote."""
    native = r.path("plain.h5")
    child(H5PY_PLAIN, native)
    want = json.loads(child(NC_DIMS, native))   # netCDF-C's names for the native file
    assert want["a"] == ["phony_dim_0", "phony_dim_1"], want
    for fmt in (3, 2):
        root = r.path(f"plain_v{fmt}.zarr")
        in_format(fmt, H5PY_PLAIN, root)
        got = {n: dim_names(f"{root}/{n}", fmt) for n in want}
        if fmt == 3:   # a v3 scalar names no dimension: dimension_names absent
            got["s"] = got["s"] or []
        assert got == want, (got, want)
        ds = xr.open_zarr(root, consolidated=False, zarr_format=fmt).load()
        np.testing.assert_array_equal(ds["a"].values, np.arange(12.0).reshape(3, 4))
        assert ds["c"].dims == ("phony_dim_0", "phony_dim_2") and ds["s"].dims == (), ds
        with h5py.File(root, "a") as f:   # no scale shows where none was attached
            assert all(len(dim) == 0 for dim in f["a"].dims) and "DIMENSION_LIST" not in f["a"].attrs
            f["a"].resize((5, 4))   # its first dimension leaves phony_dim_0 (3) for d's phony_dim_3 (5)
        assert dim_names(f"{root}/a", fmt) == ["phony_dim_3", "phony_dim_1"], dim_names(f"{root}/a", fmt)
        ds = xr.open_zarr(root, consolidated=False, zarr_format=fmt)
        assert dict(ds.sizes) == {"phony_dim_0": 3, "phony_dim_1": 4, "phony_dim_2": 3, "phony_dim_3": 5}, ds


def netcdf_like():
    return xr.Dataset(
        {"t2m": (("time", "lat", "lon"), np.arange(24, dtype="f4").reshape(2, 3, 4), {"units": "K"}),
         "mask": (("lat", "lon"), np.arange(12, dtype="i2").reshape(3, 4) % 2)},
        coords={"time": np.array([0, 6], "i8"), "lat": [10.0, 20.0, 30.0], "lon": np.arange(4, dtype="f4")},
        attrs={"title": "a netCDF-like dataset"})


def t_xarray_writes(r):
    src = netcdf_like()
    for fmt in (3, 2):
        root = r.path(f"xarray_v{fmt}.zarr")
        src.to_zarr(root, zarr_format=fmt, consolidated=False)
        with h5py.File(root, "r") as f:
            t2m = f["t2m"]
            assert [[s.name for s in dim.values()] for dim in t2m.dims] == [["/time"], ["/lat"], ["/lon"]]
            assert all(f[c].is_scale for c in ("time", "lat", "lon")) and not t2m.is_scale
            assert [f[refs[0]].name for refs in t2m.attrs["DIMENSION_LIST"]] == ["/time", "/lat", "/lon"]
            refs = sorted((f[ref].name, int(dim)) for ref, dim in f["lon"].attrs["REFERENCE_LIST"])
            assert refs == [("/mask", 1), ("/t2m", 2)], refs
            assert f[f["mask"].ref].name == "/mask"
            np.testing.assert_array_equal(t2m.dims[1][0][()], src["lat"].values)
            assert t2m.maxshape == t2m.shape, t2m.maxshape   # no dimension is unlimited without a record
        with h5netcdf.File(root, "r") as f:
            assert {k: len(v) for k, v in f.dimensions.items()} == {"time": 2, "lat": 3, "lon": 4}, f.dimensions
            assert not any(v.isunlimited() for v in f.dimensions.values()), f.dimensions
            got = {k: v.dimensions for k, v in f.variables.items()}
            assert got == {"t2m": ("time", "lat", "lon"), "mask": ("lat", "lon"), "time": ("time",),
                           "lat": ("lat",), "lon": ("lon",)}, got
        with xr.open_dataset(root, engine="h5netcdf") as ds:
            xr.testing.assert_identical(ds.load(), src)
        assert not stored_attrs(f"{root}/t2m") & H5DS_ATTRS   # reading stored nothing


H5NETCDF_WRITES = r"""
import sys, h5netcdf, numpy as np
with h5netcdf.File(sys.argv[1], "w") as f:
    f.dimensions = {"x": 3, "time": None, "nv": 2}
    f.attrs["title"] = "written by h5netcdf"
    x = f.create_variable("x", ("x",), "f8", data=[1.0, 2.0, 3.0])
    t = f.create_variable("time", ("time",), "i4")
    f.resize_dimension("time", 2)
    t[:] = [5, 6]
    w = f.create_variable("w", ("time", "x"), "f4", fillvalue=np.float32(1e20))
    w[:] = np.arange(6, dtype="f4").reshape(2, 3)
    w[1, 2] = np.float32(1e20)
    w.attrs["units"] = "m"
    w.attrs["missing_value"] = np.float32(1e20)   # equal to _FillValue, as CMIP writes them
    w.attrs["scale_factor"] = np.float32(2)
    b = f.create_variable("b", ("x", "nv"), "i2", fillvalue=np.int16(-1))
    b[:2] = np.arange(4, dtype="i2").reshape(2, 2)
    s = f.create_group("sub")
    s.dimensions = {"y": 2}
    s.create_variable("v", ("y", "x"), "i2", data=np.ones((2, 3), "i2"))
"""

NC_DUMP = r"""
import json, sys, netCDF4, numpy as np
def plain(v):
    return v.tolist() if hasattr(v, "tolist") else v
with netCDF4.Dataset(sys.argv[1]) as nc:
    nc.set_auto_mask(False)
    nc.set_auto_scale(False)
    print(json.dumps({"dims": {k: len(d) for k, d in nc.dimensions.items()},
                      "attrs": {k: plain(nc.getncattr(k)) for k in nc.ncattrs()},
                      "vars": {n: [list(v.dimensions), str(v.dtype), v[:].tolist(),
                                   {k: plain(v.getncattr(k)) for k in v.ncattrs()}]
                               for n, v in nc.variables.items()},
                      "groups": {g: {n: list(v.dimensions) for n, v in grp.variables.items()}
                                 for g, grp in nc.groups.items()}}))
"""

TO_NETCDF_ONLY = r"""
import sys, warnings, xarray as xr
warnings.simplefilter("error")   # no "multiple fill values" or other warning
with xr.open_zarr(sys.argv[1], consolidated=False, zarr_format=int(sys.argv[3])) as ds:
    ds.to_netcdf(sys.argv[2], engine="netcdf4")
"""


def child(code, *args, connector=False):
    """Runs `code` in a child process, with or without the connector; its stdout."""
    env = dict(os.environ)
    if not connector:
        env = {k: v for k, v in env.items() if k not in ("HDF5_VOL_CONNECTOR", "LD_PRELOAD")}
    p = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, f"child failed:\n{p.stdout}\n{p.stderr}"
    return p.stdout


NC_INTERNAL = {"_Netcdf4Dimid", "_Netcdf4Coordinates", "_NCProperties", "_nc3_strict", "_IsNetcdf4",
               "_SuperblockVersion"}


def t_h5netcdf_writes(r):
    # what netCDF-C reads from the same h5netcdf code writing a native netCDF-4 file
    native = r.path("h5netcdf_native.nc")
    child(H5NETCDF_WRITES, native)
    want = json.loads(child(NC_DUMP, native))
    # and what it reads after the same file went through xarray (open_dataset, to_netcdf): xarray adds its
    # own encodings (a NaN _FillValue on floats without one), the same for either source
    via_xr = r.path("h5netcdf_native_xr.nc")
    child(TO_NETCDF_ONLY.replace("xr.open_zarr(sys.argv[1], consolidated=False, zarr_format=int(sys.argv[3]))",
                                 "xr.open_dataset(sys.argv[1], engine='netcdf4')"), native, via_xr, 0)
    want_xr = json.loads(child(NC_DUMP, via_xr))
    for fmt in (3, 2):
        root = r.path(f"h5netcdf_v{fmt}.zarr")
        in_format(fmt, H5NETCDF_WRITES, root)
        assert dim_names(f"{root}/w", fmt) == ["time", "x"], dim_names(f"{root}/w", fmt)
        assert dim_names(f"{root}/sub/v", fmt) == ["y", "x"], dim_names(f"{root}/sub/v", fmt)
        # netCDF's internal attributes are kept in the record, not as Zarr attributes (issue 33)
        for node in ("", "x", "time", "nv", "w", "b", "sub", "sub/v", "sub/y"):
            z = zarr.open(f"{root}/{node}" if node else root, mode="r")
            assert not set(z.attrs) & (NC_INTERNAL | H5DS_ATTRS), (node, dict(z.attrs))
        rec = json.loads(zarr.open_group(root, mode="r").attrs["_libzarr_hdf5"])
        assert rec["hdf5_attributes"]["_NCProperties"].startswith("version=2,h5netcdf="), rec
        assert rec["attribute_types"]["_NCProperties"] == "char", rec
        rec = json.loads(zarr.open_array(f"{root}/x", mode="r").attrs["_libzarr_hdf5"])
        assert rec["hdf5_attributes"] == {"_Netcdf4Dimid": 0, "_Netcdf4Coordinates": [0]}, rec
        # the fill attributes as xarray reads them: one value (h5netcdf writes shape (1,)), equal
        wattrs = zarr.open_array(f"{root}/w", mode="r").attrs
        assert wattrs["missing_value"] == 1.0000000200408773e+20 and wattrs["scale_factor"] == 2.0, dict(wattrs)
        assert wattrs["_FillValue"] == ("AAAAgB2vFUQ=" if fmt == 3 else 1.0000000200408773e+20), dict(wattrs)
        ds = xr.open_zarr(root, consolidated=False, zarr_format=fmt).load()
        assert ds["w"].dims == ("time", "x") and set(ds.coords) == {"time", "x", "nv"}, ds
        np.testing.assert_array_equal(ds["w"].values, [[0, 2, 4], [6, 8, np.nan]])   # decoded: scaled, masked
        np.testing.assert_array_equal(ds["time"].values, [5, 6])
        np.testing.assert_array_equal(ds["x"].values, [1.0, 2.0, 3.0])
        assert ds["w"].attrs["units"] == "m" and ds.attrs["title"] == "written by h5netcdf"
        # the connector's record of the attribute types is a string to xarray (JSON text), no dict attribute
        recs = {k: v.attrs.get("_libzarr_hdf5") for k, v in [("/", ds)] + list(ds.variables.items())}
        assert isinstance(recs["/"], str) and json.loads(recs["/"])["attribute_types"]["title"] == "string", recs
        assert all(rec is None or isinstance(rec, str) for rec in recs.values()), recs
        assert not any(set(v.attrs) & (NC_INTERNAL | H5DS_ATTRS) for v in ds.variables.values()), ds
        # back to netCDF-4 through xarray: netCDF-C reads what it reads from h5netcdf's native file
        nc = r.path(f"h5netcdf_v{fmt}_back.nc")
        child(TO_NETCDF_ONLY, root, nc, fmt)
        got = json.loads(child(NC_DUMP, nc))
        assert {k: v for k, v in got["attrs"].items() if k != "_libzarr_hdf5"} == want["attrs"], got["attrs"]
        assert got["dims"] == want["dims"], (got["dims"], want["dims"])
        # a netCDF dimension without a variable (nv) is an array of fill values in Zarr: xarray shows it
        assert set(got["vars"]) == set(want["vars"]) | {"nv"}, (set(got["vars"]), set(want["vars"]))
        for name, (dims, dtype, values, attrs) in want["vars"].items():
            gdims, gdtype, gvalues, gattrs = got["vars"][name]
            assert (gdims, gdtype, gvalues) == (dims, dtype, values), (name, got["vars"][name], want["vars"][name])
            gattrs = {k: v for k, v in gattrs.items() if k != "_libzarr_hdf5"}
            assert gattrs == want_xr["vars"][name][3], (name, gattrs, want_xr["vars"][name][3])
            assert {k: v for k, v in gattrs.items() if k != "_FillValue" or k in attrs} == attrs, (name, attrs)
        # through the connector, h5netcdf and h5py see netCDF's attributes and dimensions again
        with h5netcdf.File(root, "r") as f:
            assert {k: len(v) for k, v in f.dimensions.items()} == {"x": 3, "time": 2, "nv": 2}, f.dimensions
            # unlimited only where h5netcdf made it so (HDF5's maximum dimensions, the record)
            assert {k: v.isunlimited() for k, v in f.dimensions.items()} == {"x": False, "time": True,
                                                                              "nv": False}, f.dimensions
            assert set(f.variables) == {"x", "time", "w", "b"}, set(f.variables)
            assert f.variables["w"].dimensions == ("time", "x")
            assert f.variables["b"].dimensions == ("x", "nv")
            assert f["sub"].variables["v"].dimensions == ("y", "x")
            assert f.variables["w"].attrs["_FillValue"] == np.float32(1e20)
            assert f.variables["w"].attrs["_FillValue"].dtype == np.float32
            np.testing.assert_array_equal(f.variables["w"][:], np.arange(6, dtype="f4").reshape(2, 3) * 1 +
                                          np.where(np.arange(6).reshape(2, 3) == 5, np.float32(1e20) - 5, 0))
        with h5py.File(root, "r") as f:
            assert f.attrs["_NCProperties"].startswith(b"version=2,h5netcdf=") and "_libzarr_hdf5" not in f.attrs
            assert f["x"].attrs["_Netcdf4Dimid"] == 0 and f["x"].attrs["_Netcdf4Dimid"].dtype == np.int32
            assert f["nv"].attrs["NAME"].startswith(b"This is a netCDF dimension but not a netCDF variable")
            refs = sorted((f[ref].name, int(dim)) for ref, dim in f["x"].attrs["REFERENCE_LIST"])
            assert refs == [("/b", 0), ("/sub/v", 1), ("/w", 1)], refs
            assert f["w"].maxshape == (None, 3) and f["x"].maxshape == (3,), (f["w"].maxshape, f["x"].maxshape)
        rec = json.loads(zarr.open_array(f"{root}/time", mode="r").attrs["_libzarr_hdf5"])
        assert rec["unlimited_dimensions"] == [0], rec


NO_SHIM = r"""
import sys, h5py
with h5py.File(sys.argv[1], "a") as f:
    d, x = f["t2m"], f["lon"]
    assert "DIMENSION_LIST" not in d.attrs and "CLASS" not in x.attrs and not x.is_scale
    try:
        d.dims[2].attach_scale(x)
    except Exception as e:
        print("refused:", e)
    else:
        raise AssertionError("attach_scale without libzarr_h5vol_v1api succeeded")
"""


def t_without_shim(r):
    root = r.path("noshim.zarr")
    netcdf_like().to_zarr(root, zarr_format=3, consolidated=False)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    p = subprocess.run([sys.executable, "-c", NO_SHIM, root], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "refused:" in p.stdout, f"{p.stdout}\n{p.stderr}"
    assert dim_names(f"{root}/t2m", 3) == ["time", "lat", "lon"]


def main():
    args = harness.parse_args(__doc__)
    tmp = Path(os.environ.get("ZARR_TEST_TMPDIR") or tempfile.mkdtemp())
    tmp = Path(tempfile.mkdtemp(dir=tmp))
    r = harness.Runner(tmp, args.verbose, args.k)
    r.run("h5py writes dimension scales: zarr-python and xarray read dimension names", t_h5py_writes, r)
    r.run("h5py writes datasets without scales: netCDF-C's phony dimension names", t_h5py_plain, r)
    r.run("xarray writes: h5py, h5netcdf and xarray through h5netcdf see the dimensions", t_xarray_writes, r)
    r.run("h5netcdf writes through the connector: xarray and h5netcdf read it", t_h5netcdf_writes, r)
    r.run("without libzarr_h5vol_v1api: no H5DS attributes, attach refused", t_without_shim, r)
    print(f"{r.passed} passed, {len(r.failed)} failed")
    shutil.rmtree(tmp, ignore_errors=True) if not r.failed else None
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
