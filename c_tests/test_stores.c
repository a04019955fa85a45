/* Locations beyond directories: memory://NAME/node (shared across calls, zarr_memory_store_remove),
 * zip:// (missing and garbage files), and zarr_group_consolidate on a memory hierarchy (that opens and
 * listing then use the consolidated metadata is checked by the Rust unit tests with a counting store and
 * by tests/interop/test_consolidated.py with the children's documents deleted). */
#include "test_util.h"

#include <stdint.h>

#define META                                                                                                         \
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[6],\"data_type\":\"int16\",\"chunk_grid\":{\"name\":"  \
    "\"regular\",\"configuration\":{\"chunk_shape\":[4]}},\"chunk_key_encoding\":{\"name\":\"default\"},"          \
    "\"fill_value\":-1,\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}"

static void test_memory(void) {
    zarr_array *a = NULL;
    zarr_group *g = NULL;
    int16_t in[6] = {1, -2, 3, -4, 5, -6}, out[6] = {0};
    uint64_t start = 0, count = 6;
    CHECK_OK(zarr_group_create("memory://c-test", NULL, &g));
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_create("memory://c-test/x", META, &a));
    CHECK_OK(zarr_write_region(a, &start, &count, in, sizeof in));
    CHECK_OK(zarr_close(a));
    a = NULL;
    CHECK_OK(zarr_open("memory://c-test/x", ZARR_READ, &a));
    CHECK_OK(zarr_read_region(a, &start, &count, out, sizeof out));
    CHECK(memcmp(in, out, sizeof in) == 0);
    CHECK_OK(zarr_close(a));
    CHECK_OK(zarr_memory_store_remove("c-test"));
    CHECK_STATUS(zarr_memory_store_remove("c-test"), ZARR_ERR_NOT_FOUND);
    a = NULL;
    CHECK_STATUS(zarr_open("memory://c-test/x", ZARR_READ, &a), ZARR_ERR_NOT_FOUND);
    CHECK(a == NULL);
    CHECK_STATUS(zarr_memory_store_remove("a/b"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_memory_store_remove(NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_OK(zarr_memory_store_remove("c-test"));
}

static void test_consolidate(void) {
    zarr_group *g = NULL, *sub = NULL;
    zarr_array *a = NULL;
    zarr_node_list *list = NULL;
    size_t n = 0;
    CHECK_OK(zarr_group_create("memory://c-cons", "{\"t\":1}", &g));
    CHECK_OK(zarr_group_create_group(g, "s", NULL, &sub));
    CHECK_OK(zarr_group_create_array(sub, "x", META, &a));
    CHECK_OK(zarr_close(a));
    CHECK_OK(zarr_group_close(sub));
    CHECK_OK(zarr_group_consolidate(g));
    CHECK_OK(zarr_group_close(g));
    g = NULL;
    CHECK_OK(zarr_group_open("memory://c-cons", ZARR_READ, &g));
    CHECK_OK(zarr_group_list(g, &list));
    CHECK_OK(zarr_node_list_size(list, &n));
    CHECK(n == 1);
    CHECK_OK(zarr_node_list_free(list));
    a = NULL;
    CHECK_OK(zarr_group_open_array(g, "s/x", &a));
    CHECK_OK(zarr_close(a));
    CHECK_STATUS(zarr_group_consolidate(g), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_consolidate(NULL), ZARR_ERR_INVALID_HANDLE);
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_memory_store_remove("c-cons"));
}

static void test_zip_errors(const char *dir) {
    char path[4200];
    zarr_group *g = NULL;
    snprintf(path, sizeof path, "zip://%s/missing.zip", dir);
    CHECK_STATUS(zarr_group_open(path, ZARR_READ, &g), ZARR_ERR_NOT_FOUND);
    CHECK(g == NULL);
    snprintf(path, sizeof path, "%s/bad.zip", dir);
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs("PK not a zip", f);
        fclose(f);
    }
    snprintf(path, sizeof path, "zip://%s/bad.zip", dir);
    CHECK_STATUS(zarr_group_open(path, ZARR_READ, &g), ZARR_ERR_IO);
    CHECK_STATUS(zarr_group_open("zip://", ZARR_READ, &g), ZARR_ERR_INVALID_ARGUMENT);
}

int main(void) {
    char *dir = t_mkdtemp("stores");
    test_memory();
    test_consolidate();
    test_zip_errors(dir);
    return t_finish("test_stores", dir);
}
