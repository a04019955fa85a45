/* Collective I/O of any decomposition (zarr_mpi_write_all, zarr_mpi_read_all): two-phase aggregation.
 *
 * Every shard (chunk, when the array is not sharded) has one owner among the aggregator ranks. A call:
 *
 *  1. handshake: every rank's operation, the array (shape, type, metadata) and the hints are compared
 *     (MINLOC/MAXLOC), so ranks that pass different arrays, or pair different calls, fail alike with a
 *     message naming the ranks; then this rank's own arguments are agreed on.
 *  2. pieces: each rank cuts its selection along the shard grid into pieces (one per shard it touches)
 *     and sends each piece's header (first index, count, step per dimension) to the shard's owner.
 *     Owners group the pieces by shard, check that no two ranks write one element (writes), note
 *     whether the pieces cover the shard, and give every shard a round (at most cb_buffer_size bytes of
 *     shards per aggregator and round); each sender learns its pieces' rounds. Nothing is written until
 *     every rank agreed that all of this is fine.
 *  3. rounds: the pieces' elements travel (MPI_Alltoallv) to the owners (writes) or from them (reads).
 *     A writing owner assembles each shard of the round, reading the stored shard once only when the
 *     pieces do not cover it, and stores it once (zarr_array_write_chunk through a handle opened with
 *     ZARR_COORDINATED: no lock, no metadata re-read). A reading owner reads and decodes each shard once
 *     and sends every rank its pieces. Each round ends with an agreement on its outcome.
 *
 * Memory types other than the array's are converted through libzarr itself (a small in-memory array),
 * with the rules of zarr_write_hyperslab / zarr_read_hyperslab. */
#define _POSIX_C_SOURCE 200809L
#include "zarr_mpi_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define R ZARR_MPI_MAX_RANK

__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;
#define DEFAULT_AGGREGATORS_PER_NODE 4
#define DEFAULT_BUFFER_SIZE ((uint64_t)64 << 20)

ZARR_MPI_HIDDEN zarr_mpi_stats zarr_mpi_i_stats;

zarr_status zarr_mpi_get_stats(zarr_mpi_stats *stats) {
    if (stats == NULL) {
        return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT, "zarr_mpi_get_stats: stats is NULL");
    }
    *stats = zarr_mpi_i_stats;
    return ZARR_OK;
}

void zarr_mpi_reset_stats(void) { memset(&zarr_mpi_i_stats, 0, sizeof zarr_mpi_i_stats); }

/* ---- hints ------------------------------------------------------------------------------------ */

static int64_t hint_cb_nodes = -1;       /* -1: not set by zarr_mpi_set_hints */
static int64_t hint_cb_buffer_size = -1;

static int parse_positive(const char *s, int64_t *out) {
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || v < 0) {
        return 0;
    }
    *out = (int64_t)v;
    return 1;
}

zarr_status zarr_mpi_set_hints(MPI_Info info) {
    int64_t nodes = -1, size = -1;
    if (info != MPI_INFO_NULL) {
        const char *keys[2] = {"cb_nodes", "cb_buffer_size"};
        int64_t *vals[2] = {&nodes, &size};
        for (int k = 0; k < 2; k++) {
            char value[MPI_MAX_INFO_VAL + 1];
            int flag = 0;
            int rc = MPI_Info_get(info, keys[k], MPI_MAX_INFO_VAL, value, &flag);
            if (rc != MPI_SUCCESS) {
                return zarr_mpi_i_mpi_failed(rc, "zarr_mpi_set_hints: MPI_Info_get");
            }
            if (flag && (!parse_positive(value, vals[k]) || *vals[k] == 0)) {
                return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT,
                                       "zarr_mpi_set_hints: %s = \"%s\" is not a positive integer", keys[k], value);
            }
        }
    }
    hint_cb_nodes = nodes;
    hint_cb_buffer_size = size;
    return ZARR_OK;
}

/* The hint in force: zarr_mpi_set_hints(), else the environment, else 0 (the default). */
static int64_t hint(int64_t set, const char *env) {
    int64_t v = 0;
    if (set > 0) {
        return set;
    }
    const char *s = getenv(env);
    if (s != NULL && *s != '\0' && parse_positive(s, &v)) {
        return v;
    }
    return 0;
}

/* ---- small arithmetic ------------------------------------------------------------------------- */

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* Overflow-checked product of `n` values into *out (0 when any value is 0). */
static int checked_product(const uint64_t *v, size_t n, uint64_t factor, uint64_t *out) {
    uint64_t p = factor;
    for (size_t i = 0; i < n; i++) {
        if (v[i] == 0) {
            *out = 0;
            return 1;
        }
        if (p > UINT64_MAX / v[i]) {
            return 0;
        }
        p *= v[i];
    }
    *out = p;
    return 1;
}

