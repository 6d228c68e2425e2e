//! Everything a fake cluster is started with, and the defaults.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The default byte budget of all logs together: 1 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;
/// The default largest request a broker reads: 100 MiB, as Kafka's
/// `socket.request.max.bytes`.
pub const DEFAULT_MAX_REQUEST_SIZE: usize = 100 * 1024 * 1024;
/// The default number of connections each broker serves at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1000;
/// The default idle timeout of a connection, as Kafka's
/// `connections.max.idle.ms` (10 minutes).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// The most partitions one topic may have.
pub const MAX_PARTITIONS_PER_TOPIC: i32 = 10_000;
/// The most partitions the whole cluster may hold.
pub const MAX_PARTITIONS_TOTAL: usize = 100_000;
/// The most topics one Metadata request may create; every unknown topic is
/// answered UNKNOWN_TOPIC_OR_PARTITION (as Kafka answers while it creates
/// one), clients ask again, and the next request creates more.
pub const MAX_AUTO_CREATED_PER_REQUEST: usize = 100;
/// The most bytes one Fetch response carries, whatever the request asks:
/// Kafka's `fetch.max.bytes` default (55 MiB).
pub const MAX_FETCH_BYTES: usize = 55 * 1024 * 1024;
/// The longest a Fetch waits, whatever its `max_wait_ms`.
pub const MAX_FETCH_WAIT: Duration = Duration::from_secs(30);
/// The most bytes the batches of one Produce may decompress to, together.
pub const PRODUCE_DECOMPRESSION_BUDGET: usize = 64 * 1024 * 1024;
/// The most fetch sessions each broker keeps (Kafka's
/// `max.incremental.fetch.session.cache.slots`).
pub const MAX_FETCH_SESSIONS: usize = 1000;
/// The most members (joined and pending) one group may have, classic,
/// consumer (KIP-848) or share.
pub const MAX_GROUP_SIZE: usize = 10_000;

/// A SASL mechanism a user may authenticate with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SaslMechanism {
    /// PLAIN.
    Plain,
    /// SCRAM-SHA-256.
    ScramSha256,
    /// SCRAM-SHA-512.
    ScramSha512,
}

impl SaslMechanism {
    /// The mechanism's name on the wire (`PLAIN`, `SCRAM-SHA-256`, ...).
    pub fn name(self) -> &'static str {
        match self {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::ScramSha256 => "SCRAM-SHA-256",
            SaslMechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }

    /// The mechanism called `name`, in any case.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Plain, Self::ScramSha256, Self::ScramSha512]
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name))
    }
}

/// A SASL user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslUser {
    /// How the user authenticates.
    pub mechanism: SaslMechanism,
    /// The user name.
    pub user: String,
    /// The password.
    pub password: String,
}

/// How the coordinator runs streams groups (KIP-1071), Kafka 4.4.0's
/// `group.streams.*` broker configs, with their defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamsGroupConfig {
    /// `group.streams.session.timeout.ms`: how long a member lives without
    /// a heartbeat (45 s).
    pub session_timeout: Duration,
    /// `group.streams.heartbeat.interval.ms`: how often members heartbeat
    /// (5 s).
    pub heartbeat_interval: Duration,
    /// `group.streams.initial.rebalance.delay.ms`: how long a group that
    /// was empty waits for more members before its first assignment (3 s).
    pub initial_rebalance_delay: Duration,
    /// `group.streams.assignment.interval.ms`: the least time between two
    /// target assignments of a group (1 s).
    pub assignment_interval: Duration,
    /// `group.streams.num.standby.replicas`: standbys per stateful task (0).
    pub num_standby_replicas: u32,
    /// `group.streams.task.offset.interval.ms`: how often members report
    /// their tasks' offsets (60 s).
    pub task_offset_interval: Duration,
    /// `group.streams.acceptable.recovery.lag`: how far behind a task's
    /// state may be and still count as caught up (10,000 records).
    pub acceptable_recovery_lag: i64,
    /// `group.streams.max.size`: the most members of one group.
    pub max_size: usize,
}

impl Default for StreamsGroupConfig {
    fn default() -> Self {
        StreamsGroupConfig {
            session_timeout: Duration::from_secs(45),
            heartbeat_interval: Duration::from_secs(5),
            initial_rebalance_delay: Duration::from_secs(3),
            assignment_interval: Duration::from_secs(1),
            num_standby_replicas: 0,
            task_offset_interval: Duration::from_secs(60),
            acceptable_recovery_lag: 10_000,
            max_size: MAX_GROUP_SIZE,
        }
    }
}

