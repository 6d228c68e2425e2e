//! Agreement with Kafka's Java reader, measured: the differential run.
//!
//! Valid bodies of every request and response version (the values the
//! Rust-to-Java reference test sends, from the property-test strategies at
//! the same seed) are mutated (`kafka_wire_tests::mutate`: truncation, a
//! flipped byte, appended bytes, invalid UTF-8, over-long and five-byte
//! varints, duplicate and out-of-order tags, negative and huge lengths),
//! deterministically. Each mutated body goes to Kafka's reader, the path a
//! broker takes for a request and a client for a response, in one JVM
//! (`Main differential`), and to kafka-wire's `RequestBody::decode` /
//! `ResponseBody::decode`. Both refusing agree; both accepting agree when
//! they decoded the same value, which is when each writes back the same
//! bytes at the version. It prints
//!
//! ```text
//! differential: N bodies; agree A; java accepts, ours refuses X; ours accepts, java refuses Y
//! ```
//!
//! and a line per mutation kind. Y must be 0: a body Kafka refuses and
//! kafka-wire accepts is a bug here. Every X body must fall under one of the
//! rules of [`Rule`], where kafka-wire's reader is stricter than Kafka's on
//! purpose (`docs/semantics.md`); any other fails the test, as does a body
//! both accept with different values.
//!
//! Two behaviors of Kafka's request and response classes act on values
//! after its reader has read them, and are named here rather than counted
//! as disagreements ([`kafkas_normalization`], [`CLASS_CHECKS`]): the
//! readers agree when kafka-wire's value is the one Kafka read. Every
//! disagreement goes to `target/tmp/java-reference/differential.disagreements.txt`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use kafka_codegen::model::{MessageKind, SchemaSet};
use kafka_wire::runtime::{DecodeError, DecodeErrorKind, PathSegment};
use kafka_wire::{ApiKey, ResponseBody};
use kafka_wire_tests::java::{first_byte_difference, jvm};
use kafka_wire_tests::mutate::{mutations, sites, MutationKind, Rng};
use kafka_wire_tests::strategies::{object, sample};
use kafka_wire_tests::{
    decode_by_name, from_json_by_name, workspace_root, Decoded, Kind, LookupError,
};
use serde_json::Value;

/// Valid bodies per (api, version, direction) that are mutated: the first
/// ones the Rust-to-Java reference test sends.
const BASES: usize = 4;
/// The seed of the strategies' values, as in `java_reference.rs`.
const RUST_SEED: u64 = 4_400;
/// The seed of the mutations.
const MUTATION_SEED: u64 = 46;

/// The seed `java_reference.rs` samples a message and version with.
fn seed_for(name: &str, version: i16) -> u64 {
    name.bytes()
        .fold(RUST_SEED ^ 0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
        .wrapping_add(version as u64)
}

/// Why kafka-wire's reader refuses a body that Kafka's accepts: the rules
/// where it is stricter on purpose, each listed in `docs/semantics.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rule {
    /// A string that is not UTF-8: Kafka replaces the bad bytes.
    InvalidUtf8,
    /// A tag twice in one section: Kafka keeps the last (known tags) or
    /// both (unknown ones).
    DuplicateTag,
    /// A varint's last byte with bits past the width: Kafka drops them.
    VarintExcessBits,
    /// A known tagged field whose declared size is not what its value
    /// takes: Kafka reads the value and never checks the size.
    TaggedFieldSize,
    /// Bytes after the body: Kafka's reader stops where the body ends.
    TrailingBytes,
    /// An ApiVersionsResponse that does not read at its version but reads
    /// at version 0: Kafka's client falls back to version 0 (a broker
    /// answers a version it does not support with a v0 body); kafka-wire
    /// leaves that to `frame::response_body_version`.
    ApiVersionsFallback,
}

