/*
 * zarr_mpi.h: MPI-parallel creation, decomposition, writing and reading of Zarr arrays (libzarr_mpi).
 *
 * libzarr_mpi is a small C library over libzarr's public C API (zarr.h) and MPI; libzarr itself has no
 * MPI dependency. Link with zarr::zarr_mpi (CMake) or `pkg-config --libs zarr-mpi`.
 *
 *   zarr_array *a;
 *   uint64_t start[3], count[3];
 *   int shared;
 *   zarr_mpi_create_from_spec(MPI_COMM_WORLD, "out.zarr", spec, &a);   // rank 0 writes zarr.json
 *                                           // (or zarr_mpi_create() with a metadata document)
 *   zarr_mpi_decompose(MPI_COMM_WORLD, a, NULL, NULL, start, count, &shared);
 *   ... fill this rank's block (product(count) elements, C order) ...
 *   zarr_mpi_write_block(MPI_COMM_WORLD, a, start, count, block, nbytes);
 *   zarr_mpi_close(MPI_COMM_WORLD, a);
 *
 * Collective calls. A function marked "Collective" must be called by every rank of `comm`, in the same
 * order. It ends with an agreement on the outcome (an MPI_Allreduce of the status): it returns the same
 * status on every rank, and when a rank failed (a bad argument on that rank alone included) every rank
 * returns that rank's status and zarr_mpi_last_error() holds that rank's message on every rank. No rank
 * is left waiting because another failed. When several ranks fail, the lowest failing rank is reported.
 *
 * Block and hyperslab I/O is independent underneath: each rank reads and writes its own chunks (or
 * shards) through libzarr, encoding and decoding them in its own thread pool (zarr_set_num_threads(),
 * ZARR_NUM_THREADS, or zarr_mpi_balance_threads()). There is no global lock: ranks whose blocks share no
 * chunk (shard) never touch the same file. Blocks from zarr_mpi_decompose() share none unless it says
 * so. zarr_mpi_write_all() / zarr_mpi_read_all() are collective I/O of any decomposition (two-phase:
 * each shard written or read once, by one aggregator rank, without locks).
 *
 * Metadata is read once per job: zarr_mpi_open() reads it on rank 0 and sends the document to the other
 * ranks, which open from it without touching storage (zarr_open_with_metadata()); zarr_mpi_create*() and
 * zarr_mpi_resize() do the same after rank 0 wrote it. Close such handles with zarr_mpi_close().
 *
 * Every collective call starts with the same handshake, carrying which call it is: ranks that pair
 * different calls (one rank skipped a call, or closes while the others write) all fail with
 * ZARR_ERR_INVALID_ARGUMENT naming both calls, instead of mixing their collectives. It also carries the
 * call's sequence number on the communicator and how many calls of its kind the rank made there (Since:
 * 0.4): ranks out of step (a skipped or added call pairing, say, one time step's write with the next's)
 * fail with ZARR_ERR_INVALID_ARGUMENT ("ranks are out of step: rank 3 is in its 1st zarr_mpi_write_all
 * on this communicator, rank 0 in its 2nd") and nothing is written. The counts are kept on the
 * communicator (an MPI attribute; MPI_Comm_dup() starts afresh); once ranks made different calls on it,
 * every later call of those kinds there fails alike (end the job).
 *
 * Communicators: `comm` must be a valid intracommunicator (not MPI_COMM_NULL) on every calling rank; MPI
 * errors are handled by the communicator's error handler (by default MPI aborts the job).
 *
 * Status codes are libzarr's (ZARR_OK, ZARR_ERR_*), plus the ones listed per function.
 */
#ifndef ZARR_MPI_H
#define ZARR_MPI_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "zarr.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The message of the last failed zarr_mpi_* call on this thread: "rank R of N: <status name>: <message>"
 * naming the rank that failed (for collective calls: the same text on every rank).
 *
 * Returns a NUL-terminated string owned by the library: never NULL (empty when no call has failed),
 * valid until the next zarr_mpi_* call on this thread. Not collective. Thread-safe: each thread has its
 * own message.
 */
