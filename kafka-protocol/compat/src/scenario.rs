//! Scenarios: stateful flows, as data. Each file of
//! `kafka-protocol/compat/scenarios/` is one scenario, named by its file
//! (`produce.json` is `produce`): the topics it needs and a list of cases,
//! each a list of [`Step`]s. A case is named
//! `scenario/<scenario>/<case>` (`scenario/produce/acks-all-gzip`).
//!
//! ```json
//! {"topics": {"acks": {"partitions": 1, "configs": {"retention.ms": "-1"}}},
//!  "cases": [
//!    {"name": "acks-all-gzip", "steps": [
//!      {"api": "Produce", "route": {"leader": {"topic": "${topic.acks}", "partition": 0}},
//!       "body": {"acks": -1, "timeoutMs": 5000, "topicData": [{"name": "${topic.acks}",
//!                "topicId": "${topicId.acks}",
//!                "partitionData": [{"index": 0, "records": "${records.gzip}"}]}]}}]}]}
//! ```
//!
//! The run creates every topic of the selected scenarios in its setup,
//! with the sweep's (topic names are shared by all scenarios: two that
//! declare one name must declare it alike). A case's `api` is the api it
//! is about (by default its first compared step's); `needs: {"brokers": N}`
//! runs it only where both sides have N brokers or more (a request sent to
//! a broker that does not lead the partition needs two). A step without
//! `until` is sent again while a coordinator loads or is not available,
//! and a coordinator's step also while the coordinator moved, as in the
//! sweep.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use kafka_wire::ApiKey;
use serde::Deserialize;

use crate::case::{Area, Case, Check, Route, Step, Until};
use crate::error::CaseError;
use crate::side::Knowledge;
use crate::sweep::{COORDINATOR_RETRIABLE, RETRIABLE};

/// The scenario files, by name, as the package holds them.
pub const FILES: &[(&str, &str)] = &[
    ("produce", include_str!("../scenarios/produce.json")),
    ("idempotence", include_str!("../scenarios/idempotence.json")),
    (
        "transactions",
        include_str!("../scenarios/transactions.json"),
    ),
    ("groups", include_str!("../scenarios/groups.json")),
    (
        "consumer-groups",
        include_str!("../scenarios/consumer-groups.json"),
    ),
    ("offsets", include_str!("../scenarios/offsets.json")),
    ("admin", include_str!("../scenarios/admin.json")),
    ("limits", include_str!("../scenarios/limits.json")),
    (
        "share-groups",
        include_str!("../scenarios/share-groups.json"),
    ),
    ("errors", include_str!("../scenarios/errors.json")),
];

/// A topic a scenario needs.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicSpec {
    /// Its partitions.
    #[serde(default = "one")]
    pub partitions: i64,
    /// Its configs at creation.
    #[serde(default)]
    pub configs: BTreeMap<String, String>,
}

fn one() -> i64 {
    1
}

impl Default for TopicSpec {
    fn default() -> Self {
        TopicSpec {
            partitions: 1,
            configs: BTreeMap::new(),
        }
    }
}

/// What a case needs of both sides to run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Needs {
    /// At least this many brokers on each side.
    #[serde(default)]
    pub brokers: usize,
}

/// One case of a scenario.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioCase {
    /// Its name within the scenario.
    pub name: String,
    /// The api it is about (by default its first compared step's).
    #[serde(default, deserialize_with = "api_name")]
    pub api: Option<ApiKey>,
    /// What it needs to run.
    #[serde(default)]
    pub needs: Needs,
    /// Its steps.
    pub steps: Vec<Step>,
}

fn api_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<ApiKey>, D::Error> {
    let name = String::deserialize(d)?;
    ApiKey::from_name(&name)
        .map(Some)
        .ok_or_else(|| serde::de::Error::custom(format!("no api is named `{name}`")))
}

/// One scenario file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Its name (the file's, set when loaded).
    #[serde(skip)]
    pub name: String,
    /// Comments.
    #[serde(default, rename = "//")]
    pub comment: serde_json::Value,
    /// The topics it needs, by logical name.
    #[serde(default)]
    pub topics: BTreeMap<String, TopicSpec>,
    /// Its cases.
    pub cases: Vec<ScenarioCase>,
}

/// Parses one scenario file named `name`, checking its placeholders and
/// that its case names are unique.
pub fn parse(name: &str, text: &str) -> Result<Scenario, CaseError> {
    let data = |why: String| CaseError::Data {
        what: format!("scenarios/{name}.json"),
        why,
    };
    let mut scenario: Scenario = serde_json::from_str(text).map_err(|e| data(e.to_string()))?;
    scenario.name = name.to_owned();
    let mut seen = std::collections::BTreeSet::new();
    for case in &scenario.cases {
        if !seen.insert(case.name.as_str()) {
            return Err(data(format!("two cases are named `{}`", case.name)));
        }
        if case.steps.is_empty() {
            return Err(data(format!("{}: no steps", case.name)));
        }
        for step in &case.steps {
            crate::template::placeholders(&step.body).map_err(|error| CaseError::Template {
                what: format!("scenarios/{name}.json: {}", case.name),
                error,
            })?;
        }
    }
    Ok(scenario)
}

