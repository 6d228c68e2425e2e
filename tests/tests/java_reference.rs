//! Apache Kafka's own Java code as the judge of every byte, in both
//! directions (the harness is `tests/java/`; `kafka_wire_tests::java` runs
//! it and compares):
//!
//! - **Java to Rust.** Kafka's generated classes, filled by the harness from
//!   a seed for every message and version its jars hold (eight instances
//!   each), write their bytes and their JSON (the generated converters).
//!   kafka-wire decodes the bytes (every byte), re-encodes them to the same
//!   bytes, and gives the same JSON, forgiving only the named differences.
//! - **Rust to Java.** Values from kafka-wire's property-test strategies,
//!   for every message and version of `messages/`, go to Java as bytes.
//!   Java reads them (every byte), writes the same bytes back, and gives the
//!   same JSON.
//! - **Record batches.** Batches that Kafka's `MemoryRecords` builders wrote
//!   decode in kafka-wire to the records Kafka iterates; batches that
//!   `RecordBatchBuilder` wrote pass Kafka's `ensureValid` and iterate in
//!   Java to the records they were built from.
//! - **Error codes.** `ErrorCode` against Kafka's `Errors.values()`.
//!
//! A message or version of the jars that `messages/` lacks is a failure,
//! listed by name. Without Java, Maven or the jars the tests skip, unless
//! `KAFKA_WIRE_REQUIRE_JAVA` is set, as `.ci/run` sets it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use kafka_codegen::model::{FieldType, MessageKind, Schema, SchemaSet};
use kafka_wire::ErrorCode;
use kafka_wire_records::{
    Compression, ControlRecord, ControlRecordType, Header, RecordBatchBuilder, TimestampType,
};
use kafka_wire_tests::java::{
    describe_records, first_byte_difference, json_difference, jvm, read_lines, Named,
};
use kafka_wire_tests::strategies::{lower_first, object, sample};
use kafka_wire_tests::{decode_by_name, from_json_by_name, workspace_root, Kind};
use serde_json::{json, Value};

/// Instances per message and version, in both directions.
const INSTANCES: usize = 8;
/// The seed of the Java-built values.
const JAVA_SEED: u64 = 19;
/// The seed of the Rust-built values.
const RUST_SEED: u64 = 4_400;

/// Writes a summary line past the test harness's capture, so that it shows
/// in CI's log when the test passes.
fn report(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("java-reference");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// The schemas of `messages/`, by name.
fn schemas() -> &'static BTreeMap<String, Schema> {
    static SCHEMAS: OnceLock<BTreeMap<String, Schema>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let set =
            SchemaSet::load(&[workspace_root().join("messages")]).unwrap_or_else(|e| panic!("{e}"));
        set.schemas
            .into_iter()
            .map(|s| (s.name.clone(), s))
            .collect()
    })
}

/// What Java wrote, one JSON object per line (one JVM for the direction).
fn generated() -> Option<&'static [Value]> {
    static GENERATED: OnceLock<Option<Vec<Value>>> = OnceLock::new();
    GENERATED
        .get_or_init(|| {
            let jvm = jvm()?;
            let out = scratch().join("java-to-rust.jsonl");
            jvm.run([
                "generate".as_ref(),
                out.as_os_str(),
                INSTANCES.to_string().as_ref(),
                JAVA_SEED.to_string().as_ref(),
            ]);
            Some(read_lines(&out))
        })
        .as_deref()
}

fn of_type<'a>(lines: &'a [Value], kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    lines.iter().filter(move |l| l["type"] == kind)
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn version_of(line: &Value) -> i16 {
    as_version(&line["version"])
}

fn as_version(value: &Value) -> i16 {
    value
        .as_i64()
        .and_then(|v| i16::try_from(v).ok())
        .unwrap_or(-1)
}

fn hex_of(line: &Value) -> Vec<u8> {
    hex::decode(text(&line["hex"])).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// `Name vN #i (mode)`.
fn label(line: &Value) -> String {
    let mode = line["mode"]
        .as_str()
        .map(|m| format!(" ({m})"))
        .unwrap_or_default();
    format!(
        "{} v{} #{}{mode}",
        text(&line["name"]),
        version_of(line),
        line["instance"]
    )
}

/// The schema of `messages/` for a message and version that Kafka's jars
/// hold, or why kafka-wire cannot take it.
fn our_schema(name: &str, version: i16) -> Result<&'static Schema, String> {
    match schemas().get(name) {
        None => Err(format!("{name}: not in messages/")),
        Some(s) if !s.valid_versions.contains(version) => Err(format!(
            "{name} v{version}: not a version of messages/{name}"
        )),
        Some(s) => Ok(s),
    }
}