const char *zarr_mpi_last_error(void);

/**
 * Agrees on an outcome: every rank passes its own status, every rank gets back the status of the lowest
 * rank whose status is not ZARR_OK (ZARR_OK when all succeeded). The failing rank's zarr_last_error()
 * (the message of its last failed libzarr call) is broadcast and becomes zarr_mpi_last_error() on every
 * rank. The other zarr_mpi_* calls end with this; call it
 * after independent libzarr calls (zarr_write_region() of a rank's own block, say) to learn on every
 * rank whether any rank failed.
 *
 * @param comm   the communicator
 * @param local  this rank's status
 * @returns the agreed status, identical on every rank.
 * Collective. Thread-safe as far as MPI is (concurrent collectives on one communicator are not).
 */
zarr_status zarr_mpi_agree(MPI_Comm comm, zarr_status local);

/**
 * zarr_mpi_agree() with this rank's own message: when `local` is not ZARR_OK, `message` (NULL:
 * zarr_last_error()) is what every rank sees after "rank R of N: <status name>: ". For a caller's own
 * checks (a buffer that does not fit, a bad option) that must fail every rank alike.
 *
 * @param message  NULL or a NUL-terminated string (copied; at most 1023 bytes are sent)
 * @returns as zarr_mpi_agree(). Collective.
 */
zarr_status zarr_mpi_agree_message(MPI_Comm comm, zarr_status local, const char *message);

/**
 * Creates an array collectively: rank 0 creates it at `path` from `metadata_json` (as zarr_create()),
 * then, after the agreement, every other rank opens it for reading and writing, from rank 0's document
 * (no storage read). Every rank must pass
 * the same `path` and `metadata_json` (they are compared: a difference is ZARR_ERR_INVALID_ARGUMENT).
 *
 * @param comm           the communicator (every rank that writes the array)
 * @param path           directory for the array (as zarr_create())
 * @param metadata_json  a complete Zarr v3 `zarr.json` document
 * @param out            receives this rank's new handle (release with zarr_mpi_close() or zarr_close());
 *                       set to NULL on failure, on every rank
 * @returns (identical on every rank) ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL argument on some rank,
 *          path or metadata differing between ranks); any status of zarr_create() (ZARR_ERR_EXISTS,
 *          ZARR_ERR_METADATA, ...) or zarr_open() on any rank.
 * Collective. Thread-safe as far as MPI is.
 */
zarr_status zarr_mpi_create(MPI_Comm comm, const char *path, const char *metadata_json, zarr_array **out);

/** zarr_mpi_create_with_flags() / zarr_mpi_create_from_spec_with_flags(): replace an array or group
    already at the path (netCDF's NC_CLOBBER). Without it, creating where an array or group is fails with
    ZARR_ERR_EXISTS on every rank (NC_NOCLOBBER). Since: 0.4. */
#define ZARR_MPI_CLOBBER 1

/**
 * zarr_mpi_create() with flags: 0 (as zarr_mpi_create(): an array or group already at `path` is
 * ZARR_ERR_EXISTS on every rank, with one message, and is left as it was) or ZARR_MPI_CLOBBER: an array or
 * group at `path` (a local directory) is replaced. Rank 0 moves it aside (a rename within its parent
 * directory), creates the new array, and then deletes the old one (symbolic links below it are removed as
 * links, their targets left alone); when the create fails, the old one is put back. A directory without
 * Zarr metadata, or a file, is never deleted (zarr_create() then reports what it finds). An array or group
 * in another store (s3://, ...) is not replaced: ZARR_ERR_UNSUPPORTED.
 *
 * @param flags  0 or ZARR_MPI_CLOBBER; the same on every rank (compared)
 * @returns as zarr_mpi_create(), and ZARR_ERR_INVALID_ARGUMENT (unknown or differing flags);
 *          ZARR_ERR_UNSUPPORTED (ZARR_MPI_CLOBBER for a node outside the local file system); ZARR_ERR_IO
 *          (the old node could not be moved aside: nothing changed; or it could not be deleted after the
 *          create: the message names where it lies). When the path's directory cannot be written, the
 *          message names that directory.
 * Collective. Thread-safe as far as MPI is. Since: 0.4.
 */
