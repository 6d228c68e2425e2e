//! Rendering changes: the text line, the JSON array and the summary.

use std::collections::BTreeSet;
use std::fmt;

use super::{Change, DiffError, Verdict};

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} {}: {}",
            self.file, self.verdict, self.change, self.message
        )?;
        if let Some(path) = &self.path {
            write!(f, ".{path}")?;
        }
        if let Some(versions) = &self.versions {
            write!(f, " (versions {versions})")?;
        }
        write!(f, ": {}", self.detail)
    }
}

/// Writes a set of versions as runs: `0-1`, `3`, or `0-1, 4-5`; `None` when empty.
pub(crate) fn format_versions(versions: &BTreeSet<i16>) -> Option<String> {
    let mut runs: Vec<(i16, i16)> = Vec::new();
    for &v in versions {
        match runs.last_mut() {
            Some((_, last)) if i32::from(*last) + 1 == i32::from(v) => *last = v,
            _ => runs.push((v, v)),
        }
    }
    if runs.is_empty() {
        return None;
    }
    let text: Vec<String> = runs
        .into_iter()
        .map(|(lo, hi)| {
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}-{hi}")
            }
        })
        .collect();
    Some(text.join(", "))
}

/// The changes as a pretty-printed JSON array, ending in a newline.
pub fn to_json(changes: &[Change]) -> Result<String, DiffError> {
    let mut text = serde_json::to_string_pretty(changes)?;
    text.push('\n');
    Ok(text)
}

/// How many changes of a comparison got each verdict, as `kafka-codegen
/// diff` prints it on its last line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiffSummary {
    /// Changes that break a version both sets know.
    pub breaking: usize,
    /// Changes peers survive.
    pub compatible: usize,
    /// Messages only in the old set.
    pub removed: usize,
    /// Messages only in the new set.
    pub added: usize,
}

impl DiffSummary {
    /// Counts the verdicts of `changes`.
    pub fn of(changes: &[Change]) -> DiffSummary {
        let mut summary = DiffSummary::default();
        for change in changes {
            match change.verdict {
                Verdict::Breaking => summary.breaking += 1,
                Verdict::Compatible => summary.compatible += 1,
                Verdict::Removed => summary.removed += 1,
                Verdict::Added => summary.added += 1,
            }
        }
        summary
    }

    /// True when a CI check should fail: any breaking change or removed message.
    pub fn fails(&self) -> bool {
        self.breaking > 0 || self.removed > 0
    }
}

impl fmt::Display for DiffSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} breaking, {} compatible, {} removed, {} added",
            self.breaking, self.compatible, self.removed, self.added
        )
    }
}
