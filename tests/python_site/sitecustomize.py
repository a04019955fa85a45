"""Python runs this at start-up for every Python test (CMakeLists.txt puts this directory on PYTHONPATH).

An import of a package this interpreter lacks, left uncaught by the test, ends the test through
zarr_prereq.missing (skipped outside CI, failed under CI=true) instead of failing it with a traceback.
A module of this repository that cannot be found is a real failure and keeps its traceback.
"""
import os
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
# Where the tests' own modules live (harness, zarr_ctypes, remote_servers, ...).
_PROJECT_DIRS = ["tools", "tests/interop", "tests/zarrdump", "tests/python_site", "mpi/tests", "fortran",
                 "cmake", "bench", "fuzz"]


def _is_project_module(name):
    top = (name or "").split(".")[0]
    if not top:
        return True
    dirs = [_ROOT / d for d in _PROJECT_DIRS]
    if sys.argv and sys.argv[0]:
        dirs.append(Path(sys.argv[0]).resolve().parent)
    return any((d / f"{top}.py").exists() or (d / top / "__init__.py").exists() for d in dirs)


def _hook(kind, value, tb):
    if issubclass(kind, ModuleNotFoundError) and not _is_project_module(value.name):
        import zarr_prereq

        try:
            zarr_prereq.missing(f"the Python package {value.name!r} is not installed for {sys.executable} "
                                f"(tools/requirements-*.txt pin what the tests need)")
        except SystemExit as e:  # an exception hook cannot raise SystemExit: leave directly
            sys.stderr.flush()
            os._exit(e.code if isinstance(e.code, int) else 1)
    _previous(kind, value, tb)


_previous = sys.excepthook
sys.excepthook = _hook