zarr_status zarr_mpi_create_with_flags(MPI_Comm comm, const char *path, const char *metadata_json, int flags,
                                       zarr_array **out);

/**
 * Creates an array collectively from a spec (zarr_array_spec_new() and the zarr_array_spec_set_*()
 * calls, without JSON): rank 0 creates it at `path` with zarr_create_from_spec(), then, after the
 * agreement, every other rank opens it for reading and writing. Every rank builds its own spec, with
 * the same settings: the specs' metadata documents (zarr_array_spec_to_json()) are compared, and a
 * difference is ZARR_ERR_INVALID_ARGUMENT on every rank (nothing is created).
 *
 *   zarr_array_spec *spec;
 *   uint64_t shape[2] = {1000, 800}, chunks[2] = {250, 200};
 *   zarr_array_spec_new(ZARR_FLOAT64, 2, shape, &spec);
 *   zarr_array_spec_set_chunks(spec, chunks, 2);
 *   zarr_mpi_create_from_spec(MPI_COMM_WORLD, "out.zarr", spec, &a);
 *   zarr_array_spec_free(spec);
 *
 * @param comm  the communicator (every rank that writes the array)
 * @param path  directory for the array (as zarr_create_from_spec()); the same on every rank (compared)
 * @param spec  this rank's spec (caller-owned, not modified; may be freed right after the call)
 * @param out   receives this rank's new handle (release with zarr_mpi_close() or zarr_close()); set to
 *              NULL on failure, on every rank
 * @returns (identical on every rank) ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL argument on some rank,
 *          path or spec differing between ranks); ZARR_ERR_INVALID_HANDLE (not a live spec); any status
 *          of zarr_create_from_spec() on rank 0 (ZARR_ERR_EXISTS, ...) or of zarr_open() on the others.
 * Collective. Thread-safe as far as MPI is (the spec may be read by other threads meanwhile, as
 * zarr_create_from_spec() allows). Since: 0.3.
 */
zarr_status zarr_mpi_create_from_spec(MPI_Comm comm, const char *path, const zarr_array_spec *spec,
                                      zarr_array **out);

/**
 * zarr_mpi_create_from_spec() with flags: 0 or ZARR_MPI_CLOBBER, as zarr_mpi_create_with_flags().
 *
 * @returns as zarr_mpi_create_from_spec() and zarr_mpi_create_with_flags().
 * Collective. Thread-safe as far as MPI is. Since: 0.4.
 */
zarr_status zarr_mpi_create_from_spec_with_flags(MPI_Comm comm, const char *path, const zarr_array_spec *spec,
                                                 int flags, zarr_array **out);

/**
 * Opens an existing array on every rank (as zarr_open()): rank 0 reads the metadata and sends the
 * document; the other ranks open their handles from it without reading storage (a Zarr v2 or v1 array
 * is opened by every rank). With ZARR_READ_WRITE, a local directory the process cannot write fails
 * here (ZARR_ERR_READ_ONLY, naming it), not at the first write.
 *
 * @param comm  the communicator
 * @param path  the array's directory; the same on every rank (compared)
 * @param mode  ZARR_READ or ZARR_READ_WRITE; the same on every rank
 * @param out   receives this rank's new handle; set to NULL on failure, on every rank
 * @returns (identical on every rank) ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL, bad mode, path or mode
 *          differing between ranks); ZARR_ERR_READ_ONLY; any status of zarr_open() on rank 0
 *          (ZARR_ERR_NOT_FOUND, ...) or of zarr_open_with_metadata() on the others.
 * Collective. Thread-safe as far as MPI is.
 */
zarr_status zarr_mpi_open(MPI_Comm comm, const char *path, int mode, zarr_array **out);

