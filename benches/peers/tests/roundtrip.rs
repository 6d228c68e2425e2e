//! Every crate decodes every workload's bytes, reads the same checksum from
//! them and re-encodes them unchanged; and the workloads here are those of
//! kafka-wire-benches, in its order.

use kafka_wire_peers::{check_peers, for_each_workload, Peers, Visitor};

struct Check(Vec<&'static str>);

impl Visitor for Check {
    fn visit<W: Peers>(&mut self) {
        check_peers::<W>();
        self.0.push(W::NAME);
    }
}

struct Names(Vec<&'static str>);

impl kafka_wire_benches::Visitor for Names {
    fn visit<W: kafka_wire_benches::Workload>(&mut self) {
        self.0.push(W::NAME);
    }
}

#[test]
fn every_crate_decodes_reads_and_reencodes_every_workload_identically() {
    let mut check = Check(Vec::new());
    for_each_workload(&mut check);
    let mut names = Names(Vec::new());
    kafka_wire_benches::for_each_workload(&mut names);
    assert_eq!(check.0, names.0);
}

/// krabka-protocol parses a records field whose byte 16 is 2 as v2 record
/// batches: on these workloads it parses real ones, every record of them.
#[test]
fn krabka_parses_the_records_as_v2_batches() {
    use kafka_wire_benches::{FetchV18Small, ProduceV13, Workload};
    use kafka_wire_peers::Peers;
    use krabka_protocol::records::{RecordsPayload, RecordsPayloadBorrowed};

    let wire = FetchV18Small::wire();
    let fetch = FetchV18Small::decode_krabka_owned(&wire);
    for partition in fetch.responses.iter().flat_map(|topic| &topic.partitions) {
        match &partition.records {
            Some(RecordsPayload::V2(batches)) => {
                assert_eq!(batches.len(), 1);
                assert_eq!(batches[0].records.len(), 1);
                assert_eq!(batches[0].base_offset, 1_000_000);
            }
            other => panic!("not parsed as a v2 batch: {other:?}"),
        }
    }
    let wire = ProduceV13::wire();
    let produce = ProduceV13::decode_krabka_borrowed(&wire);
    for partition in produce
        .topic_data
        .iter()
        .flat_map(|topic| &topic.partition_data)
    {
        match &partition.records {
            Some(RecordsPayloadBorrowed::V2(batches)) => {
                assert_eq!(batches.len(), 1);
                assert_eq!(batches[0].header().records_count.get(), 16);
            }
            _ => panic!("not parsed as a v2 batch"),
        }
    }
}
