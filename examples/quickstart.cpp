// libzarr C++ quick start (include/zarr.hpp): create a 4x6 int32 array from a spec, write it, read it
// back as double and print it. Errors are zarr::Error exceptions.
#include <zarr.hpp>

#include <cstdio>

int main() try {
    zarr::Array a;
    try {
        a = zarr::Array::create("quickstart_cxx.zarr", zarr::ArraySpec::of<int32_t>({4, 6}).chunks({2, 3}));
    } catch (const zarr::Error &e) {
        if (e.status() != ZARR_ERR_EXISTS) throw;
        a = zarr::Array::open("quickstart_cxx.zarr", zarr::Mode::read_write);  // left by a previous run
    }
    std::vector<int32_t> data(4 * 6);
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 6; ++j) data[i * 6 + j] = 10 * i + j;
    a.write(data);
    std::vector<double> back = a.read<double>();
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 6; ++j) std::printf("%3g%s", back[i * 6 + j], j == 5 ? "\n" : " ");
    return back[23] == 35.0 ? 0 : 1;
} catch (const zarr::Error &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
}
