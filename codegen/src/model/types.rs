//! The types a schema field can have.

use std::fmt;

use crate::primitives::Scalar;

/// The type of a field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FieldType {
    /// A fixed-width scalar.
    Scalar(Scalar),
    /// `string`: UTF-8 text.
    String,
    /// `bytes`: opaque bytes.
    Bytes,
    /// `records`: a record batch blob.
    Records,
    /// `[]T`: an array of scalars, strings or structs.
    Array(Box<FieldType>),
    /// A struct, by name.
    Struct(String),
}

const SCALARS: [Scalar; 9] = [
    Scalar::Bool,
    Scalar::Int8,
    Scalar::Int16,
    Scalar::Uint16,
    Scalar::Int32,
    Scalar::Uint32,
    Scalar::Int64,
    Scalar::Float64,
    Scalar::Uuid,
];

/// Spellings from other languages, mapped to the schema's own.
const SYNONYMS: [(&str, &str); 12] = [
    ("boolean", "bool"),
    ("byte", "int8"),
    ("short", "int16"),
    ("int", "int32"),
    ("integer", "int32"),
    ("long", "int64"),
    ("double", "float64"),
    ("float", "float64"),
    ("str", "string"),
    ("varchar", "string"),
    ("bytearray", "bytes"),
    ("record", "records"),
];

impl FieldType {
    /// Parses a type as written in a schema. Struct names must start with an
    /// upper-case letter; anything else unknown gets a suggestion.
    pub fn parse(text: &str) -> Result<FieldType, String> {
        if let Some(element) = text.strip_prefix("[]") {
            if element.starts_with("[]") {
                return Err(format!("nested array type `{text}` is not supported"));
            }
            let element = FieldType::parse(element)?;
            if matches!(element, FieldType::Bytes | FieldType::Records) {
                return Err(format!("array of `{}` is not supported", element));
            }
            return Ok(FieldType::Array(Box::new(element)));
        }
        if let Some(scalar) = SCALARS.iter().find(|s| s.name() == text) {
            return Ok(FieldType::Scalar(*scalar));
        }
        match text {
            "string" => return Ok(FieldType::String),
            "bytes" => return Ok(FieldType::Bytes),
            "records" => return Ok(FieldType::Records),
            _ => {}
        }
        let starts_upper = text.chars().next().is_some_and(|c| c.is_ascii_uppercase());
        if starts_upper && text.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Ok(FieldType::Struct(text.to_owned()));
        }
        let mut message = format!("unknown type `{text}`");
        if let Some(suggestion) = suggest(text) {
            message.push_str(&format!("; did you mean `{suggestion}`?"));
        }
        Err(message)
    }

    /// The element type, for arrays.
    pub fn element(&self) -> Option<&FieldType> {
        match self {
            FieldType::Array(e) => Some(e),
            _ => None,
        }
    }

    /// The struct this type names, directly or as array elements.
    pub fn struct_name(&self) -> Option<&str> {
        match self {
            FieldType::Struct(name) => Some(name),
            FieldType::Array(e) => e.struct_name(),
            _ => None,
        }
    }

    /// True when the type may be declared nullable.
    pub fn can_be_nullable(&self) -> bool {
        !matches!(self, FieldType::Scalar(_))
    }
}

/// The closest known type name, by synonym or by edit distance.
fn suggest(text: &str) -> Option<&'static str> {
    let lower = text.to_ascii_lowercase();
    if let Some((_, to)) = SYNONYMS.iter().find(|(from, _)| *from == lower) {
        return Some(to);
    }
    let names = SCALARS
        .iter()
        .map(|s| s.name())
        .chain(["string", "bytes", "records"]);
    names
        .map(|name| (edit_distance(&lower, name), name))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, name)| name)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldType::Scalar(s) => f.write_str(s.name()),
            FieldType::String => f.write_str("string"),
            FieldType::Bytes => f.write_str("bytes"),
            FieldType::Records => f.write_str("records"),
            FieldType::Array(e) => write!(f, "[]{e}"),
            FieldType::Struct(name) => f.write_str(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_types() {
        assert_eq!(
            FieldType::parse("[]int32"),
            Ok(FieldType::Array(Box::new(FieldType::Scalar(Scalar::Int32))))
        );
        assert_eq!(
            FieldType::parse("[]uuid"),
            Ok(FieldType::Array(Box::new(FieldType::Scalar(Scalar::Uuid))))
        );
        assert_eq!(
            FieldType::parse("TopicData"),
            Ok(FieldType::Struct("TopicData".into()))
        );
        assert!(FieldType::parse("[][]int32").is_err());
    }

    #[test]
    fn unknown_types_get_suggestions() {
        assert_eq!(
            FieldType::parse("boolean"),
            Err("unknown type `boolean`; did you mean `bool`?".into())
        );
        assert_eq!(
            FieldType::parse("int33"),
            Err("unknown type `int33`; did you mean `int32`?".into())
        );
        assert_eq!(
            FieldType::parse("zzzzzzzz"),
            Err("unknown type `zzzzzzzz`".into())
        );
    }
}
