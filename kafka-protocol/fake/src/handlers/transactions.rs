//! Transactions: InitProducerId with a transactional id, AddPartitionsToTxn
//! (v0-3 for one transaction, v4+ batched), AddOffsetsToTxn,
//! TxnOffsetCommit, EndTxn (markers written into the partitions' logs;
//! from v5, transaction.version 2, the epoch bumped on every end and
//! returned), the timeout that aborts, and the admin side:
//! DescribeProducers, DescribeTransactions, ListTransactions.
//!
//! Each transactional id has a coordinator among the brokers (the same
//! hash as groups); the others answer NOT_COORDINATOR. Where Kafka answers
//! PRODUCER_FENCED, a version older than KIP-588's gets
//! INVALID_PRODUCER_EPOCH, as Kafka maps it.

use std::borrow::Cow;

use kafka_wire::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kafka_wire::messages::{
    add_partitions_to_txn_response, describe_producers_response, describe_transactions_response,
    list_transactions_response, txn_offset_commit_response, AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse, AddPartitionsToTxnRequest, AddPartitionsToTxnResponse,
    DescribeProducersRequest, DescribeProducersResponse, DescribeTransactionsRequest,
    DescribeTransactionsResponse, EndTxnRequest, EndTxnResponse, InitProducerIdRequest,
    InitProducerIdResponse, ListTransactionsRequest, ListTransactionsResponse,
    TxnOffsetCommitRequest, TxnOffsetCommitResponse,
};
use kafka_wire::runtime::StructArray;
use kafka_wire::{ErrorCode, ResponseBody};
use kafka_wire_records::{ControlRecord, ControlRecordType, RecordBatchBuilder};

use super::answers::unknown_first;
use super::commits::{metadata_fits, stored_metadata};
use super::groups::check_group;
use super::owned;
use super::produce::{now_ms, roll};
use crate::dispatch::Context;
use crate::state::log::StoredBatch;
use crate::state::transactions::{Txn, TxnStatus, MAX_TRANSACTION_TIMEOUT_MS};
use crate::state::{Shared, State};

/// The epoch past which a producer id is replaced (Kafka's
/// `Short.MaxValue - 1`).
const LAST_EPOCH: i16 = i16::MAX - 1;

fn code(error: ErrorCode) -> i16 {
    error.code()
}

/// PRODUCER_FENCED from `since` on, INVALID_PRODUCER_EPOCH before it.
fn fenced(version: i16, since: i16) -> i16 {
    if version >= since {
        code(ErrorCode::ProducerFenced)
    } else {
        code(ErrorCode::InvalidProducerEpoch)
    }
}

/// Whether this broker coordinates `transactional_id`.
fn coordinates(cx: &Context<'_>, transactional_id: &str) -> bool {
    cx.shared.coordinator(transactional_id) == cx.node_id
}

/// Kafka's transaction coordinator's first checks of a transactional id:
/// the empty one is INVALID_REQUEST (on any broker), then NOT_COORDINATOR
/// where this broker does not coordinate it.
fn check_transactional_id(cx: &Context<'_>, transactional_id: &str) -> Result<(), i16> {
    if transactional_id.is_empty() {
        Err(code(ErrorCode::InvalidRequest))
    } else if !coordinates(cx, transactional_id) {
        Err(code(ErrorCode::NotCoordinator))
    } else {
        Ok(())
    }
}

/// Checks a request's producer id and epoch against the transaction:
/// INVALID_PRODUCER_ID_MAPPING for an unknown id or another producer id,
/// the fenced error for another epoch.
fn check_producer(
    state: &State,
    transactional_id: &str,
    producer_id: i64,
    epoch: i16,
    fenced_code: i16,
) -> Result<(), i16> {
    let txn = state
        .transactions
        .get(transactional_id)
        .filter(|t| t.producer_id == producer_id)
        .ok_or(code(ErrorCode::InvalidProducerIdMapping))?;
    if txn.epoch != epoch {
        return Err(fenced_code);
    }
    Ok(())
}

