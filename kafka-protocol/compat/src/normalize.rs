//! Normalization: each side's answer is rewritten, on its own, into a form
//! in which two brokers that behave alike give equal values, one rule per
//! kind of field. Nothing is ignored wholesale: a value is replaced by a
//! token only when it passes the rule's check (a node id that names the
//! partition's leader, a time within its case, a throttle within bounds),
//! and left as it was otherwise, so that a value failing the check shows
//! as a difference.
//!
//! The rules, in the order they apply (the guide, `docs/compat.md`,
//! explains each):
//!
//! 1. **Records.** A `records` field that decodes is replaced by its
//!    decoded form (batches and records, as `kafka-wire-records` writes
//!    them), so the rules below reach inside; a batch's `crc`, verified by
//!    the decoder, becomes `<verified>`.
//! 2. **Listings.** Answers that list the whole cluster (Metadata of all
//!    topics, ListGroups, ListTransactions, DescribeLogDirs of all topics,
//!    DescribeTopicPartitions of all topics, ListPartitionReassignments of
//!    all topics, ListConfigResources) keep only the run's own entries, in
//!    name order: a shared cluster holds others.
//! 3. **Node ids** (`nodeId`, `leaderId`, `brokerId`, `controllerId`,
//!    `preferredReadReplica`, `replicaId`, and the elements of `replicaNodes`,
//!    `isrNodes`, `offlineReplicas`, `eligibleLeaderReplicas`,
//!    `lastKnownElr`, `replicas`, `isr`, `addingReplicas`,
//!    `removingReplicas`) are mapped by the role the node plays, learnt
//!    from Metadata and FindCoordinator: `<leader of T/P>` where it is that
//!    partition's leader, `<coordinator of K>` in FindCoordinator's answer
//!    for key K, else `<a broker>` when it is one of the side's brokers.
//!    Negative ids (none) and unknown nodes stay as they are.
//! 4. **Addresses.** In an object whose node id names a broker, `host` and
//!    `port` become `<its host>` and `<its port>` when they are that
//!    broker's advertised address.
//! 5. **Broker lists** (`brokers`, `nodeEndpoints`): once mapped, equal
//!    entries count once and the list is sorted: the number of brokers is
//!    the cluster's size, which two clusters may differ in.
//! 6. **Topic ids** (`topicId`) of the side's topics, learnt from
//!    Metadata and CreateTopics answers (a validate-only creation's too),
//!    become `<id of T>`; the zero id and unknown ids stay.
//! 7. **Cluster id**: the side's, as `clusterId` or inside a message,
//!    becomes `<cluster id>`.
//! 8. **Times** (`timestamp`, and names ending in `Timestamp`,
//!    `TimestampMs` or `TimeMs` but for throttle times) that fall within
//!    the request's window, from the start of its case to the answer's
//!    arrival, widened by the allowed clock skew, become `<time within the
//!    case>`. Negative times (none) and times outside (such as a record's
//!    own timestamp) stay.
//! 9. **Throttle times** (`throttleTimeMs`) from 0 to the case's timeout
//!    become `<throttle within bounds>`.
//! 10. **Producer ids** (`producerId`, `ongoingTxnProducerId`), **member
//!     ids** (`memberId`, JoinGroup's `leader`), **fetch sessions**
//!     (`sessionId`) and **client instance ids** (`clientInstanceId`) are
//!     numbered by first appearance on each side: `<producer id 1>`,
//!     `<member id 2>`. None (-1, 0, the empty string, the zero uuid) stays,
//!     and so does a producer id in an entry whose error code is not 0
//!     (it names no producer: Kafka writes 0 there).
//! 11. **Feature epoch** (`finalizedFeaturesEpoch`) of 0 or more becomes
//!     `<an epoch>`.
//! 12. **Disks** (DescribeLogDirs' `logDir`, `totalBytes`, `usableBytes`,
//!     `partitionSize`): how a broker stores its logs, not what they hold;
//!     a path becomes `<a log dir>`, a size of 0 or more `<bytes>`.
//! 13. **Directory ids** (`replicaDirectoryId`, `voterDirectoryId`), drawn
//!     at random by each node, become `<a directory id>`; the zero id stays.
//! 14. **The metadata quorum** (DescribeQuorum), which is how a cluster is
//!     deployed rather than how it speaks: the metadata log's offsets
//!     (`highWatermark`, `logEndOffset`) of 0 or more become `<an offset>`,
//!     the quorum's `leaderEpoch` of 0 or more `<an epoch>`, a controller
//!     listener's `host` and `port` (1 to 65535) `<a host>` and `<a port>`,
//!     and the `observers` (the brokers that are not voters, as many as
//!     the cluster has) `<the cluster's brokers>` when each is one of the
//!     side's brokers.
//! 15. **Run names.** The side's prefix in any string, names and error
//!     messages alike, is written `<run>-`.
//! 16. **Transaction start times** (`transactionStartTimeMs`, in
//!     DescribeTransactions): a transaction begins in one case and is
//!     described in a later one, so its start falls within the run's
//!     window (from the run's start to the answer's arrival, widened by
//!     the clock skew) rather than the case's: `<time within the run>`.

