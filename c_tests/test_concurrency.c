/* Concurrent writers of one array: no update is lost between processes, threads sharing a handle, and
 * threads with their own handles.
 *
 * Each writer owns the rows i with i % W == w (W writers) and writes random strided regions of its own
 * rows (rows r0, r0 + W, ..., a random column range) with values naming the writer, the round and the
 * column. Regions of different writers interleave inside the same chunks and shards, so every write is
 * a read-modify-write of a chunk (shard) another writer is changing too; without locking, updates get
 * lost. Since every cell has one owner, the final array is computable whatever the interleaving: the
 * value of the owner's last write covering the cell. Every cell is compared.
 *
 * A second scenario checks that metadata updates do not undo each other: one process resizes an array
 * while another sets its attributes; both must survive. */
#include "test_util.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>

#define N 64
#define ROUNDS 200

/* 64x64 uint32, 16x16 chunks. */
static const char *PLAIN =
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[64,64],\"data_type\":\"uint32\","
    "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[16,16]}},"
    "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,"
    "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}";
/* 64x64 uint32, 32x32 shards of 8x8 inner chunks. */
static const char *SHARDED =
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[64,64],\"data_type\":\"uint32\","
    "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[32,32]}},"
    "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,"
    "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[8,8],"
    "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
    "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"crc32c\"}],"
    "\"index_location\":\"end\"}}]}";
static const char *SMALL =
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[10],\"data_type\":\"uint8\","
    "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4]}},"
    "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,\"codecs\":[{\"name\":\"bytes\"}]}";

static char *tmp;

static char *path_of(const char *rel) {
    char *p = malloc(strlen(tmp) + strlen(rel) + 2);
    sprintf(p, "%s/%s", tmp, rel);
    return p;
}

/* A small deterministic generator per writer. */
static uint32_t next_rand(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*s >> 33);
}

/* One write of writer w in round r: rows r0, r0 + W, ... (nrows of them), columns c0 .. c0 + width. */
typedef struct {
    uint64_t r0, nrows, c0, width;
} region;

static region pick(uint64_t *s, int w, int W) {
    region g;
    uint64_t owned = (N - w + W - 1) / W; /* rows of writer w */
    uint64_t first = next_rand(s) % owned;
    g.r0 = (uint64_t)w + first * (uint64_t)W;
    g.nrows = 1 + next_rand(s) % (owned - first < 6 ? owned - first : 6);
    g.c0 = next_rand(s) % N;
    g.width = 1 + next_rand(s) % (N - g.c0);
    return g;
}

static uint32_t value(int w, int r, uint64_t col) { return ((uint32_t)(w + 1) << 24) | ((uint32_t)(r + 1) << 8) | (uint32_t)col; }

/* Writer w of W: ROUNDS writes into each array; returns the number of failed calls. */
static int writer(zarr_array *const *arrays, int narrays, int w, int W) {
    uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(w + 1) + (uint64_t)W;
    uint32_t *buf = malloc(N * N * sizeof *buf);
    int r, a, bad = 0;
    for (r = 0; r < ROUNDS; r++) {
        region g = pick(&s, w, W);
        uint64_t start[2] = {g.r0, g.c0}, count[2] = {g.nrows, g.width}, step[2] = {(uint64_t)W, 1};
        uint64_t i, j;
        for (i = 0; i < g.nrows; i++)
            for (j = 0; j < g.width; j++) buf[i * g.width + j] = value(w, r, g.c0 + j);
        for (a = 0; a < narrays; a++) {
            zarr_status st;
            if (g.nrows == 1) /* a dense region write */
                st = zarr_write_region(arrays[a], start, count, buf, g.width * 4);
            else
                st = zarr_write_hyperslab(arrays[a], start, count, step, NULL, ZARR_UINT32, buf, g.nrows * g.width * 4);
            if (st != ZARR_OK) {
                fprintf(stderr, "writer %d round %d: %s: %s\n", w, r, zarr_status_name(st), zarr_last_error());
                bad++;
            }
        }
    }
    free(buf);
    return bad;
}

