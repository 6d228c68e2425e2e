//! Generates the message types from the project's schemas in `messages/`.
//!
//! The `client-apis` and `controller-apis` features choose which APIs are
//! generated, by the listener that serves them; with both (`all-apis`, the
//! default) everything is. Headers and data schemas are always generated.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    println!("cargo::rustc-check-cfg=cfg(kafka_apis)");
    println!("cargo::rustc-check-cfg=cfg(kafka_metadata)");
    let client = std::env::var_os("CARGO_FEATURE_CLIENT_APIS").is_some();
    let controller = std::env::var_os("CARGO_FEATURE_CONTROLLER_APIS").is_some();

    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("../messages");
    let mut config = kafka_codegen::Config::new();
    config
        .schema_dir(&schemas)
        .runtime_path("crate::runtime")
        .metadata_records(controller);
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
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