use std::collections::HashMap;
use std::hash::Hash;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use kafka_wire::ApiKey;
use kafka_wire_records::{records_to_json, DecodeOptions};
use serde_json::{Map, Value};

use crate::names::RunNames;
use crate::side::{key_type, Knowledge, Side};

/// The zero uuid, which stands for "none".
pub const ZERO_UUID: &str = "AAAAAAAAAAAAAAAAAAAAAA";

/// How far a broker's clock may be from ours: times this much before a
/// case's start or after an answer's arrival are still within its window.
pub const CLOCK_SKEW_MS: i64 = 5_000;

/// What normalizing one answer needs.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// Whose answer it is.
    pub side: Side,
    /// The run's names.
    pub names: &'a RunNames,
    /// What the side has told the run (learnt before this answer, and from
    /// it).
    pub knowledge: &'a Knowledge,
    /// The api answered.
    pub api: ApiKey,
    /// The version answered.
    pub version: i16,
    /// The request, in its JSON form as sent.
    pub request: &'a Value,
    /// When the case (or setup) the answer belongs to started, in
    /// milliseconds since the Unix epoch: the window of its times opens
    /// there.
    pub window_start_ms: i64,
    /// When the answer arrived, in milliseconds since the Unix epoch.
    pub answered_ms: i64,
    /// When the run started, in milliseconds since the Unix epoch: the
    /// window of a transaction's start time opens there (rule 16).
    pub run_start_ms: i64,
    /// The case's timeout, in milliseconds.
    pub timeout_ms: i64,
}

/// What one side's normalization keeps across a run: the ids numbered by
/// first appearance.
#[derive(Debug, Clone, Default)]
pub struct Mapper {
    producer_ids: Numbering<i64>,
    member_ids: Numbering<String>,
    session_ids: Numbering<i64>,
    instance_ids: Numbering<String>,
}

/// Values numbered by first appearance, from 1.
#[derive(Debug, Clone)]
struct Numbering<T> {
    numbers: HashMap<T, usize>,
}

impl<T> Default for Numbering<T> {
    fn default() -> Self {
        Numbering {
            numbers: HashMap::new(),
        }
    }
}

impl<T: Eq + Hash + Clone> Numbering<T> {
    /// The number of `value`, given it now if it has none.
    fn of(&mut self, value: &T) -> usize {
        let next = self.numbers.len() + 1;
        *self.numbers.entry(value.clone()).or_insert(next)
    }
}

impl Mapper {
    /// A fresh mapper.
    pub fn new() -> Mapper {
        Mapper::default()
    }
}

/// Normalizes `answer` (the JSON form of a response body) in place.
pub fn normalize(answer: &mut Value, cx: &Context<'_>, mapper: &mut Mapper) {
    decode_records(answer);
    keep_own_listings(answer, cx);
    walk(answer, None, &Scope::default(), cx, mapper);
    unprefix(answer, cx);
}

/// Normalizes a value of the ApiVersions answer that a surface case
/// compares (no request, no run): the feature epoch.
pub fn normalize_surface(value: &mut Value) {
    if let Some(map) = value.as_object_mut() {
        if let Some(epoch) = map.get_mut("finalizedFeaturesEpoch") {
            if epoch.as_i64().is_some_and(|e| e >= 0) {
                *epoch = Value::from("<an epoch>");
            }
        }
    }
}

// Rule 1.
fn decode_records(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if key == "records" {
                    if let Some(decoded) = field
                        .as_str()
                        .and_then(|text| STANDARD.decode(text).ok())
                        .and_then(|bytes| records_to_json(&bytes, &DecodeOptions::default()).ok())
                    {
                        *field = decoded;
                        verified_crcs(field);
                    }
                } else {
                    decode_records(field);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(decode_records),
        _ => {}
    }
}

