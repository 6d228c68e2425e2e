//! The topology configured against the cluster's topics, as Kafka's
//! coordinator configures it (`InternalTopicManager`): every source topic
//! must exist; repartition topics take the partition count of what feeds
//! them (a fix point over the subtopologies); co-partitioned inputs must
//! agree; changelog topics take their subtopology's number of tasks; and
//! the internal topics that do not exist yet are the ones the coordinator
//! asks the broker to create. What is wrong is a status of the heartbeat's
//! answer (a missing source topic, a topic of the wrong partition count,
//! missing internal topics); a topology that cannot be configured at all is
//! an error (STREAMS_INVALID_TOPOLOGY).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use kafka_wire::ErrorCode;

use super::topology::{Subtopology, TopicInfo, Topology};

/// Status codes of a StreamsGroupHeartbeat answer
/// (`StreamsGroupHeartbeatResponse.Status`).
pub mod status {
    /// The member's topology epoch is behind the group's.
    pub const STALE_TOPOLOGY: i8 = 0;
    /// A source topic is missing.
    pub const MISSING_SOURCE_TOPICS: i8 = 1;
    /// Topics that must be co-partitioned are not.
    pub const INCORRECTLY_PARTITIONED_TOPICS: i8 = 2;
    /// Internal topics are missing (the broker creates them).
    pub const MISSING_INTERNAL_TOPICS: i8 = 3;
    /// A member asked the whole application to shut down.
    pub const SHUTDOWN_APPLICATION: i8 = 4;
    /// The coordinator delays the assignment.
    pub const ASSIGNMENT_DELAYED: i8 = 5;
}

/// An internal topic as it must exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InternalTopic {
    /// Its partitions.
    pub partitions: i32,
    /// Its replication factor, None for the broker's default.
    pub replication_factor: Option<i16>,
    /// Its configs.
    pub configs: Vec<(String, String)>,
}

/// A subtopology with its partition counts decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredSubtopology {
    /// Its number of tasks: the most partitions of its inputs.
    pub tasks: i32,
    /// Its changelog topics.
    pub changelogs: BTreeMap<String, InternalTopic>,
    /// Its repartition source topics.
    pub repartition_sources: BTreeMap<String, InternalTopic>,
}

/// The outcome of configuring a topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Configured {
    /// The subtopologies, when the partition counts could be decided.
    pub subtopologies: Option<BTreeMap<String, ConfiguredSubtopology>>,
    /// The internal topics that do not exist yet, in the order Kafka
    /// lists them.
    pub to_create: Vec<(String, InternalTopic)>,
    /// What keeps the topology from being ready: a status code and its
    /// detail.
    pub problem: Option<(i8, String)>,
}

impl Configured {
    /// Whether tasks can be assigned: every topic is there, as it must be.
    pub fn is_ready(&self) -> bool {
        self.problem.is_none() && self.subtopologies.is_some()
    }

    fn failed(code: i8, detail: String) -> Configured {
        Configured {
            subtopologies: None,
            to_create: Vec::new(),
            problem: Some((code, detail)),
        }
    }
}

/// A topology that cannot be configured: STREAMS_INVALID_TOPOLOGY and why.
pub type Invalid = (i16, String);

fn invalid(message: impl Into<String>) -> Invalid {
    (ErrorCode::StreamsInvalidTopology.code(), message.into())
}

/// Kafka's summary of a list of topics in a status: the first three, then
/// how many more.
pub fn summarize<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    if names.is_empty() {
        return "<none>".into();
    }
    let shown = names[..names.len().min(3)].join(", ");
    if names.len() > 3 {
        format!("{shown} and {} additional topics", names.len() - 3)
    } else {
        shown
    }
}

/// Java's `String.hashCode` of an ASCII name, spread as `HashMap` spreads
/// it.
fn java_hash(name: &str) -> u32 {
    let h = name
        .encode_utf16()
        .fold(0u32, |h, c| h.wrapping_mul(31).wrapping_add(u32::from(c)));
    h ^ (h >> 16)
}

