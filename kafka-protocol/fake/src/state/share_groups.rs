//! KIP-932 share groups: members that heartbeat with ShareGroupHeartbeat
//! (each member is assigned every partition of the topics it subscribes
//! to: a share group's partitions are shared), and each share partition's
//! records: the share-partition start offset, records acquired by a member
//! under a lock with a delivery count, released, accepted or rejected by
//! acknowledgements, and available again when a lock runs out.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use kafka_wire::runtime::Uuid;
use kafka_wire::ErrorCode;

use super::topics::Topics;
use crate::config::MAX_GROUP_SIZE;

/// How long a member holds acquired records (Kafka's
/// `group.share.record.lock.duration.ms` default).
pub const LOCK_DURATION: Duration = Duration::from_secs(30);

/// How often a record may be delivered (Kafka's
/// `group.share.delivery.count.limit` default).
pub const DELIVERY_LIMIT: i16 = 5;

/// The most records in flight on a share partition (Kafka's
/// `group.share.partition.max.record.locks` default): past it no new
/// records are acquired, which also bounds the state kept per partition.
pub const MAX_RECORD_LOCKS: usize = 2000;

/// A share-group member.
#[derive(Debug, Clone)]
pub struct ShareMember {
    /// Its epoch.
    pub epoch: i32,
    /// The topics it subscribes to.
    pub subscribed: BTreeSet<String>,
    /// Its client id.
    pub client_id: String,
    /// Its host.
    pub client_host: String,
    last_sent: Option<BTreeSet<(Uuid, i32)>>,
    last_seen: Instant,
}

/// A share group.
#[derive(Debug, Clone, Default)]
pub struct ShareGroup {
    /// The group epoch.
    pub epoch: i32,
    /// Its members, by id.
    pub members: BTreeMap<String, ShareMember>,
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
    /// Sessions by (node, group, member).
    pub sessions: HashMap<(i32, String, String), ShareSession>,
    /// Group configs set with IncrementalAlterConfigs.
    pub configs: HashMap<String, BTreeMap<String, String>>,
    members: HashMap<String, u64>,
    next_member: u64,
}

/// An acquired run of offsets: first, last, delivery count.
pub type Acquired = (i64, i64, i16);

