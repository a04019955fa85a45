//! The codec floor under bench/reference_hdf5.py's whole read (bench/README.md, "Reference reads"): the
//! least work any reader of a zlib + shuffle variable must do, written plainly, without libzarr's engine.
//!
//! ```sh
//! cargo run --release --example reference_floor -- REFS.json VAR REPS THREADS
//! ```
//!
//! REFS.json: kerchunk references (version 1, as `h5tozarr --virtual` writes them) of a Zarr v2 array
//! VAR whose codecs are numcodecs `shuffle` then `zlib` (HDF5's shuffle + deflate), whose chunks are whole rows of
//! the array (every chunk dimension but the first equals the array's), so that chunk `i` (in C order)
//! is the bytes `i * chunk_bytes ..` of the C-order result. THREADS threads each take every
//! THREADS-th chunk: `pread(2)` of its byte range from the target file (one shared handle) into a
//! reused buffer, libdeflate's `libdeflate_zlib_decompress` into a reused chunk buffer, and the
//! unshuffle into the destination (a fresh `malloc`'d buffer each repetition, as the benchmark's
//! numpy `empty` is). Prints one JSON line: the medians of the whole job (`median_s`, and its CPU
//! seconds `cpu_median_s`) and of the same without the unshuffle (`inflate_median_s`,
//! `inflate_cpu_median_s`: inflating straight into the destination), and the bytes read and decoded.
//! The values are not checked: libdeflate's checksum (Adler-32) and exact decoded size vouch for each
//! chunk, and bench/reference_hdf5.py checks libzarr's values against h5py's.
mod floor_common;
use floor_common::cpu_seconds;
use serde_json::Value;
use std::os::unix::fs::FileExt;
use std::time::Instant;

fn fail(msg: String) -> ! {
    eprintln!("reference_floor: {msg}");
    std::process::exit(1)
}

