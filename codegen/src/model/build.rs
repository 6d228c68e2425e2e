//! Stage 2: turns a parsed JSON tree into a validated [`Schema`], collecting
//! every error with its position rather than stopping at the first.

use std::path::Path;

use super::spec::{Field, Schema, StructDef};
use super::types::FieldType;
use crate::diagnostics::{Diagnostic, Span};
use crate::parse::{Key, Node, Value};
use crate::primitives::{DefaultValue, MessageKind, Scalar, Versions};

const MESSAGE_KEYS: &[&str] = &[
    "apiKey",
    "type",
    "listeners",
    "name",
    "validVersions",
    "flexibleVersions",
    "latestVersionUnstable",
    "deprecatedVersions",
    "fields",
    "commonStructs",
    "about",
];

const FIELD_KEYS: &[&str] = &[
    "name",
    "type",
    "versions",
    "nullableVersions",
    "taggedVersions",
    "tag",
    "ignorable",
    "default",
    "entityType",
    "mapKey",
    "zeroCopy",
    "flexibleVersions",
    "about",
    "fields",
];

const COMMON_STRUCT_KEYS: &[&str] = &["name", "versions", "fields", "about"];

/// Builds the model of one file from its parsed tree.
///
/// Returns the schema unless there were errors, and every error and warning
/// found.
pub fn build_schema(file: &Path, root: &Node) -> (Option<Schema>, Vec<Diagnostic>) {
    let mut builder = Builder {
        errors: Vec::new(),
        warnings: Vec::new(),
    };
    let schema = builder.schema(file, root);
    let failed = !builder.errors.is_empty();
    let mut diagnostics = builder.errors;
    diagnostics.extend(builder.warnings);
    (schema.filter(|_| !failed), diagnostics)
}

struct Builder {
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
}

/// True when two values are equal, wherever they were written.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(&x.value, &y.value))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, x), (ky, y))| kx.name == ky.name && same_value(&x.value, &y.value))
        }
        _ => a == b,
    }
}

/// The members of one JSON object, checked against the keys allowed there.
struct Object<'n> {
    span: Span,
    members: &'n [(Key, Node)],
}

impl<'n> Object<'n> {
    fn get(&self, key: &str) -> Option<&'n Node> {
        self.members
            .iter()
            .find(|(k, _)| k.name == key)
            .map(|(_, v)| v)
    }
}

/// What a message's flexible versions are, for the field checks below.
#[derive(Clone, Copy)]
struct Context {
    flexible: Versions,
}

impl Builder {
    fn error(&mut self, span: Span, message: impl Into<String>) {
        self.errors.push(Diagnostic::error(span, message));
    }

