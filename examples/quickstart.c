/* libzarr quick start: create a 4x6 int32 array (zstd), write it, read it back and print it. */
#include <stdio.h>
#include <zarr.h>

static const char *META =
    "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [4, 6], \"data_type\": \"int32\","
    " \"chunk_grid\": {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [2, 3]}},"
    " \"chunk_key_encoding\": {\"name\": \"default\"}, \"fill_value\": 0,"
    " \"codecs\": [{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}},"
    "              {\"name\": \"zstd\", \"configuration\": {\"level\": 3, \"checksum\": false}}]}";

static int fail(const char *what, zarr_status rc, zarr_array *array) {
    fprintf(stderr, "%s: %s: %s\n", what, zarr_status_name(rc), zarr_last_error());
    zarr_close(array);
    return 1;
}

int main(void) {
    const uint64_t start[2] = {0, 0}, count[2] = {4, 6};
    int32_t data[4][6], back[4][6];
    zarr_array *array = NULL;
    zarr_status rc;
    int i, j;

    for (i = 0; i < 4; i++)
        for (j = 0; j < 6; j++)
            data[i][j] = 10 * i + j;
    rc = zarr_create("quickstart.zarr", META, &array);
    if (rc == ZARR_ERR_EXISTS) /* left by a previous run: open it and overwrite the values */
        rc = zarr_open("quickstart.zarr", ZARR_READ_WRITE, &array);
    if (rc != ZARR_OK) return fail("create", rc, array);
    if ((rc = zarr_write_region(array, start, count, data, sizeof data)) != ZARR_OK)
        return fail("write", rc, array);
    if ((rc = zarr_read_region(array, start, count, back, sizeof back)) != ZARR_OK)
        return fail("read", rc, array);
    for (i = 0; i < 4; i++)
        for (j = 0; j < 6; j++)
            printf("%3d%s", (int)back[i][j], j == 5 ? "\n" : " ");
    if ((rc = zarr_close(array)) != ZARR_OK) return fail("close", rc, NULL);
    return 0;
}
