//! Hostile inputs: every one must give a typed error (never a panic), at the
//! right byte offset and field path, while the heap stays bounded.
//!
//! A tracking global allocator counts the bytes each thread has allocated;
//! every decode below runs inside [`measure`], which asserts that the peak
//! heap during the decode stays below `4 * n + 64 KiB` for an input of `n`
//! bytes (plus the decompression limit for compressed record batches).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use kafka_wire::frame::{peek_request, RequestFrame};
use kafka_wire::messages::{api_versions_response, ApiVersionsResponse, RequestHeader};
use kafka_wire::records::{
    compress, Batches, Compression, DecodeOptions, Header, LegacyEntry, RecordBatch,
    RecordBatchBuilder, RecordSet, RecordsError,
};
#[cfg(feature = "json")]
use kafka_wire::records::{records_to_json, write_records_json, WriteJsonError};
use kafka_wire::runtime::{DecodeError, DecodeErrorKind, Encode, Message};
use kafka_wire::{ApiKey, RequestBody, ResponseBody};

// ---------------------------------------------------------------------------
// Heap tracking.

/// Counts live and peak heap bytes per thread, so that tests running in
/// parallel do not see each other's allocations.
struct Tracking;

thread_local! {
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn grow(bytes: usize) {
    // `try_with`: the allocator may run while the thread's locals are gone.
    let _ = CURRENT.try_with(|current| {
        let now = current.get().wrapping_add(bytes as isize);
        current.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn shrink(bytes: usize) {
    let _ = CURRENT.try_with(|current| current.set(current.get().wrapping_sub(bytes as isize)));
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// bookkeeping touches only const-initialised thread-locals, which neither
// allocate nor register destructors.
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grow(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grow(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) };
        shrink(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            // Count the new block before freeing the old one: a moving
            // realloc holds both for a moment.
            grow(new_size);
            shrink(layout.size());
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Tracking = Tracking;

/// Slack allowed on top of `4 * n`.
const SLACK: usize = 64 * 1024;

/// Runs `f` and returns its result with the peak number of heap bytes this
/// thread held during it, above what it held before.
fn peak_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = CURRENT.with(Cell::get);
    PEAK.with(|peak| peak.set(base));
    let result = f();
    let peak = PEAK.with(Cell::get) - base;
    (result, usize::try_from(peak).unwrap_or(0))
}

/// Runs `f`, decoding an input of `len` bytes, and asserts that the heap
/// stayed below `4 * len + extra + 64 KiB`.
fn measure<R>(len: usize, extra: usize, what: &str, f: impl FnOnce() -> R) -> R {
    let (result, peak) = peak_during(f);
    let limit = 4 * len + extra + SLACK;
    assert!(
        peak <= limit,
        "{what}: decoding {len} byte(s) peaked at {peak} heap bytes (limit {limit})"
    );
    result
}

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

/// Writes wire values, big-endian, for building inputs by hand.
#[derive(Default)]
struct Wire(Vec<u8>);

impl Wire {
    fn new() -> Self {
        Self::default()
    }
    fn i8(mut self, v: i8) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i16(mut self, v: i16) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i32(mut self, v: i32) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i64(mut self, v: i64) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn raw(mut self, bytes: &[u8]) -> Self {
        self.0.extend_from_slice(bytes);
        self
    }
    fn uvarint(mut self, mut v: u32) -> Self {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
        self
    }
    /// A zigzag varint, as record fields use.
    fn varint(self, v: i32) -> Self {
        self.uvarint(((v << 1) ^ (v >> 31)) as u32)
    }
    /// A classic string: int16 length and bytes.
    fn string(self, s: &str) -> Self {
        self.i16(s.len() as i16).raw(s.as_bytes())
    }
    /// A compact string: uvarint(length + 1) and bytes.
    fn compact_string(self, s: &str) -> Self {
        self.uvarint(s.len() as u32 + 1).raw(s.as_bytes())
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn bytes(self) -> Vec<u8> {
        self.0
    }
}

/// The compact encoding of the largest uvarint length, 0xFFFFFFFF, which
/// claims 0xFFFFFFFE elements or bytes.
const MAX_UVARINT: [u8; 5] = [0xff, 0xff, 0xff, 0xff, 0x0f];
const MAX_COMPACT_LEN: u64 = 0xffff_fffe;

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
    // v12: compact topics count 0xFFFFFFFE.
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
    // v9: a compact topic name claiming 0xFFFFFFFE bytes.
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
    // v12: throttle time, then compact brokers count 0xFFFFFFFE.
    let input = Wire::new().i32(0).raw(&MAX_UVARINT).i64(0).bytes();
    response_error(
        ApiKey::Metadata,
        12,
        &input,
        exceeds(MAX_COMPACT_LEN, 8),
        9,
        "MetadataResponse.brokers",
    );
    // v12: a broker whose compact host claims 0xFFFFFFFE bytes.
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
    // v12: compact records claiming 0xFFFFFFFE bytes.
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
    // v9: compact records claiming 0xFFFFFFFE bytes.
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
// Record batches.

/// CRC-32C (Castagnoli), bit by bit: enough for a few test batches.
fn crc32c(data: &[u8]) -> u32 {
    crc32(data, 0x82f6_3b78)
}

/// A reflected CRC-32 with `poly` (0xEDB88320 is the IEEE one).
fn crc32(data: &[u8], poly: u32) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ poly
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Offsets in a v2 batch.
const BATCH_LENGTH_AT: usize = 8;
const CRC_AT: usize = 17;
const ATTRIBUTES_AT: usize = 21;
const RECORD_COUNT_AT: usize = 57;
const RECORDS_AT: usize = 61;

/// An uncompressed v2 batch with `count` records.
fn sample_batch(count: u8, codec: Compression) -> Vec<u8> {
    let mut builder = RecordBatchBuilder::new(100).compression(codec);
    for i in 0..count {
        let result = builder.append(
            1_700_000_000_000 + i64::from(i),
            Some(&[i]),
            Some(b"value"),
            &[Header::new("h", Some(b"v"))],
        );
        assert!(result.is_ok());
    }
    builder.build().unwrap_or_else(|e| panic!("{e}"))
}

/// A v2 batch with `count` declared records and `records` as its records
/// section, with the right length and CRC.
fn batch_with_records(count: i32, records: &[u8]) -> Vec<u8> {
    let mut batch = sample_batch(0, Compression::None);
    batch.truncate(RECORDS_AT);
    batch[RECORD_COUNT_AT..RECORDS_AT].copy_from_slice(&count.to_be_bytes());
    batch.extend_from_slice(records);
    fix_batch(&mut batch);
    batch
}

/// Recomputes a batch's length and CRC after editing it.
fn fix_batch(batch: &mut [u8]) {
    let length = (batch.len() - 12) as i32;
    batch[BATCH_LENGTH_AT..BATCH_LENGTH_AT + 4].copy_from_slice(&length.to_be_bytes());
    let crc = crc32c(&batch[ATTRIBUTES_AT..]);
    batch[CRC_AT..ATTRIBUTES_AT].copy_from_slice(&crc.to_be_bytes());
}

/// Options with a 1 MiB decompression limit.
const OPTIONS: DecodeOptions = DecodeOptions::new().with_max_decompressed_size(1 << 20);

/// Heap allowed on top of the usual bound for a blob: twice the
/// decompression limit when its first entry is a compressed v2 batch, else
/// nothing. Twice, because the output buffer doubles as it grows and a
/// moving reallocation holds the old and the new buffer for a moment (a
/// 1 MiB limit peaks at about 1.6 MiB with the decoder's own state).
fn decompression_allowance(blob: &[u8]) -> usize {
    let compressed = blob.get(16) == Some(&2)
        && blob
            .get(ATTRIBUTES_AT + 1)
            .is_some_and(|attributes| attributes & 7 != 0);
    if compressed {
        2 * OPTIONS.max_decompressed_size
    } else {
        0
    }
}

/// Parses a records blob and decodes every record, measuring the heap.
fn parse_all(blob: &[u8]) -> Result<(usize, Option<usize>), RecordsError> {
    measure(blob.len(), decompression_allowance(blob), "records", || {
        let set = RecordSet::parse(blob, &OPTIONS)?;
        set.validate()?;
        Ok((set.batches.len(), set.partial_tail))
    })
}

/// Decodes one batch and all its records, measuring the heap.
fn decode_batch(batch: &[u8]) -> Result<usize, RecordsError> {
    measure(
        batch.len(),
        decompression_allowance(batch),
        "record batch",
        || {
            let (batch, _) = RecordBatch::decode(batch, &OPTIONS)?;
            batch.records().try_fold(0, |n, r| r.map(|_| n + 1))
        },
    )
}

#[test]
fn sample_batches_decode() {
    for codec in [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let batch = sample_batch(3, codec);
        assert_eq!(decode_batch(&batch), Ok(3), "{codec}");
        assert_eq!(parse_all(&batch), Ok((1, None)), "{codec}");
    }
}

#[test]
fn record_batch_huge_lengths() {
    // batchLength 0x7FFFFFFF: a partial tail in a blob, truncated alone.
    let mut batch = sample_batch(1, Compression::None);
    let len = batch.len();
    batch[BATCH_LENGTH_AT..BATCH_LENGTH_AT + 4].copy_from_slice(&i32::MAX.to_be_bytes());
    assert_eq!(parse_all(&batch), Ok((0, Some(len))));
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::Truncated {
            context: "record batch",
            offset: 12,
            needed: 0x7fff_ffff,
            available: len - 12,
        })
    );

    // recordCount 0x7FFFFFFF, with a valid CRC.
    let mut batch = sample_batch(1, Compression::None);
    batch[RECORD_COUNT_AT..RECORDS_AT].copy_from_slice(&i32::MAX.to_be_bytes());
    fix_batch(&mut batch);
    let error = RecordsError::InvalidRecordCount {
        offset: RECORD_COUNT_AT,
        count: i32::MAX,
    };
    assert_eq!(decode_batch(&batch), Err(error.clone()));
    assert_eq!(parse_all(&batch), Err(error));

    // A record length of 0x7FFFFFFF (zigzag varint).
    let records = Wire::new().varint(i32::MAX).raw(&[0; 8]).bytes();
    let batch = batch_with_records(1, &records);
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::Truncated {
            context: "record",
            offset: RECORDS_AT + 5,
            needed: 0x7fff_ffff,
            available: 8,
        })
    );

    // Inside a record: key length, value length and header count of
    // 0x7FFFFFFF all overrun the record's declared length.
    for (what, body) in [
        (
            "key",
            Wire::new().i8(0).varint(0).varint(0).varint(i32::MAX),
        ),
        (
            "value",
            Wire::new()
                .i8(0)
                .varint(0)
                .varint(0)
                .varint(-1)
                .varint(i32::MAX),
        ),
        (
            "header count",
            Wire::new()
                .i8(0)
                .varint(0)
                .varint(0)
                .varint(-1)
                .varint(-1)
                .varint(i32::MAX),
        ),
    ] {
        let body = body.raw(&[0; 4]).bytes();
        let records = Wire::new().varint(body.len() as i32).raw(&body).bytes();
        let batch = batch_with_records(1, &records);
        assert_eq!(
            decode_batch(&batch),
            Err(RecordsError::LengthMismatch {
                context: "record",
                offset: RECORDS_AT,
                declared: body.len() as i64,
                actual: body.len(),
            }),
            "{what}"
        );
    }

    // A legacy (magic 1) message whose key claims 0x7FFFFFFF bytes.
    let body = Wire::new()
        .i8(1) // magic
        .i8(0) // attributes
        .i64(0) // timestamp
        .i32(i32::MAX) // key length
        .raw(&[0; 8])
        .bytes();
    let crc = crc32(&body, 0xedb8_8320);
    let message = Wire::new()
        .i64(0)
        .i32(body.len() as i32 + 4)
        .i32(crc as i32)
        .raw(&body)
        .bytes();
    assert_eq!(
        measure(message.len(), 0, "legacy", || LegacyEntry::decode(
            &message, &OPTIONS
        )
        .map(|_| ())),
        Err(RecordsError::LengthMismatch {
            context: "message",
            offset: 0,
            declared: body.len() as i64 + 4,
            actual: body.len() + 4,
        })
    );
}

#[test]
fn decompression_bombs_stop_at_the_limit() {
    let value = vec![0u8; 4 << 20];
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let mut builder = RecordBatchBuilder::new(0).compression(codec);
        assert!(builder.append(0, None, Some(&value), &[]).is_ok());
        let batch = builder.build().unwrap_or_else(|e| panic!("{e}"));
        assert!(batch.len() < 1 << 20, "{codec}: {} bytes", batch.len());
        let error = decode_batch(&batch).expect_err("a 4 MiB batch decoded");
        assert!(
            matches!(
                error,
                RecordsError::DecompressedSizeExceeded { limit, .. } if limit == 1 << 20
            ),
            "{codec}: {error}"
        );
        assert_eq!(parse_all(&batch), Err(error));
    }
}

#[test]
fn record_batch_bad_varints_and_lengths() {
    // A record length varint running past five bytes.
    let records = [0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0, 0];
    let batch = batch_with_records(1, &records);
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::VarintTooLong { offset: RECORDS_AT })
    );
    // A timestamp delta varlong running past ten bytes.
    let body = Wire::new().i8(0).raw(&[0xff; 11]).raw(&[0; 4]).bytes();
    let records = Wire::new().varint(body.len() as i32).raw(&body).bytes();
    let batch = batch_with_records(1, &records);
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::VarintTooLong {
            offset: RECORDS_AT + 2
        })
    );
    // A negative record length.
    let records = Wire::new().varint(-1).raw(&[0; 8]).bytes();
    let batch = batch_with_records(1, &records);
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::NegativeLength {
            context: "record length",
            offset: RECORDS_AT,
            length: -1,
        })
    );
    // A key length of -2.
    let body = Wire::new()
        .i8(0)
        .varint(0)
        .varint(0)
        .varint(-2)
        .raw(&[0; 4])
        .bytes();
    let records = Wire::new().varint(body.len() as i32).raw(&body).bytes();
    let batch = batch_with_records(1, &records);
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::NegativeLength {
            context: "key length",
            offset: RECORDS_AT + 4,
            length: -2,
        })
    );
    // A header key that is not UTF-8.
    let body = Wire::new()
        .i8(0)
        .varint(0)
        .varint(0)
        .varint(-1)
        .varint(-1)
        .varint(1)
        .varint(2)
        .raw(&[0xc3, 0x28])
        .varint(-1)
        .bytes();
    let records = Wire::new().varint(body.len() as i32).raw(&body).bytes();
    let batch = batch_with_records(1, &records);
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::InvalidHeaderKey {
            offset: RECORDS_AT + 7
        })
    );
}

