//! The connection state machine, fed byte by byte and in odd splits.

use std::borrow::Cow;

use super::*;
use kafka_wire::frame::{RequestFrame, ResponseFrame};
use kafka_wire::messages::{
    api_versions_response, metadata_response, produce_request, ApiVersionsRequest,
    ApiVersionsResponse, MetadataRequest, MetadataResponse, ProduceRequest, RequestHeader,
};
use kafka_wire::runtime::DecodeError;
use kafka_wire::IntoOwned;
use kafka_wire::{ApiKey, ErrorCode, RequestBody, ResponseBody};

fn request(api: ApiKey, version: i16, correlation_id: i32, body: RequestBody<'_>) -> Vec<u8> {
    let frame = RequestFrame {
        header: RequestHeader {
            request_api_key: api.key(),
            request_api_version: version,
            correlation_id,
            client_id: Some(Cow::Borrowed("test")),
            ..Default::default()
        },
        body,
    };
    let mut out = Vec::new();
    frame
        .encode_with_size(&mut out)
        .unwrap_or_else(|e| panic!("{e}"));
    out
}

fn response(version: i16, correlation_id: i32, body: ResponseBody<'_>) -> Vec<u8> {
    kafka_wire_test_support::frames::response_bytes(version, correlation_id, body)
}

fn metadata_request(correlation_id: i32) -> Vec<u8> {
    request(
        ApiKey::Metadata,
        12,
        correlation_id,
        MetadataRequest::default().into(),
    )
}

fn metadata_response(correlation_id: i32, port: i32) -> Vec<u8> {
    response(
        12,
        correlation_id,
        MetadataResponse {
            brokers: vec![metadata_response::MetadataResponseBroker {
                node_id: 1,
                host: "broker".into(),
                port,
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }
        .into(),
    )
}

fn api_versions_request(version: i16, correlation_id: i32) -> Vec<u8> {
    request(
        ApiKey::ApiVersions,
        version,
        correlation_id,
        ApiVersionsRequest::default().into(),
    )
}

fn produce(version: i16, correlation_id: i32, acks: i16) -> Vec<u8> {
    request(
        ApiKey::Produce,
        version,
        correlation_id,
        ProduceRequest {
            transactional_id: Some("tx".into()),
            acks,
            timeout_ms: 1000,
            topic_data: vec![produce_request::TopicProduceData {
                name: "orders".into(),
                ..Default::default()
            }]
            .into(),
            ..Default::default()
        }
        .into(),
    )
}

/// The splits every test is run with: one byte at a time, odd sizes, all
/// at once.
const SPLITS: [&[usize]; 4] = [&[1], &[3, 1, 7, 2], &[5, 11, 13], &[usize::MAX]];

fn feed(
    connection: &mut Connection,
    side: Side,
    bytes: &[u8],
    split: &[usize],
    filter: &mut impl Filter,
) -> Result<(), ProxyError> {
    let mut rest = bytes;
    let mut sizes = split.iter().cycle();
    while !rest.is_empty() {
        let size = sizes.next().copied().unwrap_or(1).min(rest.len());
        let (piece, tail) = rest.split_at(size);
        match side {
            Side::Client => connection.feed_client(piece, filter)?,
            Side::Broker => connection.feed_broker(piece, filter)?,
        }
        rest = tail;
    }
    Ok(())
}

/// Records what it saw: per response, its api, version and correlation id.
#[derive(Default)]
struct Recorder {
    requests: Vec<(i16, i16, i32)>,
    responses: Vec<(Option<ApiKey>, i16, i32)>,
    unanswered: Vec<i32>,
}

impl Filter for Recorder {
    fn on_request<'a>(
        &mut self,
        request: &'a ProxiedRequest,
    ) -> Result<RequestAction<'a>, DecodeError> {
        request.decode_body()?;
        self.requests.push((
            request.api_key(),
            request.api_version(),
            request.correlation_id(),
        ));
        Ok(RequestAction::Forward)
    }

    fn on_response<'a>(
        &mut self,
        request: &ProxiedRequest,
        response: &'a ProxiedResponse,
    ) -> Result<ResponseAction<'a>, DecodeError> {
        assert_eq!(request.correlation_id(), response.correlation_id());
        response.decode()?;
        self.responses.push((
            response.api(),
            response.version(),
            response.correlation_id(),
        ));
        Ok(ResponseAction::Forward)
    }

    fn on_unanswered(&mut self, request: &ProxiedRequest) {
        self.unanswered.push(request.correlation_id());
    }
}

