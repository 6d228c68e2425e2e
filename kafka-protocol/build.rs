//! Generates the message types from the project's schemas in `messages/`.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("../messages");
    let result = kafka_codegen::Config::new()
        .schema_dir(&schemas)
        .runtime_path("crate::runtime")
        .compile();
    match result {
        Ok(summary) => {
            for warning in summary.warnings {
                println!("cargo:warning={warning}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
