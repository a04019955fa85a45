#!/usr/bin/env bash
# Collective against independent writes of libzarr_mpi, aligned and not aligned to the shards, with 1, 2, 4
# and 8 ranks (bench/mpi_collective_bench.c, target zarr_mpi_collective_bench).
#
#   bench/mpi_collective.sh BUILD_DIR [MIB] [REPS] [DIR]
#
# BUILD_DIR: a CMake build tree where `cmake --build BUILD_DIR --target zarr_mpi_collective_bench` ran; MIB:
# the array size (default 64 MiB of float32); REPS: repetitions (default 3, the best counts); DIR: scratch
# directory (default a new one under /tmp, removed at the end). Prints the machine and load average, then
# one line per rank count, decomposition, mode and codec (every written cell is checked).
set -euo pipefail
build=${1:?usage: bench/mpi_collective.sh BUILD_DIR [MIB] [REPS] [DIR]}
mib=${2:-64}
reps=${3:-3}
dir=${4:-$(mktemp -d /tmp/zarr_mpi_collective.XXXXXX)}
bench="$build/mpi/zarr_mpi_collective_bench"
[ -x "$bench" ] || { echo "$bench not found: cmake --build $build --target zarr_mpi_collective_bench"; exit 1; }
mpiexec=${MPIEXEC:-mpiexec}
flags=()
if "$mpiexec" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
    flags=(--oversubscribe)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export ZARR_NUM_THREADS=${ZARR_NUM_THREADS:-1}
echo "== $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load average:" \
     "$(cut -d' ' -f1-3 /proc/loadavg); ${mib} MiB per write; ZARR_NUM_THREADS=$ZARR_NUM_THREADS; $dir"
for codec in zstd none; do
    for np in 1 2 4 8; do
        rm -rf "$dir"/rep*.zarr
        "$mpiexec" -n "$np" "${flags[@]}" "$bench" "$dir" "$mib" "$reps" "$codec"
    done
done
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$dir"/rep*.zarr
[ -n "${4:-}" ] || rmdir "$dir"
