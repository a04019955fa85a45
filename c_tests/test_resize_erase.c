/* The recipe of zarr_array_resize()'s documentation for erasing old values: shrinking keeps the chunk
 * the new edge cuts through, so growing again shows its old values; writing the fill value over the
 * grown part (zarr_write_hyperslab() from the one value zarr_array_fill_value() gives, all buffer
 * strides 0) leaves the fill value everywhere there and deletes the chunks that hold nothing else.
 * Checked for a 2-D float64 array grown back along both dimensions (two writes, an L-shaped region). */
#include "test_util.h"

#define NY 10
#define NX 9

static double value(uint64_t y, uint64_t x) { return (double)(y * 100 + x) + 0.5; }

int main(void) {
    char *dir = t_mkdtemp("resize-erase"), path[4200];
    snprintf(path, sizeof path, "%s/a.zarr", dir);
    const uint64_t shape[2] = {NY, NX}, chunks[2] = {4, 4};
    const double fill_in = -1.25;
    zarr_array_spec *spec = NULL;
    zarr_array *a = NULL;
    CHECK_OK(zarr_array_spec_new(ZARR_FLOAT64, 2, shape, &spec));
    CHECK_OK(zarr_array_spec_set_chunks(spec, chunks, 2));
    CHECK_OK(zarr_array_spec_set_fill_value(spec, &fill_in, sizeof fill_in));
    CHECK_OK(zarr_create_from_spec(path, spec, &a));
    zarr_array_spec_free(spec);
    static double all[NY][NX];
    for (uint64_t y = 0; y < NY; y++)
        for (uint64_t x = 0; x < NX; x++) all[y][x] = value(y, x);
    const uint64_t zero[2] = {0, 0};
    CHECK_OK(zarr_write_region(a, zero, shape, all, sizeof all));

    /* Shrink to 6 x 5 (cutting through chunk rows 1 and columns 1), grow back to 10 x 9. */
    const uint64_t small[2] = {6, 5};
    CHECK_OK(zarr_array_resize(a, small, 2));
    CHECK_OK(zarr_array_resize(a, shape, 2));
    static double back[NY][NX];
    CHECK_OK(zarr_read_region(a, zero, shape, back, sizeof back));
    /* The documented behaviour: old values in the chunks that straddled the smaller edge (rows 6..7 of
       chunk row 1, columns 5..7 of chunk column 1), the fill value in the chunks that were deleted. */
    CHECK(back[6][0] == value(6, 0) && back[7][3] == value(7, 3));
    CHECK(back[0][5] == value(0, 5) && back[5][7] == value(5, 7));
    CHECK(back[8][0] == fill_in && back[0][8] == fill_in);

    /* The recipe: the fill value over the grown rows, then over the grown columns of the old rows. */
    double fill = 0;
    CHECK_OK(zarr_array_fill_value(a, &fill, sizeof fill));
    CHECK(fill == fill_in);
    const int64_t every[2] = {0, 0};
    const uint64_t rows_start[2] = {small[0], 0}, rows_count[2] = {NY - small[0], NX};
    const uint64_t cols_start[2] = {0, small[1]}, cols_count[2] = {small[0], NX - small[1]};
    CHECK_OK(zarr_write_hyperslab(a, rows_start, rows_count, NULL, every, ZARR_FLOAT64, &fill, sizeof fill));
    CHECK_OK(zarr_write_hyperslab(a, cols_start, cols_count, NULL, every, ZARR_FLOAT64, &fill, sizeof fill));

    CHECK_OK(zarr_read_region(a, zero, shape, back, sizeof back));
    long wrong = 0;
    for (uint64_t y = 0; y < NY; y++)
        for (uint64_t x = 0; x < NX; x++)
            wrong += back[y][x] != (y < small[0] && x < small[1] ? value(y, x) : fill_in);
    CHECK(wrong == 0);
    /* Chunks holding only the fill value now are not stored; those with kept values are. */
    int stored = -1;
    const uint64_t c_fill[2] = {2, 0}, c_edge[2] = {1, 1}, c_cut_off[2] = {0, 2};
    CHECK_OK(zarr_array_chunk_is_stored(a, c_fill, &stored));
    CHECK(stored == 0);
    CHECK_OK(zarr_array_chunk_is_stored(a, c_cut_off, &stored));
    CHECK(stored == 0);
    CHECK_OK(zarr_array_chunk_is_stored(a, c_edge, &stored));
    CHECK(stored == 1);
    CHECK_OK(zarr_close(a));
    free(dir);
    printf("%d checks, %d failures\n", t_checks, t_failures);
    return t_failures ? 1 : 0;
}
