#!/usr/bin/env python3
"""Writes the zarrdump test hierarchies with zarr-python (an independent writer):

    python3 tools/make_zarrdump_fixtures.py      # zarr-python 3.1.6 (tools/requirements-ci.txt)

tests/zarrdump/small.zarr (Zarr v3): a root group with attributes; 'temperature' float32 [4, 5]
(chunks [2, 3], dimension names, NaN fill, two of four chunks written); 'counts' int16 [10] (chunks
[4], fill -1, all written); 'sub' group with 'flags' bool [3] and 'sharded' uint8 [8, 8] (shards
[4, 8], inner chunks [2, 4], one of two shards written); 'names' string [3].
tests/zarrdump/small_v2.zarr (Zarr v2): a group with 'grid' int32 [3, 4] (blosc lz4) and 'f8' float64
[5] (zlib, a shuffle filter... none written: every element is the fill value 2.5).
tests/zarrdump/cdl.zarr (Zarr v3): a small CF-style hierarchy as h5tozarr writes a netCDF-4 file
(docs/hdf5-netcdf.md, "Conventions"): coordinate variables time (unlimited), lat, lon; packed int16
'temp' with float32 scale_factor/add_offset and int16 _FillValue typed by _libzarr_hdf5's
attribute_types; a scalar 'crs'; a string 'station'; an enum's integers 'quality'; a dimension 'nv' no array uses (the group's
dimensions record); untyped global attributes of every JSON kind; a subgroup 'obs' using the root's
'lat' and its own 'n'.
tests/zarrdump/cdl_v2.zarr (Zarr v2, _ARRAY_DIMENSIONS): a fixed-length string array (|S5), float32 values that need 7 digits, float64 values that need 15 (one row of 40, wrapped), and untyped attributes netCDF-C's
NCZarr reads (the test compares zarrdump's CDL with netCDF4-python's view of this hierarchy).
tests/zarrdump/strings.zarr (Zarr v3: null_terminated_bytes, fixed_length_utf32) and strings_v2.zarr
(Zarr v2: |S5, <U3): fixed-length strings; group attributes whose names CDL escapes.
tests/zarrdump/structs.zarr (Zarr v3 struct) and structs_v2.zarr (v2 structured dtype): 'rec' with an
int32, a float64 and an |S4 field.
tests/zarrdump/nan_attrs.zarr (Zarr v3): attributes holding the bare JSON tokens NaN, Infinity,
-Infinity (as zarr-python writes them), typed float32 and float64.
tests/zarrdump/netcdf_types.zarr (Zarr v3): netCDF-4's user-defined types (the records' named_types and
named_type) and a char array, as h5tozarr writes them.
tests/zarrdump/corrupt.zarr (Zarr v3): 'ok' and 'bad' float64 [4]; bad's one chunk is not zstd.
The expected outputs beside them (*.expected.txt) are zarrdump's, checked by hand once and kept:
tests/zarrdump/test_zarrdump.py compares them exactly and compares --json with zarr-python's view.
"""
import json
import shutil
from pathlib import Path

import numcodecs
import numpy as np
import zarr

OUT = Path(__file__).resolve().parent.parent / "tests" / "zarrdump"


def v3():
    path = OUT / "small.zarr"
    shutil.rmtree(path, ignore_errors=True)
    root = zarr.open_group(str(path), mode="w", zarr_format=3, attributes={"title": "zarrdump fixture", "version": 1})
    t = root.create_array("temperature", shape=(4, 5), chunks=(2, 3), dtype="float32", fill_value=float("nan"),
                          dimension_names=["y", "x"], attributes={"units": "K"})
    t[0:2, :] = np.arange(10, dtype="float32").reshape(2, 5) + 0.5
    c = root.create_array("counts", shape=(10,), chunks=(4,), dtype="int16", fill_value=-1)
    c[:] = np.arange(10, dtype="int16") * 3 - 7
    sub = root.create_group("sub")
    f = sub.create_array("flags", shape=(3,), chunks=(3,), dtype="bool", fill_value=False)
    f[:] = [True, False, True]
    s = sub.create_array("sharded", shape=(8, 8), chunks=(2, 4), shards=(4, 8), dtype="uint8", fill_value=0)
    s[0:4, :] = np.arange(32, dtype="uint8").reshape(4, 8)
    n = root.create_array("names", shape=(3,), chunks=(3,), dtype=str, fill_value="")
    n[:] = np.array(["a", "bb", "ccc"], dtype=object)


