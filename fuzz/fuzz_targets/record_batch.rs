//! Records blobs: every entry (v2 batches and legacy message sets, any
//! codec) and every record in them, with a 1 MiB decompression limit.
//!
//! The first byte chooses a mode: with bit 0 set, the checksum of every
//! top-level entry is recomputed before parsing, so that mutations reach
//! the decoding behind the CRC check; the rest of the input is the blob.
#![no_main]

use kafka_wire::records::{Batch, DecodeOptions, RecordSet};
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 1 << 20;
const OPTIONS: DecodeOptions = DecodeOptions::new().with_max_decompressed_size(LIMIT);

/// Rewrites the CRC of each top-level entry: CRC-32C from the attributes
/// (byte 21) for magic 2, CRC-32 from the magic byte (16) for magic 0 and 1.
fn fix_checksums(blob: &mut [u8]) {
    let mut pos = 0;
    while let Some(size) = blob.get(pos + 8..pos + 12) {
        let size = i32::from_be_bytes([size[0], size[1], size[2], size[3]]);
        let Some(end) = usize::try_from(size).ok().map(|size| pos + 12 + size) else {
            return;
        };
        if end > blob.len() || end < pos + 22 {
            return;
        }
        match blob[pos + 16] {
            2 => {
                let crc = crc32c::crc32c(&blob[pos + 21..end]);
                blob[pos + 17..pos + 21].copy_from_slice(&crc.to_be_bytes());
            }
            0 | 1 => {
                let crc = crc32fast::hash(&blob[pos + 16..end]);
                blob[pos + 12..pos + 16].copy_from_slice(&crc.to_be_bytes());
            }
            _ => return,
        }
        pos = end;
    }
}

fn check(blob: &[u8]) {
    let Ok(set) = RecordSet::parse(blob, &OPTIONS) else {
        return;
    };
    for batch in &set.batches {
        match batch {
            Batch::V2(batch) => {
                assert!(batch.records_section().len() <= LIMIT);
                for record in batch.records() {
                    if record.is_err() {
                        break;
                    }
                }
            }
            Batch::Legacy(entry) => {
                for message in entry.messages() {
                    if message.is_err() {
                        break;
                    }
                }
            }
        }
    }
    let _ = set.validate();
    let _ = set.to_json();
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, blob)) = data.split_first() else {
        return;
    };
    if mode & 1 == 0 {
        check(blob);
    } else {
        let mut blob = blob.to_vec();
        fix_checksums(&mut blob);
        check(&blob);
    }
});
