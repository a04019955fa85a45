/* Crash consistency: a writer killed (SIGKILL) at a random moment leaves every chunk, shard and
 * metadata document at its old or its new value, no lock held, and no temporary file that is read as
 * data or survives the next writer.
 *
 * The parent repeatedly forks a writer that runs a deterministic sequence of writes of many kinds
 * (whole chunks, partial regions across chunks, shard updates, whole shards, erased chunks, attribute
 * updates, resizes) on a plain and a sharded array, reporting through shared memory how many writes
 * it started and finished; the parent kills it after a random delay. A checker child then opens the
 * arrays (a lock left held would stop it: it runs under alarm() and the parent treats a timeout as a
 * failure), reads everything, and the parent compares per chunk (shard) with the model before and
 * after the write in flight: each must equal one of them, and the shape and attributes likewise. The
 * checker then rewrites both arrays whole and the attributes (taking every lock; the same values), after
 * which no temporary file may remain. Every write stores values unique to it, so a torn or lost write
 * shows. The parent itself never calls libzarr (its thread pool would not survive a fork). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "test_util.h"

#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#define ROWS 48 /* the most rows an array has (shape[0] is 32 or 48) */
#define COLS 32
#define MIN_RUNS 120 /* and more until 1000 writes have completed */
#define MAX_RUNS 2000
#define MAX_OPS 400 /* writes per writer run, if it is not killed before */

/* P: uint32, 8x8 chunks. S: uint32, 16x16 shards of 4x4 inner chunks. Both start at 32x32. */
static const char *P_META =
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[32,32],\"data_type\":\"uint32\","
    "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[8,8]}},"
    "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,"
    "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"crc32c\"}]}";
static const char *S_META =
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[32,32],\"data_type\":\"uint32\","
    "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[16,16]}},"
    "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":0,"
    "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[4,4],"
    "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"gzip\",\"configuration\":{\"level\":1}}],"
    "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},{\"name\":\"crc32c\"}],"
    "\"index_location\":\"end\"}}]}";

enum kind { WHOLE_CHUNK_P, REGION_P, REGION_S, WHOLE_SHARD_S, ATTRS_P, RESIZE_P, RESIZE_S, ERASE_P, KINDS };

typedef struct {
    int kind;
    uint64_t r0, c0, nr, nc; /* a region, or a chunk (r0, c0) */
    uint64_t rows;           /* a resize: the new shape[0] */
    uint32_t v;              /* the value written (unique to the write) */
} op;

/* The deterministic write sequence of one writer run. */
typedef struct {
    uint64_t rng;
    uint64_t prows, srows; /* shapes as the sequence goes */
    uint32_t next_v;
} gen;

static uint32_t rnd(gen *g) {
    g->rng = g->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(g->rng >> 33);
}

static op next_op(gen *g) {
    op o;
    memset(&o, 0, sizeof o);
    o.kind = (int)(rnd(g) % KINDS);
    o.v = g->next_v++;
    switch (o.kind) {
    case WHOLE_CHUNK_P:
    case ERASE_P:
        o.r0 = rnd(g) % (g->prows / 8);
        o.c0 = rnd(g) % (COLS / 8);
        break;
    case WHOLE_SHARD_S:
        o.r0 = rnd(g) % (g->srows / 16);
        o.c0 = rnd(g) % (COLS / 16);
        break;
    case REGION_P:
    case REGION_S: {
        uint64_t rows = o.kind == REGION_P ? g->prows : g->srows;
        o.r0 = rnd(g) % rows;
        o.c0 = rnd(g) % COLS;
        o.nr = 1 + rnd(g) % (rows - o.r0 < 12 ? rows - o.r0 : 12);
        o.nc = 1 + rnd(g) % (COLS - o.c0 < 12 ? COLS - o.c0 : 12);
        break;
    }
    case RESIZE_P:
        o.rows = g->prows = g->prows == 32 ? 48 : 32;
        break;
    case RESIZE_S:
        o.rows = g->srows = g->srows == 32 ? 48 : 32;
        break;
    }
    return o;
}

/* What the arrays hold (rows beyond the shape are 0: their chunks are deleted). */
typedef struct {
    uint64_t prows, srows;
    long attr; /* the attributes {"seq": attr}, or -1 for {} */
    uint32_t p[ROWS * COLS], s[ROWS * COLS];
} state;

static void fill_rect(uint32_t *a, uint64_t r0, uint64_t c0, uint64_t nr, uint64_t nc, uint32_t v) {
    uint64_t i, j;
    for (i = r0; i < r0 + nr; i++)
        for (j = c0; j < c0 + nc; j++) a[i * COLS + j] = v;
}

