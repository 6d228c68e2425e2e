//! Transactions: the coordinator's side (transactional ids, producer ids
//! and epochs, the partitions and groups of the ongoing transaction, its
//! timeout) and each partition's side (the open transactions, which hold
//! the last stable offset back, and the aborted ones, which a
//! `read_committed` Fetch lists).
//!
//! Commits and aborts complete at once: the markers are written to every
//! partition of the transaction while the state lock is held, so the
//! `Prepare*` states of Kafka's coordinator are never observed.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use super::committed::Committed;

/// The longest transaction timeout a producer may ask for: Kafka's
/// `transaction.max.timeout.ms` default (15 minutes).
pub const MAX_TRANSACTION_TIMEOUT_MS: i32 = 900_000;

/// A transaction's state, as DescribeTransactions and ListTransactions
/// name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnStatus {
    /// No transaction since the producer id was given out.
    Empty,
    /// Partitions or groups were added and the transaction is open.
    Ongoing,
    /// The last transaction committed.
    CompleteCommit,
    /// The last transaction aborted (by the producer, a fencing
    /// InitProducerId or the timeout).
    CompleteAbort,
}

impl TxnStatus {
    /// The name Kafka gives the state.
    pub fn name(self) -> &'static str {
        match self {
            TxnStatus::Empty => "Empty",
            TxnStatus::Ongoing => "Ongoing",
            TxnStatus::CompleteCommit => "CompleteCommit",
            TxnStatus::CompleteAbort => "CompleteAbort",
        }
    }

    /// Every state name Kafka knows (for ListTransactions' unknown
    /// filters).
    pub const KAFKA_NAMES: &'static [&'static str] = &[
        "Empty",
        "Ongoing",
        "PrepareCommit",
        "PrepareAbort",
        "CompleteCommit",
        "CompleteAbort",
        "Dead",
        "PrepareEpochFence",
    ];
}

/// One transactional id's state at its coordinator.
#[derive(Debug, Clone)]
pub struct Txn {
    /// The producer id.
    pub producer_id: i64,
    /// The current epoch.
    pub epoch: i16,
    /// The epoch before the last end of a transaction bumped it, -1 when
    /// the last change was not such a bump (an EndTxn retried with it gets
    /// the answer again, as Kafka's `lastProducerEpoch`).
    pub last_epoch: i16,
    /// The transaction timeout the producer asked for.
    pub timeout_ms: i32,
    /// The state.
    pub status: TxnStatus,
    /// When the ongoing or last transaction began (ms since the epoch),
    /// kept past its end as Kafka keeps it; -1 from InitProducerId until
    /// the next begins.
    pub start_ms: i64,
    /// The partitions of the ongoing transaction.
    pub partitions: BTreeSet<(String, i32)>,
    /// The groups of the ongoing transaction.
    pub groups: BTreeSet<String>,
    /// Offsets committed in the ongoing transaction: group, topic,
    /// partition and the offset, applied on commit.
    pub pending_offsets: BTreeMap<(String, String, i32), Committed>,
}

/// Every transactional id, with the index of open transactions by
/// deadline.
#[derive(Debug, Default)]
pub struct Transactions {
    by_id: HashMap<String, Txn>,
    by_producer: HashMap<i64, String>,
    /// (deadline ms, transactional id) of each ongoing transaction.
    deadlines: BTreeSet<(i64, String)>,
    /// Groups with offsets pending in an ongoing transaction: group ->
    /// (topic, partition) -> how many transactions.
    pending: HashMap<String, HashMap<(String, i32), u32>>,
}

impl Transactions {
    /// A transactional id's state.
    pub fn get(&self, transactional_id: &str) -> Option<&Txn> {
        self.by_id.get(transactional_id)
    }

    /// The transactional id of a producer id.
    pub fn id_of(&self, producer_id: i64) -> Option<&str> {
        self.by_producer.get(&producer_id).map(String::as_str)
    }