#[test]
fn record_batch_truncated_at_every_byte() {
    for codec in [Compression::None, Compression::Gzip, Compression::Zstd] {
        let batch = sample_batch(3, codec);
        for len in 0..batch.len() {
            let prefix = &batch[..len];
            // In a blob an incomplete last batch is a partial tail...
            assert_eq!(
                parse_all(prefix),
                Ok((0, (len > 0).then_some(len))),
                "{codec} prefix {len}"
            );
            // ...and on its own it is truncated.
            assert!(
                matches!(decode_batch(prefix), Err(RecordsError::Truncated { .. })),
                "{codec} prefix {len}"
            );
        }
    }
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
fn negative_lengths_other_than_minus_one() {
    // Array count -2 (v1, where topics is nullable).
    let input = Wire::new().i32(-2).bytes();
    request_error(
        ApiKey::Metadata,
        1,
        &input,
        DecodeErrorKind::InvalidLength(-2),
        0,
        "MetadataRequest.topics",
    );
    // -1 is null there, and the message decodes.
    let input = Wire::new().i32(-1).bytes();
    assert!(request(ApiKey::Metadata, 1, &input).is_ok());
    // ...but not in v0, where topics is not nullable.
    request_error(
        ApiKey::Metadata,
        0,
        &input,
        DecodeErrorKind::UnexpectedNull,
        0,
        "MetadataRequest.topics",
    );
    // String length -2.
    let input = Wire::new().i32(1).i16(-2).bytes();
    request_error(
        ApiKey::Metadata,
        1,
        &input,
        DecodeErrorKind::InvalidLength(-2),
        4,
        "MetadataRequest.topics[0].name",
    );
    // Null for a non-nullable string.
    let input = Wire::new().i32(1).i16(-1).bytes();
    request_error(
        ApiKey::Metadata,
        1,
        &input,
        DecodeErrorKind::UnexpectedNull,
        4,
        "MetadataRequest.topics[0].name",
    );
    // Records length -5.
    let head = produce_request_v3_partition();
    let offset = head.len();
    let input = head.i32(-5).bytes();
    request_error(
        ApiKey::Produce,
        3,
        &input,
        DecodeErrorKind::InvalidLength(-5),
        offset,
        "ProduceRequest.topic_data[0].partition_data[0].records",
    );
    // int32 array length i32::MIN.
    let input = Wire::new().i32(i32::MIN).bytes();
    response_error(
        ApiKey::Metadata,
        0,
        &input,
        DecodeErrorKind::InvalidLength(i64::from(i32::MIN)),
        0,
        "MetadataResponse.brokers",
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
        "request_api_key",
    );
    assert_error(
        RequestFrame::decode(&[]),
        DecodeErrorKind::Truncated {
            needed: 2,
            remaining: 0,
        },
        0,
        "request_api_key",
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
        "request_api_key",
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
    if hex.len() % 2 != 0 {
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
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/golden");
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

/// The same for record headers: a count up to half the bytes left must not
/// be reserved whole (32 bytes per header) before the first header fails.
#[test]
fn claimed_record_header_count_does_not_preallocate() {
    let body = Wire::new()
        .i8(0)
        .varint(0)
        .varint(0)
        .varint(-1)
        .varint(-1)
        .varint((BIG / 2) as i32)
        .raw(&vec![0x03; BIG])
        .bytes();
    let records = Wire::new().varint(body.len() as i32).raw(&body).bytes();
    let batch = batch_with_records(1, &records);
    assert_eq!(
        decode_batch(&batch),
        Err(RecordsError::NegativeLength {
            context: "header key length",
            offset: 72,
            length: -2,
        })
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

// ---------------------------------------------------------------------------
// Streaming record blobs: walked one batch at a time, any blob is decoded
// and printed within the per-batch decompression limit plus 64 MiB of heap,
// whatever the number of batches and records (the shapes of issue 13).

/// Heap allowed on top of the per-batch decompression limit.
const STREAM_SLACK: usize = 64 << 20;

/// What the `records` command does, printing nowhere: every batch and record
/// checked first, then the JSON written as it decodes.
#[cfg(feature = "json")]
fn print_records(blob: &[u8], options: &DecodeOptions) -> Result<(), RecordsError> {
    for batch in Batches::new(blob, options) {
        batch?;
    }
    match write_records_json(blob, options, &mut std::io::sink(), true) {
        Ok(()) => Ok(()),
        Err(WriteJsonError::Records(error)) => Err(error),
        Err(WriteJsonError::Io(error)) => panic!("writing to a sink failed: {error}"),
    }
}

/// Runs `f` and asserts that the heap stayed below the per-batch limit of
/// `options` plus 64 MiB, and below `tighter` when given.
fn streamed<R>(
    options: &DecodeOptions,
    tighter: Option<usize>,
    what: &str,
    f: impl FnOnce() -> R,
) -> R {
    let (result, peak) = peak_during(f);
    let limit = options.max_decompressed_size + STREAM_SLACK;
    let limit = tighter.map_or(limit, |tighter| tighter.min(limit));
    assert!(
        peak <= limit,
        "{what}: peaked at {peak} heap bytes (limit {limit})"
    );
    result
}

/// A v2 batch declaring `count` records, whose records section is `records`
/// compressed with `codec`.
fn compressed_batch(codec: Compression, count: i32, records: &[u8]) -> Vec<u8> {
    let compressed = compress(codec, records).unwrap_or_else(|e| panic!("{e}"));
    let mut batch = batch_with_records(count, &compressed);
    batch[ATTRIBUTES_AT + 1] = codec.id();
    fix_batch(&mut batch);
    batch
}

/// Eight zstd batches of record count 0, each expanding to exactly the
/// default 64 MiB limit. The first batch's records disagree with its count,
/// which is the error, found before the second batch is decompressed; all
/// eight used to be decompressed and held first (520 MiB).
#[test]
fn zstd_bombs_of_record_count_0_fail_at_the_first_batch() {
    let options = DecodeOptions::default();
    let bomb = compressed_batch(
        Compression::Zstd,
        0,
        &vec![0u8; options.max_decompressed_size],
    );
    assert!(bomb.len() < 4096, "{} bytes", bomb.len());
    let blob = bomb.repeat(8);
    let error = RecordsError::RecordCountMismatch {
        offset: 0,
        declared: 0,
        found: 0,
        trailing_bytes: true,
    };
    #[cfg(feature = "json")]
    {
        let printed = streamed(&options, None, "printing bombs", || {
            print_records(&blob, &options)
        });
        assert_eq!(printed, Err(error.clone()));
        let json = streamed(&options, None, "bombs to JSON", || {
            records_to_json(&blob, &options).map(drop)
        });
        assert_eq!(json, Err(error.clone()));
    }
    let parsed = streamed(&options, None, "parsing bombs", || {
        RecordSet::parse(&blob, &options).map(drop)
    });
    assert_eq!(parsed, Err(error));
}

/// One minimal record: length 6, attributes, deltas, null key and value,
/// no headers.
#[cfg(feature = "json")]
const MINIMAL_RECORD: [u8; 7] = [0x0c, 0, 0, 0, 1, 1, 0];

/// 1.2 million minimal records (8.4 MB), zstd-compressed to under 1 KB and
/// uncompressed. Printing them used to hold every record as a JSON value
/// (2.26 GB); now it holds the decompressed batch and nothing per record.
#[test]
#[cfg(feature = "json")]
fn a_batch_of_1_2_million_minimal_records_is_printed_in_bounded_memory() {
    let options = DecodeOptions::default();
    let count = 1_200_000;
    let records = MINIMAL_RECORD.repeat(count);
    let zstd = compressed_batch(Compression::Zstd, count as i32, &records);
    assert!(zstd.len() < 2048, "{} bytes", zstd.len());
    // The decompressed section, whose buffer doubles while decompressing
    // and so may hold its old and new copies for a moment (16 + 8 MiB).
    let held = 3 * records.len() + (1 << 20);
    let printed = streamed(&options, Some(held), "1.2M zstd records", || {
        print_records(&zstd, &options)
    });
    assert_eq!(printed, Ok(()));

    // Uncompressed, nothing is held at all.
    let plain = batch_with_records(count as i32, &records);
    let printed = streamed(&options, Some(1 << 20), "1.2M plain records", || {
        print_records(&plain, &options)
    });
    assert_eq!(printed, Ok(()));
}

/// A legacy magic 1 message of `value`, CRC-32 included.
fn legacy_message(offset: i64, attributes: i8, value: &[u8]) -> Vec<u8> {
    let mut body = vec![1u8, attributes as u8];
    body.extend_from_slice(&0i64.to_be_bytes());
    body.extend_from_slice(&(-1i32).to_be_bytes());
    body.extend_from_slice(&(value.len() as i32).to_be_bytes());
    body.extend_from_slice(value);
    let mut out = offset.to_be_bytes().to_vec();
    out.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
    out.extend_from_slice(&crc32(&body, 0xedb8_8320).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Sixteen legacy gzip wrappers, each expanding to the decompression limit
/// (4 MiB here, to keep the test quick; 64 MiB in issue 13, where they
/// aborted the tool): one wrapper's messages are held at a time, where all
/// sixteen used to be.
#[test]
fn legacy_gzip_wrappers_are_held_one_at_a_time() {
    let limit = 4 << 20;
    let options = DecodeOptions::default().with_max_decompressed_size(limit);
    let inner = legacy_message(0, 0, &vec![0u8; limit - 34]);
    assert_eq!(inner.len(), limit);
    let gzipped = compress(Compression::Gzip, &inner).unwrap_or_else(|e| panic!("{e}"));
    let wrapper = legacy_message(0, 1, &gzipped);
    let blob = wrapper.repeat(16);
    // One decompressed wrapper, its buffer's growth, and the decoder.
    let held = Some(2 * limit + (1 << 20));
    #[cfg(feature = "json")]
    {
        let printed = streamed(&options, held, "printing wrappers", || {
            print_records(&blob, &options)
        });
        assert_eq!(printed, Ok(()));
    }
    let walked = streamed(&options, held, "walking wrappers", || {
        Batches::new(&blob, &options).try_fold(0, |n, entry| entry.map(|_| n + 1))
    });
    assert_eq!(walked, Ok(16));
}

/// 100,000 empty batches (6.1 MB): printing them used to take 677 MB.
#[test]
#[cfg(feature = "json")]
fn a_hundred_thousand_empty_batches_are_printed_in_bounded_memory() {
    let options = DecodeOptions::default();
    let blob = batch_with_records(0, &[]).repeat(100_000);
    assert_eq!(blob.len(), 6_100_000);
    let printed = streamed(&options, Some(1 << 20), "empty batches", || {
        print_records(&blob, &options)
    });
    assert_eq!(printed, Ok(()));
}
