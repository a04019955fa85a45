//! Hostile chunks against the decoders (issue 32, items 4, 5 and 8): what a chunk declares is checked
//! before anything is allocated for it, partial reads validate what they decode, and each failure says
//! what happened. Every case runs in a child process (this test binary run again with just that case)
//! under an address-space cap (`setrlimit(RLIMIT_AS)`, what `prlimit --as` sets), so that an abort or
//! an allocation of what the hostile chunk claims fails the case instead of the machine; the parent
//! also bounds the child's peak resident memory.
//!
//! - a zstd frame cut short, declaring 2^60 bytes, or a 16 GiB bomb of RLE blocks (declaring nothing
//!   or the chunk's size) is `Error::Codec` for a 1x1, a 2x2 and the whole 5x5 read alike;
//! - a chunk declared 3 GiB by the array whose stored bytes are small: a 16-element read allocates
//!   nothing near 3 GiB: `Error::Codec` before allocating for a zstd frame of another size, a gzip
//!   stream too short to make 3 GiB, an uncompressed chunk of the wrong size and a blosc frame of
//!   another size; a zstd frame that really makes the 3 GiB is read with a buffer for the 16 bytes;
//! - a 64 GiB chunk: a read needing all of it is `Error::Memory` (ZARR_ERR_MEMORY), not
//!   `Error::Internal`; a read of its first elements succeeds;
//! - numcodecs `lzma`: an XZ stream of 1 MiB and an ALONE stream declaring 2^60 bytes for a chunk
//!   declared 3 GiB are `Error::Codec` before allocating; a stream inflating to 256 MiB for a 1 MiB
//!   chunk stops at 1 MiB (`Error::Codec`);
//! - a shard of 2^27 inner chunks (a 2 GiB index) stored in 100 bytes is `Error::Codec` before the index
//!   is allocated;
//! - messages: gzip and zlib missing their last trailer byte say so; lz4 whose header claims 2^31-1
//!   bytes says the header claims it.

mod common;

use common::{bytes_codec, sharding_codec, v3_array};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarr::store::filesystem::FilesystemStore;
use zarr::store::Store;
use zarr::{Array, Error};

/// The address-space cap of a case's process: far below what the hostile chunks claim (3, 16 and 64
/// GiB), above what the library legitimately needs (thread stacks and malloc arenas included).
const CAP: u64 = 2 << 30;

/// The largest peak resident memory a case may reach.
const PEAK: u64 = 512 << 20;

/// The environment variable naming the case a child process runs.
const CHILD: &str = "ZARR_HOSTILE_DECODE_CASE";

/// Runs `case` in a child process under [`CAP`] and checks its peak resident memory
/// ([`common::capped::run_capped`]).
fn capped(name: &str, case: fn()) {
    let peak = common::capped::run_capped(CHILD, name, CAP, case);
    assert!(peak < PEAK, "{name}: peak resident memory {} MiB", peak >> 20);
}

/// A fresh, empty directory for one case.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zarr-hostile-decode-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fs_store(root: &Path) -> Arc<dyn Store> {
    Arc::new(FilesystemStore::new(root))
}

/// A zstd frame made by hand: `fcs` the declared content size (8-byte field), then blocks of
/// (type, Block_Size, content) (RFC 8878: 0 raw, 1 RLE, 2 compressed).
fn zstd_frame(fcs: Option<u64>, blocks: &[(u32, u32, &[u8])]) -> Vec<u8> {
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd];
    match fcs {
        Some(n) => {
            // 8-byte content size, a 1 MiB window (a single-segment frame's window is its whole
            // content, which the decoder would refuse for gigabytes)
            f.extend_from_slice(&[0xC0, 0x50]);
            f.extend_from_slice(&n.to_le_bytes());
        }
        None => f.extend_from_slice(&[0x00, 0x50]), // no content size; window descriptor
    }
    for (i, (kind, size, content)) in blocks.iter().enumerate() {
        let h = u32::from(i + 1 == blocks.len()) | (kind << 1) | (size << 3);
        f.extend_from_slice(&h.to_le_bytes()[..3]);
        f.extend_from_slice(content);
    }
    f
}

