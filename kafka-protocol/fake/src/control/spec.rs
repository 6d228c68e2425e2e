//! The `--fault` grammar, and running parsed faults on a cluster.
//!
//! ```text
//! FAULT     = REQUEST | CLUSTER
//! REQUEST   = API ":" ACTION (":" OPTION)*
//! API       = an API's name in kebab-case (produce, find-coordinator) | "*"
//! ACTION    = "error=" CODE_NAME | "delay=" DURATION | "delay=" DURATION ".." DURATION
//!           | "hang" | "drop-before" | "drop-after"
//! OPTION    = "times=" N | "rate=" P (0 to 1) | "broker=" ID
//! CLUSTER   = "every=" DURATION ":" OPERATION [":times=" N]
//! OPERATION = "move-leaders" | "move-coordinator" | "stop-broker" [":for=" DURATION]
//!           | "restart-broker"
//! DURATION  = DIGITS ("ms" | "s" | "m")
//! ```
//!
//! CODE_NAME is Kafka's spelling (NOT_LEADER_OR_FOLLOWER), in any case
//! (not_leader_or_follower); an unknown name gets a hint at the nearest
//! one. A stop-broker
//! without `for` keeps the broker down for half the period.

use std::sync::Arc;
use std::time::Duration;

use kafka_wire::{ApiKey, ErrorCode};

use super::change;
use super::{lock, ControlError, ControlId, Intercept};
use crate::cluster::FakeCluster;
use crate::state::Shared;

/// A fault as written on the command line.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultSpec {
    /// A request fault.
    Request(RequestFault),
    /// A cluster fault: an operation every period.
    Cluster {
        /// The period.
        every: Duration,
        /// The operation.
        operation: ClusterOperation,
        /// At most this many times (`None`: until the cluster stops).
        times: Option<u64>,
    },
}

/// A request fault: which requests, what to do, how often.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestFault {
    /// The API (`None`: `*`, every API).
    pub api: Option<ApiKey>,
    /// The action.
    pub action: RequestAction,
    /// At most this many times.
    pub times: Option<u64>,
    /// With this probability per matching request.
    pub rate: Option<f64>,
    /// Only on this broker.
    pub broker: Option<i32>,
}

/// A request fault's action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestAction {
    /// `error=CODE_NAME`.
    Error(ErrorCode),
    /// `delay=D` (min = max) or `delay=D..D`.
    Delay(Duration, Duration),
    /// `hang`.
    Hang,
    /// `drop-before`.
    DropBefore,
    /// `drop-after`.
    DropAfter,
}

/// A cluster fault's operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterOperation {
    /// Every partition's leader moves (seeded).
    MoveLeaders,
    /// Every coordinator moves one broker along.
    MoveCoordinator,
    /// A running broker (drawn from the seeded generator, never the last
    /// one running) stops, and starts again after `for`.
    StopBroker {
        /// How long it stays down (`None`: half the period).
        down_for: Option<Duration>,
    },
    /// A running broker (drawn) stops and starts again at once.
    RestartBroker,
}

/// Why a fault spec does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fault `{spec}`: {why}")]
pub struct SpecError {
    /// The spec.
    pub spec: String,
    /// What is wrong.
    pub why: String,
}

/// `200ms`, `5s`, `2m`.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let (digits, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit())?);
    if digits.is_empty() {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    match unit {
        "ms" => Some(Duration::from_millis(n)),
        "s" => Some(Duration::from_secs(n)),
        "m" => Some(Duration::from_secs(n.checked_mul(60)?)),
        _ => None,
    }
}

/// The error code Kafka spells `name` (NOT_LEADER_OR_FOLLOWER), in any
/// case, with `_`, `-` or neither between words (not_leader_or_follower,
/// NotLeaderOrFollower).
pub fn error_code_named(name: &str) -> Option<ErrorCode> {
    let wanted = spelling(name);
    known_error_codes().find(|code| spelling(code.name()) == wanted)
}

/// Kafka's name of the error code spelt most like `name`, when one is
/// close enough to be a slip (a letter or two per word), for a hint.
pub fn nearest_error_name(name: &str) -> Option<&'static str> {
    let wanted = spelling(name);
    known_error_codes()
        .map(|code| (distance(&spelling(code.name()), &wanted), code.name()))
        .min()
        .filter(|(distance, _)| *distance <= (wanted.len() / 4).max(2))
        .map(|(_, name)| name)
}

/// Every error code this version of kafka-wire names.
fn known_error_codes() -> impl Iterator<Item = ErrorCode> {
    (-1..=i16::MAX)
        .take(1000)
        .map(ErrorCode::from_code)
        .filter(|code| !matches!(code, ErrorCode::Unknown(_)))
}

