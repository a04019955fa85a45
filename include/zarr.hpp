// zarr.hpp: a header-only C++17 layer over libzarr's C API (zarr.h).
//
//   #include <zarr.hpp>
//   auto spec = zarr::ArraySpec::of<float>({100, 200}).chunks({10, 20}).compressor("zstd", 5);
//   zarr::Array a = zarr::Array::create("temp.zarr", spec);
//   a.write(std::vector<float>(100 * 200, 1.0f));          // the whole array
//   std::vector<double> row = a.read<double>({3, 0}, {1, 200});   // converted to double
//
// - Handles (zarr::Array, zarr::Group, zarr::ArraySpec) are move-only RAII owners: the destructor
//   closes or frees the C handle. close() closes early and reports errors; a moved-from or closed
//   object holds nothing (valid() is false) and any other call on it throws.
// - Every failing call throws zarr::Error, which carries the zarr_status code (status()) and the
//   library's message (what()). Sizes checked on the C++ side throw zarr::Error with
//   ZARR_ERR_BUFFER_SIZE or ZARR_ERR_INVALID_ARGUMENT.
// - Typed reads and writes (read<T>, write) use zarr_read_hyperslab / zarr_write_hyperslab, so T may
//   differ from the stored type (netCDF's conversion rule: integers, floats and bool convert to one
//   another, complex to complex; a value out of range throws ZARR_ERR_VALUE). T is one of bool (through
//   pointer views only: std::vector<bool> is bit-packed, use uint8_t), the fixed-width integers,
//   float, double, std::complex<float>, std::complex<double>.
// - Indices are C order (the last dimension varies fastest), 0-based, as in the C API. Shapes are
//   zarr::Shape (std::vector<uint64_t>); a hyperslab is (start, count, step), step empty meaning 1.
// - Thread safety is that of the C API (see zarr.h): reads may run concurrently on one Array; the
//   objects themselves are not synchronised, so moving, closing or resizing needs exclusive access.
#ifndef ZARR_HPP
#define ZARR_HPP

#include <zarr.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace zarr {

/// Extents, indices, counts and steps per dimension.
using Shape = std::vector<uint64_t>;

/// A failed libzarr call: the status code and the library's message.
class Error : public std::runtime_error {
public:
    Error(zarr_status status, const std::string &message)
        : std::runtime_error(std::string(zarr_status_name(status)) + ": " + message), status_(status) {}
    /// The ZARR_ERR_* code.
    zarr_status status() const noexcept { return status_; }

private:
    zarr_status status_;
};

