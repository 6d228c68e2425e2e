//! Hostile inputs: every one must give a typed error (never a panic), at the
//! right byte offset and field path, while the heap stays bounded.
//!
//! A tracking global allocator counts the bytes each thread has allocated;
//! every decode below runs inside [`measure`], which asserts that the peak
//! heap during the decode stays below `4 * n + 64 KiB` for an input of `n`
//! bytes. Record batches have a suite of their own, in kafka-wire-records.

use kafka_wire::frame::{peek_request, RequestFrame};
use kafka_wire::messages::{api_versions_response, ApiVersionsResponse, RequestHeader};
use kafka_wire::runtime::{DecodeError, DecodeErrorKind, Encode, Message};
use kafka_wire::{ApiKey, RequestBody, ResponseBody};
use kafka_wire_test_support::heap::{measure, peak_during, Tracking};
use kafka_wire_test_support::wire::Wire;

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

// ---------------------------------------------------------------------------
// Decoding helpers.

/// Decodes a request body, measuring the heap.
fn request(api: ApiKey, version: i16, input: &[u8]) -> Result<RequestBody<'_>, DecodeError> {
    measure(input.len(), 0, "request", || {
        RequestBody::decode(input, api, version)
    })
}

/// Decodes a response body, measuring the heap.
fn response(api: ApiKey, version: i16, input: &[u8]) -> Result<ResponseBody<'_>, DecodeError> {
    measure(input.len(), 0, "response", || {
        ResponseBody::decode(input, api, version)
    })
}

/// Asserts that `result` failed with `kind` at `offset` in field `path`.
#[track_caller]
fn assert_error<T: std::fmt::Debug>(
    result: Result<T, DecodeError>,
    kind: DecodeErrorKind,
    offset: usize,
    path: &str,
) {
    let error = result.expect_err("hostile input decoded");
    assert_eq!(error.kind(), &kind, "{error}");
    assert_eq!(error.offset(), offset, "{error}");
    assert_eq!(error.path().to_string(), path, "{error}");
}

/// A request body that must fail.
#[track_caller]
fn request_error(
    api: ApiKey,
    version: i16,
    input: &[u8],
    kind: DecodeErrorKind,
    offset: usize,
    path: &str,
) {
    assert_error(request(api, version, input), kind, offset, path);
}

/// A response body that must fail.
#[track_caller]
fn response_error(
    api: ApiKey,
    version: i16,
    input: &[u8],
    kind: DecodeErrorKind,
    offset: usize,
    path: &str,
) {
    assert_error(response(api, version, input), kind, offset, path);
}

fn exceeds(length: u64, remaining: usize) -> DecodeErrorKind {
    DecodeErrorKind::LengthExceedsInput { length, remaining }
}

/// The largest length a compact prefix claims as Kafka reads it: uvarint
/// 0x80000000, whose 32-bit int minus one is 0x7FFFFFFF (a larger uvarint
/// is negative as an int: null, see
/// `compact_lengths_negative_as_an_int_are_null`).
const MAX_UVARINT: [u8; 5] = [0x80, 0x80, 0x80, 0x80, 0x08];
const MAX_COMPACT_LEN: u64 = 0x7fff_ffff;

// ---------------------------------------------------------------------------
// Lengths claiming 0x7FFFFFFF or the largest varint.

#[test]
fn metadata_request_huge_lengths() {
    // v0: topics count 0x7FFFFFFF.
    let input = Wire::new().i32(i32::MAX).i32(0).bytes();
    request_error(
        ApiKey::Metadata,
        0,
        &input,
        exceeds(0x7fff_ffff, 4),
        4,
        "MetadataRequest.topics",
    );
    // v12: compact topics count 0x7FFFFFFF.
    let input = Wire::new().raw(&MAX_UVARINT).raw(&[1, 0, 0]).bytes();
    request_error(
        ApiKey::Metadata,
        12,
        &input,
        exceeds(MAX_COMPACT_LEN, 3),
        5,
        "MetadataRequest.topics",
    );
    // v1: a topic name claiming 0x7FFF bytes.
    let input = Wire::new().i32(1).i16(i16::MAX).raw(b"ab").bytes();
    request_error(
        ApiKey::Metadata,
        1,
        &input,
        exceeds(0x7fff, 2),
        6,
        "MetadataRequest.topics[0].name",
    );
    // v9: a compact topic name claiming 0x7FFFFFFF bytes.
    let input = Wire::new().uvarint(2).raw(&MAX_UVARINT).raw(b"ab").bytes();
    request_error(
        ApiKey::Metadata,
        9,
        &input,
        DecodeErrorKind::StringTooLong(MAX_COMPACT_LEN as usize),
        6,
        "MetadataRequest.topics[0].name",
    );
}