def v2():
    path = OUT / "small_v2.zarr"
    shutil.rmtree(path, ignore_errors=True)
    root = zarr.open_group(str(path), mode="w", zarr_format=2, attributes={"kind": "v2"})
    g = root.create_array("grid", shape=(3, 4), chunks=(2, 2), dtype="<i4", fill_value=0,
                          compressors=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1))
    g[:] = np.arange(12, dtype="<i4").reshape(3, 4)
    root.create_array("f8", shape=(5,), chunks=(5,), dtype="<f8", fill_value=2.5,
                      compressors=numcodecs.Zlib(level=1), filters=[numcodecs.Shuffle(elementsize=8)])


def cdl():
    path = OUT / "cdl.zarr"
    shutil.rmtree(path, ignore_errors=True)
    root = zarr.open_group(str(path), mode="w", zarr_format=3, attributes={
        "Conventions": "CF-1.8", "title": "zarrdump's \"CDL\" fixture", "int_attr": 7, "big": 2**40,
        "unsigned": 3000000000, "neg": -5, "real": 0.125, "reals": [1.0, 2.5, 1e20], "ints": [1, 2, 3],
        "flag": True, "nested": {"a": [1, 2]}, "names": ["x", "y"], "nothing": None,
        "_libzarr_hdf5": {"dimensions": {"time": {"size": 2, "unlimited": True}, "lat": {"size": 3, "unlimited": False},
                                         "lon": {"size": 4, "unlimited": False}, "nv": {"size": 2, "unlimited": False}},
                          "attribute_types": {"Conventions": "char", "title": "char"}}})
    time = root.create_array("time", shape=(2,), chunks=(1,), dtype="float64", fill_value=float("nan"),
                             dimension_names=["time"], attributes={
                                 "units": "hours since 2000-01-01", "_libzarr_hdf5": {
                                     "unlimited_dimensions": [0], "attribute_types": {"units": "char"}}})
    time[:] = [0.0, 6.0]
    lat = root.create_array("lat", shape=(3,), chunks=(3,), dtype="float32", fill_value=float("nan"),
                            dimension_names=["lat"], attributes={"units": "degrees_north", "_FillValue": "AAAAAAA4j8A=",
                                                                 "_libzarr_hdf5": {"attribute_types": {
                                                                     "units": "string", "_FillValue": "float32"}}})
    lat[:] = np.array([-45.0, 0.1, 45.0], dtype="float32")
    lon = root.create_array("lon", shape=(4,), chunks=(4,), dtype="float32", fill_value=float("nan"),
                            dimension_names=["lon"], attributes={"units": "degrees_east",
                                                                 "_FillValue": "AAAAAAAA+H8="})  # as xarray writes NaN
    lon[:] = np.array([0, 90, 180, 270], dtype="float32")
    temp = root.create_array("temp", shape=(2, 3, 4), chunks=(1, 3, 4), dtype="int16", fill_value=-32767,
                             dimension_names=["time", "lat", "lon"], attributes={
                                 "long_name": "air temperature", "units": "K", "scale_factor": 0.01,
                                 "add_offset": 273.15, "_FillValue": -32767, "valid_range": [-5000, 5000],
                                 "bytes": [1, -2], "ubytes": [1, 2], "ushort": 65535, "uint": 4000000000,
                                 "int64": -1, "uint64": 18446744073709551615, "single": 1.0, "flagged": 1,
                                 "_libzarr_hdf5": {"unlimited_dimensions": [0], "attribute_types": {
                                     "long_name": "char", "units": "char", "scale_factor": "float32",
                                     "add_offset": "float32", "_FillValue": "int16", "valid_range": "int16",
                                     "bytes": "int8", "ubytes": "uint8", "ushort": "uint16", "uint": "uint32",
                                     "int64": "int64", "uint64": "uint64", "single": "float32", "flagged": "bool"}}})
    temp[:] = (np.arange(24, dtype="int16") * 10 - 100).reshape(2, 3, 4)
    temp[1, 2, 3] = -32767
    crs = root.create_array("crs", shape=(), dtype="int32", fill_value=0, attributes={
        "grid_mapping_name": "latitude_longitude", "semi_major_axis": 6378137.0})
    crs[()] = 1
    st = root.create_array("station", shape=(3,), chunks=(3,), dtype=str, fill_value="", dimension_names=["lat"])
    st[:] = np.array(["south pole's", "equator\ttab", "n\u00f6rth"], dtype=object)
    q = root.create_array("quality", shape=(3,), chunks=(3,), dtype="int8", fill_value=0, dimension_names=["lat"],
                          attributes={"_libzarr_hdf5": {"enum": {"base": "int8", "members": {"GOOD": 0, "BAD": 1,
                                                                                          "UNKNOWN": -1}}}})
    q[:] = [0, 1, -1]
    obs = root.create_group("obs", attributes={"source": "buoys"})
    o = obs.create_array("obs_lat", shape=(3, 2), chunks=(3, 2), dtype="float64", fill_value=0.0,
                         dimension_names=["lat", "n"])
    o[:] = np.array([[1.0 / 3, 2.0], [1e-300, -0.5], [123456789.123456789, 1e20]])


