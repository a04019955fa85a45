// Must not compile: ArraySpec::fill_value() takes numbers (and strings), not other types. With
// -DZARR_VALID the same call with a number compiles (the control that the failure is the refusal).
#include <zarr.hpp>

struct Pair {
    float a, b;
};

void f(zarr::ArraySpec &s) {
#ifdef ZARR_VALID
    s.fill_value(1.5f);
#else
    s.fill_value(Pair{1.0f, 2.0f});
#endif
}
