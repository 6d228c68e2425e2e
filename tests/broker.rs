//! Talking to a real broker from the tests: a blocking client that sends
//! kafka-wire's frames and keeps the answers' bytes, and request bodies
//! written as JSON that fit any version.

use std::io::{self, Write};
use std::net::TcpStream;
use std::time::Duration;

use kafka_wire::frame::{read_frame, RequestFrame, ResponseFrame, DEFAULT_MAX_FRAME_SIZE};
use kafka_wire::messages::{ApiVersionsRequest, ApiVersionsResponse, RequestHeader};
use kafka_wire::negotiate::{negotiate, Negotiated};
use kafka_wire::{ApiKey, ErrorCode, IntoOwned, Request, RequestBody, ResponseBody};
use serde_json::Value;

/// How long a test waits for any one answer.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// A connection to one listener, one request at a time.
#[derive(Debug)]
pub struct Client {
    stream: TcpStream,
    address: String,
    client_id: String,
    correlation_id: i32,
}

impl Client {
    /// Connects to `address`, with `client_id` in every header.
    pub fn connect(address: &str, client_id: &str) -> io::Result<Client> {
        let stream = TcpStream::connect(address)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(ANSWER_TIMEOUT))?;
        Ok(Client {
            stream,
            address: address.to_owned(),
            client_id: client_id.to_owned(),
            correlation_id: 0,
        })
    }

    /// The address connected to.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Sends `body` at `version` with a proper header and returns the
    /// answer's frame (without its size prefix), or `None` for a request
    /// that gets none (a Produce with acks = 0). An error when the broker
    /// closes the connection instead, or answers another correlation id.
    pub fn exchange(&mut self, version: i16, body: RequestBody<'_>) -> io::Result<Option<Vec<u8>>> {
        self.correlation_id += 1;
        let request = RequestFrame {
            header: RequestHeader {
                request_api_key: body.api_key().key(),
                request_api_version: version,
                correlation_id: self.correlation_id,
                client_id: Some(self.client_id.as_str().into()),
                ..Default::default()
            },
            body,
        };
        let mut bytes = Vec::new();
        request
            .encode_with_size(&mut bytes)
            .map_err(|e| io::Error::other(format!("encoding the request: {e}")))?;
        let expects_response = request.expects_response();
        drop(request);
        self.send_raw(&bytes)?;
        if !expects_response {
            return Ok(None);
        }
        let frame = self.read_frame()?;
        if frame.get(..4) != Some(&self.correlation_id.to_be_bytes()[..]) {
            return Err(io::Error::other(format!(
                "an answer to another correlation id than {}",
                self.correlation_id
            )));
        }
        Ok(Some(frame))
    }

    /// Writes bytes as they are (a hand-built frame).
    pub fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Reads one size-prefixed frame.
    /// An error of kind `UnexpectedEof` when the broker closed the
    /// connection instead.
    pub fn read_frame(&mut self) -> io::Result<Vec<u8>> {
        read_frame(&mut self.stream, DEFAULT_MAX_FRAME_SIZE)?.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{} closed the connection", self.address),
            )
        })
    }

    /// Sends `request` at `version` and decodes its answer, panicking on
    /// any failure: for the exchanges a test relies on.
    pub fn call<Q>(&mut self, version: i16, request: Q) -> Q::Response
    where
        Q: Request + Into<RequestBody<'static>>,
        Q::Response: TryFrom<ResponseBody<'static>>,
    {
        let body: RequestBody<'static> = request.into();
        let api = body.api_key();
        let frame = self
            .exchange(version, body)
            .unwrap_or_else(|e| panic!("{} v{version} to {}: {e}", api.name(), self.address))
            .unwrap_or_else(|| panic!("{} v{version}: no answer expected", api.name()));
        let response = ResponseFrame::decode(&frame, api, version)
            .unwrap_or_else(|e| panic!("the {} v{version} answer: {e}", api.name()));
        Q::Response::try_from(response.body.into_owned())
            .unwrap_or_else(|_| panic!("the answer is not a {} response", api.name()))
    }

    /// The broker's ApiVersions answer: asked at our highest version, and
    /// again at the broker's highest if it does not support ours.
    pub fn api_versions(&mut self) -> ApiVersionsResponse<'static> {
        let request = || ApiVersionsRequest {
            client_software_name: "kafka-wire".into(),
            client_software_version: env!("CARGO_PKG_VERSION").into(),
            ..Default::default()
        };
        let ours = ApiKey::ApiVersions.highest_stable_version();
        let response = self.call(ours, request());
        if response.error_code != ErrorCode::UnsupportedVersion.code() {
            return response;
        }
        let theirs = response
            .api_keys
            .iter()
            .find(|k| k.api_key == ApiKey::ApiVersions.key())
            .map_or(0, |k| k.max_version.min(ours));
        self.call(theirs, request())
    }
}

