//! One small schema pair per rule, with the exact lines expected.

use std::path::PathBuf;

use super::shape::message_shape;
use super::*;
use crate::ir::lower;
use crate::model::{Schema, SchemaSet, SourceFile};

/// A request schema named `FooRequest`, apiKey 1000.
fn foo(valid: &str, flexible: &str, fields: &str) -> (String, String) {
    message("FooRequest", "request", 1000, valid, flexible, fields)
}

fn message(
    name: &str,
    kind: &str,
    key: i16,
    valid: &str,
    flexible: &str,
    fields: &str,
) -> (String, String) {
    (
        format!("{name}.json"),
        format!(
            r#"{{ "apiKey": {key}, "type": "{kind}", "name": "{name}",
               "validVersions": "{valid}", "flexibleVersions": "{flexible}",
               "fields": [ {fields} ] }}"#
        ),
    )
}

fn load(files: &[(String, String)]) -> SchemaSet {
    let sources: Vec<SourceFile> = files
        .iter()
        .map(|(path, text)| SourceFile {
            path: PathBuf::from(path),
            text: text.clone(),
        })
        .collect();
    let set = SchemaSet::from_sources(&sources);
    assert!(
        !set.has_errors(),
        "test schemas must be valid: {:?}",
        set.diagnostics
    );
    set
}

/// Diffs two sets and checks that the verdicts agree with the wire shapes.
fn diff(old: &[(String, String)], new: &[(String, String)]) -> Vec<Change> {
    let (old, new) = (load(old), load(new));
    let changes = diff_sets(&old, &new);
    for o in &old.schemas {
        if let Some(n) = new.find(&o.name) {
            assert_shapes_agree(o, n, &changes);
        }
    }
    changes
}

/// For every shared version: the old shape fails to accept the new one
/// exactly when a breaking change covers that version.
fn assert_shapes_agree(old: &Schema, new: &Schema, changes: &[Change]) {
    let shared = old.valid_versions.intersect(new.valid_versions);
    let (old_ir, new_ir) = (lower(old), lower(new));
    for v in shared.iter() {
        let differs = !message_shape(&old_ir, v).accepts(&message_shape(&new_ir, v));
        let breaking = changes.iter().any(|c| {
            c.message == new.name
                && c.verdict == Verdict::Breaking
                && c.versions.as_deref().is_some_and(|vs| covers(vs, v))
        });
        assert_eq!(differs, breaking, "{} v{v}: {changes:#?}", new.name);
    }
}

fn covers(versions: &str, v: i16) -> bool {
    versions.split(", ").any(|run| match run.split_once('-') {
        Some((lo, hi)) => {
            lo.parse::<i16>().is_ok_and(|lo| lo <= v) && hi.parse::<i16>().is_ok_and(|hi| v <= hi)
        }
        None => run.parse::<i16>() == Ok(v),
    })
}

fn lines(changes: &[Change]) -> Vec<String> {
    changes.iter().map(ToString::to_string).collect()
}

fn diff_foo(old: (&str, &str, &str), new: (&str, &str, &str)) -> Vec<String> {
    lines(&diff(
        &[foo(old.0, old.1, old.2)],
        &[foo(new.0, new.1, new.2)],
    ))
}

const A: &str = r#"{ "name": "A", "type": "int32", "versions": "0+" }"#;
const B: &str = r#"{ "name": "B", "type": "string", "versions": "0+" }"#;

#[test]
fn identical_schemas_have_no_changes() {
    let fields = format!("{A}, {B}");
    assert!(diff_foo(("0-1", "1+", &fields), ("0-1", "1+", &fields)).is_empty());
}

#[test]
fn type_change_is_breaking() {
    let new = r#"{ "name": "A", "type": "int64", "versions": "0+" }"#;
    assert_eq!(
        diff_foo(("0-1", "none", A), ("0-1", "none", new)),
        ["FooRequest.json: breaking type-changed: FooRequest.A (versions 0-1): type changed from int32 to int64"]
    );
}

