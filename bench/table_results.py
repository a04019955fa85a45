#!/usr/bin/env python3
"""Reads a table printed by run_all.py (as recorded in bench/README.md) back into a results file that
`run_all.py --table-only --results FILE --plot FILE.svg` reads: for the runs whose results.json is gone.
Only the medians survive in a table, so each cell gets `median_s` (and `cpu_median_s` is absent).
Every row's recomputed ratio is checked against the table's own `ratio` column.

    python3 bench/table_results.py --readme bench/README.md --heading 'Results (2026-11-26, full run' \\
        --date 2026-11-26 --host '...' --commit 2578496 --threads 2 --out bench/latest.json
"""
import argparse
import json
import sys


def parse_table(lines):
    """The first markdown table in `lines` whose header starts with `| layout | op |`."""
    rows, head = [], None
    for line in lines:
        line = line.strip()
        if head is None:
            if line.startswith("| layout | op |"):
                head = [c.strip() for c in line.strip("|").split("|")]
            continue
        if line.startswith("|---"):
            continue
        if not line.startswith("|"):
            break
        rows.append(dict(zip(head, (c.strip() for c in line.strip("|").split("|")))))
    if head is None:
        raise SystemExit("table_results: no '| layout | op |' table found")
    return head, rows


def cell_result(text):
    if text == "n/a":
        return {"status": "unsupported"}
    if text in ("ERR", "-"):
        return {"status": "error", "error": "recorded as " + text}
    return {"status": "ok", "median_s": float(text)}


def half_unit(text):
    """Half a unit of the last printed digit: how far the printed median may be from the measured one."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10 ** -decimals


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--readme", required=True)
    ap.add_argument("--heading", required=True, help="the start of the section's heading text")
    ap.add_argument("--date", required=True)
    ap.add_argument("--host", required=True, help="the machine, in words")
    ap.add_argument("--commit", required=True, help="the library's git revision")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.readme, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.lstrip("# ").startswith(args.heading)), None)
    if start is None:
        sys.exit(f"table_results: no heading starting with {args.heading!r} in {args.readme}")
    head, rows = parse_table(lines[start + 1:])
    impls = [h for h in head if h not in ("layout", "op", "best peer", "ratio")]
    results = {}
    for row in rows:
        for impl in impls:
            res = cell_result(row[impl])
            res.update({"impl": impl, "layout": row["layout"], "op": row["op"]})
            results[f'{row["layout"]}/{row["op"]}/{impl}'] = res
        # The table's ratio came from the unrounded medians: it must lie within what the printed ones allow.
        peers = [(results[f'{row["layout"]}/{row["op"]}/{i}'], row[i]) for i in impls if i != "libzarr"]
        best = min(((p["median_s"], t) for p, t in peers if p["status"] == "ok"), default=None)
        lz = results[f'{row["layout"]}/{row["op"]}/libzarr']
        recorded = float(row["ratio"].split()[0])
        if best is not None and lz["status"] == "ok":
            b, db = best[0], half_unit(best[1])
            l, dl = lz["median_s"], half_unit(row["libzarr"])
            low, high = (b - db) / (l + dl) - 0.005, (b + db) / (l - dl) + 0.005
            if not low <= recorded <= high:
                sys.exit(f'table_results: {row["layout"]}/{row["op"]}: the medians give a ratio in '
                         f'[{low:.3f}, {high:.3f}], the table says {recorded}')
    meta = {"started": args.date, "host": args.host, "threads": args.threads,
            "library": {"git": args.commit},
            "source": f"transcribed from {args.readme}, section '{lines[start].lstrip('# ')}'",
            "codec_speed": {}}
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
        f.write("\n")
    print(f"table_results: {len(rows)} rows x {len(impls)} implementations -> {args.out}")


if __name__ == "__main__":
    main()
