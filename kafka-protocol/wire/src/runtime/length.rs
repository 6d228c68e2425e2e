//! Length prefixes, which strings, bytes, records and arrays start with:
//! compact `uvarint(len + 1)` (0 is null) in flexible versions, a classic
//! int16 (strings) or int32 (bytes, records, array counts) otherwise, -1
//! being null. Reading, writing and sizing them live together here.

use super::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use super::reader::Reader;
use super::varint::uvarint_len;
use super::writer::Writer;

/// The `compact` argument of every length-prefixed read, write and size in
/// a version where the message is flexible: lengths are compact varints.
pub const COMPACT: bool = true;

/// The `compact` argument of every length-prefixed read, write and size in
/// a version before the message is flexible: lengths are classic `int16`
/// or `int32`.
pub const CLASSIC: bool = false;

impl<'a> Reader<'a> {
    /// Reads a length prefix: compact (`uvarint(len + 1)`, 0 = null) or
    /// classic (`int16` or `int32`, negative = null). Returns `None` for
    /// null.
    ///
    /// Kafka's reader takes any negative classic length as null, and writes
    /// null back as -1; so does this one, noting a negative length other
    /// than -1 as not canonical. A compact length is the same: Kafka
    /// computes `uvarint - 1` as a 32-bit int, so 0 is null and so is any
    /// uvarint from `0x8000_0001` up, whose int minus one is negative (they
    /// are not canonical); `0x8000_0000` is a length of `i32::MAX`. Where
    /// null is not allowed, the caller refuses it as Kafka does.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn read_length(
        &mut self,
        compact: bool,
        wide: bool,
    ) -> Result<Option<usize>, DecodeError> {
        if compact {
            let stored = self.read_uvarint()?;
            return Ok(match usize::try_from((stored as i32).wrapping_sub(1)) {
                Ok(len) => Some(len),
                Err(_) => {
                    if stored != 0 {
                        self.canonical = false;
                    }
                    None
                }
            });
        }
        let length: i32 = if wide {
            self.read_i32()?
        } else {
            i32::from(self.read_i16()?)
        };
        match usize::try_from(length) {
            Ok(len) => Ok(Some(len)),
            Err(_) => {
                if length != -1 {
                    self.canonical = false;
                }
                Ok(None)
            }
        }
    }

    /// Reads an array's element count, `None` for null. The count is checked
    /// against the bytes left, assuming every element takes at least
    /// `min_element_len` bytes (at least one), before anything is allocated.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_array_len(
        &mut self,
        compact: bool,
        min_element_len: usize,
    ) -> Result<Option<usize>, DecodeError> {
        let Some(count) = self.read_length(compact, true)? else {
            return Ok(None);
        };
        let needed = count.saturating_mul(min_element_len.max(1));
        if needed > self.remaining() {
            return Err(self.error(DecodeErrorKind::LengthExceedsInput {
                length: count as u64,
                remaining: self.remaining(),
            }));
        }
        Ok(Some(count))
    }
}

impl Writer<'_> {
    /// Writes a length prefix: compact `uvarint(len + 1)`, or classic int16/int32.
    /// `None` writes null.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub(super) fn put_length(
        &mut self,
        length: Option<usize>,
        compact: bool,
        wide: bool,
    ) -> Result<(), EncodeError> {
        // Most lengths are short or null, and compact: one byte.
        if compact {
            match length {
                Some(len) if len < 0x7f => {
                    self.put_u8(len as u8 + 1);
                    return Ok(());
                }
                None => {
                    self.put_u8(0);
                    return Ok(());
                }
                Some(_) => {}
            }
        }
        self.put_length_slow(length, compact, wide)
    }

    #[inline(never)]
    fn put_length_slow(
        &mut self,
        length: Option<usize>,
        compact: bool,
        wide: bool,
    ) -> Result<(), EncodeError> {
        let limit = if wide {
            i32::MAX as usize
        } else {
            i16::MAX as usize
        };
        match length {
            Some(len) if len > limit => Err(EncodeError::new(if wide {
                EncodeErrorKind::LengthOverflow(len)
            } else {
                EncodeErrorKind::StringTooLong(len)
            })),
            Some(len) if compact => {
                self.put_uvarint(len as u32 + 1);
                Ok(())
            }
            None if compact => {
                self.put_uvarint(0);
                Ok(())
            }
            Some(len) if wide => {
                self.put_i32(len as i32);
                Ok(())
            }
            Some(len) => {
                self.put_i16(len as i16);
                Ok(())
            }
            None if wide => {
                self.put_i32(-1);
                Ok(())
            }
            None => {
                self.put_i16(-1);
                Ok(())
            }
        }
    }

    /// Writes an array's element count, `None` for null.
    #[inline]
    pub fn put_array_len(
        &mut self,
        count: Option<usize>,
        compact: bool,
    ) -> Result<(), EncodeError> {
        self.put_length(count, compact, true)
    }
}

/// The size of a length prefix.
#[inline]
pub(super) fn length_len(length: Option<usize>, compact: bool, wide: bool) -> usize {
    match (compact, wide) {
        (true, _) => uvarint_len(length.map_or(0, |len| (len as u32).saturating_add(1))),
        (false, true) => 4,
        (false, false) => 2,
    }
}

/// The size of an array's count prefix.
#[inline]
pub fn array_len_len(count: Option<usize>, compact: bool) -> usize {
    length_len(count, compact, true)
}
