//! A classic consumer-group coordinator (JoinGroup / SyncGroup / Heartbeat /
//! LeaveGroup) and committed offsets.
//!
//! A group is Empty, PreparingRebalance (waiting for every member to join
//! again), CompletingRebalance (waiting for the leader's assignments) or
//! Stable. A join or a leave starts a rebalance; the other members learn of
//! it from their next heartbeat (REBALANCE_IN_PROGRESS) and join again.
//! JoinGroup and SyncGroup calls wait on oneshot channels until the group
//! moves on. Members that miss their session timeout are removed, and a
//! rebalance stops waiting for members that do not rejoin within
//! [`MAX_REBALANCE_WAIT`] (a shortcut: Kafka waits the rebalance timeout).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use kafka_wire::ErrorCode;
use tokio::sync::oneshot;

/// Error codes of the group apis, as the `error_code` fields carry them.
pub mod errors {
    use kafka_wire::ErrorCode;

    /// ILLEGAL_GENERATION.
    pub const ILLEGAL_GENERATION: i16 = ErrorCode::IllegalGeneration.code();
    /// INCONSISTENT_GROUP_PROTOCOL.
    pub const INCONSISTENT_GROUP_PROTOCOL: i16 = ErrorCode::InconsistentGroupProtocol.code();
    /// UNKNOWN_MEMBER_ID.
    pub const UNKNOWN_MEMBER_ID: i16 = ErrorCode::UnknownMemberId.code();
    /// REBALANCE_IN_PROGRESS.
    pub const REBALANCE_IN_PROGRESS: i16 = ErrorCode::RebalanceInProgress.code();
}

/// A topic name and partition index.
pub type TopicPartition = (String, i32);

/// A committed offset: the offset, its leader epoch and its metadata.
pub type Committed = (i64, i32, Option<String>);

/// The longest a rebalance waits for members to join again.
pub const MAX_REBALANCE_WAIT: Duration = Duration::from_secs(10);

/// Every group, by id.
#[derive(Default)]
pub struct Groups {
    groups: HashMap<String, Group>,
    next_member: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
}

#[derive(Default)]
struct Group {
    state: Option<State>,
    generation: i32,
    protocol_type: String,
    protocol: Option<String>,
    leader: Option<String>,
    /// Members in the order they first joined; the first is the leader.
    members: Vec<Member>,
    /// Bumped at every rebalance, so that a stale timer does nothing.
    rebalance: u64,
    /// Committed offsets by (topic, partition).
    offsets: HashMap<TopicPartition, Committed>,
}

struct Member {
    id: String,
    group_instance_id: Option<String>,
    protocols: Vec<(String, Vec<u8>)>,
    session_timeout: Duration,
    last_seen: Instant,
    assignment: Vec<u8>,
    join_waiter: Option<oneshot::Sender<JoinOutcome>>,
    sync_waiter: Option<oneshot::Sender<SyncOutcome>>,
}

/// What a JoinGroup caller asked for.
pub struct JoinRequest {
    /// The group.
    pub group_id: String,
    /// Empty for a new member.
    pub member_id: String,
    /// The static membership id, if any.
    pub group_instance_id: Option<String>,
    /// Used to build new member ids, as Kafka does.
    pub client_id: String,
    /// "consumer" for consumers.
    pub protocol_type: String,
    /// Assignor names with their metadata, in preference order.
    pub protocols: Vec<(String, Vec<u8>)>,
    /// The session timeout.
    pub session_timeout: Duration,
}

/// What a JoinGroup caller gets.
#[derive(Debug, Clone, Default)]
pub struct JoinOutcome {
    /// An error code, or 0.
    pub error_code: i16,
    /// The new generation.
    pub generation: i32,
    /// The protocol type.
    pub protocol_type: String,
    /// The chosen assignor.
    pub protocol: Option<String>,
    /// The leader's member id.
    pub leader: String,
    /// The caller's member id.
    pub member_id: String,
    /// For the leader only: every member with its metadata for the chosen
    /// assignor.
    pub members: Vec<(String, Option<String>, Vec<u8>)>,
}

/// What a SyncGroup caller gets.
#[derive(Debug, Clone, Default)]
pub struct SyncOutcome {
    /// An error code, or 0.
    pub error_code: i16,
    /// The protocol type.
    pub protocol_type: String,
    /// The chosen assignor.
    pub protocol: Option<String>,
    /// The caller's assignment.
    pub assignment: Vec<u8>,
}

/// Either an answer now, or one to wait for.
pub enum Pending<T> {
    /// The answer.
    Ready(T),
    /// Wait for the answer; `timer` is set when the caller must schedule
    /// [`Groups::rebalance_timeout`] for this rebalance.
    Wait(oneshot::Receiver<T>, Option<(String, u64)>),
}

