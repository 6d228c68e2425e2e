//! The Rust side of the tests that take Apache Kafka's own Java code as the
//! reference: building and running the JVM harness in `tests/java/`, the one
//! comparison of our JSON form with Kafka's (and the differences it
//! forgives, each named), and kafka-wire's description of a records blob in
//! the same shape as the harness's.
//!
//! Our JSON form differs from what Kafka's generated `*JsonConverter`s write
//! in three deliberate ways (see `docs/semantics.md`, "The JSON form", and
//! `docs/real-kafka.md`, "Verified against Kafka's Java code"), and
//! [`json_difference`] forgives
//! exactly these, each a [`Named`] difference:
//!
//! 1. [`Named::TaggedAtDefault`]: a tagged field at its default is written
//!    by us and left out by Kafka.
//! 2. [`Named::RecordsAsSize`]: we write a `records` field `x` as base64 of
//!    its bytes; Kafka writes `xSizeInBytes`, their count (asked to
//!    serialize records, Kafka 4.4.0's converters write `""`, not the
//!    bytes). The count must match; the bytes themselves are compared on
//!    the wire. Null is `x: null` on both sides.
//! 3. [`Named::UnknownTaggedFields`]: we write unknown tagged fields as
//!    `_unknownTaggedFields`; Kafka's converter leaves them out.

use std::ffi::OsStr;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use kafka_codegen::model::{DefaultValue, Field, FieldType, Scalar, Schema};
use kafka_wire_records::{Batch, Batches, DecodeOptions, TimestampType, LOG_OVERHEAD};
use kafka_wire_test_support::kafka::{java_program, runs};
use serde_json::{json, Map, Number, Value};

use crate::strategies::lower_first;
use crate::{kafka_jar, kafka_version, workspace_root};

/// The harness, built: the class path to run `dev.kafkawire.reference.Main`
/// with.
#[derive(Debug)]
pub struct Jvm {
    java: PathBuf,
    classpath: String,
}

/// Whether the variable that makes these tests required is set.
pub fn java_required() -> bool {
    std::env::var_os("KAFKA_WIRE_REQUIRE_JAVA").is_some()
}

fn skip(why: String) -> Option<Jvm> {
    assert!(
        !java_required(),
        "KAFKA_WIRE_REQUIRE_JAVA is set, but {why}"
    );
    // Past the test harness's capture, so that the skip shows in a passing run.
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {why}; the Java reference tests need Java, Maven and Kafka's jars in ~/.m2"
    );
    None
}

/// Builds the harness once per test binary (`mvn -o -q compile`, offline),
/// or says why it cannot: no `java`, no `mvn`, or Kafka's jars are not in
/// `~/.m2`. Then the tests skip with that message, unless
/// `KAFKA_WIRE_REQUIRE_JAVA` is set, as `.ci/run` sets it, which makes it a
/// failure. A harness that does not compile is always a failure.
pub fn jvm() -> Option<&'static Jvm> {
    static JVM: OnceLock<Option<Jvm>> = OnceLock::new();
    JVM.get_or_init(build).as_ref()
}

