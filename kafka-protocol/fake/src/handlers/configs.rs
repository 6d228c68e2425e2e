//! DescribeConfigs, AlterConfigs and IncrementalAlterConfigs, for topics,
//! brokers and groups, from Kafka 4.4.0's table of configs
//! ([`crate::config_table`]): every config Kafka describes, with its value
//! and where it comes from (a topic's or group's own setting, a broker's
//! dynamic one, the cluster-wide dynamic default, the broker's start-up
//! setting, Kafka's default), synonyms and documentation when asked (the
//! fake's own description of each config from its facts: Kafka's is its
//! prose, which the fake does not carry), and changes checked as Kafka
//! checks them.

use std::collections::BTreeMap;

use kafka_wire::messages::{
    alter_configs_response, describe_configs_response, incremental_alter_configs_response,
    AlterConfigsRequest, AlterConfigsResponse, DescribeConfigsRequest, DescribeConfigsResponse,
    IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use super::owned;
use crate::config_table::{self, source, Entry, Refusal};
use crate::dispatch::Context;
use crate::state::State;

/// Resource types.
const TOPIC: i8 = 2;
const BROKER: i8 = 4;
const GROUP: i8 = 32;

/// The node id of the cluster-wide broker resource (resource name "").
pub const CLUSTER: i32 = -1;

/// A described config: (name, value, source), then the synonyms.
type Described = (
    String,
    Option<String>,
    i8,
    Vec<(String, Option<String>, i8)>,
);

/// The start-up settings of broker `node` that Kafka would show as
/// STATIC_BROKER_CONFIG: what every Kafka broker must be given (its id and
/// listener), and the cluster's settings where they differ from Kafka's
/// defaults.
fn static_configs(cx: &Context<'_>, node: i32) -> BTreeMap<&'static str, String> {
    let config = &cx.shared.config;
    let mut statics = BTreeMap::new();
    if node == CLUSTER {
        return statics;
    }
    statics.insert("node.id", node.to_string());
    statics.insert("broker.id", node.to_string());
    statics.insert("process.roles", "broker,controller".to_owned());
    if let Some(broker) = cx.shared.broker(node) {
        let protocol = if config.sasl_users.is_empty() {
            "PLAINTEXT"
        } else {
            "SASL_PLAINTEXT"
        };
        let advertised = format!("{protocol}://{}:{}", broker.host, broker.port);
        let listener = cx.shared.listen_address(node).map_or_else(
            || advertised.clone(),
            |(host, port)| format!("{protocol}://{host}:{port}"),
        );
        statics.insert("listeners", listener);
        statics.insert("advertised.listeners", advertised);
        if let Some(rack) = broker.rack {
            statics.insert("broker.rack", rack);
        }
    }
    let mut mechanisms: Vec<&str> = config
        .sasl_users
        .iter()
        .map(|u| u.mechanism.name())
        .collect();
    mechanisms.sort_unstable();
    mechanisms.dedup();
    let settings = [
        ("num.partitions", config.default_partitions.to_string()),
        ("auto.create.topics.enable", config.auto_create.to_string()),
        (
            "socket.request.max.bytes",
            config.max_request_size.to_string(),
        ),
        (
            "connections.max.idle.ms",
            config.idle_timeout.as_millis().to_string(),
        ),
        ("max.connections", config.max_connections.to_string()),
        (
            "group.min.session.timeout.ms",
            config.min_session_timeout.as_millis().to_string(),
        ),
        (
            "group.max.session.timeout.ms",
            config.max_session_timeout.as_millis().to_string(),
        ),
        ("sasl.enabled.mechanisms", mechanisms.join(",")),
    ];
    let table = &config_table::table().broker;
    for (name, value) in settings {
        let default = table.get(name).and_then(|e| e.value.as_deref());
        if default != Some(value.as_str()) && !(value.is_empty() && default.is_none()) {
            statics.insert(name, value);
        }
    }
    statics
}

/// Where broker config `entry` takes its value on broker `node`, first
/// first: its dynamic setting there, the cluster-wide dynamic default, the
/// start-up setting, Kafka's default (levels without a value left out).
fn broker_chain(
    state: &State,
    statics: &BTreeMap<&'static str, String>,
    node: i32,
    entry: &Entry,
) -> Vec<(String, Option<String>, i8)> {
    let dynamic = |at: i32| {
        state
            .broker_configs
            .get(&at)
            .and_then(|set| set.get(&entry.name))
            .cloned()
    };
    let mut chain = Vec::new();
    if node != CLUSTER {
        if let Some(value) = dynamic(node) {
            chain.push((value, source::DYNAMIC_BROKER_CONFIG));
        }
    }
    if let Some(value) = dynamic(CLUSTER) {
        chain.push((value, source::DYNAMIC_DEFAULT_BROKER_CONFIG));
    }
    if let Some(value) = statics.get(entry.name.as_str()) {
        chain.push((value.clone(), source::STATIC_BROKER_CONFIG));
    }
    if let Some(value) = &entry.value {
        chain.push((value.clone(), source::DEFAULT_CONFIG));
    }
    chain
        .into_iter()
        .map(|(value, source)| {
            (
                entry.name.clone(),
                (!entry.sensitive).then_some(value),
                source,
            )
        })
        .collect()
}

/// A topic's or group's config: its own setting (`own`, with `own_source`),
/// else what its synonyms (broker configs) resolve to on broker `node`,
/// else what Kafka described.
fn resolved(
    state: &State,
    statics: &BTreeMap<&'static str, String>,
    node: i32,
    entry: &Entry,
    own: Option<&String>,
    own_source: i8,
) -> Described {
    let brokers = &config_table::table().broker;
    let mut synonyms = Vec::new();
    if let Some(value) = own {
        synonyms.push((entry.name.clone(), Some(value.clone()), own_source));
    }
    for (at, (name, value, source)) in entry.synonyms.iter().enumerate() {
        // A broker config named twice (once per level) is resolved once.
        let again = entry.synonyms[..at]
            .iter()
            .any(|(earlier, ..)| earlier == name);
        match brokers.get(name) {
            Some(_) if again => {}
            Some(broker) => synonyms.extend(broker_chain(state, statics, node, broker)),
            None => synonyms.push((name.clone(), value.clone(), *source)),
        }
    }
    let (value, source) = match synonyms.first() {
        Some((_, value, source)) => (value.clone(), *source),
        None => (entry.value.clone(), entry.source),
    };
    (entry.name.clone(), value, source, synonyms)
}

/// A new topic's every config as Kafka's CreateTopics lists them (v5+):
/// by name, each resolved as DescribeConfigs resolves it, from the topic's
/// own `configs` given in the request to the defaults: (name, value,
/// source, read-only, sensitive).
pub(crate) fn new_topic_configs(
    cx: &Context<'_>,
    state: &State,
    own: &BTreeMap<String, String>,
) -> Vec<(String, Option<String>, i8, bool, bool)> {
    let statics = static_configs(cx, cx.node_id);
    let mut listed: Vec<_> = config_table::table()
        .topic
        .entries()
        .iter()
        .map(|entry| {
            let (name, value, source, _) = resolved(
                state,
                &statics,
                cx.node_id,
                entry,
                own.get(&entry.name),
                source::DYNAMIC_TOPIC_CONFIG,
            );
            let value = if entry.sensitive { None } else { value };
            (name, value, source, entry.read_only, entry.sensitive)
        })
        .collect();
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    listed
}

/// Every config of a resource, described, or its error.
fn configs_of(
    state: &State,
    cx: &Context<'_>,
    kind: i8,
    name: &str,
) -> Result<Vec<(Described, &'static Entry)>, Refusal> {
    let table = config_table::table();
    match kind {
        TOPIC => {
            // Kafka describes an unknown topic by its code alone (the
            // message empty).
            let topic = state
                .topics
                .get(name)
                .ok_or_else(|| (ErrorCode::UnknownTopicOrPartition.code(), String::new()))?;
            let statics = static_configs(cx, cx.node_id);
            Ok(table
                .topic
                .entries()
                .iter()
                .map(|entry| {
                    let own = topic.configs.get(&entry.name);
                    let described = resolved(
                        state,
                        &statics,
                        cx.node_id,
                        entry,
                        own,
                        source::DYNAMIC_TOPIC_CONFIG,
                    );
                    (described, entry)
                })
                .collect())
        }
        BROKER => {
            let node = described_broker(cx, name)?;
            let statics = static_configs(cx, node);
            Ok(table
                .broker
                .entries()
                .iter()
                .filter_map(|entry| {
                    let chain = broker_chain(state, &statics, node, entry);
                    let (value, source) = match chain.first() {
                        Some((_, value, source)) => (value.clone(), *source),
                        None => (None, source::DEFAULT_CONFIG),
                    };
                    // The cluster-wide resource lists only what is set there.
                    let chain = if node == CLUSTER {
                        chain
                            .into_iter()
                            .filter(|(_, _, s)| *s == source::DYNAMIC_DEFAULT_BROKER_CONFIG)
                            .collect()
                    } else {
                        chain
                    };
                    if node == CLUSTER && chain.is_empty() {
                        return None;
                    }
                    Some(((entry.name.clone(), value, source, chain), entry))
                })
                .collect())
        }
        GROUP => {
            let set = state.share_groups.configs.get(name);
            let statics = static_configs(cx, cx.node_id);
            Ok(table
                .group
                .entries()
                .iter()
                .map(|entry| {
                    let own = set.and_then(|s| s.get(&entry.name));
                    let described = resolved(
                        state,
                        &statics,
                        cx.node_id,
                        entry,
                        own,
                        source::DYNAMIC_GROUP_CONFIG,
                    );
                    (described, entry)
                })
                .collect())
        }
        _ => Err((
            ErrorCode::InvalidRequest.code(),
            format!("Unsupported resource type {kind}"),
        )),
    }
}

/// The node a described broker resource names: "" (the cluster-wide
/// defaults) or the broker answering, as Kafka allows.
fn described_broker(cx: &Context<'_>, name: &str) -> Result<i32, Refusal> {
    if name.is_empty() {
        return Ok(CLUSTER);
    }
    match name.parse::<i32>() {
        Ok(id) if id == cx.node_id => Ok(id),
        Err(_) => Err((
            ErrorCode::InvalidRequest.code(),
            format!("Broker id must be an integer, but it is: {name}"),
        )),
        Ok(_) => Err((
            ErrorCode::InvalidRequest.code(),
            format!(
                "Unexpected broker id, expected {} or empty string, but received {name}",
                cx.node_id
            ),
        )),
    }
}

/// The node a changed broker resource names ("" for the cluster-wide
/// defaults): any running broker.
fn broker_node(cx: &Context<'_>, name: &str) -> Result<i32, Refusal> {
    if name.is_empty() {
        return Ok(CLUSTER);
    }
    name.parse::<i32>()
        .ok()
        .filter(|id| cx.shared.broker(*id).is_some())
        .ok_or_else(|| {
            (
                ErrorCode::InvalidRequest.code(),
                format!("Invalid broker id {name}"),
            )
        })
}

/// What a resource type's configs belong to, in a config's description.
fn resource_kind(resource_type: i8) -> &'static str {
    match resource_type {
        TOPIC => "topic",
        BROKER => "broker",
        _ => "group",
    }
}

/// The configs of each resource (all, or the keys asked for), with
/// synonyms and documentation when asked.
pub fn describe_configs(
    cx: &Context<'_>,
    request: &DescribeConfigsRequest<'_>,
) -> ResponseBody<'static> {
    let state = cx.shared.state();
    let results = request
        .resources
        .iter()
        .map(|r| {
            let mut result = describe_configs_response::DescribeConfigsResult {
                resource_type: r.resource_type,
                resource_name: owned(&r.resource_name),
                ..Default::default()
            };
            match configs_of(&state, cx, r.resource_type, &r.resource_name) {
                Err((code, message)) => {
                    result.error_code = code;
                    result.error_message = Some(message.into());
                }
                Ok(configs) => {
                    result.configs = configs
                        .into_iter()
                        .filter(|((key, ..), _)| {
                            r.configuration_keys
                                .as_ref()
                                .is_none_or(|keys| keys.iter().any(|k| k == key))
                        })
                        .map(|((key, value, source, synonyms), entry)| {
                            describe_configs_response::DescribeConfigsResourceResult {
                                name: key.into(),
                                value: value.filter(|_| !entry.sensitive).map(Into::into),
                                read_only: entry.read_only,
                                config_source: source,
                                is_sensitive: entry.sensitive,
                                synonyms: if request.include_synonyms {
                                    synonyms
                                        .into_iter()
                                        .map(|(name, value, source)| {
                                            describe_configs_response::DescribeConfigsSynonym {
                                                name: name.into(),
                                                value: value.map(Into::into),
                                                source,
                                                ..Default::default()
                                            }
                                        })
                                        .collect()
                                } else {
                                    Default::default()
                                },
                                config_type: entry.config_type,
                                // Kafka's documentation of a config is its
                                // prose, which the fake does not carry: it
                                // describes the config from its facts.
                                documentation: request.include_documentation.then(|| {
                                    entry.documentation(resource_kind(r.resource_type)).into()
                                }),
                                ..Default::default()
                            }
                        })
                        .collect();
                }
            }
            result
        })
        .collect();
    ResponseBody::DescribeConfigs(DescribeConfigsResponse {
        results,
        ..Default::default()
    })
}

