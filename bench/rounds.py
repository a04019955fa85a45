"""Interleaved rounds: the implementations of one benchmark cell run in turn, several times, and each
implementation's repetitions are pooled.

On a shared machine the speed of a core drifts over minutes (other tenants' work does not show in the
load average), so two implementations run one after the other may see different machines. With
`bench/run_all.py --rounds N` a cell runs every implementation once per round, in the cell's rotated
order in even rounds and in the reverse order in odd ones (so no implementation is always first or
always last), and each implementation's repetitions from all rounds are pooled into one result: the
median and minimum of all its times, the median of all its CPU times, the highest load of its rounds
(so a table "at load below L" holds for every round) and, per round, its median and load, with the
spread of the round medians (largest over smallest).

bench/test_rounds.py tests both functions.
"""
import statistics


def round_order(impls, round_index):
    """The order the implementations of a cell run in during round `round_index` (0-based): `impls` as
    given in even rounds, reversed in odd ones."""
    return list(impls) if round_index % 2 == 0 else list(reversed(impls))


def pool(rounds):
    """One result from the results of one implementation's rounds (each as run_all's guarded cell gives
    it: "status", and when "ok" "times_s", "cpu_s", "load" and the load guard's "attempts", "repeated",
    "quiet"). A single round is returned as it is. When any round failed, the first failed round is the
    result (with "rounds" listing them all): a cell is ok only when every round was."""
    if len(rounds) == 1:
        return rounds[0]
    summary = [{"status": r.get("status"), "median_s": r.get("median_s"), "cpu_median_s": r.get("cpu_median_s"),
                "load": (r.get("load") or {}).get("load")} for r in rounds]
    failed = [r for r in rounds if r.get("status") != "ok"]
    if failed:
        return {**failed[0], "rounds": summary}
    times = [t for r in rounds for t in r.get("times_s") or []]
    cpus = [t for r in rounds for t in r.get("cpu_s") or []]
    if not times:
        return {**rounds[0], "status": "error", "error": "no repetition times in the rounds", "rounds": summary}
    loudest = max(rounds, key=lambda r: _load_value(r))
    medians = [r["median_s"] for r in rounds if r.get("median_s")]
    out = {**rounds[0]}
    out.update({
        "times_s": times,
        "reps": len(times),
        "median_s": statistics.median(times),
        "min_s": min(times),
        "load": loudest.get("load"),
        "rounds": summary,
        "round_spread": round(max(medians) / min(medians), 3) if len(medians) > 1 and min(medians) > 0 else None,
        "attempts": [a for r in rounds for a in r.get("attempts") or []],
        "repeated": sum(r.get("repeated") or 0 for r in rounds),
        "quiet": all(r.get("quiet", True) for r in rounds),
        "rep_spread": round(max(times) / min(times), 3) if min(times) > 0 else None,
    })
    if cpus:
        out["cpu_s"] = cpus
        out["cpu_median_s"] = statistics.median(cpus)
    else:
        out.pop("cpu_s", None)
        out.pop("cpu_median_s", None)
    return out


def _load_value(r):
    v = (r.get("load") or {}).get("load")
    return v if v is not None else float("-inf")
