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

/* zarr_mpi_lockscope.c: how far fcntl locks reach at the local directory `path` (a plain path or
   file://; other stores: ZARR_MPI_I_LOCKS_CLUSTER): ZARR_MPI_I_LOCKS_CLUSTER (any file system but Lustre
   without `flock`), ZARR_MPI_I_LOCKS_NODE (Lustre `localflock`), ZARR_MPI_I_LOCKS_NONE (Lustre `noflock` or
   neither option). `mount` receives a description of a Lustre mount ("Lustre at /scratch mounted
   localflock"), else "". Not collective. */
enum { ZARR_MPI_I_LOCKS_CLUSTER = 0, ZARR_MPI_I_LOCKS_NODE = 1, ZARR_MPI_I_LOCKS_NONE = 2 };
ZARR_MPI_HIDDEN int zarr_mpi_i_lock_scope(const char *path, char *mount, size_t mount_size);

/* zarr_mpi_registry.c: the lock scope of a registered handle's location, agreed between the ranks (the
   widest failure among them) and, for ZARR_MPI_I_LOCKS_NODE, whether the communicator spans more than one
   node; found at the first call for the handle (collective then: every rank makes that call), kept after.
   *mount receives the description (a pointer into the registry, "" when none). Unregistered handles:
   ZARR_MPI_I_LOCKS_CLUSTER without any collective step. */
ZARR_MPI_HIDDEN zarr_status zarr_mpi_i_handle_lock_scope(MPI_Comm comm, zarr_array *array, int *scope,
                                                         int *spans_nodes, const char **mount);
/* Makes the next zarr_mpi_i_handle_lock_scope() for `array` find the scope again. */
ZARR_MPI_HIDDEN void zarr_mpi_i_forget_lock_scope(zarr_array *array);

/* zarr_mpi_collective.c: the first step of every collective call: the ranks compare which call they are
   in (one of the ZARR_MPI_I_OP_*), so that ranks pairing different calls fail alike instead of mixing
   their collectives (or hanging). */
enum {
    ZARR_MPI_I_OP_OPEN = 3, ZARR_MPI_I_OP_CREATE, ZARR_MPI_I_OP_CREATE_FROM_SPEC, ZARR_MPI_I_OP_CLOSE,
    ZARR_MPI_I_OP_RESIZE, ZARR_MPI_I_OP_WRITE_BLOCK, ZARR_MPI_I_OP_READ_BLOCK, ZARR_MPI_I_OP_WRITE_HYPERSLAB,
    ZARR_MPI_I_OP_READ_HYPERSLAB, ZARR_MPI_I_OP_BALANCE_THREADS, ZARR_MPI_I_OP_ICECHUNK_FORK,
    ZARR_MPI_I_OP_ICECHUNK_COMMIT
};
ZARR_MPI_HIDDEN zarr_status zarr_mpi_i_begin(MPI_Comm comm, int op);

/* zarr_mpi_collective.c: the counters of zarr_mpi_get_stats(). */
extern ZARR_MPI_HIDDEN zarr_mpi_stats zarr_mpi_i_stats;

#endif
