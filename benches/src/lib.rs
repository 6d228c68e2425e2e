//! Workloads shared by the codec benchmarks, the allocation counter and the
//! round-trip test.
//!
//! Each [`Workload`] builds its wire bytes once (with `kafka-wire`'s encoder)
//! and says how `kafka-wire` ("ours") and the `kafka-protocol` crate ("the
//! peer") decode and re-encode them, so that both crates work on exactly the
//! same bytes. [`check_roundtrip`] proves that both decode the bytes and
//! re-encode them to identical bytes; [`for_each_workload`] visits them all.
//! The other peers (kacrab-protocol, krabka-protocol) join these workloads in
//! `benches/peers/`, a crate outside the workspace.
//!
//! Each message workload runs at the highest version that ours and every
//! peer share, which its name carries (`metadata_v13_...`). The records of
//! the Fetch and Produce workloads are real, uncompressed v2 record batches
//! ([`record_batch`]) of the size the name gives, so that a codec which
//! parses record batches (krabka-protocol does) parses real ones.
//!
//! Encoding is measured on values as code builds them: ours from
//! [`Workload::built`], whose arrays of structs are `Vec`s, not from a decoded
//! value, whose canonical arrays would be copied.

use std::borrow::Cow;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages as peer;
use kafka_protocol::protocol::{Decodable, Encodable};
use kafka_wire::frame::RequestFrame;
use kafka_wire::messages as ours;
use kafka_wire::runtime::{Message, ScalarArray, Uuid};
use kafka_wire_records::{RecordBatchBuilder, RECORD_BATCH_OVERHEAD};

pub mod counting;
pub mod read;
mod scan;
pub use scan::scan_metadata_response_v13;