#[test]
fn frames_pass_through_untouched_in_any_split() {
    for split in SPLITS {
        let mut connection = Connection::new(Config::default());
        let mut filter = Recorder::default();
        let mut requests = metadata_request(1);
        requests.extend(api_versions_request(3, 2));
        feed(&mut connection, Side::Client, &requests, split, &mut filter).unwrap();
        assert_eq!(connection.take_for_broker().to_vec()[..], requests[..]);
        assert_eq!(connection.in_flight(), 2);
        assert_eq!(filter.requests, [(3, 12, 1), (18, 3, 2)]);

        let mut responses = metadata_response(1, 9092);
        let versions = response(3, 2, ApiVersionsResponse::default().into());
        // ApiVersions answers have header v0: no tag byte after the id.
        assert_eq!(versions[8..10], [0, 0]);
        responses.extend(&versions);
        feed(
            &mut connection,
            Side::Broker,
            &responses,
            split,
            &mut filter,
        )
        .unwrap();
        assert_eq!(connection.take_for_client().to_vec()[..], responses[..]);
        assert_eq!(connection.in_flight(), 0);
        assert_eq!(connection.buffered(), (0, 0));
        assert_eq!(
            filter.responses,
            [
                (Some(ApiKey::Metadata), 12, 1),
                (Some(ApiKey::ApiVersions), 3, 2)
            ]
        );
    }
}

#[test]
fn produce_with_acks_0_gets_no_response() {
    // v3 (int16 transactional id), v9 (compact, flexible header).
    for version in [3, 9] {
        for split in SPLITS {
            let mut connection = Connection::new(Config::default());
            let mut filter = Recorder::default();
            let mut bytes = produce(version, 1, 0);
            bytes.extend(produce(version, 2, 1));
            bytes.extend(produce(version, 3, 0));
            feed(&mut connection, Side::Client, &bytes, split, &mut filter).unwrap();
            assert_eq!(connection.take_for_broker().to_vec()[..], bytes[..]);
            assert_eq!(filter.unanswered, [1, 3], "v{version}");
            assert_eq!(connection.in_flight(), 1, "v{version}");
            // Only the acks=1 request is answered; an answer to 1 is unknown.
            let answer = response(version, 1, ResponseBody::default_for(ApiKey::Produce));
            let error = feed(&mut connection, Side::Broker, &answer, split, &mut filter);
            assert!(matches!(
                error,
                Err(ProxyError::UnknownCorrelationId { correlation_id: 1 })
            ));
        }
    }
}

/// A Produce v3 frame that Kafka's broker accepts and this crate's reader
/// refuses: its client id and transactional id are not UTF-8 (Kafka
/// replaces such bytes), with `acks` and no topics.
fn produce_v3_not_utf8(correlation_id: i32, acks: i16) -> Vec<u8> {
    let mut frame = vec![0, 0, 0, 3];
    frame.extend_from_slice(&correlation_id.to_be_bytes());
    frame.extend_from_slice(&[0x00, 0x02, 0xc3, 0x28]); // client id
    frame.extend_from_slice(&[0x00, 0x01, 0xff]); // transactional id
    frame.extend_from_slice(&acks.to_be_bytes());
    frame.extend_from_slice(&1000i32.to_be_bytes()); // timeout
    frame.extend_from_slice(&0i32.to_be_bytes()); // no topics
    let mut bytes = (frame.len() as i32).to_be_bytes().to_vec();
    bytes.extend(frame);
    bytes
}

#[test]
fn a_request_kafka_accepts_and_leaves_unanswered_is_not_waited_for() {
    for split in SPLITS {
        let mut connection = Connection::new(Config::default());
        let mut filter = PassThrough;
        let mut requests = produce_v3_not_utf8(1, 0);
        assert!(RequestFrame::decode(&requests[4..]).is_err());
        requests.extend(metadata_request(2));
        feed(&mut connection, Side::Client, &requests, split, &mut filter).unwrap();
        assert_eq!(connection.take_for_broker().to_vec()[..], requests[..]);
        // Only the Metadata request awaits an answer, and its answer
        // reaches the client at once: nothing is parked behind the Produce.
        assert_eq!(connection.in_flight(), 1);
        let answer = metadata_response(2, 9092);
        feed(&mut connection, Side::Broker, &answer, split, &mut filter).unwrap();
        assert_eq!(connection.take_for_client().to_vec()[..], answer[..]);
        assert_eq!(connection.in_flight(), 0);
    }
    // With acks = 1 the same bytes are answered, and waited for.
    let mut connection = Connection::new(Config::default());
    let bytes = produce_v3_not_utf8(1, 1);
    feed(
        &mut connection,
        Side::Client,
        &bytes,
        &[usize::MAX],
        &mut PassThrough,
    )
    .unwrap();
    assert_eq!(connection.in_flight(), 1);
}

