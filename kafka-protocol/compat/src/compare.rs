//! Comparing two answers in their JSON form, field by field.
//!
//! Every member of every object and every element of every array is
//! compared, not only error codes. A difference names the path of the
//! field, `topics[0].partitions[2].errorCode`, with the reference's value
//! and the candidate's. An element one array has and the other lacks is a
//! difference at its index, with `null` for the side that lacks it (array
//! elements of the JSON form are never `null` themselves, so this is not
//! ambiguous); likewise a member one object lacks.
//!
//! Arrays are compared element by element, in order, except where the two
//! hold entries named by a key ([`IDENTITY_KEYS`]: `apiKey`, `name`,
//! `partitionIndex`, ...) that differ as a set or in order: then entries
//! are paired by that key, so that one entry missing is one difference
//! rather than every entry after it. A paired entry keeps the reference's
//! index in paths; an entry only the candidate has, the candidate's. When
//! both hold the same entries in another order, the order is one
//! difference, at the array's path, with each side's keys in its order.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::path::JsonPath;

/// Most differences kept for one case: a hostile answer of a million
/// elements is reported by its first ones, and the count.
pub const MAX_DIFFERENCES: usize = 1000;

/// One field that differs. Its JSON keys (`path`, `reference`,
/// `candidate`) are pinned: outside tools read them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// Where, as a Kafka developer writes it; empty for the whole answer,
    /// and prefixed with the step's name (`join: memberId`) in cases of
    /// more than one compared step.
    pub path: String,
    /// The reference's value (`null` where it has none).
    pub reference: Value,
    /// The candidate's value (`null` where it has none).
    pub candidate: Value,
}

/// The differences between two values, at most [`MAX_DIFFERENCES`]
/// (`truncated` says whether more were left out).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Diff {
    /// The differences, in document order.
    pub differences: Vec<Difference>,
    /// How many more there were.
    pub truncated: usize,
}

/// Compares `reference` with `candidate`.
pub fn diff(reference: &Value, candidate: &Value) -> Diff {
    let mut out = Diff::default();
    walk(reference, candidate, &JsonPath::root(), &mut out);
    out
}

/// The keys that name an array's entries, in the order they are tried: the
/// first that every entry of both arrays has, as a string or a number,
/// once per array.
pub const IDENTITY_KEYS: [&str; 16] = [
    "apiKey",
    "name",
    "topicId",
    "topic",
    "topicName",
    "partitionIndex",
    "partition",
    "index",
    "groupId",
    "transactionalId",
    "memberId",
    "nodeId",
    "brokerId",
    "replicaId",
    "key",
    "resourceName",
];

/// The ids of `items` under `key`, by index, if every entry has one (a
/// string or a number) and no two share it.
fn ids(items: &[Value], key: &str) -> Option<HashMap<String, usize>> {
    let mut ids = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let id = item.get(key).filter(|v| v.is_string() || v.is_number())?;
        if ids.insert(id.to_string(), i).is_some() {
            return None;
        }
    }
    Some(ids)
}

/// How two arrays of named entries relate.
struct Named {
    key: &'static str,
    reference: HashMap<String, usize>,
    candidate: HashMap<String, usize>,
}

impl Named {
    /// The identity key of two arrays (the first of [`IDENTITY_KEYS`] that
    /// names every entry of both, once per array) and each side's ids under
    /// it, unless they hold the same entries in the same order. Linear in
    /// the arrays' sizes.
    fn of(reference: &[Value], candidate: &[Value]) -> Option<Named> {
        let (key, r, c) = IDENTITY_KEYS
            .into_iter()
            .find_map(|key| Some((key, ids(reference, key)?, ids(candidate, key)?)))?;
        let same_order = reference.len() == candidate.len()
            && reference
                .iter()
                .zip(candidate)
                .all(|(a, b)| a.get(key) == b.get(key));
        (!same_order).then_some(Named {
            key,
            reference: r,
            candidate: c,
        })
    }

    fn same_set(&self) -> bool {
        self.reference.len() == self.candidate.len()
            && self
                .reference
                .keys()
                .all(|id| self.candidate.contains_key(id))
    }
}

fn walk(reference: &Value, candidate: &Value, at: &JsonPath, out: &mut Diff) {
    match (reference, candidate) {
        (Value::Object(r), Value::Object(c)) => {
            for (key, rv) in r {
                match c.get(key) {
                    Some(cv) => walk(rv, cv, &at.key(key), out),
                    None => push(out, at.key(key), rv.clone(), Value::Null),
                }
            }
            for (key, cv) in c {
                if !r.contains_key(key) {
                    push(out, at.key(key), Value::Null, cv.clone());
                }
            }
        }
        (Value::Array(r), Value::Array(c)) => match Named::of(r, c) {
            Some(named) => {
                if named.same_set() {
                    let order = |items: &[Value]| -> Value {
                        items.iter().map(|item| item[named.key].clone()).collect()
                    };
                    push(out, at.clone(), order(r), order(c));
                }
                paired(r, c, &named.reference, &named.candidate, at, out)
            }
            None => in_order(r, c, at, out),
        },
        (r, c) if r == c => {}
        (r, c) => push(out, at.clone(), r.clone(), c.clone()),
    }
}

