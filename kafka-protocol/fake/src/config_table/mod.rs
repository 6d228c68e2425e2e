//! Kafka 4.4.0's configs, as its DescribeConfigs v4 describes them: every
//! topic, broker and group config with its default, type, read-only flag,
//! sensitivity and synonyms, in Kafka's own order (not its documentation of
//! each, which is Kafka's prose: [`Entry::documentation`] describes a config
//! in the fake's own words, from these facts). The facts
//! live in `kafka.json` beside this file, recorded from a real 4.4.0 broker
//! by `tests/kafka/record-configs.sh`; this module reads them once and
//! checks a value the way Kafka's `ConfigDef` does.

use std::collections::HashMap;
use std::sync::OnceLock;

use kafka_wire::ErrorCode;
use serde_json::Value;

/// The recorded table.
const RECORDED: &str = include_str!("kafka.json");

/// Config sources (DescribeConfigs' `config_source`).
pub mod source {
    /// A topic's own config.
    pub const DYNAMIC_TOPIC_CONFIG: i8 = 1;
    /// One broker's dynamic config.
    pub const DYNAMIC_BROKER_CONFIG: i8 = 2;
    /// The cluster-wide dynamic broker default.
    pub const DYNAMIC_DEFAULT_BROKER_CONFIG: i8 = 3;
    /// A broker's start-up setting (its properties file).
    pub const STATIC_BROKER_CONFIG: i8 = 4;
    /// Kafka's built-in default.
    pub const DEFAULT_CONFIG: i8 = 5;
    /// A group's own config.
    pub const DYNAMIC_GROUP_CONFIG: i8 = 8;
}

/// Config types (DescribeConfigs' `config_type`, v3+) whose values the
/// fake checks.
pub mod kind {
    /// `true` or `false`.
    pub const BOOLEAN: i8 = 1;
    /// A 32-bit integer.
    pub const INT: i8 = 3;
    /// A 16-bit integer.
    pub const SHORT: i8 = 4;
    /// A 64-bit integer.
    pub const LONG: i8 = 5;
    /// A double.
    pub const DOUBLE: i8 = 6;
    /// A comma-separated list.
    pub const LIST: i8 = 7;
}

/// One config as Kafka describes it.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// Topic and group configs: the value Kafka described. Broker configs:
    /// Kafka's built-in default (`None`: it has none).
    pub value: Option<String>,
    /// Topic and group configs: the source Kafka described.
    pub source: i8,
    /// Broker configs: the cluster-wide dynamic default a fresh Kafka 4.4.0
    /// cluster holds (`min.insync.replicas`), if any.
    pub cluster_default: Option<String>,
    /// Whether it cannot be changed while running.
    pub read_only: bool,
    /// Its type (`config_type`).
    pub config_type: i8,
    /// Whether its value is secret (described as null).
    pub sensitive: bool,
    /// Topic and group configs: the synonyms Kafka described (name, value,
    /// source), the broker configs a topic or group falls back to.
    pub synonyms: Vec<(String, Option<String>, i8)>,
}

impl Entry {
    /// A description of this config in the fake's own words, made of its
    /// facts alone (what it belongs to, its type, its default, whether it
    /// can change while running): what DescribeConfigs answers as its
    /// documentation. Kafka's own descriptions are its prose, which the
    /// fake does not carry. `of` names the resource: `topic`, `broker` or
    /// `group`.
    pub fn documentation(&self, of: &str) -> String {
        let kind = match self.config_type {
            kind::BOOLEAN => "boolean",
            2 => "string",
            kind::INT => "32-bit integer",
            kind::SHORT => "16-bit integer",
            kind::LONG => "64-bit integer",
            kind::DOUBLE => "double",
            kind::LIST => "list",
            8 => "class name",
            9 => "password",
            _ => "value",
        };
        let mut text = format!("A {of} config: a {kind}");
        match (&self.value, self.sensitive) {
            (_, true) => text.push_str(", kept secret"),
            (Some(value), false) if value.is_empty() => text.push_str(", empty by default"),
            (Some(value), false) => text.push_str(&format!(", {value} by default")),
            (None, false) => text.push_str(", with no default"),
        }
        if self.read_only {
            text.push_str("; read-only while the broker runs");
        }
        text.push_str(". (Described by the fake cluster from the config's facts.)");
        text
    }
}

/// The configs of one resource type, in Kafka's order, with an index.
#[derive(Debug, Default)]
pub struct Configs {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
}

impl Configs {
    /// Every config, in Kafka's order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The config called `name`.
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.by_name.get(name).map(|&at| &self.entries[at])
    }
}

/// The whole table.
#[derive(Debug, Default)]
pub struct Table {
    /// Topic configs.
    pub topic: Configs,
    /// Broker configs.
    pub broker: Configs,
    /// Group configs.
    pub group: Configs,
}

