//! `kafka-codegen`: check Kafka schemas and generate Rust codecs from them.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kafka_codegen::model::SchemaSet;
use kafka_codegen::{Config, Layout};

#[derive(Parser)]
#[command(
    name = "kafka-codegen",
    version,
    about = "Generates Rust codecs from Kafka's JSON message schemas"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate Rust code from schema files or directories.
    Generate {
        /// Schema files or directories, searched recursively for .json files.
        #[arg(required = true)]
        schemas: Vec<PathBuf>,
        /// Directory to write the generated files into.
        #[arg(long)]
        out: PathBuf,
        /// Path of the runtime module the generated code uses.
        #[arg(long, default_value = "::kafka_wire::runtime")]
        runtime: String,
        /// Generate only these messages (with or without Request/Response suffix).
        #[arg(long = "include", value_delimiter = ',')]
        include: Vec<String>,
        /// Write `include!`-based modules for OUT_DIR instead of plain module files.
        #[arg(long)]
        out_dir_layout: bool,
        /// Treat warnings as errors.
        #[arg(long)]
        strict: bool,
        /// Also generate the JSON form (needs kafka-wire's `json` feature).
        #[arg(long)]
        json: bool,
    },
    /// Validate schemas, printing every error and warning.
    Check {
        /// Schema files or directories, checked together as one set.
        #[arg(required = true)]
        schemas: Vec<PathBuf>,
        /// Treat warnings as errors.
        #[arg(long)]
        strict: bool,
    },
    /// Compare two schema sets and report which changes break the wire.
    ///
    /// Exits 1 on any breaking change or removed message, or when a schema
    /// fails to load; 0 otherwise.
    Diff {
        /// The old schemas: a file or a directory.
        old: PathBuf,
        /// The new schemas: a file or a directory.
        new: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = kafka_codegen::diff::Format::Text)]
        format: kafka_codegen::diff::Format,
        /// Leave files that fail to load out of the comparison instead of stopping.
        #[arg(long)]
        skip_invalid: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Check { schemas, strict } => check(&schemas, strict),
        Command::Diff {
            old,
            new,
            format,
            skip_invalid,
        } => ExitCode::from(kafka_codegen::diff::run(
            &old,
            &new,
            format,
            skip_invalid,
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        )),
        Command::Generate {
            schemas,
            out,
            runtime,
            include,
            out_dir_layout,
            strict,
            json,
        } => {
            let mut config = Config::new();
            for path in &schemas {
                config.schema_dir(path);
            }
            config
                .out_dir(&out)
                .runtime_path(runtime)
                .strict(strict)
                .json_form(json)
                .layout(if out_dir_layout {
                    Layout::OutDir
                } else {
                    Layout::Files
                });
            if !include.is_empty() {
                config.include(include);
            }
            match config.compile() {
                Ok(summary) => {
                    for warning in &summary.warnings {
                        eprintln!("{warning}");
                    }
                    println!(
                        "{} schemas, {} APIs, {} versions, {} files written to {}",
                        summary.schemas,
                        summary.apis,
                        summary.versions,
                        summary.files,
                        out.display()
                    );
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("error: {error}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn check(schemas: &[PathBuf], strict: bool) -> ExitCode {
    match SchemaSet::load(schemas) {
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
        Ok(set) => {
            for diagnostic in &set.diagnostics {
                eprintln!("{diagnostic}");
            }
            let errors = set.diagnostics.iter().filter(|d| d.is_error()).count();
            let warnings = set.diagnostics.len() - errors;
            eprintln!(
                "{} schemas checked: {errors} error(s), {warnings} warning(s)",
                set.schemas.len()
            );
            if errors > 0 || (strict && warnings > 0) {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
    }
}
