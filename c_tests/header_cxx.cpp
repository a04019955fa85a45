// include/zarr.h compiled as C++ (-Wall -Wextra -Wpedantic -Werror): the extern "C" guards, the enums and
// the macros must be clean C++, and the program must link and run against libzarr.
#include <zarr.h>

#include <cstdio>
#include <cstring>

namespace {

int failures = 0;

void expect(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "FAIL: %s (last error: %s)\n", what, zarr_last_error());
        ++failures;
    }
}

}  // namespace

int main() {
    // Every function has C linkage and the declared type.
    zarr_status (*open_fn)(const char *, int, zarr_array **) = zarr_open;
    zarr_status (*read_fn)(zarr_array *, const uint64_t *, const uint64_t *, void *, size_t) = zarr_read_region;
    zarr_status (*list_fn)(const zarr_group *, zarr_node_list **) = zarr_group_list;
    expect(open_fn != nullptr && read_fn != nullptr && list_fn != nullptr, "function pointers");

    // Enums and status macros are usable as C++ constants.
    static_assert(ZARR_OK == 0, "ZARR_OK");
    static_assert(ZARR_ERR_INVALID_ARGUMENT < 0 && -ZARR_ERR_INTERNAL > 0, "status macros are parenthesized");
    static_assert(sizeof(zarr_status) == 4, "zarr_status is int32_t");
    constexpr zarr_data_type dtype = ZARR_FLOAT16;
    constexpr zarr_node_type node = ZARR_NODE_GROUP;
    static_assert(dtype == 9 && node == 2, "enum values");

    // The library answers through the header's declarations.
    expect(std::strcmp(zarr_version(), ZARR_VERSION_STRING) == 0, "zarr_version() == ZARR_VERSION_STRING");
    expect(zarr_version_number() == ZARR_VERSION_NUMBER, "zarr_version_number() == ZARR_VERSION_NUMBER");
    expect(std::strcmp(zarr_status_name(ZARR_ERR_CHECKSUM), "ZARR_ERR_CHECKSUM") == 0, "zarr_status_name");

    zarr_array *array = reinterpret_cast<zarr_array *>(&failures);  // must be reset to NULL
    zarr_status rc = open_fn(nullptr, ZARR_READ, &array);
    expect(rc == ZARR_ERR_INVALID_ARGUMENT, "zarr_open(NULL) is ZARR_ERR_INVALID_ARGUMENT");
    expect(array == nullptr, "a failed zarr_open leaves *out NULL");
    expect(zarr_last_error()[0] != '\0', "zarr_last_error() explains the failure");
    expect(zarr_close(nullptr) == ZARR_OK, "zarr_close(NULL) is a no-op");

    if (failures == 0) std::printf("zarr.h compiles as C++ and libzarr %s answers through it\n", zarr_version());
    return failures == 0 ? 0 : 1;
}
