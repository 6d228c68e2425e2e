//! The sweep: every api and version both sides advertise, each with a
//! default body and a realistic one, sent where a client would send it.
//!
//! The bodies live in one place, `sweep.json` beside this file: the
//! realistic body of each api (written once over all versions, and fitted
//! to each by [`crate::body::fit`]), the route a client takes, and the
//! fields that keep a request from wrecking a node (laid over both
//! bodies). Besides the comparison, the version sweep of kafka-wire's own
//! tests sends them to real Kafka's client and controller listeners
//! ([`realistic`] with [`Listener::Controller`]).
//!
//! A sweep case is named `sweep/<Api>/v<version>/default` or
//! `sweep/<Api>/v<version>/realistic`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use kafka_wire::runtime::json::overlay;
use kafka_wire::ApiKey;
use kafka_wire_records::{Compression, Header, RecordBatchBuilder};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::case::{Area, Case, Check, Route, Step, Until, VersionChoice};
use crate::error::CaseError;
use crate::side::Knowledge;

/// The sweep's topic (logical name): one partition, created by the run.
pub const TOPIC: &str = "sweep";

/// The codecs a realistic Produce carries, picked by version modulo 5.
pub const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

/// The listener a body is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// A broker's client listener (what the comparison sends to).
    Client,
    /// A controller's listener.
    Controller,
}

/// One api's entry of `sweep.json`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Where a client sends it.
    #[serde(default)]
    pub route: Route,
    /// Laid over both bodies.
    #[serde(default = "empty_object")]
    pub safe: Value,
    /// The realistic body.
    #[serde(default = "empty_object")]
    pub body: Value,
    /// The realistic body on a controller listener, where it differs.
    #[serde(default)]
    pub controller: Option<Value>,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// Every api's entry, parsed once from `sweep.json`.
pub fn entries() -> &'static BTreeMap<ApiKey, Entry> {
    static ENTRIES: OnceLock<BTreeMap<ApiKey, Entry>> = OnceLock::new();
    ENTRIES.get_or_init(|| {
        // A test parses it and checks every entry (`the_bodies_are_valid`).
        parse(include_str!("sweep.json")).unwrap_or_default()
    })
}

/// Parses sweep data: an object of entries by api name (a `//` key holds
/// comments).
pub fn parse(text: &str) -> Result<BTreeMap<ApiKey, Entry>, CaseError> {
    let data = |why: String| CaseError::Data {
        what: "sweep.json".into(),
        why,
    };
    let all: Map<String, Value> = serde_json::from_str(text).map_err(|e| data(e.to_string()))?;
    let mut entries = BTreeMap::new();
    for (name, value) in all {
        if name == "//" {
            continue;
        }
        let api =
            ApiKey::from_name(&name).ok_or_else(|| data(format!("no api is named `{name}`")))?;
        let entry: Entry =
            serde_json::from_value(value).map_err(|e| data(format!("{name}: {e}")))?;
        for template in [&entry.safe, &entry.body]
            .into_iter()
            .chain(&entry.controller)
        {
            crate::template::placeholders(template).map_err(|error| CaseError::Template {
                what: format!("sweep.json: {name}"),
                error,
            })?;
        }
        entries.insert(api, entry);
    }
    Ok(entries)
}

/// Where a client sends `api`.
pub fn route(api: ApiKey) -> Route {
    entries()
        .get(&api)
        .map(|e| e.route.clone())
        .unwrap_or_default()
}

/// The default body of `api` as the sweep sends it: the fields that keep
/// it safe, the rest defaults (a template).
pub fn default_body(api: ApiKey) -> Value {
    entries()
        .get(&api)
        .map_or_else(empty_object, |e| e.safe.clone())
}

/// The realistic body of `api` at `version` for `listener` (a template;
/// `${records}` already stands for the version's codec,
/// `${records.<codec>}`).
pub fn realistic(api: ApiKey, version: i16, listener: Listener) -> Value {
    let Some(entry) = entries().get(&api) else {
        return empty_object();
    };
    let mut body = match (&entry.controller, listener) {
        (Some(controller), Listener::Controller) => controller.clone(),
        _ => entry.body.clone(),
    };
    overlay(&mut body, entry.safe.clone());
    let codec = CODECS[usize::try_from(version).unwrap_or(0) % CODECS.len()];
    pick_records(&mut body, &format!("${{records.{}}}", codec_name(codec)));
    body
}

