"""A thin ctypes binding of libzarr's C API, for the interop tests and the corpus checker.

The library is found through $ZARR_LIB, else target/release/libzarr.so beside this repository.
Every call goes through the C ABI, exactly as a C program would use it.
"""
import ctypes
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STATUS = {
    0: "ZARR_OK", -1: "ZARR_ERR_INVALID_ARGUMENT", -2: "ZARR_ERR_INVALID_HANDLE", -3: "ZARR_ERR_BUFFER_SIZE",
    -4: "ZARR_ERR_OUT_OF_BOUNDS", -5: "ZARR_ERR_READ_ONLY", -10: "ZARR_ERR_METADATA", -11: "ZARR_ERR_UNSUPPORTED",
    -12: "ZARR_ERR_VALUE", -20: "ZARR_ERR_CODEC", -21: "ZARR_ERR_CHECKSUM", -30: "ZARR_ERR_NOT_FOUND",
    -31: "ZARR_ERR_EXISTS", -40: "ZARR_ERR_IO", -50: "ZARR_ERR_INTERNAL",
    -60: "ZARR_ERR_MEMORY", -70: "ZARR_ERR_CONFLICT",
}
READ, READ_WRITE = 1, 3
ICECHUNK_REBASE = 1
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "float32", "float64", "complex64", "complex128", "raw", "struct", "string", "bytes"]
VLEN_DTYPES = {"string", "bytes"}
# Extension data types (zarr_data_type values 18 and up; the element size comes from
# zarr_array_data_type like for every type).
EXT_DTYPES = {
    18: "numpy.datetime64", 19: "numpy.timedelta64", 20: "fixed_length_utf32", 21: "null_terminated_bytes",
    22: "bfloat16", 23: "complex_float16", 24: "complex_bfloat16", 25: "float8_e3m4", 26: "float8_e4m3",
    27: "float8_e4m3b11fnuz", 28: "float8_e4m3fnuz", 29: "float8_e5m2", 30: "float8_e5m2fnuz",
    31: "float8_e8m0fnu", 32: "float6_e2m3fn", 33: "float6_e3m2fn", 34: "float4_e2m1fn",
    35: "complex_float8_e3m4", 36: "complex_float8_e4m3", 37: "complex_float8_e4m3b11fnuz",
    38: "complex_float8_e4m3fnuz", 39: "complex_float8_e5m2", 40: "complex_float8_e5m2fnuz",
    41: "complex_float8_e8m0fnu", 42: "complex_float6_e2m3fn", 43: "complex_float6_e3m2fn",
    44: "complex_float4_e2m1fn", 45: "int2", 46: "int4", 47: "uint2", 48: "uint4",
}


def dtype_name(value):
    """The name of a zarr_data_type value."""
    if 0 <= value < len(DTYPES):
        return DTYPES[value]
    return EXT_DTYPES.get(value, f"zarr_data_type {value}")


def dtype_code(name):
    """The zarr_data_type value of a type name (DTYPES or EXT_DTYPES)."""
    if name in DTYPES:
        return DTYPES.index(name)
    return next(k for k, v in EXT_DTYPES.items() if v == name)


class ZarrError(Exception):
    def __init__(self, status, message):
        super().__init__(f"{STATUS.get(status, status)}: {message}")
        self.status = status
        self.name = STATUS.get(status, str(status))
        self.message = message


