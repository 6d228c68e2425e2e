//! The sans-IO engine: cases in, requests out, answers in, verdicts out.
//!
//! [`Engine::poll`] says what to do next: send a request
//! ([`Action::Send`]: which side, which broker, which connection, the body
//! and version, the time it must be answered by), close a case's own
//! connections ([`Action::Release`]), wait for a timer or an answer, or
//! stop. [`Engine::deliver`] takes each request's outcome: the answer's
//! frame (header and body, without the size prefix) or why there is none.
//! The engine decodes, learns, normalizes, compares and keeps verdicts;
//! [`Engine::finish`] gives the report. The driver (`crate::driver`, with
//! the `tokio` feature) does the sockets; a test can drive an engine by
//! hand.
//!
//! A run goes through five stages. **Bootstrap**, per side: ApiVersions
//! (again at the side's highest version if it refuses ours), then Metadata
//! for its brokers and cluster id; a side that fails here cannot be
//! compared ([`Unreachable`]). **Setup**, per side: the run's topics
//! created, then Metadata at every broker until each knows their leaders,
//! and ListOffsets at each leader until it serves. **Cases**, one at a
//! time, on both sides at once: each step routed as a client would route
//! it (a coordinator found with FindCoordinator first), sent, retried while
//! its `until` does not hold, normalized and, once both sides are done,
//! compared. **Teardown**, per side: the run's groups, then its topics, deleted.
//! Each side has at most one request in flight.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use kafka_wire::frame::ResponseFrame;
use kafka_wire::{ApiKey, ErrorCode, IntoOwned, RequestBody};
use serde_json::{json, Value};

use crate::allow::AllowList;
use crate::body::fit;
use crate::case::{
    error_codes, Case, Check, Connection, CoordinatorKey, Route, Step, Until, VersionChoice,
};
use crate::compare::{diff, Difference};
use crate::error::Unreachable;
use crate::names::RunNames;
use crate::normalize::{normalize, Context, Mapper, ZERO_UUID};
use crate::replay::Replay;
use crate::report::{CaseResult, Report, SideReport, Verdict};
use crate::scenario::{self, TopicSpec};
use crate::side::{key_type, Knowledge, Side};
use crate::template::{placeholders, Bindings};
use crate::{batch, surface, sweep};

/// The topic config the run sets to -1 on its topics (unless a scenario
/// sets it): their records are kept whatever their timestamps.
pub const RETENTION: &str = "retention.ms";

/// How long a retried step waits before it is sent again.
pub const RETRY_AFTER: Duration = Duration::from_millis(100);

/// Setup and teardown take at least this long before giving up, whatever
/// the case timeout: a cluster of several brokers takes seconds to agree
/// on a new topic's leader.
pub const MIN_SETUP_TIME: Duration = Duration::from_secs(30);

/// What to compare, and how.
#[derive(Debug, Clone)]
pub struct Config {
    /// The reference's bootstrap address (for reports and errors; the
    /// driver connects).
    pub reference: String,
    /// The candidate's bootstrap address.
    pub candidate: String,
    /// The run's names.
    pub names: RunNames,
    /// How long each case may take, on each side.
    pub timeout: Duration,
    /// Whether to compare the surface.
    pub surface: bool,
    /// Whether to run the sweep.
    pub sweep: bool,
    /// The scenarios to run after the sweep, by name
    /// ([`crate::scenario::names`]; all by default).
    pub scenarios: Vec<String>,
    /// Only these apis' cases (all when empty).
    pub apis: Vec<ApiKey>,
    /// Differences accepted.
    pub allow: AllowList,
    /// Requests of a capture to play to both sides after the scenarios
    /// ([`crate::replay::from_capture`]; none by default).
    pub replay: Option<Replay>,
}

impl Config {
    /// Surface, sweep and every scenario over every api, with a fresh run
    /// prefix, a timeout
    /// of 10 s and no allow list.
    pub fn new(reference: impl Into<String>, candidate: impl Into<String>) -> Config {
        Config {
            reference: reference.into(),
            candidate: candidate.into(),
            names: RunNames::random(),
            timeout: Duration::from_secs(10),
            surface: true,
            sweep: true,
            scenarios: scenario::names(),
            apis: Vec::new(),
            allow: AllowList::new(),
            replay: None,
        }
    }

    fn address(&self, side: Side) -> &str {
        match side {
            Side::Reference => &self.reference,
            Side::Candidate => &self.candidate,
        }
    }
}

/// Which broker a request goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The side's bootstrap address.
    Bootstrap,
    /// A broker, by the node id and address its Metadata gave.
    Broker {
        /// Its node id.
        node: i64,
        /// `host:port`.
        address: String,
    },
}

/// Which connection to that broker a request goes on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ConnectionTag {
    /// The run's connection (one per broker and side), authenticated when
    /// the run uses SASL.
    Shared,
    /// A connection of one case's own, closed at [`Action::Release`].
    Own {
        /// The case's index.
        case: usize,
        /// Its name within the case.
        name: String,
        /// Whether to authenticate it when the run uses SASL.
        authenticate: bool,
    },
}

/// One request for the driver to send.
#[derive(Debug)]
pub struct Exchange {
    /// Names the request in [`Engine::deliver`].
    pub id: u64,
    /// The side.
    pub side: Side,
    /// The broker.
    pub target: Target,
    /// The connection.
    pub connection: ConnectionTag,
    /// The api.
    pub api: ApiKey,
    /// The version.
    pub version: i16,
    /// The body.
    pub body: RequestBody<'static>,
    /// Whether an answer comes (not for a Produce with acks=0).
    pub expects_response: bool,
    /// When the answer must have arrived.
    pub deadline: Instant,
}

/// Why a request got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// No connection (refused, unresolvable, SASL failed), with why.
    Connect(String),
    /// The broker closed the connection instead of answering.
    Closed,
    /// No answer by the deadline.
    TimedOut,
    /// A size prefix that is negative or above the driver's maximum.
    BadSize(String),
    /// An answer to another correlation id.
    WrongCorrelation {
        /// The id sent.
        sent: i32,
        /// The id answered (`None`: a frame too short to hold one).
        answered: Option<i32>,
    },
    /// Another I/O error.
    Io(String),
}

impl Failure {
    /// The failure as the report prints it, after the side.
    pub fn describe(&self) -> String {
        match self {
            Failure::Connect(why) => format!("cannot connect: {why}"),
            Failure::Closed => "closed the connection".into(),
            Failure::TimedOut => "no answer in time".into(),
            Failure::BadSize(why) => format!("a bad frame: {why}"),
            Failure::WrongCorrelation { sent, answered } => match answered {
                Some(id) => format!("answered correlation id {id} to {sent}"),
                None => format!("answered {sent} with a frame too short for a header"),
            },
            Failure::Io(why) => format!("failed: {why}"),
        }
    }
}

