//! Cases as data: what the engine sends to both sides and compares.
//!
//! A case is a name, an area, the api and version it is about, and either
//! a check of what the sides advertise ([`Check::Surface`]) or steps
//! ([`Check::Steps`]): requests in the codec's JSON form with placeholders
//! ([`crate::template`]), each sent where a client would send it
//! ([`Route`]), optionally retried until its answer is what a client waits
//! for ([`Until`]), teaching later steps the values it names ([`Step::learn`]).
//! Steps deserialize from JSON:
//!
//! ```json
//! {"api": "InitProducerId", "route": {"coordinator": {"transaction": "${txn.pay}"}},
//!  "body": {"transactionalId": "${txn.pay}", "transactionTimeoutMs": 60000},
//!  "until": {"notErrors": [14, 15, 16, 51]},
//!  "learn": {"producerId": "producerId", "producerEpoch": "producerEpoch"}}
//! ```

use std::collections::BTreeMap;
use std::fmt;

use kafka_wire::ApiKey;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The part of the comparison a case belongs to. Its JSON names
/// (`surface`, `sweep`, `scenario`, `replay`) are pinned: outside tools
/// read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Area {
    /// What each side advertises in ApiVersions: apis, versions, features.
    Surface,
    /// Every api and version both sides advertise, one request each.
    Sweep,
    /// Stateful flows, step by step.
    Scenario,
    /// Requests taken from a capture of real traffic.
    Replay,
}

impl Area {
    /// The pinned name.
    pub fn name(self) -> &'static str {
        match self {
            Area::Surface => "surface",
            Area::Sweep => "sweep",
            Area::Scenario => "scenario",
            Area::Replay => "replay",
        }
    }
}

impl fmt::Display for Area {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One case.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// A stable name, such as `sweep/Produce/v9/realistic`.
    pub name: String,
    /// Its area.
    pub area: Area,
    /// The api it is about, if one.
    pub api: Option<ApiKey>,
    /// The version it is about, if one.
    pub version: Option<i16>,
    /// What it compares.
    pub check: Check,
}

/// What a case compares.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// A part of what the sides advertised in ApiVersions, compared without
    /// sending anything more.
    Surface(Facet),
    /// Requests sent to both sides, whose answers are compared.
    Steps(Vec<Step>),
}

/// A part of the ApiVersions answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Facet {
    /// An api's version range (by key, which kafka-wire may not know).
    Api(i16),
    /// A supported feature's range, by name.
    SupportedFeature(String),
    /// A finalized feature's levels, by name.
    FinalizedFeature(String),
    /// The epoch of the finalized features.
    FeaturesEpoch,
}

/// One request of a case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Step {
    /// A name for the step in difference paths (`join: memberId`); by
    /// default the api's name and the step's number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The api, by name (any case) or key.
    #[serde(serialize_with = "api_to_name", deserialize_with = "api_from_json")]
    pub api: ApiKey,
    /// The version to send at.
    #[serde(default)]
    pub version: VersionChoice,
    /// Where to send it.
    #[serde(default)]
    pub route: Route,
    /// Which connection to send it on.
    #[serde(default)]
    pub connection: Connection,
    /// The body, in the codec's JSON form, with placeholders; keys left out
    /// take their defaults and keys the version lacks are dropped
    /// ([`crate::body::fit`]).
    pub body: Value,
    /// Names to bind from the answer: name to path (`producerId`,
    /// `coordinators[0].nodeId`), per side.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub learn: BTreeMap<String, String>,
    /// Send again (every 100 ms, within the case's time) until the answer
    /// is one a client would go on with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Until>,
    /// Whether the answer is compared (a step that only prepares may not
    /// be).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub compare: bool,
    /// Send an exact version even where the side does not advertise it
    /// (how a broker refuses a version it lacks).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unadvertised: bool,
}

fn yes() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

impl Step {
    /// A step sending `body` to `route` at `version`, compared.
    pub fn new(api: ApiKey, version: VersionChoice, route: Route, body: Value) -> Step {
        Step {
            name: None,
            api,
            version,
            route,
            connection: Connection::Shared,
            body,
            learn: BTreeMap::new(),
            until: None,
            compare: true,
            unadvertised: false,
        }
    }
}

