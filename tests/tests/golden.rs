//! Every golden fixture, written by kio (an independent implementation),
//! must decode exactly, match its expected JSON, re-encode to the same
//! bytes, and have a computed size equal to its length. Its JSON form must
//! also convert back to the same bytes, and the streaming writer must print
//! it byte for byte as serde_json prints the JSON form, compact and pretty.
//!
//! kio wrote the fixtures from Kafka 4.1's schemas; `messages/` states Kafka
//! 4.4.0's. Where the two disagree the release wins, and the fixture is a
//! named exception in [`RENAMED`], which a test below keeps honest.

use std::fs;

use kafka_wire_tests::{check_streamed, decode_by_name, from_json_by_name, workspace_root, Kind};
use serde_json::Value;

/// A field that Kafka renamed after kio wrote the fixtures, at versions kio
/// covers, without changing its bytes.
struct Renamed {
    message: &'static str,
    versions: std::ops::RangeInclusive<i16>,
    /// The top-level JSON key in the fixture, kio's (Kafka 4.1's) name.
    old: &'static str,
    /// The same key in Kafka 4.4.0's schema, and in our JSON form.
    new: &'static str,
    why: &'static str,
}

/// The fixtures Kafka 4.4.0 contradicts. Their expected JSON is checked with
/// the key renamed; their bytes, size and JSON round trip are checked as for
/// every other case.
const RENAMED: &[Renamed] = &[
    Renamed {
        message: "TxnOffsetCommitRequest",
        versions: 3..=5,
        old: "generationId",
        new: "generationIdOrMemberEpoch",
        why: "Kafka 4.4.0 renamed GenerationId to GenerationIdOrMemberEpoch: the same int32, \
              now also carrying a consumer-protocol member's epoch",
    },
    Renamed {
        message: "StreamsGroupHeartbeatResponse",
        versions: 0..=0,
        old: "acceptableRecoveryLag",
        new: "acceptableRecoveryLagLegacy",
        why: "Kafka 4.4.0 renamed the int32 AcceptableRecoveryLag of version 0 to \
              AcceptableRecoveryLagLegacy, and gave the name to an int64 field of version 1+",
    },
];

/// The exception that covers `name` at `version`, if any.
fn renamed(name: &str, version: i16) -> Option<&'static Renamed> {
    RENAMED
        .iter()
        .find(|r| r.message == name && r.versions.contains(&version))
}

/// `value` with the renamed key under its Kafka 4.4.0 name, in its place.
fn with_new_name(value: &Value, rename: &Renamed) -> Value {
    let Value::Object(members) = value else {
        return value.clone();
    };
    let renamed = members.iter().map(|(key, v)| {
        let key = if key == rename.old { rename.new } else { key };
        (key.to_owned(), v.clone())
    });
    Value::Object(renamed.collect())
}

struct Case {
    file: String,
    name: String,
    kind: Kind,
    version: i16,
    seed: i64,
    bytes: Vec<u8>,
    value: Value,
}

fn load_cases() -> Vec<Case> {
    let dir = workspace_root().join("fixtures/golden");
    let mut paths: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let mut cases = Vec::new();
    for path in paths {
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let doc: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = doc["name"].as_str().unwrap_or_default().to_owned();
        let kind = match doc["type"].as_str() {
            Some("request") => Kind::Request,
            Some("response") => Kind::Response,
            Some("header") => Kind::Header,
            other => panic!("{}: unknown type {other:?}", path.display()),
        };
        for case in doc["cases"].as_array().cloned().unwrap_or_default() {
            cases.push(Case {
                file: path
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned(),
                name: name.clone(),
                kind,
                version: case["version"]
                    .as_i64()
                    .and_then(|v| i16::try_from(v).ok())
                    .unwrap_or(-1),
                seed: case["seed"].as_i64().unwrap_or(-1),
                bytes: hex::decode(case["hex"].as_str().unwrap_or_default())
                    .unwrap_or_else(|e| panic!("{}: bad hex: {e}", path.display())),
                value: case["value"].clone(),
            });
        }
    }
    cases
}

