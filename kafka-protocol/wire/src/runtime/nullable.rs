//! Values that are null in some versions: the int8 marker of a nullable
//! struct outside the tagged section, and the check that a field nullable
//! in other versions is not null in this one.

use super::error::{DecodeError, EncodeError, EncodeErrorKind};
use super::reader::Reader;
use super::writer::Writer;

impl<'a> Reader<'a> {
    /// Reads a nullable struct outside the tagged section: an int8 marker,
    /// negative for null, then the struct.
    #[inline]
    pub fn read_nullable_struct<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<T, DecodeError>,
    ) -> Result<Option<T>, DecodeError> {
        let marker = self.read_i8()?;
        if marker != -1 && marker != 1 {
            self.canonical = false;
        }
        if marker < 0 {
            return Ok(None);
        }
        match read(self) {
            Ok(value) => Ok(Some(value)),
            Err(e) => Err(e),
        }
    }
}

/// The value of a field that is nullable in some versions but not in
/// `version`: null there is an error.
#[inline]
pub fn non_null<T>(value: Option<&T>, version: i16) -> Result<&T, EncodeError> {
    value.ok_or_else(|| EncodeError::new(EncodeErrorKind::NullNotAllowed(version)))
}

impl Writer<'_> {
    /// Writes a nullable struct outside the tagged section: an int8 marker, -1
    /// for null and 1 for present, then the struct.
    #[inline]
    pub fn put_nullable_struct<T>(
        &mut self,
        value: Option<&T>,
        write: impl FnOnce(&mut Writer<'_>, &T) -> Result<(), EncodeError>,
    ) -> Result<(), EncodeError> {
        match value {
            None => {
                self.put_i8(-1);
                Ok(())
            }
            Some(v) => {
                self.put_i8(1);
                write(self, v)
            }
        }
    }
}