    fn object<'n>(&mut self, node: &'n Node, what: &str, allowed: &[&str]) -> Option<Object<'n>> {
        let Value::Object(members) = &node.value else {
            self.error(
                node.span,
                format!(
                    "expected {what} to be an object, found {}",
                    node.value.kind()
                ),
            );
            return None;
        };
        for (i, (key, _)) in members.iter().enumerate() {
            if !allowed.contains(&key.name.as_str()) {
                self.error(
                    key.span,
                    format!(
                        "unknown key \"{}\" in {what}; expected one of {}",
                        key.name,
                        allowed.join(", ")
                    ),
                );
            } else if let Some((_, first)) = members[..i].iter().find(|(k, _)| k.name == key.name) {
                // Kafka's reader keeps the last value. The same value twice is
                // harmless but worth fixing; two different values are an error.
                if same_value(&first.value, &members[i].1.value) {
                    self.warnings.push(Diagnostic::warning(
                        key.span,
                        format!(
                            "duplicate key \"{}\" in {what} repeats the same value",
                            key.name
                        ),
                    ));
                } else {
                    self.error(
                        key.span,
                        format!(
                            "duplicate key \"{}\" in {what} with a different value",
                            key.name
                        ),
                    );
                }
            }
        }
        Some(Object {
            span: node.span,
            members,
        })
    }

    fn string<'n>(&mut self, node: &'n Node, key: &str) -> Option<&'n str> {
        match &node.value {
            Value::String(s) => Some(s),
            other => {
                self.error(
                    node.span,
                    format!("\"{key}\" must be a string, found {}", other.kind()),
                );
                None
            }
        }
    }

    fn required<'n>(&mut self, obj: &Object<'n>, key: &str, what: &str) -> Option<&'n Node> {
        let node = obj.get(key);
        if node.is_none() {
            self.error(obj.span, format!("{what} is missing \"{key}\""));
        }
        node
    }

    fn bool_flag(&mut self, obj: &Object<'_>, key: &str) -> bool {
        match obj.get(key).map(|n| (n.span, &n.value)) {
            None => false,
            Some((_, Value::Bool(b))) => *b,
            Some((span, other)) => {
                self.error(
                    span,
                    format!("\"{key}\" must be true or false, found {}", other.kind()),
                );
                false
            }
        }
    }

    fn versions(&mut self, node: &Node, key: &str) -> Option<Versions> {
        let text = self.string(node, key)?;
        match Versions::parse(text) {
            Ok(v) => Some(v),
            Err(message) => {
                self.error(node.span, format!("\"{key}\": {message}"));
                None
            }
        }
    }

    fn optional_versions(&mut self, obj: &Object<'_>, key: &str) -> Option<Versions> {
        obj.get(key).and_then(|n| self.versions(n, key))
    }

    fn integer(&mut self, node: &Node, key: &str) -> Option<i64> {
        let text = match &node.value {
            Value::Number(n) => n.as_str(),
            Value::String(s) => s.as_str(),
            other => {
                self.error(
                    node.span,
                    format!("\"{key}\" must be an integer, found {}", other.kind()),
                );
                return None;
            }
        };
        match text.parse::<i64>() {
            Ok(n) => Some(n),
            Err(_) => {
                self.error(
                    node.span,
                    format!("\"{key}\" must be an integer, found `{text}`"),
                );
                None
            }
        }
    }

    fn schema(&mut self, file: &Path, root: &Node) -> Option<Schema> {
        let obj = self.object(root, "the schema", MESSAGE_KEYS)?;
        let name_node = self.required(&obj, "name", "the schema");
        let name = name_node
            .and_then(|n| self.string(n, "name"))
            .map(str::to_owned);
        let kind = self.required(&obj, "type", "the schema").and_then(|n| {
            let text = self.string(n, "type")?;
            let kind = MessageKind::parse(text);
            if kind.is_none() {
                self.error(
                    n.span,
                    format!(
                        "unknown schema type \"{text}\"; expected request, response, header, \
                         data, metadata, coordinator-key or coordinator-value"
                    ),
                );
            }
            kind
        });
        let valid_versions = self
            .required(&obj, "validVersions", "the schema")
            .and_then(|n| self.versions(n, "validVersions"));
        // A removed API keeps its file with `"validVersions": "none"`, and
        // then needs no `flexibleVersions`, as in Kafka's generator.
        let removed = valid_versions.is_some_and(|v| v.is_empty());
        let flexible_versions = if removed && obj.get("flexibleVersions").is_none() {
            Some(Versions::NONE)
        } else {
            self.required(&obj, "flexibleVersions", "the schema")
                .and_then(|n| {
                    let v = self.versions(n, "flexibleVersions")?;
                    if !v.is_empty() && !v.is_open_ended() {
                        self.error(
                            n.span,
                            format!(
                                "\"flexibleVersions\" must be `none` or open-ended, found `{v}`"
                            ),
                        );
                    }
                    Some(v)
                })
        };
        let api_key_node = obj.get("apiKey");
        let api_key = api_key_node.and_then(|n| {
            let key = self.integer(n, "apiKey")?;
            match i16::try_from(key) {
                Ok(k) if k >= 0 => Some(k),
                _ => {
                    self.error(n.span, format!("\"apiKey\" {key} is not a valid int16 key"));
                    None
                }
            }
        });
        if let (Some(kind), None) = (kind, api_key_node) {
            if kind.has_api_key() {
                self.error(
                    obj.span,
                    format!("a {} schema needs an \"apiKey\"", kind.as_str()),
                );
            }
        }
        let latest_version_unstable = self.bool_flag(&obj, "latestVersionUnstable");
        let deprecated_versions = self
            .optional_versions(&obj, "deprecatedVersions")
            .unwrap_or(Versions::NONE);
        let listeners = obj
            .get("listeners")
            .map(|n| self.listeners(n))
            .unwrap_or_default();
        let about = obj
            .get("about")
            .and_then(|n| self.string(n, "about"))
            .map(str::to_owned);

        let context = Context {
            flexible: flexible_versions.unwrap_or(Versions::NONE),
        };
        let mut structs = Vec::new();
        let fields = self.fields(obj.get("fields"), context, &mut structs);
        if let Some(common) = obj.get("commonStructs") {
            self.common_structs(common, context, &mut structs);
        }
        self.check_struct_references(&fields, &structs);

        Some(Schema {
            file: file.to_path_buf(),
            name: name?,
            name_span: name_node.map_or(obj.span, |n| n.span),
            kind: kind?,
            api_key,
            api_key_span: api_key_node.map_or(obj.span, |n| n.span),
            valid_versions: valid_versions?,
            flexible_versions: flexible_versions?,
            latest_version_unstable,
            deprecated_versions,
            listeners,
            about,
            fields,
            structs,
        })
    }

    fn listeners(&mut self, node: &Node) -> Vec<String> {
        let Value::Array(items) = &node.value else {
            self.error(node.span, "\"listeners\" must be an array of strings");
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| self.string(item, "listeners").map(str::to_owned))
            .collect()
    }

    fn fields(
        &mut self,
        node: Option<&Node>,
        context: Context,
        structs: &mut Vec<StructDef>,
    ) -> Vec<Field> {
        let Some(node) = node else {
            return Vec::new();
        };
        let Value::Array(items) = &node.value else {
            self.error(node.span, "\"fields\" must be an array");
            return Vec::new();
        };
        let fields: Vec<Field> = items
            .iter()
            .filter_map(|item| self.field(item, context, structs))
            .collect();
        self.check_siblings(&fields);
        fields
    }

    /// Names and tags must be unique among the fields of one struct.
    fn check_siblings(&mut self, fields: &[Field]) {
        for (i, field) in fields.iter().enumerate() {
            let earlier = &fields[..i];
            if earlier
                .iter()
                .any(|f| f.name.eq_ignore_ascii_case(&field.name))
            {
                self.error(
                    field.span,
                    format!("duplicate field name \"{}\"", field.name),
                );
            }
            if let Some(tag) = field.tag {
                if let Some(other) = earlier.iter().find(|f| f.tag == Some(tag)) {
                    self.error(
                        field.span,
                        format!(
                            "tag {tag} of \"{}\" is already used by \"{}\"",
                            field.name, other.name
                        ),
                    );
                }
            }
        }
    }

    fn field(
        &mut self,
        node: &Node,
        context: Context,
        structs: &mut Vec<StructDef>,
    ) -> Option<Field> {
        let obj = self.object(node, "a field", FIELD_KEYS)?;
        let name = self
            .required(&obj, "name", "a field")
            .and_then(|n| self.string(n, "name"))
            .map(str::to_owned);
        let what = format!("field \"{}\"", name.as_deref().unwrap_or("?"));
        let ty = self.required(&obj, "type", &what).and_then(|n| {
            let text = self.string(n, "type")?;
            FieldType::parse(text)
                .map_err(|message| self.error(n.span, format!("{what}: {message}")))
                .ok()
        });
        let tagged_versions = self.optional_versions(&obj, "taggedVersions");
        let versions = match obj.get("versions") {
            Some(n) => self.versions(n, "versions"),
            None if tagged_versions.is_some() => tagged_versions,
            None => {
                self.error(obj.span, format!("{what} is missing \"versions\""));
                None
            }
        };
        let nullable_versions = self
            .optional_versions(&obj, "nullableVersions")
            .unwrap_or(Versions::NONE);
        let flexible_versions = self.optional_versions(&obj, "flexibleVersions");
        let tag = obj.get("tag").and_then(|n| {
            let tag = self.integer(n, "tag")?;
            u32::try_from(tag)
                .map_err(|_| self.error(n.span, format!("{what}: tag {tag} is negative")))
                .ok()
        });
        let ignorable = self.bool_flag(&obj, "ignorable");
        let map_key = self.bool_flag(&obj, "mapKey");
        let zero_copy = self.bool_flag(&obj, "zeroCopy");
        let entity_type = obj
            .get("entityType")
            .and_then(|n| self.string(n, "entityType"))
            .map(str::to_owned);
        let about = obj
            .get("about")
            .and_then(|n| self.string(n, "about"))
            .map(str::to_owned);

        let (name, ty, versions) = (name?, ty?, versions?);
        let tagged_versions = tagged_versions.unwrap_or(Versions::NONE);

        self.check_field_flags(
            &obj,
            &what,
            &ty,
            versions,
            nullable_versions,
            tagged_versions,
            tag,
            flexible_versions,
            zero_copy,
            context,
        );

        let default_node = obj.get("default");
        let (default, default_text) = match default_node {
            None => (DefaultValue::Implicit, None),
            Some(n) => {
                let text = match &n.value {
                    Value::String(s) => s.clone(),
                    Value::Number(s) => s.clone(),
                    Value::Bool(b) => b.to_string(),
                    other => {
                        self.error(
                            n.span,
                            format!(
                                "{what}: \"default\" must be a string, found {}",
                                other.kind()
                            ),
                        );
                        return None;
                    }
                };
                let field_nullable =
                    nullable_versions.contains_all(versions) && !versions.is_empty();
                match parse_default(&ty, &text, field_nullable) {
                    Ok(value) => (value, Some(text)),
                    Err(message) => {
                        self.error(n.span, format!("{what}: {message}"));
                        return None;
                    }
                }
            }
        };

        if let Some(fields_node) = obj.get("fields") {
            match ty.struct_name() {
                Some(struct_name) => {
                    let fields = self.fields(Some(fields_node), context, structs);
                    if structs.iter().any(|s| s.name == struct_name) {
                        self.error(
                            obj.span,
                            format!("struct \"{struct_name}\" is defined twice"),
                        );
                    } else {
                        structs.push(StructDef {
                            name: struct_name.to_owned(),
                            span: obj.span,
                            versions,
                            fields,
                            common: false,
                            about: about.clone(),
                        });
                    }
                }
                None => self.error(
                    fields_node.span,
                    format!("{what} has \"fields\" but its type `{ty}` is not a struct"),
                ),
            }
        }

        Some(Field {
            name,
            span: obj.span,
            ty,
            versions,
            nullable_versions,
            tagged_versions,
            tag,
            ignorable,
            default,
            default_text,
            entity_type,
            map_key,
            zero_copy,
            flexible_versions,
            about,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn check_field_flags(
        &mut self,
        obj: &Object<'_>,
        what: &str,
        ty: &FieldType,
        versions: Versions,
        nullable_versions: Versions,
        tagged_versions: Versions,
        tag: Option<u32>,
        flexible_versions: Option<Versions>,
        zero_copy: bool,
        context: Context,
    ) {
        let span = obj.span;
        if !nullable_versions.is_empty() && !ty.can_be_nullable() {
            self.error(span, format!("{what}: type `{ty}` cannot be nullable"));
        }
        match (tag, tagged_versions.is_empty()) {
            (Some(_), true) => self.error(
                span,
                format!("{what} has a \"tag\" but no \"taggedVersions\""),
            ),
            (None, false) => self.error(
                span,
                format!("{what} has \"taggedVersions\" but no \"tag\""),
            ),
            _ => {}
        }
        if !tagged_versions.is_empty() {
            if !tagged_versions.is_open_ended() {
                self.error(
                    span,
                    format!(
                        "{what}: \"taggedVersions\" must be open-ended, found `{tagged_versions}`"
                    ),
                );
            }
            if !context.flexible.contains_all(tagged_versions) {
                self.error(
                    span,
                    format!(
                        "{what} is tagged in versions `{tagged_versions}`, which are not all flexible (`{}`)",
                        context.flexible
                    ),
                );
            }
            if !versions.contains_all(tagged_versions) {
                self.error(
                    span,
                    format!("{what}: \"taggedVersions\" `{tagged_versions}` lie outside its versions `{versions}`"),
                );
            }
        }
        if let Some(flexible) = flexible_versions {
            if !matches!(ty, FieldType::String | FieldType::Bytes) {
                self.error(
                    span,
                    format!(
                        "{what}: only string and bytes fields may override \"flexibleVersions\""
                    ),
                );
            }
            if !flexible.is_empty() && !flexible.is_open_ended() {
                self.error(
                    span,
                    format!("{what}: \"flexibleVersions\" must be `none` or open-ended"),
                );
            }
        }
        if zero_copy && !matches!(ty, FieldType::Bytes) {
            self.error(
                span,
                format!("{what}: \"zeroCopy\" applies only to bytes fields"),
            );
        }
    }

    fn common_structs(&mut self, node: &Node, context: Context, structs: &mut Vec<StructDef>) {
        let Value::Array(items) = &node.value else {
            self.error(node.span, "\"commonStructs\" must be an array");
            return;
        };
        for item in items {
            let Some(obj) = self.object(item, "a common struct", COMMON_STRUCT_KEYS) else {
                continue;
            };
            let name = self
                .required(&obj, "name", "a common struct")
                .and_then(|n| self.string(n, "name"))
                .map(str::to_owned);
            let versions = self
                .required(&obj, "versions", "a common struct")
                .and_then(|n| self.versions(n, "versions"));
            let about = obj
                .get("about")
                .and_then(|n| self.string(n, "about"))
                .map(str::to_owned);
            let fields = self.fields(obj.get("fields"), context, structs);
            let (Some(name), Some(versions)) = (name, versions) else {
                continue;
            };
            if structs.iter().any(|s| s.name == name) {
                self.error(obj.span, format!("struct \"{name}\" is defined twice"));
                continue;
            }
            structs.push(StructDef {
                name,
                span: obj.span,
                versions,
                fields,
                common: true,
                about,
            });
        }
    }

    /// Every struct type must be defined, and `mapKey` fields must sit in a
    /// struct that is used as array elements.
    fn check_struct_references(&mut self, fields: &[Field], structs: &[StructDef]) {
        let all_fields = fields.iter().chain(structs.iter().flat_map(|s| &s.fields));
        for field in all_fields {
            if let Some(name) = field.ty.struct_name() {
                if !structs.iter().any(|s| s.name == name) {
                    self.error(
                        field.span,
                        format!(
                            "field \"{}\" has unknown type `{}`: no struct of that name is defined",
                            field.name, field.ty
                        ),
                    );
                }
            }
        }
        for field in fields.iter().filter(|f| f.map_key) {
            self.error(
                field.span,
                format!(
                    "field \"{}\": \"mapKey\" is only allowed in array elements",
                    field.name
                ),
            );
        }
    }
}

/// Parses a `default` for a field of type `ty`.
fn parse_default(ty: &FieldType, text: &str, nullable: bool) -> Result<DefaultValue, String> {
    if text == "null" {
        return if nullable {
            Ok(DefaultValue::Null)
        } else {
            Err(
                "default null is only allowed when the field is nullable in all its versions"
                    .into(),
            )
        };
    }
    match ty {
        FieldType::Scalar(Scalar::Bool) => match text {
            "true" => Ok(DefaultValue::Bool(true)),
            "false" => Ok(DefaultValue::Bool(false)),
            _ => Err(format!(
                "invalid bool default `{text}`; expected true or false"
            )),
        },
        FieldType::Scalar(Scalar::Float64) => text
            .parse::<f64>()
            .map(DefaultValue::Float)
            .map_err(|_| format!("invalid float64 default `{text}`")),
        FieldType::Scalar(Scalar::Uuid) => decode_uuid(text).map(DefaultValue::Uuid),
        FieldType::Scalar(scalar) => {
            let value = parse_integer(text)?;
            let (lo, hi) = scalar.integer_range().unwrap_or((0, 0));
            if value < lo || value > hi {
                return Err(format!("default {text} does not fit in {}", scalar.name()));
            }
            Ok(DefaultValue::Int(value))
        }
        FieldType::String => Ok(DefaultValue::String(text.to_owned())),
        _ => Err(format!("type `{ty}` only takes the default \"null\"")),
    }
}

/// Parses a decimal or `0x` hex integer; leading zeros are rejected.
fn parse_integer(text: &str) -> Result<i128, String> {
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let magnitude = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i128::from_str_radix(hex, 16).map_err(|_| format!("invalid hex default `{text}`"))?
    } else {
        if body.len() > 1 && body.starts_with('0') {
            return Err(format!(
                "invalid integer default `{text}`: leading zeros are not allowed"
            ));
        }
        if body.is_empty() || !body.chars().all(|c| c.is_ascii_digit()) {
            return Err(format!("invalid integer default `{text}`"));
        }
        body.parse::<i128>()
            .map_err(|_| format!("integer default `{text}` is out of range"))?
    };
    Ok(if negative { -magnitude } else { magnitude })
}

/// Decodes Kafka's uuid string: base64url without padding, 16 bytes.
pub fn decode_uuid(text: &str) -> Result<[u8; 16], String> {
    let invalid = || format!("invalid uuid default `{text}`; expected 22 base64url characters");
    if text.len() != 22 {
        return Err(invalid());
    }
    let mut bits: u128 = 0;
    for (i, c) in text.bytes().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return Err(invalid()),
        };
        if i == 21 {
            // The last character carries 2 data bits and 4 zero padding bits.
            if v & 0xf != 0 {
                return Err(invalid());
            }
            bits = (bits << 2) | u128::from(v >> 4);
        } else {
            bits = (bits << 6) | u128::from(v);
        }
    }
    Ok(bits.to_be_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_defaults() {
        assert_eq!(parse_integer("-1"), Ok(-1));
        assert_eq!(parse_integer("0x7fffffff"), Ok(0x7fff_ffff));
        assert_eq!(parse_integer("0"), Ok(0));
        assert!(parse_integer("007").is_err());
        assert!(parse_integer("1.5").is_err());
    }

    #[test]
    fn uuid_defaults() {
        assert_eq!(decode_uuid("AAAAAAAAAAAAAAAAAAAAAA"), Ok([0; 16]));
        let bytes = decode_uuid("H3KKO4NTRPaCWtEmm3vW7A").unwrap_or_default();
        assert_eq!(bytes[0], 0x1f);
        assert_eq!(bytes[15], 0xec);
        assert!(decode_uuid("short").is_err());
    }

    #[test]
    fn defaults_are_checked_against_the_type() {
        let int8 = FieldType::Scalar(Scalar::Int8);
        assert!(parse_default(&int8, "128", false).is_err());
        assert!(parse_default(&int8, "null", false).is_err());
        assert_eq!(
            parse_default(&FieldType::String, "null", true),
            Ok(DefaultValue::Null)
        );
    }
}
