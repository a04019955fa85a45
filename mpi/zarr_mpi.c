/* libzarr_mpi: collective creation, decomposition and block I/O of Zarr arrays over MPI (zarr_mpi.h).
 *
 * Built on libzarr's public C API only. Every collective call follows one pattern: check this rank's
 * arguments, agree (zarr_mpi_agree(): an MPI_Allreduce(MIN) of "the first failing rank" plus a broadcast
 * of that rank's status and message), do the work, agree again. A rank that fails early still takes
 * part in every later agreement of the call, so no rank waits for one that has left. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT, nftw */
#include "zarr_mpi_internal.h"

#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sched.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ZARR_MPI_MSG_MAX 1024

/* This thread's last message (zarr_mpi_last_error()). */
static _Thread_local char last_error[ZARR_MPI_MSG_MAX + 160];

static zarr_status fail(zarr_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static zarr_status fail(zarr_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

zarr_status zarr_mpi_i_fail(zarr_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

/* A libzarr call's status; on failure its message becomes this thread's local message. */
static zarr_status lib(zarr_status st, const char *what) {
    if (st != ZARR_OK) {
        return fail(st, "%s: %s", what, zarr_last_error());
    }
    return st;
}

const char *zarr_mpi_last_error(void) { return last_error; }

zarr_status zarr_mpi_i_lib(zarr_status st, const char *what) { return lib(st, what); }

/* MPI failed (with an error handler that returns): reported as ZARR_ERR_IO. */
static zarr_status mpi_failed(int rc, const char *what) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) {
        snprintf(text, sizeof text, "MPI error %d", rc);
    }
    return fail(ZARR_ERR_IO, "%s: %s", what, text);
}

/* The agreement. `own_message`: this rank's failure is explained by last_error (set by fail() within the
   calling zarr_mpi_* function: the internal agreements), else by zarr_last_error() (a caller's libzarr
   call, zarr_mpi_agree()). */
static zarr_status agree(MPI_Comm comm, zarr_status local, int own_message) {
    int me = 0, size = 0, rc;
    if (comm == MPI_COMM_NULL) {
        return fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi: the communicator is MPI_COMM_NULL");
    }
    if ((rc = MPI_Comm_rank(comm, &me)) != MPI_SUCCESS || (rc = MPI_Comm_size(comm, &size)) != MPI_SUCCESS) {
        return mpi_failed(rc, "zarr_mpi: MPI_Comm_rank/size");
    }
    int mine = local == ZARR_OK ? INT_MAX : me, first = INT_MAX;
    if ((rc = MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm)) != MPI_SUCCESS) {
        return mpi_failed(rc, "zarr_mpi: MPI_Allreduce");
    }
    if (first == INT_MAX) {
        return ZARR_OK;
    }
    /* The failing rank's status and message, to everyone. */
    char msg[sizeof last_error];
    int32_t st = local;
    if (me == first) {
        if (snprintf(msg, sizeof msg, "%s", own_message ? last_error : zarr_last_error()) < 0) {
            msg[0] = '\0';
        }
    }
    if ((rc = MPI_Bcast(&st, 1, MPI_INT32_T, first, comm)) != MPI_SUCCESS ||
        (rc = MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, comm)) != MPI_SUCCESS) {
        return mpi_failed(rc, "zarr_mpi: MPI_Bcast");
    }
    msg[sizeof msg - 1] = '\0';
    /* "rank R of N: <status>: <message>" (a longer message is cut; snprintf's count is not needed). */
    if (snprintf(last_error, sizeof last_error, "rank %d of %d: %s: %s", first, size, zarr_status_name(st), msg) <
        0) {
        last_error[0] = '\0';
    }
    return st;
}

zarr_status zarr_mpi_agree(MPI_Comm comm, zarr_status local) { return agree(comm, local, 0); }

zarr_status zarr_mpi_i_agree(MPI_Comm comm, zarr_status local) { return agree(comm, local, 1); }

zarr_status zarr_mpi_i_mpi_failed(int rc, const char *what) { return mpi_failed(rc, what); }

zarr_status zarr_mpi_agree_message(MPI_Comm comm, zarr_status local, const char *message) {
    if (local != ZARR_OK && message != NULL) {
        fail(local, "%s", message);
        return agree(comm, local, 1);
    }
    return agree(comm, local, 0);
}

/* FNV-1a, to compare strings between ranks without sending them. */
static uint64_t hash_bytes(const void *data, size_t n, uint64_t h) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

/* The two ranks whose values differed at the last same_everywhere() that found a difference. */
static _Thread_local int differing[2];

/* Whether `value` is the same on every rank (collective; `value` is meaningful only when `valid`: failing
   ranks take part with neutral values). When not, differing[] names two ranks whose values differ (those
   with the smallest and the largest). Returns ZARR_OK or the MPI failure. */
static zarr_status same_everywhere(MPI_Comm comm, uint64_t value, int valid, int *same) {
    struct {
        long v;
        int r;
    } lo, hi, mn, mx;
    int me = 0, rc;
    MPI_Comm_rank(comm, &me);
    lo.v = valid ? (long)value : LONG_MAX;
    hi.v = valid ? (long)value : LONG_MIN;
    lo.r = hi.r = me;
    if ((rc = MPI_Allreduce(&lo, &mn, 1, MPI_LONG_INT, MPI_MINLOC, comm)) != MPI_SUCCESS ||
        (rc = MPI_Allreduce(&hi, &mx, 1, MPI_LONG_INT, MPI_MAXLOC, comm)) != MPI_SUCCESS) {
        return mpi_failed(rc, "zarr_mpi: MPI_Allreduce");
    }
    *same = mn.v == mx.v || mn.v == LONG_MAX;
    differing[0] = mn.r;
    differing[1] = mx.r;
    return ZARR_OK;
}

