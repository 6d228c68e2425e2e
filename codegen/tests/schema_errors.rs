//! Each invalid schema gets one exact, located error message.

use std::path::PathBuf;

use kafka_codegen::model::{SchemaSet, SourceFile};

/// The diagnostics of one in-memory schema file, as printed.
fn diagnostics(text: &str) -> Vec<String> {
    let set = SchemaSet::from_sources(&[SourceFile {
        path: PathBuf::from("t.json"),
        text: text.to_owned(),
    }]);
    set.diagnostics.iter().map(|d| d.to_string()).collect()
}

/// A request schema whose fields are `fields`.
fn with_fields(fields: &str) -> String {
    format!(
        "{{\"apiKey\": 1, \"type\": \"request\", \"name\": \"TRequest\",\n\
         \"validVersions\": \"0-3\", \"flexibleVersions\": \"2+\",\n\
         \"fields\": [\n{fields}\n]}}"
    )
}

fn assert_one(text: &str, expected: &str) {
    assert_eq!(
        diagnostics(text),
        vec![expected.to_owned()],
        "for schema:\n{text}"
    );
}

#[test]
fn unknown_type_suggests_the_right_one() {
    assert_one(
        &with_fields(r#"{"name": "A", "type": "boolean", "versions": "0+"}"#),
        "t.json:4:23: error: field \"A\": unknown type `boolean`; did you mean `bool`?",
    );
}

#[test]
fn unknown_keys_are_errors() {
    assert_one(
        &with_fields(r#"{"name": "A", "type": "int8", "versions": "0+", "nullable": true}"#),
        "t.json:4:49: error: unknown key \"nullable\" in a field; expected one of name, type, \
         versions, nullableVersions, taggedVersions, tag, ignorable, default, entityType, mapKey, \
         zeroCopy, flexibleVersions, about, fields",
    );
}

#[test]
fn scalars_cannot_be_nullable() {
    assert_one(
        &with_fields(
            r#"{"name": "A", "type": "int32", "versions": "0+", "nullableVersions": "0+"}"#,
        ),
        "t.json:4:1: error: field \"A\": type `int32` cannot be nullable",
    );
}

#[test]
fn tagged_fields_must_be_flexible_and_open_ended() {
    assert_one(
        &with_fields(r#"{"name": "A", "type": "int32", "versions": "0+", "taggedVersions": "0+", "tag": 0}"#),
        "t.json:4:1: error: field \"A\" is tagged in versions `0+`, which are not all flexible (`2+`)",
    );
    assert_one(
        &with_fields(
            r#"{"name": "A", "type": "int32", "versions": "2+", "taggedVersions": "2-3", "tag": 0}"#,
        ),
        "t.json:4:1: error: field \"A\": \"taggedVersions\" must be open-ended, found `2-3`",
    );
    assert_one(
        &with_fields(r#"{"name": "A", "type": "int32", "versions": "2+", "tag": 0}"#),
        "t.json:4:1: error: field \"A\" has a \"tag\" but no \"taggedVersions\"",
    );
}

#[test]
fn tags_and_names_are_unique() {
    assert_one(
        &with_fields(
            "{\"name\": \"A\", \"type\": \"int32\", \"taggedVersions\": \"2+\", \"tag\": 0},\n\
             {\"name\": \"B\", \"type\": \"int32\", \"taggedVersions\": \"2+\", \"tag\": \"0\"}",
        ),
        "t.json:5:1: error: tag 0 of \"B\" is already used by \"A\"",
    );
    assert_one(
        &with_fields(
            "{\"name\": \"A\", \"type\": \"int32\", \"versions\": \"0+\"},\n\
             {\"name\": \"A\", \"type\": \"int8\", \"versions\": \"0+\"}",
        ),
        "t.json:5:1: error: duplicate field name \"A\"",
    );
}

#[test]
fn defaults_are_checked() {
    assert_one(
        &with_fields(r#"{"name": "A", "type": "int8", "versions": "0+", "default": "300"}"#),
        "t.json:4:60: error: field \"A\": default 300 does not fit in int8",
    );
    assert_one(
        &with_fields(r#"{"name": "A", "type": "int32", "versions": "0+", "default": "010"}"#),
        "t.json:4:61: error: field \"A\": invalid integer default `010`: leading zeros are not allowed",
    );
    assert_one(
        &with_fields(r#"{"name": "A", "type": "string", "versions": "0+", "default": "null"}"#),
        "t.json:4:62: error: field \"A\": default null is only allowed when the field is nullable in all its versions",
    );
}

#[test]
fn structs_must_exist_and_arrays_must_not_nest() {
    assert_one(
        &with_fields(r#"{"name": "A", "type": "[]Missing", "versions": "0+"}"#),
        "t.json:4:1: error: field \"A\" has unknown type `[]Missing`: no struct of that name is defined",
    );
    assert_one(
        &with_fields(r#"{"name": "A", "type": "[][]int32", "versions": "0+"}"#),
        "t.json:4:23: error: field \"A\": nested array type `[][]int32` is not supported",
    );
}

#[test]
fn flexible_override_only_on_strings_and_bytes() {
    assert_one(
        &with_fields(r#"{"name": "A", "type": "int32", "versions": "0+", "flexibleVersions": "none"}"#),
        "t.json:4:1: error: field \"A\": only string and bytes fields may override \"flexibleVersions\"",
    );
}

#[test]
fn message_level_checks() {
    assert_one(
        "{\"type\": \"request\", \"name\": \"X\", \"apiKey\": 1, \"validVersions\": \"0\", \
         \"flexibleVersions\": \"0-3\", \"fields\": []}",
        "t.json:1:89: error: \"flexibleVersions\" must be `none` or open-ended, found `0-3`",
    );
    assert_one(
        "{\"type\": \"requets\", \"name\": \"X\", \"validVersions\": \"0\", \"flexibleVersions\": \"none\"}",
        "t.json:1:10: error: unknown schema type \"requets\"; expected request, response, header, \
         data, metadata, coordinator-key or coordinator-value",
    );
    assert_one(
        "{\"type\": \"request\", \"name\": \"X\", \"validVersions\": \"0\", \"flexibleVersions\": \"none\"}",
        "t.json:1:1: error: a request schema needs an \"apiKey\"",
    );
}

#[test]
fn syntax_errors_are_located() {
    assert_one(
        "{\n  \"name\": 'X'\n}",
        "t.json:2:11: error: expected a JSON value, found `'X'`; strings need double quotes",
    );
    assert_one(
        "{\"a\": 1,,}",
        "t.json:1:9: error: expected a quoted object key",
    );
}

#[test]
fn every_error_in_a_file_is_reported() {
    let errors = diagnostics(&with_fields(
        "{\"name\": \"A\", \"type\": \"boolean\", \"versions\": \"0+\"},\n\
         {\"name\": \"B\", \"type\": \"int8\", \"versions\": \"x\"},",
    ));
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert!(errors[2].contains("warning: trailing comma"), "{errors:#?}");
}