#[test]
fn held_bytes_count_partial_frames_and_parked_answers() {
    let mut connection = Connection::new(Config::default());
    let mut requests = metadata_request(1);
    requests.extend(metadata_request(2));
    feed(
        &mut connection,
        Side::Client,
        &requests,
        &[usize::MAX],
        &mut PassThrough,
    )
    .unwrap();
    let _ = connection.take_for_broker();
    let headers = connection.held_bytes();
    assert!(headers > 0);
    // The second answer arrives first and is parked; half of the first
    // is a partial frame.
    let second = metadata_response(2, 9092);
    let first = metadata_response(1, 9092);
    feed(
        &mut connection,
        Side::Broker,
        &second,
        &[usize::MAX],
        &mut PassThrough,
    )
    .unwrap();
    let half = &first[..first.len() / 2];
    feed(
        &mut connection,
        Side::Broker,
        half,
        &[usize::MAX],
        &mut PassThrough,
    )
    .unwrap();
    assert!(connection.take_for_client().is_empty());
    assert_eq!(connection.held_bytes(), headers + second.len() + half.len());
    let frames = connection.frames();
    feed(
        &mut connection,
        Side::Broker,
        &first[half.len()..],
        &[usize::MAX],
        &mut PassThrough,
    )
    .unwrap();
    assert_eq!(connection.frames(), frames + 1);
    assert_eq!(
        connection.take_for_client().len(),
        first.len() + second.len()
    );
    assert_eq!(connection.held_bytes(), 0);
}

#[test]
fn interleaved_responses_are_paired_by_correlation_id_and_released_in_order() {
    for split in SPLITS {
        let mut connection = Connection::new(Config::default());
        let mut filter = Recorder::default();
        let mut requests = metadata_request(10);
        requests.extend(api_versions_request(3, 11));
        requests.extend(metadata_request(12));
        feed(&mut connection, Side::Client, &requests, split, &mut filter).unwrap();
        connection.take_for_broker();

        // The broker answers 12, then 11, then 10.
        let third = metadata_response(12, 3);
        let second = response(3, 11, ApiVersionsResponse::default().into());
        let first = metadata_response(10, 1);
        for answer in [&third, &second] {
            feed(&mut connection, Side::Broker, answer, split, &mut filter).unwrap();
            assert!(connection.take_for_client().is_empty());
        }
        feed(&mut connection, Side::Broker, &first, split, &mut filter).unwrap();
        let expected = [first.clone(), second.clone(), third.clone()].concat();
        assert_eq!(connection.take_for_client().to_vec()[..], expected[..]);
        // Each was decoded at its own request's api and version.
        assert_eq!(
            filter.responses,
            [
                (Some(ApiKey::Metadata), 12, 12),
                (Some(ApiKey::ApiVersions), 3, 11),
                (Some(ApiKey::Metadata), 12, 10),
            ]
        );
    }
}

#[test]
fn a_response_to_an_unknown_correlation_id_fails_the_connection() {
    for split in SPLITS {
        let mut connection = Connection::new(Config::default());
        feed(
            &mut connection,
            Side::Client,
            &metadata_request(1),
            split,
            &mut PassThrough,
        )
        .unwrap();
        let error = feed(
            &mut connection,
            Side::Broker,
            &metadata_response(99, 1),
            split,
            &mut PassThrough,
        )
        .unwrap_err();
        assert!(matches!(
            error,
            ProxyError::UnknownCorrelationId { correlation_id: 99 }
        ));
        assert!(error.to_string().contains("correlation id 99"));
        assert!(connection.is_failed());
        assert!(matches!(
            connection.feed_client(&[0], &mut PassThrough),
            Err(ProxyError::Closed)
        ));
        // Answered twice: the second answer has no request left.
        let mut connection = Connection::new(Config::default());
        feed(
            &mut connection,
            Side::Client,
            &metadata_request(1),
            split,
            &mut PassThrough,
        )
        .unwrap();
        let twice = [metadata_response(1, 1), metadata_response(1, 1)].concat();
        assert!(matches!(
            feed(
                &mut connection,
                Side::Broker,
                &twice,
                split,
                &mut PassThrough
            ),
            Err(ProxyError::UnknownCorrelationId { correlation_id: 1 })
        ));
    }
}

