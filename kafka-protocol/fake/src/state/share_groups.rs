//! KIP-932 share groups: members that heartbeat with ShareGroupHeartbeat,
//! with Kafka 4.4.0's epochs and its `simple` assignor's shares
//! (the `share_assignor` module); each share partition's
//! records (the share-partition start offset, records acquired by a member
//! under a lock with a delivery count, released, accepted or rejected by
//! acknowledgements, and available again when a lock runs out); the state
//! Kafka's share coordinator keeps of each, which the offsets admin reads
//! and changes; and each group's settings, from its group configs.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use kafka_wire::runtime::Uuid;
use kafka_wire::ErrorCode;

use super::share_assignor::{self, Seat};
use super::topics::Topics;
use crate::config::MAX_GROUP_SIZE;

/// How long a member holds acquired records (Kafka's
/// `group.share.record.lock.duration.ms` default; a group's
/// `share.record.lock.duration.ms` overrides it).
pub const LOCK_DURATION: Duration = Duration::from_secs(30);

/// How often a record may be delivered (Kafka's
/// `group.share.delivery.count.limit` default; a group's
/// `share.delivery.count.limit` overrides it).
pub const DELIVERY_LIMIT: i16 = 5;

/// The most records in flight on a share partition (Kafka's
/// `group.share.partition.max.record.locks` default): past it no new
/// records are acquired, which also bounds the state kept per partition.
pub const MAX_RECORD_LOCKS: usize = 2000;

/// The most a group's `share.partition.max.record.locks` may raise it to
/// (Kafka's `group.share.max.partition.max.record.locks`).
const MOST_RECORD_LOCKS: usize = 10_000;

/// Where a new share partition starts (`share.auto.offset.reset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reset {
    /// At the high watermark (`latest`, the default).
    Latest,
    /// At the log start (`earliest`).
    Earliest,
    /// At the first record at most this many milliseconds old
    /// (`by_duration:<ISO-8601 duration>`).
    ByDuration(i64),
}

/// A share group's settings: its group configs, else Kafka's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// `share.record.lock.duration.ms`.
    pub lock: Duration,
    /// `share.delivery.count.limit`.
    pub delivery_limit: i16,
    /// `share.partition.max.record.locks` (at most 10,000).
    pub max_locks: usize,
    /// `share.heartbeat.interval.ms`.
    pub heartbeat_interval_ms: i32,
    /// `share.session.timeout.ms`.
    pub session_timeout: Duration,
    /// `share.isolation.level` is `read_committed`: records are acquired
    /// up to the last stable offset only.
    pub read_committed: bool,
    /// `share.auto.offset.reset`.
    pub reset: Reset,
}

/// An ISO-8601 duration as Java's `Duration.parse` reads it
/// (`P1D`, `PT1H30M`, `PT0.5S`, a leading `-`), in milliseconds.
fn iso_duration_ms(text: &str) -> Option<i64> {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let body = text.strip_prefix('P').or_else(|| text.strip_prefix('p'))?;
    let (days, time) = match body.split_once(['T', 't']) {
        Some((days, time)) => (days, Some(time)),
        None => (body, None),
    };
    let mut total: f64 = 0.0;
    let mut seen = false;
    let mut take = |part: &str, units: &[(char, f64)]| -> Option<()> {
        let mut number = String::new();
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' || c == '-' {
                number.push(c);
                continue;
            }
            let scale = units.iter().find(|(u, _)| u.eq_ignore_ascii_case(&c))?.1;
            total += number.parse::<f64>().ok()? * scale;
            number.clear();
            seen = true;
        }
        number.is_empty().then_some(())
    };
    take(days, &[('D', 86_400_000.0)])?;
    if let Some(time) = time {
        if time.is_empty() {
            return None;
        }
        take(time, &[('H', 3_600_000.0), ('M', 60_000.0), ('S', 1000.0)])?;
    }
    if !seen || !total.is_finite() || total.abs() > 9.0e18 {
        return None;
    }
    let ms = total.round() as i64;
    Some(if negative { -ms } else { ms })
}

/// A share-group member.
#[derive(Debug, Clone)]
pub struct ShareMember {
    /// Its epoch.
    pub epoch: i32,
    /// The epoch before, which a heartbeat may still carry.
    previous_epoch: i32,
    /// The topics it subscribes to.
    pub subscribed: BTreeSet<String>,
    /// Its client id.
    pub client_id: String,
    /// Its host.
    pub client_host: String,
    /// Its target assignment.
    pub assignment: BTreeSet<(Uuid, i32)>,
    last_sent: Option<BTreeSet<(Uuid, i32)>>,
    last_seen: Instant,
}

/// A share group.
#[derive(Debug, Clone, Default)]
pub struct ShareGroup {
    /// The group epoch: one more at every change of members or
    /// subscriptions.
    pub epoch: i32,
    /// The epoch of the target assignment, which members take: computed
    /// again at most once per `share.assignment.interval.ms` (Kafka's
    /// batching of assignments), or as soon as partitions are initialized.
    pub assignment_epoch: i32,
    /// When the target assignment was last computed.
    computed_at: Option<Instant>,
    /// Its members, by id.
    pub members: BTreeMap<String, ShareMember>,
    /// The partitions its members subscribe to whose state is not yet
    /// initialized: Kafka assigns them once it is, a moment later (here: at
    /// the group's next heartbeat), with a new group epoch.
    pending: BTreeSet<(Uuid, i32)>,
}

