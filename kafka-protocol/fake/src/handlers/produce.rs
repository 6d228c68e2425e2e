//! Produce and InitProducerId.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use kafka_wire::messages::{
    produce_response, InitProducerIdRequest, InitProducerIdResponse, ProduceRequest,
    ProduceResponse,
};
use kafka_wire::{ErrorCode, ResponseBody};

use super::answers::produce_partition;
use super::owned;
use super::validate::{
    check_partition, check_request_records, Budget, CheckedBatch, Limits, Refusal,
};
use crate::config::PRODUCE_DECOMPRESSION_BUDGET;
use crate::dispatch::{Context, Outcome};
use crate::state::internal_topics::is_internal;
use crate::state::log::{Roll, StoredBatch};
use crate::state::producers::{BatchIds, Verdict};
use crate::state::topics::Topic;
use crate::state::transactions::TxnStatus;
use crate::state::{Shared, State};

/// The first Produce version whose transactional batches add their
/// partition to the transaction (KIP-890, transaction.version 2).
const IMPLICIT_ADD_PRODUCE: i16 = 12;

/// The first Produce version answered TRANSACTION_ABORTABLE for a
/// transactional batch of a partition outside the transaction.
const ABORTABLE_PRODUCE: i16 = 11;

/// The batch attribute bit of LogAppendTime.
const LOG_APPEND_TIME_BIT: i16 = 0x08;

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// One partition of the request, resolved against the state.
struct Part {
    topic: usize,
    index: i32,
    name: Option<String>,
    records: Vec<u8>,
    limits: Option<Limits>,
    result: Result<Vec<CheckedBatch>, Refusal>,
}

/// The broker's `message.max.bytes`, which topics without their own
/// `max.message.bytes` take (Kafka's default: 1048588).
const MESSAGE_MAX_BYTES: &str = "1048588";

/// Kafka's `log.message.timestamp.after.max.ms` default: one hour.
const TIMESTAMP_AFTER_MAX_MS: i64 = 3_600_000;

/// A topic setting: the topic's own, else the broker's (`broker_key`, set
/// on the node or cluster-wide), else `default`.
fn setting(
    state: &State,
    node: i32,
    topic: &Topic,
    key: &str,
    broker_key: &str,
    default: &str,
) -> String {
    topic
        .configs
        .get(key)
        .or_else(|| {
            [node, -1]
                .iter()
                .find_map(|n| state.broker_configs.get(n).and_then(|c| c.get(broker_key)))
        })
        .map(String::as_str)
        .or_else(|| topic.config(key))
        .unwrap_or(default)
        .to_owned()
}

/// When the logs of `topic` roll a segment on `node` (-1: the cluster's
/// settings): its `segment.ms` and `segment.bytes`, else the broker's.
pub(super) fn roll(state: &State, node: i32, topic: &Topic) -> Roll {
    let defaults = Roll::default();
    let number = |key: &str, broker_key: &str, default: i64| {
        setting(state, node, topic, key, broker_key, &default.to_string())
            .parse::<i64>()
            .unwrap_or(default)
    };
    Roll {
        ms: number("segment.ms", "log.roll.ms", defaults.ms),
        bytes: usize::try_from(number(
            "segment.bytes",
            "log.segment.bytes",
            i64::try_from(defaults.bytes).unwrap_or(i64::MAX),
        ))
        .unwrap_or(defaults.bytes),
    }
}

/// What the log of partition `index` of `topic` holds appends to.
fn limits(state: &State, node: i32, name: &str, index: i32, topic: &Topic, now: i64) -> Limits {
    let number = |key: &str, broker_key: &str, default: &str| {
        setting(state, node, topic, key, broker_key, default)
            .parse::<i64>()
            .unwrap_or(i64::MAX)
    };
    let size = |value: i64| usize::try_from(value).unwrap_or(usize::MAX);
    Limits {
        partition: format!("{name}-{index}"),
        max_message_bytes: size(number(
            "max.message.bytes",
            "message.max.bytes",
            MESSAGE_MAX_BYTES,
        )),
        segment_bytes: size(number("segment.bytes", "log.segment.bytes", "1073741824")),
        compacted: setting(
            state,
            node,
            topic,
            "cleanup.policy",
            "log.cleanup.policy",
            "delete",
        )
        .split(',')
        .any(|p| p.trim() == "compact"),
        create_time: setting(
            state,
            node,
            topic,
            "message.timestamp.type",
            "log.message.timestamp.type",
            "CreateTime",
        ) == "CreateTime",
        before_max_ms: number(
            "message.timestamp.before.max.ms",
            "log.message.timestamp.before.max.ms",
            &i64::MAX.to_string(),
        ),
        after_max_ms: number(
            "message.timestamp.after.max.ms",
            "log.message.timestamp.after.max.ms",
            &TIMESTAMP_AFTER_MAX_MS.to_string(),
        ),
        now,
    }
}