/// The version a step is sent at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VersionChoice {
    /// The highest version both sides and kafka-wire support (stable
    /// versions only), as a client negotiates: `"negotiated"`.
    #[default]
    Negotiated,
    /// [`Negotiated`](Self::Negotiated), but no higher than this:
    /// `{"atMost": 3}`.
    AtMost(i16),
    /// Exactly this version: `3`.
    Exact(i16),
}

impl Serialize for VersionChoice {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            VersionChoice::Negotiated => serializer.serialize_str("negotiated"),
            VersionChoice::AtMost(v) => {
                let mut map = BTreeMap::new();
                map.insert("atMost", *v);
                map.serialize(serializer)
            }
            VersionChoice::Exact(v) => serializer.serialize_i16(*v),
        }
    }
}

impl<'de> Deserialize<'de> for VersionChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Exact(i16),
            Word(String),
            AtMost {
                #[serde(rename = "atMost")]
                at_most: i16,
            },
        }
        match Raw::deserialize(deserializer)? {
            Raw::Exact(v) => Ok(VersionChoice::Exact(v)),
            Raw::AtMost { at_most } => Ok(VersionChoice::AtMost(at_most)),
            Raw::Word(word) if word == "negotiated" => Ok(VersionChoice::Negotiated),
            Raw::Word(word) => Err(serde::de::Error::custom(format!(
                "version `{word}`: a number, \"negotiated\" or {{\"atMost\": N}}"
            ))),
        }
    }
}

/// Where a step is sent: the broker a client would choose. Names in a
/// route are templates, as in bodies.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Route {
    /// The bootstrap broker (what a client sends to any broker: Metadata,
    /// admin requests): `"bootstrap"`.
    #[default]
    Bootstrap,
    /// Every broker of the side, one after the other, their answers merged
    /// (lists joined, the first error code that is not 0 kept): a listing
    /// a client gathers from each broker, such as ListGroups, whose
    /// entries live where their coordinators are: `"everyBroker"`.
    EveryBroker,
    /// The leader of a partition: `{"leader": {"topic": "${topic.t}", "partition": 0}}`.
    Leader {
        /// The topic's name.
        topic: String,
        /// The partition.
        partition: i64,
    },
    /// A broker that does not lead the partition (the lowest node id that
    /// does not; the leader when it is the only broker).
    NotLeader {
        /// The topic's name.
        topic: String,
        /// The partition.
        partition: i64,
    },
    /// A coordinator, found with FindCoordinator first (once per key and
    /// side): `{"coordinator": {"group": "${group.g}"}}`,
    /// `{"coordinator": {"transaction": "${txn.t}"}}`, or the coordinator
    /// of the group or transactional id the request names,
    /// `{"coordinator": "requestGroup"}` (the bootstrap broker when it
    /// names none).
    Coordinator(CoordinatorKey),
    /// A broker that is not the coordinator (the lowest node id that is
    /// not, found with FindCoordinator first; the coordinator when it is
    /// the only broker): `{"notCoordinator": {"group": "${group.g}"}}`.
    NotCoordinator(CoordinatorKey),
}

/// A coordinator's key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum CoordinatorKey {
    /// A group's coordinator (key type 0).
    Group(String),
    /// A transactional id's coordinator (key type 1).
    Transaction(String),
    /// The coordinator of the group the request names (`groupId`,
    /// `groups[0].groupId`, `groupIds[0]`, `groupsNames[0]`, `groups[0]`).
    RequestGroup,
    /// The coordinator of the transactional id the request names
    /// (`transactionalId`, `v3AndBelowTransactionalId`,
    /// `transactions[0].transactionalId`, `transactionalIds[0]`).
    RequestTransaction,
}

/// Where requests name their group, in the order looked at.
const GROUP_PATHS: [&str; 5] = [
    "groupId",
    "groups[0].groupId",
    "groupIds[0]",
    "groupsNames[0]",
    "groups[0]",
];

/// Where requests name their transactional id.
const TRANSACTION_PATHS: [&str; 4] = [
    "transactionalId",
    "v3AndBelowTransactionalId",
    "transactions[0].transactionalId",
    "transactionalIds[0]",
];

impl CoordinatorKey {
    /// FindCoordinator's `keyType`.
    pub fn key_type(&self) -> i64 {
        match self {
            CoordinatorKey::Group(_) | CoordinatorKey::RequestGroup => crate::side::key_type::GROUP,
            CoordinatorKey::Transaction(_) | CoordinatorKey::RequestTransaction => {
                crate::side::key_type::TRANSACTION
            }
        }
    }

