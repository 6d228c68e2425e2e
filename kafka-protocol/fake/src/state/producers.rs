//! Idempotent producers on one partition: the epoch and the last five
//! batches of each, checked as Kafka's producer state manager checks them.

use std::collections::{HashMap, VecDeque};

use kafka_wire::ErrorCode;

/// How many batches of each producer Kafka remembers for duplicates.
const REMEMBERED_BATCHES: usize = 5;

/// A batch a producer wrote: its sequence range and offsets.
#[derive(Debug, Clone, Copy)]
struct Written {
    first_sequence: i32,
    last_sequence: i32,
    base_offset: i64,
    /// The batch's max timestamp as appended.
    timestamp: i64,
}

/// One producer's state on a partition.
#[derive(Debug, Default)]
struct Producer {
    epoch: i16,
    recent: VecDeque<Written>,
    /// The largest timestamp of its last batch or marker.
    last_timestamp: i64,
    /// The coordinator epoch of its last marker, -1 before any.
    coordinator_epoch: i32,
}

/// A producer as DescribeProducers reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Active {
    /// The producer id.
    pub producer_id: i64,
    /// Its epoch.
    pub epoch: i16,
    /// The last sequence it wrote, -1 for none at this epoch.
    pub last_sequence: i32,
    /// The timestamp of its last write.
    pub last_timestamp: i64,
    /// The coordinator epoch of its last marker, -1 before any.
    pub coordinator_epoch: i32,
}

/// What to do with a batch, given its producer's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Append it.
    Append,
    /// It was appended before, at this base offset and with this max
    /// timestamp: answer with them (the timestamp as the log append time)
    /// and append nothing, as Kafka answers a retried batch.
    Duplicate(i64, i64),
    /// Refuse it with this error code.
    Reject(i16),
}

/// The producer header fields of a batch.
#[derive(Debug, Clone, Copy)]
pub struct BatchIds {
    /// The producer id, -1 for none.
    pub producer_id: i64,
    /// The producer epoch.
    pub epoch: i16,
    /// The first sequence.
    pub first_sequence: i32,
    /// The last offset delta (count - 1).
    pub last_offset_delta: i32,
}

impl BatchIds {
    fn last_sequence(&self) -> i32 {
        // Sequences wrap at i32::MAX, as Kafka's do.
        let next = i64::from(self.first_sequence) + i64::from(self.last_offset_delta);
        (next % (i64::from(i32::MAX) + 1)) as i32
    }
}

/// Every idempotent producer of one partition.
#[derive(Debug, Default)]
pub struct Producers {
    by_id: HashMap<i64, Producer>,
}

fn in_sequence(last: i32, next: i32) -> bool {
    next == last.wrapping_add(1) || (last == i32::MAX && next == 0)
}

impl Producers {
    /// Checks a batch: epochs may only grow, a new epoch starts at
    /// sequence 0, a known epoch continues its sequence, and a batch
    /// matching one of the last five is a duplicate.
    ///
    /// A producer with no state here (new, or its state lost with
    /// retention) may start at any sequence, as Kafka 4.4.0 allows, unless
    /// `from_zero`: then its first batch must start at 0. The caller sets
    /// it for a partition that has never held a record when the cluster
    /// follows Kafka 4.5's rule (KAFKA-15591).
    pub fn check(&self, ids: &BatchIds, from_zero: bool) -> Verdict {
        if ids.producer_id < 0 {
            return Verdict::Append;
        }
        let Some(producer) = self.by_id.get(&ids.producer_id) else {
            return if from_zero && ids.first_sequence != 0 {
                Verdict::Reject(ErrorCode::OutOfOrderSequenceNumber.code())
            } else {
                Verdict::Append
            };
        };
        if ids.epoch < producer.epoch {
            return Verdict::Reject(ErrorCode::InvalidProducerEpoch.code());
        }
        if ids.epoch > producer.epoch {
            return if ids.first_sequence == 0 {
                Verdict::Append
            } else {
                Verdict::Reject(ErrorCode::OutOfOrderSequenceNumber.code())
            };
        }
        let last_sequence = ids.last_sequence();
        if let Some(written) = producer
            .recent
            .iter()
            .find(|w| w.first_sequence == ids.first_sequence && w.last_sequence == last_sequence)
        {
            return Verdict::Duplicate(written.base_offset, written.timestamp);
        }
        let last = producer.recent.back().map_or(-1, |w| w.last_sequence);
        if in_sequence(last, ids.first_sequence) {
            Verdict::Append
        } else {
            Verdict::Reject(ErrorCode::OutOfOrderSequenceNumber.code())
        }
    }