#[test]
fn an_unsupported_api_versions_version_is_answered_at_v0() {
    // The broker knows ApiVersions up to v3 and is asked v4: it answers
    // with a v0 body carrying UNSUPPORTED_VERSION and the versions it has.
    let fallback = ApiVersionsResponse {
        error_code: ErrorCode::UnsupportedVersion.code(),
        api_keys: vec![api_versions_response::ApiVersion {
            api_key: ApiKey::ApiVersions.key(),
            min_version: 0,
            max_version: 3,
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    };
    let answer = response(0, 5, fallback.clone().into());
    // Decoded as the answer to a v4 request, the body is read at v0.
    let decoded = ResponseFrame::decode(&answer[4..], ApiKey::ApiVersions, 4);
    assert_eq!(
        decoded.map(|frame| frame.body).ok(),
        Some(ResponseBody::ApiVersions(fallback.clone()))
    );
    for split in SPLITS {
        let mut connection = Connection::new(Config::default());
        let mut filter = Recorder::default();
        let ask = api_versions_request(4, 5);
        feed(&mut connection, Side::Client, &ask, split, &mut filter).unwrap();
        feed(&mut connection, Side::Broker, &answer, split, &mut filter).unwrap();
        assert_eq!(filter.responses, [(Some(ApiKey::ApiVersions), 0, 5)]);
        assert_eq!(connection.take_for_client().to_vec()[..], answer[..]);
    }
    // Decoded by a filter, the body is the v0 one.
    struct Check(Option<ApiVersionsResponse<'static>>);
    impl Filter for Check {
        fn on_response<'a>(
            &mut self,
            _: &ProxiedRequest,
            response: &'a ProxiedResponse,
        ) -> Result<ResponseAction<'a>, DecodeError> {
            if let ResponseBody::ApiVersions(body) = response.decode_body()? {
                self.0 = Some(body.into_owned());
            }
            Ok(ResponseAction::Forward)
        }
    }
    let mut connection = Connection::new(Config::default());
    let mut check = Check(None);
    connection
        .feed_client(&api_versions_request(4, 5), &mut check)
        .unwrap();
    connection.feed_broker(&answer, &mut check).unwrap();
    assert_eq!(check.0, Some(fallback));
}

#[test]
fn a_broken_frame_fails_that_connection_only() {
    for split in SPLITS {
        // A negative size from the client.
        let mut broken = Connection::new(Config::default());
        let mut healthy = Connection::new(Config::default());
        let error = feed(
            &mut broken,
            Side::Client,
            b"\xff\xff\xff\xfe\x00",
            split,
            &mut PassThrough,
        )
        .unwrap_err();
        assert!(matches!(
            error,
            ProxyError::NegativeSize {
                side: Side::Client,
                size: -2
            }
        ));
        let ok = metadata_request(1);
        feed(&mut healthy, Side::Client, &ok, split, &mut PassThrough).unwrap();
        assert_eq!(healthy.take_for_broker().to_vec()[..], ok[..]);

        // A frame above the maximum fails on its size prefix, before its
        // bytes arrive.
        let mut small = Connection::new(Config {
            max_frame_size: 64,
            ..Config::default()
        });
        feed(
            &mut small,
            Side::Client,
            &metadata_request(1),
            split,
            &mut PassThrough,
        )
        .unwrap();
        let error = feed(
            &mut small,
            Side::Broker,
            &[0, 0, 0, 65],
            split,
            &mut PassThrough,
        );
        assert!(matches!(
            error,
            Err(ProxyError::FrameTooLarge {
                side: Side::Broker,
                size: 65,
                max: 64
            })
        ));

        // A header cut short: a request frame of three bytes.
        let mut short = Connection::new(Config::default());
        let error = feed(
            &mut short,
            Side::Client,
            b"\x00\x00\x00\x03\x00\x03\x00",
            split,
            &mut PassThrough,
        );
        assert!(matches!(
            error,
            Err(ProxyError::BadHeader {
                side: Side::Client,
                ..
            })
        ));
        // A client id whose length runs past the frame.
        let mut bad = metadata_request(1);
        bad[13] = 0x7f;
        let mut cut = Connection::new(Config::default());
        let error = feed(&mut cut, Side::Client, &bad, split, &mut PassThrough);
        assert!(matches!(error, Err(ProxyError::BadHeader { .. })));
        assert!(cut.take_for_broker().is_empty());
    }
}

#[test]
fn requests_in_flight_are_bounded() {
    let mut connection = Connection::new(Config {
        max_in_flight: 2,
        ..Config::default()
    });
    connection
        .feed_client(&metadata_request(1), &mut PassThrough)
        .unwrap();
    connection
        .feed_client(&metadata_request(2), &mut PassThrough)
        .unwrap();
    // acks=0 requests are not in flight.
    connection
        .feed_client(&produce(9, 3, 0), &mut PassThrough)
        .unwrap();
    assert!(matches!(
        connection.feed_client(&metadata_request(4), &mut PassThrough),
        Err(ProxyError::TooManyInFlight { max: 2 })
    ));
}

/// Answers ApiVersions itself and rewrites the brokers of Metadata answers.
struct Rewriter;

impl Filter for Rewriter {
    fn on_request<'a>(
        &mut self,
        request: &'a ProxiedRequest,
    ) -> Result<RequestAction<'a>, DecodeError> {
        Ok(match request.api() {
            Some(ApiKey::ApiVersions) => RequestAction::Respond(
                ApiVersionsResponse {
                    throttle_time_ms: 42,
                    ..Default::default()
                }
                .into(),
            ),
            _ => RequestAction::Forward,
        })
    }

    fn on_response<'a>(
        &mut self,
        _: &ProxiedRequest,
        response: &'a ProxiedResponse,
    ) -> Result<ResponseAction<'a>, DecodeError> {
        let ResponseBody::Metadata(mut body) = response.decode_body()? else {
            return Ok(ResponseAction::Forward);
        };
        for broker in body.brokers.to_mut() {
            broker.port = 19092;
        }
        Ok(ResponseAction::Replace(Box::new(body.into())))
    }
}