/// A name as compared: upper case, without separators.
fn spelling(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// The Levenshtein distance between two short names.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

/// The API called `name` in kebab-case (`find-coordinator`).
pub fn api_named(name: &str) -> Option<ApiKey> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
        return None;
    }
    ApiKey::from_name(&name.replace('-', ""))
}

impl FaultSpec {
    /// Parses one spec.
    pub fn parse(spec: &str) -> Result<FaultSpec, SpecError> {
        let fail = |why: String| SpecError {
            spec: spec.to_owned(),
            why,
        };
        let mut parts = spec.split(':');
        let head = parts.next().unwrap_or_default();
        if let Some(every) = head.strip_prefix("every=") {
            let every = parse_duration(every)
                .filter(|d| !d.is_zero())
                .ok_or_else(|| fail(format!("`{every}` is not a duration like 500ms or 5s")))?;
            let mut operation = match parts.next() {
                Some("move-leaders") => ClusterOperation::MoveLeaders,
                Some("move-coordinator") => ClusterOperation::MoveCoordinator,
                Some("restart-broker") => ClusterOperation::RestartBroker,
                Some("stop-broker") => ClusterOperation::StopBroker { down_for: None },
                Some(other) => {
                    return Err(fail(format!(
                    "`{other}` is not move-leaders, move-coordinator, stop-broker or restart-broker"
                )))
                }
                None => return Err(fail("an operation is missing after every=".into())),
            };
            let mut times = None;
            for option in parts {
                if let Some(text) = option.strip_prefix("times=") {
                    times = Some(
                        text.parse()
                            .ok()
                            .filter(|n| *n > 0)
                            .ok_or_else(|| fail(format!("`{text}` is not a positive count")))?,
                    );
                    continue;
                }
                match (&mut operation, option.strip_prefix("for=")) {
                    (ClusterOperation::StopBroker { down_for }, Some(text)) => {
                        *down_for =
                            Some(parse_duration(text).ok_or_else(|| {
                                fail(format!("`{text}` is not a duration like 3s"))
                            })?);
                    }
                    _ => {
                        return Err(fail(format!(
                            "`{option}` is not an option of this operation"
                        )))
                    }
                }
            }
            return Ok(FaultSpec::Cluster {
                every,
                operation,
                times,
            });
        }
        let api =
            match head {
                "*" => None,
                name => Some(api_named(name).ok_or_else(|| {
                    fail(format!("`{name}` is not an API name (kebab-case) or *"))
                })?),
            };
        let action_text = parts
            .next()
            .ok_or_else(|| fail("an action is missing after the API".into()))?;
        let action = match action_text {
            "hang" => RequestAction::Hang,
            "drop-before" => RequestAction::DropBefore,
            "drop-after" => RequestAction::DropAfter,
            other => {
                if let Some(name) = other.strip_prefix("error=") {
                    RequestAction::Error(error_code_named(name).ok_or_else(|| {
                        fail(match nearest_error_name(name) {
                            Some(near) => {
                                format!("`{name}` is not a Kafka error name; did you mean {near}?")
                            }
                            None => format!(
                                "`{name}` is not a Kafka error name (such as NOT_LEADER_OR_FOLLOWER)"
                            ),
                        })
                    })?)
                } else if let Some(range) = other.strip_prefix("delay=") {
                    let (low, high) = range.split_once("..").unwrap_or((range, range));
                    let bad = || fail(format!("`{range}` is not DURATION or DURATION..DURATION"));
                    let low = parse_duration(low).ok_or_else(bad)?;
                    let high = parse_duration(high).ok_or_else(bad)?;
                    if high < low {
                        return Err(fail(format!("`{range}` ends before it starts")));
                    }
                    RequestAction::Delay(low, high)
                } else {
                    return Err(fail(format!(
                        "`{other}` is not error=CODE, delay=DURATION[..DURATION], hang, drop-before or drop-after"
                    )));
                }
            }
        };
        let mut fault = RequestFault {
            api,
            action,
            times: None,
            rate: None,
            broker: None,
        };
        for option in parts {
            let (key, value) = option
                .split_once('=')
                .ok_or_else(|| fail(format!("`{option}` is not times=N, rate=P or broker=ID")))?;
            match key {
                "times" => {
                    fault.times =
                        Some(
                            value.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                                fail(format!("`{value}` is not a positive count"))
                            })?,
                        )
                }
                "rate" => {
                    fault.rate = Some(
                        value
                            .parse::<f64>()
                            .ok()
                            .filter(|p| (0.0..=1.0).contains(p))
                            .ok_or_else(|| fail(format!("`{value}` is not a rate from 0 to 1")))?,
                    )
                }
                "broker" => {
                    fault.broker = Some(
                        value
                            .parse()
                            .map_err(|_| fail(format!("`{value}` is not a node id")))?,
                    )
                }
                _ => {
                    return Err(fail(format!(
                        "`{option}` is not times=N, rate=P or broker=ID"
                    )))
                }
            }
        }
        Ok(FaultSpec::Request(fault))
    }
}

