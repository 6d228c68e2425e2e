//! The errors that stop generation, below every stage of the pipeline, so
//! that each stage can return them without importing a later one.
//!
//! Faults in the schemas themselves are [`Located`] diagnostics, with file,
//! line and column; [`CodegenError::Schema`] carries them all.

use std::path::PathBuf;

use crate::diagnostics::Located;

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
    Emit(EmitError),
    /// No output directory was set and `OUT_DIR` is not in the environment.
    #[error("no output directory: call `out_dir` or run from a build script")]
    NoOutDir,
    /// The schemas have errors; each is listed, one per line.
    #[error("{} schema error(s):\n{}", .0.len(), .0.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n"))]
    Schema(Vec<Located>),
}

/// An emitted token stream that did not parse as Rust: a bug in the emitter.
#[derive(Debug, thiserror::Error)]
#[error("generated code for {file} does not parse: {message}")]
pub struct EmitError {
    /// The file being generated.
    pub file: String,
    /// The parser's message.
    pub message: String,
}