#[test]
fn field_added_to_an_existing_version_is_breaking() {
    let old = format!(r#"{A}, {{ "name": "B", "type": "string", "versions": "1+" }}"#);
    let new = format!("{A}, {B}");
    assert_eq!(
        diff_foo(("0-1", "none", &old), ("0-1", "none", &new)),
        ["FooRequest.json: breaking field-added: FooRequest.B (versions 0): string field added to a version that already existed"]
    );
}

#[test]
fn field_added_with_old_and_new_versions_is_breaking_only() {
    let new = format!("{A}, {B}");
    assert_eq!(
        diff_foo(("0-1", "none", A), ("0-2", "none", &new)),
        [
            "FooRequest.json: compatible version-added: FooRequest (versions 2): new versions (validVersions 0-1 -> 0-2)",
            "FooRequest.json: breaking field-added: FooRequest.B (versions 0-1): string field added to a version that already existed",
        ]
    );
}

#[test]
fn field_removed_from_an_existing_version_is_breaking() {
    let old = format!("{A}, {B}");
    assert_eq!(
        diff_foo(("0-1", "none", &old), ("0-1", "none", A)),
        ["FooRequest.json: breaking field-removed: FooRequest.B (versions 0-1): string field removed from a version that still exists"]
    );
}

#[test]
fn field_order_change_is_breaking() {
    let (old, new) = (format!("{A}, {B}"), format!("{B}, {A}"));
    assert_eq!(
        diff_foo(("0-1", "none", &old), ("0-1", "none", &new)),
        ["FooRequest.json: breaking field-order-changed: FooRequest (versions 0-1): fields reordered from [A, B] to [B, A]"]
    );
}

#[test]
fn nullability_change_is_breaking() {
    let new = r#"{ "name": "B", "type": "string", "versions": "0+", "nullableVersions": "1+" }"#;
    assert_eq!(
        diff_foo(("0-1", "none", B), ("0-1", "none", new)),
        ["FooRequest.json: breaking nullability-changed: FooRequest.B (versions 1): became nullable"]
    );
}

#[test]
fn moving_between_tagged_and_untagged_is_breaking() {
    let old = r#"{ "name": "B", "type": "string", "versions": "0+" }"#;
    let new =
        r#"{ "name": "B", "type": "string", "versions": "0+", "taggedVersions": "1+", "tag": 0 }"#;
    assert_eq!(
        diff_foo(("0-2", "1+", old), ("0-2", "1+", new)),
        ["FooRequest.json: breaking tagging-changed: FooRequest.B (versions 1-2): moved from the untagged fields to tagged field 0"]
    );
}

#[test]
fn tag_number_change_is_breaking() {
    let old =
        r#"{ "name": "B", "type": "string", "versions": "0+", "taggedVersions": "0+", "tag": 0 }"#;
    let new =
        r#"{ "name": "B", "type": "string", "versions": "0+", "taggedVersions": "0+", "tag": 1 }"#;
    assert_eq!(
        diff_foo(("0-1", "0+", old), ("0-1", "0+", new)),
        ["FooRequest.json: breaking tag-changed: FooRequest.B (versions 0-1): tag changed from 0 to 1"]
    );
}

#[test]
fn reusing_a_tag_for_another_field_is_breaking() {
    let old = format!(
        r#"{A}, {{ "name": "X", "type": "string", "versions": "0+", "taggedVersions": "0+", "tag": 0 }}"#
    );
    let new = format!(
        r#"{A}, {{ "name": "Y", "type": "int64", "versions": "0+", "taggedVersions": "0+", "tag": 0 }}"#
    );
    assert_eq!(
        diff_foo(("0-1", "0+", &old), ("0-1", "0+", &new)),
        [
            "FooRequest.json: breaking field-removed: FooRequest.X (versions 0-1): tagged field 0 (string) removed from a version that still exists",
            "FooRequest.json: breaking tag-reused: FooRequest.Y (versions 0-1): tag 0 belonged to X in the old schema",
        ]
    );
}

#[test]
fn flexible_versions_change_is_breaking() {
    assert_eq!(
        diff_foo(("0-2", "2+", B), ("0-2", "1+", B)),
        ["FooRequest.json: breaking flexible-versions-changed: FooRequest (versions 1): flexibleVersions changed from 2+ to 1+"]
    );
    let new = r#"{ "name": "B", "type": "string", "versions": "0+", "flexibleVersions": "none" }"#;
    assert_eq!(
        diff_foo(("0-2", "1+", B), ("0-2", "1+", new)),
        ["FooRequest.json: breaking flexible-versions-changed: FooRequest.B (versions 1-2): no longer uses the compact encoding (field flexibleVersions changed)"]
    );
}

fn topics(replica_id: &str) -> String {
    format!(
        r#"{{ "name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
             {{ "name": "Name", "type": "string", "versions": "0+" }},
             {{ "name": "Partitions", "type": "[]Partition", "versions": "0+", "fields": [
               {{ "name": "Index", "type": "int32", "versions": "0+" }},
               {replica_id} ]}} ]}}"#
    )
}

