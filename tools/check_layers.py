#!/usr/bin/env python3
"""Checks that the crate's top-level modules use only their own floor and the floors below it, and that
no two top-level modules use each other (directly or around a circle).

The floors are declared once, in the map that opens src/lib.rs: each numbered line `//! N. ...` is a
floor, and the modules it links (`[`name`]`; or `` `name` `` first on the line, for a module that
rustdoc cannot link, such as one behind a cargo feature) live on it; other mentions place nothing.
Every top-level module (src/NAME.rs or src/NAME/mod.rs) must be on exactly one floor.

A use is any path `crate::NAME...` (also `crate::{NAME, ...}`, and `super::` paths that climb to the
crate root) in a module's code; comments, string literals and `#[cfg(test)]` items are not read (tests
may exercise a module through the floors above it). Names that lib.rs re-exports (`pub use
array::Array;`) count as their module.

Usage: check_layers.py REPO             check REPO/src; exit status 1 on a violation
       check_layers.py --self-test REPO  first prove on small trees in a temporary directory that the
                                         check fails on an upward use, a circle, an unplaced module,
                                         and passes on a clean tree; then check REPO/src
"""

import os
import re
import sys
import tempfile

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def strip_code(text):
    """The text with comments, string and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        m = re.compile(r'b?r(#*)"').match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find('"' + m.group(1), m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
            continue
        if c == "'":
            # A char literal ('x', '\n', '\u{1F600}'), not a lifetime ('a).
            m = re.compile(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'").match(text, i)
            if m:
                out.append("' '")
                i = m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


def skip_item(code, i):
    """The end of the item that starts at (or after whitespace and attributes from) `i`: past its
    matching `}` or its `;`, whichever closes it at depth 0."""
    depth = 0
    n = len(code)
    while i < n:
        c = code[i]
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
            if depth == 0 and c == "}":
                return i + 1
        elif c == ";" and depth == 0:
            return i + 1
        i += 1
    return n


CFG_TEST = re.compile(r"#\[cfg\(test\)\]")
MOD_DECL = re.compile(r"\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;")


def without_test_items(code):
    """The code with every `#[cfg(test)]` item blanked, and the names of the `#[cfg(test)] mod x;`
    declarations (files that are test code whole)."""
    test_mods = []
    while True:
        m = CFG_TEST.search(code)
        if not m:
            return code, test_mods
        d = MOD_DECL.match(code, m.end())
        if d:
            test_mods.append(d.group(1))
        end = skip_item(code, m.end())
        code = code[: m.start()] + "\n" * code.count("\n", m.start(), end) + code[end:]


def top_modules(src):
    mods = {}
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if name.endswith(".rs") and name not in ("lib.rs", "main.rs") and os.path.isfile(path):
            mods[name[:-3]] = path
        elif os.path.isdir(path) and os.path.isfile(os.path.join(path, "mod.rs")):
            mods[name] = path
    return mods


def read_floors(lib_rs, modules):
    """[(floor number, [module, ...])] from the numbered lines of lib.rs's opening map."""
    floors, current, errors = [], None, []
    for line in open(lib_rs, encoding="utf-8"):
        if not line.startswith("//!"):
            break
        body = line[3:]
        m = re.match(r" (\d+)\. ", body)
        if m:
            current = (int(m.group(1)), [])
            floors.append(current)
        elif not body.startswith("    "):
            current = None
        if current is None:
            continue
        names = re.findall(r"\[`(\w+)`\]", body)
        if m:
            names[:0] = re.findall(r"^ \d+\. `(\w+)`", body)
        for name in names:
            if name in modules:
                if name not in current[1]:
                    current[1].append(name)
            else:
                errors.append(f"lib.rs map: floor {current[0]} names `{name}`, which is not a top-level module of src/")
    return floors, errors


def reexports(lib_code):
    """{name: module} for lib.rs's `pub use module::...;` lines."""
    names = {}
    for mod, rest in re.findall(r"pub\s+use\s+(\w+)::([^;]*);", lib_code):
        for name in IDENT.findall(rest.split("::")[-1] if "{" not in rest else rest[rest.index("{") :]):
            if name not in ("self", "as"):
                names[name] = mod
    return names


