//! Produce and InitProducerId.

use kafka_wire::messages::{
    produce_response, InitProducerIdRequest, InitProducerIdResponse, ProduceRequest,
    ProduceResponse,
};
use kafka_wire::ResponseBody;

use super::strings::owned;
use crate::broker::Broker;
use crate::errors;
use crate::validate::{check_partition, Budget};

/// Appends each partition's batches. Topics are named before v13 and given
/// by id from v13. With acks=0 no response is sent.
///
/// Every batch is checked first (see [`crate::validate`]), on tokio's
/// blocking pool and without the log lock, since decompressing can take a
/// while: other connections are served meanwhile. The lock is taken only to
/// append what passed.
pub async fn produce(
    broker: &Broker,
    request: &ProduceRequest<'_>,
    version: i16,
) -> Option<ResponseBody<'static>> {
    // (topic index, partition index, records), copied so that the check can
    // run on another thread.
    let mut parts: Vec<(usize, i32, Vec<u8>)> = Vec::new();
    for (t, topic) in request.topic_data.iter().enumerate() {
        for p in topic.partition_data.iter() {
            let records = p.records.as_deref().unwrap_or_default();
            parts.push((t, p.index, records.to_vec()));
        }
    }
    let budget = broker.config.produce_decompression_budget;
    let checked = tokio::task::spawn_blocking(move || {
        let mut budget = Budget::new(budget);
        parts
            .into_iter()
            .map(|(t, index, records)| {
                let batches = check_partition(&records, &mut budget);
                (t, index, records, batches)
            })
            .collect::<Vec<_>>()
    })
    .await;
    // Should the check ever fail to finish, nothing is appended.
    let checked = checked.unwrap_or_else(|_| {
        let mut refused = Vec::new();
        for (t, topic) in request.topic_data.iter().enumerate() {
            for p in topic.partition_data.iter() {
                refused.push((t, p.index, Vec::new(), Err(errors::UNKNOWN_SERVER_ERROR)));
            }
        }
        refused
    });

    let mut log = broker.log();
    let names: Vec<Option<String>> = request
        .topic_data
        .iter()
        .map(|topic| {
            if version >= 13 {
                log.topic_by_id(topic.topic_id)
                    .map(|(name, _)| name.to_owned())
            } else {
                Some(topic.name.to_string())
            }
        })
        .collect();
    let mut partition_responses: Vec<Vec<produce_response::PartitionProduceResponse>> =
        names.iter().map(|_| Vec::new()).collect();
    for (t, index, records, batches) in checked {
        let appended = match names.get(t).and_then(|name| name.as_deref()) {
            None => Err(errors::UNKNOWN_TOPIC_ID),
            Some(name) => log
                .partition_mut(name, index)
                .ok_or(errors::UNKNOWN_TOPIC_OR_PARTITION)
                .and_then(|partition| {
                    batches.and_then(|batches| partition.append(&records, &batches))
                }),
        };
        let (error_code, base_offset) = match appended {
            Ok(offset) => (0, offset),
            Err(code) => (code, -1),
        };
        if let Some(responses) = partition_responses.get_mut(t) {
            responses.push(produce_response::PartitionProduceResponse {
                index,
                error_code,
                base_offset,
                log_start_offset: 0,
                ..Default::default()
            });
        }
    }
    drop(log);
    broker.appended.notify_waiters();
    let responses: Vec<_> = request
        .topic_data
        .iter()
        .zip(partition_responses)
        .map(
            |(topic, partition_responses)| produce_response::TopicProduceResponse {
                name: owned(&topic.name),
                topic_id: topic.topic_id,
                partition_responses: partition_responses.into(),
                ..Default::default()
            },
        )
        .collect();
    (request.acks != 0).then(|| {
        ResponseBody::Produce(ProduceResponse {
            responses: responses.into(),
            ..Default::default()
        })
    })
}

/// A new producer id at epoch 0, for idempotent producers. (Transactions
/// are not supported; their later requests get UNSUPPORTED_VERSION.)
pub fn init_producer_id(
    broker: &Broker,
    _request: &InitProducerIdRequest<'_>,
) -> ResponseBody<'static> {
    ResponseBody::InitProducerId(InitProducerIdResponse {
        producer_id: broker.next_producer_id(),
        producer_epoch: 0,
        ..Default::default()
    })
}