/* The expected final array for W writers (each cell: its owner's last write covering it). */
static void expected(uint32_t *out, int W) {
    int w, r;
    memset(out, 0, N * N * 4);
    for (w = 0; w < W; w++) {
        uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(w + 1) + (uint64_t)W;
        for (r = 0; r < ROUNDS; r++) {
            region g = pick(&s, w, W);
            uint64_t i, j;
            for (i = 0; i < g.nrows; i++)
                for (j = 0; j < g.width; j++) out[(g.r0 + i * W) * N + g.c0 + j] = value(w, r, g.c0 + j);
        }
    }
}

/* Compares every cell of the array at `rel` with the expected result of W writers. */
static void verify(const char *rel, int W, const char *what) {
    static uint32_t want[N * N], got[N * N];
    uint64_t start[2] = {0, 0}, count[2] = {N, N};
    zarr_array *a = NULL;
    char *p = path_of(rel);
    int i, lost = 0;
    expected(want, W);
    CHECK_OK(zarr_open(p, ZARR_READ, &a));
    CHECK_OK(zarr_read_region(a, start, count, got, sizeof got));
    for (i = 0; i < N * N; i++) {
        t_checks++;
        if (got[i] != want[i]) lost++;
    }
    if (lost) {
        t_failures++;
        fprintf(stderr, "%s (%s): %d of %d cells lost their last update\n", what, rel, lost, N * N);
    }
    printf("%s: %s: %d writers x %d writes, %d cells compared, %d wrong\n", what, rel, W, ROUNDS, N * N, lost);
    zarr_close(a);
    free(p);
}

/* Forks a child running fn(arg); returns its pid. The child exits with fn's result. */
static pid_t spawn(int (*fn)(int), int arg) {
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(2); }
    if (pid == 0) {
        alarm(120); /* a stuck lock fails the test instead of hanging it */
        _exit(fn(arg));
    }
    return pid;
}