static uint64_t hash_str(const char *s) { return hash_bytes(s, strlen(s) + 1, 1469598103934665603ull); }

uint64_t zarr_mpi_i_hash(const void *data, size_t n, uint64_t h) { return hash_bytes(data, n, h); }

uint64_t zarr_mpi_i_hash_str(const char *s) { return hash_str(s); }

/* Rank 0 holds `a0` (opened or created, agreed on); every other rank opens its handle from rank 0's
   metadata document, sent over MPI, without touching storage (zarr_open_with_metadata()). Arrays whose
   document does not describe them whole (Zarr v2, v1: attributes apart) are opened by each rank. Sets
   *out on every rank (a0 on rank 0) and returns this rank's status (not yet agreed). */
static zarr_status open_from_root(MPI_Comm comm, int me, zarr_array *a0, const char *path, int mode,
                                  const char *what, zarr_array **out) {
    char *doc = NULL;
    uint64_t len = 0;
    int rc, format = 0;
    if (me == 0 && zarr_array_zarr_format(a0, &format) == ZARR_OK && format == 3 &&
        zarr_array_metadata(a0, &doc) == ZARR_OK && strlen(doc) < (size_t)INT_MAX) {
        len = strlen(doc) + 1;
    }
    if ((rc = MPI_Bcast(&len, 1, MPI_UINT64_T, 0, comm)) != MPI_SUCCESS) {
        zarr_string_free(doc);
        return mpi_failed(rc, what);
    }
    char *text = me == 0 ? doc : len > 0 ? malloc((size_t)len) : NULL;
    if (len > 0) {
        if (text == NULL) {
            fprintf(stderr, "%s: out of memory (a metadata document of %llu bytes)\n", what, (unsigned long long)len);
            MPI_Abort(comm, 1);
        }
        if ((rc = MPI_Bcast(text, (int)len, MPI_CHAR, 0, comm)) != MPI_SUCCESS) {
            if (me != 0) {
                free(text);
            }
            zarr_string_free(doc);
            return mpi_failed(rc, what);
        }
    }
    zarr_status st = ZARR_OK;
    if (me == 0) {
        *out = a0;
    } else if (len > 0) {
        text[len - 1] = '\0';
        st = zarr_open_with_metadata(path, mode, text, out);
        if (st != ZARR_OK) {
            fail(st, "%s: zarr_open_with_metadata: %s", what, zarr_last_error());
        }
        free(text);
    } else {
        st = zarr_open(path, mode, out);
        zarr_mpi_i_stats.metadata_reads++;
        if (st != ZARR_OK) {
            fail(st, "%s: zarr_open: %s", what, zarr_last_error());
        }
    }
    zarr_string_free(doc);
    return st;
}

/* ZARR_READ_WRITE of a local directory the process cannot write fails at open (as in HDF5 and netCDF),
   not at the first write. */
static zarr_status check_writable(const char *path, const char *what) {
    const char *dir = path;
    if (strncmp(path, "file://", 7) == 0) {
        dir = path + 7;
    } else if (strstr(path, "://") != NULL) {
        return ZARR_OK; /* other stores say so themselves */
    }
    if (access(dir, W_OK) != 0 && (errno == EACCES || errno == EROFS || errno == EPERM)) {
        return fail(ZARR_ERR_READ_ONLY, "%s: %s is not writable (%s), but ZARR_READ_WRITE was asked for", what, dir,
                    strerror(errno));
    }
    return ZARR_OK;
}

/* ---- creation, replacing what is there (ZARR_MPI_CLOBBER) ------------------------------------- */

/* The local directory of `path` (a plain path or file://), or NULL for another store. */
static const char *local_dir(const char *path) {
    if (strncmp(path, "file://", 7) == 0) {
        return path + 7;
    }
    return strstr(path, "://") == NULL ? path : NULL;
}

static int remove_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(p); /* FTW_PHYS: a link is removed as a link, its target left alone */
}

/* Rank 0 of a create with ZARR_MPI_CLOBBER: when an array or group is at `path` (a local directory), it is
   moved aside (renamed within its parent directory) so that zarr_create can make the new one; *aside
   receives that name (malloc'd; NULL when nothing was there). Nothing else (a directory without Zarr
   metadata, a file) is touched: zarr_create then says what it finds. */
