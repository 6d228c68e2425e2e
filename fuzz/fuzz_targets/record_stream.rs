//! The streaming records path: `Batches` walking a blob one entry at a time
//! within a per-batch limit and a whole-blob budget, and
//! `write_records_json` writing its JSON as it decodes.
//!
//! Checks, for every input: each entry `Batches` yields has every record
//! (or message) decodable and exactly as many as its header declares; the
//! decompressed bytes stay within both limits; and `write_records_json`
//! writes exactly the text `serde_json` prints for `records_to_json`, or
//! fails with the same error, which is also the error of the walk.
//!
//! Input: `[mode, blob...]`. Mode bit 0: recompute the checksums of the
//! top-level entries first; bit 1: pretty output; bit 2: a blob budget of
//! 1.5 MiB instead of 2 MiB, so that a second large batch crosses it. (The
//! budget stays small because `records_to_json` holds about 270 times the
//! decompressed size of minimal records as JSON values.)
#![no_main]

use kafka_wire_records::{
    records_to_json, write_records_json, Batch, Batches, DecodeOptions, RecordsError,
    WriteJsonError,
};
use kafka_wire_fuzz::fix_checksums;
use libfuzzer_sys::fuzz_target;

const LIMIT: usize = 1 << 20;

/// Walks the blob, checking each entry, and returns how the walk ended.
fn walk(blob: &[u8], options: &DecodeOptions) -> Result<(), RecordsError> {
    let mut batches = Batches::new(blob, options);
    let mut result = Ok(());
    while let Some(batch) = batches.next() {
        match batch {
            Ok(Batch::V2(batch)) => {
                assert!(batch.decompressed_len() <= options.max_decompressed_size);
                let declared = usize::try_from(batch.header().record_count)
                    .unwrap_or_else(|_| panic!("yielded a negative count"));
                let mut found = 0;
                for record in batch.records() {
                    if let Err(error) = record {
                        panic!("a yielded batch has a bad record: {error}");
                    }
                    found += 1;
                }
                assert_eq!(found, declared, "a yielded batch disagrees with its count");
            }
            Ok(Batch::Legacy(entry)) => {
                assert!(entry.decompressed_len() <= options.max_decompressed_size);
                for message in entry.messages() {
                    if let Err(error) = message {
                        panic!("a yielded entry has a bad message: {error}");
                    }
                }
            }
            Err(error) => result = Err(error),
        }
        assert!(batches.decompressed_bytes() <= options.max_total_decompressed_size);
    }
    result
}

fn check(blob: &[u8], pretty: bool, options: &DecodeOptions) {
    let walked = walk(blob, options);
    let mut out = Vec::new();
    let streamed = write_records_json(blob, options, &mut out, pretty);
    let whole = records_to_json(blob, options);
    match (streamed, whole) {
        (Ok(()), Ok(value)) => {
            let text = if pretty {
                serde_json::to_vec_pretty(&value)
            } else {
                serde_json::to_vec(&value)
            };
            let text = text.unwrap_or_else(|e| panic!("serde_json failed: {e}"));
            assert!(out == text, "the streamed JSON differs from serde_json's");
            assert!(walked.is_ok(), "the walk failed: {walked:?}");
        }
        (Err(WriteJsonError::Records(streamed)), Err(whole)) => {
            assert_eq!(streamed, whole);
            assert_eq!(walked, Err(streamed));
        }
        (streamed, whole) => panic!("streamed {streamed:?} but whole {:?}", whole.map(drop)),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, blob)) = data.split_first() else {
        return;
    };
    let budget = if mode & 4 == 0 {
        2 * LIMIT
    } else {
        LIMIT + LIMIT / 2
    };
    let options = DecodeOptions::new()
        .with_max_decompressed_size(LIMIT)
        .with_max_total_decompressed_size(budget);
    let pretty = mode & 2 != 0;
    if mode & 1 == 0 {
        check(blob, pretty, &options);
    } else {
        let mut blob = blob.to_vec();
        fix_checksums(&mut blob);
        check(&blob, pretty, &options);
    }
});
