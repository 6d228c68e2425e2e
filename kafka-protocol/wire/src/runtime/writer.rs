//! The buffer generated encoders write into.
//!
//! [`Writer`] is one concrete type, not a generic over [`BufMut`], so that the
//! encoder of every message is compiled once, in the crate that generates it,
//! instead of once per buffer type in every crate that encodes. It appends to
//! a `Vec<u8>` or a [`BytesMut`], the two buffers messages are encoded into
//! ([`EncodeBuf`]), whose capacity
//! [`Message::encode`](super::Message::encode) reserves from the exact size
//! before writing, so no write reallocates.
//!
//! [`BufMut`]: bytes::BufMut

use bytes::{Bytes, BytesMut};

/// A buffer that messages are encoded into directly: `Vec<u8>` and
/// [`BytesMut`]. Encode into anything else through a `Vec<u8>`.
pub trait EncodeBuf {
    /// A writer appending to this buffer.
    fn writer(&mut self) -> Writer<'_>;
}

impl EncodeBuf for Vec<u8> {
    #[inline]
    fn writer(&mut self) -> Writer<'_> {
        Writer::new(self)
    }
}

impl EncodeBuf for BytesMut {
    /// A writer appending to this buffer. The buffer's memory is handed to
    /// the writer and back without copying when the buffer is not shared
    /// with another `BytesMut` or `Bytes`, and copied otherwise.
    #[inline]
    fn writer(&mut self) -> Writer<'_> {
        Writer {
            buf: Vec::from(std::mem::take(self)),
            target: Target::BytesMut(self),
        }
    }
}

impl<T: EncodeBuf + ?Sized> EncodeBuf for &mut T {
    #[inline]
    fn writer(&mut self) -> Writer<'_> {
        (**self).writer()
    }
}

/// Appends encoded bytes to a `Vec<u8>` or a [`BytesMut`]. Generated
/// `Encode` impls write through it.
///
/// The writer holds the buffer's memory while it writes, as a `Vec<u8>` of
/// its own, and gives it back, with everything written, when dropped.
#[derive(Debug)]
pub struct Writer<'b> {
    /// The bytes the target held, then what was written.
    buf: Vec<u8>,
    /// Where `buf` goes back to.
    target: Target<'b>,
}

/// The buffer a [`Writer`] appends to.
#[derive(Debug)]
enum Target<'b> {
    Vec(&'b mut Vec<u8>),
    BytesMut(&'b mut BytesMut),
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        match &mut self.target {
            Target::Vec(target) => **target = buf,
            Target::BytesMut(target) => **target = BytesMut::from(Bytes::from(buf)),
        }
    }
}

impl<'b> Writer<'b> {
    /// A writer appending to `buf`.
    #[inline]
    pub fn new(buf: &'b mut Vec<u8>) -> Self {
        Writer {
            buf: std::mem::take(buf),
            target: Target::Vec(buf),
        }
    }

    /// Makes room for at least `additional` more bytes.
    #[inline]
    pub fn reserve(&mut self, additional: usize) {
        if self.buf.capacity() == 0 {
            // A fresh buffer, the usual case: allocating it outright is
            // cheaper than going through the vector's growth path.
            self.buf = Vec::with_capacity(additional);
        } else {
            self.buf.reserve(additional);
        }
    }

