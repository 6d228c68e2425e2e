//! A tokio-util codec for Kafka's size-prefixed frames (feature `tokio`).
//!
//! [`FrameCodec`] splits a byte stream into frames without their int32 size
//! prefix, ready for [`RequestFrame::decode`](super::RequestFrame::decode)
//! or [`ResponseFrame::decode`](super::ResponseFrame::decode), and writes
//! frames with the prefix. It splits with [`next_frame`], so it has the
//! same maximum and the same memory policy as [`FrameSplitter`](super::FrameSplitter):
//! a frame larger than the maximum is an error as soon as its size prefix
//! is read, and a prefix alone never makes a buffer grow by more than
//! [`READ_AHEAD`](super::READ_AHEAD).

use std::fmt;

use bytes::{BufMut, Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use super::split::{frame_size, next_frame, FrameError, DEFAULT_MAX_FRAME_SIZE};

/// Why a frame could not be read or written.
#[derive(Debug)]
pub enum FrameCodecError {
    /// The size prefix is negative.
    NegativeSize(i32),
    /// The frame is larger than the configured maximum.
    TooLarge {
        /// The frame's size.
        size: usize,
        /// The configured maximum.
        max: usize,
    },
    /// The underlying stream failed.
    Io(std::io::Error),
}

impl fmt::Display for FrameCodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameCodecError::NegativeSize(value) => write!(f, "negative frame size {value}"),
            FrameCodecError::TooLarge { size, max } => {
                write!(f, "frame of {size} bytes exceeds the maximum of {max}")
            }
            FrameCodecError::Io(inner) => fmt::Display::fmt(inner, f),
        }
    }
}

impl std::error::Error for FrameCodecError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FrameCodecError::Io(inner) => std::error::Error::source(inner),
            _ => None,
        }
    }
}

impl From<std::io::Error> for FrameCodecError {
    fn from(error: std::io::Error) -> Self {
        FrameCodecError::Io(error)
    }
}

impl From<FrameError> for FrameCodecError {
    fn from(error: FrameError) -> Self {
        match error {
            FrameError::NegativeSize(size) => FrameCodecError::NegativeSize(size),
            FrameError::TooLarge { size, max } => FrameCodecError::TooLarge { size, max },
        }
    }
}

/// Splits a stream into size-prefixed frames and writes frames with their prefix.
#[derive(Debug, Clone, Copy)]
pub struct FrameCodec {
    max_frame_size: usize,
}

impl Default for FrameCodec {
    fn default() -> Self {
        FrameCodec::new(DEFAULT_MAX_FRAME_SIZE)
    }
}

impl FrameCodec {
    /// A codec that rejects frames larger than `max_frame_size` bytes.
    pub fn new(max_frame_size: usize) -> Self {
        FrameCodec { max_frame_size }
    }

    /// The largest frame accepted, in bytes, without the size prefix.
    pub fn max_frame_size(&self) -> usize {
        self.max_frame_size
    }
}

impl Decoder for FrameCodec {
    type Item = Bytes;
    type Error = FrameCodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, FrameCodecError> {
        Ok(next_frame(src, self.max_frame_size)?)
    }
}

impl<T: AsRef<[u8]>> Encoder<T> for FrameCodec {
    type Error = FrameCodecError;

    fn encode(&mut self, frame: T, dst: &mut BytesMut) -> Result<(), FrameCodecError> {
        let frame = frame.as_ref();
        let too_large = FrameError::TooLarge {
            size: frame.len(),
            max: self.max_frame_size,
        };
        let size = i32::try_from(frame.len()).map_err(|_| too_large)?;
        frame_size(size.to_be_bytes(), self.max_frame_size)?;
        dst.reserve(4 + frame.len());
        dst.put_i32(size);
        dst.put_slice(frame);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::READ_AHEAD;

    #[test]
    fn splits_frames_and_waits_for_more() {
        let mut codec = FrameCodec::new(16);
        let mut buf = BytesMut::from(&b"\x00\x00\x00\x03abc\x00\x00\x00\x02d"[..]);
        assert_eq!(
            codec.decode(&mut buf).ok().flatten(),
            Some(Bytes::from_static(b"abc"))
        );
        assert_eq!(codec.decode(&mut buf).ok().flatten(), None);
        buf.extend_from_slice(b"e");
        assert_eq!(
            codec.decode(&mut buf).ok().flatten(),
            Some(Bytes::from_static(b"de"))
        );
    }

    #[test]
    fn oversized_and_negative_sizes_fail_before_allocating() {
        let mut codec = FrameCodec::new(16);
        let mut buf = BytesMut::from(&b"\x7f\xff\xff\xff"[..]);
        assert!(matches!(
            codec.decode(&mut buf),
            Err(FrameCodecError::TooLarge {
                size: 0x7fff_ffff,
                max: 16
            })
        ));
        assert!(buf.capacity() < 1024);
        let mut buf = BytesMut::from(&b"\xff\xff\xff\xfe"[..]);
        assert!(matches!(
            codec.decode(&mut buf),
            Err(FrameCodecError::NegativeSize(-2))
        ));
        let mut out = BytesMut::new();
        assert!(codec.encode(vec![0u8; 17], &mut out).is_err());
    }

    #[test]
    fn a_prefix_alone_reserves_almost_nothing() {
        // `063fffff`: a frame of 104,857,599 bytes, just under the default
        // maximum, of which only the prefix ever arrives.
        let mut codec = FrameCodec::default();
        let mut buf = BytesMut::from(&b"\x06\x3f\xff\xff"[..]);
        assert!(matches!(codec.decode(&mut buf), Ok(None)));
        assert!(
            buf.capacity() <= 4 + READ_AHEAD,
            "capacity {} after a bare prefix",
            buf.capacity()
        );
        // Asking again (as `FramedRead` does after each read) grows nothing.
        assert!(matches!(codec.decode(&mut buf), Ok(None)));
        assert!(buf.capacity() <= 4 + READ_AHEAD);
    }

    #[test]
    fn the_buffer_grows_with_the_bytes_that_arrive() {
        let size = 1 << 20;
        let mut codec = FrameCodec::default();
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&(size as i32).to_be_bytes());
        let chunk = [7u8; 1000];
        let mut sent = 0;
        while sent < size {
            assert!(matches!(codec.decode(&mut buf), Ok(None)));
            // Never more than twice what is held and the read-ahead.
            assert!(
                buf.capacity() <= 2 * (buf.len() + READ_AHEAD),
                "capacity {} holding {} bytes",
                buf.capacity(),
                buf.len()
            );
            let n = chunk.len().min(size - sent);
            buf.extend_from_slice(&chunk[..n]);
            sent += n;
        }
        let frame = codec.decode(&mut buf).ok().flatten().map(|f| f.len());
        assert_eq!(frame, Some(size));
    }
}
