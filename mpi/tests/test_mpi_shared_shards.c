/* mpi.shared_shards_np<N>: ranks write DIFFERENT inner chunks of the SAME shards, concurrently and
 * independently (no barrier between the writes), then every cell is checked. Each write of an inner chunk
 * is a read-modify-write of its whole shard, so without cross-process shard locking in libzarr the ranks
 * overwrite one another's chunks and cells come back as the fill value (-1): this test then FAILS, which is
 * what it is for. It needs libzarr's per-shard lock (a store-level lock file), not a change here.
 *
 * Array: int32 [8, 1024], shards [8, 128] (8 shards), inner chunks [8, 8] (16 per shard). Inner chunk c
 * (columns 8c .. 8c+7) belongs to rank c % N, so every shard holds chunks of every rank. Each rank writes
 * its chunks one call at a time, two rounds (the second overwrites with new values). Cell (i, j) of round
 * r = r*1000000 + i*10000 + j. It also checks that zarr_mpi_decompose_shape() reports the sharing for a
 * forced grid that splits shards. */
#include <stdint.h>

#include "mpi_test_util.h"

#define ROWS 8
#define COLS 1024

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const unsigned long long shape[2] = {ROWS, COLS}, shard[2] = {ROWS, 128}, inner[2] = {ROWS, 8};
    char path[1024], meta[2048];
    snprintf(path, sizeof path, "%s/shared.zarr", test_dir());
    test_metadata(meta, 2, shape, shard, inner);

    /* A grid of 1 x (8 * size + 1) blocks cannot follow the 8 shards: the helper says they share. */
    uint64_t s[2], c[2];
    int dims[2] = {1, 0}, grid[2], shared = 0;
    CHECK_OK(zarr_mpi_decompose_shape((const uint64_t *)shape, (const uint64_t *)shard, 2, 8 * size + 1, 0,
                                      dims, grid, s, c, &shared));
    CHECK(grid[0] == 1 && grid[1] == 8 * size + 1 && shared == 1);

    zarr_array *a = NULL;
    CHECK_OK(zarr_mpi_create(MPI_COMM_WORLD, path, meta, &a));
    int32_t buf[ROWS * 8];
    for (int round = 0; round < 2; round++) {
        zarr_status st = ZARR_OK;
        for (int chunk = me; chunk < COLS / 8 && st == ZARR_OK; chunk += size) {
            uint64_t start[2] = {0, (uint64_t)chunk * 8}, count[2] = {ROWS, 8};
            for (int i = 0; i < ROWS; i++) {
                for (int j = 0; j < 8; j++) {
                    buf[i * 8 + j] = round * 1000000 + i * 10000 + chunk * 8 + j;
                }
            }
            st = zarr_write_region(a, start, count, buf, sizeof buf);
        }
        CHECK_OK(zarr_mpi_agree(MPI_COMM_WORLD, st));
    }
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));

    /* Every cell, read by every rank. */
    CHECK_OK(zarr_mpi_open(MPI_COMM_WORLD, path, ZARR_READ, &a));
    static int32_t all[ROWS * COLS];
    uint64_t zero[2] = {0, 0}, whole[2] = {ROWS, COLS};
    CHECK_OK(zarr_mpi_read_block(MPI_COMM_WORLD, a, zero, whole, all, sizeof all));
    size_t bad = 0, lost = 0;
    for (int i = 0; i < ROWS; i++) {
        for (int j = 0; j < COLS; j++) {
            int32_t want = 1000000 + i * 10000 + j, got = all[i * COLS + j];
            if (got != want) {
                lost += got == -1 || got == i * 10000 + j;
                if (bad++ < 5 && me == 0) {
                    fprintf(stderr, "cell [%d,%d] is %d, expected %d (written by rank %d)\n", i, j, got, want,
                            (j / 8) % size);
                }
            }
        }
    }
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));
    if (me == 0) {
        printf("shared shards: %d ranks, %d cells, %zu wrong (%zu lost updates)\n", size, ROWS * COLS, bad, lost);
    }
    CHECK(bad == 0);
    MPI_Finalize();
    return 0;
}