impl Rule {
    /// The rule under which kafka-wire refuses `case` with `error` where
    /// Kafka's reader accepts it, if it is one of them.
    fn of(case: &Case, error: &DecodeError) -> Option<Rule> {
        if case.name == "ApiVersionsResponse" {
            // Kafka's reader ignores bytes after the v0 body too.
            let reads_at_v0 = match ResponseBody::decode(&case.bytes, ApiKey::ApiVersions, 0) {
                Ok(_) => true,
                Err(e) => matches!(e.kind(), DecodeErrorKind::TrailingBytes(_)),
            };
            if reads_at_v0 {
                return Some(Rule::ApiVersionsFallback);
            }
        }
        // A size that is not a field's own: a tagged field's (the path ends
        // at the struct whose section it is in).
        let in_section = !matches!(
            error.path().segments().last(),
            Some(PathSegment::Field(_) | PathSegment::Tag(_))
        );
        Some(match error.kind() {
            DecodeErrorKind::InvalidUtf8 { .. } => Rule::InvalidUtf8,
            DecodeErrorKind::DuplicateTag(_) => Rule::DuplicateTag,
            DecodeErrorKind::VarintTooLong => Rule::VarintExcessBits,
            DecodeErrorKind::TaggedFieldSize { .. } => Rule::TaggedFieldSize,
            DecodeErrorKind::LengthExceedsInput { length, .. }
                if in_section && *length < 0x8000_0000 =>
            {
                Rule::TaggedFieldSize
            }
            DecodeErrorKind::TrailingBytes(_) => Rule::TrailingBytes,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Rule::InvalidUtf8 => "invalid-utf8",
            Rule::DuplicateTag => "duplicate-tag",
            Rule::VarintExcessBits => "varint-excess-bits",
            Rule::TaggedFieldSize => "tagged-field-size",
            Rule::TrailingBytes => "trailing-bytes",
            Rule::ApiVersionsFallback => "api-versions-v0-fallback",
        }
    }
}

/// One mutated body sent to both readers.
struct Case {
    kind: Kind,
    name: String,
    version: i16,
    mutation: MutationKind,
    variant: &'static str,
    bytes: Vec<u8>,
}

impl Case {
    /// `Name vN kind/variant: hex`, the hex cut at 400 digits.
    fn label(&self) -> String {
        let mut hex = hex::encode(&self.bytes);
        if hex.len() > 400 {
            hex.truncate(400);
            hex.push_str("...");
        }
        format!(
            "{} v{} {}/{}: {hex}",
            self.name,
            self.version,
            self.mutation.name(),
            self.variant,
        )
    }
}

#[derive(Default, Clone, Copy)]
struct Counts {
    bodies: usize,
    agree: usize,
    java_only: usize,
    ours_only: usize,
}

fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("java-reference");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// Every mutated body, in a stable order (made once per test binary).
fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(make_cases)
}

fn make_cases() -> Vec<Case> {
    let set =
        SchemaSet::load(&[workspace_root().join("messages")]).unwrap_or_else(|e| panic!("{e}"));
    let mut schemas: Vec<_> = set.schemas.iter().collect();
    schemas.sort_by(|a, b| a.name.cmp(&b.name));
    let mut cases = Vec::new();
    for schema in schemas {
        let kind = match schema.kind {
            MessageKind::Request => Kind::Request,
            MessageKind::Response => Kind::Response,
            _ => continue,
        };
        for version in schema.valid_versions.iter() {
            let strategy = object(schema, &schema.fields, version, 0);
            let mut rng = Rng::new(MUTATION_SEED ^ seed_for(&schema.name, version));
            for value in sample(&strategy, seed_for(&schema.name, version), BASES) {
                let body = from_json_by_name(kind, &schema.name, version, &value)
                    .and_then(|m| {
                        m.bytes(version)
                            .map_err(|e| panic!("{} v{version}: {e}", schema.name))
                    })
                    .unwrap_or_else(|e| panic!("{} v{version}: {e:?}", schema.name));
                let found = sites(schema, version, &body).unwrap_or_else(|e| {
                    panic!(
                        "{} v{version}: the schema walk of a valid body: {e}: {}",
                        schema.name,
                        hex::encode(&body)
                    )
                });
                for m in mutations(&body, &found, &mut rng) {
                    cases.push(Case {
                        kind,
                        name: schema.name.clone(),
                        version,
                        mutation: m.kind,
                        variant: m.variant,
                        bytes: m.bytes,
                    });
                }
            }
        }
    }
    cases
}

/// What Kafka's client sees where its response class changes the value it
/// read, so that it is no longer what the bytes say: `JoinGroupResponse`'s
/// constructor turns an empty `protocolName` into null from version 7. The
/// readers agree when ours, changed the same way, writes Kafka's bytes.
fn kafkas_normalization(case: &Case, ours: &dyn Decoded) -> Option<Vec<u8>> {
    if case.name != "JoinGroupResponse" || case.version < 7 {
        return None;
    }
    let mut json = ours.json(case.version);
    if json["protocolName"] != "" {
        return None;
    }
    json["protocolName"] = Value::Null;
    from_json_by_name(case.kind, &case.name, case.version, &json)
        .ok()?
        .bytes(case.version)
        .ok()
}

