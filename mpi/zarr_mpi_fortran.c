/* The C side of the Fortran module zarr_mpi (fortran/zarr_mpi.f90): Fortran communicators (MPI_Fint, from
 * `use mpi`, mpif.h, or comm%MPI_VAL of mpi_f08) become MPI_Comm with MPI_Comm_f2c; Fortran order and
 * 1-based indices become Zarr order and 0-based ones; a Fortran buffer of any type and rank arrives as a C
 * descriptor (ISO_Fortran_binding.h, from the module's class(*), dimension(..) buffers) whose extents and byte
 * strides, with the element type the module found, are handed to zarr_mpi_write_hyperslab /
 * zarr_mpi_read_hyperslab, so array sections are read and
 * written in place. Not part of zarr_mpi.h: only the module calls these. */
#include <ISO_Fortran_binding.h>
#include <stdio.h>
#include <string.h>

#include "zarr_mpi.h"

#define MAX_RANK 32

zarr_status zarr_mpi_f_agree(MPI_Fint comm, zarr_status local, const char *message) {
    return zarr_mpi_agree_message(MPI_Comm_f2c(comm), local, message);
}

/* The block calls of the module go through zarr_mpi_write_hyperslab / zarr_mpi_read_hyperslab (their
   handshake, with its sequence numbers, and the lock check of independent writes); their messages then
   name those C functions. `renamed` holds such a message with the Fortran procedure's name instead, as
   long as zarr_mpi_last_error() is still `original` (a later call replaces both). */
static _Thread_local char original[1400], renamed[1400];

/* original := zarr_mpi_last_error(); renamed := it with the C block calls' names replaced by the Fortran
   procedures' (on every rank alike: a message may name another rank's call). */
static void rename_message(void) {
    static const char *const from[2] = {"zarr_mpi_write_hyperslab", "zarr_mpi_read_hyperslab"};
    static const char *const to[2] = {"zarr_mpi_write_block", "zarr_mpi_read_block"};
    size_t n = 0;
    snprintf(original, sizeof original, "%s", zarr_mpi_last_error());
    for (const char *p = original; *p != '\0' && n + 1 < sizeof renamed;) {
        int k = strncmp(p, from[0], strlen(from[0])) == 0 ? 0 : strncmp(p, from[1], strlen(from[1])) == 0 ? 1 : -1;
        if (k >= 0 && n + strlen(to[k]) + 1 < sizeof renamed) {
            memcpy(renamed + n, to[k], strlen(to[k]));
            n += strlen(to[k]);
            p += strlen(from[k]);
        } else {
            renamed[n++] = *p++;
        }
    }
    renamed[n] = '\0';
}

const char *zarr_mpi_f_last_error(void) {
    const char *m = zarr_mpi_last_error();
    return original[0] != '\0' && strcmp(m, original) == 0 ? renamed : m;
}

zarr_status zarr_mpi_f_create(MPI_Fint comm, const char *path, const char *json, int flags, zarr_array **out) {
    return zarr_mpi_create_with_flags(MPI_Comm_f2c(comm), path, json, flags, out);
}

zarr_status zarr_mpi_f_create_from_spec(MPI_Fint comm, const char *path, const zarr_array_spec *spec, int flags,
                                        zarr_array **out) {
    return zarr_mpi_create_from_spec_with_flags(MPI_Comm_f2c(comm), path, spec, flags, out);
}

zarr_status zarr_mpi_f_open(MPI_Fint comm, const char *path, int mode, zarr_array **out) {
    return zarr_mpi_open(MPI_Comm_f2c(comm), path, mode, out);
}

zarr_status zarr_mpi_f_balance_threads(MPI_Fint comm, size_t *threads) {
    return zarr_mpi_balance_threads(MPI_Comm_f2c(comm), threads);
}

/* shape_f: `rank` extents in Fortran order. */
zarr_status zarr_mpi_f_resize(MPI_Fint comm, const char *path, zarr_array **array, const int64_t *shape_f,
                              size_t rank) {
    uint64_t shape[MAX_RANK];
    zarr_status st = ZARR_OK;
    char msg[128] = "";
    if (rank == 0 || rank > MAX_RANK) {
        st = ZARR_ERR_INVALID_ARGUMENT;
        snprintf(msg, sizeof msg, "zarr_mpi_resize: rank %zu", rank);
    } else {
        for (size_t d = 0; d < rank; d++) {
            if (shape_f[d] < 0) {
                st = ZARR_ERR_INVALID_ARGUMENT;
                snprintf(msg, sizeof msg, "zarr_mpi_resize: negative extent %lld", (long long)shape_f[d]);
            }
            shape[rank - 1 - d] = (uint64_t)shape_f[d];
        }
    }
    MPI_Comm c = MPI_Comm_f2c(comm);
    if ((st = zarr_mpi_agree_message(c, st, msg)) != ZARR_OK) {
        return st;
    }
    /* An empty path (the Fortran caller left it out): the handle's own, from zarr_mpi_open / create. */
    return zarr_mpi_resize(c, path != NULL && path[0] != '\0' ? path : NULL, array, shape, rank);
}