#[test]
fn metadata_response_huge_lengths() {
    // v0: brokers count 0x7FFFFFFF.
    let input = Wire::new().i32(i32::MAX).i64(0).bytes();
    response_error(
        ApiKey::Metadata,
        0,
        &input,
        exceeds(0x7fff_ffff, 8),
        4,
        "MetadataResponse.brokers",
    );
    // v12: throttle time, then compact brokers count 0x7FFFFFFF.
    let input = Wire::new().i32(0).raw(&MAX_UVARINT).i64(0).bytes();
    response_error(
        ApiKey::Metadata,
        12,
        &input,
        exceeds(MAX_COMPACT_LEN, 8),
        9,
        "MetadataResponse.brokers",
    );
    // v12: a broker whose compact host claims 0x7FFFFFFF bytes.
    let input = Wire::new()
        .i32(0)
        .uvarint(2)
        .i32(1)
        .raw(&MAX_UVARINT)
        .i64(0)
        .bytes();
    response_error(
        ApiKey::Metadata,
        12,
        &input,
        DecodeErrorKind::StringTooLong(MAX_COMPACT_LEN as usize),
        14,
        "MetadataResponse.brokers[0].host",
    );
    // v0: no brokers, one topic with one partition whose replica list
    // claims 0x7FFFFFFF int32s.
    let prefix = Wire::new()
        .i32(0) // brokers
        .i32(1) // topics
        .i16(0) // error_code
        .string("t")
        .i32(1) // partitions
        .i16(0) // error_code
        .i32(0) // partition_index
        .i32(0); // leader_id
    let offset = prefix.len() + 4;
    let input = prefix.i32(i32::MAX).i64(0).bytes();
    response_error(
        ApiKey::Metadata,
        0,
        &input,
        exceeds(0x7fff_ffff, 8),
        offset,
        "MetadataResponse.topics[0].partitions[0].replica_nodes",
    );
}

/// FetchRequest v4 up to its topics: replica_id, max_wait_ms, min_bytes,
/// max_bytes, isolation_level.
fn fetch_request_v4_head() -> Wire {
    Wire::new().i32(-1).i32(500).i32(1).i32(1 << 20).i8(0)
}

/// FetchRequest v12 up to its topics: v4's fields, session id and epoch.
fn fetch_request_v12_head() -> Wire {
    fetch_request_v4_head().i32(0).i32(-1)
}

#[test]
fn fetch_request_huge_lengths() {
    let input = fetch_request_v4_head().i32(i32::MAX).i32(0).bytes();
    request_error(
        ApiKey::Fetch,
        4,
        &input,
        exceeds(0x7fff_ffff, 4),
        21,
        "FetchRequest.topics",
    );
    let input = fetch_request_v12_head()
        .raw(&MAX_UVARINT)
        .raw(&[1, 1, 0])
        .bytes();
    request_error(
        ApiKey::Fetch,
        12,
        &input,
        exceeds(MAX_COMPACT_LEN, 3),
        30,
        "FetchRequest.topics",
    );
    // v4: one topic whose name claims 0x7FFF bytes.
    let input = fetch_request_v4_head().i32(1).i16(i16::MAX).i32(0).bytes();
    request_error(
        ApiKey::Fetch,
        4,
        &input,
        exceeds(0x7fff, 4),
        23,
        "FetchRequest.topics[0].topic",
    );
}

/// FetchResponse v4 up to the aborted transactions of its only partition.
fn fetch_response_v4_partition() -> Wire {
    Wire::new()
        .i32(0) // throttle_time_ms
        .i32(1) // responses
        .string("t")
        .i32(1) // partitions
        .i32(0) // partition_index
        .i16(0) // error_code
        .i64(10) // high_watermark
        .i64(10) // last_stable_offset
}

#[test]
fn fetch_response_huge_lengths() {
    let input = Wire::new().i32(0).i32(i32::MAX).i32(0).bytes();
    response_error(
        ApiKey::Fetch,
        4,
        &input,
        exceeds(0x7fff_ffff, 4),
        8,
        "FetchResponse.responses",
    );
    // Aborted transactions claiming 0x7FFFFFFF entries.
    let head = fetch_response_v4_partition();
    let offset = head.len() + 4;
    let input = head.i32(i32::MAX).i64(0).bytes();
    response_error(
        ApiKey::Fetch,
        4,
        &input,
        exceeds(0x7fff_ffff, 8),
        offset,
        "FetchResponse.responses[0].partitions[0].aborted_transactions",
    );
    // Records claiming 0x7FFFFFFF bytes.
    let head = fetch_response_v4_partition().i32(-1);
    let offset = head.len() + 4;
    let input = head.i32(i32::MAX).raw(&[0; 16]).bytes();
    response_error(
        ApiKey::Fetch,
        4,
        &input,
        exceeds(0x7fff_ffff, 16),
        offset,
        "FetchResponse.responses[0].partitions[0].records",
    );
    // v12: compact records claiming 0x7FFFFFFF bytes.
    let head = Wire::new()
        .i32(0) // throttle_time_ms
        .i16(0) // error_code
        .i32(0) // session_id
        .uvarint(2) // responses
        .compact_string("t")
        .uvarint(2) // partitions
        .i32(0) // partition_index
        .i16(0) // error_code
        .i64(10) // high_watermark
        .i64(10) // last_stable_offset
        .i64(0) // log_start_offset
        .uvarint(0) // aborted_transactions: null
        .i32(-1); // preferred_read_replica
    let offset = head.len() + 5;
    let input = head.raw(&MAX_UVARINT).raw(&[0; 16]).bytes();
    response_error(
        ApiKey::Fetch,
        12,
        &input,
        exceeds(MAX_COMPACT_LEN, 16),
        offset,
        "FetchResponse.responses[0].partitions[0].records",
    );
}

