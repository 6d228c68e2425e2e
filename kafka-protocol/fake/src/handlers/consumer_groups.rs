//! KIP-848 consumer groups: ConsumerGroupHeartbeat (join, heartbeat,
//! leave; the assignment computed by the coordinator) and
//! ConsumerGroupDescribe.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::time::Instant;

use kafka_wire::messages::{
    consumer_group_describe_response, consumer_group_heartbeat_response,
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use super::authorized;
use super::members::{by_topic, describable, heartbeat_interval_ms};
use super::owned;
use crate::dispatch::Context;
use crate::state::consumer_groups::{Beat, Tp, ASSIGNORS};
use crate::state::topics::Topics;
use crate::state::State;

/// Whether Kafka takes `text` for empty: Java's `trim()` drops every
/// character up to the space.
pub(super) fn blank(text: &str) -> bool {
    text.trim_matches(|c: char| c <= ' ').is_empty()
}

/// Kafka 4.4.0's checks of a ConsumerGroupHeartbeat before it looks at the
/// group (its coordinator service's), in its order, with its messages.
fn refusal(
    request: &ConsumerGroupHeartbeatRequest<'_>,
    version: i16,
) -> Option<(ErrorCode, String)> {
    let invalid = |message: &str| Some((ErrorCode::InvalidRequest, message.to_owned()));
    let epoch = request.member_epoch;
    if (version >= 1 || epoch > 0 || epoch == -1) && blank(&request.member_id) {
        return invalid("MemberId can't be empty.");
    }
    if blank(&request.group_id) {
        return invalid("GroupId can't be empty.");
    }
    if request.instance_id.as_deref().is_some_and(blank) {
        return invalid("InstanceId can't be empty.");
    }
    if request.rack_id.as_deref().is_some_and(blank) {
        return invalid("RackId can't be empty.");
    }
    match epoch {
        0 => {
            if request.rebalance_timeout_ms == -1 {
                return invalid("RebalanceTimeoutMs must be provided in first request.");
            }
            if request
                .topic_partitions
                .as_ref()
                .is_none_or(|t| !t.is_empty())
            {
                return invalid("TopicPartitions must be empty when (re-)joining.");
            }
            if request.subscribed_topic_names.is_none() && request.subscribed_topic_regex.is_none()
            {
                return invalid(
                    "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when \
                     (re-)joining.",
                );
            }
        }
        -2 if request.instance_id.is_none() => return invalid("InstanceId can't be null."),
        epoch if epoch < -2 => return invalid("MemberEpoch is invalid."),
        _ => {}
    }
    match request.server_assignor.as_deref() {
        Some(assignor) if !ASSIGNORS.contains(&assignor) => {
            return Some((
                ErrorCode::UnsupportedAssignor,
                format!(
                    "ServerAssignor {assignor} is not supported. Supported assignors: {}.",
                    ASSIGNORS.join(", ")
                ),
            ))
        }
        _ => {}
    }
    let regex = request.subscribed_topic_regex.as_deref()?;
    regex_syntax_error(regex).map(|why| {
        (
            ErrorCode::InvalidRegularExpression,
            format!("SubscribedTopicRegex `{regex}` is not a valid regular expression: {why}."),
        )
    })
}

/// What the regex engine Kafka compiles subscriptions with (RE2's syntax)
/// says of the commonest malformed patterns: unbalanced parentheses, an
/// unclosed class, a trailing backslash. A pattern that passes but that the
/// regex crate cannot compile matches no topics (the group state); other
/// malformed patterns pass.
fn regex_syntax_error(regex: &str) -> Option<&'static str> {
    let mut depth = 0usize;
    let mut chars = regex.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.next().is_none() => {
                return Some("trailing backslash at end of expression")
            }
            '\\' => {}
            '(' => depth += 1,
            ')' if depth == 0 => return Some("unexpected )"),
            ')' => depth -= 1,
            '[' => {
                // A class: `]` first (after any `^`) is a literal.
                if chars.peek() == Some(&'^') {
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    chars.next();
                }
                loop {
                    match chars.next() {
                        None => return Some("missing closing ]"),
                        Some(']') => break,
                        Some('\\') => {
                            chars.next();
                        }
                        Some(_) => {}
                    }
                }
            }
            _ => {}
        }
    }
    (depth > 0).then_some("missing closing )")
}

