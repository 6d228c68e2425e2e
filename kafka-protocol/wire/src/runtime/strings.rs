//! Strings, and byte strings (`bytes` and `records`): a length prefix (see
//! `length`), then the bytes. Strings are checked UTF-8 and at most
//! `i16::MAX` bytes long. Decoded values borrow from the input.

use std::borrow::Cow;

use super::error::{DecodeError, DecodeErrorKind, EncodeError};
use super::length::length_len;
use super::reader::Reader;
use super::writer::Writer;

impl<'a> Reader<'a> {
    /// Reads a string that may be null.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_nullable_string(
        &mut self,
        compact: bool,
    ) -> Result<Option<Cow<'a, str>>, DecodeError> {
        let Some(len) = self.read_length(compact, false)? else {
            return Ok(None);
        };
        if len > i16::MAX as usize {
            return Err(self.error(DecodeErrorKind::StringTooLong(len)));
        }
        let start = self.offset();
        let bytes = self.take_announced(len)?;
        match super::utf8::str_from_utf8(bytes) {
            Ok(text) => Ok(Some(Cow::Borrowed(text))),
            Err(e) => Err(DecodeError::new(
                start + e.valid_up_to(),
                DecodeErrorKind::InvalidUtf8 {
                    valid_up_to: e.valid_up_to(),
                },
            )),
        }
    }

    /// Reads a string that must not be null.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_string(&mut self, compact: bool) -> Result<Cow<'a, str>, DecodeError> {
        let start = self.offset();
        self.read_nullable_string(compact)?
            .ok_or_else(|| DecodeError::new(start, DecodeErrorKind::UnexpectedNull))
    }

    /// Reads bytes (or records) that may be null.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_nullable_bytes(
        &mut self,
        compact: bool,
    ) -> Result<Option<Cow<'a, [u8]>>, DecodeError> {
        match self.read_length(compact, true)? {
            None => Ok(None),
            Some(len) => self.take_announced(len).map(|b| Some(Cow::Borrowed(b))),
        }
    }

    /// Reads bytes that must not be null.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[cfg_attr(debug_assertions, inline)]
    pub fn read_bytes(&mut self, compact: bool) -> Result<Cow<'a, [u8]>, DecodeError> {
        let start = self.offset();
        self.read_nullable_bytes(compact)?
            .ok_or_else(|| DecodeError::new(start, DecodeErrorKind::UnexpectedNull))
    }
}

impl Writer<'_> {
    /// Writes a string, which may be null.
    #[inline]
    pub fn put_nullable_string(
        &mut self,
        value: Option<&str>,
        compact: bool,
    ) -> Result<(), EncodeError> {
        self.put_length(value.map(str::len), compact, false)?;
        if let Some(text) = value {
            self.put_slice(text.as_bytes());
        }
        Ok(())
    }

    /// Writes a string.
    #[inline]
    pub fn put_string(&mut self, value: &str, compact: bool) -> Result<(), EncodeError> {
        self.put_nullable_string(Some(value), compact)
    }

    /// Writes bytes or records, which may be null.
    #[inline]
    pub fn put_nullable_bytes(
        &mut self,
        value: Option<&[u8]>,
        compact: bool,
    ) -> Result<(), EncodeError> {
        self.put_length(value.map(<[u8]>::len), compact, true)?;
        if let Some(bytes) = value {
            self.put_slice(bytes);
        }
        Ok(())
    }

    /// Writes bytes or records.
    #[inline]
    pub fn put_bytes(&mut self, value: &[u8], compact: bool) -> Result<(), EncodeError> {
        self.put_nullable_bytes(Some(value), compact)
    }
}

/// The encoded size of a string, which may be null.
#[inline]
pub fn nullable_string_len(value: Option<&str>, compact: bool) -> usize {
    length_len(value.map(str::len), compact, false) + value.map_or(0, str::len)
}

/// The encoded size of a string.
#[inline]
pub fn string_len(value: &str, compact: bool) -> usize {
    nullable_string_len(Some(value), compact)
}

/// The encoded size of bytes, which may be null.
#[inline]
pub fn nullable_bytes_len(value: Option<&[u8]>, compact: bool) -> usize {
    length_len(value.map(<[u8]>::len), compact, true) + value.map_or(0, <[u8]>::len)
}

/// The encoded size of bytes.
#[inline]
pub fn bytes_len(value: &[u8], compact: bool) -> usize {
    nullable_bytes_len(Some(value), compact)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_and_compact_strings() {
        let mut r = Reader::new(&[0, 2, b'h', b'i', 3, b'y', b'o', 0xff, 0xff, 0]);
        assert_eq!(r.read_string(false).ok(), Some(Cow::Borrowed("hi")));
        assert_eq!(r.read_string(true).ok(), Some(Cow::Borrowed("yo")));
        assert_eq!(r.read_nullable_string(false).ok(), Some(None));
        assert_eq!(r.read_nullable_string(true).ok(), Some(None));
        assert!(r.finish().is_ok());
    }

    #[test]
    fn sizes_match_what_is_written() {
        let cases: [(Option<&str>, bool); 4] = [
            (Some("abc"), false),
            (Some("abc"), true),
            (None, false),
            (None, true),
        ];
        for (value, compact) in cases {
            let mut buf = Vec::new();
            assert!(Writer::new(&mut buf)
                .put_nullable_string(value, compact)
                .is_ok());
            assert_eq!(buf.len(), nullable_string_len(value, compact));
        }
        let long = "x".repeat(0x8000);
        let mut buf = Vec::new();
        assert!(Writer::new(&mut buf).put_string(&long, false).is_err());
        assert!(Writer::new(&mut buf).put_string(&long, true).is_err());
    }

    #[test]
    fn null_markers() {
        let mut buf = Vec::new();
        let mut writer = Writer::new(&mut buf);
        assert!(writer.put_nullable_bytes(None, false).is_ok());
        assert!(writer.put_nullable_bytes(None, true).is_ok());
        assert!(writer.put_nullable_string(None, false).is_ok());
        drop(writer);
        assert_eq!(buf, [0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff]);
    }
}
