/* The metadata ceiling through the C API (docs/limits.md): the store option `max_metadata_bytes` sets it
 * for one store of any kind (a directory, memory://, zip:// would be the same wrapper) and wins over
 * ZARR_MAX_METADATA_BYTES, which this test sets to 256 KiB for the whole process before the first call.
 * Documents over the ceiling are ZARR_ERR_MEMORY (the message names both settings); the option's value is
 * checked when set (ZARR_ERR_INVALID_ARGUMENT). See tests/hostile_memory.rs for the Rust side. */
#include "test_util.h"

#define ENV_CEILING (256 * 1024)

/* A v3 metadata document (group, or an int32 array of 4 elements) whose attribute "s" is a string of
 * `n` 'x' characters; caller frees. */
static char *doc_with(int array, size_t n) {
    const char *head = array
        ? "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[4],\"data_type\":\"int32\","
          "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4]}},"
          "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":7,"
          "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],\"attributes\":{\"s\":\""
        : "{\"zarr_format\":3,\"node_type\":\"group\",\"attributes\":{\"s\":\"";
    size_t h = strlen(head);
    char *s = malloc(h + n + 8);
    if (!s) exit(2);
    memcpy(s, head, h);
    memset(s + h, 'x', n);
    strcpy(s + h + n, "\"}}");
    return s;
}

/* Writes `doc` as DIR/zarr.json. */
static void put(const char *dir, const char *doc) {
    char file[4200];
    mkdir(dir, 0755);
    snprintf(file, sizeof file, "%s/zarr.json", dir);
    if (t_write_file(file, doc, strlen(doc)) != 0) exit(2);
}

/* Options with max_metadata_bytes = `ceiling` (NULL: none); caller frees. */
static zarr_store_options *ceiling(const char *value) {
    zarr_store_options *o = NULL;
    CHECK_OK(zarr_store_options_create(&o));
    if (value) CHECK_OK(zarr_store_options_set(o, "max_metadata_bytes", value));
    return o;
}

int main(void) {
    char *tmp = t_mkdtemp("metadata-ceiling");
    char big[4096], mid[4096], arr[4096];
    char *big_doc = doc_with(0, 300 * 1024), *mid_doc = doc_with(0, 100 * 1024), *arr_doc = doc_with(1, 300 * 1024);
    char *json = NULL;
    zarr_store_options *none = NULL, *mib = NULL, *small = NULL, *bad = NULL;
    zarr_group *g = NULL;
    zarr_array *a = NULL;
    int32_t out[4] = {0};
    uint64_t st[1] = {0}, ct[1] = {4};

    /* The process-wide ceiling, read on first use. */
    setenv("ZARR_MAX_METADATA_BYTES", "262144", 1);
    snprintf(big, sizeof big, "%s/big", tmp);
    snprintf(mid, sizeof mid, "%s/mid", tmp);
    snprintf(arr, sizeof arr, "%s/arr", tmp);
    put(big, big_doc);
    put(mid, mid_doc);
    put(arr, arr_doc);
    none = ceiling(NULL);
    mib = ceiling("1048576");
    small = ceiling("65536");

    /* 300 KiB: over the environment's 256 KiB; the option's 1 MiB opens it, the group and the array. */
    CHECK_STATUS(zarr_group_open(big, ZARR_READ, &g), ZARR_ERR_MEMORY);
    CHECK_MSG("max_metadata_bytes");
    CHECK_MSG("ZARR_MAX_METADATA_BYTES");
    CHECK(g == NULL);
    CHECK_STATUS(zarr_group_open_with_options(big, none, ZARR_READ, &g), ZARR_ERR_MEMORY);
    CHECK_OK(zarr_group_open_with_options(big, mib, ZARR_READ, &g));
    CHECK_OK(zarr_group_attributes(g, &json));
    CHECK(json && strlen(json) > 300 * 1024);
    zarr_string_free(json);
    CHECK_OK(zarr_group_close(g));
    CHECK_STATUS(zarr_open(arr, ZARR_READ, &a), ZARR_ERR_MEMORY);
    CHECK_OK(zarr_open_with_options(arr, mib, ZARR_READ, &a));
    CHECK_OK(zarr_read_region(a, st, ct, out, sizeof out));
    CHECK(out[0] == 7 && out[3] == 7);
    CHECK_OK(zarr_close(a));

    /* 100 KiB: within the environment's ceiling; over the option's 64 KiB, which wins. */
    CHECK_OK(zarr_group_open(mid, ZARR_READ, &g));
    CHECK_OK(zarr_group_close(g));
    CHECK_STATUS(zarr_group_open_with_options(mid, small, ZARR_READ, &g), ZARR_ERR_MEMORY);
    CHECK_MSG("metadata ceiling of 65536 bytes");

    /* A memory:// store: the option applies there too. */
    CHECK_OK(zarr_group_create_with_options("memory://ceiling-c", mib, "{\"s\":\"small\"}", 3, &g));
    {
        /* {"s":"xxx..."}: the attributes of mid_doc, 100 KiB. */
        const char *attrs = strstr(mid_doc, "\"attributes\":") + strlen("\"attributes\":");
        char *copy = strdup(attrs);
        copy[strlen(copy) - 1] = '\0';
        CHECK_OK(zarr_group_set_attributes(g, copy));
        free(copy);
    }
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_group_open_with_options("memory://ceiling-c", mib, ZARR_READ, &g));
    CHECK_OK(zarr_group_close(g));
    CHECK_STATUS(zarr_group_open_with_options("memory://ceiling-c", small, ZARR_READ, &g), ZARR_ERR_MEMORY);

    /* The value is checked when set: 1 to 2^48. */
    CHECK_OK(zarr_store_options_create(&bad));
    CHECK_STATUS(zarr_store_options_set(bad, "max_metadata_bytes", "0"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_store_options_set(bad, "max_metadata_bytes", "lots"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_store_options_set(bad, "max_metadata_bytes", "281474976710657"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_store_options_set_json(bad, "{\"max_metadata_bytes\": -5}"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_OK(zarr_store_options_set_json(bad, "{\"max_metadata_bytes\": 281474976710656}"));

    zarr_store_options_free(none);
    zarr_store_options_free(mib);
    zarr_store_options_free(small);
    zarr_store_options_free(bad);
    free(big_doc);
    free(mid_doc);
    free(arr_doc);
    return t_finish("test_metadata_ceiling", tmp);
}
