//! Generates this crate's messages from its own schema directory, the way a
//! user's build script would.

use std::process::ExitCode;

fn main() -> ExitCode {
    match kafka_codegen::Config::new()
        .schema_dir("schemas")
        .json_form(true)
        .compile()
    {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
