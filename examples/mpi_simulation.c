/* A domain-decomposed simulation writing its time steps with libzarr_mpi, as an MPI code would:
 *
 *   mpiexec -n 4 ./example_mpi_simulation      (any number of ranks; writes simulation.zarr here, or in
 *                                                $ZARR_TEST_TMPDIR when set)
 *
 * Runs again as often as wanted: rank 0 first deletes the simulation.zarr of an earlier run (a directory
 * holding an array's zarr.json, nothing else is touched) and says so, then the ranks create it afresh.
 *
 * The field u[t, y, x] (float64, NY x NX cells) is split into one subdomain per rank by
 * zarr_mpi_decompose_shape(), aligned to the shards' extent in y and x so that no two ranks ever write
 * the same shard (no locking). Each rank holds its subdomain with a one-cell halo, as a stencil code
 * does, and writes the interior straight from that array (zarr_mpi_write_hyperslab with strides: no
 * copy). Every step appends one time step: zarr_mpi_resize (rank 0 rewrites the metadata once), then the
 * collective write. At the end every rank reads back the whole history of a neighbour's subdomain and
 * rank 0 checks the whole array. u = t*1e6 + y*1000 + x + 0.25 (exact in float64: the interop test
 * compares it with numpy cell for cell). */
#define _XOPEN_SOURCE 700   /* nftw() */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zarr_mpi.h>

#define NY 48
#define NX 40
#define STEPS 6

static double value(uint64_t t, uint64_t y, uint64_t x) { return (double)t * 1e6 + (double)y * 1000.0 + (double)x + 0.25; }