/// The table, read on first use.
pub fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| parse(RECORDED).unwrap_or_else(|e| panic!("config_table/kafka.json: {e}")))
}

fn text(value: &Value) -> Option<String> {
    value.as_str().map(str::to_owned)
}

fn small(value: &Value) -> i8 {
    value
        .as_i64()
        .and_then(|n| i8::try_from(n).ok())
        .unwrap_or_default()
}

/// Reads a recorded table.
fn parse(recorded: &str) -> Result<Table, String> {
    let json: Value = serde_json::from_str(recorded).map_err(|e| e.to_string())?;
    let configs = |kind: &str| -> Result<Configs, String> {
        let list = json[kind]
            .as_array()
            .ok_or_else(|| format!("no {kind} list"))?;
        let mut configs = Configs::default();
        for item in list {
            let name =
                text(&item["name"]).ok_or_else(|| format!("a {kind} config without name"))?;
            let synonyms = item["synonyms"]
                .as_array()
                .map(|list| {
                    list.iter()
                        .map(|s| (text(&s[0]).unwrap_or_default(), text(&s[1]), small(&s[2])))
                        .collect()
                })
                .unwrap_or_default();
            let value = if kind == "broker" {
                &item["default"]
            } else {
                &item["value"]
            };
            configs.by_name.insert(name.clone(), configs.entries.len());
            configs.entries.push(Entry {
                name,
                value: text(value),
                source: if kind == "broker" {
                    source::DEFAULT_CONFIG
                } else {
                    small(&item["source"])
                },
                cluster_default: text(&item["clusterDefault"]),
                read_only: item["readOnly"].as_bool().unwrap_or_default(),
                config_type: small(&item["type"]),
                sensitive: item["sensitive"].as_bool().unwrap_or_default(),
                synonyms,
            });
        }
        Ok(configs)
    };
    Ok(Table {
        topic: configs("topic")?,
        broker: configs("broker")?,
        group: configs("group")?,
    })
}

/// A refused config: the error code and Kafka's message.
pub type Refusal = (i16, String);

/// What Kafka's `ConfigDef` validators check beyond the type, for the
/// topic and group configs whose values the fake is asked to check.
#[derive(Debug, Clone, Copy)]
enum Rule {
    AtLeast(i64),
    Between(f64, f64),
    OneOf(&'static [&'static str]),
    AllOf(&'static [&'static str]),
    GzipLevel,
}

