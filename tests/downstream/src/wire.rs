//! The code `docs/library.md` shows under "What a broker or client author
//! reaches for": a blocking broker loop and a client round trip over plain
//! TCP.

use std::error::Error;
use std::io::Write;
use std::net::TcpStream;

use kafka_wire::frame::{read_frame, RequestFrame, ResponseFrame};
use kafka_wire::messages::{
    api_versions_response, metadata_response, ApiVersionsResponse, MetadataRequest,
    MetadataResponse, RequestHeader, ResponseHeader,
};
use kafka_wire::{ApiKey, ErrorCode, IntoOwned, RequestBody, ResponseBody};

/// The largest frame either side accepts.
const MAX_FRAME: usize = 1 << 20;

/// A broker loop: answers ApiVersions and Metadata until the client leaves.
pub fn serve(mut stream: TcpStream) -> Result<(), Box<dyn Error>> {
    loop {
        let Some(frame) = read_frame(&mut stream, MAX_FRAME)? else {
            return Ok(()); // the client closed the connection
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
            version,
        };
        let mut out = Vec::new();
        response.encode_with_size(&mut out)?;
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

    let frame = read_frame(stream, MAX_FRAME)?.ok_or("the broker closed the connection")?;
    let response = ResponseFrame::decode(&frame, ApiKey::Metadata, version)?;
    if response.header.correlation_id != 1 {
        return Err("a response to another request".into());
    }
    // Owned, so that it outlives `frame`.
    let metadata = MetadataResponse::try_from(response.body.into_owned())
        .map_err(|_| "not a Metadata response")?;
    Ok(metadata)
}