/* Copies a box of `count` elements of `elem` bytes between two strided layouts (byte strides). */
static void copy_box(char *dst, const int64_t *dst_stride, const char *src, const int64_t *src_stride,
                     const uint64_t *count, size_t r, size_t elem) {
    for (size_t d = 0; d < r; d++) {
        if (count[d] == 0) {
            return;
        }
    }
    uint64_t idx[R] = {0};
    size_t last = r - 1;
    int contiguous = dst_stride[last] == (int64_t)elem && src_stride[last] == (int64_t)elem;
    for (;;) {
        int64_t od = 0, os = 0;
        for (size_t d = 0; d < last; d++) {
            od += (int64_t)idx[d] * dst_stride[d];
            os += (int64_t)idx[d] * src_stride[d];
        }
        if (contiguous) {
            memcpy(dst + od, src + os, count[last] * elem);
        } else {
            for (uint64_t k = 0; k < count[last]; k++) {
                memcpy(dst + od + (int64_t)k * dst_stride[last], src + os + (int64_t)k * src_stride[last], elem);
            }
        }
        size_t d = last;
        for (;;) {
            if (d == 0) {
                return;
            }
            d--;
            if (++idx[d] < count[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
}

static void c_strides(const uint64_t *count, size_t r, size_t elem, int64_t *stride) {
    int64_t s = (int64_t)elem;
    for (size_t d = r; d-- > 0;) {
        stride[d] = s;
        s *= (int64_t)(count[d] > 0 ? count[d] : 1);
    }
}

/* The smallest common element >= lo of the lattices a1 + k t1 (k < n1) and a2 + k t2 (k < n2), in *x;
   0 when they share none. */
static int lattice_meet(uint64_t a1, uint64_t t1, uint64_t n1, uint64_t a2, uint64_t t2, uint64_t n2,
                        uint64_t *x) {
    uint64_t hi1 = a1 + (n1 - 1) * t1, hi2 = a2 + (n2 - 1) * t2;
    uint64_t lo = a1 > a2 ? a1 : a2, hi = hi1 < hi2 ? hi1 : hi2;
    if (lo > hi) {
        return 0;
    }
    /* x = a1 (mod t1), x = a2 (mod t2): extended Euclid on t1, t2. */
    i128 r0 = (i128)t1, r1 = (i128)t2, s0 = 1, s1 = 0;
    while (r1 != 0) {
        i128 q = r0 / r1, tmp = r0 - q * r1;
        r0 = r1;
        r1 = tmp;
        tmp = s0 - q * s1;
        s0 = s1;
        s1 = tmp;
    }
    i128 g = r0, diff = (i128)a2 - (i128)a1;
    if (diff % g != 0) {
        return 0;
    }
    i128 m = (i128)t2 / g;                 /* k = (diff / g) * s0 (mod m), x = a1 + k t1 */
    i128 k = ((diff / g) % m) * (s0 % m) % m;
    if (k < 0) {
        k += m;
    }
    i128 l = (i128)t1 * m, x0 = (i128)a1 + k * (i128)t1;
    if (x0 < (i128)lo) {
        x0 += ((i128)lo - x0 + l - 1) / l * l;
    }
    x0 -= ((x0 - (i128)lo) / l) * l;
    if (x0 > (i128)hi) {
        return 0;
    }
    *x = (uint64_t)x0;
    return 1;
}

/* Whether this thread's messages quote indices as a Fortran caller writes them (the Fortran module sets
   ZARR_INDEX_ORDER_FORTRAN around its calls: dimensions reversed, positions 1-based). */
static int fortran_order(void) {
    int previous = ZARR_INDEX_ORDER_C;
    if (zarr_set_message_index_order(ZARR_INDEX_ORDER_C, &previous) != ZARR_OK) {
        return 0;
    }
    zarr_set_message_index_order(previous, NULL);
    return previous == ZARR_INDEX_ORDER_FORTRAN;
}

/* ---- the array, the hints and the handshake -------------------------------------------------- */

typedef struct {
    size_t r;
    zarr_data_type dtype;
    size_t elem;       /* bytes per element of the array's type */
    uint64_t shape[R];
    uint64_t shard[R]; /* shard (chunk) shape */
    uint64_t grid[R];
    uint64_t shard_elems;
    size_t shard_bytes;
} array_info;

static zarr_status describe(zarr_array *array, const char *what, array_info *a) {
    zarr_status st;
    memset(a, 0, sizeof *a);
    if ((st = zarr_array_rank(array, &a->r)) != ZARR_OK) {
        return zarr_mpi_i_lib(st, what);
    }
    if (a->r == 0 || a->r > R) {
        return zarr_mpi_i_fail(ZARR_ERR_UNSUPPORTED, "%s: an array of rank %zu (1 to %d supported)", what, a->r, R);
    }
    if ((st = zarr_array_data_type(array, &a->dtype, &a->elem)) != ZARR_OK ||
        (st = zarr_array_shape(array, a->shape, a->r)) != ZARR_OK ||
        (st = zarr_array_chunk_shape(array, a->shard, a->r)) != ZARR_OK ||
        (st = zarr_array_grid_shape(array, a->grid, a->r)) != ZARR_OK) {
        return zarr_mpi_i_lib(st, what);
    }
    if (a->elem == 0) {
        return zarr_mpi_i_fail(ZARR_ERR_UNSUPPORTED, "%s: variable-length elements (string, bytes) are not supported",
                               what);
    }
    for (size_t d = 0; d < a->r; d++) {
        if (a->shard[d] == 0 || a->grid[d] != ceil_div(a->shape[d], a->shard[d])) {
            return zarr_mpi_i_fail(ZARR_ERR_UNSUPPORTED, "%s: only regular chunk grids are supported", what);
        }
    }
    uint64_t bytes = 0;
    if (!checked_product(a->shard, a->r, 1, &a->shard_elems) ||
        !checked_product(a->shard, a->r, a->elem, &bytes) || bytes > (uint64_t)INT_MAX) {
        return zarr_mpi_i_fail(ZARR_ERR_UNSUPPORTED,
                               "%s: a shard (chunk) of more than %d bytes decoded is not supported", what, INT_MAX);
    }
    a->shard_bytes = (size_t)bytes;
    return ZARR_OK;
}

enum { OP_WRITE_ALL = 1, OP_READ_ALL = 2 };
static const char *const op_names[] = {"another call", "zarr_mpi_write_all", "zarr_mpi_read_all",
                                       "zarr_mpi_open", "zarr_mpi_create", "zarr_mpi_create_from_spec",
                                       "zarr_mpi_close", "zarr_mpi_resize", "zarr_mpi_write_block",
                                       "zarr_mpi_read_block", "zarr_mpi_write_hyperslab",
                                       "zarr_mpi_read_hyperslab", "zarr_mpi_balance_threads",
                                       "zarr_mpi_icechunk_fork", "zarr_mpi_icechunk_commit"};
/* The handshake's fields. H_OP, H_SEQ and H_NTH are filled in by handshake() itself and compared on every
   rank; the others describe the array and the hints (compared among the ranks that could describe them). */
enum { H_OP, H_SEQ, H_NTH, H_RANK, H_TYPE, H_DOC, H_PATH, H_NODES, H_BUFFER, H_SHAPE, H_LEN = H_SHAPE + R };
#define N_OPS ((int)(sizeof op_names / sizeof op_names[0]))

typedef struct {
    long value;
    int rank;
} long_int;

static const char *op_name(long op) {
    return op > 0 && op < (long)(sizeof op_names / sizeof op_names[0]) ? op_names[op] : op_names[0];
}

/* ---- sequence numbers ------------------------------------------------------------------------ */

/* What this process has called on a communicator (kept on it as an MPI attribute; a duplicate starts
   afresh): the number of zarr_mpi collective calls, and of each kind. */
typedef struct {
    long total;
    long nth[N_OPS];
} call_counts;

static int seq_keyval = MPI_KEYVAL_INVALID;

static int free_call_counts(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm, (void)keyval, (void)extra;
    free(value);
    return MPI_SUCCESS;
}

/* Counts call `op` on `comm`: its sequence number on this communicator (1, 2, ...) in *seq and how many
   calls of its kind this rank has made there, this one included, in *nth. Without an attribute (out of
   memory) both are 0 on this rank, which the handshake reports as a difference. */
static void count_call(MPI_Comm comm, long op, long *seq, long *nth) {
    call_counts *c = NULL;
    int flag = 0;
    *seq = *nth = 0;
    if (seq_keyval == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_call_counts, &seq_keyval, NULL) != MPI_SUCCESS) {
        seq_keyval = MPI_KEYVAL_INVALID;
        return;
    }
    if (MPI_Comm_get_attr(comm, seq_keyval, &c, &flag) != MPI_SUCCESS || !flag || c == NULL) {
        c = calloc(1, sizeof *c);
        if (c == NULL || MPI_Comm_set_attr(comm, seq_keyval, c) != MPI_SUCCESS) {
            free(c);
            return;
        }
    }
    c->total++;
    *seq = c->total;
    if (op > 0 && op < N_OPS) {
        *nth = ++c->nth[op];
    }
}

/* 1st, 2nd, 3rd, 4th, ... */
static const char *ordinal(long n) {
    long t = n % 100;
    return t >= 11 && t <= 13 ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

/* Compares the call between ranks: every rank's fields (operation, array, hints) must be equal among
   the ranks whose arguments were usable (`valid`); the operation, its sequence number on the
   communicator and the number of calls of its kind (set here in fields[H_SEQ], fields[H_NTH]) on every
   rank. The first collective step of each call, of the same size for every operation, so that ranks
   pairing different calls fail instead of mixing, and ranks out of step (one skipped or repeated a call
   of the same kind: a different count of that kind; the difference stays) fail instead of pairing, say,
   one time step's write with the next. */
static zarr_status handshake(MPI_Comm comm, const char *what, long *fields, int valid) {
    long_int lo[H_LEN], hi[H_LEN], mn[H_LEN], mx[H_LEN];
    int me = 0, rc;
    MPI_Comm_rank(comm, &me);
    count_call(comm, fields[H_OP], &fields[H_SEQ], &fields[H_NTH]);
    for (int i = 0; i < H_LEN; i++) {
        int known = valid || i <= H_NTH;
        lo[i].value = known ? fields[i] : LONG_MAX;
        hi[i].value = known ? fields[i] : LONG_MIN;
        lo[i].rank = hi[i].rank = me;
    }
    if ((rc = MPI_Allreduce(lo, mn, H_LEN, MPI_LONG_INT, MPI_MINLOC, comm)) != MPI_SUCCESS ||
        (rc = MPI_Allreduce(hi, mx, H_LEN, MPI_LONG_INT, MPI_MAXLOC, comm)) != MPI_SUCCESS) {
        return zarr_mpi_i_mpi_failed(rc, what);
    }
    for (int i = 0; i < H_LEN; i++) {
        if (mn[i].value == mx[i].value) {
            continue;
        }
        if (i > H_NTH && mn[H_RANK].value == LONG_MAX) {
            return ZARR_OK; /* no rank could describe its array: the agreement that follows reports why */
        }
        const int a = mn[i].rank, b = mx[i].rank;
        switch (i) {
        case H_OP:
            return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT,
                                   "%s: ranks are in different collective calls: %s on rank %d, %s on rank %d "
                                   "(call %ld on this communicator; every rank must make the same zarr_mpi calls "
                                   "in the same order)",
                                   what, op_name(mn[i].value), a, op_name(mx[i].value), b, fields[H_SEQ]);
        case H_SEQ:
            return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT,
                                   "%s: ranks are out of step: call %ld on this communicator on rank %d, call %ld "
                                   "on rank %d (another collective call on the communicator paired with a zarr_mpi "
                                   "call)", what, mn[i].value, a, mx[i].value, b);
        case H_NTH:
            return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT,
                                   "%s: ranks are out of step: rank %d is in its %ld%s %s on this communicator, "
                                   "rank %d in its %ld%s (a rank skipped or repeated a call: every later %s on this "
                                   "communicator fails alike, nothing is written; end the job)",
                                   what, a, mn[i].value, ordinal(mn[i].value), what, b, mx[i].value,
                                   ordinal(mx[i].value), what);
        case H_RANK:
        case H_TYPE:
            return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT, "%s: the array's %s differs between ranks: %ld on rank %d, "
                                   "%ld on rank %d", what, i == H_RANK ? "rank" : "data type", mn[i].value, a,
                                   mx[i].value, b);
        case H_NODES:
        case H_BUFFER:
            return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT, "%s: hint %s differs between ranks: %ld on rank %d, %ld on "
                                   "rank %d (zarr_mpi_set_hints / ZARR_MPI_%s)", what,
                                   i == H_NODES ? "cb_nodes" : "cb_buffer_size", mn[i].value, a, mx[i].value, b,
                                   i == H_NODES ? "CB_NODES" : "CB_BUFFER_SIZE");
        case H_DOC:
        case H_PATH:
            continue; /* reported after the shape, which says more */
        default:
            return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT, "%s: the array's shape[%d] differs between ranks: %ld on "
                                   "rank %d, %ld on rank %d", what, i - H_SHAPE, mn[i].value, a, mx[i].value, b);
        }
    }
    for (int i = H_DOC; i <= H_PATH; i++) {
        if (mn[i].value != mx[i].value) {
            return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT, "%s: ranks %d and %d pass different arrays (their %s "
                                   "differ)", what, mn[i].rank, mx[i].rank,
                                   i == H_DOC ? "metadata documents" : "locations");
        }
    }
    return ZARR_OK;
}