/* Stops every rank: a failed collective call failed on every rank with the same message. */
static void check(zarr_status st, const char *what) {
    if (st != ZARR_OK) {
        int me = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        fprintf(stderr, "rank %d: %s: %s\n", me, what, zarr_mpi_last_error());
        MPI_Finalize();
        exit(1);
    }
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* Deletes the array an earlier run left at `path`: only a directory with a zarr.json in it (so a
   mistyped path never deletes anything else). Returns 1 when something was deleted, -1 on failure. */
static int remove_earlier_run(const char *path) {
    char meta[1100];
    struct stat sb;
    snprintf(meta, sizeof meta, "%s/zarr.json", path);
    if (stat(path, &sb) != 0) return 0;
    if (!S_ISDIR(sb.st_mode) || stat(meta, &sb) != 0) {
        fprintf(stderr, "%s exists but is not a Zarr array: not deleting it\n", path);
        return -1;
    }
    return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 1 : -1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = getenv("ZARR_TEST_TMPDIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/simulation.zarr", dir != NULL && *dir ? dir : ".");

    /* The output of an earlier run goes first (rank 0 deletes it; the others wait for the outcome). */
    int removed = 0;
    if (me == 0) removed = remove_earlier_run(path);
    check(zarr_mpi_agree_message(MPI_COMM_WORLD, removed < 0 ? ZARR_ERR_IO : ZARR_OK,
                                 "cannot delete the simulation.zarr of an earlier run"),
          "clean up");
    if (removed > 0) printf("deleted %s of an earlier run\n", path);

    /* The array: no time steps yet; shards of 1 step x 8 x 10 cells (6 x 4 shards per step), inner chunks
       of 1 x 4 x 5. Every rank builds the same spec (zarr_mpi_create_from_spec checks that). */
    const uint64_t shape[3] = {0, NY, NX}, shards[3] = {1, 8, 10}, chunks[3] = {1, 4, 5};
    const char *names[3] = {"t", "y", "x"};
    zarr_array_spec *spec = NULL;
    zarr_status st = zarr_array_spec_new(ZARR_FLOAT64, 3, shape, &spec);
    if (st == ZARR_OK) st = zarr_array_spec_set_chunks(spec, chunks, 3);
    if (st == ZARR_OK) st = zarr_array_spec_set_shards(spec, shards, 3);
    if (st == ZARR_OK) st = zarr_array_spec_set_dimension_names(spec, names, 3);
    check(zarr_mpi_agree(MPI_COMM_WORLD, st), "spec");
    zarr_array *u = NULL;
    check(zarr_mpi_create_from_spec(MPI_COMM_WORLD, path, spec, &u), "create");
    zarr_array_spec_free(spec);

    /* This rank's subdomain: shard-aligned in y and x. */
    uint64_t sub_start[2], sub_count[2];
    int grid[2], shared = 0;
    const uint64_t plane[2] = {NY, NX}, unit[2] = {shards[1], shards[2]};
    check(zarr_mpi_decompose_shape(plane, unit, 2, size, me, NULL, grid, sub_start, sub_count, &shared),
          "decompose");
    const uint64_t cy = sub_count[0], cx = sub_count[1], row = cx + 2;
    double *local = calloc((cy + 2) * row, sizeof *local);   /* with a one-cell halo */
    if (local == NULL) check(ZARR_ERR_INTERNAL, "out of memory");

    for (uint64_t t = 0; t < STEPS; t++) {
        /* "Compute" the step in the interior (the halo would come from the neighbours). */
        for (uint64_t y = 0; y < cy; y++)
            for (uint64_t x = 0; x < cx; x++)
                local[(y + 1) * row + x + 1] = value(t, sub_start[0] + y, sub_start[1] + x);
        /* Append the time step, then write the interior: strides skip the halo. */
        const uint64_t grown[3] = {t + 1, NY, NX};
        check(zarr_mpi_resize(MPI_COMM_WORLD, path, &u, grown, 3), "resize");
        const uint64_t start[3] = {t, sub_start[0], sub_start[1]}, count[3] = {1, cy, cx};
        const int64_t stride[3] = {0, (int64_t)row, 1};
        size_t span = cy && cx ? (size_t)((cy - 1) * row + cx) * sizeof(double) : 0;
        check(zarr_mpi_write_hyperslab(MPI_COMM_WORLD, u, start, count, NULL, stride, ZARR_FLOAT64,
                                       local + row + 1, span),
              "write step");
    }
    free(local);

    /* A neighbour's subdomain, all steps: what another rank wrote. */
    uint64_t nstart[2], ncount[2];
    check(zarr_mpi_decompose_shape(plane, unit, 2, size, (me + 1) % size, NULL, NULL, nstart, ncount, NULL),
          "decompose");
    const uint64_t rstart[3] = {0, nstart[0], nstart[1]}, rcount[3] = {STEPS, ncount[0], ncount[1]};
    double *back = malloc((size_t)(STEPS * ncount[0] * ncount[1]) * sizeof *back + 1);
    if (back == NULL) check(ZARR_ERR_INTERNAL, "out of memory");
    check(zarr_mpi_read_block(MPI_COMM_WORLD, u, rstart, rcount, back,
                              (size_t)(STEPS * ncount[0] * ncount[1]) * sizeof *back),
          "read neighbour");
    long wrong = 0;
    for (uint64_t t = 0, n = 0; t < STEPS; t++)
        for (uint64_t y = 0; y < ncount[0]; y++)
            for (uint64_t x = 0; x < ncount[1]; x++, n++)
                wrong += back[n] != value(t, nstart[0] + y, nstart[1] + x);
    free(back);
    long total_wrong = 0;
    MPI_Allreduce(&wrong, &total_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    check(zarr_mpi_close(MPI_COMM_WORLD, u), "close");

    /* Rank 0: the whole array, opened on its own (plain libzarr). */
    if (me == 0) {
        static double all[STEPS][NY][NX];
        zarr_array *a = NULL;
        uint64_t got[3], zero[3] = {0, 0, 0}, full[3] = {STEPS, NY, NX};
        if (zarr_open(path, ZARR_READ, &a) != ZARR_OK || zarr_array_shape(a, got, 3) != ZARR_OK ||
            got[0] != STEPS || zarr_read_region(a, zero, full, all, sizeof all) != ZARR_OK) {
            fprintf(stderr, "reading %s back: %s\n", path, zarr_last_error());
            total_wrong++;
        } else {
            for (uint64_t t = 0; t < STEPS; t++)
                for (uint64_t y = 0; y < NY; y++)
                    for (uint64_t x = 0; x < NX; x++)
                        total_wrong += all[t][y][x] != value(t, y, x);
        }
        zarr_close(a);
        printf("%d ranks (grid %d x %d, shards shared: %s), %d steps of %d x %d: %ld wrong cells\n", size, grid[0],
               grid[1], shared ? "yes" : "no", STEPS, NY, NX, total_wrong);
    }
    MPI_Bcast(&total_wrong, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return total_wrong == 0 ? 0 : 1;
}
