#!/usr/bin/env python3
"""Runs the whole libzarr benchmark (bench/README.md) and prints one markdown table.

    python3 bench/run_all.py [--perf-dir ../shared/perf] [--layouts A,B,C,D,E,N,V] [--ops W,R,Rinto,S,P]
                             [--impls libzarr,tensorstore,zarrs,zarr-python[,h5py-vol]] [--reps N] [--quick]
                             [--results FILE.json] [--plot FILE.svg] [--h5vol-plugin-dir build/h5vol/plugin]
    python3 bench/run_all.py --table-only --results FILE.json [--plot FILE.svg]   # nothing is run

1. dataset: <perf-dir>/gen_data.py --datadir <data-dir> (kept when present), SHA-256 checked;
2. reference arrays: for every layout, the copy written by zarr-python (<out>/ref/<L>), which the
   R/Rinto/S/P cells of every implementation read (W writes each implementation's own copy);
3. bench_libzarr.c built against a snapshot of the library (<out>/lib), so a rebuild of
   target/release by someone else in the middle of a run changes nothing;
4. every (layout x op x implementation) cell in its own process, 2 threads each, the order of the
   implementations rotating from cell to cell;
5. the table on stdout (medians in seconds; ratio = best peer median / libzarr median) and the raw
   results in <out>/results.json (or --results FILE.json). A cell that fails or is unsupported shows n/a
   or ERR; the run goes on. With --plot FILE.svg, the ratios also as a bar chart (bench/plot.py).
   With h5py-vol in --impls (h5py through libzarr's HDF5 VOL connector; not a peer), also the connector's
   overhead over libzarr's C API per cell, in wall-clock and CPU time.
6. the load: while each cell runs, the machine's load is sampled (bench/load_guard.py: the highest
   1-minute load average and the mean runnable tasks, the cell's own threads included); a cell whose
   load rose above --max-load (default 2.5) is run again, up to --load-retries times (default 2), and
   the quietest attempt kept. Each result records its load, every attempt (median, load), the spread of
   the attempts and of the repetitions; the notes under the table list the cells repeated or left
   above the level.
"""
import argparse
import datetime
import fnmatch
import glob
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

import rounds  # bench/rounds.py (this directory is on the path when run as a script)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ALL_LAYOUTS = ["A", "B", "C", "D", "E", "N", "V"]  # the default --layouts; VS only when named
ALL_OPS = ["W", "R", "Rinto", "S", "P", "Rs", "RsF", "Rs32", "Wbox"]
BASE_OPS = ["W", "R", "Rinto", "S", "P"]
# the cells of a full run: every base op on A-E, the strided reads on A and C, the box writes on C and
# D, and layout N (10^5 small chunks, bench/layouts/N.json) written and read whole
PLAN = {**{L: list(BASE_OPS) for L in "ABCDE"}}
PLAN["A"] += ["Rs", "RsF", "Rs32"]
PLAN["C"] += ["Rs", "RsF", "Rs32", "Wbox"]
PLAN["D"] += ["Wbox"]
PLAN["N"] = ["W", "R"]
# layout V: a 2048 x 2048 array of vlen-utf8 strings (bench/layouts/V.json), written, read whole and read in
# 1000 16 x 16 boxes; VS the same in 1024 x 1024 shards (not in the default run: --layouts VS)
PLAN["V"] = ["W", "R", "S"]
PLAN["VS"] = ["W", "R", "S"]
SMALL = "N"  # the layout whose data is the synthetic uint8 volume (peers.py gen_small)
SMALL_VERSION = 1  # bump when gen_small's formula changes
STRINGS = ("V", "VS")  # layouts whose data is the strings file (peers.py gen_strings)
STRINGS_VERSION = 1  # bump when gen_strings's formula changes
LOCAL_LAYOUTS = (SMALL,) + STRINGS  # in bench/layouts/ (the shared perf directory has A-E)
ALL_IMPLS = ["libzarr", "tensorstore", "zarrs", "zarr-python"]  # the default --impls
PEERS = ["tensorstore", "zarrs", "zarr-python"]
# h5py through libzarr's HDF5 VOL connector (peers.py H5pyVolImpl): libzarr underneath, so not a peer (never
# the "best peer") but the connector's overhead over libzarr's C API (h5vol_table); only when named in --impls
H5VOL = "h5py-vol"
KNOWN_IMPLS = ALL_IMPLS + [H5VOL]
# the cells examples/read_floor can run (whole reads of the uint16 volume's layouts; D shard by shard)
FLOOR_OPS = ["R", "Rinto", "Rs", "RsF", "Rs32", "P"]
# the W cells examples/write_floor runs beside (plain chunks encoded and written once each): the compressed,
# unsharded layouts, where the encoder is most of a write; libzarr writes A's uncompressed chunks faster
# than that program does, so it would be no floor there
WRITE_FLOOR_LAYOUTS = ["B", "C", "E"]
FLOOR_LAYOUTS = ["A", "B", "C", "D", "E"]
VOLUME = "volume_u16_512.bin"
# WORKLOADS.md's figure; the one read from WORKLOADS.md wins when it can be found there
DEFAULT_SHA256 = "8e5ea26051a4258c196130ef11df10b98ab4091400cc78fac3c5a030d1408aad"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def machine():
    """The CPU model (lscpu's "Model name", else /proc/cpuinfo's "model name"), the kernel release and the
    load average when the run started: every table is printed with them (bench/README.md)."""
    model = None
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"}).stdout
        model = next((ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("Model name:")), None)
    except OSError:
        pass
    if not model:
        try:
            with open("/proc/cpuinfo") as f:
                model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), None)
        except OSError:
            pass
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = None
    return {"cpu_model": model or "unknown", "kernel": platform.release(), "load_at_start": load}


def machine_line(meta):
    """One line naming the machine of a results file (older files have no such fields)."""
    if not meta.get("cpu_model"):
        return "machine: not recorded in this results file"
    return (f"machine: {meta['cpu_model']}, {meta.get('cpus')} CPUs, kernel {meta.get('kernel')}, "
            f"host {meta.get('host')}; load average at the start {meta.get('load_at_start')}")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            h.update(block)
    return h.hexdigest()