/// The order in which a Java `HashMap` of these keys, put in this order,
/// iterates them: by bucket of the final table, then by insertion.
fn java_hash_map_order(keys: Vec<String>) -> Vec<String> {
    let mut capacity = 16usize;
    while keys.len() * 4 > capacity * 3 {
        capacity *= 2;
    }
    let mask = u32::try_from(capacity - 1).unwrap_or(u32::MAX);
    let mut indexed: Vec<(u32, usize, String)> = keys
        .into_iter()
        .enumerate()
        .map(|(i, k)| (java_hash(&k) & mask, i, k))
        .collect();
    indexed.sort();
    indexed.into_iter().map(|(_, _, k)| k).collect()
}

/// Configures `topology` against the cluster's topics (`partitions` gives
/// an existing topic's partition count).
pub fn configure(
    topology: &Topology,
    partitions: impl Fn(&str) -> Option<i32>,
) -> Result<Configured, Invalid> {
    let missing: BTreeSet<&str> = topology
        .subtopologies
        .values()
        .flat_map(|s| s.source_topics.iter())
        .map(String::as_str)
        .filter(|t| partitions(t).is_none())
        .collect();
    if !missing.is_empty() {
        return Ok(Configured::failed(
            status::MISSING_SOURCE_TOPICS,
            format!("Source topics {} are missing.", summarize(missing)),
        ));
    }
    let decided = match decide_partition_counts(topology, &partitions)? {
        Ok(decided) => decided,
        Err(detail) => {
            return Ok(Configured::failed(
                status::INCORRECTLY_PARTITIONED_TOPICS,
                detail,
            ))
        }
    };
    let count = |topic: &str| partitions(topic).or_else(|| decided.get(topic).copied());
    let internal = |info: &TopicInfo| InternalTopic {
        partitions: if info.partitions == 0 {
            decided.get(&info.name).copied().unwrap_or(0)
        } else {
            info.partitions
        },
        replication_factor: (info.replication_factor != 0).then_some(info.replication_factor),
        configs: info.configs.clone(),
    };
    let subtopologies: BTreeMap<String, ConfiguredSubtopology> = topology
        .subtopologies
        .iter()
        .map(|(id, s)| {
            let configured = ConfiguredSubtopology {
                tasks: s.inputs().filter_map(count).max().unwrap_or(0),
                changelogs: s
                    .state_changelog_topics
                    .iter()
                    .map(|t| (t.name.clone(), internal(t)))
                    .collect(),
                repartition_sources: s
                    .repartition_source_topics
                    .iter()
                    .map(|t| (t.name.clone(), internal(t)))
                    .collect(),
            };
            (id.clone(), configured)
        })
        .collect();
    // The internal topics, in the order Kafka's map of them iterates.
    let mut wanted: HashMap<String, InternalTopic> = HashMap::new();
    let mut order = Vec::new();
    for s in subtopologies.values() {
        for (name, topic) in s.repartition_sources.iter().chain(&s.changelogs) {
            if wanted.insert(name.clone(), topic.clone()).is_none() {
                order.push(name.clone());
            }
        }
    }
    for name in &order {
        if let (Some(found), Some(topic)) = (partitions(name), wanted.get(name)) {
            if found != topic.partitions {
                return Ok(Configured::failed(
                    status::INCORRECTLY_PARTITIONED_TOPICS,
                    format!(
                        "Existing topic {name} has different number of partitions: expected {}, found {found}",
                        topic.partitions
                    ),
                ));
            }
        }
    }
    let to_create: Vec<(String, InternalTopic)> = java_hash_map_order(order)
        .into_iter()
        .filter(|name| partitions(name).is_none())
        .filter_map(|name| wanted.remove(&name).map(|t| (name, t)))
        .collect();
    let problem = (!to_create.is_empty()).then(|| {
        (
            status::MISSING_INTERNAL_TOPICS,
            format!(
                "Internal topics are missing: {}",
                summarize(to_create.iter().map(|(n, _)| n.as_str()))
            ),
        )
    });
    Ok(Configured {
        subtopologies: Some(subtopologies),
        to_create,
        problem,
    })
}

