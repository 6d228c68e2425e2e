//! A minimal client for tests and examples: one connection, typed requests
//! in size-prefixed frames (`kafka_wire::frame::FrameCodec`), typed
//! responses. Not a Kafka client: no retries, no metadata cache.

use kafka_wire::IntoOwned;
use std::borrow::Cow;

use futures::{SinkExt, StreamExt};
use kafka_wire::frame::{FrameCodec, RequestFrame, ResponseFrame};
use kafka_wire::messages::{
    metadata_request, produce_request, MetadataRequest, ProduceRequest, RequestHeader,
};
use kafka_wire::{ErrorCode, RequestBody, ResponseBody};
use kafka_wire_records::RecordBatchBuilder;
use tokio::net::TcpStream;
use tokio_util::codec::Framed;

/// Why an exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The socket failed or the frame was refused.
    #[error("connection: {0}")]
    Connection(String),
    /// The broker closed the connection.
    #[error("the broker closed the connection")]
    Closed,
    /// A message did not encode or decode.
    #[error("codec: {0}")]
    Codec(String),
    /// The broker answered with an error code: shown as Kafka names it,
    /// `NOT_LEADER_OR_FOLLOWER (6)`.
    #[error("{}", ErrorCode::from_code(*.0))]
    Kafka(i16),
}

/// One connection to one broker.
#[derive(Debug)]
pub struct Probe {
    frames: Framed<TcpStream, FrameCodec>,
    correlation_id: i32,
}

impl Probe {
    /// Connects to `address` (`host:port`).
    pub async fn connect(address: &str) -> Result<Probe, ProbeError> {
        let stream = TcpStream::connect(address)
            .await
            .map_err(|e| ProbeError::Connection(e.to_string()))?;
        Ok(Probe {
            frames: Framed::new(stream, FrameCodec::default()),
            correlation_id: 0,
        })
    }

    /// Sends a request at `version` without waiting for an answer; returns
    /// its correlation id.
    pub async fn send(&mut self, body: RequestBody<'_>, version: i16) -> Result<i32, ProbeError> {
        self.correlation_id += 1;
        let frame = RequestFrame {
            header: RequestHeader {
                request_api_key: body.api_key().key(),
                request_api_version: version,
                correlation_id: self.correlation_id,
                client_id: Some(Cow::Borrowed("kafka-wire-fake-probe")),
                ..Default::default()
            },
            body,
        };
        let mut bytes = Vec::with_capacity(frame.encoded_len());
        frame
            .encode(&mut bytes)
            .map_err(|e| ProbeError::Codec(e.to_string()))?;
        self.frames
            .send(bytes)
            .await
            .map_err(|e| ProbeError::Connection(e.to_string()))?;
        Ok(self.correlation_id)
    }

    /// Sends a bare frame (a SASL token after SaslHandshake v0) and reads
    /// the bare frame that answers it.
    pub async fn exchange_raw(&mut self, token: &[u8]) -> Result<Vec<u8>, ProbeError> {
        self.frames
            .send(token.to_vec())
            .await
            .map_err(|e| ProbeError::Connection(e.to_string()))?;
        match self.frames.next().await {
            Some(Ok(frame)) => Ok(frame.to_vec()),
            Some(Err(e)) => Err(ProbeError::Connection(e.to_string())),
            None => Err(ProbeError::Closed),
        }
    }

    /// Reads the next response, for a request of `api` at `version`:
    /// (correlation id, body).
    pub async fn receive(
        &mut self,
        api: kafka_wire::ApiKey,
        version: i16,
    ) -> Result<(i32, ResponseBody<'static>), ProbeError> {
        let frame = match self.frames.next().await {
            None => return Err(ProbeError::Closed),
            Some(Err(e)) => return Err(ProbeError::Connection(e.to_string())),
            Some(Ok(frame)) => frame,
        };
        let version = kafka_wire::frame::response_body_version(api, version, &frame);
        let response = ResponseFrame::decode(&frame, api, version)
            .map_err(|e| ProbeError::Codec(e.to_string()))?;
        Ok((response.header.correlation_id, response.body.into_owned()))
    }