/// A change to one key: set, or back to the default.
enum Change {
    Set(String),
    Delete,
}

/// Applies (or, with `validate_only`, checks) changes to one resource.
fn apply(
    state: &mut State,
    cx: &Context<'_>,
    kind: i8,
    name: &str,
    changes: Vec<(String, Change)>,
    replace: bool,
    validate_only: bool,
) -> Result<(), Refusal> {
    let value = |change: &Change| match change {
        Change::Set(v) => Some(v.clone()),
        Change::Delete => None,
    };
    match kind {
        TOPIC => {
            if state.topics.get(name).is_none() {
                return Err((
                    ErrorCode::UnknownTopicOrPartition.code(),
                    format!("The topic '{name}' does not exist."),
                ));
            }
            for (key, change) in &changes {
                config_table::check_topic(key, value(change).as_deref())?;
            }
            if let (Some(topic), false) = (state.topics.get_mut(name), validate_only) {
                update(&mut topic.configs, changes, replace);
            }
            Ok(())
        }
        BROKER => {
            let node = broker_node(cx, name)?;
            let values: Vec<(&str, Option<String>)> = changes
                .iter()
                .map(|(k, c)| (k.as_str(), value(c)))
                .collect();
            config_table::check_broker(values.iter().map(|(k, v)| (*k, v.as_deref())))?;
            if !validate_only {
                update(
                    state.broker_configs.entry(node).or_default(),
                    changes,
                    replace,
                );
            }
            Ok(())
        }
        GROUP => {
            for (key, change) in &changes {
                config_table::check_group(key, value(change).as_deref())?;
            }
            if !validate_only {
                update(
                    state
                        .share_groups
                        .configs
                        .entry(name.to_owned())
                        .or_default(),
                    changes,
                    replace,
                );
            }
            Ok(())
        }
        _ => Err((
            ErrorCode::InvalidRequest.code(),
            format!("Unsupported resource type {kind}"),
        )),
    }
}

