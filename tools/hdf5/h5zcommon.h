/* Shared helpers of h5tozarr and zarrtoh5 (tools/hdf5/): a growable string with JSON output, a small JSON
 * reader (numbers, also the bare NaN / Infinity / -Infinity, strings, booleans, null, arrays, objects), the
 * progress line and the chunk walk (through libzarr's chunk grid).
 * Every function is static: each tool includes this header once. */
#ifndef ZARR_H5ZCOMMON_H
#define ZARR_H5ZCOMMON_H

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The 1.10 API names (H5Literate, H5Oget_info_by_name) also on HDF5 1.12 and later. */
#define H5_USE_110_API 1
#include <hdf5.h>
#include "zarr.h"

/* Most elements one copy step holds when the chunk shape allows it (the chunk is the unit otherwise). */
static const char *g_prog = "h5z";
/* Called by die() before the process exits (h5tozarr removes its unfinished output); NULL: nothing. */
static void (*g_die_cleanup)(void) = NULL;

static inline void die(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "%s: ", g_prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (g_die_cleanup) g_die_cleanup();
    /* _exit: HDF5's exit handlers must not run from inside an H5Literate/H5Aiterate callback */
    fflush(NULL);
    _exit(1);
}

static inline void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory (%zu bytes)", n);
    return p;
}

static inline void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) die("out of memory (%zu bytes)", n);
    return q;
}

static inline char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = xmalloc(n);
    memcpy(d, s, n);
    return d;
}

/* Fails with the library's message when a libzarr call failed. */
static inline void zcheck(zarr_status st, const char *what, const char *path) {
    if (st != ZARR_OK) die("%s: %s: %s (%s)", path, what, zarr_last_error(), zarr_status_name(st));
}

/* ---- growable string --------------------------------------------------------------------------- */
typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static inline void sb_put(sbuf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static inline void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static inline void sb_printf(sbuf *b, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) die("formatting failed");
    if ((size_t)n < sizeof tmp) {
        sb_put(b, tmp, (size_t)n);
        return;
    }
    char *big = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_put(b, big, (size_t)n);
    free(big);
}

/* A JSON string literal of the bytes s[0..n) (taken as UTF-8). */
static inline void sb_json_str(sbuf *b, const char *s, size_t n) {
    sb_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            sb_put(b, e, 2);
        } else if (c < 0x20) {
            sb_printf(b, "\\u%04x", c);
        } else {
            sb_put(b, (const char *)&s[i], 1);
        }
    }
    sb_put(b, "\"", 1);
}

/* A double as JSON: the shortest form that reads back to the same double; NaN and the infinities as the
 * strings Zarr uses for fill values ("NaN", "Infinity", "-Infinity"). */
static inline void sb_json_double(sbuf *b, double v) {
    if (isnan(v)) {
        sb_puts(b, "\"NaN\"");
    } else if (isinf(v)) {
        sb_puts(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    } else {
        char tmp[40];
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(tmp, sizeof tmp, "%.*g", prec, v);
            if (strtod(tmp, NULL) == v) break;
        }
        /* keep it a float for readers that look at the token ("1" would read back as an integer) */
        if (!strpbrk(tmp, ".eEn")) strcat(tmp, ".0");
        sb_puts(b, tmp);
    }
}

/* ---- JSON reader --------------------------------------------------------------------------------- */
enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jv {
    int t;
    int is_int;          /* J_NUM: written without fraction or exponent and fits an int64 */
    int64_t i;           /* J_NUM with is_int; J_BOOL: 0 or 1 */
    int is_uint;         /* J_NUM: an integer in (INT64_MAX, UINT64_MAX] */
    uint64_t u;          /* J_NUM with is_uint */
    double d;            /* J_NUM */
    char *s;             /* J_STR (UTF-8, NUL-terminated) */
    size_t len;          /* J_STR: bytes */
    struct jv *items;    /* J_ARR, J_OBJ: values */
    char **keys;         /* J_OBJ */
    size_t n;            /* J_ARR, J_OBJ: count */
    const char *raw;     /* the value's text in the source */
    size_t raw_len;
} jv;

