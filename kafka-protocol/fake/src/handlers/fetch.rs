//! Fetch: long polls (up to max_wait_ms for min_bytes), size limits applied
//! before anything is copied, topic ids from v13, fetch sessions (KIP-227)
//! including incremental ones, the current leader for a partition led
//! elsewhere (KIP-951), and `read_committed` reads (up to the last stable
//! offset, with the aborted transactions listed).

use std::borrow::Cow;
use std::collections::HashSet;
use std::time::Duration;

use kafka_wire::messages::{fetch_response, FetchRequest, FetchResponse};
use kafka_wire::runtime::Uuid;
use kafka_wire::{ErrorCode, ResponseBody};

use super::owned;
use crate::config::{MAX_FETCH_BYTES, MAX_FETCH_WAIT};
use crate::dispatch::Context;
use crate::state::sessions::{SessionKey, SessionPartition};
use crate::state::State;

/// The isolation level that reads only committed records.
const READ_COMMITTED: i8 = 1;

/// The epoch that closes a session, or asks for none.
const FINAL_EPOCH: i32 = -1;

/// One partition to read.
#[derive(Debug, Clone)]
struct Wanted {
    key: SessionKey,
    fetch_offset: i64,
    max_bytes: i32,
    /// The client's current leader epoch (-1: not checked).
    leader_epoch: i32,
    /// In an incremental session: the high watermark and log start last
    /// sent, to leave the partition out when nothing changed.
    last_sent: Option<(i64, i64)>,
}

/// What the request resolved to.
struct Plan {
    session_id: i32,
    incremental: bool,
    wanted: Vec<Wanted>,
}

/// Answers a Fetch, waiting for appends when fewer than min_bytes are
/// there and no partition has an error.
pub async fn fetch(cx: &Context<'_>, request: &FetchRequest<'_>) -> ResponseBody<'static> {
    let plan = match plan(cx, request) {
        Ok(plan) => plan,
        Err(code) => {
            return ResponseBody::Fetch(FetchResponse {
                error_code: code,
                ..Default::default()
            })
        }
    };
    let wait =
        Duration::from_millis(u64::try_from(request.max_wait_ms).unwrap_or(0)).min(MAX_FETCH_WAIT);
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let appended = cx.shared.appended.notified();
        tokio::pin!(appended);
        appended.as_mut().enable();
        let available = {
            let state = cx.shared.state();
            available(&state, cx, &plan, request.isolation_level == READ_COMMITTED)
        };
        let enough = match available {
            None => true,
            Some(bytes) => i64::try_from(bytes).unwrap_or(i64::MAX) >= i64::from(request.min_bytes),
        };
        if enough || tokio::time::Instant::now() >= deadline {
            let mut state = cx.shared.state();
            return ResponseBody::Fetch(read(&mut state, cx, request, &plan));
        }
        let _ = tokio::time::timeout_at(deadline, appended).await;
    }
}

/// The partition key of a request topic: by id from v13, else by name.
fn key(version: i16, topic_id: Uuid, name: &str, partition: i32) -> SessionKey {
    if version >= 13 {
        (topic_id, String::new(), partition)
    } else {
        (Uuid::ZERO, name.to_owned(), partition)
    }
}