static void apply(state *m, const op *o) {
    switch (o->kind) {
    case WHOLE_CHUNK_P: fill_rect(m->p, o->r0 * 8, o->c0 * 8, 8, 8, o->v); break;
    case ERASE_P: fill_rect(m->p, o->r0 * 8, o->c0 * 8, 8, 8, 0); break;
    case WHOLE_SHARD_S: fill_rect(m->s, o->r0 * 16, o->c0 * 16, 16, 16, o->v); break;
    case REGION_P: fill_rect(m->p, o->r0, o->c0, o->nr, o->nc, o->v); break;
    case REGION_S: fill_rect(m->s, o->r0, o->c0, o->nr, o->nc, o->v); break;
    case ATTRS_P: m->attr = (long)o->v; break;
    case RESIZE_P:
        if (o->rows < m->prows) fill_rect(m->p, o->rows, 0, m->prows - o->rows, COLS, 0);
        m->prows = o->rows;
        break;
    case RESIZE_S:
        if (o->rows < m->srows) fill_rect(m->s, o->rows, 0, m->srows - o->rows, COLS, 0);
        m->srows = o->rows;
        break;
    }
}

/* Shared with the children. */
typedef struct {
    volatile uint64_t started, done; /* writes of the current writer run */
    volatile int writer_error;
    state actual;                    /* what the checker read */
    volatile int checker_ok;
    volatile long temps_before, temps_after; /* temporary files seen before / after the checker's writes */
} shared_area;

static shared_area *sh;
static char *pdir, *sdir;

static zarr_array *open_rw(const char *p) {
    zarr_array *a = NULL;
    if (zarr_open(p, ZARR_READ_WRITE, &a) != ZARR_OK) {
        fprintf(stderr, "open %s: %s\n", p, zarr_last_error());
        _exit(3);
    }
    return a;
}

static zarr_status run_op(zarr_array *P, zarr_array *S, const op *o, uint32_t *buf) {
    uint64_t start[2] = {o->r0, o->c0}, count[2] = {o->nr, o->nc}, chunk[2] = {o->r0, o->c0}, shape[2];
    char json[64];
    size_t i;
    switch (o->kind) {
    case WHOLE_CHUNK_P:
        for (i = 0; i < 64; i++) buf[i] = o->v;
        return zarr_array_write_chunk(P, chunk, buf, 64 * 4);
    case ERASE_P: return zarr_array_erase_chunk(P, chunk);
    case WHOLE_SHARD_S:
        for (i = 0; i < 256; i++) buf[i] = o->v;
        return zarr_array_write_chunk(S, chunk, buf, 256 * 4);
    case REGION_P:
    case REGION_S:
        for (i = 0; i < o->nr * o->nc; i++) buf[i] = o->v;
        return zarr_write_region(o->kind == REGION_P ? P : S, start, count, buf, o->nr * o->nc * 4);
    case ATTRS_P:
        sprintf(json, "{\"seq\":%lu}", (unsigned long)o->v);
        return zarr_array_set_attributes(P, json);
    case RESIZE_P:
    case RESIZE_S:
        shape[0] = o->rows;
        shape[1] = COLS;
        return zarr_array_resize(o->kind == RESIZE_P ? P : S, shape, 2);
    }
    return ZARR_ERR_INTERNAL;
}

static void writer(uint64_t seed, uint64_t prows, uint64_t srows, uint32_t first_v) {
    gen g = {seed, prows, srows, first_v};
    uint32_t buf[256];
    zarr_array *P = open_rw(pdir), *S = open_rw(sdir);
    uint64_t k;
    for (k = 0; k < MAX_OPS; k++) {
        op o = next_op(&g);
        zarr_status st;
        sh->started = k + 1;
        __sync_synchronize();
        st = run_op(P, S, &o, buf);
        __sync_synchronize();
        if (st != ZARR_OK) {
            fprintf(stderr, "writer: write %lu (kind %d): %s: %s\n", (unsigned long)k, o.kind, zarr_status_name(st), zarr_last_error());
            sh->writer_error = 1;
            _exit(3);
        }
        sh->done = k + 1;
    }
    _exit(0);
}

/* Counts temporary files (".<name>.zarrtmp", ".<name>.<pid>.<n>.tmp") under dir. */
static long count_temps(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    long n = 0;
    if (!d) return 0;
    while ((e = readdir(d))) {
        char sub[4096];
        struct stat st;
        size_t len = strlen(e->d_name);
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
            n += count_temps(sub);
        } else if (e->d_name[0] == '.' && ((len > 8 && !strcmp(e->d_name + len - 8, ".zarrtmp")) ||
                                           (len > 4 && !strcmp(e->d_name + len - 4, ".tmp")))) {
            n++;
        }
    }
    closedir(d);
    return n;
}

