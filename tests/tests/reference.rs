//! `messages/` must state exactly the facts of Kafka's own schema files in
//! `../shared/kafka-schemas/`: names, types, versions, tags, defaults and
//! flags. Prose (`about` texts and comments) is the project's own, so it is
//! left out of the comparison, and none of it may be copied.
//!
//! `../shared` exists in CI but not on a user's machine; there the tests
//! skip and say so.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use kafka_codegen::parse::{self, Node, Value as Tree};
use kafka_wire_tests::{shared_dir, workspace_root};
use serde_json::{Map, Value};

/// The facts of one schema file, as JSON without prose.
fn facts(node: &Node) -> Value {
    match &node.value {
        Tree::Null => Value::Null,
        Tree::Bool(b) => Value::Bool(*b),
        Tree::Number(n) => serde_json::from_str(n).unwrap_or(Value::String(n.clone())),
        Tree::String(s) => Value::String(s.clone()),
        Tree::Array(items) => Value::Array(items.iter().map(facts).collect()),
        Tree::Object(members) => {
            let mut map = Map::new();
            for (key, value) in members {
                let value = match (key.name.as_str(), facts(value)) {
                    ("about", _) => continue,
                    // `"tag": "0"` and `"tag": 0` state the same fact.
                    ("tag" | "apiKey", Value::String(s)) => {
                        s.parse::<i64>().map_or(Value::String(s), Value::from)
                    }
                    // A default may be written as a JSON number or bool.
                    ("default", Value::Number(n)) => Value::String(n.to_string()),
                    ("default", Value::Bool(b)) => Value::String(b.to_string()),
                    // false is the default of these flags.
                    (
                        "ignorable" | "latestVersionUnstable" | "mapKey" | "zeroCopy",
                        Value::Bool(false),
                    ) => continue,
                    (_, v) => v,
                };
                map.insert(key.name.clone(), value);
            }
            Value::Object(map)
        }
    }
}

fn read_tree(path: &Path) -> Node {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parse::parse(&text)
        .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.message))
        .root
}

fn abouts(node: &Node, out: &mut Vec<String>) {
    match &node.value {
        Tree::Array(items) => items.iter().for_each(|i| abouts(i, out)),
        Tree::Object(members) => {
            for (key, value) in members {
                match &value.value {
                    Tree::String(s) if key.name == "about" => out.push(s.clone()),
                    _ => abouts(value, out),
                }
            }
        }
        _ => {}
    }
}

fn json_files(dir: &Path) -> BTreeMap<String, PathBuf> {
    fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            (
                p.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                p,
            )
        })
        .collect()
}

/// Compares one reference folder with one of ours, file by file.
fn compare(reference: &Path, ours: &Path) -> Vec<String> {
    let expected = json_files(reference);
    let actual = json_files(ours);
    let mut problems = Vec::new();
    for name in actual.keys().filter(|n| !expected.contains_key(*n)) {
        problems.push(format!("{name}: not in the reference set"));
    }
    for (name, reference_path) in &expected {
        let Some(our_path) = actual.get(name) else {
            problems.push(format!("{name}: missing from {}", ours.display()));
            continue;
        };
        let (reference_tree, our_tree) = (read_tree(reference_path), read_tree(our_path));
        if facts(&reference_tree) != facts(&our_tree) {
            problems.push(format!("{name}: facts differ from the reference"));
        }
        let mut theirs = Vec::new();
        abouts(&reference_tree, &mut theirs);
        let mut mine = Vec::new();
        abouts(&our_tree, &mut mine);
        for text in mine.iter().filter(|t| t.len() > 20 && theirs.contains(t)) {
            problems.push(format!("{name}: about text copied from Kafka: {text:?}"));
        }
    }
    problems
}

#[test]
fn messages_match_the_reference_facts() {
    let Some(shared) = shared_dir() else {
        eprintln!("skipped: ../shared/kafka-schemas is not here (it is in CI)");
        return;
    };
    let root = workspace_root();
    let mut problems = compare(
        &shared.join("kafka-schemas/message"),
        &root.join("messages"),
    );
    problems.extend(compare(
        &shared.join("kafka-schemas/metadata"),
        &root.join("messages/metadata"),
    ));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_changed_fact_is_caught() {
    let text = r#"{"name": "X", "tag": "1", "default": 5, "about": "prose", "ignorable": false}"#;
    let changed = r#"{"name": "X", "tag": 2, "default": "5"}"#;
    let same = r#"{"name": "X", "tag": 1, "default": "5", "about": "other words"}"#;
    let parse = |t: &str| {
        facts(
            &parse::parse(t)
                .map(|p| p.root)
                .unwrap_or_else(|e| panic!("{}", e.message)),
        )
    };
    assert_eq!(parse(text), parse(same));
    assert_ne!(parse(text), parse(changed));
}

/// The rows of a tab-separated table after its header, split into columns.
fn table_rows(path: &Path) -> Vec<Vec<String>> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}

#[test]
fn error_codes_match_kafkas_table() {
    let Some(shared) = shared_dir() else {
        eprintln!("skipped: ../shared/kafka-errors is not here (it is in CI)");
        return;
    };
    // That table is Kafka 4.1's; ours follows the pinned release, which has
    // added codes after it (java_reference.rs checks every one of them
    // against Kafka's own `Errors`). Kafka 4.1's codes are a prefix of ours.
    let kafka = table_rows(&shared.join("kafka-errors/errors.tsv"));
    let ours = table_rows(&workspace_root().join("kafka-protocol/error_codes.tsv"));
    assert!(
        ours.len() >= kafka.len(),
        "one row per code of Kafka's table, at least"
    );
    for (mine, theirs) in ours.iter().zip(&kafka) {
        assert_eq!(
            mine[..3],
            theirs[..3],
            "code, name and retriable are Kafka's"
        );
        let code: i16 = theirs[0].parse().expect("an int16 code");
        let built = kafka_wire::ErrorCode::from_code(code);
        assert_eq!(built.name(), theirs[1], "the built enum has code {code}");
        assert_eq!(built.is_retriable().to_string(), theirs[2], "{}", theirs[1]);
        assert!(!matches!(built, kafka_wire::ErrorCode::Unknown(_)));
    }
}

#[test]
fn every_message_field_and_struct_is_documented() {
    let mut config = kafka_codegen::Config::new();
    config
        .schema_dir(workspace_root().join("messages"))
        .require_docs(true);
    if let Err(error) = config.load() {
        panic!("{error}");
    }
}
