//! Streams groups (KIP-1071): the Kafka Streams clients of one application
//! (`group.protocol=streams`), each stream thread a member, heartbeating
//! with StreamsGroupHeartbeat. As Kafka 4.4.0's group coordinator runs
//! them:
//!
//! - The first member to join brings the topology ([`topology`]); the
//!   coordinator configures it against the cluster's topics
//!   ([`configure`]): partition counts of repartition and changelog
//!   topics, co-partitioning, and the internal topics the broker must
//!   create. Until every topic is there, as it must be, the group is
//!   `NotReady` and its members get no task, with a status saying why.
//! - The group epoch is bumped by every change of members (or of their
//!   process, rack, tags, topology epoch), of the topics' metadata, and by
//!   the topology becoming ready. A new target assignment follows
//!   ([`assignor`]): not before `group.streams.initial.rebalance.delay.ms`
//!   for a group that was empty, nor more often than
//!   `group.streams.assignment.interval.ms` (the answer's
//!   `ASSIGNMENT_DELAYED` status says so).
//! - Each member reconciles towards its target ([`reconcile`]), and its
//!   epoch follows.
//! - Members that miss their session timeout, or do not give tasks up
//!   within their rebalance timeout, are fenced: removed, the epoch bumped.

pub mod assignor;
pub mod beat;
pub mod configure;
pub mod member;
pub mod reconcile;
pub mod tasks;
pub mod topology;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kafka_wire::runtime::Uuid;
use kafka_wire::ErrorCode;

use crate::config::StreamsGroupConfig;
use assignor::MemberSpec;
use beat::{Beat, BeatAnswer, EndpointPartitions, LEAVE_GROUP_STATIC_MEMBER_EPOCH};
use configure::{status, Configured};
use member::{MemberState, StreamsMember};
use reconcile::Owners;
use tasks::TaskSets;
use topology::Topology;

/// The name of the one task assignor, as StreamsGroupDescribe gives it.
pub const ASSIGNOR: &str = "sticky";

/// The topics a topology needs as they are now: (name, id, partitions) of
/// those that exist. A change means new metadata (Kafka's metadata hash).
type Metadata = Vec<(String, Uuid, i32)>;

/// One streams group.
#[derive(Debug, Clone)]
pub struct StreamsGroup {
    /// The group epoch (a new group's is 1).
    pub epoch: i32,
    /// The members, by id.
    pub members: BTreeMap<String, StreamsMember>,
    /// The topology, from the first member.
    pub topology: Option<Topology>,
    /// The topology configured against the topics, when computed.
    pub configured: Option<Configured>,
    /// The topology epoch found ready, -1 while none is.
    pub validated_topology_epoch: i32,
    metadata: Metadata,
    /// The epoch of the target assignment (a new group's is 1).
    pub assignment_epoch: i32,
    assigned_at: Option<Instant>,
    /// The target assignment, by member.
    pub target: BTreeMap<String, TaskSets>,
    initial_delay_until: Option<Instant>,
    /// The member that asked the application to shut down, until the group
    /// is empty.
    pub shutdown_requested_by: Option<String>,
    /// The epoch of the members' endpoint information.
    pub endpoint_epoch: i32,
    standby_replicas: Option<u32>,
    session_timeout: Duration,
}

impl Default for StreamsGroup {
    fn default() -> Self {
        StreamsGroup {
            epoch: 1,
            members: BTreeMap::new(),
            topology: None,
            configured: None,
            validated_topology_epoch: -1,
            metadata: Vec::new(),
            assignment_epoch: 1,
            assigned_at: None,
            target: BTreeMap::new(),
            initial_delay_until: None,
            shutdown_requested_by: None,
            endpoint_epoch: 0,
            standby_replicas: None,
            session_timeout: StreamsGroupConfig::default().session_timeout,
        }
    }
}

