/* zarr_mpi_write_all / zarr_mpi_read_all at any rank count (run with 4, 16 and 64 ranks): uneven, empty,
 * strided and halo-bordered contributions, values checked cell by cell, and the scaling counts checked by
 * counting (an instrumented file system, io_counter.h, plus zarr_mpi_get_stats()):
 *   - one metadata read per collective open, at any rank count;
 *   - each shard stored exactly once per collective write, and not read where the ranks cover it;
 *   - no lock call on the collective path (the independent path takes some: the counter can fail);
 *   - element bytes sent over MPI at most the bytes written.
 * Then bad input: overlapping selections, a selection out of bounds, ranks in different calls, ranks
 * with different arrays, an owner whose store fails: every rank returns the same status and message,
 * and every shard holds its old or its new contents. zarr-python reads what was written
 * (mpi_check.py collective). */
#include "io_counter.h"
#include "mpi_test_util.h"

#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

static int me, np;
static uint64_t NY, NX;
static const uint64_t SY = 8, SX = 16; /* shard shape; inner chunks 4 x 8 */

static int32_t value(uint64_t i, uint64_t j, int gen) { return (int32_t)(gen * 1000000 + (int)i * 1000 + (int)j); }

static unsigned long long sum_ull(unsigned long long v) {
    unsigned long long s = 0;
    MPI_Allreduce(&v, &s, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

/* The same text on every rank. */
static int same_everywhere(const char *text) {
    unsigned long long h = 1469598103934665603ull, lo = 0, hi = 0;
    for (const char *p = text; *p; p++) {
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    }
    MPI_Allreduce(&h, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&h, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

/* Rows of rank q in the uneven split: ranks 0..np-2 share the rows with widths growing with q (a
   triangular split, not aligned to the shards); the last rank has none (np > 1). */
static void rows_of(int q, uint64_t *lo, uint64_t *hi) {
    if (np == 1) {
        *lo = 0, *hi = NY;
        return;
    }
    uint64_t n = (uint64_t)(np - 1), tri = n * (n + 1) / 2;
    uint64_t a = (uint64_t)q * ((uint64_t)q + 1) / 2, b = ((uint64_t)q + 1) * ((uint64_t)q + 2) / 2;
    *lo = q >= np - 1 ? NY : NY * a / tri;
    *hi = q >= np - 1 ? NY : NY * b / tri;
}

/* The number of shards, and of shards whose rows [r0, r1) leave part of them uncovered. */
static uint64_t nshards(void) { return ((NY + SY - 1) / SY) * ((NX + SX - 1) / SX); }

/* Writes rows [lo, hi) of generation `gen` from a local array with a halo of one cell all around. */
static zarr_status write_rows(zarr_array *a, uint64_t lo, uint64_t hi, int gen) {
    uint64_t rows = hi - lo, w = NX + 2;
    int32_t *local = malloc(sizeof(int32_t) * (rows + 2) * w);
    CHECK(local != NULL);
    for (uint64_t i = 0; i < rows + 2; i++) {
        for (uint64_t j = 0; j < w; j++) {
            /* the halo holds garbage that must not be written */
            local[i * w + j] = (i == 0 || i == rows + 1 || j == 0 || j == w - 1) ? -777 : value(lo + i - 1, j - 1, gen);
        }
    }
    uint64_t start[2] = {lo, 0}, count[2] = {rows, NX};
    int64_t stride[2] = {(int64_t)w, 1};
    size_t size = sizeof(int32_t) * ((rows + 2) * w - w - 1);
    zarr_status st = zarr_mpi_write_all(MPI_COMM_WORLD, a, start, count, NULL, stride, ZARR_INT32, local + w + 1, size);
    free(local);
    return st;
}

/* Reads columns of rank q (an even split; ranks beyond NX read nothing) into a column-major buffer and
   checks them against `expect(i, j)`. */
static void check_by_columns(zarr_array *a, int32_t (*expect)(uint64_t, uint64_t)) {
    uint64_t c0 = NX * (uint64_t)me / (uint64_t)np, c1 = NX * ((uint64_t)me + 1) / (uint64_t)np;
    uint64_t cols = c1 - c0;
    int32_t *b = malloc(sizeof(int32_t) * (NY * cols + 1));
    CHECK(b != NULL);
    uint64_t start[2] = {0, c0}, count[2] = {NY, cols};
    int64_t stride[2] = {1, (int64_t)NY}; /* Fortran order */
    CHECK_OK(zarr_mpi_read_all(MPI_COMM_WORLD, a, start, count, NULL, stride, ZARR_INT32, b, sizeof(int32_t) * NY * cols));
    for (uint64_t j = 0; j < cols; j++) {
        for (uint64_t i = 0; i < NY; i++) {
            if (b[j * NY + i] != expect(i, c0 + j)) {
                fprintf(stderr, "rank %d: cell (%llu, %llu) = %d, expected %d\n", me, (unsigned long long)i,
                        (unsigned long long)(c0 + j), b[j * NY + i], expect(i, c0 + j));
                CHECK(0);
            }
        }
    }
    free(b);
}

static int32_t gen1(uint64_t i, uint64_t j) { return value(i, j, 1); }
static int32_t gen2(uint64_t i, uint64_t j) { return value(i, j, 2); }
static int32_t gen3(uint64_t i, uint64_t j) { return i < 2 ? value(i, j, 3) : value(i, j, 2); }
static int32_t gen4(uint64_t i, uint64_t j) { return value(i, j, 4); }
static int32_t gen5(uint64_t i, uint64_t j) { return value(i, j, 5); }

typedef struct {
    unsigned long long metadata_reads, locks, stores;
    zarr_mpi_stats s;
} counts;

static void reset(void) {
    MPI_Barrier(MPI_COMM_WORLD);
    io_counter_reset();
    zarr_mpi_reset_stats();
}

/* Totals over all ranks. */
static counts totals(void) {
    counts c;
    zarr_mpi_stats s;
    CHECK_OK(zarr_mpi_get_stats(&s));
    c.metadata_reads = sum_ull(io_metadata_reads);
    c.locks = sum_ull(io_lock_calls);
    c.stores = sum_ull(io_stores);
    c.s.metadata_reads = sum_ull(s.metadata_reads);
    c.s.shards_written = sum_ull(s.shards_written);
    c.s.shards_read = sum_ull(s.shards_read);
    c.s.bytes_sent = sum_ull(s.bytes_sent);
    c.s.bytes_selected = sum_ull(s.bytes_selected);
    c.s.control_bytes_sent = sum_ull(s.control_bytes_sent);
    c.s.rounds = sum_ull(s.rounds);
    return c;
}

static void report(const char *what, counts c) {
    if (me == 0) {
        printf("np=%d %-34s zarr.json reads %llu, locks %llu, stores %llu (shards %llu), shards written %llu, "
               "read %llu, bytes sent %llu of %llu written, control %llu, rounds %llu\n",
               np, what, c.metadata_reads, c.locks, c.stores, (unsigned long long)nshards(),
               (unsigned long long)c.s.shards_written, (unsigned long long)c.s.shards_read,
               (unsigned long long)c.s.bytes_sent, (unsigned long long)c.s.bytes_selected,
               (unsigned long long)c.s.control_bytes_sent, (unsigned long long)c.s.rounds);
        fflush(stdout);
    }
}

/* Every rank failed alike: the same status (expected) and the same message, containing `needle`. */
static void check_failed_alike(zarr_status st, zarr_status expected, const char *needle) {
    if (st != expected || strstr(zarr_mpi_last_error(), needle) == NULL) {
        fprintf(stderr, "rank %d: got %s (%s), expected %s with \"%s\"\n", me, zarr_status_name(st),
                zarr_mpi_last_error(), zarr_status_name(expected), needle);
        CHECK(0);
    }
    CHECK(same_everywhere(zarr_mpi_last_error()));
    if (me == 0) {
        printf("np=%d   every rank: %s\n", np, zarr_mpi_last_error());
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    NY = 3 * (uint64_t)np + 5; /* never a multiple of the shard height */
    NX = 37;
    char dir[PATH_MAX], path[PATH_MAX + 64], other[PATH_MAX + 64], failing[PATH_MAX + 64], json[2048];
    CHECK(realpath(test_dir(), dir) != NULL);
    snprintf(path, sizeof path, "%s/collective.zarr", dir);
    snprintf(other, sizeof other, "%s/other.zarr", dir);
    snprintf(failing, sizeof failing, "%s/failing.zarr", dir);
    snprintf(io_counter_prefix, sizeof io_counter_prefix, "%s/", dir);
    unsigned long long shape[2] = {NY, NX}, shard[2] = {SY, SX}, inner[2] = {4, 8};
    test_metadata(json, 2, shape, shard, inner);
    uint64_t lo, hi;
    rows_of(me, &lo, &hi);

    /* 1. Create, then write generation 1 by uneven rows with halos (the last rank writes nothing). */
    zarr_array *a = NULL;
    CHECK_OK(zarr_mpi_create(MPI_COMM_WORLD, path, json, &a));
    reset();
    CHECK_OK(write_rows(a, lo, hi, 1));
    counts c = totals();
    report("write_all (uneven rows, halos)", c);
    CHECK(c.locks == 0);
    CHECK(c.metadata_reads == 0);
    CHECK(c.stores == nshards());
    CHECK(c.s.shards_written == nshards());
    CHECK(c.s.shards_read == 0); /* the ranks cover every shard together: nothing read */
    CHECK(c.s.bytes_sent <= c.s.bytes_selected);
    CHECK(c.s.bytes_selected == NY * NX * sizeof(int32_t));

    /* 2. Read by columns into column-major buffers: each shard read once. */
    reset();
    check_by_columns(a, gen1);
    c = totals();
    report("read_all (columns, Fortran order)", c);
    CHECK(c.s.shards_read == nshards());
    CHECK(c.locks == 0 && c.metadata_reads == 0 && c.stores == 0);
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));

    /* 3. Open once: one metadata read in the whole job. */
    reset();
    CHECK_OK(zarr_mpi_open(MPI_COMM_WORLD, path, ZARR_READ_WRITE, &a));
    c = totals();
    report("zarr_mpi_open", c);
    CHECK(c.metadata_reads == 1);
    CHECK(c.s.metadata_reads == 1);

    /* 4. Strided rows (rank q: rows q, q + np, ...): every shard gets pieces of many ranks. */
    reset();
    {
        uint64_t rows = NY > (uint64_t)me ? (NY - (uint64_t)me + (uint64_t)np - 1) / (uint64_t)np : 0;
        int32_t *b = malloc(sizeof(int32_t) * (rows * NX + 1));
        CHECK(b != NULL);
        for (uint64_t k = 0; k < rows; k++) {
            for (uint64_t j = 0; j < NX; j++) {
                b[k * NX + j] = value((uint64_t)me + k * (uint64_t)np, j, 2);
            }
        }
        uint64_t start[2] = {(uint64_t)me, 0}, count[2] = {rows, NX}, step[2] = {(uint64_t)np, 1};
        CHECK_OK(zarr_mpi_write_all(MPI_COMM_WORLD, a, start, count, step, NULL, ZARR_INT32, b,
                                    sizeof(int32_t) * rows * NX));
        free(b);
    }
    c = totals();
    report("write_all (strided rows)", c);
    CHECK(c.locks == 0 && c.metadata_reads == 0);
    CHECK(c.stores == nshards() && c.s.shards_written == nshards() && c.s.shards_read == 0);
    CHECK(c.s.bytes_sent <= c.s.bytes_selected);
    check_by_columns(a, gen2);

    if (argc > 1 && strcmp(argv[1], "counts") == 0) {
        /* The counts alone (the 64-rank run, where every collective step costs on 2 cores). */
        CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));
        if (me == 0) {
            printf("np=%d: collective counts checked (%llu x %llu int32, %llu shards)\n", np,
                   (unsigned long long)NY, (unsigned long long)NX, (unsigned long long)nshards());
        }
        MPI_Finalize();
        return 0;
    }

    /* 5. A write that covers shards in part (rows 0-1, all from rank 0): those shards are read once. */
    reset();
    CHECK_OK(write_rows(a, 0, me == 0 ? 2 : 0, 3));
    c = totals();
    report("write_all (part of the first shards)", c);
    uint64_t first_row_shards = (NX + SX - 1) / SX;
    CHECK(c.stores == first_row_shards && c.s.shards_written == first_row_shards);
    CHECK(c.s.shards_read == first_row_shards && c.locks == 0);
    check_by_columns(a, gen3);

    /* 6. Memory types: float64 in, int64 out (converted with the hyperslab rules). */
    {
        uint64_t rows = hi - lo;
        double *d = malloc(sizeof(double) * (rows * NX + 1));
        int64_t *e = malloc(sizeof(int64_t) * (rows * NX + 1));
        CHECK(d != NULL && e != NULL);
        for (uint64_t i = 0; i < rows; i++) {
            for (uint64_t j = 0; j < NX; j++) {
                d[i * NX + j] = (double)value(lo + i, j, 4);
            }
        }
        uint64_t start[2] = {lo, 0}, count[2] = {rows, NX};
        CHECK_OK(zarr_mpi_write_all(MPI_COMM_WORLD, a, start, count, NULL, NULL, ZARR_FLOAT64, d,
                                    sizeof(double) * rows * NX));
        CHECK_OK(zarr_mpi_read_all(MPI_COMM_WORLD, a, start, count, NULL, NULL, ZARR_INT64, e,
                                   sizeof(int64_t) * rows * NX));
        for (uint64_t i = 0; i < rows * NX; i++) {
            CHECK(e[i] == (int64_t)value(lo + i / NX, i % NX, 4));
        }
        free(d), free(e);
        check_by_columns(a, gen4);
    }

    /* 7. Small buffers: 2 aggregators, one shard per round each. */
    {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "cb_nodes", "2");
        char buf[32];
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)(SY * SX * sizeof(int32_t)));
        MPI_Info_set(info, "cb_buffer_size", buf);
        CHECK_OK(zarr_mpi_set_hints(info));
        MPI_Info_free(&info);
        reset();
        CHECK_OK(write_rows(a, lo, hi, 5));
        zarr_mpi_stats s;
        CHECK_OK(zarr_mpi_get_stats(&s));
        c = totals();
        report("write_all (cb_nodes 2, 1 shard/round)", c);
        /* 2 aggregators, one shard each per round: ceil(shards / 2) rounds, counted on every rank. */
        CHECK(s.rounds == (nshards() + 1) / 2);
        CHECK(c.stores == nshards() && c.locks == 0);
        check_by_columns(a, gen5);
        CHECK_OK(zarr_mpi_set_hints(MPI_INFO_NULL));
    }

    /* 8. Bad input: overlapping rows (rank 0 writes a row of rank np - 2). Nothing is written. */
    if (np > 2) {
        reset();
        uint64_t l2 = lo, h2 = hi;
        if (me == 0) {
            rows_of(np - 2, &l2, &h2); /* the first row of the last rank that writes, instead of its own */
            h2 = l2 + 1;
        }
        check_failed_alike(write_rows(a, l2, h2, 6), ZARR_ERR_INVALID_ARGUMENT, "overlap");
        c = totals();
        CHECK(c.stores == 0);
        check_by_columns(a, gen5);
    }
    /* A selection out of bounds on the last rank. */
    {
        uint64_t l2 = lo, h2 = hi;
        if (me == np - 1) {
            l2 = NY - 1, h2 = NY + 1;
        }
        check_failed_alike(write_rows(a, l2, h2, 6), ZARR_ERR_OUT_OF_BOUNDS, "beyond the array's extent");
    }
    /* Ranks in different calls: the last rank reads while the others write. On a duplicate of the
       communicator: once ranks made different calls, their counts of each kind differ for good (they may
       be out of step: a skipped or an added call looks alike), and every later call of those kinds there
       fails. */
    if (np > 1) {
        MPI_Comm odd = MPI_COMM_NULL;
        CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &odd) == MPI_SUCCESS);
        int32_t v = 0;
        uint64_t start[2] = {0, 0}, count[2] = {1, 1};
        zarr_status st = me == np - 1 ? zarr_mpi_read_all(odd, a, start, count, NULL, NULL, ZARR_INT32, &v, 4)
                                      : zarr_mpi_write_all(odd, a, start, count, NULL, NULL, ZARR_INT32, &v, 0);
        check_failed_alike(st, ZARR_ERR_INVALID_ARGUMENT, "different collective calls");
        /* The last rank closes while the others write: every rank fails (the handle stays open). */
        st = me == np - 1 ? zarr_mpi_close(odd, a)
                          : zarr_mpi_write_all(odd, a, start, count, NULL, NULL, ZARR_INT32, &v, 4);
        check_failed_alike(st, ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_close on rank");
        st = zarr_mpi_write_all(odd, a, start, count, NULL, NULL, ZARR_INT32, &v, 4);
        check_failed_alike(st, ZARR_ERR_INVALID_ARGUMENT, "ranks are out of step");
        MPI_Comm_free(&odd);
    }
    /* Ranks with different arrays: the last rank's has one more row. */
    if (np > 1) {
        unsigned long long shape2[2] = {NY + 1, NX};
        char json2[2048];
        test_metadata(json2, 2, shape2, shard, inner);
        zarr_array *b = NULL;
        CHECK_OK(zarr_mpi_create(MPI_COMM_WORLD, other, json2, &b));
        zarr_array *mine = me == np - 1 ? b : a;
        char expect[96];
        snprintf(expect, sizeof expect, "shape[0] differs between ranks: %llu on rank 0, %llu on rank %d",
                 (unsigned long long)NY, (unsigned long long)NY + 1, np - 1);
        check_failed_alike(write_rows(mine, 0, 0, 7), ZARR_ERR_INVALID_ARGUMENT, expect);
        CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, b));
    }

    /* 9. An owner whose store fails: shard (1, 1)'s key is a directory that cannot be replaced. Every
       rank gets the same error; every other shard holds generation 1 or 2 entirely. */
    {
        zarr_array *f = NULL;
        CHECK_OK(zarr_mpi_create(MPI_COMM_WORLD, failing, json, &f));
        CHECK_OK(write_rows(f, lo, hi, 1));
        if (me == 0) {
            char key[PATH_MAX + 96];
            snprintf(key, sizeof key, "%s/c/1/1", failing);
            CHECK(remove(key) == 0);
            CHECK(mkdir(key, 0755) == 0);
            snprintf(key, sizeof key, "%s/c/1/1/keep", failing);
            FILE *k = fopen(key, "w");
            CHECK(k != NULL);
            fclose(k);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        zarr_status st = write_rows(f, lo, hi, 2);
        CHECK(st != ZARR_OK);
        CHECK(strstr(zarr_mpi_last_error(), "storing shard") != NULL);
        CHECK(same_everywhere(zarr_mpi_last_error()));
        if (me == 0) {
            printf("np=%d   every rank: %s\n", np, zarr_mpi_last_error());
            /* Each readable shard: all generation 1 or all generation 2. */
            int32_t *all = malloc(sizeof(int32_t) * NY * NX);
            CHECK(all != NULL);
            uint64_t gy = (NY + SY - 1) / SY, gx = (NX + SX - 1) / SX;
            for (uint64_t sy = 0; sy < gy; sy++) {
                for (uint64_t sx = 0; sx < gx; sx++) {
                    if (sy == 1 && sx == 1) {
                        continue;
                    }
                    uint64_t r0 = sy * SY, c0 = sx * SX;
                    uint64_t count[2] = {NY - r0 < SY ? NY - r0 : SY, NX - c0 < SX ? NX - c0 : SX};
                    uint64_t start[2] = {r0, c0};
                    CHECK_OK(zarr_read_region(f, start, count, all, sizeof(int32_t) * count[0] * count[1]));
                    int g = all[0] == value(r0, c0, 1) ? 1 : 2;
                    for (uint64_t i = 0; i < count[0]; i++) {
                        for (uint64_t j = 0; j < count[1]; j++) {
                            CHECK(all[i * count[1] + j] == value(r0 + i, c0 + j, g));
                        }
                    }
                }
            }
            free(all);
        }
        CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, f));
    }

    /* 10a. Resize (a time step appended): rank 0 reads and writes zarr.json once, the others take the new
       document from it; the collective write that follows reaches the new rows without a metadata read
       (the coordinated handles are reopened from the new document). */
    {
        reset();
        uint64_t grown[2] = {NY + 3, NX};
        CHECK_OK(zarr_mpi_resize(MPI_COMM_WORLD, NULL, &a, grown, 2)); /* the path: known from the open */
        c = totals();
        report("zarr_mpi_resize", c);
        /* zarr_array_resize() on rank 0 reads the stored document (twice: under the lock, then to check);
           no other rank reads it, whatever their number. */
        CHECK(sum_ull(me == 0 ? 0 : io_metadata_reads) == 0 && c.metadata_reads >= 1 && c.metadata_reads <= 2);
        CHECK(c.s.metadata_reads == 1);
        reset();
        CHECK_OK(write_rows(a, me == 0 ? NY : 0, me == 0 ? NY + 3 : 0, 5));
        c = totals();
        report("write_all (the new rows)", c);
        CHECK(c.metadata_reads == 0 && c.locks == 0);
        int32_t row[3 * 37];
        uint64_t start[2] = {NY, 0}, count[2] = {3, NX};
        CHECK_OK(zarr_mpi_read_all(MPI_COMM_WORLD, a, start, count, NULL, NULL, ZARR_INT32, row, sizeof row));
        for (uint64_t i = 0; i < 3 * NX; i++) {
            CHECK(row[i] == value(NY + i / NX, i % NX, 5));
        }
        uint64_t back[2] = {NY, NX};
        CHECK_OK(zarr_mpi_resize(MPI_COMM_WORLD, NULL, &a, back, 2));
    }

    /* 10b. An unsharded array (the chunk is the unit): the same uneven rows, strided reads back. */
    {
        char plain[PATH_MAX + 64], json3[2048];
        snprintf(plain, sizeof plain, "%s/unsharded.zarr", dir);
        test_metadata(json3, 2, shape, shard, NULL);
        zarr_array *u = NULL;
        CHECK_OK(zarr_mpi_create(MPI_COMM_WORLD, plain, json3, &u));
        reset();
        CHECK_OK(write_rows(u, lo, hi, 1));
        c = totals();
        report("write_all (unsharded)", c);
        CHECK(c.stores == nshards() && c.locks == 0 && c.metadata_reads == 0 && c.s.shards_read == 0);
        check_by_columns(u, gen1);
        CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, u));
    }

    /* 10. The independent path, for contrast: the same uneven rows through zarr_mpi_write_hyperslab take
       locks and re-read zarr.json (so the counters above could have failed). */
    if (np > 1) {
        reset();
        uint64_t rows = hi - lo, w = NX + 2;
        int32_t *local = calloc((rows + 2) * w, sizeof(int32_t));
        CHECK(local != NULL);
        for (uint64_t i = 0; i < rows; i++) {
            for (uint64_t j = 0; j < NX; j++) {
                local[(i + 1) * w + j + 1] = value(lo + i, j, 5);
            }
        }
        uint64_t start[2] = {lo, 0}, count[2] = {rows, NX};
        int64_t stride[2] = {(int64_t)w, 1};
        CHECK_OK(zarr_mpi_write_hyperslab(MPI_COMM_WORLD, a, start, count, NULL, stride, ZARR_INT32, local + w + 1,
                                          sizeof(int32_t) * ((rows + 2) * w - w - 1)));
        free(local);
        c = totals();
        report("write_hyperslab (independent)", c);
        CHECK(c.locks > 0);
        CHECK(c.metadata_reads > 0);
        CHECK(c.stores >= nshards()); /* a shard shared by k ranks is stored k times */
    }
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));
    if (me == 0) {
        printf("np=%d: collective I/O checked (%llu x %llu int32, %llu shards)\n", np, (unsigned long long)NY,
               (unsigned long long)NX, (unsigned long long)nshards());
    }
    MPI_Finalize();
    return 0;
}
