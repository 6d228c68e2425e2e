//! Request and response bodies that more than one suite sends, each the
//! same in all of them, so that what a suite expects of one (the exact JSON of a capture's
//! lines, say) is about the same bytes everywhere.

use kafka_wire::messages::{
    produce_request, vote_request, ApiVersionsResponse, ProduceRequest, VoteRequest,
};
use kafka_wire_records::{Compression, RecordBatchBuilder};

/// A record batch of one uncompressed record: key `k`, value `hello`, at
/// timestamp 1,700,000,000,000 and base offset 0.
pub fn one_record_batch() -> Vec<u8> {
    let mut builder = RecordBatchBuilder::new(0).compression(Compression::None);
    builder
        .append(1_700_000_000_000, Some(b"k"), Some(b"hello"), &[])
        .expect("a record");
    builder.build().expect("a batch")
}

/// A Produce with `acks` and a timeout of one second, sending
/// [`one_record_batch`] to partition 0 of the topic `orders`.
pub fn produce_one_record(acks: i16) -> ProduceRequest<'static> {
    ProduceRequest {
        acks,
        timeout_ms: 1000,
        topic_data: vec![produce_request::TopicProduceData {
            name: "orders".into(),
            partition_data: vec![produce_request::PartitionProduceData {
                index: 0,
                records: Some(one_record_batch().into()),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    }
}

/// A Vote for partition 0 of `__cluster_metadata` from replica 1 at epoch
/// 5, with `preVote` set (a field of Vote v2 and later).
pub fn pre_vote() -> VoteRequest<'static> {
    VoteRequest {
        topics: vec![vote_request::TopicData {
            topic_name: "__cluster_metadata".into(),
            partitions: vec![vote_request::PartitionData {
                replica_epoch: 5,
                replica_id: 1,
                pre_vote: true,
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    }
}

/// A broker's answer to an ApiVersions request at a version it does not
/// support: `UNSUPPORTED_VERSION` (35) and no apis, which it writes at v0
/// whatever the request's version (the fallback a client then retries
/// from).
pub fn api_versions_refused() -> ApiVersionsResponse<'static> {
    ApiVersionsResponse {
        error_code: 35,
        ..Default::default()
    }
}
