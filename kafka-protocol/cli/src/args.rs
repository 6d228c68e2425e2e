//! The command line, parsed by clap, and the checks clap cannot express.
//!
//! Usage errors (unknown flags, missing or conflicting flags) exit with
//! status 2, as clap does. An `--api` that names no API is *bad input*, not
//! a usage error: it is resolved later and exits with status 1, like every
//! other problem with what the user asked to decode or encode.

use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{ArgGroup, Args, CommandFactory, Parser, Subcommand};

/// Decode and encode Kafka wire-protocol messages, frames and record batches.
///
/// Bytes are read from FILE, or from standard input when FILE is omitted or
/// `-`. JSON follows Kafka's JsonConverter conventions (camelCase keys,
/// base64 bytes and records, base64url uuids). Byte offsets in errors count
/// from the start of the input.
#[derive(Debug, Parser)]
#[command(name = "kafka-protocol", version, after_help = SYNOPSIS)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The forms scripts rely on, shown after the top-level help.
const SYNOPSIS: &str = "\
Forms:
  kafka-protocol decode --api <NAME|KEY> --version <N> (--request | --response) [--hex] [FILE|-]
  kafka-protocol decode --frame --request [--hex] [FILE|-]
  kafka-protocol decode --frame --response --api <NAME|KEY> --version <N> [--hex] [FILE|-]
  kafka-protocol decode --frames --request [FILE|-]
  kafka-protocol encode --api <NAME|KEY> --version <N> (--request | --response) [--hex] [FILE|-]
  kafka-protocol encode --frame (--request | --response --api <NAME|KEY> --version <N>) [--hex] [FILE|-]
  kafka-protocol apis [--json [--compact]]
  kafka-protocol records [--hex] [FILE|-]
  kafka-protocol proxy --listen <ADDR> --upstream <HOST:PORT> [--advertise <HOST:PORT>] [--log <FILE|->]
                       [--log-max-line BYTES] [--idle-timeout SECONDS] [--max-connections N] [--connect-timeout-ms N]
                       [--max-buffered-bytes BYTES]
  kafka-protocol fake [--brokers N] [--host HOST] [--port PORT]... [--cluster-id ID]
                      [--topic NAME:PARTITIONS]... [--default-partitions N] [--no-auto-create]
                      [--sasl MECHANISM:USER:PASSWORD]... [--max-bytes N] [--max-connections N]
                      [--idle-timeout SECONDS] [--capture FILE] [--fault SPEC]... [--control [--stop-on-eof]] [--seed N]
                      [--streams-config KEY=VALUE]...
  kafka-protocol request --bootstrap <HOST:PORT> --api <NAME|KEY> [--version <N>] [FILE|-]
  kafka-protocol versions --bootstrap <HOST:PORT> [--json]
  kafka-protocol pcap [--port PORT]... [--records] [--summary [--json]] [--api NAME|KEY]... FILE|-
  kafka-protocol compat --reference HOST:PORT --candidate HOST:PORT [--sasl MECH:USER:PASS]
                        [--scenarios NAME,...] [--api NAME|KEY]... [--allow FILE] [--json FILE]
                        [--markdown FILE] [--timeout-ms N] [--replay FILE.pcap --port P]

