//! Kafka traffic from packet captures.
//!
//! A capture (pcap, microsecond or nanosecond, or pcapng with any number
//! of interfaces) is read as a stream ([`CaptureReader`], over any
//! `std::io::Read`, standard input included); each packet's link layer,
//! IPv4 or IPv6 and TCP headers are read ([`link`]); each connection's two
//! directions are reassembled in stream order, whatever order, duplicates
//! or losses the capture shows; the bytes are split into Kafka frames by
//! kafka-wire's splitter; and each response is paired with its request by
//! correlation id. What comes out ([`Output`]) is one of:
//!
//! - an [`Exchange`]: the request and its response (none for a Produce
//!   with `acks = 0`), both as frames that kafka-wire decodes;
//! - a [`SaslTokenExchange`]: a bare SASL token and its answer after a
//!   SaslHandshake v0, sizes only;
//! - an [`Event`]: a [`gap`](EventKind::Gap), a [`resync`](EventKind::Resync),
//!   an [`unpaired-response`](EventKind::UnpairedResponse), an
//!   [`unanswered`](EventKind::Unanswered) request, a [`tls`](EventKind::Tls)
//!   stream, an [`undecodable`](EventKind::Undecodable) frame, an
//!   [`evicted`](EventKind::Evicted) connection, a
//!   [`truncated-file`](EventKind::TruncatedFile), or a
//!   [`direction`](EventKind::Direction) guessed for a connection captured
//!   mid-stream.
//!
//! The core, [`Tracker`], is sans-IO: it takes packets or TCP segments and
//! gives outputs, so a tool with its own packet source (a live socket, a
//! ring buffer) feeds it directly. [`read_capture`] drives it over a file.
//!
//! ```
//! use kafka_wire_capture::{read_capture, Config, Output, Tracker};
//!
//! // A pcap file header and nothing else: a capture with no packets.
//! let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
//! file.extend_from_slice(&[0; 8]);
//! file.extend_from_slice(&65535u32.to_le_bytes());
//! file.extend_from_slice(&1u32.to_le_bytes());
//! let mut tracker = Tracker::new(Config::default());
//! let mut outputs = Vec::new();
//! read_capture(&file[..], &mut tracker, |output: Output| outputs.push(output))?;
//! assert!(outputs.is_empty());
//! # Ok::<(), kafka_wire_capture::CaptureError>(())
//! ```
//!
//! # Memory
//!
//! Bounded whatever the capture's size: the file is read one block at a
//! time; each connection holds at most [`Config::max_connection_bytes`]
//! (a partial frame, segments out of order, requests awaiting answers, at
//! most [`Config::max_pending`] of them); all connections together at most
//! [`Config::max_total_bytes`], past which those idle longest are evicted.
//! A size prefix reserves nothing: a frame's bytes are held as they arrive
//! (kafka-wire's splitter), so a frame of up to [`Config::max_frame_size`]
//! (100 MiB by default) decodes, and a claim of 2 GiB costs nothing.
//!
//! # Secrets
//!
//! The JSON form (feature `json`) redacts the fields that hold secrets by
//! the same list as the proxy's log ([`kafka_wire_proxy::redact`]), and the
//! legacy SASL exchange is tracked by the proxy's rule
//! ([`kafka_wire_proxy::sasl`]): its bare tokens are never kept.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod boundary;
mod error;
mod file;
#[cfg(feature = "json")]
mod json;
pub mod link;
mod output;
mod roles;
mod tcp;
mod time;
mod tracker;

use std::io::Read;

pub use error::CaptureError;
pub use file::CaptureReader;
#[cfg(feature = "json")]
pub use json::JsonOptions;
pub use link::{LinkType, Packet, Segment, TcpFlags};
pub use output::{Event, EventKind, Exchange, Output, Response, SaslTokenExchange};
pub use time::Timestamp;
pub use tracker::{Config, Stats, Tracker, CONNECTION_OVERHEAD, DEFAULT_KAFKA_PORTS};

/// Reads a whole capture through `tracker`, handing each output to
/// `on_output` as soon as it is found, and finishes the tracker at the end.
///
/// A capture cut short (or a block that does not parse) ends with a
/// `truncated-file` event, not an error: what came before it was read.
/// Fails only when the input is not a capture, or cannot be read.
pub fn read_capture<R: Read>(
    input: R,
    tracker: &mut Tracker,
    mut on_output: impl FnMut(Output),
) -> Result<(), CaptureError> {
    let mut reader = CaptureReader::new(input)?;
    while let Some(packet) = reader.next_packet()? {
        tracker.packet(&packet);
        while let Some(output) = tracker.next_output() {
            on_output(output);
        }
    }
    if let Some(why) = reader.truncated() {
        tracker.truncated_file(why, reader.truncated_time());
    }
    tracker.finish();
    while let Some(output) = tracker.next_output() {
        on_output(output);
    }
    Ok(())
}
