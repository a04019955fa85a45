/* Creation specs (zarr_array_spec_*): defaults, every setter, what the created array reports, data
 * round trips, reuse of one spec, v2 and group creation, and the refusals with their status codes.
 * (tests/interop/test_spec.py compares the stored metadata with hand-written documents and reads the
 * arrays with zarr-python.) */
#include "test_util.h"

#include <math.h>
#include <stdint.h>

static void test_defaults(void) {
    uint64_t shape[2] = {4096, 4096}, got[2] = {0, 0};
    zarr_array_spec *s = NULL;
    zarr_array *a = NULL;
    char *json = NULL, *meta = NULL;
    double fill = -1;
    int sharded = -1, fmt = 0;
    zarr_data_type dt;
    size_t esize = 0;

    CHECK_OK(zarr_array_spec_new(ZARR_FLOAT64, 2, shape, &s));
    CHECK(s != NULL);
    CHECK_OK(zarr_array_spec_to_json(s, &json));
    /* the documented defaults: zstd level 3, 1 MiB chunks ([256, 512] for float64 4096 x 4096), fill 0 */
    CHECK(json && strstr(t_compact(json), "\"chunk_shape\":[256,512]"));
    CHECK(json && strstr(t_compact(json), "{\"name\":\"zstd\",\"configuration\":{\"level\":3,\"checksum\":false}}"));
    CHECK(json && strstr(t_compact(json), "\"fill_value\":0.0"));
    CHECK(json && strstr(t_compact(json), "\"zarr_format\":3"));
    CHECK_OK(zarr_create_from_spec(path_in("defaults"), s, &a));
    CHECK_OK(zarr_array_chunk_shape(a, got, 2));
    CHECK(got[0] == 256 && got[1] == 512);
    CHECK_OK(zarr_array_is_sharded(a, &sharded));
    CHECK(sharded == 0);
    CHECK_OK(zarr_array_fill_value(a, &fill, sizeof fill));
    CHECK(fill == 0.0 && !signbit(fill));
    CHECK_OK(zarr_array_data_type(a, &dt, &esize));
    CHECK(dt == ZARR_FLOAT64 && esize == 8);
    CHECK_OK(zarr_array_zarr_format(a, &fmt));
    CHECK(fmt == 3);
    /* to_json is exactly the stored document */
    CHECK_OK(zarr_array_metadata(a, &meta));
    CHECK(json && meta && strcmp(json, meta) == 0);
    {
        size_t n = 0;
        unsigned char *file = t_read_file(path_in("defaults/zarr.json"), &n);
        CHECK(file && json && strcmp((char *)file, json) == 0);
        free(file);
    }
    zarr_string_free(json);
    zarr_string_free(meta);
    CHECK_OK(zarr_close(a));
    CHECK_OK(zarr_array_spec_free(s));
}

