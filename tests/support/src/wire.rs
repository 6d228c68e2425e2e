//! Wire bytes built by hand, for inputs no encoder would write.

/// Writes wire values, big-endian, for building inputs by hand.
#[derive(Default)]
pub struct Wire(Vec<u8>);

impl Wire {
    /// An empty input.
    pub fn new() -> Self {
        Self::default()
    }
    /// Appends an int8.
    pub fn i8(mut self, v: i8) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Appends a big-endian int16.
    pub fn i16(mut self, v: i16) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Appends a big-endian int32.
    pub fn i32(mut self, v: i32) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Appends a big-endian int64.
    pub fn i64(mut self, v: i64) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Appends bytes as they are.
    pub fn raw(mut self, bytes: &[u8]) -> Self {
        self.0.extend_from_slice(bytes);
        self
    }
    /// Appends an unsigned varint.
    pub fn uvarint(mut self, mut v: u32) -> Self {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
        self
    }
    /// A zigzag varint, as record fields use.
    pub fn varint(self, v: i32) -> Self {
        self.uvarint(((v << 1) ^ (v >> 31)) as u32)
    }
    /// A classic string: int16 length and bytes.
    pub fn string(self, s: &str) -> Self {
        self.i16(s.len() as i16).raw(s.as_bytes())
    }
    /// A compact string: uvarint(length + 1) and bytes.
    pub fn compact_string(self, s: &str) -> Self {
        self.uvarint(s.len() as u32 + 1).raw(s.as_bytes())
    }
    /// The number of bytes written so far.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// True when nothing is written yet.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The bytes written.
    pub fn bytes(self) -> Vec<u8> {
        self.0
    }
}

/// The Metadata v13 request frame (without its size prefix) that
/// librdkafka 2.16's admin client sends, as captured: client id
/// `chaos-admin`, correlation id 4, header v2, then topics null,
/// allow_auto_topic_creation false, include_topic_authorized_operations
/// false, no tagged fields, and then three bytes more, `01 00 00`. Kafka's
/// broker ignores them and answers.
pub fn librdkafka_metadata_with_trailing_bytes() -> Vec<u8> {
    let hex = "0003000d00000004000b6368616f732d61646d696e0000000000010000";
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect()
}