/// Resolves the session: sessionless, a new full session, or an
/// incremental update of an existing one.
fn plan(cx: &Context<'_>, request: &FetchRequest<'_>) -> Result<Plan, i16> {
    let version = cx.version;
    let mut seen = HashSet::new();
    let mut requested = Vec::new();
    for topic in request.topics.iter() {
        for p in topic.partitions.iter() {
            let key = key(version, topic.topic_id, &topic.topic, p.partition);
            // A partition named twice is read once.
            if seen.insert(key.clone()) {
                requested.push(Wanted {
                    key,
                    fetch_offset: p.fetch_offset,
                    max_bytes: p.partition_max_bytes,
                    leader_epoch: p.current_leader_epoch,
                    last_sent: None,
                });
            }
        }
    }
    let mut state = cx.shared.state();
    let sessions = state.sessions.entry(cx.node_id).or_default();
    let (id, epoch) = (request.session_id, request.session_epoch);
    if version < 7 || epoch == FINAL_EPOCH {
        if id != 0 {
            sessions.close(id);
        }
        return Ok(Plan {
            session_id: 0,
            incremental: false,
            wanted: requested,
        });
    }
    if epoch == 0 {
        if id != 0 {
            sessions.close(id);
        }
        let new_id = sessions.open();
        if let Some(session) = sessions.get_mut(new_id) {
            for w in &requested {
                session.partitions.insert(
                    w.key.clone(),
                    SessionPartition {
                        fetch_offset: w.fetch_offset,
                        max_bytes: w.max_bytes,
                        ..Default::default()
                    },
                );
            }
        }
        return Ok(Plan {
            session_id: new_id,
            incremental: false,
            wanted: requested,
        });
    }
    let session = sessions.resume(id, epoch)?;
    let mut epochs = Vec::new();
    for w in requested {
        if w.leader_epoch >= 0 {
            epochs.push((w.key.clone(), w.leader_epoch));
        }
        let entry = session.partitions.entry(w.key).or_default();
        entry.fetch_offset = w.fetch_offset;
        entry.max_bytes = w.max_bytes;
    }
    for topic in request.forgotten_topics_data.iter() {
        for partition in topic.partitions.iter() {
            session
                .partitions
                .remove(&key(version, topic.topic_id, &topic.topic, partition));
        }
    }
    let wanted = session
        .partitions
        .iter()
        .map(|(key, p)| Wanted {
            key: key.clone(),
            fetch_offset: p.fetch_offset,
            max_bytes: p.max_bytes,
            leader_epoch: epochs
                .iter()
                .find(|(k, _)| k == key)
                .map_or(-1, |(_, epoch)| *epoch),
            last_sent: p.last_high_watermark.zip(p.last_log_start),
        })
        .collect();
    Ok(Plan {
        session_id: id,
        incremental: true,
        wanted,
    })
}

/// The name of a wanted partition's topic.
fn topic_name<'s>(state: &'s State, key: &'s SessionKey) -> Option<&'s str> {
    if key.0 != Uuid::ZERO {
        state.topics.name_of(key.0)
    } else {
        Some(key.1.as_str())
    }
}

/// Record bytes there to read, or `None` when the fetch is answered at
/// once: a partition has an error, or there is no partition to read (a
/// request that names none outside an incremental session, or a session
/// that holds none), as Kafka answers such a fetch without waiting (a
/// consumer's last fetch, which closes its session, names none).
fn available(state: &State, cx: &Context<'_>, plan: &Plan, committed: bool) -> Option<usize> {
    if plan.wanted.is_empty() {
        return None;
    }
    let mut total = 0usize;
    for w in &plan.wanted {
        let partition = topic_name(state, &w.key)
            .and_then(|name| state.topics.get(name))
            .and_then(|t| t.partition(w.key.2))?;
        if partition.leader != cx.node_id
            || partition.check_epoch(w.leader_epoch).is_err()
            || !partition.log.in_range(w.fetch_offset)
        {
            return None;
        }
        let until = if committed {
            partition
                .txns
                .last_stable_offset(partition.log.high_watermark())
        } else {
            i64::MAX
        };
        total = total.saturating_add(partition.log.available(w.fetch_offset, until));
    }
    Some(total)
}