/// What every direction tallies: instances, the exact ones, and the types
/// and versions they cover.
#[derive(Default)]
struct Tally {
    instances: usize,
    exact: usize,
    types: BTreeSet<String>,
    versions: BTreeSet<(String, i16)>,
    missing: BTreeSet<(String, i16)>,
    failures: Vec<String>,
}

impl Tally {
    fn line(&self, direction: &str) -> String {
        format!(
            "reference {direction}: {}/{} exact over {} types, {} versions",
            self.exact,
            self.instances,
            self.types.len(),
            self.versions.len()
        )
    }

    fn assert_clean(&self, direction: &str) {
        if self.failures.is_empty() && self.missing.is_empty() {
            return;
        }
        let mut message = format!(
            "{direction}: {} of {} instances failed",
            self.instances - self.exact,
            self.instances
        );
        if !self.missing.is_empty() {
            message.push_str(&format!(
                "\n{} (type, version) pairs of Kafka {}'s jars are missing from messages/:",
                self.missing.len(),
                kafka_wire_tests::kafka_version()
            ));
            for (name, version) in &self.missing {
                message.push_str(&format!("\n  missing: {name} v{version}"));
            }
        }
        let shown = 60;
        for failure in self.failures.iter().take(shown) {
            message.push_str("\n  ");
            message.push_str(failure);
        }
        if self.failures.len() > shown {
            message.push_str(&format!("\n  ... and {} more", self.failures.len() - shown));
        }
        panic!("{message}");
    }
}

/// Checks one Java-written instance in kafka-wire: decode (every byte),
/// re-encode to the same bytes, the same JSON.
fn check_java_instance(
    line: &Value,
    schema: &Schema,
    forgiven: &mut Vec<Named>,
) -> Result<(), String> {
    if let Some(error) = line["error"].as_str() {
        return Err(format!("Java could not build or write it: {error}"));
    }
    let kind = Kind::parse(text(&line["kind"])).ok_or("an unknown kind")?;
    let version = version_of(line);
    let bytes = hex_of(line);
    let decoded = decode_by_name(kind, &schema.name, version, &bytes).map_err(|e| {
        format!(
            "kafka-wire does not decode Java's {} bytes: {e:?}",
            bytes.len()
        )
    })?;
    let again = decoded
        .bytes(version)
        .map_err(|e| format!("kafka-wire does not re-encode it: {e}"))?;
    if let Some(d) = first_byte_difference(&again, &bytes) {
        return Err(format!("re-encoded: {d}"));
    }
    if decoded.len(version) != bytes.len() {
        return Err(format!(
            "computed size {} for {} bytes",
            decoded.len(version),
            bytes.len()
        ));
    }
    let ours = decoded.json(version);
    if let Some(d) = json_difference(schema, version, &ours, &line["json"], forgiven) {
        return Err(format!("JSON: {d}"));
    }
    Ok(())
}

#[test]
fn java_to_rust() {
    let Some(lines) = generated() else { return };
    let mut tally = Tally::default();
    let mut forgiven = Vec::new();
    for line in of_type(lines, "message") {
        let name = text(&line["name"]).to_owned();
        let version = version_of(line);
        tally.instances += 1;
        tally.types.insert(name.clone());
        tally.versions.insert((name.clone(), version));
        let Ok(schema) = our_schema(&name, version) else {
            tally.missing.insert((name, version));
            continue;
        };
        match check_java_instance(line, schema, &mut forgiven) {
            Ok(()) => tally.exact += 1,
            Err(e) => tally.failures.push(format!("{}: {e}", label(line))),
        }
    }
    report(&tally.line("java->rust"));
    assert!(tally.instances > 0, "Java wrote no instances");
    // Every version of every message the jars hold, each with its instances.
    let listing = of_type(lines, "schemas")
        .next()
        .expect("Java's listing of the jars");
    let listed: BTreeSet<(String, i16)> = listing["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| {
            let (lowest, highest) = (as_version(&m["lowest"]), as_version(&m["highest"]));
            (lowest..=highest).map(move |v| (text(&m["name"]).to_owned(), v))
        })
        .collect();
    assert_eq!(
        tally.versions, listed,
        "instances for every (message, version) of the jars"
    );
    assert_eq!(tally.instances, INSTANCES * listed.len());
    tally.assert_clean("java->rust");
}