namespace detail {

inline void check(zarr_status s) {
    if (s != ZARR_OK) throw Error(s, zarr_last_error());
}

/// Takes ownership of a string returned by libzarr.
inline std::string take(char *s) {
    std::string out = s ? std::string(s) : std::string();
    zarr_string_free(s);
    return out;
}

template <class T> struct dtype_of {
    static constexpr bool known = false;
};
template <> struct dtype_of<bool> {
    static constexpr bool known = true;
    static constexpr zarr_data_type value = ZARR_BOOL;
};
template <> struct dtype_of<float> {
    static constexpr bool known = true;
    static constexpr zarr_data_type value = ZARR_FLOAT32;
};
template <> struct dtype_of<double> {
    static constexpr bool known = true;
    static constexpr zarr_data_type value = ZARR_FLOAT64;
};
template <> struct dtype_of<std::complex<float>> {
    static constexpr bool known = true;
    static constexpr zarr_data_type value = ZARR_COMPLEX64;
};
template <> struct dtype_of<std::complex<double>> {
    static constexpr bool known = true;
    static constexpr zarr_data_type value = ZARR_COMPLEX128;
};

template <class T> constexpr zarr_data_type integer_dtype() {
    constexpr bool s = std::is_signed_v<T>;
    switch (sizeof(T)) {
        case 1: return s ? ZARR_INT8 : ZARR_UINT8;
        case 2: return s ? ZARR_INT16 : ZARR_UINT16;
        case 4: return s ? ZARR_INT32 : ZARR_UINT32;
        default: return s ? ZARR_INT64 : ZARR_UINT64;
    }
}

template <class T> constexpr bool is_plain_integer_v =
    std::is_integral_v<T> && !std::is_same_v<T, bool> && (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);

inline uint64_t product(const Shape &s) {
    uint64_t n = 1;
    for (uint64_t x : s) {
        if (x != 0 && n > std::numeric_limits<uint64_t>::max() / x)
            throw Error(ZARR_ERR_BUFFER_SIZE, "the selection's element count overflows 64 bits");
        n *= x;
    }
    return n;
}

inline size_t checked_size(uint64_t n, size_t elem) {
    if (n > std::numeric_limits<size_t>::max() / (elem ? elem : 1))
        throw Error(ZARR_ERR_BUFFER_SIZE, "the selection does not fit in memory");
    return static_cast<size_t>(n) * elem;
}

inline const uint64_t *ptr(const Shape &s) { return s.empty() ? nullptr : s.data(); }


template <class T> struct is_complex : std::false_type {};
template <class F> struct is_complex<std::complex<F>> : std::is_floating_point<F> {};

/// What ArraySpec::fill_value() converts: bool, integers, floating point, std::complex.
template <class T> constexpr bool is_fill_number_v = std::is_arithmetic_v<T> || is_complex<T>::value;

inline const char *type_name(zarr_data_type t) {
    switch (t) {
        case ZARR_BOOL: return "bool";
        case ZARR_INT8: return "int8";
        case ZARR_INT16: return "int16";
        case ZARR_INT32: return "int32";
        case ZARR_INT64: return "int64";
        case ZARR_UINT8: return "uint8";
        case ZARR_UINT16: return "uint16";
        case ZARR_UINT32: return "uint32";
        case ZARR_UINT64: return "uint64";
        case ZARR_FLOAT16: return "float16";
        case ZARR_INT2: return "int2";
        case ZARR_INT4: return "int4";
        case ZARR_UINT2: return "uint2";
        case ZARR_UINT4: return "uint4";
        case ZARR_FLOAT32: return "float32";
        case ZARR_FLOAT64: return "float64";
        case ZARR_COMPLEX64: return "complex64";
        case ZARR_COMPLEX128: return "complex128";
        default: return "this data type";
    }
}

template <class S> std::string fill_text(const S &v) {
    if constexpr (std::is_same_v<S, bool>) {
        return v ? "true" : "false";
    } else if constexpr (std::is_integral_v<S>) {
        return std::to_string(v);
    } else if constexpr (std::is_floating_point_v<S>) {
        char b[40];
        std::snprintf(b, sizeof b, "%.17g", static_cast<double>(v));
        return b;
    } else {
        return "(" + fill_text(v.real()) + ", " + fill_text(v.imag()) + ")";
    }
}

template <class S> [[noreturn]] void fill_out_of_range(const S &v, const char *why, zarr_data_type target) {
    throw Error(ZARR_ERR_VALUE, "fill_value(" + fill_text(v) + "): " + why + " the array's type, " + type_name(target));
}

/// `v` converted to the element type D, exactly (see ArraySpec::fill_value()), or ZARR_ERR_VALUE.
template <class D, class S> D convert_fill(const S &v, zarr_data_type target) {
    if constexpr (is_complex<D>::value) {
        using F = typename D::value_type;
        if constexpr (is_complex<S>::value) {
            return D(convert_fill<F>(v.real(), target), convert_fill<F>(v.imag(), target));
        } else {
            return D(convert_fill<F>(v, target), F(0));
        }
    } else if constexpr (is_complex<S>::value) {
        fill_out_of_range(v, "a complex value does not convert to", target);
    } else if constexpr (std::is_integral_v<D>) {
        // bool holds 0 and 1; the other integer types their full range.
        constexpr bool dsigned = std::is_signed_v<D>;
        constexpr int dbits = std::is_same_v<D, bool> ? 1 : static_cast<int>(sizeof(D) * 8) - (dsigned ? 1 : 0);
        if constexpr (std::is_integral_v<S>) {
            bool ok = true;
            if (std::is_signed_v<S> && static_cast<int64_t>(v) < 0) {
                // -v <= 2^dbits, i.e. -(v + 1) < 2^dbits (no overflow at INT64_MIN)
                if constexpr (dsigned) {
                    ok = static_cast<uint64_t>(-(static_cast<int64_t>(v) + 1)) < (uint64_t(1) << dbits);
                } else {
                    ok = false;
                }
            } else if constexpr (dbits < 64) {
                ok = static_cast<uint64_t>(v) < (uint64_t(1) << dbits);
            }
            if (!ok) fill_out_of_range(v, "is out of the range of", target);
            return static_cast<D>(v);
        } else {
            const double x = static_cast<double>(v);
            if (!std::isfinite(x) || std::trunc(x) != x) fill_out_of_range(v, "is not a whole number: it does not convert to", target);
            const double hi = std::ldexp(1.0, dbits), lo = dsigned ? -hi : 0.0;
            if (x < lo || x >= hi) fill_out_of_range(v, "is out of the range of", target);
            return static_cast<D>(v);
        }
    } else {  // float or double
        if constexpr (std::is_integral_v<S>) {
            const D d = static_cast<D>(v);
            bool exact;
            if constexpr (std::is_same_v<S, bool>) {
                exact = true;
            } else if constexpr (std::is_signed_v<S>) {
                const D lim = std::ldexp(D(1), 63);
                exact = d >= -lim && d < lim && static_cast<int64_t>(d) == static_cast<int64_t>(v);
            } else {
                exact = d < std::ldexp(D(1), 64) && static_cast<uint64_t>(d) == static_cast<uint64_t>(v);
            }
            if (!exact) fill_out_of_range(v, "is not exactly representable in", target);
            return d;
        } else {
            const long double x = static_cast<long double>(v);
            if (std::isfinite(x) && std::fabs(x) > static_cast<long double>(std::numeric_limits<D>::max()))
                fill_out_of_range(v, "is beyond the finite range of", target);
            return static_cast<D>(v);
        }
    }
}

}  // namespace detail

/// Whether T maps to a zarr_data_type (and so may be used with read<T> / write).
template <class T> constexpr bool is_element_v =
    detail::dtype_of<std::remove_cv_t<T>>::known || detail::is_plain_integer_v<std::remove_cv_t<T>>;

/// The zarr_data_type of a C++ element type: int8_t..uint64_t (any integer type of 1, 2, 4 or 8
/// bytes), bool, float, double, std::complex<float>, std::complex<double>.
template <class T> constexpr zarr_data_type data_type_of() {
    using U = std::remove_cv_t<T>;
    static_assert(is_element_v<U>, "zarr: T must be bool, an integer, float, double or std::complex<float/double>");
    if constexpr (detail::is_plain_integer_v<U>) {
        return detail::integer_dtype<U>();
    } else {
        return detail::dtype_of<U>::value;
    }
}

