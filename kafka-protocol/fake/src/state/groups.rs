//! Classic consumer groups (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
//! and committed offsets.
//!
//! A group is Empty, PreparingRebalance (waiting for every member to join
//! again), CompletingRebalance (waiting for the leader's assignments) or
//! Stable. A new member, a departure, the leader's join or a member's new
//! metadata starts a rebalance; members learn of it from their next
//! heartbeat (REBALANCE_IN_PROGRESS) and join again. A follower joining
//! again with its metadata unchanged gets the current generation at once,
//! as in Kafka. JoinGroup and SyncGroup wait on oneshot channels until the
//! group moves on. Members that miss their session timeout are removed.
//!
//! Static members (KIP-345, `group.instance.id`) as Kafka 4.4.0 keeps
//! them: a join with the instance id and no member id replaces the old
//! member id (whose pending join or sync is answered FENCED_INSTANCE_ID)
//! and, in a Stable group whose protocol stays, keeps the assignment and
//! the generation with no rebalance; a request naming the instance id with
//! another member id is FENCED_INSTANCE_ID, with an instance id the group
//! does not know UNKNOWN_MEMBER_ID; a rebalance does not drop a static
//! member that has not joined again (only its session timeout does); a
//! LeaveGroup may name the instance id alone.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use kafka_wire::ErrorCode;
use tokio::sync::oneshot;

use super::committed::Committed;
use super::consumer_groups::{Beat, BeatAnswer, ConsumerGroup};
use super::streams_groups::{self, StreamsGroup};
use super::topics::Topics;
use crate::config::{StreamsGroupConfig, MAX_GROUP_SIZE};

/// A group's state, as DescribeGroups and ListGroups name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupState {
    /// No members.
    Empty,
    /// Waiting for members to join.
    PreparingRebalance,
    /// Waiting for the leader's assignments.
    CompletingRebalance,
    /// Assignments handed out.
    Stable,
}

impl GroupState {
    /// Kafka's name of the state.
    pub fn name(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
        }
    }
}

/// A member of a group.
#[derive(Debug)]
pub struct Member {
    /// Its id.
    pub id: String,
    /// Its static id.
    pub group_instance_id: Option<String>,
    /// Its client id.
    pub client_id: String,
    /// Its host.
    pub client_host: String,
    /// Protocols with metadata, in preference order.
    pub protocols: Vec<(String, Vec<u8>)>,
    session_timeout: Duration,
    rebalance_timeout: Duration,
    last_seen: Instant,
    /// Its assignment in the current generation.
    pub assignment: Vec<u8>,
    join_waiter: Option<oneshot::Sender<JoinOutcome>>,
    sync_waiter: Option<oneshot::Sender<SyncOutcome>>,
}

/// One group.
#[derive(Debug)]
pub struct Group {
    /// Its state.
    pub state: GroupState,
    /// Its generation.
    pub generation: i32,
    /// Its protocol type ("consumer").
    pub protocol_type: String,
    /// The chosen protocol.
    pub protocol: Option<String>,
    leader: Option<String>,
    /// Members in join order.
    pub members: Vec<Member>,
    /// Member ids handed out by MEMBER_ID_REQUIRED, until they join.
    pending: HashMap<String, Instant>,
    rebalance: u64,
    /// Committed offsets by topic, then partition.
    pub offsets: HashMap<String, HashMap<i32, Committed>>,
    /// When the group is a KIP-848 consumer group: its members and
    /// assignment.
    pub consumer: Option<ConsumerGroup>,
    /// When the group is a streams group (KIP-1071): its topology,
    /// members and tasks.
    pub streams: Option<StreamsGroup>,
}

impl Default for Group {
    fn default() -> Self {
        Group {
            state: GroupState::Empty,
            generation: 0,
            protocol_type: String::new(),
            protocol: None,
            leader: None,
            members: Vec::new(),
            pending: HashMap::new(),
            rebalance: 0,
            offsets: HashMap::new(),
            consumer: None,
            streams: None,
        }
    }
}

/// A JoinGroup request.
#[derive(Debug)]
pub struct JoinRequest {
    /// The group.
    pub group_id: String,
    /// Empty for a new member.
    pub member_id: String,
    /// The static id.
    pub group_instance_id: Option<String>,
    /// The client id.
    pub client_id: String,
    /// The client's host.
    pub client_host: String,
    /// "consumer" for consumers.
    pub protocol_type: String,
    /// Protocols with metadata.
    pub protocols: Vec<(String, Vec<u8>)>,
    /// Session timeout.
    pub session_timeout: Duration,
    /// Rebalance timeout.
    pub rebalance_timeout: Duration,
    /// Whether the member id must be asked for first (v4+).
    pub require_known_member_id: bool,
    /// Whether the answer may tell the leader to skip the assignment
    /// (v9+).
    pub supports_skip_assignment: bool,
}