static int read_array(const char *p, uint64_t *rows, uint32_t *data, long *attr) {
    zarr_array *a = NULL;
    uint64_t shape[2], start[2] = {0, 0};
    char *json = NULL;
    if (zarr_open(p, ZARR_READ, &a) != ZARR_OK || zarr_array_shape(a, shape, 2) != ZARR_OK || shape[1] != COLS ||
        (shape[0] != 32 && shape[0] != 48)) {
        fprintf(stderr, "checker: %s: %s\n", p, zarr_last_error());
        return 0;
    }
    memset(data, 0, ROWS * COLS * 4);
    *rows = shape[0];
    if (zarr_read_region(a, start, shape, data, shape[0] * COLS * 4) != ZARR_OK) {
        fprintf(stderr, "checker: read %s: %s\n", p, zarr_last_error());
        return 0;
    }
    if (attr) {
        unsigned long v;
        if (zarr_array_attributes(a, &json) != ZARR_OK) return 0;
        if (!strcmp(t_compact(json), "{}")) *attr = -1;
        else if (sscanf(t_compact(json), "{\"seq\":%lu}", &v) == 1) *attr = (long)v;
        else {
            fprintf(stderr, "checker: attributes %s\n", json);
            return 0;
        }
        zarr_string_free(json);
    }
    zarr_close(a);
    return 1;
}

/* Rewrites both arrays whole with what they hold, and the attributes: every lock is taken, every
 * temporary name reused. */
static int rewrite(void) {
    zarr_array *P = open_rw(pdir), *S = open_rw(sdir);
    uint64_t start[2] = {0, 0}, pc[2] = {sh->actual.prows, COLS}, sc[2] = {sh->actual.srows, COLS};
    char json[64];
    int ok = 1;
    if (sh->actual.attr < 0) strcpy(json, "{}");
    else sprintf(json, "{\"seq\":%ld}", sh->actual.attr);
    ok &= zarr_write_region(P, start, pc, sh->actual.p, pc[0] * COLS * 4) == ZARR_OK;
    ok &= zarr_write_region(S, start, sc, sh->actual.s, sc[0] * COLS * 4) == ZARR_OK;
    ok &= zarr_array_set_attributes(P, json) == ZARR_OK;
    /* S's metadata is written only by its resizes: this is the next writer of its zarr.json (a killed
     * resize leaves S's temporary zarr.json, which only the next writer of that key replaces). */
    ok &= zarr_array_set_attributes(S, "{}") == ZARR_OK;
    if (!ok) fprintf(stderr, "checker: rewrite: %s\n", zarr_last_error());
    zarr_close(P);
    zarr_close(S);
    return ok;
}

static void checker(void) {
    int ok;
    alarm(30); /* a lock left held by the killed writer: the checker's writes would wait forever */
    sh->temps_before = count_temps(pdir) + count_temps(sdir);
    ok = read_array(pdir, &sh->actual.prows, sh->actual.p, &sh->actual.attr) &&
         read_array(sdir, &sh->actual.srows, sh->actual.s, NULL) && rewrite();
    sh->temps_after = count_temps(pdir) + count_temps(sdir);
    sh->checker_ok = ok;
    _exit(ok ? 0 : 4);
}

/* Whether unit (rows r0.., cols c0.., n x n) of `got` equals that of `want`. */
static int same_unit(const uint32_t *got, const uint32_t *want, uint64_t r0, uint64_t c0, uint64_t n) {
    uint64_t i;
    for (i = r0; i < r0 + n; i++)
        if (memcmp(got + i * COLS + c0, want + i * COLS + c0, n * 4)) return 0;
    return 1;
}

/* Every unit of `got` equals the one of `old` or of `new_`; returns the number of units that do not. */
static int compare_units(const uint32_t *got, const uint32_t *old, const uint32_t *new_, uint64_t n, long *checks) {
    uint64_t r, c;
    int bad = 0;
    for (r = 0; r < ROWS; r += n)
        for (c = 0; c < COLS; c += n) {
            (*checks)++;
            if (!same_unit(got, old, r, c, n) && !same_unit(got, new_, r, c, n)) {
                bad++;
                fprintf(stderr, "unit at (%lu,%lu) of %lu: neither the old nor the new value\n", (unsigned long)r,
                        (unsigned long)c, (unsigned long)n);
            }
        }
    return bad;
}

