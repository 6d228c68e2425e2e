//! A bounds-checked cursor over borrowed bytes.

use super::error::RecordsError;
use super::varint::{self, VarintError};

/// Reads big-endian integers, zigzag varints and slices from a byte slice,
/// turning every out-of-bounds read into [`RecordsError::Truncated`].
///
/// `base` is the position of `buf` in the outer input, so errors report
/// offsets in that input rather than in the slice.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
    context: &'static str,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, which starts at `base` in the outer input.
    /// `context` names the structure in truncation errors.
    pub(crate) fn new(buf: &'a [u8], base: usize, context: &'static str) -> Self {
        Reader {
            buf,
            pos: 0,
            base,
            context,
        }
    }

    /// Position of the next byte in the outer input.
    pub(crate) fn offset(&self) -> usize {
        self.base.saturating_add(self.pos)
    }

    /// Bytes not yet read.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// True when every byte has been read.
    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The next `len` bytes, borrowed from the input.
    pub(crate) fn bytes(&mut self, len: usize) -> Result<&'a [u8], RecordsError> {
        let end = self.pos.checked_add(len);
        match end.and_then(|end| self.buf.get(self.pos..end)) {
            Some(slice) => {
                self.pos += len;
                Ok(slice)
            }
            None => Err(self.truncated(len)),
        }
    }

    /// The next `N` bytes as an array.
    fn array<const N: usize>(&mut self) -> Result<[u8; N], RecordsError> {
        let slice = self.bytes(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(slice);
        Ok(out)
    }

    /// Reads an `i8`.
    pub(crate) fn i8(&mut self) -> Result<i8, RecordsError> {
        self.array().map(i8::from_be_bytes)
    }

    /// Reads a big-endian `i16`.
    pub(crate) fn i16(&mut self) -> Result<i16, RecordsError> {
        self.array().map(i16::from_be_bytes)
    }

    /// Reads a big-endian `i32`.
    pub(crate) fn i32(&mut self) -> Result<i32, RecordsError> {
        self.array().map(i32::from_be_bytes)
    }

    /// Reads a big-endian `u32`.
    pub(crate) fn u32(&mut self) -> Result<u32, RecordsError> {
        self.array().map(u32::from_be_bytes)
    }

    /// Reads a big-endian `i64`.
    pub(crate) fn i64(&mut self) -> Result<i64, RecordsError> {
        self.array().map(i64::from_be_bytes)
    }

    /// Reads a zigzag varint (see `varint` for the rule on its last byte).
    pub(crate) fn varint(&mut self) -> Result<i32, RecordsError> {
        self.unsigned(varint::MAX_VARINT_LEN)
            .map(varint::unzigzag32)
    }

    /// Reads a zigzag varlong.
    pub(crate) fn varlong(&mut self) -> Result<i64, RecordsError> {
        self.unsigned(varint::MAX_VARLONG_LEN)
            .map(varint::unzigzag64)
    }

    fn unsigned(&mut self, max_len: usize) -> Result<u64, RecordsError> {
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        match varint::read_unsigned(rest, max_len) {
            Ok((value, len)) => {
                self.pos += len;
                Ok(value)
            }
            Err(VarintError::TooLong) => Err(RecordsError::VarintTooLong {
                offset: self.offset(),
            }),
            Err(VarintError::Truncated) => Err(self.truncated(rest.len() + 1)),
        }
    }

    /// Reads a zigzag varint length followed by that many bytes; `-1` is
    /// null and other negative lengths are errors.
    pub(crate) fn varint_nullable_bytes(
        &mut self,
        context: &'static str,
    ) -> Result<Option<&'a [u8]>, RecordsError> {
        let offset = self.offset();
        let len = self.varint()?;
        self.nullable_bytes(offset, i64::from(len), context)
    }

    /// Reads a big-endian `i32` length followed by that many bytes; `-1` is
    /// null and other negative lengths are errors.
    pub(crate) fn i32_nullable_bytes(
        &mut self,
        context: &'static str,
    ) -> Result<Option<&'a [u8]>, RecordsError> {
        let offset = self.offset();
        let len = self.i32()?;
        self.nullable_bytes(offset, i64::from(len), context)
    }

    fn nullable_bytes(
        &mut self,
        offset: usize,
        len: i64,
        context: &'static str,
    ) -> Result<Option<&'a [u8]>, RecordsError> {
        match len {
            -1 => Ok(None),
            len if len < 0 => Err(RecordsError::NegativeLength {
                context,
                offset,
                length: len,
            }),
            // A length that does not fit `usize` cannot fit the input either.
            len => self
                .bytes(usize::try_from(len).unwrap_or(usize::MAX))
                .map(Some),
        }
    }

    fn truncated(&self, needed: usize) -> RecordsError {
        RecordsError::Truncated {
            context: self.context,
            offset: self.offset(),
            needed,
            available: self.remaining(),
        }
    }
}