    /// Writes `bytes` as they are.
    #[inline]
    pub fn put_slice(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Writes one byte.
    #[inline]
    pub fn put_u8(&mut self, value: u8) {
        self.put_slice(&[value]);
    }

    /// Writes a bool as 0 or 1.
    #[inline]
    pub fn put_bool(&mut self, value: bool) {
        self.put_u8(u8::from(value));
    }

    /// Writes an int8.
    #[inline]
    pub fn put_i8(&mut self, value: i8) {
        self.put_slice(&value.to_be_bytes());
    }

    /// Writes a big-endian int16.
    #[inline]
    pub fn put_i16(&mut self, value: i16) {
        self.put_slice(&value.to_be_bytes());
    }

    /// Writes a big-endian uint16.
    #[inline]
    pub fn put_u16(&mut self, value: u16) {
        self.put_slice(&value.to_be_bytes());
    }

    /// Writes a big-endian int32.
    #[inline]
    pub fn put_i32(&mut self, value: i32) {
        self.put_slice(&value.to_be_bytes());
    }

    /// Writes a big-endian uint32.
    #[inline]
    pub fn put_u32(&mut self, value: u32) {
        self.put_slice(&value.to_be_bytes());
    }

    /// Writes a big-endian int64.
    #[inline]
    pub fn put_i64(&mut self, value: i64) {
        self.put_slice(&value.to_be_bytes());
    }

    /// Writes a float64 as its big-endian IEEE 754 bits.
    #[inline]
    pub fn put_f64(&mut self, value: f64) {
        self.put_slice(&value.to_be_bytes());
    }

    /// Writes an unsigned varint: a value below 128 (most counts, lengths
    /// and tags) as one byte in line, a longer one assembled on the stack
    /// and appended with one capacity check.
    #[inline]
    pub fn put_uvarint(&mut self, value: u32) {
        if value < 0x80 {
            self.put_u8(value as u8);
        } else {
            self.put_long_uvarint(value);
        }
    }

    #[inline(never)]
    fn put_long_uvarint(&mut self, value: u32) {
        let mut bytes = [0u8; super::varint::MAX_VARINT_LEN];
        let len = super::varint::uvarint_to_bytes(value, &mut bytes);
        self.put_slice(&bytes[..len]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_big_endian_after_what_was_there() {
        let mut buf = vec![0xee];
        let mut writer = Writer::new(&mut buf);
        writer.put_i8(-1);
        writer.put_i16(0x0102);
        writer.put_u16(0x0304);
        writer.put_i32(0x0506_0708);
        writer.put_u32(0x090a_0b0c);
        writer.put_i64(0x0d0e_0f10_1112_1314);
        writer.put_f64(1.0);
        writer.put_uvarint(300);
        writer.put_slice(b"ab");
        writer.put_u8(7);
        drop(writer);
        assert_eq!(
            buf,
            [
                0xee, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
                0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xac, 0x02, b'a', b'b', 7
            ]
        );
    }

    #[test]
    fn a_bytes_mut_gets_the_same_bytes_as_a_vec() {
        let mut vec = vec![9];
        let mut bytes = BytesMut::from(&[9u8][..]);
        for mut writer in [vec.writer(), bytes.writer()] {
            writer.put_i32(-2);
            writer.put_uvarint(0x4000);
        }
        assert_eq!(vec, [9, 0xff, 0xff, 0xff, 0xfe, 0x80, 0x80, 0x01]);
        assert_eq!(bytes[..], vec[..]);
    }

    #[test]
    fn an_advanced_bytes_mut_keeps_only_what_it_held() {
        use bytes::Buf;
        let mut bytes = BytesMut::with_capacity(64);
        bytes.extend_from_slice(b"sentpending");
        bytes.advance(4);
        let mut writer = bytes.writer();
        writer.reserve(3);
        writer.put_slice(b"new");
        drop(writer);
        assert_eq!(&bytes[..], b"pendingnew");
    }

    #[test]
    fn a_shared_bytes_mut_is_copied_and_the_other_half_is_untouched() {
        let mut whole = BytesMut::from(&b"headtail"[..]);
        let mut tail = whole.split_off(4);
        let mut writer = whole.writer();
        writer.put_slice(b"+more");
        drop(writer);
        assert_eq!(&whole[..], b"head+more");
        tail.extend_from_slice(b"!");
        assert_eq!(&tail[..], b"tail!");
        assert_eq!(&whole[..], b"head+more");
    }
}