typedef struct {
    const char *p, *end;
    const char *err;
    int depth;
} jparser;

static inline void j_ws(jparser *q) {
    while (q->p < q->end && (*q->p == ' ' || *q->p == '\t' || *q->p == '\n' || *q->p == '\r')) q->p++;
}

static inline void put_utf8(sbuf *b, uint32_t c) {
    char o[4];
    size_t n;
    if (c < 0x80) { o[0] = (char)c; n = 1; }
    else if (c < 0x800) { o[0] = (char)(0xC0 | (c >> 6)); o[1] = (char)(0x80 | (c & 0x3F)); n = 2; }
    else if (c < 0x10000) {
        o[0] = (char)(0xE0 | (c >> 12)); o[1] = (char)(0x80 | ((c >> 6) & 0x3F)); o[2] = (char)(0x80 | (c & 0x3F)); n = 3;
    } else {
        o[0] = (char)(0xF0 | (c >> 18)); o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        o[2] = (char)(0x80 | ((c >> 6) & 0x3F)); o[3] = (char)(0x80 | (c & 0x3F)); n = 4;
    }
    sb_put(b, o, n);
}

static inline int j_hex4(jparser *q, uint32_t *out) {
    if (q->end - q->p < 4) return 0;
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        char c = q->p[k];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (uint32_t)(c - 'A' + 10);
        else return 0;
    }
    q->p += 4;
    *out = v;
    return 1;
}

static inline int j_string(jparser *q, char **out, size_t *len) {
    sbuf b = {0};
    sb_puts(&b, "");
    q->p++; /* opening quote */
    while (q->p < q->end && *q->p != '"') {
        char c = *q->p++;
        if (c != '\\') { sb_put(&b, &c, 1); continue; }
        if (q->p >= q->end) break;
        c = *q->p++;
        switch (c) {
        case '"': case '\\': case '/': sb_put(&b, &c, 1); break;
        case 'b': sb_puts(&b, "\b"); break;
        case 'f': sb_puts(&b, "\f"); break;
        case 'n': sb_puts(&b, "\n"); break;
        case 'r': sb_puts(&b, "\r"); break;
        case 't': sb_puts(&b, "\t"); break;
        case 'u': {
            uint32_t u;
            if (!j_hex4(q, &u)) { q->err = "bad \\u escape"; free(b.p); return 0; }
            if (u >= 0xD800 && u < 0xDC00 && q->end - q->p >= 6 && q->p[0] == '\\' && q->p[1] == 'u') {
                uint32_t lo;
                q->p += 2;
                if (!j_hex4(q, &lo) || lo < 0xDC00 || lo > 0xDFFF) { q->err = "bad surrogate pair"; free(b.p); return 0; }
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            }
            put_utf8(&b, u);
            break;
        }
        default: q->err = "bad escape"; free(b.p); return 0;
        }
    }
    if (q->p >= q->end) { q->err = "unterminated string"; free(b.p); return 0; }
    q->p++;
    *out = b.p;
    *len = b.n;
    return 1;
}