/// A partition's checks before its records are looked at, in Kafka's
/// order: the topic and partition, the records' form, acks, internal
/// topics, leadership, and (acks=all) the replicas in sync. The records'
/// limits when they pass.
#[allow(clippy::too_many_arguments)]
fn admit(
    cx: &Context<'_>,
    state: &State,
    request: &ProduceRequest<'_>,
    name: Option<&str>,
    index: i32,
    records: &[u8],
    live: &[i32],
    now: i64,
) -> Result<Limits, (Refusal, Option<(i32, i32)>)> {
    let refuse = |code: ErrorCode| (Refusal::from(code), None);
    let topic = name.and_then(|n| state.topics.get(n).map(|t| (n, t)));
    let Some((name, topic)) = topic else {
        return Err(refuse(if cx.version >= 13 {
            ErrorCode::UnknownTopicId
        } else {
            ErrorCode::UnknownTopicOrPartition
        }));
    };
    let Some(partition) = topic.partition(index) else {
        return Err(refuse(ErrorCode::UnknownTopicOrPartition));
    };
    check_request_records(cx.version, records).map_err(|r| (r, None))?;
    if !matches!(request.acks, -1..=1) {
        return Err(refuse(ErrorCode::InvalidRequiredAcks));
    }
    if is_internal(name) {
        return Err(refuse(ErrorCode::InvalidTopicException));
    }
    if partition.leader != cx.node_id {
        let leader = Some((partition.leader, partition.leader_epoch));
        return Err((ErrorCode::NotLeaderOrFollower.into(), leader));
    }
    if request.acks == -1 {
        // The ISR is the replicas on running brokers; Kafka asks for no
        // more of them than there are replicas.
        let min_isr = topic
            .config("min.insync.replicas")
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or(1)
            .min(partition.replicas.len());
        let in_sync = partition
            .replicas
            .iter()
            .filter(|r| live.contains(r))
            .count();
        if in_sync < min_isr {
            return Err((
                Refusal::with_log_start(ErrorCode::NotEnoughReplicas.code()),
                None,
            ));
        }
    }
    Ok(limits(state, cx.node_id, name, index, topic, now))
}

