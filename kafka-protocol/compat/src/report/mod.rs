//! What a run found: one [`CaseResult`] per case, and the three forms of
//! the report: a text summary with each difference ([`text`]), one JSON
//! object per case ([`json`]) and a compatibility matrix in Markdown
//! ([`markdown`]).

pub mod json;
pub mod markdown;
pub mod text;

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use kafka_wire::ApiKey;
use serde::Serialize;
use serde_json::Value;

use crate::allow::AllowEntry;
use crate::case::Area;
use crate::compare::Difference;

/// A case's verdict. Its JSON names (`same`, `differ`, `only-reference`,
/// `only-candidate`, `allowed`) are pinned: outside tools read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The normalized answers are equal.
    Same,
    /// They differ, and not every difference is allowed.
    Differ,
    /// Only the reference has what the case is about.
    OnlyReference,
    /// Only the candidate has what the case is about.
    OnlyCandidate,
    /// They differ, and an allow-list entry accepts every difference.
    Allowed,
}

impl Verdict {
    /// The pinned name.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Differ => "differ",
            Verdict::OnlyReference => "only-reference",
            Verdict::OnlyCandidate => "only-candidate",
            Verdict::Allowed => "allowed",
        }
    }

    /// Whether the case leaves a difference no allow-list entry accepts.
    pub fn remains(self) -> bool {
        matches!(
            self,
            Verdict::Differ | Verdict::OnlyReference | Verdict::OnlyCandidate
        )
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of one case.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    /// The case's stable name.
    pub case: String,
    /// Its area.
    pub area: Area,
    /// The api it is about.
    pub api: Option<ApiKey>,
    /// The version it is about.
    pub version: Option<i16>,
    /// The verdict.
    pub verdict: Verdict,
    /// Every difference (allowed ones too), at most
    /// [`crate::compare::MAX_DIFFERENCES`].
    pub differences: Vec<Difference>,
    /// How many more differences there were.
    pub truncated: usize,
    /// The reasons of the allow-list entries that accepted differences.
    pub reasons: Vec<String>,
    /// The request of its first compared step, as the reference was sent
    /// it (the run's names written `<run>-`), for the report.
    pub request: Option<Value>,
}

/// What one side did in a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SideReport {
    /// Its bootstrap address.
    pub address: String,
    /// Its cluster id.
    pub cluster_id: Option<String>,
    /// Its brokers, as its Metadata listed them.
    pub brokers: usize,
    /// The versions it advertises: api key to (min, max).
    pub versions: BTreeMap<i16, (i16, i16)>,
    /// Requests it was sent.
    pub exchanges: u64,
    /// Time spent waiting for its answers.
    pub waited: Duration,
    /// Time spent before sending a step again whose answer was not yet
    /// final (a step's `until`, a coordinator loading): the retry timers.
    pub retried: Duration,
}

/// Counts of one api's cases, by verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Cases.
    pub cases: usize,
    /// `same`.
    pub same: usize,
    /// `differ`.
    pub differ: usize,
    /// `only-reference`.
    pub only_reference: usize,
    /// `only-candidate`.
    pub only_candidate: usize,
    /// `allowed`.
    pub allowed: usize,
}

impl Counts {
    fn add(&mut self, verdict: Verdict) {
        self.cases += 1;
        match verdict {
            Verdict::Same => self.same += 1,
            Verdict::Differ => self.differ += 1,
            Verdict::OnlyReference => self.only_reference += 1,
            Verdict::OnlyCandidate => self.only_candidate += 1,
            Verdict::Allowed => self.allowed += 1,
        }
    }

    /// Cases that leave a difference.
    pub fn remaining(&self) -> usize {
        self.differ + self.only_reference + self.only_candidate
    }
}

/// A whole run's report.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// The run's prefix.
    pub run: String,
    /// The reference.
    pub reference: SideReport,
    /// The candidate.
    pub candidate: SideReport,
    /// Every case's result, in the order run.
    pub cases: Vec<CaseResult>,
    /// What went wrong around the cases (a topic not created, a group not
    /// deleted), one line each.
    pub notes: Vec<String>,
    /// Allow-list entries that matched no difference.
    pub unused_allow: Vec<AllowEntry>,
    /// How long the run took.
    pub elapsed: Duration,
}

impl Report {
    /// Cases that leave a difference outside the allow list.
    pub fn remaining(&self) -> usize {
        self.cases.iter().filter(|c| c.verdict.remains()).count()
    }

    /// Counts over every case.
    pub fn totals(&self) -> Counts {
        let mut counts = Counts::default();
        for case in &self.cases {
            counts.add(case.verdict);
        }
        counts
    }

    /// Counts per area.
    pub fn by_area(&self) -> BTreeMap<Area, Counts> {
        let mut areas = BTreeMap::new();
        for case in &self.cases {
            areas
                .entry(case.area)
                .or_insert_with(Counts::default)
                .add(case.verdict);
        }
        areas
    }

    /// Counts per api (by name; `-` for cases of no api, the key for an api
    /// kafka-wire does not know), in key order.
    pub fn by_api(&self) -> Vec<(String, Counts)> {
        let mut apis: BTreeMap<(i32, String), Counts> = BTreeMap::new();
        for case in &self.cases {
            let key = match case.api {
                Some(api) => (i32::from(api.key()), api.name().to_owned()),
                None => (i32::MAX, api_label(case)),
            };
            apis.entry(key).or_default().add(case.verdict);
        }
        apis.into_iter().map(|((_, name), c)| (name, c)).collect()
    }

    /// Cases per second over the run.
    pub fn cases_per_second(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 {
            self.cases.len() as f64 / seconds
        } else {
            0.0
        }
    }
}

/// The api column of a case: its name, else the unknown key its surface
/// case is about, else `-`.
fn api_label(case: &CaseResult) -> String {
    match case.api {
        Some(api) => api.name().to_owned(),
        None => case
            .case
            .strip_prefix("surface/api/")
            .map_or_else(|| "-".to_owned(), |key| format!("key {key}")),
    }
}

/// A value as a report prints it: compact JSON.
pub(crate) fn shown(value: &Value) -> String {
    value.to_string()
}