impl ShareGroup {
    /// Kafka's state name: Empty without members, else Stable.
    pub fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else {
            "Stable"
        }
    }

    /// Every topic its members subscribe to.
    fn subscribed(&self) -> BTreeSet<String> {
        self.members
            .values()
            .flat_map(|m| m.subscribed.iter().cloned())
            .collect()
    }
}

/// The state of one in-flight record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Record {
    /// Delivered `count` times, free to acquire again.
    Available(i16),
    /// Held by a member until a deadline.
    Acquired {
        member: u64,
        until: Instant,
        count: i16,
    },
    /// Accepted, rejected, or past the delivery limit.
    Done,
}

/// One share partition of a group.
#[derive(Debug, Clone, Default)]
pub struct SharePartition {
    /// The share-partition start offset.
    pub start: i64,
    /// The first offset never acquired.
    next: i64,
    /// Records between `start` and `next` that are not done.
    records: BTreeMap<i64, Record>,
}

/// A share partition's state as Kafka's share coordinator keeps it (what
/// DescribeShareGroupOffsets reads): written at every acknowledgement with
/// the start offset the partition had before it, and the offsets past
/// that start which are done (accepted, rejected, or delivered too often).
/// A start of -1: initialized, never written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Persisted {
    /// The share-partition start offset, or -1.
    pub start: i64,
    /// Offsets at or past `start` that are done.
    pub done: BTreeSet<i64>,
}

impl Persisted {
    fn initialized() -> Self {
        Persisted {
            start: -1,
            done: BTreeSet::new(),
        }
    }

    /// The share-partition lag against the high watermark (-1 when never
    /// written).
    pub fn lag(&self, high_watermark: i64) -> i64 {
        if self.start < 0 {
            return -1;
        }
        let done = i64::try_from(self.done.len()).unwrap_or(i64::MAX);
        (high_watermark - self.start - done).max(0)
    }
}

/// A ShareFetch session on one broker.
#[derive(Debug, Clone, Default)]
pub struct ShareSession {
    /// The next epoch expected.
    pub epoch: i32,
    /// Its partitions.
    pub partitions: BTreeSet<(Uuid, i32)>,
}

/// Every share group, partition and session.
#[derive(Debug, Default)]
pub struct ShareGroups {
    groups: HashMap<String, ShareGroup>,
    partitions: HashMap<(String, Uuid, i32), SharePartition>,
    /// Each initialized share partition's kept state, by (group, topic id,
    /// partition).
    persisted: BTreeMap<(String, Uuid, i32), Persisted>,
    /// Sessions by (node, group, member).
    pub sessions: HashMap<(i32, String, String), ShareSession>,
    /// Group configs set with IncrementalAlterConfigs.
    pub configs: HashMap<String, BTreeMap<String, String>>,
    members: HashMap<String, u64>,
    next_member: u64,
}

/// An acquired run of offsets: first, last, delivery count.
pub type Acquired = (i64, i64, i16);

/// Where a share partition's records may be acquired: from its log start
/// to `until` (the high watermark, or the last stable offset), a new share
/// partition starting at `reset_to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The log start offset.
    pub log_start: i64,
    /// The first offset not to acquire.
    pub until: i64,
    /// Where a new share partition starts.
    pub reset_to: i64,
}

/// A ShareGroupHeartbeat's outcome: error code, message, member epoch,
/// and the assignment when it changed.
pub type ShareBeat = (i16, Option<String>, i32, Option<BTreeSet<(Uuid, i32)>>);

/// Why an offsets admin request is refused for a whole group: Kafka's
/// code and message.
pub type GroupRefusal = (i16, String);

impl ShareGroups {
    /// A group.
    pub fn get(&self, group_id: &str) -> Option<&ShareGroup> {
        self.groups.get(group_id)
    }

