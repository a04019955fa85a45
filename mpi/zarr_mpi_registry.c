/* The handles libzarr_mpi gave out (zarr_mpi_open, zarr_mpi_create*, zarr_mpi_resize) with their location,
 * so that the collective write path can open a coordinated handle on the same array (no store lock, no
 * re-read of zarr.json; zarr_open_with_metadata()) from the handle's own metadata document, without
 * reading storage. See zarr_mpi_internal.h. */
#define _POSIX_C_SOURCE 200809L
#include "zarr_mpi_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct entry {
    zarr_array *array;
    char *path;
    int mode;
    char *document;          /* the document `coordinated` was opened from (NULL: not yet) */
    zarr_array *coordinated; /* opened lazily */
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
