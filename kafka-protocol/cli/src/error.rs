//! The one error type of the tool, whose `Display` is the single line printed
//! after `error: ` on standard error.

use std::io;

use kafka_wire::runtime::{DecodeError, EncodeError, JsonError};
use kafka_wire_records::RecordsError;

/// Everything that makes the tool exit with status 1 (or, for
/// [`CliError::BrokenPipe`], stop quietly).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The input file (or standard input) could not be read.
    #[error("cannot read {what}: {source}")]
    Read {
        /// `standard input` or the file name.
        what: String,
        /// Why.
        source: io::Error,
    },
    /// `--hex` input that is not hex.
    #[error("invalid hex: {0}")]
    Hex(String),
    /// Text that is not JSON at all.
    #[error("invalid JSON: {0}")]
    JsonSyntax(serde_json::Error),
    /// JSON that does not fit the message, with its JSON path.
    #[error("{0}")]
    Json(JsonError),
    /// Bytes that do not decode, with byte offset and field path.
    #[error("{0}")]
    Decode(DecodeError),
    /// A value that cannot be written at the requested version.
    #[error("{0}")]
    Encode(EncodeError),
    /// A records blob that does not decode.
    #[error("{0}")]
    Records(RecordsError),
    /// `--api` names no API.
    #[error("unknown api `{0}` (run `kafka-protocol apis` for the list)")]
    UnknownApi(String),
    /// `--version` is outside the API's range.
    #[error("{api} has no version {version} (valid: {lowest}-{highest})")]
    UnsupportedVersion {
        /// The API name.
        api: &'static str,
        /// The version asked for.
        version: i16,
        /// The lowest valid version.
        lowest: i16,
        /// The highest valid version.
        highest: i16,
    },
    /// One frame of a stream failed; `index` counts from 1.
    #[error("frame {index}: {error}")]
    Frame {
        /// Which frame, from 1.
        index: usize,
        /// What went wrong with it.
        error: Box<CliError>,
    },
    /// The proxy could not start: listen, open its log or start its runtime.
    #[error("{what}: {source}")]
    ProxyStart {
        /// What it tried.
        what: String,
        /// Why it failed.
        source: io::Error,
    },
    /// `--advertise` (or the listen address) is not `HOST:PORT`.
    /// The fake cluster could not start.
    #[error("the fake cluster did not start: {0}")]
    Fake(String),
    #[error("not HOST:PORT: `{0}`")]
    BadAddress(String),
    /// `request` or `versions` could not reach the broker.
    #[error("cannot connect to {address}: {source}")]
    Connect {
        /// The address given.
        address: String,
        /// Why.
        source: io::Error,
    },
    /// The broker did not answer in time.
    #[error("no response from {address} within {millis} ms")]
    Timeout {
        /// The address given.
        address: String,
        /// The timeout.
        millis: u128,
    },
    /// The broker closed the connection, sent a bad frame or answered
    /// another request.
    #[error("{address} {what}")]
    Exchange {
        /// The address given.
        address: String,
        /// What happened, as the rest of a sentence.
        what: String,
    },
    /// A response that does not decode at the version asked.
    #[error("the {api} v{version} response does not decode: {source}")]
    Response {
        /// The api asked.
        api: &'static str,
        /// The version asked.
        version: i16,
        /// The decoding error, with byte offset and field path.
        source: DecodeError,
    },
    /// Negotiation found no version of the api that both sides support.
    #[error("no version of {api} to use with {address}: {why}")]
    NoCommonVersion {
        /// The api.
        api: &'static str,
        /// The address given.
        address: String,
        /// What the broker advertised, against our range.
        why: String,
    },
    /// `pcap`'s input is not a capture, or could not be read.
    #[error("{what}: {error}")]
    Capture {
        /// `standard input` or the file name.
        what: String,
        /// Why.
        error: kafka_wire_capture::CaptureError,
    },
    /// `compat`: a side could not be reached (exit status 3).
    #[error("{0}")]
    Unreachable(kafka_wire_compat::Unreachable),
    /// `compat`: a report file could not be opened (exit status 2).
    #[error("{what}: {source}")]
    ReportFile {
        /// The flag and file.
        what: String,
        /// Why.
        source: io::Error,
    },
    /// `compat`: a report file could not be written.
    #[error("cannot write {what}: {source}")]
    WriteReport {
        /// The flag and file.
        what: String,
        /// Why.
        source: io::Error,
    },
    /// Standard output failed for a reason other than a closed pipe.
    #[error("cannot write to standard output: {0}")]
    Write(io::Error),
    /// Standard output was closed (for example piped into `head`): not an
    /// error worth reporting.
    #[error("standard output closed")]
    BrokenPipe,
}

impl CliError {
    /// Wraps the error of the `index`-th frame (counting from 1) of a stream.
    pub fn in_frame(self, index: usize) -> Self {
        match self {
            // Output failures are not about the frame.
            CliError::Write(_) | CliError::BrokenPipe => self,
            error => CliError::Frame {
                index,
                error: Box::new(error),
            },
        }
    }

    /// The exit status it ends the tool with: 3 when a side of `compat`
    /// cannot be reached, 2 for a report file that cannot be opened (a
    /// usage error), 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Unreachable(_) => 3,
            CliError::ReportFile { .. } => 2,
            _ => 1,
        }
    }

    /// The message as exactly one line: any line break inside (from a file
    /// name or a JSON key) is escaped.
    pub fn one_line(&self) -> String {
        self.to_string().replace('\r', "\\r").replace('\n', "\\n")
    }
}

impl From<DecodeError> for CliError {
    fn from(error: DecodeError) -> Self {
        CliError::Decode(error)
    }
}

impl From<EncodeError> for CliError {
    fn from(error: EncodeError) -> Self {
        CliError::Encode(error)
    }
}

impl From<JsonError> for CliError {
    fn from(error: JsonError) -> Self {
        CliError::Json(error)
    }
}

impl From<RecordsError> for CliError {
    fn from(error: RecordsError) -> Self {
        CliError::Records(error)
    }
}