Exit status: 0 on success, 1 on failure (one `error: ...` line on standard
error: bad input, no connection, a response that does not decode, a
timeout), 2 on a usage error. `compat`: 0 when no difference remains
outside the allow list, 1 when differences remain, 2 on a usage error, 3
when a side cannot be reached (one `error: ...` line naming the side).";

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode a message body, a frame (header and body, no size prefix) or a
    /// stream of size-prefixed frames, and print it as JSON.
    Decode(DecodeArgs),
    /// Read the JSON form of a body, a frame or (`--frames`) a sequence of
    /// frames, and write its bytes.
    Encode(EncodeArgs),
    /// List every API: key, name, version range, first flexible version and
    /// whether the latest version is unstable.
    Apis(ApisArgs),
    /// Decode a records blob (record batches or legacy message sets) and
    /// print it as JSON.
    Records(RecordsArgs),
    /// Forward every connection to one upstream broker, rewriting the
    /// broker addresses clients learn to the advertised one, and optionally
    /// logging each exchange as a JSON line. Prints `listening on <addr>`
    /// when ready; exits 0 on SIGTERM.
    Proxy(ProxyArgs),
    /// Run a fake Kafka cluster in memory (kafka-wire-fake): prints one
    /// line `bootstrap HOST:PORT,...` (every broker, in node-id order) once
    /// every broker is ready; logs go to standard error; exits 0 on
    /// SIGTERM or SIGINT.
    Fake(FakeArgs),
    /// Send one request body (the crate's JSON form) to a broker with a
    /// proper header, and print the response body as one JSON object.
    /// Without --version, the highest version both sides support is
    /// negotiated through ApiVersions first. Keys the body leaves out of an
    /// object take their defaults. A Produce with acks=0 prints nothing.
    Request(RequestArgs),
    /// Ask a broker which versions it supports (ApiVersions): a header row,
    /// then one tab-separated row per API sorted by key, `key name
    /// broker_min broker_max ours_min ours_max chosen`, with `-` where a
    /// side lacks the API (`ours_max` is our highest stable version, and
    /// `chosen` what negotiation picks).
    Versions(VersionsArgs),
    /// Read Kafka traffic from a pcap or pcapng capture (a file, or
    /// standard input with `-`, as `tcpdump -U -w -` writes it): one JSON
    /// line per request and its response, one per event (`gap`, `resync`,
    /// `unpaired-response`, `unanswered`, `tls`, `undecodable`, `evicted`,
    /// `truncated-file`, `direction`), or with --summary a table of what was seen. Exits
    /// 0 when the capture was read, even where frames did not decode.
    Pcap(PcapArgs),
    /// Send the same requests to a reference broker (Apache Kafka) and a
    /// candidate, as a client would, and compare every field of their
    /// answers after normalization (kafka-wire-compat): the apis, versions
    /// and features each advertises, then every api and version both
    /// advertise with a default and a realistic body, then stateful
    /// scenarios (produce, transactions, groups, ...). Prints a table per
    /// api, then each difference (case, request, field path, both values).
    /// The run creates its own topics and groups under a prefix of its own,
    /// and deletes them at the end.
    Compat(CompatArgs),
}

/// Arguments of `compat`.
#[derive(Debug, Args)]
pub struct CompatArgs {
    /// The broker taken as right (Apache Kafka): a bootstrap address.
    #[arg(long, value_name = "HOST:PORT")]
    pub reference: String,
    /// The broker under test: a bootstrap address.
    #[arg(long, value_name = "HOST:PORT")]
    pub candidate: String,
    /// Authenticate every connection to both sides: PLAIN, SCRAM-SHA-256
    /// or SCRAM-SHA-512.
    #[arg(long, value_name = "MECH:USER:PASS", value_parser = parse_credentials)]
    pub sasl: Option<kafka_wire_compat::sasl::Credentials>,
    /// Stateful scenarios to run after the sweep, by name (all by
    /// default): produce, idempotence, transactions, groups,
    /// consumer-groups, offsets, admin, limits, share-groups, errors.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    pub scenarios: Vec<String>,
    /// Compare only this api (a name, any case, or a numeric key);
    /// repeatable.
    #[arg(long = "api", value_name = "NAME|KEY")]
    pub apis: Vec<String>,
    /// Differences to accept: lines of `CASE-PATTERN FIELD-PATTERN REASON`
    /// (`*` matches any run of characters; `#` starts a comment).
    #[arg(long, value_name = "FILE")]
    pub allow: Option<PathBuf>,
    /// Write one JSON object per case, one per line: `case`, `area`, `api`,
    /// `version`, `verdict`, `differences`.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the compatibility matrix in Markdown.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// How long each case may take on each side, in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub timeout_ms: u64,
    /// Play the requests of a capture (pcap or pcapng) to both sides after
    /// the scenarios: each client connection's requests, in capture order,
    /// with its topics, groups and transactional ids renamed to the run's.
    #[arg(long, value_name = "FILE.pcap", requires = "port")]
    pub replay: Option<PathBuf>,
    /// With --replay, the broker port of the capture.
    #[arg(long, value_name = "P", requires = "replay")]
    pub port: Option<u16>,
}