/// A SyncGroup request.
#[derive(Debug)]
pub struct SyncRequest<'a> {
    /// The group.
    pub group_id: &'a str,
    /// The member.
    pub member_id: &'a str,
    /// Its static id.
    pub group_instance_id: Option<&'a str>,
    /// Its generation.
    pub generation: i32,
    /// The protocol type it names (v5+), checked against the group's.
    pub protocol_type: Option<&'a str>,
    /// The protocol it names (v5+), checked against the group's.
    pub protocol_name: Option<&'a str>,
    /// The leader's assignments: member id and assignment.
    pub assignments: Vec<(String, Vec<u8>)>,
}

/// What a JoinGroup gets.
#[derive(Debug, Clone, Default)]
pub struct JoinOutcome {
    /// Error code, or 0.
    pub error_code: i16,
    /// The generation.
    pub generation: i32,
    /// The protocol type.
    pub protocol_type: Option<String>,
    /// The chosen protocol.
    pub protocol: Option<String>,
    /// The leader.
    pub leader: String,
    /// The caller's member id.
    pub member_id: String,
    /// For the leader: every member (id, static id, metadata).
    pub members: Vec<(String, Option<String>, Vec<u8>)>,
    /// Whether the leader is to skip the assignment (a static leader
    /// replaced in a Stable group, v9+).
    pub skip_assignment: bool,
}

/// What a SyncGroup gets.
#[derive(Debug, Clone, Default)]
pub struct SyncOutcome {
    /// Error code, or 0.
    pub error_code: i16,
    /// The protocol type.
    pub protocol_type: Option<String>,
    /// The chosen protocol.
    pub protocol: Option<String>,
    /// The caller's assignment.
    pub assignment: Vec<u8>,
}

/// An answer now, or one to wait for.
#[derive(Debug)]
pub enum Pending<T> {
    /// The answer.
    Ready(T),
    /// Wait for it; with `Some`, the caller schedules
    /// [`Groups::rebalance_timeout`] after that long for that rebalance.
    Wait(oneshot::Receiver<T>, Option<(u64, Duration)>),
}

/// Every group.
#[derive(Debug, Default)]
pub struct Groups {
    groups: HashMap<String, Group>,
    next_member: u64,
}

fn code(error: ErrorCode) -> i16 {
    error.code()
}

impl Groups {
    /// A group.
    pub fn get(&self, group_id: &str) -> Option<&Group> {
        self.groups.get(group_id)
    }

