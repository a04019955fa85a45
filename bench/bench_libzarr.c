/*
 * bench_libzarr: times one benchmark workload (bench/README.md, WORKLOADS.md) with libzarr's public
 * C API and prints one JSON line of results on stdout.
 *
 *   bench_libzarr --op W|R|Rinto|S|P --layout LAYOUT.json --array DIR --data volume_u16_512.bin
 *                 [--regions regions_16.txt] [--reps N] [--name LABEL] [--threads N] [--work DIR]
 *                 [--small] [--strings] [--no-warmup] [--fresh-dirs]
 *
 * W      write the whole 512^3 uint16 volume from memory into a new array; before each repetition
 *        (untimed) DIR is removed and the array is created from LAYOUT.json; after it (untimed) the
 *        array is re-read and compared with the volume. One untimed warm-up repetition comes first.
 * R      read the whole array into a buffer malloc'ed inside the timed part (its page faults count).
 * Rinto  read the whole array into one pre-allocated, pre-touched buffer reused by every repetition
 *        (overwritten with a sentinel between repetitions, untimed, so a no-op read cannot pass).
 * S      1000 reads of 16^3 boxes, one zarr_read_region() call each, origins from --regions.
 * P      read the plane [:, :, 200] (count 512 x 512 x 1).
 * Rs     strided read: every 2nd element per dimension ([::2, ::2, ::2], 256^3 elements) with
 *        zarr_read_hyperslab() into a C-order uint16 buffer malloc'ed inside the timed part.
 * RsF    the same into a Fortran-order (column-major) uint16 buffer (buffer strides {1, 256, 65536}).
 * Rs32   the same into a C-order float32 buffer (memory-type conversion in the read).
 * Wbox   1000 writes of 16^3 boxes, one zarr_write_region() call each, origins from --regions, into a
 *        copy of the array DIR made (untimed) at --work WORK before each repetition; box i holds the
 *        volume's box XOR (0x9E37 + i). zarr_close() is timed. Afterwards (untimed) WORK is read whole
 *        and compared with the volume with the boxes replaced in order.
 *
 * W has one untimed warm-up repetition (--no-warmup: none); Wbox has none.
 * --fresh-dirs (W with --small): repetition r writes into the new directory DIR.rep<r> (the warm-up into
 * DIR.rep0) and nothing is removed; run_all.py removes the copies after the run. ext4 without a journal
 * (this VM's disk) does not reuse an inode for 60 s after its deletion, 360 s while its inode-table block
 * is dirty, and scans past every such inode for each new file (fs/ext4/ialloc.c, recently_deleted):
 * 10^5 files created within minutes of 10^5 deletions time that scan, not the writer.
 * With --strings (layout V, a 2-D array of vlen-utf8 strings), --data is the strings file written by
 * `peers.py --op gen-strings` (uint64 n, n + 1 uint64 byte offsets, the UTF-8 bytes; little-endian) and
 * only W, R and S are available, through zarr_write_region_vlen() / zarr_read_region_vlen():
 * W writes all strings in one call (+ zarr_close), R reads them all into a new zarr_vlen (freed
 * after the check, untimed), S makes 1000 reads of 16 x 16 boxes at rows (613 i + 17) mod (H - 15),
 * columns (1597 i + 1013) mod (W - 15) (the 1000 zarr_vlen are freed after the timed part). Every result
 * is compared with the file's strings, untimed.
 * With --small (layout N, many small chunks), --data is the synthetic uint8 volume of the array's shape
 * (bench/README.md: 1600 x 1600 x 1280, 10^5 chunks of 32^3) and only W and R are available.
 *
 * For R/Rinto/S/P the array in DIR must already exist (the zarr-python copy); one untimed full read
 * warms the page cache before the timed repetitions. Every repetition's result is checked against
 * the volume outside the timed part; a mismatch is fatal (exit 1, status "error").
 *
 * Threads: ZARR_NUM_THREADS from the environment (applied with zarr_set_num_threads too), or
 * --threads N. Exit status: 0 ok, 1 error, 3 libzarr returned ZARR_ERR_UNSUPPORTED (status "unsupported").
 *
 * Build: cc -O2 -I include bench/bench_libzarr.c -L target/release -lzarr -Wl,-rpath,$PWD/target/release
 */
#define _GNU_SOURCE
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "zarr.h"

#define N 512
#define NDIM 3
#define ELEM 2
#define VOL_BYTES ((size_t)N * N * N * ELEM)
#define BOX 16
#define BOX_BYTES ((size_t)BOX * BOX * BOX * ELEM)
#define PLANE_X 200
#define MAX_REPS 1000

static const char *g_op = "?";
static const char *g_name = "?";

