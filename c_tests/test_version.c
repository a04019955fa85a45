/* zarr_version() / zarr_version_number() against the header the test was compiled with. */
#include "test_util.h"

int main(void) {
    const char *v = zarr_version();
    unsigned maj = 99, min = 99, pat = 99;
    char tail = 0;

    CHECK(v != NULL);
    if (!v) return t_finish("test_version", NULL);
    CHECK(strcmp(v, ZARR_VERSION_STRING) == 0);
    CHECK(zarr_version() == v); /* static string: the same pointer every time */
    CHECK(zarr_version_number() == ZARR_VERSION_NUMBER);

    /* The header's macros agree with each other ... */
    CHECK(ZARR_VERSION_NUMBER == ZARR_VERSION_MAJOR * 10000 + ZARR_VERSION_MINOR * 100 + ZARR_VERSION_PATCH);
    /* ... and the library's string has the documented "MAJOR.MINOR.PATCH" form matching its number. */
    CHECK(sscanf(v, "%u.%u.%u%c", &maj, &min, &pat, &tail) == 3);
    CHECK(maj == ZARR_VERSION_MAJOR && min == ZARR_VERSION_MINOR && pat == ZARR_VERSION_PATCH);
    CHECK(zarr_version_number() == maj * 10000u + min * 100u + pat);

    /* No failing call yet: the last error is the empty string, never NULL. */
    CHECK(zarr_last_error() != NULL && zarr_last_error()[0] == '\0');
    return t_finish("test_version", NULL);
}
