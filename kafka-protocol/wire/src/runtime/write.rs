//! Writers for every wire type, and the matching exact sizes.
//!
//! Each `put_*` function has a `*_len` twin that returns exactly the number
//! of bytes it writes, so a buffer sized from `encoded_len` never grows.

use super::array::{FixedWidth, ScalarArray};
use super::codec::{Decode, Encode};
use super::error::{EncodeError, EncodeErrorKind};
use super::struct_array::StructArray;
use super::varint::uvarint_len;
use super::writer::Writer;

/// Writes a length prefix: compact `uvarint(len + 1)`, or classic int16/int32.
/// `None` writes null.
#[inline(always)]
fn put_length(
    buf: &mut Writer<'_>,
    length: Option<usize>,
    compact: bool,
    wide: bool,
) -> Result<(), EncodeError> {
    // Most lengths are short and compact: one byte.
    if compact {
        if let Some(len) = length.filter(|len| *len < 0x7f) {
            buf.put_u8(len as u8 + 1);
            return Ok(());
        }
    }
    put_length_slow(buf, length, compact, wide)
}

#[inline(never)]
fn put_length_slow(
    buf: &mut Writer<'_>,
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
            buf.put_uvarint(len as u32 + 1);
            Ok(())
        }
        None if compact => {
            buf.put_uvarint(0);
            Ok(())
        }
        Some(len) if wide => {
            buf.put_i32(len as i32);
            Ok(())
        }
        Some(len) => {
            buf.put_i16(len as i16);
            Ok(())
        }
        None if wide => {
            buf.put_i32(-1);
            Ok(())
        }
        None => {
            buf.put_i16(-1);
            Ok(())
        }
    }
}

/// The size of a length prefix.
#[inline]
fn length_len(length: Option<usize>, compact: bool, wide: bool) -> usize {
    match (compact, wide) {
        (true, _) => uvarint_len(length.map_or(0, |len| (len as u32).saturating_add(1))),
        (false, true) => 4,
        (false, false) => 2,
    }
}

/// Writes a bool as 0 or 1.
#[inline]
pub fn put_bool(buf: &mut Writer<'_>, value: bool) {
    buf.put_u8(u8::from(value));
}

/// Writes a string, which may be null.
#[inline]
pub fn put_nullable_string(
    buf: &mut Writer<'_>,
    value: Option<&str>,
    compact: bool,
) -> Result<(), EncodeError> {
    put_length(buf, value.map(str::len), compact, false)?;
    if let Some(text) = value {
        buf.put_slice(text.as_bytes());
    }
    Ok(())
}