/// A frame of `n` bytes of `byte` in 128 KiB RLE blocks (4 stored bytes per block), declaring `fcs`.
fn rle_frame(fcs: Option<u64>, n: u64, byte: u8) -> Vec<u8> {
    const B: u64 = 128 << 10;
    let one = [byte];
    let mut blocks: Vec<(u32, u32, &[u8])> = vec![(1, B as u32, &one[..]); (n / B) as usize];
    if n % B != 0 {
        blocks.push((1, (n % B) as u32, &one[..]));
    }
    zstd_frame(fcs, &blocks)
}

fn expect_err<T: std::fmt::Debug>(what: &str, r: zarr::Result<T>, kind: fn(&Error) -> bool, needle: &str) -> String {
    match r {
        Err(e) if kind(&e) && e.to_string().contains(needle) => e.to_string(),
        other => panic!("{what}: expected an error containing {needle:?}, got {other:?}"),
    }
}

fn is_codec(e: &Error) -> bool {
    matches!(e, Error::Codec(_))
}

fn is_memory(e: &Error) -> bool {
    matches!(e, Error::Memory(_))
}

fn read(a: &Array, start: &[u64], count: &[u64], elem: usize) -> zarr::Result<Vec<u8>> {
    let mut out = vec![0u8; count.iter().product::<u64>() as usize * elem];
    a.read_region(start, count, &mut out).map(|()| out)
}

fn zstd_codecs() -> Value {
    json!([bytes_codec("little"), {"name": "zstd", "configuration": {"level": 3, "checksum": false}}])
}

// ---------------------------------------------------------------------------------------------

fn case_partial_reads_validate_zstd() {
    let d = scratch("zstd-partial");
    let store = fs_store(&d);
    let a = Array::create(store.clone(), "a", &v3_array(&[5, 5], &[5, 5], "int32", json!(0), zstd_codecs())).unwrap();
    let values: Vec<u8> = (1..=25i32).flat_map(|v| (v * 1000).to_le_bytes()).collect();
    a.write_region(&[0, 0], &[5, 5], &values).unwrap();
    let good = std::fs::read(d.join("a/c/0/0")).unwrap();
    assert_eq!(read(&a, &[0, 0], &[1, 1], 4).unwrap(), values[..4]);
    let raw100: Vec<u8> = (0..100u8).collect();
    let bombs = [
        ("cut short", good[..good.len() - 3].to_vec(), "cut short"),
        ("declares 2^60 bytes", zstd_frame(Some(1 << 60), &[(0, 100, &raw100)]), "declares 1152921504606846976"),
        // The bombs' 512 KiB of block headers are longer than any encoding of a 100-byte chunk: the
        // stored length is refused before the frame is walked (limits.md, "Chunks and shards").
        ("16 GiB bomb", rle_frame(None, 16 << 30, 0), "longer than any encoding"),
        ("16 GiB bomb declaring 100 bytes", rle_frame(Some(100), 16 << 30, 0), "longer than any encoding"),
        ("frame of 1 byte", zstd_frame(Some(1), &[(0, 1, &[5])]), "declares 1 bytes"),
    ];
    for (what, chunk, needle) in bombs {
        std::fs::write(d.join("a/c/0/0"), &chunk).unwrap();
        for (start, count) in [([0, 0], [1, 1]), ([1, 1], [2, 2]), ([0, 0], [5, 5]), ([4, 4], [1, 1])] {
            expect_err(&format!("{what}: {count:?} read at {start:?}"), read(&a, &start, &count, 4), is_codec, needle);
        }
    }
    std::fs::remove_dir_all(&d).unwrap();
}