fn verified_crcs(records: &mut Value) {
    for batch in records["batches"].as_array_mut().into_iter().flatten() {
        if let Some(crc) = batch.get_mut("crc") {
            *crc = Value::from("<verified>");
        }
    }
}

// Rule 2.
/// The answers that list the whole cluster: api, the path of the listing
/// (arrays within arrays with `[*]`), the key naming an entry, and whether
/// the request asked for everything.
fn listings(api: ApiKey, version: i16, request: &Value) -> Option<(&'static str, &'static str)> {
    let all_topics = |key: &str| match request.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::Array(items)) => items.is_empty(),
        _ => false,
    };
    match api {
        // Metadata v0 lists every topic for an empty list, later
        // versions for a null one.
        ApiKey::Metadata if request.get("topics").is_some_and(Value::is_null) => {
            Some(("topics", "name"))
        }
        ApiKey::Metadata if version == 0 && all_topics("topics") => Some(("topics", "name")),
        ApiKey::ListGroups => Some(("groups", "groupId")),
        ApiKey::ListTransactions => Some(("transactionStates", "transactionalId")),
        ApiKey::DescribeLogDirs if request.get("topics").is_some_and(Value::is_null) => {
            Some(("results[*].topics", "name"))
        }
        ApiKey::DescribeTopicPartitions if all_topics("topics") => Some(("topics", "name")),
        ApiKey::ListPartitionReassignments if request.get("topics").is_some_and(Value::is_null) => {
            Some(("topics", "name"))
        }
        ApiKey::ListConfigResources => Some(("configResources", "resourceName")),
        _ => None,
    }
}

fn keep_own_listings(answer: &mut Value, cx: &Context<'_>) {
    let Some((path, name_key)) = listings(cx.api, cx.version, cx.request) else {
        return;
    };
    let steps: Vec<&str> = path.split('.').collect();
    keep_own_at(answer, &steps, name_key, cx);
}

fn keep_own_at(value: &mut Value, steps: &[&str], name_key: &str, cx: &Context<'_>) {
    let Some((first, rest)) = steps.split_first() else {
        if let Value::Array(items) = value {
            items.retain(|item| {
                item[name_key]
                    .as_str()
                    .is_some_and(|name| cx.names.owns(cx.side, name))
            });
            items.sort_by(|a, b| a[name_key].as_str().cmp(&b[name_key].as_str()));
        }
        return;
    };
    let (key, every) = match first.strip_suffix("[*]") {
        Some(key) => (key, true),
        None => (*first, false),
    };
    let Some(next) = value.get_mut(key) else {
        return;
    };
    if every {
        for item in next.as_array_mut().into_iter().flatten() {
            keep_own_at(item, rest, name_key, cx);
        }
    } else {
        keep_own_at(next, rest, name_key, cx);
    }
}

/// Where in the answer a value is: the topic and partition of the entry
/// being walked, and FindCoordinator's key.
#[derive(Debug, Clone, Default)]
struct Scope {
    topic: Option<String>,
    partition: Option<i64>,
    coordinator_key: Option<String>,
    /// Within an entry whose error code is not 0.
    failed: bool,
}

/// Keys holding one node id.
const NODE_ID_KEYS: [&str; 6] = [
    "nodeId",
    "leaderId",
    "brokerId",
    "controllerId",
    "preferredReadReplica",
    "replicaId",
];

/// Keys holding a list of node ids.
const NODE_LIST_KEYS: [&str; 9] = [
    "replicaNodes",
    "isrNodes",
    "offlineReplicas",
    "eligibleLeaderReplicas",
    "lastKnownElr",
    "replicas",
    "isr",
    "addingReplicas",
    "removingReplicas",
];

/// Keys holding lists of brokers.
const BROKER_LIST_KEYS: [&str; 2] = ["brokers", "nodeEndpoints"];

fn walk(
    value: &mut Value,
    key: Option<&str>,
    scope: &Scope,
    cx: &Context<'_>,
    mapper: &mut Mapper,
) {
    match value {
        Value::Object(map) => {
            let inner = narrow(map, scope, cx);
            addresses(map, cx);
            if cx.api == ApiKey::DescribeQuorum && key == Some("listeners") {
                controller_endpoint(map);
            }
            for (k, field) in map.iter_mut() {
                walk(field, Some(k), &inner, cx, mapper);
            }
        }
        Value::Array(items) => {
            for item in items.iter_mut() {
                walk(item, key, scope, cx, mapper);
            }
            if key.is_some_and(|k| BROKER_LIST_KEYS.contains(&k)) {
                items.sort_by_key(|item| item.to_string());
                items.dedup();
            }
            if cx.api == ApiKey::DescribeQuorum
                && key == Some("observers")
                && items.iter().all(|o| o["replicaId"] == "<a broker>")
            {
                *value = Value::from("<the cluster's brokers>");
            }
        }
        _ => {
            if let Some(key) = key {
                field(value, key, scope, cx, mapper);
            }
        }
    }
}