/// The partition counts of every internal topic: repartition topics, made
/// to agree within co-partition groups, then changelog topics. The outer
/// error is a topology that cannot be configured; the inner one the detail
/// of topics that are partitioned wrongly.
fn decide_partition_counts(
    topology: &Topology,
    partitions: &impl Fn(&str) -> Option<i32>,
) -> Result<Result<HashMap<String, i32>, String>, Invalid> {
    let mut decided = repartition_counts(topology, partitions)?;
    let fixed: BTreeSet<&str> = topology
        .subtopologies
        .values()
        .flat_map(|s| s.repartition_source_topics.iter())
        .filter(|t| t.partitions != 0)
        .map(|t| t.name.as_str())
        .collect();
    let flexible: BTreeSet<&str> = topology
        .subtopologies
        .values()
        .flat_map(|s| s.repartition_source_topics.iter())
        .filter(|t| t.partitions == 0)
        .map(|t| t.name.as_str())
        .collect();
    for subtopology in topology.subtopologies.values() {
        for group in subtopology.copartition_sets() {
            let count = |t: &str| partitions(t).or_else(|| decided.get(t).copied());
            match enforce_copartitioning(&group, &fixed, &flexible, count)? {
                Ok(counts) => decided.extend(counts),
                Err(detail) => return Ok(Err(detail)),
            }
        }
    }
    for subtopology in topology.subtopologies.values() {
        let count = |t: &str| partitions(t).or_else(|| decided.get(t).copied());
        let Some(tasks) = subtopology.inputs().filter_map(count).max() else {
            return Err(invalid(format!(
                "No source topics found for subtopology {}",
                subtopology.id
            )));
        };
        let sources: BTreeSet<&str> = subtopology
            .source_topics
            .iter()
            .map(String::as_str)
            .collect();
        for changelog in &subtopology.state_changelog_topics {
            if !sources.contains(changelog.name.as_str()) {
                decided.insert(changelog.name.clone(), tasks);
            }
        }
    }
    Ok(Ok(decided))
}

/// Repartition topics' partition counts: the count the topology fixes,
/// else the most partitions among the inputs of the subtopology that
/// writes them, to a fix point (`RepartitionTopics`).
fn repartition_counts(
    topology: &Topology,
    partitions: &impl Fn(&str) -> Option<i32>,
) -> Result<HashMap<String, i32>, Invalid> {
    let subtopologies: Vec<&Subtopology> = topology.subtopologies.values().collect();
    let mut counts: HashMap<String, i32> = HashMap::new();
    for s in &subtopologies {
        for t in &s.repartition_source_topics {
            if t.partitions != 0 {
                counts.insert(t.name.clone(), t.partitions);
            }
        }
    }
    loop {
        let mut needed = false;
        let mut progress = false;
        for s in &subtopologies {
            for sink in &s.repartition_sink_topics {
                if counts.contains_key(sink) {
                    continue;
                }
                let from_repartition = s
                    .repartition_source_topics
                    .iter()
                    .filter_map(|t| counts.get(&t.name).copied());
                let from_sources = s.source_topics.iter().filter_map(|t| partitions(t));
                match from_repartition.chain(from_sources).max() {
                    Some(count) => {
                        counts.insert(sink.clone(), count);
                        progress = true;
                    }
                    None => needed = true,
                }
            }
        }
        if !needed {
            break;
        }
        if !progress {
            return Err(invalid(
                "Failed to compute number of partitions for all repartition topics. There may be loops in the topology that cannot be resolved.",
            ));
        }
    }
    let unfed = subtopologies
        .iter()
        .flat_map(|s| s.repartition_source_topics.iter())
        .any(|t| !counts.contains_key(&t.name));
    if unfed {
        return Err(invalid(
            "Failed to compute number of partitions for all repartition topics, because a repartition source topic is never used as a sink topic.",
        ));
    }
    Ok(counts)
}

/// Java's `TreeMap<String, Integer>.toString()`.
fn tree_map_text(counts: &BTreeMap<&str, i32>) -> String {
    let entries: Vec<String> = counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{{{}}}", entries.join(", "))
}

