//! Uses kafka-wire from outside its workspace, as a client or broker author
//! would: decodes a MetadataResponse, turns it into an owned value, moves it
//! to another thread, names a request's response type through
//! `kafka_wire::Request`, and reads an error code; then runs the broker loop
//! and client round trip of `docs/library.md` over 127.0.0.1. Exits non-zero (by panicking)
//! if any of it does not hold.

mod wire;

use kafka_wire::messages::{metadata_response, MetadataRequest, MetadataResponse};
use kafka_wire::runtime::Message;
use kafka_wire::{ApiKey, ErrorCode, IntoOwned, Request, ResponseBody};

/// The response type of a Metadata request, named through the trait.
type MetadataAnswer = <MetadataRequest<'static> as Request>::Response;

fn main() {
    let sent = MetadataResponse {
        brokers: vec![metadata_response::MetadataResponseBroker {
            node_id: 1,
            host: "broker-1".into(),
            port: 9092,
            ..Default::default()
        }]
        .into(),
        topics: vec![metadata_response::MetadataResponseTopic {
            error_code: 3,
            name: Some("orders".into()),
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    let bytes = sent.to_bytes(12).expect("encodes");

    // Decode from a buffer that is about to go away, and keep an owned copy.
    let buffer = bytes.clone();
    let body = ResponseBody::decode(&buffer, <MetadataRequest as Request>::API_KEY, 12)
        .expect("decodes");
    let response: MetadataAnswer = match MetadataResponse::try_from(body.into_owned()) {
        Ok(response) => response,
        Err(other) => panic!("expected a Metadata response, got {:?}", other.api_key()),
    };
    drop(buffer);

    // The owned value is 'static and Send: hand it to another thread.
    let worker = std::thread::spawn(move || {
        let topic = response.topics.get(0).expect("one topic").into_owned();
        (ErrorCode::from_code(topic.error_code), response)
    });
    let (code, response) = worker.join().expect("the worker finishes");
    assert_eq!(code, ErrorCode::UnknownTopicOrPartition);
    assert!(code.is_retriable());
    assert_eq!(code.name(), "UNKNOWN_TOPIC_OR_PARTITION");
    assert_eq!(response, sent);
    assert_eq!(<MetadataRequest as Request>::API_KEY, ApiKey::Metadata);
    println!("downstream: decoded, owned, moved to a thread; error {code}");

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binds on loopback");
    let address = listener.local_addr().expect("has an address");
    let broker = std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accepts");
        wire::serve(stream).expect("serves")
    });
    let mut client = std::net::TcpStream::connect(address).expect("connects");
    let metadata = wire::fetch_metadata(&mut client).expect("round trip");
    drop(client);
    broker.join().expect("the broker loop ends when the client leaves");
    let topic = metadata.topics.get(0).expect("one topic");
    let error = ErrorCode::from_code(topic.error_code);
    assert_eq!(error.into_result(), Err(ErrorCode::UnknownTopicOrPartition));
    assert_eq!(metadata.brokers.len(), 1);
    println!("downstream: broker loop and client round trip over 127.0.0.1");
}
