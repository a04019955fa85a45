#!/usr/bin/env python3
"""CTest version.in_step: the package version is written once (Cargo.toml) and everything that states it
agrees, and no documented function is newer than the package.

    python3 tools/check_versions.py SOURCE_DIR --cmake-version X.Y.Z [--build-dir DIR] [--lib libzarr.so]

Checks:
  * Cargo.toml's [package] version, the `zarr` entries of Cargo.lock and fuzz/Cargo.lock, CMake's
    PROJECT_VERSION (--cmake-version), the ZARR_VERSION_MAJOR/_MINOR/_PATCH/_NUMBER/_STRING macros of
    include/zarr.h, and with --build-dir the built zarr.pc and zarrConfigVersion.cmake, and with --lib the
    library's own zarr_version() and zarr_version_number(): all the same version;
  * every `Since: A.B` in include/zarr.h, include/zarr.hpp, include/zarr_mpi.h and fortran/*.f90 is at most
    the package's MAJOR.MINOR (a function documented as newer than the package that ships it);
  * every `find_package(zarr A.B ...)` in README.md and docs/*.md asks for at most the package version, and
    every `libzarr.so.X.Y.Z` named there is the package's file name.
Exit status 1 with one line per disagreement."""
import argparse
import ctypes
import glob
import os
import re
import sys


def parse(v):
    return tuple(int(x) for x in v.split("."))


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source_dir")
    ap.add_argument("--cmake-version", required=True)
    ap.add_argument("--build-dir")
    ap.add_argument("--lib")
    args = ap.parse_args()
    src = args.source_dir
    errors = []

    cargo = read(os.path.join(src, "Cargo.toml"))
    m = re.search(r'^\[package\][^\[]*?^version\s*=\s*"(\d+\.\d+\.\d+)"', cargo, re.M | re.S)
    if not m:
        sys.exit("check_versions: no [package] version in Cargo.toml")
    version = m.group(1)
    vt = parse(version)
    stated = {"CMake PROJECT_VERSION": args.cmake_version}
    for lock in ("Cargo.lock", "fuzz/Cargo.lock"):
        p = os.path.join(src, lock)
        if os.path.exists(p):
            m = re.search(r'^name = "zarr"\nversion = "([^"]+)"', read(p), re.M)
            stated[lock] = m.group(1) if m else "(no zarr package)"
    header = read(os.path.join(src, "include", "zarr.h"))
    macros = dict(re.findall(r"^#define (ZARR_VERSION_\w+) (\S+)", header, re.M))
    try:
        stated["zarr.h ZARR_VERSION_MAJOR.MINOR.PATCH"] = ".".join(
            macros[f"ZARR_VERSION_{k}"] for k in ("MAJOR", "MINOR", "PATCH"))
        stated["zarr.h ZARR_VERSION_STRING"] = macros["ZARR_VERSION_STRING"].strip('"')
        n = int(macros["ZARR_VERSION_NUMBER"])
        stated["zarr.h ZARR_VERSION_NUMBER"] = f"{n // 10000}.{n // 100 % 100}.{n % 100}"
    except (KeyError, ValueError) as e:
        errors.append(f"include/zarr.h: version macro missing or malformed: {e}")
    if args.build_dir:
        pc = os.path.join(args.build_dir, "zarr.pc")
        m = re.search(r"^Version:\s*(\S+)", read(pc), re.M)
        stated["built zarr.pc"] = m.group(1) if m else "(no Version:)"
        cv = read(os.path.join(args.build_dir, "zarrConfigVersion.cmake"))
        m = re.search(r'set\(PACKAGE_VERSION "([^"]+)"\)', cv)
        stated["built zarrConfigVersion.cmake"] = m.group(1) if m else "(no PACKAGE_VERSION)"
    if args.lib:
        lib = ctypes.CDLL(args.lib)
        lib.zarr_version.restype = ctypes.c_char_p
        lib.zarr_version_number.restype = ctypes.c_uint32
        stated["libzarr zarr_version()"] = lib.zarr_version().decode()
        n = lib.zarr_version_number()
        stated["libzarr zarr_version_number()"] = f"{n // 10000}.{n // 100 % 100}.{n % 100}"
    for what, v in stated.items():
        if v != version:
            errors.append(f"{what} is {v}, Cargo.toml says {version}")

    since_files = [os.path.join(src, "include", f) for f in ("zarr.h", "zarr.hpp", "zarr_mpi.h")]
    since_files += sorted(glob.glob(os.path.join(src, "fortran", "*.f90")))
    newest, count = (0, 0), 0
    for path in since_files:
        if not os.path.exists(path):
            continue
        for lineno, line in enumerate(read(path).splitlines(), 1):
            for m in re.finditer(r"Since:\s*(\d+)\.(\d+)", line):
                count += 1
                since = (int(m.group(1)), int(m.group(2)))
                newest = max(newest, since)
                if since > vt[:2]:
                    errors.append(f"{os.path.relpath(path, src)}:{lineno}: Since: {since[0]}.{since[1]} is newer "
                                  f"than the package version {version}")

    docs = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
    for path in docs:
        text = read(path)
        for m in re.finditer(r"find_package\(zarr (\d+(?:\.\d+)*)", text):
            if parse(m.group(1)) > vt[:len(parse(m.group(1)))]:
                errors.append(f"{os.path.relpath(path, src)}: find_package(zarr {m.group(1)}) asks for more than "
                              f"the package version {version}")
        for m in re.finditer(r"libzarr\.so\.(\d+\.\d+\.\d+)", text):
            if m.group(1) != version:
                errors.append(f"{os.path.relpath(path, src)}: names libzarr.so.{m.group(1)}, the package builds "
                              f"libzarr.so.{version}")

    if errors:
        print("\n".join(errors))
        return 1
    print(f"version.in_step: {version} everywhere ({', '.join(stated)}); {count} Since: tags, the newest "
          f"{newest[0]}.{newest[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
