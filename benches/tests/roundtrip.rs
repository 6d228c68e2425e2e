//! Both crates decode every workload's bytes and re-encode them unchanged.

use kafka_wire_benches::{check_roundtrip, for_each_workload, Visitor, Workload};

struct Check(Vec<(&'static str, usize)>);

impl Visitor for Check {
    fn visit<W: Workload>(&mut self) {
        self.0.push((W::NAME, check_roundtrip::<W>()));
    }
}

#[test]
fn both_crates_decode_and_reencode_every_workload_identically() {
    let mut check = Check(Vec::new());
    for_each_workload(&mut check);
    assert_eq!(check.0.len(), 7);
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
