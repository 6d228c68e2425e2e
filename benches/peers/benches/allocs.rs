//! Counts the heap allocations and the peak live heap of one decode of each
//! workload, and of one decode followed by reading every field, for every
//! crate: kafka-wire ("ours"), kafka-protocol 0.18 ("peer"), kacrab-protocol
//! 0.4 ("kacrab") and krabka-protocol 0.8 ("krabka-owned",
//! "krabka-borrowed").
//!
//! Counted by `kafka_wire_benches::counting` (which says what counts), in a
//! binary of its own so that the counting never slows down the timed
//! benchmarks. Prints one line per workload and operation, the workspace
//! bench's line with the other peers appended:
//!
//! `allocs <decode|read> <workload> ours=<n> peer=<n> kacrab=<n> krabka-owned=<n> krabka-borrowed=<n> heap_ours=<bytes> heap_peer=<bytes> heap_kacrab=<bytes> heap_krabka-owned=<bytes> heap_krabka-borrowed=<bytes> wire=<bytes>`

use std::hint::black_box;

use kafka_wire_benches::counting::{measure, CountingAllocator};
use kafka_wire_peers::{for_each_workload, Peers, Visitor, CRATES};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

struct Allocs;

impl Visitor for Allocs {
    fn visit<W: Peers>(&mut self) {
        let wire = W::wire();
        // The peers that decode from a clone: the first clone of a
        // vector-backed `Bytes` allocates its shared header, so do that
        // before counting.
        drop(wire.clone());
        let decode = [
            measure(|| W::decode_ours(black_box(&wire[..]))),
            measure(|| W::decode_peer(black_box(&wire))),
            measure(|| W::decode_kacrab(black_box(&wire))),
            measure(|| W::decode_krabka_owned(black_box(&wire))),
            measure(|| W::decode_krabka_borrowed(black_box(&wire[..]))),
        ];
        report("decode", W::NAME, decode, wire.len());
        let read = [
            measure(|| W::read_ours(&W::decode_ours(black_box(&wire[..])))),
            measure(|| W::read_peer(&W::decode_peer(black_box(&wire)))),
            measure(|| W::read_kacrab(&W::decode_kacrab(black_box(&wire)))),
            measure(|| W::read_krabka_owned(&W::decode_krabka_owned(black_box(&wire)))),
            measure(|| W::read_krabka_borrowed(&W::decode_krabka_borrowed(black_box(&wire[..])))),
        ];
        report("read", W::NAME, read, wire.len());
    }
}

/// Prints one `allocs` line.
fn report(op: &str, workload: &str, counts: [(usize, usize); 5], wire: usize) {
    let mut line = format!("allocs {op} {workload}");
    for (name, (allocations, _)) in CRATES.iter().zip(counts) {
        line += &format!(" {name}={allocations}");
    }
    for (name, (_, heap)) in CRATES.iter().zip(counts) {
        line += &format!(" heap_{name}={heap}");
    }
    println!("{line} wire={wire}");
}

fn main() {
    for_each_workload(&mut Allocs);
}
