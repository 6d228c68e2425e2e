//! What the fake's own tests share: record batches, the Produce, Fetch and
//! Metadata requests they send and the partitions of the answers, clusters
//! with one topic, and a typed exchange through `probe`.

// Each test file uses a part.
#![allow(dead_code)]

use kafka_wire::messages::*;
use kafka_wire::{RequestBody, ResponseBody};
use kafka_wire_fake::probe::{Probe, ProbeError};
use kafka_wire_fake::{FakeCluster, TopicSpec};
use kafka_wire_records::RecordBatchBuilder;

/// A producer's id, epoch and first sequence number.
pub type Producer = (i64, i16, i32);

/// A batch of one record per value (timestamp 1000, no key), from
/// `producer` when given.
pub fn batch(producer: Option<Producer>, values: &[&[u8]]) -> Vec<u8> {
    build(producer, false, values)
}

/// A transactional batch of one record per value from `producer`.
pub fn transactional_batch(producer: Producer, values: &[&[u8]]) -> Vec<u8> {
    build(Some(producer), true, values)
}

fn build(producer: Option<Producer>, transactional: bool, values: &[&[u8]]) -> Vec<u8> {
    let mut b = RecordBatchBuilder::new(0).transactional(transactional);
    if let Some((id, epoch, sequence)) = producer {
        b = b
            .producer_id(id)
            .producer_epoch(epoch)
            .base_sequence(sequence);
    }
    for v in values {
        assert!(b.append(1_000, None, Some(v), &[]).is_ok());
    }
    b.build().unwrap_or_default()
}

/// A Produce (acks -1, timeout 1 s) to `topic` of each (partition,
/// records).
pub fn produce(
    topic: &str,
    records: impl IntoIterator<Item = (i32, Vec<u8>)>,
) -> ProduceRequest<'static> {
    ProduceRequest {
        acks: -1,
        timeout_ms: 1000,
        topic_data: vec![produce_request::TopicProduceData {
            name: topic.to_owned().into(),
            partition_data: records
                .into_iter()
                .map(|(index, records)| produce_request::PartitionProduceData {
                    index,
                    records: Some(records.into()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    }
}

/// Every partition of a Produce answer, in order.
pub fn produced(
    response: ProduceResponse<'static>,
) -> Vec<produce_response::PartitionProduceResponse<'static>> {
    let topics = response.responses.into_vec();
    topics
        .into_iter()
        .flat_map(|t| t.partition_responses.into_vec())
        .collect()
}

/// Partition `partition` of a Fetch from `offset`, up to 1 MiB.
pub fn from(partition: i32, offset: i64) -> fetch_request::FetchPartition<'static> {
    fetch_request::FetchPartition {
        partition,
        fetch_offset: offset,
        partition_max_bytes: 1 << 20,
        ..Default::default()
    }
}

/// A Fetch without a session of `partition` of `topic`, by a consumer, up
/// to 1 MiB, without waiting.
pub fn fetch(
    topic: &str,
    partition: fetch_request::FetchPartition<'static>,
) -> FetchRequest<'static> {
    FetchRequest {
        replica_id: -1,
        max_bytes: 1 << 20,
        session_epoch: -1,
        topics: vec![fetch_request::FetchTopic {
            topic: topic.to_owned().into(),
            partitions: vec![partition].into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    }
}

/// Every partition of a Fetch answer, in order.
pub fn fetched(response: FetchResponse<'static>) -> Vec<fetch_response::PartitionData<'static>> {
    let topics = response.responses.into_vec();
    topics
        .into_iter()
        .flat_map(|t| t.partitions.into_vec())
        .collect()
}

/// Metadata of `topic`.
pub fn metadata(topic: &str) -> MetadataRequest<'static> {
    MetadataRequest {
        topics: Some(
            vec![metadata_request::MetadataRequestTopic {
                name: Some(topic.to_owned().into()),
                ..Default::default()
            }]
            .into(),
        ),
        ..Default::default()
    }
}

/// A cluster of `brokers` brokers with `topic` of `partitions` partitions.
pub async fn cluster(brokers: usize, topic: &str, partitions: i32) -> FakeCluster {
    FakeCluster::builder()
        .brokers(brokers)
        .topic(TopicSpec::new(topic, partitions))
        .start()
        .await
        .expect("start")
}

/// A probe connected to broker `node`.
pub async fn connect(cluster: &FakeCluster, node: i32) -> Probe {
    let address = cluster.broker_address(node).expect("a broker");
    Probe::connect(&address).await.expect("connect")
}

/// `request` at `version`: its answer, or the probe's error.
pub async fn try_call<Q>(
    probe: &mut Probe,
    request: Q,
    version: i16,
) -> Result<Q::Response, ProbeError>
where
    Q: Request + Into<RequestBody<'static>>,
    Q::Response: TryFrom<ResponseBody<'static>, Error = ResponseBody<'static>>,
{
    let body = probe.request(request.into(), version).await?;
    Ok(Q::Response::try_from(body).unwrap_or_else(|other| panic!("another answer: {other:?}")))
}

/// `request` at `version`: its answer, which must come.
pub async fn call<Q>(probe: &mut Probe, request: Q, version: i16) -> Q::Response
where
    Q: Request + Into<RequestBody<'static>>,
    Q::Response: TryFrom<ResponseBody<'static>, Error = ResponseBody<'static>>,
{
    try_call(probe, request, version)
        .await
        .unwrap_or_else(|e| panic!("no answer: {e:?}"))
}