static int wait_ok(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int create_all(int unused) {
    zarr_group *g = NULL;
    zarr_array *a = NULL;
    char *root = path_of("g.zarr");
    const char *names[] = {"plain", "sharded", "plain_t1", "sharded_t1", "plain_tn", "sharded_tn"};
    const char *docs[] = {PLAIN, SHARDED, PLAIN, SHARDED, PLAIN, SHARDED};
    int i, bad = 0;
    (void)unused;
    bad |= zarr_group_create(root, "{}", &g) != ZARR_OK;
    for (i = 0; i < 6 && !bad; i++) {
        bad |= zarr_group_create_array(g, names[i], docs[i], &a) != ZARR_OK;
        zarr_close(a);
    }
    bad |= zarr_group_create_array(g, "small", SMALL, &a) != ZARR_OK;
    zarr_close(a);
    zarr_group_close(g);
    if (bad) fprintf(stderr, "create: %s\n", zarr_last_error());
    free(root);
    return bad;
}

/* Process writer p: opens both arrays itself, half of the writers through the group (a store rooted at
 * the group), half by the arrays' own paths (stores rooted at the arrays). */
static int process_writer(int p) {
    zarr_array *arrays[2] = {NULL, NULL};
    int bad = 0;
    if (p % 2) {
        zarr_group *g = NULL;
        char *root = path_of("g.zarr");
        bad |= zarr_group_open(root, ZARR_READ_WRITE, &g) != ZARR_OK;
        bad |= !g || zarr_group_open_array(g, "plain", &arrays[0]) != ZARR_OK;
        bad |= !g || zarr_group_open_array(g, "sharded", &arrays[1]) != ZARR_OK;
        zarr_group_close(g);
        free(root);
    } else {
        char *a = path_of("g.zarr/plain"), *b = path_of("g.zarr/sharded");
        bad |= zarr_open(a, ZARR_READ_WRITE, &arrays[0]) != ZARR_OK;
        bad |= zarr_open(b, ZARR_READ_WRITE, &arrays[1]) != ZARR_OK;
        free(a);
        free(b);
    }
    if (bad) {
        fprintf(stderr, "process %d: open: %s\n", p, zarr_last_error());
        return 1;
    }
    bad = writer(arrays, 2, p, 4);
    zarr_close(arrays[0]);
    zarr_close(arrays[1]);
    return bad != 0;
}

/* Resizes the small array 100 times (last shape 10 + 99 = 109). */
static int resizer(int unused) {
    zarr_array *a = NULL;
    char *p = path_of("g.zarr/small");
    int k, bad = 0;
    (void)unused;
    if (zarr_open(p, ZARR_READ_WRITE, &a) != ZARR_OK) return 1;
    for (k = 0; k < 100; k++) {
        uint64_t shape = 10 + (uint64_t)k;
        bad |= zarr_array_resize(a, &shape, 1) != ZARR_OK;
    }
    zarr_close(a);
    free(p);
    return bad;
}

/* Sets the small array's attributes 100 times (last {"k":99}). */
static int attributer(int unused) {
    zarr_array *a = NULL;
    char *p = path_of("g.zarr/small"), json[64];
    int k, bad = 0;
    (void)unused;
    if (zarr_open(p, ZARR_READ_WRITE, &a) != ZARR_OK) return 1;
    for (k = 0; k < 100; k++) {
        sprintf(json, "{\"k\":%d}", k);
        bad |= zarr_array_set_attributes(a, json) != ZARR_OK;
    }
    zarr_close(a);
    free(p);
    return bad;
}

typedef struct {
    zarr_array *shared; /* NULL: the thread opens its own handle of `rel` */
    const char *rel;
    int w, bad;
} thread_job;

static void *thread_writer(void *arg) {
    thread_job *job = arg;
    zarr_array *a = job->shared;
    if (!a) {
        char *p = path_of(job->rel);
        if (zarr_open(p, ZARR_READ_WRITE, &a) != ZARR_OK) {
            job->bad = 1;
            free(p);
            return NULL;
        }
        free(p);
    }
    job->bad = writer(&a, 1, job->w, 8);
    if (!job->shared) zarr_close(a);
    return NULL;
}

/* 8 threads write `rel`, through one shared handle or each through its own. */
static void threads(const char *rel, int shared) {
    pthread_t t[8];
    thread_job jobs[8];
    zarr_array *a = NULL;
    int i;
    if (shared) {
        char *p = path_of(rel);
        CHECK_OK(zarr_open(p, ZARR_READ_WRITE, &a));
        free(p);
    }
    for (i = 0; i < 8; i++) {
        jobs[i].shared = a;
        jobs[i].rel = rel;
        jobs[i].w = i;
        jobs[i].bad = 0;
        CHECK(pthread_create(&t[i], NULL, thread_writer, &jobs[i]) == 0);
    }
    for (i = 0; i < 8; i++) {
        CHECK(pthread_join(t[i], NULL) == 0);
        CHECK(jobs[i].bad == 0);
    }
    zarr_close(a);
    verify(rel, 8, shared ? "8 threads, one handle" : "8 threads, own handles");
}

int main(void) {
    pid_t pids[4];
    int i;
    tmp = t_mkdtemp("concurrency");
    /* No libzarr call in this process before the forks (its thread pool would not survive a fork). */
    CHECK(wait_ok(spawn(create_all, 0)));
    for (i = 0; i < 4; i++) pids[i] = spawn(process_writer, i);
    for (i = 0; i < 4; i++) CHECK(wait_ok(pids[i]));
    pids[0] = spawn(resizer, 0);
    pids[1] = spawn(attributer, 0);
    CHECK(wait_ok(pids[0]));
    CHECK(wait_ok(pids[1]));

    verify("g.zarr/plain", 4, "4 processes");
    verify("g.zarr/sharded", 4, "4 processes");
    {
        /* Both metadata updates survived: the last shape and the last attributes. */
        zarr_array *a = NULL;
        char *p = path_of("g.zarr/small"), *json = NULL;
        uint64_t shape = 0;
        CHECK_OK(zarr_open(p, ZARR_READ, &a));
        CHECK_OK(zarr_array_shape(a, &shape, 1));
        CHECK(shape == 109);
        CHECK_OK(zarr_array_attributes(a, &json));
        CHECK(json && strcmp(t_compact(json), "{\"k\":99}") == 0);
        printf("resize x100 + set_attributes x100 by two processes: shape %llu, attributes %s\n",
               (unsigned long long)shape, json ? json : "(null)");
        zarr_string_free(json);
        zarr_close(a);
        free(p);
    }
    threads("g.zarr/plain_t1", 1);
    threads("g.zarr/sharded_t1", 1);
    threads("g.zarr/plain_tn", 0);
    threads("g.zarr/sharded_tn", 0);

    printf("%d checks, %d failures\n", t_checks, t_failures);
    return t_failures ? 1 : 0;
}
