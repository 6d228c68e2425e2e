//! Faults on command: controls a test (or `kafka-protocol fake
//! --fault`/`--control`) applies to a running cluster.
//!
//! - [`intercept`]: request controls, checked in
//!   [`dispatch`](crate::dispatch::dispatch) before a request is routed:
//!   answer with an error, answer with a built response, delay, hang, drop
//!   the connection before or after handling, or just observe.
//! - [`record`]: a bounded ring of the requests that arrived (off by
//!   default).
//! - [`change`]: changes to the cluster: leaders (with leader epochs),
//!   coordinators, brokers stopped, started, added and removed, a
//!   round-trip delay per broker, version caps.
//! - [`spec`]: the `--fault` grammar, and running parsed faults.
//! - [`command`]: the `--control` JSON commands.
//!
//! Every fault that fires is counted by kind ([`FaultKind`]); every random
//! draw comes from one generator seeded with [`FakeCluster::seed`].
//!
//! [`FakeCluster::seed`]: crate::FakeCluster::seed

pub mod change;
pub mod command;
pub mod spec;

mod control_error;
pub mod errors;
mod handle;
pub(crate) mod hook;
pub mod intercept;
pub(crate) mod lifecycle;
pub mod record;
mod run;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, RwLock};
use std::time::Duration;

use kafka_wire::RequestBody;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use control_error::ControlError;
pub use intercept::{Action, Intercept, Predicate, Responder};
pub use record::{RecordedRequest, MAX_RECORDED};
pub use spec::{ClusterOperation, FaultSpec, RequestAction, RequestFault, SpecError};

use crate::address::BrokerAddress;
use record::Ring;
use run::BrokerRun;

/// The id of a request control, to remove it or read its hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ControlId(pub u64);

/// A kind of fault, as counted and printed (`faults error=3,...`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// A request answered with an error.
    Error,
    /// A request delayed.
    Delay,
    /// A request never answered.
    Hang,
    /// A connection closed before handling a request.
    DropBefore,
    /// A connection closed after handling a request.
    DropAfter,
    /// Leaders moved (one partition's, or all).
    MoveLeaders,
    /// A coordinator moved (one key's, or all).
    MoveCoordinator,
    /// A broker stopped.
    StopBroker,
    /// A broker stopped and started again at once.
    RestartBroker,
}

impl FaultKind {
    /// Every kind, in the order printed.
    pub const ALL: [FaultKind; 9] = [
        FaultKind::Error,
        FaultKind::Delay,
        FaultKind::Hang,
        FaultKind::DropBefore,
        FaultKind::DropAfter,
        FaultKind::MoveLeaders,
        FaultKind::MoveCoordinator,
        FaultKind::StopBroker,
        FaultKind::RestartBroker,
    ];

    /// Its name, as in the `--fault` grammar.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Error => "error",
            FaultKind::Delay => "delay",
            FaultKind::Hang => "hang",
            FaultKind::DropBefore => "drop-before",
            FaultKind::DropAfter => "drop-after",
            FaultKind::MoveLeaders => "move-leaders",
            FaultKind::MoveCoordinator => "move-coordinator",
            FaultKind::StopBroker => "stop-broker",
            FaultKind::RestartBroker => "restart-broker",
        }
    }

    fn index(self) -> usize {
        Self::ALL.iter().position(|k| *k == self).unwrap_or(0)
    }
}

/// The faults injected so far, by kind, and what the drop-after faults
/// cost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// Every kind's count, in [`FaultKind::ALL`]'s order.
    pub kinds: Vec<(FaultKind, u64)>,
    /// The records of the Produce requests that a drop-after fault let
    /// take effect and then dropped the answer of (the records of the
    /// partitions handled without an error): a producer that retries them
    /// without idempotence writes exactly these again.
    pub dropped_answer_records: u64,
}

impl FaultCounts {
    /// The count of one kind.
    pub fn get(&self, kind: FaultKind) -> u64 {
        self.kinds
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(0, |(_, n)| *n)
    }
}

