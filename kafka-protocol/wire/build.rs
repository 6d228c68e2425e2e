//! kafka-wire ships its generated messages (`src/messages/`) and error
//! codes (`src/error_code.rs`), so a build compiles no generator. This
//! script only sets two `cfg`s for the features, and, with the opt-in
//! `regenerate` feature, generates both again from `messages/` and
//! `error_codes.tsv` into `OUT_DIR`, which the crate then includes instead.
//!
//! - `kafka_apis`: some API's feature is on, so `ApiKey`, the body enums
//!   and what is built on them (frames) have a variant to hold. Every
//!   feature is an API's but those in `features.rs`, which
//!   `tests/features.rs` keeps so; the list of APIs itself is the schemas'.
//! - `kafka_metadata`: the KRaft metadata records, with `metadata-records`.

#[path = "features.rs"]
mod features;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(kafka_apis)");
    println!("cargo::rustc-check-cfg=cfg(kafka_metadata)");
    // The features that are on, as Cargo.toml spells them (cargo 1.85 and
    // later set this).
    let on = std::env::var("CARGO_CFG_FEATURE").unwrap_or_default();
    let on: Vec<&str> = on.split(',').filter(|f| !f.is_empty()).collect();
    if on.iter().any(|f| !features::NOT_APIS.contains(f)) {
        println!("cargo::rustc-cfg=kafka_apis");
    }
    if on.contains(&"metadata-records") {
        println!("cargo::rustc-cfg=kafka_metadata");
    }
    #[cfg(feature = "regenerate")]
    if let Err(error) = regenerate::run() {
        eprintln!("{error}");
        std::process::exit(1);
    }
}

// The paths of the shipped source are for the test that checks it.
#[cfg(feature = "regenerate")]
#[path = "codegen.rs"]
#[allow(dead_code)]
mod codegen;

#[cfg(feature = "regenerate")]
mod regenerate {
    use std::path::{Path, PathBuf};

    use kafka_codegen::Layout;

    use super::codegen;

    /// Generates the messages and the error codes into `OUT_DIR`.
    pub fn run() -> Result<(), String> {
        let package = Path::new(env!("CARGO_MANIFEST_DIR"));
        let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
        let summary = codegen::config(package, Layout::OutDir)
            .out_dir(&out_dir)
            .compile()
            .map_err(|e| e.to_string())?;
        for warning in summary.warnings {
            println!("cargo::warning={warning}");
        }
        println!(
            "cargo::rerun-if-changed={}",
            package.join("messages").display()
        );
        let table = package.join(codegen::ERROR_CODES);
        println!("cargo::rerun-if-changed={}", table.display());
        kafka_codegen::error_codes::compile(&table, &out_dir.join("error_code.rs"))
            .map_err(|e| e.to_string())?;
        Ok(())
    }
}
