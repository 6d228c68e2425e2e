//! The `read` operation on kacrab-protocol and krabka-protocol: the same
//! values, in the same order, into the same
//! [`Checksum`](kafka_wire_benches::read::Checksum) as ours and
//! kafka-protocol's readers in `kafka_wire_benches::read`.
//!
//! The three crates here name their fields alike (kacrab's unknown tagged
//! fields are `_unknown_tagged_fields`), so one macro per message writes
//! each crate's reader; the small traits below give their strings, uuids
//! and records fields one shape. A records field contributes its length and
//! first byte, as everywhere: for krabka, which parses v2 batches as it
//! decodes, the length is the sum of the batches' lengths (owned:
//! `payload_len()`; borrowed: from each batch's header, as `payload_len()`
//! would decode every record to measure it) and the first byte the first
//! byte of the first batch's base offset.

use bytes::Bytes;
use kacrab_protocol::{KafkaString, KafkaUuid};
use kafka_wire_benches::read::Checksum;
use krabka_protocol::primitives::uuid::Uuid as KrabkaUuid;
use krabka_protocol::records::{RecordsPayload, RecordsPayloadBorrowed};
use krabka_protocol::{borrowed, owned};

use kacrab_protocol::generated as kacrab;

/// A string field, as bytes.
trait Text {
    fn text(&self) -> &[u8];
}

impl Text for KafkaString {
    #[inline]
    fn text(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl Text for String {
    #[inline]
    fn text(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl Text for &str {
    #[inline]
    fn text(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// A nullable string field, as bytes.
trait OptText {
    fn opt_text(&self) -> Option<&[u8]>;
}

impl<T: Text> OptText for Option<T> {
    #[inline]
    fn opt_text(&self) -> Option<&[u8]> {
        self.as_ref().map(Text::text)
    }
}

/// A uuid field, as its 16 bytes.
trait Id {
    fn id(&self) -> [u8; 16];
}

impl Id for KafkaUuid {
    #[inline]
    fn id(&self) -> [u8; 16] {
        self.to_bytes()
    }
}

impl Id for KrabkaUuid {
    #[inline]
    fn id(&self) -> [u8; 16] {
        self.0
    }
}

/// A nullable records field: its length and first byte, null as -1.
trait RecordsField {
    fn mix(&self, sum: &mut Checksum);
}

impl RecordsField for Option<Bytes> {
    #[inline]
    fn mix(&self, sum: &mut Checksum) {
        sum.opt_bytes(self.as_deref());
    }
}

/// The first byte of a batch whose base offset is `base_offset`.
#[inline]
fn first_byte(base_offset: i64) -> i64 {
    i64::from(base_offset.to_be_bytes()[0])
}

impl RecordsField for Option<RecordsPayload> {
    #[inline]
    fn mix(&self, sum: &mut Checksum) {
        let Some(payload) = self else {
            return sum.int(-1);
        };
        sum.int(payload.payload_len() as i64);
        #[allow(
            unreachable_patterns,
            reason = "FileRegions exists on some targets only"
        )]
        let first = match payload {
            RecordsPayload::V2(batches) => batches
                .first()
                .map_or(-1, |batch| first_byte(batch.base_offset)),
            RecordsPayload::Raw(bytes) | RecordsPayload::Legacy(bytes) => {
                bytes.first().map_or(-1, |&b| i64::from(b))
            }
            _ => panic!("krabka decoded records into file regions"),
        };
        sum.int(first);
    }
}

impl RecordsField for Option<RecordsPayloadBorrowed<'_>> {
    #[inline]
    fn mix(&self, sum: &mut Checksum) {
        let Some(payload) = self else {
            return sum.int(-1);
        };
        // The length from the batches' headers: `payload_len()` would measure
        // every batch by walking (and collecting) its records.
        let len = match payload {
            RecordsPayloadBorrowed::V2(batches) => batches
                .iter()
                .map(|b| 12 + i64::from(b.header().batch_length.get()))
                .sum(),
            RecordsPayloadBorrowed::Legacy(bytes) => bytes.len() as i64,
        };
        sum.int(len);
        let first = match payload {
            RecordsPayloadBorrowed::V2(batches) => batches
                .first()
                .map_or(-1, |b| first_byte(b.header().base_offset.get())),
            RecordsPayloadBorrowed::Legacy(bytes) => bytes.first().map_or(-1, |&b| i64::from(b)),
        };
        sum.int(first);
    }
}

/// `kafka_wire_benches::read::metadata_ours` for one crate.
macro_rules! metadata_reader {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $unknown:ident) => {
        $(#[$doc])*
        pub fn $name(response: &$ty) -> u64 {
            let mut sum = Checksum::default();
            sum.int(response.throttle_time_ms);
            sum.count(response.brokers.len());
            for broker in &response.brokers {
                sum.int(broker.node_id);
                sum.bytes(broker.host.text());
                sum.int(broker.port);
                sum.opt_bytes(broker.rack.opt_text());
                sum.count(broker.$unknown.len());
            }
            sum.opt_bytes(response.cluster_id.opt_text());
            sum.int(response.controller_id);
            sum.count(response.topics.len());
            for topic in &response.topics {
                sum.int(topic.error_code);
                sum.opt_bytes(topic.name.opt_text());
                sum.uuid(&topic.topic_id.id());
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
                        nodes.iter().for_each(|&id| sum.int(id));
                    }
                    sum.count(partition.$unknown.len());
                }
                sum.int(topic.topic_authorized_operations);
                sum.count(topic.$unknown.len());
            }
            sum.int(response.cluster_authorized_operations);
            sum.int(response.error_code);
            sum.count(response.$unknown.len());
            sum.value()
        }
    };
}

metadata_reader!(
    /// Reads a whole Metadata response with kacrab-protocol.
    metadata_kacrab, kacrab::MetadataResponseData, _unknown_tagged_fields
);
metadata_reader!(
    /// Reads a whole Metadata response with krabka-protocol's owned types.
    metadata_krabka_owned, owned::metadata_response::MetadataResponse, unknown_tagged_fields
);
metadata_reader!(
    /// Reads a whole Metadata response with krabka-protocol's borrowed types.
    metadata_krabka_borrowed,
    borrowed::metadata_response::MetadataResponse<'_>,
    unknown_tagged_fields
);

/// `kafka_wire_benches::read::fetch_ours` for one crate.
macro_rules! fetch_reader {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $unknown:ident) => {
        $(#[$doc])*
        pub fn $name(response: &$ty) -> u64 {
            let mut sum = Checksum::default();
            sum.int(response.throttle_time_ms);
            sum.int(response.error_code);
            sum.int(response.session_id);
            sum.count(response.responses.len());
            for topic in &response.responses {
                sum.bytes(topic.topic.text());
                sum.uuid(&topic.topic_id.id());
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
                    partition.records.mix(&mut sum);
                    sum.count(partition.$unknown.len());
                }
                sum.count(topic.$unknown.len());
            }
            sum.count(response.node_endpoints.len());
            for node in &response.node_endpoints {
                sum.int(node.node_id);
                sum.bytes(node.host.text());
                sum.int(node.port);
                sum.opt_bytes(node.rack.opt_text());
            }
            sum.count(response.$unknown.len());
            sum.value()
        }
    };
}

