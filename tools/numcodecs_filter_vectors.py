#!/usr/bin/env python3
"""Writes interop vectors for libzarr's numcodecs filters, made by the real numcodecs + numpy.

For each vector: `<name>.raw` (the elements given to the filter, as zarr gives them: a numpy array of
the `input` dtype), `<name>.enc` (numcodecs' `encode`), `<name>.dec` (numcodecs' `decode` of the
encoded bytes, as zarr passes them: plain bytes). `index.json` lists every vector (one a line) with
its filter configuration (numcodecs' `get_config()`), the input dtype, and `kind`: `round_trip` (all
three files), `encode_error` (numcodecs refuses to encode `.raw`; `error` says how; no other file),
or `decode` (`.enc` and `.dec` only: numcodecs' decode of arbitrary stored bytes).

Usage: python3 tools/numcodecs_filter_vectors.py [out_dir]   (default: tests/vectors/filters)
The Rust test `tests/numcodecs_filters.rs` checks libzarr against these files.
"""

import json
import os
import shutil
import sys
import warnings

import numcodecs
import numpy as np

warnings.simplefilter("ignore")  # casts of NaN/inf, overflows: expected in some vectors

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "vectors", "filters")
rng = np.random.default_rng(20261121)
vectors = []


def write(name, suffix, data):
    with open(os.path.join(OUT, f"{name}.{suffix}"), "wb") as f:
        f.write(data)
    return f"{name}.{suffix}"


def add(name, codec, x, input_dtype=None):
    """Encodes the array `x` (its dtype is what the filter receives) and decodes the result."""
    x = np.asarray(x)
    entry = {"name": name, "kind": "round_trip", "input": input_dtype or x.dtype.str, "filter": codec.get_config()}
    write(name, "raw", x.tobytes())
    try:
        enc = np.asarray(codec.encode(x))
    except Exception as e:  # numcodecs refuses this input
        entry["kind"] = "encode_error"
        entry["error"] = f"{type(e).__name__}: {e}"
    else:
        enc_bytes = enc.tobytes()
        write(name, "enc", enc_bytes)
        write(name, "dec", np.asarray(codec.decode(enc_bytes)).tobytes())
    vectors.append(entry)


def add_decode(name, codec, enc_bytes, input_dtype):
    """A decode-only vector: numcodecs' decode of arbitrary stored bytes."""
    write(name, "enc", enc_bytes)
    write(name, "dec", np.asarray(codec.decode(enc_bytes)).tobytes())
    vectors.append({"name": name, "kind": "decode", "input": input_dtype, "filter": codec.get_config()})


def add_swapped(name, codec, x):
    """numcodecs refuses some big-endian inputs (bitround looks its dtype up by name, and '>f4' is not
    in its table: KeyError). The vector holds numcodecs' result on the little-endian copy of the values,
    byte-swapped: the value semantics libzarr applies in any byte order."""
    x = np.asarray(x)
    le = x.astype(x.dtype.newbyteorder("<"))
    enc = np.asarray(codec.encode(le)).view(le.dtype)
    enc_be = enc.astype(x.dtype).tobytes()
    dec_be = np.asarray(codec.decode(enc.tobytes())).view(le.dtype).astype(x.dtype).tobytes()
    write(name, "raw", x.tobytes())
    write(name, "enc", enc_be)
    write(name, "dec", dec_be)
    vectors.append({"name": name, "kind": "round_trip", "input": x.dtype.str, "filter": codec.get_config(),
                    "note": "numcodecs raises KeyError on big-endian input: the little-endian result, byte-swapped"})