def expected_sha256(perf_dir):
    try:
        with open(os.path.join(perf_dir, "WORKLOADS.md")) as f:
            m = re.search(r"SHA-256\s*`([0-9a-f]{64})`", f.read())
        if m:
            return m.group(1)
    except OSError:
        pass
    return DEFAULT_SHA256


def prepare_dataset(perf_dir, data_dir):
    os.makedirs(data_dir, exist_ok=True)
    vol = os.path.join(data_dir, VOLUME)
    # gen_data.py regenerates only a missing or wrongly sized file
    subprocess.run([sys.executable, os.path.join(perf_dir, "gen_data.py"), "--datadir", data_dir],
                   check=True, stdout=sys.stderr)
    want = expected_sha256(perf_dir)
    got = sha256_file(vol)
    if got != want:
        log(f"{vol}: SHA-256 {got} differs from {want}; regenerating")
        subprocess.run([sys.executable, os.path.join(perf_dir, "gen_data.py"), "--datadir", data_dir, "--force",
                        "--regions", os.path.join(data_dir, "regions_regenerated.txt")], check=True, stdout=sys.stderr)
        got = sha256_file(vol)
        if got != want:
            sys.exit(f"run_all: {vol}: SHA-256 {got}, expected {want} (WORKLOADS.md)")
    return vol, got


def find_library(lib_dir):
    for name in ("libzarr.so", "libzarr.so.0"):
        p = os.path.join(lib_dir, name)
        if os.path.exists(p):
            return os.path.realpath(p)
    return None


def build_bench(args):
    """Snapshots the library into <out>/lib (libzarr.so.0 + libzarr.so link) and compiles bench_libzarr.c."""
    if args.cargo_build:
        subprocess.run(["cargo", "build", "--release"], cwd=REPO, check=True, stdout=sys.stderr)
    lib = find_library(args.lib_dir)
    if lib is None:
        if args.lib_dir != os.path.join(REPO, "target", "release"):
            sys.exit(f"run_all: no libzarr.so in {args.lib_dir}")
        log("run_all: target/release/libzarr.so missing: cargo build --release")
        subprocess.run(["cargo", "build", "--release"], cwd=REPO, check=True, stdout=sys.stderr)
        lib = find_library(args.lib_dir)
        if lib is None:
            sys.exit("run_all: cargo build --release made no libzarr.so")
    snap = os.path.join(args.out, "lib")
    os.makedirs(snap, exist_ok=True)
    shutil.copyfile(lib, os.path.join(snap, "libzarr.so.0.tmp"))
    os.replace(os.path.join(snap, "libzarr.so.0.tmp"), os.path.join(snap, "libzarr.so.0"))
    link = os.path.join(snap, "libzarr.so")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink("libzarr.so.0", link)
    exe = os.path.join(args.out, "bench_libzarr")
    cmd = [args.cc, "-O2", "-I", os.path.join(REPO, "include"), os.path.join(HERE, "bench_libzarr.c"),
           "-o", exe, "-L", snap, "-lzarr", "-Wl,-rpath," + snap]
    log("run_all: " + " ".join(cmd))
    subprocess.run(cmd, check=True)
    st = os.stat(lib)
    info = {"path": lib, "sha256": sha256_file(lib),
            "mtime": datetime.datetime.fromtimestamp(st.st_mtime).isoformat(timespec="seconds")}
    try:
        info["git"] = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                                     capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    return exe, info


def snapshot_h5vol(args):
    """Copies libzarr_h5vol.so into <out>/h5vol-plugin (as the library is snapshotted), so that a rebuild of
    the connector during the run changes nothing; returns (plugin dir, info). Without the plugin, the
    directory given: the h5py-vol cells then report it as n/a."""
    src = os.path.join(os.path.abspath(args.h5vol_plugin_dir), "libzarr_h5vol.so")
    if not os.path.exists(src):
        log(f"run_all: no {src}: the {H5VOL} cells will be n/a")
        return os.path.dirname(src), None
    snap = os.path.join(args.out, "h5vol-plugin")
    os.makedirs(snap, exist_ok=True)
    shutil.copyfile(src, os.path.join(snap, "libzarr_h5vol.so.tmp"))
    os.replace(os.path.join(snap, "libzarr_h5vol.so.tmp"), os.path.join(snap, "libzarr_h5vol.so"))
    return snap, {"path": os.path.realpath(src), "sha256": sha256_file(src)}


