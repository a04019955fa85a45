// Reading a strided plane as double (C++ version of strided_plane.c): an int16 array [z, y, x] read at
// z = 2, every 4th y and every 3rd x, converted to double, into a vector and into a Fortran-order view.
#include <zarr.hpp>

#include <cstdio>

int main() try {
    constexpr uint64_t NZ = 5, NY = 40, NX = 30;
    auto counts = [](uint64_t z, uint64_t y, uint64_t x) { return int16_t(z * 1000 + y * 10 - x); };
    zarr::Array a;
    try {
        a = zarr::Array::create("counts_cxx.zarr", zarr::ArraySpec::of<int16_t>({NZ, NY, NX}).chunks({1, 16, 16}));
    } catch (const zarr::Error &e) {
        if (e.status() != ZARR_ERR_EXISTS) throw;
        a = zarr::Array::open("counts_cxx.zarr", zarr::Mode::read_write);
    }
    std::vector<int16_t> all(NZ * NY * NX);
    for (uint64_t z = 0; z < NZ; ++z)
        for (uint64_t y = 0; y < NY; ++y)
            for (uint64_t x = 0; x < NX; ++x) all[(z * NY + y) * NX + x] = counts(z, y, x);
    a.write(all);

    // C order: plane[j][i] = counts(2, 4 j, 3 i)
    std::vector<double> plane = a.read<double>({2, 0, 0}, {1, 10, 10}, {1, 4, 3});
    // Fortran order (y fastest), as a Fortran code would hold it
    std::vector<double> fplane(100);
    a.read({2, 0, 0}, zarr::View<double>::column_major(fplane.data(), {1, 10, 10}), {1, 4, 3});
    for (uint64_t j = 0; j < 10; ++j)
        for (uint64_t i = 0; i < 10; ++i)
            if (plane[j * 10 + i] != counts(2, 4 * j, 3 * i) || fplane[i * 10 + j] != counts(2, 4 * j, 3 * i)) {
                std::fprintf(stderr, "wrong value at (%llu, %llu)\n", (unsigned long long)j, (unsigned long long)i);
                return 1;
            }
    std::printf("plane(y=4, x=9) = %g\n", plane[1 * 10 + 3]);
    return 0;
} catch (const zarr::Error &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
