// zarr::ArraySpec::fill_value(): a number converts to the spec's element type, checked. The value is
// read back three ways: from the metadata document (zarr.json's "fill_value" text), from the array
// (fill_value<T>()) and as the contents of elements never written.
#include <zarr.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
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

// The call must throw zarr::Error with `status` and a message containing `text`.
void expect_throws(zarr_status status, const std::string &text, const std::function<void()> &f, int line) {
    ++checks;
    try {
        f();
    } catch (const zarr::Error &e) {
        if (e.status() == status && std::string(e.what()).find(text) != std::string::npos) return;
        std::fprintf(stderr, "line %d: threw \"%s\", expected %s with \"%s\"\n", line, e.what(),
                     zarr_status_name(status), text.c_str());
        ++failures;
        return;
    }
    std::fprintf(stderr, "line %d: no exception, expected %s\n", line, zarr_status_name(status));
    ++failures;
}
#define EXPECT_THROWS(status, text, ...) expect_throws(status, text, [&]() { __VA_ARGS__; }, __LINE__)

std::string dir;

// The text of "fill_value" in a metadata document.
std::string fill_text(const std::string &json) {
    size_t k = json.find("\"fill_value\"");
    if (k == std::string::npos) return "?";
    k = json.find(':', k) + 1;
    while (json[k] == ' ') ++k;
    size_t e = json[k] == '[' ? json.find(']', k) + 1 : json.find_first_of(",}\n", k);
    std::string out;
    for (char c : json.substr(k, e - k))
        if (c != '\n' && !(c == ' ' && (out.empty() || out.back() == ' ' || out.back() == '['))) out += c;
    while (out.size() > 1 && out[out.size() - 2] == ' ') out.erase(out.size() - 2, 1);   // "0.0 ]"
    return out;
}

// An array of `spec`'s type and 5 elements, never written: every element must read back as `expect`.
template <class T> void check_array(const char *name, zarr::ArraySpec spec, T expect, const std::string &json_fill) {
    EXPECT(fill_text(spec.to_json()) == json_fill);
    if (fill_text(spec.to_json()) != json_fill)
        std::fprintf(stderr, "%s: \"fill_value\": %s, expected %s\n", name, fill_text(spec.to_json()).c_str(), json_fill.c_str());
    zarr::Array a = zarr::Array::create(dir + "/" + name, spec);
    EXPECT(a.fill_value<T>() == expect);
    for (T v : a.read<T>()) EXPECT(v == expect);
    zarr::Array r = zarr::Array::open(dir + "/" + name);
    EXPECT(fill_text(r.metadata()) == json_fill);
}

void test_conversions() {
    // The two cases: an int literal for a float array, -1 for int16.
    check_array<float>("f32_from_int", zarr::ArraySpec::of<float>({5}).fill_value(1), 1.0f, "1.0");
    check_array<int16_t>("i16_from_int", zarr::ArraySpec::of<int16_t>({5}).fill_value(-1), int16_t(-1), "-1");
    check_array<double>("f64_from_float", zarr::ArraySpec::of<double>({5}).fill_value(0.5f), 0.5, "0.5");
    check_array<uint8_t>("u8_from_double", zarr::ArraySpec::of<uint8_t>({5}).fill_value(255.0), uint8_t(255), "255");
    check_array<int64_t>("i64_min", zarr::ArraySpec::of<int64_t>({5}).fill_value(INT64_MIN), INT64_MIN,
                         "-9223372036854775808");
    check_array<uint64_t>("u64_max", zarr::ArraySpec::of<uint64_t>({5}).fill_value(UINT64_MAX), UINT64_MAX,
                          "18446744073709551615");
    check_array<float>("f32_rounded", zarr::ArraySpec::of<float>({5}).fill_value(0.1), 0.1f, "0.10000000149011612");
    check_array<std::complex<float>>("c64_from_int", zarr::ArraySpec::of<std::complex<float>>({5}).fill_value(2),
                                     std::complex<float>(2.0f, 0.0f), "[2.0, 0.0]");
    check_array<std::complex<double>>("c128_from_c64",
                                      zarr::ArraySpec::of<std::complex<double>>({5}).fill_value(std::complex<float>(1.5f, -2.0f)),
                                      std::complex<double>(1.5, -2.0), "[1.5, -2.0]");
    {
        zarr::ArraySpec b = zarr::ArraySpec::of<bool>({5});
        b.fill_value(1);
        zarr::Array a = zarr::Array::create(dir + "/bool_from_int", b);
        EXPECT(fill_text(a.metadata()) == "true");
        for (uint8_t v : a.read<uint8_t>()) EXPECT(v == 1);
    }
    // NaN and infinity carry over into float types.
    {
        zarr::Array a = zarr::Array::create(dir + "/f32_nan", zarr::ArraySpec::of<float>({2}).fill_value(std::nan("")));
        EXPECT(fill_text(a.metadata()) == "\"NaN\"");
        for (float v : a.read<float>()) EXPECT(std::isnan(v));
        zarr::Array b = zarr::Array::create(dir + "/f64_ninf",
                                            zarr::ArraySpec::of<double>({2}).fill_value(-HUGE_VAL));
        EXPECT(fill_text(b.metadata()) == "\"-Infinity\"");
    }
    // The extension small integers take a 1-byte value; the library checks their narrower range (int4
    // elements convert to no other type, so the metadata is what is compared).
    {
        zarr::Array a = zarr::Array::create(dir + "/int4", zarr::ArraySpec(ZARR_INT4, {5}).fill_value(-8));
        EXPECT(fill_text(a.metadata()) == "-8");
    }
    EXPECT_THROWS(ZARR_ERR_VALUE, "", zarr::ArraySpec(ZARR_INT4, {5}).fill_value(8));
}