/// ConsumerGroupHeartbeat, at the group's coordinator.
pub fn heartbeat(
    cx: &Context<'_>,
    request: &ConsumerGroupHeartbeatRequest<'_>,
) -> ResponseBody<'static> {
    let fail = |code: ErrorCode, message: Option<String>| {
        ResponseBody::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatResponse {
            error_code: code.code(),
            error_message: message.map(Cow::Owned),
            member_epoch: 0,
            ..Default::default()
        })
    };
    if let Some((code, message)) = refusal(request, cx.version) {
        return fail(code, Some(message));
    }
    if cx.shared.coordinator(&request.group_id) != cx.node_id {
        return fail(ErrorCode::NotCoordinator, None);
    }
    let beat = Beat {
        version: cx.version,
        group_id: &request.group_id,
        member_id: &request.member_id,
        member_epoch: request.member_epoch,
        instance_id: request.instance_id.as_deref(),
        rack_id: request.rack_id.as_deref(),
        subscribed: request
            .subscribed_topic_names
            .as_ref()
            .map(|names| names.iter().map(|n| n.to_string()).collect()),
        regex: request.subscribed_topic_regex.as_deref(),
        assignor: request.server_assignor.as_deref(),
        owned: request.topic_partitions.as_ref().map(|tps| {
            tps.iter()
                .flat_map(|t| {
                    let id = t.topic_id;
                    t.partitions
                        .iter()
                        .map(move |p| (id, p))
                        .collect::<Vec<_>>()
                })
                .collect()
        }),
        client_id: cx.client_id,
        client_host: &format!("/{}", cx.client_host),
    };
    let mut guard = cx.shared.state();
    let State {
        groups,
        topics,
        share_groups,
        ..
    } = &mut *guard;
    if share_groups.contains(&request.group_id) {
        let message = format!("Group {} is not a consumer group.", request.group_id);
        return fail(ErrorCode::GroupIdNotFound, Some(message));
    }
    let answer = groups.consumer_heartbeat(&request.group_id, beat, topics, Instant::now());
    let assignment = answer
        .assignment
        .map(|set| consumer_group_heartbeat_response::Assignment {
            topic_partitions: by_topic(&set, |topic_id, partitions| {
                consumer_group_heartbeat_response::TopicPartitions {
                    topic_id,
                    partitions: partitions.into(),
                    ..Default::default()
                }
            })
            .into(),
            ..Default::default()
        });
    ResponseBody::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatResponse {
        error_code: answer.error_code,
        error_message: answer.error_message.map(Cow::Owned),
        member_id: answer.member_id.map(Cow::Owned),
        member_epoch: answer.member_epoch,
        heartbeat_interval_ms: heartbeat_interval_ms(answer.error_code, answer.member_epoch),
        assignment,
        ..Default::default()
    })
}

/// An assignment as ConsumerGroupDescribe gives it, with topic names.
fn described(
    topics: &Topics,
    set: Option<&BTreeSet<Tp>>,
) -> consumer_group_describe_response::Assignment<'static> {
    let empty = BTreeSet::new();
    consumer_group_describe_response::Assignment {
        topic_partitions: by_topic(set.unwrap_or(&empty), |topic_id, partitions| {
            consumer_group_describe_response::TopicPartitions {
                topic_id,
                topic_name: owned(topics.name_of(topic_id).unwrap_or_default()),
                partitions: partitions.into(),
                ..Default::default()
            }
        })
        .into(),
        ..Default::default()
    }
}

/// ConsumerGroupDescribe: each group's epochs, assignor and members.
pub fn describe(
    cx: &Context<'_>,
    request: &ConsumerGroupDescribeRequest<'_>,
) -> ResponseBody<'static> {
    let state = cx.shared.state();
    let groups = request
        .group_ids
        .iter()
        .map(|group_id| {
            let mut out = consumer_group_describe_response::DescribedGroup {
                group_id: owned(group_id),
                ..Default::default()
            };
            let group = state.groups.get(group_id);
            let consumer = group.and_then(|g| g.consumer.as_ref());
            let elsewhere = group.is_some() || state.share_groups.contains(group_id);
            let consumer = match describable(cx, group_id, consumer, elsewhere, "consumer") {
                Ok(consumer) => consumer,
                Err(refused) => {
                    (out.error_code, out.error_message) = refused;
                    return out;
                }
            };
            out.authorized_operations =
                authorized::when(request.include_authorized_operations, authorized::GROUP);
            out.group_state = Cow::Borrowed(consumer.state_name());
            out.group_epoch = consumer.epoch;
            out.assignment_epoch = consumer.assignment_epoch;
            out.assignor_name = owned(&consumer.assignor);
            out.members = consumer
                .members
                .values()
                .map(|m| consumer_group_describe_response::Member {
                    member_id: owned(&m.id),
                    instance_id: m.instance_id.as_deref().map(owned),
                    rack_id: m.rack_id.as_deref().map(owned),
                    member_epoch: m.epoch,
                    client_id: owned(&m.client_id),
                    client_host: owned(&m.client_host),
                    subscribed_topic_names: m.subscribed.iter().map(|s| owned(s)).collect(),
                    // Kafka describes a member without a regex with "".
                    subscribed_topic_regex: Some(owned(m.regex.as_deref().unwrap_or_default())),
                    assignment: described(&state.topics, Some(&m.assigned)),
                    target_assignment: described(&state.topics, consumer.target.get(&m.id)),
                    // 1: a member of the consumer protocol (v1+).
                    member_type: 1,
                    ..Default::default()
                })
                .collect::<Vec<_>>()
                .into();
            out
        })
        .collect::<Vec<_>>();
    ResponseBody::ConsumerGroupDescribe(ConsumerGroupDescribeResponse {
        groups: groups.into(),
        ..Default::default()
    })
}
