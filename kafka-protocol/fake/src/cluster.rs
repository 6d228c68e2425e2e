//! The builder and the handle of a running fake cluster.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kafka_wire::ApiKey;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::address::{host_port, BrokerAddress};
use crate::capture::Capture;
use crate::config::{Config, SaslMechanism, SaslUser, TopicSpec};
use crate::control::{lifecycle, Member};
use crate::error::Error;
use crate::state::Shared;

/// How often expired group members are looked for.
const EXPIRY_TICK: Duration = Duration::from_millis(250);

/// A running fake cluster. Dropping it stops every broker; [`shutdown`]
/// stops them and waits.
///
/// [`shutdown`]: FakeCluster::shutdown
#[derive(Debug)]
pub struct FakeCluster {
    shared: Arc<Shared>,
    addresses: Vec<SocketAddr>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

/// Sets up a [`FakeCluster`]; [`start`](Self::start) runs it.
#[derive(Debug, Clone, Default)]
pub struct FakeClusterBuilder {
    config: Config,
}

impl FakeCluster {
    /// A builder with the defaults: three brokers on 127.0.0.1, free
    /// ports, auto-creation on with one partition, a 1 GiB byte budget.
    pub fn builder() -> FakeClusterBuilder {
        FakeClusterBuilder::default()
    }

