//! The errors of reading a capture.

use std::io;

/// Why a capture cannot be read at all. Everything that goes wrong inside a
/// capture that can be read (a lost segment, a frame that does not decode,
/// a file cut short) is an [`crate::Event`] instead.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The input is not a pcap or pcapng file.
    #[error("not a pcap or pcapng capture: {0}")]
    NotACapture(String),
    /// The input could not be read.
    #[error("cannot read the capture: {0}")]
    Read(#[source] io::Error),
}
