/* mpi.io_np<N>: every rank writes its block (from zarr_mpi_decompose()) of a sharded and of an unsharded
 * 3-D int32 array, then reads the block of ANOTHER rank (zarr_mpi_read_block) and a third one converted to
 * float64 (zarr_mpi_read_hyperslab) and compares every cell with the formula; finally every rank reopens
 * the arrays and compares the whole of them. tests/interop/mpi_check.py then reads the same arrays with
 * zarr-python and numpy (the mpi.io_np<N>_interop tests). Value of cell (i, j, k): i*10000 + j*100 + k. */
#include <stdint.h>

#include "mpi_test_util.h"

static int32_t value(uint64_t i, uint64_t j, uint64_t k) { return (int32_t)(i * 10000 + j * 100 + k); }

/* Fills (fill=1) or checks (fill=0) a block of int32 against the formula; returns the number of mismatches. */
static size_t block_values(int32_t *buf, const uint64_t *start, const uint64_t *count, int fill) {
    size_t n = 0, bad = 0;
    for (uint64_t i = 0; i < count[0]; i++) {
        for (uint64_t j = 0; j < count[1]; j++) {
            for (uint64_t k = 0; k < count[2]; k++, n++) {
                int32_t v = value(start[0] + i, start[1] + j, start[2] + k);
                if (fill) {
                    buf[n] = v;
                } else if (buf[n] != v) {
                    if (bad++ < 5) {
                        fprintf(stderr, "rank %d: cell [%llu,%llu,%llu] is %d, expected %d\n", test_rank(),
                                (unsigned long long)(start[0] + i), (unsigned long long)(start[1] + j),
                                (unsigned long long)(start[2] + k), buf[n], v);
                    }
                }
            }
        }
    }
    return bad;
}

static size_t cells(const uint64_t *count) { return (size_t)(count[0] * count[1] * count[2]); }

static void run(const char *name, const unsigned long long *chunk, const unsigned long long *inner) {
    static const unsigned long long shape[3] = {60, 30, 10};
    int me = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[1024], meta[2048];
    snprintf(path, sizeof path, "%s/%s.zarr", test_dir(), name);
    test_metadata(meta, 3, shape, chunk, inner);

    zarr_array *a = NULL;
    CHECK_OK(zarr_mpi_create(MPI_COMM_WORLD, path, meta, &a));
    CHECK(a != NULL);

    /* This rank's block: shard-aligned (chunk-aligned), so no two ranks share a shard (chunk). */
    uint64_t start[3], count[3];
    int grid[3], shared = -1;
    CHECK_OK(zarr_mpi_decompose(MPI_COMM_WORLD, a, NULL, grid, start, count, &shared));
    CHECK(shared == 0);
    CHECK(grid[0] * grid[1] * grid[2] == size);
    for (int d = 0; d < 3; d++) {
        CHECK(start[d] % chunk[d] == 0);
        CHECK((start[d] + count[d]) % chunk[d] == 0 || start[d] + count[d] == shape[d]);
    }
    int32_t *mine = malloc(cells(count) * sizeof *mine + 1);
    CHECK(mine != NULL);
    block_values(mine, start, count, 1);
    CHECK_OK(zarr_mpi_write_block(MPI_COMM_WORLD, a, start, count, mine, cells(count) * sizeof *mine));
    free(mine);

    /* The next rank's block, as written by that rank. */
    uint64_t ostart[3], ocount[3];
    CHECK_OK(zarr_mpi_decompose_shape((const uint64_t *)shape, (const uint64_t *)chunk, 3, size, (me + 1) % size,
                                      NULL, NULL, ostart, ocount, NULL));
    int32_t *other = malloc(cells(ocount) * sizeof *other + 1);
    CHECK(other != NULL);
    CHECK_OK(zarr_mpi_read_block(MPI_COMM_WORLD, a, ostart, ocount, other, cells(ocount) * sizeof *other));
    CHECK(block_values(other, ostart, ocount, 0) == 0);
    free(other);

    /* The block two ranks on, converted to float64 by the hyperslab read. */
    CHECK_OK(zarr_mpi_decompose_shape((const uint64_t *)shape, (const uint64_t *)chunk, 3, size, (me + 2) % size,
                                      NULL, NULL, ostart, ocount, NULL));
    double *f = malloc(cells(ocount) * sizeof *f + 1);
    CHECK(f != NULL);
    CHECK_OK(zarr_mpi_read_hyperslab(MPI_COMM_WORLD, a, ostart, ocount, NULL, NULL, ZARR_FLOAT64, f,
                                     cells(ocount) * sizeof *f));
    size_t n = 0;
    for (uint64_t i = 0; i < ocount[0]; i++) {
        for (uint64_t j = 0; j < ocount[1]; j++) {
            for (uint64_t k = 0; k < ocount[2]; k++, n++) {
                CHECK(f[n] == (double)value(ostart[0] + i, ostart[1] + j, ostart[2] + k));
            }
        }
    }
    free(f);
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));

    /* The whole array, reopened read-only: every cell written (none left at the fill value -1). */
    CHECK_OK(zarr_mpi_open(MPI_COMM_WORLD, path, ZARR_READ, &a));
    uint64_t zero[3] = {0, 0, 0}, all[3] = {shape[0], shape[1], shape[2]};
    int32_t *whole = malloc(cells(all) * sizeof *whole);
    CHECK(whole != NULL);
    CHECK_OK(zarr_mpi_read_block(MPI_COMM_WORLD, a, zero, all, whole, cells(all) * sizeof *whole));
    CHECK(block_values(whole, zero, all, 0) == 0);
    free(whole);
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));
    if (me == 0) {
        printf("%s: %d ranks, grid %dx%dx%d, every cell checked\n", name, size, grid[0], grid[1], grid[2]);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    static const unsigned long long shard[3] = {10, 15, 10}, inner[3] = {5, 5, 5}, chunk[3] = {10, 8, 5};
    run("sharded", shard, inner);
    run("unsharded", chunk, NULL);
    MPI_Finalize();
    return 0;
}
