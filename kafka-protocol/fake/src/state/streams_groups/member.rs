//! One member of a streams group: a stream thread of a Kafka Streams
//! client. Members of one client share a process id; the coordinator
//! spreads tasks over processes first.

use std::collections::BTreeMap;
use std::time::Instant;

use super::tasks::Tasks;

/// Where a member is in its reconciliation towards its target assignment
/// (Kafka's `MemberState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberState {
    /// At the target epoch, holding what it may of its target.
    Stable,
    /// Asked to give tasks up; it keeps its epoch until it has.
    UnrevokedTasks,
    /// At the target epoch, waiting for tasks other members still hold.
    UnreleasedTasks,
}

/// One member.
#[derive(Debug, Clone)]
pub struct StreamsMember {
    /// Its id, chosen by the client.
    pub id: String,
    /// Its static id, when it has one.
    pub instance_id: Option<String>,
    /// Its rack.
    pub rack_id: Option<String>,
    /// Its client id.
    pub client_id: String,
    /// Its host, as Kafka writes it (`/127.0.0.1`).
    pub client_host: String,
    /// The Kafka Streams client it runs in.
    pub process_id: String,
    /// Where it serves interactive queries.
    pub user_endpoint: Option<(String, u16)>,
    /// Its client tags.
    pub client_tags: BTreeMap<String, String>,
    /// The epoch of the topology it runs.
    pub topology_epoch: i32,
    /// How long it may take to give tasks up, in milliseconds.
    pub rebalance_timeout_ms: i32,
    /// Its epoch.
    pub epoch: i32,
    /// Its epoch before the last one.
    pub previous_epoch: i32,
    /// Its reconciliation state.
    pub state: MemberState,
    /// The tasks it holds.
    pub assigned: Tasks,
    /// Tasks it must give up (it still reports them).
    pub pending_revocation: Tasks,
    /// The changelog offsets of its tasks' state it last reported.
    pub task_offsets: Vec<(String, i32, i64)>,
    /// The changelogs' end offsets it last reported.
    pub task_end_offsets: Vec<(String, i32, i64)>,
    /// When it was last heard from.
    pub last_seen: Instant,
    /// Since when it has been asked to give tasks up, and at which epoch.
    pub revoking_since: Option<(Instant, i32)>,
}

impl StreamsMember {
    /// A member joining for the first time, as Kafka's default member.
    pub fn new(id: &str, now: Instant) -> Self {
        StreamsMember {
            id: id.to_owned(),
            instance_id: None,
            rack_id: None,
            client_id: String::new(),
            client_host: String::new(),
            process_id: String::new(),
            user_endpoint: None,
            client_tags: BTreeMap::new(),
            topology_epoch: -1,
            rebalance_timeout_ms: -1,
            epoch: 0,
            previous_epoch: 0,
            state: MemberState::Stable,
            assigned: Tasks::default(),
            pending_revocation: Tasks::default(),
            task_offsets: Vec::new(),
            task_end_offsets: Vec::new(),
            last_seen: now,
            revoking_since: None,
        }
    }

    /// Whether it has reached the target of `epoch`.
    pub fn is_reconciled_to(&self, epoch: i32) -> bool {
        self.state == MemberState::Stable && self.epoch == epoch
    }

    /// The metadata whose change makes a new assignment (Kafka's
    /// `hasEpochRelevantMemberConfigChanged`).
    pub fn assignment_relevant(&self) -> (i32, Option<&str>, &BTreeMap<String, String>, &str) {
        (
            self.topology_epoch,
            self.rack_id.as_deref(),
            &self.client_tags,
            &self.process_id,
        )
    }
}