impl CompatArgs {
    /// Checks what clap cannot: the apis and scenarios named, the allow
    /// file, and the parts not in this release. A usage error (status 2) otherwise.
    pub fn check(&self) -> Result<CompatPlan, clap::Error> {
        let usage = |kind, message: String| usage_error("compat", kind, &message);
        kafka_wire_compat::scenario::check(&self.scenarios)
            .map_err(|e| usage(ErrorKind::InvalidValue, format!("--scenarios: {e}")))?;
        let scenarios = if self.scenarios.is_empty() {
            kafka_wire_compat::scenario::names()
        } else {
            self.scenarios.clone()
        };
        let replay = match (&self.replay, self.port) {
            (Some(path), Some(port)) => {
                let bytes = std::fs::read(path).map_err(|e| {
                    usage(ErrorKind::Io, format!("--replay {}: {e}", path.display()))
                })?;
                let replay =
                    kafka_wire_compat::replay::from_capture(&bytes, port).map_err(|e| {
                        usage(
                            ErrorKind::InvalidValue,
                            format!("--replay {}: {e}", path.display()),
                        )
                    })?;
                Some(replay)
            }
            _ => None,
        };
        let mut apis = Vec::new();
        for name in &self.apis {
            let api = crate::apis::resolve_api(name)
                .map_err(|e| usage(ErrorKind::InvalidValue, format!("--api: {e}")))?;
            apis.push(api);
        }
        let allow = match &self.allow {
            None => kafka_wire_compat::AllowList::new(),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    usage(ErrorKind::Io, format!("--allow {}: {e}", path.display()))
                })?;
                kafka_wire_compat::AllowList::parse(&text).map_err(|e| {
                    usage(
                        ErrorKind::InvalidValue,
                        format!("--allow {}: {e}", path.display()),
                    )
                })?
            }
        };
        Ok(CompatPlan {
            apis,
            allow,
            scenarios,
            replay,
        })
    }
}

/// What `compat` runs, once checked.
#[derive(Debug, Clone)]
pub struct CompatPlan {
    /// Only these apis (all when empty).
    pub apis: Vec<kafka_wire::ApiKey>,
    /// The allow list.
    pub allow: kafka_wire_compat::AllowList,
    /// The scenarios to run, by name.
    pub scenarios: Vec<String>,
    /// The capture's requests, with --replay.
    pub replay: Option<kafka_wire_compat::replay::Replay>,
}

/// `MECH:USER:PASS` for `compat --sasl`.
fn parse_credentials(text: &str) -> Result<kafka_wire_compat::sasl::Credentials, String> {
    kafka_wire_compat::sasl::Credentials::parse(text).map_err(|e| e.to_string())
}

/// Arguments of `pcap`.
#[derive(Debug, Args)]
pub struct PcapArgs {
    /// A broker port: only streams to or from these ports are read as
    /// Kafka, the side on the port being the broker. Without it, a stream
    /// is Kafka when its bytes read as requests, and its client is found
    /// from them (a `direction` event when that is not sure).
    #[arg(long = "port", value_name = "PORT")]
    pub ports: Vec<u16>,
    /// Decode the record batches inside Produce, Fetch and other bodies
    /// instead of printing them as base64.
    #[arg(long)]
    pub records: bool,
    /// Print a summary instead of the exchanges: exchanges per api and
    /// version, latency per api, bytes per client id and topic, error
    /// codes and events.
    #[arg(long)]
    pub summary: bool,
    /// With --summary, print it as one JSON object.
    #[arg(long, requires = "summary")]
    pub json: bool,
    /// Keep only the exchanges of this api (a name, any case, or a numeric
    /// key); repeatable. Events are always printed.
    #[arg(long = "api", value_name = "NAME|KEY")]
    pub apis: Vec<String>,
    /// The capture; `-` for standard input.
    #[arg(value_name = "FILE|-")]
    pub input: PathBuf,
}