impl RequestFault {
    /// The request control it stands for.
    pub fn intercept(&self) -> Intercept {
        let mut intercept = match self.api {
            Some(api) => Intercept::api(api),
            None => Intercept::any(),
        };
        if let Some(times) = self.times {
            intercept = intercept.times(times);
        }
        if let Some(rate) = self.rate {
            intercept = intercept.rate(rate);
        }
        if let Some(broker) = self.broker {
            intercept = intercept.broker(broker);
        }
        match self.action {
            RequestAction::Error(code) => intercept.error(code),
            RequestAction::Delay(low, high) => intercept.delay_between(low, high),
            RequestAction::Hang => intercept.hang(),
            RequestAction::DropBefore => intercept.drop_before(),
            RequestAction::DropAfter => intercept.drop_after(),
        }
    }
}

impl FakeCluster {
    /// Applies a fault: a request fault becomes a request control (its id
    /// returned); a cluster fault runs every period in the background
    /// until the cluster stops.
    pub fn apply_fault(&self, fault: &FaultSpec) -> Result<Option<ControlId>, ControlError> {
        match fault {
            FaultSpec::Request(request) => self.intercept(request.intercept()).map(Some),
            FaultSpec::Cluster {
                every,
                operation,
                times,
            } => {
                let task = tokio::spawn(periodic(
                    Arc::downgrade(self.shared()),
                    *every,
                    *operation,
                    *times,
                ));
                lock(&self.shared().control.background).push(task);
                Ok(None)
            }
        }
    }
}

/// A running broker drawn from the generator, if two or more run.
fn draw_broker(shared: &Shared) -> Option<i32> {
    let live = shared.control.live();
    if live.len() < 2 {
        return None;
    }
    let pick = (shared.control.next_u64() % live.len() as u64) as usize;
    live.get(pick).map(|b| b.node_id)
}

