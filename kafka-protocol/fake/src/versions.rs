//! What the fake advertises in ApiVersions: the one table of the APIs it
//! implements, with the ranges Kafka 4.4.0 advertises for them, and Kafka
//! 4.4.0's default finalized features.
//!
//! The ranges are those of the 4.4.0 message schemas (`validVersions`,
//! without a `latestVersionUnstable` latest), with Kafka's one exception:
//! Produce is advertised from v0 although v0 to v2 are refused
//! (KAFKA-18659; librdkafka enables its codecs only when it sees v0), and a
//! Produce below v3 closes the connection, as Kafka does. InitProducerId's
//! latest version (v6, two-phase commit) is unstable in 4.4.0 and not
//! advertised.

use std::collections::BTreeMap;

use kafka_wire::messages::api_versions_response::{
    ApiVersion, FinalizedFeatureKey, SupportedFeatureKey,
};
use kafka_wire::ApiKey;

/// Every implemented API with the (min, max) versions Kafka 4.4.0
/// advertises for it, by api key.
pub const ADVERTISED: &[(ApiKey, i16, i16)] = &[
    (ApiKey::Produce, 0, 13),
    (ApiKey::Fetch, 4, 18),
    (ApiKey::ListOffsets, 1, 11),
    (ApiKey::Metadata, 0, 13),
    (ApiKey::OffsetCommit, 2, 10),
    (ApiKey::OffsetFetch, 1, 10),
    (ApiKey::FindCoordinator, 0, 6),
    (ApiKey::JoinGroup, 0, 9),
    (ApiKey::Heartbeat, 0, 4),
    (ApiKey::LeaveGroup, 0, 5),
    (ApiKey::SyncGroup, 0, 5),
    (ApiKey::DescribeGroups, 0, 6),
    (ApiKey::ListGroups, 0, 5),
    (ApiKey::SaslHandshake, 0, 1),
    (ApiKey::ApiVersions, 0, 5),
    (ApiKey::CreateTopics, 2, 7),
    (ApiKey::DeleteTopics, 1, 6),
    (ApiKey::DeleteRecords, 0, 2),
    (ApiKey::InitProducerId, 0, 5),
    (ApiKey::AddPartitionsToTxn, 0, 5),
    (ApiKey::AddOffsetsToTxn, 0, 4),
    (ApiKey::EndTxn, 0, 5),
    (ApiKey::WriteTxnMarkers, 1, 2),
    (ApiKey::TxnOffsetCommit, 0, 6),
    (ApiKey::OffsetForLeaderEpoch, 2, 4),
    (ApiKey::DescribeConfigs, 1, 4),
    (ApiKey::AlterConfigs, 0, 2),
    (ApiKey::DescribeLogDirs, 1, 5),
    (ApiKey::CreatePartitions, 0, 3),
    (ApiKey::CreateDelegationToken, 1, 3),
    (ApiKey::RenewDelegationToken, 1, 2),
    (ApiKey::ExpireDelegationToken, 1, 2),
    (ApiKey::DescribeDelegationToken, 1, 3),
    (ApiKey::DeleteGroups, 0, 3),
    (ApiKey::ElectLeaders, 0, 2),
    (ApiKey::IncrementalAlterConfigs, 0, 1),
    (ApiKey::AlterPartitionReassignments, 0, 1),
    (ApiKey::ListPartitionReassignments, 0, 0),
    (ApiKey::SaslAuthenticate, 0, 2),
    (ApiKey::OffsetDelete, 0, 0),
    (ApiKey::DescribeClientQuotas, 0, 1),
    (ApiKey::AlterClientQuotas, 0, 1),
    (ApiKey::DescribeQuorum, 0, 2),
    (ApiKey::UpdateFeatures, 0, 2),
    (ApiKey::DescribeCluster, 0, 2),
    (ApiKey::UnregisterBroker, 0, 0),
    (ApiKey::DescribeProducers, 0, 0),
    (ApiKey::DescribeTransactions, 0, 0),
    (ApiKey::ListTransactions, 0, 2),
    (ApiKey::ConsumerGroupHeartbeat, 0, 1),
    (ApiKey::ConsumerGroupDescribe, 0, 1),
    (ApiKey::DescribeTopicPartitions, 0, 0),
    (ApiKey::ListConfigResources, 0, 1),
    (ApiKey::ShareGroupHeartbeat, 1, 1),
    (ApiKey::ShareGroupDescribe, 1, 1),
    (ApiKey::ShareFetch, 1, 2),
    (ApiKey::ShareAcknowledge, 1, 2),
    (ApiKey::StreamsGroupHeartbeat, 0, 1),
    (ApiKey::StreamsGroupDescribe, 0, 1),
    (ApiKey::DescribeShareGroupOffsets, 0, 1),
    (ApiKey::AlterShareGroupOffsets, 0, 0),
    (ApiKey::DeleteShareGroupOffsets, 0, 0),
    (ApiKey::StreamsGroupTopologyDescriptionUpdate, 0, 0),
    (ApiKey::UnregisterController, 0, 0),
];

/// The lowest Produce version actually served: below it the connection is
/// closed, as Kafka closes it.
pub const LOWEST_SERVED_PRODUCE: i16 = 3;