/// ProduceRequest v3 up to the records of its only partition.
fn produce_request_v3_partition() -> Wire {
    Wire::new()
        .i16(-1) // transactional_id: null
        .i16(1) // acks
        .i32(30_000) // timeout_ms
        .i32(1) // topic_data
        .string("t")
        .i32(1) // partition_data
        .i32(0) // index
}

#[test]
fn produce_huge_lengths() {
    let input = Wire::new()
        .i16(-1)
        .i16(1)
        .i32(0)
        .i32(i32::MAX)
        .i32(0)
        .bytes();
    request_error(
        ApiKey::Produce,
        3,
        &input,
        exceeds(0x7fff_ffff, 4),
        12,
        "ProduceRequest.topic_data",
    );
    let head = produce_request_v3_partition();
    let offset = head.len() + 4;
    let input = head.i32(i32::MAX).raw(&[0; 61]).bytes();
    request_error(
        ApiKey::Produce,
        3,
        &input,
        exceeds(0x7fff_ffff, 61),
        offset,
        "ProduceRequest.topic_data[0].partition_data[0].records",
    );
    // v9: compact records claiming 0x7FFFFFFF bytes.
    let head = Wire::new()
        .uvarint(0) // transactional_id: null
        .i16(1)
        .i32(30_000)
        .uvarint(2) // topic_data
        .compact_string("t")
        .uvarint(2) // partition_data
        .i32(0); // index
    let offset = head.len() + 5;
    let input = head.raw(&MAX_UVARINT).raw(&[0; 8]).bytes();
    request_error(
        ApiKey::Produce,
        9,
        &input,
        exceeds(MAX_COMPACT_LEN, 8),
        offset,
        "ProduceRequest.topic_data[0].partition_data[0].records",
    );
    // ProduceResponse v3: responses claiming 0x7FFFFFFF entries.
    let input = Wire::new().i32(i32::MAX).i64(0).bytes();
    response_error(
        ApiKey::Produce,
        3,
        &input,
        exceeds(0x7fff_ffff, 8),
        4,
        "ProduceResponse.responses",
    );
}

// ---------------------------------------------------------------------------
// Over-long varints, negative lengths, invalid UTF-8, trailing bytes.

#[test]
fn over_long_varints() {
    // Six bytes for a compact array length.
    let input = [0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 1, 0, 0];
    request_error(
        ApiKey::Metadata,
        9,
        &input,
        DecodeErrorKind::VarintTooLong,
        0,
        "MetadataRequest.topics",
    );
    // Five bytes whose last group overflows 32 bits.
    let input = [0xff, 0xff, 0xff, 0xff, 0x1f, 1, 0, 0];
    request_error(
        ApiKey::Metadata,
        9,
        &input,
        DecodeErrorKind::VarintTooLong,
        0,
        "MetadataRequest.topics",
    );
    // The tagged-field count of a flexible message.
    let input = [1, 1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
    request_error(
        ApiKey::Metadata,
        9,
        &input,
        DecodeErrorKind::VarintTooLong,
        4,
        "MetadataRequest",
    );
    // A tag number.
    let input = [1, 1, 0, 0, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0];
    request_error(
        ApiKey::Metadata,
        9,
        &input,
        DecodeErrorKind::VarintTooLong,
        5,
        "MetadataRequest",
    );
}

#[test]
fn negative_lengths_are_null_as_kafka_reads_them() {
    // Array count -2 (v1, where topics is nullable): null, as Kafka reads
    // it, and written back as -1.
    let input = Wire::new().i32(-2).bytes();
    let decoded = request(ApiKey::Metadata, 1, &input).unwrap_or_else(|e| panic!("{e}"));
    let mut again = Vec::new();
    decoded
        .encode(&mut again, 1)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again, Wire::new().i32(-1).bytes());
    // -1 is null there too.
    let input = Wire::new().i32(-1).bytes();
    assert!(request(ApiKey::Metadata, 1, &input).is_ok());
    // ...but not in v0, where topics is not nullable: any negative count
    // is a null Kafka refuses.
    for count in [-1, -2, i32::MIN] {
        let input = Wire::new().i32(count).bytes();
        request_error(
            ApiKey::Metadata,
            0,
            &input,
            DecodeErrorKind::UnexpectedNull,
            0,
            "MetadataRequest.topics",
        );
    }
    // String length -2 and -1, for a non-nullable string.
    for len in [-2, -1] {
        let input = Wire::new().i32(1).i16(len).bytes();
        request_error(
            ApiKey::Metadata,
            1,
            &input,
            DecodeErrorKind::UnexpectedNull,
            4,
            "MetadataRequest.topics[0].name",
        );
    }
    // Records length -5: null records.
    let head = produce_request_v3_partition();
    let input = head.i32(-5).bytes();
    let decoded = request(ApiKey::Produce, 3, &input).unwrap_or_else(|e| panic!("{e}"));
    let RequestBody::Produce(produce) = decoded else {
        panic!("not a Produce body");
    };
    let partition = produce.topic_data.iter().next().and_then(|t| {
        t.into_owned()
            .partition_data
            .iter()
            .next()
            .map(|p| p.into_owned())
    });
    assert_eq!(partition.map(|p| p.records.is_none()), Some(true));
    // int32 array length i32::MIN, not nullable.
    let input = Wire::new().i32(i32::MIN).bytes();
    response_error(
        ApiKey::Metadata,
        0,
        &input,
        DecodeErrorKind::UnexpectedNull,
        0,
        "MetadataResponse.brokers",
    );
}