def add_chunk(name, zarray, x):
    """A whole v2 chunk through the filters and compressor of `zarray`, as zarr-python 2 encodes it:
    the chunk array (of the document's dtype and order) goes through each filter's encode, then the
    compressor; decoding runs backwards. `.raw` and `.dec` hold the chunk's values C-ordered and
    native-endian (what libzarr's chain takes and gives); `.enc` the stored chunk."""
    x = np.asarray(x, dtype=zarray["dtype"])
    assert list(x.shape) == zarray["chunks"]
    chunk = np.asfortranarray(x) if zarray["order"] == "F" else np.ascontiguousarray(x)
    filters = [numcodecs.get_codec(dict(f)) for f in (zarray["filters"] or [])]
    comp = numcodecs.get_codec(dict(zarray["compressor"])) if zarray["compressor"] else None
    buf = chunk
    for f in filters:
        buf = f.encode(buf)
    if comp is not None:
        buf = comp.encode(buf)
    enc = np.asarray(buf).tobytes() if not isinstance(buf, bytes) else buf
    dec = enc
    if comp is not None:
        dec = comp.decode(dec)
    for f in reversed(filters):
        dec = f.decode(dec)
    dec = np.asarray(dec).view(x.dtype).reshape(x.shape, order=zarray["order"])
    native = x.dtype.newbyteorder("=")
    write(name, "raw", np.ascontiguousarray(x.astype(native)).tobytes())
    write(name, "enc", enc)
    write(name, "dec", np.ascontiguousarray(dec.astype(native)).tobytes())
    vectors.append({"name": name, "kind": "chunk", "zarray": zarray})


def zarray(dtype, chunks, filters, compressor=None, order="C"):
    return {"zarr_format": 2, "shape": chunks, "chunks": chunks, "dtype": dtype, "fill_value": None,
            "order": order, "filters": filters, "compressor": compressor}


