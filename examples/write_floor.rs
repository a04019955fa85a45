//! The floor under a benchmark write cell (bench/README.md, "Write floors"): the least work the W cell
//! needs, written as plainly as possible and without libzarr's engine.
//!
//! ```sh
//! cargo run --release --example write_floor -- LAYOUT.json ARRAY_DIR REPS THREADS VOLUME.bin
//! ```
//!
//! Writes the benchmark's C-order volume into a new array of LAYOUT (a 3-D, regular-grid Zarr v3
//! array whose chunks are not sharded) at ARRAY_DIR, REPS times. Before each repetition (untimed) the
//! directory is removed and made again with the layout's `zarr.json`, and `sync(2)` runs, as the
//! benchmark's programs do before timing. Timed: THREADS threads each take every THREADS-th chunk, copy its
//! elements out of the volume row by row into a reused chunk buffer, encode it with the layout's codec
//! chain (the same compressors libzarr and its peers call), make the chunk's directory and write the
//! encoded bytes to a new file with one `write(2)`. Nothing else: no temporary file and rename (libzarr
//! writes every chunk atomically, the floor does not), no pool, no metadata. After each repetition
//! (untimed) every chunk file is decoded and compared with the volume, so the floor is known to do the
//! whole job. Prints one JSON line in the benchmark's format (`impl` "floor").
mod floor_common;
use floor_common::cpu_seconds;
use serde_json::Value;
use std::io::Write;
use std::time::Instant;
use zarr::codec::chain::CodecChain;
use zarr::codec::ArrayRepr;
use zarr::dtype::DataType;

fn fail(msg: String) -> ! {
    eprintln!("write_floor: {msg}");
    std::process::exit(1)
}

fn dims(v: &Value, what: &str) -> [usize; 3] {
    let d: Vec<usize> = v
        .as_array()
        .unwrap_or_else(|| fail(format!("no {what}")))
        .iter()
        .map(|x| x.as_u64().unwrap_or_else(|| fail(format!("{what}: not an integer"))) as usize)
        .collect();
    d.try_into().unwrap_or_else(|_| fail(format!("{what}: only 3-D layouts")))
}