#[test]
fn filters_rewrite_responses_and_answer_requests_in_order() {
    for split in SPLITS {
        let mut connection = Connection::new(Config::default());
        let mut requests = metadata_request(1);
        requests.extend(api_versions_request(3, 2));
        feed(
            &mut connection,
            Side::Client,
            &requests,
            split,
            &mut Rewriter,
        )
        .unwrap();
        // Only the Metadata request reaches the broker.
        assert_eq!(
            connection.take_for_broker().to_vec()[..],
            metadata_request(1)[..]
        );
        // The direct answer waits for the answer to the earlier request.
        assert!(connection.take_for_client().is_empty());
        feed(
            &mut connection,
            Side::Broker,
            &metadata_response(1, 9092),
            split,
            &mut Rewriter,
        )
        .unwrap();
        let expected = [
            metadata_response(1, 19092),
            response(
                3,
                2,
                ApiVersionsResponse {
                    throttle_time_ms: 42,
                    ..Default::default()
                }
                .into(),
            ),
        ]
        .concat();
        assert_eq!(connection.take_for_client().to_vec()[..], expected[..]);
        assert_eq!(connection.in_flight(), 0);
    }
}

#[test]
fn large_frames_pass_by_reference_and_keep_their_order() {
    let large = |correlation_id| {
        request(
            ApiKey::Produce,
            9,
            correlation_id,
            ProduceRequest {
                acks: 1,
                topic_data: vec![produce_request::TopicProduceData {
                    name: "orders".into(),
                    partition_data: vec![produce_request::PartitionProduceData {
                        index: 0,
                        records: Some(vec![7u8; 40_000].into()),
                        ..Default::default()
                    }]
                    .into(),
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }
            .into(),
        )
    };
    for split in [&[4093usize][..], &[1, 70_000], &[usize::MAX]] {
        let mut connection = Connection::new(Config::default());
        let stream = [metadata_request(1), large(2), metadata_request(3), large(4)].concat();
        feed(
            &mut connection,
            Side::Client,
            &stream,
            split,
            &mut PassThrough,
        )
        .unwrap();
        let out = connection.take_for_broker();
        assert_eq!(out.len(), stream.len());
        assert_eq!(out.to_vec(), stream);
        let chunks = out.into_chunks();
        // The large bodies are chunks of their own, not copies.
        assert!(chunks.iter().filter(|c| c.len() > 40_000).count() == 2);
        assert_eq!(
            chunks
                .iter()
                .flat_map(|c| c.iter().copied())
                .collect::<Vec<u8>>(),
            stream
        );
    }
}

// ---------------------------------------------------------------------------
// SASL's legacy form: bare tokens after a SaslHandshake v0.

/// A bare token exchange as a filter saw it: mechanism, round, client id,
/// client token size, client token (when kept), broker token.
type TokenSeen = (String, u32, Option<String>, usize, Option<Vec<u8>>, Vec<u8>);

/// Records the requests and responses it saw, and the bare token exchanges.
#[derive(Default)]
struct SaslRecorder {
    inner: Recorder,
    tokens: Vec<TokenSeen>,
}

impl Filter for SaslRecorder {
    fn on_request<'a>(
        &mut self,
        request: &'a ProxiedRequest,
    ) -> Result<RequestAction<'a>, DecodeError> {
        self.inner.on_request(request)
    }

    fn on_response<'a>(
        &mut self,
        request: &ProxiedRequest,
        response: &'a ProxiedResponse,
    ) -> Result<ResponseAction<'a>, DecodeError> {
        self.inner.on_response(request, response)
    }

    fn on_sasl_token(&mut self, token: &SaslToken<'_>) {
        self.tokens.push((
            token.mechanism.to_owned(),
            token.round,
            token.client_id.map(str::to_owned),
            token.client_token_len,
            token.client_token.map(<[u8]>::to_vec),
            token.broker_token.to_vec(),
        ));
    }
}

