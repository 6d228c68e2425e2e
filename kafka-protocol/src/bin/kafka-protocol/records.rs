//! `records`: a records blob to JSON.

use kafka_wire::records::{records_to_json, DecodeOptions};

use crate::args::RecordsArgs;
use crate::error::CliError;
use crate::input::read_bytes;
use crate::output::Output;

/// Decodes the whole blob (any mix of v2 batches and legacy message sets,
/// decompressing with the default size limit) and prints its JSON form.
pub fn run(args: &RecordsArgs, out: &mut Output) -> Result<(), CliError> {
    let blob = read_bytes(args.input.as_ref(), args.hex)?;
    let json = records_to_json(&blob, &DecodeOptions::default())?;
    out.json(&json, args.compact)
}