/// The name a codec's batch is bound under: `records.<name>`.
pub fn codec_name(codec: Compression) -> &'static str {
    match codec {
        Compression::None => "none",
        Compression::Gzip => "gzip",
        Compression::Snappy => "snappy",
        Compression::Lz4 => "lz4",
        Compression::Zstd => "zstd",
    }
}

fn pick_records(value: &mut Value, placeholder: &str) {
    match value {
        Value::String(text) if text == "${records}" => *text = placeholder.to_owned(),
        Value::Array(items) => items.iter_mut().for_each(|v| pick_records(v, placeholder)),
        Value::Object(map) => map.values_mut().for_each(|v| pick_records(v, placeholder)),
        _ => {}
    }
}

/// A batch of three records in each codec, base64 as the JSON form writes
/// `records`, by codec name: the same bytes on both sides and in every
/// run (their timestamps are fixed, in 2023).
pub fn batches() -> BTreeMap<&'static str, String> {
    CODECS
        .into_iter()
        .map(|codec| {
            let mut builder = RecordBatchBuilder::new(0).compression(codec);
            for i in 0..3u8 {
                let value = format!("{codec:?} record {i} ").repeat(20);
                let appended = builder.append(
                    1_700_000_000_000 + i64::from(i),
                    Some(&[b'k', i]),
                    Some(value.as_bytes()),
                    &[Header::new("codec", Some(format!("{codec:?}").as_bytes()))],
                );
                debug_assert!(appended.is_ok());
            }
            let bytes = builder.build().unwrap_or_default();
            (codec_name(codec), STANDARD.encode(bytes))
        })
        .collect()
}

/// The error codes a client sends a request again for, whatever its api:
/// a coordinator (or the producer id manager of InitProducerId) loads
/// (COORDINATOR_LOAD_IN_PROGRESS) or is not available yet
/// (COORDINATOR_NOT_AVAILABLE), as on a cluster just started.
pub const RETRIABLE: [i64; 2] = [14, 15];

/// What a client also sends a coordinator's request again for: the
/// coordinator moved (NOT_COORDINATOR; the engine then looks it up again).
pub const COORDINATOR_RETRIABLE: [i64; 3] = [14, 15, 16];