/**
 * Closes every rank's handle, after every rank has arrived (so no rank closes while another still
 * writes through a handle it shares nothing with but a file system). NULL is a no-op on that rank.
 *
 * @param array  this rank's handle (owned: it is freed and must not be used afterwards)
 * @returns (identical on every rank) ZARR_OK; ZARR_ERR_INVALID_HANDLE (not an open handle on some rank).
 * Collective. Not thread-safe with other calls on the same handle.
 */
zarr_status zarr_mpi_close(MPI_Comm comm, zarr_array *array);

/**
 * Changes the shape of an array collectively: rank 0 resizes it (zarr_array_resize(): the metadata is
 * read and rewritten once), then every other rank reopens its handle from rank 0's new document, without
 * reading storage, so that it sees the new shape (libzarr handles keep the shape they were opened with).
 * Typical use: appending a time step.
 *
 * @param path   the array's directory (the same on every rank); NULL for a handle of zarr_mpi_open() or
 *               zarr_mpi_create*(), which knows it (Since: 0.4)
 * @param array  in: this rank's open handle (opened for writing); out: the handle to use from now on
 *               (on the ranks other than 0 a new handle; the old one is closed). On failure every rank
 *               still holds an open handle (the old one where the reopen failed or was not reached),
 *               to be closed as usual.
 * @param shape  `rank` new extents, the same on every rank (compared)
 * @param rank   the array's rank
 * @returns (identical on every rank) ZARR_OK; ZARR_ERR_INVALID_ARGUMENT; any status of
 *          zarr_array_resize() on rank 0 or of zarr_open() on the others.
 * Collective. Not thread-safe with other calls on the same handle.
 */
zarr_status zarr_mpi_resize(MPI_Comm comm, const char *path, zarr_array **array, const uint64_t *shape,
                            size_t rank);

/**
 * Splits an array of shape `shape` into `nprocs` blocks aligned to `unit` (chunk or shard shape) and
 * returns block `index`: the pure computation behind zarr_mpi_decompose(), usable without MPI.
 *
 * The process grid: `dims` (may be NULL: all automatic) holds `rank` values; a positive value fixes the
 * number of blocks along that dimension, 0 lets the function choose (as MPI_Dims_create() does, but
 * weighted by the number of units along each dimension: each prime factor of the remaining count goes
 * to the dimension with the most units per block, so that blocks stay unit-aligned). Along a dimension
 * with n units and p blocks, block i gets units [floor(i*n/p), floor((i+1)*n/p)) -- balanced to one
 * unit. When p exceeds n the elements themselves are split evenly instead (blocks then share units).
 * Block `index` is at grid coordinates in C order (last dimension fastest, as MPI_Cart_create()).
 *
 * @param shape   `rank` array extents
 * @param unit    `rank` positive unit extents (the shard shape of a sharded array, else the chunk shape)
 * @param rank    number of dimensions (>= 1)
 * @param nprocs  number of blocks (>= 1)
 * @param index   this block, 0 <= index < nprocs
 * @param dims    NULL or `rank` values >= 0 (see above); the product of the positive values must divide
 *                nprocs, and equal it when no value is 0
 * @param grid    NULL or receives the `rank` blocks per dimension chosen
 * @param start   receives `rank` start indices of the block
 * @param count   receives `rank` extents of the block (0 along a dimension: an empty block)
 * @param shared  NULL or receives 1 when some unit is covered by more than one block (of all blocks, not
 *                only this one; the writes then need the shard locking of libzarr), else 0
 * @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (NULL, rank 0, a zero unit, index out of range, dims that
 *          do not fit nprocs). Not collective; thread-safe.
 */
zarr_status zarr_mpi_decompose_shape(const uint64_t *shape, const uint64_t *unit, size_t rank, int nprocs,
                                     int index, const int *dims, int *grid, uint64_t *start,
                                     uint64_t *count, int *shared);