impl std::fmt::Display for FaultCounts {
    /// `faults error=2,delay=0,...,drop-after-records=0`: every kind, in
    /// [`FaultKind::ALL`]'s order, then the records of the Produce answers
    /// dropped.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("faults ")?;
        for kind in FaultKind::ALL {
            write!(f, "{}={},", kind.name(), self.get(kind))?;
        }
        write!(
            f,
            "{}={}",
            DROPPED_ANSWER_RECORDS, self.dropped_answer_records
        )
    }
}

/// The name of [`FaultCounts::dropped_answer_records`] in the `faults`
/// line and the `counts` command.
pub const DROPPED_ANSWER_RECORDS: &str = "drop-after-records";

/// A broker the cluster has (running or stopped).
#[derive(Debug, Clone)]
pub(crate) struct Member {
    /// How clients are told of it.
    pub(crate) address: BrokerAddress,
    /// The host it listens on.
    pub(crate) listen_host: String,
    /// The port it listens on.
    pub(crate) listen_port: u16,
    pub(crate) up: bool,
}

/// A request control as installed.
#[derive(Debug)]
struct Entry {
    id: ControlId,
    intercept: Intercept,
    left: Option<u64>,
    hits: u64,
}

/// The most request controls installed at once.
pub const MAX_CONTROLS: usize = 10_000;

