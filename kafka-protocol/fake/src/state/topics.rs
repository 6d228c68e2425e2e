//! Topics: names, ids, partitions with their leaders and logs, configs.

use std::collections::{BTreeMap, HashMap, VecDeque};

use kafka_wire::runtime::Uuid;
use kafka_wire::ErrorCode;

use super::log::Log;
use super::producers::Producers;
use super::transactions::PartitionTxns;
use crate::config::{MAX_PARTITIONS_PER_TOPIC, MAX_PARTITIONS_TOTAL};

/// One partition.
#[derive(Debug)]
pub struct Partition {
    /// The node leading it.
    pub leader: i32,
    /// Its leader epoch: 0 at creation, one more at every leader change.
    pub leader_epoch: i32,
    /// Where each leader epoch began (epoch, first offset), oldest first,
    /// at most [`MAX_EPOCH_HISTORY`] of them, for OffsetForLeaderEpoch.
    pub epoch_starts: VecDeque<(i32, i64)>,
    /// Its replicas, leader first; all always in sync.
    pub replicas: Vec<i32>,
    /// Its records.
    pub log: Log,
    /// Its idempotent producers.
    pub producers: Producers,
    /// Its open and aborted transactions.
    pub txns: PartitionTxns,
}

/// One topic.
#[derive(Debug)]
pub struct Topic {
    /// Its id.
    pub id: Uuid,
    /// Unique across the cluster's life, so that a stale reference to a
    /// deleted topic of the same name is recognised.
    pub serial: u64,
    /// Its partitions, by index.
    pub partitions: Vec<Partition>,
    /// The configs set on it (others take their defaults).
    pub configs: BTreeMap<String, String>,
    /// Its replication factor.
    pub replication_factor: i16,
}

/// The most leader epochs a partition remembers the start of.
pub const MAX_EPOCH_HISTORY: usize = 64;

impl Partition {
    /// Makes `node` the leader with the next leader epoch, as Kafka's
    /// controller does on every leader change (to the same node too).
    pub fn elect(&mut self, node: i32) {
        self.leader = node;
        self.leader_epoch = self.leader_epoch.saturating_add(1);
        if !self.replicas.contains(&node) {
            self.replicas.pop();
            self.replicas.insert(0, node);
        }
        // As Kafka's leader epoch cache: a new epoch replaces those that
        // began at the same offset or later (epochs in which nothing was
        // appended), so that only epochs holding records fill the history.
        let start = self.log.high_watermark();
        while self
            .epoch_starts
            .back()
            .is_some_and(|&(_, offset)| offset >= start)
        {
            self.epoch_starts.pop_back();
        }
        if self.epoch_starts.len() >= MAX_EPOCH_HISTORY {
            self.epoch_starts.pop_front();
        }
        self.epoch_starts.push_back((self.leader_epoch, start));
    }

    /// Kafka's check of a request's `current_leader_epoch` (-1: none): an
    /// older epoch is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH.
    pub fn check_epoch(&self, current: i32) -> Result<(), i16> {
        if current < 0 || current == self.leader_epoch {
            Ok(())
        } else if current < self.leader_epoch {
            Err(ErrorCode::FencedLeaderEpoch.code())
        } else {
            Err(ErrorCode::UnknownLeaderEpoch.code())
        }
    }

    /// OffsetForLeaderEpoch's answer for `epoch`, as Kafka's leader epoch
    /// cache gives it: the greatest known epoch at or below it and the
    /// offset where the next one began (the high watermark for the current
    /// epoch). Below every known epoch (one that held no records, or one
    /// older than the history keeps), the epoch asked for and where the
    /// earliest known one began: the log is never truncated, so a client's
    /// position there is never past the answer, and a client that checks
    /// (librdkafka after a leader change) keeps its position.
    pub fn end_of_epoch(&self, epoch: i32) -> (i32, i64) {
        if epoch >= self.leader_epoch {
            return (self.leader_epoch, self.log.high_watermark());
        }
        let earliest = self
            .epoch_starts
            .front()
            .map_or(self.log.high_watermark(), |&(_, start)| start);
        let mut found = (epoch, earliest);
        for (i, &(start_epoch, _)) in self.epoch_starts.iter().enumerate() {
            if start_epoch > epoch {
                break;
            }
            let end = self
                .epoch_starts
                .get(i + 1)
                .map_or(self.log.high_watermark(), |&(_, next)| next);
            found = (start_epoch, end);
        }
        found
    }
}

