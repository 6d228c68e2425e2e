//! Stage 3: the model lowered to what the emitter needs, per struct and field.
//!
//! The main job is to decide, for every version-dependent choice, which
//! versions can actually reach it. Each struct is only ever decoded in some
//! versions (its *context*), and a condition that holds for the whole context
//! becomes [`Cond::Always`], one that never holds becomes [`Cond::Never`].
//! The emitter writes no branch for either, so generated code carries no
//! `if version >= 0` noise and no dead arms.

use heck::{ToSnakeCase, ToUpperCamelCase};

use crate::model::{Field, FieldType, Schema};
use crate::primitives::{DefaultValue, MessageKind, Scalar, Versions};

/// When a version-dependent choice applies, relative to a struct's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    /// In every version of the context.
    Always,
    /// In no version of the context.
    Never,
    /// From `lowest` (if bounded below) to `highest` (if bounded above).
    Between {
        /// The lowest version, when the context reaches below it.
        lowest: Option<i16>,
        /// The highest version, when the context reaches above it.
        highest: Option<i16>,
    },
}

impl Cond {
    /// The condition "version is in `range`", within `context`.
    pub fn new(range: Versions, context: Versions) -> Cond {
        let within = range.intersect(context);
        if within.is_empty() || context.is_empty() {
            return Cond::Never;
        }
        let lowest = (within.lowest > context.lowest).then_some(within.lowest);
        let highest = (within.highest < context.highest).then_some(within.highest);
        match (lowest, highest) {
            (None, None) => Cond::Always,
            _ => Cond::Between { lowest, highest },
        }
    }

    /// True unless the condition is [`Cond::Never`].
    pub fn is_possible(self) -> bool {
        self != Cond::Never
    }

    /// True when the condition holds at `version`, which must be a version
    /// of the context the condition was made for: an unbounded side reaches
    /// the context's edge, and the condition cannot tell where that is.
    pub fn holds(self, version: i16) -> bool {
        match self {
            Cond::Always => true,
            Cond::Never => false,
            Cond::Between { lowest, highest } => {
                lowest.is_none_or(|lo| version >= lo) && highest.is_none_or(|hi| version <= hi)
            }
        }
    }

    /// The condition as seen inside a branch where `outer` holds: `Always`
    /// when `outer` implies it, `Never` when the two exclude each other.
    pub fn given(self, outer: Cond) -> Cond {
        let (
            Cond::Between { lowest, highest },
            Cond::Between {
                lowest: outer_lowest,
                highest: outer_highest,
            },
        ) = (self, outer)
        else {
            return match outer {
                Cond::Never => Cond::Never,
                _ => self,
            };
        };
        // An unbounded side of `outer` reaches the context's edge, which a
        // bounded side of `self` does not.
        let above = |bound: Option<i16>, outer: Option<i16>| match (bound, outer) {
            (None, _) => true,
            (Some(lo), Some(outer_lo)) => outer_lo >= lo,
            (Some(_), None) => false,
        };
        let below = |bound: Option<i16>, outer: Option<i16>| match (bound, outer) {
            (None, _) => true,
            (Some(hi), Some(outer_hi)) => outer_hi <= hi,
            (Some(_), None) => false,
        };
        if above(lowest, outer_lowest) && below(highest, outer_highest) {
            return Cond::Always;
        }
        let disjoint = matches!((highest, outer_lowest), (Some(hi), Some(lo)) if lo > hi)
            || matches!((lowest, outer_highest), (Some(lo), Some(hi)) if hi < lo);
        if disjoint {
            Cond::Never
        } else {
            self
        }
    }
}

/// How a field is represented and encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldKind {
    /// A fixed-width scalar.
    Scalar(Scalar),
    /// A string.
    String,
    /// Opaque bytes.
    Bytes,
    /// A records blob.
    Records,
    /// An array of fixed-width scalars, kept in wire form.
    ScalarArray(Scalar),
    /// An array of strings.
    StringArray,
    /// An array of structs, by Rust type name.
    StructArray(String),
    /// A nested struct, by Rust type name.
    Struct(String),
}

impl FieldKind {
    /// True for the kinds written after a length (strings, bytes, records
    /// and arrays), which is compact in flexible versions.
    pub fn has_length(&self) -> bool {
        !matches!(self, FieldKind::Scalar(_) | FieldKind::Struct(_))
    }