#[test]
fn compact_lengths_negative_as_an_int_are_null() {
    // Kafka reads a compact length as `uvarint - 1` in a 32-bit int: from
    // 0x80000001 up that is negative, so null, as a negative classic length
    // is; written back as the canonical null, 0.
    for stored in [u32::MAX, 0x8000_0001, 0xc000_0000] {
        let input = Wire::new().uvarint(stored).raw(&[1, 0, 0, 0]).bytes();
        let decoded = request(ApiKey::Metadata, 9, &input).unwrap_or_else(|e| panic!("{e}"));
        let mut again = Vec::new();
        decoded
            .encode(&mut again, 9)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(again, [0, 1, 0, 0, 0], "uvarint {stored:#x}");
    }
    // Where the field is not nullable (a v9 topic's name), it is a null
    // Kafka refuses too.
    let input = Wire::new()
        .uvarint(2)
        .uvarint(u32::MAX)
        .raw(&[0, 1, 0, 0, 0])
        .bytes();
    request_error(
        ApiKey::Metadata,
        9,
        &input,
        DecodeErrorKind::UnexpectedNull,
        1,
        "MetadataRequest.topics[0].name",
    );
    // 0x80000000 is a length of i32::MAX, past the input.
    let input = Wire::new().uvarint(0x8000_0000).raw(&[1, 0, 0, 0]).bytes();
    request_error(
        ApiKey::Metadata,
        9,
        &input,
        exceeds(0x7fff_ffff, 4),
        5,
        "MetadataRequest.topics",
    );
}

#[test]
fn invalid_utf8_in_a_string() {
    let input = Wire::new().i32(1).i16(2).raw(&[0xc3, 0x28]).bytes();
    request_error(
        ApiKey::Metadata,
        1,
        &input,
        DecodeErrorKind::InvalidUtf8 { valid_up_to: 0 },
        6,
        "MetadataRequest.topics[0].name",
    );
    // Valid prefix, then a lone continuation byte (compact string).
    let input = Wire::new()
        .uvarint(2)
        .uvarint(5)
        .raw(b"ab\x80c")
        .raw(&[0, 1, 0, 0])
        .bytes();
    request_error(
        ApiKey::Metadata,
        9,
        &input,
        DecodeErrorKind::InvalidUtf8 { valid_up_to: 2 },
        4,
        "MetadataRequest.topics[0].name",
    );
}

#[test]
fn trailing_bytes() {
    let input = Wire::new().i32(0).i8(0).bytes();
    request_error(
        ApiKey::Metadata,
        0,
        &input,
        DecodeErrorKind::TrailingBytes(1),
        4,
        "MetadataRequest",
    );
    let input = Wire::new().i32(0).i32(0).raw(&[1, 2, 3]).bytes();
    response_error(
        ApiKey::Metadata,
        0,
        &input,
        DecodeErrorKind::TrailingBytes(3),
        8,
        "MetadataResponse",
    );
}

#[test]
fn unsupported_versions() {
    let input = Wire::new().i32(0).bytes();
    let highest = ApiKey::Metadata.highest_version();
    request_error(
        ApiKey::Metadata,
        highest + 1,
        &input,
        DecodeErrorKind::UnsupportedVersion {
            version: highest + 1,
            lowest: 0,
            highest,
        },
        0,
        "MetadataRequest",
    );
}

// ---------------------------------------------------------------------------
// Request frames.

#[test]
fn one_byte_and_short_request_headers() {
    let frame = [0u8];
    let error = measure(1, 0, "frame", || RequestFrame::decode(&frame));
    assert_error(
        error,
        DecodeErrorKind::Truncated {
            needed: 2,
            remaining: 1,
        },
        0,
        "RequestHeader.request_api_key",
    );
    assert_error(
        RequestFrame::decode(&[]),
        DecodeErrorKind::Truncated {
            needed: 2,
            remaining: 0,
        },
        0,
        "RequestHeader.request_api_key",
    );
    assert_error(
        peek_request(&[0, 3, 0, 1, 0, 0]),
        DecodeErrorKind::Truncated {
            needed: 4,
            remaining: 2,
        },
        4,
        "correlation_id",
    );
    // Unknown api key.
    assert_error(
        RequestFrame::decode(&[0x7f, 0x7f, 0, 0, 0, 0, 0, 0]),
        DecodeErrorKind::UnknownApiKey(0x7f7f),
        0,
        "RequestHeader.request_api_key",
    );
    // A Metadata v0 header whose client id claims 0x7FFF bytes.
    let frame = Wire::new()
        .i16(3)
        .i16(0)
        .i32(1)
        .i16(i16::MAX)
        .raw(b"x")
        .bytes();
    assert_error(
        measure(frame.len(), 0, "frame", || RequestFrame::decode(&frame)),
        exceeds(0x7fff, 1),
        10,
        "RequestHeader.client_id",
    );
    // A valid header, then a body with a huge array: offsets are in the frame.
    let frame = Wire::new()
        .i16(3)
        .i16(0)
        .i32(1)
        .string("c")
        .i32(i32::MAX)
        .bytes();
    assert_error(
        measure(frame.len(), 0, "frame", || RequestFrame::decode(&frame)),
        exceeds(0x7fff_ffff, 0),
        frame.len(),
        "MetadataRequest.topics",
    );
    // Trailing bytes after a whole frame.
    let frame = Wire::new()
        .i16(3)
        .i16(0)
        .i32(1)
        .string("c")
        .i32(0)
        .i8(9)
        .bytes();
    assert_error(
        RequestFrame::decode(&frame),
        DecodeErrorKind::TrailingBytes(1),
        frame.len() - 1,
        "MetadataRequest",
    );
}

