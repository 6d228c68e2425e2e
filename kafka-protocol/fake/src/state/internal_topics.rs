//! Kafka's internal topics: `__consumer_offsets`, `__transaction_state`
//! and `__share_group_state`. Kafka creates each the first time its
//! coordinator is looked for (or a Metadata request allowed to create
//! topics names it), with the partitions and configs of its broker
//! settings; Metadata then lists it with `isInternal`, and a client's
//! Produce to it is refused. Their logs stay empty here: the fake keeps
//! groups, transactions and share partitions in its own state.

use std::collections::BTreeMap;

use super::topics::{Placement, Topics};

/// The committed offsets' topic (`offsets.topic.num.partitions`: 50).
pub const CONSUMER_OFFSETS: &str = "__consumer_offsets";
/// The transaction log (`transaction.state.log.num.partitions`: 50).
pub const TRANSACTION_STATE: &str = "__transaction_state";
/// The share groups' state (`share.coordinator.state.topic.num.partitions`: 50).
pub const SHARE_GROUP_STATE: &str = "__share_group_state";

/// An internal topic: its name, partitions, replication factor (at most
/// the brokers there are) and the configs Kafka 4.4.0 creates it with.
type Internal = (
    &'static str,
    i32,
    usize,
    &'static [(&'static str, &'static str)],
);

/// Each internal topic.
const INTERNAL: &[Internal] = &[
    (
        CONSUMER_OFFSETS,
        50,
        3,
        &[
            ("cleanup.policy", "compact"),
            ("compression.type", "producer"),
            ("segment.bytes", "104857600"),
        ],
    ),
    (
        TRANSACTION_STATE,
        50,
        3,
        &[
            ("cleanup.policy", "compact"),
            ("compression.type", "uncompressed"),
            ("min.insync.replicas", "2"),
            ("segment.bytes", "104857600"),
            ("unclean.leader.election.enable", "false"),
        ],
    ),
    (
        SHARE_GROUP_STATE,
        50,
        3,
        &[
            ("cleanup.policy", "delete"),
            ("compression.type", "producer"),
            ("min.insync.replicas", "2"),
            ("retention.ms", "-1"),
            ("segment.bytes", "104857600"),
        ],
    ),
];

/// Whether `name` is one of Kafka's internal topics (Kafka's
/// `Topic.isInternal`), existing or not.
pub fn is_internal(name: &str) -> bool {
    INTERNAL.iter().any(|(n, ..)| *n == name)
}

/// Creates the internal topic `name` over `nodes` if it is one and does
/// not exist yet: whether it exists now.
pub fn ensure(topics: &mut Topics, name: &str, nodes: &[i32]) -> bool {
    if topics.get(name).is_some() {
        return true;
    }
    let Some(&(_, partitions, replication, configs)) = INTERNAL.iter().find(|(n, ..)| *n == name)
    else {
        return false;
    };
    let configs: BTreeMap<String, String> = configs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let placement = Placement {
        nodes,
        replication_factor: replication.min(nodes.len()).max(1),
        assigned: &[],
    };
    topics.create(name, partitions, configs, placement).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_topics_are_created_once_with_kafkas_settings() {
        let mut topics = Topics::default();
        assert!(is_internal(CONSUMER_OFFSETS) && !is_internal("orders"));
        assert!(!ensure(&mut topics, "orders", &[0, 1]));
        assert!(topics.get("orders").is_none());
        assert!(ensure(&mut topics, CONSUMER_OFFSETS, &[0, 1]));
        let topic = topics
            .get(CONSUMER_OFFSETS)
            .map(|t| (t.partition_count(), t.replication_factor));
        assert_eq!(topic, Some((50, 2)));
        let id = topics.get(CONSUMER_OFFSETS).map(|t| t.id);
        assert!(ensure(&mut topics, CONSUMER_OFFSETS, &[0, 1]));
        assert_eq!(topics.get(CONSUMER_OFFSETS).map(|t| t.id), id);
        assert_eq!(
            topics
                .get(CONSUMER_OFFSETS)
                .and_then(|t| t.config("cleanup.policy")),
            Some("compact")
        );
    }
}