/// InitProducerId with a transactional id: a new producer id at epoch 0,
/// or the transactional id's own at the next epoch, which fences the
/// producers of older epochs and aborts a transaction left open.
pub fn init_producer_id(
    cx: &Context<'_>,
    request: &InitProducerIdRequest<'_>,
    transactional_id: &str,
) -> ResponseBody<'static> {
    let answer = |error_code: i16, producer_id: i64, producer_epoch: i16| {
        ResponseBody::InitProducerId(InitProducerIdResponse {
            error_code,
            producer_id,
            producer_epoch,
            ..Default::default()
        })
    };
    if let Err(error) = check_transactional_id(cx, transactional_id) {
        return answer(error, -1, -1);
    }
    let timeout = request.transaction_timeout_ms;
    if timeout <= 0 || timeout > MAX_TRANSACTION_TIMEOUT_MS {
        return answer(code(ErrorCode::InvalidTransactionTimeout), -1, -1);
    }
    let now = now_ms();
    let budget = cx.shared.config.max_bytes;
    let mut state = cx.shared.state();
    let Some(txn) = state.transactions.get(transactional_id).cloned() else {
        let producer_id = cx.shared.next_producer_id();
        state.transactions.put(
            transactional_id,
            Txn {
                producer_id,
                epoch: 0,
                last_epoch: -1,
                timeout_ms: timeout,
                status: TxnStatus::Empty,
                start_ms: -1,
                partitions: Default::default(),
                groups: Default::default(),
                pending_offsets: Default::default(),
            },
        );
        return answer(0, producer_id, 0);
    };
    // KIP-360: a producer naming its id and epoch must hold the current
    // ones.
    if request.producer_id >= 0
        && (request.producer_id != txn.producer_id || request.producer_epoch != txn.epoch)
    {
        return answer(fenced(cx.version, 4), -1, -1);
    }
    let (mut producer_id, mut epoch) = (txn.producer_id, txn.epoch);
    if txn.status == TxnStatus::Ongoing {
        // Kafka fences the open transaction with a bumped epoch and aborts
        // it; the producer's retry then gets the epoch after that.
        (producer_id, epoch) = next_epoch(cx.shared, producer_id, epoch);
        complete(
            &mut state,
            transactional_id,
            false,
            producer_id,
            epoch,
            now,
            budget,
        );
    }
    (producer_id, epoch) = next_epoch(cx.shared, producer_id, epoch);
    if let Some(txn) = state.transactions.get(transactional_id).cloned() {
        state.transactions.put(
            transactional_id,
            Txn {
                producer_id,
                epoch,
                last_epoch: -1,
                timeout_ms: timeout,
                start_ms: -1,
                ..txn
            },
        );
    }
    answer(0, producer_id, epoch)
}

/// The epoch after `epoch`, or a new producer id at epoch 0 when the
/// epochs are exhausted.
fn next_epoch(shared: &Shared, producer_id: i64, epoch: i16) -> (i64, i16) {
    if epoch >= LAST_EPOCH - 1 {
        (shared.next_producer_id(), 0)
    } else {
        (producer_id, epoch + 1)
    }
}

/// Ends the transaction of `transactional_id`: a marker on each of its
/// partitions (written by `producer_id` at `epoch`, the epoch after the
/// end), its offsets stored on commit, and the state Complete*.
pub(crate) fn complete(
    state: &mut State,
    transactional_id: &str,
    committed: bool,
    producer_id: i64,
    epoch: i16,
    now: i64,
    budget: u64,
) {
    let status = if committed {
        TxnStatus::CompleteCommit
    } else {
        TxnStatus::CompleteAbort
    };
    let Some(closed) = state
        .transactions
        .close(transactional_id, status, producer_id, epoch)
    else {
        return;
    };
    // The markers carry the producer id that wrote the records.
    let marker_epoch = if producer_id == closed.producer_id {
        epoch
    } else {
        LAST_EPOCH
    };
    for (topic, partition) in &closed.partitions {
        write_marker(
            state,
            topic,
            *partition,
            closed.producer_id,
            marker_epoch,
            committed,
            now,
            budget,
        );
    }
    if committed {
        for ((group, topic, partition), offset) in closed.offsets {
            state.groups.store(&group, &topic, partition, offset);
        }
    }
}