/// The sweep's cases: for every api and version that both sides advertise
/// and kafka-wire knows, in key and version order, a default body then a
/// realistic one; only the apis in `only` when it is not empty. A request
/// is sent again while its answer says a coordinator loads
/// ([`RETRIABLE`]), and a request to a coordinator while it loads or moved
/// ([`COORDINATOR_RETRIABLE`]), within the case's time.
pub fn cases(reference: &Knowledge, candidate: &Knowledge, only: &[ApiKey]) -> Vec<Case> {
    let mut cases = Vec::new();
    for (&key, &(ref_min, ref_max)) in &reference.versions {
        let Some(&(cand_min, cand_max)) = candidate.versions.get(&key) else {
            continue;
        };
        let Some(api) = ApiKey::from_key(key) else {
            continue;
        };
        if !only.is_empty() && !only.contains(&api) {
            continue;
        }
        for version in ref_min.max(cand_min)..=ref_max.min(cand_max) {
            if !api.supports_version(version) {
                continue;
            }
            for (variant, body) in [
                ("default", default_body(api)),
                ("realistic", realistic(api, version, Listener::Client)),
            ] {
                let route = route(api);
                let mut step = Step::new(api, VersionChoice::Exact(version), route.clone(), body);
                let retriable = match route {
                    Route::Coordinator(_) => &COORDINATOR_RETRIABLE[..],
                    _ => &RETRIABLE[..],
                };
                step.until = Some(Until {
                    not_errors: retriable.to_vec(),
                    ..Until::default()
                });
                cases.push(Case {
                    name: format!("sweep/{}/v{version}/{variant}", api.name()),
                    area: Area::Sweep,
                    api: Some(api),
                    version: Some(version),
                    check: Check::Steps(vec![step]),
                });
            }
        }
    }
    cases
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::fit;
    use crate::template::{placeholders, Bindings};

    /// Every object key of `given`, with its path, descending into the
    /// first element of arrays.
    fn keys(given: &Value, at: &str, out: &mut Vec<String>) {
        match given {
            Value::Object(map) => {
                for (k, v) in map {
                    let path = if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    };
                    out.push(path.clone());
                    keys(v, &path, out);
                }
            }
            Value::Array(items) => {
                if let Some(first) = items.first() {
                    keys(first, &format!("{at}[0]"), out);
                }
            }
            _ => {}
        }
    }

    fn has_path(value: &Value, path: &str) -> bool {
        crate::path::JsonPath::parse(path)
            .ok()
            .is_some_and(|p| p.first(value).is_some())
    }

    /// Binds every placeholder of the sweep's bodies to a value of the
    /// right shape.
    fn sample_bindings(template: &Value) -> Bindings {
        let mut b = Bindings::new();
        for name in placeholders(template).unwrap() {
            let value = if name.starts_with("topicId.") {
                Value::from("AAAAAAAAAAAAAAAAAAAAAQ")
            } else if let Some(codec) = name.strip_prefix("records.") {
                Value::from(batches()[codec].clone())
            } else {
                Value::from(format!("kwc-0-r-{name}"))
            };
            b.insert(name, value);
        }
        b
    }

    #[test]
    fn the_bodies_are_valid() {
        let parsed = parse(include_str!("sweep.json")).unwrap();
        assert!(parsed.len() > 60, "{}", parsed.len());
        for (api, entry) in &parsed {
            for listener in [Listener::Client, Listener::Controller] {
                // Every key written is a field of some version (a misspelt
                // key would be dropped silently by `fit`), and every version
                // builds.
                let template = realistic(*api, api.highest_version(), listener);
                let mut written = Vec::new();
                keys(&template, "", &mut written);
                let bound = sample_bindings(&template).resolve(&template).unwrap();
                let mut seen = vec![false; written.len()];
                for version in api.lowest_version()..=api.highest_version() {
                    let body = realistic(*api, version, listener);
                    let body = sample_bindings(&body).resolve(&body).unwrap();
                    let fitted = fit(*api, version, &body)
                        .unwrap_or_else(|e| panic!("{}: {e}", api.name()))
                        .to_json(version);
                    for (i, path) in written.iter().enumerate() {
                        seen[i] |= has_path(&fitted, path);
                    }
                    let default = sample_bindings(&default_body(*api))
                        .resolve(&default_body(*api))
                        .map(|b| fit(*api, version, &b));
                    assert!(
                        matches!(default, Ok(Ok(_))),
                        "{} v{version}: the default body does not build",
                        api.name()
                    );
                }
                let unused: Vec<&String> = written
                    .iter()
                    .zip(&seen)
                    .filter(|(_, seen)| !**seen)
                    .map(|(path, _)| path)
                    .collect();
                assert!(
                    unused.is_empty(),
                    "{}: keys no version has: {unused:?} in {bound}",
                    api.name()
                );
            }
            let _ = entry;
        }
    }

    #[test]
    fn a_realistic_produce_carries_the_versions_codec() {
        let body = realistic(ApiKey::Produce, 7, Listener::Client);
        assert_eq!(
            body["topicData"][0]["partitionData"][0]["records"],
            "${records.snappy}"
        );
        let batches = batches();
        assert_eq!(batches.len(), 5);
        assert_eq!(
            batches,
            super::batches(),
            "the batches are the same every time"
        );
        let fetch = realistic(ApiKey::Fetch, 12, Listener::Controller);
        assert_eq!(fetch["topics"][0]["topic"], "__cluster_metadata");
    }

    #[test]
    fn cases_cover_the_versions_both_sides_advertise() {
        let side = |ranges: &[(i16, i16, i16)]| Knowledge {
            versions: ranges.iter().map(|&(k, a, b)| (k, (a, b))).collect(),
            ..Knowledge::default()
        };
        // Produce 3-9 against 5-12; Fetch on one side only; an unknown key.
        let reference = side(&[(0, 3, 9), (1, 4, 12), (500, 0, 1)]);
        let candidate = side(&[(0, 5, 12), (500, 0, 1)]);
        let cases = cases(&reference, &candidate, &[]);
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.len(), 10);
        assert_eq!(names[0], "sweep/Produce/v5/default");
        assert_eq!(names[1], "sweep/Produce/v5/realistic");
        assert_eq!(names[9], "sweep/Produce/v9/realistic");
        assert!(cases.iter().all(|c| c.area == Area::Sweep));
        assert!(super::cases(&reference, &candidate, &[ApiKey::Fetch]).is_empty());
    }
}