fetch_reader!(
    /// Reads a whole Fetch response with kacrab-protocol.
    fetch_kacrab, kacrab::FetchResponseData, _unknown_tagged_fields
);
fetch_reader!(
    /// Reads a whole Fetch response with krabka-protocol's owned types.
    fetch_krabka_owned, owned::fetch_response::FetchResponse, unknown_tagged_fields
);
fetch_reader!(
    /// Reads a whole Fetch response with krabka-protocol's borrowed types.
    fetch_krabka_borrowed, borrowed::fetch_response::FetchResponse<'_>, unknown_tagged_fields
);

/// `kafka_wire_benches::read::produce_ours` for one crate.
macro_rules! produce_reader {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $unknown:ident) => {
        $(#[$doc])*
        pub fn $name(request: &$ty) -> u64 {
            let mut sum = Checksum::default();
            sum.opt_bytes(request.transactional_id.opt_text());
            sum.int(request.acks);
            sum.int(request.timeout_ms);
            sum.count(request.topic_data.len());
            for topic in &request.topic_data {
                sum.bytes(topic.name.text());
                sum.uuid(&topic.topic_id.id());
                sum.count(topic.partition_data.len());
                for partition in &topic.partition_data {
                    sum.int(partition.index);
                    partition.records.mix(&mut sum);
                    sum.count(partition.$unknown.len());
                }
                sum.count(topic.$unknown.len());
            }
            sum.count(request.$unknown.len());
            sum.value()
        }
    };
}

produce_reader!(
    /// Reads a whole Produce request with kacrab-protocol.
    produce_kacrab, kacrab::ProduceRequestData, _unknown_tagged_fields
);
produce_reader!(
    /// Reads a whole Produce request with krabka-protocol's owned types.
    produce_krabka_owned, owned::produce_request::ProduceRequest, unknown_tagged_fields
);
produce_reader!(
    /// Reads a whole Produce request with krabka-protocol's borrowed types.
    produce_krabka_borrowed,
    borrowed::produce_request::ProduceRequest<'_>,
    unknown_tagged_fields
);

