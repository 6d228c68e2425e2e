//! Request controls: which requests a control matches, and what it does to
//! them. A control is checked in [`crate::dispatch::dispatch`] before the
//! request is routed; the first control (in the order added) that matches
//! and fires decides.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use kafka_wire::{ApiKey, ErrorCode, RequestBody, ResponseBody};

/// A test over a decoded request: the control matches only when it holds.
pub type Predicate = Arc<dyn Fn(&RequestBody<'_>) -> bool + Send + Sync>;

/// Builds the answer to a request from the request and its version.
pub type Responder = Arc<dyn Fn(&RequestBody<'_>, i16) -> ResponseBody<'static> + Send + Sync>;

/// What a control does to a request it fires on.
#[derive(Clone)]
pub enum Action {
    /// Handle the request normally (the control only counts it).
    Observe,
    /// Answer with this error code in every error code of the response,
    /// built from the request, without handling it.
    Error(i16),
    /// Answer with this error code for these (topic, partition) pairs only;
    /// the others are handled normally. Produce's chosen partitions are
    /// not appended to; for Fetch and ListOffsets the chosen partitions'
    /// answers are replaced. Other APIs get the error for the whole
    /// request.
    PartitionError(i16, Vec<(String, i32)>),
    /// Answer with what the closure builds, without handling the request.
    Respond(Responder),
    /// Wait for a time drawn uniformly from `min..=max`, then handle it.
    Delay {
        /// The shortest wait.
        min: Duration,
        /// The longest wait.
        max: Duration,
    },
    /// Never answer (the connection stays open and answers nothing more,
    /// as requests are answered in order).
    Hang,
    /// Close the connection without handling the request.
    DropBefore,
    /// Handle the request (it takes effect), then close the connection
    /// instead of answering.
    DropAfter,
}

impl fmt::Debug for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Observe => f.write_str("Observe"),
            Action::Error(code) => write!(f, "Error({})", ErrorCode::from_code(*code).name()),
            Action::PartitionError(code, parts) => write!(
                f,
                "PartitionError({}, {parts:?})",
                ErrorCode::from_code(*code).name()
            ),
            Action::Respond(_) => f.write_str("Respond(..)"),
            Action::Delay { min, max } => write!(f, "Delay({min:?}..={max:?})"),
            Action::Hang => f.write_str("Hang"),
            Action::DropBefore => f.write_str("DropBefore"),
            Action::DropAfter => f.write_str("DropAfter"),
        }
    }
}

/// A request control: what it matches (an api key or any, optionally a
/// broker, a connection, a predicate), how often it fires (every time
/// until removed, or `times` times; with a `rate`, each match fires with
/// that probability, drawn from the cluster's seeded generator), and its
/// [`Action`]. Built as
/// `Intercept::api(ApiKey::Produce).broker(1).times(2).error(ErrorCode::NotLeaderOrFollower)`
/// and added with [`FakeCluster::intercept`](crate::FakeCluster::intercept).
#[derive(Clone)]
pub struct Intercept {
    pub(crate) api: Option<ApiKey>,
    pub(crate) broker: Option<i32>,
    pub(crate) connection: Option<u64>,
    pub(crate) predicate: Option<Predicate>,
    pub(crate) times: Option<u64>,
    pub(crate) rate: Option<f64>,
    pub(crate) action: Action,
}

impl fmt::Debug for Intercept {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Intercept")
            .field("api", &self.api)
            .field("broker", &self.broker)
            .field("connection", &self.connection)
            .field("predicate", &self.predicate.is_some())
            .field("times", &self.times)
            .field("rate", &self.rate)
            .field("action", &self.action)
            .finish()
    }
}

impl Intercept {
    /// A control over requests of `api` that only observes them.
    pub fn api(api: ApiKey) -> Self {
        Intercept {
            api: Some(api),
            ..Self::any()
        }
    }

    /// A control over every request that only observes them.
    pub fn any() -> Self {
        Intercept {
            api: None,
            broker: None,
            connection: None,
            predicate: None,
            times: None,
            rate: None,
            action: Action::Observe,
        }
    }

    /// Only requests to this broker (node id).
    pub fn broker(mut self, node_id: i32) -> Self {
        self.broker = Some(node_id);
        self
    }

    /// Only requests on this connection (the number in logs and in
    /// [`RecordedRequest::connection`](crate::control::RecordedRequest)).
    pub fn connection(mut self, connection: u64) -> Self {
        self.connection = Some(connection);
        self
    }

    /// Only requests for which `predicate` holds.
    pub fn when(
        mut self,
        predicate: impl Fn(&RequestBody<'_>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.predicate = Some(Arc::new(predicate));
        self
    }

    /// Fires `n` times, then is removed (default: until removed).
    pub fn times(mut self, n: u64) -> Self {
        self.times = Some(n);
        self
    }

    /// Fires once, then is removed.
    pub fn once(self) -> Self {
        self.times(1)
    }

    /// Fires on a match with probability `p` (clamped to 0..=1).
    pub fn rate(mut self, p: f64) -> Self {
        self.rate = Some(if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) });
        self
    }

    /// Sets the action.
    pub fn action(mut self, action: Action) -> Self {
        self.action = action;
        self
    }

    /// Answers with `code` (see [`Action::Error`]).
    pub fn error(self, code: ErrorCode) -> Self {
        self.action(Action::Error(code.code()))
    }

    /// Answers with `code` for these partitions (see
    /// [`Action::PartitionError`]).
    pub fn partition_error(
        self,
        code: ErrorCode,
        partitions: impl IntoIterator<Item = (String, i32)>,
    ) -> Self {
        self.action(Action::PartitionError(
            code.code(),
            partitions.into_iter().collect(),
        ))
    }

    /// Answers with what `respond` builds from the request and version.
    pub fn respond(
        self,
        respond: impl Fn(&RequestBody<'_>, i16) -> ResponseBody<'static> + Send + Sync + 'static,
    ) -> Self {
        self.action(Action::Respond(Arc::new(respond)))
    }

    /// Waits `delay`, then handles the request.
    pub fn delay(self, delay: Duration) -> Self {
        self.action(Action::Delay {
            min: delay,
            max: delay,
        })
    }

    /// Waits a time drawn uniformly from `min..=max`, then handles it.
    pub fn delay_between(self, min: Duration, max: Duration) -> Self {
        self.action(Action::Delay {
            min: min.min(max),
            max: max.max(min),
        })
    }

    /// Never answers.
    pub fn hang(self) -> Self {
        self.action(Action::Hang)
    }

    /// Closes the connection without handling the request.
    pub fn drop_before(self) -> Self {
        self.action(Action::DropBefore)
    }

    /// Handles the request, then closes the connection instead of
    /// answering.
    pub fn drop_after(self) -> Self {
        self.action(Action::DropAfter)
    }

    /// Whether it matches a request (before its rate is drawn).
    pub(crate) fn matches(
        &self,
        api: ApiKey,
        node_id: i32,
        connection: u64,
        body: &RequestBody<'_>,
    ) -> bool {
        self.api.is_none_or(|a| a == api)
            && self.broker.is_none_or(|b| b == node_id)
            && self.connection.is_none_or(|c| c == connection)
            && self.predicate.as_ref().is_none_or(|p| p(body))
    }
}