    /// Sends a request and waits for its response.
    pub async fn request(
        &mut self,
        body: RequestBody<'_>,
        version: i16,
    ) -> Result<ResponseBody<'static>, ProbeError> {
        let api = body.api_key();
        self.send(body, version).await?;
        Ok(self.receive(api, version).await?.1)
    }
}

/// Produces one record to partition 0 of `topic` through the cluster whose
/// first bootstrap address is given, on that partition's leader; returns
/// its offset.
pub async fn produce_one(bootstrap: &str, topic: &str, value: &[u8]) -> Result<i64, ProbeError> {
    let first = bootstrap.split(',').next().unwrap_or_default();
    let mut probe = Probe::connect(first).await?;
    // A topic auto-created by the first Metadata is found by the next, as
    // a client asks again.
    let mut tries = 0;
    let (metadata, leader) = loop {
        let metadata = probe
            .request(
                RequestBody::Metadata(MetadataRequest {
                    topics: Some(
                        vec![metadata_request::MetadataRequestTopic {
                            name: Some(topic.into()),
                            ..Default::default()
                        }]
                        .into(),
                    ),
                    allow_auto_topic_creation: true,
                    ..Default::default()
                }),
                12,
            )
            .await?;
        let ResponseBody::Metadata(metadata) = metadata else {
            return Err(ProbeError::Codec("not a Metadata response".into()));
        };
        let leader = metadata.topics.iter().find_map(|t| {
            t.partitions
                .iter()
                .find(|p| p.partition_index == 0)
                .map(|p| p.leader_id)
        });
        tries += 1;
        match leader {
            Some(leader) => break (metadata, leader),
            None if tries < 3 => {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            None => {
                return Err(ProbeError::Kafka(
                    kafka_wire::ErrorCode::UnknownTopicOrPartition.code(),
                ))
            }
        }
    };
    let address = metadata
        .brokers
        .iter()
        .find(|b| b.node_id == leader)
        .map(|b| crate::address::host_port(&b.host, u16::try_from(b.port).unwrap_or(0)))
        .ok_or(ProbeError::Kafka(
            kafka_wire::ErrorCode::LeaderNotAvailable.code(),
        ))?;
    let mut batch = RecordBatchBuilder::new(0);
    batch
        .append(0, None, Some(value), &[])
        .map_err(|e| ProbeError::Codec(e.to_string()))?;
    let records = batch
        .build()
        .map_err(|e| ProbeError::Codec(e.to_string()))?;
    let mut probe = Probe::connect(&address).await?;
    let response = probe
        .request(
            RequestBody::Produce(ProduceRequest {
                acks: -1,
                timeout_ms: 5000,
                topic_data: vec![produce_request::TopicProduceData {
                    name: topic.into(),
                    partition_data: vec![produce_request::PartitionProduceData {
                        index: 0,
                        records: Some(records.into()),
                        ..Default::default()
                    }]
                    .into(),
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }),
            9,
        )
        .await?;
    let ResponseBody::Produce(produce) = response else {
        return Err(ProbeError::Codec("not a Produce response".into()));
    };
    let partition = produce
        .responses
        .iter()
        .find_map(|t| {
            t.partition_responses
                .iter()
                .next()
                .map(|p| (p.error_code, p.base_offset))
        })
        .ok_or(ProbeError::Codec("no partition in the answer".into()))?;
    match partition {
        (0, offset) => Ok(offset),
        (code, _) => Err(ProbeError::Kafka(code)),
    }
}

#[cfg(test)]
mod tests {
    use super::ProbeError;

    #[test]
    fn a_kafka_error_is_shown_by_its_name() {
        assert_eq!(
            ProbeError::Kafka(6).to_string(),
            "NOT_LEADER_OR_FOLLOWER (6)"
        );
        assert_eq!(
            ProbeError::Kafka(29).to_string(),
            "TOPIC_AUTHORIZATION_FAILED (29)"
        );
        assert_eq!(ProbeError::Kafka(9999).to_string(), "UNKNOWN (9999)");
    }
}