/// The bytes of `n` elements of `e` bytes, grouped by byte position, put back in element order.
fn unshuffle(src: &[u8], e: usize, out: &mut [u8]) {
    let n = src.len() / e;
    if e == 4 {
        let (p0, p1, p2, p3) = (&src[..n], &src[n..2 * n], &src[2 * n..3 * n], &src[3 * n..4 * n]);
        for (i, o) in out.chunks_exact_mut(4).enumerate() {
            let v = u32::from(p0[i]) | u32::from(p1[i]) << 8 | u32::from(p2[i]) << 16 | u32::from(p3[i]) << 24;
            o.copy_from_slice(&v.to_le_bytes());
        }
        return;
    }
    for (i, o) in out.chunks_exact_mut(e).enumerate() {
        for (j, b) in o.iter_mut().enumerate() {
            *b = src[j * n + i];
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        fail("usage: reference_floor REFS.json VAR REPS THREADS".into());
    }
    let refs: Value = serde_json::from_slice(&std::fs::read(&args[1]).unwrap_or_else(|e| fail(format!("{}: {e}", args[1]))))
        .unwrap_or_else(|e| fail(format!("{}: {e}", args[1])));
    let var = &args[2];
    let reps: usize = args[3].parse().unwrap_or_else(|_| fail("REPS".into()));
    let threads: usize = args[4].parse().unwrap_or_else(|_| fail("THREADS".into()));
    let refs = refs.get("refs").unwrap_or(&refs);
    let zarray: Value = serde_json::from_str(refs[format!("{var}/.zarray")].as_str().unwrap_or_else(|| fail(format!("no {var}/.zarray"))))
        .unwrap_or_else(|e| fail(format!("{var}/.zarray: {e}")));
    let dims = |k: &str| -> Vec<usize> { zarray[k].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect() };
    let (shape, chunks) = (dims("shape"), dims("chunks"));
    if shape[1..] != chunks[1..] || zarray["order"] != "C" {
        fail("the chunks must be whole rows of a C-order array".into());
    }
    let itemsize: usize = zarray["dtype"].as_str().unwrap()[2..].parse().unwrap();
    // numcodecs shuffle then zlib: as kerchunk and h5tozarr write them (both in `filters`, `compressor`
    // null), or shuffle as the filter and zlib as the compressor.
    let shuffle = match (zarray["filters"].as_array().map(|f| f.as_slice()), &zarray["compressor"]) {
        (Some([f, z]), Value::Null) | (Some([f]), z) if f["id"] == "shuffle" && z["id"] == "zlib" => {
            f["elementsize"].as_u64().unwrap_or(4) as usize
        }
        _ => fail("the codecs must be numcodecs shuffle, then zlib".into()),
    };
    let chunk_bytes = chunks.iter().product::<usize>() * itemsize;
    let nchunks = shape[0].div_ceil(chunks[0]);
    let total = shape.iter().product::<usize>() * itemsize;
    if total != nchunks * chunk_bytes {
        fail("the first dimension must be a whole number of chunks".into());
    }
    // Every chunk's (target, offset, length), in C order.
    let mut targets: Vec<String> = Vec::new();
    let mut list: Vec<(usize, u64, usize)> = Vec::with_capacity(nchunks);
    for i in 0..nchunks {
        let key = format!("{var}/{i}{}", ".0".repeat(shape.len() - 1));
        let r = refs[&key].as_array().unwrap_or_else(|| fail(format!("{key}: not a [url, offset, length] reference")));
        let url = r[0].as_str().unwrap();
        let path = url.strip_prefix("file://").unwrap_or(url).to_string();
        let t = targets.iter().position(|p| *p == path).unwrap_or_else(|| {
            targets.push(path);
            targets.len() - 1
        });
        list.push((t, r[1].as_u64().unwrap(), r[2].as_u64().unwrap() as usize));
    }
    let files: Vec<std::fs::File> =
        targets.iter().map(|p| std::fs::File::open(p).unwrap_or_else(|e| fail(format!("{p}: {e}")))).collect();
    let stored: usize = list.iter().map(|c| c.2).sum();

    let run = |with_shuffle: bool| -> (f64, f64) {
        // SAFETY: a fresh allocation of `total` bytes, every byte written below before it is read.
        let out = unsafe { libc::malloc(total) as *mut u8 };
        let out_addr = out as usize;
        let (t0, c0) = (Instant::now(), cpu_seconds());
        std::thread::scope(|s| {
            for k in 0..threads {
                let (list, files) = (&list, &files);
                s.spawn(move || {
                    // SAFETY: a decompressor used by this thread only, freed at the end.
                    let d = unsafe { libdeflate_sys::libdeflate_alloc_decompressor() };
                    let mut enc = Vec::new();
                    let mut dec = vec![0u8; chunk_bytes];
                    for (i, &(t, off, len)) in list.iter().enumerate().skip(k).step_by(threads) {
                        enc.resize(len, 0);
                        files[t].read_exact_at(&mut enc, off).unwrap_or_else(|e| fail(format!("chunk {i}: {e}")));
                        // SAFETY: chunk i's bytes of the destination; no other thread takes chunk i.
                        let dst = unsafe { std::slice::from_raw_parts_mut((out_addr + i * chunk_bytes) as *mut u8, chunk_bytes) };
                        let target: &mut [u8] = if with_shuffle { &mut dec } else { dst };
                        let mut n = 0usize;
                        // SAFETY: the buffers are as long as the lengths passed.
                        let r = unsafe {
                            libdeflate_sys::libdeflate_zlib_decompress(
                                d,
                                enc.as_ptr() as *const _,
                                len,
                                target.as_mut_ptr() as *mut _,
                                chunk_bytes,
                                &mut n,
                            )
                        };
                        if r != 0 || n != chunk_bytes {
                            fail(format!("chunk {i}: libdeflate result {r}, {n} bytes"));
                        }
                        if with_shuffle {
                            // SAFETY: as above.
                            let dst = unsafe { std::slice::from_raw_parts_mut((out_addr + i * chunk_bytes) as *mut u8, chunk_bytes) };
                            unshuffle(&dec, shuffle, dst);
                        }
                    }
                    // SAFETY: allocated above.
                    unsafe { libdeflate_sys::libdeflate_free_decompressor(d) };
                });
            }
        });
        let (dt, cpu) = (t0.elapsed().as_secs_f64(), cpu_seconds() - c0);
        // SAFETY: allocated above.
        unsafe { libc::free(out as *mut libc::c_void) };
        (dt, cpu)
    };
    run(true); // warm (page cache)
    let (whole, whole_cpu): (Vec<f64>, Vec<f64>) = (0..reps).map(|_| run(true)).unzip();
    let (inflate, inflate_cpu): (Vec<f64>, Vec<f64>) = (0..reps).map(|_| run(false)).unzip();
    println!(
        "{}",
        serde_json::json!({"impl": "floor", "threads": threads, "chunks": nchunks, "stored_bytes": stored,
                           "decoded_bytes": total, "times_s": whole, "median_s": median(whole.clone()),
                           "cpu_median_s": median(whole_cpu), "inflate_times_s": inflate,
                           "inflate_median_s": median(inflate.clone()), "inflate_cpu_median_s": median(inflate_cpu)})
    );
}
