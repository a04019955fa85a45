"""The interop test scripts' shared harness: command line, library loading, and a runner that
counts passes and collects failures (an assertion, a libzarr error or a reader's exception)."""

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

import zarr_ctypes as zc

ROOT = Path(__file__).resolve().parent.parent.parent


def parse_args(doc):
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("-k", default="", help="run only tests whose name contains this")
    return ap.parse_args()


def import_or_skip(*names):
    """Imports the modules `names` and returns them in order. When one is missing the script is skipped
    (exit 77), except under CI=true (tools/requirements-ci.txt installs them), where that is a failure."""
    try:
        return [importlib.import_module(n) for n in names]
    except ImportError as e:
        if os.environ.get("CI") == "true":
            print(f"FAIL: {e} (required under CI=true: tools/requirements-ci.txt installs it)")
            sys.exit(1)
        print(f"SKIPPED: {e}")
        sys.exit(77)


def tool_or_skip(env_var):
    """The command line tool named by $`env_var` (CMakeLists.txt sets it); skipped (exit 77) without it."""
    tool = os.environ.get(env_var)
    if not tool:
        print(f"SKIPPED: set {env_var} to the tool (CMake does)")
        sys.exit(77)
    return tool


def run_tool(*args, expect=0):
    """Runs a command (arguments as strings), asserting its exit status is `expect`."""
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=300)
    assert p.returncode == expect, f"{args[0]} exit {p.returncode} (expected {expect}): {p.stderr.strip()}"
    return p


def load_library():
    """Loads libzarr from $ZARR_LIB (default target/release/libzarr.so), exiting when it is missing."""
    lib_path = os.environ.get("ZARR_LIB") or str(ROOT / "target" / "release" / "libzarr.so")
    if not Path(lib_path).exists():
        print(f"FAIL: library not found at {lib_path} (build it or set ZARR_LIB)")
        sys.exit(1)
    zc._LIB = zc.load(lib_path)  # fail early on a broken library


class Runner:
    def __init__(self, tmp: Path, verbose: bool, only: str):
        self.tmp = tmp
        self.verbose = verbose
        self.only = only
        self.passed = 0
        self.failed = []
        self.n = 0

    @classmethod
    def in_scratch(cls, args):
        """A runner for parse_args()'s `args` over a new scratch directory below $ZARR_TEST_TMPDIR (else
        the system's temporary directory); finish() removes it."""
        tmp = Path(os.environ.get("ZARR_TEST_TMPDIR") or tempfile.mkdtemp())
        return cls(Path(tempfile.mkdtemp(dir=tmp)), args.verbose, args.k)

    def finish(self):
        """Removes the scratch directory, prints the counts and exits: 1 when a test failed, else 0."""
        shutil.rmtree(self.tmp, ignore_errors=True)
        print(f"{self.passed} passed, {len(self.failed)} failed")
        sys.exit(1 if self.failed else 0)

    def path(self, tag):
        """A fresh path under the scratch directory."""
        self.n += 1
        return self.tmp / f"{self.n:04d}_{tag}"

    def run(self, name, fn, *args):
        if self.only and self.only not in name:
            return
        try:
            fn(*args)
        except AssertionError as e:
            self.fail(name, str(e))
            return
        except zc.ZarrError as e:
            self.fail(name, f"libzarr: {e}")
            return
        except Exception as e:  # noqa: BLE001 - a reader's exception is a test failure
            self.fail(name, f"{type(e).__name__}: {e}")
            if self.verbose:
                traceback.print_exc()
            return
        self.passed += 1
        if self.verbose:
            print(f"PASS {name}")

    def fail(self, name, msg):
        self.failed.append((name, msg))
        print(f"FAIL {name}: {msg}")


def reexec_with_zarr(version, env_var="ZARR_PYTHON312"):
    """Makes sure this script runs under a Python whose zarr is `version`: when the current one is not,
    the script re-executes itself with $`env_var` (CMakeLists.txt sets it; the fixture test
    build.python312_env makes that venv). If that interpreter is missing too, the prerequisite is missing
    (zarr_prereq.missing: skipped, failed under CI=true)."""
    try:
        import zarr  # noqa: F401
        if zarr.__version__ == version:
            return
    except ImportError:
        pass
    other = os.environ.get(env_var, "")
    if other and Path(other).exists() and os.path.realpath(other) != os.path.realpath(sys.executable):
        os.execv(other, [other, sys.argv[0], *sys.argv[1:]])
    sys.path.insert(0, str(ROOT / "tests" / "python_site"))
    import zarr_prereq

    zarr_prereq.missing(f"zarr-python {version} is not installed here, and ${env_var}={other!r} "
                        "is not such an interpreter")
