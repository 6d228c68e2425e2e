//! The custom message encodes, decodes and converts to JSON like any other.

use kafka_codegen_example::messages::pre_vote_request::{PartitionData, TopicData};
use kafka_codegen_example::PreVoteRequest;
use kafka_wire::runtime::{JsonForm, Message};

fn request(pre_vote: bool) -> PreVoteRequest<'static> {
    PreVoteRequest {
        cluster_id: Some("cluster".into()),
        topics: vec![TopicData {
            topic_name: "__cluster_metadata".into(),
            partitions: vec![PartitionData {
                partition_index: 0,
                candidate_epoch: 7,
                candidate_id: 3,
                last_offset_epoch: 6,
                last_offset: 1234,
                pre_vote,
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    }
}

#[test]
fn custom_message_round_trips() {
    for pre_vote in [true, false] {
        let message = request(pre_vote);
        let bytes = message.to_bytes(0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            bytes.len(),
            kafka_wire::runtime::Encode::encoded_len(&message, 0)
        );
        let decoded = PreVoteRequest::decode(&bytes, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(decoded, message);
        let json = decoded.to_json(0);
        assert_eq!(json["topics"][0]["partitions"][0]["preVote"], pre_vote);
        let from_json = PreVoteRequest::from_json(&json, 0).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(from_json, message);
        // The flag is the last byte of the partition, before its tagged-field count.
        let flag_at = bytes.len() - 4;
        assert_eq!(bytes[flag_at], u8::from(pre_vote));
    }
    assert_eq!(PreVoteRequest::API_KEY, 1052);
}
