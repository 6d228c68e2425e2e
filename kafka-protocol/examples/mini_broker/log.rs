//! The in-memory log: topics, partitions and the record batches appended to
//! them, with offsets assigned by rewriting each batch's base offset.

use std::collections::HashMap;

use kafka_wire::runtime::Uuid;
use kafka_wire_records::BatchHeader;

use crate::errors;
use crate::validate::CheckedBatch;

/// Every topic, by name, with an index by id.
#[derive(Default)]
pub struct Log {
    topics: HashMap<String, Topic>,
    /// The name of the topic with each id.
    names_by_id: HashMap<Uuid, String>,
    created: u64,
}

/// One topic.
pub struct Topic {
    /// Its id, used by newer Fetch, Produce and OffsetCommit versions.
    pub id: Uuid,
    /// Its partitions, by index.
    pub partitions: Vec<Partition>,
}

/// One partition: batches in offset order.
#[derive(Default)]
pub struct Partition {
    batches: Vec<StoredBatch>,
    next_offset: i64,
    /// The recent batches of each idempotent producer, by producer id.
    producers: HashMap<i64, ProducerState>,
}

struct StoredBatch {
    base_offset: i64,
    last_offset: i64,
    max_timestamp: i64,
    bytes: Vec<u8>,
}

/// What is remembered of an idempotent producer on one partition.
struct ProducerState {
    epoch: i16,
    /// (base sequence, last sequence, base offset) of its last few batches.
    recent: Vec<(i32, i32, i64)>,
}

/// Why a topic name is refused, if it is.
pub fn check_topic_name(name: &str) -> Result<(), i16> {
    let legal = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty()
        || name.len() > 249
        || name == "."
        || name == ".."
        || !name.chars().all(legal)
    {
        Err(errors::INVALID_TOPIC)
    } else {
        Ok(())
    }
}

impl Log {
    /// The topic called `name`.
    pub fn topic(&self, name: &str) -> Option<&Topic> {
        self.topics.get(name)
    }

    /// The name and topic whose id is `id`.
    pub fn topic_by_id(&self, id: Uuid) -> Option<(&str, &Topic)> {
        let name = self.names_by_id.get(&id)?;
        Some((name.as_str(), self.topics.get(name)?))
    }

    /// Every topic name, sorted.
    pub fn topic_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.topics.keys().cloned().collect();
        names.sort();
        names
    }

    /// Creates a topic with `partitions` partitions.
    pub fn create(&mut self, name: &str, partitions: i32) -> Result<&Topic, i16> {
        check_topic_name(name)?;
        if self.topics.contains_key(name) {
            return Err(errors::TOPIC_ALREADY_EXISTS);
        }
        let count = usize::try_from(partitions)
            .ok()
            .filter(|n| (1..=10_000).contains(n))
            .ok_or(errors::INVALID_PARTITIONS)?;
        self.created += 1;
        let mut id = topic_id(name, self.created);
        // Ids are hashes: on the rare collision, derive another.
        while id == Uuid::ZERO || self.names_by_id.contains_key(&id) {
            self.created += 1;
            id = topic_id(name, self.created);
        }
        let topic = Topic {
            id,
            partitions: (0..count).map(|_| Partition::default()).collect(),
        };
        self.names_by_id.insert(id, name.to_owned());
        Ok(self.topics.entry(name.to_owned()).or_insert(topic))
    }

    /// Deletes a topic, by name or (when `name` is `None`) by id; returns
    /// the name and id it had.
    pub fn delete(&mut self, name: Option<&str>, id: Uuid) -> Result<(String, Uuid), i16> {
        let name = match name {
            Some(name) => name.to_owned(),
            None => self
                .names_by_id
                .get(&id)
                .cloned()
                .ok_or(errors::UNKNOWN_TOPIC_ID)?,
        };
        let topic = self
            .topics
            .remove(&name)
            .ok_or(errors::UNKNOWN_TOPIC_OR_PARTITION)?;
        self.names_by_id.remove(&topic.id);
        Ok((name, topic.id))
    }

    /// A partition to append to or read from.
    pub fn partition_mut(&mut self, topic: &str, index: i32) -> Option<&mut Partition> {
        let topic = self.topics.get_mut(topic)?;
        topic.partitions.get_mut(usize::try_from(index).ok()?)
    }
}

/// A non-zero id derived from the name and creation order (FNV-1a), so that
/// runs are reproducible.
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

impl Topic {
    /// A partition by index.
    pub fn partition(&self, index: i32) -> Option<&Partition> {
        self.partitions.get(usize::try_from(index).ok()?)
    }

    /// The number of partitions, as Kafka counts them.
    pub fn partition_count(&self) -> i32 {
        i32::try_from(self.partitions.len()).unwrap_or(i32::MAX)
    }
}

impl Partition {
    /// The offset the next record gets: the high watermark.
    pub fn high_watermark(&self) -> i64 {
        self.next_offset
    }