def cdl_v2():
    path = OUT / "cdl_v2.zarr"
    shutil.rmtree(path, ignore_errors=True)
    root = zarr.open_group(str(path), mode="w", zarr_format=2, attributes={
        "i": 1, "big": 2**40, "u": 3000000000, "neg": -3, "f": 1.5, "s": "hi", "l": [1, 2], "lf": [1.0, 2.5],
        "b": True, "d": {"a": 1}, "ls": ["a", "bc"]})
    t = root.create_array("t", shape=(2, 3), chunks=(2, 3), dtype="<f4", fill_value=float("nan"),
                          attributes={"_ARRAY_DIMENSIONS": ["y", "x"], "units": "K", "scale": 0.5})
    t[:] = np.array([[0.1, 1 / 3, 2.0], [1e-8, 123456.789, -7.25]], dtype="<f4")
    d = root.create_array("d", shape=(3,), chunks=(3,), dtype="<f8", fill_value=-9999.0,
                          attributes={"_ARRAY_DIMENSIONS": ["x"]})
    d[:] = [0.1, 1 / 3, 2.0 ** 60]
    w = root.create_array("wide", shape=(40,), chunks=(40,), dtype="<f8", fill_value=0.0,
                          attributes={"_ARRAY_DIMENSIONS": ["w"]})
    w[:] = np.linspace(0, 1, 40)  # a row longer than 80 columns: wrapped
    s = root.create_array("fs", shape=(2,), chunks=(2,), dtype="|S5", fill_value=b"", attributes={"_ARRAY_DIMENSIONS": ["y"]})
    s[:] = [b"ab", b"cdefg"]


def strings():
    for fmt, name in ((3, "strings.zarr"), (2, "strings_v2.zarr")):
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        root = zarr.open_group(str(path), mode="w", zarr_format=fmt, attributes={"two words": "x", "3d": 1})
        dims = {"dimension_names": ["n"]} if fmt == 3 else {"attributes": {"_ARRAY_DIMENSIONS": ["n"]}}
        s = root.create_array("fixed_bytes", shape=(3,), chunks=(3,), dtype="|S5", fill_value=b"", **dims)
        s[:] = [b"ab", b"cdefg", b'q"\\']
        u = root.create_array("fixed_unicode", shape=(3,), chunks=(3,), dtype="<U3", fill_value="", **dims)
        u[:] = ["a", "\u00e9t\u00e9", "xyz"]


def structs():
    dt = np.dtype([("x", "<i4"), ("y", "<f8"), ("name", "S4")])
    for fmt, name in ((3, "structs.zarr"), (2, "structs_v2.zarr")):
        path = OUT / name
        shutil.rmtree(path, ignore_errors=True)
        root = zarr.open_group(str(path), mode="w", zarr_format=fmt)
        a = root.create_array("rec", shape=(2,), chunks=(2,), dtype=dt, fill_value=np.zeros((), dtype=dt)[()])
        a[:] = np.array([(1, 2.5, b"ab"), (-3, 0.1, b"cdef")], dtype=dt)