/// Arguments of `request`.
#[derive(Debug, Args)]
pub struct RequestArgs {
    /// The broker to send to.
    #[arg(long, value_name = "HOST:PORT")]
    pub bootstrap: String,
    /// The API: a message name without Request/Response, any case, or a
    /// numeric key.
    #[arg(long, value_name = "NAME|KEY")]
    pub api: String,
    /// The version to send at, without negotiation.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub version: Option<i16>,
    /// How long to wait to connect, and for each response.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub timeout_ms: u64,
    /// The client id of the request header.
    #[arg(long, value_name = "ID", default_value = "kafka-protocol")]
    pub client_id: String,
    /// Print the response on one line instead of indented.
    #[arg(long)]
    pub compact: bool,
    /// The request body's JSON; `-` or nothing for standard input.
    #[arg(value_name = "FILE")]
    pub input: Option<PathBuf>,
}

/// Arguments of `versions`.
#[derive(Debug, Args)]
pub struct VersionsArgs {
    /// The broker to ask.
    #[arg(long, value_name = "HOST:PORT")]
    pub bootstrap: String,
    /// Print a JSON array of objects with the table's keys, `null` for `-`.
    #[arg(long)]
    pub json: bool,
    /// With --json, print it on one line.
    #[arg(long, requires = "json")]
    pub compact: bool,
    /// How long to wait to connect, and for each response.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub timeout_ms: u64,
    /// The client id of the request header.
    #[arg(long, value_name = "ID", default_value = "kafka-protocol")]
    pub client_id: String,
}

/// Arguments of `proxy`.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// The address to listen on (port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    pub listen: String,
    /// The broker every connection is forwarded to.
    #[arg(long, value_name = "HOST:PORT")]
    pub upstream: String,
    /// The address clients are told to connect to, in Metadata,
    /// FindCoordinator and DescribeCluster responses (default: the listen
    /// address).
    #[arg(long, value_name = "HOST:PORT")]
    pub advertise: Option<String>,
    /// Write one JSON object per line per exchange to FILE, or to standard
    /// output with `-`.
    #[arg(long, value_name = "FILE|-")]
    pub log: Option<PathBuf>,
    /// The longest log line, in bytes: a longer one has its request or
    /// response body replaced by `"<truncated: N bytes>"` (N: the body's
    /// size on the wire), so that it stays valid JSON.
    #[arg(long, value_name = "BYTES", default_value_t = 1024 * 1024)]
    pub log_max_line: usize,
    /// Close a connection across which no whole frame passes, either way,
    /// for this long, as Kafka's `connections.max.idle.ms`.
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub idle_timeout: u64,
    /// Connections served at once; more are closed on accept.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max_connections: usize,
    /// How long to wait for the upstream to accept a connection.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub connect_timeout_ms: u64,
    /// Bytes all connections together may hold (partial frames, answers
    /// waiting for an earlier one); the connection that would go past it
    /// is closed.
    #[arg(long, value_name = "BYTES", default_value_t = 256 * 1024 * 1024)]
    pub max_buffered_bytes: usize,
}

