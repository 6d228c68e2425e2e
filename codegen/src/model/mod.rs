//! Stage 2: the validated model of schema files.
//!
//! Everything here is immutable once built: a [`SchemaSet`] is made of
//! [`Schema`]s that passed every per-file and cross-file check.

mod build;
mod docs;
mod set;
mod spec;
mod types;
mod versions;

pub use build::{build_schema, decode_uuid};
pub use docs::undocumented;
pub use set::{load_file, SchemaSet, SourceFile};
pub use spec::{DefaultValue, Field, MessageKind, Schema, StructDef};
pub use types::{FieldType, Scalar};
pub use versions::Versions;