    /// Every transactional id with its state.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Txn)> {
        self.by_id.iter()
    }

    /// Creates or replaces a transactional id's state (InitProducerId).
    pub fn put(&mut self, transactional_id: &str, txn: Txn) {
        if let Some(old) = self.by_id.get(transactional_id) {
            self.by_producer.remove(&old.producer_id);
        }
        self.by_producer
            .insert(txn.producer_id, transactional_id.to_owned());
        self.by_id.insert(transactional_id.to_owned(), txn);
    }

    /// Opens the transaction if it is not (the first partition or group
    /// added), with its deadline.
    pub fn begin(&mut self, transactional_id: &str, now_ms: i64) {
        let Some(txn) = self.by_id.get_mut(transactional_id) else {
            return;
        };
        if txn.status != TxnStatus::Ongoing {
            txn.status = TxnStatus::Ongoing;
            txn.start_ms = now_ms;
            let deadline = now_ms.saturating_add(i64::from(txn.timeout_ms));
            self.deadlines
                .insert((deadline, transactional_id.to_owned()));
        }
    }

    /// Adds a partition to the ongoing transaction, opening it.
    pub fn add_partition(&mut self, transactional_id: &str, topic: &str, partition: i32, now: i64) {
        self.begin(transactional_id, now);
        if let Some(txn) = self.by_id.get_mut(transactional_id) {
            if !txn.partitions.contains(&(topic.to_owned(), partition)) {
                txn.partitions.insert((topic.to_owned(), partition));
            }
        }
    }

    /// Adds a group to the ongoing transaction, opening it.
    pub fn add_group(&mut self, transactional_id: &str, group: &str, now: i64) {
        self.begin(transactional_id, now);
        if let Some(txn) = self.by_id.get_mut(transactional_id) {
            txn.groups.insert(group.to_owned());
        }
    }

    /// Notes offsets committed in the ongoing transaction.
    pub fn add_offsets(
        &mut self,
        transactional_id: &str,
        group: &str,
        offsets: Vec<(String, i32, Committed)>,
    ) {
        let Some(txn) = self.by_id.get_mut(transactional_id) else {
            return;
        };
        let pending = self.pending.entry(group.to_owned()).or_default();
        for (topic, partition, committed) in offsets {
            let key = (group.to_owned(), topic, partition);
            if !txn.pending_offsets.contains_key(&key) {
                *pending.entry((key.1.clone(), partition)).or_default() += 1;
            }
            txn.pending_offsets.insert(key, committed);
        }
    }

    /// Whether an ongoing transaction holds an offset of `group` for the
    /// partition (OffsetFetch's UNSTABLE_OFFSET_COMMIT).
    pub fn offset_pending(&self, group: &str, topic: &str, partition: i32) -> bool {
        self.pending
            .get(group)
            .is_some_and(|p| p.contains_key(&(topic.to_owned(), partition)))
    }

    /// Closes the ongoing transaction: the state becomes `status`, the
    /// epoch `epoch` (and the producer id `producer_id`); returns what it
    /// held (partitions, and the pending offsets).
    pub fn close(
        &mut self,
        transactional_id: &str,
        status: TxnStatus,
        producer_id: i64,
        epoch: i16,
    ) -> Option<Closed> {
        let txn = self.by_id.get_mut(transactional_id)?;
        let was_ongoing = txn.status == TxnStatus::Ongoing;
        let deadline = txn.start_ms.saturating_add(i64::from(txn.timeout_ms));
        let old_producer = txn.producer_id;
        let closed = Closed {
            producer_id: txn.producer_id,
            partitions: std::mem::take(&mut txn.partitions),
            offsets: std::mem::take(&mut txn.pending_offsets),
        };
        txn.groups.clear();
        txn.status = status;
        txn.last_epoch = if (producer_id, epoch) != (txn.producer_id, txn.epoch) {
            txn.epoch
        } else {
            -1
        };
        txn.producer_id = producer_id;
        txn.epoch = epoch;
        if was_ongoing {
            self.deadlines
                .remove(&(deadline, transactional_id.to_owned()));
        }
        if old_producer != producer_id {
            self.by_producer.remove(&old_producer);
            self.by_producer
                .insert(producer_id, transactional_id.to_owned());
        }
        for (group, topic, partition) in closed.offsets.keys() {
            if let Some(pending) = self.pending.get_mut(group) {
                let key = (topic.clone(), *partition);
                if let Some(count) = pending.get_mut(&key) {
                    *count -= 1;
                    if *count == 0 {
                        pending.remove(&key);
                    }
                }
                if pending.is_empty() {
                    self.pending.remove(group);
                }
            }
        }
        Some(closed)
    }

    /// The transactional ids whose ongoing transaction is past its
    /// deadline at `now_ms`, oldest first.
    pub fn expired(&self, now_ms: i64) -> Vec<String> {
        self.deadlines
            .iter()
            .take_while(|(deadline, _)| *deadline <= now_ms)
            .map(|(_, id)| id.clone())
            .collect()
    }
}