    /// The first offset (nothing is ever deleted).
    pub fn log_start_offset(&self) -> i64 {
        0
    }

    /// Appends a partition's batches of a Produce request, checked by
    /// [`crate::validate::check_partition`] against `records`. Returns the
    /// base offset of the first batch, which for a retried idempotent batch
    /// is the offset it got the first time.
    pub fn append(&mut self, records: &[u8], batches: &[CheckedBatch]) -> Result<i64, i16> {
        let mut first_offset = None;
        for CheckedBatch { header, range } in batches {
            let bytes = records.get(range.clone()).ok_or(errors::CORRUPT_MESSAGE)?;
            let offset = match self.check_sequence(header) {
                Sequence::Duplicate(offset) => offset,
                Sequence::Append => {
                    let base_offset = self.next_offset;
                    let mut bytes = bytes.to_vec();
                    // The CRC covers the attributes onwards, so rewriting the
                    // base offset leaves the batch valid.
                    bytes[..8].copy_from_slice(&base_offset.to_be_bytes());
                    // Checked: 0 <= last_offset_delta = record count - 1.
                    let last_offset = base_offset + i64::from(header.last_offset_delta.max(0));
                    self.batches.push(StoredBatch {
                        base_offset,
                        last_offset,
                        max_timestamp: header.max_timestamp,
                        bytes,
                    });
                    self.next_offset = last_offset + 1;
                    self.remember_sequence(header, base_offset);
                    base_offset
                }
                Sequence::Reject(code) => return Err(code),
            };
            first_offset.get_or_insert(offset);
        }
        Ok(first_offset.unwrap_or(self.next_offset))
    }

    /// Stored batches holding offsets from `offset` on, up to `max_bytes`.
    /// With `at_least_one`, the first batch is returned even when it is
    /// larger, as Kafka does for the first partition of a Fetch with data,
    /// so that a large batch still gets through. Errors with
    /// OFFSET_OUT_OF_RANGE past the high watermark.
    pub fn read(&self, offset: i64, max_bytes: usize, at_least_one: bool) -> Result<Vec<u8>, i16> {
        if offset < self.log_start_offset() || offset > self.next_offset {
            return Err(errors::OFFSET_OUT_OF_RANGE);
        }
        let first = self.batches.partition_point(|b| b.last_offset < offset);
        let mut out = Vec::new();
        for batch in &self.batches[first..] {
            let fits = out.len() + batch.bytes.len() <= max_bytes;
            let first_of_many = at_least_one && out.is_empty();
            if !fits && !first_of_many {
                break;
            }
            out.extend_from_slice(&batch.bytes);
        }
        Ok(out)
    }

    /// The offset of the first batch whose max timestamp is at least
    /// `timestamp`, with that timestamp (ListOffsets by time).
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Option<(i64, i64)> {
        self.batches
            .iter()
            .find(|b| b.max_timestamp >= timestamp)
            .map(|b| (b.max_timestamp, b.base_offset))
    }

    /// The batch with the largest timestamp: (timestamp, base offset).
    pub fn max_timestamp(&self) -> Option<(i64, i64)> {
        self.batches
            .iter()
            .max_by_key(|b| b.max_timestamp)
            .map(|b| (b.max_timestamp, b.base_offset))
    }

    fn check_sequence(&self, header: &BatchHeader) -> Sequence {
        if header.producer_id < 0 {
            return Sequence::Append;
        }
        let Some(state) = self.producers.get(&header.producer_id) else {
            return Sequence::Append;
        };
        if header.producer_epoch != state.epoch {
            return Sequence::Append; // a new epoch restarts sequences
        }
        if let Some(&(_, _, offset)) = state
            .recent
            .iter()
            .find(|(base, _, _)| *base == header.base_sequence)
        {
            return Sequence::Duplicate(offset);
        }
        let expected = state
            .recent
            .last()
            .map_or(0, |(_, last, _)| last.wrapping_add(1));
        if header.base_sequence == expected {
            Sequence::Append
        } else if header.base_sequence < expected {
            Sequence::Reject(errors::DUPLICATE_SEQUENCE)
        } else {
            Sequence::Reject(errors::OUT_OF_ORDER_SEQUENCE)
        }
    }

    fn remember_sequence(&mut self, header: &BatchHeader, offset: i64) {
        if header.producer_id < 0 {
            return;
        }
        let state = self
            .producers
            .entry(header.producer_id)
            .or_insert(ProducerState {
                epoch: header.producer_epoch,
                recent: Vec::new(),
            });
        if state.epoch != header.producer_epoch {
            state.epoch = header.producer_epoch;
            state.recent.clear();
        }
        let last = header.base_sequence.wrapping_add(header.last_offset_delta);
        state.recent.push((header.base_sequence, last, offset));
        // Kafka keeps the last five batches of each producer.
        if state.recent.len() > 5 {
            state.recent.remove(0);
        }
    }
}

/// What to do with a batch, given its producer's sequence numbers.
enum Sequence {
    Append,
    Duplicate(i64),
    Reject(i16),
}