static void test_everything_set(void) {
    uint64_t shape[3] = {10, 12, 9}, chunks[3] = {5, 3, 9}, shards[3] = {10, 6, 9}, got[3];
    const char *names[3] = {"t", NULL, "x"};
    int16_t fill = -7, buf[10 * 12 * 9], back[10 * 12 * 9], f = 0;
    zarr_array_spec *s = NULL;
    zarr_array *a = NULL, *b = NULL;
    uint64_t start[3] = {0, 0, 0};
    char *name = NULL, *attrs = NULL;
    int sharded = 0;
    size_t i;

    CHECK_OK(zarr_array_spec_new(ZARR_INT16, 3, shape, &s));
    CHECK_OK(zarr_array_spec_set_chunks(s, chunks, 3));
    CHECK_OK(zarr_array_spec_set_shards(s, shards, 3));
    CHECK_OK(zarr_array_spec_set_compressor(s, "blosc-zstd", 7));
    CHECK_OK(zarr_array_spec_set_shuffle(s, ZARR_SHUFFLE_BIT));
    CHECK_OK(zarr_array_spec_set_fill_value(s, &fill, sizeof fill));
    CHECK_OK(zarr_array_spec_set_dimension_names(s, names, 3));
    CHECK_OK(zarr_array_spec_set_attributes(s, "{\"units\":\"K\",\"n\":[1,2]}"));
    CHECK_OK(zarr_array_spec_set_zarr_format(s, 3));
    CHECK_OK(zarr_create_from_spec(path_in("all"), s, &a));
    /* the spec is not consumed: a second array from it */
    CHECK_OK(zarr_create_from_spec(path_in("all2"), s, &b));
    CHECK_OK(zarr_array_spec_free(s));

    CHECK_OK(zarr_array_chunk_shape(a, got, 3));
    CHECK(got[0] == 10 && got[1] == 6 && got[2] == 9);
    CHECK_OK(zarr_array_inner_chunk_shape(a, got, 3));
    CHECK(got[0] == 5 && got[1] == 3 && got[2] == 9);
    CHECK_OK(zarr_array_is_sharded(a, &sharded));
    CHECK(sharded == 1);
    CHECK_OK(zarr_array_fill_value(a, &f, sizeof f));
    CHECK(f == -7);
    CHECK_OK(zarr_array_dimension_name(a, 0, &name));
    CHECK(name && strcmp(name, "t") == 0);
    zarr_string_free(name);
    CHECK_OK(zarr_array_dimension_name(a, 1, &name));
    CHECK(name == NULL);
    CHECK_OK(zarr_array_attributes(a, &attrs));
    CHECK(attrs && strcmp(attrs, "{\"units\":\"K\",\"n\":[1,2]}") == 0);
    zarr_string_free(attrs);

    /* data round trip, and unwritten elements read as the fill value */
    for (i = 0; i < 10 * 12 * 9; i++) buf[i] = (int16_t)(i * 37 % 2001 - 1000);
    {
        uint64_t cnt[3] = {10, 6, 9};
        CHECK_OK(zarr_write_region(a, start, cnt, buf, 10 * 6 * 9 * sizeof(int16_t)));
    }
    CHECK_OK(zarr_read_region(a, start, shape, back, sizeof back));
    for (i = 0; i < 10 * 12 * 9; i++) {
        size_t y = (i / 9) % 12;
        size_t src = (i / (12 * 9)) * 6 * 9 + y * 9 + i % 9;
        if (y < 6 && back[i] != buf[src]) { CHECK(back[i] == buf[src]); break; }
        if (y >= 6 && back[i] != -7) { CHECK(back[i] == -7); break; }
    }
    CHECK_OK(zarr_read_region(b, start, shape, back, sizeof back));
    CHECK(back[0] == -7 && back[10 * 12 * 9 - 1] == -7);
    CHECK_OK(zarr_close(a));
    CHECK_OK(zarr_close(b));
}

