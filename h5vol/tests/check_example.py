#!/usr/bin/env python3
"""Runs examples/hdf5_vol.c (an HDF5-only program) through the connector, then checks with zarr-python
that what it wrote is the Zarr hierarchy it describes.

    HDF5_PLUGIN_PATH=... HDF5_VOL_CONNECTOR=zarr python3 h5vol/tests/check_example.py <example binary>

Exit status: 0 passed, 1 failed, 77 skipped (zarr-python or numpy missing; a failure under CI=true)."""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import numpy as np
    import zarr
except ImportError as e:
    if os.environ.get("CI", "").lower() == "true":
        print(f"FAIL: {e}")
        sys.exit(1)
    print(f"SKIPPED: {e}")
    sys.exit(77)

tmp = Path(tempfile.mkdtemp(dir=os.environ.get("ZARR_TEST_TMPDIR")))
path = tmp / "example.zarr"
p = subprocess.run([sys.argv[1], str(path)], capture_output=True, text=True, timeout=300)
print(p.stdout, p.stderr, end="")
if p.returncode != 0:
    print(f"FAIL: the example exited {p.returncode}")
    sys.exit(1)
g = zarr.open_group(path, mode="r")
a = g["run/temperature"]
t, x = np.meshgrid(np.arange(40), np.arange(30), indexing="ij")
expect = np.full((45, 30), -999.0)
expect[:40] = 280.0 + t * 0.5 + x * 0.01
checks = {
    "format": g.metadata.zarr_format == 3,
    "shape": a.shape == (45, 30),
    "chunks": a.chunks == (16, 16),
    "fill value": a.fill_value == -999.0,
    "gzip": [c.to_dict()["name"] for c in a.compressors] == ["gzip"],
    "values": np.array_equal(a[...], expect),
    "attributes": {k: v for k, v in a.attrs.items() if k != "_libzarr_hdf5"} == {"units": "K"}
    and {k: v for k, v in g["run"].attrs.items() if k != "_libzarr_hdf5"} == {"steps": 40},
}
failed = [k for k, ok in checks.items() if not ok]
print("FAIL: " + ", ".join(failed) if failed else f"{len(checks)} checks passed")
sys.exit(1 if failed else 0)
