/* Region reads and writes: exact data through every codec, chunk files on disk, fill values, edge
 * cases (edge chunks, 0-d, zero extents), chunk deletion, thread settings and concurrent use.
 * Expected values and expected on-disk bytes are computed here, independently of the library. */
#include "test_util.h"

#include <pthread.h>
#include <stdint.h>

/* Chunk key encodings: 0 default "/", 1 default ".", 2 v2 ".", 3 v2 "/". */
static const char *const CKE[] = {
    "{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}}",
    "{\"name\":\"default\",\"configuration\":{\"separator\":\".\"}}",
    "{\"name\":\"v2\",\"configuration\":{\"separator\":\".\"}}",
    "{\"name\":\"v2\",\"configuration\":{\"separator\":\"/\"}}",
};

static const char *meta_cke(const char *shape, const char *dtype, const char *chunks, const char *fill,
                            const char *codecs, int cke) {
    static char buf[8192];
    snprintf(buf, sizeof buf,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":%s,\"data_type\":\"%s\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":%s}},"
             "\"chunk_key_encoding\":%s,\"fill_value\":%s,\"codecs\":%s,\"attributes\":{}}",
             shape, dtype, chunks, CKE[cke], fill, codecs);
    return buf;
}

static const char *meta(const char *shape, const char *dtype, const char *chunks, const char *fill,
                        const char *codecs) {
    return meta_cke(shape, dtype, chunks, fill, codecs, 0);
}

#define BYTES_LE "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}"
#define BYTES_BE "{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}"
#define RAW_LE "[" BYTES_LE "]"
#define RAW_BE "[" BYTES_BE "]"
#define RAW_NOENDIAN "[{\"name\":\"bytes\"}]"
#define GZIP "[" BYTES_LE ",{\"name\":\"gzip\",\"configuration\":{\"level\":1}}]"

/* The file of chunk `idx` of the array in directory `arr` under chunk key encoding `cke`. */
static const char *chunk_file(const char *arr, int cke, const uint64_t *idx, size_t rank) {
    static char bufs[4][4096];
    static int next;
    char *b = bufs[next++ % 4];
    char sep = (cke == 0 || cke == 3) ? '/' : '.';
    size_t d, n = (size_t)snprintf(b, sizeof bufs[0], "%s/%s%s", g_dir, arr, cke <= 1 ? "/c" : "/");
    if (rank == 0 && cke >= 2) n += (size_t)snprintf(b + n, sizeof bufs[0] - n, "0");
    for (d = 0; d < rank; d++) {
        if (cke <= 1 || d > 0) b[n++] = sep;
        n += (size_t)snprintf(b + n, sizeof bufs[0] - n, "%llu", (unsigned long long)idx[d]);
    }
    b[n] = 0;
    return b;
}

static const char *chunk2(const char *arr, uint64_t i, uint64_t j) {
    uint64_t idx[2];
    idx[0] = i;
    idx[1] = j;
    return chunk_file(arr, 0, idx, 2);
}

/* Number of files named ".*.tmp" (the store's temporary files) below `path`. */
static int count_temp_files(const char *path) {
    DIR *d = opendir(path);
    struct dirent *e;
    int n = 0;
    if (!d) return 0;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char *child;
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        child = malloc(strlen(path) + len + 2);
        if (!child) break;
        sprintf(child, "%s/%s", path, e->d_name);
        if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode)) n += count_temp_files(child);
        else if (len > 4 && !strcmp(e->d_name + len - 4, ".tmp")) n++;
        free(child);
    }
    closedir(d);
    return n;
}

static zarr_array *create(const char *rel, const char *json) {
    zarr_array *a = NULL;
    CHECK_OK(zarr_create(path_in(rel), json, &a));
    if (!a) fprintf(stderr, "  could not create %s from %s\n", rel, json);
    return a;
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 32);
}

/* ---- independent checksum implementations (to verify and to forge stored chunks) ---- */
static uint32_t crc32_generic(const unsigned char *p, size_t n, uint32_t poly) {
    uint32_t c = 0xffffffffu;
    size_t i;
    int k;
    for (i = 0; i < n; i++) {
        c ^= p[i];
        for (k = 0; k < 8; k++) c = (c >> 1) ^ (poly & (0u - (c & 1u)));
    }
    return ~c;
}
static uint32_t crc32_ieee(const unsigned char *p, size_t n) { return crc32_generic(p, n, 0xEDB88320u); }
static uint32_t crc32c(const unsigned char *p, size_t n) { return crc32_generic(p, n, 0x82F63B78u); }
static void le32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}
static uint32_t rd_le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ================================================================================================ */
/* 1. Whole array and every sub-box of a 10x12 int32 array (4x5 chunks), through many codec chains. */

static int32_t fval(uint64_t i, uint64_t j) { return (int32_t)(i * 1000 + j * 7) - 5000; }

/* Reads every box (every `stride`-th one when stride > 1) and compares it with fval / the fill value. */
static void exhaustive_boxes(zarr_array *a, int written, unsigned stride, const char *what) {
    uint64_t s0, s1, e0, e1;
    long bad = 0, calls = 0;
    int32_t buf[120];
    for (s0 = 0; s0 <= 10; s0++)
        for (e0 = s0; e0 <= 10; e0++)
            for (s1 = 0; s1 <= 12; s1++)
                for (e1 = s1; e1 <= 12; e1++) {
                    uint64_t start[2], count[2], i, j;
                    size_t n = (size_t)((e0 - s0) * (e1 - s1));
                    zarr_status st;
                    if (stride > 1 && (s0 * 7 + e0 * 5 + s1 * 3 + e1) % stride != 0) continue;
                    start[0] = s0;
                    start[1] = s1;
                    count[0] = e0 - s0;
                    count[1] = e1 - s1;
                    memset(buf, 0x5a, sizeof buf);
                    st = zarr_read_region(a, start, count, n ? buf : NULL, n * 4);
                    calls++;
                    if (st != ZARR_OK) {
                        if (bad++ < 3) fprintf(stderr, "  %s: read [%llu,%llu]+[%llu,%llu] -> %s: %s\n", what,
                                               (unsigned long long)s0, (unsigned long long)s1,
                                               (unsigned long long)count[0], (unsigned long long)count[1],
                                               zarr_status_name(st), zarr_last_error());
                        continue;
                    }
                    for (i = 0; i < count[0]; i++)
                        for (j = 0; j < count[1]; j++) {
                            int32_t want = written ? fval(s0 + i, s1 + j) : -1;
                            if (buf[i * count[1] + j] != want) {
                                if (bad++ < 3) fprintf(stderr, "  %s: (%llu,%llu) is %d, expected %d\n", what,
                                                       (unsigned long long)(s0 + i), (unsigned long long)(s1 + j),
                                                       (int)buf[i * count[1] + j], (int)want);
                                i = count[0];
                                break;
                            }
                        }
                    /* nothing written past the region */
                    if (n < 120 && buf[n] != 0x5a5a5a5a && bad++ < 3) fprintf(stderr, "  %s: overrun\n", what);
                }
    t_checks++;
    if (bad) {
        t_failures++;
        fprintf(stderr, "test_io.c: %s: %ld of %ld box reads wrong\n", what, bad, calls);
    }
}