/// Arguments of `fake`.
#[derive(Debug, Args)]
pub struct FakeArgs {
    /// Number of brokers, 1 to 64; node ids 0 to N-1 unless --node-id
    /// chooses them.
    #[arg(long, value_name = "N", default_value_t = 3, allow_negative_numbers = true, value_parser = parse_brokers)]
    pub brokers: u16,
    /// A broker's node id, once per broker in order (default: 0 to N-1);
    /// any distinct ids of 0 or more, as Kafka's `node.id`.
    #[arg(long = "node-id", value_name = "ID", value_parser = clap::value_parser!(i32).range(0..))]
    pub node_ids: Vec<i32>,
    /// The host every broker listens on and advertises.
    #[arg(long, value_name = "HOST", default_value = "127.0.0.1")]
    pub host: String,
    /// A broker's port, once per broker in node-id order (default: free
    /// ports).
    #[arg(long = "port", value_name = "PORT")]
    pub ports: Vec<u16>,
    /// Tell clients that broker ID is at HOST:PORT, not where it listens
    /// (Kafka's `advertised.listeners`; repeatable): for brokers behind a
    /// proxy or a port forward.
    #[arg(long = "advertise", value_name = "ID=HOST:PORT", value_parser = parse_advertise)]
    pub advertise: Vec<(i32, String, u16)>,
    /// Broker ID's rack (Kafka's `broker.rack`; repeatable).
    #[arg(long = "rack", value_name = "ID=RACK", value_parser = parse_rack)]
    pub racks: Vec<(i32, String)>,
    /// The cluster id.
    #[arg(long, value_name = "ID", default_value = "kafka-wire-fake")]
    pub cluster_id: String,
    /// A topic to create at start (repeatable).
    #[arg(long = "topic", value_name = "NAME:PARTITIONS", value_parser = parse_topic)]
    pub topics: Vec<(String, i32)>,
    /// Partitions of topics created without a count.
    #[arg(long, value_name = "N", default_value_t = 1, allow_negative_numbers = true, value_parser = clap::value_parser!(i32).range(1..=10_000))]
    pub default_partitions: i32,
    /// Do not create unknown topics on Metadata.
    #[arg(long)]
    pub no_auto_create: bool,
    /// Refuse a producer's first batch on a partition that has never held
    /// a record unless it starts at sequence 0, as Kafka 4.5 does
    /// (KAFKA-15591); Kafka 4.4.0, the default, accepts any.
    #[arg(long)]
    pub first_sequence_from_zero: bool,
    /// A SASL user (repeatable): PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.
    /// With any, every listener requires SASL.
    #[arg(long = "sasl", value_name = "MECHANISM:USER:PASSWORD", value_parser = parse_sasl)]
    pub sasl: Vec<(String, String, String)>,
    /// The byte budget of all logs together; past it the oldest batches
    /// go.
    #[arg(long, value_name = "N", default_value_t = 1 << 30, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_bytes: u64,
    /// Connections each broker serves at once; more are closed on accept.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,
    /// Close a connection that sends no complete request for this long.
    #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout: u64,
    /// Record every request and response frame in FILE, one JSON line each.
    #[arg(long, value_name = "FILE")]
    pub capture: Option<PathBuf>,
    /// A fault to inject (repeatable): `API:ACTION[:OPTION]...` or
    /// `every=DURATION:OPERATION` (see docs/fake-cluster.md).
    #[arg(long = "fault", value_name = "SPEC", value_parser = parse_fault)]
    pub faults: Vec<kafka_wire_fake::control::FaultSpec>,
    /// Read control commands from standard input, one JSON object per
    /// line; each is answered with one line on standard output.
    #[arg(long)]
    pub control: bool,
    /// With `--control`: stop, as on SIGTERM, when standard input ends.
    /// A wrapper that holds the pipe open stops the cluster by closing it,
    /// and so does the wrapper's death, on any path.
    #[arg(long, requires = "control")]
    pub stop_on_eof: bool,
    /// Seeds every random choice of the faults.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// A streams group setting (repeatable), by the name of Kafka's broker
    /// config: `group.streams.session.timeout.ms`,
    /// `group.streams.heartbeat.interval.ms`,
    /// `group.streams.initial.rebalance.delay.ms`,
    /// `group.streams.assignment.interval.ms`,
    /// `group.streams.num.standby.replicas`, ... (default Kafka 4.4.0's).
    #[arg(long = "streams-config", value_name = "KEY=VALUE", value_parser = parse_key_value)]
    pub streams_config: Vec<(String, String)>,
}

/// A `KEY=VALUE` pair.
fn parse_key_value(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not KEY=VALUE"))?;
    Ok((key.trim().to_owned(), value.trim().to_owned()))
}

/// The most brokers `fake` starts.
pub const MAX_BROKERS: u16 = 64;

/// `--brokers N`: 1 to [`MAX_BROKERS`]. A negative count is read as one
/// (not as an unknown flag), so that it gets this range error.
fn parse_brokers(text: &str) -> Result<u16, String> {
    text.parse::<i64>()
        .ok()
        .and_then(|n| u16::try_from(n).ok())
        .filter(|n| (1..=MAX_BROKERS).contains(n))
        .ok_or_else(|| format!("the number of brokers is 1 to {MAX_BROKERS}, not `{text}`"))
}