    /// Every group.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &ShareGroup)> {
        self.groups.iter()
    }

    /// Whether `group_id` is a share group.
    pub fn contains(&self, group_id: &str) -> bool {
        self.groups.contains_key(group_id)
    }

    /// The settings of `group_id`: its configs, else Kafka's defaults.
    pub fn settings(&self, group_id: &str) -> Settings {
        let configs = self.configs.get(group_id);
        let get = |key: &str| configs.and_then(|c| c.get(key)).map(String::as_str);
        let number = |key: &str, default: i64| {
            get(key)
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(default)
        };
        let reset = match get("share.auto.offset.reset") {
            Some("earliest") => Reset::Earliest,
            Some(v) => v
                .strip_prefix("by_duration:")
                .and_then(iso_duration_ms)
                .map_or(Reset::Latest, Reset::ByDuration),
            None => Reset::Latest,
        };
        let millis = |ms: i64| Duration::from_millis(u64::try_from(ms).unwrap_or(0));
        Settings {
            lock: millis(number("share.record.lock.duration.ms", 30_000).clamp(1, 3_600_000)),
            delivery_limit: i16::try_from(number("share.delivery.count.limit", 5).clamp(1, 100))
                .unwrap_or(DELIVERY_LIMIT),
            max_locks: usize::try_from(number("share.partition.max.record.locks", 2000))
                .unwrap_or(MAX_RECORD_LOCKS)
                .clamp(1, MOST_RECORD_LOCKS),
            heartbeat_interval_ms: i32::try_from(number("share.heartbeat.interval.ms", 5000))
                .unwrap_or(5000),
            session_timeout: millis(number("share.session.timeout.ms", 45_000)),
            read_committed: get("share.isolation.level") == Some("read_committed"),
            reset,
        }
    }

    fn member_key(&mut self, member_id: &str) -> u64 {
        if let Some(key) = self.members.get(member_id) {
            return *key;
        }
        self.next_member += 1;
        self.members.insert(member_id.to_owned(), self.next_member);
        self.next_member
    }

    /// Handles a ShareGroupHeartbeat: (error, message, member epoch, the
    /// assignment when it changed). A join (epoch 0), a leave (-1) or a
    /// subscription change bumps the group epoch, and so does a change of
    /// the topics the group subscribes to; partitions newly subscribed are
    /// assigned once initialized, at the group's next heartbeat, with one
    /// more bump. Members share the initialized partitions as Kafka's
    /// `simple` assignor shares them.
    #[allow(clippy::too_many_arguments)]
    pub fn heartbeat(
        &mut self,
        group_id: &str,
        member_id: &str,
        epoch: i32,
        subscribed: Option<Vec<String>>,
        topics: &Topics,
        client: (&str, &str),
        now: Instant,
    ) -> ShareBeat {
        if member_id.is_empty() {
            return (ErrorCode::InvalidRequest.code(), None, 0, None);
        }
        if epoch != 0 && !self.groups.contains_key(group_id) {
            // Only a join creates a group. As Kafka words it: a leave
            // looks the group up as any group, a heartbeat as a share group.
            let message = if epoch < 0 {
                format!("Group {group_id} not found.")
            } else {
                format!("Share group {group_id} not found.")
            };
            return (ErrorCode::GroupIdNotFound.code(), Some(message), 0, None);
        }
        if epoch == 0 && subscribed.as_ref().is_none_or(Vec::is_empty) {
            return (
                ErrorCode::InvalidRequest.code(),
                Some("SubscribedTopicNames must be set in first request.".into()),
                0,
                None,
            );
        }
        let interval = self.assignment_interval(group_id);
        let group = self.groups.entry(group_id.to_owned()).or_default();
        // Partitions asked for since the last heartbeat are initialized now,
        // and assigned at once.
        let initialized = !group.pending.is_empty();
        if initialized {
            let pending = std::mem::take(&mut group.pending);
            for (topic, partition) in pending {
                self.persisted
                    .entry((group_id.to_owned(), topic, partition))
                    .or_insert_with(Persisted::initialized);
            }
            if let Some(group) = self.groups.get_mut(group_id) {
                group.epoch += 1;
            }
        }
        let Some(group) = self.groups.get_mut(group_id) else {
            return (ErrorCode::UnknownMemberId.code(), None, 0, None);
        };
        let before = group.subscribed();
        match epoch {
            0 => {
                let mut names = subscribed.unwrap_or_default();
                names.sort();
                if !group.members.contains_key(member_id) && group.members.len() >= MAX_GROUP_SIZE {
                    return (ErrorCode::GroupMaxSizeReached.code(), None, 0, None);
                }
                let names: BTreeSet<String> = names.into_iter().collect();
                // A member joining again as it was changes nothing.
                let same = group
                    .members
                    .get(member_id)
                    .is_some_and(|m| m.subscribed == names);
                if !same {
                    group.epoch += 1;
                }
                group.members.insert(
                    member_id.to_owned(),
                    ShareMember {
                        epoch: 0,
                        previous_epoch: 0,
                        subscribed: names,
                        client_id: client.0.to_owned(),
                        client_host: client.1.to_owned(),
                        assignment: BTreeSet::new(),
                        last_sent: None,
                        last_seen: now,
                    },
                );
            }
            -1 => {
                if group.members.remove(member_id).is_none() {
                    return (ErrorCode::UnknownMemberId.code(), None, 0, None);
                }
                group.epoch += 1;
                if group.subscribed() != before {
                    group.epoch += 1;
                }
                self.maybe_reassign(group_id, topics, initialized, interval, now);
                let key = self.member_key(member_id);
                self.release_member(key);
                return (0, None, -1, None);
            }
            e => {
                let Some(member) = group.members.get(member_id) else {
                    return (
                        ErrorCode::UnknownMemberId.code(),
                        Some(format!(
                            "Member {member_id} is not a member of group {group_id}."
                        )),
                        0,
                        None,
                    );
                };
                if e > member.epoch {
                    return (
                        ErrorCode::FencedMemberEpoch.code(),
                        Some(format!(
                            "The share group member has a greater member epoch ({e}) than the one known by the group coordinator ({}). The member must abandon all its partitions and rejoin.",
                            member.epoch
                        )),
                        0,
                        None,
                    );
                }
                if e < member.epoch && e != member.previous_epoch {
                    return (
                        ErrorCode::FencedMemberEpoch.code(),
                        Some(format!(
                            "The share group member has a smaller member epoch ({e}) than the one known by the group coordinator ({}), and it does not match the previous member epoch ({}). The member must abandon all its partitions and rejoin.",
                            member.epoch, member.previous_epoch
                        )),
                        0,
                        None,
                    );
                }
                if let Some(names) = subscribed {
                    let names: BTreeSet<String> = names.into_iter().collect();
                    if names != member.subscribed {
                        group.epoch += 1;
                        if let Some(m) = group.members.get_mut(member_id) {
                            m.subscribed = names;
                        }
                    }
                }
            }
        }
        if let Some(group) = self.groups.get_mut(group_id) {
            if group.subscribed() != before {
                group.epoch += 1;
            }
        }
        self.maybe_reassign(group_id, topics, initialized, interval, now);
        let Some(group) = self.groups.get_mut(group_id) else {
            return (ErrorCode::UnknownMemberId.code(), None, 0, None);
        };
        let target_epoch = group.assignment_epoch;
        let Some(member) = group.members.get_mut(member_id) else {
            return (ErrorCode::UnknownMemberId.code(), None, 0, None);
        };
        member.last_seen = now;
        if member.epoch != target_epoch {
            member.previous_epoch = member.epoch;
            member.epoch = target_epoch;
        }
        let assignment = member.assignment.clone();
        let send = member.last_sent.as_ref() != Some(&assignment);
        if send {
            member.last_sent = Some(assignment.clone());
        }
        (0, None, member.epoch, send.then_some(assignment))
    }

    /// `share.assignment.interval.ms` of the group (Kafka's default: 1 s).
    fn assignment_interval(&self, group_id: &str) -> Duration {
        let ms = self
            .configs
            .get(group_id)
            .and_then(|c| c.get("share.assignment.interval.ms"))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(1000);
        Duration::from_millis(ms)
    }

    /// Notes the partitions still to initialize and, when the group
    /// changed and an interval has passed since the last one (or
    /// partitions were just initialized), computes the target assignment
    /// again at the group epoch.
    fn maybe_reassign(
        &mut self,
        group_id: &str,
        topics: &Topics,
        initialized: bool,
        interval: Duration,
        now: Instant,
    ) {
        let Some(group) = self.groups.get(group_id) else {
            return;
        };
        let due = group
            .computed_at
            .is_none_or(|at| now.duration_since(at) >= interval);
        let changed = group.epoch != group.assignment_epoch;
        if initialized || (changed && due) {
            self.reassign(group_id, topics);
            if let Some(group) = self.groups.get_mut(group_id) {
                group.assignment_epoch = group.epoch;
                group.computed_at = Some(now);
            }
        } else {
            let pending = self.uninitialized(group_id, topics);
            if let Some(group) = self.groups.get_mut(group_id) {
                group.pending = pending;
            }
        }
    }

    /// The partitions of the topics `group_id`'s members subscribe to that
    /// are not initialized.
    fn uninitialized(&self, group_id: &str, topics: &Topics) -> BTreeSet<(Uuid, i32)> {
        let Some(group) = self.groups.get(group_id) else {
            return BTreeSet::new();
        };
        group
            .subscribed()
            .iter()
            .filter_map(|name| topics.get(name))
            .flat_map(|t| (0..t.partition_count()).map(move |p| (t.id, p)))
            .filter(|(t, p)| !self.persisted.contains_key(&(group_id.to_owned(), *t, *p)))
            .collect()
    }

    /// Computes the group's target assignment over its initialized
    /// partitions, noting those still to initialize.
    fn reassign(&mut self, group_id: &str, topics: &Topics) {
        let Some(group) = self.groups.get(group_id) else {
            return;
        };
        let mut partitions: BTreeMap<Uuid, Vec<i32>> = BTreeMap::new();
        let mut pending = BTreeSet::new();
        let mut seats = BTreeMap::new();
        for (id, member) in &group.members {
            let mut ids = BTreeSet::new();
            for name in &member.subscribed {
                let Some(topic) = topics.get(name) else {
                    continue;
                };
                ids.insert(topic.id);
                for p in 0..topic.partition_count() {
                    let key = (group_id.to_owned(), topic.id, p);
                    if self.persisted.contains_key(&key) {
                        let list = partitions.entry(topic.id).or_default();
                        if !list.contains(&p) {
                            list.push(p);
                        }
                    } else {
                        pending.insert((topic.id, p));
                    }
                }
            }
            seats.insert(
                id.clone(),
                Seat {
                    topics: ids,
                    held: member.assignment.clone(),
                },
            );
        }
        let assigned = share_assignor::assign(&seats, &partitions);
        if let Some(group) = self.groups.get_mut(group_id) {
            group.pending = pending;
            for (id, set) in assigned {
                if let Some(member) = group.members.get_mut(&id) {
                    member.assignment = set;
                }
            }
        }
    }

    /// Removes members past the session timeout (45 s), releasing their
    /// records.
    pub fn expire(&mut self, now: Instant) {
        let mut gone = Vec::new();
        let timeouts: HashMap<String, Duration> = self
            .groups
            .keys()
            .map(|g| (g.clone(), self.settings(g).session_timeout))
            .collect();
        for (group_id, group) in self.groups.iter_mut() {
            let before = group.members.len();
            let timeout = timeouts
                .get(group_id)
                .copied()
                .unwrap_or(Duration::from_secs(45));
            group.members.retain(|id, m| {
                let keep = now.duration_since(m.last_seen) <= timeout;
                if !keep {
                    gone.push(id.clone());
                }
                keep
            });
            if group.members.len() != before {
                group.epoch += 1;
            }
        }
        for id in gone {
            let key = self.member_key(&id);
            self.release_member(key);
        }
    }

    fn release_member(&mut self, member: u64) {
        for partition in self.partitions.values_mut() {
            for record in partition.records.values_mut() {
                if let Record::Acquired {
                    member: m, count, ..
                } = *record
                {
                    if m == member {
                        *record = Record::Available(count);
                    }
                }
            }
        }
    }

    /// Whether `member_id` is a member of `group_id`.
    pub fn is_member(&self, group_id: &str, member_id: &str) -> bool {
        self.groups
            .get(group_id)
            .is_some_and(|g| g.members.contains_key(member_id))
    }

    /// The share partition, created at `reset_to` (where
    /// `share.auto.offset.reset` puts it).
    fn partition(&mut self, group_id: &str, tp: (Uuid, i32), reset_to: i64) -> &mut SharePartition {
        self.partitions
            .entry((group_id.to_owned(), tp.0, tp.1))
            .or_insert_with(|| SharePartition {
                start: reset_to,
                next: reset_to,
                records: BTreeMap::new(),
            })
    }

    /// Applies acknowledgements of a member to a partition: for each
    /// (first, last, types) batch, types 1 accept, 2 release, 3 reject
    /// (0: a gap, done). An offset the member does not hold is
    /// INVALID_RECORD_STATE.
    pub fn acknowledge(
        &mut self,
        group_id: &str,
        member_id: &str,
        tp: (Uuid, i32),
        batches: &[(i64, i64, Vec<i8>)],
    ) -> i16 {
        let member = self.member_key(member_id);
        let limit = self.settings(group_id).delivery_limit;
        let key = (group_id.to_owned(), tp.0, tp.1);
        let Some(partition) = self.partitions.get_mut(&key) else {
            return ErrorCode::InvalidRecordState.code();
        };
        let start_before = partition.start;
        let mut error = 0;
        let mut changed = false;
        for (first, last, types) in batches {
            if last < first || types.is_empty() {
                return ErrorCode::InvalidRequest.code();
            }
            // At most the offsets in flight, whatever the range says.
            let keys: Vec<i64> = partition
                .records
                .range(*first..=*last)
                .map(|(offset, _)| *offset)
                .collect();
            for offset in keys {
                let index = usize::try_from(offset - first).unwrap_or(0);
                let kind = if types.len() == 1 {
                    types[0]
                } else {
                    types.get(index).copied().unwrap_or(0)
                };
                let Some(record) = partition.records.get_mut(&offset) else {
                    continue;
                };
                match *record {
                    Record::Acquired {
                        member: m, count, ..
                    } if m == member => {
                        *record = match kind {
                            2 if count < limit => Record::Available(count),
                            0..=3 => Record::Done,
                            _ => {
                                error = ErrorCode::InvalidRequest.code();
                                continue;
                            }
                        };
                        changed = true;
                    }
                    _ => error = ErrorCode::InvalidRecordState.code(),
                }
            }
        }
        // Kafka's share coordinator keeps the state as it was written: the
        // start offset before this acknowledgement moved it, and what is done.
        // An acknowledgement that changes no record writes nothing.
        if !changed {
            partition.advance();
            return error;
        }
        let done = partition
            .records
            .range(start_before..)
            .filter(|(_, r)| **r == Record::Done)
            .map(|(offset, _)| *offset)
            .collect();
        self.persisted.insert(
            key,
            Persisted {
                start: start_before,
                done,
            },
        );
        partition.advance();
        error
    }

    /// Acquires up to `max_records` records of a partition for a member:
    /// records released or whose lock ran out first, then new ones up to
    /// `span.until` (the high watermark, or the last stable offset under
    /// `read_committed`) while fewer than the group's
    /// `share.partition.max.record.locks` are in flight, each locked for the
    /// group's `share.record.lock.duration.ms`. Returns the runs acquired.
    pub fn acquire(
        &mut self,
        group_id: &str,
        member_id: &str,
        tp: (Uuid, i32),
        span: Span,
        max_records: usize,
        now: Instant,
    ) -> Vec<Acquired> {
        let member = self.member_key(member_id);
        let settings = self.settings(group_id);
        let (lock, limit, max_locks) = (settings.lock, settings.delivery_limit, settings.max_locks);
        let Span {
            log_start,
            until,
            reset_to,
        } = span;
        let partition = self.partition(group_id, tp, reset_to);
        if partition.start < log_start {
            // Records deleted under the group: skip them.
            partition.start = log_start;
            partition.next = partition.next.max(log_start);
            partition.records = partition.records.split_off(&log_start);
        }
        let mut taken: Vec<(i64, i16)> = Vec::new();
        for (offset, record) in partition.records.iter_mut() {
            if taken.len() >= max_records {
                break;
            }
            let count = match *record {
                Record::Available(count) => count,
                Record::Acquired {
                    until: t, count, ..
                } if t <= now => count,
                _ => continue,
            };
            if count >= limit {
                *record = Record::Done;
                continue;
            }
            *record = Record::Acquired {
                member,
                until: now + lock,
                count: count + 1,
            };
            taken.push((*offset, count + 1));
        }
        // Records past their delivery limit are done: the start moves past
        // them before new records count against the locks.
        partition.advance();
        while taken.len() < max_records
            && partition.next < until
            && partition.records.len() < max_locks
        {
            let offset = partition.next;
            partition.records.insert(
                offset,
                Record::Acquired {
                    member,
                    until: now + lock,
                    count: 1,
                },
            );
            taken.push((offset, 1));
            partition.next += 1;
        }
        partition.advance();
        taken.sort_unstable();
        let mut runs: Vec<Acquired> = Vec::new();
        for (offset, count) in taken {
            match runs.last_mut() {
                Some((_, last, c)) if *last + 1 == offset && *c == count => *last = offset,
                _ => runs.push((offset, offset, count)),
            }
        }
        runs
    }

    /// Whether a partition has records a member could acquire now.
    pub fn has_available(&self, group_id: &str, tp: (Uuid, i32), until: i64, now: Instant) -> bool {
        match self.partitions.get(&(group_id.to_owned(), tp.0, tp.1)) {
            None => true,
            Some(p) => {
                p.next < until
                    || p.records.values().any(|r| match r {
                        Record::Available(_) => true,
                        Record::Acquired { until, .. } => *until <= now,
                        Record::Done => false,
                    })
            }
        }
    }

    /// The start offset of each partition of a group (for describing).
    pub fn starts(&self, group_id: &str) -> Vec<((Uuid, i32), i64)> {
        let mut out: Vec<_> = self
            .partitions
            .iter()
            .filter(|((g, _, _), _)| g == group_id)
            .map(|((_, t, p), sp)| ((*t, *p), sp.start))
            .collect();
        out.sort();
        out
    }
}