/// A connection that has asked the broker's versions, and sends requests
/// written as JSON at the version negotiated for each api. Every answer
/// must decode, consume every byte and encode back to the same bytes.
#[derive(Debug)]
pub struct Session {
    /// The connection.
    pub client: Client,
    versions: Negotiated,
}

impl Session {
    /// Connects and negotiates (stable versions only).
    pub fn connect(address: &str, client_id: &str) -> Session {
        let mut client = Client::connect(address, client_id)
            .unwrap_or_else(|e| panic!("connecting to {address}: {e}"));
        let versions = negotiate(&client.api_versions(), false);
        Session { client, versions }
    }

    /// The version negotiated for `api`.
    pub fn version(&self, api: ApiKey) -> i16 {
        self.versions
            .version(api)
            .unwrap_or_else(|| panic!("{} is not usable with this broker", api.name()))
    }

    /// Sends `given` (fitted by [`fit`]) at the negotiated version and
    /// returns the answer's JSON form.
    pub fn json(&mut self, api: ApiKey, given: &Value) -> Value {
        let version = self.version(api);
        self.json_at(api, version, given)
    }

    /// Sends `given` at `version` and returns the answer's JSON form.
    pub fn json_at(&mut self, api: ApiKey, version: i16, given: &Value) -> Value {
        let body = fit(api, version, given);
        let frame = self
            .client
            .exchange(version, body)
            .unwrap_or_else(|e| panic!("{} v{version}: {e}", api.name()))
            .unwrap_or_else(|| panic!("{} v{version}: no answer expected", api.name()));
        let response = ResponseFrame::decode(&frame, api, version)
            .unwrap_or_else(|e| panic!("the {} v{version} answer: {e}", api.name()));
        let mut again = Vec::new();
        response.encode(&mut again).unwrap();
        assert!(
            again == frame,
            "the {} v{version} answer encodes to other bytes",
            api.name()
        );
        response.body.to_json(version)
    }

    /// Sends `given` until `done` holds for the answer (every 100 ms, for
    /// 30 s at most), as a client retries while a coordinator loads.
    pub fn json_until(
        &mut self,
        api: ApiKey,
        given: &Value,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = std::time::Instant::now() + ANSWER_TIMEOUT;
        loop {
            let answer = self.json(api, given);
            if done(&answer) {
                return answer;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{}: no answer such as wanted within {ANSWER_TIMEOUT:?}: {answer}",
                api.name()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The request body of `api` at `version` that `given` describes, fitted
/// to the version by [`kafka_wire_compat::body::fit`] (keys missing from an
/// object take their defaults, keys of fields the version lacks are
/// dropped, at any depth); panics on JSON that does not fit.
pub fn fit(api: ApiKey, version: i16, given: &Value) -> RequestBody<'static> {
    kafka_wire_compat::body::fit(api, version, given).unwrap_or_else(|e| panic!("{e}: {given}"))
}
