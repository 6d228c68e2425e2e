//! Produce and InitProducerId.

use kafka_wire::messages::{
    produce_response, InitProducerIdRequest, InitProducerIdResponse, ProduceRequest,
    ProduceResponse,
};
use kafka_wire::ResponseBody;

use super::owned;
use crate::broker::Broker;
use crate::log::errors;

/// Appends each partition's batches. Topics are named before v13 and given
/// by id from v13. With acks=0 no response is sent.
pub fn produce(
    broker: &Broker,
    request: &ProduceRequest<'_>,
    version: i16,
) -> Option<ResponseBody<'static>> {
    let mut log = broker.log();
    let mut responses = Vec::new();
    for topic in &request.topic_data {
        let name = if version >= 13 {
            log.topic_by_id(topic.topic_id)
                .map(|(name, _)| name.to_owned())
        } else {
            Some(topic.name.to_string())
        };
        let partition_responses = topic
            .partition_data
            .iter()
            .map(|p| {
                let records = p.records.as_deref().unwrap_or_default();
                let appended = match &name {
                    None => Err(errors::UNKNOWN_TOPIC_ID),
                    Some(name) => log
                        .partition_mut(name, p.index)
                        .ok_or(errors::UNKNOWN_TOPIC_OR_PARTITION)
                        .and_then(|partition| partition.append(records)),
                };
                let (error_code, base_offset) = match appended {
                    Ok(offset) => (0, offset),
                    Err(code) => (code, -1),
                };
                produce_response::PartitionProduceResponse {
                    index: p.index,
                    error_code,
                    base_offset,
                    log_start_offset: 0,
                    ..Default::default()
                }
            })
            .collect();
        responses.push(produce_response::TopicProduceResponse {
            name: owned(&topic.name),
            topic_id: topic.topic_id,
            partition_responses,
            ..Default::default()
        });
    }
    drop(log);
    broker.appended.notify_waiters();
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