/* ---- aggregators ------------------------------------------------------------------------------ */

/* The aggregators of a communicator, kept on it (MPI attribute caching) for later calls with the same
   cb_nodes: the node structure of a communicator does not change. */
typedef struct {
    int64_t cb_nodes;
    int count;
    int aggs[];
} cached_aggs;

static int aggs_keyval = MPI_KEYVAL_INVALID;

static int free_cached_aggs(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm, (void)keyval, (void)extra;
    free(value);
    return MPI_SUCCESS;
}

static zarr_status compute_aggregators(MPI_Comm comm, int64_t cb_nodes, int **out, int *count);

/* The aggregator ranks of `comm` (a malloc'd list), from its cache or computed (collective then: every
   rank finds the same cache state, since every rank made the same calls with the same hints). */
static zarr_status aggregators(MPI_Comm comm, int64_t cb_nodes, int **out, int *count) {
    cached_aggs *c = NULL;
    int flag = 0;
    if (aggs_keyval == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_cached_aggs, &aggs_keyval, NULL) != MPI_SUCCESS) {
        aggs_keyval = MPI_KEYVAL_INVALID;
    }
    if (aggs_keyval != MPI_KEYVAL_INVALID && MPI_Comm_get_attr(comm, aggs_keyval, &c, &flag) == MPI_SUCCESS &&
        flag && c != NULL && c->cb_nodes == cb_nodes) {
        *out = malloc(sizeof(int) * (size_t)c->count);
        if (*out == NULL) {
            return zarr_mpi_i_fail(ZARR_ERR_INTERNAL, "zarr_mpi: out of memory");
        }
        memcpy(*out, c->aggs, sizeof(int) * (size_t)c->count);
        *count = c->count;
        return ZARR_OK;
    }
    zarr_status st = compute_aggregators(comm, cb_nodes, out, count);
    if (st == ZARR_OK && aggs_keyval != MPI_KEYVAL_INVALID) {
        cached_aggs *n = malloc(sizeof(cached_aggs) + sizeof(int) * (size_t)*count);
        if (n == NULL) {
            /* Every rank must find the same cache next time (or the ranks' collectives would part). */
            fprintf(stderr, "zarr_mpi: out of memory caching %d aggregators\n", *count);
            MPI_Abort(comm, 1);
        } else {
            n->cb_nodes = cb_nodes;
            n->count = *count;
            memcpy(n->aggs, *out, sizeof(int) * (size_t)*count);
            if (MPI_Comm_set_attr(comm, aggs_keyval, n) != MPI_SUCCESS) { /* replaces (and frees) the old */
                free(n);
            }
        }
    }
    return st;
}

/* The aggregator ranks of `comm`, in rank order: cb_nodes in total when set (given to the nodes in turn),
   else up to 4 per node, spread over each node's ranks. Collective. */
static zarr_status compute_aggregators(MPI_Comm comm, int64_t cb_nodes, int **out, int *count) {
    int size = 0, me = 0, rc, node_size = 0, node_rank = 0, leader = 0;
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &me);
    if ((rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node)) != MPI_SUCCESS) {
        return zarr_mpi_i_mpi_failed(rc, "zarr_mpi: MPI_Comm_split_type");
    }
    MPI_Comm_size(node, &node_size);
    MPI_Comm_rank(node, &node_rank);
    rc = MPI_Allreduce(&me, &leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    if (rc != MPI_SUCCESS) {
        return zarr_mpi_i_mpi_failed(rc, "zarr_mpi: MPI_Allreduce");
    }
    int mine[3] = {leader, node_rank, node_size};
    int *all = malloc(sizeof(int) * 3 * (size_t)size), *aggs = malloc(sizeof(int) * (size_t)size);
    int *leaders = malloc(sizeof(int) * (size_t)size), *picks = calloc((size_t)size, sizeof(int));
    if (all == NULL || aggs == NULL || leaders == NULL || picks == NULL) {
        free(all), free(aggs), free(leaders), free(picks);
        return zarr_mpi_i_fail(ZARR_ERR_INTERNAL, "zarr_mpi: out of memory (aggregators of %d ranks)", size);
    }
    if ((rc = MPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, comm)) != MPI_SUCCESS) {
        free(all), free(aggs), free(leaders), free(picks);
        return zarr_mpi_i_mpi_failed(rc, "zarr_mpi: MPI_Allgather");
    }
    /* Nodes, by their lowest rank (leaders are ranks, so `rank == leader` lists each node once, in order). */
    int nodes = 0;
    for (int q = 0; q < size; q++) {
        if (all[3 * q] == q) {
            leaders[nodes++] = q;
        }
    }
    /* How many aggregators each node gets. */
    int64_t total = 0;
    for (int n = 0; n < nodes; n++) {
        int m = all[3 * leaders[n] + 2];
        picks[n] = cb_nodes > 0 ? 0 : (m < DEFAULT_AGGREGATORS_PER_NODE ? m : DEFAULT_AGGREGATORS_PER_NODE);
        total += picks[n];
    }
    if (cb_nodes > 0) {
        total = cb_nodes < size ? cb_nodes : size;
        for (int64_t i = 0, n = 0; i < total; n = (n + 1) % nodes) {
            if (picks[n] < all[3 * leaders[n] + 2]) {
                picks[n]++;
                i++;
            }
        }
    }
    /* The j-th aggregator of a node with m ranks and k aggregators is its node rank floor(j m / k). */
    int c = 0;
    for (int j = 0; c < total; j++) {
        for (int n = 0; n < nodes; n++) {
            int m = all[3 * leaders[n] + 2], k = picks[n];
            if (j >= k) {
                continue;
            }
            int want = (int)(((int64_t)j * m) / k);
            for (int q = 0; q < size; q++) {
                if (all[3 * q] == leaders[n] && all[3 * q + 1] == want) {
                    aggs[c++] = q;
                    break;
                }
            }
        }
    }
    free(all), free(leaders), free(picks);
    /* In rank order: the shards' domains then follow the ranks (see owner_index()). */
    for (int i = 1; i < c; i++) {
        for (int j = i; j > 0 && aggs[j] < aggs[j - 1]; j--) {
            int t = aggs[j];
            aggs[j] = aggs[j - 1];
            aggs[j - 1] = t;
        }
    }
    *out = aggs;
    *count = c;
    return ZARR_OK;
}

/* ---- memory types ----------------------------------------------------------------------------- */

/* A scratch in-memory array of the array's type and shape `count` (one chunk, uncompressed): libzarr
   converts between it and a caller's buffer of another type with the hyperslab rules. */
static zarr_status scratch_array(const array_info *a, const uint64_t *count, const char *what, char *name,
                                 size_t name_size, zarr_array **out) {
    static unsigned long serial = 0;
    zarr_array_spec *spec = NULL;
    char location[160];
    snprintf(name, name_size, "zarr_mpi_convert_%ld_%lu", (long)getpid(), ++serial);
    snprintf(location, sizeof location, "memory://%s", name);
    zarr_status st = zarr_array_spec_new(a->dtype, a->r, count, &spec);
    if (st == ZARR_OK) {
        st = zarr_array_spec_set_chunks(spec, count, a->r);
    }
    if (st == ZARR_OK) {
        st = zarr_array_spec_set_compressor(spec, "none", 0);
    }
    if (st == ZARR_OK) {
        st = zarr_create_from_spec(location, spec, out);
    }
    zarr_array_spec_free(spec);
    if (st != ZARR_OK) {
        zarr_memory_store_remove(name);
        return zarr_mpi_i_fail(st, "%s: converting between the buffer type and the array's type: %s", what,
                               zarr_last_error());
    }
    return ZARR_OK;
}

static void scratch_free(zarr_array *s, const char *name) {
    zarr_close(s);
    zarr_memory_store_remove(name);
}

