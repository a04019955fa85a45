//! The floor under a benchmark read cell (bench/README.md, "Read floors"): the least work any
//! implementation must do for it, written as plainly as possible and without libzarr's engine.
//!
//! ```sh
//! cargo run --release --example read_floor -- LAYOUT.json ARRAY_DIR OP REPS THREADS [VOLUME.bin]
//! ```
//!
//! OP is one of the benchmark's whole-array reads of a 3-D, regular-grid Zarr v3 array:
//! `R` (every element into a fresh C-order buffer), `Rinto` (every element into one pre-allocated
//! C-order buffer that every repetition reuses, overwritten with a sentinel between repetitions,
//! untimed, as the benchmark's programs do), `Rs` (every 2nd element in each dimension into a
//! fresh C-order buffer), `RsF` (the same into a fresh Fortran-order buffer) and `Rs32` (the same, C
//! order, converted to float32; unsigned 16-bit arrays only) and `P` (the plane `[:, :, 200]`, the
//! benchmark's P cell, into one reused C-order buffer as the benchmark's libzarr program reads it: only
//! the chunk files, or the inner chunks, that hold column 200 are read, an inner chunk by one
//! `pread(2)` of its bytes after one `pread(2)` of the shard's index). Each repetition of R, Rs, RsF and Rs32
//! allocates the destination with `malloc` (as the benchmark's libzarr program does) and advises huge
//! pages for it (as libzarr does for a large buffer it fills). THREADS threads each take every
//! THREADS-th chunk file: `read(2)` of the whole file into a reused buffer, the layout's codec chain
//! decoding into a reused chunk buffer (the same compressors libzarr and its peers call), and a nested
//! loop copying the selected elements out. A sharded layout (`sharding_indexed` as the only codec, an
//! index of `(offset, nbytes)` pairs in little-endian order, with or without `crc32c`) is read the same
//! way, shard file by shard file: one `read(2)` of the whole shard, then every inner chunk named by the
//! index (taken from the buffer's head or tail) decoded with the inner chain and copied out in turn.
//! Nothing else: no selection engine, no pool, no metadata, no checksum check.
//!
//! With VOLUME (the benchmark's C-order volume), every repetition's result is compared with the volume
//! (untimed, between repetitions, as the benchmark's programs do), so the floor is known to do the
//! whole job. Prints one JSON line in the benchmark's format (`impl` "floor": `times_s`, `min_s`,
//! `median_s`, `cpu_s`, `cpu_median_s`).
mod floor_common;
use floor_common::cpu_seconds;
use serde_json::Value;
use std::io::Read;
use std::time::Instant;
use zarr::codec::chain::CodecChain;
use zarr::codec::ArrayRepr;
use zarr::dtype::DataType;

fn fail(msg: String) -> ! {
    eprintln!("read_floor: {msg}");
    std::process::exit(1)
}

/// Asks for transparent huge pages over the 2 MiB-aligned interior of a large destination, as libzarr
/// does for the buffers it fills (a fresh buffer's page faults are otherwise a large part of a read).
fn advise_huge_pages(p: *mut u8, len: usize) {
    const HUGE: usize = 2 << 20;
    let (begin, end) = ((p as usize).next_multiple_of(HUGE), (p as usize + len) / HUGE * HUGE);
    if len >= 4 * HUGE && end > begin {
        // SAFETY: advice only, over pages of this allocation.
        unsafe { libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_HUGEPAGE) };
    }
}

fn dims(v: &Value, what: &str) -> Vec<usize> {
    v.as_array()
        .unwrap_or_else(|| fail(format!("no {what}")))
        .iter()
        .map(|x| x.as_u64().unwrap_or_else(|| fail(format!("{what}: not an integer"))) as usize)
        .collect()
}

/// What one op reads and writes: the step in every dimension, the destination's element size, whether
/// the destination is in Fortran order, whether elements become float32, and whether the destination
/// is reused.
struct Op {
    step: usize,
    out_elem: usize,
    fortran: bool,
    to_f32: bool,
    /// Rinto: one destination, allocated and touched before the first repetition.
    reuse: bool,
    /// P: the plane `[:, :, x]` of a 3-D array (`step` 1), into a `[shape[0], shape[1]]` C-order buffer.
    plane_x: Option<usize>,
}

