//! `encode`: the JSON form to bytes.

use kafka_wire::frame::{RequestFrame, ResponseFrame};
use kafka_wire::messages::{RequestHeader, ResponseHeader};
use kafka_wire::runtime::{JsonError, JsonErrorKind, JsonForm};
use kafka_wire::{ApiKey, RequestBody, ResponseBody};
use serde_json::{Map, Value};

use crate::apis::resolve;
use crate::args::{Direction, EncodeArgs, Plan};
use crate::error::CliError;
use crate::input::read_all;
use crate::output::Output;

/// Runs `encode` with a checked `plan`.
pub fn run(args: &EncodeArgs, plan: &Plan, out: &mut Output) -> Result<(), CliError> {
    let hex = args.message.hex;
    let write = |out: &mut Output, bytes: &[u8]| {
        if hex {
            out.hex_line(bytes)
        } else {
            out.bytes(bytes)
        }
    };
    match plan {
        Plan::Body { direction, api } => {
            let (api, version) = resolve(&api.name, api.version)?;
            let value = parse_json(&read_all(args.message.input.as_deref())?)?;
            write(out, &encode_body(*direction, api, version, &value)?)
        }
        Plan::Frames {
            stream: false,
            response_to,
        } => {
            let response_to = response_to
                .as_ref()
                .map(|arg| resolve(&arg.name, arg.version))
                .transpose()?;
            let value = parse_json(&read_all(args.message.input.as_deref())?)?;
            write(out, &encode_frame(response_to, &value, false)?)
        }
        Plan::Frames {
            stream: true,
            response_to,
        } => {
            let response_to = response_to
                .as_ref()
                .map(|arg| resolve(&arg.name, arg.version))
                .transpose()?;
            let input = read_all(args.message.input.as_deref())?;
            let values = serde_json::Deserializer::from_slice(&input).into_iter::<Value>();
            for (index, value) in values.enumerate() {
                let bytes = value
                    .map_err(CliError::JsonSyntax)
                    .and_then(|value| encode_frame(response_to, &value, true))
                    .map_err(|error| error.in_frame(index + 1))?;
                write(out, &bytes)?;
            }
            Ok(())
        }
    }
}

/// Parses the whole input as one JSON value.
fn parse_json(input: &[u8]) -> Result<Value, CliError> {
    serde_json::from_slice(input).map_err(CliError::JsonSyntax)
}

/// Encodes the JSON form of a body.
fn encode_body(
    direction: Direction,
    api: ApiKey,
    version: i16,
    value: &Value,
) -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::new();
    match direction {
        Direction::Request => {
            let body = RequestBody::from_json(value, api, version)?;
            bytes.reserve_exact(body.encoded_len(version));
            body.encode(&mut bytes, version)?;
        }
        Direction::Response => {
            let body = ResponseBody::from_json(value, api, version)?;
            bytes.reserve_exact(body.encoded_len(version));
            body.encode(&mut bytes, version)?;
        }
    }
    Ok(bytes)
}

/// Encodes a `{"header", "body"}` object: a request frame when
/// `response_to` is `None`, else a response to that api and version. With
/// `with_size`, the int32 size prefix comes first.
fn encode_frame(
    response_to: Option<(ApiKey, i16)>,
    value: &Value,
    with_size: bool,
) -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::new();
    match response_to {
        None => {
            let frame = request_frame(value)?;
            bytes.reserve_exact(frame.encoded_len() + 4);
            if with_size {
                frame.encode_with_size(&mut bytes)?;
            } else {
                frame.encode(&mut bytes)?;
            }
        }
        Some((api, version)) => {
            let (header, body) = frame_parts(value)?;
            let header = ResponseHeader::from_json(header, api.response_header_version(version))
                .map_err(|e| e.in_field("header"))?;
            let body =
                ResponseBody::from_json(body, api, version).map_err(|e| e.in_field("body"))?;
            let frame = ResponseFrame {
                header,
                body,
                version,
            };
            bytes.reserve_exact(frame.encoded_len() + 4);
            if with_size {
                frame.encode_with_size(&mut bytes)?;
            } else {
                frame.encode(&mut bytes)?;
            }
        }
    }
    Ok(bytes)
}

/// Reads a request frame's JSON form. The header's `requestApiKey` and
/// `requestApiVersion` choose the body's message and version, and the
/// header version follows from them.
fn request_frame(value: &Value) -> Result<RequestFrame<'static>, JsonError> {
    let (header, body) = frame_parts(value)?;
    let fields = header
        .as_object()
        .ok_or_else(|| JsonError::new(JsonErrorKind::Expected("an object")).in_field("header"))?;
    let key: i16 = header_field(fields, "requestApiKey")?;
    let api = ApiKey::from_key(key).ok_or_else(|| {
        JsonError::new(JsonErrorKind::UnknownKey(key))
            .in_field("requestApiKey")
            .in_field("header")
    })?;
    let version: i16 = header_field(fields, "requestApiVersion")?;
    if !api.supports_version(version) {
        return Err(JsonError::new(JsonErrorKind::UnsupportedVersion(version))
            .in_field("requestApiVersion")
            .in_field("header"));
    }
    let header = RequestHeader::from_json(header, api.request_header_version(version))
        .map_err(|e| e.in_field("header"))?;
    let body = RequestBody::from_json(body, api, version).map_err(|e| e.in_field("body"))?;
    Ok(RequestFrame { header, body })
}

/// Reads one field of a request header ahead of the header itself.
fn header_field<T: JsonForm>(
    header: &Map<String, Value>,
    key: &'static str,
) -> Result<T, JsonError> {
    let value = header
        .get(key)
        .ok_or_else(|| JsonError::new(JsonErrorKind::MissingField))
        .and_then(|value| T::from_json(value, 0));
    value.map_err(|e| e.in_field(key).in_field("header"))
}

/// The `header` and `body` of a frame's JSON form, which has no other key.
fn frame_parts(value: &Value) -> Result<(&Value, &Value), JsonError> {
    let object = value.as_object().ok_or_else(|| {
        JsonError::new(JsonErrorKind::Expected(
            "an object with \"header\" and \"body\"",
        ))
    })?;
    if let Some(key) = object.keys().find(|key| *key != "header" && *key != "body") {
        return Err(JsonError::new(JsonErrorKind::UnknownField(key.clone())));
    }
    let part = |key: &'static str| {
        object
            .get(key)
            .ok_or_else(|| JsonError::new(JsonErrorKind::MissingField).in_field(key))
    };
    Ok((part("header")?, part("body")?))
}
