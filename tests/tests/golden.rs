//! Every golden fixture, written by kio (an independent implementation),
//! must decode exactly, match its expected JSON, re-encode to the same
//! bytes, and have a computed size equal to its length. Its JSON form must
//! also convert back to the same bytes.

use std::fs;

use kafka_wire_tests::{decode_by_name, from_json_by_name, workspace_root, Kind};
use serde_json::Value;

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
    let decoded = decode_by_name(case.kind, &case.name, case.version, &case.bytes)
        .map_err(|e| format!("decode: {e:?}"))?;
    let json = decoded.json(case.version);
    if json != case.value {
        return Err(format!(
            "JSON differs:\n  got      {json}\n  expected {}",
            case.value
        ));
    }
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
    let from_json = from_json_by_name(case.kind, &case.name, case.version, &case.value)
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