/// The benchmark's P cell reads the plane `[:, :, PLANE_X]` (bench/peers.py, bench_libzarr.c).
const PLANE_X: usize = 200;

/// Copies column `x` (chunk coordinates) of every row of the decoded chunk `src` (shape `c`, C order,
/// `E`-byte elements), whose first element is array element `at`, into the plane `dst` (`rows` elements
/// per row of the plane: the array's second dimension).
///
/// # Safety
/// `dst` holds the whole plane, `shape[0] x rows` elements of `E` bytes.
unsafe fn copy_plane<const E: usize>(src: &[u8], c: [usize; 3], at: [usize; 3], x: usize, dst: *mut u8, rows: usize) {
    for z in 0..c[0] {
        for y in 0..c[1] {
            let s = ((z * c[1] + y) * c[2] + x) * E;
            let d = ((at[0] + z) * rows + at[1] + y) * E;
            // SAFETY: s lies inside the decoded chunk, d inside the plane (caller's contract).
            unsafe { dst.add(d).cast::<[u8; E]>().write_unaligned(src.as_ptr().add(s).cast::<[u8; E]>().read_unaligned()) };
        }
    }
}

/// `len` bytes of `file` at `offset`, into `buf` (cleared first), by `pread(2)`.
fn pread_into(file: &std::fs::File, offset: u64, len: usize, buf: &mut Vec<u8>, what: &dyn Fn() -> String) {
    use std::os::unix::fs::FileExt;
    buf.clear();
    buf.resize(len, 0);
    file.read_exact_at(buf, offset).unwrap_or_else(|e| fail(format!("{}: {e}", what())));
}

/// A sharded layout (`sharding_indexed`): the inner chunk shape, inner chunks per shard, the index's
/// size in bytes and whether it ends the shard.
struct Shards {
    inner: [usize; 3],
    per_shard: [usize; 3],
    index_len: usize,
    index_at_end: bool,
}

/// The destination, shared by the threads; each writes disjoint elements.
#[derive(Clone, Copy)]
struct Dest(*mut u8);
// SAFETY: the threads write disjoint elements (each chunk's selection lands in its own part).
unsafe impl Send for Dest {}
unsafe impl Sync for Dest {}