/**
 * This rank's block of `array` for the ranks of `comm`: zarr_mpi_decompose_shape() with the array's
 * shape, its chunk shape (the shard shape when it is sharded, so that blocks are shard-aligned), the
 * communicator's size and this rank.
 *
 * @param array   an open handle
 * @param dims    NULL or `rank` values (see zarr_mpi_decompose_shape())
 * @param grid    NULL or receives `rank` values
 * @param start   receives `rank` values
 * @param count   receives `rank` values
 * @param shared  NULL or receives 1 when blocks share a chunk/shard
 * @returns ZARR_OK; ZARR_ERR_INVALID_HANDLE; ZARR_ERR_INVALID_ARGUMENT.
 * Not collective (it needs only the communicator's size and rank; every rank computes the same grid).
 * Thread-safe.
 */
zarr_status zarr_mpi_decompose(MPI_Comm comm, const zarr_array *array, const int *dims, int *grid,
                               uint64_t *start, uint64_t *count, int *shared);

/**
 * Writes each rank's block: this rank writes `buffer` (C order, native-endian, the array's element type)
 * to `start .. start + count` with zarr_write_region() (independent I/O, encoded in this rank's thread
 * pool), then the ranks agree on the outcome. An empty block (a zero count) writes nothing but still
 * takes part. When blocks of different ranks share a chunk, the writes need libzarr's shard/chunk locking
 * (zarr_mpi_decompose() reports it); blocks that share none never conflict.
 *
 * @param array        this rank's handle (opened for writing)
 * @param start        `rank` start indices
 * @param count        `rank` extents
 * @param buffer       the block (caller-owned; read only)
 * @param buffer_size  product(count) * element size, in bytes
 * @returns (identical on every rank) ZARR_OK or the status of the lowest failing rank: any of
 *          zarr_write_region() (ZARR_ERR_OUT_OF_BOUNDS, ZARR_ERR_BUFFER_SIZE, ZARR_ERR_READ_ONLY, ...).
 *          A rank's failed write leaves that rank's chunks unchanged; other ranks' writes are stored.
 *          ZARR_ERR_UNSUPPORTED, before any rank writes (Since: 0.4), for a handle of zarr_mpi_open() /
 *          zarr_mpi_create*() whose array lies on Lustre mounted without `flock` (`noflock`, or neither
 *          option: the locks fail), or mounted `localflock` when the communicator spans nodes and this
 *          block covers a shard in part (the locks would not exclude other nodes); use
 *          zarr_mpi_write_all(), which takes no locks. ZARR_ERR_INVALID_ARGUMENT when the ranks are in
 *          different calls or out of step (see zarr_mpi_write_all()).
 * Collective. Thread-safe as zarr_write_region() is, for distinct communicators.
 */
zarr_status zarr_mpi_write_block(MPI_Comm comm, zarr_array *array, const uint64_t *start,
                                 const uint64_t *count, const void *buffer, size_t buffer_size);

/**
 * Reads each rank's block (any block: ranks may read blocks other ranks wrote, or overlapping ones) with
 * zarr_read_region(), then the ranks agree on the outcome.
 *
 * @param buffer  receives product(count) elements (C order, native-endian)
 * @returns (identical on every rank) ZARR_OK or the status of the lowest failing rank (any of
 *          zarr_read_region()). On failure the buffer contents are unspecified.
 * Collective. Thread-safe as zarr_read_region() is.
 */
zarr_status zarr_mpi_read_block(MPI_Comm comm, zarr_array *array, const uint64_t *start,
                                const uint64_t *count, void *buffer, size_t buffer_size);

/**
 * Collective zarr_write_hyperslab(): strided selections, buffers of any layout and numeric type (for
 * example a block held inside a larger local array with ghost cells). Arguments as
 * zarr_write_hyperslab(); returns as zarr_mpi_write_block(). Collective.
 */
zarr_status zarr_mpi_write_hyperslab(MPI_Comm comm, zarr_array *array, const uint64_t *start,
                                     const uint64_t *count, const uint64_t *step,
                                     const int64_t *buffer_stride, zarr_data_type buffer_type,
                                     const void *buffer, size_t buffer_size);