static zarr_status move_aside(const char *path, const char *what, char **aside) {
    zarr_node_type type;
    *aside = NULL;
    zarr_status st = zarr_node_type_at(path, &type);
    if (st == ZARR_ERR_NOT_FOUND) {
        return ZARR_OK;
    }
    if (st != ZARR_OK) {
        return fail(st, "%s: ZARR_MPI_CLOBBER: %s: %s", what, path, zarr_last_error());
    }
    const char *dir = local_dir(path);
    if (dir == NULL) {
        return fail(ZARR_ERR_UNSUPPORTED, "%s: ZARR_MPI_CLOBBER replaces local directories only, and %s holds an %s",
                    what, path, type == ZARR_NODE_ARRAY ? "array" : "group");
    }
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') {
        n--; /* "out.zarr/" is moved as "out.zarr" */
    }
    static unsigned serial = 0;
    size_t cap = n + 64;
    char *from = malloc(n + 1), *to = malloc(cap);
    if (from == NULL || to == NULL) {
        free(from), free(to);
        return fail(ZARR_ERR_INTERNAL, "%s: out of memory", what);
    }
    memcpy(from, dir, n);
    from[n] = '\0';
    snprintf(to, cap, "%s.clobbered-%ld-%u", from, (long)getpid(), serial++);
    if (rename(from, to) != 0) {
        st = fail(ZARR_ERR_IO, "%s: ZARR_MPI_CLOBBER: cannot move the %s at %s aside (%s); nothing was changed", what,
                  type == ZARR_NODE_ARRAY ? "array" : "group", from, strerror(errno));
        free(from), free(to);
        return st;
    }
    free(from);
    *aside = to;
    return ZARR_OK;
}

/* libzarr's message for a failed create at `path`, or, when the failure is that a local directory could
   not be written, one naming that directory (the deepest existing one on the way to `path`), not a file
   that would have been made in it. */
static const char *creation_message(const char *path, zarr_status st) {
    static _Thread_local char text[2 * PATH_MAX + 160];
    const char *dir = local_dir(path);
    if (dir == NULL || st == ZARR_ERR_EXISTS || st == ZARR_ERR_INVALID_ARGUMENT || st == ZARR_ERR_METADATA) {
        return zarr_last_error();
    }
    char probe[PATH_MAX];
    struct stat sb;
    if (snprintf(probe, sizeof probe, "%s", dir) >= (int)sizeof probe) {
        return zarr_last_error();
    }
    /* The deepest existing ancestor (the path itself when it exists). */
    for (;;) {
        size_t n = strlen(probe);
        while (n > 1 && probe[n - 1] == '/') {
            probe[--n] = '\0';
        }
        if (stat(probe, &sb) == 0) {
            break;
        }
        char *slash = strrchr(probe, '/');
        if (slash == NULL) {
            snprintf(probe, sizeof probe, ".");
            break;
        }
        if (slash == probe) {
            probe[1] = '\0';
            break;
        }
        *slash = '\0';
    }
    if (access(probe, W_OK) == 0) {
        return zarr_last_error();
    }
    int err = errno;
    snprintf(text, sizeof text, "cannot create %s: the directory %s is not writable (%s)", path, probe,
             strerror(err));
    return text;
}

/* After the create: the replaced node is deleted (created == 1), or put back (the create failed). */
static zarr_status settle_aside(const char *path, char *aside, int created, const char *what, zarr_status st) {
    if (aside == NULL) {
        return st;
    }
    const char *dir = local_dir(path);
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') {
        n--;
    }
    if (!created) {
        char *back = strndup(dir, n);
        if (back == NULL || rename(aside, back) != 0) {
            /* (st stays the create's failure; this message says where the old node is) */
            fail(st, "%s: %s; the replaced node could not be put back, it is at %s", what, zarr_last_error(), aside);
        }
        free(back);
    } else if (nftw(aside, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
        st = fail(ZARR_ERR_IO, "%s: created, but the replaced node moved aside to %s could not be deleted (%s)", what,
                  aside, strerror(errno));
    }
    free(aside);
    return st;
}

/* The collective creation behind zarr_mpi_create() and zarr_mpi_create_from_spec(): `metadata_json` is
   the document (compared between ranks); rank 0 creates the array from `spec` when it is not NULL (so
   that the spec's own rules apply: v2 attributes in .zattrs, ...), else from `metadata_json`. `what` names
   the caller in messages; `bad_args` is this rank's argument failure (already reported with fail()). */
