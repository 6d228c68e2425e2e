//! The controls on the [`FakeCluster`] handle.

use std::net::SocketAddr;
use std::time::Duration;

use kafka_wire::ApiKey;

use super::change;
use super::{ControlError, ControlId, FaultCounts, Intercept, RecordedRequest};
use crate::cluster::FakeCluster;

impl FakeCluster {
    /// Installs a request control; it applies to requests read from now
    /// on, on every connection. See [`Intercept`].
    pub fn intercept(&self, intercept: Intercept) -> Result<ControlId, ControlError> {
        self.shared().control.add(intercept)
    }

    /// Removes a request control; false if it was gone (removed, or its
    /// times spent).
    pub fn remove_intercept(&self, id: ControlId) -> bool {
        self.shared().control.remove(id)
    }

    /// Removes every request control.
    pub fn clear_intercepts(&self) {
        self.shared().control.clear();
    }

    /// How many requests a control fired on (also after its times are
    /// spent); `None` for an unknown or removed one.
    pub fn intercept_hits(&self, id: ControlId) -> Option<u64> {
        self.shared().control.hits(id)
    }

    /// Seeds the generator every random choice draws from (rates, delay
    /// ranges); 0 until set.
    pub fn seed(&self, seed: u64) {
        self.shared().control.seed(seed);
    }

    /// Starts recording requests (api, version, broker, connection) in a
    /// ring of the last `capacity` (at most
    /// [`MAX_RECORDED`](super::MAX_RECORDED)); restarts it when on.
    pub fn record_requests(&self, capacity: usize) {
        self.shared().control.record_requests(Some(capacity));
    }

    /// Stops recording and forgets what was recorded.
    pub fn stop_recording(&self) {
        self.shared().control.record_requests(None);
    }

    /// The requests recorded, oldest first.
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        self.shared().control.recorded()
    }

    /// The faults injected so far, by kind.
    pub fn fault_counts(&self) -> FaultCounts {
        self.shared().control.counts()
    }

    /// A partition's (leader, leader epoch).
    pub fn leader(&self, topic: &str, partition: i32) -> Option<(i32, i32)> {
        let state = self.shared().state();
        let p = state.topics.get(topic)?.partition(partition)?;
        Some((p.leader, p.leader_epoch))
    }

    /// Moves a partition's leader to `to` (or the next running broker),
    /// bumping its leader epoch; returns (leader, epoch). Requests to the
    /// old leader get NOT_LEADER_OR_FOLLOWER; a client behind the new
    /// epoch gets FENCED_LEADER_EPOCH, one ahead UNKNOWN_LEADER_EPOCH.
    pub fn move_leader(
        &self,
        topic: &str,
        partition: i32,
        to: Option<i32>,
    ) -> Result<(i32, i32), ControlError> {
        change::move_leader(self.shared(), topic, partition, to)
    }

    /// Moves every partition's leader to a running broker drawn with
    /// `seed`, bumping every epoch; returns the partitions moved.
    pub fn shuffle_leaders(&self, seed: u64) -> usize {
        change::shuffle_leaders(self.shared(), seed)
    }

    /// The broker coordinating a group or transactional id.
    pub fn coordinator(&self, key: &str) -> i32 {
        self.shared().coordinator(key)
    }

    /// Moves the coordinator of a group or transactional id to `to` (or
    /// the next running broker); the old one answers NOT_COORDINATOR.
    pub fn move_coordinator(&self, key: &str, to: Option<i32>) -> Result<i32, ControlError> {
        change::move_coordinator(self.shared(), key, to)
    }

    /// Moves every coordinator one running broker along.
    pub fn move_coordinators(&self) {
        change::move_coordinators(self.shared());
    }

    /// Stops a broker: its port refuses connections, its connections
    /// close, it leaves Metadata, and the partitions it led move to a
    /// running broker with an epoch bump.
    pub async fn stop_broker(&self, node_id: i32) -> Result<(), ControlError> {
        change::stop_broker(self.shared(), node_id).await
    }

    /// Starts a stopped broker again on its port; the data is the
    /// cluster's, so nothing is lost. Leadership stays where it moved.
    pub async fn start_broker(&self, node_id: i32) -> Result<SocketAddr, ControlError> {
        change::start_broker(self.shared(), node_id).await
    }

    /// Stops a broker and starts it again at once.
    pub async fn restart_broker(&self, node_id: i32) -> Result<(), ControlError> {
        change::restart_broker(self.shared(), node_id).await
    }

    /// Adds a broker on a free port of the cluster's host; returns its
    /// node id (one more than the greatest).
    pub async fn add_broker(&self) -> Result<i32, ControlError> {
        change::add_broker(self.shared()).await
    }

    /// Removes a broker for good (stopped first when running).
    pub async fn remove_broker(&self, node_id: i32) -> Result<(), ControlError> {
        change::remove_broker(self.shared(), node_id).await
    }

    /// Whether a broker is running; `None` for an unknown node id.
    pub fn broker_running(&self, node_id: i32) -> Option<bool> {
        self.shared()
            .control
            .members()
            .iter()
            .find(|m| m.address.node_id == node_id)
            .map(|m| m.up)
    }

    /// A broker's listening `host:port` (running or stopped).
    pub fn broker_address(&self, node_id: i32) -> Option<String> {
        self.shared()
            .control
            .members()
            .iter()
            .find(|m| m.address.node_id == node_id)
            .map(|m| crate::address::host_port(&m.listen_host, m.listen_port))
    }

    /// Delays every request to a broker by `rtt` before it is handled
    /// (zero removes the delay).
    pub fn set_rtt(&self, node_id: i32, rtt: Duration) {
        self.shared().control.set_rtt(node_id, rtt);
    }

    /// Caps the version of `api` advertised and served from now on
    /// (`None` lifts the cap set at run time or start).
    pub fn cap_version(&self, api: ApiKey, max: Option<i16>) {
        self.shared().control.set_cap(api.key(), max);
    }
}
