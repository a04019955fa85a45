// zarr::Mode: Array::open() and Group::open() with a named open mode; the deprecated bool form still
// works (compiled here with the deprecation warning silenced; cxx.compile_open_bool_deprecated checks
// that the warning is given).
#include <zarr.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

int checks = 0, failures = 0;

#define EXPECT(cond)                                                                       \
    do {                                                                                   \
        ++checks;                                                                          \
        if (!(cond)) {                                                                     \
            ++failures;                                                                    \
            std::fprintf(stderr, "%s:%d: EXPECT failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                                  \
    } while (0)

// Whether writing one element through `a` is refused as read-only (anything else is reported).
bool write_refused(zarr::Array &a) {
    try {
        a.write({1}, {1}, std::vector<int32_t>{5});
        return false;
    } catch (const zarr::Error &e) {
        if (e.status() != ZARR_ERR_READ_ONLY) std::fprintf(stderr, "unexpected: %s\n", e.what());
        return e.status() == ZARR_ERR_READ_ONLY;
    }
}

}  // namespace

int main() {
    const char *base = std::getenv("ZARR_TEST_TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/zarr-cxx-mode-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) return 2;
    const std::string dir = buf.data();
    try {
        static_assert(static_cast<int>(zarr::Mode::read_only) == ZARR_READ, "Mode::read_only is ZARR_READ");
        static_assert(static_cast<int>(zarr::Mode::read_write) == ZARR_READ_WRITE, "Mode::read_write is ZARR_READ_WRITE");
        zarr::Group g = zarr::Group::create(dir + "/g");
        g.create_array("a", zarr::ArraySpec::of<int32_t>({4}));
        g.close();
        const std::string a_path = dir + "/g/a";

        zarr::Array r = zarr::Array::open(a_path);   // the default: read only
        EXPECT(write_refused(r));
        zarr::Array ro = zarr::Array::open(a_path, zarr::Mode::read_only);
        EXPECT(write_refused(ro));
        zarr::Array rw = zarr::Array::open(a_path, zarr::Mode::read_write);
        EXPECT(!write_refused(rw));
        EXPECT((zarr::Array::open(a_path).read<int32_t>() == std::vector<int32_t>{0, 5, 0, 0}));

        zarr::Group gr = zarr::Group::open(dir + "/g");
        bool refused = false;
        try {
            gr.set_attributes(R"({"x": 1})");
        } catch (const zarr::Error &e) {
            refused = e.status() == ZARR_ERR_READ_ONLY;
        }
        EXPECT(refused);
        zarr::Group gw = zarr::Group::open(dir + "/g", zarr::Mode::read_write);
        gw.set_attributes(R"({"x": 1})");
        EXPECT(zarr::Group::open(dir + "/g").attributes().find("\"x\"") != std::string::npos);

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        zarr::Array old_ro = zarr::Array::open(a_path, false);
        zarr::Array old_rw = zarr::Array::open(a_path, true);
        zarr::Group old_g = zarr::Group::open(dir + "/g", true);
#pragma GCC diagnostic pop
        EXPECT(write_refused(old_ro));
        EXPECT(!write_refused(old_rw));
        old_g.set_attributes(R"({"y": 2})");
    } catch (const zarr::Error &e) {
        std::fprintf(stderr, "unexpected zarr::Error: %s\n", e.what());
        return 1;
    }
    std::printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