static zarr_status create_collective(MPI_Comm comm, const char *what, int op, zarr_status bad_args, const char *path,
                                     const char *metadata_json, const zarr_array_spec *spec, int flags,
                                     zarr_array **out) {
    int me = 0, rc, same_path = 1, same_meta = 1, same_flags = 1;
    zarr_status st = bad_args;
    zarr_status begun = zarr_mpi_i_begin(comm, op);
    if (begun != ZARR_OK) {
        return begun;
    }
    if ((rc = MPI_Comm_rank(comm, &me)) != MPI_SUCCESS) {
        return mpi_failed(rc, what);
    }
    int valid = st == ZARR_OK;
    zarr_status ms = same_everywhere(comm, valid ? hash_str(path) : 0, valid, &same_path);
    int path_ranks[2] = {differing[0], differing[1]};
    if (ms == ZARR_OK) {
        ms = same_everywhere(comm, valid ? hash_str(metadata_json) : 0, valid, &same_meta);
    }
    int meta_ranks[2] = {differing[0], differing[1]};
    if (ms == ZARR_OK) {
        ms = same_everywhere(comm, (uint64_t)(unsigned)flags, valid, &same_flags);
    }
    if (!same_path) {
        differing[0] = path_ranks[0], differing[1] = path_ranks[1];
    } else if (!same_meta) {
        differing[0] = meta_ranks[0], differing[1] = meta_ranks[1];
    }
    if (ms != ZARR_OK) {
        return ms;
    }
    if (st == ZARR_OK && (!same_path || !same_meta || !same_flags)) {
        st = fail(ZARR_ERR_INVALID_ARGUMENT, "%s: %s differs between ranks (rank %d's and rank %d's differ)", what,
                  !same_path                            ? "path"
                  : same_meta                           ? "flags (ZARR_MPI_CLOBBER)"
                  : op == ZARR_MPI_I_OP_CREATE_FROM_SPEC ? "the spec (its metadata document)"
                                                         : "metadata_json",
                  differing[0], differing[1]);
    }
    if (st == ZARR_OK && (flags & ~ZARR_MPI_CLOBBER) != 0) {
        st = fail(ZARR_ERR_INVALID_ARGUMENT, "%s: unknown flags 0x%x (0 or ZARR_MPI_CLOBBER)", what,
                  (unsigned)flags);
    }
    if ((st = agree(comm, st, 1)) != ZARR_OK) {
        return st;
    }
    /* Rank 0 writes the metadata; the others open what it wrote. */
    zarr_array *a = NULL;
    if (me == 0) {
        char *aside = NULL;
        st = flags & ZARR_MPI_CLOBBER ? move_aside(path, what, &aside) : ZARR_OK;
        if (st == ZARR_OK) {
            st = spec != NULL ? zarr_create_from_spec(path, spec, &a) : zarr_create(path, metadata_json, &a);
            if (st != ZARR_OK) {
                fail(st, "%s: %s: %s", what, spec != NULL ? "zarr_create_from_spec" : "zarr_create",
                     creation_message(path, st));
                if (st == ZARR_ERR_EXISTS) {
                    fail(st, "%s: %s: %s (pass ZARR_MPI_CLOBBER to replace it)", what,
                         spec != NULL ? "zarr_create_from_spec" : "zarr_create", zarr_last_error());
                }
            }
            st = settle_aside(path, aside, st == ZARR_OK, what, st);
        }
    }
    if ((st = agree(comm, st, 1)) != ZARR_OK) {
        zarr_close(a);
        return st;
    }
    st = open_from_root(comm, me, a, path, ZARR_READ_WRITE, what, &a);
    if (st == ZARR_OK) {
        st = zarr_mpi_i_register(a, path, ZARR_READ_WRITE);
    }
    if ((st = agree(comm, st, 1)) != ZARR_OK) {
        zarr_mpi_i_unregister(a);
        zarr_close(a);
        return st;
    }
    *out = a;
    return ZARR_OK;
}

zarr_status zarr_mpi_create(MPI_Comm comm, const char *path, const char *metadata_json, zarr_array **out) {
    zarr_status st = ZARR_OK;
    if (out != NULL) {
        *out = NULL;
    }
    if (comm == MPI_COMM_NULL) {
        return fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_create: the communicator is MPI_COMM_NULL");
    }
    if (path == NULL || metadata_json == NULL || out == NULL) {
        st = fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_create: %s is NULL",
                  path == NULL ? "path" : metadata_json == NULL ? "metadata_json" : "out");
    }
    return create_collective(comm, "zarr_mpi_create", ZARR_MPI_I_OP_CREATE, st, path, metadata_json, NULL, 0, out);
}

zarr_status zarr_mpi_create_with_flags(MPI_Comm comm, const char *path, const char *metadata_json, int flags,
                                       zarr_array **out) {
    zarr_status st = ZARR_OK;
    if (out != NULL) {
        *out = NULL;
    }
    if (comm == MPI_COMM_NULL) {
        return fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_create_with_flags: the communicator is MPI_COMM_NULL");
    }
    if (path == NULL || metadata_json == NULL || out == NULL) {
        st = fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_create_with_flags: %s is NULL",
                  path == NULL ? "path" : metadata_json == NULL ? "metadata_json" : "out");
    }
    return create_collective(comm, "zarr_mpi_create_with_flags", ZARR_MPI_I_OP_CREATE, st, path, metadata_json, NULL,
                             flags, out);
}

static zarr_status create_from_spec(MPI_Comm comm, const char *what, const char *path, const zarr_array_spec *spec,
                                    int flags, zarr_array **out) {
    zarr_status st = ZARR_OK;
    char *json = NULL;
    if (out != NULL) {
        *out = NULL;
    }
    if (comm == MPI_COMM_NULL) {
        return fail(ZARR_ERR_INVALID_ARGUMENT, "%s: the communicator is MPI_COMM_NULL", what);
    }
    if (path == NULL || spec == NULL || out == NULL) {
        st = fail(ZARR_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what,
                  path == NULL ? "path" : spec == NULL ? "spec" : "out");
    } else if ((st = zarr_array_spec_to_json(spec, &json)) != ZARR_OK) {
        fail(st, "%s: zarr_array_spec_to_json: %s", what, zarr_last_error());
    }
    st = create_collective(comm, what, ZARR_MPI_I_OP_CREATE_FROM_SPEC, st, path, json, spec, flags, out);
    zarr_string_free(json);
    return st;
}

zarr_status zarr_mpi_create_from_spec(MPI_Comm comm, const char *path, const zarr_array_spec *spec,
                                      zarr_array **out) {
    return create_from_spec(comm, "zarr_mpi_create_from_spec", path, spec, 0, out);
}

zarr_status zarr_mpi_create_from_spec_with_flags(MPI_Comm comm, const char *path, const zarr_array_spec *spec,
                                                 int flags, zarr_array **out) {
    return create_from_spec(comm, "zarr_mpi_create_from_spec_with_flags", path, spec, flags, out);
}

