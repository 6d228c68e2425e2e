//! What the coordinator answers alike to the members of consumer groups
//! (KIP-848) and share groups (KIP-932): an assignment topic by topic, the
//! interval of the next heartbeat, and why a group is not described.

use std::borrow::Cow;
use std::collections::BTreeSet;

use kafka_wire::runtime::Uuid;
use kafka_wire::ErrorCode;

use crate::dispatch::Context;
use crate::state::consumer_groups::{Tp, HEARTBEAT_INTERVAL_MS};

/// Topic partitions grouped by topic, in order, each topic made into a
/// response's entry by `topic` (topic id, its partitions): a member's
/// assignment as a heartbeat's or a describe's answer gives it.
pub(super) fn by_topic<T>(
    set: &BTreeSet<Tp>,
    mut topic: impl FnMut(Uuid, Vec<i32>) -> T,
) -> Vec<T> {
    let mut grouped: Vec<(Uuid, Vec<i32>)> = Vec::new();
    for (id, partition) in set {
        match grouped.last_mut() {
            Some((last, partitions)) if last == id => partitions.push(*partition),
            _ => grouped.push((*id, vec![*partition])),
        }
    }
    grouped
        .into_iter()
        .map(|(id, partitions)| topic(id, partitions))
        .collect()
}

/// The interval a heartbeat's answer asks for: none after an error or a
/// leave (epoch -1 or -2), as in Kafka.
pub(super) fn heartbeat_interval_ms(error_code: i16, member_epoch: i32) -> i32 {
    if error_code == 0 && member_epoch >= 0 {
        HEARTBEAT_INTERVAL_MS
    } else {
        0
    }
}

/// The group `group_id` (looked up as `group`) if this broker describes
/// it, else why not (error code, message), as Kafka words it: the empty id
/// is INVALID_GROUP_ID without a message (on any broker); it is not the
/// group's coordinator; no group has the id ("Group G not found."); or a
/// group of another type has it (`elsewhere`: "Group G is not a consumer
/// group.", `kind` being `consumer`, `share`, ...).
pub(super) fn describable<'g, G>(
    cx: &Context<'_>,
    group_id: &str,
    group: Option<&'g G>,
    elsewhere: bool,
    kind: &str,
) -> Result<&'g G, (i16, Option<Cow<'static, str>>)> {
    if group_id.is_empty() {
        return Err((ErrorCode::InvalidGroupId.code(), None));
    }
    if cx.shared.coordinator(group_id) != cx.node_id {
        return Err((ErrorCode::NotCoordinator.code(), None));
    }
    group.ok_or_else(|| {
        let message = if elsewhere {
            format!("Group {group_id} is not a {kind} group.")
        } else {
            format!("Group {group_id} not found.")
        };
        (ErrorCode::GroupIdNotFound.code(), Some(Cow::Owned(message)))
    })
}