/// A stable seed per message and version.
fn seed_for(name: &str, version: i16) -> u64 {
    name.bytes()
        .fold(RUST_SEED ^ 0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
        .wrapping_add(version as u64)
}

fn kind_of(kind: MessageKind) -> Option<(Kind, &'static str)> {
    Some(match kind {
        MessageKind::Request => (Kind::Request, "request"),
        MessageKind::Response => (Kind::Response, "response"),
        MessageKind::Header => (Kind::Header, "header"),
        MessageKind::Data => (Kind::Data, "data"),
        MessageKind::Metadata => (Kind::Metadata, "metadata"),
        MessageKind::CoordinatorKey | MessageKind::CoordinatorValue => return None,
    })
}

/// One record as a Rust-built batch holds it.
struct Built {
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(String, Option<Vec<u8>>)>,
    control: Option<ControlRecordType>,
}

/// A batch that kafka-wire built, and the records it was built from.
struct RustBatch {
    label: String,
    bytes: Vec<u8>,
    base_offset: i64,
    log_append_time: Option<i64>,
    records: Vec<Built>,
}

fn rust_batch(
    label: String,
    builder: RecordBatchBuilder,
    base_offset: i64,
    log_append_time: Option<i64>,
    records: Vec<Built>,
) -> RustBatch {
    let mut builder = builder;
    for r in &records {
        let headers: Vec<Header<'_>> = r
            .headers
            .iter()
            .map(|(k, v)| Header::new(k, v.as_deref()))
            .collect();
        match r.control {
            Some(kind) => {
                builder.append_control(r.timestamp, ControlRecord::new(kind), r.value.as_deref())
            }
            None => builder.append(r.timestamp, r.key.as_deref(), r.value.as_deref(), &headers),
        }
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    }
    let bytes = builder.build().unwrap_or_else(|e| panic!("{label}: {e}"));
    RustBatch {
        label,
        bytes,
        base_offset,
        log_append_time,
        records,
    }
}

fn plain_records(count: usize) -> Vec<Built> {
    let mut timestamp = 1_700_000_000_000i64;
    (0..count)
        .map(|i| {
            // Timestamps go back as well as forward: negative deltas too.
            timestamp += if i % 3 == 2 {
                -4_321
            } else {
                98_765 * i as i64
            };
            Built {
                timestamp,
                key: match i % 4 {
                    0 => Some(format!("key-{i}").into_bytes()),
                    1 => None,
                    2 => Some(Vec::new()),
                    _ => Some("ключ ✓".as_bytes().to_vec()),
                },
                value: match i % 5 {
                    0 => Some(format!("value {i}").into_bytes()),
                    1 => None,
                    2 => Some(Vec::new()),
                    3 => Some(vec![b'z'; 1_500]),
                    _ => Some((0..=255u8).collect()),
                },
                headers: match i % 3 {
                    0 => Vec::new(),
                    1 => vec![
                        ("trace".into(), Some(b"abc".to_vec())),
                        ("null".into(), None),
                    ],
                    _ => vec![("é✓🦀".into(), Some(Vec::new()))],
                },
                control: None,
            }
        })
        .collect()
}

fn marker(kind: ControlRecordType, coordinator_epoch: i32) -> Built {
    let mut value = vec![0, 0];
    value.extend_from_slice(&coordinator_epoch.to_be_bytes());
    Built {
        timestamp: 1_700_000_123_000,
        key: None,
        value: Some(value),
        headers: Vec::new(),
        control: Some(kind),
    }
}

/// The Rust-built corpus: every codec, with headers, producer state,
/// transactions, log append time, control markers, many records, and an
/// empty batch.
fn rust_batches() -> Vec<RustBatch> {
    let mut out = Vec::new();
    for codec in Compression::ALL {
        let name = codec.name();
        let b = |base| RecordBatchBuilder::new(base).compression(codec);
        out.push(rust_batch(
            format!("{name}: create time, headers"),
            b(0).partition_leader_epoch(3),
            0,
            None,
            plain_records(5),
        ));
        out.push(rust_batch(
            format!("{name}: log append time"),
            b(77)
                .timestamp_type(TimestampType::LogAppendTime)
                .log_append_time(1_700_000_999_000),
            77,
            Some(1_700_000_999_000),
            plain_records(3),
        ));
        out.push(rust_batch(
            format!("{name}: idempotent producer"),
            b(1_000)
                .producer_id(4_242)
                .producer_epoch(7)
                .base_sequence(99),
            1_000,
            None,
            plain_records(4),
        ));
        out.push(rust_batch(
            format!("{name}: transactional"),
            b(i64::from(i32::MAX) + 5)
                .producer_id(i64::MAX - 3)
                .producer_epoch(i16::MAX)
                .base_sequence(i32::MAX - 1)
                .transactional(true),
            i64::from(i32::MAX) + 5,
            None,
            plain_records(3),
        ));
        out.push(rust_batch(
            format!("{name}: 300 records"),
            b(5),
            5,
            None,
            plain_records(300),
        ));
    }
    for (kind, epoch) in [
        (ControlRecordType::Commit, 3),
        (ControlRecordType::Abort, 4),
    ] {
        out.push(rust_batch(
            format!("control: {kind:?} marker"),
            RecordBatchBuilder::new(50)
                .producer_id(88)
                .producer_epoch(1)
                .transactional(true)
                .control(true),
            50,
            None,
            vec![marker(kind, epoch)],
        ));
    }
    out.push(rust_batch(
        "empty batch".into(),
        RecordBatchBuilder::new(9),
        9,
        None,
        Vec::new(),
    ));
    out
}

/// What a Rust-built batch must iterate to: its records as built.
fn expected_records(batch: &RustBatch) -> Value {
    let records: Vec<Value> = batch
        .records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let key = match r.control {
                Some(kind) => Some(ControlRecord::new(kind).to_key().to_vec()),
                None => r.key.clone(),
            };
            let b64 = |b: &Option<Vec<u8>>| b.as_ref().map_or(Value::Null, |b| Value::String(STANDARD.encode(b)));
            json!({
                "offset": batch.base_offset + i as i64,
                "timestamp": batch.log_append_time.unwrap_or(r.timestamp),
                "attributes": 0,
                "key": b64(&key),
                "value": b64(&r.value),
                "headers": r.headers.iter().map(|(k, v)| json!({"key": k, "value": b64(v)})).collect::<Vec<_>>(),
                "controlType": r.control.map(|k| k.raw()),
            })
        })
        .collect();
    Value::Array(records)
}

