/* Hostile stores through the C API (see also tests/hostile.rs): caller attributes and documents nested
 * 100000 deep, chunk files that are FIFOs, directories or dangling symbolic links. Each gets its specific
 * status code; a FIFO never blocks (alarm() turns a hang into a failure). */
#include "test_util.h"

#include <signal.h>

#define DEPTH 100000

/* '[' x DEPTH, '1', ']' x DEPTH, optionally wrapped as {"x": ...}; caller frees. */
static char *deep(int wrap) {
    size_t n = 2 * DEPTH + 16;
    char *s = malloc(n), *p = s;
    if (!s) exit(2);
    if (wrap) p += sprintf(p, "{\"x\":");
    memset(p, '[', DEPTH);
    p += DEPTH;
    *p++ = '1';
    memset(p, ']', DEPTH);
    p += DEPTH;
    if (wrap) *p++ = '}';
    *p = '\0';
    return s;
}

int main(void) {
    char *tmp = t_mkdtemp("hostile");
    char path[4096], file[4200];
    const char *meta = "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[8],\"data_type\":\"int32\","
                       "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4]}},"
                       "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":-1,"
                       "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}";
    zarr_array *a = NULL;
    zarr_group *g = NULL;
    int32_t vals[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8];
    uint64_t st[1] = {0}, ct[1] = {8}, st1[1] = {4}, ct1[1] = {4};
    char *deep_attrs = deep(1), *deep_doc = deep(0), *json = NULL;

    alarm(60); /* a hang (e.g. a blocking FIFO open) fails the test instead of stalling CI */

    /* Attributes nested 100000 deep, set from C: refused, the stored attributes unchanged. */
    snprintf(path, sizeof path, "%s/a", tmp);
    CHECK_OK(zarr_create(path, meta, &a));
    CHECK_OK(zarr_array_set_attributes(a, "{\"keep\":1}"));
    CHECK_STATUS(zarr_array_set_attributes(a, deep_attrs), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_MSG("recursion limit");
    CHECK_OK(zarr_array_attributes(a, &json));
    CHECK(json && strcmp(t_compact(json), "{\"keep\":1}") == 0);
    zarr_string_free(json);
    snprintf(path, sizeof path, "%s/g", tmp);
    CHECK_OK(zarr_group_create(path, NULL, &g));
    CHECK_STATUS(zarr_group_set_attributes(g, deep_attrs), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_set_attributes(g, deep_doc), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_OK(zarr_group_close(g));
    /* A metadata document nested that deep, given to zarr_create. */
    snprintf(path, sizeof path, "%s/deep", tmp);
    {
        zarr_array *d = NULL;
        CHECK_STATUS(zarr_create(path, deep_doc, &d), ZARR_ERR_METADATA);
        CHECK(d == NULL);
    }

    /* Chunk 1 a FIFO: an I/O error at once; chunk 0 still reads. */
    CHECK_OK(zarr_write_region(a, st, ct, vals, sizeof vals));
    snprintf(file, sizeof file, "%s/a/c/1", tmp);
    CHECK(unlink(file) == 0);
    CHECK(mkfifo(file, 0644) == 0);
    CHECK_STATUS(zarr_read_region(a, st1, ct1, out, 16), ZARR_ERR_IO);
    CHECK_MSG("not a regular file");
    CHECK_OK(zarr_read_region(a, st, ct1, out, 16));
    CHECK(out[0] == 1 && out[3] == 4);
    /* ... a directory ... */
    CHECK(unlink(file) == 0);
    CHECK(mkdir(file, 0755) == 0);
    CHECK_STATUS(zarr_read_region(a, st1, ct1, out, 16), ZARR_ERR_IO);
    CHECK(rmdir(file) == 0);
    /* ... a dangling symbolic link: an I/O error, not fill values. */
    snprintf(path, sizeof path, "%s/no-such-target", tmp);
    CHECK(symlink(path, file) == 0);
    CHECK_STATUS(zarr_read_region(a, st1, ct1, out, 16), ZARR_ERR_IO);
    CHECK_MSG("dangling");
    /* Writing the whole chunk replaces the link with a regular file; it then reads back. */
    CHECK_OK(zarr_write_region(a, st1, ct1, vals, 16));
    CHECK_OK(zarr_read_region(a, st1, ct1, out, 16));
    CHECK(out[0] == 1 && out[3] == 4);
    CHECK(!t_exists(path));
    CHECK_OK(zarr_close(a));

    alarm(0);
    free(deep_attrs);
    free(deep_doc);
    return t_finish("test_hostile", tmp);
}