/// The scope within `map`: its topic (by name or id) and partition.
fn narrow(map: &Map<String, Value>, scope: &Scope, cx: &Context<'_>) -> Scope {
    let mut inner = scope.clone();
    let named = ["name", "topic", "topicName"]
        .iter()
        .filter_map(|k| map.get(*k).and_then(Value::as_str))
        .find(|name| cx.knowledge.topics.contains_key(*name))
        .map(str::to_owned);
    let by_id = map
        .get("topicId")
        .and_then(Value::as_str)
        .and_then(|id| cx.knowledge.topic_named_by_id(id))
        .map(str::to_owned);
    if let Some(topic) = named.or(by_id) {
        inner.topic = Some(topic);
        inner.partition = None;
    }
    if let Some(partition) = ["partitionIndex", "partition", "index", "partitionId"]
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_i64))
    {
        inner.partition = Some(partition);
    }
    if cx.api == ApiKey::FindCoordinator {
        let key = map
            .get("key")
            .or_else(|| cx.request.get("key"))
            .and_then(Value::as_str);
        inner.coordinator_key = key.map(str::to_owned);
    }
    if map
        .get("errorCode")
        .and_then(Value::as_i64)
        .is_some_and(|code| code != 0)
    {
        inner.failed = true;
    }
    inner
}

// Rule 14: a controller listener, `{name, host, port}`.
fn controller_endpoint(map: &mut Map<String, Value>) {
    let host = map.get("host").and_then(Value::as_str);
    let port = map.get("port").and_then(Value::as_i64);
    if host.is_some_and(|h| !h.is_empty()) && port.is_some_and(|p| (1..=65535).contains(&p)) {
        map.insert("host".into(), Value::from("<a host>"));
        map.insert("port".into(), Value::from("<a port>"));
    }
}

// Rule 4.
fn addresses(map: &mut Map<String, Value>, cx: &Context<'_>) {
    let node = ["nodeId", "brokerId", "leaderId"]
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_i64));
    let Some(broker) = node.and_then(|id| cx.knowledge.brokers.get(&id)) else {
        return;
    };
    let host = map.get("host").and_then(Value::as_str);
    let port = map.get("port").and_then(Value::as_i64);
    if host == Some(broker.host.as_str()) && port == Some(broker.port) {
        map.insert("host".into(), Value::from("<its host>"));
        map.insert("port".into(), Value::from("<its port>"));
    }
}