/// The first difference between two JSON values, by path.
fn plain_difference(ours: &Value, java: &Value, path: &str) -> Option<String> {
    match (ours, java) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys()) {
                let at = format!("{path}.{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => {
                        if let Some(d) = plain_difference(x, y, &at) {
                            return Some(d);
                        }
                    }
                    (x, y) => return Some(format!("{at}: ours {x:?}, Java's {y:?}")),
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| plain_difference(x, y, &format!("{path}[{i}]"))),
        _ => (ours != java).then(|| format!("{path}: ours {ours}, Java's {java}")),
    }
}

/// What went to Java and what came back (one JVM for the direction).
struct RustToJava {
    /// The messages sent: the line, our bytes and our JSON.
    sent: Vec<(Value, Vec<u8>, Value)>,
    batches: Vec<RustBatch>,
    answers: Vec<Value>,
    failures: Vec<String>,
}

fn rust_to_java_run() -> Option<&'static RustToJava> {
    static RUN: OnceLock<Option<RustToJava>> = OnceLock::new();
    RUN.get_or_init(|| {
        let jvm = jvm()?;
        let mut sent = Vec::new();
        let mut failures = Vec::new();
        let mut input = String::new();
        for schema in schemas().values() {
            let Some((kind, kind_name)) = kind_of(schema.kind) else {
                continue;
            };
            for version in schema.valid_versions.iter() {
                let strategy = object(schema, &schema.fields, version, 0);
                for (instance, value) in
                    sample(&strategy, seed_for(&schema.name, version), INSTANCES)
                        .into_iter()
                        .enumerate()
                {
                    let line = json!({
                        "type": "message",
                        "kind": kind_name,
                        "name": schema.name,
                        "version": version,
                        "instance": instance,
                    });
                    let built = from_json_by_name(kind, &schema.name, version, &value)
                        .map_err(|e| format!("from JSON: {e:?}"))
                        .and_then(|m| m.bytes(version).map_err(|e| format!("encode: {e}")));
                    let bytes = match built {
                        Ok(bytes) => bytes,
                        Err(e) => {
                            failures.push(format!("{}: kafka-wire: {e}", label(&line)));
                            continue;
                        }
                    };
                    let ours = decode_by_name(kind, &schema.name, version, &bytes)
                        .unwrap_or_else(|e| panic!("{}: {e:?}", label(&line)))
                        .json(version);
                    let mut out = line.clone();
                    out["hex"] = Value::String(hex::encode(&bytes));
                    input.push_str(&out.to_string());
                    input.push('\n');
                    sent.push((line, bytes, ours));
                }
            }
        }
        let batches = rust_batches();
        for batch in &batches {
            let line =
                json!({"type": "batch", "label": batch.label, "hex": hex::encode(&batch.bytes)});
            input.push_str(&line.to_string());
            input.push('\n');
        }
        let dir = scratch();
        let (into, out) = (
            dir.join("rust-to-java.jsonl"),
            dir.join("rust-to-java.answers.jsonl"),
        );
        std::fs::write(&into, input).unwrap_or_else(|e| panic!("{}: {e}", into.display()));
        jvm.run(["check".as_ref(), into.as_os_str(), out.as_os_str()]);
        Some(RustToJava {
            sent,
            batches,
            answers: read_lines(&out),
            failures,
        })
    })
    .as_ref()
}