def load(path=None):
    path = path or os.environ.get("ZARR_LIB") or str(ROOT / "target" / "release" / "libzarr.so")
    lib = ctypes.CDLL(path)
    vp, u64p, c = ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64), ctypes.c_char_p
    sigs = {
        "zarr_open": [c, ctypes.c_int, ctypes.POINTER(vp)],
        "zarr_create": [c, c, ctypes.POINTER(vp)],
        "zarr_close": [vp],
        "zarr_array_rank": [vp, ctypes.POINTER(ctypes.c_size_t)],
        "zarr_array_shape": [vp, u64p, ctypes.c_size_t],
        "zarr_array_chunk_shape": [vp, u64p, ctypes.c_size_t],
        "zarr_array_data_type": [vp, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_size_t)],
        "zarr_array_zarr_format": [vp, ctypes.POINTER(ctypes.c_int)],
        "zarr_array_num_fields": [vp, ctypes.POINTER(ctypes.c_size_t)],
        "zarr_array_field": [vp, ctypes.c_size_t, ctypes.POINTER(c), ctypes.POINTER(ctypes.c_int),
                             ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)],
        "zarr_convert_v2_to_v3": [c],
        "zarr_array_fill_value": [vp, vp, ctypes.c_size_t],
        "zarr_array_dimension_name": [vp, ctypes.c_size_t, ctypes.POINTER(vp)],
        "zarr_array_time_unit": [vp, ctypes.POINTER(vp), ctypes.POINTER(ctypes.c_int64)],
        "zarr_array_attributes": [vp, ctypes.POINTER(vp)],
        "zarr_array_set_attributes": [vp, c],
        "zarr_array_metadata": [vp, ctypes.POINTER(vp)],
        "zarr_read_region": [vp, u64p, u64p, vp, ctypes.c_size_t],
        "zarr_write_region": [vp, u64p, u64p, vp, ctypes.c_size_t],
        "zarr_group_open": [c, ctypes.c_int, ctypes.POINTER(vp)],
        "zarr_group_create": [c, c, ctypes.POINTER(vp)],
        "zarr_group_create_ex": [c, c, ctypes.c_int, ctypes.POINTER(vp)],
        "zarr_group_zarr_format": [vp, ctypes.POINTER(ctypes.c_int)],
        "zarr_group_close": [vp],
        "zarr_group_attributes": [vp, ctypes.POINTER(vp)],
        "zarr_group_set_attributes": [vp, c],
        "zarr_group_metadata": [vp, ctypes.POINTER(vp)],
        "zarr_group_create_array": [vp, c, c, ctypes.POINTER(vp)],
        "zarr_group_create_group": [vp, c, c, ctypes.POINTER(vp)],
        "zarr_group_list": [vp, ctypes.POINTER(vp)],
        "zarr_group_open_array": [vp, c, ctypes.POINTER(vp)],
        "zarr_group_open_group": [vp, c, ctypes.POINTER(vp)],
        "zarr_node_list_size": [vp, ctypes.POINTER(ctypes.c_size_t)],
        "zarr_node_list_get": [vp, ctypes.c_size_t, ctypes.POINTER(c), ctypes.POINTER(ctypes.c_int)],
        "zarr_node_list_free": [vp],
        "zarr_node_type_at": [c, ctypes.POINTER(ctypes.c_int)],
        "zarr_group_consolidate": [vp],
        "zarr_group_delete_member": [vp, c],
        "zarr_group_move_member": [vp, c, c],
        "zarr_memory_store_remove": [c],
        "zarr_string_free": [vp],
        # selections (hyperslabs, memory types), resize, chunk-level calls
        "zarr_read_hyperslab": [vp, u64p, u64p, u64p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int, vp,
                                ctypes.c_size_t],
        "zarr_write_hyperslab": [vp, u64p, u64p, u64p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int, vp,
                                 ctypes.c_size_t],
        "zarr_array_resize": [vp, u64p, ctypes.c_size_t],
        "zarr_array_grid_shape": [vp, u64p, ctypes.c_size_t],
        "zarr_array_selection_chunks": [vp, u64p, u64p, u64p, u64p, ctypes.c_size_t,
                                        ctypes.POINTER(ctypes.c_size_t)],
        "zarr_array_chunk_region": [vp, u64p, u64p, u64p],
        "zarr_array_chunk_is_stored": [vp, u64p, ctypes.POINTER(ctypes.c_int)],
        "zarr_array_read_chunk": [vp, u64p, vp, ctypes.c_size_t],
        "zarr_array_write_chunk": [vp, u64p, vp, ctypes.c_size_t],
        "zarr_array_erase_chunk": [vp, u64p],
        "zarr_array_region_nbytes": [vp, u64p, ctypes.c_size_t, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)],
        "zarr_read_region_vlen": [vp, u64p, u64p, ctypes.POINTER(vp)],
        "zarr_vlen_view": [vp, ctypes.POINTER(u64p), ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)),
                           ctypes.POINTER(ctypes.c_size_t)],
        "zarr_vlen_free": [vp],
        "zarr_write_region_vlen": [vp, u64p, u64p, u64p, ctypes.c_char_p, ctypes.c_size_t],
        "zarr_array_fill_value_vlen": [vp, ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)),
                                       ctypes.POINTER(ctypes.c_size_t)],
        "zarr_array_vlen_item_type": [vp, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_size_t)],
        # creation specs
        "zarr_array_spec_new": [ctypes.c_int, ctypes.c_size_t, u64p, ctypes.POINTER(vp)],
        "zarr_array_spec_free": [vp],
        "zarr_array_spec_set_chunks": [vp, u64p, ctypes.c_size_t],
        "zarr_array_spec_set_shards": [vp, u64p, ctypes.c_size_t],
        "zarr_array_spec_set_compressor": [vp, c, ctypes.c_int],
        "zarr_array_spec_set_shuffle": [vp, ctypes.c_int],
        "zarr_array_spec_set_fill_value": [vp, vp, ctypes.c_size_t],
        "zarr_array_spec_set_dimension_names": [vp, ctypes.POINTER(c), ctypes.c_size_t],
        "zarr_array_spec_set_attributes": [vp, c],
        "zarr_array_spec_set_zarr_format": [vp, ctypes.c_int],
        "zarr_array_spec_to_json": [vp, ctypes.POINTER(vp)],
        "zarr_create_from_spec": [c, vp, ctypes.POINTER(vp)],
        "zarr_group_create_array_from_spec": [vp, c, vp, ctypes.POINTER(vp)],
        "zarr_store_options_create": [ctypes.POINTER(vp)],
        "zarr_store_options_set": [vp, c, c],
        "zarr_store_options_set_json": [vp, c],
        "zarr_store_options_free": [vp],
        "zarr_open_with_options": [c, vp, ctypes.c_int, ctypes.POINTER(vp)],
        "zarr_create_with_options": [c, vp, c, ctypes.POINTER(vp)],
        "zarr_create_from_spec_with_options": [c, vp, vp, ctypes.POINTER(vp)],
        "zarr_group_open_with_options": [c, vp, ctypes.c_int, ctypes.POINTER(vp)],
        "zarr_group_create_with_options": [c, vp, c, ctypes.c_int, ctypes.POINTER(vp)],
        # Icechunk repositories
        "zarr_icechunk_create_repository": [c, ctypes.POINTER(vp)],
        "zarr_icechunk_create_repository_with_options": [c, vp, ctypes.POINTER(vp)],
        "zarr_icechunk_commit": [vp, c, ctypes.c_int, ctypes.POINTER(vp)],
        "zarr_icechunk_discard": [vp],
        "zarr_icechunk_has_changes": [vp, ctypes.POINTER(ctypes.c_int)],
        "zarr_icechunk_snapshot_id": [vp, ctypes.POINTER(vp)],
        "zarr_icechunk_create_tag": [c, vp, c, c, ctypes.POINTER(vp)],
        "zarr_icechunk_create_branch": [c, vp, c, c, ctypes.POINTER(vp)],
    }
    for name, args in sigs.items():
        # An older library (a benchmark's "before" build) lacks the newer functions: a call to one of
        # them raises AttributeError naming it, the rest work.
        f = getattr(lib, name, None)
        if f is None:
            continue
        f.argtypes = args
        f.restype = None if name in ("zarr_string_free", "zarr_vlen_free", "zarr_store_options_free") else ctypes.c_int32
    lib.zarr_last_error.restype = ctypes.c_char_p
    lib.zarr_last_error.argtypes = []
    return lib


