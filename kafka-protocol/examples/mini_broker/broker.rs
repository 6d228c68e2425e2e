//! The state every connection shares: configuration, the log, the groups.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::capture::Capture;
use crate::groups::Groups;
use crate::log::Log;

/// What the broker was started with.
pub struct Config {
    /// The address it listens on, advertised in Metadata and FindCoordinator.
    pub address: SocketAddr,
    /// Partitions of a topic created on demand.
    pub default_partitions: i32,
    /// The cluster id returned by Metadata.
    pub cluster_id: String,
    /// Most bytes the batches of one Produce request may decompress to,
    /// all batches together.
    pub produce_decompression_budget: usize,
    /// How long a connection may wait between frames, or take to finish
    /// sending one, before it is closed.
    pub idle_timeout: Duration,
    /// Most bytes a response may take; a larger one closes the connection
    /// before it is encoded.
    pub max_response_size: usize,
}

/// The broker: node 0, controller and group coordinator of its one-node
/// cluster.
pub struct Broker {
    /// The configuration.
    pub config: Config,
    /// Where frames are recorded, when `--capture` is given.
    pub capture: Option<Capture>,
    log: Mutex<Log>,
    groups: Arc<Mutex<Groups>>,
    /// Woken on every append, so that waiting fetches look again.
    pub appended: Notify,
    next_producer_id: AtomicI64,
}

/// This broker's node id.
pub const NODE_ID: i32 = 0;

impl Broker {
    /// A broker with an empty log and no groups.
    pub fn new(config: Config, capture: Option<Capture>) -> Self {
        Broker {
            config,
            capture,
            log: Mutex::new(Log::default()),
            groups: Arc::new(Mutex::new(Groups::default())),
            appended: Notify::new(),
            next_producer_id: AtomicI64::new(1000),
        }
    }

    /// The log. The guard must not be held across an `.await`.
    pub fn log(&self) -> MutexGuard<'_, Log> {
        self.log
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The groups. The guard must not be held across an `.await`.
    pub fn groups(&self) -> MutexGuard<'_, Groups> {
        self.groups
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A handle on the groups for a task that outlives the request, such as
    /// a rebalance timer.
    pub fn groups_handle(&self) -> Arc<Mutex<Groups>> {
        Arc::clone(&self.groups)
    }

    /// A fresh producer id for InitProducerId.
    pub fn next_producer_id(&self) -> i64 {
        self.next_producer_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The host advertised to clients.
    pub fn host(&self) -> String {
        self.config.address.ip().to_string()
    }

    /// The port advertised to clients.
    pub fn port(&self) -> i32 {
        i32::from(self.config.address.port())
    }

    /// Removes group members whose session has timed out.
    pub fn expire_group_members(&self) {
        self.groups().expire(Instant::now());
    }
}