static void test_v2_and_groups(void) {
    uint64_t shape[2] = {6, 4}, chunks[2] = {3, 2};
    const char *names[2] = {"y", "x"};
    zarr_group *g = NULL;
    zarr_array_spec *s = NULL;
    zarr_array *a = NULL;
    char *attrs = NULL;
    int fmt = 0;
    size_t n = 0;
    unsigned char *zarray;

    CHECK_OK(zarr_group_create_ex(path_in("g2"), NULL, 2, &g));
    CHECK_OK(zarr_array_spec_new(ZARR_UINT32, 2, shape, &s));
    CHECK_OK(zarr_array_spec_set_chunks(s, chunks, 2));
    CHECK_OK(zarr_array_spec_set_compressor(s, "gzip", ZARR_LEVEL_DEFAULT));
    CHECK_OK(zarr_array_spec_set_dimension_names(s, names, 2));
    CHECK_OK(zarr_array_spec_set_attributes(s, "{\"a\":1}"));
    /* no format set: the group's (2) */
    CHECK_OK(zarr_group_create_array_from_spec(g, "sub/v", s, &a));
    CHECK_OK(zarr_array_zarr_format(a, &fmt));
    CHECK(fmt == 2);
    CHECK_OK(zarr_array_attributes(a, &attrs));
    CHECK(attrs && strcmp(attrs, "{\"a\":1,\"_ARRAY_DIMENSIONS\":[\"y\",\"x\"]}") == 0);
    zarr_string_free(attrs);
    CHECK_OK(zarr_close(a));
    zarray = t_read_file(path_in("g2/sub/v/.zarray"), &n);
    CHECK(zarray && strstr(t_compact((char *)zarray), "\"compressor\":{\"id\":\"gzip\",\"level\":6}"));
    CHECK(zarray && strstr(t_compact((char *)zarray), "\"dtype\":\"<u4\""));
    free(zarray);
    CHECK(t_exists(path_in("g2/sub/.zgroup")));
    /* format 3 set explicitly wins over the group's */
    CHECK_OK(zarr_array_spec_set_zarr_format(s, 3));
    CHECK_OK(zarr_group_create_array_from_spec(g, "v3", s, &a));
    CHECK_OK(zarr_array_zarr_format(a, &fmt));
    CHECK(fmt == 3);
    CHECK_OK(zarr_close(a));
    CHECK(t_exists(path_in("g2/v3/zarr.json")));
    CHECK_OK(zarr_array_spec_free(s));
    CHECK_OK(zarr_group_close(g));
}