zarr_status zarr_mpi_open(MPI_Comm comm, const char *path, int mode, zarr_array **out) {
    zarr_status st = ZARR_OK;
    int same_path = 1, same_mode = 1;
    if (out != NULL) {
        *out = NULL;
    }
    if (comm == MPI_COMM_NULL) {
        return fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_open: the communicator is MPI_COMM_NULL");
    }
    zarr_status begun = zarr_mpi_i_begin(comm, ZARR_MPI_I_OP_OPEN);
    if (begun != ZARR_OK) {
        return begun;
    }
    if (path == NULL || out == NULL) {
        st = fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_open: %s is NULL", path == NULL ? "path" : "out");
    } else if (mode != ZARR_READ && mode != ZARR_READ_WRITE) {
        st = fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_open: mode %d is neither ZARR_READ nor ZARR_READ_WRITE",
                  mode);
    }
    int valid = st == ZARR_OK;
    zarr_status ms = same_everywhere(comm, valid ? hash_str(path) : 0, valid, &same_path);
    int path_ranks[2] = {differing[0], differing[1]};
    if (ms == ZARR_OK) {
        ms = same_everywhere(comm, (uint64_t)(unsigned)mode, valid, &same_mode);
    }
    if (!same_path) {
        differing[0] = path_ranks[0], differing[1] = path_ranks[1];
    }
    if (ms != ZARR_OK) {
        return ms;
    }
    if (st == ZARR_OK && (!same_path || !same_mode)) {
        st = fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_open: %s differs between ranks (rank %d's and rank %d's differ)",
                  !same_path ? "path" : "mode", differing[0], differing[1]);
    }
    if ((st = agree(comm, st, 1)) != ZARR_OK) {
        return st;
    }
    /* Rank 0 reads the metadata; the others open from its document (one metadata read per job). */
    zarr_array *a = NULL;
    int me = 0;
    MPI_Comm_rank(comm, &me);
    if (me == 0) {
        st = mode == ZARR_READ_WRITE ? check_writable(path, "zarr_mpi_open") : ZARR_OK;
        if (st == ZARR_OK) {
            st = lib(zarr_open(path, mode, &a), "zarr_mpi_open: zarr_open");
            zarr_mpi_i_stats.metadata_reads++;
        }
    }
    if ((st = agree(comm, st, 1)) != ZARR_OK) {
        zarr_close(a);
        return st;
    }
    st = open_from_root(comm, me, a, path, mode, "zarr_mpi_open", &a);
    if (st == ZARR_OK) {
        st = zarr_mpi_i_register(a, path, mode);
    }
    if ((st = agree(comm, st, 1)) != ZARR_OK) {
        zarr_mpi_i_unregister(a);
        zarr_close(a);
        return st;
    }
    *out = a;
    return ZARR_OK;
}

zarr_status zarr_mpi_close(MPI_Comm comm, zarr_array *array) {
    zarr_status begun = zarr_mpi_i_begin(comm, ZARR_MPI_I_OP_CLOSE);
    if (begun != ZARR_OK) {
        return begun;
    }
    /* Everyone arrives first: no rank closes (and, say, lets the job go on to read) while others write. */
    zarr_status st = agree(comm, ZARR_OK, 1);
    zarr_mpi_i_unregister(array);
    zarr_status cs = array == NULL ? ZARR_OK : lib(zarr_close(array), "zarr_mpi_close: zarr_close");
    if (st != ZARR_OK) {
        return st;
    }
    return agree(comm, cs, 1);
}

zarr_status zarr_mpi_resize(MPI_Comm comm, const char *path, zarr_array **array, const uint64_t *shape,
                            size_t rank) {
    int me = 0, rc, same = 1;
    zarr_status st = ZARR_OK;
    size_t have = 0;
    if (comm == MPI_COMM_NULL) {
        return fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_resize: the communicator is MPI_COMM_NULL");
    }
    zarr_status begun = zarr_mpi_i_begin(comm, ZARR_MPI_I_OP_RESIZE);
    if (begun != ZARR_OK) {
        return begun;
    }
    if ((rc = MPI_Comm_rank(comm, &me)) != MPI_SUCCESS) {
        return mpi_failed(rc, "zarr_mpi_resize: MPI_Comm_rank");
    }
    if (path == NULL && array != NULL && *array != NULL) {
        path = zarr_mpi_i_path(*array); /* a handle of zarr_mpi_open / zarr_mpi_create knows its path */
    }
    if (path == NULL || array == NULL || *array == NULL || shape == NULL) {
        st = fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_resize: %s is NULL",
                  path == NULL ? "path (and the handle is not one of zarr_mpi_open / zarr_mpi_create)"
                  : array == NULL || *array == NULL ? "array" : "shape");
    } else if ((st = lib(zarr_array_rank(*array, &have), "zarr_mpi_resize: zarr_array_rank")) == ZARR_OK &&
               have != rank) {
        st = fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_resize: rank %zu given for an array of rank %zu", rank, have);
    }
    int valid = st == ZARR_OK;
    uint64_t h = valid ? hash_bytes(shape, rank * sizeof *shape, hash_str(path)) : 0;
    zarr_status ms = same_everywhere(comm, h, valid, &same);
    if (ms != ZARR_OK) {
        return ms;
    }
    if (st == ZARR_OK && !same) {
        st = fail(ZARR_ERR_INVALID_ARGUMENT,
                  "zarr_mpi_resize: path or shape differs between ranks (rank %d's and rank %d's differ)",
                  differing[0], differing[1]);
    }
    if ((st = agree(comm, st, 1)) != ZARR_OK) {
        return st;
    }
    /* The path outlives the old handle's registration. */
    char *where = strdup(path);
    if (me == 0) {
        st = where == NULL ? fail(ZARR_ERR_INTERNAL, "zarr_mpi_resize: out of memory")
                           : lib(zarr_array_resize(*array, shape, rank), "zarr_mpi_resize: zarr_array_resize");
        zarr_mpi_i_stats.metadata_reads++; /* the resize starts from the stored document */
    }
    if ((st = agree(comm, st, 1)) != ZARR_OK) {
        free(where);
        return st;
    }
    /* The other ranks take the new document from rank 0 (no storage read). */
    zarr_array *fresh = NULL;
    st = open_from_root(comm, me, *array, where, ZARR_READ_WRITE, "zarr_mpi_resize", &fresh);
    if (st == ZARR_OK && me != 0) {
        int mode = zarr_mpi_i_mode(*array);
        zarr_mpi_i_unregister(*array);
        zarr_close(*array);
        *array = fresh;
        if (mode >= 0) {
            st = zarr_mpi_i_register(fresh, where, mode);
        }
    }
    /* (every rank's handle, new or kept, finds its lock scope again at its next write, together) */
    zarr_mpi_i_forget_lock_scope(*array);
    free(where);
    return agree(comm, st, 1);
}

