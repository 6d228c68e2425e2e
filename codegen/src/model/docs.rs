//! Finds the places of a schema that have no `about` text, for builds that
//! require every generated item to be documented.

use super::spec::{Field, Schema};
use crate::diagnostics::Diagnostic;

/// An error for the message, each field (at any depth) and each common
/// struct that has no `about`, in file order.
pub fn undocumented(schema: &Schema) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    if schema.about.is_none() {
        found.push(Diagnostic::error(
            schema.name_span,
            format!("message \"{}\" has no \"about\"", schema.name),
        ));
    }
    fields(&schema.fields, &mut found);
    // Inline structs are documented by the field declaring them, checked
    // above or with their parent struct's fields.
    for def in &schema.structs {
        if def.common && def.about.is_none() {
            found.push(Diagnostic::error(
                def.span,
                format!("common struct \"{}\" has no \"about\"", def.name),
            ));
        }
        fields(&def.fields, &mut found);
    }
    found.sort_by_key(|d| d.span);
    found
}

fn fields(fields: &[Field], found: &mut Vec<Diagnostic>) {
    for field in fields {
        if field.about.is_none() {
            found.push(Diagnostic::error(
                field.span,
                format!("field \"{}\" has no \"about\"", field.name),
            ));
        }
    }
}