def run_cell(cmd, env, timeout):
    """Runs one benchmark process and returns its JSON result (status ok/unsupported/error/timeout)."""
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "error": f"over {timeout} s"}
    res = None
    for line in reversed(p.stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                res = json.loads(line)
                break
            except json.JSONDecodeError:
                pass
    if res is None:
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        res = {"status": "error", "error": f"exit {p.returncode}, no result: " + " | ".join(tail)}
    elif res.get("status") == "ok" and p.returncode != 0:
        res = {**res, "status": "error", "error": f"exit {p.returncode}"}
    res["wall_s"] = round(time.time() - t0, 2)
    return res


def guarded_cell(cmd, env, timeout, max_load, retries, read=None, interval=0.5, before_attempt=None):
    """run_cell under bench/load_guard.py: repeated while the load during it was above `max_load`."""
    import load_guard

    return load_guard.run_guarded(lambda: run_cell(cmd, env, timeout), max_load, retries,
                                  read=read or load_guard.read_load, interval=interval, log=log,
                                  before_attempt=before_attempt)


def load_notes(results, max_load):
    """One line per cell that was repeated for its load or stayed above `max_load`, with the loads and
    medians of its attempts and the spreads."""
    notes = []
    for cell, r in results.items():
        if not r.get("attempts") or (not r.get("repeated") and r.get("quiet", True)):
            continue
        tries = ", ".join(f"{a['median_s']:.4f} s at load {a['load']}" if a.get("median_s") is not None
                          else f"{a['status']} at load {a['load']}" for a in r["attempts"])
        spread = f"; attempt spread {r['attempt_spread']:.2f}" if r.get("attempt_spread") else ""
        reps = f"; repetition spread {r['rep_spread']:.2f}" if r.get("rep_spread") else ""
        state = f"the quietest kept, above {max_load}" if not r.get("quiet") else f"the one at or below {max_load} kept"
        notes.append(f"{cell}: repeated {r['repeated']} ({tries}){spread}{reps}; {state}")
    return notes


def remove_array(path):
    if os.path.isdir(path) and os.path.exists(os.path.join(path, "zarr.json")):
        shutil.rmtree(path)


def remove_small_copies(out):
    """Removes the layout N copies that the N/W cells leave (<out>/w/<impl>/N.rep<r>, --fresh-dirs).

    The N/W cells delete nothing while they run: this VM's ext4 has no journal, and such a file system
    does not reuse an inode for 60 s after its deletion (360 s while its inode-table block is dirty),
    scanning past every such inode for each new file (fs/ext4/ialloc.c, recently_deleted). 10^5 files
    created within minutes of 10^5 deletions then time that scan (8 s or 48 s for the same writer),
    and whichever implementation runs after another's deletion pays it. So the copies are removed at
    the end of the run, and any left by an interrupted run at its start, long before layout N."""
    t0 = time.time()
    n = 0
    for path in sorted(glob.glob(os.path.join(out, "w", "*", SMALL + ".rep*"))):
        remove_array(path)
        n += 1
    if n:
        log(f"run_all: removed {n} layout {SMALL} copies in {time.time() - t0:.0f} s")


def prepare_reference(args, layout, layout_path, vol, data_sha, env, small=False, strings=False):
    """The zarr-python copy of LAYOUT (<out>/ref/<L>), rewritten only when the layout or data changed."""
    ref = os.path.join(args.out, "ref", layout)
    marker = ref + ".ok.json"
    with open(layout_path, "rb") as f:
        layout_sha = hashlib.sha256(f.read()).hexdigest()
    stamp = {"layout_sha256": layout_sha, "data_sha256": data_sha}
    try:
        with open(marker) as f:
            if json.load(f) == stamp and os.path.exists(os.path.join(ref, "zarr.json")):
                return ref, None
    except (OSError, ValueError):
        pass
    if os.path.exists(marker):
        os.remove(marker)
    os.makedirs(os.path.dirname(ref), exist_ok=True)
    log(f"run_all: writing the zarr-python reference copy of layout {layout} -> {ref}")
    res = run_cell([sys.executable, os.path.join(HERE, "peers.py"), "--impl", "zarr-python", "--op", "prepare",
                    "--layout", layout_path, "--array", ref, "--data", vol, "--threads", str(args.threads)]
                   + (["--small"] if small else []) + (["--strings"] if strings else []), env, args.timeout)
    if res.get("status") != "ok":
        return None, res.get("error", "prepare failed")
    with open(marker, "w") as f:
        json.dump(stamp, f)
    return ref, None


def prepare_small(args, layout_path, data_dir, env):
    """The synthetic uint8 volume of layout N (peers.py --op gen-small), regenerated when missing or stale."""
    with open(layout_path) as f:
        shape = json.load(f)["shape"]
    path = os.path.join(data_dir, "small_u8_" + "x".join(str(n) for n in shape) + ".bin")
    marker = path + ".ok.json"
    with open(layout_path, "rb") as f:
        stamp = {"layout_sha256": hashlib.sha256(f.read()).hexdigest(), "version": SMALL_VERSION}
    try:
        with open(marker) as f:
            saved = json.load(f)
        if {k: saved.get(k) for k in stamp} == stamp and os.path.getsize(path) == saved["size"]:
            return path, saved["sha256"]
    except (OSError, ValueError, KeyError):
        pass
    log(f"run_all: generating the layout N volume -> {path}")
    subprocess.run([sys.executable, os.path.join(HERE, "peers.py"), "--impl", "zarr-python", "--op", "gen-small",
                    "--layout", layout_path, "--array", "-", "--data", path], env=env, check=True)
    sha = sha256_file(path)
    with open(marker, "w") as f:
        json.dump({**stamp, "size": os.path.getsize(path), "sha256": sha}, f)
    return path, sha


def prepare_strings(args, layout_path, data_dir, env):
    """The strings of layouts V/VS (peers.py --op gen-strings), regenerated when missing or stale."""
    with open(layout_path) as f:
        shape = json.load(f)["shape"]
    path = os.path.join(data_dir, "strings_" + "x".join(str(n) for n in shape) + ".bin")
    marker = path + ".ok.json"
    stamp = {"shape": shape, "version": STRINGS_VERSION}
    try:
        with open(marker) as f:
            saved = json.load(f)
        if {k: saved.get(k) for k in stamp} == stamp and os.path.getsize(path) == saved["size"]:
            return path, saved["sha256"]
    except (OSError, ValueError, KeyError):
        pass
    log(f"run_all: generating the strings of layout V -> {path}")
    subprocess.run([sys.executable, os.path.join(HERE, "peers.py"), "--impl", "zarr-python", "--op", "gen-strings",
                    "--layout", layout_path, "--array", "-", "--data", path], env=env, check=True)
    sha = sha256_file(path)
    with open(marker, "w") as f:
        json.dump({**stamp, "size": os.path.getsize(path), "sha256": sha}, f)
    return path, sha


def build_example(args, name):
    """Builds examples/<name>.rs and snapshots the program into <out> (as the library is snapshotted), so
    that a rebuild during the run changes nothing."""
    log(f"run_all: cargo build --release --example {name}")
    subprocess.run(["cargo", "build", "--release", "--example", name], cwd=REPO, check=True, stdout=sys.stderr)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
    exe = os.path.join(args.out, name)
    shutil.copyfile(os.path.join(target, "release", "examples", name), exe)
    os.chmod(exe, 0o755)
    return exe


def codec_speeds(args, layouts, layout_paths, datas, env):
    """Runs examples/codec_speed (libzarr's codec chain on one thread over the layout's chunks) per layout."""
    exe = args.codec_speed_exe or build_example(args, "codec_speed")
    out = {}
    for L in layouts:
        if L == "A" or L in STRINGS:  # uncompressed: nothing to time; strings: codec_speed takes fixed-size data
            continue
        p = subprocess.run([exe, layout_paths[L], datas[L], "3"], env=env, capture_output=True, text=True)
        try:
            out[L] = json.loads(p.stdout.strip().splitlines()[-1])
            log(f"codec_speed {L}: encode {out[L]['encode_GBps']:.3f} GB/s, decode {out[L]['decode_GBps']:.3f} GB/s "
                f"(one core, ratio {out[L]['encoded_bytes'] / out[L]['bytes']:.3f})")
        except (IndexError, ValueError, KeyError):
            out[L] = {"error": (p.stderr or p.stdout).strip()[-300:]}
            log(f"codec_speed {L}: failed: {out[L]['error']}")
    return out


def floor_table(results, layouts, ops, key="median_s"):
    """The read cells beside their floor (examples/read_floor: read(2), the codec chain and a plain copy
    loop on the same threads): each implementation's median over the floor's (1.00 = no time beyond it)."""
    lines = ["| layout | op | floor s | libzarr s | libzarr / floor | best peer s | best peer / floor |",
             "|" + "---|" * 7]
    for L in layouts:
        for op in ops:
            f = results.get(f"{L}/{op}/floor")
            if not f or f.get("status") != "ok":
                continue
            lz = results.get(f"{L}/{op}/libzarr")
            peers = [results[c][key] for c in (f"{L}/{op}/{i}" for i in PEERS)
                     if c in results and results[c].get("status") == "ok"]
            best = min(peers) if peers else None
            lzs = lz[key] if lz and lz.get("status") == "ok" else None
            lines.append(f"| {L} | {op} | {f[key]:.4f} | "
                         + (f"{lzs:.4f} | {lzs / f[key]:.2f} | " if lzs else "- | - | ")
                         + (f"{best:.4f} | {best / f[key]:.2f} |" if best else "- | - |"))
    return "\n".join(lines)


def chunk_touches(regions_path, chunk):
    """For each of the 1000 16^3 boxes of REGIONS, how many chunks it touches: the chunks its Wbox call
    decodes and encodes again."""
    counts = []
    with open(regions_path) as f:
        for line in f:
            v = line.split()
            if len(v) != 3 or line.lstrip().startswith("#"):
                continue
            k = 1
            for a, c in zip((int(x) for x in v), chunk):
                k *= (a + 15) // c - a // c + 1
            counts.append(k)
    return counts


def codec_bound(sp, op, threads, regions=None):
    """Seconds a cell of `op` (W, R, Rinto or Wbox) needs at least on `threads` threads when the codec runs at
    the single-core speeds `sp` (one layout's codec_speed entry) and nothing else takes time; None for other
    ops (and for Wbox without the regions file)."""
    if "encode_GBps" not in sp or op not in ("W", "R", "Rinto", "Wbox"):
        return None
    if op == "Wbox":
        if not regions:
            return None
        chunk_bytes = sp["bytes"] // sp["chunks"]
        rounds_ = sum(-(-k // threads) for k in chunk_touches(regions, sp["chunk_shape"]))
        return rounds_ * chunk_bytes / (sp["encode_GBps"] * 1e9) + rounds_ * chunk_bytes / (sp["decode_GBps"] * 1e9)
    speed = sp["encode_GBps"] if op == "W" else sp["decode_GBps"]
    return sp["bytes"] / (speed * 1e9 * threads)


def codec_table(speeds, results, threads, key="median_s", regions=None):
    """Each libzarr W (R, Rinto, Wbox) cell as a fraction of the codec bound: bytes / (one core's encode
    (decode) speed x threads) / the cell's median. 1.0 = the cell runs at the codec's full speed on every
    thread. Wbox: every touched (inner) chunk decoded and encoded once, the boxes one call after the
    other, each call's chunks spread over the threads: a box touching k chunks costs ceil(k / threads)
    chunk decodes and encodes (a box in one chunk keeps one thread busy, whatever the pool's size)."""
    lines = ["| layout | encode GB/s (1 core) | decode GB/s (1 core) | op | libzarr s | codec bound s | "
             "fraction | best peer s | peer fraction |", "|" + "---|" * 9]
    for L, sp in speeds.items():
        if "encode_GBps" not in sp:
            continue
        for op in ("W", "R", "Rinto", "Wbox"):
            r = results.get(f"{L}/{op}/libzarr")
            if not r or r.get("status") != "ok":
                continue
            bound = codec_bound(sp, op, threads, regions)
            if bound is None:
                continue
            peers = [results[c][key] for c in (f"{L}/{op}/{i}" for i in PEERS)
                     if c in results and results[c].get("status") == "ok"]
            best = min(peers) if peers else None
            lines.append(f"| {L} | {sp['encode_GBps']:.3f} | {sp['decode_GBps']:.3f} | {op} | {r[key]:.4f} | "
                         f"{bound:.4f} | {bound / r[key]:.2f} | "
                         + (f"{best:.4f} | {bound / best:.2f} |" if best else "- | - |"))
    return "\n".join(lines)


def cell_floors(results, speeds, threads, regions=None, key="median_s"):
    """{(layout, op): seconds} the least time each cell can take, where this run measured it: the read
    floor's median (examples/read_floor) where it ran, else the codec bound (codec_bound) where the codec
    speeds were measured. make_table calls a cell codec-bound when its best peer is within `target` of it."""
    floors = {}
    for L, sp in (speeds or {}).items():
        for op in ("W", "R", "Rinto", "Wbox"):
            b = codec_bound(sp, op, threads, regions)
            if b:
                floors[(L, op)] = b
    for c, r in results.items():
        L, op, impl = c.split("/")
        if impl == "floor" and r.get("status") == "ok" and r.get(key):
            floors[(L, op)] = r[key]
    return floors


def reps_for(args, op, layout=None):
    for item in (args.reps_for or "").split(","):
        if "=" in item:
            k, v = item.split("=", 1)
            if k in (op, f"{layout}/{op}", layout):
                return int(v)
    if args.reps:
        return args.reps
    if args.quick:
        return 3 if op == "P" else 2
    return 10 if op == "P" else 5


def fmt_time(res, key):
    if res is None:
        return "-"
    st = res.get("status")
    if st == "ok":
        v = res[key]
        return f"{v:.4f}" if v < 10 else f"{v:.2f}"
    if st == "unsupported":
        return "n/a"
    if st == "skipped":
        return "n/a"
    return "ERR"


def best_peer(cell, cols, key):
    """(median, name) of the fastest peer among `cols` whose run of this cell succeeded, or None."""
    peers = [(cell[i][key], i) for i in cols if i in PEERS and cell[i] and cell[i].get("status") == "ok"]
    return min(peers) if peers else None


def ratio_cells(results, layouts, ops, impls, key="median_s", floors=None, target=1.2):
    """The table's cells for bench/plot.py: layout, op, ratio (best peer / libzarr, None without one),
    the best peer's name and whether the cell is codec-bound (make_table), in the table's order."""
    cols = [i for i in ALL_IMPLS if i in impls]
    cells = []
    for layout in layouts:
        for op in ops:
            if op not in PLAN.get(layout, []):
                continue
            cell = {i: results.get(f"{layout}/{op}/{i}") for i in cols}
            best, lz = best_peer(cell, cols, key), cell.get("libzarr")
            ok = best and lz and lz.get("status") == "ok"
            floor = (floors or {}).get((layout, op))
            cells.append({"layout": layout, "op": op, "ratio": best[0] / lz[key] if ok else None,
                          "peer": best[1] if best else None,
                          "codec_bound": bool(best and floor is not None and best[0] <= target * floor)})
    return cells


def write_plot(path, results, meta, layouts, ops, impls, target, key, floors=None):
    sys.path.insert(0, HERE)
    from plot import write_svg
    lib = meta.get("library") or {}
    when = (meta.get("started") or "?")[:10]
    title = f"libzarr against the best peer, {when}"
    # the machine as run_all recorded it (older results files name only the host)
    where = (f"{meta['cpu_model']}, {meta.get('cpus', '?')} CPUs, kernel {meta.get('kernel', '?')}"
             if meta.get("cpu_model") else meta.get("host", "?"))
    loads = [r["load"]["load"] for r in results.values() if isinstance(r.get("load"), dict) and "load" in r["load"]]
    load = f", load {min(loads):.2f}-{max(loads):.2f}" if loads else ""
    subtitle = (f"{where}, {meta.get('threads', '?')} threads each, library {lib.get('git', '?')}{load}, "
                f"median {'wall-clock' if key == 'median_s' else 'CPU'} seconds")
    cells = ratio_cells(results, layouts, ops, impls, key, floors, target)
    write_svg(cells, path, title, subtitle, target)
    log(f"run_all: plot of {len(cells)} cells in {path}")


def make_table(results, layouts, ops, impls, target, key="median_s", floors=None):
    """The markdown table of every cell (each implementation's time, the best peer, best peer / libzarr)
    and its notes. `floors` ({(layout, op): seconds}, cell_floors): a cell whose best peer is already
    within `target` of the least time the cell can take is codec-bound, and its target is 1.0 (being
    `target` times faster than that peer would mean running below the floor)."""
    cols = [i for i in KNOWN_IMPLS if i in impls]
    head = ["layout", "op"] + cols + ["best peer", "ratio"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = []
    for layout in layouts:
        for op in ops:
            if op not in PLAN.get(layout, []):
                continue
            cell = {i: results.get(f"{layout}/{op}/{i}") for i in cols}
            row = [layout, op] + [fmt_time(cell[i], key) for i in cols]
            best = best_peer(cell, cols, key)
            lz = cell.get("libzarr")
            if best:
                row.append(f"{best[1]} {best[0]:.4f}" if best[0] < 10 else f"{best[1]} {best[0]:.2f}")
            else:
                row.append("-")
            if best and lz and lz.get("status") == "ok":
                ratio = best[0] / lz[key]
                floor = (floors or {}).get((layout, op))
                bound = floor is not None and best[0] <= target * floor
                mark = "" if ratio >= (1.0 if bound else target) else " ✗"
                row.append(f"{ratio:.2f}{mark}" + (" (codec-bound)" if bound else ""))
                if bound:
                    notes.append(f"{layout}/{op}: codec-bound (best peer {best[0]:.4f} s within {target}x of the "
                                 f"floor {floor:.4f} s): target 1.0")
            elif "libzarr" in cols:
                row.append("n/a")
            else:
                row.append("-")
            lines.append("| " + " | ".join(row) + " |")
            for i in cols:
                r = cell[i]
                if r and r.get("status") not in ("ok", "skipped", None):
                    notes.append(f"{layout}/{op}/{i}: {r.get('status')}: {r.get('error', '')[:200]}")
    # the strided reads against the dense read of the same chunks (target: at most 1.3)
    for layout in layouts:
        dense = results.get(f"{layout}/R/libzarr")
        for op in ("Rs", "RsF", "Rs32"):
            r = results.get(f"{layout}/{op}/libzarr")
            if op in ops and r and dense and r.get("status") == "ok" and dense.get("status") == "ok":
                notes.append(f"{layout}/{op}: libzarr strided / dense R = {r[key] / dense[key]:.2f}"
                             + (" (target <= 1.3)" if op == "Rs" else ""))
    return "\n".join(lines), notes


def h5vol_table(results, layouts, ops, metric="median_s"):
    """The h5py-vol cells beside libzarr's C API (and zarr-python): the connector's overhead, h5py-vol / libzarr - 1,
    in median wall-clock and median CPU seconds (user + system, all threads)."""
    lines = ["| layout | op | libzarr s | h5py-vol s | overhead | libzarr CPU s | h5py-vol CPU s | CPU overhead | "
             "zarr-python s |", "|" + "---|" * 9]
    for L in layouts:
        for op in ops:
            if op not in PLAN.get(L, []):
                continue
            lz, hv, zp = (results.get(f"{L}/{op}/{i}") for i in ("libzarr", H5VOL, "zarr-python"))
            if not hv:
                continue
            ok = lambda r: r is not None and r.get("status") == "ok"  # noqa: E731

            def pair(k):
                if not (ok(lz) and ok(hv)) or k not in lz or k not in hv:
                    return f"{lz[k]:.4f}" if ok(lz) and k in lz else "-", fmt_time(hv, k), "-"
                return f"{lz[k]:.4f}", f"{hv[k]:.4f}", f"{100 * (hv[k] / lz[k] - 1):+.1f} %"
            w, c = pair("median_s"), pair("cpu_median_s")
            lines.append(f"| {L} | {op} | {w[0]} | {w[1]} | {w[2]} | {c[0]} | {c[1]} | {c[2]} | "
                         f"{fmt_time(zp, metric) if zp else '-'} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--perf-dir", default=os.path.join(REPO, "..", "shared", "perf"),
                    help="WORKLOADS.md, gen_data.py, layouts/, regions_16.txt (default: ../shared/perf)")
    ap.add_argument("--out", default=os.path.join(HERE, "out"), help="work directory (default bench/out)")
    ap.add_argument("--data-dir", help="dataset directory (default <out>/data)")
    ap.add_argument("--lib-dir", default=os.path.join(REPO, "target", "release"),
                    help="directory with libzarr.so (default target/release)")
    ap.add_argument("--cargo-build", action="store_true", help="run cargo build --release first")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--layouts", default=",".join(ALL_LAYOUTS))
    ap.add_argument("--ops", default=",".join(ALL_OPS))
    ap.add_argument("--impls", default=",".join(ALL_IMPLS),
                    help=f"implementations (default {','.join(ALL_IMPLS)}; also {H5VOL}: h5py through libzarr's "
                         "HDF5 VOL connector, docs/h5vol.md)")
    ap.add_argument("--h5vol-plugin-dir", default=os.path.join(REPO, "build", "h5vol", "plugin"),
                    help=f"{H5VOL}: the directory holding libzarr_h5vol.so (default build/h5vol/plugin); the "
                         "connector is made to use the library bench_libzarr links (the snapshot in <out>/lib)")
    ap.add_argument("--reps", type=int, default=0, help="repetitions per cell (default 5, P 10)")
    ap.add_argument("--max-load", type=float, default=2.5,
                    help="a cell whose load rose above this is run again (bench/load_guard.py; default 2.5)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run each cell's implementations this many times in turn, alternating their order, and "
                         "pool each one's repetitions (bench/rounds.py; default 1)")
    ap.add_argument("--load-retries", type=int, default=2, help="how many times a loaded cell is run again (default 2)")
    ap.add_argument("--reps-for", default="",
                    help="per-cell repetitions, e.g. 'Wbox=3,N=2,C/Rs=5' (op, layout or layout/op; first match wins)")
    ap.add_argument("--codec-speed", action="store_true",
                    help="also run examples/codec_speed (single-core codec speed per layout) and report the "
                         "W/R cells as a fraction of it")
    ap.add_argument("--floor", action="store_true",
                    help="also run examples/read_floor, the least work of the R/Rinto/Rs/RsF/Rs32/P cells of "
                         "layouts A-E (D: shard by shard), and examples/write_floor beside the W cells of B, C and E, "
                         "in the same rotation as the implementations, and report each implementation against them")
    ap.add_argument("--floor-exe", help="a built examples/read_floor (default: cargo build it)")
    ap.add_argument("--write-floor-exe", help="a built examples/write_floor (default: cargo build it)")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (2, P 3): a smoke test, not a figure")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--target", type=float, default=1.2,
                    help="speed target: cells with ratio below it are marked (default 1.2)")
    ap.add_argument("--metric", choices=["wall", "cpu"], default="wall",
                    help="table of median wall-clock seconds (default) or of median CPU seconds (user+system, "
                         "all threads; steadier on a busy machine); both are in results.json")
    ap.add_argument("--skip", default="",
                    help="cells not run, as layout/op/impl patterns, e.g. 'N/*/zarr-python' (shown as n/a)")
    ap.add_argument("--codec-speed-exe", help="a built examples/codec_speed (default: cargo build it)")
    ap.add_argument("--small-no-warmup", action="store_true",
                    help="layout N: no untimed warm-up repetition before W (saves a minute per implementation)")
    ap.add_argument("--table-only", action="store_true",
                    help="print the table of an existing results file and exit (nothing is run)")
    ap.add_argument("--results", metavar="FILE.json",
                    help="the results file written by a run and read by --table-only (default <out>/results.json)")
    ap.add_argument("--plot", metavar="FILE.svg",
                    help="also draw the table's ratios as an SVG bar chart (bench/plot.py); with --table-only, "
                         "from the results file, without running anything")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per cell")
    args = ap.parse_args()
    args.out = os.path.abspath(args.out)
    args.perf_dir = os.path.abspath(args.perf_dir)
    args.lib_dir = os.path.abspath(args.lib_dir)
    data_dir = os.path.abspath(args.data_dir or os.path.join(args.out, "data"))
    layouts = [x for x in args.layouts.split(",") if x]
    ops = [x for x in args.ops.split(",") if x]
    impls = [x for x in args.impls.split(",") if x]
    for x in ops:
        if x not in ALL_OPS:
            ap.error(f"unknown op {x} (choose from {','.join(ALL_OPS)})")
    for x in impls:
        if x not in KNOWN_IMPLS:
            ap.error(f"unknown implementation {x} (choose from {','.join(KNOWN_IMPLS)})")
    key = "median_s" if args.metric == "wall" else "cpu_median_s"
    out_json = os.path.abspath(args.results or os.path.join(args.out, "results.json"))
    regions = os.path.join(args.perf_dir, "regions_16.txt")
    if args.table_only:  # needs neither the perf directory nor a build
        with open(out_json) as f:
            saved = json.load(f)
        # the layouts the file has results for (a file from before layout V existed draws as it did)
        layouts = [L for L in layouts if any(c.startswith(L + "/") for c in saved["results"])]
        if saved["meta"].get("floors") and key == saved["meta"].get("floors_key", "median_s"):
            # as the run computed them (its Wbox bounds came from the regions file it had)
            floors = {tuple(c.split("/")): v for c, v in saved["meta"]["floors"].items()}
        else:
            floors = cell_floors(saved["results"], saved["meta"].get("codec_speed"), saved["meta"]["threads"],
                                 regions if os.path.exists(regions) else None, key)
        table, notes = make_table(saved["results"], layouts, ops, impls, args.target, key, floors)
        print(machine_line(saved["meta"]))
        print()
        print(table)
        for x in notes:
            print(f"- {x}")
        if saved["meta"].get("codec_speed"):
            print()
            print(codec_table(saved["meta"]["codec_speed"], saved["results"], saved["meta"]["threads"], key,
                              regions if os.path.exists(regions) else None))
        if any(c.endswith("/floor") for c in saved["results"]):
            print()
            print(floor_table(saved["results"], layouts, ops, key))
        if H5VOL in impls and any(c.endswith("/" + H5VOL) for c in saved["results"]):
            print()
            print(h5vol_table(saved["results"], layouts, ops, key))
        if args.plot:
            write_plot(args.plot, saved["results"], saved["meta"], layouts, ops, impls, args.target, key, floors)
        return 0
    # the uint16 volume (and so the perf directory) is needed by layouts A-E only; N and V bring their own data
    needs_volume = any(L not in LOCAL_LAYOUTS for L in layouts)
    if needs_volume and not os.path.exists(os.path.join(args.perf_dir, "gen_data.py")):
        sys.exit(f"run_all: no gen_data.py in {args.perf_dir}: pass --perf-dir (the directory with WORKLOADS.md)")
    layout_paths = {}
    for L in layouts:
        p = os.path.join(args.perf_dir, "layouts", L + ".json")
        if L in LOCAL_LAYOUTS:
            p = os.path.join(HERE, "layouts", L + ".json")
        if not os.path.exists(p):
            ap.error(f"no layout {p}")
        layout_paths[L] = p
    os.makedirs(args.out, exist_ok=True)

    env = dict(os.environ)
    n = str(args.threads)
    env.update({"ZARR_NUM_THREADS": n, "RAYON_NUM_THREADS": n, "OMP_NUM_THREADS": "1",
                "OPENBLAS_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"})

    t_start = time.time()
    if SMALL in layouts and "W" in ops:
        remove_small_copies(args.out)
    vol, data_sha = prepare_dataset(args.perf_dir, data_dir) if needs_volume else (None, None)
    exe, libinfo = build_bench(args) if "libzarr" in impls else (None, None)
    # the library the connector uses: bench_libzarr's snapshot, else the one in --lib-dir
    h5vol_lib = os.path.join(args.out, "lib", "libzarr.so.0") if exe else find_library(args.lib_dir)
    h5vol_dir, h5vol_info = snapshot_h5vol(args) if H5VOL in impls else (None, None)

    datas, data_shas = {L: vol for L in layouts}, {L: data_sha for L in layouts}
    if SMALL in layouts and any(op in PLAN[SMALL] for op in ops):
        datas[SMALL], data_shas[SMALL] = prepare_small(args, layout_paths[SMALL], data_dir, env)
    for L in STRINGS:
        if L in layouts and any(op in PLAN[L] for op in ops):
            datas[L], data_shas[L] = prepare_strings(args, layout_paths[L], data_dir, env)
    refs, ref_errors = {}, {}
    for L in layouts:
        if any(op != "W" and op in PLAN.get(L, []) for op in ops):
            refs[L], ref_errors[L] = prepare_reference(args, L, layout_paths[L], datas[L], data_shas[L], env,
                                                       small=L == SMALL, strings=L in STRINGS)

    speeds = codec_speeds(args, layouts, layout_paths, datas, env) if args.codec_speed else {}
    floor_exe = (args.floor_exe or build_example(args, "read_floor")) if args.floor else None
    write_floor_exe = None
    if args.floor and "W" in ops and any(L in WRITE_FLOOR_LAYOUTS for L in layouts):
        write_floor_exe = args.write_floor_exe or build_example(args, "write_floor")
    results = {}
    os.makedirs(os.path.dirname(out_json), exist_ok=True)
    meta = {"started": datetime.datetime.now().isoformat(timespec="seconds"), "host": platform.node(),
            "cpus": os.cpu_count(), "threads": args.threads, "python": platform.python_version(),
            "library": libinfo, "data_sha256": data_sha, "perf_dir": args.perf_dir, "target": args.target, "max_load": args.max_load, "rounds": args.rounds,
            "codec_speed": speeds, "h5vol_plugin": h5vol_info, **machine()}

    def save():
        with open(out_json + ".tmp", "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
        os.replace(out_json + ".tmp", out_json)

    def run_impl(L, op, impl):
        """One run of one implementation on one cell (a round of it), under the load guard."""
        reps = reps_for(args, op, L)
        if op == "W":
            array = os.path.join(args.out, "w", impl, L)
            os.makedirs(os.path.dirname(array), exist_ok=True)
            if L != SMALL:  # layout N writes new directories (--fresh-dirs, remove_small_copies)
                remove_array(array)
        else:
            array = refs.get(L)
            if array is None:
                return {"status": "error", "error": f"no reference copy: {ref_errors.get(L)}"}
        common = ["--op", op, "--layout", layout_paths[L], "--array", array, "--data", datas[L],
                  "--regions", regions, "--reps", str(reps), "--name", L]
        if L in STRINGS:
            common += ["--strings"]
        if L == SMALL:
            common += ["--small"] + (["--no-warmup"] if args.small_no_warmup else [])
            if op == "W":
                common += ["--fresh-dirs"]
        if op == "Wbox":
            work = os.path.join(args.out, "w", impl, L + "-box")
            os.makedirs(os.path.dirname(work), exist_ok=True)
            remove_array(work)
            common += ["--work", work]
        if impl == "floor" and op == "W":
            cmd = [write_floor_exe, layout_paths[L], array, str(reps), n, datas[L]]
        elif impl == "floor":
            cmd = [floor_exe, layout_paths[L], array, op, str(reps), n, datas[L]]
        elif impl == "libzarr":
            cmd = [exe, *common, "--threads", n]
        elif impl == H5VOL:
            cmd = [sys.executable, os.path.join(HERE, "peers.py"), "--impl", impl, *common, "--threads", n,
                   "--h5vol-plugin-dir", h5vol_dir]
            cmd += ["--lib", h5vol_lib] if h5vol_lib else []
        else:
            cmd = [sys.executable, os.path.join(HERE, "peers.py"), "--impl", impl, *common, "--threads", n]
        # Untimed: the previous cell's dirty pages (5 GB after the N/W cells) are written back
        # now, not during this cell.
        os.sync()
        res = guarded_cell(cmd, env, args.timeout, args.max_load, args.load_retries)
        if op == "W" and L != SMALL:
            remove_array(array)
        return res

    k = 0
    for L in layouts:
        for op in ops:
            if op not in PLAN.get(L, []):
                continue
            has_floor = (L in FLOOR_LAYOUTS and op in FLOOR_OPS) or (op == "W" and L in WRITE_FLOOR_LAYOUTS)
            cell_impls = impls + (["floor"] if floor_exe and has_floor else [])
            order = cell_impls[k % len(cell_impls):] + cell_impls[:k % len(cell_impls)]  # rotate: none always first
            k += 1
            skipped = [i for i in order
                       if any(fnmatch.fnmatchcase(f"{L}/{op}/{i}", pat) for pat in args.skip.split(",") if pat)]
            for impl in skipped:
                results[f"{L}/{op}/{impl}"] = {"status": "skipped", "impl": impl, "layout": L, "op": op,
                                               "error": "--skip"}
            order = [i for i in order if i not in skipped]
            per_round = {i: [] for i in order}
            for rnd in range(args.rounds):
                for impl in rounds.round_order(order, rnd):
                    per_round[impl].append(run_impl(L, op, impl))
                    if args.rounds > 1:
                        r = per_round[impl][-1]
                        log(f"{L}/{op}/{impl:18s} round {rnd + 1}/{args.rounds}: "
                            + (f"median {r['median_s']:.4f} s  load {r['load']['load']}" if r.get("status") == "ok"
                               else r.get("status", "?")))
            for impl in order:
                cell = f"{L}/{op}/{impl}"
                res = rounds.pool(per_round[impl])
                res.update({"impl": impl, "layout": L, "op": op})
                results[cell] = res
                if res["status"] == "ok":
                    log(f"{cell:24s} median {res['median_s']:.4f} s  min {res['min_s']:.4f} s  "
                        f"cpu {res.get('cpu_median_s', float('nan')):.4f} s  ({res['reps']} reps)  "
                        f"load {res['load']['load']}"
                        + (f"  round spread {res['round_spread']}" if res.get("round_spread") else ""))
                else:
                    log(f"{cell:24s} {res['status']}: {res.get('error', '')[:300]}")
                save()


    meta["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    meta["elapsed_s"] = round(time.time() - t_start, 1)
    save()
    if SMALL in layouts and "W" in ops:
        remove_small_copies(args.out)
    floors = cell_floors(results, speeds, args.threads, regions if os.path.exists(regions) else None, key)
    meta["floors"] = {f"{L}/{op}": v for (L, op), v in floors.items()}
    meta["floors_key"] = key
    save()
    table, notes = make_table(results, layouts, ops, impls, args.target, key, floors)
    print(machine_line(meta))
    print(f"libzarr benchmark: {args.threads} threads per implementation, median "
          f"{'wall-clock' if args.metric == 'wall' else 'CPU'} seconds over "
          f"{'--reps ' + str(args.reps) if args.reps else ('quick reps' if args.quick else '5 reps (P: 10)')}"
          f"{f' in each of {args.rounds} interleaved rounds (pooled)' if args.rounds > 1 else ''}; "
          f"ratio = best peer / libzarr (>1: libzarr faster), ✗ = below the {args.target}x target")
    print()
    print(table)
    if notes:
        print()
        for x in notes:
            print(f"- {x}")
    loads = [r["load"]["load"] for r in results.values() if (r.get("load") or {}).get("load") is not None]
    if loads:
        print()
        print(f"load during the cells: {min(loads):.2f} to {max(loads):.2f} (cells above {args.max_load} are "
              f"repeated up to {args.load_retries} times; the quietest attempt is kept)")
        for x in load_notes(results, args.max_load):
            print(f"- {x}")
    if speeds:
        print()
        print("codec bound: bytes / (libzarr's single-core codec speed x threads); fraction = bound / median")
        print()
        print(codec_table(speeds, results, args.threads, key, regions))
    if floor_exe:
        print()
        print("floor: examples/read_floor (read(2) of each chunk or shard file, the codec chain, a plain copy loop; "
              "W: examples/write_floor, each chunk gathered, encoded and written once); "
              "x / floor = median over "
              "the floor's median")
        print()
        print(floor_table(results, layouts, ops, key))
    if H5VOL in impls:
        print()
        print(f"{H5VOL}: h5py + libzarr's HDF5 VOL connector against libzarr's C API (overhead = {H5VOL} / "
              "libzarr - 1; target on whole reads: at most 10 %)")
        print()
        print(h5vol_table(results, layouts, ops, key))
    if args.plot:
        write_plot(args.plot, results, meta, layouts, ops, impls, args.target, key, floors)
    print()
    print(f"raw results: {out_json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