int main(void) {
    char *tmp = t_mkdtemp("crash");
    static state model, after;
    long writes = 0, kills = 0, checks = 0, in_flight = 0, temps_seen = 0;
    int run, status;
    pid_t pid;
    unsigned seed = (unsigned)time(NULL);
    const char *env_seed = getenv("ZARR_CRASH_SEED");
    if (env_seed) seed = (unsigned)strtoul(env_seed, NULL, 10);
    srand(seed);
    printf("seed %u (set ZARR_CRASH_SEED to repeat)\n", seed);

    pdir = malloc(strlen(tmp) + 8);
    sdir = malloc(strlen(tmp) + 8);
    sprintf(pdir, "%s/p.zarr", tmp);
    sprintf(sdir, "%s/s.zarr", tmp);
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) { perror("mmap"); return 2; }

    pid = fork();
    if (pid == 0) {
        zarr_array *a = NULL, *b = NULL;
        _exit(zarr_create(pdir, P_META, &a) == ZARR_OK && zarr_create(sdir, S_META, &b) == ZARR_OK ? 0 : 1);
    }
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    model.prows = model.srows = 32;
    model.attr = -1;

    for (run = 0; (run < MIN_RUNS || writes < 1000) && run < MAX_RUNS && !t_failures; run++) {
        uint64_t seed_run = 0x12345678ULL * (uint64_t)(run + 1) + seed;
        uint32_t first_v = (uint32_t)run * 1000 + 1;
        uint64_t k, started, done;
        gen g;
        struct timespec delay;
        sh->started = sh->done = 0;
        sh->writer_error = 0;
        pid = fork();
        if (pid == 0) writer(seed_run, model.prows, model.srows, first_v);
        delay.tv_sec = 0;
        delay.tv_nsec = (long)(rand() % 30000) * 1000; /* 0 .. 30 ms */
        nanosleep(&delay, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) kills++;
        CHECK(!sh->writer_error);
        started = sh->started;
        done = sh->done;
        writes += (long)done;

        /* The model after the finished writes, and after the one in flight. */
        g.rng = seed_run;
        g.prows = model.prows;
        g.srows = model.srows;
        g.next_v = first_v;
        for (k = 0; k < done; k++) {
            op o = next_op(&g);
            apply(&model, &o);
        }
        after = model;
        if (started > done) {
            op o = next_op(&g);
            apply(&after, &o);
            in_flight++;
        }

        sh->checker_ok = 0;
        pid = fork();
        if (pid == 0) checker();
        waitpid(pid, &status, 0);
        t_checks++;
        if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0 && sh->checker_ok)) {
            t_failures++;
            fprintf(stderr, "run %d: the checker failed (%s)\n", run,
                    WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? "timed out: a lock left held?" : "see above");
            break;
        }
        temps_seen += sh->temps_before;
        t_checks += 3;
        if (sh->temps_after != 0) {
            t_failures++;
            fprintf(stderr, "run %d: %ld temporary files left after the next writer\n", run, sh->temps_after);
        }
        if (sh->actual.prows != model.prows && sh->actual.prows != after.prows) {
            t_failures++;
            fprintf(stderr, "run %d: P has %lu rows\n", run, (unsigned long)sh->actual.prows);
        }
        if (sh->actual.srows != model.srows && sh->actual.srows != after.srows) {
            t_failures++;
            fprintf(stderr, "run %d: S has %lu rows\n", run, (unsigned long)sh->actual.srows);
        }
        t_checks++;
        if (sh->actual.attr != model.attr && sh->actual.attr != after.attr) {
            t_failures++;
            fprintf(stderr, "run %d: attributes seq %ld, expected %ld or %ld\n", run, sh->actual.attr, model.attr, after.attr);
        }
        {
            long c = 0;
            int bad = compare_units(sh->actual.p, model.p, after.p, 8, &c) + compare_units(sh->actual.s, model.s, after.s, 16, &c);
            checks += c;
            t_checks += (int)c;
            if (bad) {
                t_failures++;
                fprintf(stderr, "run %d: %d chunks/shards torn or lost (write in flight: %s)\n", run, bad,
                        started > done ? "yes" : "no");
            }
        }
        checks += 4;
        model = sh->actual; /* each unit is now known to be the old or the new value */
    }
    printf("crash: %ld writes completed, %ld kills (%ld during a write), %ld checks, %ld temporary files left by "
           "killed writers (all removed by the next writer)\n",
           writes, kills, in_flight, checks, temps_seen);
    CHECK(writes >= 1000);
    CHECK(kills >= 100);
    printf("%d checks, %d failures\n", t_checks, t_failures);
    munmap(sh, sizeof *sh);
    free(pdir);
    free(sdir);
    free(tmp);
    return t_failures ? 1 : 0;
}
