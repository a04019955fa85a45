#!/usr/bin/env python3
"""Peer side of the libzarr benchmark: the workloads of bench_libzarr.c with tensorstore, zarr-python
and zarrs (the zarrs-python codec pipeline for zarr-python), each limited to 2 threads; and h5py-vol,
h5py reading and writing through libzarr's HDF5 VOL connector (H5pyVolImpl below: libzarr underneath,
so not a peer but the connector's overhead over libzarr's C API).

    python3 bench/peers.py --impl tensorstore|zarr-python|zarrs|h5py-vol --op W|R|Rinto|S|P \
        --layout LAYOUT.json --array DIR --data volume_u16_512.bin [--regions regions_16.txt] \
        [--reps N] [--threads 2] [--name LABEL] [--h5vol-plugin-dir DIR --lib libzarr.so.0]

prints one JSON line, with the same keys as bench_libzarr. `--op prepare` (zarr-python only) writes
the reference copy that every implementation's R/Rinto/S/P reads: the array DIR with LAYOUT.json as
its metadata, filled with the volume, verified by reading it back.

Operations (WORKLOADS.md; each repetition checked against the volume outside the timed part):
  W      write the whole volume into a new array (DIR removed and zarr.json = LAYOUT.json written
         before each repetition, untimed; re-read and compared after it; one untimed warm-up
         repetition first)
  R      read everything into a freshly allocated array (the allocation is part of the timing)
  Rinto  read everything into one pre-allocated, pre-touched array reused by every repetition
  S      1000 reads of 16^3 boxes, one call each, origins from --regions
  P      read the plane [:, :, 200]
  Rs     strided read [::2, ::2, ::2] (256^3) into a C-order uint16 array
  RsF    the same into a Fortran-order uint16 array
  Rs32   the same as float32 (tensorstore: ts.cast; zarr-python/zarrs: out= a float32 array)
  Wbox   1000 writes of 16^3 boxes (origins from --regions, box i = the volume's box XOR (0x9E37+i))
         into a copy of DIR made at --work before each repetition (untimed); checked afterwards
         against the volume with the boxes replaced in order
With --strings (layout V: a 2-D array of vlen-utf8 strings), --data is the strings file that
`--op gen-strings --data FILE --layout V.json` writes (gen_strings below) and only W, R, S and prepare are
available (S: 1000 reads of 16 x 16 boxes at string_box_origins()).
With --small (layout N: 10^5 chunks of 32^3 uint8), --data is the synthetic uint8 volume
(`--op gen-small --data FILE --layout N.json` writes it) and only W, R and prepare are available.
--fresh-dirs (W with --small): repetition r writes into the new directory DIR.rep<r> (warm-up: rep0) and
nothing is removed (ext4 without a journal scans past recently deleted inodes for each new file: see
bench_libzarr.c).
Threads: tensorstore: context data_copy_concurrency/file_io_concurrency limit N, cache_pool 0,
file_io_sync false (libzarr, zarr-python and zarrs do not fsync either); zarr-python:
threading.max_workers N (the executor behind every asyncio.to_thread: store I/O and codecs),
numcodecs blosc internal threads off; zarrs: threading.max_workers N (its rayon pool size), strict
(no silent fallback to the Python pipeline). Exit status: 0 ok, 1 error, 3 unsupported.
"""
import argparse
import gc
import importlib.metadata
import json
import os
import resource
import shutil
import statistics
import sys
import time
import traceback

import numpy as np

N = 512
BOX = 16
PLANE_X = 200
VOL_BYTES = N * N * N * 2


class Unsupported(Exception):
    pass


