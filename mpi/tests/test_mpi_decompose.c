/* mpi.decompose: zarr_mpi_decompose_shape() over many shapes, units, process counts and grids, checked by
 * brute force: the blocks cover every cell exactly once, are unit-aligned and balanced to one unit when
 * the helper says nothing is shared, and "shared" is reported exactly when some unit is covered by two
 * blocks. Also the argument errors. A pure function: no mpirun needed (MPI is not initialised). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zarr_mpi.h"

static int failures;
#define EXPECT(cond)                                                                                         \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                                      \
            failures++;                                                                                      \
        }                                                                                                    \
    } while (0)

/* Decomposes a (rank <= 3) shape for nprocs and checks it all; returns the grid's sharing flag. */
static int check(size_t rank, const uint64_t *shape, const uint64_t *unit, int nprocs, const int *dims) {
    uint64_t n = 1, units = 1;
    for (size_t d = 0; d < rank; d++) {
        n *= shape[d];
    }
    unsigned char *owner_count = calloc(n ? n : 1, 1);
    int *unit_owner = NULL;
    uint64_t ushape[3] = {1, 1, 1};
    for (size_t d = 0; d < rank; d++) {
        ushape[d] = (shape[d] + unit[d] - 1) / unit[d];
        units *= ushape[d];
    }
    unit_owner = malloc((units ? units : 1) * sizeof *unit_owner);
    for (uint64_t u = 0; u < units; u++) {
        unit_owner[u] = -1;
    }
    int shared_seen = 0, shared_flag = -1;
    uint64_t min_units[3] = {UINT64_MAX, UINT64_MAX, UINT64_MAX}, max_units[3] = {0, 0, 0};
    int grid[3];
    for (int p = 0; p < nprocs; p++) {
        uint64_t start[3], count[3];
        int shared = -1;
        if (zarr_mpi_decompose_shape(shape, unit, rank, nprocs, p, dims, grid, start, count, &shared) != ZARR_OK) {
            fprintf(stderr, "decompose failed: %s\n", zarr_mpi_last_error());
            failures++;
            free(owner_count);
            free(unit_owner);
            return -1;
        }
        EXPECT(shared_flag == -1 || shared == shared_flag);   /* the same answer for every block */
        shared_flag = shared;
        int prod = 1;
        for (size_t d = 0; d < rank; d++) {
            prod *= grid[d];
            if (dims != NULL && dims[d] > 0) {
                EXPECT(grid[d] == dims[d]);
            }
            EXPECT(start[d] + count[d] <= shape[d]);
        }
        EXPECT(prod == nprocs);
        /* Cells of this block. */
        uint64_t idx[3] = {0, 0, 0}, cnt = 1;
        for (size_t d = 0; d < rank; d++) {
            cnt *= count[d];
        }
        for (uint64_t k = 0; k < cnt; k++) {
            uint64_t rem = k, flat = 0, uflat = 0;
            for (size_t d = rank; d-- > 0;) {
                idx[d] = start[d] + rem % count[d];
                rem /= count[d];
            }
            for (size_t d = 0; d < rank; d++) {
                flat = flat * shape[d] + idx[d];
                uflat = uflat * ushape[d] + idx[d] / unit[d];
            }
            owner_count[flat]++;
            if (unit_owner[uflat] != -1 && unit_owner[uflat] != p) {
                shared_seen = 1;
            }
            unit_owner[uflat] = p;
        }
        if (!shared && cnt > 0) {
            for (size_t d = 0; d < rank; d++) {
                EXPECT(start[d] % unit[d] == 0);
                EXPECT((start[d] + count[d]) % unit[d] == 0 || start[d] + count[d] == shape[d]);
                uint64_t u = (count[d] + unit[d] - 1) / unit[d];
                min_units[d] = u < min_units[d] ? u : min_units[d];
                max_units[d] = u > max_units[d] ? u : max_units[d];
            }
        }
    }
    for (uint64_t k = 0; k < n; k++) {
        EXPECT(owner_count[k] == 1);   /* every cell exactly once */
        if (owner_count[k] != 1) {
            break;
        }
    }
    EXPECT(shared_flag == shared_seen);
    if (!shared_flag) {
        for (size_t d = 0; d < rank; d++) {
            EXPECT(min_units[d] == UINT64_MAX || max_units[d] - min_units[d] <= 1);   /* balanced */
        }
    }
    free(owner_count);
    free(unit_owner);
    return shared_flag;
}

