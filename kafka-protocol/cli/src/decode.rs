//! `decode`: bytes to the JSON form.

use kafka_wire::frame::{split_frames, RequestFrame, ResponseFrame};
use kafka_wire::runtime::JsonForm;
use kafka_wire::{ApiKey, RequestBody, ResponseBody};
use serde_json::Value;

use crate::apis::resolve;
use crate::args::{DecodeArgs, Direction, Plan};
use crate::error::CliError;
use crate::input::read_bytes;
use crate::output::{FrameJson, Output};

/// Runs `decode` with a checked `plan`.
pub fn run(args: &DecodeArgs, plan: &Plan, out: &mut Output) -> Result<(), CliError> {
    match plan {
        Plan::Body { direction, api } => {
            let (api, version) = resolve(api)?;
            let input = read_bytes(args.message.input.as_ref(), args.message.hex)?;
            let json = body_json(*direction, api, version, &input)?;
            out.json(&json, args.compact)
        }
        Plan::Frames {
            stream,
            response_to,
        } => {
            let response_to = response_to.as_ref().map(resolve).transpose()?;
            let input = read_bytes(args.message.input.as_ref(), args.message.hex)?;
            if !stream {
                return out.json(&frame_json(response_to, &input)?, args.compact);
            }
            for (index, item) in split_frames(&input).enumerate() {
                let frame = item
                    .map_err(|error| CliError::Decode(error.in_field("size")))
                    .and_then(|(start, frame)| {
                        frame_json(response_to, frame).map_err(|error| shift(error, start))
                    })
                    .map_err(|error| error.in_frame(index + 1))?;
                out.json(&frame, true)?;
            }
            Ok(())
        }
    }
}

/// Decodes a body of exactly `input` and returns its JSON form.
fn body_json(
    direction: Direction,
    api: ApiKey,
    version: i16,
    input: &[u8],
) -> Result<Value, CliError> {
    Ok(match direction {
        Direction::Request => RequestBody::decode(input, api, version)?.to_json(version),
        Direction::Response => ResponseBody::decode(input, api, version)?.to_json(version),
    })
}

/// Decodes a frame without size prefix and returns `{"header", "body"}`:
/// a request frame when `response_to` is `None` (its header names the api
/// and version), else a response to that api and version. Each part is
/// printed at the version it was decoded at.
fn frame_json(response_to: Option<(ApiKey, i16)>, frame: &[u8]) -> Result<FrameJson, CliError> {
    Ok(match response_to {
        None => {
            let frame = RequestFrame::decode(frame)?;
            FrameJson {
                header: frame.header.to_json(frame.header_version()),
                body: frame.body.to_json(frame.api_version()),
            }
        }
        Some((api, version)) => {
            let frame = ResponseFrame::decode(frame, api, version)?;
            FrameJson {
                header: frame.header.to_json(frame.header_version()),
                body: frame.body.to_json(frame.version),
            }
        }
    })
}

/// Shifts the byte offset of a decoding error by `base`, for a frame that
/// starts at `base` in a stream.
fn shift(error: CliError, base: usize) -> CliError {
    match error {
        CliError::Decode(error) => CliError::Decode(error.shifted(base)),
        other => other,
    }
}