/// How Array::open() and Group::open() open a node (ZARR_READ / ZARR_READ_WRITE of the C API).
enum class Mode : int {
    read_only = ZARR_READ,       ///< reads only; writes throw ZARR_ERR_READ_ONLY
    read_write = ZARR_READ_WRITE  ///< reads and writes
};

/// A strided view of caller-owned memory: `shape` elements, element (i0, i1, ...) at
/// `data[sum(i_d * strides[d])]`. Empty `strides` mean C order (contiguous, last index fastest).
/// Use View<T> to read into, View<const T> to write from.
template <class T> struct View {
    T *data = nullptr;
    Shape shape;
    std::vector<int64_t> strides;

    View() = default;
    View(T *d, Shape s, std::vector<int64_t> st = {}) : data(d), shape(std::move(s)), strides(std::move(st)) {}
    /// A Fortran-order (column-major) view: the first index varies fastest.
    static View column_major(T *d, Shape s) {
        std::vector<int64_t> st(s.size());
        int64_t step = 1;
        for (size_t i = 0; i < s.size(); ++i) {
            st[i] = step;
            step *= static_cast<int64_t>(s[i]);
        }
        return View(d, std::move(s), std::move(st));
    }
    /// Elements the view spans in memory (what a buffer must hold).
    size_t span() const {
        if (strides.empty()) return static_cast<size_t>(detail::product(shape));
        size_t last = 0;
        for (size_t i = 0; i < shape.size(); ++i) {
            if (shape[i] == 0) return 0;
            last += static_cast<size_t>((shape[i] - 1) * static_cast<uint64_t>(strides[i]));
        }
        return last + 1;
    }
};

/// A creation spec (zarr_array_spec): data type, shape and the netCDF/HDF5-style settings, with the
/// documented defaults of zarr_array_spec_new() (zstd level 3, chunks of at most 1 MiB, fill value 0,
/// Zarr v3). Setters return *this for chaining.
class ArraySpec {
public:
    ArraySpec(zarr_data_type type, const Shape &shape) {
        detail::check(zarr_array_spec_new(type, shape.size(), detail::ptr(shape), &h_));
        rank_ = shape.size();
        type_ = type;
    }
    /// A spec for elements of C++ type T.
    template <class T> static ArraySpec of(const Shape &shape) { return ArraySpec(data_type_of<T>(), shape); }

    ArraySpec(ArraySpec &&o) noexcept : h_(std::exchange(o.h_, nullptr)), rank_(o.rank_), type_(o.type_) {}
    ArraySpec &operator=(ArraySpec &&o) noexcept {
        if (this != &o) {
            zarr_array_spec_free(h_);
            h_ = std::exchange(o.h_, nullptr);
            rank_ = o.rank_;
            type_ = o.type_;
        }
        return *this;
    }
    ArraySpec(const ArraySpec &) = delete;
    ArraySpec &operator=(const ArraySpec &) = delete;
    ~ArraySpec() { zarr_array_spec_free(h_); }