impl Groups {
    /// Adds or refreshes a member and starts or joins a rebalance.
    pub fn join(&mut self, request: JoinRequest) -> Pending<JoinOutcome> {
        let group = self.groups.entry(request.group_id.clone()).or_default();
        let now = Instant::now();
        let mut member_id = request.member_id.clone();
        if member_id.is_empty() {
            self.next_member += 1;
            member_id = format!("{}-{}", request.client_id, self.next_member);
        }
        let (tx, rx) = oneshot::channel();
        let fail = |error_code| {
            Pending::Ready(JoinOutcome {
                error_code,
                member_id: request.member_id.clone(),
                ..Default::default()
            })
        };
        if !group.members.is_empty() && group.protocol_type != request.protocol_type {
            return fail(errors::INCONSISTENT_GROUP_PROTOCOL);
        }
        match group.members.iter_mut().find(|m| m.id == member_id) {
            Some(member) => {
                member.protocols = request.protocols;
                member.session_timeout = request.session_timeout;
                member.last_seen = now;
                member.join_waiter = Some(tx);
            }
            None if request.member_id.is_empty() => group.members.push(Member {
                id: member_id,
                group_instance_id: request.group_instance_id,
                protocols: request.protocols,
                session_timeout: request.session_timeout,
                last_seen: now,
                assignment: Vec::new(),
                join_waiter: Some(tx),
                sync_waiter: None,
            }),
            None => return fail(errors::UNKNOWN_MEMBER_ID),
        }
        group.protocol_type = request.protocol_type;
        let timer = if group.state != Some(State::PreparingRebalance) {
            group.start_rebalance();
            Some((request.group_id, group.rebalance))
        } else {
            None
        };
        group.complete_join_if_ready();
        Pending::Wait(rx, timer)
    }

    /// Ends a rebalance that is still waiting after its timeout: members
    /// that did not join again are removed.
    pub fn rebalance_timeout(&mut self, group_id: &str, rebalance: u64) {
        if let Some(group) = self.groups.get_mut(group_id) {
            if group.rebalance == rebalance && group.state == Some(State::PreparingRebalance) {
                group.members.retain(|m| m.join_waiter.is_some());
                group.complete_join_if_ready();
            }
        }
    }

