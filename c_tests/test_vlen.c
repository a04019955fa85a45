/* Variable-length arrays (ZARR_STRING, ZARR_BYTES) through the C API: zarr_read_region_vlen,
 * zarr_vlen_view, zarr_vlen_free, zarr_write_region_vlen, fill values, stored bytes, and errors. */
#include "test_util.h"

#include <stdint.h>

static const char *meta(const char *shape, const char *dtype, const char *chunks, const char *fill,
                        const char *codecs) {
    static char buf[8192];
    snprintf(buf, sizeof buf,
             "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":%s,\"data_type\":\"%s\","
             "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":%s}},"
             "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"
             "\"fill_value\":%s,\"codecs\":%s}",
             shape, dtype, chunks, fill, codecs);
    return buf;
}

/* Element i of a zarr_vlen must be exactly `want` (a NUL-terminated C string). */
static int vlen_is(const zarr_vlen *v, size_t i, const char *want) {
    const uint64_t *off;
    const uint8_t *data;
    size_t n;
    if (zarr_vlen_view(v, &off, &data, &n) != ZARR_OK || i >= n) return 0;
    size_t len = (size_t)(off[i + 1] - off[i]);
    return len == strlen(want) && (len == 0 || memcmp(data + off[i], want, len) == 0);
}

/* Writes `n` C strings (NUL-terminated; the NUL is not stored) to the 1-D region [start, start+n). */
static zarr_status write_strs(zarr_array *a, uint64_t start, const char *const *s, size_t n) {
    uint64_t off[16], count = n;
    char data[1024];
    size_t pos = 0;
    off[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(s[i]);
        memcpy(data + pos, s[i], l);
        pos += l;
        off[i + 1] = pos;
    }
    return zarr_write_region_vlen(a, &start, &count, off, (const uint8_t *)data, pos);
}