/// Writes a string.
#[inline]
pub fn put_string(buf: &mut Writer<'_>, value: &str, compact: bool) -> Result<(), EncodeError> {
    put_nullable_string(buf, Some(value), compact)
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

/// Writes bytes or records, which may be null.
#[inline]
pub fn put_nullable_bytes(
    buf: &mut Writer<'_>,
    value: Option<&[u8]>,
    compact: bool,
) -> Result<(), EncodeError> {
    put_length(buf, value.map(<[u8]>::len), compact, true)?;
    if let Some(bytes) = value {
        buf.put_slice(bytes);
    }
    Ok(())
}

/// Writes bytes or records.
#[inline]
pub fn put_bytes(buf: &mut Writer<'_>, value: &[u8], compact: bool) -> Result<(), EncodeError> {
    put_nullable_bytes(buf, Some(value), compact)
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

/// Writes an array's element count, `None` for null.
#[inline]
pub fn put_array_len(
    buf: &mut Writer<'_>,
    count: Option<usize>,
    compact: bool,
) -> Result<(), EncodeError> {
    put_length(buf, count, compact, true)
}

/// The size of an array's count prefix.
#[inline]
pub fn array_len_len(count: Option<usize>, compact: bool) -> usize {
    length_len(count, compact, true)
}

/// Writes an array, which may be null, encoding each element with `element`.
#[inline]
pub fn put_nullable_array<T>(
    buf: &mut Writer<'_>,
    items: Option<&[T]>,
    compact: bool,
    mut element: impl FnMut(&mut Writer<'_>, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    put_array_len(buf, items.map(<[T]>::len), compact)?;
    for (index, item) in items.unwrap_or_default().iter().enumerate() {
        element(buf, item).map_err(|e| e.at_index(index))?;
    }
    Ok(())
}

/// Writes an array.
#[inline]
pub fn put_array<T>(
    buf: &mut Writer<'_>,
    items: &[T],
    compact: bool,
    element: impl FnMut(&mut Writer<'_>, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    put_nullable_array(buf, Some(items), compact, element)
}

/// The encoded size of an array, which may be null.
#[inline]
pub fn nullable_array_len<T>(
    items: Option<&[T]>,
    compact: bool,
    element: impl FnMut(&T) -> usize,
) -> usize {
    array_len_len(items.map(<[T]>::len), compact)
        + items.unwrap_or_default().iter().map(element).sum::<usize>()
}

/// The encoded size of an array.
#[inline]
pub fn array_len<T>(items: &[T], compact: bool, element: impl FnMut(&T) -> usize) -> usize {
    nullable_array_len(Some(items), compact, element)
}

/// Writes an array of scalars, which may be null.
#[inline]
pub fn put_nullable_scalar_array<T: FixedWidth>(
    buf: &mut Writer<'_>,
    items: Option<&ScalarArray<'_, T>>,
    compact: bool,
) -> Result<(), EncodeError> {
    put_array_len(buf, items.map(ScalarArray::len), compact)?;
    if let Some(items) = items {
        buf.put_slice(items.wire_bytes());
    }
    Ok(())
}

/// Writes an array of scalars.
#[inline]
pub fn put_scalar_array<T: FixedWidth>(
    buf: &mut Writer<'_>,
    items: &ScalarArray<'_, T>,
    compact: bool,
) -> Result<(), EncodeError> {
    put_nullable_scalar_array(buf, Some(items), compact)
}

/// The encoded size of an array of scalars, which may be null.
#[inline]
pub fn nullable_scalar_array_len<T: FixedWidth>(
    items: Option<&ScalarArray<'_, T>>,
    compact: bool,
) -> usize {
    array_len_len(items.map(ScalarArray::len), compact) + items.map_or(0, |a| a.wire_bytes().len())
}

/// The encoded size of an array of scalars.
#[inline]
pub fn scalar_array_len<T: FixedWidth>(items: &ScalarArray<'_, T>, compact: bool) -> usize {
    nullable_scalar_array_len(Some(items), compact)
}

/// Writes an array of structs, which may be null. A decoded array whose
/// bytes are what its elements encode to at `version` is copied (see
/// [`StructArray::encodes_by_copy`]); otherwise each element is encoded.
#[inline]
pub fn put_nullable_struct_array<'a, T: Encode + Decode<'a> + Clone>(
    buf: &mut Writer<'_>,
    items: Option<&StructArray<'a, T>>,
    compact: bool,
    version: i16,
) -> Result<(), EncodeError> {
    put_array_len(buf, items.map(StructArray::len), compact)?;
    let Some(items) = items else {
        return Ok(());
    };
    if let Some(bytes) = items.bytes_to_copy(version) {
        buf.put_slice(bytes);
        Ok(())
    } else if let Some(slice) = items.as_slice() {
        put_elements(buf, slice.iter(), version)
    } else {
        put_elements(buf, items.iter(), version)
    }
}

/// Encodes each element, naming the index of a failing one.
#[inline]
fn put_elements<T: Encode, E: std::ops::Deref<Target = T>>(
    buf: &mut Writer<'_>,
    elements: impl Iterator<Item = E>,
    version: i16,
) -> Result<(), EncodeError> {
    for (index, element) in elements.enumerate() {
        element
            .encode_to(buf, version)
            .map_err(|e| e.at_index(index))?;
    }
    Ok(())
}

/// Writes an array of structs.
#[inline]
pub fn put_struct_array<'a, T: Encode + Decode<'a> + Clone>(
    buf: &mut Writer<'_>,
    items: &StructArray<'a, T>,
    compact: bool,
    version: i16,
) -> Result<(), EncodeError> {
    put_nullable_struct_array(buf, Some(items), compact, version)
}

/// The encoded size of an array of structs, which may be null.
#[inline]
pub fn nullable_struct_array_len<'a, T: Encode + Decode<'a> + Clone>(
    items: Option<&StructArray<'a, T>>,
    compact: bool,
    version: i16,
) -> usize {
    let prefix = array_len_len(items.map(StructArray::len), compact);
    let Some(items) = items else {
        return prefix;
    };
    let elements = match items.bytes_to_copy(version) {
        Some(bytes) => bytes.len(),
        None => elements_len(items, version),
    };
    prefix + elements
}

/// The encoded size of the elements of an array that is not copied as
/// bytes: summed over the `Vec`, or over the elements decoded one by one.
fn elements_len<'a, T: Encode + Decode<'a> + Clone>(
    items: &StructArray<'a, T>,
    version: i16,
) -> usize {
    let mut len = 0;
    match items.as_slice() {
        Some(slice) => {
            for item in slice {
                len += item.encoded_len(version);
            }
        }
        None => {
            for item in items {
                len += item.encoded_len(version);
            }
        }
    }
    len
}

/// The encoded size of an array of structs.
#[inline]
pub fn struct_array_len<'a, T: Encode + Decode<'a> + Clone>(
    items: &StructArray<'a, T>,
    compact: bool,
    version: i16,
) -> usize {
    nullable_struct_array_len(Some(items), compact, version)
}

/// Writes a tagged field's header: its tag and its size.
#[inline]
pub fn put_tag_header(buf: &mut Writer<'_>, tag: u32, size: usize) {
    buf.put_uvarint(tag);
    buf.put_uvarint(size as u32);
}

/// The size of a tagged field with a value of `size` bytes, header included.
#[inline]
pub fn tagged_field_len(tag: u32, size: usize) -> usize {
    uvarint_len(tag) + uvarint_len(size as u32) + size
}

/// The value of a field that is nullable in some versions but not in
/// `version`: null there is an error.
#[inline]
pub fn non_null<T>(value: Option<&T>, version: i16) -> Result<&T, EncodeError> {
    value.ok_or_else(|| EncodeError::new(EncodeErrorKind::NullNotAllowed(version)))
}

/// Writes a nullable struct outside the tagged section: an int8 marker, -1
/// for null and 1 for present, then the struct.
#[inline]
pub fn put_nullable_struct<T>(
    buf: &mut Writer<'_>,
    value: Option<&T>,
    write: impl FnOnce(&mut Writer<'_>, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    match value {
        None => {
            buf.put_i8(-1);
            Ok(())
        }
        Some(v) => {
            buf.put_i8(1);
            write(buf, v)
        }
    }
}

/// Writes a nullable struct inside a tagged field: a uvarint marker, 0 for
/// null and 1 for present, then the struct.
#[inline]
pub fn put_tagged_nullable_struct<T>(
    buf: &mut Writer<'_>,
    value: Option<&T>,
    write: impl FnOnce(&mut Writer<'_>, &T) -> Result<(), EncodeError>,
) -> Result<(), EncodeError> {
    match value {
        None => {
            buf.put_u8(0);
            Ok(())
        }
        Some(v) => {
            buf.put_u8(1);
            write(buf, v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert!(put_nullable_string(&mut Writer::new(&mut buf), value, compact).is_ok());
            assert_eq!(buf.len(), nullable_string_len(value, compact));
        }
        let long = "x".repeat(0x8000);
        let mut buf = Vec::new();
        assert!(put_string(&mut Writer::new(&mut buf), &long, false).is_err());
        assert!(put_string(&mut Writer::new(&mut buf), &long, true).is_err());
    }

    #[test]
    fn null_markers() {
        let mut buf = Vec::new();
        let mut writer = Writer::new(&mut buf);
        assert!(put_nullable_bytes(&mut writer, None, false).is_ok());
        assert!(put_nullable_bytes(&mut writer, None, true).is_ok());
        assert!(put_nullable_string(&mut writer, None, false).is_ok());
        drop(writer);
        assert_eq!(buf, [0xff, 0xff, 0xff, 0xff, 0, 0xff, 0xff]);
    }
}