// ---------------------------------------------------------------------------
// Tagged fields.

/// ApiVersionsResponse v3: error code, one api key, throttle time, then
/// `tags` as its top-level tagged fields (tag, bytes).
fn api_versions_v3(tags: &[(u32, &[u8])]) -> Vec<u8> {
    let mut wire = Wire::new()
        .i16(0)
        .uvarint(2)
        .i16(18)
        .i16(0)
        .i16(4)
        .uvarint(0)
        .i32(0)
        .uvarint(tags.len() as u32);
    for (tag, data) in tags {
        wire = wire.uvarint(*tag).uvarint(data.len() as u32).raw(data);
    }
    wire.bytes()
}

/// Where the tagged fields of [`api_versions_v3`] start (their count).
const API_VERSIONS_TAGS_AT: usize = 2 + 1 + 7 + 4;

fn decode_api_versions(input: &[u8]) -> Result<ApiVersionsResponse<'_>, DecodeError> {
    measure(input.len(), 0, "ApiVersionsResponse", || {
        ApiVersionsResponse::decode(input, 3)
    })
}

#[test]
fn tagged_field_size_disagreeing_with_content() {
    // finalized_features_epoch (tag 1) is an int64: nine declared bytes.
    let input = api_versions_v3(&[(1, &[0, 0, 0, 0, 0, 0, 0, 7, 0])]);
    assert_error(
        decode_api_versions(&input),
        DecodeErrorKind::TaggedFieldSize {
            tag: 1,
            declared: 9,
            used: 8,
        },
        API_VERSIONS_TAGS_AT + 3,
        "ApiVersionsResponse",
    );
    // Seven declared bytes: the int64 runs out inside the field.
    let input = api_versions_v3(&[(1, &[0; 7])]);
    assert_error(
        decode_api_versions(&input),
        DecodeErrorKind::Truncated {
            needed: 8,
            remaining: 7,
        },
        API_VERSIONS_TAGS_AT + 3,
        "ApiVersionsResponse.finalized_features_epoch",
    );
    // A declared size past the end of the input.
    let mut input = api_versions_v3(&[]);
    input.truncate(API_VERSIONS_TAGS_AT);
    input.extend_from_slice(&[1, 1, 100, 0, 0]);
    assert_error(
        decode_api_versions(&input),
        exceeds(100, 2),
        API_VERSIONS_TAGS_AT + 3,
        "ApiVersionsResponse",
    );
    // A tag count larger than the bytes left could hold.
    let mut input = api_versions_v3(&[]);
    input.truncate(API_VERSIONS_TAGS_AT);
    input.extend_from_slice(&[100, 0, 0]);
    assert_error(
        decode_api_versions(&input),
        exceeds(100, 2),
        API_VERSIONS_TAGS_AT + 1,
        "ApiVersionsResponse",
    );
}

#[test]
fn unknown_tags_round_trip_byte_for_byte() {
    let epoch: &[u8] = &[0, 0, 0, 0, 0, 0, 0, 7];
    let input = api_versions_v3(&[(1, epoch), (5, b"abc"), (70, b""), (200, &[9; 3])]);
    let decoded = decode_api_versions(&input).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(decoded.finalized_features_epoch, 7);
    let tags: Vec<u32> = decoded
        .unknown_tagged_fields
        .iter()
        .map(|f| f.tag)
        .collect();
    assert_eq!(tags, [5, 70, 200]);
    let encoded = decoded.to_bytes(3).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(encoded, input);
    assert_eq!(decoded.encoded_len(3), input.len());

    // Unknown tags in a nested struct survive too.
    let mut nested = api_versions_v3(&[]);
    nested[9] = 1; // the api key's tagged-field count
    nested.splice(10..10, [33, 2, 0xbe, 0xef]);
    let decoded = decode_api_versions(&nested).unwrap_or_else(|e| panic!("{e}"));
    let api: api_versions_response::ApiVersion<'_> =
        decoded.api_keys.get(0).expect("one api key").into_owned();
    assert_eq!(api.unknown_tagged_fields.len(), 1);
    assert_eq!(decoded.to_bytes(3).ok(), Some(nested));
}