fn sasl_handshake(version: i16, correlation_id: i32, mechanism: &str) -> Vec<u8> {
    request(
        ApiKey::SaslHandshake,
        version,
        correlation_id,
        kafka_wire::messages::SaslHandshakeRequest {
            mechanism: mechanism.to_owned().into(),
        }
        .into(),
    )
}

fn sasl_handshake_response(correlation_id: i32, error_code: i16) -> Vec<u8> {
    response(
        0,
        correlation_id,
        kafka_wire::messages::SaslHandshakeResponse {
            error_code,
            mechanisms: vec!["PLAIN".into(), "SCRAM-SHA-256".into()],
        }
        .into(),
    )
}

/// A bare frame: the size prefix and the bytes, no Kafka header.
fn bare(bytes: &[u8]) -> Vec<u8> {
    let mut out = (bytes.len() as i32).to_be_bytes().to_vec();
    out.extend_from_slice(bytes);
    out
}

/// Feeds `bytes` from `side` and checks that they came out on the other
/// side untouched.
fn relay(
    connection: &mut Connection,
    side: Side,
    bytes: &[u8],
    split: &[usize],
    filter: &mut impl Filter,
) {
    feed(connection, side, bytes, split, filter).unwrap_or_else(|e| panic!("{e}"));
    let out = match side {
        Side::Client => connection.take_for_broker(),
        Side::Broker => connection.take_for_client(),
    };
    assert_eq!(
        out.to_vec(),
        bytes,
        "{side} bytes were not relayed untouched"
    );
}

// A PLAIN token: what a header parse would read as api key 0 (Produce),
// version 0x6131 and so on; the broker's answer is an empty bare frame, too
// short for any response header.
const PLAIN_TOKEN: &[u8] = b"\0alice\0alice-secret";

