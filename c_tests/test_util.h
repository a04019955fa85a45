/* Shared helpers for the libzarr C tests (c_tests/test_*.c): checks and scratch-file utilities. */
#ifndef ZARR_TEST_UTIL_H
#define ZARR_TEST_UTIL_H
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkdtemp, strdup, setenv, lstat, pthreads */
#endif
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zarr.h"

static int t_checks, t_failures;

#define CHECK(cond) do { t_checks++; if (!(cond)) { t_failures++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
/* The call must return ZARR_OK. */
#define CHECK_OK(call) do { zarr_status s_ = (call); t_checks++; if (s_ != ZARR_OK) { t_failures++; \
    fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, zarr_status_name(s_), \
            zarr_last_error()); } } while (0)
/* The call must return exactly `want` and leave a non-empty zarr_last_error(). */
#define CHECK_STATUS(call, want) do { zarr_status s_ = (call); t_checks++; \
    if (s_ != (want) || zarr_last_error()[0] == '\0') { t_failures++; \
    fprintf(stderr, "%s:%d: %s -> %s (expected %s): \"%s\"\n", __FILE__, __LINE__, #call, \
            zarr_status_name(s_), zarr_status_name(want), zarr_last_error()); } } while (0)
/* zarr_last_error() must contain `sub` (e.g. the chunk key or file a failure is about). */
#define CHECK_MSG(sub) do { t_checks++; if (!strstr(zarr_last_error(), (sub))) { t_failures++; \
    fprintf(stderr, "%s:%d: last error \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, \
            zarr_last_error(), (sub)); } } while (0)

/* Creates a fresh directory under $ZARR_TEST_TMPDIR (or /tmp); returns its absolute path (malloc'd). */
static inline char *t_mkdtemp(const char *tag) {
    const char *base = getenv("ZARR_TEST_TMPDIR");
    char tmpl[4096], cwd[4096], *abs;
    if (!base || !*base) base = "/tmp";
    mkdir(base, 0777); /* may already exist */
    snprintf(tmpl, sizeof tmpl, "%s/zarr-%s-XXXXXX", base, tag);
    if (!mkdtemp(tmpl)) { perror(tmpl); exit(2); }
    if (tmpl[0] == '/' || !getcwd(cwd, sizeof cwd)) return strdup(tmpl);
    abs = malloc(strlen(cwd) + strlen(tmpl) + 2); /* absolute, so that file:// URIs can be formed */
    sprintf(abs, "%s/%s", cwd, tmpl);
    return abs;
}

/* The test program's scratch directory (absolute), for the tests that use path_in(): main() sets it,
 * usually with t_mkdtemp(). */
static char *g_dir;

/* `rel` inside the scratch directory g_dir (rotating static buffers: valid for a few calls). */
static inline const char *path_in(const char *rel) {
    static char bufs[8][4096];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", g_dir, rel);
    return b;
}

/* JSON text with the whitespace outside strings removed, for comparing documents regardless of layout.
 * Returns one of two alternating static buffers (so two results can be compared). */
static inline const char *t_compact(const char *in) {
    static char out[2][16384];
    static int next;
    char *o = out[next++ % 2];
    size_t n = 0;
    int in_str = 0;
    for (; in && *in && n + 1 < sizeof out[0]; in++) {
        if (in_str) {
            o[n++] = *in;
            if (*in == '\\' && in[1]) o[n++] = *++in;
            else if (*in == '"') in_str = 0;
        } else if (*in == '"') {
            in_str = 1;
            o[n++] = *in;
        } else if (*in != ' ' && *in != '\n' && *in != '\t' && *in != '\r') {
            o[n++] = *in;
        }
    }
    o[n] = 0;
    return o;
}

/* Writes (replaces) a file; returns 0 on success. */
static inline int t_write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    size_t w = f ? fwrite(data, 1, n, f) : 0;
    if (!f) return -1;
    return (fclose(f) == 0 && w == n) ? 0 : -1;
}

/* Reads a whole file (malloc'd, NUL-terminated for convenience); NULL if it cannot be read. */
static inline unsigned char *t_read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long len;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)len + 1)) != NULL) {
        *n = fread(buf, 1, (size_t)len, f);
        buf[*n] = 0;
    }
    fclose(f);
    return buf;
}

/* Whether a file or directory exists at `path`. */
static inline int t_exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Removes a file or a directory tree (does not follow symbolic links). */
static inline void t_rmtree(const char *path) {
    struct stat st;
    DIR *d;
    struct dirent *e;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode) && (d = opendir(path)) != NULL) {
        while ((e = readdir(d)) != NULL) {
            char *child;
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            child = malloc(strlen(path) + strlen(e->d_name) + 2);
            if (!child) break;
            sprintf(child, "%s/%s", path, e->d_name);
            t_rmtree(child);
            free(child);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* Prints the summary, removes the scratch directory unless something failed; the exit status. */
static inline int t_finish(const char *name, char *tmpdir) {
    printf("%s: %d checks, %d failed\n", name, t_checks, t_failures);
    fflush(stdout);
    if (tmpdir && t_failures == 0) t_rmtree(tmpdir);
    else if (tmpdir) fprintf(stderr, "%s: scratch files kept in %s\n", name, tmpdir);
    free(tmpdir);
    return t_failures == 0 ? 0 : 1;
}

#endif /* ZARR_TEST_UTIL_H */
