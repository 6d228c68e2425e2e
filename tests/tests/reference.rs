//! `messages/` must state exactly the facts of the schema files in Kafka's
//! own jars, at the release `tests/java/pom.xml` pins: `common/message/` of
//! `kafka-clients` for `messages/`, `common/metadata/` of `kafka-metadata`
//! for `messages/metadata/`. Facts are names, types, versions, tags,
//! defaults and flags. Prose (`about` texts and comments) is the project's
//! own, so it is left out of the comparison, and none of it may be copied.
//!
//! The jars come from the local Maven repository, which `.ci/run` fills; on
//! a machine without them the tests skip and say so.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use kafka_codegen::diff::{diff_sets, DiffSummary};
use kafka_codegen::model::{SchemaSet, SourceFile};
use kafka_codegen::parse::{self, Node, Value as Tree};
use kafka_wire_tests::{kafka_jar, kafka_version, shared_dir, workspace_root};
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

fn parse_tree(name: &str, text: &str) -> Node {
    parse::parse(text)
        .unwrap_or_else(|e| panic!("{name}: {}", e.message))
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

/// The `.json` files of one folder of ours, by name, with their text.
fn our_files(dir: &Path) -> BTreeMap<String, String> {
    fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            let text = fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (name.into_owned(), text)
        })
        .collect()
}

/// The `.json` entries directly under `folder` (such as `common/message/`)
/// of a jar, by file name, with their text.
fn jar_files(jar: &Path, folder: &str) -> BTreeMap<String, String> {
    let file = fs::File::open(jar).unwrap_or_else(|e| panic!("{}: {e}", jar.display()));
    let mut archive =
        zip::ZipArchive::new(file).unwrap_or_else(|e| panic!("{}: {e}", jar.display()));
    let mut files = BTreeMap::new();
    for index in 0..archive.len() {
        let mut entry = archive
            .by_index(index)
            .unwrap_or_else(|e| panic!("{}: entry {index}: {e}", jar.display()));
        let Some(name) = entry.name().strip_prefix(folder) else {
            continue;
        };
        if name.contains('/') || !name.ends_with(".json") {
            continue;
        }
        let name = name.to_owned();
        let mut text = String::new();
        entry
            .read_to_string(&mut text)
            .unwrap_or_else(|e| panic!("{}: {folder}{name}: {e}", jar.display()));
        files.insert(name, text);
    }
    assert!(
        !files.is_empty(),
        "{}: nothing under {folder}",
        jar.display()
    );
    files
}

/// Where two fact trees differ, as JSON paths, at most `limit` of them.
fn differences(path: &str, expected: &Value, actual: &Value, out: &mut Vec<String>, limit: usize) {
    if out.len() >= limit || expected == actual {
        return;
    }
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let keys: std::collections::BTreeSet<&String> = e.keys().chain(a.keys()).collect();
            for key in keys {
                let (e, a) = (e.get(key.as_str()), a.get(key.as_str()));
                let child = format!("{path}.{key}");
                match (e, a) {
                    (Some(e), Some(a)) => differences(&child, e, a, out, limit),
                    _ => out.push(format!("{child}: Kafka {e:?}, ours {a:?}")),
                }
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (i, (e, a)) in e.iter().zip(a).enumerate() {
                let name = e.get("name").and_then(Value::as_str).map(str::to_owned);
                let child = format!("{path}[{}]", name.unwrap_or_else(|| i.to_string()));
                differences(&child, e, a, out, limit);
            }
        }
        _ => out.push(format!("{path}: Kafka {expected}, ours {actual}")),
    }
}

/// Compares one folder of Kafka's schema files with one of ours, file by
/// file: the same files, the same facts, and no about text of Kafka's.
fn compare(kafka: &BTreeMap<String, String>, ours: &BTreeMap<String, String>) -> Vec<String> {
    let mut problems = Vec::new();
    for name in ours.keys().filter(|n| !kafka.contains_key(*n)) {
        problems.push(format!("{name}: not in Kafka's jar"));
    }
    for (name, kafka_text) in kafka {
        let Some(our_text) = ours.get(name) else {
            problems.push(format!("{name}: in Kafka's jar, missing from messages/"));
            continue;
        };
        let (kafka_tree, our_tree) = (parse_tree(name, kafka_text), parse_tree(name, our_text));
        let mut found = Vec::new();
        differences("", &facts(&kafka_tree), &facts(&our_tree), &mut found, 10);
        problems.extend(found.into_iter().map(|d| format!("{name}: {d}")));
        let mut theirs = Vec::new();
        abouts(&kafka_tree, &mut theirs);
        let mut mine = Vec::new();
        abouts(&our_tree, &mut mine);
        for text in mine.iter().filter(|t| t.len() > 20 && theirs.contains(t)) {
            problems.push(format!("{name}: about text copied from Kafka: {text:?}"));
        }
    }
    problems
}

