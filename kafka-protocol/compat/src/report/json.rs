//! One JSON object per line, one per case, with exactly these keys, in
//! this order: `case` (the stable name), `area` (`surface`, `sweep`,
//! `scenario` or `replay`), `api` (the api's name, `null` for an api
//! kafka-wire does not know), `version` (a number, or `null`), `verdict`
//! (`same`, `differ`, `only-reference`, `only-candidate` or `allowed`) and
//! `differences` (a list of `{"path", "reference", "candidate"}`). The
//! names and values are pinned: outside tools read them.

use std::io::{self, Write};

use serde_json::{json, Value};

use super::{CaseResult, Report};

/// The JSON object of one case.
pub fn case_json(case: &CaseResult) -> Value {
    json!({
        "case": case.case,
        "area": case.area.name(),
        "api": case.api.map(|a| a.name()),
        "version": case.version,
        "verdict": case.verdict.name(),
        "differences": case.differences,
    })
}

/// Writes every case of `report`, one object per line.
pub fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    for case in &report.cases {
        serde_json::to_writer(&mut *out, &case_json(case))?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Area;
    use crate::compare::Difference;
    use crate::report::Verdict;
    use kafka_wire::ApiKey;

    #[test]
    fn the_keys_are_the_pinned_ones_in_order() {
        let case = CaseResult {
            case: "sweep/Metadata/v12/realistic".into(),
            area: Area::Sweep,
            api: Some(ApiKey::Metadata),
            version: Some(12),
            verdict: Verdict::Differ,
            differences: vec![Difference {
                path: "brokers[0].rack".into(),
                reference: Value::Null,
                candidate: json!("r1"),
            }],
            truncated: 0,
            reasons: vec![],
            request: Some(json!({"topics": []})),
        };
        let report = Report {
            cases: vec![case],
            ..Report::default()
        };
        let mut out = Vec::new();
        write(&report, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"case\":\"sweep/Metadata/v12/realistic\",\"area\":\"sweep\",\"api\":\"Metadata\",\
             \"version\":12,\"verdict\":\"differ\",\"differences\":[{\"path\":\"brokers[0].rack\",\
             \"reference\":null,\"candidate\":\"r1\"}]}\n"
        );
    }
}