/* ---- the call's selection and its pieces ------------------------------------------------------ */

/* One piece: this rank's elements in one shard. */
typedef struct {
    int dest;            /* the shard's owner */
    uint64_t shard;      /* the shard's linear (C-order) index */
    uint64_t first[R];   /* first array index */
    uint64_t count[R];
    uint64_t k0[R];      /* position of `first` within this rank's selection */
    size_t bytes;        /* count's elements, in the array's type */
    int round;
} piece;

/* A piece as the owner received it (header: first, count, step per dimension). */
typedef struct {
    int src;
    uint64_t shard;
    const uint64_t *hdr; /* 3 r values */
    size_t bytes;
    size_t arrival;      /* index in arrival order (source, then the source's order) */
    int round;
    int covered;         /* (first piece of a shard) the shard's pieces cover its part inside the array */
    long self;           /* a piece of this rank's own selection: its index in pieces[] (it does not travel
                            through MPI: copied straight between the rank's buffer and the shard), else -1 */
} owned;

typedef struct {
    const char *what;
    int op;
    zarr_array *array;
    MPI_Comm comm;
    int me, size;
    array_info a;
    /* this rank's selection */
    uint64_t start[R], count[R], step[R];
    uint64_t nsel;       /* elements selected */
    /* the buffer: `base` with byte strides `stride` (the caller's, or a converted dense copy) */
    char *base;
    int64_t stride[R];
    /* aggregators */
    int *aggs;
    int naggs;
    uint64_t per_round;  /* shards per aggregator and round */
    /* pieces sent (sorted by destination), pieces owned */
    piece *pieces;
    size_t npieces;
    owned *own;
    size_t nown;
    uint64_t *hdr_in;
    size_t *order;       /* order[arrival] = index in own[] (which is sorted by shard, then source) */
    int nrounds;
    /* all-to-all counts and displacements */
    int *scount, *sdispl, *rcount, *rdispl;
} call;

static void call_free(call *c) {
    free(c->aggs), free(c->pieces), free(c->own), free(c->hdr_in), free(c->order);
    free(c->scount), free(c->sdispl), free(c->rcount), free(c->rdispl);
}

/* This rank's arguments, checked as zarr_write_hyperslab / zarr_read_hyperslab check them; sets the
   selection of `c`. `belem` receives the buffer type's element size. */
static zarr_status check_args(call *c, const uint64_t *start, const uint64_t *count, const uint64_t *step,
                              const int64_t *buffer_stride, zarr_data_type buffer_type, const void *buffer,
                              size_t buffer_size, size_t *belem) {
    const array_info *a = &c->a;
    const char *what = c->what;
    if (start == NULL || count == NULL) {
        return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, start == NULL ? "start" : "count");
    }
    uint64_t ones[R];
    for (size_t d = 0; d < a->r; d++) {
        ones[d] = 1;
    }
    zarr_status st = zarr_array_region_nbytes(c->array, ones, a->r, buffer_type, belem);
    if (st != ZARR_OK) {
        return zarr_mpi_i_fail(st, "%s: buffer_type %d: %s", what, (int)buffer_type, zarr_last_error());
    }
    int empty = 0;
    for (size_t d = 0; d < a->r; d++) {
        c->start[d] = start[d];
        c->count[d] = count[d];
        c->step[d] = step != NULL ? step[d] : 1;
        if (c->step[d] == 0) {
            return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT, "%s: step[%zu] is 0", what, d);
        }
        if (count[d] == 0) {
            empty = 1;
        }
    }
    for (size_t d = 0; d < a->r && !empty; d++) {
        /* The last selected index: start + (count - 1) * step, within the shape. */
        uint64_t span = c->count[d] - 1;
        if (span > 0 && c->step[d] > (UINT64_MAX - c->start[d]) / span) {
            return zarr_mpi_i_fail(ZARR_ERR_OUT_OF_BOUNDS, "%s: the selection overflows along dimension %zu", what, d);
        }
        uint64_t last = c->start[d] + span * c->step[d];
        if (last >= a->shape[d]) {
            int f = fortran_order(); /* then 1-based, dimensions numbered from 1 in Fortran order */
            return zarr_mpi_i_fail(ZARR_ERR_OUT_OF_BOUNDS,
                                   "%s: the selection reaches index %llu along dimension %zu, beyond the array's "
                                   "extent %llu (start %llu, count %llu, step %llu)",
                                   what, (unsigned long long)last + (unsigned)f, f ? a->r - d : d,
                                   (unsigned long long)a->shape[d], (unsigned long long)c->start[d] + (unsigned)f,
                                   (unsigned long long)c->count[d], (unsigned long long)c->step[d]);
        }
    }
    if (empty) {
        c->nsel = 0;
        return ZARR_OK;
    }
    if (!checked_product(c->count, a->r, 1, &c->nsel) || c->nsel > (uint64_t)SIZE_MAX / (*belem + a->elem)) {
        return zarr_mpi_i_fail(ZARR_ERR_BUFFER_SIZE, "%s: the selection's size overflows", what);
    }
    if (buffer == NULL) {
        return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT, "%s: buffer is NULL", what);
    }
    /* The span the strides reach, in elements of the buffer type. */
    int64_t es[R];
    if (buffer_stride == NULL) {
        c_strides(c->count, a->r, 1, es);
    } else {
        for (size_t d = 0; d < a->r; d++) {
            if (buffer_stride[d] < 0) {
                return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT, "%s: buffer_stride[%zu] = %lld is negative", what, d,
                                       (long long)buffer_stride[d]);
            }
            es[d] = buffer_stride[d];
        }
    }
    u128 end = 1;
    for (size_t d = 0; d < a->r; d++) {
        end += (u128)(c->count[d] - 1) * (uint64_t)es[d];
    }
    end *= *belem;
    if (end > (u128)buffer_size) {
        return zarr_mpi_i_fail(ZARR_ERR_BUFFER_SIZE,
                               "%s: buffer has %zu bytes, the selection needs %llu at the given strides", what,
                               buffer_size, (unsigned long long)(end > UINT64_MAX ? UINT64_MAX : (uint64_t)end));
    }
    if (c->op == OP_READ_ALL && buffer_stride != NULL) {
        /* Distinct elements must land on distinct places: with the dimensions sorted by stride, each
           stride must pass the end of the ones below it (the dimensions of extent 1 aside). */
        size_t idx[R], n = 0;
        for (size_t d = 0; d < a->r; d++) {
            if (c->count[d] > 1) {
                idx[n++] = d;
            }
        }
        for (size_t i = 1; i < n; i++) {
            for (size_t j = i; j > 0 && es[idx[j]] < es[idx[j - 1]]; j--) {
                size_t t = idx[j];
                idx[j] = idx[j - 1];
                idx[j - 1] = t;
            }
        }
        u128 reach = 1;
        for (size_t i = 0; i < n; i++) {
            if ((u128)es[idx[i]] < reach) {
                return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT,
                                       "%s: buffer_stride makes distinct elements overlap in the buffer (dimension "
                                       "%zu)", what, idx[i]);
            }
            reach = (u128)es[idx[i]] * c->count[idx[i]];
        }
    }
    for (size_t d = 0; d < a->r; d++) {
        c->stride[d] = es[d] * (int64_t)*belem;
    }
    c->base = (char *)(uintptr_t)buffer;
    return ZARR_OK;
}

/* The aggregator (index in c->aggs) owning shard `linear`: the grid's shards in C order are cut into
   naggs contiguous domains, one per aggregator in rank order (as ROMIO's file domains), so that a
   decomposition that follows the ranks' order keeps most pieces on the rank that holds them. */
static size_t owner_index(const call *c, uint64_t linear) {
    uint64_t total = 1;
    for (size_t d = 0; d < c->a.r; d++) {
        total *= c->a.grid[d];
    }
    u128 k = (u128)linear * (u128)(uint64_t)c->naggs / total;
    return (size_t)k;
}

