//! One partition's log: stored record batches in offset order, with the
//! log start offset and the high watermark.

use std::collections::VecDeque;

use kafka_wire::ErrorCode;
use kafka_wire_records::{DecodeOptions, RecordBatch};

/// A stored batch.
#[derive(Debug, Clone)]
pub struct StoredBatch {
    /// Its first offset.
    pub base_offset: i64,
    /// Its last offset.
    pub last_offset: i64,
    /// Its largest timestamp.
    pub max_timestamp: i64,
    /// The bytes, with the assigned base offset written in.
    pub bytes: Vec<u8>,
}

/// When a log rolls a new segment, as Kafka rolls one: the topic's
/// `segment.ms` and `segment.bytes`.
#[derive(Debug, Clone, Copy)]
pub struct Roll {
    /// `segment.ms`: how far past its first batch's timestamp a batch's
    /// timestamp starts a new segment.
    pub ms: i64,
    /// `segment.bytes`: how large a segment may grow.
    pub bytes: usize,
}

impl Default for Roll {
    /// Kafka's defaults: seven days, 1 GiB.
    fn default() -> Self {
        Roll {
            ms: 7 * 24 * 60 * 60 * 1000,
            bytes: 1 << 30,
        }
    }
}

/// A partition's log.
#[derive(Debug, Default)]
pub struct Log {
    batches: VecDeque<StoredBatch>,
    start_offset: i64,
    next_offset: i64,
    bytes: usize,
    /// Where each segment after the first begins. A consumer's fetch reads
    /// one segment, as Kafka's does.
    segment_starts: VecDeque<i64>,
    /// The active segment's first batch's max timestamp (from which Kafka
    /// times a roll), and its bytes.
    active_first_timestamp: Option<i64>,
    active_bytes: usize,
}

/// What a fetch read: the batches' bytes, and the offset after them (the
/// next batch's base offset, the next segment's or the log end offset),
/// up to which Kafka lists aborted transactions.
#[derive(Debug, Default)]
pub struct Read {
    /// The batches.
    pub bytes: Vec<u8>,
    /// The offset after them.
    pub next: i64,
}

impl Log {
    /// The offset the next record gets: the high watermark (replicas are
    /// always in sync, so it is also the log end offset).
    pub fn high_watermark(&self) -> i64 {
        self.next_offset
    }

    /// The first offset still held.
    pub fn log_start_offset(&self) -> i64 {
        self.start_offset
    }

    /// The bytes held.
    pub fn size(&self) -> usize {
        self.bytes
    }

    /// Appends a batch whose base offset has been written into `bytes`,
    /// first rolling a new segment as Kafka would: when the active one is
    /// not empty and the batch would take it past `roll.bytes`, or the
    /// batch's timestamp is more than `roll.ms` past the segment's first
    /// batch's.
    pub fn push(&mut self, batch: StoredBatch, roll: Roll) {
        let waited = self
            .active_first_timestamp
            .filter(|first| *first >= 0)
            .map_or(0, |first| batch.max_timestamp.saturating_sub(first));
        let full = self.active_bytes > roll.bytes.saturating_sub(batch.bytes.len());
        if self.active_bytes > 0 && (full || waited > roll.ms) {
            self.segment_starts.push_back(batch.base_offset);
            self.active_bytes = 0;
            self.active_first_timestamp = None;
        }
        self.active_first_timestamp
            .get_or_insert(batch.max_timestamp);
        self.active_bytes += batch.bytes.len();
        self.next_offset = batch.last_offset + 1;
        self.bytes += batch.bytes.len();
        self.batches.push_back(batch);
    }

    /// Drops the oldest batch if it starts at `base_offset`; the bytes
    /// freed.
    pub fn drop_oldest(&mut self, base_offset: i64) -> usize {
        if self.batches.front().map(|b| b.base_offset) != Some(base_offset) {
            return 0;
        }
        let Some(batch) = self.batches.pop_front() else {
            return 0;
        };
        self.bytes -= batch.bytes.len();
        self.start_offset = self.start_offset.max(batch.last_offset + 1);
        self.forget_segments();
        batch.bytes.len()
    }