static void test_refusals(void) {
    uint64_t shape[1] = {8}, two[2] = {2, 2}, zero[1] = {0}, three[1] = {3}, eight[1] = {8};
    zarr_array_spec *s = NULL;
    zarr_array *a = (zarr_array *)1;
    char *json = (char *)1;
    double d = 0;
    unsigned char b2 = 2;
    const char *bad_names[2] = {"a", "b"};

    CHECK_STATUS(zarr_array_spec_new(ZARR_FLOAT32, 1, shape, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_spec_new(ZARR_FLOAT32, 1, NULL, &s), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(s == NULL);
    CHECK_STATUS(zarr_array_spec_new((zarr_data_type)999, 1, shape, &s), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_spec_new(ZARR_RAW, 1, shape, &s), ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_array_spec_new(ZARR_STRUCT, 1, shape, &s), ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_array_spec_set_chunks(NULL, shape, 1), ZARR_ERR_INVALID_HANDLE);
    CHECK_STATUS(zarr_array_spec_to_json(NULL, &json), ZARR_ERR_INVALID_HANDLE);
    CHECK(json == NULL);

    CHECK_OK(zarr_array_spec_new(ZARR_FLOAT32, 1, shape, &s));
    CHECK_STATUS(zarr_array_spec_set_chunks(s, two, 2), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_spec_set_chunks(s, zero, 1), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_spec_set_chunks(s, NULL, 1), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_spec_set_compressor(s, "lzma", 1), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_spec_set_compressor(s, "zstd", 23), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_spec_set_compressor(s, "blosc-lz4", -1), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_spec_set_compressor(s, NULL, 1), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_spec_set_shuffle(s, 3), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_spec_set_fill_value(s, &d, sizeof d), ZARR_ERR_BUFFER_SIZE);
    CHECK_STATUS(zarr_array_spec_set_zarr_format(s, 1), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_spec_set_attributes(s, "[]"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_spec_set_attributes(s, "{"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_spec_set_dimension_names(s, bad_names, 2), ZARR_ERR_INVALID_ARGUMENT);

    /* problems found at creation: nothing is created */
    CHECK_OK(zarr_array_spec_set_shuffle(s, ZARR_SHUFFLE_BIT)); /* zstd: no bit shuffle */
    CHECK_STATUS(zarr_create_from_spec(path_in("r1"), s, &a), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(a == NULL);
    CHECK(!t_exists(path_in("r1")));
    CHECK_OK(zarr_array_spec_set_shuffle(s, ZARR_SHUFFLE_NONE));
    CHECK_OK(zarr_array_spec_set_chunks(s, three, 1));
    CHECK_OK(zarr_array_spec_set_shards(s, eight, 1)); /* 3 does not divide 8 */
    CHECK_STATUS(zarr_create_from_spec(path_in("r2"), s, &a), ZARR_ERR_INVALID_ARGUMENT);
    CHECK(!t_exists(path_in("r2")));
    CHECK_OK(zarr_array_spec_set_zarr_format(s, 2)); /* sharding needs v3 */
    CHECK_OK(zarr_array_spec_set_chunks(s, eight, 1));
    CHECK_STATUS(zarr_create_from_spec(path_in("r3"), s, &a), ZARR_ERR_UNSUPPORTED);
    CHECK(!t_exists(path_in("r3")));
    CHECK_OK(zarr_array_spec_set_shards(s, NULL, 1)); /* unsharded: now it works, once */
    CHECK_OK(zarr_create_from_spec(path_in("r4"), s, &a));
    CHECK_OK(zarr_close(a));
    CHECK_STATUS(zarr_create_from_spec(path_in("r4"), s, &a), ZARR_ERR_EXISTS);
    CHECK_STATUS(zarr_create_from_spec(NULL, s, &a), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_create_from_spec(path_in("r5"), s, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_OK(zarr_array_spec_free(s));
    CHECK_OK(zarr_array_spec_free(NULL));

    CHECK_OK(zarr_array_spec_new(ZARR_BOOL, 1, shape, &s));
    CHECK_STATUS(zarr_array_spec_set_fill_value(s, &b2, 1), ZARR_ERR_VALUE);
    CHECK_OK(zarr_array_spec_free(s));
}

static void test_scalar_and_strings(void) {
    zarr_array_spec *s = NULL;
    zarr_array *a = NULL;
    uint64_t shape[1] = {3}, start[1] = {0};
    int64_t v = 0, fill = 42;
    const uint8_t *fv = NULL;
    size_t n = 0, rank = 9;

    CHECK_OK(zarr_array_spec_new(ZARR_INT64, 0, NULL, &s));
    CHECK_OK(zarr_array_spec_set_fill_value(s, &fill, sizeof fill));
    CHECK_OK(zarr_create_from_spec(path_in("scalar"), s, &a));
    CHECK_OK(zarr_array_rank(a, &rank));
    CHECK(rank == 0);
    CHECK_OK(zarr_read_region(a, NULL, NULL, &v, sizeof v));
    CHECK(v == 42);
    CHECK_OK(zarr_close(a));
    CHECK_OK(zarr_array_spec_free(s));

    CHECK_OK(zarr_array_spec_new(ZARR_STRING, 1, shape, &s));
    CHECK_OK(zarr_array_spec_set_fill_value(s, "none", 4));
    CHECK_OK(zarr_create_from_spec(path_in("strings"), s, &a));
    CHECK_OK(zarr_array_fill_value_vlen(a, &fv, &n));
    CHECK(n == 4 && fv && memcmp(fv, "none", 4) == 0);
    {
        uint64_t offsets[4] = {0, 2, 2, 7};
        zarr_vlen *out = NULL;
        const uint64_t *o = NULL;
        const uint8_t *d = NULL;
        size_t k = 0;
        CHECK_OK(zarr_write_region_vlen(a, start, shape, offsets, (const uint8_t *)"abhello", 7));
        CHECK_OK(zarr_read_region_vlen(a, start, shape, &out));
        CHECK_OK(zarr_vlen_view(out, &o, &d, &k));
        CHECK(k == 3 && o[3] == 7 && memcmp(d, "abhello", 7) == 0 && o[1] == 2 && o[2] == 2);
        zarr_vlen_free(out);
    }
    CHECK_OK(zarr_close(a));
    CHECK_STATUS(zarr_array_spec_set_fill_value(s, "\xff", 1), ZARR_ERR_VALUE);
    CHECK_OK(zarr_array_spec_free(s));
}

/* zarr_array_spec_compressor_name(): the registry's compressor names, each one accepted by
 * zarr_array_spec_set_compressor() and creating an array that stores and returns data with it. */
static void test_compressor_names(void) {
    const char *name = "x", *names[64];
    size_t n = 0;
    zarr_status st;
    while ((st = zarr_array_spec_compressor_name(n, &name)) == ZARR_OK && n < 64) {
        CHECK(name && name[0] && strcmp(name, "none") != 0);
        for (size_t k = 0; k < n; k++) CHECK(strcmp(names[k], name) != 0); /* no name twice */
        names[n++] = name;
    }
    CHECK(st == ZARR_ERR_OUT_OF_BOUNDS && name == NULL && zarr_last_error()[0] != '\0');
    CHECK_STATUS(zarr_array_spec_compressor_name(0, NULL), ZARR_ERR_INVALID_ARGUMENT);
    int zstd = 0, gzip = 0, blosc_lz4 = 0;
    for (size_t k = 0; k < n; k++) {
        zstd |= !strcmp(names[k], "zstd");
        gzip |= !strcmp(names[k], "gzip");
        blosc_lz4 |= !strcmp(names[k], "blosc-lz4");
    }
    CHECK(zstd && gzip && blosc_lz4);
    /* the same pointer again: static strings */
    const char *again = NULL;
    CHECK_OK(zarr_array_spec_compressor_name(0, &again));
    CHECK(again == names[0]);

    uint64_t shape[1] = {1000}, chunks[1] = {256}, start[1] = {0};
    int32_t data[1000], back[1000];
    for (int i = 0; i < 1000; i++) data[i] = i % 17 * 1000 - i;
    for (size_t k = 0; k < n; k++) {
        zarr_array_spec *s = NULL;
        zarr_array *a = NULL;
        char rel[96], *meta = NULL;
        snprintf(rel, sizeof rel, "codec_%s", names[k]);
        CHECK_OK(zarr_array_spec_new(ZARR_INT32, 1, shape, &s));
        CHECK_OK(zarr_array_spec_set_chunks(s, chunks, 1));
        CHECK_OK(zarr_array_spec_set_compressor(s, names[k], ZARR_LEVEL_DEFAULT));
        CHECK_OK(zarr_create_from_spec(path_in(rel), s, &a));
        CHECK_OK(zarr_write_hyperslab(a, start, shape, NULL, NULL, ZARR_INT32, data, sizeof data));
        CHECK_OK(zarr_close(a));
        a = NULL;
        CHECK_OK(zarr_open(path_in(rel), ZARR_READ, &a));
        memset(back, 0, sizeof back);
        CHECK_OK(zarr_read_hyperslab(a, start, shape, NULL, NULL, ZARR_INT32, back, sizeof back));
        CHECK(memcmp(back, data, sizeof data) == 0);
        /* the stored codec is the one named: "blosc-lz4" is blosc with cname lz4 */
        CHECK_OK(zarr_array_metadata(a, &meta));
        const char *dash = strchr(names[k], '-');
        char codec[32];
        snprintf(codec, sizeof codec, "\"%.*s\"", dash ? (int)(dash - names[k]) : (int)strlen(names[k]), names[k]);
        CHECK(meta && strstr(meta, codec));
        if (dash) {
            char cname[32];
            snprintf(cname, sizeof cname, "\"%s\"", dash + 1);
            CHECK(meta && strstr(meta, cname));
        }
        zarr_string_free(meta);
        CHECK_OK(zarr_close(a));
        CHECK_OK(zarr_array_spec_free(s));
    }
}

int main(void) {
    g_dir = t_mkdtemp("spec");
    test_defaults();
    test_everything_set();
    test_v2_and_groups();
    test_refusals();
    test_scalar_and_strings();
    test_compressor_names();
    t_rmtree(g_dir);
    free(g_dir);
    printf("%d checks, %d failures\n", t_checks, t_failures);
    return t_failures ? 1 : 0;
}