/// A `--fault` spec.
fn parse_fault(text: &str) -> Result<kafka_wire_fake::control::FaultSpec, String> {
    kafka_wire_fake::control::FaultSpec::parse(text).map_err(|e| e.to_string())
}

impl FakeArgs {
    /// Checks what clap cannot: one `--port` per broker, or none.
    pub fn check(&self) -> Result<(), clap::Error> {
        if !self.ports.is_empty() && self.ports.len() != usize::from(self.brokers) {
            return Err(usage_error(
                "fake",
                ErrorKind::WrongNumberOfValues,
                &format!(
                    "--port was given {} times for {} brokers: give it once per broker, or not at all",
                    self.ports.len(),
                    self.brokers
                ),
            ));
        }
        if !self.node_ids.is_empty() && self.node_ids.len() != usize::from(self.brokers) {
            return Err(usage_error(
                "fake",
                ErrorKind::WrongNumberOfValues,
                &format!(
                    "--node-id was given {} times for {} brokers: give it once per broker, or not at all",
                    self.node_ids.len(),
                    self.brokers
                ),
            ));
        }
        let ids: Vec<i32> = if self.node_ids.is_empty() {
            (0..i32::from(self.brokers)).collect()
        } else {
            self.node_ids.clone()
        };
        let mut distinct = ids.clone();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() != ids.len() {
            return Err(usage_error(
                "fake",
                ErrorKind::ValueValidation,
                "--node-id: each broker needs its own node id",
            ));
        }
        let named = self
            .advertise
            .iter()
            .map(|(id, _, _)| (*id, "--advertise"))
            .chain(self.racks.iter().map(|(id, _)| (*id, "--rack")));
        for (id, flag) in named {
            if !ids.contains(&id) {
                return Err(usage_error(
                    "fake",
                    ErrorKind::ValueValidation,
                    &format!("{flag} names node {id}, which is not one of the node ids {ids:?}"),
                ));
            }
        }
        Ok(())
    }
}

/// `ID=HOST:PORT` (`[HOST]:PORT` for an IPv6 host).
fn parse_advertise(text: &str) -> Result<(i32, String, u16), String> {
    let (id, address) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not ID=HOST:PORT"))?;
    let id = parse_node_id(id)?;
    let (host, port) = kafka_wire_fake::parse_host_port(address)
        .ok_or_else(|| format!("`{address}` is not HOST:PORT with a port from 1 to 65535"))?;
    Ok((id, host, port))
}

/// `ID=RACK`.
fn parse_rack(text: &str) -> Result<(i32, String), String> {
    let (id, rack) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not ID=RACK"))?;
    if rack.is_empty() {
        return Err(format!("`{text}` has no rack"));
    }
    Ok((parse_node_id(id)?, rack.to_owned()))
}

/// A node id: 0 or more.
fn parse_node_id(text: &str) -> Result<i32, String> {
    text.parse::<i32>()
        .ok()
        .filter(|id| *id >= 0)
        .ok_or_else(|| format!("`{text}` is not a node id (0 or more)"))
}

/// `NAME:PARTITIONS`.
fn parse_topic(text: &str) -> Result<(String, i32), String> {
    let (name, partitions) = text
        .rsplit_once(':')
        .ok_or_else(|| format!("`{text}` is not NAME:PARTITIONS"))?;
    let partitions: i32 = partitions
        .parse()
        .ok()
        .filter(|n| (1..=10_000).contains(n))
        .ok_or_else(|| format!("`{partitions}` is not a partition count from 1 to 10000"))?;
    if name.is_empty() {
        return Err(format!("`{text}` has no topic name"));
    }
    Ok((name.to_owned(), partitions))
}

/// `MECHANISM:USER:PASSWORD` (the password may hold colons).
fn parse_sasl(text: &str) -> Result<(String, String, String), String> {
    let mut parts = text.splitn(3, ':');
    let (Some(mechanism), Some(user), Some(password)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("`{text}` is not MECHANISM:USER:PASSWORD"));
    };
    if !["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
        .iter()
        .any(|m| m.eq_ignore_ascii_case(mechanism))
    {
        return Err(format!(
            "unknown mechanism `{mechanism}` (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)"
        ));
    }
    if user.is_empty() {
        return Err(format!("`{text}` has no user"));
    }
    Ok((mechanism.to_owned(), user.to_owned(), password.to_owned()))
}