/// Appends a commit or abort marker for the producer to a partition.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_marker(
    state: &mut State,
    topic: &str,
    index: i32,
    producer_id: i64,
    epoch: i16,
    committed: bool,
    now: i64,
    budget: u64,
) {
    let Some(roll) = state.topics.get(topic).map(|t| roll(state, -1, t)) else {
        return;
    };
    let Some(partition) = state
        .topics
        .get_mut(topic)
        .and_then(|t| t.partition_mut(index))
    else {
        return;
    };
    let offset = partition.log.high_watermark();
    let kind = if committed {
        ControlRecordType::Commit
    } else {
        ControlRecordType::Abort
    };
    let mut builder = RecordBatchBuilder::new(offset)
        .partition_leader_epoch(partition.leader_epoch)
        .producer_id(producer_id)
        .producer_epoch(epoch)
        .transactional(true);
    // The marker's value: version 0, coordinator epoch 0.
    let value = [0u8; 6];
    if builder
        .append_control(now, ControlRecord::new(kind), Some(&value))
        .is_err()
    {
        return;
    }
    let Ok(bytes) = builder.build() else { return };
    let size = bytes.len();
    partition.log.push(
        StoredBatch {
            base_offset: offset,
            last_offset: offset,
            max_timestamp: now,
            bytes,
        },
        roll,
    );
    partition.txns.end(producer_id, offset, committed);
    partition.producers.mark(producer_id, epoch, now);
    let log_start = partition.log.log_start_offset();
    partition.txns.trim(log_start);
    state.topics.appended(topic, index, offset, size, budget);
}

/// Aborts every transaction past its timeout, fencing its producer with
/// the next epoch, as Kafka's coordinator does. Called periodically.
pub(crate) fn expire(shared: &Shared) {
    let now = now_ms();
    let budget = shared.config.max_bytes;
    let mut state = shared.state();
    let expired = state.transactions.expired(now);
    if expired.is_empty() {
        return;
    }
    for transactional_id in expired {
        let Some(txn) = state.transactions.get(&transactional_id) else {
            continue;
        };
        let (producer_id, epoch) = next_epoch(shared, txn.producer_id, txn.epoch);
        complete(
            &mut state,
            &transactional_id,
            false,
            producer_id,
            epoch,
            now,
            budget,
        );
    }
    drop(state);
    shared.appended.notify_waiters();
}

/// Resolves and adds (or, verify-only, checks) one transaction's
/// partitions; the error of each partition, by topic.
#[allow(clippy::too_many_arguments)]
fn add_partitions(
    cx: &Context<'_>,
    state: &mut State,
    transactional_id: &str,
    producer_id: i64,
    epoch: i16,
    verify_only: bool,
    topics: &StructArray<'_, AddPartitionsToTxnTopic<'_>>,
    now: i64,
) -> Vec<add_partitions_to_txn_response::AddPartitionsToTxnTopicResult<'static>> {
    let known = |state: &State, topic: &str, p: i32| {
        state
            .topics
            .get(topic)
            .is_some_and(|t| t.partition(p).is_some())
    };
    let mut all_known = true;
    for topic in topics.iter() {
        for p in topic.partitions.iter() {
            all_known &= known(state, &topic.name, p);
        }
    }
    let common: Result<(), i16> = check_transactional_id(cx, transactional_id).and_then(|()| {
        check_producer(
            state,
            transactional_id,
            producer_id,
            epoch,
            fenced(cx.version, 2),
        )
    });
    // Partitions Kafka does not have are answered first, and the others
    // not attempted, before the transaction is asked.
    let mut answers = Vec::new();
    for topic in topics.iter() {
        for p in topic.partitions.iter() {
            let unknown = !known(state, &topic.name, p);
            let error = match &common {
                _ if unknown => code(ErrorCode::UnknownTopicOrPartition),
                _ if !all_known => code(ErrorCode::OperationNotAttempted),
                Err(e) => *e,
                Ok(()) if verify_only => {
                    let member = state.transactions.get(transactional_id).is_some_and(|t| {
                        t.status == TxnStatus::Ongoing
                            && t.partitions.contains(&(topic.name.to_string(), p))
                    });
                    if member {
                        0
                    } else if cx.version >= 5 {
                        code(ErrorCode::TransactionAbortable)
                    } else {
                        code(ErrorCode::InvalidTxnState)
                    }
                }
                Ok(()) => {
                    state
                        .transactions
                        .add_partition(transactional_id, &topic.name, p, now);
                    0
                }
            };
            let answer = add_partitions_to_txn_response::AddPartitionsToTxnPartitionResult {
                partition_index: p,
                partition_error_code: error,
                ..Default::default()
            };
            answers.push((topic.name.clone(), answer, unknown));
        }
    }
    unknown_first(answers)
        .into_iter()
        .map(
            |(name, results)| add_partitions_to_txn_response::AddPartitionsToTxnTopicResult {
                name: owned(&name),
                results_by_partition: results.into(),
                ..Default::default()
            },
        )
        .collect()
}