fn update(configs: &mut BTreeMap<String, String>, changes: Vec<(String, Change)>, replace: bool) {
    if replace {
        configs.clear();
    }
    for (key, change) in changes {
        match change {
            Change::Set(value) => {
                configs.insert(key, value);
            }
            Change::Delete => {
                configs.remove(&key);
            }
        }
    }
}

/// The error code and message of a change's outcome.
fn refusal(result: Result<(), Refusal>) -> (i16, Option<std::borrow::Cow<'static, str>>) {
    match result {
        Ok(()) => (0, None),
        Err((code, message)) => (code, Some(message.into())),
    }
}

/// Replaces a resource's configs with the ones given.
pub fn alter_configs(cx: &Context<'_>, request: &AlterConfigsRequest<'_>) -> ResponseBody<'static> {
    let mut state = cx.shared.state();
    let responses = request
        .resources
        .iter()
        .map(|r| {
            let changes = r
                .configs
                .iter()
                .map(|c| {
                    let change = c
                        .value
                        .as_deref()
                        .map_or(Change::Delete, |v| Change::Set(v.to_owned()));
                    (c.name.to_string(), change)
                })
                .collect();
            let result = apply(
                &mut state,
                cx,
                r.resource_type,
                &r.resource_name,
                changes,
                true,
                request.validate_only,
            );
            let (error_code, error_message) = refusal(result);
            alter_configs_response::AlterConfigsResourceResponse {
                error_code,
                error_message,
                resource_type: r.resource_type,
                resource_name: owned(&r.resource_name),
                ..Default::default()
            }
        })
        .collect();
    ResponseBody::AlterConfigs(AlterConfigsResponse {
        responses,
        ..Default::default()
    })
}

