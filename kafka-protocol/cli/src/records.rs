//! `records`: a records blob to JSON.

use kafka_wire_records::{write_records_json, Batches, DecodeOptions, WriteJsonError};

use crate::args::RecordsArgs;
use crate::error::CliError;
use crate::input::read_bytes;
use crate::output::{write_error, Output};

/// Decodes the whole blob (any mix of v2 batches and legacy message sets,
/// decompressing with the default limits) and prints its JSON form.
///
/// Memory stays at the input plus one decompressed batch, whatever the
/// number of batches and records: a first pass decodes every batch and
/// record and prints nothing, so that a bad blob prints only the error
/// line; a second pass prints the JSON as it decodes.
pub fn run(args: &RecordsArgs, out: &mut Output) -> Result<(), CliError> {
    let blob = read_bytes(args.input.as_ref(), args.hex)?;
    let options = DecodeOptions::default();
    for batch in Batches::new(&blob, &options) {
        batch?;
    }
    write_records_json(&blob, &options, out.writer(), !args.compact).map_err(
        |error| match error {
            WriteJsonError::Records(error) => CliError::Records(error),
            WriteJsonError::Io(error) => write_error(error),
        },
    )?;
    out.bytes(b"\n")
}