/// What is being decoded or encoded, and where it comes from.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("direction").required(true).args(["request", "response"])))]
pub struct MessageArgs {
    /// The input is a request.
    #[arg(long)]
    pub request: bool,
    /// The input is a response (needs --api and --version, even with --frame).
    #[arg(long)]
    pub response: bool,
    /// The API: a message name without Request/Response, any case (`Vote`),
    /// or a numeric key (`52`). Taken from the header for request frames.
    #[arg(long, value_name = "NAME|KEY", requires = "version")]
    pub api: Option<String>,
    /// The API version. Taken from the header for request frames.
    #[arg(
        long,
        value_name = "N",
        requires = "api",
        allow_negative_numbers = true
    )]
    pub version: Option<i16>,
    /// A whole frame: header then body, without the int32 size prefix.
    #[arg(long, conflicts_with = "frames")]
    pub frame: bool,
    /// A stream of frames, each with its int32 size prefix (a capture). JSON
    /// is one compact object per line.
    #[arg(long)]
    pub frames: bool,
    /// Bytes are hex text (whitespace ignored) instead of raw: read so by
    /// `decode`, written so by `encode`.
    #[arg(long)]
    pub hex: bool,
    /// The input file; `-` or nothing for standard input.
    #[arg(value_name = "FILE")]
    pub input: Option<PathBuf>,
}

/// Arguments of `decode`.
#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// The message and input.
    #[command(flatten)]
    pub message: MessageArgs,
    /// Print JSON on one line instead of indented.
    #[arg(long)]
    pub compact: bool,
}

/// Arguments of `encode`.
#[derive(Debug, Args)]
pub struct EncodeArgs {
    /// The message and input.
    #[command(flatten)]
    pub message: MessageArgs,
}

/// Arguments of `apis`.
#[derive(Debug, Args)]
pub struct ApisArgs {
    /// Print a JSON array of objects instead of a table.
    #[arg(long)]
    pub json: bool,
    /// With --json, print it on one line.
    #[arg(long, requires = "json")]
    pub compact: bool,
}

/// Arguments of `records`.
#[derive(Debug, Args)]
pub struct RecordsArgs {
    /// The input is hex text (whitespace ignored) instead of raw bytes.
    #[arg(long)]
    pub hex: bool,
    /// Print JSON on one line instead of indented.
    #[arg(long)]
    pub compact: bool,
    /// The input file; `-` or nothing for standard input.
    #[arg(value_name = "FILE")]
    pub input: Option<PathBuf>,
}

/// Requests or responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Requests.
    Request,
    /// Responses.
    Response,
}

/// `--api` (not yet resolved) and `--version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiArg {
    /// The name or key as given.
    pub name: String,
    /// The version.
    pub version: i16,
}

/// The checked combination of message flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// A bare body of a known api and version.
    Body {
        /// Request or response.
        direction: Direction,
        /// Which message.
        api: ApiArg,
    },
    /// A frame (header and body, no size prefix), or with `stream` a
    /// sequence of size-prefixed frames.
    Frames {
        /// Size-prefixed frames rather than one bare frame.
        stream: bool,
        /// `None` for requests, whose header names the api and version;
        /// the api and version answered for responses.
        response_to: Option<ApiArg>,
    },
}

