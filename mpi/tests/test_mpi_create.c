/* mpi.create_np<N>: what collective creation and opening do with what is already there.
 *
 *  1. No clobber: creating where an array or a group is fails on every rank with ZARR_ERR_EXISTS and one
 *     message (naming ZARR_MPI_CLOBBER), and leaves it as it was.
 *  2. ZARR_MPI_CLOBBER (zarr_mpi_create_with_flags, zarr_mpi_create_from_spec_with_flags) replaces a group
 *     and an array (the old chunks are gone, every rank sees the new shape, nothing is left beside it);
 *     flags that differ between ranks or are unknown fail every rank before anything changes; a create that
 *     fails puts the old array back; a directory without Zarr metadata is not deleted.
 *  3. Read-only: ZARR_READ_WRITE of an array the process cannot write fails at zarr_mpi_open on every rank,
 *     naming the array (ZARR_READ works); creating in a directory the process cannot write names that
 *     directory. Run as root (CI containers), the ranks first drop to the nobody user (65534), since root
 *     may write anywhere. Last, since there is no way back.
 * Run with 2 or more ranks. */
#define _GNU_SOURCE /* setresuid */
#include <dirent.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi_test_util.h"

static int me, size;

/* Every rank got `expected`, from rank 0's message, which contains `text` (and is the same everywhere). */
static void expect(zarr_status st, zarr_status expected, const char *text) {
    char msg[1200], first[1200];
    snprintf(msg, sizeof msg, "%s", zarr_mpi_last_error());
    memcpy(first, msg, sizeof msg);
    MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (st != expected || strstr(msg, text) == NULL || strcmp(msg, first) != 0) {
        fprintf(stderr, "rank %d: got %s, expected %s with \"%s\"; message: %s\nrank 0's: %s\n", me,
                zarr_status_name(st), zarr_status_name(expected), text, msg, first);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Entries of test_dir() whose name contains "clobbered" (what ZARR_MPI_CLOBBER moved aside). */
static int leftovers(void) {
    int n = 0;
    DIR *d = opendir(test_dir());
    CHECK(d != NULL);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        n += strstr(e->d_name, "clobbered") != NULL;
    }
    closedir(d);
    return n;
}

static zarr_node_type node_at(const char *path) {
    zarr_node_type t = 0;
    return zarr_node_type_at(path, &t) == ZARR_OK ? t : (zarr_node_type)0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    char meta[2048], meta2[2048], path[1024], plain[1024], file_in_plain[1100];
    static const unsigned long long shape[2] = {8, 6}, chunk[2] = {4, 6}, shape2[2] = {5, 3}, chunk2[2] = {5, 3};
    test_metadata(meta, 2, shape, chunk, NULL);
    test_metadata(meta2, 2, shape2, chunk2, NULL);
    snprintf(path, sizeof path, "%s/node.zarr", test_dir());
    snprintf(plain, sizeof plain, "%s/plain", test_dir());
    snprintf(file_in_plain, sizeof file_in_plain, "%s/notes.txt", plain);
    zarr_array *a = NULL;

    /* 1. A group is there (rank 0 makes it): no clobber by default, the group stays. */
    if (me == 0) {
        zarr_group *g = NULL;
        CHECK_OK(zarr_group_create(path, "{\"kept\": true}", &g));
        zarr_group_close(g);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect(zarr_mpi_create(MPI_COMM_WORLD, path, meta, &a), ZARR_ERR_EXISTS, "pass ZARR_MPI_CLOBBER to replace it");
    CHECK(a == NULL);
    expect(zarr_mpi_create_with_flags(MPI_COMM_WORLD, path, meta, 0, &a), ZARR_ERR_EXISTS, "rank 0 of");
    CHECK(node_at(path) == ZARR_NODE_GROUP);

    /* 2. Flags that differ between ranks, or unknown ones: every rank fails, nothing changes. */
    expect(zarr_mpi_create_with_flags(MPI_COMM_WORLD, path, meta, me == size - 1 ? ZARR_MPI_CLOBBER : 0, &a),
           ZARR_ERR_INVALID_ARGUMENT, "flags (ZARR_MPI_CLOBBER) differs between ranks");
    expect(zarr_mpi_create_with_flags(MPI_COMM_WORLD, path, meta, 4, &a), ZARR_ERR_INVALID_ARGUMENT,
           "unknown flags 0x4");
    CHECK(node_at(path) == ZARR_NODE_GROUP && a == NULL);

    /* ZARR_MPI_CLOBBER replaces the group by the array; then data goes in. */
    CHECK_OK(zarr_mpi_create_with_flags(MPI_COMM_WORLD, path, meta, ZARR_MPI_CLOBBER, &a));
    CHECK(node_at(path) == ZARR_NODE_ARRAY);
    CHECK(leftovers() == 0);
    int32_t rows[2 * 6];
    for (int i = 0; i < 12; i++) {
        rows[i] = 100 * me + i;
    }
    uint64_t start[2] = {(uint64_t)(2 * me), 0}, count[2] = {me < 4 ? 2 : 0, 6};
    CHECK_OK(zarr_mpi_write_all(MPI_COMM_WORLD, a, start, count, NULL, NULL, ZARR_INT32, rows,
                                count[0] ? sizeof rows : 0));
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));

    /* A create that fails (a document every rank passes, which libzarr refuses) puts the old array back,
       its data with it. */
    const char *bad = "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[2],\"data_type\":\"no_such_type\"}";
    zarr_status st = zarr_mpi_create_with_flags(MPI_COMM_WORLD, path, bad, ZARR_MPI_CLOBBER, &a);
    CHECK(st != ZARR_OK && a == NULL);
    expect(st, st, "rank 0 of");
    CHECK(node_at(path) == ZARR_NODE_ARRAY && leftovers() == 0);
    CHECK_OK(zarr_mpi_open(MPI_COMM_WORLD, path, ZARR_READ, &a));
    int32_t got[8 * 6];
    uint64_t zero[2] = {0, 0}, whole[2] = {8, 6};
    CHECK_OK(zarr_mpi_read_all(MPI_COMM_WORLD, a, zero, whole, NULL, NULL, ZARR_INT32, got, sizeof got));
    CHECK(got[0] == 0 && got[6 + 5] == 11 && got[2 * 6] == 100);
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));

    /* The array replaced by another (from a spec): a new shape on every rank, the old chunks gone. */
    zarr_array_spec *spec = NULL;
    uint64_t s2[2] = {5, 3};
    CHECK_OK(zarr_array_spec_new(ZARR_INT32, 2, s2, &spec));
    expect(zarr_mpi_create_from_spec(MPI_COMM_WORLD, path, spec, &a), ZARR_ERR_EXISTS, "ZARR_MPI_CLOBBER");
    CHECK_OK(zarr_mpi_create_from_spec_with_flags(MPI_COMM_WORLD, path, spec, ZARR_MPI_CLOBBER, &a));
    zarr_array_spec_free(spec);
    uint64_t now[2] = {0, 0};
    CHECK_OK(zarr_array_shape(a, now, 2));
    CHECK(now[0] == 5 && now[1] == 3);
    int32_t small[5 * 3];
    uint64_t whole2[2] = {5, 3};
    CHECK_OK(zarr_mpi_read_all(MPI_COMM_WORLD, a, zero, whole2, NULL, NULL, ZARR_INT32, small, sizeof small));
    int32_t fill = 12345;
    CHECK_OK(zarr_array_fill_value(a, &fill, sizeof fill));
    for (int i = 0; i < 15; i++) {
        CHECK(small[i] == fill); /* the spec's fill value: nothing of the old array */
    }
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));
    CHECK(leftovers() == 0);

    /* A directory without Zarr metadata is not deleted by ZARR_MPI_CLOBBER: its file stays. */
    if (me == 0) {
        CHECK(mkdir(plain, 0755) == 0);
        FILE *f = fopen(file_in_plain, "w");
        CHECK(f != NULL && fputs("keep me\n", f) >= 0 && fclose(f) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    st = zarr_mpi_create_with_flags(MPI_COMM_WORLD, plain, meta2, ZARR_MPI_CLOBBER, &a);
    expect(st, st, "");
    if (st == ZARR_OK) {
        CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));
    }
    CHECK(access(file_in_plain, R_OK) == 0 && leftovers() == 0);

    /* 3. Read-only. Rank 0 makes a directory with an array in it, then takes away write permission. */
    char ro[1024], ro_array[1100], ro_new[1100];
    snprintf(ro, sizeof ro, "%s/readonly", test_dir());
    snprintf(ro_array, sizeof ro_array, "%s/a.zarr", ro);
    snprintf(ro_new, sizeof ro_new, "%s/new.zarr", ro);
    if (me == 0) {
        chmod(ro, 0755), chmod(ro_array, 0755); /* (a run as another user before) */
        CHECK(mkdir(ro, 0755) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(zarr_mpi_create(MPI_COMM_WORLD, ro_array, meta, &a));
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));
    if (me == 0) {
        CHECK(chmod(ro_array, 0555) == 0 && chmod(ro, 0555) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int was_root = geteuid() == 0;
    if (was_root) {
        /* Real and effective IDs nobody's, the saved ones root's (for the way back before MPI_Finalize,
           which removes MPI's shared-memory files); dumpable again after the change, so that MPI's
           shared-memory transport keeps working. */
        CHECK(setresgid(65534, 65534, 0) == 0 && setresuid(65534, 65534, 0) == 0);
        prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    }
    CHECK(access(ro, W_OK) != 0);
    expect(zarr_mpi_open(MPI_COMM_WORLD, ro_array, ZARR_READ_WRITE, &a), ZARR_ERR_READ_ONLY, ro_array);
    expect(ZARR_ERR_READ_ONLY, ZARR_ERR_READ_ONLY, "is not writable");
    CHECK(a == NULL);
    CHECK_OK(zarr_mpi_open(MPI_COMM_WORLD, ro_array, ZARR_READ, &a));
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));
    st = zarr_mpi_create(MPI_COMM_WORLD, ro_new, meta, &a);
    char named[1200];
    snprintf(named, sizeof named, "the directory %s is not writable", ro);
    expect(st, st, named);
    CHECK(st != ZARR_OK && a == NULL);
    if (was_root) {
        CHECK(setresuid(0, 0, 0) == 0 && setresgid(0, 0, 0) == 0);
    }
    if (me == 0) {
        chmod(ro, 0755), chmod(ro_array, 0755); /* (so that the scratch directory can be cleared) */
    }
    if (me == 0) {
        printf("create: no clobber, ZARR_MPI_CLOBBER and read-only checked on %d ranks\n", size);
    }
    MPI_Finalize();
    return 0;
}
