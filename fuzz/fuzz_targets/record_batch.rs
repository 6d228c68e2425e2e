//! Records blobs: every entry (v2 batches and legacy message sets, any
//! codec) and every record in them, with a 1 MiB decompression limit.
//!
//! The first byte chooses a mode: with bit 0 set, the checksum of every
//! top-level entry is recomputed before parsing, so that mutations reach
//! the decoding behind the CRC check; the rest of the input is the blob.
#![no_main]

use kafka_wire_records::{Batch, DecodeOptions, RecordSet};
use kafka_wire_fuzz::fix_checksums;
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 1 << 20;
const OPTIONS: DecodeOptions = DecodeOptions::new().with_max_decompressed_size(LIMIT);

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
