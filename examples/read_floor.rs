//! The floor under a benchmark read cell (bench/README.md, "Read floors"): the least work any
//! implementation must do for it, written as plainly as possible and without libzarr's engine.
//!
//! ```sh
//! cargo run --release --example read_floor -- LAYOUT.json ARRAY_DIR OP REPS THREADS [VOLUME.bin]
//! ```
//!
//! OP is one of the benchmark's whole-array reads of a 3-D, unsharded, regular-grid Zarr v3 array:
//! `R` (every element into a fresh C-order buffer), `Rs` (every 2nd element in each dimension into a
//! fresh C-order buffer), `RsF` (the same into a fresh Fortran-order buffer) and `Rs32` (the same, C
//! order, converted to float32; unsigned 16-bit arrays only). Each repetition allocates the
//! destination with `malloc` (as the benchmark's libzarr program does) and advises huge pages for it
//! (as libzarr does for a large buffer it fills). THREADS threads each take every THREADS-th chunk:
//! `read(2)` of the chunk file into a reused buffer, the layout's codec chain decoding into a reused
//! chunk buffer (the same compressors libzarr and its peers call), and a nested loop copying the
//! selected elements out. Nothing else: no selection engine, no pool, no metadata.
//!
//! With VOLUME (the benchmark's C-order volume), every repetition's result is compared with the volume
//! (untimed, between repetitions, as the benchmark's programs do), so the floor is known to do the
//! whole job. Prints one JSON line in the benchmark's format (`impl` "floor": `times_s`, `min_s`,
//! `median_s`, `cpu_s`, `cpu_median_s`).
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

/// CPU seconds (user + system) of the whole process so far.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes one rusage into the zeroed struct.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
    t(ru.ru_utime) + t(ru.ru_stime)
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
/// the destination is in Fortran order, and whether elements become float32.
struct Op {
    step: usize,
    out_elem: usize,
    fortran: bool,
    to_f32: bool,
}

/// The destination, shared by the threads; each writes disjoint elements.
#[derive(Clone, Copy)]
struct Dest(*mut u8);
// SAFETY: the threads write disjoint elements (each chunk's selection lands in its own part).
unsafe impl Send for Dest {}
unsafe impl Sync for Dest {}

