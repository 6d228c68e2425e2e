//! A blocking connection to a broker, for `request` and `versions`: one
//! request at a time, each answered within a deadline.

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use kafka_wire::frame::{
    read_frame, ReadFrameError, RequestFrame, ResponseFrame, DEFAULT_MAX_FRAME_SIZE,
};
use kafka_wire::messages::{ApiVersionsRequest, ApiVersionsResponse, RequestHeader};
use kafka_wire::IntoOwned;
use kafka_wire::{ApiKey, ErrorCode, RequestBody, ResponseBody};

use crate::error::CliError;

/// A connection to one broker.
pub struct Client {
    stream: TcpStream,
    address: String,
    client_id: String,
    timeout: Duration,
    correlation_id: i32,
}

/// A response frame as received, without its size prefix, and what it
/// answers.
pub struct Answer {
    /// The frame's bytes.
    pub frame: Vec<u8>,
    /// The api asked.
    pub api: ApiKey,
    /// The version asked.
    pub version: i16,
}

impl Answer {
    /// Decodes the frame, or says which response did not decode. The
    /// answer is read once (printed, or its versions taken), so decoding
    /// allocates nothing: arrays of structs stay wire bytes.
    pub fn decode(&self) -> Result<ResponseFrame<'_>, CliError> {
        ResponseFrame::decode_without_heap(&self.frame, self.api, self.version).map_err(|source| {
            CliError::Response {
                api: self.api.name(),
                version: self.version,
                source,
            }
        })
    }
}

impl Client {
    /// Connects to `address` (`HOST:PORT`), trying each address it resolves
    /// to within `timeout`.
    pub fn connect(address: &str, client_id: &str, timeout: Duration) -> Result<Self, CliError> {
        let connect_error = |source| CliError::Connect {
            address: address.to_owned(),
            source,
        };
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address found");
        for resolved in address.to_socket_addrs().map_err(connect_error)? {
            match TcpStream::connect_timeout(&resolved, timeout) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(Client {
                        stream,
                        address: address.to_owned(),
                        client_id: client_id.to_owned(),
                        timeout,
                        correlation_id: 0,
                    });
                }
                Err(error) => last = error,
            }
        }
        Err(connect_error(last))
    }

    /// Sends `body` as a request of `api` at `version` with a proper header,
    /// and waits for its answer; `None` when none comes (a Produce with
    /// `acks = 0`).
    pub fn send(
        &mut self,
        api: ApiKey,
        version: i16,
        body: RequestBody<'_>,
    ) -> Result<Option<Answer>, CliError> {
        self.correlation_id = self.correlation_id.wrapping_add(1);
        let correlation_id = self.correlation_id;
        let request = RequestFrame {
            header: RequestHeader {
                request_api_key: api.key(),
                request_api_version: version,
                correlation_id,
                client_id: Some(self.client_id.as_str().into()),
                ..Default::default()
            },
            body,
        };
        let mut bytes = Vec::new();
        request.encode_with_size(&mut bytes)?;
        let expects_response = request.expects_response();
        self.stream
            .write_all(&bytes)
            .map_err(|source| self.io_error(source))?;
        if !expects_response {
            return Ok(None);
        }
        let frame = self.read_frame()?;
        let echoed = frame
            .get(..4)
            .map(|id| i32::from_be_bytes([id[0], id[1], id[2], id[3]]));
        if echoed != Some(correlation_id) {
            return Err(CliError::Exchange {
                address: self.address.clone(),
                what: format!(
                    "answered correlation id {correlation_id} with {}",
                    echoed.map_or_else(|| "a frame of less than 4 bytes".into(), |e| e.to_string())
                ),
            });
        }
        Ok(Some(Answer {
            frame,
            api,
            version,
        }))
    }

    /// Asks which versions the broker supports: ApiVersions at our highest
    /// version, and again at the broker's highest when it answers that it
    /// does not support ours (a version 0 body with UNSUPPORTED_VERSION).
    pub fn api_versions(&mut self) -> Result<ApiVersionsResponse<'static>, CliError> {
        let ours = ApiKey::ApiVersions.highest_stable_version();
        let response = self.api_versions_at(ours)?;
        if response.error_code != ErrorCode::UnsupportedVersion.code() {
            return Ok(response);
        }
        let theirs = response
            .api_keys
            .iter()
            .find(|k| k.api_key == ApiKey::ApiVersions.key())
            .map(|k| k.max_version.min(ours));
        match theirs {
            Some(version) if version < ours && version >= 0 => self.api_versions_at(version),
            _ => Ok(response),
        }
    }

    fn api_versions_at(&mut self, version: i16) -> Result<ApiVersionsResponse<'static>, CliError> {
        let body = ApiVersionsRequest {
            client_software_name: "kafka-protocol".into(),
            client_software_version: env!("CARGO_PKG_VERSION").into(),
            ..Default::default()
        };
        let answer = self
            .send(ApiKey::ApiVersions, version, body.into())?
            .ok_or_else(|| CliError::Exchange {
                address: self.address.clone(),
                what: "sent no ApiVersions response".into(),
            })?;
        match answer.decode()?.body.into_owned() {
            ResponseBody::ApiVersions(response) => Ok(response),
            _ => unreachable!("an ApiVersions frame decodes to an ApiVersions body"),
        }
    }

    /// Reads one size-prefixed frame within the timeout.
    fn read_frame(&mut self) -> Result<Vec<u8>, CliError> {
        let mut by_deadline = ByDeadline {
            stream: &self.stream,
            deadline: Instant::now() + self.timeout,
        };
        match read_frame(&mut by_deadline, DEFAULT_MAX_FRAME_SIZE) {
            Ok(Some(frame)) => Ok(frame),
            Ok(None) | Err(ReadFrameError::Truncated { .. }) => Err(CliError::Exchange {
                address: self.address.clone(),
                what: "closed the connection before answering".into(),
            }),
            Err(ReadFrameError::Size(e)) => Err(CliError::Exchange {
                address: self.address.clone(),
                what: format!("sent a bad frame: {e}"),
            }),
            Err(ReadFrameError::Io(e)) if e.kind() == io::ErrorKind::TimedOut => {
                Err(self.timed_out())
            }
            Err(ReadFrameError::Io(source)) => Err(self.io_error(source)),
        }
    }

    fn timed_out(&self) -> CliError {
        CliError::Timeout {
            address: self.address.clone(),
            millis: self.timeout.as_millis(),
        }
    }

    fn io_error(&self, source: io::Error) -> CliError {
        CliError::Exchange {
            address: self.address.clone(),
            what: format!("failed: {source}"),
        }
    }
}

/// A socket whose reads all end by one deadline: a read that would go past
/// it fails with `TimedOut`.
struct ByDeadline<'a> {
    stream: &'a TcpStream,
    deadline: Instant,
}

impl Read for ByDeadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        self.stream.read(buf).map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock => io::ErrorKind::TimedOut.into(),
            _ => e,
        })
    }
}
