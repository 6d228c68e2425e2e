//! Both crates decode every workload's bytes and re-encode them unchanged.

use kafka_wire::messages::MetadataResponse;
use kafka_wire::runtime::Message;
use kafka_wire_benches::{
    check_roundtrip, for_each_workload, scan_metadata_response_v12, MetadataV12, Visitor, Workload,
};

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
    let wire = MetadataV12::wire();
    assert!(scan_metadata_response_v12(&wire));
    assert!(MetadataResponse::validate(&wire, 12).is_ok());
    for len in [0, 1, 5, wire.len() / 2, wire.len() - 1] {
        assert!(!scan_metadata_response_v12(&wire[..len]), "prefix {len}");
        assert!(MetadataResponse::validate(&wire[..len], 12).is_err());
    }
    let mut longer = wire.to_vec();
    longer.push(0);
    assert!(!scan_metadata_response_v12(&longer));
    assert!(MetadataResponse::validate(&longer, 12).is_err());
    // A topic name that is not UTF-8: the first topic's name starts 0x70 'p'.
    let mut bad = wire.to_vec();
    let at = bad
        .windows(4)
        .position(|w| w == b"paym")
        .expect("a topic name");
    bad[at] = 0xff;
    assert!(!scan_metadata_response_v12(&bad));
    assert!(MetadataResponse::validate(&bad, 12).is_err());
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
    let metadata = size("metadata_v12_1000x10").unwrap_or_default();
    assert!((400_000..600_000).contains(&metadata), "{metadata}");
    // The Fetch workloads differ only in payload size (and in the width of
    // each payload's varint length: one byte more for 64 KiB).
    let large = size("fetch_v16_100x64k").unwrap_or_default();
    let small = size("fetch_v16_100x1k").unwrap_or_default();
    assert_eq!(large - small, 100 * (64 - 1) * 1024 + 100);
}
