//! The errors of reading a capture.

use std::io;

/// Why a capture cannot be read at all. Everything that goes wrong inside a
/// capture that can be read (a lost segment, a frame that does not decode,
/// a file cut short after its header) is an [`crate::Event`] instead.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The input is not a pcap or pcapng file.
    #[error("not a pcap or pcapng capture: {0}")]
    NotACapture(String),
    /// The input starts as a capture but ends inside its file header (or
    /// pcapng section header): a file cut short.
    #[error(
        "a {format} file cut short: its header takes {expected} bytes, and there are only {got}"
    )]
    CutShort {
        /// `pcap` or `pcapng`, as the magic number says.
        format: &'static str,
        /// The bytes the header takes.
        expected: usize,
        /// The bytes there are.
        got: usize,
    },
    /// The input could not be read.
    #[error("cannot read the capture: {0}")]
    Read(#[source] io::Error),
}
