#!/usr/bin/env python3
"""Interop: h5tozarr on netCDF-4 files (written by netCDF4-python) and on HDF5 files with every dataset type
(written by h5py), checked with xarray, zarr-python and netCDF-C itself.

    H5TOZARR=... python3 tests/interop/test_h5tozarr_netcdf.py [-v] [-k SUBSTRING]

Exit status: 0 all passed, 1 a failure, 77 skipped (netCDF4, xarray, h5py, zarr-python or numpy not
importable, or $H5TOZARR not given; under CI=true a missing module is a failure). CMakeLists.txt passes
the tool in $H5TOZARR; zarr-python 3.4.2 (for the v3 struct data type) is $ZARR_PYTHON312.

Covered (docs/hdf5-netcdf.md, "Conventions"):
  * a CF-style netCDF-4 file (coordinate variables lat/lon, an unlimited `time` with a variable written
    for fewer records than the dimension has, a dimension without a variable, NaN `_FillValue` and
    `missing_value`, packed int16 with float32 `scale_factor`/`add_offset`, a string variable, a scalar
    grid-mapping variable, typed global attributes: int16/int32/float32/float64 scalars and arrays, NaN
    and infinity, strings; a subgroup using a parent's dimension) converted with --format 3 and 2:
    - zarr-python: the arrays are the netCDF variables (not the dimension without one), their dimension
      names, shapes (along `time` the dimension's length), raw values and fill values are netCDF's; every
      attribute is there with its value, its type in _libzarr_hdf5.attribute_types and its scalar-ness;
      no internal attribute; NaN and infinities are bare JSON tokens; unlimited_dimensions and each
      group's `dimensions` record;
    - xarray (decoded and raw): the same dimensions, values and attributes as xarray reading the netCDF
      file, root and subgroup;
    - netCDF-C (NCZarr, pure Zarr mode) opens the --format 2 output: the same named dimensions,
      variables, values and attribute values (it reads no variable-length strings: that array is left
      out of the copy it opens);
  * h5py files: float16, enum (base integer + _libzarr_hdf5.enum), compound (flat, nested, with a
    complex and a boolean member; an array member in --format 2) read back by zarr-python (3.4.2 for the
    v3 struct) and numpy; opaque, reference and a compound member of type opaque refused by name (exit 2,
    nothing written), skipped with --skip-unsupported;
  * h5py dimension scales: names, phony_dim_N for unattached dimensions, an unlimited scale grown to the
    largest dataset attached to it;
  * datasets without dimension scales: the names netCDF-C (netCDF4-python on the HDF5 file) gives them, in
    two groups, with and without a scale of the same length, fixed and unlimited; xarray opens each group
    of the v2 output; h5netcdf's phony_dims="sort" shares the same dimensions;
  * bad input: a truncated file, a missing file, a file that is not HDF5, an existing output (refused;
    --overwrite replaces it, and a failed --overwrite leaves it intact), an interrupted conversion
    (SIGTERM: nothing left behind, the old output intact);
  * never destroying what was not asked for: --overwrite refuses the input itself (also through a
    symbolic or hard link), a Zarr hierarchy holding the input, a directory or file that is not a Zarr
    hierarchy, a link; a missing parent directory is refused, not made; each time exit 1, a message
    naming the path and the reason, input and output unchanged by hash; a SIGKILLed run's temporary
    output is removed by the next run, an old output it had moved aside put back.
"""
import base64
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

h5py, netCDF4, np, xr, zarr = harness.import_or_skip("h5py", "netCDF4", "numpy", "xarray", "zarr")
from h5py_types import FLAT, INNER, write_half_color_table  # noqa: E402
from tool_outputs import dead_pid, hdf5_record, temp_name, tree_hash  # noqa: E402

warnings.filterwarnings("ignore")

H5TOZARR = os.environ.get("H5TOZARR")
ROOT = Path(__file__).resolve().parents[2]
INTERNAL = {"CLASS", "NAME", "REFERENCE_LIST", "DIMENSION_LIST", "_Netcdf4Coordinates", "_Netcdf4Dimid",
            "_NCProperties", "_nc3_strict", "_IsNetcdf4"}


run = harness.run_tool


# ---- the netCDF-4 file -------------------------------------------------------------------------------
GLOBAL_ATTRS = {
    "title": "CF test file",
    "i16": np.int16(-3),
    "i32": np.int32(70000),
    "f32": np.float32(0.1),
    "f64": 2.5,
    "i16_list": np.array([1, -2, 3], "i2"),
    "i32_list": np.array([10, 20], "i4"),
    "f32_list": np.array([0.5, 0.25, 1e-3], "f4"),
    "u8": np.uint8(200),
    "not_a_number": np.nan,
    "infinities": np.array([np.inf, -np.inf, 1.0]),
}


def make_cf(path):
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", None)
        ds.createDimension("lat", 3)
        ds.createDimension("lon", 4)
        ds.createDimension("nv", 2)  # no variable
        t = ds.createVariable("time", "f8", ("time",))
        t.units = "days since 2000-01-01"
        t.standard_name = "time"
        t[:] = [0.0, 1.0, 2.0]
        lat = ds.createVariable("lat", "f4", ("lat",))
        lat.units = "degrees_north"
        lat[:] = [-10.0, 0.0, 10.0]
        lon = ds.createVariable("lon", "f4", ("lon",))
        lon.units = "degrees_east"
        lon[:] = [0.0, 90.0, 180.0, 270.0]
        bnds = ds.createVariable("lat_bnds", "f4", ("lat", "nv"))
        bnds[:] = [[-15, -5], [-5, 5], [5, 15]]
        temp = ds.createVariable("temp", "f4", ("time", "lat", "lon"), fill_value=np.float32(np.nan), chunksizes=(1, 3, 4))
        temp.missing_value = np.float32(np.nan)
        temp.units = "K"
        temp.grid_mapping = "crs"
        temp.valid_range = np.array([150, 350], "f4")
        v = np.arange(36, dtype="f4").reshape(3, 3, 4) + 250
        v[1, 2, 3] = np.nan
        temp[:] = v
        packed = ds.createVariable("packed", "i2", ("time", "lat", "lon"), fill_value=np.int16(-32767))
        packed.scale_factor = np.float32(0.01)
        packed.add_offset = np.float32(273.15)
        packed.set_auto_maskandscale(False)
        raw = (np.arange(36).reshape(3, 3, 4) * 7 - 100).astype("i2")
        raw[0, 0, 0] = -32767
        packed[:] = raw
        count = ds.createVariable("count", "i4", ("time",), fill_value=np.int32(-1))
        count[0:2] = [5, 6]  # fewer records than the dimension: the last one is the fill value
        name = ds.createVariable("name", str, ("lat",))
        name[:] = np.array(["south", "equator", "nörth"], dtype=object)
        crs = ds.createVariable("crs", "i4")
        crs.grid_mapping_name = "latitude_longitude"
        crs.semi_major_axis = 6378137.0
        crs.inverse_flattening = np.float32(298.25)
        crs[...] = 0
        for k, val in GLOBAL_ATTRS.items():
            ds.setncattr(k, val)
        ds.setncattr_string("history", "made by test_h5tozarr_netcdf.py")
        g = ds.createGroup("sub")
        g.createDimension("x", 5)
        g.note = "a subgroup"
        sv = g.createVariable("v", "i4", ("x", "lat"), fill_value=np.int32(-99))
        sv.long_name = "sub variable"
        sv[:] = np.arange(15).reshape(5, 3)