/// The offsets admin of share groups (DescribeShareGroupOffsets,
/// AlterShareGroupOffsets, DeleteShareGroupOffsets) and their deletion.
impl ShareGroups {
    /// The kept state of every initialized partition of `group_id`, by
    /// (topic id, partition).
    pub fn persisted_of(&self, group_id: &str) -> Vec<((Uuid, i32), &Persisted)> {
        self.persisted
            .range((group_id.to_owned(), Uuid::ZERO, i32::MIN)..)
            .take_while(|((g, _, _), _)| g == group_id)
            .map(|((_, t, p), state)| ((*t, *p), state))
            .collect()
    }

    /// The kept state of one partition of `group_id`.
    pub fn persisted(&self, group_id: &str, tp: (Uuid, i32)) -> Option<&Persisted> {
        self.persisted.get(&(group_id.to_owned(), tp.0, tp.1))
    }

    /// Why `group_id`'s offsets may not be changed now: it has members.
    pub fn check_empty(&self, group_id: &str) -> Result<(), GroupRefusal> {
        match self.groups.get(group_id) {
            Some(group) if !group.members.is_empty() => Err((
                ErrorCode::NonEmptyGroup.code(),
                "The group is not empty.".to_owned(),
            )),
            _ => Ok(()),
        }
    }