    /// Every group id with its group.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Group)> {
        self.groups.iter()
    }

    /// A fresh member id: the static id, or else the client id, then a
    /// unique part, as Kafka builds them.
    fn new_member_id(&mut self, client_id: &str, instance: Option<&str>) -> String {
        self.next_member += 1;
        format!(
            "{}-{:016x}",
            instance.unwrap_or(client_id),
            self.next_member.wrapping_mul(0x9e37_79b9_7f4a_7c15)
        )
    }

    /// Handles a JoinGroup.
    pub fn join(&mut self, request: JoinRequest) -> Pending<JoinOutcome> {
        let fail = |error: ErrorCode, member_id: &str| {
            Pending::Ready(JoinOutcome {
                error_code: code(error),
                member_id: member_id.to_owned(),
                ..Default::default()
            })
        };
        if request.group_id.is_empty() {
            return fail(ErrorCode::InvalidGroupId, &request.member_id);
        }
        if request.protocols.is_empty() || request.protocol_type.is_empty() {
            return fail(ErrorCode::InconsistentGroupProtocol, &request.member_id);
        }
        if self
            .groups
            .get(&request.group_id)
            .and_then(|g| g.consumer.as_ref())
            .is_some_and(|c| !c.members.is_empty())
        {
            // A consumer group with members takes no classic member. Kafka
            // would take one (its groups migrate between the protocols) and
            // first gives a new one its id, as the fake does; the fake then
            // refuses the member's join with that id.
            if request.member_id.is_empty()
                && request.group_instance_id.is_none()
                && request.require_known_member_id
            {
                let id = self.new_member_id(&request.client_id, None);
                return fail(ErrorCode::MemberIdRequired, &id);
            }
            return fail(ErrorCode::InconsistentGroupProtocol, &request.member_id);
        }
        if self
            .groups
            .get(&request.group_id)
            .and_then(|g| g.streams.as_ref())
            .is_some_and(|s| !s.members.is_empty())
        {
            // Nor does a streams group with members; an empty one becomes
            // a classic group, as Kafka converts it.
            return fail(ErrorCode::InconsistentGroupProtocol, &request.member_id);
        }
        // A group with members takes a member of its protocol type that
        // supports a protocol every member supports, as Kafka checks before
        // it gives a new member its id.
        if self.groups.get(&request.group_id).is_some_and(|group| {
            group.state != GroupState::Empty
                && (group.protocol_type != request.protocol_type
                    || !request.protocols.iter().any(|(name, _)| {
                        group
                            .members
                            .iter()
                            .all(|m| m.protocols.iter().any(|(n, _)| n == name))
                    }))
        }) {
            return fail(ErrorCode::InconsistentGroupProtocol, &request.member_id);
        }
        let new_id = request
            .member_id
            .is_empty()
            .then(|| self.new_member_id(&request.client_id, request.group_instance_id.as_deref()));
        let group = self.groups.entry(request.group_id.clone()).or_default();
        group.consumer = None;
        group.streams = None;
        let now = Instant::now();
        group.pending.retain(|_, expiry| *expiry > now);
        match new_id {
            Some(id) => {
                let known = request
                    .group_instance_id
                    .as_deref()
                    .and_then(|instance| group.static_member_id(instance))
                    .map(str::to_owned);
                if let Some(old) = known {
                    return group.replace_static_member(&old, id, request, now);
                }
                if group.members.len() + group.pending.len() >= MAX_GROUP_SIZE {
                    return fail(ErrorCode::GroupMaxSizeReached, "");
                }
                if request.group_instance_id.is_none() && request.require_known_member_id {
                    group
                        .pending
                        .insert(id.clone(), now + request.session_timeout);
                    return fail(ErrorCode::MemberIdRequired, &id);
                }
                group.add_member(id, request, now)
            }
            None if group.pending.contains_key(&request.member_id) => {
                group.pending.remove(&request.member_id);
                if group.members.len() >= MAX_GROUP_SIZE {
                    return fail(ErrorCode::GroupMaxSizeReached, "");
                }
                let id = request.member_id.clone();
                group.add_member(id, request, now)
            }
            None => {
                if let Err(error) =
                    group.validate_member(&request.member_id, request.group_instance_id.as_deref())
                {
                    return fail(error, &request.member_id);
                }
                group.join_existing(request, now)
            }
        }
    }

    /// Ends a rebalance still waiting after its timeout: dynamic members
    /// that did not join again are removed (static ones stay, until their
    /// session times out), and the group moves on with those that did.
    pub fn rebalance_timeout(&mut self, group_id: &str, rebalance: u64) {
        if let Some(group) = self.groups.get_mut(group_id) {
            if group.rebalance == rebalance && group.state == GroupState::PreparingRebalance {
                group
                    .members
                    .retain(|m| m.join_waiter.is_some() || m.group_instance_id.is_some());
                group.complete_join();
            }
        }
    }

    /// Handles a SyncGroup.
    pub fn sync(&mut self, request: SyncRequest<'_>) -> Pending<SyncOutcome> {
        let SyncRequest {
            group_id,
            member_id,
            group_instance_id,
            generation,
            protocol_type,
            protocol_name,
            assignments,
        } = request;
        let fail = |error: ErrorCode| {
            Pending::Ready(SyncOutcome {
                error_code: code(error),
                ..Default::default()
            })
        };
        let Some(group) = self.groups.get_mut(group_id) else {
            return fail(ErrorCode::UnknownMemberId);
        };
        if let Err(error) = group.check_member(member_id, group_instance_id, generation) {
            return fail(error);
        }
        let inconsistent = |given: Option<&str>, ours: Option<&str>| {
            given.is_some_and(|given| ours.is_some_and(|ours| ours != given))
        };
        if inconsistent(protocol_type, Some(group.protocol_type.as_str()))
            || inconsistent(protocol_name, group.protocol.as_deref())
        {
            return fail(ErrorCode::InconsistentGroupProtocol);
        }
        match group.state {
            GroupState::PreparingRebalance => fail(ErrorCode::RebalanceInProgress),
            GroupState::Stable => Pending::Ready(group.sync_outcome(member_id)),
            GroupState::Empty => fail(ErrorCode::UnknownMemberId),
            GroupState::CompletingRebalance => {
                if group.leader.as_deref() == Some(member_id) {
                    let mut by_member: HashMap<String, Vec<u8>> = assignments.into_iter().collect();
                    for member in &mut group.members {
                        member.assignment = by_member.remove(&member.id).unwrap_or_default();
                    }
                    group.state = GroupState::Stable;
                    let outcomes: Vec<_> = group
                        .members
                        .iter()
                        .map(|m| group.sync_outcome(&m.id))
                        .collect();
                    for (member, outcome) in group.members.iter_mut().zip(outcomes) {
                        if let Some(waiter) = member.sync_waiter.take() {
                            let _ = waiter.send(outcome);
                        }
                    }
                    Pending::Ready(group.sync_outcome(member_id))
                } else {
                    let (tx, rx) = oneshot::channel();
                    if let Some(member) = group.members.iter_mut().find(|m| m.id == member_id) {
                        member.sync_waiter = Some(tx);
                    }
                    Pending::Wait(rx, None)
                }
            }
        }
    }

    /// Handles a Heartbeat.
    pub fn heartbeat(
        &mut self,
        group_id: &str,
        member_id: &str,
        group_instance_id: Option<&str>,
        generation: i32,
    ) -> i16 {
        let Some(group) = self.groups.get_mut(group_id) else {
            return code(ErrorCode::UnknownMemberId);
        };
        if let Err(error) = group.validate_member(member_id, group_instance_id) {
            return code(error);
        }
        if let Some(member) = group.members.iter_mut().find(|m| m.id == member_id) {
            member.last_seen = Instant::now();
        }
        if generation != group.generation {
            return code(ErrorCode::IllegalGeneration);
        }
        if group.state == GroupState::PreparingRebalance {
            return code(ErrorCode::RebalanceInProgress);
        }
        0
    }

    /// Removes a member (by id, or by static id when the id is empty);
    /// the others rebalance.
    pub fn leave(
        &mut self,
        group_id: &str,
        member_id: &str,
        group_instance_id: Option<&str>,
    ) -> (i16, Option<(u64, Duration)>) {
        let Some(group) = self.groups.get_mut(group_id) else {
            return (code(ErrorCode::UnknownMemberId), None);
        };
        let position = group.members.iter().position(|m| match group_instance_id {
            Some(instance) => m.group_instance_id.as_deref() == Some(instance),
            None => m.id == member_id,
        });
        let Some(position) = position else {
            return (code(ErrorCode::UnknownMemberId), None);
        };
        if group_instance_id.is_some()
            && !member_id.is_empty()
            && group.members[position].id != member_id
        {
            return (code(ErrorCode::FencedInstanceId), None);
        }
        group.members.remove(position);
        (0, group.after_departure())
    }

    /// Removes members whose session expired, and pending ids that were
    /// never used.
    pub fn expire(&mut self, now: Instant) {
        for group in self.groups.values_mut() {
            group.pending.retain(|_, expiry| *expiry > now);
            let before = group.members.len();
            group.members.retain(|m| {
                m.join_waiter.is_some() || now.duration_since(m.last_seen) <= m.session_timeout
            });
            if group.members.len() != before {
                let _ = group.after_departure();
            }
            if let Some(consumer) = &mut group.consumer {
                consumer.expire(now);
            }
            if let Some(streams) = &mut group.streams {
                streams.expire(now);
            }
        }
    }

    /// Handles a ConsumerGroupHeartbeat (KIP-848). A classic group with
    /// members is not a consumer group: GROUP_ID_NOT_FOUND, as Kafka.
    pub fn consumer_heartbeat(
        &mut self,
        group_id: &str,
        beat: Beat<'_>,
        topics: &Topics,
        now: Instant,
    ) -> BeatAnswer {
        if group_id.is_empty() {
            return BeatAnswer {
                error_code: code(ErrorCode::InvalidRequest),
                error_message: Some("GroupId can't be empty.".into()),
                member_epoch: 0,
                ..Default::default()
            };
        }
        if beat.member_epoch != 0 {
            // Only a join creates a group. As Kafka words it: a leave looks
            // the group up as any group, a heartbeat as a consumer group.
            let refused = match self.groups.get(group_id) {
                Some(group) if group.consumer.is_some() => None,
                Some(_) => Some(format!("Group {group_id} is not a consumer group.")),
                None if beat.member_epoch < 0 => Some(format!("Group {group_id} not found.")),
                None => Some(format!("Consumer group {group_id} not found.")),
            };
            if let Some(message) = refused {
                return BeatAnswer {
                    error_code: code(ErrorCode::GroupIdNotFound),
                    error_message: Some(message),
                    member_epoch: 0,
                    ..Default::default()
                };
            }
        }
        let fresh = (beat.member_epoch == 0 && beat.member_id.is_empty() && beat.version == 0)
            .then(|| self.new_member_id(beat.client_id, None));
        let group = self.groups.entry(group_id.to_owned()).or_default();
        if group.consumer.is_none() {
            if !group.members.is_empty() || group.streams.is_some() {
                return BeatAnswer {
                    error_code: code(ErrorCode::GroupIdNotFound),
                    error_message: Some(format!("Group {group_id} is not a consumer group.")),
                    member_epoch: 0,
                    ..Default::default()
                };
            }
            group.consumer = Some(ConsumerGroup::default());
            group.protocol_type = "consumer".into();
        }
        let Some(consumer) = group.consumer.as_mut() else {
            return BeatAnswer::default();
        };
        consumer.heartbeat(beat, topics, now, || fresh.unwrap_or_default())
    }

    /// Handles a StreamsGroupHeartbeat (KIP-1071): a join (epoch 0)
    /// creates the group, or takes over an empty classic group; a leave
    /// (-1, -2) or a heartbeat needs it to exist and be a streams group.
    pub fn streams_heartbeat(
        &mut self,
        group_id: &str,
        beat: streams_groups::beat::Beat<'_>,
        topics: &Topics,
        config: &StreamsGroupConfig,
        now: Instant,
    ) -> streams_groups::beat::BeatAnswer {
        use streams_groups::beat::BeatAnswer as Answer;
        let not_found = || {
            Answer::failed(
                code(ErrorCode::GroupIdNotFound),
                format!("Streams group {group_id} not found."),
            )
        };
        let not_streams = || {
            Answer::failed(
                code(ErrorCode::GroupIdNotFound),
                format!("Group {group_id} is not a streams group."),
            )
        };
        let joining = beat.member_epoch == 0;
        let created = !self.groups.contains_key(group_id);
        if created && !joining {
            return not_found();
        }
        let group = self.groups.entry(group_id.to_owned()).or_default();
        if group.streams.is_none() {
            let empty_classic = group.consumer.is_none()
                && group.members.is_empty()
                && group.state == GroupState::Empty;
            if !joining || !empty_classic {
                return not_streams();
            }
            group.streams = Some(StreamsGroup::default());
            group.protocol_type = "streams".into();
            group.protocol = None;
        }
        let Some(streams) = group.streams.as_mut() else {
            return not_streams();
        };
        let answer = if beat.member_epoch < 0 {
            let (member_id, epoch, shutdown) =
                (beat.member_id, beat.member_epoch, beat.shutdown_application);
            streams.leave(group_id, member_id, epoch, shutdown)
        } else {
            streams.heartbeat(group_id, beat, topics, config, now, created)
        };
        if created && answer.error.is_some() {
            // A join that failed leaves no group behind.
            self.groups.remove(group_id);
        }
        answer
    }

    /// Whether `group_id` is a streams group.
    pub fn is_streams(&self, group_id: &str) -> bool {
        self.groups
            .get(group_id)
            .is_some_and(|g| g.streams.is_some())
    }

    /// The error codes of an OffsetCommit (or, `transactional`, a
    /// TxnOffsetCommit) to a streams group, partition by partition; None
    /// when the group is not a streams group.
    pub fn streams_commit_codes(
        &self,
        group_id: &str,
        member_id: &str,
        member_epoch: i32,
        transactional: bool,
        version: i16,
        partitions: &[(&str, i32)],
    ) -> Option<Vec<i16>> {
        let streams = self.groups.get(group_id)?.streams.as_ref()?;
        Some(streams.check_commit(member_id, member_epoch, transactional, version, partitions))
    }

    /// The error code of an OffsetFetch (v9+) naming a member of a streams
    /// group; None when the group is not a streams group.
    pub fn streams_fetch_code(
        &self,
        group_id: &str,
        member_id: Option<&str>,
        member_epoch: i32,
    ) -> Option<i16> {
        let streams = self.groups.get(group_id)?.streams.as_ref()?;
        Some(streams.check_fetch(member_id, member_epoch))
    }

    /// Checks an OffsetCommit's member (and static id) and generation as
    /// Kafka checks a classic group's, then stores the offsets. The empty
    /// group id is a group as any other here, as Kafka keeps it for simple
    /// consumers.
    pub fn commit(
        &mut self,
        group_id: &str,
        member_id: &str,
        group_instance_id: Option<&str>,
        generation: i32,
        offsets: Vec<(String, Vec<(i32, Committed)>)>,
    ) -> i16 {
        let group = self.groups.entry(group_id.to_owned()).or_default();
        if let Some(consumer) = &group.consumer {
            // A consumer group: the member and its epoch (or, with no
            // member named, an empty group).
            let error = if member_id.is_empty() && generation < 0 {
                if consumer.members.is_empty() {
                    0
                } else {
                    code(ErrorCode::UnknownMemberId)
                }
            } else {
                consumer.check_commit(member_id, generation, ErrorCode::StaleMemberEpoch)
            };
            if error != 0 {
                return error;
            }
            for (topic, partitions) in offsets {
                group.offsets.entry(topic).or_default().extend(partitions);
            }
            return 0;
        }
        let simple = generation < 0 && group.state == GroupState::Empty;
        if !simple {
            if generation >= 0 || !member_id.is_empty() || group_instance_id.is_some() {
                if let Err(error) = group.check_member(member_id, group_instance_id, generation) {
                    return code(error);
                }
                if group.state == GroupState::CompletingRebalance {
                    return code(ErrorCode::RebalanceInProgress);
                }
            } else {
                return code(ErrorCode::UnknownMemberId);
            }
        }
        for (topic, partitions) in offsets {
            group.offsets.entry(topic).or_default().extend(partitions);
        }
        0
    }

    /// Checks a TxnOffsetCommit's member and generation, when it names
    /// them (a generation of -1 and no member skip the check, as Kafka
    /// skips it for a producer outside any group): 0 or the error code.
    pub fn check_txn_member(
        &self,
        group_id: &str,
        member_id: &str,
        group_instance_id: Option<&str>,
        generation: i32,
    ) -> i16 {
        if generation < 0 && member_id.is_empty() && group_instance_id.is_none() {
            return 0;
        }
        match self.groups.get(group_id) {
            None => code(ErrorCode::UnknownMemberId),
            Some(Group {
                consumer: Some(consumer),
                ..
            }) => consumer.check_commit(member_id, generation, ErrorCode::IllegalGeneration),
            // A streams group checks partition by partition
            // (`streams_commit_codes`).
            Some(Group {
                streams: Some(_), ..
            }) => 0,
            Some(group) => match group.check_member(member_id, group_instance_id, generation) {
                Ok(()) => 0,
                Err(error) => code(error),
            },
        }
    }

    /// Stores offsets a transaction committed, whatever the group's state.
    pub fn store(&mut self, group_id: &str, topic: &str, partition: i32, committed: Committed) {
        self.groups
            .entry(group_id.to_owned())
            .or_default()
            .offsets
            .entry(topic.to_owned())
            .or_default()
            .insert(partition, committed);
    }

    /// The committed offsets of a group, if any.
    pub fn offsets(&self, group_id: &str) -> Option<&HashMap<String, HashMap<i32, Committed>>> {
        self.groups.get(group_id).map(|g| &g.offsets)
    }

    /// Deletes an empty group.
    pub fn delete(&mut self, group_id: &str) -> i16 {
        match self.groups.get(group_id) {
            None => code(ErrorCode::GroupIdNotFound),
            Some(group)
                if group.state != GroupState::Empty
                    || group
                        .consumer
                        .as_ref()
                        .is_some_and(|c| !c.members.is_empty())
                    || group
                        .streams
                        .as_ref()
                        .is_some_and(|s| !s.members.is_empty()) =>
            {
                code(ErrorCode::NonEmptyGroup)
            }
            Some(_) => {
                self.groups.remove(group_id);
                0
            }
        }
    }

    /// Deletes committed offsets of partitions the group is not consuming
    /// (a group with members keeps them: GROUP_SUBSCRIBED_TO_TOPIC).
    pub fn delete_offsets(
        &mut self,
        group_id: &str,
        topic: &str,
        partition: i32,
    ) -> Result<i16, i16> {
        let group = self
            .groups
            .get_mut(group_id)
            .ok_or(code(ErrorCode::GroupIdNotFound))?;
        if group.state != GroupState::Empty {
            return Ok(code(ErrorCode::GroupSubscribedToTopic));
        }
        if let Some(streams) = &group.streams {
            // A streams group with members keeps the offsets of the topics
            // its topology reads.
            let reads = streams
                .topology
                .as_ref()
                .is_some_and(|t| t.reader_of(topic).is_some());
            if !streams.members.is_empty() && reads {
                return Ok(code(ErrorCode::GroupSubscribedToTopic));
            }
        }
        if let Some(partitions) = group.offsets.get_mut(topic) {
            partitions.remove(&partition);
            if partitions.is_empty() {
                group.offsets.remove(topic);
            }
        }
        Ok(0)
    }

    /// Forgets every offset committed on a deleted topic.
    pub fn forget_topic(&mut self, topic: &str) {
        for group in self.groups.values_mut() {
            group.offsets.remove(topic);
        }
    }
}