impl MessageArgs {
    /// Checks the combination of flags of subcommand `sub`, returning a clap
    /// usage error (status 2) for a bad one.
    pub fn plan(&self, sub: &str) -> Result<Plan, clap::Error> {
        let api = match (&self.api, self.version) {
            (Some(name), Some(version)) => Some(ApiArg {
                name: name.clone(),
                version,
            }),
            // clap makes --api and --version require each other.
            _ => None,
        };
        let framed = self.frame || self.frames;
        match (framed, self.response, api) {
            (false, response, Some(api)) => Ok(Plan::Body {
                direction: if response {
                    Direction::Response
                } else {
                    Direction::Request
                },
                api,
            }),
            (true, false, None) => Ok(Plan::Frames {
                stream: self.frames,
                response_to: None,
            }),
            (true, true, Some(api)) => Ok(Plan::Frames {
                stream: self.frames,
                response_to: Some(api),
            }),
            (true, false, Some(_)) => Err(usage_error(
                sub,
                ErrorKind::ArgumentConflict,
                "--api and --version cannot be used with request frames: \
                 the frame header names the api and version",
            )),
            (_, _, None) => Err(usage_error(
                sub,
                ErrorKind::MissingRequiredArgument,
                "--api <NAME|KEY> and --version <N> are required \
                 (except with --frame/--frames --request)",
            )),
        }
    }
}

/// A usage error of subcommand `sub`, formatted by clap with its usage line.
fn usage_error(sub: &str, kind: ErrorKind, message: &str) -> clap::Error {
    let mut command = Cli::command();
    command.build();
    match command.find_subcommand_mut(sub) {
        Some(sub) => sub.error(kind, message),
        None => command.error(kind, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(args: &[&str]) -> Result<Plan, clap::Error> {
        let cli = Cli::try_parse_from(args)?;
        match cli.command {
            Command::Decode(decode) => decode.message.plan("decode"),
            Command::Encode(encode) => encode.message.plan("encode"),
            _ => Err(usage_error(
                "",
                ErrorKind::InvalidSubcommand,
                "not a message",
            )),
        }
    }

    #[test]
    fn the_command_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn a_broker_count_out_of_range_says_the_range() {
        for count in ["-1", "0", "65", "x", "-64"] {
            let error = Cli::try_parse_from(["kafka-protocol", "fake", "--brokers", count])
                .err()
                .unwrap_or_else(|| panic!("--brokers {count} parsed"))
                .to_string();
            assert!(
                error.contains(&format!("the number of brokers is 1 to 64, not `{count}`")),
                "{count}: {error}"
            );
            assert!(!error.contains("unexpected argument"), "{count}: {error}");
        }
        let error = Cli::try_parse_from(["kafka-protocol", "fake", "--default-partitions", "-1"])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("-1 is not in 1..=10000"), "{error}");
        for count in ["1", "64"] {
            assert!(Cli::try_parse_from(["kafka-protocol", "fake", "--brokers", count]).is_ok());
        }
    }

    #[test]
    fn flag_combinations() {
        let vote = || ApiArg {
            name: "Vote".into(),
            version: 2,
        };
        let body = plan(&[
            "k",
            "decode",
            "--api",
            "Vote",
            "--version",
            "2",
            "--response",
        ]);
        assert_eq!(
            body.ok(),
            Some(Plan::Body {
                direction: Direction::Response,
                api: vote(),
            })
        );
        let frame = plan(&["k", "encode", "--frame", "--request", "--hex"]);
        assert_eq!(
            frame.ok(),
            Some(Plan::Frames {
                stream: false,
                response_to: None,
            })
        );
        let args = [
            "k",
            "decode",
            "--frames",
            "--response",
            "--api",
            "Vote",
            "--version",
            "2",
        ];
        assert_eq!(
            plan(&args).ok(),
            Some(Plan::Frames {
                stream: true,
                response_to: Some(vote()),
            })
        );

        let errors = [
            &["k", "decode", "--api", "Vote", "--version", "2"][..],
            &["k", "decode", "--api", "Vote", "--request"],
            &["k", "decode", "--frame", "--response"],
            &[
                "k",
                "decode",
                "--frame",
                "--request",
                "--api",
                "Vote",
                "--version",
                "2",
            ],
            &["k", "decode", "--frame", "--frames", "--request"],
            &["k", "decode", "--request", "--response", "--frame"],
            &[
                "k",
                "decode",
                "--request",
                "--version",
                "x",
                "--api",
                "Vote",
            ],
        ];
        for args in errors {
            let error = plan(args).err().map(|e| e.exit_code());
            assert_eq!(error, Some(2), "{args:?}");
        }
    }
}
