#!/usr/bin/env python3
"""Tests bench/run_all.py's table: the codec-bound cells (the best peer within the target of the cell's
floor or codec bound) are held to 1.0 instead of the target, every other cell to the target. Run by
ctest as `bench.table`."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import run_all  # noqa: E402


def ok(median):
    return {"status": "ok", "median_s": median, "cpu_median_s": median * 2}


def rows(table):
    return {tuple(c.strip() for c in line.strip("|").split("|"))[:2]: line
            for line in table.splitlines()[2:]}


def test_codec_bound_cells_are_held_to_one():
    results = {
        # C/R: the peer at 1.1x the floor; libzarr 1.05x the peer: codec-bound, meets 1.0
        "C/R/libzarr": ok(0.40), "C/R/tensorstore": ok(0.42), "C/R/floor": ok(0.38),
        # C/Rs: codec-bound, libzarr slower than the peer: below 1.0
        "C/Rs/libzarr": ok(0.32), "C/Rs/tensorstore": ok(0.30), "C/Rs/floor": ok(0.28),
        # A/R: the peer at 2x the floor: not codec-bound, 1.1x is below the 1.2x target
        "A/R/libzarr": ok(0.20), "A/R/tensorstore": ok(0.22), "A/R/floor": ok(0.11),
        # A/W: no floor measured: the target
        "A/W/libzarr": ok(0.10), "A/W/tensorstore": ok(0.13),
    }
    floors = run_all.cell_floors(results, {}, 2)
    assert floors == {("C", "R"): 0.38, ("C", "Rs"): 0.28, ("A", "R"): 0.11}, floors
    table, notes = run_all.make_table(results, ["A", "C"], ["W", "R", "Rs"], ["libzarr", "tensorstore"], 1.2,
                                      floors=floors)
    r = rows(table)
    assert r[("C", "R")].rstrip().endswith("| 1.05 (codec-bound) |"), r[("C", "R")]
    assert r[("C", "Rs")].rstrip().endswith("| 0.94 ✗ (codec-bound) |"), r[("C", "Rs")]
    assert r[("A", "R")].rstrip().endswith("| 1.10 ✗ |"), r[("A", "R")]
    assert r[("A", "W")].rstrip().endswith("| 1.30 |"), r[("A", "W")]
    assert sum("codec-bound" in n for n in notes) == 2, notes
    # the plot's cells say the same
    cells = {(c["layout"], c["op"]): c for c in
             run_all.ratio_cells(results, ["A", "C"], ["W", "R", "Rs"], ["libzarr", "tensorstore"], floors=floors,
                                 target=1.2)}
    assert [k for k, c in cells.items() if c["codec_bound"]] == [("C", "R"), ("C", "Rs")], cells
    # without floors every cell is held to the target
    table, _ = run_all.make_table(results, ["C"], ["R"], ["libzarr", "tensorstore"], 1.2)
    assert rows(table)[("C", "R")].rstrip().endswith("| 1.05 ✗ |")


def test_codec_bounds_from_codec_speeds():
    speeds = {"C": {"encode_GBps": 0.1, "decode_GBps": 0.5, "bytes": 10 ** 9, "chunks": 512,
                    "chunk_shape": [64, 64, 64]}}
    floors = run_all.cell_floors({"C/R/floor": ok(1.5)}, speeds, 2)
    assert abs(floors[("C", "W")] - 5.0) < 1e-9, floors   # 1 GB / (0.1 GB/s x 2)
    assert floors[("C", "R")] == 1.5                        # the measured floor wins over the codec bound
    assert abs(floors[("C", "Rinto")] - 1.0) < 1e-9
    assert ("C", "Wbox") not in floors                      # needs the regions file


if __name__ == "__main__":
    n = 0
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
            n += 1
    print(f"bench.table: {n} tests passed")