impl Group {
    /// The member id of static member `instance`, if the group has it.
    fn static_member_id(&self, instance: &str) -> Option<&str> {
        self.members
            .iter()
            .find(|m| m.group_instance_id.as_deref() == Some(instance))
            .map(|m| m.id.as_str())
    }

    /// Kafka's check of a member: its static id, when given, must be the
    /// group's and name this member id (else UNKNOWN_MEMBER_ID or
    /// FENCED_INSTANCE_ID), and the member must be in the group.
    fn validate_member(&self, member_id: &str, instance: Option<&str>) -> Result<(), ErrorCode> {
        if let Some(instance) = instance {
            match self.static_member_id(instance) {
                None => return Err(ErrorCode::UnknownMemberId),
                Some(id) if id != member_id => return Err(ErrorCode::FencedInstanceId),
                Some(_) => {}
            }
        }
        if self.members.iter().any(|m| m.id == member_id) {
            Ok(())
        } else {
            Err(ErrorCode::UnknownMemberId)
        }
    }

    /// [`validate_member`](Self::validate_member), then the generation.
    fn check_member(
        &self,
        member_id: &str,
        instance: Option<&str>,
        generation: i32,
    ) -> Result<(), ErrorCode> {
        self.validate_member(member_id, instance)?;
        if generation != self.generation {
            Err(ErrorCode::IllegalGeneration)
        } else {
            Ok(())
        }
    }

