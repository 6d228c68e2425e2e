//! Schema evolution: which changes between two schema sets break the wire.
//!
//! Behind the `diff` feature (which `cli` turns on), so that a build script
//! that only generates code builds no serde.
//!
//! [`diff_sets`] matches messages by name (and, for a request or response
//! that disappeared under one name, by API key under another), then compares
//! each pair version by version. For every version that both sets know, the
//! wire shape of the message (its untagged fields in order, with type,
//! nullability and compactness, and its tagged fields by tag) is compared
//! field by field, recursing into structs. Findings are grouped per field and
//! per kind of change into version ranges.
//!
//! Every [`Change`] carries a [`Verdict`]:
//!
//! - [`Verdict::Breaking`]: the bytes of a version both sets know changed
//!   (or a version went away), so old and new peers disagree.
//! - [`Verdict::Compatible`]: reported, but peers still agree: new versions,
//!   fields only in new versions, new tagged fields, renames, defaults,
//!   documentation.
//! - [`Verdict::Removed`] and [`Verdict::Added`]: whole messages.
//!
//! A CI job fails the build when [`DiffSummary::fails`] is true, that is on any
//! breaking change or removed message.
//!
//! ```no_run
//! use kafka_codegen::diff::{diff_sets, DiffSummary};
//! use kafka_codegen::model::SchemaSet;
//!
//! # fn main() -> Result<(), kafka_codegen::CodegenError> {
//! let old = SchemaSet::load(&["old/message"])?;
//! let new = SchemaSet::load(&["new/message"])?;
//! let changes = diff_sets(&old, &new);
//! for change in &changes {
//!     println!("{change}");
//! }
//! assert!(!DiffSummary::of(&changes).fails());
//! # Ok(())
//! # }
//! ```

mod cli;
mod compare;
mod report;
mod shape;
#[cfg(test)]
mod tests;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use cli::{run, Format};
pub use compare::{diff_sets, unloadable_files};
pub use report::{to_json, DiffSummary};

/// How a change affects peers speaking the versions both sets know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The bytes of a shared version changed, or a version was removed.
    Breaking,
    /// Peers still agree on every shared version.
    Compatible,
    /// A whole message disappeared.
    Removed,
    /// A whole message appeared.
    Added,
}