#[test]
fn struct_changes_are_found_by_recursion() {
    let old = topics(r#"{ "name": "ReplicaId", "type": "int32", "versions": "0+" }"#);
    let new = topics(r#"{ "name": "ReplicaId", "type": "int64", "versions": "0+" }"#);
    assert_eq!(
        diff_foo(("0-1", "none", &old), ("0-1", "none", &new)),
        ["FooRequest.json: breaking type-changed: FooRequest.Topics.Partitions.ReplicaId (versions 0-1): type changed from int32 to int64"]
    );
}

#[test]
fn api_key_and_message_type_changes_are_breaking() {
    let old = [message("FooRequest", "request", 1000, "0-1", "none", A)];
    let new = [message("FooRequest", "response", 1001, "0-1", "none", A)];
    assert_eq!(
        lines(&diff_sets(&load(&old), &load(&new))),
        [
            "FooRequest.json: breaking api-key-changed: FooRequest (versions 0-1): apiKey changed from 1000 to 1001",
            "FooRequest.json: breaking message-type-changed: FooRequest (versions 0-1): type changed from request to response",
        ]
    );
}

#[test]
fn removed_versions_are_breaking() {
    assert_eq!(
        diff_foo(("0-3", "none", A), ("2-3", "none", A)),
        ["FooRequest.json: breaking version-removed: FooRequest (versions 0-1): no longer valid (validVersions 0-3 -> 2-3); peers that only speak these versions can no longer talk"]
    );
}

#[test]
fn new_versions_and_their_fields_are_compatible() {
    let old = topics(r#"{ "name": "ReplicaId", "type": "int32", "versions": "0+" }"#);
    let new = format!(
        r#"{}, {{ "name": "PreVote", "type": "bool", "versions": "2+" }}"#,
        topics(
            r#"{ "name": "ReplicaId", "type": "int32", "versions": "0+" },
               { "name": "Epoch", "type": "int32", "versions": "2+" }"#
        )
    );
    assert_eq!(
        diff_foo(("0-1", "none", &old), ("0-2", "none", &new)),
        [
            "FooRequest.json: compatible version-added: FooRequest (versions 2): new versions (validVersions 0-1 -> 0-2)",
            "FooRequest.json: compatible field-added-in-new-version: FooRequest.PreVote (versions 2): new bool field, only in versions the old schema does not have",
            "FooRequest.json: compatible field-added-in-new-version: FooRequest.Topics.Partitions.Epoch (versions 2): new int32 field, only in versions the old schema does not have",
        ]
    );
}

#[test]
fn new_tagged_field_with_a_new_tag_is_compatible() {
    let old = format!(
        r#"{A}, {{ "name": "X", "type": "string", "versions": "0+", "taggedVersions": "0+", "tag": 0 }}"#
    );
    let new = format!(
        r#"{old}, {{ "name": "Y", "type": "int64", "versions": "0+", "taggedVersions": "0+", "tag": 1 }}"#
    );
    assert_eq!(
        diff_foo(("0-1", "0+", &old), ("0-1", "0+", &new)),
        ["FooRequest.json: compatible tagged-field-added: FooRequest.Y (versions 0-1): new tagged field 1 (int64); peers that do not know it skip it"]
    );
}

#[test]
fn rename_with_identical_shape_is_compatible() {
    let old = topics(r#"{ "name": "CandidateId", "type": "int32", "versions": "0+" }"#);
    let new = topics(r#"{ "name": "ReplicaId", "type": "int32", "versions": "0+" }"#);
    assert_eq!(
        diff_foo(("0-1", "none", &old), ("0-1", "none", &new)),
        ["FooRequest.json: compatible field-renamed: FooRequest.Topics.Partitions.CandidateId (versions 0-1): renamed CandidateId -> ReplicaId; same wire shape, generated code changes"]
    );
}

/// Kafka 4.4.0's StreamsGroupHeartbeatResponse: v0's int32
/// `AcceptableRecoveryLag` becomes `AcceptableRecoveryLagLegacy`, and the
/// name goes to a new int64 field of v1. Version 0 keeps its bytes: a rename
/// and an addition, not a type change and a removal.
#[test]
fn a_name_reused_by_a_field_of_new_versions_is_a_rename_and_an_addition() {
    let old = r#"{ "name": "Lag", "type": "int32", "versions": "0+" },
                 { "name": "Interval", "type": "int32", "versions": "0+" }"#;
    let new = r#"{ "name": "LagLegacy", "type": "int32", "versions": "0" },
                 { "name": "Interval", "type": "int32", "versions": "0+" },
                 { "name": "Lag", "type": "int64", "versions": "1+" }"#;
    assert_eq!(
        diff_foo(("0", "none", old), ("0-1", "none", new)),
        [
            "FooRequest.json: compatible version-added: FooRequest (versions 1): new versions (validVersions 0 -> 0-1)",
            "FooRequest.json: compatible field-added-in-new-version: FooRequest.Lag (versions 1): new int64 field, only in versions the old schema does not have",
            "FooRequest.json: compatible field-renamed: FooRequest.Lag (versions 0): renamed Lag -> LagLegacy; same wire shape, generated code changes",
        ]
    );
}

#[test]
fn rename_with_another_shape_is_a_removal_and_an_addition() {
    let old = topics(r#"{ "name": "CandidateId", "type": "int32", "versions": "0+" }"#);
    let new = topics(r#"{ "name": "ReplicaId", "type": "int64", "versions": "0+" }"#);
    assert_eq!(
        diff_foo(("0-1", "none", &old), ("0-1", "none", &new)),
        [
            "FooRequest.json: breaking field-removed: FooRequest.Topics.Partitions.CandidateId (versions 0-1): int32 field removed from a version that still exists",
            "FooRequest.json: breaking field-added: FooRequest.Topics.Partitions.ReplicaId (versions 0-1): int64 field added to a version that already existed",
        ]
    );
}

#[test]
fn default_about_and_ignorable_changes_are_compatible() {
    let old =
        r#"{ "name": "A", "type": "int32", "versions": "0+", "default": "-1", "about": "Old." }"#;
    let new = r#"{ "name": "A", "type": "int32", "versions": "0+", "default": "0", "ignorable": true, "about": "New." }"#;
    assert_eq!(
        diff_foo(("0-1", "none", old), ("0-1", "none", new)),
        [
            r#"FooRequest.json: compatible default-changed: FooRequest.A (versions 0-1): default changed from "-1" to "0""#,
            r#"FooRequest.json: compatible about-changed: FooRequest.A (versions 0-1): about text changed (4 characters -> 4 characters)"#,
            "FooRequest.json: compatible ignorable-changed: FooRequest.A (versions 0-1): ignorable changed from false to true",
        ]
    );
}

#[test]
fn messages_added_removed_and_renamed() {
    let old = [
        message("GoneRequest", "request", 4, "0-7", "none", A),
        message(
            "ListClientMetricsResourcesRequest",
            "request",
            74,
            "0",
            "0+",
            A,
        ),
    ];
    let new = [
        message("ListConfigResourcesRequest", "request", 74, "0-1", "0+", A),
        message("NewRequest", "request", 88, "0", "0+", A),
    ];
    let changes = diff(&old, &new);
    assert_eq!(
        lines(&changes),
        [
            "GoneRequest.json: removed message-removed: GoneRequest (versions 0-7): request GoneRequest (apiKey 4) removed; peers using versions 0-7 can no longer talk",
            "ListConfigResourcesRequest.json: compatible version-added: ListConfigResourcesRequest (versions 1): new versions (validVersions 0 -> 0-1)",
            "ListConfigResourcesRequest.json: compatible api-renamed: ListConfigResourcesRequest (versions 0): ListConfigResourcesRequest request (apiKey 74) renamed from ListClientMetricsResourcesRequest (ListClientMetricsResourcesRequest.json)",
            "NewRequest.json: added message-added: NewRequest (versions 0): new request NewRequest (apiKey 88) with versions 0",
        ]
    );
    let summary = DiffSummary::of(&changes);
    assert_eq!(
        summary.to_string(),
        "0 breaking, 2 compatible, 1 removed, 1 added"
    );
    assert!(summary.fails());
}

#[test]
fn compatible_changes_do_not_fail() {
    let changes = diff(&[foo("0-1", "none", A)], &[foo("0-2", "none", A)]);
    assert!(!DiffSummary::of(&changes).fails());
}

#[test]
fn json_has_exactly_the_documented_keys() -> Result<(), DiffError> {
    let changes = diff(&[foo("0-3", "none", A)], &[foo("2-4", "none", A)]);
    let json: serde_json::Value = serde_json::from_str(&to_json(&changes)?)?;
    let first = &json[0];
    let keys: Vec<&String> = first
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        ["file", "message", "path", "versions", "verdict", "change", "detail"]
    );
    assert_eq!(first["change"], "version-removed");
    assert_eq!(first["verdict"], "breaking");
    assert_eq!(first["versions"], "0-1");
    assert_eq!(first["path"], serde_json::Value::Null);
    let back: Vec<Change> = serde_json::from_value(json)?;
    assert_eq!(back, changes);
    Ok(())
}

#[test]
fn files_that_fail_to_load_are_left_out() {
    let broken = ("FooRequest.json".to_owned(), "{ \"name\": ".to_owned());
    let old = SchemaSet::from_sources(&[SourceFile {
        path: PathBuf::from(&broken.0),
        text: broken.1,
    }]);
    let new = load(&[foo("0", "none", A)]);
    assert_eq!(unloadable_files(&old, &new), ["FooRequest.json"]);
    assert!(diff_sets(&old, &new).is_empty());
}

#[test]
fn versions_are_written_as_runs() {
    use std::collections::BTreeSet;
    let set: BTreeSet<i16> = [0, 1, 3, 5, 6].into_iter().collect();
    assert_eq!(
        report::format_versions(&set).as_deref(),
        Some("0-1, 3, 5-6")
    );
    assert_eq!(report::format_versions(&BTreeSet::new()), None);
}

/// A request whose latest version is flagged unstable, or not.
fn foo_unstable(valid: &str, unstable: bool) -> (String, String) {
    let (path, text) = foo(valid, "none", A);
    let flag = format!(r#""latestVersionUnstable": {unstable}, "validVersions""#);
    (path, text.replacen(r#""validVersions""#, &flag, 1))
}

/// Kafka 4.4.0 makes OffsetCommit v10 stable, and ships new versions still
/// unstable: what peers advertise changes, the wire does not.
#[test]
fn versions_becoming_stable_or_unstable_are_reported() {
    assert_eq!(
        lines(&diff(&[foo_unstable("0-10", true)], &[foo_unstable("0-10", false)])),
        ["FooRequest.json: compatible stability-changed: FooRequest (versions 10): no longer unstable: advertised by default"]
    );
    assert_eq!(
        lines(&diff(&[foo_unstable("0-10", false)], &[foo_unstable("0-11", true)])),
        [
            "FooRequest.json: compatible version-added: FooRequest (versions 11): new versions (validVersions 0-10 -> 0-11)",
            "FooRequest.json: compatible stability-changed: FooRequest (versions 11): the new version is unstable: not advertised by default",
        ]
    );
    assert_eq!(
        lines(&diff(&[foo_unstable("0-10", true)], &[foo_unstable("0-11", true)])),
        [
            "FooRequest.json: compatible version-added: FooRequest (versions 11): new versions (validVersions 0-10 -> 0-11)",
            "FooRequest.json: compatible stability-changed: FooRequest (versions 10): no longer unstable: advertised by default",
            "FooRequest.json: compatible stability-changed: FooRequest (versions 11): the new version is unstable: not advertised by default",
        ]
    );
}
