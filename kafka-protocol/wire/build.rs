//! Generates the message types from the project's schemas in `messages/`,
//! and the `ErrorCode` enum from `error_codes.tsv`.
//!
//! `messages` in this package is a link to the workspace's `messages/`, the
//! one source of truth; `cargo package` copies the files it links to, so
//! the published package builds from its own contents.
//!
//! The `client-apis` and `controller-apis` features choose which APIs are
//! generated, by the listener that serves them; with both (`all-apis`, the
//! default) everything is. Headers and data schemas are always generated.
//! The `json` feature adds the JSON form.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    println!("cargo::rustc-check-cfg=cfg(kafka_apis)");
    println!("cargo::rustc-check-cfg=cfg(kafka_metadata)");
    let client = std::env::var_os("CARGO_FEATURE_CLIENT_APIS").is_some();
    let controller = std::env::var_os("CARGO_FEATURE_CONTROLLER_APIS").is_some();
    let json = std::env::var_os("CARGO_FEATURE_JSON").is_some();

    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    let schemas = package.join("messages");
    let mut config = kafka_codegen::Config::new();
    config
        .schema_dir(&schemas)
        .runtime_path("crate::runtime")
        .metadata_records(controller)
        .json_form(json)
        .require_docs(true);
    if !(client && controller) {
        let listeners = [("broker", client), ("controller", controller)];
        config.listeners(listeners.into_iter().filter(|(_, on)| *on).map(|(l, _)| l));
    }
    if client || controller {
        println!("cargo::rustc-cfg=kafka_apis");
    }
    if controller {
        println!("cargo::rustc-cfg=kafka_metadata");
    }
    match config.compile() {
        Ok(summary) => {
            for warning in summary.warnings {
                println!("cargo::warning={warning}");
            }
        }
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    }
    let table = package.join("error_codes.tsv");
    println!("cargo::rerun-if-changed={}", table.display());
    let Some(out_dir) = std::env::var_os("OUT_DIR") else {
        eprintln!("OUT_DIR is not set: run this as a build script");
        return ExitCode::FAILURE;
    };
    let out = Path::new(&out_dir).join("error_code.rs");
    if let Err(error) = kafka_codegen::error_codes::compile(&table, &out) {
        eprintln!("{error}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
