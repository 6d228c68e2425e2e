//! A tokio-util codec for Kafka's size-prefixed frames (feature `tokio`).
//!
//! [`FrameCodec`] splits a byte stream into frames without their int32 size
//! prefix, ready for [`crate::frame::RequestFrame::decode`] or
//! [`crate::frame::ResponseFrame::decode`], and writes frames with the
//! prefix. A frame larger than the configured maximum is an error as soon as
//! its size prefix is read, before any buffer grows to hold it.
//!
//! # Memory
//!
//! The size prefix is a claim, not bytes: the decoder never reserves room
//! for a whole frame when its prefix arrives. While a frame is incomplete it
//! asks the buffer for at most [`READ_AHEAD`] bytes beyond those already
//! received (fewer if the frame needs fewer), so a peer that sends only a
//! prefix claiming 100 MiB costs a few KiB, and a buffer grows only as the
//! frame's bytes actually arrive (by the buffer's own growth policy, which
//! at most doubles what it holds).

use bytes::{Buf, BufMut, Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

/// The default maximum frame size: 100 MiB, Kafka's `socket.request.max.bytes`.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;

/// Most bytes the decoder reserves ahead of the bytes received while a frame
/// is incomplete: 8 KiB, the initial read buffer of tokio-util's `FramedRead`.
pub const READ_AHEAD: usize = 8 * 1024;

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FrameCodecError {
    /// The size prefix is negative.
    #[error("negative frame size {0}")]
    NegativeSize(i32),
    /// The frame is larger than the configured maximum.
    #[error("frame of {size} bytes exceeds the maximum of {max}")]
    TooLarge {
        /// The frame's size.
        size: usize,
        /// The configured maximum.
        max: usize,
    },
    /// The underlying stream failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
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

    fn check(&self, size: usize) -> Result<(), FrameCodecError> {
        if size > self.max_frame_size {
            Err(FrameCodecError::TooLarge {
                size,
                max: self.max_frame_size,
            })
        } else {
            Ok(())
        }
    }
}

impl Decoder for FrameCodec {
    type Item = Bytes;
    type Error = FrameCodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, FrameCodecError> {
        let Some(prefix) = src.first_chunk::<4>() else {
            return Ok(None);
        };
        let size = i32::from_be_bytes(*prefix);
        let size = usize::try_from(size).map_err(|_| FrameCodecError::NegativeSize(size))?;
        self.check(size)?;
        if src.len() < 4 + size {
            // The prefix is only a claim: make room for the next read, never
            // for the whole frame (see the module's "Memory" section).
            src.reserve((4 + size - src.len()).min(READ_AHEAD));
            return Ok(None);
        }
        src.advance(4);
        Ok(Some(src.split_to(size).freeze()))
    }
}

impl<T: AsRef<[u8]>> Encoder<T> for FrameCodec {
    type Error = FrameCodecError;

    fn encode(&mut self, frame: T, dst: &mut BytesMut) -> Result<(), FrameCodecError> {
        let frame = frame.as_ref();
        self.check(frame.len())?;
        let size = i32::try_from(frame.len()).map_err(|_| FrameCodecError::TooLarge {
            size: frame.len(),
            max: self.max_frame_size,
        })?;
        dst.reserve(4 + frame.len());
        dst.put_i32(size);
        dst.put_slice(frame);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
