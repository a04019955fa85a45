/* What the files of libzarr_mpi share (not installed; not part of zarr_mpi.h). Every name here is hidden:
 * the library exports only what zarr_mpi.h declares. */
#ifndef ZARR_MPI_INTERNAL_H
#define ZARR_MPI_INTERNAL_H

#include "zarr_mpi.h"

#define ZARR_MPI_HIDDEN __attribute__((visibility("hidden")))
#define ZARR_MPI_MAX_RANK 32

/* zarr_mpi.c: messages and agreement. */
ZARR_MPI_HIDDEN zarr_status zarr_mpi_i_fail(zarr_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
ZARR_MPI_HIDDEN zarr_status zarr_mpi_i_lib(zarr_status st, const char *what);
ZARR_MPI_HIDDEN zarr_status zarr_mpi_i_mpi_failed(int rc, const char *what);
/* The agreement on this rank's status `local`, explained by this thread's zarr_mpi message. */
ZARR_MPI_HIDDEN zarr_status zarr_mpi_i_agree(MPI_Comm comm, zarr_status local);
ZARR_MPI_HIDDEN uint64_t zarr_mpi_i_hash(const void *data, size_t n, uint64_t h);
ZARR_MPI_HIDDEN uint64_t zarr_mpi_i_hash_str(const char *s);

/* zarr_mpi_registry.c: what this process knows about the handles zarr_mpi_open/create/resize gave out:
   the array's location and metadata document (so that the collective path opens a second, coordinated
   handle from it without reading storage). Entries are removed by zarr_mpi_close(). Not thread-safe
   (collective calls on one handle are not concurrent). */
ZARR_MPI_HIDDEN zarr_status zarr_mpi_i_register(zarr_array *array, const char *path, int mode);
ZARR_MPI_HIDDEN void zarr_mpi_i_unregister(zarr_array *array);
/* The mode `array` was registered with (ZARR_READ or ZARR_READ_WRITE), or -1 when not registered. */
ZARR_MPI_HIDDEN int zarr_mpi_i_mode(const zarr_array *array);
/* The registered location of `array`, or NULL. */
ZARR_MPI_HIDDEN const char *zarr_mpi_i_path(const zarr_array *array);
/* A handle opened ZARR_READ_WRITE | ZARR_COORDINATED on the same array (owned by the registry, kept
   until zarr_mpi_close()), or NULL when `array` is not registered, was opened read-only, or its
   document changed since (then the caller's handle itself is used). */
ZARR_MPI_HIDDEN zarr_array *zarr_mpi_i_coordinated(zarr_array *array);

/* zarr_mpi_collective.c: the first step of every collective call: the ranks compare which call they are
   in (one of the ZARR_MPI_I_OP_*), so that ranks pairing different calls fail alike instead of mixing
   their collectives (or hanging). */
enum {
    ZARR_MPI_I_OP_OPEN = 3, ZARR_MPI_I_OP_CREATE, ZARR_MPI_I_OP_CREATE_FROM_SPEC, ZARR_MPI_I_OP_CLOSE,
    ZARR_MPI_I_OP_RESIZE, ZARR_MPI_I_OP_WRITE_BLOCK, ZARR_MPI_I_OP_READ_BLOCK, ZARR_MPI_I_OP_WRITE_HYPERSLAB,
    ZARR_MPI_I_OP_READ_HYPERSLAB, ZARR_MPI_I_OP_BALANCE_THREADS
};
ZARR_MPI_HIDDEN zarr_status zarr_mpi_i_begin(MPI_Comm comm, int op);

/* zarr_mpi_collective.c: the counters of zarr_mpi_get_stats(). */
extern ZARR_MPI_HIDDEN zarr_mpi_stats zarr_mpi_i_stats;

#endif