    /// A new member joins: it waits for the rebalance it starts (or the
    /// one under way).
    fn add_member(
        &mut self,
        id: String,
        request: JoinRequest,
        now: Instant,
    ) -> Pending<JoinOutcome> {
        let (tx, rx) = oneshot::channel();
        self.members.push(Member {
            id,
            group_instance_id: request.group_instance_id,
            client_id: request.client_id,
            client_host: request.client_host,
            protocols: request.protocols,
            session_timeout: request.session_timeout,
            rebalance_timeout: request.rebalance_timeout,
            last_seen: now,
            assignment: Vec::new(),
            join_waiter: Some(tx),
            sync_waiter: None,
        });
        self.protocol_type = request.protocol_type;
        Pending::Wait(rx, self.rebalance_or_complete_join())
    }

    /// A known member joins again: as Kafka, a follower whose metadata is
    /// unchanged gets the current generation at once (from a Stable or a
    /// CompletingRebalance group, where the leader too gets it again);
    /// otherwise it waits for a rebalance.
    fn join_existing(&mut self, request: JoinRequest, now: Instant) -> Pending<JoinOutcome> {
        let Some(index) = self.members.iter().position(|m| m.id == request.member_id) else {
            return Pending::Ready(JoinOutcome {
                error_code: code(ErrorCode::UnknownMemberId),
                member_id: request.member_id,
                ..Default::default()
            });
        };
        let is_leader = self.leader.as_deref() == Some(request.member_id.as_str());
        let same = self.members[index].protocols == request.protocols;
        let current = match self.state {
            GroupState::Empty => {
                return Pending::Ready(JoinOutcome {
                    error_code: code(ErrorCode::UnknownMemberId),
                    member_id: request.member_id,
                    ..Default::default()
                })
            }
            GroupState::PreparingRebalance => false,
            GroupState::CompletingRebalance => same,
            GroupState::Stable => same && !is_leader,
        };
        if current {
            self.members[index].last_seen = now;
            let members = if is_leader {
                self.current_members()
            } else {
                Vec::new()
            };
            return Pending::Ready(self.current_outcome(request.member_id, members, None, false));
        }
        let (tx, rx) = oneshot::channel();
        let member = &mut self.members[index];
        member.protocols = request.protocols;
        member.session_timeout = request.session_timeout;
        member.rebalance_timeout = request.rebalance_timeout;
        member.last_seen = now;
        member.join_waiter = Some(tx);
        Pending::Wait(rx, self.rebalance_or_complete_join())
    }

