/* Zarr v2 and v1 through the C API: zarr_group_create_ex / zarr_group_zarr_format, zarr_array_zarr_format,
 * zarr_array_num_fields / zarr_array_field, zarr_convert_v2_to_v3 and their error paths; v1 arrays are
 * read-only; and v2/v1 reads of arrays planted by this test (.zarray / meta written here, chunk bytes
 * computed here: little- and big-endian, order F, "/" separator, structured fill from base64, ...),
 * compared with values computed independently of the library. */
#include "test_util.h"

#include <math.h>
#include <stdint.h>

/* Creates every missing directory of `path` up to its last '/'. */
static void mkdirs_for(const char *path) {
    char buf[4096];
    size_t i;
    snprintf(buf, sizeof buf, "%s", path);
    for (i = 1; buf[i]; i++) {
        if (buf[i] == '/') {
            buf[i] = 0;
            mkdir(buf, 0777);
            buf[i] = '/';
        }
    }
}

/* Writes a file `rel` (parents created) of the scratch directory. */
static void put_file(const char *rel, const void *data, size_t n) {
    const char *p = path_in(rel);
    mkdirs_for(p);
    if (t_write_file(p, data, n) != 0) {
        perror(p);
        exit(2);
    }
}

static void put_text(const char *rel, const char *text) { put_file(rel, text, strlen(text)); }

/* Whether the file `rel` holds exactly `n` bytes equal to `data`. */
static int file_equals(const char *rel, const void *data, size_t n) {
    size_t len = 0;
    unsigned char *f = t_read_file(path_in(rel), &len);
    int same = f && len == n && memcmp(f, data, n) == 0;
    free(f);
    return same;
}

static int file_has(const char *rel, const char *sub) {
    size_t n = 0;
    unsigned char *f = t_read_file(path_in(rel), &n);
    int yes = f && strstr((const char *)f, sub) != NULL;
    free(f);
    return yes;
}

/* A file's bytes, to compare it after a refused call (malloc'd; *n receives the size). */
static unsigned char *slurp(const char *rel, size_t *n) {
    *n = 0;
    return t_read_file(path_in(rel), n);
}

/* -- byte helpers: stored bytes in a given byte order, independent of the host ------------------------ */