static void test_codec_chains(void) {
    static const char *const chains[] = {
        RAW_LE,
        RAW_BE,
        GZIP,
        "[" BYTES_BE ",{\"name\":\"gzip\",\"configuration\":{\"level\":9}}]",
        "[" BYTES_LE ",{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":true}}]",
        "[" BYTES_LE ",{\"name\":\"zstd\",\"configuration\":{\"level\":-5,\"checksum\":false}}]",
        "[" BYTES_LE ",{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":\"shuffle\","
        "\"typesize\":4,\"blocksize\":0}}]",
        "[" BYTES_LE ",{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zstd\",\"clevel\":3,\"shuffle\":\"bitshuffle\","
        "\"typesize\":4,\"blocksize\":0}}]",
        "[" BYTES_BE ",{\"name\":\"blosc\",\"configuration\":{\"cname\":\"blosclz\",\"clevel\":9,\"shuffle\":\"noshuffle\","
        "\"typesize\":4,\"blocksize\":0}}]",
        "[" BYTES_LE ",{\"name\":\"blosc\",\"configuration\":{\"cname\":\"zlib\",\"clevel\":1,\"shuffle\":\"shuffle\","
        "\"typesize\":4,\"blocksize\":0}}]",
        "[" BYTES_LE ",{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4hc\",\"clevel\":4,\"shuffle\":\"bitshuffle\","
        "\"typesize\":4,\"blocksize\":0}}]",
        "[" BYTES_LE ",{\"name\":\"blosc\",\"configuration\":{\"cname\":\"snappy\",\"clevel\":5,\"shuffle\":\"shuffle\","
        "\"typesize\":4,\"blocksize\":0}}]",
        "[" BYTES_LE ",{\"name\":\"crc32c\"}]",
        "[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}," BYTES_LE "]",
        "[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}," BYTES_BE
        ",{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":\"shuffle\",\"typesize\":4,"
        "\"blocksize\":0}},{\"name\":\"crc32c\"}]",
        "[{\"name\":\"transpose\",\"configuration\":{\"order\":[0,1]}}," BYTES_LE
        ",{\"name\":\"gzip\",\"configuration\":{\"level\":5}},{\"name\":\"zstd\",\"configuration\":{\"level\":1,"
        "\"checksum\":true}},{\"name\":\"crc32c\"}]",
    };
    size_t c;
    for (c = 0; c < sizeof chains / sizeof chains[0]; c++) {
        char rel[64], what[64];
        int32_t whole[120];
        uint64_t start[2] = {0, 0}, count[2] = {10, 12}, i, j;
        zarr_array *a;
        snprintf(rel, sizeof rel, "chains/%zu", c);
        snprintf(what, sizeof what, "codec chain %zu", c);
        a = create(rel, meta("[10,12]", "int32", "[4,5]", "-1", chains[c]));
        if (!a) continue;
        exhaustive_boxes(a, 0, 37, what); /* nothing stored: the fill value everywhere */
        for (i = 0; i < 10; i++)
            for (j = 0; j < 12; j++) whole[i * 12 + j] = fval(i, j);
        CHECK_OK(zarr_write_region(a, start, count, whole, sizeof whole));
        CHECK(t_exists(chunk2(rel, 0, 0)) && t_exists(chunk2(rel, 2, 2)));
        CHECK(!t_exists(chunk2(rel, 3, 0)) && !t_exists(chunk2(rel, 0, 3))); /* outside the grid */
        exhaustive_boxes(a, 1, c < 4 || c == 13 ? 1 : 5, what); /* all boxes for the bare/gzip/transpose ones */
        CHECK_OK(zarr_close(a));
        /* A fresh handle reads the same. */
        a = NULL;
        CHECK_OK(zarr_open(path_in(rel), ZARR_READ, &a));
        if (a) {
            memset(whole, 0, sizeof whole);
            CHECK_OK(zarr_read_region(a, start, count, whole, sizeof whole));
            for (i = 0; i < 120 && whole[i] == fval(i / 12, i % 12); i++) {}
            CHECK(i == 120);
            CHECK_OK(zarr_close(a));
        }
    }
}

/* ================================================================================================ */
/* 2. Random writes against a model (read-modify-write, fill-value chunks deleted), per key encoding. */

static void test_random_writes(int cke, const char *codecs, const char *rel) {
    enum { R = 13, C = 11, CR = 4, CC = 3, GR = (R + CR - 1) / CR, GC = (C + CC - 1) / CC };
    static uint16_t model[R * C], got[R * C], buf[R * C];
    const uint16_t FILL = 7;
    uint64_t all_start[2] = {0, 0}, all_count[2] = {R, C};
    int it, bad_data = 0, bad_files = 0;
    size_t k;
    zarr_array *a = create(rel, meta_cke("[13,11]", "uint16", "[4,3]", "7", codecs, cke));
    if (!a) return;
    for (k = 0; k < R * C; k++) model[k] = FILL;
    for (it = 0; it < 150; it++) {
        uint64_t start[2], count[2], i, j, gi, gj;
        int mode = (int)(rnd() % 10);
        start[0] = rnd() % (R + 1);
        start[1] = rnd() % (C + 1);
        count[0] = rnd() % (R - start[0] + 1);
        count[1] = rnd() % (C - start[1] + 1);
        for (i = 0; i < count[0]; i++)
            for (j = 0; j < count[1]; j++) {
                uint16_t v = mode < 3 ? FILL : mode < 5 ? (uint16_t)(rnd() % 2 ? FILL : rnd()) : (uint16_t)rnd();
                buf[i * count[1] + j] = v;
                model[(start[0] + i) * C + start[1] + j] = v;
            }
        CHECK_OK(zarr_write_region(a, start, count, (count[0] * count[1] != 0) ? buf : NULL,
                                   (size_t)(count[0] * count[1] * 2)));
        memset(got, 0, sizeof got);
        CHECK_OK(zarr_read_region(a, all_start, all_count, got, sizeof got));
        if (memcmp(got, model, sizeof got) != 0 && bad_data++ < 3)
            fprintf(stderr, "  %s: data differs from the model after write %d\n", rel, it);
        /* A chunk file exists exactly when its part of the array is not all fill value. */
        for (gi = 0; gi < GR; gi++)
            for (gj = 0; gj < GC; gj++) {
                uint64_t idx[2];
                int nonfill = 0;
                idx[0] = gi;
                idx[1] = gj;
                for (i = gi * CR; i < (gi + 1) * CR && i < R; i++)
                    for (j = gj * CC; j < (gj + 1) * CC && j < C; j++) nonfill |= model[i * C + j] != FILL;
                if (nonfill != t_exists(chunk_file(rel, cke, idx, 2)) && bad_files++ < 3)
                    fprintf(stderr, "  %s: after write %d chunk file %s %s\n", rel, it, chunk_file(rel, cke, idx, 2),
                            nonfill ? "is missing" : "should have been deleted");
            }
    }
    CHECK(bad_data == 0);
    CHECK(bad_files == 0);
    CHECK(count_temp_files(path_in(rel)) == 0); /* atomic writes leave no temporary files behind */
    CHECK_OK(zarr_close(a));
}

/* Handles do not cache chunks: a write through one is seen by another open handle; ZARR_FSYNC=1
 * (flush before and after each rename) writes the same data. */
static void test_coherence_and_fsync(void) {
    zarr_array *w, *r = NULL;
    uint64_t st[2] = {0, 0}, ct[2] = {4, 6};
    int32_t v[24], back[24];
    size_t k;
    const char *old = getenv("ZARR_FSYNC");
    char *saved = old ? strdup(old) : NULL;
    setenv("ZARR_FSYNC", "1", 1);
    w = create("coherent", meta("[4,6]", "int32", "[2,3]", "0", GZIP));
    if (saved) setenv("ZARR_FSYNC", saved, 1);
    else unsetenv("ZARR_FSYNC");
    free(saved);
    if (!w) return;
    CHECK_OK(zarr_open(path_in("coherent"), ZARR_READ, &r));
    for (k = 0; k < 24; k++) v[k] = (int32_t)k + 1;
    CHECK_OK(zarr_write_region(w, st, ct, v, sizeof v));
    if (r) {
        CHECK_OK(zarr_read_region(r, st, ct, back, sizeof back));
        CHECK(memcmp(back, v, sizeof v) == 0);
        for (k = 0; k < 24; k++) v[k] = k % 5 ? (int32_t)k * -3 : 0;
        CHECK_OK(zarr_write_region(w, st, ct, v, sizeof v));
        CHECK_OK(zarr_read_region(r, st, ct, back, sizeof back));
        CHECK(memcmp(back, v, sizeof v) == 0);
        CHECK_OK(zarr_close(r));
    }
    CHECK(count_temp_files(path_in("coherent")) == 0);
    CHECK_OK(zarr_close(w));
}

/* ================================================================================================ */
/* 3. Chunk key encodings: the names of chunk files on disk. */

