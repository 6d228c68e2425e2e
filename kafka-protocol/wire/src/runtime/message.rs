//! The traits every generated struct and message implements.

use super::error::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};
use super::reader::{DecodeOptions, Reader};
use super::writer::{EncodeBuf, Writer};

/// A struct that can be read from the wire at a given version.
pub trait Decode<'a>: Sized {
    /// Whether this struct holds arrays of structs that are never null,
    /// directly or in a nested struct. An array of such structs is decoded
    /// into a `Vec` up front, so that reading it does not check the nested
    /// arrays once more; an array of other structs is checked and kept as
    /// wire bytes, and each element is decoded when read (see
    /// [`StructArray`](super::StructArray)). Generated code sets it.
    const HOLDS_STRUCT_ARRAYS: bool = false;

    /// Reads the struct from `reader`, borrowing strings, bytes and arrays
    /// from its input.
    fn decode_from(reader: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError>;

    /// Reads past the struct, checking everything [`Decode::decode_from`]
    /// checks and building nothing. It accepts exactly the input
    /// `decode_from` accepts, fails with the same error, and consumes the
    /// same bytes. The default decodes and drops.
    fn validate_from(reader: &mut Reader<'a>, version: i16) -> Result<(), DecodeError> {
        // A `match`, not `Result::map`, which would be one more generic
        // function to compile per struct; the binding moves the value out,
        // so that only its own drop is compiled, not the `Result`'s.
        match Self::decode_from(reader, version) {
            Ok(_decoded) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// A struct that can be written to the wire at a given version.
pub trait Encode {
    /// Writes the struct. Not generic over the buffer, so that each encoder
    /// is compiled once, where it is generated (see [`Writer`]).
    fn encode_to(&self, buf: &mut Writer<'_>, version: i16) -> Result<(), EncodeError>;

    /// The exact number of bytes [`Encode::encode_to`] writes.
    fn encoded_len(&self, version: i16) -> usize;
}

/// A top-level message: a request or response body, a header, or a record.
pub trait Message<'a>: Decode<'a> + Encode {
    /// The schema name, such as `VoteRequest`.
    const NAME: &'static str;
    /// The lowest valid version.
    const LOWEST_VERSION: i16;
    /// The highest valid version, including one still under development.
    const HIGHEST_VERSION: i16;

    /// True when `version` is one this message has.
    fn supports_version(version: i16) -> bool {
        Versions::of::<Self>().supports(version)
    }

    /// Decodes the message from exactly `input`: trailing bytes are an error.
    #[inline]
    fn decode(input: &'a [u8], version: i16) -> Result<Self, DecodeError> {
        Self::decode_with(input, version, DecodeOptions::new())
    }

    /// Decodes the message from exactly `input`, read as `options` say:
    /// where `input` lies (for the offsets in errors), and how much heap
    /// its arrays of structs may take.
    fn decode_with(
        input: &'a [u8],
        version: i16,
        options: DecodeOptions,
    ) -> Result<Self, DecodeError> {
        // The reader is this function's own, as in every decode: passed in
        // by reference instead, and with `decode_prefix` called from two
        // places, a Vote request took 17% more instructions to decode.
        let mut reader = options.reader(input);
        let message = Self::decode_prefix(&mut reader, version)?;
        finish_message(&reader, Self::NAME)?;
        Ok(message)
    }

    /// Checks that `input` is exactly one valid message, with everything
    /// [`Message::decode`] checks, without building it. `validate` succeeds
    /// exactly when `decode` does, and fails with the same error.
    fn validate(input: &'a [u8], version: i16) -> Result<(), DecodeError> {
        validate_message(
            input,
            version,
            Versions::of::<Self>(),
            <Self as Decode<'a>>::validate_from,
        )
    }

    /// Fails with [`DecodeErrorKind::UnsupportedVersion`] unless this message
    /// has `version`.
    fn check_version(reader: &Reader<'a>, version: i16) -> Result<(), DecodeError> {
        Versions::of::<Self>().check_decode(reader, version)
    }

    /// Decodes the message from the front of `reader`, leaving what follows.
    fn decode_prefix(reader: &mut Reader<'a>, version: i16) -> Result<Self, DecodeError> {
        Self::check_version(reader, version)?;
        match Self::decode_from(reader, version) {
            Ok(message) => Ok(message),
            Err(e) => Err(e.in_message(Self::NAME)),
        }
    }

    /// Encodes the message at the end of `buf`, a `Vec<u8>` or a
    /// `BytesMut`, after reserving its exact size. On error, `buf` may hold
    /// part of the message.
    fn encode<B: EncodeBuf + ?Sized>(&self, buf: &mut B, version: i16) -> Result<(), EncodeError> {
        let mut writer = buf.writer();
        writer.reserve(self.encoded_len(version));
        self.encode_to_writer(&mut writer, version)
    }

    /// Encodes the message through `writer`, which the caller has made room
    /// in (as [`Message::encode`] does), checking the version first.
    fn encode_to_writer(&self, writer: &mut Writer<'_>, version: i16) -> Result<(), EncodeError> {
        let versions = Versions::of::<Self>();
        versions.check_encode(version)?;
        match self.encode_to(writer, version) {
            Ok(()) => Ok(()),
            Err(e) => Err(e.in_message(versions.name)),
        }
    }

    /// Encodes the message into a new vector of exactly the right size.
    fn to_bytes(&self, version: i16) -> Result<Vec<u8>, EncodeError> {
        let mut buf = Vec::new();
        self.encode(&mut buf, version)?;
        Ok(buf)
    }
}

/// A message's name and versions, for the checks every message makes: they
/// are compiled once here, not once per message type.
#[derive(Clone, Copy)]
struct Versions {
    name: &'static str,
    lowest: i16,
    highest: i16,
}

impl Versions {
    #[inline]
    fn of<'a, M: Message<'a>>() -> Self {
        Versions {
            name: M::NAME,
            lowest: M::LOWEST_VERSION,
            highest: M::HIGHEST_VERSION,
        }
    }

    #[inline]
    fn supports(self, version: i16) -> bool {
        (self.lowest..=self.highest).contains(&version)
    }

    /// Fails with [`DecodeErrorKind::UnsupportedVersion`], at `reader`'s
    /// offset, unless the message has `version`.
    #[inline]
    fn check_decode(self, reader: &Reader<'_>, version: i16) -> Result<(), DecodeError> {
        if self.supports(version) {
            Ok(())
        } else {
            Err(self.unsupported_decode(reader, version))
        }
    }

    #[cold]
    #[inline(never)]
    fn unsupported_decode(self, reader: &Reader<'_>, version: i16) -> DecodeError {
        reader
            .error(DecodeErrorKind::UnsupportedVersion {
                version,
                lowest: self.lowest,
                highest: self.highest,
            })
            .in_message(self.name)
    }

    /// Fails with [`EncodeErrorKind::UnsupportedVersion`] unless the message
    /// has `version`.
    #[inline]
    fn check_encode(self, version: i16) -> Result<(), EncodeError> {
        if self.supports(version) {
            Ok(())
        } else {
            Err(self.unsupported_encode(version))
        }
    }

    #[cold]
    #[inline(never)]
    fn unsupported_encode(self, version: i16) -> EncodeError {
        EncodeError::new(EncodeErrorKind::UnsupportedVersion {
            version,
            lowest: self.lowest,
            highest: self.highest,
        })
        .in_message(self.name)
    }
}

/// Fails unless `reader` has read all of its input: what follows a whole
/// message is an error of message `name`.
#[inline(never)]
fn finish_message(reader: &Reader<'_>, name: &'static str) -> Result<(), DecodeError> {
    reader.finish().map_err(|e| e.in_message(name))
}

/// [`Message::validate`], for any message: `validate` is its
/// `validate_from`.
#[inline(never)]
fn validate_message<'a>(
    input: &'a [u8],
    version: i16,
    versions: Versions,
    validate: fn(&mut Reader<'a>, i16) -> Result<(), DecodeError>,
) -> Result<(), DecodeError> {
    let mut reader = Reader::without_heap(input);
    versions.check_decode(&reader, version)?;
    validate(&mut reader, version).map_err(|e| e.in_message(versions.name))?;
    finish_message(&reader, versions.name)
}
