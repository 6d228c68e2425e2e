//! A StreamsGroupHeartbeat as the state sees it, and what it answers.

use std::collections::BTreeMap;

use super::configure::InternalTopic;
use super::tasks::{TaskSets, Tasks};
use super::topology::Topology;

/// Leaving for good.
pub const LEAVE_GROUP_MEMBER_EPOCH: i32 = -1;
/// A static member leaving for a while.
pub const LEAVE_GROUP_STATIC_MEMBER_EPOCH: i32 = -2;

/// One heartbeat.
#[derive(Debug, Clone)]
pub struct Beat<'a> {
    /// The member id.
    pub member_id: &'a str,
    /// The member epoch: 0 to join, -1 or -2 to leave.
    pub member_epoch: i32,
    /// The endpoint-information epoch the member has seen.
    pub endpoint_information_epoch: i32,
    /// The static id, when sent.
    pub instance_id: Option<&'a str>,
    /// The rack, when sent.
    pub rack_id: Option<&'a str>,
    /// The rebalance timeout, -1 when not sent.
    pub rebalance_timeout_ms: i32,
    /// The topology, on a join.
    pub topology: Option<Topology>,
    /// The tasks the member runs, when sent (all three kinds or none).
    pub owned: Option<TaskSets>,
    /// Its process, when sent.
    pub process_id: Option<&'a str>,
    /// Its interactive-queries endpoint, when sent.
    pub user_endpoint: Option<(String, u16)>,
    /// Its client tags, when sent.
    pub client_tags: Option<BTreeMap<String, String>>,
    /// The changelog offsets of its tasks, when sent.
    pub task_offsets: Option<Vec<(String, i32, i64)>>,
    /// The changelogs' end offsets, when sent.
    pub task_end_offsets: Option<Vec<(String, i32, i64)>>,
    /// Whether it asks the whole application to shut down.
    pub shutdown_application: bool,
    /// The request's client id.
    pub client_id: &'a str,
    /// The client's host, as Kafka writes it (`/127.0.0.1`).
    pub client_host: &'a str,
}

/// Where a member serves interactive queries, and the partitions of its
/// active and of its standby tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointPartitions {
    /// The endpoint.
    pub endpoint: (String, u16),
    /// (topic, partitions) of its active tasks.
    pub active: Vec<(String, Vec<i32>)>,
    /// (topic, partitions) of its standby and warm-up tasks.
    pub standby: Vec<(String, Vec<i32>)>,
}

/// The answer to a heartbeat.
#[derive(Debug, Clone, Default)]
pub struct BeatAnswer {
    /// The error code and message, if it failed.
    pub error: Option<(i16, String)>,
    /// The member id.
    pub member_id: String,
    /// The member epoch.
    pub member_epoch: i32,
    /// The heartbeat interval, 0 after a leave.
    pub heartbeat_interval_ms: i32,
    /// How often to report task offsets, 0 after a leave.
    pub task_offset_interval_ms: i32,
    /// The acceptable recovery lag, -1 after a leave.
    pub acceptable_recovery_lag: i64,
    /// Statuses: (code, detail).
    pub statuses: Vec<(i8, String)>,
    /// The member's tasks, when they changed (or it joined).
    pub assignment: Option<Tasks>,
    /// The group's endpoint-information epoch.
    pub endpoint_information_epoch: i32,
    /// Every member's endpoint and partitions, when the member's
    /// endpoint-information epoch is behind.
    pub partitions_by_endpoint: Option<Vec<EndpointPartitions>>,
    /// Internal topics the broker must create.
    pub to_create: Vec<(String, InternalTopic)>,
}

impl BeatAnswer {
    /// A failed heartbeat: the code and message, Kafka's defaults elsewhere.
    pub fn failed(code: i16, message: impl Into<String>) -> Self {
        BeatAnswer {
            error: Some((code, message.into())),
            acceptable_recovery_lag: -1,
            ..Default::default()
        }
    }
}