/// `kafka_wire_benches::read::vote_ours` for one crate.
macro_rules! vote_reader {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $unknown:ident) => {
        $(#[$doc])*
        pub fn $name(request: &$ty) -> u64 {
            let mut sum = Checksum::default();
            sum.opt_bytes(request.cluster_id.opt_text());
            sum.int(request.voter_id);
            sum.count(request.topics.len());
            for topic in &request.topics {
                sum.bytes(topic.topic_name.text());
                sum.count(topic.partitions.len());
                for partition in &topic.partitions {
                    sum.int(partition.partition_index);
                    sum.int(partition.replica_epoch);
                    sum.int(partition.replica_id);
                    sum.uuid(&partition.replica_directory_id.id());
                    sum.uuid(&partition.voter_directory_id.id());
                    sum.int(partition.last_offset_epoch);
                    sum.int(partition.last_offset);
                    sum.int(partition.pre_vote);
                    sum.count(partition.$unknown.len());
                }
                sum.count(topic.$unknown.len());
            }
            sum.count(request.$unknown.len());
            sum.value()
        }
    };
}

vote_reader!(
    /// Reads a whole Vote request with kacrab-protocol.
    vote_kacrab, kacrab::VoteRequestData, _unknown_tagged_fields
);
vote_reader!(
    /// Reads a whole Vote request with krabka-protocol's owned types.
    vote_krabka_owned, owned::vote_request::VoteRequest, unknown_tagged_fields
);
vote_reader!(
    /// Reads a whole Vote request with krabka-protocol's borrowed types.
    vote_krabka_borrowed, borrowed::vote_request::VoteRequest<'_>, unknown_tagged_fields
);

/// `kafka_wire_benches::read::api_versions_ours` for one crate.
macro_rules! api_versions_reader {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $unknown:ident) => {
        $(#[$doc])*
        pub fn $name(response: &$ty) -> u64 {
            let mut sum = Checksum::default();
            sum.int(response.error_code);
            sum.count(response.api_keys.len());
            for key in &response.api_keys {
                sum.int(key.api_key);
                sum.int(key.min_version);
                sum.int(key.max_version);
                sum.count(key.$unknown.len());
            }
            sum.int(response.throttle_time_ms);
            sum.count(response.supported_features.len());
            for feature in &response.supported_features {
                sum.bytes(feature.name.text());
                sum.int(feature.min_version);
                sum.int(feature.max_version);
            }
            sum.int(response.finalized_features_epoch);
            sum.count(response.finalized_features.len());
            for feature in &response.finalized_features {
                sum.bytes(feature.name.text());
                sum.int(feature.max_version_level);
                sum.int(feature.min_version_level);
            }
            sum.int(response.zk_migration_ready);
            sum.count(response.$unknown.len());
            sum.value()
        }
    };
}

api_versions_reader!(
    /// Reads a whole ApiVersions response with kacrab-protocol.
    api_versions_kacrab, kacrab::ApiVersionsResponseData, _unknown_tagged_fields
);
api_versions_reader!(
    /// Reads a whole ApiVersions response with krabka-protocol's owned types.
    api_versions_krabka_owned,
    owned::api_versions_response::ApiVersionsResponse,
    unknown_tagged_fields
);
api_versions_reader!(
    /// Reads a whole ApiVersions response with krabka-protocol's borrowed
    /// types.
    api_versions_krabka_borrowed,
    borrowed::api_versions_response::ApiVersionsResponse,
    unknown_tagged_fields
);

/// `kafka_wire_benches::read::metadata_request_frame_ours` for one crate.
macro_rules! metadata_request_frame_reader {
    ($(#[$doc:meta])* $name:ident, $header:ty, $body:ty) => {
        $(#[$doc])*
        pub fn $name((header, request): &($header, $body)) -> u64 {
            let mut sum = Checksum::default();
            sum.int(header.request_api_key);
            sum.int(header.request_api_version);
            sum.int(header.correlation_id);
            sum.opt_bytes(header.client_id.opt_text());
            match &request.topics {
                Some(topics) => {
                    sum.count(topics.len());
                    for topic in topics {
                        sum.uuid(&topic.topic_id.id());
                        sum.opt_bytes(topic.name.opt_text());
                    }
                }
                None => sum.int(-1),
            }
            sum.int(request.allow_auto_topic_creation);
            sum.int(request.include_cluster_authorized_operations);
            sum.int(request.include_topic_authorized_operations);
            sum.value()
        }
    };
}

metadata_request_frame_reader!(
    /// Reads a request header and its Metadata request with kacrab-protocol.
    metadata_request_frame_kacrab,
    kacrab::RequestHeaderData,
    kacrab::MetadataRequestData
);
metadata_request_frame_reader!(
    /// Reads a request header and its Metadata request with krabka-protocol's
    /// owned types.
    metadata_request_frame_krabka_owned,
    owned::request_header::RequestHeader,
    owned::metadata_request::MetadataRequest
);
metadata_request_frame_reader!(
    /// Reads a request header and its Metadata request with krabka-protocol's
    /// borrowed types.
    metadata_request_frame_krabka_borrowed,
    borrowed::request_header::RequestHeader<'_>,
    borrowed::metadata_request::MetadataRequest<'_>
);
