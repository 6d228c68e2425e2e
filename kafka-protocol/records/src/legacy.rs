//! Decoding of legacy message sets (magic 0 and 1).
//!
//! Each entry is `offset i64, messageSize i32` then a message: `crc u32`
//! (CRC-32 from the magic to the end), `magic i8`, `attributes i8`,
//! `timestamp i64` (magic 1 only), `key` and `value` as `i32`-length bytes
//! (-1 is null). A compressed message (a "wrapper") holds a whole message set
//! in its value.

use super::batch::{TimestampType, LOG_OVERHEAD};
use super::compression::{codec_of, decompress_at, Bound, Compression};
use super::cursor::Cursor;
use super::error::RecordsError;
use super::options::DecodeOptions;

/// The magic byte of Kafka 0.8-0.9 messages.
pub const MAGIC_V0: i8 = 0;
/// The magic byte of Kafka 0.10 messages (adds a timestamp).
pub const MAGIC_V1: i8 = 1;

/// Smallest `messageSize` of any message: crc, magic, attributes and two
/// null lengths.
pub(crate) const MIN_MESSAGE_SIZE: usize = 14;
/// Attribute bit (magic 1): the timestamp is `LogAppendTime`.
const TIMESTAMP_TYPE_FLAG: i8 = 0x08;

/// One legacy message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyMessage<'a> {
    /// The message's offset. For the messages of a compressed wrapper,
    /// [`LegacyEntry::messages`] gives absolute offsets.
    pub offset: i64,
    /// 0 or 1.
    pub magic: i8,
    /// CRC-32 from the magic byte to the end of the message.
    pub crc: u32,
    /// Compression (bits 0-2) and, for magic 1, timestamp type (bit 3).
    pub attributes: i8,
    /// The timestamp (magic 1 only). For the messages of a `LogAppendTime`
    /// wrapper, [`LegacyEntry::messages`] gives the wrapper's timestamp.
    pub timestamp: Option<i64>,
    /// The key; `None` is null.
    pub key: Option<&'a [u8]>,
    /// The value; `None` is null. For a wrapper, the compressed message set.
    pub value: Option<&'a [u8]>,
}

impl LegacyMessage<'_> {
    /// The codec in bits 0-2, or `None` for an id Kafka does not define.
    pub fn compression(&self) -> Option<Compression> {
        Compression::from_id((self.attributes & 0x07) as u8)
    }

    /// The timestamp type (magic 1 only).
    pub fn timestamp_type(&self) -> Option<TimestampType> {
        match self.magic {
            MAGIC_V0 => None,
            _ if self.attributes & TIMESTAMP_TYPE_FLAG != 0 => Some(TimestampType::LogAppendTime),
            _ => Some(TimestampType::CreateTime),
        }
    }
}

/// Decodes the message entry at `start` in `blob`, returning it with the
/// bytes it takes.
fn decode_message<'a>(
    blob: &'a [u8],
    start: usize,
) -> Result<(LegacyMessage<'a>, Compression, usize), RecordsError> {
    let input = blob.get(start..).unwrap_or_default();
    let mut outer = Cursor::new(input, start, "message");
    let offset = outer.read_i64()?;
    let size = outer.read_i32()?;
    let length = usize::try_from(size)
        .ok()
        .filter(|&length| length >= MIN_MESSAGE_SIZE)
        .ok_or(RecordsError::Invalid {
            context: "message",
            offset: start,
            reason: "message size is smaller than the smallest message",
        })?;
    let body = outer.read_bytes(length)?;
    let mut reader = Cursor::new(body, start + LOG_OVERHEAD, "message");
    let crc = reader.read_u32()?;
    let magic_offset = reader.offset();
    let magic = reader.read_i8()?;
    if magic != MAGIC_V0 && magic != MAGIC_V1 {
        return Err(RecordsError::BadMagic {
            offset: magic_offset,
            magic,
        });
    }
    let computed = crc32fast::hash(body.get(4..).unwrap_or_default());
    if computed != crc {
        return Err(RecordsError::CrcMismatch {
            offset: start,
            expected: crc,
            computed,
        });
    }
    let length_mismatch = |actual| RecordsError::LengthMismatch {
        context: "message",
        offset: start,
        declared: i64::from(size),
        actual,
    };
    let fields = (|| {
        let attributes_offset = reader.offset();
        let attributes = reader.read_i8()?;
        let compression = codec_of(i16::from(attributes), attributes_offset)?;
        if compression == Compression::Zstd {
            // zstd came with magic 2; Kafka refuses it in older messages.
            return Err(RecordsError::CodecNotAllowed {
                codec: compression,
                magic,
                offset: attributes_offset,
            });
        }
        let timestamp = if magic == MAGIC_V1 {
            Some(reader.read_i64()?)
        } else {
            None
        };
        let key = reader.read_i32_nullable_bytes()?;
        let value = reader.read_i32_nullable_bytes()?;
        Ok((attributes, compression, timestamp, key, value))
    })();
    let (attributes, compression, timestamp, key, value) = fields.map_err(|error| match error {
        RecordsError::Truncated { .. } => length_mismatch(length),
        other => other,
    })?;
    if !reader.is_empty() {
        return Err(length_mismatch(length - reader.remaining()));
    }
    let message = LegacyMessage {
        offset,
        magic,
        crc,
        attributes,
        timestamp,
        key,
        value,
    };
    Ok((message, compression, LOG_OVERHEAD + length))
}