/* Cuts this rank's selection along the shard grid (one piece per shard it touches), sorted by owner. */
static zarr_status make_pieces(call *c) {
    const array_info *a = &c->a;
    size_t r = a->r;
    if (c->nsel == 0) {
        return ZARR_OK;
    }
    /* Per dimension, the shards the selection touches and its index range k in each. */
    uint64_t *seg[R];
    size_t nseg[R];
    uint64_t total = 1;
    zarr_status st = ZARR_OK;
    memset(seg, 0, sizeof seg);
    for (size_t d = 0; d < r; d++) {
        uint64_t S = a->shard[d], t = c->step[d], s0 = c->start[d];
        uint64_t last = s0 + (c->count[d] - 1) * t;
        uint64_t first_shard = s0 / S, last_shard = last / S;
        seg[d] = malloc(sizeof(uint64_t) * 3 * (size_t)(last_shard - first_shard + 1));
        if (seg[d] == NULL) {
            st = zarr_mpi_i_fail(ZARR_ERR_INTERNAL, "%s: out of memory", c->what);
            goto done;
        }
        nseg[d] = 0;
        for (uint64_t s = first_shard; s <= last_shard; s++) {
            uint64_t lo = s * S <= s0 ? 0 : ceil_div(s * S - s0, t);
            uint64_t hi = ceil_div((s + 1) * S - s0, t);
            if (hi > c->count[d]) {
                hi = c->count[d];
            }
            if (hi > lo) {
                seg[d][3 * nseg[d]] = s;
                seg[d][3 * nseg[d] + 1] = lo;
                seg[d][3 * nseg[d] + 2] = hi;
                nseg[d]++;
            }
        }
        total *= nseg[d];
    }
    c->pieces = calloc((size_t)total, sizeof(piece));
    if (c->pieces == NULL) {
        st = zarr_mpi_i_fail(ZARR_ERR_INTERNAL, "%s: out of memory (%llu pieces)", c->what, (unsigned long long)total);
        goto done;
    }
    size_t pos[R] = {0};
    for (uint64_t i = 0; i < total; i++) {
        piece *p = &c->pieces[i];
        uint64_t linear = 0, n = 1;
        for (size_t d = 0; d < r; d++) {
            const uint64_t *g = &seg[d][3 * pos[d]];
            linear = linear * a->grid[d] + g[0];
            p->k0[d] = g[1];
            p->count[d] = g[2] - g[1];
            p->first[d] = c->start[d] + g[1] * c->step[d];
            n *= p->count[d];
        }
        p->shard = linear;
        p->dest = c->aggs[owner_index(c, linear)];
        p->bytes = (size_t)n * a->elem;
        for (size_t d = r; d-- > 0;) {
            if (++pos[d] < nseg[d]) {
                break;
            }
            pos[d] = 0;
        }
    }
    c->npieces = (size_t)total;
    /* Sorted by owner, keeping the shard order within each (a stable counting sort). */
    {
        piece *sorted = malloc(sizeof(piece) * c->npieces);
        size_t *at = calloc((size_t)c->size + 1, sizeof(size_t));
        if (sorted == NULL || at == NULL) {
            free(sorted), free(at);
            st = zarr_mpi_i_fail(ZARR_ERR_INTERNAL, "%s: out of memory", c->what);
            goto done;
        }
        for (size_t i = 0; i < c->npieces; i++) {
            at[c->pieces[i].dest + 1]++;
        }
        for (int q = 0; q < c->size; q++) {
            at[q + 1] += at[q];
        }
        for (size_t i = 0; i < c->npieces; i++) {
            sorted[at[c->pieces[i].dest]++] = c->pieces[i];
        }
        free(at);
        free(c->pieces);
        c->pieces = sorted;
    }
done:
    for (size_t d = 0; d < r; d++) {
        free(seg[d]);
    }
    return st;
}

static int cmp_owned(const void *x, const void *y) {
    const owned *a = x, *b = y;
    if (a->shard != b->shard) {
        return a->shard < b->shard ? -1 : 1;
    }
    return a->src < b->src ? -1 : a->src > b->src;
}

/* All-to-all of `counts` values per rank (MPI_INT counts) with a failing rank taking part. */
static int alltoall_counts(call *c) {
    return MPI_Alltoall(c->scount, 1, MPI_INT, c->rcount, 1, MPI_INT, c->comm);
}

/* The owner's checks and schedule of its shards: pieces of different ranks that share an element
   (writes), whether the pieces cover each shard, and each shard's round. */
static zarr_status schedule(call *c) {
    const array_info *a = &c->a;
    size_t r = a->r;
    int round = 0;
    uint64_t in_round = 0;
    for (size_t i = 0; i < c->nown;) {
        size_t j = i;
        uint64_t elems = 0;
        while (j < c->nown && c->own[j].shard == c->own[i].shard) {
            elems += c->own[j].bytes / a->elem;
            j++;
        }
        if (c->op == OP_WRITE_ALL) {
            for (size_t p = i; p < j; p++) {
                for (size_t q = p + 1; q < j; q++) {
                    const uint64_t *x = c->own[p].hdr, *y = c->own[q].hdr;
                    uint64_t at[R];
                    size_t d = 0;
                    while (d < r && lattice_meet(x[3 * d], x[3 * d + 2], x[3 * d + 1], y[3 * d], y[3 * d + 2],
                                                 y[3 * d + 1], &at[d])) {
                        d++;
                    }
                    if (d == r) {
                        char where[256] = "";
                        size_t len = 0;
                        int f = fortran_order();
                        for (size_t e = 0; e < r && len < sizeof where - 24; e++) {
                            len += (size_t)snprintf(where + len, sizeof where - len, "%s%llu", e ? ", " : "",
                                                    (unsigned long long)(f ? at[r - 1 - e] + 1 : at[e]));
                        }
                        return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT,
                                               "%s: the selections of ranks %d and %d overlap (both write element "
                                               "[%s]); each element may be written by one rank only, nothing was "
                                               "written", c->what, c->own[p].src, c->own[q].src, where);
                    }
                }
            }
        }
        /* The shard's part inside the array. */
        uint64_t inside = 1, coords[R], lin = c->own[i].shard;
        for (size_t d = r; d-- > 0;) {
            coords[d] = lin % a->grid[d];
            lin /= a->grid[d];
        }
        for (size_t d = 0; d < r; d++) {
            uint64_t origin = coords[d] * a->shard[d];
            uint64_t ext = a->shape[d] - origin < a->shard[d] ? a->shape[d] - origin : a->shard[d];
            inside *= ext;
        }
        if (in_round == c->per_round) {
            round++;
            in_round = 0;
        }
        in_round++;
        for (size_t p = i; p < j; p++) {
            c->own[p].round = round;
        }
        c->own[i].covered = elems == inside;
        if (round + 1 > c->nrounds) {
            c->nrounds = round + 1;
        }
        i = j;
    }
    return ZARR_OK;
}

/* Phase 1: headers to the owners; the owners group, check and schedule the pieces; each sender learns
   its pieces' rounds. `st`: this rank's status so far (a failing rank sends nothing). Returns this
   rank's status (not yet agreed). */