/// One benchmark workload: wire bytes, and how each crate decodes and encodes
/// them.
pub trait Workload {
    /// The name printed in reports, such as `metadata_v13_1000x10`.
    const NAME: &'static str;
    /// The version of the message (for the header dispatch, of its body).
    const VERSION: i16;
    /// Our decoded value, borrowing from the wire bytes.
    type Ours<'a>;
    /// The peer's decoded value.
    type Peer;
    /// The value the wire bytes are built from, as code builds a message:
    /// arrays of structs are `Vec`s.
    fn built() -> Self::Ours<'static>;
    /// Builds the wire bytes, without a size prefix.
    fn wire() -> Bytes;
    /// Decodes `wire` with `kafka-wire`.
    fn decode_ours(wire: &[u8]) -> Self::Ours<'_>;
    /// Decodes a clone of `wire` with the peer.
    fn decode_peer(wire: &Bytes) -> Self::Peer;
    /// Encodes with `kafka-wire` into a buffer pre-sized from the computed size.
    fn encode_ours(value: &Self::Ours<'_>) -> Vec<u8>;
    /// Encodes with the peer into a buffer pre-sized from the computed size.
    fn encode_peer(value: &Self::Peer) -> BytesMut;
    /// Reads every field of every element of our decoded value into a
    /// checksum (see [`read`]).
    fn read_ours(value: &Self::Ours<'_>) -> u64;
    /// The same checksum from the peer's decoded value.
    fn read_peer(value: &Self::Peer) -> u64;
}

/// Something done once per workload, generic over the workload's types.
pub trait Visitor {
    /// Called once for each workload, in report order.
    fn visit<W: Workload>(&mut self);
}

/// Calls `visitor` for every workload, in report order.
pub fn for_each_workload<V: Visitor>(visitor: &mut V) {
    visitor.visit::<MetadataV13>();
    visitor.visit::<FetchV18Large>();
    visitor.visit::<FetchV18Small>();
    visitor.visit::<FetchV18Tiny>();
    visitor.visit::<ProduceV13>();
    visitor.visit::<VoteV2PreVote>();
    visitor.visit::<ApiVersionsV4>();
    visitor.visit::<HeaderDispatchMetadataV13>();
}

/// Checks that both crates decode `W`'s wire bytes, read the same values
/// from them, and re-encode them to the same bytes, and returns the wire
/// size. Panics with the workload's name otherwise.
pub fn check_roundtrip<W: Workload>() -> usize {
    let wire = W::wire();
    let built = W::encode_ours(&W::built());
    assert!(
        built == wire[..],
        "{}: the built value encodes to {} bytes, not the {} wire bytes",
        W::NAME,
        built.len(),
        wire.len()
    );
    let read_ours = W::read_ours(&W::decode_ours(&wire));
    let read_peer = W::read_peer(&W::decode_peer(&wire));
    assert_eq!(
        read_ours,
        read_peer,
        "{}: the crates read different values",
        W::NAME
    );
    let ours = W::encode_ours(&W::decode_ours(&wire));
    assert!(
        ours == wire[..],
        "{}: kafka-wire re-encoded {} bytes, differing from the {} wire bytes",
        W::NAME,
        ours.len(),
        wire.len()
    );
    let peer = W::encode_peer(&W::decode_peer(&wire));
    assert!(
        peer[..] == wire[..],
        "{}: kafka-protocol re-encoded {} bytes, differing from the {} wire bytes",
        W::NAME,
        peer.len(),
        wire.len()
    );
    wire.len()
}

/// Encodes a kafka-wire message into a vector of exactly its size (`encode`
/// reserves it).
#[inline]
fn encode_ours_message<'a, M: Message<'a>>(message: &M, version: i16) -> Vec<u8> {
    let mut buf = Vec::new();
    message
        .encode(&mut buf, version)
        .expect("kafka-wire encodes");
    buf
}

/// Encodes a peer message into a `BytesMut` of exactly its computed size.
#[inline]
fn encode_peer_message<M: Encodable>(message: &M, version: i16) -> BytesMut {
    let size = message.compute_size(version).expect("peer computes size");
    let mut buf = BytesMut::with_capacity(size);
    message.encode(&mut buf, version).expect("peer encodes");
    buf
}

/// Encodes a message built with kafka-wire's types into shared bytes.
fn build<'a, M: Message<'a>>(message: &M, version: i16) -> Bytes {
    Bytes::from(message.to_bytes(version).expect("workload encodes"))
}

/// A workload that is one request or response body at one version.
macro_rules! message_workload {
    (
        $(#[$doc:meta])*
        $workload:ident = $name:literal, version $version:literal,
        ours $ours:ty, peer $peer:ty, build $build:expr,
        read ours $read_ours:path, peer $read_peer:path
    ) => {
        $(#[$doc])*
        pub struct $workload;

        impl Workload for $workload {
            const NAME: &'static str = $name;
            const VERSION: i16 = $version;
            type Ours<'a> = $ours;
            type Peer = $peer;

            fn built() -> Self::Ours<'static> {
                $build
            }

            fn wire() -> Bytes {
                build(&Self::built(), $version)
            }

            #[inline]
            fn decode_ours(wire: &[u8]) -> Self::Ours<'_> {
                <Self::Ours<'_>>::decode(wire, $version).expect("kafka-wire decodes")
            }

            #[inline]
            fn decode_peer(wire: &Bytes) -> Self::Peer {
                let mut buf = wire.clone();
                <$peer as Decodable>::decode(&mut buf, $version).expect("peer decodes")
            }

            #[inline]
            fn encode_ours(value: &Self::Ours<'_>) -> Vec<u8> {
                encode_ours_message(value, $version)
            }

            #[inline]
            fn encode_peer(value: &Self::Peer) -> BytesMut {
                encode_peer_message(value, $version)
            }

            #[inline]
            fn read_ours(value: &Self::Ours<'_>) -> u64 {
                $read_ours(value)
            }

            #[inline]
            fn read_peer(value: &Self::Peer) -> u64 {
                $read_peer(value)
            }
        }
    };
}

/// A topic name of 20 characters, as real deployments use.
fn topic_name(index: usize) -> String {
    format!("payments-events-{index:04}")
}

/// A distinct, non-zero topic id.
fn topic_id(index: usize) -> Uuid {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&0x5a17_c0de_0000_0000u64.to_be_bytes());
    bytes[8..].copy_from_slice(&(index as u64 + 1).to_be_bytes());
    Uuid(bytes)
}

/// The largest record of [`record_batch`]'s batches, on the wire, in bytes.
pub const RECORD_SIZE: usize = 1024;

/// An uncompressed v2 record batch of exactly `len` bytes, as a producer
/// writes one: as few records of at most [`RECORD_SIZE`] bytes on the wire as
/// fill it, all of the same size (give or take a byte), each a 16-byte key, a
/// value and no headers. `producer_id` -1 is a batch without a producer (a
/// fetched one is as its producer wrote it, so any id will do).
///
/// Panics if `len` cannot hold one record.
pub fn record_batch(len: usize, base_offset: i64, producer_id: i64) -> Vec<u8> {
    let mut builder = RecordBatchBuilder::new(base_offset).partition_leader_epoch(7);
    if producer_id >= 0 {
        builder = builder
            .producer_id(producer_id)
            .producer_epoch(0)
            .base_sequence(0);
    }
    let records_len = len
        .checked_sub(RECORD_BATCH_OVERHEAD)
        .expect("a batch holds its header");
    let count = records_len.div_ceil(RECORD_SIZE);
    for i in 0..count {
        // Records of equal size, the first ones a byte longer for the rest.
        let size = records_len / count + usize::from(i < records_len % count);
        append_record(&mut builder, i, size);
    }
    let batch = builder.build().expect("batch builds");
    assert_eq!(batch.len(), len);
    batch
}

/// Appends record `i` of exactly `size` bytes on the wire to `builder`: a
/// 16-byte key (15 where varint widths leave a one-byte gap) and a value.
fn append_record(builder: &mut RecordBatchBuilder, i: usize, size: usize) {
    let timestamp = 1_764_547_200_000 + 3 * i as i64;
    let key = format!("key-{i:012}");
    let before = builder.records_size();
    for key_len in [16, 15] {
        // About 25 bytes are lengths, deltas, attributes and the key.
        for value_len in (size.saturating_sub(40)..size.saturating_sub(16)).rev() {
            let value: Vec<u8> = (0..value_len)
                .map(|j| ((i * 7 + j) * 31 % 251) as u8)
                .collect();
            let mut attempt = builder.clone();
            attempt
                .append(
                    timestamp,
                    Some(&key.as_bytes()[..key_len]),
                    Some(&value),
                    &[],
                )
                .expect("record appends");
            if attempt.records_size() - before == size {
                *builder = attempt;
                return;
            }
        }
    }
    panic!("no record of exactly {size} bytes");
}

/// Metadata v13 response: 3 brokers, 1000 topics of 10 partitions each.
fn metadata_response() -> ours::MetadataResponse<'static> {
    use ours::metadata_response::*;
    let brokers = (1..=3)
        .map(|id| MetadataResponseBroker {
            node_id: id,
            host: Cow::Owned(format!("broker-{id}.kafka.internal")),
            port: 9092,
            rack: Some(Cow::Owned(format!("rack-{id}"))),
            ..Default::default()
        })
        .collect();
    let topics = (0..1000)
        .map(|t| MetadataResponseTopic {
            name: Some(Cow::Owned(topic_name(t))),
            topic_id: topic_id(t),
            partitions: (0..10)
                .map(|p| {
                    let first = (t + p) % 3;
                    let replicas: Vec<i32> = (0..3).map(|r| ((first + r) % 3) as i32 + 1).collect();
                    MetadataResponsePartition {
                        partition_index: p as i32,
                        leader_id: replicas[0],
                        leader_epoch: 7,
                        replica_nodes: ScalarArray::from(replicas.clone()),
                        isr_nodes: ScalarArray::from(replicas),
                        ..Default::default()
                    }
                })
                .collect(),
            ..Default::default()
        })
        .collect();
    MetadataResponse {
        brokers,
        cluster_id: Some(Cow::Borrowed("MkU3OEVBNTcwNTJENDM2Qk")),
        controller_id: 1,
        topics,
        ..Default::default()
    }
}