/// The validators of Kafka 4.4.0's topic configs (LogConfig).
const TOPIC_RULES: &[(&str, Rule)] = &[
    ("cleanup.policy", Rule::AllOf(&["compact", "delete"])),
    (
        "compression.type",
        Rule::OneOf(&["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]),
    ),
    ("compression.gzip.level", Rule::GzipLevel),
    ("compression.lz4.level", Rule::Between(1.0, 17.0)),
    ("compression.zstd.level", Rule::Between(-131_072.0, 22.0)),
    ("delete.retention.ms", Rule::AtLeast(0)),
    ("file.delete.delay.ms", Rule::AtLeast(0)),
    ("flush.messages", Rule::AtLeast(1)),
    ("flush.ms", Rule::AtLeast(0)),
    ("index.interval.bytes", Rule::AtLeast(0)),
    ("local.retention.bytes", Rule::AtLeast(-2)),
    ("local.retention.ms", Rule::AtLeast(-2)),
    ("max.compaction.lag.ms", Rule::AtLeast(1)),
    ("max.message.bytes", Rule::AtLeast(0)),
    ("message.timestamp.after.max.ms", Rule::AtLeast(0)),
    ("message.timestamp.before.max.ms", Rule::AtLeast(0)),
    (
        "message.timestamp.type",
        Rule::OneOf(&["CreateTime", "LogAppendTime"]),
    ),
    ("min.cleanable.dirty.ratio", Rule::Between(0.0, 1.0)),
    ("min.compaction.lag.ms", Rule::AtLeast(0)),
    ("min.insync.replicas", Rule::AtLeast(1)),
    ("retention.ms", Rule::AtLeast(-1)),
    ("segment.bytes", Rule::AtLeast(1_048_576)),
    ("segment.index.bytes", Rule::AtLeast(4)),
    ("segment.jitter.ms", Rule::AtLeast(0)),
    ("segment.ms", Rule::AtLeast(1)),
];

/// The validators of Kafka 4.4.0's group configs (GroupConfig) that the
/// fake's groups read.
const GROUP_RULES: &[(&str, Rule)] = &[
    (
        "share.isolation.level",
        Rule::OneOf(&["read_committed", "read_uncommitted"]),
    ),
    ("share.record.lock.duration.ms", Rule::AtLeast(1000)),
    ("share.delivery.count.limit", Rule::AtLeast(2)),
];

/// Parses `value` as a config of `entry`'s type and applies `rule`, as
/// Kafka's `ConfigDef` does; the error is Kafka's message, less the
/// "Invalid value ... for configuration ...: " prefix.
fn check_value(entry: &Entry, value: &str, rule: Option<Rule>) -> Result<(), String> {
    let trimmed = value.trim();
    let number = |kind: &str| format!("Not a number of type {kind}");
    let integer = match entry.config_type {
        kind::BOOLEAN => {
            if !(trimmed.eq_ignore_ascii_case("true") || trimmed.eq_ignore_ascii_case("false")) {
                return Err("Expected value to be either true or false".into());
            }
            None
        }
        kind::INT => Some(
            trimmed
                .parse::<i32>()
                .map(i64::from)
                .map_err(|_| number("INT"))?,
        ),
        kind::SHORT => Some(
            trimmed
                .parse::<i16>()
                .map(i64::from)
                .map_err(|_| number("SHORT"))?,
        ),
        kind::LONG => Some(trimmed.parse::<i64>().map_err(|_| number("LONG"))?),
        kind::DOUBLE => {
            let double = trimmed.parse::<f64>().map_err(|_| number("DOUBLE"))?;
            if let Some(Rule::Between(low, high)) = rule {
                // Kafka names the parsed value, as Java prints a double.
                let shown = java_double(double);
                if double < low {
                    return Err(format!(
                        "Invalid value {shown} for configuration {}: Value must be no less than {low}",
                        entry.name
                    ));
                }
                if double > high {
                    return Err(format!(
                        "Invalid value {shown} for configuration {}: Value must be no more than {high}",
                        entry.name
                    ));
                }
            }
            None
        }
        _ => None,
    };
    match (rule, integer) {
        (Some(Rule::AtLeast(least)), Some(n)) if n < least => {
            Err(format!("Value must be at least {least}"))
        }
        (Some(Rule::Between(low, high)), Some(n)) if (n as f64) < low || (n as f64) > high => {
            Err(format!(
                "Value must be no {} than {}",
                if (n as f64) < low { "less" } else { "more" },
                if (n as f64) < low { low } else { high }
            ))
        }
        (Some(Rule::GzipLevel), Some(n)) if n != -1 && !(1..=9).contains(&n) => Err(format!(
            "{n} is not a valid level for gzip, valid levels are -1 (the default) and values from 1 to 9"
        )),
        (Some(Rule::OneOf(allowed)), _) if !allowed.contains(&trimmed) => {
            Err(format!("String must be one of: {}", allowed.join(", ")))
        }
        (Some(Rule::AllOf(allowed)), _) if entry.config_type == kind::LIST => {
            let items = trimmed
                .split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty());
            for item in items {
                if !allowed.contains(&item) {
                    return Err(format!(
                        "Invalid value {item} for configuration {}: String must be one of: {}",
                        entry.name,
                        allowed.join(", ")
                    ));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A double as Java's `Double.toString` prints the usual ones: `2.0`,
/// `0.25`, `-1.5`.
fn java_double(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e7 {
        format!("{value:.1}")
    } else {
        value.to_string()
    }
}

/// Kafka's message for a value its validator refused.
fn invalid_value(name: &str, value: &str, why: &str) -> String {
    if why.starts_with("Invalid value ") {
        why.to_owned()
    } else {
        format!("Invalid value {value} for configuration {name}: {why}")
    }
}

fn rule(rules: &[(&str, Rule)], name: &str) -> Option<Rule> {
    rules.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}

/// Checks a topic config being set (`Some`) or reset (`None`), as Kafka's
/// CreateTopics and config APIs check it: INVALID_CONFIG for a name Kafka
/// does not know or a value its validator refuses.
pub fn check_topic(name: &str, value: Option<&str>) -> Result<(), Refusal> {
    let invalid = ErrorCode::InvalidConfig.code();
    let entry = table()
        .topic
        .get(name)
        .ok_or_else(|| (invalid, format!("Unknown topic config name: {name}")))?;
    match value {
        Some(value) => check_value(entry, value, rule(TOPIC_RULES, name))
            .map_err(|why| (invalid, invalid_value(name, value, &why))),
        None => Ok(()),
    }
}

/// Checks a group config being set or reset: INVALID_CONFIG for a name
/// Kafka does not know or a value it refuses.
pub fn check_group(name: &str, value: Option<&str>) -> Result<(), Refusal> {
    let invalid = ErrorCode::InvalidConfig.code();
    let entry = table()
        .group
        .get(name)
        .ok_or_else(|| (invalid, format!("Unknown group config name: {name}")))?;
    if name == "share.auto.offset.reset" {
        if let Some(value) = value {
            let valid = matches!(value, "earliest" | "latest") || value.starts_with("by_duration:");
            if !valid {
                return Err((
                    invalid,
                    invalid_value(
                        name,
                        value,
                        "String must be one of (case insensitive): EARLIEST, LATEST, BY_DURATION",
                    ),
                ));
            }
        }
        return Ok(());
    }
    let Some(value) = value else { return Ok(()) };
    check_value(entry, value, rule(GROUP_RULES, name))
        .map_err(|why| (invalid, invalid_value(name, value, &why)))?;
    let range = GROUP_RANGES.iter().find(|(n, _, _)| *n == name);
    match (range, value.trim().parse::<i64>()) {
        (Some((_, min, max)), Ok(n)) if !(*min..=*max).contains(&n) => Err((
            invalid,
            format!("{name} must be in the range {min} to {max} inclusive."),
        )),
        _ => Ok(()),
    }
}

/// The group configs a group coordinator bounds by its own settings (their
/// minimum and maximum), as Kafka 4.4.0's defaults set them.
const GROUP_RANGES: &[(&str, i64, i64)] = &[
    ("consumer.session.timeout.ms", 45_000, 60_000),
    ("consumer.heartbeat.interval.ms", 5_000, 15_000),
    ("share.session.timeout.ms", 45_000, 60_000),
    ("share.heartbeat.interval.ms", 5_000, 15_000),
    ("streams.session.timeout.ms", 45_000, 60_000),
    ("streams.heartbeat.interval.ms", 5_000, 15_000),
];

/// Checks changes to one broker's (or the cluster-wide) dynamic configs:
/// INVALID_REQUEST naming every read-only config among them, or for a value
/// of the wrong type. Kafka takes a name it does not know, and so does the
/// fake (it is stored and never described).
pub fn check_broker<'a>(
    changes: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
) -> Result<(), Refusal> {
    let invalid = ErrorCode::InvalidRequest.code();
    let mut read_only = Vec::new();
    for (name, value) in changes {
        let Some(entry) = table().broker.get(name) else {
            continue;
        };
        if entry.read_only {
            read_only.push(name);
            continue;
        }
        if let Some(value) = value {
            check_value(entry, value, None)
                .map_err(|why| (invalid, invalid_value(name, value, &why)))?;
        }
    }
    if read_only.is_empty() {
        Ok(())
    } else {
        Err((
            invalid,
            format!(
                "Cannot update these configs dynamically: [{}]",
                read_only.join(", ")
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recorded table reads, holds Kafka 4.4.0's 37 topic configs and
    /// its broker and group configs, and every synonym a topic names is a
    /// broker config of the table (or the config's own name).
    #[test]
    fn the_recorded_table_reads() {
        let table = table();
        assert!(RECORDED.starts_with("{\"kafka\": \"4.4.0\""));
        assert_eq!(table.topic.entries().len(), 37);
        assert!(table.broker.entries().len() > 300);
        assert!(!table.group.entries().is_empty());
        for entry in table.topic.entries() {
            for (name, _, _) in &entry.synonyms {
                assert!(table.broker.get(name).is_some(), "{}: {name}", entry.name);
            }
        }
        let flush = table.broker.get("log.flush.interval.messages");
        assert_eq!(
            flush.and_then(|e| e.value.as_deref()),
            Some("9223372036854775807")
        );
        assert_eq!(flush.map(|e| e.read_only), Some(false));
    }

    #[test]
    fn values_are_checked_as_kafka_checks_them() {
        let refused = |name: &str, value: &str| check_topic(name, Some(value)).err();
        assert_eq!(refused("retention.ms", "86400000"), None);
        assert_eq!(refused("cleanup.policy", "compact, delete"), None);
        assert_eq!(
            refused("max.message.bytes", "abc")
                .map(|(_, m)| m)
                .as_deref(),
            Some("Invalid value abc for configuration max.message.bytes: Not a number of type INT")
        );
        assert_eq!(
            refused("segment.bytes", "10").map(|(_, m)| m).as_deref(),
            Some(
                "Invalid value 10 for configuration segment.bytes: Value must be at least 1048576"
            )
        );
        assert_eq!(
            refused("unclean.leader.election.enable", "yes").map(|(c, _)| c),
            Some(ErrorCode::InvalidConfig.code())
        );
        assert_eq!(
            check_topic("nope", Some("1"))
                .err()
                .map(|(_, m)| m)
                .as_deref(),
            Some("Unknown topic config name: nope")
        );
        assert_eq!(
            check_broker([("node.id", Some("5"))]).err(),
            Some((
                ErrorCode::InvalidRequest.code(),
                "Cannot update these configs dynamically: [node.id]".into()
            ))
        );
        assert!(check_broker([("log.flush.interval.messages", Some("1234"))]).is_ok());
        assert!(check_broker([("unknown.thing", Some("1"))]).is_ok());
    }
}