    /// The Rust type name of the struct this kind holds, itself or as the
    /// elements of an array.
    pub fn struct_name(&self) -> Option<&str> {
        match self {
            FieldKind::Struct(name) | FieldKind::StructArray(name) => Some(name),
            _ => None,
        }
    }
}

/// A lowered field.
#[derive(Debug, Clone)]
pub struct FieldIr {
    /// The schema's name, such as `ReplicaId`.
    pub schema_name: String,
    /// The Rust field name, such as `replica_id`.
    pub rust_name: String,
    /// The JSON key, such as `replicaId`.
    pub json_name: String,
    /// Representation and encoding.
    pub kind: FieldKind,
    /// The versions the field exists in, as the schema says.
    pub versions: Versions,
    /// The versions it may be null in.
    pub nullable_versions: Versions,
    /// The versions it is tagged in.
    pub tagged_versions: Versions,
    /// When the field is on the wire at all.
    pub present: Cond,
    /// When it is written in the struct body (present and not tagged).
    pub untagged: Cond,
    /// Its tag, and when it is written in the tagged-field section.
    pub tagged: Option<(u32, Cond)>,
    /// When it may be null (only meaningful where present).
    pub nullable: Cond,
    /// True when the Rust type is an `Option`.
    pub optional: bool,
    /// When strings, bytes and arrays use compact lengths.
    pub compact: Cond,
    /// Whether a non-default value may be dropped where the field is absent.
    pub ignorable: bool,
    /// The explicit default, if any.
    pub default: DefaultValue,
    /// The schema's `about`.
    pub about: Option<String>,
}

impl FieldIr {
    /// The field's tag, when it is written in the tagged-field section at
    /// `version`, a version in which it is present.
    pub fn tag_in(&self, version: i16) -> Option<u32> {
        self.tagged
            .filter(|(_, cond)| cond.holds(version))
            .map(|(tag, _)| tag)
    }

    /// True when it may be null at `version`, a version in which it is present.
    pub fn is_nullable_in(&self, version: i16) -> bool {
        self.nullable.holds(version)
    }

    /// True when its length is compact (a varint) at `version`, a version in
    /// which it is present; false for kinds written without a length.
    pub fn is_compact_in(&self, version: i16) -> bool {
        self.kind.has_length() && self.compact.holds(version)
    }
}

/// A lowered struct.
#[derive(Debug, Clone)]
pub struct StructIr {
    /// The Rust type name.
    pub type_name: String,
    /// The schema name of the struct.
    pub schema_name: String,
    /// The versions in which this struct is decoded.
    pub context: Versions,
    /// When the struct ends with a tagged-field section.
    pub flexible: Cond,
    /// Its fields, in wire order, without fields that exist in no version.
    pub fields: Vec<FieldIr>,
    /// Whether the Rust type borrows from the input.
    pub has_lifetime: bool,
    /// Its documentation, from the schema.
    pub about: Option<String>,
}

impl StructIr {
    /// The field of a given schema name, such as `ReplicaId`, unless it
    /// exists in no version of the struct's context.
    pub fn field(&self, schema_name: &str) -> Option<&FieldIr> {
        self.fields.iter().find(|f| f.schema_name == schema_name)
    }
}

/// A lowered message: its top-level struct first, then every nested struct.
#[derive(Debug, Clone)]
pub struct MessageIr {
    /// The message name, such as `VoteRequest`.
    pub name: String,
    /// The Rust module holding it, such as `vote_request`.
    pub module_name: String,
    /// What the schema describes.
    pub kind: MessageKind,
    /// The API key or record type.
    pub api_key: Option<i16>,
    /// The valid versions.
    pub valid_versions: Versions,
    /// The flexible versions.
    pub flexible_versions: Versions,
    /// Whether the highest version is unstable.
    pub latest_version_unstable: bool,
    /// The listeners that serve a request (`broker`, `controller`); empty
    /// for other messages.
    pub listeners: Vec<String>,
    /// The schema's `about` for the whole message.
    pub about: Option<String>,
    /// The top-level struct, then the nested ones.
    pub structs: Vec<StructIr>,
}

impl MessageIr {
    /// The top-level struct.
    pub fn top(&self) -> &StructIr {
        &self.structs[0]
    }

