/* libzarr quick start: create a 4x6 int32 array (2x3 chunks, zstd) from a spec, write it, read it back. */
#include <stdio.h>
#include <string.h>
#include <zarr.h>

static int fail(const char *what, zarr_status rc, zarr_array_spec *spec, zarr_array *array) {
    fprintf(stderr, "%s: %s: %s\n", what, zarr_status_name(rc), zarr_last_error());
    zarr_array_spec_free(spec);
    zarr_close(array);
    return 1;
}

int main(void) {
    const uint64_t shape[2] = {4, 6}, chunks[2] = {2, 3}, start[2] = {0, 0};
    const char *dims[2] = {"y", "x"};
    int32_t data[4][6], back[4][6];
    zarr_array_spec *spec = NULL;
    zarr_array *array = NULL;
    zarr_status rc;
    int i, j;

    for (i = 0; i < 4; i++)
        for (j = 0; j < 6; j++)
            data[i][j] = 10 * i + j;
    /* The spec: type and shape, then whatever differs from the defaults (about 1 MiB chunks, zstd 3). */
    if ((rc = zarr_array_spec_new(ZARR_INT32, 2, shape, &spec)) != ZARR_OK ||
        (rc = zarr_array_spec_set_chunks(spec, chunks, 2)) != ZARR_OK ||
        (rc = zarr_array_spec_set_compressor(spec, "zstd", 5)) != ZARR_OK ||
        (rc = zarr_array_spec_set_dimension_names(spec, dims, 2)) != ZARR_OK)
        return fail("spec", rc, spec, NULL);
    rc = zarr_create_from_spec("quickstart.zarr", spec, &array);
    if (rc == ZARR_ERR_EXISTS) /* left by a previous run: open it and overwrite the values */
        rc = zarr_open("quickstart.zarr", ZARR_READ_WRITE, &array);
    zarr_array_spec_free(spec);
    if (rc != ZARR_OK) return fail("create", rc, NULL, array);
    if ((rc = zarr_write_region(array, start, shape, data, sizeof data)) != ZARR_OK)
        return fail("write", rc, NULL, array);
    if ((rc = zarr_read_region(array, start, shape, back, sizeof back)) != ZARR_OK)
        return fail("read", rc, NULL, array);
    for (i = 0; i < 4; i++)
        for (j = 0; j < 6; j++)
            printf("%3d%s", (int)back[i][j], j == 5 ? "\n" : " ");
    if ((rc = zarr_close(array)) != ZARR_OK) return fail("close", rc, NULL, NULL);
    return memcmp(data, back, sizeof data) == 0 ? 0 : 1;
}
