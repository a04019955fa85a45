#!/usr/bin/env python3
"""CTest build.skip_mechanism: the one way a test says a prerequisite is missing behaves as documented.

Runs small scripts under this interpreter with tests/python_site on PYTHONPATH (as CMakeLists.txt runs
every Python test) and checks the exit status and the first line of output:
  * an uncaught import of a package that is not installed: "SKIPPED: ..." and 77 outside CI,
    "FAIL: ..." and 1 under CI=true, with the set-up's notes ($ZARR_PYTHON_ENV_STATUS) appended;
  * zarr_prereq.missing(reason) called directly: the same;
  * a module of this repository that cannot be imported (a real bug) and any other exception: a
    traceback and status 1, in and outside CI;
  * a script that passes: 0.
Exit status 0 when every case behaves so, 1 otherwise."""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(code, ci, status_text=None):
    """(status, stdout, stderr) of `code` run as a script with tests/python_site on PYTHONPATH."""
    with tempfile.TemporaryDirectory() as d:
        script = Path(d) / "zarr_prereq_case.py"
        script.write_text(code)
        env = {k: v for k, v in os.environ.items() if k not in ("CI", "ZARR_PYTHON_ENV_STATUS")}
        env["PYTHONPATH"] = str(HERE)
        if ci:
            env["CI"] = "true"
        if status_text is not None:
            status = Path(d) / "zarr-env-status.txt"
            status.write_text(status_text)
            env["ZARR_PYTHON_ENV_STATUS"] = str(status)
        p = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def main():
    failures = []
    cases = 0

    def expect(name, got, status, first, contains=(), absent=()):
        nonlocal cases
        cases += 1
        code, out, err = got
        line = (out.splitlines() or [""])[0]
        if not (code == status and line.startswith(first) and all(c in out + err for c in contains)
                and not any(a in out for a in absent)):
            failures.append(f"{name}: status {code}, stdout {out!r}, stderr {err[-300:]!r}")

    missing_pkg = "import zarr_prereq_no_such_package_42\n"
    expect("missing package", run(missing_pkg, ci=False), 77, "SKIPPED:", ["zarr_prereq_no_such_package_42"])
    expect("missing package, CI=true", run(missing_pkg, ci=True), 1, "FAIL:", ["CI=true"])
    expect("missing package, with the set-up's note", run(missing_pkg, ci=False, status_text="pip: no network\n"),
           77, "SKIPPED:", ["pip: no network"])
    expect("a status file holding 'ok' adds no note", run(missing_pkg, ci=False, status_text="ok\n"), 77,
           "SKIPPED:", absent=["\n  ok"])
    direct = "import zarr_prereq\nzarr_prereq.missing('no Python 3.12')\nprint('not reached')\n"
    expect("missing(reason)", run(direct, ci=False), 77, "SKIPPED: no Python 3.12", absent=["not reached"])
    expect("missing(reason), CI=true", run(direct, ci=True), 1, "FAIL: no Python 3.12", absent=["not reached"])
    # tests/interop/harness.py is a module of this repository: failing to import it is a bug, not a skip.
    own = "raise ModuleNotFoundError('No module named harness', name='harness')\n"
    expect("a module of this repository", run(own, ci=False), 1, "", ["Traceback", "harness"], absent=["SKIPPED"])
    expect("another exception", run("raise ValueError('boom')\n", ci=False), 1, "", ["ValueError: boom"])
    expect("an ImportError that is not a missing module",
           run("raise ImportError('cannot import name x from y')\n", ci=False), 1, "", ["ImportError"],
           absent=["SKIPPED"])
    expect("a script that passes", run("print('fine')\n", ci=False), 0, "fine")

    for f in failures:
        print(f"FAIL {f}")
    print(f"{cases - len(failures)} of {cases} cases behave as documented")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