message_workload! {
    /// Metadata v13 response, 1000 topics x 10 partitions.
    MetadataV13 = "metadata_v13_1000x10", version 13,
    ours ours::MetadataResponse<'a>, peer peer::MetadataResponse,
    build metadata_response(),
    read ours read::metadata_ours, peer read::metadata_peer
}

/// Fetch v18 response: 10 topics x `partitions` partitions, each with one
/// record batch of `records_len` bytes.
fn fetch_response(partitions: i32, records_len: usize) -> ours::FetchResponse<'static> {
    use ours::fetch_response::*;
    let records = record_batch(records_len, 1_000_000, 4_242);
    FetchResponse {
        session_id: 1_234_567,
        responses: (0..10)
            .map(|t| FetchableTopicResponse {
                topic_id: topic_id(t),
                partitions: (0..partitions)
                    .map(|p| PartitionData {
                        partition_index: p,
                        high_watermark: 1_000_000 + i64::from(p),
                        last_stable_offset: 1_000_000 + i64::from(p),
                        log_start_offset: 0,
                        records: Some(Cow::Owned(records.clone())),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

message_workload! {
    /// Fetch v18 response, 100 partitions x a 64 KiB record batch.
    FetchV18Large = "fetch_v18_100x64k", version 18,
    ours ours::FetchResponse<'a>, peer peer::FetchResponse,
    build fetch_response(10, 64 * 1024),
    read ours read::fetch_ours, peer read::fetch_peer
}

message_workload! {
    /// Fetch v18 response, 100 partitions x a 1 KiB record batch.
    FetchV18Small = "fetch_v18_100x1k", version 18,
    ours ours::FetchResponse<'a>, peer peer::FetchResponse,
    build fetch_response(10, 1024),
    read ours read::fetch_ours, peer read::fetch_peer
}

message_workload! {
    /// Fetch v18 response, 1000 partitions x a 256-byte record batch.
    FetchV18Tiny = "fetch_v18_1000x256", version 18,
    ours ours::FetchResponse<'a>, peer peer::FetchResponse,
    build fetch_response(100, 256),
    read ours read::fetch_ours, peer read::fetch_peer
}

/// Produce v13 request: 10 topics (by id, as v13 names them) x 10
/// partitions x a 16 KiB record batch.
fn produce_request() -> ours::ProduceRequest<'static> {
    use ours::produce_request::*;
    let records = record_batch(16 * 1024, 0, 4_242);
    ProduceRequest {
        acks: -1,
        timeout_ms: 30_000,
        topic_data: (0..10)
            .map(|t| TopicProduceData {
                topic_id: topic_id(t),
                partition_data: (0..10)
                    .map(|p| PartitionProduceData {
                        index: p,
                        records: Some(Cow::Owned(records.clone())),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

message_workload! {
    /// Produce v13 request, 100 partitions x a 16 KiB record batch.
    ProduceV13 = "produce_v13_100x16k", version 13,
    ours ours::ProduceRequest<'a>, peer peer::ProduceRequest,
    build produce_request(),
    read ours read::produce_ours, peer read::produce_peer
}

/// Vote v2 request with PreVote set, for one partition.
fn vote_request() -> ours::VoteRequest<'static> {
    use ours::vote_request::*;
    VoteRequest {
        cluster_id: Some(Cow::Borrowed("MkU3OEVBNTcwNTJENDM2Qk")),
        voter_id: 1,
        topics: vec![TopicData {
            topic_name: Cow::Borrowed("__cluster_metadata"),
            partitions: vec![PartitionData {
                partition_index: 0,
                replica_epoch: 12,
                replica_id: 2,
                replica_directory_id: topic_id(900),
                voter_directory_id: topic_id(901),
                last_offset_epoch: 11,
                last_offset: 48_213,
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

message_workload! {
    /// Vote v2 request with PreVote, one partition.
    VoteV2PreVote = "vote_v2_prevote", version 2,
    ours ours::VoteRequest<'a>, peer peer::VoteRequest,
    build vote_request(),
    read ours read::vote_ours, peer read::vote_peer
}

/// ApiVersions v4 response: 90 api keys, and the features a KRaft broker
/// reports.
fn api_versions_response() -> ours::ApiVersionsResponse<'static> {
    use ours::api_versions_response::*;
    let features = [
        ("metadata.version", 1, 27),
        ("kraft.version", 0, 1),
        ("group.version", 0, 1),
        ("transaction.version", 0, 2),
    ];
    ApiVersionsResponse {
        api_keys: (0..90)
            .map(|key| ApiVersion {
                api_key: key,
                min_version: key % 3,
                max_version: key % 17 + 3,
                ..Default::default()
            })
            .collect(),
        supported_features: features
            .iter()
            .map(|&(name, min, max)| SupportedFeatureKey {
                name: Cow::Borrowed(name),
                min_version: min,
                max_version: max,
                ..Default::default()
            })
            .collect(),
        finalized_features_epoch: 4_711,
        finalized_features: features
            .iter()
            .map(|&(name, _, max)| FinalizedFeatureKey {
                name: Cow::Borrowed(name),
                max_version_level: max,
                min_version_level: max,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

message_workload! {
    /// ApiVersions v4 response, 90 api keys.
    ApiVersionsV4 = "api_versions_v4_90keys", version 4,
    ours ours::ApiVersionsResponse<'a>, peer peer::ApiVersionsResponse,
    build api_versions_response(),
    read ours read::api_versions_ours, peer read::api_versions_peer
}

/// The api key of Metadata.
const METADATA_KEY: i16 = 3;

/// Request header v2 and a Metadata v13 request for five topics.
fn metadata_request_frame() -> RequestFrame<'static> {
    use ours::metadata_request::*;
    RequestFrame {
        header: ours::RequestHeader {
            request_api_key: METADATA_KEY,
            request_api_version: 13,
            correlation_id: 314_159,
            client_id: Some(Cow::Borrowed("payments-consumer-7")),
            ..Default::default()
        },
        body: kafka_wire::RequestBody::Metadata(MetadataRequest {
            topics: Some(
                (0..5)
                    .map(|t| MetadataRequestTopic {
                        name: Some(Cow::Owned(topic_name(t))),
                        ..Default::default()
                    })
                    .collect(),
            ),
            allow_auto_topic_creation: false,
            ..Default::default()
        }),
    }
}

/// Request header v2 and body dispatch of a Metadata v13 request: ours decodes
/// the frame with [`RequestFrame::decode`]; the peer decodes the header, then
/// the body its api key names.
pub struct HeaderDispatchMetadataV13;

impl Workload for HeaderDispatchMetadataV13 {
    const NAME: &'static str = "header_dispatch_metadata_v13";
    const VERSION: i16 = 13;
    type Ours<'a> = RequestFrame<'a>;
    type Peer = (peer::RequestHeader, peer::MetadataRequest);

    fn built() -> Self::Ours<'static> {
        metadata_request_frame()
    }

    fn wire() -> Bytes {
        let frame = Self::built();
        let mut buf = Vec::new();
        frame.encode(&mut buf).expect("workload encodes");
        Bytes::from(buf)
    }

    #[inline]
    fn decode_ours(wire: &[u8]) -> Self::Ours<'_> {
        RequestFrame::decode(wire).expect("kafka-wire decodes")
    }

    #[inline]
    fn decode_peer(wire: &Bytes) -> Self::Peer {
        let mut buf = wire.clone();
        let header = peer::RequestHeader::decode(&mut buf, 2).expect("peer decodes the header");
        let body = match header.request_api_key {
            METADATA_KEY => peer::MetadataRequest::decode(&mut buf, header.request_api_version)
                .expect("peer decodes the body"),
            key => panic!("unexpected api key {key}"),
        };
        (header, body)
    }

    #[inline]
    fn read_ours(value: &Self::Ours<'_>) -> u64 {
        read::metadata_request_frame_ours(value)
    }

    #[inline]
    fn read_peer(value: &Self::Peer) -> u64 {
        read::metadata_request_frame_peer(value)
    }

    #[inline]
    fn encode_ours(value: &Self::Ours<'_>) -> Vec<u8> {
        let mut buf = Vec::new();
        value.encode(&mut buf).expect("kafka-wire encodes");
        buf
    }

    #[inline]
    fn encode_peer(value: &Self::Peer) -> BytesMut {
        let (header, body) = value;
        let version = header.request_api_version;
        let size = header.compute_size(2).expect("peer computes size")
            + body.compute_size(version).expect("peer computes size");
        let mut buf = BytesMut::with_capacity(size);
        header.encode(&mut buf, 2).expect("peer encodes");
        body.encode(&mut buf, version).expect("peer encodes");
        buf
    }
}