/**
 * Collective zarr_read_hyperslab(). Arguments as zarr_read_hyperslab(); returns as
 * zarr_mpi_read_block(). Collective.
 */
zarr_status zarr_mpi_read_hyperslab(MPI_Comm comm, zarr_array *array, const uint64_t *start,
                                    const uint64_t *count, const uint64_t *step,
                                    const int64_t *buffer_stride, zarr_data_type buffer_type, void *buffer,
                                    size_t buffer_size);

/**
 * Collective write of any decomposition (two-phase aggregation): each rank passes its own hyperslab,
 * with exactly the arguments of zarr_mpi_write_hyperslab() (start, count, optional step, buffer
 * strides and memory type, so a block inside a local array with halo cells needs no copy); together
 * the ranks' selections may split shards any way (uneven rows, halos cut off, ranks with nothing).
 *
 * Every shard (chunk, when the array is not sharded) has one owner among the aggregator ranks. The
 * pieces of each rank's selection travel to the owners over MPI (MPI_Alltoallv), and each owner
 * assembles, encodes and stores each of its shards once (zarr_array_write_chunk()). No lock is taken
 * and zarr.json is not re-read when the handle comes from zarr_mpi_open() / zarr_mpi_create*() /
 * zarr_mpi_resize() (the owners then store through a ZARR_COORDINATED handle opened from the same
 * document; another handle is written through as it is, with its locks). A shard the selections
 * cover together is not read; a shard they cover in part is read once by its owner and merged. Each
 * shard is replaced atomically: after a failure every shard holds its old or its new contents.
 *
 * Aggregators: by default up to 4 ranks per node (nodes from MPI_Comm_split_type(SHARED)); each owns
 * one contiguous domain of the shards (C order), in rank order; the hint `cb_nodes` sets the total (zarr_mpi_set_hints(), or the
 * environment variable ZARR_MPI_CB_NODES). An aggregator holds at most `cb_buffer_size` bytes of shards
 * per round (default 64 MiB, at least one shard; ZARR_MPI_CB_BUFFER_SIZE): more shards take more
 * rounds.
 *
 * Contributions: a rank may select nothing (a zero count; it still takes part). Two ranks selecting
 * the same element is ZARR_ERR_INVALID_ARGUMENT on every rank, found before anything is written
 * (the message names both ranks and one shared element). Every rank must pass the same array (its
 * shape, type and metadata are compared) and the same hints.
 *
 * @param comm    the communicator (every rank that opened the array)
 * @param array   this rank's handle (opened for writing)
 * @param start, count, step, buffer_stride, buffer_type, buffer, buffer_size
 *                this rank's selection and buffer, as zarr_write_hyperslab() (count 0: nothing)
 * @returns (identical on every rank) ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (bad or overlapping
 *          selections, arrays or hints differing between ranks, ranks in different collective
 *          calls); ZARR_ERR_OUT_OF_BOUNDS; ZARR_ERR_BUFFER_SIZE; ZARR_ERR_VALUE (conversion);
 *          ZARR_ERR_READ_ONLY; ZARR_ERR_UNSUPPORTED (variable-length types, irregular grids, a shard
 *          of more than 2 GiB decoded); any status of the owners' reads and writes (ZARR_ERR_IO, ...).
 *          zarr_mpi_last_error() names the failing rank.
 * Collective. Not thread-safe with other collective calls on the same communicator. Since: 0.4.
 */
zarr_status zarr_mpi_write_all(MPI_Comm comm, zarr_array *array, const uint64_t *start,
                               const uint64_t *count, const uint64_t *step, const int64_t *buffer_stride,
                               zarr_data_type buffer_type, const void *buffer, size_t buffer_size);

/**
 * Collective read of any decomposition, the mirror of zarr_mpi_write_all(): each shard the ranks'
 * selections touch is read and decoded once, by its owner, and the pieces are sent to the ranks that
 * asked for them. Selections of different ranks may overlap. Arguments as zarr_mpi_read_hyperslab().
 *
 * @returns (identical on every rank) as zarr_mpi_write_all() (without ZARR_ERR_READ_ONLY), plus
 *          ZARR_ERR_CODEC / ZARR_ERR_CHECKSUM of a shard. On failure the buffers are unspecified.
 * Collective. Not thread-safe with other collective calls on the same communicator. Since: 0.4.
 */
