//! KIP-848 consumer groups: members that heartbeat with
//! ConsumerGroupHeartbeat, a group epoch bumped by every change of
//! membership, subscriptions or the subscribed topics' partitions, a
//! target assignment computed on the server (the `uniform` and `range`
//! assignors), and each member's reconciliation towards it: a partition
//! moves to its new owner only once its old owner has stopped reporting
//! it, and a member's epoch reaches the group's once it has revoked what
//! it must.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashSet};
use std::time::{Duration, Instant};

use kafka_wire::runtime::Uuid;
use kafka_wire::ErrorCode;

use super::topics::Topics;
use crate::config::MAX_GROUP_SIZE;

/// A topic partition, by topic id.
pub type Tp = (Uuid, i32);

/// The assignors served, the first the default (Kafka 4.4.0's
/// `group.consumer.assignors`).
pub const ASSIGNORS: &[&str] = &["uniform", "range"];

/// How often members are asked to heartbeat (Kafka's
/// `group.consumer.heartbeat.interval.ms` default).
pub const HEARTBEAT_INTERVAL_MS: i32 = 5_000;

/// How long a member lives without a heartbeat (Kafka's
/// `group.consumer.session.timeout.ms` default).
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(45);

/// `regex` compiled to match whole topic names (Kafka matches a
/// subscription's regex against the whole name); `None` when it does not
/// compile, and then it matches nothing. Kafka compiles with RE2's syntax,
/// which the regex crate shares.
fn whole_name_pattern(regex: &str) -> Option<regex::Regex> {
    regex::RegexBuilder::new(&format!("^(?:{regex})$"))
        .size_limit(1 << 20)
        .build()
        .ok()
}

/// The topics whose whole name `pattern` matches, sorted; internal topics
/// (named with a leading `__`) are never matched, as Kafka leaves them out.
fn matching_topics(pattern: &regex::Regex, topics: &Topics) -> Vec<String> {
    topics
        .names()
        .into_iter()
        .filter(|name| !name.starts_with("__") && pattern.is_match(name))
        .collect()
}

/// One member.
#[derive(Debug, Clone)]
pub struct ConsumerMember {
    /// Its id.
    pub id: String,
    /// Its static id.
    pub instance_id: Option<String>,
    /// Its rack.
    pub rack_id: Option<String>,
    /// Its client id.
    pub client_id: String,
    /// Its host.
    pub client_host: String,
    /// The topics it subscribes to, sorted.
    pub subscribed: Vec<String>,
    /// Its subscription regex, if any.
    pub regex: Option<String>,
    /// The regex compiled to match a whole topic name, as Kafka matches
    /// it; `None` without a regex or when it does not compile.
    pub pattern: Option<regex::Regex>,
    /// The topics its regex matched at its last heartbeat, sorted.
    pub matched: Vec<String>,
    /// Its epoch.
    pub epoch: i32,
    /// Its epoch before the last change.
    pub previous_epoch: i32,
    /// The partitions it was given.
    pub assigned: BTreeSet<Tp>,
    /// Partitions taken from it that it still reports owning.
    pub revoking: BTreeSet<Tp>,
    /// What it was last sent, to send an assignment only when it changes.
    last_sent: Option<BTreeSet<Tp>>,
    last_seen: Instant,
}

impl ConsumerMember {
    /// Whether it subscribes to `topic`, by name or through its regex.
    pub fn subscribes_to(&self, topic: &String) -> bool {
        self.subscribed.binary_search(topic).is_ok() || self.matched.binary_search(topic).is_ok()
    }
}

/// A consumer group's members and assignment.
#[derive(Debug, Clone, Default)]
pub struct ConsumerGroup {
    /// The group epoch.
    pub epoch: i32,
    /// The epoch of the target assignment.
    pub assignment_epoch: i32,
    /// The assignor.
    pub assignor: String,
    /// The members, by id.
    pub members: BTreeMap<String, ConsumerMember>,
    /// The target assignment, by member.
    pub target: BTreeMap<String, BTreeSet<Tp>>,
    /// The subscribed topics' ids and partition counts the target was
    /// computed from.
    metadata: Vec<(String, Uuid, i32)>,
    dirty: bool,
}