/// A ShareGroupHeartbeat's outcome: error code, message, member epoch,
/// and the assignment when it changed.
pub type ShareBeat = (i16, Option<String>, i32, Option<BTreeSet<(Uuid, i32)>>);

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

    fn member_key(&mut self, member_id: &str) -> u64 {
        if let Some(key) = self.members.get(member_id) {
            return *key;
        }
        self.next_member += 1;
        self.members.insert(member_id.to_owned(), self.next_member);
        self.next_member
    }

    /// Handles a ShareGroupHeartbeat: (error, message, member epoch, the
    /// assignment when it changed).
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
            return (
                ErrorCode::InvalidRequest.code(),
                Some("MemberId can't be empty.".into()),
                -1,
                None,
            );
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
        let group = self.groups.entry(group_id.to_owned()).or_default();
        match epoch {
            0 => {
                let Some(mut names) = subscribed.clone().filter(|s| !s.is_empty()) else {
                    return (
                        ErrorCode::InvalidRequest.code(),
                        Some("SubscribedTopicNames must be set in first request.".into()),
                        -1,
                        None,
                    );
                };
                names.sort();
                if !group.members.contains_key(member_id) && group.members.len() >= MAX_GROUP_SIZE {
                    return (ErrorCode::GroupMaxSizeReached.code(), None, 0, None);
                }
                group.epoch += 1;
                group.members.insert(
                    member_id.to_owned(),
                    ShareMember {
                        epoch: group.epoch,
                        subscribed: names.into_iter().collect(),
                        client_id: client.0.to_owned(),
                        client_host: client.1.to_owned(),
                        last_sent: None,
                        last_seen: now,
                    },
                );
            }
            -1 => {
                if group.members.remove(member_id).is_none() {
                    return (ErrorCode::UnknownMemberId.code(), None, -1, None);
                }
                group.epoch += 1;
                let key = self.member_key(member_id);
                self.release_member(key);
                return (0, None, -1, None);
            }
            e => {
                let Some(member) = group.members.get(member_id) else {
                    return (ErrorCode::UnknownMemberId.code(), None, -1, None);
                };
                if e != member.epoch {
                    return (ErrorCode::FencedMemberEpoch.code(), None, -1, None);
                }
                if let Some(names) = subscribed {
                    let names: BTreeSet<String> = names.into_iter().collect();
                    if names != member.subscribed {
                        group.epoch += 1;
                        if let Some(m) = group.members.get_mut(member_id) {
                            m.subscribed = names;
                            m.epoch = group.epoch;
                        }
                    }
                }
            }
        }
        let Some(member) = group.members.get_mut(member_id) else {
            return (ErrorCode::UnknownMemberId.code(), None, -1, None);
        };
        member.last_seen = now;
        let assignment: BTreeSet<(Uuid, i32)> = member
            .subscribed
            .iter()
            .filter_map(|name| topics.get(name))
            .flat_map(|t| (0..t.partition_count()).map(move |p| (t.id, p)))
            .collect();
        let send = member.last_sent.as_ref() != Some(&assignment);
        if send {
            member.last_sent = Some(assignment.clone());
        }
        (0, None, member.epoch, send.then_some(assignment))
    }

    /// Removes members past the session timeout (45 s), releasing their
    /// records.
    pub fn expire(&mut self, now: Instant) {
        let mut gone = Vec::new();
        for group in self.groups.values_mut() {
            let before = group.members.len();
            group.members.retain(|id, m| {
                let keep = now.duration_since(m.last_seen) <= Duration::from_secs(45);
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

    /// The share partition, created at the offset `share.auto.offset.reset`
    /// names (`latest`: the high watermark; `earliest`: the log start).
    fn partition(
        &mut self,
        group_id: &str,
        tp: (Uuid, i32),
        log_start: i64,
        high_watermark: i64,
    ) -> &mut SharePartition {
        let earliest = self
            .configs
            .get(group_id)
            .and_then(|c| c.get("share.auto.offset.reset"))
            .is_some_and(|v| v == "earliest");
        self.partitions
            .entry((group_id.to_owned(), tp.0, tp.1))
            .or_insert_with(|| {
                let start = if earliest { log_start } else { high_watermark };
                SharePartition {
                    start,
                    next: start,
                    records: BTreeMap::new(),
                }
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
        let Some(partition) = self.partitions.get_mut(&(group_id.to_owned(), tp.0, tp.1)) else {
            return ErrorCode::InvalidRecordState.code();
        };
        let mut error = 0;
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
                            2 if count < DELIVERY_LIMIT => Record::Available(count),
                            0..=3 => Record::Done,
                            _ => {
                                error = ErrorCode::InvalidRequest.code();
                                continue;
                            }
                        };
                    }
                    _ => error = ErrorCode::InvalidRecordState.code(),
                }
            }
        }
        partition.advance();
        error
    }

    /// Acquires up to `max_records` records of a partition for a member:
    /// records released or whose lock ran out first, then new ones up to
    /// `until` (the high watermark) while fewer than [`MAX_RECORD_LOCKS`]
    /// are in flight. Returns the runs acquired.
    #[allow(clippy::too_many_arguments)]
    pub fn acquire(
        &mut self,
        group_id: &str,
        member_id: &str,
        tp: (Uuid, i32),
        log_start: i64,
        until: i64,
        max_records: usize,
        now: Instant,
    ) -> Vec<Acquired> {
        let member = self.member_key(member_id);
        let partition = self.partition(group_id, tp, log_start, until);
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
            if count >= DELIVERY_LIMIT {
                *record = Record::Done;
                continue;
            }
            *record = Record::Acquired {
                member,
                until: now + LOCK_DURATION,
                count: count + 1,
            };
            taken.push((*offset, count + 1));
        }
        while taken.len() < max_records
            && partition.next < until
            && partition.records.len() < MAX_RECORD_LOCKS
        {
            let offset = partition.next;
            partition.records.insert(
                offset,
                Record::Acquired {
                    member,
                    until: now + LOCK_DURATION,
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
        assert_eq!(share.acquire("g", "a", tp, 0, 4, 10, now), [(0, 3, 1)]);
        // Nothing is left for another member while the lock holds.
        assert_eq!(share.acquire("g", "b", tp, 0, 4, 10, now), []);
        // Release 0, accept 1-2, reject 3; another member gets 0 again.
        let batches = [(0, 3, vec![2, 1, 1, 3])];
        assert_eq!(share.acknowledge("g", "a", tp, &batches), 0);
        assert_eq!(share.acquire("g", "b", tp, 0, 4, 10, now), [(0, 0, 2)]);
        // A member acknowledging what it does not hold is refused.
        assert_eq!(
            share.acknowledge("g", "a", tp, &[(0, 0, vec![1])]),
            ErrorCode::InvalidRecordState.code()
        );
        // When the lock runs out the record is delivered again.
        let later = now + LOCK_DURATION + Duration::from_millis(1);
        assert_eq!(share.acquire("g", "a", tp, 0, 4, 10, later), [(0, 0, 3)]);
        assert_eq!(share.acknowledge("g", "a", tp, &[(0, 0, vec![1])]), 0);
        assert_eq!(share.starts("g"), [(tp, 4)]);
        // No more than MAX_RECORD_LOCKS in flight, whatever is asked.
        let runs = share.acquire("g", "a", tp, 0, 10_000, usize::MAX, later);
        let count: i64 = runs.iter().map(|(f, l, _)| l - f + 1).sum();
        assert_eq!(count, MAX_RECORD_LOCKS as i64);
    }
}
