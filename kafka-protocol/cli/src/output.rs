//! Writing to standard output: JSON (pretty or compact), raw bytes or hex,
//! treating a closed pipe as a quiet stop rather than an error.

use std::io::{self, BufWriter, Write};

use kafka_wire::runtime::json::JsonWriter;
use serde::Serialize;

use crate::error::CliError;

/// Buffered standard output.
pub struct Output {
    out: BufWriter<Box<dyn Write>>,
}

/// How much output is gathered before it is written.
const BUFFER: usize = 64 * 1024;

impl Output {
    /// Standard output, buffered here alone: on Unix through a duplicate
    /// of its descriptor, since the standard library's handle is
    /// line-buffered and scans every write for its last newline (6% of
    /// `pcap --records`'s time on a capture of megabytes of records). Lines
    /// go out when the buffer fills and on [`flush`](Self::flush), which
    /// the commands call where a line must not wait.
    pub fn new() -> Self {
        Output {
            out: BufWriter::with_capacity(BUFFER, standard_output()),
        }
    }

    /// Writes `bytes` as they are.
    pub fn bytes(&mut self, bytes: &[u8]) -> Result<(), CliError> {
        self.out.write_all(bytes).map_err(write_error)
    }

    /// Writes `bytes` as lowercase hex followed by a newline.
    pub fn hex_line(&mut self, bytes: &[u8]) -> Result<(), CliError> {
        let mut text = hex::encode(bytes);
        text.push('\n');
        self.bytes(text.as_bytes())
    }

    /// Writes `value` as JSON followed by a newline: on one line when
    /// `compact`, else indented by two spaces.
    pub fn json<T: Serialize>(&mut self, value: &T, compact: bool) -> Result<(), CliError> {
        let result = if compact {
            serde_json::to_writer(&mut self.out, value)
        } else {
            serde_json::to_writer_pretty(&mut self.out, value)
        };
        result.map_err(|error| match error.io_error_kind() {
            Some(kind) => write_error(io::Error::from(kind)),
            None => CliError::Write(io::Error::other(error)),
        })?;
        self.bytes(b"\n")
    }

    /// Writes JSON piece by piece through `write`, followed by a newline:
    /// on one line when `compact`, else indented by two spaces. The text is
    /// what [`json`](Self::json) prints for the same value, without
    /// building the value first.
    pub fn json_stream(
        &mut self,
        compact: bool,
        write: impl FnOnce(&mut JsonWriter<'_>) -> io::Result<()>,
    ) -> Result<(), CliError> {
        write(&mut JsonWriter::new(&mut self.out, !compact)).map_err(write_error)?;
        self.bytes(b"\n")
    }

    /// The buffered writer, for output written piece by piece; map its
    /// errors with [`write_error`].
    pub fn writer(&mut self) -> &mut impl Write {
        &mut self.out
    }

    /// Writes a line of text.
    pub fn line(&mut self, text: &str) -> Result<(), CliError> {
        self.bytes(text.as_bytes())?;
        self.bytes(b"\n")
    }

    /// Flushes what is buffered.
    pub fn flush(&mut self) -> Result<(), CliError> {
        self.out.flush().map_err(write_error)
    }
}

/// The error for a failed write to standard output: a closed pipe is
/// [`CliError::BrokenPipe`].
pub fn write_error(error: io::Error) -> CliError {
    if error.kind() == io::ErrorKind::BrokenPipe {
        CliError::BrokenPipe
    } else {
        CliError::Write(error)
    }
}

/// Standard output without the standard library's line buffering, or its
/// handle where the descriptor cannot be duplicated.
fn standard_output() -> Box<dyn Write> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() {
            return Box::new(std::fs::File::from(fd));
        }
    }
    Box::new(io::stdout())
}