/// A request's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The answer's frame: header and body, without the size prefix.
    Answer(Vec<u8>),
    /// Nothing was expected, and nothing came.
    NoAnswer,
    /// No answer, and why.
    Failed(Failure),
}

/// What to do next.
#[derive(Debug)]
pub enum Action {
    /// Send a request; deliver its outcome.
    Send(Box<Exchange>),
    /// Close the own connections of case `case`.
    Release {
        /// The case's index.
        case: usize,
    },
    /// Wait until this instant, or an outcome, whichever comes first.
    Wait(Instant),
    /// Wait for an outcome.
    Idle,
    /// The run is over: call [`Engine::finish`].
    Done,
}

/// Where the run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// ApiVersions and Metadata on each side.
    Bootstrap,
    /// Creating the run's topics.
    Setup,
    /// Running the cases.
    Cases,
    /// Deleting the run's topics and groups.
    Teardown,
    /// Over.
    Done,
}

/// How far a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The stage.
    pub stage: Stage,
    /// Cases compared.
    pub done: usize,
    /// Cases in all (known once both sides have bootstrapped).
    pub total: usize,
}

/// What one side saw of one step.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    /// The answer, normalized.
    Answer(Value),
    /// No answer, as expected (acks=0).
    NoAnswer,
    /// No answer: why.
    Failed(String),
    /// The side does not advertise a version to send.
    NotAdvertised(String),
    /// No broker to send it to.
    Unroutable(String),
    /// The request could not be built (a fault in the case's data).
    Unbuildable(String),
    /// Not sent: the case ran out of time before.
    NotSent,
}

impl Seen {
    fn value(&self) -> Value {
        match self {
            Seen::Answer(value) => value.clone(),
            Seen::NoAnswer => Value::from("<no answer, as none is expected>"),
            Seen::Failed(why) => Value::from(format!("<{why}>")),
            Seen::NotAdvertised(why) => Value::from(format!("<not advertised: {why}>")),
            Seen::Unroutable(why) => Value::from(format!("<not sent: {why}>")),
            Seen::Unbuildable(why) => Value::from(format!("<request not built: {why}>")),
            Seen::NotSent => Value::from("<not sent: the case ran out of time>"),
        }
    }
}

/// One step of a job, with what the engine fixed for it.
#[derive(Debug, Clone)]
struct JobStep {
    step: Step,
    /// A broker chosen by the engine (setup's Metadata at every broker).
    node: Option<i64>,
    /// The version, when fixed for both sides.
    version: Option<i16>,
}

/// A sequence of steps on one side.
#[derive(Debug)]
struct Job {
    steps: Vec<JobStep>,
    index: usize,
    /// When it started: times in its answers are no earlier.
    started: Instant,
    deadline: Instant,
    /// The case it runs, if it runs one (its answers are normalized).
    case: Option<usize>,
    seen: Vec<Seen>,
    requests: Vec<Option<Value>>,
    /// The last answer to a step being retried.
    provisional: Option<Seen>,
    /// A step sent to every broker: the brokers, how many have answered,
    /// and their answers merged so far.
    fanout: Option<Box<Fanout>>,
}

/// A step on its way to every broker of a side.
#[derive(Debug)]
struct Fanout {
    nodes: Vec<i64>,
    answered: usize,
    merged: Value,
}

impl Job {
    fn new(steps: Vec<JobStep>, started: Instant, deadline: Instant, case: Option<usize>) -> Job {
        Job {
            steps,
            index: 0,
            started,
            deadline,
            case,
            seen: Vec::new(),
            requests: Vec::new(),
            provisional: None,
            fanout: None,
        }
    }

    fn done(&self) -> bool {
        self.index >= self.steps.len()
    }

    fn finish_step(&mut self, seen: Seen, request: Option<Value>) {
        self.seen.push(seen);
        self.requests.push(request);
        self.provisional = None;
        self.fanout = None;
        self.index += 1;
    }
}

#[derive(Debug)]
enum Task {
    Idle,
    ApiVersions { version: i16 },
    Metadata,
    Job(Box<Job>),
}

#[derive(Debug)]
enum Purpose {
    Boot,
    /// A step, and the coordinator it was sent to, if it was.
    Step {
        coordinator: Option<(i64, String)>,
    },
    Lookup {
        key_type: i64,
        key: String,
    },
}

#[derive(Debug)]
struct Flight {
    id: u64,
    sent: Instant,
    api: ApiKey,
    version: i16,
    request: Value,
    purpose: Purpose,
}

#[derive(Debug)]
struct SideRun {
    side: Side,
    knowledge: Knowledge,
    bindings: Bindings,
    mapper: Mapper,
    task: Task,
    flight: Option<Flight>,
    retry_at: Option<Instant>,
    exchanges: u64,
    waited: Duration,
    retried: Duration,
}

impl SideRun {
    fn new(side: Side) -> SideRun {
        SideRun {
            side,
            knowledge: Knowledge::default(),
            bindings: Bindings::new(),
            mapper: Mapper::new(),
            task: Task::ApiVersions {
                version: ApiKey::ApiVersions.highest_stable_version(),
            },
            flight: None,
            retry_at: None,
            exchanges: 0,
            waited: Duration::ZERO,
            retried: Duration::ZERO,
        }
    }

    /// Whether the side has work left in its task.
    fn busy(&self) -> bool {
        match &self.task {
            Task::Idle => false,
            Task::Job(job) => !job.done() || self.flight.is_some(),
            Task::ApiVersions { .. } | Task::Metadata => true,
        }
    }
}

/// The engine of one run (see the module).
#[derive(Debug)]
pub struct Engine {
    config: Config,
    started: Instant,
    run_start_ms: i64,
    stage: Stage,
    sides: [SideRun; 2],
    cases: Vec<Case>,
    current: usize,
    case_started: Option<Instant>,
    results: Vec<CaseResult>,
    notes: Vec<String>,
    allow_used: Vec<bool>,
    unreachable: Option<Unreachable>,
    next_id: u64,
    /// The run's topics, by logical name.
    topics: Vec<(String, TopicSpec)>,
    pending_release: Option<usize>,
}