fn build() -> Option<Jvm> {
    let java = java_program();
    if !runs(java.as_os_str(), "-version") {
        return skip(format!("`{}` does not run", java.display()));
    }
    if !runs(OsStr::new("mvn"), "-v") {
        return skip("`mvn` does not run".to_owned());
    }
    let version = kafka_version();
    for artifact in ["kafka-clients", "kafka-metadata"] {
        if kafka_jar(artifact, &version).is_none() {
            return skip(format!(
                "org.apache.kafka:{artifact}:{version} is not in ~/.m2"
            ));
        }
    }
    let pom = workspace_root().join("tests/java/pom.xml");
    let out = Command::new("mvn")
        .args(["-B", "-o", "-q", "-f"])
        .arg(&pom)
        .arg("compile")
        .output()
        .unwrap_or_else(|e| panic!("mvn: {e}"));
    assert!(
        out.status.success(),
        "`mvn -o -q -f {} compile` failed (run `mvn -f {0} dependency:go-offline` once, online):\n{}{}",
        pom.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let target = workspace_root().join("tests/java/target");
    let dependencies = std::fs::read_to_string(target.join("classpath.txt"))
        .unwrap_or_else(|e| panic!("tests/java/target/classpath.txt: {e}"));
    let classpath = format!(
        "{}:{}",
        target.join("classes").display(),
        dependencies.trim()
    );
    Some(Jvm { java, classpath })
}

impl Jvm {
    /// A command that runs `main_class` of the module (such as
    /// `dev.kafkawire.clients.Flow`) on its class path, with a small heap
    /// and the quick-starting C1 compiler only: for the short client
    /// programs beside the harness.
    pub fn command(&self, main_class: &str) -> Command {
        let mut command = Command::new(&self.java);
        command
            .args(["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"])
            .arg("-cp")
            .arg(&self.classpath)
            .arg(main_class);
        command
    }

    /// Runs the main class `class` (such as `dev.kafkawire.reference.ClientData`)
    /// of the harness's class path with `args`, in one JVM with a small heap,
    /// and waits for it; returns its standard error.
    pub fn run_class<I, S>(&self, class: &str, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self
            .command(class)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", self.java.display()));
        assert!(
            out.status.success(),
            "{class} failed:
{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// Runs the harness with `args` in one JVM and waits for it.
    pub fn run<I, S>(&self, args: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = Command::new(&self.java)
            .arg("-cp")
            .arg(&self.classpath)
            .arg("dev.kafkawire.reference.Main")
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", self.java.display()));
        assert!(
            out.status.success(),
            "the Java harness failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The JSON objects of a file with one per line.
pub fn read_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{}: {e}: {line}", path.display()))
        })
        .collect()
}

/// A difference between our JSON form and Kafka's converter's that
/// [`json_difference`] forgives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// A tagged field at its default: we write it, Kafka leaves it out.
    TaggedAtDefault,
    /// A non-null `records` field `x`: we write its bytes, Kafka writes
    /// `xSizeInBytes`, their count.
    RecordsAsSize,
    /// `_unknownTaggedFields`: we write it, Kafka leaves it out.
    UnknownTaggedFields,
}

/// Where our JSON form and Kafka's first differ, beyond the named
/// differences.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonDifference {
    /// A JSON path such as `$.topics[0].partitions[1].records`.
    pub path: String,
    /// Our value there, if we have one.
    pub ours: Option<Value>,
    /// Kafka's value there, if it has one.
    pub java: Option<Value>,
    /// What is wrong.
    pub why: &'static str,
}

impl std::fmt::Display for JsonDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |v: &Option<Value>| {
            v.as_ref().map_or("(absent)".to_owned(), |v| {
                let text = v.to_string();
                if text.chars().count() > 200 {
                    format!("{}...", text.chars().take(200).collect::<String>())
                } else {
                    text
                }
            })
        };
        write!(
            f,
            "{}: {}; ours {}, Java's {}",
            self.path,
            self.why,
            show(&self.ours),
            show(&self.java)
        )
    }
}

/// The first place where `ours` (our JSON form of a value of `schema` at
/// `version`) and `java` (Kafka's converter's default form)
/// differ, forgiving exactly the [`Named`] differences; `forgiven` collects
/// each one forgiven, so that tests can assert they occur.
pub fn json_difference(
    schema: &Schema,
    version: i16,
    ours: &Value,
    java: &Value,
    forgiven: &mut Vec<Named>,
) -> Option<JsonDifference> {
    let mut cx = Cx {
        schema,
        version,
        forgiven,
    };
    cx.object(&schema.fields, ours, java, "$")
}

struct Cx<'s, 'f> {
    schema: &'s Schema,
    version: i16,
    forgiven: &'f mut Vec<Named>,
}