    /// The chunk shape (the inner chunks of a sharded array).
    ArraySpec &chunks(const Shape &c) & {
        detail::check(zarr_array_spec_set_chunks(get(), detail::ptr(c), c.size()));
        return *this;
    }
    ArraySpec &&chunks(const Shape &c) && { return std::move(this->chunks(c)); }
    /// The shard shape (Zarr v3); an empty shape removes the sharding.
    ArraySpec &shards(const Shape &s) & {
        if (s.empty() && rank_ != 0) {
            detail::check(zarr_array_spec_set_shards(get(), nullptr, rank_));
        } else {
            detail::check(zarr_array_spec_set_shards(get(), detail::ptr(s), s.size()));
        }
        return *this;
    }
    ArraySpec &&shards(const Shape &s) && { return std::move(this->shards(s)); }
    /// "zstd", "gzip", "blosc-lz4", "blosc-lz4hc", "blosc-blosclz", "blosc-zstd", "blosc-zlib" or "none".
    ArraySpec &compressor(const std::string &name, int level = ZARR_LEVEL_DEFAULT) & {
        detail::check(zarr_array_spec_set_compressor(get(), name.c_str(), level));
        return *this;
    }
    ArraySpec &&compressor(const std::string &name, int level = ZARR_LEVEL_DEFAULT) && { return std::move(this->compressor(name, level)); }
    /// ZARR_SHUFFLE_NONE, ZARR_SHUFFLE_BYTE or ZARR_SHUFFLE_BIT.
    ArraySpec &shuffle(int mode) & {
        detail::check(zarr_array_spec_set_shuffle(get(), mode));
        return *this;
    }
    ArraySpec &&shuffle(int mode) && { return std::move(this->shuffle(mode)); }
    /// The fill value: a number (bool, any integer or floating-point type, std::complex<float/double>)
    /// converted to the spec's element type, so `ArraySpec::of<float>({n}).fill_value(1)` stores 1.0f
    /// and `ArraySpec::of<int16_t>({n}).fill_value(-1)` stores -1. The conversion is checked: into an
    /// integer type (bool holds 0 and 1) the value must be a whole number in the type's range (300 for
    /// uint8, -1 for uint16, 2.5 or NaN for int32 throw ZARR_ERR_VALUE); into float or double an integer
    /// must be exactly representable (16777217 for float throws) and a finite floating-point value must
    /// lie within the type's finite range (it is rounded to nearest, as `float f = 0.1;` rounds; NaN and
    /// the infinities carry over); a complex value goes to complex types only. Types the wrapper has no
    /// C++ counterpart for (float16, bfloat16, the float8/6/4 types, ...) throw ZARR_ERR_UNSUPPORTED: give
    /// their element bytes with fill_value_bytes(). Other argument types (a struct, a pointer,
    /// std::string_view) do not compile. Setters have overloads for temporaries too, so
    /// `auto s = ArraySpec::of<float>({n}).chunks({c});` moves.
    template <class T> ArraySpec &fill_value(const T &value) & {
        static_assert(detail::is_fill_number_v<T>,
                      "zarr: fill_value(v) takes a number (bool, an integer or floating-point type, "
                      "std::complex<float/double>) or a string; give other element bytes with fill_value_bytes()");
        if constexpr (detail::is_fill_number_v<T>) set_converted_fill(value);
        return *this;
    }
    template <class T> ArraySpec &&fill_value(const T &value) && { return std::move(this->fill_value(value)); }
    /// The fill value as the element's own bytes (native-endian, `size` = the element size), unconverted:
    /// for the types fill_value() cannot convert to (float16 bits as a uint16_t, a float8 bit pattern).
    ArraySpec &fill_value_bytes(const void *value, size_t size) & {
        detail::check(zarr_array_spec_set_fill_value(get(), value, size));
        return *this;
    }
    ArraySpec &&fill_value_bytes(const void *value, size_t size) && { return std::move(this->fill_value_bytes(value, size)); }
    /// The fill value of a ZARR_STRING or ZARR_BYTES array.
    ArraySpec &fill_value(const std::string &value) & {
        detail::check(zarr_array_spec_set_fill_value(get(), value.data(), value.size()));
        return *this;
    }
    ArraySpec &&fill_value(const std::string &value) && { return std::move(this->fill_value(value)); }
    ArraySpec &fill_value(const char *value) & { return fill_value(std::string(value)); }
    ArraySpec &&fill_value(const char *value) && { return std::move(this->fill_value(std::string(value))); }
    /// One name per dimension; an empty name leaves that dimension unnamed.
    ArraySpec &dimension_names(const std::vector<std::string> &names) & {
        std::vector<const char *> p;
        for (const auto &n : names) p.push_back(n.empty() ? nullptr : n.c_str());
        detail::check(zarr_array_spec_set_dimension_names(get(), p.empty() ? nullptr : p.data(), p.size()));
        return *this;
    }
    ArraySpec &&dimension_names(const std::vector<std::string> &names) && { return std::move(this->dimension_names(names)); }
    /// User attributes as a JSON object text.
    ArraySpec &attributes(const std::string &json) & {
        detail::check(zarr_array_spec_set_attributes(get(), json.c_str()));
        return *this;
    }
    ArraySpec &&attributes(const std::string &json) && { return std::move(this->attributes(json)); }
    /// 2 or 3.
    ArraySpec &zarr_format(int format) & {
        detail::check(zarr_array_spec_set_zarr_format(get(), format));
        return *this;
    }
    ArraySpec &&zarr_format(int format) && { return std::move(this->zarr_format(format)); }
    /// The metadata document the spec creates (zarr_array_spec_to_json()).
    std::string to_json() const {
        char *s = nullptr;
        detail::check(zarr_array_spec_to_json(get(), &s));
        return detail::take(s);
    }
    /// The C handle (owned by this object).
    zarr_array_spec *get() const {
        if (!h_) throw Error(ZARR_ERR_INVALID_HANDLE, "zarr::ArraySpec is empty (moved from)");
        return h_;
    }

    /// The element type the spec was created with.
    zarr_data_type data_type() const noexcept { return type_; }

private:
    template <class T> void set_converted_fill(const T &value) {
        using detail::convert_fill;
        switch (type_) {
            case ZARR_BOOL: return store_fill(static_cast<uint8_t>(convert_fill<bool>(value, type_)));
            case ZARR_INT8: case ZARR_INT2: case ZARR_INT4: return store_fill(convert_fill<int8_t>(value, type_));
            case ZARR_UINT8: case ZARR_UINT2: case ZARR_UINT4: return store_fill(convert_fill<uint8_t>(value, type_));
            case ZARR_INT16: return store_fill(convert_fill<int16_t>(value, type_));
            case ZARR_UINT16: return store_fill(convert_fill<uint16_t>(value, type_));
            case ZARR_INT32: return store_fill(convert_fill<int32_t>(value, type_));
            case ZARR_UINT32: return store_fill(convert_fill<uint32_t>(value, type_));
            case ZARR_INT64: return store_fill(convert_fill<int64_t>(value, type_));
            case ZARR_UINT64: return store_fill(convert_fill<uint64_t>(value, type_));
            case ZARR_FLOAT32: return store_fill(convert_fill<float>(value, type_));
            case ZARR_FLOAT64: return store_fill(convert_fill<double>(value, type_));
            case ZARR_COMPLEX64: return store_fill(convert_fill<std::complex<float>>(value, type_));
            case ZARR_COMPLEX128: return store_fill(convert_fill<std::complex<double>>(value, type_));
            default:
                throw Error(ZARR_ERR_UNSUPPORTED, std::string("fill_value(): no conversion from a C++ number to ") +
                                                      detail::type_name(type_) +
                                                      "; give the element's bytes with fill_value_bytes()");
        }
    }
    template <class E> void store_fill(const E &e) { detail::check(zarr_array_spec_set_fill_value(get(), &e, sizeof e)); }

