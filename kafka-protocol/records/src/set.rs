//! Parsing a records blob: batches and messages back to back, possibly
//! ending in an incomplete one.

use super::batch::{RecordBatch, LOG_OVERHEAD, MAGIC_V2};
use super::cursor::Cursor;
use super::error::RecordsError;
use super::legacy::{LegacyEntry, MAGIC_V0, MAGIC_V1, MIN_MESSAGE_SIZE};
use super::options::DecodeOptions;

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

/// Streaming iterator over the entries of a records blob (for example the
/// `records` of a fetch response partition), of any mix of magic 0, 1 and 2.
///
/// Each entry is decoded when [`next`](Iterator::next) is called and handed
/// over, so walking a blob holds at most one decompressed batch at a time
/// (unless the caller keeps them, as [`RecordSet::parse`] does). Before a
/// v2 batch is yielded, every one of its records is decoded once and checked
/// against the header's count; a legacy wrapper's messages are checked when
/// it is decoded. A batch that is malformed or whose records disagree with
/// its count is therefore an error before the next batch is decompressed.
///
/// Two limits of [`DecodeOptions`] apply: each batch may decompress to at
/// most [`max_decompressed_size`](DecodeOptions::max_decompressed_size), and
/// all of them together to at most
/// [`max_total_decompressed_size`](DecodeOptions::max_total_decompressed_size).
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
    decompressed: usize,
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
            decompressed: 0,
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

    /// Bytes decompressed so far, counted against
    /// [`DecodeOptions::max_total_decompressed_size`].
    pub fn decompressed_bytes(&self) -> usize {
        self.decompressed
    }

    /// The options for the next entry: the per-batch limit, lowered to what
    /// is left of the blob's budget. Also tells whether the budget is what
    /// binds, so that exceeding it is reported as such.
    fn entry_options(&self) -> (DecodeOptions, bool) {
        let left = self
            .options
            .max_total_decompressed_size
            .saturating_sub(self.decompressed);
        let budget_binds = left < self.options.max_decompressed_size;
        let options = self
            .options
            .with_max_decompressed_size(left.min(self.options.max_decompressed_size));
        (options, budget_binds)
    }

    fn next_batch(&mut self) -> Result<Option<Batch<'a>>, RecordsError> {
        let rest = self.blob.get(self.pos..).unwrap_or_default();
        if rest.is_empty() {
            return Ok(None);
        }
        if rest.len() < LOG_OVERHEAD {
            return Ok(self.tail(rest.len()));
        }
        let mut prefix = Cursor::new(rest, self.pos, "batch");
        prefix.read_i64()?;
        let size = prefix.read_i32()?;
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
        let (options, budget_binds) = self.entry_options();
        let decoded =
            match magic {
                MAGIC_V2 => RecordBatch::decode_at(self.blob, self.pos, &options).and_then(
                    |(batch, consumed)| {
                        // Every record, against the count, before going on.
                        batch.records().try_for_each(|record| record.map(drop))?;
                        Ok((batch.decompressed_len(), Batch::V2(batch), consumed))
                    },
                ),
                MAGIC_V0 | MAGIC_V1 => LegacyEntry::decode_at(self.blob, self.pos, &options).map(
                    |(entry, consumed)| (entry.decompressed_len(), Batch::Legacy(entry), consumed),
                ),
                magic => Err(RecordsError::BadMagic {
                    offset: self.pos + MAGIC_OFFSET,
                    magic,
                }),
            };
        let (decompressed, batch, consumed) = decoded.map_err(|error| match error {
            RecordsError::DecompressedSizeExceeded { codec, offset, .. } if budget_binds => {
                RecordsError::DecompressionBudgetExceeded {
                    codec,
                    offset,
                    budget: self.options.max_total_decompressed_size,
                }
            }
            other => other,
        })?;
        self.decompressed = self.decompressed.saturating_add(decompressed);
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

/// A whole records blob, decoded and kept.
///
/// It holds every decompressed batch at once (up to
/// [`DecodeOptions::max_total_decompressed_size`] bytes of them); to walk a
/// blob one batch at a time, iterate [`Batches`] instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordSet<'a> {
    /// The complete entries, in order.
    pub batches: Vec<Batch<'a>>,
    /// The size in bytes of an incomplete last entry, if any.
    pub partial_tail: Option<usize>,
}

impl<'a> RecordSet<'a> {
    /// Decodes every entry of `blob`, and every record in them; see
    /// [`Batches`].
    pub fn parse(blob: &'a [u8], options: &DecodeOptions) -> Result<Self, RecordsError> {
        let mut iter = Batches::new(blob, options);
        let batches = iter.by_ref().collect::<Result<Vec<_>, _>>()?;
        Ok(RecordSet {
            batches,
            partial_tail: iter.partial_tail(),
        })
    }

    /// Decodes every record of every v2 batch, returning the first error.
    ///
    /// [`parse`](Self::parse) has already done so; this is for sets whose
    /// batches were put together by hand.
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
