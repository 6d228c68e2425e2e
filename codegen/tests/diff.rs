//! `kafka-codegen diff`: the real-world run from late 2024 trunk to Kafka 4.1,
//! checked against its committed fixture, and the command's exit statuses.
//!
//! To regenerate the fixtures after an intended change, run
//! `KAFKA_CODEGEN_BLESS=1 cargo test -p kafka-codegen --test diff`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use kafka_codegen::diff::{
    diff_sets, to_json, unloadable_files, Change, ChangeKind, DiffSummary, Verdict,
};
use kafka_codegen::model::SchemaSet;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixture(extension: &str) -> PathBuf {
    workspace().join(format!("fixtures/diff/kafka-2024-10-to-4.1.{extension}"))
}

/// Compares `actual` with a fixture, or rewrites the fixture when blessing.
fn check_fixture(path: &Path, actual: &str) -> TestResult {
    if std::env::var_os("KAFKA_CODEGEN_BLESS").is_some() {
        fs::create_dir_all(path.parent().ok_or("fixture has no parent")?)?;
        fs::write(path, actual)?;
        return Ok(());
    }
    let expected = fs::read_to_string(path)?;
    assert!(
        expected == actual,
        "{} is out of date; rerun with KAFKA_CODEGEN_BLESS=1 and review the difference",
        path.display()
    );
    Ok(())
}

fn find<'a>(
    changes: &'a [Change],
    message: &str,
    path: Option<&str>,
    change: ChangeKind,
) -> Option<&'a Change> {
    changes
        .iter()
        .find(|c| c.message == message && c.path.as_deref() == path && c.change == change)
}

#[test]
fn kafka_2024_10_to_4_1_matches_the_fixture() -> TestResult {
    let shared = workspace().join("../shared");
    if !shared.is_dir() {
        // `.ci/run` sets this so that CI can never skip the real-world run.
        assert!(
            std::env::var_os("KAFKA_WIRE_REQUIRE_SHARED").is_none(),
            "KAFKA_WIRE_REQUIRE_SHARED is set but {} is missing",
            shared.display()
        );
        eprintln!(
            "skipping: {} is absent, the real-world schemas are not available",
            shared.display()
        );
        return Ok(());
    }
    let old = SchemaSet::load(&[shared.join("kafka-schemas-2024-10")])?;
    let new = SchemaSet::load(&[shared.join("kafka-schemas/message")])?;
    assert!(!new.has_errors(), "{:#?}", new.diagnostics);
    // The October 2024 snapshot writes `"versions"` twice in three fields of
    // DescribeTopicPartitions (Kafka's Jackson parser keeps the last). The
    // values agree, so they are warnings, and every file takes part.
    assert!(!old.has_errors(), "{:#?}", old.diagnostics);
    assert_eq!(old.diagnostics.len(), 3, "{:#?}", old.diagnostics);
    assert!(unloadable_files(&old, &new).is_empty());

    let changes = diff_sets(&old, &new);
    check_fixture(&fixture("json"), &to_json(&changes)?)?;
    let summary = DiffSummary::of(&changes);
    let mut text: String = changes.iter().map(|c| format!("{c}\n")).collect();
    text.push_str(&format!("{summary}\n"));
    check_fixture(&fixture("txt"), &text)?;
    assert!(summary.fails());

    for api in [
        "LeaderAndIsr",
        "StopReplica",
        "UpdateMetadata",
        "ControlledShutdown",
    ] {
        for side in ["Request", "Response"] {
            let name = format!("{api}{side}");
            let change = find(&changes, &name, None, ChangeKind::MessageRemoved);
            assert!(
                change.is_some_and(|c| c.verdict == Verdict::Removed),
                "{name}"
            );
        }
    }
    for (message, versions) in [
        ("AlterPartitionRequest", "0-1"),
        ("AlterPartitionResponse", "0-1"),
        ("CreateDelegationTokenRequest", "0"),
        ("DescribeDelegationTokenRequest", "0"),
        ("ExpireDelegationTokenRequest", "0"),
        ("RenewDelegationTokenRequest", "0"),
    ] {
        let change = find(&changes, message, None, ChangeKind::VersionRemoved);
        assert!(
            change.is_some_and(
                |c| c.versions.as_deref() == Some(versions) && c.verdict == Verdict::Breaking
            ),
            "{message}"
        );
    }
    let vote_added = find(&changes, "VoteRequest", None, ChangeKind::VersionAdded);
    assert_eq!(vote_added.and_then(|c| c.versions.as_deref()), Some("2"));
    for (old_name, new_name) in [
        ("CandidateEpoch", "ReplicaEpoch"),
        ("CandidateId", "ReplicaId"),
    ] {
        let path = format!("Topics.Partitions.{old_name}");
        let rename = find(
            &changes,
            "VoteRequest",
            Some(&path),
            ChangeKind::FieldRenamed,
        );
        assert!(
            rename.is_some_and(|c| c.verdict == Verdict::Compatible
                && c.versions.as_deref() == Some("0-1")
                && c.detail.contains(&format!("{old_name} -> {new_name}"))),
            "{old_name}"
        );
    }
    for message in [
        "StreamsGroupHeartbeatRequest",
        "StreamsGroupDescribeRequest",
        "DescribeShareGroupOffsetsRequest",
        "AlterShareGroupOffsetsRequest",
        "DeleteShareGroupOffsetsRequest",
    ] {
        let change = find(&changes, message, None, ChangeKind::MessageAdded);
        assert!(
            change.is_some_and(|c| c.verdict == Verdict::Added),
            "{message}"
        );
    }
    for side in ["Request", "Response"] {
        let name = format!("ListConfigResources{side}");
        let renamed = find(&changes, &name, None, ChangeKind::ApiRenamed);
        assert!(
            renamed.is_some_and(|c| c.verdict == Verdict::Compatible
                && c.detail
                    .contains(&format!("renamed from ListClientMetricsResources{side}"))
                && c.detail.contains("apiKey 74")),
            "{name}"
        );
        assert!(!changes
            .iter()
            .any(|c| c.message == format!("ListClientMetricsResources{side}")));
    }
    assert!(!changes.iter().any(|c| c.change == ChangeKind::ShapeChanged));
    Ok(())
}

