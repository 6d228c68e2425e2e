//! The cluster's state, shared by every broker and connection: topics and
//! their logs (with the byte budget), groups, producer ids, and each
//! broker's fetch sessions. One lock guards it; no guard is held across an
//! `.await`.

pub mod committed;
pub mod consumer_groups;
pub mod groups;
pub mod internal_topics;
pub mod log;
pub mod producers;
pub mod quotas;
pub mod sessions;
pub mod share_assignor;
pub mod share_groups;
pub mod streams_groups;
pub mod topics;
pub mod transactions;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, MutexGuard};

use tokio::sync::Notify;

pub use crate::address::BrokerAddress;
use crate::capture::Capture;
use crate::config::Config;
use crate::control::{Controls, Member};
use groups::Groups;
use sessions::Sessions;
use topics::{Placement, Topics};
use transactions::Transactions;

/// What the lock guards.
#[derive(Debug, Default)]
pub struct State {
    /// Topics and logs.
    pub topics: Topics,
    /// Classic groups and committed offsets.
    pub groups: Groups,
    /// Fetch sessions, by node id.
    pub sessions: BTreeMap<i32, Sessions>,
    /// Share groups, their partitions and sessions.
    pub share_groups: share_groups::ShareGroups,
    /// Transactional ids and their transactions.
    pub transactions: Transactions,
    /// Dynamic broker configs, by node id (-1: the cluster-wide defaults,
    /// which start as a fresh Kafka 4.4.0 cluster's).
    pub broker_configs: BTreeMap<i32, BTreeMap<String, String>>,
    /// Client quotas (AlterClientQuotas).
    pub quotas: quotas::Quotas,
}

/// Everything shared.
#[derive(Debug)]
pub struct Shared {
    /// The configuration.
    pub config: Config,
    /// The controls (faults on command), with the brokers: running,
    /// stopped, added.
    pub control: Controls,
    /// The frame recorder, when capturing.
    pub capture: Option<Capture>,
    /// The SASL users' secrets (none: no listener requires SASL).
    pub credentials: crate::sasl::Credentials,
    state: Mutex<State>,
    /// Woken on every append, so that waiting fetches look again.
    pub appended: Notify,
    next_producer_id: AtomicI64,
}

impl Shared {
    /// The shared state of a cluster of `brokers`, with the seed topics.
    pub(crate) fn new(config: Config, brokers: Vec<Member>, capture: Option<Capture>) -> Self {
        let mut state = State::default();
        let cluster_defaults = crate::config_table::table()
            .broker
            .entries()
            .iter()
            .filter_map(|e| Some((e.name.clone(), e.cluster_default.clone()?)))
            .collect();
        state.broker_configs.insert(-1, cluster_defaults);
        let nodes: Vec<i32> = brokers.iter().map(|b| b.address.node_id).collect();
        for spec in &config.topics {
            let _ = state.topics.create(
                &spec.name,
                spec.partitions,
                spec.configs.clone(),
                Placement {
                    nodes: &nodes,
                    replication_factor: nodes.len().min(3),
                    assigned: &[],
                },
            );
        }
        let control = Controls::new(brokers, config.version_caps.clone());
        Shared {
            credentials: crate::sasl::Credentials::new(&config.sasl_users),
            config,
            control,
            capture,
            state: Mutex::new(state),
            appended: Notify::new(),
            next_producer_id: AtomicI64::new(1000),
        }
    }

    /// The state. The guard must not be held across an `.await`.
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The running brokers, in node-id order.
    pub fn brokers(&self) -> Vec<BrokerAddress> {
        self.control.live()
    }

    /// Every running broker's node id.
    pub fn node_ids(&self) -> Vec<i32> {
        self.brokers().iter().map(|b| b.node_id).collect()
    }

    /// A running broker by node id.
    pub fn broker(&self, node_id: i32) -> Option<BrokerAddress> {
        self.brokers().into_iter().find(|b| b.node_id == node_id)
    }

    /// Where broker `node_id` listens (host, port), running or stopped;
    /// clients are told [`broker`](Self::broker)'s advertised address.
    pub fn listen_address(&self, node_id: i32) -> Option<(String, u16)> {
        self.control
            .members()
            .into_iter()
            .find(|m| m.address.node_id == node_id)
            .map(|m| (m.listen_host, m.listen_port))
    }

    /// The node coordinating `key` (a group or transactional id): where a
    /// control moved it, else as Kafka hashes it to a partition of
    /// `__consumer_offsets`, over the running brokers (shifted by the
    /// controls' moves of every coordinator).
    pub fn coordinator(&self, key: &str) -> i32 {
        let brokers = self.brokers();
        if let Some(node) = self.control.moved_coordinator(key) {
            if brokers.iter().any(|b| b.node_id == node) {
                return node;
            }
        }
        let hash = key
            .bytes()
            .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        let count = brokers.len().max(1);
        let shift = self.control.coordinator_shift();
        brokers
            .get((hash as usize).wrapping_add(shift) % count)
            .map_or(0, |b| b.node_id)
    }

    /// The controller (the first running broker).
    pub fn controller(&self) -> i32 {
        self.brokers().first().map_or(0, |b| b.node_id)
    }

    /// The version caps in force.
    pub fn version_caps(&self) -> BTreeMap<i16, i16> {
        self.control.caps()
    }

    /// A fresh producer id.
    pub fn next_producer_id(&self) -> i64 {
        self.next_producer_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The replication factor of a topic created without one (auto-created,
    /// or CreateTopics' -1): Kafka's `default.replication.factor`, 1.
    pub fn default_replication(&self) -> usize {
        1
    }
}
