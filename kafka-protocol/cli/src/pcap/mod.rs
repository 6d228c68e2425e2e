//! `kafka-protocol pcap`: Kafka traffic read out of a pcap or pcapng
//! capture by kafka-wire-capture, printed as JSON lines or summarised.
//!
//! The capture is read as a stream, one packet at a time, and each line is
//! written as soon as what it says is complete, so memory stays within the
//! reader's caps (and the summary's) whatever the capture's size. From
//! standard input, output is flushed after every packet that completed
//! something, for a live `tcpdump -U -w - | kafka-protocol pcap -`.

mod summary;

use std::fs::File;
use std::io::Read;
use std::path::Path;

use kafka_wire::ApiKey;
use kafka_wire_capture::{CaptureError, CaptureReader, Config, JsonOptions, Tracker};

use crate::apis::resolve_api;
use crate::args::PcapArgs;
use crate::error::CliError;
use crate::output::Output;

pub use summary::Summary;

/// What `pcap` found, as the capture reader names it.
type Found = kafka_wire_capture::Output;

/// Where the lines go: printed one by one, or counted into a summary.
enum Sink<'a> {
    Lines {
        out: &'a mut Output,
        options: JsonOptions,
        /// Flush after each packet that wrote something.
        live: bool,
    },
    Summary(Box<Summary>),
}

/// Reads the capture `args.input` names and prints what it holds.
pub fn run(args: &PcapArgs, out: &mut Output) -> Result<(), CliError> {
    let apis = args
        .apis
        .iter()
        .map(|name| resolve_api(name))
        .collect::<Result<Vec<ApiKey>, CliError>>()?;
    let stdin = args.input == Path::new("-");
    let what = if stdin {
        "standard input".to_owned()
    } else {
        args.input.display().to_string()
    };
    let mut sink = if args.summary {
        Sink::Summary(Box::default())
    } else {
        Sink::Lines {
            out: &mut *out,
            options: JsonOptions {
                records: args.records,
            },
            live: stdin,
        }
    };
    let config = Config {
        ports: args.ports.clone(),
        ..Config::default()
    };
    if stdin {
        read(std::io::stdin().lock(), &what, config, &apis, &mut sink)?;
    } else {
        let file = File::open(&args.input).map_err(|source| CliError::Read {
            what: what.clone(),
            source,
        })?;
        read(file, &what, config, &apis, &mut sink)?;
    }
    if let Sink::Summary(summary) = sink {
        if args.json {
            out.json(&summary.to_json(), true)?;
        } else {
            out.bytes(summary.to_table().as_bytes())?;
        }
    }
    Ok(())
}

/// Reads the whole capture through a tracker, handing what it finds to
/// `sink`; stops at the first failure to write.
fn read(
    input: impl Read,
    what: &str,
    config: Config,
    apis: &[ApiKey],
    sink: &mut Sink<'_>,
) -> Result<(), CliError> {
    let capture_error = |error: CaptureError| CliError::Capture {
        what: what.to_owned(),
        error,
    };
    let mut reader = CaptureReader::new(input).map_err(capture_error)?;
    let mut tracker = Tracker::new(config);
    while let Some(packet) = reader.next_packet().map_err(capture_error)? {
        tracker.packet(&packet);
        sink.drain(&mut tracker, apis)?;
    }
    if let Some(why) = reader.truncated() {
        tracker.truncated_file(why, reader.truncated_time());
    }
    tracker.finish();
    sink.drain(&mut tracker, apis)
}

/// Whether `--api` keeps `found`: every event; an exchange of one of
/// `apis` (all when none are given); a legacy SASL token exchange when
/// SaslHandshake is among them.
fn kept(found: &Found, apis: &[ApiKey]) -> bool {
    match found {
        _ if apis.is_empty() => true,
        Found::Exchange(exchange) => apis.contains(&exchange.api),
        Found::SaslToken(_) => apis.contains(&ApiKey::SaslHandshake),
        Found::Event(_) => true,
    }
}

impl Sink<'_> {
    /// Takes everything the tracker has found so far.
    fn drain(&mut self, tracker: &mut Tracker, apis: &[ApiKey]) -> Result<(), CliError> {
        let mut wrote = false;
        while let Some(found) = tracker.next_output() {
            if !kept(&found, apis) {
                continue;
            }
            match self {
                Sink::Lines { out, options, .. } => {
                    out.json_stream(true, |json| found.write_json(json, options))?;
                    wrote = true;
                }
                Sink::Summary(summary) => summary.add(&found),
            }
        }
        match self {
            Sink::Lines {
                out, live: true, ..
            } if wrote => out.flush(),
            _ => Ok(()),
        }
    }
}