    /// Moves the log start offset to `offset` (DeleteRecords), dropping
    /// the batches wholly before it; the bytes freed.
    pub fn delete_before(&mut self, offset: i64) -> Result<usize, i16> {
        if offset < 0 || offset > self.next_offset {
            return Err(ErrorCode::OffsetOutOfRange.code());
        }
        let mut freed = 0;
        while self.batches.front().is_some_and(|b| b.last_offset < offset) {
            if let Some(batch) = self.batches.pop_front() {
                freed += batch.bytes.len();
            }
        }
        self.bytes -= freed;
        self.start_offset = self.start_offset.max(offset);
        self.forget_segments();
        Ok(freed)
    }

    /// Forgets the segments that hold no batch any more.
    fn forget_segments(&mut self) {
        let first = self
            .batches
            .front()
            .map_or(self.next_offset, |b| b.base_offset);
        while self.segment_starts.front().is_some_and(|s| *s <= first) {
            self.segment_starts.pop_front();
        }
        if self.batches.is_empty() {
            self.active_bytes = 0;
            self.active_first_timestamp = None;
        }
    }

    /// Whether `offset` can be read (log start to high watermark).
    pub fn in_range(&self, offset: i64) -> bool {
        (self.start_offset..=self.next_offset).contains(&offset)
    }

    /// The batches holding offsets from `offset` on that fit in
    /// `max_bytes`, sized before anything is copied; with `at_least_one`
    /// the first batch comes even when larger, as Kafka gives it so that a
    /// large batch still gets through. Errors with OFFSET_OUT_OF_RANGE
    /// outside the log.
    ///
    /// Only batches starting before `until` come (the last stable offset of
    /// a `read_committed` read, else `i64::MAX`).
    pub fn read(
        &self,
        offset: i64,
        until: i64,
        max_bytes: usize,
        at_least_one: bool,
    ) -> Result<Vec<u8>, i16> {
        self.read_to(offset, until, max_bytes, at_least_one, false)
            .map(|read| read.bytes)
    }

    /// A consumer's or follower's read: as [`read`](Self::read), within
    /// the segment of the first batch read, as Kafka reads one segment a
    /// fetch.
    pub fn fetch(
        &self,
        offset: i64,
        until: i64,
        max_bytes: usize,
        at_least_one: bool,
    ) -> Result<Read, i16> {
        self.read_to(offset, until, max_bytes, at_least_one, true)
    }

    fn read_to(
        &self,
        offset: i64,
        until: i64,
        max_bytes: usize,
        at_least_one: bool,
        one_segment: bool,
    ) -> Result<Read, i16> {
        if !self.in_range(offset) {
            return Err(ErrorCode::OffsetOutOfRange.code());
        }
        let first = self.batches.partition_point(|b| b.last_offset < offset);
        let segment_end = match self.batches.get(first) {
            Some(b) if one_segment => self
                .segment_starts
                .iter()
                .find(|s| **s > b.base_offset)
                .copied()
                .unwrap_or(i64::MAX),
            _ => i64::MAX,
        };
        let until = until.min(segment_end);
        let mut size = 0usize;
        let mut end = first;
        for batch in self.batches.range(first..) {
            if batch.base_offset >= until {
                break;
            }
            let next = size.saturating_add(batch.bytes.len());
            if next > max_bytes && !(at_least_one && end == first) {
                break;
            }
            size = next;
            end += 1;
        }
        let mut bytes = Vec::with_capacity(size);
        for batch in self.batches.range(first..end) {
            bytes.extend_from_slice(&batch.bytes);
        }
        let next = self
            .batches
            .get(end)
            .map_or(self.next_offset, |b| b.base_offset.min(segment_end));
        Ok(Read { bytes, next })
    }

    /// How many record bytes a read from `offset` of batches starting
    /// before `until` could return, without copying (for a Fetch's
    /// min_bytes).
    pub fn available(&self, offset: i64, until: i64) -> usize {
        let first = self.batches.partition_point(|b| b.last_offset < offset);
        self.batches
            .range(first..)
            .take_while(|b| b.base_offset < until)
            .map(|b| b.bytes.len())
            .sum()
    }

