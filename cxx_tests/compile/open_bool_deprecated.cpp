// Array::open(path, bool) still compiles but is deprecated (-Werror=deprecated-declarations makes the
// warning an error, so this check sees it). With -DZARR_VALID the zarr::Mode form compiles cleanly.
#include <zarr.hpp>

zarr::Array f() {
#ifdef ZARR_VALID
    return zarr::Array::open("a.zarr", zarr::Mode::read_write);
#else
    return zarr::Array::open("a.zarr", true);
#endif
}