fn differ(
    path: &str,
    ours: Option<&Value>,
    java: Option<&Value>,
    why: &'static str,
) -> JsonDifference {
    JsonDifference {
        path: path.to_owned(),
        ours: ours.cloned(),
        java: java.cloned(),
        why,
    }
}

impl Cx<'_, '_> {
    fn object(
        &mut self,
        fields: &[Field],
        ours: &Value,
        java: &Value,
        path: &str,
    ) -> Option<JsonDifference> {
        let (Value::Object(o), Value::Object(j)) = (ours, java) else {
            return (ours != java)
                .then(|| differ(path, Some(ours), Some(java), "not both objects"));
        };
        let present: Vec<&Field> = fields
            .iter()
            .filter(|f| f.versions.contains(self.version))
            .collect();
        for f in &present {
            let key = lower_first(&f.name);
            let at = format!("{path}.{key}");
            if f.ty == FieldType::Records {
                if let Some(d) = self.records(o, j, &key, &at) {
                    return Some(d);
                }
                continue;
            }
            match (o.get(&key), j.get(&key)) {
                (Some(a), Some(b)) => {
                    if let Some(d) = self.value(&f.ty, a, b, &at) {
                        return Some(d);
                    }
                }
                (Some(a), None)
                    if f.is_tagged_in(self.version)
                        && *a == default_json(self.schema, f, self.version) =>
                {
                    self.forgiven.push(Named::TaggedAtDefault);
                }
                (a, b) => {
                    let why = if f.is_tagged_in(self.version) {
                        "a tagged field not at its default is on one side only"
                    } else {
                        "a field of the version is on one side only"
                    };
                    return Some(differ(&at, a, b, why));
                }
            }
        }
        let known = |key: &str| present.iter().any(|f| lower_first(&f.name) == key);
        let size_key = |key: &str| {
            present.iter().any(|f| {
                f.ty == FieldType::Records && key == format!("{}SizeInBytes", lower_first(&f.name))
            })
        };
        for (key, value) in o {
            if key == "_unknownTaggedFields" {
                self.forgiven.push(Named::UnknownTaggedFields);
            } else if !known(key) {
                return Some(differ(
                    &format!("{path}.{key}"),
                    Some(value),
                    None,
                    "a key the version lacks",
                ));
            }
        }
        for (key, value) in j {
            if !known(key) && !size_key(key) {
                return Some(differ(
                    &format!("{path}.{key}"),
                    None,
                    Some(value),
                    "a key the version lacks",
                ));
            }
        }
        None
    }

    /// A records field `key`: null on both sides, or our bytes where Kafka
    /// has `<key>SizeInBytes`, their count.
    fn records(
        &mut self,
        o: &Map<String, Value>,
        j: &Map<String, Value>,
        key: &str,
        at: &str,
    ) -> Option<JsonDifference> {
        let size_key = format!("{key}SizeInBytes");
        match (o.get(key), j.get(key), j.get(&size_key)) {
            (Some(Value::Null), Some(Value::Null), None) => None,
            (Some(Value::String(b64)), None, Some(size)) => {
                let Ok(bytes) = STANDARD.decode(b64) else {
                    return Some(differ(at, o.get(key), None, "our records are not base64"));
                };
                if size.as_u64() != Some(bytes.len() as u64) {
                    let at = format!("{at}SizeInBytes");
                    return Some(differ(
                        &at,
                        Some(&json!(bytes.len())),
                        Some(size),
                        "records of another size",
                    ));
                }
                self.forgiven.push(Named::RecordsAsSize);
                None
            }
            (ours, java, _) => Some(differ(
                at,
                ours,
                java.or(j.get(&size_key)),
                "records: neither null on both sides nor bytes against their size",
            )),
        }
    }