    /// Stores the leader's assignments, or waits for them.
    pub fn sync(
        &mut self,
        group_id: &str,
        member_id: &str,
        generation: i32,
        assignments: Vec<(String, Vec<u8>)>,
    ) -> Pending<SyncOutcome> {
        let fail = |error_code| {
            Pending::Ready(SyncOutcome {
                error_code,
                ..Default::default()
            })
        };
        let Some(group) = self.groups.get_mut(group_id) else {
            return fail(errors::UNKNOWN_MEMBER_ID);
        };
        if let Err(code) = group.check_member(member_id, generation) {
            return fail(code);
        }
        match group.state {
            Some(State::PreparingRebalance) => fail(errors::REBALANCE_IN_PROGRESS),
            Some(State::Stable) => Pending::Ready(group.sync_outcome(member_id)),
            _ => {
                if group.leader.as_deref() == Some(member_id) {
                    for member in &mut group.members {
                        member.assignment = assignments
                            .iter()
                            .find(|(id, _)| *id == member.id)
                            .map(|(_, a)| a.clone())
                            .unwrap_or_default();
                    }
                    group.state = Some(State::Stable);
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

    /// A heartbeat: 0, or the error telling the member what to do.
    pub fn heartbeat(&mut self, group_id: &str, member_id: &str, generation: i32) -> i16 {
        let Some(group) = self.groups.get_mut(group_id) else {
            return errors::UNKNOWN_MEMBER_ID;
        };
        if let Err(code) = group.check_member(member_id, generation) {
            return code;
        }
        if let Some(member) = group.members.iter_mut().find(|m| m.id == member_id) {
            member.last_seen = Instant::now();
        }
        if group.state == Some(State::PreparingRebalance) {
            errors::REBALANCE_IN_PROGRESS
        } else {
            0
        }
    }

    /// Removes a member; the others rebalance. Returns the error code for
    /// this member and, when a rebalance started, its timer.
    pub fn leave(&mut self, group_id: &str, member_id: &str) -> (i16, Option<(String, u64)>) {
        let Some(group) = self.groups.get_mut(group_id) else {
            return (errors::UNKNOWN_MEMBER_ID, None);
        };
        if !group.members.iter().any(|m| m.id == member_id) {
            return (errors::UNKNOWN_MEMBER_ID, None);
        }
        group.members.retain(|m| m.id != member_id);
        (0, group.after_departure(group_id))
    }

    /// Removes members whose session expired.
    pub fn expire(&mut self, now: Instant) {
        for group in self.groups.values_mut() {
            let before = group.members.len();
            group.members.retain(|m| {
                m.join_waiter.is_some() || now.duration_since(m.last_seen) <= m.session_timeout
            });
            if group.members.len() != before {
                // No timer here: the remaining members are told by their
                // heartbeats and join again.
                let _ = group.after_departure("");
            }
        }
    }

    /// Checks an OffsetCommit's member and generation (-1: a simple commit
    /// from a consumer outside the group protocol) and stores the offsets.
    pub fn commit(
        &mut self,
        group_id: &str,
        member_id: &str,
        generation: i32,
        offsets: Vec<(TopicPartition, Committed)>,
    ) -> i16 {
        let group = self.groups.entry(group_id.to_owned()).or_default();
        if generation >= 0 {
            if let Err(code) = group.check_member(member_id, generation) {
                return code;
            }
        }
        group.offsets.extend(offsets);
        0
    }

    /// A committed offset.
    pub fn committed(&self, group_id: &str, topic: &str, partition: i32) -> Option<Committed> {
        let group = self.groups.get(group_id)?;
        group.offsets.get(&(topic.to_owned(), partition)).cloned()
    }

    /// Every (topic, partition) with a committed offset in a group.
    pub fn committed_partitions(&self, group_id: &str) -> Vec<TopicPartition> {
        let mut keys: Vec<_> = self
            .groups
            .get(group_id)
            .map(|g| g.offsets.keys().cloned().collect())
            .unwrap_or_default();
        keys.sort();
        keys
    }
}

impl Group {
    fn check_member(&self, member_id: &str, generation: i32) -> Result<(), i16> {
        if !self.members.iter().any(|m| m.id == member_id) {
            Err(errors::UNKNOWN_MEMBER_ID)
        } else if generation != self.generation {
            Err(errors::ILLEGAL_GENERATION)
        } else {
            Ok(())
        }
    }

    fn start_rebalance(&mut self) {
        self.state = Some(State::PreparingRebalance);
        self.rebalance += 1;
        for member in &mut self.members {
            if let Some(waiter) = member.sync_waiter.take() {
                let _ = waiter.send(SyncOutcome {
                    error_code: errors::REBALANCE_IN_PROGRESS,
                    ..Default::default()
                });
            }
        }
    }

    /// After members left: rebalance the rest, or become empty.
    fn after_departure(&mut self, group_id: &str) -> Option<(String, u64)> {
        if self.members.is_empty() {
            self.state = Some(State::Empty);
            self.leader = None;
            return None;
        }
        let timer = if self.state != Some(State::PreparingRebalance) {
            self.start_rebalance();
            Some((group_id.to_owned(), self.rebalance))
        } else {
            None
        };
        self.complete_join_if_ready();
        timer
    }

    /// When every member has joined again: a new generation, a leader and
    /// a protocol, and an answer to every waiting JoinGroup.
    fn complete_join_if_ready(&mut self) {
        if self.state != Some(State::PreparingRebalance)
            || self.members.iter().any(|m| m.join_waiter.is_none())
        {
            return;
        }
        if self.members.is_empty() {
            self.state = Some(State::Empty);
            return;
        }
        self.generation += 1;
        self.state = Some(State::CompletingRebalance);
        if !self
            .leader
            .as_ref()
            .is_some_and(|l| self.members.iter().any(|m| &m.id == l))
        {
            self.leader = self.members.first().map(|m| m.id.clone());
        }
        let members = &self.members;
        self.protocol = members.first().and_then(|first| {
            first
                .protocols
                .iter()
                .map(|(name, _)| name.clone())
                .find(|name| {
                    members
                        .iter()
                        .all(|m| m.protocols.iter().any(|(n, _)| n == name))
                })
        });
        let leader = self.leader.clone().unwrap_or_default();
        let protocol = self.protocol.clone();
        let everyone: Vec<_> = self
            .members
            .iter()
            .map(|m| {
                let metadata = m
                    .protocols
                    .iter()
                    .find(|(name, _)| Some(name) == protocol.as_ref())
                    .map(|(_, metadata)| metadata.clone())
                    .unwrap_or_default();
                (m.id.clone(), m.group_instance_id.clone(), metadata)
            })
            .collect();
        for member in &mut self.members {
            let outcome = JoinOutcome {
                error_code: if protocol.is_some() {
                    0
                } else {
                    errors::INCONSISTENT_GROUP_PROTOCOL
                },
                generation: self.generation,
                protocol_type: self.protocol_type.clone(),
                protocol: protocol.clone(),
                leader: leader.clone(),
                member_id: member.id.clone(),
                members: if member.id == leader {
                    everyone.clone()
                } else {
                    Vec::new()
                },
            };
            member.assignment.clear();
            member.last_seen = Instant::now();
            if let Some(waiter) = member.join_waiter.take() {
                let _ = waiter.send(outcome);
            }
        }
    }

    fn sync_outcome(&self, member_id: &str) -> SyncOutcome {
        SyncOutcome {
            error_code: ErrorCode::None.code(),
            protocol_type: self.protocol_type.clone(),
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
