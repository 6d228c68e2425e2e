//! The validated, immutable model of one schema file.

use std::path::PathBuf;

use super::types::FieldType;
use crate::diagnostics::Span;
use crate::primitives::{DefaultValue, MessageKind, Versions};

/// One field of a message or struct.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The schema's name, such as `ReplicaId`.
    pub name: String,
    /// Where the field's object starts.
    pub span: Span,
    /// Its type.
    pub ty: FieldType,
    /// The versions in which it exists.
    pub versions: Versions,
    /// The versions in which it may be null.
    pub nullable_versions: Versions,
    /// The versions in which it is a tagged field.
    pub tagged_versions: Versions,
    /// Its tag, when tagged.
    pub tag: Option<u32>,
    /// Whether a non-default value may be dropped in versions that lack it.
    pub ignorable: bool,
    /// The explicit default.
    pub default: DefaultValue,
    /// The `default` key exactly as written, for tools that compare schemas.
    pub default_text: Option<String>,
    /// What kind of entity the value names, such as `topicName`.
    pub entity_type: Option<String>,
    /// Whether this field is the key of a map-like array.
    pub map_key: bool,
    /// Whether the schema asks for a zero-copy slice.
    pub zero_copy: bool,
    /// A field-level override of the message's flexible versions.
    pub flexible_versions: Option<Versions>,
    /// Documentation.
    pub about: Option<String>,
}

impl Field {
    /// True when the field is tagged in `version`.
    pub fn is_tagged_in(&self, version: i16) -> bool {
        self.tag.is_some() && self.tagged_versions.contains(version)
    }

    /// True when the field is nullable in every version in which it exists.
    pub fn nullable_everywhere(&self) -> bool {
        self.nullable_versions.contains_all(self.versions)
    }
}

/// A named struct: an inline one, or an entry of `commonStructs`.
#[derive(Debug, Clone, PartialEq)]
pub struct StructDef {
    /// Its name, unique within the file.
    pub name: String,
    /// Where it is defined.
    pub span: Span,
    /// The versions it is declared for.
    pub versions: Versions,
    /// Its fields, in wire order.
    pub fields: Vec<Field>,
    /// True for `commonStructs` entries.
    pub common: bool,
    /// Documentation: a common struct's own `about`, or that of the field
    /// that declares an inline struct.
    pub about: Option<String>,
}

/// One validated schema file.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    /// The file it was read from.
    pub file: PathBuf,
    /// The message name, such as `VoteRequest`.
    pub name: String,
    /// Where the name is written.
    pub name_span: Span,
    /// What the file describes.
    pub kind: MessageKind,
    /// The API key or metadata record type.
    pub api_key: Option<i16>,
    /// Where the API key is written.
    pub api_key_span: Span,
    /// The versions that exist.
    pub valid_versions: Versions,
    /// The versions that use compact encodings and tagged fields.
    pub flexible_versions: Versions,
    /// Whether the highest valid version is still under development.
    pub latest_version_unstable: bool,
    /// Versions marked deprecated.
    pub deprecated_versions: Versions,
    /// The listeners that serve a request.
    pub listeners: Vec<String>,
    /// Documentation of the whole message.
    pub about: Option<String>,
    /// The top-level fields, in wire order.
    pub fields: Vec<Field>,
    /// Every named struct of the file, inline ones first in order of appearance,
    /// then the common ones.
    pub structs: Vec<StructDef>,
}

impl Schema {
    /// Looks up a struct by name.
    pub fn find_struct(&self, name: &str) -> Option<&StructDef> {
        self.structs.iter().find(|s| s.name == name)
    }

    /// The highest version that is not under development.
    pub fn highest_stable_version(&self) -> i16 {
        let highest = self.valid_versions.highest;
        if self.latest_version_unstable && highest > self.valid_versions.lowest {
            highest - 1
        } else {
            highest
        }
    }
}
