"""Helpers of the HDF5 tools' tests (test_h5tozarr_netcdf.py, zarrtoh5_netcdf.py, test_hdf5_tools.py): a
hash of a file or directory tree (to prove a refused run touched nothing), a process id that no longer
exists, the temporary names of tools/hdf5/h5z_output.h, and the record h5tozarr writes."""
import hashlib
import json
import os
import re
import socket
import subprocess
from pathlib import Path


def tree_hash(path):
    """SHA-256 over the names, kinds, link targets and contents of everything at and below `path`
    (not following links); "missing" when nothing is there."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return "missing"
    h = hashlib.sha256()
    entries = [path] + (sorted(path.rglob("*")) if path.is_dir() and not path.is_symlink() else [])
    for p in entries:
        rel = str(p.relative_to(path)).encode()
        if p.is_symlink():
            h.update(b"L" + rel + b"\0" + os.readlink(p).encode() + b"\0")
        elif p.is_dir():
            h.update(b"D" + rel + b"\0")
        else:
            h.update(b"F" + rel + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def dead_pid():
    """The id of a process that has ended (a child that ran and was reaped)."""
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def host():
    """This host's name as the tools put it in temporary names (letters, digits and '.'; others '_')."""
    return re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname() or "localhost")


def temp_name(out, tool, kind, pid):
    """The temporary name `.<tool>-<kind>-<host>-<pid>-<name>` beside `out`."""
    out = Path(out)
    return out.parent / f".{tool}-{kind}-{host()}-{pid}-{out.name}"


def hdf5_record(attrs):
    """The record `_libzarr_hdf5` of a node's attributes as a dict: h5tozarr writes it as a string holding
    JSON text (docs/hdf5-netcdf.md, "The reserved attribute"); {} when there is none."""
    rec = dict(attrs).get("_libzarr_hdf5")
    if rec is None:
        return {}
    assert isinstance(rec, str), f"_libzarr_hdf5 is not a string: {rec!r}"
    return json.loads(rec)