#[test]
fn rust_to_java() {
    let Some(run) = rust_to_java_run() else {
        return;
    };
    let mut tally = Tally::default();
    tally.failures.extend(run.failures.iter().cloned());
    let answers: Vec<&Value> = of_type(&run.answers, "message").collect();
    assert_eq!(answers.len(), run.sent.len(), "one answer per message sent");
    let mut forgiven = Vec::new();
    for ((line, bytes, ours), answer) in run.sent.iter().zip(answers) {
        let name = text(&line["name"]).to_owned();
        let version = version_of(line);
        tally.instances += 1;
        tally.types.insert(name.clone());
        tally.versions.insert((name.clone(), version));
        let result = (|| {
            if let Some(error) = answer["error"].as_str() {
                return Err(format!("Java: {error}"));
            }
            if let Some(d) = first_byte_difference(bytes, &hex_of(answer)) {
                return Err(format!("Java wrote back other bytes: {d}"));
            }
            let schema = schemas().get(&name).ok_or("no schema")?;
            match json_difference(schema, version, ours, &answer["json"], &mut forgiven) {
                Some(d) => Err(format!("JSON: {d}")),
                None => Ok(()),
            }
        })();
        match result {
            Ok(()) => tally.exact += 1,
            Err(e) => tally.failures.push(format!("{}: {e}", label(line))),
        }
    }
    // What the jars hold and nothing was sent for: missing from messages/.
    let coverage = of_type(&run.answers, "coverage")
        .next()
        .expect("a coverage line");
    for missing in coverage["notCovered"].as_array().into_iter().flatten() {
        let name = text(&missing["name"]).to_owned();
        let version = version_of(missing);
        tally.instances += INSTANCES;
        tally.types.insert(name.clone());
        tally.versions.insert((name.clone(), version));
        tally.missing.insert((name, version));
    }
    report(&tally.line("rust->java"));
    assert!(tally.instances > 0, "nothing was sent to Java");
    tally.assert_clean("rust->java");
}