    /// A static member joins with no member id while the group holds its
    /// instance id under `old`: `new` replaces `old` (whose pending join
    /// or sync is answered FENCED_INSTANCE_ID), keeping its assignment and
    /// leadership. In a Stable group whose protocol stays, that is all:
    /// the member gets the current generation at once, with no rebalance
    /// (the leader is named as it was; from v9 the new leader is named and
    /// told to skip the assignment). Otherwise the group rebalances.
    fn replace_static_member(
        &mut self,
        old: &str,
        new: String,
        request: JoinRequest,
        now: Instant,
    ) -> Pending<JoinOutcome> {
        let Some(member) = self.members.iter_mut().find(|m| m.id == old) else {
            return Pending::Ready(JoinOutcome {
                error_code: code(ErrorCode::UnknownMemberId),
                ..Default::default()
            });
        };
        if let Some(waiter) = member.join_waiter.take() {
            let _ = waiter.send(JoinOutcome {
                error_code: code(ErrorCode::FencedInstanceId),
                generation: -1,
                member_id: old.to_owned(),
                ..Default::default()
            });
        }
        if let Some(waiter) = member.sync_waiter.take() {
            let _ = waiter.send(SyncOutcome {
                error_code: code(ErrorCode::FencedInstanceId),
                ..Default::default()
            });
        }
        member.id = new.clone();
        member.protocols = request.protocols;
        member.session_timeout = request.session_timeout;
        member.rebalance_timeout = request.rebalance_timeout;
        member.last_seen = now;
        let leader_before = self.leader.clone();
        if leader_before.as_deref() == Some(old) {
            self.leader = Some(new.clone());
        }
        if self.state == GroupState::Stable && self.choose_protocol() == self.protocol {
            let outcome = if request.supports_skip_assignment {
                let is_leader = self.leader.as_deref() == Some(new.as_str());
                let members = if is_leader {
                    self.current_members()
                } else {
                    Vec::new()
                };
                self.current_outcome(new, members, None, is_leader)
            } else {
                self.current_outcome(new, Vec::new(), leader_before, false)
            };
            return Pending::Ready(outcome);
        }
        let (tx, rx) = oneshot::channel();
        if let Some(member) = self.members.iter_mut().find(|m| m.id == new) {
            member.join_waiter = Some(tx);
        }
        let timer = if self.state == GroupState::CompletingRebalance {
            self.start_rebalance();
            Some((self.rebalance, self.rebalance_wait()))
        } else {
            self.rebalance_or_complete_join()
        };
        self.complete_join_if_ready();
        Pending::Wait(rx, timer)
    }