class BenchError(Exception):
    pass


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def read_regions(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            z, y, x = (int(v) for v in line.split())
            if max(z, y, x) + BOX > N or min(z, y, x) < 0:
                raise BenchError(f"region out of range in {path}: {line}")
            out.append((z, y, x))
    if len(out) != 1000:
        raise BenchError(f"{path}: {len(out)} regions, expected 1000")
    return out


def fresh_array_dir(path, layout_text):
    """Removes DIR (only if it is an array directory) and writes LAYOUT.json as DIR/zarr.json."""
    if os.path.lexists(path):
        if not (os.path.isdir(path) and os.path.exists(os.path.join(path, "zarr.json"))):
            raise BenchError(f"refusing to remove {path}: not an array directory (no zarr.json)")
        shutil.rmtree(path)
    os.makedirs(path)
    with open(os.path.join(path, "zarr.json"), "w") as f:
        f.write(layout_text)


def check_equal(got, want, what):
    if got.shape != want.shape or got.dtype != want.dtype:
        raise BenchError(f"{what}: got shape {got.shape} {got.dtype}, expected {want.shape} {want.dtype}")
    if not np.array_equal(got, want):
        idx = tuple(int(i[0]) for i in np.nonzero(got != want))
        raise BenchError(f"{what}: mismatch at {idx}: got {got[idx]}, expected {want[idx]}")


# ------------------------------------------------------------------ implementations

class TensorStoreImpl:
    name = "tensorstore"

    def __init__(self, threads, fsync):
        import tensorstore as ts
        self.ts = ts
        self.version = importlib.metadata.version("tensorstore")
        self.ctx = ts.Context({
            "data_copy_concurrency": {"limit": threads},
            "file_io_concurrency": {"limit": threads},
            "cache_pool": {"total_bytes_limit": 0},
            "file_io_sync": fsync,
        })

    def _spec(self, path):
        return {"driver": "zarr3", "kvstore": {"driver": "file", "path": os.path.abspath(path) + "/"}}

    def open(self, path, write=False):
        try:
            return self.ts.open(self._spec(path), open=True, read=True, write=write, context=self.ctx).result()
        except ValueError as e:  # tensorstore reports unknown codecs etc. as ValueError
            msg = str(e).lower()
            # a data type its zarr3 driver lacks (0.1.86: "string data type is not one of the supported
            # data types: bool, int2, ...")
            if "not supported" in msg or "unsupported" in msg or "not one of the supported data types" in msg:
                raise Unsupported(str(e)) from e
            raise

    def read_all(self, a):
        return a.read().result()

    def read_into(self, a, buf):
        # the closest tensorstore has to "read into this buffer": copy into an array-backed TensorStore
        dst = self.ts.array(buf, copy=False, write=True, context=self.ctx)
        dst.write(a).result()

    def read_box(self, a, z, y, x):
        return a[z:z + BOX, y:y + BOX, x:x + BOX].read().result()

    def read_plane(self, a):
        return a[:, :, PLANE_X].read().result()

    def read_box2(self, a, y, x, b):
        return a[y:y + b, x:x + b].read().result()

    def write_all(self, a, vol):
        a.write(vol).result()  # waits for the commit (everything stored)

    def read_strided(self, a, order, dtype):
        # the fastest of the ways measured (bench/README.md): a fresh array of the wanted order and type
        # written from the strided view (a ts.cast view for float32: tensorstore converts while copying
        # out of the chunks); `read(order=...)` of the (cast) view was 10-70% slower here
        v = a[::2, ::2, ::2]
        if dtype != np.uint16:
            v = self.ts.cast(v, self.ts.float32)
        out = np.empty(v.shape, dtype=dtype, order=order)
        self.ts.array(out, copy=False, write=True, context=self.ctx).write(v).result()
        return out

    def write_box(self, a, z, y, x, box):
        a[z:z + BOX, y:y + BOX, x:x + BOX].write(box).result()  # one call, waits for the commit

    def close(self, a):
        pass


class ZarrPythonImpl:
    name = "zarr-python"

    def __init__(self, threads, zarrs=False, async_concurrency=None):
        import zarr
        import numcodecs.blosc
        self.zarr = zarr
        cfg = {"threading.max_workers": threads}
        if async_concurrency:
            cfg["async.concurrency"] = async_concurrency
        if zarrs:
            import zarrs  # noqa: F401  (registers nothing; the path below selects its pipeline)
            self.name = "zarrs"
            self.version = "zarrs-python " + importlib.metadata.version("zarrs") + ", zarr " + zarr.__version__
            # max_workers is also zarrs' rayon pool size (num_threads); strict: error instead of a
            # silent fallback to zarr-python's own pipeline for metadata zarrs cannot handle
            cfg.update({"codec_pipeline.path": "zarrs.ZarrsCodecPipeline", "codec_pipeline.strict": True})
        else:
            self.version = zarr.__version__
        zarr.config.set(cfg)
        # c-blosc's own threads would come on top of the executor's (numcodecs only uses them on the
        # main thread anyway, and zarr-python decodes in worker threads)
        numcodecs.blosc.use_threads = False
        from zarr.core.buffer.cpu import NDBuffer
        self.NDBuffer = NDBuffer

    def open(self, path, write=False):
        try:
            a = self.zarr.open_array(store=path, mode="r+" if write else "r")
        except NotImplementedError as e:
            raise Unsupported(str(e)) from e
        if self.name == "zarrs":
            import zarrs
            if not isinstance(a._async_array.codec_pipeline, zarrs.ZarrsCodecPipeline) or \
                    a._async_array.codec_pipeline.impl is None:
                raise Unsupported("the zarrs codec pipeline is not in use for this array")
        return a

    def read_all(self, a):
        return a[...]

    def read_into(self, a, buf):
        a.get_basic_selection(Ellipsis, out=self.NDBuffer.from_numpy_array(buf))

    def read_box(self, a, z, y, x):
        return a[z:z + BOX, y:y + BOX, x:x + BOX]

    def read_plane(self, a):
        return a[:, :, PLANE_X]

    def read_box2(self, a, y, x, b):
        return a[y:y + b, x:x + b]

    def write_all(self, a, vol):
        a[...] = vol

    def read_strided(self, a, order, dtype):
        sel = (slice(None, None, 2),) * 3
        try:
            if order == "C" and dtype == np.uint16:
                return a[sel]
            return self._read_strided_out(a, sel, order, dtype)
        except Exception as e:  # zarrs (strict): "DiscontiguousArrayError: Step size greater than 1 ..."
            if type(e).__name__ == "DiscontiguousArrayError":
                raise Unsupported(f"{type(e).__name__}: {e}") from e
            raise

    def _read_strided_out(self, a, sel, order, dtype):
        # zarr-python has no memory-type conversion or output order of its own: it copies each chunk's
        # selected elements into `out` with numpy, which converts and follows out's strides
        shape = tuple((n + 1) // 2 for n in a.shape)
        out = np.empty(shape, dtype=dtype, order=order)
        a.get_basic_selection(sel, out=self.NDBuffer.from_numpy_array(out))
        return out

    def write_box(self, a, z, y, x, box):
        a[z:z + BOX, y:y + BOX, x:x + BOX] = box

    def close(self, a):
        pass


class H5pyVolImpl:
    """h5py through libzarr's HDF5 VOL connector (h5vol/, docs/h5vol.md): HDF5_VOL_CONNECTOR=zarr and
    HDF5_PLUGIN_PATH=--h5vol-plugin-dir, set before h5py (and with it HDF5) is imported. Not a peer:
    libzarr underneath, so the column measures the connector's and h5py's overhead over libzarr's C API.
    --lib (the libzarr that bench_libzarr links, run_all's snapshot) is loaded first, so the plugin's
    libzarr.so.0 is that very library (checked in /proc/self/maps). A Zarr array is a dataset inside an
    HDF5 "file", the root group of a hierarchy: ARRAY is read as the member `v` of the group ARRAY.h5vol
    (a zarr.json and a symbolic link v -> ARRAY, made once, untimed), so every column reads the same
    chunk files."""
    name = "h5py-vol"

    def __init__(self, threads, plugin_dir, lib):
        plugin_dir = os.path.abspath(plugin_dir)
        if not os.path.exists(os.path.join(plugin_dir, "libzarr_h5vol.so")):
            raise Unsupported(f"no libzarr_h5vol.so in {plugin_dir} (configure with -DZARR_H5VOL=ON and build "
                              "the target zarr_h5vol, or pass --h5vol-plugin-dir)")
        os.environ["HDF5_PLUGIN_PATH"] = plugin_dir
        os.environ["HDF5_VOL_CONNECTOR"] = "zarr"
        self.lib = None
        if lib:
            import ctypes
            self.lib = os.path.realpath(lib)
            ctypes.CDLL(self.lib, mode=ctypes.RTLD_GLOBAL)
        try:
            import h5py
        except ImportError as e:
            raise Unsupported(f"h5py is not installed for {sys.executable}: {e}") from e
        self.h5py = h5py
        self.version = (f"h5py {h5py.__version__}, HDF5 {h5py.version.hdf5_version}, "
                        f"connector {os.path.join(plugin_dir, 'libzarr_h5vol.so')}")
        self.files = {}

    def _check_library(self):
        """The libzarr files mapped into this process: exactly --lib when given."""
        with open("/proc/self/maps") as f:
            libs = {ln.split(None, 5)[5].strip() for ln in f if "libzarr.so" in ln and len(ln.split(None, 5)) == 6}
        if self.lib and libs != {self.lib}:
            raise BenchError(f"the connector loaded libzarr {sorted(libs)}, not --lib {self.lib}")
        if len(libs) != 1:
            raise BenchError(f"the process maps {len(libs)} libzarr files: {sorted(libs)}")

    def open(self, path, write=False):
        path = os.path.abspath(path)
        root = path + ".h5vol"
        if not os.path.exists(os.path.join(root, "zarr.json")):
            os.makedirs(root, exist_ok=True)
            with open(os.path.join(root, "zarr.json"), "w") as f:
                json.dump({"zarr_format": 3, "node_type": "group", "attributes": {}}, f)
        link = os.path.join(root, "v")
        if not (os.path.islink(link) and os.readlink(link) == path):
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(path, link)
        f = self.h5py.File(root, "r+" if write else "r")
        self._check_library()
        d = f["v"]
        self.files[id(d)] = f
        return d

    def read_all(self, a):
        return a[...]

    def read_into(self, a, buf):
        a.read_direct(buf)

    def read_box(self, a, z, y, x):
        return a[z:z + BOX, y:y + BOX, x:x + BOX]

    def read_plane(self, a):
        return a[:, :, PLANE_X]

    def read_box2(self, a, y, x, b):
        raise Unsupported("h5py-vol: layout V (strings) is not measured")

    def write_all(self, a, vol):
        a[...] = vol

    def read_strided(self, a, order, dtype):
        if order != "C":
            raise Unsupported("h5py reads into C-contiguous arrays only (Dataset.read_direct refuses others)")
        sel = (slice(None, None, 2),) * 3
        if dtype == np.uint16:
            return a[sel]
        # another memory type: HDF5's H5Dread with a float32 memory type, converted by H5Tconvert
        out = np.empty(tuple((n + 1) // 2 for n in a.shape), dtype=dtype)
        a.read_direct(out, source_sel=sel)
        return out

    def write_box(self, a, z, y, x, box):
        a[z:z + BOX, y:y + BOX, x:x + BOX] = box

    def close(self, a):
        f = self.files.pop(id(a), None)
        if f is not None:
            f.close()


def make_impl(args):
    if args.impl == "tensorstore":
        return TensorStoreImpl(args.threads, args.ts_file_io_sync)
    if args.impl == "zarr-python":
        return ZarrPythonImpl(args.threads, async_concurrency=args.zarr_async_concurrency)
    if args.impl == "zarrs":
        return ZarrPythonImpl(args.threads, zarrs=True, async_concurrency=args.zarr_async_concurrency)
    if args.impl == "h5py-vol":
        return H5pyVolImpl(args.threads, args.h5vol_plugin_dir, args.lib)
    raise BenchError(f"unknown implementation {args.impl}")


# ------------------------------------------------------------------ workloads

def cpu_s():
    """CPU seconds (user + system) of the whole process, all threads."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


CPU = []  # CPU seconds of each timed call, in order


def timed(fn):
    gc.collect()
    gc.disable()
    try:
        t0, c0 = time.perf_counter(), cpu_s()  # perf_counter: CLOCK_MONOTONIC on Linux
        r = fn()
        t = time.perf_counter() - t0
        CPU.append(cpu_s() - c0)
        return t, r
    finally:
        gc.enable()


def check_equal_big(got, want, what):
    """check_equal for arrays of gigabytes: compared in slabs (no array-sized temporaries)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        raise BenchError(f"{what}: got shape {got.shape} {got.dtype}, expected {want.shape} {want.dtype}")
    step = max(1, want.shape[0] // 64)
    for z in range(0, want.shape[0], step):
        check_equal(got[z:z + step], want[z:z + step], f"{what} (slab from z={z})")


def small_shape(layout_path):
    with open(layout_path) as f:
        meta = json.load(f)
    if meta.get("data_type") != "uint8" or len(meta["shape"]) != 3:
        raise BenchError(f"{layout_path}: --small expects a 3-D uint8 layout")
    return tuple(meta["shape"])


def gen_small(path, shape):
    """The synthetic uint8 volume of layout N (deterministic, compressible: smooth ramps with a sparse
    pattern): v[z, y, x] = ((x >> 2) + 3 * (y >> 3) + 5 * z + (64 if (7x + 13y + 17z) % 11 == 0)) & 255."""
    nz, ny, nx = shape
    x = np.arange(nx, dtype=np.int64)[None, :]
    y = np.arange(ny, dtype=np.int64)[:, None]
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        for z in range(nz):
            v = (x >> 2) + 3 * (y >> 3) + 5 * z + 64 * ((7 * x + 13 * y + 17 * z) % 11 == 0)
            f.write((v & 255).astype(np.uint8).tobytes())
    os.replace(tmp, path)


# ------------------------------------------------------------------ layout V: strings

STR_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\u00e9\u00df"  # 64 code points
STR_BOX = 16
STR_NBOX = 1000


def strings_shape(layout_path):
    with open(layout_path) as f:
        meta = json.load(f)
    if meta.get("data_type") != "string" or len(meta["shape"]) != 2:
        raise BenchError(f"{layout_path}: --strings expects a 2-D string layout")
    return tuple(meta["shape"])


def gen_strings(path, shape):
    """The strings of layout V, in C order, written as: uint64 n, then n + 1 uint64 byte offsets (the first
    0), then the UTF-8 bytes (all little-endian). Element k (flat C-order index) is, with
    h = (k * 2654435761 + 12345) mod 2^32:  length L = (h >> 7) mod 25 characters (0..24), character m
    (0 <= m < L) = STR_ALPHABET[((h >> 3) + 29 m + m^2) mod 64] (62 ASCII letters and digits, plus the
    2-byte characters U+00E9 and U+00DF)."""
    n = int(np.prod(shape))
    enc = [c.encode() for c in STR_ALPHABET]
    tb = np.zeros((64, 2), dtype=np.uint8)
    tl = np.zeros(64, dtype=np.int64)
    for i, e in enumerate(enc):
        tb[i, :len(e)] = list(e)
        tl[i] = len(e)
    offsets = np.zeros(n + 1, dtype="<u8")
    parts = []
    total = 0
    step = 1 << 18
    for k0 in range(0, n, step):  # in blocks: a few MB of temporaries at a time
        k = np.arange(k0, min(n, k0 + step), dtype=np.uint64)
        h = (k * np.uint64(2654435761) + np.uint64(12345)) & np.uint64(0xFFFFFFFF)
        L = ((h >> np.uint64(7)) % np.uint64(25)).astype(np.int64)
        elem = np.repeat(np.arange(len(k)), L)
        cstart = np.cumsum(L) - L
        m = np.arange(int(L.sum()), dtype=np.int64) - np.repeat(cstart, L)
        code = (((h[elem] >> np.uint64(3)).astype(np.int64) + 29 * m + m * m) % 64)
        bl = tl[code]
        pos = np.cumsum(bl) - bl
        data = np.empty(int(bl.sum()), dtype=np.uint8)
        data[pos] = tb[code, 0]
        two = bl == 2
        data[pos[two] + 1] = tb[code[two], 1]
        # bytes per element: the sum of its characters' lengths
        per = np.bincount(elem, weights=bl, minlength=len(k)).astype(np.int64)
        offsets[k0 + 1:k0 + 1 + len(k)] = total + np.cumsum(per)
        total += int(per.sum())
        parts.append(data)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(np.array([n], dtype="<u8").tobytes())
        f.write(offsets.tobytes())
        for d in parts:
            f.write(d.tobytes())
    os.replace(tmp, path)


def load_strings(path, shape):
    """The strings file as a numpy StringDType array of SHAPE."""
    raw = np.fromfile(path, dtype=np.uint8)
    n = int(raw[:8].view("<u8")[0])
    if n != int(np.prod(shape)):
        raise BenchError(f"{path}: {n} strings, the layout's shape {shape} holds {int(np.prod(shape))}")
    off = raw[8:8 + 8 * (n + 1)].view("<u8")
    data = raw[8 + 8 * (n + 1):].tobytes()
    if int(off[-1]) != len(data):
        raise BenchError(f"{path}: the offsets end at {int(off[-1])}, the data has {len(data)} bytes")
    o = off.tolist()
    text = [data[o[i]:o[i + 1]].decode() for i in range(n)]
    return np.array(text, dtype=np.dtypes.StringDType()).reshape(shape)


def string_box_origins(shape):
    """Box i (0 <= i < 1000) of the S cell on layout V: rows (613 i + 17) mod (H - 15), columns
    (1597 i + 1013) mod (W - 15), 16 x 16 elements (the same list in bench_libzarr.c)."""
    h, w = shape[0] - STR_BOX + 1, shape[1] - STR_BOX + 1
    return [((613 * i + 17) % h, (1597 * i + 1013) % w) for i in range(STR_NBOX)]


def check_strings(got, want, what):
    got = np.asarray(got)
    if got.shape != want.shape:
        raise BenchError(f"{what}: got shape {got.shape}, expected {want.shape}")
    if got.dtype != want.dtype:
        got = got.astype(want.dtype)
    eq = got == want
    if not eq.all():
        idx = tuple(int(i[0]) for i in np.nonzero(~eq))
        raise BenchError(f"{what}: mismatch at {idx}: got {got[idx]!r}, expected {want[idx]!r}")


def refused(e):
    """zarrs (strict) refuses the string data type: UnsupportedDataTypeError (zarrs-python 0.2.3)."""
    return type(e).__name__ in ("UnsupportedDataTypeError", "DiscontiguousArrayError")


def run_strings(args, impl):
    shape = strings_shape(args.layout)
    want = load_strings(args.data, shape)
    times = []
    nbytes = os.path.getsize(args.data) - 8 * (want.size + 2)  # the strings' UTF-8 bytes
    try:
        if args.op in ("W", "prepare"):
            with open(args.layout) as f:
                layout_text = f.read()
            first = -1 if (args.op == "W" and not args.no_warmup) else 0
            for r in range(first, args.reps if args.op == "W" else 1):
                fresh_array_dir(args.array, layout_text)
                a = impl.open(args.array, write=True)
                os.sync()
                t, _ = timed(lambda: impl.write_all(a, want))
                if r >= 0:
                    times.append(t)
                else:
                    CPU.pop()
                impl.close(a)
                del a
                check_strings(impl.read_all(impl.open(args.array)), want, f"{args.op} rep {r} (read back)")
        elif args.op in ("R", "S"):
            a = impl.open(args.array)
            check_strings(impl.read_all(a), want, "warm-up")  # untimed: page cache
            if args.op == "R":
                for r in range(args.reps):
                    t, out = timed(lambda: impl.read_all(a))
                    times.append(t)
                    check_strings(out, want, f"R rep {r}")
                    del out
            else:
                org = string_box_origins(shape)
                b = STR_BOX
                nbytes = sum(len(s.encode()) for (y, x) in org for s in want[y:y + b, x:x + b].ravel().tolist())
                for r in range(args.reps):
                    t, outs = timed(lambda: [impl.read_box2(a, y, x, b) for (y, x) in org])
                    times.append(t)
                    for i, ((y, x), got) in enumerate(zip(org, outs)):
                        check_strings(got, want[y:y + b, x:x + b], f"S rep {r} box {i} (origin {y} {x})")
                    del outs
        else:
            raise BenchError(f"--strings: op {args.op} is not available (W, R, S, prepare)")
    except Exception as e:
        if refused(e):
            raise Unsupported(f"{type(e).__name__}: {str(e) or 'the ' + impl.name + ' codec pipeline refuses data type string'}") from e
        raise
    return times, nbytes


def write_boxes(vol, regions):
    """The Wbox workload's boxes (box i = the volume's box XOR (0x9E37 + i)) and the expected array."""
    boxes = []
    expect = vol.copy()
    for i, (z, y, x) in enumerate(regions):
        b = vol[z:z + BOX, y:y + BOX, x:x + BOX] ^ np.uint16((0x9E37 + i) & 0xFFFF)
        boxes.append(np.ascontiguousarray(b))
        expect[z:z + BOX, y:y + BOX, x:x + BOX] = b
    return boxes, expect


def run_small(args, impl):
    shape = small_shape(args.layout)
    vol = np.fromfile(args.data, dtype=np.uint8)
    if vol.size != int(np.prod(shape)):
        raise BenchError(f"{args.data}: {vol.size} bytes, the layout's shape {shape} holds {int(np.prod(shape))}")
    vol = vol.reshape(shape)
    times = []
    if args.op in ("W", "prepare"):
        with open(args.layout) as f:
            layout_text = f.read()
        first = -1 if (args.op == "W" and not args.no_warmup) else 0
        for r in range(first, args.reps if args.op == "W" else 1):
            path = args.array
            if args.fresh_dirs and args.op == "W":
                path = f"{args.array}.rep{r + 1}"
                if os.path.lexists(path):
                    raise BenchError(f"{path} exists: --fresh-dirs writes into new directories")
            fresh_array_dir(path, layout_text)
            a = impl.open(path, write=True)
            os.sync()
            t, _ = timed(lambda: impl.write_all(a, vol))
            if r >= 0:
                times.append(t)
            else:
                CPU.pop()
            impl.close(a)
            del a
            back = impl.read_all(impl.open(path))
            check_equal_big(np.asarray(back), vol, f"{args.op} rep {r} (read back)")
            del back
    elif args.op == "R":
        a = impl.open(args.array)
        warm = impl.read_all(a)
        check_equal_big(np.asarray(warm), vol, "warm-up")
        del warm
        for r in range(args.reps):
            t, out = timed(lambda: impl.read_all(a))
            times.append(t)
            check_equal_big(np.asarray(out), vol, f"R rep {r}")
            del out
    else:
        raise BenchError(f"--small: op {args.op} is not available (W, R, prepare)")
    return times, vol.nbytes


def run(args, impl, vol):
    times = []
    bytes_per_rep = VOL_BYTES
    if args.op == "Wbox":
        regions = read_regions(args.regions)
        boxes, expect = write_boxes(vol, regions)
        if np.array_equal(expect, vol):
            raise BenchError("Wbox: the writes change nothing")
        bytes_per_rep = len(regions) * BOX ** 3 * 2
        # no warm-up repetition: the untimed read of each fresh copy brings its chunks into the cache
        for r in range(args.reps):
            if os.path.lexists(args.work):
                if not os.path.exists(os.path.join(args.work, "zarr.json")):
                    raise BenchError(f"refusing to remove {args.work}: not an array directory")
                shutil.rmtree(args.work)
            shutil.copytree(args.array, args.work)  # untimed: a fresh copy of the reference
            a = impl.open(args.work, write=True)
            check_equal(np.asarray(impl.read_all(a)), vol, f"Wbox rep {r} (the copy)")  # also warms the cache

            def writes():
                for (z, y, x), b in zip(regions, boxes):
                    impl.write_box(a, z, y, x, b)
                impl.close(a)
            t, _ = timed(writes)
            times.append(t)
            del a
            check_equal(np.asarray(impl.read_all(impl.open(args.work))), expect, f"Wbox rep {r} (read back)")
        shutil.rmtree(args.work)
        return times, bytes_per_rep
    if args.op == "prepare":
        if impl.name != "zarr-python":
            raise BenchError("--op prepare is for --impl zarr-python")
        with open(args.layout) as f:
            layout_text = f.read()
        fresh_array_dir(args.array, layout_text)
        a = impl.open(args.array, write=True)
        t, _ = timed(lambda: impl.write_all(a, vol))
        times.append(t)
        check_equal(impl.read_all(impl.open(args.array)), vol, "prepare (read back)")
    elif args.op == "W":
        with open(args.layout) as f:
            layout_text = f.read()
        for r in range(-1, args.reps):  # r = -1: untimed warm-up repetition
            fresh_array_dir(args.array, layout_text)
            a = impl.open(args.array, write=True)
            os.sync()
            t, _ = timed(lambda: impl.write_all(a, vol))
            if r >= 0:
                times.append(t)
            else:
                CPU.pop()
            impl.close(a)
            del a
            check_equal(impl.read_all(impl.open(args.array)), vol, f"W rep {r} (read back)")
    else:
        a = impl.open(args.array)
        if tuple(a.shape) != (N, N, N) or np.dtype(a.dtype.numpy_dtype if hasattr(a.dtype, "numpy_dtype") else a.dtype) != np.uint16:
            raise BenchError(f"{args.array}: expected a 512^3 uint16 array, got {a.shape} {a.dtype}")
        warm = impl.read_all(a)  # untimed warm-up: page cache
        check_equal(warm, vol, "warm-up")
        del warm
        if args.op == "R":
            for r in range(args.reps):
                t, out = timed(lambda: impl.read_all(a))
                times.append(t)
                check_equal(out, vol, f"R rep {r}")
                del out
        elif args.op == "Rinto":
            buf = np.empty((N, N, N), dtype=np.uint16)
            for r in range(args.reps):
                buf.fill(0xA5A5)  # pre-touched, and a stale result cannot pass
                t, _ = timed(lambda: impl.read_into(a, buf))
                times.append(t)
                check_equal(buf, vol, f"Rinto rep {r}")
        elif args.op in ("Rs", "RsF", "Rs32"):
            order = "F" if args.op == "RsF" else "C"
            dtype = np.float32 if args.op == "Rs32" else np.uint16
            want = vol[::2, ::2, ::2].astype(dtype)
            bytes_per_rep = want.nbytes
            for r in range(args.reps):
                t, out = timed(lambda: impl.read_strided(a, order, dtype))
                times.append(t)
                out = np.asarray(out)
                if not (out.flags.f_contiguous if order == "F" else out.flags.c_contiguous):
                    raise BenchError(f"{args.op} rep {r}: the result is not in {order} order")
                check_equal(out, want, f"{args.op} rep {r}")
                del out
        elif args.op == "P":
            bytes_per_rep = N * N * 2
            want = vol[:, :, PLANE_X]
            for r in range(args.reps):
                t, out = timed(lambda: impl.read_plane(a))
                times.append(t)
                check_equal(np.asarray(out), want, f"P rep {r}")
        elif args.op == "S":
            regions = read_regions(args.regions)
            bytes_per_rep = len(regions) * BOX ** 3 * 2
            for r in range(args.reps):
                def boxes():
                    return [impl.read_box(a, z, y, x) for (z, y, x) in regions]
                t, outs = timed(boxes)
                times.append(t)
                for i, ((z, y, x), got) in enumerate(zip(regions, outs)):
                    check_equal(np.asarray(got), vol[z:z + BOX, y:y + BOX, x:x + BOX],
                                f"S rep {r} box {i} (origin {z} {y} {x})")
                del outs
        else:
            raise BenchError(f"unknown --op {args.op}")
        impl.close(a)
    return times, bytes_per_rep


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--impl", required=True, choices=["tensorstore", "zarr-python", "zarrs", "h5py-vol"])
    ap.add_argument("--op", required=True,
                    choices=["W", "R", "Rinto", "S", "P", "Rs", "RsF", "Rs32", "Wbox", "prepare", "gen-small",
                             "gen-strings"])
    ap.add_argument("--work", help="Wbox: the working copy of --array (removed and re-copied each repetition)")
    ap.add_argument("--small", action="store_true", help="layout N: --data is the synthetic uint8 volume")
    ap.add_argument("--strings", action="store_true", help="layout V: --data is the strings file (gen-strings)")
    ap.add_argument("--no-warmup", action="store_true", help="W (--small): no untimed warm-up repetition")
    ap.add_argument("--fresh-dirs", action="store_true",
                    help="W (--small): repetition r writes into the new directory ARRAY.rep<r>; nothing is removed")
    ap.add_argument("--layout")
    ap.add_argument("--array", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--regions")
    ap.add_argument("--reps", type=int, default=0, help="default 5 (10 for P)")
    ap.add_argument("--threads", type=int, default=int(os.environ.get("ZARR_NUM_THREADS", "2") or 2))
    ap.add_argument("--name", help="layout label in the output (default: the layout file's base name)")
    ap.add_argument("--ts-file-io-sync", action="store_true",
                    help="tensorstore: keep its default fsync on write (off by default here)")
    ap.add_argument("--h5vol-plugin-dir", default=os.environ.get("HDF5_PLUGIN_PATH") or
                    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build", "h5vol", "plugin"),
                    help="h5py-vol: the directory holding libzarr_h5vol.so (default $HDF5_PLUGIN_PATH, else "
                         "build/h5vol/plugin)")
    ap.add_argument("--lib", help="h5py-vol: the libzarr.so.0 the connector must use (loaded first; default: "
                                  "the one the plugin's run path finds)")
    ap.add_argument("--zarr-async-concurrency", type=int, default=None,
                    help="zarr-python/zarrs: async.concurrency (default: zarr's own, 10)")
    args = ap.parse_args()
    if args.reps <= 0:
        args.reps = 10 if args.op == "P" else 5
    if args.op in ("W", "prepare", "gen-small", "gen-strings") and not args.layout:
        ap.error("--op W needs --layout")
    if args.op in ("S", "Wbox") and not args.regions and not args.strings:
        ap.error("--op S/Wbox needs --regions")
    if args.op == "Wbox" and not args.work:
        ap.error("--op Wbox needs --work")
    if args.op == "gen-small":
        gen_small(args.data, small_shape(args.layout))
        return 0
    if args.op == "gen-strings":
        gen_strings(args.data, strings_shape(args.layout))
        return 0
    label = args.name or (os.path.basename(args.layout).removesuffix(".json") if args.layout else args.array)
    base = {"impl": args.impl, "layout": label, "op": args.op}
    try:
        if sys.byteorder != "little":
            raise BenchError("big-endian hosts are not supported by this benchmark")
        impl = make_impl(args)
        base["version"] = impl.version
        if args.small:
            times, nbytes = run_small(args, impl)
        elif args.strings:
            if impl.name == "h5py-vol":
                raise Unsupported("h5py-vol: the string layouts are not measured (h5py returns bytes objects)")
            times, nbytes = run_strings(args, impl)
        else:
            if os.path.getsize(args.data) != VOL_BYTES:
                raise BenchError(f"{args.data}: expected {VOL_BYTES} bytes")
            vol = np.fromfile(args.data, dtype="<u2").reshape(N, N, N)
            times, nbytes = run(args, impl, vol)
    except Unsupported as e:
        emit({**base, "status": "unsupported", "error": str(e)})
        return 3
    except Exception as e:  # noqa: BLE001  (report every failure as one JSON line)
        traceback.print_exc(file=sys.stderr)
        emit({**base, "status": "error", "error": f"{type(e).__name__}: {e}"})
        return 1
    emit({**base, "status": "ok", "threads": args.threads, "reps": len(times),
          "times_s": [round(t, 6) for t in times], "min_s": round(min(times), 6),
          "median_s": round(statistics.median(times), 6), "cpu_s": [round(c, 6) for c in CPU],
          "cpu_median_s": round(statistics.median(CPU), 6), "bytes_per_rep": nbytes})
    return 0


if __name__ == "__main__":
    sys.exit(main())