/// Kafka 4.4.0's features with a fresh cluster's finalized levels, as a
/// 4.4.0 broker formatted with the defaults answers ApiVersions v4:
/// (name, min supported, max supported, finalized level).
pub const FEATURES: &[(&str, i16, i16, i16)] = &[
    ("group.version", 0, 1, 1),
    ("kraft.version", 0, 1, 1),
    ("metadata.version", 7, 33, 33),
    ("share.version", 0, 2, 2),
    ("streams.version", 0, 1, 1),
    ("transaction.version", 0, 2, 2),
    ("eligible.leader.replicas.version", 0, 1, 1),
];

/// The advertised (min, max) of `api` under the caps, if implemented.
pub fn range(api: ApiKey, caps: &BTreeMap<i16, i16>) -> Option<(i16, i16)> {
    let &(_, min, max) = ADVERTISED.iter().find(|(a, _, _)| *a == api)?;
    let max = caps.get(&api.key()).map_or(max, |cap| max.min(*cap));
    (max >= min).then_some((min, max))
}

/// Whether a request of `api` at `version` is served.
pub fn serves(api: ApiKey, version: i16, caps: &BTreeMap<i16, i16>) -> bool {
    let Some((min, max)) = range(api, caps) else {
        return false;
    };
    let min = if api == ApiKey::Produce {
        min.max(LOWEST_SERVED_PRODUCE)
    } else {
        min
    };
    (min..=max).contains(&version) && api.supports_version(version)
}

/// The `api_keys` of the ApiVersions response.
pub fn api_keys(caps: &BTreeMap<i16, i16>) -> Vec<ApiVersion<'static>> {
    ADVERTISED
        .iter()
        .filter_map(|&(api, _, _)| {
            range(api, caps).map(|(min, max)| ApiVersion {
                api_key: api.key(),
                min_version: min,
                max_version: max,
                ..Default::default()
            })
        })
        .collect()
}

/// The first ApiVersions version whose answer lists the supported features
/// whose lowest level is 0. Below it Kafka leaves them out (KAFKA-17492):
/// clients before 3.9, such as kafka-clients 3.5.0, refuse a supported
/// range that starts at 0 and drop the connection.
pub const FEATURES_FROM_ZERO_SINCE: i16 = 4;

/// The supported features of an ApiVersions answer at `version` (v3+), as
/// Kafka 4.4.0 lists them: below v4 without those whose lowest supported
/// level is 0 (only `metadata.version` is left).
pub fn supported_features(version: i16) -> Vec<SupportedFeatureKey<'static>> {
    FEATURES
        .iter()
        .filter(|&&(_, min, _, _)| min > 0 || version >= FEATURES_FROM_ZERO_SINCE)
        .map(|&(name, min, max, _)| SupportedFeatureKey {
            name: name.into(),
            min_version: min,
            max_version: max,
            ..Default::default()
        })
        .collect()
}

/// The order in which Kafka 4.4.0 lists the finalized features (its own,
/// unlike that of the supported ones).
const FINALIZED_ORDER: &[&str] = &[
    "group.version",
    "kraft.version",
    "share.version",
    "metadata.version",
    "streams.version",
    "transaction.version",
    "eligible.leader.replicas.version",
];

/// The finalized features of the ApiVersions response (v3+), at every
/// version (a finalized level is never 0: such features are left out), in
/// Kafka's order.
pub fn finalized_features() -> Vec<FinalizedFeatureKey<'static>> {
    let rank = |name: &str| FINALIZED_ORDER.iter().position(|n| *n == name);
    let mut features: Vec<_> = FEATURES.iter().collect();
    features.sort_by_key(|(name, ..)| rank(name));
    features
        .into_iter()
        .filter(|(_, _, _, level)| *level > 0)
        .map(|&(name, _, _, level)| FinalizedFeatureKey {
            name: name.into(),
            max_version_level: level,
            min_version_level: level,
            ..Default::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table stays within what the schemas define, and differs from
    /// them only where Kafka does (Produce from v0).
    #[test]
    fn the_table_agrees_with_the_schemas() {
        for &(api, min, max) in ADVERTISED {
            let schema_min = if api == ApiKey::Produce {
                0
            } else {
                api.lowest_version()
            };
            assert_eq!(min, schema_min, "{}", api.name());
            assert_eq!(max, api.highest_stable_version(), "{}", api.name());
        }
        let keys: Vec<i16> = ADVERTISED.iter().map(|(a, _, _)| a.key()).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(keys.len(), sorted.len());
    }

    /// Kafka 4.4.0 answers ApiVersions v3 with `metadata.version` alone
    /// among the supported features, and v4 with all seven; the finalized
    /// features are the same at both.
    #[test]
    fn features_from_level_zero_only_from_v4() {
        let names = |version| -> Vec<String> {
            supported_features(version)
                .iter()
                .map(|f| f.name.to_string())
                .collect()
        };
        assert_eq!(names(3), ["metadata.version"]);
        assert_eq!(names(4).len(), FEATURES.len());
        let finalized: Vec<String> = finalized_features()
            .iter()
            .map(|f| f.name.to_string())
            .collect();
        assert_eq!(finalized, FINALIZED_ORDER);
    }

    #[test]
    fn caps_lower_the_maximum() {
        let caps = BTreeMap::from([(ApiKey::Fetch.key(), 11)]);
        assert_eq!(range(ApiKey::Fetch, &caps), Some((4, 11)));
        assert!(!serves(ApiKey::Fetch, 12, &caps));
        assert!(!serves(ApiKey::Produce, 2, &caps));
        assert!(serves(ApiKey::Produce, 3, &caps));
    }
}