#[test]
fn unknown_tags_are_refused_at_a_version_without_tagged_fields() {
    // ApiVersionsResponse is flexible from v3: decoded at v3 with unknown
    // tags, it cannot be written at v2 without losing them.
    let input = api_versions_v3(&[(5, b"abc")]);
    let decoded = decode_api_versions(&input).unwrap_or_else(|e| panic!("{e}"));
    let error = decoded.to_bytes(2).expect_err("unknown tags dropped at v2");
    assert_eq!(
        error.kind(),
        &kafka_wire::runtime::EncodeErrorKind::TaggedFieldsNotInVersion(2)
    );
    assert!(error
        .to_string()
        .contains("tagged fields were set, but version 2"));
    // In a nested struct too.
    let mut nested = api_versions_v3(&[]);
    nested[9] = 1; // the api key's tagged-field count
    nested.splice(10..10, [70, 1, b'x']);
    let decoded = decode_api_versions(&nested).unwrap_or_else(|e| panic!("{e}"));
    assert!(decoded.to_bytes(2).is_err());
    // Without unknown tags, v2 is fine.
    let plain = api_versions_v3(&[]);
    let plain = decode_api_versions(&plain).unwrap_or_else(|e| panic!("{e}"));
    assert!(plain.to_bytes(2).is_ok());
}

/// Many empty unknown tags in one section, in order and shuffled: kept
/// within the heap bound (they once took about 100 bytes of heap per 3
/// input bytes), and written back.
#[test]
fn many_unknown_tags_stay_within_the_heap_bound() {
    for count in [10_000u32, 100_000] {
        let tags: Vec<(u32, &[u8])> = (10..10 + count).map(|tag| (tag, &[][..])).collect();
        let input = api_versions_v3(&tags);
        let decoded = decode_api_versions(&input).unwrap_or_else(|e| panic!("{count}: {e}"));
        assert_eq!(decoded.unknown_tagged_fields.len(), count as usize);
        assert_eq!(decoded.to_bytes(3).ok().as_ref(), Some(&input));
        // Reversed, with one data byte each: copied into tag order.
        let data: &[u8] = &[7];
        let reversed: Vec<(u32, &[u8])> = (10..10 + count).rev().map(|tag| (tag, data)).collect();
        let shuffled = api_versions_v3(&reversed);
        let decoded =
            decode_api_versions(&shuffled).unwrap_or_else(|e| panic!("{count} reversed: {e}"));
        let in_order: Vec<(u32, &[u8])> = (10..10 + count).map(|tag| (tag, data)).collect();
        assert_eq!(
            decoded.to_bytes(3).ok(),
            Some(api_versions_v3(&in_order)),
            "{count} reversed"
        );
    }
}

#[test]
fn out_of_order_tags_are_accepted() {
    let epoch: &[u8] = &[0, 0, 0, 0, 0, 0, 0, 7];
    let ordered = api_versions_v3(&[(1, epoch), (3, &[1]), (5, b"abc"), (70, b"x")]);
    let shuffled = api_versions_v3(&[(70, b"x"), (5, b"abc"), (3, &[1]), (1, epoch)]);
    let a = decode_api_versions(&ordered).unwrap_or_else(|e| panic!("{e}"));
    let b = decode_api_versions(&shuffled).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a, b);
    assert!(b.zk_migration_ready);
    // Written back in tag order.
    assert_eq!(b.to_bytes(3).ok(), Some(ordered));
}

#[test]
fn duplicate_tags_are_rejected() {
    let epoch: &[u8] = &[0, 0, 0, 0, 0, 0, 0, 7];
    // A known tag twice: the second one is at 3 + 9 bytes past the count.
    let input = api_versions_v3(&[(1, epoch), (1, epoch)]);
    assert_error(
        decode_api_versions(&input),
        DecodeErrorKind::DuplicateTag(1),
        API_VERSIONS_TAGS_AT + 1 + 10,
        "ApiVersionsResponse",
    );
    // An unknown low tag twice, with another in between.
    let input = api_versions_v3(&[(9, b"a"), (7, b""), (9, b"b")]);
    assert!(matches!(
        decode_api_versions(&input).map_err(|e| e.kind().clone()),
        Err(DecodeErrorKind::DuplicateTag(9))
    ));
    // An unknown high tag (past the 64-bit fast path) twice.
    let input = api_versions_v3(&[(300, b"a"), (300, b"b")]);
    assert_error(
        decode_api_versions(&input),
        DecodeErrorKind::DuplicateTag(300),
        API_VERSIONS_TAGS_AT + 1 + 4,
        "ApiVersionsResponse",
    );
}

// ---------------------------------------------------------------------------
// Every prefix of every golden fixture.

/// One case of a golden fixture.
struct GoldenCase {
    /// The schema name, such as `MetadataRequest`.
    name: String,
    /// `request`, `response` or `header`.
    kind: String,
    /// The api key of a request or response.
    key: Option<i16>,
    version: i16,
    bytes: Vec<u8>,
}

/// The bytes a fixture's hex string spells: two hex digits per byte. A
/// stray character or a lone digit is an error, never a guessed byte.
fn fixture_hex(hex: &str) -> Result<Vec<u8>, String> {
    if !hex.len().is_multiple_of(2) {
        return Err(format!("{} hex digits, an odd number", hex.len()));
    }
    let digit = |at: usize| {
        let c = hex.as_bytes()[at];
        char::from(c)
            .to_digit(16)
            .ok_or_else(|| format!("`{}` at {at} is not a hex digit", c.escape_ascii()))
    };
    (0..hex.len())
        .step_by(2)
        .map(|i| Ok(u8::try_from(digit(i)? * 16 + digit(i + 1)?).unwrap_or(u8::MAX)))
        .collect()
}