/* ---------------------------------------------------------------- output, errors */

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void fail_json(const char *status, int code, const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "bench_libzarr: %s\n", msg);
    printf("{\"impl\": \"libzarr\", \"layout\": ");
    json_str(stdout, g_name);
    printf(", \"op\": ");
    json_str(stdout, g_op);
    printf(", \"status\": ");
    json_str(stdout, status);
    printf(", \"error\": ");
    json_str(stdout, msg);
    printf("}\n");
    fflush(stdout);
    exit(code);
}

#define die(...) fail_json("error", 1, __VA_ARGS__)

/* A failed libzarr call: ZARR_ERR_UNSUPPORTED is reported as such (exit 3), anything else is fatal. */
static void check(zarr_status st, const char *what) {
    if (st == ZARR_OK) return;
    if (st == ZARR_ERR_UNSUPPORTED)
        fail_json("unsupported", 3, "%s: %s: %s", what, zarr_status_name(st), zarr_last_error());
    die("%s: %s: %s", what, zarr_status_name(st), zarr_last_error());
}

/* ---------------------------------------------------------------- helpers */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds (user + system) of the whole process, all threads */
static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p) die("out of memory (%zu bytes)", n);
    return p;
}

static char *read_file(const char *path, size_t *len_out) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open %s: %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0) die("cannot seek %s", path);
    long len = ftell(f);
    if (len < 0) die("cannot size %s", path);
    rewind(f);
    char *buf = xmalloc((size_t)len + 1);
    if (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len) die("short read of %s", path);
    buf[len] = '\0';
    fclose(f);
    if (len_out) *len_out = (size_t)len;
    return buf;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

