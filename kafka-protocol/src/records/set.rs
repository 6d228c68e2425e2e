//! Parsing a records blob: batches and messages back to back, possibly
//! ending in an incomplete one.

use super::batch::{RecordBatch, LOG_OVERHEAD, MAGIC_V2};
use super::error::RecordsError;
use super::legacy::{LegacyEntry, MAGIC_V0, MAGIC_V1, MIN_MESSAGE_SIZE};
use super::options::DecodeOptions;
use super::reader::Reader;

/// Position of the magic byte in every batch and legacy message.
pub const MAGIC_OFFSET: usize = 16;

/// One entry of a records blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Batch<'a> {
    /// A v2 record batch (magic 2).
    V2(RecordBatch<'a>),
    /// A legacy message or compressed wrapper (magic 0 or 1).
    Legacy(LegacyEntry<'a>),
}

impl Batch<'_> {
    /// The entry's magic byte.
    pub fn magic(&self) -> i8 {
        match self {
            Batch::V2(batch) => batch.header().magic,
            Batch::Legacy(entry) => entry.message().magic,
        }
    }
}

/// Iterator over the entries of a records blob (for example the `records`
/// of a fetch response partition), of any mix of magic 0, 1 and 2.
///
/// An incomplete last entry, as a fetch response may hold, ends the
/// iteration without an error; [`partial_tail`](Self::partial_tail) then
/// tells its size. Any other problem is yielded as an error, after which the
/// iteration ends. Like the Java client, an entry whose 12-byte prefix
/// declares a size below the smallest message is an error, not a tail.
#[derive(Debug, Clone)]
pub struct Batches<'a> {
    blob: &'a [u8],
    pos: usize,
    options: DecodeOptions,
    partial_tail: Option<usize>,
    done: bool,
}

impl<'a> Batches<'a> {
    /// Iterates the entries of `blob`.
    pub fn new(blob: &'a [u8], options: &DecodeOptions) -> Self {
        Batches {
            blob,
            pos: 0,
            options: *options,
            partial_tail: None,
            done: false,
        }
    }

    /// The size in bytes of the incomplete entry that ended the blob, once
    /// the iteration has reached it; `None` otherwise.
    pub fn partial_tail(&self) -> Option<usize> {
        self.partial_tail
    }

    /// Position in the blob of the next entry.
    pub fn position(&self) -> usize {
        self.pos
    }

    fn next_batch(&mut self) -> Result<Option<Batch<'a>>, RecordsError> {
        let rest = self.blob.get(self.pos..).unwrap_or_default();
        if rest.is_empty() {
            return Ok(None);
        }
        if rest.len() < LOG_OVERHEAD {
            return Ok(self.tail(rest.len()));
        }
        let mut prefix = Reader::new(rest, self.pos, "batch");
        prefix.i64()?;
        let size = prefix.i32()?;
        let size = usize::try_from(size)
            .ok()
            .filter(|&size| size >= MIN_MESSAGE_SIZE)
            .ok_or(RecordsError::Invalid {
                context: "batch",
                offset: self.pos,
                reason: "size is smaller than the smallest message",
            })?;
        if rest.len() <= MAGIC_OFFSET || rest.len() - LOG_OVERHEAD < size {
            return Ok(self.tail(rest.len()));
        }
        let magic = rest.get(MAGIC_OFFSET).map_or(0, |&byte| byte as i8);
        let (batch, consumed) = match magic {
            MAGIC_V2 => {
                let (batch, consumed) = RecordBatch::decode_at(self.blob, self.pos, &self.options)?;
                (Batch::V2(batch), consumed)
            }
            MAGIC_V0 | MAGIC_V1 => {
                let (entry, consumed) = LegacyEntry::decode_at(self.blob, self.pos, &self.options)?;
                (Batch::Legacy(entry), consumed)
            }
            magic => {
                return Err(RecordsError::BadMagic {
                    offset: self.pos + MAGIC_OFFSET,
                    magic,
                })
            }
        };
        self.pos += consumed;
        Ok(Some(batch))
    }

    fn tail(&mut self, len: usize) -> Option<Batch<'a>> {
        self.partial_tail = Some(len);
        None
    }
}

impl<'a> Iterator for Batches<'a> {
    type Item = Result<Batch<'a>, RecordsError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.next_batch().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.done = true;
        }
        item
    }
}

/// A whole records blob, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordSet<'a> {
    /// The complete entries, in order.
    pub batches: Vec<Batch<'a>>,
    /// The size in bytes of an incomplete last entry, if any.
    pub partial_tail: Option<usize>,
}

impl<'a> RecordSet<'a> {
    /// Decodes every entry of `blob`; see [`Batches`].
    ///
    /// Records inside v2 batches are decoded lazily by
    /// [`RecordBatch::records`]; use [`validate`](Self::validate) to check
    /// them all.
    pub fn parse(blob: &'a [u8], options: &DecodeOptions) -> Result<Self, RecordsError> {
        let mut iter = Batches::new(blob, options);
        let batches = iter.by_ref().collect::<Result<Vec<_>, _>>()?;
        Ok(RecordSet {
            batches,
            partial_tail: iter.partial_tail(),
        })
    }

    /// Decodes every record of every v2 batch, returning the first error.
    pub fn validate(&self) -> Result<(), RecordsError> {
        for batch in &self.batches {
            match batch {
                Batch::V2(batch) => {
                    for record in batch.records() {
                        record?;
                    }
                }
                Batch::Legacy(entry) => {
                    for message in entry.messages() {
                        message?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Decodes every entry of `blob`: shorthand for [`RecordSet::parse`].
pub fn parse_records<'a>(
    blob: &'a [u8],
    options: &DecodeOptions,
) -> Result<RecordSet<'a>, RecordsError> {
    RecordSet::parse(blob, options)
}
