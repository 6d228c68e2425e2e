//! A generator of zero-copy Rust codecs from Kafka's JSON message schemas.
//!
//! The pipeline runs in one direction, one module per stage:
//!
//! 1. [`parse`]: Kafka's schema dialect, JSON with `//` comments, into a tree
//!    that remembers positions.
//! 2. [`model`]: a validated, immutable model of each file and of the set.
//! 3. [`ir`]: the model lowered per message, with impossible version branches
//!    dropped.
//! 4. [`emit`]: Rust tokens built with `quote`, formatted by `prettyplease`.
//!
//! [`Config`] is the entry point for a build script, in the style of
//! prost-build. [`error_codes`] generates the `ErrorCode` enum from a table
//! of Kafka's error codes.
//!
//! The `cli` feature (off by default) builds the `kafka-codegen` command
//! line tool; the library alone does not depend on clap.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::path::PathBuf;

mod config;
pub mod diagnostics;
pub mod diff;
pub mod emit;
pub mod error_codes;
pub mod ir;
pub mod model;
pub mod parse;

pub use config::{Config, Summary, MANIFEST};
pub use emit::Layout;

/// Everything that can stop generation.
#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// A file or directory could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Generated code did not parse; a bug in the generator.
    #[error(transparent)]
    Emit(emit::EmitError),
    /// No output directory was set and `OUT_DIR` is not in the environment.
    #[error("no output directory: call `out_dir` or run from a build script")]
    NoOutDir,
    /// The schemas have errors; each is listed, one per line.
    #[error("{} schema error(s):\n{}", .0.len(), .0.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n"))]
    Schema(Vec<diagnostics::Located>),
}