/// AddPartitionsToTxn: one transaction (v0-3) or many (v4+, with
/// verify-only checks as brokers send them).
pub fn add_partitions_to_txn(
    cx: &Context<'_>,
    request: &AddPartitionsToTxnRequest<'_>,
) -> ResponseBody<'static> {
    let now = now_ms();
    let mut state = cx.shared.state();
    let response = if cx.version < 4 {
        AddPartitionsToTxnResponse {
            results_by_topic_v3_and_below: add_partitions(
                cx,
                &mut state,
                &request.v3_and_below_transactional_id,
                request.v3_and_below_producer_id,
                request.v3_and_below_producer_epoch,
                false,
                &request.v3_and_below_topics,
                now,
            )
            .into(),
            ..Default::default()
        }
    } else {
        let results = request
            .transactions
            .iter()
            .map(
                |t| add_partitions_to_txn_response::AddPartitionsToTxnResult {
                    transactional_id: owned(&t.transactional_id),
                    topic_results: add_partitions(
                        cx,
                        &mut state,
                        &t.transactional_id,
                        t.producer_id,
                        t.producer_epoch,
                        t.verify_only,
                        &t.topics,
                        now,
                    )
                    .into(),
                    ..Default::default()
                },
            )
            .collect::<Vec<_>>();
        AddPartitionsToTxnResponse {
            results_by_transaction: results.into(),
            ..Default::default()
        }
    };
    ResponseBody::AddPartitionsToTxn(response)
}

/// AddOffsetsToTxn: the group joins the transaction.
pub fn add_offsets_to_txn(
    cx: &Context<'_>,
    request: &AddOffsetsToTxnRequest<'_>,
) -> ResponseBody<'static> {
    let tid = &request.transactional_id;
    let mut state = cx.shared.state();
    let error = if let Err(error) = check_transactional_id(cx, tid) {
        error
    } else {
        match check_producer(
            &state,
            tid,
            request.producer_id,
            request.producer_epoch,
            fenced(cx.version, 2),
        ) {
            Err(e) => e,
            Ok(()) => {
                state
                    .transactions
                    .add_group(tid, &request.group_id, now_ms());
                0
            }
        }
    };
    ResponseBody::AddOffsetsToTxn(AddOffsetsToTxnResponse {
        error_code: error,
        ..Default::default()
    })
}