#[test]
fn legacy_plain_tokens_travel_bare_then_requests_resume() {
    for split in SPLITS {
        for keep in [false, true] {
            let mut connection = Connection::new(Config {
                keep_request_bodies: keep,
                ..Config::default()
            });
            let mut filter = SaslRecorder::default();
            relay(
                &mut connection,
                Side::Client,
                &sasl_handshake(0, 1, "PLAIN"),
                split,
                &mut filter,
            );
            assert_eq!(connection.legacy_sasl_mechanism(), Some("PLAIN"));
            relay(
                &mut connection,
                Side::Broker,
                &sasl_handshake_response(1, 0),
                split,
                &mut filter,
            );
            relay(
                &mut connection,
                Side::Client,
                &bare(PLAIN_TOKEN),
                split,
                &mut filter,
            );
            assert_eq!(connection.in_flight(), 1);
            relay(
                &mut connection,
                Side::Broker,
                &bare(b""),
                split,
                &mut filter,
            );
            assert_eq!(connection.in_flight(), 0);
            assert_eq!(connection.legacy_sasl_mechanism(), None);
            assert_eq!(
                filter.tokens,
                [(
                    "PLAIN".to_owned(),
                    1,
                    Some("test".to_owned()),
                    PLAIN_TOKEN.len(),
                    keep.then(|| PLAIN_TOKEN.to_vec()),
                    Vec::new()
                )]
            );
            // Kafka requests again, headers read and paired.
            relay(
                &mut connection,
                Side::Client,
                &metadata_request(2),
                split,
                &mut filter,
            );
            relay(
                &mut connection,
                Side::Broker,
                &metadata_response(2, 9092),
                split,
                &mut filter,
            );
            assert_eq!(filter.inner.requests, [(17, 0, 1), (3, 12, 2)]);
            assert_eq!(
                filter.inner.responses,
                [
                    (Some(ApiKey::SaslHandshake), 0, 1),
                    (Some(ApiKey::Metadata), 12, 2)
                ]
            );
            assert!(!connection.is_opaque());
        }
    }
}

#[test]
fn legacy_scram_takes_two_rounds_and_a_pipelined_token_is_still_bare() {
    for split in SPLITS {
        let mut connection = Connection::new(Config::default());
        let mut filter = SaslRecorder::default();
        let first = b"n,,n=alice,r=clientnonce";
        let server_first = b"r=clientnonceservernonce,s=c2FsdA==,i=4096";
        let last = b"c=biws,r=clientnonceservernonce,p=proof";
        let server_last = b"v=verifier";
        // The client-first token leaves before the handshake is answered.
        let mut out = sasl_handshake(0, 5, "SCRAM-SHA-256");
        out.extend(bare(first));
        relay(&mut connection, Side::Client, &out, split, &mut filter);
        assert_eq!(connection.in_flight(), 2);
        let mut answers = sasl_handshake_response(5, 0);
        answers.extend(bare(server_first));
        relay(&mut connection, Side::Broker, &answers, split, &mut filter);
        assert_eq!(connection.legacy_sasl_mechanism(), Some("SCRAM-SHA-256"));
        relay(
            &mut connection,
            Side::Client,
            &bare(last),
            split,
            &mut filter,
        );
        // A request pipelined behind the last token is a request.
        relay(
            &mut connection,
            Side::Client,
            &metadata_request(6),
            split,
            &mut filter,
        );
        let mut answers = bare(server_last);
        answers.extend(metadata_response(6, 9092));
        relay(&mut connection, Side::Broker, &answers, split, &mut filter);
        assert_eq!(connection.in_flight(), 0);
        assert_eq!(connection.legacy_sasl_mechanism(), None);
        let rounds: Vec<_> = filter
            .tokens
            .iter()
            .map(|t| (t.0.as_str(), t.1, t.3, t.5.clone()))
            .collect();
        assert_eq!(
            rounds,
            [
                ("SCRAM-SHA-256", 1, first.len(), server_first.to_vec()),
                ("SCRAM-SHA-256", 2, last.len(), server_last.to_vec())
            ]
        );
        assert_eq!(filter.inner.requests, [(17, 0, 5), (3, 12, 6)]);
    }
}

