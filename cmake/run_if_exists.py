#!/usr/bin/env python3
"""run_if_exists.py FILE COMMAND...: runs COMMAND when FILE exists, else exits 77 (CTest: skipped).

Used by the interop.fixtures test, whose tests/fixtures/manifest.json may not have been committed yet.
"""
import os
import subprocess
import sys

if len(sys.argv) < 3:
    sys.exit("usage: run_if_exists.py FILE COMMAND...")
if not os.path.exists(sys.argv[1]):
    print(f"skipped: {sys.argv[1]} does not exist")
    sys.exit(77)
sys.exit(subprocess.call(sys.argv[2:]))
