//! Splitting a byte stream into Kafka's size-prefixed frames: the one
//! parser of the int32 size prefix, the one maximum, and the one policy for
//! how much room to make while a frame is incomplete.
//!
//! # Memory
//!
//! A size prefix is a claim, not bytes. Nothing here reserves room for a
//! whole frame when its prefix arrives: while a frame is incomplete, at
//! most [`READ_AHEAD`] bytes are reserved beyond those already received
//! (fewer if the frame needs fewer), and the buffer otherwise grows only as
//! bytes arrive, by `BytesMut`'s own policy, which at most doubles what it
//! holds. A peer that sends only a prefix claiming 100 MiB costs a few KiB.

use std::fmt;

use bytes::{Buf, Bytes, BytesMut};

use crate::runtime::{DecodeError, DecodeErrorKind, Reader};

/// The default maximum frame size: 100 MiB, Kafka's `socket.request.max.bytes`.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;

/// Most bytes reserved ahead of the bytes received while a frame is
/// incomplete: 8 KiB, the initial read buffer of tokio-util's `FramedRead`.
pub const READ_AHEAD: usize = 8 * 1024;

/// Why a size prefix is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    /// The size prefix is negative.
    NegativeSize(i32),
    /// The frame is larger than the maximum.
    TooLarge {
        /// The size the prefix claims.
        size: usize,
        /// The maximum in force.
        max: usize,
    },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::NegativeSize(value) => write!(f, "negative frame size {value}"),
            FrameError::TooLarge { size, max } => {
                write!(f, "frame of {size} bytes exceeds the maximum of {max}")
            }
        }
    }
}

impl std::error::Error for FrameError {}

/// Reads the size of a frame from its int32 prefix, refusing a negative
/// size or one above `max`.
pub fn frame_size(prefix: [u8; 4], max: usize) -> Result<usize, FrameError> {
    let size = i32::from_be_bytes(prefix);
    let size = usize::try_from(size).map_err(|_| FrameError::NegativeSize(size))?;
    if size > max {
        return Err(FrameError::TooLarge { size, max });
    }
    Ok(size)
}

/// Takes the next whole frame, without its size prefix, from the front of
/// `buffer`; `None` when more bytes are needed. The size is checked as soon
/// as its prefix is complete, before the frame's bytes arrive.
///
/// While the frame is incomplete, room is made for at most [`READ_AHEAD`]
/// more bytes (see the module's "Memory" section), never for the whole
/// frame. [`FrameSplitter`] and the tokio codec both split with this.
pub fn next_frame(
    buffer: &mut BytesMut,
    max_frame_size: usize,
) -> Result<Option<Bytes>, FrameError> {
    let Some(prefix) = buffer.first_chunk::<4>() else {
        return Ok(None);
    };
    let size = frame_size(*prefix, max_frame_size)?;
    let missing = (4 + size).saturating_sub(buffer.len());
    if missing > 0 {
        buffer.reserve(missing.min(READ_AHEAD));
        return Ok(None);
    }
    buffer.advance(4);
    Ok(Some(buffer.split_to(size).freeze()))
}

/// A sans-IO frame splitter: push bytes as they come from a socket, in
/// pieces of any size, and take whole frames out.
///
/// It holds at most one incomplete frame, plus [`READ_AHEAD`] (see the
/// module's "Memory" section); a frame above the maximum is an error as
/// soon as its size prefix is complete.
#[derive(Debug)]
pub struct FrameSplitter {
    max_frame_size: usize,
    buffer: BytesMut,
}

impl Default for FrameSplitter {
    fn default() -> Self {
        FrameSplitter::new(DEFAULT_MAX_FRAME_SIZE)
    }
}

impl FrameSplitter {
    /// A splitter that refuses frames larger than `max_frame_size` bytes.
    pub fn new(max_frame_size: usize) -> Self {
        FrameSplitter {
            max_frame_size,
            buffer: BytesMut::new(),
        }
    }

    /// The largest frame accepted, in bytes, without the size prefix.
    pub fn max_frame_size(&self) -> usize {
        self.max_frame_size
    }

    /// Appends bytes as they came from the peer.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// Bytes held that do not make a whole frame yet.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Room the splitter holds, used or not: what it costs in memory.
    pub fn capacity(&self) -> usize {
        self.buffer.capacity()
    }

