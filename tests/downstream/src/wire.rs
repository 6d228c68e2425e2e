//! The code `docs/library.md` shows under "What a broker or client author
//! reaches for": a blocking broker loop and a client round trip over plain
//! TCP.

use std::error::Error;
use std::io::{Read, Write};
use std::net::TcpStream;

use kafka_wire::frame::{RequestFrame, ResponseFrame};
use kafka_wire::messages::{
    api_versions_response, metadata_response, ApiVersionsResponse, MetadataRequest,
    MetadataResponse, RequestHeader, ResponseHeader,
};
use kafka_wire::{ApiKey, ErrorCode, RequestBody, ResponseBody};

/// The largest frame either side accepts.
const MAX_FRAME: usize = 1 << 20;

/// Reads one size-prefixed frame, refusing sizes above `MAX_FRAME`.
pub fn read_frame(stream: &mut TcpStream) -> Result<Vec<u8>, Box<dyn Error>> {
    let mut size = [0; 4];
    stream.read_exact(&mut size)?;
    let size = usize::try_from(i32::from_be_bytes(size))
        .ok()
        .filter(|&size| size <= MAX_FRAME)
        .ok_or("frame size out of range")?;
    let mut frame = Vec::new();
    stream.take(size as u64).read_to_end(&mut frame)?;
    if frame.len() < size {
        return Err("connection closed inside a frame".into());
    }
    Ok(frame)
}

/// A broker loop: answers ApiVersions and Metadata until the client leaves.
pub fn serve(mut stream: TcpStream) -> Result<(), Box<dyn Error>> {
    loop {
        let frame = match read_frame(&mut stream) {
            Ok(frame) => frame,
            Err(_) => return Ok(()), // the client closed the connection
        };
        let request = RequestFrame::decode(&frame)?;
        let version = request.api_version();
        let body: ResponseBody = match &request.body {
            RequestBody::ApiVersions(_) => ApiVersionsResponse {
                api_keys: [ApiKey::ApiVersions, ApiKey::Metadata]
                    .into_iter()
                    .map(|api| api_versions_response::ApiVersion {
                        api_key: api.key(),
                        min_version: api.lowest_version(),
                        max_version: api.highest_stable_version(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }
            .into(),
            RequestBody::Metadata(_) => MetadataResponse {
                brokers: vec![metadata_response::MetadataResponseBroker {
                    node_id: 1,
                    host: "127.0.0.1".into(),
                    port: 9092,
                    ..Default::default()
                }]
                .into(),
                topics: vec![metadata_response::MetadataResponseTopic {
                    error_code: ErrorCode::UnknownTopicOrPartition.code(),
                    name: Some("orders".into()),
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }
            .into(),
            other => return Err(format!("unsupported api {:?}", other.api_key()).into()),
        };
        let response = ResponseFrame {
            header: ResponseHeader {
                correlation_id: request.header.correlation_id,
                ..Default::default()
            },
            body,
        };
        let mut out = Vec::new();
        response.encode_with_size(&mut out, version)?;
        stream.write_all(&out)?;
    }
}

/// A client round trip: asks for metadata and keeps the answer.
pub fn fetch_metadata(stream: &mut TcpStream) -> Result<MetadataResponse<'static>, Box<dyn Error>> {
    let version = 12;
    let request = RequestFrame {
        header: RequestHeader {
            request_api_key: ApiKey::Metadata.key(),
            request_api_version: version,
            correlation_id: 1,
            client_id: Some("example".into()),
            ..Default::default()
        },
        body: MetadataRequest::default().into(),
    };
    let mut out = Vec::new();
    request.encode_with_size(&mut out)?;
    stream.write_all(&out)?;

    let frame = read_frame(stream)?;
    let response = ResponseFrame::decode(&frame, ApiKey::Metadata, version)?;
    if response.header.correlation_id != 1 {
        return Err("a response to another request".into());
    }
    // Owned, so that it outlives `frame`.
    let metadata = MetadataResponse::try_from(response.body.into_owned())
        .map_err(|_| "not a Metadata response")?;
    Ok(metadata)
}
