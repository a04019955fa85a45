/* mpi.errors_np<N>: a failure on one rank (a bad argument on that rank alone, a failed write, a missing
 * array) is reported on EVERY rank with the same status and the failing rank's message, and no rank hangs
 * (CTest's TIMEOUT catches a hang). Run with at least 2 ranks. */
#include <stdint.h>

#include "mpi_test_util.h"

static char path_a[1024], meta[2048];

/* Every rank got `expected` and a message naming rank `who` and containing `text`. */
static void expect(zarr_status st, zarr_status expected, int who, const char *text) {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "rank %d of %d: ", who, size);
    if (st != expected || strncmp(zarr_mpi_last_error(), prefix, strlen(prefix)) != 0 ||
        strstr(zarr_mpi_last_error(), text) == NULL) {
        fprintf(stderr, "rank %d: got %s, expected %s from rank %d with \"%s\"; message: %s\n", test_rank(),
                zarr_status_name(st), zarr_status_name(expected), who, text, zarr_mpi_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    int last = size - 1;
    static const unsigned long long shape[2] = {16, 12}, chunk[2] = {4, 12};
    test_metadata(meta, 2, shape, chunk, NULL);
    snprintf(path_a, sizeof path_a, "%s/a.zarr", test_dir());
    zarr_array *a = (zarr_array *)&a;   /* not NULL: the calls must set it to NULL on failure */

    /* 1. create: NULL metadata on the last rank only. Nothing is created. */
    expect(zarr_mpi_create(MPI_COMM_WORLD, path_a, me == last ? NULL : meta, &a), ZARR_ERR_INVALID_ARGUMENT,
           last, "metadata_json is NULL");
    CHECK(a == NULL);
    zarr_node_type node = 0;
    CHECK(zarr_node_type_at(path_a, &node) == ZARR_ERR_NOT_FOUND);

    /* 2. create: a different path on rank 1 (the lowest rank that sees the difference reports it). */
    char other[1100];
    snprintf(other, sizeof other, "%s/b.zarr", test_dir());
    zarr_status st = zarr_mpi_create(MPI_COMM_WORLD, me == 1 ? other : path_a, meta, &a);
    expect(st, ZARR_ERR_INVALID_ARGUMENT, 0, "path differs between ranks");
    expect(st, ZARR_ERR_INVALID_ARGUMENT, 0, "rank 1's"); /* the message names the odd rank */
    CHECK(a == NULL);

    /* 3. create works; creating again fails on rank 0 (it exists) and every rank learns it. */
    CHECK_OK(zarr_mpi_create(MPI_COMM_WORLD, path_a, meta, &a));
    zarr_array *b = NULL;
    expect(zarr_mpi_create(MPI_COMM_WORLD, path_a, meta, &b), ZARR_ERR_EXISTS, 0, "zarr_create");
    CHECK(b == NULL);

    /* 4. open: a missing array; then a bad mode on the last rank only. */
    char missing[1100];
    snprintf(missing, sizeof missing, "%s/missing.zarr", test_dir());
    expect(zarr_mpi_open(MPI_COMM_WORLD, missing, ZARR_READ, &b), ZARR_ERR_NOT_FOUND, 0, "zarr_open");
    expect(zarr_mpi_open(MPI_COMM_WORLD, path_a, me == last ? 42 : ZARR_READ, &b), ZARR_ERR_INVALID_ARGUMENT,
           last, "mode 42");
    CHECK(b == NULL);

    /* 5. write_block: rank 1's block lies outside the array. The other ranks' rows are stored, rank 1's
          are not (a failed write changes nothing). Rows 4*r .. 4*r+3 belong to rank r (ranks 0..3). */
    int32_t rows[4 * 12];
    uint64_t start[2] = {(uint64_t)(4 * (me % 4)), 0}, count[2] = {4, 12};
    for (int i = 0; i < 4 * 12; i++) {
        rows[i] = 1000 * me + i;
    }
    if (me == 1) {
        start[1] = 5;   /* 5 + 12 > 12 */
    }
    if (me >= 4) {
        count[0] = 0;   /* ranks beyond the 4th take part with an empty block */
    }
    expect(zarr_mpi_write_block(MPI_COMM_WORLD, a, start, count, rows, count[0] ? sizeof rows : 0),
           ZARR_ERR_OUT_OF_BOUNDS, 1, "zarr_write_region");
    int32_t all[16 * 12];
    uint64_t zero[2] = {0, 0}, whole[2] = {16, 12};
    CHECK_OK(zarr_mpi_read_block(MPI_COMM_WORLD, a, zero, whole, all, sizeof all));
    for (int r = 0; r < 4; r++) {
        for (int i = 0; i < 4 * 12; i++) {
            int32_t want = r == 1 || r >= size ? -1 : 1000 * r + i;
            CHECK(all[r * 4 * 12 + i] == want);
        }
    }

    /* 6. read_block: a wrong buffer size on rank 0 only. */
    expect(zarr_mpi_read_block(MPI_COMM_WORLD, a, zero, whole, all, me == 0 ? sizeof all - 1 : sizeof all),
           ZARR_ERR_BUFFER_SIZE, 0, "zarr_read_region");

    /* 7. resize: a different shape on the last rank; then a real resize that every rank sees. */
    uint64_t bigger[2] = {20, 12}, odd[2] = {24, 12};
    expect(zarr_mpi_resize(MPI_COMM_WORLD, path_a, &a, me == last ? odd : bigger, 2), ZARR_ERR_INVALID_ARGUMENT,
           0, "differs between ranks");
    {
        char odd_rank[32];
        snprintf(odd_rank, sizeof odd_rank, "rank %d's", last);
        expect(ZARR_ERR_INVALID_ARGUMENT, ZARR_ERR_INVALID_ARGUMENT, 0, odd_rank);
    }
    CHECK(a != NULL);
    CHECK_OK(zarr_mpi_resize(MPI_COMM_WORLD, path_a, &a, bigger, 2));
    uint64_t now[2];
    CHECK_OK(zarr_array_shape(a, now, 2));
    CHECK(now[0] == 20 && now[1] == 12);

    /* 8. decompose: a fixed grid that does not fit the number of ranks fails locally (every rank alike). */
    int dims[2] = {size + 1, 1};
    uint64_t s2[2], c2[2];
    CHECK(zarr_mpi_decompose(MPI_COMM_WORLD, a, dims, NULL, s2, c2, NULL) == ZARR_ERR_INVALID_ARGUMENT);
    CHECK(strstr(zarr_mpi_last_error(), "does not fit") != NULL);

    /* 9. agree on a caller's own status: a failure of a plain libzarr call on the last rank. */
    zarr_array *c = NULL;
    zarr_status local = me == last ? zarr_open(missing, ZARR_READ, &c) : ZARR_OK;
    expect(zarr_mpi_agree(MPI_COMM_WORLD, local), ZARR_ERR_NOT_FOUND, last, "missing.zarr");

    /* 10. sequence numbers. On a duplicate of the communicator (its own counts), the last rank makes an
           extra zarr_mpi_read_all where the others make the first of two zarr_mpi_write_all: different
           calls, an error on every rank. The last rank's own write then pairs with the others' second:
           the same kind of call, but out of step (its 1st against their 2nd), an error on every rank
           too, and nothing is written (an op id alone would have paired them). */
    MPI_Comm dup = MPI_COMM_NULL;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS);
    int32_t before[20 * 12], after[20 * 12], mine[4 * 12];
    uint64_t rows20[2] = {20, 12}, s3[2] = {(uint64_t)(4 * (me % 5)), 0}, c3[2] = {me < 5 ? 4 : 0, 12};
    for (int i = 0; i < 4 * 12; i++) {
        mine[i] = 7000 + 100 * me + i;
    }
    size_t mine_size = c3[0] ? sizeof mine : 0;
    CHECK_OK(zarr_mpi_read_block(MPI_COMM_WORLD, a, zero, rows20, before, sizeof before));
    st = me == last ? zarr_mpi_read_all(dup, a, s3, c3, NULL, NULL, ZARR_INT32, mine, mine_size)
                    : zarr_mpi_write_all(dup, a, s3, c3, NULL, NULL, ZARR_INT32, mine, mine_size);
    expect(st, ZARR_ERR_INVALID_ARGUMENT, 0, "ranks are in different collective calls");
    expect(st, ZARR_ERR_INVALID_ARGUMENT, 0, "zarr_mpi_read_all on rank");
    st = zarr_mpi_write_all(dup, a, s3, c3, NULL, NULL, ZARR_INT32, mine, mine_size);
    {
        char behind[96];
        snprintf(behind, sizeof behind, "rank %d is in its 1st zarr_mpi_write_all on this communicator", last);
        expect(st, ZARR_ERR_INVALID_ARGUMENT, 0, "ranks are out of step");
        expect(st, ZARR_ERR_INVALID_ARGUMENT, 0, behind);
        expect(st, ZARR_ERR_INVALID_ARGUMENT, 0, "in its 2nd");
    }
    CHECK_OK(zarr_mpi_read_block(MPI_COMM_WORLD, a, zero, rows20, after, sizeof after));
    CHECK(memcmp(before, after, sizeof before) == 0);
    /* The difference stays: a third write is refused as well (the last rank's 2nd against the 3rd). */
    expect(zarr_mpi_write_all(dup, a, s3, c3, NULL, NULL, ZARR_INT32, mine, mine_size), ZARR_ERR_INVALID_ARGUMENT,
           0, "out of step");
    CHECK_OK(zarr_mpi_read_block(MPI_COMM_WORLD, a, zero, rows20, after, sizeof after));
    CHECK(memcmp(before, after, sizeof before) == 0);
    MPI_Comm_free(&dup);
    /* The world communicator was not disturbed: collective writes there work. */
    CHECK_OK(zarr_mpi_write_all(MPI_COMM_WORLD, a, s3, c3, NULL, NULL, ZARR_INT32, mine, mine_size));
    CHECK_OK(zarr_mpi_read_block(MPI_COMM_WORLD, a, zero, rows20, after, sizeof after));
    for (int r = 0; r < 5 && r < size; r++) {
        CHECK(after[r * 4 * 12] == 7000 + 100 * r);
    }

    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));
    if (me == 0) {
        printf("errors: %d ranks, every failure reported on every rank\n", size);
    }
    MPI_Finalize();
    return 0;
}