/// TxnOffsetCommit, at the group's coordinator (topics by id from v6): the
/// offsets wait in the transaction and are stored when it commits. The group joins the
/// transaction (implicitly from v5, as transaction.version 2 has it).
pub fn txn_offset_commit(
    cx: &Context<'_>,
    request: &TxnOffsetCommitRequest<'_>,
) -> ResponseBody<'static> {
    let tid = &request.transactional_id;
    let mut state = cx.shared.state();
    // The group's checks, then the transactional id's, then the producer's.
    let common = if let Err(e) = check_group(cx, &request.group_id) {
        e
    } else if tid.is_empty() {
        code(ErrorCode::InvalidRequest)
    } else if let Err(e) = check_producer(
        &state,
        tid,
        request.producer_id,
        request.producer_epoch,
        fenced(cx.version, 3),
    ) {
        e
    } else {
        state.groups.check_txn_member(
            &request.group_id,
            &request.member_id,
            request.group_instance_id.as_deref(),
            request.generation_id_or_member_epoch,
        )
    };
    let by_id = cx.version >= 6;
    // A streams group checks the member's epoch against the tasks of the
    // partitions; one refused refuses them all, as in Kafka.
    let streams_refused = if state.groups.is_streams(&request.group_id) {
        let names: Vec<Option<String>> = request
            .topics
            .iter()
            .map(|t| {
                if by_id {
                    state.topics.name_of(t.topic_id).map(str::to_owned)
                } else {
                    Some(t.name.to_string())
                }
            })
            .collect();
        let named: Vec<(&str, i32)> = request
            .topics
            .iter()
            .zip(&names)
            .filter_map(|(t, name)| name.as_deref().map(|n| (t, n)))
            .flat_map(|(t, n)| {
                t.partitions
                    .iter()
                    .map(|p| (n, p.partition_index))
                    .collect::<Vec<_>>()
            })
            .collect();
        state
            .groups
            .streams_commit_codes(
                &request.group_id,
                &request.member_id,
                request.generation_id_or_member_epoch,
                true,
                cx.version,
                &named,
            )
            .and_then(|codes| codes.into_iter().find(|c| *c != 0))
    } else {
        None
    };
    let mut offsets = Vec::new();
    // Partitions Kafka does not have are answered first, before the group
    // and the transaction are asked.
    let mut answers = Vec::new();
    for t in request.topics.iter() {
        // From v6 topics are named by id.
        let name = if by_id {
            state.topics.name_of(t.topic_id).map(str::to_owned)
        } else {
            Some(t.name.to_string())
        };
        // Keyed by the request's name, borrowed: copied once, per topic.
        let key = (
            if by_id {
                Cow::Borrowed("")
            } else {
                t.name.clone()
            },
            t.topic_id,
        );
        for p in t.partitions.iter() {
            let known = name.as_deref().is_some_and(|n| {
                state
                    .topics
                    .get(n)
                    .is_some_and(|topic| topic.partition(p.partition_index).is_some())
            });
            let error = if by_id && name.is_none() {
                code(ErrorCode::UnknownTopicId)
            } else if !known {
                code(ErrorCode::UnknownTopicOrPartition)
            } else if common != 0 {
                common
            } else if let Some(refused) = streams_refused {
                refused
            } else if !metadata_fits(p.committed_metadata.as_deref()) {
                code(ErrorCode::OffsetMetadataTooLarge)
            } else {
                offsets.push((
                    name.clone().unwrap_or_default(),
                    p.partition_index,
                    (
                        p.committed_offset,
                        p.committed_leader_epoch,
                        Some(stored_metadata(p.committed_metadata.as_deref())),
                    ),
                ));
                0
            };
            let answer = txn_offset_commit_response::TxnOffsetCommitResponsePartition {
                partition_index: p.partition_index,
                error_code: error,
                ..Default::default()
            };
            answers.push((key.clone(), answer, !known));
        }
    }
    let topics: Vec<_> = unknown_first(answers)
        .into_iter()
        .map(|((name, topic_id), partitions)| {
            txn_offset_commit_response::TxnOffsetCommitResponseTopic {
                name: owned(&name),
                topic_id,
                partitions: partitions.into(),
                ..Default::default()
            }
        })
        .collect();
    if !offsets.is_empty() {
        state
            .transactions
            .add_group(tid, &request.group_id, now_ms());
        state
            .transactions
            .add_offsets(tid, &request.group_id, offsets);
    }
    ResponseBody::TxnOffsetCommit(TxnOffsetCommitResponse {
        topics: topics.into(),
        ..Default::default()
    })
}

