//! A tokio-util codec for Kafka's size-prefixed frames (feature `tokio`).
//!
//! [`FrameCodec`] splits a byte stream into frames without their int32 size
//! prefix, ready for [`crate::frame::RequestFrame::decode`] or
//! [`crate::frame::ResponseFrame::decode`], and writes frames with the
//! prefix. A frame larger than the configured maximum is an error as soon as
//! its size prefix is read, before any buffer grows to hold it.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

/// The default maximum frame size: 100 MiB, Kafka's `socket.request.max.bytes`.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;

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
            // Reserve only what this frame needs, and only once its size is known
            // to be acceptable.
            src.reserve(4 + size - src.len());
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
}