    /// Sets the start offset of a partition of `group_id` (an empty group,
    /// created if it does not exist, as Kafka creates it): the partition
    /// starts there, nothing in flight.
    pub fn alter_offset(&mut self, group_id: &str, tp: (Uuid, i32), start: i64) {
        self.groups
            .entry(group_id.to_owned())
            .or_insert_with(|| ShareGroup {
                epoch: 1,
                assignment_epoch: 1,
                ..ShareGroup::default()
            });
        let key = (group_id.to_owned(), tp.0, tp.1);
        self.persisted.insert(
            key.clone(),
            Persisted {
                start,
                done: BTreeSet::new(),
            },
        );
        self.partitions.insert(
            key,
            SharePartition {
                start,
                next: start,
                records: BTreeMap::new(),
            },
        );
    }

    /// Forgets the state of every partition of topic `topic` in `group_id`:
    /// a member subscribing again starts it from `share.auto.offset.reset`.
    pub fn delete_offsets(&mut self, group_id: &str, topic: Uuid) {
        self.persisted
            .retain(|(g, t, _), _| !(g == group_id && *t == topic));
        self.partitions
            .retain(|(g, t, _), _| !(g == group_id && *t == topic));
    }

    /// Deletes an empty share group with its partitions' state and configs:
    /// its error code (NON_EMPTY_GROUP while it has members).
    pub fn delete_group(&mut self, group_id: &str) -> i16 {
        match self.groups.get(group_id) {
            None => return ErrorCode::GroupIdNotFound.code(),
            Some(group) if !group.members.is_empty() => return ErrorCode::NonEmptyGroup.code(),
            Some(_) => {}
        }
        self.groups.remove(group_id);
        self.persisted.retain(|(g, _, _), _| g != group_id);
        self.partitions.retain(|(g, _, _), _| g != group_id);
        self.sessions.retain(|(_, g, _), _| g != group_id);
        self.configs.remove(group_id);
        0
    }
}

