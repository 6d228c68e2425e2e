//! Replay: the requests of a packet capture as cases, sans-IO.
//!
//! [`from_capture`] reads a capture's bytes (pcap or pcapng) through
//! kafka-wire-capture, keeps the exchanges whose broker is on the port
//! given, and turns each request into one case of area
//! [`Area::Replay`], named `replay/conn-<C>/<N>-<Api>-v<V>` (the client
//! connection in the order it first sent, the request's number on it from
//! 1). Cases run in the order the requests were sent (the time of each
//! request's last byte), across connections, each at the version captured.
//!
//! Each request is decoded to the codec's JSON form, then made a template
//! of the run's names:
//!
//! - **Names.** Topics, groups and transactional ids named where requests
//!   name them (`topics[].name`, `topicData[].name`, `topic`, `topicNames`,
//!   `groupId`, `groupIds`, `groupsNames`, `transactionalId`,
//!   FindCoordinator's keys, config resources of type topic or group, ...)
//!   become placeholders: topic `orders` becomes `${topic.orders}`, so each
//!   side gets the run's own name. Any other string equal to a known name
//!   is renamed too (a topic before a group before a transactional id);
//!   member ids, instance ids, client ids and hosts never are. A name with
//!   characters a placeholder cannot hold is written with `_` instead.
//! - **Topic ids.** Ids the captured answers give a name to (Metadata,
//!   CreateTopics, DescribeTopicPartitions) become `${topicId.X}`: the id
//!   of the run's own topic X on each side.
//! - **Topics.** The run creates every topic the requests name, with as
//!   many partitions as the highest index seen (in requests, or in a
//!   captured Metadata answer) needs, except those a captured CreateTopics
//!   creates; the run deletes both kinds at its end.
//! - **Routes.** A request goes where a client sends it ([`crate::sweep::route`]):
//!   a partition's request to the leader of its first partition, a
//!   group's or transaction's to the coordinator of the one it names.
//!
//! What cannot be replayed is skipped with its reason ([`Skipped`]):
//! ApiVersions and the SASL handshake (the engine does them itself), and a
//! request the capture shows unanswered on a connection cut short. A
//! capture that cannot be read, that is cut short, or whose Kafka stream
//! has a gap or does not decode, is a [`ReplayError`] naming where.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;

use kafka_wire::{ApiKey, IntoOwned};
use kafka_wire_capture::{read_capture, CaptureError, Config, EventKind, Output, Tracker};
use serde_json::{Map, Value};

use crate::case::{Area, Case, Check, CoordinatorKey, Route, Step, Until, VersionChoice};
use crate::scenario::TopicSpec;
use crate::sweep::{self, COORDINATOR_RETRIABLE, RETRIABLE};

/// The cases of a capture, and what the run needs for them.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// One case per request replayed, in capture order.
    pub cases: Vec<Case>,
    /// The topics the run creates first, by logical name.
    pub topics: Vec<(String, TopicSpec)>,
    /// Topics a replayed CreateTopics creates, by logical name: the run
    /// deletes them at its end.
    pub created_by_capture: Vec<String>,
    /// Requests not replayed, with why.
    pub skipped: Vec<Skipped>,
    /// Client connections seen to the port.
    pub connections: usize,
}

/// A request that is not replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Where: `conn-2/1 ApiVersions v3`, or a connection and what was seen.
    pub at: String,
    /// Why.
    pub why: String,
}