impl Engine {
    /// An engine for `config`, starting at `now`, which is `unix_ms`
    /// milliseconds since the Unix epoch by the wall clock (times in
    /// answers are checked against it).
    pub fn new(config: Config, now: Instant, unix_ms: i64) -> Engine {
        let allow_used = vec![false; config.allow.entries().len()];
        Engine {
            config,
            started: now,
            run_start_ms: unix_ms,
            stage: Stage::Bootstrap,
            sides: [SideRun::new(Side::Reference), SideRun::new(Side::Candidate)],
            cases: Vec::new(),
            current: 0,
            case_started: None,
            results: Vec::new(),
            notes: Vec::new(),
            allow_used,
            unreachable: None,
            next_id: 0,
            topics: Vec::new(),
            pending_release: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// How far the run is.
    pub fn progress(&self) -> Progress {
        Progress {
            stage: self.stage,
            done: self.results.len(),
            total: self.cases.len(),
        }
    }

    /// What a side has told the run so far.
    pub fn knowledge(&self, side: Side) -> &Knowledge {
        &self.sides[side.index()].knowledge
    }

    /// What to do next (see [`Action`]).
    pub fn poll(&mut self, now: Instant) -> Action {
        loop {
            if let Some(case) = self.pending_release.take() {
                return Action::Release { case };
            }
            if self.unreachable.is_some() {
                self.stage = Stage::Done;
            }
            if self.stage == Stage::Done {
                return Action::Done;
            }
            if !self.sides.iter().any(SideRun::busy) {
                self.next_stage(now);
                continue;
            }
            for i in 0..2 {
                if let Some(exchange) = self.drive(i, now) {
                    return Action::Send(Box::new(exchange));
                }
            }
            if !self.sides.iter().any(SideRun::busy) {
                continue;
            }
            let timers = self.sides.iter().filter_map(|s| s.retry_at).min();
            return match timers {
                Some(at) => Action::Wait(at),
                None => Action::Idle,
            };
        }
    }

    /// Takes the outcome of request `id`, which arrived at `now`.
    pub fn deliver(&mut self, id: u64, outcome: Outcome, now: Instant) {
        let Some(i) = self
            .sides
            .iter()
            .position(|s| s.flight.as_ref().is_some_and(|f| f.id == id))
        else {
            return;
        };
        let Some(flight) = self.sides[i].flight.take() else {
            return;
        };
        let run = &mut self.sides[i];
        run.waited += now.saturating_duration_since(flight.sent);
        let answered_ms = self.run_start_ms
            + i64::try_from(now.saturating_duration_since(self.started).as_millis())
                .unwrap_or(i64::MAX / 2);
        let decoded = match outcome {
            Outcome::Answer(frame) => {
                match ResponseFrame::decode(&frame, flight.api, flight.version) {
                    Ok(response) => Ok(Some(response.body.into_owned().to_json(flight.version))),
                    Err(error) => Err(format!("an answer that does not decode: {error}")),
                }
            }
            Outcome::NoAnswer => Ok(None),
            Outcome::Failed(failure) => Err(failure.describe()),
        };
        match flight.purpose {
            Purpose::Boot => self.boot_answer(i, decoded),
            Purpose::Lookup { key_type, key } => {
                self.lookup_answer(i, &flight.request, key_type, &key, decoded, now)
            }
            Purpose::Step { .. } => self.step_answer(i, &flight, decoded, answered_ms, now),
        }
    }

    /// The report, once [`Action::Done`]; the side that could not be
    /// reached, if one could not.
    pub fn finish(self, now: Instant) -> Result<Report, Unreachable> {
        if let Some(unreachable) = self.unreachable {
            return Err(unreachable);
        }
        let side_report = |run: &SideRun, address: &str| SideReport {
            address: address.to_owned(),
            cluster_id: run.knowledge.cluster_id.clone(),
            brokers: run.knowledge.brokers.len(),
            versions: run.knowledge.versions.clone(),
            exchanges: run.exchanges,
            waited: run.waited,
            retried: run.retried,
        };
        let unused_allow = self
            .config
            .allow
            .entries()
            .iter()
            .zip(&self.allow_used)
            .filter(|(_, used)| !**used)
            .map(|(entry, _)| entry.clone())
            .collect();
        Ok(Report {
            run: self.config.names.run().to_owned(),
            reference: side_report(&self.sides[0], &self.config.reference),
            candidate: side_report(&self.sides[1], &self.config.candidate),
            cases: self.results,
            notes: self.notes,
            unused_allow,
            elapsed: now.saturating_duration_since(self.started),
        })
    }

    // ---- stages ----

    fn next_stage(&mut self, now: Instant) {
        match self.stage {
            Stage::Bootstrap => {
                if self.unreachable.is_some() {
                    self.stage = Stage::Done;
                    return;
                }
                self.plan();
                self.stage = Stage::Setup;
                if self
                    .cases
                    .iter()
                    .any(|c| matches!(c.check, Check::Steps(_)))
                {
                    for i in 0..2 {
                        let steps = self.setup_steps(i);
                        self.sides[i].task = Task::Job(Box::new(Job::new(
                            steps,
                            now,
                            now + self.setup_time(),
                            None,
                        )));
                    }
                }
            }
            Stage::Setup => {
                for i in 0..2 {
                    self.bind_topic_ids(i);
                }
                self.stage = Stage::Cases;
                self.start_case(now);
            }
            Stage::Cases => {
                self.finish_case();
                self.current += 1;
                self.start_case(now);
            }
            Stage::Teardown => {
                self.teardown_notes();
                self.stage = Stage::Done;
            }
            Stage::Done => {}
        }
    }

    fn setup_time(&self) -> Duration {
        self.config.timeout.max(MIN_SETUP_TIME)
    }

    /// Builds the cases once both sides have bootstrapped, and binds the
    /// run's names and batches on each side.
    fn plan(&mut self) {
        let (reference, candidate) = (&self.sides[0].knowledge, &self.sides[1].knowledge);
        if self.config.surface {
            self.cases
                .extend(surface::cases(reference, candidate, &self.config.apis));
        }
        if self.config.sweep {
            self.cases
                .extend(sweep::cases(reference, candidate, &self.config.apis));
            self.topics
                .push((sweep::TOPIC.to_owned(), TopicSpec::default()));
        }
        let scenarios = scenario::selected(&self.config.scenarios);
        let cases = scenario::cases(&scenarios, reference, candidate, &self.config.apis);
        if !cases.is_empty() {
            for (name, spec) in scenario::topics(&scenarios) {
                if !self.topics.iter().any(|(t, _)| *t == name) {
                    self.topics.push((name, spec));
                }
            }
        }
        self.cases.extend(cases);
        if let Some(replay) = &self.config.replay {
            for case in &replay.cases {
                let advertised = case
                    .api
                    .map(|api| [reference, candidate].map(|k| k.versions.contains_key(&api.key())));
                if let Some([false, false]) = advertised {
                    self.notes.push(format!(
                        "{}: not replayed: neither side advertises the api",
                        case.name
                    ));
                    continue;
                }
                if !self.config.apis.is_empty()
                    && !case.api.is_some_and(|api| self.config.apis.contains(&api))
                {
                    continue;
                }
                self.cases.push(case.clone());
            }
            for (name, spec) in &replay.topics {
                if !self.topics.iter().any(|(t, _)| t == name) {
                    self.topics.push((name.clone(), spec.clone()));
                }
            }
            for skipped in &replay.skipped {
                self.notes
                    .push(format!("replay {}: skipped: {}", skipped.at, skipped.why));
            }
        }
        let mut names = BTreeSet::new();
        for case in &self.cases {
            if let Check::Steps(steps) = &case.check {
                for step in steps {
                    for template in [&step.body, &route_template(&step.route)] {
                        // The data's placeholders were checked when loaded.
                        names.extend(placeholders(template).unwrap_or_default());
                    }
                }
            }
        }
        for (topic, _) in &self.topics {
            names.insert(format!("topic.{topic}"));
        }
        let batches = sweep::batches();
        for run in &mut self.sides {
            self.config.names.bind(
                run.side,
                names.iter().map(String::as_str),
                &mut run.bindings,
            );
            for (codec, batch) in &batches {
                run.bindings
                    .insert(format!("records.{codec}"), batch.clone());
            }
        }
    }

    fn setup_steps(&self, i: usize) -> Vec<JobStep> {
        let run = &self.sides[i];
        if self.topics.is_empty() {
            return Vec::new();
        }
        let names: Vec<String> = self
            .topics
            .iter()
            .map(|(t, _)| self.config.names.name(run.side, t))
            .collect();
        let prepare = |api: ApiKey, route: Route, body: Value, until: Option<Until>| {
            let mut step = Step::new(api, VersionChoice::Negotiated, route, body);
            step.compare = false;
            step.until = until;
            step
        };
        let mut steps = Vec::new();
        let creatable: Vec<Value> = self
            .topics
            .iter()
            .zip(&names)
            .map(|((_, spec), name)| {
                // The run's batches carry timestamps of 2023, which a
                // retention by time would delete at any moment: the run's
                // topics keep their records unless a scenario says otherwise.
                let mut configs = spec.configs.clone();
                configs
                    .entry(RETENTION.to_owned())
                    .or_insert_with(|| "-1".to_owned());
                let configs: Vec<Value> = configs
                    .iter()
                    .map(|(k, v)| json!({"name": k, "value": v}))
                    .collect();
                json!({"name": name, "numPartitions": spec.partitions, "replicationFactor": 1,
                       "assignments": [], "configs": configs})
            })
            .collect();
        steps.push(JobStep {
            step: prepare(
                ApiKey::CreateTopics,
                Route::Bootstrap,
                json!({"topics": creatable, "timeoutMs": 30_000, "validateOnly": false}),
                None,
            ),
            node: None,
            version: None,
        });
        let wanted: Vec<Value> = names
            .iter()
            .map(|name| json!({"name": name, "topicId": ZERO_UUID}))
            .collect();
        let led = Until {
            no_errors: true,
            at_least: [("topics[*].partitions[*].leaderId".to_owned(), 0)].into(),
            ..Until::default()
        };
        for &node in run.knowledge.brokers.keys() {
            steps.push(JobStep {
                step: prepare(
                    ApiKey::Metadata,
                    Route::Bootstrap,
                    json!({"topics": wanted, "allowAutoTopicCreation": false}),
                    Some(led.clone()),
                ),
                node: Some(node),
                version: None,
            });
        }
        let served = Until {
            no_errors: true,
            ..Until::default()
        };
        for ((_, spec), name) in self.topics.iter().zip(&names) {
            for partition in 0..spec.partitions {
                steps.push(JobStep {
                    step: prepare(
                        ApiKey::ListOffsets,
                        Route::Leader {
                            topic: name.clone(),
                            partition,
                        },
                        json!({"replicaId": -1, "topics": [{"name": name, "partitions": [
                            {"partitionIndex": partition, "currentLeaderEpoch": -1, "timestamp": -1}
                        ]}]}),
                        Some(served.clone()),
                    ),
                    node: None,
                    version: None,
                });
            }
        }
        steps
    }

    fn bind_topic_ids(&mut self, i: usize) {
        let run = &mut self.sides[i];
        if let Task::Job(job) = std::mem::replace(&mut run.task, Task::Idle) {
            for (step, seen) in job.steps.iter().zip(&job.seen) {
                let fine = match seen {
                    Seen::Answer(answer) => step.step.until.as_ref().map_or_else(
                        || error_codes(answer).iter().all(|&c| c == 0),
                        |u| u.holds(answer),
                    ),
                    _ => false,
                };
                if !fine {
                    self.notes.push(format!(
                        "the {}: setup {} did not succeed: {}",
                        run.side,
                        step.step.api.name(),
                        self.config
                            .names
                            .unprefix(run.side, &seen.value().to_string())
                    ));
                }
            }
        }
        for (topic, _) in &self.topics {
            let name = self.config.names.name(run.side, topic);
            if let Some(id) = run.knowledge.topics.get(&name).and_then(|t| t.id.clone()) {
                run.bindings.insert(format!("topicId.{topic}"), id);
            }
        }
    }

    fn start_case(&mut self, now: Instant) {
        loop {
            let Some(case) = self.cases.get(self.current) else {
                self.teardown(now);
                return;
            };
            match &case.check {
                Check::Surface(facet) => {
                    let values = [0, 1].map(|i| surface::value(facet, &self.sides[i].knowledge));
                    let result = self.surface_result(case, values);
                    self.record(result);
                    self.current += 1;
                }
                Check::Steps(steps) => {
                    let deadline = now + self.config.timeout;
                    let fixed: Vec<JobStep> = steps
                        .iter()
                        .map(|step| JobStep {
                            step: step.clone(),
                            node: None,
                            version: self.common_version(step),
                        })
                        .collect();
                    for run in &mut self.sides {
                        run.task = Task::Job(Box::new(Job::new(
                            fixed.clone(),
                            now,
                            deadline,
                            Some(self.current),
                        )));
                    }
                    self.case_started = Some(now);
                    return;
                }
            }
        }
    }

    /// The version both sides will send a step at, when both have one.
    fn common_version(&self, step: &Step) -> Option<i16> {
        let api = step.api;
        let ranges = [0, 1].map(|i| self.sides[i].knowledge.versions.get(&api.key()).copied());
        let [Some((rmin, rmax)), Some((cmin, cmax))] = ranges else {
            return None;
        };
        let (low, high) = (rmin.max(cmin), rmax.min(cmax));
        match step.version {
            VersionChoice::Exact(v) => Some(v),
            VersionChoice::Negotiated => negotiated(api, low, high, i16::MAX),
            VersionChoice::AtMost(most) => negotiated(api, low, high, most),
        }
    }

    fn teardown(&mut self, now: Instant) {
        self.stage = Stage::Teardown;
        let capture_creates = self
            .config
            .replay
            .as_ref()
            .is_some_and(|r| !r.created_by_capture.is_empty());
        if self.topics.is_empty() && !capture_creates {
            return;
        }
        for i in 0..2 {
            let run = &self.sides[i];
            let side = run.side;
            let created = self
                .config
                .replay
                .iter()
                .flat_map(|r| r.created_by_capture.iter());
            let names: Vec<String> = self
                .topics
                .iter()
                .map(|(t, _)| t)
                .chain(created)
                .map(|t| self.config.names.name(side, t))
                .collect();
            // The groups first: deleting a share group whose topic is
            // being deleted can hold Kafka's answer for its request timeout.
            let mut steps = Vec::new();
            let delete_topics = JobStep {
                step: Step {
                    compare: false,
                    ..Step::new(
                        ApiKey::DeleteTopics,
                        VersionChoice::Negotiated,
                        Route::Bootstrap,
                        json!({
                            "topics": names.iter().map(|n| json!({"name": n, "topicId": ZERO_UUID})).collect::<Vec<_>>(),
                            "topicNames": names,
                            "timeoutMs": 30_000
                        }),
                    )
                },
                node: None,
                version: None,
            };
            let groups = run.knowledge.coordinators.keys().filter(|(kind, key)| {
                *kind == key_type::GROUP && self.config.names.owns(side, key)
            });
            for (_, group) in groups {
                steps.push(JobStep {
                    step: Step {
                        compare: false,
                        ..Step::new(
                            ApiKey::DeleteGroups,
                            VersionChoice::Negotiated,
                            Route::Coordinator(CoordinatorKey::Group(group.clone())),
                            json!({"groupsNames": [group]}),
                        )
                    },
                    node: None,
                    version: None,
                });
            }
            steps.push(delete_topics);
            let deadline = now + self.setup_time();
            self.sides[i].task = Task::Job(Box::new(Job::new(steps, now, deadline, None)));
        }
    }

    fn teardown_notes(&mut self) {
        for run in &mut self.sides {
            let Task::Job(job) = std::mem::replace(&mut run.task, Task::Idle) else {
                continue;
            };
            for (step, seen) in job.steps.iter().zip(&job.seen) {
                // A group that is gone already, or still has members, is
                // not the run's fault.
                let fine = match seen {
                    Seen::Answer(answer) => error_codes(answer).iter().all(|&c| {
                        c == 0
                            || c == i64::from(ErrorCode::GroupIdNotFound.code())
                            || c == i64::from(ErrorCode::NonEmptyGroup.code())
                    }),
                    _ => false,
                };
                if !fine {
                    self.notes.push(format!(
                        "the {}: teardown {} did not succeed: {}",
                        run.side,
                        step.step.api.name(),
                        self.config
                            .names
                            .unprefix(run.side, &seen.value().to_string())
                    ));
                }
            }
        }
    }

    // ---- one side ----

    /// The next request side `i` sends, if it has one to send now;
    /// finishes its task when it has none left.
    fn drive(&mut self, i: usize, now: Instant) -> Option<Exchange> {
        let run = &self.sides[i];
        if run.flight.is_some() {
            return None;
        }
        if let Some(at) = run.retry_at {
            if now < at {
                return None;
            }
            // A retry is set RETRY_AFTER ahead of the answer that asked
            // for it.
            let run = &mut self.sides[i];
            run.retried += now.saturating_duration_since(at) + RETRY_AFTER;
            run.retry_at = None;
        }
        match &self.sides[i].task {
            Task::Idle => None,
            Task::ApiVersions { version } => {
                let version = *version;
                let body = json!({"clientSoftwareName": "kafka-wire-compat",
                                  "clientSoftwareVersion": env!("CARGO_PKG_VERSION")});
                self.boot_exchange(i, ApiKey::ApiVersions, version, &body, now)
            }
            Task::Metadata => {
                let Some(version) = own_version(&self.sides[i].knowledge, ApiKey::Metadata) else {
                    self.unreachable(
                        i,
                        "it advertises no Metadata version kafka-wire supports".into(),
                    );
                    return None;
                };
                let body = json!({"topics": [], "allowAutoTopicCreation": false});
                self.boot_exchange(i, ApiKey::Metadata, version, &body, now)
            }
            Task::Job(_) => self.drive_job(i, now),
        }
    }

    fn boot_exchange(
        &mut self,
        i: usize,
        api: ApiKey,
        version: i16,
        given: &Value,
        now: Instant,
    ) -> Option<Exchange> {
        let body = match fit(api, version, given) {
            Ok(body) => body,
            Err(error) => {
                self.unreachable(i, error.to_string());
                return None;
            }
        };
        let deadline = now + self.config.timeout;
        Some(self.send(
            i,
            Target::Bootstrap,
            ConnectionTag::Shared,
            api,
            version,
            body,
            deadline,
            Purpose::Boot,
            now,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn send(
        &mut self,
        i: usize,
        target: Target,
        connection: ConnectionTag,
        api: ApiKey,
        version: i16,
        body: RequestBody<'static>,
        deadline: Instant,
        purpose: Purpose,
        now: Instant,
    ) -> Exchange {
        self.next_id += 1;
        let id = self.next_id;
        let expects_response = match &body {
            RequestBody::Produce(produce) => produce.acks != 0,
            _ => true,
        };
        let run = &mut self.sides[i];
        run.exchanges += 1;
        run.flight = Some(Flight {
            id,
            sent: now,
            api,
            version,
            request: body.to_json(version),
            purpose,
        });
        Exchange {
            id,
            side: run.side,
            target,
            connection,
            api,
            version,
            body,
            expects_response,
            deadline,
        }
    }

    fn unreachable(&mut self, i: usize, why: String) {
        let side = self.sides[i].side;
        self.sides[i].task = Task::Idle;
        if self.unreachable.is_none() {
            self.unreachable = Some(Unreachable {
                side,
                address: self.config.address(side).to_owned(),
                why,
            });
        }
    }

    fn boot_answer(&mut self, i: usize, decoded: Result<Option<Value>, String>) {
        let answer = match decoded {
            Ok(Some(answer)) => answer,
            Ok(None) => return self.unreachable(i, "no answer".into()),
            Err(why) => return self.unreachable(i, why),
        };
        let run = &mut self.sides[i];
        match run.task {
            Task::ApiVersions { version } => {
                let code = answer["errorCode"].as_i64().unwrap_or(-1);
                let theirs = answer["apiKeys"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|k| k["apiKey"].as_i64() == Some(ApiKey::ApiVersions.key().into()))
                    .and_then(|k| k["maxVersion"].as_i64())
                    .and_then(|v| i16::try_from(v).ok());
                if code == i64::from(ErrorCode::UnsupportedVersion.code()) {
                    match theirs {
                        Some(lower) if (0..version).contains(&lower) => {
                            run.task = Task::ApiVersions { version: lower };
                        }
                        _ => self.unreachable(
                            i,
                            format!(
                                "ApiVersions v{version} is refused and no lower version is offered"
                            ),
                        ),
                    }
                    return;
                }
                if code != 0 {
                    return self.unreachable(i, format!("ApiVersions answers error code {code}"));
                }
                run.knowledge.learn_api_versions(&answer);
                run.task = Task::Metadata;
            }
            Task::Metadata => {
                run.knowledge.learn_metadata(&answer);
                if run.knowledge.brokers.is_empty() {
                    return self.unreachable(i, "its Metadata lists no broker".into());
                }
                run.task = Task::Idle;
            }
            _ => {}
        }
    }

    fn drive_job(&mut self, i: usize, now: Instant) -> Option<Exchange> {
        loop {
            let run = &mut self.sides[i];
            let Task::Job(job) = &mut run.task else {
                return None;
            };
            if job.done() {
                return None;
            }
            if now >= job.deadline {
                let seen = job.provisional.take().unwrap_or(Seen::NotSent);
                job.finish_step(seen, None);
                continue;
            }
            let mut js = job.steps[job.index].clone();
            if js.step.route == Route::EveryBroker {
                let fanout = job.fanout.get_or_insert_with(|| {
                    Box::new(Fanout {
                        nodes: run.knowledge.brokers.keys().copied().collect(),
                        answered: 0,
                        merged: Value::Null,
                    })
                });
                js.node = fanout.nodes.get(fanout.answered).copied();
            }
            let deadline = job.deadline;
            let case = job.case;
            let step = &js.step;
            // The version: the one fixed for both sides, else the side's own.
            let own = match step.version {
                VersionChoice::Exact(v) => Some(v),
                VersionChoice::Negotiated => own_version(&run.knowledge, step.api),
                VersionChoice::AtMost(most) => {
                    own_version(&run.knowledge, step.api).map(|v| v.min(most))
                }
            };
            let advertises = |v: i16| {
                run.knowledge
                    .versions
                    .get(&step.api.key())
                    .is_some_and(|&(min, max)| (min..=max).contains(&v))
            };
            let version = match (js.version, own, step.version) {
                (_, _, VersionChoice::Exact(v)) if step.unadvertised => v,
                (Some(v), _, _) if advertises(v) => v,
                (None, Some(v), _) if case.is_some() && advertises(v) => {
                    job.finish_step(
                        Seen::Unroutable(format!(
                            "the other side advertises no version of {} to send",
                            step.api.name()
                        )),
                        None,
                    );
                    continue;
                }
                (None, Some(v), _) if advertises(v) => v,
                (fixed, own, _) => {
                    let why = match fixed.or(own) {
                        Some(v) => format!("{} v{v}", step.api.name()),
                        None => step.api.name().to_owned(),
                    };
                    job.finish_step(Seen::NotAdvertised(why), None);
                    continue;
                }
            };
            // The body.
            let built = run
                .bindings
                .resolve(&step.body)
                .map_err(|e| e.to_string())
                .and_then(|mut given| {
                    batch::build_in(&mut given)?;
                    fit(step.api, version, &given).map_err(|e| e.to_string())
                });
            let body = match built {
                Ok(body) => body,
                Err(why) => {
                    job.finish_step(Seen::Unbuildable(why), None);
                    continue;
                }
            };
            let request = body.to_json(version);
            // The broker.
            let mut coordinator = None;
            let target = match route(&run.knowledge, &run.bindings, &js, &request) {
                Routed::To(target) => target,
                Routed::ToCoordinator(target, key) => {
                    coordinator = Some(key);
                    target
                }
                Routed::Lookup { key_type, key } => {
                    let Some(fc) = own_version(&run.knowledge, ApiKey::FindCoordinator) else {
                        job.finish_step(
                            Seen::Unroutable("FindCoordinator is not advertised".into()),
                            None,
                        );
                        continue;
                    };
                    let given = if fc >= 4 {
                        json!({"keyType": key_type, "coordinatorKeys": [key]})
                    } else {
                        json!({"key": key, "keyType": key_type})
                    };
                    let body = match fit(ApiKey::FindCoordinator, fc, &given) {
                        Ok(body) => body,
                        Err(error) => {
                            job.finish_step(Seen::Unbuildable(error.to_string()), None);
                            continue;
                        }
                    };
                    return Some(self.send(
                        i,
                        Target::Bootstrap,
                        ConnectionTag::Shared,
                        ApiKey::FindCoordinator,
                        fc,
                        body,
                        deadline,
                        Purpose::Lookup { key_type, key },
                        now,
                    ));
                }
                Routed::Fail(why) => {
                    job.finish_step(Seen::Unroutable(why), None);
                    continue;
                }
            };
            let connection = match (&step.connection, case) {
                (Connection::Own { name, authenticate }, Some(case)) => ConnectionTag::Own {
                    case,
                    name: name.clone(),
                    authenticate: *authenticate,
                },
                _ => ConnectionTag::Shared,
            };
            return Some(self.send(
                i,
                target,
                connection,
                step.api,
                version,
                body,
                deadline,
                Purpose::Step { coordinator },
                now,
            ));
        }
    }

    fn lookup_answer(
        &mut self,
        i: usize,
        request: &Value,
        key_type: i64,
        key: &str,
        decoded: Result<Option<Value>, String>,
        now: Instant,
    ) {
        let run = &mut self.sides[i];
        let Task::Job(job) = &mut run.task else {
            return;
        };
        match decoded {
            Ok(Some(answer)) => {
                run.knowledge.learn_coordinator(request, &answer);
                if run
                    .knowledge
                    .coordinators
                    .contains_key(&(key_type, key.to_owned()))
                {
                    return;
                }
                // Loading, or not available yet: as a client, ask again.
                let codes = error_codes(&answer);
                let retriable = [
                    ErrorCode::CoordinatorLoadInProgress,
                    ErrorCode::CoordinatorNotAvailable,
                    ErrorCode::NotCoordinator,
                ]
                .iter()
                .any(|c| codes.contains(&i64::from(c.code())));
                if retriable && now + RETRY_AFTER < job.deadline {
                    run.retry_at = Some(now + RETRY_AFTER);
                } else {
                    job.finish_step(
                        Seen::Unroutable(format!(
                            "no coordinator for {key}: FindCoordinator answered {answer}"
                        )),
                        None,
                    );
                }
            }
            Ok(None) => job.finish_step(
                Seen::Unroutable("FindCoordinator got no answer".into()),
                None,
            ),
            Err(why) => job.finish_step(Seen::Unroutable(format!("FindCoordinator: {why}")), None),
        }
    }

    fn step_answer(
        &mut self,
        i: usize,
        flight: &Flight,
        decoded: Result<Option<Value>, String>,
        answered_ms: i64,
        now: Instant,
    ) {
        let timeout_ms = i64::try_from(self.config.timeout.as_millis()).unwrap_or(i64::MAX);
        let run_start_ms = self.run_start_ms;
        let started = self.started;
        let names = &self.config.names;
        let run = &mut self.sides[i];
        let Task::Job(job) = &mut run.task else {
            return;
        };
        let Some(js) = job.steps.get(job.index) else {
            return;
        };
        let step = &js.step;
        let mut answer = match decoded {
            Ok(Some(answer)) => answer,
            Ok(None) => return job.finish_step(Seen::NoAnswer, Some(flight.request.clone())),
            Err(why) => return job.finish_step(Seen::Failed(why), Some(flight.request.clone())),
        };
        // A step sent to every broker: the answers merged, one by one.
        if let Some(fanout) = &mut job.fanout {
            merge_listing(&mut fanout.merged, answer);
            fanout.answered += 1;
            if fanout.answered < fanout.nodes.len() {
                run.retry_at = Some(now);
                return;
            }
            answer = std::mem::take(&mut fanout.merged);
            job.fanout = None;
        }
        // Learn as a client does, then what the step asks.
        match flight.api {
            ApiKey::Metadata => run.knowledge.learn_metadata(&answer),
            ApiKey::CreateTopics => run.knowledge.learn_created_topics(&answer),
            ApiKey::FindCoordinator => run.knowledge.learn_coordinator(&flight.request, &answer),
            _ => {}
        }
        // A coordinator that moved or is not available any more is looked
        // up again, as a client does.
        if let Purpose::Step {
            coordinator: Some(key),
        } = &flight.purpose
        {
            let moved = [
                ErrorCode::NotCoordinator,
                ErrorCode::CoordinatorNotAvailable,
            ];
            let codes = error_codes(&answer);
            if moved.iter().any(|c| codes.contains(&i64::from(c.code()))) {
                run.knowledge.coordinators.remove(key);
            }
        }
        for (name, path) in &step.learn {
            let found = crate::path::JsonPath::parse(path)
                .ok()
                .and_then(|p| p.first(&answer).cloned());
            if let Some(value) = found {
                run.bindings.insert(name.clone(), value);
            }
        }
        let final_answer = step.until.as_ref().is_none_or(|u| u.holds(&answer));
        if job.case.is_some() && step.compare {
            let cx = Context {
                side: run.side,
                names,
                knowledge: &run.knowledge,
                api: flight.api,
                version: flight.version,
                request: &flight.request,
                window_start_ms: run_start_ms
                    + i64::try_from(job.started.saturating_duration_since(started).as_millis())
                        .unwrap_or(0),
                answered_ms,
                run_start_ms,
                timeout_ms,
            };
            normalize(&mut answer, &cx, &mut run.mapper);
        }
        if !final_answer && now + RETRY_AFTER < job.deadline {
            job.provisional = Some(Seen::Answer(answer));
            run.retry_at = Some(now + RETRY_AFTER);
            return;
        }
        job.finish_step(Seen::Answer(answer), Some(flight.request.clone()));
    }

    // ---- verdicts ----

    fn finish_case(&mut self) {
        let Some(case) = self.cases.get(self.current).cloned() else {
            return;
        };
        let jobs: Vec<Job> = self
            .sides
            .iter_mut()
            .filter_map(|run| match std::mem::replace(&mut run.task, Task::Idle) {
                Task::Job(job) => Some(*job),
                _ => None,
            })
            .collect();
        let [reference, candidate] = jobs.as_slice() else {
            return;
        };
        let Check::Steps(steps) = &case.check else {
            return;
        };
        let compared: Vec<usize> = (0..steps.len()).filter(|&s| steps[s].compare).collect();
        let mut differences = Vec::new();
        let mut truncated = 0;
        for &s in &compared {
            let prefix = if compared.len() > 1 {
                let name = steps[s]
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("{}#{}", steps[s].api.name(), s + 1));
                format!("{name}: ")
            } else {
                String::new()
            };
            let (r, c) = (&reference.seen[s], &candidate.seen[s]);
            match (r, c) {
                (Seen::Answer(rv), Seen::Answer(cv)) => {
                    let found = diff(rv, cv);
                    truncated += found.truncated;
                    differences.extend(found.differences.into_iter().map(|d| Difference {
                        path: join_path(&prefix, &d.path),
                        ..d
                    }));
                }
                (r, c) if r == c => {}
                (r, c) => differences.push(Difference {
                    path: prefix.trim_end_matches(": ").to_owned(),
                    reference: r.value(),
                    candidate: c.value(),
                }),
            }
        }
        let lacks = |job: &Job| {
            !compared.is_empty()
                && compared
                    .iter()
                    .all(|&s| matches!(job.seen[s], Seen::NotAdvertised(_)))
        };
        let verdict = match (lacks(reference), lacks(candidate)) {
            _ if differences.is_empty() && truncated == 0 => Verdict::Same,
            (false, true) => Verdict::OnlyReference,
            (true, false) => Verdict::OnlyCandidate,
            _ => Verdict::Differ,
        };
        let first = compared.first().copied();
        let request = first
            .and_then(|s| {
                reference.requests[s]
                    .clone()
                    .or_else(|| candidate.requests[s].clone())
            })
            .map(|r| {
                let side = if first.and_then(|s| reference.requests[s].as_ref()).is_some() {
                    Side::Reference
                } else {
                    Side::Candidate
                };
                unprefixed(&self.config.names, side, r)
            });
        let result = CaseResult {
            case: case.name.clone(),
            area: case.area,
            api: case.api,
            version: case.version,
            verdict,
            differences,
            truncated,
            reasons: Vec::new(),
            request,
        };
        let owns_connections = steps
            .iter()
            .any(|s| matches!(s.connection, Connection::Own { .. }));
        if owns_connections {
            self.pending_release = Some(self.current);
        }
        self.record(result);
    }

    fn surface_result(&self, case: &Case, values: [Option<Value>; 2]) -> CaseResult {
        let [reference, candidate] = values;
        let (verdict, differences) = match (&reference, &candidate) {
            (Some(r), Some(c)) => {
                let found = diff(r, c).differences;
                let verdict = if found.is_empty() {
                    Verdict::Same
                } else {
                    Verdict::Differ
                };
                (verdict, found)
            }
            (Some(r), None) => (
                Verdict::OnlyReference,
                vec![Difference {
                    path: String::new(),
                    reference: r.clone(),
                    candidate: Value::Null,
                }],
            ),
            (None, Some(c)) => (
                Verdict::OnlyCandidate,
                vec![Difference {
                    path: String::new(),
                    reference: Value::Null,
                    candidate: c.clone(),
                }],
            ),
            (None, None) => (Verdict::Same, Vec::new()),
        };
        CaseResult {
            case: case.name.clone(),
            area: case.area,
            api: case.api,
            version: case.version,
            verdict,
            differences,
            truncated: 0,
            reasons: Vec::new(),
            request: None,
        }
    }

    /// Applies the allow list and keeps the result.
    fn record(&mut self, mut result: CaseResult) {
        if result.verdict != Verdict::Same && result.truncated == 0 {
            let mut reasons = Vec::new();
            let mut all = !result.differences.is_empty();
            for difference in &result.differences {
                let found = self
                    .config
                    .allow
                    .entries()
                    .iter()
                    .position(|e| e.allows(&result.case, &difference.path));
                match found {
                    Some(at) => {
                        self.allow_used[at] = true;
                        let reason = &self.config.allow.entries()[at].reason;
                        if !reasons.contains(reason) {
                            reasons.push(reason.clone());
                        }
                    }
                    None => all = false,
                }
            }
            if all {
                result.verdict = Verdict::Allowed;
            }
            result.reasons = reasons;
        }
        self.results.push(result);
    }
}

/// Where a step goes.
enum Routed {
    To(Target),
    /// To a coordinator known for (key type, key).
    ToCoordinator(Target, (i64, String)),
    Lookup {
        key_type: i64,
        key: String,
    },
    Fail(String),
}

fn route(knowledge: &Knowledge, bindings: &Bindings, js: &JobStep, request: &Value) -> Routed {
    let broker = |node: i64| match knowledge.brokers.get(&node) {
        Some(b) => Routed::To(Target::Broker {
            node,
            address: b.address(),
        }),
        None => Routed::Fail(format!(
            "node {node} is not among the brokers Metadata listed"
        )),
    };
    if let Some(node) = js.node {
        return broker(node);
    }
    let text = |template: &str| -> Result<String, String> {
        match bindings.resolve_str(template) {
            Ok(Value::String(s)) => Ok(s),
            Ok(other) => Ok(other.to_string()),
            Err(e) => Err(e.to_string()),
        }
    };
    match &js.step.route {
        Route::Bootstrap => Routed::To(Target::Bootstrap),
        // Each broker in turn, by `js.node` (set while the side has one).
        Route::EveryBroker => Routed::Fail("the side lists no broker".into()),
        Route::Leader { topic, partition } | Route::NotLeader { topic, partition } => {
            let topic = match text(topic) {
                Ok(t) => t,
                Err(e) => return Routed::Fail(e),
            };
            let Some(leader) = knowledge.leader(&topic, *partition) else {
                return Routed::Fail(format!("no leader known for {topic}/{partition}"));
            };
            if matches!(js.step.route, Route::Leader { .. }) {
                return broker(leader);
            }
            let other = knowledge.brokers.keys().copied().find(|&n| n != leader);
            broker(other.unwrap_or(leader))
        }
        Route::Coordinator(key) | Route::NotCoordinator(key) => {
            let name = match key.written().map(text) {
                Some(Ok(k)) => k,
                Some(Err(e)) => return Routed::Fail(e),
                None => match key.named_in(request) {
                    Some(k) => k,
                    // A request naming no group or transaction goes to any
                    // broker.
                    None => return Routed::To(Target::Bootstrap),
                },
            };
            let known = knowledge.coordinators.get(&(key.key_type(), name.clone()));
            if let (Route::NotCoordinator(_), Some(&node)) = (&js.step.route, known) {
                let other = knowledge.brokers.keys().copied().find(|&n| n != node);
                return broker(other.unwrap_or(node));
            }
            match known {
                Some(&node) => match broker(node) {
                    Routed::To(target) => Routed::ToCoordinator(target, (key.key_type(), name)),
                    other => other,
                },
                None => Routed::Lookup {
                    key_type: key.key_type(),
                    key: name,
                },
            }
        }
    }
}

/// The route's names, as a template, for the placeholders it uses.
fn route_template(route: &Route) -> Value {
    match route {
        Route::Bootstrap | Route::EveryBroker => Value::Null,
        Route::Leader { topic, .. } | Route::NotLeader { topic, .. } => Value::from(topic.clone()),
        Route::Coordinator(key) | Route::NotCoordinator(key) => {
            key.written().map_or(Value::Null, Value::from)
        }
    }
}

/// The highest version of `api` in `low..=high` (and at most `most`) that
/// kafka-wire supports as stable.
fn negotiated(api: ApiKey, low: i16, high: i16, most: i16) -> Option<i16> {
    let top = high.min(most).min(api.highest_stable_version());
    (top >= low.max(api.lowest_version())).then_some(top)
}

/// The version of `api` one side negotiates alone.
fn own_version(knowledge: &Knowledge, api: ApiKey) -> Option<i16> {
    let &(min, max) = knowledge.versions.get(&api.key())?;
    negotiated(api, min, max, i16::MAX)
}

/// Merges one broker's answer into the answers so far: lists (the
/// listing) are joined, the first error code that is not 0 is kept, and
/// every other field is the first broker's.
fn merge_listing(merged: &mut Value, answer: Value) {
    let (Value::Object(into), Value::Object(from)) = (&mut *merged, &answer) else {
        *merged = answer;
        return;
    };
    for (key, value) in from {
        match (into.get_mut(key), value) {
            (Some(Value::Array(items)), Value::Array(more)) => items.extend(more.iter().cloned()),
            (Some(code), Value::Number(n))
                if (key == "errorCode" || key.ends_with("ErrorCode"))
                    && code.as_i64() == Some(0)
                    && n.as_i64() != Some(0) =>
            {
                *code = value.clone();
            }
            (Some(_), _) => {}
            (None, _) => {
                into.insert(key.clone(), value.clone());
            }
        }
    }
}

fn join_path(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty()) {
        (true, _) => path.to_owned(),
        (false, true) => prefix.trim_end_matches(": ").to_owned(),
        (false, false) => format!("{prefix}{path}"),
    }
}

fn unprefixed(names: &RunNames, side: Side, value: Value) -> Value {
    match value {
        Value::String(s) => Value::String(names.unprefix(side, &s)),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|v| unprefixed(names, side, v))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, unprefixed(names, side, v)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests;
