#!/usr/bin/env python3
"""Tests bench/load_guard.py: the load sampled during a cell, cells repeated while the load is above the
set level, the quietest attempt kept, the spreads reported; and bench/run_all.py's use of it on a couple
of cells (a stand-in cell process and a simulated load). Run by ctest as `bench.load_guard`."""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import load_guard  # noqa: E402
import run_all  # noqa: E402


def simulated(loads):
    """(before_attempt, read): a load reader giving (average, running) = (loads[i], loads[i]) during
    attempt i (the last level for later ones)."""
    state = {"attempt": 0}

    def before(i):
        state["attempt"] = i

    def read():
        v = loads[min(state["attempt"], len(loads) - 1)]
        return v, v
    return before, read


def test_repeats_until_quiet():
    before, read = simulated([6.0, 4.0, 1.5, 0.5])
    medians = iter([0.30, 0.25, 0.20, 0.19])

    def cell():
        m = next(medians)
        time.sleep(0.03)
        return {"status": "ok", "median_s": m, "times_s": [m, m * 1.1, m * 0.9]}
    res = load_guard.run_guarded(cell, max_load=2.5, retries=5, read=read, interval=0.005, before_attempt=before)
    assert res["repeated"] == 2, res
    assert [a["median_s"] for a in res["attempts"]] == [0.30, 0.25, 0.20], res["attempts"]
    assert [a["load"] for a in res["attempts"]] == [6.0, 4.0, 1.5], res["attempts"]
    assert res["median_s"] == 0.20 and res["quiet"] and res["load"]["samples"] >= 2, res
    assert res["attempt_spread"] == 1.5, res["attempt_spread"]
    assert res["rep_spread"] == round(0.22 / 0.18, 3), res["rep_spread"]


def test_gives_up_and_keeps_the_quietest():
    before, read = simulated([5.0, 3.0, 4.0])
    n = iter(range(10))

    def cell():
        time.sleep(0.02)
        return {"status": "ok", "median_s": 1.0 + next(n), "times_s": [1.0]}
    res = load_guard.run_guarded(cell, max_load=2.5, retries=2, read=read, interval=0.005, before_attempt=before)
    assert res["repeated"] == 2 and not res["quiet"], res
    assert res["median_s"] == 2.0, "the attempt at load 3 is the quietest"
    assert res["rep_spread"] is None and res["attempt_spread"] == 3.0


def test_quiet_and_failed_cells_run_once():
    before, read = simulated([0.5])
    calls = []
    res = load_guard.run_guarded(lambda: calls.append(1) or {"status": "ok", "median_s": 1.0}, 2.5, 3, read=read,
                                 interval=0.005, before_attempt=before)
    assert len(calls) == 1 and res["repeated"] == 0 and res["quiet"]
    before, read = simulated([9.0])
    res = load_guard.run_guarded(lambda: calls.append(1) or {"status": "error", "error": "x"}, 2.5, 3, read=read,
                                 interval=0.005, before_attempt=before)
    assert len(calls) == 2 and res["status"] == "error" and res["repeated"] == 0, "a failure is not a load problem"


def test_real_load_is_read():
    avg1, running = load_guard.read_load()
    assert avg1 >= 0 and running >= 0
    with load_guard.LoadSampler(interval=0.01) as s:
        time.sleep(0.05)
    summary = s.summary()
    assert summary["samples"] >= 2 and summary["load"] >= 0, summary


def test_run_all_guards_its_cells():
    """run_all.guarded_cell on two stand-in cells (processes printing a result line) under a simulated
    load: the loaded one is repeated, both report their load and spreads, and the table notes say so."""
    with tempfile.TemporaryDirectory() as tmp:
        counter = os.path.join(tmp, "n")
        script = ("import json,os,sys; p=sys.argv[1]; n=int(open(p).read()) if os.path.exists(p) else 0; "
                  "open(p,'w').write(str(n+1)); print(json.dumps({'status':'ok','median_s':0.1*(n+1),"
                  "'min_s':0.1,'times_s':[0.1*(n+1),0.1*(n+1)+0.01],'reps':2}))")
        loads = {"quiet": [1.0], "busy": [7.0, 6.0, 2.0]}
        results = {}
        for cell, level in loads.items():
            before, read = simulated(level)
            if os.path.exists(counter):
                os.remove(counter)
            res = run_all.guarded_cell([sys.executable, "-c", script, counter], dict(os.environ), 60, max_load=2.5,
                                       retries=2, read=read, interval=0.005, before_attempt=before)
            results[f"A/R/{cell}"] = {**res, "impl": cell, "layout": "A", "op": "R"}
        quiet = results["A/R/quiet"]
        assert quiet["repeated"] == 0 and abs(quiet["median_s"] - 0.1) < 1e-9, quiet
        busy = results["A/R/busy"]
        assert busy["repeated"] == 2 and busy["quiet"] and abs(busy["median_s"] - 0.3) < 1e-9, busy
        assert [a["load"] for a in busy["attempts"]] == [7.0, 6.0, 2.0], busy["attempts"]
        notes = run_all.load_notes(results, 2.5)
        text = "\n".join(notes)
        assert "A/R/busy" in text and "repeated 2" in text and "attempt spread 3.00" in text, text
        json.dumps(results)


def main():
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    failed = 0
    for t in tests:
        try:
            t()
            print(f"PASS {t.__name__}")
        except Exception as e:  # noqa: BLE001
            failed += 1
            print(f"FAIL {t.__name__}: {type(e).__name__}: {e}")
    print(f"{len(tests) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
