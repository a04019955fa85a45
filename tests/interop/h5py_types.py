"""The HDF5 datasets of every kind that the HDF5 tool tests share (test_h5tozarr_netcdf.py,
zarrtoh5_netcdf.py): float16, an enum and nested compounds, written with h5py.

Import it after harness.import_or_skip() has found h5py and numpy."""
import h5py
import numpy as np

INNER = np.dtype([("x", "<f4"), ("k", "i1")])
FLAT = np.dtype([("id", ">i4"), ("p", INNER), ("c", "<c8"), ("ok", "?")])
ENUM = h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 42}, basetype="i2")


def write_half_color_table(f, table_fill=None):
    """Writes into the open h5py file `f` the datasets `half` (float16 with infinity, the largest finite
    value and NaN; fill value -1.5), `color` (ENUM) and `table` (7 FLAT records, chunks of 3, fill value
    `table_fill` or HDF5's default); returns the `half` dataset."""
    h = f.create_dataset("half", data=np.array([1.5, -2.25, np.inf, 65504, np.nan], "<f2"), fillvalue=np.float16(-1.5))
    f.create_dataset("color", data=np.array([0, 42, 1, 1, 0], "i2"), dtype=ENUM, chunks=(2,))
    a = np.zeros(7, FLAT)
    a["id"] = np.arange(7) * 1000
    a["p"]["x"] = np.linspace(-1, 1, 7)
    a["p"]["k"] = -np.arange(7)
    a["c"] = np.arange(7) + 1j
    a["ok"] = [1, 0, 1, 0, 1, 1, 0]
    f.create_dataset("table", data=a, chunks=(3,), fillvalue=table_fill)
    return h