static zarr_status exchange_headers(call *c, zarr_status st) {
    size_t r = c->a.r, h = 3 * r;
    int size = c->size, rc;
    size_t np = st == ZARR_OK ? c->npieces : 0;
    uint64_t *hdr_out = malloc(sizeof(uint64_t) * (h * np + 1));
    c->scount = calloc((size_t)size, sizeof(int));
    c->sdispl = calloc((size_t)size, sizeof(int));
    c->rcount = calloc((size_t)size, sizeof(int));
    c->rdispl = calloc((size_t)size, sizeof(int));
    if (hdr_out == NULL || c->scount == NULL || c->sdispl == NULL || c->rcount == NULL || c->rdispl == NULL) {
        /* Out of memory for a few counts: MPI itself is about to fail; abort the job cleanly. */
        free(hdr_out);
        fprintf(stderr, "%s: out of memory\n", c->what);
        MPI_Abort(c->comm, 1);
        return ZARR_ERR_INTERNAL;
    }
    for (size_t i = 0; i < np; i++) {
        const piece *p = &c->pieces[i];
        for (size_t d = 0; d < r; d++) {
            hdr_out[h * i + 3 * d] = p->first[d];
            hdr_out[h * i + 3 * d + 1] = p->count[d];
            hdr_out[h * i + 3 * d + 2] = c->step[d];
        }
        c->scount[p->dest] += (int)h;
    }
    for (int q = 1; q < size; q++) {
        c->sdispl[q] = c->sdispl[q - 1] + c->scount[q - 1];
    }
    if ((rc = alltoall_counts(c)) != MPI_SUCCESS) {
        free(hdr_out);
        return zarr_mpi_i_mpi_failed(rc, c->what);
    }
    size_t nin = 0;
    for (int q = 0; q < size; q++) {
        c->rdispl[q] = (int)nin;
        nin += (size_t)c->rcount[q];
    }
    c->hdr_in = malloc(sizeof(uint64_t) * (nin + 1));
    if (c->hdr_in == NULL) {
        free(hdr_out);
        fprintf(stderr, "%s: out of memory (%zu piece headers)\n", c->what, nin / h);
        MPI_Abort(c->comm, 1);
        return ZARR_ERR_INTERNAL;
    }
    rc = MPI_Alltoallv(hdr_out, c->scount, c->sdispl, MPI_UINT64_T, c->hdr_in, c->rcount, c->rdispl, MPI_UINT64_T,
                       c->comm);
    free(hdr_out);
    if (rc != MPI_SUCCESS) {
        return zarr_mpi_i_mpi_failed(rc, c->what);
    }
    zarr_mpi_i_stats.control_bytes_sent += (uint64_t)np * h * sizeof(uint64_t);
    /* The owner's view: the pieces it received, sorted by shard. */
    c->nown = nin / h;
    zarr_status local = st;
    if (c->nown > 0) {
        c->own = calloc(c->nown, sizeof(owned));
        c->order = malloc(sizeof(size_t) * c->nown);
        if (c->own == NULL || c->order == NULL) {
            fprintf(stderr, "%s: out of memory (%zu pieces)\n", c->what, c->nown);
            MPI_Abort(c->comm, 1);
            return ZARR_ERR_INTERNAL;
        }
        size_t i = 0;
        for (int q = 0; q < size; q++) {
            for (size_t k = 0; k < (size_t)c->rcount[q] / h; k++, i++) {
                owned *o = &c->own[i];
                o->src = q;
                o->hdr = &c->hdr_in[(size_t)c->rdispl[q] + k * h];
                o->arrival = i;
                uint64_t linear = 0, n = 1;
                for (size_t d = 0; d < r; d++) {
                    linear = linear * c->a.grid[d] + o->hdr[3 * d] / c->a.shard[d];
                    n *= o->hdr[3 * d + 1];
                }
                o->shard = linear;
                o->bytes = (size_t)n * c->a.elem;
            }
        }
        qsort(c->own, c->nown, sizeof(owned), cmp_owned);
        for (size_t k = 0; k < c->nown; k++) {
            c->order[c->own[k].arrival] = k;
            c->own[k].self = -1;
        }
        /* This rank's own pieces came (in its order) as the ones from itself. */
        size_t first = (size_t)c->rdispl[c->me] / h, mine = 0;
        for (size_t i = 0; i < np && c->pieces[i].dest <= c->me; i++) {
            if (c->pieces[i].dest == c->me) {
                c->own[c->order[first + mine]].self = (long)i;
                mine++;
            }
        }
        zarr_status sc = schedule(c);
        if (local == ZARR_OK) {
            local = sc;
        }
    }
    /* The rounds back to the senders, in the order their headers came. */
    int *rin = malloc(sizeof(int) * (c->nown + 1)), *rout = malloc(sizeof(int) * (c->npieces + 1));
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int *rc2 = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
    if (rin == NULL || rout == NULL || sc == NULL || sd == NULL || rc2 == NULL || rd == NULL) {
        fprintf(stderr, "%s: out of memory\n", c->what);
        MPI_Abort(c->comm, 1);
        return ZARR_ERR_INTERNAL;
    }
    for (size_t k = 0; k < c->nown; k++) {
        rin[k] = c->own[c->order[k]].round;
    }
    for (int q = 0; q < size; q++) {
        sc[q] = c->rcount[q] / (int)h;
        sd[q] = c->rdispl[q] / (int)h;
        rc2[q] = c->scount[q] / (int)h;
        rd[q] = c->sdispl[q] / (int)h;
    }
    rc = MPI_Alltoallv(rin, sc, sd, MPI_INT, rout, rc2, rd, MPI_INT, c->comm);
    zarr_mpi_i_stats.control_bytes_sent += (uint64_t)c->nown * sizeof(int);
    for (size_t i = 0; i < np && rc == MPI_SUCCESS; i++) {
        c->pieces[i].round = rout[i];
    }
    free(rin), free(rout), free(sc), free(sd), free(rc2), free(rd);
    if (rc != MPI_SUCCESS) {
        return zarr_mpi_i_mpi_failed(rc, c->what);
    }
    int mine = c->nrounds, all = 0;
    if ((rc = MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MAX, c->comm)) != MPI_SUCCESS) {
        return zarr_mpi_i_mpi_failed(rc, c->what);
    }
    c->nrounds = all;
    return local;
}

/* The shard's grid coordinates and origin from its linear index. */
static void shard_at(const array_info *a, uint64_t linear, uint64_t *coords, uint64_t *origin) {
    for (size_t d = a->r; d-- > 0;) {
        coords[d] = linear % a->grid[d];
        linear /= a->grid[d];
        origin[d] = coords[d] * a->shard[d];
    }
}

/* Where a received piece lies in a whole-shard buffer: the byte offset of its first element and the byte
   strides of its elements there. */
static size_t in_shard(const array_info *a, const uint64_t *hdr, const uint64_t *origin, int64_t *stride) {
    int64_t cs[R];
    c_strides(a->shard, a->r, a->elem, cs);
    size_t off = 0;
    for (size_t d = 0; d < a->r; d++) {
        off += (size_t)(hdr[3 * d] - origin[d]) * (size_t)cs[d];
        stride[d] = cs[d] * (int64_t)hdr[3 * d + 2];
    }
    return off;
}

/* Byte counts and displacements of round `q` (scount/sdispl: what this rank sends, rcount/rdispl: what
   it receives): its own pieces of round q and the pieces of round q it owns. `to_owner`: writes (the
   pieces go to the owners) or reads (they come back from them). Totals: `out_total` the bytes of
   this rank's pieces, `in_total` of the pieces it owns. Offsets of owned pieces go to `own_off` (by own[] index),
   of sent pieces to `piece_off`. Returns 0 when a count exceeds INT_MAX. */
static int round_layout(call *c, int q, int to_owner, size_t *piece_off, size_t *own_off, size_t *out_total,
                        size_t *in_total) {
    int size = c->size;
    size_t sent = 0, got = 0;
    uint64_t *pb = calloc((size_t)size, sizeof(uint64_t)), *ob = calloc((size_t)size, sizeof(uint64_t));
    if (pb == NULL || ob == NULL) {
        free(pb), free(ob);
        return 0;
    }
    for (size_t i = 0; i < c->npieces; i++) {
        if (c->pieces[i].round == q && c->pieces[i].dest != c->me) {
            pb[c->pieces[i].dest] += c->pieces[i].bytes;
        }
    }
    for (size_t k = 0; k < c->nown; k++) {
        const owned *o = &c->own[c->order[k]];
        if (o->round == q && o->self < 0) {
            ob[o->src] += o->bytes;
        }
    }
    int ok = 1;
    for (int p = 0; p < size; p++) {
        if (pb[p] > INT_MAX || ob[p] > INT_MAX || sent > (size_t)INT_MAX || got > (size_t)INT_MAX) {
            ok = 0;
        }
        int *sc = to_owner ? c->scount : c->rcount, *sd = to_owner ? c->sdispl : c->rdispl;
        int *rc = to_owner ? c->rcount : c->scount, *rd = to_owner ? c->rdispl : c->sdispl;
        sc[p] = (int)pb[p];
        sd[p] = (int)sent;
        rc[p] = (int)ob[p];
        rd[p] = (int)got;
        sent += pb[p];
        got += ob[p];
    }
    if (sent > (size_t)INT_MAX || got > (size_t)INT_MAX) {
        ok = 0;
    }
    /* Offsets: the sender's pieces in its order per owner; the owner's in arrival order per sender. */
    size_t *cur = calloc((size_t)size, sizeof(size_t));
    if (cur == NULL) {
        free(pb), free(ob);
        return 0;
    }
    for (int p = 0, acc = 0; p < size; acc += (int)pb[p], p++) {
        cur[p] = (size_t)acc;
    }
    for (size_t i = 0; i < c->npieces; i++) {
        if (c->pieces[i].round == q && c->pieces[i].dest != c->me) {
            piece_off[i] = cur[c->pieces[i].dest];
            cur[c->pieces[i].dest] += c->pieces[i].bytes;
        }
    }
    for (int p = 0, acc = 0; p < size; acc += (int)ob[p], p++) {
        cur[p] = (size_t)acc;
    }
    for (size_t k = 0; k < c->nown; k++) {
        size_t idx = c->order[k];
        const owned *o = &c->own[idx];
        if (o->round == q && o->self < 0) {
            own_off[idx] = cur[o->src];
            cur[o->src] += o->bytes;
        }
    }
    free(cur), free(pb), free(ob);
    *out_total = sent;
    *in_total = got;
    return ok;
}

/* Where piece `p` of this rank's selection starts in the rank's buffer. */
static char *piece_in_buffer(const call *c, const piece *p) {
    char *at = c->base;
    for (size_t d = 0; d < c->a.r; d++) {
        at += (int64_t)p->k0[d] * c->stride[d];
    }
    return at;
}