_LIB = None


def lib():
    global _LIB
    if _LIB is None:
        _LIB = load()
    return _LIB


def check(rc):
    if rc != 0:
        raise ZarrError(rc, lib().zarr_last_error().decode("utf-8", "replace"))


def _take_string(p):
    s = ctypes.string_at(p.value).decode("utf-8")
    lib().zarr_string_free(p)
    return s


def _dims(values):
    return (ctypes.c_uint64 * max(len(values), 1))(*values)


class StoreOptions:
    """zarr_store_options: settings of remote stores, e.g. StoreOptions(endpoint="http://127.0.0.1:9000",
    retries=2) or StoreOptions(json='{"region": "eu-west-1"}')."""

    def __init__(self, json=None, **values):
        self.h = ctypes.c_void_p()
        check(lib().zarr_store_options_create(ctypes.byref(self.h)))
        if json is not None:
            self.set_json(json)
        for k, v in values.items():
            self.set(k, v)

    def set(self, key, value):
        if isinstance(value, bool):
            value = "true" if value else "false"
        check(lib().zarr_store_options_set(self.h, key.encode(), str(value).encode()))

    def set_json(self, json_text):
        check(lib().zarr_store_options_set_json(self.h, json_text.encode()))

    def free(self):
        if self.h:
            lib().zarr_store_options_free(self.h)
            self.h = None

    def __del__(self):
        try:
            self.free()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class Array:
    def __init__(self, handle):
        self.h = handle

    @classmethod
    def open(cls, path, mode=READ, options=None):
        """zarr_open, or zarr_open_with_options when `options` (a StoreOptions) is given."""
        h = ctypes.c_void_p()
        if options is None:
            check(lib().zarr_open(str(path).encode(), mode, ctypes.byref(h)))
        else:
            check(lib().zarr_open_with_options(str(path).encode(), options.h, mode, ctypes.byref(h)))
        return cls(h)

    @classmethod
    def create(cls, path, metadata_json, options=None):
        """zarr_create, or zarr_create_with_options when `options` is given."""
        h = ctypes.c_void_p()
        if options is None:
            check(lib().zarr_create(str(path).encode(), metadata_json.encode(), ctypes.byref(h)))
        else:
            check(lib().zarr_create_with_options(str(path).encode(), options.h, metadata_json.encode(), ctypes.byref(h)))
        return cls(h)

    def close(self):
        if self.h:
            check(lib().zarr_close(self.h))
            self.h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def rank(self):
        r = ctypes.c_size_t()
        check(lib().zarr_array_rank(self.h, ctypes.byref(r)))
        return r.value

    @property
    def shape(self):
        buf = _dims([0] * self.rank)
        check(lib().zarr_array_shape(self.h, buf, self.rank))
        return [buf[i] for i in range(self.rank)]

    @property
    def chunk_shape(self):
        buf = _dims([0] * self.rank)
        check(lib().zarr_array_chunk_shape(self.h, buf, self.rank))
        return [buf[i] for i in range(self.rank)]

    @property
    def dtype(self):
        d, s = ctypes.c_int(), ctypes.c_size_t()
        check(lib().zarr_array_data_type(self.h, ctypes.byref(d), ctypes.byref(s)))
        return dtype_name(d.value), s.value

    @property
    def zarr_format(self):
        f = ctypes.c_int()
        check(lib().zarr_array_zarr_format(self.h, ctypes.byref(f)))
        return f.value

    @property
    def time_unit(self):
        """(unit, scale_factor) of a numpy.datetime64 / numpy.timedelta64 array."""
        p, scale = ctypes.c_void_p(), ctypes.c_int64()
        check(lib().zarr_array_time_unit(self.h, ctypes.byref(p), ctypes.byref(scale)))
        return _take_string(p), scale.value

    @property
    def fields(self):
        """A structured array's fields as [(name, dtype name, offset, size)]; [] for other types."""
        n = ctypes.c_size_t()
        check(lib().zarr_array_num_fields(self.h, ctypes.byref(n)))
        out = []
        for i in range(n.value):
            name, dt, off, size = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_size_t(), ctypes.c_size_t()
            check(lib().zarr_array_field(self.h, i, ctypes.byref(name), ctypes.byref(dt), ctypes.byref(off),
                                         ctypes.byref(size)))
            out.append((name.value.decode(), dtype_name(dt.value), off.value, size.value))
        return out

    @property
    def attributes(self):
        p = ctypes.c_void_p()
        check(lib().zarr_array_attributes(self.h, ctypes.byref(p)))
        return _take_string(p)

    def set_attributes(self, json_text):
        check(lib().zarr_array_set_attributes(self.h, json_text.encode()))

    @property
    def metadata(self):
        p = ctypes.c_void_p()
        check(lib().zarr_array_metadata(self.h, ctypes.byref(p)))
        return _take_string(p)

    @property
    def is_vlen(self):
        return self.dtype[0] in VLEN_DTYPES

    @property
    def fill_value(self):
        """One element: bytes of the element size, or for variable-length arrays the element's bytes."""
        if self.is_vlen:
            p, n = ctypes.POINTER(ctypes.c_uint8)(), ctypes.c_size_t()
            check(lib().zarr_array_fill_value_vlen(self.h, ctypes.byref(p), ctypes.byref(n)))
            return ctypes.string_at(p, n.value) if n.value else b""
        size = self.dtype[1]
        buf = ctypes.create_string_buffer(max(size, 1))
        check(lib().zarr_array_fill_value(self.h, buf, size))
        return buf.raw[:size]

    def dimension_name(self, dim):
        p = ctypes.c_void_p()
        check(lib().zarr_array_dimension_name(self.h, dim, ctypes.byref(p)))
        return None if not p.value else _take_string(p)

    def read(self, start=None, count=None):
        start = start if start is not None else [0] * self.rank
        count = count if count is not None else self.shape
        n = 1
        for x in count:
            n *= x
        size = n * self.dtype[1]
        buf = ctypes.create_string_buffer(max(size, 1))
        check(lib().zarr_read_region(self.h, _dims(start), _dims(count), buf, size))
        return buf.raw[:size]

    def read_into(self, out, start=None, count=None):
        """zarr_read_region straight into `out`, a writable C-contiguous buffer (e.g. a numpy array made
        with numpy.empty): what a C caller does, without the zeroed ctypes buffer and the copies of
        `read`."""
        start = start if start is not None else [0] * self.rank
        count = count if count is not None else self.shape
        view = memoryview(out).cast("B")
        ptr = ctypes.addressof(ctypes.c_char.from_buffer(view))
        check(lib().zarr_read_region(self.h, _dims(start), _dims(count), ptr, view.nbytes))
        return out

    def write(self, data, start=None, count=None):
        start = start if start is not None else [0] * self.rank
        count = count if count is not None else self.shape
        data = bytes(data)
        check(lib().zarr_write_region(self.h, _dims(start), _dims(count), data, len(data)))

    def read_vlen_raw(self, start=None, count=None):
        """zarr_read_region_vlen: (offsets as a list of n + 1 ints, data bytes)."""
        start = start if start is not None else [0] * self.rank
        count = count if count is not None else self.shape
        v = ctypes.c_void_p()
        check(lib().zarr_read_region_vlen(self.h, _dims(start), _dims(count), ctypes.byref(v)))
        try:
            offs = ctypes.POINTER(ctypes.c_uint64)()
            data = ctypes.POINTER(ctypes.c_uint8)()
            n = ctypes.c_size_t()
            check(lib().zarr_vlen_view(v, ctypes.byref(offs), ctypes.byref(data), ctypes.byref(n)))
            offsets = offs[:n.value + 1]
            raw = ctypes.string_at(data, offsets[-1]) if offsets[-1] else b""
            return offsets, raw
        finally:
            lib().zarr_vlen_free(v)

    def read_vlen(self, start=None, count=None):
        """The region's elements in C order, as a flat list: str for string arrays, else bytes."""
        offsets, raw = self.read_vlen_raw(start, count)
        elems = [raw[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]
        if self.dtype[0] == "string":
            return [e.decode("utf-8") for e in elems]
        return elems

    def write_vlen(self, values, start=None, count=None):
        """zarr_write_region_vlen from a flat C-order list of str (encoded as UTF-8) or bytes."""
        start = start if start is not None else [0] * self.rank
        count = count if count is not None else self.shape
        elems = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values]
        offsets = [0]
        for e in elems:
            offsets.append(offsets[-1] + len(e))
        data = b"".join(elems)
        offs = (ctypes.c_uint64 * len(offsets))(*offsets)
        check(lib().zarr_write_region_vlen(self.h, _dims(start), _dims(count), offs, data, len(data)))


    # --- selections ------------------------------------------------------------------------------
    def read_hyperslab(self, start, count, step=None, stride=None, buffer_type=None, buffer_size=None, out=None):
        """Reads into `out` (a writable buffer, e.g. a numpy array's data) or a new bytes object of
        `buffer_size` bytes; returns the buffer. `buffer_type` is a DTYPES name (default: the array's)."""
        code = dtype_code(self.dtype[0] if buffer_type is None else buffer_type)
        steps = None if step is None else _dims(step)
        strides = None if stride is None else (ctypes.c_int64 * max(len(stride), 1))(*stride)
        if out is None:
            out = ctypes.create_string_buffer(max(buffer_size, 1))
            ptr, size = out, buffer_size
        else:
            ptr, size = ctypes.c_void_p(out.ctypes.data), out.nbytes
        check(lib().zarr_read_hyperslab(self.h, _dims(start), _dims(count), steps, strides, code, ptr, size))
        return out

    def write_hyperslab(self, data, start, count, step=None, stride=None, buffer_type=None):
        """Writes from a numpy array's memory (`data`, any layout given by `stride` in elements)."""
        code = dtype_code(self.dtype[0] if buffer_type is None else buffer_type)
        steps = None if step is None else _dims(step)
        strides = None if stride is None else (ctypes.c_int64 * max(len(stride), 1))(*stride)
        check(lib().zarr_write_hyperslab(self.h, _dims(start), _dims(count), steps, strides, code,
                                         ctypes.c_void_p(data.ctypes.data), data.nbytes))

    def resize(self, shape):
        check(lib().zarr_array_resize(self.h, _dims(shape), len(shape)))

    @property
    def grid_shape(self):
        out = (ctypes.c_uint64 * max(self.rank, 1))()
        check(lib().zarr_array_grid_shape(self.h, out, self.rank))
        return list(out)[: self.rank]

    def selection_chunks(self, start, count, step=None):
        n = ctypes.c_size_t()
        steps = None if step is None else _dims(step)
        check(lib().zarr_array_selection_chunks(self.h, _dims(start), _dims(count), steps, None, 0, ctypes.byref(n)))
        out = (ctypes.c_uint64 * max(n.value * self.rank, 1))()
        check(lib().zarr_array_selection_chunks(self.h, _dims(start), _dims(count), steps, out, n.value,
                                                ctypes.byref(n)))
        r = self.rank
        return [list(out[i * r:(i + 1) * r]) for i in range(n.value)]

    def chunk_region(self, chunk):
        o, s = (ctypes.c_uint64 * max(self.rank, 1))(), (ctypes.c_uint64 * max(self.rank, 1))()
        check(lib().zarr_array_chunk_region(self.h, _dims(chunk), o, s))
        return list(o)[: self.rank], list(s)[: self.rank]

    def chunk_is_stored(self, chunk):
        v = ctypes.c_int()
        check(lib().zarr_array_chunk_is_stored(self.h, _dims(chunk), ctypes.byref(v)))
        return bool(v.value)

    def read_chunk(self, chunk, nbytes):
        buf = ctypes.create_string_buffer(max(nbytes, 1))
        check(lib().zarr_array_read_chunk(self.h, _dims(chunk), buf, nbytes))
        return buf.raw[:nbytes]

    def write_chunk(self, chunk, data):
        data = bytes(data)
        check(lib().zarr_array_write_chunk(self.h, _dims(chunk), data, len(data)))

    def erase_chunk(self, chunk):
        check(lib().zarr_array_erase_chunk(self.h, _dims(chunk)))

    def region_nbytes(self, count, buffer_type=None):
        code = dtype_code(self.dtype[0] if buffer_type is None else buffer_type)
        n = ctypes.c_size_t()
        check(lib().zarr_array_region_nbytes(self.h, _dims(count), len(count), code, ctypes.byref(n)))
        return n.value


