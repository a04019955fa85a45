/* libzarr_mpi: one Icechunk commit written by every rank (zarr_mpi.h, docs/mpi.md "One Icechunk commit
 * from many ranks"), on the crate's fork and merge of sessions as libzarr's C API offers them: rank 0
 * forks its branch session (zarr_icechunk_fork), every rank opens the fork (zarr_icechunk_open_fork) and
 * writes in it, every rank's changes (zarr_icechunk_fork_changes) go to rank 0, which merges them
 * (zarr_icechunk_merge) and commits once (zarr_icechunk_commit). Any failure, on any rank, before the
 * commit discards rank 0's session: nothing is committed. */
#include "zarr_mpi_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int comm_rank(MPI_Comm comm) {
    int me = 0;
    MPI_Comm_rank(comm, &me);
    return me;
}

zarr_status zarr_mpi_icechunk_fork(MPI_Comm comm, zarr_group *base, const zarr_store_options *options,
                                   zarr_group **fork) {
    if (fork != NULL) {
        *fork = NULL;
    }
    zarr_status st = zarr_mpi_i_begin(comm, ZARR_MPI_I_OP_ICECHUNK_FORK);
    if (st != ZARR_OK) {
        return st;
    }
    int me = comm_rank(comm), rc;
    zarr_status local = ZARR_OK;
    char *text = NULL;
    if (fork == NULL) {
        local = zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_icechunk_fork: fork is NULL");
    } else if (me == 0 && base == NULL) {
        local = zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT,
                                "zarr_mpi_icechunk_fork: rank 0 passes a group of the branch session (base is NULL)");
    } else if (me == 0) {
        local = zarr_mpi_i_lib(zarr_icechunk_fork(base, &text), "zarr_icechunk_fork");
    }
    if ((st = zarr_mpi_i_agree(comm, local)) != ZARR_OK) {
        zarr_string_free(text);
        return st;
    }
    /* the fork, from rank 0 to every rank */
    unsigned long long n = me == 0 ? (unsigned long long)strlen(text) + 1 : 0;
    if ((rc = MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm)) != MPI_SUCCESS) {
        zarr_string_free(text);
        return zarr_mpi_i_agree(comm, zarr_mpi_i_mpi_failed(rc, "zarr_mpi_icechunk_fork: MPI_Bcast"));
    }
    if (n > INT_MAX) { /* the same on every rank */
        zarr_string_free(text);
        return zarr_mpi_i_fail(ZARR_ERR_MEMORY, "zarr_mpi_icechunk_fork: the fork session is %llu bytes (at most %d)",
                               n, INT_MAX);
    }
    char *buf = me == 0 ? text : malloc((size_t)n);
    local = buf == NULL ? zarr_mpi_i_fail(ZARR_ERR_MEMORY, "zarr_mpi_icechunk_fork: %llu bytes", n) : ZARR_OK;
    if ((st = zarr_mpi_i_agree(comm, local)) != ZARR_OK) {
        if (me == 0) zarr_string_free(text);
        else free(buf);
        return st;
    }
    if ((rc = MPI_Bcast(buf, (int)n, MPI_CHAR, 0, comm)) != MPI_SUCCESS) {
        local = zarr_mpi_i_mpi_failed(rc, "zarr_mpi_icechunk_fork: MPI_Bcast");
    } else {
        buf[n - 1] = '\0';
        local = zarr_mpi_i_lib(zarr_icechunk_open_fork(buf, options, fork), "zarr_icechunk_open_fork");
    }
    if (me == 0) zarr_string_free(text);
    else free(buf);
    st = zarr_mpi_i_agree(comm, local);
    if (st != ZARR_OK && *fork != NULL) {
        zarr_group_close(*fork);
        *fork = NULL;
    }
    return st;
}

/* Rank 0: merges the ranks' changes (`all`, `counts` bytes each, in rank order) into `base` and commits. */
static zarr_status merge_and_commit(zarr_group *base, const char *all, const int *counts, int size, const char *message,
                                    int flags, char *id, size_t id_size) {
    size_t off = 0;
    for (int r = 0; r < size; r++) {
        const char *text = all + off;
        off += (size_t)counts[r];
        zarr_status st = zarr_icechunk_merge(base, text);
        if (st != ZARR_OK) {
            return zarr_mpi_i_fail(st, "merging rank %d's changes: %s", r, zarr_last_error());
        }
    }
    char *snap = NULL;
    zarr_status st = zarr_icechunk_commit(base, message, flags, &snap);
    if (st != ZARR_OK) {
        return zarr_mpi_i_lib(st, "zarr_icechunk_commit");
    }
    snprintf(id, id_size, "%s", snap);
    zarr_string_free(snap);
    return ZARR_OK;
}

