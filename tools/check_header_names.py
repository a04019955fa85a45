#!/usr/bin/env python3
"""Fails unless every identifier that include/zarr.h declares starts with `zarr_` or `ZARR_`, and every
identifier that include/zarr_mpi.h (libzarr_mpi) declares starts with `zarr_mpi_` or `ZARR_MPI_`: a
header named <stem>.h must use the prefixes `<stem>_` and `<STEM>_`.

Declared identifiers: macro names (`#define X`), the include guard aside; struct, union and enum tags;
enumerators; typedef names; function names. Parameter names and the standard types a declaration uses
are not declarations of the header. Comments and string literals are ignored.

Usage: check_header_names.py [HEADER ...]   (default: include/zarr.h and include/zarr_mpi.h beside this
script's repository)
Exit status 0 when all names of every header fit, 1 otherwise (each offending name is printed).
"""
import re
import sys
from pathlib import Path

OK = re.compile(r"^(zarr_|ZARR_)")
C_WORDS = {"const", "void", "char", "int", "unsigned", "signed", "long", "short", "float", "double", "struct",
           "enum", "union", "typedef", "extern", "static", "inline", "size_t", "bool", "_Bool"}


def strip(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def declared(text):
    names = []
    body = []
    in_cplusplus = False
    for line in text.splitlines():
        # `#ifdef __cplusplus` blocks hold only the C++ guard (`extern "C" {` and its `}`): skipped, so
        # that the functions inside the guard count as file-scope declarations.
        if re.match(r"\s*#\s*ifdef\s+__cplusplus\b", line):
            in_cplusplus = True
            continue
        if in_cplusplus:
            in_cplusplus = not re.match(r"\s*#\s*endif\b", line)
            continue
        m = re.match(r"\s*#\s*define\s+([A-Za-z_]\w*)", line)
        if m:
            names.append(m.group(1))
        elif not re.match(r"\s*#", line):
            body.append(line)
    code = "\n".join(body)
    names += re.findall(r"\b(?:struct|union|enum)\s+([A-Za-z_]\w*)", code)
    for block in re.findall(r"\benum\b[^{;]*\{([^}]*)\}", code):
        names += re.findall(r"(?:^|,)\s*([A-Za-z_]\w*)", block)
    # typedef ... NAME;  (also `} NAME;` closing a typedef'd struct/enum)
    names += re.findall(r"\btypedef\b[^;{]*?([A-Za-z_]\w*)\s*;", code)
    names += re.findall(r"\}\s*([A-Za-z_]\w*)\s*;", code)
    # function declarations at file scope: NAME( at brace depth 0 outside parentheses
    depth = paren = 0
    for m in re.finditer(r"[{}()]|[A-Za-z_]\w*(?=\s*\()", code):
        t = m.group(0)
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
        elif t == "(":
            paren += 1
        elif t == ")":
            paren -= 1
        elif depth == 0 and paren == 0:
            names.append(t)
    return sorted(set(n for n in names if n not in C_WORDS))


def check(header):
    stem = header.stem
    ok = re.compile(rf"^({re.escape(stem)}_|{re.escape(stem.upper())}_)")
    text = strip(header.read_text())
    guard = re.search(r"#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+\1\b", text)
    names = declared(text)
    if guard:
        names = [n for n in names if n != guard.group(1)] + ([guard.group(1)] if not ok.match(guard.group(1)) else [])
    bad = [n for n in names if not ok.match(n)]
    for n in bad:
        print(f"{header.name}: '{n}' does not start with {stem}_ or {stem.upper()}_")
    print(f"{header.name}: {len(names)} declared names, {len(bad)} without the {stem}_/{stem.upper()}_ prefix")
    return not bad and len(names) >= 10


def main():
    root = Path(__file__).resolve().parent.parent
    headers = [Path(a) for a in sys.argv[1:]] or [root / "include" / "zarr.h", root / "include" / "zarr_mpi.h"]
    results = [check(h) for h in headers]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