    /// Starts a rebalance unless one is under way (returning its timer),
    /// then completes the join if every member has joined.
    fn rebalance_or_complete_join(&mut self) -> Option<(u64, Duration)> {
        let timer = if self.state != GroupState::PreparingRebalance {
            self.start_rebalance();
            Some((self.rebalance, self.rebalance_wait()))
        } else {
            None
        };
        self.complete_join_if_ready();
        timer
    }

    /// Every member with its static id and its metadata for the chosen
    /// protocol, as the leader's JoinGroup answer lists them.
    fn current_members(&self) -> Vec<(String, Option<String>, Vec<u8>)> {
        self.members
            .iter()
            .map(|m| {
                let metadata = m
                    .protocols
                    .iter()
                    .find(|(name, _)| Some(name) == self.protocol.as_ref())
                    .map(|(_, metadata)| metadata.clone())
                    .unwrap_or_default();
                (m.id.clone(), m.group_instance_id.clone(), metadata)
            })
            .collect()
    }

    /// The current generation's JoinGroup answer for `member_id` (naming
    /// `leader` when given, else the group's leader).
    fn current_outcome(
        &self,
        member_id: String,
        members: Vec<(String, Option<String>, Vec<u8>)>,
        leader: Option<String>,
        skip_assignment: bool,
    ) -> JoinOutcome {
        JoinOutcome {
            error_code: 0,
            generation: self.generation,
            protocol_type: Some(self.protocol_type.clone()),
            protocol: self.protocol.clone(),
            leader: leader.or_else(|| self.leader.clone()).unwrap_or_default(),
            member_id,
            members,
            skip_assignment,
        }
    }

