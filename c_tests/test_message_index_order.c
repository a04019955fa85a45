/* zarr_set_message_index_order(): the messages of failing calls quote a caller's selection in C order,
 * 0-based (the default) or, for Fortran bindings, in Fortran order, 1-based; the setting is per thread,
 * returns the previous one, refuses other values, and never changes what the arguments mean. */
#include "test_util.h"

#include <pthread.h>

static zarr_array *arr;

/* An out-of-bounds read of the 3-D array [10, 5, 4]: start [9, 2, 1], count [2, 3, 3]. */
static zarr_status read_past_end(void) {
    const uint64_t start[3] = {9, 2, 1}, count[3] = {2, 3, 3};
    static int32_t buf[18];
    return zarr_read_region(arr, start, count, buf, sizeof buf);
}

static const char *c_text = "selection start [9, 2, 1] count [2, 3, 3] step [1, 1, 1] exceeds the array shape "
                            "[10, 5, 4] in dimension 0";
static const char *f_text = "selection start [2, 3, 10] count [3, 3, 2] step [1, 1, 1] exceeds the array shape "
                            "[4, 5, 10] in dimension 3";

/* Another thread keeps the default, whatever the main thread set. */
static void *other_thread(void *out) {
    *(int *)out = read_past_end() == ZARR_ERR_OUT_OF_BOUNDS && strstr(zarr_last_error(), c_text) != NULL;
    return NULL;
}

int main(void) {
    char *dir = t_mkdtemp("index-order"), path[4200];
    snprintf(path, sizeof path, "%s/a.zarr", dir);
    const uint64_t shape[3] = {10, 5, 4};
    zarr_array_spec *spec = NULL;
    CHECK_OK(zarr_array_spec_new(ZARR_INT32, 3, shape, &spec));
    CHECK_OK(zarr_create_from_spec(path, spec, &arr));
    zarr_array_spec_free(spec);

    CHECK_STATUS(read_past_end(), ZARR_ERR_OUT_OF_BOUNDS);
    CHECK_MSG(c_text);

    int previous = -1;
    CHECK_OK(zarr_set_message_index_order(ZARR_INDEX_ORDER_FORTRAN, &previous));
    CHECK(previous == ZARR_INDEX_ORDER_C);
    CHECK_STATUS(read_past_end(), ZARR_ERR_OUT_OF_BOUNDS);
    CHECK_MSG(f_text);
    /* a chunk outside the grid, in the same convention */
    const uint64_t chunk[3] = {0, 0, 4};
    int stored = 0;
    CHECK_STATUS(zarr_array_chunk_is_stored(arr, chunk, &stored), ZARR_ERR_OUT_OF_BOUNDS);
    CHECK_MSG("chunk [5, 1, 1] is outside the chunk grid");

    int other_ok = 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_thread, &other_ok) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(other_ok == 1);

    /* A bad value changes nothing. */
    CHECK_STATUS(zarr_set_message_index_order(2, &previous), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_MSG("neither ZARR_INDEX_ORDER_C");
    CHECK_OK(zarr_set_message_index_order(ZARR_INDEX_ORDER_C, &previous));
    CHECK(previous == ZARR_INDEX_ORDER_FORTRAN);
    CHECK_STATUS(read_past_end(), ZARR_ERR_OUT_OF_BOUNDS);
    CHECK_MSG(c_text);
    CHECK_OK(zarr_set_message_index_order(ZARR_INDEX_ORDER_C, NULL));   /* previous may be NULL */

    CHECK_OK(zarr_close(arr));
    free(dir);
    printf("%d checks, %d failures\n", t_checks, t_failures);
    return t_failures ? 1 : 0;
}
