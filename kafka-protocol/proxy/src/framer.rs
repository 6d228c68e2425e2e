//! Splits one direction of a byte stream into size-prefixed frames, holding
//! at most one frame's bytes.

use bytes::{Buf, Bytes, BytesMut};

use super::error::{ProxyError, Side};

/// Accumulates bytes and yields whole frames, without their size prefix.
#[derive(Debug)]
pub(crate) struct Framer {
    side: Side,
    max_frame_size: usize,
    buffer: BytesMut,
}

impl Framer {
    pub(crate) fn new(side: Side, max_frame_size: usize) -> Self {
        Framer {
            side,
            max_frame_size,
            buffer: BytesMut::new(),
        }
    }

    /// Appends bytes as they came from the socket.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// Bytes held that do not yet make a whole frame.
    pub(crate) fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// The next whole frame, `None` when more bytes are needed. The size is
    /// checked as soon as its prefix is complete, before the frame arrives.
    pub(crate) fn next_frame(&mut self) -> Result<Option<Bytes>, ProxyError> {
        let Some(prefix) = self.buffer.first_chunk::<4>() else {
            return Ok(None);
        };
        let size = i32::from_be_bytes(*prefix);
        let size = usize::try_from(size).map_err(|_| ProxyError::NegativeSize {
            side: self.side,
            size,
        })?;
        if size > self.max_frame_size {
            return Err(ProxyError::FrameTooLarge {
                side: self.side,
                size,
                max: self.max_frame_size,
            });
        }
        if self.buffer.len() < 4 + size {
            self.buffer.reserve(4 + size - self.buffer.len());
            return Ok(None);
        }
        self.buffer.advance(4);
        Ok(Some(self.buffer.split_to(size).freeze()))
    }
}