zarr_status zarr_mpi_read_all(MPI_Comm comm, zarr_array *array, const uint64_t *start,
                              const uint64_t *count, const uint64_t *step, const int64_t *buffer_stride,
                              zarr_data_type buffer_type, void *buffer, size_t buffer_size);

/**
 * Sets the hints of this process's later collective reads and writes (as ROMIO's): `cb_nodes` (the
 * number of aggregator ranks in all) and `cb_buffer_size` (bytes of shards an aggregator holds per
 * round). Keys that are absent return to their defaults (the environment variables
 * ZARR_MPI_CB_NODES and ZARR_MPI_CB_BUFFER_SIZE, else 4 aggregators per node and 64 MiB); other keys
 * are ignored. MPI_INFO_NULL resets both. Every rank must set the same values (compared at each
 * collective call).
 *
 * @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (a value that is not a positive integer; nothing
 *          changes). Not collective. Not thread-safe. Since: 0.4.
 */
zarr_status zarr_mpi_set_hints(MPI_Info info);

/**
 * What this process's zarr_mpi calls did since it started or since zarr_mpi_reset_stats(): the
 * counts behind the scaling model of docs/mpi.md.
 */
typedef struct zarr_mpi_stats {
    /** zarr_mpi_write_all() and zarr_mpi_read_all() calls */
    uint64_t collective_calls;
    /** metadata documents read from storage by zarr_mpi_open(), zarr_mpi_create*() and
        zarr_mpi_resize() (rank 0 reads; the others open from its document) */
    uint64_t metadata_reads;
    /** shards (chunks) this process stored as an owner */
    uint64_t shards_written;
    /** shards (chunks) this process read as an owner: each shard of a collective read, and the shards of
        a collective write that the selections cover only in part */
    uint64_t shards_read;
    /** element bytes sent to other ranks (pieces; not what a rank keeps for itself) */
    uint64_t bytes_sent;
    /** element bytes received from other ranks */
    uint64_t bytes_received;
    /** bytes of piece headers and schedules sent */
    uint64_t control_bytes_sent;
    /** element bytes this rank selected in zarr_mpi_write_all() (in the array's type) */
    uint64_t bytes_selected;
    /** exchange rounds */
    uint64_t rounds;
} zarr_mpi_stats;

/**
 * This process's counters.
 *
 * @returns ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (`stats` NULL). Not collective. Not thread-safe.
 * Since: 0.4.
 */
zarr_status zarr_mpi_get_stats(zarr_mpi_stats *stats);

/** Sets this process's counters to zero. Not collective. Not thread-safe. Since: 0.4. */
void zarr_mpi_reset_stats(void);

/**
 * Sets this process's libzarr thread count (zarr_set_num_threads()) to the node's CPUs divided by the
 * number of ranks of `comm` on the node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)), at least 1, so
 * that ranks sharing a node do not oversubscribe it; a rank bound to fewer CPUs than the node has
 * (mpiexec --bind-to core, --map-by ...:pe=N; its sched_getaffinity mask) gets one thread per CPU it is
 * bound to. ZARR_NUM_THREADS, when set, wins.
 *
 * @param threads  NULL or receives the thread count now in use
 * @returns (identical on every rank) ZARR_OK; any status of zarr_set_num_threads().
 * Collective.
 */
zarr_status zarr_mpi_balance_threads(MPI_Comm comm, size_t *threads);

/* ---- one Icechunk commit written by every rank (docs/mpi.md, "One Icechunk commit from many ranks") ---- */

