/* zarr_mpi_create_from_spec(): every rank builds the same spec (float32 (44, 36), chunks (10, 12),
 * gzip, fill value -7.5, dimension names, attributes, Zarr v2 for the second array), the ranks create
 * the array collectively and write their blocks of cell (i, j) = i * 100 + j + 0.5 in the first 40 of the
 * 44 rows; the last 4 rows are left unwritten (fill value). mpi_check.py
 * create_from_spec compares both with numpy through zarr-python (test mpi.create_from_spec_np3_interop).
 * Also: specs that differ between ranks fail on every rank and create nothing; a second creation at the
 * same path fails with ZARR_ERR_EXISTS on every rank; a NULL spec on one rank fails every rank. */
#include <math.h>
#include <sys/stat.h>

#include "mpi_test_util.h"

static zarr_array_spec *make_spec(int zarr_format, double fill) {
    uint64_t shape[2] = {44, 36}, chunks[2] = {10, 12};
    zarr_array_spec *s = NULL;
    CHECK_OK(zarr_array_spec_new(ZARR_FLOAT32, 2, shape, &s));
    CHECK_OK(zarr_array_spec_set_chunks(s, chunks, 2));
    CHECK_OK(zarr_array_spec_set_compressor(s, "gzip", 5));
    float f = (float)fill;
    CHECK_OK(zarr_array_spec_set_fill_value(s, &f, sizeof f));
    const char *names[2] = {"y", "x"};
    CHECK_OK(zarr_array_spec_set_dimension_names(s, names, 2));
    CHECK_OK(zarr_array_spec_set_attributes(s, "{\"title\": \"zarr_mpi_create_from_spec\"}"));
    CHECK_OK(zarr_array_spec_set_zarr_format(s, zarr_format));
    return s;
}

/* Writes this rank's block of the first 40 rows, cell (i, j) = i * 100 + j + 0.5. */
static void write_blocks(zarr_array *a) {
    uint64_t start[2], count[2];
    CHECK_OK(zarr_mpi_decompose(MPI_COMM_WORLD, a, NULL, NULL, start, count, NULL));
    if (start[0] + count[0] > 40) {   /* the last 4 rows stay unwritten */
        count[0] = start[0] >= 40 ? 0 : 40 - start[0];
    }
    size_t n = (size_t)(count[0] * count[1]);
    float *buf = malloc((n ? n : 1) * sizeof *buf);
    CHECK(buf != NULL);
    for (uint64_t i = 0; i < count[0]; i++) {
        for (uint64_t j = 0; j < count[1]; j++) {
            buf[i * count[1] + j] = (float)((start[0] + i) * 100 + start[1] + j) + 0.5f;
        }
    }
    CHECK_OK(zarr_mpi_write_block(MPI_COMM_WORLD, a, start, count, buf, n * sizeof *buf));
    free(buf);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me = test_rank(), size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char v3[1024], v2[1024], bad[1024];
    snprintf(v3, sizeof v3, "%s/spec_v3.zarr", test_dir());
    snprintf(v2, sizeof v2, "%s/spec_v2.zarr", test_dir());
    snprintf(bad, sizeof bad, "%s/differing.zarr", test_dir());

    for (int fmt = 3; fmt >= 2; fmt--) {
        zarr_array_spec *spec = make_spec(fmt, -7.5);
        zarr_array *a = NULL;
        CHECK_OK(zarr_mpi_create_from_spec(MPI_COMM_WORLD, fmt == 3 ? v3 : v2, spec, &a));
        zarr_array_spec_free(spec);   /* the handle does not need the spec */
        int got_fmt = 0;
        CHECK_OK(zarr_array_zarr_format(a, &got_fmt));
        CHECK(got_fmt == fmt);
        write_blocks(a);
        /* every rank reads back another rank's cell and an unwritten one */
        uint64_t st[2] = {(uint64_t)(37 - me), (uint64_t)(5 + me)}, one[2] = {1, 1};
        float v = 0;
        CHECK_OK(zarr_mpi_read_block(MPI_COMM_WORLD, a, st, one, &v, sizeof v));
        CHECK(v == (float)(st[0] * 100 + st[1]) + 0.5f);
        st[0] = 42;
        CHECK_OK(zarr_mpi_read_block(MPI_COMM_WORLD, a, st, one, &v, sizeof v));
        CHECK(v == -7.5f);
        CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));
    }

    /* Creating again where the array is: ZARR_ERR_EXISTS on every rank, with rank 0's message. */
    zarr_array_spec *spec = make_spec(3, -7.5);
    zarr_array *a = (zarr_array *)&a;   /* must be set to NULL */
    CHECK(zarr_mpi_create_from_spec(MPI_COMM_WORLD, v3, spec, &a) == ZARR_ERR_EXISTS);
    CHECK(a == NULL);
    CHECK(strstr(zarr_mpi_last_error(), "rank 0 of ") == zarr_mpi_last_error());
    CHECK(strstr(zarr_mpi_last_error(), "zarr_create_from_spec") != NULL);
    zarr_array_spec_free(spec);

    /* Specs that differ (the last rank's fill value): every rank fails, nothing is created. */
    spec = make_spec(3, me == size - 1 ? 1.0 : -7.5);
    CHECK(zarr_mpi_create_from_spec(MPI_COMM_WORLD, bad, spec, &a) == ZARR_ERR_INVALID_ARGUMENT);
    CHECK(a == NULL);
    CHECK(strstr(zarr_mpi_last_error(), "differs between ranks") != NULL);
    struct stat sb;
    CHECK(stat(bad, &sb) != 0);
    /* A NULL spec on the last rank only: every rank fails with that rank's message. */
    CHECK(zarr_mpi_create_from_spec(MPI_COMM_WORLD, bad, me == size - 1 ? NULL : spec, &a) ==
          ZARR_ERR_INVALID_ARGUMENT);
    CHECK(strstr(zarr_mpi_last_error(), "spec is NULL") != NULL);
    CHECK(stat(bad, &sb) != 0);
    zarr_array_spec_free(spec);

    if (me == 0) {
        printf("zarr_mpi_create_from_spec: %d ranks passed\n", size);
    }
    MPI_Finalize();
    return 0;
}