    zarr_array_spec *h_ = nullptr;
    size_t rank_ = 0;
    zarr_data_type type_ = ZARR_BOOL;
};

/// An open array (zarr_array). Move-only; closed by the destructor.
class Array {
public:
    Array() = default;
    /// Takes ownership of a C handle.
    explicit Array(zarr_array *h) : h_(h) {}
    Array(Array &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
    Array &operator=(Array &&o) noexcept {
        if (this != &o) {
            zarr_close(h_);
            h_ = std::exchange(o.h_, nullptr);
        }
        return *this;
    }
    Array(const Array &) = delete;
    Array &operator=(const Array &) = delete;
    ~Array() { zarr_close(h_); }

    /// Opens the array in directory `path`: `Array::open(p)` reads, `Array::open(p, Mode::read_write)`
    /// also writes.
    static Array open(const std::string &path, Mode mode = Mode::read_only) {
        zarr_array *h = nullptr;
        detail::check(zarr_open(path.c_str(), static_cast<int>(mode), &h));
        return Array(h);
    }
    /// The older form with a bare flag (true: read and write).
    [[deprecated("pass zarr::Mode::read_write or zarr::Mode::read_only instead of a bool")]]
    static Array open(const std::string &path, bool writable) {
        return open(path, writable ? Mode::read_write : Mode::read_only);
    }
    /// Creates an array from a complete metadata document (zarr.json or .zarray text).
    static Array create(const std::string &path, const std::string &metadata_json) {
        zarr_array *h = nullptr;
        detail::check(zarr_create(path.c_str(), metadata_json.c_str(), &h));
        return Array(h);
    }
    /// Creates an array from a spec.
    static Array create(const std::string &path, const ArraySpec &spec) {
        zarr_array *h = nullptr;
        detail::check(zarr_create_from_spec(path.c_str(), spec.get(), &h));
        return Array(h);
    }

    /// Closes the handle now (errors are thrown; the destructor ignores them).
    void close() { detail::check(zarr_close(std::exchange(h_, nullptr))); }
    bool valid() const noexcept { return h_ != nullptr; }
    /// The C handle (still owned by this object).
    zarr_array *get() const {
        if (!h_) throw Error(ZARR_ERR_INVALID_HANDLE, "zarr::Array is closed or moved from");
        return h_;
    }

    size_t rank() const {
        size_t r = 0;
        detail::check(zarr_array_rank(get(), &r));
        return r;
    }
    Shape shape() const { return dims(zarr_array_shape); }
    /// The chunk shape (the shard shape of a sharded array).
    Shape chunk_shape() const { return dims(zarr_array_chunk_shape); }
    /// The inner chunk shape of a sharded array (else the chunk shape).
    Shape inner_chunk_shape() const { return dims(zarr_array_inner_chunk_shape); }
    /// Chunks (shards) per dimension.
    Shape grid_shape() const { return dims(zarr_array_grid_shape); }
    bool is_sharded() const {
        int s = 0;
        detail::check(zarr_array_is_sharded(get(), &s));
        return s != 0;
    }
    /// The number of elements.
    uint64_t size() const { return detail::product(shape()); }
    zarr_data_type data_type() const {
        zarr_data_type t{};
        detail::check(zarr_array_data_type(get(), &t, nullptr));
        return t;
    }
    /// Bytes per element (0 for variable-length types).
    size_t element_size() const {
        size_t n = 0;
        detail::check(zarr_array_data_type(get(), nullptr, &n));
        return n;
    }
    int zarr_format() const {
        int f = 0;
        detail::check(zarr_array_zarr_format(get(), &f));
        return f;
    }
    /// The name of dimension `dim`, if it has one.
    std::optional<std::string> dimension_name(size_t dim) const {
        char *s = nullptr;
        detail::check(zarr_array_dimension_name(get(), dim, &s));
        if (!s) return std::nullopt;
        return detail::take(s);
    }
    /// The fill value as T, which must be the array's own type.
    template <class T> T fill_value() const {
        if (data_type_of<T>() != data_type())
            throw Error(ZARR_ERR_INVALID_ARGUMENT, "fill_value<T>: T is not the array's data type");
        T v{};
        detail::check(zarr_array_fill_value(get(), &v, sizeof v));
        return v;
    }
    /// User attributes as JSON text.
    std::string attributes() const {
        char *s = nullptr;
        detail::check(zarr_array_attributes(get(), &s));
        return detail::take(s);
    }
    void set_attributes(const std::string &json) { detail::check(zarr_array_set_attributes(get(), json.c_str())); }
    /// The whole metadata document.
    std::string metadata() const {
        char *s = nullptr;
        detail::check(zarr_array_metadata(get(), &s));
        return detail::take(s);
    }
    /// Whether the chunk (shard) at grid coordinates `chunk` is stored.
    bool chunk_is_stored(const Shape &chunk) const {
        int s = 0;
        detail::check(zarr_array_chunk_is_stored(get(), detail::ptr(chunk), &s));
        return s != 0;
    }
    /// Changes the shape (the rank stays), as zarr_array_resize(). Growing after shrinking shows the old
    /// values of the chunks the smaller edge cut through; to have the fill value in the whole grown part,
    /// write it there after growing, from one value (all strides 0: no buffer of the region's size):
    ///
    ///     a.resize({ny_big, nx});                       // grown from ny_small rows
    ///     double fill = a.fill_value<double>();
    ///     a.write({ny_small, 0}, zarr::View<const double>(&fill, {ny_big - ny_small, nx}, {0, 0}));
    ///
    /// (one write per grown dimension; chunks left holding only the fill value are deleted).
    void resize(const Shape &shape) { detail::check(zarr_array_resize(get(), detail::ptr(shape), shape.size())); }

    // --- typed reads ---------------------------------------------------------------------------
    /// The whole array as T, C order.
    template <class T> std::vector<T> read() const {
        Shape s = shape();
        return read<T>(Shape(s.size(), 0), s);
    }
    /// The hyperslab (start, count, step) as T, C order over `count`.
    template <class T> std::vector<T> read(const Shape &start, const Shape &count, const Shape &step = {}) const {
        static_assert(!std::is_same_v<T, bool>, "zarr: std::vector<bool> is bit-packed: read bool arrays as uint8_t");
        std::vector<T> out(detail::checked_size(detail::product(count), 1));
        read_into(start, count, step, nullptr, out.data(), out.size());
        return out;
    }
    /// Reads the hyperslab whose counts are `out.shape` into caller memory laid out by `out.strides`.
    template <class T> void read(const Shape &start, const View<T> &out, const Shape &step = {}) const {
        static_assert(!std::is_const_v<T>, "zarr: read into a View<T>, not a View<const T>");
        read_into(start, out.shape, step, out.strides.empty() ? nullptr : &out.strides, out.data, out.span());
    }
    /// Reads the hyperslab into `n` contiguous elements at `out` (C order over `count`).
    template <class T> void read(const Shape &start, const Shape &count, T *out, size_t n, const Shape &step = {}) const {
        read_into(start, count, step, nullptr, out, n);
    }

    // --- typed writes --------------------------------------------------------------------------
    /// Writes the whole array from `data` (C order; converted from T).
    template <class T> void write(const std::vector<T> &data) {
        Shape s = shape();
        write(Shape(s.size(), 0), s, data);
    }
    /// Writes the hyperslab (start, count, step) from `data` (C order over `count`).
    template <class T>
    void write(const Shape &start, const Shape &count, const std::vector<T> &data, const Shape &step = {}) {
        static_assert(!std::is_same_v<T, bool>, "zarr: std::vector<bool> is bit-packed: write bool arrays from uint8_t");
        if (data.size() != detail::product(count))
            throw Error(ZARR_ERR_BUFFER_SIZE, "write: the vector has " + std::to_string(data.size()) +
                                                  " elements, the selection " + std::to_string(detail::product(count)));
        write_from(start, count, step, nullptr, data.data(), data.size());
    }
    /// Writes the hyperslab whose counts are `in.shape` from caller memory laid out by `in.strides`.
    template <class T> void write(const Shape &start, const View<T> &in, const Shape &step = {}) {
        write_from(start, in.shape, step, in.strides.empty() ? nullptr : &in.strides,
                   const_cast<const std::remove_const_t<T> *>(in.data), in.span());
    }

    // --- variable-length strings and bytes ------------------------------------------------------
    /// The region's elements of a ZARR_STRING / ZARR_BYTES array, C order.
    std::vector<std::string> read_strings(const Shape &start, const Shape &count) const {
        zarr_vlen *v = nullptr;
        detail::check(zarr_read_region_vlen(get(), detail::ptr(start), detail::ptr(count), &v));
        const uint64_t *off = nullptr;
        const uint8_t *d = nullptr;
        size_t n = 0;
        zarr_status s = zarr_vlen_view(v, &off, &d, &n);
        std::vector<std::string> out;
        if (s == ZARR_OK) {
            out.reserve(n);
            for (size_t i = 0; i < n; ++i)
                out.emplace_back(reinterpret_cast<const char *>(d) + off[i], static_cast<size_t>(off[i + 1] - off[i]));
        }
        zarr_vlen_free(v);
        detail::check(s);
        return out;
    }
    /// Writes the region's elements of a ZARR_STRING / ZARR_BYTES array from `values` (C order).
    void write_strings(const Shape &start, const Shape &count, const std::vector<std::string> &values) {
        if (values.size() != detail::product(count))
            throw Error(ZARR_ERR_BUFFER_SIZE, "write_strings: the element count differs from the selection's");
        std::vector<uint64_t> off{0};
        std::string data;
        for (const auto &v : values) {
            data += v;
            off.push_back(data.size());
        }
        detail::check(zarr_write_region_vlen(get(), detail::ptr(start), detail::ptr(count), off.data(),
                                             reinterpret_cast<const uint8_t *>(data.data()), data.size()));
    }

private:
    using dims_fn = zarr_status (*)(const zarr_array *, uint64_t *, size_t);
    Shape dims(dims_fn f) const {
        Shape s(rank());
        detail::check(f(get(), s.empty() ? nullptr : s.data(), s.size()));
        return s;
    }
    void check_rank(const Shape &start, const Shape &count, const Shape &step, const std::vector<int64_t> *strides) const {
        size_t r = rank();
        if (start.size() != r || count.size() != r || (!step.empty() && step.size() != r) ||
            (strides && strides->size() != r))
            throw Error(ZARR_ERR_INVALID_ARGUMENT, "the selection's rank differs from the array's (" + std::to_string(r) + ")");
    }
    template <class T>
    void read_into(const Shape &start, const Shape &count, const Shape &step, const std::vector<int64_t> *strides,
                   T *out, size_t n) const {
        check_rank(start, count, step, strides);
        detail::check(zarr_read_hyperslab(get(), detail::ptr(start), detail::ptr(count),
                                          step.empty() ? nullptr : step.data(), strides ? strides->data() : nullptr,
                                          data_type_of<T>(), out, detail::checked_size(n, sizeof(T))));
    }
    template <class T>
    void write_from(const Shape &start, const Shape &count, const Shape &step, const std::vector<int64_t> *strides,
                    const T *in, size_t n) {
        check_rank(start, count, step, strides);
        detail::check(zarr_write_hyperslab(get(), detail::ptr(start), detail::ptr(count),
                                           step.empty() ? nullptr : step.data(), strides ? strides->data() : nullptr,
                                           data_type_of<T>(), in, detail::checked_size(n, sizeof(T))));
    }

    zarr_array *h_ = nullptr;
};

/// A child of a group.
struct Node {
    std::string name;
    zarr_node_type type;
    bool is_array() const { return type == ZARR_NODE_ARRAY; }
    bool is_group() const { return type == ZARR_NODE_GROUP; }
};

/// An open group (zarr_group). Move-only; closed by the destructor.
class Group {
public:
    Group() = default;
    explicit Group(zarr_group *h) : h_(h) {}
    Group(Group &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
    Group &operator=(Group &&o) noexcept {
        if (this != &o) {
            zarr_group_close(h_);
            h_ = std::exchange(o.h_, nullptr);
        }
        return *this;
    }
    Group(const Group &) = delete;
    Group &operator=(const Group &) = delete;
    ~Group() { zarr_group_close(h_); }

    /// Opens the group in directory `path` (Mode::read_only by default).
    static Group open(const std::string &path, Mode mode = Mode::read_only) {
        zarr_group *h = nullptr;
        detail::check(zarr_group_open(path.c_str(), static_cast<int>(mode), &h));
        return Group(h);
    }
    /// The older form with a bare flag (true: read and write).
    [[deprecated("pass zarr::Mode::read_write or zarr::Mode::read_only instead of a bool")]]
    static Group open(const std::string &path, bool writable) {
        return open(path, writable ? Mode::read_write : Mode::read_only);
    }
    /// Creates a group (Zarr format 2 or 3) with attributes given as a JSON object text ("" for none).
    static Group create(const std::string &path, const std::string &attributes_json = "", int zarr_format = 3) {
        zarr_group *h = nullptr;
        detail::check(zarr_group_create_ex(path.c_str(), attributes_json.empty() ? nullptr : attributes_json.c_str(),
                                           zarr_format, &h));
        return Group(h);
    }

    void close() { detail::check(zarr_group_close(std::exchange(h_, nullptr))); }
    bool valid() const noexcept { return h_ != nullptr; }
    zarr_group *get() const {
        if (!h_) throw Error(ZARR_ERR_INVALID_HANDLE, "zarr::Group is closed or moved from");
        return h_;
    }

    int zarr_format() const {
        int f = 0;
        detail::check(zarr_group_zarr_format(get(), &f));
        return f;
    }
    std::string attributes() const {
        char *s = nullptr;
        detail::check(zarr_group_attributes(get(), &s));
        return detail::take(s);
    }
    void set_attributes(const std::string &json) { detail::check(zarr_group_set_attributes(get(), json.c_str())); }
    std::string metadata() const {
        char *s = nullptr;
        detail::check(zarr_group_metadata(get(), &s));
        return detail::take(s);
    }
    /// The direct children (arrays and groups), sorted by name.
    std::vector<Node> children() const {
        zarr_node_list *l = nullptr;
        detail::check(zarr_group_list(get(), &l));
        size_t n = 0;
        std::vector<Node> out;
        zarr_status s = zarr_node_list_size(l, &n);
        for (size_t i = 0; s == ZARR_OK && i < n; ++i) {
            const char *name = nullptr;
            zarr_node_type t{};
            s = zarr_node_list_get(l, i, &name, &t);
            if (s == ZARR_OK) out.push_back(Node{name, t});
        }
        zarr_node_list_free(l);
        detail::check(s);
        return out;
    }
    Array open_array(const std::string &name) const {
        zarr_array *h = nullptr;
        detail::check(zarr_group_open_array(get(), name.c_str(), &h));
        return Array(h);
    }
    Group open_group(const std::string &name) const {
        zarr_group *h = nullptr;
        detail::check(zarr_group_open_group(get(), name.c_str(), &h));
        return Group(h);
    }
    Group create_group(const std::string &name, const std::string &attributes_json = "") {
        zarr_group *h = nullptr;
        detail::check(zarr_group_create_group(get(), name.c_str(),
                                              attributes_json.empty() ? nullptr : attributes_json.c_str(), &h));
        return Group(h);
    }
    /// Creates the array `name` from a complete metadata document.
    Array create_array(const std::string &name, const std::string &metadata_json) {
        zarr_array *h = nullptr;
        detail::check(zarr_group_create_array(get(), name.c_str(), metadata_json.c_str(), &h));
        return Array(h);
    }
    /// Creates the array `name` from a spec (in the group's format unless the spec sets one).
    Array create_array(const std::string &name, const ArraySpec &spec) {
        zarr_array *h = nullptr;
        detail::check(zarr_group_create_array_from_spec(get(), name.c_str(), spec.get(), &h));
        return Array(h);
    }
    /// Deletes the array or group `name` (a relative path) and everything below it
    /// (zarr_group_delete_member()).
    void delete_member(const std::string &name) { detail::check(zarr_group_delete_member(get(), name.c_str())); }
    /// Moves (renames) the array or group `from` (a relative path), with everything below it, to the
    /// relative path `to`, whose parent group must exist (zarr_group_move_member()).
    void move_member(const std::string &from, const std::string &to) {
        detail::check(zarr_group_move_member(get(), from.c_str(), to.c_str()));
    }

    /// Icechunk (a group opened from an `icechunk://` location of a branch): commits the changes of
    /// the session the group belongs to and returns the new snapshot's id (zarr_icechunk_commit();
    /// `rebase`: ZARR_ICECHUNK_REBASE). Throws zarr::Error with status ZARR_ERR_CONFLICT when another
    /// writer's commit came first; the session keeps its changes.
    std::string icechunk_commit(const std::string &message, bool rebase = false) {
        char *id = nullptr;
        detail::check(zarr_icechunk_commit(get(), message.c_str(), rebase ? ZARR_ICECHUNK_REBASE : 0, &id));
        return detail::take(id);
    }
    /// Icechunk: drops the session's uncommitted changes; it continues at the branch's tip
    /// (zarr_icechunk_discard()).
    void icechunk_discard() { detail::check(zarr_icechunk_discard(get())); }
    /// Icechunk: whether the session has uncommitted changes.
    bool icechunk_has_changes() const {
        int v = 0;
        detail::check(zarr_icechunk_has_changes(get(), &v));
        return v != 0;
    }
    /// Icechunk: the id of the snapshot the session reads.
    std::string icechunk_snapshot_id() const {
        char *id = nullptr;
        detail::check(zarr_icechunk_snapshot_id(get(), &id));
        return detail::take(id);
    }
    /// Icechunk: a fork of the branch session, as text for writers in other processes
    /// (icechunk_open_fork(); zarr_icechunk_fork()). Since: 0.4.
    std::string icechunk_fork() {
        char *text = nullptr;
        detail::check(zarr_icechunk_fork(get(), &text));
        return detail::take(text);
    }
    /// Icechunk: the root group of a fork session (a text from icechunk_fork()), for reading and
    /// writing; it is never committed itself (zarr_icechunk_open_fork()). Since: 0.4.
    static Group icechunk_open_fork(const std::string &fork) {
        zarr_group *h = nullptr;
        detail::check(zarr_icechunk_open_fork(fork.c_str(), nullptr, &h));
        return Group(h);
    }
    /// Icechunk: the changes written in this fork session, as text for icechunk_merge()
    /// (zarr_icechunk_fork_changes()). Since: 0.4.
    std::string icechunk_fork_changes() const {
        char *text = nullptr;
        detail::check(zarr_icechunk_fork_changes(get(), &text));
        return detail::take(text);
    }
    /// Icechunk: merges a fork's changes into this branch session; icechunk_commit() then commits
    /// them with the session's own (zarr_icechunk_merge()). Since: 0.4.
    void icechunk_merge(const std::string &changes) { detail::check(zarr_icechunk_merge(get(), changes.c_str())); }

private:
    zarr_group *h_ = nullptr;
};

/// Icechunk: creates an empty repository at `location` (`icechunk://DIR`); returns its first
/// snapshot's id (zarr_icechunk_create_repository()).
inline std::string icechunk_create_repository(const std::string &location) {
    char *id = nullptr;
    detail::check(zarr_icechunk_create_repository(location.c_str(), &id));
    return detail::take(id);
}

/// Icechunk: creates the tag `name` at `snapshot`, or ("") at the snapshot the location's version
/// names; returns the tagged snapshot's id (zarr_icechunk_create_tag()).
inline std::string icechunk_create_tag(const std::string &location, const std::string &name,
                                       const std::string &snapshot = "") {
    char *id = nullptr;
    detail::check(zarr_icechunk_create_tag(location.c_str(), nullptr, name.c_str(),
                                           snapshot.empty() ? nullptr : snapshot.c_str(), &id));
    return detail::take(id);
}

/// Icechunk: creates the branch `name`, likewise (zarr_icechunk_create_branch()).
inline std::string icechunk_create_branch(const std::string &location, const std::string &name,
                                          const std::string &snapshot = "") {
    char *id = nullptr;
    detail::check(zarr_icechunk_create_branch(location.c_str(), nullptr, name.c_str(),
                                              snapshot.empty() ? nullptr : snapshot.c_str(), &id));
    return detail::take(id);
}

/// What is stored at `path`: an array or a group (throws ZARR_ERR_NOT_FOUND for neither).
inline zarr_node_type node_type_at(const std::string &path) {
    zarr_node_type t{};
    detail::check(zarr_node_type_at(path.c_str(), &t));
    return t;
}

/// The library's version string.
inline std::string version() { return zarr_version(); }

/// Sets the number of encode/decode threads (0: the default).
inline void set_num_threads(size_t n) { detail::check(zarr_set_num_threads(n)); }

}  // namespace zarr

#endif  // ZARR_HPP