zarr_status zarr_mpi_icechunk_commit(MPI_Comm comm, zarr_group *base, zarr_group *fork, zarr_status status,
                                     const char *message, int flags, char *snapshot_id, size_t snapshot_id_size) {
    if (snapshot_id != NULL && snapshot_id_size > 0) {
        snapshot_id[0] = '\0';
    }
    zarr_status st = zarr_mpi_i_begin(comm, ZARR_MPI_I_OP_ICECHUNK_COMMIT);
    if (st != ZARR_OK) {
        return st;
    }
    int me = comm_rank(comm), size = 1, rc;
    MPI_Comm_size(comm, &size);
    /* 1. the ranks' own outcomes (their message: zarr_last_error()) */
    st = zarr_mpi_agree(comm, status);
    /* 2. this rank's arguments and its fork's changes */
    char *text = NULL;
    zarr_status local = ZARR_OK;
    if (st == ZARR_OK) {
        if (fork == NULL) {
            local = zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_icechunk_commit: fork is NULL");
        } else if (me == 0 && (base == NULL || message == NULL)) {
            local = zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT,
                                    "zarr_mpi_icechunk_commit: rank 0 passes the branch session's group and a message");
        } else if (snapshot_id != NULL && snapshot_id_size < 21) {
            local = zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT,
                                    "zarr_mpi_icechunk_commit: snapshot_id has room for %zu bytes (at least 21)",
                                    snapshot_id_size);
        } else {
            local = zarr_mpi_i_lib(zarr_icechunk_fork_changes(fork, &text), "zarr_icechunk_fork_changes");
        }
        if (local == ZARR_OK && strlen(text) + 1 > INT_MAX) {
            local = zarr_mpi_i_fail(ZARR_ERR_MEMORY, "zarr_mpi_icechunk_commit: this rank's changes are %zu bytes (at most %d)",
                                    strlen(text), INT_MAX - 1);
        }
        st = zarr_mpi_i_agree(comm, local);
    }
    /* 3. every rank's changes to rank 0 */
    int *counts = NULL, *displs = NULL;
    char *all = NULL;
    if (st == ZARR_OK) {
        int mine = (int)strlen(text) + 1;
        local = ZARR_OK;
        if (me == 0) {
            counts = calloc((size_t)size, sizeof *counts);
            displs = calloc((size_t)size, sizeof *displs);
            if (counts == NULL || displs == NULL) local = zarr_mpi_i_fail(ZARR_ERR_MEMORY, "zarr_mpi_icechunk_commit: counts");
        }
        if ((rc = MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, comm)) != MPI_SUCCESS) {
            local = zarr_mpi_i_mpi_failed(rc, "zarr_mpi_icechunk_commit: MPI_Gather");
        }
        if (me == 0 && local == ZARR_OK) {
            long long total = 0;
            for (int r = 0; r < size; r++) {
                displs[r] = (int)total;
                total += counts[r];
            }
            if (total > INT_MAX) {
                local = zarr_mpi_i_fail(ZARR_ERR_MEMORY, "zarr_mpi_icechunk_commit: the ranks' changes are %lld bytes "
                                        "(at most %d at once)", total, INT_MAX);
            } else if ((all = malloc((size_t)total)) == NULL) {
                local = zarr_mpi_i_fail(ZARR_ERR_MEMORY, "zarr_mpi_icechunk_commit: %lld bytes", total);
            }
        }
        st = zarr_mpi_i_agree(comm, local);
        if (st == ZARR_OK &&
            (rc = MPI_Gatherv(text, mine, MPI_CHAR, all, counts, displs, MPI_CHAR, 0, comm)) != MPI_SUCCESS) {
            st = zarr_mpi_i_agree(comm, zarr_mpi_i_mpi_failed(rc, "zarr_mpi_icechunk_commit: MPI_Gatherv"));
        }
    }
    zarr_string_free(text);
    /* 4. rank 0 merges and commits, or discards after any failure */
    char id[64] = "";
    local = ZARR_OK;
    if (me == 0 && st == ZARR_OK) {
        local = merge_and_commit(base, all, counts, size, message, flags, id, sizeof id);
    }
    if (me == 0 && (st != ZARR_OK || local != ZARR_OK) && base != NULL) {
        zarr_icechunk_discard(base); /* nothing of this round stays in the session */
    }
    free(all);
    free(counts);
    free(displs);
    if (st != ZARR_OK) {
        return st;
    }
    if ((st = zarr_mpi_i_agree(comm, local)) != ZARR_OK) {
        return st;
    }
    /* 5. the snapshot id to every rank */
    if ((rc = MPI_Bcast(id, (int)sizeof id, MPI_CHAR, 0, comm)) != MPI_SUCCESS) {
        return zarr_mpi_i_agree(comm, zarr_mpi_i_mpi_failed(rc, "zarr_mpi_icechunk_commit: MPI_Bcast"));
    }
    id[sizeof id - 1] = '\0';
    if (snapshot_id != NULL) {
        snprintf(snapshot_id, snapshot_id_size, "%s", id);
    }
    return ZARR_OK;
}