/// Rules 3 and 6 to 12, on one scalar field.
fn field(value: &mut Value, key: &str, scope: &Scope, cx: &Context<'_>, mapper: &mut Mapper) {
    if NODE_ID_KEYS.contains(&key) || NODE_LIST_KEYS.contains(&key) {
        if let Some(node) = value.as_i64() {
            if let Some(token) = node_role(node, scope, cx) {
                *value = Value::from(token);
            }
        }
        return;
    }
    let replacement = match key {
        "topicId" => value
            .as_str()
            .filter(|id| *id != ZERO_UUID)
            .and_then(|id| cx.knowledge.topic_named_by_id(id))
            .map(|name| format!("<id of {name}>")),
        "clusterId" => value
            .as_str()
            .filter(|id| Some(*id) == cx.knowledge.cluster_id.as_deref())
            .map(|_| "<cluster id>".to_owned()),
        "replicaDirectoryId" | "voterDirectoryId" => value
            .as_str()
            .filter(|id| *id != ZERO_UUID)
            .map(|_| "<a directory id>".to_owned()),
        "highWatermark" | "logEndOffset" if cx.api == ApiKey::DescribeQuorum => value
            .as_i64()
            .filter(|o| *o >= 0)
            .map(|_| "<an offset>".to_owned()),
        "leaderEpoch" if cx.api == ApiKey::DescribeQuorum => value
            .as_i64()
            .filter(|e| *e >= 0)
            .map(|_| "<an epoch>".to_owned()),
        "throttleTimeMs" => value
            .as_i64()
            .filter(|t| (0..=cx.timeout_ms).contains(t))
            .map(|_| "<throttle within bounds>".to_owned()),
        // An entry that failed names no producer (Kafka writes 0 there).
        "producerId" | "ongoingTxnProducerId" if scope.failed => None,
        "producerId" | "ongoingTxnProducerId" => value
            .as_i64()
            .filter(|id| *id >= 0)
            .map(|id| format!("<producer id {}>", mapper.producer_ids.of(&id))),
        "memberId" => member(value, mapper),
        "leader" if cx.api == ApiKey::JoinGroup => member(value, mapper),
        "sessionId" if cx.api == ApiKey::Fetch => value
            .as_i64()
            .filter(|id| *id != 0)
            .map(|id| format!("<fetch session {}>", mapper.session_ids.of(&id))),
        "clientInstanceId" => value.as_str().filter(|id| *id != ZERO_UUID).map(|id| {
            let n = mapper.instance_ids.of(&id.to_owned());
            format!("<client instance {n}>")
        }),
        "finalizedFeaturesEpoch" => value
            .as_i64()
            .filter(|e| *e >= 0)
            .map(|_| "<an epoch>".to_owned()),
        "logDir" if cx.api == ApiKey::DescribeLogDirs => value
            .as_str()
            .filter(|dir| !dir.is_empty())
            .map(|_| "<a log dir>".to_owned()),
        "totalBytes" | "usableBytes" | "partitionSize" if cx.api == ApiKey::DescribeLogDirs => {
            value
                .as_i64()
                .filter(|b| *b >= 0)
                .map(|_| "<bytes>".to_owned())
        }
        // Rule 16: a transaction may have begun in an earlier case.
        "transactionStartTimeMs" => value
            .as_i64()
            .filter(|t| {
                *t >= 0
                    && (cx.run_start_ms - CLOCK_SKEW_MS..=cx.answered_ms + CLOCK_SKEW_MS)
                        .contains(t)
            })
            .map(|_| "<time within the run>".to_owned()),
        key if is_time(key) => value
            .as_i64()
            .filter(|t| {
                *t >= 0
                    && (cx.window_start_ms - CLOCK_SKEW_MS..=cx.answered_ms + CLOCK_SKEW_MS)
                        .contains(t)
            })
            .map(|_| "<time within the case>".to_owned()),
        _ => None,
    };
    if let Some(token) = replacement {
        *value = Value::from(token);
    }
}

fn member(value: &Value, mapper: &mut Mapper) -> Option<String> {
    value
        .as_str()
        .filter(|id| !id.is_empty())
        .map(|id| format!("<member id {}>", mapper.member_ids.of(&id.to_owned())))
}

/// Whether a field of this name holds a point in time.
fn is_time(key: &str) -> bool {
    key != "throttleTimeMs"
        && (key == "timestamp"
            || key.ends_with("Timestamp")
            || key.ends_with("TimestampMs")
            || key.ends_with("TimeMs"))
}

// Rule 3.
fn node_role(node: i64, scope: &Scope, cx: &Context<'_>) -> Option<String> {
    if node < 0 {
        return None;
    }
    if let (Some(topic), Some(partition)) = (&scope.topic, scope.partition) {
        if cx.knowledge.leader(topic, partition) == Some(node) {
            return Some(format!("<leader of {topic}/{partition}>"));
        }
    }
    if let Some(key) = &scope.coordinator_key {
        let key_type = cx.request["keyType"].as_i64().unwrap_or(key_type::GROUP);
        if cx.knowledge.coordinators.get(&(key_type, key.clone())) == Some(&node) {
            return Some(format!("<coordinator of {key}>"));
        }
    }
    cx.knowledge
        .is_broker(node)
        .then(|| "<a broker>".to_owned())
}

// Rules 7 (in messages) and 15.
fn unprefix(value: &mut Value, cx: &Context<'_>) {
    match value {
        Value::String(text) => {
            if cx.names.mentions(cx.side, text) {
                *text = cx.names.unprefix(cx.side, text);
            }
            if let Some(id) = cx
                .knowledge
                .cluster_id
                .as_deref()
                .filter(|id| !id.is_empty())
            {
                if text.contains(id) {
                    *text = text.replace(id, "<cluster id>");
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| unprefix(item, cx)),
        Value::Object(map) => map.values_mut().for_each(|field| unprefix(field, cx)),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