/// EndTxn: commit or abort the ongoing transaction. From v5 the epoch is
/// bumped by every end and returned, and a retry with the epoch before
/// the bump gets the same answer.
pub fn end_txn(cx: &Context<'_>, request: &EndTxnRequest<'_>) -> ResponseBody<'static> {
    let answer = |error_code: i16, producer_id: i64, producer_epoch: i16| {
        ResponseBody::EndTxn(EndTxnResponse {
            error_code,
            producer_id,
            producer_epoch,
            ..Default::default()
        })
    };
    let tid = &request.transactional_id;
    if let Err(error) = check_transactional_id(cx, tid) {
        return answer(error, -1, -1);
    }
    let bump = cx.version >= 5;
    let now = now_ms();
    let budget = cx.shared.config.max_bytes;
    let mut state = cx.shared.state();
    let Some(txn) = state.transactions.get(tid).cloned() else {
        return answer(code(ErrorCode::InvalidProducerIdMapping), -1, -1);
    };
    if txn.producer_id != request.producer_id {
        return answer(code(ErrorCode::InvalidProducerIdMapping), -1, -1);
    }
    let done = if request.committed {
        TxnStatus::CompleteCommit
    } else {
        TxnStatus::CompleteAbort
    };
    if request.producer_epoch != txn.epoch {
        // A retry of an end that bumped the epoch (or an abort after the
        // timeout aborted it) gets the answer again.
        let retry = bump && txn.last_epoch >= 0 && request.producer_epoch == txn.last_epoch;
        if retry && txn.status == done {
            return answer(0, txn.producer_id, txn.epoch);
        }
        if retry && txn.status != TxnStatus::Ongoing {
            return answer(code(ErrorCode::InvalidTxnState), -1, -1);
        }
        return answer(fenced(cx.version, 2), -1, -1);
    }
    match txn.status {
        TxnStatus::Ongoing => {}
        // transaction.version 2 aborts an empty transaction (bumping the
        // epoch); v1 retries of a completed end get the answer again.
        TxnStatus::Empty | TxnStatus::CompleteCommit | TxnStatus::CompleteAbort
            if bump && !request.committed => {}
        status if !bump && status == done => return answer(0, -1, -1),
        _ => return answer(code(ErrorCode::InvalidTxnState), -1, -1),
    }
    let (producer_id, epoch) = if bump {
        next_epoch(cx.shared, txn.producer_id, txn.epoch)
    } else {
        (txn.producer_id, txn.epoch)
    };
    complete(
        &mut state,
        tid,
        request.committed,
        producer_id,
        epoch,
        now,
        budget,
    );
    drop(state);
    cx.shared.appended.notify_waiters();
    if bump {
        answer(0, producer_id, epoch)
    } else {
        answer(0, -1, -1)
    }
}

/// DescribeProducers: the producers each partition's leader knows.
pub fn describe_producers(
    cx: &Context<'_>,
    request: &DescribeProducersRequest<'_>,
) -> ResponseBody<'static> {
    let state = cx.shared.state();
    let topics = request
        .topics
        .iter()
        .map(|t| {
            let partitions = t
                .partition_indexes
                .iter()
                .map(|index| {
                    let mut response = describe_producers_response::PartitionResponse {
                        partition_index: index,
                        ..Default::default()
                    };
                    match state.topics.get(&t.name).and_then(|t| t.partition(index)) {
                        None => {
                            response.error_code = code(ErrorCode::UnknownTopicOrPartition);
                        }
                        Some(p) if p.leader != cx.node_id => {
                            response.error_code = code(ErrorCode::NotLeaderOrFollower);
                        }
                        Some(p) => {
                            response.active_producers = p
                                .producers
                                .active()
                                .into_iter()
                                .map(|a| describe_producers_response::ProducerState {
                                    producer_id: a.producer_id,
                                    producer_epoch: i32::from(a.epoch),
                                    last_sequence: a.last_sequence,
                                    last_timestamp: a.last_timestamp,
                                    coordinator_epoch: a.coordinator_epoch,
                                    current_txn_start_offset: p
                                        .txns
                                        .open_since(a.producer_id)
                                        .unwrap_or(-1),
                                    ..Default::default()
                                })
                                .collect::<Vec<_>>()
                                .into();
                        }
                    }
                    response
                })
                .collect::<Vec<_>>();
            describe_producers_response::TopicResponse {
                name: owned(&t.name),
                partitions: partitions.into(),
                ..Default::default()
            }
        })
        .collect::<Vec<_>>();
    ResponseBody::DescribeProducers(DescribeProducersResponse {
        topics: topics.into(),
        ..Default::default()
    })
}