async fn periodic(
    shared: std::sync::Weak<Shared>,
    every: Duration,
    operation: ClusterOperation,
    times: Option<u64>,
) {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let mut left = times;
    loop {
        match &mut left {
            Some(0) => return,
            Some(n) => *n -= 1,
            None => {}
        }
        tick.tick().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        match operation {
            ClusterOperation::MoveLeaders => {
                let seed = shared.control.next_u64();
                change::shuffle_leaders(&shared, seed);
            }
            ClusterOperation::MoveCoordinator => change::move_coordinators(&shared),
            ClusterOperation::RestartBroker => {
                if let Some(node) = draw_broker(&shared) {
                    let _ = change::restart_broker(&shared, node).await;
                }
            }
            ClusterOperation::StopBroker { down_for } => {
                if let Some(node) = draw_broker(&shared) {
                    if change::stop_broker(&shared, node).await.is_ok() {
                        tokio::time::sleep(down_for.unwrap_or(every / 2)).await;
                        let _ = change::start_broker(&shared, node).await;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(spec: &str) -> RequestFault {
        match FaultSpec::parse(spec) {
            Ok(FaultSpec::Request(r)) => r,
            other => panic!("{spec}: {other:?}"),
        }
    }

    fn cluster(spec: &str) -> (Duration, ClusterOperation) {
        match FaultSpec::parse(spec) {
            Ok(FaultSpec::Cluster {
                every,
                operation,
                times: None,
            }) => (every, operation),
            other => panic!("{spec}: {other:?}"),
        }
    }

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn the_eight_specs_parse_as_written() {
        let r = request("produce:error=NOT_LEADER_OR_FOLLOWER:rate=0.05");
        assert_eq!(r.api, Some(ApiKey::Produce));
        assert_eq!(
            r.action,
            RequestAction::Error(ErrorCode::NotLeaderOrFollower)
        );
        assert_eq!((r.rate, r.times, r.broker), (Some(0.05), None, None));

        let r = request("fetch:delay=200ms:times=10");
        assert_eq!(r.api, Some(ApiKey::Fetch));
        assert_eq!(r.action, RequestAction::Delay(MS(200), MS(200)));
        assert_eq!(r.times, Some(10));

        let r = request("*:delay=0ms..50ms");
        assert_eq!(r.api, None);
        assert_eq!(r.action, RequestAction::Delay(MS(0), MS(50)));

        let r = request("metadata:drop-before:times=1");
        assert_eq!(r.api, Some(ApiKey::Metadata));
        assert_eq!((r.action, r.times), (RequestAction::DropBefore, Some(1)));

        let r = request("produce:drop-after:rate=0.01");
        assert_eq!((r.action, r.rate), (RequestAction::DropAfter, Some(0.01)));

        assert_eq!(
            cluster("every=500ms:move-leaders"),
            (MS(500), ClusterOperation::MoveLeaders)
        );
        assert_eq!(
            cluster("every=10s:stop-broker:for=3s"),
            (
                Duration::from_secs(10),
                ClusterOperation::StopBroker {
                    down_for: Some(Duration::from_secs(3))
                }
            )
        );
        assert_eq!(
            cluster("every=5s:move-coordinator"),
            (Duration::from_secs(5), ClusterOperation::MoveCoordinator)
        );
    }

    #[test]
    fn more_forms_parse() {
        assert_eq!(
            request("find-coordinator:hang").api,
            Some(ApiKey::FindCoordinator)
        );
        assert_eq!(request("produce:hang:broker=2").broker, Some(2));
        assert_eq!(
            cluster("every=1m:restart-broker"),
            (Duration::from_secs(60), ClusterOperation::RestartBroker)
        );
    }

    #[test]
    fn a_cluster_fault_may_fire_a_number_of_times() {
        assert_eq!(
            FaultSpec::parse("every=3s:stop-broker:for=2s:times=1"),
            Ok(FaultSpec::Cluster {
                every: Duration::from_secs(3),
                operation: ClusterOperation::StopBroker {
                    down_for: Some(Duration::from_secs(2))
                },
                times: Some(1),
            })
        );
        assert_eq!(
            FaultSpec::parse("every=2s:move-coordinator:times=2"),
            Ok(FaultSpec::Cluster {
                every: Duration::from_secs(2),
                operation: ClusterOperation::MoveCoordinator,
                times: Some(2),
            })
        );
    }

    #[test]
    fn error_names_in_any_case_and_a_hint_for_a_slip() {
        for name in [
            "NOT_LEADER_OR_FOLLOWER",
            "not_leader_or_follower",
            "Not_Leader_Or_Follower",
            "not-leader-or-follower",
            "NotLeaderOrFollower",
        ] {
            assert_eq!(
                request(&format!("produce:error={name}")).action,
                RequestAction::Error(ErrorCode::NotLeaderOrFollower),
                "{name}"
            );
        }
        for (slip, near) in [
            ("NOT_LEADER_OR_FOLOWER", "NOT_LEADER_OR_FOLLOWER"),
            ("not_leader_for_follower", "NOT_LEADER_OR_FOLLOWER"),
            ("TOPIC_AUTHORISATION_FAILED", "TOPIC_AUTHORIZATION_FAILED"),
            ("UNKNOWN_TOPIC_OR_PARTITON", "UNKNOWN_TOPIC_OR_PARTITION"),
        ] {
            let error = FaultSpec::parse(&format!("produce:error={slip}")).expect_err(slip);
            assert_eq!(
                error.why,
                format!("`{slip}` is not a Kafka error name; did you mean {near}?")
            );
        }
        let error = FaultSpec::parse("produce:error=BANANA").expect_err("BANANA");
        assert_eq!(
            error.why,
            "`BANANA` is not a Kafka error name (such as NOT_LEADER_OR_FOLLOWER)"
        );
    }

    #[test]
    fn bad_specs_name_the_fault() {
        for spec in [
            "",
            "produce",
            "produce:error=NOT_A_CODE",
            "produce:error=UNKNOWN",
            "Produce:hang",
            "nosuchapi:hang",
            "produce:delay=5",
            "produce:delay=50ms..5ms",
            "produce:hang:rate=2",
            "produce:hang:times=0",
            "produce:hang:color=red",
            "produce:explode",
            "every=0s:move-leaders",
            "every=5s",
            "every=5s:stop-broker:for=x",
            "every=5s:move-leaders:for=1s",
            "every=5s:move-leaders:times=0",
            "every=5s:move-leaders:times=x",
            "every=5s:reboot",
        ] {
            let error = FaultSpec::parse(spec).expect_err(spec);
            assert!(
                error.to_string().starts_with(&format!("fault `{spec}`")),
                "{error}"
            );
        }
    }
}