/// How the state answers about topics: partition counts and ids.
pub trait TopicsView {
    /// An existing topic's id and partition count.
    fn lookup(&self, name: &str) -> Option<(Uuid, i32)>;
}

impl TopicsView for crate::state::topics::Topics {
    fn lookup(&self, name: &str) -> Option<(Uuid, i32)> {
        self.get(name).map(|t| (t.id, t.partition_count()))
    }
}

fn fenced(relation: &str, received: i32, known: i32) -> BeatAnswer {
    BeatAnswer::failed(
        ErrorCode::FencedMemberEpoch.code(),
        format!(
            "The streams group member has a {relation} member epoch ({received}) than the one known by the group coordinator ({known}). The member must abandon all its partitions and rejoin."
        ),
    )
}

fn millis(duration: Duration) -> i32 {
    i32::try_from(duration.as_millis()).unwrap_or(i32::MAX)
}

impl StreamsGroup {
    /// Kafka's name of the group's state: Empty, NotReady, Assigning,
    /// Reconciling or Stable.
    pub fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else if self
            .topology
            .as_ref()
            .is_none_or(|t| t.epoch != self.validated_topology_epoch)
        {
            "NotReady"
        } else if self.epoch > self.assignment_epoch {
            "Assigning"
        } else if self
            .members
            .values()
            .any(|m| !m.is_reconciled_to(self.assignment_epoch))
        {
            "Reconciling"
        } else {
            "Stable"
        }
    }

    /// Whether `member_id` is a member.
    pub fn has_member(&self, member_id: &str) -> bool {
        self.members.contains_key(member_id)
    }

    /// Handles a join or a heartbeat (not a leave) of a member of group
    /// `group_id`; `created`: the group did not exist before it.
    pub fn heartbeat(
        &mut self,
        group_id: &str,
        beat: Beat<'_>,
        topics: &impl TopicsView,
        config: &StreamsGroupConfig,
        now: Instant,
        created: bool,
    ) -> BeatAnswer {
        let joining = beat.member_epoch == 0;
        let was_empty = self.members.is_empty();
        let existing = self.members.get(beat.member_id);
        let member = match (existing, joining) {
            (Some(m), _) => m.clone(),
            (None, true) => {
                if self.members.len() >= config.max_size {
                    return BeatAnswer::failed(
                        ErrorCode::GroupMaxSizeReached.code(),
                        format!(
                            "The streams group has reached its maximum capacity of {} members.",
                            config.max_size
                        ),
                    );
                }
                StreamsMember::new(beat.member_id, now)
            }
            (None, false) => {
                return BeatAnswer::failed(
                    ErrorCode::UnknownMemberId.code(),
                    format!(
                        "Member {} is not a member of group {group_id}.",
                        beat.member_id
                    ),
                )
            }
        };
        if let Some(failed) = check_epoch(&member, beat.member_epoch, beat.owned.as_ref()) {
            return failed;
        }
        let is_new = existing.is_none();
        let mut updated = member.clone();
        if let Some(rack) = beat.rack_id {
            updated.rack_id = Some(rack.to_owned());
        }
        if beat.rebalance_timeout_ms != -1 {
            updated.rebalance_timeout_ms = beat.rebalance_timeout_ms;
        }
        if let Some(topology) = &beat.topology {
            updated.topology_epoch = topology.epoch;
        }
        beat.client_id.clone_into(&mut updated.client_id);
        beat.client_host.clone_into(&mut updated.client_host);
        if let Some(process) = beat.process_id {
            process.clone_into(&mut updated.process_id);
        }
        if let Some(tags) = &beat.client_tags {
            updated.client_tags = tags.clone();
        }
        if let Some(endpoint) = &beat.user_endpoint {
            updated.user_endpoint = Some(endpoint.clone());
        }
        if let Some(offsets) = &beat.task_offsets {
            updated.task_offsets = offsets.clone();
        }
        if let Some(offsets) = &beat.task_end_offsets {
            updated.task_end_offsets = offsets.clone();
        }
        updated.last_seen = now;
        let mut bump = is_new || updated.assignment_relevant() != member.assignment_relevant();

        // The topology: the group's, or the member's when it brings the
        // first one.
        let mut statuses = Vec::new();
        let mut reconfigure = self.topology.is_none();
        let topology = match (beat.topology, &self.topology) {
            (Some(given), None) => given,
            (Some(given), Some(known)) if known.epoch > given.epoch => known.clone(),
            (Some(given), Some(known)) if *known != given => {
                return BeatAnswer::failed(
                    ErrorCode::InvalidRequest.code(),
                    "Topology updates are not supported yet.",
                )
            }
            (_, Some(known)) => known.clone(),
            (None, None) => {
                return BeatAnswer::failed(
                    ErrorCode::InvalidRequest.code(),
                    "The topology is null and the group topology is also null.",
                )
            }
        };
        if updated.topology_epoch < topology.epoch {
            statuses.push((
                status::STALE_TOPOLOGY,
                format!(
                    "The member's topology epoch {} is behind the group's topology epoch {}.",
                    updated.topology_epoch, topology.epoch
                ),
            ));
        }

        // The topics it needs, and the topology configured against them.
        let metadata: Metadata = topology
            .required_topics()
            .into_iter()
            .filter_map(|name| {
                topics
                    .lookup(name)
                    .map(|(id, partitions)| (name.to_owned(), id, partitions))
            })
            .collect();
        if metadata != self.metadata {
            bump = true;
            reconfigure = true;
        }
        let configured = match (&self.configured, reconfigure) {
            (Some(configured), false) => configured.clone(),
            _ => match configure::configure(&topology, |t| topics.lookup(t).map(|(_, p)| p)) {
                Ok(configured) => configured,
                Err((code, message)) => return BeatAnswer::failed(code, message),
            },
        };
        let mut validated = -1;
        if let (true, Some(subtopologies)) = (configured.is_ready(), &configured.subtopologies) {
            validated = topology.epoch;
            if let Some(owned) = &beat.owned {
                for kind in [&owned.active, &owned.standby, &owned.warmup] {
                    for (subtopology, partition) in kind {
                        let Some(configured) = subtopologies.get(subtopology) else {
                            return BeatAnswer::failed(
                                ErrorCode::InvalidRequest.code(),
                                format!(
                                    "Subtopology {subtopology} does not exist in the topology."
                                ),
                            );
                        };
                        if *partition < 0 || *partition >= configured.tasks {
                            return BeatAnswer::failed(
                                ErrorCode::InvalidRequest.code(),
                                format!(
                                    "Task {partition} for subtopology {subtopology} is invalid. Number of tasks for this subtopology: {}",
                                    configured.tasks
                                ),
                            );
                        }
                    }
                }
            }
        }
        if validated != self.validated_topology_epoch {
            bump = true;
        }
        if !bump && self.standby_replicas != Some(config.num_standby_replicas) {
            bump = true;
        }

        // Every check passed: the group changes from here on.
        self.topology = Some(topology);
        self.configured = Some(configured.clone());
        self.metadata = metadata;
        self.validated_topology_epoch = validated;
        if bump {
            self.epoch = self.epoch.saturating_add(1);
            self.standby_replicas = Some(config.num_standby_replicas);
        }
        if was_empty
            && !config.initial_rebalance_delay.is_zero()
            && self.initial_delay_until.is_none()
        {
            self.initial_delay_until = Some(now + config.initial_rebalance_delay);
        }
        self.session_timeout = config.session_timeout;
        self.members.insert(updated.id.clone(), updated.clone());
        if let Some(delayed) = self.update_target(config, now) {
            statuses.push((status::ASSIGNMENT_DELAYED, delayed.to_owned()));
        }

        // The member moves towards its target.
        if !updated.is_reconciled_to(self.assignment_epoch) {
            let owners = Owners::of(
                self.members
                    .values()
                    .filter(|m| m.id != updated.id)
                    .chain([&member]),
            );
            let target = self.target.get(&updated.id).cloned().unwrap_or_default();
            let next = reconcile::reconcile(
                &updated,
                self.assignment_epoch,
                &target,
                beat.owned.as_ref(),
                &owners,
            );
            updated = next;
        }
        updated.revoking_since = match (updated.state, member.revoking_since) {
            (MemberState::UnrevokedTasks, Some((since, epoch))) if epoch == updated.epoch => {
                Some((since, epoch))
            }
            (MemberState::UnrevokedTasks, _) => Some((now, updated.epoch)),
            _ => None,
        };
        self.members.insert(updated.id.clone(), updated.clone());
        if beat.shutdown_application && self.shutdown_requested_by.is_none() {
            self.shutdown_requested_by = Some(updated.id.clone());
        }

        let tasks_changed = updated.assigned != member.assigned;
        let endpoint_changed = updated.user_endpoint.is_some()
            && (member.user_endpoint != updated.user_endpoint || is_new);
        let assignment = (joining || tasks_changed || endpoint_changed).then(|| {
            if updated.user_endpoint.is_some() {
                self.endpoint_epoch = self.endpoint_epoch.saturating_add(1);
            }
            updated.assigned.clone()
        });
        let partitions_by_endpoint = (self.endpoint_epoch != beat.endpoint_information_epoch)
            .then(|| self.endpoints(topics));
        if let Some((code, detail)) = &configured.problem {
            statuses.push((*code, detail.clone()));
        }
        if let Some(requester) = &self.shutdown_requested_by {
            statuses.push((
                status::SHUTDOWN_APPLICATION,
                format!("Streams group member {requester} encountered a fatal error and requested a shutdown for the entire application."),
            ));
        }
        let to_create = if configured
            .problem
            .as_ref()
            .is_some_and(|(code, _)| *code == status::MISSING_INTERNAL_TOPICS)
        {
            configured.to_create.clone()
        } else {
            Vec::new()
        };
        BeatAnswer {
            error: None,
            member_id: updated.id.clone(),
            member_epoch: updated.epoch,
            heartbeat_interval_ms: millis(config.heartbeat_interval),
            task_offset_interval_ms: millis(config.task_offset_interval),
            acceptable_recovery_lag: config.acceptable_recovery_lag,
            statuses,
            assignment,
            // A group created by this heartbeat answers 0, as Kafka.
            endpoint_information_epoch: if created { 0 } else { self.endpoint_epoch },
            partitions_by_endpoint,
            to_create,
        }
    }

    /// Computes a new target assignment when the group epoch is ahead of
    /// it and neither the initial delay nor the assignment interval holds
    /// it back; says which one does, if one does.
    fn update_target(&mut self, config: &StreamsGroupConfig, now: Instant) -> Option<&'static str> {
        if let Some(until) = self.initial_delay_until {
            if now < until {
                return Some("Assignment delayed due to the configured initial rebalance delay.");
            }
            self.initial_delay_until = None;
        }
        if self.epoch <= self.assignment_epoch {
            return None;
        }
        let interval_open = match self.assigned_at {
            None => true,
            Some(at) => {
                config.assignment_interval.is_zero() || now >= at + config.assignment_interval
            }
        };
        if !interval_open {
            return Some("Assignment delayed due to the configured assignment interval.");
        }
        let subtopologies: BTreeMap<String, (i32, bool)> = match &self.configured {
            Some(configured) if configured.is_ready() => {
                let stateful = |id: &str| {
                    self.topology
                        .as_ref()
                        .and_then(|t| t.subtopologies.get(id))
                        .is_some_and(|s| s.is_stateful())
                };
                configured
                    .subtopologies
                    .iter()
                    .flatten()
                    .map(|(id, s)| (id.clone(), (s.tasks, stateful(id))))
                    .collect()
            }
            _ => BTreeMap::new(),
        };
        let specs: BTreeMap<String, MemberSpec<'_>> = self
            .members
            .values()
            .map(|m| {
                (
                    m.id.clone(),
                    MemberSpec {
                        process_id: &m.process_id,
                        previous: self.target.get(&m.id),
                    },
                )
            })
            .collect();
        let target = assignor::assign(
            &specs,
            &subtopologies,
            usize::try_from(config.num_standby_replicas).unwrap_or(0),
        );
        self.target = target;
        self.assignment_epoch = self.epoch;
        self.assigned_at = Some(now);
        None
    }

    /// Every member's endpoint with its tasks' partitions.
    fn endpoints(&self, topics: &impl TopicsView) -> Vec<EndpointPartitions> {
        let inputs = |subtopology: &str| -> Vec<String> {
            self.topology
                .as_ref()
                .and_then(|t| t.subtopologies.get(subtopology))
                .map(|s| s.inputs().map(str::to_owned).collect())
                .unwrap_or_default()
        };
        let partitions = |tasks: &mut dyn Iterator<Item = &tasks::TaskId>| {
            let mut by_topic: BTreeMap<String, Vec<i32>> = BTreeMap::new();
            for (subtopology, partition) in tasks {
                for topic in inputs(subtopology) {
                    let exists = topics.lookup(&topic).is_some_and(|(_, n)| *partition < n);
                    if exists {
                        by_topic.entry(topic).or_default().push(*partition);
                    }
                }
            }
            by_topic
                .into_iter()
                .map(|(topic, mut ps)| {
                    ps.sort_unstable();
                    (topic, ps)
                })
                .collect()
        };
        self.members
            .values()
            .filter_map(|m| {
                let endpoint = m.user_endpoint.clone()?;
                Some(EndpointPartitions {
                    endpoint,
                    active: partitions(&mut m.assigned.active.keys()),
                    standby: partitions(&mut m.assigned.standby.iter().chain(&m.assigned.warmup)),
                })
            })
            .collect()
    }

    /// Removes a member that leaves (epoch -1 or -2); the epoch is bumped.
    pub fn leave(
        &mut self,
        group_id: &str,
        member_id: &str,
        member_epoch: i32,
        shutdown: bool,
    ) -> BeatAnswer {
        if shutdown && self.shutdown_requested_by.is_none() {
            self.shutdown_requested_by = Some(member_id.to_owned());
        }
        if !self.members.contains_key(member_id) {
            return BeatAnswer::failed(
                ErrorCode::UnknownMemberId.code(),
                format!("Member {member_id} is not a member of group {group_id}."),
            );
        }
        self.remove(member_id);
        BeatAnswer {
            member_id: member_id.to_owned(),
            member_epoch: if member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH {
                LEAVE_GROUP_STATIC_MEMBER_EPOCH
            } else {
                beat::LEAVE_GROUP_MEMBER_EPOCH
            },
            acceptable_recovery_lag: -1,
            endpoint_information_epoch: self.endpoint_epoch,
            ..Default::default()
        }
    }

    fn remove(&mut self, member_id: &str) {
        self.members.remove(member_id);
        self.target.remove(member_id);
        self.epoch = self.epoch.saturating_add(1);
        if self.members.is_empty() {
            // The last member gone, the (empty) target is of this epoch.
            self.assignment_epoch = self.epoch;
            self.assigned_at = None;
            self.shutdown_requested_by = None;
        }
    }

    /// Fences members past the session timeout, and members that did not
    /// give tasks up within their rebalance timeout; whether any went.
    pub fn expire(&mut self, now: Instant) -> bool {
        let session_timeout = self.session_timeout;
        let gone: Vec<String> = self
            .members
            .values()
            .filter(|m| {
                let silent = now.duration_since(m.last_seen) > session_timeout;
                let stuck = m.revoking_since.is_some_and(|(since, epoch)| {
                    let limit =
                        Duration::from_millis(u64::try_from(m.rebalance_timeout_ms).unwrap_or(0));
                    epoch == m.epoch
                        && m.rebalance_timeout_ms >= 0
                        && now.duration_since(since) > limit
                });
                silent || stuck
            })
            .map(|m| m.id.clone())
            .collect();
        for id in &gone {
            self.remove(id);
        }
        !gone.is_empty()
    }

    /// Checks an offset commit's member and epoch as Kafka checks it for a
    /// streams group: an older epoch than the member's is checked against
    /// each partition's task, and one partition refused refuses the whole
    /// commit, as in Kafka. One code per partition of `partitions`.
    /// `transactional`: a TxnOffsetCommit; `version`: OffsetCommit's.
    pub fn check_commit(
        &self,
        member_id: &str,
        member_epoch: i32,
        transactional: bool,
        version: i16,
        partitions: &[(&str, i32)],
    ) -> Vec<i16> {
        let all = |code: i16| vec![code; partitions.len()];
        if member_epoch < 0 && self.members.is_empty() {
            return all(0);
        }
        if transactional && member_epoch == -1 && member_id.is_empty() {
            return all(0);
        }
        let Some(member) = self.members.get(member_id) else {
            return all(ErrorCode::UnknownMemberId.code());
        };
        if !transactional && version < 9 {
            return all(ErrorCode::UnsupportedVersion.code());
        }
        let stale = if transactional {
            ErrorCode::IllegalGeneration.code()
        } else {
            ErrorCode::StaleMemberEpoch.code()
        };
        if member_epoch == member.epoch {
            return all(0);
        }
        if member_epoch > member.epoch {
            return all(stale);
        }
        // An older epoch: each partition's task must be the member's (or
        // pending revocation) since that epoch or before.
        let readers: BTreeMap<&str, &str> = self
            .topology
            .iter()
            .flat_map(|t| t.subtopologies.values())
            .flat_map(|s| s.inputs().map(move |topic| (topic, s.id.as_str())))
            .collect();
        let refused = partitions.iter().any(|(topic, partition)| {
            let Some(subtopology) = readers.get(topic) else {
                return true;
            };
            let task = ((*subtopology).to_owned(), *partition);
            let assigned_at = member
                .assigned
                .active
                .get(&task)
                .or_else(|| member.pending_revocation.active.get(&task));
            assigned_at.is_none_or(|epoch| member_epoch < *epoch)
        });
        all(if refused { stale } else { 0 })
    }

    /// Checks an offset fetch's member and epoch (OffsetFetch v9+): 0 or
    /// the error code.
    pub fn check_fetch(&self, member_id: Option<&str>, member_epoch: i32) -> i16 {
        match member_id {
            None if member_epoch < 0 => 0,
            id => match self.members.get(id.unwrap_or_default()) {
                None => ErrorCode::UnknownMemberId.code(),
                Some(m) if m.epoch != member_epoch => ErrorCode::StaleMemberEpoch.code(),
                Some(_) => 0,
            },
        }
    }
}

/// Kafka's check of a heartbeat's epoch against the member's: ahead is
/// fenced; behind is fenced unless it is the previous epoch and the member
/// owns no task it was not given.
fn check_epoch(
    member: &StreamsMember,
    received: i32,
    owned: Option<&TaskSets>,
) -> Option<BeatAnswer> {
    if received > member.epoch {
        return Some(fenced("greater", received, member.epoch));
    }
    if received < member.epoch {
        let subset = owned.is_some_and(|o| o.within(&member.assigned.sets()));
        if received != member.previous_epoch || !subset {
            return Some(fenced("smaller", received, member.epoch));
        }
    }
    None
}