/* ---- decomposition ---------------------------------------------------------------------------- */

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* floor(i * n / p) without overflow for the sizes arrays have (n < 2^64, p < 2^31). */
static uint64_t split_point(uint64_t n, uint64_t i, uint64_t p) {
    return (n / p) * i + ((n % p) * i) / p;
}

zarr_status zarr_mpi_decompose_shape(const uint64_t *shape, const uint64_t *unit, size_t rank, int nprocs,
                                     int index, const int *dims, int *grid, uint64_t *start,
                                     uint64_t *count, int *shared) {
    if (shape == NULL || unit == NULL || start == NULL || count == NULL) {
        return fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_decompose: %s is NULL",
                    shape == NULL ? "shape" : unit == NULL ? "unit" : start == NULL ? "start" : "count");
    }
    if (rank == 0 || rank > 64) {
        return fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_decompose: rank %zu (1 to 64 supported)", rank);
    }
    if (nprocs < 1 || index < 0 || index >= nprocs) {
        return fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_decompose: block %d of %d", index, nprocs);
    }
    int p[64];
    uint64_t units[64];
    long fixed = 1;
    int free_dims = 0;
    for (size_t d = 0; d < rank; d++) {
        if (unit[d] == 0) {
            return fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_decompose: unit extent 0 along dimension %zu", d);
        }
        units[d] = ceil_div(shape[d], unit[d]);
        p[d] = dims == NULL ? 0 : dims[d];
        if (p[d] < 0) {
            return fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_decompose: dims[%zu] = %d is negative", d, p[d]);
        }
        if (p[d] > 0) {
            fixed *= p[d];
            if (fixed > nprocs) {
                break;
            }
        } else {
            free_dims++;
        }
    }
    if (fixed > nprocs || nprocs % fixed != 0 || (free_dims == 0 && fixed != nprocs)) {
        return fail(ZARR_ERR_INVALID_ARGUMENT,
                    "zarr_mpi_decompose: the fixed process grid (product %ld) does not fit %d processes", fixed,
                    nprocs);
    }
    /* The remaining factor, prime by prime (largest first), to the free dimension with the most units per
       block (the first such dimension on ties: splitting the slowest dimension keeps blocks contiguous). */
    if (free_dims > 0) {
        int q[64];
        for (size_t d = 0; d < rank; d++) {
            q[d] = p[d] > 0 ? p[d] : 1;
        }
        int rest = (int)(nprocs / fixed), primes[32], np = 0;
        for (int f = 2; (long)f * f <= rest; f++) {
            while (rest % f == 0) {
                primes[np++] = f;
                rest /= f;
            }
        }
        if (rest > 1) {
            primes[np++] = rest;
        }
        for (int k = np - 1; k >= 0; k--) {
            size_t best = rank;
            double best_per = -1.0;
            for (size_t d = 0; d < rank; d++) {
                if (p[d] > 0) {
                    continue;
                }
                double per = (double)units[d] / q[d];
                if (per > best_per) {
                    best_per = per;
                    best = d;
                }
            }
            q[best] *= primes[k];
        }
        for (size_t d = 0; d < rank; d++) {
            p[d] = q[d];
        }
    }
    /* This block's coordinates (C order), then its extent along each dimension. */
    int rem = index, any_shared = 0;
    int coord[64];
    for (size_t d = rank; d-- > 0;) {
        coord[d] = rem % p[d];
        rem /= p[d];
    }
    for (size_t d = 0; d < rank; d++) {
        uint64_t lo, hi;
        if ((uint64_t)p[d] <= units[d]) {
            lo = split_point(units[d], (uint64_t)coord[d], (uint64_t)p[d]) * unit[d];
            hi = split_point(units[d], (uint64_t)coord[d] + 1, (uint64_t)p[d]) * unit[d];
        } else {
            /* More blocks than units: split the elements; neighbours then share units. */
            lo = split_point(shape[d], (uint64_t)coord[d], (uint64_t)p[d]);
            hi = split_point(shape[d], (uint64_t)coord[d] + 1, (uint64_t)p[d]);
            /* Shared when two non-empty neighbouring blocks meet inside a unit. */
            for (int i = 1; i < p[d]; i++) {
                uint64_t b = split_point(shape[d], (uint64_t)i, (uint64_t)p[d]);
                uint64_t before = split_point(shape[d], (uint64_t)i - 1, (uint64_t)p[d]);
                if (b % unit[d] != 0 && b > before && b < shape[d]) {
                    any_shared = 1;
                }
            }
        }
        if (hi > shape[d]) {
            hi = shape[d];
        }
        if (lo > hi) {
            lo = hi;
        }
        start[d] = lo;
        count[d] = hi - lo;
        if (grid != NULL) {
            grid[d] = p[d];
        }
    }
    if (shared != NULL) {
        *shared = any_shared;
    }
    return ZARR_OK;
}