#[test]
fn record_batches() {
    let (Some(lines), Some(run)) = (generated(), rust_to_java_run()) else {
        return;
    };
    let mut total = 0;
    let mut failures = Vec::new();
    for line in of_type(lines, "batch") {
        total += 1;
        let label = text(&line["label"]);
        match describe_records(&hex_of(line)) {
            Err(e) => failures.push(format!("java->rust {label}: {e}")),
            Ok(ours) => {
                if let Some(d) = plain_difference(&ours, &line["describe"], "$") {
                    failures.push(format!("java->rust {label}: {d}"));
                }
            }
        }
    }
    let answers: Vec<&Value> = of_type(&run.answers, "batch").collect();
    assert_eq!(
        answers.len(),
        run.batches.len(),
        "one answer per batch sent"
    );
    for (batch, answer) in run.batches.iter().zip(answers) {
        total += 1;
        let label = &batch.label;
        if let Some(error) = answer["error"].as_str() {
            failures.push(format!("rust->java {label}: Java: {error}"));
            continue;
        }
        let ours = describe_records(&batch.bytes).unwrap_or_else(|e| panic!("{label}: {e}"));
        if let Some(d) = plain_difference(
            &ours["batches"][0]["records"],
            &expected_records(batch),
            "$.batches[0].records",
        ) {
            failures.push(format!(
                "rust->java {label}: kafka-wire does not read back what it built: {d}"
            ));
        } else if let Some(d) = plain_difference(&ours, &answer["describe"], "$") {
            failures.push(format!("rust->java {label}: {d}"));
        }
    }
    report(&format!(
        "reference records: {}/{total} exact",
        total - failures.len()
    ));
    assert!(total > 0, "no batches");
    assert!(
        failures.is_empty(),
        "{} of {total} blobs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn error_codes_match_javas_errors() {
    let Some(lines) = generated() else { return };
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for line in of_type(lines, "error") {
        let code = line["code"]
            .as_i64()
            .and_then(|c| i16::try_from(c).ok())
            .expect("an int16 code");
        seen.insert(code);
        let ours = ErrorCode::from_code(code);
        if matches!(ours, ErrorCode::Unknown(_)) {
            problems.push(format!(
                "{code} {}: not in error_codes.tsv",
                text(&line["name"])
            ));
            continue;
        }
        if ours.name() != text(&line["name"]) {
            problems.push(format!(
                "{code}: named {} here, {} in Java",
                ours.name(),
                text(&line["name"])
            ));
        }
        if Some(ours.is_retriable()) != line["retriable"].as_bool() {
            problems.push(format!(
                "{code} {}: retriable {} here, {} in Java",
                ours.name(),
                ours.is_retriable(),
                line["retriable"]
            ));
        }
    }
    assert!(
        seen.len() > 100,
        "Java listed only {} error codes",
        seen.len()
    );
    // And nothing here that Java does not have.
    let table =
        std::fs::read_to_string(workspace_root().join("kafka-protocol/wire/error_codes.tsv"))
            .expect("error_codes.tsv");
    for row in table.lines().skip(1).filter(|l| !l.is_empty()) {
        let code: i16 = row
            .split('\t')
            .next()
            .and_then(|c| c.parse().ok())
            .expect("a code");
        if !seen.contains(&code) {
            problems.push(format!("{code}: in error_codes.tsv, not in Java's Errors"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The named differences of our JSON form do occur, where they are said to,
/// on Java's own values.
#[test]
fn named_json_differences_occur_as_documented() {
    let Some(lines) = generated() else { return };
    let (mut tagged, mut unknown, mut records, mut serialized_empty) = (0, 0, 0, 0);
    let mut nested_tagged = 0;
    for line in of_type(lines, "message") {
        let version = version_of(line);
        let Ok(schema) = our_schema(text(&line["name"]), version) else {
            continue;
        };
        let Some(kind) = Kind::parse(text(&line["kind"])) else {
            continue;
        };
        let bytes = hex_of(line);
        let Ok(decoded) = decode_by_name(kind, &schema.name, version, &bytes) else {
            continue;
        };
        let ours = decoded.json(version);
        // 1. A fresh value: Kafka leaves out every tagged field (all at
        //    their default), we write each of them.
        if line["mode"] == "defaults" {
            for f in schema.fields.iter().filter(|f| f.is_tagged_in(version)) {
                let key = lower_first(&f.name);
                assert!(
                    line["json"].get(&key).is_none(),
                    "{}: Java wrote {key} at its default",
                    label(line)
                );
                assert!(
                    ours.get(&key).is_some(),
                    "{}: we left out {key}",
                    label(line)
                );
                tagged += 1;
            }
        }
        // 3. Unknown tagged fields: ours has them, Kafka's converter not.
        if line["mode"] == "unknown-tags" && schema.flexible_versions.contains(version) {
            assert!(
                ours.get("_unknownTaggedFields").is_some(),
                "{}: no _unknownTaggedFields",
                label(line)
            );
            assert!(
                line["json"].get("_unknownTaggedFields").is_none(),
                "{}",
                label(line)
            );
            unknown += 1;
        }
        // 2. Records: where ours has the bytes, Kafka's converter has
        //    `<name>SizeInBytes` (serializeRecords false), or `""` whatever
        //    the records hold (serializeRecords true, as its plain
        //    `write(data, version)` does).
        let mut forgiven = Vec::new();
        let _ = json_difference(schema, version, &ours, &line["json"], &mut forgiven);
        records += forgiven
            .iter()
            .filter(|n| **n == Named::RecordsAsSize)
            .count();
        nested_tagged += forgiven
            .iter()
            .filter(|n| **n == Named::TaggedAtDefault)
            .count();
        if let Some(serialized) = line.get("jsonSerialized") {
            serialized_empty +=
                serialized_records(schema, &schema.fields, version, serialized, &label(line));
        }
    }
    assert!(
        tagged > 50,
        "only {tagged} top-level tagged fields at default seen"
    );
    assert!(
        nested_tagged > 200,
        "only {nested_tagged} tagged fields at default forgiven"
    );
    assert!(
        unknown > 100,
        "only {unknown} instances with unknown tags seen"
    );
    assert!(records > 100, "only {records} records fields seen");
    assert!(
        serialized_empty > 100,
        "only {serialized_empty} serialized records fields seen"
    );
}

/// Walks Kafka's JSON form with records serialized: every non-null records
/// field is `""`, whatever the records hold. Returns how many it saw.
fn serialized_records(
    schema: &Schema,
    fields: &[kafka_codegen::model::Field],
    version: i16,
    serialized: &Value,
    at: &str,
) -> usize {
    let mut seen = 0;
    for f in fields.iter().filter(|f| f.versions.contains(version)) {
        let key = lower_first(&f.name);
        let Some(value) = serialized.get(&key) else {
            continue;
        };
        if f.ty == FieldType::Records {
            if !value.is_null() {
                assert_eq!(value, "", "{at}: {key} serialized");
                seen += 1;
            }
        } else if let Some(def) = struct_of(&f.ty).and_then(|n| schema.find_struct(n)) {
            let items: Vec<&Value> = match value {
                Value::Array(items) => items.iter().collect(),
                Value::Object(_) => vec![value],
                _ => Vec::new(),
            };
            for item in items {
                seen += serialized_records(schema, &def.fields, version, item, at);
            }
        }
    }
    seen
}

/// The named exception: a null `records` value in a version where the field
/// is not nullable. Java refuses to write it (a NullPointerException);
/// kafka-wire writes it as empty, as its docs say.
#[test]
fn java_refuses_null_records_where_not_nullable() {
    let Some(lines) = generated() else { return };
    let refused: BTreeSet<(String, i16)> = of_type(lines, "refusal")
        .map(|l| (text(&l["name"]).to_owned(), version_of(l)))
        .collect();
    let expected: BTreeSet<(String, i16)> = schemas()
        .values()
        .flat_map(|s| s.valid_versions.iter().map(move |v| (s, v)))
        .filter(|(s, v)| has_non_nullable_records(s, &s.fields, *v))
        .map(|(s, v)| (s.name.clone(), v))
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(
        refused, expected,
        "Java refuses exactly the versions with a non-nullable records field"
    );
    for line in of_type(lines, "refusal") {
        let version = version_of(line);
        let error = text(&line["error"]);
        assert!(
            error.starts_with("NullPointerException") && error.contains("ecords"),
            "{}: {error}",
            label(line)
        );
        let schema = &schemas()[text(&line["name"])];
        let kind = Kind::parse(text(&line["kind"])).expect("a kind");
        // kafka-wire takes the same value, its records null, and writes
        // them as empty.
        let mut value = line["json"].clone();
        let nulled = set_records(schema, &schema.fields, version, &mut value, &Value::Null);
        assert!(nulled > 0, "{}: no records field", label(line));
        let ours = from_json_by_name(kind, &schema.name, version, &value).expect("from JSON");
        let bytes = ours
            .bytes(version)
            .expect("kafka-wire writes null records as empty");
        let mut back = decode_by_name(kind, &schema.name, version, &bytes)
            .expect("decodes")
            .json(version);
        assert_eq!(
            set_records(schema, &schema.fields, version, &mut back, &Value::Null),
            nulled
        );
        assert_eq!(back, value, "{}: only the records differ", label(line));
        let mut empty = value.clone();
        set_records(schema, &schema.fields, version, &mut empty, &json!(""));
        let back = decode_by_name(kind, &schema.name, version, &bytes)
            .expect("decodes")
            .json(version);
        assert_eq!(back, empty, "{}: null records come back empty", label(line));
    }
}

/// Sets every records field of a JSON value to `to`, returning how many
/// there were.
fn set_records(
    schema: &Schema,
    fields: &[kafka_codegen::model::Field],
    version: i16,
    value: &mut Value,
    to: &Value,
) -> usize {
    let mut count = 0;
    for f in fields.iter().filter(|f| f.versions.contains(version)) {
        let Some(slot) = value.get_mut(lower_first(&f.name)) else {
            continue;
        };
        if f.ty == FieldType::Records {
            *slot = to.clone();
            count += 1;
        } else if let Some(def) = struct_of(&f.ty).and_then(|n| schema.find_struct(n)) {
            match slot {
                Value::Array(items) => {
                    for item in items {
                        count += set_records(schema, &def.fields, version, item, to);
                    }
                }
                Value::Object(_) => count += set_records(schema, &def.fields, version, slot, to),
                _ => {}
            }
        }
    }
    count
}

fn has_non_nullable_records(
    schema: &Schema,
    fields: &[kafka_codegen::model::Field],
    version: i16,
) -> bool {
    fields
        .iter()
        .filter(|f| f.versions.contains(version))
        .any(|f| match &f.ty {
            FieldType::Records => !f.nullable_versions.contains(version),
            ty => struct_of(ty)
                .and_then(|name| schema.find_struct(name))
                .is_some_and(|def| has_non_nullable_records(schema, &def.fields, version)),
        })
}

/// The struct a field holds, alone or in an array.
fn struct_of(ty: &FieldType) -> Option<&str> {
    match ty {
        FieldType::Struct(name) => Some(name),
        FieldType::Array(element) => struct_of(element),
        _ => None,
    }
}

/// The comparison forgives the named differences and nothing else. Needs
/// no Java: the Kafka side is written out by hand here.
#[test]
fn json_difference_forgives_only_the_named_differences() {
    let schema = &schemas()["ApiVersionsResponse"];
    let ours = json!({
        "errorCode": 0,
        "apiKeys": [{"apiKey": 18, "minVersion": 0, "maxVersion": 4}],
        "throttleTimeMs": 0,
        "supportedFeatures": [],
        "finalizedFeaturesEpoch": -1,
        "finalizedFeatures": [],
        "zkMigrationReady": false,
        "_unknownTaggedFields": [{"tag": 9, "data": "AQ=="}],
    });
    // Kafka leaves out the four tagged fields at their default and the
    // unknown tagged fields.
    let java = json!({
        "errorCode": 0,
        "apiKeys": [{"apiKey": 18, "minVersion": 0, "maxVersion": 4}],
        "throttleTimeMs": 0,
    });
    let mut forgiven = Vec::new();
    assert_eq!(
        json_difference(schema, 3, &ours, &java, &mut forgiven),
        None
    );
    assert_eq!(
        forgiven,
        [
            Named::TaggedAtDefault,
            Named::TaggedAtDefault,
            Named::TaggedAtDefault,
            Named::TaggedAtDefault,
            Named::UnknownTaggedFields,
        ]
    );

    let differs = |ours: &Value, java: &Value, path: &str| {
        let d = json_difference(schema, 3, ours, java, &mut Vec::new());
        assert_eq!(
            d.as_ref().map(|d| d.path.as_str()),
            Some(path),
            "{ours} against {java}: {d:?}"
        );
    };
    let with = |base: &Value, key: &str, value: Value| {
        let mut v = base.clone();
        v[key] = value;
        v
    };
    let without = |base: &Value, key: &str| {
        let mut v = base.clone();
        v.as_object_mut().map(|o| o.remove(key));
        v
    };
    // A value that differs, nested or not.
    differs(&ours, &with(&java, "errorCode", json!(35)), "$.errorCode");
    differs(
        &ours,
        &with(
            &java,
            "apiKeys",
            json!([{"apiKey": 18, "minVersion": 0, "maxVersion": 3}]),
        ),
        "$.apiKeys[0].maxVersion",
    );
    differs(&ours, &with(&java, "apiKeys", json!([])), "$.apiKeys");
    // An untagged field missing on either side.
    differs(&ours, &without(&java, "throttleTimeMs"), "$.throttleTimeMs");
    differs(&without(&ours, "throttleTimeMs"), &java, "$.throttleTimeMs");
    // A tagged field that is not at its default must be on both sides.
    differs(
        &with(&ours, "finalizedFeaturesEpoch", json!(7)),
        &java,
        "$.finalizedFeaturesEpoch",
    );
    differs(
        &with(&ours, "zkMigrationReady", json!(true)),
        &java,
        "$.zkMigrationReady",
    );
    // Nor may Kafka have what ours leaves out, or anything else.
    differs(
        &without(&ours, "zkMigrationReady"),
        &with(&java, "zkMigrationReady", json!(false)),
        "$.zkMigrationReady",
    );
    differs(
        &ours,
        &with(&java, "_unknownTaggedFields", json!([])),
        "$._unknownTaggedFields",
    );
    differs(&ours, &with(&java, "other", json!(1)), "$.other");
    differs(&with(&ours, "other", json!(1)), &java, "$.other");
    // An integer never equals a float, but floats compare as numbers.
    differs(
        &ours,
        &with(&java, "throttleTimeMs", json!(0.0)),
        "$.throttleTimeMs",
    );

    // Records: our bytes against Kafka's count of them; null against null.
    let schema = &schemas()["ProduceRequest"];
    let produce = |records: Value| {
        json!({"transactionalId": null, "acks": 1, "timeoutMs": 5,
               "topicData": [{"name": "t", "partitionData": [{"index": 0, "records": records}]}]})
    };
    let counted = |count: Value| {
        json!({"transactionalId": null, "acks": 1, "timeoutMs": 5,
               "topicData": [{"name": "t", "partitionData": [{"index": 0, "recordsSizeInBytes": count}]}]})
    };
    let mut forgiven = Vec::new();
    assert_eq!(
        json_difference(
            schema,
            8,
            &produce(json!("AAEC")),
            &counted(json!(3)),
            &mut forgiven
        ),
        None
    );
    assert_eq!(forgiven, [Named::RecordsAsSize]);
    assert_eq!(
        json_difference(
            schema,
            8,
            &produce(Value::Null),
            &produce(Value::Null),
            &mut Vec::new()
        ),
        None
    );
    for (ours, java) in [
        (produce(json!("AAEC")), counted(json!(4))),
        (produce(json!("AAEC")), produce(json!(""))),
        (produce(json!("AAEC")), produce(json!("AAEC"))),
        (produce(Value::Null), counted(json!(0))),
        (produce(json!("")), produce(Value::Null)),
    ] {
        let d = json_difference(schema, 8, &ours, &java, &mut Vec::new());
        assert!(
            d.is_some_and(|d| d
                .path
                .starts_with("$.topicData[0].partitionData[0].records")),
            "{ours} against {java}"
        );
    }
}