    /// The next whole frame, without its size prefix; `None` when more
    /// bytes are needed.
    pub fn next_frame(&mut self) -> Result<Option<Bytes>, FrameError> {
        next_frame(&mut self.buffer, self.max_frame_size)
    }
}

/// Splits a stream of size-prefixed frames, such as a capture, into frames.
///
/// Yields each frame without its prefix. A negative size, or a size that
/// runs past the end of the input, ends the iteration with an error naming
/// the byte offset of the prefix.
pub fn split_frames(stream: &[u8]) -> SplitFrames<'_> {
    SplitFrames {
        stream,
        position: 0,
        failed: false,
    }
}

/// The iterator returned by [`split_frames`].
#[derive(Debug, Clone)]
pub struct SplitFrames<'a> {
    stream: &'a [u8],
    position: usize,
    failed: bool,
}

impl<'a> SplitFrames<'a> {
    /// The offset of the next frame's size prefix.
    pub fn position(&self) -> usize {
        self.position
    }
}

impl<'a> Iterator for SplitFrames<'a> {
    type Item = Result<(usize, &'a [u8]), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.position >= self.stream.len() {
            return None;
        }
        let start = self.position;
        let mut reader = Reader::new(&self.stream[start..]);
        let result = reader
            .read_i32()
            .and_then(|size| match frame_size(size.to_be_bytes(), usize::MAX) {
                Ok(size) => Ok(size),
                Err(_) => Err(DecodeError::new(
                    0,
                    DecodeErrorKind::InvalidLength(size.into()),
                )),
            })
            .and_then(|size| {
                let offset = reader.offset();
                if size > reader.remaining() {
                    Err(DecodeError::new(
                        offset,
                        DecodeErrorKind::LengthExceedsInput {
                            length: size as u64,
                            remaining: reader.remaining(),
                        },
                    ))
                } else {
                    reader.take(size)
                }
            });
        match result {
            Ok(frame) => {
                self.position = start + 4 + frame.len();
                Some(Ok((start + 4, frame)))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e.shifted(start)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_checked_against_the_maximum() {
        assert_eq!(frame_size([0, 0, 0, 16], 16), Ok(16));
        assert_eq!(
            frame_size([0, 0, 0, 17], 16),
            Err(FrameError::TooLarge { size: 17, max: 16 })
        );
        assert_eq!(
            frame_size([0xff, 0xff, 0xff, 0xfe], 16),
            Err(FrameError::NegativeSize(-2))
        );
    }

    #[test]
    fn frames_come_out_whole_from_pieces_of_any_size() {
        let stream = b"\x00\x00\x00\x03abc\x00\x00\x00\x00\x00\x00\x00\x02de";
        for piece in 1..=stream.len() {
            let mut splitter = FrameSplitter::new(16);
            let mut frames = Vec::new();
            for chunk in stream.chunks(piece) {
                splitter.push(chunk);
                while let Some(frame) = splitter.next_frame().ok().flatten() {
                    frames.push(frame);
                }
            }
            assert_eq!(frames, [&b"abc"[..], b"", b"de"], "pieces of {piece}");
            assert_eq!(splitter.buffered(), 0);
        }
    }

    #[test]
    fn a_prefix_alone_reserves_only_the_read_ahead() {
        // A frame of exactly the default maximum, of which only the prefix
        // ever arrives.
        let mut splitter = FrameSplitter::default();
        splitter.push(&(DEFAULT_MAX_FRAME_SIZE as i32).to_be_bytes());
        for _ in 0..3 {
            assert_eq!(splitter.next_frame(), Ok(None));
            assert!(
                splitter.capacity() <= 4 + READ_AHEAD,
                "capacity {} after a bare prefix",
                splitter.capacity()
            );
        }
    }

    #[test]
    fn the_buffer_grows_with_the_bytes_that_arrive() {
        let size = 1 << 20;
        let mut splitter = FrameSplitter::default();
        splitter.push(&(size as i32).to_be_bytes());
        let chunk = [7u8; 1000];
        let mut sent = 0;
        while sent < size {
            assert_eq!(splitter.next_frame(), Ok(None));
            assert!(
                splitter.capacity() <= 2 * (splitter.buffered() + READ_AHEAD),
                "capacity {} holding {} bytes",
                splitter.capacity(),
                splitter.buffered()
            );
            let n = chunk.len().min(size - sent);
            splitter.push(&chunk[..n]);
            sent += n;
        }
        let frame = splitter.next_frame().ok().flatten().map(|f| f.len());
        assert_eq!(frame, Some(size));
    }
}