fn case_declared_3gib_chunk_small_stored() {
    const N: u64 = 3 << 30;
    let d = scratch("3gib");
    let store = fs_store(&d);
    let make = |name: &str, codecs: Value| {
        Array::create(store.clone(), name, &v3_array(&[N], &[N], "uint8", json!(0), codecs)).unwrap()
    };
    // A zstd frame that really makes 3 GiB (96 KiB of RLE blocks): 16 elements need a 16-byte buffer.
    let z = make("zstd", zstd_codecs());
    std::fs::create_dir_all(d.join("zstd/c")).unwrap();
    std::fs::write(d.join("zstd/c/0"), rle_frame(Some(N), N, 7)).unwrap();
    assert_eq!(read(&z, &[0], &[16], 1).unwrap(), vec![7u8; 16]);
    assert_eq!(read(&z, &[1000], &[16], 1).unwrap(), vec![7u8; 16]);
    // small stored chunks that cannot be 3 GiB: refused before a buffer of 3 GiB is allocated
    let small = zarr::codec::compress::zstd::encode_zstd(&[1u8; 100], 3, false).unwrap();
    std::fs::write(d.join("zstd/c/0"), &small).unwrap();
    expect_err("zstd frame of 100 bytes", read(&z, &[0], &[16], 1), is_codec, "declares 100 bytes");
    std::fs::write(d.join("zstd/c/0"), rle_frame(None, 1 << 20, 7)).unwrap();
    expect_err("zstd frame of 1 MiB, undeclared", read(&z, &[0], &[16], 1), is_codec, "at most");
    let g = make("gzip", json!([bytes_codec("little"), {"name": "gzip", "configuration": {"level": 1}}]));
    std::fs::create_dir_all(d.join("gzip/c")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(1));
    std::io::Write::write_all(&mut gz, &[3u8; 1000]).unwrap();
    std::fs::write(d.join("gzip/c/0"), gz.finish().unwrap()).unwrap();
    expect_err("gzip stream of 1000 bytes", read(&g, &[0], &[16], 1), is_codec, "cannot decode to");
    let b = make("bytes", json!([bytes_codec("little")]));
    std::fs::create_dir_all(d.join("bytes/c")).unwrap();
    std::fs::write(d.join("bytes/c/0"), [1u8; 100]).unwrap();
    expect_err("uncompressed chunk of 100 bytes", read(&b, &[0], &[16], 1), is_codec, "");
    let bl = make(
        "blosc",
        json!([bytes_codec("little"), {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "noshuffle", "typesize": 1, "blocksize": 0}}]),
    );
    std::fs::create_dir_all(d.join("blosc/c")).unwrap();
    let frame = zarr::codec::compress::blosc::blosc_compress(&[1u8; 100], "lz4", 5, zarr::codec::Shuffle::None, 1, 0).unwrap();
    std::fs::write(d.join("blosc/c/0"), frame).unwrap();
    expect_err("blosc frame of 100 bytes", read(&bl, &[0], &[16], 1), is_codec, "declares 100 bytes");
    std::fs::remove_dir_all(&d).unwrap();
}