/// The decompressed message set of a wrapper.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    data: Vec<u8>,
    /// Added to inner offsets (magic 1 relative offsets), when known.
    base_offset: Option<i64>,
    /// The wrapper's timestamp, for `LogAppendTime` wrappers.
    log_append_time: Option<i64>,
}

/// One entry of a legacy message set: a message, or a compressed wrapper
/// and the messages it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyEntry<'a> {
    message: LegacyMessage<'a>,
    compression: Compression,
    inner: Option<Inner>,
}

impl<'a> LegacyEntry<'a> {
    /// Decodes the entry at the start of `input`, returning it with the bytes
    /// it takes (`12 + messageSize`).
    ///
    /// A wrapper is decompressed within `options`' limit and its messages
    /// are all checked (CRC, lengths, no nested compression) here. zstd is
    /// [`RecordsError::CodecNotAllowed`] below magic 2, as in Kafka.
    pub fn decode(input: &'a [u8], options: &DecodeOptions) -> Result<(Self, usize), RecordsError> {
        Self::decode_at(input, 0, options)
    }

    /// Decodes the entry at `start` in `blob`; errors carry offsets in `blob`.
    pub(crate) fn decode_at(
        blob: &'a [u8],
        start: usize,
        options: &DecodeOptions,
    ) -> Result<(Self, usize), RecordsError> {
        let (message, compression, consumed) = decode_message(blob, start)?;
        let inner = match compression {
            Compression::None => None,
            codec => Some(decode_inner(&message, codec, start, options)?),
        };
        let entry = LegacyEntry {
            message,
            compression,
            inner,
        };
        Ok((entry, consumed))
    }

    /// The message itself; for a compressed entry, the wrapper.
    pub fn message(&self) -> &LegacyMessage<'a> {
        &self.message
    }

    /// The codec of the wrapper, or [`Compression::None`].
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Bytes of the wrapper's decompressed message set; 0 when uncompressed.
    pub fn decompressed_len(&self) -> usize {
        self.inner.as_ref().map_or(0, |inner| inner.data.len())
    }

    /// The messages of the entry: the message itself when uncompressed, or
    /// the wrapper's inner messages with absolute offsets (as Kafka computes
    /// them) and, for `LogAppendTime` wrappers, the wrapper's timestamp.
    ///
    /// Offsets in errors are positions in the decompressed message set. The
    /// inner messages were validated when decoding, so none is expected.
    pub fn messages(&self) -> LegacyMessages<'_> {
        let state = match &self.inner {
            None => State::Single(Some(self.message)),
            Some(inner) => State::Inner { inner, pos: 0 },
        };
        LegacyMessages { state }
    }
}

/// Decompresses a wrapper's value and validates the messages inside.
fn decode_inner(
    wrapper: &LegacyMessage<'_>,
    codec: Compression,
    start: usize,
    options: &DecodeOptions,
) -> Result<Inner, RecordsError> {
    let value = wrapper.value.ok_or(RecordsError::Invalid {
        context: "compressed message",
        offset: start,
        reason: "value is null",
    })?;
    let bound = Bound::new(codec, start, options.max_decompressed_size);
    let data = decompress_at(codec, value, &bound, wrapper.magic == MAGIC_V0)?;

    let mut pos = 0;
    let mut last_offset = None;
    while pos < data.len() {
        let (message, compression, consumed) = decode_message(&data, pos)?;
        if compression != Compression::None {
            return Err(RecordsError::Invalid {
                context: "compressed message",
                offset: pos,
                reason: "inner message is compressed too",
            });
        }
        last_offset = Some(message.offset);
        pos += consumed;
    }
    let last_offset = last_offset.ok_or(RecordsError::Invalid {
        context: "compressed message",
        offset: start,
        reason: "holds no messages",
    })?;

    // Magic 1 wrappers carry the offset of their last message, and inner
    // offsets are relative (0, 1, ...); Kafka rebases them unless that would
    // give a negative base.
    let base_offset = (wrapper.magic == MAGIC_V1)
        .then(|| wrapper.offset.checked_sub(last_offset))
        .flatten()
        .filter(|base| *base >= 0);
    let log_append_time = match wrapper.timestamp_type() {
        Some(TimestampType::LogAppendTime) => wrapper.timestamp,
        _ => None,
    };
    Ok(Inner {
        data,
        base_offset,
        log_append_time,
    })
}

#[derive(Debug, Clone)]
enum State<'e> {
    Single(Option<LegacyMessage<'e>>),
    Inner { inner: &'e Inner, pos: usize },
}

/// Iterator over the messages of a [`LegacyEntry`].
#[derive(Debug, Clone)]
pub struct LegacyMessages<'e> {
    state: State<'e>,
}

impl<'e> Iterator for LegacyMessages<'e> {
    type Item = Result<LegacyMessage<'e>, RecordsError>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.state {
            State::Single(message) => message.take().map(Ok),
            State::Inner { inner, pos } => {
                if *pos >= inner.data.len() {
                    return None;
                }
                match decode_message(&inner.data, *pos) {
                    Ok((mut message, _, consumed)) => {
                        *pos += consumed;
                        if let Some(base) = inner.base_offset {
                            message.offset = base.wrapping_add(message.offset);
                        }
                        if let Some(timestamp) = inner.log_append_time {
                            message.timestamp = Some(timestamp);
                        }
                        Some(Ok(message))
                    }
                    Err(error) => {
                        *pos = inner.data.len();
                        Some(Err(error))
                    }
                }
            }
        }
    }
}