    /// The longest rebalance timeout of the members.
    fn rebalance_wait(&self) -> Duration {
        self.members
            .iter()
            .map(|m| m.rebalance_timeout)
            .max()
            .unwrap_or_default()
    }

    /// The leader, as the group names it.
    pub fn leader(&self) -> Option<&str> {
        self.leader.as_deref()
    }

    fn start_rebalance(&mut self) {
        self.state = GroupState::PreparingRebalance;
        self.rebalance += 1;
        for member in &mut self.members {
            if let Some(waiter) = member.sync_waiter.take() {
                let _ = waiter.send(SyncOutcome {
                    error_code: code(ErrorCode::RebalanceInProgress),
                    ..Default::default()
                });
            }
        }
    }

    fn after_departure(&mut self) -> Option<(u64, Duration)> {
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            self.leader = None;
            self.protocol = None;
            self.generation += 1;
            return None;
        }
        let timer = if self.state != GroupState::PreparingRebalance {
            self.start_rebalance();
            Some((self.rebalance, self.rebalance_wait()))
        } else {
            None
        };
        self.complete_join_if_ready();
        timer
    }

    /// Kafka's protocol choice, in linear time: the protocols every member
    /// supports are candidates; each member votes for its most preferred
    /// candidate; most votes wins.
    fn choose_protocol(&self) -> Option<String> {
        let mut support: HashMap<&str, usize> = HashMap::new();
        for member in &self.members {
            let mut seen = HashSet::new();
            for (name, _) in &member.protocols {
                if seen.insert(name.as_str()) {
                    *support.entry(name.as_str()).or_default() += 1;
                }
            }
        }
        let everyone = self.members.len();
        let mut votes: HashMap<&str, usize> = HashMap::new();
        for member in &self.members {
            if let Some((name, _)) = member
                .protocols
                .iter()
                .find(|(name, _)| support.get(name.as_str()) == Some(&everyone))
            {
                *votes.entry(name.as_str()).or_default() += 1;
            }
        }
        let first_choice = self.members.first().and_then(|m| {
            m.protocols
                .iter()
                .map(|(n, _)| n.as_str())
                .find(|n| votes.contains_key(n))
        });
        let best = votes.values().copied().max()?;
        // Ties go to the first member's preference among the best.
        let winner = self
            .members
            .first()
            .and_then(|m| {
                m.protocols
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .find(|n| votes.get(n) == Some(&best))
            })
            .or(first_choice)?;
        Some(winner.to_owned())
    }

    /// Completes the join once every member has joined again.
    fn complete_join_if_ready(&mut self) {
        if self.state == GroupState::PreparingRebalance
            && self.members.iter().all(|m| m.join_waiter.is_some())
        {
            self.complete_join();
        }
    }

    /// Moves to the next generation with the members that joined (static
    /// members that did not stay in it), unless none did.
    fn complete_join(&mut self) {
        if self.state != GroupState::PreparingRebalance {
            return;
        }
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            return;
        }
        let joined = |id: &str, members: &[Member]| {
            members
                .iter()
                .any(|m| m.id == id && m.join_waiter.is_some())
        };
        if !self
            .leader
            .as_deref()
            .is_some_and(|l| joined(l, &self.members))
        {
            match self.members.iter().find(|m| m.join_waiter.is_some()) {
                Some(first) => self.leader = Some(first.id.clone()),
                // No member joined: wait on (their sessions end it).
                None => return,
            }
        }
        self.generation += 1;
        self.state = GroupState::CompletingRebalance;
        self.protocol = self.choose_protocol();
        let leader = self.leader.clone().unwrap_or_default();
        let protocol = self.protocol.clone();
        let everyone = self.current_members();
        let now = Instant::now();
        let mut everyone = Some(everyone);
        for member in &mut self.members {
            let is_leader = member.id == leader;
            let outcome = JoinOutcome {
                error_code: if protocol.is_some() {
                    0
                } else {
                    code(ErrorCode::InconsistentGroupProtocol)
                },
                generation: self.generation,
                protocol_type: Some(self.protocol_type.clone()),
                protocol: protocol.clone(),
                leader: leader.clone(),
                member_id: member.id.clone(),
                members: if is_leader {
                    everyone.take().unwrap_or_default()
                } else {
                    Vec::new()
                },
                skip_assignment: false,
            };
            member.assignment.clear();
            member.last_seen = now;
            if let Some(waiter) = member.join_waiter.take() {
                let _ = waiter.send(outcome);
            }
        }
    }

    fn sync_outcome(&self, member_id: &str) -> SyncOutcome {
        SyncOutcome {
            error_code: 0,
            protocol_type: Some(self.protocol_type.clone()),
            protocol: self.protocol.clone(),
            assignment: self
                .members
                .iter()
                .find(|m| m.id == member_id)
                .map(|m| m.assignment.clone())
                .unwrap_or_default(),
        }
    }
}