/// numcodecs `lzma` chunks: a stream that cannot make the declared chunk is refused before the
/// chunk's buffer is allocated; one that inflates past the chunk stops at the chunk's size.
fn case_lzma() {
    use zarr::codec::compress::lzma::LzmaCodec;
    use zarr::codec::BytesToBytesCodec;
    const N: u64 = 3 << 30;
    let d = scratch("lzma");
    let store = fs_store(&d);
    let lzma = |format: i64| {
        json!([bytes_codec("little"), {"name": "numcodecs.lzma", "configuration": {"format": format, "check": -1, "preset": 1, "filters": null}}])
    };
    let xz = LzmaCodec::new(1, -1, Some(1), &Value::Null).unwrap();
    let alone = LzmaCodec::new(2, -1, Some(1), &Value::Null).unwrap();
    // A chunk declared 3 GiB whose stored XZ stream (1 MiB of one byte) cannot make it.
    let a = Array::create(store.clone(), "xz", &v3_array(&[N], &[N], "uint8", json!(0), lzma(1))).unwrap();
    std::fs::create_dir_all(d.join("xz/c")).unwrap();
    std::fs::write(d.join("xz/c/0"), xz.encode(&vec![7u8; 1 << 20]).unwrap()).unwrap();
    expect_err("xz stream of 1 MiB", read(&a, &[0], &[16], 1), is_codec, "cannot decode to");
    // An ALONE stream whose header declares 2^60 bytes, for the same chunk.
    let mut claims = alone.encode(&[5u8; 1000]).unwrap();
    claims[5..13].copy_from_slice(&(1u64 << 60).to_le_bytes());
    let b = Array::create(store.clone(), "alone", &v3_array(&[N], &[N], "uint8", json!(0), lzma(2))).unwrap();
    std::fs::create_dir_all(d.join("alone/c")).unwrap();
    std::fs::write(d.join("alone/c/0"), &claims).unwrap();
    expect_err("alone stream declaring 2^60 bytes", read(&b, &[0], &[16], 1), is_codec, "cannot decode to");
    // A 1 MiB chunk whose stream inflates to 256 MiB: decoding stops at the chunk's size.
    const M: u64 = 1 << 20;
    let c = Array::create(store.clone(), "bomb", &v3_array(&[M], &[M], "uint8", json!(0), lzma(1))).unwrap();
    std::fs::create_dir_all(d.join("bomb/c")).unwrap();
    let bomb = xz.encode(&vec![0u8; 256 << 20]).unwrap();
    assert!(bomb.len() < 64 << 10, "{} bytes", bomb.len());
    std::fs::write(d.join("bomb/c/0"), &bomb).unwrap();
    expect_err("xz stream of 256 MiB for a 1 MiB chunk", read(&c, &[0], &[16], 1), is_codec, "more than");
    // ... and a stream of the chunk's size reads.
    std::fs::write(d.join("bomb/c/0"), xz.encode(&vec![3u8; M as usize]).unwrap()).unwrap();
    assert_eq!(read(&c, &[M - 16], &[16], 1).unwrap(), vec![3u8; 16]);
    std::fs::remove_dir_all(&d).unwrap();
}

fn case_64gib_chunk() {
    const N: u64 = 64 << 30;
    let d = scratch("64gib");
    let store = fs_store(&d);
    let a = Array::create(store.clone(), "a", &v3_array(&[N], &[N], "uint8", json!(0), zstd_codecs())).unwrap();
    std::fs::create_dir_all(d.join("a/c")).unwrap();
    std::fs::write(d.join("a/c/0"), rle_frame(Some(N), N, 9)).unwrap();
    assert_eq!(read(&a, &[0], &[16], 1).unwrap(), vec![9u8; 16]);
    // the last element needs the whole chunk decoded: more than the process may map
    let m = expect_err("1 element at the end", read(&a, &[N - 1], &[1], 1), is_memory, "cannot allocate");
    assert_eq!(Error::Memory(m).status(), zarr::status::ZARR_ERR_MEMORY);
    let mut whole: Vec<u8> = Vec::new();
    assert!(whole.try_reserve_exact(N as usize).is_err(), "the cap holds");
    std::fs::remove_dir_all(&d).unwrap();
}

fn case_shard_of_2_27_inner_chunks() {
    const N: u64 = 1 << 27;
    let d = scratch("shard");
    let store = fs_store(&d);
    let codecs = json!([sharding_codec(&[1], json!([bytes_codec("little")]), "end")]);
    let a = Array::create(store.clone(), "a", &v3_array(&[N], &[N], "uint8", json!(0), codecs)).unwrap();
    std::fs::create_dir_all(d.join("a/c")).unwrap();
    std::fs::write(d.join("a/c/0"), [0u8; 100]).unwrap();
    for (start, count) in [(0, 1), (N - 16, 16), (0, 4096)] {
        expect_err(&format!("{count} at {start}"), read(&a, &[start], &[count], 1), is_codec, "shorter than its");
    }
    std::fs::remove_dir_all(&d).unwrap();
}

