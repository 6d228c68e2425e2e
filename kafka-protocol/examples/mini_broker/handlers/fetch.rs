//! Fetch (waiting up to max_wait_ms for min_bytes) and ListOffsets.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

use kafka_wire::messages::{
    fetch_response, list_offsets_response, FetchRequest, FetchResponse, ListOffsetsRequest,
    ListOffsetsResponse,
};
use kafka_wire::runtime::Uuid;
use kafka_wire::ResponseBody;

use super::strings::owned;
use crate::broker::Broker;
use crate::errors;
use crate::log::Log;

/// The longest a Fetch waits, whatever it asks for.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// Reads from every requested partition; when that yields fewer than
/// min_bytes and no error, waits for appends until max_wait_ms has passed.
/// Fetch sessions are not kept: session id 0 tells the client to send full
/// requests.
pub async fn fetch(
    broker: &Broker,
    request: &FetchRequest<'_>,
    version: i16,
) -> ResponseBody<'static> {
    let wait = Duration::from_millis(u64::try_from(request.max_wait_ms).unwrap_or(0)).min(MAX_WAIT);
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        // Register for the next append before reading, so none is missed.
        let appended = broker.appended.notified();
        tokio::pin!(appended);
        appended.as_mut().enable();
        let (response, bytes, failed) = read(&broker.log(), request, version);
        let enough = i64::try_from(bytes).unwrap_or(i64::MAX) >= i64::from(request.min_bytes);
        if enough || failed || tokio::time::Instant::now() >= deadline {
            return ResponseBody::Fetch(response);
        }
        let _ = tokio::time::timeout_at(deadline, appended).await;
    }
}

/// One pass over the requested partitions: the response, the record bytes
/// in it, and whether any partition had an error.
///
/// Sizes are honoured as Kafka honours them: the records of all partitions
/// together stay within `max_bytes`, and each partition's within its
/// `partition_max_bytes`, except that the first partition with data returns
/// at least one batch, so that a batch larger than the limits still gets
/// through. A partition named again in the same request is left out: it
/// would otherwise repeat the same records once per mention.
fn read(
    log: &Log,
    request: &FetchRequest<'_>,
    version: i16,
) -> (FetchResponse<'static>, usize, bool) {
    let mut budget = usize::try_from(request.max_bytes).unwrap_or(0);
    let mut at_least_one = true;
    let mut total = 0;
    let mut failed = false;
    // Each distinct topic gets a number; the partitions seen are kept by it.
    let mut topic_numbers: HashMap<(Uuid, String), usize> = HashMap::new();
    let mut seen: HashSet<(usize, i32)> = HashSet::new();
    let mut responses = Vec::new();
    for topic in &request.topics {
        let next_number = topic_numbers.len();
        let number = *topic_numbers
            .entry((topic.topic_id, topic.topic.to_string()))
            .or_insert(next_number);
        let (name, topic_data) = if version >= 13 {
            match log.topic_by_id(topic.topic_id) {
                Some((name, data)) => (name.to_owned(), Some(data)),
                None => (String::new(), None),
            }
        } else {
            (topic.topic.to_string(), log.topic(&topic.topic))
        };
        let mut partitions = Vec::new();
        for p in topic.partitions.iter() {
            if !seen.insert((number, p.partition)) {
                continue;
            }
            let mut data = fetch_response::PartitionData {
                partition_index: p.partition,
                ..Default::default()
            };
            let partition = topic_data.and_then(|t| t.partition(p.partition));
            let result = match partition {
                None if topic_data.is_none() && version >= 13 => Err(errors::UNKNOWN_TOPIC_ID),
                None => Err(errors::UNKNOWN_TOPIC_OR_PARTITION),
                Some(partition) => {
                    data.high_watermark = partition.high_watermark();
                    data.last_stable_offset = partition.high_watermark();
                    data.log_start_offset = partition.log_start_offset();
                    let max = usize::try_from(p.partition_max_bytes)
                        .unwrap_or(0)
                        .min(budget);
                    partition.read(p.fetch_offset, max, at_least_one)
                }
            };
            match result {
                Ok(records) => {
                    if !records.is_empty() {
                        at_least_one = false;
                    }
                    budget = budget.saturating_sub(records.len());
                    total += records.len();
                    data.records = Some(Cow::Owned(records));
                }
                Err(code) => {
                    failed = true;
                    data.error_code = code;
                    data.records = Some(Cow::Borrowed(&[]));
                }
            }
            partitions.push(data);
        }
        responses.push(fetch_response::FetchableTopicResponse {
            topic: owned(&name),
            topic_id: topic.topic_id,
            partitions: partitions.into(),
            ..Default::default()
        });
    }
    let response = FetchResponse {
        session_id: 0,
        responses: responses.into(),
        ..Default::default()
    };
    (response, total, failed)
}

/// Offsets by time: -1 latest, -2 earliest, -3 the batch with the largest
/// timestamp, otherwise the first batch at or after the timestamp.
pub fn list_offsets(
    broker: &Broker,
    request: &ListOffsetsRequest<'_>,
    version: i16,
) -> ResponseBody<'static> {
    let log = broker.log();
    let topics = request
        .topics
        .iter()
        .map(|t| list_offsets_response::ListOffsetsTopicResponse {
            name: owned(&t.name),
            partitions: t
                .partitions
                .iter()
                .map(|p| {
                    let mut response = list_offsets_response::ListOffsetsPartitionResponse {
                        partition_index: p.partition_index,
                        // Not ignorable: only written from v4.
                        leader_epoch: if version >= 4 { 0 } else { -1 },
                        timestamp: -1,
                        offset: -1,
                        ..Default::default()
                    };
                    match log
                        .topic(&t.name)
                        .and_then(|topic| topic.partition(p.partition_index))
                    {
                        None => response.error_code = errors::UNKNOWN_TOPIC_OR_PARTITION,
                        Some(partition) => match p.timestamp {
                            -1 => response.offset = partition.high_watermark(),
                            -2 | -4 | -5 => response.offset = partition.log_start_offset(),
                            -3 => {
                                if let Some((ts, offset)) = partition.max_timestamp() {
                                    (response.timestamp, response.offset) = (ts, offset);
                                }
                            }
                            ts => {
                                if let Some((ts, offset)) = partition.offset_for_timestamp(ts) {
                                    (response.timestamp, response.offset) = (ts, offset);
                                }
                            }
                        },
                    }
                    response
                })
                .collect(),
            ..Default::default()
        })
        .collect();
    ResponseBody::ListOffsets(ListOffsetsResponse {
        topics,
        ..Default::default()
    })
}