/// Every scenario the package holds, parsed once (a test checks that each
/// parses: `every_file_parses`).
pub fn all() -> &'static [Scenario] {
    static ALL: OnceLock<Vec<Scenario>> = OnceLock::new();
    ALL.get_or_init(|| {
        FILES
            .iter()
            .filter_map(|(name, text)| parse(name, text).ok())
            .collect()
    })
}

/// The names of every scenario, in order.
pub fn names() -> Vec<String> {
    FILES.iter().map(|(name, _)| (*name).to_owned()).collect()
}

/// A scenario name no file has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no scenario is named `{name}`; the scenarios: {}", known.join(", "))]
pub struct UnknownScenario {
    /// The name asked for.
    pub name: String,
    /// The names there are.
    pub known: Vec<String>,
}

/// Checks that every name in `wanted` is a scenario's.
pub fn check(wanted: &[String]) -> Result<(), UnknownScenario> {
    let known = names();
    match wanted.iter().find(|w| !known.contains(w)) {
        Some(name) => Err(UnknownScenario {
            name: name.clone(),
            known,
        }),
        None => Ok(()),
    }
}

/// The scenarios named in `wanted`, in the package's order.
pub fn selected(wanted: &[String]) -> Vec<&'static Scenario> {
    all().iter().filter(|s| wanted.contains(&s.name)).collect()
}

/// The topics the scenarios need, by logical name (the first declaration
/// of a name wins; a test checks that no two differ).
pub fn topics(scenarios: &[&Scenario]) -> BTreeMap<String, TopicSpec> {
    let mut topics = BTreeMap::new();
    for scenario in scenarios {
        for (name, spec) in &scenario.topics {
            topics.entry(name.clone()).or_insert_with(|| spec.clone());
        }
    }
    topics
}

/// The cases of `scenarios` that both sides can run, and whose api is in
/// `only` when it is not empty.
pub fn cases(
    scenarios: &[&Scenario],
    reference: &Knowledge,
    candidate: &Knowledge,
    only: &[ApiKey],
) -> Vec<Case> {
    let brokers = reference.brokers.len().min(candidate.brokers.len());
    let mut cases = Vec::new();
    for scenario in scenarios {
        for case in &scenario.cases {
            let api = case.api.or_else(|| {
                case.steps
                    .iter()
                    .find(|s| s.compare)
                    .or(case.steps.first())
                    .map(|s| s.api)
            });
            if case.needs.brokers > brokers {
                continue;
            }
            if !only.is_empty() && !api.is_some_and(|api| only.contains(&api)) {
                continue;
            }
            let steps = case
                .steps
                .iter()
                .map(|step| {
                    let mut step = step.clone();
                    if step.until.is_none() {
                        let retriable = match step.route {
                            Route::Coordinator(_) => &COORDINATOR_RETRIABLE[..],
                            _ => &RETRIABLE[..],
                        };
                        step.until = Some(Until {
                            not_errors: retriable.to_vec(),
                            ..Until::default()
                        });
                    }
                    step
                })
                .collect();
            cases.push(Case {
                name: format!("scenario/{}/{}", scenario.name, case.name),
                area: Area::Scenario,
                api,
                version: None,
                check: Check::Steps(steps),
            });
        }
    }
    cases
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_parses() {
        let mut topics: BTreeMap<String, (String, TopicSpec)> = BTreeMap::new();
        let mut total = 0;
        for (name, text) in FILES {
            let scenario = parse(name, text).unwrap_or_else(|e| panic!("{e}"));
            assert!(!scenario.cases.is_empty(), "{name}");
            total += scenario.cases.len();
            for (topic, spec) in &scenario.topics {
                if let Some((first, earlier)) = topics.get(topic) {
                    assert_eq!(earlier, spec, "{topic} in {first} and {name}");
                } else {
                    topics.insert(topic.clone(), ((*name).to_owned(), spec.clone()));
                }
            }
            // Every topic a case names is one the scenarios create (or
            // the sweep's).
            for case in &scenario.cases {
                for step in &case.steps {
                    let names = crate::template::placeholders(&step.body).unwrap();
                    for name in names {
                        if let Some(t) = name
                            .strip_prefix("topic.")
                            .or_else(|| name.strip_prefix("topicId."))
                        {
                            assert!(
                                scenario.topics.contains_key(t) || t == crate::sweep::TOPIC,
                                "{name}/{}: topic `{t}` is not declared",
                                case.name
                            );
                        }
                    }
                }
            }
        }
        assert_eq!(all().len(), FILES.len());
        assert!(total > 0);
    }

    #[test]
    fn unknown_names_are_refused_with_the_known_ones() {
        assert!(check(&["produce".into()]).is_ok());
        let error = check(&["produce".into(), "nope".into()]).unwrap_err();
        assert_eq!(error.name, "nope");
        assert!(error.to_string().contains("produce, "), "{error}");
    }
}
