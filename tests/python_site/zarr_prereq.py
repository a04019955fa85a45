"""A missing test prerequisite: the one way a libzarr test says that it cannot run.

A test that cannot run because something it needs is not there (a Python package, Python 3.12 with
zarr-python 3.4.2, a program CMake did not build) calls `missing(reason)`. Outside CI it prints
"SKIPPED: <reason>" and exits with status 77, which CTest counts as skipped (SKIP_RETURN_CODE, set by
zarr_add_test in CMakeLists.txt). Under CI=true nothing may be skipped: it prints "FAIL: <reason>" and
exits with status 1 (and CMakeLists.txt sets no SKIP_RETURN_CODE there, so a 77 fails too).

The reason is followed by what the build's Python set-up (cmake/python_env.cmake) recorded about the
test interpreters, when it could not prepare one: the files named in $ZARR_PYTHON_ENV_STATUS.

sitecustomize.py, beside this file on every Python test's PYTHONPATH, sends an uncaught
ModuleNotFoundError here, so that a missing package is a skip with its reason, never a traceback.
"""
import os
import sys

SKIP_STATUS = 77


def in_ci():
    return os.environ.get("CI", "").lower() == "true"


def setup_notes():
    """The set-up's own words about interpreters it could not prepare (files holding "ok" are left out)."""
    notes = []
    for path in filter(None, os.environ.get("ZARR_PYTHON_ENV_STATUS", "").split(os.pathsep)):
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read().strip()
        except OSError:
            continue
        if text and text != "ok":
            notes.append(text)
    return notes


def message(reason):
    return "\n  ".join([reason, *setup_notes()])


def missing(reason):
    """Ends the test: skipped (77) outside CI, failed (1) under CI=true. Never returns."""
    sys.stdout.flush()
    if in_ci():
        print(f"FAIL: {message(reason)}\n  (CI=true: every prerequisite must be there, no test is skipped)",
              flush=True)
        sys.exit(1)
    print(f"SKIPPED: {message(reason)}", flush=True)
    sys.exit(SKIP_STATUS)