/**
 * Gives every rank a fork of an Icechunk branch session, in which it writes its part of the next
 * commit. Rank 0 holds the branch session (`base`: any group opened from an `icechunk://` location of
 * a branch, e.g. where it created the arrays; other ranks pass NULL): it forks it
 * (zarr_icechunk_fork(); the fork starts from the session's state, uncommitted changes included) and
 * sends the fork to the other ranks, and every rank opens it (zarr_icechunk_open_fork()): `*fork`
 * receives the root group of this rank's fork session. Arrays opened through it
 * (zarr_group_open_array()) write into the fork; chunks go to the repository's chunk files at once,
 * nothing is visible to readers until zarr_mpi_icechunk_commit(). Ranks must write different chunks
 * (the fork of the rank merged last wins a chunk written twice). The repository's directory must be
 * visible to every rank under the same path (a shared file system).
 *
 * @param comm     the communicator
 * @param base     rank 0: a group of the branch session; other ranks: ignored (NULL)
 * @param options  store options for the forks (icechunk_authorize_virtual, ...), or NULL; copied
 * @param fork     receives this rank's fork group (close it with zarr_group_close() after
 *                 zarr_mpi_icechunk_commit()); NULL on failure
 * @returns (identical on every rank) ZARR_OK; ZARR_ERR_INVALID_ARGUMENT (`fork` NULL, `base` NULL on
 *          rank 0, not a branch session); ZARR_ERR_READ_ONLY (a tag or snapshot); ZARR_ERR_UNSUPPORTED
 *          (libzarr without the `icechunk` feature); ZARR_ERR_IO; ZARR_ERR_MEMORY.
 * Collective. Since: 0.4.
 */
zarr_status zarr_mpi_icechunk_fork(MPI_Comm comm, zarr_group *base, const zarr_store_options *options,
                                   zarr_group **fork);

/**
 * Commits what every rank wrote in its fork (zarr_mpi_icechunk_fork()) as one Icechunk snapshot, or
 * nothing. First the ranks agree on `status`, each rank's own outcome of its writes (ZARR_OK, or the
 * status of the libzarr call that failed, explained by zarr_last_error()): when any rank failed, rank 0
 * discards the branch session's changes (zarr_icechunk_discard(): the changes made before the fork
 * too) and every rank returns that rank's status: nothing is committed, the branch stays where it was.
 * Otherwise each rank sends its fork's changes (zarr_icechunk_fork_changes()) to rank 0, which merges
 * them in rank order (zarr_icechunk_merge()) and commits once with `message` and `flags`
 * (zarr_icechunk_commit(); a failure there, ZARR_ERR_CONFLICT included, discards the changes too), and
 * the new snapshot's id reaches every rank. The forks stay open and keep their changes (close them);
 * for another commit, fork again.
 *
 * @param comm              the communicator
 * @param base              rank 0: the group given to zarr_mpi_icechunk_fork(); other ranks: ignored
 * @param fork              this rank's fork group
 * @param status            this rank's outcome of its writes
 * @param message           rank 0: the commit message; other ranks: ignored (NULL)
 * @param flags             rank 0: 0 or ZARR_ICECHUNK_REBASE; other ranks: ignored
 * @param snapshot_id       NULL, or receives the new snapshot's id (20 characters and a NUL) on every rank
 * @param snapshot_id_size  the size of `snapshot_id` (at least 21 when it is not NULL)
 * @returns (identical on every rank) ZARR_OK; the failing rank's `status`; ZARR_ERR_INVALID_ARGUMENT
 *          (`fork` NULL, not a fork, `base` or `message` NULL on rank 0, `snapshot_id_size` too small,
 *          nothing to commit); ZARR_ERR_CONFLICT (another writer committed to the branch meanwhile);
 *          ZARR_ERR_IO; ZARR_ERR_MEMORY.
 * Collective. Since: 0.4.
 */
zarr_status zarr_mpi_icechunk_commit(MPI_Comm comm, zarr_group *base, zarr_group *fork, zarr_status status,
                                     const char *message, int flags, char *snapshot_id, size_t snapshot_id_size);

#ifdef __cplusplus
}
#endif

#endif /* ZARR_MPI_H */