/* Fortran-order results: start_f 1-based; dims_f NULL or `rank` values; grid_f receives `rank` values. */
zarr_status zarr_mpi_f_decompose(MPI_Fint comm, const zarr_array *array, const int *dims_f, int *grid_f,
                                 int64_t *start_f, int64_t *count_f, int *shared, size_t rank) {
    size_t have = 0;
    zarr_status st = zarr_array_rank(array, &have);
    if (st != ZARR_OK) {
        return st;
    }
    if (have != rank || rank > MAX_RANK) {
        return ZARR_ERR_INVALID_ARGUMENT;
    }
    int dims[MAX_RANK], grid[MAX_RANK];
    uint64_t start[MAX_RANK], count[MAX_RANK];
    for (size_t d = 0; d < rank && dims_f != NULL; d++) {
        dims[rank - 1 - d] = dims_f[d];
    }
    st = zarr_mpi_decompose(MPI_Comm_f2c(comm), array, dims_f != NULL ? dims : NULL, grid, start, count, shared);
    if (st == ZARR_OK) {
        for (size_t d = 0; d < rank; d++) {
            grid_f[d] = grid[rank - 1 - d];
            start_f[d] = (int64_t)start[rank - 1 - d] + 1;
            count_f[d] = (int64_t)count[rank - 1 - d];
        }
    }
    return st;
}

/* What zarr_mpi_f_transfer does. */
enum { READ_BLOCK = 0, WRITE_BLOCK = 1, READ_ALL = 2, WRITE_ALL = 3 };

/* Writes or reads (`mode`) the buffer `buf` at start_f (1-based, Fortran order; start_len 0: all 1), every
 * step_f-th element along each dimension (step_len 0: all 1), of an array of rank `rank`. The buffer's
 * extents are the counts; a buffer of lower rank than the array covers the first dimensions (Fortran
 * order), the others get a count of 1. A buffer with no elements (a rank that owns nothing) takes part
 * and moves nothing. The buffer arrives from a class(*) dummy (fortran/zarr_mpi.f90 says why): its
 * descriptor's base address, rank, extents and byte strides hold, not its type and element length, which
 * the module finds and passes as `type` (a zarr_data_type; -2 character, -3 default logical, -1 another
 * type) and `elem` (bytes). */
