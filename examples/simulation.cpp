// A simulation writing time steps into a sharded array, appending one step at a time by resize
// (C++ version of simulation.c): u[t, y, x], shards of 8 steps x the plane, inner chunks 1 x 32 x 32.
#include <zarr.hpp>

#include <cmath>
#include <cstdio>

namespace {
constexpr uint64_t NY = 64, NX = 96, STEPS = 20;
double value(uint64_t t, uint64_t y, uint64_t x) {
    return std::sin(0.1 * double(x) + 0.05 * double(t)) * std::cos(0.07 * double(y)) + 0.01 * double(t);
}
}  // namespace

int main() try {
    auto spec = zarr::ArraySpec::of<float>({0, NY, NX})
                    .chunks({1, 32, 32})
                    .shards({8, NY, NX})
                    .compressor("blosc-zstd", 5)
                    .dimension_names({"time", "y", "x"})
                    .attributes(R"({"units": "m/s", "dt": 0.5})");
    zarr::Array u = zarr::Array::create("simulation_cxx.zarr", spec);
    std::vector<double> plane(NY * NX);  // computed in double, stored as float32
    for (uint64_t t = 0; t < STEPS; ++t) {
        for (uint64_t y = 0; y < NY; ++y)
            for (uint64_t x = 0; x < NX; ++x) plane[y * NX + x] = double(float(value(t, y, x)));
        u.resize({t + 1, NY, NX});
        u.write({t, 0, 0}, {1, NY, NX}, plane);
    }
    auto step13 = u.read<double>({13, 0, 0}, {1, NY, NX});
    for (uint64_t y = 0; y < NY; ++y)
        for (uint64_t x = 0; x < NX; ++x)
            if (step13[y * NX + x] != double(float(value(13, y, x)))) {
                std::fprintf(stderr, "wrong value at (13, %llu, %llu)\n", (unsigned long long)y, (unsigned long long)x);
                return 1;
            }
    int stored = 0;
    for (uint64_t s = 0; s < u.grid_shape()[0]; ++s) stored += u.chunk_is_stored({s, 0, 0});
    std::printf("wrote %llu steps into %d shards; shape [%llu, %llu, %llu]\n", (unsigned long long)STEPS, stored,
                (unsigned long long)u.shape()[0], (unsigned long long)u.shape()[1], (unsigned long long)u.shape()[2]);
    return stored == 3 ? 0 : 1;
} catch (const zarr::Error &e) {
    std::fprintf(stderr, "%s (remove simulation_cxx.zarr left by an earlier run)\n", e.what());
    return 1;
}