/* Removes the array directory DIR; refuses a directory that does not look like an array. */
static void remove_array_dir(const char *dir) {
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (errno == ENOENT) return;
        die("cannot stat %s: %s", dir, strerror(errno));
    }
    char meta[4096];
    snprintf(meta, sizeof meta, "%s/zarr.json", dir);
    if (!S_ISDIR(st.st_mode) || access(meta, F_OK) != 0)
        die("refusing to remove %s: not an array directory (no zarr.json)", dir);
    if (nftw(dir, rm_entry, 32, FTW_DEPTH | FTW_PHYS) != 0) die("cannot remove %s: %s", dir, strerror(errno));
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *t, int n) {
    double s[MAX_REPS];
    memcpy(s, t, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static zarr_array *open_checked(const char *dir, int mode) {
    zarr_array *a = NULL;
    check(zarr_open(dir, mode, &a), "zarr_open");
    uint64_t shape[NDIM];
    check(zarr_array_shape(a, shape, NDIM), "zarr_array_shape");
    zarr_data_type dt;
    size_t es;
    check(zarr_array_data_type(a, &dt, &es), "zarr_array_data_type");
    if (shape[0] != N || shape[1] != N || shape[2] != N || dt != ZARR_UINT16 || es != ELEM)
        die("%s: expected a 512^3 uint16 array", dir);
    return a;
}

static void read_all(zarr_array *a, void *buf) {
    const uint64_t start[NDIM] = {0, 0, 0}, count[NDIM] = {N, N, N};
    check(zarr_read_region(a, start, count, buf, VOL_BYTES), "zarr_read_region (whole array)");
}

static void verify_all(const uint16_t *got, const uint16_t *vol, const char *what, int rep) {
    if (memcmp(got, vol, VOL_BYTES) == 0) return;
    size_t i = 0;
    while (got[i] == vol[i]) i++;
    die("%s rep %d: mismatch at element %zu (z=%zu y=%zu x=%zu): got %u, expected %u", what, rep, i,
        i / (N * N), (i / N) % N, i % N, got[i], vol[i]);
}

/* Reads the 1000 box origins of REGIONS (z y x per line) into org; returns their number. */
static size_t load_regions(const char *regions, uint64_t (*org)[3], size_t max) {
    size_t rlen;
    char *text = read_file(regions, &rlen);
    size_t nreg = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        while (*line == ' ' || *line == '\t') line++;
        if (*line == '#' || *line == '\0' || *line == '\r') continue;
        unsigned long long z, y, x;
        if (sscanf(line, "%llu %llu %llu", &z, &y, &x) != 3) die("bad line in %s: %s", regions, line);
        if (z + BOX > N || y + BOX > N || x + BOX > N) die("region out of range in %s: %s", regions, line);
        if (nreg == max) die("too many regions in %s", regions);
        org[nreg][0] = z, org[nreg][1] = y, org[nreg][2] = x;
        nreg++;
    }
    free(text);
    if (nreg != 1000) die("%s: %zu regions, expected 1000", regions, nreg);
    return nreg;
}

/* Replaces the array directory DST by a copy of the array directory SRC (cp -r, no shell). */
static void copy_array_dir(const char *src, const char *dst) {
    char meta[4096];
    snprintf(meta, sizeof meta, "%s/zarr.json", src);
    if (access(meta, F_OK) != 0) die("%s is not an array directory (no zarr.json)", src);
    remove_array_dir(dst);
    pid_t pid = fork();
    if (pid < 0) die("fork: %s", strerror(errno));
    if (pid == 0) {
        execlp("cp", "cp", "-r", "--", src, dst, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) die("cp -r %s %s failed", src, dst);
}

/* Box i of the Wbox workload: the volume's box at org XOR (0x9E37 + i), so every write changes every
 * element and overlapping boxes differ (the order of the writes matters). */
static void make_write_box(const uint16_t *vol, const uint64_t *org, size_t i, uint16_t *box) {
    uint16_t key = (uint16_t)(0x9E37u + (unsigned)i);
    for (size_t z = 0; z < BOX; z++)
        for (size_t y = 0; y < BOX; y++)
            for (size_t x = 0; x < BOX; x++)
                box[(z * BOX + y) * BOX + x] = vol[((org[0] + z) * N + (org[1] + y)) * N + org[2] + x] ^ key;
}

/* ---------------------------------------------------------------- layout N: 10^5 small chunks */

/* W or R of the synthetic uint8 volume DATA (the array's shape) into/from DIR; fills t, cpu. */
static void run_small(int write, const char *layout, const char *dir, const char *data, int reps, int warmup,
                      int fresh, double *t, double *cpu, uint64_t *bytes_per_rep) {
    size_t vlen = 0;
    uint8_t *vol = (uint8_t *)read_file(data, &vlen);
    uint64_t shape[NDIM];
    zarr_data_type dt;
    size_t es;
    if (write) {
        char *meta = read_file(layout, NULL);
        remove_array_dir(dir);
        zarr_array *a = NULL;
        check(zarr_create(dir, meta, &a), "zarr_create");
        check(zarr_array_shape(a, shape, NDIM), "zarr_array_shape");
        check(zarr_array_data_type(a, &dt, &es), "zarr_array_data_type");
        check(zarr_close(a), "zarr_close");
        free(meta);
    } else {
        zarr_array *a = NULL;
        check(zarr_open(dir, ZARR_READ, &a), "zarr_open");
        check(zarr_array_shape(a, shape, NDIM), "zarr_array_shape");
        check(zarr_array_data_type(a, &dt, &es), "zarr_array_data_type");
        check(zarr_close(a), "zarr_close");
    }
    if (dt != ZARR_UINT8 || es != 1) die("%s: --small expects a uint8 array", dir);
    const size_t nbytes = (size_t)(shape[0] * shape[1] * shape[2]);
    if (vlen != nbytes) die("%s: %zu bytes, the array holds %zu", data, vlen, nbytes);
    *bytes_per_rep = nbytes;
    const uint64_t start[NDIM] = {0, 0, 0};
    uint8_t *buf = NULL;
    if (write) {
        char *meta = read_file(layout, NULL);
        char rep_dir[4096];
        for (int r = warmup ? -1 : 0; r < reps; r++) {
            const char *path = dir;
            if (fresh) {
                struct stat st;
                snprintf(rep_dir, sizeof rep_dir, "%s.rep%d", dir, r + 1);
                if (lstat(rep_dir, &st) == 0)
                    die("%s exists: --fresh-dirs writes into new directories (remove old copies minutes before)",
                        rep_dir);
                path = rep_dir;
            } else {
                remove_array_dir(dir);
            }
            zarr_array *a = NULL;
            check(zarr_create(path, meta, &a), "zarr_create");
            sync();
            double t0 = now_s(), c0 = cpu_s();
            check(zarr_write_region(a, start, shape, vol, nbytes), "zarr_write_region");
            check(zarr_close(a), "zarr_close");
            if (r >= 0) t[r] = now_s() - t0, cpu[r] = cpu_s() - c0;
            zarr_array *b = NULL;
            check(zarr_open(path, ZARR_READ, &b), "zarr_open");
            if (!buf) buf = xmalloc(nbytes);
            memset(buf, 0xA5, nbytes);
            check(zarr_read_region(b, start, shape, buf, nbytes), "zarr_read_region (check)");
            if (memcmp(buf, vol, nbytes) != 0) die("W rep %d: the array read back differs from the source", r);
            check(zarr_close(b), "zarr_close");
        }
        free(meta);
        free(buf);
    } else {
        zarr_array *a = NULL;
        check(zarr_open(dir, ZARR_READ, &a), "zarr_open");
        buf = xmalloc(nbytes);
        check(zarr_read_region(a, start, shape, buf, nbytes), "zarr_read_region (warm-up)");
        if (memcmp(buf, vol, nbytes) != 0) die("warm-up: the array differs from the source");
        free(buf);
        for (int r = 0; r < reps; r++) {
            double t0 = now_s(), c0 = cpu_s();
            buf = malloc(nbytes);
            if (!buf) die("out of memory");
            check(zarr_read_region(a, start, shape, buf, nbytes), "zarr_read_region");
            t[r] = now_s() - t0;
            cpu[r] = cpu_s() - c0;
            if (memcmp(buf, vol, nbytes) != 0) {
                size_t i = 0;
                while (buf[i] == vol[i]) i++;
                die("R rep %d: mismatch at byte %zu: got %u, expected %u", r, i, buf[i], vol[i]);
            }
            free(buf);
        }
        check(zarr_close(a), "zarr_close");
    }
    free(vol);
}


/* ---------------------------------------------------------------- layout V: strings */

typedef struct {
    uint64_t n;
    const uint64_t *off; /* n + 1 byte offsets into data, off[0] == 0 */
    const uint8_t *data;
    size_t size;
    char *raw;
} strings_t;

static void load_strings(const char *path, uint64_t n_expected, strings_t *s) {
    size_t len = 0;
    s->raw = read_file(path, &len);
    if (len < 8) die("%s: too short", path);
    memcpy(&s->n, s->raw, 8);
    if (s->n != n_expected) die("%s: %llu strings, the array holds %llu", path, (unsigned long long)s->n,
                                (unsigned long long)n_expected);
    if (len < 8 + 8 * (s->n + 1)) die("%s: too short for its offsets", path);
    s->off = (const uint64_t *)(s->raw + 8); /* read_file's malloc is 16-byte aligned: +8 is aligned */
    s->data = (const uint8_t *)(s->raw + 8 + 8 * (s->n + 1));
    s->size = len - 8 - 8 * (s->n + 1);
    if (s->off[0] != 0 || s->off[s->n] != s->size) die("%s: offsets do not span the data", path);
}

/* Compares the zarr_vlen V (the box start[0].., start[1].. of count[0] x count[1]) with the file's strings. */
static void check_vlen_box(const zarr_vlen *v, const strings_t *s, uint64_t width, const uint64_t *start,
                           const uint64_t *count, const char *what, int rep, size_t box) {
    const uint64_t *off = NULL;
    const uint8_t *data = NULL;
    size_t n = 0;
    check(zarr_vlen_view(v, &off, &data, &n), "zarr_vlen_view");
    if (n != count[0] * count[1]) die("%s rep %d box %zu: %zu elements, expected %llu", what, rep, box, n,
                                      (unsigned long long)(count[0] * count[1]));
    for (uint64_t y = 0; y < count[0]; y++)
        for (uint64_t x = 0; x < count[1]; x++) {
            size_t i = (size_t)(y * count[1] + x);
            uint64_t k = (start[0] + y) * width + start[1] + x;
            uint64_t glen = off[i + 1] - off[i], wlen = s->off[k + 1] - s->off[k];
            if (glen != wlen || (wlen && memcmp(data + off[i], s->data + s->off[k], wlen) != 0))
                die("%s rep %d box %zu: element [%llu, %llu] differs (%llu bytes, expected %llu)", what, rep, box,
                    (unsigned long long)(start[0] + y), (unsigned long long)(start[1] + x),
                    (unsigned long long)glen, (unsigned long long)wlen);
        }
}

#define STR_BOX 16
#define STR_NBOX 1000

/* W, R or S of layout V; fills t, cpu. */
static void run_strings(const char *op, const char *layout, const char *dir, const char *path, int reps,
                        int warmup, double *t, double *cpu, uint64_t *bytes_per_rep) {
    uint64_t shape[2];
    zarr_data_type dt;
    size_t es;
    char *meta = NULL;
    zarr_array *a = NULL;
    if (!strcmp(op, "W")) {
        meta = read_file(layout, NULL);
        remove_array_dir(dir);
        check(zarr_create(dir, meta, &a), "zarr_create");
    } else {
        check(zarr_open(dir, ZARR_READ, &a), "zarr_open");
    }
    size_t rank = 0;
    check(zarr_array_rank(a, &rank), "zarr_array_rank");
    if (rank != 2) die("%s: --strings expects a 2-D array", dir);
    check(zarr_array_shape(a, shape, 2), "zarr_array_shape");
    check(zarr_array_data_type(a, &dt, &es), "zarr_array_data_type");
    if (dt != ZARR_STRING) die("%s: --strings expects a string array", dir);
    strings_t s;
    load_strings(path, shape[0] * shape[1], &s);
    *bytes_per_rep = s.size;
    const uint64_t origin[2] = {0, 0};
    if (!strcmp(op, "W")) {
        check(zarr_close(a), "zarr_close");
        for (int r = warmup ? -1 : 0; r < reps; r++) {
            remove_array_dir(dir);
            check(zarr_create(dir, meta, &a), "zarr_create");
            sync();
            double t0 = now_s(), c0 = cpu_s();
            check(zarr_write_region_vlen(a, origin, shape, s.off, s.data, s.size), "zarr_write_region_vlen");
            check(zarr_close(a), "zarr_close");
            if (r >= 0) t[r] = now_s() - t0, cpu[r] = cpu_s() - c0;
            zarr_array *b = NULL;
            zarr_vlen *v = NULL;
            check(zarr_open(dir, ZARR_READ, &b), "zarr_open");
            check(zarr_read_region_vlen(b, origin, shape, &v), "zarr_read_region_vlen (check)");
            check_vlen_box(v, &s, shape[1], origin, shape, "W", r, 0);
            zarr_vlen_free(v);
            check(zarr_close(b), "zarr_close");
        }
        free(meta);
    } else if (!strcmp(op, "R")) {
        zarr_vlen *v = NULL;
        check(zarr_read_region_vlen(a, origin, shape, &v), "zarr_read_region_vlen (warm-up)");
        check_vlen_box(v, &s, shape[1], origin, shape, "warm-up", -1, 0);
        zarr_vlen_free(v);
        for (int r = 0; r < reps; r++) {
            double t0 = now_s(), c0 = cpu_s();
            check(zarr_read_region_vlen(a, origin, shape, &v), "zarr_read_region_vlen");
            t[r] = now_s() - t0;
            cpu[r] = cpu_s() - c0;
            check_vlen_box(v, &s, shape[1], origin, shape, "R", r, 0);
            zarr_vlen_free(v); /* untimed, as the peers' result arrays are dropped after their check */
        }
        check(zarr_close(a), "zarr_close");
    } else if (!strcmp(op, "S")) {
        if (shape[0] < STR_BOX || shape[1] < STR_BOX) die("%s: smaller than a 16 x 16 box", dir);
        uint64_t org[STR_NBOX][2];
        const uint64_t count[2] = {STR_BOX, STR_BOX};
        zarr_vlen **res = xmalloc(STR_NBOX * sizeof *res);
        uint64_t nb = 0;
        for (size_t i = 0; i < STR_NBOX; i++) {
            org[i][0] = (613 * i + 17) % (shape[0] - STR_BOX + 1);
            org[i][1] = (1597 * i + 1013) % (shape[1] - STR_BOX + 1);
            for (uint64_t y = 0; y < STR_BOX; y++) {
                uint64_t k = (org[i][0] + y) * shape[1] + org[i][1];
                nb += s.off[k + STR_BOX] - s.off[k];
            }
        }
        *bytes_per_rep = nb;
        zarr_vlen *v = NULL;
        check(zarr_read_region_vlen(a, origin, shape, &v), "zarr_read_region_vlen (warm-up)");
        check_vlen_box(v, &s, shape[1], origin, shape, "warm-up", -1, 0);
        zarr_vlen_free(v);
        for (int r = 0; r < reps; r++) {
            double t0 = now_s(), c0 = cpu_s();
            for (size_t i = 0; i < STR_NBOX; i++)
                check(zarr_read_region_vlen(a, org[i], count, &res[i]), "zarr_read_region_vlen (box)");
            t[r] = now_s() - t0;
            cpu[r] = cpu_s() - c0;
            for (size_t i = 0; i < STR_NBOX; i++) {
                check_vlen_box(res[i], &s, shape[1], org[i], count, "S", r, i);
                zarr_vlen_free(res[i]);
            }
        }
        free(res);
        check(zarr_close(a), "zarr_close");
    } else {
        die("--strings: only W, R and S");
    }
    free(s.raw);
}

/* ---------------------------------------------------------------- main */

static void usage(void) {
    fprintf(stderr,
            "usage: bench_libzarr --op W|R|Rinto|S|P --layout LAYOUT.json --array DIR --data VOLUME.bin\n"
            "                     [--regions REGIONS.txt] [--reps N] [--name LABEL] [--threads N]\n"
            "                     [--work DIR] [--small] [--strings] [--no-warmup] [--fresh-dirs]\n"
            "ops: W R Rinto S P Rs RsF Rs32 Wbox (--small: W R; --strings: W R S)\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *op = NULL, *layout = NULL, *dir = NULL, *data = NULL, *regions = NULL, *name = NULL;
    const char *work = NULL;
    int reps = 0, small = 0, strings = 0, warmup = 1, fresh = 0;
    long threads = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--small")) { small = 1; continue; }
        if (!strcmp(a, "--strings")) { strings = 1; continue; }
        if (!strcmp(a, "--no-warmup")) { warmup = 0; continue; }
        if (!strcmp(a, "--fresh-dirs")) { fresh = 1; continue; }
        if (i + 1 >= argc) usage();
        const char *v = argv[++i];
        if (!strcmp(a, "--op")) op = v;
        else if (!strcmp(a, "--layout")) layout = v;
        else if (!strcmp(a, "--array")) dir = v;
        else if (!strcmp(a, "--data")) data = v;
        else if (!strcmp(a, "--regions")) regions = v;
        else if (!strcmp(a, "--reps")) reps = atoi(v);
        else if (!strcmp(a, "--name")) name = v;
        else if (!strcmp(a, "--threads")) threads = atol(v);
        else if (!strcmp(a, "--work")) work = v;
        else usage();
    }
    if (!op || !dir || !data) usage();
    g_op = op;
    /* the label defaults to the layout file's base name without ".json" ("A" for layouts/A.json) */
    static char label[256];
    if (name) {
        snprintf(label, sizeof label, "%s", name);
    } else if (layout) {
        const char *b = strrchr(layout, '/');
        snprintf(label, sizeof label, "%s", b ? b + 1 : layout);
        char *dot = strstr(label, ".json");
        if (dot) *dot = '\0';
    } else {
        snprintf(label, sizeof label, "%s", dir);
    }
    g_name = label;

    enum { OP_W, OP_R, OP_RINTO, OP_S, OP_P, OP_RS, OP_RSF, OP_RS32, OP_WBOX } kind;
    if (!strcmp(op, "W")) kind = OP_W;
    else if (!strcmp(op, "R")) kind = OP_R;
    else if (!strcmp(op, "Rinto")) kind = OP_RINTO;
    else if (!strcmp(op, "S")) kind = OP_S;
    else if (!strcmp(op, "P")) kind = OP_P;
    else if (!strcmp(op, "Rs")) kind = OP_RS;
    else if (!strcmp(op, "RsF")) kind = OP_RSF;
    else if (!strcmp(op, "Rs32")) kind = OP_RS32;
    else if (!strcmp(op, "Wbox")) kind = OP_WBOX;
    else die("unknown --op %s", op);
    if (small && kind != OP_W && kind != OP_R) die("--small: only W and R");
    if (strings && kind != OP_W && kind != OP_R && kind != OP_S) die("--strings: only W, R and S");
    if (kind == OP_WBOX && (!regions || !work)) die("--op Wbox needs --regions and --work");
    if (kind == OP_W && !layout) die("--op W needs --layout");
    if (kind == OP_S && !regions && !strings) die("--op S needs --regions");
    if (reps <= 0) reps = kind == OP_P ? 10 : 5;
    if (reps > MAX_REPS) die("--reps at most %d", MAX_REPS);

    { /* buffers hold native-endian elements; the volume file is little-endian */
        uint16_t one = 1;
        if (*(uint8_t *)&one != 1) die("big-endian hosts are not supported by this benchmark");
    }

    /* threads: --threads wins, else ZARR_NUM_THREADS (the pool reads it too; applied explicitly) */
    if (threads < 0) {
        const char *env = getenv("ZARR_NUM_THREADS");
        if (env && *env) threads = atol(env);
    }
    if (threads > 0) check(zarr_set_num_threads((size_t)threads), "zarr_set_num_threads");
    size_t nthreads = 0;
    check(zarr_get_num_threads(&nthreads), "zarr_get_num_threads");

    double t[MAX_REPS], cpu[MAX_REPS];
    uint64_t bytes_per_rep = VOL_BYTES;
    if (small) {
        run_small(kind == OP_W, layout, dir, data, reps, warmup, fresh, t, cpu, &bytes_per_rep);
        goto report;
    }
    if (strings) {
        run_strings(op, layout, dir, data, reps, warmup, t, cpu, &bytes_per_rep);
        goto report;
    }

    /* the source volume */
    size_t vlen = 0;
    uint16_t *vol = (uint16_t *)read_file(data, &vlen);
    if (vlen != VOL_BYTES) die("%s: %zu bytes, expected %zu", data, vlen, VOL_BYTES);

    if (kind == OP_W) {
        char *meta = read_file(layout, NULL);
        uint16_t *check_buf = xmalloc(VOL_BYTES);
        memset(check_buf, 0, VOL_BYTES);
        const uint64_t start[NDIM] = {0, 0, 0}, count[NDIM] = {N, N, N};
        for (int r = warmup ? -1 : 0; r < reps; r++) { /* r = -1: untimed warm-up repetition */
            remove_array_dir(dir);
            zarr_array *a = NULL;
            check(zarr_create(dir, meta, &a), "zarr_create");
            sync(); /* settle the file system before timing (the old copy's pages are gone) */
            double t0 = now_s(), c0 = cpu_s();
            check(zarr_write_region(a, start, count, vol, VOL_BYTES), "zarr_write_region");
            check(zarr_close(a), "zarr_close");
            if (r >= 0) t[r] = now_s() - t0, cpu[r] = cpu_s() - c0;
            /* untimed check: reopen read-only and compare everything */
            zarr_array *b = open_checked(dir, ZARR_READ);
            memset(check_buf, 0xA5, VOL_BYTES);
            read_all(b, check_buf);
            verify_all(check_buf, vol, "W", r);
            check(zarr_close(b), "zarr_close");
        }
        free(check_buf);
        free(meta);
    } else if (kind == OP_WBOX) {
        uint64_t (*org)[3] = xmalloc(sizeof(*org) * 4096);
        size_t nreg = load_regions(regions, org, 4096);
        /* the boxes, and the expected array: the volume with the boxes replaced in order */
        uint16_t *boxes = xmalloc(nreg * BOX_BYTES);
        uint16_t *expect = xmalloc(VOL_BYTES);
        memcpy(expect, vol, VOL_BYTES);
        for (size_t i = 0; i < nreg; i++) {
            uint16_t *b = boxes + i * BOX * BOX * BOX;
            make_write_box(vol, org[i], i, b);
            for (size_t z = 0; z < BOX; z++)
                for (size_t y = 0; y < BOX; y++)
                    memcpy(expect + ((org[i][0] + z) * N + (org[i][1] + y)) * N + org[i][2], b + (z * BOX + y) * BOX,
                           BOX * ELEM);
        }
        if (memcmp(expect, vol, VOL_BYTES) == 0) die("Wbox: the writes change nothing");
        uint16_t *check_buf = xmalloc(VOL_BYTES);
        const uint64_t count[NDIM] = {BOX, BOX, BOX};
        bytes_per_rep = nreg * BOX_BYTES;
        /* no warm-up repetition: the untimed read of each fresh copy brings its chunks into the cache */
        for (int r = 0; r < reps; r++) {
            copy_array_dir(dir, work); /* untimed: a fresh copy of the reference */
            zarr_array *a = open_checked(work, ZARR_READ_WRITE);
            read_all(a, check_buf); /* untimed: its chunks in the page cache, and it is the reference */
            verify_all(check_buf, vol, "Wbox copy", r);
            double t0 = now_s(), c0 = cpu_s();
            for (size_t i = 0; i < nreg; i++)
                check(zarr_write_region(a, org[i], count, boxes + i * BOX * BOX * BOX, BOX_BYTES),
                      "zarr_write_region (box)");
            check(zarr_close(a), "zarr_close");
            t[r] = now_s() - t0, cpu[r] = cpu_s() - c0;
            zarr_array *b = open_checked(work, ZARR_READ);
            memset(check_buf, 0xA5, VOL_BYTES);
            read_all(b, check_buf);
            verify_all(check_buf, expect, "Wbox", r);
            check(zarr_close(b), "zarr_close");
        }
        remove_array_dir(work);
        free(check_buf);
        free(expect);
        free(boxes);
        free(org);
    } else {
        zarr_array *a = open_checked(dir, ZARR_READ);
        /* untimed warm-up: one full read brings every chunk file into the page cache */
        {
            uint16_t *w = xmalloc(VOL_BYTES);
            read_all(a, w);
            verify_all(w, vol, "warm-up", -1);
            free(w);
        }
        if (kind == OP_R) {
            for (int r = 0; r < reps; r++) {
                double t0 = now_s(), c0 = cpu_s();
                uint16_t *buf = malloc(VOL_BYTES); /* fresh, untouched pages: their faults are timed */
                if (!buf) die("out of memory");
                read_all(a, buf);
                t[r] = now_s() - t0;
                cpu[r] = cpu_s() - c0;
                verify_all(buf, vol, "R", r);
                free(buf);
            }
        } else if (kind == OP_RINTO) {
            uint16_t *buf = xmalloc(VOL_BYTES);
            for (int r = 0; r < reps; r++) {
                memset(buf, 0xA5, VOL_BYTES); /* pre-touched, and a stale result cannot pass */
                double t0 = now_s(), c0 = cpu_s();
                read_all(a, buf);
                t[r] = now_s() - t0;
                cpu[r] = cpu_s() - c0;
                verify_all(buf, vol, "Rinto", r);
            }
            free(buf);
        } else if (kind == OP_RS || kind == OP_RSF || kind == OP_RS32) {
            /* [::2, ::2, ::2]: 256^3 elements into a fresh buffer (malloc inside the timed part, as R) */
            enum { H = N / 2 };
            const uint64_t start[NDIM] = {0, 0, 0}, count[NDIM] = {H, H, H}, step[NDIM] = {2, 2, 2};
            const int64_t fortran[NDIM] = {1, H, (int64_t)H * H};
            const int f32 = kind == OP_RS32;
            const size_t esz = f32 ? sizeof(float) : ELEM;
            const size_t obytes = (size_t)H * H * H * esz;
            bytes_per_rep = obytes;
            for (int r = 0; r < reps; r++) {
                double t0 = now_s(), c0 = cpu_s();
                void *buf = malloc(obytes);
                if (!buf) die("out of memory");
                check(zarr_read_hyperslab(a, start, count, step, kind == OP_RSF ? fortran : NULL,
                                          f32 ? ZARR_FLOAT32 : ZARR_UINT16, buf, obytes),
                      "zarr_read_hyperslab");
                t[r] = now_s() - t0;
                cpu[r] = cpu_s() - c0;
                for (size_t z = 0; z < H; z++)
                    for (size_t y = 0; y < H; y++)
                        for (size_t x = 0; x < H; x++) {
                            uint16_t want = vol[((2 * z) * N + 2 * y) * N + 2 * x];
                            int ok;
                            if (kind == OP_RS)
                                ok = ((const uint16_t *)buf)[(z * H + y) * H + x] == want;
                            else if (kind == OP_RSF)
                                ok = ((const uint16_t *)buf)[(x * H + y) * H + z] == want;
                            else
                                ok = ((const float *)buf)[(z * H + y) * H + x] == (float)want;
                            if (!ok) die("%s rep %d: mismatch at [%zu, %zu, %zu] (volume [%zu, %zu, %zu])", op, r, z, y,
                                         x, 2 * z, 2 * y, 2 * x);
                        }
                free(buf);
            }
        } else if (kind == OP_P) {
            const uint64_t start[NDIM] = {0, 0, PLANE_X}, count[NDIM] = {N, N, 1};
            const size_t pbytes = (size_t)N * N * ELEM;
            uint16_t *buf = xmalloc(pbytes);
            bytes_per_rep = pbytes;
            for (int r = 0; r < reps; r++) {
                memset(buf, 0xA5, pbytes);
                double t0 = now_s(), c0 = cpu_s();
                check(zarr_read_region(a, start, count, buf, pbytes), "zarr_read_region (plane)");
                t[r] = now_s() - t0;
                cpu[r] = cpu_s() - c0;
                for (size_t z = 0; z < N; z++)
                    for (size_t y = 0; y < N; y++) {
                        uint16_t got = buf[z * N + y], want = vol[(z * N + y) * N + PLANE_X];
                        if (got != want) die("P rep %d: mismatch at z=%zu y=%zu: got %u, expected %u", r, z, y, got, want);
                    }
            }
            free(buf);
        } else { /* OP_S */
            uint64_t (*org)[3] = xmalloc(sizeof(*org) * 4096);
            size_t nreg = load_regions(regions, org, 4096);
            /* every box goes to its own slot, so all 1000 results are checked after the repetition */
            uint8_t *boxes = xmalloc(nreg * BOX_BYTES);
            const uint64_t count[NDIM] = {BOX, BOX, BOX};
            bytes_per_rep = nreg * BOX_BYTES;
            for (int r = 0; r < reps; r++) {
                memset(boxes, 0xA5, nreg * BOX_BYTES);
                double t0 = now_s(), c0 = cpu_s();
                for (size_t i = 0; i < nreg; i++)
                    check(zarr_read_region(a, org[i], count, boxes + i * BOX_BYTES, BOX_BYTES), "zarr_read_region (box)");
                t[r] = now_s() - t0;
                cpu[r] = cpu_s() - c0;
                for (size_t i = 0; i < nreg; i++) {
                    const uint16_t *b = (const uint16_t *)(boxes + i * BOX_BYTES);
                    for (size_t z = 0; z < BOX; z++)
                        for (size_t y = 0; y < BOX; y++) {
                            const uint16_t *want = vol + ((org[i][0] + z) * N + (org[i][1] + y)) * N + org[i][2];
                            if (memcmp(b + (z * BOX + y) * BOX, want, BOX * ELEM) != 0)
                                die("S rep %d: box %zu (origin %llu %llu %llu) differs at z+%zu y+%zu", r, i,
                                    (unsigned long long)org[i][0], (unsigned long long)org[i][1],
                                    (unsigned long long)org[i][2], z, y);
                        }
                }
            }
            free(boxes);
            free(org);
        }
        check(zarr_close(a), "zarr_close");
    }
    free(vol);

report:;
    double tmin = t[0];
    for (int r = 1; r < reps; r++)
        if (t[r] < tmin) tmin = t[r];
    double tmed = median(t, reps);
    printf("{\"impl\": \"libzarr\", \"version\": ");
    json_str(stdout, zarr_version());
    printf(", \"layout\": ");
    json_str(stdout, g_name);
    printf(", \"op\": ");
    json_str(stdout, op);
    printf(", \"status\": \"ok\", \"threads\": %zu, \"reps\": %d, \"times_s\": [", nthreads, reps);
    for (int r = 0; r < reps; r++) printf("%s%.6f", r ? ", " : "", t[r]);
    printf("], \"min_s\": %.6f, \"median_s\": %.6f, \"cpu_s\": [", tmin, tmed);
    for (int r = 0; r < reps; r++) printf("%s%.6f", r ? ", " : "", cpu[r]);
    printf("], \"cpu_median_s\": %.6f, \"bytes_per_rep\": %llu}\n", median(cpu, reps),
           (unsigned long long)bytes_per_rep);
    return 0;
}
