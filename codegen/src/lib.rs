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
//! Below every stage, [`diagnostics`] locates faults in the schemas by file,
//! line and column, [`CodegenError`] is everything that stops generation,
//! and [`primitives`] holds the leaf values (version ranges, scalar types,
//! message kinds, field defaults) that the model and the IR share, so that
//! the emitters read them without reaching into the model; none of them
//! imports a stage.
//!
//! [`Config`] is the entry point for a build script, in the style of
//! prost-build. [`error_codes`] generates the `ErrorCode` enum from a table
//! of Kafka's error codes: a generator of its own beside [`emit`], which
//! imports nothing from it; what both need to write Rust source
//! (identifiers, `#[doc]` attributes, parsing and formatting a file) is in
//! the private `rust_source` module, below both.
//!
//! Two features are off by default, so that a build script builds neither
//! clap nor serde:
//!
//! - `diff`: the `diff` module, which compares two schema sets and says
//!   which changes break the wire, in text or JSON (serde_json);
//! - `cli`: the `kafka-codegen` command line tool (clap), with `diff`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
pub mod diagnostics;
#[cfg(feature = "diff")]
pub mod diff;
pub mod emit;
mod error;
pub mod error_codes;
pub mod ir;
pub mod model;
pub mod parse;
pub mod primitives;
mod rust_source;

pub use config::{Config, GenerationSummary, MANIFEST};
pub use emit::Layout;
pub use error::CodegenError;