/// A heartbeat, as the state sees it.
#[derive(Debug)]
pub struct Beat<'a> {
    /// The request's version.
    pub version: i16,
    /// The group's id (for Kafka's messages).
    pub group_id: &'a str,
    /// The member id (empty for a new member before v1).
    pub member_id: &'a str,
    /// The member epoch.
    pub member_epoch: i32,
    /// The static id.
    pub instance_id: Option<&'a str>,
    /// The rack.
    pub rack_id: Option<&'a str>,
    /// The subscription, when sent.
    pub subscribed: Option<Vec<String>>,
    /// The regex, when sent.
    pub regex: Option<&'a str>,
    /// The assignor, when sent.
    pub assignor: Option<&'a str>,
    /// The owned partitions, when sent.
    pub owned: Option<BTreeSet<Tp>>,
    /// The client id.
    pub client_id: &'a str,
    /// The client host.
    pub client_host: &'a str,
}

/// The answer to a heartbeat.
#[derive(Debug, Default)]
pub struct BeatAnswer {
    /// The error code.
    pub error_code: i16,
    /// An error message.
    pub error_message: Option<String>,
    /// The member id.
    pub member_id: Option<String>,
    /// The member epoch.
    pub member_epoch: i32,
    /// The assignment, when it changed.
    pub assignment: Option<BTreeSet<Tp>>,
}

fn error(code: ErrorCode, message: &str) -> BeatAnswer {
    BeatAnswer {
        error_code: code.code(),
        error_message: Some(message.to_owned()),
        // Kafka answers an error with member epoch 0.
        member_epoch: 0,
        ..Default::default()
    }
}

