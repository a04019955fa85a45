//! Test support for the numcodecs codecs: the vectors numcodecs wrote (`tests/vectors/numcodecs/`,
//! produced by `tools/numcodecs_vectors.py`) and a check that numcodecs decodes what libzarr wrote.

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The bytes of one file of `tests/vectors/numcodecs/`, compiled into the test binary.
macro_rules! vector {
    ($name:literal) => {
        &include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/numcodecs/", $name))[..]
    };
}
pub(crate) use vector;

/// Decoding by numcodecs (run in `python3`). Exit status 77: numcodecs is not importable.
const DECODE_PY: &str = r#"
import sys, json
try:
    import numcodecs
except Exception:
    sys.exit(77)
exp = open(sys.argv[1], "rb").read()
for cfg, path in zip(sys.argv[2::2], sys.argv[3::2]):
    out = bytes(numcodecs.get_codec(json.loads(cfg)).decode(open(path, "rb").read()))
    if out != exp:
        print("numcodecs %s decoded %d bytes that differ from the %d expected" % (cfg, len(out), len(exp)))
        sys.exit(1)
"#;

/// INTEROP CHECK, SKIPPED WHEN UNAVAILABLE: asks the real numcodecs (one `python3 -c` run) to decode
/// each `(configuration, encoded)` case and compares with `expected`. When python3 or numcodecs is
/// missing it prints a note and returns (the test passes); any other failure fails the test.
pub fn numcodecs_decodes(cases: &[(Value, Vec<u8>)], expected: &[u8]) {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "libzarr-numcodecs-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let exp = dir.join("expected.bin");
    std::fs::write(&exp, expected).unwrap();
    let mut cmd = Command::new("python3");
    cmd.arg("-c").arg(DECODE_PY).arg(&exp);
    for (i, (cfg, encoded)) in cases.iter().enumerate() {
        let path = dir.join(format!("{i}.bin"));
        std::fs::write(&path, encoded).unwrap();
        cmd.arg(cfg.to_string()).arg(path);
    }
    let run = cmd.output();
    let _ = std::fs::remove_dir_all(&dir);
    let what = cases.first().map(|c| c.0["id"].to_string()).unwrap_or_default();
    match run {
        Err(e) => eprintln!("SKIPPED numcodecs interop check ({what}): cannot run python3 ({e})"),
        Ok(o) if o.status.code() == Some(77) => {
            eprintln!("SKIPPED numcodecs interop check ({what}): python3 cannot import numcodecs")
        }
        Ok(o) => assert!(
            o.status.success(),
            "numcodecs failed to decode libzarr's output: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    }
}

/// Compressible test data: the little-endian u32 values `i / 7` for `i` in `0..n`.
pub fn ramp(n: u32) -> Vec<u8> {
    (0..n).flat_map(|i| (i / 7).to_le_bytes()).collect()
}