def brace_group_heads(code, start):
    """The first path segment of each entry of the `{...}` group opening at `start`."""
    depth, i, heads, expect = 0, start, [], True
    while i < len(code):
        c = code[i]
        if c == "{":
            depth += 1
            i += 1
            if depth == 1:
                expect = True
            continue
        if c == "}":
            depth -= 1
            if depth == 0:
                return heads
        elif c == "," and depth == 1:
            expect = True
        elif depth == 1 and expect and not c.isspace():
            m = IDENT.match(code, i)
            if m:
                heads.append(m.group(0))
                i = m.end()
            expect = False
            continue
        i += 1
    return heads


def module_path(src, path):
    rel = os.path.relpath(path, src).split(os.sep)
    rel[-1] = rel[-1][:-3]
    if rel[-1] == "mod":
        rel.pop()
    return rel


def uses_of(src, path, code):
    """The crate-root names a file's code refers to: [(name, line)]."""
    found = []
    line_of = lambda i: code.count("\n", 0, i) + 1
    for m in re.finditer(r"\bcrate::(?:(\w+)|\{)", code):
        if m.group(1):
            found.append((m.group(1), line_of(m.start())))
        else:
            for h in brace_group_heads(code, m.end() - 1):
                found.append((h, line_of(m.start())))
    depth = len(module_path(src, path))
    for m in re.finditer(r"\b((?:super::)+)(\w+)", code):
        if m.group(1).count("super::") == depth:
            found.append((m.group(2), line_of(m.start())))
    return found


def find_cycle(edges):
    """One circle in the graph {a: {b, ...}} as a list [a, b, ..., a], or None."""
    state, stack = {}, []

    def visit(a):
        state[a] = 1
        stack.append(a)
        for b in sorted(edges.get(a, ())):
            if state.get(b) == 1:
                return stack[stack.index(b) :] + [b]
            if b not in state:
                c = visit(b)
                if c:
                    return c
        stack.pop()
        state[a] = 2
        return None

    for a in sorted(edges):
        if a not in state:
            c = visit(a)
            if c:
                return c
    return None


def check(root, quiet=False):
    """Checks root/src; returns the list of problems (printing the floors and uses unless quiet)."""
    src = os.path.join(root, "src")
    modules = top_modules(src)
    lib_rs = os.path.join(src, "lib.rs")
    floors, problems = read_floors(lib_rs, modules)
    floor_of = {}
    for number, names in floors:
        for name in names:
            if name in floor_of:
                problems.append(f"module `{name}` is on floors {floor_of[name]} and {number} of lib.rs's map")
            floor_of.setdefault(name, number)
    for name in modules:
        if name not in floor_of:
            problems.append(f"module `{name}` is on no floor of lib.rs's map")
    lib_code, _ = without_test_items(strip_code(open(lib_rs, encoding="utf-8").read()))
    alias = reexports(lib_code)

    edges = {m: {} for m in modules}  # module -> {used module: first "file:line"}
    for name, path in modules.items():
        tree = path if os.path.isdir(path) else path[:-3]
        files = [path] if path.endswith(".rs") else []
        if os.path.isdir(tree):
            files += [os.path.join(dp, f) for dp, _, fs in os.walk(tree) for f in fs if f.endswith(".rs")]
        parsed, test_paths = {}, []
        for f in files:
            code, test_mods = without_test_items(strip_code(open(f, encoding="utf-8").read()))
            parsed[f] = code
            base = os.path.dirname(f) if os.path.basename(f) == "mod.rs" else f[:-3]
            test_paths += [os.path.join(base, t) for t in test_mods]
        for f in sorted(files):
            if any(f == t + ".rs" or f.startswith(t + os.sep) for t in test_paths):
                continue
            for used, line in uses_of(src, f, parsed[f]):
                used = alias.get(used, used)
                if used in modules and used != name:
                    edges[name].setdefault(used, f"{os.path.relpath(f, root)}:{line}")

    for a in sorted(edges):
        for b, where in sorted(edges[a].items()):
            if a in floor_of and b in floor_of and floor_of[b] > floor_of[a]:
                problems.append(f"upward use: `{a}` (floor {floor_of[a]}) uses `{b}` (floor {floor_of[b]}) at {where}")
    cycle = find_cycle({a: set(bs) for a, bs in edges.items()})
    if cycle:
        hops = ", ".join(f"{a} -> {b} ({edges[a][b]})" for a, b in zip(cycle, cycle[1:]))
        problems.append(f"circle: {' -> '.join(cycle)}: {hops}")

    if not quiet:
        print("floors (from src/lib.rs):")
        for number, names in floors:
            print(f"  {number}. {' '.join(names)}")
        print("uses between top-level modules:")
        for a in sorted(edges, key=lambda m: (floor_of.get(m, 0), m)):
            if edges[a]:
                print(f"  {a} -> {' '.join(sorted(edges[a], key=lambda m: (floor_of.get(m, 0), m)))}")
    return problems