/// Why a capture cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// Not a capture, or cut short inside its header, or unreadable.
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// The file ends inside a block, or a block does not parse.
    #[error("the capture is cut short at {time}: {detail}")]
    Truncated {
        /// The time of the last packet read (or `unknown`).
        time: String,
        /// What the reader saw.
        detail: String,
    },
    /// A stream to the port that cannot be followed whole: a gap, bytes
    /// skipped, TLS, a frame that does not decode, a connection evicted.
    #[error("{at} ({client} -> {broker}) at {time}: {kind}: {detail}")]
    Stream {
        /// `conn-N`, or `a connection` when no request came before.
        at: String,
        /// The client's address.
        client: String,
        /// The broker's address.
        broker: String,
        /// The time of the packet that showed it.
        time: String,
        /// The event's kind (`gap`, `resync`, `tls`, `undecodable`, `evicted`).
        kind: EventKind,
        /// What the reader saw.
        detail: String,
    },
    /// A request whose body does not decode.
    #[error("{at} {api} v{version}: the request does not decode: {why}")]
    Request {
        /// `conn-N/M`.
        at: String,
        /// The api.
        api: &'static str,
        /// The version.
        version: i16,
        /// Why, with the byte offset.
        why: String,
    },
    /// Nothing was sent to the port.
    #[error("no Kafka request to port {port} in the capture")]
    Empty {
        /// The port given.
        port: u16,
    },
}

/// One request as captured.
struct Captured {
    connection: usize,
    number: usize,
    api: ApiKey,
    version: i16,
    body: Value,
}