/// Appends each partition's batches on the partition's leader. Every
/// batch is checked first on tokio's blocking pool, without the lock;
/// the lock is taken only to append. With acks=0 nothing is answered, and
/// an error closes the connection, as Kafka closes it.
pub async fn produce(cx: &Context<'_>, request: &ProduceRequest<'_>) -> Outcome {
    let version = cx.version;
    let by_id = version >= 13;
    // A transactional batch needs a transactional id (Kafka checks the
    // id's authorization first, and refuses the whole request).
    let transactional = request.topic_data.iter().any(|t| {
        t.partition_data
            .iter()
            .any(|p| is_transactional(p.records.as_deref().unwrap_or_default()))
    });
    if transactional && request.transactional_id.is_none() {
        return refuse_all(cx, request, ErrorCode::TransactionalIdAuthorizationFailed);
    }
    let now = now_ms();
    let live = cx.shared.node_ids();
    let mut parts = Vec::new();
    let mut leaders: HashMap<(usize, i32), (i32, i32)> = HashMap::new();
    {
        let state = cx.shared.state();
        for (t, topic) in request.topic_data.iter().enumerate() {
            let name = if by_id {
                state.topics.name_of(topic.topic_id).map(str::to_owned)
            } else {
                Some(topic.name.to_string())
            };
            for p in topic.partition_data.iter() {
                let given = p.records.as_deref().unwrap_or_default();
                let admitted = admit(
                    cx,
                    &state,
                    request,
                    name.as_deref(),
                    p.index,
                    given,
                    &live,
                    now,
                );
                let (records, limits, result) = match admitted {
                    Ok(limits) => (given.to_vec(), Some(limits), Ok(Vec::new())),
                    Err((refusal, leader)) => {
                        if let Some(leader) = leader {
                            leaders.insert((t, p.index), leader);
                        }
                        (Vec::new(), None, Err(refusal))
                    }
                };
                parts.push(Part {
                    topic: t,
                    index: p.index,
                    name: name.clone(),
                    records,
                    limits,
                    result,
                });
            }
        }
    }
    let parts = tokio::task::spawn_blocking(move || {
        let mut budget = Budget(PRODUCE_DECOMPRESSION_BUDGET);
        for part in &mut parts {
            if let (Ok(_), Some(limits)) = (&part.result, &part.limits) {
                part.result = check_partition(&part.records, &mut budget, limits);
            }
        }
        parts
    })
    .await;
    let Ok(parts) = parts else {
        return Outcome::Close("the batch check did not finish".into());
    };

    let mut topics: Vec<Vec<produce_response::PartitionProduceResponse<'static>>> =
        request.topic_data.iter().map(|_| Vec::new()).collect();
    let mut endpoints = Vec::new();
    let mut failed = false;
    {
        let mut state = cx.shared.state();
        for part in parts {
            let mut response = produce_partition(part.index, 0);
            let name = part.name.as_deref().unwrap_or_default();
            let appended = part.result.and_then(|batches| {
                append(
                    cx.shared,
                    cx.node_id,
                    version,
                    &mut state,
                    name,
                    part.index,
                    &part.records,
                    &batches,
                    now,
                )
            });
            match appended {
                Ok((base_offset, append_time, log_start)) => {
                    response.base_offset = base_offset;
                    response.log_append_time_ms = append_time;
                    response.log_start_offset = log_start;
                }
                Err(refusal) => {
                    failed = true;
                    response.error_code = refusal.code;
                    response.error_message = refusal.message.map(Cow::Owned);
                    response.record_errors = refusal
                        .record_errors
                        .into_iter()
                        .map(
                            |(batch_index, message)| produce_response::BatchIndexAndErrorMessage {
                                batch_index,
                                batch_index_error_message: Some(Cow::Owned(message)),
                                ..Default::default()
                            },
                        )
                        .collect::<Vec<_>>()
                        .into();
                    if refusal.with_log_start {
                        response.log_start_offset = state
                            .topics
                            .get(name)
                            .and_then(|t| t.partition(part.index))
                            .map_or(-1, |p| p.log.log_start_offset());
                    }
                    // KIP-951's fields exist from v10.
                    if let Some(&(leader, leader_epoch)) = leaders
                        .get(&(part.topic, part.index))
                        .filter(|_| version >= 10)
                    {
                        response.current_leader = produce_response::LeaderIdAndEpoch {
                            leader_id: leader,
                            leader_epoch,
                            ..Default::default()
                        };
                        if !endpoints.contains(&leader) {
                            endpoints.push(leader);
                        }
                    }
                }
            }
            if let Some(list) = topics.get_mut(part.topic) {
                list.push(response);
            }
        }
    }
    cx.shared.appended.notify_waiters();
    if request.acks == 0 {
        if failed {
            return Outcome::Close("an acks=0 Produce failed".into());
        }
        return Outcome::NoResponse;
    }
    let responses = request
        .topic_data
        .iter()
        .zip(topics)
        .map(
            |(topic, partitions)| produce_response::TopicProduceResponse {
                name: if by_id {
                    Default::default()
                } else {
                    owned(&topic.name)
                },
                topic_id: topic.topic_id,
                partition_responses: partitions.into(),
                ..Default::default()
            },
        )
        .collect();
    Outcome::Respond(Box::new(ResponseBody::Produce(ProduceResponse {
        responses,
        node_endpoints: node_endpoints(cx.shared, &endpoints).into(),
        ..Default::default()
    })))
}

