/* Strided, typed and any-layout selections (zarr_read_hyperslab / zarr_write_hyperslab), resize and the
 * chunk-level calls, through the C API. Expected values are computed here from the formula that
 * filled the array, element by element (no library code involved). */
#include "test_util.h" /* first: it sets _POSIX_C_SOURCE */

#include <math.h>
#include <stdint.h>

/* A 13 x 11 int16 array in chunks of 4 x 3, zstd; value(i, j) = 100 * i + j - 500. */
static const char *META =
    "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [13, 11], \"data_type\": \"int16\","
    " \"chunk_grid\": {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [4, 3]}},"
    " \"chunk_key_encoding\": {\"name\": \"default\"}, \"fill_value\": 7,"
    " \"codecs\": [{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}},"
    "              {\"name\": \"zstd\", \"configuration\": {\"level\": 1, \"checksum\": false}}]}";

static int16_t value(uint64_t i, uint64_t j) { return (int16_t)(100 * (int)i + (int)j - 500); }

static char *join(const char *a, const char *b) {
    char *p = malloc(strlen(a) + strlen(b) + 2);
    sprintf(p, "%s/%s", a, b);
    return p;
}

int main(void) {
    char *tmp = t_mkdtemp("selection");
    char *path = join(tmp, "a.zarr");
    zarr_array *a = NULL;
    static int16_t all[13 * 11];
    uint64_t i, j;

    for (i = 0; i < 13; i++)
        for (j = 0; j < 11; j++) all[i * 11 + j] = value(i, j);
    CHECK_OK(zarr_create(path, META, &a));
    {
        const uint64_t start[2] = {0, 0}, count[2] = {13, 11};
        CHECK_OK(zarr_write_region(a, start, count, all, sizeof all));
    }

    /* Rows 1, 4, 7, 10 and columns 0, 2, ..., 10 (steps 3 and 2) as double, Fortran order: the
     * header's example. B(r, c) column-major: element (r, c) at r + 4 * c. */
    {
        const uint64_t start[2] = {1, 0}, count[2] = {4, 6}, step[2] = {3, 2};
        const int64_t fortran[2] = {1, 4};
        double b[24];
        int ok = 1;
        CHECK_OK(zarr_read_hyperslab(a, start, count, step, fortran, ZARR_FLOAT64, b, sizeof b));
        for (i = 0; i < 4; i++)
            for (j = 0; j < 6; j++) ok &= b[i + 4 * j] == (double)value(1 + 3 * i, 2 * j);
        CHECK(ok);
        /* A buffer one element short of the span: refused. */
        CHECK_STATUS(zarr_read_hyperslab(a, start, count, step, fortran, ZARR_FLOAT64, b, sizeof b - 1),
                     ZARR_ERR_BUFFER_SIZE);
    }
    /* Padded rows (stride 10 elements for 6 columns) of int32; untouched padding keeps its value. */
    {
        const uint64_t start[2] = {2, 1}, count[2] = {3, 6};
        const int64_t padded[2] = {10, 1};
        int32_t b[30];
        int ok = 1;
        for (i = 0; i < 30; i++) b[i] = -99;
        CHECK_OK(zarr_read_hyperslab(a, start, count, NULL, padded, ZARR_INT32, b, sizeof b - 4 * sizeof(int32_t)));
        for (i = 0; i < 3; i++)
            for (j = 0; j < 10; j++) ok &= b[i * 10 + j] == (j < 6 ? value(2 + i, 1 + j) : -99);
        CHECK(ok);
    }
    /* uint8 cannot hold the negative values: ZARR_ERR_VALUE; int8 can hold row 5 columns 0..3? no:
     * value(5, j) = j, so [0, 3] converts. */
    {
        const uint64_t s1[2] = {0, 0}, c1[2] = {2, 2}, s2[2] = {5, 0}, c2[2] = {1, 4};
        uint8_t u[4];
        int8_t k[4];
        CHECK_STATUS(zarr_read_hyperslab(a, s1, c1, NULL, NULL, ZARR_UINT8, u, sizeof u), ZARR_ERR_VALUE);
        CHECK_OK(zarr_read_hyperslab(a, s2, c2, NULL, NULL, ZARR_INT8, k, sizeof k));
        CHECK(k[0] == 0 && k[3] == 3);
    }
    /* Argument errors. */
    {
        const uint64_t start[2] = {0, 0}, count[2] = {2, 2}, zero_step[2] = {1, 0}, far[2] = {7, 12};
        const int64_t overlap[2] = {1, 1}, negative[2] = {-2, 1};
        int16_t b[16];
        CHECK_STATUS(zarr_read_hyperslab(a, start, count, zero_step, NULL, ZARR_INT16, b, sizeof b), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_read_hyperslab(a, start, count, far, NULL, ZARR_INT16, b, sizeof b), ZARR_ERR_OUT_OF_BOUNDS);
        CHECK_STATUS(zarr_read_hyperslab(a, start, count, NULL, overlap, ZARR_INT16, b, sizeof b), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_read_hyperslab(a, start, count, NULL, negative, ZARR_INT16, b, sizeof b), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_read_hyperslab(a, start, count, NULL, NULL, ZARR_COMPLEX64, b, sizeof b), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_read_hyperslab(a, start, count, NULL, NULL, (zarr_data_type)999, b, sizeof b), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_read_hyperslab(a, NULL, count, NULL, NULL, ZARR_INT16, b, sizeof b), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_STATUS(zarr_read_hyperslab(NULL, start, count, NULL, NULL, ZARR_INT16, b, sizeof b), ZARR_ERR_INVALID_HANDLE);
    }
    /* Strided write from doubles (truncated toward zero), then NaN refused with nothing stored. */
    {
        const uint64_t start[2] = {0, 1}, count[2] = {5, 3}, step[2] = {3, 4};
        double src[15];
        int16_t back[13 * 11];
        const uint64_t s0[2] = {0, 0}, c0[2] = {13, 11};
        int ok = 1;
        for (i = 0; i < 15; i++) src[i] = -1.9 * (double)i;
        CHECK_OK(zarr_write_hyperslab(a, start, count, step, NULL, ZARR_FLOAT64, src, sizeof src));
        for (i = 0; i < 5; i++)
            for (j = 0; j < 3; j++) all[(3 * i) * 11 + 1 + 4 * j] = (int16_t)(-1.9 * (double)(i * 3 + j));
        CHECK_OK(zarr_read_region(a, s0, c0, back, sizeof back));
        for (i = 0; i < 13 * 11; i++) ok &= back[i] == all[i];
        CHECK(ok);
        src[7] = NAN;
        CHECK_STATUS(zarr_write_hyperslab(a, start, count, step, NULL, ZARR_FLOAT64, src, sizeof src), ZARR_ERR_VALUE);
        CHECK_OK(zarr_read_region(a, s0, c0, back, sizeof back));
        ok = 1;
        for (i = 0; i < 13 * 11; i++) ok &= back[i] == all[i];
        CHECK(ok);
    }
    /* Chunk-level calls. */
    {
        uint64_t grid[2], chunks[2 * 16], origin[2], shape[2], c[2] = {3, 3}, nbytes_chunk = 4 * 3 * 2;
        size_t n = 0, nb = 0;
        const uint64_t start[2] = {3, 2}, count[2] = {2, 2}, step[2] = {2, 5};
        int stored = -1;
        int16_t chunk[12];
        CHECK_OK(zarr_array_grid_shape(a, grid, 2));
        CHECK(grid[0] == 4 && grid[1] == 4);
        /* rows 3, 5 -> chunks 0, 1; cols 2, 7 -> chunks 0, 2 */
        CHECK_OK(zarr_array_selection_chunks(a, start, count, step, NULL, 0, &n));
        CHECK(n == 4);
        CHECK_OK(zarr_array_selection_chunks(a, start, count, step, chunks, 16, &n));
        CHECK(chunks[0] == 0 && chunks[1] == 0 && chunks[2] == 0 && chunks[3] == 2 && chunks[6] == 1 && chunks[7] == 2);
        CHECK_OK(zarr_array_chunk_region(a, c, origin, shape));
        CHECK(origin[0] == 12 && origin[1] == 9 && shape[0] == 4 && shape[1] == 3);
        CHECK_OK(zarr_array_chunk_is_stored(a, c, &stored));
        CHECK(stored == 1);
        CHECK_OK(zarr_array_read_chunk(a, c, chunk, sizeof chunk));
        CHECK(chunk[0] == all[12 * 11 + 9] && chunk[1] == all[12 * 11 + 10] && chunk[2] == 7 && chunk[3] == 7);
        CHECK_STATUS(zarr_array_read_chunk(a, c, chunk, (size_t)nbytes_chunk - 2), ZARR_ERR_BUFFER_SIZE);
        CHECK_OK(zarr_array_erase_chunk(a, c));
        CHECK_OK(zarr_array_chunk_is_stored(a, c, &stored));
        CHECK(stored == 0);
        c[0] = 4;
        CHECK_STATUS(zarr_array_chunk_is_stored(a, c, &stored), ZARR_ERR_OUT_OF_BOUNDS);
        CHECK_OK(zarr_array_region_nbytes(a, count, 2, ZARR_FLOAT64, &nb));
        CHECK(nb == 32);
    }
    /* Resize: shrink deletes the chunks wholly outside, grow shows the fill value. */
    {
        const uint64_t small[2] = {5, 4}, big[2] = {9, 9};
        const uint64_t s0[2] = {0, 0}, c0[2] = {9, 9};
        uint64_t shape[2];
        int16_t back[81];
        char *gone = join(path, "c/2/0"), *kept = join(path, "c/1/1");
        CHECK_OK(zarr_array_resize(a, small, 2));
        CHECK_OK(zarr_array_shape(a, shape, 2));
        CHECK(shape[0] == 5 && shape[1] == 4);
        CHECK(!t_exists(gone) && t_exists(kept));
        CHECK_STATUS(zarr_array_resize(a, small, 3), ZARR_ERR_INVALID_ARGUMENT);
        CHECK_OK(zarr_array_resize(a, big, 2));
        CHECK_OK(zarr_read_region(a, s0, c0, back, sizeof back));
        /* (4, 3) lies in chunk (1, 1), which straddled the edge and keeps its values; (8, 8) was deleted. */
        CHECK(back[4 * 9 + 3] == all[4 * 11 + 3] && back[8 * 9 + 8] == 7 && back[0] == all[0]);
        free(gone);
        free(kept);
    }
    CHECK_OK(zarr_close(a));
    {
        zarr_array *ro = NULL;
        const uint64_t shape[2] = {3, 3};
        CHECK_OK(zarr_open(path, ZARR_READ, &ro));
        CHECK_STATUS(zarr_array_resize(ro, shape, 2), ZARR_ERR_READ_ONLY);
        CHECK_OK(zarr_close(ro));
    }
    free(path);
    return t_finish("test_selection", tmp);
}