/* Phase 2 of a write: the rounds. `twin`: the handle the owners store through. */
static zarr_status write_rounds(call *c, zarr_array *twin, const void *fill) {
    const array_info *a = &c->a;
    size_t r = a->r;
    size_t *poff = malloc(sizeof(size_t) * (c->npieces + 1)), *ooff = malloc(sizeof(size_t) * (c->nown + 1));
    char *shard = malloc(a->shard_bytes + 1);
    zarr_status st = ZARR_OK;
    if (poff == NULL || ooff == NULL || shard == NULL) {
        st = zarr_mpi_i_fail(ZARR_ERR_INTERNAL, "%s: out of memory (a shard of %zu bytes)", c->what, a->shard_bytes);
    }
    if ((st = zarr_mpi_i_agree(c->comm, st)) != ZARR_OK) {
        free(poff), free(ooff), free(shard);
        return st;
    }
    for (int q = 0; q < c->nrounds && st == ZARR_OK; q++) {
        size_t out_total = 0, in_total = 0;
        char *out = NULL, *in = NULL;
        if (!round_layout(c, q, 1, poff, ooff, &out_total, &in_total)) {
            st = zarr_mpi_i_fail(ZARR_ERR_UNSUPPORTED,
                                 "%s: more than %d bytes to exchange in one round: lower cb_buffer_size", c->what,
                                 INT_MAX);
        } else {
            out = malloc(out_total + 1);
            in = malloc(in_total + 1);
            if (out == NULL || in == NULL) {
                st = zarr_mpi_i_fail(ZARR_ERR_INTERNAL, "%s: out of memory (%zu + %zu bytes)", c->what, out_total,
                                     in_total);
            }
        }
        /* Nobody exchanges unless everyone can. */
        if ((st = zarr_mpi_i_agree(c->comm, st)) != ZARR_OK) {
            free(out), free(in);
            break;
        }
        int64_t dense[R];
        for (size_t i = 0; i < c->npieces; i++) {
            const piece *p = &c->pieces[i];
            if (p->round == q && p->dest != c->me) {
                c_strides(p->count, r, a->elem, dense);
                copy_box(out + poff[i], dense, piece_in_buffer(c, p), c->stride, p->count, r, a->elem);
                zarr_mpi_i_stats.bytes_sent += p->bytes;
            }
        }
        int rc = MPI_Alltoallv(out, c->scount, c->sdispl, MPI_BYTE, in, c->rcount, c->rdispl, MPI_BYTE, c->comm);
        free(out);
        if (rc != MPI_SUCCESS) {
            free(in);
            st = zarr_mpi_i_mpi_failed(rc, c->what);
            break;
        }
        zarr_mpi_i_stats.rounds++;
        /* Assemble and store each shard of the round. */
        for (size_t i = 0; i < c->nown && st == ZARR_OK;) {
            size_t j = i;
            while (j < c->nown && c->own[j].shard == c->own[i].shard) {
                j++;
            }
            if (c->own[i].round == q) {
                uint64_t coords[R], origin[R];
                shard_at(a, c->own[i].shard, coords, origin);
                if (!c->own[i].covered) {
                    /* The ranks leave part of the shard alone: start from what is stored (read once). */
                    st = zarr_array_read_chunk(twin, coords, shard, a->shard_bytes);
                    zarr_mpi_i_stats.shards_read++;
                    if (st != ZARR_OK) {
                        st = zarr_mpi_i_fail(st, "%s: reading shard %llu to merge: %s", c->what,
                                             (unsigned long long)c->own[i].shard, zarr_last_error());
                    }
                } else {
                    int edge = 0;
                    for (size_t d = 0; d < r; d++) {
                        edge |= origin[d] + a->shard[d] > a->shape[d];
                    }
                    for (uint64_t e = 0; edge && e < a->shard_elems; e++) {
                        memcpy(shard + e * a->elem, fill, a->elem); /* beyond the array's end */
                    }
                }
                for (size_t p = i; p < j && st == ZARR_OK; p++) {
                    const owned *o = &c->own[p];
                    int64_t dst[R], src[R];
                    uint64_t cnt[R];
                    for (size_t d = 0; d < r; d++) {
                        cnt[d] = o->hdr[3 * d + 1];
                    }
                    size_t off = in_shard(a, o->hdr, origin, dst);
                    if (o->self >= 0) {
                        copy_box(shard + off, dst, piece_in_buffer(c, &c->pieces[o->self]), c->stride, cnt, r,
                                 a->elem);
                    } else {
                        c_strides(cnt, r, a->elem, src);
                        copy_box(shard + off, dst, in + ooff[p], src, cnt, r, a->elem);
                        zarr_mpi_i_stats.bytes_received += o->bytes;
                    }
                }
                if (st == ZARR_OK) {
                    st = zarr_array_write_chunk(twin, coords, shard, a->shard_bytes);
                    zarr_mpi_i_stats.shards_written++;
                    if (st != ZARR_OK) {
                        st = zarr_mpi_i_fail(st, "%s: storing shard %llu: %s", c->what,
                                             (unsigned long long)c->own[i].shard, zarr_last_error());
                    }
                }
            }
            i = j;
        }
        free(in);
        st = zarr_mpi_i_agree(c->comm, st);
    }
    free(poff), free(ooff), free(shard);
    return st;
}

/* Phase 2 of a read: the rounds (owners read and decode their shards, the pieces go back). */
static zarr_status read_rounds(call *c) {
    const array_info *a = &c->a;
    size_t r = a->r;
    size_t *poff = malloc(sizeof(size_t) * (c->npieces + 1)), *ooff = malloc(sizeof(size_t) * (c->nown + 1));
    char *shard = malloc(a->shard_bytes + 1);
    zarr_status st = ZARR_OK;
    if (poff == NULL || ooff == NULL || shard == NULL) {
        st = zarr_mpi_i_fail(ZARR_ERR_INTERNAL, "%s: out of memory (a shard of %zu bytes)", c->what, a->shard_bytes);
    }
    if ((st = zarr_mpi_i_agree(c->comm, st)) != ZARR_OK) {
        free(poff), free(ooff), free(shard);
        return st;
    }
    for (int q = 0; q < c->nrounds && st == ZARR_OK; q++) {
        size_t out_total = 0, in_total = 0;
        char *out = NULL, *in = NULL;
        /* Reads: the owners send (own[] pieces), the requesters receive (pieces[]). */
        if (!round_layout(c, q, 0, poff, ooff, &in_total, &out_total)) {
            st = zarr_mpi_i_fail(ZARR_ERR_UNSUPPORTED,
                                 "%s: more than %d bytes to exchange in one round: lower cb_buffer_size", c->what,
                                 INT_MAX);
        } else {
            out = malloc(out_total + 1);
            in = malloc(in_total + 1);
            if (out == NULL || in == NULL) {
                st = zarr_mpi_i_fail(ZARR_ERR_INTERNAL, "%s: out of memory", c->what);
            }
        }
        for (size_t i = 0; i < c->nown && st == ZARR_OK;) {
            size_t j = i;
            while (j < c->nown && c->own[j].shard == c->own[i].shard) {
                j++;
            }
            if (c->own[i].round == q) {
                uint64_t coords[R], origin[R];
                shard_at(a, c->own[i].shard, coords, origin);
                st = zarr_array_read_chunk(c->array, coords, shard, a->shard_bytes);
                zarr_mpi_i_stats.shards_read++;
                if (st != ZARR_OK) {
                    st = zarr_mpi_i_fail(st, "%s: reading shard %llu: %s", c->what,
                                         (unsigned long long)c->own[i].shard, zarr_last_error());
                }
                for (size_t p = i; p < j && st == ZARR_OK; p++) {
                    const owned *o = &c->own[p];
                    int64_t src[R], dst[R];
                    uint64_t cnt[R];
                    for (size_t d = 0; d < r; d++) {
                        cnt[d] = o->hdr[3 * d + 1];
                    }
                    size_t off = in_shard(a, o->hdr, origin, src);
                    if (o->self >= 0) {
                        copy_box(piece_in_buffer(c, &c->pieces[o->self]), c->stride, shard + off, src, cnt, r,
                                 a->elem);
                    } else {
                        c_strides(cnt, r, a->elem, dst);
                        copy_box(out + ooff[p], dst, shard + off, src, cnt, r, a->elem);
                        zarr_mpi_i_stats.bytes_sent += o->bytes;
                    }
                }
            }
            i = j;
        }
        /* Nobody exchanges unless every owner read its shards. */
        if ((st = zarr_mpi_i_agree(c->comm, st)) != ZARR_OK) {
            free(out), free(in);
            break;
        }
        int rc = MPI_Alltoallv(out, c->scount, c->sdispl, MPI_BYTE, in, c->rcount, c->rdispl, MPI_BYTE, c->comm);
        free(out);
        if (rc != MPI_SUCCESS) {
            free(in);
            st = zarr_mpi_i_mpi_failed(rc, c->what);
            break;
        }
        zarr_mpi_i_stats.rounds++;
        int64_t dense[R];
        for (size_t i = 0; i < c->npieces; i++) {
            const piece *p = &c->pieces[i];
            if (p->round == q && p->dest != c->me) {
                c_strides(p->count, r, a->elem, dense);
                copy_box(piece_in_buffer(c, p), c->stride, in + poff[i], dense, p->count, r, a->elem);
                zarr_mpi_i_stats.bytes_received += p->bytes;
            }
        }
        free(in);
    }
    free(poff), free(ooff), free(shard);
    return st;
}