    /// The first record from the log start on whose timestamp is at least
    /// `timestamp`, as Kafka searches: the first batch whose max timestamp
    /// reaches it, then that batch's records in turn.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Option<Found> {
        self.batches
            .iter()
            .filter(|b| b.max_timestamp >= timestamp && b.last_offset >= self.start_offset)
            .find_map(|b| {
                b.first_record(|offset, ts| ts >= timestamp && offset >= self.start_offset)
            })
    }

    /// The first record holding the log's largest timestamp: the first
    /// batch with the largest max timestamp, and in it the first record
    /// with that timestamp (every record of a log-append-time batch has
    /// it).
    pub fn max_timestamp(&self) -> Option<Found> {
        let mut best: Option<&StoredBatch> = None;
        for batch in &self.batches {
            if best.is_none_or(|b| batch.max_timestamp > b.max_timestamp) {
                best = Some(batch);
            }
        }
        best.and_then(|b| b.first_record(|_, ts| ts == b.max_timestamp))
    }
}

/// A record found by time: its timestamp, its offset and the leader epoch
/// of its batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// The record's timestamp.
    pub timestamp: i64,
    /// The record's offset.
    pub offset: i64,
    /// Its batch's partition leader epoch.
    pub leader_epoch: i32,
}

impl StoredBatch {
    /// The partition leader epoch written in the batch.
    fn leader_epoch(&self) -> i32 {
        self.bytes
            .get(12..16)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map_or(-1, i32::from_be_bytes)
    }

    /// The first of the batch's records that `wanted` takes (by offset and
    /// timestamp). A batch the fake cannot decode (it checked it on the
    /// way in) answers its base offset and max timestamp.
    fn first_record(&self, wanted: impl Fn(i64, i64) -> bool) -> Option<Found> {
        let leader_epoch = self.leader_epoch();
        let found = |offset, timestamp| Found {
            timestamp,
            offset,
            leader_epoch,
        };
        let Ok((batch, _)) = RecordBatch::decode(&self.bytes, &DecodeOptions::default()) else {
            return Some(found(self.base_offset, self.max_timestamp));
        };
        batch
            .records()
            .map_while(Result::ok)
            .find(|r| wanted(r.offset, r.timestamp))
            .map(|r| found(r.offset, r.timestamp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(base: i64, count: i64, size: usize) -> StoredBatch {
        StoredBatch {
            base_offset: base,
            last_offset: base + count - 1,
            max_timestamp: base,
            bytes: vec![0; size],
        }
    }

    #[test]
    fn reads_are_sized_before_copying() {
        let mut log = Log::default();
        log.push(batch(0, 2, 100), Roll::default());
        log.push(batch(2, 2, 100), Roll::default());
        assert_eq!(log.read(0, i64::MAX, 150, false).map(|v| v.len()), Ok(100));
        assert_eq!(log.read(0, i64::MAX, 50, false).map(|v| v.len()), Ok(0));
        assert_eq!(log.read(0, i64::MAX, 50, true).map(|v| v.len()), Ok(100));
        assert_eq!(log.read(3, i64::MAX, 1000, false).map(|v| v.len()), Ok(100));
        assert_eq!(log.read(4, i64::MAX, 1000, false).map(|v| v.len()), Ok(0));
        assert_eq!(
            log.read(5, i64::MAX, 1000, false),
            Err(ErrorCode::OffsetOutOfRange.code())
        );
    }

    #[test]
    fn deleting_moves_the_start() {
        let mut log = Log::default();
        log.push(batch(0, 2, 100), Roll::default());
        log.push(batch(2, 2, 100), Roll::default());
        assert_eq!(log.delete_before(3), Ok(100));
        assert_eq!(log.log_start_offset(), 3);
        assert!(log.read(1, i64::MAX, 1000, true).is_err());
        assert_eq!(log.drop_oldest(0), 0);
        assert_eq!(log.drop_oldest(2), 100);
        assert_eq!(log.log_start_offset(), 4);
        assert_eq!(log.size(), 0);
    }
}