zarr_status zarr_mpi_f_transfer(MPI_Fint comm, zarr_array *array, CFI_cdesc_t *buf, const int64_t *start_f,
                                size_t start_len, const int64_t *step_f, size_t step_len, int mode, int type,
                                size_t elem) {
    MPI_Comm c = MPI_Comm_f2c(comm);
    uint64_t start[MAX_RANK], count[MAX_RANK], step[MAX_RANK];
    int64_t stride[MAX_RANK];
    size_t rank = 0, bytes = 0;
    char msg[1024] = "";
    static const char *names[4] = {"zarr_mpi_read_block", "zarr_mpi_write_block", "zarr_mpi_read_all",
                                   "zarr_mpi_write_all"};
    const char *what = names[mode & 3];
    int writing = mode == WRITE_BLOCK || mode == WRITE_ALL, empty = 0;
    zarr_status st = zarr_array_rank(array, &rank);
    if (start_len == 0) {
        start_f = NULL;
    }
    if (step_len == 0) {
        step_f = NULL;
    }
    if (st != ZARR_OK) {
        snprintf(msg, sizeof msg, "%s: %s", what, zarr_last_error());
    } else if (buf == NULL) {
        st = ZARR_ERR_INVALID_ARGUMENT;
        snprintf(msg, sizeof msg, "%s: no buffer", what);
    } else if (rank == 0 || rank > MAX_RANK || (size_t)buf->rank > rank) {
        st = ZARR_ERR_INVALID_ARGUMENT;
        snprintf(msg, sizeof msg, "%s: a buffer of rank %d for an array of rank %zu", what, (int)buf->rank, rank);
    } else if (type < 0) {
        st = ZARR_ERR_INVALID_ARGUMENT;
        snprintf(msg, sizeof msg, "%s: the buffer is %s; libzarr converts integer(int8/16/32/64), "
                 "real(real32/64), complex(real32/64) and logical(c_bool) buffers", what,
                 type == -2 ? "character" : type == -3 ? "default logical" : "of a derived or another type");
    } else if (start_f != NULL && start_len != rank) {
        st = ZARR_ERR_INVALID_ARGUMENT;
        snprintf(msg, sizeof msg, "%s: start has %zu values for an array of rank %zu", what, start_len, rank);
    } else if (step_f != NULL && step_len != rank) {
        st = ZARR_ERR_INVALID_ARGUMENT;
        snprintf(msg, sizeof msg, "%s: step has %zu values for an array of rank %zu", what, step_len, rank);
    } else {
        size_t span = 0;
        for (size_t d = 0; d < rank; d++) {   /* d: Fortran dimension; rank-1-d: Zarr dimension */
            size_t z = rank - 1 - d;
            int64_t s = start_f != NULL ? start_f[d] : 1, k = step_f != NULL ? step_f[d] : 1;
            if (s < 1) {
                st = ZARR_ERR_INVALID_ARGUMENT;
                snprintf(msg, sizeof msg, "%s: start(%zu) = %lld (indices start at 1)", what, d + 1, (long long)s);
            }
            if (k < 1) {
                st = ZARR_ERR_INVALID_ARGUMENT;
                snprintf(msg, sizeof msg, "%s: step(%zu) = %lld (at least 1)", what, d + 1, (long long)k);
            }
            start[z] = (uint64_t)(s - 1);
            step[z] = (uint64_t)k;
            if (d < (size_t)buf->rank) {
                CFI_index_t ext = buf->dim[d].extent, sm = buf->dim[d].sm;
                count[z] = (uint64_t)ext;
                empty |= ext == 0;
                if (sm < 0 || (elem > 0 && (size_t)sm % elem != 0)) {
                    st = ZARR_ERR_INVALID_ARGUMENT;
                    snprintf(msg, sizeof msg, "%s: the buffer has a negative or odd stride (pass a copy)", what);
                }
                stride[z] = elem > 0 ? (int64_t)((size_t)sm / elem) : 0;
                span += ext > 0 ? (size_t)(ext - 1) * (size_t)stride[z] : 0;
            } else {
                count[z] = 1;
                stride[z] = 0;
            }
        }
        bytes = empty ? 0 : (span + 1) * elem;
    }
    if ((st = zarr_mpi_agree_message(c, st, msg)) != ZARR_OK) {
        return st;
    }
    /* (an empty buffer may have no address: nothing is read or written through this one; its strides,
       where an extent is 0, say nothing, so none are passed) */
    void *data = buf->base_addr != NULL ? buf->base_addr : (void *)&bytes;
    const int64_t *strides = empty ? NULL : stride;
    /* libzarr's messages (a selection out of bounds, ...) quote the selection as the Fortran caller wrote
       it: Fortran order, 1-based (zarr_set_message_index_order(), this thread only, restored after). */
    int previous = ZARR_INDEX_ORDER_C;
    zarr_status order = zarr_set_message_index_order(ZARR_INDEX_ORDER_FORTRAN, &previous);
    zarr_data_type t = (zarr_data_type)type;
    switch (mode) {
    case WRITE_ALL:
        st = zarr_mpi_write_all(c, array, start, count, step, strides, t, data, bytes);
        break;
    case READ_ALL:
        st = zarr_mpi_read_all(c, array, start, count, step, strides, t, data, bytes);
        break;
    default:
        /* The block calls: independent libzarr I/O through the C calls (handshake, lock check, agreement),
           the messages with this procedure's name. */
        st = writing ? zarr_mpi_write_hyperslab(c, array, start, count, step, strides, t, data, bytes)
                     : zarr_mpi_read_hyperslab(c, array, start, count, step, strides, t, data, bytes);
        if (st != ZARR_OK) {
            rename_message();
        }
        break;
    }
    if (order == ZARR_OK) {
        zarr_set_message_index_order(previous, NULL);
    }
    return st;
}

/* This process's rank in `comm` (for printing a message once per job). */
int zarr_mpi_f_rank(MPI_Fint comm) {
    int r = 0;
    MPI_Comm_rank(MPI_Comm_f2c(comm), &r);
    return r;
}
