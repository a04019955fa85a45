#!/usr/bin/env bash
# One workload, several writers (bench/mpi_collective_bench.c): a float32 array written by 1, 2, 4 and 8
# ranks from blocks inside halo buffers (rows split on shard boundaries, rows split unevenly, and columns
# split evenly so that every rank shares every shard), by libzarr_mpi
# collectively and independently and, when parallel HDF5 and PnetCDF are installed (Debian:
# `apt-get install libhdf5-openmpi-dev libpnetcdf-dev`; not in CI: benchmarks are not run there), by
# parallel HDF5 (H5FD_MPIO collective) and PnetCDF (put_vara_all). Codecs: none (all four writers), gzip
# level 1 (libzarr and HDF5's deflate), zstd level 1 (libzarr only).
#
#   bench/mpi_collective.sh BUILD_DIR [MIB] [REPS] [DIR]
#
# BUILD_DIR: a CMake build tree where `cmake --build BUILD_DIR --target zarr_mpi_collective_bench` ran
# (its libzarr and libzarr_mpi are used; with HDF5 and PnetCDF the program is compiled again here with
# mpicc and -DZARR_BENCH_PEERS); MIB: the array size (default 64 MiB of float32); REPS: repetitions (default
# 3, the best counts); DIR: scratch directory (default a new one under /tmp, removed at the end). Prints the
# machine (CPU, cores, kernel) and the load (uptime) before each rank count and after, then one line per
# rank count, decomposition, writer and codec: time, rate, files and bytes (every written cell is checked).
set -euo pipefail
build=$(cd "${1:?usage: bench/mpi_collective.sh BUILD_DIR [MIB] [REPS] [DIR]}" && pwd)
mib=${2:-64}
reps=${3:-3}
dir=${4:-$(mktemp -d /tmp/zarr_mpi_collective.XXXXXX)}
src=$(cd "$(dirname "$0")/.." && pwd)
bench="$build/mpi/zarr_mpi_collective_bench"
[ -x "$bench" ] || { echo "$bench not found: cmake --build $build --target zarr_mpi_collective_bench"; exit 1; }
h5inc=/usr/include/hdf5/openmpi
h5lib=/usr/lib/x86_64-linux-gnu/hdf5/openmpi
peers="not installed (libhdf5-openmpi-dev, libpnetcdf-dev): libzarr_mpi only"
if [ -f "$h5inc/hdf5.h" ] && [ -f /usr/include/pnetcdf.h ] && command -v mpicc > /dev/null; then
    peers_bench="$dir/zarr_mpi_collective_bench_peers"
    mpicc -O2 -std=c11 -DZARR_BENCH_PEERS -I"$src/include" -I"$h5inc" "$src/bench/mpi_collective_bench.c" \
          -o "$peers_bench" -L"$build" -lzarr_mpi -L"$build/lib" -lzarr -L"$h5lib" -lhdf5 -lpnetcdf \
          -Wl,-rpath,"$build:$build/lib:$h5lib"
    bench=$peers_bench
    peers="parallel HDF5 $(grep -m1 -o 'version: [0-9.]*' "$h5inc/H5public.h" | cut -d' ' -f2), PnetCDF"
    peers+=" $(grep -m1 'define PNETCDF_VERSION ' /usr/include/pnetcdf.h | cut -d'"' -f2)"
fi
mpiexec=${MPIEXEC:-mpiexec}
flags=()
if "$mpiexec" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
    flags=(--oversubscribe)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export ZARR_NUM_THREADS=${ZARR_NUM_THREADS:-1}
echo "== $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, Linux $(uname -r);" \
     "$("$mpiexec" --version 2>&1 | head -1); peers: $peers"
echo "== ${mib} MiB per write, best of $reps, ZARR_NUM_THREADS=$ZARR_NUM_THREADS; $dir"
for codec in none gzip zstd; do
    for np in 1 2 4 8; do
        echo "== load: $(uptime | sed 's/.*load average/load average/')"
        rm -rf "$dir"/rep*
        "$mpiexec" -n "$np" "${flags[@]}" "$bench" "$dir" "$mib" "$reps" "$codec"
    done
done
echo "== load after: $(uptime | sed 's/.*load average/load average/')"
rm -rf "$dir"/rep* "$dir"/zarr_mpi_collective_bench_peers
[ -n "${4:-}" ] || rmdir "$dir"
