//! The runtime's bounds-checked reader, with errors in the records' terms.
//!
//! Record batches are read with kafka-wire's [`Reader`] and its varint
//! rules, like every other part of the protocol; this adapter only names
//! what was being read (`context`) and turns the reader's errors into
//! [`RecordsError`]s.

use kafka_wire::runtime::{DecodeError, DecodeErrorKind, Reader};

use super::error::RecordsError;

/// Reads big-endian integers, zigzag varints and slices from a byte slice,
/// turning every out-of-bounds read into [`RecordsError::Truncated`].
///
/// `base` is the position of the slice in the outer input, so errors report
/// offsets in that input rather than in the slice.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    reader: Reader<'a>,
    context: &'static str,
}

impl<'a> Cursor<'a> {
    /// A cursor over `buf`, which starts at `base` in the outer input.
    /// `context` names the structure in truncation errors.
    pub(crate) fn new(buf: &'a [u8], base: usize, context: &'static str) -> Self {
        Cursor {
            reader: Reader::with_base(buf, base),
            context,
        }
    }

    /// Position of the next byte in the outer input.
    pub(crate) fn offset(&self) -> usize {
        self.reader.offset()
    }

    /// Bytes not yet read.
    pub(crate) fn remaining(&self) -> usize {
        self.reader.remaining()
    }

    /// True when every byte has been read.
    pub(crate) fn is_empty(&self) -> bool {
        self.reader.is_empty()
    }

    /// The next `len` bytes, borrowed from the input.
    pub(crate) fn read_bytes(&mut self, len: usize) -> Result<&'a [u8], RecordsError> {
        self.reader.take(len).map_err(|e| self.records_error(e))
    }

    /// Reads an `i8`.
    pub(crate) fn read_i8(&mut self) -> Result<i8, RecordsError> {
        self.reader.read_i8().map_err(|e| self.records_error(e))
    }

    /// Reads a big-endian `i16`.
    pub(crate) fn read_i16(&mut self) -> Result<i16, RecordsError> {
        self.reader.read_i16().map_err(|e| self.records_error(e))
    }

    /// Reads a big-endian `i32`.
    pub(crate) fn read_i32(&mut self) -> Result<i32, RecordsError> {
        self.reader.read_i32().map_err(|e| self.records_error(e))
    }

    /// Reads a big-endian `u32`.
    pub(crate) fn read_u32(&mut self) -> Result<u32, RecordsError> {
        self.reader.read_u32().map_err(|e| self.records_error(e))
    }

    /// Reads a big-endian `i64`.
    pub(crate) fn read_i64(&mut self) -> Result<i64, RecordsError> {
        self.reader.read_i64().map_err(|e| self.records_error(e))
    }

    /// Reads a zigzag varint (see `kafka_wire::runtime::varint` for the
    /// rule on its last byte).
    pub(crate) fn read_varint(&mut self) -> Result<i32, RecordsError> {
        self.reader.read_varint().map_err(|e| self.records_error(e))
    }

    /// Reads a zigzag varlong.
    pub(crate) fn read_varlong(&mut self) -> Result<i64, RecordsError> {
        self.reader
            .read_varlong()
            .map_err(|e| self.records_error(e))
    }

    /// Reads a zigzag varint length followed by that many bytes; any
    /// negative length is null, as Kafka's reader takes it (a record's key
    /// and value, a header's value).
    pub(crate) fn read_varint_nullable_bytes(&mut self) -> Result<Option<&'a [u8]>, RecordsError> {
        let len = self.read_varint()?;
        self.nullable_bytes(i64::from(len))
    }

    /// Reads a big-endian `i32` length followed by that many bytes; any
    /// negative length is null, as Kafka's reader takes it (a legacy
    /// record's key and value).
    pub(crate) fn read_i32_nullable_bytes(&mut self) -> Result<Option<&'a [u8]>, RecordsError> {
        let len = self.read_i32()?;
        self.nullable_bytes(i64::from(len))
    }

    pub(crate) fn nullable_bytes(&mut self, len: i64) -> Result<Option<&'a [u8]>, RecordsError> {
        match len {
            len if len < 0 => Ok(None),
            // A length that does not fit `usize` cannot fit the input either.
            len => self
                .read_bytes(usize::try_from(len).unwrap_or(usize::MAX))
                .map(Some),
        }
    }

    /// The reader's error in the records' terms: a short read is
    /// [`RecordsError::Truncated`] in this cursor's context.
    fn records_error(&self, error: DecodeError) -> RecordsError {
        match *error.kind() {
            DecodeErrorKind::Truncated { needed, remaining } => RecordsError::Truncated {
                context: self.context,
                offset: error.offset(),
                needed,
                available: remaining,
            },
            DecodeErrorKind::VarintTooLong => RecordsError::VarintTooLong {
                offset: error.offset(),
            },
            // The reads above fail in no other way; keep whatever comes as
            // a truncation at its offset rather than lose it.
            _ => RecordsError::Truncated {
                context: self.context,
                offset: error.offset(),
                needed: 1,
                available: self.remaining(),
            },
        }
    }
}