fn check(case: &Case) -> Result<(), String> {
    let expected = match renamed(&case.name, case.version) {
        Some(rename) => with_new_name(&case.value, rename),
        None => case.value.clone(),
    };
    let decoded = decode_by_name(case.kind, &case.name, case.version, &case.bytes)
        .map_err(|e| format!("decode: {e:?}"))?;
    let json = decoded.json(case.version);
    if json != expected {
        return Err(format!(
            "JSON differs:\n  got      {json}\n  expected {expected}"
        ));
    }
    check_streamed(&json, |pretty| decoded.json_text(case.version, pretty))?;
    let encoded = decoded
        .bytes(case.version)
        .map_err(|e| format!("encode: {e}"))?;
    if encoded != case.bytes {
        return Err(format!(
            "re-encoded bytes differ:\n  got      {}\n  expected {}",
            hex::encode(&encoded),
            hex::encode(&case.bytes)
        ));
    }
    let len = decoded.len(case.version);
    if len != case.bytes.len() {
        return Err(format!("computed size {len}, actual {}", case.bytes.len()));
    }
    let from_json = from_json_by_name(case.kind, &case.name, case.version, &expected)
        .map_err(|e| format!("from JSON: {e:?}"))?;
    let encoded = from_json
        .bytes(case.version)
        .map_err(|e| format!("encode from JSON: {e}"))?;
    if encoded != case.bytes {
        return Err(format!(
            "bytes from JSON differ:\n  got      {}\n  expected {}",
            hex::encode(&encoded),
            hex::encode(&case.bytes)
        ));
    }
    Ok(())
}

#[test]
fn every_golden_fixture_round_trips() {
    let cases = load_cases();
    assert!(
        cases.len() > 2000,
        "only {} golden cases found",
        cases.len()
    );
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            check(case).err().map(|why| {
                format!(
                    "{} {} v{} seed {}: {why}",
                    case.file, case.name, case.version, case.seed
                )
            })
        })
        .collect();
    let shown: Vec<&String> = failures.iter().take(20).collect();
    assert!(
        failures.is_empty(),
        "{} of {} golden cases failed; first ones:\n{}",
        failures.len(),
        cases.len(),
        shown
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn vote_request_v2_fixtures_cover_pre_vote_true_and_false() {
    let cases = load_cases();
    let pre_votes: Vec<bool> = cases
        .iter()
        .filter(|c| c.name == "VoteRequest" && c.version == 2)
        .flat_map(|c| {
            c.value["topics"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|t| t["partitions"].as_array().into_iter().flatten())
                .filter_map(|p| p["preVote"].as_bool())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        pre_votes.contains(&true),
        "no VoteRequest v2 fixture with PreVote true"
    );
    assert!(
        pre_votes.contains(&false),
        "no VoteRequest v2 fixture with PreVote false"
    );
}

/// Each exception is still needed and still true: every fixture it covers
/// has kio's key and not Kafka 4.4.0's, `messages/` has the new field and
/// not the old one at those versions, and decoding with the old name fails.
#[test]
fn fixtures_kafka_4_4_contradicts_are_renames_of_the_same_bytes() {
    let cases = load_cases();
    let set = kafka_codegen::model::SchemaSet::load(&[workspace_root().join("messages")])
        .unwrap_or_else(|e| panic!("{e}"));
    let camel = |name: &str| name[..1].to_lowercase() + &name[1..];
    for rename in RENAMED {
        let covered: Vec<&Case> = cases
            .iter()
            .filter(|c| c.name == rename.message && rename.versions.contains(&c.version))
            .collect();
        assert!(
            !covered.is_empty(),
            "{}: no fixture left to except",
            rename.message
        );
        for case in &covered {
            let why = format!("{} v{}: {}", case.name, case.version, rename.why);
            assert!(case.value.get(rename.old).is_some(), "{why}");
            assert!(case.value.get(rename.new).is_none(), "{why}");
            assert!(
                check_with_old_name_fails(case),
                "{why}: the fixture's JSON, as kio wrote it, matches again"
            );
        }
        let schema = set
            .find(rename.message)
            .unwrap_or_else(|| panic!("{} is not in messages/", rename.message));
        for version in rename.versions.clone() {
            let names: Vec<String> = schema
                .fields
                .iter()
                .filter(|f| f.versions.contains(version))
                .map(|f| camel(&f.name))
                .collect();
            assert!(names.iter().any(|n| n == rename.new), "{}", rename.why);
            assert!(!names.iter().any(|n| n == rename.old), "{}", rename.why);
        }
    }
}

/// True when the case, checked against its JSON exactly as kio wrote it,
/// fails: our decoded JSON names the field otherwise.
fn check_with_old_name_fails(case: &Case) -> bool {
    decode_by_name(case.kind, &case.name, case.version, &case.bytes)
        .map(|decoded| decoded.json(case.version) != case.value)
        .unwrap_or(true)
}
