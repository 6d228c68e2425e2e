//! The request recorder: a bounded ring of what reached `dispatch`, off
//! until a test turns it on.

use std::collections::VecDeque;

use kafka_wire::ApiKey;

/// One request as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordedRequest {
    /// Its API.
    pub api: ApiKey,
    /// Its version.
    pub version: i16,
    /// The broker it reached.
    pub broker: i32,
    /// The connection it came on (numbered across the cluster).
    pub connection: u64,
}

/// The most requests a recorder may be asked to keep.
pub const MAX_RECORDED: usize = 1_000_000;

/// A ring of the last `capacity` requests.
#[derive(Debug)]
pub(crate) struct Ring {
    capacity: usize,
    entries: VecDeque<RecordedRequest>,
}

impl Ring {
    /// An empty ring keeping at most `capacity` (1 to [`MAX_RECORDED`]).
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.clamp(1, MAX_RECORDED);
        Ring {
            capacity,
            entries: VecDeque::with_capacity(capacity.min(1024)),
        }
    }

    /// Adds one, dropping the oldest when full.
    pub(crate) fn push(&mut self, entry: RecordedRequest) {
        if self.entries.len() == self.capacity {
            self.entries.pop_front();
        }
        self.entries.push_back(entry);
    }

    /// What it holds, oldest first.
    pub(crate) fn entries(&self) -> Vec<RecordedRequest> {
        self.entries.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_last_entries() {
        let mut ring = Ring::new(3);
        for connection in 0..10 {
            ring.push(RecordedRequest {
                api: ApiKey::Metadata,
                version: 12,
                broker: 0,
                connection,
            });
        }
        let kept: Vec<u64> = ring.entries().iter().map(|r| r.connection).collect();
        assert_eq!(kept, [7, 8, 9]);
    }
}