impl Topic {
    /// A partition by index.
    pub fn partition(&self, index: i32) -> Option<&Partition> {
        self.partitions.get(usize::try_from(index).ok()?)
    }

    /// A partition by index, to change.
    pub fn partition_mut(&mut self, index: i32) -> Option<&mut Partition> {
        self.partitions.get_mut(usize::try_from(index).ok()?)
    }

    /// The number of partitions, as Kafka counts them.
    pub fn partition_count(&self) -> i32 {
        i32::try_from(self.partitions.len()).unwrap_or(i32::MAX)
    }

    /// A config's value: set, or Kafka 4.4.0's default for a fresh topic.
    pub fn config(&self, name: &str) -> Option<&str> {
        self.configs.get(name).map(String::as_str).or_else(|| {
            crate::config_table::table()
                .topic
                .get(name)
                .and_then(|entry| entry.value.as_deref())
        })
    }

    /// Whether batches get the broker's clock (`message.timestamp.type`
    /// LogAppendTime).
    pub fn log_append_time(&self) -> bool {
        self.config("message.timestamp.type") == Some("LogAppendTime")
    }
}

/// Why a topic name is refused, if it is (Kafka's rules).
pub fn check_topic_name(name: &str) -> Result<(), i16> {
    let legal = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty()
        || name.len() > 249
        || name == "."
        || name == ".."
        || !name.chars().all(legal)
    {
        Err(ErrorCode::InvalidTopicException.code())
    } else {
        Ok(())
    }
}

/// Every topic, with the retention queue that keeps the byte budget.
#[derive(Debug, Default)]
pub struct Topics {
    by_name: HashMap<String, Topic>,
    names_by_id: HashMap<Uuid, String>,
    serial: u64,
    partitions_total: usize,
    /// Every stored batch in append order: (topic, serial, partition,
    /// base offset); the oldest go first when the budget is exceeded.
    retention: VecDeque<(String, u64, i32, i64)>,
    /// Bytes held by every log together.
    bytes: u64,
}

/// Where a new topic's partitions go.
#[derive(Debug, Clone, Copy)]
pub struct Placement<'a> {
    /// Every node id.
    pub nodes: &'a [i32],
    /// The replication factor.
    pub replication_factor: usize,
    /// The replicas of each partition, leader first, when the client chose
    /// them (CreateTopics' assignments, checked by [`check_assignment`]);
    /// empty: the fake spreads them over `nodes`.
    pub assigned: &'a [Vec<i32>],
}

/// A manual replica assignment (CreateTopics' `assignments`: partition
/// index, replica node ids) checked as Kafka 4.4.0's controller checks it,
/// in its order: no partition twice; each list non-empty, of registered
/// brokers, none twice (looked at in id order), as long as the lists
/// before it; then the partitions exactly 0, 1, 2, ... Returns the
/// replicas by partition index, or the error code and Kafka's message.
pub fn check_assignment(
    assignment: &[(i32, Vec<i32>)],
    nodes: &[i32],
) -> Result<Vec<Vec<i32>>, (i16, String)> {
    let invalid = |message: String| (ErrorCode::InvalidReplicaAssignment.code(), message);
    let mut by_index: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    let mut replication: Option<usize> = None;
    for (index, replicas) in assignment {
        if by_index.contains_key(index) {
            return Err(invalid(format!(
                "Found multiple manual partition assignments for partition {index}"
            )));
        }
        if replicas.is_empty() {
            return Err(invalid(
                "The manual partition assignment includes an empty replica list.".into(),
            ));
        }
        let mut sorted = replicas.clone();
        sorted.sort_unstable();
        for (at, node) in sorted.iter().enumerate() {
            if !nodes.contains(node) {
                return Err(invalid(format!(
                    "The manual partition assignment includes broker {node}, but no such broker is registered."
                )));
            }
            if at > 0 && sorted[at - 1] == *node {
                return Err(invalid(format!(
                    "The manual partition assignment includes the broker {node} more than once."
                )));
            }
        }
        if let Some(previous) = replication.filter(|&n| n != replicas.len()) {
            return Err(invalid(format!(
                "The manual partition assignment includes a partition with {} replica(s), but this is not consistent with previous partitions, which have {previous} replica(s).",
                replicas.len()
            )));
        }
        replication = Some(replicas.len());
        by_index.insert(*index, replicas.clone());
    }
    let count = i32::try_from(by_index.len()).unwrap_or(i32::MAX);
    if !by_index.keys().copied().eq(0..count) {
        return Err(invalid(
            "partitions should be a consecutive 0-based integer sequence".into(),
        ));
    }
    Ok(by_index.into_values().collect())
}