    /// Every broker's listening `host:port` in node-id order,
    /// comma-separated, as clients take bootstrap servers (IPv6 hosts in
    /// brackets). Brokers added at run time are included, stopped ones
    /// too. A broker advertised at another address
    /// ([`advertise`](FakeClusterBuilder::advertise)) is listed where it
    /// listens: a client that bootstraps here is then told the advertised
    /// addresses, as Kafka tells them.
    pub fn bootstrap(&self) -> String {
        self.shared
            .control
            .members()
            .iter()
            .map(|m| host_port(&m.listen_host, m.listen_port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Every broker's advertised `host:port` (where clients are told it
    /// is) in node-id order, comma-separated: the same as
    /// [`bootstrap`](Self::bootstrap) unless some broker is advertised
    /// elsewhere.
    pub fn advertised(&self) -> String {
        self.shared
            .control
            .members()
            .iter()
            .map(|m| host_port(&m.address.host, m.address.port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Every broker's listening address as started, in node-id order
    /// (see [`broker_address`](Self::broker_address) for brokers added
    /// later).
    pub fn addresses(&self) -> &[SocketAddr] {
        &self.addresses
    }

    /// Every node id, in order, running or stopped.
    pub fn node_ids(&self) -> Vec<i32> {
        self.shared
            .control
            .members()
            .iter()
            .map(|m| m.address.node_id)
            .collect()
    }

    /// The shared state, for the controls.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// Stops every broker (their connections are closed) and waits for
    /// them.
    pub async fn shutdown(mut self) -> Result<(), Error> {
        let _ = self.stop.send(true);
        lifecycle::shutdown(&self.shared).await;
        for task in std::mem::take(&mut self.tasks) {
            let _ = task.await;
        }
        Ok(())
    }
}

impl Drop for FakeCluster {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        for task in &self.tasks {
            task.abort();
        }
        lifecycle::abort(&self.shared);
    }
}

impl FakeClusterBuilder {
    /// The number of brokers (default 3), node ids 0 to n-1 unless
    /// [`node_ids`](Self::node_ids) chooses them.
    pub fn brokers(mut self, brokers: usize) -> Self {
        self.config.brokers = brokers;
        self
    }

    /// The node ids, one per broker in order (default 0 to n-1). Any
    /// distinct ids of 0 or more, as Kafka's `node.id` allows.
    pub fn node_ids(mut self, ids: impl IntoIterator<Item = i32>) -> Self {
        self.config.node_ids = ids.into_iter().collect();
        self
    }

    /// The host to listen on and advertise (default 127.0.0.1).
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.config.host = host.into();
        self
    }

    /// Tells clients that broker `node_id` is at `host:port` instead of
    /// where it listens, as Kafka's `advertised.listeners` does: in
    /// Metadata, FindCoordinator, DescribeCluster and the node endpoints
    /// of Produce and Fetch. For a broker behind a proxy or a port
    /// forward; the broker still listens on its own port.
    pub fn advertise(mut self, node_id: i32, host: impl Into<String>, port: u16) -> Self {
        self.config.advertised.insert(node_id, (host.into(), port));
        self
    }

    /// Broker `node_id`'s rack, as Kafka's `broker.rack`: given in
    /// Metadata, DescribeCluster and node endpoints (default none).
    pub fn rack(mut self, node_id: i32, rack: impl Into<String>) -> Self {
        self.config.racks.insert(node_id, rack.into());
        self
    }

    /// Fixed ports, one per broker in node-id order (default: free ones).
    pub fn ports(mut self, ports: impl IntoIterator<Item = u16>) -> Self {
        self.config.ports = ports.into_iter().collect();
        self
    }

    /// The cluster id.
    pub fn cluster_id(mut self, id: impl Into<String>) -> Self {
        self.config.cluster_id = id.into();
        self
    }

    /// A topic created at start.
    pub fn topic(mut self, topic: TopicSpec) -> Self {
        self.config.topics.push(topic);
        self
    }

    /// Whether Metadata creates unknown topics (default on).
    pub fn auto_create(mut self, on: bool) -> Self {
        self.config.auto_create = on;
        self
    }

    /// Partitions of topics created without a count (default 1).
    pub fn default_partitions(mut self, partitions: i32) -> Self {
        self.config.default_partitions = partitions;
        self
    }

    /// A SASL user (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512). With any,
    /// every listener requires SASL: before authenticating, a connection
    /// may only ask ApiVersions and SaslHandshake.
    pub fn sasl_user(
        mut self,
        mechanism: SaslMechanism,
        user: impl Into<String>,
        password: impl Into<String>,
    ) -> Self {
        self.config.sasl_users.push(SaslUser {
            mechanism,
            user: user.into(),
            password: password.into(),
        });
        self
    }

    /// Advertises `api` up to `version` at most.
    pub fn max_version(mut self, api: ApiKey, version: i16) -> Self {
        self.config.version_caps.insert(api.key(), version);
        self
    }

    /// The session timeouts group members may ask for (default 6 s to
    /// 30 min, as Kafka's).
    pub fn session_timeout_bounds(mut self, min: Duration, max: Duration) -> Self {
        self.config.min_session_timeout = min;
        self.config.max_session_timeout = max;
        self
    }

    /// The byte budget of all logs together (default 1 GiB): past it the
    /// oldest batches go, advancing log start offsets.
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.config.max_bytes = bytes;
        self
    }

    /// Connections each broker serves at once (default 1000).
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.config.max_connections = connections;
        self
    }

    /// How long a connection may go without a complete request (default
    /// 10 minutes).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.config.idle_timeout = timeout;
        self
    }

    /// The largest request read (default 100 MiB).
    pub fn max_request_size(mut self, bytes: usize) -> Self {
        self.config.max_request_size = bytes;
        self
    }

    /// Refuses, with OUT_OF_ORDER_SEQUENCE_NUMBER, a producer's first
    /// batch on a partition that has never held a record unless it starts
    /// at sequence 0, as Kafka 4.5 does (KAFKA-15591). Default off, as
    /// Kafka 4.4.0, which accepts any first sequence: there, an idempotent
    /// producer whose first batch meets a retriable error while its second
    /// is appended retries the first for ever, as OUT_OF_ORDER_SEQUENCE_NUMBER,
    /// until its delivery timeout fails it.
    pub fn first_sequence_from_zero(mut self, on: bool) -> Self {
        self.config.first_sequence_from_zero = on;
        self
    }

    /// How streams groups run (KIP-1071): session timeout, heartbeat
    /// interval, initial rebalance delay and the other `group.streams.*`
    /// settings (default Kafka 4.4.0's).
    pub fn streams_groups(mut self, config: crate::config::StreamsGroupConfig) -> Self {
        self.config.streams = config;
        self
    }

    /// Records every frame in `path`, one JSON line each.
    pub fn capture(mut self, path: impl Into<PathBuf>) -> Self {
        self.config.capture = Some(path.into());
        self
    }

    /// The configuration as set so far.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Checks the configuration.
    fn check(&self) -> Result<(), Error> {
        let c = &self.config;
        let bad = |why: &str| Err(Error::Config(why.into()));
        if c.brokers == 0 || c.brokers > 64 {
            return bad("brokers must be between 1 and 64");
        }
        if !c.ports.is_empty() && c.ports.len() != c.brokers {
            return bad("give one port per broker, or none");
        }
        if !c.node_ids.is_empty() && c.node_ids.len() != c.brokers {
            return bad("give one node id per broker, or none");
        }
        let ids = c.initial_node_ids();
        if ids.iter().any(|id| *id < 0) {
            return bad("node ids must be 0 or more");
        }
        if ids.iter().collect::<std::collections::BTreeSet<_>>().len() != ids.len() {
            return bad("node ids must differ");
        }
        for (node_id, (host, port)) in &c.advertised {
            if !ids.contains(node_id) {
                return Err(Error::Config(format!(
                    "advertised address for unknown node {node_id}"
                )));
            }
            if host.is_empty() || *port == 0 {
                return Err(Error::Config(format!(
                    "node {node_id}'s advertised address needs a host and a port"
                )));
            }
        }
        if let Some(node_id) = c.racks.keys().find(|id| !ids.contains(id)) {
            return Err(Error::Config(format!("rack for unknown node {node_id}")));
        }
        if c.default_partitions < 1 {
            return bad("default partitions must be positive");
        }
        if c.max_connections == 0 || c.max_request_size == 0 || c.max_bytes == 0 {
            return bad("limits must be positive");
        }
        if c.min_session_timeout > c.max_session_timeout {
            return bad("the least session timeout is above the greatest");
        }
        Ok(())
    }

    /// Binds every broker's listener and starts serving. Returns once all
    /// accept connections.
    pub async fn start(self) -> Result<FakeCluster, Error> {
        self.check()?;
        let config = self.config;
        let capture = match &config.capture {
            Some(path) => Some(Capture::create(path).map_err(|source| Error::Capture {
                path: path.display().to_string(),
                source,
            })?),
            None => None,
        };
        let mut listeners = Vec::new();
        let mut brokers = Vec::new();
        let mut addresses = Vec::new();
        for (node, node_id) in config.initial_node_ids().into_iter().enumerate() {
            let port = config.ports.get(node).copied().unwrap_or(0);
            let address = host_port(&config.host, port);
            let listener = TcpListener::bind(&address)
                .await
                .map_err(|source| Error::Bind { address, source })?;
            let local = listener.local_addr().map_err(Error::LocalAddress)?;
            let (host, port) = config
                .advertised
                .get(&node_id)
                .cloned()
                .unwrap_or_else(|| (config.host.clone(), local.port()));
            brokers.push(Member {
                address: BrokerAddress {
                    node_id,
                    host,
                    port,
                    rack: config.racks.get(&node_id).cloned(),
                },
                listen_host: config.host.clone(),
                listen_port: local.port(),
                up: true,
            });
            addresses.push(local);
            listeners.push((node_id, listener));
        }
        let shared = Arc::new(Shared::new(config, brokers, capture));
        let (stop, stopped) = watch::channel(false);
        lifecycle::started(&shared, stopped.clone());
        for (node_id, listener) in listeners {
            lifecycle::spawn_broker(&shared, node_id, listener);
        }
        let tasks: Vec<JoinHandle<()>> = vec![tokio::spawn(expire_members(
            Arc::downgrade(&shared),
            stopped,
        ))];
        Ok(FakeCluster {
            shared,
            addresses,
            stop,
            tasks,
        })
    }
}

/// Removes group members whose session timed out and aborts transactions
/// past their timeout, until stopped.
async fn expire_members(shared: std::sync::Weak<Shared>, mut stop: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(EXPIRY_TICK);
    loop {
        tokio::select! {
            _ = tick.tick() => {
                let Some(shared) = shared.upgrade() else { break };
                {
                    let mut state = shared.state();
                    state.groups.expire(Instant::now());
                    state.share_groups.expire(Instant::now());
                }
                crate::handlers::transactions::expire(&shared);
            }
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    break;
                }
            }
        }
    }
}