/// Copies chunk `g`'s selected elements (decoded chunk `src`, C order, `E`-byte elements) into `dst`.
///
/// # Safety
/// `dst` holds the whole selection of the array (`n` elements per dimension, strides `ds`).
#[allow(clippy::too_many_arguments)]
unsafe fn copy_chunk<const E: usize>(
    src: &[u8], c: [usize; 3], g: [usize; 3], step: usize, dst: *mut u8, ds: [usize; 3], out_elem: usize, to_f32: bool,
) {
    let (cz, cy, cx) = (c[0] / step, c[1] / step, c[2] / step);
    let origin = [g[0] * cz, g[1] * cy, g[2] * cx];
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
    let codecs = &meta["codecs"];
    if codecs.as_array().and_then(|l| l.first()).and_then(|c| c["name"].as_str()) == Some("sharding_indexed") {
        fail("sharded layouts have no floor here (only whole chunk files)".into());
    }
    let op = match op_name {
        "R" => Op { step: 1, out_elem: dtype.size(), fortran: false, to_f32: false },
        "Rs" => Op { step: 2, out_elem: dtype.size(), fortran: false, to_f32: false },
        "RsF" => Op { step: 2, out_elem: dtype.size(), fortran: true, to_f32: false },
        "Rs32" if dtype_name == "uint16" => Op { step: 2, out_elem: 4, fortran: false, to_f32: true },
        _ => fail(format!("op {op_name} (R, Rs, RsF; Rs32 on uint16)")),
    };
    if shape.len() != 3 || chunk.len() != 3 {
        fail("only 3-D layouts".into());
    }
    if (0..3).any(|d| chunk[d] == 0 || !shape[d].is_multiple_of(chunk[d]) || !chunk[d].is_multiple_of(op.step)) {
        fail(format!("chunk shape {chunk:?} must divide shape {shape:?} and be a multiple of the step"));
    }
    let sep = meta["chunk_key_encoding"]["configuration"]["separator"].as_str().unwrap_or("/").to_string();
    let es = dtype.size();
    let repr = ArrayRepr { shape: chunk.iter().map(|&c| c as u64).collect(), data_type: dtype, fill_value: vec![0; es] };
    let chain = CodecChain::from_v3(codecs, &repr).unwrap_or_else(|e| fail(format!("codecs: {e}")));
    let grid = [shape[0] / chunk[0], shape[1] / chunk[1], shape[2] / chunk[2]];
    let keys: Vec<([usize; 3], String)> = (0..grid[0] * grid[1] * grid[2])
        .map(|i| {
            let g = [i / (grid[1] * grid[2]), i / grid[2] % grid[1], i % grid[2]];
            (g, format!("{dir}/c{sep}{}{sep}{}{sep}{}", g[0], g[1], g[2]))
        })
        .collect();
    let n = [shape[0] / op.step, shape[1] / op.step, shape[2] / op.step];
    let ds = if op.fortran { [1, n[0], n[0] * n[1]] } else { [n[1] * n[2], n[2], 1] };
    let out_bytes = n[0] * n[1] * n[2] * op.out_elem;
    let c = [chunk[0], chunk[1], chunk[2]];

    // The volume, held (as the benchmark's programs hold it) to check every repetition's result, untimed.
    let vol: Option<Vec<u8>> = args.get(6).map(|p| {
        let v = std::fs::read(p).unwrap_or_else(|e| fail(format!("{p}: {e}")));
        if v.len() != shape.iter().product::<usize>() * es {
            fail(format!("{p}: {} bytes, the layout holds {}", v.len(), shape.iter().product::<usize>() * es));
        }
        v
    });
    let check = |got: &[u8], vol: &[u8], rep: usize| {
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
    let (mut times, mut cpus) = (Vec::new(), Vec::new());
    for rep in 0..reps {
        let (t0, cpu0) = (Instant::now(), cpu_seconds());
        let mut out: Vec<u8> = Vec::with_capacity(out_bytes); // malloc, untouched
        advise_huge_pages(out.as_mut_ptr(), out_bytes);
        let dst = Dest(out.as_mut_ptr());
        std::thread::scope(|s| {
            for t in 0..threads {
                let (keys, chain, op) = (&keys, &chain, &op);
                s.spawn(move || {
                    let dst = dst;
                    let mut encoded = Vec::new();
                    let mut decoded = vec![0u8; c[0] * c[1] * c[2] * es];
                    for (g, key) in keys.iter().skip(t).step_by(threads) {
                        encoded.clear();
                        std::fs::File::open(key)
                            .and_then(|mut f| f.read_to_end(&mut encoded))
                            .unwrap_or_else(|e| fail(format!("{key}: {e} (the floor needs every chunk stored)")));
                        chain.decode_chunk(&encoded, &mut decoded).unwrap_or_else(|e| fail(format!("{key}: {e}")));
                        // SAFETY: the destination holds the whole selection; chunks select disjoint parts.
                        unsafe {
                            match es {
                                1 => copy_chunk::<1>(&decoded, c, *g, op.step, dst.0, ds, op.out_elem, op.to_f32),
                                2 => copy_chunk::<2>(&decoded, c, *g, op.step, dst.0, ds, op.out_elem, op.to_f32),
                                4 => copy_chunk::<4>(&decoded, c, *g, op.step, dst.0, ds, op.out_elem, op.to_f32),
                                8 => copy_chunk::<8>(&decoded, c, *g, op.step, dst.0, ds, op.out_elem, op.to_f32),
                                _ => fail(format!("element size {es}")),
                            }
                        }
                    }
                });
            }
        });
        // SAFETY: every element of the selection was written (each chunk's part, all chunks).
        unsafe { out.set_len(out_bytes) };
        times.push(t0.elapsed().as_secs_f64());
        cpus.push(cpu_seconds() - cpu0);
        if let Some(vol) = &vol {
            check(&out, vol, rep);
        }
        drop(std::hint::black_box(out));
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
