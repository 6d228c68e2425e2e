//! The text report: a header naming both sides, a table per api (cases,
//! same, differ, only on one side, allowed), then each case that differs
//! as a block (the case, its request as JSON, and each field path with the
//! reference's value and the candidate's), the allowed cases with their
//! reasons, notes, allow entries that matched nothing, and a last line
//! with the counts and speed.

use std::io::{self, Write};

use super::{shown, Counts, Report, SideReport, Verdict};

/// The longest value printed in a block, in characters; longer ones are
/// cut with `...` (the JSON report has them whole).
pub const MAX_VALUE_CHARS: usize = 2000;

/// Writes the text report.
pub fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "kafka-protocol compat, run {}: reference {}, candidate {}",
        report.run,
        side(&report.reference),
        side(&report.candidate)
    )?;
    writeln!(out)?;
    table(report, out)?;
    let differing: Vec<_> = report
        .cases
        .iter()
        .filter(|c| c.verdict.remains())
        .collect();
    for case in &differing {
        writeln!(out)?;
        let about = match (case.api, case.version) {
            (Some(api), Some(v)) => format!(" ({} v{v})", api.name()),
            (Some(api), None) => format!(" ({})", api.name()),
            _ => String::new(),
        };
        writeln!(out, "{}: {}{about}", case.verdict, case.case)?;
        if let Some(request) = &case.request {
            writeln!(out, "  request: {}", cut(&shown(request)))?;
        }
        for difference in &case.differences {
            let path = if difference.path.is_empty() {
                "(the answer)"
            } else {
                &difference.path
            };
            writeln!(out, "  {path}")?;
            writeln!(out, "    reference: {}", cut(&shown(&difference.reference)))?;
            writeln!(out, "    candidate: {}", cut(&shown(&difference.candidate)))?;
        }
        if case.truncated > 0 {
            writeln!(out, "  ... and {} more differences", case.truncated)?;
        }
    }
    let allowed: Vec<_> = report
        .cases
        .iter()
        .filter(|c| c.verdict == Verdict::Allowed)
        .collect();
    if !allowed.is_empty() {
        writeln!(out)?;
        writeln!(out, "allowed:")?;
        for case in allowed {
            writeln!(
                out,
                "  {} ({} differences): {}",
                case.case,
                case.differences.len(),
                case.reasons.join("; ")
            )?;
        }
    }
    if !report.notes.is_empty() {
        writeln!(out)?;
        writeln!(out, "notes:")?;
        for note in &report.notes {
            writeln!(out, "  {note}")?;
        }
    }
    if !report.unused_allow.is_empty() {
        writeln!(out)?;
        writeln!(out, "allow entries that matched no difference:")?;
        for entry in &report.unused_allow {
            writeln!(
                out,
                "  line {}: {} {} ({})",
                entry.line, entry.case, entry.field, entry.reason
            )?;
        }
    }
    writeln!(out)?;
    writeln!(out, "{}", summary(report))?;
    out.flush()
}

/// The last line: counts per area, time, speed and waiting.
pub fn summary(report: &Report) -> String {
    let areas: Vec<String> = report
        .by_area()
        .iter()
        .map(|(area, counts)| format!("{area} {}", counts.cases))
        .collect();
    let remaining = report.remaining();
    let verdict = if remaining == 0 {
        "0 differences outside the allow list".to_owned()
    } else {
        format!("{remaining} cases differ outside the allow list")
    };
    format!(
        "{} cases ({}) in {:.1} s, {:.0} cases/s; waited {:.1} s on the reference, {:.1} s on the candidate; retry timers {:.1} s, {:.1} s; {verdict}",
        report.cases.len(),
        areas.join(", "),
        report.elapsed.as_secs_f64(),
        report.cases_per_second(),
        report.reference.waited.as_secs_f64(),
        report.candidate.waited.as_secs_f64(),
        report.reference.retried.as_secs_f64(),
        report.candidate.retried.as_secs_f64(),
    )
}

fn side(side: &SideReport) -> String {
    let brokers = match side.brokers {
        1 => "1 broker".to_owned(),
        n => format!("{n} brokers"),
    };
    match &side.cluster_id {
        Some(id) => format!("{} (cluster {id}, {brokers})", side.address),
        None => format!("{} ({brokers})", side.address),
    }
}

fn table(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut rows: Vec<(String, Counts)> = report.by_api();
    rows.push(("total".into(), report.totals()));
    let width = rows
        .iter()
        .map(|(name, _)| name.len())
        .max()
        .unwrap_or(3)
        .max(3);
    writeln!(
        out,
        "{:<width$}  {:>6}  {:>6}  {:>6}  {:>8}  {:>9}  {:>7}",
        "api", "cases", "same", "differ", "only-ref", "only-cand", "allowed"
    )?;
    for (name, c) in rows {
        writeln!(
            out,
            "{name:<width$}  {:>6}  {:>6}  {:>6}  {:>8}  {:>9}  {:>7}",
            c.cases, c.same, c.differ, c.only_reference, c.only_candidate, c.allowed
        )?;
    }
    Ok(())
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_VALUE_CHARS) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Area;
    use crate::compare::Difference;
    use crate::report::CaseResult;
    use kafka_wire::ApiKey;
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn a_difference_is_a_block_after_the_table() {
        let case = |name: &str, verdict: Verdict| CaseResult {
            case: name.into(),
            area: Area::Sweep,
            api: Some(ApiKey::Metadata),
            version: Some(12),
            verdict,
            differences: if verdict == Verdict::Same {
                vec![]
            } else {
                vec![Difference {
                    path: "topics[0].errorCode".into(),
                    reference: json!(0),
                    candidate: json!(3),
                }]
            },
            truncated: 0,
            reasons: if verdict == Verdict::Allowed {
                vec!["known".into()]
            } else {
                vec![]
            },
            request: Some(json!({"topics": [{"name": "<run>-sweep"}]})),
        };
        let report = Report {
            run: "kwc-1".into(),
            reference: SideReport {
                address: "a:1".into(),
                cluster_id: Some("x".into()),
                brokers: 1,
                ..SideReport::default()
            },
            candidate: SideReport {
                address: "b:2".into(),
                brokers: 3,
                ..SideReport::default()
            },
            cases: vec![
                case("sweep/Metadata/v12/default", Verdict::Same),
                case("sweep/Metadata/v12/realistic", Verdict::Differ),
                case("sweep/Metadata/v11/realistic", Verdict::Allowed),
            ],
            elapsed: Duration::from_secs(2),
            ..Report::default()
        };
        let mut out = Vec::new();
        write(&report, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with(
            "kafka-protocol compat, run kwc-1: reference a:1 (cluster x, 1 broker), candidate b:2 (3 brokers)\n"
        ));
        assert!(
            text.contains("\nMetadata       3       1       1         0          0        1\n"),
            "{text}"
        );
        assert!(text.contains(
            "differ: sweep/Metadata/v12/realistic (Metadata v12)\n  request: {\"topics\":[{\"name\":\"<run>-sweep\"}]}\n  topics[0].errorCode\n    reference: 0\n    candidate: 3\n"
        ), "{text}");
        assert!(text.contains("allowed:\n  sweep/Metadata/v11/realistic (1 differences): known\n"));
        assert!(text.ends_with(
            "3 cases (sweep 3) in 2.0 s, 2 cases/s; waited 0.0 s on the reference, 0.0 s on the candidate; retry timers 0.0 s, 0.0 s; 1 cases differ outside the allow list\n"
        ), "{text}");
    }
}