static inline int j_value(jparser *q, jv *v) {
    memset(v, 0, sizeof *v);
    j_ws(q);
    if (q->p >= q->end) { q->err = "unexpected end"; return 0; }
    if (++q->depth > 64) { q->err = "nested too deeply"; return 0; }
    const char *start = q->p;
    char c = *q->p;
    int ok = 1;
    if (c == '{' || c == '[') {
        int obj = c == '{';
        v->t = obj ? J_OBJ : J_ARR;
        size_t cap = 0;
        q->p++;
        j_ws(q);
        if (q->p < q->end && *q->p == (obj ? '}' : ']')) {
            q->p++;
        } else {
            for (;;) {
                char *key = NULL;
                size_t klen;
                j_ws(q);
                if (obj) {
                    if (q->p >= q->end || *q->p != '"' || !j_string(q, &key, &klen)) { if (!q->err) q->err = "expected a key"; ok = 0; break; }
                    j_ws(q);
                    if (q->p >= q->end || *q->p != ':') { q->err = "expected ':'"; free(key); ok = 0; break; }
                    q->p++;
                }
                if (v->n == cap) {
                    cap = cap ? cap * 2 : 4;
                    v->items = xrealloc(v->items, cap * sizeof *v->items);
                    if (obj) v->keys = xrealloc(v->keys, cap * sizeof *v->keys);
                }
                if (obj) v->keys[v->n] = key;
                if (!j_value(q, &v->items[v->n])) { v->n += obj ? 1 : 0; if (obj) v->items[v->n - 1].t = J_NULL; ok = 0; break; }
                v->n++;
                j_ws(q);
                if (q->p < q->end && *q->p == ',') { q->p++; continue; }
                if (q->p < q->end && *q->p == (obj ? '}' : ']')) { q->p++; break; }
                q->err = "expected ',' or a closing bracket";
                ok = 0;
                break;
            }
        }
    } else if (c == '"') {
        v->t = J_STR;
        ok = j_string(q, &v->s, &v->len);
    } else if (q->end - q->p >= 4 && !strncmp(q->p, "true", 4)) {
        v->t = J_BOOL; v->i = 1; q->p += 4;
    } else if (q->end - q->p >= 5 && !strncmp(q->p, "false", 5)) {
        v->t = J_BOOL; q->p += 5;
    } else if (q->end - q->p >= 4 && !strncmp(q->p, "null", 4)) {
        v->t = J_NULL; q->p += 4;
    } else if (q->end - q->p >= 3 && !strncmp(q->p, "NaN", 3)) { /* Python's json module and zarr-python write these */
        v->t = J_NUM; v->d = NAN; q->p += 3;
    } else if (q->end - q->p >= 8 && !strncmp(q->p, "Infinity", 8)) {
        v->t = J_NUM; v->d = INFINITY; q->p += 8;
    } else if (q->end - q->p >= 9 && !strncmp(q->p, "-Infinity", 9)) {
        v->t = J_NUM; v->d = -INFINITY; q->p += 9;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        const char *s = q->p;
        while (q->p < q->end && (isdigit((unsigned char)*q->p) || strchr("+-.eE", *q->p))) q->p++;
        char tmp[64];
        size_t n = (size_t)(q->p - s);
        if (n >= sizeof tmp) { q->err = "number too long"; return 0; }
        memcpy(tmp, s, n);
        tmp[n] = 0;
        char *e;
        v->t = J_NUM;
        v->d = strtod(tmp, &e);
        if (*e) { q->err = "bad number"; return 0; }
        if (!strpbrk(tmp, ".eE")) {
            errno = 0;
            long long ll = strtoll(tmp, &e, 10);
            if (!errno && !*e) { v->is_int = 1; v->i = ll; }
            else if (tmp[0] != '-') {
                errno = 0;
                unsigned long long ull = strtoull(tmp, &e, 10);
                if (!errno && !*e) { v->is_uint = 1; v->u = ull; }
            }
        }
    } else {
        q->err = "unexpected character";
        ok = 0;
    }
    q->depth--;
    v->raw = start;
    v->raw_len = (size_t)(q->p - start);
    return ok;
}

static inline void jv_free(jv *v) {
    free(v->s);
    for (size_t k = 0; k < v->n; k++) {
        jv_free(&v->items[k]);
        if (v->keys) free(v->keys[k]);
    }
    free(v->items);
    free(v->keys);
}

/* Parses the whole text; dies with `what` in the message on malformed JSON. */
static inline void jv_parse(const char *text, jv *out, const char *what) {
    jparser q = {text, text + strlen(text), NULL, 0};
    if (!j_value(&q, out)) die("%s: malformed JSON (%s)", what, q.err ? q.err : "?");
    j_ws(&q);
    if (q.p != q.end) die("%s: malformed JSON (trailing text)", what);
}

