//! Arrays of structs after decoding: iteration, re-encoding at the same and
//! at another version, changing them, and where errors point.
#![cfg(feature = "vote")]

use std::borrow::Cow;

use kafka_wire::messages::{vote_request, VoteRequest};
use kafka_wire::runtime::{DecodeErrorKind, Encode, Message};

fn partition(index: i32, pre_vote: bool) -> vote_request::PartitionData<'static> {
    vote_request::PartitionData {
        partition_index: index,
        replica_epoch: 5,
        replica_id: 1,
        last_offset: 100 + i64::from(index),
        pre_vote,
        ..Default::default()
    }
}

fn request(pre_vote: bool) -> VoteRequest<'static> {
    VoteRequest {
        cluster_id: Some(Cow::Borrowed("cluster")),
        topics: vec![vote_request::TopicData {
            topic_name: "__cluster_metadata".into(),
            partitions: (0..3).map(|i| partition(i, pre_vote)).collect(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    }
}

/// Where the first partition's PreVote byte sits in `request(true)` at v2:
/// right after its LastOffset, 100 as an int64.
fn pre_vote_offset(bytes: &[u8]) -> usize {
    let last_offset = 100i64.to_be_bytes();
    bytes
        .windows(8)
        .position(|w| w == last_offset)
        .expect("the first LastOffset")
        + 8
}

#[test]
fn decoded_arrays_iterate_index_and_compare_like_built_ones() {
    let built = request(true);
    let bytes = built.to_bytes(2).expect("encodes");
    let decoded = VoteRequest::decode(&bytes, 2).expect("decodes");
    assert_eq!(decoded, built);
    let topic = decoded.topics.get(0).expect("one topic");
    assert_eq!(topic.partitions.len(), 3);
    let indexes: Vec<i32> = topic.partitions.iter().map(|p| p.partition_index).collect();
    assert_eq!(indexes, [0, 1, 2]);
    assert_eq!(topic.partitions.get(2).map(|p| p.last_offset), Some(102));
    assert!(topic.partitions.get(3).is_none());
    let owned: Vec<_> = topic.into_owned().partitions.into_iter().collect();
    assert_eq!(
        owned,
        (0..3).map(|i| partition(i, true)).collect::<Vec<_>>()
    );
}

#[test]
fn re_encoding_at_another_version_encodes_each_element() {
    // Version 1 has no PreVote: decode at 1, encode at 2, and PreVote is false.
    let v1 = request(false).to_bytes(1).expect("encodes at 1");
    let decoded = VoteRequest::decode(&v1, 1).expect("decodes at 1");
    assert_eq!(
        decoded.to_bytes(2).expect("encodes at 2"),
        request(false).to_bytes(2).expect("encodes at 2")
    );
    assert_eq!(decoded.encoded_len(2), request(false).encoded_len(2));
}

#[test]
fn re_encoding_canonical_bytes_at_the_same_version_copies_them() {
    let bytes = request(true).to_bytes(2).expect("encodes");
    let decoded = VoteRequest::decode(&bytes, 2).expect("decodes");
    assert!(decoded.topics.encodes_by_copy(2));
    assert!(!decoded.topics.encodes_by_copy(1));
    assert_eq!(decoded.to_bytes(2).expect("re-encodes"), bytes);

    // Changing the array decodes it first; it is then written element by
    // element.
    let mut changed = decoded.clone();
    let topics = changed.topics.to_mut();
    topics[0].partitions.to_mut()[1].last_offset = 7;
    assert!(!changed.topics.encodes_by_copy(2));
    let mut expected = request(true);
    expected.topics.to_mut()[0].partitions.to_mut()[1].last_offset = 7;
    assert_eq!(changed, expected);
    assert_eq!(changed.to_bytes(2).ok(), expected.to_bytes(2).ok());
}

#[test]
fn equal_values_encode_alike_whatever_form_the_input_took() {
    let canonical = request(true).to_bytes(2).expect("encodes");
    let at = pre_vote_offset(&canonical);
    assert_eq!(canonical[at], 1);

    // Kafka reads any non-zero byte as true; encoding writes 1.
    let mut bool_byte = canonical.clone();
    bool_byte[at] = 2;
    // A redundant continuation byte in the partition count (3 + 1 = 4).
    let count_at = at - 8 - 4 - 16 - 16 - 4 - 4 - 4 - 1;
    assert_eq!(canonical[count_at], 4);
    let mut long_varint = canonical.clone();
    long_varint.splice(count_at..=count_at, [0x84, 0x00]);

    for input in [&bool_byte, &long_varint] {
        let decoded = VoteRequest::decode(input, 2).expect("decodes");
        assert_eq!(decoded, request(true));
        assert!(!decoded.topics.encodes_by_copy(2));
        assert_eq!(decoded.to_bytes(2).expect("re-encodes"), canonical);
        assert_eq!(decoded.encoded_len(2), canonical.len());
    }
}

#[test]
fn a_fault_in_a_nested_element_is_reported_by_decode_and_validate() {
    let bytes = request(true).to_bytes(2).expect("encodes");
    // Cut inside the last partition.
    let cut = &bytes[..bytes.len() - 4];
    let error = VoteRequest::decode(cut, 2).expect_err("truncated");
    assert!(
        matches!(error.kind(), DecodeErrorKind::Truncated { .. }),
        "{error}"
    );
    let path = error.path().to_string();
    assert!(path.contains("topics[0].partitions[2]"), "{path}");
    assert_eq!(VoteRequest::validate(cut, 2), Err(error));
    assert_eq!(VoteRequest::validate(&bytes, 2), Ok(()));
}