def nan_attrs():
    path = OUT / "nan_attrs.zarr"
    shutil.rmtree(path, ignore_errors=True)
    root = zarr.open_group(str(path), mode="w", zarr_format=3, attributes={
        "nan64": float("nan"), "inf64": float("inf"), "list": [1.0, float("-inf"), float("nan")]})
    root.create_array("v", shape=(2,), chunks=(2,), dtype="float32", fill_value=float("nan"), dimension_names=["n"],
                      attributes={"missing_value": float("nan"), "valid_max": float("inf"), "valid_min": float("-inf"),
                                  "_libzarr_hdf5": {"attribute_types": {"missing_value": "float32", "valid_max": "float32",
                                                                        "valid_min": "float32"}}})


def netcdf_types():
    """netCDF-4's user-defined types and char arrays as h5tozarr writes them (docs/hdf5-netcdf.md, "Named
    types"): the root's record (a string holding JSON) names an enum cloud_t and a compound station_t;
    'cloud' holds cloud_t's integers, 'station' is a structured array of station_t; 'code' a char
    array (1-byte strings); the subgroup 'sub' (record as an object, the earlier form) has its own enum
    level_t and an array of the root's cloud_t."""
    path = OUT / "netcdf_types.zarr"
    shutil.rmtree(path, ignore_errors=True)
    cloud = {"base": "uint8", "members": {"clear": 0, "cumulus": 1, "missing": 255}}
    rec = {"dimensions": {"x": {"size": 3, "unlimited": False}, "n4": {"size": 4, "unlimited": False}},
           "named_types": {"cloud_t": {"enum": cloud},
                           "station_t": {"compound": [["id", "int32"], ["lat", "float32"], ["lon", "float64"]]}}}
    root = zarr.open_group(str(path), mode="w", zarr_format=3, attributes={"_libzarr_hdf5": json.dumps(rec)})
    c = root.create_array("cloud", shape=(3,), chunks=(3,), dtype="uint8", fill_value=255, dimension_names=["x"],
                          attributes={"_libzarr_hdf5": json.dumps({"enum": cloud, "named_type": "/cloud_t"})})
    c[:] = [0, 1, 255]
    dt = np.dtype([("id", "<i4"), ("lat", "<f4"), ("lon", "<f8")])
    s = root.create_array("station", shape=(3,), chunks=(3,), dtype=dt, fill_value=np.zeros((), dt)[()],
                          dimension_names=["x"], attributes={"_libzarr_hdf5": json.dumps({"named_type": "/station_t"})})
    s[:] = np.array([(1, 1.5, 10.0), (2, -2.5, 20.0), (3, 3.5, 30.0)], dt)
    code = root.create_array("code", shape=(3, 4), chunks=(3, 4), dtype="S1", fill_value=b"", dimension_names=["x", "n4"])
    code[:] = np.array([list(b"ab\0\0"), list(b"wxyz"), list(b"\0\0\0\0")], "u1").view("S1")
    sub = root.create_group("sub", attributes={"_libzarr_hdf5": {
        "named_types": {"level_t": {"enum": {"base": "int16", "members": {"low": -1, "high": 1}}}}}})
    lv = sub.create_array("level", shape=(3,), chunks=(3,), dtype="int16", fill_value=0, dimension_names=["x"],
                          attributes={"_libzarr_hdf5": {"enum": {"base": "int16", "members": {"low": -1, "high": 1}},
                                                        "named_type": "/sub/level_t"}})
    lv[:] = [-1, 1, -1]


def corrupt():
    path = OUT / "corrupt.zarr"
    shutil.rmtree(path, ignore_errors=True)
    root = zarr.open_group(str(path), mode="w", zarr_format=3)
    for name in ("bad", "ok"):
        a = root.create_array(name, shape=(4,), chunks=(4,), dtype="float64", fill_value=0.0, dimension_names=["n"])
        a[:] = [1.5, 2.5, 3.5, 4.5]
    (path / "bad" / "c" / "0").write_bytes(b"this is not a zstd frame")


if __name__ == "__main__":
    assert zarr.__version__ == "3.1.6", zarr.__version__
    v3()
    v2()
    cdl()
    cdl_v2()
    strings()
    structs()
    nan_attrs()
    netcdf_types()
    corrupt()
    print(f"wrote {OUT}/small.zarr, small_v2.zarr, cdl.zarr, cdl_v2.zarr, strings.zarr, strings_v2.zarr, structs.zarr, structs_v2.zarr, nan_attrs.zarr, netcdf_types.zarr and corrupt.zarr")