int main(void) {
    char *tmp = t_mkdtemp("vlen");
    g_dir = tmp;
    zarr_array *a = NULL;
    zarr_vlen *v = NULL;

    /* --- a string array: 10 elements in chunks of 4, fill "-" ------------------------------- */
    CHECK_OK(zarr_create(path_in("s"), meta("[10]", "string", "[4]", "\"-\"",
                                            "[{\"name\":\"vlen-utf8\"},{\"name\":\"zstd\",\"configuration\":"
                                            "{\"level\":1,\"checksum\":false}}]"), &a));
    zarr_data_type dt;
    size_t es = 99;
    CHECK_OK(zarr_array_data_type(a, &dt, &es));
    CHECK(dt == ZARR_STRING && es == 0);
    const uint8_t *fv = NULL;
    size_t fn = 0;
    CHECK_OK(zarr_array_fill_value_vlen(a, &fv, &fn));
    CHECK(fn == 1 && fv && fv[0] == '-');
    /* nothing written: every element reads as the fill value */
    uint64_t start = 0, count = 10;
    CHECK_OK(zarr_read_region_vlen(a, &start, &count, &v));
    CHECK(v != NULL);
    const uint64_t *off = NULL;
    const uint8_t *data = NULL;
    size_t n = 0;
    CHECK_OK(zarr_vlen_view(v, &off, &data, &n));
    CHECK(n == 10 && off[0] == 0 && off[10] == 10);
    CHECK(vlen_is(v, 9, "-"));
    zarr_vlen_free(v);
    v = NULL;

    const char *s1[] = {"alpha", "", "h\xc3\xa9", "\xf0\x9f\x98\x80 emoji", "x"};
    start = 3;
    CHECK_OK(write_strs(a, 3, s1, 5));
    /* chunk 2 (elements 8, 9) was never written */
    CHECK(!t_exists(path_in("s/c/2")));
    CHECK(t_exists(path_in("s/c/0")) && t_exists(path_in("s/c/1")));
    start = 0;
    count = 10;
    CHECK_OK(zarr_read_region_vlen(a, &start, &count, &v));
    const char *want[] = {"-", "-", "-", "alpha", "", "h\xc3\xa9", "\xf0\x9f\x98\x80 emoji", "x", "-", "-"};
    for (size_t i = 0; i < 10; i++) CHECK(vlen_is(v, i, want[i]));
    zarr_vlen_free(v);
    /* a sub-region */
    start = 4;
    count = 3;
    CHECK_OK(zarr_read_region_vlen(a, &start, &count, &v));
    CHECK(vlen_is(v, 0, "") && vlen_is(v, 1, "h\xc3\xa9") && vlen_is(v, 2, "\xf0\x9f\x98\x80 emoji"));
    zarr_vlen_free(v);
    /* a zero-extent region: no elements, one offset */
    count = 0;
    CHECK_OK(zarr_read_region_vlen(a, &start, &count, &v));
    CHECK_OK(zarr_vlen_view(v, &off, NULL, &n));
    CHECK(n == 0 && off[0] == 0);
    zarr_vlen_free(v);
    zarr_vlen_free(NULL);

    /* --- errors ------------------------------------------------------------------------------ */
    char buf[16];
    start = 0;
    count = 1;
    CHECK_STATUS(zarr_read_region(a, &start, &count, buf, 0), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_MSG("zarr_read_region_vlen");
    CHECK_STATUS(zarr_write_region(a, &start, &count, buf, 0), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_MSG("zarr_write_region_vlen");
    CHECK_STATUS(zarr_read_region_vlen(a, &start, &count, NULL), ZARR_ERR_INVALID_ARGUMENT);
    v = (zarr_vlen *)&buf; /* set to NULL on failure */
    count = 11;
    CHECK_STATUS(zarr_read_region_vlen(a, &start, &count, &v), ZARR_ERR_OUT_OF_BOUNDS);
    CHECK(v == NULL);
    CHECK_STATUS(zarr_vlen_view(NULL, &off, &data, &n), ZARR_ERR_INVALID_HANDLE);
    /* invalid UTF-8 in the second element: ZARR_ERR_VALUE, nothing stored */
    size_t before_n = 0, after_n = 0;
    unsigned char *before = t_read_file(path_in("s/c/0"), &before_n);
    const char *bad[] = {"ok", "\xff\xfe", "ok"};
    CHECK_STATUS(write_strs(a, 0, bad, 3), ZARR_ERR_VALUE);
    CHECK_MSG("UTF-8");
    unsigned char *after = t_read_file(path_in("s/c/0"), &after_n);
    CHECK(before && after && before_n == after_n && memcmp(before, after, before_n) == 0);
    free(before);
    free(after);
    /* offsets that decrease or run past the data */
    uint64_t offs[3] = {0, 2, 1};
    start = 0;
    count = 2;
    CHECK_STATUS(zarr_write_region_vlen(a, &start, &count, offs, (const uint8_t *)"abc", 3), ZARR_ERR_INVALID_ARGUMENT);
    offs[2] = 4;
    CHECK_STATUS(zarr_write_region_vlen(a, &start, &count, offs, (const uint8_t *)"abc", 3), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_write_region_vlen(a, &start, &count, NULL, (const uint8_t *)"abc", 3), ZARR_ERR_INVALID_ARGUMENT);
    start = 9;
    CHECK_STATUS(zarr_write_region_vlen(a, &start, &count, offs, (const uint8_t *)"abc", 3), ZARR_ERR_OUT_OF_BOUNDS);
    /* writing fill everywhere in chunk 1 deletes it */
    const char *fills[] = {"-", "-", "-", "-"};
    CHECK_OK(write_strs(a, 4, fills, 4));
    CHECK(!t_exists(path_in("s/c/1")));
    /* a corrupt chunk: a length beyond the chunk -> ZARR_ERR_CODEC naming the chunk */
    CHECK_OK(zarr_close(a));
    CHECK_OK(zarr_create(path_in("raw"), meta("[4]", "string", "[2]", "\"\"", "[\"vlen-utf8\"]"), &a));
    const char *s2[] = {"ab", "cd", "ef", "gh"};
    CHECK_OK(write_strs(a, 0, s2, 4));
    size_t cn = 0;
    unsigned char *chunk = t_read_file(path_in("raw/c/1"), &cn);
    /* exactly the vlen-utf8 framing: count 2, then (length, bytes) twice */
    CHECK(chunk && cn == 16 && memcmp(chunk, "\x02\0\0\0\x02\0\0\0ef\x02\0\0\0gh", 16) == 0);
    chunk[4] = 0xff; /* the first length now runs past the chunk */
    CHECK(t_write_file(path_in("raw/c/1"), chunk, cn) == 0);
    start = 0;
    count = 4;
    CHECK_STATUS(zarr_read_region_vlen(a, &start, &count, &v), ZARR_ERR_CODEC);
    CHECK_MSG("c/1");
    count = 2;
    CHECK_OK(zarr_read_region_vlen(a, &start, &count, &v));
    CHECK(vlen_is(v, 1, "cd"));
    zarr_vlen_free(v);
    /* truncated */
    CHECK(t_write_file(path_in("raw/c/1"), chunk, 3) == 0);
    start = 2;
    CHECK_STATUS(zarr_read_region_vlen(a, &start, &count, &v), ZARR_ERR_CODEC);
    free(chunk);
    CHECK_OK(zarr_close(a));

    /* --- bytes: embedded NULs, a base64 fill value ---------------------------------------- */
    CHECK_OK(zarr_create(path_in("b"), meta("[2,3]", "bytes", "[1,2]", "\"AAE=\"",
                                            "[{\"name\":\"vlen-bytes\"},{\"name\":\"gzip\",\"configuration\":{\"level\":1}}]"),
                         &a));
    CHECK_OK(zarr_array_data_type(a, &dt, NULL));
    CHECK(dt == ZARR_BYTES);
    uint64_t st2[2] = {1, 1}, ct2[2] = {1, 2};
    uint64_t boff[3] = {0, 3, 3};
    CHECK_OK(zarr_write_region_vlen(a, st2, ct2, boff, (const uint8_t *)"\0\xff\0", 3));
    st2[0] = 0;
    st2[1] = 0;
    ct2[0] = 2;
    ct2[1] = 3;
    CHECK_OK(zarr_read_region_vlen(a, st2, ct2, &v));
    CHECK_OK(zarr_vlen_view(v, &off, &data, &n));
    CHECK(n == 6);
    CHECK(off[1] - off[0] == 2 && memcmp(data + off[0], "\0\x01", 2) == 0); /* fill AAE= */
    CHECK(off[5] - off[4] == 3 && memcmp(data + off[4], "\0\xff\0", 3) == 0);
    CHECK(off[6] - off[5] == 0);
    zarr_vlen_free(v);
    CHECK_STATUS(zarr_array_vlen_item_type(a, NULL, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_OK(zarr_close(a));

    /* --- a fixed-size array refuses the vlen calls ------------------------------------------ */
    CHECK_OK(zarr_create(path_in("i"), meta("[2]", "int32", "[2]", "0",
                                            "[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]"), &a));
    start = 0;
    count = 2;
    CHECK_STATUS(zarr_read_region_vlen(a, &start, &count, &v), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_write_region_vlen(a, &start, &count, boff, (const uint8_t *)"abc", 3), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_array_fill_value_vlen(a, &fv, &fn), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_OK(zarr_close(a));

    /* --- a v2 object array with a vlen-array filter: native-endian items --------------------- */
    {
        const char *zarray = "{\"zarr_format\":2,\"shape\":[3],\"chunks\":[2],\"dtype\":\"|O\",\"fill_value\":null,"
                             "\"order\":\"C\",\"filters\":[{\"id\":\"vlen-array\",\"dtype\":\">i2\"}],\"compressor\":null}";
        CHECK_OK(zarr_create(path_in("va"), zarray, &a));
        zarr_data_type it;
        size_t isz = 0;
        CHECK_OK(zarr_array_vlen_item_type(a, &it, &isz));
        CHECK(it == ZARR_INT16 && isz == 2);
        int16_t items[3] = {1, -2, 300};
        uint64_t io[4] = {0, 4, 4, 6};
        start = 0;
        count = 3;
        CHECK_OK(zarr_write_region_vlen(a, &start, &count, io, (const uint8_t *)items, 6));
        unsigned char *c0 = t_read_file(path_in("va/0"), &cn);
        /* big-endian items on disk */
        CHECK(c0 && cn == 16 && c0[8] == 0 && c0[9] == 1 && c0[10] == 0xff && c0[11] == 0xfe);
        free(c0);
        /* an odd byte count is not whole items */
        io[1] = 3;
        CHECK_STATUS(zarr_write_region_vlen(a, &start, &count, io, (const uint8_t *)items, 6), ZARR_ERR_VALUE);
        CHECK_OK(zarr_read_region_vlen(a, &start, &count, &v));
        CHECK_OK(zarr_vlen_view(v, &off, &data, &n));
        int16_t back[3];
        CHECK(n == 3 && off[3] == 6);
        memcpy(back, data, 6);
        CHECK(back[0] == 1 && back[1] == -2 && back[2] == 300);
        zarr_vlen_free(v);
        CHECK_OK(zarr_close(a));
    }

    return t_finish("test_vlen", tmp);
}