int main(void) {
    int cases = 0;
    /* Automatic grids: every combination below. */
    static const uint64_t shapes[][3] = {{60, 30, 10}, {7, 5, 3}, {100, 1, 64}, {16, 16, 16}, {1, 1, 1}, {33, 65, 2}};
    static const uint64_t units[][3] = {{10, 15, 10}, {1, 1, 1}, {4, 4, 4}, {16, 16, 16}, {3, 7, 2}, {10, 8, 5}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
            for (size_t rank = 1; rank <= 3; rank++) {
                for (int np = 1; np <= 12; np++) {
                    check(rank, shapes[s], units[u], np, NULL);
                    cases++;
                }
            }
        }
    }
    /* Known answers. 60x30x10 in 10x15x10 shards: 6x2x1 units. */
    uint64_t shape[3] = {60, 30, 10}, shard[3] = {10, 15, 10}, start[3], count[3];
    int grid[3], shared;
    EXPECT(check(3, shape, shard, 4, NULL) == 0);
    EXPECT(zarr_mpi_decompose_shape(shape, shard, 3, 4, 1, NULL, grid, start, count, &shared) == ZARR_OK);
    EXPECT(grid[0] == 4 && grid[1] == 1 && grid[2] == 1);
    EXPECT(start[0] == 10 && count[0] == 20 && start[1] == 0 && count[1] == 30);   /* units 1, 2, 1, 2 */
    EXPECT(check(3, shape, shard, 12, NULL) == 0);                                  /* 6 x 2 x 1 */
    EXPECT(zarr_mpi_decompose_shape(shape, shard, 3, 12, 11, NULL, grid, start, count, NULL) == ZARR_OK);
    EXPECT(grid[0] == 6 && grid[1] == 2 && grid[2] == 1 && start[0] == 50 && start[1] == 15);
    /* Forced grids: 1 x 4 x 1 cannot follow 2 units along dimension 1 -> shared; 2 x 2 x 1 can. */
    int forced[3] = {1, 4, 1}, aligned[3] = {2, 2, 0}, partial[3] = {3, 0, 0};
    EXPECT(check(3, shape, shard, 4, forced) == 1);
    EXPECT(check(3, shape, shard, 4, aligned) == 0);
    EXPECT(check(3, shape, shard, 12, partial) == 1);   /* 3 fixed; 4 more blocks over 2 x 1 units must share */
    EXPECT(check(3, shape, shard, 6, partial) == 0);    /* 3 fixed; the other 2 along dimension 1 */
    EXPECT(zarr_mpi_decompose_shape(shape, shard, 3, 12, 0, partial, grid, start, count, NULL) == ZARR_OK);
    EXPECT(grid[0] == 3 && grid[1] * grid[2] == 4);
    cases += 6;
    /* Errors. */
    int bad_dims[3] = {5, 0, 0}, neg[3] = {-1, 0, 0}, over[3] = {2, 2, 2};
    uint64_t zero_unit[3] = {10, 0, 10};
    EXPECT(zarr_mpi_decompose_shape(shape, shard, 3, 4, 0, bad_dims, grid, start, count, NULL) ==
           ZARR_ERR_INVALID_ARGUMENT);
    EXPECT(strstr(zarr_mpi_last_error(), "does not fit") != NULL);
    EXPECT(zarr_mpi_decompose_shape(shape, shard, 3, 4, 0, neg, grid, start, count, NULL) == ZARR_ERR_INVALID_ARGUMENT);
    EXPECT(zarr_mpi_decompose_shape(shape, shard, 3, 4, 0, over, grid, start, count, NULL) == ZARR_ERR_INVALID_ARGUMENT);
    EXPECT(zarr_mpi_decompose_shape(shape, zero_unit, 3, 4, 0, NULL, grid, start, count, NULL) ==
           ZARR_ERR_INVALID_ARGUMENT);
    EXPECT(zarr_mpi_decompose_shape(shape, shard, 3, 4, 4, NULL, grid, start, count, NULL) == ZARR_ERR_INVALID_ARGUMENT);
    EXPECT(zarr_mpi_decompose_shape(shape, shard, 3, 0, 0, NULL, grid, start, count, NULL) == ZARR_ERR_INVALID_ARGUMENT);
    EXPECT(zarr_mpi_decompose_shape(shape, shard, 0, 4, 0, NULL, grid, start, count, NULL) == ZARR_ERR_INVALID_ARGUMENT);
    EXPECT(zarr_mpi_decompose_shape(NULL, shard, 3, 4, 0, NULL, grid, start, count, NULL) == ZARR_ERR_INVALID_ARGUMENT);
    EXPECT(zarr_mpi_decompose_shape(shape, shard, 3, 4, 0, NULL, grid, NULL, count, NULL) == ZARR_ERR_INVALID_ARGUMENT);
    printf("decompose: %d decompositions checked cell by cell, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}
