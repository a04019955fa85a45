/* The handles libzarr_mpi gave out (zarr_mpi_open, zarr_mpi_create*, zarr_mpi_resize) with their location,
 * so that the collective write path can open a coordinated handle on the same array (no store lock, no
 * re-read of zarr.json; zarr_open_with_metadata()) from the handle's own metadata document, without
 * reading storage. See zarr_mpi_internal.h. */
#define _POSIX_C_SOURCE 200809L
#include "zarr_mpi_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    zarr_array *array;
    char *path;
    int mode;
    char *document;          /* the document `coordinated` was opened from (NULL: not yet) */
    zarr_array *coordinated; /* opened lazily */
    int scope;               /* -1: not yet found (zarr_mpi_i_handle_lock_scope) */
    int spans_nodes;
    char mount[PATH_MAX + 64];
    struct entry *next;
} entry;

static entry *entries = NULL;

static entry *find(const zarr_array *array) {
    for (entry *e = entries; e != NULL; e = e->next) {
        if (e->array == array) {
            return e;
        }
    }
    return NULL;
}

zarr_status zarr_mpi_i_register(zarr_array *array, const char *path, int mode) {
    if (array == NULL) {
        return ZARR_OK;
    }
    zarr_mpi_i_unregister(array); /* an address reused after a plain zarr_close() */
    entry *e = calloc(1, sizeof *e);
    char *p = e != NULL ? strdup(path) : NULL;
    if (p == NULL) {
        free(e);
        return zarr_mpi_i_fail(ZARR_ERR_INTERNAL, "zarr_mpi: out of memory registering a handle");
    }
    e->array = array;
    e->path = p;
    e->scope = -1;
    e->mode = mode;
    e->next = entries;
    entries = e;
    return ZARR_OK;
}

void zarr_mpi_i_unregister(zarr_array *array) {
    for (entry **pp = &entries; *pp != NULL; pp = &(*pp)->next) {
        entry *e = *pp;
        if (e->array == array) {
            *pp = e->next;
            zarr_close(e->coordinated);
            free(e->document);
            free(e->path);
            free(e);
            return;
        }
    }
}

int zarr_mpi_i_mode(const zarr_array *array) {
    entry *e = find(array);
    return e != NULL ? e->mode : -1;
}

const char *zarr_mpi_i_path(const zarr_array *array) {
    entry *e = find(array);
    return e != NULL ? e->path : NULL;
}

zarr_array *zarr_mpi_i_coordinated(zarr_array *array) {
    entry *e = find(array);
    char *doc = NULL;
    if (e == NULL || e->mode != ZARR_READ_WRITE || zarr_array_metadata(array, &doc) != ZARR_OK) {
        return NULL;
    }
    if (e->coordinated != NULL && e->document != NULL && strcmp(e->document, doc) == 0) {
        zarr_string_free(doc);
        return e->coordinated;
    }
    /* First use, or the handle's document changed (a resize through it): open from the current one. */
    zarr_close(e->coordinated);
    e->coordinated = NULL;
    free(e->document);
    e->document = strdup(doc);
    zarr_array *c = NULL;
    if (e->document != NULL &&
        zarr_open_with_metadata(e->path, ZARR_READ_WRITE | ZARR_COORDINATED, doc, &c) == ZARR_OK) {
        e->coordinated = c;
    }
    zarr_string_free(doc);
    return e->coordinated;
}

/* Ranks whose node holds `per_node` ranks (the test's ZARR_MPI_TEST_NODE_SIZE: rank / per_node is the
   node), else the nodes of MPI_Comm_split_type: whether the communicator spans more than one. */
static zarr_status spans_nodes(MPI_Comm comm, int *spans) {
    int size = 0, local = 0, rc;
    MPI_Comm_size(comm, &size);
    const char *fake = getenv("ZARR_MPI_TEST_NODE_SIZE");
    if (fake != NULL && atoi(fake) > 0) {
        *spans = size > atoi(fake);
        return ZARR_OK;
    }
    MPI_Comm node = MPI_COMM_NULL;
    if ((rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(node, &local)) != MPI_SUCCESS) {
        return zarr_mpi_i_mpi_failed(rc, "zarr_mpi: MPI_Comm_split_type");
    }
    MPI_Comm_free(&node);
    int mine = local < size, any = 0;
    if ((rc = MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm)) != MPI_SUCCESS) {
        return zarr_mpi_i_mpi_failed(rc, "zarr_mpi: MPI_Allreduce");
    }
    *spans = any;
    return ZARR_OK;
}

zarr_status zarr_mpi_i_handle_lock_scope(MPI_Comm comm, zarr_array *array, int *scope, int *spans,
                                         const char **mount) {
    entry *e = find(array);
    *scope = ZARR_MPI_I_LOCKS_CLUSTER;
    *spans = 0;
    *mount = "";
    if (e == NULL) {
        return ZARR_OK;
    }
    if (e->scope < 0) {
        /* The widest failure among the ranks, with the description of a rank that has it. */
        int rc, me = 0;
        MPI_Comm_rank(comm, &me);
        struct {
            int scope;
            int rank;
        } mine, worst;
        mine.scope = zarr_mpi_i_lock_scope(e->path, e->mount, sizeof e->mount);
        mine.rank = me;
        if ((rc = MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MAXLOC, comm)) != MPI_SUCCESS ||
            (rc = MPI_Bcast(e->mount, (int)sizeof e->mount, MPI_CHAR, worst.rank, comm)) != MPI_SUCCESS) {
            return zarr_mpi_i_mpi_failed(rc, "zarr_mpi: MPI_Allreduce");
        }
        e->mount[sizeof e->mount - 1] = '\0';
        e->spans_nodes = 0;
        if (worst.scope == ZARR_MPI_I_LOCKS_NODE) {
            zarr_status st = spans_nodes(comm, &e->spans_nodes);
            if (st != ZARR_OK) {
                return st;
            }
        }
        e->scope = worst.scope;
    }
    *scope = e->scope;
    *spans = e->spans_nodes;
    *mount = e->mount;
    return ZARR_OK;
}

void zarr_mpi_i_forget_lock_scope(zarr_array *array) {
    entry *e = find(array);
    if (e != NULL) {
        e->scope = -1;
    }
}