    /// The key as written (a template), when the route names it.
    pub fn written(&self) -> Option<&str> {
        match self {
            CoordinatorKey::Group(key) | CoordinatorKey::Transaction(key) => Some(key),
            CoordinatorKey::RequestGroup | CoordinatorKey::RequestTransaction => None,
        }
    }

    /// The key `request` (its JSON form) names, for the `Request*` kinds.
    pub fn named_in(&self, request: &Value) -> Option<String> {
        let paths: &[&str] = match self {
            CoordinatorKey::RequestGroup => &GROUP_PATHS,
            CoordinatorKey::RequestTransaction => &TRANSACTION_PATHS,
            _ => &[],
        };
        paths.iter().find_map(|path| {
            crate::path::JsonPath::parse(path)
                .ok()?
                .first(request)?
                .as_str()
                .map(str::to_owned)
        })
    }
}

/// Which connection a step goes on.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Connection {
    /// The run's connection to that broker, authenticated when the run
    /// uses SASL: `"shared"`.
    #[default]
    Shared,
    /// A connection of the case's own, by name, opened at its first use and
    /// closed when the case ends: `{"own": {"name": "a", "authenticate": false}}`.
    Own {
        /// Its name within the case.
        name: String,
        /// Whether to authenticate it when the run uses SASL.
        #[serde(default = "yes")]
        authenticate: bool,
    },
}

/// When a retried step's answer is final. Every condition given must hold.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Until {
    /// Every error code in the answer is 0.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_errors: bool,
    /// No error code in the answer is one of these (a coordinator loading,
    /// NOT_COORDINATOR, CONCURRENT_TRANSACTIONS, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_errors: Vec<i64>,
    /// Every value at each path (with `[*]`) is a number of at least this
    /// (an integer or not), and there is one:
    /// `{"topics[*].partitions[*].leaderId": 0}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub at_least: BTreeMap<String, i64>,
    /// Every value at each path (with `[*]`) is this one, and there is
    /// one: `{"results[0].configs[0].value": "compact"}` (a change a broker
    /// applies a moment after it answers).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub equals: BTreeMap<String, Value>,
}

