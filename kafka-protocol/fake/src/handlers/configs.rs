//! DescribeConfigs, AlterConfigs and IncrementalAlterConfigs, for topics,
//! brokers and groups (a share group's `share.auto.offset.reset`).

use std::collections::BTreeMap;

use kafka_wire::messages::{
    alter_configs_response, describe_configs_response, incremental_alter_configs_response,
    AlterConfigsRequest, AlterConfigsResponse, DescribeConfigsRequest, DescribeConfigsResponse,
    IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use super::owned;
use crate::dispatch::Context;
use crate::state::share_groups::SHARE_GROUP_CONFIG_DEFAULTS;
use crate::state::topics::{check_config, TOPIC_CONFIG_DEFAULTS};
use crate::state::State;

/// Resource types.
const TOPIC: i8 = 2;
const BROKER: i8 = 4;
const GROUP: i8 = 32;

/// Config source of a group config set dynamically.
const DYNAMIC_GROUP_CONFIG: i8 = 8;

/// Config sources.
const DYNAMIC_TOPIC_CONFIG: i8 = 1;
const DYNAMIC_BROKER_CONFIG: i8 = 2;
const DEFAULT_CONFIG: i8 = 5;

/// Broker configs the fake reports, with Kafka 4.4.0's defaults.
const BROKER_CONFIG_DEFAULTS: &[(&str, &str)] = &[
    ("auto.create.topics.enable", "true"),
    ("log.retention.bytes", "-1"),
    ("message.max.bytes", "1048588"),
    ("num.partitions", "1"),
    ("socket.request.max.bytes", "104857600"),
];

/// (name, value, source) of a resource's configs, or its error.
fn configs_of(
    state: &State,
    cx: &Context<'_>,
    kind: i8,
    name: &str,
) -> Result<Vec<(String, String, i8)>, i16> {
    match kind {
        TOPIC => {
            let topic = state
                .topics
                .get(name)
                .ok_or(ErrorCode::UnknownTopicOrPartition.code())?;
            Ok(TOPIC_CONFIG_DEFAULTS
                .iter()
                .map(|(key, default)| match topic.configs.get(*key) {
                    Some(v) => ((*key).to_owned(), v.clone(), DYNAMIC_TOPIC_CONFIG),
                    None => ((*key).to_owned(), (*default).to_owned(), DEFAULT_CONFIG),
                })
                .collect())
        }
        BROKER => {
            let node = broker_node(cx, name)?;
            let set = state.broker_configs.get(&node);
            Ok(BROKER_CONFIG_DEFAULTS
                .iter()
                .map(|(key, default)| match set.and_then(|s| s.get(*key)) {
                    Some(v) => ((*key).to_owned(), v.clone(), DYNAMIC_BROKER_CONFIG),
                    None => {
                        let value = match *key {
                            "num.partitions" => cx.shared.config.default_partitions.to_string(),
                            "auto.create.topics.enable" => cx.shared.config.auto_create.to_string(),
                            _ => (*default).to_owned(),
                        };
                        ((*key).to_owned(), value, DEFAULT_CONFIG)
                    }
                })
                .collect())
        }
        GROUP => {
            let set = state.share_groups.configs.get(name);
            Ok(SHARE_GROUP_CONFIG_DEFAULTS
                .iter()
                .map(|(key, default)| match set.and_then(|s| s.get(*key)) {
                    Some(v) => ((*key).to_owned(), v.clone(), DYNAMIC_GROUP_CONFIG),
                    None => ((*key).to_owned(), (*default).to_owned(), DEFAULT_CONFIG),
                })
                .collect())
        }
        _ => Err(ErrorCode::InvalidRequest.code()),
    }
}

/// The node a broker resource names ("" for the cluster default).
fn broker_node(cx: &Context<'_>, name: &str) -> Result<i32, i16> {
    if name.is_empty() {
        return Ok(-1);
    }
    name.parse::<i32>()
        .ok()
        .filter(|id| cx.shared.broker(*id).is_some())
        .ok_or(ErrorCode::InvalidRequest.code())
}

/// The configs of each resource (all, or the keys asked for).
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
                Err(code) => result.error_code = code,
                Ok(configs) => {
                    result.configs = configs
                        .into_iter()
                        .filter(|(key, _, _)| {
                            r.configuration_keys
                                .as_ref()
                                .is_none_or(|keys| keys.iter().any(|k| k == key))
                        })
                        .map(|(key, value, source)| {
                            describe_configs_response::DescribeConfigsResourceResult {
                                name: key.into(),
                                value: Some(value.into()),
                                config_source: source,
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
) -> Result<(), i16> {
    match kind {
        TOPIC => {
            for (key, change) in &changes {
                let value = match change {
                    Change::Set(v) => Some(v.as_str()),
                    Change::Delete => None,
                };
                check_config(key, value)?;
            }
            let topic = state
                .topics
                .get_mut(name)
                .ok_or(ErrorCode::UnknownTopicOrPartition.code())?;
            if validate_only {
                return Ok(());
            }
            update(&mut topic.configs, changes, replace);
            Ok(())
        }
        BROKER => {
            let node = broker_node(cx, name)?;
            for (key, _) in &changes {
                if !BROKER_CONFIG_DEFAULTS.iter().any(|(k, _)| k == key) {
                    return Err(ErrorCode::InvalidConfig.code());
                }
            }
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
            // The share group configs: share.auto.offset.reset.
            for (key, change) in &changes {
                let known = SHARE_GROUP_CONFIG_DEFAULTS.iter().any(|(k, _)| k == key);
                let valid = match change {
                    Change::Set(v) => {
                        matches!(v.as_str(), "earliest" | "latest") || v.starts_with("by_duration:")
                    }
                    Change::Delete => true,
                };
                if !known || !valid {
                    return Err(ErrorCode::InvalidConfig.code());
                }
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
        _ => Err(ErrorCode::InvalidRequest.code()),
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
            alter_configs_response::AlterConfigsResourceResponse {
                error_code: result.err().unwrap_or(0),
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

/// Sets (0) or deletes (1) keys; APPEND (2) and SUBTRACT (3) on list
/// configs are refused as INVALID_CONFIG.
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
                    (0, Some(v)) => changes.push((c.name.to_string(), Change::Set(v.to_owned()))),
                    (1, _) => changes.push((c.name.to_string(), Change::Delete)),
                    _ => result = Err(ErrorCode::InvalidConfig.code()),
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
            incremental_alter_configs_response::AlterConfigsResourceResponse {
                error_code: result.err().unwrap_or(0),
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