    fn value(
        &mut self,
        ty: &FieldType,
        ours: &Value,
        java: &Value,
        path: &str,
    ) -> Option<JsonDifference> {
        match (ty, ours, java) {
            (FieldType::Struct(name), Value::Object(_), Value::Object(_)) => {
                let schema = self.schema;
                let def = schema.find_struct(name)?;
                self.object(&def.fields, ours, java, path)
            }
            (FieldType::Array(element), Value::Array(a), Value::Array(b)) => {
                if a.len() != b.len() {
                    return Some(differ(
                        path,
                        Some(ours),
                        Some(java),
                        "arrays of different lengths",
                    ));
                }
                a.iter()
                    .zip(b)
                    .enumerate()
                    .find_map(|(i, (x, y))| self.value(element, x, y, &format!("{path}[{i}]")))
            }
            _ => (!same_scalar(ours, java))
                .then(|| differ(path, Some(ours), Some(java), "different values")),
        }
    }
}

/// Equal JSON scalars. Numbers are equal when both are integers of the same
/// value, or both are floats of the same value (Kafka writes `1.0E10`
/// where we write `10000000000.0`); an integer never equals a float.
fn same_scalar(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.is_f64(), y.is_f64()) {
            (true, true) => x.as_f64() == y.as_f64(),
            (false, false) => x == y,
            _ => false,
        },
        _ => a == b,
    }
}

/// Our JSON form of the default of field `f` at `version`: what a fresh
/// value holds.
pub fn default_json(schema: &Schema, f: &Field, version: i16) -> Value {
    match (&f.default, &f.ty) {
        (DefaultValue::Null, _) => Value::Null,
        (DefaultValue::Bool(b), _) => Value::Bool(*b),
        (DefaultValue::Int(i), _) => i64::try_from(*i).map_or(Value::Null, Value::from),
        (DefaultValue::Float(x), _) => Number::from_f64(*x).map_or(Value::Null, Value::Number),
        (DefaultValue::String(s), _) => Value::String(s.clone()),
        (DefaultValue::Uuid(b), _) => Value::String(URL_SAFE_NO_PAD.encode(b)),
        (DefaultValue::Implicit, ty) => implicit_default(schema, ty, version),
    }
}

fn implicit_default(schema: &Schema, ty: &FieldType, version: i16) -> Value {
    match ty {
        FieldType::Scalar(Scalar::Bool) => Value::Bool(false),
        FieldType::Scalar(Scalar::Float64) => json!(0.0),
        FieldType::Scalar(Scalar::Uuid) => Value::String(URL_SAFE_NO_PAD.encode([0u8; 16])),
        FieldType::Scalar(_) => json!(0),
        FieldType::String | FieldType::Bytes => Value::String(String::new()),
        FieldType::Records => Value::Null,
        FieldType::Array(_) => Value::Array(Vec::new()),
        FieldType::Struct(name) => {
            let Some(def) = schema.find_struct(name) else {
                return Value::Null;
            };
            let map: Map<String, Value> = def
                .fields
                .iter()
                .filter(|f| f.versions.contains(version))
                .map(|f| (lower_first(&f.name), default_json(schema, f, version)))
                .collect();
            Value::Object(map)
        }
    }
}

/// Where two byte strings first differ, with the bytes around it in hex.
pub fn first_byte_difference(ours: &[u8], java: &[u8]) -> Option<String> {
    let at = ours
        .iter()
        .zip(java)
        .position(|(a, b)| a != b)
        .or_else(|| (ours.len() != java.len()).then(|| ours.len().min(java.len())))?;
    let from = at.saturating_sub(8);
    let window = |b: &[u8]| hex::encode(&b[from.min(b.len())..(at + 16).min(b.len())]);
    Some(format!(
        "bytes differ at offset {at} of {} (ours) / {} (Java); from offset {from}: ours {}, Java's {}",
        ours.len(),
        java.len(),
        window(ours),
        window(java)
    ))
}

fn base64_or_null(bytes: Option<&[u8]>) -> Value {
    bytes.map_or(Value::Null, |b| Value::String(STANDARD.encode(b)))
}

fn timestamp_type_id(t: Option<TimestampType>) -> i64 {
    match t {
        None => -1,
        Some(TimestampType::CreateTime) => 0,
        Some(TimestampType::LogAppendTime) => 1,
    }
}