/// One pass over the wanted partitions. The records of all partitions stay
/// within the request's max_bytes (capped at Kafka's `fetch.max.bytes`),
/// each partition's within its own limit, except that the first partition
/// with data returns at least one batch.
fn read(
    state: &mut State,
    cx: &Context<'_>,
    request: &FetchRequest<'_>,
    plan: &Plan,
) -> FetchResponse<'static> {
    let version = cx.version;
    let committed = request.isolation_level == READ_COMMITTED;
    let mut budget = usize::try_from(request.max_bytes)
        .unwrap_or(0)
        .min(MAX_FETCH_BYTES);
    let mut at_least_one = true;
    let mut topics: Vec<fetch_response::FetchableTopicResponse<'static>> = Vec::new();
    let mut leaders = Vec::new();
    let mut sent = Vec::new();
    for w in &plan.wanted {
        let mut data = fetch_response::PartitionData {
            partition_index: w.key.2,
            records: Some(Cow::Borrowed(&[])),
            ..Default::default()
        };
        let name = topic_name(state, &w.key).map(str::to_owned);
        let partition = name
            .as_deref()
            .and_then(|n| state.topics.get(n))
            .and_then(|t| t.partition(w.key.2));
        match partition {
            None if w.key.0 != Uuid::ZERO && name.is_none() => {
                data.error_code = ErrorCode::UnknownTopicId.code();
            }
            None => data.error_code = ErrorCode::UnknownTopicOrPartition.code(),
            Some(p) if p.check_epoch(w.leader_epoch).is_err() => {
                data.error_code = p.check_epoch(w.leader_epoch).err().unwrap_or_default();
            }
            Some(p) if p.leader != cx.node_id => {
                data.error_code = ErrorCode::NotLeaderOrFollower.code();
                if version >= 12 {
                    data.current_leader = fetch_response::LeaderIdAndEpoch {
                        leader_id: p.leader,
                        leader_epoch: p.leader_epoch,
                        ..Default::default()
                    };
                }
                if !leaders.contains(&p.leader) {
                    leaders.push(p.leader);
                }
            }
            Some(p) => {
                let stable = p.txns.last_stable_offset(p.log.high_watermark());
                data.high_watermark = p.log.high_watermark();
                data.last_stable_offset = stable;
                data.log_start_offset = p.log.log_start_offset();
                let limit = usize::try_from(w.max_bytes).unwrap_or(0).min(budget);
                // read_committed reads stop at the last stable offset and
                // list the aborted transactions of what they return; Kafka
                // sends the list only to them (null otherwise).
                let until = if committed { stable } else { i64::MAX };
                data.aborted_transactions = None;
                match p.log.fetch(w.fetch_offset, until, limit, at_least_one) {
                    Ok(read) => {
                        let records = read.bytes;
                        // Kafka lists the aborted transactions that
                        // overlap what it read: up to the next batch, the
                        // next segment or the log end.
                        if committed {
                            let aborted = if records.is_empty() {
                                Vec::new()
                            } else {
                                p.txns.aborted_in(w.fetch_offset, read.next)
                            };
                            data.aborted_transactions = Some(
                                aborted
                                    .into_iter()
                                    .map(|a| fetch_response::AbortedTransaction {
                                        producer_id: a.producer_id,
                                        first_offset: a.first_offset,
                                        ..Default::default()
                                    })
                                    .collect::<Vec<_>>()
                                    .into(),
                            );
                        }
                        if !records.is_empty() {
                            at_least_one = false;
                        }
                        budget = budget.saturating_sub(records.len());
                        data.records = Some(Cow::Owned(records));
                    }
                    Err(code) => data.error_code = code,
                }
            }
        }
        if data.error_code != 0 {
            // Kafka's refusal carries no offsets. What its broker refuses
            // before reading (an unknown topic id, topic or partition)
            // lists no aborted transactions; what its log refuses (an
            // epoch, a leader, an offset) has none at all.
            data.high_watermark = -1;
            data.last_stable_offset = -1;
            data.log_start_offset = -1;
            data.records = Some(Cow::Borrowed(&[]));
            let before_reading = data.error_code == ErrorCode::UnknownTopicId.code()
                || data.error_code == ErrorCode::UnknownTopicOrPartition.code();
            if !before_reading {
                data.aborted_transactions = None;
            }
        }
        let news = data.error_code != 0
            || data.records.as_ref().is_some_and(|r| !r.is_empty())
            || w.last_sent != Some((data.high_watermark, data.log_start_offset));
        if plan.incremental && !news {
            continue;
        }
        if data.error_code == 0 {
            sent.push((w.key.clone(), data.high_watermark, data.log_start_offset));
        }
        let same_topic = topics.last().is_some_and(|t| {
            if w.key.0 != Uuid::ZERO {
                t.topic_id == w.key.0
            } else {
                t.topic == w.key.1.as_str()
            }
        });
        if !same_topic {
            topics.push(fetch_response::FetchableTopicResponse {
                topic: if version >= 13 {
                    Cow::Borrowed("")
                } else {
                    owned(&w.key.1)
                },
                topic_id: w.key.0,
                ..Default::default()
            });
        }
        if let Some(topic) = topics.last_mut() {
            topic.partitions.push(data);
        }
    }
    if plan.session_id != 0 {
        if let Some(session) = state
            .sessions
            .get_mut(&cx.node_id)
            .and_then(|s| s.get_mut(plan.session_id))
        {
            for (key, high_watermark, log_start) in sent {
                if let Some(p) = session.partitions.get_mut(&key) {
                    p.last_high_watermark = Some(high_watermark);
                    p.last_log_start = Some(log_start);
                }
            }
        }
    }
    // KIP-951's fields exist from v12 (current_leader) and v16
    // (node_endpoints); a field a version lacks must stay at its default.
    if version < 16 {
        leaders.clear();
    }
    let node_endpoints = leaders
        .iter()
        .filter_map(|&id| cx.shared.broker(id))
        .map(|b| fetch_response::NodeEndpoint {
            node_id: b.node_id,
            host: owned(&b.host),
            port: i32::from(b.port),
            rack: b.rack.as_deref().map(owned),
            ..Default::default()
        })
        .collect();
    FetchResponse {
        session_id: plan.session_id,
        responses: topics.into(),
        node_endpoints,
        ..Default::default()
    }
}
