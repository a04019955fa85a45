#!/usr/bin/env python3
"""CTest docs.links: the front door stays short and its guides stay connected.

    python3 tools/check_docs.py SOURCE_DIR

  * README.md has at most 250 lines (everything else belongs in a guide under docs/);
  * every relative link in README.md, docs/*.md and bench/README.md names a file of the repository, and
    its `#anchor`, if any, a heading of that file (GitHub's anchors: lower case, punctuation dropped,
    blanks as '-').
Exit status 1 with one line per problem."""
import glob
import os
import re
import sys

MAX_README_LINES = 250
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(path):
    out = set()
    in_code = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                in_code = not in_code
            m = None if in_code else re.match(r"#{1,6}\s+(.*)", line)
            if m:
                text = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
                out.add(text.replace(" ", "-"))
    return out


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    errors = []
    readme = os.path.join(src, "README.md")
    with open(readme, encoding="utf-8") as f:
        n = len(f.read().splitlines())
    if n > MAX_README_LINES:
        errors.append(f"README.md has {n} lines, more than {MAX_README_LINES}: move the detail to a guide in docs/")
    files = [readme] + sorted(glob.glob(os.path.join(src, "docs", "*.md"))) + [os.path.join(src, "bench", "README.md")]
    links = 0
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        text = re.sub(r"```.*?```", "", text, flags=re.S)   # code blocks hold no links
        for m in LINK.finditer(text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):   # http:, https:, mailto:
                continue
            links += 1
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            where = os.path.relpath(path, src)
            if not os.path.exists(dest):
                errors.append(f"{where}: link to {target}: no such file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                errors.append(f"{where}: link to {target}: no heading with that anchor in {os.path.relpath(dest, src)}")
    if errors:
        print("\n".join(errors))
        return 1
    print(f"docs.links: README.md has {n} lines; {links} relative links in {len(files)} files all resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