#[test]
fn legacy_oauthbearer_takes_a_second_round_after_an_error_answer() {
    let mut connection = Connection::new(Config::default());
    let mut filter = SaslRecorder::default();
    relay(
        &mut connection,
        Side::Client,
        &sasl_handshake(0, 1, "OAUTHBEARER"),
        &[usize::MAX],
        &mut filter,
    );
    relay(
        &mut connection,
        Side::Broker,
        &sasl_handshake_response(1, 0),
        &[usize::MAX],
        &mut filter,
    );
    relay(
        &mut connection,
        Side::Client,
        &bare(b"n,,\x01auth=Bearer x\x01\x01"),
        &[usize::MAX],
        &mut filter,
    );
    relay(
        &mut connection,
        Side::Broker,
        &bare(br#"{"status":"invalid_token"}"#),
        &[usize::MAX],
        &mut filter,
    );
    assert_eq!(connection.legacy_sasl_mechanism(), Some("OAUTHBEARER"));
    relay(
        &mut connection,
        Side::Client,
        &bare(b"\x01"),
        &[usize::MAX],
        &mut filter,
    );
    assert_eq!(filter.tokens.len(), 1);
    assert_eq!(connection.in_flight(), 1);
}

#[test]
fn a_refused_legacy_handshake_is_followed_by_requests() {
    let mut connection = Connection::new(Config::default());
    let mut filter = SaslRecorder::default();
    relay(
        &mut connection,
        Side::Client,
        &sasl_handshake(0, 1, "PLAIN"),
        &[usize::MAX],
        &mut filter,
    );
    let unsupported_mechanism = ErrorCode::UnsupportedSaslMechanism.code();
    relay(
        &mut connection,
        Side::Broker,
        &sasl_handshake_response(1, unsupported_mechanism),
        &[usize::MAX],
        &mut filter,
    );
    assert_eq!(connection.legacy_sasl_mechanism(), None);
    relay(
        &mut connection,
        Side::Client,
        &metadata_request(2),
        &[usize::MAX],
        &mut filter,
    );
    assert_eq!(filter.inner.requests, [(17, 0, 1), (3, 12, 2)]);
    assert!(filter.tokens.is_empty());
}

#[test]
fn a_handshake_v1_keeps_kafka_headers() {
    let mut connection = Connection::new(Config::default());
    let mut filter = SaslRecorder::default();
    relay(
        &mut connection,
        Side::Client,
        &sasl_handshake(1, 1, "PLAIN"),
        &[usize::MAX],
        &mut filter,
    );
    assert_eq!(connection.legacy_sasl_mechanism(), None);
    let authenticate = request(
        ApiKey::SaslAuthenticate,
        2,
        2,
        kafka_wire::messages::SaslAuthenticateRequest {
            auth_bytes: PLAIN_TOKEN.into(),
            ..Default::default()
        }
        .into(),
    );
    relay(
        &mut connection,
        Side::Client,
        &authenticate,
        &[usize::MAX],
        &mut filter,
    );
    assert_eq!(filter.inner.requests, [(17, 1, 1), (36, 2, 2)]);
}

#[test]
fn an_unknown_legacy_mechanism_makes_the_connection_opaque() {
    for split in SPLITS {
        let mut connection = Connection::new(Config::default());
        let mut filter = SaslRecorder::default();
        relay(
            &mut connection,
            Side::Client,
            &sasl_handshake(0, 1, "GSSAPI"),
            split,
            &mut filter,
        );
        assert!(connection.is_opaque());
        // Kerberos tokens of any count, then requests the proxy no longer reads.
        relay(
            &mut connection,
            Side::Client,
            &bare(b"\x60\x82kerberos"),
            split,
            &mut filter,
        );
        let mut answers = sasl_handshake_response(1, 0);
        answers.extend(bare(b"\x60\x81reply"));
        answers.extend(bare(b""));
        relay(&mut connection, Side::Broker, &answers, split, &mut filter);
        relay(
            &mut connection,
            Side::Client,
            &metadata_request(2),
            split,
            &mut filter,
        );
        relay(
            &mut connection,
            Side::Broker,
            &metadata_response(2, 9092),
            split,
            &mut filter,
        );
        assert_eq!(filter.inner.requests, [(17, 0, 1)]);
        assert_eq!(
            filter.inner.responses,
            [(Some(ApiKey::SaslHandshake), 0, 1)]
        );
        assert!(filter.tokens.is_empty());
        assert_eq!(connection.in_flight(), 0);
    }
}

/// librdkafka 2.16's Metadata v13 with three bytes after its body: the
/// strict read refuses it, the lenient one reads it as Kafka does.
#[test]
fn a_request_body_read_as_kafka_reads_it() {
    let frame = kafka_wire_test_support::wire::librdkafka_metadata_with_trailing_bytes();
    let request =
        ProxiedRequest::parse(bytes::Bytes::from(frame)).unwrap_or_else(|e| panic!("{e}"));
    assert!(request.decode_body().is_err());
    let lenient = request
        .decode_body_lenient()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lenient.trailing_bytes, 3);
    let RequestBody::Metadata(metadata) = lenient.value else {
        panic!("{:?}", lenient.value)
    };
    assert_eq!(metadata.topics, None);
}
