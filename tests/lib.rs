//! Helpers shared by the integration tests: where the workspace and the
//! reference schemas are, and how to decode a message by name.

use std::path::{Path, PathBuf};

use kafka_wire::messages::{RequestHeader, ResponseHeader};
use kafka_wire::runtime::json::JsonWriter;
use kafka_wire::runtime::{DecodeError, EncodeError, JsonError, JsonForm, Message};
use kafka_wire::{ApiKey, MetadataRecord, RequestBody, ResponseBody};
use serde_json::Value;

pub mod broker;
pub mod clients;
pub mod interop;
pub mod java;
pub mod mutate;
pub mod strategies;
pub mod streams;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// `../shared`, beside the workspace, when it is there. CI has it; a user's
/// machine may not, and tests that need it skip with a message. When
/// `KAFKA_WIRE_REQUIRE_SHARED` is set, as `.ci/run` sets it, a missing
/// `../shared` is a failure instead, so CI can never skip these tests.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = workspace_root().join("../shared");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var_os("KAFKA_WIRE_REQUIRE_SHARED").is_none(),
        "KAFKA_WIRE_REQUIRE_SHARED is set but {} is missing",
        dir.display()
    );
    None
}

/// The Kafka release the JVM-side tests pin, read from `tests/java/pom.xml`
/// (its `kafka.version` property), the one place that states it.
pub fn kafka_version() -> String {
    let pom = workspace_root().join("tests/java/pom.xml");
    let text = std::fs::read_to_string(&pom).unwrap_or_else(|e| panic!("{}: {e}", pom.display()));
    let start = text
        .find("<kafka.version>")
        .map(|i| i + "<kafka.version>".len())
        .unwrap_or_else(|| panic!("{}: no <kafka.version>", pom.display()));
    let end = text[start..]
        .find('<')
        .unwrap_or_else(|| panic!("{}: <kafka.version> is not closed", pom.display()));
    text[start..start + end].trim().to_owned()
}

/// The local Maven repository: `$HOME/.m2/repository`.
pub fn maven_repository() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|home| Path::new(&home).join(".m2/repository"))
}

/// The jar of `org.apache.kafka:<artifact>` at `version` in the local Maven
/// repository, when it is there. `.ci/run` fills the repository first; on
/// a machine without it the tests that need a jar skip with a message.
/// When `KAFKA_WIRE_REQUIRE_JAVA` is set, as `.ci/run` sets it, a missing
/// jar is a failure instead.
pub fn kafka_jar(artifact: &str, version: &str) -> Option<PathBuf> {
    let jar = maven_repository()?
        .join("org/apache/kafka")
        .join(artifact)
        .join(version)
        .join(format!("{artifact}-{version}.jar"));
    if jar.is_file() {
        return Some(jar);
    }
    assert!(
        std::env::var_os("KAFKA_WIRE_REQUIRE_JAVA").is_none(),
        "KAFKA_WIRE_REQUIRE_JAVA is set but {} is missing",
        jar.display()
    );
    None
}

/// What a schema file (or a golden fixture) says a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A request body.
    Request,
    /// A response body.
    Response,
    /// A request or response header.
    Header,
    /// A data schema (`"type": "data"`), such as `LeaderChangeMessage`.
    Data,
    /// A KRaft metadata record.
    Metadata,
}

impl Kind {
    /// The kind a schema file's `type` names: `request`, `response`,
    /// `header`, `data` or `metadata`.
    pub fn parse(text: &str) -> Option<Kind> {
        Some(match text {
            "request" => Kind::Request,
            "response" => Kind::Response,
            "header" => Kind::Header,
            "data" => Kind::Data,
            "metadata" => Kind::Metadata,
            _ => return None,
        })
    }
}

