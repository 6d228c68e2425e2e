//! Both crates decode every workload's bytes and re-encode them unchanged.

use bytes::Bytes;
use kafka_protocol::records::RecordBatchDecoder;
use kafka_wire::messages::MetadataResponse;
use kafka_wire::runtime::Message;
use kafka_wire_benches::{
    check_roundtrip, for_each_workload, record_batch, scan_metadata_response_v13, MetadataV13,
    Visitor, Workload, RECORD_SIZE,
};
use kafka_wire_records::{parse_records, Batch, DecodeOptions};

struct Check(Vec<(&'static str, usize)>, Vec<u64>);

impl Visitor for Check {
    fn visit<W: Workload>(&mut self) {
        // Also checks that both crates read the same checksum.
        self.0.push((W::NAME, check_roundtrip::<W>()));
        let wire = W::wire();
        let ours = W::read_ours(&W::decode_ours(&wire));
        assert_ne!(ours, 0, "{}: nothing was read", W::NAME);
        // The checksum sees the values: the built value read before encoding
        // gives the same, and another workload's bytes give another.
        assert_eq!(ours, W::read_ours(&W::built()), "{}", W::NAME);
        self.1.push(ours);
    }
}

/// The hand-written scan the validate-only pass is measured against accepts
/// the Metadata bytes and rejects them cut short or with trailing bytes,
/// as our validate does.
#[test]
fn the_metadata_scan_checks_what_validate_checks() {
    let wire = MetadataV13::wire();
    assert!(scan_metadata_response_v13(&wire));
    assert!(MetadataResponse::validate(&wire, 13).is_ok());
    for len in [0, 1, 5, wire.len() / 2, wire.len() - 1] {
        assert!(!scan_metadata_response_v13(&wire[..len]), "prefix {len}");
        assert!(MetadataResponse::validate(&wire[..len], 13).is_err());
    }
    let mut longer = wire.to_vec();
    longer.push(0);
    assert!(!scan_metadata_response_v13(&longer));
    assert!(MetadataResponse::validate(&longer, 13).is_err());
    // A topic name that is not UTF-8: the first topic's name starts 0x70 'p'.
    let mut bad = wire.to_vec();
    let at = bad
        .windows(4)
        .position(|w| w == b"paym")
        .expect("a topic name");
    bad[at] = 0xff;
    assert!(!scan_metadata_response_v13(&bad));
    assert!(MetadataResponse::validate(&bad, 13).is_err());
}

#[test]
fn both_crates_decode_and_reencode_every_workload_identically() {
    let mut check = Check(Vec::new(), Vec::new());
    for_each_workload(&mut check);
    assert_eq!(check.0.len(), 8);
    let mut sums = check.1.clone();
    sums.sort_unstable();
    sums.dedup();
    assert_eq!(sums.len(), 8, "two workloads read the same checksum");
    let size = |name: &str| check.0.iter().find(|(n, _)| *n == name).map(|(_, s)| *s);
    // The Metadata workload is about half a megabyte, as the issue sizes it.
    let metadata = size("metadata_v13_1000x10").unwrap_or_default();
    assert!((400_000..600_000).contains(&metadata), "{metadata}");
    // The Fetch workloads differ only in payload size (and in the width of
    // each payload's varint length: one byte more for 64 KiB).
    let large = size("fetch_v18_100x64k").unwrap_or_default();
    let small = size("fetch_v18_100x1k").unwrap_or_default();
    assert_eq!(large - small, 100 * (64 - 1) * 1024 + 100);
}

/// The records of the Fetch and Produce workloads are real v2 record batches
/// of the size their names give, which both kafka-wire-records and
/// kafka-protocol's record decoder read (CRC included), with records of at
/// most `RECORD_SIZE` bytes.
#[test]
fn the_record_payloads_are_v2_batches_of_the_named_sizes() {
    for (len, records) in [(64 * 1024, 64), (16 * 1024, 16), (1024, 1), (256, 1)] {
        let batch = record_batch(len, 1_000_000, 4_242);
        assert_eq!(batch.len(), len);
        assert_eq!(batch[16], 2, "magic");
        let set = parse_records(&batch, &DecodeOptions::default()).expect("a v2 batch");
        let [Batch::V2(parsed)] = &set.batches[..] else {
            panic!("{len}: not one v2 batch");
        };
        assert_eq!(parsed.header().base_offset, 1_000_000);
        let ours: Vec<_> = parsed.records().collect::<Result<_, _>>().expect("records");
        assert_eq!(ours.len(), records, "{len}");
        let peer = RecordBatchDecoder::decode(&mut Bytes::from(batch.clone()))
            .expect("kafka-protocol decodes the batch");
        assert_eq!(peer.records.len(), records, "{len}");
        for record in &peer.records {
            let size = record.key.as_ref().map_or(0, |k| k.len())
                + record.value.as_ref().map_or(0, |v| v.len());
            assert!(size <= RECORD_SIZE, "{len}: a record of {size} bytes");
        }
    }
}