/// Copies the selected elements of the chunk whose first element is array element `at` (decoded chunk
/// `src` of shape `c`, C order, `E`-byte elements) into `dst`.
///
/// # Safety
/// `dst` holds the whole selection of the array (`n` elements per dimension, strides `ds`).
#[allow(clippy::too_many_arguments)]
unsafe fn copy_chunk<const E: usize>(
    src: &[u8], c: [usize; 3], at: [usize; 3], step: usize, dst: *mut u8, ds: [usize; 3], out_elem: usize, to_f32: bool,
) {
    let (cz, cy, cx) = (c[0] / step, c[1] / step, c[2] / step);
    let origin = [at[0] / step, at[1] / step, at[2] / step];
    let put = |z: usize, y: usize, x: usize| -> usize {
        ((origin[0] + z) * ds[0] + (origin[1] + y) * ds[1] + (origin[2] + x) * ds[2]) * out_elem
    };
    let get = |z: usize, y: usize, x: usize| -> usize { ((z * step * c[1] + y * step) * c[2] + x * step) * E };
    let one = |z: usize, y: usize, x: usize| {
        let (s, d) = (get(z, y, x), put(z, y, x));
        // SAFETY: s lies inside the decoded chunk, d inside the destination (caller's contract).
        unsafe {
            if to_f32 {
                let v = u16::from_le_bytes([src[s], src[s + 1]]) as f32;
                dst.add(d).cast::<f32>().write_unaligned(v);
            } else {
                dst.add(d).cast::<[u8; E]>().write_unaligned(src.as_ptr().add(s).cast::<[u8; E]>().read_unaligned());
            }
        }
    };
    if ds[0] == 1 {
        // Fortran order: walk the destination contiguously (z innermost).
        for x in 0..cx {
            for y in 0..cy {
                for z in 0..cz {
                    one(z, y, x);
                }
            }
        }
    } else if step == 1 && !to_f32 {
        for z in 0..cz {
            for y in 0..cy {
                let (s, d) = (get(z, y, 0), put(z, y, 0));
                // SAFETY: one row of the chunk into one row of the destination.
                unsafe { std::ptr::copy_nonoverlapping(src.as_ptr().add(s), dst.add(d), cx * E) };
            }
        }
    } else {
        for z in 0..cz {
            for y in 0..cy {
                for x in 0..cx {
                    one(z, y, x);
                }
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 6 {
        fail("usage: read_floor LAYOUT.json ARRAY_DIR OP REPS THREADS [VOLUME.bin]".into());
    }
    let (layout, dir, op_name) = (&args[1], &args[2], args[3].as_str());
    let reps: usize = args[4].parse().unwrap_or_else(|_| fail("REPS".into()));
    let threads: usize = args[5].parse().unwrap_or_else(|_| fail("THREADS".into()));
    let text = std::fs::read_to_string(layout).unwrap_or_else(|e| fail(format!("{layout}: {e}")));
    let meta: Value = serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{layout}: {e}")));
    let shape = dims(&meta["shape"], "shape");
    let chunk = dims(&meta["chunk_grid"]["configuration"]["chunk_shape"], "chunk_shape");
    let dtype_name = meta["data_type"].as_str().unwrap_or("");
    let dtype = DataType::parse_v3(dtype_name).unwrap_or_else(|e| fail(format!("data_type: {e}")));
    // A sharded layout: the shard is the chunk of the grid, the inner chunks are what the chain decodes.
    let mut codecs = &meta["codecs"];
    let mut shards: Option<Shards> = None;
    if let Some(sharding) = codecs.as_array().and_then(|l| l.first()).filter(|c| c["name"] == "sharding_indexed") {
        if codecs.as_array().map_or(0, |l| l.len()) != 1 {
            fail("sharding_indexed must be the only codec".into());
        }
        let cfg = &sharding["configuration"];
        let inner = dims(&cfg["chunk_shape"], "inner chunk_shape");
        if inner.len() != 3 || (0..3).any(|d| inner[d] == 0 || !chunk.get(d).is_some_and(|c| c.is_multiple_of(inner[d]))) {
            fail(format!("inner chunk shape {inner:?} must divide the shard shape {chunk:?}"));
        }
        let per_shard = [chunk[0] / inner[0], chunk[1] / inner[1], chunk[2] / inner[2]];
        let index_codecs: Vec<&str> =
            cfg["index_codecs"].as_array().into_iter().flatten().filter_map(|c| c["name"].as_str()).collect();
        if index_codecs.iter().any(|n| *n != "bytes" && *n != "crc32c") {
            fail(format!("index codecs {index_codecs:?}: only bytes (little-endian) and crc32c"));
        }
        let n_inner = per_shard.iter().product::<usize>();
        let index_len = n_inner * 16 + if index_codecs.contains(&"crc32c") { 4 } else { 0 };
        let index_at_end = cfg["index_location"].as_str() != Some("start");
        shards = Some(Shards { inner: [inner[0], inner[1], inner[2]], per_shard, index_len, index_at_end });
        codecs = &cfg["codecs"];
    }
    let op = match op_name {
        "R" => Op { step: 1, out_elem: dtype.size(), fortran: false, to_f32: false, reuse: false, plane_x: None },
        "Rinto" => Op { step: 1, out_elem: dtype.size(), fortran: false, to_f32: false, reuse: true, plane_x: None },
        "Rs" => Op { step: 2, out_elem: dtype.size(), fortran: false, to_f32: false, reuse: false, plane_x: None },
        "RsF" => Op { step: 2, out_elem: dtype.size(), fortran: true, to_f32: false, reuse: false, plane_x: None },
        "Rs32" if dtype_name == "uint16" => {
            Op { step: 2, out_elem: 4, fortran: false, to_f32: true, reuse: false, plane_x: None }
        }
        "P" => Op { step: 1, out_elem: dtype.size(), fortran: false, to_f32: false, reuse: true, plane_x: Some(PLANE_X) },
        _ => fail(format!("op {op_name} (R, Rinto, Rs, RsF, P; Rs32 on uint16)")),
    };
    if op.plane_x.is_some_and(|x| shape.get(2).is_none_or(|&n| x >= n)) {
        fail(format!("P: the array's last dimension holds no column {PLANE_X}"));
    }
    if shape.len() != 3 || chunk.len() != 3 {
        fail("only 3-D layouts".into());
    }
    // The chunk the codec chain decodes: the inner chunk of a shard, otherwise the grid's chunk.
    let c = shards.as_ref().map_or([chunk[0], chunk[1], chunk[2]], |sh| sh.inner);
    if (0..3).any(|d| chunk[d] == 0 || !shape[d].is_multiple_of(chunk[d]) || !c[d].is_multiple_of(op.step)) {
        fail(format!("chunk shape {chunk:?} must divide shape {shape:?}, and {c:?} be a multiple of the step"));
    }
    let shard = [chunk[0], chunk[1], chunk[2]]; // the grid's chunk: a shard when sharded
    let sep = meta["chunk_key_encoding"]["configuration"]["separator"].as_str().unwrap_or("/").to_string();
    let es = dtype.size();
    let repr = ArrayRepr { shape: c.iter().map(|&c| c as u64).collect(), data_type: dtype, fill_value: vec![0; es] };
    let chain = CodecChain::from_v3(codecs, &repr).unwrap_or_else(|e| fail(format!("codecs: {e}")));
    let grid = [shape[0] / chunk[0], shape[1] / chunk[1], shape[2] / chunk[2]];
    let keys: Vec<([usize; 3], String)> = (0..grid[0] * grid[1] * grid[2])
        .map(|i| {
            let g = [i / (grid[1] * grid[2]), i / grid[2] % grid[1], i % grid[2]];
            (g, format!("{dir}/c{sep}{}{sep}{}{sep}{}", g[0], g[1], g[2]))
        })
        .collect();
    // P reads only the chunks (shards) holding the plane's column.
    let keys: Vec<([usize; 3], String)> = match op.plane_x {
        Some(x) => keys.into_iter().filter(|(g, _)| g[2] == x / chunk[2]).collect(),
        None => keys,
    };
    let n = match op.plane_x {
        Some(_) => [shape[0], shape[1], 1],
        None => [shape[0] / op.step, shape[1] / op.step, shape[2] / op.step],
    };
    let ds = if op.fortran { [1, n[0], n[0] * n[1]] } else { [n[1] * n[2], n[2], 1] };
    let out_bytes = n[0] * n[1] * n[2] * op.out_elem;

    // The volume, held (as the benchmark's programs hold it) to check every repetition's result, untimed.
    let vol: Option<Vec<u8>> = args.get(6).map(|p| {
        let v = std::fs::read(p).unwrap_or_else(|e| fail(format!("{p}: {e}")));
        if v.len() != shape.iter().product::<usize>() * es {
            fail(format!("{p}: {} bytes, the layout holds {}", v.len(), shape.iter().product::<usize>() * es));
        }
        v
    });
    let check = |got: &[u8], vol: &[u8], rep: usize| {
        if let Some(px) = op.plane_x {
            for z in 0..n[0] {
                for y in 0..n[1] {
                    let (s, d) = (((z * shape[1] + y) * shape[2] + px) * es, (z * n[1] + y) * es);
                    if got[d..d + es] != vol[s..s + es] {
                        fail(format!("rep {rep}: plane element ({z}, {y}) differs from the volume"));
                    }
                }
            }
            return;
        }
        if op.step == 1 && !op.fortran && !op.to_f32 {
            if got != vol {
                fail(format!("rep {rep}: the array read differs from the volume"));
            }
            return;
        }
        for z in 0..n[0] {
            for y in 0..n[1] {
                for x in 0..n[2] {
                    let s = (((z * op.step) * shape[1] + y * op.step) * shape[2] + x * op.step) * es;
                    let d = (z * ds[0] + y * ds[1] + x * ds[2]) * op.out_elem;
                    let ok = if op.to_f32 {
                        let v = u16::from_le_bytes([vol[s], vol[s + 1]]) as f32;
                        got[d..d + 4] == v.to_ne_bytes()
                    } else {
                        got[d..d + es] == vol[s..s + es]
                    };
                    if !ok {
                        fail(format!("rep {rep}: element ({z}, {y}, {x}) of the selection differs from the volume"));
                    }
                }
            }
        }
    };
    // Decodes one chunk's bytes and copies its selected elements, the chunk's first element being array
    // element `at`.
    let place = |encoded: &[u8], decoded: &mut [u8], at: [usize; 3], dst: *mut u8, what: &dyn Fn() -> String| {
        chain.decode_chunk(encoded, decoded).unwrap_or_else(|e| fail(format!("{}: {e}", what())));
        // SAFETY: the destination holds the whole selection; chunks select disjoint parts.
        if let Some(px) = op.plane_x {
            let x = px - at[2];
            unsafe {
                match es {
                    1 => copy_plane::<1>(decoded, c, at, x, dst, n[1]),
                    2 => copy_plane::<2>(decoded, c, at, x, dst, n[1]),
                    4 => copy_plane::<4>(decoded, c, at, x, dst, n[1]),
                    8 => copy_plane::<8>(decoded, c, at, x, dst, n[1]),
                    _ => fail(format!("element size {es}")),
                }
            }
            return;
        }
        unsafe {
            match es {
                1 => copy_chunk::<1>(decoded, c, at, op.step, dst, ds, op.out_elem, op.to_f32),
                2 => copy_chunk::<2>(decoded, c, at, op.step, dst, ds, op.out_elem, op.to_f32),
                4 => copy_chunk::<4>(decoded, c, at, op.step, dst, ds, op.out_elem, op.to_f32),
                8 => copy_chunk::<8>(decoded, c, at, op.step, dst, ds, op.out_elem, op.to_f32),
                _ => fail(format!("element size {es}")),
            }
        }
    };
    // Rinto's destination: allocated and touched once, overwritten with a sentinel before every
    // repetition (untimed), as in the benchmark's programs.
    let mut reused: Vec<u8> = if op.reuse { vec![0; out_bytes] } else { Vec::new() };
    let (mut times, mut cpus) = (Vec::new(), Vec::new());
    for rep in 0..reps {
        if op.reuse {
            reused.fill(0xA5);
        }
        let (t0, cpu0) = (Instant::now(), cpu_seconds());
        let mut fresh: Vec<u8> = Vec::new();
        let dst = if op.reuse {
            Dest(reused.as_mut_ptr())
        } else {
            fresh = Vec::with_capacity(out_bytes); // malloc, untouched
            advise_huge_pages(fresh.as_mut_ptr(), out_bytes);
            Dest(fresh.as_mut_ptr())
        };
        std::thread::scope(|s| {
            for t in 0..threads {
                let (keys, place, shards, plane_x) = (&keys, &place, &shards, op.plane_x);
                s.spawn(move || {
                    let dst = dst;
                    let mut encoded = Vec::new();
                    let mut decoded = vec![0u8; c[0] * c[1] * c[2] * es];
                    for (g, key) in keys.iter().skip(t).step_by(threads) {
                        let at = [g[0] * shard[0], g[1] * shard[1], g[2] * shard[2]];
                        if let (Some(px), Some(sh)) = (plane_x, shards.as_ref()) {
                            // only the index and the inner chunks holding the column
                            let file = std::fs::File::open(key).unwrap_or_else(|e| fail(format!("{key}: {e}")));
                            let len = file.metadata().unwrap_or_else(|e| fail(format!("{key}: {e}"))).len();
                            if len < sh.index_len as u64 {
                                fail(format!("{key}: {len} bytes, shorter than the shard index"));
                            }
                            let mut index = Vec::new();
                            let index_at = if sh.index_at_end { len - sh.index_len as u64 } else { 0 };
                            pread_into(&file, index_at, sh.index_len, &mut index, &|| format!("{key}: index"));
                            let p = sh.per_shard;
                            let ix = (px - at[2]) / c[2];
                            for iz in 0..p[0] {
                                for iy in 0..p[1] {
                                    let i = (iz * p[1] + iy) * p[2] + ix;
                                    let word = |k: usize| u64::from_le_bytes(index[k * 8..k * 8 + 8].try_into().unwrap());
                                    let (offset, nbytes) = (word(2 * i), word(2 * i + 1));
                                    if offset.checked_add(nbytes).is_none_or(|end| end > len) {
                                        fail(format!("{key}: inner chunk {i} missing or outside the shard (the floor needs every chunk stored)"));
                                    }
                                    pread_into(&file, offset, nbytes as usize, &mut encoded, &|| format!("{key}: inner chunk {i}"));
                                    let at = [at[0] + iz * c[0], at[1] + iy * c[1], at[2] + ix * c[2]];
                                    place(&encoded, &mut decoded, at, dst.0, &|| format!("{key}: inner chunk {i}"));
                                }
                            }
                            continue;
                        }
                        encoded.clear();
                        std::fs::File::open(key)
                            .and_then(|mut f| f.read_to_end(&mut encoded))
                            .unwrap_or_else(|e| fail(format!("{key}: {e} (the floor needs every chunk stored)")));
                        let Some(sh) = shards else {
                            place(&encoded, &mut decoded, at, dst.0, &|| key.clone());
                            continue;
                        };
                        let len = encoded.len();
                        if len < sh.index_len {
                            fail(format!("{key}: {len} bytes, shorter than the shard index"));
                        }
                        let index = if sh.index_at_end { &encoded[len - sh.index_len..] } else { &encoded[..sh.index_len] };
                        let p = sh.per_shard;
                        for i in 0..p[0] * p[1] * p[2] {
                            let word = |k: usize| u64::from_le_bytes(index[k * 8..k * 8 + 8].try_into().unwrap());
                            let (offset, nbytes) = (word(2 * i), word(2 * i + 1));
                            let bytes = (offset.checked_add(nbytes))
                                .and_then(|end| encoded.get(offset as usize..end as usize))
                                .unwrap_or_else(|| {
                                    fail(format!("{key}: inner chunk {i} missing or outside the shard (the floor needs every chunk stored)"))
                                });
                            let ig = [i / (p[1] * p[2]), i / p[2] % p[1], i % p[2]];
                            let at = [at[0] + ig[0] * c[0], at[1] + ig[1] * c[1], at[2] + ig[2] * c[2]];
                            place(bytes, &mut decoded, at, dst.0, &|| format!("{key}: inner chunk {i}"));
                        }
                    }
                });
            }
        });
        if !op.reuse {
            // SAFETY: every element of the selection was written (each chunk's part, all chunks).
            unsafe { fresh.set_len(out_bytes) };
        }
        times.push(t0.elapsed().as_secs_f64());
        cpus.push(cpu_seconds() - cpu0);
        if let Some(vol) = &vol {
            check(if op.reuse { &reused } else { &fresh }, vol, rep);
        }
        drop(std::hint::black_box(fresh));
    }

    let median = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s[s.len() / 2]
    };
    let min = times.iter().cloned().fold(f64::INFINITY, f64::min);
    println!(
        "{{\"impl\": \"floor\", \"op\": {}, \"status\": \"ok\", \"threads\": {threads}, \"reps\": {reps}, \
         \"times_s\": {times:?}, \"min_s\": {min:.6}, \"median_s\": {:.6}, \"cpu_s\": {cpus:?}, \
         \"cpu_median_s\": {:.6}, \"bytes_per_rep\": {out_bytes}, \"checked\": {}}}",
        Value::from(op_name),
        median(&times),
        median(&cpus),
        vol.is_some()
    );
}