impl Topics {
    /// The topic called `name`.
    pub fn get(&self, name: &str) -> Option<&Topic> {
        self.by_name.get(name)
    }

    /// The topic called `name`, to change.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Topic> {
        self.by_name.get_mut(name)
    }

    /// The name of the topic whose id is `id`.
    pub fn name_of(&self, id: Uuid) -> Option<&str> {
        self.names_by_id.get(&id).map(String::as_str)
    }

    /// Every topic name, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.by_name.keys().cloned().collect();
        names.sort();
        names
    }

    /// Checks that a topic could be created.
    pub fn check_create(&self, name: &str, partitions: i32) -> Result<(), i16> {
        check_topic_name(name)?;
        if self.by_name.contains_key(name) {
            return Err(ErrorCode::TopicAlreadyExists.code());
        }
        self.check_more_partitions(partitions)
    }

    fn check_more_partitions(&self, partitions: i32) -> Result<(), i16> {
        let count = usize::try_from(partitions)
            .ok()
            .filter(|n| (1..=MAX_PARTITIONS_PER_TOPIC as usize).contains(n))
            .ok_or(ErrorCode::InvalidPartitions.code())?;
        if self.partitions_total + count > MAX_PARTITIONS_TOTAL {
            return Err(ErrorCode::PolicyViolation.code());
        }
        Ok(())
    }

    /// A new topic id for `name`, unused and not zero, with the serial it
    /// takes: for a topic created, or one a validate-only CreateTopics
    /// would create.
    pub fn fresh_id(&mut self, name: &str) -> (Uuid, u64) {
        self.serial += 1;
        let serial = self.serial;
        let mut id = topic_id(name, serial);
        let mut salt = serial;
        while id == Uuid::ZERO || self.names_by_id.contains_key(&id) {
            salt = salt.wrapping_add(0x9e37_79b9);
            id = topic_id(name, salt);
        }
        (id, serial)
    }

    /// Creates a topic.
    pub fn create(
        &mut self,
        name: &str,
        partitions: i32,
        configs: BTreeMap<String, String>,
        placement: Placement<'_>,
    ) -> Result<&Topic, i16> {
        self.check_create(name, partitions)?;
        let (id, serial) = self.fresh_id(name);
        let mut topic = Topic {
            id,
            serial,
            partitions: Vec::new(),
            configs,
            replication_factor: i16::try_from(placement.replication_factor).unwrap_or(1),
        };
        add_partitions(&mut topic, name, partitions, placement);
        self.partitions_total += topic.partitions.len();
        self.names_by_id.insert(id, name.to_owned());
        Ok(self.by_name.entry(name.to_owned()).or_insert(topic))
    }

    /// Grows a topic to `count` partitions.
    pub fn grow(&mut self, name: &str, count: i32, nodes: &[i32], apply: bool) -> Result<(), i16> {
        let topic = self
            .by_name
            .get(name)
            .ok_or(ErrorCode::UnknownTopicOrPartition.code())?;
        let current = topic.partition_count();
        if count <= current {
            return Err(ErrorCode::InvalidPartitions.code());
        }
        if count > MAX_PARTITIONS_PER_TOPIC {
            return Err(ErrorCode::InvalidPartitions.code());
        }
        self.check_more_partitions(count - current)?;
        if !apply {
            return Ok(());
        }
        let Some(topic) = self.by_name.get_mut(name) else {
            return Err(ErrorCode::UnknownTopicOrPartition.code());
        };
        let placement = Placement {
            nodes,
            replication_factor: usize::try_from(topic.replication_factor).unwrap_or(1),
            assigned: &[],
        };
        let before = topic.partitions.len();
        add_partitions(topic, name, count, placement);
        self.partitions_total += topic.partitions.len() - before;
        Ok(())
    }

    /// Deletes a topic; returns its name and id.
    pub fn delete(&mut self, name: &str) -> Result<(String, Uuid), i16> {
        let topic = self
            .by_name
            .remove(name)
            .ok_or(ErrorCode::UnknownTopicOrPartition.code())?;
        self.names_by_id.remove(&topic.id);
        self.partitions_total -= topic.partitions.len();
        let held: usize = topic.partitions.iter().map(|p| p.log.size()).sum();
        self.bytes = self.bytes.saturating_sub(held as u64);
        Ok((name.to_owned(), topic.id))
    }

    /// Notes a batch appended to `name`/`partition` of `size` bytes, then
    /// drops the oldest batches of all logs while they hold more than
    /// `budget` bytes. Each queue entry is looked at once, so the work is
    /// bounded by the batches appended.
    pub fn appended(
        &mut self,
        name: &str,
        partition: i32,
        base_offset: i64,
        size: usize,
        budget: u64,
    ) {
        let serial = self.by_name.get(name).map_or(0, |t| t.serial);
        self.retention
            .push_back((name.to_owned(), serial, partition, base_offset));
        self.bytes += size as u64;
        while self.bytes > budget {
            let Some((name, serial, partition, base_offset)) = self.retention.pop_front() else {
                break;
            };
            let freed = self
                .by_name
                .get_mut(&name)
                .filter(|t| t.serial == serial)
                .and_then(|t| t.partition_mut(partition))
                .map_or(0, |p| p.log.drop_oldest(base_offset));
            self.bytes = self.bytes.saturating_sub(freed as u64);
        }
    }

    /// Notes bytes freed by DeleteRecords.
    pub fn freed(&mut self, bytes: usize) {
        self.bytes = self.bytes.saturating_sub(bytes as u64);
    }

    /// Bytes held by every log together.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Adds partitions up to `count`, leaders spread over the nodes from a