#[test]
fn messages_match_the_facts_of_kafkas_jars() {
    let version = kafka_version();
    let (Some(clients), Some(metadata)) = (
        kafka_jar("kafka-clients", &version),
        kafka_jar("kafka-metadata", &version),
    ) else {
        eprintln!(
            "skipped: kafka-clients and kafka-metadata {version} are not in ~/.m2 \
             (.ci/run puts them there)"
        );
        return;
    };
    let root = workspace_root();
    let mut problems = compare(
        &jar_files(&clients, "common/message/"),
        &our_files(&root.join("messages")),
    );
    problems.extend(
        compare(
            &jar_files(&metadata, "common/metadata/"),
            &our_files(&root.join("messages/metadata")),
        )
        .into_iter()
        .map(|p| format!("metadata/{p}")),
    );
    assert!(
        problems.is_empty(),
        "messages/ differs from Kafka {version}'s jars:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_missing_extra_or_changed_file_is_caught() {
    let file = |text: &str| BTreeMap::from([("X.json".to_owned(), text.to_owned())]);
    let kafka = file(r#"{"name": "X", "tag": 1, "about": "Kafka's own words about this thing."}"#);
    let same = file(r#"{"name": "X", "tag": "1", "about": "Our words."}"#);
    assert!(compare(&kafka, &same).is_empty());
    let changed = file(r#"{"name": "X", "tag": 2, "about": "Our words."}"#);
    assert_eq!(compare(&kafka, &changed), ["X.json: .tag: Kafka 1, ours 2"]);
    let nested = |ty: &str| {
        file(&format!(
            r#"{{"name": "X", "tag": 1, "fields": [{{"name": "A", "type": "{ty}"}}]}}"#
        ))
    };
    assert_eq!(
        compare(&nested("int8"), &nested("int16")),
        [r#"X.json: .fields[A].type: Kafka "int8", ours "int16""#]
    );
    let copied = file(r#"{"name": "X", "tag": 1, "about": "Kafka's own words about this thing."}"#);
    assert_eq!(compare(&kafka, &copied).len(), 1, "copied prose");
    assert_eq!(compare(&kafka, &BTreeMap::new()).len(), 1, "a missing file");
    assert_eq!(compare(&BTreeMap::new(), &same).len(), 1, "an extra file");
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
    let ours = table_rows(&workspace_root().join("kafka-protocol/wire/error_codes.tsv"));
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

/// The diff lines and summary `kafka-codegen diff` prints between two sets
/// of schema files.
fn diff_text(old: &BTreeMap<String, String>, new: &BTreeMap<String, String>) -> String {
    let set = |files: &BTreeMap<String, String>| {
        let sources: Vec<SourceFile> = files
            .iter()
            .map(|(name, text)| SourceFile {
                path: PathBuf::from(name),
                text: text.clone(),
            })
            .collect();
        SchemaSet::from_sources(&sources)
    };
    let changes = diff_sets(&set(old), &set(new));
    let mut text: Vec<String> = changes.iter().map(ToString::to_string).collect();
    text.push(DiffSummary::of(&changes).to_string());
    text.join("\n")
}

/// The text of the fenced block after `heading` in `doc`.
fn block_after<'d>(doc: &'d str, heading: &str) -> &'d str {
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?} in the changelog"));
    let rest = &doc[start..];
    let open = rest.find("```text\n").map(|i| i + "```text\n".len());
    let open = open.unwrap_or_else(|| panic!("no text block after {heading:?}"));
    let close = rest[open..]
        .find("\n```")
        .unwrap_or_else(|| panic!("the block after {heading:?} is not closed"));
    &rest[open..open + close]
}

/// `messages/CHANGES-4.1.0-to-4.4.0.md`, the upgrade's changelog, shows what
/// `kafka-codegen diff` says between the schemas of the 4.1.0 jars and those
/// of the pinned release, line for line.
#[test]
fn the_upgrade_changelog_is_the_diff_between_the_releases_jars() {
    let version = kafka_version();
    let jars = (
        kafka_jar("kafka-clients", "4.1.0"),
        kafka_jar("kafka-clients", &version),
        kafka_jar("kafka-metadata", "4.1.0"),
        kafka_jar("kafka-metadata", &version),
    );
    let (Some(old_clients), Some(new_clients), Some(old_metadata), Some(new_metadata)) = jars
    else {
        eprintln!("skipped: Kafka's 4.1.0 and {version} jars are not in ~/.m2 (CI fetches them)");
        return;
    };
    let doc_path = workspace_root().join(format!("messages/CHANGES-4.1.0-to-{version}.md"));
    let doc =
        fs::read_to_string(&doc_path).unwrap_or_else(|e| panic!("{}: {e}", doc_path.display()));
    for (heading, old, new, folder) in [
        (
            "### Messages",
            &old_clients,
            &new_clients,
            "common/message/",
        ),
        (
            "### KRaft metadata records",
            &old_metadata,
            &new_metadata,
            "common/metadata/",
        ),
    ] {
        let actual = diff_text(&jar_files(old, folder), &jar_files(new, folder));
        assert_eq!(
            block_after(&doc, heading),
            actual,
            "{}: the block under {heading:?} is not what the diff prints",
            doc_path.display()
        );
    }
}