void test_refusals() {
    EXPECT_THROWS(ZARR_ERR_VALUE, "fill_value(300): is out of the range of the array's type, uint8",
                  zarr::ArraySpec::of<uint8_t>({4}).fill_value(300));
    EXPECT_THROWS(ZARR_ERR_VALUE, "fill_value(-1): is out of the range of the array's type, uint16",
                  zarr::ArraySpec::of<uint16_t>({4}).fill_value(-1));
    EXPECT_THROWS(ZARR_ERR_VALUE, "out of the range of the array's type, int8", zarr::ArraySpec::of<int8_t>({4}).fill_value(128));
    EXPECT_THROWS(ZARR_ERR_VALUE, "out of the range of the array's type, int8", zarr::ArraySpec::of<int8_t>({4}).fill_value(-129));
    EXPECT_THROWS(ZARR_ERR_VALUE, "out of the range of the array's type, int64",
                  zarr::ArraySpec::of<int64_t>({4}).fill_value(UINT64_MAX));
    EXPECT_THROWS(ZARR_ERR_VALUE, "out of the range of the array's type, uint64",
                  zarr::ArraySpec::of<uint64_t>({4}).fill_value(18446744073709551616.0));
    EXPECT_THROWS(ZARR_ERR_VALUE, "fill_value(2.5): is not a whole number", zarr::ArraySpec::of<int32_t>({4}).fill_value(2.5));
    EXPECT_THROWS(ZARR_ERR_VALUE, "not a whole number", zarr::ArraySpec::of<int32_t>({4}).fill_value(std::nan("")));
    EXPECT_THROWS(ZARR_ERR_VALUE, "out of the range of the array's type, bool", zarr::ArraySpec::of<bool>({4}).fill_value(2));
    EXPECT_THROWS(ZARR_ERR_VALUE, "fill_value(16777217): is not exactly representable in the array's type, float32",
                  zarr::ArraySpec::of<float>({4}).fill_value(16777217));
    EXPECT_THROWS(ZARR_ERR_VALUE, "not exactly representable in the array's type, float64",
                  zarr::ArraySpec::of<double>({4}).fill_value(UINT64_MAX));
    EXPECT_THROWS(ZARR_ERR_VALUE, "beyond the finite range of the array's type, float32",
                  zarr::ArraySpec::of<float>({4}).fill_value(1e39));
    EXPECT_THROWS(ZARR_ERR_VALUE, "a complex value does not convert to the array's type, float64",
                  zarr::ArraySpec::of<double>({4}).fill_value(std::complex<double>(1, 0)));
    EXPECT_THROWS(ZARR_ERR_UNSUPPORTED, "fill_value_bytes()", zarr::ArraySpec(ZARR_FLOAT16, {4}).fill_value(1.0));
    // fill_value_bytes(): the element's own bytes, unconverted (float16 1.0 is 0x3c00).
    const uint16_t one_f16 = 0x3c00;
    zarr::Array h = zarr::Array::create(dir + "/f16", zarr::ArraySpec(ZARR_FLOAT16, {3}).fill_value_bytes(&one_f16, 2));
    EXPECT(fill_text(h.metadata()) == "1.0");
    EXPECT((h.read<double>() == std::vector<double>{1.0, 1.0, 1.0}));
    EXPECT_THROWS(ZARR_ERR_BUFFER_SIZE, "", zarr::ArraySpec(ZARR_FLOAT16, {4}).fill_value_bytes(&one_f16, 1));
    // A failed conversion leaves the spec's fill value as it was.
    zarr::ArraySpec s = zarr::ArraySpec::of<uint8_t>({2});
    s.fill_value(7);
    EXPECT_THROWS(ZARR_ERR_VALUE, "", s.fill_value(-7));
    EXPECT(fill_text(s.to_json()) == "7");
}

}  // namespace

int main() {
    const char *base = std::getenv("ZARR_TEST_TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/zarr-cxx-fill-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) return 2;
    dir = buf.data();
    try {
        test_conversions();
        test_refusals();
    } catch (const zarr::Error &e) {
        std::fprintf(stderr, "unexpected zarr::Error: %s\n", e.what());
        return 1;
    }
    std::printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
