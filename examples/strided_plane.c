/* Reading a strided plane as double: an int16 array [z, y, x] (e.g. scaled sensor counts) read at
 * z = 2, every 4th y and every 3rd x, converted to double on the fly, into a Fortran-order buffer. */
#include <stdio.h>
#include <zarr.h>

#define NZ 5
#define NY 40
#define NX 30

static int fail(const char *what, zarr_status rc) {
    fprintf(stderr, "%s: %s: %s\n", what, zarr_status_name(rc), zarr_last_error());
    return 1;
}

int main(void) {
    const uint64_t shape[3] = {NZ, NY, NX}, chunks[3] = {1, 16, 16}, zero[3] = {0, 0, 0};
    static int16_t counts[NZ][NY][NX];
    /* the plane: y = 0, 4, ..., 36 (10 values) and x = 0, 3, ..., 27 (10 values) */
    const uint64_t start[3] = {2, 0, 0}, count[3] = {1, 10, 10}, step[3] = {1, 4, 3};
    /* column-major plane(ny=10, nx=10): y fastest */
    const int64_t stride[3] = {0, 1, 10};
    double plane[10 * 10];
    zarr_array_spec *spec = NULL;
    zarr_array *a = NULL;
    zarr_status rc;
    int z, y, x;

    for (z = 0; z < NZ; z++)
        for (y = 0; y < NY; y++)
            for (x = 0; x < NX; x++) counts[z][y][x] = (int16_t)(z * 1000 + y * 10 - x);
    if ((rc = zarr_array_spec_new(ZARR_INT16, 3, shape, &spec)) != ZARR_OK ||
        (rc = zarr_array_spec_set_chunks(spec, chunks, 3)) != ZARR_OK)
        return fail("spec", rc);
    rc = zarr_create_from_spec("counts.zarr", spec, &a);
    zarr_array_spec_free(spec);
    if (rc == ZARR_ERR_EXISTS) rc = zarr_open("counts.zarr", ZARR_READ_WRITE, &a);
    if (rc != ZARR_OK) return fail("create", rc);
    if ((rc = zarr_write_region(a, zero, shape, counts, sizeof counts)) != ZARR_OK) return fail("write", rc);

    if ((rc = zarr_read_hyperslab(a, start, count, step, stride, ZARR_FLOAT64, plane, sizeof plane)) != ZARR_OK)
        return fail("read", rc);
    for (y = 0; y < 10; y++)
        for (x = 0; x < 10; x++)
            if (plane[x * 10 + y] != (double)counts[2][4 * y][3 * x]) {
                fprintf(stderr, "plane(%d, %d) = %g, expected %d\n", y, x, plane[x * 10 + y], counts[2][4 * y][3 * x]);
                return 1;
            }
    printf("plane(y=4, x=9) = %g (counts[2][4][9] = %d)\n", plane[3 * 10 + 1], counts[2][4][9]);
    return zarr_close(a) == ZARR_OK ? 0 : 1;
}