/// Entries paired by their ids (see the module).
fn paired(
    r: &[Value],
    c: &[Value],
    r_ids: &HashMap<String, usize>,
    c_ids: &HashMap<String, usize>,
    at: &JsonPath,
    out: &mut Diff,
) {
    let mut r_order: Vec<(&String, &usize)> = r_ids.iter().collect();
    r_order.sort_by_key(|(_, i)| **i);
    for (id, &i) in r_order {
        match c_ids.get(id) {
            Some(&j) => walk(&r[i], &c[j], &at.index(i), out),
            None => push(out, at.index(i), r[i].clone(), Value::Null),
        }
    }
    let mut c_only: Vec<usize> = c_ids
        .iter()
        .filter(|(id, _)| !r_ids.contains_key(*id))
        .map(|(_, &j)| j)
        .collect();
    c_only.sort_unstable();
    for j in c_only {
        push(out, at.index(j), Value::Null, c[j].clone());
    }
}

/// Elements compared by index.
fn in_order(r: &[Value], c: &[Value], at: &JsonPath, out: &mut Diff) {
    for i in 0..r.len().max(c.len()) {
        match (r.get(i), c.get(i)) {
            (Some(rv), Some(cv)) => walk(rv, cv, &at.index(i), out),
            (Some(rv), None) => push(out, at.index(i), rv.clone(), Value::Null),
            (None, Some(cv)) => push(out, at.index(i), Value::Null, cv.clone()),
            (None, None) => {}
        }
    }
}

fn push(out: &mut Diff, at: JsonPath, reference: Value, candidate: Value) {
    if out.differences.len() >= MAX_DIFFERENCES {
        out.truncated += 1;
        return;
    }
    out.differences.push(Difference {
        path: at.to_string(),
        reference,
        candidate,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_field_is_compared_with_its_path() {
        let reference = json!({"throttleTimeMs": 0, "topics": [
            {"name": "a", "partitions": [{"errorCode": 0}, {"errorCode": 0}, {"errorCode": 0}]}
        ], "only": 1});
        let candidate = json!({"throttleTimeMs": 0, "topics": [
            {"name": "a", "partitions": [{"errorCode": 0}, {"errorCode": 0}, {"errorCode": 6}]},
            {"name": "b", "partitions": []}
        ], "extra": 2});
        let found = diff(&reference, &candidate);
        let paths: Vec<&str> = found.differences.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "topics[0].partitions[2].errorCode",
                "topics[1]",
                "only",
                "extra"
            ]
        );
        assert_eq!(found.differences[0].reference, json!(0));
        assert_eq!(found.differences[0].candidate, json!(6));
        assert_eq!(found.differences[1].reference, Value::Null);
        assert!(diff(&reference, &reference).differences.is_empty());
        let whole = diff(&json!(1), &json!("x"));
        assert_eq!(whole.differences[0].path, "");
    }

    #[test]
    fn entries_named_by_a_key_are_paired_when_one_is_missing() {
        let reference = json!({"apiKeys": [
            {"apiKey": 0, "maxVersion": 12}, {"apiKey": 1, "maxVersion": 17}, {"apiKey": 3, "maxVersion": 13}
        ]});
        let candidate = json!({"apiKeys": [
            {"apiKey": 0, "maxVersion": 12}, {"apiKey": 3, "maxVersion": 12}, {"apiKey": 9, "maxVersion": 1}
        ]});
        let found = diff(&reference, &candidate);
        let shown: Vec<(&str, &Value, &Value)> = found
            .differences
            .iter()
            .map(|d| (d.path.as_str(), &d.reference, &d.candidate))
            .collect();
        assert_eq!(
            shown,
            [
                (
                    "apiKeys[1]",
                    &json!({"apiKey": 1, "maxVersion": 17}),
                    &Value::Null
                ),
                ("apiKeys[2].maxVersion", &json!(13), &json!(12)),
                (
                    "apiKeys[2]",
                    &Value::Null,
                    &json!({"apiKey": 9, "maxVersion": 1})
                ),
            ]
        );
        // The same entries in another order: the order is one difference,
        // and the entries are compared by key.
        let swapped = json!([{"apiKey": 1, "maxVersion": 17}, {"apiKey": 0, "maxVersion": 12}]);
        let ordered = json!([{"apiKey": 0, "maxVersion": 11}, {"apiKey": 1, "maxVersion": 17}]);
        let found = diff(&swapped, &ordered);
        let shown: Vec<(&str, &Value, &Value)> = found
            .differences
            .iter()
            .map(|d| (d.path.as_str(), &d.reference, &d.candidate))
            .collect();
        assert_eq!(
            shown,
            [
                ("", &json!([1, 0]), &json!([0, 1])),
                ("[1].maxVersion", &json!(12), &json!(11)),
            ]
        );
        // Entries named alike are paired by the first key that names them
        // all, not by a later one whose values differ.
        let reference = json!([{"name": "t", "topicId": "a", "errorCode": 0}]);
        let candidate = json!([{"name": "t", "topicId": "b", "errorCode": 0}]);
        let found = diff(&reference, &candidate);
        assert_eq!(found.differences.len(), 1);
        assert_eq!(found.differences[0].path, "[0].topicId");
    }

    #[test]
    fn a_huge_answer_is_reported_by_its_first_differences() {
        let reference = json!({"a": vec![0; 5000]});
        let candidate = json!({"a": vec![1; 5000]});
        let found = diff(&reference, &candidate);
        assert_eq!(found.differences.len(), MAX_DIFFERENCES);
        assert_eq!(found.truncated, 5000 - MAX_DIFFERENCES);
    }
}
