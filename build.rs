//! Build script: generates `include/zarr.h` with cbindgen and sets the shared library's soname.
//!
//! The header is generated into `$OUT_DIR/zarr.h` and copied over `include/zarr.h` only when the bytes
//! differ. The header found on disk before this run is kept as `$OUT_DIR/zarr.h.before`, so the test
//! `ffi::tests::committed_header_is_current` fails on a fresh clone whose committed header is stale.

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let major: u32 = env::var("CARGO_PKG_VERSION_MAJOR").unwrap().parse().unwrap();
    let minor: u32 = env::var("CARGO_PKG_VERSION_MINOR").unwrap().parse().unwrap();
    let patch: u32 = env::var("CARGO_PKG_VERSION_PATCH").unwrap().parse().unwrap();

    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=include/zarr.h");
    println!("cargo:rerun-if-changed=build.rs");

    // Versioned soname for the cdylib: libzarr.so.<major> (0.x series: libzarr.so.0).
    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libzarr.so.{major}");
    }

    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    config.after_includes = Some(format!(
        "\n/** libzarr version of this header (the library reports its own through zarr_version()). */\n\
         #define ZARR_VERSION_MAJOR {major}\n\
         #define ZARR_VERSION_MINOR {minor}\n\
         #define ZARR_VERSION_PATCH {patch}\n\
         /** major * 10000 + minor * 100 + patch */\n\
         #define ZARR_VERSION_NUMBER {}\n\
         #define ZARR_VERSION_STRING \"{major}.{minor}.{patch}\"\n",
        major * 10000 + minor * 100 + patch
    ));
    let bindings = match cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
    {
        Ok(b) => b,
        Err(e) => {
            // A syntax error in the sources: let rustc report it properly.
            println!("cargo:warning=cbindgen could not generate zarr.h: {e}");
            return;
        }
    };
    let generated = out_dir.join("zarr.h");
    let mut text = Vec::new();
    bindings.write(&mut text);
    let text = parenthesize_negative_defines(&String::from_utf8(text).expect("header is UTF-8"));
    fs::write(&generated, text.as_bytes()).expect("write generated header");

    let committed = crate_dir.join("include").join("zarr.h");
    let before = fs::read(&committed).unwrap_or_default();
    fs::write(out_dir.join("zarr.h.before"), &before).expect("write zarr.h.before");
    let new = fs::read(&generated).expect("read generated header");
    if before != new {
        fs::create_dir_all(crate_dir.join("include")).expect("create include/");
        fs::write(&committed, &new).expect("write include/zarr.h");
    }
}

/// `#define ZARR_ERR_X -1` -> `#define ZARR_ERR_X (-1)`, so the macros are safe in any expression.
fn parenthesize_negative_defines(header: &str) -> String {
    header
        .lines()
        .map(|line| {
            let mut parts = line.splitn(3, ' ');
            match (parts.next(), parts.next(), parts.next()) {
                (Some("#define"), Some(name), Some(value))
                    if value.starts_with('-') && value[1..].bytes().all(|b| b.is_ascii_digit()) =>
                {
                    format!("#define {name} ({value})")
                }
                _ => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}
