/* mpi.lockscope_np4: independent writes on Lustre mounted without cluster-wide flock.
 *
 * The mount table is injected (ZARR_MPI_TEST_MOUNTS: a file in /proc/self/mounts's format whose entry's
 * type stands for statfs's answer), and for the multi-node case the node size (ZARR_MPI_TEST_NODE_SIZE=2:
 * 4 ranks on 2 "nodes"). Each case opens a fresh handle (the scope is found at its first write):
 *
 *  - Lustre `flock`, and another file system: shard-splitting independent writes work, every cell right.
 *  - Lustre `noflock` (and Lustre without either option): every independent write is refused on every
 *    rank, naming the mount and zarr_mpi_write_all, nothing written; zarr_mpi_write_all (no locks) works.
 *  - Lustre `localflock` on one node: shard-splitting writes work (the locks hold within the node).
 *  - Lustre `localflock` over 2 nodes: a shard-splitting write is refused, nothing written; a write along
 *    the shards works.
 * The array: 8 x 6 int32, shards 4 x 6 (inner chunks 2 x 6); run with 4 ranks. */
#define _GNU_SOURCE /* setenv, realpath */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "mpi_test_util.h"

static int me, size;
static char path[1024], table[1100];
static int32_t mine[2 * 6];

/* Writes `text` (with the scratch directory's real path for %s) as the injected mount table. */
static void mounts(const char *type, const char *opts) {
    if (me == 0) {
        char real[PATH_MAX];
        CHECK(realpath(test_dir(), real) != NULL);
        FILE *f = fopen(table, "w");
        CHECK(f != NULL);
        fprintf(f, "/dev/vda1 / ext4 rw,relatime 0 0\n");
        fprintf(f, "10.0.0.1@tcp:/scratch %s %s %s 0 0\n", real, type, opts);
        CHECK(fclose(f) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Every rank: the write's status is `expected`; a refusal names `text` and is the same everywhere. */
static void expect(zarr_status st, zarr_status expected, const char *text) {
    if (st != expected || (text != NULL && strstr(zarr_mpi_last_error(), text) == NULL)) {
        fprintf(stderr, "rank %d: got %s, expected %s with \"%s\"; message: %s\n", me, zarr_status_name(st),
                zarr_status_name(expected), text != NULL ? text : "", zarr_mpi_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Rows 2*r, 2*r+1 from rank r: each shard (4 rows) split between two ranks. */
static zarr_status write_split(zarr_array *a, int gen) {
    uint64_t start[2] = {(uint64_t)(2 * me), 0}, count[2] = {2, 6};
    for (int i = 0; i < 12; i++) {
        mine[i] = gen * 1000 + 100 * me + i;
    }
    return zarr_mpi_write_block(MPI_COMM_WORLD, a, start, count, mine, sizeof mine);
}

/* Every cell of the array is what write_split(gen) wrote (gen < 0: the fill value). */
static void check_all(zarr_array *a, int gen) {
    int32_t all[8 * 6];
    uint64_t zero[2] = {0, 0}, whole[2] = {8, 6};
    CHECK_OK(zarr_mpi_read_block(MPI_COMM_WORLD, a, zero, whole, all, sizeof all));
    for (int r = 0; r < 4; r++) {
        for (int i = 0; i < 12; i++) {
            CHECK(all[r * 12 + i] == (gen < 0 ? -1 : gen * 1000 + 100 * r + i));
        }
    }
}

static zarr_array *fresh(void) {
    char meta[2048];
    static const unsigned long long shape[2] = {8, 6}, shard[2] = {4, 6}, inner[2] = {2, 6};
    test_metadata(meta, 2, shape, shard, inner);
    zarr_array *a = NULL;
    CHECK_OK(zarr_mpi_create_with_flags(MPI_COMM_WORLD, path, meta, ZARR_MPI_CLOBBER, &a));
    return a;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 4);
    snprintf(path, sizeof path, "%s/shared.zarr", test_dir());
    snprintf(table, sizeof table, "%s/mounts", test_dir());
    setenv("ZARR_MPI_TEST_MOUNTS", table, 1);

    /* Lustre with flock, and a file system that is not Lustre: shared shards written under locks. */
    mounts("lustre", "rw,flock,lazystatfs");
    zarr_array *a = fresh();
    expect(write_split(a, 1), ZARR_OK, NULL);
    check_all(a, 1);
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));
    mounts("nfs4", "rw,relatime");
    a = fresh();
    expect(write_split(a, 2), ZARR_OK, NULL);
    check_all(a, 2);
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));

    /* Lustre noflock, and Lustre without either option: refused, pointing to zarr_mpi_write_all. */
    const char *none[2] = {"rw,noflock,lazystatfs", "rw,lazystatfs"};
    const char *said[2] = {"mounted noflock", "mounted without flock"};
    for (int k = 0; k < 2; k++) {
        mounts("lustre", none[k]);
        a = fresh();
        expect(write_split(a, 3), ZARR_ERR_UNSUPPORTED, said[k]);
        expect(ZARR_ERR_UNSUPPORTED, ZARR_ERR_UNSUPPORTED, "write with zarr_mpi_write_all (no locks)");
        check_all(a, -1);
        uint64_t start[2] = {(uint64_t)(2 * me), 0}, count[2] = {2, 6};
        CHECK_OK(zarr_mpi_write_all(MPI_COMM_WORLD, a, start, count, NULL, NULL, ZARR_INT32, mine, sizeof mine));
        check_all(a, 3);
        CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));
    }

    /* Lustre localflock, one node: the locks hold where all ranks are. */
    mounts("lustre", "rw,localflock");
    a = fresh();
    expect(write_split(a, 4), ZARR_OK, NULL);
    check_all(a, 4);
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));

    /* Lustre localflock, 2 nodes of 2 ranks: a shard-splitting write is refused; one along the shards
       (ranks 0 and 2 write a whole shard each, 1 and 3 nothing) is not. */
    setenv("ZARR_MPI_TEST_NODE_SIZE", "2", 1);
    a = fresh();
    expect(write_split(a, 5), ZARR_ERR_UNSUPPORTED, "mounted localflock, where fcntl locks hold within a node");
    check_all(a, -1);
    int32_t shard_rows[4 * 6];
    for (int i = 0; i < 24; i++) {
        shard_rows[i] = 6000 + 100 * me + i;
    }
    uint64_t start[2] = {(uint64_t)(2 * me), 0}, count[2] = {me % 2 == 0 ? 4 : 0, 6};
    CHECK_OK(zarr_mpi_write_block(MPI_COMM_WORLD, a, start, count, shard_rows, count[0] ? sizeof shard_rows : 0));
    int32_t all[8 * 6];
    uint64_t zero[2] = {0, 0}, whole[2] = {8, 6};
    CHECK_OK(zarr_mpi_read_block(MPI_COMM_WORLD, a, zero, whole, all, sizeof all));
    CHECK(all[0] == 6000 && all[23] == 6023 && all[24] == 6200 && all[47] == 6223);
    CHECK_OK(zarr_mpi_close(MPI_COMM_WORLD, a));
    if (me == 0) {
        printf("lockscope: flock, other file systems, noflock, no option, localflock on 1 and 2 nodes\n");
    }
    MPI_Finalize();
    return 0;
}
