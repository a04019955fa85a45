#!/usr/bin/env python3
"""Reads the arrays an MPI test wrote with zarr-python and compares them with numpy.

    mpi_check.py io DIR          DIR/sharded.zarr and DIR/unsharded.zarr of test_mpi_io.c:
                                 cell (i, j, k) = i*10000 + j*100 + k, shape (60, 30, 10), int32
    mpi_check.py simulation DIR  DIR/simulation.zarr of examples/mpi_simulation.c: float64 (t, y, x),
                                 cell = t*1e6 + y*1000 + x + 0.25 (exact in float64)
    mpi_check.py fortran_blocks DIR  DIR/mpi_blocks.zarr of examples/fortran/mpi_blocks.f90: float64
                                 Zarr shape (12, 30, 40), cell [k, j, i] = k*10000 + j*100 + i
    mpi_check.py create_from_spec DIR  DIR/spec_v3.zarr and DIR/spec_v2.zarr of
                                 test_mpi_create_from_spec.c: float32 (44, 36), cell (i, j) =
                                 i*100 + j + 0.5 for i < 40, the fill value -7.5 below; gzip, dimension
                                 names y, x and a title attribute

    mpi_check.py collective DIR  DIR/collective.zarr of test_mpi_collective.c (4 ranks): int32 (17, 37)
                                 in 8 x 16 shards, cell (i, j) = 5000000 + i*1000 + j
    mpi_check.py fortran_collective DIR  DIR/fortran_collective.zarr of test_mpi_collective.f90 (3 ranks):
                                 float64, Fortran a(23, 15) = Zarr (15, 23), cell [j, i] = j*1000 + i + 0.5
    mpi_check.py icechunk DIR    the Icechunk repository DIR/repo of test_mpi_icechunk.c (4 ranks), with
                                 Python icechunk 2.3.0 (run under $ZARR_PYTHON312): branch main is one
                                 commit (the id in DIR/repo.snapshot) on top of the repository's first,
                                 the int32 array field (32, 12) in it, cell (i, j) = 1000*i + j + 7

Exit 0 when every cell matches; 77 when zarr-python is missing (a skip, except under CI=true)."""
import sys
from pathlib import Path

try:
    import numpy as np
    import zarr
except ImportError as e:  # pragma: no cover
    print(f"skipped: {e}")
    sys.exit(77)


def check(path, expected):
    a = zarr.open_array(str(path), mode="r")
    got = a[...]
    assert got.dtype == expected.dtype, (path, got.dtype, expected.dtype)
    assert got.shape == expected.shape, (path, got.shape, expected.shape)
    bad = np.argwhere(got != expected)
    assert bad.size == 0, f"{path}: {len(bad)} cells differ, first {bad[:5].tolist()}"
    print(f"{path.name}: {got.shape} {got.dtype} equal to numpy's values (zarr-python {zarr.__version__})")


def main():
    kind, root = sys.argv[1], Path(sys.argv[2])
    if kind == "io":
        i, j, k = np.meshgrid(np.arange(60), np.arange(30), np.arange(10), indexing="ij")
        expected = (i * 10000 + j * 100 + k).astype(np.int32)
        for name in ("sharded", "unsharded"):
            check(root / f"{name}.zarr", expected)
    elif kind == "simulation":
        meta = zarr.open_array(str(root / "simulation.zarr"), mode="r")
        nt, ny, nx = meta.shape
        t, y, x = np.meshgrid(np.arange(nt), np.arange(ny), np.arange(nx), indexing="ij")
        expected = (t * 1e6 + y * 1000.0 + x + 0.25).astype(np.float64)
        check(root / "simulation.zarr", expected)
    elif kind == "fortran_blocks":
        k, j, i = np.meshgrid(np.arange(12), np.arange(30), np.arange(40), indexing="ij")
        check(root / "mpi_blocks.zarr", (k * 10000 + j * 100 + i).astype(np.float64))
    elif kind == "create_from_spec":
        i, j = np.meshgrid(np.arange(44), np.arange(36), indexing="ij")
        expected = np.where(i < 40, i * 100 + j + 0.5, -7.5).astype(np.float32)
        for name, fmt in (("spec_v3", 3), ("spec_v2", 2)):
            check(root / f"{name}.zarr", expected)
            a = zarr.open_array(str(root / f"{name}.zarr"), mode="r")
            assert a.metadata.zarr_format == fmt, (name, a.metadata.zarr_format)
            assert a.fill_value == np.float32(-7.5), (name, a.fill_value)
            assert a.attrs["title"] == "zarr_mpi_create_from_spec", (name, dict(a.attrs))
            assert a.chunks == (10, 12), (name, a.chunks)
            names = a.metadata.dimension_names if fmt == 3 else a.attrs["_ARRAY_DIMENSIONS"]
            assert tuple(names) == ("y", "x"), (name, names)
    elif kind == "collective":
        i, j = np.meshgrid(np.arange(17), np.arange(37), indexing="ij")
        check(root / "collective.zarr", (5000000 + i * 1000 + j).astype(np.int32))
        a = zarr.open_array(str(root / "collective.zarr"), mode="r")
        assert a.shards == (8, 16) and a.chunks == (4, 8), (a.shards, a.chunks)
    elif kind == "fortran_collective":
        j, i = np.meshgrid(np.arange(15), np.arange(23), indexing="ij")
        check(root / "fortran_collective.zarr", (j * 1000.0 + i + 0.5).astype(np.float64))
    elif kind == "icechunk":
        try:
            import icechunk
        except ImportError as e:  # pragma: no cover
            print(f"skipped: {e}")
            sys.exit(77)
        repo = icechunk.Repository.open(icechunk.local_filesystem_storage(str(root / "repo")))
        history = [(s.id, s.message) for s in repo.ancestry(branch="main")]
        want_id = (root / "repo.snapshot").read_text().strip()
        assert [m for _, m in history] == ["four ranks, one commit", "Repository initialized"], history
        assert history[0][0] == want_id, (history, want_id)
        a = zarr.open_array(repo.readonly_session("main").store, path="field", mode="r")
        i, j = np.meshgrid(np.arange(32), np.arange(12), indexing="ij")
        got = a[...]
        assert got.shape == (32, 12) and np.array_equal(got, (1000 * i + j + 7).astype(np.int32)), got
        assert a.attrs["ranks"] == 4, dict(a.attrs)
        print(f"repo: one commit {want_id} with every rank's rows (icechunk {icechunk.__version__})")
    else:
        sys.exit(f"unknown check {kind}")


if __name__ == "__main__":
    main()
