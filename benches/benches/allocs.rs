//! Counts the heap allocations and the peak live heap of one decode of each
//! workload, and of one decode followed by reading every field, for
//! kafka-wire ("ours") and kafka-protocol 0.18 ("peer").
//!
//! Counted by `kafka_wire_benches::counting` (which says what counts), in a
//! binary of its own so that the counting never slows down the timed
//! benchmarks. Prints one line per workload:
//!
//! `allocs <decode|read> <workload> ours=<n> peer=<n> heap_ours=<bytes> heap_peer=<bytes> wire=<bytes>`

use std::hint::black_box;

use kafka_wire_benches::counting::{measure, CountingAllocator};
use kafka_wire_benches::{for_each_workload, Visitor, Workload};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

struct Allocs;

impl Visitor for Allocs {
    fn visit<W: Workload>(&mut self) {
        let wire = W::wire();
        // The peer decodes from a clone; the first clone of a vector-backed
        // `Bytes` allocates its shared header, so do that before counting.
        drop(wire.clone());
        let (ours, heap_ours) = measure(|| W::decode_ours(black_box(&wire[..])));
        let (peer, heap_peer) = measure(|| W::decode_peer(black_box(&wire)));
        report(
            "decode",
            W::NAME,
            [ours, peer, heap_ours, heap_peer],
            wire.len(),
        );
        let (ours, heap_ours) = measure(|| W::read_ours(&W::decode_ours(black_box(&wire[..]))));
        let (peer, heap_peer) = measure(|| W::read_peer(&W::decode_peer(black_box(&wire))));
        report(
            "read",
            W::NAME,
            [ours, peer, heap_ours, heap_peer],
            wire.len(),
        );
    }
}

/// Prints one `allocs` line.
fn report(op: &str, workload: &str, [ours, peer, heap_ours, heap_peer]: [usize; 4], wire: usize) {
    println!(
        "allocs {op} {workload} ours={ours} peer={peer} heap_ours={heap_ours} heap_peer={heap_peer} wire={wire}"
    );
}

fn main() {
    for_each_workload(&mut Allocs);
}