#[test]
fn fixture_hex_refuses_what_is_not_hex() {
    assert_eq!(fixture_hex("00ff7A"), Ok(vec![0, 0xff, 0x7a]));
    assert!(fixture_hex("0g").is_err());
    assert!(fixture_hex("+1").is_err());
    assert!(fixture_hex("abc").is_err());
    assert!(fixture_hex("é0").is_err());
}

/// Every case of every golden fixture.
fn golden_cases() -> Vec<GoldenCase> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/golden");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.map(|e| e.path()).unwrap_or_default())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    entries.sort();
    let mut cases = Vec::new();
    for path in entries {
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let fixture: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = fixture["name"].as_str().unwrap_or_default().to_owned();
        let kind = fixture["type"].as_str().unwrap_or_default().to_owned();
        let key = fixture["apiKey"].as_i64().map(|k| k as i16);
        for case in fixture["cases"].as_array().into_iter().flatten() {
            let version = case["version"].as_i64().unwrap_or(-1) as i16;
            let hex = case["hex"].as_str().unwrap_or_default();
            let bytes = fixture_hex(hex)
                .unwrap_or_else(|e| panic!("{}: {name} v{version}: {e}", path.display()));
            cases.push(GoldenCase {
                name: name.clone(),
                kind: kind.clone(),
                key,
                version,
                bytes,
            });
        }
    }
    cases
}

#[test]
fn every_prefix_of_every_golden_fixture_is_an_error_for_decode_and_validate() {
    let cases = golden_cases();
    assert!(cases.len() > 1000, "only {} golden cases", cases.len());
    let mut prefixes = 0;
    for GoldenCase {
        name,
        kind,
        key,
        version,
        bytes,
    } in &cases
    {
        let decode = |input: &[u8]| -> Result<(), DecodeError> {
            let api = key.and_then(ApiKey::from_key);
            match (kind.as_str(), api) {
                ("request", Some(api)) => request(api, *version, input).map(drop),
                ("response", Some(api)) => response(api, *version, input).map(drop),
                ("header", _) if name == "RequestHeader" => measure(input.len(), 0, name, || {
                    RequestHeader::decode(input, *version).map(drop)
                }),
                _ => Ok(()),
            }
        };
        // The validate-only pass must agree with decode, error for error.
        let validate = |input: &[u8]| -> Result<(), DecodeError> {
            let api = key.and_then(ApiKey::from_key);
            measure(input.len(), 0, name, || match (kind.as_str(), api) {
                ("request", Some(api)) => RequestBody::validate(input, api, *version),
                ("response", Some(api)) => ResponseBody::validate(input, api, *version),
                ("header", _) if name == "RequestHeader" => {
                    RequestHeader::validate(input, *version)
                }
                _ => Ok(()),
            })
        };
        if kind == "header" && name != "RequestHeader" {
            continue;
        }
        assert!(
            decode(bytes).is_ok(),
            "{name} v{version}: the whole fixture does not decode"
        );
        assert_eq!(validate(bytes), Ok(()), "{name} v{version}: validate");
        for len in 0..bytes.len() {
            let error = decode(&bytes[..len])
                .expect_err(&format!("{name} v{version}: prefix {len} decoded"));
            assert_eq!(
                validate(&bytes[..len]),
                Err(error.clone()),
                "{name} v{version} prefix {len}: validate disagrees with decode"
            );
            assert!(
                matches!(
                    error.kind(),
                    DecodeErrorKind::Truncated { .. } | DecodeErrorKind::LengthExceedsInput { .. }
                ),
                "{name} v{version} prefix {len}: {error}"
            );
            assert!(
                error.offset() <= len,
                "{name} v{version} prefix {len}: {error}"
            );
            prefixes += 1;
        }
    }
    assert!(prefixes > 10_000, "only {prefixes} prefixes");
}

// ---------------------------------------------------------------------------
// Heap amplification.

#[test]
fn the_tracking_allocator_sees_allocations() {
    let (buffer, peak) = peak_during(|| vec![0u8; 1 << 20]);
    assert_eq!(buffer.len(), 1 << 20);
    assert!(peak >= 1 << 20, "peak {peak}");
    let (_, peak) = peak_during(|| ());
    assert_eq!(peak, 0);
}

/// Input size for the amplification cases.
const BIG: usize = 100_000;

/// A struct-array count no larger than the bytes left passes the length
/// check, but an element is larger in memory than on the wire (64 bytes per
/// v0 broker as of writing). Reserving the whole claimed array would take
/// about 6.4 MB for a 100 KB input before the first element fails; the
/// reader reserves at most 64 KiB up front and grows as elements decode.
#[test]
fn claimed_struct_array_count_does_not_preallocate() {
    // MetadataResponse v0: BIG brokers claimed, the first one's host is null.
    let input = Wire::new().i32(BIG as i32).raw(&vec![0xff; BIG]).bytes();
    response_error(
        ApiKey::Metadata,
        0,
        &input,
        DecodeErrorKind::UnexpectedNull,
        8,
        "MetadataResponse.brokers[0].host",
    );
}