zarr_status zarr_mpi_decompose(MPI_Comm comm, const zarr_array *array, const int *dims, int *grid,
                               uint64_t *start, uint64_t *count, int *shared) {
    int me = 0, size = 0, rc;
    size_t rank = 0;
    zarr_status st;
    if (comm == MPI_COMM_NULL) {
        return fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_decompose: the communicator is MPI_COMM_NULL");
    }
    if ((rc = MPI_Comm_rank(comm, &me)) != MPI_SUCCESS || (rc = MPI_Comm_size(comm, &size)) != MPI_SUCCESS) {
        return mpi_failed(rc, "zarr_mpi_decompose: MPI_Comm_rank/size");
    }
    if ((st = lib(zarr_array_rank(array, &rank), "zarr_mpi_decompose")) != ZARR_OK) {
        return st;
    }
    if (rank == 0 || rank > 64) {
        return fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_decompose: an array of rank %zu (1 to 64 supported)", rank);
    }
    uint64_t shape[64], unit[64];
    if ((st = lib(zarr_array_shape(array, shape, rank), "zarr_mpi_decompose")) != ZARR_OK ||
        (st = lib(zarr_array_chunk_shape(array, unit, rank), "zarr_mpi_decompose")) != ZARR_OK) {
        return st;
    }
    return zarr_mpi_decompose_shape(shape, unit, rank, size, me, dims, grid, start, count, shared);
}

/* ---- block I/O -------------------------------------------------------------------------------- */

/* Whether writing `count` elements from `start` every `step` (NULL: 1) covers some shard (chunk) of
   `array` in part: a read-modify-write of a shard other ranks may write too. 0 when the arguments are
   not usable (the write then says why). */
static int splits_shards(const zarr_array *array, const uint64_t *start, const uint64_t *count,
                         const uint64_t *step) {
    size_t r = 0;
    uint64_t shape[64], shard[64];
    if (start == NULL || count == NULL || zarr_array_rank(array, &r) != ZARR_OK || r == 0 || r > 64 ||
        zarr_array_shape(array, shape, r) != ZARR_OK || zarr_array_chunk_shape(array, shard, r) != ZARR_OK) {
        return 0;
    }
    for (size_t d = 0; d < r; d++) {
        if (count[d] == 0) {
            return 0; /* nothing written */
        }
    }
    for (size_t d = 0; d < r; d++) {
        uint64_t k = step != NULL ? step[d] : 1, n = shard[d];
        if (n <= 1) {
            continue;
        }
        if (k != 1 && count[d] > 1) {
            return 1;
        }
        uint64_t hi = start[d] + count[d];
        if (start[d] % n != 0 || (hi % n != 0 && hi < shape[d])) {
            return 1;
        }
    }
    return 0;
}

/* Before an independent write (which locks shards with fcntl, see concurrency.md): refuses, on every
   rank, what those locks cannot make safe at the array's location (zarr_mpi_lockscope.c): any write on
   Lustre mounted without flock (the locks fail there), and on Lustre mounted localflock, when the job
   spans nodes, a write that covers a shard in part (ranks on other nodes writing the rest of it would
   not be excluded). Collective (for zarr_mpi handles; nothing for others). */
static zarr_status check_locks(MPI_Comm comm, zarr_array *array, const uint64_t *start, const uint64_t *count,
                               const uint64_t *step, const char *what) {
    int scope = ZARR_MPI_I_LOCKS_CLUSTER, spans = 0;
    const char *mount = "";
    zarr_status st = zarr_mpi_i_handle_lock_scope(comm, array, &scope, &spans, &mount);
    if (st != ZARR_OK || scope == ZARR_MPI_I_LOCKS_CLUSTER || (scope == ZARR_MPI_I_LOCKS_NODE && !spans)) {
        return st;
    }
    const char *path = zarr_mpi_i_path(array);
    zarr_status local = ZARR_OK;
    if (scope == ZARR_MPI_I_LOCKS_NONE) {
        local = fail(ZARR_ERR_UNSUPPORTED,
                     "%s: %s is on %s: fcntl locks fail there, and independent writes lock the shards they "
                     "write; write with zarr_mpi_write_all (no locks), or mount with -o flock", what, path, mount);
    } else if (splits_shards(array, start, count, step)) {
        local = fail(ZARR_ERR_UNSUPPORTED,
                     "%s: %s is on %s, where fcntl locks hold within a node only, and this job spans nodes: "
                     "this selection covers a shard in part, and ranks on other nodes writing the rest of it "
                     "could lose updates; write with zarr_mpi_write_all (no locks), decompose along the "
                     "shards (zarr_mpi_decompose), or mount with -o flock", what, path, mount);
    }
    return agree(comm, local, 1);
}

