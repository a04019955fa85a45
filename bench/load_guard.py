"""The machine's load during a benchmark cell, and cells repeated when it was too high.

The machines the tables are measured on are shared, so a cell may run while someone else builds. While
a cell runs, a thread reads the load every `interval` seconds: the 1-minute load average and the number
of runnable tasks at that moment (`procs_running` of /proc/stat, less the sampling thread itself; it
follows a burst at once, where the average lags a minute behind). Both count the cell's own threads,
as a load average does. The cell's load is the higher of the highest 1-minute average seen during it
and the mean of the runnable tasks. A cell whose load rose above `max_load` is run again, up to
`retries` more times; the attempt with the lowest load is the cell's result, and every attempt is kept
with its load and its median, so that the table can show the spread of the attempts (largest over
smallest median) beside the spread of the repetitions within the kept one (largest over smallest time).

bench/run_all.py uses `run_guarded` around each cell (--max-load, --load-retries); bench/test_load_guard.py
tests it with a simulated load.
"""
import threading
import time


def read_load():
    """(1-minute load average, runnable tasks now) of this machine."""
    with open("/proc/loadavg") as f:
        avg1 = float(f.read().split()[0])
    running = None
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("procs_running"):
                    running = int(line.split()[1])
                    break
    except OSError:
        pass
    # The reading thread is itself running while it reads.
    return avg1, max(running - 1, 0) if running is not None else avg1


class LoadSampler:
    """Samples `read` (a function giving (1-minute average, runnable now)) every `interval` seconds from
    a thread, between `with` entry and exit."""

    def __init__(self, read=read_load, interval=0.5):
        self.read, self.interval = read, interval
        self.samples = []
        self._stop = threading.Event()
        self._thread = None

    def _sample(self):
        try:
            self.samples.append(self.read())
        except OSError:
            pass

    def _run(self):
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self):
        # One sample as the cell starts, then one every interval while it runs.
        self._sample()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def summary(self):
        """{"avg1_max", "running_mean", "load", "samples"}: the highest 1-minute average, the mean
        runnable tasks, and the larger of the two (the cell's load)."""
        if not self.samples:
            return {"avg1_max": None, "running_mean": None, "load": None, "samples": 0}
        avg1_max = max(s[0] for s in self.samples)
        running = sum(s[1] for s in self.samples) / len(self.samples)
        return {"avg1_max": round(avg1_max, 2), "running_mean": round(running, 2),
                "load": round(max(avg1_max, running), 2), "samples": len(self.samples)}


def run_guarded(run, max_load, retries, read=read_load, interval=0.5, log=None, before_attempt=None):
    """Runs `run()` (which returns a result dict with "status" and, when "ok", "median_s") under a
    LoadSampler; while the load was above `max_load` and retries are left, runs it again. Returns the
    attempt with the lowest load, with "load" (its summary), "attempts" (every attempt's status, median
    and load), "attempt_spread" (largest over smallest median of the ok attempts) and "repeated" (how
    many more attempts were made; `before_attempt(i)` is called before attempt i), "rep_spread" (largest over smallest time of the kept attempt's
    repetitions, from its "times_s") and "quiet" (whether its load was at most `max_load`)."""
    attempts = []
    results = []
    for i in range(retries + 1):
        if before_attempt:
            before_attempt(i)
        with LoadSampler(read, interval) as s:
            res = run()
        load = s.summary()
        res = {**res, "load": load}
        results.append(res)
        attempts.append({"status": res.get("status"), "median_s": res.get("median_s"), "load": load["load"]})
        if load["load"] is None or load["load"] <= max_load or res.get("status") != "ok":
            break
        if log and i < retries:
            log(f"    load {load['load']} > {max_load}: repeating the cell ({i + 1} of {retries})")
    ok = [r for r in results if r.get("status") == "ok"]
    best = min(ok, key=lambda r: r["load"]["load"] if r["load"]["load"] is not None else float("inf")) if ok \
        else results[-1]
    medians = [r["median_s"] for r in ok if r.get("median_s")]
    spread = round(max(medians) / min(medians), 3) if len(medians) > 1 and min(medians) > 0 else None
    times = [t for t in best.get("times_s") or [] if t and t > 0]
    rep_spread = round(max(times) / min(times), 3) if len(times) > 1 else None
    return {**best, "attempts": attempts, "attempt_spread": spread, "rep_spread": rep_spread,
            "repeated": len(results) - 1,
            "quiet": best["load"]["load"] is not None and best["load"]["load"] <= max_load}