/// Every error code in `value` (`errorCode`, or a name ending in
/// `ErrorCode`), at any depth, in document order.
pub fn error_codes(value: &Value) -> Vec<i64> {
    fn walk(value: &Value, found: &mut Vec<i64>) {
        match value {
            Value::Object(map) => {
                for (key, field) in map {
                    match field.as_i64() {
                        Some(code) if key == "errorCode" || key.ends_with("ErrorCode") => {
                            found.push(code)
                        }
                        _ => walk(field, found),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| walk(item, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(value, &mut found);
    found
}

impl Until {
    /// Whether `answer` (the JSON form) is final. A path that does not
    /// parse never holds.
    pub fn holds(&self, answer: &Value) -> bool {
        let codes = error_codes(answer);
        if self.no_errors && codes.iter().any(|&c| c != 0) {
            return false;
        }
        if codes.iter().any(|c| self.not_errors.contains(c)) {
            return false;
        }
        let equal = self.equals.iter().all(|(path, wanted)| {
            crate::path::JsonPath::parse(path).is_ok_and(|path| {
                let found = path.select(answer);
                !found.is_empty() && found.iter().all(|v| *v == wanted)
            })
        });
        equal
            && self.at_least.iter().all(|(path, least)| {
                let Ok(path) = crate::path::JsonPath::parse(path) else {
                    return false;
                };
                let found = path.select(answer);
                !found.is_empty()
                    && found
                        .iter()
                        .all(|v| v.as_f64().is_some_and(|v| v >= *least as f64))
            })
    }
}

fn api_to_name<S: Serializer>(api: &ApiKey, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(api.name())
}

fn api_from_json<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ApiKey, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Key(i16),
        Name(String),
    }
    let raw = Raw::deserialize(deserializer)?;
    let found = match &raw {
        Raw::Key(key) => ApiKey::from_key(*key),
        Raw::Name(name) => ApiKey::from_name(name),
    };
    found.ok_or_else(|| {
        serde::de::Error::custom(match raw {
            Raw::Key(key) => format!("no api has key {key}"),
            Raw::Name(name) => format!("no api is named `{name}`"),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn steps_read_from_json() {
        let step: Step = serde_json::from_value(json!({
            "api": "initproducerid",
            "route": {"coordinator": {"transaction": "${txn.pay}"}},
            "body": {"transactionalId": "${txn.pay}"},
            "until": {"notErrors": [14, 15]},
            "learn": {"producerId": "producerId"}
        }))
        .unwrap();
        assert_eq!(step.api, ApiKey::InitProducerId);
        assert_eq!(step.version, VersionChoice::Negotiated);
        assert_eq!(
            step.route,
            Route::Coordinator(CoordinatorKey::Transaction("${txn.pay}".into()))
        );
        assert!(step.compare);
        let again: Step = serde_json::from_value(serde_json::to_value(&step).unwrap()).unwrap();
        assert_eq!(again, step);

        let step: Step = serde_json::from_value(
            json!({"api": "OffsetFetch", "route": {"coordinator": "requestGroup"}, "body": {}}),
        )
        .unwrap();
        assert_eq!(step.route, Route::Coordinator(CoordinatorKey::RequestGroup));
        let step: Step = serde_json::from_value(
            json!({"api": "Heartbeat", "route": {"notCoordinator": {"group": "${group.g}"}}, "body": {}}),
        )
        .unwrap();
        assert_eq!(
            step.route,
            Route::NotCoordinator(CoordinatorKey::Group("${group.g}".into()))
        );
        let key = CoordinatorKey::RequestGroup;
        assert_eq!(
            key.named_in(&json!({"groups": [{"groupId": "g"}]}))
                .as_deref(),
            Some("g")
        );
        assert_eq!(
            key.named_in(&json!({"groups": ["h"]})).as_deref(),
            Some("h")
        );
        assert_eq!(key.named_in(&json!({"groups": []})), None);
        assert_eq!(
            CoordinatorKey::RequestTransaction
                .named_in(&json!({"transactionalId": null, "v3AndBelowTransactionalId": "t"}))
                .as_deref(),
            Some("t")
        );

        let step: Step = serde_json::from_value(json!({
            "api": 0, "version": {"atMost": 9}, "route": {"notLeader": {"topic": "t", "partition": 1}},
            "connection": {"own": {"name": "a", "authenticate": false}},
            "body": {}, "compare": false
        }))
        .unwrap();
        assert_eq!(step.api, ApiKey::Produce);
        assert_eq!(step.version, VersionChoice::AtMost(9));
        assert!(!step.compare);
        assert_eq!(
            step.connection,
            Connection::Own {
                name: "a".into(),
                authenticate: false
            }
        );
        for bad in [
            json!({"api": "Nope", "body": {}}),
            json!({"api": 0, "version": "latest", "body": {}}),
            json!({"api": 0, "body": {}, "extra": 1}),
            json!({"api": 0, "route": "everywhere", "body": {}}),
        ] {
            assert!(
                serde_json::from_value::<Step>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn until_holds_when_every_condition_does() {
        let led = Until {
            no_errors: true,
            at_least: [("topics[*].partitions[*].leaderId".to_owned(), 0)].into(),
            ..Until::default()
        };
        let answer = |leader: i64, code: i64| json!({"topics": [{"errorCode": code, "partitions": [{"leaderId": leader}]}]});
        assert!(led.holds(&answer(1, 0)));
        assert!(!led.holds(&answer(-1, 0)));
        assert!(!led.holds(&answer(1, 5)));
        assert!(!led.holds(&json!({"topics": []})));
        let loaded = Until {
            not_errors: vec![14, 15],
            ..Until::default()
        };
        assert!(loaded.holds(&json!({"errorCode": 3})));
        assert!(!loaded.holds(&json!({"x": [{"partitionErrorCode": 15}]})));
        let applied = Until {
            equals: [("configs[*].value".to_owned(), json!("compact"))].into(),
            ..Until::default()
        };
        assert!(applied.holds(&json!({"configs": [{"value": "compact"}]})));
        assert!(!applied.holds(&json!({"configs": [{"value": "compact"}, {"value": "delete"}]})));
        assert!(!applied.holds(&json!({"configs": []})));
        assert_eq!(
            error_codes(&json!({"errorCode": 1, "a": [{"errorCode": 2}, {"fooErrorCode": 3}]})),
            [1, 2, 3]
        );
    }
}