zarr_status zarr_mpi_write_block(MPI_Comm comm, zarr_array *array, const uint64_t *start,
                                 const uint64_t *count, const void *buffer, size_t buffer_size) {
    zarr_status begun = zarr_mpi_i_begin(comm, ZARR_MPI_I_OP_WRITE_BLOCK);
    if (begun != ZARR_OK) {
        return begun;
    }
    zarr_status locks = check_locks(comm, array, start, count, NULL, "zarr_mpi_write_block");
    if (locks != ZARR_OK) {
        return locks;
    }
    zarr_status st = lib(zarr_write_region(array, start, count, buffer, buffer_size),
                         "zarr_mpi_write_block: zarr_write_region");
    return agree(comm, st, 1);
}

zarr_status zarr_mpi_read_block(MPI_Comm comm, zarr_array *array, const uint64_t *start,
                                const uint64_t *count, void *buffer, size_t buffer_size) {
    zarr_status begun = zarr_mpi_i_begin(comm, ZARR_MPI_I_OP_READ_BLOCK);
    if (begun != ZARR_OK) {
        return begun;
    }
    zarr_status st = lib(zarr_read_region(array, start, count, buffer, buffer_size),
                         "zarr_mpi_read_block: zarr_read_region");
    return agree(comm, st, 1);
}

zarr_status zarr_mpi_write_hyperslab(MPI_Comm comm, zarr_array *array, const uint64_t *start,
                                     const uint64_t *count, const uint64_t *step,
                                     const int64_t *buffer_stride, zarr_data_type buffer_type,
                                     const void *buffer, size_t buffer_size) {
    zarr_status begun = zarr_mpi_i_begin(comm, ZARR_MPI_I_OP_WRITE_HYPERSLAB);
    if (begun != ZARR_OK) {
        return begun;
    }
    zarr_status locks = check_locks(comm, array, start, count, step, "zarr_mpi_write_hyperslab");
    if (locks != ZARR_OK) {
        return locks;
    }
    zarr_status st = lib(zarr_write_hyperslab(array, start, count, step, buffer_stride, buffer_type, buffer,
                                              buffer_size),
                         "zarr_mpi_write_hyperslab: zarr_write_hyperslab");
    return agree(comm, st, 1);
}

zarr_status zarr_mpi_read_hyperslab(MPI_Comm comm, zarr_array *array, const uint64_t *start,
                                    const uint64_t *count, const uint64_t *step,
                                    const int64_t *buffer_stride, zarr_data_type buffer_type, void *buffer,
                                    size_t buffer_size) {
    zarr_status begun = zarr_mpi_i_begin(comm, ZARR_MPI_I_OP_READ_HYPERSLAB);
    if (begun != ZARR_OK) {
        return begun;
    }
    zarr_status st = lib(zarr_read_hyperslab(array, start, count, step, buffer_stride, buffer_type, buffer,
                                             buffer_size),
                         "zarr_mpi_read_hyperslab: zarr_read_hyperslab");
    return agree(comm, st, 1);
}

/* The threads for a rank sharing a node with `local` ranks: when the rank is bound to fewer CPUs than the
   node has (mpiexec --bind-to core, --map-by ...:pe=N), the CPUs it is bound to (sched_getaffinity);
   otherwise the node's CPUs divided among its ranks. At least 1. */
static size_t threads_for(int local) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef __linux__
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0 && CPU_COUNT(&set) < online) {
        return (size_t)CPU_COUNT(&set);
    }
#endif
    return online > local ? (size_t)(online / local) : 1;
}

zarr_status zarr_mpi_balance_threads(MPI_Comm comm, size_t *threads) {
    zarr_status st = ZARR_OK;
    int rc, local = 1;
    MPI_Comm node = MPI_COMM_NULL;
    if (comm == MPI_COMM_NULL) {
        return fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_balance_threads: the communicator is MPI_COMM_NULL");
    }
    zarr_status begun = zarr_mpi_i_begin(comm, ZARR_MPI_I_OP_BALANCE_THREADS);
    if (begun != ZARR_OK) {
        return begun;
    }
    if ((rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node)) != MPI_SUCCESS ||
        (rc = MPI_Comm_size(node, &local)) != MPI_SUCCESS) {
        return mpi_failed(rc, "zarr_mpi_balance_threads: MPI_Comm_split_type");
    }
    MPI_Comm_free(&node);
    const char *env = getenv("ZARR_NUM_THREADS");
    if (env == NULL || *env == '\0') {
        st = lib(zarr_set_num_threads(threads_for(local)), "zarr_mpi_balance_threads: zarr_set_num_threads");
    }
    if (st == ZARR_OK && threads != NULL) {
        st = lib(zarr_get_num_threads(threads), "zarr_mpi_balance_threads: zarr_get_num_threads");
    }
    return agree(comm, st, 1);
}