    /// The struct of a given Rust type name, as [`FieldKind`] names it,
    /// unless it is reached in no valid version.
    pub fn find_struct(&self, type_name: &str) -> Option<&StructIr> {
        self.structs.iter().find(|s| s.type_name == type_name)
    }
}

/// Lowers one schema.
pub fn lower(schema: &Schema) -> MessageIr {
    let contexts = struct_contexts(schema);
    let mut structs = Vec::new();
    structs.push(lower_struct(
        schema,
        &schema.name,
        &schema.name,
        &schema.fields,
        schema.valid_versions,
        schema.about.as_deref(),
    ));
    for def in &schema.structs {
        let context = contexts
            .iter()
            .find(|(name, _)| *name == def.name)
            .map_or(Versions::NONE, |(_, v)| *v);
        if context.is_empty() {
            // Only reachable through fields that exist in no valid version.
            continue;
        }
        structs.push(lower_struct(
            schema,
            &def.name,
            &def.name.to_upper_camel_case(),
            &def.fields,
            context,
            def.about.as_deref(),
        ));
    }
    resolve_lifetimes(&mut structs);
    MessageIr {
        name: schema.name.clone(),
        module_name: schema.name.to_snake_case(),
        kind: schema.kind,
        api_key: schema.api_key,
        valid_versions: schema.valid_versions,
        flexible_versions: schema.flexible_versions,
        listeners: schema.listeners.clone(),
        latest_version_unstable: schema.latest_version_unstable,
        about: schema.about.clone(),
        structs,
    }
}

/// The versions in which each struct can be decoded: the hull, over every
/// field that uses it, of that field's versions within its parent's context.
fn struct_contexts(schema: &Schema) -> Vec<(String, Versions)> {
    let mut contexts: Vec<(String, Versions)> = schema
        .structs
        .iter()
        .map(|s| (s.name.clone(), Versions::NONE))
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        let parents = std::iter::once((schema.valid_versions, &schema.fields)).chain(
            schema.structs.iter().map(|s| {
                let context = contexts
                    .iter()
                    .find(|(n, _)| *n == s.name)
                    .map_or(Versions::NONE, |(_, v)| *v);
                (context, &s.fields)
            }),
        );
        let mut updates = Vec::new();
        for (context, fields) in parents {
            for field in fields {
                if let Some(name) = field.ty.struct_name() {
                    updates.push((name.to_owned(), field.versions.intersect(context)));
                }
            }
        }
        for (name, reach) in updates {
            if let Some((_, current)) = contexts.iter_mut().find(|(n, _)| *n == name) {
                let widened = current.hull(reach);
                if widened != *current {
                    *current = widened;
                    changed = true;
                }
            }
        }
    }
    contexts
}

fn lower_struct(
    schema: &Schema,
    schema_name: &str,
    type_name: &str,
    fields: &[Field],
    context: Versions,
    about: Option<&str>,
) -> StructIr {
    let flexible = Cond::new(schema.flexible_versions, context);
    let fields = fields
        .iter()
        .filter_map(|f| lower_field(schema, f, context))
        .collect();
    StructIr {
        type_name: type_name.to_owned(),
        schema_name: schema_name.to_owned(),
        context,
        flexible,
        fields,
        has_lifetime: false,
        about: about.map(str::to_owned),
    }
}