/// Makes one co-partition group agree (`CopartitionedTopicsEnforcer`):
/// the repartition topics among it take the user topics' count (which
/// must all be the same), or, when it holds repartition topics only, the
/// fixed count they share or else the most of theirs.
fn enforce_copartitioning(
    group: &BTreeSet<String>,
    fixed: &BTreeSet<&str>,
    flexible: &BTreeSet<&str>,
    count: impl Fn(&str) -> Option<i32>,
) -> Result<Result<Vec<(String, i32)>, String>, Invalid> {
    if group.is_empty() {
        return Ok(Ok(Vec::new()));
    }
    let known = |t: &str| {
        count(t).ok_or_else(|| invalid(format!("Number of partitions is not set for topic: {t}")))
    };
    let mut repartition: BTreeMap<&str, i32> = BTreeMap::new();
    let mut others: BTreeMap<&str, i32> = BTreeMap::new();
    for topic in group {
        let topic = topic.as_str();
        if fixed.contains(topic) || flexible.contains(topic) {
            repartition.insert(topic, known(topic)?);
        } else {
            others.insert(topic, known(topic)?);
        }
    }
    let target = if others.is_empty() {
        if let Some(first) = fixed.iter().next() {
            let first_count = known(first)?;
            for topic in fixed {
                if known(topic)? != first_count {
                    return Ok(Err(format!(
                        "Following topics do not have the same number of partitions: [{}]",
                        tree_map_text(&repartition)
                    )));
                }
            }
            first_count
        } else {
            let most = repartition.values().copied().max().unwrap_or(0);
            if most == 0 {
                let names: Vec<&str> = repartition.keys().copied().collect();
                return Err(invalid(format!(
                    "All topics in the copartition group had undefined partition number: [{}]",
                    names.join(", ")
                )));
            }
            most
        }
    } else {
        let mut counts = others.values();
        let first = counts.next().copied().unwrap_or(0);
        if counts.any(|c| *c != first) {
            return Ok(Err(format!(
                "Following topics do not have the same number of partitions: [{}]",
                tree_map_text(&others)
            )));
        }
        first
    };
    let mut out = Vec::new();
    for (topic, current) in &repartition {
        if fixed.contains(topic) && *current != target {
            return Ok(Err(format!(
                "Number of partitions [{current}] of repartition topic [{topic}] doesn't match number of partitions [{target}] of the source topic."
            )));
        }
        out.push(((*topic).to_owned(), target));
    }
    Ok(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::streams_groups::topology::CopartitionGroup;

    fn info(name: &str, partitions: i32) -> TopicInfo {
        TopicInfo {
            name: name.into(),
            partitions,
            replication_factor: -1,
            configs: vec![("cleanup.policy".into(), "compact".into())],
        }
    }

    fn sub(id: &str, sources: &[&str]) -> Subtopology {
        Subtopology {
            id: id.into(),
            source_topics: sources.iter().map(|s| (*s).to_owned()).collect(),
            source_topic_regex: Vec::new(),
            state_changelog_topics: Vec::new(),
            repartition_sink_topics: Vec::new(),
            repartition_source_topics: Vec::new(),
            copartition_groups: Vec::new(),
        }
    }

    /// The word count and the join of the Streams application of the
    /// tests, as Kafka Streams 4.4.0 describes them.
    fn application() -> Topology {
        let mut s0 = sub("0", &["sentences"]);
        s0.repartition_sink_topics = vec!["counts-repartition".into()];
        let mut s1 = sub("1", &[]);
        s1.repartition_source_topics = vec![info("counts-repartition", 0)];
        s1.state_changelog_topics = vec![info("counts-changelog", 0)];
        let mut s2 = sub("2", &["left"]);
        s2.repartition_sink_topics = vec!["left-repartition".into()];
        let mut s3 = sub("3", &["right"]);
        s3.repartition_sink_topics = vec!["right-repartition".into()];
        let mut s4 = sub("4", &[]);
        s4.repartition_source_topics =
            vec![info("left-repartition", 0), info("right-repartition", 0)];
        s4.state_changelog_topics = vec![info("this-changelog", 0), info("other-changelog", 0)];
        s4.copartition_groups = vec![CopartitionGroup {
            source_topics: vec![],
            source_topic_regex: vec![],
            repartition_source_topics: vec![0, 1],
        }];
        Topology {
            epoch: 0,
            subtopologies: [s0, s1, s2, s3, s4]
                .into_iter()
                .map(|s| (s.id.clone(), s))
                .collect(),
        }
    }

    #[test]
    fn internal_topics_take_the_partitions_of_what_feeds_them() {
        let topics: HashMap<&str, i32> = [("sentences", 3), ("left", 3), ("right", 2)].into();
        let configured = configure(&application(), |t| topics.get(t).copied())
            .unwrap_or_else(|e| panic!("{e:?}"));
        let subtopologies = configured.subtopologies.clone().unwrap_or_default();
        assert_eq!(subtopologies["1"].tasks, 3);
        assert_eq!(
            subtopologies["1"].changelogs["counts-changelog"].partitions,
            3
        );
        // Left has 3 partitions and right 2: both repartition topics are
        // co-partitioned, so both take the larger count.
        assert_eq!(
            subtopologies["4"].repartition_sources["right-repartition"].partitions,
            3
        );
        assert_eq!(subtopologies["4"].tasks, 3);
        assert_eq!(subtopologies["3"].tasks, 2);
        assert_eq!(configured.to_create.len(), 6);
        let (code, detail) = configured.problem.clone().unwrap_or_default();
        assert_eq!(code, status::MISSING_INTERNAL_TOPICS);
        assert!(
            detail.starts_with("Internal topics are missing: ")
                && detail.ends_with(" and 3 additional topics"),
            "{detail}"
        );
        assert!(!configured.is_ready());
    }

    #[test]
    fn statuses_and_errors_as_kafka_words_them() {
        let none = |_: &str| None;
        let missing = configure(&application(), none).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            missing.problem,
            Some((
                status::MISSING_SOURCE_TOPICS,
                "Source topics left, right, sentences are missing.".into()
            ))
        );
        // An existing internal topic of another partition count.
        let topics: HashMap<&str, i32> = [
            ("sentences", 3),
            ("left", 3),
            ("right", 2),
            ("counts-changelog", 5),
        ]
        .into();
        let wrong = configure(&application(), |t| topics.get(t).copied())
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(
            wrong.problem,
            Some((
                status::INCORRECTLY_PARTITIONED_TOPICS,
                "Existing topic counts-changelog has different number of partitions: expected 3, found 5".into()
            ))
        );
        // A repartition topic nothing writes.
        let mut unfed = application();
        if let Some(s) = unfed.subtopologies.get_mut("0") {
            s.repartition_sink_topics.clear();
        }
        let all = |_: &str| Some(1);
        let error = configure(&unfed, all).err().map(|(code, _)| code);
        assert_eq!(error, Some(ErrorCode::StreamsInvalidTopology.code()));
    }

    #[test]
    fn summaries_and_java_map_order() {
        assert_eq!(summarize(["a", "b"]), "a, b");
        assert_eq!(
            summarize(["a", "b", "c", "d", "e"]),
            "a, b, c and 2 additional topics"
        );
        // "a".hashCode() is 97 and "q" 113, both bucket 1 of 16, kept in
        // insertion order; "b" is 98, bucket 2.
        assert_eq!(
            java_hash_map_order(vec!["b".into(), "a".into(), "q".into()]),
            ["a", "q", "b"]
        );
        // The internal topics of the tests' application, as Kafka 4.4.0
        // listed them in its status: "t1-streams-KSTREAM-KEY-SELECT-
        // 0000000013-repartition, t1-streams-join-this-join-store-changelog,
        // t1-streams-word-counts-repartition and 3 additional topics".
        let put = [
            "t1-streams-word-counts-repartition",
            "t1-streams-word-counts-changelog",
            "t1-streams-KSTREAM-KEY-SELECT-0000000013-repartition",
            "t1-streams-KSTREAM-KEY-SELECT-0000000016-repartition",
            "t1-streams-join-other-join-store-changelog",
            "t1-streams-join-this-join-store-changelog",
        ];
        let order = java_hash_map_order(put.iter().map(|s| (*s).to_owned()).collect());
        assert_eq!(
            summarize(order.iter().map(String::as_str)),
            "t1-streams-KSTREAM-KEY-SELECT-0000000013-repartition, t1-streams-join-this-join-store-changelog, t1-streams-word-counts-repartition and 3 additional topics"
        );
    }
}