/// DescribeTransactions: each transactional id's state, at its
/// coordinator.
pub fn describe_transactions(
    cx: &Context<'_>,
    request: &DescribeTransactionsRequest<'_>,
) -> ResponseBody<'static> {
    let state = cx.shared.state();
    let states = request
        .transactional_ids
        .iter()
        .map(|tid| {
            // A refused id's producer, epoch and start time stay 0.
            let mut out = describe_transactions_response::TransactionState {
                transactional_id: owned(tid),
                transaction_state: Cow::Borrowed(""),
                ..Default::default()
            };
            if let Err(error) = check_transactional_id(cx, tid) {
                out.error_code = error;
                return out;
            }
            let Some(txn) = state.transactions.get(tid) else {
                out.error_code = code(ErrorCode::TransactionalIdNotFound);
                return out;
            };
            out.transaction_state = Cow::Borrowed(txn.status.name());
            out.transaction_timeout_ms = txn.timeout_ms;
            out.transaction_start_time_ms = txn.start_ms;
            out.producer_id = txn.producer_id;
            out.producer_epoch = txn.epoch;
            let mut by_topic: Vec<(&str, Vec<i32>)> = Vec::new();
            for (topic, partition) in &txn.partitions {
                match by_topic.last_mut() {
                    Some((name, partitions)) if *name == topic.as_str() => {
                        partitions.push(*partition);
                    }
                    _ => by_topic.push((topic, vec![*partition])),
                }
            }
            let topics: Vec<_> = by_topic
                .into_iter()
                .map(
                    |(topic, partitions)| describe_transactions_response::TopicData {
                        topic: owned(topic),
                        partitions: partitions.into(),
                        ..Default::default()
                    },
                )
                .collect();
            out.topics = topics.into();
            out
        })
        .collect::<Vec<_>>();
    ResponseBody::DescribeTransactions(DescribeTransactionsResponse {
        transaction_states: states.into(),
        ..Default::default()
    })
}

/// ListTransactions: the transactions this broker coordinates, filtered
/// by state, producer id, duration (v1+) and id pattern (v2+, a regular
/// expression in Kafka; here a literal, `.*` or a prefix ending in `.*`).
pub fn list_transactions(
    cx: &Context<'_>,
    request: &ListTransactionsRequest<'_>,
) -> ResponseBody<'static> {
    let now = now_ms();
    let unknown: Vec<Cow<'static, str>> = request
        .state_filters
        .iter()
        .filter(|s| !TxnStatus::KAFKA_NAMES.contains(&s.as_ref()))
        .map(|s| owned(s))
        .collect();
    let pattern = request.transactional_id_pattern.as_deref().unwrap_or("");
    let matches = |tid: &str| match pattern {
        "" | ".*" => true,
        p => match p.strip_suffix(".*") {
            Some(prefix) if !prefix.contains(['.', '*', '+', '?', '[', '(', '|', '^', '$']) => {
                tid.starts_with(prefix)
            }
            _ => tid == p,
        },
    };
    let producer_ids: std::collections::HashSet<i64> = request.producer_id_filters.iter().collect();
    let state = cx.shared.state();
    let mut states: Vec<list_transactions_response::TransactionState<'static>> = state
        .transactions
        .iter()
        .filter(|(tid, _)| coordinates(cx, tid))
        .filter(|(_, txn)| {
            request.state_filters.is_empty()
                || request
                    .state_filters
                    .iter()
                    .any(|s| s.as_ref() == txn.status.name())
        })
        .filter(|(_, txn)| producer_ids.is_empty() || producer_ids.contains(&txn.producer_id))
        .filter(|(_, txn)| {
            request.duration_filter < 0
                || (txn.status == TxnStatus::Ongoing
                    && now.saturating_sub(txn.start_ms) >= request.duration_filter)
        })
        .filter(|(tid, _)| matches(tid))
        .map(|(tid, txn)| list_transactions_response::TransactionState {
            transactional_id: owned(tid),
            producer_id: txn.producer_id,
            transaction_state: Cow::Borrowed(txn.status.name()),
            ..Default::default()
        })
        .collect();
    states.sort_by(|a, b| a.transactional_id.cmp(&b.transactional_id));
    ResponseBody::ListTransactions(ListTransactionsResponse {
        unknown_state_filters: unknown,
        transaction_states: states.into(),
        ..Default::default()
    })
}
