#!/usr/bin/env python3
"""CTest bench.plot: `run_all.py --table-only --results FILE --plot FILE.svg` on a tiny results file
(nothing is run). The SVG must parse as XML and hold one mark per table cell, labelled with the cell's
name, a bar whose length is proportional to the ratio (best peer / libzarr) with the ratio and the best
peer as its label, and `n/a` where the cell has no ratio. Also checks that bench/latest.svg is what
bench/latest.json draws today (regenerate both as bench/README.md says)."""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
NS = "{http://www.w3.org/2000/svg}"


def ok(median):
    return {"status": "ok", "median_s": median}


RESULTS = {
    "meta": {"started": "2026-01-02T03:04:05", "host": "testhost", "threads": 2, "library": {"git": "abc1234"}},
    "results": {
        # A/W: libzarr 0.1, best peer zarrs 0.25 -> 2.5
        "A/W/libzarr": ok(0.1), "A/W/tensorstore": ok(0.3), "A/W/zarrs": ok(0.25), "A/W/zarr-python": ok(0.9),
        # A/R: libzarr slower than tensorstore -> 0.5
        "A/R/libzarr": ok(0.4), "A/R/tensorstore": ok(0.2), "A/R/zarrs": {"status": "unsupported"},
        "A/R/zarr-python": {"status": "error", "error": "boom"},
        # B/W: 1.1, between parity and the target
        "B/W/libzarr": ok(1.0), "B/W/tensorstore": ok(1.1), "B/W/zarrs": ok(1.5), "B/W/zarr-python": ok(2.0),
        # B/R: libzarr failed -> no ratio
        "B/R/libzarr": {"status": "error", "error": "x"}, "B/R/tensorstore": ok(0.2), "B/R/zarrs": ok(0.3),
        "B/R/zarr-python": ok(0.4),
    },
}
EXPECTED = {"A/W": (2.5, "zarrs"), "A/R": (0.5, "tensorstore"), "B/W": (1.1, "tensorstore"), "B/R": (None, None)}


def main():
    work = os.environ.get("ZARR_TEST_TMPDIR") or tempfile.mkdtemp()
    res, svg = os.path.join(work, "tiny.json"), os.path.join(work, "tiny.svg")
    with open(res, "w") as f:
        json.dump(RESULTS, f)
    p = subprocess.run([sys.executable, os.path.join(HERE, "run_all.py"), "--table-only", "--results", res,
                        "--layouts", "A,B", "--ops", "W,R", "--plot", svg, "--perf-dir", work],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "| A | W | 0.1000 | 0.3000 | 0.2500 | 0.9000 | zarrs 0.2500 | 2.50 |" in p.stdout, p.stdout
    root = ET.parse(svg).getroot()
    assert root.tag == NS + "svg"
    text = "".join(root.itertext())
    assert "2026-01-02" in text and "testhost" in text and "abc1234" in text, text
    cells = [g for g in root.iter(NS + "g") if g.get("class") == "cell"]
    assert [g.get("data-cell") for g in cells] == list(EXPECTED), [g.get("data-cell") for g in cells]
    unit = None
    for g in cells:
        name = g.get("data-cell")
        ratio, peer = EXPECTED[name]
        labels = [t.text for t in g.iter(NS + "text")]
        assert labels[0] == name, labels
        bars = [r for r in g.iter(NS + "rect") if r.get("class") == "bar"]
        if ratio is None:
            assert not bars and labels[1] == "n/a", (name, labels)
            continue
        assert len(bars) == 1, name
        assert abs(float(bars[0].get("data-ratio")) - ratio) < 1e-9, (name, bars[0].get("data-ratio"))
        assert labels[1] == f"{ratio:.2f} vs {peer}", (name, labels)
        width = float(bars[0].get("width"))
        if unit is None:
            unit = width / ratio
        assert abs(width - ratio * unit) < 0.2, (name, width, ratio * unit)
        colour = bars[0].get("fill")
        want = "#2e7d32" if ratio >= 1.2 else "#f9a825" if ratio >= 1 else "#c62828"
        assert colour == want, (name, colour)
    # the two reference lines: parity (1) and the 1.2 target, at their places on the same scale
    refs = sorted(float(l.get("x1")) for l in root.iter(NS + "line") if l.get("class") == "reference")
    x0 = float(next(r for r in root.iter(NS + "rect") if r.get("class") == "bar").get("x"))
    assert len(refs) == 2 and abs(refs[0] - (x0 + unit)) < 0.2 and abs(refs[1] - (x0 + 1.2 * unit)) < 0.2, refs

    # bench/latest.svg is what bench/latest.json draws
    latest = os.path.join(work, "latest.svg")
    p = subprocess.run([sys.executable, os.path.join(HERE, "run_all.py"), "--table-only", "--results",
                        os.path.join(HERE, "latest.json"), "--layouts", "A,B,C,D,E", "--plot", latest,
                        "--perf-dir", work], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    with open(latest) as a, open(os.path.join(HERE, "latest.svg")) as b:
        assert a.read() == b.read(), "bench/latest.svg is not what bench/latest.json draws: regenerate it"
    print(f"bench.plot: {len(cells)} cells drawn and checked; bench/latest.svg is current")


if __name__ == "__main__":
    main()
