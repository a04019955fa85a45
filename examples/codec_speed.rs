//! Single-core speed of a benchmark layout's codec chain (bench/README.md, "codec-bound cells").
//!
//! ```sh
//! cargo run --release --example codec_speed -- LAYOUT.json VOLUME.bin [REPS]
//! ```
//!
//! Cuts the volume (C order, the layout's shape and data type, little-endian) into the layout's chunks
//! (for `sharding_indexed`: its inner chunks and inner codecs, which is where a shard's time goes), then
//! encodes every chunk with libzarr's own codec chain on this one thread, and decodes every encoded chunk
//! again, checking that it comes back byte for byte. Prints one JSON line: the decoded bytes per second
//! of the best of REPS (default 3) passes over all chunks, encode and decode apart, and the ratio.
//!
//! Only full chunks are timed (the benchmark layouts divide their shape exactly).
use serde_json::Value;
use std::time::Instant;
use zarr::codec::chain::CodecChain;
use zarr::codec::ArrayRepr;
use zarr::dtype::DataType;

fn fail(msg: String) -> ! {
    eprintln!("codec_speed: {msg}");
    std::process::exit(1)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        fail("usage: codec_speed LAYOUT.json VOLUME.bin [REPS]".into());
    }
    let reps: usize = args.get(3).map(|s| s.parse().unwrap_or(3)).unwrap_or(3).max(1);
    let text = std::fs::read_to_string(&args[1]).unwrap_or_else(|e| fail(format!("{}: {e}", args[1])));
    let meta: Value = serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{}: {e}", args[1])));
    let shape: Vec<u64> = meta["shape"].as_array().unwrap_or_else(|| fail("no shape".into()))
        .iter().map(|v| v.as_u64().unwrap_or(0)).collect();
    let dtype = DataType::parse_v3(meta["data_type"].as_str().unwrap_or(""))
        .unwrap_or_else(|e| fail(format!("data_type: {e}")));
    let mut chunk: Vec<u64> = meta["chunk_grid"]["configuration"]["chunk_shape"].as_array()
        .unwrap_or_else(|| fail("no chunk_shape".into()))
        .iter().map(|v| v.as_u64().unwrap_or(0)).collect();
    let mut codecs = meta["codecs"].clone();
    // a sharded layout: time its inner chunks (index encoding is negligible)
    if codecs.as_array().and_then(|l| l.first()).and_then(|c| c["name"].as_str()) == Some("sharding_indexed") {
        let cfg = &codecs[0]["configuration"];
        chunk = cfg["chunk_shape"].as_array().unwrap_or_else(|| fail("no inner chunk_shape".into()))
            .iter().map(|v| v.as_u64().unwrap_or(0)).collect();
        codecs = cfg["codecs"].clone();
    }
    if chunk.len() != shape.len() || chunk.iter().zip(&shape).any(|(&c, &s)| c == 0 || s % c != 0) {
        fail(format!("chunk shape {chunk:?} does not divide shape {shape:?}"));
    }
    let es = dtype.size();
    let repr = ArrayRepr { shape: chunk.clone(), data_type: dtype, fill_value: vec![0; es] };
    let chain = CodecChain::from_v3(&codecs, &repr).unwrap_or_else(|e| fail(format!("codecs: {e}")));
    let vol = std::fs::read(&args[2]).unwrap_or_else(|e| fail(format!("{}: {e}", args[2])));
    let total: u64 = shape.iter().product::<u64>() * es as u64;
    if vol.len() as u64 != total {
        fail(format!("{}: {} bytes, the layout holds {total}", args[2], vol.len()));
    }

    // cut the volume into C-order chunks (3-D layouts only: the benchmark's)
    if shape.len() != 3 {
        fail("only 3-D layouts".into());
    }
    let (s, c) = (&shape, &chunk);
    let grid = [s[0] / c[0], s[1] / c[1], s[2] / c[2]];
    let row = c[2] as usize * es;
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    for gz in 0..grid[0] {
        for gy in 0..grid[1] {
            for gx in 0..grid[2] {
                let mut buf = Vec::with_capacity(repr.nbytes());
                for z in 0..c[0] {
                    for y in 0..c[1] {
                        let off = (((gz * c[0] + z) * s[1] + gy * c[1] + y) * s[2] + gx * c[2]) as usize * es;
                        buf.extend_from_slice(&vol[off..off + row]);
                    }
                }
                chunks.push(buf);
            }
        }
    }
    drop(vol);

    let mut encoded: Vec<Vec<u8>> = Vec::new();
    let mut best_enc = f64::INFINITY;
    for _ in 0..reps {
        let t0 = Instant::now();
        let out: Vec<Vec<u8>> = chunks.iter()
            .map(|ch| chain.encode_chunk(ch).unwrap_or_else(|e| fail(format!("encode: {e}"))).into_owned())
            .collect();
        best_enc = best_enc.min(t0.elapsed().as_secs_f64());
        encoded = out;
    }
    let enc_bytes: usize = encoded.iter().map(|e| e.len()).sum();
    let mut out = vec![0u8; repr.nbytes()];
    let mut best_dec = f64::INFINITY;
    for _ in 0..reps {
        let mut t = 0.0;
        for (e, ch) in encoded.iter().zip(&chunks) {
            out.fill(0xA5);
            let t0 = Instant::now();
            chain.decode_chunk(e, &mut out).unwrap_or_else(|e| fail(format!("decode: {e}")));
            t += t0.elapsed().as_secs_f64();
            if out != *ch {
                fail("a decoded chunk differs from the source".into());
            }
        }
        best_dec = best_dec.min(t);
    }
    let n = total as f64;
    println!(
        "{{\"layout\": {}, \"chunks\": {}, \"chunk_shape\": {:?}, \"bytes\": {}, \"encoded_bytes\": {}, \
         \"encode_s\": {:.6}, \"decode_s\": {:.6}, \"encode_GBps\": {:.4}, \"decode_GBps\": {:.4}, \"reps\": {}}}",
        Value::from(args[1].rsplit('/').next().unwrap_or("").trim_end_matches(".json")),
        chunks.len(), chunk, total, enc_bytes, best_enc, best_dec, n / best_enc / 1e9, n / best_dec / 1e9, reps
    );
}