static void test_chunk_keys(void) {
    static const char *const names[4][2] = {
        {"keys/slash/c/1/1", "keys/slash/c/0/0"},
        {"keys/dot/c.1.1", "keys/dot/c.0.0"},
        {"keys/v2dot/1.1", "keys/v2dot/0.0"},
        {"keys/v2slash/1/1", "keys/v2slash/0/0"},
    };
    static const char *const dirs[4] = {"keys/slash", "keys/dot", "keys/v2dot", "keys/v2slash"};
    static const char *const dirs0[4] = {"keys0/slash", "keys0/dot", "keys0/v2dot", "keys0/v2slash"};
    static const char *const names0[4] = {"keys0/slash/c", "keys0/dot/c", "keys0/v2dot/0", "keys0/v2slash/0"};
    int e;
    /* Without a configuration the separators default to "/" (default) and "." (v2). */
    {
        static const char *const encs[2] = {"{\"name\":\"default\"}", "{\"name\":\"v2\"}"};
        static const char *const files[2] = {"keys/noconf_default/c/1/0", "keys/noconf_v2/1.0"};
        static const char *const dirs_nc[2] = {"keys/noconf_default", "keys/noconf_v2"};
        for (e = 0; e < 2; e++) {
            char json[1024];
            zarr_array *a;
            uint64_t start[2] = {3, 1}, count[2] = {1, 1};
            uint8_t v = 1;
            snprintf(json, sizeof json,
                     "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[4,4],\"data_type\":\"uint8\","
                     "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2,2]}},"
                     "\"chunk_key_encoding\":%s,\"fill_value\":0,\"codecs\":[{\"name\":\"bytes\"}]}",
                     encs[e]);
            a = create(dirs_nc[e], json);
            if (!a) continue;
            CHECK_OK(zarr_write_region(a, start, count, &v, 1));
            CHECK(t_exists(path_in(files[e])));
            CHECK_OK(zarr_close(a));
        }
    }
    for (e = 0; e < 4; e++) {
        uint64_t start[2] = {2, 3}, count[2] = {1, 1}, s2[2] = {0, 0}, c2[2] = {4, 4};
        uint8_t v = 42, all[16], scalar = 9;
        size_t k;
        zarr_array *a = create(dirs[e], meta_cke("[4,4]", "uint8", "[2,2]", "0", RAW_NOENDIAN, e));
        if (a) {
            CHECK_OK(zarr_write_region(a, start, count, &v, 1));
            CHECK(t_exists(path_in(names[e][0])));
            CHECK(!t_exists(path_in(names[e][1])));
            /* the element landed at offset (0*2+1) of chunk (1,1), stored raw */
            {
                size_t n = 0;
                unsigned char *f = t_read_file(path_in(names[e][0]), &n);
                CHECK(f && n == 4 && f[0] == 0 && f[1] == 42 && f[2] == 0 && f[3] == 0);
                free(f);
            }
            CHECK_OK(zarr_read_region(a, s2, c2, all, sizeof all));
            for (k = 0; k < 16 && all[k] == (k == 11 ? 42 : 0); k++) {}
            CHECK(k == 16);
            v = 0; /* back to the fill value: the chunk file goes */
            CHECK_OK(zarr_write_region(a, start, count, &v, 1));
            CHECK(!t_exists(path_in(names[e][0])));
            CHECK_OK(zarr_close(a));
        }
        /* 0-d arrays: the single chunk is "c" (default) or "0" (v2). */
        a = create(dirs0[e], meta_cke("[]", "uint8", "[]", "1", RAW_NOENDIAN, e));
        if (a) {
            CHECK_OK(zarr_write_region(a, NULL, NULL, &scalar, 1));
            CHECK(t_exists(path_in(names0[e])));
            scalar = 0;
            CHECK_OK(zarr_read_region(a, NULL, NULL, &scalar, 1));
            CHECK(scalar == 9);
            CHECK_OK(zarr_close(a));
        }
    }
}

/* ================================================================================================ */
/* 4. Edge chunks, a chunk larger than the array, 0-d arrays, zero extents. */

static void check_file(const char *path, const unsigned char *want, size_t n, int line) {
    size_t got_n = 0;
    unsigned char *got = t_read_file(path, &got_n);
    t_checks++;
    if (!got || got_n != n || memcmp(got, want, n) != 0) {
        size_t k;
        t_failures++;
        fprintf(stderr, "test_io.c:%d: %s has %zu bytes, expected %zu:", line, path, got ? got_n : 0, n);
        for (k = 0; got && k < got_n && k < 32; k++) fprintf(stderr, " %02x", got[k]);
        fprintf(stderr, "\n");
    }
    free(got);
}

static void test_edges(void) {
    zarr_array *a;
    uint64_t s1[1] = {0}, c1[1] = {5};
    uint8_t five[5] = {1, 2, 3, 4, 5}, got5[5];

    /* 1-d edge chunk: stored at full chunk size, padded with the fill value. */
    a = create("edge1", meta("[5]", "uint8", "[4]", "9", RAW_NOENDIAN));
    if (a) {
        static const unsigned char c0[4] = {1, 2, 3, 4}, c1f[4] = {5, 9, 9, 9};
        CHECK_OK(zarr_write_region(a, s1, c1, five, 5));
        check_file(path_in("edge1/c/0"), c0, 4, __LINE__);
        check_file(path_in("edge1/c/1"), c1f, 4, __LINE__);
        CHECK_OK(zarr_read_region(a, s1, c1, got5, 5));
        CHECK(memcmp(got5, five, 5) == 0);
        /* Writing the fill value over the part of the edge chunk inside the array deletes it. */
        s1[0] = 4;
        c1[0] = 1;
        got5[0] = 9;
        CHECK_OK(zarr_write_region(a, s1, c1, got5, 1));
        CHECK(!t_exists(path_in("edge1/c/1")));
        CHECK(t_exists(path_in("edge1/c/0")));
        CHECK_OK(zarr_close(a));
    }

    /* 2-d edge chunks of a 3x3 array in 2x2 chunks. */
    a = create("edge2", meta("[3,3]", "uint8", "[2,2]", "0", RAW_NOENDIAN));
    if (a) {
        uint64_t st[2] = {0, 0}, ct[2] = {3, 3};
        uint8_t v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, back[9];
        static const unsigned char k00[4] = {1, 2, 4, 5}, k01[4] = {3, 0, 6, 0}, k10[4] = {7, 8, 0, 0},
                                   k11[4] = {9, 0, 0, 0};
        CHECK_OK(zarr_write_region(a, st, ct, v, 9));
        check_file(chunk2("edge2", 0, 0), k00, 4, __LINE__);
        check_file(chunk2("edge2", 0, 1), k01, 4, __LINE__);
        check_file(chunk2("edge2", 1, 0), k10, 4, __LINE__);
        check_file(chunk2("edge2", 1, 1), k11, 4, __LINE__);
        CHECK_OK(zarr_read_region(a, st, ct, back, 9));
        CHECK(memcmp(back, v, 9) == 0);
        CHECK_OK(zarr_close(a));
    }

    /* One chunk larger than the whole array. */
    a = create("bigchunk", meta("[3,2]", "int16", "[10,10]", "-2", RAW_LE));
    if (a) {
        uint64_t st[2] = {0, 0}, ct[2] = {3, 2}, s2[2] = {1, 1}, c2[2] = {2, 1};
        int16_t v[6] = {10, -11, 12, -13, 14, -15}, back[6], two[2];
        unsigned char want[200];
        size_t k;
        for (k = 0; k < 100; k++) { /* little-endian int16 -2 = fe ff */
            want[2 * k] = 0xfe;
            want[2 * k + 1] = 0xff;
        }
        for (k = 0; k < 6; k++) { /* element (i,j) of the array sits at (i*10+j) of the chunk */
            size_t off = 2 * ((k / 2) * 10 + k % 2);
            want[off] = (unsigned char)(uint16_t)v[k];
            want[off + 1] = (unsigned char)((uint16_t)v[k] >> 8);
        }
        CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
        check_file(chunk2("bigchunk", 0, 0), want, 200, __LINE__);
        CHECK_OK(zarr_read_region(a, st, ct, back, sizeof back));
        CHECK(memcmp(back, v, sizeof v) == 0);
        CHECK_OK(zarr_read_region(a, s2, c2, two, sizeof two));
        CHECK(two[0] == -13 && two[1] == -15);
        CHECK_OK(zarr_close(a));
    }

    /* 0-d array: one element, chunk key "c". */
    a = create("scalar", meta("[]", "float64", "[]", "2.5", RAW_LE));
    if (a) {
        double x = 0, y = 7.25;
        unsigned char le[8];
        uint64_t bits;
        int k;
        CHECK_OK(zarr_read_region(a, NULL, NULL, &x, sizeof x));
        CHECK(x == 2.5);
        CHECK(!t_exists(path_in("scalar/c")));
        CHECK_OK(zarr_write_region(a, NULL, NULL, &y, sizeof y));
        memcpy(&bits, &y, 8);
        for (k = 0; k < 8; k++) le[k] = (unsigned char)(bits >> (8 * k));
        check_file(path_in("scalar/c"), le, 8, __LINE__);
        x = 0;
        CHECK_OK(zarr_read_region(a, NULL, NULL, &x, sizeof x));
        CHECK(x == 7.25);
        y = 2.5;
        CHECK_OK(zarr_write_region(a, NULL, NULL, &y, sizeof y));
        CHECK(!t_exists(path_in("scalar/c")));
        CHECK_STATUS(zarr_read_region(a, NULL, NULL, &x, 4), ZARR_ERR_BUFFER_SIZE);
        CHECK_OK(zarr_close(a));
    }

    /* Zero-length dimension: every region is empty; nothing is stored. */
    a = create("empty", meta("[0,5]", "int32", "[2,2]", "0", RAW_LE));
    if (a) {
        uint64_t st[2] = {0, 0}, ct[2] = {0, 5}, shape[2] = {9, 9};
        int32_t dummy = 5;
        CHECK_OK(zarr_array_shape(a, shape, 2));
        CHECK(shape[0] == 0 && shape[1] == 5);
        CHECK_OK(zarr_read_region(a, st, ct, NULL, 0));
        CHECK_OK(zarr_write_region(a, st, ct, NULL, 0));
        CHECK_OK(zarr_read_region(a, st, ct, &dummy, 0)); /* a non-NULL buffer of 0 bytes is fine too */
        st[1] = 5;
        ct[1] = 0;
        CHECK_OK(zarr_read_region(a, st, ct, NULL, 0));
        CHECK_STATUS(zarr_read_region(a, st, ct, &dummy, 4), ZARR_ERR_BUFFER_SIZE);
        st[0] = 1;
        CHECK_STATUS(zarr_read_region(a, st, ct, NULL, 0), ZARR_ERR_OUT_OF_BOUNDS);
        CHECK(!t_exists(path_in("empty/c")));
        CHECK_OK(zarr_close(a));
    }

    /* Zero counts in a non-empty array read and write nothing. */
    a = create("zerocount", meta("[10,12]", "int32", "[4,5]", "3", RAW_LE));
    if (a) {
        uint64_t st[2] = {3, 4}, ct[2] = {0, 2}, s_end[2] = {10, 12}, c_end[2] = {0, 0};
        CHECK_OK(zarr_write_region(a, st, ct, NULL, 0));
        CHECK_OK(zarr_read_region(a, st, ct, NULL, 0));
        CHECK_OK(zarr_write_region(a, s_end, c_end, NULL, 0)); /* start == shape, empty: allowed */
        CHECK_OK(zarr_read_region(a, s_end, c_end, NULL, 0));
        CHECK(!t_exists(path_in("zerocount/c")));
        CHECK_OK(zarr_close(a));
    }
}