def floats(n, dtype, scale=1000.0, specials=True):
    x = rng.normal(0, scale, n)
    if specials:
        x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310]
    return x.astype(dtype)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)

    # ---- delta
    D = numcodecs.Delta
    add("delta_i2", D(dtype="<i2"), np.array([100, 102, 104, -32768, 32767, 0, 5, -7], dtype="<i2"))
    add("delta_i2_i1", D(dtype="<i2", astype="|i1"), np.array([100, 102, 104, 300, 50, -100, 120, 119], dtype="<i2"))
    add("delta_be_i4", D(dtype=">i4"), rng.integers(-2**31, 2**31, 12).astype(">i4"))
    add("delta_be_i4_le_i2", D(dtype=">i4", astype="<i2"), rng.integers(-1000, 1000, 12).astype(">i4"))
    add("delta_u1", D(dtype="|u1"), np.array([250, 3, 255, 0, 0, 17], dtype="|u1"))
    add("delta_u2_i2", D(dtype="<u2", astype="<i2"), np.array([65535, 0, 40000, 3, 65000], dtype="<u2"))
    add("delta_u8_i8", D(dtype="<u8", astype="<i8"), np.array([2**53 + 1, 2**53 + 3, 2**64 - 1, 5], dtype="<u8"))
    add("delta_i8", D(dtype="<i8"), rng.integers(-2**62, 2**62, 10).astype("<i8"))
    add("delta_f8_f4", D(dtype="<f8", astype="<f4"), np.array([1.0, 1.1, 1.3, 1e10, np.inf, 3.0, -2.5], dtype="<f8"))
    add("delta_f4", D(dtype="<f4"), floats(12, "<f4"))
    add("delta_be_f8", D(dtype=">f8"), np.cumsum(rng.normal(0, 1, 10)).astype(">f8"))
    add("delta_f2", D(dtype="<f2"), np.array([0.1, 0.2, 0.7, 1000.0, 65504.0, -65504.0, 3.0], dtype="<f2"))
    add("delta_f2_f4", D(dtype="<f2", astype="<f4"), np.array([1.0, 1.0001, 1.0002, 1.0003, 1.5, 2.0], dtype="<f2"))
    add("delta_i4_f4", D(dtype="<i4", astype="<f4"), np.array([2**24, 2**24 + 1, 2**24 + 3, 7, -2**30], dtype="<i4"))
    add("delta_f4_i2", D(dtype="<f4", astype="<i2"), np.array([1.5, 2.75, -3.25, 100.5, 0.0], dtype="<f4"))
    add("delta_i2_f2", D(dtype="<i2", astype="<f2"), np.array([1, 3, 2050, 2051, -100], dtype="<i2"))
    add("delta_first_overflow", D(dtype="<i2", astype="|i1"), np.array([300, 301], dtype="<i2"))
    add("delta_first_wraps_unsigned", D(dtype="<i2", astype="|u1"), np.array([-5, -4, 10], dtype="<i2"))
    add_decode("delta_decode_i1_i2", D(dtype="<i2", astype="|i1"), np.array([100, 100, 100, -128, 127], dtype="|i1").tobytes(), "<i2")

    # ---- fixedscaleoffset
    F = numcodecs.FixedScaleOffset
    lin = np.linspace(1000, 1001, 10, dtype="<f8")
    add("fso_doc_u1", F(offset=1000, scale=10, dtype="<f8", astype="|u1"), lin)
    add("fso_doc_be_u2", F(offset=1000, scale=10**3, dtype="<f8", astype=">u2"), lin)
    add("fso_i4_wrap", F(offset=10, scale=1000, dtype="<i4", astype="<i4"), np.array([5, 100, 3000000, -7, 2**31 - 1], dtype="<i4"))
    add("fso_i2_float_offset", F(offset=0.5, scale=3, dtype="<i2", astype="<i4"), np.array([1, 2, -3, 32767], dtype="<i2"))
    add("fso_i2_int_offset_float_scale", F(offset=20000, scale=2.5, dtype="<i2", astype="<i4"), np.array([-20000, 0, 30000, 12345], dtype="<i2"))
    add("fso_f4_i2", F(offset=0.1, scale=3.7, dtype="<f4", astype="<i2"), (rng.normal(0, 100, 12)).astype("<f4"))
    add("fso_f2_i2", F(offset=1.5, scale=100, dtype="<f2", astype="<i2"), np.array([1.5, 2.0, 0.1, -3.3, 7.77, 100.25], dtype="<f2"))
    add("fso_ties_i4", F(offset=0, scale=1, dtype="<f8", astype="<i4"), np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.49999], dtype="<f8"))
    add("fso_be_f8_be_i8", F(offset=-273.15, scale=100, dtype=">f8", astype=">i8"), rng.normal(20, 30, 10).astype(">f8"))
    add("fso_f8_f4", F(offset=3, scale=0.1, dtype="<f8", astype="<f4"), np.array([1.0, 2.0, np.nan, np.inf, -1e30, 12345.678], dtype="<f8"))
    add("fso_i4_trunc", F(offset=0, scale=10, dtype="<i4", astype="<i4"), np.array([1, -1, 7, 12], dtype="<i4"))
    add("fso_u1_overflow", F(offset=1000, scale=1, dtype="|u1"), np.array([1, 2], dtype="|u1"))
    add("fso_u2_neg_offset", F(offset=-3, scale=1, dtype="<u2"), np.array([1, 2], dtype="<u2"))
    add_decode("fso_decode_i4", F(offset=0, scale=10, dtype="<i4", astype="<i2"), np.array([15, -15, 19, 32767, -32768], dtype="<i2").tobytes(), "<i4")
    add_decode("fso_decode_u1_f4", F(offset=1000.5, scale=10, dtype="<f4", astype="|u1"), np.arange(0, 256, 17, dtype="|u1").tobytes(), "<f4")

    # ---- quantize
    Q = numcodecs.Quantize
    lin01 = np.linspace(0, 1, 10, dtype="<f8")
    for d in (1, 2, 3):
        add(f"quantize_doc_{d}", Q(digits=d, dtype="<f8"), lin01)
    add("quantize_f4_f2", Q(digits=2, dtype="<f4", astype="<f2"), floats(12, "<f4", scale=10.0))
    add("quantize_be_f8_be_f4", Q(digits=4, dtype=">f8", astype=">f4"), floats(12, ">f8", scale=100.0))
    add("quantize_f2", Q(digits=1, dtype="<f2"), np.array([0.1, 0.33, 1.77, 100.1, -5.55, 65504], dtype="<f2"))
    add("quantize_f2_digits5", Q(digits=5, dtype="<f2"), np.array([0.5, 0.0, -1.0, np.inf], dtype="<f2"))
    add("quantize_f8_digits0", Q(digits=0, dtype="<f8"), np.array([0.5, 1.5, 2.5, -0.5, 7.3], dtype="<f8"))
    add("quantize_f8_digits_neg1", Q(digits=-1, dtype="<f8"), np.array([3.0, 4.0, 12.0, -7.9], dtype="<f8"))
    add("quantize_f4_f8", Q(digits=6, dtype="<f4", astype="<f8"), floats(8, "<f4", scale=1.0))

    # ---- bitround (no dtype member: the array's own type)
    B = numcodecs.BitRound
    special32 = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 3.4028235e38, -1.75, 1.25], dtype="<f4")
    add("bitround_f4_3", B(keepbits=3), np.concatenate([special32, floats(8, "<f4", specials=False)]))
    add("bitround_f4_0", B(keepbits=0), np.concatenate([special32, np.array([3.0, 6.0, 1.4, 1.6], dtype="<f4")]))
    add("bitround_f4_23", B(keepbits=23), special32)
    add_swapped("bitround_be_f4_5", B(keepbits=5), floats(10, ">f4"))
    add("bitround_f8_10", B(keepbits=10), floats(10, "<f8"))
    add_swapped("bitround_be_f8_51", B(keepbits=51), floats(6, ">f8"))
    add("bitround_f2_2", B(keepbits=2), floats(10, "<f2", scale=10.0))
    add("bitround_nan_bits", B(keepbits=1), np.array([0x7FFFFFFF, 0xFFFFFFFF, 0x7FC00001], dtype="<u4").view("<f4"))

    # ---- astype
    A = numcodecs.AsType
    add("astype_f8_i4", A(encode_dtype="<i4", decode_dtype="<f8"), np.array([2.9, -2.9, 0.5, -0.5, 1e9, -2147483648.0, 7.0], dtype="<f8"))
    add("astype_i2_i1", A(encode_dtype="|i1", decode_dtype="<i2"), np.array([100, 300, -300, 127, -129, 0], dtype="<i2"))
    add("astype_i4_be_f2", A(encode_dtype=">f2", decode_dtype="<i4"), np.array([1, 2049, 2051, 65519, 65520, -70000, 12345], dtype="<i4"))
    add("astype_f8_f4", A(encode_dtype="<f4", decode_dtype="<f8"), np.concatenate([floats(8, "<f8"), [1e300, 1.0000000596046448, 1.0000001788139343]]))
    add("astype_f4_b1", A(encode_dtype="|b1", decode_dtype="<f4"), np.array([0.0, -0.0, 0.5, np.nan, -np.inf, 1e-40], dtype="<f4"))
    add("astype_u8_f8", A(encode_dtype="<f8", decode_dtype="<u8"), np.array([2**64 - 1, 2**53 + 1, 2**63 + 1025, 3], dtype="<u8"))
    add("astype_be_i8_u2", A(encode_dtype="<u2", decode_dtype=">i8"), np.array([-1, 65536, 70000, 2**40 + 5], dtype=">i8"))
    add("astype_u1_f2", A(encode_dtype="<f2", decode_dtype="|u1"), np.arange(0, 256, 15, dtype="|u1"))
    add("astype_f4_u1", A(encode_dtype="|u1", decode_dtype="<f4"), np.array([0.0, 1.9, 255.9, -1.5, 300.7, -300.7], dtype="<f4"))
    add("astype_i8_f2", A(encode_dtype="<f2", decode_dtype="<i8"), np.array([1, -1, 100000, 65504, 65519, -2**40], dtype="<i8"))
    add("astype_f2_f8", A(encode_dtype="<f2", decode_dtype="<f8"), np.array([0.1, 1 + 2**-11 + 2**-40, 65519.9, 6e-8, 2.98e-8, 2.99e-8, -1e-9], dtype="<f8"))
    add("astype_b1_i4", A(encode_dtype=">i4", decode_dtype="|b1"), np.array([True, False, True], dtype="|b1"))
    add("astype_f4_u8", A(encode_dtype="<u8", decode_dtype="<f4"), np.array([0.0, 1.5, 1e18, 9.3e18, 1.8e19], dtype="<f4"))

    # ---- packbits
    P = numcodecs.PackBits
    for n in (0, 1, 7, 8, 9, 20):
        add(f"packbits_{n}", P(), rng.integers(0, 2, n).astype(bool))

    # ---- shuffle
    S = numcodecs.Shuffle
    add("shuffle_4", S(elementsize=4), np.arange(10, dtype="<i4") * 0x01020304)
    add("shuffle_default", S(), np.arange(6, dtype=">f4"))
    add("shuffle_2", S(elementsize=2), rng.integers(0, 256, 14).astype("|u1"), "|u1")
    add("shuffle_8", S(elementsize=8), rng.normal(0, 1, 5).astype("<f8"))
    add("shuffle_3", S(elementsize=3), rng.integers(0, 256, 15).astype("|u1"), "|u1")
    add("shuffle_1", S(elementsize=1), np.arange(5, dtype="<i2"))
    add("shuffle_0", S(elementsize=0), np.arange(5, dtype="<i2"))
    add("shuffle_ragged", S(elementsize=4), np.arange(5, dtype="<i2"))

    # ---- categorize (fixed-length unicode only)
    C = numcodecs.Categorize
    add("categorize_doc", C(labels=["female", "male"], dtype="<U10"),
        np.array(["male", "female", "female", "male", "unexpected"], dtype="<U10"))
    add("categorize_be_i2", C(labels=["a", "bb", "a", "\u00e9", "\U0001F600"], dtype=">U1", astype="<i2"),
        np.array(["a", "b", "", "\u00e9", "\U0001F600", "c"], dtype=">U1"))
    add("categorize_f4", C(labels=["x", "yy", ""], dtype="<U2", astype="<f4"),
        np.array(["yy", "x", "", "zz", "y"], dtype="<U2"))
    add("categorize_u2", C(labels=["red", "green", "blue"], dtype="<U5", astype=">u2"),
        np.array(["blue", "red", "green", "Red", "", "blue"], dtype="<U5"))
    add_decode("categorize_decode_i2", C(labels=["a", "bb", "a"], dtype=">U1", astype="<i2"),
               np.array([1, 2, 3, 0, 4, -1], dtype="<i2").tobytes(), ">U1")
    add_decode("categorize_decode_f4", C(labels=["x", "y"], dtype="<U2", astype="<f4"),
               np.array([2.0, 1.5, np.nan, 1.0, 0.0, 3.0], dtype="<f4").tobytes(), "<U2")

    # ---- the remaining data types of delta, fixedscaleoffset and categorize (fixed values, in range:
    # numpy's out-of-range float -> int casts are undefined)
    add("delta_u4", D(dtype="<u4"), np.array([4000000000, 3, 2**32 - 1, 0, 17], dtype="<u4"))
    add("delta_be_u4_i4", D(dtype=">u4", astype="<i4"), np.array([1, 5, 4000000000, 2], dtype=">u4"))
    add("fso_i1", F(offset=-3, scale=2, dtype="|i1", astype="|i1"), np.array([1, -5, 60, -60, 0], dtype="|i1"))
    add("fso_f8_i1", F(offset=0, scale=10, dtype="<f8", astype="|i1"), np.array([-12.7, 0.05, 3.14, 12.7, -1.0], dtype="<f8"))
    add("fso_f8_u4", F(offset=100, scale=10**6, dtype="<f8", astype="<u4"), np.array([100.0, 101.5, 4000.123456, 100.000001], dtype="<f8"))
    add("fso_u4_u8", F(offset=7, scale=3, dtype="<u4", astype="<u8"), np.array([7, 10, 4000000000, 8], dtype="<u4"))
    add("fso_u8_f8", F(offset=2**40, scale=0.5, dtype="<u8", astype="<f8"), np.array([2**40, 2**41, 2**63 + 2**12, 5], dtype="<u8"))
    add("fso_f4_u8", F(offset=0, scale=4, dtype="<f4", astype="<u8"), np.array([1.25, 1e10, 0.0, 3.5], dtype="<f4"))
    for t in ["|b1", "|i1", "<i4", ">i8", "<u4", ">u8", "<f2", ">f8"]:
        add("categorize_" + t[1:] + ("_be" if t[0] == ">" else ""), C(labels=["p", "q", "r"], dtype="<U1", astype=t),
            np.array(["q", "p", "", "r", "s", "p"], dtype="<U1"))

    # ---- whole v2 chunks: filters chained (each receiving what the previous one produces) + compressor
    add_chunk("chunk_be_i4_delta_shuffle", zarray(">i4", [4, 5], [
        {"id": "delta", "dtype": ">i4", "astype": "<i2"}, {"id": "shuffle", "elementsize": 2}]),
        (np.arange(20) * 37 - 300).reshape(4, 5))
    add_chunk("chunk_f8_quantize_bitround_zlib", zarray("<f8", [12], [
        {"id": "quantize", "digits": 3, "dtype": "<f8", "astype": "<f4"}, {"id": "bitround", "keepbits": 9}],
        {"id": "zlib", "level": 1}), rng.normal(0, 10, 12))
    add_chunk("chunk_f4_F_fso_delta_zlib", zarray("<f4", [3, 4], [
        {"id": "fixedscaleoffset", "offset": 10, "scale": 100, "dtype": "<f4", "astype": "<i2"},
        {"id": "delta", "dtype": "<i2"}], {"id": "zlib", "level": 5}, order="F"),
        rng.normal(10, 2, 12).reshape(3, 4))
    add_chunk("chunk_b1_packbits_zlib", zarray("|b1", [3, 7], [{"id": "packbits"}], {"id": "zlib", "level": 1}),
        rng.integers(0, 2, 21).astype(bool).reshape(3, 7))
    add_chunk("chunk_U6_categorize", zarray("<U6", [5], [
        {"id": "categorize", "labels": ["red", "green", "blue"], "dtype": "<U6", "astype": "|u1"}]),
        np.array(["red", "blue", "pink", "green", "red"], dtype="<U6"))
    add_chunk("chunk_u2_astype_blosc", zarray("<u2", [16], [
        {"id": "astype", "encode_dtype": ">u4", "decode_dtype": "<u2"}],
        {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}), np.arange(16) * 4000)

    write_index()


def write_index():
    head = {"generator": "tools/numcodecs_filter_vectors.py", "numcodecs": numcodecs.__version__, "numpy": np.__version__}
    with open(os.path.join(OUT, "index.json"), "w") as f:
        f.write(json.dumps(head)[:-1] + ', "vectors": [\n')
        f.write(",\n".join(json.dumps(v, separators=(",", ":")) for v in vectors))
        f.write("\n]}\n")
    total = sum(os.path.getsize(os.path.join(OUT, p)) for p in os.listdir(OUT))
    print(f"{len(vectors)} vectors, {total} bytes in {OUT}")

if __name__ == "__main__":
    main()