/* ---- the calls -------------------------------------------------------------------------------- */

static zarr_status collective(int op, MPI_Comm comm, zarr_array *array, const uint64_t *start,
                              const uint64_t *count, const uint64_t *step, const int64_t *buffer_stride,
                              zarr_data_type buffer_type, void *buffer, size_t buffer_size) {
    call c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.what = op_name(op);
    c.comm = comm;
    c.array = array;
    if (comm == MPI_COMM_NULL) {
        return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT, "%s: the communicator is MPI_COMM_NULL", c.what);
    }
    MPI_Comm_rank(comm, &c.me);
    MPI_Comm_size(comm, &c.size);
    zarr_mpi_i_stats.collective_calls++;
    int64_t cb_nodes = hint(hint_cb_nodes, "ZARR_MPI_CB_NODES");
    int64_t cb_buffer = hint(hint_cb_buffer_size, "ZARR_MPI_CB_BUFFER_SIZE");
    /* 1. Which call, which array, which hints: compared between ranks. */
    zarr_status st = describe(array, c.what, &c.a);
    long fields[H_LEN];
    memset(fields, 0, sizeof fields);
    if (st == ZARR_OK) {
        char *doc = NULL;
        if ((st = zarr_array_metadata(array, &doc)) != ZARR_OK) {
            st = zarr_mpi_i_lib(st, c.what);
        } else {
            fields[H_DOC] = (long)zarr_mpi_i_hash_str(doc);
            zarr_string_free(doc);
        }
        const char *path = zarr_mpi_i_path(array);
        fields[H_PATH] = path != NULL ? (long)zarr_mpi_i_hash_str(path) : 0;
        fields[H_OP] = op;
        fields[H_RANK] = (long)c.a.r;
        fields[H_TYPE] = (long)c.a.dtype;
        fields[H_NODES] = (long)cb_nodes;
        fields[H_BUFFER] = (long)cb_buffer;
        for (size_t d = 0; d < c.a.r; d++) {
            fields[H_SHAPE + d] = (long)c.a.shape[d];
        }
    }
    fields[H_OP] = op;
    zarr_status hs = handshake(comm, c.what, fields, st == ZARR_OK);
    if (st == ZARR_OK) {
        st = hs;
    }
    /* This rank's arguments. */
    size_t belem = 0;
    char scratch_name[96] = "";
    zarr_array *scratch = NULL;
    char *dense = NULL;
    zarr_array *twin = NULL;
    unsigned char *fill = NULL;
    if (st == ZARR_OK) {
        st = check_args(&c, start, count, step, buffer_stride, buffer_type, buffer, buffer_size, &belem);
    }
    if (st == ZARR_OK && op == OP_WRITE_ALL) {
        twin = zarr_mpi_i_coordinated(array);
        if (twin == NULL) {
            twin = array; /* not a zarr_mpi handle: the owners store through it (with its locks) */
        }
        if (zarr_mpi_i_mode(array) == ZARR_READ) {
            st = zarr_mpi_i_fail(ZARR_ERR_READ_ONLY, "%s: the array was opened read-only (zarr_mpi_open with "
                                 "ZARR_READ)", c.what);
        } else if ((fill = malloc(c.a.elem)) == NULL) {
            st = zarr_mpi_i_fail(ZARR_ERR_INTERNAL, "%s: out of memory", c.what);
        } else if ((st = zarr_array_fill_value(array, fill, c.a.elem)) != ZARR_OK) {
            st = zarr_mpi_i_lib(st, c.what);
        }
    }
    /* Another memory type: the selection converted to a dense buffer of the array's type (writes), or
       received into one and converted at the end (reads). */
    int converting = st == ZARR_OK && c.nsel > 0 && buffer_type != c.a.dtype;
    if (converting) {
        dense = malloc((size_t)c.nsel * c.a.elem);
        if (dense == NULL) {
            st = zarr_mpi_i_fail(ZARR_ERR_INTERNAL, "%s: out of memory (%llu elements)", c.what,
                                 (unsigned long long)c.nsel);
        } else if ((st = scratch_array(&c.a, c.count, c.what, scratch_name, sizeof scratch_name, &scratch)) ==
                       ZARR_OK &&
                   op == OP_WRITE_ALL) {
            uint64_t zero[R] = {0};
            st = zarr_write_hyperslab(scratch, zero, c.count, NULL, buffer_stride, buffer_type, buffer, buffer_size);
            if (st == ZARR_OK) {
                st = zarr_read_region(scratch, zero, c.count, dense, (size_t)c.nsel * c.a.elem);
            }
            if (st != ZARR_OK) {
                st = zarr_mpi_i_fail(st, "%s: %s", c.what, zarr_last_error());
            }
        }
        if (st == ZARR_OK) {
            c.base = dense;
            c_strides(c.count, c.a.r, c.a.elem, c.stride);
        }
    }
    if (op == OP_WRITE_ALL && st == ZARR_OK) {
        zarr_mpi_i_stats.bytes_selected += c.nsel * c.a.elem;
    }
    if ((st = zarr_mpi_i_agree(comm, st)) != ZARR_OK) {
        goto out;
    }
    /* 2. Aggregators, pieces, headers, the schedule (checked everywhere before any byte moves). */
    if ((st = aggregators(comm, cb_nodes, &c.aggs, &c.naggs)) != ZARR_OK) {
        goto out; /* an MPI failure: the communicator's error handler has had its say */
    }
    uint64_t budget = cb_buffer > 0 ? (uint64_t)cb_buffer : DEFAULT_BUFFER_SIZE;
    c.per_round = budget / c.a.shard_bytes > 0 ? budget / c.a.shard_bytes : 1;
    st = make_pieces(&c);
    st = exchange_headers(&c, st);
    if ((st = zarr_mpi_i_agree(comm, st)) != ZARR_OK) {
        goto out;
    }
    /* 3. The rounds. */
    st = op == OP_WRITE_ALL ? write_rounds(&c, twin, fill) : read_rounds(&c);
    if (st == ZARR_OK && op == OP_READ_ALL && converting) {
        uint64_t zero[R] = {0};
        st = zarr_write_region(scratch, zero, c.count, dense, (size_t)c.nsel * c.a.elem);
        if (st == ZARR_OK) {
            st = zarr_read_hyperslab(scratch, zero, c.count, NULL, buffer_stride, buffer_type, buffer, buffer_size);
        }
        if (st != ZARR_OK) {
            st = zarr_mpi_i_fail(st, "%s: %s", c.what, zarr_last_error());
        }
        st = zarr_mpi_i_agree(comm, st);
    } else if (op == OP_READ_ALL) {
        st = zarr_mpi_i_agree(comm, st);
    }
out:
    if (scratch != NULL) {
        scratch_free(scratch, scratch_name);
    }
    free(dense);
    free(fill);
    call_free(&c);
    return st;
}

zarr_status zarr_mpi_write_all(MPI_Comm comm, zarr_array *array, const uint64_t *start, const uint64_t *count,
                               const uint64_t *step, const int64_t *buffer_stride, zarr_data_type buffer_type,
                               const void *buffer, size_t buffer_size) {
    return collective(OP_WRITE_ALL, comm, array, start, count, step, buffer_stride, buffer_type,
                      (void *)(uintptr_t)buffer, buffer_size);
}

zarr_status zarr_mpi_read_all(MPI_Comm comm, zarr_array *array, const uint64_t *start, const uint64_t *count,
                              const uint64_t *step, const int64_t *buffer_stride, zarr_data_type buffer_type,
                              void *buffer, size_t buffer_size) {
    return collective(OP_READ_ALL, comm, array, start, count, step, buffer_stride, buffer_type, buffer, buffer_size);
}

zarr_status zarr_mpi_i_begin(MPI_Comm comm, int op) {
    long fields[H_LEN];
    if (comm == MPI_COMM_NULL) {
        return zarr_mpi_i_fail(ZARR_ERR_INVALID_ARGUMENT, "%s: the communicator is MPI_COMM_NULL", op_name(op));
    }
    memset(fields, 0, sizeof fields);
    fields[H_OP] = op;
    zarr_status st = handshake(comm, op_name(op), fields, 1);
    return st == ZARR_OK ? ZARR_OK : zarr_mpi_i_agree(comm, st);
}
