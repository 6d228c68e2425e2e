//! Bytes waiting to be sent to one side: small pieces are gathered in one
//! buffer, large frames passed through are kept as they came, not copied.

use std::collections::VecDeque;

use bytes::{BufMut, Bytes, BytesMut};

use kafka_wire::runtime::{EncodeError, EncodeErrorKind};

/// Frames at least this large are queued by reference instead of copied.
const BY_REFERENCE: usize = 16 * 1024;

/// Bytes to write to one side, in order, as a few chunks.
#[derive(Debug, Default)]
pub struct Outgoing {
    chunks: VecDeque<Bytes>,
    tail: BytesMut,
    len: usize,
}

impl Outgoing {
    /// Whether there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many bytes there are to write.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The chunks, in the order they must be written.
    pub fn into_chunks(mut self) -> VecDeque<Bytes> {
        self.seal();
        self.chunks
    }

    /// All the bytes in one buffer (a copy).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for chunk in &self.chunks {
            out.extend_from_slice(chunk);
        }
        out.extend_from_slice(&self.tail);
        out
    }

    /// Takes everything, leaving this empty.
    pub(crate) fn take(&mut self) -> Outgoing {
        std::mem::take(self)
    }

    /// Appends another queue's bytes.
    pub(crate) fn append(&mut self, mut other: Outgoing) {
        other.seal();
        for chunk in other.chunks {
            self.push_bytes(chunk);
        }
    }

    /// Queues a frame with its int32 size prefix: `head` (copied) then
    /// `body` (kept by reference when large).
    pub(crate) fn push_frame(&mut self, head: &[u8], body: &Bytes) -> Result<(), EncodeError> {
        let len = head.len() + body.len();
        let size = i32::try_from(len)
            .map_err(|_| EncodeError::new(EncodeErrorKind::LengthOverflow(len)))?;
        self.tail.put_i32(size);
        self.tail.put_slice(head);
        self.len += 4 + head.len();
        self.push_bytes(body.clone());
        Ok(())
    }

    fn push_bytes(&mut self, bytes: Bytes) {
        self.len += bytes.len();
        if bytes.len() >= BY_REFERENCE {
            self.seal();
            self.chunks.push_back(bytes);
        } else {
            self.tail.extend_from_slice(&bytes);
        }
    }

    fn seal(&mut self) {
        if !self.tail.is_empty() {
            self.chunks.push_back(self.tail.split().freeze());
        }
    }
}