static inline const jv *jv_get(const jv *o, const char *key) {
    if (!o || o->t != J_OBJ) return NULL;
    for (size_t k = 0; k < o->n; k++)
        if (!strcmp(o->keys[k], key)) return &o->items[k];
    return NULL;
}

/* ---- progress line and chunk grid ------------------------------------------------------------------- */
static int g_tty = -1;

/* "\r<name>: <done>/<total> chunks (<pct>%)" on a terminal, at most a few times a second's worth of
 * chunks; `done == total` ends the line. Nothing when stderr is not a terminal. */
static inline void progress(const char *name, uint64_t done, uint64_t total) {
    if (g_tty < 0) g_tty = isatty(2);
    if (!g_tty || total == 0) return;
    uint64_t every = total / 200 + 1;
    if (done != total && done % every) return;
    fprintf(stderr, "\r%s: %llu/%llu chunks (%3d%%)", name, (unsigned long long)done, (unsigned long long)total,
            (int)(100.0 * (double)done / (double)total));
    if (done == total) fputc('\n', stderr);
    fflush(stderr);
}

/* The chunk walk: the chunks (shards, for a sharded array) of a Zarr array in C order, each where
 * libzarr's chunk grid places it (zarr_array_chunk_region), cut to the first `limit[d]` elements of
 * each dimension (the data to copy); chunks wholly beyond `limit` are passed over. A scalar (rank 0)
 * has one region. The tools hold no chunk-grid arithmetic of their own. */
typedef struct {
    const zarr_array *za;
    const char *path;
    size_t rank;
    uint64_t grid[32], at[32], limit[32];
    uint64_t total; /* the chunks visited: those holding an element below `limit` */
    int done;
} chunk_walk;

static inline void chunk_walk_init(chunk_walk *w, const zarr_array *za, size_t rank, const uint64_t *limit,
                                   const char *path) {
    memset(w, 0, sizeof *w);
    if (rank > 32) die("%s: rank %zu is more than 32", path, rank);
    w->za = za;
    w->path = path;
    w->rank = rank;
    w->total = 1;
    if (!rank) return;
    memcpy(w->limit, limit, rank * sizeof *limit);
    for (size_t d = 0; d < rank; d++)
        if (!limit[d]) { w->done = 1; w->total = 0; return; }
    zcheck(zarr_array_grid_shape(za, w->grid, rank), "the chunk grid", path);
    uint64_t origin[32] = {0};
    size_t n = 0;
    zcheck(zarr_array_selection_chunks(za, origin, w->limit, NULL, NULL, 0, &n), "the chunk grid", path);
    w->total = n;
}

/* The next region: its first element in `start`, its extent in `count` (rank values each); 0 at the end. */
static inline int chunk_walk_next(chunk_walk *w, uint64_t *start, uint64_t *count) {
    while (!w->done) {
        int inside = 1;
        if (w->rank) {
            uint64_t shape[32];
            zcheck(zarr_array_chunk_region(w->za, w->at, start, shape), "the chunk grid", w->path);
            for (size_t d = 0; d < w->rank; d++) {
                if (start[d] >= w->limit[d]) inside = 0;
                else count[d] = shape[d] < w->limit[d] - start[d] ? shape[d] : w->limit[d] - start[d];
            }
        }
        size_t d = w->rank; /* the next chunk coordinates, last dimension fastest */
        while (d > 0 && ++w->at[d - 1] == w->grid[d - 1]) w->at[--d] = 0;
        if (d == 0) w->done = 1;
        if (inside) return 1;
    }
    return 0;
}

/* Product of the counts times the element size, checked against overflow and a sanity bound. */
static inline size_t box_bytes(size_t rank, const uint64_t *count, size_t elem, const char *name) {
    uint64_t n = elem;
    for (size_t d = 0; d < rank; d++) {
        if (count[d] && n > UINT64_MAX / count[d]) die("%s: chunk too large", name);
        n *= count[d];
    }
    if (n > (uint64_t)SIZE_MAX / 2) die("%s: a chunk of %llu bytes does not fit in memory", name, (unsigned long long)n);
    return (size_t)n;
}

#endif