/// The text that `write` writes through a [`JsonWriter`]: indented when
/// `pretty`, else on one line.
pub fn streamed_json(
    pretty: bool,
    write: impl FnOnce(&mut JsonWriter<'_>) -> std::io::Result<()>,
) -> String {
    let mut text = Vec::new();
    write(&mut JsonWriter::new(&mut text, pretty)).unwrap_or_else(|e| panic!("{e}"));
    String::from_utf8(text).unwrap_or_else(|e| panic!("streamed JSON is not UTF-8: {e}"))
}

/// Checks that the streamed text of a value, compact and pretty, is byte
/// for byte what serde_json prints for its JSON form `json`.
pub fn check_streamed(json: &Value, text: impl Fn(bool) -> String) -> Result<(), String> {
    let printed = [
        serde_json::to_string(json).map_err(|e| e.to_string())?,
        serde_json::to_string_pretty(json).map_err(|e| e.to_string())?,
    ];
    for (pretty, printed) in [false, true].into_iter().zip(printed) {
        let streamed = text(pretty);
        if streamed != printed {
            return Err(format!(
                "streamed JSON (pretty: {pretty}) differs:\n  got      {streamed}\n  expected {printed}"
            ));
        }
    }
    Ok(())
}

/// A message decoded by name, with the operations the tests need.
pub trait Decoded {
    /// The JSON form.
    fn json(&self, version: i16) -> Value;
    /// The JSON form written by the streaming writer: indented when
    /// `pretty`, else on one line.
    fn json_text(&self, version: i16, pretty: bool) -> String;
    /// The encoded bytes.
    fn bytes(&self, version: i16) -> Result<Vec<u8>, EncodeError>;
    /// The computed size.
    fn len(&self, version: i16) -> usize;
}

macro_rules! decoded_for_message {
    ($($ty:ty),*) => {$(
        impl Decoded for $ty {
            fn json(&self, version: i16) -> Value {
                JsonForm::to_json(self, version)
            }
            fn json_text(&self, version: i16, pretty: bool) -> String {
                streamed_json(pretty, |out| JsonForm::write_json(self, out, version))
            }
            fn bytes(&self, version: i16) -> Result<Vec<u8>, EncodeError> {
                Message::to_bytes(self, version)
            }
            fn len(&self, version: i16) -> usize {
                kafka_wire::runtime::Encode::encoded_len(self, version)
            }
        }
    )*};
}

decoded_for_message!(RequestHeader<'_>, ResponseHeader<'_>);

macro_rules! decoded_for_body {
    ($($ty:ty),*) => {$(
        impl Decoded for $ty {
            fn json(&self, version: i16) -> Value {
                self.to_json(version)
            }
            fn json_text(&self, version: i16, pretty: bool) -> String {
                streamed_json(pretty, |out| self.write_json(out, version))
            }
            fn bytes(&self, version: i16) -> Result<Vec<u8>, EncodeError> {
                let mut buf = Vec::with_capacity(self.encoded_len(version));
                self.encode(&mut buf, version)?;
                // A BytesMut gets the same bytes, after what it already held.
                let mut framed = bytes::BytesMut::from(&b"held"[..]);
                self.encode(&mut framed, version)?;
                assert_eq!(framed[..4], *b"held", "a BytesMut lost what it held");
                assert_eq!(framed[4..], buf[..], "a BytesMut got other bytes than a Vec");
                Ok(buf)
            }
            fn len(&self, version: i16) -> usize {
                self.encoded_len(version)
            }
        }
    )*};
}

decoded_for_body!(RequestBody<'_>, ResponseBody<'_>, MetadataRecord<'_>);

include!(concat!(env!("OUT_DIR"), "/data_schemas.rs"));

/// The record type of the metadata record `name`, such as `TopicRecord`.
pub fn metadata_record_type(name: &str) -> Result<i16, LookupError> {
    METADATA_RECORDS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, key)| *key)
        .ok_or_else(|| LookupError::Unknown(name.to_owned()))
}

/// Why a message could not be looked up or decoded.
#[derive(Debug)]
pub enum LookupError {
    /// No API or header of that name.
    Unknown(String),
    /// The bytes did not decode.
    Decode(DecodeError),
    /// The JSON did not convert.
    Json(JsonError),
}

/// The API of a message name such as `VoteRequest`.
pub fn api_of(name: &str) -> Result<ApiKey, LookupError> {
    ApiKey::from_name(name).ok_or_else(|| LookupError::Unknown(name.to_owned()))
}

/// Decodes `input` as the message `name` at `version`, requiring every byte
/// to be consumed.
pub fn decode_by_name<'a>(
    kind: Kind,
    name: &str,
    version: i16,
    input: &'a [u8],
) -> Result<Box<dyn Decoded + 'a>, LookupError> {
    Ok(match (kind, name) {
        (Kind::Header, "RequestHeader") => {
            Box::new(RequestHeader::decode(input, version).map_err(LookupError::Decode)?)
        }
        (Kind::Header, "ResponseHeader") => {
            Box::new(ResponseHeader::decode(input, version).map_err(LookupError::Decode)?)
        }
        (Kind::Request, _) => Box::new(
            RequestBody::decode(input, api_of(name)?, version).map_err(LookupError::Decode)?,
        ),
        (Kind::Response, _) => Box::new(
            ResponseBody::decode(input, api_of(name)?, version).map_err(LookupError::Decode)?,
        ),
        (Kind::Metadata, _) => Box::new(
            MetadataRecord::decode(input, metadata_record_type(name)?, version)
                .map_err(LookupError::Decode)?,
        ),
        (Kind::Data, _) => decode_data(name, version, input)
            .ok_or_else(|| LookupError::Unknown(name.to_owned()))?
            .map_err(LookupError::Decode)?,
        _ => return Err(LookupError::Unknown(name.to_owned())),
    })
}

/// Reads the JSON form of the message `name` at `version`.
pub fn from_json_by_name(
    kind: Kind,
    name: &str,
    version: i16,
    value: &Value,
) -> Result<Box<dyn Decoded>, LookupError> {
    Ok(match (kind, name) {
        (Kind::Header, "RequestHeader") => Box::new(
            <RequestHeader as JsonForm>::from_json(value, version).map_err(LookupError::Json)?,
        ),
        (Kind::Header, "ResponseHeader") => Box::new(
            <ResponseHeader as JsonForm>::from_json(value, version).map_err(LookupError::Json)?,
        ),
        (Kind::Request, _) => Box::new(
            RequestBody::from_json(value, api_of(name)?, version).map_err(LookupError::Json)?,
        ),
        (Kind::Response, _) => Box::new(
            ResponseBody::from_json(value, api_of(name)?, version).map_err(LookupError::Json)?,
        ),
        (Kind::Metadata, _) => Box::new(
            MetadataRecord::from_json(value, metadata_record_type(name)?, version)
                .map_err(LookupError::Json)?,
        ),
        (Kind::Data, _) => data_from_json(name, version, value)
            .ok_or_else(|| LookupError::Unknown(name.to_owned()))?
            .map_err(LookupError::Json)?,
        _ => return Err(LookupError::Unknown(name.to_owned())),
    })
}
