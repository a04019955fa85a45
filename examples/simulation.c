/* A simulation writing time steps into a sharded array, appending one step at a time by resize:
 * u[t, y, x] with shards of 8 steps x the whole plane, inner chunks of 1 step x 32 x 32. Then it
 * checks what it stored. Created from a creation spec (no JSON). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <zarr.h>

#define NY 64
#define NX 96
#define STEPS 20

static double value(int t, int y, int x) { return sin(0.1 * x + 0.05 * t) * cos(0.07 * y) + 0.01 * t; }

static int fail(const char *what, zarr_status rc) {
    fprintf(stderr, "%s: %s: %s\n", what, zarr_status_name(rc), zarr_last_error());
    return 1;
}

int main(void) {
    const uint64_t shape[3] = {0, NY, NX}, chunks[3] = {1, 32, 32}, shards[3] = {8, NY, NX};
    const char *dims[3] = {"time", "y", "x"};
    zarr_array_spec *spec = NULL;
    zarr_array *u = NULL;
    zarr_status rc;
    static float plane[NY][NX];
    static double back[NY][NX];
    int t, y, x, stored = 0;
    uint64_t grid[3];

    if ((rc = zarr_array_spec_new(ZARR_FLOAT32, 3, shape, &spec)) != ZARR_OK ||
        (rc = zarr_array_spec_set_chunks(spec, chunks, 3)) != ZARR_OK ||
        (rc = zarr_array_spec_set_shards(spec, shards, 3)) != ZARR_OK ||
        (rc = zarr_array_spec_set_compressor(spec, "blosc-zstd", 5)) != ZARR_OK ||
        (rc = zarr_array_spec_set_dimension_names(spec, dims, 3)) != ZARR_OK ||
        (rc = zarr_array_spec_set_attributes(spec, "{\"units\": \"m/s\", \"dt\": 0.5}")) != ZARR_OK)
        return fail("spec", rc);
    rc = zarr_create_from_spec("simulation.zarr", spec, &u);
    zarr_array_spec_free(spec);
    if (rc != ZARR_OK) return fail("create (remove simulation.zarr from an earlier run)", rc);

    for (t = 0; t < STEPS; t++) {
        const uint64_t new_shape[3] = {(uint64_t)t + 1, NY, NX}, start[3] = {(uint64_t)t, 0, 0}, count[3] = {1, NY, NX};
        for (y = 0; y < NY; y++)
            for (x = 0; x < NX; x++) plane[y][x] = (float)value(t, y, x);
        if ((rc = zarr_array_resize(u, new_shape, 3)) != ZARR_OK) return fail("resize", rc);
        if ((rc = zarr_write_region(u, start, count, plane, sizeof plane)) != ZARR_OK) return fail("write", rc);
    }

    /* check: step 13 read back as double, and the shard count */
    {
        const uint64_t start[3] = {13, 0, 0}, count[3] = {1, NY, NX};
        if ((rc = zarr_read_hyperslab(u, start, count, NULL, NULL, ZARR_FLOAT64, back, sizeof back)) != ZARR_OK)
            return fail("read", rc);
    }
    for (y = 0; y < NY; y++)
        for (x = 0; x < NX; x++)
            if (back[y][x] != (double)(float)value(13, y, x)) {
                fprintf(stderr, "wrong value at (13, %d, %d)\n", y, x);
                return 1;
            }
    if ((rc = zarr_array_grid_shape(u, grid, 3)) != ZARR_OK) return fail("grid", rc);
    for (t = 0; t < (int)grid[0]; t++) {
        const uint64_t idx[3] = {(uint64_t)t, 0, 0};
        int is = 0;
        if ((rc = zarr_array_chunk_is_stored(u, idx, &is)) != ZARR_OK) return fail("chunk_is_stored", rc);
        stored += is;
    }
    printf("wrote %d steps of %dx%d into %d shards (%llu in the grid)\n", STEPS, NY, NX, stored,
           (unsigned long long)grid[0]);
    if ((rc = zarr_close(u)) != ZARR_OK) return fail("close", rc);
    return stored == 3 ? 0 : 1;
}