    /// Remembers an appended batch whose largest timestamp is
    /// `timestamp`.
    pub fn record(&mut self, ids: &BatchIds, base_offset: i64, timestamp: i64) {
        if ids.producer_id < 0 {
            return;
        }
        let producer = self.by_id.entry(ids.producer_id).or_insert(Producer {
            coordinator_epoch: -1,
            ..Default::default()
        });
        producer.last_timestamp = timestamp;
        if producer.epoch != ids.epoch {
            producer.epoch = ids.epoch;
            producer.recent.clear();
        }
        producer.recent.push_back(Written {
            first_sequence: ids.first_sequence,
            last_sequence: ids.last_sequence(),
            base_offset,
            timestamp,
        });
        if producer.recent.len() > REMEMBERED_BATCHES {
            producer.recent.pop_front();
        }
    }

    /// Remembers a transaction marker written for the producer at
    /// `epoch`. A marker at a new epoch (transaction.version 2 bumps it at
    /// every end) starts its sequences again; at the same epoch (an
    /// EndTxn below v5) they go on, as Kafka's producer state keeps them.
    pub fn mark(&mut self, producer_id: i64, epoch: i16, timestamp: i64) {
        let producer = self.by_id.entry(producer_id).or_insert(Producer {
            epoch,
            coordinator_epoch: -1,
            ..Default::default()
        });
        if producer.epoch != epoch {
            producer.recent.clear();
            producer.epoch = epoch;
        }
        producer.last_timestamp = timestamp;
        producer.coordinator_epoch = 0;
    }

    /// Every producer known on the partition, by producer id.
    pub fn active(&self) -> Vec<Active> {
        let mut all: Vec<Active> = self
            .by_id
            .iter()
            .map(|(&producer_id, p)| Active {
                producer_id,
                epoch: p.epoch,
                last_sequence: p.recent.back().map_or(-1, |w| w.last_sequence),
                last_timestamp: p.last_timestamp,
                coordinator_epoch: p.coordinator_epoch,
            })
            .collect();
        all.sort_by_key(|a| a.producer_id);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(epoch: i16, first_sequence: i32, count: i32) -> BatchIds {
        BatchIds {
            producer_id: 7,
            epoch,
            first_sequence,
            last_offset_delta: count - 1,
        }
    }

    #[test]
    fn sequences_as_kafka_checks_them() {
        let mut producers = Producers::default();
        assert_eq!(producers.check(&ids(0, 0, 2), false), Verdict::Append);
        producers.record(&ids(0, 0, 2), 10, 0);
        assert_eq!(
            producers.check(&ids(0, 0, 2), false),
            Verdict::Duplicate(10, 0)
        );
        let out_of_order = Verdict::Reject(ErrorCode::OutOfOrderSequenceNumber.code());
        assert_eq!(producers.check(&ids(0, 5, 1), false), out_of_order);
        assert_eq!(producers.check(&ids(0, 2, 1), false), Verdict::Append);
        assert_eq!(producers.check(&ids(1, 3, 1), false), out_of_order);
        assert_eq!(producers.check(&ids(1, 0, 1), false), Verdict::Append);
        producers.record(&ids(1, 0, 1), 12, 0);
        assert_eq!(
            producers.check(&ids(0, 2, 1), false),
            Verdict::Reject(ErrorCode::InvalidProducerEpoch.code())
        );
    }

    #[test]
    fn a_marker_keeps_the_sequence_unless_it_bumps_the_epoch() {
        let mut producers = Producers::default();
        producers.record(&ids(0, 0, 1), 0, 0);
        producers.mark(7, 0, 1);
        assert_eq!(producers.check(&ids(0, 1, 1), false), Verdict::Append);
        let out_of_order = Verdict::Reject(ErrorCode::OutOfOrderSequenceNumber.code());
        assert_eq!(
            producers.check(&ids(0, 0, 1), false),
            Verdict::Duplicate(0, 0)
        );
        producers.mark(7, 1, 2);
        assert_eq!(producers.check(&ids(1, 1, 1), false), out_of_order);
        assert_eq!(producers.check(&ids(1, 0, 1), false), Verdict::Append);
    }
}
