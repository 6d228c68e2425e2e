//! The compatibility matrix, in Markdown that can be published as it is: a
//! title naming both sides, the totals per area, one row per api (the
//! versions each side advertises, the cases by verdict, a status), then
//! every difference outside the allow list and every allowed one with its
//! reason.

use std::collections::BTreeSet;
use std::io::{self, Write};

use kafka_wire::ApiKey;

use super::{shown, Counts, Report, Verdict};

/// The longest value in a cell, in characters.
pub const MAX_CELL_CHARS: usize = 160;

/// Writes the matrix.
pub fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "# Kafka protocol compatibility: `{}` against `{}`",
        report.candidate.address, report.reference.address
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "Compared by `kafka-protocol compat` (kafka-wire-compat {}), run `{}`: the reference has {} \
         broker(s), the candidate {}. Every field of every answer is compared after the \
         normalization rules of the kafka-wire-compat guide.",
        env!("CARGO_PKG_VERSION"),
        report.run,
        report.reference.brokers,
        report.candidate.brokers
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "| area | cases | same | differ | only reference | only candidate | allowed |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|---:|")?;
    for (area, c) in report.by_area() {
        row(out, &area.to_string(), &c)?;
    }
    row(out, "**total**", &report.totals())?;
    writeln!(out)?;
    writeln!(out, "## By API")?;
    writeln!(out)?;
    writeln!(
        out,
        "| API | key | reference versions | candidate versions | cases | same | differ | only reference | only candidate | allowed | status |"
    )?;
    writeln!(out, "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|")?;
    let keys: BTreeSet<i16> = report
        .reference
        .versions
        .keys()
        .chain(report.candidate.versions.keys())
        .copied()
        .chain(report.cases.iter().filter_map(|c| c.api.map(ApiKey::key)))
        .collect();
    for key in keys {
        let api = ApiKey::from_key(key);
        let name = api.map_or_else(|| format!("(unknown {key})"), |a| a.name().to_owned());
        let mut counts = Counts::default();
        for case in report
            .cases
            .iter()
            .filter(|c| c.api == api && api.is_some())
        {
            counts.add(case.verdict);
        }
        let range = |versions: &std::collections::BTreeMap<i16, (i16, i16)>| {
            versions
                .get(&key)
                .map_or_else(|| "-".to_owned(), |(a, b)| format!("{a}-{b}"))
        };
        let status = if counts.remaining() > 0 {
            "differs"
        } else if counts.allowed > 0 {
            "same, with allowed differences"
        } else if counts.cases > 0 {
            "same"
        } else {
            "not compared"
        };
        writeln!(
            out,
            "| {name} | {key} | {} | {} | {} | {} | {} | {} | {} | {} | {status} |",
            range(&report.reference.versions),
            range(&report.candidate.versions),
            counts.cases,
            counts.same,
            counts.differ,
            counts.only_reference,
            counts.only_candidate,
            counts.allowed
        )?;
    }
    let differing: Vec<_> = report
        .cases
        .iter()
        .filter(|c| c.verdict.remains())
        .collect();
    writeln!(out)?;
    writeln!(out, "## Differences")?;
    writeln!(out)?;
    if differing.is_empty() {
        writeln!(out, "None outside the allow list.")?;
    } else {
        writeln!(out, "| case | verdict | field | reference | candidate |")?;
        writeln!(out, "|---|---|---|---|---|")?;
        for case in differing {
            for d in &case.differences {
                writeln!(
                    out,
                    "| `{}` | {} | `{}` | {} | {} |",
                    case.case,
                    case.verdict,
                    if d.path.is_empty() {
                        "(the answer)"
                    } else {
                        &d.path
                    },
                    cell(&shown(&d.reference)),
                    cell(&shown(&d.candidate))
                )?;
            }
            if case.truncated > 0 {
                writeln!(
                    out,
                    "| `{}` | | ... | {} more | |",
                    case.case, case.truncated
                )?;
            }
        }
    }
    let allowed: Vec<_> = report
        .cases
        .iter()
        .filter(|c| c.verdict == Verdict::Allowed)
        .collect();
    if !allowed.is_empty() {
        writeln!(out)?;
        writeln!(out, "## Allowed differences")?;
        writeln!(out)?;
        writeln!(out, "| case | differences | reason |")?;
        writeln!(out, "|---|---:|---|")?;
        for case in allowed {
            writeln!(
                out,
                "| `{}` | {} | {} |",
                case.case,
                case.differences.len(),
                escape(&case.reasons.join("; "))
            )?;
        }
    }
    out.flush()
}

fn row(out: &mut dyn Write, name: &str, c: &Counts) -> io::Result<()> {
    writeln!(
        out,
        "| {name} | {} | {} | {} | {} | {} | {} |",
        c.cases, c.same, c.differ, c.only_reference, c.only_candidate, c.allowed
    )
}

/// A value in a table cell: code, cut to [`MAX_CELL_CHARS`], with `|`
/// escaped.
fn cell(text: &str) -> String {
    let cut = match text.char_indices().nth(MAX_CELL_CHARS) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_owned(),
    };
    format!("`{}`", escape(&cut).replace('`', "'"))
}

fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Area;
    use crate::compare::Difference;
    use crate::report::{CaseResult, SideReport};
    use serde_json::json;

    #[test]
    fn the_matrix_has_a_row_per_api_and_the_differences() {
        let side = |address: &str, max: i16| SideReport {
            address: address.into(),
            brokers: 1,
            versions: [(3, (0, max))].into(),
            ..SideReport::default()
        };
        let report = Report {
            run: "kwc-1".into(),
            reference: side("kafka:9092", 12),
            candidate: side("other:9092", 11),
            cases: vec![CaseResult {
                case: "surface/api/Metadata".into(),
                area: Area::Surface,
                api: Some(ApiKey::Metadata),
                version: None,
                verdict: Verdict::Differ,
                differences: vec![Difference {
                    path: "maxVersion".into(),
                    reference: json!(12),
                    candidate: json!("a|b"),
                }],
                truncated: 0,
                reasons: vec![],
                request: None,
            }],
            ..Report::default()
        };
        let mut out = Vec::new();
        write(&report, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("# Kafka protocol compatibility: `other:9092` against `kafka:9092`\n")
        );
        assert!(
            text.contains("| Metadata | 3 | 0-12 | 0-11 | 1 | 0 | 1 | 0 | 0 | 0 | differs |\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "| `surface/api/Metadata` | differ | `maxVersion` | `12` | `\"a\\|b\"` |\n"
            ),
            "{text}"
        );
    }
}