/// The checks of values that Kafka's request and response classes make
/// after its reader has read the bytes: the class, and the start of the
/// message of the exception it throws.
const CLASS_CHECKS: [(&str, &str); 1] = [
    // DescribeAclsResponse's constructor refuses a resource type, pattern
    // type, operation or permission type that is not one of its enums.
    (
        "DescribeAclsResponse",
        "IllegalArgumentException: Contain UNKNOWN elements",
    ),
];

/// Whether Kafka's refusal `detail` (its error, then a tab and what its
/// generated data class alone writes back, if that class read the body) is
/// one of [`CLASS_CHECKS`] on a body its reader read as ours did.
fn class_check(case: &Case, detail: &str, ours: &dyn Decoded) -> bool {
    let Some((error, hex)) = detail.split_once('\t') else {
        return false;
    };
    let named = CLASS_CHECKS
        .iter()
        .any(|(name, message)| case.name == *name && error.starts_with(message));
    named && hex::decode(hex).ok() == ours.bytes(case.version).ok()
}

#[test]
fn differential_against_kafkas_reader() {
    let Some(jvm) = jvm() else { return };
    let started = Instant::now();
    let cases = cases();
    let api_keys: BTreeMap<String, i16> = SchemaSet::load(&[workspace_root().join("messages")])
        .unwrap_or_else(|e| panic!("{e}"))
        .schemas
        .iter()
        .filter_map(|s| Some((s.name.clone(), s.api_key?)))
        .collect();
    let mut input = String::new();
    for case in cases {
        let direction = if case.kind == Kind::Request {
            "request"
        } else {
            "response"
        };
        let _ = writeln!(
            input,
            "{direction}\t{}\t{}\t{}",
            api_keys[&case.name],
            case.version,
            hex::encode(&case.bytes)
        );
    }
    let dir = scratch();
    let (into, out) = (
        dir.join("differential.tsv"),
        dir.join("differential.answers.tsv"),
    );
    std::fs::write(&into, input).unwrap_or_else(|e| panic!("{}: {e}", into.display()));
    jvm.run(["differential".as_ref(), into.as_os_str(), out.as_os_str()]);
    let answers =
        std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    let answers: Vec<&str> = answers.lines().collect();
    assert_eq!(answers.len(), cases.len(), "one answer per body");

    let mut total = Counts::default();
    let mut per_kind: BTreeMap<MutationKind, Counts> = BTreeMap::new();
    let mut rules: BTreeMap<Rule, usize> = BTreeMap::new();
    let mut unclassified = Vec::new();
    let mut ours_only = Vec::new();
    let mut different = Vec::new();
    let mut normalized = 0;
    let mut class_checked = 0;
    // Every disagreement, one a line, kept beside the exchanged files.
    let mut log = String::new();
    for (case, answer) in cases.iter().zip(answers) {
        let (verdict, detail) = answer.split_once('\t').unwrap_or((answer, ""));
        let java = match verdict {
            "accept" | "accept-sorted" => Some(Some(
                hex::decode(detail).unwrap_or_else(|e| panic!("{e}: {answer}")),
            )),
            "accept-unwritable" => Some(None),
            "refuse" => None,
            _ => panic!("an unknown answer: {answer}"),
        };
        let ours = decode_by_name(case.kind, &case.name, case.version, &case.bytes);
        let counts = per_kind.entry(case.mutation).or_default();
        counts.bodies += 1;
        total.bodies += 1;
        match (java, ours) {
            (None, Err(_)) => {
                counts.agree += 1;
                total.agree += 1;
            }
            (None, Ok(decoded)) if class_check(case, detail, &*decoded) => {
                counts.agree += 1;
                total.agree += 1;
                class_checked += 1;
            }
            (None, Ok(_)) => {
                counts.ours_only += 1;
                total.ours_only += 1;
                ours_only.push(format!("{}: Java: {detail}", case.label()));
                let _ = writeln!(log, "ours-only\t{}\tJava: {detail}", case.label());
            }
            (Some(_), Err(e)) => {
                counts.java_only += 1;
                total.java_only += 1;
                let rule = match &e {
                    LookupError::Decode(d) => Rule::of(case, d),
                    _ => None,
                };
                let _ = writeln!(
                    log,
                    "java-only\t{}\t{}\tours: {e:?}",
                    rule.map_or("unclassified", Rule::name),
                    case.label()
                );
                match rule {
                    Some(rule) => *rules.entry(rule).or_default() += 1,
                    None => unclassified.push(format!("{}: ours: {e:?}", case.label())),
                }
            }
            (Some(java), Ok(decoded)) => {
                let written = decoded.bytes(case.version).unwrap_or_else(|e| {
                    panic!("{}: ours does not write it back: {e}", case.label())
                });
                match java {
                    Some(java) if java == written => {
                        counts.agree += 1;
                        total.agree += 1;
                    }
                    Some(java) if kafkas_normalization(case, &*decoded).as_ref() == Some(&java) => {
                        counts.agree += 1;
                        total.agree += 1;
                        normalized += 1;
                    }
                    Some(java) => different.push(format!(
                        "{}: {}",
                        case.label(),
                        first_byte_difference(&written, &java).unwrap_or_default()
                    )),
                    None => different.push(format!(
                        "{}: Java read it and does not write it back: {detail}",
                        case.label()
                    )),
                }
            }
        }
    }

    let mut report = format!(
        "differential: {} bodies; agree {}; java accepts, ours refuses {}; ours accepts, java refuses {}\n",
        total.bodies, total.agree, total.java_only, total.ours_only
    );
    for kind in MutationKind::ALL {
        let c = per_kind.get(&kind).copied().unwrap_or_default();
        let _ = writeln!(
            report,
            "differential {}: {} bodies; agree {}; java accepts, ours refuses {}; ours accepts, java refuses {}",
            kind.name(),
            c.bodies,
            c.agree,
            c.java_only,
            c.ours_only
        );
    }
    let rule_list: Vec<String> = rules
        .iter()
        .map(|(rule, n)| format!("{} {n}", rule.name()))
        .collect();
    let _ = writeln!(
        report,
        "differential stricter by rule: {}",
        rule_list.join("; ")
    );
    let _ = writeln!(
        report,
        "differential Kafka's classes past its reader: normalized {normalized}; refused on a value check {class_checked}"
    );
    let _ = writeln!(
        report,
        "differential: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // Past the test harness's capture, so that it shows in CI's log.
    let _ = write!(std::io::stderr(), "{report}");
    for line in &different {
        let _ = writeln!(log, "different\t{line}");
    }
    let disagreements = dir.join("differential.disagreements.txt");
    std::fs::write(&disagreements, log)
        .unwrap_or_else(|e| panic!("{}: {e}", disagreements.display()));

    let show = |what: &str, list: &[String]| {
        let mut text = format!("{} bodies {what}:", list.len());
        for line in list.iter().take(40) {
            text.push_str("\n  ");
            text.push_str(line);
        }
        text
    };
    assert!(total.bodies > 10_000, "only {} bodies", total.bodies);
    for kind in MutationKind::ALL {
        assert!(
            per_kind.get(&kind).is_some_and(|c| c.bodies > 100),
            "few bodies of {}",
            kind.name()
        );
    }
    assert!(
        ours_only.is_empty(),
        "{}",
        show("that kafka-wire accepts and Kafka refuses", &ours_only)
    );
    assert!(
        different.is_empty(),
        "{}",
        show("that both accept, with different values", &different)
    );
    assert!(
        unclassified.is_empty(),
        "{}",
        show(
            "that Kafka accepts and kafka-wire refuses on no listed rule",
            &unclassified
        )
    );
    assert_eq!(
        total.agree + total.java_only + total.ours_only,
        total.bodies
    );
}

/// Without Java too: the schema walk reads every base body to its last
/// byte (`make_cases` panics otherwise), and every mutation kind applies
/// more than a hundred times.
#[test]
fn mutations_of_every_request_and_response_version() {
    let cases = cases();
    let mut kinds = BTreeMap::new();
    for case in cases {
        *kinds.entry(case.mutation).or_insert(0usize) += 1;
    }
    for kind in MutationKind::ALL {
        assert!(
            kinds.get(&kind).is_some_and(|n| *n > 100),
            "few bodies of {}: {kinds:?}",
            kind.name()
        );
    }
    assert!(cases.len() > 10_000, "only {} bodies", cases.len());
}