/* ================================================================================================ */
/* 5. Missing chunks read as the fill value, bit for bit; values next to the fill value stay exact. */

static void test_fill_values(void) {
    struct {
        const char *dtype, *fill, *codecs;
        size_t size;
        unsigned char bytes[16];
    } cases[] = {
        {"float32", "\"NaN\"", RAW_LE, 4, {0}},
        {"float64", "-0.0", RAW_LE, 8, {0}},
        {"float32", "\"0x7fc00001\"", RAW_BE, 4, {0}},
        {"float16", "\"Infinity\"", RAW_LE, 2, {0}},
        {"complex64", "[1.5,-2.5]", GZIP, 8, {0}},
        {"complex128", "[\"NaN\",\"-Infinity\"]", RAW_BE, 16, {0}},
        {"bool", "true", RAW_NOENDIAN, 1, {1}},
        {"int64", "-9223372036854775808", RAW_LE, 8, {0}},
        {"uint64", "18446744073709551615", RAW_BE, 8, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
        {"r24", "[1,2,3]", RAW_NOENDIAN, 3, {1, 2, 3}},
        {"int8", "-128", RAW_NOENDIAN, 1, {0x80}},
    };
    uint32_t u32;
    uint64_t u64;
    uint16_t u16;
    float f;
    size_t c;
    u32 = 0x7fc00000u;
    memcpy(cases[0].bytes, &u32, 4);
    u64 = 0x8000000000000000ull;
    memcpy(cases[1].bytes, &u64, 8);
    u32 = 0x7fc00001u;
    memcpy(cases[2].bytes, &u32, 4);
    u16 = 0x7c00;
    memcpy(cases[3].bytes, &u16, 2);
    f = 1.5f;
    memcpy(cases[4].bytes, &f, 4);
    f = -2.5f;
    memcpy(cases[4].bytes + 4, &f, 4);
    u64 = 0x7ff8000000000000ull;
    memcpy(cases[5].bytes, &u64, 8);
    u64 = 0xfff0000000000000ull;
    memcpy(cases[5].bytes + 8, &u64, 8);
    u64 = 0x8000000000000000ull;
    memcpy(cases[7].bytes, &u64, 8);

    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char rel[64];
        unsigned char buf[15 * 16], mine[4 * 16];
        uint64_t st[2] = {0, 0}, ct[2] = {5, 3}, ws[2] = {1, 1}, wc[2] = {2, 2}, i, j;
        size_t es = cases[c].size, k;
        int bad = 0;
        zarr_array *a;
        snprintf(rel, sizeof rel, "fill/%zu", c);
        a = create(rel, meta("[5,3]", cases[c].dtype, "[2,2]", cases[c].fill, cases[c].codecs));
        if (!a) continue;
        CHECK_OK(zarr_read_region(a, st, ct, buf, 15 * es));
        for (k = 0; k < 15; k++) bad |= memcmp(buf + k * es, cases[c].bytes, es) != 0;
        if (bad) fprintf(stderr, "  fill %s %s: missing chunks do not read as the fill value\n", cases[c].dtype,
                         cases[c].fill);
        CHECK(!bad);
        /* Write a 2x2 block of other values across four chunks; the rest stays fill. */
        for (k = 0; k < 4 * es; k++) mine[k] = (unsigned char)(cases[c].bytes[k % es] ^ (k % es == 0 ? 1 : 0));
        CHECK_OK(zarr_write_region(a, ws, wc, mine, 4 * es));
        CHECK_OK(zarr_read_region(a, st, ct, buf, 15 * es));
        bad = 0;
        for (i = 0; i < 5; i++)
            for (j = 0; j < 3; j++) {
                int inside = i >= 1 && i <= 2 && j >= 1 && j <= 2;
                const unsigned char *want = inside ? mine : cases[c].bytes;
                bad |= memcmp(buf + (i * 3 + j) * es, want, es) != 0;
            }
        if (bad) fprintf(stderr, "  fill %s %s: wrong data after a partial write\n", cases[c].dtype, cases[c].fill);
        CHECK(!bad);
        CHECK(!t_exists(chunk2(rel, 2, 0)) && !t_exists(chunk2(rel, 2, 1))); /* never written */
        CHECK(t_exists(chunk2(rel, 0, 0)) && t_exists(chunk2(rel, 1, 1)));
        CHECK_OK(zarr_close(a));
    }

    /* Values bitwise different from the fill value must survive exactly (no deletion). */
    {
        zarr_array *a = create("negzero", meta("[4]", "float32", "[4]", "0.0", RAW_LE));
        uint64_t st[1] = {0}, ct[1] = {4};
        uint32_t w[4] = {0x80000000u, 0x80000000u, 0x80000000u, 0x80000000u}, r[4] = {0};
        if (a) {
            CHECK_OK(zarr_write_region(a, st, ct, w, sizeof w));
            CHECK(t_exists(path_in("negzero/c/0")));
            CHECK_OK(zarr_read_region(a, st, ct, r, sizeof r));
            CHECK(memcmp(r, w, sizeof w) == 0);
            CHECK_OK(zarr_close(a));
        }
        a = create("nanpayload", meta("[4]", "float32", "[4]", "\"NaN\"", RAW_LE));
        if (a) {
            uint32_t p[4] = {0x7fc00001u, 0x7fc00000u, 0xffc00000u, 0x7fc00000u};
            uint32_t canon[4] = {0x7fc00000u, 0x7fc00000u, 0x7fc00000u, 0x7fc00000u};
            CHECK_OK(zarr_write_region(a, st, ct, p, sizeof p));
            CHECK(t_exists(path_in("nanpayload/c/0")));
            CHECK_OK(zarr_read_region(a, st, ct, r, sizeof r));
            CHECK(memcmp(r, p, sizeof p) == 0);
            CHECK_OK(zarr_write_region(a, st, ct, canon, sizeof canon));
            CHECK(!t_exists(path_in("nanpayload/c/0")));
            CHECK_OK(zarr_close(a));
        }
    }

    /* Partial writes keep their neighbours (read-modify-write of one chunk). */
    {
        zarr_array *a = create("rmw", meta("[6,6]", "int32", "[6,6]", "0", GZIP));
        uint64_t st[2] = {0, 0}, ct[2] = {6, 6}, ps[2] = {2, 1}, pc[2] = {2, 3};
        int32_t all[36], part[6] = {-1, -2, -3, -4, -5, -6}, back[36];
        size_t k;
        if (a) {
            for (k = 0; k < 36; k++) all[k] = (int32_t)(k * k);
            CHECK_OK(zarr_write_region(a, st, ct, all, sizeof all));
            CHECK_OK(zarr_write_region(a, ps, pc, part, sizeof part));
            CHECK_OK(zarr_read_region(a, st, ct, back, sizeof back));
            for (k = 0; k < 36; k++) {
                size_t i = k / 6, j = k % 6;
                int32_t want = (i >= 2 && i < 4 && j >= 1 && j < 4) ? part[(i - 2) * 3 + (j - 1)] : (int32_t)(k * k);
                if (back[k] != want) break;
            }
            CHECK(k == 36);
            CHECK_OK(zarr_close(a));
        }
    }
}

/* ================================================================================================ */
/* 6. Stored bytes: endianness, transpose layout, gzip/zstd/blosc/crc32c framing, forged chunks. */

