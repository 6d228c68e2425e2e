//! The `read` operation: decode, then read every field of every element,
//! scalar arrays and unknown tagged sections included, into a checksum.
//!
//! Each workload has one reader per crate. They feed the same values, in the
//! same order, into a [`Checksum`], so equal checksums show that the crates
//! read the same message; [`crate::check_roundtrip`] asserts it (and
//! `benches/peers/` for the other peers, whose readers use the same
//! [`Checksum`]). Strings and byte fields contribute their length and first
//! byte, so that each one is reached through its pointer, as a reader would;
//! so do records fields, whatever form a crate decodes them into.

use kafka_protocol::messages as peer;
use kafka_wire::messages as ours;
use kafka_wire::RequestBody;

/// An order-sensitive checksum over integers, strings, bytes and uuids.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Checksum(u64);

impl Checksum {
    /// The checksum so far.
    pub fn value(self) -> u64 {
        self.0
    }

    /// Mixes in one integer.
    #[inline]
    pub fn int(&mut self, value: impl Into<i64>) {
        self.0 = (self.0.rotate_left(7) ^ value.into() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    /// Mixes in a string or byte field: its length and first byte.
    #[inline]
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.int(bytes.len() as i64);
        self.int(bytes.first().map_or(-1, |&b| i64::from(b)));
    }

    /// Mixes in a nullable string or byte field, null as -1.
    #[inline]
    pub fn opt_bytes(&mut self, bytes: Option<&[u8]>) {
        match bytes {
            Some(bytes) => self.bytes(bytes),
            None => self.int(-1),
        }
    }

    /// Mixes in a uuid.
    #[inline]
    pub fn uuid(&mut self, bytes: &[u8; 16]) {
        let value = u128::from_be_bytes(*bytes);
        self.int((value >> 64) as i64);
        self.int(value as i64);
    }

    /// Mixes in the number of elements of an array.
    #[inline]
    pub fn count(&mut self, count: usize) {
        self.int(count as i64);
    }
}

/// Reads a whole Metadata response with kafka-wire.
pub fn metadata_ours(response: &ours::MetadataResponse<'_>) -> u64 {
    let mut sum = Checksum::default();
    sum.int(response.throttle_time_ms);
    sum.count(response.brokers.len());
    for broker in &response.brokers {
        sum.int(broker.node_id);
        sum.bytes(broker.host.as_bytes());
        sum.int(broker.port);
        sum.opt_bytes(broker.rack.as_deref().map(str::as_bytes));
        sum.count(broker.unknown_tagged_fields.len());
    }
    sum.opt_bytes(response.cluster_id.as_deref().map(str::as_bytes));
    sum.int(response.controller_id);
    sum.count(response.topics.len());
    for topic in &response.topics {
        sum.int(topic.error_code);
        sum.opt_bytes(topic.name.as_deref().map(str::as_bytes));
        sum.uuid(&topic.topic_id.0);
        sum.int(topic.is_internal);
        sum.count(topic.partitions.len());
        for partition in &topic.partitions {
            sum.int(partition.error_code);
            sum.int(partition.partition_index);
            sum.int(partition.leader_id);
            sum.int(partition.leader_epoch);
            for nodes in [
                &partition.replica_nodes,
                &partition.isr_nodes,
                &partition.offline_replicas,
            ] {
                sum.count(nodes.len());
                nodes.iter().for_each(|id| sum.int(id));
            }
            sum.count(partition.unknown_tagged_fields.len());
        }
        sum.int(topic.topic_authorized_operations);
        sum.count(topic.unknown_tagged_fields.len());
    }
    sum.int(response.cluster_authorized_operations);
    sum.int(response.error_code);
    sum.count(response.unknown_tagged_fields.len());
    sum.value()
}

/// [`metadata_ours`] with the peer.
pub fn metadata_peer(response: &peer::MetadataResponse) -> u64 {
    let mut sum = Checksum::default();
    sum.int(response.throttle_time_ms);
    sum.count(response.brokers.len());
    for broker in &response.brokers {
        sum.int(broker.node_id.0);
        sum.bytes(broker.host.as_bytes());
        sum.int(broker.port);
        sum.opt_bytes(broker.rack.as_ref().map(|rack| rack.as_bytes()));
        sum.count(broker.unknown_tagged_fields.len());
    }
    sum.opt_bytes(response.cluster_id.as_ref().map(|id| id.as_bytes()));
    sum.int(response.controller_id.0);
    sum.count(response.topics.len());
    for topic in &response.topics {
        sum.int(topic.error_code);
        sum.opt_bytes(topic.name.as_ref().map(|name| name.as_bytes()));
        sum.uuid(topic.topic_id.as_bytes());
        sum.int(topic.is_internal);
        sum.count(topic.partitions.len());
        for partition in &topic.partitions {
            sum.int(partition.error_code);
            sum.int(partition.partition_index);
            sum.int(partition.leader_id.0);
            sum.int(partition.leader_epoch);
            for nodes in [
                &partition.replica_nodes,
                &partition.isr_nodes,
                &partition.offline_replicas,
            ] {
                sum.count(nodes.len());
                nodes.iter().for_each(|id| sum.int(id.0));
            }
            sum.count(partition.unknown_tagged_fields.len());
        }
        sum.int(topic.topic_authorized_operations);
        sum.count(topic.unknown_tagged_fields.len());
    }
    sum.int(response.cluster_authorized_operations);
    sum.int(response.error_code);
    sum.count(response.unknown_tagged_fields.len());
    sum.value()
}

/// Reads a whole Fetch response with kafka-wire: every partition's offsets,
/// epochs, aborted transactions and records.
pub fn fetch_ours(response: &ours::FetchResponse<'_>) -> u64 {
    let mut sum = Checksum::default();
    sum.int(response.throttle_time_ms);
    sum.int(response.error_code);
    sum.int(response.session_id);
    sum.count(response.responses.len());
    for topic in &response.responses {
        sum.bytes(topic.topic.as_bytes());
        sum.uuid(&topic.topic_id.0);
        sum.count(topic.partitions.len());
        for partition in &topic.partitions {
            sum.int(partition.partition_index);
            sum.int(partition.error_code);
            sum.int(partition.high_watermark);
            sum.int(partition.last_stable_offset);
            sum.int(partition.log_start_offset);
            sum.int(partition.diverging_epoch.epoch);
            sum.int(partition.diverging_epoch.end_offset);
            sum.int(partition.current_leader.leader_id);
            sum.int(partition.current_leader.leader_epoch);
            sum.int(partition.snapshot_id.end_offset);
            sum.int(partition.snapshot_id.epoch);
            match &partition.aborted_transactions {
                Some(aborted) => {
                    sum.count(aborted.len());
                    for transaction in aborted {
                        sum.int(transaction.producer_id);
                        sum.int(transaction.first_offset);
                    }
                }
                None => sum.int(-1),
            }
            sum.int(partition.preferred_read_replica);
            sum.opt_bytes(partition.records.as_deref());
            sum.count(partition.unknown_tagged_fields.len());
        }
        sum.count(topic.unknown_tagged_fields.len());
    }
    sum.count(response.node_endpoints.len());
    for node in &response.node_endpoints {
        sum.int(node.node_id);
        sum.bytes(node.host.as_bytes());
        sum.int(node.port);
        sum.opt_bytes(node.rack.as_deref().map(str::as_bytes));
    }
    sum.count(response.unknown_tagged_fields.len());
    sum.value()
}

/// [`fetch_ours`] with the peer.
pub fn fetch_peer(response: &peer::FetchResponse) -> u64 {
    let mut sum = Checksum::default();
    sum.int(response.throttle_time_ms);
    sum.int(response.error_code);
    sum.int(response.session_id);
    sum.count(response.responses.len());
    for topic in &response.responses {
        sum.bytes(topic.topic.as_bytes());
        sum.uuid(topic.topic_id.as_bytes());
        sum.count(topic.partitions.len());
        for partition in &topic.partitions {
            sum.int(partition.partition_index);
            sum.int(partition.error_code);
            sum.int(partition.high_watermark);
            sum.int(partition.last_stable_offset);
            sum.int(partition.log_start_offset);
            sum.int(partition.diverging_epoch.epoch);
            sum.int(partition.diverging_epoch.end_offset);
            sum.int(partition.current_leader.leader_id.0);
            sum.int(partition.current_leader.leader_epoch);
            sum.int(partition.snapshot_id.end_offset);
            sum.int(partition.snapshot_id.epoch);
            match &partition.aborted_transactions {
                Some(aborted) => {
                    sum.count(aborted.len());
                    for transaction in aborted {
                        sum.int(transaction.producer_id.0);
                        sum.int(transaction.first_offset);
                    }
                }
                None => sum.int(-1),
            }
            sum.int(partition.preferred_read_replica.0);
            sum.opt_bytes(partition.records.as_deref());
            sum.count(partition.unknown_tagged_fields.len());
        }
        sum.count(topic.unknown_tagged_fields.len());
    }
    sum.count(response.node_endpoints.len());
    for node in &response.node_endpoints {
        sum.int(node.node_id.0);
        sum.bytes(node.host.as_bytes());
        sum.int(node.port);
        sum.opt_bytes(node.rack.as_ref().map(|rack| rack.as_bytes()));
    }
    sum.count(response.unknown_tagged_fields.len());
    sum.value()
}

/// Reads a whole Produce request with kafka-wire, as a broker does.
pub fn produce_ours(request: &ours::ProduceRequest<'_>) -> u64 {
    let mut sum = Checksum::default();
    sum.opt_bytes(request.transactional_id.as_deref().map(str::as_bytes));
    sum.int(request.acks);
    sum.int(request.timeout_ms);
    sum.count(request.topic_data.len());
    for topic in &request.topic_data {
        sum.bytes(topic.name.as_bytes());
        sum.uuid(&topic.topic_id.0);
        sum.count(topic.partition_data.len());
        for partition in &topic.partition_data {
            sum.int(partition.index);
            sum.opt_bytes(partition.records.as_deref());
            sum.count(partition.unknown_tagged_fields.len());
        }
        sum.count(topic.unknown_tagged_fields.len());
    }
    sum.count(request.unknown_tagged_fields.len());
    sum.value()
}

/// [`produce_ours`] with the peer.
pub fn produce_peer(request: &peer::ProduceRequest) -> u64 {
    let mut sum = Checksum::default();
    sum.opt_bytes(request.transactional_id.as_ref().map(|id| id.as_bytes()));
    sum.int(request.acks);
    sum.int(request.timeout_ms);
    sum.count(request.topic_data.len());
    for topic in &request.topic_data {
        sum.bytes(topic.name.as_bytes());
        sum.uuid(topic.topic_id.as_bytes());
        sum.count(topic.partition_data.len());
        for partition in &topic.partition_data {
            sum.int(partition.index);
            sum.opt_bytes(partition.records.as_deref());
            sum.count(partition.unknown_tagged_fields.len());
        }
        sum.count(topic.unknown_tagged_fields.len());
    }
    sum.count(request.unknown_tagged_fields.len());
    sum.value()
}

/// Reads a whole Vote request with kafka-wire, as a voter does.
pub fn vote_ours(request: &ours::VoteRequest<'_>) -> u64 {
    let mut sum = Checksum::default();
    sum.opt_bytes(request.cluster_id.as_deref().map(str::as_bytes));
    sum.int(request.voter_id);
    sum.count(request.topics.len());
    for topic in &request.topics {
        sum.bytes(topic.topic_name.as_bytes());
        sum.count(topic.partitions.len());
        for partition in &topic.partitions {
            sum.int(partition.partition_index);
            sum.int(partition.replica_epoch);
            sum.int(partition.replica_id);
            sum.uuid(&partition.replica_directory_id.0);
            sum.uuid(&partition.voter_directory_id.0);
            sum.int(partition.last_offset_epoch);
            sum.int(partition.last_offset);
            sum.int(partition.pre_vote);
            sum.count(partition.unknown_tagged_fields.len());
        }
        sum.count(topic.unknown_tagged_fields.len());
    }
    sum.count(request.unknown_tagged_fields.len());
    sum.value()
}

/// [`vote_ours`] with the peer.
pub fn vote_peer(request: &peer::VoteRequest) -> u64 {
    let mut sum = Checksum::default();
    sum.opt_bytes(request.cluster_id.as_ref().map(|id| id.as_bytes()));
    sum.int(request.voter_id.0);
    sum.count(request.topics.len());
    for topic in &request.topics {
        sum.bytes(topic.topic_name.as_bytes());
        sum.count(topic.partitions.len());
        for partition in &topic.partitions {
            sum.int(partition.partition_index);
            sum.int(partition.replica_epoch);
            sum.int(partition.replica_id.0);
            sum.uuid(partition.replica_directory_id.as_bytes());
            sum.uuid(partition.voter_directory_id.as_bytes());
            sum.int(partition.last_offset_epoch);
            sum.int(partition.last_offset);
            sum.int(partition.pre_vote);
            sum.count(partition.unknown_tagged_fields.len());
        }
        sum.count(topic.unknown_tagged_fields.len());
    }
    sum.count(request.unknown_tagged_fields.len());
    sum.value()
}

/// Reads a whole ApiVersions response with kafka-wire, as a client does when
/// it negotiates versions.
pub fn api_versions_ours(response: &ours::ApiVersionsResponse<'_>) -> u64 {
    let mut sum = Checksum::default();
    sum.int(response.error_code);
    sum.count(response.api_keys.len());
    for key in &response.api_keys {
        sum.int(key.api_key);
        sum.int(key.min_version);
        sum.int(key.max_version);
        sum.count(key.unknown_tagged_fields.len());
    }
    sum.int(response.throttle_time_ms);
    sum.count(response.supported_features.len());
    for feature in &response.supported_features {
        sum.bytes(feature.name.as_bytes());
        sum.int(feature.min_version);
        sum.int(feature.max_version);
    }
    sum.int(response.finalized_features_epoch);
    sum.count(response.finalized_features.len());
    for feature in &response.finalized_features {
        sum.bytes(feature.name.as_bytes());
        sum.int(feature.max_version_level);
        sum.int(feature.min_version_level);
    }
    sum.int(response.zk_migration_ready);
    sum.count(response.unknown_tagged_fields.len());
    sum.value()
}

/// [`api_versions_ours`] with the peer.
pub fn api_versions_peer(response: &peer::ApiVersionsResponse) -> u64 {
    let mut sum = Checksum::default();
    sum.int(response.error_code);
    sum.count(response.api_keys.len());
    for key in &response.api_keys {
        sum.int(key.api_key);
        sum.int(key.min_version);
        sum.int(key.max_version);
        sum.count(key.unknown_tagged_fields.len());
    }
    sum.int(response.throttle_time_ms);
    sum.count(response.supported_features.len());
    for feature in &response.supported_features {
        sum.bytes(feature.name.as_bytes());
        sum.int(feature.min_version);
        sum.int(feature.max_version);
    }
    sum.int(response.finalized_features_epoch);
    sum.count(response.finalized_features.len());
    for feature in &response.finalized_features {
        sum.bytes(feature.name.as_bytes());
        sum.int(feature.max_version_level);
        sum.int(feature.min_version_level);
    }
    sum.int(response.zk_migration_ready);
    sum.count(response.unknown_tagged_fields.len());
    sum.value()
}

/// Reads a request header and its Metadata request with kafka-wire, as a
/// broker does before it answers.
pub fn metadata_request_frame_ours(frame: &kafka_wire::frame::RequestFrame<'_>) -> u64 {
    let mut sum = Checksum::default();
    let header = &frame.header;
    sum.int(header.request_api_key);
    sum.int(header.request_api_version);
    sum.int(header.correlation_id);
    sum.opt_bytes(header.client_id.as_deref().map(str::as_bytes));
    let RequestBody::Metadata(request) = &frame.body else {
        return sum.value();
    };
    match &request.topics {
        Some(topics) => {
            sum.count(topics.len());
            for topic in topics {
                sum.uuid(&topic.topic_id.0);
                sum.opt_bytes(topic.name.as_deref().map(str::as_bytes));
            }
        }
        None => sum.int(-1),
    }
    sum.int(request.allow_auto_topic_creation);
    sum.int(request.include_cluster_authorized_operations);
    sum.int(request.include_topic_authorized_operations);
    sum.value()
}

/// [`metadata_request_frame_ours`] with the peer.
pub fn metadata_request_frame_peer(
    (header, request): &(peer::RequestHeader, peer::MetadataRequest),
) -> u64 {
    let mut sum = Checksum::default();
    sum.int(header.request_api_key);
    sum.int(header.request_api_version);
    sum.int(header.correlation_id);
    sum.opt_bytes(header.client_id.as_ref().map(|id| id.as_bytes()));
    match &request.topics {
        Some(topics) => {
            sum.count(topics.len());
            for topic in topics {
                sum.uuid(topic.topic_id.as_bytes());
                sum.opt_bytes(topic.name.as_ref().map(|name| name.as_bytes()));
            }
        }
        None => sum.int(-1),
    }
    sum.int(request.allow_auto_topic_creation);
    sum.int(request.include_cluster_authorized_operations);
    sum.int(request.include_topic_authorized_operations);
    sum.value()
}
