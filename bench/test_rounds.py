#!/usr/bin/env python3
"""Tests bench/rounds.py: the order of a cell's implementations in each round, and the pooling of one
implementation's rounds (medians over all repetitions, the loudest round's load, the round spread, a
failed round failing the cell). Run by ctest as `bench.rounds`."""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import rounds  # noqa: E402


def res(times, cpus, load, quiet=True, repeated=0):
    return {"status": "ok", "impl": "libzarr", "times_s": list(times), "cpu_s": list(cpus),
            "median_s": statistics.median(times), "min_s": min(times), "cpu_median_s": statistics.median(cpus) if cpus else None,
            "reps": len(times), "load": {"load": load, "avg1_max": load, "running_mean": load, "samples": 3},
            "attempts": [{"status": "ok", "median_s": statistics.median(times), "load": load}] * (repeated + 1),
            "repeated": repeated, "quiet": quiet}


def test_order_alternates():
    impls = ["libzarr", "tensorstore", "floor"]
    assert rounds.round_order(impls, 0) == impls
    assert rounds.round_order(impls, 1) == ["floor", "tensorstore", "libzarr"]
    assert rounds.round_order(impls, 2) == impls
    assert impls == ["libzarr", "tensorstore", "floor"]  # not reordered in place


def test_one_round_is_returned_as_it_is():
    r = res([0.3, 0.2, 0.25], [0.5, 0.4, 0.45], 1.0)
    assert rounds.pool([r]) is r


def test_rounds_pool_their_repetitions():
    a = res([0.30, 0.31, 0.32], [0.60, 0.61, 0.62], 1.2)
    b = res([0.20, 0.21, 0.90], [0.40, 0.41, 0.42], 2.1, quiet=False, repeated=1)
    p = rounds.pool([a, b])
    assert p["status"] == "ok"
    assert p["times_s"] == [0.30, 0.31, 0.32, 0.20, 0.21, 0.90]
    assert p["reps"] == 6
    assert abs(p["median_s"] - 0.305) < 1e-12, p["median_s"]  # of all six, not of the two round medians
    assert p["min_s"] == 0.20
    assert abs(p["cpu_median_s"] - 0.51) < 1e-12, p["cpu_median_s"]
    assert p["load"]["load"] == 2.1  # the loudest round's
    assert p["quiet"] is False and p["repeated"] == 1 and len(p["attempts"]) == 3
    assert [x["median_s"] for x in p["rounds"]] == [0.31, 0.21]
    assert p["round_spread"] == round(0.31 / 0.21, 3)
    assert p["rep_spread"] == round(0.90 / 0.20, 3)
    # the inputs are left as they were
    assert a["times_s"] == [0.30, 0.31, 0.32] and a["median_s"] == 0.31


def test_a_failed_round_fails_the_cell():
    a = res([0.3, 0.3], [0.6, 0.6], 1.0)
    bad = {"status": "error", "error": "exit 1", "load": {"load": 0.9}}
    p = rounds.pool([a, bad])
    assert p["status"] == "error" and p["error"] == "exit 1"
    assert [x["status"] for x in p["rounds"]] == ["ok", "error"]


def test_rounds_without_cpu_times():
    a = res([0.3], [], 1.0)
    b = res([0.5], [], 1.0)
    for r in (a, b):
        r.pop("cpu_s")
        r.pop("cpu_median_s")
    p = rounds.pool([a, b])
    assert "cpu_median_s" not in p and p["median_s"] == 0.4


if __name__ == "__main__":
    n = 0
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
            n += 1
    print(f"bench.rounds: {n} tests passed")