/// IncrementalAlterConfigs' operations.
const SET: i8 = 0;
const DELETE: i8 = 1;
const APPEND: i8 = 2;
const SUBTRACT: i8 = 3;

/// The value a list config takes after APPEND or SUBTRACT of `value`'s
/// items, as Kafka 4.4.0's controller computes it: from the resource's own
/// setting, else the config's default; each appended item not already
/// there added, each subtracted one removed once. Another type of config
/// gets INVALID_CONFIG, in Kafka's words.
fn list_change(
    state: &State,
    kind: i8,
    resource: &str,
    name: &str,
    operation: i8,
    value: Option<&str>,
) -> Result<String, Refusal> {
    let table = config_table::table();
    let (entry, own) = match kind {
        TOPIC => (
            table.topic.get(name),
            state.topics.get(resource).and_then(|t| t.configs.get(name)),
        ),
        BROKER => (
            table.broker.get(name),
            resource
                .parse::<i32>()
                .ok()
                .or(resource.is_empty().then_some(CLUSTER))
                .and_then(|node| state.broker_configs.get(&node))
                .and_then(|set| set.get(name)),
        ),
        GROUP => (
            table.group.get(name),
            state
                .share_groups
                .configs
                .get(resource)
                .and_then(|set| set.get(name)),
        ),
        _ => (None, None),
    };
    let verb = if operation == APPEND {
        "APPEND"
    } else {
        "SUBTRACT"
    };
    let Some(entry) = entry.filter(|e| e.config_type == config_table::kind::LIST) else {
        return Err((
            ErrorCode::InvalidConfig.code(),
            format!("Can't {verb} to key {name} because its type is not LIST."),
        ));
    };
    // Kafka's controller splits on commas as they stand (no trimming) and
    // drops the empty parts of the current value.
    let mut current: Vec<&str> = own
        .map_or(entry.value.as_deref().unwrap_or(""), String::as_str)
        .split(',')
        .filter(|part| !part.is_empty())
        .collect();
    for item in value.unwrap_or("").split(',') {
        if operation == APPEND {
            if !current.contains(&item) {
                current.push(item);
            }
        } else if let Some(at) = current.iter().position(|part| *part == item) {
            current.remove(at);
        }
    }
    Ok(current.join(","))
}