static void test_stored_bytes(void) {
    zarr_array *a;
    size_t k;

    /* uint32 little- and big-endian. */
    a = create("le32", meta("[6]", "uint32", "[3]", "0", RAW_LE));
    if (a) {
        uint64_t st[1] = {0}, ct[1] = {6};
        uint32_t v[6] = {0x01020304u, 0xa0b0c0d0u, 5, 6, 7, 0xffffffffu};
        unsigned char want[12];
        for (k = 0; k < 3; k++) le32(want + 4 * k, v[k]);
        CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
        check_file(path_in("le32/c/0"), want, 12, __LINE__);
        CHECK_OK(zarr_close(a));
    }
    a = create("be32", meta("[6]", "uint32", "[3]", "0", RAW_BE));
    if (a) {
        uint64_t st[1] = {0}, ct[1] = {6};
        uint32_t v[6] = {0x01020304u, 0xa0b0c0d0u, 5, 6, 7, 0xffffffffu}, back[6];
        unsigned char want[12], forged[12];
        for (k = 0; k < 3; k++) {
            want[4 * k] = (unsigned char)(v[k] >> 24);
            want[4 * k + 1] = (unsigned char)(v[k] >> 16);
            want[4 * k + 2] = (unsigned char)(v[k] >> 8);
            want[4 * k + 3] = (unsigned char)v[k];
        }
        CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
        check_file(path_in("be32/c/0"), want, 12, __LINE__);
        /* A chunk written by someone else, big-endian: 0x00000100, 0x00010000, 0x01000000 */
        memset(forged, 0, sizeof forged);
        forged[2] = 1;
        forged[5] = 1;
        forged[8] = 1;
        CHECK(t_write_file(path_in("be32/c/1"), forged, 12) == 0);
        CHECK_OK(zarr_read_region(a, st, ct, back, sizeof back));
        CHECK(back[0] == 0x01020304u && back[2] == 5);
        CHECK(back[3] == 0x100u && back[4] == 0x10000u && back[5] == 0x1000000u);
        CHECK_OK(zarr_close(a));
    }
    /* complex64 big-endian: each float swapped on its own; float16 and int64 too. */
    a = create("bec64", meta("[2]", "complex64", "[2]", "[0,0]", RAW_BE));
    if (a) {
        uint64_t st[1] = {0}, ct[1] = {2};
        float v[4] = {1.5f, -2.5f, 3.0f, 0.25f};
        /* 1.5=3fc00000 -2.5=c0200000 3.0=40400000 0.25=3e800000 */
        static const unsigned char want[16] = {0x3f, 0xc0, 0, 0, 0xc0, 0x20, 0, 0, 0x40, 0x40, 0, 0, 0x3e, 0x80, 0, 0};
        CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
        check_file(path_in("bec64/c/0"), want, 16, __LINE__);
        CHECK_OK(zarr_close(a));
    }
    a = create("bef16", meta("[3]", "float16", "[3]", "0", RAW_BE));
    if (a) {
        uint64_t st[1] = {0}, ct[1] = {3};
        uint16_t v[3] = {0x3e00, 0xfc00, 0x0001}, back[3];
        static const unsigned char want[6] = {0x3e, 0x00, 0xfc, 0x00, 0x00, 0x01};
        CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
        check_file(path_in("bef16/c/0"), want, 6, __LINE__);
        CHECK_OK(zarr_read_region(a, st, ct, back, sizeof back));
        CHECK(memcmp(back, v, sizeof v) == 0);
        CHECK_OK(zarr_close(a));
    }
    a = create("bei64", meta("[1]", "int64", "[1]", "0", RAW_BE));
    if (a) {
        uint64_t st[1] = {0}, ct[1] = {1};
        int64_t v = -2; /* ff..fe */
        static const unsigned char want[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
        CHECK_OK(zarr_write_region(a, st, ct, &v, sizeof v));
        check_file(path_in("bei64/c/0"), want, 8, __LINE__);
        CHECK_OK(zarr_close(a));
    }

    /* transpose [1,0]: the stored chunk is the transposed (column-major) layout. */
    a = create("tr2", meta("[4,6]", "uint16", "[4,6]", "0",
                           "[{\"name\":\"transpose\",\"configuration\":{\"order\":[1,0]}}," BYTES_LE "]"));
    if (a) {
        uint64_t st[2] = {0, 0}, ct[2] = {4, 6}, i, j;
        uint16_t v[24], back[24];
        unsigned char want[48];
        for (i = 0; i < 4; i++)
            for (j = 0; j < 6; j++) {
                uint16_t x = (uint16_t)(100 * i + j + 1);
                v[i * 6 + j] = x;
                want[2 * (j * 4 + i)] = (unsigned char)x;
                want[2 * (j * 4 + i) + 1] = (unsigned char)(x >> 8);
            }
        CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
        check_file(chunk2("tr2", 0, 0), want, 48, __LINE__);
        CHECK_OK(zarr_read_region(a, st, ct, back, sizeof back));
        CHECK(memcmp(back, v, sizeof v) == 0);
        CHECK_OK(zarr_close(a));
    }
    /* transpose [2,0,1] of a 2x3x4 chunk: encoded shape (4,2,3), encoded[k][i][j] = decoded[i][j][k]. */
    a = create("tr3", meta("[2,3,4]", "uint8", "[2,3,4]", "0",
                           "[{\"name\":\"transpose\",\"configuration\":{\"order\":[2,0,1]}},{\"name\":\"bytes\"}]"));
    if (a) {
        uint64_t st[3] = {0, 0, 0}, ct[3] = {2, 3, 4}, i, j, m, ps[3] = {1, 1, 1}, pc[3] = {1, 2, 2};
        uint8_t v[24], want[24], back[24], part[4];
        uint64_t idx[3] = {0, 0, 0};
        for (i = 0; i < 2; i++)
            for (j = 0; j < 3; j++)
                for (m = 0; m < 4; m++) {
                    v[(i * 3 + j) * 4 + m] = (uint8_t)(i * 100 + j * 10 + m + 1);
                    want[(m * 2 + i) * 3 + j] = (uint8_t)(i * 100 + j * 10 + m + 1);
                }
        CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
        check_file(chunk_file("tr3", 0, idx, 3), want, 24, __LINE__);
        CHECK_OK(zarr_read_region(a, st, ct, back, sizeof back));
        CHECK(memcmp(back, v, sizeof v) == 0);
        CHECK_OK(zarr_read_region(a, ps, pc, part, sizeof part));
        CHECK(part[0] == 112 && part[1] == 113 && part[2] == 122 && part[3] == 123);
        CHECK_OK(zarr_close(a));
    }

    /* gzip: RFC 1952 header on disk; chunks written by another encoder (stored deflate blocks, and two
     * concatenated members) decode. */
    a = create("gz", meta("[2,10]", "int32", "[2,10]", "0", GZIP));
    if (a) {
        uint64_t st[2] = {0, 0}, ct[2] = {2, 10};
        int32_t v[20], back[20];
        unsigned char raw[80], forged[200];
        size_t n = 0, half, pos;
        unsigned char *f;
        int m;
        for (k = 0; k < 20; k++) v[k] = (int32_t)(k * 3) - 30;
        CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
        f = t_read_file(chunk2("gz", 0, 0), &n);
        CHECK(f && n > 18 && f[0] == 0x1f && f[1] == 0x8b && f[2] == 8);
        /* The gzip trailer holds the CRC-32 and the size of the little-endian chunk bytes. */
        for (k = 0; k < 20; k++) le32(raw + 4 * k, (uint32_t)v[k]);
        CHECK(f && n > 18 && rd_le32(f + n - 8) == crc32_ieee(raw, 80) && rd_le32(f + n - 4) == 80);
        free(f);
        for (m = 1; m <= 3; m++) { /* 1: one member, 2: two members, 3: one member with a file name */
            pos = 0;
            half = m != 2 ? 80 : 36;
            for (k = 0; k < (size_t)(m == 2 ? 2 : 1); k++) {
                const unsigned char *d = raw + (k ? half : 0);
                size_t len = k ? 80 - half : half;
                static const unsigned char hdr[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
                memcpy(forged + pos, hdr, 10);
                if (m == 3) {
                    forged[pos + 3] = 0x08; /* FNAME: a NUL-terminated name follows the header */
                    memcpy(forged + pos + 10, "chunk.bin", 10);
                    pos += 10;
                }
                pos += 10;
                forged[pos++] = 1; /* final stored block */
                forged[pos++] = (unsigned char)len;
                forged[pos++] = (unsigned char)(len >> 8);
                forged[pos++] = (unsigned char)~len;
                forged[pos++] = (unsigned char)(~len >> 8);
                memcpy(forged + pos, d, len);
                pos += len;
                le32(forged + pos, crc32_ieee(d, len));
                le32(forged + pos + 4, (uint32_t)len);
                pos += 8;
            }
            CHECK(t_write_file(chunk2("gz", 0, 0), forged, pos) == 0);
            memset(back, 0, sizeof back);
            CHECK_OK(zarr_read_region(a, st, ct, back, sizeof back));
            CHECK(memcmp(back, v, sizeof v) == 0);
        }
        CHECK_OK(zarr_close(a));
    }

    /* zstd: frame magic and the content-checksum flag follow the configuration; a raw-block frame
     * written by hand decodes. */
    {
        int cs;
        for (cs = 0; cs < 2; cs++) {
            char rel[32], codecs[256];
            snprintf(rel, sizeof rel, "zstd%d", cs);
            snprintf(codecs, sizeof codecs,
                     "[" BYTES_LE ",{\"name\":\"zstd\",\"configuration\":{\"level\":5,\"checksum\":%s}}]",
                     cs ? "true" : "false");
            a = create(rel, meta("[2,10]", "int32", "[2,10]", "0", codecs));
            if (a) {
                uint64_t st[2] = {0, 0}, ct[2] = {2, 10};
                int32_t v[20], back[20];
                unsigned char forged[128];
                size_t n = 0;
                unsigned char *f;
                for (k = 0; k < 20; k++) v[k] = (int32_t)(k * 77) - 3;
                CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
                f = t_read_file(chunk2(rel, 0, 0), &n);
                CHECK(f && n > 5 && f[0] == 0x28 && f[1] == 0xb5 && f[2] == 0x2f && f[3] == 0xfd);
                CHECK(f && n > 5 && ((f[4] >> 2) & 1) == cs); /* Content_Checksum_flag */
                free(f);
                /* magic, FHD (single segment, 1-byte content size), size 80, raw last block of 80 */
                memcpy(forged, "\x28\xb5\x2f\xfd\x20\x50", 6);
                forged[6] = (unsigned char)(1 | (80 << 3));
                forged[7] = (unsigned char)((80 << 3) >> 8);
                forged[8] = 0;
                for (k = 0; k < 20; k++) le32(forged + 9 + 4 * k, (uint32_t)(v[k] + 1));
                CHECK(t_write_file(chunk2(rel, 0, 0), forged, 89) == 0);
                CHECK_OK(zarr_read_region(a, st, ct, back, sizeof back));
                for (k = 0; k < 20 && back[k] == v[k] + 1; k++) {}
                CHECK(k == 20);
                /* No content size (window descriptor 1 KiB), two raw blocks of 40 bytes. */
                memcpy(forged, "\x28\xb5\x2f\xfd\x00\x00", 6);
                forged[6] = (unsigned char)(0 | (40 << 3)); /* not last, raw, 40 bytes: 0x000140 */
                forged[7] = (unsigned char)((40 << 3) >> 8);
                forged[8] = 0;
                for (k = 0; k < 10; k++) le32(forged + 9 + 4 * k, (uint32_t)(v[k] + 2));
                forged[49] = (unsigned char)(1 | (40 << 3)); /* last, raw, 40 bytes */
                forged[50] = (unsigned char)((40 << 3) >> 8);
                forged[51] = 0;
                for (k = 10; k < 20; k++) le32(forged + 52 + 4 * (k - 10), (uint32_t)(v[k] + 2));
                CHECK(t_write_file(chunk2(rel, 0, 0), forged, 92) == 0);
                CHECK_OK(zarr_read_region(a, st, ct, back, sizeof back));
                for (k = 0; k < 20 && back[k] == v[k] + 2; k++) {}
                CHECK(k == 20);
                CHECK_OK(zarr_close(a));
            }
        }
    }

    /* blosc: the frame header records version 2, the typesize and both sizes; a memcpy'd frame
     * written by hand decodes. typesize may be left out (the element size is used). */
    {
        static const char *const cfgs[] = {
            "\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":\"shuffle\",\"typesize\":8,\"blocksize\":0",
            "\"cname\":\"zstd\",\"clevel\":1,\"shuffle\":\"bitshuffle\",\"typesize\":8,\"blocksize\":0",
            "\"cname\":\"blosclz\",\"clevel\":0,\"shuffle\":\"noshuffle\",\"typesize\":8,\"blocksize\":0",
            "\"cname\":\"lz4hc\",\"clevel\":9,\"shuffle\":\"shuffle\",\"typesize\":8,\"blocksize\":256",
            "\"cname\":\"zlib\",\"clevel\":5,\"shuffle\":\"bitshuffle\",\"typesize\":8,\"blocksize\":0",
            "\"cname\":\"snappy\",\"clevel\":5,\"shuffle\":\"noshuffle\",\"typesize\":8,\"blocksize\":0",
            "\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":\"shuffle\"",
        };
        size_t c;
        for (c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
            char rel[32], codecs[512];
            snprintf(rel, sizeof rel, "blosc%zu", c);
            snprintf(codecs, sizeof codecs, "[" BYTES_LE ",{\"name\":\"blosc\",\"configuration\":{%s}}]", cfgs[c]);
            a = create(rel, meta("[50,20]", "float64", "[25,20]", "0", codecs));
            if (a) {
                uint64_t st[2] = {0, 0}, ct[2] = {50, 20};
                static double v[1000], back[1000];
                unsigned char hdr[16];
                size_t n = 0;
                unsigned char *f;
                for (k = 0; k < 1000; k++) v[k] = (double)(k / 7) * 0.5 - 3.0;
                CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
                memset(back, 0, sizeof back);
                CHECK_OK(zarr_read_region(a, st, ct, back, sizeof back));
                CHECK(memcmp(back, v, sizeof v) == 0);
                f = t_read_file(chunk2(rel, 1, 0), &n);
                CHECK(f && n >= 16 && f[0] == 2 && f[3] == 8 && rd_le32(f + 4) == 4000 && rd_le32(f + 12) == n);
                free(f);
                /* A memcpy'd (uncompressed) frame: version 2, lz 1, flags MEMCPYED, typesize 8. */
                hdr[0] = 2;
                hdr[1] = 1;
                hdr[2] = 0x02;
                hdr[3] = 8;
                le32(hdr + 4, 4000);
                le32(hdr + 8, 4000);
                le32(hdr + 12, 4016);
                {
                    static unsigned char frame[4016];
                    double x;
                    memcpy(frame, hdr, 16);
                    for (k = 0; k < 500; k++) {
                        uint64_t bits;
                        int b;
                        x = (double)k * -1.25;
                        memcpy(&bits, &x, 8);
                        for (b = 0; b < 8; b++) frame[16 + 8 * k + b] = (unsigned char)(bits >> (8 * b));
                    }
                    CHECK(t_write_file(chunk2(rel, 0, 0), frame, sizeof frame) == 0);
                }
                CHECK_OK(zarr_read_region(a, st, ct, back, sizeof back));
                for (k = 0; k < 500 && back[k] == (double)k * -1.25; k++) {}
                CHECK(k == 500);
                CHECK(memcmp(back + 500, v + 500, 500 * sizeof(double)) == 0);
                CHECK_OK(zarr_close(a));
            }
        }
    }

    /* crc32c: the raw bytes followed by their CRC-32C, little-endian; a forged chunk with a correct
     * checksum decodes. */
    a = create("crc", meta("[2,3]", "int16", "[2,3]", "0", "[" BYTES_LE ",{\"name\":\"crc32c\"}]"));
    if (a) {
        uint64_t st[2] = {0, 0}, ct[2] = {2, 3};
        int16_t v[6] = {1, -2, 300, -400, 5000, -32768}, back[6];
        unsigned char want[16];
        for (k = 0; k < 6; k++) {
            want[2 * k] = (unsigned char)(uint16_t)v[k];
            want[2 * k + 1] = (unsigned char)((uint16_t)v[k] >> 8);
        }
        le32(want + 12, crc32c(want, 12));
        CHECK(crc32c((const unsigned char *)"123456789", 9) == 0xE3069283u); /* the implementation above */
        CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
        check_file(chunk2("crc", 0, 0), want, 16, __LINE__);
        for (k = 0; k < 12; k++) want[k] = (unsigned char)(k + 1);
        le32(want + 12, crc32c(want, 12));
        CHECK(t_write_file(chunk2("crc", 0, 0), want, 16) == 0);
        CHECK_OK(zarr_read_region(a, st, ct, back, sizeof back));
        CHECK(back[0] == 0x0201 && back[5] == 0x0c0b);
        CHECK_OK(zarr_close(a));
    }
}

/* Types without a byte order (bool, int8, uint8, r<N>) are stored as given even with "endian": "big". */
static void test_no_byte_order(void) {
    static const char *const types[] = {"bool", "int8", "uint8", "r48"};
    static const char *const fills[] = {"false", "0", "0", "[0,0,0,0,0,0]"};
    static const size_t sizes[] = {1, 1, 1, 6};
    size_t t, k;
    for (t = 0; t < 4; t++) {
        char rel[64];
        unsigned char v[12], back[12];
        uint64_t st[1] = {0}, ct[1] = {2};
        zarr_array *a;
        snprintf(rel, sizeof rel, "noorder/%s", types[t]);
        a = create(rel, meta("[2]", types[t], "[2]", fills[t], RAW_BE));
        if (!a) continue;
        for (k = 0; k < 2 * sizes[t]; k++) v[k] = (unsigned char)(t == 0 ? k % 2 : k * 17 + 1);
        CHECK_OK(zarr_write_region(a, st, ct, v, 2 * sizes[t]));
        snprintf(rel + strlen(rel), sizeof rel - strlen(rel), "/c/0");
        check_file(path_in(rel), v, 2 * sizes[t], __LINE__);
        CHECK_OK(zarr_read_region(a, st, ct, back, 2 * sizes[t]));
        CHECK(memcmp(back, v, 2 * sizes[t]) == 0);
        CHECK_OK(zarr_close(a));
    }
}

/* An array whose last chunk reaches past 2^64 - 1 elements (shape near UINT64_MAX): its valid region
 * must still read and write, or the metadata must be refused when it is created. */
static void test_huge_shape(void) {
    zarr_array *a = NULL;
    zarr_status s = zarr_create(path_in("huge"), meta("[18446744073709551615]", "uint8", "[1000]", "3", RAW_NOENDIAN),
                                &a);
    t_checks++;
    if (s != ZARR_OK && s != ZARR_ERR_METADATA && s != ZARR_ERR_UNSUPPORTED) {
        t_failures++;
        fprintf(stderr, "test_io.c: huge shape: create -> %s: %s\n", zarr_status_name(s), zarr_last_error());
    }
    if (a) {
        uint64_t st[1] = {18446744073709551613ull}, ct[1] = {2}, s0[1] = {0}, c0[1] = {2};
        uint8_t v[2] = {7, 8}, r[2] = {0, 0};
        /* regression check (was a library bug): chunk 18446744073709551 ends past 2^64; reads and writes of it fail with
         * ZARR_ERR_INTERNAL ("internal panic: ... region.rs") instead of working. */
        CHECK_OK(zarr_read_region(a, st, ct, r, 2));
        CHECK(r[0] == 3 && r[1] == 3);
        CHECK_OK(zarr_write_region(a, st, ct, v, 2));
        CHECK_OK(zarr_read_region(a, st, ct, r, 2));
        CHECK(r[0] == 7 && r[1] == 8);
        /* the first chunk is unaffected */
        CHECK_OK(zarr_write_region(a, s0, c0, v, 2));
        CHECK_OK(zarr_read_region(a, s0, c0, r, 2));
        CHECK(r[0] == 7 && r[1] == 8);
        CHECK(t_exists(path_in("huge/c/0")));
        CHECK_OK(zarr_close(a));
    }
}

/* ================================================================================================ */
/* 7. Every data type round-trips (random bit patterns; bool 0/1), stored in the declared byte order. */

static void test_all_types(void) {
    static const struct {
        const char *name;
        size_t size, swap; /* element size; unit reversed by a big-endian bytes codec */
    } types[] = {
        {"bool", 1, 1},      {"int8", 1, 1},      {"int16", 2, 2},     {"int32", 4, 4},       {"int64", 8, 8},
        {"uint8", 1, 1},     {"uint16", 2, 2},    {"uint32", 4, 4},    {"uint64", 8, 8},      {"float16", 2, 2},
        {"float32", 4, 4},   {"float64", 8, 8},   {"complex64", 8, 4}, {"complex128", 16, 8}, {"r48", 6, 1},
    };
    size_t t;
    for (t = 0; t < sizeof types / sizeof types[0]; t++) {
        int variant;
        for (variant = 0; variant < 3; variant++) {
            /* 0: little-endian raw, 1: big-endian raw, 2: big-endian + gzip + crc32c */
            char rel[64], codecs[256], fill[128];
            const char *bytes = types[t].swap == 1 ? "{\"name\":\"bytes\"}" : variant ? BYTES_BE : BYTES_LE;
            size_t es = types[t].size, k, b;
            unsigned char v[21 * 16], back[21 * 16], part[4 * 16], chunk[6 * 16];
            uint64_t st[2] = {0, 0}, ct[2] = {7, 3}, ps[2] = {2, 1}, pc[2] = {2, 2};
            zarr_array *a;
            const uint16_t probe = 1;
            int host_big = *(const unsigned char *)&probe == 0;
            /* stored bytes differ from memory when the declared byte order is not the host's */
            int swapped = types[t].swap > 1 && (variant > 0) != host_big;
            snprintf(rel, sizeof rel, "types/%s-%d", types[t].name, variant);
            snprintf(codecs, sizeof codecs, "[%s%s]", bytes,
                     variant == 2 ? ",{\"name\":\"gzip\",\"configuration\":{\"level\":6}},{\"name\":\"crc32c\"}" : "");
            if (!strcmp(types[t].name, "bool")) snprintf(fill, sizeof fill, "false");
            else if (!strncmp(types[t].name, "complex", 7)) snprintf(fill, sizeof fill, "[0,0]");
            else if (types[t].name[0] == 'r') snprintf(fill, sizeof fill, "[0,0,0,0,0,0]");
            else snprintf(fill, sizeof fill, "0");
            a = create(rel, meta("[7,3]", types[t].name, "[3,2]", fill, codecs));
            if (!a) continue;
            for (k = 0; k < 21 * es; k++) v[k] = (unsigned char)rnd();
            if (!strcmp(types[t].name, "bool"))
                for (k = 0; k < 21; k++) v[k] &= 1;
            CHECK_OK(zarr_write_region(a, st, ct, v, 21 * es));
            memset(back, 0, sizeof back);
            CHECK_OK(zarr_read_region(a, st, ct, back, 21 * es));
            if (memcmp(back, v, 21 * es) != 0) fprintf(stderr, "  %s: round trip differs\n", rel);
            CHECK(memcmp(back, v, 21 * es) == 0);
            CHECK_OK(zarr_read_region(a, ps, pc, part, 4 * es));
            CHECK(memcmp(part, v + (2 * 3 + 1) * es, 2 * es) == 0 && memcmp(part + 2 * es, v + (3 * 3 + 1) * es, 2 * es) == 0);
            if (variant < 2) { /* chunk (0,0) on disk: elements (0..3, 0..2) in C order, byte order as declared */
                for (k = 0; k < 6; k++) {
                    const unsigned char *src = v + ((k / 2) * 3 + k % 2) * es;
                    for (b = 0; b < es; b++) {
                        size_t u = types[t].swap, unit = b / u, inner = b % u;
                        chunk[k * es + b] = swapped ? src[unit * u + (u - 1 - inner)] : src[b];
                    }
                }
                check_file(chunk2(rel, 0, 0), chunk, 6 * es, __LINE__);
            }
            CHECK_OK(zarr_close(a));
        }
    }
}

/* complex numbers as (real, imaginary) pairs; float16 as its raw IEEE bits. */
static void test_complex_and_half(void) {
    zarr_array *a = create("c128", meta("[3,2]", "complex128", "[2,2]", "[0,\"NaN\"]", RAW_BE));
    if (a) {
        double v[12], back[4];
        uint64_t st[2] = {0, 0}, ct[2] = {3, 2}, ps[2] = {1, 1}, pc[2] = {2, 1};
        size_t i, j;
        for (i = 0; i < 3; i++)
            for (j = 0; j < 2; j++) {
                v[2 * (i * 2 + j)] = (double)i + 0.5;       /* real */
                v[2 * (i * 2 + j) + 1] = -((double)j + 0.25); /* imaginary */
            }
        CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
        CHECK_OK(zarr_read_region(a, ps, pc, back, sizeof back)); /* elements (1,1) and (2,1) */
        CHECK(back[0] == 1.5 && back[1] == -1.25 && back[2] == 2.5 && back[3] == -1.25);
        CHECK_OK(zarr_close(a));
    }
    a = create("f16", meta("[8]", "float16", "[3]", "\"NaN\"", RAW_LE));
    if (a) {
        /* 1.0, -2.0, 65504, smallest subnormal, NaN, -0.0, +inf, 0.333 */
        uint16_t v[8] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7e00, 0x8000, 0x7c00, 0x3555}, back[8];
        unsigned char want[6] = {0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b};
        uint64_t st[1] = {0}, ct[1] = {8};
        CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
        CHECK_OK(zarr_read_region(a, st, ct, back, sizeof back));
        CHECK(memcmp(back, v, sizeof v) == 0);
        check_file(path_in("f16/c/0"), want, 6, __LINE__);
        CHECK_OK(zarr_close(a));
    }
}

/* ================================================================================================ */
/* 8. Thread settings and concurrent use of one handle. */

struct reader_arg {
    zarr_array *a;
    unsigned seed;
    int bad;
};

static int32_t gval(uint64_t i, uint64_t j) { return (int32_t)(i * 64 + j); }

static void *reader(void *p) {
    struct reader_arg *r = p;
    static int32_t bufs[2][64 * 64];
    int32_t *buf = bufs[r->seed & 1];
    int it;
    unsigned s = r->seed;
    for (it = 0; it < 200; it++) {
        uint64_t st[2], ct[2], i, j;
        s = s * 1103515245u + 12345u;
        st[0] = (s >> 8) % 64;
        s = s * 1103515245u + 12345u;
        st[1] = (s >> 8) % 64;
        s = s * 1103515245u + 12345u;
        ct[0] = 1 + (s >> 8) % (64 - st[0]);
        s = s * 1103515245u + 12345u;
        ct[1] = 1 + (s >> 8) % (64 - st[1]);
        if (zarr_read_region(r->a, st, ct, buf, (size_t)(ct[0] * ct[1] * 4)) != ZARR_OK) {
            r->bad++;
            continue;
        }
        for (i = 0; i < ct[0]; i++)
            for (j = 0; j < ct[1]; j++)
                if (buf[i * ct[1] + j] != gval(st[0] + i, st[1] + j)) {
                    r->bad++;
                    i = ct[0];
                    break;
                }
    }
    return NULL;
}

struct writer_arg {
    zarr_array *a;
    uint64_t row0; /* writes rows row0..row0+31 (whole chunks) */
    zarr_status st;
};

static void *writer(void *p) {
    struct writer_arg *w = p;
    static int32_t bufs[2][32 * 64];
    int32_t *buf = bufs[w->row0 ? 1 : 0];
    uint64_t st[2], ct[2] = {8, 64}, i, j, r;
    w->st = ZARR_OK;
    for (r = 0; r < 32 && w->st == ZARR_OK; r += 8) {
        st[0] = w->row0 + r;
        st[1] = 0;
        for (i = 0; i < 8; i++)
            for (j = 0; j < 64; j++) buf[i * 64 + j] = -gval(st[0] + i, j);
        w->st = zarr_write_region(w->a, st, ct, buf, 8 * 64 * 4);
    }
    return NULL;
}

static void test_threads(void) {
    static int32_t v[64 * 64], one[64 * 64], four[64 * 64];
    uint64_t st[2] = {0, 0}, ct[2] = {64, 64}, i, j;
    size_t n = 0;
    zarr_array *a;

    CHECK_STATUS(zarr_set_num_threads(4097), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_get_num_threads(NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_OK(zarr_set_num_threads(16)); /* (4096 is allowed too, but starting that many threads is slow) */
    CHECK_OK(zarr_get_num_threads(&n));
    CHECK(n == 16);
    CHECK_OK(zarr_set_num_threads(1));
    CHECK_OK(zarr_get_num_threads(&n));
    CHECK(n == 1);

    a = create("threads", meta("[64,64]", "int32", "[8,8]", "0",
                               "[" BYTES_LE ",{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":true}}]"));
    if (!a) return;
    for (i = 0; i < 64; i++)
        for (j = 0; j < 64; j++) v[i * 64 + j] = gval(i, j);
    CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v)); /* written by 1 thread */
    CHECK_OK(zarr_read_region(a, st, ct, one, sizeof one));
    CHECK_OK(zarr_set_num_threads(4));
    CHECK_OK(zarr_get_num_threads(&n));
    CHECK(n == 4);
    CHECK_OK(zarr_read_region(a, st, ct, four, sizeof four));
    CHECK(memcmp(one, v, sizeof v) == 0);
    CHECK(memcmp(four, v, sizeof v) == 0);
    /* Written by 4 threads, read back by 1: same bytes; chunk files identical to a 1-thread write. */
    {
        size_t n1 = 0, n4 = 0;
        unsigned char *f1 = t_read_file(chunk2("threads", 3, 5), &n1), *f4;
        CHECK_OK(zarr_write_region(a, st, ct, v, sizeof v));
        f4 = t_read_file(chunk2("threads", 3, 5), &n4);
        CHECK(f1 && f4 && n1 == n4 && memcmp(f1, f4, n1) == 0);
        free(f1);
        free(f4);
    }
    CHECK_OK(zarr_set_num_threads(1));
    memset(one, 0, sizeof one);
    CHECK_OK(zarr_read_region(a, st, ct, one, sizeof one));
    CHECK(memcmp(one, v, sizeof v) == 0);
    CHECK_OK(zarr_set_num_threads(3));

    /* Two threads read the same handle at once. */
    {
        pthread_t t1, t2;
        struct reader_arg r1, r2;
        r1.a = r2.a = a;
        r1.seed = 1;
        r2.seed = 2;
        r1.bad = r2.bad = 0;
        CHECK(pthread_create(&t1, NULL, reader, &r1) == 0);
        CHECK(pthread_create(&t2, NULL, reader, &r2) == 0);
        pthread_join(t1, NULL);
        pthread_join(t2, NULL);
        CHECK(r1.bad == 0 && r2.bad == 0);
    }
    /* The pool may be replaced while reads are running on it ("calls already running keep their threads"). */
    {
        pthread_t t1;
        struct reader_arg r1;
        int k;
        r1.a = a;
        r1.seed = 3;
        r1.bad = 0;
        CHECK(pthread_create(&t1, NULL, reader, &r1) == 0);
        for (k = 0; k < 20; k++) CHECK_OK(zarr_set_num_threads((size_t)(k % 4) + 1));
        pthread_join(t1, NULL);
        CHECK(r1.bad == 0);
    }
    /* Two threads write distinct chunks of the same handle at once. */
    {
        pthread_t t1, t2;
        struct writer_arg w1, w2;
        int bad = 0;
        w1.a = w2.a = a;
        w1.row0 = 0;
        w2.row0 = 32;
        CHECK(pthread_create(&t1, NULL, writer, &w1) == 0);
        CHECK(pthread_create(&t2, NULL, writer, &w2) == 0);
        pthread_join(t1, NULL);
        pthread_join(t2, NULL);
        CHECK(w1.st == ZARR_OK && w2.st == ZARR_OK);
        CHECK_OK(zarr_read_region(a, st, ct, one, sizeof one));
        for (i = 0; i < 64; i++)
            for (j = 0; j < 64; j++) bad |= one[i * 64 + j] != -gval(i, j);
        CHECK(!bad);
    }
    CHECK_OK(zarr_close(a));

    /* 0: back to the default, from ZARR_NUM_THREADS (re-read) or else the CPU count. */
    {
        const char *old = getenv("ZARR_NUM_THREADS");
        char *saved = old ? strdup(old) : NULL;
        setenv("ZARR_NUM_THREADS", "5", 1);
        CHECK_OK(zarr_set_num_threads(0));
        CHECK_OK(zarr_get_num_threads(&n));
        CHECK(n == 5);
        setenv("ZARR_NUM_THREADS", "not a number", 1);
        CHECK_OK(zarr_set_num_threads(0));
        CHECK_OK(zarr_get_num_threads(&n));
        CHECK(n >= 1 && n <= 4096);
        if (saved) setenv("ZARR_NUM_THREADS", saved, 1);
        else unsetenv("ZARR_NUM_THREADS");
        free(saved);
        CHECK_OK(zarr_set_num_threads(0));
        CHECK_OK(zarr_get_num_threads(&n));
        CHECK(n >= 1);
    }
}