/// What a closed transaction held.
#[derive(Debug)]
pub struct Closed {
    /// The producer id that wrote it (before any change).
    pub producer_id: i64,
    /// Its partitions, which get a marker each.
    pub partitions: BTreeSet<(String, i32)>,
    /// Its offsets, stored on commit.
    pub offsets: BTreeMap<(String, String, i32), Committed>,
}

/// An aborted transaction on a partition: what a `read_committed` Fetch
/// lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aborted {
    /// Its producer id.
    pub producer_id: i64,
    /// Its first offset on the partition.
    pub first_offset: i64,
    /// The offset of its abort marker.
    pub last_offset: i64,
}

/// A partition's transactions.
#[derive(Debug, Default)]
pub struct PartitionTxns {
    /// Open transactions: producer id -> first offset.
    open: HashMap<i64, i64>,
    /// The same, by first offset.
    open_by_offset: BTreeSet<(i64, i64)>,
    /// Aborted transactions, in marker order.
    aborted: VecDeque<Aborted>,
}

impl PartitionTxns {
    /// Notes a transactional batch at `offset`: the producer's
    /// transaction is open from its first batch on.
    pub fn write(&mut self, producer_id: i64, offset: i64) {
        if let std::collections::hash_map::Entry::Vacant(e) = self.open.entry(producer_id) {
            e.insert(offset);
            self.open_by_offset.insert((offset, producer_id));
        }
    }

    /// The first offset of the producer's open transaction.
    pub fn open_since(&self, producer_id: i64) -> Option<i64> {
        self.open.get(&producer_id).copied()
    }

    /// The last stable offset: the first offset of the oldest open
    /// transaction, else the high watermark.
    pub fn last_stable_offset(&self, high_watermark: i64) -> i64 {
        self.open_by_offset
            .first()
            .map_or(high_watermark, |(offset, _)| (*offset).min(high_watermark))
    }

    /// Notes the marker ending the producer's transaction at
    /// `marker_offset`.
    pub fn end(&mut self, producer_id: i64, marker_offset: i64, committed: bool) {
        let Some(first) = self.open.remove(&producer_id) else {
            return;
        };
        self.open_by_offset.remove(&(first, producer_id));
        if !committed {
            self.aborted.push_back(Aborted {
                producer_id,
                first_offset: first,
                last_offset: marker_offset,
            });
        }
    }

    /// The aborted transactions a read of offsets `from..to` must know:
    /// those whose marker is at or after `from` and that began before
    /// `to`. Aborts wholly before `from` are skipped by a binary search.
    pub fn aborted_in(&self, from: i64, to: i64) -> Vec<Aborted> {
        let start = self.aborted.partition_point(|a| a.last_offset < from);
        self.aborted
            .range(start..)
            .filter(|a| a.first_offset < to)
            .copied()
            .collect()
    }

    /// Forgets aborts wholly before the log start offset.
    pub fn trim(&mut self, log_start: i64) {
        while self
            .aborted
            .front()
            .is_some_and(|a| a.last_offset < log_start)
        {
            self.aborted.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_stable_offset_and_the_aborted_list() {
        let mut p = PartitionTxns::default();
        assert_eq!(p.last_stable_offset(10), 10);
        p.write(1, 3);
        p.write(2, 5);
        p.write(1, 7);
        assert_eq!(p.last_stable_offset(10), 3);
        p.end(1, 10, false);
        assert_eq!(p.last_stable_offset(11), 5);
        p.end(2, 11, true);
        assert_eq!(p.last_stable_offset(12), 12);
        let abort = Aborted {
            producer_id: 1,
            first_offset: 3,
            last_offset: 10,
        };
        assert_eq!(p.aborted_in(0, 12), [abort]);
        assert_eq!(p.aborted_in(11, 12), []);
        assert_eq!(p.aborted_in(0, 3), []);
        p.trim(11);
        assert_eq!(p.aborted_in(0, 12), []);
    }
}