fn lower_field(schema: &Schema, field: &Field, context: Versions) -> Option<FieldIr> {
    let present_versions = field.versions.intersect(context);
    if present_versions.is_empty() {
        return None;
    }
    let present = Cond::new(present_versions, context);
    let tagged_versions = if field.tag.is_some() {
        field.tagged_versions.intersect(present_versions)
    } else {
        Versions::NONE
    };
    let untagged_versions = if tagged_versions.is_empty() {
        present_versions
    } else {
        // Tagged versions are open-ended, so the untagged ones are a prefix.
        Versions::new(present_versions.lowest, tagged_versions.lowest - 1)
            .intersect(present_versions)
    };
    let flexible = field.flexible_versions.unwrap_or(schema.flexible_versions);
    let kind = match &field.ty {
        FieldType::Scalar(s) => FieldKind::Scalar(*s),
        FieldType::String => FieldKind::String,
        FieldType::Bytes => FieldKind::Bytes,
        FieldType::Records => FieldKind::Records,
        FieldType::Struct(name) => FieldKind::Struct(name.to_upper_camel_case()),
        FieldType::Array(element) => match element.as_ref() {
            FieldType::Scalar(s) => FieldKind::ScalarArray(*s),
            FieldType::Struct(name) => FieldKind::StructArray(name.to_upper_camel_case()),
            _ => FieldKind::StringArray,
        },
    };
    let nullable = Cond::new(field.nullable_versions, present_versions);
    let optional = nullable.is_possible() || kind == FieldKind::Records;
    Some(FieldIr {
        schema_name: field.name.clone(),
        rust_name: field.name.to_snake_case(),
        json_name: lower_first(&field.name),
        kind,
        versions: field.versions,
        nullable_versions: field.nullable_versions,
        tagged_versions: field.tagged_versions,
        present,
        untagged: Cond::new(untagged_versions, context),
        tagged: field
            .tag
            .filter(|_| !tagged_versions.is_empty())
            .map(|tag| (tag, Cond::new(tagged_versions, context))),
        nullable,
        optional,
        compact: Cond::new(flexible, present_versions),
        ignorable: field.ignorable,
        default: field.default.clone(),
        about: field.about.clone(),
    })
}

/// A struct borrows from the input when it has a string, bytes, records,
/// scalar-array or struct-array field, a tagged-field section, or a field of
/// such a struct.
fn resolve_lifetimes(structs: &mut [StructIr]) {
    for s in structs.iter_mut() {
        s.has_lifetime = s.flexible.is_possible()
            || s.fields
                .iter()
                .any(|f| !matches!(f.kind, FieldKind::Scalar(_) | FieldKind::Struct(_)));
    }
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..structs.len() {
            if structs[i].has_lifetime {
                continue;
            }
            let borrows = structs[i].fields.iter().any(|f| match &f.kind {
                FieldKind::Struct(name) => structs
                    .iter()
                    .any(|s| &s.type_name == name && s.has_lifetime),
                _ => false,
            });
            if borrows {
                structs[i].has_lifetime = true;
                changed = true;
            }
        }
    }
}

/// `ClusterId` becomes `clusterId`.
fn lower_first(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_inside_a_branch_drop_what_the_branch_decides() {
        let context = Versions::new(0, 16);
        let cond = |lo, hi| Cond::new(Versions::new(lo, hi), context);
        let flexible = cond(12, i16::MAX);
        // Tagged from 12 on, read only where flexible (12+): always.
        assert_eq!(cond(12, i16::MAX).given(flexible), Cond::Always);
        assert_eq!(cond(3, i16::MAX).given(flexible), Cond::Always);
        // From 15 on: still a check inside the branch.
        assert_eq!(cond(15, i16::MAX).given(flexible), cond(15, i16::MAX));
        // Up to 13: the upper bound stays.
        assert_eq!(cond(0, 13).given(flexible), cond(0, 13));
        // Up to 11: never inside a 12+ branch.
        assert_eq!(cond(0, 11).given(flexible), Cond::Never);
        // Inside 12-14, a 10-14 condition always holds.
        assert_eq!(cond(10, 14).given(cond(12, 14)), Cond::Always);
        assert_eq!(Cond::Always.given(flexible), Cond::Always);
        assert_eq!(cond(15, i16::MAX).given(Cond::Always), cond(15, i16::MAX));
        assert_eq!(cond(15, i16::MAX).given(Cond::Never), Cond::Never);
    }

    #[test]
    fn conditions_drop_what_the_context_decides() {
        let context = Versions::new(0, 2);
        assert_eq!(Cond::new(Versions::ALL, context), Cond::Always);
        assert_eq!(Cond::new(Versions::new(3, i16::MAX), context), Cond::Never);
        assert_eq!(
            Cond::new(Versions::new(1, i16::MAX), context),
            Cond::Between {
                lowest: Some(1),
                highest: None
            }
        );
        assert_eq!(
            Cond::new(Versions::new(0, 1), context),
            Cond::Between {
                lowest: None,
                highest: Some(1)
            }
        );
        assert_eq!(Cond::new(Versions::ALL, Versions::NONE), Cond::Never);
    }

    #[test]
    fn json_names_lower_the_first_letter() {
        assert_eq!(lower_first("PreVote"), "preVote");
        assert_eq!(lower_first("TimeoutMs"), "timeoutMs");
        assert_eq!(lower_first("myInt16"), "myInt16");
    }
}
