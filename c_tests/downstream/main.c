/* A downstream consumer of an installed libzarr (see c_tests/downstream/CMakeLists.txt and the
 * install.downstream test): creates an array, writes a region, reopens the array read-only and
 * checks that the bytes read back are the bytes written. Usage: zarr_downstream DIRECTORY */
#include <stdio.h>
#include <string.h>
#include <zarr.h>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        zarr_status rc_ = (call);                                                        \
        if (rc_ != ZARR_OK) {                                                            \
            fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call,           \
                    zarr_status_name(rc_), zarr_last_error());                           \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

static const char *META =
    "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [5, 7], \"data_type\": \"uint16\","
    " \"chunk_grid\": {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [2, 3]}},"
    " \"chunk_key_encoding\": {\"name\": \"default\"}, \"fill_value\": 7,"
    " \"codecs\": [{\"name\": \"bytes\", \"configuration\": {\"endian\": \"big\"}},"
    "              {\"name\": \"gzip\", \"configuration\": {\"level\": 5}}]}";

int main(int argc, char **argv) {
    char path[4096];
    uint64_t start[2] = {1, 2}, count[2] = {3, 4}, all[2] = {5, 7}, origin[2] = {0, 0}, shape[2];
    uint16_t data[3][4], back[5][7];
    size_t rank = 0, i, j;
    zarr_array *array = NULL;

    if (argc != 2) {
        fprintf(stderr, "usage: %s DIRECTORY\n", argv[0]);
        return 2;
    }
    if (strcmp(zarr_version(), ZARR_VERSION_STRING) != 0 || zarr_version_number() != ZARR_VERSION_NUMBER) {
        fprintf(stderr, "header %s but library %s\n", ZARR_VERSION_STRING, zarr_version());
        return 1;
    }
    snprintf(path, sizeof path, "%s/downstream.zarr", argv[1]);
    for (i = 0; i < 3; i++)
        for (j = 0; j < 4; j++)
            data[i][j] = (uint16_t)(1000 * i + j + 1);

    CHECK(zarr_create(path, META, &array));
    CHECK(zarr_write_region(array, start, count, data, sizeof data));
    CHECK(zarr_close(array));

    CHECK(zarr_open(path, ZARR_READ, &array));
    CHECK(zarr_array_rank(array, &rank));
    CHECK(zarr_array_shape(array, shape, rank));
    CHECK(zarr_read_region(array, origin, all, back, sizeof back));
    CHECK(zarr_close(array));
    if (rank != 2 || shape[0] != 5 || shape[1] != 7) {
        fprintf(stderr, "wrong rank or shape\n");
        return 1;
    }
    for (i = 0; i < 5; i++)
        for (j = 0; j < 7; j++) {
            int inside = i >= 1 && i < 4 && j >= 2 && j < 6;
            uint16_t want = inside ? data[i - 1][j - 2] : 7;
            if (back[i][j] != want) {
                fprintf(stderr, "element [%u][%u] is %u, expected %u\n", (unsigned)i, (unsigned)j,
                        (unsigned)back[i][j], (unsigned)want);
                return 1;
            }
        }
    printf("libzarr %s: wrote and read back %s\n", zarr_version(), path);
    return 0;
}