/// A `group.streams.*` setting that is unknown or whose value is not a
/// number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}={value}: {why}")]
pub struct StreamsConfigError {
    /// The key given.
    pub key: String,
    /// The value given.
    pub value: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl StreamsGroupConfig {
    /// Sets one setting by its Kafka broker config name
    /// (`group.streams.session.timeout.ms`, ...).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), StreamsConfigError> {
        let fail = |why| StreamsConfigError {
            key: key.to_owned(),
            value: value.to_owned(),
            why,
        };
        let number: i64 = value.trim().parse().map_err(|_| fail("not a number"))?;
        let millis = || {
            u64::try_from(number)
                .map(Duration::from_millis)
                .map_err(|_| fail("must not be negative"))
        };
        match key {
            "group.streams.session.timeout.ms" => self.session_timeout = millis()?,
            "group.streams.heartbeat.interval.ms" => self.heartbeat_interval = millis()?,
            "group.streams.initial.rebalance.delay.ms" => self.initial_rebalance_delay = millis()?,
            "group.streams.assignment.interval.ms" => self.assignment_interval = millis()?,
            "group.streams.task.offset.interval.ms" => self.task_offset_interval = millis()?,
            "group.streams.num.standby.replicas" => {
                self.num_standby_replicas =
                    u32::try_from(number).map_err(|_| fail("must not be negative"))?;
            }
            "group.streams.acceptable.recovery.lag" => self.acceptable_recovery_lag = number,
            "group.streams.max.size" => {
                self.max_size = usize::try_from(number)
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| fail("must be positive"))?;
            }
            _ => return Err(fail("not a streams group setting the fake knows")),
        }
        Ok(())
    }
}

/// A topic the cluster starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSpec {
    /// Its name.
    pub name: String,
    /// Its number of partitions.
    pub partitions: i32,
    /// Topic configs (`cleanup.policy`, `message.timestamp.type`, ...).
    pub configs: BTreeMap<String, String>,
}

impl TopicSpec {
    /// A topic with `partitions` partitions and default configs.
    pub fn new(name: impl Into<String>, partitions: i32) -> Self {
        TopicSpec {
            name: name.into(),
            partitions,
            configs: BTreeMap::new(),
        }
    }

    /// Sets one topic config.
    pub fn config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.configs.insert(key.into(), value.into());
        self
    }
}

/// The whole configuration of a fake cluster. Built by
/// [`FakeClusterBuilder`](crate::FakeClusterBuilder).
#[derive(Debug, Clone)]
pub struct Config {
    /// Number of brokers.
    pub brokers: usize,
    /// The node ids, one per broker in order; empty for 0 .. brokers-1.
    pub node_ids: Vec<i32>,
    /// The host every broker listens on (and advertises, unless
    /// `advertised` names another address).
    pub host: String,
    /// Fixed ports, one per broker in node-id order; empty for free ports.
    pub ports: Vec<u16>,
    /// The address a broker is advertised at to clients, by node id, when
    /// it is not the one it listens on (Kafka's `advertised.listeners`).
    pub advertised: BTreeMap<i32, (String, u16)>,
    /// Each broker's rack (Kafka's `broker.rack`), by node id.
    pub racks: BTreeMap<i32, String>,
    /// The cluster id.
    pub cluster_id: String,
    /// Topics created at start.
    pub topics: Vec<TopicSpec>,
    /// Whether Metadata creates unknown topics when the client allows it.
    pub auto_create: bool,
    /// Partitions of a topic created without a count.
    pub default_partitions: i32,
    /// SASL users; when any is set every listener requires SASL.
    pub sasl_users: Vec<SaslUser>,
    /// The highest version advertised per api key, below Kafka's.
    pub version_caps: BTreeMap<i16, i16>,
    /// The shortest session timeout a group member may ask for.
    pub min_session_timeout: Duration,
    /// The longest session timeout a group member may ask for.
    pub max_session_timeout: Duration,
    /// The byte budget of all logs together, kept by retention.
    pub max_bytes: u64,
    /// Connections each broker serves at once.
    pub max_connections: usize,
    /// How long a connection may go without a complete request.
    pub idle_timeout: Duration,
    /// The largest request frame read.
    pub max_request_size: usize,
    /// A file every request and response frame is recorded in.
    pub capture: Option<PathBuf>,
    /// Whether a producer's first batch on a partition that has never
    /// held a record must start at sequence 0 (Kafka 4.5's rule,
    /// KAFKA-15591). Off by default: Kafka 4.4.0 accepts any first
    /// sequence from a producer it has no state for.
    pub first_sequence_from_zero: bool,
    /// How streams groups run.
    pub streams: StreamsGroupConfig,
}

impl Config {
    /// The node ids the brokers start with, in order: the chosen ones, or
    /// 0 .. brokers-1.
    pub fn initial_node_ids(&self) -> Vec<i32> {
        if self.node_ids.is_empty() {
            (0..self.brokers)
                .map(|n| i32::try_from(n).unwrap_or(i32::MAX))
                .collect()
        } else {
            self.node_ids.clone()
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            brokers: 3,
            node_ids: Vec::new(),
            host: "127.0.0.1".into(),
            ports: Vec::new(),
            advertised: BTreeMap::new(),
            racks: BTreeMap::new(),
            cluster_id: "kafka-wire-fake".into(),
            topics: Vec::new(),
            auto_create: true,
            default_partitions: 1,
            sasl_users: Vec::new(),
            version_caps: BTreeMap::new(),
            min_session_timeout: Duration::from_millis(6_000),
            max_session_timeout: Duration::from_millis(1_800_000),
            max_bytes: DEFAULT_MAX_BYTES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_request_size: DEFAULT_MAX_REQUEST_SIZE,
            capture: None,
            first_sequence_from_zero: false,
            streams: StreamsGroupConfig::default(),
        }
    }
}
