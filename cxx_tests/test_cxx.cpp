// include/zarr.hpp: RAII handles, zarr::Error, creation specs, typed and strided reads and writes
// (vectors and pointer + shape views, C and Fortran order, steps), conversions between types, resize,
// attributes, groups and children, strings. Every value read is compared with one computed here from
// the formula that wrote it. Built with -std=c++17 -Wall -Wextra -Wpedantic -Werror.
#include <zarr.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <unistd.h>

namespace {

int checks = 0, failures = 0;

#define EXPECT(cond)                                                                  \
    do {                                                                              \
        ++checks;                                                                     \
        if (!(cond)) {                                                                \
            ++failures;                                                               \
            std::fprintf(stderr, "%s:%d: EXPECT failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                             \
    } while (0)

// The call must throw zarr::Error with `status`.
void expect_throws(zarr_status status, const std::function<void()> &f, int line) {
    ++checks;
    try {
        f();
    } catch (const zarr::Error &e) {
        if (e.status() == status && std::string(e.what()).size() > 20) return;
        std::fprintf(stderr, "line %d: threw %s, expected %s\n", line, e.what(), zarr_status_name(status));
        ++failures;
        return;
    }
    std::fprintf(stderr, "line %d: no exception, expected %s\n", line, zarr_status_name(status));
    ++failures;
}
#define EXPECT_THROWS(status, ...) expect_throws(status, [&]() { __VA_ARGS__; }, __LINE__)

std::string dir;

std::string path(const std::string &rel) { return dir + "/" + rel; }

// Value of element (i, j) of the 2-D test arrays.
double f2(uint64_t i, uint64_t j) { return static_cast<double>(i) * 100.0 + static_cast<double>(j) - 250.0; }

void test_spec_and_vectors() {
    const uint64_t ny = 30, nx = 20;
    auto spec = zarr::ArraySpec::of<int16_t>({ny, nx});
    spec.chunks({8, 6}).compressor("blosc-lz4", 5).fill_value(int16_t(-1)).dimension_names({"y", "x"})
        .attributes(R"({"units":"K"})");
    EXPECT(spec.to_json().find("\"blosc\"") != std::string::npos);
    // chaining on a temporary moves it; the level reaches the metadata
    auto moved = zarr::ArraySpec::of<double>({3}).chunks({2}).compressor("gzip", 4).zarr_format(2);
    EXPECT(moved.to_json().find("\"level\": 4") != std::string::npos);
    EXPECT(moved.to_json().find("\"dtype\": \"<f8\"") != std::string::npos);
    zarr::Array a = zarr::Array::create(path("i16"), spec);
    EXPECT(a.rank() == 2);
    EXPECT((a.shape() == zarr::Shape{ny, nx}));
    EXPECT((a.chunk_shape() == zarr::Shape{8, 6}));
    EXPECT((a.grid_shape() == zarr::Shape{4, 4}));
    EXPECT(!a.is_sharded());
    EXPECT(a.data_type() == ZARR_INT16 && a.element_size() == 2);
    EXPECT(a.zarr_format() == 3);
    EXPECT(a.fill_value<int16_t>() == -1);
    EXPECT(a.dimension_name(0).value_or("") == "y" && a.dimension_name(1).value_or("") == "x");
    EXPECT(a.attributes() == R"({"units":"K"})");
    EXPECT(!a.chunk_is_stored({0, 0}));

    // write the whole array from doubles (converted to int16), read back as int32 and as float
    std::vector<double> data(ny * nx);
    for (uint64_t i = 0; i < ny; ++i)
        for (uint64_t j = 0; j < nx; ++j) data[i * nx + j] = f2(i, j);
    a.write(data);
    EXPECT(a.chunk_is_stored({0, 0}) && a.chunk_is_stored({3, 3}));
    auto as_i32 = a.read<int32_t>();
    auto as_f = a.read<float>();
    bool ok = as_i32.size() == ny * nx && as_f.size() == ny * nx;
    for (uint64_t i = 0; ok && i < ny; ++i)
        for (uint64_t j = 0; j < nx; ++j)
            ok = ok && as_i32[i * nx + j] == static_cast<int32_t>(f2(i, j)) && as_f[i * nx + j] == static_cast<float>(f2(i, j));
    EXPECT(ok);

    // a strided hyperslab: rows 1, 4, 7, ...; columns 2, 7, 12, 17
    auto h = a.read<double>({1, 2}, {9, 4}, {3, 5});
    ok = h.size() == 36;
    for (uint64_t k = 0; ok && k < 9; ++k)
        for (uint64_t l = 0; l < 4; ++l) ok = ok && h[k * 4 + l] == f2(1 + 3 * k, 2 + 5 * l);
    EXPECT(ok);

    // write a strided hyperslab from int64 values, read it back
    std::vector<int64_t> w(5 * 3);
    for (size_t k = 0; k < w.size(); ++k) w[k] = 1000 + static_cast<int64_t>(k);
    a.write({0, 1}, {5, 3}, w, {6, 7});
    auto back = a.read<int64_t>();
    ok = true;
    for (uint64_t i = 0; i < ny; ++i)
        for (uint64_t j = 0; j < nx; ++j) {
            bool hit = i % 6 == 0 && i / 6 < 5 && j >= 1 && (j - 1) % 7 == 0 && (j - 1) / 7 < 3;
            int64_t want = hit ? 1000 + static_cast<int64_t>((i / 6) * 3 + (j - 1) / 7) : static_cast<int64_t>(f2(i, j));
            ok = ok && back[i * nx + j] == want;
        }
    EXPECT(ok);

    // conversion failures and size mismatches
    EXPECT_THROWS(ZARR_ERR_VALUE, a.write({0, 0}, {1, 1}, std::vector<double>{1e6}));
    EXPECT(a.read<int16_t>({0, 0}, {1, 1})[0] == -250);  // unchanged: f2(0, 0)
    EXPECT_THROWS(ZARR_ERR_VALUE, a.write({0, 0}, {1, 1}, std::vector<float>{NAN}));
    EXPECT_THROWS(ZARR_ERR_BUFFER_SIZE, a.write({0, 0}, {2, 2}, std::vector<double>(3)));
    EXPECT_THROWS(ZARR_ERR_OUT_OF_BOUNDS, a.read<double>({29, 0}, {2, 1}));
    EXPECT_THROWS(ZARR_ERR_INVALID_ARGUMENT, a.read<double>({0}, {1}));
    EXPECT_THROWS(ZARR_ERR_INVALID_ARGUMENT, a.fill_value<double>());
    EXPECT_THROWS(ZARR_ERR_INVALID_ARGUMENT, a.write({0, 0}, {1, 1}, std::vector<std::complex<float>>{{1, 2}}));
    zarr::Array ro = zarr::Array::open(path("i16"));
    EXPECT_THROWS(ZARR_ERR_READ_ONLY, ro.write({0, 0}, {1, 1}, std::vector<int16_t>{5}));
    EXPECT(ro.read<int16_t>({0, 0}, {1, 1})[0] == -250);
}

void test_views() {
    const uint64_t nz = 4, ny = 6, nx = 5;
    zarr::Array a = zarr::Array::create(path("f64"), zarr::ArraySpec::of<double>({nz, ny, nx}).chunks({2, 3, 5}));
    std::vector<double> c(nz * ny * nx);
    for (uint64_t k = 0; k < nz; ++k)
        for (uint64_t i = 0; i < ny; ++i)
            for (uint64_t j = 0; j < nx; ++j) c[(k * ny + i) * nx + j] = static_cast<double>(k * 10000 + i * 100 + j);
    a.write(zarr::Shape{0, 0, 0}, zarr::View<const double>(c.data(), {nz, ny, nx}));

    // the plane k = 2 into a Fortran-order buffer B(ny, nx) (first index fastest), read as float
    std::vector<float> plane(ny * nx, -1.0f);
    a.read({2, 0, 0}, zarr::View<float>(plane.data(), {1, ny, nx}, {0, 1, static_cast<int64_t>(ny)}));
    bool ok = true;
    for (uint64_t i = 0; i < ny; ++i)
        for (uint64_t j = 0; j < nx; ++j) ok = ok && plane[j * ny + i] == static_cast<float>(20000 + i * 100 + j);
    EXPECT(ok);
    // the same with View::column_major over a 2-D selection step 2 in y
    std::vector<double> cm(3 * nx);
    a.read({1, 0, 0}, zarr::View<double>(cm.data(), {1, 3, nx}, {0, 1, 3}), {1, 2, 1});
    ok = true;
    for (uint64_t i = 0; i < 3; ++i)
        for (uint64_t j = 0; j < nx; ++j) ok = ok && cm[j * 3 + i] == static_cast<double>(10000 + 2 * i * 100 + j);
    EXPECT(ok);
    auto v = zarr::View<int>::column_major(nullptr, {2, 3, 4});
    EXPECT((v.strides == std::vector<int64_t>{1, 2, 6}) && v.span() == 24);

    // write from a column-major int32 buffer into x = 0..1 of every row of plane 3
    std::vector<int32_t> f(ny * 2);
    for (uint64_t i = 0; i < ny; ++i)
        for (uint64_t j = 0; j < 2; ++j) f[j * ny + i] = -static_cast<int32_t>(i * 10 + j);
    a.write({3, 0, 0}, zarr::View<const int32_t>::column_major(f.data(), {1, ny, 2}));
    auto p3 = a.read<double>({3, 0, 0}, {1, ny, nx});
    ok = true;
    for (uint64_t i = 0; i < ny; ++i)
        for (uint64_t j = 0; j < nx; ++j)
            ok = ok && p3[i * nx + j] == (j < 2 ? -static_cast<double>(i * 10 + j) : static_cast<double>(30000 + i * 100 + j));
    EXPECT(ok);
    // pointer + count
    double row[5];
    a.read({0, 1, 0}, {1, 1, 5}, row, 5);
    EXPECT(row[0] == 100 && row[4] == 104);
    EXPECT_THROWS(ZARR_ERR_BUFFER_SIZE, a.read({0, 1, 0}, {1, 1, 5}, row, 4));
    // bool through views: stored 0/1
    zarr::Array b = zarr::Array::create(path("bool"), zarr::ArraySpec(ZARR_BOOL, {4}).compressor("none"));
    bool bits[4] = {true, false, true, true};
    b.write(zarr::Shape{0}, zarr::View<const bool>(bits, {4}));
    auto u8 = b.read<uint8_t>();
    EXPECT((u8 == std::vector<uint8_t>{1, 0, 1, 1}));
    EXPECT_THROWS(ZARR_ERR_VALUE, b.write({0}, {1}, std::vector<int>{2}));
}

void test_sharded_resize_and_moves() {
    zarr::Array a = zarr::Array::create(
        path("sim"), zarr::ArraySpec::of<float>({0, 8, 8}).chunks({1, 4, 4}).shards({4, 8, 8}).compressor("zstd", 1));
    EXPECT(a.is_sharded());
    EXPECT((a.chunk_shape() == zarr::Shape{4, 8, 8}) && (a.inner_chunk_shape() == zarr::Shape{1, 4, 4}));
    for (uint64_t t = 0; t < 6; ++t) {
        a.resize({t + 1, 8, 8});
        std::vector<float> step(64);
        for (size_t k = 0; k < 64; ++k) step[k] = static_cast<float>(t) + static_cast<float>(k) / 64.0f;
        a.write({t, 0, 0}, {1, 8, 8}, step);
    }
    EXPECT((a.shape() == zarr::Shape{6, 8, 8}));
    auto all = a.read<double>();
    bool ok = all.size() == 6 * 64;
    for (size_t n = 0; ok && n < all.size(); ++n)
        ok = all[n] == static_cast<double>(static_cast<float>(n / 64) + static_cast<float>(n % 64) / 64.0f);
    EXPECT(ok);
    EXPECT(a.chunk_is_stored({0, 0, 0}) && a.chunk_is_stored({1, 0, 0}));
    EXPECT_THROWS(ZARR_ERR_OUT_OF_BOUNDS, a.chunk_is_stored({2, 0, 0}));
    a.resize({2, 8, 8});  // shard 1 (t = 4..7) lies wholly outside: deleted
    EXPECT((a.grid_shape() == zarr::Shape{1, 1, 1}));
    a.resize({6, 8, 8});
    EXPECT(!a.chunk_is_stored({1, 0, 0}));
    EXPECT((a.read<float>({4, 0, 0}, {1, 1, 2}) == std::vector<float>{0.0f, 0.0f}));
    // rows 2..3 of shard 0 kept their old values (the documented behaviour); the recipe of
    // Array::resize's comment writes the fill value over the grown part from one value (strides 0)
    EXPECT(a.read<float>({3, 0, 0}, {1, 1, 1})[0] == 3.0f);
    float fill = a.fill_value<float>();
    a.write({2, 0, 0}, zarr::View<const float>(&fill, {4, 8, 8}, {0, 0, 0}));
    auto grown = a.read<float>({2, 0, 0}, {4, 8, 8});
    EXPECT(grown.size() == 4 * 64 && std::all_of(grown.begin(), grown.end(), [](float v) { return v == 0.0f; }));
    EXPECT(a.read<float>({1, 0, 1}, {1, 1, 1})[0] == 1.0f + 1.0f / 64.0f);
    EXPECT(!a.chunk_is_stored({1, 0, 0}));

    // moves: the moved-from object is empty and throws INVALID_HANDLE; the target works
    zarr::Array b = std::move(a);
    EXPECT(!a.valid() && b.valid());  // NOLINT(bugprone-use-after-move): checking the moved-from state
    EXPECT_THROWS(ZARR_ERR_INVALID_HANDLE, a.rank());
    EXPECT((b.shape() == zarr::Shape{6, 8, 8}));
    zarr::Array c;
    c = std::move(b);
    EXPECT(c.rank() == 3);
    c.close();
    EXPECT(!c.valid());
    EXPECT_THROWS(ZARR_ERR_INVALID_HANDLE, c.shape());
    static_assert(!std::is_copy_constructible_v<zarr::Array> && std::is_nothrow_move_constructible_v<zarr::Array>);
    static_assert(!std::is_copy_assignable_v<zarr::Group> && !std::is_copy_constructible_v<zarr::ArraySpec>);
    static_assert(zarr::data_type_of<long long>() == ZARR_INT64 && zarr::data_type_of<unsigned char>() == ZARR_UINT8);
    static_assert(zarr::data_type_of<std::complex<double>>() == ZARR_COMPLEX128);
}

void test_groups_and_strings() {
    zarr::Group root = zarr::Group::create(path("tree"), R"({"title":"test"})");
    EXPECT(root.zarr_format() == 3 && root.attributes() == R"({"title":"test"})");
    zarr::Group sub = root.create_group("sub", R"({"level":1})");
    sub.set_attributes(R"({"level":2})");
    EXPECT(sub.attributes() == R"({"level":2})");
    {
        zarr::Array t = sub.create_array("temp", zarr::ArraySpec::of<float>({3}).fill_value(1.5f));
        EXPECT(t.read<double>() == (std::vector<double>{1.5, 1.5, 1.5}));
    }
    zarr::Array s = root.create_array("names", zarr::ArraySpec(ZARR_STRING, {3}).fill_value("?"));
    s.write_strings({0}, {2}, {"alpha", "βeta"});
    EXPECT((s.read_strings({0}, {3}) == std::vector<std::string>{"alpha", "βeta", "?"}));
    auto kids = root.children();
    EXPECT(kids.size() == 2 && kids[0].name == "names" && kids[0].is_array() && kids[1].name == "sub" && kids[1].is_group());
    EXPECT(zarr::node_type_at(path("tree/sub/temp")) == ZARR_NODE_ARRAY);
    EXPECT(zarr::node_type_at(path("tree/sub")) == ZARR_NODE_GROUP);
    EXPECT_THROWS(ZARR_ERR_NOT_FOUND, zarr::node_type_at(path("tree/nothing")));
    zarr::Group reopened = zarr::Group::open(path("tree"));
    EXPECT(reopened.open_group("sub").children().size() == 1);
    EXPECT(reopened.open_array("sub/temp").fill_value<float>() == 1.5f);
    EXPECT_THROWS(ZARR_ERR_READ_ONLY, reopened.create_group("x"));
    EXPECT_THROWS(ZARR_ERR_EXISTS, root.create_group("sub"));
    EXPECT_THROWS(ZARR_ERR_NOT_FOUND, root.open_array("sub"));
    // moving a member: found under the new name only, values kept; existing destinations throw
    root.move_member("sub", "moved");
    EXPECT(root.open_array("moved/temp").fill_value<float>() == 1.5f);
    EXPECT_THROWS(ZARR_ERR_NOT_FOUND, zarr::node_type_at(path("tree/sub/temp")));
    EXPECT_THROWS(ZARR_ERR_EXISTS, root.move_member("moved", "names"));
    EXPECT_THROWS(ZARR_ERR_INVALID_ARGUMENT, root.move_member("moved", "moved/x"));
    EXPECT_THROWS(ZARR_ERR_READ_ONLY, reopened.move_member("moved", "sub"));
    root.move_member("moved", "sub");
    // deleting a member: gone with what is below it; read-only handles and absent names throw
    EXPECT_THROWS(ZARR_ERR_READ_ONLY, reopened.delete_member("sub"));
    root.delete_member("sub");
    EXPECT(root.children().size() == 1 && root.children()[0].name == "names");
    EXPECT_THROWS(ZARR_ERR_NOT_FOUND, zarr::node_type_at(path("tree/sub/temp")));
    EXPECT_THROWS(ZARR_ERR_NOT_FOUND, root.delete_member("sub"));
    EXPECT_THROWS(ZARR_ERR_INVALID_ARGUMENT, root.delete_member(".."));
    // v2 group: arrays from a spec take its format
    zarr::Group g2 = zarr::Group::create(path("tree2"), "", 2);
    zarr::Array v2 = g2.create_array("a", zarr::ArraySpec::of<uint16_t>({5}).compressor("gzip"));
    EXPECT(v2.zarr_format() == 2);
    v2.write(std::vector<int>{1, 2, 3, 4, 5});
    EXPECT((v2.read<uint16_t>() == std::vector<uint16_t>{1, 2, 3, 4, 5}));
    // spec errors
    EXPECT_THROWS(ZARR_ERR_INVALID_ARGUMENT, zarr::ArraySpec::of<float>({4}).compressor("lzma"));
    EXPECT_THROWS(ZARR_ERR_UNSUPPORTED, zarr::ArraySpec(ZARR_RAW, {4}));
    EXPECT_THROWS(ZARR_ERR_VALUE, zarr::ArraySpec::of<float>({4}).fill_value(1e300));   // converted, range-checked
    EXPECT_THROWS(ZARR_ERR_NOT_FOUND, zarr::Array::open(path("missing")));
    EXPECT(!zarr::version().empty());
    // complex: written as complex128, stored as complex64, read back as complex<float>
    zarr::Array z = zarr::Array::create(path("cplx"), zarr::ArraySpec::of<std::complex<float>>({2, 3}).chunks({1, 2}));
    std::vector<std::complex<double>> cv;
    for (int k = 0; k < 6; ++k) cv.emplace_back(0.5 * k, -1.0 * k);
    z.write(cv);
    auto cf = z.read<std::complex<float>>({0, 1}, {2, 2});
    EXPECT((cf == std::vector<std::complex<float>>{{0.5f, -1.0f}, {1.0f, -2.0f}, {2.0f, -4.0f}, {2.5f, -5.0f}}));
    EXPECT_THROWS(ZARR_ERR_INVALID_ARGUMENT, z.read<double>());
}

}  // namespace

int main() {
    const char *base = std::getenv("ZARR_TEST_TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/zarr-cxx-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) return 2;
    dir = buf.data();
    try {
        test_spec_and_vectors();
        test_views();
        test_sharded_resize_and_moves();
        test_groups_and_strings();
    } catch (const zarr::Error &e) {
        std::fprintf(stderr, "unexpected zarr::Error: %s\n", e.what());
        return 1;
    }
    std::printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