/// A scratch directory with one schema file, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, text: &str) -> Result<Scratch, std::io::Error> {
        let dir =
            std::env::temp_dir().join(format!("kafka-codegen-diff-{}-{name}", std::process::id()));
        fs::create_dir_all(&dir)?;
        fs::write(dir.join("FooRequest.json"), text)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn foo(valid: &str, field_type: &str) -> String {
    format!(
        r#"{{ "apiKey": 1000, "type": "request", "name": "FooRequest",
             "validVersions": "{valid}", "flexibleVersions": "none",
             "fields": [ {{ "name": "A", "type": "{field_type}", "versions": "0+" }} ] }}"#
    )
}

fn run(args: &[&Path], extra: &[&str]) -> Result<(Option<i32>, String, String), std::io::Error> {
    let output = Command::new(env!("CARGO_BIN_EXE_kafka-codegen"))
        .arg("diff")
        .args(args)
        .args(extra)
        .output()?;
    Ok((
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    ))
}

#[test]
fn exit_status_follows_the_verdicts() -> TestResult {
    let base = Scratch::new("base", &foo("0-1", "int32"))?;
    let grown = Scratch::new("grown", &foo("0-2", "int32"))?;
    let changed = Scratch::new("changed", &foo("0-1", "int64"))?;
    let broken = Scratch::new("broken", "{ \"name\": ")?;

    let (code, out, _) = run(&[&base.0, &grown.0], &[])?;
    assert_eq!(code, Some(0));
    assert_eq!(
        out,
        "FooRequest.json: compatible version-added: FooRequest (versions 2): new versions (validVersions 0-1 -> 0-2)\n\
         0 breaking, 1 compatible, 0 removed, 0 added\n"
    );

    let (code, out, err) = run(&[&base.0, &changed.0], &["--format", "json"])?;
    assert_eq!(code, Some(1));
    let json: serde_json::Value = serde_json::from_str(&out)?;
    assert_eq!(json[0]["change"], "type-changed");
    assert_eq!(json[0]["path"], "A");
    assert_eq!(err, "1 breaking, 0 compatible, 0 removed, 0 added\n");

    let (code, _, err) = run(&[&base.0, &broken.0], &[])?;
    assert_eq!(code, Some(1));
    assert!(err.contains("FooRequest.json:1:"), "{err}");
    assert!(err.contains("pass --skip-invalid"), "{err}");

    let (code, out, err) = run(&[&base.0, &broken.0], &["--skip-invalid"])?;
    assert_eq!(code, Some(0));
    assert_eq!(out, "0 breaking, 0 compatible, 0 removed, 0 added\n");
    assert!(
        err.contains("FooRequest.json left out of the comparison"),
        "{err}"
    );

    let (code, _, _) = run(&[&base.0], &[])?;
    assert_eq!(code, Some(2));
    let (code, _, _) = run(&[&base.0, &grown.0], &["--format", "yaml"])?;
    assert_eq!(code, Some(2));
    Ok(())
}