/// Whether the first batch of `records` is transactional.
fn is_transactional(records: &[u8]) -> bool {
    const TRANSACTIONAL_BIT: u8 = 0x10;
    // The low byte of the attributes.
    records.get(22).is_some_and(|b| b & TRANSACTIONAL_BIT != 0)
}

/// Every partition of the request answered `code`, as Kafka answers a
/// request it refuses whole (with acks=0: the connection closed).
fn refuse_all(cx: &Context<'_>, request: &ProduceRequest<'_>, code: ErrorCode) -> Outcome {
    if request.acks == 0 {
        return Outcome::Close(format!("an acks=0 Produce refused with {code:?}"));
    }
    let by_id = cx.version >= 13;
    let responses = request
        .topic_data
        .iter()
        .map(|topic| produce_response::TopicProduceResponse {
            name: if by_id {
                Default::default()
            } else {
                owned(&topic.name)
            },
            topic_id: topic.topic_id,
            partition_responses: topic
                .partition_data
                .iter()
                .map(|p| produce_partition(p.index, code.code()))
                .collect::<Vec<_>>()
                .into(),
            ..Default::default()
        })
        .collect();
    Outcome::Respond(Box::new(ResponseBody::Produce(ProduceResponse {
        responses,
        ..Default::default()
    })))
}

/// The endpoints of `nodes`, for KIP-951's `node_endpoints`.
fn node_endpoints(shared: &Shared, nodes: &[i32]) -> Vec<produce_response::NodeEndpoint<'static>> {
    nodes
        .iter()
        .filter_map(|&id| shared.broker(id))
        .map(|b| produce_response::NodeEndpoint {
            node_id: b.node_id,
            host: owned(&b.host),
            port: i32::from(b.port),
            rack: b.rack.as_deref().map(owned),
            ..Default::default()
        })
        .collect()
}

