//! A streams group's topology, as its first member sends it in
//! StreamsGroupHeartbeat: subtopologies with the topics they read (source
//! topics and repartition topics), write (repartition sink topics) and keep
//! state in (changelog topics), and the sets of inputs that must be
//! co-partitioned. The coordinator keeps the first one it is given; a
//! member that joins with another one of the same epoch is refused.

use std::collections::{BTreeMap, BTreeSet};

use kafka_wire::ErrorCode;

use crate::state::topics::check_topic_name;

/// An internal topic the topology needs (a changelog or a repartition
/// topic): its name, its partition count (0: the coordinator decides),
/// its replication factor (0 or -1: the broker's default) and configs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicInfo {
    /// The topic.
    pub name: String,
    /// Its partitions, 0 when the coordinator decides.
    pub partitions: i32,
    /// Its replication factor, 0 or -1 for the broker's default.
    pub replication_factor: i16,
    /// Its configs, as sent.
    pub configs: Vec<(String, String)>,
}

/// Inputs of one subtopology that must have as many partitions as each
/// other: positions in its source topics and its repartition source
/// topics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopartitionGroup {
    /// Positions in the subtopology's source topics.
    pub source_topics: Vec<i16>,
    /// Positions in its source topic patterns.
    pub source_topic_regex: Vec<i16>,
    /// Positions in its repartition source topics.
    pub repartition_source_topics: Vec<i16>,
}

/// One subtopology: a connected part of the topology, one task per input
/// partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subtopology {
    /// Its id.
    pub id: String,
    /// The user topics it reads.
    pub source_topics: Vec<String>,
    /// Patterns of user topics it reads (refused by Kafka 4.4.0).
    pub source_topic_regex: Vec<String>,
    /// Its state stores' changelog topics.
    pub state_changelog_topics: Vec<TopicInfo>,
    /// The repartition topics it writes.
    pub repartition_sink_topics: Vec<String>,
    /// The repartition topics it reads.
    pub repartition_source_topics: Vec<TopicInfo>,
    /// Its co-partitioned inputs.
    pub copartition_groups: Vec<CopartitionGroup>,
}

/// The topology.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// Its epoch.
    pub epoch: i32,
    /// Its subtopologies, by id.
    pub subtopologies: BTreeMap<String, Subtopology>,
}

/// The topics Kafka keeps for itself, which no topology may name
/// (`org.apache.kafka.common.internals.Topic.isInternal`).
const INTERNAL_TOPICS: &[&str] = &[
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
];

impl Subtopology {
    /// Every topic it reads: user topics, then repartition topics.
    pub fn inputs(&self) -> impl Iterator<Item = &str> {
        self.source_topics.iter().map(String::as_str).chain(
            self.repartition_source_topics
                .iter()
                .map(|t| t.name.as_str()),
        )
    }

    /// Whether it keeps state (has a changelog), so that its tasks get
    /// standby replicas.
    pub fn is_stateful(&self) -> bool {
        !self.state_changelog_topics.is_empty()
    }

    /// Its co-partition groups as sets of topic names (positions that
    /// name nothing are left out).
    pub fn copartition_sets(&self) -> Vec<BTreeSet<String>> {
        self.copartition_groups
            .iter()
            .map(|group| {
                let sources = group.source_topics.iter().filter_map(|i| {
                    usize::try_from(*i)
                        .ok()
                        .and_then(|i| self.source_topics.get(i))
                        .cloned()
                });
                let repartitions = group.repartition_source_topics.iter().filter_map(|i| {
                    usize::try_from(*i)
                        .ok()
                        .and_then(|i| self.repartition_source_topics.get(i))
                        .map(|t| t.name.clone())
                });
                sources.chain(repartitions).collect()
            })
            .collect()
    }
}

impl Topology {
    /// Every topic the topology names: what its metadata (and so a
    /// rebalance) depends on.
    pub fn required_topics(&self) -> BTreeSet<&str> {
        let mut topics = BTreeSet::new();
        for subtopology in self.subtopologies.values() {
            topics.extend(subtopology.inputs());
            topics.extend(
                subtopology
                    .state_changelog_topics
                    .iter()
                    .map(|t| t.name.as_str()),
            );
        }
        topics
    }

    /// The subtopology reading `topic`, if any.
    pub fn reader_of(&self, topic: &str) -> Option<&Subtopology> {
        self.subtopologies
            .values()
            .find(|s| s.inputs().any(|input| input == topic))
    }

    /// Kafka's checks of the topic names a topology uses, before the
    /// coordinator sees it: no internal topic, then only legal names
    /// (STREAMS_INVALID_TOPOLOGY, the names joined by commas).
    pub fn check_names(&self) -> Result<(), (i16, String)> {
        let mut names: Vec<&str> = Vec::new();
        for subtopology in self.subtopologies.values() {
            let all = subtopology
                .source_topics
                .iter()
                .map(String::as_str)
                .chain(
                    subtopology
                        .repartition_sink_topics
                        .iter()
                        .map(String::as_str),
                )
                .chain(
                    subtopology
                        .repartition_source_topics
                        .iter()
                        .map(|t| t.name.as_str()),
                )
                .chain(
                    subtopology
                        .state_changelog_topics
                        .iter()
                        .map(|t| t.name.as_str()),
                );
            for name in all {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        let internal: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| INTERNAL_TOPICS.contains(n))
            .collect();
        if !internal.is_empty() {
            return Err((
                ErrorCode::StreamsInvalidTopology.code(),
                format!(
                    "Use of Kafka internal topics {} in a Kafka Streams topology is prohibited.",
                    internal.join(",")
                ),
            ));
        }
        let invalid: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| check_topic_name(n).is_err())
            .collect();
        if !invalid.is_empty() {
            return Err((
                ErrorCode::StreamsInvalidTopology.code(),
                format!(
                    "Topic names {} are not valid topic names.",
                    invalid.join(",")
                ),
            ));
        }
        Ok(())
    }
}