def self_test():
    """Small trees in a temporary directory: the check must pass on the clean one and fail on each
    broken one, naming what is wrong. Returns the list of failures of the self-test itself."""
    lib = (
        "//! Floors:\n//! 1. [`base`] and [`extra`] (not `top`).\n//! 2. [`mid`], [`side`]\n//!    (continued).\n"
        "//! 3. [`top`]\n//! 4. `late`: behind a feature.\n//!\n//! Other text: [`top`].\npub mod base;\n"
        "pub mod extra;\npub mod mid;\npub mod side;\npub mod top;\npub mod late;\npub use base::Thing;\n"
    )
    clean = {
        "lib.rs": lib,
        "base.rs": "pub struct Thing;\n/// See [`crate::top`].\nfn f() { let s = \"crate::top\"; }\n"
                   "#[cfg(test)]\nmod tests { use crate::top::X; }\n#[cfg(test)]\nmod helper;\n",
        "base/helper.rs": "use crate::top::Y;\n",
        "extra.rs": "use crate::base::Thing;\n",
        "mid/mod.rs": "use crate::{base::{self, Thing}, extra};\npub mod inner;\n",
        "mid/inner.rs": "use super::super::base;\nuse crate::side::S;\n",
        "side.rs": "pub struct S; use crate::Thing;\n",
        "top.rs": "use crate::mid; use crate::side; fn g<'a>(x: &'a str) -> char { '{' }\n",
        "late.rs": "use crate::top; use crate::base;\n",
    }
    cases = [
        ("clean", {}, None),
        ("upward use", {"base.rs": "use crate::mid::Y;\n"}, "upward use: `base` (floor 1) uses `mid` (floor 2)"),
        ("upward use in a group", {"extra.rs": "use crate::{base, top::Z};\n"}, "uses `top` (floor 3)"),
        ("upward use by super::", {"mid/inner.rs": "use super::super::top;\n"}, "`mid` (floor 2) uses `top`"),
        ("upward use through a re-export", {"lib.rs": lib + "pub use top::Big;\n", "base.rs": "use crate::Big;\n"},
         "`base` (floor 1) uses `top`"),
        ("upward use of a module placed by a bare name", {"top.rs": "use crate::late;\n"}, "uses `late` (floor 4)"),
        ("circle on one floor", {"side.rs": "use crate::mid::M;\n"}, "circle: mid -> side -> mid"),
        ("module on no floor", {"lost.rs": "\n"}, "module `lost` is on no floor"),
        ("map names a missing module", {"lib.rs": lib.replace("[`top`]", "[`top`] [`gone`]")}, "names `gone`"),
    ]
    failures = []
    for title, change, expect in cases:
        with tempfile.TemporaryDirectory() as tmp:
            for rel, text in {**clean, **change}.items():
                p = os.path.join(tmp, "src", rel)
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "w", encoding="utf-8") as f:
                    f.write(text)
            problems = check(tmp, quiet=True)
            if expect is None and problems:
                failures.append(f"self-test '{title}': expected no problem, got {problems}")
            elif expect is not None and not any(expect in p for p in problems):
                failures.append(f"self-test '{title}': expected a problem containing {expect!r}, got {problems}")
            else:
                print(f"self-test '{title}': {'passes' if expect is None else 'fails as it must: ' + problems[0]}")
    return failures


def main(argv):
    args = [a for a in argv[1:] if a != "--self-test"]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    failures = self_test() if "--self-test" in argv else []
    problems = check(args[0])
    for p in failures + problems:
        print("FAIL:", p)
    if failures or problems:
        return 1
    print("layers: ok (no upward use, no circle)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