int main(void) {
    /* The pool is created on first use from ZARR_NUM_THREADS: set it before any other call. */
    size_t n = 0;
    const char *old = getenv("ZARR_NUM_THREADS");
    char *saved = old ? strdup(old) : NULL;
    setenv("ZARR_NUM_THREADS", "3", 1);
    CHECK_OK(zarr_get_num_threads(&n));
    CHECK(n == 3);
    if (saved) setenv("ZARR_NUM_THREADS", saved, 1);
    else unsetenv("ZARR_NUM_THREADS");
    free(saved);

    g_dir = t_mkdtemp("io");
    test_codec_chains();
    test_random_writes(0, GZIP, "rand/slash");
    test_random_writes(1, RAW_LE, "rand/dot");
    test_random_writes(2, "[" BYTES_BE ",{\"name\":\"crc32c\"}]", "rand/v2dot");
    test_random_writes(3, "[" BYTES_LE ",{\"name\":\"blosc\",\"configuration\":{\"cname\":\"lz4\",\"clevel\":5,"
                          "\"shuffle\":\"shuffle\",\"typesize\":2,\"blocksize\":0}}]", "rand/v2slash");
    test_coherence_and_fsync();
    test_chunk_keys();
    test_edges();
    test_fill_values();
    test_stored_bytes();
    test_no_byte_order();
    test_huge_shape();
    test_all_types();
    test_complex_and_half();
    test_threads();
    return t_finish("test_io", g_dir);
}