/// The controls' state, one per cluster (in
/// [`Shared`](crate::state::Shared)). Every part has its own lock, held
/// briefly and never across an `.await`.
#[derive(Debug)]
pub struct Controls {
    entries: Mutex<Vec<Entry>>,
    /// Hits of removed-by-exhaustion controls, so they can still be read.
    spent: Mutex<HashMap<ControlId, u64>>,
    next_id: AtomicU64,
    recorder: Mutex<Option<Ring>>,
    rng: Mutex<u64>,
    counts: [AtomicU64; 9],
    dropped_answer_records: AtomicU64,
    pub(crate) members: RwLock<Vec<Member>>,
    pub(crate) coordinators: Mutex<HashMap<String, i32>>,
    pub(crate) coordinator_shift: AtomicUsize,
    rtt: Mutex<BTreeMap<i32, Duration>>,
    caps: RwLock<BTreeMap<i16, i16>>,
    pub(crate) runs: Mutex<BTreeMap<i32, BrokerRun>>,
    pub(crate) background: Mutex<Vec<JoinHandle<()>>>,
    pub(crate) cluster_stop: Mutex<Option<watch::Receiver<bool>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Controls {
    /// Controls for a cluster of `brokers` with these version caps.
    pub(crate) fn new(brokers: Vec<Member>, caps: BTreeMap<i16, i16>) -> Self {
        Controls {
            entries: Mutex::new(Vec::new()),
            spent: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            recorder: Mutex::new(None),
            rng: Mutex::new(0),
            counts: Default::default(),
            dropped_answer_records: AtomicU64::new(0),
            members: RwLock::new(brokers),
            coordinators: Mutex::new(HashMap::new()),
            coordinator_shift: AtomicUsize::new(0),
            rtt: Mutex::new(BTreeMap::new()),
            caps: RwLock::new(caps),
            runs: Mutex::new(BTreeMap::new()),
            background: Mutex::new(Vec::new()),
            cluster_stop: Mutex::new(None),
        }
    }

    /// Every member, running or not, in node-id order.
    pub(crate) fn members(&self) -> Vec<Member> {
        self.members
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The running brokers, in node-id order.
    pub fn live(&self) -> Vec<BrokerAddress> {
        self.members
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|m| m.up)
            .map(|m| m.address.clone())
            .collect()
    }

    pub(crate) fn moved_coordinator(&self, key: &str) -> Option<i32> {
        lock(&self.coordinators).get(key).copied()
    }

    pub(crate) fn coordinator_shift(&self) -> usize {
        self.coordinator_shift.load(Ordering::Relaxed)
    }

    /// The version caps in force (api key to greatest version).
    pub fn caps(&self) -> BTreeMap<i16, i16> {
        self.caps.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn set_cap(&self, api: i16, version: Option<i16>) {
        let mut caps = self.caps.write().unwrap_or_else(|p| p.into_inner());
        match version {
            Some(v) => caps.insert(api, v),
            None => caps.remove(&api),
        };
    }

    pub(crate) fn set_rtt(&self, node_id: i32, rtt: Duration) {
        let mut map = lock(&self.rtt);
        if rtt.is_zero() {
            map.remove(&node_id);
        } else {
            map.insert(node_id, rtt);
        }
    }

    /// Reseeds the generator.
    pub(crate) fn seed(&self, seed: u64) {
        *lock(&self.rng) = seed;
    }

    /// The next draw of the generator (splitmix64).
    pub(crate) fn next_u64(&self) -> u64 {
        let mut state = lock(&self.rng);
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(*state)
    }

    /// A draw in `0.0..1.0`.
    pub(crate) fn next_f64(&self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Counts one fault.
    pub(crate) fn count(&self, kind: FaultKind) {
        self.counts[kind.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// The faults counted so far.
    pub fn counts(&self) -> FaultCounts {
        FaultCounts {
            kinds: FaultKind::ALL
                .iter()
                .map(|k| (*k, self.counts[k.index()].load(Ordering::Relaxed)))
                .collect(),
            dropped_answer_records: self.dropped_answer_records.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn add(&self, intercept: Intercept) -> Result<ControlId, ControlError> {
        let mut entries = lock(&self.entries);
        if entries.len() >= MAX_CONTROLS {
            return Err(ControlError::TooMany(MAX_CONTROLS));
        }
        let id = ControlId(self.next_id.fetch_add(1, Ordering::Relaxed));
        entries.push(Entry {
            id,
            left: intercept.times,
            intercept,
            hits: 0,
        });
        Ok(id)
    }

    pub(crate) fn remove(&self, id: ControlId) -> bool {
        let mut entries = lock(&self.entries);
        let before = entries.len();
        entries.retain(|e| e.id != id);
        lock(&self.spent).remove(&id);
        entries.len() != before
    }

    pub(crate) fn clear(&self) {
        lock(&self.entries).clear();
        lock(&self.spent).clear();
    }

    pub(crate) fn hits(&self, id: ControlId) -> Option<u64> {
        lock(&self.entries)
            .iter()
            .find(|e| e.id == id)
            .map(|e| e.hits)
            .or_else(|| lock(&self.spent).get(&id).copied())
    }

    pub(crate) fn record_requests(&self, capacity: Option<usize>) {
        *lock(&self.recorder) = capacity.map(Ring::new);
    }

    pub(crate) fn recorded(&self) -> Vec<RecordedRequest> {
        lock(&self.recorder)
            .as_ref()
            .map_or_else(Vec::new, Ring::entries)
    }

    /// The action of the first control that matches `body` (which reached
    /// broker `node_id` on `connection`) and fires, counting the hit and
    /// retiring a control whose times are spent.
    fn fire(&self, node_id: i32, connection: u64, body: &RequestBody<'_>) -> Option<Action> {
        let api = body.api_key();
        let mut entries = lock(&self.entries);
        let mut fired = None;
        for (i, entry) in entries.iter_mut().enumerate() {
            if !entry.intercept.matches(api, node_id, connection, body) {
                continue;
            }
            if let Some(rate) = entry.intercept.rate {
                if self.next_f64() >= rate {
                    continue;
                }
            }
            entry.hits += 1;
            if let Some(left) = &mut entry.left {
                *left = left.saturating_sub(1);
            }
            fired = Some((i, entry.intercept.action.clone()));
            break;
        }
        let (i, action) = fired?;
        if entries.get(i).is_some_and(|e| e.left == Some(0)) {
            let entry = entries.remove(i);
            let mut spent = lock(&self.spent);
            if spent.len() >= MAX_CONTROLS {
                spent.clear();
            }
            spent.insert(entry.id, entry.hits);
        }
        Some(action)
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