impl SharePartition {
    /// Moves the start offset past records that are done.
    fn advance(&mut self) {
        while let Some((&offset, record)) = self.records.first_key_value() {
            if offset != self.start || *record != Record::Done {
                break;
            }
            self.records.pop_first();
            self.start += 1;
        }
        if self.records.is_empty() {
            self.start = self.next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records from `log_start` to `until`, a new share partition starting
    /// at the log start (`earliest`).
    fn span(log_start: i64, until: i64) -> Span {
        Span {
            log_start,
            until,
            reset_to: log_start,
        }
    }

    #[test]
    fn records_are_acquired_released_redelivered_and_accepted() {
        let mut share = ShareGroups::default();
        share
            .configs
            .entry("g".into())
            .or_default()
            .insert("share.auto.offset.reset".into(), "earliest".into());
        let tp = (Uuid([1; 16]), 0);
        let now = Instant::now();
        assert_eq!(
            share.acquire("g", "a", tp, span(0, 4), 10, now),
            [(0, 3, 1)]
        );
        // Nothing is left for another member while the lock holds.
        assert_eq!(share.acquire("g", "b", tp, span(0, 4), 10, now), []);
        // Release 0, accept 1-2, reject 3; another member gets 0 again.
        let batches = [(0, 3, vec![2, 1, 1, 3])];
        assert_eq!(share.acknowledge("g", "a", tp, &batches), 0);
        assert_eq!(
            share.acquire("g", "b", tp, span(0, 4), 10, now),
            [(0, 0, 2)]
        );
        // A member acknowledging what it does not hold is refused.
        assert_eq!(
            share.acknowledge("g", "a", tp, &[(0, 0, vec![1])]),
            ErrorCode::InvalidRecordState.code()
        );
        // When the lock runs out the record is delivered again.
        let later = now + LOCK_DURATION + Duration::from_millis(1);
        assert_eq!(
            share.acquire("g", "a", tp, span(0, 4), 10, later),
            [(0, 0, 3)]
        );
        assert_eq!(share.acknowledge("g", "a", tp, &[(0, 0, vec![1])]), 0);
        assert_eq!(share.starts("g"), [(tp, 4)]);
        // No more than MAX_RECORD_LOCKS in flight, whatever is asked.
        let runs = share.acquire("g", "a", tp, span(0, 10_000), usize::MAX, later);
        let count: i64 = runs.iter().map(|(f, l, _)| l - f + 1).sum();
        assert_eq!(count, MAX_RECORD_LOCKS as i64);
    }

    #[test]
    fn the_kept_state_trails_the_start_offset_by_one_acknowledgement_as_kafkas_does() {
        let mut share = ShareGroups::default();
        share
            .configs
            .entry("g".into())
            .or_default()
            .insert("share.auto.offset.reset".into(), "earliest".into());
        let tp = (Uuid([1; 16]), 0);
        let now = Instant::now();
        assert_eq!(
            share.acquire("g", "a", tp, span(0, 5), 10, now),
            [(0, 4, 1)]
        );
        // Acquired, never written: nothing kept.
        assert_eq!(share.persisted("g", tp), None);
        // Accept 0-1, release 2: written with the start before (0).
        assert_eq!(
            share.acknowledge("g", "a", tp, &[(0, 1, vec![1]), (2, 2, vec![2])]),
            0
        );
        let kept = share.persisted("g", tp).cloned().unwrap_or_default();
        assert_eq!((kept.start, kept.lag(5)), (0, 3));
        // Reject 3: the start had moved to 2.
        assert_eq!(share.acknowledge("g", "a", tp, &[(3, 3, vec![3])]), 0);
        let kept = share.persisted("g", tp).cloned().unwrap_or_default();
        assert_eq!((kept.start, kept.lag(5)), (2, 2));
        // Accept 2 (acquired again) and 4: all done, written with the
        // start before (2); then accept 0 again, done before: nothing
        // changes, nothing is written (Kafka's kept start stays 2).
        assert_eq!(
            share.acquire("g", "a", tp, span(0, 5), 10, now),
            [(2, 2, 2)]
        );
        assert_eq!(
            share.acknowledge("g", "a", tp, &[(2, 2, vec![1]), (4, 4, vec![1])]),
            0
        );
        share.acknowledge("g", "a", tp, &[(0, 0, vec![1])]);
        let kept = share.persisted("g", tp).cloned().unwrap_or_default();
        assert_eq!((kept.start, kept.lag(5)), (2, 0));
        // Altered (an empty group): the partition starts there, nothing in
        // flight; deleted: forgotten.
        share.alter_offset("g", tp, 1);
        let kept = share.persisted("g", tp).cloned().unwrap_or_default();
        assert_eq!((kept.start, kept.lag(5)), (1, 4));
        assert_eq!(
            share.acquire("g", "a", tp, span(0, 5), 10, now),
            [(1, 4, 1)]
        );
        share.delete_offsets("g", tp.0);
        assert!(share.persisted_of("g").is_empty());
    }

    #[test]
    fn assignments_wait_for_initialization_and_the_assignment_interval() {
        let mut share = ShareGroups::default();
        let mut topics = Topics::default();
        let placement = super::super::topics::Placement {
            nodes: &[0],
            replication_factor: 1,
            assigned: &[],
        };
        let id = topics
            .create("t", 2, BTreeMap::new(), placement)
            .map(|t| t.id)
            .unwrap_or(Uuid::ZERO);
        let t0 = Instant::now();
        let beat = |share: &mut ShareGroups, member: &str, epoch: i32, at: Duration| {
            let names = (epoch == 0).then(|| vec!["t".to_owned()]);
            share.heartbeat("g", member, epoch, names, &topics, ("c", "/h"), t0 + at)
        };
        let count = |beat: &ShareBeat| beat.3.as_ref().map(BTreeSet::len);
        // A join (and the topic newly subscribed): epoch 2, nothing to
        // assign until the partitions are initialized.
        let a = beat(&mut share, "a", 0, Duration::ZERO);
        assert_eq!((a.0, a.2, count(&a)), (0, 2, Some(0)));
        let a = beat(&mut share, "a", 2, Duration::from_millis(100));
        assert_eq!((a.2, count(&a)), (3, Some(2)));
        // A second member within the interval: the group moves on, the
        // assignment waits.
        let b = beat(&mut share, "b", 0, Duration::from_millis(200));
        assert_eq!((b.2, count(&b)), (3, Some(0)));
        assert_eq!(
            share.get("g").map(|g| (g.epoch, g.assignment_epoch)),
            Some((4, 3))
        );
        // Past it: shared out, one partition each.
        let b = beat(&mut share, "b", 3, Duration::from_millis(1200));
        assert_eq!((b.2, count(&b)), (4, Some(1)));
        let a = beat(&mut share, "a", 3, Duration::from_millis(1300));
        assert_eq!((a.2, count(&a)), (4, Some(1)));
        // Stale epochs: the one before is taken, older ones fenced.
        assert_eq!(beat(&mut share, "a", 3, Duration::from_millis(1400)).0, 0);
        let old = beat(&mut share, "a", 2, Duration::from_millis(1400));
        assert_eq!(old.0, ErrorCode::FencedMemberEpoch.code());
        let _ = id;
    }

    #[test]
    fn a_groups_configs_set_its_locks_deliveries_and_reset() {
        let mut share = ShareGroups::default();
        assert_eq!(share.settings("g").lock, LOCK_DURATION);
        assert_eq!(share.settings("g").reset, Reset::Latest);
        let configs = share.configs.entry("g".into()).or_default();
        for (key, value) in [
            ("share.record.lock.duration.ms", "1000"),
            ("share.delivery.count.limit", "2"),
            ("share.partition.max.record.locks", "3"),
            ("share.isolation.level", "read_committed"),
            ("share.auto.offset.reset", "by_duration:PT1H30M"),
        ] {
            configs.insert(key.into(), value.into());
        }
        let settings = share.settings("g");
        assert_eq!(settings.lock, Duration::from_secs(1));
        assert_eq!((settings.delivery_limit, settings.max_locks), (2, 3));
        assert!(settings.read_committed);
        assert_eq!(settings.reset, Reset::ByDuration(5_400_000));
        let tp = (Uuid([1; 16]), 0);
        let now = Instant::now();
        // At most three in flight; locked for a second; delivered twice.
        assert_eq!(
            share.acquire("g", "a", tp, span(0, 10), 10, now),
            [(0, 2, 1)]
        );
        let later = now + Duration::from_millis(1001);
        assert_eq!(
            share.acquire("g", "a", tp, span(0, 10), 10, later),
            [(0, 2, 2)]
        );
        let last = later + Duration::from_millis(1001);
        assert_eq!(
            share.acquire("g", "a", tp, span(0, 10), 10, last),
            [(3, 5, 1)]
        );
    }

    #[test]
    fn iso_durations_read_as_javas_duration_parse_reads_them() {
        assert_eq!(iso_duration_ms("P1D"), Some(86_400_000));
        assert_eq!(iso_duration_ms("PT0.5S"), Some(500));
        assert_eq!(iso_duration_ms("-PT1M"), Some(-60_000));
        assert_eq!(iso_duration_ms("P1DT2H"), Some(93_600_000));
        for bad in ["", "P", "PT", "1D", "P1H", "PT1X", "P1D2"] {
            assert_eq!(iso_duration_ms(bad), None, "{bad}");
        }
    }
}