/// Valid input made of many tiny elements: a MetadataRequest of 100 KB
/// holding 50,000 empty topic names. As a `Vec` this array would take about
/// 2.4 MB (48 bytes per 2-byte element), past the decode's heap budget, so
/// it stays in wire form: it decodes within the bound and still reads
/// every element.
#[test]
fn many_small_valid_elements_stay_within_the_bound() {
    let count = BIG / 2;
    let mut wire = Wire::new().i32(count as i32);
    for _ in 0..count {
        wire = wire.string("");
    }
    let input = wire.bytes();
    let Ok(RequestBody::Metadata(decoded)) = request(ApiKey::Metadata, 0, &input) else {
        panic!("a valid Metadata request")
    };
    let topics = decoded.topics.as_ref().expect("topics");
    assert!(topics.as_slice().is_none(), "kept as wire bytes");
    assert_eq!(topics.len(), count);
    assert_eq!(
        topics
            .iter()
            .filter(|t| t.name.as_deref() == Some(""))
            .count(),
        count
    );
}

/// Arrays of structs that hold arrays are decoded into `Vec`s, but only
/// within the decode's heap budget: a MetadataResponse v0 of 9 bytes per
/// topic (each topic a 104-byte struct in memory) decodes a few topics into
/// a `Vec`, and keeps 20,000 of them as checked wire bytes, within the bound,
/// reading every one.
#[test]
fn nested_arrays_past_the_heap_budget_stay_in_wire_form() {
    let metadata_v0 = |topics: usize| {
        let mut wire = Wire::new().i32(0).i32(topics as i32);
        for _ in 0..topics {
            wire = wire.i16(3).string("t").i32(0);
        }
        wire.bytes()
    };
    for (topics, in_a_vec) in [(5, true), (BIG / 5, false)] {
        let input = metadata_v0(topics);
        let Ok(ResponseBody::Metadata(decoded)) = response(ApiKey::Metadata, 0, &input) else {
            panic!("a valid Metadata response")
        };
        assert_eq!(
            decoded.topics.as_slice().is_some(),
            in_a_vec,
            "{topics} topics"
        );
        assert_eq!(decoded.topics.len(), topics);
        let read = decoded
            .topics
            .iter()
            .filter(|t| t.error_code == 3 && t.name.as_deref() == Some("t"))
            .count();
        assert_eq!(read, topics);
    }
}

// ---------------------------------------------------------------------------
// Found by fuzzing.

/// DescribeClientQuotasResponse v0 holding `value` as its only quota value.
#[cfg(feature = "json")]
fn client_quotas_response_v0(value: f64) -> Vec<u8> {
    Wire::new()
        .i32(0) // throttle_time_ms
        .i16(0) // error_code
        .i16(-1) // error_message: null
        .i32(1) // entries
        .i32(0) // entity
        .i32(1) // values
        .string("k")
        .raw(&value.to_be_bytes())
        .bytes()
}

/// The `json` fuzz target, minimized input
/// `0130007fffffffffffffff0000000300000000000000010006786b5562733510000000000000000000000000000000000000010000ffff000000010004746d343304000000ffffffff`:
/// a float64 printed in the JSON form and parsed back as text must be the
/// same double. serde_json parses floats exactly only with its
/// `float_roundtrip` feature, which the workspace enables for this.
#[test]
#[cfg(feature = "json")]
fn float64_survives_the_json_text_form() {
    for bits in [0x1000_0000_0000_0000u64, 0x0400_0000_ffff_ffff] {
        let input = client_quotas_response_v0(f64::from_bits(bits));
        let decoded =
            response(ApiKey::DescribeClientQuotas, 0, &input).unwrap_or_else(|e| panic!("{e}"));
        let text = decoded.to_json(0).to_string();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let back = ResponseBody::from_json(&json, ApiKey::DescribeClientQuotas, 0)
            .unwrap_or_else(|e| panic!("{e}"));
        let mut bytes = Vec::new();
        assert!(back.encode(&mut bytes, 0).is_ok());
        assert_eq!(bytes, input, "{bits:#018x}: {text}");
    }
}

/// The `json` fuzz target, minimized input
/// `013c0280000000001c0082026100000000029525400001008000010080000000000000`:
/// a DescribeClusterResponse v2 whose one broker has `IsFenced` byte 0x80.
/// Kafka reads it as true. Re-encoding the decoded value copied the brokers
/// array as it came, keeping the 0x80, while the same value read back from
/// JSON wrote 1: equal values encoded differently. A struct array is now
/// copied only when its bytes are exactly what encoding writes.
#[test]
#[cfg(feature = "json")]
fn a_non_canonical_bool_in_a_struct_array_re_encodes_canonically() {
    let body: &[u8] = &[
        0x80, 0x00, 0x00, 0x00, 0x00, 0x1c, 0x00, 0x82, 0x02, 0x61, 0x00, 0x00, 0x00, 0x00, 0x02,
        0x95, 0x25, 0x40, 0x00, 0x01, 0x00, 0x80, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00,
    ];
    let decoded = response(ApiKey::DescribeCluster, 2, body).unwrap_or_else(|e| panic!("{e}"));
    let mut direct = Vec::new();
    decoded
        .encode(&mut direct, 2)
        .unwrap_or_else(|e| panic!("{e}"));
    let from_json = ResponseBody::from_json(&decoded.to_json(2), ApiKey::DescribeCluster, 2)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(from_json, decoded);
    let mut via_json = Vec::new();
    from_json
        .encode(&mut via_json, 2)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(direct, via_json);
    assert_ne!(direct, body, "the 0x80 is written back as 1");
    assert_eq!(decoded.encoded_len(2), direct.len());
}