/// Appends checked batches: (base offset of the first, log append time or
/// -1, log start offset).
#[allow(clippy::too_many_arguments)]
fn append(
    shared: &Shared,
    node: i32,
    version: i16,
    state: &mut crate::state::State,
    name: &str,
    index: i32,
    records: &[u8],
    batches: &[CheckedBatch],
    now: i64,
) -> Result<(i64, i64, i64), Refusal> {
    let budget = shared.config.max_bytes;
    // Transactional batches: the producer id must hold the transactional
    // id's current epoch; from Produce v12 (transaction.version 2) the
    // partition joins the transaction implicitly, below it it must have
    // been added with AddPartitionsToTxn.
    let mut joins: Option<String> = None;
    for batch in batches {
        let h = &batch.header;
        if h.is_control() {
            return Err(Refusal::with_log_start(ErrorCode::InvalidRecord.code()));
        }
        if !h.is_transactional() {
            continue;
        }
        let tid = state
            .transactions
            .id_of(h.producer_id)
            .ok_or(Refusal::from(ErrorCode::InvalidProducerIdMapping))?;
        let txn = state
            .transactions
            .get(tid)
            .ok_or(Refusal::from(ErrorCode::InvalidProducerIdMapping))?;
        if h.producer_epoch != txn.epoch {
            return Err(ErrorCode::InvalidProducerEpoch.into());
        }
        let member =
            txn.status == TxnStatus::Ongoing && txn.partitions.contains(&(name.to_owned(), index));
        if !member {
            if version >= IMPLICIT_ADD_PRODUCE {
                joins = Some(tid.to_owned());
            } else if version >= ABORTABLE_PRODUCE {
                // As Kafka 4.4.0 answers a v11 batch of a partition not in
                // the transaction.
                return Err(ErrorCode::TransactionAbortable.into());
            } else {
                return Err(ErrorCode::InvalidTxnState.into());
            }
        }
    }
    let roll = state
        .topics
        .get(name)
        .map(|t| roll(state, node, t))
        .unwrap_or_default();
    let topic = state
        .topics
        .get_mut(name)
        .ok_or(Refusal::from(ErrorCode::UnknownTopicOrPartition))?;
    let append_time = topic.log_append_time();
    let partition = topic
        .partition_mut(index)
        .ok_or(Refusal::from(ErrorCode::UnknownTopicOrPartition))?;
    // Every batch is checked against the producer state before any is
    // appended, so that a refused batch leaves the partition unchanged.
    let mut first = None;
    let mut duplicate_time = None;
    let mut sizes = Vec::new();
    let first_sequence_from_zero = shared.config.first_sequence_from_zero;
    for batch in batches {
        let h = &batch.header;
        let ids = BatchIds {
            producer_id: h.producer_id,
            epoch: h.producer_epoch,
            first_sequence: h.base_sequence,
            last_offset_delta: h.last_offset_delta,
        };
        // Kafka 4.5's rule applies to a log that has never held a record.
        let from_zero = first_sequence_from_zero && partition.log.high_watermark() == 0;
        let base_offset = match partition.producers.check(&ids, from_zero) {
            // Kafka's producer state refuses the append: its log start
            // offset is in the answer.
            Verdict::Reject(code) => return Err(Refusal::with_log_start(code)),
            Verdict::Duplicate(offset, timestamp) => {
                duplicate_time = Some(timestamp);
                offset
            }
            Verdict::Append => {
                let base_offset = partition.log.high_watermark();
                let mut bytes = records
                    .get(batch.range.clone())
                    .ok_or(Refusal::from(ErrorCode::CorruptMessage))?
                    .to_vec();
                bytes[..8].copy_from_slice(&base_offset.to_be_bytes());
                // The partition leader epoch, outside the CRC: the
                // leader's current one, as Kafka's leader stamps every
                // batch it appends. Consumers take it as the epoch of
                // their position and validate it after a leader change
                // (OffsetForLeaderEpoch); a stale one sends them back.
                bytes[12..16].copy_from_slice(&partition.leader_epoch.to_be_bytes());
                let mut max_timestamp = h.max_timestamp;
                if append_time {
                    max_timestamp = now;
                    let attributes = h.attributes | LOG_APPEND_TIME_BIT;
                    bytes[21..23].copy_from_slice(&attributes.to_be_bytes());
                    bytes[35..43].copy_from_slice(&now.to_be_bytes());
                    let crc = crc32c::crc32c(&bytes[21..]);
                    bytes[17..21].copy_from_slice(&crc.to_be_bytes());
                }
                let last_offset = base_offset + i64::from(h.last_offset_delta);
                sizes.push((base_offset, bytes.len()));
                partition.log.push(
                    StoredBatch {
                        base_offset,
                        last_offset,
                        max_timestamp,
                        bytes,
                    },
                    roll,
                );
                partition.producers.record(&ids, base_offset, max_timestamp);
                if h.is_transactional() {
                    partition.txns.write(h.producer_id, base_offset);
                }
                base_offset
            }
        };
        first.get_or_insert(base_offset);
    }
    let base_offset = first.unwrap_or_else(|| partition.log.high_watermark());
    if let Some(tid) = joins {
        state.transactions.add_partition(&tid, name, index, now);
    }
    for (offset, size) in sizes {
        state.topics.appended(name, index, offset, size, budget);
    }
    let log_start = state
        .topics
        .get(name)
        .and_then(|t| t.partition(index))
        .map_or(0, |p| p.log.log_start_offset());
    // Kafka answers a duplicate with the timestamp it appended it at as
    // the log append time, whatever the topic's timestamp type.
    let append_time = match duplicate_time {
        Some(timestamp) => timestamp,
        None if append_time => now,
        None => -1,
    };
    Ok((base_offset, append_time, log_start))
}

/// A producer id for idempotent producers: a new one at epoch 0 for every
/// request, as Kafka 4.4.0 answers it, also when the producer names its id
/// and epoch to ask for a bump (only a transactional id's producer keeps
/// its id). Transactional ids are served by
/// [`transactions::init_producer_id`](super::transactions::init_producer_id).
pub fn init_producer_id(
    cx: &Context<'_>,
    _request: &InitProducerIdRequest<'_>,
) -> ResponseBody<'static> {
    let response = InitProducerIdResponse {
        producer_id: cx.shared.next_producer_id(),
        producer_epoch: 0,
        ..Default::default()
    };
    ResponseBody::InitProducerId(response)
}