/// Sets (0) or deletes (1) keys, appends to (2) or subtracts from (3) list
/// configs.
pub fn incremental_alter_configs(
    cx: &Context<'_>,
    request: &IncrementalAlterConfigsRequest<'_>,
) -> ResponseBody<'static> {
    let mut state = cx.shared.state();
    let responses = request
        .resources
        .iter()
        .map(|r| {
            let mut changes = Vec::new();
            let mut result = Ok(());
            for c in r.configs.iter() {
                match (c.config_operation, c.value.as_deref()) {
                    (SET, Some(v)) => changes.push((c.name.to_string(), Change::Set(v.to_owned()))),
                    (DELETE, _) => changes.push((c.name.to_string(), Change::Delete)),
                    (operation @ (APPEND | SUBTRACT), value) => {
                        match list_change(
                            &state,
                            r.resource_type,
                            &r.resource_name,
                            &c.name,
                            operation,
                            value,
                        ) {
                            Ok(v) => changes.push((c.name.to_string(), Change::Set(v))),
                            Err(refusal) => result = Err(refusal),
                        }
                    }
                    (operation, _) => {
                        result = Err((
                            ErrorCode::InvalidRequest.code(),
                            format!("Unknown alter configs operation type {operation}"),
                        ))
                    }
                }
            }
            let result = result.and_then(|()| {
                apply(
                    &mut state,
                    cx,
                    r.resource_type,
                    &r.resource_name,
                    changes,
                    false,
                    request.validate_only,
                )
            });
            let (error_code, error_message) = refusal(result);
            incremental_alter_configs_response::AlterConfigsResourceResponse {
                error_code,
                error_message,
                resource_type: r.resource_type,
                resource_name: owned(&r.resource_name),
                ..Default::default()
            }
        })
        .collect();
    ResponseBody::IncrementalAlterConfigs(IncrementalAlterConfigsResponse {
        responses,
        ..Default::default()
    })
}
