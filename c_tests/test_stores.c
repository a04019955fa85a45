/* Locations beyond directories: memory://NAME/node (shared across calls, zarr_memory_store_remove),
 * zip:// (missing and garbage files), zarr_create_from_spec_with_options (local; that it reaches S3 is
 * checked by tests/interop/test_remote_s3.py), creating on http:// failing as read-only before any
 * request (a closed port, which a request would report as ZARR_ERR_IO), and zarr_group_consolidate on a memory hierarchy (that opens and
 * listing then use the consolidated metadata is checked by the Rust unit tests with a counting store and
 * by tests/interop/test_consolidated.py with the children's documents deleted). */
#include "test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

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

static void test_spec_with_options(const char *dir) {
    char path[4200];
    uint64_t shape[1] = {6}, chunks[1] = {4}, start = 0, count = 6;
    int16_t in[6] = {7, -8, 9, -10, 11, -12}, out[6] = {0};
    zarr_array_spec *s = NULL;
    zarr_store_options *o = NULL;
    zarr_array *a = NULL;
    CHECK_OK(zarr_array_spec_new(ZARR_INT16, 1, shape, &s));
    CHECK_OK(zarr_array_spec_set_chunks(s, chunks, 1));
    CHECK_OK(zarr_store_options_create(&o));
    CHECK_OK(zarr_store_options_set(o, "timeout_ms", "2000")); /* local stores ignore the options */
    snprintf(path, sizeof path, "%s/spec_opts", dir);
    CHECK_OK(zarr_create_from_spec_with_options(path, s, o, &a));
    CHECK_OK(zarr_write_region(a, &start, &count, in, sizeof in));
    CHECK_OK(zarr_close(a));
    a = NULL;
    CHECK_OK(zarr_open(path, ZARR_READ, &a));
    CHECK_OK(zarr_read_region(a, &start, &count, out, sizeof out));
    CHECK(memcmp(in, out, sizeof in) == 0);
    CHECK_OK(zarr_close(a));
    a = NULL;
    CHECK_STATUS(zarr_create_from_spec_with_options(path, s, o, &a), ZARR_ERR_EXISTS);
    CHECK(a == NULL);
    snprintf(path, sizeof path, "%s/spec_no_opts", dir);
    CHECK_OK(zarr_create_from_spec_with_options(path, s, NULL, &a)); /* NULL options: as zarr_create_from_spec */
    CHECK_OK(zarr_close(a));
    a = NULL;
    CHECK_STATUS(zarr_create_from_spec_with_options(path, NULL, o, &a), ZARR_ERR_INVALID_HANDLE);
    CHECK_STATUS(zarr_create_from_spec_with_options(NULL, s, o, &a), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_create_from_spec_with_options(path, s, o, NULL), ZARR_ERR_INVALID_ARGUMENT);

    /* http:// is read-only: creating fails at once. The port is closed, so a request would give ZARR_ERR_IO. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
    close(fd);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/arr", (unsigned)ntohs(sa.sin_port));
    CHECK_OK(zarr_store_options_set(o, "retries", "0"));
    CHECK_STATUS(zarr_open_with_options(url, o, ZARR_READ, &a), ZARR_ERR_IO); /* the request fails */
    CHECK_STATUS(zarr_create_from_spec_with_options(url, s, o, &a), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_create_from_spec(url, s, &a), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_create_with_options(url, o, META, &a), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_create(url, META, &a), ZARR_ERR_READ_ONLY);
    zarr_group *g = NULL;
    CHECK_STATUS(zarr_group_create(url, NULL, &g), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_create_with_options(url, o, NULL, 3, &g), ZARR_ERR_READ_ONLY);
    snprintf(url, sizeof url, "https://127.0.0.1:%u/grp", (unsigned)ntohs(sa.sin_port));
    CHECK_STATUS(zarr_group_create(url, NULL, &g), ZARR_ERR_READ_ONLY);
    CHECK(a == NULL && g == NULL);
    zarr_store_options_free(o);
    CHECK_OK(zarr_array_spec_free(s));
}

int main(void) {
    char *dir = t_mkdtemp("stores");
    test_memory();
    test_consolidate();
    test_zip_errors(dir);
    test_spec_with_options(dir);
    return t_finish("test_stores", dir);
}