fn case_messages() {
    let d = scratch("messages");
    let store = fs_store(&d);
    let values: Vec<u8> = (0..100u8).map(|i| i / 3).collect();
    // gzip (v3) and zlib (v2) streams missing their last trailer byte
    let g = Array::create(
        store.clone(),
        "gzip",
        &v3_array(&[100], &[100], "uint8", json!(0), json!([bytes_codec("little"), {"name": "gzip", "configuration": {"level": 5}}])),
    )
    .unwrap();
    g.write_region(&[0], &[100], &values).unwrap();
    let p = d.join("gzip/c/0");
    let stored = std::fs::read(&p).unwrap();
    std::fs::write(&p, &stored[..stored.len() - 1]).unwrap();
    let m = expect_err("gzip without its last byte", read(&g, &[0], &[100], 1), is_codec, "trailer");
    assert!(m.contains("gzip: truncated stream") && m.contains("1 of its 8 trailer bytes (CRC-32 and size) is missing") && !m.contains("more than"), "{m}");
    expect_err("gzip without its last byte, partial", read(&g, &[3], &[2], 1), is_codec, "trailer");
    let v2 = |name: &str, compressor: Value| {
        let doc = json!({"zarr_format": 2, "shape": [100], "chunks": [100], "dtype": "|u1", "compressor": compressor,
                         "fill_value": 0, "order": "C", "filters": null});
        std::fs::create_dir_all(d.join(name)).unwrap();
        std::fs::write(d.join(name).join(".zarray"), doc.to_string()).unwrap();
        let a = Array::open(store.clone(), name, true).unwrap();
        a.write_region(&[0], &[100], &values).unwrap();
        a
    };
    let z = v2("zlib", json!({"id": "zlib", "level": 5}));
    let p = d.join("zlib/0");
    let stored = std::fs::read(&p).unwrap();
    std::fs::write(&p, &stored[..stored.len() - 1]).unwrap();
    let m = expect_err("zlib without its last byte", read(&z, &[0], &[100], 1), is_codec, "trailer");
    assert!(m.contains("zlib: truncated stream") && m.contains("1 of its 4 trailer bytes (Adler-32) is missing"), "{m}");
    // lz4 whose header claims 2^31-1 bytes
    let l = v2("lz4", json!({"id": "lz4", "acceleration": 1}));
    let p = d.join("lz4/0");
    let mut stored = std::fs::read(&p).unwrap();
    stored[..4].copy_from_slice(&(i32::MAX as u32).to_le_bytes());
    std::fs::write(&p, &stored).unwrap();
    let m = expect_err("lz4 header claiming 2^31-1", read(&l, &[0], &[100], 1), is_codec, "announces 2147483647");
    assert!(!m.contains("decoded 2147483647"), "{m}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn partial_reads_validate_zstd_frames() {
    capped("partial_reads_validate_zstd_frames", case_partial_reads_validate_zstd);
}

#[test]
fn declared_3gib_chunk_small_stored_allocates_nothing_large() {
    capped("declared_3gib_chunk_small_stored_allocates_nothing_large", case_declared_3gib_chunk_small_stored);
}

#[test]
fn lzma_chunks_are_bounded_by_their_declared_size() {
    capped("lzma_chunks_are_bounded_by_their_declared_size", case_lzma);
}

#[test]
fn chunk_of_64gib_is_a_memory_error() {
    capped("chunk_of_64gib_is_a_memory_error", case_64gib_chunk);
}

#[test]
fn shard_of_2_27_inner_chunks_checks_its_index_first() {
    capped("shard_of_2_27_inner_chunks_checks_its_index_first", case_shard_of_2_27_inner_chunks);
}

#[test]
fn decoder_messages_say_what_happened() {
    capped("decoder_messages_say_what_happened", case_messages);
}
