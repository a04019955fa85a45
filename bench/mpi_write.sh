#!/usr/bin/env bash
# Write throughput of libzarr_mpi with 1, 2 and 4 ranks (bench/mpi_write_bench.c, target zarr_mpi_bench).
#
#   bench/mpi_write.sh BUILD_DIR [MIB] [REPS] [DIR]
#
# BUILD_DIR: a CMake build tree where `cmake --build BUILD_DIR --target zarr_mpi_bench` ran; MIB: the array
# size (default 128 MiB of float32); REPS: repetitions per rank count (default 3); DIR: scratch directory
# (default a new one under /tmp, removed at the end). Prints the load average first (the machine may be
# shared), then per rank count and codec (zstd level 1, and none) each repetition and the best rate.
set -euo pipefail
build=${1:?usage: bench/mpi_write.sh BUILD_DIR [MIB] [REPS] [DIR]}
mib=${2:-128}
reps=${3:-3}
dir=${4:-$(mktemp -d /tmp/zarr_mpi_bench.XXXXXX)}
bench="$build/mpi/zarr_mpi_bench"
[ -x "$bench" ] || { echo "$bench not found: cmake --build $build --target zarr_mpi_bench"; exit 1; }
mpiexec=${MPIEXEC:-mpiexec}
flags=()
if "$mpiexec" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
    flags=(--oversubscribe)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
echo "== $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg); ${mib} MiB per write; $dir"
for codec in zstd none; do
    for np in 1 2 4; do
        rm -rf "$dir"/rep*.zarr
        out=$("$mpiexec" -n "$np" "${flags[@]}" "$bench" "$dir" "$mib" "$reps" "$codec")
        echo "$out"
        echo "$out" | awk -v np="$np" -v c="$codec" 'match($0, /[0-9.]+ MiB\/s/) { r = substr($0, RSTART, RLENGTH) + 0; if (r > best) best = r }
            END { printf "-- %s, %d rank(s): best %.1f MiB/s\n", c, np, best }'
    done
done
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$dir"/rep*.zarr
[ -n "${4:-}" ] || rmdir "$dir"
