//! Record batches: Kafka's v2 `RecordBatch` (magic 2) and the legacy message
//! sets of magic 0 and 1.
//!
//! - [`Batches`] walks a records blob (for example the `records` field of a
//!   fetch response) holding any mix of magic 0, 1 and 2 entries, one
//!   decompressed entry at a time, within a per-batch limit and a budget for
//!   the whole blob ([`DecodeOptions`]), reporting an incomplete last entry
//!   as a partial tail rather than an error; [`RecordSet`] keeps them all.
//! - [`RecordBatch`] decodes one v2 batch, verifying its CRC-32C and
//!   decompressing its records within [`DecodeOptions::max_decompressed_size`];
//!   [`RecordBatch::records`] iterates its [`Record`]s, which borrow keys,
//!   values and headers from the input when the batch is uncompressed.
//! - [`LegacyEntry`] decodes one magic 0/1 message, expanding compressed
//!   wrappers into their inner [`LegacyMessage`]s with absolute offsets.
//! - [`RecordBatchBuilder`] encodes a v2 batch with any codec.
//! - With the `json` feature, [`write_records_json`] streams a blob's JSON form for the command-line
//!   tool; [`records_to_json`] builds it in memory.
//!
//! Codecs are behind the cargo features `gzip`, `snappy`, `lz4` and `zstd`
//! (all on by default); using a disabled one is
//! [`RecordsError::CodecNotEnabled`]. Batches are read with `kafka-wire`'s
//! bounds-checked reader and varints, the same rules as every message.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod batch;
mod builder;
mod compression;
mod cursor;
mod error;
#[cfg(feature = "json")]
mod json;
mod legacy;
mod options;
mod record;
mod set;

#[cfg(test)]
mod tests;

pub use batch::{
    BatchHeader, RecordBatch, TimestampType, LOG_OVERHEAD, MAGIC_V2, RECORD_BATCH_OVERHEAD,
};
pub use builder::RecordBatchBuilder;
pub use compression::{compress, decompress, Compression};
pub use error::RecordsError;
#[cfg(feature = "json")]
pub use json::{records_to_json, write_records_json, write_records_json_to, WriteJsonError};
pub use legacy::{LegacyEntry, LegacyMessage, LegacyMessages, MAGIC_V0, MAGIC_V1};
pub use options::{
    DecodeOptions, DEFAULT_MAX_DECOMPRESSED_SIZE, DEFAULT_MAX_TOTAL_DECOMPRESSED_SIZE,
};
pub use record::{ControlRecord, ControlRecordType, Header, Record, Records};
pub use set::{parse_records, Batch, Batches, RecordSet, MAGIC_OFFSET};
