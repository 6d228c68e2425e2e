//! Stage 2: the validated model of schema files.
//!
//! Everything here is immutable once built: a [`SchemaSet`] is made of
//! [`Schema`]s that passed every per-file and cross-file check.

mod build;
mod docs;
mod set;
mod spec;
mod types;

pub use build::{build_schema, decode_uuid};
pub use docs::undocumented;
pub use set::{load_file, SchemaSet, SourceFile};
pub use spec::{Field, Schema, StructDef};
pub use types::FieldType;

// The leaf types, which the IR shares, under the names the model has
// always given them.
pub use crate::primitives::{DefaultValue, MessageKind, Scalar, Versions};