def nc_attrs(obj):
    return {k: obj.getncattr(k) for k in obj.ncattrs()}


def nc_type(v):
    """The type name h5tozarr records for a netCDF attribute value as netCDF4-python returns it."""
    if isinstance(v, str):
        return None  # "char" or "string": checked separately
    return np.asarray(v).dtype.name


def same_number(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def check_attrs(ncobj, zattrs, where, fmt, float_array=False):
    """zattrs (zarr-python's, JSON) hold every netCDF attribute with its value, type and scalar-ness."""
    zattrs = dict(zattrs)
    record = hdf5_record(zattrs)
    zattrs.pop("_libzarr_hdf5", None)
    zattrs.pop("_ARRAY_DIMENSIONS", None)
    types = record.get("attribute_types", {})
    want = nc_attrs(ncobj)
    assert not INTERNAL & set(zattrs), f"{where}: internal attributes copied: {INTERNAL & set(zattrs)}"
    assert set(zattrs) == set(want), f"{where}: attributes {sorted(zattrs)} != {sorted(want)}"
    assert set(types) == set(want), f"{where}: attribute_types {sorted(types)} != {sorted(want)}"
    for k, v in want.items():
        z = zattrs[k]
        if isinstance(v, str):
            assert z == v and types[k] in ("char", "string"), f"{where}.{k}: {z!r} ({types[k]}) != {v!r}"
            continue
        assert types[k] == nc_type(v), f"{where}.{k}: type {types[k]} != {nc_type(v)}"
        scalar = np.ndim(v) == 0
        if fmt == 3 and float_array and k == "_FillValue":  # xarray's form: base64 of a little-endian float64
            z = struct.unpack("<d", base64.b64decode(z))[0]
        assert isinstance(z, list) != scalar, f"{where}.{k}: {z!r} for {'a scalar' if scalar else 'a list'}"
        assert same_number(np.asarray(z, dtype=types[k]), v), f"{where}.{k}: {z!r} != {v!r}"


def zarr_dims(z, fmt):
    if fmt == 3:
        return tuple(z.metadata.dimension_names or ())
    return tuple(z.attrs.get("_ARRAY_DIMENSIONS", ()))


def default_fill(var, fmt=3):
    """The Zarr fill value h5tozarr writes for a netCDF variable: its _FillValue; without one netCDF's
    default fill in Zarr v3 (which has no null fill value) and null (None) in Zarr v2."""
    if "_FillValue" in var.ncattrs():
        return var.getncattr("_FillValue")
    if fmt == 2:
        return None
    if var.dtype == str:
        return ""
    return netCDF4.default_fillvals[np.dtype(var.dtype).str[1:]]


def check_group_zarr(ncg, zg, where, fmt):
    arrays = {k for k, _ in zg.arrays()}
    assert arrays == set(ncg.variables), f"{where}: arrays {sorted(arrays)} != variables {sorted(ncg.variables)}"
    check_attrs(ncg, zg.attrs, where, fmt)
    # the group's dimensions record
    dims = hdf5_record(zg.attrs).get("dimensions", {})
    want = {n: {"size": len(d), "unlimited": d.isunlimited()} for n, d in ncg.dimensions.items()}
    assert dims == want, f"{where}: dimensions record {dims} != {want}"
    for name, var in ncg.variables.items():
        z = zg[name]
        w = f"{where}/{name}"
        assert zarr_dims(z, fmt) == var.dimensions, f"{w}: dimension names {zarr_dims(z, fmt)} != {var.dimensions}"
        assert z.shape == var.shape, f"{w}: shape {z.shape} != {var.shape}"
        var.set_auto_maskandscale(False)
        nv = var[...]
        zv = z[...]
        if var.dtype == str:
            assert [str(x) for x in np.asarray(zv).ravel()] == [str(x) for x in np.asarray(nv).ravel()], f"{w}: values"
        else:
            assert z.dtype == np.dtype(var.dtype).newbyteorder("="), f"{w}: dtype {z.dtype} != {var.dtype}"
            assert same_number(zv, nv), f"{w}: values {zv} != {nv}"
            want_fill = default_fill(var, fmt)
            assert (z.fill_value is None) == (want_fill is None), f"{w}: fill value {z.fill_value} != {want_fill}"
            assert want_fill is None or same_number(z.fill_value, want_fill), f"{w}: fill value {z.fill_value} != {want_fill}"
        check_attrs(var, z.attrs, w, fmt, float_array=np.dtype(var.dtype).kind == "f" if var.dtype != str else False)
        unl = hdf5_record(z.attrs).get("unlimited_dimensions", [])
        want_unl = [i for i, d in enumerate(var.get_dims()) if d.isunlimited()]
        assert unl == want_unl, f"{w}: unlimited_dimensions {unl} != {want_unl}"
    for name, sub in ncg.groups.items():
        check_group_zarr(sub, zg[name], f"{where}/{name}", fmt)


def same_xarray(a, b, where):
    assert dict(a.sizes) == dict(b.sizes), f"{where}: dimensions {dict(a.sizes)} != {dict(b.sizes)}"
    assert set(a.variables) == set(b.variables), f"{where}: variables {sorted(a.variables)} != {sorted(b.variables)}"
    for k in a.variables:
        va, vb = a[k], b[k]
        assert va.dims == vb.dims, f"{where}/{k}: dims {va.dims} != {vb.dims}"
        x, y = va.values, vb.values
        strings = x.dtype.kind in "OUT" and y.dtype.kind in "OUT"
        # packed data: xarray unpacks into the type of scale_factor / add_offset, float32 from netCDF but a
        # JSON number in Zarr, so float64 (docs/hdf5-netcdf.md, "What is lost"); the values are the same
        packed = (x.dtype, y.dtype) == (np.float32, np.float64) and "scale_factor" in va.encoding
        assert strings or packed or x.dtype == y.dtype, f"{where}/{k}: dtype {y.dtype} != netCDF's {x.dtype}"
        if x.dtype.kind in "OUT" or y.dtype.kind in "OUT":
            assert [str(e) for e in x.ravel()] == [str(e) for e in y.ravel()], f"{where}/{k}: values"
        elif x.dtype.kind == "M":
            assert np.array_equal(x, y), f"{where}/{k}: times {x} != {y}"
        else:
            # decoding may pick float64 from JSON scale factors where netCDF gives float32
            assert np.allclose(x.astype("f8"), y.astype("f8"), rtol=1e-6, equal_nan=True), f"{where}/{k}: {x} != {y}"
        attrs = {n: v for n, v in vb.attrs.items() if n != "_libzarr_hdf5"}
        assert set(va.attrs) == set(attrs), f"{where}/{k}: attributes {sorted(va.attrs)} != {sorted(attrs)}"
        assert set(va.encoding.get(n) is None for n in ("_FillValue",)) == set(
            vb.encoding.get(n) is None for n in ("_FillValue",)), f"{where}/{k}: _FillValue {va.encoding} {vb.encoding}"
        for n, v in va.attrs.items():
            if isinstance(v, str):
                assert attrs[n] == v, f"{where}/{k}.{n}: {attrs[n]!r} != {v!r}"
            else:
                assert np.allclose(np.asarray(v, "f8"), np.asarray(attrs[n], "f8"), equal_nan=True), f"{where}/{k}.{n}"
    ga = {n: v for n, v in b.attrs.items() if n != "_libzarr_hdf5"}
    assert set(a.attrs) == set(ga), f"{where}: global attributes {sorted(a.attrs)} != {sorted(ga)}"


def t_netcdf(r, fmt):
    src = r.path("cf.nc")
    make_cf(src)
    out = r.path(f"cf{fmt}.zarr")
    run(H5TOZARR, "--format", fmt, src, out)
    # bare NaN / Infinity tokens in the JSON, not strings
    meta = (out / ("zarr.json" if fmt == 3 else ".zattrs")).read_text()
    assert re.search(r'"not_a_number":\s*NaN', meta) and re.search(r"-Infinity", meta), meta[:2000]
    tmeta = (out / "temp" / ("zarr.json" if fmt == 3 else ".zattrs")).read_text()
    assert re.search(r'"missing_value":\s*NaN', tmeta), tmeta
    assert not (out / "nv").exists(), "the dimension without a variable became an array"
    with netCDF4.Dataset(src) as nc:
        check_group_zarr(nc, zarr.open_group(out, mode="r"), "", fmt)
    # xarray, decoded and raw, root and subgroup
    for kw in ({}, {"mask_and_scale": False, "decode_times": False}):
        for group in (None, "sub"):
            want = xr.open_dataset(src, engine="netcdf4", group=group, **kw)
            got = xr.open_zarr(out, group=group, consolidated=False, **kw)
            same_xarray(want, got, f"xarray {kw} {group or '/'}")
            want.close()
            got.close()
    if fmt == 2:
        t_netcdf_c(r, src, out)


def t_netcdf_c(r, src, out):
    """netCDF-C (NCZarr, pure Zarr) opens the v2 output: it reads no variable-length strings, so its copy
    leaves out the string variable, and shows no scalar array; bare NaN and the _libzarr_hdf5 object do
    not stop it."""
    copy = r.path("ncz.zarr")
    shutil.copytree(out, copy)
    shutil.rmtree(copy / "name")
    with netCDF4.Dataset(src) as nc, netCDF4.Dataset(f"file://{copy.resolve()}#mode=zarr,file") as z:
        def walk(a, b, where):
            # netCDF-C 4.10 in pure Zarr mode shows no scalar (rank-0) array
            unread = {"name"} | {k for k, v in a.variables.items() if v.ndim == 0}
            assert set(b.variables) == set(a.variables) - unread, f"{where}: {sorted(b.variables)}"
            for k, v in b.variables.items():
                ref = a.variables[k]
                assert v.dimensions == ref.dimensions, f"{where}/{k}: dimensions {v.dimensions} != {ref.dimensions}"
                for d in v.dimensions:
                    dim = v.get_dims()[v.dimensions.index(d)]
                    assert len(dim) == len(a.dimensions[d] if d in a.dimensions else a.parent.dimensions[d]), f"{where}/{k}: {d}"
                v.set_auto_maskandscale(False)
                ref.set_auto_maskandscale(False)
                assert same_number(v[...], ref[...]), f"{where}/{k}: values {v[...]} != {ref[...]}"
                want = nc_attrs(ref)
                got = {n: v.getncattr(n) for n in v.ncattrs() if n != "_libzarr_hdf5"}
                assert set(got) == set(want), f"{where}/{k}: attributes {sorted(got)} != {sorted(want)}"
                for n, x in want.items():
                    if isinstance(x, str):
                        assert got[n] == x, f"{where}/{k}.{n}"
                    else:
                        # netCDF-C types a JSON number itself (0.01 is a double): compare in netCDF's type
                        assert same_number(np.asarray(got[n]).astype(np.asarray(x).dtype), x), f"{where}/{k}.{n}: {got[n]} != {x}"
            want = {n: x for n, x in nc_attrs(a).items()}
            got = {n: b.getncattr(n) for n in b.ncattrs() if n != "_libzarr_hdf5"}
            assert set(got) == set(want), f"{where}: attributes {sorted(got)} != {sorted(want)}"
            for n, x in want.items():
                if not isinstance(x, str):
                    assert same_number(np.asarray(got[n]).astype(np.asarray(x).dtype), x), f"{where}.{n}: {got[n]} != {x}"
            rec = json.loads(b.getncattr("_libzarr_hdf5"))
            assert "attribute_types" in rec, rec
            for name, g in a.groups.items():
                walk(g, b.groups[name], f"{where}/{name}")
        walk(nc, z, "")
        assert len(z.dimensions["time"]) == 3 and len(z.dimensions["nv"]) == 2, dict(z.dimensions)


# ---- what xarray sees: the same as in the netCDF file (issue 33) ---------------------------------------
def make_view(path):
    """Values xarray masked or retyped when Zarr v2 carried netCDF's default fill: a uint8 255, int64 above
    2^53, an int32 coordinate, empty strings, all without _FillValue; a CMIP-style float32 variable whose
    _FillValue and missing_value are both 1e20; a variable written for fewer records than the unlimited
    dimension has (netCDF reads its default fill there)."""
    with netCDF4.Dataset(path, "w") as ds:
        ds.createDimension("time", None)
        ds.createDimension("x", 4)
        x = ds.createVariable("x", "i4", ("x",))
        x[:] = [10, 20, 30, 40]
        t = ds.createVariable("time", "f8", ("time",))
        t.units = "days since 2000-01-01"
        t[:] = [0.0, 1.0, 2.0]
        u8 = ds.createVariable("u8", "u1", ("x",))
        u8[:] = [0, 1, 255, 7]
        big = ds.createVariable("big", "i8", ("x",))
        big[:] = np.array([2**53 + 1, -(2**60) - 3, 0, 9007199254740993], "i8")
        s = ds.createVariable("s", str, ("x",))
        s[:] = np.array(["a", "", "c", ""], dtype=object)
        tas = ds.createVariable("tas", "f4", ("time", "x"), fill_value=np.float32(1e20))
        tas.missing_value = np.float32(1e20)
        tas.units = "K"
        v = np.arange(12, dtype="f4").reshape(3, 4) + 270
        v[1, 2] = 1e20
        tas[:] = v
        few = ds.createVariable("few", "i2", ("time",))
        few[0:2] = [3, 4]


def t_xarray_view(r, fmt):
    """xarray on the Zarr output sees what it sees on the netCDF file, decoded and with decode_cf=False:
    the same variables, dtypes, values and attributes (no _FillValue where netCDF has none, so nothing
    masked that netCDF does not mask), without warnings (consolidated metadata; one fill value where
    _FillValue and missing_value are equal); to_netcdf of what xarray opened works and netCDF reads the
    values back; h5tozarr converts that file again (the record it carries is not copied)."""
    src = r.path("view.nc")
    make_view(src)
    out = r.path(f"view{fmt}.zarr")
    run(H5TOZARR, "--format", fmt, src, out)
    for kw in ({}, {"decode_cf": False}):
        want = xr.open_dataset(src, engine="netcdf4", **kw)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = xr.open_zarr(out, **kw)  # consolidated=None: xarray warns when there is no consolidated metadata
            got.load()
        noise = [str(w.message) for w in caught if "fill value" in str(w.message) or "onsolidated" in str(w.message)]
        assert not noise, f"{kw}: xarray warned: {noise}"
        same_xarray(want, got, f"xarray {kw}")
        for k in want.variables:
            a, b = want[k], got[k]
            assert a.dtype == b.dtype or (a.dtype.kind in "OUT" and b.dtype.kind in "OUT"), f"{kw} {k}: {b.dtype} != {a.dtype}"
            assert ("_FillValue" in b.encoding) == ("_FillValue" in a.encoding) or kw, f"{kw} {k}: {b.encoding}"
        assert got["u8"].dtype == np.uint8 and got["u8"].values.tolist() == [0, 1, 255, 7], got["u8"].values
        assert got["big"].values.tolist() == [2**53 + 1, -(2**60) - 3, 0, 9007199254740993], got["big"].values
        assert got["x"].dtype == np.int32, got["x"].dtype
        assert [str(e) for e in got["s"].values] == ["a", "", "c", ""], got["s"].values
        assert got["few"].values.tolist() == want["few"].values.tolist() == [3, 4, -32767], got["few"].values
        if not kw:
            assert np.isnan(got["tas"].values[1, 2]) and got["tas"].dtype == np.float32, got["tas"].values
        want.close()
        got.close()
    # the float32 1e20 of _FillValue and missing_value: one number, the float32's own value
    meta = json.loads((out / "tas" / (".zattrs" if fmt == 2 else "zarr.json")).read_text())
    attrs = meta if fmt == 2 else meta["attributes"]
    fv = attrs["_FillValue"] if fmt == 2 else struct.unpack("<d", base64.b64decode(attrs["_FillValue"]))[0]
    assert fv == attrs["missing_value"] == float(np.float32(1e20)), attrs
    if fmt == 2:
        assert json.loads((out / "u8" / ".zarray").read_text())["fill_value"] is None
        assert json.loads((out / "tas" / ".zarray").read_text())["fill_value"] == float(np.float32(1e20))
    # back to netCDF through xarray, and through h5tozarr again
    nc = r.path(f"xr{fmt}.nc")
    with xr.open_zarr(out) as ds:
        ds.to_netcdf(nc)
    with netCDF4.Dataset(src) as a, netCDF4.Dataset(nc) as b:
        for k in ("x", "u8", "big", "few"):
            a[k].set_auto_maskandscale(False)
            b[k].set_auto_maskandscale(False)
            assert same_number(a[k][...], b[k][...]), f"to_netcdf {k}: {b[k][...]} != {a[k][...]}"
        assert json.loads(b["tas"].getncattr("_libzarr_hdf5"))["attribute_types"]["units"] == "char"
    again = r.path(f"again{fmt}.zarr")
    run(H5TOZARR, "--format", fmt, nc, again)
    rec = hdf5_record(zarr.open_group(again, mode="r")["tas"].attrs)
    assert "_libzarr_hdf5" not in rec.get("attribute_types", {}), rec
    if fmt == 2:
        copy = r.path("view_ncz.zarr")  # netCDF-C reads no variable-length strings
        shutil.copytree(out, copy)
        shutil.rmtree(copy / "s")
        with netCDF4.Dataset(src) as a, netCDF4.Dataset(f"file://{copy.resolve()}#mode=zarr,file") as b:
            for k in ("x", "u8", "big", "tas", "few"):
                a[k].set_auto_maskandscale(False)
                b[k].set_auto_maskandscale(False)
                assert same_number(a[k][...], b[k][...]), f"netCDF-C {k}: {b[k][...]} != {a[k][...]}"


# ---- every dataset type (h5py) ----------------------------------------------------------------------
WITH_ARRAY = np.dtype([("id", "<u2"), ("v", "<f8", (3,)), ("p", INNER)])


def make_types(path):
    with h5py.File(path, "w") as f:
        h = write_half_color_table(f, table_fill=np.array((-5, (0.5, 1), 2 + 3j, True), FLAT)[()])
        h.attrs["scale"] = np.float16(0.1)
        h.attrs["range"] = np.array([-1, 1e-3, 2], "f2")
        f.create_dataset("half_be", data=np.array([[0.5, 3], [-7, 1e-4]], ">f2"), chunks=(1, 2))


def make_array_member(path):
    with h5py.File(path, "w") as f:
        b = np.zeros(5, WITH_ARRAY)
        b["id"] = [5, 6, 7, 8, 9]
        b["v"] = np.arange(15).reshape(5, 3) / 4
        b["p"]["x"] = 2.5
        b["p"]["k"] = 3
        f.create_dataset("arrays", data=b, chunks=(2,))


def v2_raw(path):
    """A v2 array with compressor null read by numpy alone: its .zarray dtype and chunk files."""
    meta = json.loads((path / ".zarray").read_text())
    assert meta["compressor"] is None and meta["filters"] is None, meta

    def descr(d):
        return [tuple([f[0], descr(f[1]) if isinstance(f[1], list) else f[1], *([tuple(f[2])] if len(f) > 2 else [])])
                for f in d]
    dt = np.dtype(descr(meta["dtype"]))
    (n,), (c,) = meta["shape"], meta["chunks"]
    parts = [np.frombuffer((path / str(i)).read_bytes(), dt) for i in range(-(-n // c))]
    return np.concatenate(parts)[:n], dt, meta


def zarr342(path, name):
    """The array `name` of the hierarchy at `path` as zarr-python 3.4.2 reads it (little-endian bytes)."""
    py = os.environ.get("ZARR_PYTHON312") or str(ROOT / ".venv-zarr342" / "bin" / "python")
    if not Path(py).exists():
        msg = f"no Python with zarr 3.4.2 at {py} (set ZARR_PYTHON312)"
        if os.environ.get("CI") == "true":
            raise AssertionError(msg + ": required under CI=true")
        print(f"SKIPPED the v3 struct read by zarr-python 3.4.2: {msg}")
        return None
    code = ("import sys, zarr, numpy as np\n"
            "a = zarr.open_group(sys.argv[1], mode='r')[sys.argv[2]]\n"
            "assert zarr.__version__ == '3.4.2', zarr.__version__\n"
            "v = a[...]\n"
            "print(v.dtype.descr); sys.stdout.flush()\n"
            "sys.stdout.buffer.write(v.tobytes())\n")
    p = subprocess.run([py, "-c", code, str(path), name], capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    head, _, body = p.stdout.partition(b"\n")
    return eval(head.decode()), body  # noqa: S307 - numpy's descr of our own array


def t_types(r, fmt):
    src = r.path("types.h5")
    make_types(src)
    out = r.path(f"types{fmt}.zarr")
    run(H5TOZARR, "--format", fmt, src, out)
    # zarr-python 3.1 cannot parse a v2 structured dtype with a nested field (its type check), and with
    # consolidated metadata it then cannot open the group: the v2 group is read from the store here
    # (docs/hdf5-netcdf.md, "Compounds"); zarr-python 3.4.2 opens it whole (below)
    g = zarr.open_group(out, mode="r", use_consolidated=fmt == 3)
    with h5py.File(src, "r") as f:
        for name in ("half", "half_be"):
            z = g[name]
            assert z.dtype == np.dtype("<f2"), f"{name}: {z.dtype}"
            assert same_number(z[...], f[name][...]), f"{name}: {z[...]} != {f[name][...]}"
        assert g["half"].fill_value == np.float16(-1.5), g["half"].fill_value
        za = dict(g["half"].attrs)
        assert hdf5_record(za)["attribute_types"] == {"scale": "float16", "range": "float16"}, za
        assert not isinstance(za["scale"], list) and np.float16(za["scale"]) == np.float16(0.1), za
        assert same_number(np.asarray(za["range"], "f2"), f["half"].attrs["range"]), za
        z = g["color"]
        assert z.dtype == np.dtype("<i2") and same_number(z[...], f["color"][...]), f"color: {z.dtype} {z[...]}"
        rec = hdf5_record(z.attrs)["enum"]
        assert rec == {"base": "int16", "members": {"RED": 0, "GREEN": 1, "BLUE": 42}}, rec
        want = f["table"][...]
        packed = want.astype(FLAT.newbyteorder("<")).astype([("id", "<i4"), ("p", INNER), ("c", "<c8"), ("ok", "?")])
        fill_bytes = np.array((-5, (0.5, 1), 2 + 3j, True), packed.dtype).tobytes()
        got = zarr342(out, "table")  # zarr-python 3.4.2 opens the group (consolidated) and reads it
        if got is not None:
            descr, body = got
            assert [d[0] for d in descr] == ["id", "p", "c", "ok"], descr
            assert body == packed.tobytes(), "table: zarr-python 3.4.2 reads other values"
        if fmt == 3:
            # `structured`, zarr-python 3.1's name (3.4 reads it too), fill value base64 of the bytes
            meta = json.loads((out / "table" / "zarr.json").read_text())
            assert meta["data_type"]["name"] == "structured", meta["data_type"]
            assert meta["data_type"]["configuration"]["fields"][1] == ["p", {"name": "structured", "configuration": {
                "fields": [["x", "float32"], ["k", "int8"]]}}], meta["data_type"]
            assert base64.b64decode(meta["fill_value"]) == fill_bytes, meta["fill_value"]
            z = g["table"]  # zarr-python 3.1.6, through the consolidated metadata
            assert z.dtype.names == ("id", "p", "c", "ok") and z[...].tobytes() == packed.tobytes(), z.dtype
            assert z.fill_value.tobytes() == fill_bytes, z.fill_value
            # --struct-type struct: zarr-extensions' `struct`, which zarr-python 3.4 writes
            out_s = r.path("types_struct.zarr")
            run(H5TOZARR, "--struct-type", "struct", src, out_s)
            meta = json.loads((out_s / "table" / "zarr.json").read_text())
            assert meta["data_type"]["name"] == "struct", meta["data_type"]
            assert meta["fill_value"] == {"id": -5, "p": {"x": 0.5, "k": 1}, "c": [2.0, 3.0], "ok": True}, meta["fill_value"]
            got = zarr342(out_s, "table")
            assert got is None or got[1] == packed.tobytes(), "table (struct): zarr-python 3.4.2 reads other values"
        else:
            got, dt, meta = v2_raw(out / "table")
            assert dt.names == FLAT.names and dt["p"] == INNER, dt
            assert got.tobytes() == want.astype(dt).tobytes(), "table: values"
            fill = np.frombuffer(base64.b64decode(meta["fill_value"]), dt)[0]
            assert fill.tobytes() == np.array((-5, (0.5, 1), 2 + 3j, True), dt).tobytes(), fill


def t_array_member(r):
    src = r.path("arraymember.h5")
    make_array_member(src)
    out = r.path("am2.zarr")
    run(H5TOZARR, "--format", "2", src, out)
    got, dt, _ = v2_raw(out / "arrays")
    assert dt["v"].shape == (3,) and dt["p"] == INNER, dt
    with h5py.File(src, "r") as f:
        assert got.tobytes() == f["arrays"][...].astype(dt).tobytes(), "arrays: values"
    out3 = r.path("am3.zarr")
    p = run(H5TOZARR, src, out3, expect=2)
    assert "/arrays: compound member 'v' is an array, which a Zarr v3 struct cannot hold" in p.stderr, p.stderr
    assert not out3.exists()


def t_refused(r):
    src = r.path("bad.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("ok", data=np.arange(3))
        f.create_dataset("blob", data=np.void(b"\x01\x02\x03\x04"))
        f.create_dataset("ref", data=[f["ok"].ref], dtype=h5py.ref_dtype)
        f.create_dataset("cmp", data=np.zeros(2, [("a", "i4"), ("x", "V3")]))
        f.create_dataset("vlen", data=np.array([np.arange(2), np.arange(3)], dtype=object), dtype=h5py.vlen_dtype("i4"))
        f["vlen_t"] = h5py.vlen_dtype("i4")  # a named type with no record form
        f["pair_t"] = np.dtype([("a", "<i2"), ("b", "<f4")])  # a named compound: recorded, converts
    for fmt in ("2", "3"):
        out = r.path(f"bad{fmt}.zarr")
        p = run(H5TOZARR, "--format", fmt, src, out, expect=2)
        # the first thing without a Zarr form stops it: the root group's named type, before any dataset
        assert "/vlen_t: a named datatype with no Zarr form" in p.stderr, p.stderr
        assert "class" not in p.stderr and not re.search(r"\(\d+\)", p.stderr), p.stderr
        assert not out.exists() and not list(out.parent.glob(".h5tozarr-*")), "a refused conversion left files"
        p = run(H5TOZARR, "--format", fmt, "--skip-unsupported", src, out)
        for msg in ("/blob: skipped: dataset of type opaque (4 bytes) is not supported",
                    "/cmp: skipped: compound member 'x' of type opaque (3 bytes) is not supported",
                    "/ref: skipped: dataset of type reference (8 bytes) is not supported",
                    "/vlen: skipped: dataset of type variable-length sequence",
                    "/vlen_t: skipped: a named datatype with no Zarr form: a field of type variable-length sequence"):
            assert msg in p.stderr, f"no '{msg}' in {p.stderr}"
        g = zarr.open_group(out, mode="r")
        assert sorted(g.keys()) == ["ok"], sorted(g.keys())
        assert hdf5_record(g.attrs)["named_types"] == {"pair_t": {"compound": [["a", "int16"], ["b", "float32"]]}}
        assert same_number(g["ok"][...], np.arange(3))


def t_bad_input(r):
    src = r.path("good.h5")
    make_types(src)
    # missing, not HDF5, truncated
    p = run(H5TOZARR, r.path("missing.h5"), r.path("m.zarr"), expect=1)
    assert "missing.h5: No such file or directory" in p.stderr, p.stderr
    text = r.path("text.h5")
    text.write_text("hello, not HDF5\n" * 100)
    p = run(H5TOZARR, text, r.path("t.zarr"), expect=1)
    assert "not an HDF5 file" in p.stderr, p.stderr
    trunc = r.path("trunc.h5")
    data = src.read_bytes()
    trunc.write_bytes(data[: len(data) // 2])
    out = r.path("trunc.zarr")
    p = run(H5TOZARR, trunc, out, expect=1)
    assert "truncated" in p.stderr, p.stderr
    assert not out.exists() and not list(out.parent.glob(".h5tozarr-*")), "a failed conversion left files"
    # an existing output: refused; --overwrite replaces it, and a failed --overwrite leaves it intact
    out = r.path("exists.zarr")
    zarr.open_group(out, mode="w", zarr_format=2)  # a Zarr hierarchy: what --overwrite may replace
    (out / "keep").write_text("old")
    p = run(H5TOZARR, src, out, expect=1)
    assert "exists" in p.stderr and (out / "keep").read_text() == "old", p.stderr
    bad = r.path("bad.h5")
    with h5py.File(bad, "w") as f:
        f.create_dataset("blob", data=np.void(b"\x01\x02"))
    run(H5TOZARR, "--overwrite", bad, out, expect=2)
    assert (out / "keep").read_text() == "old", "a failed --overwrite touched the old output"
    run(H5TOZARR, "--overwrite", trunc, out, expect=1)
    assert (out / "keep").read_text() == "old", "a failed --overwrite touched the old output"
    run(H5TOZARR, "--overwrite", src, out)
    assert not (out / "keep").exists() and sorted(p.name for p in out.iterdir() if p.is_dir()) == ["color", "half", "half_be", "table"]
    assert json.loads((out / "zarr.json").read_text())["node_type"] == "group"
    assert not list(out.parent.glob(".h5tozarr-*")), "temporary files left"


def t_h5py_scales(r):
    """Dimension scales made by h5py: names from the scale datasets, netCDF-C's phony_dim_N for unattached
    dimensions, an unlimited scale grown to the largest dataset attached to it."""
    src = r.path("dims.h5")
    with h5py.File(src, "w") as f:
        x = f.create_dataset("x", data=np.arange(4.0))
        x.make_scale("x")
        t = f.create_dataset("t", data=np.arange(2.0), maxshape=(None,), chunks=(8,), fillvalue=-1.0)
        t.make_scale("t")
        d = f.create_dataset("data", data=np.arange(300.0).reshape(3, 4, 5, 5), maxshape=(None, 4, 5, 5), chunks=(1, 4, 5, 5))
        d.dims[0].attach_scale(t)
        d.dims[1].attach_scale(x)
        e = f.create_group("g").create_dataset("e", data=np.zeros((5, 4)))
        e.dims[1].attach_scale(x)
        f.create_dataset("plain", data=np.zeros(3))
    for fmt in (3, 2):
        out = r.path(f"dims{fmt}.zarr")
        run(H5TOZARR, "--format", fmt, src, out)
        g = zarr.open_group(out, mode="r")
        names = {k: zarr_dims(g[k], fmt) for k in ("data", "g/e", "t", "x", "plain")}
        # netCDF-C's rule (t_phony_dims): ids after the 2 scales, subgroup g first, then the root in name
        # order; plain's length 3 matches no fixed dimension (t is unlimited)
        assert names == {"data": ("t", "x", "phony_dim_3", "phony_dim_4"), "g/e": ("phony_dim_2", "x"),
                         "t": ("t",), "x": ("x",), "plain": ("phony_dim_5",)}, names
        assert g["t"].shape == (3,) and same_number(g["t"][...], [0.0, 1.0, -1.0]), g["t"][...]
        assert hdf5_record(g["t"].attrs)["unlimited_dimensions"] == [0]
        assert hdf5_record(g.attrs)["dimensions"] == {"t": {"size": 3, "unlimited": True},
                                                          "x": {"size": 4, "unlimited": False}}, dict(g.attrs)
        assert "CLASS" not in g["x"].attrs and "DIMENSION_LIST" not in g["data"].attrs
        with h5py.File(src, "r") as f:
            assert same_number(g["data"][...], f["data"][...])


PHONY_FILES = {
    # datasets without scales in two groups: shared by length and unlimited flag within a group, never twice
    # in one dataset; numbered children first
    "plain": lambda f: (f.create_dataset("a", data=np.zeros((3, 4))), f.create_dataset("b", data=np.zeros((4, 3))),
                        f.create_dataset("c", data=np.zeros((3, 3))), f.create_dataset("d", data=np.zeros(5)),
                        f.create_dataset("u", shape=(2, 3), maxshape=(None, 3)), f.create_dataset("s", data=1.0),
                        f.create_group("g").create_dataset("e", data=np.zeros(3)),
                        f["g"].create_dataset("f", data=np.zeros((4, 4))), f["g"].create_dataset("h", data=np.zeros(7))),
    # a dimension scale: a dataset without one takes the scale's dimension of the same length
    "scaled": lambda f: (f.create_dataset("x", data=np.arange(3.0)), f["x"].make_scale("x"),
                         f.create_dataset("v", data=np.zeros(3)), f["v"].dims[0].attach_scale(f["x"]),
                         f.create_dataset("w", data=np.zeros(3)), f.create_dataset("w2", data=np.zeros((4, 3))),
                         f.create_dataset("u", shape=(4,), maxshape=(None,)),
                         f.create_group("a").create_dataset("e", data=np.zeros(4)),
                         f.create_group("g").create_dataset("e", data=np.zeros(4))),
}


def t_phony_dims(r):
    """Datasets without dimension scales get the names netCDF-C gives them (netCDF4-python on the HDF5 file),
    in both formats; xarray opens every group of the v2 output; h5netcdf (phony_dims="sort") shares the
    same dimensions (its numbering differs: it is h5netcdf's own)."""
    import h5netcdf
    for tag, make in PHONY_FILES.items():
        src = r.path(f"phony_{tag}.h5")
        with h5py.File(src, "w") as f:
            make(f)
        want = {}
        with netCDF4.Dataset(src) as nc:
            def walk(g):
                for n, v in g.variables.items():
                    want[f"{g.path.rstrip('/')}/{n}".lstrip("/")] = tuple(v.dimensions)
                for sub in g.groups.values():
                    walk(sub)
            walk(nc)
        for fmt in (3, 2):
            out = r.path(f"phony_{tag}{fmt}.zarr")
            run(H5TOZARR, "--format", fmt, src, out)
            g = zarr.open_group(out, mode="r")
            got = {k: zarr_dims(g[k], fmt) for k in want}
            assert got == want, (tag, fmt, got, want)
            if fmt == 2:
                for grp in ["/"] + [k for k, _ in g.groups()]:
                    ds = xr.open_zarr(out, group=grp, consolidated=False, zarr_format=2)
                    assert all(ds[k].dims == want[f"{grp.strip('/')}/{k}".lstrip("/")] for k in ds.variables), ds
        # h5netcdf: the same dimensions, each used by the same (dataset, axis) pairs
        def sharing(dims_of):
            uses = {}
            for key, dims in dims_of.items():
                group = key.rpartition("/")[0]
                for axis, d in enumerate(dims):
                    uses.setdefault((group, d), set()).add((key, axis))
            return sorted(sorted(u) for u in uses.values())
        theirs = {}
        with h5netcdf.File(src, "r", phony_dims="sort") as f:
            def walk5(g, prefix):
                for n, v in g.variables.items():
                    theirs[f"{prefix}{n}"] = v.dimensions
                for n, sub in g.groups.items():
                    walk5(sub, f"{prefix}{n}/")
            walk5(f, "")
        if tag == "plain":   # with a scale of the same length h5netcdf shares differently: plain files only
            assert sharing(theirs) == sharing(want), (theirs, want)


def t_interrupted(r):
    """SIGTERM during a conversion: the temporary output is removed, an old output (--overwrite) stays."""
    import signal
    import time
    src = r.path("big.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("x", data=np.random.default_rng(1).standard_normal((4096, 1024)), chunks=(64, 1024))
    out = r.path("big.zarr")
    zarr.open_group(out, mode="w", zarr_format=3)
    (out / "keep").write_text("old")
    p = subprocess.Popen([H5TOZARR, "--overwrite", "--codec", "gzip:9", str(src), str(out)], stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while not list(out.parent.glob(".h5tozarr-tmp-*")) and p.poll() is None and time.time() < deadline:
        time.sleep(0.005)
    assert p.poll() is None, "the conversion ended before it could be interrupted"
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=60)
    assert rc == -signal.SIGTERM, f"exit {rc}: {p.stderr.read()}"
    assert not list(out.parent.glob(".h5tozarr-*")), "an interrupted conversion left files"
    assert (out / "keep").read_text() == "old" and sorted(os.listdir(out)) == ["keep", "zarr.json"], sorted(os.listdir(out))


def refused(args, paths, *words):
    """h5tozarr with `args` exits 1 with a message holding `words`, and every path in `paths` (the input,
    the output, what is near them) is as it was, by hash."""
    before = {p: tree_hash(p) for p in paths}
    p = run(H5TOZARR, *args, expect=1)
    for w in words:
        assert str(w) in p.stderr, f"no '{w}' in: {p.stderr}"
    after = {p: tree_hash(p) for p in paths}
    assert before == after, f"{args}: a refused run changed {[str(k) for k in paths if before[k] != after[k]]}"
    return p


def t_never_destroys(r):
    """--overwrite replaces only a Zarr hierarchy, never the input (also through a link or a hard link),
    a directory holding the input, another directory, a file or a link; a missing parent directory is
    refused, not created. Each refusal: exit 1, a message naming the path and the reason, and the input
    and the output unchanged (hashes)."""
    src = r.path("data.nc")
    make_cf(src)
    refused(["--overwrite", src, src], [src], src, "is the input itself")
    refused([src, src], [src], "is the input itself")
    link = r.path("link.nc")
    link.symlink_to(src)
    refused(["--overwrite", src, link], [src, link], link, "is the input itself")
    hard = r.path("hard.nc")
    os.link(src, hard)
    refused(["--overwrite", hard, src], [src, hard], "is the input itself")
    mydir = r.path("mydir")
    (mydir / "sub").mkdir(parents=True)
    (mydir / "notes.txt").write_text("mine")
    (mydir / "sub" / "data.bin").write_bytes(bytes(range(256)))
    refused(["--overwrite", src, mydir], [src, mydir], mydir, "not a Zarr hierarchy", "left as it is")
    empty = r.path("empty")
    empty.mkdir()
    refused(["--overwrite", src, empty], [src, empty], empty, "not a Zarr hierarchy")
    afile = r.path("notes.txt")
    afile.write_text("a file")
    refused(["--overwrite", src, afile], [src, afile], afile, "is a file, not a Zarr hierarchy")
    # a Zarr hierarchy holding the input; a link to a Zarr hierarchy
    holder = r.path("holder.zarr")
    zarr.open_group(holder, mode="w", zarr_format=3)
    inside = holder / "in.nc"
    shutil.copy(src, inside)
    refused(["--overwrite", inside, holder], [holder], holder, "holds the input")
    zlink = r.path("zlink.zarr")
    zlink.symlink_to(holder)
    refused(["--overwrite", src, zlink], [src, holder, zlink], zlink, "symbolic link")
    # a missing parent directory: refused as cp refuses it, nothing created
    missing = r.path("nodir")
    refused([src, missing / "out.zarr"], [src, missing], missing / "out.zarr", "does not exist")
    assert not missing.exists()
    # what --overwrite replaces: a v2 and a v3 hierarchy, and an array
    for fmt in (2, 3):
        target = r.path(f"old{fmt}.zarr")
        zarr.open_group(target, mode="w", zarr_format=fmt).create_array("old", shape=(2,), dtype="i1")
        run(H5TOZARR, "--overwrite", src, target)
        g = zarr.open_group(target, mode="r")
        assert "old" not in g and "temp" in g, sorted(g.keys())
    lone = r.path("lone.zarr")
    zarr.create_array(lone, shape=(2,), dtype="i1", zarr_format=2)
    run(H5TOZARR, "--overwrite", src, lone)
    assert "temp" in zarr.open_group(lone, mode="r")
    assert not list(src.parent.glob(".h5tozarr-*")), "temporary files left"


def t_killed(r):
    """SIGKILL (which no program can catch) leaves the temporary output; the next run for that output
    removes it, and puts back an old output that a killed --overwrite had moved aside."""
    import signal
    import time
    src = r.path("big.h5")
    with h5py.File(src, "w") as f:
        f.create_dataset("x", data=np.random.default_rng(2).standard_normal((4096, 1024)), chunks=(64, 1024))
    out = r.path("killed.zarr")
    p = subprocess.Popen([H5TOZARR, "--codec", "gzip:9", str(src), str(out)], stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while not list(out.parent.glob(".h5tozarr-tmp-*")) and p.poll() is None and time.time() < deadline:
        time.sleep(0.005)
    assert p.poll() is None, "the conversion ended before it could be killed"
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=60)
    left = list(out.parent.glob(".h5tozarr-tmp-*"))
    assert left == [temp_name(out, "h5tozarr", "tmp", p.pid)], left
    small = r.path("small.h5")
    with h5py.File(small, "w") as f:
        f.create_dataset("y", data=np.arange(5))
    q = run(H5TOZARR, small, out)
    assert f"removed {left[0]}, left by a killed run (process {p.pid})" in q.stderr, q.stderr
    assert not list(out.parent.glob(".h5tozarr-*")), list(out.parent.glob(".h5tozarr-*"))
    assert list(zarr.open_group(out, mode="r").keys()) == ["y"]
    # a killed --overwrite between moving the old output aside and renaming the new one into place
    gone = dead_pid()
    old = temp_name(out, "h5tozarr", "old", gone)
    out.rename(old)
    want = tree_hash(old)
    other = r.path("other.zarr")  # another output's leftovers are not touched
    stray = temp_name(other, "h5tozarr", "tmp", gone)
    stray.mkdir()
    alive = temp_name(out, "h5tozarr", "tmp", os.getpid())  # a live process's temporary is not touched
    alive.mkdir()
    q = run(H5TOZARR, small, out, expect=1)  # the old output is back, so the output exists
    assert f"put back from {old}" in q.stderr and "the output exists" in q.stderr, q.stderr
    assert tree_hash(out) == want and not old.exists() and stray.exists() and alive.exists()
    shutil.rmtree(stray)
    shutil.rmtree(alive)


def main():
    args = harness.parse_args(__doc__)
    harness.tool_or_skip("H5TOZARR")
    r = harness.Runner.in_scratch(args)
    r.run("netCDF-4 -> Zarr v3: zarr-python, xarray", t_netcdf, r, 3)
    r.run("netCDF-4 -> Zarr v2: zarr-python, xarray, netCDF-C", t_netcdf, r, 2)
    r.run("xarray sees what it sees in netCDF (Zarr v3)", t_xarray_view, r, 3)
    r.run("xarray sees what it sees in netCDF (Zarr v2, netCDF-C)", t_xarray_view, r, 2)
    r.run("float16, enum, compound -> Zarr v3", t_types, r, 3)
    r.run("float16, enum, compound -> Zarr v2", t_types, r, 2)
    r.run("compound with an array member", t_array_member, r)
    r.run("h5py dimension scales", t_h5py_scales, r)
    r.run("datasets without scales: netCDF-C's phony dimension names", t_phony_dims, r)
    r.run("opaque, reference, vlen refused by name", t_refused, r)
    r.run("bad input and existing output", t_bad_input, r)
    r.run("interrupted conversion", t_interrupted, r)
    r.run("--overwrite never destroys what was not asked for", t_never_destroys, r)
    r.run("a killed conversion's leftovers are removed by the next run", t_killed, r)
    r.finish()


if __name__ == "__main__":
    main()