/// Reads `capture` (pcap or pcapng bytes) and makes a case of every
/// request sent to a broker on `port` (see the module).
pub fn from_capture(capture: &[u8], port: u16) -> Result<Replay, ReplayError> {
    let mut tracker = Tracker::new(Config {
        ports: vec![port],
        ..Config::default()
    });
    let mut outputs = Vec::new();
    read_capture(capture, &mut tracker, |output| outputs.push(output))?;
    // The reader gives an exchange once it is answered: put them back in
    // the order they were sent.
    outputs.sort_by_key(|output| match output {
        Output::Exchange(exchange) => exchange.time,
        Output::SaslToken(token) => token.time,
        Output::Event(event) => event.time,
    });
    let mut connections: BTreeMap<(SocketAddr, SocketAddr), (usize, usize)> = BTreeMap::new();
    let mut captured = Vec::new();
    let mut skipped = Vec::new();
    let mut names = Names::default();
    fn connection_of(
        connections: &mut BTreeMap<(SocketAddr, SocketAddr), (usize, usize)>,
        client: SocketAddr,
        broker: SocketAddr,
    ) -> (usize, usize) {
        let next = connections.len() + 1;
        let entry = connections.entry((client, broker)).or_insert((next, 0));
        entry.1 += 1;
        *entry
    }
    let mut stream_error = None;
    for output in &outputs {
        match output {
            Output::Exchange(exchange) if exchange.broker.port() == port => {
                let (connection, number) =
                    connection_of(&mut connections, exchange.client, exchange.broker);
                let at = format!("conn-{connection}/{number}");
                let (api, version) = (exchange.api, exchange.version);
                if matches!(
                    api,
                    ApiKey::ApiVersions | ApiKey::SaslHandshake | ApiKey::SaslAuthenticate
                ) {
                    skipped.push(Skipped {
                        at: format!("{at} {} v{version}", api.name()),
                        why: "the engine negotiates versions and authenticates itself".into(),
                    });
                    continue;
                }
                let body = exchange.request_body().map_err(|e| ReplayError::Request {
                    at: at.clone(),
                    api: api.name(),
                    version,
                    why: e.to_string(),
                })?;
                let body = body.value.into_owned().to_json(version);
                names.learn_request(&body);
                if let Some(Ok(parts)) = exchange.response_parts() {
                    if let Ok(answer) = parts.decode_body() {
                        names.learn_answer(&answer.into_owned().to_json(parts.version));
                    }
                }
                captured.push(Captured {
                    connection,
                    number,
                    api,
                    version,
                    body,
                });
            }
            Output::SaslToken(token) if token.broker.port() == port => {
                let (connection, number) =
                    connection_of(&mut connections, token.client, token.broker);
                skipped.push(Skipped {
                    at: format!("conn-{connection}/{number} SASL token"),
                    why: "the engine authenticates itself".into(),
                });
            }
            Output::Event(event) => {
                let on_port = event.broker.is_some_and(|b| b.port() == port);
                let at = |connections: &BTreeMap<_, (usize, usize)>| match (
                    event.client,
                    event.broker,
                ) {
                    (Some(c), Some(b)) => connections
                        .get(&(c, b))
                        .map_or_else(|| "a connection".to_owned(), |(n, _)| format!("conn-{n}")),
                    _ => "a connection".to_owned(),
                };
                match event.kind {
                    EventKind::TruncatedFile => {
                        return Err(ReplayError::Truncated {
                            time: event.time.to_string(),
                            detail: event.detail.clone(),
                        })
                    }
                    EventKind::Gap
                    | EventKind::Resync
                    | EventKind::Tls
                    | EventKind::Undecodable
                    | EventKind::Evicted
                        if on_port && stream_error.is_none() =>
                    {
                        stream_error = Some(ReplayError::Stream {
                            at: at(&connections),
                            client: event.client.map_or_else(String::new, |c| c.to_string()),
                            broker: event.broker.map_or_else(String::new, |b| b.to_string()),
                            time: event.time.to_string(),
                            kind: event.kind,
                            detail: event.detail.clone(),
                        });
                    }
                    EventKind::Unanswered if on_port => skipped.push(Skipped {
                        at: at(&connections),
                        why: format!("not replayed: {}", event.detail),
                    }),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    if let Some(error) = stream_error {
        return Err(error);
    }
    if connections.is_empty() {
        return Err(ReplayError::Empty { port });
    }
    let cases = captured.iter().map(|c| names.case(c)).collect();
    Ok(Replay {
        cases,
        topics: names.topics(),
        created_by_capture: names.created.iter().cloned().collect(),
        skipped,
        connections: connections.len(),
    })
}

/// The kinds of names renamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Topic,
    Group,
    Txn,
}

impl Kind {
    fn placeholder(self, logical: &str) -> String {
        let kind = match self {
            Kind::Topic => "topic",
            Kind::Group => "group",
            Kind::Txn => "txn",
        };
        format!("${{{kind}.{logical}}}")
    }
}

/// Keys whose strings are never names.
const NEVER_NAMES: [&str; 7] = [
    "memberId",
    "groupInstanceId",
    "clientId",
    "clientHost",
    "host",
    "rackId",
    "records",
];

/// The names a capture's requests use, and what the run needs of them.
#[derive(Debug, Default)]
struct Names {
    /// Captured name to logical name, per kind.
    logical: BTreeMap<(Kind, String), String>,
    /// Logical names taken, per kind.
    taken: BTreeSet<(Kind, String)>,
    /// Topic id to captured topic name.
    ids: BTreeMap<String, String>,
    /// Partitions each captured topic needs.
    partitions: BTreeMap<String, i64>,
    /// Captured topics a CreateTopics names.
    created: BTreeSet<String>,
}

impl Names {
    fn add(&mut self, kind: Kind, name: &str) {
        if name.is_empty() || self.logical.contains_key(&(kind, name.to_owned())) {
            return;
        }
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut logical = clean.clone();
        let mut n = 2;
        while self.taken.contains(&(kind, logical.clone())) {
            logical = format!("{clean}-{n}");
            n += 1;
        }
        self.taken.insert((kind, logical.clone()));
        self.logical.insert((kind, name.to_owned()), logical);
        if kind == Kind::Topic {
            self.partitions.entry(name.to_owned()).or_insert(1);
        }
    }

    fn needs_partition(&mut self, topic: &str, index: i64) {
        if let Some(count) = self.partitions.get_mut(topic) {
            *count = (*count).max(index.saturating_add(1)).min(1000);
        }
    }

    /// Learns the names a request uses where requests name them.
    fn learn_request(&mut self, body: &Value) {
        let mut found = Vec::new();
        named(body, None, &mut found);
        for (kind, name, _) in &found {
            self.add(*kind, name);
        }
        // Partitions, and topics the capture creates.
        let mut entries = Vec::new();
        topic_entries(body, &mut entries);
        for (topic, entry) in entries {
            if let Some(topic) = self.topic_name(&topic) {
                self.needs_partition(&topic, max_partition(entry));
            }
        }
        if let Some(topics) = body.get("topics").and_then(Value::as_array) {
            if body.get("validateOnly").is_some() && body.get("timeoutMs").is_some() {
                // CreateTopics.
                for topic in topics {
                    if let Some(name) = topic.get("name").and_then(Value::as_str) {
                        self.created.insert(name.to_owned());
                    }
                }
            }
        }
    }

    /// Learns topic ids, and partition counts, from an answer.
    fn learn_answer(&mut self, answer: &Value) {
        walk_objects(answer, &mut |object| {
            let name = ["name", "topic", "topicName"]
                .iter()
                .find_map(|k| object.get(*k).and_then(Value::as_str));
            let id = object.get("topicId").and_then(Value::as_str);
            if let (Some(name), Some(id)) = (name, id) {
                if id != crate::normalize::ZERO_UUID {
                    self.ids.insert(id.to_owned(), name.to_owned());
                }
                if let Some(partitions) = object.get("partitions").and_then(Value::as_array) {
                    let most = partitions
                        .iter()
                        .filter_map(|p| p.get("partitionIndex").and_then(Value::as_i64))
                        .max();
                    if let Some(most) = most {
                        self.needs_partition(name, most);
                    }
                }
            }
        });
    }

    /// The captured topic name an entry's key names (a name, or an id).
    fn topic_name(&self, key: &str) -> Option<String> {
        if self.logical.contains_key(&(Kind::Topic, key.to_owned())) {
            return Some(key.to_owned());
        }
        self.ids.get(key).cloned()
    }

    fn placeholder(&self, kind: Kind, name: &str) -> Option<String> {
        self.logical
            .get(&(kind, name.to_owned()))
            .map(|logical| kind.placeholder(logical))
    }

    /// The topics the run creates: every topic named, except those the
    /// capture creates, and those named only by an id with no name.
    fn topics(&self) -> Vec<(String, TopicSpec)> {
        self.logical
            .iter()
            .filter(|((kind, name), _)| *kind == Kind::Topic && !self.created.contains(name))
            .map(|((_, name), logical)| {
                let spec = TopicSpec {
                    partitions: self.partitions.get(name).copied().unwrap_or(1),
                    ..TopicSpec::default()
                };
                (logical.clone(), spec)
            })
            .collect()
    }

    /// The case of one captured request.
    fn case(&self, captured: &Captured) -> Case {
        let Captured {
            connection,
            number,
            api,
            version,
            body,
        } = captured;
        let template = self.rename(body, None);
        let route = self.route(*api, body);
        let mut step = Step::new(
            *api,
            VersionChoice::Exact(*version),
            route.clone(),
            template,
        );
        let retriable = match route {
            Route::Coordinator(_) => &COORDINATOR_RETRIABLE[..],
            _ => &RETRIABLE[..],
        };
        step.until = Some(Until {
            not_errors: retriable.to_vec(),
            ..Until::default()
        });
        Case {
            name: format!(
                "replay/conn-{connection}/{number}-{}-v{version}",
                api.name()
            ),
            area: Area::Replay,
            api: Some(*api),
            version: Some(*version),
            check: Check::Steps(vec![step]),
        }
    }

    /// Where a client sends `api` with `body`.
    fn route(&self, api: ApiKey, body: &Value) -> Route {
        match sweep::route(api) {
            Route::Leader { .. } | Route::NotLeader { .. } => {
                let mut entries = Vec::new();
                topic_entries(body, &mut entries);
                entries
                    .into_iter()
                    .find_map(|(key, entry)| {
                        let topic = self.topic_name(&key)?;
                        let logical = self.logical.get(&(Kind::Topic, topic))?;
                        Some(Route::Leader {
                            topic: Kind::Topic.placeholder(logical),
                            partition: first_partition(entry).unwrap_or(0),
                        })
                    })
                    .unwrap_or_default()
            }
            Route::Coordinator(CoordinatorKey::Group(_)) => {
                Route::Coordinator(CoordinatorKey::RequestGroup)
            }
            Route::Coordinator(CoordinatorKey::Transaction(_)) => {
                Route::Coordinator(CoordinatorKey::RequestTransaction)
            }
            other => other,
        }
    }

    /// `value` (under `key`) with the names and ids renamed, and every
    /// other `${` written `$${`.
    fn rename(&self, value: &Value, key: Option<&str>) -> Value {
        match value {
            Value::String(text) => {
                if key.is_some_and(|k| NEVER_NAMES.contains(&k)) {
                    return Value::String(text.replace("${", "$${"));
                }
                if key == Some("topicId") {
                    if let Some(logical) = self
                        .ids
                        .get(text)
                        .and_then(|name| self.logical.get(&(Kind::Topic, name.clone())))
                    {
                        return Value::String(format!("${{topicId.{logical}}}"));
                    }
                }
                let kinds = key.and_then(kind_of_key).map_or_else(
                    || vec![Kind::Topic, Kind::Group, Kind::Txn],
                    |kind| vec![kind],
                );
                kinds
                    .into_iter()
                    .find_map(|kind| self.placeholder(kind, text))
                    .map_or_else(|| Value::String(text.replace("${", "$${")), Value::String)
            }
            Value::Array(items) => items.iter().map(|v| self.rename(v, key)).collect(),
            Value::Object(map) => {
                let kind_here = resource_kind(map).or_else(|| coordinator_kind(map));
                Value::Object(
                    map.iter()
                        .map(|(k, v)| {
                            let renamed = match (kind_here, k.as_str(), v) {
                                (
                                    Some(kind),
                                    "resourceName" | "key" | "coordinatorKeys",
                                    Value::String(_) | Value::Array(_),
                                ) => self.rename_as(kind, v),
                                _ => self.rename(v, Some(k)),
                            };
                            (k.clone(), renamed)
                        })
                        .collect::<Map<_, _>>(),
                )
            }
            other => other.clone(),
        }
    }

    fn rename_as(&self, kind: Kind, value: &Value) -> Value {
        match value {
            Value::String(text) => self
                .placeholder(kind, text)
                .map_or_else(|| Value::String(text.replace("${", "$${")), Value::String),
            Value::Array(items) => items.iter().map(|v| self.rename_as(kind, v)).collect(),
            other => other.clone(),
        }
    }
}

/// The kind of name a string under `key` is, where requests name them.
fn kind_of_key(key: &str) -> Option<Kind> {
    match key {
        "topic" | "topicName" | "topicNames" | "subscribedTopicNames" => Some(Kind::Topic),
        "groupId" | "groupIds" | "groupsNames" => Some(Kind::Group),
        "transactionalId" | "transactionalIds" | "v3AndBelowTransactionalId" => Some(Kind::Txn),
        _ => None,
    }
}

/// The kind of a config resource's name (type 2, a topic; 32, a group).
fn resource_kind(map: &Map<String, Value>) -> Option<Kind> {
    map.get("resourceName")?;
    match map.get("resourceType").and_then(Value::as_i64)? {
        2 => Some(Kind::Topic),
        32 => Some(Kind::Group),
        _ => None,
    }
}

/// The kind of FindCoordinator's keys (key type 0, a group; 1, a
/// transactional id).
fn coordinator_kind(map: &Map<String, Value>) -> Option<Kind> {
    if map.get("key").is_none() && map.get("coordinatorKeys").is_none() {
        return None;
    }
    match map.get("keyType").and_then(Value::as_i64)? {
        0 => Some(Kind::Group),
        1 => Some(Kind::Txn),
        _ => None,
    }
}

/// Every name `value` gives where requests name them: kind, name, and
/// whether it was found by its key.
fn named(value: &Value, key: Option<&str>, found: &mut Vec<(Kind, String, bool)>) {
    match value {
        Value::String(text) => {
            if let Some(kind) = key.and_then(kind_of_key) {
                found.push((kind, text.clone(), true));
            }
        }
        Value::Array(items) => {
            let topic_array = key.is_some_and(|k| k.to_ascii_lowercase().contains("topic"));
            for item in items {
                if topic_array {
                    if let Some(name) = item.get("name").and_then(Value::as_str) {
                        found.push((Kind::Topic, name.to_owned(), true));
                    }
                }
                if key == Some("groups") {
                    // DescribeGroups names groups as strings.
                    if let Some(name) = item.as_str() {
                        found.push((Kind::Group, name.to_owned(), true));
                    }
                }
                named(item, key, found);
            }
        }
        Value::Object(map) => {
            let special = resource_kind(map).or_else(|| coordinator_kind(map));
            if let Some(kind) = special {
                for k in ["resourceName", "key", "coordinatorKeys"] {
                    match map.get(k) {
                        Some(Value::String(s)) => found.push((kind, s.clone(), true)),
                        Some(Value::Array(items)) => found.extend(
                            items
                                .iter()
                                .filter_map(Value::as_str)
                                .map(|s| (kind, s.to_owned(), true)),
                        ),
                        _ => {}
                    }
                }
            }
            for (k, v) in map {
                if k == "records" {
                    continue;
                }
                named(v, Some(k), found);
            }
        }
        _ => {}
    }
}

/// Each object of `value` that stands for one topic (it names the topic by
/// `name` inside a topics array, `topic`, `topicName` or `topicId`), with
/// the name or id.
fn topic_entries<'a>(value: &'a Value, out: &mut Vec<(String, &'a Value)>) {
    fn visit<'a>(value: &'a Value, in_topics: bool, out: &mut Vec<(String, &'a Value)>) {
        match value {
            Value::Array(items) => items.iter().for_each(|v| visit(v, in_topics, out)),
            Value::Object(map) => {
                let key = ["topic", "topicName"]
                    .iter()
                    .chain(if in_topics { &["name"][..] } else { &[][..] })
                    .chain(["topicId"].iter())
                    .find_map(|k| map.get(*k).and_then(Value::as_str))
                    .filter(|k| *k != crate::normalize::ZERO_UUID);
                if let Some(key) = key {
                    out.push((key.to_owned(), value));
                    return;
                }
                for (k, v) in map {
                    visit(v, k.to_ascii_lowercase().contains("topic"), out);
                }
            }
            _ => {}
        }
    }
    visit(value, false, out);
}

/// The partition indexes an entry names, at any depth.
fn partitions_in(value: &Value, out: &mut Vec<i64>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| partitions_in(v, out)),
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    (
                        "partitionIndex" | "index" | "partition" | "partitionId",
                        Value::Number(n),
                    ) => {
                        out.extend(n.as_i64());
                    }
                    ("partitions" | "partitionIndexes", Value::Array(items))
                        if items.iter().all(Value::is_i64) =>
                    {
                        out.extend(items.iter().filter_map(Value::as_i64));
                    }
                    _ => partitions_in(v, out),
                }
            }
        }
        _ => {}
    }
}

fn max_partition(entry: &Value) -> i64 {
    let mut found = Vec::new();
    partitions_in(entry, &mut found);
    found.into_iter().filter(|&p| p >= 0).max().unwrap_or(0)
}

fn first_partition(entry: &Value) -> Option<i64> {
    let mut found = Vec::new();
    partitions_in(entry, &mut found);
    found.into_iter().find(|&p| p >= 0)
}

fn walk_objects(value: &Value, visit: &mut impl FnMut(&Map<String, Value>)) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| walk_objects(v, visit)),
        Value::Object(map) => {
            visit(map);
            map.values().for_each(|v| walk_objects(v, visit));
        }
        _ => {}
    }
}