/// Copies the chunk whose first element is array element `at` (shape `c`) out of the C-order volume
/// `vol` (shape `n`, `es`-byte elements) into `out`, row by row.
fn gather(vol: &[u8], n: [usize; 3], es: usize, c: [usize; 3], at: [usize; 3], out: &mut [u8]) {
    let row = c[2] * es;
    for z in 0..c[0] {
        for y in 0..c[1] {
            let s = (((at[0] + z) * n[1] + at[1] + y) * n[2] + at[2]) * es;
            let d = (z * c[1] + y) * row;
            out[d..d + row].copy_from_slice(&vol[s..s + row]);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 6 {
        fail("usage: write_floor LAYOUT.json ARRAY_DIR REPS THREADS VOLUME.bin".into());
    }
    let (layout, dir) = (&args[1], &args[2]);
    let reps: usize = args[3].parse().unwrap_or_else(|_| fail("REPS".into()));
    let threads: usize = args[4].parse().ok().filter(|&t| t > 0).unwrap_or_else(|| fail("THREADS".into()));
    let text = std::fs::read_to_string(layout).unwrap_or_else(|e| fail(format!("{layout}: {e}")));
    let meta: Value = serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{layout}: {e}")));
    let shape = dims(&meta["shape"], "shape");
    let c = dims(&meta["chunk_grid"]["configuration"]["chunk_shape"], "chunk_shape");
    let codecs = &meta["codecs"];
    if codecs.as_array().into_iter().flatten().any(|k| k["name"] == "sharding_indexed") {
        fail("sharded layouts: the write floor encodes plain chunks only".into());
    }
    if (0..3).any(|d| c[d] == 0 || !shape[d].is_multiple_of(c[d])) {
        fail(format!("chunk shape {c:?} must divide shape {shape:?}"));
    }
    let dtype = DataType::parse_v3(meta["data_type"].as_str().unwrap_or(""))
        .unwrap_or_else(|e| fail(format!("data_type: {e}")));
    let es = dtype.size();
    let repr = ArrayRepr { shape: c.iter().map(|&c| c as u64).collect(), data_type: dtype, fill_value: vec![0; es] };
    let chain = CodecChain::from_v3(codecs, &repr).unwrap_or_else(|e| fail(format!("codecs: {e}")));
    let sep = meta["chunk_key_encoding"]["configuration"]["separator"].as_str().unwrap_or("/").to_string();
    let vol = std::fs::read(&args[5]).unwrap_or_else(|e| fail(format!("{}: {e}", args[5])));
    if vol.len() != shape.iter().product::<usize>() * es {
        fail(format!("{}: {} bytes, the layout holds {}", args[5], vol.len(), shape.iter().product::<usize>() * es));
    }
    let grid = [shape[0] / c[0], shape[1] / c[1], shape[2] / c[2]];
    let chunks: Vec<[usize; 3]> =
        (0..grid[0] * grid[1] * grid[2]).map(|i| [i / (grid[1] * grid[2]), i / grid[2] % grid[1], i % grid[2]]).collect();
    let key = |g: &[usize; 3]| format!("{dir}/c{sep}{}{sep}{}{sep}{}", g[0], g[1], g[2]);
    let chunk_bytes = c[0] * c[1] * c[2] * es;

    let (mut times, mut cpus) = (Vec::new(), Vec::new());
    for rep in 0..reps {
        // untimed: a new, empty array
        if std::path::Path::new(dir).exists() {
            std::fs::remove_dir_all(dir).unwrap_or_else(|e| fail(format!("{dir}: {e}")));
        }
        std::fs::create_dir_all(dir).unwrap_or_else(|e| fail(format!("{dir}: {e}")));
        std::fs::write(format!("{dir}/zarr.json"), &text).unwrap_or_else(|e| fail(format!("{dir}/zarr.json: {e}")));
        // SAFETY: sync(2) takes no arguments. The last repetition's dirty pages are written back now, not
        // while this one runs (the benchmark's programs sync here too).
        unsafe { libc::sync() };
        let (t0, cpu0) = (Instant::now(), cpu_seconds());
        std::thread::scope(|s| {
            for t in 0..threads {
                let (chunks, chain, vol, key) = (&chunks, &chain, &vol, &key);
                s.spawn(move || {
                    let mut buf = vec![0u8; chunk_bytes];
                    for g in chunks.iter().skip(t).step_by(threads) {
                        gather(vol, shape, es, c, [g[0] * c[0], g[1] * c[1], g[2] * c[2]], &mut buf);
                        let encoded = chain.encode_chunk(&buf).unwrap_or_else(|e| fail(format!("encode: {e}")));
                        let path = key(g);
                        let parent = std::path::Path::new(&path).parent().unwrap();
                        std::fs::create_dir_all(parent).unwrap_or_else(|e| fail(format!("{}: {e}", parent.display())));
                        std::fs::File::create(&path)
                            .and_then(|mut f| f.write_all(&encoded))
                            .unwrap_or_else(|e| fail(format!("{path}: {e}")));
                    }
                });
            }
        });
        times.push(t0.elapsed().as_secs_f64());
        cpus.push(cpu_seconds() - cpu0);
        // untimed: every chunk decodes to the volume's
        let (mut want, mut got) = (vec![0u8; chunk_bytes], vec![0u8; chunk_bytes]);
        for g in &chunks {
            let path = key(g);
            let bytes = std::fs::read(&path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
            chain.decode_chunk(&bytes, &mut got).unwrap_or_else(|e| fail(format!("{path}: {e}")));
            gather(&vol, shape, es, c, [g[0] * c[0], g[1] * c[1], g[2] * c[2]], &mut want);
            if got != want {
                fail(format!("rep {rep}: chunk {g:?} differs from the volume"));
            }
        }
    }
    let median = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        s[s.len() / 2]
    };
    let min = times.iter().cloned().fold(f64::INFINITY, f64::min);
    println!(
        "{{\"impl\": \"floor\", \"op\": \"W\", \"status\": \"ok\", \"threads\": {threads}, \"reps\": {reps}, \
         \"times_s\": {times:?}, \"min_s\": {min:.6}, \"median_s\": {:.6}, \"cpu_s\": {cpus:?}, \
         \"cpu_median_s\": {:.6}, \"bytes_per_rep\": {}, \"checked\": true}}",
        median(&times),
        median(&cpus),
        vol.len()
    );
}
