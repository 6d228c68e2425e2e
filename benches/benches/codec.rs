//! Decode and encode times of kafka-wire ("ours") and kafka-protocol 0.18
//! ("peer") on the same bytes.
//!
//! Groups are named `decode_<workload>` and `encode_<workload>`, each with an
//! `ours` and a `peer` function, so that criterion's estimates land in
//! `target/criterion/<op>_<workload>/<crate>/new/estimates.json`, where
//! `benches/run` reads them.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kafka_wire_benches::{check_roundtrip, for_each_workload, Visitor, Workload};

struct Bench<'c>(&'c mut Criterion);

impl Visitor for Bench<'_> {
    fn visit<W: Workload>(&mut self) {
        // Same bytes for both crates, and both must round-trip them.
        check_roundtrip::<W>();
        let wire = W::wire();
        let throughput = Throughput::Bytes(wire.len() as u64);

        let mut group = self.0.benchmark_group(format!("decode_{}", W::NAME));
        group.throughput(throughput.clone());
        // The decoded value is returned, so its drop is timed too.
        group.bench_function("ours", |b| b.iter(|| W::decode_ours(black_box(&wire[..]))));
        group.bench_function("peer", |b| b.iter(|| W::decode_peer(black_box(&wire))));
        group.finish();

        let ours = W::decode_ours(&wire);
        let peer = W::decode_peer(&wire);
        let mut group = self.0.benchmark_group(format!("encode_{}", W::NAME));
        group.throughput(throughput);
        group.bench_function("ours", |b| b.iter(|| W::encode_ours(black_box(&ours))));
        group.bench_function("peer", |b| b.iter(|| W::encode_peer(black_box(&peer))));
        group.finish();
    }
}

fn codec(c: &mut Criterion) {
    for_each_workload(&mut Bench(c));
}

/// Short runs: 28 benchmarks must fit in a few minutes. Criterion's own
/// command-line options (`--measurement-time` and so on) still override these.
fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(50)
        .without_plots()
        .configure_from_args()
}

criterion_group! {
    name = benches;
    config = config();
    targets = codec
}
criterion_main!(benches);
