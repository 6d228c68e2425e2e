//! Reading frames from a blocking `std::io::Read`, such as a
//! `std::net::TcpStream`: the size prefix, checked as the splitter checks
//! it, then the frame's bytes as they arrive.

use std::fmt;
use std::io::{self, Read};

use super::split::{frame_size, FrameError, READ_AHEAD};

/// Why [`read_frame`] returned no frame.
#[derive(Debug)]
pub enum ReadFrameError {
    /// Reading failed.
    Io(io::Error),
    /// The size prefix is refused: negative, or above the maximum.
    Size(FrameError),
    /// The stream ended inside a frame: after `received` of the 4 bytes of
    /// a size prefix (`size` is `None`), or after `received` of the `size`
    /// bytes the prefix announced.
    Truncated {
        /// The size the prefix announced, when it was read whole.
        size: Option<usize>,
        /// The bytes of the prefix, or of the frame, that arrived.
        received: usize,
    },
}

impl fmt::Display for ReadFrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadFrameError::Io(error) => write!(f, "reading a frame failed: {error}"),
            ReadFrameError::Size(error) => error.fmt(f),
            ReadFrameError::Truncated {
                size: None,
                received,
            } => write!(
                f,
                "the stream ended after {received} of the 4 bytes of a size prefix"
            ),
            ReadFrameError::Truncated {
                size: Some(size),
                received,
            } => write!(
                f,
                "the stream ended after {received} of the {size} bytes of a frame"
            ),
        }
    }
}

impl std::error::Error for ReadFrameError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadFrameError::Io(error) => Some(error),
            ReadFrameError::Size(error) => Some(error),
            ReadFrameError::Truncated { .. } => None,
        }
    }
}

impl From<ReadFrameError> for io::Error {
    fn from(error: ReadFrameError) -> Self {
        match error {
            ReadFrameError::Io(error) => error,
            ReadFrameError::Truncated { .. } => io::Error::new(io::ErrorKind::UnexpectedEof, error),
            ReadFrameError::Size(_) => io::Error::new(io::ErrorKind::InvalidData, error),
        }
    }
}

/// Reads one frame from `reader`: its int32 size prefix, then that many
/// bytes, returned without the prefix. `Ok(None)` when the stream ends
/// cleanly before a frame starts.
///
/// It reads no byte past the frame, so that the caller may go on reading
/// the stream. The size is checked against `max_frame_size` (usually
/// [`DEFAULT_MAX_FRAME_SIZE`](super::DEFAULT_MAX_FRAME_SIZE)) before any
/// byte of the frame is read, and the buffer grows with the bytes that
/// arrive, [`READ_AHEAD`] at a time: a peer that sends a prefix claiming
/// 100 MiB and then stalls costs a few KiB. Interrupted reads are retried.
pub fn read_frame<R: Read + ?Sized>(
    reader: &mut R,
    max_frame_size: usize,
) -> Result<Option<Vec<u8>>, ReadFrameError> {
    let mut prefix = [0u8; 4];
    let received = read_full(reader, &mut prefix)?;
    match received {
        0 => return Ok(None),
        4 => {}
        _ => {
            return Err(ReadFrameError::Truncated {
                size: None,
                received,
            })
        }
    }
    let size = frame_size(prefix, max_frame_size).map_err(ReadFrameError::Size)?;
    let mut frame = Vec::new();
    while frame.len() < size {
        let start = frame.len();
        let chunk = (size - start).min(READ_AHEAD);
        frame.resize(start + chunk, 0);
        let got = read_full(reader, &mut frame[start..])?;
        if got < chunk {
            return Err(ReadFrameError::Truncated {
                size: Some(size),
                received: start + got,
            });
        }
    }
    Ok(Some(frame))
}

/// Fills `buf` unless the stream ends first; returns the bytes read.
fn read_full<R: Read + ?Sized>(reader: &mut R, buf: &mut [u8]) -> Result<usize, ReadFrameError> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(ReadFrameError::Io(error)),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(body: &[u8]) -> Vec<u8> {
        let mut bytes = (body.len() as i32).to_be_bytes().to_vec();
        bytes.extend_from_slice(body);
        bytes
    }

    #[test]
    fn reads_frames_one_at_a_time_and_stops_at_a_clean_end() {
        let mut stream = framed(b"first");
        stream.extend(framed(&[7; 3 * READ_AHEAD + 5]));
        stream.extend(framed(b""));
        let mut input = &stream[..];
        let first = read_frame(&mut input, 1 << 20).unwrap();
        assert_eq!(first.as_deref(), Some(&b"first"[..]));
        // Nothing past the first frame was read.
        assert_eq!(input.len(), stream.len() - 9);
        let second = read_frame(&mut input, 1 << 20).unwrap().unwrap();
        assert_eq!(second, vec![7; 3 * READ_AHEAD + 5]);
        assert_eq!(read_frame(&mut input, 1 << 20).unwrap(), Some(Vec::new()));
        assert!(read_frame(&mut input, 1 << 20).unwrap().is_none());
    }

    #[test]
    fn refuses_bad_sizes_and_reports_truncation() {
        let negative = (-1i32).to_be_bytes();
        let error = read_frame(&mut &negative[..], 100).unwrap_err();
        assert!(matches!(
            error,
            ReadFrameError::Size(FrameError::NegativeSize(-1))
        ));
        let big = framed(&[0; 101]);
        let error = read_frame(&mut &big[..], 100).unwrap_err();
        assert!(matches!(
            error,
            ReadFrameError::Size(FrameError::TooLarge {
                size: 101,
                max: 100
            })
        ));
        let error = read_frame(&mut &[0u8, 0][..], 100).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the stream ended after 2 of the 4 bytes of a size prefix"
        );
        let short = &framed(b"abcdef")[..7];
        let error = read_frame(&mut &short[..], 100).unwrap_err();
        assert!(matches!(
            error,
            ReadFrameError::Truncated {
                size: Some(6),
                received: 3
            }
        ));
        assert_eq!(io::Error::from(error).kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn a_frame_cut_short_says_how_much_of_it_arrived() {
        // A prefix claiming 100 MiB, then 10 bytes.
        let mut stream = (100i32 << 20).to_be_bytes().to_vec();
        stream.extend_from_slice(&[1; 10]);
        let error = read_frame(&mut &stream[..], 200 << 20).unwrap_err();
        assert!(matches!(
            error,
            ReadFrameError::Truncated {
                size: Some(_),
                received: 10
            }
        ));
    }
}