LEVEL_DEFAULT = -2147483648
SHUFFLE = {"none": 0, "byte": 1, "bit": 2}


class Spec:
    """A zarr_array_spec: Spec(dtype_name, shape, chunks=..., shards=..., compressor=..., level=...,
    shuffle="none"|"byte"|"bit", fill_value=bytes, dimension_names=[...], attributes=json_text,
    zarr_format=2|3). Free it with close() (or use it as a context manager)."""

    def __init__(self, dtype, shape, chunks=None, shards=None, compressor=None, level=LEVEL_DEFAULT,
                 shuffle=None, fill_value=None, dimension_names=None, attributes=None, zarr_format=None):
        self.h = ctypes.c_void_p()
        check(lib().zarr_array_spec_new(dtype_code(dtype), len(shape), _dims(shape), ctypes.byref(self.h)))
        try:
            if chunks is not None:
                check(lib().zarr_array_spec_set_chunks(self.h, _dims(chunks), len(chunks)))
            if shards is not None:
                check(lib().zarr_array_spec_set_shards(self.h, _dims(shards), len(shards)))
            if compressor is not None:
                check(lib().zarr_array_spec_set_compressor(self.h, compressor.encode(), level))
            if shuffle is not None:
                check(lib().zarr_array_spec_set_shuffle(self.h, SHUFFLE[shuffle]))
            if fill_value is not None:
                fv = bytes(fill_value)
                check(lib().zarr_array_spec_set_fill_value(self.h, fv, len(fv)))
            if dimension_names is not None:
                names = (ctypes.c_char_p * max(len(dimension_names), 1))(
                    *[None if n is None else n.encode() for n in dimension_names])
                check(lib().zarr_array_spec_set_dimension_names(self.h, names, len(dimension_names)))
            if attributes is not None:
                check(lib().zarr_array_spec_set_attributes(self.h, attributes.encode()))
            if zarr_format is not None:
                check(lib().zarr_array_spec_set_zarr_format(self.h, zarr_format))
        except ZarrError:
            self.close()
            raise

    def to_json(self):
        p = ctypes.c_void_p()
        check(lib().zarr_array_spec_to_json(self.h, ctypes.byref(p)))
        return _take_string(p)

    def create(self, path, options=None):
        """zarr_create_from_spec, or zarr_create_from_spec_with_options when `options` is given."""
        h = ctypes.c_void_p()
        if options is None:
            check(lib().zarr_create_from_spec(str(path).encode(), self.h, ctypes.byref(h)))
        else:
            check(lib().zarr_create_from_spec_with_options(str(path).encode(), self.h, options.h, ctypes.byref(h)))
        return Array(h)

    def create_in(self, group, name):
        h = ctypes.c_void_p()
        check(lib().zarr_group_create_array_from_spec(group.h, name.encode(), self.h, ctypes.byref(h)))
        return Array(h)

    def close(self):
        if self.h:
            check(lib().zarr_array_spec_free(self.h))
            self.h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Group:
    def __init__(self, handle):
        self.h = handle

    @classmethod
    def open(cls, path, mode=READ, options=None):
        """zarr_group_open, or zarr_group_open_with_options when `options` is given."""
        h = ctypes.c_void_p()
        if options is None:
            check(lib().zarr_group_open(str(path).encode(), mode, ctypes.byref(h)))
        else:
            check(lib().zarr_group_open_with_options(str(path).encode(), options.h, mode, ctypes.byref(h)))
        return cls(h)

    @classmethod
    def create(cls, path, attributes_json=None, zarr_format=None, options=None):
        """zarr_group_create, or zarr_group_create_ex when `zarr_format` is given, or
        zarr_group_create_with_options when `options` is given."""
        h = ctypes.c_void_p()
        attrs = attributes_json.encode() if attributes_json is not None else None
        if options is not None:
            check(lib().zarr_group_create_with_options(str(path).encode(), options.h, attrs, zarr_format or 3,
                                                       ctypes.byref(h)))
        elif zarr_format is None:
            check(lib().zarr_group_create(str(path).encode(), attrs, ctypes.byref(h)))
        else:
            check(lib().zarr_group_create_ex(str(path).encode(), attrs, zarr_format, ctypes.byref(h)))
        return cls(h)

    @property
    def zarr_format(self):
        f = ctypes.c_int()
        check(lib().zarr_group_zarr_format(self.h, ctypes.byref(f)))
        return f.value

    def close(self):
        if self.h:
            check(lib().zarr_group_close(self.h))
            self.h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def attributes(self):
        p = ctypes.c_void_p()
        check(lib().zarr_group_attributes(self.h, ctypes.byref(p)))
        return _take_string(p)

    def set_attributes(self, json_text):
        check(lib().zarr_group_set_attributes(self.h, json_text.encode()))

    @property
    def metadata(self):
        p = ctypes.c_void_p()
        check(lib().zarr_group_metadata(self.h, ctypes.byref(p)))
        return _take_string(p)

    def delete_member(self, name):
        """zarr_group_delete_member: deletes the array or group `name` and everything below it."""
        check(lib().zarr_group_delete_member(self.h, None if name is None else name.encode()))

    def move_member(self, src, dst):
        """zarr_group_move_member: moves the array or group `src` (with everything below it) to `dst`."""
        enc = lambda n: None if n is None else n.encode()  # noqa: E731
        check(lib().zarr_group_move_member(self.h, enc(src), enc(dst)))

    def open_array(self, name):
        h = ctypes.c_void_p()
        check(lib().zarr_group_open_array(self.h, name.encode(), ctypes.byref(h)))
        return Array(h)

    def open_group(self, name):
        h = ctypes.c_void_p()
        check(lib().zarr_group_open_group(self.h, name.encode(), ctypes.byref(h)))
        return Group(h)

    def create_array(self, name, metadata_json):
        h = ctypes.c_void_p()
        check(lib().zarr_group_create_array(self.h, name.encode(), metadata_json.encode(), ctypes.byref(h)))
        return Array(h)

    def create_group(self, name, attributes_json=None):
        h = ctypes.c_void_p()
        attrs = attributes_json.encode() if attributes_json is not None else None
        check(lib().zarr_group_create_group(self.h, name.encode(), attrs, ctypes.byref(h)))
        return Group(h)

    def icechunk_commit(self, message, rebase=False):
        """zarr_icechunk_commit: commits the group's Icechunk session; returns the new snapshot id."""
        p = ctypes.c_void_p()
        check(lib().zarr_icechunk_commit(self.h, message.encode(), ICECHUNK_REBASE if rebase else 0, ctypes.byref(p)))
        return _take_string(p)

    def icechunk_discard(self):
        check(lib().zarr_icechunk_discard(self.h))

    def icechunk_has_changes(self):
        v = ctypes.c_int()
        check(lib().zarr_icechunk_has_changes(self.h, ctypes.byref(v)))
        return bool(v.value)

    def icechunk_snapshot_id(self):
        p = ctypes.c_void_p()
        check(lib().zarr_icechunk_snapshot_id(self.h, ctypes.byref(p)))
        return _take_string(p)

    def consolidate(self):
        """zarr_group_consolidate: writes the consolidated metadata of every node below the group."""
        check(lib().zarr_group_consolidate(self.h))

    def children(self):
        lst = ctypes.c_void_p()
        check(lib().zarr_group_list(self.h, ctypes.byref(lst)))
        try:
            n = ctypes.c_size_t()
            check(lib().zarr_node_list_size(lst, ctypes.byref(n)))
            out = {}
            for i in range(n.value):
                name, kind = ctypes.c_char_p(), ctypes.c_int()
                check(lib().zarr_node_list_get(lst, i, ctypes.byref(name), ctypes.byref(kind)))
                out[name.value.decode()] = "array" if kind.value == 1 else "group"
            return out
        finally:
            lib().zarr_node_list_free(lst)


