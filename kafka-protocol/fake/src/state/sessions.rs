//! Fetch sessions (KIP-227): what each session's consumer fetches, so
//! that incremental requests name only what changed and responses carry
//! only partitions with news.

use std::collections::{BTreeMap, HashMap, VecDeque};

use kafka_wire::runtime::Uuid;
use kafka_wire::ErrorCode;

use crate::config::MAX_FETCH_SESSIONS;

/// A partition of a session: by topic id (v13+) or name, and index.
pub type SessionKey = (Uuid, String, i32);

/// What a session remembers of a partition.
#[derive(Debug, Clone, Default)]
pub struct SessionPartition {
    /// The next offset to read.
    pub fetch_offset: i64,
    /// The most bytes to read from it.
    pub max_bytes: i32,
    /// The high watermark last sent, to send it again only when it moved.
    pub last_high_watermark: Option<i64>,
    /// The log start offset last sent.
    pub last_log_start: Option<i64>,
}

/// One session.
#[derive(Debug, Default)]
pub struct Session {
    /// The epoch the next request must carry.
    pub next_epoch: i32,
    /// Its partitions.
    pub partitions: BTreeMap<SessionKey, SessionPartition>,
}

/// The sessions of one broker.
#[derive(Debug, Default)]
pub struct Sessions {
    by_id: HashMap<i32, Session>,
    order: VecDeque<i32>,
    next_id: i32,
}

impl Sessions {
    /// Opens a session; the oldest is evicted past the cap.
    pub fn open(&mut self) -> i32 {
        while self.by_id.len() >= MAX_FETCH_SESSIONS {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            self.by_id.remove(&old);
        }
        self.next_id = self.next_id.checked_add(1).unwrap_or(1).max(1);
        while self.by_id.contains_key(&self.next_id) {
            self.next_id = self.next_id.checked_add(1).unwrap_or(1).max(1);
        }
        let id = self.next_id;
        self.by_id.insert(
            id,
            Session {
                next_epoch: 1,
                partitions: BTreeMap::new(),
            },
        );
        self.order.push_back(id);
        id
    }

    /// Closes a session.
    pub fn close(&mut self, id: i32) {
        if self.by_id.remove(&id).is_some() {
            self.order.retain(|&other| other != id);
        }
    }

    /// The session for an incremental request at `epoch`, whose epoch is
    /// then advanced; FETCH_SESSION_ID_NOT_FOUND or
    /// INVALID_FETCH_SESSION_EPOCH otherwise.
    pub fn resume(&mut self, id: i32, epoch: i32) -> Result<&mut Session, i16> {
        let session = self
            .by_id
            .get_mut(&id)
            .ok_or(ErrorCode::FetchSessionIdNotFound.code())?;
        if session.next_epoch != epoch {
            return Err(ErrorCode::InvalidFetchSessionEpoch.code());
        }
        session.next_epoch = session.next_epoch.checked_add(1).unwrap_or(1);
        Ok(session)
    }

    /// A session, to update after a response.
    pub fn get_mut(&mut self, id: i32) -> Option<&mut Session> {
        self.by_id.get_mut(&id)
    }
}