impl Verdict {
    /// The spelling used in text and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Breaking => "breaking",
            Verdict::Compatible => "compatible",
            Verdict::Removed => "removed",
            Verdict::Added => "added",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What changed. Each kind has one fixed [`Verdict`], see [`ChangeKind::verdict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// A field's type changed in a shared version.
    TypeChanged,
    /// A field appeared in a version that already existed.
    FieldAdded,
    /// A field disappeared from a version that still exists.
    FieldRemoved,
    /// Fields present in both sets are encoded in another order.
    FieldOrderChanged,
    /// A field became nullable, or stopped being nullable, in a shared version.
    NullabilityChanged,
    /// A field moved between the tagged section and the untagged fields.
    TaggingChanged,
    /// A tagged field's tag number changed.
    TagChanged,
    /// A new field took a tag an old field used in the same version.
    TagReused,
    /// A shared version became flexible or stopped being flexible, for the
    /// whole message or for one field's encoding.
    FlexibleVersionsChanged,
    /// The message's `apiKey` changed.
    ApiKeyChanged,
    /// The message's `type` changed.
    MessageTypeChanged,
    /// A valid version is no longer valid.
    VersionRemoved,
    /// The shape of a shared version changed in a way no other kind names
    /// (a safety net; not expected in practice).
    ShapeChanged,
    /// A new version became valid.
    VersionAdded,
    /// A version stopped or started being marked unstable
    /// (`latestVersionUnstable`), or a new version is unstable: what a peer
    /// advertises by default changes, the wire does not.
    StabilityChanged,
    /// A new field exists only in versions the old set does not know.
    FieldAddedInNewVersion,
    /// A new tagged field, with a tag unused in the old schema, in a shared version.
    TaggedFieldAdded,
    /// A field was renamed and its wire shape is identical.
    FieldRenamed,
    /// A field's struct type was renamed and its wire shape is identical.
    StructRenamed,
    /// A field's `default` changed.
    DefaultChanged,
    /// A field's `about` text changed.
    AboutChanged,
    /// A field's `ignorable` flag changed.
    IgnorableChanged,
    /// A field's `entityType` changed.
    EntityTypeChanged,
    /// A field's `mapKey` flag changed.
    MapKeyChanged,
    /// A request or response kept its API key under a new name.
    ApiRenamed,
    /// A message exists only in the new set.
    MessageAdded,
    /// A message exists only in the old set.
    MessageRemoved,
}

impl ChangeKind {
    /// The kebab-case spelling used in text and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::TypeChanged => "type-changed",
            ChangeKind::FieldAdded => "field-added",
            ChangeKind::FieldRemoved => "field-removed",
            ChangeKind::FieldOrderChanged => "field-order-changed",
            ChangeKind::NullabilityChanged => "nullability-changed",
            ChangeKind::TaggingChanged => "tagging-changed",
            ChangeKind::TagChanged => "tag-changed",
            ChangeKind::TagReused => "tag-reused",
            ChangeKind::FlexibleVersionsChanged => "flexible-versions-changed",
            ChangeKind::ApiKeyChanged => "api-key-changed",
            ChangeKind::MessageTypeChanged => "message-type-changed",
            ChangeKind::VersionRemoved => "version-removed",
            ChangeKind::ShapeChanged => "shape-changed",
            ChangeKind::VersionAdded => "version-added",
            ChangeKind::StabilityChanged => "stability-changed",
            ChangeKind::FieldAddedInNewVersion => "field-added-in-new-version",
            ChangeKind::TaggedFieldAdded => "tagged-field-added",
            ChangeKind::FieldRenamed => "field-renamed",
            ChangeKind::StructRenamed => "struct-renamed",
            ChangeKind::DefaultChanged => "default-changed",
            ChangeKind::AboutChanged => "about-changed",
            ChangeKind::IgnorableChanged => "ignorable-changed",
            ChangeKind::EntityTypeChanged => "entity-type-changed",
            ChangeKind::MapKeyChanged => "map-key-changed",
            ChangeKind::ApiRenamed => "api-renamed",
            ChangeKind::MessageAdded => "message-added",
            ChangeKind::MessageRemoved => "message-removed",
        }
    }

    /// The verdict every change of this kind gets.
    pub fn verdict(self) -> Verdict {
        match self {
            ChangeKind::TypeChanged
            | ChangeKind::FieldAdded
            | ChangeKind::FieldRemoved
            | ChangeKind::FieldOrderChanged
            | ChangeKind::NullabilityChanged
            | ChangeKind::TaggingChanged
            | ChangeKind::TagChanged
            | ChangeKind::TagReused
            | ChangeKind::FlexibleVersionsChanged
            | ChangeKind::ApiKeyChanged
            | ChangeKind::MessageTypeChanged
            | ChangeKind::VersionRemoved
            | ChangeKind::ShapeChanged => Verdict::Breaking,
            ChangeKind::VersionAdded
            | ChangeKind::StabilityChanged
            | ChangeKind::FieldAddedInNewVersion
            | ChangeKind::TaggedFieldAdded
            | ChangeKind::FieldRenamed
            | ChangeKind::StructRenamed
            | ChangeKind::DefaultChanged
            | ChangeKind::AboutChanged
            | ChangeKind::IgnorableChanged
            | ChangeKind::EntityTypeChanged
            | ChangeKind::MapKeyChanged
            | ChangeKind::ApiRenamed => Verdict::Compatible,
            ChangeKind::MessageAdded => Verdict::Added,
            ChangeKind::MessageRemoved => Verdict::Removed,
        }
    }
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One reported change. Its [`Display`](fmt::Display) is the text line
/// `<file>: <verdict> <change>: <message>[.<path>] (versions X): <detail>`,
/// without the versions part when `versions` is `None`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The file name (no directory) of the new schema, or of the old one
    /// when the message was removed.
    pub file: String,
    /// The message name in the new set (the old name for removed messages).
    pub message: String,
    /// The dotted field path inside the message, such as
    /// `Topics.Partitions.ReplicaId`, or `None` for message-level changes.
    /// Prefixes use the new names; removed and renamed fields end in their old name.
    pub path: Option<String>,
    /// The versions the verdict applies to, such as `0-1`, `3` or `0-1, 4`;
    /// `None` when the change concerns no version both sets know.
    pub versions: Option<String>,
    /// How the change affects peers.
    pub verdict: Verdict,
    /// What kind of change it is.
    pub change: ChangeKind,
    /// One human sentence.
    pub detail: String,
}

/// Everything that can stop a comparison.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// A schema set could not be read.
    #[error("{side} schemas: {source}")]
    Load {
        /// `old` or `new`.
        side: &'static str,
        /// The underlying error.
        #[source]
        source: crate::error::CodegenError,
    },
    /// The changes could not be written as JSON.
    #[error("cannot write JSON: {0}")]
    Json(#[from] serde_json::Error),
}