def node_type(path):
    """'array' or 'group' for the node stored at the directory `path`."""
    t = ctypes.c_int()
    check(lib().zarr_node_type_at(str(path).encode(), ctypes.byref(t)))
    return "array" if t.value == 1 else "group"


def memory_store_remove(name):
    """zarr_memory_store_remove: drops the named in-memory store behind memory://NAME locations."""
    check(lib().zarr_memory_store_remove(name.encode()))


def convert_v2_to_v3(path):
    """zarr_convert_v2_to_v3: rewrites the v2 array at `path` as v3 in place."""
    check(lib().zarr_convert_v2_to_v3(str(path).encode()))


def icechunk_create_repository(location, options=None):
    """zarr_icechunk_create_repository (zarr_icechunk_create_repository_with_options with `options`):
    a new empty repository; returns its first snapshot id."""
    p = ctypes.c_void_p()
    if options is None:
        check(lib().zarr_icechunk_create_repository(location.encode(), ctypes.byref(p)))
    else:
        check(lib().zarr_icechunk_create_repository_with_options(location.encode(), options.h, ctypes.byref(p)))
    return _take_string(p)


def icechunk_create_ref(kind, location, name, snapshot=None, options=None):
    """zarr_icechunk_create_tag (kind "tag") or zarr_icechunk_create_branch (kind "branch"); returns
    the snapshot id the new reference names."""
    p = ctypes.c_void_p()
    f = lib().zarr_icechunk_create_tag if kind == "tag" else lib().zarr_icechunk_create_branch
    check(f(location.encode(), options.h if options else None, name.encode(),
            snapshot.encode() if snapshot else None, ctypes.byref(p)))
    return _take_string(p)