static void put_uint(unsigned char *p, uint64_t v, size_t size, int big) {
    size_t i;
    for (i = 0; i < size; i++) p[big ? size - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

static uint64_t f64_bits(double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* Standard base64 (RFC 4648, with padding). */
static void base64(const unsigned char *in, size_t n, char *out) {
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i, o = 0;
    for (i = 0; i + 2 < n; i += 3) {
        uint32_t v = ((uint32_t)in[i] << 16) | ((uint32_t)in[i + 1] << 8) | in[i + 2];
        out[o++] = A[v >> 18];
        out[o++] = A[(v >> 12) & 63];
        out[o++] = A[(v >> 6) & 63];
        out[o++] = A[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[o++] = A[v >> 18];
        out[o++] = A[(v >> 12) & 63];
        out[o++] = '=';
        out[o++] = '=';
    } else if (n - i == 2) {
        uint32_t v = ((uint32_t)in[i] << 16) | ((uint32_t)in[i + 1] << 8);
        out[o++] = A[v >> 18];
        out[o++] = A[(v >> 12) & 63];
        out[o++] = A[(v >> 6) & 63];
        out[o++] = '=';
    }
    out[o] = 0;
}

/* -- planting v2/v1 arrays --------------------------------------------------------------------------- */

/* Writes the stored (on-disk) bytes of the element at `idx` into `out`. */
typedef void (*stored_fn)(const uint64_t *idx, unsigned char *out);
/* Whether chunk `cidx` is left missing. */
typedef int (*skip_fn)(const uint64_t *cidx);

#define MAXR 4

/* Plants every chunk (except the skipped ones) of an uncompressed array of `rank` dimensions below the
 * directory `dir`: full-size chunks in C or Fortran order, out-of-bounds positions holding `pad`
 * (es bytes), keys joined by `sep` (v1: '.'). */
static void plant_chunks(const char *dir, int rank, const uint64_t *shape, const uint64_t *chunks, size_t es,
                         int fortran, char sep, stored_fn stored, const unsigned char *pad, skip_fn skip) {
    uint64_t grid[MAXR], cidx[MAXR], pos[MAXR], idx[MAXR], n = 1;
    int d;
    for (d = 0; d < rank; d++) {
        grid[d] = (shape[d] + chunks[d] - 1) / chunks[d];
        n *= chunks[d];
        cidx[d] = 0;
        if (grid[d] == 0) return;
    }
    for (;;) {
        if (!skip || !skip(cidx)) {
            unsigned char *buf = malloc((size_t)n * es);
            char key[512];
            size_t kl;
            uint64_t k;
            for (k = 0; k < n; k++) {
                /* k-th position in C order within the chunk */
                uint64_t rest = k, off = 0, stride = 1;
                int inb = 1;
                for (d = rank - 1; d >= 0; d--) {
                    pos[d] = rest % chunks[d];
                    rest /= chunks[d];
                }
                for (d = 0; d < rank; d++) {
                    idx[d] = cidx[d] * chunks[d] + pos[d];
                    if (idx[d] >= shape[d]) inb = 0;
                }
                if (fortran) {
                    for (d = 0; d < rank; d++) {
                        off += pos[d] * stride;
                        stride *= chunks[d];
                    }
                } else {
                    off = k;
                }
                if (inb) stored(idx, buf + off * es);
                else memcpy(buf + off * es, pad, es);
            }
            kl = (size_t)snprintf(key, sizeof key, "%s/", dir);
            for (d = 0; d < rank; d++) {
                if (d) key[kl++] = sep;
                kl += (size_t)snprintf(key + kl, sizeof key - kl, "%llu", (unsigned long long)cidx[d]);
            }
            if (rank == 0) snprintf(key + kl, sizeof key - kl, "0");
            put_file(key, buf, (size_t)n * es);
            free(buf);
        }
        for (d = rank - 1; d >= 0; d--) {
            if (++cidx[d] < grid[d]) break;
            cidx[d] = 0;
        }
        if (d < 0) return;
    }
}

/* Reads the whole array at `rel` (opened read-only) into a malloc'd buffer; NULL on failure. */
static unsigned char *read_all(const char *rel, int rank, const uint64_t *shape, size_t es, zarr_array **keep) {
    zarr_array *a = NULL;
    uint64_t start[MAXR] = {0, 0, 0, 0}, n = 1;
    unsigned char *buf;
    int d;
    CHECK_OK(zarr_open(path_in(rel), ZARR_READ, &a));
    if (!a) return NULL;
    for (d = 0; d < rank; d++) n *= shape[d];
    buf = malloc((size_t)n * es + 1);
    CHECK_OK(zarr_read_region(a, start, shape, buf, (size_t)n * es));
    if (keep) *keep = a;
    else zarr_close(a);
    return buf;
}

/* Compares a C-order buffer of the whole array with `expect(idx, out)` (native bytes), element by element. */
static void check_all(const unsigned char *buf, int rank, const uint64_t *shape, size_t es, stored_fn expect,
                      const char *what) {
    uint64_t n = 1, k, idx[MAXR];
    unsigned char want[64];
    int d, bad = 0;
    for (d = 0; d < rank; d++) n *= shape[d];
    for (k = 0; k < n && buf; k++) {
        uint64_t rest = k;
        for (d = rank - 1; d >= 0; d--) {
            idx[d] = rest % shape[d];
            rest /= shape[d];
        }
        expect(idx, want);
        if (memcmp(buf + k * es, want, es) != 0) {
            if (!bad) fprintf(stderr, "test_v2.c: %s: element %llu differs\n", what, (unsigned long long)k);
            bad = 1;
        }
    }
    t_checks++;
    if (bad || !buf) t_failures++;
}

/* ================================================================================================ */
/* Groups: zarr_group_create_ex, zarr_group_zarr_format */

#define V2_I2 "{\"zarr_format\":2,\"shape\":[5],\"chunks\":[2],\"dtype\":\"<i2\",\"fill_value\":-1,\"order\":\"C\"," \
              "\"filters\":null,\"compressor\":null,\"dimension_separator\":\".\"}"
#define V3_I2                                                                                                       \
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[5],\"data_type\":\"int16\",\"chunk_grid\":{\"name\":"  \
    "\"regular\",\"configuration\":{\"chunk_shape\":[2]}},\"chunk_key_encoding\":{\"name\":\"default\"},"          \
    "\"fill_value\":-1,\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}"

static void test_group_formats(void) {
    zarr_group *g = NULL, *c = NULL, *out;
    zarr_array *a = NULL;
    zarr_node_list *list = NULL;
    zarr_node_type t;
    char *json = NULL;
    size_t n = 0;
    int f = 0, bad[] = {0, 1, 4, -1, 300};
    unsigned i;

    /* v2: .zgroup + .zattrs, no zarr.json */
    CHECK_OK(zarr_group_create_ex(path_in("g2"), "{\"title\":\"v2\",\"n\":[1,null]}", 2, &g));
    CHECK(g != NULL);
    CHECK(t_exists(path_in("g2/.zgroup")) && t_exists(path_in("g2/.zattrs")) && !t_exists(path_in("g2/zarr.json")));
    CHECK(file_has("g2/.zgroup", "\"zarr_format\"") && file_has("g2/.zgroup", "2"));
    CHECK(file_has("g2/.zattrs", "\"title\""));
    if (g) {
        CHECK_OK(zarr_group_zarr_format(g, &f));
        CHECK(f == 2);
        CHECK_OK(zarr_group_attributes(g, &json));
        CHECK(json && strstr(json, "\"title\"") && strstr(json, "\"v2\""));
        zarr_string_free(json);
        json = NULL;
        CHECK_OK(zarr_group_metadata(g, &json));
        CHECK(json && strstr(json, "\"zarr_format\"") && !strstr(json, "node_type"));
        zarr_string_free(json);
        /* children inherit the format: a group, an array (v2 document) and implicit parents */
        CHECK_OK(zarr_group_create_group(g, "sub", "{\"level\":1}", &c));
        if (c) {
            CHECK_OK(zarr_group_zarr_format(c, &f));
            CHECK(f == 2);
            CHECK_OK(zarr_group_close(c));
        }
        CHECK(t_exists(path_in("g2/sub/.zgroup")) && !t_exists(path_in("g2/sub/zarr.json")));
        CHECK(file_has("g2/sub/.zattrs", "\"level\""));
        CHECK_OK(zarr_group_create_array(g, "x/y/arr", V2_I2, &a));
        if (a) {
            CHECK_OK(zarr_array_zarr_format(a, &f));
            CHECK(f == 2);
            CHECK_OK(zarr_close(a));
        }
        CHECK(t_exists(path_in("g2/x/.zgroup")) && t_exists(path_in("g2/x/y/.zgroup")));
        CHECK(!t_exists(path_in("g2/x/zarr.json")) && !t_exists(path_in("g2/x/y/zarr.json")));
        CHECK(t_exists(path_in("g2/x/y/arr/.zarray")) && !t_exists(path_in("g2/x/y/arr/zarr.json")));
        c = NULL;
        CHECK_OK(zarr_group_create_group(g, "p/q", NULL, &c)); /* implicit parent p */
        if (c) CHECK_OK(zarr_group_close(c));
        CHECK(t_exists(path_in("g2/p/.zgroup")) && t_exists(path_in("g2/p/q/.zgroup")));
        CHECK_OK(zarr_group_set_attributes(g, "{\"title\":\"renamed\"}"));
        CHECK(file_has("g2/.zattrs", "renamed"));
        CHECK_OK(zarr_group_list(g, &list));
        if (list) {
            const char *name = NULL;
            zarr_node_type kind = ZARR_NODE_ARRAY;
            CHECK_OK(zarr_node_list_size(list, &n));
            CHECK(n == 3); /* p, sub, x */
            CHECK_OK(zarr_node_list_get(list, 1, &name, &kind));
            CHECK(name && strcmp(name, "sub") == 0 && kind == ZARR_NODE_GROUP);
            CHECK_OK(zarr_node_list_free(list));
        }
        CHECK_OK(zarr_group_close(g));
    }
    CHECK_OK(zarr_node_type_at(path_in("g2"), &t));
    CHECK(t == ZARR_NODE_GROUP);
    CHECK_OK(zarr_node_type_at(path_in("g2/x/y/arr"), &t));
    CHECK(t == ZARR_NODE_ARRAY);
    /* reopened: still v2, attributes from .zattrs */
    g = NULL;
    CHECK_OK(zarr_group_open(path_in("g2"), ZARR_READ, &g));
    if (g) {
        CHECK_OK(zarr_group_zarr_format(g, &f));
        CHECK(f == 2);
        json = NULL;
        CHECK_OK(zarr_group_attributes(g, &json));
        CHECK(json && strstr(json, "renamed"));
        zarr_string_free(json);
        CHECK_STATUS(zarr_group_create_group(g, "ro", NULL, &c), ZARR_ERR_READ_ONLY);
        CHECK_OK(zarr_group_close(g));
    }
    /* without attributes: .zattrs may be absent, the attributes are {} */
    g = NULL;
    CHECK_OK(zarr_group_create_ex(path_in("g2_empty"), NULL, 2, &g));
    if (g) {
        json = NULL;
        CHECK_OK(zarr_group_attributes(g, &json));
        CHECK(json && strcmp(json, "{}") == 0);
        zarr_string_free(json);
        CHECK_OK(zarr_group_close(g));
    }

    /* v3 */
    g = NULL;
    CHECK_OK(zarr_group_create_ex(path_in("g3"), "{\"a\":1}", 3, &g));
    CHECK(t_exists(path_in("g3/zarr.json")) && !t_exists(path_in("g3/.zgroup")));
    if (g) {
        CHECK_OK(zarr_group_zarr_format(g, &f));
        CHECK(f == 3);
        c = NULL;
        CHECK_OK(zarr_group_create_group(g, "sub", NULL, &c));
        if (c) {
            CHECK_OK(zarr_group_zarr_format(c, &f));
            CHECK(f == 3);
            CHECK_OK(zarr_group_close(c));
        }
        CHECK_OK(zarr_group_close(g));
    }
    CHECK(t_exists(path_in("g3/sub/zarr.json")));
    /* zarr_group_create makes v3 */
    g = NULL;
    CHECK_OK(zarr_group_create(path_in("g_default"), NULL, &g));
    if (g) {
        CHECK_OK(zarr_group_zarr_format(g, &f));
        CHECK(f == 3);
        CHECK_OK(zarr_group_close(g));
    }

    /* invalid formats: refused, nothing created */
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        out = (zarr_group *)&out;
        CHECK_STATUS(zarr_group_create_ex(path_in("g_bad"), NULL, bad[i], &out), ZARR_ERR_INVALID_ARGUMENT);
        CHECK(out == NULL);
        CHECK_MSG("format");
    }
    CHECK(!t_exists(path_in("g_bad/.zgroup")) && !t_exists(path_in("g_bad/zarr.json")));
    /* existing nodes of either format, bad arguments */
    out = (zarr_group *)&out;
    CHECK_STATUS(zarr_group_create_ex(path_in("g2"), NULL, 2, &out), ZARR_ERR_EXISTS);
    CHECK(out == NULL);
    CHECK_STATUS(zarr_group_create_ex(path_in("g2"), NULL, 3, &out), ZARR_ERR_EXISTS);
    CHECK(!t_exists(path_in("g2/zarr.json")));
    CHECK_STATUS(zarr_group_create_ex(path_in("g3"), NULL, 2, &out), ZARR_ERR_EXISTS);
    CHECK(!t_exists(path_in("g3/.zgroup")));
    CHECK_STATUS(zarr_group_create_ex(path_in("g2/x/y/arr"), NULL, 2, &out), ZARR_ERR_EXISTS);
    CHECK_STATUS(zarr_group_create_ex(path_in("g_badattrs"), "[1]", 2, &out), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_create_ex(path_in("g_badattrs"), "{\"a\":", 2, &out), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(!t_exists(path_in("g_badattrs/.zgroup")) && !t_exists(path_in("g_badattrs/.zattrs")));
    CHECK_STATUS(zarr_group_create_ex(NULL, NULL, 2, &out), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_create_ex("", NULL, 2, &out), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_create_ex(path_in("g_nullout"), NULL, 2, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(!t_exists(path_in("g_nullout/.zgroup")));
    CHECK_STATUS(zarr_group_zarr_format(NULL, &f), ZARR_ERR_INVALID_HANDLE);
    g = NULL;
    CHECK_OK(zarr_group_open(path_in("g3"), ZARR_READ, &g));
    if (g) {
        CHECK_STATUS(zarr_group_zarr_format(g, NULL), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_OK(zarr_group_close(g));
    }
    /* an array handle is not a group handle */
    a = NULL;
    CHECK_OK(zarr_open(path_in("g2/x/y/arr"), ZARR_READ, &a));
    if (a) {
        CHECK_STATUS(zarr_group_zarr_format((const zarr_group *)(const void *)a, &f), ZARR_ERR_INVALID_HANDLE);
        CHECK_OK(zarr_close(a));
    }
}

/* ================================================================================================ */
/* zarr_array_zarr_format; v1 is read-only */

static void v1_i2_stored(const uint64_t *idx, unsigned char *out) { /* <i2, value 10 i - j */
    put_uint(out, (uint64_t)(int64_t)(10 * (int)idx[0] - (int)idx[1]), 2, 0);
}

static void v1_i2_native(const uint64_t *idx, unsigned char *out) {
    int16_t v = (int16_t)(10 * (int)idx[0] - (int)idx[1]);
    if (idx[0] == 4 && idx[1] >= 3) v = 42; /* chunk 1.1 missing: fill 42 */
    memcpy(out, &v, 2);
}

static int skip_1_1(const uint64_t *c) { return c[0] == 1 && c[1] == 1; }

static void test_array_formats(void) {
    zarr_array *a = NULL, *out;
    uint64_t shape[2] = {5, 6}, start[2] = {0, 0}, one[2] = {1, 1};
    const unsigned char pad[2] = {0x2a, 0};
    unsigned char *buf, *before;
    int16_t v = 7;
    size_t n = 0;
    char *json = NULL;
    int f = 0;

    /* v3 and v2 created through zarr_create */
    CHECK_OK(zarr_create(path_in("fmt3"), V3_I2, &a));
    if (a) {
        CHECK_OK(zarr_array_zarr_format(a, &f));
        CHECK(f == 3);
        CHECK_OK(zarr_close(a));
    }
    a = NULL;
    CHECK_OK(zarr_create(path_in("fmt2"), V2_I2, &a));
    CHECK(t_exists(path_in("fmt2/.zarray")) && !t_exists(path_in("fmt2/zarr.json")));
    if (a) {
        CHECK_OK(zarr_array_zarr_format(a, &f));
        CHECK(f == 2);
        CHECK_OK(zarr_array_metadata(a, &json));
        CHECK(json && strstr(json, "\"dtype\"") && strstr(json, "<i2"));
        zarr_string_free(json);
        CHECK_OK(zarr_array_set_attributes(a, "{\"units\":\"m\"}"));
        CHECK(file_has("fmt2/.zattrs", "\"units\"") && !file_has("fmt2/.zarray", "units"));
        CHECK_STATUS(zarr_array_zarr_format(a, NULL), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_OK(zarr_close(a));
    }
    CHECK_STATUS(zarr_array_zarr_format(NULL, &f), ZARR_ERR_INVALID_HANDLE);

    /* v1: meta + attrs written here, 5x6 <i2 in 4x3 chunks, order F, chunk 1.1 missing (fill 42) */
    put_text("fmt1/meta", "{\"zarr_format\": 1, \"shape\": [5, 6], \"chunks\": [4, 3], \"dtype\": \"<i2\", "
                          "\"compression\": \"none\", \"compression_opts\": null, \"fill_value\": 42, \"order\": \"F\"}");
    put_text("fmt1/attrs", "{\"foo\": 42, \"bar\": \"apples\"}");
    plant_chunks("fmt1", 2, shape, (const uint64_t[]){4, 3}, 2, 1, '.', v1_i2_stored, pad, skip_1_1);
    CHECK(t_exists(path_in("fmt1/0.0")) && t_exists(path_in("fmt1/1.0")) && !t_exists(path_in("fmt1/1.1")));
    a = NULL;
    buf = read_all("fmt1", 2, shape, 2, &a);
    check_all(buf, 2, shape, 2, v1_i2_native, "v1 <i2 order F, chunk 1.1 missing");
    free(buf);
    if (a) {
        CHECK_OK(zarr_array_zarr_format(a, &f));
        CHECK(f == 1);
        json = NULL;
        CHECK_OK(zarr_array_attributes(a, &json));
        CHECK(json && strstr(json, "\"bar\"") && strstr(json, "apples"));
        zarr_string_free(json);
        CHECK_STATUS(zarr_write_region(a, start, one, &v, sizeof v), ZARR_ERR_READ_ONLY);
        CHECK_STATUS(zarr_array_set_attributes(a, "{}"), ZARR_ERR_READ_ONLY);
        CHECK_OK(zarr_close(a));
    }
    before = slurp("fmt1/0.0", &n);
    out = (zarr_array *)&out;
    CHECK_STATUS(zarr_open(path_in("fmt1"), ZARR_READ_WRITE, &out), ZARR_ERR_UNSUPPORTED);
    CHECK(out == NULL);
    CHECK_MSG("v1");
    CHECK(before && file_equals("fmt1/0.0", before, n));
    free(before);
    /* creating v1 is refused; nothing written */
    CHECK_STATUS(zarr_create(path_in("fmt1_new"), "{\"zarr_format\":1,\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i2\","
                                                  "\"compression\":\"none\",\"compression_opts\":null,"
                                                  "\"fill_value\":0,\"order\":\"C\"}", &out),
                 ZARR_ERR_UNSUPPORTED);
    CHECK(out == NULL && !t_exists(path_in("fmt1_new/meta")));
    /* unknown format numbers */
    CHECK_STATUS(zarr_create(path_in("fmt4"), "{\"zarr_format\":4,\"shape\":[4]}", &out), ZARR_ERR_METADATA);
    /* a v1 array in a zarr_group_open'ed directory is read through the group too */
    put_text("fmt_grp/.zgroup", "{\"zarr_format\": 2}");
    put_text("fmt_grp/v1/meta", "{\"zarr_format\": 1, \"shape\": [5, 6], \"chunks\": [4, 3], \"dtype\": \"<i2\", "
                                "\"compression\": \"none\", \"compression_opts\": null, \"fill_value\": 42, "
                                "\"order\": \"F\"}");
    put_text("fmt_grp/v1/attrs", "{}");
    {
        zarr_group *g = NULL;
        CHECK_OK(zarr_group_open(path_in("fmt_grp"), ZARR_READ, &g));
        if (g) {
            a = NULL;
            CHECK_OK(zarr_group_open_array(g, "v1", &a));
            if (a) {
                CHECK_OK(zarr_array_zarr_format(a, &f));
                CHECK(f == 1);
                CHECK_OK(zarr_close(a));
            }
            CHECK_OK(zarr_group_close(g));
        }
    }
}

/* ================================================================================================ */
/* Structured dtypes: zarr_array_num_fields / zarr_array_field, reads with a base64 structured fill */

/* [["x","<f4"],["y",">i2"],["s","|u1",[2,3]],["n",[["p",">f8"],["q","|b1"]]]]: 4 + 2 + 6 + 9 = 21 bytes */
#define ST_DESCR "[[\"x\",\"<f4\"],[\"y\",\">i2\"],[\"s\",\"|u1\",[2,3]],[\"n\",[[\"p\",\">f8\"],[\"q\",\"|b1\"]]]]"
#define ST_SIZE 21

struct st_value {
    float x;
    int16_t y;
    unsigned char s[6];
    double p;
    unsigned char q;
};

static struct st_value st_of(const uint64_t *idx) {
    struct st_value v;
    int i = (int)idx[0], k;
    v.x = (float)i * 0.5f - 3.0f;
    v.y = (int16_t)(-1000 * i + 7);
    for (k = 0; k < 6; k++) v.s[k] = (unsigned char)(i * 16 + k);
    v.p = i == 0 ? -0.0 : 1.0 / (double)(i + 1); /* -0.0, then values with full mantissas */
    v.q = (unsigned char)(i % 2);
    return v;
}

static const struct st_value ST_FILL = {2.5f, -3, {1, 2, 3, 4, 5, 6}, 1.5, 1};

static void st_stored_value(const struct st_value *v, unsigned char *out) {
    put_uint(out, f32_bits(v->x), 4, 0);
    put_uint(out + 4, (uint64_t)(uint16_t)v->y, 2, 1);
    memcpy(out + 6, v->s, 6);
    put_uint(out + 12, f64_bits(v->p), 8, 1);
    out[20] = v->q;
}

static void st_native_value(const struct st_value *v, unsigned char *out) {
    memcpy(out, &v->x, 4);
    memcpy(out + 4, &v->y, 2);
    memcpy(out + 6, v->s, 6);
    memcpy(out + 12, &v->p, 8);
    out[20] = v->q;
}

static void st_stored(const uint64_t *idx, unsigned char *out) {
    struct st_value v = st_of(idx);
    st_stored_value(&v, out);
}

static void st_native(const uint64_t *idx, unsigned char *out) { /* chunk 1 (elements 3..5) missing */
    struct st_value v = st_of(idx);
    st_native_value(idx[0] >= 3 && idx[0] < 6 ? &ST_FILL : &v, out);
}

static int skip_1(const uint64_t *c) { return c[0] == 1; }

static void test_struct_fields(void) {
    zarr_array *a = NULL, *plain = NULL;
    unsigned char fill_stored[ST_SIZE], pad[ST_SIZE], got[ST_SIZE], want[ST_SIZE], *buf;
    char b64[64], zarray[1024];
    uint64_t shape[1] = {7}, chunks[1] = {3}, start[1] = {2}, count[1] = {1};
    const char *name = NULL;
    zarr_data_type dt = ZARR_INT8;
    size_t off = 99, size = 99, count_f = 99, es = 0;
    static const struct {
        const char *name;
        zarr_data_type dt;
        size_t off, size;
    } want_fields[4] = {{"x", ZARR_FLOAT32, 0, 4}, {"y", ZARR_INT16, 4, 2}, {"s", ZARR_UINT8, 6, 6},
                        {"n", ZARR_STRUCT, 12, 9}};
    size_t i;

    st_stored_value(&ST_FILL, fill_stored);
    base64(fill_stored, ST_SIZE, b64);
    CHECK(strcmp(b64, "AAAgQP/9AQIDBAUGP/gAAAAAAAAB") == 0); /* the helper itself, checked by hand */
    snprintf(zarray, sizeof zarray,
             "{\"zarr_format\": 2, \"shape\": [7], \"chunks\": [3], \"dtype\": " ST_DESCR ", \"fill_value\": \"%s\", "
             "\"order\": \"C\", \"filters\": null, \"compressor\": null, \"dimension_separator\": \".\"}", b64);
    put_text("st/.zarray", zarray);
    memset(pad, 0xEE, sizeof pad); /* padding of the edge chunk: never read */
    plant_chunks("st", 1, shape, chunks, ST_SIZE, 0, '.', st_stored, pad, skip_1);

    buf = read_all("st", 1, shape, ST_SIZE, &a);
    check_all(buf, 1, shape, ST_SIZE, st_native, "structured <f4/>i2/subarray/nested >f8, base64 fill");
    free(buf);
    if (!a) return;
    CHECK_OK(zarr_array_data_type(a, &dt, &es));
    CHECK(dt == ZARR_STRUCT && es == ST_SIZE);
    CHECK_OK(zarr_array_num_fields(a, &count_f));
    CHECK(count_f == 4);
    for (i = 0; i < 4; i++) {
        name = NULL;
        CHECK_OK(zarr_array_field(a, i, &name, &dt, &off, &size));
        CHECK(name && strcmp(name, want_fields[i].name) == 0);
        CHECK(dt == want_fields[i].dt && off == want_fields[i].off && size == want_fields[i].size);
    }
    /* every output may be NULL; names stay valid while the handle is open */
    CHECK_OK(zarr_array_field(a, 3, NULL, NULL, NULL, NULL));
    CHECK_OK(zarr_array_field(a, 0, &name, NULL, NULL, NULL));
    CHECK(name && strcmp(name, "x") == 0);
    CHECK_OK(zarr_array_field(a, 1, NULL, NULL, &off, NULL));
    CHECK(off == 4);
    CHECK(strcmp(name, "x") == 0);
    /* out of range */
    CHECK_STATUS(zarr_array_field(a, 4, &name, &dt, &off, &size), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_field(a, (size_t)-1, NULL, NULL, NULL, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_num_fields(a, NULL), ZARR_ERR_INVALID_ARGUMENT);
    /* the fill value: one element in the buffer layout */
    CHECK_OK(zarr_array_fill_value(a, got, sizeof got));
    st_native_value(&ST_FILL, want);
    CHECK(memcmp(got, want, ST_SIZE) == 0);
    /* one element read */
    CHECK_OK(zarr_read_region(a, start, count, got, sizeof got));
    st_native(start, want);
    CHECK(memcmp(got, want, ST_SIZE) == 0);
    CHECK_OK(zarr_close(a));
    CHECK_STATUS(zarr_array_num_fields(NULL, &count_f), ZARR_ERR_INVALID_HANDLE);
    CHECK_STATUS(zarr_array_field(NULL, 0, &name, &dt, &off, &size), ZARR_ERR_INVALID_HANDLE);

    /* non-structured arrays: no fields */
    CHECK_OK(zarr_create(path_in("st_plain"), V2_I2, &plain));
    if (plain) {
        count_f = 99;
        CHECK_OK(zarr_array_num_fields(plain, &count_f));
        CHECK(count_f == 0);
        CHECK_STATUS(zarr_array_field(plain, 0, &name, &dt, &off, &size), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_OK(zarr_close(plain));
    }
    plain = NULL;
    CHECK_OK(zarr_open(path_in("fmt3"), ZARR_READ, &plain));
    if (plain) {
        count_f = 99;
        CHECK_OK(zarr_array_num_fields(plain, &count_f));
        CHECK(count_f == 0);
        CHECK_STATUS(zarr_array_field(plain, 0, NULL, NULL, NULL, NULL), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_OK(zarr_close(plain));
    }
}

/* libzarr writes a structured v2 array: the stored chunk holds each field in its declared byte order. */
static void test_struct_write(void) {
    zarr_array *a = NULL;
    unsigned char buf[2 * ST_SIZE], want[3 * ST_SIZE];
    uint64_t start[1] = {3}, count[1] = {2}, idx[1];
    struct st_value v;
    char zarray[1024];

    snprintf(zarray, sizeof zarray,
             "{\"zarr_format\": 2, \"shape\": [5], \"chunks\": [3], \"dtype\": " ST_DESCR ", \"fill_value\": null, "
             "\"order\": \"C\", \"filters\": null, \"compressor\": null, \"dimension_separator\": \".\"}");
    CHECK_OK(zarr_create(path_in("stw"), zarray, &a));
    if (!a) return;
    for (idx[0] = 3; idx[0] < 5; idx[0]++) {
        v = st_of(idx);
        st_native_value(&v, buf + (idx[0] - 3) * ST_SIZE);
    }
    CHECK_OK(zarr_write_region(a, start, count, buf, sizeof buf));
    CHECK_OK(zarr_close(a));
    /* chunk 1 = elements 3, 4 and one padding element (fill null: zero bytes) */
    memset(want, 0, sizeof want);
    for (idx[0] = 3; idx[0] < 5; idx[0]++) st_stored(idx, want + (idx[0] - 3) * ST_SIZE);
    CHECK(file_equals("stw/1", want, sizeof want));
    CHECK(!t_exists(path_in("stw/0")));
}

/* ================================================================================================ */
/* v2 reads of planted arrays */

/* (a) <i4, C order, "." keys, 5x7 in 3x4 chunks, fill -7, chunk 0.1 missing */
static int32_t a_val(const uint64_t *i) { return (int32_t)((int64_t)(i[0] * 7 + i[1]) * 100003 - 2000000); }
static void a_stored(const uint64_t *i, unsigned char *o) { put_uint(o, (uint64_t)(uint32_t)a_val(i), 4, 0); }
static void a_native(const uint64_t *i, unsigned char *o) {
    int32_t v = (i[0] < 3 && i[1] >= 4) ? -7 : a_val(i);
    memcpy(o, &v, 4);
}
static int skip_0_1(const uint64_t *c) { return c[0] == 0 && c[1] == 1; }

/* (b) >u2 big-endian, C order, "/" keys, 5x7 in 3x4 chunks, fill 65535, chunk 1.0 missing */
static uint16_t b_val(const uint64_t *i) { return (uint16_t)((i[0] * 9 + i[1]) * 1021); }
static void b_stored(const uint64_t *i, unsigned char *o) { put_uint(o, b_val(i), 2, 1); }
static void b_native(const uint64_t *i, unsigned char *o) {
    uint16_t v = (i[0] >= 3 && i[1] < 4) ? 65535 : b_val(i);
    memcpy(o, &v, 2);
}
static int skip_1_0(const uint64_t *c) { return c[0] == 1 && c[1] == 0; }

/* (c) <f8, order F, 3-D 4x5x6 in 3x2x4 chunks, "/" keys, fill "-Infinity", chunk 1/2/0 missing */
static double c_val(const uint64_t *i) {
    return (i[0] | i[1] | i[2]) == 0 ? -0.0 : (double)i[0] + (double)i[1] / 8.0 + (double)i[2] / 64.0 - 1.5;
}
static void c_stored(const uint64_t *i, unsigned char *o) { put_uint(o, f64_bits(c_val(i)), 8, 0); }
static void c_native(const uint64_t *i, unsigned char *o) {
    double v = (i[0] >= 3 && i[1] >= 4 && i[2] < 4) ? -INFINITY : c_val(i);
    memcpy(o, &v, 8);
}
static int skip_1_2_0(const uint64_t *c) { return c[0] == 1 && c[1] == 2 && c[2] == 0; }

/* (d) >f4, order F 2-D 6x5 in 4x3 chunks, fill "NaN" (0x7fc00000), chunk 1.1 missing; a NaN payload stored */
static uint32_t d_bits(const uint64_t *i) {
    return (i[0] == 0 && i[1] == 1) ? 0x7fc00001u : f32_bits((float)i[0] * 0.5f - (float)i[1] * 0.25f);
}
static void d_stored(const uint64_t *i, unsigned char *o) { put_uint(o, d_bits(i), 4, 1); }
static void d_native(const uint64_t *i, unsigned char *o) {
    uint32_t v = (i[0] >= 4 && i[1] >= 3) ? 0x7fc00000u : d_bits(i);
    memcpy(o, &v, 4);
}

/* (e) |b1 1-D 10 in chunks of 4, fill true, chunk 1 missing */
static unsigned char e_val(const uint64_t *i) { return (unsigned char)((i[0] * 7 / 3) % 2); }
static void e_stored(const uint64_t *i, unsigned char *o) { o[0] = e_val(i); }
static void e_native(const uint64_t *i, unsigned char *o) { o[0] = (i[0] >= 4 && i[0] < 8) ? 1 : e_val(i); }

/* (f) |S3 1-D 7 in chunks of 2, fill base64 "eHl6" (xyz), chunk 2 missing */
static void f_stored(const uint64_t *i, unsigned char *o) {
    o[0] = (unsigned char)('a' + i[0]);
    o[1] = i[0] % 2 ? 0 : (unsigned char)('A' + i[0]);
    o[2] = 0;
}
static void f_native(const uint64_t *i, unsigned char *o) {
    if (i[0] == 4 || i[0] == 5) memcpy(o, "xyz", 3);
    else f_stored(i, o);
}
static int skip_2(const uint64_t *c) { return c[0] == 2; }

/* (g) <M8[ns] (read as int64) 1-D 6 in chunks of 4, fill NaT (INT64_MIN), chunk 1 missing */
static int64_t g_val(const uint64_t *i) { return i[0] == 1 ? INT64_MIN : (int64_t)i[0] * 1000000007LL - 3; }
static void g_stored(const uint64_t *i, unsigned char *o) { put_uint(o, (uint64_t)g_val(i), 8, 0); }
static void g_native(const uint64_t *i, unsigned char *o) {
    int64_t v = i[0] >= 4 ? INT64_MIN : g_val(i);
    memcpy(o, &v, 8);
}

/* (h) >c16 1-D 5 in chunks of 2, fill [1.5, "NaN"], chunk 1 missing */
static void h_parts(const uint64_t *i, double *re, double *im) {
    *re = (double)i[0] - 0.75;
    *im = i[0] == 0 ? INFINITY : -(double)i[0] * 3.0;
}
static void h_stored(const uint64_t *i, unsigned char *o) {
    double re, im;
    h_parts(i, &re, &im);
    put_uint(o, f64_bits(re), 8, 1);
    put_uint(o + 8, f64_bits(im), 8, 1);
}
static void h_native(const uint64_t *i, unsigned char *o) {
    double re, im;
    uint64_t nan = 0x7ff8000000000000ull;
    h_parts(i, &re, &im);
    if (i[0] == 2 || i[0] == 3) {
        re = 1.5;
        memcpy(&im, &nan, 8);
    }
    memcpy(o, &re, 8);
    memcpy(o + 8, &im, 8);
}

struct planted {
    const char *dir, *zarray;
    int rank;
    uint64_t shape[MAXR], chunks[MAXR];
    size_t es;
    int fortran;
    char sep;
    stored_fn stored, native;
    skip_fn skip;
};

static void check_planted(const struct planted *p) {
    unsigned char pad[16];
    unsigned char *buf;
    zarr_array *a = NULL;
    uint64_t sub_start[MAXR], sub_count[MAXR], n = 1;
    int d;
    char what[256];

    snprintf(what, sizeof what, "%s/.zarray", p->dir);
    put_text(what, p->zarray);
    memset(pad, 0xA5, sizeof pad); /* edge padding: must never be read */
    plant_chunks(p->dir, p->rank, p->shape, p->chunks, p->es, p->fortran, p->sep, p->stored, pad, p->skip);
    snprintf(what, sizeof what, "%s (whole array)", p->dir);
    buf = read_all(p->dir, p->rank, p->shape, p->es, &a);
    check_all(buf, p->rank, p->shape, p->es, p->native, what);
    free(buf);
    if (!a) return;
    {
        int f = 0;
        CHECK_OK(zarr_array_zarr_format(a, &f));
        CHECK(f == 2);
    }
    /* an interior box spanning chunks: compared with the whole-array expectation */
    for (d = 0; d < p->rank; d++) {
        sub_start[d] = p->shape[d] > 2 ? 1 : 0;
        sub_count[d] = p->shape[d] - sub_start[d] - (p->shape[d] > 3 ? 1 : 0);
        n *= sub_count[d];
    }
    buf = malloc((size_t)n * p->es + 1);
    CHECK_OK(zarr_read_region(a, sub_start, sub_count, buf, (size_t)n * p->es));
    {
        uint64_t k, idx[MAXR];
        unsigned char want[64];
        int bad = 0;
        for (k = 0; k < n; k++) {
            uint64_t rest = k;
            for (d = p->rank - 1; d >= 0; d--) {
                idx[d] = sub_start[d] + rest % sub_count[d];
                rest /= sub_count[d];
            }
            p->native(idx, want);
            if (memcmp(buf + k * p->es, want, p->es) != 0) bad = 1;
        }
        t_checks++;
        if (bad) {
            t_failures++;
            fprintf(stderr, "test_v2.c: %s: interior region differs\n", p->dir);
        }
    }
    free(buf);
    CHECK_OK(zarr_close(a));
}

#define ZA(shape, chunks, dtype, fill, order, sep)                                                                  \
    "{\"zarr_format\": 2, \"shape\": " shape ", \"chunks\": " chunks ", \"dtype\": \"" dtype "\", \"fill_value\": " \
    fill ", \"order\": \"" order "\", \"filters\": null, \"compressor\": null" sep "}"

static void test_v2_reads(void) {
    static const struct planted cases[] = {
        {"v2_le_i4", ZA("[5, 7]", "[3, 4]", "<i4", "-7", "C", ", \"dimension_separator\": \".\""), 2, {5, 7}, {3, 4},
         4, 0, '.', a_stored, a_native, skip_0_1},
        {"v2_be_u2_slash", ZA("[5, 7]", "[3, 4]", ">u2", "65535", "C", ", \"dimension_separator\": \"/\""), 2,
         {5, 7}, {3, 4}, 2, 0, '/', b_stored, b_native, skip_1_0},
        {"v2_f8_F_3d_slash", ZA("[4, 5, 6]", "[3, 2, 4]", "<f8", "\"-Infinity\"", "F",
                                ", \"dimension_separator\": \"/\""),
         3, {4, 5, 6}, {3, 2, 4}, 8, 1, '/', c_stored, c_native, skip_1_2_0},
        {"v2_be_f4_F_nan", ZA("[6, 5]", "[4, 3]", ">f4", "\"NaN\"", "F", ", \"dimension_separator\": \".\""), 2,
         {6, 5}, {4, 3}, 4, 1, '.', d_stored, d_native, skip_1_1},
        {"v2_b1_fill_true", ZA("[10]", "[4]", "|b1", "true", "C", ""), 1, {10}, {4}, 1, 0, '.', e_stored, e_native,
         skip_1},
        {"v2_S3_base64_fill", ZA("[7]", "[2]", "|S3", "\"eHl6\"", "C", ""), 1, {7}, {2}, 3, 0, '.', f_stored,
         f_native, skip_2},
        {"v2_M8_ns", ZA("[6]", "[4]", "<M8[ns]", "-9223372036854775808", "C", ""), 1, {6}, {4}, 8, 0, '.', g_stored,
         g_native, skip_1},
        {"v2_be_c16_fill", ZA("[5]", "[2]", ">c16", "[1.5, \"NaN\"]", "C", ""), 1, {5}, {2}, 16, 0, '.', h_stored,
         h_native, skip_1},
        /* no dimension_separator member at all (older writers): "." */
        {"v2_absent_sep", ZA("[5, 7]", "[3, 4]", "<i4", "-7", "C", ""), 2, {5, 7}, {3, 4}, 4, 0, '.', a_stored,
         a_native, skip_0_1},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) check_planted(&cases[i]);

    /* .zattrs are the attributes; a missing .zattrs means {} */
    {
        zarr_array *a = NULL;
        char *json = NULL;
        put_text("v2_le_i4/.zattrs", "{\"units\": \"m\", \"scale\": 0.5}");
        CHECK_OK(zarr_open(path_in("v2_le_i4"), ZARR_READ, &a));
        if (a) {
            CHECK_OK(zarr_array_attributes(a, &json));
            CHECK(json && strstr(json, "\"units\"") && strstr(json, "0.5"));
            zarr_string_free(json);
            CHECK_OK(zarr_close(a));
        }
        a = NULL;
        json = NULL;
        CHECK_OK(zarr_open(path_in("v2_be_u2_slash"), ZARR_READ, &a));
        if (a) {
            CHECK_OK(zarr_array_attributes(a, &json));
            CHECK(json && strcmp(json, "{}") == 0);
            zarr_string_free(json);
            CHECK_OK(zarr_close(a));
        }
    }
    /* a corrupt uncompressed chunk (wrong length) is a codec error, other chunks still read */
    {
        zarr_array *a = NULL;
        unsigned char junk[10] = {0};
        int32_t v[12];
        uint64_t s0[2] = {0, 0}, c0[2] = {3, 4}, s1[2] = {3, 4}, c1[2] = {2, 3};
        put_file("v2_le_i4/1.1", junk, sizeof junk);
        CHECK_OK(zarr_open(path_in("v2_le_i4"), ZARR_READ, &a));
        if (a) {
            CHECK_OK(zarr_read_region(a, s0, c0, v, sizeof v));
            CHECK_STATUS(zarr_read_region(a, s1, c1, v, 6 * sizeof v[0]), ZARR_ERR_CODEC);
            CHECK_OK(zarr_close(a));
        }
    }
}

/* libzarr writes a v2 >i2 order F "/" array: the stored chunk bytes are big-endian, Fortran order, padded. */
static void test_v2_write_layout(void) {
    zarr_array *a = NULL;
    int16_t data[5][7];
    unsigned char want[12 * 2];
    uint64_t start[2] = {0, 0}, count[2] = {5, 7};
    int i, j, k;

    for (i = 0; i < 5; i++)
        for (j = 0; j < 7; j++) data[i][j] = (int16_t)(i * 1000 - j * 3 - 1);
    CHECK_OK(zarr_create(path_in("w_F"), ZA("[5, 7]", "[3, 4]", ">i2", "5", "F", ", \"dimension_separator\": \"/\""),
                         &a));
    if (!a) return;
    CHECK_OK(zarr_write_region(a, start, count, data, sizeof data));
    CHECK_OK(zarr_close(a));
    /* chunk 1/1: rows 3..5 (5 out of bounds), columns 4..7 (7 out of bounds); padding = fill 5 */
    for (k = 0; k < 12; k++) {
        int r = k % 3, c = k / 3; /* Fortran order within the 3x4 chunk */
        int gi = 3 + r, gj = 4 + c;
        int16_t v = (gi < 5 && gj < 7) ? data[gi][gj] : 5;
        put_uint(want + 2 * k, (uint64_t)(uint16_t)v, 2, 1);
    }
    CHECK(file_equals("w_F/1/1", want, sizeof want));
    CHECK(t_exists(path_in("w_F/0/0")) && !t_exists(path_in("w_F/0.0")));
}

/* ================================================================================================ */
/* zarr_convert_v2_to_v3 */

static void test_convert(void) {
    zarr_array *a = NULL;
    unsigned char *c00, *c11, *before, *buf;
    size_t n00 = 0, n11 = 0, nb = 0;
    uint64_t shape[2] = {5, 7};
    int f = 0;
    char *json = NULL;
    static const struct {
        const char *dir, *zarray, *why;
    } converted[] = {
        {"cv_filter", "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"fill_value\":0,\"order\":\"C\","
                      "\"filters\":[{\"id\":\"delta\",\"dtype\":\"<i4\"}],\"compressor\":null}", "delta"},
        {"cv_zlib", "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"fill_value\":0,\"order\":\"C\","
                    "\"filters\":null,\"compressor\":{\"id\":\"zlib\",\"level\":1}}", "zlib"},
        {"cv_lz4", "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"fill_value\":0,\"order\":\"C\","
                   "\"filters\":null,\"compressor\":{\"id\":\"lz4\",\"acceleration\":1}}", "lz4"},
        {"cv_bz2", "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"fill_value\":0,\"order\":\"C\","
                   "\"filters\":null,\"compressor\":{\"id\":\"bz2\",\"level\":1}}", "bz2"},
        {"cv_lzma", "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"fill_value\":0,\"order\":\"C\","
                    "\"filters\":null,\"compressor\":{\"id\":\"lzma\",\"format\":1,\"check\":-1,\"preset\":null,"
                    "\"filters\":null}}", "lzma"},
    };
    static const struct {
        const char *dir, *zarray, *why;
    } refused[] = {
        {"cv_datetime", "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":\"<M8[ns]\",\"fill_value\":0,"
                        "\"order\":\"C\",\"filters\":null,\"compressor\":null}", "datetime"},
        {"cv_timedelta", "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":\"<m8[s]\",\"fill_value\":0,"
                         "\"order\":\"C\",\"filters\":null,\"compressor\":null}", "timedelta"},
        {"cv_unicode", "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":\"<U3\",\"fill_value\":null,"
                       "\"order\":\"C\",\"filters\":null,\"compressor\":null}", "unicode"},
        {"cv_struct", "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":[[\"x\",\"<f4\"],[\"y\",\"<i2\"]],"
                      "\"fill_value\":null,\"order\":\"C\",\"filters\":null,\"compressor\":null}", "structured"},
        {"cv_subarray", "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":[[\"x\",\"<f4\",[2]]],"
                        "\"fill_value\":null,\"order\":\"C\",\"filters\":null,\"compressor\":null}", "subarray"},
        {"cv_unknown", "{\"zarr_format\":2,\"shape\":[4],\"chunks\":[2],\"dtype\":\"<i4\",\"fill_value\":0,\"order\":\"C\","
                       "\"filters\":null,\"compressor\":{\"id\":\"jenkins_lookup3\"}}", "jenkins_lookup3"},
        {"cv_delta_f", "{\"zarr_format\":2,\"shape\":[4,4],\"chunks\":[2,2],\"dtype\":\"<i4\",\"fill_value\":0,\"order\":\"F\","
                       "\"filters\":[{\"id\":\"delta\",\"dtype\":\"<i4\"}],\"compressor\":null}", "delta"},
    };
    size_t i;
    char rel[256];

    /* success: the planted >u2 "/" array (b) with attributes; chunks untouched, read back equal as v3 */
    put_text("cv_ok/.zarray", ZA("[5, 7]", "[3, 4]", ">u2", "65535", "C", ", \"dimension_separator\": \"/\""));
    put_text("cv_ok/.zattrs", "{\"units\": \"m\"}");
    {
        unsigned char pad[2] = {0xA5, 0xA5};
        plant_chunks("cv_ok", 2, shape, (const uint64_t[]){3, 4}, 2, 0, '/', b_stored, pad, skip_1_0);
    }
    c00 = slurp("cv_ok/0/0", &n00);
    c11 = slurp("cv_ok/1/1", &n11);
    CHECK_OK(zarr_convert_v2_to_v3(path_in("cv_ok")));
    CHECK(t_exists(path_in("cv_ok/zarr.json")));
    CHECK(!t_exists(path_in("cv_ok/.zarray")) && !t_exists(path_in("cv_ok/.zattrs")));
    CHECK(c00 && file_equals("cv_ok/0/0", c00, n00) && c11 && file_equals("cv_ok/1/1", c11, n11));
    CHECK(!t_exists(path_in("cv_ok/1/0")));
    CHECK(file_has("cv_ok/zarr.json", "\"v2\"") && file_has("cv_ok/zarr.json", "\"big\""));
    free(c00);
    free(c11);
    buf = read_all("cv_ok", 2, shape, 2, &a);
    check_all(buf, 2, shape, 2, b_native, "converted >u2 array");
    free(buf);
    if (a) {
        CHECK_OK(zarr_array_zarr_format(a, &f));
        CHECK(f == 3);
        CHECK_OK(zarr_array_attributes(a, &json));
        CHECK(json && strstr(json, "\"units\""));
        zarr_string_free(json);
        CHECK_OK(zarr_close(a));
    }
    /* again: it already has zarr.json */
    CHECK_STATUS(zarr_convert_v2_to_v3(path_in("cv_ok")), ZARR_ERR_EXISTS);
    /* order F 3-D (c) with fill -Infinity: a transpose codec */
    put_text("cv_F/.zarray", ZA("[4, 5, 6]", "[3, 2, 4]", "<f8", "\"-Infinity\"", "F", ", \"dimension_separator\": \"/\""));
    {
        unsigned char pad[8] = {0};
        const uint64_t s3[3] = {4, 5, 6}, c3[3] = {3, 2, 4};
        plant_chunks("cv_F", 3, s3, c3, 8, 1, '/', c_stored, pad, skip_1_2_0);
        CHECK_OK(zarr_convert_v2_to_v3(path_in("cv_F")));
        CHECK(file_has("cv_F/zarr.json", "transpose"));
        buf = read_all("cv_F", 3, s3, 8, NULL);
        check_all(buf, 3, s3, 8, c_native, "converted order F array");
        free(buf);
    }
    /* an array libzarr itself wrote as v2 (gzip, blosc) converts too */
    a = NULL;
    CHECK_OK(zarr_create(path_in("cv_gzip"), "{\"zarr_format\":2,\"shape\":[5,7],\"chunks\":[3,4],\"dtype\":\"<i4\","
                                             "\"fill_value\":-7,\"order\":\"C\",\"filters\":null,"
                                             "\"compressor\":{\"id\":\"gzip\",\"level\":5}}", &a));
    if (a) {
        int32_t data[5][7];
        uint64_t start[2] = {0, 0};
        uint64_t idx[2];
        for (idx[0] = 0; idx[0] < 5; idx[0]++)
            for (idx[1] = 0; idx[1] < 7; idx[1]++) data[idx[0]][idx[1]] = a_val(idx);
        CHECK_OK(zarr_write_region(a, start, shape, data, sizeof data));
        CHECK_OK(zarr_close(a));
        CHECK_OK(zarr_convert_v2_to_v3(path_in("cv_gzip")));
        CHECK(file_has("cv_gzip/zarr.json", "gzip"));
        a = NULL;
        CHECK_OK(zarr_open(path_in("cv_gzip"), ZARR_READ, &a));
        if (a) {
            int32_t back[5][7];
            CHECK_OK(zarr_read_region(a, start, shape, back, sizeof back));
            CHECK(memcmp(back, data, sizeof data) == 0);
            CHECK_OK(zarr_close(a));
        }
    }

    /* v2 filters, the numcodecs compressors, datetimes, unicode and structured types convert (to the
       numcodecs.* codec names and the extension data types); the result opens as Zarr v3 */
    for (i = 0; i < sizeof converted / sizeof converted[0]; i++) {
        zarr_array *cv = NULL;
        int fmt = 0;
        snprintf(rel, sizeof rel, "%s/.zarray", converted[i].dir);
        put_text(rel, converted[i].zarray);
        CHECK_OK(zarr_convert_v2_to_v3(path_in(converted[i].dir)));
        snprintf(rel, sizeof rel, "%s/zarr.json", converted[i].dir);
        CHECK(t_exists(path_in(rel)));
        CHECK_OK(zarr_open(path_in(converted[i].dir), ZARR_READ, &cv));
        CHECK_OK(zarr_array_zarr_format(cv, &fmt));
        CHECK(fmt == 3);
        CHECK_OK(zarr_close(cv));
    }
    /* refusals: UNSUPPORTED naming the reason; .zarray unchanged, no zarr.json */
    for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        snprintf(rel, sizeof rel, "%s/.zarray", refused[i].dir);
        put_text(rel, refused[i].zarray);
        before = slurp(rel, &nb);
        CHECK_STATUS(zarr_convert_v2_to_v3(path_in(refused[i].dir)), ZARR_ERR_UNSUPPORTED);
        CHECK_MSG(refused[i].why);
        CHECK(before && file_equals(rel, before, nb));
        snprintf(rel, sizeof rel, "%s/zarr.json", refused[i].dir);
        CHECK(!t_exists(path_in(rel)));
        free(before);
    }
    /* NOT_FOUND: nothing there, an empty directory, a v2 group, a v1 array; EXISTS: a v3 array */
    CHECK_STATUS(zarr_convert_v2_to_v3(path_in("cv_nothing_here")), ZARR_ERR_NOT_FOUND);
    mkdir(path_in("cv_empty"), 0777);
    CHECK_STATUS(zarr_convert_v2_to_v3(path_in("cv_empty")), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_convert_v2_to_v3(path_in("g2")), ZARR_ERR_NOT_FOUND);
    CHECK(t_exists(path_in("g2/.zgroup")) && !t_exists(path_in("g2/zarr.json")));
    CHECK_STATUS(zarr_convert_v2_to_v3(path_in("fmt1")), ZARR_ERR_NOT_FOUND);
    CHECK(t_exists(path_in("fmt1/meta")) && !t_exists(path_in("fmt1/zarr.json")));
    CHECK_STATUS(zarr_convert_v2_to_v3(path_in("fmt3")), ZARR_ERR_EXISTS);
    /* a .zarray that is not JSON: METADATA, untouched */
    put_text("cv_badjson/.zarray", "{\"zarr_format\": 2, \"shape\": [");
    CHECK_STATUS(zarr_convert_v2_to_v3(path_in("cv_badjson")), ZARR_ERR_METADATA);
    CHECK(!t_exists(path_in("cv_badjson/zarr.json")));
    /* bad arguments */
    CHECK_STATUS(zarr_convert_v2_to_v3(NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_convert_v2_to_v3(""), ZARR_ERR_INVALID_ARGUMENT);
}

int main(void) {
    g_dir = t_mkdtemp("v2");
    test_group_formats();
    test_array_formats();
    test_struct_fields();
    test_struct_write();
    test_v2_reads();
    test_v2_write_layout();
    test_convert();
    return t_finish("test_v2", g_dir);
}
