#!/usr/bin/env bash
# Fuzz smoke test: builds every fuzz target (cargo-fuzz, stable toolchain, no sanitizer) and runs each
# for SECONDS seconds (default 60; first argument or FUZZ_SECONDS) from the seeds that
# fuzz/make_seeds.py builds out of tests/fixtures and tests/vectors. Fails on any crash, panic, leak of
# the memory bounds or timeout; the input is left in fuzz/artifacts/<target>/ (commit it under
# tests/fuzz_regressions/<target>/ once fixed).
#
# Memory bounds: every target's global allocator (fuzz/alloc_limit.rs) aborts on any single
# allocation, reallocation or zeroed allocation over FUZZ_MALLOC_LIMIT_MB MiB (default 128), fallible
# ones (try_reserve) included, with "... exceeds the fuzz allocation limit of N bytes" on stderr, so
# libFuzzer records a crash; -rss_limit_mb=1024 bounds the process. (libFuzzer's own -malloc_limit_mb,
# passed too, acts only through a sanitizer's malloc hooks, which these -s none builds lack.) Before
# the runs, a self-check proves the limit can fail: a codec_numcodecs input that decodes 2 MiB must
# fail at FUZZ_MALLOC_LIMIT_MB=1 with that message, and pass at the limit in force.
#
# Environment: FUZZ_SECONDS (per target), FUZZ_TARGETS (space-separated subset),
# FUZZ_MALLOC_LIMIT_MB (the single-allocation limit in MiB, default 128), FUZZ_DEBUG_ASSERTIONS=1
# (build with overflow checks), CARGO_TARGET_DIR (default: fuzz/target, so that it does not disturb
# the main build).
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked --version 0.13.2`; exit 77 without it) and python3.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
seconds=${1:-${FUZZ_SECONDS:-60}}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$here/target}
targets=${FUZZ_TARGETS:-"metadata_v3 metadata_v2 metadata_v1 codec_v3 codec_numcodecs shard_index store_read zip_store remote_answer"}
# Memory bounds: the library must refuse anything larger before allocating (src/fuzzing.rs lowers the
# decoded chunk bound to 4 MiB and the metadata ceiling to 1 MiB while fuzzing, docs/limits.md). No
# legitimate allocation of a target passes 64 MiB (a shard index of 4 Mi entries), so one of 128 MiB is a
# blow-up of the input, and a process of 1 GiB is one of 100x the largest input libFuzzer makes.
export FUZZ_MALLOC_LIMIT_MB=${FUZZ_MALLOC_LIMIT_MB:-128}
limits=(-rss_limit_mb=1024 -malloc_limit_mb="$FUZZ_MALLOC_LIMIT_MB" -timeout=10)
mark="exceeds the fuzz allocation limit of"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "smoke.sh: cargo-fuzz is not installed (cargo install cargo-fuzz --locked --version 0.13.2)" >&2
    exit 77   # a skip outside CI (CMakeLists.txt); under CI=true .ci/run installs it and 77 fails
fi

cd "$here"
python3 make_seeds.py "$here/corpus" >/dev/null
# -s none: no sanitizer (stable Rust cannot build with -Zsanitizer); -O: release with debug info.
# FUZZ_DEBUG_ASSERTIONS=1 adds overflow checks and debug_assert! (a separate, longer build).
build=(-s none -O)
if [ "${FUZZ_DEBUG_ASSERTIONS:-0}" = 1 ]; then build+=(--debug-assertions); fi
cargo fuzz build "${build[@]}"

# Self-check of the allocation limit (fuzz/alloc_limit.rs): a zlib stream of 2 MiB of zeros for
# codec_numcodecs, whose decoding allocates 2 MiB (within the targets' 4 MiB chunk bound), must fail at
# a limit of 1 MiB with the limit's message, and pass at the limit in force.
check=$(mktemp -d)
trap 'rm -rf "$check"' EXIT
python3 - "$check/zlib_2mib" <<'PY'
import json, struct, sys, zlib
header = json.dumps({"dtype": "|u1", "compressor": {"id": "zlib", "level": 1}, "size": 2 << 20}).encode()
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<H", len(header)) + header + zlib.compress(bytes(2 << 20)))
PY
echo "== self-check: codec_numcodecs decoding 2 MiB must fail at FUZZ_MALLOC_LIMIT_MB=1"
if FUZZ_MALLOC_LIMIT_MB=1 cargo fuzz run "${build[@]}" codec_numcodecs "$check/zlib_2mib" -- \
    -artifact_prefix="$check/" >"$check/low.txt" 2>&1; then
    echo "FAIL: an input that allocates 2 MiB passed at FUZZ_MALLOC_LIMIT_MB=1" >&2
    tail -20 "$check/low.txt" >&2
    exit 1
fi
if ! grep -q "$mark 1048576 bytes" "$check/low.txt"; then
    echo "FAIL: the run at FUZZ_MALLOC_LIMIT_MB=1 failed without the allocation limit's message" >&2
    tail -20 "$check/low.txt" >&2
    exit 1
fi
grep -m1 "$mark" "$check/low.txt"
if ! cargo fuzz run "${build[@]}" codec_numcodecs "$check/zlib_2mib" -- "${limits[@]}" \
    -artifact_prefix="$check/" >"$check/ok.txt" 2>&1; then
    echo "FAIL: the self-check input failed at FUZZ_MALLOC_LIMIT_MB=$FUZZ_MALLOC_LIMIT_MB" >&2
    tail -20 "$check/ok.txt" >&2
    exit 1
fi
echo "== self-check passed: fails at 1 MiB, passes at $FUZZ_MALLOC_LIMIT_MB MiB"

status=0
for t in $targets; do
    mkdir -p "artifacts/$t" "corpus/$t"
    echo "== fuzz $t for ${seconds}s"
    # One process, one job: the runs must not starve a shared machine.
    if ! ZARR_NUM_THREADS=1 cargo fuzz run "${build[@]}" "$t" "corpus/$t" -- \
        -max_total_time="$seconds" "${limits[@]}" -print_final_stats=1 \
        -artifact_prefix="artifacts/$t/" 2>"artifacts/$t/log.txt"; then
        echo "FAIL: $t (see fuzz/artifacts/$t/)" >&2
        tail -40 "artifacts/$t/log.txt" >&2
        status=1
    else
        grep -E "^stat::(number_of_executed_units|average_exec_per_sec)" "artifacts/$t/log.txt" || true
    fi
done
exit $status