/// start that depends on the name, as Kafka spreads them.
fn add_partitions(topic: &mut Topic, name: &str, count: i32, placement: Placement<'_>) {
    let nodes = placement.nodes;
    if nodes.is_empty() {
        return;
    }
    let start = name.bytes().fold(0usize, |h, b| {
        h.wrapping_mul(31).wrapping_add(usize::from(b))
    });
    let replicas = placement.replication_factor.clamp(1, nodes.len());
    let count = usize::try_from(count).unwrap_or(0);
    for index in topic.partitions.len()..count {
        let first = start.wrapping_add(index) % nodes.len();
        let replica_nodes: Vec<i32> = match placement.assigned.get(index) {
            Some(assigned) if !assigned.is_empty() => assigned.clone(),
            _ => (0..replicas)
                .map(|r| nodes[(first + r) % nodes.len()])
                .collect(),
        };
        topic.partitions.push(Partition {
            leader: replica_nodes[0],
            leader_epoch: 0,
            epoch_starts: VecDeque::from([(0, 0)]),
            replicas: replica_nodes,
            log: Log::default(),
            producers: Producers::default(),
            txns: PartitionTxns::default(),
        });
    }
}

/// A non-zero id derived from the name and a serial (FNV-1a), so that runs
/// are reproducible.
fn topic_id(name: &str, serial: u64) -> Uuid {
    let mut bytes = [0u8; 16];
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (half, seed) in [(0, serial), (8, !serial)] {
        for byte in name.bytes().chain(seed.to_be_bytes()) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
        bytes[half..half + 8].copy_from_slice(&hash.to_be_bytes());
    }
    Uuid(bytes)
}
