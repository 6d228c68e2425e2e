//! The public API a broker or client author meets: owned values, requests
//! linked to their responses, conversions into the body enums, frames whose
//! header disagrees with their body, and error codes.
#![cfg(all(feature = "metadata", feature = "produce", feature = "vote"))]

use std::borrow::Cow;

use kafka_wire::frame::{RequestFrame, ResponseFrame};
use kafka_wire::messages::{
    metadata_request, metadata_response, MetadataRequest, MetadataResponse, RequestHeader,
    ResponseHeader, VoteRequest, VoteResponse,
};
use kafka_wire::runtime::{EncodeErrorKind, Message};
use kafka_wire::{ApiKey, ErrorCode, IntoOwned, Request, RequestBody, ResponseBody};

fn assert_owned<T: Send + Sync + 'static>(_: &T) {}

fn metadata_response() -> MetadataResponse<'static> {
    MetadataResponse {
        brokers: vec![metadata_response::MetadataResponseBroker {
            node_id: 1,
            host: "broker-1".into(),
            port: 9092,
            ..Default::default()
        }]
        .into(),
        topics: vec![
            metadata_response::MetadataResponseTopic {
                error_code: ErrorCode::UnknownTopicOrPartition.code(),
                name: Some("orders".into()),
                partitions: (0..3)
                    .map(|i| metadata_response::MetadataResponsePartition {
                        partition_index: i,
                        replica_nodes: vec![1, 2, 3].into(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            },
            metadata_response::MetadataResponseTopic {
                name: Some("payments".into()),
                ..Default::default()
            },
        ]
        .into(),
        ..Default::default()
    }
}

/// Reading a decoded message hands out references that live as long as the
/// message, indexes without decoding what comes before, and re-encodes an
/// unchanged array by copying its bytes while a changed one is re-encoded.
#[test]
fn decoded_arrays_are_read_by_reference_and_copied_on_encode() {
    let bytes = metadata_response().to_bytes(12).expect("encodes");
    let decoded = MetadataResponse::decode(&bytes, 12).expect("decodes");
    let mut names: Vec<&str> = Vec::new();
    for topic in decoded.topics.as_slice().expect("decoded into a Vec") {
        names.extend(topic.name.as_deref());
    }
    assert_eq!(names, ["orders", "payments"]);
    let topic = decoded.topics.get(0).expect("a topic");
    assert!(matches!(topic, Cow::Borrowed(_)), "get borrows");
    let partitions = &decoded.topics.as_slice().expect("a Vec")[0].partitions;
    assert_eq!(partitions.get(2).map(|p| p.partition_index), Some(2));
    assert!(decoded.topics.encodes_by_copy(12));

    // A proxy changes the brokers only: the topics are still copied.
    let mut rewritten = decoded.clone();
    rewritten.brokers.to_mut()[0].port = 19092;
    assert!(!rewritten.brokers.encodes_by_copy(12));
    assert!(rewritten.topics.encodes_by_copy(12));
    let again = MetadataResponse::decode(&rewritten.to_bytes(12).expect("encodes"), 12)
        .expect("decodes")
        .into_owned();
    assert_eq!(again.brokers.get(0).map(|b| b.port), Some(19092));
    assert_eq!(again.topics, decoded.topics);
}

#[test]
fn a_decoded_response_becomes_owned_and_moves_to_another_thread() {
    let expected = metadata_response();
    let bytes = expected.to_bytes(12).expect("encodes");
    let owned = {
        let input = bytes.clone();
        let decoded = MetadataResponse::decode(&input, 12).expect("decodes");
        assert!(decoded.topics.wire().is_some(), "arrays borrow the input");
        let owned: MetadataResponse<'static> = decoded.into_owned();
        drop(input);
        owned
    };
    assert_owned(&owned);
    assert!(owned.topics.wire().is_none(), "arrays are owned now");
    let topic = owned.topics.get(0).expect("a topic");
    assert!(
        matches!(topic.name, Some(Cow::Owned(_))),
        "strings are copied"
    );
    let from_thread = std::thread::spawn(move || owned).join().expect("joins");
    assert_eq!(from_thread, expected);
    assert_eq!(from_thread.to_bytes(12).expect("encodes"), bytes);
}

#[test]
fn owned_bodies_and_frames_keep_every_field() {
    let header = RequestHeader {
        request_api_key: ApiKey::Metadata.key(),
        request_api_version: 12,
        correlation_id: 7,
        client_id: Some("client".into()),
        ..Default::default()
    };
    let frame = RequestFrame {
        header,
        body: MetadataRequest {
            topics: Some(
                vec![metadata_request::MetadataRequestTopic {
                    name: Some("orders".into()),
                    ..Default::default()
                }]
                .into(),
            ),
            ..Default::default()
        }
        .into(),
    };
    let mut bytes = Vec::new();
    frame.encode(&mut bytes).expect("encodes");
    let owned = RequestFrame::decode(&bytes.clone())
        .expect("decodes")
        .into_owned();
    assert_owned(&owned);
    assert_eq!(owned, frame);

    let response = ResponseFrame {
        header: ResponseHeader {
            correlation_id: 7,
            ..Default::default()
        },
        body: metadata_response().into(),
        version: 12,
    };
    let mut bytes = Vec::new();
    response.encode(&mut bytes).expect("encodes");
    let owned = ResponseFrame::decode(&bytes.clone(), ApiKey::Metadata, 12)
        .expect("decodes")
        .into_owned();
    assert_owned(&owned);
    assert_eq!(owned, response);
    let body: ResponseBody<'static> = IntoOwned::into_owned(owned.body);
    assert_owned(&body);
}

/// What a typed client call looks like: the response type comes from the
/// request type, and the body enum converts back without `unreachable!`.
fn call<'a, R>(request: R, answer: &'a [u8], version: i16) -> R::Response
where
    R: Request + Into<RequestBody<'a>>,
    R::Response: TryFrom<ResponseBody<'a>>,
{
    let body: RequestBody<'a> = request.into();
    assert_eq!(body.api_key(), R::API_KEY);
    let response = ResponseBody::decode(answer, R::API_KEY, version).expect("decodes");
    match R::Response::try_from(response) {
        Ok(typed) => typed,
        Err(_) => panic!("a response to {:?} decodes as its own type", R::API_KEY),
    }
}

#[test]
fn a_request_type_names_its_response_type_and_api_key() {
    let response: <MetadataRequest<'static> as Request>::Response = metadata_response();
    let bytes = response.to_bytes(12).expect("encodes");
    let typed: MetadataResponse<'_> = call(MetadataRequest::default(), &bytes, 12);
    assert_eq!(typed, response);
    assert_eq!(<MetadataRequest<'_> as Request>::API_KEY, ApiKey::Metadata);
    assert_eq!(<VoteRequest<'_> as Request>::API_KEY, ApiKey::Vote);
    let _: fn(<VoteRequest<'static> as Request>::Response) -> VoteResponse<'static> = |r| r;
}

#[test]
fn a_body_of_another_api_is_given_back_by_try_from() {
    let body = ResponseBody::from(VoteResponse::default());
    let back = MetadataResponse::try_from(body).expect_err("not a Metadata response");
    assert_eq!(back.api_key(), ApiKey::Vote);
    assert!(VoteResponse::try_from(back).is_ok());
}

#[test]
fn a_request_frame_whose_header_names_another_api_is_not_encoded() {
    let frame = RequestFrame {
        header: RequestHeader {
            request_api_key: ApiKey::Produce.key(),
            request_api_version: 12,
            ..Default::default()
        },
        body: MetadataRequest::default().into(),
    };
    for result in [
        frame.encode(&mut Vec::new()),
        frame.encode_with_size(&mut Vec::new()),
    ] {
        let error = result.expect_err("the header's api key is not the body's");
        assert_eq!(
            *error.kind(),
            EncodeErrorKind::ApiKeyMismatch {
                header: 0,
                body: ApiKey::Metadata.key()
            }
        );
    }
    let mut written = Vec::new();
    let _ = frame.encode_with_size(&mut written);
    assert!(written.is_empty(), "nothing is written");
}

#[test]
fn error_codes_carry_kafkas_facts() {
    let code = ErrorCode::from_code(3);
    assert_eq!(code, ErrorCode::UnknownTopicOrPartition);
    assert!(code.is_retriable());
    assert_eq!(code.code(), 3);
    assert_eq!(code.name(), "UNKNOWN_TOPIC_OR_PARTITION");
    assert_eq!(code.to_string(), "UNKNOWN_TOPIC_OR_PARTITION (3)");
    assert!(!code.description().is_empty());
    assert_eq!(code.into_result(), Err(code));

    assert_eq!(ErrorCode::from_code(0), ErrorCode::None);
    assert_eq!(ErrorCode::None.into_result(), Ok(()));
    assert_eq!(ErrorCode::from_code(-1), ErrorCode::UnknownServerError);
    assert!(!ErrorCode::from_code(-1).is_retriable());
    assert_eq!(ErrorCode::from(87).name(), "INVALID_RECORD");

    let unknown = ErrorCode::from_code(9999);
    assert_eq!(unknown, ErrorCode::Unknown(9999));
    assert_eq!(unknown.code(), 9999, "an unknown code is kept as sent");
    assert_eq!(i16::from(unknown), 9999);
    assert!(!unknown.is_retriable());
    assert_eq!(unknown.to_string(), "UNKNOWN (9999)");
}

#[test]
fn every_code_round_trips_through_its_number() {
    for code in -1..=200i16 {
        assert_eq!(ErrorCode::from_code(code).code(), code);
    }
}

#[cfg(kafka_metadata)]
#[test]
fn a_decoded_metadata_record_becomes_owned() {
    use kafka_wire::messages::TopicRecord;
    use kafka_wire::MetadataRecord;

    let record = TopicRecord {
        name: "orders".into(),
        ..Default::default()
    };
    let bytes = record.to_bytes(0).expect("encodes");
    let owned = {
        let input = bytes.clone();
        let decoded = MetadataRecord::decode(&input, TopicRecord::API_KEY, 0).expect("decodes");
        decoded.into_owned()
    };
    assert_owned(&owned);
    assert_eq!(owned, MetadataRecord::from(record));
}
