#!/usr/bin/env python3
"""The Fortran module `zarr` against zarr-python (CTest: interop.fortran; run when CMake found a
Fortran compiler). Usage: fortran_interop.py PATH/TO/zarr_fortran_test [-v] [-k NAME]

  1. `zarr_fortran_test write DIR` writes arrays with the Fortran module (ranks 0..7, every kind, logical,
     logical(c_bool), conversions on write, strided writes from array sections, start/count, resize,
     groups and attributes); zarr-python reads each one and it must equal the numpy model: a Fortran
     A(n1, .., nr) is the Zarr array [nr, .., n1], i.e. the numpy array of the values in Fortran element
     order, reshaped in C order to the reversed shape;
  2. zarr-python writes arrays (every kind, uint16, sharded, v2, dimension names, a hierarchy with
     attributes) and `zarr_fortran_test read DIR` checks the values itself, with reads into other types,
     planes, strides, sections and its stat/errmsg errors; it must report 0 failures;
  3. `zarr_fortran_test die DIR` fails an open without stat: the program must stop with a non-zero
     status and the library's message on stderr;
  4. `zarr_fortran_test icechunk DIR` writes and commits an Icechunk repository (docs/icechunk.md)
     through the module and checks it itself (commit, discard, a snapshot read back, a commit to a
     snapshot refused); the repository's history is then read through libzarr's C API here.
Exit status: 0 pass, 1 fail.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import numpy as np
    import zarr
except ImportError as e:  # pragma: no cover - CI installs them (tools/requirements-ci.txt)
    print(f"SKIP: {e}")
    sys.exit(77)
import harness  # noqa: E402

# The value formulas of fortran/tests/zarr_fortran_test.f90 (L: 0-based linear index, Fortran order).
VALUES = {
    "int8": lambda L: (L * 7 % 251 - 125).astype(np.int8),
    "int16": lambda L: (L * 31 % 60001 - 30000).astype(np.int16),
    "int32": lambda L: (L * 100003 - 2000000).astype(np.int32),
    "int64": lambda L: (L * 3000000019 - 7).astype(np.int64),
    "float32": lambda L: (L.astype(np.float32) * np.float32(0.25) - np.float32(3.5)).astype(np.float32),
    "float64": lambda L: (L - 17).astype(np.float64) / 8.0,
    "complex64": lambda L: (L * 0.5 - 1j * L * 0.25).astype(np.complex64),
    "complex128": lambda L: (L * 1.5 + 1j * (L - 1000.0)).astype(np.complex128),
    "bool": lambda L: L % 3 == 0,
}


def fortran_array(values_of, fshape):
    """The Zarr-side (C-order, reversed-shape) numpy array of a Fortran array whose element with
    linear index L holds values_of(L)."""
    n = int(np.prod(fshape, dtype=np.int64))
    return values_of(np.arange(n, dtype=np.int64)).reshape(tuple(reversed(fshape)))


def same(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    assert np.array_equal(got, want), f"{what}: values differ\n got {got.ravel()[:12]}\nwant {want.ravel()[:12]}"


def run_program(exe, mode, d):
    r = subprocess.run([exe, mode, str(d)], capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


# ---- 1. Fortran writes, zarr-python reads ------------------------------------------------------------
def check_written(runner, d):
    def arr(name):
        return zarr.open_array(str(d / name), mode="r")

    s7 = [5, 4, 3, 2, 2, 2, 2]

    def ranks():
        z = arr("rank0")
        assert z.shape == (), z.shape
        assert z[()] == VALUES["float64"](np.int64(17)), z[()]
        for r in range(1, 8):
            z = arr(f"rank{r}")
            same(z[...], fortran_array(VALUES["float64"], s7[:r]), f"rank{r}")
            assert z.chunks == tuple(reversed([3, 2, 2, 1, 2, 1, 2][:r])), z.chunks

    runner.run("write ranks 0..7", ranks)

    for dtype, f in VALUES.items():
        runner.run(f"write {dtype}", lambda dtype=dtype, f=f: same(arr(dtype)[...], fortran_array(f, [5, 4, 3]), dtype))
    runner.run("write logical(c_bool)",
               lambda: same(arr("bool_c")[...], fortran_array(lambda L: (L + 1) % 3 == 0, [6, 5]), "bool_c"))
    runner.run("write real64 buffer into int16",
               lambda: same(arr("int16_from_real64")[...],
                            fortran_array(lambda L: (L * 11 - 100).astype(np.int16), [7, 3]), "int16_from_real64"))
    runner.run("write logical buffer into uint8",
               lambda: same(arr("uint8_from_logical")[...],
                            fortran_array(lambda L: (L % 3 == 0).astype(np.uint8), [5, 4, 3]), "uint8_from_logical"))

    def strided():
        # Model in Fortran terms (F = Fortran array, 1-based), then transpose to Zarr order.
        big = np.arange(1, 81, dtype=np.float64).reshape((8, 10)).T  # big(i, j) = i + 10 (j-1)
        F = np.zeros((10, 8))
        F[0:9:2, 1:8:3] = big[0:9:2, 1:8:3]
        F[7:10, 0:2] = -np.arange(1, 7, dtype=np.float64).reshape((2, 3)).T
        F[9, 7] = 1000.0
        same(arr("strided")[...], F.T, "strided")

    runner.run("write sections with start/stride/count", strided)

    def series():
        z = arr("series")
        assert z.shape == (3, 3, 4), z.shape
        want = np.stack([np.arange(1, 13).reshape((3, 4)) + 100 * i for i in (1, 2, 3)]).astype(np.int32)
        same(z[...], want, "series")

    runner.run("resize and append planes", series)

    def tree():
        g = zarr.open_group(str(d / "tree"), mode="r")
        assert dict(g.attrs) == {"title": "written by Fortran", "version": 2}, dict(g.attrs)
        assert sorted(g.keys()) == ["deep", "sub"], sorted(g.keys())
        assert dict(g["sub"].attrs) == {"level": 1}
        x = g["sub/x"]
        same(x[...], np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32), "sub/x")
        assert dict(x.attrs) == {"units": "m", "scale": [1, 2, 3]}, dict(x.attrs)
        same(g["deep/y"][...], np.array([1.5, 2.5, 3.5, 4.5], dtype=np.float32), "deep/y")
        meta = json.loads((d / "named" / "zarr.json").read_text())
        assert meta["dimension_names"] == ["y", "x"], meta

    runner.run("groups and attributes", tree)

    def keyword_create():
        z = arr("kw")
        assert z.shape == (3, 4, 6) and z.chunks == (3, 2, 3), (z.shape, z.chunks)
        assert z.dtype == np.float64 and z.fill_value == -1.5, (z.dtype, z.fill_value)
        assert z.metadata.dimension_names == ("time", "y", "x"), z.metadata.dimension_names
        assert dict(z.attrs) == {"units": "K"}, dict(z.attrs)
        meta = json.loads((d / "kw" / "zarr.json").read_text())
        gz = [c for c in meta["codecs"] if c["name"] == "gzip"]
        assert gz and gz[0]["configuration"]["level"] == 5, meta["codecs"]
        want = np.full((3, 4, 6), -1.5)
        want[:2] = fortran_array(VALUES["float64"], [6, 4, 2])
        same(z[...], want, "kw")

        s = zarr.open_array(str(d / "kwgroup" / "sharded"), mode="r")
        assert s.shape == (6, 8) and s.shards == (6, 4) and s.chunks == (3, 2), (s.shape, s.shards, s.chunks)
        assert s.fill_value == 7 and s.dtype == np.int32, (s.fill_value, s.dtype)
        want = np.full((6, 8), 7, dtype=np.int32)
        want[:4] = (np.arange(32, dtype=np.int32) * 3 - 40).reshape((4, 8))
        same(s[...], want, "kwgroup/sharded")

        v = zarr.open_array(str(d / "kwgroup" / "v2"), mode="r")
        assert v.metadata.zarr_format == 2 and v.dtype == np.uint8 and v.fill_value == 200, v.metadata
        zarray = json.loads((d / "kwgroup" / "v2" / ".zarray").read_text())
        assert zarray["compressor"]["id"] == "blosc" and zarray["compressor"]["cname"] == "lz4", zarray
        assert zarray["compressor"]["shuffle"] == 2, zarray
        assert dict(v.attrs)["_ARRAY_DIMENSIONS"] == ["lat", "lon"], dict(v.attrs)
        want = np.full((2, 5), 200, dtype=np.uint8)
        want[1] = np.arange(1, 6)
        same(v[...], want, "kwgroup/v2")
        same(zarr.open_array(str(d / "kwgroup" / "cfill"), mode="r")[...],
             np.full(3, 1.5 - 2j, dtype=np.complex128), "kwgroup/cfill")
        same(zarr.open_array(str(d / "kwgroup" / "ffill"), mode="r")[...],
             np.full(3, -3, dtype=np.float32), "kwgroup/ffill")
        for bad in ("bad_rank", "bad_fill", "bad_range", "bad_codec", "bad_shards"):
            assert not (d / "kwgroup" / bad).exists(), bad

    runner.run("keyword create (creation spec)", keyword_create)


# ---- 2. zarr-python writes, Fortran reads --------------------------------------------------------------
def write_for_fortran(d):
    def create(name, data, chunks, **kw):
        z = zarr.create_array(str(d / name), shape=data.shape, chunks=chunks, dtype=data.dtype, **kw)
        z[...] = data
        return z

    s7 = [5, 4, 3, 2, 2, 2, 2]
    create("rank0", np.array(VALUES["float64"](np.int64(17))), ())
    for r in range(1, 8):
        create(f"rank{r}", fortran_array(VALUES["float64"], s7[:r]), tuple(reversed([3, 2, 2, 1, 2, 1, 2][:r])))
    for dtype, f in VALUES.items():
        create(dtype, fortran_array(f, [5, 4, 3]), (2, 3, 2))
    create("uint16", fortran_array(lambda L: (L * 13 % 30000).astype(np.uint16), [5, 4, 3]), (3, 4, 5))
    data = fortran_array(lambda L: (L * 7 % 1000).astype(np.int32), [40, 30, 6])
    z = zarr.create_array(str(d / "sharded_int32"), shape=data.shape, shards=(2, 10, 20), chunks=(1, 5, 10),
                          dtype=np.int32)
    z[...] = data
    create("v2_float32", fortran_array(VALUES["float32"], [5, 4, 3]), (3, 3, 3), zarr_format=2)
    create("named", np.zeros((2, 3, 4), dtype=np.int8), (2, 3, 4), dimension_names=["time", "y", "x"])
    g = zarr.create_group(str(d / "tree"), attributes={"creator": "zarr-python", "n": 3})
    g.create_array("a", shape=(2,), dtype=np.int8)
    g.create_array("b", shape=(2,), dtype=np.int8)
    c = g.create_group("sub").create_array("c", shape=(2,), dtype=np.int32, attributes={"units": "K"})
    c[...] = np.array([7, 8], dtype=np.int32)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    exe = sys.argv.pop(1)
    args = harness.parse_args(__doc__)
    tmp = Path(os.environ.get("ZARR_TEST_TMPDIR") or tempfile.mkdtemp(prefix="zarr_fortran_"))
    runner = harness.Runner(tmp, args.verbose, args.k)

    wdir = runner.path("fortran_wrote")
    wdir.mkdir(parents=True)
    rc, out, err = run_program(exe, "write", wdir)
    sys.stdout.write(out)
    if rc != 0:
        runner.fail("zarr_fortran_test write", f"exit {rc}\n{err}")
    else:
        check_written(runner, wdir)

    rdir = runner.path("python_wrote")
    rdir.mkdir(parents=True)
    write_for_fortran(rdir)

    def fortran_reads():
        rc, out, err = run_program(exe, "read", rdir)
        sys.stdout.write(out)
        assert rc == 0 and " 0 failed" in out, f"zarr_fortran_test read: exit {rc}\n{out}\n{err}"

    runner.run("Fortran reads zarr-python's arrays", fortran_reads)

    def dies():
        ddir = runner.path("die")
        ddir.mkdir(parents=True)
        rc, out, err = run_program(exe, "die", ddir)
        assert rc != 0, f"exit status 0 after a failed open without stat\n{out}{err}"
        assert "still running" not in out, out
        assert "ZARR_ERR_NOT_FOUND" in err and "no such array" in err, f"stderr: {err!r}"

    runner.run("no stat: ERROR STOP with the library's message", dies)

    def icechunk():
        idir = runner.path("icechunk")
        idir.mkdir(parents=True)
        rc, out, err = run_program(exe, "icechunk", idir)
        assert rc == 0 and " 0 failed" in out, f"zarr_fortran_test icechunk: exit {rc}\n{out}\n{err}"
        if not (idir / "repo").exists():
            return  # built without the icechunk feature (the program checked ZARR_ERR_UNSUPPORTED)
        import zarr_ctypes as zc
        harness.load_library()
        with zc.Array.open(f"icechunk://{idir}/repo!/a") as a:
            got = np.frombuffer(a.read(), "<i4")
        want = np.arange(1, 13, dtype="<i4") * 11
        want[2:7] = -1
        same(got, want, "the Fortran commit read through the C API")

    runner.run("Icechunk: commit, discard, versions", icechunk)

    print(f"fortran interop: {runner.passed} passed, {len(runner.failed)} failed")
    return 1 if runner.failed else 0


if __name__ == "__main__":
    sys.exit(main())