impl ConsumerGroup {
    /// The state Kafka names: Empty, Assigning, Reconciling or Stable.
    pub fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else if self.assignment_epoch != self.epoch {
            "Assigning"
        } else if self
            .members
            .values()
            .any(|m| m.epoch != self.epoch || Some(&m.assigned) != self.target.get(&m.id))
        {
            "Reconciling"
        } else {
            "Stable"
        }
    }

    /// Handles one heartbeat. `new_id` makes a member id when the server
    /// gives one (v0).
    pub fn heartbeat(
        &mut self,
        beat: Beat<'_>,
        topics: &Topics,
        now: Instant,
        new_id: impl FnOnce() -> String,
    ) -> BeatAnswer {
        if self.assignor.is_empty() {
            self.assignor = ASSIGNORS[0].to_owned();
        }
        let member_id = match beat.member_epoch {
            0 => {
                let id = if beat.version >= 1 || !beat.member_id.is_empty() {
                    beat.member_id.to_owned()
                } else {
                    new_id()
                };
                if id.is_empty() {
                    return error(ErrorCode::InvalidRequest, "MemberId can't be empty.");
                }
                if !self.members.contains_key(&id) && self.members.len() >= MAX_GROUP_SIZE {
                    return error(
                        ErrorCode::GroupMaxSizeReached,
                        "The consumer group has reached its maximum capacity.",
                    );
                }
                let member = ConsumerMember {
                    id: id.clone(),
                    instance_id: None,
                    rack_id: None,
                    client_id: String::new(),
                    client_host: String::new(),
                    subscribed: Vec::new(),
                    regex: None,
                    pattern: None,
                    matched: Vec::new(),
                    epoch: 0,
                    previous_epoch: -1,
                    assigned: BTreeSet::new(),
                    revoking: BTreeSet::new(),
                    last_sent: None,
                    last_seen: now,
                };
                // A member rejoining with its id starts again.
                self.members.insert(id.clone(), member);
                self.dirty = true;
                id
            }
            -1 | -2 => {
                if self.members.remove(beat.member_id).is_none() {
                    return error(
                        ErrorCode::UnknownMemberId,
                        &format!(
                            "Member {} is not a member of group {}.",
                            beat.member_id, beat.group_id
                        ),
                    );
                }
                self.target.remove(beat.member_id);
                self.dirty = true;
                self.bump();
                return BeatAnswer {
                    member_id: Some(beat.member_id.to_owned()),
                    member_epoch: beat.member_epoch,
                    ..Default::default()
                };
            }
            epoch => {
                let Some(member) = self.members.get(beat.member_id) else {
                    return error(
                        ErrorCode::UnknownMemberId,
                        &format!(
                            "Member {} is not a member of group {}.",
                            beat.member_id, beat.group_id
                        ),
                    );
                };
                let retry = epoch == member.previous_epoch
                    && beat
                        .owned
                        .as_ref()
                        .is_some_and(|owned| owned.is_subset(&member.assigned));
                if epoch != member.epoch && !retry {
                    let relation = if epoch > member.epoch {
                        "greater"
                    } else {
                        "smaller"
                    };
                    return error(
                        ErrorCode::FencedMemberEpoch,
                        &format!(
                            "The consumer group member has a {relation} member epoch ({epoch}) than the one known by the group coordinator ({}). The member must abandon all its partitions and rejoin.",
                            member.epoch
                        ),
                    );
                }
                beat.member_id.to_owned()
            }
        };
        let Some(member) = self.members.get_mut(&member_id) else {
            return error(ErrorCode::UnknownMemberId, "unknown member");
        };
        member.last_seen = now;
        member.client_id = beat.client_id.to_owned();
        member.client_host = beat.client_host.to_owned();
        if let Some(instance) = beat.instance_id {
            member.instance_id = Some(instance.to_owned());
        }
        if let Some(rack) = beat.rack_id {
            member.rack_id = Some(rack.to_owned());
        }
        if let Some(mut subscribed) = beat.subscribed.clone() {
            subscribed.sort();
            subscribed.dedup();
            if subscribed != member.subscribed {
                member.subscribed = subscribed;
                self.dirty = true;
            }
        }
        // A regex is resolved as Kafka's coordinator resolves it, after the
        // heartbeat that brought it (Kafka's is asynchronous: the join gets
        // no partitions of it, a later heartbeat the assignment with a new
        // epoch), and again at every heartbeat, so that a topic created
        // later joins the subscription.
        let matched = member
            .pattern
            .as_ref()
            .map(|pattern| matching_topics(pattern, topics))
            .unwrap_or_default();
        if matched != member.matched {
            member.matched = matched;
            self.dirty = true;
        }
        if let Some(regex) = beat.regex {
            if member.regex.as_deref() != Some(regex) {
                member.regex = Some(regex.to_owned());
                member.pattern = whole_name_pattern(regex);
            }
        }
        if let Some(owned) = &beat.owned {
            member.revoking.retain(|tp| owned.contains(tp));
        }
        if let Some(assignor) = beat.assignor {
            if assignor != self.assignor {
                self.assignor = assignor.to_owned();
                self.dirty = true;
            }
        }
        let full = beat.subscribed.is_some() && beat.owned.is_some();
        let metadata = self.subscribed_metadata(topics);
        if self.dirty || metadata != self.metadata {
            // A change of members or subscriptions bumped the epoch
            // already when it was a leave; a join, a subscription change
            // or the topics' partitions bump it here.
            self.bump();
            self.dirty = false;
            self.metadata = metadata;
            self.assign();
        }
        self.reconcile(&member_id, full || beat.member_epoch == 0)
    }

    fn bump(&mut self) {
        self.epoch = self.epoch.saturating_add(1);
        if self.members.is_empty() {
            self.metadata.clear();
            self.target.clear();
            self.assignment_epoch = self.epoch;
        }
    }

    /// The subscribed topics that exist, with ids and partition counts.
    fn subscribed_metadata(&self, topics: &Topics) -> Vec<(String, Uuid, i32)> {
        let names: BTreeSet<&String> = self
            .members
            .values()
            .flat_map(|m| m.subscribed.iter().chain(&m.matched))
            .collect();
        names
            .into_iter()
            .filter_map(|name| {
                topics
                    .get(name)
                    .map(|t| (name.clone(), t.id, t.partition_count()))
            })
            .collect()
    }

    /// Computes the target assignment with the group's assignor.
    fn assign(&mut self) {
        let mut target: BTreeMap<String, BTreeSet<Tp>> = self
            .members
            .keys()
            .map(|id| (id.clone(), BTreeSet::new()))
            .collect();
        let range = self.assignor == "range";
        for (name, id, count) in &self.metadata {
            let subscribers: Vec<&String> = self
                .members
                .values()
                .filter(|m| m.subscribes_to(name))
                .map(|m| &m.id)
                .collect();
            if subscribers.is_empty() {
                continue;
            }
            let n = usize::try_from(*count).unwrap_or(0);
            let m = subscribers.len();
            if range {
                // Contiguous ranges, the first members one more.
                let (each, extra) = (n / m, n % m);
                let mut next = 0usize;
                for (i, member) in subscribers.iter().enumerate() {
                    let take = each + usize::from(i < extra);
                    if let Some(set) = target.get_mut(*member) {
                        for p in next..next + take {
                            set.insert((*id, i32::try_from(p).unwrap_or(i32::MAX)));
                        }
                    }
                    next += take;
                }
            } else {
                // Uniform: each partition to the subscriber holding the
                // fewest, preferring its current owner when tied.
                let mut heap: BinaryHeap<Reverse<(usize, usize)>> = subscribers
                    .iter()
                    .enumerate()
                    .map(|(i, member)| Reverse((target.get(*member).map_or(0, BTreeSet::len), i)))
                    .collect();
                for p in 0..n {
                    let Some(Reverse((held, i))) = heap.pop() else {
                        break;
                    };
                    if let Some(set) = target.get_mut(subscribers[i]) {
                        set.insert((*id, i32::try_from(p).unwrap_or(i32::MAX)));
                    }
                    heap.push(Reverse((held + 1, i)));
                }
            }
        }
        self.target = target;
        self.assignment_epoch = self.epoch;
    }

    /// Moves a member towards its target: it keeps what stays, gives up
    /// what goes (while it still reports it, nobody gets it), and gets
    /// what is free once it has revoked.
    fn reconcile(&mut self, member_id: &str, full: bool) -> BeatAnswer {
        let target = self.target.get(member_id).cloned().unwrap_or_default();
        let taken: HashSet<Tp> = self
            .members
            .values()
            .filter(|m| m.id != member_id)
            .flat_map(|m| m.assigned.iter().chain(m.revoking.iter()).copied())
            .collect();
        let epoch = self.epoch;
        let Some(member) = self.members.get_mut(member_id) else {
            return error(ErrorCode::UnknownMemberId, "unknown member");
        };
        let gone: Vec<Tp> = member.assigned.difference(&target).copied().collect();
        for tp in gone {
            member.assigned.remove(&tp);
            member.revoking.insert(tp);
        }
        if member.revoking.is_empty() {
            for tp in &target {
                if !taken.contains(tp) {
                    member.assigned.insert(*tp);
                }
            }
            if member.epoch != epoch {
                member.previous_epoch = member.epoch;
                member.epoch = epoch;
            }
        }
        let send = full || member.last_sent.as_ref() != Some(&member.assigned);
        if send {
            member.last_sent = Some(member.assigned.clone());
        }
        BeatAnswer {
            member_id: Some(member.id.clone()),
            member_epoch: member.epoch,
            assignment: send.then(|| member.assigned.clone()),
            ..Default::default()
        }
    }

    /// Removes members past the session timeout; whether any went.
    pub fn expire(&mut self, now: Instant) -> bool {
        let before = self.members.len();
        self.members
            .retain(|_, m| now.duration_since(m.last_seen) <= SESSION_TIMEOUT);
        if self.members.len() != before {
            self.target.retain(|id, _| self.members.contains_key(id));
            self.dirty = true;
            self.bump();
            true
        } else {
            false
        }
    }

    /// Checks a member and epoch for an offset commit: 0, or the error.
    pub fn check_commit(&self, member_id: &str, epoch: i32, stale: ErrorCode) -> i16 {
        match self.members.get(member_id) {
            None => ErrorCode::UnknownMemberId.code(),
            Some(m) if m.epoch != epoch => stale.code(),
            Some(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::topics::Placement;

    fn beat<'a>(id: &'a str, epoch: i32, topics: &[&str], owned: Option<Vec<Tp>>) -> Beat<'a> {
        Beat {
            version: 1,
            group_id: "g",
            member_id: id,
            member_epoch: epoch,
            instance_id: None,
            rack_id: None,
            subscribed: Some(topics.iter().map(|t| (*t).to_owned()).collect()),
            regex: None,
            assignor: None,
            owned: owned.map(|o| o.into_iter().collect()),
            client_id: "c",
            client_host: "h",
        }
    }

    #[test]
    fn a_regex_subscribes_to_the_whole_names_it_matches_and_to_topics_created_later() {
        let mut topics = Topics::default();
        let nodes = [0];
        let placement = Placement {
            nodes: &nodes,
            replication_factor: 1,
            assigned: &[],
        };
        for (name, partitions) in [("orders-eu", 2), ("orders-us", 3), ("my-orders-x", 5)] {
            assert!(topics
                .create(name, partitions, BTreeMap::new(), placement)
                .is_ok());
        }
        let now = Instant::now();
        let mut group = ConsumerGroup::default();
        let regex_beat = |epoch| Beat {
            subscribed: None,
            regex: Some("orders-.*"),
            ..beat("a", epoch, &[], None)
        };
        // Resolved after the join, as Kafka's coordinator resolves it.
        let a = group.heartbeat(regex_beat(0), &topics, now, String::new);
        assert_eq!(a.assignment.as_ref().map(BTreeSet::len), Some(0));
        let a = group.heartbeat(regex_beat(a.member_epoch), &topics, now, String::new);
        assert_eq!(a.member_epoch, 2);
        // Whole names only: my-orders-x holds the pattern but is not it.
        assert_eq!(a.assignment.as_ref().map(BTreeSet::len), Some(5));
        assert_eq!(group.members["a"].matched, ["orders-eu", "orders-us"]);
        // A topic created later joins at the next heartbeat.
        assert!(topics
            .create("orders-apac", 4, BTreeMap::new(), placement)
            .is_ok());
        let a = group.heartbeat(regex_beat(a.member_epoch), &topics, now, String::new);
        assert_eq!(a.assignment.as_ref().map(BTreeSet::len), Some(9));
        // A regex that does not compile matches nothing.
        let mut group = ConsumerGroup::default();
        let broken = |epoch| Beat {
            subscribed: None,
            regex: Some("orders-(x"),
            ..beat("b", epoch, &[], None)
        };
        let b = group.heartbeat(broken(0), &topics, now, String::new);
        let b = group.heartbeat(broken(b.member_epoch), &topics, now, String::new);
        assert_eq!(b.assignment, None, "nothing new to assign");
        assert!(group.members["b"].matched.is_empty());
        assert!(group.members["b"].assigned.is_empty());
    }

    #[test]
    fn partitions_move_only_once_revoked() {
        let mut topics = Topics::default();
        let nodes = [0];
        let placement = Placement {
            nodes: &nodes,
            replication_factor: 1,
            assigned: &[],
        };
        let id = topics
            .create("t", 4, BTreeMap::new(), placement)
            .map(|t| t.id)
            .unwrap_or(Uuid::ZERO);
        let now = Instant::now();
        let mut group = ConsumerGroup::default();
        let a = group.heartbeat(beat("a", 0, &["t"], None), &topics, now, String::new);
        assert_eq!(a.member_epoch, 1);
        assert_eq!(a.assignment.as_ref().map(BTreeSet::len), Some(4));
        let all: Vec<Tp> = (0..4).map(|p| (id, p)).collect();
        let b = group.heartbeat(beat("b", 0, &["t"], None), &topics, now, String::new);
        // b waits: a still owns everything.
        assert_eq!(
            (b.member_epoch, b.assignment.map(|s| s.len())),
            (2, Some(0))
        );
        // a is told to give two up, keeping its epoch until it does.
        let a = group.heartbeat(
            beat("a", 1, &["t"], Some(all.clone())),
            &topics,
            now,
            String::new,
        );
        assert_eq!(
            (a.member_epoch, a.assignment.map(|s| s.len())),
            (1, Some(2))
        );
        let kept: Vec<Tp> = all[..2].to_vec();
        let mine: Vec<Tp> = group.members["a"].assigned.iter().copied().collect();
        let a = group.heartbeat(
            beat("a", 1, &["t"], Some(mine.clone())),
            &topics,
            now,
            String::new,
        );
        assert_eq!(a.member_epoch, 2);
        let _ = kept;
        let b = group.heartbeat(
            beat("b", 2, &["t"], Some(vec![])),
            &topics,
            now,
            String::new,
        );
        assert_eq!(b.assignment.map(|s| s.len()), Some(2));
        assert_eq!(group.state_name(), "Stable");
        // An old epoch is fenced; an unknown member is unknown.
        let fenced = group.heartbeat(
            beat("a", 1, &["t"], Some(vec![(id, 9)])),
            &topics,
            now,
            String::new,
        );
        assert_eq!(fenced.error_code, ErrorCode::FencedMemberEpoch.code());
        let unknown = group.heartbeat(beat("z", 3, &["t"], None), &topics, now, String::new);
        assert_eq!(unknown.error_code, ErrorCode::UnknownMemberId.code());
    }

    #[test]
    fn range_gives_contiguous_ranges() {
        let mut topics = Topics::default();
        let nodes = [0];
        let placement = Placement {
            nodes: &nodes,
            replication_factor: 1,
            assigned: &[],
        };
        let _ = topics.create("t", 5, BTreeMap::new(), placement);
        let now = Instant::now();
        let mut group = ConsumerGroup::default();
        let mut first = beat("a", 0, &["t"], None);
        first.assignor = Some("range");
        let _ = group.heartbeat(first, &topics, now, String::new);
        let _ = group.heartbeat(beat("b", 0, &["t"], None), &topics, now, String::new);
        let parts = |m: &str| -> Vec<i32> { group.target[m].iter().map(|(_, p)| *p).collect() };
        assert_eq!(parts("a"), [0, 1, 2]);
        assert_eq!(parts("b"), [3, 4]);
    }
}
