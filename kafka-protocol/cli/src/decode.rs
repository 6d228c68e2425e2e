//! `decode`: bytes to the JSON form, written straight from the decoded
//! message (no JSON tree is built, so printing a body takes little memory
//! beyond the input's).

use std::io;

use kafka_wire::frame::{split_frames, RequestFrame, ResponseFrame};
use kafka_wire::runtime::json::JsonWriter;
use kafka_wire::runtime::{DecodeOptions, JsonForm};
use kafka_wire::{ApiKey, RequestBody, ResponseBody};

use crate::apis::resolve;
use crate::args::{DecodeArgs, Direction, Plan};
use crate::error::CliError;
use crate::input::read_bytes;
use crate::output::Output;

/// Runs `decode` with a checked `plan`.
pub fn run(args: &DecodeArgs, plan: &Plan, out: &mut Output) -> Result<(), CliError> {
    match plan {
        Plan::Body { direction, api } => {
            let (api, version) = resolve(&api.name, api.version)?;
            let input = read_bytes(args.message.input.as_ref(), args.message.hex)?;
            print_body(*direction, api, version, &input, out, args.compact)
        }
        Plan::Frames {
            stream,
            response_to,
        } => {
            let response_to = response_to
                .as_ref()
                .map(|arg| resolve(&arg.name, arg.version))
                .transpose()?;
            let input = read_bytes(args.message.input.as_ref(), args.message.hex)?;
            if !stream {
                return print_frame(response_to, &input, out, args.compact);
            }
            for (index, item) in split_frames(&input).enumerate() {
                item.map_err(|error| CliError::Decode(error.in_field("size")))
                    .and_then(|(start, frame)| {
                        print_frame(response_to, frame, out, true)
                            .map_err(|error| shift(error, start))
                    })
                    .map_err(|error| error.in_frame(index + 1))?;
            }
            Ok(())
        }
    }
}

/// Decodes a body of exactly `input`, then prints its JSON form. Decoding
/// allocates nothing (arrays of structs stay wire bytes, decoded as they
/// are printed), so that memory follows the input's size alone.
fn print_body(
    direction: Direction,
    api: ApiKey,
    version: i16,
    input: &[u8],
    out: &mut Output,
    compact: bool,
) -> Result<(), CliError> {
    match direction {
        Direction::Request => {
            let body =
                RequestBody::decode_with(input, api, version, DecodeOptions::new().without_heap())?;
            out.json_stream(compact, |json| body.write_json(json, version))
        }
        Direction::Response => {
            let body = ResponseBody::decode_with(
                input,
                api,
                version,
                DecodeOptions::new().without_heap(),
            )?;
            out.json_stream(compact, |json| body.write_json(json, version))
        }
    }
}

/// Decodes a frame without size prefix, then prints `{"header", "body"}`:
/// a request frame when `response_to` is `None` (its header names the api
/// and version), else a response to that api and version. Each part is
/// printed at the version it was decoded at. Nothing is printed unless the
/// whole frame decodes; as for a body, decoding allocates nothing.
fn print_frame(
    response_to: Option<(ApiKey, i16)>,
    frame: &[u8],
    out: &mut Output,
    compact: bool,
) -> Result<(), CliError> {
    match response_to {
        None => {
            let frame = RequestFrame::decode_without_heap(frame)?;
            out.json_stream(compact, |json| {
                frame_json(json, |json| {
                    frame.header.write_json(json, frame.header_version())?;
                    json.key("body")?;
                    frame.body.write_json(json, frame.api_version())
                })
            })
        }
        Some((api, version)) => {
            let frame = ResponseFrame::decode_without_heap(frame, api, version)?;
            out.json_stream(compact, |json| {
                frame_json(json, |json| {
                    frame.header.write_json(json, frame.header_version())?;
                    json.key("body")?;
                    frame.body.write_json(json, frame.version)
                })
            })
        }
    }
}

/// Writes `{"header": .., "body": ..}`: `parts` writes the header's value,
/// the `body` key and the body's value.
fn frame_json(
    json: &mut JsonWriter<'_>,
    parts: impl FnOnce(&mut JsonWriter<'_>) -> io::Result<()>,
) -> io::Result<()> {
    json.begin_object()?;
    json.key("header")?;
    parts(json)?;
    json.end_object()
}

/// Shifts the byte offset of a decoding error by `base`, for a frame that
/// starts at `base` in a stream.
fn shift(error: CliError, base: usize) -> CliError {
    match error {
        CliError::Decode(error) => CliError::Decode(error.shifted(base)),
        other => other,
    }
}
