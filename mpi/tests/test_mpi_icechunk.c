/* One Icechunk commit written by every rank (zarr_mpi_icechunk_fork / zarr_mpi_icechunk_commit), at any
 * number of ranks (CTest: 4), in $ZARR_TEST_TMPDIR/repo:
 *  1. rank 0 creates the repository and, in its branch session, the int32 array "field" of
 *     (8 * ranks, 12) in chunks of (8, 12) with an attribute; every rank writes its 8 rows,
 *     cell (i, j) = 1000 * i + j + 7, through its fork; one commit, the same snapshot id on every rank,
 *     which rank 0 finds at the branch's tip and reads back whole through libzarr.
 *  2. a second round in which the last rank's write fails (a region outside the array: its own status,
 *     ZARR_ERR_OUT_OF_BOUNDS) while the others write: every rank gets that status and the failing
 *     rank's message; the branch stays at the first commit and rank 0's session has no changes.
 *  3. a fork that is committed by itself, or merged with a text that is not a fork's, is refused.
 * Rank 0 writes the snapshot id to repo.snapshot; mpi_check.py icechunk (Python icechunk 2.3.0) then
 * checks that the history is that one commit on top of the repository's first, with every rank's rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_test_util.h"

#define ROWS 8
#define COLS 12

static void branch_tip(const char *repo, char *out, size_t n) {
    zarr_group *g = NULL;
    char loc[4200], *id = NULL;
    snprintf(loc, sizeof loc, "icechunk://%s", repo);
    CHECK_OK(zarr_group_open(loc, ZARR_READ, &g));
    CHECK_OK(zarr_icechunk_snapshot_id(g, &id));
    snprintf(out, n, "%s", id);
    zarr_string_free(id);
    zarr_group_close(g);
}

/* This rank's rows through its fork; `bad`: a region outside the array instead (the libzarr status). */
static zarr_status write_rows(zarr_group *fork, int me, int bad) {
    zarr_array *a = NULL;
    zarr_status st = zarr_group_open_array(fork, "field", &a);
    if (st != ZARR_OK) return st;
    int32_t rows[ROWS * COLS];
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) rows[i * COLS + j] = 1000 * (me * ROWS + i) + j + 7 + (bad ? 1 : 0);
    uint64_t start[2] = {(uint64_t)me * ROWS + (bad ? 1000u : 0u), 0}, count[2] = {ROWS, COLS};
    st = zarr_write_region(a, start, count, rows, sizeof rows);
    zarr_close(a);
    return st;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char repo[4096], loc[4200];
    snprintf(repo, sizeof repo, "%s/repo", test_dir());
    snprintf(loc, sizeof loc, "icechunk://%s", repo);

    /* 1. one commit from every rank */
    zarr_group *base = NULL;
    if (me == 0) {
        char cmd[4200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", repo);
        CHECK(system(cmd) == 0);
        CHECK_OK(zarr_icechunk_create_repository(loc, NULL));
        CHECK_OK(zarr_group_create(loc, "{\"title\":\"zarr_mpi_icechunk\"}", &base));
        char meta[1024];
        snprintf(meta, sizeof meta,
                 "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[%d,%d],\"data_type\":\"int32\","
                 "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[%d,%d]}},"
                 "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
                 "\"fill_value\":-1,\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
                 "\"attributes\":{\"ranks\":%d}}",
                 ROWS * size, COLS, ROWS, COLS, size);
        zarr_array *a = NULL;
        CHECK_OK(zarr_group_create_array(base, "field", meta, &a));
        zarr_close(a);
    }
    char first[64] = "";
    if (me == 0) branch_tip(repo, first, sizeof first);
    zarr_group *fork = NULL;
    CHECK_OK(zarr_mpi_icechunk_fork(MPI_COMM_WORLD, base, NULL, &fork));
    zarr_status mine = write_rows(fork, me, 0);
    char id[32] = "";
    CHECK_OK(zarr_mpi_icechunk_commit(MPI_COMM_WORLD, base, fork, mine, "four ranks, one commit", 0, id, sizeof id));
    CHECK(strlen(id) == 20);
    char id0[32];
    memcpy(id0, id, sizeof id);
    MPI_Bcast(id0, (int)sizeof id0, MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECK(strcmp(id, id0) == 0);
    zarr_group_close(fork);
    if (me == 0) {
        char tip[64];
        branch_tip(repo, tip, sizeof tip);
        CHECK(strcmp(tip, id) == 0 && strcmp(tip, first) != 0);
        zarr_array *a = NULL;
        char aloc[4300];
        snprintf(aloc, sizeof aloc, "icechunk://%s!/field?snapshot=%s", repo, id);
        CHECK_OK(zarr_open(aloc, ZARR_READ, &a));
        size_t n = (size_t)ROWS * size * COLS;
        int32_t *all = malloc(n * sizeof *all);
        CHECK(all != NULL);
        uint64_t start[2] = {0, 0}, count[2] = {(uint64_t)ROWS * size, COLS};
        CHECK_OK(zarr_read_region(a, start, count, all, n * sizeof *all));
        for (size_t k = 0; k < n; k++) CHECK(all[k] == (int32_t)(1000 * (k / COLS) + k % COLS + 7));
        free(all);
        zarr_close(a);
        char path[4200];
        snprintf(path, sizeof path, "%s.snapshot", repo);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL && fprintf(f, "%s\n", id) > 0 && fclose(f) == 0);
    }

    /* 2. the last rank fails: nothing is committed */
    CHECK_OK(zarr_mpi_icechunk_fork(MPI_COMM_WORLD, base, NULL, &fork));
    mine = write_rows(fork, me, me == size - 1);
    CHECK((mine == ZARR_OK) == (me != size - 1));
    zarr_status st = zarr_mpi_icechunk_commit(MPI_COMM_WORLD, base, fork, mine, "must not happen", 0, id, sizeof id);
    CHECK(st == ZARR_ERR_OUT_OF_BOUNDS);
    char expect[64];
    snprintf(expect, sizeof expect, "rank %d of %d: ZARR_ERR_OUT_OF_BOUNDS", size - 1, size);
    CHECK(strncmp(zarr_mpi_last_error(), expect, strlen(expect)) == 0);
    CHECK(id[0] == '\0');
    zarr_group_close(fork);
    if (me == 0) {
        char tip[64];
        branch_tip(repo, tip, sizeof tip);
        CHECK(strcmp(tip, id0) == 0);
        int changes = 1;
        CHECK_OK(zarr_icechunk_has_changes(base, &changes));
        CHECK(changes == 0);
    }

    /* 3. misuse: a fork commits by itself; a merge of something that is not a fork's changes */
    CHECK_OK(zarr_mpi_icechunk_fork(MPI_COMM_WORLD, base, NULL, &fork));
    CHECK(zarr_icechunk_commit(fork, "no", 0, NULL) == ZARR_ERR_INVALID_ARGUMENT);
    CHECK(strstr(zarr_last_error(), "fork session") != NULL);
    if (me == 0) {
        CHECK(zarr_icechunk_merge(base, "{\"icechunk_fork\":1}\nnot base64") == ZARR_ERR_INVALID_ARGUMENT);
        CHECK(zarr_icechunk_merge(fork, "x") == ZARR_ERR_INVALID_ARGUMENT);
        zarr_group_close(base);
    }
    zarr_group_close(fork);
    if (me == 0) printf("icechunk: %d ranks, one commit %s; a failed round committed nothing\n", size, id0);
    MPI_Finalize();
    return 0;
}