/// kafka-wire's view of a records blob, in the shape of the harness's
/// `Batches.describe`: every batch (every shallow entry for magic 0 and 1)
/// with its header fields and records. Kafka's constants stand where a
/// legacy entry has no such field: -1 for producer id, epoch, sequence and
/// partition leader epoch, and for a magic 0 timestamp.
pub fn describe_records(blob: &[u8]) -> Result<Value, String> {
    let mut batches = Vec::new();
    let mut entries = Batches::new(blob, &DecodeOptions::default());
    let mut start = 0;
    while let Some(entry) = entries.next() {
        let entry = entry.map_err(|e| format!("kafka-wire: {e}"))?;
        let size = (entries.position() - start) as i64;
        start = entries.position();
        batches.push(match &entry {
            Batch::V2(batch) => {
                let h = batch.header();
                if i64::from(h.batch_length) + LOG_OVERHEAD as i64 != size {
                    return Err(format!(
                        "kafka-wire: batch length {} but {size} bytes taken",
                        h.batch_length
                    ));
                }
                let mut records = Vec::new();
                for record in batch.records() {
                    let r = record.map_err(|e| format!("kafka-wire: {e}"))?;
                    records.push(json!({
                        "offset": r.offset,
                        "timestamp": r.timestamp,
                        "attributes": r.attributes,
                        "key": base64_or_null(r.key),
                        "value": base64_or_null(r.value),
                        "headers": r.headers.iter().map(|h| json!({
                            "key": h.key,
                            "value": base64_or_null(h.value),
                        })).collect::<Vec<_>>(),
                        "controlType": r.control.map(|c| c.record_type),
                    }));
                }
                json!({
                    "magic": h.magic,
                    "baseOffset": h.base_offset,
                    "lastOffset": h.last_offset(),
                    "partitionLeaderEpoch": h.partition_leader_epoch,
                    "attributes": h.attributes,
                    "compression": batch.compression().id(),
                    "timestampType": timestamp_type_id(Some(h.timestamp_type())),
                    "maxTimestamp": h.max_timestamp,
                    "transactional": h.is_transactional(),
                    "control": h.is_control(),
                    "producerId": h.producer_id,
                    "producerEpoch": h.producer_epoch,
                    "baseSequence": h.base_sequence,
                    "crc": h.crc,
                    "size": size,
                    "records": records,
                })
            }
            Batch::Legacy(legacy) => {
                let m = legacy.message();
                let mut records = Vec::new();
                for message in legacy.messages() {
                    let r = message.map_err(|e| format!("kafka-wire: {e}"))?;
                    records.push(json!({
                        "offset": r.offset,
                        "timestamp": r.timestamp.unwrap_or(-1),
                        "attributes": r.attributes,
                        "key": base64_or_null(r.key),
                        "value": base64_or_null(r.value),
                        "headers": [],
                        "controlType": null,
                    }));
                }
                let base_offset = records
                    .first()
                    .map_or(m.offset, |r| r["offset"].as_i64().unwrap_or(m.offset));
                json!({
                    "magic": m.magic,
                    "baseOffset": base_offset,
                    "lastOffset": m.offset,
                    "partitionLeaderEpoch": -1,
                    "attributes": m.attributes,
                    "compression": legacy.compression().id(),
                    "timestampType": timestamp_type_id(m.timestamp_type()),
                    "maxTimestamp": m.timestamp.unwrap_or(-1),
                    "transactional": false,
                    "control": false,
                    "producerId": -1,
                    "producerEpoch": -1,
                    "baseSequence": -1,
                    "crc": m.crc,
                    "size": size,
                    "records": records,
                })
            }
        });
    }
    if let Some(tail) = entries.partial_tail() {
        return Err(format!(
            "kafka-wire: an incomplete entry of {tail} bytes ends the blob"
        ));
    }
    Ok(json!({ "batches": batches }))
}
