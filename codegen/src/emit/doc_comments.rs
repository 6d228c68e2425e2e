//! The documentation of generated items: each schema's `about` texts, then
//! the versions, nullability, tags and flags the schema gives, as text that
//! [`doc_attrs`](crate::rust_source::doc_attrs) turns into `///` comments.

use crate::ir::{FieldIr, MessageIr, StructIr};

/// The documentation of a message's top-level struct.
pub fn message_doc(message: &MessageIr) -> String {
    let mut doc = about_paragraph(message.about.as_deref());
    doc.push_str(&format!(
        "The `{}` {} schema, versions {}",
        message.name,
        message.kind.as_str(),
        message.valid_versions
    ));
    if let Some(key) = message.api_key {
        doc.push_str(&format!(", key {key}"));
    }
    doc.push('.');
    if !message.flexible_versions.is_empty() {
        doc.push_str(&format!(
            " Flexible from version {}.",
            message.flexible_versions.lowest
        ));
    }
    if message.latest_version_unstable {
        doc.push_str(&format!(
            " Version {} is unstable.",
            message.valid_versions.highest
        ));
    }
    doc
}

/// The documentation of a nested struct: its `about` (a common struct's
/// own, or that of the field declaring it), then where it is used.
pub fn struct_doc(message: &MessageIr, s: &StructIr) -> String {
    let mut doc = about_paragraph(s.about.as_deref());
    doc.push_str(&format!(
        "The `{}` struct of `{}`, used in versions {}.",
        s.schema_name, message.name, s.context
    ));
    doc
}

/// The documentation of a field: its `about`, then its versions. A field
/// without an `about` gets the versions line alone, never a placeholder.
pub fn field_doc(field: &FieldIr) -> String {
    let mut doc = about_paragraph(field.about.as_deref());
    doc.push_str(&format!("Versions: {}.", field.versions));
    if !field.nullable_versions.is_empty() {
        doc.push_str(&format!(" Nullable: {}.", field.nullable_versions));
    }
    if let Some((tag, _)) = field.tagged {
        doc.push_str(&format!(" Tagged (tag {tag}): {}.", field.tagged_versions));
    }
    if field.ignorable {
        doc.push_str(" Ignorable.");
    }
    doc
}

/// The documentation of the module that holds a message's code.
pub fn module_doc(message: &MessageIr) -> String {
    format!("The `{}` message and its structs.", message.name)
}

/// The schema's `about` as the doc's first paragraph, or nothing.
fn about_paragraph(about: Option<&str>) -> String {
    about
        .map(|about| format!("{about}\n\n"))
        .unwrap_or_default()
}
